package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/testenv"
)

// refConcat is numpy.concatenate of host arrays along axis.
func refConcat(hs []hostND, axis int) ([]int, []float64) {
	shape := slices.Clone(hs[0].shape)
	shape[axis] = 0
	for _, h := range hs {
		shape[axis] += h.shape[axis]
	}
	out := make([]float64, numel(shape))
	for i := range out {
		idx := unravel(i, shape)
		k, p := 0, idx[axis]
		for p >= hs[k].shape[axis] {
			p -= hs[k].shape[axis]
			k++
		}
		idx[axis] = p
		out[i] = hs[k].at(idx)
	}
	return shape, out
}

func TestConcatenate(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 32))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, base := range [][]int{{7}, {3000}, {4, 5}, {3, 600}, {2, 3, 4}, {2, 1, 3, 300}, {2, 2, 3, 2, 3}} {
			for axis := range base {
				for k := 1; k <= 10; k += 3 {
					var hs []hostND
					var arrs []*gpu.Array[float32]
					var frees []func()
					for i := range k {
						shape := slices.Clone(base)
						shape[axis] = []int{base[axis], 1, 0, base[axis] + 3}[(i+axis)%4]
						h := randHost(rng, shape...)
						a, free := devArr(t, s, h, arrLayouts[(i+k+axis)%4])
						hs, arrs, frees = append(hs, h), append(arrs, a), append(frees, free)
					}
					name := fmt.Sprintf("%v/axis%d/k%d", base, axis, k)
					ax := axis
					if k%2 == 0 {
						ax -= len(base)
					}
					out, err := gpu.Concatenate(s, arrs, ax)
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					shape, want := refConcat(hs, axis)
					checkArr(t, name, out, shape, want)
					out.Free()
					for i, a := range arrs {
						c := mustArr[float32](t)(gpu.Clone(s, a))
						if got := toSlice(t, c); !slices.Equal(got, f32s(hs[i].data)) {
							t.Fatalf("%s: input %d changed", name, i)
						}
						c.Free()
						frees[i]()
					}
				}
			}
		}
		// Errors.
		a := mustArr[float32](t)(gpu.Zeros[float32](s, 2, 3))
		defer a.Free()
		b := mustArr[float32](t)(gpu.Zeros[float32](s, 3, 3))
		defer b.Free()
		for _, c := range []struct {
			arrs []*gpu.Array[float32]
			axis int
		}{{nil, 0}, {[]*gpu.Array[float32]{a, b}, 1}, {[]*gpu.Array[float32]{a}, 2}, {[]*gpu.Array[float32]{a, nil}, 0}} {
			if _, err := gpu.Concatenate(s, c.arrs, c.axis); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("Concatenate(%v, %d): %v", c.arrs, c.axis, err)
			}
		}
	})
}

func TestConcatenateSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 34))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range sizes {
			if n > 1<<17 && (testenv.Race || testing.Short()) {
				continue
			}
			for _, cols := range []int{1, 2, 130, 1024} {
				rows := max(1, n/cols)
				if n == 0 {
					rows = 0
				}
				h1, h2 := randHost(rng, rows, cols), randHost(rng, rows, cols+1)
				a, fa := devArr(t, s, h1, "contig")
				b, fb := devArr(t, s, h2, "contig")
				for axis := range 2 {
					x, hx := b, h2
					if axis == 0 {
						x, hx = a, h1
					}
					out, err := gpu.Concatenate(s, []*gpu.Array[float32]{a, x}, axis)
					if err != nil {
						t.Fatal(err)
					}
					shape, want := refConcat([]hostND{h1, hx}, axis)
					checkArr(t, fmt.Sprintf("%dx%d/axis%d", rows, cols, axis), out, shape, want)
					out.Free()
				}
				fa()
				fb()
			}
		}
	})
}

func TestStackSplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range [][]int{{5}, {3, 4}, {2, 3, 200}} {
			nd := len(shape)
			var hs []hostND
			var arrs []*gpu.Array[float32]
			for i := range 3 {
				h := randHost(rng, shape...)
				a, free := devArr(t, s, h, arrLayouts[i])
				defer free()
				hs, arrs = append(hs, h), append(arrs, a)
			}
			for axis := 0; axis <= nd; axis++ {
				out, err := gpu.Stack(s, arrs, axis)
				if err != nil {
					t.Fatal(err)
				}
				// numpy.stack is concatenate of each with a new axis.
				var ex []hostND
				for _, h := range hs {
					sh := slices.Insert(slices.Clone(h.shape), axis, 1)
					ex = append(ex, hostND{shape: sh, data: h.data})
				}
				ws, want := refConcat(ex, axis)
				checkArr(t, fmt.Sprintf("Stack %v axis %d", shape, axis), out, ws, want)
				// Split it back.
				parts, err := out.Split(3, axis)
				if err != nil {
					t.Fatal(err)
				}
				for i, p := range parts {
					if p.Buffer() != out.Buffer() {
						t.Fatal("Split copied")
					}
					sq, err := p.Squeeze(axis)
					if err != nil {
						t.Fatal(err)
					}
					checkArr(t, fmt.Sprintf("Split %v axis %d part %d", shape, axis, i), sq, shape, hs[i].data)
				}
				out.Free()
			}
		}
		a := mustArr[float32](t)(gpu.Arange[float32](s, 0, 10, 1))
		defer a.Free()
		if _, err := a.Split(3, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("Split of 10 into 3: %v", err)
		}
		for _, c := range []struct {
			n    int
			want []int
		}{{3, []int{4, 3, 3}}, {4, []int{3, 3, 2, 2}}, {12, []int{1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 0}}} {
			parts, err := a.ArraySplit(c.n, -1)
			if err != nil {
				t.Fatal(err)
			}
			var lens []int
			next := 0
			for _, p := range parts {
				lens = append(lens, p.Size())
				for _, v := range toSlice(t, p) {
					if v != float32(next) {
						t.Fatalf("ArraySplit(%d): %v", c.n, v)
					}
					next++
				}
			}
			if !slices.Equal(lens, c.want) {
				t.Fatalf("ArraySplit(%d): lengths %v, want %v", c.n, lens, c.want)
			}
		}
		parts, err := a.SplitAt(0, 3, 5, 20, -2)
		if err != nil {
			t.Fatal(err)
		}
		var lens []int
		for _, p := range parts {
			lens = append(lens, p.Size())
		}
		if !slices.Equal(lens, []int{3, 2, 5, 0, 2}) { // a[20:-2] is empty, a[-2:] two
			t.Fatalf("SplitAt(3, 5, 20, -2): lengths %v", lens)
		}
	})
}

func TestTileRepeatRollPad(t *testing.T) {
	rng := rand.New(rand.NewPCG(37, 38))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range [][]int{{0}, {5}, {3, 4}, {2, 3, 5}, {2, 1, 3, 1, 2}} {
			nd := len(shape)
			for li, layout := range arrLayouts {
				h := randHost(rng, shape...)
				a, free := devArr(t, s, h, layout)
				name := fmt.Sprintf("%v/%s", shape, layout)
				// Tile.
				for _, reps := range [][]int{{2}, {1, 3}, {2, 1, 2}, {0}} {
					out, err := gpu.Tile(s, a, reps...)
					if err != nil {
						t.Fatal(err)
					}
					n := max(len(reps), nd)
					sh := slices.Repeat([]int{1}, n)
					copy(sh[n-nd:], shape)
					r := slices.Repeat([]int{1}, n)
					copy(r[n-len(reps):], reps)
					os := make([]int, n)
					for k := range n {
						os[k] = sh[k] * r[k]
					}
					want := make([]float64, numel(os))
					hh := hostND{shape: sh, data: h.data}
					for i := range want {
						idx := unravel(i, os)
						for k := range idx {
							idx[k] %= sh[k]
						}
						want[i] = hh.at(idx)
					}
					checkArr(t, fmt.Sprintf("%s Tile%v", name, reps), out, os, want)
					out.Free()
				}
				// Repeat, flattened and on each axis.
				for axis := -1; axis < nd; axis++ {
					rep := 1 + (axis+li+2)%3
					var opts []gpu.IndexOption
					if axis >= 0 {
						opts = append(opts, gpu.OnAxis(axis))
					}
					out, err := gpu.Repeat(s, a, rep, opts...)
					if err != nil {
						t.Fatal(err)
					}
					var os []int
					var want []float64
					if axis < 0 {
						os = []int{len(h.data) * rep}
						for _, v := range h.data {
							for range rep {
								want = append(want, v)
							}
						}
					} else {
						os = slices.Clone(shape)
						os[axis] *= rep
						want = make([]float64, numel(os))
						for i := range want {
							idx := unravel(i, os)
							idx[axis] /= rep
							want[i] = h.at(idx)
						}
					}
					checkArr(t, fmt.Sprintf("%s Repeat %d axis %d", name, rep, axis), out, os, want)
					out.Free()
				}
				// Roll, flattened and on each axis.
				for axis := -1; axis < nd; axis++ {
					for _, sh := range []int{0, 1, -1, 7, -13} {
						var opts []gpu.IndexOption
						if axis >= 0 {
							opts = append(opts, gpu.OnAxis(axis))
						}
						out, err := gpu.Roll(s, a, sh, opts...)
						if err != nil {
							t.Fatal(err)
						}
						want := make([]float64, len(h.data))
						for i := range want {
							if axis < 0 {
								n := len(h.data)
								want[((i+sh)%n+n)%n] = h.data[i]
								continue
							}
							idx := unravel(i, shape)
							n := shape[axis]
							idx[axis] = ((idx[axis]+sh)%n + n) % n
							off := 0
							for k, st := range h.strides() {
								off += idx[k] * st
							}
							want[off] = h.data[i]
						}
						checkArr(t, fmt.Sprintf("%s Roll %d axis %d", name, sh, axis), out, shape, want)
						out.Free()
					}
				}
				// Pad.
				widths := make([][2]int, nd)
				for k := range widths {
					widths[k] = [2]int{k % 3, (k + li) % 2}
				}
				for _, ws := range [][][2]int{widths, {{1, 2}}} {
					out, err := gpu.Pad(s, a, ws, -7)
					if err != nil {
						t.Fatal(err)
					}
					os := slices.Clone(shape)
					w := func(k int) [2]int {
						if len(ws) == 1 {
							return ws[0]
						}
						return ws[k]
					}
					for k := range os {
						os[k] += w(k)[0] + w(k)[1]
					}
					want := make([]float64, numel(os))
					for i := range want {
						idx := unravel(i, os)
						in := true
						for k := range idx {
							idx[k] -= w(k)[0]
							in = in && idx[k] >= 0 && idx[k] < shape[k]
						}
						want[i] = -7
						if in {
							want[i] = h.at(idx)
						}
					}
					checkArr(t, fmt.Sprintf("%s Pad %v", name, ws), out, os, want)
					out.Free()
				}
				free()
			}
		}
	})
}

// TestConcatenateTunings checks Concatenate under every Tuning.Concat choice (on CUDA:
// rows paired or not, odd row counts, a block per row, one row per block of the grid's
// y, axis 0 by the kernel or by driver copies, rows by the kernel or by pitched driver
// copies, those of the CPU backend too).
func TestConcatenateTunings(t *testing.T) {
	rng := rand.New(rand.NewPCG(35, 36))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		orig := d.Tuning()
		defer d.SetTuning(orig)
		for _, ct := range []gpu.ConcatTuning{
			{Rows: 1, BlocksPerSM: 32}, {Rows: 2, BlocksPerSM: 32}, {Rows: 2, BlocksPerSM: 0},
			{Rows: 2, BlocksPerSM: 1}, {Rows: 1, BlocksPerSM: 0, Axis0Kernel: true}, {Rows: 2, BlocksPerSM: 32, Axis0Kernel: true},
			{Rows: 1, BlocksPerSM: 32, RowsKernel: true}, {Rows: 2, BlocksPerSM: 32, RowsKernel: true}, {Rows: 2, BlocksPerSM: 0, RowsKernel: true},
		} {
			tu := orig
			tu.Concat = ct
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			for _, sh := range [][2]int{{1, 70000}, {7, 1024}, {301, 2048}, {1000, 130}} {
				rows, cols := sh[0], sh[1]
				h1, h2 := randHost(rng, rows, cols), randHost(rng, rows, cols+4)
				a, fa := devArr(t, s, h1, "contig")
				b, fb := devArr(t, s, h2, "contig")
				for axis := range 2 {
					x, hx := b, h2
					if axis == 0 {
						x, hx = a, h1
					}
					out, err := gpu.Concatenate(s, []*gpu.Array[float32]{a, x, a}, axis)
					if err != nil {
						t.Fatal(err)
					}
					shape, want := refConcat([]hostND{h1, hx, h1}, axis)
					checkArr(t, fmt.Sprintf("%+v %dx%d/axis%d", ct, rows, cols, axis), out, shape, want)
					out.Free()
				}
				// One row: 1-D inputs joined on axis 0.
				f1, err := a.Reshape(rows * cols)
				if err != nil {
					t.Fatal(err)
				}
				out, err := gpu.Concatenate(s, []*gpu.Array[float32]{f1, f1}, 0)
				if err != nil {
					t.Fatal(err)
				}
				flat := hostND{shape: []int{rows * cols}, data: h1.data}
				shape, want := refConcat([]hostND{flat, flat}, 0)
				checkArr(t, fmt.Sprintf("%+v 1-D %d", ct, rows*cols), out, shape, want)
				out.Free()
				fa()
				fb()
			}
		}
	})
}

// TestConcatenateRowCopies checks the pitched copies of Concatenate (rows of 4 KiB and
// more, Tuning.Concat.RowsKernel false; any input size here) against the kernel and
// NumPy's result: odd row
// counts, row lengths that aren't multiples of 16 bytes, inputs that are column slices
// of wider arrays (a row pitch above the row), mixed with narrow and non-contiguous
// inputs, 3-D arrays joined on their last two axes, into outputs whose blocks were
// freed (poisoned on the CPU backend) just before; the inputs unchanged.
func TestConcatenateRowCopies(t *testing.T) {
	defer gpu.SetConcatMemcpyMin(4096, 1)() // inputs of every size here
	rng := rand.New(rand.NewPCG(37, 38))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		orig := d.Tuning()
		defer d.SetTuning(orig)
		for _, rowsKernel := range []bool{false, true} {
			tu := orig
			tu.Concat.RowsKernel = rowsKernel
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			for _, c := range []struct {
				shapes [][]int
				axis   int
				wide   []int // for each input, a wider last axis it is a slice of (0: none)
			}{
				{[][]int{{37, 1025}, {37, 1031}}, 1, []int{0, 0}},
				{[][]int{{37, 1025}, {37, 3}, {37, 1100}}, 1, []int{1500, 0, 1103}},
				{[][]int{{5, 1024}, {5, 2048}, {5, 1024}, {5, 1024}, {5, 1024}, {5, 1024}, {5, 1024}, {5, 1024}, {5, 1030}}, 1, make([]int, 9)},
				{[][]int{{3, 4, 1030}, {3, 2, 1030}}, 1, []int{0, 1031}},
				{[][]int{{3, 4, 1030}, {3, 4, 1100}}, 2, []int{0, 1200}},
			} {
				var hs []hostND
				var arrs []*gpu.Array[float32]
				var frees []func()
				for i, sh := range c.shapes {
					h := randHost(rng, sh...)
					hs = append(hs, h)
					if c.wide[i] == 0 {
						a, f := devArr(t, s, h, "contig")
						arrs, frees = append(arrs, a), append(frees, f)
						continue
					}
					// h as the leading columns of an array with a longer last axis.
					big := slices.Clone(sh)
					big[len(big)-1] = c.wide[i]
					hb := randHost(rng, big...)
					for j := range h.data {
						idx := unravel(j, sh)
						off := 0
						for dd := range big {
							off = off*big[dd] + idx[dd]
						}
						hb.data[off] = h.data[j]
					}
					b, f := devArr(t, s, hb, "contig")
					r := make([]gpu.Range, len(sh))
					for dd := range r {
						r[dd] = gpu.R()
					}
					r[len(r)-1] = gpu.R(0, sh[len(sh)-1])
					v, err := b.Slice(r...)
					if err != nil {
						t.Fatal(err)
					}
					arrs, frees = append(arrs, v), append(frees, f)
				}
				shape, want := refConcat(hs, c.axis)
				// A freed block of the result's size first, for the result to reuse.
				junk, err := gpu.Full(s, float32(-7), shape...)
				if err != nil {
					t.Fatal(err)
				}
				junk.Free()
				out, err := gpu.Concatenate(s, arrs, c.axis)
				if err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("rowsKernel %v %v axis %d", rowsKernel, c.shapes, c.axis)
				checkArr(t, what, out, shape, want)
				for i, a := range arrs {
					checkArr(t, fmt.Sprintf("%s: input %d", what, i), a, hs[i].shape, hs[i].data)
				}
				out.Free()
				for _, f := range frees {
					f()
				}
			}
		}
	})
}

// TestTileRepeatPadOverflow: an output shape past an int's range is an error wrapping
// ErrInvalidValue, not a wrapped-around shape (a small, wrong result).
func TestTileRepeatPadOverflow(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a, err := gpu.FromSlice(s, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		wrap := math.MaxUint64/6 + 1 // 6*wrap is 2^64+2: 2 once wrapped
		for _, c := range []struct {
			name string
			call func() (*gpu.Array[float32], error)
		}{
			{"Repeat flat", func() (*gpu.Array[float32], error) { return gpu.Repeat(s, a, int(wrap)) }},
			{"Repeat axis 1", func() (*gpu.Array[float32], error) {
				return gpu.Repeat(s, a, int(math.MaxUint64/3+1), gpu.OnAxis(1))
			}},
			{"Repeat axis 0", func() (*gpu.Array[float32], error) { return gpu.Repeat(s, a, math.MaxInt/2+1, gpu.OnAxis(0)) }},
			{"Tile", func() (*gpu.Array[float32], error) { return gpu.Tile(s, a, 1, int(math.MaxUint64/3+1)) }},
			{"Tile of a huge product", func() (*gpu.Array[float32], error) { return gpu.Tile(s, a, 1<<31, 1<<31) }},
			{"Pad", func() (*gpu.Array[float32], error) { return gpu.Pad(s, a, [][2]int{{math.MaxInt - 1, 0}}, 0) }},
			{"Pad both sides", func() (*gpu.Array[float32], error) {
				return gpu.Pad(s, a, [][2]int{{0, 0}, {math.MaxInt / 2, math.MaxInt / 2}}, 0)
			}},
			{"Concatenate of broadcast views", func() (*gpu.Array[float32], error) {
				one, err := a.Reshape(-1)
				if err != nil {
					return nil, err
				}
				one, err = one.Slice(gpu.R(0, 1))
				if err != nil {
					return nil, err
				}
				big, err := one.BroadcastTo(1 << 62)
				if err != nil {
					return nil, err
				}
				return gpu.Concatenate(s, []*gpu.Array[float32]{big, big, big, big}, 0) // 2^64: 0 once wrapped
			}},
		} {
			out, err := c.call()
			if !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "too many elements") {
				t.Errorf("%s: %v, %v; want an error wrapping ErrInvalidValue saying \"too many elements\"", c.name, out, err)
				out.Free()
			}
		}
	})
}
