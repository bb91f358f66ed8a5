package ptx

import "math"

// Inverse hyperbolic functions (Cody & Waite's and Kahan's formulas, as in fdlibm):
//
//	asinh x = sign(x)·log(|x| + sqrt(x² + 1))
//	acosh x = log(x + sqrt(x² - 1)),  x >= 1
//	atanh x = sign(x)·log((1 + |x|)/(1 - |x|))/2
//
// float64 forms the argument w of the logarithm as a double-word (x² by TwoProduct,
// 1 ± x and x² ± 1 by Fast2Sum, the root by sqrtDD, the quotient with its exact
// remainder) and takes log w = log w_hi + w_lo/w_hi with the extra-precise logarithm
// of pow (logW), so that arguments near 0 (w near 1) keep full relative accuracy;
// only below 2^-20, where the square of w's low part would matter, asinh and atanh
// take x - x³/6 and x + x³/3. Beyond 2^28, asinh and acosh are log|x| + log 2.
//
// float32 computes w in float64, where its rounding (2^-53) is far below a float32
// ulp of the result except for tiny |x|, which take the first terms of the series
// (asinh x = x - x³/6, atanh x = x + x³/3 below 2^-12), and a short float64 logarithm:
// log w = ln2·(e + log2(1/r_j) + log2(1 + z)) with pow's 128-entry table and five
// terms of the series of log2(1 + z), |z| < 2^-7 (relative error 2^-37).

func init() {
	register(Asinh, asinhF32, asinhF64)
	register(Acosh, acoshF32, acoshF64)
	register(Atanh, atanhF32, atanhF64)
}

// logQ64 returns log w for a positive normal float64 w, to about 2^-37 relative (for
// float32 results).
func (b *mb) logQ64(w val) val {
	rt, lt := powLog2Tables()
	tr := b.table("pow_log2_r", tF64, rt)
	tt := b.table("pow_log2_t", tF64, lt)
	wb := b.bits(w)
	ix := b.sub(wb, b.u64(math.Float64bits(float64(float32(math.Sqrt2/2)))))
	e := b.sar(ix, b.u32(52))
	m := b.fromBits(b.sub(wb, b.shl(e, b.u32(52))))
	j := b.lo(b.and(b.shr(ix, b.u32(45)), b.u64(0x7f)))
	z := b.fma(m, b.load(tr, j), b.f64(-1))
	c := make([]float64, 5)
	for k := range c {
		c[k] = math.Log2E / float64(k+1)
		if k%2 == 1 {
			c[k] = -c[k]
		}
	}
	l2 := b.fma(z, b.horner(z, c), b.add(b.cvtSI(e, tF64), b.load(tt, j)))
	return b.mul(l2, b.f64(math.Ln2))
}

func asinhF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	a := b.cvtF(b.abs(x), tF64)
	w := b.add(a, b.sqrt(b.fma(a, a, b.f64(1))))
	v := b.logQ64(w)
	v = b.sel(b.cmp(cLt, a, b.f64(0x1p-12)), b.fma(b.mul(a, b.mul(a, a)), b.f64(-1.0/6), a), v)
	v32 := b.cvtF(v, tF32)
	return b.sel(b.cmp(cGeU, b.abs(x), b.inf(t)), b.sel(b.isNaN(x), b.nan(t), x), b.withSign(v32, x))
}

func acoshF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	a := b.cvtF(x, tF64)
	w := b.add(a, b.sqrt(b.fma(a, a, b.f64(-1))))
	v := b.cvtF(b.logQ64(w), tF32)
	v = b.sel(b.cmp(cEq, x, b.inf(t)), x, v)
	return b.sel(b.cmp(cLtU, x, b.f32(1)), b.nan(t), v) // x < 1 or NaN
}

func atanhF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	a := b.cvtF(b.abs(x), tF64)
	one := b.f64(1)
	w := b.div(b.add(one, a), b.sub(one, a))
	v := b.mul(b.logQ64(w), b.f64(0.5))
	v = b.sel(b.cmp(cLt, a, b.f64(0x1p-12)), b.fma(b.mul(a, b.mul(a, a)), b.f64(1.0/3), a), v)
	v32 := b.withSign(b.cvtF(v, tF32), x)
	v32 = b.sel(b.cmp(cEq, a, one), b.withSign(b.inf(t), x), v32)
	return b.sel(b.cmp(cGtU, a, one), b.nan(t), v32) // |x| > 1 or NaN
}

// logBig returns log x + log 2 for large finite x (asinh, acosh beyond 2^28).
func (b *mb) logBig(x val) val {
	h, l := b.logPrec64(x, 0)
	l2h, l2l := constDD(ln2Digits)
	s, e := b.fastTwoSum(h, b.f64(l2h))
	return b.add(s, b.add(e, b.add(l, b.f64(l2l))))
}

func asinhF64(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	res := b.variable(b.f64(0))
	b.ifElse(b.cmp(cLt, ax, b.f64(0x1p28)), func() {
		ph, pl := b.twoProd(ax, ax)
		ge1 := b.cmp(cGe, ph, b.f64(1))
		sh, se := b.fastTwoSum(b.sel(ge1, ph, b.f64(1)), b.sel(ge1, b.f64(1), ph))
		q, ql := b.sqrtDD(sh, b.add(se, pl), true)
		wh, we := b.fastTwoSum(q, ax)
		v := b.logW(wh, b.add(we, ql))
		// below 2^-20, x - x³/6 (logW drops second-order terms of w's low part,
		// which matter when w - 1 is that small)
		v = b.sel(b.cmp(cLt, ax, b.f64(0x1p-20)), b.fma(b.mul(ax, b.mul(ax, ax)), b.f64(-1.0/6), ax), v)
		b.set(res, b.withSign(v, x))
	}, func() {
		v := b.withSign(b.logBig(ax), x)
		v = b.sel(b.cmp(cEq, ax, b.inf(t)), x, v)
		b.set(res, b.sel(b.isNaN(x), b.nan(t), v))
	})
	return res
}

func acoshF64(b *mb, t vtype, xs []val) val {
	x := xs[0]
	res := b.variable(b.f64(0))
	b.ifElse(b.cmp(cLt, x, b.f64(0x1p28)), func() {
		ph, pl := b.twoProd(x, x)
		vh, ve := b.fastTwoSum(ph, b.f64(-1))
		vh, ve = b.fastTwoSum(vh, b.add(ve, pl)) // normalise: pl may exceed ulp(x² - 1)
		q, ql := b.sqrtDD(vh, ve, false)
		wh, we := b.fastTwoSum(x, q)
		v := b.logW(wh, b.add(we, ql))
		b.set(res, b.sel(b.cmp(cLtU, x, b.f64(1)), b.nan(t), v))
	}, func() {
		v := b.logBig(x)
		v = b.sel(b.cmp(cEq, x, b.inf(t)), x, v)
		b.set(res, b.sel(b.isNaN(x), b.nan(t), v))
	})
	return res
}

func atanhF64(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	one := b.f64(1)
	ph, pe := b.fastTwoSum(one, ax)
	dh, de := b.fastTwoSum(one, b.neg(ax))
	q := b.div(ph, dh)
	rem := b.fma(b.neg(q), dh, ph) // exact
	ql := b.mul(b.fma(b.neg(q), de, b.add(rem, pe)), b.rcpAcc(dh))
	v := b.mul(b.logW(q, ql), b.f64(0.5))
	v = b.sel(b.cmp(cLt, ax, b.f64(0x1p-20)), b.fma(b.mul(ax, b.mul(ax, ax)), b.f64(1.0/3), ax), v) // x + x³/3
	v = b.withSign(v, x)
	v = b.sel(b.cmp(cEq, ax, one), b.withSign(b.inf(t), x), v)
	return b.sel(b.cmp(cGtU, ax, one), b.nan(t), v)
}
