package gpu_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/testenv"
)

// concatKernelTunings are the row-copy kernels of Concatenate and their options that
// TestConcatenateKernels runs: the first kernel (pairs of rows r, r + gridDim.y; a
// block per row), the tiled one (one tile per block, two rows a tile, 8 items a
// thread, a loop over tiles, evict-first accesses), each also on axis 0.
var concatKernelTunings = []gpu.ConcatTuning{
	{Variant: 1, Rows: 2, BlocksPerSM: 32, RowsKernel: true},
	{Variant: 1, Rows: 1, BlocksPerSM: 0, RowsKernel: true, Axis0Kernel: true},
	{Variant: 2, Rows: 1, BlocksPerSM: 0, Items: 4, RowsKernel: true, Axis0Kernel: true},
	{Variant: 2, Rows: 2, BlocksPerSM: 0, Items: 8, Stream: true, RowsKernel: true},
	{Variant: 2, Rows: 2, BlocksPerSM: 1, Items: 4, RowsKernel: true, Axis0Kernel: true},
	{Variant: 2, Rows: 1, BlocksPerSM: 32, Items: 8, Stream: true, RowsKernel: true, Axis0Kernel: true},
}

// TestConcatenateKernels checks Concatenate's row-copy kernels under every tuning of
// concatKernelTunings with elements of 1, 2, 4 and 8 bytes against a plain Go
// concatenation: rows of 1 KiB and of 16 KiB and more (the tiled kernel's blocks loop
// over rows of the first, take one tile each of the others), rows whose byte lengths
// are and aren't multiples of 16 (so every vector width), column slices of wider arrays (a row pitch above the row) starting at
// an odd column (unaligned addresses), one row, 3-D arrays, nine inputs (two
// launches), 1-D inputs on axis 0, and more rows than a grid's y dimension holds
// (65535); each result into memory just freed from an array of poison, and the inputs
// unchanged.
func TestConcatenateKernels(t *testing.T) {
	rng := rand.New(rand.NewPCG(95, 96))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		orig := d.Tuning()
		defer d.SetTuning(orig)
		for i, ct := range concatKernelTunings {
			tu := orig
			tu.Concat = ct
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			name := fmt.Sprintf("v%d-r%d-b%d-i%d-cs%v", ct.Variant, ct.Rows, ct.BlocksPerSM, ct.Items, ct.Stream)
			t.Run(name, func(t *testing.T) {
				concatKernelCases[int8](t, s, rng, i)
				concatKernelCases[int16](t, s, rng, i)
				concatKernelCases[float32](t, s, rng, i)
				concatKernelCases[float64](t, s, rng, i)
			})
		}
	})
}

// concatElem are the element types of TestConcatenateKernels, one of each size.
type concatElem interface {
	~int8 | ~int16 | ~float32 | ~float64
}

// concatPart is an input of a concatKernelCases case: its shape, and the wider last
// axis it is a slice of from column from (wide 0: a contiguous array).
type concatPart struct {
	shape      []int
	wide, from int
}

// concatKernelCases runs the cases of TestConcatenateKernels for element type T; the
// tall case (more rows than 65535) only for tuning 0 and 2 with float32, and not in
// short or race runs.
func concatKernelCases[T concatElem](t *testing.T, s *gpu.Stream, rng *rand.Rand, tuning int) {
	t.Helper()
	size := int(dtype.Of[T]().Size())
	w := 1024 / size // a row of 1 KiB
	cases := []struct {
		parts []concatPart
		axis  int
	}{
		{[]concatPart{{[]int{37, w}, 0, 0}, {[]int{37, 2*w + 3}, 0, 0}}, 1},
		{[]concatPart{{[]int{9, 16 * w}, 0, 0}, {[]int{9, 17*w + 1}, 0, 0}, {[]int{9, 24 * w}, 0, 0}}, 1},
		{[]concatPart{{[]int{4, 16 * w}, 0, 0}, {[]int{4, 16*w + 8}, 16*w + 40, 16}}, 1},
		{[]concatPart{{[]int{5, w + 1}, w + 9, 1}, {[]int{5, w}, 0, 0}, {[]int{5, 3 * w}, 3*w + 2, 2}}, 1},
		{[]concatPart{{[]int{1, 4 * w}, 0, 0}, {[]int{1, 4*w + 1}, 0, 0}}, 1},
		{[]concatPart{{[]int{3, 4, w}, 0, 0}, {[]int{3, 2, w}, 0, 0}}, 1},
		{[]concatPart{{[]int{5000}, 0, 0}, {[]int{4099}, 0, 0}, {[]int{3 * w}, 0, 0}}, 0},
	}
	nine := make([]concatPart, 9)
	for k := range nine {
		nine[k] = concatPart{[]int{6, w + k}, 0, 0}
	}
	cases = append(cases, struct {
		parts []concatPart
		axis  int
	}{nine, 1})
	if size == 4 && (tuning == 0 || tuning == 2) && !testing.Short() && !testenv.Race {
		cases = append(cases, struct {
			parts []concatPart
			axis  int
		}{[]concatPart{{[]int{65539, 128}, 0, 0}, {[]int{65539, 132}, 0, 0}}, 1})
	}
	for _, c := range cases {
		what := fmt.Sprintf("%s %v axis %d", dtype.Of[T](), c.parts, c.axis)
		hosts := make([][]T, len(c.parts))
		arrs := make([]*gpu.Array[T], len(c.parts))
		var frees []*gpu.Array[T]
		for k, p := range c.parts {
			hosts[k] = randElems[T](rng, numel(p.shape))
			if p.wide == 0 {
				a := mustArr[T](t)(gpu.FromSlice(s, hosts[k], p.shape...))
				arrs[k], frees = a, append(frees, a)
				continue
			}
			// The part as columns [from, from+n) of an array with a longer last axis.
			nd := len(p.shape)
			n := p.shape[nd-1]
			big := slices.Clone(p.shape)
			big[nd-1] = p.wide
			data := randElems[T](rng, numel(big))
			for r := range numel(p.shape) / n {
				copy(data[r*p.wide+p.from:r*p.wide+p.from+n], hosts[k][r*n:(r+1)*n])
			}
			b := mustArr[T](t)(gpu.FromSlice(s, data, big...))
			frees = append(frees, b)
			rs := make([]gpu.Range, nd)
			for dd := range rs {
				rs[dd] = gpu.R()
			}
			rs[nd-1] = gpu.R(p.from, p.from+n)
			v, err := b.Slice(rs...)
			if err != nil {
				t.Fatal(err)
			}
			arrs[k] = v
		}
		// The reference: each outer index's runs of the parts, one after the other.
		shape := slices.Clone(c.parts[0].shape)
		shape[c.axis] = 0
		for _, p := range c.parts {
			shape[c.axis] += p.shape[c.axis]
		}
		outer := numel(shape[:c.axis])
		var want []T
		for o := range outer {
			for k, p := range c.parts {
				in := numel(p.shape[c.axis:])
				want = append(want, hosts[k][o*in:(o+1)*in]...)
			}
		}
		// A freed block of poison of the result's size first, for the result to reuse.
		junk, err := gpu.Full(s, T(7), shape...)
		if err != nil {
			t.Fatal(err)
		}
		junk.Free()
		out, err := gpu.Concatenate(s, arrs, c.axis)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !slices.Equal(out.Shape(), shape) {
			t.Fatalf("%s: shape %v, want %v", what, out.Shape(), shape)
		}
		got := toSlice(t, out)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: element %d (%v) = %v, want %v", what, i, unravel(i, shape), got[i], want[i])
			}
		}
		out.Free()
		for k, a := range arrs {
			c := mustArr[T](t)(gpu.Clone(s, a))
			if !slices.Equal(toSlice(t, c), hosts[k]) {
				t.Fatalf("%s: input %d changed", what, k)
			}
			c.Free()
		}
		for _, f := range frees {
			f.Free()
		}
	}
}

// randElems returns n random elements of T (never 7, the poison of
// TestConcatenateKernels): fractions for floats, the full range for integers.
func randElems[T concatElem](rng *rand.Rand, n int) []T {
	out := make([]T, n)
	for i := range out {
		for {
			var v T
			switch p := any(&v).(type) {
			case *float32:
				*p = float32(rng.NormFloat64())
			case *float64:
				*p = rng.NormFloat64()
			case *int8:
				*p = int8(rng.Uint32())
			case *int16:
				*p = int16(rng.Uint32())
			}
			if v != 7 {
				out[i] = v
				break
			}
		}
	}
	return out
}
