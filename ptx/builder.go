package ptx

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// DefaultVersion is the PTX ISA version a new Module declares. The CUDA 13 driver and
// CUDA 11.8's ptxas both accept it, and it covers sm_90.
const DefaultVersion = "7.8"

// Module is one PTX module: a header, module-scope variables and functions.
//
// A Module and the Funcs it creates are not safe for concurrent use, but separate
// modules share nothing, so many goroutines can each build their own. The text is
// a pure function of the calls made: the same calls give the same bytes.
type Module struct {
	// Version is the PTX ISA version written in the header (".version 7.8").
	Version string
	// Target is the target architecture ("sm_90").
	Target string
	// AddressSize is 64 (the only size supported by current drivers).
	AddressSize int

	vars    []string        // module-scope declarations in order of creation
	varSeen map[string]bool // names of module-scope variables
	funcs   []*Func
	byName  map[string]*Func
}

// NewModule returns an empty module for a GPU of compute capability major.minor
// (9, 0 for the H200: ".target sm_90").
func NewModule(major, minor int) *Module {
	return &Module{
		Version:     DefaultVersion,
		Target:      TargetFor(major, minor),
		AddressSize: 64,
		varSeen:     map[string]bool{},
		byName:      map[string]*Func{},
	}
}

// TargetFor returns the PTX target name for a compute capability: TargetFor(9, 0) is
// "sm_90". A capability past 9.0 (10.0, 12.0) gets "sm_90" too: the newest target that
// PTX ISA DefaultVersion names (sm_100 needs 8.6, sm_120 8.7), whose code the driver
// compiles for any later GPU (PTX ISA: "PTX Module Directives: .target").
func TargetFor(major, minor int) string {
	if major*10+minor > 90 {
		return "sm_90"
	}
	return "sm_" + strconv.Itoa(major) + strconv.Itoa(minor)
}

// Param is a parameter (or return value) of a kernel or device function. A parameter
// with Count > 0 is a byte array (".param .align A .b8 name[Count]") for passing structs.
type Param struct {
	Name  string
	Type  Type
	Align int // for arrays; 0 means the natural alignment
	Count int // for arrays: size in bytes
}

// P returns a scalar parameter.
func P(name string, t Type) Param { return Param{Name: name, Type: t} }

func (p Param) decl() string {
	if p.Count > 0 {
		a := p.Align
		if a == 0 {
			a = 8
		}
		return fmt.Sprintf(".param .align %d .b8 %s[%d]", a, p.Name, p.Count)
	}
	t := p.Type
	if t == Pred {
		t = U32 // predicates can't be parameters
	}
	return ".param " + t.String() + " " + p.Name
}

// Func is a kernel (.visible .entry) or a device function (.func) being written.
type Func struct {
	m        *Module
	name     string
	kernel   bool
	linkage  string
	params   []Param
	rets     []Param
	body     []byte
	nreg     [numPools]int
	nlabel   int
	attrs    []string
	done     bool
	prologue []byte // function-scope declarations (.shared, .local)
}

// Kernel adds a kernel (".visible .entry name(params)") to the module and returns it.
func (m *Module) Kernel(name string, params ...Param) *Func {
	f := &Func{m: m, name: name, kernel: true, linkage: ".visible ", params: params}
	m.addFunc(f)
	return f
}

// Func adds a device function (".func (rets) name (params)") to the module. Device
// functions are declared at the top of the module text, so any function may call
// any other whatever the order they are created in.
func (m *Module) Func(name string, rets []Param, params ...Param) *Func {
	f := &Func{m: m, name: name, params: params, rets: rets}
	m.addFunc(f)
	return f
}

// Lookup returns the function named name, or nil.
func (m *Module) Lookup(name string) *Func { return m.byName[name] }

func (m *Module) addFunc(f *Func) {
	if m.byName[f.name] != nil || m.varSeen[f.name] {
		panic("ptx: duplicate name " + f.name)
	}
	m.byName[f.name] = f
	m.funcs = append(m.funcs, f)
}

// Name returns the function's name.
func (f *Func) Name() string { return f.name }

// Module returns the module f belongs to.
func (f *Func) Module() *Module { return f.m }

// Params returns f's parameters.
func (f *Func) Params() []Param { return f.params }

// Attr adds a performance directive written after the parameter list, such as
// ".maxntid 256, 1, 1" or ".minnctapersm 2".
func (f *Func) Attr(directive string) { f.attrs = append(f.attrs, directive) }

// HasVar reports whether the module already declares a module-scope variable name.
func (m *Module) HasVar(name string) bool { return m.varSeen[name] }

// Var declares a module-scope variable: ".space .align A .type name[count] = {init};".
// count 0 declares a scalar; init (bit patterns, written as unsigned integers) may be
// nil. Declaring the same name twice panics; use HasVar to share a table.
func (m *Module) Var(space Space, name string, t Type, align, count int, init []uint64) {
	if m.varSeen[name] || m.byName[name] != nil {
		panic("ptx: duplicate name " + name)
	}
	m.varSeen[name] = true
	var b strings.Builder
	b.WriteString(space.String())
	if align > 0 {
		fmt.Fprintf(&b, " .align %d", align)
	}
	b.WriteString(" " + t.String() + " " + name)
	if count > 0 {
		fmt.Fprintf(&b, "[%d]", count)
	}
	if len(init) > 0 {
		b.WriteString(" = {")
		for i, v := range init {
			if i > 0 {
				b.WriteString(", ")
			}
			if i%8 == 0 && len(init) > 8 {
				b.WriteString("\n\t")
			}
			b.WriteString(strconv.FormatUint(v, 10))
		}
		b.WriteString("}")
	}
	b.WriteString(";")
	m.vars = append(m.vars, b.String())
}

// Shared declares a module-scope shared-memory array of count elements of type t:
// ".shared .align A .t name[count];".
func (m *Module) Shared(name string, t Type, align, count int) {
	m.Var(Shared, name, t, align, count, nil)
}

// ExternShared declares the dynamic shared memory of a launch:
// ".extern .shared .align A .b8 name[];". Its size is given at launch time.
func (m *Module) ExternShared(name string, align int) {
	if m.varSeen[name] || m.byName[name] != nil {
		panic("ptx: duplicate name " + name)
	}
	m.varSeen[name] = true
	m.vars = append(m.vars, fmt.Sprintf(".extern .shared .align %d .b8 %s[];", align, name))
}

// Shared declares a shared-memory array in f's scope.
func (f *Func) Shared(name string, t Type, align, count int) {
	f.prologue = fmt.Appendf(f.prologue, "\t.shared .align %d %s %s[%d];\n", align, t, name, count)
}

// String returns the module's PTX text.
func (m *Module) String() string { return string(m.Bytes()) }

// Bytes returns the module's PTX text, NUL-free, ready for cuModuleLoadData
// (append a 0 byte for the C API).
func (m *Module) Bytes() []byte {
	var b []byte
	b = append(b, "//\n// Generated by github.com/go-gpu/gpu/ptx\n//\n\n"...)
	b = append(b, ".version "+m.Version+"\n"...)
	b = append(b, ".target "+m.Target+"\n"...)
	b = append(b, ".address_size "+strconv.Itoa(m.AddressSize)+"\n\n"...)
	// Prototypes of device functions, so calls may precede definitions.
	nproto := 0
	for _, f := range m.funcs {
		if !f.kernel {
			b = f.appendHeader(b)
			b = append(b, ";\n"...)
			nproto++
		}
	}
	if nproto > 0 {
		b = append(b, '\n')
	}
	for _, v := range m.vars {
		b = append(b, v...)
		b = append(b, '\n')
	}
	if len(m.vars) > 0 {
		b = append(b, '\n')
	}
	for _, f := range m.funcs {
		b = f.appendText(b)
		b = append(b, '\n')
	}
	return b
}

func (f *Func) appendHeader(b []byte) []byte {
	if f.kernel {
		b = append(b, f.linkage+".entry "...)
	} else {
		b = append(b, ".func "...)
		if len(f.rets) > 0 {
			b = append(b, '(')
			for i, p := range f.rets {
				if i > 0 {
					b = append(b, ", "...)
				}
				b = append(b, p.decl()...)
			}
			b = append(b, ") "...)
		}
	}
	b = append(b, f.name...)
	b = append(b, '(')
	for i, p := range f.params {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n\t"...)
		b = append(b, p.decl()...)
	}
	if len(f.params) > 0 {
		b = append(b, '\n')
	}
	b = append(b, ')')
	return b
}

func (f *Func) appendText(b []byte) []byte {
	b = f.appendHeader(b)
	b = append(b, '\n')
	for _, a := range f.attrs {
		b = append(b, a...)
		b = append(b, '\n')
	}
	b = append(b, "{\n"...)
	b = append(b, f.prologue...)
	for p := pool(0); p < numPools; p++ {
		if n := f.nreg[p]; n > 0 {
			b = append(b, "\t.reg "...)
			b = append(b, poolDecl[p]...)
			b = append(b, ' ')
			b = append(b, poolPrefix[p]...)
			b = append(b, '<')
			b = strconv.AppendInt(b, int64(n+1), 10)
			b = append(b, ">;\n"...)
		}
	}
	b = append(b, '\n')
	b = append(b, f.body...)
	if !f.endsInReturn() {
		b = append(b, "\tret;\n"...)
	}
	b = append(b, "}\n"...)
	return b
}

func (f *Func) endsInReturn() bool {
	s := strings.TrimRight(string(f.body), "\n")
	i := strings.LastIndexByte(s, '\n')
	last := strings.TrimSpace(s[i+1:])
	return last == "ret;" || last == "exit;"
}

// pool is a register class: one ".reg" declaration per class.
type pool uint8

const (
	poolPred pool = iota
	poolB16
	poolB32
	poolB64
	poolF32
	poolF64
	numPools
)

var poolPrefix = [numPools]string{"%p", "%rs", "%r", "%rd", "%f", "%fd"}
var poolDecl = [numPools]string{".pred", ".b16", ".b32", ".b64", ".f32", ".f64"}

func poolOf(t Type) pool {
	switch t {
	case Pred:
		return poolPred
	case F32:
		return poolF32
	case F64:
		return poolF64
	}
	switch t.Bits() {
	case 8, 16:
		return poolB16
	case 32:
		return poolB32
	case 64:
		return poolB64
	}
	panic("ptx: no register class for type " + t.String())
}

// Reg is a virtual register of a Func. Its Type is the type it was allocated with;
// registers of the same width share a pool (.s32 and .u32 are both %r), and PTX lets an
// instruction of any type of that width use them.
type Reg struct {
	t Type
	n uint32
}

// Type returns the type r was allocated with.
func (r Reg) Type() Type { return r.t }

// Valid reports whether r was allocated (the zero Reg is not).
func (r Reg) Valid() bool { return r.n != 0 }

// String returns the register's name ("%f3").
func (r Reg) String() string { return poolPrefix[poolOf(r.t)] + strconv.Itoa(int(r.n)) }

// As returns r viewed as type t of the same width, to use it with instructions of
// another type (a .f32 register as .b32 is done by PTX itself; this only changes what
// the helpers infer). It panics if the widths differ.
func (r Reg) As(t Type) Reg {
	if poolOf(t) != poolOf(r.t) {
		panic("ptx: Reg.As " + r.t.String() + " to " + t.String() + " changes the register class")
	}
	return Reg{t, r.n}
}

func (r Reg) appendTo(b []byte) []byte {
	b = append(b, poolPrefix[poolOf(r.t)]...)
	return strconv.AppendUint(b, uint64(r.n), 10)
}

// Reg allocates a new register of type t.
func (f *Func) Reg(t Type) Reg {
	p := poolOf(t)
	f.nreg[p]++
	return Reg{t, uint32(f.nreg[p])}
}

// Regs allocates n registers of type t.
func (f *Func) Regs(t Type, n int) []Reg {
	r := make([]Reg, n)
	for i := range r {
		r[i] = f.Reg(t)
	}
	return r
}

// Operand is an instruction operand: a Reg, an immediate (Int, Uint, ImmF32, ImmF64), an
// address (Addr), a vector ({%f1, %f2}: Vec), a symbol (Sym), a Label or a SReg.
type Operand interface {
	appendTo(b []byte) []byte
}

// Int is a signed integer immediate.
type Int int64

func (i Int) appendTo(b []byte) []byte { return strconv.AppendInt(b, int64(i), 10) }

// Uint is an unsigned integer immediate, written in hexadecimal.
type Uint uint64

func (u Uint) appendTo(b []byte) []byte {
	b = append(b, "0x"...)
	b = strconv.AppendUint(b, uint64(u), 16)
	return b
}

// ImmF32 is a single-precision immediate, written exactly as 0fXXXXXXXX.
type ImmF32 float32

func (x ImmF32) appendTo(b []byte) []byte {
	return fmt.Appendf(b, "0f%08X", math.Float32bits(float32(x)))
}

// ImmF64 is a double-precision immediate, written exactly as 0dXXXXXXXXXXXXXXXX.
type ImmF64 float64

func (x ImmF64) appendTo(b []byte) []byte {
	return fmt.Appendf(b, "0d%016X", math.Float64bits(float64(x)))
}

// Sym is the name of a variable, function or parameter, used as an operand (for
// example "mov.u64 %rd1, table;").
type Sym string

func (s Sym) appendTo(b []byte) []byte { return append(b, s...) }

// Addr is a memory operand: [Base+Off]. Base is a Reg (a 64-bit address, or 32-bit for
// shared memory) or a Sym.
type Addr struct {
	Base Operand
	Off  int64
}

// Mem returns the address [base+off].
func Mem(base Operand, off int64) Addr { return Addr{base, off} }

func (a Addr) appendTo(b []byte) []byte {
	b = append(b, '[')
	b = a.Base.appendTo(b)
	if a.Off > 0 {
		b = append(b, '+')
		b = strconv.AppendInt(b, a.Off, 10)
	} else if a.Off < 0 {
		b = strconv.AppendInt(b, a.Off, 10)
	}
	return append(b, ']')
}

// Vec is a vector operand {%f1, %f2, %f3, %f4} for .v2/.v4 loads and stores.
type Vec []Reg

func (v Vec) appendTo(b []byte) []byte {
	b = append(b, '{')
	for i, r := range v {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = r.appendTo(b)
	}
	return append(b, '}')
}

// Label is a branch target in a Func, from NewLabel.
type Label struct{ n int }

func (l Label) appendTo(b []byte) []byte {
	b = append(b, "$L__"...)
	return strconv.AppendInt(b, int64(l.n), 10)
}

// String returns the label's name.
func (l Label) String() string { return string(l.appendTo(nil)) }

// NewLabel returns a new label of f, to be placed with Place.
func (f *Func) NewLabel() Label {
	f.nlabel++
	return Label{f.nlabel}
}

// Place puts label l at the current position.
func (f *Func) Place(l Label) {
	f.body = l.appendTo(f.body)
	f.body = append(f.body, ":\n"...)
}

// Op appends the instruction "op a, b, c;". The opcode is written as given, with all its
// modifiers ("fma.rn.f32", "ld.global.nc.v4.f32").
func (f *Func) Op(op string, args ...Operand) {
	f.body = append(f.body, '\t')
	f.body = appendInstr(f.body, op, args)
}

func appendInstr(b []byte, op string, args []Operand) []byte {
	b = append(b, op...)
	for i, a := range args {
		if i == 0 {
			b = append(b, ' ')
		} else {
			b = append(b, ", "...)
		}
		b = a.appendTo(b)
	}
	return append(b, ";\n"...)
}

// Guard is an instruction guard: a predicate register, possibly negated ("@%p1", "@!%p1").
type Guard struct {
	f   *Func
	p   Reg
	neg bool
}

// At returns a guard that makes the next instruction conditional on p being true.
func (f *Func) At(p Reg) Guard { return Guard{f, p, false} }

// AtNot returns a guard that makes the next instruction conditional on p being false.
func (f *Func) AtNot(p Reg) Guard { return Guard{f, p, true} }

// Op appends "@p op args;".
func (g Guard) Op(op string, args ...Operand) {
	f := g.f
	f.body = append(f.body, "\t@"...)
	if g.neg {
		f.body = append(f.body, '!')
	}
	f.body = g.p.appendTo(f.body)
	f.body = append(f.body, ' ')
	f.body = appendInstr(f.body, op, args)
}

// Bra appends "@p bra l;".
func (g Guard) Bra(l Label) { g.Op("bra", l) }

// Bra appends an unconditional branch to l.
func (f *Func) Bra(l Label) { f.Op("bra.uni", l) }

// Ret appends "ret;".
func (f *Func) Ret() { f.Op("ret") }

// Comment appends a "// text" line.
func (f *Func) Comment(text string) {
	for _, line := range strings.Split(text, "\n") {
		f.body = append(f.body, "\t// "...)
		f.body = append(f.body, line...)
		f.body = append(f.body, '\n')
	}
}

// Raw appends text verbatim (one or more complete lines).
func (f *Func) Raw(text string) {
	f.body = append(f.body, text...)
	if !strings.HasSuffix(text, "\n") {
		f.body = append(f.body, '\n')
	}
}
