package ptx

// Exact transformations and double-word ("double-double") helpers for the float64
// functions, after Dekker, "A floating-point technique for extending the available
// precision", Numer. Math. 18, 1971, and Knuth, TAOCP vol. 2, §4.2.2; see also Muller
// et al., "Handbook of Floating-Point Arithmetic". A double-word value is an
// unevaluated sum hi + lo with |lo| <= ulp(hi)/2 (or close to it).

// twoSum returns s = RN(x + y) and the exact error e = x + y - s (Knuth; any order).
func (b *mb) twoSum(x, y val) (s, e val) {
	s = b.add(x, y)
	bb := b.sub(s, x)
	e = b.add(b.sub(x, b.sub(s, bb)), b.sub(y, bb))
	return s, e
}

// fastTwoSum is twoSum for |x| >= |y| or x = 0 (Dekker): three operations.
func (b *mb) fastTwoSum(x, y val) (s, e val) {
	s = b.add(x, y)
	return s, b.add(b.sub(x, s), y)
}

// twoProd returns p = RN(x·y) and the exact error x·y - p (one fma).
func (b *mb) twoProd(x, y val) (p, e val) {
	p = b.mul(x, y)
	return p, b.fma(x, y, b.neg(p))
}

// rcpApprox returns 1/x to about 2^-17 relative error for a positive float64 x in
// [2^-1020, 2^1020]: a first guess from the bits (subtracting them from a constant
// negates the exponent and approximates the significand's reciprocal linearly) and two
// Newton-Raphson steps y + y(1 - xy), each squaring the error (5% at first). It only
// scales the small correction terms of the double-word code, where 2^-12 is plenty, and
// it has no division's slow path.
func (b *mb) rcpApprox(x val) val {
	y := b.fromBits(b.sub(b.u64(0x7fde62384f000000), b.bits(x)))
	one := b.f64(1)
	for range 2 {
		y = b.fma(y, b.fma(b.neg(x), y, one), y)
	}
	return y
}

// rcpAcc is rcpApprox made accurate near 1, for corrections that matter relative to
// x - 1 (a logarithm's argument): within 1/4 of 1 it is 2 - x improved by one Newton
// step, with relative error (x - 1)^4 (below 2^-7·|x - 1|), and exactly 1 at 1.
func (b *mb) rcpAcc(x val) val {
	one := b.f64(1)
	y0 := b.sub(b.f64(2), x)
	near := b.fma(y0, b.fma(b.neg(x), y0, one), y0)
	return b.sel(b.cmp(cLe, b.abs(b.sub(x, one)), b.f64(0.25)), near, b.rcpApprox(x))
}

// sqrtDD returns sqrt(h + l) as a double-word value for h zero or positive normal and
// |l| <= ulp(h) (a normalised pair: the correction is linear in l): the rounded root
// and its correction (h + l - s²)/(2s), the residual h - s² being exact in one fma.
// near asks for rcpAcc instead of rcpApprox, when the root near 1 feeds a logarithm.
func (b *mb) sqrtDD(h, l val, near bool) (s, sl val) {
	s = b.sqrt(h)
	r := b.add(b.fma(b.neg(s), s, h), l)
	tiny := b.f64(0x1p-1000) // s = 0 (h = 0, l = 0) must give 0, not 0·garbage
	sc := b.sel(b.cmp(cLt, s, tiny), tiny, s)
	inv := b.rcpApprox(sc)
	if near {
		inv = b.rcpAcc(sc)
	}
	return s, b.mul(r, b.mul(b.f64(0.5), inv))
}

// constDD returns a constant given as decimal digits as a double-word pair of float64.
func constDD(digits string) (hi, lo float64) {
	c := splitConst(digits, 2, tF64)
	return c[0], c[1]
}
