package ptx

// Hyperbolic functions, from the exponentials (W. J. Cody & W. Waite, "Software Manual
// for the Elementary Functions", 1980, ch. 12-13):
//
//	tanh x = E/(E+2) with E = expm1(2|x|) for 0.55 <= |x| < 9.1 (float32; 22 for float64), a minimax
//	         x + x³P(x²) below, ±1 above;
//	sinh x = x + x³P(x²) for |x| <= 1, (E + E/(E+1))/2 with E = expm1(|x|) below 9, and
//	         e^|x|/2 from exp with the exponent lowered by one past 9;
//	cosh x = (e^|x| + 1/e^|x|)/2, and e^|x|/2 past 9.

func init() {
	register(Tanh, tanhF32, tanhF32)
	register(Sinh, sinhF32, sinhF32)
	register(Cosh, coshF32, coshF32)
}

// tanh(x) = x + x³ P(x²) for |x| <= 0.55 (float32, relative error 2^-29.8).
// sinh(x) = x + x³ P(x²) for |x| <= 1 (float32, relative error 2^-43.5).
var sinhPolyF32 = []float64{0x1.555556p-3, 0x1.11111p-7, 0x1.a01a24p-13, 0x1.71cc7p-19, 0x1.b68b5ep-26}

// The same for float64 (relative errors 2^-73.8 and 2^-60.6).
var sinhPolyF64 = []float64{0x1.5555555555555p-3, 0x1.1111111111111p-7, 0x1.a01a01a019fc1p-13,
	0x1.71de3a5573f79p-19, 0x1.ae6456741b8f0p-26, 0x1.61246afa2dc91p-33, 0x1.ae756e9911c6cp-41,
	0x1.9a7940f5401c1p-49}
var tanhPolyF64 = []float64{-0x1.555555555554fp-2, 0x1.111111111079fp-3, -0x1.ba1ba1b97d88ep-5,
	0x1.664f485970a37p-6, -0x1.226e2f147ac1fp-7, 0x1.d6d29b96dda4bp-9, -0x1.7d8fd3acffad3p-10,
	0x1.3483ae8d11fabp-11, -0x1.e96fc5c824104p-13, 0x1.5d745a02734abp-14, -0x1.47110a6ab3229p-16}

// hypParams holds the per-type constants of the hyperbolic functions.
type hypParams struct {
	sinhPoly, tanhPoly []float64
	one                float64 // |x| past which tanh is ±1
	mid                float64 // |x| past which sinh and cosh are e^|x|/2
	expLim, expOver    float64 // exp's normal-range and overflow bounds for e^x/2
	expm1              func(b *mb, x val) val
	exp                func(b *mb, x val) val
}

func hypOf(t vtype) hypParams {
	if t == tF32 {
		return hypParams{sinhPolyF32, tanhPolyF32, 9.1, 9, 87, 89.5,
			func(b *mb, x val) val { return b.expm1Generic(x, 0.3465, 87, -17.5, expm1PolyF32, expF32) },
			func(b *mb, x val) val { return b.expGeneric(x, true, 87, 89, -104) }}
	}
	return hypParams{sinhPolyF64, tanhPolyF64, 22, 22, 708, 710.5,
		func(b *mb, x val) val { return b.expm1Generic(x, 0.3465, 708, -38, expm1PolyF64, expF64) },
		func(b *mb, x val) val { return b.expGeneric(x, true, 708, 710, -746) }}
}

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

func tanhF32(b *mb, t vtype, xs []val) val { // float32 and float64
	x := xs[0]
	ax := b.abs(x)
	res := b.variable(x)
	h := hypOf(t)
	b.ifElse(b.cmp(cLe, ax, b.fc(t, 0.55)), func() {
		x2 := b.mul(x, x)
		b.set(res, b.sel(b.cmp(cEq, x, b.fc(t, 0)), x, b.fma(b.mul(x, x2), b.horner(x2, h.tanhPoly), x)))
	}, func() {
		e := h.expm1(b, b.add(ax, ax))
		v := b.div(e, b.add(e, b.fc(t, 2)))
		v = b.sel(b.cmp(cGe, ax, b.fc(t, h.one)), b.fc(t, 1), v)
		v = b.withSign(v, x)
		b.set(res, b.sel(b.isNaN(x), b.nan(t), v))
	})
	return res
}

func sinhF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	res := b.variable(x)
	h := hypOf(t)
	b.ifElse(b.cmp(cLe, ax, b.fc(t, 1)), func() {
		x2 := b.mul(x, x)
		b.set(res, b.fma(b.mul(x, x2), b.horner(x2, h.sinhPoly), x))
	}, func() {
		b.ifElse(b.cmp(cLt, ax, b.fc(t, h.mid)), func() {
			e := h.expm1(b, ax)
			v := b.mul(b.add(e, b.div(e, b.add(e, b.fc(t, 1)))), b.fc(t, 0.5))
			b.set(res, b.withSign(v, x))
		}, func() {
			v := b.expScaled(ax, true, h.expLim, h.expOver, -1e6, -1)
			b.set(res, b.sel(b.isNaN(x), b.nan(t), b.withSign(v, x)))
		})
	})
	return res
}

func coshF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	res := b.variable(x)
	h := hypOf(t)
	b.ifElse(b.cmp(cLt, ax, b.fc(t, h.mid)), func() {
		e := h.exp(b, ax)
		b.set(res, b.fma(e, b.fc(t, 0.5), b.div(b.fc(t, 0.5), e)))
	}, func() {
		v := b.expScaled(ax, true, h.expLim, h.expOver, -1e6, -1)
		b.set(res, b.sel(b.isNaN(x), b.nan(t), v))
	})
	return res
}
