package expr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/internal/npyref"
)

// A reference for floor_divide and remainder independent of their IR definitions
// (define.go): NumPy's C code transcribed to Go, statement for statement (floats:
// npyref.Divmod).

// npyIntDivmod is NumPy's integer floor_divide (floor_div_@TYPE@) and remainder
// (numpy/_core/src/umath/loops_modulo.dispatch.c.src): x//0 and x%0 are 0, MinInt//-1
// is MinInt and MinInt%-1 is 0; unsigned types divide plainly.
func npyIntDivmod(t dtype.DType, a, b Scalar) (q, r Scalar) {
	if t.IsUnsigned() {
		n, d := a.Uint64(), b.Uint64()
		if d == 0 {
			return ScalarFromBits(t, 0), ScalarFromBits(t, 0)
		}
		return ScalarFromBits(t, n/d), ScalarFromBits(t, n%d)
	}
	n, d := a.Int64(), b.Int64()
	minInt := int64(-1) << (t.Bits() - 1)
	var qq, rr int64
	switch {
	case d == 0:
	case n == minInt && d == -1:
		qq = minInt
	default:
		qq = n / d
		if (n > 0) != (d > 0) && qq*d != n {
			qq--
		}
		rr = n % d
		if !((n > 0) == (d > 0) || rr == 0) {
			rr += d
		}
	}
	return ScalarFromBits(t, uint64(qq)), ScalarFromBits(t, uint64(rr))
}

// refDivmod returns NumPy's floor_divide(x, y) or remainder(x, y) (name "mod" is
// remainder) of two values of type t. float16 and bfloat16 compute in float32 and round
// once, as NumPy's npy_half_divmod does.
func refDivmod(name string, t dtype.DType, x, y Scalar) Scalar {
	var q, r Scalar
	switch {
	case t.IsInteger():
		q, r = npyIntDivmod(t, x, y)
	case t == dtype.Float64:
		fq, fr := npyref.Divmod(x.Float64(), y.Float64())
		q, r = ScalarOf(fq), ScalarOf(fr)
	default:
		fq, fr := npyref.Divmod(float32(x.Float64()), float32(y.Float64()))
		q, r = roundTo(t, float64(fq)), roundTo(t, float64(fr))
	}
	if name == "floor_divide" {
		return q
	}
	return r
}

// TestFloorDivideRemainder checks floor_divide, remainder and mod on every integer and
// float type against npyref.Divmod and npyIntDivmod: every pair of special values (zeros
// of both signs, ±1, MinInt and -1, MaxInt, ±Inf, NaN, ...) and fresh random pairs,
// with y an array, with y a parameter, and with both constants (folded at parse time).
// NaN results must be the NaN policy's canonical NaN.
func TestFloorDivideRemainder(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	r := rand.New(rand.NewPCG(seed, 7))
	t.Logf("seed %d", seed)
	for _, typ := range dtype.All {
		if typ == dtype.Bool {
			continue
		}
		xs, ys := pairs(typ, r)
		// More fresh pairs with small values, where the rounding cases are.
		for range 500 {
			a, b := r.IntN(41)-20, r.IntN(41)-20
			if typ.IsUnsigned() {
				a, b = a+20, b+20
			}
			if typ.IsFloat() {
				xs = append(xs, roundTo(typ, float64(a)/4))
				ys = append(ys, roundTo(typ, float64(b)/8))
			} else {
				xs = append(xs, fromInt(typ, int64(a)))
				ys = append(ys, fromInt(typ, int64(b)))
			}
		}
		env := Env{"x": OperandDecl(0, typ), "y": OperandDecl(1, typ), "p": ParamDecl(0, typ)}
		in := []any{toSlice(typ, xs), toSlice(typ, ys)}
		check := func(what string, x, y, got Scalar, name string) {
			t.Helper()
			w := refDivmod(name, typ, x, y)
			if !sameValue(got, w) {
				t.Fatalf("seed %d: %v: %s(%v, %v) %s = %v (bits %#x), want %v (bits %#x)",
					seed, typ, name, x, y, what, got, got.bits, w, w.bits)
			}
			// (A folded NaN is a constant, canonical in Scalar.Canonical's form.)
			if typ.IsFloat() && math.IsNaN(got.Float64()) && what != "(folded)" && got.bits != policyNaN(typ) {
				t.Fatalf("seed %d: %v: %s(%v, %v) %s: NaN %#x, want the canonical NaN %#x",
					seed, typ, name, x, y, what, got.bits, policyNaN(typ))
			}
		}
		for _, name := range []string{"floor_divide", "remainder", "mod"} {
			src := name + "(x, y)"
			e, got := evalExpr(t, src, env, in, nil, len(xs))
			if e.DType() != typ {
				t.Fatalf("%v: %s has type %v", typ, src, e.DType())
			}
			for i := range xs {
				check("(arrays)", xs[i], ys[i], got[i], name)
			}
			// y uniform: a parameter, read once per evaluation.
			for _, p := range specials(typ, 0, r)[:12] {
				_, got := evalExpr(t, name+"(x, p)", env, in[:1], []any{p}, len(xs))
				for i := range xs {
					check("(parameter y)", xs[i], p, got[i], name)
				}
			}
			// Constants: folded by the one-call kernel.
			for i := 0; i < len(xs); i += 7 {
				cenv := Env{"x": ConstDecl(xs[i]), "y": ConstDecl(ys[i])}
				e, err := Parse(src, cenv)
				if err != nil {
					t.Fatalf("Parse(%q) of constants: %v", src, err)
				}
				k, ok := e.Root.(*Const)
				if !ok {
					t.Fatalf("%v: %s of constants %v, %v not folded: %s", typ, src, xs[i], ys[i], e)
				}
				check("(folded)", xs[i], ys[i], k.Value, name)
			}
		}
	}
}

// policyNaN is the bits of the NaN that arithmetic gives on float type t (the package's
// NaN policy: internal/fp, rounded to the half types).
func policyNaN(t dtype.DType) uint64 {
	switch t {
	case dtype.Float32:
		return fp.NaN32Bits
	case dtype.Float64:
		return fp.NaN64Bits
	}
	return 0x7fff
}

// TestFloorDivideRemainderNumPy checks values printed by NumPy 2.
func TestFloorDivideRemainderNumPy(t *testing.T) {
	nan, inf, negz := math.NaN(), math.Inf(1), math.Copysign(0, -1)
	cases := []struct {
		src  string
		want float64
	}{
		{"floor_divide(int64(-7), 2)", -4}, {"remainder(int64(-7), 2)", 1},
		{"floor_divide(int64(7), -2)", -4}, {"mod(int64(7), -2)", -1},
		{"floor_divide(int64(-6), 2)", -3}, {"remainder(int64(-6), 2)", 0},
		{"floor_divide(int8(-128), int8(-1))", -128}, {"remainder(int8(-128), int8(-1))", 0},
		{"floor_divide(int32(5), int32(0))", 0}, {"remainder(int32(5), int32(0))", 0},
		{"floor_divide(uint8(7), uint8(2))", 3}, {"remainder(uint8(7), uint8(0))", 0},
		{"floor_divide(-7.0, 2.0)", -4}, {"remainder(-7.5, 2.0)", 0.5},
		{"floor_divide(7.0, -2.0)", -4}, {"remainder(7.0, -2.0)", -1},
		{"floor_divide(1.0, 0.1)", 9}, {"remainder(1.0, 0.1)", 0.09999999999999995},
		{"floor_divide(float64(0), -3.0)", negz}, {"remainder(float64(0), -3.0)", negz},
		{"remainder(6.0, -3.0)", negz}, {"remainder(-6.0, 3.0)", 0},
		{"floor_divide(1.0, float64(0))", inf}, {"floor_divide(-1.0, float64(0))", -inf},
		{"floor_divide(float64(0), float64(0))", nan}, {"remainder(1.0, float64(0))", nan},
		{"floor_divide(inf, 2.0)", nan}, {"remainder(inf, 2.0)", nan},
		{"floor_divide(5.0, inf)", 0}, {"remainder(5.0, inf)", 5},
		{"floor_divide(-5.0, inf)", -1}, {"remainder(-5.0, inf)", inf},
		{"floor_divide(nan, 2.0)", nan}, {"remainder(2.0, nan)", nan},
		{"floor_divide(float32(-7), float32(2))", -4}, {"remainder(float16(-7.5), float16(2))", 0.5},
	}
	for _, c := range cases {
		e, err := Parse(c.src, nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		k, ok := e.Root.(*Const)
		if !ok {
			t.Errorf("%q not folded: %s", c.src, e)
			continue
		}
		g := k.Value.Float64()
		ok = g == c.want && math.Signbit(g) == math.Signbit(c.want)
		if math.IsNaN(c.want) {
			ok = math.IsNaN(g)
		}
		if !ok {
			t.Errorf("%s = %v, want %v", c.src, g, c.want)
		}
	}
}

// TestFloorDivideNested: a call's definition is not copied into the IR, so nesting calls
// keeps String and Key linear in the source.
func TestFloorDivideNested(t *testing.T) {
	env := Env{"x": OperandDecl(0, dtype.Float64), "y": OperandDecl(1, dtype.Float64)}
	src := "x"
	for range 30 {
		src = fmt.Sprintf("floor_divide(remainder(%s, y), y)", src)
	}
	e, err := Parse(src, env)
	if err != nil {
		t.Fatal(err)
	}
	if s := e.String(); s != src {
		t.Fatalf("String = %.200s..., want the source", s)
	}
	if k := e.Key(); len(k) > 40*len(src) {
		t.Fatalf("Key has %d bytes for a source of %d", len(k), len(src))
	}
	xs, ys := []float64{-7.5, 7}, []float64{2, -3}
	_, got := evalExpr(t, src, env, []any{xs, ys}, nil, 2)
	for i := range xs {
		w := ScalarOf(xs[i])
		for range 30 {
			w = refDivmod("floor_divide", dtype.Float64, refDivmod("remainder", dtype.Float64, w, ScalarOf(ys[i])), ScalarOf(ys[i]))
		}
		if !sameValue(got[i], w) {
			t.Errorf("element %d: %v, want %v", i, got[i], w)
		}
	}
}
