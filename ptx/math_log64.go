package ptx

import (
	"math"
	"math/big"
	"sync"
)

// float64 logarithms: Tang's table method (ACM TOMS 16(4), 1990). x = 2^e·m with m in
// [sqrt(1/2), sqrt(2)); j = the top 7 bits of m's offset from sqrt(1/2); r_j ≈ 1/c_j on
// a grid of 2^-8 so z = m·r_j - 1 is exact in one fma (|z| < 2^-7); then
// log x = (e·ln2_hi + T_hi) + (z - z²/2 + z³P(z) + e·ln2_lo + T_lo) where T = -log r_j,
// T_hi on the 2^-42 grid of ln2_hi so the first sum is exact. Near 1 (|x - 1| < 2^-6)
// the table would cancel, so f = x - 1 (exact) goes through a longer series instead.
// log2 and log10 multiply the double-float natural log by their constant.

func init() {
	register(Log, logF32, logF64)
	register(Log2, log2F32, log2F64)
	register(Log10, log10F32, log10F64)
}

// Decimal digits for the constants and the big-float logarithm of the table.
const (
	ln2Digits    = "0.693147180559945309417232121458176568075500134360255254120680009493393621969694715605863326996418687542"
	log2eDigits  = "1.442695040888963407359924681001892137426645954152985934135449406931109219181185079885526622893506344"
	log10eDigits = "0.434294481903251827651128918916605082294397005803666566114453783165864649208870774729224949338431748"
)

func bigConst(s string) *big.Float {
	f, _, err := big.ParseFloat(s, 10, 300, big.ToNearestEven)
	if err != nil {
		panic(err)
	}
	return f
}

// bigLogSmall returns log(r) for r in [0.5, 2] by the series 2·atanh((r-1)/(r+1)).
func bigLogSmall(r float64) *big.Float {
	p := uint(300)
	num := new(big.Float).SetPrec(p).SetFloat64(r - 1)
	den := new(big.Float).SetPrec(p).SetFloat64(r + 1)
	s := new(big.Float).SetPrec(p).Quo(num, den)
	s2 := new(big.Float).SetPrec(p).Mul(s, s)
	sum := new(big.Float).SetPrec(p)
	term := new(big.Float).SetPrec(p).Set(s)
	for k := 0; k < 400; k++ {
		t := new(big.Float).SetPrec(p).Quo(term, new(big.Float).SetInt64(int64(2*k+1)))
		sum.Add(sum, t)
		term.Mul(term, s2)
		if term.Sign() == 0 || term.MantExp(nil) < -320 {
			break
		}
	}
	return sum.Mul(sum, new(big.Float).SetInt64(2))
}

// log64Tables returns r_j, T_hi and T_lo for the 128 buckets (computed once).
func log64Tables() (r, thi, tlo []uint64) {
	t := log64TablesOnce()
	return t[0], t[1], t[2]
}

var log64TablesOnce = sync.OnceValue(func() (t [3][]uint64) {
	base := math.Float64bits(math.Sqrt2 / 2)
	for j := uint64(0); j < 128; j++ {
		lo := math.Float64frombits(base + j<<45)
		hi := math.Float64frombits(base + (j+1)<<45)
		rj := math.Ldexp(math.Round(math.Ldexp(2/(lo+hi), 8)), -8)
		if lo <= 1 && 1 < hi {
			rj = 1
		}
		lg := bigLogSmall(rj)
		lg.Neg(lg)
		tf, _ := lg.Float64()
		th := math.Ldexp(math.Round(math.Ldexp(tf, 42)), -42)
		tl, _ := new(big.Float).SetPrec(300).Sub(lg, new(big.Float).SetFloat64(th)).Float64()
		t[0] = append(t[0], math.Float64bits(rj))
		t[1] = append(t[1], math.Float64bits(th))
		t[2] = append(t[2], math.Float64bits(tl))
	}
	return t
})

// logDD returns log(x) as hi + lo (|lo| <= ulp(hi)) for x in [min normal, +Inf) and
// the special predicate, as logParts does for float32.
func (b *mb) logDD64(x val) (hi, lo, special val) {
	t := tF64
	p := fp64
	minNorm := b.u64(1 << 52)
	u := b.sub(b.bits(x), minNorm)
	special = b.cmp(cGe, u, b.u64(p.infBits-(1<<52)))
	xv := b.variable(x)
	eb := b.variable(b.u64(0))
	b.ifThen(special, func() {
		b.ifThen(b.cmp(cLt, b.bits(x), minNorm), func() {
			b.set(xv, b.mul(x, b.f64(0x1p52)))
			b.set(eb, b.u64(uint64(1<<64-52)))
		})
	})
	ln2 := splitConst(ln2Digits, 2, t)
	ln2hi := math.Float64frombits(math.Float64bits(ln2[0]) &^ 0x7ff) // 42 bits
	ln2lo, _ := new(big.Float).SetPrec(300).Sub(bigConst(ln2Digits), new(big.Float).SetFloat64(ln2hi)).Float64()

	vh := b.variable(b.f64(0))
	vl := b.variable(b.f64(0))
	f := b.sub(xv, b.f64(1))
	b.ifElse(b.cmp(cLt, b.abs(f), b.f64(0x1p-6)), func() {
		// log1p(f) = f - f²/2 + f³·(1/3 - f/4 + ... + f^8/11)
		c := make([]float64, 9)
		for k := range c {
			c[k] = 1 / float64(k+3)
			if k%2 == 1 {
				c[k] = -c[k]
			}
		}
		h := b.mul(b.mul(f, f), b.f64(0.5))
		rest := b.fma(b.mul(f, b.mul(f, f)), b.horner(f, c), b.neg(h))
		hi := b.add(f, rest)
		b.set(vh, hi)
		b.set(vl, b.add(b.sub(f, hi), rest))
	}, func() {
		rt, th, tl := log64Tables()
		tr, tth, ttl := b.table("log64_r", t, rt), b.table("log64_thi", t, th), b.table("log64_tlo", t, tl)
		xb := b.bits(xv)
		ix := b.sub(xb, b.u64(math.Float64bits(math.Sqrt2/2)))
		e := b.sar(ix, b.u32(52))
		m := b.fromBits(b.sub(xb, b.shl(e, b.u32(52))))
		j := b.lo(b.and(b.shr(ix, b.u32(45)), b.u64(0x7f)))
		ef := b.cvtSI(b.add(e, eb), t)
		z := b.fma(m, b.load(tr, j), b.f64(-1)) // exact
		c := make([]float64, 7)
		for k := range c {
			c[k] = 1 / float64(k+3)
			if k%2 == 1 {
				c[k] = -c[k]
			}
		}
		a := b.fma(ef, b.f64(ln2hi), b.load(tth, j)) // exact
		h := b.mul(b.mul(z, z), b.f64(0.5))
		rest := b.fma(b.mul(z, b.mul(z, z)), b.horner(z, c), b.neg(h))
		rest = b.add(rest, b.fma(ef, b.f64(ln2lo), b.load(ttl, j)))
		u := b.add(z, rest)
		ul := b.add(b.sub(z, u), rest)
		hi := b.add(a, u)
		// TwoSum of a and u
		bb := b.sub(hi, a)
		err := b.add(b.sub(a, b.sub(hi, bb)), b.sub(u, bb))
		b.set(vh, hi)
		b.set(vl, b.add(err, ul))
	})
	return vh, vl, special
}

func (b *mb) logBase64(x val, digits string) val {
	t := tF64
	hi, lo, special := b.logDD64(x)
	var v val
	if digits == "" {
		v = b.add(hi, lo)
	} else {
		m := splitConst(digits, 2, t)
		p := b.mul(hi, b.f64(m[0]))
		pl := b.fma(hi, b.f64(m[0]), b.neg(p))
		tail := b.fma(lo, b.f64(m[0]), b.fma(hi, b.f64(m[1]), pl))
		v = b.add(p, tail)
	}
	res := b.variable(v)
	b.ifThen(special, func() { b.set(res, b.logSpecial(x, v)) })
	return res
}

func logF64(b *mb, t vtype, x []val) val   { return b.logBase64(x[0], "") }
func log2F64(b *mb, t vtype, x []val) val  { return b.logBase64(x[0], log2eDigits) }
func log10F64(b *mb, t vtype, x []val) val { return b.logBase64(x[0], log10eDigits) }
