// Package ptxinterp is a small PTX interpreter for tests: it runs a kernel's threads one
// at a time, so that tests on a machine without a GPU can compare what generated PTX
// computes with Go code, bit for bit.
//
// It covers the subset of PTX ISA 7.8 the library's generators emit: integer, bit and
// IEEE floating-point arithmetic (.rn only; no .ftz, no approximations), setp/selp,
// cvt between all integer and float types (float16 and bfloat16 included, every
// rounding modifier), bfe, prmt, ld/st of the param and global spaces (vectors, .nc),
// module-scope .global tables, device function calls, branches. There is no shared
// memory, no barrier and no warp-level instruction: threads are independent.
//
// Semantics follow the PTX manual, with these choices where it leaves results
// unspecified or to the hardware:
//   - float results that are NaN are the canonical NaN (0x7fffffff, 0x7fffffffffffffff),
//     as NVIDIA GPUs produce; neg and abs flip or clear the sign bit only;
//   - integer division by zero and MinInt / -1 (div and rem) give the poison value
//     0xdead...: a kernel must not rely on them;
//   - min/max.f32 of +0 and -0 order -0 below +0.
//
// Memory faults (an access outside the memory the test provides, or misaligned), an
// unsupported instruction and a thread running past MaxSteps are errors.
package ptxinterp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// Memory is the global memory a kernel runs on. Load fills b from addr; Store writes b
// at addr. Both report an access outside the memory as an error.
type Memory interface {
	Load(addr uint64, b []byte) error
	Store(addr uint64, b []byte) error
}

// globalBase is where a module's .global variables live.
const globalBase = 0x7e00_0000_0000

// Module is a parsed PTX module.
type Module struct {
	funcs   map[string]*Func
	entries []*Func
	syms    map[string]uint64 // variable addresses
	gbase   uint64
	gsize   uint64
	gdata   []byte
}

// Entries returns the module's kernels in the order of the text.
func (m *Module) Entries() []*Func { return m.entries }

// Func returns the kernel or device function named name, or nil.
func (m *Module) Func(name string) *Func { return m.funcs[name] }

// Param is a parameter of a kernel or device function: its name, its type as written
// without the dot ("u64", "f32", "b8" for byte arrays) and its size in bytes.
type Param struct {
	Name string
	Type string
	Size int
}

// Func is a kernel or a device function.
type Func struct {
	Name   string
	Entry  bool
	Params []Param
	Rets   []Param

	mod      *Module
	regIdx   map[string]int
	regWidth []int
	prog     []*inst
	labels   map[string]int
}

type inst struct {
	text   string
	op     string
	parts  []string
	guard  int
	gneg   bool
	args   []opnd
	callee string
	exec   func(t *thread, in *inst)
}

// Dim is a thread's position: thread tid of a block of ntid threads, block ctaid of a
// grid of nctaid blocks (x only; y and z are 0 of 1).
type Dim struct {
	Tid, Ntid, Ctaid, Nctaid uint32
}

// MaxSteps bounds the instructions one thread may execute.
var MaxSteps = 50_000_000

type frame struct {
	fn       *Func
	r        []uint64
	kparams  map[string]uint64 // a kernel's parameters (read only, shared by threads)
	params   map[string]uint64 // parameters stored by the function (call scopes, returns)
	pc       int
	retNames []string
}

// param returns the value of parameter name in the frame's scope.
func (fr *frame) param(name string) (uint64, bool) {
	if v, ok := fr.params[name]; ok {
		return v, true
	}
	v, ok := fr.kparams[name]
	return v, ok
}

func (fr *frame) setParam(name string, v uint64) {
	if fr.params == nil {
		fr.params = map[string]uint64{}
	}
	fr.params[name] = v
}

type thread struct {
	mod   *Module
	mem   Memory
	dim   Dim
	fr    *frame
	stack []*frame
	steps int
	done  bool
	buf   [64]byte
	free  map[*Func][]*frame // device function frames to reuse
}

// newFrame returns a cleared frame for a call of fn.
func (t *thread) newFrame(fn *Func) *frame {
	if l := t.free[fn]; len(l) > 0 {
		fr := l[len(l)-1]
		t.free[fn] = l[:len(l)-1]
		clear(fr.r)
		clear(fr.params)
		fr.pc = 0
		return fr
	}
	return &frame{fn: fn, r: make([]uint64, len(fn.regWidth)), params: map[string]uint64{}}
}

// fault is a run-time error of a thread, raised by panic and returned by Run.
type fault struct{ err error }

func faultf(format string, args ...any) { panic(fault{fmt.Errorf(format, args...)}) }

// ErrFault wraps every run-time error of a thread.
var ErrFault = errors.New("ptxinterp: fault")

func (f *Func) kernelParams(args []uint64) (map[string]uint64, error) {
	if !f.Entry {
		return nil, fmt.Errorf("ptxinterp: %s is not a kernel", f.Name)
	}
	if len(args) != len(f.Params) {
		return nil, fmt.Errorf("ptxinterp: %s takes %d arguments, got %d", f.Name, len(f.Params), len(args))
	}
	params := make(map[string]uint64, len(args))
	for i, p := range f.Params {
		v := args[i]
		if p.Size < 8 {
			v &= 1<<(8*p.Size) - 1
		}
		params[p.Name] = v
	}
	return params, nil
}

// Run executes one thread of kernel f with the given arguments (one per parameter: its
// bits, zero-extended) and returns the number of instructions it executed.
func (f *Func) Run(mem Memory, d Dim, args []uint64) (steps int, err error) {
	params, err := f.kernelParams(args)
	if err != nil {
		return 0, err
	}
	t := &thread{mod: f.mod, mem: mem}
	return t.run(f, params, d)
}

// run executes one thread, reusing t.
func (t *thread) run(f *Func, params map[string]uint64, d Dim) (steps int, err error) {
	t.dim, t.steps, t.done, t.stack = d, 0, false, t.stack[:0]
	if t.fr == nil || t.fr.fn != f {
		t.fr = &frame{fn: f, r: make([]uint64, len(f.regWidth))}
	}
	fr := t.fr
	clear(fr.r)
	fr.kparams, fr.params, fr.pc = params, nil, 0
	defer func() {
		if r := recover(); r != nil {
			ft, ok := r.(fault)
			if !ok {
				panic(r)
			}
			in := "?"
			if t.fr != nil && t.fr.pc < len(t.fr.fn.prog) {
				in = t.fr.fn.Name + ": " + t.fr.fn.prog[t.fr.pc].text
			}
			err = fmt.Errorf("%w: thread %d of block %d: %v (at %s)", ErrFault, d.Tid, d.Ctaid, ft.err, in)
			t.fr = nil
		}
		steps = t.steps
	}()
	t.loop()
	t.fr = fr
	return t.steps, nil
}

// Launch runs every thread of a grid of grid blocks of block threads, block by block
// and thread by thread, and stops at the first fault.
func (f *Func) Launch(mem Memory, grid, block uint32, args []uint64) error {
	params, err := f.kernelParams(args)
	if err != nil {
		return err
	}
	t := &thread{mod: f.mod, mem: mem}
	for c := uint32(0); c < grid; c++ {
		for i := uint32(0); i < block; i++ {
			if _, err := t.run(f, params, Dim{Tid: i, Ntid: block, Ctaid: c, Nctaid: grid}); err != nil {
				return err
			}
		}
	}
	return nil
}

func (t *thread) loop() {
	for !t.done {
		fr := t.fr
		if fr.pc >= len(fr.fn.prog) {
			t.ret()
			continue
		}
		in := fr.fn.prog[fr.pc]
		if in.guard >= 0 && (fr.r[in.guard] != 0) == in.gneg {
			fr.pc++
			continue
		}
		t.steps++
		if t.steps > MaxSteps {
			faultf("more than %d instructions", MaxSteps)
		}
		in.exec(t, in)
		if t.fr == fr {
			fr.pc++
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
		v, ok := callee.param(p.Name)
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

func specialValue(name string, t *thread) (uint64, bool) {
	switch name {
	case "%tid.x":
		return uint64(t.dim.Tid), true
	case "%ntid.x":
		return uint64(t.dim.Ntid), true
	case "%ctaid.x":
		return uint64(t.dim.Ctaid), true
	case "%nctaid.x":
		return uint64(t.dim.Nctaid), true
	case "%tid.y", "%tid.z", "%ctaid.y", "%ctaid.z":
		return 0, true
	case "%ntid.y", "%ntid.z", "%nctaid.y", "%nctaid.z":
		return 1, true
	case "%laneid":
		return uint64(t.dim.Tid % 32), true
	}
	return 0, false
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

func (t *thread) val(o opnd) uint64 {
	switch o.kind {
	case oReg:
		v := t.fr.r[o.reg]
		if o.neg {
			v ^= 1
		}
		return v
	case oImm:
		return o.imm
	case oSpecial:
		v, _ := specialValue(o.name, t)
		return v
	case oSym:
		a, ok := t.mod.syms[o.name]
		if !ok {
			faultf("unknown symbol %s", o.name)
		}
		return a
	}
	faultf("operand has no value")
	return 0
}

// set writes v to register operand o, masked to the register's width.
func (t *thread) set(o opnd, v uint64) {
	if o.kind != oReg {
		faultf("destination is not a register")
	}
	t.fr.r[o.reg] = mask(v, t.fr.fn.regWidth[o.reg])
}

func (t *thread) setReg(r int, v uint64) { t.fr.r[r] = mask(v, t.fr.fn.regWidth[r]) }

func (t *thread) addr(o opnd) uint64 {
	if o.reg >= 0 {
		return t.fr.r[o.reg] + uint64(o.off)
	}
	a, ok := t.mod.syms[o.name]
	if !ok {
		faultf("unknown address %s", o.name)
	}
	return a + uint64(o.off)
}

func (t *thread) load(addr uint64, b []byte) {
	if m := t.mod; addr >= m.gbase && addr < m.gbase+m.gsize {
		if addr+uint64(len(b)) > m.gbase+m.gsize {
			faultf("load of %d bytes at %#x past the module's variables", len(b), addr)
		}
		copy(b, m.gdata[addr-m.gbase:])
		return
	}
	if t.mem == nil {
		faultf("load at %#x without memory", addr)
	}
	if err := t.mem.Load(addr, b); err != nil {
		faultf("load of %d bytes at %#x: %v", len(b), addr, err)
	}
}

func (t *thread) store(addr uint64, b []byte) {
	if m := t.mod; addr >= m.gbase && addr < m.gbase+m.gsize {
		faultf("store into the module's variables at %#x", addr)
	}
	if t.mem == nil {
		faultf("store at %#x without memory", addr)
	}
	if err := t.mem.Store(addr, b); err != nil {
		faultf("store of %d bytes at %#x: %v", len(b), addr, err)
	}
}

// Regions is a Memory made of byte slices mapped at chosen addresses.
type Regions struct {
	regs []region
}

type region struct {
	base uint64
	b    []byte
}

// Map maps b at address base. Regions must not overlap.
func (m *Regions) Map(base uint64, b []byte) {
	m.regs = append(m.regs, region{base, b})
	sort.Slice(m.regs, func(i, j int) bool { return m.regs[i].base < m.regs[j].base })
}

func (m *Regions) find(addr uint64, n int) ([]byte, error) {
	i := sort.Search(len(m.regs), func(i int) bool { return m.regs[i].base > addr }) - 1
	if i >= 0 {
		r := m.regs[i]
		if addr+uint64(n) <= r.base+uint64(len(r.b)) {
			return r.b[addr-r.base : addr-r.base+uint64(n)], nil
		}
	}
	return nil, fmt.Errorf("outside the mapped memory")
}

// Load implements Memory.
func (m *Regions) Load(addr uint64, b []byte) error {
	s, err := m.find(addr, len(b))
	if err != nil {
		return err
	}
	copy(b, s)
	return nil
}

// Store implements Memory.
func (m *Regions) Store(addr uint64, b []byte) error {
	s, err := m.find(addr, len(b))
	if err != nil {
		return err
	}
	copy(s, b)
	return nil
}

// littleEndian helpers
func getLE(b []byte) uint64 {
	var x [8]byte
	copy(x[:], b)
	return binary.LittleEndian.Uint64(x[:])
}

func putLE(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}

// opParts splits an opcode into its modifiers and final type.
func lastType(parts []string) (ptype, error) {
	t, ok := parseType(parts[len(parts)-1])
	if !ok {
		return t, fmt.Errorf("no type in %s", strings.Join(parts, "."))
	}
	return t, nil
}

func has(parts []string, m string) bool {
	for _, p := range parts[1:] {
		if p == m {
			return true
		}
	}
	return false
}
