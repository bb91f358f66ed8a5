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

// mul32, add32 and sqrt32 are the float32 operations with one rounding to nearest even
// (mul.rn.f32, add.rn.f32, sqrt.rn.f32).
func mul32(a, b float32) float32 { return float32(a * b) }
func add32(a, b float32) float32 { return float32(a + b) }

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
	// ln 2 split: ln2Hi64 = fl64(ln 2), ln2Lo64 = fl64(ln 2 - ln2Hi64).
	ln2Hi64 = 0x1.62e42fefa39efp-01
	ln2Lo64 = 0x1.abc9e3b39803fp-56
)

// logCoef64[k-1] = fl64(2/(2k+1)), k = 1..10: the Taylor coefficients of R(z) in
// 2*atanh(s) = 2s + s*R(s^2).
var (
	logCoef64 = [10]float64{
		0x1.5555555555555p-01, 0x1.999999999999ap-02, 0x1.2492492492492p-02,
		0x1.c71c71c71c71cp-03, 0x1.745d1745d1746p-03, 0x1.3b13b13b13b14p-03,
		0x1.1111111111111p-03, 0x1.e1e1e1e1e1e1ep-04, 0x1.af286bca1af28p-04,
		0x1.8618618618618p-04,
	}
)

// sinCoef64[k] = fl64((-1)^k (pi/2)^(2k+1) / (2k+1)!), k = 0..8, and cosCoef64[k-1] =
// fl64((-1)^k (pi/2)^(2k) / (2k)!), k = 1..8: Taylor coefficients of sin(pi/2 t) and
// cos(pi/2 t).
var (
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

// log64 returns ln(x) for a positive normal float64 x (the package calls it on (0, 1]),
// within 1 ulp of math.Log (TestLog64). Method (fdlibm's e_log.c, W. Kahan and K. C. Ng,
// 1993, with Taylor coefficients): x = 2^e * m with m in [sqrt(1/2), sqrt(2)) found from
// the bits; f = m-1 (exact, Sterbenz); s = f/(2+f); ln(m) = 2 atanh(s) =
// f - (f^2/2 - s*(f^2/2 + R(s^2))) with R(z) = 2z/3 + 2z^2/5 + ... + 2z^10/21 (|s| <=
// 0.1716, truncation below 2^-56 relative); ln(x) = e*ln2Hi + (e*ln2Lo + ln(m)).
// ln(1) is exactly 0 and ln(x) <= 0 for x <= 1.
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

// sincos2pi64 returns sin and cos of 2*pi*x/2^64, within 2 ulp (TestSinCos64). The
// reduction is exact integer arithmetic on x: quadrant q = (x + 2^61) >> 62 (mod 4) and
// d = int64(x - q*2^62) in [-2^61, 2^61), so the angle is pi/2*(q + t) with t = d*2^-62 in
// [-1/2, 1/2] (t rounded once, by the int64 to float64 conversion). sin(pi/2 t) =
// t*S(t^2) and cos(pi/2 t) = 1 + t^2*C(t^2) are Taylor polynomials to t^17 and t^16
// (truncation below 2^-60 relative at |t| = 1/2); the quadrant swaps them and sets signs.
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

// boxMuller32 maps the words (a, b) of a pair to two standard normal float32 values:
// (z0, z1) = (s r cos(pi t), r sin(pi t)) with r = sqrt(-2 ln u), u from bits 0..30 of a
// (radius32), the sign s = -1 if bit 31 of a is set, and t = int32(b) * 2^-32 in
// [-1/2, 1/2] (sincospi32). The angle pi t covers the right half-plane and the sign
// mirrors it onto the left one, so the angle is uniform on the circle.
//
// radius32 returns sqrt(lambda) r and sincospi32 sin(pi t)/sqrt(lambda) and
// cos(pi t)/sqrt(lambda) (lambda = radLambda32, about 8.3e5): the factors cancel in the
// products, and with them (and the scalings of the polynomial variables) every
// polynomial is monic, so that its first Horner step adds one immediate (an SASS FFMA
// takes one immediate operand; a first step c_n x + c_(n-1) would cost an extra move).
func boxMuller32(a, b uint32) (z0, z1 float32) {
	r := radius32(a)
	s, c := sincospi32(b)
	rs := math.Float32frombits(math.Float32bits(r) ^ a&0x80000000)
	return mul32(rs, c), mul32(r, s)
}

// radius32 returns sqrt(lambda) sqrt(-2 ln u) for u = fl32(2k+1) * 2^-32, k = a &
// 0x7FFFFFFF (bit 31 is ignored), so u in [2^-32, 1]:
//
//   - x = fl32(2k+1) in [1, 2^32] and u = x * 2^-32 = 2^e m with m in [sqrt(1/2),
//     sqrt(2)), from the bits: e = (bits(x) - radSplit32) >> 23 (arithmetic), and the bits
//     of M = m 2^32 are bits(x) - e<<23;
//   - f' = fl(M sigma 2^-32 - sigma) = fl(sigma (m-1)) (one fma; radSigK32, radNegSig32);
//   - L' = e radLC32 + f' P(f') with P the monic degree-7 polynomial radCoef32 fitted
//     (minimax, relative error of L) so that f' P(f') ~ -2 lambda ln(1 + f'/sigma), and
//     radLC32 = fl32(-2 lambda ln 2);
//   - the result is sqrt(L'), with L' = lambda (-2 ln u) within 5 * 2^-24 relative.
//
// L' is 0 for u = 1 (f' = 0, e = 0) and positive otherwise.
func radius32(a uint32) float32 {
	x := float32(a<<1 | 1)
	xb := math.Float32bits(x)
	e := int32(xb-radSplit32) >> 23
	m := math.Float32frombits(xb - uint32(e)<<23)
	f := fma32(m, radSigK32, radNegSig32)
	q := add32(f, radCoef32[len(radCoef32)-1])
	for k := len(radCoef32) - 2; k >= 0; k-- {
		q = fma32(f, q, radCoef32[k])
	}
	return sqrt32(fma32(float32(e), radLC32, mul32(f, q)))
}

// sincospi32 returns sin(pi t)/sqrt(lambda) and cos(pi t)/sqrt(lambda) for t = int32(b) *
// 2^-32 in [-1/2, 1/2]: with ts = fl(fl32(int32(b)) angA32) = fl(alpha t) and y = ts^2,
// sin = ts S(y) and cos = C(y), S and C the monic degree-4 polynomials sinpiCoef32 and
// cospiCoef32 (minimax: absolute errors below 2.5 and 3.1 * 2^-24 after the scaling).
func sincospi32(b uint32) (sin, cos float32) {
	ts := mul32(float32(int32(b)), angA32)
	y := mul32(ts, ts)
	n := len(sinpiCoef32)
	ps := add32(y, sinpiCoef32[n-1])
	pc := add32(y, cospiCoef32[n-1])
	for k := n - 2; k >= 0; k-- {
		ps = fma32(y, ps, sinpiCoef32[k])
		pc = fma32(y, pc, cospiCoef32[k])
	}
	return mul32(ts, ps), pc
}

// The constants of boxMuller32. The scalings (lambda, sigma, alpha) make the leading
// coefficients 1: alpha = s4/c4 and sqrt(lambda) = c4/alpha^8 from the leading
// coefficients s4, c4 of the unscaled minimax polynomials of sin(pi t)/t and cos(pi t) in
// t^2, and sigma^8 = lambda q7 from that of -2 ln(1+f)/f (q7). Each constant is the
// float32 value used; lambda, sigma and alpha are defined by them (radLambda32 =
// radLC32 / (-2 ln 2), sigma = -radNegSig32 = radSigK32 2^32, alpha = angA32 2^32).
const (
	radSplit32  = sqrtHalf32Bits + 32<<23 // bits of fl32(sqrt(1/2)) 2^32
	radSigK32   = 0x1.2142b4p-30          // sigma 2^-32
	radNegSig32 = -0x1.2142b4p+2          // -sigma
	radLC32     = -0x1.1898e2p+20         // -2 lambda ln 2
	angA32      = 0x1.6981aep-34          // alpha 2^-32
)

// radLambda32 is lambda (not used by the transform; for the tests).
const radLambda32 = radLC32 / (-2 * math.Ln2)

var (
	// radCoef32[k]: coefficient of f'^k, k = 0..6, of the monic degree-7 polynomial P.
	radCoef32 = [7]float32{-0x1.6644b8p+18, 0x1.3d132ap+15, -0x1.76309ap+12, 0x1.f025fap+9,
		-0x1.5d429ap+7, 0x1.0ba736p+5, -0x1.c54038p+2}
	// sinpiCoef32[k], cospiCoef32[k]: coefficients of y^k, k = 0..3, of S and C.
	sinpiCoef32 = [4]float32{0x1.40401ap-7, -0x1.082bd4p-3, 0x1.057c24p-1, -0x1.ec3262p-1}
	cospiCoef32 = [4]float32{0x1.1fe722p-10, -0x1.643b4ep-5, 0x1.25d4b2p-2, -0x1.82da08p-1}
)

// boxMuller64 is boxMuller32 in float64 for two 64-bit words: u = fl64(x0)*2^-64 + 2^-65
// in [2^-65, 1], a = 2*pi*x1/2^64.
func boxMuller64(x0, x1 uint64) (z0, z1 float64) {
	u := fma64(float64(x0), 0x1p-64, 0x1p-65)
	r := math.Sqrt(mul64(log64(u), -2))
	s, c := sincos2pi64(x1)
	return mul64(r, c), mul64(r, s)
}
