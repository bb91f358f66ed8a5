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
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/half"
	"github.com/go-gpu/gpu/internal/testenv"
)

// Scatters against a plain-Go reference with NumPy's sequential semantics. Float values
// are small integers where the order of a sum could matter, so that every order gives
// the same exact sum.

type scatterOp int

const (
	opAdd scatterOp = iota
	opMax
	opMin
)

func (o scatterOp) String() string { return []string{"AddAt", "MaximumAt", "MinimumAt"}[o] }

func (o scatterOp) apply(a, b float64) float64 {
	switch o {
	case opAdd:
		return a + b
	case opMax:
		if math.IsNaN(a) || math.IsNaN(b) {
			return math.NaN()
		}
		return math.Max(a, b)
	}
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.NaN()
	}
	return math.Min(a, b)
}

// refScatterAt is numpy.<op>.at(h, idx, vals) on axis (vals already broadcast to the
// updates' shape, row-major); bad says whether raise mode finds an index out of range
// (whose update is skipped).
func refScatterAt(h hostND, idx []int64, ishape []int, vals []float64, axis int, op scatterOp, mode gpu.IndexMode) (out []float64, bad bool) {
	out = slices.Clone(h.data)
	shape := append(append(slices.Clone(h.shape[:axis]), ishape...), h.shape[axis+1:]...)
	ni := len(ishape)
	st := h.strides()
	for i := range numel(shape) {
		o := unravel(i, shape)
		iflat := 0
		for d, v := range o[axis : axis+ni] {
			iflat = iflat*ishape[d] + v
		}
		p, b := normRef(idx[iflat], h.shape[axis], mode)
		bad = bad || b
		if b {
			continue // recorded and skipped
		}
		dst := append(append(slices.Clone(o[:axis]), p), o[axis+ni:]...)
		off := 0
		for d, v := range dst {
			off += v * st[d]
		}
		out[off] = op.apply(out[off], vals[i])
	}
	return out, bad
}

// smallInts returns a host array of small integer values (exact float sums in any
// order).
func smallHost(rng *rand.Rand, shape ...int) hostND {
	h := hostND{shape: slices.Clone(shape), data: make([]float64, numel(shape))}
	for i := range h.data {
		h.data[i] = float64(rng.IntN(64) - 32)
	}
	return h
}

func scatterCall[I gpu.IndexElem](s *gpu.Stream, op scatterOp, a *gpu.Array[float32], idx *gpu.Array[I], v *gpu.Array[float32], opts ...gpu.IndexOption) error {
	switch op {
	case opAdd:
		return gpu.AddAt(s, a, idx, v, opts...)
	case opMax:
		return gpu.MaximumAt(s, a, idx, v, opts...)
	}
	return gpu.MinimumAt(s, a, idx, v, opts...)
}

func TestScatterAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for si, shape := range indexShapes {
			for li, layout := range arrLayouts {
				for axis := range shape {
					for _, op := range []scatterOp{opAdd, opMax, opMin} {
						k := si + li + axis + int(op)
						mode := []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip}[k%3]
						ishape := [][]int{{5}, {2, 3}, {0}, {300}, {1}}[k%5]
						h := smallHost(rng, shape...)
						a, free := devArr(t, s, h, layout)
						bad := 0.0
						if k%2 == 0 {
							bad = 0.1
						}
						vals := randIndices(rng, numel(ishape), shape[axis], bad, mode)
						ushape := append(append(slices.Clone(shape[:axis]), ishape...), shape[axis+1:]...)
						// Values: full, or broadcast from a row.
						vh := smallHost(rng, ushape...)
						var v *gpu.Array[float32]
						if k%4 == 1 && len(ushape) > 0 {
							row := smallHost(rng, ushape[len(ushape)-1])
							for i := range vh.data {
								vh.data[i] = row.data[i%len(row.data)]
							}
							v = mustArr[float32](t)(gpu.FromSlice(s, f32s(row.data)))
						} else {
							v = mustArr[float32](t)(gpu.FromSlice(s, f32s(vh.data), ushape...))
						}
						name := fmt.Sprintf("%v/%s/axis%d/%v/%v/idx%v", shape, layout, axis, op, mode, ishape)
						opts := []gpu.IndexOption{gpu.WithMode(mode), gpu.OnAxis(axis)}
						if axis == 0 && k%2 == 0 {
							opts = opts[:1] // axis 0 is the default
						}
						var err error
						var freeI func()
						if k%2 == 0 {
							var idx *gpu.Array[int64]
							idx, vals, freeI = devIdx[int64](t, s, vals, ishape, k%3 == 0)
							err = scatterCall(s, op, a, idx, v, opts...)
						} else {
							var idx *gpu.Array[int32]
							idx, vals, freeI = devIdx[int32](t, s, vals, ishape, k%3 == 0)
							err = scatterCall(s, op, a, idx, v, opts...)
						}
						if err != nil {
							t.Fatalf("%s: %v", name, err)
						}
						want, isBad := refScatterAt(h, vals, ishape, vh.data, axis, op, mode)
						c := mustArr[float32](t)(gpu.Clone(s, a))
						// The clone was made on s after the scatter: its read reports
						// the scatter's out-of-range index.
						got, err := c.ToSlice(bg)
						wantIndexErr(t, name, err, isBad)
						for i := range want {
							if got[i] != float32(want[i]) {
								t.Fatalf("%s: element %d %v = %v, want %v", name, i, unravel(i, shape), got[i], want[i])
							}
						}
						c.Free()
						v.Free()
						freeI()
						free()
					}
				}
			}
		}
	})
}

// TestScatterBins checks sums into few and many targets at sizes where the GPU
// aggregates in warps and shared memory, for several element types, against exact
// references (integers, and floats holding small integers).
func TestScatterBins(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, c := range []struct{ n, bins int }{{1 << 14, 1}, {1<<16 + 3, 8}, {1 << 16, 1000}, {1 << 17, 1 << 13}, {5000, 1 << 18}} {
			idx := make([]int64, c.n)
			for i := range idx {
				idx[i] = int64(rng.IntN(c.bins))
				if i%7 == 0 {
					idx[i] -= int64(c.bins) // from the end
				}
			}
			ia := mustArr[int64](t)(gpu.FromSlice(s, idx))
			name := fmt.Sprintf("n%d/bins%d", c.n, c.bins)
			t.Run(name+"/int32", func(t *testing.T) { scatterBinsT[int32](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/float32", func(t *testing.T) { scatterBinsT[float32](t, s, rng, ia, idx, c.bins) })
			if c.n > 1<<14 && (d.Backend() == "cpu" && testenv.Race || testing.Short()) {
				ia.Free()
				continue
			}
			t.Run(name+"/uint8", func(t *testing.T) { scatterBinsT[uint8](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/int16", func(t *testing.T) { scatterBinsT[int16](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/int64", func(t *testing.T) { scatterBinsT[int64](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/uint64", func(t *testing.T) { scatterBinsT[uint64](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/float64", func(t *testing.T) { scatterBinsT[float64](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/bool", func(t *testing.T) { scatterBinsT[bool](t, s, rng, ia, idx, c.bins) })
			ia.Free()
		}
	})
}

// elemFromInt converts a small integer to T (bool: odd).
func elemFromInt[T gpu.Elem](v int) T {
	var z T
	switch p := any(&z).(type) {
	case *bool:
		*p = v%2 != 0
	case *int8:
		*p = int8(v)
	case *uint8:
		*p = uint8(v)
	case *int16:
		*p = int16(v)
	case *uint16:
		*p = uint16(v)
	case *int32:
		*p = int32(v)
	case *uint32:
		*p = uint32(v)
	case *int64:
		*p = int64(v)
	case *uint64:
		*p = uint64(v)
	case *int:
		*p = v
	case *float32:
		*p = float32(v)
	case *float64:
		*p = float64(v)
	}
	return z
}

func scatterBinsT[T gpu.Elem](t *testing.T, s *gpu.Stream, rng *rand.Rand, ia *gpu.Array[int64], idx []int64, bins int) {
	n := len(idx)
	init := make([]T, bins)
	vals := make([]T, n)
	for i := range init {
		init[i] = elemFromInt[T](rng.IntN(200) - 100)
	}
	for i := range vals {
		vals[i] = elemFromInt[T](rng.IntN(7) - 3)
	}
	v := mustArr[T](t)(gpu.FromSlice(s, vals))
	defer v.Free()
	for _, op := range []scatterOp{opAdd, opMax, opMin} {
		a := mustArr[T](t)(gpu.FromSlice(s, init))
		var err error
		switch op {
		case opAdd:
			err = gpu.AddAt(s, a, ia, v)
		case opMax:
			err = gpu.MaximumAt(s, a, ia, v)
		default:
			err = gpu.MinimumAt(s, a, ia, v)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := slices.Clone(init)
		for i, k := range idx {
			p := int((k + int64(bins)) % int64(bins))
			want[p] = combineRef(op, want[p], vals[i])
		}
		got := toSlice(t, a)
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%v: element %d = %v, want %v", op, i, got[i], want[i])
			}
		}
		a.Free()
	}
	if got := toSlice(t, v); !slices.Equal(got, vals) {
		t.Fatal("the values changed")
	}
}

// combineRef is op on T as NumPy computes it (integers wrap; bool add is or).
func combineRef[T gpu.Elem](op scatterOp, a, b T) T {
	switch x := any(a).(type) {
	case bool:
		y := any(b).(bool)
		if op == opMin {
			return any(x && y).(T)
		}
		return any(x || y).(T)
	case float32:
		y := any(b).(float32)
		return any(float32(op.apply(float64(x), float64(y)))).(T)
	case float64:
		y := any(b).(float64)
		return any(op.apply(x, y)).(T)
	}
	switch op {
	case opAdd:
		return addT(a, b)
	case opMax:
		if lessT(a, b) {
			return b
		}
		return a
	}
	if lessT(b, a) {
		return b
	}
	return a
}

func addT[T gpu.Elem](a, b T) T {
	switch x := any(a).(type) {
	case int8:
		return any(x + any(b).(int8)).(T)
	case uint8:
		return any(x + any(b).(uint8)).(T)
	case int16:
		return any(x + any(b).(int16)).(T)
	case uint16:
		return any(x + any(b).(uint16)).(T)
	case int32:
		return any(x + any(b).(int32)).(T)
	case uint32:
		return any(x + any(b).(uint32)).(T)
	case int64:
		return any(x + any(b).(int64)).(T)
	case uint64:
		return any(x + any(b).(uint64)).(T)
	case int:
		return any(x + any(b).(int)).(T)
	}
	panic("addT")
}

func lessT[T gpu.Elem](a, b T) bool {
	switch x := any(a).(type) {
	case int8:
		return x < any(b).(int8)
	case uint8:
		return x < any(b).(uint8)
	case int16:
		return x < any(b).(int16)
	case uint16:
		return x < any(b).(uint16)
	case int32:
		return x < any(b).(int32)
	case uint32:
		return x < any(b).(uint32)
	case int64:
		return x < any(b).(int64)
	case uint64:
		return x < any(b).(uint64)
	case int:
		return x < any(b).(int)
	}
	panic("lessT")
}

// TestScatterNaN checks that NaN propagates through MaximumAt and MinimumAt, from the
// values and from the destination, that -Inf and +Inf order as numbers and -0 below +0
// in either order (the operator table's rules), and that a NaN result is the canonical
// NaN, whatever NaN came in (the NaN policy), on every device and on the CUDA path of
// the simulator.
func TestScatterNaN(t *testing.T) {
	nan := math.Float32frombits(0xffc00123)
	inf := float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	run := func(t *testing.T, s *gpu.Stream) {
		for _, op := range []scatterOp{opMax, opMin} {
			init := []float32{nan, 1, -2, 0, -inf, inf, 5, -5, negZero, 0}
			idx := []int32{0, 1, 1, 2, 3, 4, 5, 6, 6, 7, 0, 8, 9}
			vals := []float32{3, nan, 2, -3, -1, 7, -inf, inf, -7, 8, -9, 0, negZero}
			a := mustArr[float32](t)(gpu.FromSlice(s, init))
			ia := mustArr[int32](t)(gpu.FromSlice(s, idx))
			v := mustArr[float32](t)(gpu.FromSlice(s, vals))
			var err error
			if op == opMax {
				err = gpu.MaximumAt(s, a, ia, v)
			} else {
				err = gpu.MinimumAt(s, a, ia, v)
			}
			if err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(init)
			for i, k := range idx {
				want[k] = float32(op.apply(float64(want[k]), float64(vals[i])))
			}
			got := toSlice(t, a)
			for i := range want {
				if got[i] != want[i] && !(got[i] != got[i] && want[i] != want[i]) {
					t.Fatalf("%v: element %d = %v, want %v", op, i, got[i], want[i])
				}
				if gb := math.Float32bits(got[i]); got[i] != got[i] && gb != 0x7fffffff {
					t.Errorf("%v: element %d = NaN %#x, want the canonical %#x", op, i, gb, 0x7fffffff)
				}
			}
			if wz := op == opMin; math.Signbit(float64(got[8])) != wz || math.Signbit(float64(got[9])) != wz {
				t.Errorf("%v of -0 and +0 = %v, %v, want -0 for the minimum, +0 for the maximum (either order)", op, got[8], got[9])
			}
			a.Free()
			ia.Free()
			v.Free()
		}
	}
	forDevicesAndSim(t, false, run)
}

// refPut is numpy.put: the last of duplicate indices wins; an index out of range in
// raise mode is reported and its update skipped.
func refPut(h hostND, idx []int64, vals []float64, mode gpu.IndexMode) (out []float64, bad bool) {
	out = slices.Clone(h.data)
	for i, k := range idx {
		p, b := normRef(k, len(out), mode)
		bad = bad || b
		if b {
			continue
		}
		out[p] = vals[i%len(vals)]
	}
	return out, bad
}

func TestPut(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		cuda := d.Backend() == "cuda"
		for si, shape := range indexShapes {
			for li, layout := range arrLayouts {
				k := si + li
				mode := []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip}[k%3]
				h := randHost(rng, shape...)
				a, free := devArr(t, s, h, layout)
				ishape := [][]int{{5}, {2, 3}, {0}, {40}}[k%4]
				m := numel(ishape)
				bad := 0.0
				if k%2 == 0 {
					bad = 0.1
				}
				idx := randIndices(rng, m, len(h.data), bad, mode)
				// Distinct targets on CUDA, where duplicates' winner is unspecified.
				if cuda {
					seen := map[int]bool{}
					for i := range idx {
						p, _ := normRef(idx[i], len(h.data), mode)
						if seen[p] {
							idx[i] = int64(len(h.data) + 5) // out of range
							if mode == gpu.ModeWrap || mode == gpu.ModeClip {
								idx[i] = -1
								if mode == gpu.ModeClip {
									idx[i] = 0
								}
								if p2, _ := normRef(idx[i], len(h.data), mode); seen[p2] {
									idx = idx[:i]
									break
								}
								p, _ = normRef(idx[i], len(h.data), mode)
							}
						}
						seen[p] = true
					}
					if len(idx) < m {
						ishape, m = []int{len(idx)}, len(idx)
					}
				}
				nv := []int{m, 1, 3}[k%3]
				if m == 0 {
					nv = 1
				}
				vh := randHost(rng, nv)
				v := mustArr[float32](t)(gpu.FromSlice(s, f32s(vh.data)))
				ia, vals, freeI := devIdx[int64](t, s, idx, ishape, false)
				name := fmt.Sprintf("%v/%s/%v/idx%v/vals%d", shape, layout, mode, ishape, nv)
				if err := gpu.Put(s, a, ia, v, gpu.WithMode(mode)); err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				want, isBad := refPut(h, vals, vh.data, mode)
				c := mustArr[float32](t)(gpu.Clone(s, a))
				got, err := c.ToSlice(bg)
				wantIndexErr(t, name, err, isBad)
				for i := range want {
					if got[i] != float32(want[i]) {
						t.Fatalf("%s: element %d = %v, want %v", name, i, got[i], want[i])
					}
				}
				c.Free()
				v.Free()
				freeI()
				free()
			}
		}
	})
}

func TestPutDuplicates(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[int32](t)(gpu.Zeros[int32](s, 4))
		defer a.Free()
		ia := mustArr[int32](t)(gpu.FromSlice(s, []int32{1, 1, 1, 3}))
		defer ia.Free()
		v := mustArr[int32](t)(gpu.FromSlice(s, []int32{5, 6, 7, 8}))
		defer v.Free()
		if err := gpu.Put(s, a, ia, v); err != nil {
			t.Fatal(err)
		}
		got := toSlice(t, a)
		if got[0] != 0 || got[2] != 0 || got[3] != 8 || got[1] < 5 || got[1] > 7 {
			t.Fatalf("put with duplicates: %v", got)
		}
		if d.Backend() == "cpu" && got[1] != 7 {
			t.Fatalf("the CPU backend's put: %v, want the last value (7)", got)
		}
	})
}

// refAlong is numpy.put_along_axis (put) or take_along_axis.
func refAlong(h hostND, idx []int64, ishape []int, vals []float64, axis int, mode gpu.IndexMode, put bool) (shape []int, out []float64, bad bool) {
	nd := len(h.shape)
	shape = make([]int, nd)
	for d := range nd {
		switch {
		case d == axis:
			shape[d] = ishape[d]
		case ishape[d] == 1:
			shape[d] = h.shape[d]
		default:
			shape[d] = ishape[d]
		}
	}
	ist := hostND{shape: ishape}.strides()
	st := h.strides()
	if put {
		out = slices.Clone(h.data)
	} else {
		out = make([]float64, numel(shape))
	}
	for i := range numel(shape) {
		o := unravel(i, shape)
		io := 0
		for d := range nd {
			if ishape[d] > 1 {
				io += o[d] * ist[d]
			}
		}
		p, b := normRef(idx[io], h.shape[axis], mode)
		bad = bad || b
		if b && put {
			continue // a scatter skips the update; a gather reads the nearest end
		}
		off := 0
		for d := range nd {
			v := o[d]
			if d == axis {
				v = p
			} else if h.shape[d] == 1 {
				v = 0
			}
			off += v * st[d]
		}
		if put {
			out[off] = vals[i%len(vals)]
		} else {
			out[i] = h.data[off]
		}
	}
	return shape, out, bad
}

func TestAlongAxis(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for si, shape := range indexShapes {
			for li, layout := range arrLayouts[:3] {
				for axis := range shape {
					k := si + li + axis
					mode := []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip}[k%3]
					h := randHost(rng, shape...)
					a, free := devArr(t, s, h, layout)
					// Indices: a's shape with another length on axis, some axes 1
					// (broadcast against a).
					ishape := slices.Clone(shape)
					ishape[axis] = []int{1, 3, 7}[k%3]
					for d := range ishape {
						if d != axis && (d+k)%3 == 0 {
							ishape[d] = 1
						}
					}
					bad := 0.0
					if k%2 == 0 {
						bad = 0.1
					}
					idx := randIndices(rng, numel(ishape), shape[axis], bad, mode)
					name := fmt.Sprintf("%v/%s/axis%d/%v/idx%v", shape, layout, axis, mode, ishape)
					ia, _, freeI := devIdx[int32](t, s, idx, ishape, false)
					axArg := axis
					if k%2 == 1 {
						axArg -= len(shape)
					}
					out, err := gpu.TakeAlongAxis(s, a, ia, axArg, gpu.WithMode(mode))
					if err != nil {
						t.Fatalf("%s: take: %v", name, err)
					}
					wshape, want, isBad := refAlong(h, idx, ishape, nil, axis, mode, false)
					readChecked(t, name+"/take", out, wshape, want, isBad)
					out.Free()
					// Put: distinct targets along the axis on CUDA (one of duplicates
					// wins there): a permutation of a prefix of the axis.
					if d.Backend() == "cuda" && ishape[axis] > 1 {
						// The index at each position is its own coordinate along the
						// axis (the flat position's, not the last axis's).
						inner := 1
						for _, n := range ishape[axis+1:] {
							inner *= n
						}
						for i := range idx {
							idx[i] = int64(i / inner % ishape[axis] % shape[axis])
						}
						if ishape[axis] > shape[axis] {
							freeI()
							free()
							continue
						}
						freeI()
						ia, _, freeI = devIdx[int32](t, s, idx, ishape, false)
					}
					vh := randHost(rng, wshape...)
					v := mustArr[float32](t)(gpu.FromSlice(s, f32s(vh.data), wshape...))
					if err := gpu.PutAlongAxis(s, a, ia, v, axArg, gpu.WithMode(mode)); err != nil {
						t.Fatalf("%s: put: %v", name, err)
					}
					_, want, isBad = refAlong(h, idx, ishape, vh.data, axis, mode, true)
					c := mustArr[float32](t)(gpu.Clone(s, a))
					got, err := c.ToSlice(bg)
					wantIndexErr(t, name+"/put", err, isBad)
					for i := range want {
						if got[i] != float32(want[i]) {
							t.Fatalf("%s: put: element %d %v = %v, want %v", name, i, unravel(i, shape), got[i], want[i])
						}
					}
					c.Free()
					v.Free()
					freeI()
					free()
				}
			}
		}
	})
}

func TestPutMask(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for k, shape := range indexShapes {
			h := randHost(rng, shape...)
			a, free := devArr(t, s, h, arrLayouts[k%4])
			mask := make([]bool, len(h.data))
			for i := range mask {
				mask[i] = rng.IntN(3) == 0
			}
			m := mustArr[bool](t)(gpu.FromSlice(s, mask, shape...))
			nv := []int{len(h.data), 1, 3, 0}[k%4]
			vh := randHost(rng, nv)
			v := mustArr[float32](t)(gpu.FromSlice(s, f32s(vh.data)))
			if err := gpu.PutMask(s, a, m, v); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(h.data)
			for i := range want {
				if mask[i] && nv > 0 {
					want[i] = vh.data[i%nv]
				}
			}
			c := mustArr[float32](t)(gpu.Clone(s, a))
			checkArr(t, fmt.Sprintf("%v/vals%d", shape, nv), c, shape, want)
			c.Free()
			m.Free()
			v.Free()
			free()
		}
	})
}

func TestBincount(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, c := range []struct{ n, hi, minlength int }{{0, 1, 0}, {0, 1, 5}, {1, 1, 0}, {1000, 8, 0}, {1000, 8, 20}, {1<<16 + 1, 1000, 0}, {1 << 15, 1 << 15, 0}} {
			x := make([]int32, c.n)
			w := make([]float32, c.n)
			for i := range x {
				x[i] = int32(rng.IntN(c.hi))
				w[i] = float32(rng.IntN(9) - 4)
			}
			xa := mustArr[int32](t)(gpu.FromSlice(s, x))
			wa := mustArr[float32](t)(gpu.FromSlice(s, w))
			length := c.minlength
			for _, v := range x {
				length = max(length, int(v)+1)
			}
			want := make([]int64, length)
			wantW := make([]float64, length)
			for i, v := range x {
				want[v]++
				wantW[v] += float64(w[i])
			}
			name := fmt.Sprintf("n%d/hi%d/min%d", c.n, c.hi, c.minlength)
			got, err := gpu.Bincount(bg, s, xa, c.minlength)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if g := toSlice(t, got); !slices.Equal(g, want) {
				t.Fatalf("%s: %v, want %v", name, g[:min(len(g), 10)], want[:min(len(want), 10)])
			}
			got.Free()
			for _, det := range []bool{false, true} {
				var opts []gpu.IndexOption
				if det {
					opts = append(opts, gpu.Deterministic())
				}
				gw, err := gpu.BincountWeights(bg, s, xa, wa, c.minlength, opts...)
				if err != nil {
					t.Fatalf("%s: weights: %v", name, err)
				}
				if g := toSlice(t, gw); !slices.Equal(g, wantW) {
					t.Fatalf("%s: weights (deterministic %v): %v, want %v", name, det, g[:min(len(g), 10)], wantW[:min(len(wantW), 10)])
				}
				gw.Free()
			}
			// Bins: no wait, exactly that many bins.
			gb, err := gpu.Bincount(bg, s, xa, 0, gpu.Bins(length+2))
			if err != nil {
				t.Fatalf("%s: Bins: %v", name, err)
			}
			if g := toSlice(t, gb); !slices.Equal(g, append(slices.Clone(want), 0, 0)) {
				t.Fatalf("%s: Bins: %v", name, g[:min(len(g), 10)])
			}
			gb.Free()
			xa.Free()
			wa.Free()
		}
		// Negative values: an error at once, or from the next wait with Bins.
		xa := mustArr[int64](t)(gpu.FromSlice(s, []int64{1, 2, -1, 0}))
		defer xa.Free()
		if _, err := gpu.Bincount(bg, s, xa, 0); !errors.Is(err, gpu.ErrIndexOutOfRange) {
			t.Fatalf("negative value: %v", err)
		}
		gb, err := gpu.Bincount(bg, s, xa, 0, gpu.Bins(2))
		if err != nil {
			t.Fatal(err)
		}
		defer gb.Free()
		if _, err := gb.ToSlice(bg); !errors.Is(err, gpu.ErrIndexOutOfRange) {
			t.Fatalf("values outside Bins(2): %v", err)
		}
		// The values outside the bins (-1 and 2) are skipped, not counted at an end.
		if got := toSlice(t, gb); !slices.Equal(got, []int64{1, 1}) {
			t.Errorf("Bincount of %v with Bins(2) = %v, want [1 1]", []int64{1, 2, -1, 0}, got)
		}
	})
}

// TestDeterministicAddAt checks the fixed-point sums: the same bits on every run and on
// both backends, within a tight bound of the exact sum, with Inf and NaN as IEEE
// addition gives them, a NaN sum the canonical NaN (a NaN update, +Inf and -Inf, and a
// destination that holds a NaN with a payload).
func TestDeterministicAddAt(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	const n, bins = 1 << 17, 64
	idx := make([]int64, n)
	vals := make([]float32, n)
	for i := range idx {
		idx[i] = int64(rng.IntN(bins))
		vals[i] = float32(rng.NormFloat64() * math.Exp(rng.NormFloat64()*4))
	}
	// Specials in a few bins.
	for i, v := range []float32{float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))} {
		idx[i] = int64([]int{60, 61, 62, 63, 63}[i])
		vals[i] = v
	}
	init := make([]float32, bins)
	for i := range init {
		init[i] = float32(rng.NormFloat64())
	}
	init[59] = float32(math.Copysign(0, -1))    // no updates: stays -0
	init[57] = math.Float32frombits(0xffc00123) // a NaN with a payload, updated
	for i := range idx {
		if idx[i] == 59 {
			idx[i] = 58
		}
	}
	var results [][]float32
	for _, d := range devices(t) {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			a := mustArr[float32](t)(gpu.FromSlice(s, init))
			ia := mustArr[int64](t)(gpu.FromSlice(s, idx))
			v := mustArr[float32](t)(gpu.FromSlice(s, vals))
			if err := gpu.AddAt(s, a, ia, v, gpu.Deterministic()); err != nil {
				t.Fatal(err)
			}
			results = append(results, toSlice(t, a))
			a.Free()
			ia.Free()
			v.Free()
		}
		s.Close()
	}
	exact := make([]float64, bins)
	for i := range exact {
		exact[i] = float64(init[i])
	}
	for i, k := range idx {
		exact[k] += float64(vals[i])
	}
	for r, got := range results {
		for i := range got {
			if math.Float32bits(got[i]) != math.Float32bits(results[0][i]) {
				t.Fatalf("run %d: element %d = %v (%#x), run 0 %v (%#x)", r, i, got[i], math.Float32bits(got[i]), results[0][i], math.Float32bits(results[0][i]))
			}
		}
	}
	got := results[0]
	for i := range got {
		w := float32(exact[i])
		switch {
		case i == 59:
			if math.Float32bits(got[i]) != math.Float32bits(init[59]) {
				t.Fatalf("untouched -0 became %v", got[i])
			}
		case math.IsNaN(exact[i]):
			if math.Float32bits(got[i]) != 0x7fffffff {
				t.Fatalf("element %d = %#x, want the canonical NaN 0x7fffffff", i, math.Float32bits(got[i]))
			}
		case math.IsInf(exact[i], 0):
			if float64(got[i]) != exact[i] {
				t.Fatalf("element %d = %v, want %v", i, got[i], exact[i])
			}
		case got[i] != w:
			// One rounding of a sum exact to far below float32's precision: only a
			// tie could go the other way.
			if math.Abs(float64(got[i])-exact[i]) > math.Abs(exact[i])*1e-7 {
				t.Fatalf("element %d = %v, want %v (exact %v)", i, got[i], w, exact[i])
			}
		}
	}
}

// TestDeterministicAddAtNaN: a deterministic float sum that is NaN is the canonical NaN
// (the package's NaN policy), whether a NaN update, +Inf and -Inf, or a destination
// that held a NaN with a payload made it, on every device and on the CUDA path of the
// PTX simulator. (The simulator's float64 arithmetic gives the canonical NaN; the
// H200's passes an operand's payload on, which FixedFinish's PTX replaces.)
func TestDeterministicAddAtNaN(t *testing.T) { nanSumsEverywhere(t, gpu.Deterministic()) }

// TestAddAtNaN is TestDeterministicAddAtNaN for the atomic sums (no Deterministic): a
// NaN sum is the canonical NaN there too. The GPU's float64 atomic add passes a NaN's
// payload on (on an H100 this failed with 0xfff8000000000123 and, for +Inf + -Inf,
// 0xfff8000000000000 before the scatter wrote the canonical NaN after such an add).
func TestAddAtNaN(t *testing.T) { nanSumsEverywhere(t) }

// nanSumsEverywhere runs nanSums of float32 and float64 with opts on every device and
// the simulator.
func nanSumsEverywhere(t *testing.T, opts ...gpu.IndexOption) {
	run := func(t *testing.T, s *gpu.Stream) {
		t.Run("float32", func(t *testing.T) { nanSums[float32](t, s, opts...) })
		t.Run("float64", func(t *testing.T) { nanSums[float64](t, s, opts...) })
	}
	forDevicesAndSim(t, false, run)
}

// nanSums adds NaNs with payloads, +Inf and -Inf, and values into a destination
// holding a NaN with a payload, and checks each NaN sum is the canonical NaN.
func nanSums[T float32 | float64](t *testing.T, s *gpu.Stream, opts ...gpu.IndexOption) {
	payloads := nanPayloads[T]()
	for _, nb := range payloads {
		nan := nanFromBits[T](nb)
		inf := T(math.Inf(1))
		a := mustArr[T](t)(gpu.FromSlice(s, []T{1, nan, 2, 3, 4}))
		ia := mustArr[int64](t)(gpu.FromSlice(s, []int64{0, 1, 2, 2, 3, 0}))
		v := mustArr[T](t)(gpu.FromSlice(s, []T{nan, 1.5, inf, -inf, 2, 0.25}))
		if err := gpu.AddAt(s, a, ia, v, opts...); err != nil {
			t.Fatal(err)
		}
		got := toSlice(t, a)
		want := []uint64{canonNaN[T](), canonNaN[T](), canonNaN[T](), nanBits(T(5)), nanBits(T(4))}
		for i, g := range got {
			if nanBits(g) != want[i] {
				t.Errorf("NaN %#x: element %d = %#x, want %#x", nb, i, nanBits(g), want[i])
			}
		}
		a.Free()
		ia.Free()
		v.Free()
	}
}

// TestScatterViewsAndAliases checks the deterministic sum into a view that isn't
// contiguous (through a copy) and updates whose values are the destination itself.
func TestScatterViewsAndAliases(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 26))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		h := smallHost(rng, 6, 5)
		for _, det := range []bool{false, true} {
			// a is the transpose of a (5, 6) array: (6, 5) with strides (1, 6).
			a, free := devArr(t, s, h, "transposed")
			idx := []int64{4, 0, 4, -1, 2}
			ia := mustArr[int64](t)(gpu.FromSlice(s, idx))
			vh := smallHost(rng, 5, 6)
			v := mustArr[float32](t)(gpu.FromSlice(s, f32s(vh.data), 5, 6))
			var opts []gpu.IndexOption
			if det {
				opts = append(opts, gpu.Deterministic())
			}
			// Along axis 1 of (6, 5): updates (6, 5), the values a transposed (5, 6).
			vt, _ := v.Transpose()
			if err := gpu.AddAt(s, a, ia, vt, append(opts, gpu.OnAxis(1))...); err != nil {
				t.Fatal(err)
			}
			vth := hostND{shape: []int{6, 5}, data: make([]float64, 30)}
			for i := range 6 {
				for j := range 5 {
					vth.data[i*5+j] = vh.data[j*6+i]
				}
			}
			want, _ := refScatterAt(h, idx, []int{5}, vth.data, 1, opAdd, gpu.ModeRaise)
			c := mustArr[float32](t)(gpu.Clone(s, a))
			checkArr(t, fmt.Sprintf("deterministic %v, transposed destination", det), c, []int{6, 5}, want)
			c.Free()
			// The values are a's own first row: read before any update.
			row, _ := a.Slice(gpu.R(0, 1))
			row, _ = row.Reshape(5)
			rowVals := slices.Clone(toSlice(t, a)[:5])
			ia2 := mustArr[int64](t)(gpu.FromSlice(s, []int64{0, 0, 0, 0, 0}))
			if err := gpu.AddAt(s, row, ia2, row, opts...); err != nil {
				t.Fatal(err)
			}
			got := toSlice(t, row)
			sum := float32(0)
			for _, x := range rowVals {
				sum += x
			}
			if got[0] != rowVals[0]+sum {
				t.Fatalf("deterministic %v: aliased values: %v, want %v", det, got[0], rowVals[0]+sum)
			}
			ia2.Free()
			ia.Free()
			v.Free()
			free()
		}
	})
}

// TestScatterSizes runs AddAt and Put over the size ladder (updates and destination).
func TestScatterSizes(t *testing.T) {
	rng := rand.New(rand.NewPCG(27, 28))
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range sizes {
			if n > 1<<17 && (testenv.Race || testing.Short()) {
				continue
			}
			bins := n/3 + 1
			h := smallHost(rng, bins)
			a, free := devArr(t, s, h, "contig")
			idx := randIndices(rng, n, bins, 0, gpu.ModeRaise)
			vh := smallHost(rng, n)
			ia, _, freeI := devIdx[int32](t, s, idx, []int{n}, false)
			v := mustArr[float32](t)(gpu.FromSlice(s, f32s(vh.data)))
			if err := gpu.AddAt(s, a, ia, v); err != nil {
				t.Fatal(err)
			}
			want, _ := refScatterAt(h, idx, []int{n}, vh.data, 0, opAdd, gpu.ModeRaise)
			checkArr(t, fmt.Sprintf("AddAt n%d", n), a, []int{bins}, want)
			// Put at distinct positions (a permutation's prefix).
			m := min(n, bins)
			perm := rng.Perm(bins)[:m]
			pidx := make([]int64, m)
			for i, p := range perm {
				pidx[i] = int64(p)
			}
			pa, _, freeP := devIdx[int64](t, s, pidx, []int{m}, false)
			pv, _ := v.Slice(gpu.R(0, m))
			if err := gpu.Put(s, a, pa, pv); err != nil {
				t.Fatal(err)
			}
			for i, p := range perm {
				want[p] = vh.data[i]
			}
			checkArr(t, fmt.Sprintf("Put n%d", n), a, []int{bins}, want)
			freeP()
			freeI()
			v.Free()
			free()
		}
	})
}

// TestScatterSkipsBadIndices checks that in raise mode every scatter reports an index
// out of range and skips its update, rather than writing it at the nearest end of the
// axis (which changed an element the indices don't name: TestPut on the H200), and
// that a few updates into a view with a negative stride combine only with each other
// (the GPU's warp aggregation once let a lane without an update into the group of
// the targets -1 to -32: MaximumAt gave 0 for -25, TestScatterAt/[7]/flipped).
func TestScatterSkipsBadIndices(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		base := []float32{5, -7, 3}
		idx := []int64{1, 3, -4, 7} // for an axis of 3: 1 is in range, the rest are not
		vals := []float32{10, 20, 30, 40}
		type scatterFn func(a *gpu.Array[float32], ia *gpu.Array[int64], v *gpu.Array[float32]) error
		for _, c := range []struct {
			name string
			f    scatterFn
			want []float32
		}{
			{"Put", func(a *gpu.Array[float32], ia *gpu.Array[int64], v *gpu.Array[float32]) error {
				return gpu.Put(s, a, ia, v)
			}, []float32{5, 10, 3}},
			{"PutAlongAxis", func(a *gpu.Array[float32], ia *gpu.Array[int64], v *gpu.Array[float32]) error {
				return gpu.PutAlongAxis(s, a, ia, v, 0)
			}, []float32{5, 10, 3}},
			{"AddAt", func(a *gpu.Array[float32], ia *gpu.Array[int64], v *gpu.Array[float32]) error {
				return gpu.AddAt(s, a, ia, v)
			}, []float32{5, 3, 3}},
			{"MaximumAt", func(a *gpu.Array[float32], ia *gpu.Array[int64], v *gpu.Array[float32]) error {
				return gpu.MaximumAt(s, a, ia, v)
			}, []float32{5, 10, 3}},
			{"MinimumAt", func(a *gpu.Array[float32], ia *gpu.Array[int64], v *gpu.Array[float32]) error {
				return gpu.MinimumAt(s, a, ia, v)
			}, []float32{5, -7, 3}},
		} {
			a := mustArr[float32](t)(gpu.FromSlice(s, base))
			ia := mustArr[int64](t)(gpu.FromSlice(s, idx))
			v := mustArr[float32](t)(gpu.FromSlice(s, vals))
			if err := c.f(a, ia, v); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			got, err := a.ToSlice(bg)
			wantIndexErr(t, c.name, err, true)
			if !slices.Equal(got, c.want) {
				t.Errorf("%s of %v at %v into %v = %v, want %v (out-of-range updates skipped)", c.name, vals, idx, base, got, c.want)
			}
			a.Free()
			ia.Free()
			v.Free()
		}
		// A reversed view (stride -1): element i of the view is memory element 6-i, so
		// the targets' offsets are 0 to -6.
		h := []float32{-30, -31, -32, -33, -34, -35, -36}
		rev := make([]float32, len(h))
		for i, x := range h {
			rev[len(h)-1-i] = x
		}
		for _, op := range []scatterOp{opMax, opMin, opAdd} {
			b := mustArr[float32](t)(gpu.FromSlice(s, rev))
			a, err := b.Flip()
			if err != nil {
				t.Fatal(err)
			}
			ix := []int64{4, 6, 1, 5, 2} // distinct targets, from the lane holding the update
			vs := []float32{-25, -20, -40, -33, -1}
			ia := mustArr[int64](t)(gpu.FromSlice(s, ix))
			v := mustArr[float32](t)(gpu.FromSlice(s, vs))
			if err := scatterCall(s, op, a, ia, v, gpu.WithMode(gpu.ModeClip)); err != nil {
				t.Fatal(err)
			}
			want := slices.Clone(h)
			for i, k := range ix {
				want[k] = float32(op.apply(float64(want[k]), float64(vs[i])))
			}
			got := toSlice(t, a)
			if !slices.Equal(got, want) {
				t.Errorf("%v at %v of %v into a reversed view of %v = %v, want %v", op, ix, vs, h, got, want)
			}
			b.Free()
			ia.Free()
			v.Free()
		}
	})
}

// TestScatterAtReversedTypes runs MaximumAt, MinimumAt and AddAt in every element type
// (the half types included) into a reversed view of 40 elements (offsets 0 to -39,
// which the GPU's old key of a lane without an update, -1-lane, matched) from a few
// updates, of negative values where the type has them, against the sequential
// reference; the values are small integers, exact in every type.
func TestScatterAtReversedTypes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		t.Run("int8", func(t *testing.T) { scatterReversedT[int8](t, s) })
		t.Run("uint8", func(t *testing.T) { scatterReversedT[uint8](t, s) })
		t.Run("int16", func(t *testing.T) { scatterReversedT[int16](t, s) })
		t.Run("uint16", func(t *testing.T) { scatterReversedT[uint16](t, s) })
		t.Run("int32", func(t *testing.T) { scatterReversedT[int32](t, s) })
		t.Run("uint32", func(t *testing.T) { scatterReversedT[uint32](t, s) })
		t.Run("int64", func(t *testing.T) { scatterReversedT[int64](t, s) })
		t.Run("uint64", func(t *testing.T) { scatterReversedT[uint64](t, s) })
		t.Run("float32", func(t *testing.T) { scatterReversedT[float32](t, s) })
		t.Run("float64", func(t *testing.T) { scatterReversedT[float64](t, s) })
		t.Run("float16", func(t *testing.T) { scatterReversedT[gpu.Float16](t, s) })
		t.Run("bfloat16", func(t *testing.T) { scatterReversedT[gpu.BFloat16](t, s) })
	})
}

// smallElem converts a small integer to T: negative ones wrap in unsigned types.
func smallElem[T gpu.Elem](v int) T {
	var z T
	switch p := any(&z).(type) {
	case *gpu.Float16:
		*p = half.NewFloat16(float64(v))
	case *gpu.BFloat16:
		*p = half.NewBFloat16(float64(v))
	default:
		return elemFromInt[T](v)
	}
	return z
}

// smallVal is smallElem's inverse for the reference (unsigned types as they are).
func smallVal[T gpu.Elem](x T) float64 {
	switch v := any(x).(type) {
	case gpu.Float16:
		return v.Float64()
	case gpu.BFloat16:
		return v.Float64()
	case int8:
		return float64(v)
	case uint8:
		return float64(v)
	case int16:
		return float64(v)
	case uint16:
		return float64(v)
	case int32:
		return float64(v)
	case uint32:
		return float64(v)
	case int64:
		return float64(v)
	case uint64:
		return float64(v)
	case float32:
		return float64(v)
	case float64:
		return v
	}
	panic("smallVal")
}

func scatterReversedT[T gpu.Elem](t *testing.T, s *gpu.Stream) {
	const n = 40
	signed := smallVal(smallElem[T](-1)) < 0
	base := make([]T, n) // memory order; the view is reversed
	for i := range base {
		v := -30 - i%9
		if !signed {
			v = 60 + i%9
		}
		base[i] = smallElem[T](v)
	}
	ix := []int64{4, 6, 1, 5, 2, 4, 33} // lanes 0 to 6 of a warp; targets at offsets -4 ...
	vs := []int{-25, -20, -40, -33, -1, -50, -26}
	if !signed {
		for i := range vs {
			vs[i] += 90
		}
	}
	vals := make([]T, len(vs))
	for i, v := range vs {
		vals[i] = smallElem[T](v)
	}
	for _, op := range []scatterOp{opMax, opMin, opAdd} {
		b := mustArr[T](t)(gpu.FromSlice(s, base))
		a, err := b.Flip()
		if err != nil {
			t.Fatal(err)
		}
		ia := mustArr[int64](t)(gpu.FromSlice(s, ix))
		v := mustArr[T](t)(gpu.FromSlice(s, vals))
		switch op {
		case opAdd:
			err = gpu.AddAt(s, a, ia, v)
		case opMax:
			err = gpu.MaximumAt(s, a, ia, v)
		default:
			err = gpu.MinimumAt(s, a, ia, v)
		}
		if err != nil {
			t.Fatal(err)
		}
		want := make([]float64, n) // in the view's order
		for i := range want {
			want[i] = smallVal(base[n-1-i])
		}
		for i, k := range ix {
			want[k] = op.apply(want[k], smallVal(vals[i]))
		}
		got := toSlice(t, a)
		for i := range want {
			if smallVal(got[i]) != want[i] {
				t.Fatalf("%v of %v at %v into a reversed view: element %d = %v, want %v", op, vs, ix, i, got[i], want[i])
			}
		}
		b.Free()
		ia.Free()
		v.Free()
	}
}

// bincountDevices returns a fresh CPU device (a fault would be sticky: the failures
// below must not leave one) and the CUDA device where there is one.
func bincountDevices(t *testing.T) []*gpu.Device {
	cpuDev, _ := freshCPU(t)
	out := []*gpu.Device{cpuDev}
	for _, d := range devices(t) {
		if d.Backend() == "cuda" {
			out = append(out, d)
		}
	}
	return out
}

// TestBincountBinsChecked: a number of bins no array can have (2^61 int64s: 2^64
// bytes) is refused as Empty refuses it (ErrInvalidValue), one that doesn't fit in
// memory with ErrOutOfMemory, before anything runs; the device stays usable (the
// overflowed size once made a 0-byte array of 2^61 bins whose scatter faulted).
func TestBincountBinsChecked(t *testing.T) {
	for _, d := range bincountDevices(t) {
		t.Run(d.Backend(), func(t *testing.T) {
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			x := mustArr[int32](t)(gpu.FromSlice(s, []int32{1, 3, 1, 0}))
			defer x.Free()
			w := mustArr[float32](t)(gpu.FromSlice(s, []float32{0.5, 2, 0.25, 1}))
			defer w.Free()
			empty := mustArr[int32](t)(gpu.Empty[int32](s, 0))
			defer empty.Free()
			// The reference: numpy.bincount([1, 3, 1, 0]) and with the weights.
			want := []int64{1, 2, 0, 1}
			wantW := []float64{1, 0.75, 0, 2}
			check := func(name string) {
				t.Helper()
				got, err := gpu.Bincount(bg, s, x, 0)
				if err != nil {
					t.Fatalf("%s: then Bincount: %v", name, err)
				}
				if g := toSlice(t, got); !slices.Equal(g, want) {
					t.Fatalf("%s: then Bincount = %v, want %v", name, g, want)
				}
				got.Free()
				gw, err := gpu.BincountWeights(bg, s, x, w, 0, gpu.Bins(4))
				if err != nil {
					t.Fatalf("%s: then BincountWeights: %v", name, err)
				}
				if g := toSlice(t, gw); !slices.Equal(g, wantW) {
					t.Fatalf("%s: then BincountWeights = %v, want %v", name, g, wantW)
				}
				gw.Free()
				if err := s.Synchronize(bg); err != nil {
					t.Fatalf("%s: then Synchronize: %v", name, err)
				}
				if err := d.Err(); err != nil {
					t.Fatalf("%s: the device failed: %v", name, err)
				}
			}
			for _, c := range []struct {
				name string
				call func() (any, error)
				want error
			}{
				{"Bins(2^61)", func() (any, error) { return gpu.Bincount(bg, s, x, 0, gpu.Bins(1<<61)) }, gpu.ErrInvalidValue},
				{"Bins(2^62)", func() (any, error) { return gpu.Bincount(bg, s, x, 0, gpu.Bins(1<<62)) }, gpu.ErrInvalidValue},
				{"Bins(MaxInt64)", func() (any, error) { return gpu.Bincount(bg, s, x, 0, gpu.Bins(math.MaxInt64)) }, gpu.ErrInvalidValue},
				{"minlength 2^61", func() (any, error) { return gpu.Bincount(bg, s, x, 1<<61) }, gpu.ErrInvalidValue},
				{"minlength 2^62", func() (any, error) { return gpu.Bincount(bg, s, x, 1<<62) }, gpu.ErrInvalidValue},
				{"minlength MaxInt64", func() (any, error) { return gpu.Bincount(bg, s, x, math.MaxInt64) }, gpu.ErrInvalidValue},
				{"empty/minlength 2^61", func() (any, error) { return gpu.Bincount(bg, s, empty, 1<<61) }, gpu.ErrInvalidValue},
				{"minlength 2^61 Bins(2^61)", func() (any, error) { return gpu.Bincount(bg, s, x, 1<<61, gpu.Bins(1<<61)) }, gpu.ErrInvalidValue},
				{"weights/Bins(2^61)", func() (any, error) { return gpu.BincountWeights(bg, s, x, w, 0, gpu.Bins(1<<61)) }, gpu.ErrInvalidValue},
				{"weights/minlength 2^61", func() (any, error) { return gpu.BincountWeights(bg, s, x, w, 1<<61) }, gpu.ErrInvalidValue},
				{"weights/minlength MaxInt64", func() (any, error) { return gpu.BincountWeights(bg, s, x, w, math.MaxInt64) }, gpu.ErrInvalidValue},
				// 2^62 bytes: a valid shape that no device holds.
				{"Bins(2^59)", func() (any, error) { return gpu.Bincount(bg, s, x, 0, gpu.Bins(1<<59)) }, gpu.ErrOutOfMemory},
				{"minlength 2^59", func() (any, error) { return gpu.Bincount(bg, s, x, 1<<59) }, gpu.ErrOutOfMemory},
				{"weights/minlength 2^59", func() (any, error) { return gpu.BincountWeights(bg, s, x, w, 1<<59) }, gpu.ErrOutOfMemory},
			} {
				r, err := c.call()
				if !errors.Is(err, c.want) {
					t.Errorf("%s: %v, want an error wrapping %v", c.name, err, c.want)
				}
				switch r := r.(type) {
				case *gpu.Array[int64]:
					if r != nil {
						t.Errorf("%s: a result of shape %v", c.name, r.Shape())
					}
				case *gpu.Array[float64]:
					if r != nil {
						t.Errorf("%s: a result of shape %v", c.name, r.Shape())
					}
				}
				check(c.name)
			}
		})
	}
}

// TestBincountErrorNamesCause: an error names what asked for the bins (minlength, the
// largest value, Bins), not another argument.
func TestBincountErrorNamesCause(t *testing.T) {
	for _, d := range bincountDevices(t) {
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		x := mustArr[int64](t)(gpu.FromSlice(s, []int64{1 << 40}))
		defer x.Free()
		_, err = gpu.Bincount(bg, s, x, math.MaxInt64)
		if !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "minlength 9223372036854775807") || strings.Contains(err.Error(), "1099511627776") {
			t.Errorf("x = [2^40], minlength MaxInt64: %v; want an error naming minlength (ErrInvalidValue)", err)
		}
		_, err = gpu.Bincount(bg, s, x, 0)
		if !errors.Is(err, gpu.ErrOutOfMemory) || !strings.Contains(err.Error(), "1099511627776") {
			t.Errorf("x = [2^40]: %v; want an error naming the value (ErrOutOfMemory)", err)
		}
		_, err = gpu.Bincount(bg, s, x, 0, gpu.Bins(1<<61))
		if !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "Bins(2305843009213693952)") {
			t.Errorf("Bins(2^61): %v; want an error naming Bins (ErrInvalidValue)", err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBincountBinsBelowMinlength: Bins(n) is exactly n bins, and the result of
// numpy.bincount has at least minlength: Bins below minlength is an error, not a
// result shorter than minlength asks for.
func TestBincountBinsBelowMinlength(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		x := mustArr[int32](t)(gpu.FromSlice(s, []int32{0, 3, 3, 1}))
		defer x.Free()
		w := mustArr[float64](t)(gpu.FromSlice(s, []float64{1, 2, 3, 4}))
		defer w.Free()
		if r, err := gpu.Bincount(bg, s, x, 10, gpu.Bins(4)); !errors.Is(err, gpu.ErrInvalidValue) || r != nil {
			t.Errorf("minlength 10, Bins(4): %v, %v; want ErrInvalidValue", r, err)
		}
		if r, err := gpu.BincountWeights(bg, s, x, w, 5, gpu.Bins(4)); !errors.Is(err, gpu.ErrInvalidValue) || r != nil {
			t.Errorf("weights: minlength 5, Bins(4): %v, %v; want ErrInvalidValue", r, err)
		}
		// numpy.bincount([0, 3, 3, 1], minlength=10): Bins(10) and Bins(12) (two more
		// zero bins) agree with it.
		want := []int64{1, 1, 0, 2, 0, 0, 0, 0, 0, 0}
		for _, bins := range []int{10, 12} {
			got, err := gpu.Bincount(bg, s, x, 10, gpu.Bins(bins))
			if err != nil {
				t.Fatalf("minlength 10, Bins(%d): %v", bins, err)
			}
			if g := toSlice(t, got); !slices.Equal(g, append(slices.Clone(want), make([]int64, bins-10)...)) {
				t.Errorf("minlength 10, Bins(%d) = %v", bins, g)
			}
			got.Free()
		}
	})
}

// TestBincountReportsPendingIndexError: Bincount without Bins waits for the largest
// value, a host read of work on s: like Array.At it reports, once, the index error of
// an earlier raise-mode Take on s (the package's rule, ErrIndexOutOfRange), which a
// later wait then doesn't report again.
func TestBincountReportsPendingIndexError(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		src := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3}))
		defer src.Free()
		bad := mustArr[int64](t)(gpu.FromSlice(s, []int64{0, 7}))
		defer bad.Free()
		x := mustArr[int32](t)(gpu.FromSlice(s, []int32{2, 0, 2}))
		defer x.Free()
		r := mustArr[float32](t)(gpu.Take(s, src, bad))
		defer r.Free()
		got, err := gpu.Bincount(bg, s, x, 5)
		if !errors.Is(err, gpu.ErrIndexOutOfRange) || !strings.Contains(err.Error(), "Take") || got != nil {
			t.Fatalf("Bincount after a Take out of range: %v, %v; want the Take's error", got, err)
		}
		got = mustArr[int64](t)(gpu.Bincount(bg, s, x, 5))
		defer got.Free()
		if g := toSlice(t, got); !slices.Equal(g, []int64{1, 0, 2, 0, 0}) {
			t.Errorf("Bincount = %v, want [1 0 2 0 0]", g)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Errorf("reported twice: %v", err)
		}
	})
}

// TestPutEmptyValues: numpy.put with an empty values array changes nothing and
// doesn't read the indices (PyArray_PutTo returns before it does), so one out of range
// is no error either; indices into an empty array are an error all the same (NumPy's
// IndexError, checked first).
func TestPutEmptyValues(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3, 4}))
		defer a.Free()
		none := mustArr[float32](t)(gpu.Empty[float32](s, 0))
		defer none.Free()
		for _, ix := range [][]int64{{1, 2}, {0, 99, -7}} {
			idx := mustArr[int64](t)(gpu.FromSlice(s, ix))
			for _, mode := range []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip} {
				if err := gpu.Put(s, a, idx, none, gpu.WithMode(mode)); err != nil {
					t.Errorf("Put(%v, no values, %v): %v", ix, mode, err)
				}
			}
			idx.Free()
		}
		if err := s.Synchronize(bg); err != nil {
			t.Errorf("Synchronize after Put with no values: %v", err)
		}
		if got := toSlice(t, a); !slices.Equal(got, []float32{1, 2, 3, 4}) {
			t.Errorf("a = %v after Put with no values, want [1 2 3 4]", got)
		}
		e := mustArr[float32](t)(gpu.Empty[float32](s, 0))
		defer e.Free()
		idx := mustArr[int64](t)(gpu.FromSlice(s, []int64{0}))
		defer idx.Free()
		one := mustArr[float32](t)(gpu.FromSlice(s, []float32{5}))
		defer one.Free()
		for _, v := range []*gpu.Array[float32]{none, one} {
			if err := gpu.Put(s, e, idx, v, gpu.WithMode(gpu.ModeClip)); !errors.Is(err, gpu.ErrIndexOutOfRange) {
				t.Errorf("Put into an empty array (%d values): %v, want ErrIndexOutOfRange", v.Size(), err)
			}
		}
	})
}

// TestBincountCaptureRefusedFirst: Bincount without Bins of a minlength of 2^31-1 or
// more (bins made from minlength before the values are read) during a capture is
// refused at once with ErrCapturing, before its bins are made: with too little memory
// for them the error is still ErrCapturing, not ErrOutOfMemory, no memory is taken,
// and the capture goes on to a graph that runs.
func TestBincountCaptureRefusedFirst(t *testing.T) {
	s := freshStream(t)
	x, err := gpu.FromSlice(s, []int64{1, 0, 1})
	if err != nil {
		t.Fatal(err)
	}
	saved := cpu.TotalMemory
	t.Cleanup(func() { cpu.TotalMemory = saved })
	d := s.Device()
	free, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	cpu.TotalMemory -= free - 1<<20 // 1 MiB left: far below minlength's bins
	var y *gpu.Array[int64]
	g, err := s.Capture(func() error {
		if y, err = gpu.Eval[int64](s, "x * 3", gpu.Vars{"x": x}); err != nil {
			return err
		}
		before, _, _ := d.MemInfo()
		for _, minlength := range []int{math.MaxInt32, 1 << 32} {
			if _, err := gpu.Bincount(bg, s, x, minlength); !errors.Is(err, gpu.ErrCapturing) {
				t.Errorf("Bincount(minlength %d) in a capture = %v, want ErrCapturing", minlength, err)
			}
		}
		if after, _, _ := d.MemInfo(); after != before {
			t.Errorf("refused Bincounts took %d bytes", before-after)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("a capture whose refused Bincounts did nothing: %v", err)
	}
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	g.Close()
	if got := toSlice(t, y); fmt.Sprint(got) != "[3 0 3]" {
		t.Errorf("the graph's result = %v, want [3 0 3]", got)
	}
}

// TestBincountValueErr: Bincount without Bins refuses a value of 2^31-1 or more
// (ErrOutOfMemory) unless minlength already made bins that hold it (NumPy counts
// it there), and a negative one (ErrIndexOutOfRange); its message's numbers agree.
// (Bins of these sizes are 16 GiB or more: the decision is tested alone.)
func TestBincountValueErr(t *testing.T) {
	for _, c := range []struct {
		big        uint64
		size, made int
		want       error
		msg        string
	}{
		{math.MaxInt32 - 1, 8, 0, nil, ""},
		{math.MaxInt32, 8, 0, gpu.ErrOutOfMemory, "value 2147483647: 2147483648 bins, more than the 2147483647 "},
		{1 << 31, 8, 1 << 32, nil, ""},
		{1<<32 - 1, 8, 1 << 32, nil, ""},
		{1 << 32, 8, 1 << 32, gpu.ErrOutOfMemory, "value 4294967296: 4294967297 bins, more than the 4294967296 "},
		{math.MaxInt32 - 1, 8, math.MaxInt32, nil, ""},
		{math.MaxInt32, 8, math.MaxInt32, gpu.ErrOutOfMemory, "more than the 2147483647 "},
		{1 << 63, 8, 1 << 32, gpu.ErrIndexOutOfRange, "negative"},
		{1 << 31, 4, 0, gpu.ErrIndexOutOfRange, "negative"},
		{math.MaxInt32, 4, math.MaxInt32, gpu.ErrOutOfMemory, ""},
	} {
		err := gpu.BincountValueErr(c.big, c.size, c.made)
		if c.want == nil && err != nil || c.want != nil && (!errors.Is(err, c.want) || !strings.Contains(fmt.Sprint(err), c.msg)) {
			t.Errorf("value %d (size %d) with %d bins made: %v, want %v with %q", c.big, c.size, c.made, err, c.want, c.msg)
		}
	}
}
