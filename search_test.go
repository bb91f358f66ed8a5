package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// Search tests: Nonzero, Argwhere, Extract, FindFirst, CountNonzero and the predicate
// forms against references computed here, for every dtype, the 1-D sizes, densities
// from none to all, NaN and -0, multi-dimensional and strided inputs, empty arrays.

// srNonzero is the reference: NumPy's truth of each element.
func srNonzero[T gpu.Elem](xs []T) []int64 {
	var out []int64
	for i, v := range xs {
		if srTrue(v) {
			out = append(out, int64(i))
		}
	}
	return out
}

func srTrue[T gpu.Elem](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return x != 0 // NaN is true, -0 false
	case float64:
		return x != 0
	}
	var z T
	return v != z
}

// srGen returns n values of T, nonzero with probability p (floats include NaN and -0
// among the nonzero and zero values).
func srGen[T gpu.Elem](rng *rand.Rand, n int, p float64) []T {
	xs := scGen[T](rng, n)
	var z T
	for i := range xs {
		if rng.Float64() >= p {
			xs[i] = z
			if _, ok := any(z).(float32); ok && rng.IntN(2) == 0 {
				xs[i] = any(float32(math.Copysign(0, -1))).(T)
			}
			if _, ok := any(z).(float64); ok && rng.IntN(2) == 0 {
				xs[i] = any(math.Copysign(0, -1)).(T)
			}
			continue
		}
		if xs[i] == z || scIsNaN(xs[i]) {
			xs[i] = scFromI[T](1)
		}
		switch p := any(&xs[i]).(type) {
		case *float32:
			if rng.IntN(10) == 0 {
				*p = float32(math.NaN())
			}
		case *float64:
			if rng.IntN(10) == 0 {
				*p = math.NaN()
			}
		}
	}
	return xs
}

func srCheck[T gpu.Elem](t *testing.T, s *gpu.Stream, rng *rand.Rand, n int, p float64) {
	t.Helper()
	if !scBig(n) && !(p == 0.5 && (srIs[T, bool]() || srIs[T, float32]())) {
		return
	}
	xs := srGen[T](rng, n, p)
	a := mustArr[T](t)(gpu.FromSlice(s, xs))
	defer a.Free()
	what := fmt.Sprintf("%v %T n=%d p=%g", s.Device(), xs, n, p)
	idx, err := gpu.Nonzero(bg, s, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	want := srNonzero(xs)
	if idx.Ndim() != 1 || idx.Size() != len(want) {
		t.Fatalf("%s: shape %v, want (%d)", what, idx.Shape(), len(want))
	}
	scCheckExact(t, what+" nonzero", toSlice(t, idx), want)
	idx.Free()
	c, err := gpu.CountNonzero(bg, s, a)
	if err != nil || c != len(want) {
		t.Fatalf("%s: CountNonzero = %d, %v; want %d", what, c, err, len(want))
	}
	first, err := gpu.FindFirst(bg, s, a)
	wantFirst := -1
	if len(want) > 0 {
		wantFirst = int(want[0])
	}
	if err != nil || first != wantFirst {
		t.Fatalf("%s: FindFirst = %d, %v; want %d", what, first, err, wantFirst)
	}
	if got := toSlice(t, a); !slices.EqualFunc(got, xs, scSame[T]) {
		t.Fatalf("%s: input modified", what)
	}
}

func srIs[T, U any]() bool {
	var z T
	_, ok := any(z).(U)
	return ok
}

func TestNonzeroSizes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 22))
		for _, n := range sizes {
			for _, p := range []float64{0, 0.01, 0.5, 1} {
				srCheck[bool](t, s, rng, n, p)
				srCheck[float32](t, s, rng, n, p)
				srCheck[int64](t, s, rng, n, p)
			}
			srCheck[int8](t, s, rng, n, 0.3)
			srCheck[uint8](t, s, rng, n, 0.3)
			srCheck[int16](t, s, rng, n, 0.3)
			srCheck[uint16](t, s, rng, n, 0.3)
			srCheck[int32](t, s, rng, n, 0.3)
			srCheck[uint32](t, s, rng, n, 0.3)
			srCheck[uint64](t, s, rng, n, 0.3)
			srCheck[float64](t, s, rng, n, 0.3)
			srCheck[int](t, s, rng, n, 0.3)
		}
	})
}

// TestFindFirstPositions puts a single nonzero element at chosen places of long
// arrays, so that early exits and tile boundaries are exercised.
func TestFindFirstPositions(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		n := 1<<20 + 3
		for _, pos := range []int{0, 1, 31, 4095, 4096, 4097, 70000, 1 << 19, n - 1, -1} {
			xs := make([]uint8, n)
			if pos >= 0 {
				xs[pos] = 7
				if pos+10 < n {
					xs[pos+10] = 1 // a later one must not win
				}
				xs[n-1] = 1
			}
			a := mustArr[uint8](t)(gpu.FromSlice(s, xs))
			got, err := gpu.FindFirst(bg, s, a)
			if err != nil || got != pos {
				t.Fatalf("FindFirst with the first at %d = %d, %v", pos, got, err)
			}
			a.Free()
		}
		// Nonzero elements in every block past the first: blocks must not report a
		// later index than an earlier block's.
		xs := make([]float64, n)
		for i := 5000; i < n; i += 4096 {
			xs[i] = 1
		}
		a := mustArr[float64](t)(gpu.FromSlice(s, xs))
		defer a.Free()
		if got, err := gpu.FindFirst(bg, s, a); err != nil || got != 5000 {
			t.Fatalf("FindFirst = %d, %v, want 5000", got, err)
		}
	})
}

func TestNonzeroShapes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(23, 24))
		for _, shape := range scanShapes {
			m := 1
			for _, v := range shape {
				m *= v
			}
			xs := srGen[int32](rng, m, 0.4)
			a := mustArr[int32](t)(gpu.FromSlice(s, xs, shape...))
			views := []*gpu.Array[int32]{a}
			if v, err := a.Transpose(); err == nil {
				views = append(views, v)
			}
			if len(shape) > 1 && shape[0] > 2 {
				if v, err := a.Slice(gpu.R(0, gpu.End, 2)); err == nil {
					views = append(views, v)
				}
			}
			for _, v := range views {
				hv := scHostView(xs, v.Shape(), v.Strides(), v.Offset())
				want := srNonzero(hv)
				got := toSlice(t, mustArr[int64](t)(gpu.Nonzero(bg, s, v)))
				scCheckExact(t, fmt.Sprintf("nonzero of %v", v.Shape()), got, want)
				aw := mustArr[int64](t)(gpu.Argwhere(bg, s, v))
				if sh := aw.Shape(); len(sh) != 2 || sh[0] != len(want) || sh[1] != len(v.Shape()) {
					t.Fatalf("argwhere of %v: shape %v", v.Shape(), sh)
				}
				rows := toSlice(t, aw)
				vs := v.Shape()
				for r, flat := range want {
					rem := int(flat)
					for k := len(vs) - 1; k >= 0; k-- {
						if rows[r*len(vs)+k] != int64(rem%vs[k]) {
							t.Fatalf("argwhere of %v: row %d = %v, flat %d", vs, r, rows[r*len(vs):(r+1)*len(vs)], flat)
						}
						rem /= vs[k]
					}
				}
				first := -1
				if len(want) > 0 {
					first = int(want[0])
				}
				if got, err := gpu.FindFirst(bg, s, v); err != nil || got != first {
					t.Fatalf("FindFirst of %v = %d, %v, want %d", v.Shape(), got, err, first)
				}
				if c, err := gpu.CountNonzero(bg, s, v); err != nil || c != len(want) {
					t.Fatalf("CountNonzero of %v = %d, %v, want %d", v.Shape(), c, err, len(want))
				}
			}
			a.Free()
		}
	})
}

func TestExtract(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(25, 26))
		for _, n := range sizes {
			for _, p := range []float64{0, 0.5, 1} {
				if !scBig(n) && p != 0.5 {
					continue
				}
				mask := srGen[bool](rng, n, p)
				xf := scGen[float32](rng, n)
				xd := scGen[int64](rng, n)
				m := mustArr[bool](t)(gpu.FromSlice(s, mask))
				af := mustArr[float32](t)(gpu.FromSlice(s, xf))
				ad := mustArr[int64](t)(gpu.FromSlice(s, xd))
				var wf []float32
				var wd []int64
				for i, b := range mask {
					if b {
						wf = append(wf, xf[i])
						wd = append(wd, xd[i])
					}
				}
				gf := mustArr[float32](t)(gpu.Extract(bg, s, m, af))
				gd := mustArr[int64](t)(gpu.Extract(bg, s, m, ad))
				scCheckExact(t, "extract float32", toSlice(t, gf), wf)
				scCheckExact(t, "extract int64", toSlice(t, gd), wd)
				for _, a := range []interface{ Free() error }{m, af, ad, gf, gd} {
					a.Free()
				}
			}
		}
		// 2-D, with a transposed mask and values.
		mask := srGen[bool](rng, 35*40, 0.5)
		xs := scGen[int16](rng, 35*40)
		m := mustArr[bool](t)(gpu.FromSlice(s, mask, 35, 40))
		a := mustArr[int16](t)(gpu.FromSlice(s, xs, 35, 40))
		mt, _ := m.Transpose()
		at, _ := a.Transpose()
		hm := scHostView(mask, mt.Shape(), mt.Strides(), 0)
		ha := scHostView(xs, at.Shape(), at.Strides(), 0)
		var want []int16
		for i, b := range hm {
			if b {
				want = append(want, ha[i])
			}
		}
		got := toSlice(t, mustArr[int16](t)(gpu.Extract(bg, s, mt, at)))
		scCheckExact(t, "extract transposed", got, want)
		if _, err := gpu.Extract(bg, s, m, at); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Extract with a mismatched shape: %v", err)
		}
	})
}

func TestNonzeroWhere(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(27, 28))
		for _, n := range []int{0, 1, 1000, 1<<20 + 3} {
			xs := make([]int64, n)
			for i := range xs {
				xs[i] = rng.Int64N(21) - 10
			}
			a := mustArr[int64](t)(gpu.FromSlice(s, xs))
			got := toSlice(t, mustArr[int64](t)(gpu.NonzeroWhere(bg, s, "x % 2 != 0", gpu.Vars{"x": a})))
			var want []int64
			for i, v := range xs {
				if v%2 != 0 {
					want = append(want, int64(i))
				}
			}
			scCheckExact(t, "odd", got, want)
			first, err := gpu.FindFirstWhere(bg, s, "x > lim", gpu.Vars{"x": a, "lim": 8})
			wantFirst := -1
			for i, v := range xs {
				if v > 8 {
					wantFirst = i
					break
				}
			}
			if err != nil || first != wantFirst {
				t.Fatalf("FindFirstWhere = %d, %v, want %d", first, err, wantFirst)
			}
			a.Free()
		}
	})
}

func TestSearchEmpty(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range [][]int{{0}, {3, 0}, {0, 4, 2}} {
			a := mustArr[float32](t)(gpu.Empty[float32](s, shape...))
			idx := mustArr[int64](t)(gpu.Nonzero(bg, s, a))
			if idx.Size() != 0 || idx.Ndim() != 1 {
				t.Fatalf("Nonzero of %v: shape %v", shape, idx.Shape())
			}
			aw := mustArr[int64](t)(gpu.Argwhere(bg, s, a))
			if sh := aw.Shape(); sh[0] != 0 || sh[1] != len(shape) {
				t.Fatalf("Argwhere of %v: shape %v", shape, sh)
			}
			if i, err := gpu.FindFirst(bg, s, a); err != nil || i != -1 {
				t.Fatalf("FindFirst of %v = %d, %v", shape, i, err)
			}
			if c, err := gpu.CountNonzero(bg, s, a); err != nil || c != 0 {
				t.Fatalf("CountNonzero of %v = %d, %v", shape, c, err)
			}
			m := mustArr[bool](t)(gpu.Empty[bool](s, shape...))
			e := mustArr[float32](t)(gpu.Extract(bg, s, m, a))
			if e.Size() != 0 {
				t.Fatalf("Extract of %v: %v", shape, e.Shape())
			}
		}
		// A 0-d array.
		z := mustArr[int32](t)(gpu.Full[int32](s, 5))
		idx := toSlice(t, mustArr[int64](t)(gpu.Nonzero(bg, s, z)))
		scCheckExact(t, "0-d", idx, []int64{0})
		aw := mustArr[int64](t)(gpu.Argwhere(bg, s, z))
		if sh := aw.Shape(); sh[0] != 1 || sh[1] != 0 {
			t.Fatalf("Argwhere of a 0-d array: shape %v", sh)
		}
	})
}

// TestNonzeroPast2G runs Nonzero, FindFirst and CountNonzero on a bool array of
// 2^31+5000 elements on CUDA, with true elements on both sides of 2^31.
func TestNonzeroPast2G(t *testing.T) {
	n := 1<<31 + 5000
	d := scCUDA(t, int64(n)+1<<30)
	s := d.DefaultStream()
	xs := make([]bool, n)
	var want []int64
	for i := 12345; i < n; i += 1<<20 + 7 {
		xs[i] = true
	}
	for _, i := range []int{1<<31 - 1, 1 << 31, 1<<31 + 1, n - 1} {
		xs[i] = true
	}
	for i, v := range xs {
		if v {
			want = append(want, int64(i))
		}
	}
	a := mustArr[bool](t)(gpu.FromSlice(s, xs))
	defer a.Free()
	idx := mustArr[int64](t)(gpu.Nonzero(bg, s, a))
	scCheckExact(t, "nonzero past 2^31", toSlice(t, idx), want)
	idx.Free()
	if c, err := gpu.CountNonzero(bg, s, a); err != nil || c != len(want) {
		t.Fatalf("CountNonzero = %d, %v, want %d", c, err, len(want))
	}
	// FindFirst of the part past 2^31: a view starting at 2^31 - 10.
	v, err := a.Slice(gpu.R(1<<31-10, n))
	if err != nil {
		t.Fatal(err)
	}
	if i, err := gpu.FindFirst(bg, s, v); err != nil || i != 9 {
		t.Fatalf("FindFirst of the tail = %d, %v, want 9", i, err)
	}
	// Only one true element, past 2^31.
	for i := range xs {
		xs[i] = false
	}
	xs[n-3] = true
	b := mustArr[bool](t)(gpu.FromSlice(s, xs))
	defer b.Free()
	if i, err := gpu.FindFirst(bg, s, b); err != nil || i != n-3 {
		t.Fatalf("FindFirst = %d, %v, want %d", i, err, n-3)
	}
	idx = mustArr[int64](t)(gpu.Nonzero(bg, s, b))
	scCheckExact(t, "single nonzero past 2^31", toSlice(t, idx), []int64{int64(n - 3)})
}

// A search's result is a new array: its buffer holds its elements, no more.
func TestCompactBufferSize(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		xs := make([]int32, 1000)
		xs[7], xs[500] = 1, 2
		a := mustArr[int32](t)(gpu.FromSlice(s, xs))
		defer a.Free()
		idx := mustArr[int64](t)(gpu.Nonzero(bg, s, a))
		defer idx.Free()
		if got, want := idx.Buffer().Size(), int64(8*idx.Size()); got != want {
			t.Fatalf("Nonzero's result of %d elements has a buffer of %d bytes, want %d", idx.Size(), got, want)
		}
		host := make([]byte, 8*idx.Size())
		if err := idx.Buffer().CopyToHost(bg, host); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCompactExactBuffer: an eager compaction whose count is much smaller than its
// input keeps an allocation of its own size, not one of the input's element count.
func TestCompactExactBuffer(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		const n = 100000 // 800 KB of indices: eager
		xs := make([]int32, n)
		want := []int64{3, 77777}
		for _, i := range want {
			xs[i] = int32(i) + 1
		}
		a := mustArr[int32](t)(gpu.FromSlice(s, xs))
		defer a.Free()
		idx := mustArr[int64](t)(gpu.Nonzero(bg, s, a))
		defer idx.Free()
		got, err := idx.ToSlice(bg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Fatalf("Nonzero = %v, want %v", got, want)
		}
		if m, _ := idx.Buffer().BackendMem(); m.Size() >= 64<<10 {
			t.Errorf("a result of %d indices holds an allocation of %d bytes", idx.Size(), m.Size())
		}
	})
}

// TestSearchStopsEarly: a context already done and a closed stream are errors before
// anything is enqueued, for empty inputs too.
func TestSearchStopsEarly(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[bool](t)(gpu.FromSlice(s, []bool{false, true, true}))
		defer a.Free()
		e := mustArr[bool](t)(gpu.Empty[bool](s, 0))
		defer e.Free()
		done, cancel := context.WithCancel(bg)
		cancel()
		for _, x := range []*gpu.Array[bool]{a, e} {
			if _, err := gpu.Nonzero(done, s, x); !errors.Is(err, context.Canceled) {
				t.Errorf("Nonzero with a done context: %v", err)
			}
			if _, err := gpu.CountNonzero(done, s, x); !errors.Is(err, context.Canceled) {
				t.Errorf("CountNonzero with a done context: %v", err)
			}
			if _, err := gpu.FindFirst(done, s, x); !errors.Is(err, context.Canceled) {
				t.Errorf("FindFirst with a done context: %v", err)
			}
		}
		c, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		c.Close()
		if _, err := gpu.CountNonzero(bg, c, e); !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("CountNonzero of an empty array on a closed stream: %v", err)
		}
		if _, err := gpu.FindFirst(bg, c, e); !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("FindFirst of an empty array on a closed stream: %v", err)
		}
		if k, err := gpu.CountNonzero(bg, s, a); err != nil || k != 2 {
			t.Errorf("CountNonzero after: %d, %v", k, err)
		}
	})
}

// TestSearchInOwnHostFunc: the calls that read a result back on the host, made on s
// inside one of s's own host functions, would wait for work s runs after the function,
// which waits for the function: they are errors wrapping ErrInvalidValue, not a
// deadlock, and the same calls on another stream work there.
func TestSearchInOwnHostFunc(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[int32](t)(gpu.FromSlice(s, []int32{0, 3, 0, 3}))
		defer a.Free()
		mask := mustArr[bool](t)(gpu.FromSlice(s, []bool{false, true, true, false}))
		defer mask.Free()
		other, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		calls := func(s *gpu.Stream) map[string]error {
			// Under a deadline, so that a deadlock fails the test rather than hangs it.
			ctx, cancel := context.WithTimeout(bg, 10*time.Second)
			defer cancel()
			errs := map[string]error{}
			_, errs["Nonzero"] = gpu.Nonzero(ctx, s, a)
			_, errs["NonzeroWhere"] = gpu.NonzeroWhere(ctx, s, "a > 0", gpu.Vars{"a": a})
			_, errs["Argwhere"] = gpu.Argwhere(ctx, s, a)
			_, errs["Extract"] = gpu.Extract(ctx, s, mask, a)
			_, errs["FindFirst"] = gpu.FindFirst(ctx, s, a)
			_, errs["FindFirstWhere"] = gpu.FindFirstWhere(ctx, s, "a > 0", gpu.Vars{"a": a})
			_, errs["CountNonzero"] = gpu.CountNonzero(ctx, s, a)
			_, errs["Unique"] = gpu.Unique(ctx, s, a)
			_, errs["Bincount"] = gpu.Bincount(ctx, s, a, 0)
			return errs
		}
		// Every kernel used once first: on CUDA a kernel's first use inside a host
		// function is refused (its module load may synchronize the context).
		for name, err := range calls(other) {
			if err != nil {
				t.Fatalf("%s before the host function: %v", name, err)
			}
		}
		var own, others map[string]error
		var fresh error // a kernel never used before, first used inside the function
		if err := s.HostFunc(func() error {
			own, others = calls(s), calls(other)
			var y *gpu.Array[int32]
			if y, fresh = gpu.Eval[int32](other, "a*7919 + 104729", gpu.Vars{"a": a}); fresh == nil {
				y.Free()
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		for name, err := range own {
			if !errors.Is(err, gpu.ErrInvalidValue) || errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("%s on a stream inside its own host function: %v, want ErrInvalidValue", name, err)
			}
		}
		for name, err := range others {
			if err != nil {
				t.Errorf("%s on another stream inside a host function: %v", name, err)
			}
		}
		if cuda := d.Info().Backend == "cuda"; cuda != errors.Is(fresh, gpu.ErrInvalidValue) {
			t.Errorf("a kernel's first use inside a host function (on %s): %v", d.Info().Backend, fresh)
		}
		// Out of the function, the refused kernel loads.
		y := mustArr[int32](t)(gpu.Eval[int32](other, "a*7919 + 104729", gpu.Vars{"a": a}))
		if v := toSlice(t, y); v[1] != 3*7919+104729 {
			t.Errorf("the kernel after its refusal: %v", v)
		}
		y.Free()
	})
}

// Argwhere's result belongs to the caller, who must be able to free it, for 1-d inputs too.
func TestArgwhereResultFrees(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	a, err := gpu.FromSlice(s, []int32{0, 1, 0, 3})
	if err != nil {
		t.Fatal(err)
	}
	w, err := gpu.Argwhere(ctx, s, a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.ToSlice(ctx)
	if err != nil || !slices.Equal(got, []int64{1, 3}) || !slices.Equal(w.Shape(), []int{2, 1}) {
		t.Fatalf("Argwhere = %v %v, %v", got, w.Shape(), err)
	}
	if err := w.Free(); err != nil {
		t.Errorf("Free of Argwhere's result: %v", err)
	}
}

// TestSearchReportsIndexErrors: the calls that wait for a result computed on s report,
// as Array.At of that result would, the index error of an earlier raise-mode Take on s
// (ErrIndexOutOfRange, once, in place of the result); the next call then returns the
// right result, and a later wait reports nothing more. Both compaction paths (the
// eager one and the count-first one) and both of Unique's (the sort, the range's
// bitmap) are covered.
func TestSearchReportsIndexErrors(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		// r = numpy.take(src, [0, 1, 2, 3, 1]) is [0, 5, 0, 7, 5]; the Take below adds
		// index 9, out of range, and reads the last element for it (7).
		src := mustArr[int32](t)(gpu.FromSlice(s, []int32{0, 5, 0, 7}))
		defer src.Free()
		good := mustArr[int64](t)(gpu.FromSlice(s, []int64{0, 1, 2, 3, 1}))
		defer good.Free()
		bad := mustArr[int64](t)(gpu.FromSlice(s, []int64{0, 1, 2, 3, 1, 9}))
		defer bad.Free()
		r := mustArr[int32](t)(gpu.Take(s, src, good))
		defer r.Free()
		mask := mustArr[bool](t)(gpu.Eval[bool](s, "r != 0", gpu.Vars{"r": r}))
		defer mask.Free()
		// A call's own error, and then (where it succeeded) its result, read and freed:
		// the read must not be what reports the error.
		type result struct {
			err error
			get func() (any, error)
		}
		val := func(v any, err error) result { return result{err, func() (any, error) { return v, nil }} }
		arr := func(a *gpu.Array[int64], err error) result {
			return result{err, func() (any, error) { defer a.Free(); return a.ToSlice(bg) }}
		}
		calls := []struct {
			name string
			call func() result
			want any
		}{
			{"CountNonzero", func() result { return val(gpu.CountNonzero(bg, s, r)) }, 3},
			{"FindFirst", func() result { return val(gpu.FindFirst(bg, s, r)) }, 1},
			{"FindFirstWhere", func() result { return val(gpu.FindFirstWhere(bg, s, "r > 5", gpu.Vars{"r": r})) }, 3},
			{"Nonzero", func() result { return arr(gpu.Nonzero(bg, s, r)) }, []int64{1, 3, 4}},
			{"NonzeroWhere", func() result { return arr(gpu.NonzeroWhere(bg, s, "r == 5", gpu.Vars{"r": r})) }, []int64{1, 4}},
			{"Argwhere", func() result { return arr(gpu.Argwhere(bg, s, r)) }, []int64{1, 3, 4}},
			{"Extract", func() result {
				e, err := gpu.Extract(bg, s, mask, r)
				return result{err, func() (any, error) { defer e.Free(); return e.ToSlice(bg) }}
			}, []int32{5, 7, 5}},
			{"Unique", func() result {
				u, err := gpu.Unique(bg, s, r)
				return result{err, func() (any, error) { defer u.Free(); return u.Values.ToSlice(bg) }}
			}, []int32{0, 5, 7}},
		}
		for _, path := range []string{"default", "count first", "unique bitmap"} {
			switch path {
			case "count first":
				defer gpu.SetCompactEagerMax(d, gpu.SetCompactEagerMax(d, 0))
			case "unique bitmap":
				defer gpu.SetUniqueDenseMinN(gpu.SetUniqueDenseMinN(1))
			}
			for _, c := range calls {
				name := path + "/" + c.name
				rb := mustArr[int32](t)(gpu.Take(s, src, bad)) // ModeRaise: an error pending on s
				got := c.call()
				if !errors.Is(got.err, gpu.ErrIndexOutOfRange) || !strings.Contains(got.err.Error(), "Take") {
					v, err := got.get()
					t.Errorf("%s after a Take out of range: %v, %v; want the Take's error", name, v, err)
					s.Synchronize(bg) // (what the call didn't report)
				}
				got = c.call()
				if got.err != nil {
					t.Errorf("%s: %v", name, got.err)
				} else if v, err := got.get(); err != nil || fmt.Sprint(v) != fmt.Sprint(c.want) {
					t.Errorf("%s: %v, %v; want %v", name, v, err, c.want)
				}
				if err := s.Synchronize(bg); err != nil {
					t.Errorf("%s: the error reported twice: %v", name, err)
				}
				// The Take's result is what ModeRaise gives: the last element for 9.
				if g := toSlice(t, rb); !slices.Equal(g, []int32{0, 5, 0, 7, 5, 7}) {
					t.Errorf("%s: the Take = %v", name, g)
				}
				rb.Free()
			}
		}
	})
}
