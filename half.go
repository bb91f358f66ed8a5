package gpu

import (
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/half"
)

// Float16 is an IEEE 754 binary16 element (half.Float16, NumPy's float16): its bits in
// a uint16.
//
// Float16 and BFloat16 (bfloat16) are element types like float32: Array[Float16] and
// Array[BFloat16] work with every operation that takes floats. Their Go types are
// package half's named uint16s (a value is its bits); make values with
// half.NewFloat16(x), half.Float16FromFloat32(x) or from bits with
// half.Float16FromBits(b) (never with a Go conversion of a float, which converts to an
// integer), and arrays of bit patterns with FromBits.
//
// Semantics, as CuPy and PyTorch compute half precision:
//   - Elementwise arithmetic and math functions compute in float32 and round once, to
//     nearest even, when a half-precision value is stored (fused expressions keep their
//     intermediate values in float32; see package expr). Promotion follows NumPy 2 and
//     ml_dtypes: float16 with bfloat16 is float32, a half type with int8 or uint8 stays
//     half, with wider integers it is float32 or float64, with float32 float32.
//   - Conversions (Astype, Eval's result conversion, construction from Go values) round
//     to nearest even, once, and keep NaN, ±Inf and ±0, identically on every backend.
//   - Reductions and scans accumulate in float32 and round the result once to the half
//     type; Sum[float32] (or CumSum[float32], Mean[float32]) of a half array returns the
//     float32 accumulator itself, the accurate way to a wider result.
//   - Random uniform values are below 1 after rounding (never 1.0, unlike PyTorch's CUDA
//     rand for half types before 2.1); normal values are the float32 normals of the same
//     generator state, rounded.
//
// On CUDA, contiguous operands move in 16-byte vector accesses (8 elements each) and
// the conversions are the native cvt.rn.f16.f32 and, from sm_80, cvt.rn.bf16.f32 (an
// integer rounding sequence before sm_80, with the same results).
type Float16 = half.Float16

// BFloat16 is a bfloat16 element (half.BFloat16): its bits in a uint16. It computes as
// Float16 does (see Float16: float32 arithmetic and accumulation, one rounding on store).
type BFloat16 = half.BFloat16

// HalfFloat is the set of half-precision element types.
type HalfFloat interface{ Float16 | BFloat16 }

// FromBits returns a new contiguous array of Float16 or BFloat16 elements with the bit
// patterns bits, as FromSlice (a 1-d array of len(bits) elements if no shape is given).
//
//	x, err := gpu.FromBits[gpu.BFloat16](s, []uint16{0x3f80, 0x4000}) // 1, 2
func FromBits[T HalfFloat](s *Stream, bits []uint16, shape ...int) (*Array[T], error) {
	return FromSlice(s, unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(bits))), len(bits)), shape...)
}

// isHalf reports whether t is a half-precision float type.
func isHalf(t dtype.DType) bool { return t == dtype.Float16 || t == dtype.BFloat16 }

// halfFromFloat returns the bits of f rounded once to the half type t.
func halfFromFloat(t dtype.DType, f float64) uint16 {
	if t == dtype.Float16 {
		return dtype.Float16FromFloat64(f)
	}
	return dtype.BFloat16FromFloat64(f)
}

// halfToFloat returns the value of the half-type t's bits b.
func halfToFloat(t dtype.DType, b uint16) float64 {
	if t == dtype.Float16 {
		return dtype.Float16ToFloat64(b)
	}
	return dtype.BFloat16ToFloat64(b)
}
