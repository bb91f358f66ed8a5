package ptx

// Hyperbolic functions, from the exponentials (W. J. Cody & W. Waite, "Software Manual
// for the Elementary Functions", 1980, ch. 12-13):
//
//	tanh x = E/(E+2) with E = expm1(2|x|) for 0.55 <= |x| < 9.1 (float32), a minimax
//	         x + x³P(x²) below, ±1 above;
//	sinh x = x + x³P(x²) for |x| <= 1, (E + E/(E+1))/2 with E = expm1(|x|) below 9, and
//	         e^|x|/2 from exp with the exponent lowered by one past 9;
//	cosh x = (e^|x| + 1/e^|x|)/2, and e^|x|/2 past 9.

func init() {
	register(Tanh, tanhF32, nil)
	register(Sinh, sinhF32, nil)
	register(Cosh, coshF32, nil)
}

// tanh(x) = x + x³ P(x²) for |x| <= 0.55 (float32, relative error 2^-29.8).
// sinh(x) = x + x³ P(x²) for |x| <= 1 (float32, relative error 2^-43.5).
var sinhPolyF32 = []float64{0x1.555556p-3, 0x1.11111p-7, 0x1.a01a24p-13, 0x1.71cc7p-19, 0x1.b68b5ep-26}

var tanhPolyF32 = []float64{-0x1.55554ap-2, 0x1.110d26p-3, -0x1.b9287ap-5, 0x1.593d08p-6, -0x1.9b3046p-8}

// withSign returns |v| with the sign of x (v must be non-negative).
func (b *mb) withSign(v, x val) val {
	t := b.typ(x)
	sign := b.and(b.bits(x), b.uconst(t, 1<<(fpOf(t).mant+fpOf(t).expBits())))
	return b.fromBits(b.or(b.bits(v), sign))
}

func (p fparams) expBits() int {
	if p.t == tF32 {
		return 8
	}
	return 11
}

func tanhF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	res := b.variable(x)
	b.ifElse(b.cmp(cLe, ax, b.f32(0.55)), func() {
		x2 := b.mul(x, x)
		b.set(res, b.sel(b.cmp(cEq, x, b.f32(0)), x, b.fma(b.mul(x, x2), b.horner(x2, tanhPolyF32), x)))
	}, func() {
		e := b.expm1Generic(b.add(ax, ax), 0.3465, 87, -17.5, expm1PolyF32, expF32)
		v := b.div(e, b.add(e, b.f32(2)))
		v = b.sel(b.cmp(cGe, ax, b.f32(9.1)), b.f32(1), v)
		v = b.withSign(v, x)
		b.set(res, b.sel(b.isNaN(x), b.nan(t), v))
	})
	return res
}

func sinhF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	res := b.variable(x)
	b.ifElse(b.cmp(cLe, ax, b.f32(1)), func() {
		x2 := b.mul(x, x)
		b.set(res, b.fma(b.mul(x, x2), b.horner(x2, sinhPolyF32), x))
	}, func() {
		b.ifElse(b.cmp(cLt, ax, b.f32(9)), func() {
			e := b.expm1Generic(ax, 0.3465, 87, -17.5, expm1PolyF32, expF32)
			v := b.mul(b.add(e, b.div(e, b.add(e, b.f32(1)))), b.f32(0.5))
			b.set(res, b.withSign(v, x))
		}, func() {
			v := b.expScaled(ax, true, 87, 89.5, -1000, -1)
			b.set(res, b.sel(b.isNaN(x), b.nan(t), b.withSign(v, x)))
		})
	})
	return res
}

func coshF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	res := b.variable(x)
	b.ifElse(b.cmp(cLt, ax, b.f32(9)), func() {
		e := b.expGeneric(ax, true, 87, 89, -104)
		b.set(res, b.fma(e, b.f32(0.5), b.div(b.f32(0.5), e)))
	}, func() {
		v := b.expScaled(ax, true, 87, 89.5, -1000, -1)
		b.set(res, b.sel(b.isNaN(x), b.nan(t), v))
	})
	return res
}
