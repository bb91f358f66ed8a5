package dtype

import "math"

// Float16 and BFloat16 elements are stored as their IEEE 754 / bfloat16 bit patterns in a
// uint16. The conversions below round to nearest, ties to even (IEEE 754's default, the
// rounding of numpy.float16 and ml_dtypes.bfloat16 casts and of PTX cvt.rn), handle
// subnormals, infinities and signed zeros exactly, overflow to infinity, and keep NaN a
// NaN (quiet, sign kept, with the top bits of the payload).

// Float16ToFloat32 returns the value of the float16 with bits h. The conversion is exact.
func Float16ToFloat32(h uint16) float32 {
	sign := uint32(h&0x8000) << 16
	exp := uint32(h>>10) & 0x1f
	mant := uint32(h & 0x3ff)
	switch exp {
	case 0:
		if mant == 0 {
			return math.Float32frombits(sign)
		}
		// Subnormal: mant × 2^-24, exact in float32.
		f := float32(mant) * (1.0 / (1 << 24))
		if sign != 0 {
			f = -f
		}
		return f
	case 0x1f:
		return math.Float32frombits(sign | 0x7f800000 | mant<<13)
	}
	return math.Float32frombits(sign | (exp+112)<<23 | mant<<13)
}

// Float16ToFloat64 returns the value of the float16 with bits h. The conversion is exact.
func Float16ToFloat64(h uint16) float64 { return float64(Float16ToFloat32(h)) }

// Float16FromFloat32 returns the bits of the float16 nearest to f (ties to even).
// Magnitudes of 65520 and more become ±Inf; magnitudes of 2^-25 and less become ±0.
func Float16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int(b>>23) & 0xff
	mant := b & 0x7fffff
	if exp == 0xff {
		if mant == 0 {
			return sign | 0x7c00
		}
		return sign | 0x7e00 | uint16(mant>>13)
	}
	e := exp - 127 + 15 // the float16 biased exponent
	if e >= 0x1f {
		return sign | 0x7c00
	}
	if e <= 0 {
		if e < -10 {
			return sign
		}
		m := mant | 0x800000
		shift := uint(14 - e)
		h := m >> shift
		rem := m & (1<<shift - 1)
		half := uint32(1) << (shift - 1)
		if rem > half || (rem == half && h&1 == 1) {
			h++
		}
		return sign | uint16(h)
	}
	h := uint32(e)<<10 | mant>>13
	rem := mant & 0x1fff
	if rem > 0x1000 || (rem == 0x1000 && h&1 == 1) {
		h++ // a carry out of the mantissa rounds up the exponent, to Inf at the top
	}
	return sign | uint16(h)
}

// Float16FromFloat64 returns the bits of the float16 nearest to f (ties to even), rounding
// once (not through float32, which could round twice).
func Float16FromFloat64(f float64) uint16 { return fromFloat64(f, 5, 10) }

// BFloat16ToFloat32 returns the value of the bfloat16 with bits h. The conversion is exact.
func BFloat16ToFloat32(h uint16) float32 { return math.Float32frombits(uint32(h) << 16) }

// BFloat16ToFloat64 returns the value of the bfloat16 with bits h. The conversion is exact.
func BFloat16ToFloat64(h uint16) float64 { return float64(BFloat16ToFloat32(h)) }

// BFloat16FromFloat32 returns the bits of the bfloat16 nearest to f (ties to even).
// bfloat16 has float32's exponent range, so only the mantissa is rounded; values that
// round past the largest finite bfloat16 become ±Inf.
func BFloat16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	if b&0x7fffffff > 0x7f800000 { // NaN: keep it a (quiet) NaN
		return uint16(b>>16) | 0x40
	}
	b += 0x7fff + (b>>16)&1
	return uint16(b >> 16)
}

// BFloat16FromFloat64 returns the bits of the bfloat16 nearest to f (ties to even),
// rounding once.
func BFloat16FromFloat64(f float64) uint16 { return fromFloat64(f, 8, 7) }

// fromFloat64 rounds f to a binary format of 1+ebits+mbits bits (at most 16) with IEEE 754
// layout, ties to even, with subnormals, Inf and NaN.
func fromFloat64(f float64, ebits, mbits uint) uint16 {
	b := math.Float64bits(f)
	sign := uint16(b>>48) & 0x8000
	exp := int(b>>52) & 0x7ff
	mant := b & (1<<52 - 1)
	emax := 1<<ebits - 1
	bias := emax >> 1
	inf := sign | uint16(emax)<<mbits
	if exp == 0x7ff {
		if mant == 0 {
			return inf
		}
		return inf | 1<<(mbits-1) | uint16(mant>>(52-mbits))
	}
	e := exp - 1023 + bias
	if e >= emax {
		return inf
	}
	var h, m uint64
	var shift uint
	if e <= 0 {
		if e < -int(mbits) || (exp == 0 && mant == 0) {
			return sign
		}
		m = mant | 1<<52
		shift = uint(52 - int(mbits) + 1 - e)
		h = m >> shift
	} else {
		m = mant
		shift = 52 - mbits
		h = uint64(e)<<mbits | m>>shift
	}
	rem := m & (1<<shift - 1)
	half := uint64(1) << (shift - 1)
	if rem > half || (rem == half && h&1 == 1) {
		h++
	}
	return sign | uint16(h)
}
