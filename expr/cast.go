package expr

import (
	"math"
	"math/bits"
	"reflect"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// castKernel returns the kernel converting elements of type from to type to, with the
// rules in the package documentation.
func castKernel(from, to dtype.DType) kernel {
	if !from.Valid() || !to.Valid() {
		return nil
	}
	switch {
	case from == to:
		return moveKernel(from.Size(), false)
	case to == dtype.Bool:
		return toBool(from)
	case from == dtype.Bool:
		return fromBool(to)
	case isHalf(from):
		return fromHalf(from, to)
	case isHalf(to):
		return toHalf(from, to)
	}
	switch from {
	case dtype.Int8:
		return castFromInt[int8](to)
	case dtype.Int16:
		return castFromInt[int16](to)
	case dtype.Int32:
		return castFromInt[int32](to)
	case dtype.Int64:
		return castFromInt[int64](to)
	case dtype.Uint8:
		return castFromInt[uint8](to)
	case dtype.Uint16:
		return castFromInt[uint16](to)
	case dtype.Uint32:
		return castFromInt[uint32](to)
	case dtype.Uint64:
		return castFromInt[uint64](to)
	case dtype.Float32:
		return castFromFloat[float32](to)
	case dtype.Float64:
		return castFromFloat[float64](to)
	}
	return nil
}

// castFromInt converts integers as Go does: wrapping to narrower integers, rounding to
// nearest even to floats.
func castFromInt[S integer](to dtype.DType) kernel {
	switch to {
	case dtype.Int8:
		return kConv[S, int8]
	case dtype.Int16:
		return kConv[S, int16]
	case dtype.Int32:
		return kConv[S, int32]
	case dtype.Int64:
		return kConv[S, int64]
	case dtype.Uint8:
		return kConv[S, uint8]
	case dtype.Uint16:
		return kConv[S, uint16]
	case dtype.Uint32:
		return kConv[S, uint32]
	case dtype.Uint64:
		return kConv[S, uint64]
	case dtype.Float32:
		return kConv[S, float32]
	case dtype.Float64:
		return kConv[S, float64]
	}
	return nil
}

// castFromFloat converts floats: to floats as Go does (round to nearest even), to
// integers truncating toward zero and saturating, with NaN → 0 (PTX cvt.rzi).
func castFromFloat[S float](to dtype.DType) kernel {
	switch to {
	case dtype.Int8:
		return kSat[S, int8]
	case dtype.Int16:
		return kSat[S, int16]
	case dtype.Int32:
		return kSat[S, int32]
	case dtype.Int64:
		return kSat[S, int64]
	case dtype.Uint8:
		return kSat[S, uint8]
	case dtype.Uint16:
		return kSat[S, uint16]
	case dtype.Uint32:
		return kSat[S, uint32]
	case dtype.Uint64:
		return kSat[S, uint64]
	case dtype.Float32:
		return kConv[S, float32]
	case dtype.Float64:
		return kConv[S, float64]
	}
	return nil
}

func kConv[S, D number](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[D](d, n)
	x := sl[S](a, n)[:len(z)]
	for i := range z {
		z[i] = D(x[i])
	}
}

// intRange returns D's range: the smallest value and the largest, and as float64 the
// smallest value and 2^(bits of magnitude), the first value above the largest.
func intRange[D integer]() (lo, hi D, flo, fhi float64) {
	var z D
	width := int(unsafe.Sizeof(z)) * 8
	// (By kind: a named D may say another DType, as half.Float16 does.)
	flo, fhi = dtype.OfKind(reflect.TypeFor[D]().Kind()).IntRange()
	if ^z < 0 { // signed
		hi = D(uint64(1)<<(width-1) - 1)
		return -hi - 1, hi, flo, fhi
	}
	return 0, ^z, flo, fhi
}

// satInt converts v to D truncating toward zero, saturating at D's range, NaN → 0.
func satInt[D integer](v float64, lo, hi D, flo, fhi float64) D {
	switch {
	case v != v:
		return 0
	case v <= flo:
		return lo
	case v >= fhi:
		return hi
	}
	return D(v)
}

func kSat[S float, D integer](n int, d, a, _, _ unsafe.Pointer) {
	lo, hi, flo, fhi := intRange[D]()
	z := sl[D](d, n)
	x := sl[S](a, n)[:len(z)]
	for i := range z {
		z[i] = satInt(float64(x[i]), lo, hi, flo, fhi)
	}
}

// ---- bool ----

func toBool(from dtype.DType) kernel {
	switch from {
	case dtype.Float16, dtype.BFloat16:
		return kHalfToBool
	case dtype.Int8:
		return kNonzero[int8]
	case dtype.Int16:
		return kNonzero[int16]
	case dtype.Int32:
		return kNonzero[int32]
	case dtype.Int64:
		return kNonzero[int64]
	case dtype.Uint8:
		return kNonzero[uint8]
	case dtype.Uint16:
		return kNonzero[uint16]
	case dtype.Uint32:
		return kNonzero[uint32]
	case dtype.Uint64:
		return kNonzero[uint64]
	case dtype.Float32:
		return kNonzero[float32]
	case dtype.Float64:
		return kNonzero[float64]
	}
	return nil
}

// kNonzero is x != 0: true for NaN, false for ±0.
func kNonzero[S number](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[S](a, n)[:len(z)]
	for i := range z {
		z[i] = x[i] != 0
	}
}

func kHalfToBool(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[uint16](a, n)[:len(z)]
	for i := range z {
		z[i] = x[i]&0x7fff != 0
	}
}

func fromBool(to dtype.DType) kernel {
	switch to {
	case dtype.Float16:
		return kBoolTo[uint16](0x3c00)
	case dtype.BFloat16:
		return kBoolTo[uint16](0x3f80)
	case dtype.Int8:
		return kBoolTo[int8](1)
	case dtype.Int16:
		return kBoolTo[int16](1)
	case dtype.Int32:
		return kBoolTo[int32](1)
	case dtype.Int64:
		return kBoolTo[int64](1)
	case dtype.Uint8:
		return kBoolTo[uint8](1)
	case dtype.Uint16:
		return kBoolTo[uint16](1)
	case dtype.Uint32:
		return kBoolTo[uint32](1)
	case dtype.Uint64:
		return kBoolTo[uint64](1)
	case dtype.Float32:
		return kBoolTo[float32](1)
	case dtype.Float64:
		return kBoolTo[float64](1)
	}
	return nil
}

// kBoolTo writes one for true and zero for false.
func kBoolTo[D number](one D) kernel {
	return func(n int, d, a, _, _ unsafe.Pointer) {
		z := sl[D](d, n)
		x := sl[bool](a, n)[:len(z)]
		for i := range z {
			if x[i] {
				z[i] = one
			} else {
				z[i] = 0
			}
		}
	}
}

// ---- float16 and bfloat16 ----

// fromHalf converts from float16 or bfloat16 through float32, which holds every value.
func fromHalf(from, to dtype.DType) kernel {
	f16 := from == dtype.Float16
	switch to {
	case dtype.Float16:
		return kBF16ToF16
	case dtype.BFloat16:
		return kF16ToBF16
	case dtype.Float32:
		if f16 {
			return kF16ToFloat[float32]
		}
		return kBF16ToFloat[float32]
	case dtype.Float64:
		if f16 {
			return kF16ToFloat[float64]
		}
		return kBF16ToFloat[float64]
	case dtype.Int8:
		return halfToInt[int8](f16)
	case dtype.Int16:
		return halfToInt[int16](f16)
	case dtype.Int32:
		return halfToInt[int32](f16)
	case dtype.Int64:
		return halfToInt[int64](f16)
	case dtype.Uint8:
		return halfToInt[uint8](f16)
	case dtype.Uint16:
		return halfToInt[uint16](f16)
	case dtype.Uint32:
		return halfToInt[uint32](f16)
	case dtype.Uint64:
		return halfToInt[uint64](f16)
	}
	return nil
}

func kF16ToFloat[D float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[D](d, n)
	x := sl[uint16](a, n)[:len(z)]
	for i := range z {
		z[i] = D(dtype.Float16ToFloat32(x[i]))
	}
}

func kBF16ToFloat[D float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[D](d, n)
	x := sl[uint16](a, n)[:len(z)]
	for i := range z {
		z[i] = D(math.Float32frombits(uint32(x[i]) << 16))
	}
}

func halfToInt[D integer](f16 bool) kernel {
	if f16 {
		return kF16ToInt[D]
	}
	return kBF16ToInt[D]
}

func kF16ToInt[D integer](n int, d, a, _, _ unsafe.Pointer) {
	lo, hi, flo, fhi := intRange[D]()
	z := sl[D](d, n)
	x := sl[uint16](a, n)[:len(z)]
	for i := range z {
		z[i] = satInt(float64(dtype.Float16ToFloat32(x[i])), lo, hi, flo, fhi)
	}
}

func kBF16ToInt[D integer](n int, d, a, _, _ unsafe.Pointer) {
	lo, hi, flo, fhi := intRange[D]()
	z := sl[D](d, n)
	x := sl[uint16](a, n)[:len(z)]
	for i := range z {
		z[i] = satInt(float64(math.Float32frombits(uint32(x[i])<<16)), lo, hi, flo, fhi)
	}
}

func kF16ToBF16(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[uint16](a, n)[:len(z)]
	for i := range z {
		z[i] = dtype.BFloat16FromFloat32(dtype.Float16ToFloat32(x[i]))
	}
}

func kBF16ToF16(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[uint16](a, n)[:len(z)]
	for i := range z {
		z[i] = dtype.Float16FromFloat32(math.Float32frombits(uint32(x[i]) << 16))
	}
}

// toHalf converts to float16 or bfloat16, rounding once to nearest even from the exact
// source value.
func toHalf(from, to dtype.DType) kernel {
	f16 := to == dtype.Float16
	switch from {
	case dtype.Float32:
		if f16 {
			return kF32ToF16
		}
		return kF32ToBF16
	case dtype.Float64:
		if f16 {
			return kF64ToF16
		}
		return kF64ToBF16
	case dtype.Int8:
		return intToHalf[int8](f16)
	case dtype.Int16:
		return intToHalf[int16](f16)
	case dtype.Int32:
		return intToHalf[int32](f16)
	case dtype.Int64:
		return intToHalf[int64](f16)
	case dtype.Uint8:
		return intToHalf[uint8](f16)
	case dtype.Uint16:
		return intToHalf[uint16](f16)
	case dtype.Uint32:
		return intToHalf[uint32](f16)
	case dtype.Uint64:
		return intToHalf[uint64](f16)
	}
	return nil
}

func kF32ToF16(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[float32](a, n)[:len(z)]
	for i := range z {
		// dtype.Float16FromFloat32's fast path, inlined (the function is too large for
		// Go's inliner): a result that is a normal float16 is the rebiased, rounded bits.
		b := math.Float32bits(x[i])
		if m := b &^ 0x80000000; m-113<<23 < (143-113)<<23 {
			z[i] = uint16(b>>16)&0x8000 | uint16((m-(127-15)<<23+0xfff+(m>>13)&1)>>13)
		} else {
			z[i] = dtype.Float16FromFloat32(x[i])
		}
	}
}

func kF32ToBF16(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[float32](a, n)[:len(z)]
	for i := range z {
		z[i] = dtype.BFloat16FromFloat32(x[i])
	}
}

func kF64ToF16(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[float64](a, n)[:len(z)]
	for i := range z {
		z[i] = dtype.Float16FromFloat64(x[i])
	}
}

func kF64ToBF16(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[float64](a, n)[:len(z)]
	for i := range z {
		z[i] = dtype.BFloat16FromFloat64(x[i])
	}
}

func intToHalf[S integer](f16 bool) kernel {
	if f16 {
		return kIntToF16[S]
	}
	return kIntToBF16[S]
}

func kIntToF16[S integer](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[S](a, n)[:len(z)]
	for i := range z {
		z[i] = dtype.Float16FromFloat64(intToFloat64Odd(x[i]))
	}
}

func kIntToBF16[S integer](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[uint16](d, n)
	x := sl[S](a, n)[:len(z)]
	for i := range z {
		z[i] = dtype.BFloat16FromFloat64(intToFloat64Odd(x[i]))
	}
}

// intToFloat64Odd converts x to float64 rounding to odd: exact when x fits in 53 bits,
// else truncated with the lowest bit set if any bit was dropped. Rounding that to a
// format of at most 51 bits gives the correctly rounded result of x (round to odd makes
// double rounding innocuous).
func intToFloat64Odd[S integer](x S) float64 {
	if unsafe.Sizeof(x) < 8 {
		return float64(x)
	}
	neg := x < 0
	u := uint64(x)
	if neg {
		u = -u
	}
	var f float64
	if u < 1<<53 {
		f = float64(u)
	} else {
		s := bits.Len64(u) - 53
		m := u >> s
		if u&(1<<s-1) != 0 {
			m |= 1
		}
		f = math.Ldexp(float64(m), s)
	}
	if neg {
		f = -f
	}
	return f
}
