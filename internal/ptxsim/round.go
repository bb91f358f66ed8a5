package ptxsim

import (
	"math"
	"math/big"
	"math/bits"
)

// Exact arithmetic for the conversions and rounding modes Go has no operator for
// (float16, bfloat16, directed rounding, float32 fma): values are held exactly as
// (-1)^neg * m * 2^e with a big.Int m, and rounded to a binary format by integer
// arithmetic, subnormals and overflow included.

// format is an IEEE 754 binary format: fraction bits and exponent bits.
type format struct{ frac, exp int }

var (
	fmtF16  = format{10, 5}
	fmtBF16 = format{7, 8}
	fmtF32  = format{23, 8}
	fmtF64  = format{52, 11}
)

func (f format) bias() int { return 1<<(f.exp-1) - 1 }

// canonicalNaN is the NaN the GPU produces in each format.
func (f format) canonicalNaN() uint64 {
	switch f {
	case fmtF64:
		return 1<<63 - 1
	case fmtF32:
		return 1<<31 - 1
	}
	return 0x7fff
}

func (f format) inf(neg bool) uint64 {
	b := uint64(1<<f.exp-1) << f.frac
	if neg {
		b |= 1 << (f.frac + f.exp)
	}
	return b
}

func (f format) maxFinite(neg bool) uint64 {
	b := f.inf(neg) - 1
	return b
}

// xval is an exact value, (-1)^neg * m * 2^e, or an infinity or NaN. Values with more
// than 64 significant bits (exact fma results) are kept to 64 bits with a sticky last
// bit, which rounds the same way to any format of at most 62 bits.
type xval struct {
	neg      bool
	m        uint64
	e        int
	inf, nan bool
}

// decode returns the exact value of the bits of format f.
func (f format) decode(bits uint64) xval {
	neg := bits>>(f.frac+f.exp)&1 != 0
	ef := int(bits >> f.frac & (1<<f.exp - 1))
	fr := bits & (1<<f.frac - 1)
	switch {
	case ef == 1<<f.exp-1:
		return xval{neg: neg, inf: fr == 0, nan: fr != 0}
	case ef == 0:
		return xval{neg: neg, m: fr, e: 1 - f.bias() - f.frac}
	}
	return xval{neg: neg, m: fr | 1<<f.frac, e: ef - f.bias() - f.frac}
}

func xint(v int64) xval {
	if v < 0 {
		return xval{neg: true, m: -uint64(v)}
	}
	return xval{m: uint64(v)}
}

func xuint(v uint64) xval { return xval{m: v} }

// rounding modes
type rmode uint8

const (
	rn rmode = iota // to nearest, ties to even
	rz              // toward zero
	rm              // toward -inf
	rp              // toward +inf
)

// roundShift returns m * 2^(-shift) rounded to an integer in mode md, for a value of
// sign neg (the magnitude; the caller applies the sign). A negative shift must not
// overflow.
func roundShift(m uint64, shift int, neg bool, md rmode) uint64 {
	if shift <= 0 {
		return m << uint(-shift)
	}
	var k, r, half uint64
	switch {
	case shift >= 65: // below half of one unit: only the directed modes round up
		if m != 0 && (md == rm && neg || md == rp && !neg) {
			return 1
		}
		return 0
	case shift == 64:
		k, r, half = 0, m, 1<<63
	default:
		k, r, half = m>>uint(shift), m&(1<<uint(shift)-1), 1<<uint(shift-1)
	}
	if r == 0 {
		return k
	}
	up := false
	switch md {
	case rn:
		up = r > half || (r == half && k&1 == 1)
	case rm:
		up = neg
	case rp:
		up = !neg
	}
	if up {
		k++
	}
	return k
}

// round returns the bits of x rounded to format f in mode md.
func (f format) round(x xval, md rmode) uint64 {
	sign := uint64(0)
	if x.neg {
		sign = 1 << (f.frac + f.exp)
	}
	switch {
	case x.nan:
		return f.canonicalNaN()
	case x.inf:
		return f.inf(x.neg)
	case x.m == 0:
		return sign
	}
	emin := 1 - f.bias()
	E := x.e + bits.Len64(x.m) - 1
	q := max(E, emin) - f.frac
	k := roundShift(x.m, q-x.e, x.neg, md)
	if bits.Len64(k) > f.frac+1 {
		k >>= 1 // rounded up to the next power of two: exact
		q++
	}
	if k == 0 {
		return sign
	}
	if q+bits.Len64(k)-1 > f.bias() { // overflow
		switch {
		case md == rn, md == rp && !x.neg, md == rm && x.neg:
			return f.inf(x.neg)
		}
		return f.maxFinite(x.neg)
	}
	if bits.Len64(k) == f.frac+1 {
		return sign | uint64(q+f.frac+f.bias())<<f.frac | k&(1<<f.frac-1)
	}
	return sign | k // subnormal: q == emin - frac
}

// toInteger returns the magnitude of x rounded to an integer in mode md, and false if
// it does not fit in 64 bits (NaN and infinities are the caller's).
func (x xval) toInteger(md rmode) (uint64, bool) {
	if x.m != 0 && x.e+bits.Len64(x.m) > 64 {
		return 0, false
	}
	return roundShift(x.m, -x.e, x.neg, md), true
}

// integral rounds x to an integral value of format f (cvt.rni.f32.f32 and friends),
// keeping the sign of zero.
func (f format) integral(b uint64, md rmode) uint64 {
	x := f.decode(b)
	if x.nan {
		return f.canonicalNaN()
	}
	if x.inf || x.e >= 0 {
		return b
	}
	k := roundShift(x.m, -x.e, x.neg, md)
	return f.round(xval{neg: x.neg, m: k}, md)
}

// mulAdd returns a*b + c, exact up to the sticky bit (see xval), for rounding in mode
// md (which gives an exact zero its sign).
func mulAdd(a, b, c xval, md rmode) xval {
	if a.nan || b.nan || c.nan {
		return xval{nan: true}
	}
	pneg := a.neg != b.neg
	if a.inf || b.inf {
		if (a.inf && !b.inf && b.m == 0) || (b.inf && !a.inf && a.m == 0) {
			return xval{nan: true}
		}
		if c.inf && c.neg != pneg {
			return xval{nan: true}
		}
		return xval{neg: pneg, inf: true}
	}
	if c.inf {
		return c
	}
	p := new(big.Int).Mul(new(big.Int).SetUint64(a.m), new(big.Int).SetUint64(b.m))
	pe := a.e + b.e
	e := min(pe, c.e)
	mp := p.Lsh(p, uint(pe-e))
	mc := new(big.Int).Lsh(new(big.Int).SetUint64(c.m), uint(c.e-e))
	if pneg {
		mp.Neg(mp)
	}
	if c.neg {
		mc.Neg(mc)
	}
	s := mp.Add(mp, mc)
	if s.Sign() == 0 {
		// an exact zero: two zeros of one sign keep it; otherwise -0 rounding down only
		if (a.m == 0 || b.m == 0) && c.m == 0 && pneg == c.neg {
			return xval{neg: pneg}
		}
		return xval{neg: md == rm}
	}
	neg := s.Sign() < 0
	s.Abs(s)
	if n := s.BitLen(); n > 64 {
		sh := uint(n - 64)
		sticky := new(big.Int).Rsh(s, sh)
		lost := new(big.Int).Sub(s, new(big.Int).Lsh(sticky, sh)).Sign() != 0
		m := sticky.Uint64()
		if lost {
			m |= 1
		}
		return xval{neg: neg, m: m, e: e + int(sh)}
	}
	return xval{neg: neg, m: s.Uint64(), e: e}
}

// fma32 is fma.rn.f32: a*b+c rounded once. The float64 fma is exact in almost every
// case; when its result falls exactly halfway between two float32 values (where a
// second rounding could go the wrong way), the exact value is rounded instead.
func fma32(a, b, c float32) float32 {
	r := math.FMA(float64(a), float64(b), float64(c))
	if r != r {
		return math.Float32frombits(uint32(fmtF32.canonicalNaN()))
	}
	f := float32(r)
	if float64(f) == r {
		return f
	}
	if math.Abs(r) < math.MaxFloat32 {
		g := math.Nextafter32(f, float32(math.Copysign(math.Inf(1), r-float64(f))))
		if r != (float64(f)+float64(g))/2 {
			return f
		}
	}
	x := mulAdd(fmtF32.decode(uint64(math.Float32bits(a))), fmtF32.decode(uint64(math.Float32bits(b))),
		fmtF32.decode(uint64(math.Float32bits(c))), rn)
	return math.Float32frombits(uint32(fmtF32.round(x, rn)))
}
