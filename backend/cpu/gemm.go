package cpu

import (
	"fmt"
	"runtime/debug"
	"sync"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/gonum"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
)

// Matrix products on the CPU: gonum's pure-Go BLAS (gonum.org/v1/gonum/blas/gonum),
// whose Sgemm and Dgemm split one product into 64x64 blocks over GOMAXPROCS goroutines
// once it has at least four of them. A batch of products too small for that runs its
// products in parallel over the device's workers instead. float16 and bfloat16
// operands are widened to float32 (exactly), multiplied by Sgemm (float32
// accumulation, Alpha and Beta applied in float32) and rounded once to nearest even on
// store. The TF32 flag is ignored: the CPU computes in full float32, which is what TF32
// permits and more.
//
// Two rules gonum's kernel does not keep by itself are kept here:
//
//   - Every product a_il*b_lj counts, as IEEE 754 arithmetic, NumPy and cuBLAS count it:
//     0*Inf and 0*NaN are NaN, so an output whose row of op(A) has a zero where the
//     column of op(B) has an Inf or a NaN is NaN. gonum's Sgemm and Dgemm (v0.17.0,
//     blas/gonum/dgemm.go) skip a row of op(B) wherever alpha*a_il == 0 (`if tmp != 0`
//     before each Axpy), in every layout but op(A) = A, op(B) = B^T (dot products,
//     which skip nothing), and so lose those NaNs. gemmOne looks for the pattern first
//     (lostProducts): an element a_il with alpha*a_il == 0 in the type gonum computes in
//     (a zero, or a product that underflows) and an Inf or a NaN in row l of op(B). That
//     costs O(MK + KN) at most against the product's O(MNK); where it matters, a row
//     with many zeros times a matrix, it reads the rows of B that the zeros skip, as a
//     product that skips nothing would (2026-12, 2 shared cores, float32 (1, 1024) @
//     (1024, 1024) with half of A zero: about 300 against 125-180 µs). Only where the
//     pattern is found are the outputs it reaches recomputed, from C as it was, as
//     alpha*sum_l(a_il*b_lj) + beta*c_ij, and stored over gonum's. The mirror case (an
//     Inf or a NaN in A, a zero in B) needs nothing: gonum multiplies it. gonum applies
//     alpha to A's elements before the products, so with |alpha| > 1 an alpha*a_il that
//     overflows to Inf can still make a NaN (Inf*0) where alpha*(a_il*b_lj) would be
//     finite: an ordinary difference of association, like its rounding.
//   - Alpha == 0 as the product applies it (backend.GemmAlphaZero: in float32 for all
//     but float64, so 1e-300 is zero for float32 and the 16-bit types) reads
//     neither A nor B, as reference BLAS's dgemm says ("When alpha is zero then A and B
//     need not be set on input"): C becomes Beta*C (zeros, C not read, for Beta == 0;
//     untouched for Beta == 1), whatever NaN or Inf A and B hold. gonum would scale C
//     and still multiply by alpha*a_il, which is NaN for an Inf in A.

var _ backend.Gemmer = (*Device)(nil)

// gonumVersion is gonum's module version as built into this program, or "" when the
// build has no module information.
var gonumVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "gonum.org/v1/gonum" {
				if m.Replace != nil {
					return m.Replace.Version
				}
				return m.Version
			}
		}
	}
	return ""
})

// GemmLibrary returns "gonum <version> (pure-Go BLAS)"; gonum is always there.
func (d *Device) GemmLibrary() (string, error) {
	if v := gonumVersion(); v != "" {
		return "gonum " + v + " (pure-Go BLAS)", nil
	}
	return "gonum (pure-Go BLAS)", nil
}

// Gemm enqueues the product g on s (see backend.Gemm).
func (d *Device) Gemm(bs backend.Stream, g *backend.Gemm) error {
	if err := g.Check(); err != nil {
		return fmt.Errorf("cpu: %w", err)
	}
	s, ok := bs.(*Stream)
	if !ok || s == nil || s.dev != d {
		return fmt.Errorf("cpu: gemm on a stream of type %T that is not this device's: %w", bs, backend.ErrInvalidValue)
	}
	for _, m := range []backend.Mem{g.A.Mem, g.B.Mem, g.C.Mem} {
		if _, ok := m.(*Mem); !ok {
			return fmt.Errorf("cpu: gemm operand of type %T is not CPU memory: %w", m, backend.ErrInvalidValue)
		}
	}
	job := *g
	workers := d.workers
	return s.enqueue(func() error { gemm(workers, &job); return nil })
}

// gemm computes g (already checked) on the calling goroutine and workers more.
func gemm(workers int, g *backend.Gemm) {
	flops := 2 * float64(g.M) * float64(g.N) * float64(g.K)
	// gonum goes parallel inside one product from 4 blocks of 64x64 of C; below that
	// (or for many products) the batch is split over the workers.
	inner := (g.M+63)/64*((g.N+63)/64) >= 4
	if g.Batch > 1 && (!inner || g.Batch >= 4*workers) && flops*float64(g.Batch) > 1<<16 {
		Parallel(workers, g.Batch, 1, func(lo, hi int) {
			var scratch halfScratch
			for i := lo; i < hi; i++ {
				gemmOne(g, i, &scratch)
			}
		})
		return
	}
	var scratch halfScratch
	for i := range g.Batch {
		gemmOne(g, i, &scratch)
	}
}

func trans(t bool) blas.Transpose {
	if t {
		return blas.Trans
	}
	return blas.NoTrans
}

// matrix returns the bytes of matrix i of operand o: rows rows of cols elements of
// size bytes, ld elements apart.
func matrix(o *backend.GemmOperand, i, rows, cols, size int) []byte {
	start := o.Off + int64(i)*o.Stride*int64(size)
	n := (int64(rows-1)*int64(o.LD) + int64(cols)) * int64(size)
	return o.Mem.Host()[start : start+n]
}

// halfScratch holds one worker's float32 copies of 16-bit matrices.
type halfScratch struct{ a, b, c []float32 }

func grow(s []float32, n int) []float32 {
	if cap(s) < n {
		return make([]float32, n)
	}
	return s[:n]
}

// gemmOne computes product i of g.
func gemmOne(g *backend.Gemm, i int, sc *halfScratch) {
	ar, ac := g.M, g.K
	if g.TransA {
		ar, ac = ac, ar
	}
	br, bc := g.K, g.N
	if g.TransB {
		br, bc = bc, br
	}
	size := g.Type.Size()
	c := matrix(&g.C, i, g.M, g.N, size)
	if backend.GemmAlphaZero(g.Type, g.Alpha) {
		scaleC(g, c)
		return
	}
	a := matrix(&g.A, i, ar, ac, size)
	b := matrix(&g.B, i, br, bc, size)
	impl := gonum.Implementation{}
	switch g.Type {
	case dtype.Float64:
		A, B, C := Slice[float64](a), Slice[float64](b), Slice[float64](c)
		fix := lostProducts(g.TransA, g.TransB, g.M, g.N, g.K, g.Alpha, A, g.A.LD, B, g.B.LD, g.Beta, C, g.C.LD)
		impl.Dgemm(trans(g.TransA), trans(g.TransB), g.M, g.N, g.K, g.Alpha, A, g.A.LD, B, g.B.LD, g.Beta, C, g.C.LD)
		fix.apply(C)
	case dtype.Float32:
		A, B, C := Slice[float32](a), Slice[float32](b), Slice[float32](c)
		alpha, beta := float32(g.Alpha), float32(g.Beta)
		fix := lostProducts(g.TransA, g.TransB, g.M, g.N, g.K, alpha, A, g.A.LD, B, g.B.LD, beta, C, g.C.LD)
		impl.Sgemm(trans(g.TransA), trans(g.TransB), g.M, g.N, g.K, alpha, A, g.A.LD, B, g.B.LD, beta, C, g.C.LD)
		fix.apply(C)
	default:
		toF32, fromF32 := halfConv(g.Type)
		sc.a = widen(sc.a, Slice[uint16](a), ar, ac, g.A.LD, toF32)
		sc.b = widen(sc.b, Slice[uint16](b), br, bc, g.B.LD, toF32)
		ch := Slice[uint16](c)
		sc.c = grow(sc.c, g.M*g.N)
		if g.Beta != 0 {
			sc.c = widen(sc.c, ch, g.M, g.N, g.C.LD, toF32)
		}
		alpha, beta := float32(g.Alpha), float32(g.Beta)
		fix := lostProducts(g.TransA, g.TransB, g.M, g.N, g.K, alpha, sc.a, ac, sc.b, bc, beta, sc.c, g.N)
		impl.Sgemm(trans(g.TransA), trans(g.TransB), g.M, g.N, g.K, alpha, sc.a, ac, sc.b, bc, beta, sc.c, g.N)
		fix.apply(sc.c)
		for r := range g.M {
			row := ch[r*g.C.LD : r*g.C.LD+g.N]
			for j := range row {
				row[j] = fromF32(sc.c[r*g.N+j])
			}
		}
	}
}

// halfConv returns the conversions of a 16-bit type (Float16 or BFloat16) to and from
// float32.
func halfConv(t dtype.DType) (toF32 func(uint16) float32, fromF32 func(float32) uint16) {
	if t == dtype.BFloat16 {
		return dtype.BFloat16ToFloat32, dtype.BFloat16FromFloat32
	}
	return dtype.Float16ToFloat32, dtype.Float16FromFloat32
}

// scaleC sets C (the M x N matrix of g's type in c) to Beta*C without reading it when
// Beta is 0: a product with Alpha == 0. The 16-bit types scale in float32 and round
// once.
func scaleC(g *backend.Gemm, c []byte) {
	if g.Beta == 1 {
		return
	}
	ld := g.C.LD
	switch g.Type {
	case dtype.Float64:
		scaleRows(Slice[float64](c), g.M, g.N, ld, func(x float64) float64 { return g.Beta * x }, g.Beta == 0)
	case dtype.Float32:
		beta := float32(g.Beta)
		scaleRows(Slice[float32](c), g.M, g.N, ld, func(x float32) float32 { return beta * x }, g.Beta == 0)
	default:
		toF32, fromF32 := halfConv(g.Type)
		beta := float32(g.Beta)
		scaleRows(Slice[uint16](c), g.M, g.N, ld, func(h uint16) uint16 { return fromF32(beta * toF32(h)) }, g.Beta == 0)
	}
}

// scaleRows replaces each element x of a rows x cols matrix (leading dimension ld) by
// f(x), or by the zero value without reading it when zero is set (+0 in every type).
func scaleRows[T any](c []T, rows, cols, ld int, f func(T) T, zero bool) {
	for r := range rows {
		row := c[r*ld : r*ld+cols]
		if zero {
			clear(row)
			continue
		}
		for j, x := range row {
			row[j] = f(x)
		}
	}
}

// patch is a set of outputs computed beside gonum, to store over its results.
type patch[T float32 | float64] struct {
	at  []int // indices in C
	val []T
}

func (p patch[T]) apply(c []T) {
	for n, i := range p.at {
		c[i] = p.val[n]
	}
}

// notFinite reports whether x is an infinity or a NaN (x-x is NaN for both, 0 for
// every finite x).
func notFinite[T float32 | float64](x T) bool { return x-x != 0 }

// lostProducts returns the outputs of C = alpha*op(A)@op(B) + beta*C that gonum's
// kernel would get wrong by skipping a row l of op(B) where alpha*a_il == 0 (in T,
// as gonum computes it) although that row holds an Inf or a NaN: each such output,
// computed here in plain loops as alpha*sum_l(a_il*b_lj) (+ beta*c_ij when beta != 0)
// from C as it is before gonum writes it. The arguments are gonum's (row major,
// transposes as tA, tB), alpha != 0. B is checked for Inf and NaN by BLAS dot products
// of its rows with themselves (finite only if every element is), A for zeros by a
// plain loop: A first when it is the smaller (N > M), then only the rows of op(B) its
// zeros skip; else B first (one dot product over the whole of a dense B, then by
// rows), then only the columns of op(A) that meet a row of op(B) that isn't finite. Without a zero meeting an Inf
// or a NaN nothing is allocated and nothing recomputed; each output recomputed costs
// O(K).
func lostProducts[T float32 | float64](tA, tB bool, m, n, k int, alpha T, a []T, lda int, b []T, ldb int,
	beta T, c []T, ldc int) patch[T] {
	var p patch[T]
	if !tA && tB {
		return p // gonum's A @ B^T takes dot products, skipping nothing
	}
	// Row l of op(B) is n elements from b[l*ldb] one apart, or (tB) ldb apart from b[l].
	start, inc := ldb, 1
	br, bc := k, n // B as stored
	if tB {
		start, inc = 1, ldb
		br, bc = n, k
	}
	// skipped[l]: some alpha*a_il is zero; nil: rows all taken as skipped. A is read
	// first where it is smaller than B (a row times a matrix, with n > m), else B is.
	var skipped []bool
	if n <= m && ldb == bc && allFinite(br*bc, b, 1) {
		return p // B is dense and finite: nothing to lose
	}
	if n > m {
		ar, ac := m, k // A as stored
		if tA {
			ar, ac = k, m
		}
		for r := range ar {
			for col, x := range a[r*lda : r*lda+ac] {
				if alpha*x != 0 {
					continue
				}
				if skipped == nil {
					skipped = make([]bool, k)
				}
				if tA {
					skipped[r] = true
					break
				}
				skipped[col] = true
			}
		}
		if skipped == nil {
			return p
		}
	}
	// bad[l] lists the columns of the skipped row l of op(B) that hold an Inf or a NaN.
	var bad map[int][]int
	for l := range k {
		if skipped != nil && !skipped[l] {
			continue
		}
		row := b[l*start:]
		if allFinite(n, row, inc) {
			continue
		}
		var cols []int
		for j := range n {
			if notFinite(row[j*inc]) {
				cols = append(cols, j)
			}
		}
		if len(cols) > 0 { // (else the dot product overflowed)
			if bad == nil {
				bad = map[int][]int{}
			}
			bad[l] = cols
		}
	}
	if bad == nil {
		return p
	}
	opA := func(i, l int) T {
		if tA {
			return a[l*lda+i]
		}
		return a[i*lda+l]
	}
	opB := func(l, j int) T { return b[l*start+j*inc] }
	hit := make([]bool, n) // the columns that row i's skipped rows of op(B) reach
	var reached []int
	for i := range m {
		reached = reached[:0]
		for l, cols := range bad {
			if alpha*opA(i, l) != 0 {
				continue // gonum multiplies this row of op(B) for row i
			}
			for _, j := range cols {
				if !hit[j] {
					hit[j] = true
					reached = append(reached, j)
				}
			}
		}
		for _, j := range reached {
			hit[j] = false
			var sum T
			for l := range k {
				sum += opA(i, l) * opB(l, j)
			}
			v := alpha * sum
			if beta != 0 {
				v += beta * c[i*ldc+j]
			}
			p.at = append(p.at, i*ldc+j)
			p.val = append(p.val, v)
		}
	}
	return p
}

// allFinite reports whether the n elements of x, inc apart, are all finite, by a BLAS
// dot product of x with itself (gonum's assembly on amd64 and arm64): an Inf or a NaN
// makes it Inf or NaN. A false answer may also be an overflow of finite values.
func allFinite[T float32 | float64](n int, x []T, inc int) bool {
	switch v := any(x).(type) {
	case []float32:
		d := gonum.Implementation{}.Sdot(n, v, inc, v, inc)
		return d-d == 0
	case []float64:
		d := gonum.Implementation{}.Ddot(n, v, inc, v, inc)
		return d-d == 0
	}
	return false
}

// widen converts a rows x cols matrix of 16-bit values with leading dimension ld into a
// dense float32 matrix, reusing dst's storage.
func widen(dst []float32, src []uint16, rows, cols, ld int, toF32 func(uint16) float32) []float32 {
	dst = grow(dst, rows*cols)
	for r := range rows {
		row := src[r*ld : r*ld+cols]
		out := dst[r*cols : (r+1)*cols]
		for j, h := range row {
			out[j] = toF32(h)
		}
	}
	return dst
}
