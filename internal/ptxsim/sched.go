package ptxsim

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// launch is one launch of a kernel: its grid, parameters and global memory.
type launch struct {
	f        *Func
	mem      Memory
	params   [][]byte
	grid     [3]uint32
	block    [3]uint32
	nthreads int // per block
	smem     int // shared bytes per block
	dynBase  uint64
	maxSteps int
	mu       sync.Mutex // serializes strong global accesses and fences
	abort    atomic.Bool
	errMu    sync.Mutex
	err      error
}

// frame is a function activation of a thread.
type frame struct {
	fn       *Func
	r        []uint64
	params   map[string]uint64 // parameters stored in the function's call scopes; a callee's arguments and results
	pc       int
	retNames []string
}

// thread wait states
const (
	running uint8 = iota
	atWarp        // at a warp-synchronous instruction
	atBar         // at a barrier
)

// thread is one thread of a block.
type thread struct {
	l      *launch
	mod    *Module
	blk    *block // nil for Run
	tid    [3]uint32
	ctaid  [3]uint32
	lin    int // linear index in the block
	fr     *frame
	stack  []*frame
	steps  int
	done   bool
	wait   uint8
	arr    arrival // the collective instruction t waits at
	epoch  int32   // barriers passed (shared-memory hazard check)
	wepoch int32   // bar.warp.sync passed
	buf    [64]byte
	free   map[*Func][]*frame // device-function frames to reuse
	async  []asyncCopy        // cp.async copies not yet committed
	groups [][]asyncCopy      // committed groups of copies, oldest first
}

// fault is a run-time error of a thread, raised by panic and returned by the launch.
type fault struct{ err error }

func faultf(format string, args ...any) { panic(fault{fmt.Errorf(format, args...)}) }

// LaunchParams is Launch with each parameter's bytes (by-value parameters of any size).
func (f *Func) LaunchParams(mem Memory, cfg Config, params [][]byte) error {
	l, err := f.newLaunch(mem, cfg, params)
	if err != nil {
		return err
	}
	nblocks := int(l.grid[0]) * int(l.grid[1]) * int(l.grid[2])
	resident := cfg.Resident
	if resident <= 0 {
		resident = 4
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(resident, nblocks) {
		wg.Add(1)
		go func() { // blocks start in order, at most resident at a time
			defer wg.Done()
			b := f.getBlock(l)
			defer f.putBlock(b)
			for {
				i := int(next.Add(1) - 1)
				if i >= nblocks || l.abort.Load() {
					return
				}
				b.start(i)
				b.run()
			}
		}()
	}
	wg.Wait()
	return l.err
}

func (f *Func) newLaunch(mem Memory, cfg Config, params [][]byte) (*launch, error) {
	if !f.Entry {
		return nil, fmt.Errorf("ptxsim: %s is not a kernel", f.Name)
	}
	if len(params) != len(f.Params) {
		return nil, fmt.Errorf("ptxsim: %s takes %d parameters, got %d", f.Name, len(f.Params), len(params))
	}
	for i, p := range f.Params {
		if len(params[i]) != p.Size {
			return nil, fmt.Errorf("ptxsim: %s: parameter %s takes %d bytes, got %d", f.Name, p.Name, p.Size, len(params[i]))
		}
	}
	l := &launch{f: f, mem: mem, params: params, maxSteps: cfg.MaxSteps}
	if l.maxSteps <= 0 {
		l.maxSteps = DefaultMaxSteps
	}
	l.nthreads = 1
	for i := range 3 {
		l.grid[i], l.block[i] = max(cfg.Grid[i], 1), max(cfg.Block[i], 1)
		l.nthreads *= int(l.block[i])
	}
	if l.nthreads > 1024 || cfg.SharedMem < 0 {
		return nil, fmt.Errorf("ptxsim: %s: block %v, %d bytes of dynamic shared memory", f.Name, cfg.Block, cfg.SharedMem)
	}
	l.dynBase = uint64(f.smem+15) &^ 15
	l.smem = int(l.dynBase) + cfg.SharedMem
	return l, nil
}

func (l *launch) fail(err error) {
	l.errMu.Lock()
	if l.err == nil {
		l.err = err
	}
	l.errMu.Unlock()
	l.abort.Store(true)
}

// report makes a recovered fault of thread t (nil: of the block as a whole) of block
// bi the launch's error, and returns it. Another panic is the simulator's own bug: it
// is reported the same way, with its stack.
func (l *launch) report(r any, bi int, t *thread) error {
	ft, ok := r.(fault)
	if !ok {
		ft = fault{fmt.Errorf("simulator panic: %v\n%s", r, debug.Stack())}
	}
	where := ""
	if t != nil {
		where = fmt.Sprintf(" thread %d", t.lin)
		if fr := t.fr; fr.pc < len(fr.fn.prog) {
			where += " at " + fr.fn.Name + ": " + fr.fn.prog[fr.pc].text
		}
	}
	err := fmt.Errorf("%w: %s: block %d%s: %v", ErrFault, l.f.Name, bi, where, ft.err)
	l.fail(err)
	return err
}

func (l *launch) newThread(b *block, lin int, regs []uint64) *thread {
	t := &thread{mod: l.f.mod, blk: b, lin: lin, fr: &frame{fn: l.f, r: regs}}
	t.join(l)
	return t
}

// join makes t a thread of launch l.
func (t *thread) join(l *launch) {
	t.l = l
	t.tid = [3]uint32{uint32(t.lin) % l.block[0], uint32(t.lin) / l.block[0] % l.block[1], uint32(t.lin) / (l.block[0] * l.block[1])}
}

// start resets t to the kernel's first instruction.
func (t *thread) start() {
	t.steps, t.done, t.wait, t.epoch, t.wepoch = 0, false, running, 0, 0
	t.async, t.groups = t.async[:0], t.groups[:0]
	for len(t.stack) > 0 { // a fault left t in a device function
		t.fr, t.stack = t.stack[0], t.stack[:0]
	}
	clear(t.fr.r)
	t.fr.pc, t.fr.params = 0, nil
}

// runSlice runs t until it exits, waits at a collective instruction or has executed
// quantum instructions (quantum < 0: no limit).
func (t *thread) runSlice(quantum int) {
	fr := t.fr
	prog, r, limit := fr.fn.prog, fr.r, t.l.maxSteps
	for n := 0; n != quantum; n++ {
		pc := fr.pc
		if pc >= len(prog) {
			t.ret()
		} else if in := prog[pc]; in.guard >= 0 && (r[in.guard] != 0) == in.gneg {
			fr.pc = pc + 1
			continue
		} else {
			if t.steps++; t.steps > limit {
				faultf("more than %d instructions (an endless loop, or a wait no block will end)", limit)
			}
			in.exec(t, in)
			if t.fr == fr {
				fr.pc++
			}
		}
		if t.done || t.wait != running {
			return
		}
		if t.fr != fr { // a call or a return
			fr = t.fr
			prog, r = fr.fn.prog, fr.r
		}
	}
}

// ret returns from the current function.
func (t *thread) ret() {
	callee := t.fr
	if len(t.stack) == 0 {
		t.done = true
		return
	}
	caller := t.stack[len(t.stack)-1]
	t.stack = t.stack[:len(t.stack)-1]
	for i, p := range callee.fn.Rets {
		v, ok := callee.params[p.Name]
		if !ok {
			faultf("%s returned without setting %s", callee.fn.Name, p.Name)
		}
		caller.setParam(callee.retNames[i], v)
	}
	caller.pc++
	t.fr = caller
	if t.free == nil {
		t.free = map[*Func][]*frame{}
	}
	t.free[callee.fn] = append(t.free[callee.fn], callee)
}

func (fr *frame) setParam(name string, v uint64) {
	if fr.params == nil {
		fr.params = map[string]uint64{}
	}
	fr.params[name] = v
}

// call enters device function fn with the arguments of the caller's call scope.
func (t *thread) call(fn *Func, args, rets []string) {
	if len(fn.Params) != len(args) || len(fn.Rets) != len(rets) {
		faultf("call of %s with %d arguments and %d results", fn.Name, len(args), len(rets))
	}
	var fr *frame
	if l := t.free[fn]; len(l) > 0 {
		fr = l[len(l)-1]
		t.free[fn] = l[:len(l)-1]
		clear(fr.r)
		clear(fr.params)
		fr.pc = 0
	} else {
		fr = &frame{fn: fn, r: make([]uint64, len(fn.regWidth)), params: map[string]uint64{}}
	}
	fr.retNames = rets
	for i, a := range args {
		v, ok := t.fr.params[a]
		if !ok {
			faultf("call of %s: argument %s not set", fn.Name, a)
		}
		fr.params[fn.Params[i].Name] = v
	}
	if t.stack = append(t.stack, t.fr); len(t.stack) > 64 {
		faultf("call depth over 64")
	}
	t.fr = fr
}

// block is a block of threads run by one goroutine.
type block struct {
	l       *launch
	threads []*thread
	smem    []byte
	shadow  []access // per shared byte: the accesses since the last barrier (race.go)
	hw      int      // bytes of shared memory accessed: smem[hw:] is poisoned, shadow[hw:] clear
	group   []*thread
	idx     int
}

// quantum is how many instructions a thread runs before the next thread's turn.
const quantum = 256

// smemPoison is what shared memory holds before a block writes it (not zero: a GPU's
// shared memory starts with whatever the last block left).
const smemPoison = 0xCD

// getBlock returns a block for launch l, one of f's kept blocks when one fits.
func (f *Func) getBlock(l *launch) *block {
	var b *block
	f.blockMu.Lock()
	if n := len(f.blocks); n > 0 {
		b, f.blocks = f.blocks[n-1], f.blocks[:n-1]
	}
	f.blockMu.Unlock()
	if b == nil || len(b.threads) != l.nthreads {
		b = &block{}
		n := len(f.regWidth)
		regs := make([]uint64, n*l.nthreads)
		for i := range l.nthreads {
			b.threads = append(b.threads, l.newThread(b, i, regs[i*n:(i+1)*n:(i+1)*n]))
		}
	}
	if len(b.smem) != l.smem {
		b.smem, b.shadow, b.hw = make([]byte, l.smem), make([]access, l.smem), l.smem
	}
	b.l = l
	for _, t := range b.threads {
		t.join(l)
	}
	return b
}

// putBlock keeps b for f's next launches (a few).
func (f *Func) putBlock(b *block) {
	b.l = nil
	f.blockMu.Lock()
	if len(f.blocks) < 8 {
		f.blocks = append(f.blocks, b)
	}
	f.blockMu.Unlock()
}

func (b *block) start(idx int) {
	l := b.l
	b.idx = idx
	ctaid := [3]uint32{uint32(idx) % l.grid[0], uint32(idx) / l.grid[0] % l.grid[1], uint32(idx) / (l.grid[0] * l.grid[1])}
	for _, t := range b.threads {
		t.ctaid = ctaid
		t.start()
	}
	for i := range b.smem[:b.hw] {
		b.smem[i] = smemPoison
	}
	clear(b.shadow[:b.hw])
	b.hw = 0
}

// run runs the block's threads to the end, resolving collective instructions when
// their participants have arrived.
func (b *block) run() {
	var cur *thread
	defer func() {
		if r := recover(); r != nil {
			b.l.report(r, b.idx, cur)
		}
	}()
	for !b.l.abort.Load() {
		ran, waiting := false, false
		for _, t := range b.threads {
			if !t.done && t.wait == running {
				cur = t
				t.runSlice(quantum)
				cur, ran = nil, true
			}
			waiting = waiting || !t.done && t.wait != running
		}
		if !waiting && !ran {
			return // all exited
		}
		resolved := waiting && (b.resolveWarps() || b.resolveBarriers())
		if !ran && !resolved {
			b.deadlock()
		}
	}
}

// deadlock faults with a description of what the block's threads wait for.
func (b *block) deadlock() {
	var waits []string
	seen := map[string]bool{}
	exited := 0
	for _, t := range b.threads {
		if t.done {
			exited++
			continue
		}
		w := fmt.Sprintf("thread %d at %q", t.lin, t.arr.in.text)
		if k := t.arr.in.text + fmt.Sprint(t.lin/32); !seen[k] {
			seen[k] = true
			waits = append(waits, w)
		}
	}
	if len(waits) > 4 {
		waits = waits[:4]
	}
	faultf("deadlock: %s; %d threads exited", strings.Join(waits, ", "), exited)
}

// ---- operands ----

// special is a special register.
type special uint8

const (
	spTidX special = iota
	spTidY
	spTidZ
	spNtidX
	spNtidY
	spNtidZ
	spCtaidX
	spCtaidY
	spCtaidZ
	spNctaidX
	spNctaidY
	spNctaidZ
	spLaneid
	spWarpid
	spNwarpid
	spSmid
	spNsmid
	spLanemaskEq
	spLanemaskLt
	spLanemaskLe
	spLanemaskGt
	spLanemaskGe
	spClock
	spClock64
	spGlobaltimer
	spDynSmem
	spTotalSmem
)

var specials = map[string]special{
	"%tid.x": spTidX, "%tid.y": spTidY, "%tid.z": spTidZ, "%ntid.x": spNtidX, "%ntid.y": spNtidY, "%ntid.z": spNtidZ,
	"%ctaid.x": spCtaidX, "%ctaid.y": spCtaidY, "%ctaid.z": spCtaidZ,
	"%nctaid.x": spNctaidX, "%nctaid.y": spNctaidY, "%nctaid.z": spNctaidZ,
	"%laneid": spLaneid, "%warpid": spWarpid, "%nwarpid": spNwarpid, "%smid": spSmid, "%nsmid": spNsmid,
	"%lanemask_eq": spLanemaskEq, "%lanemask_lt": spLanemaskLt, "%lanemask_le": spLanemaskLe,
	"%lanemask_gt": spLanemaskGt, "%lanemask_ge": spLanemaskGe,
	"%clock": spClock, "%clock64": spClock64, "%globaltimer": spGlobaltimer,
	"%dynamic_smem_size": spDynSmem, "%total_smem_size": spTotalSmem,
}

var epoch = time.Now()

func (t *thread) special(sp special) uint64 {
	l, lane := t.l, uint(t.lin%32)
	switch {
	case sp <= spTidZ:
		return uint64(t.tid[sp-spTidX])
	case sp <= spNtidZ:
		return uint64(l.block[sp-spNtidX])
	case sp <= spCtaidZ:
		return uint64(t.ctaid[sp-spCtaidX])
	case sp <= spNctaidZ:
		return uint64(l.grid[sp-spNctaidX])
	}
	switch sp {
	case spLaneid:
		return uint64(lane)
	case spWarpid:
		return uint64(t.lin / 32)
	case spNwarpid:
		return uint64((l.nthreads + 31) / 32)
	case spSmid:
		return 0
	case spNsmid:
		return 1
	case spLanemaskEq:
		return 1 << lane
	case spLanemaskLt:
		return 1<<lane - 1
	case spLanemaskLe:
		return 1<<(lane+1) - 1
	case spLanemaskGt:
		return uint64(uint32(^uint64(0) << (lane + 1)))
	case spLanemaskGe:
		return uint64(uint32(^uint64(0) << lane))
	case spClock:
		return uint64(uint32(time.Since(epoch)))
	case spClock64, spGlobaltimer:
		return uint64(time.Since(epoch))
	case spDynSmem:
		return uint64(l.smem) - l.dynBase
	case spTotalSmem:
		return uint64(l.smem)
	}
	faultf("special register %d", sp)
	return 0
}

func mask(v uint64, w int) uint64 {
	if w >= 64 {
		return v
	}
	return v & (1<<uint(w) - 1)
}

func sext(v uint64, w int) uint64 {
	if w >= 64 {
		return v
	}
	return uint64(int64(v<<uint(64-w)) >> uint(64-w))
}

// ext extends the low w bits of v as type kind says (signed: sign-extends).
func ext(v uint64, w int, kind byte) uint64 {
	if kind == 's' {
		return sext(v, w)
	}
	return mask(v, w)
}

// val returns the value of operand o (small enough to inline: registers and
// immediates are what the run loop reads all the time).
func (t *thread) val(o *opnd) uint64 {
	if o.kind == oReg {
		return t.fr.r[o.reg]
	}
	return t.other(o)
}

func (t *thread) other(o *opnd) uint64 {
	switch o.kind {
	case oImm:
		return o.imm
	case oNot:
		return t.fr.r[o.reg] ^ 1
	case oSpecial:
		return t.special(o.sp)
	case oDyn:
		return t.l.dynBase
	}
	faultf("operand has no value")
	return 0
}

// set writes v to register operand o, masked to the register's width.
func (t *thread) set(o *opnd, v uint64) {
	if o.kind != oReg {
		notRegister()
	}
	t.fr.r[o.reg] = v & o.imm
}

func notRegister() { faultf("destination is not a register") }

func (t *thread) setReg(r int, v uint64) { t.fr.r[r] = mask(v, t.fr.fn.regWidth[r]) }

// addr returns the address of memory operand o (not a parameter).
func (t *thread) addr(o opnd) uint64 {
	a := o.imm + uint64(o.off)
	if o.reg >= 0 {
		a += t.fr.r[o.reg]
	}
	if o.dyn {
		a += t.l.dynBase
	}
	return a
}
