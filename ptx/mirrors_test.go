package ptx

import (
	"math"
	"testing"

	"github.com/go-gpu/gpu/ptx/gomath"
)

// The Go mirrors of every function, by MathFn (one-argument functions ignore y).
var mirrors32 = map[MathFn]func(x, y float32) float32{
	Exp: one32(gomath.ExpF32), Exp2: one32(gomath.Exp2F32), Expm1: one32(gomath.Expm1F32),
	Log: one32(gomath.LogF32), Log2: one32(gomath.Log2F32), Log10: one32(gomath.Log10F32),
	Log1p: one32(gomath.Log1pF32), Sin: one32(gomath.SinF32), Cos: one32(gomath.CosF32),
	Tan: one32(gomath.TanF32), Asin: one32(gomath.AsinF32), Acos: one32(gomath.AcosF32),
	Atan: one32(gomath.AtanF32), Atan2: gomath.Atan2F32, Sinh: one32(gomath.SinhF32),
	Cosh: one32(gomath.CoshF32), Tanh: one32(gomath.TanhF32), Asinh: one32(gomath.AsinhF32),
	Acosh: one32(gomath.AcoshF32), Atanh: one32(gomath.AtanhF32), Pow: gomath.PowF32,
	Cbrt: one32(gomath.CbrtF32), Hypot: gomath.HypotF32, Erf: one32(gomath.ErfF32), Fmod: gomath.FmodF32,
}

var mirrors64 = map[MathFn]func(x, y float64) float64{
	Exp: one64(gomath.ExpF64), Exp2: one64(gomath.Exp2F64), Expm1: one64(gomath.Expm1F64),
	Log: one64(gomath.LogF64), Log2: one64(gomath.Log2F64), Log10: one64(gomath.Log10F64),
	Log1p: one64(gomath.Log1pF64), Sin: one64(gomath.SinF64), Cos: one64(gomath.CosF64),
	Tan: one64(gomath.TanF64), Asin: one64(gomath.AsinF64), Acos: one64(gomath.AcosF64),
	Atan: one64(gomath.AtanF64), Atan2: gomath.Atan2F64, Sinh: one64(gomath.SinhF64),
	Cosh: one64(gomath.CoshF64), Tanh: one64(gomath.TanhF64), Asinh: one64(gomath.AsinhF64),
	Acosh: one64(gomath.AcoshF64), Atanh: one64(gomath.AtanhF64), Pow: gomath.PowF64,
	Cbrt: one64(gomath.CbrtF64), Hypot: gomath.HypotF64, Erf: one64(gomath.ErfF64), Fmod: gomath.FmodF64,
}

// TestEveryFunction checks that the library has every function for both types (the
// elementwise generator lowers all of expr's transcendental functions to it) and that
// the table above lists a mirror for each.
func TestEveryFunction(t *testing.T) {
	for fn := MathFn(1); fn < numMathFns; fn++ {
		if !fn.Supports(F32) || !fn.Supports(F64) {
			t.Errorf("%v: float32 %v, float64 %v", fn, fn.Supports(F32), fn.Supports(F64))
		}
		if mirrors32[fn] == nil || mirrors64[fn] == nil {
			t.Errorf("%v: no mirror in the test table", fn)
		}
	}
}

// TestSpecialValues runs every function on special operands and their pairs: NaN
// results must be the canonical NaN whatever NaN came in (the GPU never propagates a
// payload or a sign), and no special operand may give a NaN where Go's math gives a
// number or the reverse (for the functions Go has).
func TestSpecialValues(t *testing.T) {
	sp64 := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 2, -2, 3, -3, 1e-300, -1e-300,
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022, math.MaxFloat64, -math.MaxFloat64,
		math.Inf(1), math.Inf(-1), math.NaN(), math.Float64frombits(0xfff8000000000000),
		math.Float64frombits(0x7ff0000000000001), math.Float64frombits(0xfff0000000000123), 1e300, -1e300, 710, -745}
	sp32 := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 0.5, -0.5, 2, -2, 3, -3, 1e-30, -1e-30,
		math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-126, math.MaxFloat32, -math.MaxFloat32,
		float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), math.Float32frombits(0xffc00000),
		math.Float32frombits(0x7f800001), math.Float32frombits(0xff800123), 1e30, -1e30, 89, -104}
	goRef := map[MathFn]func(x, y float64) float64{
		Exp: one64(math.Exp), Exp2: one64(math.Exp2), Expm1: one64(math.Expm1), Log: one64(math.Log),
		Log2: one64(math.Log2), Log10: one64(math.Log10), Log1p: one64(math.Log1p), Sin: one64(math.Sin),
		Cos: one64(math.Cos), Tan: one64(math.Tan), Asin: one64(math.Asin), Acos: one64(math.Acos),
		Atan: one64(math.Atan), Atan2: math.Atan2, Sinh: one64(math.Sinh), Cosh: one64(math.Cosh),
		Tanh: one64(math.Tanh), Asinh: one64(math.Asinh), Acosh: one64(math.Acosh), Atanh: one64(math.Atanh),
		Pow: math.Pow, Cbrt: one64(math.Cbrt), Hypot: math.Hypot, Erf: one64(math.Erf), Fmod: math.Mod,
	}
	for fn := MathFn(1); fn < numMathFns; fn++ {
		ys64, ys32 := []float64{0}, []float32{0}
		if fn.NumArgs() == 2 {
			ys64, ys32 = sp64, sp32
		}
		for _, x := range sp64 {
			for _, y := range ys64 {
				got := mirrors64[fn](x, y)
				want := goRef[fn](x, y)
				if got != got && math.Float64bits(got) != 0x7fffffffffffffff {
					t.Errorf("%v f64 (%v, %v): NaN %#x is not canonical", fn, x, y, math.Float64bits(got))
				}
				if (got != got) != (want != want) {
					t.Errorf("%v f64 (%v, %v) = %v, Go's math gives %v", fn, x, y, got, want)
				}
			}
		}
		for _, x := range sp32 {
			for _, y := range ys32 {
				got := mirrors32[fn](x, y)
				want := goRef[fn](float64(x), float64(y))
				if got != got && math.Float32bits(got) != 0x7fffffff {
					t.Errorf("%v f32 (%v, %v): NaN %#x is not canonical", fn, x, y, math.Float32bits(got))
				}
				if (got != got) != (want != want) {
					t.Errorf("%v f32 (%v, %v) = %v, Go's math gives %v", fn, x, y, got, want)
				}
			}
		}
	}
}
