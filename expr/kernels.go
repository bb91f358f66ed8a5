package expr

import (
	"math"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/ptx/gomath"
)

// A kernel computes one IR node over n elements: d[i] = f(a[i], b[i], c[i]) for i < n.
// The pointers point to arrays of the node's operand and result types; unused operand
// pointers are nil. Each kernel is one typed loop with no per-element dispatch.
type kernel func(n int, d, a, b, c unsafe.Pointer)

type signed interface {
	~int8 | ~int16 | ~int32 | ~int64
}

type unsigned interface {
	~uint8 | ~uint16 | ~uint32 | ~uint64
}

type integer interface{ signed | unsigned }

type float interface{ ~float32 | ~float64 }

type number interface{ integer | float }

// sl views n elements of type T at p.
func sl[T any](p unsafe.Pointer, n int) []T { return unsafe.Slice((*T)(p), n) }

// kernelFor returns the kernel of an operation node, or nil if the node is a leaf or
// breaks the IR's invariants.
func kernelFor(n Node) kernel {
	switch n := n.(type) {
	case *Unary:
		return unaryKernel(n.Op, n.Type)
	case *Binary:
		return binaryKernel(n.Op, n.X.DType())
	case *Call:
		if len(n.Args) == 0 {
			return nil
		}
		if n.Func == FloorDivide || n.Func == Remainder {
			return definedKernel(n.Func, n.Args[0].DType())
		}
		return callKernel(n.Func, n.Args[0].DType())
	case *Cast:
		return castKernel(n.X.DType(), n.Type)
	case *Select:
		return moveKernel(n.Type.Size(), true)
	}
	return nil
}

// ---- unary ----

func unaryKernel(op UnaryOp, t dtype.DType) kernel {
	switch op {
	case Not:
		if t == dtype.Bool {
			return kNot
		}
	case Neg:
		return forNumber(t, negOf)
	case BitNot:
		return forInteger(t, bitNotOf)
	}
	return nil
}

// numberFns holds one kernel per numeric element type.
type numberFns struct {
	i8, i16, i32, i64, u8, u16, u32, u64, f32, f64 kernel
}

func forNumber(t dtype.DType, f func(dtype.DType) kernel) kernel {
	if t.IsInteger() || t == dtype.Float32 || t == dtype.Float64 {
		return f(t)
	}
	return nil
}

func forInteger(t dtype.DType, f func(dtype.DType) kernel) kernel {
	if t.IsInteger() {
		return f(t)
	}
	return nil
}

func negOf(t dtype.DType) kernel {
	return pick(t, numberFns{
		kNeg[int8], kNeg[int16], kNeg[int32], kNeg[int64],
		kNeg[uint8], kNeg[uint16], kNeg[uint32], kNeg[uint64],
		kNeg[float32], kNeg[float64],
	})
}

func bitNotOf(t dtype.DType) kernel {
	return pick(t, numberFns{
		kBitNot[int8], kBitNot[int16], kBitNot[int32], kBitNot[int64],
		kBitNot[uint8], kBitNot[uint16], kBitNot[uint32], kBitNot[uint64], nil, nil,
	})
}

// pick selects t's kernel from fs.
func pick(t dtype.DType, fs numberFns) kernel {
	switch t {
	case dtype.Int8:
		return fs.i8
	case dtype.Int16:
		return fs.i16
	case dtype.Int32:
		return fs.i32
	case dtype.Int64:
		return fs.i64
	case dtype.Uint8:
		return fs.u8
	case dtype.Uint16:
		return fs.u16
	case dtype.Uint32:
		return fs.u32
	case dtype.Uint64:
		return fs.u64
	case dtype.Float32:
		return fs.f32
	case dtype.Float64:
		return fs.f64
	}
	return nil
}

func kNot(n int, d, a, _, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[bool](a, n)[:len(z)]
	for i := range z {
		z[i] = !x[i]
	}
}

func kNeg[T number](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = -x[i]
	}
}

func kBitNot[T integer](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = ^x[i]
	}
}

// ---- binary ----

func binaryKernel(op BinaryOp, t dtype.DType) kernel {
	switch t {
	case dtype.Bool:
		return boolBinary(op)
	case dtype.Int8:
		return intBinary[int8](op)
	case dtype.Int16:
		return intBinary[int16](op)
	case dtype.Int32:
		return intBinary[int32](op)
	case dtype.Int64:
		return intBinary[int64](op)
	case dtype.Uint8:
		return intBinary[uint8](op)
	case dtype.Uint16:
		return intBinary[uint16](op)
	case dtype.Uint32:
		return intBinary[uint32](op)
	case dtype.Uint64:
		return intBinary[uint64](op)
	case dtype.Float32:
		return floatBinary[float32](op)
	case dtype.Float64:
		return floatBinary[float64](op)
	}
	return nil
}

func boolBinary(op BinaryOp) kernel {
	switch op {
	case And:
		return kBoolAnd
	case Or:
		return kBoolOr
	case Xor, Ne:
		return kNe[bool]
	case Eq:
		return kEq[bool]
	case Lt:
		return kBoolLt
	case Le:
		return kBoolLe
	case Gt:
		return kBoolGt
	case Ge:
		return kBoolGe
	}
	return nil
}

func intBinary[T integer](op BinaryOp) kernel {
	switch op {
	case Add:
		return kAdd[T]
	case Sub:
		return kSub[T]
	case Mul:
		return kMul[T]
	case Div:
		return kDivInt[T]
	case Rem:
		return kRemInt[T]
	case And:
		return kAnd[T]
	case Or:
		return kOr[T]
	case Xor:
		return kXor[T]
	case Shl:
		return kShl[T]
	case Shr:
		return kShr[T]
	}
	return compareKernel[T](op)
}

func floatBinary[T float](op BinaryOp) kernel {
	switch op {
	case Add:
		return canonical[T](kAdd[T])
	case Sub:
		return canonical[T](kSub[T])
	case Mul:
		return canonical[T](kMul[T])
	case Div:
		return canonical[T](kDivFloat[T])
	case Rem:
		return canonical[T](kFmod[T])
	}
	return compareKernel[T](op)
}

// canonical returns float kernel k followed by a pass that replaces the NaNs it wrote
// with the canonical NaN, as the GPU's arithmetic gives (the NaN policy: see package
// internal/fp). The pass runs over a chunk k has just written, so from the cache.
func canonical[T float](k kernel) kernel {
	return func(n int, d, a, b, c unsafe.Pointer) {
		k(n, d, a, b, c)
		z := sl[T](d, n)
		for i, v := range z {
			if v != v {
				z[i] = fp.NaN[T]()
			}
		}
	}
}

func compareKernel[T number](op BinaryOp) kernel {
	switch op {
	case Eq:
		return kEq[T]
	case Ne:
		return kNe[T]
	case Lt:
		return kLt[T]
	case Le:
		return kLe[T]
	case Gt:
		return kGt[T]
	case Ge:
		return kGe[T]
	}
	return nil
}

// kDivInt divides with Go's truncation; x/0 is 0 and MinInt/-1 wraps to MinInt.
func kDivInt[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		if y[i] == 0 {
			z[i] = 0
		} else {
			z[i] = x[i] / y[i]
		}
	}
}

func kRemInt[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		if y[i] == 0 {
			z[i] = 0
		} else {
			z[i] = x[i] % y[i]
		}
	}
}

// kFmod is C's fmod, computed in float64 (exact, so float32 results are exact too).
func kFmod[T float](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = T(math.Mod(float64(x[i]), float64(y[i])))
	}
}

func kAnd[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] & y[i]
	}
}

func kOr[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] | y[i]
	}
}

func kXor[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] ^ y[i]
	}
}

// kShl shifts by the count's bits read as unsigned: Go gives 0 for counts >= the width.
func kShl[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] << toUnsigned(y[i])
	}
}

func kShr[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] >> toUnsigned(y[i])
	}
}

// toUnsigned returns the bits of x as an unsigned count: for a negative signed x it is
// at least 2^(width-1), a count that shifts everything out.
func toUnsigned[T integer](x T) uint64 {
	switch unsafe.Sizeof(x) {
	case 1:
		return uint64(uint8(x))
	case 2:
		return uint64(uint16(x))
	case 4:
		return uint64(uint32(x))
	}
	return uint64(x)
}

func kBoolAnd(n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[bool](a, n)[:len(z)]
	y := sl[bool](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] && y[i]
	}
}

func kBoolOr(n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[bool](a, n)[:len(z)]
	y := sl[bool](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] || y[i]
	}
}

func kBoolLt(n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[bool](a, n)[:len(z)]
	y := sl[bool](b, n)[:len(z)]
	for i := range z {
		z[i] = !x[i] && y[i]
	}
}

func kBoolLe(n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[bool](a, n)[:len(z)]
	y := sl[bool](b, n)[:len(z)]
	for i := range z {
		z[i] = !x[i] || y[i]
	}
}

func kBoolGt(n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[bool](a, n)[:len(z)]
	y := sl[bool](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] && !y[i]
	}
}

func kBoolGe(n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[bool](a, n)[:len(z)]
	y := sl[bool](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] || !y[i]
	}
}

func kEq[T comparable](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] == y[i]
	}
}

func kNe[T comparable](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] != y[i]
	}
}

func kLt[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] < y[i]
	}
}

func kLe[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] <= y[i]
	}
}

func kGt[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] > y[i]
	}
}

func kGe[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = x[i] >= y[i]
	}
}

// ---- select, copy, fill ----

// moveKernel returns, for elements of the given size, a Select kernel (sel) or a copy
// kernel (d[i] = a[i]).
func moveKernel(size int, sel bool) kernel {
	switch size {
	case 1:
		if sel {
			return kSelect[uint8]
		}
		return kCopy[uint8]
	case 2:
		if sel {
			return kSelect[uint16]
		}
		return kCopy[uint16]
	case 4:
		if sel {
			return kSelect[uint32]
		}
		return kCopy[uint32]
	case 8:
		if sel {
			return kSelect[uint64]
		}
		return kCopy[uint64]
	}
	return nil
}

func kSelect[T any](n int, d, a, b, c unsafe.Pointer) {
	z := sl[T](d, n)
	cond := sl[bool](a, n)[:len(z)]
	x := sl[T](b, n)[:len(z)]
	y := sl[T](c, n)[:len(z)]
	for i := range z {
		if cond[i] {
			z[i] = x[i]
		} else {
			z[i] = y[i]
		}
	}
}

func kCopy[T any](n int, d, a, _, _ unsafe.Pointer) {
	copy(sl[T](d, n), sl[T](a, n))
}

// fillKernel returns a kernel that sets d[i] = a[0] for elements of the given size.
func fillKernel(size int) kernel {
	switch size {
	case 1:
		return kFill[uint8]
	case 2:
		return kFill[uint16]
	case 4:
		return kFill[uint32]
	case 8:
		return kFill[uint64]
	}
	return nil
}

func kFill[T any](n int, d, a, _, _ unsafe.Pointer) {
	v := *(*T)(a)
	z := sl[T](d, n)
	for i := range z {
		z[i] = v
	}
}

// ---- calls ----

func callKernel(f Func, t dtype.DType) kernel {
	switch t {
	case dtype.Float32:
		return floatCall[float32](f)
	case dtype.Float64:
		return floatCall[float64](f)
	}
	if !f.AcceptsInt() {
		return nil
	}
	switch t {
	case dtype.Int8:
		return signedCall[int8](f)
	case dtype.Int16:
		return signedCall[int16](f)
	case dtype.Int32:
		return signedCall[int32](f)
	case dtype.Int64:
		return signedCall[int64](f)
	case dtype.Uint8:
		return unsignedCall[uint8](f)
	case dtype.Uint16:
		return unsignedCall[uint16](f)
	case dtype.Uint32:
		return unsignedCall[uint32](f)
	case dtype.Uint64:
		return unsignedCall[uint64](f)
	}
	return nil
}

func signedCall[T signed](f Func) kernel {
	switch f {
	case Abs:
		return kAbsInt[T]
	case Sign:
		return kSignInt[T]
	}
	return intCall[T](f)
}

func unsignedCall[T unsigned](f Func) kernel {
	switch f {
	case Abs:
		return kCopy[T]
	case Sign:
		return kSignUint[T]
	}
	return intCall[T](f)
}

func intCall[T integer](f Func) kernel {
	switch f {
	case Pow:
		return kPowInt[T]
	case Minimum:
		return kMin[T]
	case Maximum:
		return kMax[T]
	case Square:
		return kSquare[T]
	case Reciprocal:
		return kRecipInt[T]
	}
	return nil
}

func floatCall[T float](f Func) kernel {
	switch f {
	case Abs:
		return kAbsFloat[T]
	case Sqrt:
		return canonical[T](kSqrt[T])
	case Floor:
		return canonical[T](kMath1[T](math.Floor))
	case Ceil:
		return canonical[T](kMath1[T](math.Ceil))
	case Trunc:
		return canonical[T](kMath1[T](math.Trunc))
	case Rint:
		return canonical[T](kMath1[T](math.RoundToEven))
	case Cbrt:
		return kMirror1[T](gomath.CbrtF32, gomath.CbrtF64)
	case Exp:
		return kMirror1[T](gomath.ExpF32, gomath.ExpF64)
	case Exp2:
		return kMirror1[T](gomath.Exp2F32, gomath.Exp2F64)
	case Expm1:
		return kMirror1[T](gomath.Expm1F32, gomath.Expm1F64)
	case Log:
		return kMirror1[T](gomath.LogF32, gomath.LogF64)
	case Log2:
		return kMirror1[T](gomath.Log2F32, gomath.Log2F64)
	case Log10:
		return kMirror1[T](gomath.Log10F32, gomath.Log10F64)
	case Log1p:
		return kMirror1[T](gomath.Log1pF32, gomath.Log1pF64)
	case Sin:
		return kMirror1[T](gomath.SinF32, gomath.SinF64)
	case Cos:
		return kMirror1[T](gomath.CosF32, gomath.CosF64)
	case Tan:
		return kMirror1[T](gomath.TanF32, gomath.TanF64)
	case Asin:
		return kMirror1[T](gomath.AsinF32, gomath.AsinF64)
	case Acos:
		return kMirror1[T](gomath.AcosF32, gomath.AcosF64)
	case Atan:
		return kMirror1[T](gomath.AtanF32, gomath.AtanF64)
	case Sinh:
		return kMirror1[T](gomath.SinhF32, gomath.SinhF64)
	case Cosh:
		return kMirror1[T](gomath.CoshF32, gomath.CoshF64)
	case Tanh:
		return kMirror1[T](gomath.TanhF32, gomath.TanhF64)
	case Asinh:
		return kMirror1[T](gomath.AsinhF32, gomath.AsinhF64)
	case Acosh:
		return kMirror1[T](gomath.AcoshF32, gomath.AcoshF64)
	case Atanh:
		return kMirror1[T](gomath.AtanhF32, gomath.AtanhF64)
	case Erf:
		return kMirror1[T](gomath.ErfF32, gomath.ErfF64)
	case Atan2:
		return kMirror2[T](gomath.Atan2F32, gomath.Atan2F64)
	case Hypot:
		return kMirror2[T](gomath.HypotF32, gomath.HypotF64)
	case Pow:
		return kMirror2[T](gomath.PowF32, gomath.PowF64)
	case Copysign:
		return kMath2[T](math.Copysign)
	case Minimum:
		return kMin[T]
	case Maximum:
		return kMax[T]
	case Fmin:
		return kFmin[T]
	case Fmax:
		return kFmax[T]
	case Sign:
		return kSignFloat[T]
	case Square:
		return canonical[T](kSquare[T])
	case Reciprocal:
		return canonical[T](kRecipFloat[T])
	case IsNaN:
		return kIsNaN[T]
	case IsInf:
		return kIsInf[T]
	case IsFinite:
		return kIsFinite[T]
	case Signbit:
		return kSignbit[T]
	}
	return nil
}

// kMath1 applies a float64 function; for float32 the result is rounded once to float32.
// kMirror1 applies the device math library's Go mirror (package ptx/gomath) of a
// function, so that the CPU gives the GPU's results bit for bit (and avoids the Go math
// package's large errors on some inputs, such as sin of huge arguments).
func kMirror1[T float](f32 func(float32) float32, f64 func(float64) float64) kernel {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return func(n int, d, a, _, _ unsafe.Pointer) {
			z := sl[float32](d, n)
			x := sl[float32](a, n)[:len(z)]
			for i := range z {
				z[i] = f32(x[i])
			}
		}
	}
	return func(n int, d, a, _, _ unsafe.Pointer) {
		z := sl[float64](d, n)
		x := sl[float64](a, n)[:len(z)]
		for i := range z {
			z[i] = f64(x[i])
		}
	}
}

// kMirror2 is kMirror1 for functions of two arguments.
func kMirror2[T float](f32 func(float32, float32) float32, f64 func(float64, float64) float64) kernel {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return func(n int, d, a, b, _ unsafe.Pointer) {
			z := sl[float32](d, n)
			x := sl[float32](a, n)[:len(z)]
			y := sl[float32](b, n)[:len(z)]
			for i := range z {
				z[i] = f32(x[i], y[i])
			}
		}
	}
	return func(n int, d, a, b, _ unsafe.Pointer) {
		z := sl[float64](d, n)
		x := sl[float64](a, n)[:len(z)]
		y := sl[float64](b, n)[:len(z)]
		for i := range z {
			z[i] = f64(x[i], y[i])
		}
	}
}

func kMath1[T float](f func(float64) float64) kernel {
	return func(n int, d, a, _, _ unsafe.Pointer) {
		z := sl[T](d, n)
		x := sl[T](a, n)[:len(z)]
		for i := range z {
			z[i] = T(f(float64(x[i])))
		}
	}
}

func kMath2[T float](f func(float64, float64) float64) kernel {
	return func(n int, d, a, b, _ unsafe.Pointer) {
		z := sl[T](d, n)
		x := sl[T](a, n)[:len(z)]
		y := sl[T](b, n)[:len(z)]
		for i := range z {
			z[i] = T(f(float64(x[i]), float64(y[i])))
		}
	}
}

func kSqrt[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = T(math.Sqrt(float64(x[i]))) // correctly rounded for float32 too
	}
}

func kAbsFloat[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = T(math.Abs(float64(x[i])))
	}
}

func kAbsInt[T signed](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		v := x[i]
		if v < 0 {
			v = -v
		}
		z[i] = v
	}
}

func kSignInt[T signed](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		v := x[i]
		switch {
		case v > 0:
			z[i] = 1
		case v < 0:
			z[i] = -1
		default:
			z[i] = 0
		}
	}
}

func kSignUint[T unsigned](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		if x[i] != 0 {
			z[i] = 1
		} else {
			z[i] = 0
		}
	}
}

func kSignFloat[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		v := x[i]
		switch {
		case v > 0:
			z[i] = 1
		case v < 0:
			z[i] = -1
		case v == 0:
			z[i] = 0
		default:
			z[i] = v // NaN
		}
	}
}

func kSquare[T number](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = x[i] * x[i]
	}
}

func kRecipFloat[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = 1 / x[i]
	}
}

func kRecipInt[T integer](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		if x[i] == 0 {
			z[i] = 0
		} else {
			z[i] = 1 / x[i]
		}
	}
}

// kMin, kMax, kFmin and kFmax are numpy.minimum, numpy.maximum, numpy.fmin and
// numpy.fmax with the library's NaN policy (internal/fp: the canonical NaN, -0 < +0).
func kMin[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = fp.Min(x[i], y[i])
	}
}

func kMax[T number](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = fp.Max(x[i], y[i])
	}
}

func kFmin[T float](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = fp.Fmin(x[i], y[i])
	}
}

func kFmax[T float](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = fp.Fmax(x[i], y[i])
	}
}

func kIsNaN[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = x[i] != x[i]
	}
}

func kIsInf[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = math.IsInf(float64(x[i]), 0)
	}
}

func kIsFinite[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		v := x[i]
		z[i] = v-v == 0 // false for NaN and ±Inf
	}
}

func kSignbit[T float](n int, d, a, _, _ unsafe.Pointer) {
	z := sl[bool](d, n)
	x := sl[T](a, n)[:len(z)]
	for i := range z {
		z[i] = math.Signbit(float64(x[i]))
	}
}

// kPowInt raises to an integer power by squaring, wrapping on overflow. For a negative
// exponent it gives 1/x^|y| truncated: 1 for x == 1, ±1 for x == -1, else 0.
func kPowInt[T integer](n int, d, a, b, _ unsafe.Pointer) {
	z := sl[T](d, n)
	x := sl[T](a, n)[:len(z)]
	y := sl[T](b, n)[:len(z)]
	for i := range z {
		z[i] = powInt(x[i], y[i])
	}
}

func powInt[T integer](x, y T) T {
	if y < 0 {
		switch {
		case x == 1:
			return 1
		case x == ^T(0): // -1 (y < 0 only happens for signed T)
			if y&1 == 0 {
				return 1
			}
			return x
		}
		return 0
	}
	r := T(1)
	for y != 0 {
		if y&1 == 1 {
			r *= x
		}
		x *= x
		y >>= 1
	}
	return r
}
