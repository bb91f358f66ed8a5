package gpu

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-gpu/gpu/backend"
)

// WaitMode says how a wait for the device waits.
type WaitMode uint8

const (
	// WaitAuto queries, spins for up to WaitPolicy.Spin, then parks the goroutine; a
	// small, bounded set of waiter threads per device completes parked waits with
	// blocking driver waits that sleep rather than spin. Cancellable at any moment.
	WaitAuto WaitMode = iota
	// WaitSpin queries in a loop, yielding the processor every 100 us, until done.
	// Cancellable; lowest latency; burns a core for the whole wait.
	WaitSpin
	// WaitBlock makes the blocking driver call on the calling goroutine's thread
	// (CUDA Driver API: cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize). The
	// thread is pinned for the whole wait and ctx is checked only before it starts.
	WaitBlock
)

// String returns "auto", "spin" or "block".
func (m WaitMode) String() string {
	switch m {
	case WaitAuto:
		return "auto"
	case WaitSpin:
		return "spin"
	case WaitBlock:
		return "block"
	}
	return "waitmode(?)"
}

// WaitPolicy chooses how waits wait. The zero value is WaitAuto with the default spin.
type WaitPolicy struct {
	Mode WaitMode
	// Spin bounds WaitAuto's spin before it parks (0: the default spin, DefaultSpin or
	// GPU_WAIT_SPIN; negative: park at once after the first query).
	Spin time.Duration
}

// DefaultSpin is WaitAuto's default spin: long enough that a wait for work of up to a
// millisecond returns as fast as a spinning driver wait, short enough to cost little in
// a long wait (at most a millisecond of one core; the yields every spinYield let other
// goroutines run meanwhile). A parked wait wakes tens of microseconds after the work
// ends: measured on the H200 (gpubench array/copyto/gpu_to_gpu/16k, a 515 us device
// copy and its wait), 602 us with a spin of 250 us, 516 us with 1 ms and with 3 ms,
// against 515-521 us for cuMemcpyDtoDAsync and cuStreamSynchronize. (CUDA.jl spins 256
// queries, the first 32 without yielding, for the same reason.) GPU_WAIT_SPIN in the
// environment (a duration such as 250us; negative: park at once) overrides it at
// start-up, for DefaultWaitPolicy and for every policy whose Spin is 0.
const DefaultSpin = time.Millisecond

// DefaultWaitPolicy is the policy of a new device.
var DefaultWaitPolicy = WaitPolicy{Mode: WaitAuto, Spin: DefaultSpin}

// defaultSpin is the spin of a policy whose Spin is 0: DefaultSpin, or GPU_WAIT_SPIN.
var defaultSpin = DefaultSpin

func (p WaitPolicy) normalize() WaitPolicy {
	if p.Spin == 0 {
		p.Spin = defaultSpin
	}
	return p
}

// pickPolicy returns the call's policy, else the device's; an unknown mode is an
// error whether or not there is anything to wait for.
func (d *Device) pickPolicy(ps []WaitPolicy) (WaitPolicy, error) {
	if len(ps) == 0 {
		if p := d.policy.Load(); p.Mode <= WaitBlock {
			return *p, nil // (inlined: every wait picks)
		}
	}
	return d.pickPolicySlow(ps)
}

// policiesValid reports whether pickPolicy would accept ps, without its copy of the
// policy (inlined: the idle Device.Synchronize checks).
func policiesValid(d *Device, ps []WaitPolicy) bool {
	switch len(ps) {
	case 0:
		return d.policy.Load().Mode <= WaitBlock
	case 1:
		return ps[0].Mode <= WaitBlock
	}
	return false
}

func (d *Device) pickPolicySlow(ps []WaitPolicy) (WaitPolicy, error) {
	p := *d.policy.Load()
	if len(ps) > 1 {
		return p, fmt.Errorf("gpu: %d wait policies given, at most one: %w", len(ps), ErrInvalidValue)
	}
	if len(ps) > 0 {
		p = ps[0].normalize()
	}
	if p.Mode > WaitBlock {
		return p, fmt.Errorf("gpu: wait mode %d: %w", p.Mode, ErrInvalidValue)
	}
	return p, nil
}

// policyErr returns the error waits under the device's policy fail with (an invalid
// mode), for operations that must fail before they enqueue anything.
func (d *Device) policyErr() error {
	_, err := d.pickPolicy(nil)
	return err
}

// waitable is what a wait waits for.
type waitable interface {
	query() (bool, error)
	// block waits in the driver on the calling thread (WaitBlock).
	block() error
	// park returns the events whose completion ends the wait, each with a reference the
	// caller releases, recording them if needed.
	park() ([]*pev, error)
}

// maxActiveWaits bounds the goroutines per device that query the driver while waiting;
// past it a wait parks at once. Thousands of goroutines spinning on driver queries would
// contend inside the driver, and calls that stall make the Go runtime start threads.
const maxActiveWaits = 4

// errNilContext is the error of a nil context.Context given to an operation that waits.
var errNilContext = fmt.Errorf("gpu: nil context: %w", ErrInvalidValue)

// nilContext returns an error wrapping ErrInvalidValue if ctx is nil. The exported
// operations that wait check it before they enqueue anything; wait checks it too.
func nilContext(ctx context.Context) error {
	if ctx == nil {
		return errNilContext
	}
	return nil
}

// wait runs the policy's wait for w; p comes from pickPolicy, which checks its mode.
func (d *Device) wait(ctx context.Context, w waitable, p WaitPolicy) error {
	if ctx == nil {
		return errNilContext
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	err := d.waitInner(ctx, w, p)
	if err != nil && errors.Is(err, ErrLaunchFailed) {
		d.setFault(err)
	}
	return err
}

func (d *Device) waitInner(ctx context.Context, w waitable, p WaitPolicy) error {
	if p.Mode == WaitBlock {
		if done, err := w.query(); done || err != nil {
			return err
		}
		return w.block()
	}
	if d.active.Add(1) <= maxActiveWaits {
		done, err := w.query()
		if !done && err == nil {
			switch {
			case p.Mode == WaitSpin:
				err = spin(ctx, w, -1)
				done = err == nil
			case p.Spin > 0:
				err = spin(ctx, w, p.Spin)
				done = err == nil
				if err == errSpinExpired {
					err = nil
				}
			}
		}
		d.active.Add(-1)
		if done || err != nil {
			return err
		}
	} else {
		d.active.Add(-1)
	}
	evs, err := w.park()
	if err != nil {
		return err
	}
	reqs := make([]*waitReq, len(evs))
	for i, e := range evs {
		reqs[i] = d.hub.submit(e.be, e.release)
	}
	for _, r := range reqs {
		select {
		case <-r.done:
			if r.err != nil {
				return r.err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

type spinExpired struct{}

func (spinExpired) Error() string { return "spin expired" }

var errSpinExpired error = spinExpired{}

// spin queries w until it completes, ctx ends or limit passes (limit < 0: no limit).
// It yields the processor (runtime.Gosched) once every spinYield of spinning, not after
// every query: measured on the H200 (BenchmarkWaitAfterKernel, 100 us kernel), waits
// took 113.2 us yielding after every query, 111.5 us yielding every 20 us and 109.5 us
// never yielding, against 110.0 us for cuStreamSynchronize. The Go scheduler preempts a
// spinning goroutine anyway, and at most maxActiveWaits of them spin per device.
//
// It also yields after every query while a staging ring's drainer (the goroutine that
// runs host functions, which the work waited for may wait for) has been started but
// has not begun to run (unstarted): a goroutine just started sits in its starter's
// processor's next slot until the starter yields or another thread steals it, which
// took up to spinYield (on the H200, hostfunc/round_trip: median 77 us, fastest 16
// us). Only then: a yield wakes an idle thread (the runtime's wakep), about 1.7 us of
// the waiter's time on the H200's host, which yielding at every wait's first query
// cost each Array.At (ten reads 108 against 81 us). Other goroutines the package
// starts (the hub's waiters and poller) are not waited for by a spinning wait.
func spin(ctx context.Context, w waitable, limit time.Duration) error {
	start := time.Now()
	lastYield := start
	done := ctx.Done()
	for {
		if ok, err := w.query(); ok || err != nil {
			return err
		}
		select {
		case <-done:
			return ctx.Err()
		default:
		}
		now := time.Now()
		if limit >= 0 && now.Sub(start) > limit {
			return errSpinExpired
		}
		if unstarted.Load() > 0 || now.Sub(lastYield) >= spinYield {
			runtime.Gosched()
			lastYield = now
		}
	}
}

// unstarted counts the staging rings' drainers started that have not begun to run
// (spin yields while there are any).
var unstarted atomic.Int64

// spinYield is how long spin queries between yields. GPU_SPIN_YIELD (a duration, such
// as 20us) in the environment sets it at start-up (tuning.go's startupFromEnv).
var spinYield = 100 * time.Microsecond

// waitReq is a parked wait: a waiter thread or the poller completes it.
type waitReq struct {
	ev      backend.Event
	done    chan struct{}
	err     error
	then    func()
	claimed bool // taken by a waiter thread or the poller (under hub.mu)
}

func (r *waitReq) complete(err error) {
	r.err = err
	close(r.done)
	if r.then != nil {
		r.then()
	}
}

// maxWaiterThreads bounds the threads per device that block in driver waits.
const maxWaiterThreads = 4

// hub completes parked waits. Up to maxWaiterThreads goroutines each block in the
// driver on the oldest unclaimed wait (a blocking-sync event: the thread sleeps); when
// more waits are parked than that, a poller queries the rest with a backoff from 20 us
// to 1 ms. Its goroutines exit when nothing is parked.
type hub struct {
	dev      *Device
	mu       sync.Mutex
	queue    []*waitReq
	blockers int
	polling  bool
}

func newHub(d *Device) *hub { return &hub{dev: d} }

// submit parks a wait for ev; then, if not nil, runs after completion.
func (h *hub) submit(ev backend.Event, then func()) *waitReq {
	r := &waitReq{ev: ev, done: make(chan struct{}), then: then}
	h.mu.Lock()
	h.queue = append(h.queue, r)
	if h.blockers < maxWaiterThreads {
		h.blockers++
		go h.blockLoop()
	} else if !h.polling {
		h.polling = true
		go h.pollLoop()
	}
	h.mu.Unlock()
	return r
}

// next pops the oldest unclaimed wait, compacting claimed ones away.
func (h *hub) next() *waitReq {
	for len(h.queue) > 0 {
		r := h.queue[0]
		h.queue[0] = nil
		h.queue = h.queue[1:]
		if !r.claimed {
			r.claimed = true
			return r
		}
	}
	h.queue = nil
	return nil
}

func (h *hub) blockLoop() {
	for {
		h.mu.Lock()
		r := h.next()
		if r == nil {
			h.blockers--
			h.mu.Unlock()
			return
		}
		if len(h.queue) > 0 && !h.polling {
			h.polling = true
			go h.pollLoop()
		}
		h.mu.Unlock()
		r.complete(r.ev.Synchronize())
	}
}

func (h *hub) pollLoop() {
	const minBackoff, maxBackoff = 20 * time.Microsecond, time.Millisecond
	backoff := minBackoff
	var batch []*waitReq
	for {
		h.mu.Lock()
		batch = batch[:0]
		live := h.queue[:0]
		for _, r := range h.queue {
			if !r.claimed {
				live = append(live, r)
				batch = append(batch, r)
			}
		}
		clear(h.queue[len(live):])
		h.queue = live
		if len(batch) == 0 {
			h.polling = false
			h.mu.Unlock()
			return
		}
		h.mu.Unlock()
		progressed := false
		start := time.Now()
		for _, r := range batch {
			done, err := r.ev.Query()
			if !done && err == nil {
				continue
			}
			h.mu.Lock()
			mine := !r.claimed
			r.claimed = true
			h.mu.Unlock()
			if mine {
				r.complete(err)
				progressed = true
			}
		}
		if progressed {
			backoff = minBackoff
		} else {
			backoff = min(2*backoff, maxBackoff)
		}
		// Keep the poller's share of a core small even with thousands of waits.
		time.Sleep(max(backoff, 10*time.Since(start)))
	}
}

// closedChan is a closed channel.
var closedChan = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
