package ptx

import "math"

// Logarithms.
//
// x = 2^e · m with m in [sqrt(1/2), sqrt(2)) found from the bits (subtracting the bits
// of sqrt(1/2) before taking the exponent, as in Muller, "Elementary Functions", §11 and
// Tang, "Table-driven implementation of the logarithm function in IEEE floating-point
// arithmetic", ACM TOMS 16(4), 1990, without the table for float32), f = m - 1 exact,
// log(1+f) = f + f²·P(f) with P minimax on [sqrt(1/2)-1, sqrt(2)-1], and
// log(x) = e·ln2 + log(1+f) with ln2 in two parts. log2 and log10 multiply log(1+f) by
// their constant in double-float (an exact product from an fma plus the tails) and add
// e·log_b(2) with Fast2Sum, so the only large rounding is the final one. Subnormal x is
// scaled by 2^mant first, in a branch.

func init() {
	register(Log1p, log1pF32, nil)
}

// (log1p(f) - f)/f² on [sqrt(1/2)-1, sqrt(2)-1], float32 (weighted error 2^-30.4).
var logPolyF32 = []float64{-0x1p-1, 0x1.555546p-2, -0x1.000012p-2, 0x1.99a53ep-3, -0x1.555ab2p-3,
	0x1.232d98p-3, -0x1.fc346p-4, 0x1.e7768ap-4, -0x1.de403ap-4, 0x1.13755ap-4}

// logParts returns e (as a float), f = m - 1 and s = log(1+f) - f (≈ f²P(f)) for a
// positive normal or subnormal finite x, and the predicate "x is not positive finite".
func (b *mb) logParts(x val) (ef, f, s, special val) {
	t := b.typ(x)
	p := fpOf(t)
	minNorm := b.uconst(t, 1<<p.mant)
	u := b.sub(b.bits(x), minNorm)
	special = b.cmp(cGe, u, b.uconst(t, p.infBits-(1<<p.mant))) // not in [min normal, +Inf)
	xv := b.variable(x)
	eb := b.variable(b.uconst(t, 0))
	b.ifThen(special, func() {
		sub := b.cmp(cLt, b.bits(x), minNorm) // +0 or positive subnormal
		b.ifThen(sub, func() {
			b.set(xv, b.mul(x, b.fc(t, math.Ldexp(1, p.mant))))
			b.set(eb, b.uconst(t, uint64(-p.mant)&mask(t)))
		})
	})
	var sqrtHalf uint64
	if t == tF32 {
		sqrtHalf = uint64(math.Float32bits(float32(math.Sqrt2 / 2)))
	} else {
		sqrtHalf = math.Float64bits(math.Sqrt2 / 2)
	}
	xb := b.bits(xv)
	ix := b.sub(xb, b.uconst(t, sqrtHalf))
	e := b.sar(ix, b.u32(uint32(p.mant)))
	m := b.fromBits(b.sub(xb, b.shl(e, b.u32(uint32(p.mant)))))
	f = b.sub(m, b.fc(t, 1))
	ei := b.add(e, eb)
	if t == tF64 {
		ef = b.cvtSI(b.lo(ei), t)
	} else {
		ef = b.cvtSI(ei, t)
	}
	q := b.horner(f, logPolyF32)
	s = b.mul(b.mul(f, f), q)
	return ef, f, s, special
}

// logSpecial returns the result for x not in [min normal, +Inf): subnormals go through
// the main path (v); +0/-0 give -Inf, negatives and NaN give NaN, +Inf gives +Inf.
func (b *mb) logSpecial(x, v val) val {
	t := b.typ(x)
	p := fpOf(t)
	xb := b.bits(x)
	r := b.sel(b.cmp(cEq, xb, b.uconst(t, p.infBits)), b.inf(t), v)
	r = b.sel(b.cmp(cGt, xb, b.uconst(t, p.infBits)), b.nan(t), r) // NaN or negative
	r = b.sel(b.cmp(cEq, x, b.fc(t, 0)), b.neg(b.inf(t)), r)
	return r
}

// split returns c rounded to t and the rounded remainder.
func split(t vtype, c, tail float64) (float64, float64) {
	if t == tF32 {
		hi := float64(float32(c))
		return hi, float64(float32((c - hi) + tail))
	}
	return c, tail
}

// logBase returns log_b(x) = e·L + log(1+f)·M where L = log_b(2), M = log_b(e) given in
// two parts each (M = 1 for natural log).
func (b *mb) logBase(x val, lHi, lLo, mHi, mLo float64) val {
	t := b.typ(x)
	ef, f, s, special := b.logParts(x)
	var v val
	if mHi == 1 {
		// e·ln2_hi + (f + (s + e·ln2_lo)), the first product exact in the fma.
		v = b.fma(ef, b.fc(t, lHi), b.add(f, b.fma(ef, b.fc(t, lLo), s)))
	} else {
		p1 := b.mul(f, b.fc(t, mHi))
		p1lo := b.fma(f, b.fc(t, mHi), b.neg(p1)) // exact error of p1
		tail := b.fma(s, b.fc(t, mHi), b.fma(f, b.fc(t, mLo), p1lo))
		tail = b.fma(ef, b.fc(t, lLo), tail)
		a := b.mul(ef, b.fc(t, lHi)) // exact: lHi has few bits
		hi := b.add(a, p1)
		lo := b.add(b.sub(a, hi), p1) // Fast2Sum: |a| >= |p1| or a = 0
		v = b.add(hi, b.add(lo, tail))
	}
	res := b.variable(v)
	b.ifThen(special, func() { b.set(res, b.logSpecial(x, v)) })
	return res
}

// The constants: ln2 with a short high part (e·hi exact), log2(e), log10(2), log10(e).
func logConsts(t vtype, which int) (lHi, lLo, mHi, mLo float64) {
	const (
		ln2    = 0.693147180559945309417232121458176568
		log2e  = 1.44269504088896340735992468100189214
		lg2    = 0.301029995663981195213738894724493027
		log10e = 0.434294481903251827651128918916605082
	)
	short := func(c float64, bits int) (float64, float64) {
		hi := math.Float64frombits(math.Float64bits(c) &^ (1<<(52-bits) - 1))
		return hi, c - hi
	}
	switch which {
	case 0: // natural
		if t == tF32 {
			hi := float64(float32(ln2))
			return hi, float64(float32(ln2 - hi)), 1, 0
		}
		hi, lo := short(ln2, 42)
		return hi, lo + (ln2 - math.Ln2), 1, 0
	case 2: // base 2
		mh, ml := split(t, log2e, log2e-math.Log2E)
		if t == tF64 {
			ml = log2e - math.Log2E
		}
		return 1, 0, mh, ml
	default: // base 10
		lh, ll := short(lg2, 20)
		mh, ml := split(t, log10e, log10e-math.Log10E)
		if t == tF64 {
			ml = log10e - math.Log10E
		}
		if t == tF32 {
			ll = float64(float32(ll))
		}
		return lh, ll, mh, ml
	}
}

func logF32(b *mb, t vtype, x []val) val {
	lh, ll, mh, ml := logConsts(t, 0)
	return b.logBase(x[0], lh, ll, mh, ml)
}
func log2F32(b *mb, t vtype, x []val) val {
	lh, ll, mh, ml := logConsts(t, 2)
	return b.logBase(x[0], lh, ll, mh, ml)
}
func log10F32(b *mb, t vtype, x []val) val {
	lh, ll, mh, ml := logConsts(t, 10)
	return b.logBase(x[0], lh, ll, mh, ml)
}

// log1p(x): for x in [sqrt(1/2)-1, sqrt(2)-1] the polynomial on x itself; otherwise
// u = 1 + x rounded, log(u) from the parts, plus the correction c/u for the rounding of
// 1 + x (c = x - (u - 1) or 1 - (u - x), exact; Goldberg, "What every computer
// scientist should know about floating-point arithmetic", 1991, Theorem 4).
func log1pF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	lHi, lLo, _, _ := logConsts(t, 0)
	res := b.variable(b.fc(t, 0))
	inner := b.and(b.cmp(cGe, x, b.fc(t, math.Sqrt2/2-1)), b.cmp(cLe, x, b.fc(t, math.Sqrt2-1)))
	b.ifElse(inner, func() {
		q := b.horner(x, logPolyF32)
		// x + x²q; x itself for ±0 (the sum would give +0 for -0)
		b.set(res, b.sel(b.cmp(cEq, x, b.fc(t, 0)), x, b.fma(b.mul(x, x), q, x)))
	}, func() {
		u := b.add(x, b.fc(t, 1))
		ef, f, s, special := b.logParts(u)
		big := b.cmp(cGt, u, b.fc(t, 2))
		c := b.sel(big, b.sub(b.fc(t, 1), b.sub(u, x)), b.sub(x, b.sub(u, b.fc(t, 1))))
		c = b.div(c, u)
		v := b.fma(ef, b.fc(t, lHi), b.add(f, b.add(b.fma(ef, b.fc(t, lLo), s), c)))
		b.set(res, v)
		b.ifThen(special, func() {
			b.set(res, b.logSpecial(u, v))
		})
	})
	return res
}
