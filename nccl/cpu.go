package nccl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// The CPU communicator: the ranks are CPU devices of one process, and each call is a Go
// kernel (gpu.NewGoFunction) launched on the rank's stream with the call's buffers as
// tracked arguments. Inside, the ranks meet at a rendezvous keyed by the call's
// sequence number (per communicator for collectives, per pair of ranks and direction
// for Send and Recv): once every rank has arrived, each computes its share of the
// result, reading the other ranks' buffers and writing theirs, then waits until every
// rank is done, so that no rank's stream moves on while another still uses its buffers.

// cpuClique is the state the ranks of one CPU communicator share.
type cpuClique struct {
	world int
	comms []*Comm // by rank
	devs  []*cpu.Device

	mu       sync.Mutex
	slots    map[slotKey]*slot
	abortErr error
	abortCh  chan struct{}
	pending  int  // kernels launched and not yet returned
	watching bool // the fault watchdog runs
}

// slotKey names one rendezvous: a collective by its sequence number, or a point-to-point
// transfer by its ranks and its sequence number between them.
type slotKey struct {
	p2p      bool
	src, dst int
	seq      uint64
}

// slot is one rendezvous.
type slot struct {
	parts   []*part // by rank for a collective; sender then receiver for Send and Recv
	arrived int
	ready   chan struct{} // closed when every part has arrived
	err     error         // a mismatch between the parts, set before ready closes
	left    int
	done    chan struct{} // closed when every part is done
}

// part is one rank's side of a rendezvous: its call and the memory of its buffers.
type part struct {
	o          *op
	send, recv []byte
}

func newCPUClique(devs []*gpu.Device) (*cpuClique, error) {
	cl := &cpuClique{world: len(devs), slots: map[slotKey]*slot{}, abortCh: make(chan struct{})}
	for _, d := range devs {
		cd, ok := d.BackendDevice().(*cpu.Device)
		if !ok {
			return nil, fmt.Errorf("nccl: %v is not a CPU device of package backend/cpu: %w", d, gpu.ErrInvalidValue)
		}
		cl.devs = append(cl.devs, cd)
	}
	for r, d := range devs {
		cc := &cpuComm{cl: cl, sends: make([]uint64, len(devs)), recvs: make([]uint64, len(devs))}
		c := newComm(d, r, len(devs), cc)
		cc.c = c
		cl.comms = append(cl.comms, c)
	}
	return cl, nil
}

// err returns the abort error.
func (cl *cpuClique) err() error {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.abortErr
}

// abort fails every rank's pending and future calls with err.
func (cl *cpuClique) abort(err error) {
	if !errors.Is(err, ErrAborted) {
		err = fmt.Errorf("%w: %w", ErrAborted, err)
	}
	cl.mu.Lock()
	if cl.abortErr != nil {
		cl.mu.Unlock()
		return
	}
	cl.abortErr = err
	close(cl.abortCh)
	cl.mu.Unlock()
	for _, c := range cl.comms {
		c.fail(err)
	}
}

// wait waits for ch, or for an abort; a closed ch wins over an abort.
func (cl *cpuClique) wait(ch chan struct{}) error {
	select {
	case <-ch:
		return nil
	case <-cl.abortCh:
		select {
		case <-ch:
			return nil
		default:
			return cl.err()
		}
	}
}

// join adds p to the rendezvous key as participant idx of need and waits until every
// participant has arrived.
func (cl *cpuClique) join(key slotKey, need, idx int, p *part) (*slot, error) {
	cl.mu.Lock()
	if cl.abortErr != nil {
		cl.mu.Unlock()
		return nil, cl.abortErr
	}
	s := cl.slots[key]
	if s == nil {
		s = &slot{parts: make([]*part, need), ready: make(chan struct{}), done: make(chan struct{})}
		cl.slots[key] = s
	}
	s.parts[idx] = p
	s.arrived++
	if s.arrived == need {
		s.err = mismatch(key, s.parts)
		close(s.ready)
	}
	cl.mu.Unlock()
	if err := cl.wait(s.ready); err != nil {
		return nil, err
	}
	return s, s.err
}

// leave marks a participant done and waits until every participant is.
func (cl *cpuClique) leave(key slotKey, s *slot) error {
	cl.mu.Lock()
	s.left++
	if s.left == len(s.parts) {
		delete(cl.slots, key)
		close(s.done)
	}
	cl.mu.Unlock()
	return cl.wait(s.done)
}

// mismatch checks that the parts of a rendezvous are calls that go together.
func mismatch(key slotKey, parts []*part) error {
	if key.p2p {
		s, r := parts[0].o, parts[1].o
		if s.count != r.count || s.t != r.t {
			return fmt.Errorf("nccl: rank %d sends %d elements of %v to rank %d, which receives %d elements of %v: %w",
				key.src, s.count, s.t, key.dst, r.count, r.t, ErrInvalidUsage)
		}
		return nil
	}
	a := parts[0].o
	for r, p := range parts[1:] {
		b := p.o
		if b.kind != a.kind || b.count != a.count || b.t != a.t || b.red != a.red || b.peer != a.peer {
			return fmt.Errorf("nccl: collective %d: rank 0 calls %s, rank %d calls %s: %w", key.seq, a.describe(), r+1, b.describe(), ErrInvalidUsage)
		}
	}
	return nil
}

// describe returns "AllReduce(1001 float32, sum)".
func (o *op) describe() string {
	switch o.kind {
	case opAllReduce, opReduceScatter:
		return fmt.Sprintf("%s(%d %v, %v)", o.kind, o.count, o.t, o.red)
	case opReduce:
		return fmt.Sprintf("%s(%d %v, %v, root %d)", o.kind, o.count, o.t, o.red, o.peer)
	case opBroadcast:
		return fmt.Sprintf("%s(%d %v, root %d)", o.kind, o.count, o.t, o.peer)
	}
	return fmt.Sprintf("%s(%d %v)", o.kind, o.count, o.t)
}

// started counts a launched kernel and starts the fault watchdog.
func (cl *cpuClique) started() {
	cl.mu.Lock()
	cl.pending++
	start := !cl.watching && cl.abortErr == nil
	cl.watching = cl.watching || start
	cl.mu.Unlock()
	if start {
		go cl.watch()
	}
}

func (cl *cpuClique) finished() {
	cl.mu.Lock()
	cl.pending--
	cl.mu.Unlock()
}

// watch runs while kernels are pending: a rank whose device has faulted runs no more
// kernels, so the others would wait for it forever; watch aborts the communicator
// instead (as the NCCL watchdog does on ncclCommGetAsyncError).
func (cl *cpuClique) watch() {
	delay := 2 * time.Millisecond
	for {
		time.Sleep(delay)
		delay = min(2*delay, 50*time.Millisecond)
		for r, d := range cl.devs {
			if err := d.Err(); err != nil {
				cl.abort(fmt.Errorf("nccl: rank %d's device %v faulted: %w", r, cl.comms[r].dev, err))
				break
			}
		}
		cl.mu.Lock()
		if cl.pending == 0 || cl.abortErr != nil {
			cl.watching = false
			cl.mu.Unlock()
			return
		}
		cl.mu.Unlock()
	}
}

// cpuComm is one rank of a CPU communicator.
type cpuComm struct {
	c  *Comm
	cl *cpuClique

	seqMu        sync.Mutex
	coll         uint64   // collectives launched
	sends, recvs []uint64 // point-to-point calls launched, by peer
	noFault      bool
}

// abort aborts the whole clique: the other ranks' pending calls fail too.
func (cc *cpuComm) abort(err error) { cc.cl.abort(err) }

// close does nothing more: pending kernels still run.
func (cc *cpuComm) close() error { return nil }

// launch launches the calls of each communicator as one kernel on the stream of its
// first call, joined with the streams of its other calls (see launchOwn).
func (cc *cpuComm) launch(ops []*op) error {
	var order []*cpuComm
	by := map[*cpuComm][]*op{}
	streamOf := map[backend.Mem]*gpu.Stream{}
	for _, o := range ops {
		x, ok := o.c.be.(*cpuComm)
		if !ok {
			return fmt.Errorf("nccl: a CPU group with a call on %v: %w", o.c, gpu.ErrInvalidValue)
		}
		// As on CUDA (planUses): a buffer is used on one stream of a group only.
		for _, b := range []*gpu.Buffer{o.send, o.recv} {
			if b == nil {
				continue
			}
			mem, _ := b.BackendMem()
			if s, ok := streamOf[mem]; ok && s != o.s {
				return fmt.Errorf("nccl: a group uses one buffer on %v and on %v (one stream per buffer): %w", s, o.s, gpu.ErrInvalidValue)
			}
			streamOf[mem] = o.s
		}
		if by[x] == nil {
			order = append(order, x)
		}
		by[x] = append(by[x], o)
	}
	for i, x := range order {
		if err := x.launchOwn(by[x]); err != nil {
			// The ranks launched already would wait for this one forever.
			for _, y := range order[:i] {
				y.c.fail(err)
			}
			return err
		}
	}
	return nil
}

// call is one call of a kernel: its rendezvous and the kernel arguments of its buffers.
type call struct {
	o                *op
	key              slotKey
	sendArg, recvArg int // indices of the kernel arguments, or -1
}

// launchOwn launches ops, all of cc, as one kernel.
func (cc *cpuComm) launchOwn(ops []*op) error {
	rank := cc.c.rank
	calls := make([]call, len(ops))
	var args []any
	cc.seqMu.Lock()
	defer cc.seqMu.Unlock()
	coll, sends, recvs := cc.coll, append([]uint64(nil), cc.sends...), append([]uint64(nil), cc.recvs...)
	for i, o := range ops {
		k := call{o: o, sendArg: -1, recvArg: -1}
		switch o.kind {
		case opSend:
			cc.sends[o.peer]++
			k.key = slotKey{p2p: true, src: rank, dst: o.peer, seq: cc.sends[o.peer]}
		case opRecv:
			cc.recvs[o.peer]++
			k.key = slotKey{p2p: true, src: o.peer, dst: rank, seq: cc.recvs[o.peer]}
		default:
			cc.coll++
			k.key = slotKey{seq: cc.coll}
		}
		if o.send != nil {
			args = append(args, gpu.In(o.send))
			k.sendArg = len(args) - 1
		}
		if o.recv != nil {
			args = append(args, gpu.Out(o.recv))
			k.recvArg = len(args) - 1
		}
		calls[i] = k
	}
	name := "nccl." + ops[0].kind.String()
	if len(ops) > 1 {
		name = "nccl.Group"
	}
	// The kernel runs on the first call's stream. Calls of a group on other streams of
	// the rank behave as NCCL's do, as if the group were posted on every stream: the
	// kernel waits for the work enqueued on each of them so far, and their later work
	// waits for the kernel.
	first, others := ops[0].s, []*gpu.Stream(nil)
	for _, o := range ops[1:] {
		if o.s != first && !slices.Contains(others, o.s) {
			others = append(others, o.s)
		}
	}
	fn, err := gpu.NewGoFunction(cc.c.dev, name, func(l *cpu.Launch) error { return cc.run(l, calls) })
	for _, s := range others {
		if err == nil {
			err = streamOrder(cc.c.dev, s, first)
		}
	}
	if err == nil {
		cc.cl.started()
		err = first.Launch(fn, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, args...)
		if err != nil {
			cc.cl.finished()
		}
	}
	if err != nil {
		// Nothing was launched: the sequence numbers go back.
		cc.coll, cc.sends, cc.recvs = coll, sends, recvs
		return fmt.Errorf("nccl: %v: launching %s: %w", cc.c, name, err)
	}
	if len(others) > 0 {
		if err := streamOrder(cc.c.dev, first, others...); err != nil {
			// The kernel is launched, but the other streams are not ordered after it:
			// fail rather than let their work overtake the calls.
			err = fmt.Errorf("nccl: %v: ordering the streams of %s after it: %w", cc.c, name, err)
			cc.c.fail(err)
			return err
		}
	}
	return nil
}

// streamOrder makes the work enqueued later on each of waiters wait for the work
// enqueued on s so far.
func streamOrder(dev *gpu.Device, s *gpu.Stream, waiters ...*gpu.Stream) error {
	e, err := dev.NewEvent(gpu.DisableTiming)
	if err != nil {
		return err
	}
	defer e.Close()
	if err := s.Record(e); err != nil {
		return err
	}
	for _, w := range waiters {
		if err := w.WaitEvent(e); err != nil {
			return err
		}
	}
	return nil
}

// run is the kernel: it runs the calls, concurrently when there are several (a group),
// and returns the first error.
func (cc *cpuComm) run(l *cpu.Launch, calls []call) error {
	defer cc.cl.finished()
	parts := make([]*part, len(calls))
	for i, k := range calls {
		p := &part{o: k.o}
		if k.sendArg >= 0 {
			p.send = l.Mem(k.sendArg)[:k.o.sendBytes]
		}
		if k.recvArg >= 0 {
			p.recv = l.Mem(k.recvArg)[:k.o.recvBytes]
		}
		parts[i] = p
	}
	var err error
	if len(calls) == 1 {
		err = cc.runOne(l, calls[0].key, parts[0])
	} else {
		errs := make([]error, len(calls))
		var wg sync.WaitGroup
		for i := range calls {
			wg.Go(func() { errs[i] = cc.runOne(l, calls[i].key, parts[i]) })
		}
		wg.Wait()
		for _, e := range errs {
			if e != nil {
				err = e
				break
			}
		}
	}
	if err != nil {
		cc.cl.abort(err)
		if cc.noFault {
			return nil
		}
	}
	return err
}

// runOne runs one call: the rendezvous, this rank's share of the work, and the wait
// for the others to finish theirs.
func (cc *cpuComm) runOne(l *cpu.Launch, key slotKey, p *part) error {
	o := p.o
	rank, world := cc.c.rank, cc.c.world
	need, idx := world, rank
	switch o.kind {
	case opSend:
		need, idx = 2, 0
	case opRecv:
		need, idx = 2, 1
	}
	s, err := cc.cl.join(key, need, idx, p)
	if err != nil {
		return err
	}
	esize := int64(o.t.Size())
	n := o.count
	switch o.kind {
	case opAllReduce, opReduce:
		lo, hi := chunk(n, world, rank)
		srcs := make([][]byte, world)
		var dsts [][]byte
		for j, q := range s.parts {
			srcs[j] = q.send[lo*esize : hi*esize]
			if o.kind == opAllReduce || j == o.peer {
				dsts = append(dsts, q.recv[lo*esize:hi*esize])
			}
		}
		reduce(o.t, o.red, world, dsts, srcs, l.Workers())
	case opReduceScatter:
		srcs := make([][]byte, world)
		for j, q := range s.parts {
			srcs[j] = q.send[int64(rank)*n*esize : int64(rank+1)*n*esize]
		}
		reduce(o.t, o.red, world, [][]byte{p.recv}, srcs, l.Workers())
	case opBroadcast:
		copyData(p.recv, s.parts[o.peer].send)
	case opAllGather:
		for i, q := range s.parts {
			copyData(p.recv[int64(i)*n*esize:int64(i+1)*n*esize], q.send)
		}
	case opRecv:
		copyData(p.recv, s.parts[0].send)
	}
	return cc.cl.leave(key, s)
}

// chunk returns rank's share [lo, hi) of n elements split over world ranks.
func chunk(n int64, world, rank int) (lo, hi int64) {
	per := (n + int64(world) - 1) / int64(world)
	lo = min(n, per*int64(rank))
	hi = min(n, lo+per)
	return lo, hi
}

// copyData copies src into dst unless they are the same memory (an in-place call:
// another rank may be reading src meanwhile).
func copyData(dst, src []byte) {
	if len(dst) == 0 || len(src) == 0 {
		return
	}
	if unsafe.SliceData(dst) == unsafe.SliceData(src) {
		return
	}
	copy(dst, src)
}

// newCPUGroup makes a CPU communicator of devs, one rank per device.
func newCPUGroup(ctx context.Context, devs []*gpu.Device, o options) ([]*Comm, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cl, err := newCPUClique(devs)
	if err != nil {
		return nil, err
	}
	for _, c := range cl.comms {
		c.be.(*cpuComm).noFault = o.noFault
		c.watchContext(ctx)
	}
	return cl.comms, nil
}

// cpuPending is a CPU communicator whose ranks are arriving through NewComm.
type cpuPending struct {
	world  int
	devs   []*gpu.Device
	joined int
	ready  chan struct{}
	comms  []*Comm
	err    error
}

var cpuRegistry struct {
	sync.Mutex
	m map[UniqueID]*cpuPending
}

// newCPUComm is NewComm on the CPU backend: the ranks are goroutines of this process
// that meet through a registry keyed by the id.
func newCPUComm(ctx context.Context, dev *gpu.Device, id UniqueID, rank, world int, o options) (*Comm, error) {
	reg := &cpuRegistry
	reg.Lock()
	if reg.m == nil {
		reg.m = map[UniqueID]*cpuPending{}
	}
	p := reg.m[id]
	if p == nil {
		p = &cpuPending{world: world, devs: make([]*gpu.Device, world), ready: make(chan struct{})}
		reg.m[id] = p
	}
	failAll := func(err error) {
		p.err = err
		close(p.ready)
		delete(reg.m, id)
	}
	switch {
	case p.world != world:
		err := fmt.Errorf("nccl: NewComm: rank %d says the world has %d ranks, an earlier rank said %d: %w", rank, world, p.world, gpu.ErrInvalidValue)
		failAll(err)
		reg.Unlock()
		return nil, err
	case p.devs[rank] != nil:
		err := fmt.Errorf("nccl: NewComm: rank %d joined twice: %w", rank, gpu.ErrInvalidValue)
		failAll(err)
		reg.Unlock()
		return nil, err
	}
	for r, d := range p.devs {
		if d != nil && (d == dev || d.BackendDevice() == dev.BackendDevice()) { // as NewGroup
			err := fmt.Errorf("nccl: NewComm: ranks %d and %d on one device %v: %w", r, rank, dev, gpu.ErrInvalidValue)
			failAll(err)
			reg.Unlock()
			return nil, err
		}
	}
	p.devs[rank] = dev
	p.joined++
	if p.joined == world {
		cl, err := newCPUClique(p.devs)
		if err != nil {
			failAll(err)
			reg.Unlock()
			return nil, err
		}
		p.comms = cl.comms
		close(p.ready)
		delete(reg.m, id)
	}
	reg.Unlock()
	select {
	case <-p.ready:
	case <-ctx.Done():
		reg.Lock()
		select {
		case <-p.ready:
		default:
			failAll(fmt.Errorf("nccl: NewComm: rank %d gave up waiting for the other ranks: %w", rank, context.Cause(ctx)))
		}
		reg.Unlock()
	}
	if p.err != nil {
		return nil, p.err
	}
	c := p.comms[rank]
	c.be.(*cpuComm).noFault = o.noFault
	c.watchContext(ctx)
	return c, nil
}
