//go:build unix

package gpu_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestElementwisePDL runs the ten graph operations (graph_bench_test.go) on CUDA with
// Tuning.ElementwisePDL on, eagerly and as a graph launched three times, against the
// same with it off: the same values, bit for bit (the kernels compute the same; only
// their launch overlaps). It skips without a CUDA device of compute capability 9.0+.
func TestElementwisePDL(t *testing.T) {
	d := cudaDev(t)
	if d.Info().ComputeMajor < 9 {
		t.Skipf("programmatic dependent launch needs compute capability 9.0, %v has %d.%d", d, d.Info().ComputeMajor, d.Info().ComputeMinor)
	}
	bg := context.Background()
	init := make([]float32, 512*1000)
	rng := rand.New(rand.NewPCG(22, 5))
	for i := range init {
		init[i] = 0.25 + rng.Float32()
	}
	run := func(pdl, graph bool) ([]float32, []float32) {
		t.Helper()
		tu := d.Tuning()
		tu.ElementwisePDL = pdl
		old, err := d.SetTuning(tu)
		if err != nil {
			t.Fatal(err)
		}
		defer d.SetTuning(old)
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		x, err := gpu.FromSlice(s, init)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		y, err := gpu.Full(s, float32(math.NaN()), len(init))
		if err != nil {
			t.Fatal(err)
		}
		defer y.Free()
		if graph {
			g, err := s.Capture(func() error { return runTenOps(s, x, y) })
			if err != nil {
				t.Fatal(err)
			}
			defer g.Close()
			for range 3 {
				if err := g.Launch(s); err != nil {
					t.Fatal(err)
				}
			}
		} else {
			for range 3 {
				if err := runTenOps(s, x, y); err != nil {
					t.Fatal(err)
				}
			}
		}
		xs, err := x.ToSlice(bg)
		if err != nil {
			t.Fatal(err)
		}
		ys, err := y.ToSlice(bg)
		if err != nil {
			t.Fatal(err)
		}
		return xs, ys
	}
	wx, wy := run(false, false)
	if wx[0] == init[0] {
		t.Fatal("x unchanged: the operations did not run")
	}
	for _, graph := range []bool{false, true} {
		gx, gy := run(true, graph)
		for i := range wx {
			if math.Float32bits(gx[i]) != math.Float32bits(wx[i]) || math.Float32bits(gy[i]) != math.Float32bits(wy[i]) {
				t.Fatalf("graph %v: element %d: x %v y %v with programmatic dependent launch, %v %v without", graph, i, gx[i], gy[i], wx[i], wy[i])
			}
		}
	}
}
