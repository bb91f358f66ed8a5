package expr

import (
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// Functions defined in terms of the other operations. FloorDivide and Remainder are not
// computed by kernels of their own: Definition spells out NumPy's rule once, in IR, and
// every evaluator computes that IR (the CPU's Program inlines it, constant folding and
// the CPU kernel of a lone call run it, and the CUDA code generator lowers it in place of
// the call), so the backends cannot disagree on the rule. The IR keeps the call itself,
// so String and Key stay short and a nested call does not repeat its operands.

// Definition returns the IR that computes the call c from c's own argument nodes (which
// the result shares), or nil if c.Func is computed directly (every function but
// FloorDivide and Remainder) or c is not a valid call of it. A code generator lowers
// the definition in place of the call. The argument types must be the call's operation
// type, an integer type, Float32 or Float64, as Validate requires.
func Definition(c *Call) Node {
	if c == nil || len(c.Args) != 2 || (c.Func != FloorDivide && c.Func != Remainder) {
		return nil
	}
	x, y := c.Args[0], c.Args[1]
	t := x.DType()
	if y.DType() != t || c.Type != t {
		return nil
	}
	switch {
	case t.IsSigned():
		return intDivmod(c.Func, t, x, y)
	case t.IsUnsigned():
		op := Div
		if c.Func == Remainder {
			op = Rem
		}
		return &Binary{Op: op, X: x, Y: y, Type: t}
	case t == dtype.Float32 || t == dtype.Float64:
		return floatDivmod(c.Func, t, x, y)
	}
	return nil
}

// defBuilder writes the nodes of a definition.
type defBuilder struct{ t dtype.DType }

func (b defBuilder) bin(op BinaryOp, x, y Node) Node {
	rt := x.DType()
	if op.IsComparison() {
		rt = dtype.Bool
	}
	return &Binary{Op: op, X: x, Y: y, Type: rt}
}

func (b defBuilder) sel(c, x, y Node) Node { return &Select{Cond: c, X: x, Y: y, Type: x.DType()} }

// num is the constant v of the builder's type (v is small and exact in it).
func (b defBuilder) num(v float64) Node {
	if b.t.IsFloat() {
		return &Const{Value: ScalarOf(v).Convert(b.t)}
	}
	return &Const{Value: ScalarFromBits(b.t, uint64(int64(v)))}
}

// intDivmod is floor_divide or remainder of signed integers (NumPy's floor_div and the
// remainder loop of numpy/_core/src/umath/loops_modulo.dispatch.c.src): with Div and Rem
// truncating, x/0 = x%0 = 0 and MinInt/-1 = MinInt, the quotient is one less and the
// remainder y more when the remainder is non-zero with the opposite sign to y.
func intDivmod(f Func, t dtype.DType, x, y Node) Node {
	b := defBuilder{t}
	zero := b.num(0)
	r := b.bin(Rem, x, y)
	adjust := b.bin(And, b.bin(Ne, r, zero), b.bin(Xor, b.bin(Lt, r, zero), b.bin(Lt, y, zero)))
	if f == Remainder {
		return b.sel(adjust, b.bin(Add, r, y), r)
	}
	q := b.bin(Div, x, y)
	return b.sel(adjust, b.bin(Sub, q, b.num(1)), q)
}

// floatDivmod is NumPy's npy_floor_divide or npy_remainder (npy_divmod in
// numpy/_core/src/npymath/npy_math_internal.h.src), step by step:
//
//	mod = fmod(a, b)
//	if b == 0: return a / b (floor_divide) or mod (remainder: NaN)
//	div = (a - mod) / b
//	if mod != 0 (NaN included):
//	    if (b < 0) != (mod < 0): mod += b; div -= 1
//	else: mod = copysign(0, b)
//	if div != 0 (NaN included):
//	    floordiv = floor(div); if div - floordiv > 0.5: floordiv += 1
//	else: floordiv = copysign(0, a / b)
//
// For b == 0 the remainder needs no case of its own: mod is NaN, which is neither
// adjusted (NaN < 0 is false, and so is ±0 < 0) nor zero.
func floatDivmod(f Func, t dtype.DType, a, bb Node) Node {
	b := defBuilder{t}
	zero := b.num(0)
	copysign0 := func(s Node) Node { return &Call{Func: Copysign, Args: []Node{zero, s}, Type: t} }
	mod := b.bin(Rem, a, bb)
	adjust := b.bin(And, b.bin(Ne, mod, zero), b.bin(Xor, b.bin(Lt, bb, zero), b.bin(Lt, mod, zero)))
	if f == Remainder {
		return b.sel(b.bin(Eq, mod, zero), copysign0(bb), b.sel(adjust, b.bin(Add, mod, bb), mod))
	}
	div := b.bin(Div, b.bin(Sub, a, mod), bb)
	div = b.sel(adjust, b.bin(Sub, div, b.num(1)), div)
	fl := &Call{Func: Floor, Args: []Node{div}, Type: t}
	snap := b.sel(b.bin(Gt, b.bin(Sub, div, fl), b.num(0.5)), b.bin(Add, fl, b.num(1)), fl)
	quo := b.bin(Div, a, bb)
	q := b.sel(b.bin(Ne, div, zero), snap, copysign0(quo))
	return b.sel(b.bin(Eq, bb, zero), quo, q)
}

// definedKernels caches the CPU kernels of the defined functions by function and type.
var definedKernels sync.Map // [2]int{Func, DType} -> kernel

// definedKernel returns the CPU kernel of the defined function f on type t (nil if f has
// no definition on t): a Program of the definition over inputs 0 and 1, run on the
// kernel's operands.
func definedKernel(f Func, t dtype.DType) kernel {
	key := [2]int{int(f), int(t)}
	if k, ok := definedKernels.Load(key); ok {
		return k.(kernel)
	}
	x, y := &Input{Slot: 0, Type: t}, &Input{Slot: 1, Type: t}
	def := Definition(&Call{Func: f, Args: []Node{x, y}, Type: t})
	if def == nil {
		return nil
	}
	p, err := compile(def)
	if err != nil {
		return nil
	}
	k := kernel(func(n int, d, a, b, _ unsafe.Pointer) {
		fr := p.getFrame()
		fr.ptr[ptrIn0], fr.ptr[ptrIn0+1] = a, b
		p.run(fr, n, d)
		p.putFrame(fr)
	})
	definedKernels.Store(key, k)
	return k
}
