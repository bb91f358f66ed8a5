package ptx

import "math"

// pow.
//
// float32 pow is computed in float64 so that y·log2|x| is exact enough for any y:
// log2|x| = e + log2(1/r_j) + log2(1 + z) with a 128-entry table (Tang's method,
// ACM TOMS 16(4), 1990): j is the top 7 bits of the significand of x taken in
// [sqrt(1/2), sqrt(2)), r_j ≈ 1/c_j has 21 significant bits so z = m·r_j - 1 is exact in
// one fma (m has 24 bits) and |z| < 2^-7; log2(1+z) is its Taylor series to z^7
// (truncation below 2^-56). The bucket holding 1 has r = 1 exactly, so x near 1 keeps
// full relative accuracy. Then 2^w for w = y·log2|x| in float64 (minimax polynomial,
// relative error 2^-45.9) and one final rounding to float32, which also rounds
// subnormal results once. The special cases follow C99 Annex F and Go's math.Pow:
// pow(x, ±0) = 1 and pow(1, y) = 1 even for NaN, pow(-1, ±Inf) = 1, a negative x needs an
// integer y (else NaN), an odd integer y keeps the sign of x.

func init() {
	register(Pow, powF32, nil)
}

// (2^r - 1)/r for |r| <= 1/2, float64 (relative error 2^-45.9).
var exp2PolyF64Short = []float64{0x1.62e42fefa37d1p-1, 0x1.ebfbdff81be06p-3, 0x1.c6b08d70c8814p-5,
	0x1.3b2ab724121bap-7, 0x1.5d87fd9387d94p-10, 0x1.430897f3406b7p-13, 0x1.ffce2fc2ad5f8p-17,
	0x1.63e6965449604p-20, 0x1.b3de2f82ac95fp-24}

// powLog2Tables returns r_j and log2(1/r_j) for the 128 buckets of float32 significands
// in [sqrt(1/2), sqrt(2)).
func powLog2Tables() (r, tl []uint64) {
	base := math.Float32bits(float32(math.Sqrt2 / 2))
	for j := uint32(0); j < 128; j++ {
		lo := float64(math.Float32frombits(base + j<<16))
		hi := float64(math.Float32frombits(base + (j+1)<<16))
		rj := math.Ldexp(math.Round(math.Ldexp(2/(lo+hi), 20)), -20)
		if lo <= 1 && 1 < hi {
			rj = 1
		}
		r = append(r, math.Float64bits(rj))
		tl = append(tl, math.Float64bits(-math.Log2(rj)))
	}
	return r, tl
}

func powF32(b *mb, t vtype, xs []val) val {
	x, y := xs[0], xs[1]
	ax, ay := b.abs(x), b.abs(y)

	// Parity of y: integer, and odd (every float32 of magnitude >= 2^24 is even).
	yInt := b.cmp(cEq, b.rint(y), y)
	yOdd := b.and(b.and(yInt, b.cmp(cLt, ay, b.f32(0x1p24))),
		b.cmp(cNe, b.and(b.cvtFI(y), b.u32(1)), b.u32(0)))
	xNeg := b.cmp(cNe, b.and(b.bits(x), b.u32(0x80000000)), b.u32(0))
	signFlip := b.sel(b.and(xNeg, yOdd), b.u32(0x80000000), b.u32(0))

	// log2|x| in float64; subnormal x scaled by 2^24 first.
	xv := b.variable(ax)
	eb := b.variable(b.u32(0))
	b.ifThen(b.cmp(cLt, b.bits(ax), b.u32(0x800000)), func() {
		b.set(xv, b.mul(ax, b.f32(0x1p24)))
		b.set(eb, b.u32(uint32(-24&0xffffffff)))
	})
	rt, lt := powLog2Tables()
	tr := b.table("pow_log2_r", tF64, rt)
	tt := b.table("pow_log2_t", tF64, lt)
	xb := b.bits(xv)
	ix := b.sub(xb, b.u32(math.Float32bits(float32(math.Sqrt2/2))))
	e := b.add(b.sar(ix, b.u32(23)), eb)
	m := b.cvtF(b.fromBits(b.sub(xb, b.shl(b.sar(ix, b.u32(23)), b.u32(23)))), tF64)
	j := b.and(b.shr(ix, b.u32(16)), b.u32(0x7f))
	z := b.fma(m, b.load(tr, j), b.f64(-1))
	c := make([]float64, 7)
	for k := range c {
		c[k] = math.Log2E / float64(k+1)
		if k%2 == 1 {
			c[k] = -c[k]
		}
	}
	l := b.fma(z, b.horner(z, c), b.add(b.cvtSI(e, tF64), b.load(tt, j)))

	// 2^w, w = y·log2|x| clamped to ±200 (far past overflow and underflow).
	w := b.mul(b.cvtF(y, tF64), l)
	w = b.sel(b.cmp(cGt, w, b.f64(200)), b.f64(200), w)
	w = b.sel(b.cmp(cLt, w, b.f64(-200)), b.f64(-200), w)
	n, s, f, _ := b.expReduce(w, false)
	_ = n
	p := b.fma(b.horner(f, exp2PolyF64Short), f, b.f64(1))
	r32 := b.cvtF(b.mul(p, b.pow2(s, b.u64(0))), tF32)
	res := b.variable(b.fromBits(b.xor(b.bits(r32), signFlip)))
	b.ifThen(b.and(xNeg, b.not(yInt)), func() { b.set(res, b.nan(t)) })

	// Special operands: x = ±0, ±Inf or NaN; y = ±0, ±Inf or NaN.
	xs0 := b.cmp(cGe, b.sub(b.bits(ax), b.u32(1)), b.u32(0x7f7fffff))
	ys0 := b.or(b.cmp(cGeU, ay, b.inf(t)), b.cmp(cEq, y, b.f32(0)))
	b.ifThen(b.or(xs0, ys0), func() {
		inf, zero, one := b.inf(t), b.f32(0), b.f32(1)
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
