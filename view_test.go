package gpu_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
)

// hostND is a row-major host array for reference computations.
type hostND struct {
	shape []int
	data  []float64
}

func (h hostND) strides() []int {
	st := make([]int, len(h.shape))
	s := 1
	for d := len(h.shape) - 1; d >= 0; d-- {
		st[d] = s
		s *= h.shape[d]
	}
	return st
}

// unravel returns the multi-index of flat index i in shape.
func unravel(i int, shape []int) []int {
	idx := make([]int, len(shape))
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] > 0 {
			idx[d] = i % shape[d]
			i /= shape[d]
		}
	}
	return idx
}

func (h hostND) at(idx []int) float64 {
	off := 0
	for d, st := range h.strides() {
		off += idx[d] * st
	}
	return h.data[off]
}

func numel(shape []int) int {
	n := 1
	for _, v := range shape {
		n *= v
	}
	return n
}

// randHost returns a host array of distinct random values.
func randHost(rng *rand.Rand, shape ...int) hostND {
	n := numel(shape)
	h := hostND{shape: slices.Clone(shape), data: make([]float64, n)}
	for i := range h.data {
		h.data[i] = float64(rng.IntN(1<<20)) + float64(i)/float64(n+1)
	}
	return h
}

func f32s(x []float64) []float32 {
	out := make([]float32, len(x))
	for i, v := range x {
		out[i] = float32(v)
	}
	return out
}

// checkArr compares a float32 array with the reference values, element by element.
func checkArr(t *testing.T, what string, a *gpu.Array[float32], shape []int, want []float64) {
	t.Helper()
	if !slices.Equal(a.Shape(), shape) {
		t.Fatalf("%s: shape %v, want %v", what, a.Shape(), shape)
	}
	got := toSlice(t, a)
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range got {
		if got[i] != float32(want[i]) {
			t.Fatalf("%s: element %d (%v) = %v, want %v", what, i, unravel(i, shape), got[i], float32(want[i]))
		}
	}
}

func TestSqueezeExpandDims(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		h := randHost(rng, 1, 3, 1, 4, 1)
		a := mustArr[float32](t)(gpu.FromSlice(s, f32s(h.data), h.shape...))
		defer a.Free()
		for _, c := range []struct {
			axes  []int
			shape []int
		}{
			{nil, []int{3, 4}},
			{[]int{0}, []int{3, 1, 4, 1}},
			{[]int{-1}, []int{1, 3, 1, 4}},
			{[]int{0, 2, 4}, []int{3, 4}},
			{[]int{2, -5}, []int{3, 4, 1}},
		} {
			v, err := a.Squeeze(c.axes...)
			if err != nil {
				t.Fatalf("Squeeze(%v): %v", c.axes, err)
			}
			if v.Buffer() != a.Buffer() {
				t.Fatalf("Squeeze(%v) copied", c.axes)
			}
			checkArr(t, fmt.Sprint("Squeeze", c.axes), v, c.shape, h.data)
		}
		for _, axes := range [][]int{{1}, {5}, {-6}, {0, 0}} {
			if _, err := a.Squeeze(axes...); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("Squeeze(%v): %v, want ErrInvalidValue", axes, err)
			}
		}
		one := mustArr[float32](t)(gpu.Full[float32](s, 7, 1, 1))
		defer one.Free()
		z, err := one.Squeeze()
		if err != nil || z.Ndim() != 0 {
			t.Fatalf("Squeeze of (1, 1): %v %v", z, err)
		}
		checkArr(t, "0-d squeeze", z, []int{}, []float64{7})

		b := mustArr[float32](t)(gpu.FromSlice(s, f32s(h.data[:12]), 3, 4))
		defer b.Free()
		for _, c := range []struct {
			axes  []int
			shape []int
		}{
			{[]int{0}, []int{1, 3, 4}},
			{[]int{1}, []int{3, 1, 4}},
			{[]int{2}, []int{3, 4, 1}},
			{[]int{-1}, []int{3, 4, 1}},
			{[]int{0, 2}, []int{1, 3, 1, 4}},
			{[]int{-1, 0}, []int{1, 3, 4, 1}},
			{[]int{0, 1, 2}, []int{1, 1, 1, 3, 4}},
		} {
			v, err := b.ExpandDims(c.axes...)
			if err != nil {
				t.Fatalf("ExpandDims(%v): %v", c.axes, err)
			}
			if !v.IsContiguous() {
				t.Fatalf("ExpandDims(%v) of a contiguous array isn't contiguous: strides %v", c.axes, v.Strides())
			}
			checkArr(t, fmt.Sprint("ExpandDims", c.axes), v, c.shape, h.data[:12])
		}
		for _, axes := range [][]int{nil, {3}, {-4}, {1, 1}} {
			if _, err := b.ExpandDims(axes...); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("ExpandDims(%v): %v, want ErrInvalidValue", axes, err)
			}
		}
		// A strided view keeps its strides.
		tv, _ := b.Transpose()
		v, err := tv.ExpandDims(1)
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, 12)
		for i := range 4 {
			for j := range 3 {
				want[i*3+j] = h.data[j*4+i]
			}
		}
		checkArr(t, "ExpandDims of a transpose", v, []int{4, 1, 3}, want)
		// NewAxis in Slice.
		for _, c := range []struct {
			ranges []gpu.Range
			shape  []int
			want   []float64
		}{
			{[]gpu.Range{gpu.NewAxis}, []int{1, 3, 4}, h.data[:12]},
			{[]gpu.Range{gpu.R(), gpu.NewAxis}, []int{3, 1, 4}, h.data[:12]},
			{[]gpu.Range{gpu.R(), gpu.R(), gpu.NewAxis}, []int{3, 4, 1}, h.data[:12]},
			{[]gpu.Range{gpu.NewAxis, gpu.NewAxis, gpu.R(1, 3), gpu.NewAxis}, []int{1, 1, 2, 1, 4}, h.data[4:12]},
			{[]gpu.Range{gpu.R(0, 3, 2), gpu.NewAxis, gpu.R(1, 2)}, []int{2, 1, 1}, []float64{h.data[1], h.data[9]}},
		} {
			v, err := b.Slice(c.ranges...)
			if err != nil {
				t.Fatalf("Slice(%v): %v", c.ranges, err)
			}
			checkArr(t, fmt.Sprint("Slice", c.ranges), v, c.shape, c.want)
		}
		if _, err := b.Slice(gpu.R(), gpu.NewAxis, gpu.R(), gpu.R()); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("three ranges and a new axis for 2-d: %v", err)
		}
	})
}

// flipRef returns the elements of h flipped along the axes in mask.
func flipRef(h hostND, mask []bool) []float64 {
	out := make([]float64, len(h.data))
	for i := range out {
		idx := unravel(i, h.shape)
		for d, on := range mask {
			if on {
				idx[d] = h.shape[d] - 1 - idx[d]
			}
		}
		out[i] = h.at(idx)
	}
	return out
}

func TestFlip(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range [][]int{{0}, {1}, {7}, {1000}, {3, 5}, {2, 0, 3}, {2, 3, 4}, {3, 1, 2, 5}, {2, 3, 2, 3, 2}} {
			h := randHost(rng, shape...)
			a := mustArr[float32](t)(gpu.FromSlice(s, f32s(h.data), shape...))
			nd := len(shape)
			for m := range 1 << nd {
				var axes []int
				mask := make([]bool, nd)
				for k := range nd {
					if m>>k&1 != 0 {
						axes = append(axes, k-nd*(k%2)) // odd axes as negative ones
						mask[k] = true
					}
				}
				if m == 0 {
					mask = slices.Repeat([]bool{true}, nd) // Flip() flips every axis
				}
				v, err := a.Flip(axes...)
				if err != nil {
					t.Fatalf("%v Flip(%v): %v", shape, axes, err)
				}
				if v.Buffer() != a.Buffer() {
					t.Fatal("Flip copied")
				}
				checkArr(t, fmt.Sprint(shape, " Flip", axes), v, shape, flipRef(h, mask))
				// Flipping back gives the array.
				if len(axes) > 0 {
					w, err := v.Flip(axes...)
					if err != nil {
						t.Fatal(err)
					}
					checkArr(t, "flip twice", w, shape, h.data)
				}
			}
			if _, err := a.Flip(nd); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("Flip(%d) of %d-d: %v", nd, nd, err)
			}
			if got := toSlice(t, a); !slices.Equal(got, f32s(h.data)) {
				t.Fatal("the input changed")
			}
			a.Free()
		}
	})
}

func TestReshapeViews(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		h := randHost(rng, 4, 6, 10)
		a := mustArr[float32](t)(gpu.FromSlice(s, f32s(h.data), 4, 6, 10))
		defer a.Free()
		type view struct {
			name string
			make func() (*gpu.Array[float32], []float64)
		}
		sub := func(r ...gpu.Range) func() (*gpu.Array[float32], []float64) {
			return func() (*gpu.Array[float32], []float64) {
				v, err := a.Slice(r...)
				if err != nil {
					t.Fatal(err)
				}
				c := mustArr[float32](t)(gpu.Clone(s, v))
				defer c.Free()
				got := toSlice(t, c)
				want := make([]float64, len(got))
				for i, x := range got {
					want[i] = float64(x)
				}
				return v, want
			}
		}
		for _, c := range []struct {
			v     view
			shape []int
			view  bool
		}{
			{view{"rows 1:3", sub(gpu.R(1, 3))}, []int{120}, true},
			{view{"rows 1:3", sub(gpu.R(1, 3))}, []int{2, 3, 2, 10}, true},
			{view{"cols 0:6:2", sub(gpu.R(), gpu.R(0, 6, 2))}, []int{12, 10}, true},
			{view{"cols 0:6:2", sub(gpu.R(), gpu.R(0, 6, 2))}, []int{4, 3, 5, 2}, true},
			{view{"cols 0:6:2", sub(gpu.R(), gpu.R(0, 6, 2))}, []int{4, 30}, false},
			{view{"last 0:10:2", sub(gpu.R(), gpu.R(), gpu.R(0, 10, 2))}, []int{4, 6, 5}, true},
			{view{"last 0:10:2", sub(gpu.R(), gpu.R(), gpu.R(0, 10, 2))}, []int{24, 5, 1}, true},
			{view{"last 0:10:2", sub(gpu.R(), gpu.R(), gpu.R(0, 10, 2))}, []int{120}, true},
			{view{"last 1:9", sub(gpu.R(), gpu.R(), gpu.R(1, 9))}, []int{24, 8}, true},
			{view{"last 1:9", sub(gpu.R(), gpu.R(), gpu.R(1, 9))}, []int{4, 48}, false},
			{view{"reversed", sub(gpu.Range{0, gpu.End, -1})}, []int{2, 2, 60}, true},
			{view{"reversed", sub(gpu.Range{0, gpu.End, -1})}, []int{24, 10}, false},
			{view{"reversed", sub(gpu.Range{0, gpu.End, -1})}, []int{240}, false},
			{view{"transpose", func() (*gpu.Array[float32], []float64) {
				v, _ := a.Transpose(2, 0, 1)
				want := make([]float64, 240)
				for i := range want {
					idx := unravel(i, []int{10, 4, 6})
					want[i] = h.at([]int{idx[1], idx[2], idx[0]})
				}
				return v, want
			}}, []int{10, 24}, true},
			{view{"transpose", func() (*gpu.Array[float32], []float64) {
				v, _ := a.Transpose(2, 0, 1)
				want := make([]float64, 240)
				for i := range want {
					idx := unravel(i, []int{10, 4, 6})
					want[i] = h.at([]int{idx[1], idx[2], idx[0]})
				}
				return v, want
			}}, []int{40, 6}, false},
			{view{"broadcast", func() (*gpu.Array[float32], []float64) {
				row, _ := a.Slice(gpu.R(0, 1), gpu.R(0, 1))
				row, _ = row.Reshape(10)
				v, _ := row.BroadcastTo(3, 10)
				want := append(append(slices.Clone(h.data[:10]), h.data[:10]...), h.data[:10]...)
				return v, want
			}}, []int{3, 2, 5}, true},
		} {
			v, want := c.v.make()
			name := fmt.Sprintf("%s %v to %v", c.v.name, v.Shape(), c.shape)
			m, err := v.Reshape(c.shape...)
			if c.view {
				if err != nil {
					t.Fatalf("%s: method: %v", name, err)
				}
				checkArr(t, name+" (method)", m, c.shape, want)
			} else if !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("%s: method gave %v, want an error", name, err)
			}
			f, err := gpu.Reshape(s, v, c.shape...)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if isView := f.Buffer() == a.Buffer(); isView != c.view {
				t.Fatalf("%s: view %v, want %v", name, isView, c.view)
			}
			checkArr(t, name, f, c.shape, want)
			if !c.view {
				f.Free()
			}
		}
		if _, err := gpu.Reshape(s, a, 7, -1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("reshape of 240 to (7, -1): %v", err)
		}
	})
}
