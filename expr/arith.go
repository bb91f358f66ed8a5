package expr

import (
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// The arithmetic kernels +, -, * and float / come in three forms: vector-vector, and
// vector-scalar and scalar-vector for an operand that is the same for every element (a
// parameter or constant), which is read once instead of from a broadcast buffer. The
// loops are unrolled by four: Go does not unroll, and the loop overhead is as large as
// the arithmetic.

func kAdd[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx, yy := z[i:i+4:i+4], x[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = xx[0] + yy[0]
		zz[1] = xx[1] + yy[1]
		zz[2] = xx[2] + yy[2]
		zz[3] = xx[3] + yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = x[i] + y[i]
	}
}

func kAddVS[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	s := *(*T)(b)
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx := z[i:i+4:i+4], x[i:i+4:i+4]
		zz[0] = xx[0] + s
		zz[1] = xx[1] + s
		zz[2] = xx[2] + s
		zz[3] = xx[3] + s
	}
	for ; i < len(z); i++ {
		z[i] = x[i] + s
	}
}

func kAddSV[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	s := *(*T)(a)
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, yy := z[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = s + yy[0]
		zz[1] = s + yy[1]
		zz[2] = s + yy[2]
		zz[3] = s + yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = s + y[i]
	}
}

func kSub[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx, yy := z[i:i+4:i+4], x[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = xx[0] - yy[0]
		zz[1] = xx[1] - yy[1]
		zz[2] = xx[2] - yy[2]
		zz[3] = xx[3] - yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = x[i] - y[i]
	}
}

func kSubVS[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	s := *(*T)(b)
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx := z[i:i+4:i+4], x[i:i+4:i+4]
		zz[0] = xx[0] - s
		zz[1] = xx[1] - s
		zz[2] = xx[2] - s
		zz[3] = xx[3] - s
	}
	for ; i < len(z); i++ {
		z[i] = x[i] - s
	}
}

func kSubSV[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	s := *(*T)(a)
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, yy := z[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = s - yy[0]
		zz[1] = s - yy[1]
		zz[2] = s - yy[2]
		zz[3] = s - yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = s - y[i]
	}
}

func kMul[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx, yy := z[i:i+4:i+4], x[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = xx[0] * yy[0]
		zz[1] = xx[1] * yy[1]
		zz[2] = xx[2] * yy[2]
		zz[3] = xx[3] * yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = x[i] * y[i]
	}
}

func kMulVS[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	s := *(*T)(b)
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx := z[i:i+4:i+4], x[i:i+4:i+4]
		zz[0] = xx[0] * s
		zz[1] = xx[1] * s
		zz[2] = xx[2] * s
		zz[3] = xx[3] * s
	}
	for ; i < len(z); i++ {
		z[i] = x[i] * s
	}
}

func kMulSV[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	s := *(*T)(a)
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, yy := z[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = s * yy[0]
		zz[1] = s * yy[1]
		zz[2] = s * yy[2]
		zz[3] = s * yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = s * y[i]
	}
}

func kDivFloat[T float](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx, yy := z[i:i+4:i+4], x[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = xx[0] / yy[0]
		zz[1] = xx[1] / yy[1]
		zz[2] = xx[2] / yy[2]
		zz[3] = xx[3] / yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = x[i] / y[i]
	}
}

func kDivFloatVS[T float](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	s := *(*T)(b)
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, xx := z[i:i+4:i+4], x[i:i+4:i+4]
		zz[0] = xx[0] / s
		zz[1] = xx[1] / s
		zz[2] = xx[2] / s
		zz[3] = xx[3] / s
	}
	for ; i < len(z); i++ {
		z[i] = x[i] / s
	}
}

func kDivFloatSV[T float](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	s := *(*T)(a)
	y := sl[T](b, n)[:len(z)]
	i := 0
	for ; i+4 <= len(z); i += 4 {
		zz, yy := z[i:i+4:i+4], y[i:i+4:i+4]
		zz[0] = s / yy[0]
		zz[1] = s / yy[1]
		zz[2] = s / yy[2]
		zz[3] = s / yy[3]
	}
	for ; i < len(z); i++ {
		z[i] = s / y[i]
	}
}

// scalarKernel returns the vector-scalar (or, if first, scalar-vector) kernel of op on
// t, or nil if there is none (then the scalar is broadcast into a buffer).
func scalarKernel(op BinaryOp, t dtype.DType, first bool) kernel {
	switch t {
	case dtype.Int8:
		return arithScalar[int8](op, first)
	case dtype.Int16:
		return arithScalar[int16](op, first)
	case dtype.Int32:
		return arithScalar[int32](op, first)
	case dtype.Int64:
		return arithScalar[int64](op, first)
	case dtype.Uint8:
		return arithScalar[uint8](op, first)
	case dtype.Uint16:
		return arithScalar[uint16](op, first)
	case dtype.Uint32:
		return arithScalar[uint32](op, first)
	case dtype.Uint64:
		return arithScalar[uint64](op, first)
	case dtype.Float32:
		return floatScalar[float32](op, first)
	case dtype.Float64:
		return floatScalar[float64](op, first)
	}
	return nil
}

func arithScalar[T number](op BinaryOp, first bool) kernel {
	switch {
	case op == Add && first:
		return kAddSV[T]
	case op == Add:
		return kAddVS[T]
	case op == Sub && first:
		return kSubSV[T]
	case op == Sub:
		return kSubVS[T]
	case op == Mul && first:
		return kMulSV[T]
	case op == Mul:
		return kMulVS[T]
	}
	return nil
}

func floatScalar[T float](op BinaryOp, first bool) kernel {
	switch {
	case op == Div && first:
		return canonical[T](kDivFloatSV[T])
	case op == Div:
		return canonical[T](kDivFloatVS[T])
	}
	if k := arithScalar[T](op, first); k != nil {
		return canonical[T](k)
	}
	return nil
}
