// Package fp holds the scalar rules of the float operations that the CPU code of every
// package shares, so that each is written once: the canonical NaN, numpy.minimum and
// numpy.maximum, C's fmin and fmax. Package expr's CPU kernels and internal/kernel's
// reductions, scans and operator table call these functions; the PTX they mirror is
// internal/kernel's elementwise lowering.
//
// # NaN policy
//
// The library's NaN policy is "propagated, canonical": a float operation whose result is
// NaN (arithmetic on a NaN operand, Inf-Inf, 0*Inf, a minimum or maximum with a NaN
// operand, a sum, product, minimum or maximum over values that include a NaN) gives
// the canonical NaN, 0x7fffffff for float32 and 0x7fffffffffffffff for float64 (float16
// and bfloat16 compute in float32 and round it to 0x7fff). It is what NVIDIA GPUs'
// arithmetic gives whatever NaN came in, and max.NaN.f32 (sm_80) too, so the GPU pays
// nothing for it, and it makes every result independent of which NaN met which first:
// reductions and scans combine in a different order on each backend and for each
// launch shape. NumPy returns the NaN operand itself (its payload and sign); here the
// payload and the sign of a NaN are kept only by the operations that move values
// without computing (copies, where, take, FindMin and FindMax's values) or that are
// defined on the sign bit (negation, abs, copysign, signbit).
package fp

import "unsafe"

// Number is the Go element types the CPU computes on (bools as uint8 0 and 1).
type Number interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Float is the float types.
type Float interface{ ~float32 | ~float64 }

// The canonical NaNs' bits (see the package documentation).
const (
	NaN32Bits = 0x7fffffff
	NaN64Bits = 0x7fffffffffffffff
)

// IsFloat reports whether T is a float type.
func IsFloat[T Number]() bool {
	var z T
	z = 1
	return z/2 != 0
}

// NaN returns the canonical NaN of a float type T (0 for an integer type).
func NaN[T Number]() T {
	if !IsFloat[T]() {
		return 0
	}
	if unsafe.Sizeof(T(0)) == 4 {
		return FromBits[T](NaN32Bits)
	}
	return FromBits[T](NaN64Bits)
}

// Canon returns x, or the canonical NaN if x is a NaN.
func Canon[T Number](x T) T {
	if x != x {
		return NaN[T]()
	}
	return x
}

// Bits returns the bits of x, zero-extended.
func Bits[T Number](x T) uint64 {
	switch unsafe.Sizeof(x) {
	case 1:
		return uint64(*(*uint8)(unsafe.Pointer(&x)))
	case 2:
		return uint64(*(*uint16)(unsafe.Pointer(&x)))
	case 4:
		return uint64(*(*uint32)(unsafe.Pointer(&x)))
	}
	return *(*uint64)(unsafe.Pointer(&x))
}

// FromBits returns the value of type T whose bits are the low bits of b.
func FromBits[T Number](b uint64) T {
	var x T
	switch unsafe.Sizeof(x) {
	case 1:
		*(*uint8)(unsafe.Pointer(&x)) = uint8(b)
	case 2:
		*(*uint16)(unsafe.Pointer(&x)) = uint16(b)
	case 4:
		*(*uint32)(unsafe.Pointer(&x)) = uint32(b)
	default:
		*(*uint64)(unsafe.Pointer(&x)) = b
	}
	return x
}

// Min is numpy.minimum: the smaller of x and y; the canonical NaN if either is a NaN;
// -0 is smaller than +0 (equal operands combine by the OR of their bits, which only
// matters for zeros of opposite signs).
func Min[T Number](x, y T) T {
	if x < y {
		return x
	}
	if y < x {
		return y
	}
	return orEq(x, y)
}

// Max is numpy.maximum: the larger of x and y; the canonical NaN if either is a NaN;
// +0 is larger than -0 (equal operands combine by the AND of their bits).
func Max[T Number](x, y T) T {
	if x > y {
		return x
	}
	if y > x {
		return y
	}
	return andEq(x, y)
}

// orEq is Min of unordered operands (equal, or a NaN among them), out of line so that
// Min inlines.
func orEq[T Number](x, y T) T {
	if x == y {
		return FromBits[T](Bits(x) | Bits(y))
	}
	return NaN[T]()
}

// andEq is Max of unordered operands.
func andEq[T Number](x, y T) T {
	if x == y {
		return FromBits[T](Bits(x) & Bits(y))
	}
	return NaN[T]()
}

// Fmin is C's fmin (numpy.fmin): Min, except that a NaN operand is ignored: the other
// operand when only one is a NaN (its bits unchanged), the canonical NaN when both are.
func Fmin[T Number](x, y T) T {
	switch {
	case x != x:
		return Canon(y)
	case y != y:
		return x
	}
	return Min(x, y)
}

// Fmax is C's fmax (numpy.fmax): Max ignoring a NaN operand, as Fmin.
func Fmax[T Number](x, y T) T {
	switch {
	case x != x:
		return Canon(y)
	case y != y:
		return x
	}
	return Max(x, y)
}
