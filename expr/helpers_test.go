package expr

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// toSlice returns a typed slice of type t holding vs (each of type t).
func toSlice(t dtype.DType, vs []Scalar) any {
	n := len(vs)
	switch t {
	case dtype.Bool:
		s := make([]bool, n)
		for i, v := range vs {
			s[i] = v.bits != 0
		}
		return s
	case dtype.Int8:
		s := make([]int8, n)
		for i, v := range vs {
			s[i] = int8(v.bits)
		}
		return s
	case dtype.Int16:
		s := make([]int16, n)
		for i, v := range vs {
			s[i] = int16(v.bits)
		}
		return s
	case dtype.Int32:
		s := make([]int32, n)
		for i, v := range vs {
			s[i] = int32(v.bits)
		}
		return s
	case dtype.Int64:
		s := make([]int64, n)
		for i, v := range vs {
			s[i] = int64(v.bits)
		}
		return s
	case dtype.Uint8:
		s := make([]uint8, n)
		for i, v := range vs {
			s[i] = uint8(v.bits)
		}
		return s
	case dtype.Uint16, dtype.Float16, dtype.BFloat16:
		s := make([]uint16, n)
		for i, v := range vs {
			s[i] = uint16(v.bits)
		}
		return s
	case dtype.Uint32:
		s := make([]uint32, n)
		for i, v := range vs {
			s[i] = uint32(v.bits)
		}
		return s
	case dtype.Uint64:
		s := make([]uint64, n)
		for i, v := range vs {
			s[i] = v.bits
		}
		return s
	case dtype.Float32:
		s := make([]float32, n)
		for i, v := range vs {
			s[i] = math.Float32frombits(uint32(v.bits))
		}
		return s
	case dtype.Float64:
		s := make([]float64, n)
		for i, v := range vs {
			s[i] = math.Float64frombits(v.bits)
		}
		return s
	}
	panic("bad type")
}

// fromSlice returns element i of a slice made by toSlice.
func fromSlice(t dtype.DType, s any, i int) Scalar {
	var b uint64
	switch s := s.(type) {
	case []bool:
		if s[i] {
			b = 1
		}
	case []int8:
		b = uint64(uint8(s[i]))
	case []int16:
		b = uint64(uint16(s[i]))
	case []int32:
		b = uint64(uint32(s[i]))
	case []int64:
		b = uint64(s[i])
	case []uint8:
		b = uint64(s[i])
	case []uint16:
		b = uint64(s[i])
	case []uint32:
		b = uint64(s[i])
	case []uint64:
		b = s[i]
	case []float32:
		b = uint64(math.Float32bits(s[i]))
	case []float64:
		b = math.Float64bits(s[i])
	}
	return ScalarFromBits(t, b)
}

// sameValue reports whether a and b are the same value: equal bits, or both NaN.
func sameValue(a, b Scalar) bool {
	if a.t != b.t {
		return false
	}
	if a.bits == b.bits {
		return true
	}
	return a.t.IsFloat() && math.IsNaN(a.Float64()) && math.IsNaN(b.Float64())
}

// roundTo rounds a float64 to float type t (once).
func roundTo(t dtype.DType, f float64) Scalar {
	switch t {
	case dtype.Float16:
		return ScalarFromBits(t, uint64(dtype.Float16FromFloat64(f)))
	case dtype.BFloat16:
		return ScalarFromBits(t, uint64(dtype.BFloat16FromFloat64(f)))
	case dtype.Float32:
		return ScalarOf(float32(f))
	}
	return ScalarOf(f)
}

// fromFloat makes a Scalar of float type t from a value exactly representable in it.
func fromFloat(t dtype.DType, f float64) Scalar { return roundTo(t, f) }

// fromInt makes a Scalar of integer or bool type t from v (wrapping).
func fromInt(t dtype.DType, v int64) Scalar { return ScalarFromBits(t, uint64(v)) }

// specials returns interesting values of type t, then random ones, n in all (at least
// the specials).
func specials(t dtype.DType, n int, r *rand.Rand) []Scalar {
	var vs []Scalar
	switch {
	case t == dtype.Bool:
		vs = []Scalar{ScalarOf(false), ScalarOf(true)}
	case t.IsInteger():
		w := t.Bits()
		var lo, hi int64
		if t.IsSigned() {
			lo, hi = -1<<(w-1), 1<<(w-1)-1
		} else {
			hi = int64(uint64(1)<<w - 1) // -1 for uint64: all ones
		}
		for _, v := range []int64{0, 1, -1, 2, -2, 3, 7, -7, 10, 100, lo, hi, lo + 1, hi - 1, int64(w - 1), int64(w), int64(w + 1), 63, 64} {
			vs = append(vs, fromInt(t, v))
		}
		for len(vs) < n {
			b := r.Uint64()
			if r.IntN(2) == 0 {
				b >>= uint(r.IntN(64))
			}
			vs = append(vs, ScalarFromBits(t, b))
		}
		return vs
	default:
		for _, f := range []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1.5, 2.5, -2.5, 3, 0.1, 1e-3,
			7, -7, 2, 100, 1e10, -1e10, 65504, 1 << 31, 1 << 63, 1.8e19, 300.7, -300.7, 1e-30,
			5.960464477539063e-08, 1e300, -1e300, 4.9e-324, math.MaxFloat64, math.Inf(1), math.Inf(-1), math.NaN()} {
			vs = append(vs, roundTo(t, f))
		}
	}
	for len(vs) < n {
		var s Scalar
		switch t {
		case dtype.Float16, dtype.BFloat16:
			s = ScalarFromBits(t, r.Uint64())
		case dtype.Float32:
			if r.IntN(2) == 0 {
				s = ScalarFromBits(t, r.Uint64())
			} else {
				s = ScalarOf(float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-4))))
			}
		case dtype.Float64:
			if r.IntN(2) == 0 {
				s = ScalarFromBits(t, r.Uint64())
			} else {
				s = ScalarOf(r.NormFloat64() * math.Pow(10, float64(r.IntN(8)-4)))
			}
		default:
			s = ScalarFromBits(t, r.Uint64())
		}
		vs = append(vs, s)
	}
	return vs
}

// refBinary is an independent reference for Binary on operation type t (for float16 and
// bfloat16, the operation rounded once from the exact result, which the float32 path
// must equal for these operators).
func refBinary(op BinaryOp, t dtype.DType, a, b Scalar) Scalar {
	switch {
	case t == dtype.Bool:
		x, y := a.bits, b.bits
		var r bool
		switch op {
		case And:
			r = x&y == 1
		case Or:
			r = x|y == 1
		case Xor, Ne:
			r = x != y
		case Eq:
			r = x == y
		case Lt:
			r = x < y
		case Le:
			r = x <= y
		case Gt:
			r = x > y
		case Ge:
			r = x >= y
		}
		return ScalarOf(r)
	case t.IsFloat():
		x, y := a.Float64(), b.Float64()
		var r float64
		switch op {
		case Add:
			r = x + y
		case Sub:
			r = x - y
		case Mul:
			r = x * y
		case Div:
			r = x / y
		case Rem:
			r = math.Mod(x, y)
		case Eq:
			return ScalarOf(x == y)
		case Ne:
			return ScalarOf(x != y)
		case Lt:
			return ScalarOf(x < y)
		case Le:
			return ScalarOf(x <= y)
		case Gt:
			return ScalarOf(x > y)
		case Ge:
			return ScalarOf(x >= y)
		}
		return roundTo(t, r)
	case t.IsSigned():
		x, y := a.Int64(), b.Int64()
		w := uint64(t.Bits())
		count := b.bits // the count's bits, unsigned
		var r int64
		switch op {
		case Add:
			r = x + y
		case Sub:
			r = x - y
		case Mul:
			r = x * y
		case Div:
			if y != 0 {
				r = x / y
			}
		case Rem:
			if y != 0 {
				r = x % y
			}
		case And:
			r = x & y
		case Or:
			r = x | y
		case Xor:
			r = x ^ y
		case Shl:
			if count < w {
				r = x << count
			}
		case Shr:
			if count < w {
				r = x >> count
			} else if x < 0 {
				r = -1
			}
		case Eq:
			return ScalarOf(x == y)
		case Ne:
			return ScalarOf(x != y)
		case Lt:
			return ScalarOf(x < y)
		case Le:
			return ScalarOf(x <= y)
		case Gt:
			return ScalarOf(x > y)
		case Ge:
			return ScalarOf(x >= y)
		}
		return fromInt(t, r)
	default:
		x, y := a.bits, b.bits
		w := uint64(t.Bits())
		var r uint64
		switch op {
		case Add:
			r = x + y
		case Sub:
			r = x - y
		case Mul:
			r = x * y
		case Div:
			if y != 0 {
				r = x / y
			}
		case Rem:
			if y != 0 {
				r = x % y
			}
		case And:
			r = x & y
		case Or:
			r = x | y
		case Xor:
			r = x ^ y
		case Shl:
			if y < w {
				r = x << y
			}
		case Shr:
			if y < w {
				r = x >> y
			}
		case Eq:
			return ScalarOf(x == y)
		case Ne:
			return ScalarOf(x != y)
		case Lt:
			return ScalarOf(x < y)
		case Le:
			return ScalarOf(x <= y)
		case Gt:
			return ScalarOf(x > y)
		case Ge:
			return ScalarOf(x >= y)
		}
		return ScalarFromBits(t, r)
	}
}

// refMath is the reference of a floating-point Func on float64 values (the semantics:
// Go's math package in float64).
func refMath(f Func, x, y float64) float64 {
	switch f {
	case Abs:
		return math.Abs(x)
	case Sqrt:
		return math.Sqrt(x)
	case Cbrt:
		return math.Cbrt(x)
	case Exp:
		return math.Exp(x)
	case Exp2:
		return math.Exp2(x)
	case Expm1:
		return math.Expm1(x)
	case Log:
		return math.Log(x)
	case Log2:
		return math.Log2(x)
	case Log10:
		return math.Log10(x)
	case Log1p:
		return math.Log1p(x)
	case Sin:
		return math.Sin(x)
	case Cos:
		return math.Cos(x)
	case Tan:
		return math.Tan(x)
	case Asin:
		return math.Asin(x)
	case Acos:
		return math.Acos(x)
	case Atan:
		return math.Atan(x)
	case Atan2:
		return math.Atan2(x, y)
	case Sinh:
		return math.Sinh(x)
	case Cosh:
		return math.Cosh(x)
	case Tanh:
		return math.Tanh(x)
	case Asinh:
		return math.Asinh(x)
	case Acosh:
		return math.Acosh(x)
	case Atanh:
		return math.Atanh(x)
	case Pow:
		return math.Pow(x, y)
	case Hypot:
		return math.Hypot(x, y)
	case Minimum, Maximum, Fmin, Fmax:
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		if xn || yn {
			switch {
			case f == Minimum || f == Maximum || (xn && yn):
				return math.NaN()
			case xn:
				return y
			default:
				return x
			}
		}
		lower := x < y || (x == y && math.Signbit(x))
		if (f == Minimum || f == Fmin) == lower {
			return x
		}
		return y
	case Floor:
		return math.Floor(x)
	case Ceil:
		return math.Ceil(x)
	case Trunc:
		return math.Trunc(x)
	case Rint:
		return math.RoundToEven(x)
	case Sign:
		switch {
		case math.IsNaN(x):
			return x
		case x > 0:
			return 1
		case x < 0:
			return -1
		}
		return 0
	case Copysign:
		return math.Copysign(x, y)
	case Square:
		return x * x
	case Reciprocal:
		return 1 / x
	case Erf:
		return math.Erf(x)
	}
	panic("refMath: " + f.String())
}

// refPredicate is the reference of IsNaN, IsInf, IsFinite, Signbit.
func refPredicate(f Func, x float64) bool {
	switch f {
	case IsNaN:
		return math.IsNaN(x)
	case IsInf:
		return math.IsInf(x, 0)
	case IsFinite:
		return !math.IsNaN(x) && !math.IsInf(x, 0)
	}
	return math.Signbit(x)
}

// refIntFunc is the reference of Abs, Sign, Square, Reciprocal, Pow, Minimum, Maximum
// on integer type t, computed with math/big modulo 2^64 and wrapped to t.
func refIntFunc(f Func, t dtype.DType, a, b Scalar) Scalar {
	signed := t.IsSigned()
	val := func(s Scalar) *big.Int {
		if signed {
			return big.NewInt(s.Int64())
		}
		return new(big.Int).SetUint64(s.bits)
	}
	wrap := func(z *big.Int) Scalar {
		m := new(big.Int).Lsh(big.NewInt(1), 64)
		z = new(big.Int).Mod(z, m)
		return ScalarFromBits(t, z.Uint64())
	}
	x, y := val(a), val(b)
	switch f {
	case Abs:
		return wrap(new(big.Int).Abs(x))
	case Sign:
		return wrap(big.NewInt(int64(x.Sign())))
	case Square:
		return wrap(new(big.Int).Mul(x, x))
	case Reciprocal:
		if x.Sign() == 0 {
			return wrap(x)
		}
		return wrap(new(big.Int).Quo(big.NewInt(1), x))
	case Minimum:
		if x.Cmp(y) <= 0 {
			return a
		}
		return b
	case Maximum:
		if x.Cmp(y) >= 0 {
			return a
		}
		return b
	case Pow:
		if y.Sign() < 0 {
			switch {
			case x.Cmp(big.NewInt(1)) == 0:
				return wrap(big.NewInt(1))
			case x.Cmp(big.NewInt(-1)) == 0:
				if y.Bit(0) == 0 {
					return wrap(big.NewInt(1))
				}
				return wrap(big.NewInt(-1))
			}
			return wrap(big.NewInt(0))
		}
		m := new(big.Int).Lsh(big.NewInt(1), 64)
		base := new(big.Int).Mod(x, m)
		return wrap(new(big.Int).Exp(base, y, m))
	}
	panic("refIntFunc: " + f.String())
}

// refCast is an independent reference for Cast from a's type to t.
func refCast(a Scalar, t dtype.DType) Scalar {
	from := a.t
	switch {
	case t == dtype.Bool:
		if from.IsFloat() {
			f := a.Float64()
			return ScalarOf(f != 0)
		}
		return ScalarOf(a.bits != 0)
	case from == dtype.Bool:
		if t.IsFloat() {
			return roundTo(t, float64(a.bits))
		}
		return ScalarFromBits(t, a.bits)
	case from.IsFloat() && t.IsFloat():
		f := a.Float64()
		return roundTo(t, f) // float64 holds every source value exactly
	case from.IsFloat():
		f := a.Float64()
		if math.IsNaN(f) {
			return ScalarFromBits(t, 0)
		}
		tr := new(big.Float).SetPrec(0)
		if math.IsInf(f, 0) {
			tr = nil
		} else {
			tr.SetFloat64(math.Trunc(f))
		}
		w := uint(t.Bits())
		lo, hi := new(big.Int), new(big.Int)
		if t.IsSigned() {
			lo.Neg(new(big.Int).Lsh(big.NewInt(1), w-1))
			hi.Sub(new(big.Int).Lsh(big.NewInt(1), w-1), big.NewInt(1))
		} else {
			hi.Sub(new(big.Int).Lsh(big.NewInt(1), w), big.NewInt(1))
		}
		var v *big.Int
		switch {
		case math.IsInf(f, 1):
			v = hi
		case math.IsInf(f, -1):
			v = lo
		default:
			v, _ = tr.Int(nil)
			if v.Cmp(lo) < 0 {
				v = lo
			}
			if v.Cmp(hi) > 0 {
				v = hi
			}
		}
		if v.Sign() < 0 {
			return ScalarFromBits(t, uint64(v.Int64()))
		}
		return ScalarFromBits(t, v.Uint64())
	case t.IsFloat(): // integer to float: round the exact value once
		v := new(big.Float)
		if from.IsSigned() {
			v.SetInt64(a.Int64())
		} else {
			v.SetUint64(a.bits)
		}
		prec := map[dtype.DType]uint{dtype.Float16: 11, dtype.BFloat16: 8, dtype.Float32: 24, dtype.Float64: 53}[t]
		v.SetMode(big.ToNearestEven).SetPrec(prec)
		f, _ := v.Float64() // exact: at most 53 bits, in range
		return roundTo(t, f)
	}
	// integer to integer: wrap
	if from.IsSigned() {
		return ScalarFromBits(t, uint64(a.Int64()))
	}
	return ScalarFromBits(t, a.bits)
}

// evalExpr parses and evaluates src with the given environment over inputs (slices), and
// returns the result elements as Scalars.
func evalExpr(t *testing.T, src string, env Env, inputs []any, params []any, n int) (*Expr, []Scalar) {
	t.Helper()
	e, err := Parse(src, env)
	if err != nil {
		t.Fatalf("Parse(%q): %v", src, err)
	}
	p, err := e.Compile()
	if err != nil {
		t.Fatalf("Compile(%q): %v", src, err)
	}
	out := toSlice(e.DType(), make([]Scalar, n))
	if err := p.Eval(out, inputs, params); err != nil {
		t.Fatalf("Eval(%q): %v", src, err)
	}
	res := make([]Scalar, n)
	for i := range res {
		res[i] = fromSlice(e.DType(), out, i)
	}
	return e, res
}
