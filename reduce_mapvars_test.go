package gpu_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestMapReduceUnusedScalars: scalars in Vars that the expression doesn't read are no
// kernel arguments (they used to be passed all the same, and the launch failed with "N
// arguments, want M"), wherever they sort among the names; the scalars it reads keep
// their values.
func TestMapReduceUnusedScalars(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		const n = 1000
		xh := randF32(n)
		x := mustArr[float32](t)(gpu.FromSlice(s, xh, n))
		defer x.Free()
		yh := randF32(n)
		y := mustArr[float32](t)(gpu.FromSlice(s, yh, n))
		defer y.Free()
		a, b := rand.Float64()+0.5, rand.Float64()-2
		for _, c := range []struct {
			src  string
			vars gpu.Vars
			want func(x, y float64) float64
		}{
			{"x", gpu.Vars{"x": x, "a": a}, func(x, y float64) float64 { return x }},
			{"x", gpu.Vars{"A": a, "x": x, "z": b, "y": y}, func(x, y float64) float64 { return x }},
			{"b*x", gpu.Vars{"a": a, "b": b, "c": 3.0, "x": x}, func(x, y float64) float64 { return b * x }},
			{"a*x + c", gpu.Vars{"a": a, "b": b, "c": 3.0, "x": x, "y": y}, func(x, y float64) float64 { return a*x + 3 }},
			{"maximum(y - b, 0)", gpu.Vars{"a": a, "b": b, "x": x, "y": y}, func(x, y float64) float64 { return max(y-b, 0) }},
		} {
			r, err := gpu.MapReduce[float64](s, c.src, c.vars, gpu.OpSum)
			if err != nil {
				t.Fatalf("%s %v: %v", c.src, c.vars, err)
			}
			got, err := r.At(bg)
			r.Free()
			if err != nil {
				t.Fatalf("%s %v: %v", c.src, c.vars, err)
			}
			want := 0.0
			for i := range n {
				// float32 arithmetic, as the expression computes it.
				want += float64(float32(c.want(float64(xh[i]), float64(yh[i]))))
			}
			if math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("%s with %d vars: %v, want %v", c.src, len(c.vars), got, want)
			}
		}
		if got := toSlice(t, x); !slices.Equal(got, xh) {
			t.Errorf("the operand changed")
		}
	})
}
