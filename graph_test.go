package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/half"
)

// graphInputs are the arrays the captured operations read; refill writes new random
// values into them (from the host, between launches).
type graphInputs struct {
	x, y   *gpu.Array[float32] // 64 x 300
	v      *gpu.Array[float32] // 1<<18: large enough for fused reductions and look-back scans
	ints   *gpu.Array[int32]   // 64 x 300
	idx    *gpu.Array[int64]   // 500 indices, some out of range (clipped)
	m1, m2 *gpu.Array[float32] // 48 x 40, 40 x 24
	c      *gpu.Array[float32] // 48 x 24: Gemm's addend
	h      *gpu.Array[gpu.Float16]
}

func newGraphInputs(t *testing.T, s *gpu.Stream) *graphInputs {
	t.Helper()
	in := &graphInputs{}
	var err error
	mk := func(shape ...int) *gpu.Array[float32] {
		if err != nil {
			return nil
		}
		var a *gpu.Array[float32]
		a, err = gpu.Empty[float32](s, shape...)
		return a
	}
	in.x, in.y, in.v, in.m1, in.m2, in.c = mk(64, 300), mk(64, 300), mk(1<<18), mk(48, 40), mk(40, 24), mk(48, 24)
	if err == nil {
		in.ints, err = gpu.Empty[int32](s, 64, 300)
	}
	if err == nil {
		in.idx, err = gpu.Empty[int64](s, 500)
	}
	if err == nil {
		in.h, err = gpu.Empty[gpu.Float16](s, 1000)
	}
	if err != nil {
		t.Fatal(err)
	}
	in.refill(t)
	return in
}

func (in *graphInputs) refill(t *testing.T) {
	t.Helper()
	for _, a := range []*gpu.Array[float32]{in.x, in.y, in.v, in.m1, in.m2, in.c} {
		if err := a.CopyFromHost(bg, randF32(a.Size())); err != nil {
			t.Fatal(err)
		}
	}
	ints := make([]int32, in.ints.Size())
	for i := range ints {
		ints[i] = rand.Int32N(2000) - 1000
	}
	idx := make([]int64, in.idx.Size())
	for i := range idx {
		idx[i] = rand.Int64N(400) - 50
	}
	h := make([]gpu.Float16, in.h.Size())
	for i := range h {
		h[i] = half.Float16FromFloat32(float32(rand.NormFloat64()))
	}
	if err := errors.Join(in.ints.CopyFromHost(bg, ints), in.idx.CopyFromHost(bg, idx), in.h.CopyFromHost(bg, h)); err != nil {
		t.Fatal(err)
	}
}

// result reads an operation's output back as float64s.
type result func() ([]float64, error)

func asF64[T gpu.Elem](a *gpu.Array[T], err error) (result, error) {
	if err != nil {
		return nil, err
	}
	return func() ([]float64, error) {
		v, err := a.ToSlice(bg)
		if err != nil {
			return nil, err
		}
		out := make([]float64, len(v))
		for i, x := range v {
			out[i] = graphF64(x)
		}
		return out, nil
	}, nil
}

func graphF64(x any) float64 {
	switch v := x.(type) {
	case float32:
		return float64(v)
	case float64:
		return v
	case int32:
		return float64(v)
	case int64:
		return float64(v)
	case bool:
		if v {
			return 1
		}
		return 0
	case gpu.Float16:
		return float64(v.Float32())
	case gpu.BFloat16:
		return float64(v.Float32())
	}
	panic(fmt.Sprintf("toF64 of %T", x))
}

// graphFamilies are operations of every family, each returning its outputs.
var graphFamilies = []struct {
	name string
	run  func(s *gpu.Stream, in *graphInputs) ([]result, error)
}{
	{"elementwise", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		r1, err := asF64(gpu.Eval[float32](s, "a*x + exp(-y*y) / b", gpu.Vars{"a": 2.5, "x": in.x, "y": in.y, "b": 3.0}))
		if err != nil {
			return nil, err
		}
		r2, err := asF64(gpu.Eval[gpu.Float16](s, "h*h - 1", gpu.Vars{"h": in.h}))
		return []result{r1, r2}, err
	}},
	{"half", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		r1, err1 := asF64(gpu.Sum[float32](s, in.h))
		r2, err2 := asF64(gpu.Max(s, in.h))
		r3, err3 := asF64(gpu.CumSum[float32](s, in.h, 0))
		r4, err4 := asF64(gpu.Astype[gpu.BFloat16](s, in.x))
		return []result{r1, r2, r3, r4}, errors.Join(err1, err2, err3, err4)
	}},
	{"reductions", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		var rs []result
		add := func(r result, err error) error {
			rs = append(rs, r)
			return err
		}
		err := errors.Join(
			add(asF64(gpu.Sum[float32](s, in.v))), // two passes fused: the capture's ticket scratch
			add(asF64(gpu.Sum[int64](s, in.ints, gpu.Axes(1)))),
			add(asF64(gpu.Max(s, in.x, gpu.Axes(0)))),
			add(asF64(gpu.ArgMin(s, in.y, gpu.Axes(1)))),
			add(asF64(gpu.Mean[float64](s, in.x))),
			add(asF64(gpu.Count(s, in.ints))),
		)
		return rs, err
	}},
	{"scans", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		r1, err1 := asF64(gpu.CumSum[float32](s, in.v, 0)) // decoupled look-back: the capture's status scratch
		r2, err2 := asF64(gpu.CumSum[int64](s, in.ints, 1))
		r3, err3 := asF64(gpu.CumMax(s, in.x, 0))
		return []result{r1, r2, r3}, errors.Join(err1, err2, err3)
	}},
	{"statistics", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		r1, err1 := asF64(gpu.Var[float32](s, in.x, gpu.Axes(1)))
		r2, err2 := asF64(gpu.Softmax(s, in.y, 1))
		r3, err3 := asF64(gpu.Norm[float32](s, in.v, 2))
		return []result{r1, r2, r3}, errors.Join(err1, err2, err3)
	}},
	{"statistics2", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		r1, err1 := asF64(gpu.LayerNorm(s, in.x, 1, nil, nil, 1e-5))
		r2, err2 := asF64(gpu.LogSumExp[float32](s, in.y, gpu.Axes(1)))
		r3, err3 := asF64(gpu.Median[float32](s, in.x, gpu.Axes(1))) // a sort inside
		r4, err4 := asF64(gpu.Quantile[float64](s, in.v, 0.3))
		r5, err5 := asF64(gpu.Std[float64](s, in.ints, gpu.Axes(0), gpu.Ddof(1)))
		return []result{r1, r2, r3, r4, r5}, errors.Join(err1, err2, err3, err4, err5)
	}},
	{"matmul", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		r, err := asF64(gpu.MatMul(s, in.m1, in.m2))
		if err != nil {
			return nil, err
		}
		// Gemm in place into a fresh copy of c (the capture's cuBLAS handle and
		// workspace on CUDA).
		c, err := gpu.Clone(s, in.c)
		if err != nil {
			return nil, err
		}
		if err := gpu.Gemm(s, 1.5, in.m1, in.m2, -0.5, c); err != nil {
			return nil, err
		}
		rc, _ := asF64(c, nil)
		rd, err := asF64(gpu.Dot(s, in.v, in.v))
		return []result{r, rc, rd}, err
	}},
	{"sort", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		var rs []result
		add := func(r result, err error) error {
			rs = append(rs, r)
			return err
		}
		sorted, err := gpu.Sort(s, in.v, 0) // one row: the fused sort on CUDA (scratch sums, a cooperative launch)
		if err != nil {
			return nil, err
		}
		rsorted, _ := asF64(sorted, nil)
		rs = append(rs, rsorted)
		flat, err := in.x.Reshape(64 * 300)
		if err != nil {
			return nil, err
		}
		vals, idx, err := gpu.TopK(s, in.v, 100, 0) // radix select on CUDA
		if err != nil {
			return nil, err
		}
		keys, byKey, err := gpu.SortByKey(s, in.ints, in.x, 1)
		if err != nil {
			return nil, err
		}
		err = errors.Join(
			add(asF64(gpu.Argsort(s, in.ints, 1))), // stable: equal keys keep their order
			add(asF64(gpu.Sort(s, in.y, 1, gpu.Descending()))),
			add(asF64(gpu.SearchSorted(s, sorted, flat, gpu.SideRight))),
			add(asF64(vals, nil)), add(asF64(idx, nil)),
			add(asF64(keys, nil)), add(asF64(byKey, nil)),
			add(asF64(gpu.Sort(s, in.h, 0))),
		)
		return rs, err
	}},
	{"index", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		flat, err := in.x.Reshape(64 * 300)
		if err != nil {
			return nil, err
		}
		r1, err1 := asF64(gpu.Take(s, flat, in.idx, gpu.WithMode(gpu.ModeClip)))
		r2, err2 := asF64(gpu.Concatenate(s, []*gpu.Array[float32]{in.x, in.y}, 1))
		r3, err3 := asF64(gpu.Roll(s, in.ints, 17, gpu.OnAxis(1)))
		// A scatter into a fresh copy.
		base, err4 := gpu.Clone(s, in.v)
		vals, err5 := gpu.Eval[float32](s, "1 + 0*i", gpu.Vars{"i": in.idx})
		if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
			return nil, err
		}
		err6 := gpu.AddAt(s, base, in.idx, vals, gpu.WithMode(gpu.ModeClip), gpu.Deterministic())
		r4, err7 := asF64(base, nil)
		r5, err8 := asF64(gpu.Transpose(s, in.x))
		if err := errors.Join(err6, err7, err8); err != nil {
			return nil, err
		}
		// Put through a permutation (distinct indices: one write each), PutMask.
		perm, err := gpu.Argsort(s, in.v, 0)
		if err != nil {
			return nil, err
		}
		inv, err := gpu.Zeros[float32](s, in.v.Size())
		if err != nil {
			return nil, err
		}
		if err := gpu.Put(s, inv, perm, in.v, gpu.WithMode(gpu.ModeClip)); err != nil {
			return nil, err
		}
		mask, err := gpu.Eval[bool](s, "x > y", gpu.Vars{"x": in.x, "y": in.y})
		if err != nil {
			return nil, err
		}
		pm, err := gpu.Clone(s, in.x)
		if err != nil {
			return nil, err
		}
		if err := gpu.PutMask(s, pm, mask, in.y); err != nil {
			return nil, err
		}
		r6, _ := asF64(inv, nil)
		r7, _ := asF64(pm, nil)
		return []result{r1, r2, r3, r4, r5, r6, r7}, nil
	}},
	{"random", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		g := gpu.NewGenerator(42) // a graph's first launch draws what a fresh generator does
		r, err := asF64(gpu.RandN[float32](s, g, 1000))
		return []result{r}, err
	}},
	{"copies", func(s *gpu.Stream, in *graphInputs) ([]result, error) {
		c, err := gpu.Astype[float64](s, in.x)
		if err != nil {
			return nil, err
		}
		z, err := gpu.Zeros[float32](s, 64, 300)
		if err != nil {
			return nil, err
		}
		if err := gpu.Copy(s, z, in.y); err != nil {
			return nil, err
		}
		r1, _ := asF64(c, nil)
		r2, _ := asF64(z, nil)
		return []result{r1, r2}, nil
	}},
}

func readAll(t *testing.T, rs []result) [][]float64 {
	t.Helper()
	out := make([][]float64, len(rs))
	for i, r := range rs {
		v, err := r()
		if err != nil {
			t.Fatalf("output %d: %v", i, err)
		}
		out[i] = v
	}
	return out
}

func sameResults(t *testing.T, what string, got, want [][]float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d outputs, want %d", what, len(got), len(want))
	}
	for i := range got {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: output %d has %d elements, want %d", what, i, len(got[i]), len(want[i]))
		}
		// Float sums whose order depends on timing (a scan's decoupled look-back, atomics)
		// differ between runs by roundings of the largest partial sums, not of each
		// result: the tolerance scales with the output's largest magnitude.
		scale := 1.0
		for _, w := range want[i] {
			if !math.IsInf(w, 0) && !math.IsNaN(w) {
				scale = math.Max(scale, math.Abs(w))
			}
		}
		for j := range got[i] {
			g, w := got[i][j], want[i][j]
			if g != w && !(math.IsNaN(g) && math.IsNaN(w)) && math.Abs(g-w) > 1e-5*scale {
				t.Fatalf("%s: output %d element %d = %v, eagerly %v", what, i, j, g, w)
			}
		}
	}
}

// TestGraphFamilies captures operations of every family, launches the graph on another
// stream, and compares its outputs with the same operations run eagerly, twice: with
// the first inputs and with new ones written between the launches.
func TestGraphFamilies(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		in := newGraphInputs(t, s)
		s2, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		for _, fam := range graphFamilies {
			t.Run(fam.name, func(t *testing.T) {
				var captured []result
				g, err := s.Capture(func() error {
					var err error
					captured, err = fam.run(s, in)
					return err
				})
				if err != nil {
					t.Fatalf("capture: %v", err)
				}
				defer g.Close()
				for round := range 2 {
					if round > 0 {
						in.refill(t)
					}
					eager, err := fam.run(s, in)
					if err != nil {
						t.Fatal(err)
					}
					want := readAll(t, eager)
					if err := g.Launch(s2); err != nil {
						t.Fatal(err)
					}
					sameResults(t, fmt.Sprintf("launch %d", round+1), readAll(t, captured), want)
					if fam.name == "random" {
						break // fresh numbers at each launch: TestGraphRandomFresh
					}
				}
			})
		}
	})
}

// TestGraphRandomFresh checks that each launch of a graph draws fresh random numbers:
// the ones its captured calls would draw if made at the launch, from the generators'
// state then (PyTorch's graphs advance the offset on each replay), on the generators in
// the order captured, advancing them; the capture itself draws nothing. Launches are
// single and queued two at a time, interleaved with eager draws and with another
// graph drawing from the same generator; the reference makes the same calls eagerly.
func TestGraphRandomFresh(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		s2, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		g1, g2 := gpu.NewGenerator(7), gpu.NewGenerator(8)
		r1, r2 := gpu.NewGenerator(7), gpu.NewGenerator(8) // the eager reference
		// draws makes the captured calls, into outs (a strided view through a copy).
		draws := func(s *gpu.Stream, a, b *gpu.Generator, outs []*gpu.Array[float32], ints *gpu.Array[int32]) error {
			if err := gpu.RandNInto(s, a, outs[0]); err != nil {
				return err
			}
			if err := gpu.RandInto(s, b, outs[1]); err != nil {
				return err
			}
			v, err := gpu.RandInt[int32](s, a, -50, 50, 333)
			if err != nil {
				return err
			}
			defer v.Free()
			if err := gpu.Copy(s, ints, v); err != nil {
				return err
			}
			return gpu.RandInto(s, a, outs[2])
		}
		type set struct {
			outs []*gpu.Array[float32]
			ints *gpu.Array[int32]
		}
		newSet := func() set {
			base := mustArr[float32](t)(gpu.Full[float32](s, -1, 40, 6))
			return set{[]*gpu.Array[float32]{
				mustArr[float32](t)(gpu.Full[float32](s, -1, 1000)),
				mustArr[float32](t)(gpu.Full[float32](s, -1, 300)),
				mustArr[float32](t)(base.Slice(gpu.R(), gpu.R(0, 6, 2))),
			}, mustArr[int32](t)(gpu.Full[int32](s, -99, 333))}
		}
		got, want := newSet(), newSet()
		g, err := s.Capture(func() error { return draws(s, g1, g2, got.outs, got.ints) })
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		defer g.Close()
		other := mustArr[float32](t)(gpu.Empty[float32](s, 50))
		defer other.Free()
		gOther, err := s.Capture(func() error { return gpu.RandInto(s, g1, other) })
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		defer gOther.Close()
		if _, off := g1.State(); off != 0 {
			t.Errorf("the captures advanced the generator to %d", off)
		}
		var last []float32
		for round := range 4 {
			// Eager draws between launches move the generators the launches start from.
			for _, gen := range []*gpu.Generator{g1, r1} {
				mustArr[float32](t)(gpu.Rand[float32](s, gen, 5+round)).Free()
			}
			queued := 1 + round%2
			for range queued {
				if err := g.Launch(s2); err != nil {
					t.Fatal(err)
				}
				if err := draws(s, r1, r2, want.outs, want.ints); err != nil {
					t.Fatal(err)
				}
			}
			if round == 2 {
				if err := gOther.Launch(s2); err != nil {
					t.Fatal(err)
				}
				mustArr[float32](t)(gpu.Rand[float32](s, r1, 50)).Free()
			}
			for k := range got.outs {
				if g, w := toSlice(t, got.outs[k]), toSlice(t, want.outs[k]); !slices.Equal(g, w) {
					t.Errorf("round %d: draw %d differs from the eager one: %v... want %v...", round, k, g[:4], w[:4])
				}
			}
			if g, w := toSlice(t, got.ints), toSlice(t, want.ints); !slices.Equal(g, w) {
				t.Errorf("round %d: the integers differ from the eager ones: %v... want %v...", round, g[:4], w[:4])
			}
			cur := toSlice(t, got.outs[0])
			if slices.Equal(cur, last) {
				t.Errorf("round %d drew the numbers of the one before", round)
			}
			last = cur
			for k, pair := range [][2]*gpu.Generator{{g1, r1}, {g2, r2}} {
				s1, o1 := pair[0].State()
				if s2, o2 := pair[1].State(); s1 != s2 || o1 != o2 {
					t.Errorf("round %d: generator %d at (%d, %d), want (%d, %d)", round, k, s1, o1, s2, o2)
				}
			}
		}
	})
}

// TestReadViewWhileDefaultCaptures: a host read of a non-contiguous array, which makes
// a contiguous copy first, works while the default stream captures, and leaves the
// capture unharmed (the copy used to go on the default stream, into the capture).
func TestReadViewWhileDefaultCaptures(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		m := mustArr[float32](t)(gpu.Arange[float32](s, 0, 6, 1))
		defer m.Free()
		m2 := mustArr[float32](t)(gpu.Reshape(s, m, 2, 3))
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		ds := d.DefaultStream()
		x := mustArr[float32](t)(gpu.Empty[float32](s, 4))
		defer x.Free()
		if err := ds.BeginCapture(); err != nil {
			t.Fatal(err)
		}
		if err := gpu.Fill(ds, x, 1); err != nil {
			t.Fatal(err)
		}
		got, err := mustArr[float32](t)(m2.Transpose()).ToSlice(bg)
		if err != nil || !slices.Equal(got, []float32{0, 3, 1, 4, 2, 5}) {
			t.Errorf("read of a transposed view during the default stream's capture: %v, %v", got, err)
		}
		g, err := ds.EndCapture()
		if err != nil {
			t.Fatalf("the capture: %v", err)
		}
		g.Close()
	})
}

// TestSideStreamFails: when the device's side stream can't be made, the work that
// goes there fails with the backend's error (a host read of a non-contiguous array, a
// capture's allocation) rather than going onto the default stream, which may be
// capturing: the default stream's capture is unharmed and its graph runs.
func TestSideStreamFails(t *testing.T) {
	fd := &noStreamsDev{Device: cpu.New(0)}
	d, err := gpu.NewDevice(fd)
	if err != nil {
		t.Fatal(err)
	}
	ds := d.DefaultStream()
	m := mustArr[float32](t)(gpu.Arange[float32](ds, 0, 6, 1))
	defer m.Free()
	view := mustArr[float32](t)(mustArr[float32](t)(gpu.Reshape(ds, m, 2, 3)).Transpose())
	x := mustArr[float32](t)(gpu.Empty[float32](ds, 4))
	defer x.Free()
	if err := ds.Synchronize(bg); err != nil {
		t.Fatal(err)
	}
	fd.noStreams.Store(true)
	if err := ds.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	if err := gpu.Fill(ds, x, 7); err != nil {
		t.Fatal(err)
	}
	if got, err := view.ToSlice(bg); !errors.Is(err, errNoStreams) || got != nil {
		t.Errorf("read of a transposed view without a side stream: %v, %v; want nil and the backend's error", got, err)
	}
	if y, err := gpu.Empty[float32](ds, 1<<10); !errors.Is(err, errNoStreams) {
		t.Errorf("an allocation in a capture without a side stream: %v; want the backend's error", err)
		if y != nil {
			y.Free()
		}
	}
	g, err := ds.EndCapture()
	if err != nil {
		t.Fatalf("the capture: %v", err)
	}
	defer g.Close()
	if err := g.Launch(ds); err != nil {
		t.Fatal(err)
	}
	if got, err := x.ToSlice(bg); err != nil || !slices.Equal(got, []float32{7, 7, 7, 7}) {
		t.Errorf("the graph's fill: %v, %v", got, err)
	}
	fd.noStreams.Store(false)
	if got, err := view.ToSlice(bg); err != nil || !slices.Equal(got, []float32{0, 3, 1, 4, 2, 5}) {
		t.Errorf("read of the transposed view once streams can be made: %v, %v", got, err)
	}
}

// noStreamsDev is a CPU device whose new streams fail while noStreams is set.
type noStreamsDev struct {
	backend.Device
	noStreams atomic.Bool
}

// errNoStreams is noStreamsDev's NewStream error.
var errNoStreams = errors.New("test: no more streams")

func (d *noStreamsDev) NewStream() (backend.Stream, error) {
	if d.noStreams.Load() {
		return nil, errNoStreams
	}
	return d.Device.NewStream()
}

// TestReadViewDefaultStreamFaulted: a failed HostFunc faults its stream only; a host
// read of a non-contiguous array that the default stream never wrote works after the
// default stream's fault (its contiguous copy used to go on the default stream).
func TestReadViewDefaultStreamFaulted(t *testing.T) {
	s := freshStream(t) // (a device of its own: its default stream stays faulted)
	d := s.Device()
	m := mustArr[float32](t)(gpu.Arange[float32](s, 0, 6, 1))
	defer m.Free()
	m2 := mustArr[float32](t)(gpu.Reshape(s, m, 2, 3))
	boom := errors.New("boom")
	if err := d.DefaultStream().HostFunc(func() error { return boom }); err != nil {
		t.Fatal(err)
	}
	if err := d.DefaultStream().Synchronize(bg); !errors.Is(err, boom) {
		t.Fatalf("the default stream after a failed host function: %v", err)
	}
	got, err := mustArr[float32](t)(m2.Transpose()).ToSlice(bg)
	if err != nil || !slices.Equal(got, []float32{0, 3, 1, 4, 2, 5}) {
		t.Errorf("read of a transposed view after the default stream's fault: %v, %v", got, err)
	}
}

// TestGraphScratchNotShared launches a graph of scans and fused reductions on one
// stream while the stream it was captured on runs the same operations eagerly: each
// has its own scratch, so every result is right.
func TestGraphScratchNotShared(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		s2, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		n := 1 << 18
		vals := make([]int32, n)
		for i := range vals {
			vals[i] = rand.Int32N(100)
		}
		v, err := gpu.FromSlice(s, vals)
		if err != nil {
			t.Fatal(err)
		}
		var wantSum int64
		want := make([]int64, n)
		for i, x := range vals {
			wantSum += int64(x)
			want[i] = wantSum
		}
		var gs *gpu.Array[int64]
		var gc *gpu.Array[int64]
		g, err := s.Capture(func() error {
			var err1, err2 error
			gs, err1 = gpu.Sum[int64](s, v)
			gc, err2 = gpu.CumSum[int64](s, v, 0)
			return errors.Join(err1, err2)
		})
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		var eager []*gpu.Array[int64]
		for range 4 {
			if err := g.Launch(s2); err != nil {
				t.Fatal(err)
			}
			es, err1 := gpu.Sum[int64](s, v)
			ec, err2 := gpu.CumSum[int64](s, v, 0)
			if err := errors.Join(err1, err2); err != nil {
				t.Fatal(err)
			}
			eager = append(eager, es, ec)
		}
		for i, a := range append(eager, gs, gc) {
			got := toSlice(t, a)
			if len(got) == 1 {
				if got[0] != wantSum {
					t.Fatalf("sum %d = %d, want %d", i, got[0], wantSum)
				}
				continue
			}
			for j := range got {
				if got[j] != want[j] {
					t.Fatalf("scan %d element %d = %d, want %d", i, j, got[j], want[j])
				}
			}
		}
	})
}

// TestCaptureReadBack: operations that read a result back on the host (Nonzero's
// count, FindFirst's index, Unique's, Bincount's largest value) and raise-mode index
// checks can't be captured: the call fails at once with ErrCapturing, leaving the
// capture intact; a host read of a buffer the capture writes fails so too and spoils
// the capture.
func TestCaptureReadBack(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		x, err := gpu.FromSlice(s, []float32{0, 1, 0, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		idx, err := gpu.FromSlice(s, []int64{0, 4})
		if err != nil {
			t.Fatal(err)
		}
		mask, err := gpu.FromSlice(s, []bool{true, false, true, true, false})
		if err != nil {
			t.Fatal(err)
		}
		refused := []struct {
			name string
			f    func() error
		}{
			{"Take in raise mode", func() error { _, err := gpu.Take(s, x, idx); return err }},
			{"Nonzero", func() error { _, err := gpu.Nonzero(bg, s, x); return err }},
			{"NonzeroWhere", func() error { _, err := gpu.NonzeroWhere(bg, s, "x > 1", gpu.Vars{"x": x}); return err }},
			{"Argwhere", func() error { _, err := gpu.Argwhere(bg, s, x); return err }},
			{"Extract", func() error { _, err := gpu.Extract(bg, s, mask, x); return err }},
			{"FindFirst", func() error { _, err := gpu.FindFirst(bg, s, x); return err }},
			{"FindFirstWhere", func() error { _, err := gpu.FindFirstWhere(bg, s, "x > 1", gpu.Vars{"x": x}); return err }},
			{"CountNonzero", func() error { _, err := gpu.CountNonzero(bg, s, x); return err }},
			{"Unique", func() error { _, err := gpu.Unique(bg, s, idx); return err }},
			{"Bincount", func() error { _, err := gpu.Bincount(bg, s, idx, 0); return err }},
		}
		var y *gpu.Array[float32]
		g, err := s.Capture(func() error {
			var err error
			if y, err = gpu.Eval[float32](s, "x + 1", gpu.Vars{"x": x}); err != nil {
				return err
			}
			for _, r := range refused {
				if err := r.f(); !errors.Is(err, gpu.ErrCapturing) {
					t.Errorf("%s in a capture = %v, want ErrCapturing", r.name, err)
				}
			}
			return nil
		})
		if err != nil {
			t.Fatalf("a capture whose refused calls did nothing: %v", err)
		}
		if err := g.Launch(s); err != nil {
			t.Fatal(err)
		}
		g.Close()
		if got := toSlice(t, y); fmt.Sprint(got) != "[1 2 1 3 4]" {
			t.Errorf("the graph's result = %v, want [1 2 1 3 4]", got)
		}
		// A host read of what the capture writes spoils it.
		if err := s.BeginCapture(); err != nil {
			t.Fatal(err)
		}
		z, err := gpu.Eval[float32](s, "x * 2", gpu.Vars{"x": x})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := z.ToSlice(bg); !errors.Is(err, gpu.ErrCapturing) {
			t.Errorf("ToSlice of a captured result = %v, want ErrCapturing", err)
		}
		if g, err := s.EndCapture(); !errors.Is(err, gpu.ErrCapturing) {
			t.Errorf("EndCapture after a read back = %v, want ErrCapturing", err)
			if g != nil {
				g.Close()
			}
		}
		// So does an operation on another stream that reads it; writing it there is
		// allowed (the graph's launch is ordered after).
		s2, err := s.Device().NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		if err := s.BeginCapture(); err != nil {
			t.Fatal(err)
		}
		z, err = gpu.Eval[float32](s, "x * 2", gpu.Vars{"x": x})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gpu.Eval[float32](s2, "z + 1", gpu.Vars{"z": z}); !errors.Is(err, gpu.ErrCapturing) {
			t.Errorf("a read of a captured result on another stream = %v, want ErrCapturing", err)
		}
		if err := gpu.EvalInto(s2, z, "x", gpu.Vars{"x": x}); err != nil {
			t.Errorf("a write of a captured result on another stream: %v", err)
		}
		if g, err := s.EndCapture(); !errors.Is(err, gpu.ErrCapturing) {
			t.Errorf("EndCapture after a read on another stream = %v, want ErrCapturing", err)
			if g != nil {
				g.Close()
			}
		}
		// A graph's launch is not refused: g0 writes z, then reads what it wrote (its
		// merged use of z is ReadWrite). Nor is another capture's read: its graph's
		// launch comes after the capture's.
		g0, err := s2.Capture(func() error {
			if err := gpu.EvalInto(s2, z, "x", gpu.Vars{"x": x}); err != nil {
				return err
			}
			r, err := gpu.Eval[float32](s2, "z + 1", gpu.Vars{"z": z})
			if err == nil {
				r.Free()
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		defer g0.Close()
		s3, err := s.Device().NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s3.Close()
		if err := s.BeginCapture(); err != nil {
			t.Fatal(err)
		}
		if err := gpu.EvalInto(s, z, "x * 2", gpu.Vars{"x": x}); err != nil {
			t.Fatal(err)
		}
		if err := g0.Launch(s2); err != nil {
			t.Errorf("a graph's launch during another capture writing what it writes: %v", err)
		}
		if err := s3.BeginCapture(); err != nil {
			t.Fatal(err)
		}
		r3, err := gpu.Eval[float32](s3, "z + 1", gpu.Vars{"z": z})
		if err != nil {
			t.Errorf("another capture's read: %v", err)
		} else {
			r3.Free()
		}
		if g3, err := s3.EndCapture(); err != nil {
			t.Errorf("the other capture: %v", err)
		} else {
			g3.Close()
		}
		if g, err := s.EndCapture(); err != nil {
			t.Errorf("EndCapture after another graph's launch and another capture's read: %v", err)
		} else {
			g.Close()
		}
		// The stream works eagerly again.
		nz, err := gpu.Nonzero(bg, s, x)
		if err != nil {
			t.Fatal(err)
		}
		if got := toSlice(t, nz); fmt.Sprint(got) != "[1 3 4]" {
			t.Errorf("Nonzero after the capture = %v", got)
		}
		if n, err := gpu.FindFirst(bg, s, x); err != nil || n != 1 {
			t.Errorf("FindFirst after the capture = %d, %v; want 1", n, err)
		}
	})
}

// TestGraphString: a graph prints the stream it was captured from.
func TestGraphString(t *testing.T) {
	var nilG *gpu.Graph
	if got := nilG.String(); got != "<nil graph>" {
		t.Errorf("nil graph: %q", got)
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		x := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3}))
		defer x.Free()
		g, err := s.Capture(func() error {
			_, err := gpu.Eval[float32](s, "x + 1", gpu.Vars{"x": x})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := g.String(), "graph captured from "+s.String(); got != want {
			t.Errorf("String = %q, want %q", got, want)
		}
		g.Close()
	})
}
