package expr

import (
	"fmt"
	"math"
	"strconv"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// Scalar is one typed value: an element of a DType. The zero Scalar is invalid.
//
// A Scalar holds the element's bit pattern zero-extended to 64 bits: 0 or 1 for Bool, the
// two's-complement bits for integers (int8(-1) is 0xff), the IEEE 754 bits for float32
// and float64, and the 16 bits for Float16 and BFloat16.
type Scalar struct {
	t    dtype.DType
	bits uint64
}

// ScalarOf returns v as a Scalar of v's element type (int is Int64 and uint is Uint64 on
// 64-bit platforms).
func ScalarOf[T dtype.Number](v T) Scalar {
	switch x := any(v).(type) {
	case bool:
		if x {
			return Scalar{dtype.Bool, 1}
		}
		return Scalar{dtype.Bool, 0}
	case int8:
		return Scalar{dtype.Int8, uint64(uint8(x))}
	case int16:
		return Scalar{dtype.Int16, uint64(uint16(x))}
	case int32:
		return Scalar{dtype.Int32, uint64(uint32(x))}
	case int64:
		return Scalar{dtype.Int64, uint64(x)}
	case int:
		return ScalarFromBits(dtype.Of[int](), uint64(x))
	case uint8:
		return Scalar{dtype.Uint8, uint64(x)}
	case uint16:
		return Scalar{dtype.Uint16, uint64(x)}
	case uint32:
		return Scalar{dtype.Uint32, uint64(x)}
	case uint64:
		return Scalar{dtype.Uint64, x}
	case uint:
		return ScalarFromBits(dtype.Of[uint](), uint64(x))
	case float32:
		return Scalar{dtype.Float32, uint64(math.Float32bits(x))}
	case float64:
		return Scalar{dtype.Float64, math.Float64bits(x)}
	}
	// A named type (~float32 and so on): go through its kind.
	return scalarFromValue(v)
}

func scalarFromValue[T dtype.Number](v T) Scalar {
	t := dtype.Of[T]()
	var bits uint64
	switch t.Size() {
	case 1:
		bits = uint64(*(*uint8)(unsafe.Pointer(&v)))
	case 2:
		bits = uint64(*(*uint16)(unsafe.Pointer(&v)))
	case 4:
		bits = uint64(*(*uint32)(unsafe.Pointer(&v)))
	case 8:
		bits = *(*uint64)(unsafe.Pointer(&v))
	}
	return ScalarFromBits(t, bits)
}

// ScalarFromBits returns the Scalar of type t with the given bit pattern; bits above t's
// size are dropped, and any nonzero Bool is true. It is how Float16 and BFloat16 values
// are made: ScalarFromBits(dtype.Float16, uint64(dtype.Float16FromFloat32(1.5))).
func ScalarFromBits(t dtype.DType, bits uint64) Scalar {
	if !t.Valid() {
		return Scalar{}
	}
	if t == dtype.Bool {
		if bits != 0 {
			bits = 1
		}
		return Scalar{t, bits}
	}
	if s := t.Bits(); s < 64 {
		bits &= 1<<s - 1
	}
	return Scalar{t, bits}
}

// DType returns the element type (Invalid for the zero Scalar).
func (s Scalar) DType() dtype.DType { return s.t }

// Bits returns the element's bit pattern, zero-extended (see Scalar).
func (s Scalar) Bits() uint64 { return s.bits }

// Float64 returns the value as a float64: exact for floats and for integers up to 2^53,
// rounded to nearest for larger integers, 0 or 1 for Bool.
func (s Scalar) Float64() float64 {
	switch {
	case s.t == dtype.Bool:
		return float64(s.bits)
	case s.t.IsSigned():
		return float64(s.Int64())
	case s.t.IsUnsigned():
		return float64(s.bits)
	}
	switch s.t {
	case dtype.Float16:
		return dtype.Float16ToFloat64(uint16(s.bits))
	case dtype.BFloat16:
		return dtype.BFloat16ToFloat64(uint16(s.bits))
	case dtype.Float32:
		return float64(math.Float32frombits(uint32(s.bits)))
	case dtype.Float64:
		return math.Float64frombits(s.bits)
	}
	return 0
}

// Int64 returns an integer or Bool value sign-extended to int64 (unsigned values above
// MaxInt64 wrap). For floats it returns the value converted as the float→int64 Cast does.
func (s Scalar) Int64() int64 {
	switch {
	case s.t.IsSigned():
		sh := 64 - s.t.Bits()
		return int64(s.bits<<sh) >> sh
	case s.t.IsFloat():
		return s.Convert(dtype.Int64).Int64()
	}
	return int64(s.bits)
}

// Uint64 returns an integer or Bool value converted to uint64 as Go converts (negative
// values wrap). For floats it returns the value converted as the float→uint64 Cast does.
func (s Scalar) Uint64() uint64 {
	switch {
	case s.t.IsSigned():
		return uint64(s.Int64())
	case s.t.IsFloat():
		return s.Convert(dtype.Uint64).bits
	}
	return s.bits
}

// Bool reports whether the value is nonzero (NaN is nonzero), as the Cast to Bool does.
func (s Scalar) Bool() bool { return s.Convert(dtype.Bool).bits != 0 }

// Convert returns s converted to type t with the semantics of a Cast node (see the
// package documentation: Go's conversions, float→int truncating and saturating, NaN→0).
func (s Scalar) Convert(t dtype.DType) Scalar {
	if !s.t.Valid() || !t.Valid() {
		return Scalar{}
	}
	if s.t == t {
		return s
	}
	var src, dst uint64
	storeBits(unsafe.Pointer(&src), s.t.Size(), s.bits)
	castKernel(s.t, t)(1, unsafe.Pointer(&dst), unsafe.Pointer(&src), nil, nil)
	return ScalarFromBits(t, loadBits(unsafe.Pointer(&dst), t.Size()))
}

// String returns the value in the expression language's source form, which parses back
// to the same Scalar (for a NaN: to the canonical NaN of that sign, see Canonical):
// "true", "int32(-5)", "float32(0.1)", "-float64(0)", "float16(inf)", "float32(nan)".
func (s Scalar) String() string {
	t := s.t
	switch {
	case !t.Valid():
		return "invalid"
	case t == dtype.Bool:
		if s.bits != 0 {
			return "true"
		}
		return "false"
	case t.IsSigned():
		return t.String() + "(" + strconv.FormatInt(s.Int64(), 10) + ")"
	case t.IsUnsigned():
		return t.String() + "(" + strconv.FormatUint(s.bits, 10) + ")"
	}
	f := s.Float64()
	switch {
	case math.IsNaN(f) && math.Signbit(f):
		return t.String() + "(-nan)"
	case math.IsNaN(f):
		return t.String() + "(nan)"
	case math.IsInf(f, 1):
		return t.String() + "(inf)"
	case math.IsInf(f, -1):
		return t.String() + "(-inf)"
	case f == 0 && math.Signbit(f):
		return "-" + t.String() + "(0)"
	}
	bits := 32
	if t == dtype.Float64 {
		bits = 64
	}
	return t.String() + "(" + strconv.FormatFloat(f, 'g', -1, bits) + ")"
}

// Canonical returns s with a NaN replaced by the canonical quiet NaN of the same sign
// (no payload); other values are returned unchanged. Parse keeps every constant of the
// IR canonical, so that NaN payloads, which differ between CPUs and GPUs, never reach a
// Key.
func (s Scalar) Canonical() Scalar {
	var q uint64
	switch s.t {
	case dtype.Float16:
		q = 0x7e00
	case dtype.BFloat16:
		q = 0x7fc0
	case dtype.Float32:
		q = 0x7fc00000
	case dtype.Float64:
		q = 0x7ff8000000000000
	default:
		return s
	}
	if !math.IsNaN(s.Float64()) {
		return s
	}
	sign := s.bits &^ (1<<(s.t.Bits()-1) - 1) // the sign bit alone
	return Scalar{s.t, sign | q}
}

// GoString returns a Go-syntax representation, for %#v.
func (s Scalar) GoString() string {
	return fmt.Sprintf("expr.ScalarFromBits(dtype.%s, %#x)", goTypeName(s.t), s.bits)
}

func goTypeName(t dtype.DType) string {
	switch t {
	case dtype.BFloat16:
		return "BFloat16"
	case dtype.Invalid:
		return "Invalid"
	}
	n := t.String()
	if n == "" {
		return "Invalid"
	}
	b := []byte(n)
	b[0] -= 'a' - 'A'
	return string(b)
}

// storeBits writes the low size bytes of bits to p as one element of that size.
func storeBits(p unsafe.Pointer, size int, bits uint64) {
	switch size {
	case 1:
		*(*uint8)(p) = uint8(bits)
	case 2:
		*(*uint16)(p) = uint16(bits)
	case 4:
		*(*uint32)(p) = uint32(bits)
	case 8:
		*(*uint64)(p) = bits
	}
}

// loadBits reads one element of the given size at p, zero-extended.
func loadBits(p unsafe.Pointer, size int) uint64 {
	switch size {
	case 1:
		return uint64(*(*uint8)(p))
	case 2:
		return uint64(*(*uint16)(p))
	case 4:
		return uint64(*(*uint32)(p))
	case 8:
		return *(*uint64)(p)
	}
	return 0
}
