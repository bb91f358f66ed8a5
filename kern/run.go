package kern

import (
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
)

// MaxBlockThreads is the most threads a block may have (CUDA's limit).
const MaxBlockThreads = 1024

// Config is the geometry of a run on the CPU.
type Config struct {
	// Grid is the number of blocks and Block the threads per block, in up to three
	// dimensions; a zero Y or Z counts as 1, X must be at least 1.
	Grid, Block Dim
	// Cooperative runs every thread of a block on a goroutine of its own, which
	// Sync and the warp operations need. Otherwise the threads of a block run one
	// after another on one goroutine (much faster), and Sync and the warp
	// operations panic.
	Cooperative bool
	// Workers is the number of blocks that run at once (0: GOMAXPROCS). A
	// cooperative run also keeps the goroutines it has at once below a few
	// thousand.
	Workers int
}

// ErrConfig is wrapped by the error Run returns for an invalid Config.
var ErrConfig = errors.New("kern: invalid launch configuration")

// ErrDeadlock is the Value of the Fault of a block whose live threads all wait, at
// barriers or warp operations that can't complete (threads of the block at different
// Sync calls, lanes of a warp at different warp operations).
var ErrDeadlock = errors.New("kern: deadlock: the live threads of a block wait at different barriers or warp operations")

// Fault is a panic of one thread of a run: Run returns the first one (of the lowest
// block, then thread, among those that panicked).
type Fault struct {
	Block, Thread Dim
	// Value is what the thread panicked with: a runtime.Error for Go's own checks
	// (an index out of range, an integer division by zero), ErrDeadlock, or the
	// value the kernel passed to panic.
	Value any
	// File (base name) and Line locate the failing statement: the innermost frame
	// outside the Go runtime and this package. Empty where unknown.
	File string
	Line int
	// Func is the name of that frame's function.
	Func string
}

// Message returns the fault's description without its position: Go's runtime error
// text without its "runtime error: " prefix ("index out of range [5] with length
// 5"), or the panic value's text.
func (f *Fault) Message() string {
	switch v := f.Value.(type) {
	case error:
		return strings.TrimPrefix(v.Error(), "runtime error: ")
	case string:
		return v
	}
	return fmt.Sprint(f.Value)
}

// Error returns "file.go:12: index out of range [5] with length 5 (block (1,0,0),
// thread (5,0,0))".
func (f *Fault) Error() string {
	pos := ""
	if f.File != "" {
		pos = fmt.Sprintf("%s:%d: ", f.File, f.Line)
	}
	return fmt.Sprintf("%s%s (block %s, thread %s)", pos, f.Message(), f.Block, f.Thread)
}

// Unwrap returns the panic value when it is an error.
func (f *Fault) Unwrap() error {
	if e, ok := f.Value.(error); ok {
		return e
	}
	return nil
}

// String returns "(x,y,z)".
func (d Dim) String() string { return fmt.Sprintf("(%d,%d,%d)", d.X, d.Y, d.Z) }

// Size returns X*Y*Z.
func (d Dim) Size() int { return d.X * d.Y * d.Z }

// norm returns d with zero Y and Z as 1.
func (d Dim) norm() Dim {
	if d.Y == 0 {
		d.Y = 1
	}
	if d.Z == 0 {
		d.Z = 1
	}
	return d
}

func (d Dim) valid() bool { return d.X >= 1 && d.Y >= 1 && d.Z >= 1 }

// Run runs body once for every thread of cfg's grid, as a kernel launch would, and
// waits for all of them. A panic ends its thread only (the others run on, and a
// returned thread counts as arrived at barriers); Run returns the first as a *Fault.
func Run(cfg Config, body func(Thread)) error {
	grid, blk := cfg.Grid.norm(), cfg.Block.norm()
	if !grid.valid() || !blk.valid() {
		return fmt.Errorf("%w: grid %v, block %v: every dimension must be at least 1", ErrConfig, cfg.Grid, cfg.Block)
	}
	nt := blk.Size()
	if nt > MaxBlockThreads {
		return fmt.Errorf("%w: block %v has %d threads, more than %d", ErrConfig, blk, nt, MaxBlockThreads)
	}
	nblocks := grid.Size()
	if grid.X > 1<<31-1 || grid.Y > 65535 || grid.Z > 65535 || nblocks <= 0 {
		return fmt.Errorf("%w: grid %v is larger than a GPU's (2^31-1, 65535, 65535)", ErrConfig, grid)
	}
	if body == nil {
		return fmt.Errorf("%w: nil body", ErrConfig)
	}
	l := &launch{grid: grid, block: blk, nthreads: nt, nwarps: (nt + WarpSize - 1) / WarpSize, coop: cfg.Cooperative, body: body}
	workers := cfg.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	if l.coop {
		// The race detector allows 8128 live goroutines.
		workers = min(workers, max(1, 4096/nt))
	}
	workers = min(workers, nblocks)
	var next atomic.Int64
	work := func() {
		b := &block{run: l}
		var th thread
		for {
			i := int(next.Add(1) - 1)
			if i >= nblocks {
				return
			}
			b.reset(i)
			if l.coop {
				b.runCooperative()
			} else {
				b.runSerial(&th)
			}
		}
	}
	if workers <= 1 {
		work()
	} else {
		var wg sync.WaitGroup
		for range workers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				work()
			}()
		}
		wg.Wait()
	}
	if l.fault != nil {
		return l.fault
	}
	return nil
}

// launch is one Run.
type launch struct {
	grid, block      Dim
	nthreads, nwarps int
	coop             bool
	body             func(Thread)

	mu        sync.Mutex
	fault     *Fault
	faultRank [2]int // (block, thread) of fault
}

// thread is one thread's state.
type thread struct {
	b      *block
	tid    Dim
	linear int
	warp   *warp
}

// block is one block's state. Its mutex guards everything but idx and run.
type block struct {
	run    *launch
	idx    Dim
	linear int

	mu      sync.Mutex
	live    int   // threads not returned
	waiting int   // threads blocked at a gate not yet open
	bar     *gate // the block barrier's current generation
	warps   []warp
	shared  map[sharedKey]any
	aborted bool
}

// gate is one generation of a barrier: closing ch releases its waiters.
type gate struct {
	ch      chan struct{}
	arrived int
}

func newGate() *gate { return &gate{ch: make(chan struct{})} }

// warp is a warp's state.
type warp struct {
	lanes int // lanes that exist
	live  int // lanes not returned
	g     *wgate
}

// wgate is one warp operation of a warp: the lanes' operands, then their results.
type wgate struct {
	gate
	op   int
	in   uint32 // lanes arrived
	vals [WarpSize]uint64
	src  [WarpSize]int
	res  [WarpSize]uint64
	bad  bool // lanes called different operations
}

// Warp operations.
const (
	opSync = iota + 1
	opShfl
	opBallot
	opAll
	opAny
)

var opNames = [...]string{opSync: "SyncWarp", opShfl: "a shuffle", opBallot: "Ballot", opAll: "All", opAny: "Any"}

// abortPanic ends the threads of a deadlocked block.
type abortPanic struct{}

func (b *block) reset(i int) {
	g := b.run.grid
	b.linear = i
	b.idx = Dim{X: i % g.X, Y: i / g.X % g.Y, Z: i / (g.X * g.Y)}
	clear(b.shared)
	b.aborted = false
}

// position returns thread i's position in the block.
func (l *launch) position(i int) Dim {
	return Dim{X: i % l.block.X, Y: i / l.block.X % l.block.Y, Z: i / (l.block.X * l.block.Y)}
}

func (b *block) runSerial(th *thread) {
	l := b.run
	*th = thread{b: b}
	for i := 0; i < l.nthreads; i++ {
		th.tid = l.position(i)
		th.linear = i
		b.call(th)
	}
}

// call runs the body for th, recording a panic.
func (b *block) call(th *thread) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(abortPanic); !ok {
				b.run.record(th, r, callers())
			}
		}
	}()
	b.run.body(Thread{th})
}

func (b *block) runCooperative() {
	l := b.run
	b.live, b.waiting = l.nthreads, 0
	b.bar = newGate()
	if cap(b.warps) < l.nwarps {
		b.warps = make([]warp, l.nwarps)
	}
	b.warps = b.warps[:l.nwarps]
	for w := range b.warps {
		n := min(WarpSize, l.nthreads-w*WarpSize)
		b.warps[w] = warp{lanes: n, live: n, g: &wgate{gate: gate{ch: make(chan struct{})}}}
	}
	threads := make([]thread, l.nthreads)
	var wg sync.WaitGroup
	wg.Add(l.nthreads)
	for i := range threads {
		th := &threads[i]
		*th = thread{b: b, tid: l.position(i), linear: i, warp: &b.warps[i/WarpSize]}
		go func() {
			defer wg.Done()
			defer b.exit(th)
			b.call(th)
		}()
	}
	wg.Wait()
}

// record keeps the fault of th if it is the first (the lowest block, then thread).
func (l *launch) record(th *thread, v any, pcs []uintptr) {
	rank := [2]int{th.b.linear, th.linear}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fault != nil && (l.faultRank[0] < rank[0] || l.faultRank[0] == rank[0] && l.faultRank[1] <= rank[1]) {
		return
	}
	f := &Fault{Block: th.b.idx, Thread: th.tid, Value: v}
	f.File, f.Line, f.Func = locate(pcs)
	l.fault, l.faultRank = f, rank
}

// callers returns the stack of a panicking goroutine, from a deferred call.
func callers() []uintptr {
	pcs := make([]uintptr, 64)
	return pcs[:runtime.Callers(2, pcs)]
}

// kernPrefix starts the names of this package's functions.
const kernPrefix = "github.com/go-gpu/gpu/kern."

// locate returns the innermost frame of pcs outside the runtime and this package.
func locate(pcs []uintptr) (file string, line int, fn string) {
	frames := runtime.CallersFrames(pcs)
	for {
		f, more := frames.Next()
		if f.Function != "" && !strings.HasPrefix(f.Function, "runtime.") && !strings.HasPrefix(f.Function, kernPrefix) {
			return filepath.Base(f.File), f.Line, f.Function
		}
		if !more {
			return "", 0, ""
		}
	}
}

// exit marks th returned: barriers it held up open, and a block whose live threads
// all wait is deadlocked.
func (b *block) exit(th *thread) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.live--
	th.warp.live--
	if b.aborted {
		return
	}
	if b.bar.arrived > 0 && b.bar.arrived == b.live {
		b.open(b.bar)
		b.bar = newGate()
	}
	if w := th.warp; w.g.arrived > 0 && w.g.arrived == w.live {
		b.openWarp(w)
	}
	b.checkDeadlock(th)
}

// open releases the waiters of g (all but the caller when it arrived last).
func (b *block) open(g *gate) {
	b.waiting -= g.arrived
	close(g.ch)
}

// checkDeadlock aborts the block when its live threads all wait.
func (b *block) checkDeadlock(th *thread) {
	if b.live == 0 || b.waiting < b.live || b.aborted {
		return
	}
	b.aborted = true
	b.run.record(th, ErrDeadlock, nil)
	close(b.bar.ch)
	for w := range b.warps {
		if g := b.warps[w].g; g.arrived > 0 {
			close(g.ch)
		}
	}
}

// wait blocks on g (with b.mu held, which it releases) and panics if the block was
// aborted meanwhile.
func (b *block) wait(th *thread, g *gate) {
	b.waiting++
	b.checkDeadlock(th)
	b.mu.Unlock()
	<-g.ch
	b.mu.Lock()
	aborted := b.aborted
	b.mu.Unlock()
	if aborted {
		panic(abortPanic{})
	}
}

func (th *thread) syncBlock() {
	b := th.b
	if !b.run.coop {
		panic("kern: Thread.Sync needs a cooperative run (Config.Cooperative)")
	}
	b.mu.Lock()
	if b.aborted {
		b.mu.Unlock()
		panic(abortPanic{})
	}
	g := b.bar
	g.arrived++
	if g.arrived == b.live {
		g.arrived-- // the caller does not wait
		b.open(g)
		b.bar = newGate()
		b.mu.Unlock()
		return
	}
	b.wait(th, g)
}

// warpOp performs warp operation op with th's operand v (and source lane src for a
// shuffle) and returns th's result.
func (th *thread) warpOp(op int, v uint64, src int) uint64 {
	b := th.b
	if !b.run.coop {
		panic("kern: warp operations need a cooperative run (Config.Cooperative)")
	}
	lane := th.linear % WarpSize
	w := th.warp
	b.mu.Lock()
	if b.aborted {
		b.mu.Unlock()
		panic(abortPanic{})
	}
	g := w.g
	if g.in == 0 {
		g.op = op
	} else if g.op != op {
		g.bad = true
	}
	g.in |= 1 << lane
	g.vals[lane], g.src[lane] = v, src
	g.arrived++
	if g.arrived == w.live {
		g.arrived--
		b.openWarp(w)
		b.mu.Unlock()
	} else {
		b.wait(th, &g.gate)
	}
	if g.bad {
		panic(fmt.Sprintf("kern: lanes of warp %d called different warp operations (%s and others)", th.linear/WarpSize, opNames[op]))
	}
	return g.res[lane]
}

// openWarp computes the results of the warp's current operation and releases it.
func (b *block) openWarp(w *warp) {
	g := w.g
	w.g = &wgate{gate: gate{ch: make(chan struct{})}}
	var ballot uint64
	for l := range w.lanes {
		if g.in&(1<<l) != 0 && g.vals[l] != 0 {
			ballot |= 1 << l
		}
	}
	for l := range w.lanes {
		if g.in&(1<<l) == 0 {
			continue
		}
		switch g.op {
		case opShfl:
			s := g.src[l]
			if s >= 0 && s < w.lanes && g.in&(1<<s) != 0 {
				g.res[l] = g.vals[s]
			} else {
				g.res[l] = g.vals[l]
			}
		case opBallot:
			g.res[l] = ballot
		case opAll:
			g.res[l] = b2u(ballot == uint64(g.in))
		case opAny:
			g.res[l] = b2u(ballot != 0)
		}
	}
	b.open(&g.gate)
}
