package ptx

import (
	"math"
	"math/big"
	"sync"
)

// float64 sine, cosine and tangent.
//
// Argument reduction x = j·π/2 + r, |r| <= π/4, r kept as a double-word r_hi + r_lo:
//
//   - |x| < 2^28: Cody & Waite ("Software Manual for the Elementary Functions", 1980)
//     with π/2 = c0 + c1 + c2 (53 + 53 + 53 bits). j = rint(x·2/π) comes from one
//     fma with the 1.5·2^52 shifter. x - j·c0 is exact in one fma (it is a multiple of
//     2^-53 below 1 in magnitude), j·c1 is split exactly (TwoProduct) and subtracted with
//     TwoSum, and j·c2 goes into the low part. The error is below 2^-131, while no
//     float64 under 2^28 lies closer than about 2^-60 to a multiple of π/2.
//   - larger |x| (and Inf/NaN, replaced at the end): Payne & Hanek ("Radian reduction for
//     trigonometric functions", SIGNUM Newsletter 18(1), 1983). With |x| = m·2^E (m the
//     53-bit integer significand), only the bits of 2/π of weights 2^(1-E) and below
//     matter modulo 4; 192 of them are read from a table (tbl: 2/π in 64-bit words,
//     after one word of zeros), multiplied by m in 64×64→128-bit pieces keeping the low
//     192 bits of the product. Its top two bits are j mod 4, the rest is the fraction
//     (rounded to the nearest quadrant by reading it as a signed number), converted to
//     a double-word through three exact 52-bit pieces and multiplied by π/2. The table
//     tail beyond the 192 bits contributes less than 2^-136, against |r| >= 2^-61 for
//     every float64 (the worst case, found by Lefèvre and Muller, is in Muller's
//     "Elementary Functions", in the chapter on range reduction).
//
// sin r = r + r³·S(r²) and cos r = 1 - r²/2 + r⁴·C(r²), S and C minimax (internal/remez;
// relative errors 2^-68.7 and 2^-64), with the low part of r and the rounding error of
// r² carried into the small terms and 1 - r²/2 formed exactly (Fast2Sum). Both are
// computed and the quadrant picks one and its sign. tan = sin/cos (or -cos/sin in odd
// quadrants) from the double-word sine and cosine: the rounded quotient q, the exact
// remainder of the division by fma, and the correction (remainder + the low parts)/den.

func init() {
	register(Sin, sinF32, sinF64)
	register(Cos, cosF32, cosF64)
	register(Tan, tanF32, tanF64)
}

// sin r = r + r³ S(r²), |r| <= π/4 (float64, relative error 2^-68.7).
var sinPolyF64 = []float64{-0x1.5555555555555p-3, 0x1.111111111110bp-7, -0x1.a01a01a018a6dp-13,
	0x1.71de3a53308b8p-19, -0x1.ae64528d7e59ep-26, 0x1.61208c47c61c7p-33, -0x1.aaa2471038fa4p-41}

// cos r = 1 - r²/2 + r⁴ C(r²), |r| <= π/4 (float64, relative error 2^-64).
var cosPolyF64 = []float64{0x1.555555555554bp-5, -0x1.6c16c16c14f91p-10, 0x1.a01a019c844f5p-16,
	-0x1.27e4f7eac4bd7p-22, 0x1.1ee9d7b4e4735p-29, -0x1.8fa49a08829dep-37}

// bigPi returns π to prec bits (Machin's formula, π = 16 atan(1/5) - 4 atan(1/239)).
func bigPi(prec uint) *big.Float {
	atanInv := func(n int64) *big.Float {
		x := new(big.Float).SetPrec(prec).Quo(new(big.Float).SetPrec(prec).SetInt64(1), new(big.Float).SetInt64(n))
		x2 := new(big.Float).SetPrec(prec).Mul(x, x)
		sum := new(big.Float).SetPrec(prec)
		term := new(big.Float).SetPrec(prec).Set(x)
		for k := int64(0); ; k++ {
			t := new(big.Float).SetPrec(prec).Quo(term, new(big.Float).SetInt64(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, t)
			} else {
				sum.Sub(sum, t)
			}
			term.Mul(term, x2)
			if term.Sign() == 0 || term.MantExp(nil) < -int(prec)-16 {
				return sum
			}
		}
	}
	a := atanInv(5)
	a.Mul(a, new(big.Float).SetInt64(16))
	c := atanInv(239)
	c.Mul(c, new(big.Float).SetInt64(4))
	return a.Sub(a, c)
}

// twoOverPi64 returns 2/π in 64-bit words after one word of zeros: word k (k >= 1)
// holds the fraction bits 64(k-1)+1 ... 64k.
var twoOverPi64 = sync.OnceValue(func() []uint64 {
	const words = 20
	p := bigPi(64*words + 64)
	t := new(big.Float).SetPrec(64*words+64).Quo(new(big.Float).SetInt64(2), p)
	out := []uint64{0}
	for range words - 1 {
		t.SetMantExp(t, 64)
		i, _ := t.Int(nil)
		out = append(out, i.Uint64())
		t.Sub(t, new(big.Float).SetInt(i))
	}
	// The float32 reduction's 32-bit table must agree.
	for k, w := range twoOverPi {
		if uint64(uint32(out[1+k/2]>>(32*(1-k%2)))) != w {
			panic("ptx: 2/π tables disagree")
		}
	}
	return out
})

// reduceF64 returns r_hi + r_lo ≈ ax - j·π/2 and j (u32, only j mod 4 matters) for
// ax = |x|; Inf and NaN give garbage the callers replace.
func (b *mb) reduceF64(ax val) (rhi, rlo, j val) {
	c := splitConst(piOver2Digits, 3, tF64)
	sh := b.f64(0x1.8p52)
	s := b.fma(ax, b.f64(2/math.Pi), sh)
	jf := b.sub(s, sh)
	r1 := b.fma(jf, b.f64(-c[0]), ax) // exact
	ph, pl := b.twoProd(jf, b.f64(c[1]))
	r2, e := b.twoSum(r1, b.neg(ph))
	lo := b.fma(jf, b.f64(-c[2]), b.sub(e, pl))
	h, l := b.fastTwoSum(r2, lo)
	vh, vl := b.variable(h), b.variable(l)
	vj := b.variable(b.lo(b.sub(b.bits(s), b.bits(sh))))
	b.ifThen(b.cmp(cGeU, ax, b.f64(0x1p28)), func() {
		h, l, jj := b.payneHanekF64(ax)
		b.set(vh, h)
		b.set(vl, l)
		b.set(vj, jj)
	})
	return vh, vl, vj
}

// payneHanekF64 reduces a large positive float64 (see the file comment).
func (b *mb) payneHanekF64(ax val) (rhi, rlo, j val) {
	tbl := b.table("two_over_pi_u64", tU64, twoOverPi64())
	xb := b.bits(ax)
	m := b.or(b.and(xb, b.u64(1<<52-1)), b.u64(1<<52))
	// |x| = m·2^E with E = biased exponent - 1075; the first bit needed is 2/π's bit
	// E-1 (weight 2 in x·2/π), at position E-1+63 of the table padded with 64 zeros.
	p := b.sub(b.lo(b.shr(xb, b.u32(52))), b.u32(1075+1-63))
	w := b.shr(p, b.u32(6))
	sh := b.and(p, b.u32(63))
	ish := b.sub(b.u32(64), sh)
	t := make([]val, 4)
	for i := range t {
		t[i] = b.load(tbl, b.add(w, b.u32(uint32(i))))
	}
	word := func(i int) val { return b.or(b.shl(t[i], sh), b.shr(t[i+1], ish)) }
	w0, w1, w2 := word(0), word(1), word(2)
	// P = m·(w0·2^128 + w1·2^64 + w2) mod 2^192; x·2/π ≡ P·2^-190 (mod 4).
	l2, h2 := b.mul(m, w2), b.mulhi(m, w2)
	l1, h1 := b.mul(m, w1), b.mulhi(m, w1)
	l0 := b.mul(m, w0)
	p0 := l2
	p1 := b.add(h2, l1)
	carry := b.sel(b.cmp(cLt, p1, h2), b.u64(1), b.u64(0))
	p2 := b.add(b.add(h1, l0), carry)
	// The fraction F·2^-192 with F = P·4 mod 2^192, read as signed: x·2/π = j + F·2^-192.
	f2 := b.or(b.shl(p2, b.u32(2)), b.shr(p1, b.u32(62)))
	f1 := b.or(b.shl(p1, b.u32(2)), b.shr(p0, b.u32(62)))
	f0 := b.shl(p0, b.u32(2))
	j = b.add(b.lo(b.shr(p2, b.u32(62))), b.lo(b.shr(f2, b.u32(63))))
	v1 := b.sar(f2, b.u32(12))
	v2 := b.or(b.shl(b.and(f2, b.u64(0xfff)), b.u32(40)), b.shr(f1, b.u32(24)))
	v3 := b.or(b.shl(b.and(f1, b.u64(0xffffff)), b.u32(28)), b.shr(f0, b.u32(36)))
	d1 := b.mul(b.cvtSI(v1, tF64), b.f64(0x1p-52))
	d2 := b.mul(b.cvtSI(v2, tF64), b.f64(0x1p-104))
	d3 := b.mul(b.cvtSI(v3, tF64), b.f64(0x1p-156))
	fh, fe := b.fastTwoSum(d1, d2) // |d1| >= 2^-52 > |d2| unless d1 = 0
	fl := b.add(fe, d3)
	ph, pl := constDD(piOver2Digits)
	rh, re := b.twoProd(fh, b.f64(ph))
	re = b.add(re, b.fma(fh, b.f64(pl), b.mul(fl, b.f64(ph))))
	rhi, rlo = b.fastTwoSum(rh, re)
	return rhi, rlo, j
}

// sinCosF64 returns sin r and cos r as double-words for r = rh + rl, |r| <= π/4.
func (b *mb) sinCosF64(rh, rl val) (sh, sl, ch, cl val) {
	z := b.mul(rh, rh)
	hz := b.mul(z, b.f64(0.5))
	// sin: rh + (rh³·S + rl·(1 - r²/2))
	ts := b.fma(b.mul(rh, z), b.horner(z, sinPolyF64), b.fma(b.neg(hz), rl, rl))
	sh, sl = b.fastTwoSum(rh, ts)
	// cos: (1 - z/2) exactly as w + ew, then z²·C - zl/2 - rh·rl
	zl := b.fma(rh, rh, b.neg(z))
	one := b.f64(1)
	w := b.sub(one, hz)
	ew := b.sub(b.sub(one, w), hz)
	tc := b.add(ew, b.fma(b.mul(z, z), b.horner(z, cosPolyF64), b.neg(b.fma(zl, b.f64(0.5), b.mul(rh, rl)))))
	ch, cl = b.fastTwoSum(w, tc)
	return sh, sl, ch, cl
}

const signBit64 = 1 << 63

// trigF64 computes sin (cos when cos is true) of x.
func (b *mb) trigF64(x val, cos bool) val {
	ax := b.abs(x)
	rh, rl, j := b.reduceF64(ax)
	s, _, c, _ := b.sinCosF64(rh, rl)
	if cos {
		j = b.add(j, b.u32(1))
	}
	odd := b.cmp(cNe, b.and(j, b.u32(1)), b.u32(0))
	v := b.sel(odd, c, s)
	sign := b.shl(b.zext(b.and(j, b.u32(2))), b.u32(62))
	if !cos {
		sign = b.xor(sign, b.and(b.bits(x), b.u64(signBit64)))
	}
	v = b.fromBits(b.xor(b.bits(v), sign))
	return b.sel(b.cmp(cGeU, ax, b.inf(tF64)), b.nan(tF64), v)
}

func sinF64(b *mb, t vtype, x []val) val { return b.trigF64(x[0], false) }
func cosF64(b *mb, t vtype, x []val) val { return b.trigF64(x[0], true) }

func tanF64(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	rh, rl, j := b.reduceF64(ax)
	sh, sl, ch, cl := b.sinCosF64(rh, rl)
	odd := b.cmp(cNe, b.and(j, b.u32(1)), b.u32(0))
	// tan = s/c in even quadrants, -c/s = c/(-s) in odd ones.
	nh, nl := b.sel(odd, ch, sh), b.sel(odd, cl, sl)
	dh, dl := b.sel(odd, b.neg(sh), ch), b.sel(odd, b.neg(sl), cl)
	q := b.div(nh, dh)
	rem := b.fma(b.neg(q), dh, nh) // exact
	inv := b.rcpApprox(b.abs(dh))
	inv = b.fromBits(b.or(b.bits(inv), b.and(b.bits(dh), b.u64(signBit64))))
	v := b.fma(b.fma(b.neg(q), dl, b.add(rem, nl)), inv, q)
	v = b.fromBits(b.xor(b.bits(v), b.and(b.bits(x), b.u64(signBit64))))
	return b.sel(b.cmp(cGeU, ax, b.inf(tF64)), b.nan(tF64), v)
}
