package ptx

import (
	"math"
	"math/big"
	"sync"
)

// float64 atan, and atan2 for both types.
//
// float64 atan (a table-based reduction in the manner of Tang's methods; Muller,
// "Elementary Functions", on table-based methods): t = |x| in [2^-4, 2^4) falls in one of 128 buckets
// of relative width 1/16 (the exponent and the top 4 significand bits); each holds a
// point c and B = atan(c) (for t < 1) or B = π/2 - atan(c) (for t >= 1, c ≈ 1/t) as a
// double-word. Then
//
//	t < 1:  atan t = B + atan u,  u = (t - c)/(1 + c·t)
//	t >= 1: atan t = B + atan u,  u = (c·t - 1)/(t + c)
//
// with |u| < 1/32 (one division; t - c is exact by Sterbenz, the other sums are
// rounded once, so u carries about 1.5 ulp of relative error, a small fraction of an
// ulp of the result because |u| <= |B|/30). Below 2^-4 and from 2^4 on, c = 0 (u = t,
// exactly, or u = -1/t). atan u = u + u³·P(u²), P minimax on |u| <= 1/16 (relative
// error 2^-62.6). The sign is applied last.
//
// atan2(y, x) reduces to the same table: with p = min(|x|, |y|) and q = max, the bucket
// comes from r = p/q (one division) and u = (p - c·q)/(q + c·p), both sums rounded once
// (so the rounding of r never enters the result) and the quotient corrected by its
// remainder; then atan(p/q) = atan c + atan u,
// and the octant adds π/2 or π: the result is P0 ± (atan c + atan u) with P0 = 0, π/2
// or π as a double-word (Fast2Sum). Operands near the ends of the exponent range are
// scaled by 2^±600 first, zeros, infinities and NaN go through a branch (C99 F.9.1.4).
// float32 atan2 is computed in float64 from p/q (exact enough), a minimax polynomial
// for atan on [0, 1] (relative error 2^-31.2) and one rounding to float32.

func init() {
	register(Atan, atanF32, atanF64)
	register(Atan2, atan2F32, atan2F64)
}

// atan u = u + u³ P(u²), |u| <= 1/16 (float64, relative error 2^-62.6).
var atanPolyF64 = []float64{-0x1.5555555555537p-2, 0x1.999999996312dp-3, -0x1.249248296d3bbp-3,
	0x1.c7187fb7f9e22p-4, -0x1.70c21cea1430cp-4}

// atan t = t + t³ P(t²), 0 <= t <= 1 (evaluated in float64 for float32, relative error
// 2^-31.2).
var atan01PolyF32 = []float64{-0x1.55555104052d1p-2, 0x1.9997e03091edfp-3, -0x1.2473738064093p-3,
	0x1.c4f1e16d6d444p-4, -0x1.68e6fe64bd42ep-4, 0x1.1422c7b01f43fp-4, -0x1.6e19a1b79e9f3p-5,
	0x1.714b1bfd209fcp-6, -0x1.df970b1f74001p-8, 0x1.23f92f48ca9eep-10}

// bigAtan returns atan(c) for 0 <= c <= 1 at 300 bits: halving the argument
// (atan c = 2 atan(c/(1 + sqrt(1 + c²)))) until it is below 2^-10, then the series.
func bigAtan(c *big.Float) *big.Float {
	const prec = 320
	x := new(big.Float).SetPrec(prec).Set(c)
	halvings := 0
	one := new(big.Float).SetPrec(prec).SetInt64(1)
	for x.Sign() != 0 && x.MantExp(nil) > -10 {
		s := new(big.Float).SetPrec(prec).Mul(x, x)
		s.Add(s, one).Sqrt(s).Add(s, one)
		x.Quo(x, s)
		halvings++
	}
	x2 := new(big.Float).SetPrec(prec).Mul(x, x)
	sum := new(big.Float).SetPrec(prec)
	term := new(big.Float).SetPrec(prec).Set(x)
	for k := int64(0); term.Sign() != 0; k++ {
		t := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetInt64(2*k+1))
		if k%2 == 0 {
			sum.Add(sum, t)
		} else {
			sum.Sub(sum, t)
		}
		term.Mul(term, x2)
		if term.MantExp(nil) < -prec-20 {
			break
		}
	}
	return sum.SetMantExp(sum, halvings)
}

// atanTable holds (c, B_hi, B_lo) for entry 0 (t < 2^-4: c = 0, B = 0), the 128
// buckets and entry 129 (t >= 2^4: c = 0, B = π/2).
var atanTable = sync.OnceValue(func() []uint64 {
	halfPi := new(big.Float).SetPrec(320).Quo(bigPi(320), new(big.Float).SetInt64(2))
	var out []uint64
	add := func(c float64, bv *big.Float) {
		h, _ := bv.Float64()
		l, _ := new(big.Float).SetPrec(320).Sub(bv, new(big.Float).SetFloat64(h)).Float64()
		out = append(out, math.Float64bits(c), math.Float64bits(h), math.Float64bits(l))
	}
	add(0, new(big.Float))
	for k := 0; k < 128; k++ {
		a := math.Ldexp(1+float64(k%16)/16, k/16-4) // bucket [a, a·(1 + 1/16·...))
		center := a + math.Ldexp(1, k/16-4)/32
		if a < 1 {
			add(center, bigAtan(new(big.Float).SetPrec(320).SetFloat64(center)))
			continue
		}
		c := 1 / center
		bv := bigAtan(new(big.Float).SetPrec(320).SetFloat64(c))
		add(c, bv.Sub(halfPi, bv))
	}
	add(0, halfPi)
	return out
})

// atanU returns u = (p - c·q)/(q + c·p), so that atan(p/q) = atan c + atan u, as a
// double-word: the quotient's rounding error (remainder/den) matters when c = 0,
// where u is the whole result.
func (b *mb) atanU(p, q, c val) (u, ul val) {
	num := b.fma(b.neg(c), q, p)
	den := b.fma(c, p, q)
	u = b.div(num, den)
	return u, b.mul(b.fma(b.neg(u), den, num), b.rcpApprox(den))
}

// atanIndex returns the table entry for t >= 0 (129 for t >= 16, Inf and NaN).
func (b *mb) atanIndex(t val) val {
	tb := b.bits(t)
	key := b.lo(b.shr(tb, b.u32(48)))
	base := uint32(math.Float64bits(0x1p-4) >> 48)
	idx := b.add(b.sub(key, b.u32(base)), b.u32(1))
	idx = b.sel(b.cmp(cLt, key, b.u32(base)), b.u32(0), idx)
	return b.sel(b.cmp(cGe, key, b.u32(base+128)), b.u32(129), idx)
}

// atanPoly returns atan u = u + (u³·P(u²) + lo).
func (b *mb) atanPoly(u, lo val) val {
	u2 := b.mul(u, u)
	return b.add(u, b.fma(b.mul(u, u2), b.horner(u2, atanPolyF64), lo))
}

func atanF64(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	tbl := b.table("atan_f64", tF64, atanTable())
	i3 := b.mul(b.atanIndex(ax), b.u32(3))
	c := b.load(tbl, i3)
	bh := b.load(tbl, b.add(i3, b.u32(1)))
	bl := b.load(tbl, b.add(i3, b.u32(2)))
	one := b.f64(1)
	ge1 := b.cmp(cGe, ax, one)
	// u = (t - c)/(1 + c·t) below 1, (c·t - 1)/(t + c) from 1 on.
	num := b.sel(ge1, b.fma(c, ax, b.f64(-1)), b.sub(ax, c))
	den := b.sel(ge1, b.add(ax, c), b.fma(c, ax, one))
	u := b.div(num, den)
	v := b.add(bh, b.atanPoly(u, bl))
	v = b.sel(b.cmp(cEq, ax, b.inf(t)), b.f64(math.Pi/2), v)
	return b.sel(b.isNaN(x), b.nan(t), b.withSign(v, x))
}

// atan2Special returns atan2 for operands at least one of which is ±0, ±Inf or NaN,
// as a magnitude (the caller applies the sign of y): with y = ±0, 0 or π by the sign of
// x; with x = ±0, π/2; with both infinite, π/4 or 3π/4; with one infinite, π/2 (y) or
// 0 / π (x).
func (b *mb) atan2Special(y, x, ay, ax val, t vtype) val {
	xNeg := b.cmp(cNe, b.and(b.bits(x), b.uconst(t, 1<<(fpOf(t).mant+fpOf(t).expBits()))), b.uconst(t, 0))
	pi := b.fc(t, math.Pi)
	inf := b.inf(t)
	zero := b.fc(t, 0)
	v := b.sel(xNeg, pi, zero) // y = 0, or x = ±Inf with y finite
	v = b.sel(b.and(b.cmp(cEq, ax, zero), b.cmp(cNe, ay, zero)), b.fc(t, math.Pi/2), v)
	v = b.sel(b.and(b.cmp(cEq, ay, inf), b.cmp(cLt, ax, inf)), b.fc(t, math.Pi/2), v)
	v = b.sel(b.and(b.cmp(cEq, ay, inf), b.cmp(cEq, ax, inf)), b.sel(xNeg, b.fc(t, 3*math.Pi/4), b.fc(t, math.Pi/4)), v)
	return b.sel(b.cmp(cNaN, x, y), b.nan(t), v)
}

func atan2F64(b *mb, t vtype, xs []val) val {
	y, x := xs[0], xs[1]
	ay, ax := b.abs(y), b.abs(x)
	swap := b.cmp(cGt, ay, ax)
	pv := b.variable(b.sel(swap, ax, ay))
	qv := b.variable(b.sel(swap, ay, ax))
	// Keep p and q (and q + c·p) away from overflow and p - c·q away from subnormals.
	b.ifThen(b.or(b.cmp(cGe, qv, b.f64(0x1p901)), b.cmp(cLt, qv, b.f64(0x1p-900))), func() {
		sc := b.sel(b.cmp(cGt, qv, b.f64(1)), b.f64(0x1p-600), b.f64(0x1p600))
		b.set(pv, b.mul(pv, sc))
		b.set(qv, b.mul(qv, sc))
	})
	r := b.div(pv, qv)
	tbl := b.table("atan_f64", tF64, atanTable())
	idx := b.atanIndex(r)
	idx = b.sel(b.cmp(cGt, idx, b.u32(64)), b.u32(64), idx) // r = 1 stays in the last bucket below 1
	i3 := b.mul(idx, b.u32(3))
	c := b.load(tbl, i3)
	ah := b.load(tbl, b.add(i3, b.u32(1)))
	al := b.load(tbl, b.add(i3, b.u32(2)))
	u, ul := b.atanU(pv, qv, c)
	// θ = P0 + σ(A + atan u): P0 = 0, π/2, π, π/2 and σ = +, -, -, + for (swap, x < 0) =
	// (no, no), (yes, no), (no, yes), (yes, yes).
	xNeg := b.cmp(cNe, b.and(b.bits(x), b.u64(signBit64)), b.u64(0))
	neg := b.xor(swap, xNeg)
	p0h, p0l := constDD(piOver2Digits)
	pih, pil := 2*p0h, 2*p0l
	bigP := b.and(xNeg, b.not(swap))
	ph := b.sel(b.or(swap, xNeg), b.sel(bigP, b.f64(pih), b.f64(p0h)), b.f64(0))
	pl := b.sel(b.or(swap, xNeg), b.sel(bigP, b.f64(pil), b.f64(p0l)), b.f64(0))
	flip := func(v val) val { return b.sel(neg, b.neg(v), v) }
	bh, bl := b.fastTwoSum(ph, flip(ah))
	bl = b.add(bl, b.add(pl, flip(b.add(al, ul))))
	v := b.add(bh, b.atanPoly(flip(u), bl))
	res := b.variable(v)
	sp := b.or(b.or(b.cmp(cEq, ax, b.f64(0)), b.cmp(cEq, ay, b.f64(0))),
		b.or(b.cmp(cGeU, ax, b.inf(t)), b.cmp(cGeU, ay, b.inf(t))))
	b.ifThen(sp, func() { b.set(res, b.atan2Special(y, x, ay, ax, t)) })
	return b.sel(b.isNaN(res), res, b.withSign(res, y))
}

func atan2F32(b *mb, t vtype, xs []val) val {
	y, x := xs[0], xs[1]
	ay, ax := b.abs(y), b.abs(x)
	swap := b.cmp(cGt, ay, ax)
	p := b.cvtF(b.sel(swap, ax, ay), tF64)
	q := b.cvtF(b.sel(swap, ay, ax), tF64)
	r := b.div(p, q)
	r2 := b.mul(r, r)
	a := b.fma(b.mul(r, r2), b.horner(r2, atan01PolyF32), r)
	xNeg := b.cmp(cNe, b.and(b.bits(x), b.u32(0x80000000)), b.u32(0))
	neg := b.xor(swap, xNeg)
	bigP := b.and(xNeg, b.not(swap))
	p0 := b.sel(b.or(swap, xNeg), b.sel(bigP, b.f64(math.Pi), b.f64(math.Pi/2)), b.f64(0))
	v := b.cvtF(b.add(p0, b.sel(neg, b.neg(a), a)), tF32)
	res := b.variable(v)
	sp := b.or(b.or(b.cmp(cEq, ax, b.f32(0)), b.cmp(cEq, ay, b.f32(0))),
		b.or(b.cmp(cGeU, ax, b.inf(t)), b.cmp(cGeU, ay, b.inf(t))))
	b.ifThen(sp, func() { b.set(res, b.atan2Special(y, x, ay, ax, t)) })
	return b.sel(b.isNaN(res), res, b.withSign(res, y))
}
