// Package dtype names the element types of arrays and kernels and gives NumPy's rules for
// combining them.
//
// The promotion rules follow NumPy 2 (NEP 50, "Promotion rules for Python scalars"):
// two array types promote to the smallest type that can hold both (Promote), and a
// Go constant in an expression is "weak": it takes the array's type where its kind
// allows (PromoteWeak). bfloat16 follows the ml_dtypes package that NumPy users use for
// it: bfloat16 with float16 promotes to float32.
package dtype

import (
	"fmt"
	"math"
	"reflect"
)

// DType is an element type.
type DType uint8

// The element types. Invalid is the zero value and is never a valid element type.
const (
	Invalid DType = iota
	Bool
	Int8
	Int16
	Int32
	Int64
	Uint8
	Uint16
	Uint32
	Uint64
	Float16
	BFloat16
	Float32
	Float64
	numTypes
)

var names = [numTypes]string{
	Invalid: "invalid", Bool: "bool",
	Int8: "int8", Int16: "int16", Int32: "int32", Int64: "int64",
	Uint8: "uint8", Uint16: "uint16", Uint32: "uint32", Uint64: "uint64",
	Float16: "float16", BFloat16: "bfloat16", Float32: "float32", Float64: "float64",
}

var sizes = [numTypes]int{
	Bool: 1, Int8: 1, Int16: 2, Int32: 4, Int64: 8,
	Uint8: 1, Uint16: 2, Uint32: 4, Uint64: 8,
	Float16: 2, BFloat16: 2, Float32: 4, Float64: 8,
}

// All lists every valid element type, in declaration order.
var All = []DType{Bool, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64, Float16, BFloat16, Float32, Float64}

// String returns NumPy's name for t ("float32", "int64", "bool").
func (t DType) String() string {
	if t < numTypes {
		return names[t]
	}
	return fmt.Sprintf("dtype(%d)", uint8(t))
}

// Parse returns the type with NumPy's name s.
func Parse(s string) (DType, error) {
	for i, n := range names {
		if n == s && DType(i) != Invalid {
			return DType(i), nil
		}
	}
	return Invalid, fmt.Errorf("dtype: unknown element type %q", s)
}

// Valid reports whether t is a valid element type.
func (t DType) Valid() bool { return t > Invalid && t < numTypes }

// Size returns the size of one element in bytes (0 for Invalid).
func (t DType) Size() int {
	if t < numTypes {
		return sizes[t]
	}
	return 0
}

// Bits returns the size of one element in bits.
func (t DType) Bits() int { return 8 * t.Size() }

// IsBool reports whether t is Bool.
func (t DType) IsBool() bool { return t == Bool }

// IsSigned reports whether t is a signed integer type.
func (t DType) IsSigned() bool { return t >= Int8 && t <= Int64 }

// IsUnsigned reports whether t is an unsigned integer type.
func (t DType) IsUnsigned() bool { return t >= Uint8 && t <= Uint64 }

// IsInteger reports whether t is a signed or unsigned integer type (not Bool).
func (t DType) IsInteger() bool { return t.IsSigned() || t.IsUnsigned() }

// IntRange returns an integer type's range as a half-open interval of float64s,
// [lo, hi): lo is the smallest value and hi the first integer above the largest
// (-2^(b-1) and 2^(b-1) for b bits signed, 0 and 2^b unsigned), both exact, so that
// an integral float64 f is one of the type's values if and only if lo <= f < hi (a
// NaN is not; a fraction truncates into the type for lo-1 < f < hi). For any other
// type it returns NaN, NaN.
func (t DType) IntRange() (lo, hi float64) {
	switch {
	case t.IsSigned():
		return -math.Ldexp(1, t.Bits()-1), math.Ldexp(1, t.Bits()-1)
	case t.IsUnsigned():
		return 0, math.Ldexp(1, t.Bits())
	}
	return math.NaN(), math.NaN()
}

// IsFloat reports whether t is a floating-point type.
func (t DType) IsFloat() bool { return t >= Float16 && t <= Float64 }

// Kind is the category NumPy's rules reason with.
type Kind uint8

// The kinds, in the order NumPy ranks them for promotion with weak scalars.
const (
	KindBool Kind = iota
	KindUnsigned
	KindSigned
	KindFloat
)

// Kind returns t's category.
func (t DType) Kind() Kind {
	switch {
	case t.IsFloat():
		return KindFloat
	case t.IsSigned():
		return KindSigned
	case t.IsUnsigned():
		return KindUnsigned
	}
	return KindBool
}

func signedOfBits(bits int) DType {
	switch {
	case bits <= 8:
		return Int8
	case bits <= 16:
		return Int16
	case bits <= 32:
		return Int32
	case bits <= 64:
		return Int64
	}
	return Float64
}

// floatFor returns the smallest float type that holds every integer of the given type,
// as NumPy promotes (int8/uint8 -> float16, 16-bit -> float32, wider -> float64).
func floatFor(t DType) DType {
	switch t.Bits() {
	case 8:
		return Float16
	case 16:
		return Float32
	}
	return Float64
}

func floatRank(t DType) int {
	switch t {
	case Float16, BFloat16:
		return 1
	case Float32:
		return 2
	}
	return 3
}

func maxFloat(a, b DType) DType {
	if a == b {
		return a
	}
	if (a == Float16 && b == BFloat16) || (a == BFloat16 && b == Float16) {
		return Float32
	}
	if floatRank(a) >= floatRank(b) {
		return a
	}
	return b
}

// floatWithInt promotes float type f with integer type i. An 8-bit integer fits in either
// 16-bit float, so bfloat16 stays bfloat16 (ml_dtypes' table).
func floatWithInt(f, i DType) DType {
	g := floatFor(i)
	if f == BFloat16 && g == Float16 {
		return BFloat16
	}
	return maxFloat(f, g)
}

// Promote returns the type two array operands promote to (numpy.promote_types).
// It returns Invalid if either argument is invalid.
func Promote(a, b DType) DType {
	if !a.Valid() || !b.Valid() {
		return Invalid
	}
	if a == b {
		return a
	}
	if a == Bool {
		return b
	}
	if b == Bool {
		return a
	}
	switch {
	case a.IsFloat() && b.IsFloat():
		return maxFloat(a, b)
	case a.IsFloat():
		return floatWithInt(a, b)
	case b.IsFloat():
		return floatWithInt(b, a)
	case a.IsSigned() == b.IsSigned():
		if a.Size() >= b.Size() {
			return a
		}
		return b
	}
	s, u := a, b
	if a.IsUnsigned() {
		s, u = b, a
	}
	if s.Size() > u.Size() {
		return s
	}
	return signedOfBits(2 * u.Bits())
}

// PromoteWeak returns the type of an operation between an array of type t and a Go
// (Python-like) constant of kind k, by NEP 50: the constant takes t's type unless its
// kind is higher (a float constant with an integer array gives Float64; an integer
// constant with a bool array gives Int64).
func PromoteWeak(t DType, k Kind) DType {
	if !t.Valid() {
		return Invalid
	}
	if k <= t.Kind() || (k == KindSigned && t.Kind() == KindUnsigned) {
		return t
	}
	switch k {
	case KindFloat:
		return Float64
	case KindSigned, KindUnsigned:
		return Int64
	}
	return t
}

// Number is the set of Go types that have an element type. The Go types of Float16 and
// BFloat16 are half.Float16 and half.BFloat16 (gpu.Float16 and gpu.BFloat16), named
// uint16s holding the bits, which Of tells from uint16 by their DType method.
type Number interface {
	~bool | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64 | ~int | ~uint
}

// Typed is implemented by the Go types of half-precision elements (half.Float16,
// half.BFloat16): named uint16s whose DType method names their element type.
type Typed interface {
	DType() DType
}

// Of returns the element type of the Go type T: Float16 or BFloat16 for a 16-bit type
// whose DType method says so (half.Float16, half.BFloat16), else the type of T's kind
// (a named type such as type Celsius float32 is Float32; int and uint map to Int64 and
// Uint64 on 64-bit platforms).
func Of[T Number]() DType {
	var z T
	return OfValue(z)
}

// OfValue returns the element type of a Go value: that of its type, as Of, or Invalid
// for a value of no element type (nil, a string ...).
func OfValue(v any) DType {
	if t, ok := v.(Typed); ok {
		if d := t.DType(); (d == Float16 || d == BFloat16) && reflect.TypeOf(v).Kind() == reflect.Uint16 {
			return d
		}
	}
	if v == nil {
		return Invalid
	}
	return OfKind(reflect.TypeOf(v).Kind())
}

// OfKind returns the element type of a Go value of kind k, or Invalid.
func OfKind(k reflect.Kind) DType {
	switch k {
	case reflect.Bool:
		return Bool
	case reflect.Int8:
		return Int8
	case reflect.Int16:
		return Int16
	case reflect.Int32:
		return Int32
	case reflect.Int64:
		return Int64
	case reflect.Int:
		return signedOfBits(8 * int(reflect.TypeFor[int]().Size()))
	case reflect.Uint8:
		return Uint8
	case reflect.Uint16:
		return Uint16
	case reflect.Uint32:
		return Uint32
	case reflect.Uint64:
		return Uint64
	case reflect.Uint:
		if reflect.TypeFor[uint]().Size() == 4 {
			return Uint32
		}
		return Uint64
	case reflect.Float32:
		return Float32
	case reflect.Float64:
		return Float64
	}
	return Invalid
}
