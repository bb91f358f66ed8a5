package dtype

import "math"

// Float16 and BFloat16 elements are stored as their IEEE 754 / bfloat16 bit patterns in a
// uint16. The conversions below round to nearest, ties to even (IEEE 754's default, the
// rounding of numpy.float16 and ml_dtypes.bfloat16 casts and of PTX cvt.rn), handle
// subnormals, infinities and signed zeros exactly, overflow to infinity, and keep NaN a
// NaN (quiet, sign kept, with the top bits of the payload).

// Float16ToFloat32 returns the value of the float16 with bits h. The conversion is exact.
func Float16ToFloat32(h uint16) float32 {
	// Place exponent and mantissa in a float32 with the float16 exponent bias; one
	// exact multiplication by 2^112 rebiases normal and subnormal values alike. (A
	// float16 subnormal becomes a float32 subnormal here, which some CPUs multiply
	// slowly; they are rare.) Inf and NaN get the float32 exponent field instead.
	o := uint32(h&0x7fff) << 13
	sign := uint32(h&0x8000) << 16
	if o >= 0x0f800000 {
		return math.Float32frombits(sign | 0x7f800000 | o)
	}
	return math.Float32frombits(sign | math.Float32bits(math.Float32frombits(o)*0x1p112))
}

// Float16ToFloat64 returns the value of the float16 with bits h. The conversion is exact.
func Float16ToFloat64(h uint16) float64 { return float64(Float16ToFloat32(h)) }

// Float16FromFloat32 returns the bits of the float16 nearest to f (ties to even).
// Magnitudes of 65520 and more become ±Inf; magnitudes of 2^-25 and less become ±0.
func Float16FromFloat32(f float32) uint16 {
	b := math.Float32bits(f)
	a := b &^ 0x80000000
	if a-113<<23 < (143-113)<<23 { // the result is a normal float16: rebias and round
		return uint16(b>>16)&0x8000 | uint16((a-(127-15)<<23+0xfff+(a>>13)&1)>>13)
	}
	return float16FromFloat32Slow(b)
}

// float16FromFloat32Slow handles the results that are not normal numbers, after F.
// Giesen's float_to_half_fast3_rtne (keeping NaN payloads).
func float16FromFloat32Slow(b uint32) uint16 {
	sign := uint16(b>>16) & 0x8000
	b &^= 0x80000000
	if b >= (127+16)<<23 { // overflow, Inf or NaN
		if b > 0x7f800000 {
			return sign | 0x7e00 | uint16(b&0x7fffff>>13)
		}
		return sign | 0x7c00
	}
	// The result is subnormal or zero: adding 0.5 aligns the 10 mantissa bits at the
	// bottom of the float, and the float32 addition rounds to nearest even.
	const magic = ((127 - 15) + (23 - 10) + 1) << 23
	b = math.Float32bits(math.Float32frombits(b)+math.Float32frombits(magic)) - magic
	return sign | uint16(b)
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
