package expr

import "github.com/go-gpu/gpu/ptx/gomath"

// mirrorRef computes f as the CPU evaluator does for the functions it takes from the
// device math library's Go mirrors (ptx/gomath): bit for bit the GPU's results.
func mirrorRef(f Func, x, y float64, f64 bool) (float64, bool) {
	type pair struct {
		f32 func(float32) float32
		f64 func(float64) float64
	}
	one := map[Func]pair{
		Cbrt: {gomath.CbrtF32, gomath.CbrtF64}, Exp: {gomath.ExpF32, gomath.ExpF64},
		Exp2: {gomath.Exp2F32, gomath.Exp2F64}, Expm1: {gomath.Expm1F32, gomath.Expm1F64},
		Log: {gomath.LogF32, gomath.LogF64}, Log2: {gomath.Log2F32, gomath.Log2F64},
		Log10: {gomath.Log10F32, gomath.Log10F64}, Log1p: {gomath.Log1pF32, gomath.Log1pF64},
		Sin: {gomath.SinF32, gomath.SinF64}, Cos: {gomath.CosF32, gomath.CosF64},
		Tan: {gomath.TanF32, gomath.TanF64}, Asin: {gomath.AsinF32, gomath.AsinF64},
		Acos: {gomath.AcosF32, gomath.AcosF64}, Atan: {gomath.AtanF32, gomath.AtanF64},
		Sinh: {gomath.SinhF32, gomath.SinhF64}, Cosh: {gomath.CoshF32, gomath.CoshF64},
		Tanh: {gomath.TanhF32, gomath.TanhF64}, Asinh: {gomath.AsinhF32, gomath.AsinhF64},
		Acosh: {gomath.AcoshF32, gomath.AcoshF64}, Atanh: {gomath.AtanhF32, gomath.AtanhF64},
		Erf: {gomath.ErfF32, gomath.ErfF64},
	}
	type pair2 struct {
		f32 func(float32, float32) float32
		f64 func(float64, float64) float64
	}
	two := map[Func]pair2{
		Atan2: {gomath.Atan2F32, gomath.Atan2F64}, Hypot: {gomath.HypotF32, gomath.HypotF64},
		Pow: {gomath.PowF32, gomath.PowF64},
	}
	if p, ok := one[f]; ok {
		if f64 {
			return p.f64(x), true
		}
		return float64(p.f32(float32(x))), true
	}
	if p, ok := two[f]; ok {
		if f64 {
			return p.f64(x, y), true
		}
		return float64(p.f32(float32(x), float32(y))), true
	}
	return 0, false
}
