package gpu_test

import (
	"fmt"
	"testing"

	"github.com/go-gpu/gpu"
)

// BenchmarkPermute: the transpose of a 16384x16384 float32 array against the copy
// bandwidth of the same bytes (acceptance: within 20%; PyTorch reaches 26%), and
// Metal.jl's permutedims shapes at S (2d: (1000, 512) -> (512, 1000); 3d: (25, 40,
// 512) with axes (1, 2, 0); 4d: (10, 10, 10, 512) with axes (1, 0, 3, 2)). GB/s counts
// bytes read plus written. On CUDA also gpubench's 4d/16k row, (32, 32, 16, 16384) with
// axes (1, 0, 3, 2), and its inverse (4d-inverse/16k: (32, 32, 16384, 16), short B).
// Each case runs with the first tiled kernel and, as <case>/float32/v2 and /v3, with
// the second and third (gpu.SetPermuteVariant).
func BenchmarkPermute(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	cases := []struct {
		name        string
		shape, axes []int
	}{
		{"permutedims/2d", []int{1000, 512}, []int{1, 0}},
		{"permutedims/3d", []int{25, 40, 512}, []int{1, 2, 0}},
		{"permutedims/4d", []int{10, 10, 10, 512}, []int{1, 0, 3, 2}},
	}
	if scBenchLarge(d) {
		cases = append(cases, struct {
			name        string
			shape, axes []int
		}{"transpose/16k", []int{16384, 16384}, []int{1, 0}},
			struct {
				name        string
				shape, axes []int
			}{"permutedims/4d/16k", []int{32, 32, 16, 16384}, []int{1, 0, 3, 2}},
			struct {
				name        string
				shape, axes []int
			}{"permutedims/4d-inverse/16k", []int{32, 32, 16384, 16}, []int{1, 0, 3, 2}})
		b.Run("transpose/16k/copy", func(b *testing.B) { scCopyBench[float32](b, s, 16384, 16384) })
	}
	for _, c := range cases {
		n := 1
		for _, v := range c.shape {
			n *= v
		}
		for _, variant := range []int{1, 2, 3} {
			name := fmt.Sprintf("%s/float32", c.name)
			if variant > 1 {
				name += fmt.Sprintf("/v%d", variant)
			}
			b.Run(name, func(b *testing.B) {
				old := gpu.SetPermuteVariant(s.Device(), variant)
				defer gpu.SetPermuteVariant(s.Device(), old)
				x, err := gpu.Rand[float32](s, gpu.NewGenerator(10), c.shape...)
				if err != nil {
					b.Fatal(err)
				}
				defer x.Free()
				scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.Permute(s, x, c.axes...) })
			})
		}
	}
}
