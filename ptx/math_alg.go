package ptx

import "math"

// fmod, hypot and cbrt, for float32 and float64.
//
// fmod(x, y) is exact (the remainder is always representable): with r = |x| and
// |y| = m_y·2^e, each step divides r by y_k = |y|·2^k, k = max(0, (exponent of r) -
// (exponent of y) - 51), so the quotient is below 2^52; q = trunc(RN(r/y_k)) is the
// true integer quotient or one more (rounding to nearest never crosses an integer
// downwards), so r - q·y_k lies in (-y_k, y_k), is a multiple of ulp(y_k) and comes out
// exact from one fma; a negative remainder gets y_k added back, exactly. Since y_k is
// y times a power of two, fmod(r, y_k) has the same remainder modulo y, and each step
// removes 51 bits of exponent difference: one step for quotients below 2^51, at most
// 42 for float64 (float32 runs in float64: at most 6). This is schoolbook long
// division, 51 bits at a time (that the remainder of a division is representable is in
// Muller et al., "Handbook of Floating-Point Arithmetic"). The result takes the sign of
// x; fmod(±0, y) = ±0, fmod(x, ±Inf) = x, and an infinite x, a zero y or a NaN give NaN
// (C99 F.9.7.1).
//
// hypot(x, y) = sqrt(x² + y²) with the larger operand scaled by 2^±600 when it is
// outside [2^-500, 2^500], so nothing overflows or underflows spuriously; float64 forms
// x² + y² as a double-word (TwoProduct, Fast2Sum) and takes a corrected square root
// (sqrtDD), float32 works in float64 (squares exact, one rounding of the sum, then of
// the root and to float32). hypot(±Inf, y) = +Inf even for a NaN y (C99 F.9.4.3).
//
// cbrt(x) = 2^q·cbrt(m) with x = 2^(3q)·m, m in [1, 8) (q = floor(e/3) by a
// multiply-high by 0xaaaaaaab). u ≈ m^(-1/3) starts from a minimax cubic in the
// significand f (relative error 2^-11.9) times 2^(-(e mod 3)/3), then two Newton steps
// u += u(1 - m·u³)/3, which need no division (2^-22.8, then 2^-44.6); cbrt m = m·u².
// float32 rounds that once. float64 adds one more Newton step on the root itself,
// c + (m - c³)/(3c²), with c³ formed exactly enough from a TwoProduct and 1/(3c²) ≈ u²/3
// (W. Kahan, "Computing a real cube root", 1991, describes this scheme). cbrt(±0),
// cbrt(±Inf) and NaN return the argument.

func init() {
	register(Fmod, fmodF32, fmodF64)
	register(Hypot, hypotF32, hypotF64)
	register(Cbrt, cbrtF32, cbrtF64)
}

// pow2i returns 2^k for an s32 k in [-1022, 1023] (as a u32 holding it).
func (b *mb) pow2i(k val) val {
	return b.fromBits(b.shl(b.zext(b.add(k, b.u32(1023))), b.u32(52)))
}

// fmodCore returns fmod(ax, ay) for positive finite float64 ax, ay (subnormal ay
// allowed when sub is set).
func (b *mb) fmodCore(ax, ay val, sub bool) val {
	// ey: the exponent of ay (biased; for a subnormal, that of ay·2^54 less 54), ayn:
	// ay normalised (·2^54 when subnormal) and sh its shift.
	ey := b.lo(b.shr(b.bits(ay), b.u32(52)))
	ayn, sh := ay, b.u32(0)
	if sub {
		isSub := b.cmp(cLt, ay, b.f64(0x1p-1022))
		ayn = b.sel(isSub, b.mul(ay, b.f64(0x1p54)), ay)
		sh = b.sel(isSub, b.u32(54), b.u32(0))
		ey = b.sub(b.lo(b.shr(b.bits(ayn), b.u32(52))), sh)
	}
	r := b.variable(ax)
	b.loop(func() val { return b.cmp(cGe, r, ay) }, func() {
		er := b.lo(b.shr(b.bits(r), b.u32(52)))
		k := b.sub(b.sub(er, ey), b.u32(51))
		// y_k = ay·2^k = ayn·2^(k - sh) in two power-of-two factors (each in range).
		ks := b.sub(k, sh)
		h1 := b.sar(ks, b.u32(1))
		yk := b.mul(b.mul(ayn, b.pow2i(h1)), b.pow2i(b.sub(ks, h1)))
		yk = b.sel(b.cmp(cSGt, k, b.u32(0)), yk, ay)
		q := b.trunc(b.div(r, yk))
		rr := b.fma(b.neg(q), yk, r) // exact
		b.set(r, b.sel(b.cmp(cLt, rr, b.f64(0)), b.add(rr, yk), rr))
	})
	return r
}

// fmodGeneric computes fmod for float64 arguments (x, y from float32 when f32).
func (b *mb) fmodGeneric(x, y val, t vtype) val {
	ax, ay := b.abs(x), b.abs(y)
	inf := b.inf(t)
	res := b.variable(x)
	// x = ±0 or |x| < |y| (y = ±Inf included) give x itself; NaN, x = ±Inf or y = 0 give NaN.
	bad := b.or(b.cmp(cNaN, x, y), b.or(b.cmp(cEq, ax, inf), b.cmp(cEq, ay, b.fc(t, 0))))
	b.ifElse(bad, func() { b.set(res, b.nan(t)) }, func() {
		b.ifThen(b.cmp(cGe, ax, ay), func() {
			if t == tF64 {
				b.set(res, b.withSign(b.fmodCore(ax, ay, true), x))
				return
			}
			xd, yd := b.cvtF(ax, tF64), b.cvtF(ay, tF64)
			v := b.variable(b.f64(0))
			// A quotient below 2^28 of a normal ay (every float32 pair a few binades
			// apart) in one step: xd/yd = n + f, n its integer part, and f = 0 or, as a
			// remainder of y's units over y (below 2^24 of them), 1-f > 2^-24, more than
			// the double division's rounding error below 2^28 (2^-26): rounding, which is
			// monotonic, gives no less than n and less than n+1, so q = trunc(xd/yd) is n;
			// q·yd has at most 28+24 bits, and xd - q·yd, fmod's value, is exact.
			fast := b.and(b.cmp(cGe, ay, b.fc(t, 0x1p-126)), b.cmp(cLt, xd, b.mul(yd, b.f64(0x1p28))))
			b.ifElse(fast, func() {
				b.set(v, b.fma(b.neg(b.trunc(b.div(xd, yd))), yd, xd))
			}, func() {
				b.set(v, b.fmodCore(xd, yd, false))
			})
			b.set(res, b.withSign(b.cvtF(v, tF32), x))
		})
	})
	return res
}

func fmodF32(b *mb, t vtype, xs []val) val { return b.fmodGeneric(xs[0], xs[1], t) }
func fmodF64(b *mb, t vtype, xs []val) val { return b.fmodGeneric(xs[0], xs[1], t) }

// hypotSpecial returns +Inf if either operand is infinite, else NaN if either is NaN,
// else v.
func (b *mb) hypotSpecial(ax, ay, v val, t vtype) val {
	v = b.sel(b.cmp(cNaN, ax, ay), b.nan(t), v)
	return b.sel(b.or(b.cmp(cEq, ax, b.inf(t)), b.cmp(cEq, ay, b.inf(t))), b.inf(t), v)
}

func hypotF32(b *mb, t vtype, xs []val) val {
	a := b.cvtF(b.abs(xs[0]), tF64)
	c := b.cvtF(b.abs(xs[1]), tF64)
	h := b.cvtF(b.sqrt(b.fma(a, a, b.mul(c, c))), tF32)
	return b.hypotSpecial(b.abs(xs[0]), b.abs(xs[1]), h, t)
}

func hypotF64(b *mb, t vtype, xs []val) val {
	ax, ay := b.abs(xs[0]), b.abs(xs[1])
	big := b.cmp(cGt, ax, ay)
	a, c := b.sel(big, ax, ay), b.sel(big, ay, ax)
	// scale by 2^-600 above 2^500 and by 2^600 below 2^-500
	hi := b.cmp(cGt, a, b.f64(0x1p500))
	lo := b.cmp(cLt, a, b.f64(0x1p-500))
	sc := b.sel(hi, b.f64(0x1p-600), b.sel(lo, b.f64(0x1p600), b.f64(1)))
	un := b.sel(hi, b.f64(0x1p600), b.sel(lo, b.f64(0x1p-600), b.f64(1)))
	a, c = b.mul(a, sc), b.mul(c, sc)
	ah, al := b.twoProd(a, a)
	ch, cl := b.twoProd(c, c)
	sh, se := b.fastTwoSum(ah, ch)
	s, sl := b.sqrtDD(sh, b.add(se, b.add(al, cl)), false)
	h := b.mul(b.add(s, sl), un)
	h = b.sel(b.cmp(cEq, a, b.f64(0)), b.f64(0), h)
	return b.hypotSpecial(ax, ay, h, t)
}

// u ≈ f^(-1/3) on [1, 2] (relative error 2^-11.9).
var rcbrtPoly = []float64{0x1.8ab91b8964b7fp+0, -0x1.9eb31eb914e57p-1, 0x1.45621fcebca63p-2, -0x1.99154641d4dfbp-5}

// cbrtParts returns m in [1, 8), u ≈ m^(-1/3) to 2^-44 and q (s32 in u32) with
// a = 2^(3q)·m for a positive normal float64 a.
func (b *mb) cbrtParts(a val) (m, u, q val) {
	ab := b.bits(a)
	e := b.lo(b.shr(ab, b.u32(52))) // biased: e - 1023 = 3q + rem
	e1200 := b.add(e, b.u32(1200-1023))
	q1 := b.shr(b.mulhi(e1200, b.u32(0xaaaaaaab)), b.u32(1)) // floor((e+177)/3)
	rem := b.sub(e1200, b.mul(q1, b.u32(3)))
	q = b.sub(q1, b.u32(400))
	mant := b.and(ab, b.u64(1<<52-1))
	f := b.fromBits(b.or(mant, b.u64(1023<<52)))
	m = b.fromBits(b.or(mant, b.shl(b.zext(b.add(rem, b.u32(1023))), b.u32(52))))
	t := b.sel(b.cmp(cEq, rem, b.u32(0)), b.f64(1), b.sel(b.cmp(cEq, rem, b.u32(1)),
		b.f64(math.Pow(2, -1.0/3)), b.f64(math.Pow(2, -2.0/3))))
	u = b.mul(b.horner(f, rcbrtPoly), t)
	third := b.f64(1.0 / 3)
	one := b.f64(1)
	for range 2 {
		e := b.fma(b.neg(m), b.mul(b.mul(u, u), u), one)
		u = b.fma(b.mul(u, e), third, u)
	}
	return m, u, q
}

func cbrtF32(b *mb, t vtype, xs []val) val {
	x := xs[0]
	a := b.cvtF(b.abs(x), tF64)
	m, u, q := b.cbrtParts(a)
	c := b.mul(b.mul(m, b.mul(u, u)), b.pow2i(q))
	v := b.withSign(b.cvtF(c, tF32), x)
	// ±0, ±Inf and NaN
	sp := b.cmp(cGe, b.sub(b.bits(b.abs(x)), b.u32(1)), b.u32(0x7f7fffff))
	return b.sel(sp, b.sel(b.isNaN(x), b.nan(t), x), v)
}

func cbrtF64(b *mb, t vtype, xs []val) val {
	x := xs[0]
	ax := b.abs(x)
	sub := b.cmp(cLt, ax, b.f64(0x1p-1022))
	a := b.sel(sub, b.mul(ax, b.f64(0x1p54)), ax)
	m, u, q := b.cbrtParts(a)
	q = b.sel(sub, b.sub(q, b.u32(18)), q)
	c := b.mul(m, b.mul(u, u))
	// c + (m - c³)/(3c²), c³ = c·(c2h + c2l) to about 2^-100 and 1/(3c²) ≈ u²/3.
	c2h, c2l := b.twoProd(c, c)
	c3h, c3l := b.twoProd(c, c2h)
	c3l = b.fma(c, c2l, c3l)
	res := b.sub(b.sub(m, c3h), c3l) // m - c3h is exact
	c = b.fma(b.mul(res, b.mul(u, u)), b.f64(1.0/3), c)
	v := b.withSign(b.mul(c, b.pow2i(q)), x)
	sp := b.cmp(cGe, b.sub(b.bits(ax), b.u64(1)), b.u64(0x7fefffffffffffff))
	return b.sel(sp, b.sel(b.isNaN(x), b.nan(t), x), v)
}
