package ptx

import (
	"math"
	"math/big"
)

// Trigonometric functions.
//
// Argument reduction: x = j·π/2 + r with |r| <= π/4. For moderate |x| (float32: up
// to 105615) Cody & Waite's method with π/2 in three parts, each product exact inside
// an fma, and the rounding error of the second step recovered with another fma, so r
// is carried as r_hi + r_lo. For larger |x|, Payne & Hanek's method ("Radian reduction
// for trigonometric functions", SIGNUM Newsletter 18(1), 1983): the bits of 2/π that
// matter for |x| = m·2^E are taken from a table, multiplied exactly by the integer
// significand m in 32×32→64-bit pieces, and the two bits left of the binary point give
// j mod 4 while the next 64 bits give r. sin and cos of r are minimax polynomials
// in r², and the quadrant j selects and negates them (Muller, "Elementary Functions",
// ch. 11). The functions are computed for |x| and the sign applied at the end.

// Bits of 2/π, 32 per word, most significant first.
var twoOverPi = []uint64{0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041,
	0xfe5163ab, 0xdebbc561, 0xb7246e3a, 0x424dd2e0, 0x06492eea, 0x09d1921c, 0xfe1deb1c, 0xb129a73e,
	0xe88235f5, 0x2ebb4484, 0xe99c7026, 0xb45f7e41, 0x3991d639, 0x835339f4, 0x9c845f8b, 0xbdf9283b,
	0x1ff897ff, 0xde05980f, 0xef2f118b, 0x5a0a6d1f, 0x6d367ecf, 0x27cb09b7, 0x4f463f66, 0x9e5fea2d,
	0x7527bac7, 0xebe5f17b, 0x3d0739f7, 0x8a5292ea, 0x6bfb5fb1, 0x1f8d5d08, 0x56033046, 0xfc7b6bab}

const piOver2Digits = "1.57079632679489661923132169163975144209858469968755291048747"

// splitConst returns c (decimal digits) as n floats of type t whose sum approximates c,
// each the rounded remainder of the previous ones.
func splitConst(digits string, n int, t vtype) []float64 {
	c, _, err := big.ParseFloat(digits, 10, 400, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	out := make([]float64, n)
	for i := range out {
		var v float64
		if t == tF32 {
			f, _ := c.Float32()
			v = float64(f)
		} else {
			v, _ = c.Float64()
		}
		out[i] = v
		c.Sub(c, new(big.Float).SetFloat64(v))
	}
	return out
}

// sin(r) = r + r³ S(r²) and cos(r) = 1 + r² C(r²) for |r| <= π/4 (float32; relative
// errors 2^-37.5 and 2^-33.9).
var sinPolyF32 = []float64{-0x1.555556p-3, 0x1.111108p-7, -0x1.a00f8p-13, 0x1.6cd1f2p-19}
var cosPolyF32 = []float64{-0x1p-1, 0x1.55553cp-5, -0x1.6c07f2p-10, 0x1.9916ap-16}

// tan(r) = r + r³ T(r²), |r| <= π/4 (float32, relative error 2^-29.6).
var tanPolyF32 = []float64{0x1.55556p-2, 0x1.110d8ep-3, 0x1.badbep-5, 0x1.5cafep-6, 0x1.6311c6p-7,
	0x1.77588ap-14, 0x1.1ece02p-8}

// reduceF32 returns r_hi + r_lo ≈ ax - j·π/2 and j (u32) for ax = |x| (or NaN/Inf,
// which give garbage the callers replace).
func (b *mb) reduceF32(ax val) (rhi, rlo, j val) {
	t := tF32
	c := splitConst(piOver2Digits, 3, t)
	sh := b.f32(0x1.8p23)
	s := b.fma(ax, b.f32(float32(2/math.Pi)), sh)
	jf := b.sub(s, sh)
	r1 := b.fma(jf, b.fc(t, -c[0]), ax) // exact
	// r1 - jf·c1 with jf·c1 = zh + zl exactly and Knuth's TwoSum for r1 - zh.
	zh := b.mul(jf, b.fc(t, c[1]))
	zl := b.fma(jf, b.fc(t, c[1]), b.neg(zh))
	r2 := b.sub(r1, zh)
	bb := b.sub(r2, r1)
	e := b.add(b.sub(r1, b.sub(r2, bb)), b.sub(b.neg(zh), bb))
	lo := b.fma(jf, b.fc(t, -c[2]), b.sub(e, zl))
	rh := b.add(r2, lo)
	rl := b.add(b.sub(r2, rh), lo)
	vh, vl := b.variable(rh), b.variable(rl)
	vj := b.variable(b.sub(b.bits(s), b.bits(sh)))
	b.ifThen(b.cmp(cGtU, ax, b.f32(105615)), func() {
		h, l, jj := b.payneHanekF32(ax)
		b.set(vh, h)
		b.set(vl, l)
		b.set(vj, jj)
	})
	return vh, vl, vj
}

// payneHanekF32 reduces a large positive float32 (see the file comment).
func (b *mb) payneHanekF32(ax val) (rhi, rlo, j val) {
	tbl := b.table("two_over_pi_u32", tU32, append([]uint64{0}, twoOverPi[:7]...))
	xb := b.bits(ax)
	m := b.or(b.and(xb, b.u32(0x7fffff)), b.u32(0x800000))
	// |x| = m·2^E, E = exponent - 150; the first bit needed is 2/π's bit E-1 (weight 2),
	// at position E+30 of the table padded with one zero word.
	k0 := b.sub(b.shr(xb, b.u32(23)), b.u32(120)) // E + 30
	w := b.shr(k0, b.u32(5))
	sh := b.and(k0, b.u32(31))
	ish := b.sub(b.u32(32), sh)
	t0 := b.load(tbl, w)
	t1 := b.load(tbl, b.add(w, b.u32(1)))
	t2 := b.load(tbl, b.add(w, b.u32(2)))
	t3 := b.load(tbl, b.add(w, b.u32(3)))
	w0 := b.or(b.shl(t0, sh), b.shr(t1, ish))
	w1 := b.or(b.shl(t1, sh), b.shr(t2, ish))
	w2 := b.or(b.shl(t2, sh), b.shr(t3, ish))
	// P = m·(w0·2^64 + w1·2^32 + w2); y = P·2^-94.
	p2 := b.mulwide(m, w2)
	p1 := b.mulwide(m, w1)
	p0 := b.mulwide(m, w0)
	a := b.add(b.shr(p2, b.u32(32)), p1)
	bb := b.add(p0, b.shr(a, b.u32(32)))
	q := b.and(b.lo(b.shr(bb, b.u32(30))), b.u32(3))
	f := b.or(b.or(b.shl(bb, b.u32(34)), b.shl(b.and(a, b.u64(0xffffffff)), b.u32(2))),
		b.shr(b.and(p2, b.u64(0xffffffff)), b.u32(30)))
	// round to the nearest quadrant: the fraction as a signed 64-bit number
	j = b.add(q, b.lo(b.shr(f, b.u32(63))))
	d := b.mul(b.cvtSI(f, tF64), b.f64(math.Pi/2*0x1p-64))
	rhi = b.cvtF(d, tF32)
	rlo = b.cvtF(b.sub(d, b.cvtF(rhi, tF64)), tF32)
	return rhi, rlo, j
}

// sinCosPolyF32 returns sin(r) and cos(r) for r = rh + rl.
func (b *mb) sinPolyF32(rh, rl, r2 val) val {
	return b.add(rh, b.fma(b.mul(rh, r2), b.horner(r2, sinPolyF32), rl))
}

func (b *mb) cosPolyF32(rh, rl, r2 val) val {
	return b.add(b.f32(1), b.fma(r2, b.horner(r2, cosPolyF32), b.neg(b.mul(rh, rl))))
}

// trigF32 computes sin (cos when cos is true) of x.
func (b *mb) trigF32(x val, cos bool) val {
	ax := b.abs(x)
	rh, rl, j := b.reduceF32(ax)
	r2 := b.mul(rh, rh)
	s := b.sinPolyF32(rh, rl, r2)
	c := b.cosPolyF32(rh, rl, r2)
	if cos {
		j = b.add(j, b.u32(1))
	}
	odd := b.cmp(cNe, b.and(j, b.u32(1)), b.u32(0))
	v := b.sel(odd, c, s)
	sign := b.shl(b.and(j, b.u32(2)), b.u32(30))
	if !cos {
		sign = b.xor(sign, b.and(b.bits(x), b.u32(0x80000000)))
	}
	v = b.fromBits(b.xor(b.bits(v), sign))
	return b.sel(b.cmp(cGeU, ax, b.inf(tF32)), b.nan(tF32), v)
}

func sinF32(b *mb, t vtype, x []val) val { return b.trigF32(x[0], false) }
func cosF32(b *mb, t vtype, x []val) val { return b.trigF32(x[0], true) }

// tan: t = tan(r) as t_hi + t_lo; in odd quadrants -1/t, with the quotient corrected
// for t_lo and its own rounding by one Newton-like step (q + q·(e + q·t_lo) where
// e = 1 + q·t_hi from an fma).
func tanF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	rh, rl, j := b.reduceF32(ax)
	r2 := b.mul(rh, rh)
	w := b.fma(b.mul(rh, r2), b.horner(r2, tanPolyF32), b.fma(rl, r2, rl))
	th := b.add(rh, w)
	tl := b.add(b.sub(rh, th), w)
	q := b.div(b.f32(-1), th)
	e := b.fma(q, th, b.f32(1))
	cot := b.fma(q, b.fma(q, tl, e), q)
	odd := b.cmp(cNe, b.and(j, b.u32(1)), b.u32(0))
	v := b.sel(odd, cot, th)
	v = b.fromBits(b.xor(b.bits(v), b.and(b.bits(x), b.u32(0x80000000))))
	return b.sel(b.cmp(cGeU, ax, b.inf(tF32)), b.nan(tF32), v)
}
