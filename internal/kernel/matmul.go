package kernel

import (
	"fmt"
	"math"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// MatMul is the generated matrix-product kernel: the fallback where no BLAS library is
// available (and, selected by the caller, a kernel to measure beside it). One launch
// computes a strided batch of products in the terms of backend.Gemm, row-major:
//
//	C_i = alpha * op(A_i) @ op(B_i) + beta * C_i,   i < batch
//
// with op(A_i) of M x K (stored M rows of K, or K rows of M with TransA), op(B_i) of
// K x N (K rows of N, or N rows of K with TransB) and C_i of M x N. beta == 0 does not
// read C. float16 and bfloat16 accumulate in float32 and round once on store; float32
// accumulates in float32 (with TF32, its inputs are rounded to TF32 by the tensor cores);
// float64 in float64.
//
// On CUDA (matmul_ptx.go) the kernel is tiled through shared memory: tensor cores
// (mma.sync) fed by asynchronous copies (cp.async) for float16, bfloat16 and TF32, and
// register tiles of FMAs for exact float32 and float64. It assumes, and the caller
// guarantees (with a copy otherwise), that the base addresses, the leading dimensions
// and the batch strides of A and B are multiples of 16 bytes (MatMulAligned); C is
// written element by element.
// The CPU implementation has no such need.
//
// Kernel parameters, in order:
//
//	a, b, c        u64  addresses of matrix 0 of A, B and C
//	m, n, k        u32  the product's dimensions, each in [1, 2^31)
//	lda, ldb, ldc  u32  leading dimensions in elements
//	sa, sb, sc     u64  batch strides in elements (0 repeats matrix 0; never for C)
//	batch          u32  the number of products
//	alpha, beta    f32  (f64 for float64)
//
// The grid is one-dimensional: Blocks(m, n, batch) blocks of Threads() threads, with
// SharedBytes() bytes of dynamic shared memory.
type MatMul struct {
	Type           dtype.DType // Float16, BFloat16, Float32 or Float64
	TransA, TransB bool
	// TF32 runs a float32 product on the tensor cores with TF32 inputs.
	TF32 bool
	// Tile selects the tensor-core kernel's tiling (MatMulTiles: 1 to
	// len(MatMulTiles()); 0, the default: DefaultMatMulTile); the FMA kernels have one
	// tiling and ignore it.
	Tile int
}

// Validate checks the spec.
func (p *MatMul) Validate() error {
	switch p.Type {
	case dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64:
	default:
		return fmt.Errorf("kernel: matmul of %v: %w", p.Type, backend.ErrNotSupported)
	}
	if p.TF32 && p.Type != dtype.Float32 {
		return fmt.Errorf("kernel: matmul: TF32 with %v elements: %w", p.Type, backend.ErrInvalidValue)
	}
	if p.Tile < 0 || p.Tile > len(mmTensorTiles) {
		return fmt.Errorf("kernel: matmul: tiling %d, want 0 to %d: %w", p.Tile, len(mmTensorTiles), backend.ErrInvalidValue)
	}
	return nil
}

// Key identifies the kernel.
func (p *MatMul) Key() string {
	k := fmt.Sprintf("matmul|%v|ta=%v|tb=%v|tf32=%v", p.Type, p.TransA, p.TransB, p.TF32)
	if t := p.tensorTile(); t > 0 {
		k += fmt.Sprintf("|tile=%d", t)
	}
	return k
}

// MatMulAligned is the alignment in bytes the CUDA kernel needs of the base addresses,
// leading dimensions and batch strides of A and B (C needs only its elements aligned).
const MatMulAligned = 16

// Blocks returns the launch's grid size, and false when it exceeds 2^31-1 blocks.
func (p *MatMul) Blocks(m, n, batch int) (int, bool) {
	t := p.tile()
	b := int64((m+t.bm-1)/t.bm) * int64((n+t.bn-1)/t.bn) * int64(batch)
	return int(b), b <= math.MaxInt32
}

// Threads returns the threads per block.
func (p *MatMul) Threads() int { return p.tile().threads }

// SharedBytes returns the dynamic shared memory a block uses.
func (p *MatMul) SharedBytes() int { return p.tile().smem(p) }

// CPU returns the kernel for the CPU backend: each product row by row over the
// workers, accumulating as the CUDA kernel does (float32, or float64 for float64), on
// float32 (float64) copies of op(A)'s row and op(B)'s columns.
func (p *MatMul) CPU() (func(*cpu.Launch) error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	sp := *p
	return func(l *cpu.Launch) error {
		m, n, k := int(l.Uint32(3)), int(l.Uint32(4)), int(l.Uint32(5))
		lda, ldb, ldc := int(l.Uint32(6)), int(l.Uint32(7)), int(l.Uint32(8))
		sa, sb, sc := int(l.Uint64(9)), int(l.Uint64(10)), int(l.Uint64(11))
		batch := int(l.Uint32(12))
		a, b, c := l.Mem(0), l.Mem(1), l.Mem(2)
		if sp.Type == dtype.Float64 {
			alpha, beta := l.Float64(13), l.Float64(14)
			A, B, C := cpu.Slice[float64](a), cpu.Slice[float64](b), cpu.Slice[float64](c)
			load := func(op, i int) float64 {
				if op == 0 {
					return A[i]
				}
				return B[i]
			}
			bt := mmColumns(&sp, batch, n, k, ldb, sb, load)
			l.Parallel(batch*m, 1, func(lo, hi int) {
				row := make([]float64, k)
				for r := lo; r < hi; r++ {
					bi, i := r/m, r%m
					for kk := range row {
						row[kk] = A[bi*sa+sp.aIdx(i, kk, lda)]
					}
					for j := range n {
						col := bt[mmBatch(sb, bi)][j*k : (j+1)*k]
						var acc float64
						for kk, x := range row {
							acc = math.FMA(x, col[kk], acc)
						}
						out := &C[bi*sc+i*ldc+j]
						if beta == 0 {
							*out = alpha * acc
						} else {
							*out = alpha*acc + beta**out
						}
					}
				}
			})
			return nil
		}
		alpha, beta := l.Float32(13), l.Float32(14)
		load, store := sp.access(a, b, c)
		bt := mmColumns(&sp, batch, n, k, ldb, sb, load)
		l.Parallel(batch*m, 1, func(lo, hi int) {
			row := make([]float32, k)
			for r := lo; r < hi; r++ {
				bi, i := r/m, r%m
				for kk := range row {
					row[kk] = load(0, bi*sa+sp.aIdx(i, kk, lda))
				}
				for j := range n {
					col := bt[mmBatch(sb, bi)][j*k : (j+1)*k]
					var acc float32
					for kk, x := range row {
						acc = float32(math.FMA(float64(x), float64(col[kk]), float64(acc)))
					}
					at := bi*sc + i*ldc + j
					v := alpha * acc
					if beta != 0 {
						v = alpha*acc + beta*load(2, at)
					}
					store(at, v)
				}
			}
		})
		return nil
	}, nil
}

// mmBatch returns the index of batch bi's copy of B's columns (0 when B is broadcast).
func mmBatch(sb, bi int) int {
	if sb == 0 {
		return 0
	}
	return bi
}

// mmColumns returns, for each distinct matrix of B, its columns op(B)[:, j] one after
// the other (n slices of k).
func mmColumns[T float32 | float64](p *MatMul, batch, n, k, ldb, sb int, load func(op, i int) T) [][]T {
	if sb == 0 {
		batch = 1
	}
	out := make([][]T, batch)
	for bi := range out {
		cols := make([]T, n*k)
		for j := range n {
			for kk := range k {
				cols[j*k+kk] = load(1, bi*sb+p.bIdx(kk, j, ldb))
			}
		}
		out[bi] = cols
	}
	return out
}

func (p *MatMul) aIdx(i, k, lda int) int {
	if p.TransA {
		return k*lda + i
	}
	return i*lda + k
}

func (p *MatMul) bIdx(k, j, ldb int) int {
	if p.TransB {
		return j*ldb + k
	}
	return k*ldb + j
}

// access returns float32 element access to a, b and c (operand 0, 1, 2) of the spec's
// type (float32, float16 or bfloat16; TF32 rounds the inputs of a and b as the tensor
// cores do, to nearest with ties away from zero).
func (p *MatMul) access(a, b, c []byte) (load func(op, i int) float32, store func(i int, v float32)) {
	if p.Type == dtype.Float32 {
		ops := [3][]float32{cpu.Slice[float32](a), cpu.Slice[float32](b), cpu.Slice[float32](c)}
		load = func(op, i int) float32 { return ops[op][i] }
		if p.TF32 {
			load = func(op, i int) float32 {
				if op == 2 {
					return ops[2][i]
				}
				return RoundTF32(ops[op][i])
			}
		}
		return load, func(i int, v float32) { ops[2][i] = v }
	}
	ops := [3][]uint16{cpu.Slice[uint16](a), cpu.Slice[uint16](b), cpu.Slice[uint16](c)}
	to, from := dtype.Float16ToFloat32, dtype.Float16FromFloat32
	if p.Type == dtype.BFloat16 {
		to, from = dtype.BFloat16ToFloat32, dtype.BFloat16FromFloat32
	}
	return func(op, i int) float32 { return to(ops[op][i]) }, func(i int, v float32) { ops[2][i] = from(v) }
}

// RoundTF32 rounds a float32 to TF32 (10 explicit mantissa bits), to nearest with ties
// away from zero, as cvt.rna.tf32.f32 does; NaN and Inf pass through.
func RoundTF32(x float32) float32 {
	b := math.Float32bits(x)
	if b&0x7f800000 == 0x7f800000 {
		return x
	}
	b = (b + 0x1000) &^ 0x1fff
	return math.Float32frombits(b)
}
