package backend

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
)

// Gemmer is the optional capability of a Device that multiplies matrices with a
// library of its own: cuBLAS on CUDA, gonum's pure-Go BLAS on the CPU. Package gpu
// asks for it with a type assertion, as database/sql asks a driver.Conn for its
// optional interfaces, and does shapes, views and access tracking itself; where a
// device lacks the capability (or GemmLibrary reports the library missing), package gpu
// runs its own generated kernel instead.
type Gemmer interface {
	// GemmLibrary names the library behind Gemm and its version ("cuBLAS 13.1.0
	// (/usr/local/cuda/lib64/libcublas.so.13)", "gonum v0.17.0 (pure Go)"). An error
	// wrapping ErrNotSupported says that the library is not available here (then
	// Gemm fails too), and why; it is stable for the life of the device.
	GemmLibrary() (string, error)
	// Gemm enqueues g on s, a stream of this device. It returns an error wrapping
	// ErrNotSupported, having enqueued nothing, when the library is missing or cannot
	// do g (an element type it lacks), and ErrInvalidValue for a g that breaks the
	// rules documented on Gemm.
	Gemm(s Stream, g *Gemm) error
}

// Gemm is a batched general matrix product on device memory, in row-major terms like
// NumPy and gonum (the cuBLAS implementation transposes the problem for its
// column-major convention): for each i < Batch,
//
//	C_i = Alpha * op(A_i) @ op(B_i) + Beta * C_i
//
// where op(A_i) is M x K and op(B_i) is K x N, and C_i is M x N. When Beta is 0, C is
// not read (NaN and Inf in C do not propagate), as in BLAS.
type Gemm struct {
	// Type is the element type of A, B and C: Float16, BFloat16 (both accumulated in
	// float32, Alpha and Beta applied in float32, rounded once on store), Float32 or
	// Float64.
	Type dtype.DType
	// M, N and K are the product's dimensions; each is at least 1 (empty products
	// are the caller's to handle) and below 2^31.
	M, N, K int
	// Batch is the number of products, at least 1 and below 2^31.
	Batch int
	// A, B and C are the operands. A_i is stored as M rows of K elements (TransA
	// false: op(A) = A) or K rows of M elements (TransA true: op(A) = A_i^T); B_i as
	// K rows of N or, with TransB, N rows of K; C_i as M rows of N.
	A, B, C GemmOperand
	// TransA and TransB say that A_i and B_i are stored transposed (see A).
	TransA, TransB bool
	// Alpha and Beta scale the product and C, applied in GemmAccumType(Type). An
	// Alpha that is zero there (GemmAlphaZero) reads neither A nor B.
	Alpha, Beta float64
	// TF32 allows float32 products to use TF32 tensor cores: inputs rounded to 10
	// mantissa bits, products accumulated in float32 (PyTorch's
	// set_float32_matmul_precision("high")). Ignored for the other types.
	TF32 bool
}

// GemmAccumType returns the type that a product of elements of type t accumulates in
// and applies Alpha and Beta in: Float64 for Float64, Float32 for Float32, Float16 and
// BFloat16 (Alpha and Beta rounded to float32 to nearest, as Go's conversion does). It
// is the one statement of the rule, for every implementation and for package gpu's
// Gemm.
func GemmAccumType(t dtype.DType) dtype.DType {
	if t == dtype.Float64 {
		return dtype.Float64
	}
	return dtype.Float32
}

// GemmAlphaZero reports whether alpha is zero as a product of elements of type t
// applies it, in GemmAccumType(t): 0 itself, or for all but Float64 an alpha that
// rounds to a float32 zero (1e-300). Then A and B are not read, as in reference BLAS
// ("When alpha is zero then A and B need not be set on input"): C becomes Beta*C (Beta
// applied in GemmAccumType(t), the 16-bit types rounded once on store), C not read
// when Beta is 0, whatever NaN or Inf A and B hold. Package gpu takes that path itself
// for every kernel; implementations keep it too, for their direct callers.
func GemmAlphaZero(t dtype.DType, alpha float64) bool {
	if GemmAccumType(t) == dtype.Float32 {
		return float32(alpha) == 0
	}
	return alpha == 0
}

// GemmOperand is one operand of a Gemm: matrix i starts at element Stride*i of the
// memory at byte offset Off, and its rows are LD elements apart.
type GemmOperand struct {
	Mem Mem
	// Off is the byte offset of matrix 0's first element in Mem; a multiple of the
	// element size.
	Off int64
	// LD is the leading dimension: elements from one stored row to the next, at least
	// the stored row's length (and at least 1), below 2^31.
	LD int
	// Stride is the elements from matrix i to matrix i+1, at least 0 (0 repeats
	// matrix 0: a broadcast operand, never C when Batch > 1).
	Stride int64
}

// dimsA returns the stored rows and columns of A (op(A) is M x K).
func (g *Gemm) dimsA() (rows, cols int) {
	if g.TransA {
		return g.K, g.M
	}
	return g.M, g.K
}

// dimsB returns the stored rows and columns of B (op(B) is K x N).
func (g *Gemm) dimsB() (rows, cols int) {
	if g.TransB {
		return g.N, g.K
	}
	return g.K, g.N
}

// Check validates g against the rules above, including that every matrix lies inside
// its memory, and returns an error wrapping ErrInvalidValue or, for an element type
// other than the four, ErrNotSupported. Implementations call it first.
func (g *Gemm) Check() error {
	switch g.Type {
	case dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64:
	default:
		return fmt.Errorf("gemm of %v: the types are float16, bfloat16, float32 and float64: %w", g.Type, ErrNotSupported)
	}
	const lim = 1<<31 - 1
	if g.M < 1 || g.N < 1 || g.K < 1 || g.Batch < 1 || g.M > lim || g.N > lim || g.K > lim || g.Batch > lim {
		return fmt.Errorf("gemm: M=%d N=%d K=%d batch=%d: each must be in [1, 2^31): %w", g.M, g.N, g.K, g.Batch, ErrInvalidValue)
	}
	size := int64(g.Type.Size())
	for _, o := range []struct {
		name       string
		op         *GemmOperand
		rows, cols int
	}{
		{"A", &g.A, 0, 0}, {"B", &g.B, 0, 0}, {"C", &g.C, g.M, g.N},
	} {
		rows, cols := o.rows, o.cols
		switch o.name {
		case "A":
			rows, cols = g.dimsA()
		case "B":
			rows, cols = g.dimsB()
		}
		op := o.op
		if op.Mem == nil {
			return fmt.Errorf("gemm: operand %s has no memory: %w", o.name, ErrInvalidValue)
		}
		if op.LD < max(1, cols) || op.LD > lim {
			return fmt.Errorf("gemm: operand %s: leading dimension %d for rows of %d elements: %w", o.name, op.LD, cols, ErrInvalidValue)
		}
		if op.Stride < 0 || (o.name == "C" && op.Stride == 0 && g.Batch > 1) {
			return fmt.Errorf("gemm: operand %s: batch stride %d: %w", o.name, op.Stride, ErrInvalidValue)
		}
		if op.Off < 0 || op.Off%size != 0 {
			return fmt.Errorf("gemm: operand %s: byte offset %d for %v elements: %w", o.name, op.Off, g.Type, ErrInvalidValue)
		}
		// The last element of the last matrix, in elements from Off.
		last := int64(g.Batch-1)*op.Stride + int64(rows-1)*int64(op.LD) + int64(cols-1)
		if end := op.Off + (last+1)*size; end > op.Mem.Size() || last < 0 {
			return fmt.Errorf("gemm: operand %s (%d matrices of %dx%d, ld %d, stride %d) ends at byte %d of a %d-byte allocation: %w",
				o.name, g.Batch, rows, cols, op.LD, op.Stride, end, op.Mem.Size(), ErrInvalidValue)
		}
	}
	return nil
}
