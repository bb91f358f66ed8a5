package kernel

// A PTX simulator for the scan, search and permute kernels: it runs a kernel's text
// with one goroutine per thread, so that the warp-synchronous instructions
// (shfl.sync, vote.sync), block barriers (bar.sync) and inter-block protocols
// (decoupled look-back: blocks spinning on flags other blocks publish) really execute.
// Blocks start in order, at most `resident` at a time, like a GPU with limited
// occupancy; a block that waits on a later block would hang, which the watchdog
// reports.
//
// Checks: every lane of a warp must reach the same shfl.sync/vote.sync (same PC, full
// mask, no exited lane); every thread of a block must reach each bar.sync; shared
// memory accesses by different threads between the same two barriers conflict when
// one is a write (racecheck's hazards); global and shared accesses must be in bounds
// and aligned. Global memory is sequentially consistent here (one lock): the memory
// model's fences can't be checked, only the protocol's logic.
//
// Semantics follow the PTX ISA 7.8 for the instruction subset the generators emit;
// floats use Go's IEEE arithmetic (add.rn, mul.rn, fma.rn through math.FMA).

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// ---- parsing ----

type simOpnd struct {
	kind   int // simReg, simImm, simVec, simMemOp, simSpecial, simLabel, simSym
	reg    int
	imm    uint64
	vec    []int
	base   *simOpnd
	off    int64
	name   string
	target int
}

const (
	simReg = iota
	simImm
	simVec
	simMemOp
	simSpecial
	simLabel
	simSym
)

type simInst struct {
	text  string
	guard int // register or -1
	gneg  bool
	op    string
	parts []string
	args  []simOpnd
	exec  func(t *simThread, in *simInst)
}

type simKernel struct {
	name    string
	params  []string
	ptypes  []string
	nregs   int
	regIdx  map[string]int
	regBits []int
	prog    []*simInst
	labels  map[string]int
	shared  map[string]int // symbol -> offset in the block's shared memory
	smem    int
}

func simParse(src, entry string) (*simKernel, error) {
	k := &simKernel{regIdx: map[string]int{}, labels: map[string]int{}, shared: map[string]int{}}
	var stmts []string
	lines := strings.Split(src, "\n")
	in := false
	for _, line := range lines {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, ".visible .entry ") {
			name := strings.TrimSuffix(strings.TrimPrefix(line, ".visible .entry "), "(")
			if name == entry {
				k.name = name
				in = true
			} else {
				in = false
			}
			continue
		}
		if strings.HasPrefix(line, ".func") {
			in = false
			continue
		}
		if !in {
			continue
		}
		switch {
		case strings.HasPrefix(line, ".param"):
			f := strings.Fields(strings.TrimSuffix(line, ","))
			k.params = append(k.params, f[2])
			k.ptypes = append(k.ptypes, f[1])
			continue
		case strings.HasPrefix(line, ".reg"):
			f := strings.Fields(strings.TrimSuffix(line, ";"))
			d := f[2]
			lt := strings.Index(d, "<")
			prefix := d[:lt]
			n, err := strconv.Atoi(d[lt+1 : len(d)-1])
			if err != nil {
				return nil, err
			}
			bitsz := map[string]int{".pred": 1, ".b16": 16, ".b32": 32, ".b64": 64, ".f32": 32, ".f64": 64}[f[1]]
			for i := 0; i < n; i++ {
				k.regIdx[fmt.Sprintf("%s%d", prefix, i)] = k.nregs
				k.regBits = append(k.regBits, bitsz)
				k.nregs++
			}
			continue
		case strings.HasPrefix(line, ".shared"):
			// .shared .align A .type name[count];
			f := strings.Fields(strings.TrimSuffix(line, ";"))
			align, _ := strconv.Atoi(f[2])
			tsz := simTypeBytes(f[3])
			nm := f[4]
			lb := strings.Index(nm, "[")
			count, _ := strconv.Atoi(nm[lb+1 : len(nm)-1])
			nm = nm[:lb]
			k.smem = (k.smem + align - 1) / align * align
			k.shared[nm] = k.smem
			k.smem += tsz * count
			continue
		case strings.HasPrefix(line, "."), line == "{", line == "}", line == ")":
			if line == "}" && k.name != "" {
				in = false
			}
			continue
		case strings.HasSuffix(line, ":"):
			k.labels[strings.TrimSuffix(line, ":")] = len(stmts)
			continue
		}
		stmts = append(stmts, strings.TrimSuffix(line, ";"))
	}
	if k.name == "" {
		return nil, fmt.Errorf("sim: no entry %s", entry)
	}
	for _, s := range stmts {
		inst, err := k.parseInst(s)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", s, err)
		}
		k.prog = append(k.prog, inst)
	}
	return k, nil
}

func simTypeBytes(t string) int {
	switch t {
	case ".b8", ".u8", ".s8":
		return 1
	case ".b16", ".u16", ".s16", ".f16":
		return 2
	case ".b32", ".u32", ".s32", ".f32":
		return 4
	}
	return 8
}

// splitArgs splits operands at top-level commas.
func splitArgs(s string) []string {
	var out []string
	depth := 0
	start := 0
	for i, c := range s {
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

func (k *simKernel) parseOpnd(s string) (simOpnd, error) {
	s = strings.TrimSpace(s)
	switch {
	case strings.HasPrefix(s, "{"):
		var v []int
		for _, r := range splitArgs(s[1 : len(s)-1]) {
			idx, ok := k.regIdx[r]
			if !ok {
				return simOpnd{}, fmt.Errorf("unknown register %s", r)
			}
			v = append(v, idx)
		}
		return simOpnd{kind: simVec, vec: v}, nil
	case strings.HasPrefix(s, "["):
		inner := s[1 : len(s)-1]
		var off int64
		if i := strings.LastIndexAny(inner, "+-"); i > 0 {
			o, err := strconv.ParseInt(inner[i:], 10, 64)
			if err == nil {
				off = o
				inner = inner[:i]
			}
		}
		b, err := k.parseOpnd(inner)
		if err != nil {
			if _, ok := k.shared[inner]; ok {
				b = simOpnd{kind: simSym, name: inner}
			} else {
				b = simOpnd{kind: simSym, name: inner}
			}
		}
		return simOpnd{kind: simMemOp, base: &b, off: off}, nil
	case strings.HasPrefix(s, "%"):
		if idx, ok := k.regIdx[s]; ok {
			return simOpnd{kind: simReg, reg: idx}, nil
		}
		return simOpnd{kind: simSpecial, name: s}, nil
	case strings.HasPrefix(s, "$"):
		return simOpnd{kind: simLabel, name: s}, nil
	case strings.HasPrefix(s, "0f") && len(s) == 10:
		v, err := strconv.ParseUint(s[2:], 16, 32)
		return simOpnd{kind: simImm, imm: v}, err
	case strings.HasPrefix(s, "0d") && len(s) == 18:
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return simOpnd{kind: simImm, imm: v}, err
	case strings.HasPrefix(s, "0x"):
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return simOpnd{kind: simImm, imm: v}, err
	case len(s) > 0 && (s[0] == '-' || (s[0] >= '0' && s[0] <= '9')):
		v, err := strconv.ParseInt(s, 10, 64)
		return simOpnd{kind: simImm, imm: uint64(v)}, err
	}
	return simOpnd{kind: simSym, name: s}, nil
}

func (k *simKernel) parseInst(s string) (*simInst, error) {
	in := &simInst{text: s, guard: -1}
	if strings.HasPrefix(s, "@") {
		sp := strings.IndexByte(s, ' ')
		g := s[1:sp]
		if strings.HasPrefix(g, "!") {
			in.gneg = true
			g = g[1:]
		}
		idx, ok := k.regIdx[g]
		if !ok {
			return nil, fmt.Errorf("unknown guard %s", g)
		}
		in.guard = idx
		s = strings.TrimSpace(s[sp+1:])
	}
	op := s
	rest := ""
	if sp := strings.IndexAny(s, " \t"); sp >= 0 {
		op, rest = s[:sp], strings.TrimSpace(s[sp+1:])
	}
	in.op = op
	in.parts = strings.Split(op, ".")
	for _, a := range splitArgs(rest) {
		o, err := k.parseOpnd(a)
		if err != nil {
			return nil, err
		}
		in.args = append(in.args, o)
	}
	exec, err := k.compile(in)
	if err != nil {
		return nil, err
	}
	in.exec = exec
	return in, nil
}

// ---- execution ----

type simMem struct {
	mu   sync.Mutex
	base uint64
	buf  []byte
}

func (m *simMem) check(addr uint64, n int) (int, error) {
	if addr < m.base || addr+uint64(n) > m.base+uint64(len(m.buf)) {
		return 0, fmt.Errorf("global access of %d bytes at %#x out of bounds", n, addr)
	}
	if addr%uint64(min(n, 16)) != 0 {
		return 0, fmt.Errorf("misaligned global access of %d bytes at %#x", n, addr)
	}
	return int(addr - m.base), nil
}

type simBlock struct {
	id      int
	smem    []byte
	mu      sync.Mutex
	cond    *sync.Cond
	barGen  int
	arrived int
	alive   int
	size    int
	warps   []*simWarp
	// race detection: per shared byte, the last writer and reader in an epoch
	wEpoch, rEpoch []int32
	wTid, rTid     []int32
	wWarp, rWarp   []int32 // the warp epoch of the write; the reading warp (-1: several)
	rWEp           []int32 // the warp epoch of the reads
}

type simWarp struct {
	mu      sync.Mutex
	cond    *sync.Cond
	gen     int
	arrived int
	alive   int
	pc      [32]int
	a, b, c [32]uint64
	p       [32]bool
	res     [32]uint64
	resP    [32]bool
	err     error
}

type simThread struct {
	k      *simKernel
	r      []uint64
	tid    int
	ctaid  int
	ntid   int
	nctaid int
	params []uint64
	mem    *simMem
	blk    *simBlock
	warp   *simWarp
	lane   int
	epoch  int32 // block barriers passed
	wepoch int32 // warp barriers passed
	pc     int
	done   bool
	sim    *simRun
}

type simRun struct {
	blkMu    sync.Mutex
	blocks   map[*simBlock]bool
	k        *simKernel
	mem      *simMem
	steps    atomic.Int64
	abort    atomic.Bool
	errMu    sync.Mutex
	err      error
	maxSteps int64
}

func (s *simRun) fail(err error) {
	s.errMu.Lock()
	if s.err == nil {
		s.err = err
	}
	s.errMu.Unlock()
	if s.abort.Swap(true) {
		return
	}
	go s.wakeAll()
}

// wakeAll wakes every waiting thread after an abort (from its own goroutine: fail may
// run with a block's or warp's lock held).
func (s *simRun) wakeAll() {
	for range 50 {
		s.blkMu.Lock()
		blks := make([]*simBlock, 0, len(s.blocks))
		for b := range s.blocks {
			blks = append(blks, b)
		}
		s.blkMu.Unlock()
		for _, b := range blks {
			b.mu.Lock()
			b.cond.Broadcast()
			b.mu.Unlock()
			for _, w := range b.warps {
				w.mu.Lock()
				w.cond.Broadcast()
				w.mu.Unlock()
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// simLaunch runs the kernel over grid blocks of block threads, at most resident
// blocks at a time, and returns the first error.
func simLaunch(k *simKernel, mem *simMem, grid, block, resident int, params []uint64) error {
	if len(params) != len(k.params) {
		return fmt.Errorf("sim: %d params for %d", len(params), len(k.params))
	}
	run := &simRun{k: k, mem: mem, maxSteps: 4e8, blocks: map[*simBlock]bool{}}
	sem := make(chan struct{}, resident)
	var wg sync.WaitGroup
	done := make(chan struct{})
	go func() { // watchdog
		last := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Second):
				n := run.steps.Load()
				if n == last {
					run.fail(fmt.Errorf("sim: no progress for 20 s (deadlock or endless spin)"))
					return
				}
				last = n
			}
		}
	}()
	for b := 0; b < grid && !run.abort.Load(); b++ {
		sem <- struct{}{}
		blk := &simBlock{id: b, smem: make([]byte, k.smem), size: block, alive: block}
		blk.cond = sync.NewCond(&blk.mu)
		blk.wEpoch = make([]int32, k.smem)
		blk.rEpoch = make([]int32, k.smem)
		blk.wTid = make([]int32, k.smem)
		blk.rTid = make([]int32, k.smem)
		blk.wWarp = make([]int32, k.smem)
		blk.rWarp = make([]int32, k.smem)
		blk.rWEp = make([]int32, k.smem)
		for i := range blk.wEpoch {
			blk.wEpoch[i], blk.rEpoch[i] = -1, -1
		}
		nw := (block + 31) / 32
		for w := 0; w < nw; w++ {
			sw := &simWarp{alive: min(32, block-32*w)}
			sw.cond = sync.NewCond(&sw.mu)
			blk.warps = append(blk.warps, sw)
		}
		run.blkMu.Lock()
		run.blocks[blk] = true
		run.blkMu.Unlock()
		var bwg sync.WaitGroup
		for t := 0; t < block; t++ {
			th := &simThread{k: k, r: make([]uint64, k.nregs), tid: t, ctaid: b, ntid: block, nctaid: grid,
				params: params, mem: mem, blk: blk, warp: blk.warps[t/32], lane: t % 32, sim: run}
			bwg.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer bwg.Done()
				th.run()
			}()
		}
		go func() {
			bwg.Wait()
			run.blkMu.Lock()
			delete(run.blocks, blk)
			run.blkMu.Unlock()
			<-sem
		}()
	}
	wg.Wait()
	close(done)
	return run.err
}

func (t *simThread) run() {
	defer func() {
		if r := recover(); r != nil {
			t.sim.fail(fmt.Errorf("sim: block %d thread %d at %q: %v", t.ctaid, t.tid, t.k.prog[min(t.pc, len(t.k.prog)-1)].text, r))
		}
		t.exit()
	}()
	prog := t.k.prog
	n := 0
	for t.pc < len(prog) && !t.done {
		in := prog[t.pc]
		t.pc++
		if in.guard >= 0 && (t.r[in.guard] != 0) == in.gneg {
			continue
		}
		in.exec(t, in)
		n++
		if n&1023 == 0 {
			if t.sim.steps.Add(1024) > t.sim.maxSteps {
				t.sim.fail(fmt.Errorf("sim: more than %d instructions (an endless spin?)", t.sim.maxSteps))
			}
			if t.sim.abort.Load() {
				return
			}
		}
	}
}

// exit retires the thread from its warp and block.
func (t *simThread) exit() {
	w := t.warp
	w.mu.Lock()
	w.alive--
	if w.arrived > 0 && w.err == nil {
		w.err = fmt.Errorf("lane %d exited while its warp waits in a warp-synchronous instruction", t.lane)
		t.sim.fail(fmt.Errorf("sim: block %d: %v", t.ctaid, w.err))
		w.gen++
		w.cond.Broadcast()
	}
	w.mu.Unlock()
	b := t.blk
	b.mu.Lock()
	b.alive--
	if b.arrived > 0 {
		t.sim.fail(fmt.Errorf("sim: block %d: thread %d exited while others wait at bar.sync", t.ctaid, t.tid))
		b.barGen++
		b.cond.Broadcast()
	}
	b.mu.Unlock()
}

// warpSync is a rendezvous of all 32 lanes at one instruction; compute fills res.
func (t *simThread) warpSync(a, b, c uint64, p bool, compute func(w *simWarp)) (uint64, bool) {
	w := t.warp
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.alive != 32 {
		t.sim.fail(fmt.Errorf("sim: block %d: warp-synchronous instruction with %d live lanes", t.ctaid, w.alive))
		return 0, false
	}
	w.pc[t.lane], w.a[t.lane], w.b[t.lane], w.c[t.lane], w.p[t.lane] = t.pc, a, b, c, p
	gen := w.gen
	w.arrived++
	if w.arrived == 32 {
		for l := 1; l < 32; l++ {
			if w.pc[l] != w.pc[0] {
				w.err = fmt.Errorf("lanes at different warp-synchronous instructions: %q and %q", t.k.prog[w.pc[0]-1].text, t.k.prog[w.pc[l]-1].text)
				t.sim.fail(fmt.Errorf("sim: block %d: %v", t.ctaid, w.err))
			}
		}
		compute(w)
		w.arrived = 0
		w.gen++
		w.cond.Broadcast()
	} else {
		for w.gen == gen && !t.sim.abort.Load() {
			w.cond.Wait()
		}
	}
	return w.res[t.lane], w.resP[t.lane]
}

func (t *simThread) barrier() {
	b := t.blk
	b.mu.Lock()
	gen := b.barGen
	b.arrived++
	if b.alive != b.size {
		t.sim.fail(fmt.Errorf("sim: block %d: bar.sync after %d threads exited", t.ctaid, b.size-b.alive))
	}
	if b.arrived == b.alive {
		b.arrived = 0
		b.barGen++
		b.cond.Broadcast()
	} else {
		for b.barGen == gen && !t.sim.abort.Load() {
			b.cond.Wait()
		}
	}
	b.mu.Unlock()
	t.epoch++
}

// smemRead and smemWrite access shared memory under the block's lock, with hazard
// detection.
func (t *simThread) smemRead(addr uint64, n int) []byte {
	t.blk.mu.Lock()
	defer t.blk.mu.Unlock()
	return append([]byte(nil), t.smemAccess(addr, n, false)...)
}

func (t *simThread) smemWrite(addr uint64, data []byte) {
	t.blk.mu.Lock()
	defer t.blk.mu.Unlock()
	copy(t.smemAccess(addr, len(data), true), data)
}

// smemAccess checks an access (the block's lock held).
func (t *simThread) smemAccess(addr uint64, n int, write bool) []byte {
	b := t.blk
	if addr+uint64(n) > uint64(len(b.smem)) || addr%uint64(n) != 0 {
		panic(fmt.Sprintf("shared access of %d bytes at %#x (size %d)", n, addr, len(b.smem)))
	}
	tid := int32(t.tid)
	warp := tid / 32
	// Two accesses of different threads conflict when no barrier separates them: the
	// same block epoch, and different warps or the same warp epoch.
	ordered := func(epoch int32, otherTid int32, wep int32) bool {
		if epoch != t.epoch || otherTid == tid {
			return true
		}
		return otherTid >= 0 && otherTid/32 == warp && wep != t.wepoch
	}
	for i := int(addr); i < int(addr)+n; i++ {
		if b.wEpoch[i] >= 0 && !ordered(b.wEpoch[i], b.wTid[i], b.wWarp[i]) {
			kind := "read after write"
			if write {
				kind = "write after write"
			}
			t.sim.fail(fmt.Errorf("sim: block %d: shared memory %s hazard at byte %d between threads %d and %d (%q)", t.ctaid, kind, i, b.wTid[i], tid, t.k.prog[t.pc-1].text))
		}
		if write && b.rEpoch[i] == t.epoch {
			rt := b.rTid[i]
			conflict := false
			switch {
			case rt == tid:
			case rt >= 0:
				conflict = !ordered(b.rEpoch[i], rt, b.rWEp[i])
			default: // several readers: all of this warp before a warp barrier, or not
				conflict = b.rWarp[i] != warp || b.rWEp[i] == t.wepoch
			}
			if conflict {
				t.sim.fail(fmt.Errorf("sim: block %d: shared memory write after read hazard at byte %d by thread %d (%q)", t.ctaid, i, tid, t.k.prog[t.pc-1].text))
			}
		}
		if write {
			b.wEpoch[i], b.wTid[i], b.wWarp[i] = t.epoch, tid, t.wepoch
			continue
		}
		switch {
		case b.rEpoch[i] != t.epoch:
			b.rEpoch[i], b.rTid[i], b.rWarp[i], b.rWEp[i] = t.epoch, tid, warp, t.wepoch
		case b.rTid[i] != tid:
			if b.rWarp[i] != warp {
				b.rWarp[i] = -1
			}
			b.rTid[i] = -2
			b.rWEp[i] = max(b.rWEp[i], t.wepoch)
		}
	}
	return b.smem[addr : addr+uint64(n)]
}

// ---- operand access ----

func (t *simThread) val(o *simOpnd) uint64 {
	switch o.kind {
	case simReg:
		return t.r[o.reg]
	case simImm:
		return o.imm
	case simSpecial:
		switch o.name {
		case "%tid.x":
			return uint64(t.tid)
		case "%ntid.x":
			return uint64(t.ntid)
		case "%ctaid.x":
			return uint64(t.ctaid)
		case "%nctaid.x":
			return uint64(t.nctaid)
		case "%laneid":
			return uint64(t.lane)
		case "%globaltimer":
			return uint64(time.Now().UnixNano())
		case "%tid.y", "%tid.z", "%ctaid.y", "%ctaid.z":
			return 0
		case "%ntid.y", "%ntid.z", "%nctaid.y", "%nctaid.z":
			return 1
		}
		panic("special register " + o.name)
	case simSym:
		if off, ok := t.k.shared[o.name]; ok {
			return uint64(off)
		}
		for i, p := range t.k.params {
			if p == o.name {
				return t.params[i]
			}
		}
		panic("symbol " + o.name)
	}
	panic(fmt.Sprintf("operand kind %d", o.kind))
}

func (t *simThread) set(o *simOpnd, v uint64) {
	if o.kind != simReg {
		panic("destination is not a register")
	}
	bitsz := t.k.regBits[o.reg]
	switch bitsz {
	case 1:
		if v != 0 {
			v = 1
		}
	case 16:
		v &= 0xffff
	case 32:
		v &= 0xffffffff
	}
	t.r[o.reg] = v
}

func (t *simThread) addr(o *simOpnd) uint64 {
	return t.val(o.base) + uint64(o.off)
}

// ---- instruction semantics ----

type simType struct {
	bits   int
	signed bool
	float  bool
	pred   bool
}

func simTypeOf(s string) (simType, bool) {
	switch s {
	case "pred":
		return simType{bits: 1, pred: true}, true
	case "b8", "u8":
		return simType{bits: 8}, true
	case "s8":
		return simType{bits: 8, signed: true}, true
	case "b16", "u16":
		return simType{bits: 16}, true
	case "s16":
		return simType{bits: 16, signed: true}, true
	case "b32", "u32":
		return simType{bits: 32}, true
	case "s32":
		return simType{bits: 32, signed: true}, true
	case "b64", "u64":
		return simType{bits: 64}, true
	case "s64":
		return simType{bits: 64, signed: true}, true
	case "f32":
		return simType{bits: 32, float: true}, true
	case "f64":
		return simType{bits: 64, float: true}, true
	}
	return simType{}, false
}

// lastType returns the last type suffix of an opcode.
func lastType(parts []string) simType {
	for i := len(parts) - 1; i >= 0; i-- {
		if ty, ok := simTypeOf(parts[i]); ok {
			return ty
		}
	}
	panic("no type in " + strings.Join(parts, "."))
}

func (ty simType) mask(v uint64) uint64 {
	if ty.bits >= 64 {
		return v
	}
	return v & (1<<ty.bits - 1)
}

func (ty simType) sext(v uint64) int64 {
	if ty.bits >= 64 {
		return int64(v)
	}
	sh := 64 - ty.bits
	return int64(v<<sh) >> sh
}

func (ty simType) f(v uint64) float64 {
	if ty.bits == 32 {
		return float64(math.Float32frombits(uint32(v)))
	}
	return math.Float64frombits(v)
}

func (ty simType) fbits(x float64) uint64 {
	if ty.bits == 32 {
		return uint64(math.Float32bits(float32(x)))
	}
	return math.Float64bits(x)
}

func has(parts []string, s string) bool {
	for _, p := range parts {
		if p == s {
			return true
		}
	}
	return false
}

func (k *simKernel) compile(in *simInst) (func(*simThread, *simInst), error) {
	p := in.parts
	a := in.args
	switch p[0] {
	case "ld":
		return k.compileLd(in)
	case "st":
		return k.compileSt(in)
	case "mov":
		ty := lastType(p)
		if a[0].kind == simVec { // mov.b64 {lo, hi}, x
			return func(t *simThread, in *simInst) {
				v := t.val(&in.args[1])
				n := len(in.args[0].vec)
				w := 64 / n
				for i, r := range in.args[0].vec {
					t.r[r] = (v >> (w * i)) & (1<<w - 1)
				}
			}, nil
		}
		if a[1].kind == simVec {
			return func(t *simThread, in *simInst) {
				n := len(in.args[1].vec)
				w := ty.bits / n
				var v uint64
				for i, r := range in.args[1].vec {
					v |= (t.r[r] & (1<<w - 1)) << (w * i)
				}
				t.set(&in.args[0], v)
			}, nil
		}
		return func(t *simThread, in *simInst) { t.set(&in.args[0], ty.mask(t.val(&in.args[1]))) }, nil
	case "cvta":
		return func(t *simThread, in *simInst) { t.set(&in.args[0], t.val(&in.args[1])) }, nil
	case "cvt":
		return k.compileCvt(in)
	case "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max":
		return k.compileArith(in)
	case "neg", "abs":
		ty := lastType(p)
		neg := p[0] == "neg"
		return func(t *simThread, in *simInst) {
			v := t.val(&in.args[1])
			switch {
			case ty.float && neg:
				t.set(&in.args[0], v^(1<<(ty.bits-1)))
			case ty.float:
				t.set(&in.args[0], v&^(1<<(ty.bits-1)))
			case neg:
				t.set(&in.args[0], ty.mask(uint64(-ty.sext(v))))
			default:
				x := ty.sext(v)
				if x < 0 {
					x = -x
				}
				t.set(&in.args[0], ty.mask(uint64(x)))
			}
		}, nil
	case "and", "or", "xor":
		ty := lastType(p)
		return func(t *simThread, in *simInst) {
			x, y := t.val(&in.args[1]), t.val(&in.args[2])
			var r uint64
			switch in.parts[0] {
			case "and":
				r = x & y
			case "or":
				r = x | y
			default:
				r = x ^ y
			}
			t.set(&in.args[0], ty.mask(r))
		}, nil
	case "not":
		ty := lastType(p)
		return func(t *simThread, in *simInst) {
			if ty.pred {
				t.set(&in.args[0], 1^t.val(&in.args[1]))
				return
			}
			t.set(&in.args[0], ty.mask(^t.val(&in.args[1])))
		}, nil
	case "shl", "shr":
		ty := lastType(p)
		return func(t *simThread, in *simInst) {
			x := t.val(&in.args[1])
			n := t.val(&in.args[2]) & 0xffffffff
			var r uint64
			switch {
			case in.parts[0] == "shl":
				if n < uint64(ty.bits) {
					r = x << n
				}
			case ty.signed:
				if n >= uint64(ty.bits) {
					n = uint64(ty.bits) - 1
				}
				r = uint64(ty.sext(x) >> n)
			default:
				if n < uint64(ty.bits) {
					r = ty.mask(x) >> n
				}
			}
			t.set(&in.args[0], ty.mask(r))
		}, nil
	case "bfe":
		ty := lastType(p)
		return func(t *simThread, in *simInst) {
			x := t.val(&in.args[1])
			pos := t.val(&in.args[2]) & 0xff
			ln := t.val(&in.args[3]) & 0xff
			v := (ty.mask(x) >> pos) & (1<<ln - 1)
			if ty.signed && ln > 0 && v&(1<<(ln-1)) != 0 {
				v |= ^uint64(0) << ln
			}
			t.set(&in.args[0], ty.mask(v))
		}, nil
	case "bfind":
		return func(t *simThread, in *simInst) {
			x := uint32(t.val(&in.args[1]))
			r := uint64(0xffffffff)
			if x != 0 {
				r = uint64(31 - bits.LeadingZeros32(x))
			}
			t.set(&in.args[0], r)
		}, nil
	case "popc":
		return func(t *simThread, in *simInst) {
			t.set(&in.args[0], uint64(bits.OnesCount64(t.val(&in.args[1]))))
		}, nil
	case "brev":
		return func(t *simThread, in *simInst) {
			t.set(&in.args[0], uint64(bits.Reverse32(uint32(t.val(&in.args[1])))))
		}, nil
	case "prmt":
		return func(t *simThread, in *simInst) {
			x, y := uint32(t.val(&in.args[1])), uint32(t.val(&in.args[2]))
			sel := uint32(t.val(&in.args[3]))
			var src [8]byte
			binary.LittleEndian.PutUint32(src[:4], x)
			binary.LittleEndian.PutUint32(src[4:], y)
			var r uint32
			for i := 0; i < 4; i++ {
				r |= uint32(src[(sel>>(4*i))&7]) << (8 * i)
			}
			t.set(&in.args[0], uint64(r))
		}, nil
	case "setp":
		return k.compileSetp(in)
	case "selp":
		ty := lastType(p)
		return func(t *simThread, in *simInst) {
			if t.val(&in.args[3]) != 0 {
				t.set(&in.args[0], ty.mask(t.val(&in.args[1])))
			} else {
				t.set(&in.args[0], ty.mask(t.val(&in.args[2])))
			}
		}, nil
	case "bra":
		target, ok := k.labels[a[0].name]
		if !ok {
			return nil, fmt.Errorf("unknown label %s", a[0].name)
		}
		return func(t *simThread, in *simInst) { t.pc = target }, nil
	case "ret", "exit":
		return func(t *simThread, in *simInst) { t.done = true }, nil
	case "bar":
		if len(p) > 1 && p[1] == "warp" {
			return func(t *simThread, in *simInst) {
				if t.val(&in.args[0])&0xffffffff != 0xffffffff {
					panic("bar.warp.sync with a partial mask")
				}
				t.warpSync(0, 0, 0, false, func(w *simWarp) {})
				t.wepoch++
			}, nil
		}
		return func(t *simThread, in *simInst) { t.barrier() }, nil
	case "fence", "membar":
		return func(t *simThread, in *simInst) {}, nil
	case "nanosleep":
		return func(t *simThread, in *simInst) { runtime.Gosched() }, nil
	case "trap":
		return func(t *simThread, in *simInst) { panic("trap") }, nil
	case "atom":
		return k.compileAtom(in)
	case "shfl":
		return k.compileShfl(in)
	case "vote":
		mode := p[2]
		return func(t *simThread, in *simInst) {
			pv := t.val(&in.args[1]) != 0
			if t.val(&in.args[2])&0xffffffff != 0xffffffff {
				panic("vote with a partial mask")
			}
			r, rp := t.warpSync(0, 0, 0, pv, func(w *simWarp) {
				var ballot uint64
				all, any := true, false
				for l := 0; l < 32; l++ {
					if w.p[l] {
						ballot |= 1 << l
						any = true
					} else {
						all = false
					}
				}
				for l := 0; l < 32; l++ {
					w.res[l] = ballot
					w.resP[l] = (mode == "all" && all) || (mode == "any" && any)
				}
			})
			if mode == "ballot" {
				t.set(&in.args[0], r)
			} else if rp {
				t.set(&in.args[0], 1)
			} else {
				t.set(&in.args[0], 0)
			}
		}, nil
	}
	return nil, fmt.Errorf("unsupported instruction %s", in.op)
}

func (k *simKernel) compileLd(in *simInst) (func(*simThread, *simInst), error) {
	p := in.parts
	ty := lastType(p)
	n := 1
	for _, s := range p {
		switch s {
		case "v2":
			n = 2
		case "v4":
			n = 4
		}
	}
	size := ty.bits / 8
	if p[1] == "param" {
		return func(t *simThread, in *simInst) {
			t.set(&in.args[0], t.val(in.args[1].base))
		}, nil
	}
	shared := has(p, "shared")
	return func(t *simThread, in *simInst) {
		addr := t.addr(&in.args[1])
		var buf []byte
		if shared {
			buf = t.smemRead(addr, size*n)
		} else {
			m := t.mem
			m.mu.Lock()
			off, err := m.check(addr, size*n)
			if err != nil {
				m.mu.Unlock()
				panic(err)
			}
			buf = append([]byte(nil), m.buf[off:off+size*n]...)
			m.mu.Unlock()
		}
		dst := []int{}
		if in.args[0].kind == simVec {
			dst = in.args[0].vec
		}
		for i := 0; i < n; i++ {
			var v uint64
			for b := size - 1; b >= 0; b-- {
				v = v<<8 | uint64(buf[i*size+b])
			}
			if ty.signed {
				v = uint64(ty.sext(v))
			}
			if len(dst) > 0 {
				o := simOpnd{kind: simReg, reg: dst[i]}
				t.set(&o, v)
			} else {
				t.set(&in.args[0], v)
			}
		}
	}, nil
}

func (k *simKernel) compileSt(in *simInst) (func(*simThread, *simInst), error) {
	p := in.parts
	ty := lastType(p)
	n := 1
	for _, s := range p {
		switch s {
		case "v2":
			n = 2
		case "v4":
			n = 4
		}
	}
	size := ty.bits / 8
	shared := has(p, "shared")
	return func(t *simThread, in *simInst) {
		addr := t.addr(&in.args[0])
		buf := make([]byte, size*n)
		for i := 0; i < n; i++ {
			var v uint64
			if in.args[1].kind == simVec {
				v = t.r[in.args[1].vec[i]]
			} else {
				v = t.val(&in.args[1])
			}
			for b := 0; b < size; b++ {
				buf[i*size+b] = byte(v >> (8 * b))
			}
		}
		if shared {
			t.smemWrite(addr, buf)
			return
		}
		m := t.mem
		m.mu.Lock()
		off, err := m.check(addr, size*n)
		if err != nil {
			m.mu.Unlock()
			panic(err)
		}
		copy(m.buf[off:], buf)
		m.mu.Unlock()
	}, nil
}

func (k *simKernel) compileAtom(in *simInst) (func(*simThread, *simInst), error) {
	p := in.parts
	ty := lastType(p)
	op := ""
	for _, s := range p {
		switch s {
		case "add", "min", "max", "exch", "or", "and":
			op = s
		}
	}
	size := ty.bits / 8
	shared := has(p, "shared")
	return func(t *simThread, in *simInst) {
		addr := t.addr(&in.args[1])
		x := t.val(&in.args[2])
		var buf []byte
		if shared {
			// Shared atomics: atomic among themselves (no hazard between two of them);
			// plain accesses to the same bytes must still be ordered by a barrier.
			b := t.blk
			b.mu.Lock()
			defer b.mu.Unlock()
			if addr+uint64(size) > uint64(len(b.smem)) || addr%uint64(size) != 0 {
				panic(fmt.Sprintf("shared atomic of %d bytes at %#x (size %d)", size, addr, len(b.smem)))
			}
			buf = b.smem[addr : addr+uint64(size)]
		} else {
			m := t.mem
			m.mu.Lock()
			defer m.mu.Unlock()
			off, err := m.check(addr, size)
			if err != nil {
				panic(err)
			}
			buf = m.buf[off : off+size]
		}
		var old uint64
		for b := size - 1; b >= 0; b-- {
			old = old<<8 | uint64(buf[b])
		}
		var nv uint64
		switch op {
		case "add":
			nv = old + x
		case "min":
			if ty.signed {
				nv = uint64(min(ty.sext(old), ty.sext(x)))
			} else {
				nv = min(old, ty.mask(x))
			}
		case "max":
			nv = max(old, ty.mask(x))
		case "exch":
			nv = x
		case "or":
			nv = old | x
		case "and":
			nv = old & x
		}
		nv = ty.mask(nv)
		for b := 0; b < size; b++ {
			buf[b] = byte(nv >> (8 * b))
		}
		if in.args[0].kind == simReg {
			t.set(&in.args[0], old)
		}
	}, nil
}

func (k *simKernel) compileShfl(in *simInst) (func(*simThread, *simInst), error) {
	mode := in.parts[2]
	return func(t *simThread, in *simInst) {
		if t.val(&in.args[4])&0xffffffff != 0xffffffff {
			panic("shfl with a partial mask")
		}
		a, b, c := t.val(&in.args[1]), t.val(&in.args[2]), t.val(&in.args[3])
		r, _ := t.warpSync(a, b, c, false, func(w *simWarp) {
			for l := 0; l < 32; l++ {
				bb, cc := int(w.b[l]&31), int(w.c[l])
				clamp := cc & 31
				segMask := (cc >> 8) & 31
				maxLane := (l & segMask) | (clamp &^ segMask)
				minLane := l & segMask
				j := l
				switch mode {
				case "up":
					j = l - bb
					if j < minLane {
						j = l
					}
				case "down":
					j = l + bb
					if j > maxLane {
						j = l
					}
				case "bfly":
					j = l ^ bb
					if j > maxLane {
						j = l
					}
				case "idx":
					j = minLane | (bb &^ segMask)
					if j > maxLane {
						j = l
					}
				}
				w.res[l] = w.a[j] & 0xffffffff
			}
		})
		t.set(&in.args[0], r)
	}, nil
}

func (k *simKernel) compileSetp(in *simInst) (func(*simThread, *simInst), error) {
	cmp := in.parts[1]
	ty := lastType(in.parts)
	return func(t *simThread, in *simInst) {
		x, y := t.val(&in.args[1]), t.val(&in.args[2])
		var r bool
		if ty.float {
			fx, fy := ty.f(x), ty.f(y)
			nan := fx != fx || fy != fy
			switch cmp {
			case "eq":
				r = fx == fy
			case "ne":
				r = fx != fy && !nan
			case "lt":
				r = fx < fy
			case "le":
				r = fx <= fy
			case "gt":
				r = fx > fy
			case "ge":
				r = fx >= fy
			case "equ":
				r = fx == fy || nan
			case "neu":
				r = fx != fy
			case "ltu":
				r = fx < fy || nan
			case "leu":
				r = fx <= fy || nan
			case "gtu":
				r = fx > fy || nan
			case "geu":
				r = fx >= fy || nan
			case "num":
				r = !nan
			case "nan":
				r = nan
			default:
				panic("setp " + cmp)
			}
		} else if ty.signed {
			sx, sy := ty.sext(x), ty.sext(y)
			switch cmp {
			case "eq":
				r = sx == sy
			case "ne":
				r = sx != sy
			case "lt":
				r = sx < sy
			case "le":
				r = sx <= sy
			case "gt":
				r = sx > sy
			case "ge":
				r = sx >= sy
			default:
				panic("setp " + cmp)
			}
		} else {
			ux, uy := ty.mask(x), ty.mask(y)
			switch cmp {
			case "eq":
				r = ux == uy
			case "ne":
				r = ux != uy
			case "lt", "lo":
				r = ux < uy
			case "le", "ls":
				r = ux <= uy
			case "gt", "hi":
				r = ux > uy
			case "ge", "hs":
				r = ux >= uy
			default:
				panic("setp " + cmp)
			}
		}
		v := uint64(0)
		if r {
			v = 1
		}
		t.set(&in.args[0], v)
	}, nil
}

func (k *simKernel) compileArith(in *simInst) (func(*simThread, *simInst), error) {
	p := in.parts
	op := p[0]
	ty := lastType(p)
	wide := has(p, "wide")
	hi := has(p, "hi")
	return func(t *simThread, in *simInst) {
		x, y := t.val(&in.args[1]), t.val(&in.args[2])
		var z uint64
		if len(in.args) > 3 {
			z = t.val(&in.args[3])
		}
		if ty.float {
			fx, fy, fz := ty.f(x), ty.f(y), ty.f(z)
			var r float64
			switch op {
			case "add":
				r = rnd(ty, fx+fy)
				if ty.bits == 32 {
					r = float64(float32(fx) + float32(fy))
				}
			case "sub":
				r = fx - fy
				if ty.bits == 32 {
					r = float64(float32(fx) - float32(fy))
				}
			case "mul":
				r = fx * fy
				if ty.bits == 32 {
					r = float64(float32(fx) * float32(fy))
				}
			case "fma":
				r = math.FMA(fx, fy, fz)
				if ty.bits == 32 {
					r = float64(float32(r)) // exact product and sum in float64 then one rounding: fine for tests
				}
			case "div":
				r = fx / fy
				if ty.bits == 32 {
					r = float64(float32(fx) / float32(fy))
				}
			case "min", "max":
				// PTX: the non-NaN operand when one is NaN.
				switch {
				case fx != fx:
					r = fy
				case fy != fy:
					r = fx
				case op == "min":
					r = math.Min(fx, fy)
				default:
					r = math.Max(fx, fy)
				}
			default:
				panic("float " + op)
			}
			res := ty.fbits(r)
			if r != r {
				if ty.bits == 32 {
					res = 0x7fffffff
				} else {
					res = 0x7fffffffffffffff
				}
			}
			t.set(&in.args[0], res)
			return
		}
		var r uint64
		switch op {
		case "add":
			r = x + y
		case "sub":
			r = x - y
		case "mul":
			switch {
			case wide && ty.signed:
				r = uint64(ty.sext(x) * ty.sext(y))
			case wide:
				r = ty.mask(x) * ty.mask(y)
			case hi && ty.signed:
				h, _ := bits.Mul64(uint64(ty.sext(x)), uint64(ty.sext(y)))
				r = h // only used for 64-bit unsigned here
			case hi:
				if ty.bits == 64 {
					r, _ = bits.Mul64(x, y)
				} else {
					r = (ty.mask(x) * ty.mask(y)) >> ty.bits
				}
			default:
				r = x * y
			}
			if wide {
				t.set(&in.args[0], r)
				return
			}
		case "mad":
			if wide {
				if ty.signed {
					r = uint64(ty.sext(x)*ty.sext(y)) + z
				} else {
					r = ty.mask(x)*ty.mask(y) + z
				}
				t.set(&in.args[0], r)
				return
			}
			r = x*y + z
		case "div":
			if ty.mask(y) == 0 {
				r = ty.mask(^uint64(0))
			} else if ty.signed {
				r = uint64(ty.sext(x) / ty.sext(y))
			} else {
				r = ty.mask(x) / ty.mask(y)
			}
		case "rem":
			if ty.mask(y) == 0 {
				r = x
			} else if ty.signed {
				r = uint64(ty.sext(x) % ty.sext(y))
			} else {
				r = ty.mask(x) % ty.mask(y)
			}
		case "min", "max":
			less := ty.mask(x) < ty.mask(y)
			if ty.signed {
				less = ty.sext(x) < ty.sext(y)
			}
			if (op == "min") == less {
				r = x
			} else {
				r = y
			}
		}
		t.set(&in.args[0], ty.mask(r))
	}, nil
}

func rnd(ty simType, x float64) float64 {
	if ty.bits == 32 {
		return float64(float32(x))
	}
	return x
}

func (k *simKernel) compileCvt(in *simInst) (func(*simThread, *simInst), error) {
	p := in.parts
	var types []simType
	rounding := ""
	for _, s := range p[1:] {
		if ty, ok := simTypeOf(s); ok {
			types = append(types, ty)
			continue
		}
		rounding = s
	}
	if len(types) != 2 {
		return nil, fmt.Errorf("cvt types in %s", in.op)
	}
	dt, st := types[0], types[1]
	return func(t *simThread, in *simInst) {
		v := t.val(&in.args[1])
		var r uint64
		switch {
		case !dt.float && !st.float:
			if st.signed {
				r = uint64(st.sext(v))
			} else {
				r = st.mask(v)
			}
			r = dt.mask(r)
			if dt.signed && dt.bits < 64 {
				// a narrow signed destination in a wider register: sign-extended
				r = uint64(dt.sext(r))
			}
		case dt.float && st.float:
			x := st.f(v)
			switch rounding {
			case "rni":
				x = math.RoundToEven(x)
			case "rzi":
				x = math.Trunc(x)
			case "rmi":
				x = math.Floor(x)
			case "rpi":
				x = math.Ceil(x)
			}
			r = dt.fbits(x)
			if x != x {
				r = dt.fbits(math.NaN())
				if dt.bits == 32 {
					r = 0x7fffffff
				} else {
					r = 0x7fffffffffffffff
				}
			}
		case dt.float:
			if st.signed {
				if dt.bits == 32 {
					r = uint64(math.Float32bits(float32(st.sext(v))))
				} else {
					r = math.Float64bits(float64(st.sext(v)))
				}
			} else {
				if dt.bits == 32 {
					r = uint64(math.Float32bits(float32(st.mask(v))))
				} else {
					r = math.Float64bits(float64(st.mask(v)))
				}
			}
		default: // float to integer: round, saturate, NaN -> 0
			x := st.f(v)
			switch rounding {
			case "rni":
				x = math.RoundToEven(x)
			case "rmi":
				x = math.Floor(x)
			case "rpi":
				x = math.Ceil(x)
			default:
				x = math.Trunc(x)
			}
			switch {
			case x != x:
				r = 0
			case dt.signed:
				lo, hi := -math.Ldexp(1, dt.bits-1), math.Ldexp(1, dt.bits-1)
				switch {
				case x <= lo:
					r = uint64(int64(-1) << (dt.bits - 1))
				case x >= hi:
					r = uint64(1)<<(dt.bits-1) - 1
				default:
					r = uint64(int64(x))
				}
			default:
				hi := math.Ldexp(1, dt.bits)
				switch {
				case x <= 0:
					r = 0
				case x >= hi:
					r = dt.mask(^uint64(0))
				default:
					r = uint64(x)
				}
			}
			r = dt.mask(r)
			if dt.signed && dt.bits < 64 {
				r = uint64(dt.sext(r))
			}
		}
		t.set(&in.args[0], r)
	}, nil
}

// ---- a test harness ----

// simDevice is global memory for a simulated launch: buffers allocated in one arena.
type simDevice struct {
	mem  *simMem
	next uint64
}

func newSimDevice(size int) *simDevice {
	return &simDevice{mem: &simMem{base: 1 << 20, buf: make([]byte, size)}, next: 1 << 20}
}

// alloc returns the address of n bytes (16-byte aligned, filled with fill).
func (d *simDevice) alloc(n int, fill byte) uint64 {
	a := (d.next + 255) &^ 255
	d.next = a + uint64(n)
	off := a - d.mem.base
	if int(off)+n > len(d.mem.buf) {
		panic("sim: device memory exhausted")
	}
	for i := 0; i < n; i++ {
		d.mem.buf[int(off)+i] = fill
	}
	return a
}

func (d *simDevice) bytes(addr uint64, n int) []byte {
	off := addr - d.mem.base
	return d.mem.buf[off : off+uint64(n)]
}
