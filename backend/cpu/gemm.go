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
	a := matrix(&g.A, i, ar, ac, size)
	b := matrix(&g.B, i, br, bc, size)
	c := matrix(&g.C, i, g.M, g.N, size)
	impl := gonum.Implementation{}
	switch g.Type {
	case dtype.Float64:
		impl.Dgemm(trans(g.TransA), trans(g.TransB), g.M, g.N, g.K, g.Alpha, Slice[float64](a), g.A.LD,
			Slice[float64](b), g.B.LD, g.Beta, Slice[float64](c), g.C.LD)
	case dtype.Float32:
		impl.Sgemm(trans(g.TransA), trans(g.TransB), g.M, g.N, g.K, float32(g.Alpha), Slice[float32](a), g.A.LD,
			Slice[float32](b), g.B.LD, float32(g.Beta), Slice[float32](c), g.C.LD)
	default:
		toF32, fromF32 := dtype.Float16ToFloat32, dtype.Float16FromFloat32
		if g.Type == dtype.BFloat16 {
			toF32, fromF32 = dtype.BFloat16ToFloat32, dtype.BFloat16FromFloat32
		}
		sc.a = widen(sc.a, Slice[uint16](a), ar, ac, g.A.LD, toF32)
		sc.b = widen(sc.b, Slice[uint16](b), br, bc, g.B.LD, toF32)
		ch := Slice[uint16](c)
		sc.c = grow(sc.c, g.M*g.N)
		if g.Beta != 0 {
			sc.c = widen(sc.c, ch, g.M, g.N, g.C.LD, toF32)
		}
		impl.Sgemm(trans(g.TransA), trans(g.TransB), g.M, g.N, g.K, float32(g.Alpha), sc.a, ac, sc.b, bc,
			float32(g.Beta), sc.c, g.N)
		for r := range g.M {
			row := ch[r*g.C.LD : r*g.C.LD+g.N]
			for j := range row {
				row[j] = fromF32(sc.c[r*g.N+j])
			}
		}
	}
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
