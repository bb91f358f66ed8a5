package gpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestHalfSumSimt runs the CUDA path of half-precision sums (16-byte loads of 8 halves,
// Unroll loads folded into fewer accumulator sets, the cascade, the split and fused
// passes; kernel.PlanReduce with the tuning's ReduceHalfUnroll and ReduceHalfAccs) on the PTX
// simulator (simdev): Sum[float32] and Mean[float32] against a float64 reference.
func TestHalfSumSimt(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulator is slow")
	}
	// bfloat16 only: the interpreter's cvt does not convert float16 (the kernels of the
	// two formats differ only in that conversion).
	testHalfSumSimt[gpu.BFloat16](t)
}

func testHalfSumSimt[T gpu.HalfFloat](t *testing.T) {
	_, s := simStream(t)
	// Shapes whose loops run several unrolled iterations and a cascade: a split
	// whole-array sum, long rows, a long axis 0 of 8-element vectors, short ones.
	for _, c := range []struct {
		shape []int
		axes  []int
	}{
		{[]int{1<<17 + 8*37}, nil}, {[]int{2, 65536}, []int{1}}, {[]int{1024, 64}, []int{0}},
		{[]int{37, 48}, []int{0}}, {[]int{256, 96}, []int{0}}, {[]int{64, 520}, []int{1}},
	} {
		n := 1
		for _, v := range c.shape {
			n *= v
		}
		r := rand.New(rand.NewPCG(uint64(n), 10))
		xs := halfRand[T](r, n, false)
		x := mustArr[T](t)(gpu.FromSlice(s, xs, c.shape...))
		var opts []gpu.ReduceOption
		if c.axes != nil {
			opts = append(opts, gpu.Axes(c.axes...))
		}
		key := fmt.Sprintf("%s %v axes %v", typeName[T](), c.shape, c.axes)
		outs, groups := reduceGroups(c.shape, c.axes)
		sum := toSlice(t, mustArr[float32](t)(gpu.Sum[float32](s, x, opts...)))
		mean := toSlice(t, mustArr[float32](t)(gpu.Mean[float32](s, x, opts...)))
		if len(sum) != outs || len(mean) != outs {
			t.Fatalf("%s: %d sums, %d means, want %d", key, len(sum), len(mean), outs)
		}
		for o, g := range groups {
			var s64, abs float64
			for _, i := range g {
				v := hv(xs[i])
				s64 += v
				abs += math.Abs(v)
			}
			acc := abs * math.Ldexp(float64(math.Ilogb(float64(len(g)))+18), -24)
			if e := math.Abs(float64(sum[o]) - s64); e > acc {
				t.Fatalf("%s: Sum[float32] output %d = %v, want %v within %g", key, o, sum[o], s64, acc)
			}
			if e := math.Abs(float64(mean[o]) - s64/float64(len(g))); e > acc/float64(len(g))*2 {
				t.Fatalf("%s: Mean[float32] output %d = %v, want %v", key, o, mean[o], s64/float64(len(g)))
			}
		}
		x.Free()
	}
}
