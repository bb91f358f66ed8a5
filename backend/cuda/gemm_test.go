package cuda

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda/cublas"
	"github.com/go-gpu/gpu/dtype"
)

// TestColMajor checks the mapping of row-major products onto cuBLAS's column-major
// calls by running the calls it makes with cuBLAS's documented semantics (column major:
// element (i, j) of a matrix at i + j*ld; op N or T) on host memory, against the
// row-major product computed directly. No GPU needed.
func TestColMajor(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		m, n, k := 1+rng.IntN(7), 1+rng.IntN(7), 1+rng.IntN(7)
		batch := 1 + rng.IntN(3)
		g := backend.Gemm{Type: dtype.Float64, M: m, N: n, K: k, Batch: batch,
			TransA: rng.IntN(2) == 0, TransB: rng.IntN(2) == 0, Alpha: 1.5, Beta: -0.5}
		ar, ac := m, k
		if g.TransA {
			ar, ac = k, m
		}
		br, bc := k, n
		if g.TransB {
			br, bc = n, k
		}
		mem := make([]float64, 0, 4096)
		place := func(rows, cols int, bcast bool) backend.GemmOperand {
			ld := cols + rng.IntN(3)
			stride := int64(rows * ld)
			if bcast {
				stride = 0
			}
			off := len(mem)
			for range int(stride)*(batch-1) + rows*ld {
				mem = append(mem, rng.Float64()*2-1)
			}
			return backend.GemmOperand{Off: int64(off), LD: ld, Stride: stride}
		}
		g.A = place(ar, ac, rng.IntN(3) == 0)
		g.B = place(br, bc, rng.IntN(3) == 0)
		g.C = place(m, n, false)
		// The row-major reference.
		want := make([]float64, len(mem))
		copy(want, mem)
		at := func(o backend.GemmOperand, b, i, j int) float64 { return mem[int(o.Off)+b*int(o.Stride)+i*o.LD+j] }
		for b := range batch {
			for i := range m {
				for j := range n {
					var sum float64
					for l := range k {
						var x, y float64
						if g.TransA {
							x = at(g.A, b, l, i)
						} else {
							x = at(g.A, b, i, l)
						}
						if g.TransB {
							y = at(g.B, b, j, l)
						} else {
							y = at(g.B, b, l, j)
						}
						sum += x * y
					}
					p := int(g.C.Off) + b*int(g.C.Stride) + i*g.C.LD + j
					want[p] = g.Alpha*sum + g.Beta*mem[p]
				}
			}
		}
		call, err := colMajor(&g, func(o *backend.GemmOperand) uintptr { return uintptr(o.Off) })
		if err != nil {
			t.Fatal(err)
		}
		if call.compute != cublas.Compute64F || call.batch != batch {
			t.Fatalf("compute %d, batch %d", call.compute, call.batch)
		}
		// cuBLAS's semantics, column major.
		got := make([]float64, len(mem))
		copy(got, mem)
		alpha, beta := math.Float64frombits(uint64(call.alpha)), math.Float64frombits(uint64(call.beta))
		cm := func(x cublas.Matrix, b, i, j int) float64 { return mem[int(x.Ptr)+b*int(x.Stride)+i+j*x.LD] }
		for b := range call.batch {
			for i := range call.m {
				for j := range call.n {
					var sum float64
					for l := range call.k {
						var x, y float64
						if call.ta == cublas.OpT {
							x = cm(call.a, b, l, i)
						} else {
							x = cm(call.a, b, i, l)
						}
						if call.tb == cublas.OpT {
							y = cm(call.b, b, j, l)
						} else {
							y = cm(call.b, b, l, j)
						}
						sum += x * y
					}
					p := int(call.c.Ptr) + b*int(call.c.Stride) + i + j*call.c.LD
					got[p] = alpha*sum + beta*mem[p]
				}
			}
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-12 {
				t.Fatalf("trial %d (%+v): element %d = %v, want %v", trial, g, i, got[i], want[i])
			}
		}
	}
}

// TestColMajorTypes checks the data and compute types and the scalars' encoding.
func TestColMajorTypes(t *testing.T) {
	for _, c := range []struct {
		dt      dtype.DType
		tf32    bool
		want    cublas.DataType
		compute cublas.ComputeType
		alpha   cublas.Scalar
	}{
		{dtype.Float16, false, cublas.R16F, cublas.Compute32F, cublas.Scalar(math.Float32bits(2))},
		{dtype.BFloat16, false, cublas.R16BF, cublas.Compute32F, cublas.Scalar(math.Float32bits(2))},
		{dtype.Float32, false, cublas.R32F, cublas.Compute32F, cublas.Scalar(math.Float32bits(2))},
		{dtype.Float32, true, cublas.R32F, cublas.Compute32FFastTF32, cublas.Scalar(math.Float32bits(2))},
		{dtype.Float64, true, cublas.R64F, cublas.Compute64F, cublas.Scalar(math.Float64bits(2))},
	} {
		g := backend.Gemm{Type: c.dt, TF32: c.tf32, M: 1, N: 1, K: 1, Batch: 1, Alpha: 2}
		call, err := colMajor(&g, func(*backend.GemmOperand) uintptr { return 0 })
		if err != nil || call.a.Type != c.want || call.c.Type != c.want || call.compute != c.compute || call.alpha != c.alpha {
			t.Errorf("%v tf32=%v: %+v, %v", c.dt, c.tf32, call, err)
		}
	}
	if _, err := colMajor(&backend.Gemm{Type: dtype.Int32}, nil); err == nil {
		t.Error("int32 mapped")
	}
}
