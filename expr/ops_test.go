package expr

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// pairs returns every pair of the special values of t (cross product), then random
// pairs, as two columns.
func pairs(t dtype.DType, r *rand.Rand) (xs, ys []Scalar) {
	sp := specials(t, 0, r)
	for _, a := range sp {
		for _, b := range sp {
			xs, ys = append(xs, a), append(ys, b)
		}
	}
	rx, ry := specials(t, len(sp)+500, r), specials(t, len(sp)+500, r)
	xs, ys = append(xs, rx[len(sp):]...), append(ys, ry[len(sp):]...)
	return xs, ys
}

var binaryTokensByOp = map[BinaryOp]string{
	Add: "+", Sub: "-", Mul: "*", Div: "/", Rem: "%", And: "&", Or: "|", Xor: "^",
	Shl: "<<", Shr: ">>", Eq: "==", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">=",
}

// binaryValid reports whether op is defined on t.
func binaryValid(op BinaryOp, t dtype.DType) bool {
	switch op {
	case Add, Sub, Mul, Div, Rem:
		return t != dtype.Bool
	case And, Or, Xor:
		return !t.IsFloat()
	case Shl, Shr:
		return t.IsInteger()
	}
	return true
}

// TestBinaryOps checks every binary operator on every element type against refBinary,
// on the cross product of special values plus random values.
func TestBinaryOps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, typ := range dtype.All {
		xs, ys := pairs(typ, r)
		env := Env{"x": OperandDecl(0, typ), "y": OperandDecl(1, typ)}
		in := []any{toSlice(typ, xs), toSlice(typ, ys)}
		for op := Add; op <= Ge; op++ {
			src := "x " + binaryTokensByOp[op] + " y"
			if !binaryValid(op, typ) {
				if _, err := Parse(src, env); err == nil {
					t.Errorf("%v: Parse(%q) succeeded, want an error", typ, src)
				}
				continue
			}
			e, got := evalExpr(t, src, env, in, nil, len(xs))
			want := typ
			if op.IsComparison() {
				want = dtype.Bool
			}
			if e.DType() != want {
				t.Fatalf("%v: %q has type %v, want %v", typ, src, e.DType(), want)
			}
			bad := 0
			for i := range xs {
				w := refBinary(op, typ, xs[i], ys[i])
				if !sameValue(got[i], w) {
					if bad++; bad <= 3 {
						t.Errorf("%v: %v %s %v = %v, want %v", typ, xs[i], binaryTokensByOp[op], ys[i], got[i], w)
					}
				}
			}
		}
	}
}

func TestUnaryOps(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, typ := range dtype.All {
		xs := specials(typ, 600, r)
		env := Env{"x": OperandDecl(0, typ)}
		in := []any{toSlice(typ, xs)}
		for _, op := range []string{"-", "+", "!", "^"} {
			src := op + "x"
			valid := map[string]bool{"-": typ != dtype.Bool, "+": typ != dtype.Bool, "!": typ == dtype.Bool, "^": !typ.IsFloat()}[op]
			if !valid {
				if _, err := Parse(src, env); err == nil {
					t.Errorf("%v: Parse(%q) succeeded, want an error", typ, src)
				}
				continue
			}
			e, got := evalExpr(t, src, env, in, nil, len(xs))
			if e.DType() != typ {
				t.Fatalf("%v: %q has type %v", typ, src, e.DType())
			}
			for i, x := range xs {
				var w Scalar
				switch {
				case op == "+":
					w = x
				case op == "-" && typ.IsFloat():
					w = roundTo(typ, -x.Float64())
				case op == "-":
					w = fromInt(typ, -x.Int64())
				case typ == dtype.Bool:
					w = ScalarOf(x.bits == 0)
				default:
					w = ScalarFromBits(typ, ^x.bits)
				}
				if !sameValue(got[i], w) {
					t.Fatalf("%v: %s%v = %v, want %v", typ, op, x, got[i], w)
				}
				if op == "-" && typ.IsFloat() && math.Signbit(got[i].Float64()) == math.Signbit(x.Float64()) {
					t.Fatalf("%v: -%v = %v kept the sign", typ, x, got[i])
				}
			}
		}
	}
}

// funcNames lists every function name of the language with its arity.
var funcNames = map[string]int{
	"abs": 1, "sqrt": 1, "cbrt": 1, "exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1,
	"log10": 1, "log1p": 1, "sin": 1, "cos": 1, "tan": 1, "asin": 1, "acos": 1, "atan": 1,
	"atan2": 2, "sinh": 1, "cosh": 1, "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1,
	"pow": 2, "power": 2, "hypot": 2, "minimum": 2, "maximum": 2, "fmin": 2, "fmax": 2,
	"floor": 1, "ceil": 1, "trunc": 1, "rint": 1, "round": 1, "sign": 1, "isnan": 1,
	"isinf": 1, "isfinite": 1, "signbit": 1, "copysign": 2, "fmod": 2, "square": 1,
	"reciprocal": 1, "erf": 1, "floor_divide": 2, "remainder": 2, "mod": 2,
}

// funcOf maps a language name to the IR function computing it on floats.
var funcOf = map[string]Func{
	"power": Pow, "round": Rint, "fmod": 0, "mod": Remainder,
}

// TestFunctions checks every function on every element type: the result type by NumPy's
// rules, and the values against the math package in float64 (floats), math/big (integer
// functions) or the documented identities.
func TestFunctions(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 3))
	for name, nargs := range funcNames {
		f, ok := funcOf[name]
		if !ok {
			for g := Func(1); g < numFuncs; g++ {
				if g.String() == name {
					f = g
				}
			}
		}
		for _, typ := range dtype.All {
			t.Run(fmt.Sprintf("%s/%v", name, typ), func(t *testing.T) {
				testFunction(t, r, name, f, nargs, typ)
			})
		}
	}
}

func testFunction(t *testing.T, r *rand.Rand, name string, f Func, nargs int, typ dtype.DType) {
	var xs, ys []Scalar
	if nargs == 2 {
		xs, ys = pairs(typ, r)
	} else {
		xs = specials(typ, 1000, r)
	}
	env := Env{"x": OperandDecl(0, typ), "y": OperandDecl(1, typ)}
	src := name + "(x)"
	in := []any{toSlice(typ, xs)}
	if nargs == 2 {
		src = name + "(x, y)"
		in = append(in, toSlice(typ, ys))
	}
	isBool := typ == dtype.Bool
	// The expected result type.
	floatT := typ
	if !typ.IsFloat() {
		floatT = dtype.Promote(typ, dtype.Float16)
	}
	var want dtype.DType
	switch name {
	case "isnan", "isinf", "isfinite", "signbit":
		want = dtype.Bool
	case "abs", "minimum", "maximum", "fmin", "fmax", "floor", "ceil", "trunc", "round":
		want = typ
	case "sign", "square", "reciprocal", "pow", "power", "fmod", "floor_divide", "remainder", "mod":
		if isBool {
			if _, err := Parse(src, env); err == nil {
				t.Fatalf("Parse(%q) on bool succeeded, want an error", src)
			}
			return
		}
		want = typ
	default:
		want = floatT
	}
	e, got := evalExpr(t, src, env, in, nil, len(xs))
	if e.DType() != want {
		t.Fatalf("%s has type %v, want %v (IR %s)", src, e.DType(), want, e)
	}
	for i := range xs {
		var y Scalar
		if nargs == 2 {
			y = ys[i]
		}
		w := refFunction(name, f, typ, want, xs[i], y)
		if !sameValue(got[i], w) {
			t.Fatalf("%s with x=%v y=%v: got %v, want %v", src, xs[i], y, got[i], w)
		}
	}
}

// refFunction computes the documented value of a language function.
func refFunction(name string, f Func, typ, rt dtype.DType, x, y Scalar) Scalar {
	switch {
	case name == "fmod":
		return refBinary(Rem, typ, x, y)
	case f == FloorDivide || f == Remainder:
		return refDivmod(f.String(), typ, x, y)
	case f.IsPredicate():
		if !typ.IsFloat() {
			switch f {
			case IsFinite:
				return ScalarOf(true)
			case Signbit:
				return ScalarOf(typ.IsSigned() && x.Int64() < 0)
			}
			return ScalarOf(false)
		}
		return ScalarOf(refPredicate(f, x.Float64()))
	case typ == dtype.Bool && (name == "minimum" || name == "fmin"):
		return ScalarOf(x.bits&y.bits == 1)
	case typ == dtype.Bool && (name == "maximum" || name == "fmax"):
		return ScalarOf(x.bits|y.bits == 1)
	case !typ.IsFloat() && rt == typ && (name == "abs" || name == "floor" || name == "ceil" || name == "trunc" || name == "round") && (typ == dtype.Bool || typ.IsUnsigned() || name != "abs"):
		return x
	case typ.IsInteger() && rt == typ:
		g := f
		switch name {
		case "fmin":
			g = Minimum
		case "fmax":
			g = Maximum
		}
		return refIntFunc(g, typ, x, y)
	}
	// Floating point: convert the arguments to the result type (exactly, or as Cast
	// does), compute in float64, round to float32 for float32, float16 and bfloat16.
	xf := refCast(x, rt).Float64()
	var yf float64
	if y.t.Valid() {
		yf = refCast(y, rt).Float64()
	}
	v, ok := mirrorRef(f, xf, yf, rt == dtype.Float64)
	if !ok {
		v = refMath(f, xf, yf)
	}
	if rt != dtype.Float64 {
		v = float64(float32(v))
	}
	return roundTo(rt, v)
}

// TestCasts checks every conversion between every pair of types against refCast.
func TestCasts(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 4))
	for _, from := range dtype.All {
		xs := specials(from, 2000, r)
		env := Env{"x": OperandDecl(0, from)}
		in := []any{toSlice(from, xs)}
		for _, to := range dtype.All {
			src := to.String() + "(x)"
			e, got := evalExpr(t, src, env, in, nil, len(xs))
			if e.DType() != to {
				t.Fatalf("%s has type %v", src, e.DType())
			}
			bad := 0
			for i, x := range xs {
				w := refCast(x, to)
				if !sameValue(got[i], w) {
					if bad++; bad <= 3 {
						t.Errorf("%v → %v: %v gave %v, want %v", from, to, x, got[i], w)
					}
				}
				// Scalar.Convert is the same conversion.
				if c := x.Convert(to); !sameValue(c, w) {
					t.Fatalf("%v.Convert(%v) = %v, want %v", x, to, c, w)
				}
			}
		}
	}
}

// TestPromotedOperands checks mixed-type operators: the operands convert to the promoted
// type (Cast's rules), then the operator applies there.
func TestPromotedOperands(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 5))
	for _, a := range dtype.All {
		for _, b := range dtype.All {
			pt := dtype.Promote(a, b)
			xs, ys := specials(a, 200, r), specials(b, 200, r)
			env := Env{"x": OperandDecl(0, a), "y": OperandDecl(1, b)}
			in := []any{toSlice(a, xs), toSlice(b, ys)}
			for _, op := range []BinaryOp{Add, Mul, Lt, And} {
				if !binaryValid(op, pt) {
					continue
				}
				src := "x " + binaryTokensByOp[op] + " y"
				e, got := evalExpr(t, src, env, in, nil, len(xs))
				for i := range xs {
					w := refBinary(op, pt, refCast(xs[i], pt), refCast(ys[i], pt))
					if !sameValue(got[i], w) {
						t.Fatalf("%v %s %v (%s): %v, %v gave %v, want %v", a, binaryTokensByOp[op], b, e, xs[i], ys[i], got[i], w)
					}
				}
			}
		}
	}
}

// TestIntToFloatConversionsRound checks Go's integer→float32/float64 conversions (used by
// the Cast kernels) against a round-to-odd construction on large 64-bit values.
func TestIntToFloatConversionsRound(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 6))
	for i := 0; i < 200000; i++ {
		u := r.Uint64() >> uint(r.IntN(12))
		if g, w := float32(u), float32(intToFloat64Odd(u)); g != w {
			t.Fatalf("float32(uint64 %d) = %v, round-to-odd gives %v", u, g, w)
		}
		v := int64(u)
		if g, w := float32(v), float32(intToFloat64Odd(v)); g != w {
			t.Fatalf("float32(int64 %d) = %v, round-to-odd gives %v", v, g, w)
		}
	}
}

// TestWeakIntUint64Compare: a weak int parameter (a Go int) compared with a uint64 array
// compares exactly, as NumPy 2 compares a Python int: -1 is below every uint64, where
// taking the array's type would wrap it to MaxUint64.
func TestWeakIntUint64Compare(t *testing.T) {
	env := Env{"u": OperandDecl(0, dtype.Uint64), "w": WeakParamDecl(0, dtype.Int64)}
	us := []uint64{0, 1, 5, 1 << 63, math.MaxUint64}
	for _, w := range []int64{-1, math.MinInt64, 0, 5, math.MaxInt64} {
		for _, src := range []string{"u > w", "w < u", "u == w", "w >= u"} {
			e, err := Parse(src, env)
			if err != nil {
				t.Fatalf("Parse(%q): %v", src, err)
			}
			p, err := e.Compile()
			if err != nil {
				t.Fatal(err)
			}
			out := make([]bool, len(us))
			if err := p.Eval(out, []any{us}, []any{w}); err != nil {
				t.Fatal(err)
			}
			for i, u := range us {
				c := new(big.Int).SetUint64(u).Cmp(big.NewInt(w)) // u against w
				want := map[string]bool{"u > w": c > 0, "w < u": c > 0, "u == w": c == 0, "w >= u": c <= 0}[src]
				if out[i] != want {
					t.Errorf("%q with u=%d w=%d = %v, want %v", src, u, w, out[i], want)
				}
			}
		}
	}
}

// TestMixedSignedUint64Compare checks that a signed integer compared with a uint64 (which
// promote to float64 for arithmetic) compares exactly, as NumPy does since 1.25: values
// past 2^53 that float64 would merge (MaxInt64 and 2^63, 2^53 and 2^53+1) stay apart,
// and a negative value is below every uint64. Both operand orders, every operator, every
// signed width, against math/big.
func TestMixedSignedUint64Compare(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 5))
	for _, st := range []dtype.DType{dtype.Int8, dtype.Int16, dtype.Int32, dtype.Int64} {
		ss := specials(st, 0, r)
		us := specials(dtype.Uint64, 0, r)
		for _, v := range []uint64{1 << 53, 1<<53 + 1, 1 << 63, 1<<63 - 1, 1<<63 + 1} {
			us = append(us, ScalarFromBits(dtype.Uint64, v))
			if st == dtype.Int64 && v < 1<<63 {
				ss = append(ss, ScalarFromBits(st, v))
			}
		}
		var xs, ys []Scalar
		for _, a := range ss {
			for _, b := range us {
				xs, ys = append(xs, a), append(ys, b)
			}
		}
		for range 400 { // random pairs, often near each other
			a := ScalarFromBits(st, r.Uint64()>>uint(r.IntN(64)))
			if r.IntN(2) == 0 {
				a = ScalarFromBits(st, uint64(-a.Int64()))
			}
			b := ScalarFromBits(dtype.Uint64, uint64(a.Int64())+uint64(r.IntN(3))-1)
			if r.IntN(4) == 0 {
				b = ScalarFromBits(dtype.Uint64, r.Uint64())
			}
			xs, ys = append(xs, a), append(ys, b)
		}
		env := Env{"s": OperandDecl(0, st), "u": OperandDecl(1, dtype.Uint64)}
		in := []any{toSlice(st, xs), toSlice(dtype.Uint64, ys)}
		for op := Eq; op <= Ge; op++ {
			for _, signedLeft := range []bool{true, false} {
				src := "s " + binaryTokensByOp[op] + " u"
				if !signedLeft {
					src = "u " + binaryTokensByOp[op] + " s"
				}
				e, got := evalExpr(t, src, env, in, nil, len(xs))
				if e.DType() != dtype.Bool {
					t.Fatalf("%v: %q has type %v, want bool", st, src, e.DType())
				}
				bad := 0
				for i := range xs {
					c := new(big.Int).SetInt64(xs[i].Int64()).Cmp(new(big.Int).SetUint64(ys[i].Uint64()))
					if !signedLeft {
						c = -c
					}
					want := map[BinaryOp]bool{Eq: c == 0, Ne: c != 0, Lt: c < 0, Le: c <= 0, Gt: c > 0, Ge: c >= 0}[op]
					if got[i].Bool() != want {
						if bad++; bad <= 3 {
							t.Errorf("%v: %q with s=%d u=%d = %v, want %v", st, src, xs[i].Int64(), ys[i].Uint64(), got[i].Bool(), want)
						}
					}
				}
			}
		}
	}
}
