package gpu

import (
	"context"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
)

// Asynchronous copies between the device and pageable Go memory (Stream.CopyDtoH and
// CopyHtoD). The CUDA driver runs a copy between the device and pageable memory
// synchronously: the call returns only once the copy is done, behind all the work
// queued before it on the stream. So on backends with stream memory operations
// (backend.StreamMemOps: cuStreamWaitValue32_v2), a stream copies pageable memory
// through a ring of two pinned staging buffers of its own, in chunks, each chunk one
// job for a goroutine (the ring's drainer, running while jobs are queued):
//
//   - to the host, the stream copies a chunk into a staging buffer and records an
//     event; the drainer waits for the event (the package's own wait, no thread held),
//     copies the chunk into the Go memory and writes its count of finished chunks into
//     a pinned word. After the copy's last chunk the stream waits for that word
//     (WaitValue32), so that everything enqueued on the stream later, an event
//     included, completes only once the Go memory holds the data. Before a staging
//     buffer is used again, the stream waits for the word to show it drained.
//   - to the device, the drainer waits until the staging buffer is free (the event
//     after its previous copy), fills it from the Go memory and writes the word; the
//     stream waits for the word before it copies the chunk to the device.
//
// The call only enqueues (microseconds, a few driver calls a chunk), and the jobs keep
// the Go memory alive until done, so nothing is pinned. The drainer only ever waits for
// work enqueued on its stream before the waits that wait for it, so it can't deadlock
// with the stream. The ring's pinned memory (two buffers sized for the largest chunk so
// far, up to stageChunkMax, and a word) comes from the device's pools and goes back
// when the stream is closed, after its work. The CPU backend's copies are
// asynchronous already and don't use it (tests force it: ForceStaging).

// freeGate keeps the driver's synchronizing frees away from the rings' waits. The CUDA
// driver's cuMemFreeHost (and cuMemFree) waits for all the context's work before it
// returns, and meanwhile holds the driver's lock: the event queries, records and waits
// of other threads block until it is done. A stream waiting (cuStreamWaitValue32) for
// a ring's word that the drainer writes only after such a driver call would then never
// finish, and neither would the free: a deadlock, seen with 32 streams copying to the
// host while others closed (their staging buffers going back to a full pool). So a
// device frees memory on the host only while no ring job is pending (no stream can be
// waiting for a word), and keeps the ring jobs from starting meanwhile; a free asked
// while jobs are pending is done once the last of them finishes (by a goroutine).
type freeGate struct {
	mu       sync.Mutex // held across a free: push waits
	jobs     int        // ring jobs pending on the device's streams
	deferred []backend.Mem
}

// enter counts a ring job about to be queued (waiting while a free runs).
func (g *freeGate) enter() {
	g.mu.Lock()
	g.jobs++
	g.mu.Unlock()
}

// leave counts a ring job done (its word written); the last one starts the frees
// deferred meanwhile.
func (g *freeGate) leave(d *Device) {
	g.mu.Lock()
	g.jobs--
	run := g.jobs == 0 && len(g.deferred) > 0
	g.mu.Unlock()
	if run {
		go d.freeHost(nil)
	}
}

// freeHost frees m (nil: nothing but the deferred frees) on the host now (CUDA:
// cuMemFreeHost, cuMemFree), unless a ring job is pending: then once none is.
func (d *Device) freeHost(m backend.Mem) error {
	if m != nil && m.Size() == 0 {
		return d.be.FreeNow(m)
	}
	g := &d.gate
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.jobs > 0 {
		if m != nil {
			g.deferred = append(g.deferred, m)
		}
		return nil
	}
	for _, x := range g.deferred {
		d.be.FreeNow(x) // (an error here has no caller to go to)
	}
	g.deferred = nil
	if m == nil {
		return nil
	}
	return d.be.FreeNow(m)
}

// hostRing is a stream's staging ring.
type hostRing struct {
	dev *Device
	be  backend.Stream
	ops backend.StreamMemOps

	// mu serializes the enqueues on the stream and guards the fields up to jobs; it is
	// held across driver calls, among them cuStreamWaitValue32, which blocks when the
	// stream's queue is full until the device gets past earlier waits, that is until
	// the drainer has run earlier jobs: the drainer never takes mu (qmu instead).
	mu     sync.Mutex
	slots  [2]*Buffer // pinned staging buffers, of size bytes each
	size   int
	word   *Buffer // pinned: the drainer's count of finished chunks, in its first 4 bytes
	g      uint32  // chunks enqueued so far
	toHost [2]bool // per slot: its last chunk went to the host (the stream waits for its drain)
	slotEv [2]*pev // per slot: an event after its last copy (one reference)

	qmu     sync.Mutex // guards the rest
	jobs    []*ringJob
	pending int  // jobs not yet finished
	running bool // a drainer runs
	closed  bool // the stream is closed: release once drained, after retire
	retire  *pev // an event after all of the closed stream's work
}

// ringJob is one chunk for the drainer, or one host function (hostfunc.go).
type ringJob struct {
	g      uint32
	toHost bool
	host   []byte
	slot   *Buffer
	ev     *pev // to the host: after the copy into the slot; to the device: after the slot's previous copy, or nil; a host function: after the stream's work before it
	fn     func() error
	core   *streamCore // a host function's stream
	word   *Buffer     // the ring's word, to write g+1 into once done
}

// ringCopyable reports whether Stream.CopyDtoH and CopyHtoD of host and b go through
// s's ring: pageable Go memory (not the device's own pinned or unified memory) and
// device memory, on a backend that stages host copies (CUDA; the CPU when a test forces
// it) and whose streams have stream memory operations.
func (s *Stream) ringCopyable(host []byte, b *Buffer) bool {
	d := s.dev
	if len(host) == 0 || b.a.kind != DeviceMem || !(d.info.StagedHostCopies || d.forceStaging) || !asyncStaging {
		return false
	}
	ops, ok := s.be.(backend.StreamMemOps)
	return ok && ops.MemOpsSupported() && !d.ownsHost(host)
}

// asyncStaging turns the rings on (benchmarks measure the driver's synchronous copy
// with it off: SetAsyncStaging).
var asyncStaging = true

// ringFor returns s's ring, made at first use.
func (s *Stream) ringFor() *hostRing {
	if r := s.ring.Load(); r != nil {
		return r
	}
	r := &hostRing{dev: s.dev, be: s.be, ops: s.be.(backend.StreamMemOps)}
	if s.ring.CompareAndSwap(nil, r) {
		return r
	}
	return s.ring.Load()
}

// copyRing enqueues a copy of host (to the device: from host) through s's ring; the
// caller holds s (trackedScope's enqueue).
func (r *hostRing) copy(host []byte, m backend.Mem, off int64, toHost bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.ready(len(host)); err != nil {
		return err
	}
	for lo := 0; lo < len(host); lo += r.size {
		hi := min(lo+r.size, len(host))
		g, k := r.g, int(r.g%2)
		st := r.slots[k]
		stage := hostBytes(st)[:hi-lo]
		j := &ringJob{g: g, toHost: toHost, host: host[lo:hi], slot: st}
		if toHost {
			if g >= 2 && r.toHost[k] {
				// The drainer has copied the slot's previous chunk out.
				if err := r.wait(g - 1); err != nil {
					return err
				}
			}
			if err := r.be.CopyToHost(stage, m, off+int64(lo)); err != nil {
				return err
			}
			ev, err := r.record()
			if err != nil {
				return err
			}
			j.ev = ev.retain()
			r.setSlotEv(k, ev)
		} else {
			// The job first: once the stream waits for its word, the drainer must come.
			j.ev = r.slotEv[k].retain()
			r.push(j)
			if err := r.wait(g + 1); err != nil {
				return err
			}
			if err := r.be.CopyFromHost(m, off+int64(lo), stage); err != nil {
				return err
			}
			ev, err := r.record()
			if err != nil {
				return err
			}
			r.setSlotEv(k, ev)
		}
		r.toHost[k] = toHost
		r.g++
		if toHost {
			r.push(j)
		}
	}
	if toHost {
		// Later work (events included) only once the Go memory holds every chunk.
		return r.wait(r.g)
	}
	return nil
}

// ready gives the ring its staging buffers and word: at first use, and larger ones
// for a larger copy while no job is pending (never more than stageChunkMax).
func (r *hostRing) ready(n int) error {
	if err := r.readyWord(); err != nil {
		return err
	}
	d := r.dev
	want := min(stageClass(n), stageChunkMax)
	if r.slots[0] != nil && (r.size >= want || r.busy()) {
		return nil
	}
	var fresh [2]*Buffer
	for k := range fresh {
		b, err := d.stagePool.get(d, max(want, stageMinClass))
		if err != nil {
			if fresh[0] != nil {
				d.stagePool.put(d, fresh[0])
			}
			return err
		}
		fresh[k] = b
	}
	for k := range r.slots {
		if old := r.slots[k]; old != nil {
			r.putAfter(old, r.slotEv[k])
			r.slotEv[k] = nil
		}
	}
	r.slots, r.size = fresh, int(fresh[0].size)
	return nil
}

// readyWord gives the ring its word at first use.
func (r *hostRing) readyWord() error {
	if r.word == nil {
		d := r.dev
		w, err := d.wordPool.get(d)
		if err != nil {
			return err
		}
		atomic.StoreUint32(r.wordPtr(w), 0)
		r.word = w
	}
	return nil
}

// putAfter returns a staging buffer to the pool once ev (nil: nothing) completes.
func (r *hostRing) putAfter(b *Buffer, ev *pev) {
	d := r.dev
	if ev == nil {
		d.stagePool.put(d, b)
		return
	}
	d.hub.submit(ev.be, func() {
		if done, err := ev.be.Query(); done && err == nil {
			d.stagePool.put(d, b)
		}
		ev.release()
	})
}

func (r *hostRing) wordPtr(w *Buffer) *uint32 {
	return (*uint32)(unsafe.Pointer(&hostBytes(w)[0]))
}

// wait makes the stream wait until the drainer has finished v chunks.
func (r *hostRing) wait(v uint32) error {
	if err := r.ops.WaitValue32(r.word.a.mem, r.word.off, v); err != nil {
		return err
	}
	return nil
}

// record records an internal event on the stream now (one reference).
func (r *hostRing) record() (*pev, error) {
	ev, err := r.dev.getEvent()
	if err != nil {
		return nil, err
	}
	if err := r.be.Record(ev.be); err != nil {
		ev.release()
		return nil, err
	}
	return ev, nil
}

func (r *hostRing) setSlotEv(k int, ev *pev) {
	r.slotEv[k].release()
	r.slotEv[k] = ev
}

// busy reports whether a job is pending.
func (r *hostRing) busy() bool {
	r.qmu.Lock()
	defer r.qmu.Unlock()
	return r.pending > 0
}

// push queues a job and starts the drainer if none runs; r.mu is held (r.word is set).
func (r *hostRing) push(j *ringJob) {
	j.word = r.word
	r.dev.gate.enter()
	r.qmu.Lock()
	defer r.qmu.Unlock()
	r.jobs = append(r.jobs, j)
	r.pending++
	if !r.running {
		r.running = true
		unstarted.Add(1) // (spin)
		go r.drain()
	}
}

// drain runs the jobs in order until none is left.
func (r *hostRing) drain() {
	unstarted.Add(-1)
	d := r.dev
	pol, err := d.pickPolicy(nil)
	if err != nil {
		pol = DefaultWaitPolicy
	}
	for {
		r.qmu.Lock()
		if len(r.jobs) == 0 {
			r.running = false
			release := r.closed && r.pending == 0
			r.qmu.Unlock()
			if release {
				r.release()
			}
			return
		}
		j := r.jobs[0]
		r.jobs[0] = nil
		r.jobs = r.jobs[1:]
		r.qmu.Unlock()
		ok := true
		if j.ev != nil {
			// A fault ends the wait with an error: the word is written all the same, so
			// that the stream is never left waiting.
			ok = d.wait(context.Background(), eventsWait{[]*pev{j.ev}}, pol) == nil
			if ok {
				j.ev.settle() // (a host function's event covers its stream's earlier work)
			}
			j.ev.release()
		}
		switch {
		case j.fn != nil:
			if ok {
				j.core.runHostFunc(j.fn)
			}
		case ok:
			if j.toHost {
				hostCopy(j.host, hostBytes(j.slot)[:len(j.host)])
			} else {
				hostCopy(hostBytes(j.slot)[:len(j.host)], j.host)
			}
		}
		atomic.StoreUint32(r.wordPtr(j.word), j.g+1)
		r.qmu.Lock()
		r.pending--
		r.qmu.Unlock()
		d.gate.leave(d)
	}
}

// close retires the ring of a closed stream: ev (a reference the ring takes) completes
// after all the stream's work, waits on the word included; the ring's memory goes back
// to the pools once the drainer is done and ev completes.
func (r *hostRing) close(ev *pev) {
	r.qmu.Lock()
	r.closed = true
	r.retire = ev
	release := !r.running && r.pending == 0
	r.qmu.Unlock()
	if release {
		r.release()
	}
}

// release returns the ring's memory after the stream's last work (retire).
func (r *hostRing) release() {
	r.qmu.Lock()
	ev := r.retire
	r.retire = nil
	r.qmu.Unlock()
	r.mu.Lock()
	slots, word := r.slots, r.word
	evs := r.slotEv
	r.slots, r.word, r.slotEv = [2]*Buffer{}, nil, [2]*pev{}
	r.mu.Unlock()
	releaseAll(evs[:])
	d := r.dev
	put := func() {
		for _, b := range slots {
			if b != nil {
				d.stagePool.put(d, b)
			}
		}
		if word != nil {
			d.wordPool.put(word)
		}
	}
	if ev == nil {
		return // no event after the stream's work: the memory is dropped (its cleanup frees the buffers)
	}
	d.hub.submit(ev.be, func() {
		if done, err := ev.be.Query(); done && err == nil {
			put()
		}
		ev.release()
	})
}
