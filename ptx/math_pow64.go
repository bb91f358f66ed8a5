package ptx

import (
	"math"
	"math/big"
	"sync"
)

// float64 pow, and the extra-precise logarithm and exponential it is built from (also
// used by log1p and the inverse hyperbolic functions).
//
// logPrec64 (Tang, "Table-driven implementation of the logarithm function in IEEE
// floating-point arithmetic", ACM TOMS 16(4), 1990): x = 2^e·m, m in [sqrt(1/2),
// sqrt(2)); j = the top 7 bits of m's offset from sqrt(1/2); r_j is a short
// approximation of 1/m on bucket j (a multiple of 2^-7 below 1, of 2^-8 above, chosen
// so that |m·r_j - 1| < 2^-7 over the whole bucket), which makes z = m·r_j - 1 exact in
// one fma (it is a multiple of 2^-60 smaller than 2^-7). The bucket holding 1 has
// r_j = 1. log x = (e·ln2_hi + T_hi) + log1p(z) + (e·ln2_lo + T_lo) with T = -log r_j,
// T_hi on the 2^-42 grid of ln2_hi so that the first sum is exact; log1p(z) = z - z²/2 +
// z³·P(z) with z - z²/2 a double-word (z² split exactly by an fma) and P minimax
// (relative error 2^-73.8). The result is a double-word hi + lo with a relative error
// of about 2^-68 (2^-66 next to 1, where the sum cancels least well).
//
// expDD64 computes e^(wh + wl) for a double-word argument (Tang, "Table-driven
// implementation of the exponential function in IEEE floating-point arithmetic", ACM
// TOMS 15(2), 1989): k = rint(wh·128/ln2), r = wh - k·ln2/128 with ln2/128 in two parts
// (the first product exact: 35 bits times |k| < 2^18), plus wl; e^r - 1 = r + r²·Q(r) on
// |r| <= ln2/256 (Q minimax, error 2^-77); e^w = 2^(k/128 integer part) · T[k mod 128] ·
// (1 + p) with T = 2^(i/128) as a double-word. Results near overflow and in the
// subnormal range are scaled in two steps in a branch so the final rounding happens
// once (subnormal results round twice: at most one subnormal ulp).
//
// pow(x, y) = ±e^(y·log|x|) with y·log|x| formed as a double-word (TwoProduct): the
// error of the product is then below 2^-60 relative to the result for every |y·log x|
// up to the overflow threshold, and the result is within about 0.52 ulp. Special cases
// follow C99 Annex F (F.9.4.4) and Go's math.Pow, as for float32: pow(x, ±0) = 1 and
// pow(1, y) = 1 even for NaN, pow(-1, ±Inf) = 1, a negative finite x needs an integer y
// (else NaN) and an odd integer y keeps its sign, ±0 and ±Inf by the sign of y and
// its parity.

func init() {
	register(Pow, powF32, powF64)
	register(Log1p, log1pF32, log1pF64)
}

// log1p(z) = z - z²/2 + z³ P(z), |z| <= 2^-7 (float64, relative error 2^-73.8).
var powLogPoly = []float64{0x1.5555555555555p-2, -0x1.0000000000067p-2, 0x1.9999999999b0fp-3,
	-0x1.555555449c66bp-3, 0x1.249249100f582p-3, -0x1.00068f7fc8152p-3, 0x1.c729cc57737efp-4}

// e^r = 1 + r + r² Q(r), |r| <= ln2/256 (float64, relative error 2^-77.3).
var powExpPoly = []float64{0x1.0000000000000p-1, 0x1.5555555555490p-3, 0x1.55555555558fdp-5,
	0x1.111115b78979ep-7, 0x1.6c16b98151466p-10}

// logPrecTables returns r_j, T_hi and T_lo for the 128 buckets of logPrec64.
var logPrecTables = sync.OnceValue(func() (tbl [3][]uint64) {
	base := math.Float64bits(math.Sqrt2 / 2)
	for j := uint64(0); j < 128; j++ {
		lo := math.Float64frombits(base + j<<45)
		hi := math.Float64frombits(base + (j+1)<<45)
		var rj float64
		switch {
		case lo <= 1 && 1 < hi:
			rj = 1
		case hi <= 1:
			rj = math.Ldexp(math.Round(math.Ldexp(2/(lo+hi), 7)), -7)
		default:
			rj = math.Ldexp(math.Round(math.Ldexp(2/(lo+hi), 8)), -8)
		}
		if rj != 1 && (math.Abs(lo*rj-1) >= 0x1p-7 || math.Abs(hi*rj-1) >= 0x1p-7) {
			panic("ptx: logPrec64 table: z out of range")
		}
		// T = -log(r_j) = log(1/r_j): log of a number in [0.5, 2] by its series.
		t := bigLogSmall(rj)
		t.Neg(t)
		tf, _ := t.Float64()
		th := math.Ldexp(math.Round(math.Ldexp(tf, 42)), -42)
		tl, _ := new(big.Float).SetPrec(300).Sub(t, new(big.Float).SetFloat64(th)).Float64()
		tbl[0] = append(tbl[0], math.Float64bits(rj))
		tbl[1] = append(tbl[1], math.Float64bits(th))
		tbl[2] = append(tbl[2], math.Float64bits(tl))
	}
	return tbl
})

// ln2 in two parts: 42 bits (e·hi exact for |e| < 2^11) and the rounded rest.
func ln2Parts() (hi, lo float64) {
	c := bigConst(ln2Digits)
	f, _ := c.Float64()
	hi = math.Float64frombits(math.Float64bits(f) &^ 0x7ff)
	lo, _ = new(big.Float).SetPrec(300).Sub(c, new(big.Float).SetFloat64(hi)).Float64()
	return hi, lo
}

// logPrec64 returns log(x + xl) as a double-word for x positive and finite
// (subnormals included; other x give garbage). xl (0: none) is a low part, |xl| <=
// ulp(x), for x in [2^-1000, 2^1000]: it joins z exactly scaled, since
// log(x + xl) = log(2^e·m·r_j·(1 + xl/x)) and (1 + z)·xl/x = r_j·xl·2^-e, so that
// log1p(z + zl) = log1p(z) + zl·(1 - z) to 2^-14 of zl.
func (b *mb) logPrec64(x, xl val) (hi, lo val) {
	xv := b.variable(x)
	eb := b.variable(b.u64(0))
	b.ifThen(b.cmp(cLt, b.bits(x), b.u64(1<<52)), func() {
		b.set(xv, b.mul(x, b.f64(0x1p52)))
		b.set(eb, b.u64(uint64(1<<64-52)))
	})
	lt := logPrecTables()
	tr, tth, ttl := b.table("logp_r", tF64, lt[0]), b.table("logp_thi", tF64, lt[1]), b.table("logp_tlo", tF64, lt[2])
	xb := b.bits(xv)
	ix := b.sub(xb, b.u64(math.Float64bits(math.Sqrt2/2)))
	e := b.sar(ix, b.u32(52))
	m := b.fromBits(b.sub(xb, b.shl(e, b.u32(52))))
	j := b.lo(b.and(b.shr(ix, b.u32(45)), b.u64(0x7f)))
	ef := b.cvtSI(b.add(e, eb), tF64)
	r := b.load(tr, j)
	z := b.fma(m, r, b.f64(-1)) // exact
	l2h, l2l := ln2Parts()
	zz, zzl := b.twoProd(z, z)
	s1, e1 := b.fastTwoSum(z, b.mul(zz, b.f64(-0.5)))
	low := b.fma(zzl, b.f64(-0.5), e1)
	if xl != 0 {
		// 2^-e for e in [-1000, 1000] (xl is 0 outside)
		ec := b.sel(b.cmp(cSGt, e, b.u64(1000)), b.u64(1000), e)
		ec = b.sel(b.cmp(cSLt, ec, b.u64(uint64(1<<64-1000))), b.u64(uint64(1<<64-1000)), ec)
		zl := b.mul(b.mul(xl, r), b.fromBits(b.shl(b.sub(b.u64(1023), ec), b.u32(52))))
		low = b.add(low, b.fma(b.neg(zl), z, zl))
	}
	low = b.fma(b.mul(z, zz), b.horner(z, powLogPoly), low)
	low = b.add(low, b.fma(ef, b.f64(l2l), b.load(ttl, j)))
	a := b.fma(ef, b.f64(l2h), b.load(tth, j)) // exact
	h, l := b.twoSum(a, s1)
	return b.fastTwoSum(h, b.add(l, low))
}

// exp2Table returns 2^(i/128) for i = 0..127 as double-words (hi, lo).
var exp2Table = sync.OnceValue(func() []uint64 {
	const prec = 400
	r := new(big.Float).SetPrec(prec).SetInt64(2)
	for range 7 {
		r.Sqrt(r)
	}
	p := new(big.Float).SetPrec(prec).SetInt64(1)
	var out []uint64
	for range 128 {
		h, _ := p.Float64()
		l, _ := new(big.Float).SetPrec(prec).Sub(p, new(big.Float).SetFloat64(h)).Float64()
		out = append(out, math.Float64bits(h), math.Float64bits(l))
		p.Mul(p, r)
	}
	return out
})

// expDD64 returns e^(wh + wl) (see the file comment); wl must be small (|wl| <=
// ulp(wh)) and finite when |wh| <= 746. NaN wh gives NaN.
func (b *mb) expDD64(wh, wl val) val {
	tbl := b.table("exp2_128", tF64, exp2Table())
	// ln2/128 = chi + clo, chi with 35 significant bits.
	c := new(big.Float).SetPrec(300).Quo(bigConst(ln2Digits), new(big.Float).SetInt64(128))
	cf, _ := c.Float64()
	chi := math.Float64frombits(math.Float64bits(cf) &^ (1<<18 - 1))
	clo, _ := new(big.Float).SetPrec(300).Sub(c, new(big.Float).SetFloat64(chi)).Float64()
	sh := b.f64(0x1.8p52)
	s := b.fma(wh, b.f64(128/math.Ln2), sh)
	kf := b.sub(s, sh)
	rh := b.fma(kf, b.f64(-chi), wh) // exact
	rt := b.fma(kf, b.f64(-clo), wl)
	rr := b.add(rh, rt)
	p := b.add(rh, b.fma(b.mul(rr, rr), b.horner(rr, powExpPoly), rt))
	k := b.sub(b.bits(s), b.bits(sh)) // k as a 64-bit two's complement integer
	i := b.lo(b.and(k, b.u64(127)))
	ke := b.sar(k, b.u32(7))
	th := b.load(tbl, b.mul(i, b.u32(2)))
	tl := b.load(tbl, b.add(b.mul(i, b.u32(2)), b.u32(1)))
	v := b.add(th, b.fma(th, p, b.fma(tl, p, tl)))
	res := b.variable(v)
	b.ifElse(b.cmp(cGeU, b.abs(wh), b.f64(707)), func() {
		// 2^ke·v in two steps, 2^(ke-adj)·v exact and ·2^adj rounding once.
		pos := b.cmp(cGt, wh, b.f64(0))
		adj := b.sel(pos, b.u64(1), b.u64(uint64(1<<64-64)))
		s1 := b.fromBits(b.shl(b.add(b.sub(ke, adj), b.u64(1023)), b.u32(52)))
		s2 := b.fromBits(b.shl(b.add(adj, b.u64(1023)), b.u32(52)))
		u := b.mul(b.mul(v, s1), s2)
		u = b.sel(b.cmp(cGt, wh, b.f64(710)), b.inf(tF64), u)
		u = b.sel(b.cmp(cLt, wh, b.f64(-746)), b.f64(0), u)
		b.set(res, b.sel(b.isNaN(wh), b.nan(tF64), u))
	}, func() {
		b.set(res, b.mul(v, b.fromBits(b.shl(b.add(ke, b.u64(1023)), b.u32(52)))))
	})
	return res
}

func powF64(b *mb, t vtype, xs []val) val {
	x, y := xs[0], xs[1]
	ax, ay := b.abs(x), b.abs(y)
	zero, one := b.f64(0), b.f64(1)

	// Parity of y: integer, and odd (y/2 is exact; every float64 of magnitude >= 2^53
	// is even).
	yInt := b.cmp(cEq, b.rint(y), y)
	hy := b.mul(y, b.f64(0.5))
	yOdd := b.and(yInt, b.cmp(cNe, b.rint(hy), hy))
	xNeg := b.cmp(cNe, b.and(b.bits(x), b.u64(signBit64)), b.u64(0))
	signFlip := b.sel(b.and(xNeg, yOdd), b.u64(signBit64), b.u64(0))

	lh, ll := b.logPrec64(ax, 0)
	wh, wl := b.twoProd(y, lh)
	wl = b.fma(y, ll, wl)
	r := b.expDD64(wh, wl)
	res := b.variable(b.fromBits(b.xor(b.bits(r), signFlip)))
	b.ifThen(b.and(xNeg, b.not(yInt)), func() { b.set(res, b.nan(t)) })

	// Special operands: x = ±0, ±Inf or NaN; y = ±0, ±Inf or NaN.
	xs0 := b.cmp(cGe, b.sub(b.bits(ax), b.u64(1)), b.u64(0x7fefffffffffffff))
	ys0 := b.or(b.cmp(cGeU, ay, b.inf(t)), b.cmp(cEq, y, zero))
	b.ifThen(b.or(xs0, ys0), func() {
		inf := b.inf(t)
		// x = ±0 or ±Inf: |x|^y is Inf when (x is 0) == (y < 0), else 0; odd y keeps the sign.
		big := b.cmp(cEq, b.sel(b.cmp(cEq, ax, zero), b.u32(1), b.u32(0)),
			b.sel(b.cmp(cLt, y, zero), b.u32(1), b.u32(0)))
		v := b.fromBits(b.xor(b.bits(b.sel(big, inf, zero)), signFlip))
		// y = ±Inf: 1 if |x| = 1, 0 if (|x| < 1) == (y > 0), else Inf.
		small := b.cmp(cEq, b.sel(b.cmp(cLt, ax, one), b.u32(1), b.u32(0)),
			b.sel(b.cmp(cGt, y, zero), b.u32(1), b.u32(0)))
		vi := b.sel(b.cmp(cEq, ax, one), one, b.sel(small, zero, inf))
		v = b.sel(b.cmp(cEq, ay, inf), vi, v)
		v = b.sel(b.or(b.isNaN(x), b.isNaN(y)), b.nan(t), v)
		v = b.sel(b.cmp(cEq, x, one), one, v)
		v = b.sel(b.cmp(cEq, y, zero), one, v)
		b.set(res, v)
	})
	return res
}

// logW returns log(wh + wl) rounded, for wh positive finite, wh >= 2^-1000 and
// |wl| <= ulp(wh) (wl is dropped past 2^1000, where it is negligible): logPrec64 with
// the low part folded into its reduced argument, so it is as accurate near 1, where
// log wh is small, as elsewhere.
func (b *mb) logW(wh, wl val) val {
	wl = b.sel(b.cmp(cGt, wh, b.f64(0x1p1000)), b.f64(0), wl)
	h, l := b.logPrec64(wh, wl)
	return b.add(h, l)
}

// log1p(x) = log(u) + c/u with u = RN(1 + x) and c = 1 + x - u exact (Fast2Sum);
// Goldberg, "What every computer scientist should know about floating-point
// arithmetic", 1991, Theorem 4, in double-word form (c joins logPrec64's reduced
// argument); below 2^-20 the series x - x²/2 + x³/3.
func log1pF64(b *mb, t vtype, xs []val) val {
	x := xs[0]
	one := b.f64(1)
	u := b.add(x, one)
	c := b.sel(b.cmp(cGe, b.abs(x), one), b.sub(one, b.sub(u, x)), b.sub(x, b.sub(u, one)))
	v := b.logW(u, c)
	// below 2^-20: x - x²/2 + x³/3 (logW drops the square of c, which matters there)
	v = b.sel(b.cmp(cLt, b.abs(x), b.f64(0x1p-20)), b.fma(b.mul(x, x), b.fma(x, b.f64(1.0/3), b.f64(-0.5)), x), v)
	res := b.variable(v)
	// x = ±0 keeps its sign; not in (-1, +Inf): -1 → -Inf, below or NaN → NaN, +Inf → +Inf.
	b.ifThen(b.or(b.cmp(cGe, b.sub(b.bits(u), b.u64(1)), b.u64(0x7fefffffffffffff)), b.cmp(cEq, x, b.f64(0))), func() {
		w := b.sel(b.cmp(cEq, x, b.inf(t)), x, b.nan(t))
		w = b.sel(b.cmp(cEq, u, b.f64(0)), b.neg(b.inf(t)), w)
		b.set(res, b.sel(b.cmp(cEq, x, b.f64(0)), x, w))
	})
	return res
}
