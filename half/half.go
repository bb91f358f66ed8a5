// Package half is the Go element types of half-precision arrays: Float16 (IEEE 754
// binary16, NumPy's float16) and BFloat16 (bfloat16, the ml_dtypes type NumPy users use
// for it). The root package exports them as gpu.Float16 and gpu.BFloat16.
//
// A value is its 16 bits: the types are named uint16s, so a slice of them is laid out
// exactly as the array's memory, and Float16(b) of a uint16 b reinterprets bits. Beware
// that Go's numeric conversion of a float (Float16(x) for a float32 x) converts the
// value to an integer, not to a float16: write Float16FromFloat32(x) or
// NewFloat16(float64(x)).
//
// Conversions round to nearest, ties to even, once (from float64 too, never through
// float32), keep NaN a NaN (quiet, with its sign and the top bits of its payload),
// overflow to ±Inf, keep ±0 and handle subnormals exactly: the rounding of NumPy's and
// ml_dtypes' casts and of the GPU's cvt.rn instructions, so values made on the host
// equal values the GPU computes. The bit-level conversions are package dtype's
// (dtype.Float16FromFloat32 ...), which this package names with types.
//
// Other Go float16 packages: github.com/x448/float16's Float16 is a named uint16 with
// the same bit layout, so conversions between the two are free and exact in both
// directions: half.Float16(x) of an x448 float16.Float16 x, and float16.Float16(h) of a
// half.Float16 h (Go converts between named types of one underlying type). This package
// doesn't import it: the few functions here don't justify a dependency.
package half

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-gpu/gpu/dtype"
)

// Float16 is an IEEE 754 binary16 value (1 sign bit, 5 exponent bits, 10 fraction bits:
// 3 to 4 significant decimal digits, largest finite value 65504, smallest positive
// normal 2^-14, smallest subnormal 2^-24), held as its bits.
type Float16 uint16

// BFloat16 is a bfloat16 value (1 sign bit, 8 exponent bits, 7 fraction bits: float32's
// range with 2 to 3 significant decimal digits; largest finite value about 3.39e38),
// held as its bits: the top half of the float32 of the same value.
type BFloat16 uint16

// NewFloat16 returns the float16 nearest to f (ties to even), rounding once.
func NewFloat16(f float64) Float16 { return Float16(dtype.Float16FromFloat64(f)) }

// Float16FromFloat32 returns the float16 nearest to f (ties to even).
func Float16FromFloat32(f float32) Float16 { return Float16(dtype.Float16FromFloat32(f)) }

// Float16FromBits returns the float16 with bits b (the same as Float16(b)).
func Float16FromBits(b uint16) Float16 { return Float16(b) }

// Bits returns h's bits.
func (h Float16) Bits() uint16 { return uint16(h) }

// Float32 returns h's value (exact).
func (h Float16) Float32() float32 { return dtype.Float16ToFloat32(uint16(h)) }

// Float64 returns h's value (exact).
func (h Float16) Float64() float64 { return dtype.Float16ToFloat64(uint16(h)) }

// IsNaN reports whether h is a NaN.
func (h Float16) IsNaN() bool { return h&0x7fff > 0x7c00 }

// DType returns dtype.Float16: the element type of arrays of Float16 (dtype.Of).
func (Float16) DType() dtype.DType { return dtype.Float16 }

// String returns the shortest decimal that rounds back to h (NumPy's repr of a
// float16: 0.1, not 0.0999755859375), in Go's %v layout: "0.1", "65500", "6e-08",
// "NaN", "+Inf", "-0".
func (h Float16) String() string {
	return shortest(h.Float64(), func(v float64) bool { return NewFloat16(v) == h })
}

// Format implements fmt.Formatter: %v and %s print String (with width and flags), %#v
// the Go syntax of the value's bits ("half.Float16(0x3c00)"), the float verbs (%e %E %f %F %g %G %x %X %b) print the value as float64 formats it, so
// fmt.Sprintf("%.2f", h) works; other verbs are errors ("%!d(half.Float16=1.5)").
func (h Float16) Format(s fmt.State, verb rune) {
	format(s, verb, "half.Float16", uint16(h), h.String(), h.Float64())
}

// NewBFloat16 returns the bfloat16 nearest to f (ties to even), rounding once.
func NewBFloat16(f float64) BFloat16 { return BFloat16(dtype.BFloat16FromFloat64(f)) }

// BFloat16FromFloat32 returns the bfloat16 nearest to f (ties to even).
func BFloat16FromFloat32(f float32) BFloat16 { return BFloat16(dtype.BFloat16FromFloat32(f)) }

// BFloat16FromBits returns the bfloat16 with bits b (the same as BFloat16(b)).
func BFloat16FromBits(b uint16) BFloat16 { return BFloat16(b) }

// Bits returns h's bits.
func (h BFloat16) Bits() uint16 { return uint16(h) }

// Float32 returns h's value (exact).
func (h BFloat16) Float32() float32 { return dtype.BFloat16ToFloat32(uint16(h)) }

// Float64 returns h's value (exact).
func (h BFloat16) Float64() float64 { return dtype.BFloat16ToFloat64(uint16(h)) }

// IsNaN reports whether h is a NaN.
func (h BFloat16) IsNaN() bool { return h&0x7fff > 0x7f80 }

// DType returns dtype.BFloat16: the element type of arrays of BFloat16 (dtype.Of).
func (BFloat16) DType() dtype.DType { return dtype.BFloat16 }

// String returns the shortest decimal that rounds back to h, in Go's %v layout
// (ml_dtypes' repr of a bfloat16: 0.1, not 0.10009765625).
func (h BFloat16) String() string {
	return shortest(h.Float64(), func(v float64) bool { return NewBFloat16(v) == h })
}

// Format implements fmt.Formatter, as Float16's Format.
func (h BFloat16) Format(s fmt.State, verb rune) {
	format(s, verb, "half.BFloat16", uint16(h), h.String(), h.Float64())
}

// shortest returns the decimal with the fewest significant digits that same accepts
// (rounds back to the same half value), formatted as Go formats a float64 with %v.
func shortest(v float64, same func(float64) bool) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return strconv.FormatFloat(v, 'g', -1, 64) // NaN, +Inf, -Inf, 0, -0
	}
	for digits := 1; digits < 17; digits++ {
		d, err := strconv.ParseFloat(strconv.FormatFloat(v, 'e', digits-1, 64), 64)
		if err == nil && same(d) {
			// d is the float64 nearest to a decimal of digits digits, so its own
			// shortest form is that decimal.
			return strconv.FormatFloat(d, 'g', -1, 64)
		}
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

func format(s fmt.State, verb rune, typ string, bits uint16, str string, v float64) {
	switch verb {
	case 'v', 's':
		if verb == 'v' && s.Flag('#') {
			fmt.Fprintf(s, "%s(%#04x)", typ, bits) // Go syntax: the conversion of its bits
			return
		}
		fmt.Fprintf(s, fmt.FormatString(s, 's'), str)
	case 'e', 'E', 'f', 'F', 'g', 'G', 'x', 'X', 'b':
		fmt.Fprintf(s, fmt.FormatString(s, verb), v)
	default:
		fmt.Fprintf(s, "%%!%c(%s=%s)", verb, typ, str)
	}
}
