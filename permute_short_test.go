package gpu_test

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestPermuteShortSides runs the permutations whose tile has a short side (the third
// kernel's, variant 3) with each variant against the host: short sides of 2 to 32,
// powers of two or not, along A (the output's innermost) and along B (the input's),
// with batches, every element size, and views whose element 0 is not 16-byte aligned
// (narrower vectors); the input must be unchanged.
func TestPermuteShortSides(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(37, 38))
		cases := []struct {
			shape, axes []int
		}{
			{[]int{3, 2, 16, 1000}, []int{1, 0, 3, 2}}, // gpubench's 4d, smaller
			{[]int{3, 2, 1000, 16}, []int{1, 0, 3, 2}}, // its inverse: short B
			{[]int{2, 10, 1030}, []int{0, 2, 1}},       // A of 10, a partial B tile
			{[]int{2, 1030, 10}, []int{0, 2, 1}},       // B of 10
			{[]int{25, 40, 300}, []int{1, 2, 0}},       // A of 25
			{[]int{3, 5000}, []int{1, 0}},              // A of 3
			{[]int{5000, 3}, []int{1, 0}},              // B of 3
			{[]int{2, 3000}, []int{1, 0}},              // A of 2
			{[]int{8, 700}, []int{1, 0}},               // A of 8
			{[]int{4, 1100}, []int{1, 0}},              // A of 4
			{[]int{32, 300}, []int{1, 0}},              // A of 32
			{[]int{300, 32}, []int{1, 0}},              // B of 32
			{[]int{17, 20, 30}, []int{0, 2, 1}},        // both short
			{[]int{7, 16, 300}, []int{2, 0, 1}},        // a dimension between B and A
		}
		for _, c := range cases {
			pmShortCase[float32](t, s, rng, c.shape, c.axes)
			pmShortCase[float64](t, s, rng, c.shape, c.axes)
			pmShortCase[uint8](t, s, rng, c.shape, c.axes)
			pmShortCase[int16](t, s, rng, c.shape, c.axes)
		}
	})
}

// pmShortCase permutes a fresh array of the shape, and a view of it that starts one
// element in (misaligned for vectors), with each variant; the input must not change.
func pmShortCase[T gpu.Elem](t *testing.T, s *gpu.Stream, rng *rand.Rand, shape, axes []int) {
	t.Helper()
	m := 1
	for _, v := range shape {
		m *= v
	}
	xs := scGen[T](rng, m)
	a := mustArr[T](t)(gpu.FromSlice(s, xs, shape...))
	defer a.Free()
	pmCheck(t, s, a, xs, axes)
	// The same permutation of the view a[..., 1:] (element 0 one element in).
	idx := make([]gpu.Range, len(shape))
	for i := range idx {
		idx[i] = gpu.R()
	}
	idx[len(shape)-1] = gpu.R(1, gpu.End)
	v, err := a.Slice(idx...)
	if err != nil {
		t.Fatal(err)
	}
	pmCheck(t, s, v, xs, axes)
	if got := toSlice(t, a); !slices.Equal(got, xs) {
		t.Fatalf("Permute %v of %v changed its input", axes, shape)
	}
}
