package gpu_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/testenv"
)

// Permute tests: ranks 1 to 8 with random permutations of odd shapes (tiled and plain
// copies, short and long tile dimensions), every element size, strided inputs,
// Metal.jl's permutedims shapes, empty arrays, against the host-computed transpose.

// pmCheck permutes a (holding xs as a view with shape/strides/off over xs) with each
// tiled kernel variant (gpu.SetPermuteVariant) and compares with the host's
// transpose.
func pmCheck[T gpu.Elem](t *testing.T, s *gpu.Stream, a *gpu.Array[T], base []T, axes []int) {
	t.Helper()
	old := gpu.SetPermuteVariant(s.Device(), 1)
	defer gpu.SetPermuteVariant(s.Device(), old)
	for _, variant := range []int{1, 2, 3} {
		gpu.SetPermuteVariant(s.Device(), variant)
		out, err := gpu.Permute(s, a, axes...)
		if err != nil {
			t.Fatalf("v%d: Permute %v of %v: %v", variant, axes, a.Shape(), err)
		}
		v, err := a.Transpose(axes...)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(out.Shape(), v.Shape()) || !out.IsContiguous() {
			t.Fatalf("v%d: Permute %v of %v: shape %v", variant, axes, a.Shape(), out.Shape())
		}
		want := scHostView(base, v.Shape(), v.Strides(), v.Offset())
		scCheckExact(t, fmt.Sprintf("%v v%d permute %v of %v (strides %v)", s.Device(), variant, axes, a.Shape(), a.Strides()), toSlice(t, out), want)
		out.Free()
	}
}

func pmRandomCase[T gpu.Elem](t *testing.T, s *gpu.Stream, rng *rand.Rand, shape []int) {
	t.Helper()
	m := 1
	for _, v := range shape {
		m *= v
	}
	xs := scGen[T](rng, m)
	a := mustArr[T](t)(gpu.FromSlice(s, xs, shape...))
	defer a.Free()
	perms := 3
	if m > 100000 && (testenv.Race || testing.Short()) {
		perms = 1
	}
	for range perms {
		pmCheck(t, s, a, xs, rng.Perm(len(shape)))
	}
	if perms == 1 {
		return
	}
	// Reversed axes, identity.
	rev := make([]int, len(shape))
	id := make([]int, len(shape))
	for i := range rev {
		rev[i] = len(shape) - 1 - i
		id[i] = i
	}
	pmCheck(t, s, a, xs, rev)
	pmCheck(t, s, a, xs, id)
}

var pmShapes = [][]int{
	{1}, {33},
	{1, 1}, {7, 5}, {64, 64}, {65, 63}, {1000, 512}, {3, 2000}, {2000, 3}, {17, 300}, {129, 16},
	{4, 1, 6}, {25, 40, 512}, {40, 9, 70}, {3, 130, 5},
	{10, 10, 10, 512}, {5, 6, 7, 8}, {2, 1, 33, 65},
	{3, 4, 5, 6, 7}, {2, 3, 1, 4, 5, 6}, {2, 3, 2, 3, 2, 3, 5}, {2, 2, 3, 1, 2, 3, 2, 5},
}

func TestPermuteRanks(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(31, 32))
		for _, shape := range pmShapes {
			pmRandomCase[float32](t, s, rng, shape)
			pmRandomCase[int64](t, s, rng, shape)
			pmRandomCase[uint8](t, s, rng, shape)
			if !testenv.Race {
				pmRandomCase[int16](t, s, rng, shape)
			}
		}
		for _, shape := range [][]int{{300, 70}, {3, 50, 40}, {70, 300}} {
			pmRandomCase[bool](t, s, rng, shape)
			pmRandomCase[float64](t, s, rng, shape)
			pmRandomCase[uint32](t, s, rng, shape)
		}
	})
}

// TestPermuteMetal runs Metal.jl's permutedims shapes (at the S size) and a large
// transpose.
func TestPermuteMetal(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(33, 34))
		cases := []struct {
			shape, axes []int
		}{
			{[]int{1000, 512}, []int{1, 0}},
			{[]int{25, 40, 512}, []int{1, 2, 0}},
			{[]int{10, 10, 10, 512}, []int{1, 0, 3, 2}},
			{[]int{1025, 2049}, []int{1, 0}},
			{[]int{1028, 2052}, []int{1, 0}},            // 16-byte accesses, partial tiles (v2)
			{[]int{20, 4, 36, 1000}, []int{3, 1, 0, 2}}, // 16-byte accesses with a batch
			{[]int{24, 40}, []int{1, 0}},                // 17..32-element tiles
		}
		for _, c := range cases {
			m := 1
			for _, v := range c.shape {
				m *= v
			}
			xs := scGen[float32](rng, m)
			a := mustArr[float32](t)(gpu.FromSlice(s, xs, c.shape...))
			pmCheck(t, s, a, xs, c.axes)
			a.Free()
		}
	})
}

func TestPermuteStrided(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(35, 36))
		shape := []int{9, 70, 33}
		xs := scGen[float32](rng, 9*70*33)
		a := mustArr[float32](t)(gpu.FromSlice(s, xs, shape...))
		defer a.Free()
		views := []func() (*gpu.Array[float32], error){
			func() (*gpu.Array[float32], error) { return a.Transpose(2, 0, 1) },
			func() (*gpu.Array[float32], error) { return a.Slice(gpu.R(1, 8, 2), gpu.R(0, gpu.End, 3)) },
			func() (*gpu.Array[float32], error) {
				return a.Slice(gpu.R(0, gpu.End, -1), gpu.R(5, 60), gpu.R(0, gpu.End, -2))
			},
			func() (*gpu.Array[float32], error) {
				v, err := a.Slice(gpu.R(3), gpu.R(), gpu.R())
				if err != nil {
					return nil, err
				}
				return v.BroadcastTo(4, 1, 70, 33)
			},
		}
		for _, mk := range views {
			v, err := mk()
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				pmCheck(t, s, v, xs, rng.Perm(v.Ndim()))
			}
		}
		// Transpose with no axes reverses them.
		out := mustArr[float32](t)(gpu.Transpose(s, a))
		vt, _ := a.Transpose()
		scCheckExact(t, "Transpose()", toSlice(t, out), scHostView(xs, vt.Shape(), vt.Strides(), 0))
		if !slices.Equal(out.Shape(), []int{33, 70, 9}) {
			t.Fatalf("Transpose() shape %v", out.Shape())
		}
	})
}

func TestPermuteEdge(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range [][]int{{0, 5}, {5, 0, 3}, {0}} {
			a := mustArr[int32](t)(gpu.Empty[int32](s, shape...))
			axes := make([]int, len(shape))
			for i := range axes {
				axes[i] = len(shape) - 1 - i
			}
			out := mustArr[int32](t)(gpu.Permute(s, a, axes...))
			if out.Size() != 0 || len(out.Shape()) != len(shape) {
				t.Fatalf("Permute of %v: %v", shape, out.Shape())
			}
		}
		a := mustArr[int32](t)(gpu.Zeros[int32](s, 2, 3, 4))
		for _, axes := range [][]int{{0, 1}, {0, 1, 1}, {0, 1, 3}, {0, 1, 2, 3}} {
			if _, err := gpu.Permute(s, a, axes...); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("Permute %v: %v", axes, err)
			}
		}
		// Negative axes.
		out := mustArr[int32](t)(gpu.Permute(s, a, -1, 0, -2))
		if !slices.Equal(out.Shape(), []int{4, 2, 3}) {
			t.Fatalf("negative axes: shape %v", out.Shape())
		}
		// 0-d.
		z := mustArr[int32](t)(gpu.Full[int32](s, 9))
		zt := mustArr[int32](t)(gpu.Permute(s, z))
		if got := toSlice(t, zt); len(got) != 1 || got[0] != 9 {
			t.Fatalf("0-d permute: %v", got)
		}
	})
}

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
