package random

import "math"

// This file holds the floating-point functions behind the normal distribution, written as
// fixed sequences of IEEE 754 operations that the PTX kernels perform in the same order
// (ptx.go emits them): add, sub, mul, fma, div and sqrt rounded to nearest even, exact
// conversions or conversions with round-to-nearest-even, and integer operations. PTX's
// .rn instructions are IEEE 754 operations (PTX ISA 7.8, sections 9.7.3 and 9.7.4), so
// each step gives the same bits on the GPU as here. Products are wrapped in an explicit
// conversion (float32(a*b), float64(a*b)): the Go specification lets a compiler fuse x*y+z
// into one fused multiply-add unless an explicit conversion rounds the product, and on
// arm64 or ppc64 it does.

// fma32 returns a*b+c computed exactly and rounded once to float32 (round to nearest
// even), as PTX fma.rn.f32 does. float32(math.FMA(a, b, c)) would round twice (to float64,
// then to float32) and can be off by one ulp at halfway cases. Here the product a*b is
// exact in float64 (24+24 bits), the sum is rounded to odd in float64 (53 bits) by
// correcting the nearest sum with its exact error (Knuth's TwoSum), and rounding a
// round-to-odd result of at least p+2 bits to p bits gives the correctly rounded result
// (S. Boldo and G. Melquiond, "Emulation of FMA and correctly rounded sums: proved
// algorithms using rounding to odd", IEEE Trans. Computers 57(4), 2008).
func fma32(a, b, c float32) float32 {
	p := float64(float64(a) * float64(b)) // exact
	cc := float64(c)
	s := float64(p + cc)
	// Fast path: float32 midpoints are float64 numbers, so if s = RN64(p+cc) is not one,
	// no midpoint lies between p+cc and s and RN32(s) = RN32(p+cc). In float32's normal
	// range a midpoint has the 29 low significand bits 1000...0.
	if sb := math.Float64bits(s); sb&0x1FFFFFFF != 0x10000000 {
		if e := sb >> 52 & 0x7FF; e >= 1023-126 && e <= 1023+127 {
			return float32(s)
		}
	}
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// TwoSum: e is the exact error p+cc-s.
	bb := float64(s - p)
	e := float64(float64(p-float64(s-bb)) + float64(cc-bb))
	if e != 0 {
		bits := math.Float64bits(s)
		if bits&1 == 0 { // s even: the odd neighbour on e's side is the round-to-odd result
			if (e > 0) == (s > 0) {
				bits++ // away from zero
			} else {
				bits--
			}
			s = math.Float64frombits(bits)
		}
	}
	return float32(s)
}

// mul32, add32, sub32, div32 and sqrt32 are the float32 operations with one rounding to
// nearest even (mul.rn.f32 and so on).
func mul32(a, b float32) float32 { return float32(a * b) }
func add32(a, b float32) float32 { return float32(a + b) }
func sub32(a, b float32) float32 { return float32(a - b) }
func div32(a, b float32) float32 { return float32(a / b) }

// sqrt32 is sqrt.rn.f32. Rounding the float64 square root to float32 is correct rounding:
// 53 >= 2*24+2, so double rounding is innocuous for sqrt (S. A. Figueroa, "When is double
// rounding innocuous?", SIGNUM Newsletter 30(3), 1995).
func sqrt32(a float32) float32 { return float32(math.Sqrt(float64(a))) }

func mul64(a, b float64) float64    { return float64(a * b) }
func add64(a, b float64) float64    { return float64(a + b) }
func sub64(a, b float64) float64    { return float64(a - b) }
func fma64(a, b, c float64) float64 { return math.FMA(a, b, c) }

// Coefficients. Each is the correctly rounded (nearest even) value of the formula in its
// comment; TestCoefficients recomputes them with math/big.
const (
	// ln 2 split: ln2Hi32 = fl32(ln 2), ln2Lo32 = fl32(ln 2 - ln2Hi32); same for float64.
	ln2Hi32 = 0x1.62e43p-01
	ln2Lo32 = -0x1.05c61p-29
	ln2Hi64 = 0x1.62e42fefa39efp-01
	ln2Lo64 = 0x1.abc9e3b39803fp-56
)

// logCoef32[k-1] = fl32(2/(2k+1)), k = 1..4; logCoef64 the same in float64, k = 1..10: the
// Taylor coefficients of R(z) in 2*atanh(s) = 2s + s*R(s^2).
var (
	logCoef32 = [4]float32{0x1.555556p-01, 0x1.99999ap-02, 0x1.24924ap-02, 0x1.c71c72p-03}
	logCoef64 = [10]float64{
		0x1.5555555555555p-01, 0x1.999999999999ap-02, 0x1.2492492492492p-02,
		0x1.c71c71c71c71cp-03, 0x1.745d1745d1746p-03, 0x1.3b13b13b13b14p-03,
		0x1.1111111111111p-03, 0x1.e1e1e1e1e1e1ep-04, 0x1.af286bca1af28p-04,
		0x1.8618618618618p-04,
	}
)

// sinCoef32[k] = fl32((-1)^k (pi/2)^(2k+1) / (2k+1)!), k = 0..4, and cosCoef32[k-1] =
// fl32((-1)^k (pi/2)^(2k) / (2k)!), k = 1..5: Taylor coefficients of sin(pi/2 t) and
// cos(pi/2 t). The float64 tables go to k = 8.
var (
	sinCoef32 = [5]float32{0x1.921fb6p+00, -0x1.4abbcep-01, 0x1.466bc6p-04, -0x1.32d2ccp-08, 0x1.507834p-13}
	cosCoef32 = [5]float32{-0x1.3bd3ccp+00, 0x1.03c1fp-02, -0x1.55d3c8p-06, 0x1.e1f506p-11, -0x1.a6d1f2p-16}
	sinCoef64 = [9]float64{
		0x1.921fb54442d18p+00, -0x1.4abbce625be53p-01, 0x1.466bc6775aae2p-04,
		-0x1.32d2cce62bd86p-08, 0x1.50783487ee782p-13, -0x1.e3074fde8871fp-19,
		0x1.e8f434d018d63p-25, -0x1.6fadb9f155744p-31, 0x1.aaec32af93359p-38,
	}
	cosCoef64 = [8]float64{
		-0x1.3bd3cc9be45dep+00, 0x1.03c1f081b5ac4p-02, -0x1.55d3c7e3cbffap-06,
		0x1.e1f506891babbp-11, -0x1.a6d1f2a204a8cp-16, 0x1.f9d38a3763cc3p-22,
		-0x1.b6e24f44b128fp-28, 0x1.20c62c2f2d7f5p-34,
	}
)

// Bits of sqrt(1/2) (rounded to nearest), where the log reduction splits the exponent.
const (
	sqrtHalf32Bits = 0x3F3504F3
	sqrtHalf64Bits = 0x3FE6A09E667F3BCD
)

// log32 returns ln(x) for a positive normal float32 x (the package calls it on (0, 1]),
// within 2 ulp (TestLog32 measures it). Method (fdlibm's e_log.c, W. Kahan and K. C. Ng,
// 1993, with Taylor coefficients): x = 2^e * m with m in [sqrt(1/2), sqrt(2)) found from
// the bits; f = m-1 (exact, Sterbenz); s = f/(2+f); ln(m) = 2 atanh(s) =
// f - (f^2/2 - s*(f^2/2 + R(s^2))) with R(z) = 2z/3 + 2z^2/5 + 2z^3/7 + 2z^4/9 (|s| <=
// 0.1716, truncation below 2^-28 relative); ln(x) = e*ln2Hi + (e*ln2Lo + ln(m)).
// ln(1) is exactly 0 and ln(x) <= 0 for x <= 1.
func log32(x float32) float32 {
	b := math.Float32bits(x)
	e := int32(b-sqrtHalf32Bits) >> 23
	m := math.Float32frombits(b - uint32(e)<<23)
	f := sub32(m, 1)
	s := div32(f, add32(f, 2))
	z := mul32(s, s)
	p := fma32(z, logCoef32[3], logCoef32[2])
	p = fma32(z, p, logCoef32[1])
	p = fma32(z, p, logCoef32[0])
	r := mul32(z, p)
	hfsq := mul32(mul32(f, 0.5), f)
	u := fma32(-s, add32(hfsq, r), hfsq)
	lm := sub32(f, u)
	kf := float32(e)
	return fma32(kf, ln2Hi32, fma32(kf, ln2Lo32, lm))
}

// log64 is log32 in float64 with R to the z^10 term (2z^10/21; truncation below 2^-56
// relative), for positive normal x.
func log64(x float64) float64 {
	b := math.Float64bits(x)
	e := int64(b-sqrtHalf64Bits) >> 52
	m := math.Float64frombits(b - uint64(e)<<52)
	f := sub64(m, 1)
	s := float64(f / add64(f, 2))
	z := mul64(s, s)
	p := logCoef64[9]
	for k := 8; k >= 0; k-- {
		p = fma64(z, p, logCoef64[k])
	}
	r := mul64(z, p)
	hfsq := mul64(mul64(f, 0.5), f)
	u := fma64(-s, add64(hfsq, r), hfsq)
	lm := sub64(f, u)
	kf := float64(e)
	return fma64(kf, ln2Hi64, fma64(kf, ln2Lo64, lm))
}

// sincos2pi32 returns sin and cos of 2*pi*w/2^32, within 2 ulp (TestSinCos32). The
// reduction is exact integer arithmetic on w: quadrant q = (w + 2^29) >> 30 (mod 4) and
// d = int32(w - q*2^30) in [-2^29, 2^29), so the angle is pi/2*(q + t) with t = d*2^-30 in
// [-1/2, 1/2] (t rounded once, by the int32 to float32 conversion). sin(pi/2 t) =
// t*S(t^2) and cos(pi/2 t) = 1 + t^2*C(t^2) are Taylor polynomials to t^9 and t^10
// (truncation below 2^-28 relative at |t| = 1/2); the quadrant swaps them and sets signs.
func sincos2pi32(w uint32) (sin, cos float32) {
	q := (w + 1<<29) >> 30
	d := int32(w - q<<30)
	t := mul32(float32(d), 0x1p-30)
	t2 := mul32(t, t)
	ps := fma32(t2, sinCoef32[4], sinCoef32[3])
	ps = fma32(t2, ps, sinCoef32[2])
	ps = fma32(t2, ps, sinCoef32[1])
	ps = fma32(t2, ps, sinCoef32[0])
	s := mul32(t, ps)
	pc := fma32(t2, cosCoef32[4], cosCoef32[3])
	pc = fma32(t2, pc, cosCoef32[2])
	pc = fma32(t2, pc, cosCoef32[1])
	pc = fma32(t2, pc, cosCoef32[0])
	c := fma32(t2, pc, 1)
	if q&1 != 0 {
		s, c = c, s
	}
	sb := math.Float32bits(s) ^ (q&2)<<30
	cb := math.Float32bits(c) ^ ((q+1)&2)<<30
	return math.Float32frombits(sb), math.Float32frombits(cb)
}

// sincos2pi64 is sincos2pi32 for a 64-bit angle x (2*pi*x/2^64): q = (x + 2^61) >> 62,
// d = int64(x - q*2^62), t = d*2^-62, polynomials to t^17 and t^16 (truncation below
// 2^-60 relative).
func sincos2pi64(x uint64) (sin, cos float64) {
	q := (x + 1<<61) >> 62
	d := int64(x - q<<62)
	t := mul64(float64(d), 0x1p-62)
	t2 := mul64(t, t)
	ps := sinCoef64[8]
	for k := 7; k >= 0; k-- {
		ps = fma64(t2, ps, sinCoef64[k])
	}
	s := mul64(t, ps)
	pc := cosCoef64[7]
	for k := 6; k >= 0; k-- {
		pc = fma64(t2, pc, cosCoef64[k])
	}
	c := fma64(t2, pc, 1)
	if q&1 != 0 {
		s, c = c, s
	}
	sb := math.Float64bits(s) ^ (q&2)<<62
	cb := math.Float64bits(c) ^ ((q+1)&2)<<62
	return math.Float64frombits(sb), math.Float64frombits(cb)
}

// boxMuller32 maps two words to two standard normal float32 values (G. E. P. Box and
// M. E. Muller, "A note on the generation of random normal deviates", Ann. Math. Statist.
// 29(2), 1958): u = fl32(w0)*2^-32 + 2^-33 in [2^-33, 1] (one rounding: fma), r =
// sqrt(-2 ln u), and (r cos a, r sin a) with a = 2*pi*w1/2^32.
func boxMuller32(w0, w1 uint32) (z0, z1 float32) {
	u := fma32(float32(w0), 0x1p-32, 0x1p-33)
	r := sqrt32(mul32(log32(u), -2))
	s, c := sincos2pi32(w1)
	return mul32(r, c), mul32(r, s)
}

// boxMuller64 is boxMuller32 in float64 for two 64-bit words: u = fl64(x0)*2^-64 + 2^-65
// in [2^-65, 1], a = 2*pi*x1/2^64.
func boxMuller64(x0, x1 uint64) (z0, z1 float64) {
	u := fma64(float64(x0), 0x1p-64, 0x1p-65)
	r := math.Sqrt(mul64(log64(u), -2))
	s, c := sincos2pi64(x1)
	return mul64(r, c), mul64(r, s)
}

// f32ToF16 returns the IEEE 754 binary16 bits nearest to x (ties to even), with
// subnormals, infinities and NaN: cvt.rn.f16.f32.
func f32ToF16(x float32) uint16 {
	b := math.Float32bits(x)
	sign := uint16(b>>16) & 0x8000
	exp := int32(b>>23) & 0xFF
	man := b & 0x7FFFFF
	switch {
	case exp == 0xFF:
		if man != 0 {
			return sign | 0x7E00 // quiet NaN
		}
		return sign | 0x7C00
	case exp == 0 && man == 0:
		return sign
	}
	// x = 1.man * 2^(exp-127) (or 0.man*2^-126 for float32 subnormals, which are far
	// below half of the smallest float16 subnormal and round to zero).
	if exp == 0 {
		return sign
	}
	e := exp - 127 + 15 // float16 biased exponent
	full := man | 0x800000
	var shift int32 // right shift of the 24-bit significand to float16's 11 bits
	if e >= 1 {
		shift = 13
	} else {
		shift = 14 - e // subnormal: significand aligned to 2^-24
		if shift > 25 {
			return sign // below half of the smallest subnormal
		}
		e = 0
	}
	m := full >> uint(shift)
	rem := full & (1<<uint(shift) - 1)
	half := uint32(1) << uint(shift-1)
	if rem > half || (rem == half && m&1 == 1) {
		m++
	}
	var out uint32
	if e == 0 {
		out = m // may carry into the normal range: correct bit pattern
	} else {
		out = uint32(e)<<10 + (m - 0x400) // carry from m = 0x800 bumps the exponent
		if m == 0x800 {
			out = uint32(e+1) << 10
		}
	}
	if out >= 0x7C00 {
		return sign | 0x7C00
	}
	return sign | uint16(out)
}

// f16ToF32 returns the float32 value of binary16 bits h (exact).
func f16ToF32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1F
	man := uint32(h & 0x3FF)
	switch {
	case exp == 0x1F:
		return math.Float32frombits(sign | 0x7F800000 | man<<13)
	case exp == 0:
		v := float32(man) * 0x1p-24
		if sign != 0 {
			v = -v
		}
		return v
	}
	return math.Float32frombits(sign | (exp+112)<<23 | man<<13)
}
