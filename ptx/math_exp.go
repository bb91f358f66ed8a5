package ptx

import "math"

// Exponential functions.
//
// Algorithm (Cody & Waite, "Software Manual for the Elementary Functions", 1980; the
// shifter trick and the 2^n construction from the exponent bits as in Muller,
// "Elementary Functions", 3rd ed., §11): n = rint(x/ln2) is found with one fma that adds
// 1.5·2^23 (1.5·2^52 for float64) so the integer lands in the low bits; r = x - n·ln2 is
// computed with ln2 split in two parts, the first product exact thanks to the fma; then
// exp(r) = 1 + r + r²·P(r) with P a minimax polynomial for |r| <= ln2/2 (coefficients
// from internal/remez), and the result is scaled by 2^n built from the exponent bits.
// Results that overflow or become subnormal are scaled in two steps in a branch, so the
// subnormal rounding happens once.

func init() {
	register(Exp, expF32, expF64)
	register(Exp2, exp2F32, exp2F64)
	register(Expm1, expm1F32, expm1F64)
}

// P(r) = (e^r - 1 - r)/r² for |r| <= ln2/2, float32 (relative error 2^-32).
var expm1PolyF32 = []float64{0x1p-1, 0x1.555554p-3, 0x1.5554b2p-5, 0x1.11118ap-7, 0x1.6d71e6p-10, 0x1.a032bep-13}

// The same for float64 (relative error 2^-61.7).
var expm1PolyF64 = []float64{0x1p-1, 0x1.5555555555559p-3, 0x1.555555555553fp-5, 0x1.111111110f6dfp-7,
	0x1.6c16c16c1f05cp-10, 0x1.a01a01afd17cfp-13, 0x1.a01a017bcc79ap-16, 0x1.71ddf88569795p-19,
	0x1.27e536252afe5p-22, 0x1.af5e684e653abp-26, 0x1.1ee889a5a0432p-29}

// (2^r - 1)/r for |r| <= 1/2, float32 (relative error 2^-34.3).
var exp2PolyF32 = []float64{0x1.62e43p-1, 0x1.ebfbep-3, 0x1.c6b08ap-5, 0x1.3b29f4p-7, 0x1.5d8a86p-10, 0x1.445c84p-13, 0x1.fde5fep-17}

// horner returns c[0] + x*(c[1] + x*(c[2] + ...)) with fmas, in x's type.
func (b *mb) horner(x val, c []float64) val {
	t := b.typ(x)
	q := b.fc(t, c[len(c)-1])
	for i := len(c) - 2; i >= 0; i-- {
		q = b.fma(q, x, b.fc(t, c[i]))
	}
	return q
}

// fparams describes a float format for the shared code.
type fparams struct {
	t        vtype
	mant     int     // explicit significand bits (23, 52)
	bias     uint64  // exponent bias
	shifter  float64 // 1.5 * 2^mant
	nanBits  uint64  // canonical NaN
	infBits  uint64
	maxNormE int // largest unbiased exponent
}

var fp32 = fparams{tF32, 23, 127, 0x1.8p23, 0x7fffffff, 0x7f800000, 127}
var fp64 = fparams{tF64, 52, 1023, 0x1.8p52, 0x7fffffffffffffff, 0x7ff0000000000000, 1023}

func fpOf(t vtype) fparams {
	if t == tF32 {
		return fp32
	}
	return fp64
}

func (b *mb) uconst(t vtype, v uint64) val {
	if t == tF32 || t == tU32 {
		return b.u32(uint32(v))
	}
	return b.u64(v)
}

// nan returns the canonical NaN of t.
func (b *mb) nan(t vtype) val { return b.constant(t, fpOf(t).nanBits) }

// inf returns +Inf of t.
func (b *mb) inf(t vtype) val { return b.constant(t, fpOf(t).infBits) }

// isNaN returns the predicate x != x.
func (b *mb) isNaN(x val) val { return b.cmp(cNeU, x, x) }

// expReduce returns n (as a float), the shifter sum s (whose bits hold n),
// r = x - n*ln2 (or x - n for base 2, scaled by ln2 when natural is false) and rl, the
// rounding error of r (x - n·ln2 = r + rl to about 2^-106; 0 for base 2, where r is
// exact).
func (b *mb) expReduce(x val, natural bool) (n, s, r, rl val) {
	t := b.typ(x)
	p := fpOf(t)
	sh := b.fc(t, p.shifter)
	if !natural {
		s = b.add(x, sh)
		n = b.sub(s, sh)
		return n, s, b.sub(x, n), b.fc(t, 0) // exact
	}
	s = b.fma(x, b.fc(t, math.Log2E), sh)
	n = b.sub(s, sh)
	var hi, lo float64
	if t == tF32 {
		hi = float64(float32(math.Ln2))
		lo = float64(float32(math.Ln2 - hi))
	} else {
		// ln2 = hi + lo with hi of 42 bits so n*hi is exact for |n| < 2^11.
		hi = math.Float64frombits(math.Float64bits(math.Ln2) &^ 0x7ff)
		lo = ln2Lo(hi)
	}
	r1 := b.fma(n, b.fc(t, -hi), x) // exact
	r = b.fma(n, b.fc(t, -lo), r1)
	return n, s, r, b.fma(n, b.fc(t, -lo), b.sub(r1, r))
}

// ln2Lo returns ln2 - hi rounded to float64, from a 120-bit value of ln2.
func ln2Lo(hi float64) float64 {
	// ln2 = 0x1.62e42fefa39ef35793c7673007e5ed5e81e69...p-1; tail is ln2 minus its
	// float64 value, computed exactly as a Go constant.
	const tail = 0x1.62e42fefa39ef35793c7673007e5ep-1 - 0x1.62e42fefa39efp-1
	return tail + (math.Ln2 - hi)
}

// pow2 returns 2^k for the integer k held in the low bits of the shifter sum s
// (bits(s) = bits(shifter) + k), plus adj: 2^(k+adj). adj is an integer constant or
// value of the bit type.
func (b *mb) pow2(s val, adj val) val {
	t := b.typ(s)
	p := fpOf(t)
	k := b.sub(b.bits(s), b.bits(b.fc(t, p.shifter)))
	e := b.add(b.add(k, b.uconst(t, p.bias)), adj)
	return b.fromBits(b.shl(e, b.u32(uint32(p.mant))))
}

// expCore returns e^x (natural) or 2^x given the reduction, for the range where 2^n
// is a normal number, and the pieces for the two-step scaling.
func (b *mb) expPoly(r val, natural bool) val {
	t := b.typ(r)
	one := b.fc(t, 1)
	if natural {
		c := expm1PolyF32
		if t == tF64 {
			c = expm1PolyF64
		}
		q := b.horner(r, c)
		q = b.fma(q, r, one)
		return b.fma(q, r, one)
	}
	if t == tF32 {
		q := b.horner(r, exp2PolyF32)
		return b.fma(q, r, one)
	}
	// float64 base 2: scale r by ln2 in double-float and use the natural polynomial.
	rl := b.mul(r, b.f64(math.Ln2))
	rlo := b.fma(r, b.f64(math.Ln2), b.neg(rl))
	rlo = b.fma(r, b.f64(ln2Lo(math.Ln2)), rlo)
	q := b.horner(rl, expm1PolyF64)
	// e^(rl+rlo) = e^rl (1 + rlo): add rlo*(1 + rl) into the last step.
	u := b.fma(b.mul(q, rl), rl, b.fma(rlo, rl, rlo))
	return b.add(one, b.add(rl, u))
}

// expGeneric computes e^x or 2^x. lim is the bound under which 2^n stays normal;
// over and under are where the result overflows to +Inf and underflows to 0.
func (b *mb) expGeneric(x val, natural bool, lim, over, under float64) val {
	return b.expScaled(x, natural, lim, over, under, 0)
}

// expScaled returns e^x·2^off (or 2^x·2^off); off is a small integer.
func (b *mb) expScaled(x val, natural bool, lim, over, under float64, off int) val {
	t := b.typ(x)
	p := fpOf(t)
	_, s, r, _ := b.expReduce(x, natural)
	e := b.expPoly(r, natural)
	res := b.variable(b.fc(t, 0))
	rare := b.cmp(cGeU, b.abs(x), b.fc(t, lim))
	b.ifElse(rare, func() {
		// 2^n * e in two steps: 2^(n-adj) * e * 2^adj with adj = 1 (overflow side) or
		// -64 (subnormal side), both factors normal.
		pos := b.cmp(cGt, x, b.fc(t, 0))
		adj := b.sel(pos, b.uconst(t, 1), b.uconst(t, uint64(1<<64-64)&mask(t)))
		s1 := b.pow2(s, b.sub(b.uconst(t, uint64(off)&mask(t)), adj))
		s2 := b.fromBits(b.shl(b.add(adj, b.uconst(t, p.bias)), b.u32(uint32(p.mant))))
		v := b.mul(b.mul(e, s1), s2)
		v = b.sel(b.cmp(cGt, x, b.fc(t, over)), b.inf(t), v)
		v = b.sel(b.cmp(cLt, x, b.fc(t, under)), b.fc(t, 0), v)
		v = b.sel(b.isNaN(x), b.nan(t), v)
		b.set(res, v)
	}, func() {
		b.set(res, b.mul(e, b.pow2(s, b.uconst(t, uint64(off)&mask(t)))))
	})
	return res
}

func mask(t vtype) uint64 {
	if t == tF32 || t == tU32 {
		return 0xffffffff
	}
	return math.MaxUint64
}

func expF32(b *mb, t vtype, x []val) val { return b.expGeneric(x[0], true, 87, 89, -104) }
func expF64(b *mb, t vtype, x []val) val { return b.expGeneric(x[0], true, 708, 710, -746) }

func exp2F32(b *mb, t vtype, x []val) val { return b.expGeneric(x[0], false, 126, 129, -151) }
func exp2F64(b *mb, t vtype, x []val) val { return b.expGeneric(x[0], false, 1022, 1025, -1076) }

// expm1: for |x| <= ln2/2 the polynomial alone, expm1(x) = x + x²P(x); beyond,
// expm1(x) = 2^n (expm1(r)) + (2^n - 1) with expm1(r) a double-word (r's own rounding
// error included) and the sum formed exactly by Fast2Sum before the low parts join (for
// large n, 2^n + 2^n·(expm1(r) - 2^-n)); past the point where 2^n would overflow, e^x
// (the 1 is far below an ulp); and -1 when e^x < ulp(1)/4.
func (b *mb) expm1Generic(x val, small, big, minusOne float64, poly []float64, expf func(*mb, vtype, []val) val) val {
	t := b.typ(x)
	res := b.variable(b.fc(t, 0))
	ax := b.abs(x)
	b.ifElse(b.cmp(cLe, ax, b.fc(t, small)), func() {
		q := b.horner(x, poly)
		// x + x²q; x itself for ±0 (the sum would give +0 for -0)
		b.set(res, b.sel(b.cmp(cEq, x, b.fc(t, 0)), x, b.fma(b.mul(x, x), q, x)))
	}, func() {
		b.ifElse(b.cmp(cLt, ax, b.fc(t, big)), func() {
			_, s, r, rl := b.expReduce(x, true)
			q := b.horner(r, poly)
			// u = expm1(r + rl) as a double-word uh + ul
			uh, ul := b.fastTwoSum(r, b.fma(b.mul(r, r), q, rl))
			u := b.add(uh, ul)
			sc := b.pow2(s, b.uconst(t, 0))
			// (sc - 1) + sc·uh, both exact, |sc - 1| >= |sc·uh| or sc = 1: Fast2Sum,
			// then the low parts; the cancellation for n = ±1 costs no accuracy.
			vh, ve := b.fastTwoSum(b.sub(sc, b.fc(t, 1)), b.mul(sc, uh))
			v := b.add(vh, b.fma(sc, ul, ve)) // sc - 1 is exact while n <= mant+1
			// For larger n, s·(1+u) - 1 = s + s·(u - 2^-n) with one rounding.
			p := fpOf(t)
			k := b.sub(b.bits(s), b.bits(b.fc(t, p.shifter)))
			inv := b.fromBits(b.shl(b.sub(b.uconst(t, p.bias), k), b.u32(uint32(p.mant))))
			v2 := b.fma(sc, b.sub(u, inv), sc)
			v = b.sel(b.cmp(cGt, x, b.fc(t, float64(p.mant)*0.69)), v2, v)
			b.set(res, b.sel(b.cmp(cLt, x, b.fc(t, minusOne)), b.fc(t, -1), v))
		}, func() {
			v := expf(b, t, []val{x})
			v = b.sel(b.cmp(cLt, x, b.fc(t, 0)), b.fc(t, -1), v)
			b.set(res, v)
		})
	})
	return res
}

func expm1F32(b *mb, t vtype, x []val) val {
	return b.expm1Generic(x[0], 0.3465, 87, -17.5, expm1PolyF32, expF32)
}

func expm1F64(b *mb, t vtype, x []val) val {
	return b.expm1Generic(x[0], 0.3465, 708, -38, expm1PolyF64, expF64)
}
