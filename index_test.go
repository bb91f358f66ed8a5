package gpu_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
)

// Gathers against a plain-Go reference (NumPy's semantics), on every device.

// normRef normalizes index k for an axis of length l by NumPy's mode rules: the
// position and whether raise mode finds it out of range (then the position is the
// nearest end, which a gather reads; a scatter skips the update).
func normRef(k int64, l int, mode gpu.IndexMode) (int, bool) {
	L := int64(l)
	switch mode {
	case gpu.ModeWrap:
		r := k % L
		if r < 0 {
			r += L
		}
		return int(r), false
	case gpu.ModeClip:
		return int(max(0, min(k, L-1))), false
	}
	if k < 0 {
		k += L
	}
	if k < 0 {
		return 0, true
	}
	if k >= L {
		return l - 1, true
	}
	return int(k), false
}

// refTake is numpy.take(h, idx, axis) (axis < 0: flattened).
func refTake(h hostND, idx []int64, ishape []int, axis int, mode gpu.IndexMode) (shape []int, out []float64, bad bool) {
	if axis < 0 {
		out = make([]float64, len(idx))
		for i, k := range idx {
			p, b := normRef(k, len(h.data), mode)
			bad = bad || b
			out[i] = h.data[p]
		}
		return slices.Clone(ishape), out, bad
	}
	shape = append(append(slices.Clone(h.shape[:axis]), ishape...), h.shape[axis+1:]...)
	out = make([]float64, numel(shape))
	ni := len(ishape)
	for i := range out {
		o := unravel(i, shape)
		ii := o[axis : axis+ni]
		iflat := 0
		for d, v := range ii {
			iflat = iflat*ishape[d] + v
		}
		p, b := normRef(idx[iflat], h.shape[axis], mode)
		bad = bad || b
		src := append(append(slices.Clone(o[:axis]), p), o[axis+ni:]...)
		out[i] = h.at(src)
	}
	return shape, out, bad
}

// layouts of a device array holding a host array's values.
var arrLayouts = []string{"contig", "strided", "transposed", "flipped"}

// devArr returns a float32 array with h's values in the given layout, and a function
// freeing it.
func devArr(t *testing.T, s *gpu.Stream, h hostND, layout string) (*gpu.Array[float32], func()) {
	t.Helper()
	nd := len(h.shape)
	switch {
	case layout == "strided" && nd > 0:
		// Every other element of an array twice as long on the last axis.
		big := slices.Clone(h.shape)
		big[nd-1] *= 2
		data := make([]float32, numel(big))
		for i, v := range h.data {
			idx := unravel(i, h.shape)
			idx[nd-1] *= 2
			off := 0
			for d := range nd {
				off = off*big[d] + idx[d]
			}
			data[off] = float32(v)
		}
		b := mustArr[float32](t)(gpu.FromSlice(s, data, big...))
		r := make([]gpu.Range, nd)
		for d := range r {
			r[d] = gpu.R()
		}
		r[nd-1] = gpu.R(0, gpu.End, 2)
		v, err := b.Slice(r...)
		if err != nil {
			t.Fatal(err)
		}
		return v, func() { b.Free() }
	case layout == "transposed" && nd > 1:
		rev := slices.Clone(h.shape)
		slices.Reverse(rev)
		data := make([]float32, len(h.data))
		for i := range data {
			idx := unravel(i, rev)
			slices.Reverse(idx)
			data[i] = float32(h.at(idx))
		}
		b := mustArr[float32](t)(gpu.FromSlice(s, data, rev...))
		v, err := b.Transpose()
		if err != nil {
			t.Fatal(err)
		}
		return v, func() { b.Free() }
	case layout == "flipped" && nd > 0:
		data := make([]float32, len(h.data))
		all := make([]bool, nd)
		for d := range all {
			all[d] = true
		}
		for i, v := range flipRef(h, all) {
			data[i] = float32(v)
		}
		b := mustArr[float32](t)(gpu.FromSlice(s, data, h.shape...))
		v, err := b.Flip()
		if err != nil {
			t.Fatal(err)
		}
		return v, func() { b.Free() }
	}
	b := mustArr[float32](t)(gpu.FromSlice(s, f32s(h.data), h.shape...))
	return b, func() { b.Free() }
}

// randIndices returns n indices for an axis of length l: in range (half of them
// negative, counting from the end, unless the mode is clip), and a fraction bad out of
// range on either side; 0, -1 and l-1 come first when n allows.
func randIndices(rng *rand.Rand, n, l int, bad float64, mode gpu.IndexMode) []int64 {
	out := make([]int64, n)
	for i := range out {
		switch {
		case l > 0 && i < 3 && mode != gpu.ModeClip:
			out[i] = []int64{0, -1, int64(l - 1)}[i]
		case rng.Float64() < bad || l == 0:
			v := int64(l + rng.IntN(3))
			if rng.IntN(2) == 0 {
				v = -v - 1
			}
			out[i] = v
		default:
			v := int64(rng.IntN(l))
			if mode != gpu.ModeClip && rng.IntN(2) == 0 {
				v -= int64(l)
			}
			out[i] = v
		}
	}
	return out
}

// devIdx uploads indices of the given shape as I: contiguous, or (broadcast) as a
// broadcast view of their first row along axis 0 (the values are then changed to
// repeat it; the returned slice holds them).
func devIdx[I gpu.IndexElem](t *testing.T, s *gpu.Stream, vals []int64, shape []int, broadcast bool) (*gpu.Array[I], []int64, func()) {
	t.Helper()
	if broadcast && len(shape) > 1 && shape[0] > 1 {
		row := numel(shape[1:])
		small := make([]I, row)
		for i := range small {
			small[i] = I(vals[i])
		}
		vals = slices.Clone(vals)
		for i := range vals {
			vals[i] = vals[i%row]
		}
		sh := append([]int{1}, shape[1:]...)
		b := mustArr[I](t)(gpu.FromSlice(s, small, sh...))
		v, err := b.BroadcastTo(shape...)
		if err != nil {
			t.Fatal(err)
		}
		return v, vals, func() { b.Free() }
	}
	data := make([]I, len(vals))
	for i, v := range vals {
		data[i] = I(v)
	}
	b := mustArr[I](t)(gpu.FromSlice(s, data, shape...))
	return b, vals, func() { b.Free() }
}

// wantIndexErr checks that err wraps ErrIndexOutOfRange and ErrInvalidValue exactly
// when bad.
func wantIndexErr(t *testing.T, what string, err error, bad bool) {
	t.Helper()
	switch {
	case bad && !(errors.Is(err, gpu.ErrIndexOutOfRange) && errors.Is(err, gpu.ErrInvalidValue)):
		t.Fatalf("%s: error %v, want ErrIndexOutOfRange", what, err)
	case !bad && err != nil:
		t.Fatalf("%s: %v", what, err)
	}
}

// readChecked reads a and checks it against want (shape and values), and the index
// error the read reports.
func readChecked(t *testing.T, what string, a *gpu.Array[float32], shape []int, want []float64, bad bool) {
	t.Helper()
	if !slices.Equal(a.Shape(), shape) {
		t.Fatalf("%s: shape %v, want %v", what, a.Shape(), shape)
	}
	got, err := a.ToSlice(bg)
	wantIndexErr(t, what+" (first read)", err, bad)
	for i := range want {
		if got[i] != float32(want[i]) {
			t.Fatalf("%s: element %d %v = %v, want %v", what, i, unravel(i, shape), got[i], want[i])
		}
	}
	if bad {
		// Reported once.
		if _, err := a.ToSlice(bg); err != nil {
			t.Fatalf("%s: second read: %v", what, err)
		}
	}
}

var indexShapes = [][]int{{1}, {7}, {1000}, {4, 5}, {3, 1, 6}, {2, 3, 2, 5}, {2, 2, 3, 2, 3}}

func TestTake(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range indexShapes {
			h := randHost(rng, shape...)
			for _, layout := range arrLayouts {
				a, free := devArr(t, s, h, layout)
				for axis := -1; axis < len(shape); axis++ {
					for k, mode := range []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip} {
						ishape := [][]int{{5}, {2, 3}, {0}, {257}}[(axis+k+len(shape))%4]
						l := len(h.data)
						if axis >= 0 {
							l = shape[axis]
						}
						bad := 0.0
						if (axis+k)%2 == 0 {
							bad = 0.2
						}
						vals := randIndices(rng, numel(ishape), l, bad, mode)
						bcast := (axis+k)%3 == 0
						name := fmt.Sprintf("%v/%s/axis%d/%v/idx%v", shape, layout, axis, mode, ishape)
						var out *gpu.Array[float32]
						var err error
						var freeI func()
						if k%2 == 0 {
							var idx *gpu.Array[int64]
							idx, vals, freeI = devIdx[int64](t, s, vals, ishape, bcast)
							out, err = take(s, a, idx, axis, mode)
						} else {
							var idx *gpu.Array[int32]
							idx, vals, freeI = devIdx[int32](t, s, vals, ishape, bcast)
							out, err = take(s, a, idx, axis, mode)
						}
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						wshape, want, isBad := refTake(h, vals, ishape, axis, mode)
						readChecked(t, name, out, wshape, want, isBad)
						out.Free()
						freeI()
					}
				}
				// The input is unchanged.
				c := mustArr[float32](t)(gpu.Clone(s, a))
				if got := toSlice(t, c); !slices.Equal(got, f32s(h.data)) {
					t.Fatalf("%v/%s: the input changed", shape, layout)
				}
				c.Free()
				free()
			}
		}
	})
}

// take calls Take with an axis (or flattened when axis < 0) and a mode.
func take[I gpu.IndexElem](s *gpu.Stream, a *gpu.Array[float32], idx *gpu.Array[I], axis int, mode gpu.IndexMode) (*gpu.Array[float32], error) {
	opts := []gpu.IndexOption{gpu.WithMode(mode)}
	if mode == gpu.ModeRaise && axis%2 == 0 {
		opts = nil // the default
	}
	if axis >= 0 {
		opts = append(opts, gpu.OnAxis(axis-a.Ndim()*(axis%2))) // odd axes as negative ones
	}
	return gpu.Take(s, a, idx, opts...)
}

func TestTakeSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range sizes {
			h := randHost(rng, n)
			a, free := devArr(t, s, h, "contig")
			for _, m := range []int{0, 1, 3, 4, 5, 1023, 1<<16 + 1} {
				if n == 0 && m > 0 {
					continue
				}
				vals := randIndices(rng, m, n, 0, gpu.ModeRaise)
				idx, _, freeI := devIdx[int](t, s, vals, []int{m}, false)
				out, err := gpu.Take(s, a, idx)
				if err != nil {
					t.Fatal(err)
				}
				shape, want, bad := refTake(h, vals, []int{m}, -1, gpu.ModeRaise)
				readChecked(t, fmt.Sprintf("n%d/m%d", n, m), out, shape, want, bad)
				out.Free()
				freeI()
			}
			free()
		}
	})
}

func TestTakeEmptyAxis(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float32](t)(gpu.Empty[float32](s, 3, 0))
		defer a.Free()
		idx := mustArr[int64](t)(gpu.FromSlice(s, []int64{0}))
		defer idx.Free()
		for _, mode := range []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip} {
			if _, err := gpu.Take(s, a, idx, gpu.OnAxis(1), gpu.WithMode(mode)); !errors.Is(err, gpu.ErrIndexOutOfRange) {
				t.Fatalf("%v: take from an empty axis: %v", mode, err)
			}
			if _, err := gpu.Take(s, a, idx, gpu.WithMode(mode)); !errors.Is(err, gpu.ErrIndexOutOfRange) {
				t.Fatalf("%v: take from an empty array: %v", mode, err)
			}
		}
		none := mustArr[int64](t)(gpu.Empty[int64](s, 0, 2))
		defer none.Free()
		out, err := gpu.Take(s, a, none, gpu.OnAxis(1))
		if err != nil || !slices.Equal(out.Shape(), []int{3, 0, 2}) {
			t.Fatalf("empty take: %v %v", out, err)
		}
		out.Free()
	})
}

// TestIndexNoElementsChecked checks the raise-mode index check of operations that move
// no element, against NumPy: numpy.take of a (2, 0) array at [5] along axis 0 raises
// (its loop over the axes before the taken one runs), along axis 1 of a (0, 2) array
// it doesn't (that loop is empty); ufunc.at (AddAt, MaximumAt, MinimumAt) checks every
// index; take_along_axis and put_along_axis don't check indices broadcast to nothing.
// In-range indices and the other modes report nothing; in a capture the check is
// refused, as every raise-mode check.
func TestIndexNoElementsChecked(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rows := mustArr[float32](t)(gpu.Empty[float32](s, 2, 0)) // rows of nothing
		defer rows.Free()
		cols := mustArr[float32](t)(gpu.Empty[float32](s, 0, 2)) // no rows
		defer cols.Free()
		vals := mustArr[float32](t)(gpu.Empty[float32](s, 1, 0))
		defer vals.Free()
		take := func(a *gpu.Array[float32], axis int) func(*gpu.Array[int64], gpu.IndexMode) error {
			return func(idx *gpu.Array[int64], mode gpu.IndexMode) error {
				r, err := gpu.Take(s, a, idx, gpu.OnAxis(axis), gpu.WithMode(mode))
				if err == nil {
					want := slices.Clone(a.Shape())
					want[axis] = 1
					if !slices.Equal(r.Shape(), want) {
						t.Errorf("Take: shape %v, want %v", r.Shape(), want)
					}
					r.Free()
				}
				return err
			}
		}
		ops := []struct {
			name   string
			checks bool // NumPy checks the indices
			call   func(idx *gpu.Array[int64], mode gpu.IndexMode) error
		}{
			{"Take", true, take(rows, 0)},
			{"Take", false, take(cols, 1)},
			{"AddAt", true, func(idx *gpu.Array[int64], mode gpu.IndexMode) error {
				return gpu.AddAt(s, rows, idx, vals, gpu.WithMode(mode))
			}},
			{"MaximumAt", true, func(idx *gpu.Array[int64], mode gpu.IndexMode) error {
				return gpu.MaximumAt(s, rows, idx, vals, gpu.WithMode(mode))
			}},
			{"MinimumAt", true, func(idx *gpu.Array[int64], mode gpu.IndexMode) error {
				v := mustArr[float32](t)(gpu.Empty[float32](s, 0, 1))
				defer v.Free()
				return gpu.MinimumAt(s, cols, idx, v, gpu.OnAxis(1), gpu.WithMode(mode))
			}},
			{"TakeAlongAxis", false, func(idx *gpu.Array[int64], mode gpu.IndexMode) error {
				i2 := mustArr[int64](t)(gpu.Reshape(s, idx, 1, 1))
				r, err := gpu.TakeAlongAxis(s, rows, i2, 0, gpu.WithMode(mode))
				if err == nil {
					r.Free()
				}
				return err
			}},
			{"PutAlongAxis", false, func(idx *gpu.Array[int64], mode gpu.IndexMode) error {
				i2 := mustArr[int64](t)(gpu.Reshape(s, idx, 1, 1))
				return gpu.PutAlongAxis(s, rows, i2, vals, 0, gpu.WithMode(mode))
			}},
		}
		for _, o := range ops {
			for _, c := range []struct {
				idx  int64
				mode gpu.IndexMode
				bad  bool
			}{{5, gpu.ModeRaise, true}, {-3, gpu.ModeRaise, true}, {1, gpu.ModeRaise, false}, {-2, gpu.ModeRaise, false},
				{5, gpu.ModeWrap, false}, {5, gpu.ModeClip, false}} {
				idx := mustArr[int64](t)(gpu.FromSlice(s, []int64{c.idx}))
				if err := o.call(idx, c.mode); err != nil {
					t.Errorf("%s at %d, %v: the call failed: %v", o.name, c.idx, c.mode, err)
				}
				err := s.Synchronize(bg)
				bad := c.bad && o.checks
				if bad != errors.Is(err, gpu.ErrIndexOutOfRange) || (!bad && err != nil) {
					t.Errorf("%s (checks %v) at %d, %v: wait = %v, want an index error: %v", o.name, o.checks, c.idx, c.mode, err, bad)
				}
				if bad && err != nil && !strings.Contains(err.Error(), o.name) {
					t.Errorf("%s: the error doesn't name it: %v", o.name, err)
				}
				idx.Free()
			}
		}
		// An empty axis: raise mode refuses at the call where NumPy's loop runs, the
		// other modes take nothing.
		e := mustArr[float32](t)(gpu.Empty[float32](s, 0, 0))
		defer e.Free()
		idx := mustArr[int64](t)(gpu.FromSlice(s, []int64{0}))
		defer idx.Free()
		if _, err := gpu.Take(s, e, idx, gpu.OnAxis(0)); !errors.Is(err, gpu.ErrIndexOutOfRange) {
			t.Errorf("Take from an empty axis with no elements to move: %v", err)
		}
		for _, mode := range []gpu.IndexMode{gpu.ModeClip, gpu.ModeWrap} {
			r, err := gpu.Take(s, e, idx, gpu.OnAxis(0), gpu.WithMode(mode))
			if err != nil || !slices.Equal(r.Shape(), []int{1, 0}) {
				t.Errorf("%v Take from an empty axis: %v, %v", mode, r, err)
			} else {
				r.Free()
			}
		}
		// In a capture the check is refused at once and the capture goes on.
		g, err := s.Capture(func() error {
			if _, err := gpu.Take(s, rows, idx, gpu.OnAxis(0)); !errors.Is(err, gpu.ErrCapturing) {
				t.Errorf("raise-mode Take of nothing in a capture: %v, want ErrCapturing", err)
			}
			r, err := gpu.Take(s, rows, idx, gpu.OnAxis(0), gpu.WithMode(gpu.ModeClip))
			if err == nil {
				r.Free()
			}
			return err
		})
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		g.Close()
		if err := s.Synchronize(bg); err != nil {
			t.Errorf("after: %v", err)
		}
	})
}

// TestIndexErrorReports checks where an out-of-range index in raise mode is reported:
// by Stream.Synchronize, Device.Synchronize, a read of the result or of a later result
// on the same stream, once; and not by a read of an array written before it.
func TestIndexErrorReports(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3, 4}))
		defer a.Free()
		good := mustArr[int32](t)(gpu.FromSlice(s, []int32{0, -1}))
		defer good.Free()
		bad := mustArr[int32](t)(gpu.FromSlice(s, []int32{1, 4, -2}))
		defer bad.Free()
		before := mustArr[float32](t)(gpu.Take(s, a, good))
		defer before.Free()
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		for _, how := range []string{"stream", "device", "result", "later"} {
			r, err := gpu.Take(s, a, bad)
			if err != nil {
				t.Fatalf("%s: the call itself failed: %v", how, err)
			}
			// A read of an array written before the take reports nothing.
			if _, err := before.ToSlice(bg); err != nil {
				t.Fatalf("%s: read of an earlier result: %v", how, err)
			}
			switch how {
			case "stream":
				err = s.Synchronize(bg)
			case "device":
				err = d.Synchronize(bg)
			case "result":
				_, err = r.At(bg, 1)
			case "later":
				sum := mustArr[float32](t)(gpu.Add(s, r, r))
				_, err = sum.ToSlice(bg)
				sum.Free()
			}
			if !errors.Is(err, gpu.ErrIndexOutOfRange) || !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("%s: %v, want ErrIndexOutOfRange", how, err)
			}
			if err := s.Synchronize(bg); err != nil {
				t.Fatalf("%s: reported twice: %v", how, err)
			}
			got := toSlice(t, r)
			if !slices.Equal(got, []float32{2, 4, 3}) {
				t.Fatalf("%s: clamped result %v", how, got)
			}
			r.Free()
		}
	})
}

// TestIndexBadArgs checks that a nil or mismatched argument is an error wrapping
// ErrInvalidValue and a freed one an error wrapping ErrClosed, before anything runs.
func TestIndexBadArgs(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float32](t)(gpu.Zeros[float32](s, 2, 3))
		defer a.Free()
		v := mustArr[float32](t)(gpu.Ones[float32](s, 3))
		defer v.Free()
		idx := mustArr[int64](t)(gpu.FromSlice(s, []int64{0, 1}))
		defer idx.Free()
		idx2 := mustArr[int32](t)(gpu.Zeros[int32](s, 2, 1))
		defer idx2.Free()
		mask := mustArr[bool](t)(gpu.Zeros[bool](s, 3, 2))
		defer mask.Free()
		freed := mustArr[float32](t)(gpu.Zeros[float32](s, 2, 3))
		freed.Free()
		freedI := mustArr[int64](t)(gpu.Zeros[int64](s, 2))
		freedI.Free()
		var nilA *gpu.Array[float32]
		var nilI *gpu.Array[int64]
		row, _ := v.Reshape(1, 3)
		bc, _ := row.BroadcastTo(2, 3)
		x2 := mustArr[int64](t)(gpu.Zeros[int64](s, 2, 2))
		defer x2.Free()
		b := mustArr[float32](t)(gpu.Zeros[float32](s, 3, 3))
		defer b.Free()
		for i, err := range []error{
			e1(gpu.Take(s, nilA, idx)),
			e1(gpu.Take(s, a, nilI)),
			e1(gpu.Take(s, a, idx, gpu.OnAxis(2))),
			e1(gpu.Take(s, a, idx, gpu.WithMode(7))),
			e1(gpu.Take(s, a, idx, nil)),
			e1(gpu.Take(s, a, idx, gpu.Bins(3))),                // an option Take doesn't take
			e1(gpu.TakeAlongAxis(s, a, idx2, 0, gpu.OnAxis(1))), // the axis is an argument
			gpu.Put(s, a, idx, v, gpu.Deterministic()),          // no deterministic Put (yet)
			e1(gpu.TakeAlongAxis(s, a, idx, 0)),                 // 1-d indices for 2-d
			e1(gpu.TakeAlongAxis(s, b, idx2, 1)),                // (2, 1) against (3, 3)
			gpu.Put(s, bc, idx, v),                              // a broadcast destination
			gpu.Put(s, a, idx, v, gpu.OnAxis(0)),                // numpy.put has no axis
			gpu.AddAt(s, a, idx, b),                             // values (3, 3) for updates (2, 3)
			gpu.AddAt(s, a, idx, v, gpu.OnAxis(-3)),
			gpu.MaximumAt(s, nilA, idx, v),
			gpu.PutMask(s, a, mask, v),         // mask (3, 2) for (2, 3)
			gpu.PutAlongAxis(s, a, idx2, b, 1), // values don't broadcast
			e1(gpu.Bincount(bg, s, x2, 0)),     // 2-d
			e1(gpu.Bincount(bg, s, idx, -1)),   // minlength
			e1(gpu.Bincount(bg, s, idx, 0, gpu.Bins(-1))),
			e1(gpu.BincountWeights(bg, s, idx, v, 0)), // weights of another shape
			e1(gpu.Stack(s, []*gpu.Array[float32]{a, b}, 0)),
			e1(gpu.Tile(s, a, -1)),
			e1(gpu.Repeat(s, a, -1)),
			e1(gpu.Roll(s, a, 1, gpu.OnAxis(5))),
			e1(gpu.Pad(s, a, [][2]int{{1, -1}}, 0)),
			e1(gpu.Pad(s, a, [][2]int{{1, 1}, {1, 1}, {1, 1}}, 0)),
		} {
			if !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("case %d: %v, want an error wrapping ErrInvalidValue", i, err)
			}
		}
		// A freed argument: ErrClosed, as for every operation.
		for i, err := range []error{
			e1(gpu.Take(s, freed, idx)),
			e1(gpu.Take(s, a, freedI)),
			gpu.Put(s, a, idx, freed),
			gpu.AddAt(s, a, freedI, v),
			e1(gpu.Bincount(bg, s, freedI, 0)),
			e1(gpu.Concatenate(s, []*gpu.Array[float32]{a, freed}, 0)),
			e1(gpu.Add(s, a, freed)),
		} {
			if !errors.Is(err, gpu.ErrClosed) {
				t.Errorf("freed case %d: %v, want an error wrapping ErrClosed", i, err)
			}
		}
		// Nothing ran: a is still zero.
		if got := toSlice(t, a); !slices.Equal(got, make([]float32, 6)) {
			t.Fatalf("a changed: %v", got)
		}
	})
}

// TestIndexErrorReadAfterSettle: a raise-mode Take on s, seen complete by s.Query
// (which reports nothing), then read by an operation on another stream: that stream's
// tracking drops the completed write from the allocation (track.go's settle), yet a
// host read of the result still reports the index error, since the Take is the last
// write to it. The read of what the other stream computed from it reports nothing
// (other streams don't), and the error is reported once.
func TestIndexErrorReadAfterSettle(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		s2, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		a := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3, 4}))
		defer a.Free()
		bad := mustArr[int32](t)(gpu.FromSlice(s, []int32{1, 4, -2}))
		defer bad.Free()
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		for _, read := range []string{"ToSlice", "At", "CopyToHost"} {
			r, err := gpu.Take(s, a, bad)
			if err != nil {
				t.Fatal(err)
			}
			for {
				done, err := s.Query()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
				runtime.Gosched()
			}
			sum := mustArr[float32](t)(gpu.Add(s2, r, r)) // on s2: settles r's write
			if got, err := sum.ToSlice(bg); err != nil || !slices.Equal(got, []float32{4, 8, 6}) {
				t.Fatalf("%s: the sum on another stream: %v, %v (want [4 8 6], no error)", read, got, err)
			}
			switch read {
			case "ToSlice":
				_, err = r.ToSlice(bg)
			case "At":
				_, err = r.At(bg, 0)
			case "CopyToHost":
				err = r.CopyToHost(bg, make([]float32, 3))
			}
			if !errors.Is(err, gpu.ErrIndexOutOfRange) || !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("%s of the result after another stream read it: %v, want ErrIndexOutOfRange", read, err)
			}
			if err := s.Synchronize(bg); err != nil {
				t.Fatalf("%s: reported twice: %v", read, err)
			}
			sum.Free()
			r.Free()
		}
	})
}
