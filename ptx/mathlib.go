package ptx

import "fmt"

// MathFn names a function of the device math library.
type MathFn uint8

// The math functions, in the order of the brief's priorities. Not every function exists
// for both float32 and float64: see Supports.
const (
	Exp MathFn = iota + 1
	Exp2
	Expm1
	Log
	Log2
	Log10
	Log1p
	Sin
	Cos
	Tan
	Asin
	Acos
	Atan
	Atan2
	Sinh
	Cosh
	Tanh
	Asinh
	Acosh
	Atanh
	Pow
	Cbrt
	Hypot
	Erf
	Fmod
	numMathFns
)

var mathNames = [numMathFns]string{Exp: "Exp", Exp2: "Exp2", Expm1: "Expm1", Log: "Log", Log2: "Log2",
	Log10: "Log10", Log1p: "Log1p", Sin: "Sin", Cos: "Cos", Tan: "Tan", Asin: "Asin", Acos: "Acos",
	Atan: "Atan", Atan2: "Atan2", Sinh: "Sinh", Cosh: "Cosh", Tanh: "Tanh", Asinh: "Asinh",
	Acosh: "Acosh", Atanh: "Atanh", Pow: "Pow", Cbrt: "Cbrt", Hypot: "Hypot", Erf: "Erf", Fmod: "Fmod"}

// String returns the function's name ("Exp").
func (fn MathFn) String() string {
	if fn > 0 && fn < numMathFns {
		return mathNames[fn]
	}
	return fmt.Sprintf("MathFn(%d)", uint8(fn))
}

// NumArgs returns the number of arguments of fn (2 for Atan2, Pow, Hypot, Fmod).
func (fn MathFn) NumArgs() int {
	switch fn {
	case Atan2, Pow, Hypot, Fmod:
		return 2
	}
	return 1
}

// mathImpl builds the IR of one function for one float type.
type mathImpl func(b *mb, t vtype, x []val) val

// mathImpls[fn][0] is the float32 version, [1] the float64 one.
var mathImpls [numMathFns][2]mathImpl

func register(fn MathFn, f32, f64 mathImpl) { mathImpls[fn] = [2]mathImpl{f32, f64} }

func implIndex(t Type) int {
	switch t {
	case F32:
		return 0
	case F64:
		return 1
	}
	return -1
}

// Supports reports whether the library has fn for type t (F32 or F64).
func (fn MathFn) Supports(t Type) bool {
	i := implIndex(t)
	return fn > 0 && fn < numMathFns && i >= 0 && mathImpls[fn][i] != nil
}

// MathFns lists the functions the library has for type t.
func MathFns(t Type) []MathFn {
	var l []MathFn
	for fn := MathFn(1); fn < numMathFns; fn++ {
		if fn.Supports(t) {
			l = append(l, fn)
		}
	}
	return l
}

// buildMath returns the IR of fn for type t.
func buildMath(fn MathFn, t Type) *mb {
	if !fn.Supports(t) {
		panic("ptx: no " + fn.String() + " for " + t.String())
	}
	vt := tF32
	if t == F64 {
		vt = tF64
	}
	b := newMB()
	args := make([]val, fn.NumArgs())
	for i := range args {
		args[i] = b.arg(vt)
	}
	return b.finish(mathImpls[fn][implIndex(t)](b, vt, args))
}

// Math appends inline code computing fn(args...) and returns the register holding the
// result. The arguments must all be F32 or all F64 registers; the code is the same
// sequence of IEEE operations as the Go mirror in package gomath (Exp32, Exp64, ...),
// so the result is bit-identical to it. Rare cases (huge arguments, subnormals, special
// values) are handled in branches inside the inlined code. Tables the function needs
// are declared in f's module once.
func (f *Func) Math(fn MathFn, args ...Reg) Reg {
	if len(args) != fn.NumArgs() {
		panic(fmt.Sprintf("ptx: %v takes %d arguments, got %d", fn, fn.NumArgs(), len(args)))
	}
	t := args[0].Type()
	for _, a := range args {
		if a.Type() != t {
			panic("ptx: Math arguments of different types")
		}
	}
	return lowerPTX(f, buildMath(fn, t), args)
}

// MathFuncName returns the name of the device function MathFunc defines for fn and t
// ("__gpumath_exp_f32").
func MathFuncName(fn MathFn, t Type) string {
	return "__gpumath_" + lower(fn.String()) + "_" + t.String()[1:]
}

func lower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// MathFunc returns a device function (.func) of m computing fn for type t, defining it
// on first use. Calling it (f.Call) gives smaller code than Math when a kernel uses a
// function in many places; Math gives ptxas more room to schedule.
func (m *Module) MathFunc(fn MathFn, t Type) *Func {
	name := MathFuncName(fn, t)
	if g := m.Lookup(name); g != nil {
		return g
	}
	params := make([]Param, fn.NumArgs())
	for i := range params {
		params[i] = P(fmt.Sprintf("%s_p%d", name, i), t)
	}
	g := m.Func(name, []Param{P(name+"_r", t)}, params...)
	args := make([]Reg, len(params))
	for i := range args {
		args[i] = g.LdParam(i)
	}
	r := g.Math(fn, args...)
	g.Return(r)
	return g
}
