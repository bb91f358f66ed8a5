package ptx

import "math"

// asin and acos (Cody & Waite, "Software Manual for the Elementary Functions"; the same
// reduction as fdlibm): for |x| <= 1/2, asin x = x + x³·P(x²); above,
// asin|x| = π/2 - 2·asin s with s = sqrt(z), z = (1 - |x|)/2 (exact), which brings
// the argument back into [0, 1/2] and P is evaluated at z = s² exactly. P is one
// minimax polynomial on [0, 1/4] in either case (float64: 14 terms, relative error
// 2^-63.8). acos x = π/2 - asin x for |x| <= 1/2, 2·asin s for x > 1/2 and π - 2·asin s
// for x < -1/2. All cases are A + σ·(S + T) with A = 0, π/2 or π, σ = ±1 or ±2, S = |x|
// or s and T the small rest: A + σS is formed exactly (Fast2Sum), and in float64 the
// rounding error of the square root joins T (sqrtDD). float32 computes the same in
// float64 with a 6-term polynomial (relative error 2^-31.8) and rounds once. |x| > 1
// gives NaN.

func init() {
	register(Asin, asinF32, asinF64)
	register(Acos, acosF32, acosF64)
}

// asin s = s + s³ P(s²), s² in [0, 1/4] (float64, relative error 2^-63.8).
var asinPolyF64 = []float64{0x1.5555555555553p-3, 0x1.3333333333a3bp-4, 0x1.6db6db6d48c01p-5,
	0x1.f1c71ca831c53p-6, 0x1.6e8b9af35af06p-6, 0x1.1c4f854d7816bp-6, 0x1.c980e69d561d7p-7,
	0x1.7ba3f4688a66ap-7, 0x1.36c4e117fa894p-7, 0x1.47ff9bf55a6bfp-7, 0x1.65deff25a0ac3p-11,
	0x1.96bbfad7518dep-6, -0x1.ac667598d1a28p-6, 0x1.13996ebf66826p-5}

// The same to float32 accuracy, evaluated in float64 (relative error 2^-31.8).
var asinPolyF32 = []float64{0x1.55554c5fb07cfp-3, 0x1.33387c9d1f86cp-4, 0x1.6caed2181bfd7p-5,
	0x1.0491a129edf6ep-5, 0x1.d91fa42a30edbp-7, 0x1.3355c19203164p-5}

// asinAcos computes asin (acos when acos is true) of x, in float64 (x converted from
// float32 when f32, with the shorter polynomial and no correction of the root).
func (b *mb) asinAcos(x val, acos, f32 bool) val {
	ax := b.abs(x)
	half := b.f64(0.5)
	small := b.cmp(cLe, ax, half)
	zl := b.mul(b.sub(b.f64(1), ax), half) // exact for |x| >= 1/2
	z := b.sel(small, b.mul(x, x), zl)
	var s, sl val
	if f32 {
		s = b.sqrt(zl)
		sl = b.f64(0)
	} else {
		s, sl = b.sqrtDD(b.sel(b.cmp(cGe, zl, b.f64(0)), zl, b.f64(0)), b.f64(0), false)
		sl = b.sel(small, b.f64(0), sl)
	}
	s = b.sel(small, ax, s)
	poly := asinPolyF64
	if f32 {
		poly = asinPolyF32
	}
	t := b.fma(b.mul(s, z), b.horner(z, poly), sl) // asin s = s + t
	xNeg := b.cmp(cLt, x, b.f64(0))
	p0h, p0l := constDD(piOver2Digits)
	var ah, al, sigma val
	if !acos {
		ah = b.sel(small, b.f64(0), b.f64(p0h))
		al = b.sel(small, b.f64(0), b.f64(p0l))
		sigma = b.sel(small, b.f64(1), b.f64(-2))
	} else {
		// small: π/2 - sign·(...); x > 1/2: 0 + 2(...); x < -1/2: π - 2(...)
		ah = b.sel(small, b.f64(p0h), b.sel(xNeg, b.f64(2*p0h), b.f64(0)))
		al = b.sel(small, b.f64(p0l), b.sel(xNeg, b.f64(2*p0l), b.f64(0)))
		sigma = b.sel(small, b.sel(xNeg, b.f64(1), b.f64(-1)), b.sel(xNeg, b.f64(-2), b.f64(2)))
	}
	h, e := b.fastTwoSum(ah, b.mul(sigma, s))
	v := b.add(h, b.fma(sigma, t, b.add(e, al)))
	if !acos {
		v = b.withSign(v, x)
	}
	return b.sel(b.cmp(cGtU, ax, b.f64(1)), b.nan(tF64), v)
}

func asinF64(b *mb, t vtype, xs []val) val { return b.asinAcos(xs[0], false, false) }
func acosF64(b *mb, t vtype, xs []val) val { return b.asinAcos(xs[0], true, false) }

func asinF32(b *mb, t vtype, xs []val) val {
	return b.cvtF(b.asinAcos(b.cvtF(xs[0], tF64), false, true), tF32)
}

func acosF32(b *mb, t vtype, xs []val) val {
	return b.cvtF(b.asinAcos(b.cvtF(xs[0], tF64), true, true), tF32)
}

var _ = math.Pi
