package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
)

// statRef computes a statistic of each group (float64, two-pass: the reference).
func statRef(name string, xs []float64, ddof int) float64 {
	n := float64(len(xs))
	switch name {
	case "var", "std":
		var mean float64
		for _, x := range xs {
			mean += x
		}
		mean /= n
		var m2 float64
		for _, x := range xs {
			m2 += (x - mean) * (x - mean)
		}
		v := m2 / max(n-float64(ddof), 0) // (numpy's divisor: m2/0 is +Inf, or NaN)
		if name == "std" {
			v = math.Sqrt(v)
		}
		return v
	case "lse":
		m := math.Inf(-1)
		for _, x := range xs {
			if math.IsNaN(x) {
				return math.NaN()
			}
			m = math.Max(m, x)
		}
		if math.IsInf(m, 0) {
			return m
		}
		var s float64
		for _, x := range xs {
			s += math.Exp(x - m)
		}
		return m + math.Log(s)
	}
	panic(name)
}

// closeTo reports whether got is within tol (relative, or absolute near 0) of want,
// NaN matching NaN and infinities matching exactly.
func closeTo(got, want, tol float64) bool {
	switch {
	case math.IsNaN(want):
		return math.IsNaN(got)
	case math.IsInf(want, 0):
		return got == want
	}
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// statShapes are the shapes and axes the statistics are checked on.
var statShapes = []struct {
	shape []int
	axes  []int // nil: all
}{
	{[]int{0}, nil}, {[]int{1}, nil}, {[]int{7}, nil}, {[]int{33}, []int{0}},
	{[]int{3, 1000}, []int{1}}, {[]int{1000, 3}, []int{0}}, {[]int{5, 6, 7}, []int{0, 2}},
	{[]int{4, 3, 2, 5}, []int{1, 3}}, {[]int{2, 3, 4, 5, 2}, []int{4}}, {[]int{64, 8192}, []int{1}},
	{[]int{2, 70001}, []int{1}}, {[]int{3, 0, 4}, []int{1}}, {[]int{1 << 17}, nil},
}

// TestVarStdLogSumExp checks Var, Std and LogSumExp against a float64 reference over
// every shape and axis set, with keepdims and ddof, on float32 and float64.
func TestVarStdLogSumExp(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, sc := range statShapes {
			n := 1
			for _, v := range sc.shape {
				n *= v
			}
			data := make([]float64, n)
			for i := range data {
				data[i] = rand.NormFloat64()*3 + 10
			}
			a64 := mustArr[float64](t)(gpu.FromSlice(s, data, sc.shape...))
			a32 := mustArr[float32](t)(gpu.Astype[float32](s, a64))
			mask := make([]bool, len(sc.shape))
			for d := range mask {
				mask[d] = sc.axes == nil
			}
			for _, ax := range sc.axes {
				mask[ax] = true
			}
			gs := groups(data, sc.shape, mask)
			for _, name := range []string{"var", "std", "lse"} {
				// (ddof 7: some groups have 7 or fewer elements, whose divisor is 0)
				for _, ddof := range []int{0, 1, 7} {
					if name == "lse" && ddof != 0 {
						continue
					}
					var opts []gpu.ReduceOption
					if sc.axes != nil {
						opts = append(opts, gpu.Axes(sc.axes...))
					}
					if ddof != 0 {
						opts = append(opts, gpu.Ddof(ddof))
					}
					want := make([]float64, len(gs))
					for i, g := range gs {
						want[i] = statRef(name, g, ddof)
					}
					check := func(tp string, got []float64, tol float64) {
						t.Helper()
						if len(got) != len(want) {
							t.Fatalf("%s %s %v axes %v: %d results, want %d", name, tp, sc.shape, sc.axes, len(got), len(want))
						}
						for i := range got {
							if !closeTo(got[i], want[i], tol) {
								t.Fatalf("%s %s %v axes %v ddof %d: [%d] = %v, want %v", name, tp, sc.shape, sc.axes, ddof, i, got[i], want[i])
							}
						}
					}
					run64 := map[string]func() (*gpu.Array[float64], error){
						"var": func() (*gpu.Array[float64], error) { return gpu.Var[float64](s, a64, opts...) },
						"std": func() (*gpu.Array[float64], error) { return gpu.Std[float64](s, a64, opts...) },
						"lse": func() (*gpu.Array[float64], error) { return gpu.LogSumExp[float64](s, a64, opts...) },
					}[name]
					run32 := map[string]func() (*gpu.Array[float32], error){
						"var": func() (*gpu.Array[float32], error) { return gpu.Var[float32](s, a32, opts...) },
						"std": func() (*gpu.Array[float32], error) { return gpu.Std[float32](s, a32, opts...) },
						"lse": func() (*gpu.Array[float32], error) { return gpu.LogSumExp[float32](s, a32, opts...) },
					}[name]
					r64 := mustArr[float64](t)(run64())
					check("float64", toSlice(t, r64), 1e-12)
					r64.Free()
					r32 := mustArr[float32](t)(run32())
					got := toSlice(t, r32)
					g64 := make([]float64, len(got))
					for i, v := range got {
						g64[i] = float64(v)
					}
					check("float32", g64, 2e-5)
					r32.Free()
				}
			}
			// KeepDims keeps the reduced axes as 1.
			kd := mustArr[float32](t)(gpu.Var[float32](s, a32, gpu.Axes(axesOf(sc.axes, len(sc.shape))...), gpu.KeepDims()))
			wantShape := slices.Clone(sc.shape)
			for d, m := range mask {
				if m {
					wantShape[d] = 1
				}
			}
			if !slices.Equal(kd.Shape(), wantShape) {
				t.Fatalf("KeepDims shape %v, want %v", kd.Shape(), wantShape)
			}
			kd.Free()
			a64.Free()
			a32.Free()
		}
	})
}

func axesOf(axes []int, r int) []int {
	if axes != nil {
		return axes
	}
	out := make([]int, r)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestStatSpecialValues checks exact results: the variance of a constant row is
// exactly 0 (every length), NaN propagates, and LogSumExp's infinities.
func TestStatSpecialValues(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range []int{1, 3, 31, 1000, 8192, 100003} {
			for _, c := range []float32{0.1, -7.3e5, 1e-30} {
				data := make([]float32, 2*n)
				for i := range data {
					data[i] = c
				}
				a := mustArr[float32](t)(gpu.FromSlice(s, data, 2, n))
				v := toSlice(t, mustArr[float32](t)(gpu.Var[float32](s, a, gpu.Axes(1))))
				if v[0] != 0 || v[1] != 0 {
					t.Fatalf("Var of a constant row of %d x %v = %v, want exactly 0", n, c, v)
				}
				sm := toSlice(t, mustArr[float32](t)(gpu.Softmax(s, a, 1)))
				for i, x := range sm {
					if math.Abs(float64(x)-1/float64(n)) > 1e-6/float64(n)*10 {
						t.Fatalf("Softmax of a constant row of %d: [%d] = %v", n, i, x)
					}
				}
				a.Free()
			}
		}
		inf, nan := float32(math.Inf(1)), float32(math.NaN())
		rows := [][]float32{
			{1, 2, inf, 3},
			{float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1)), float32(math.Inf(-1))},
			{1, nan, 2, 3},
			{1, 2, 3, float32(math.Inf(-1))},
		}
		var flat []float32
		for _, r := range rows {
			flat = append(flat, r...)
		}
		a := mustArr[float32](t)(gpu.FromSlice(s, flat, 4, 4))
		lse := toSlice(t, mustArr[float32](t)(gpu.LogSumExp[float32](s, a, gpu.Axes(1))))
		want := []float64{math.Inf(1), math.Inf(-1), math.NaN(), statRef("lse", []float64{1, 2, 3}, 0)}
		for i := range want {
			if !closeTo(float64(lse[i]), want[i], 1e-6) {
				t.Fatalf("LogSumExp row %d = %v, want %v", i, lse[i], want[i])
			}
		}
		sm := toSlice(t, mustArr[float32](t)(gpu.Softmax(s, a, 1)))
		for j := 0; j < 4; j++ {
			if !math.IsNaN(float64(sm[j])) || !math.IsNaN(float64(sm[4+j])) || !math.IsNaN(float64(sm[8+j])) {
				t.Fatalf("Softmax of rows with +Inf, all -Inf, NaN: %v", sm[:12])
			}
		}
		if sm[15] != 0 {
			t.Fatalf("Softmax of -Inf beside finite values = %v, want 0", sm[15])
		}
		v := toSlice(t, mustArr[float32](t)(gpu.Var[float32](s, a, gpu.Axes(1))))
		if !math.IsNaN(float64(v[0])) || !math.IsNaN(float64(v[2])) {
			t.Fatalf("Var of rows with Inf and NaN = %v, want NaN", v)
		}
		// ddof past the count of one element: NaN (TestVarDdofPastCount); LogSumExp of
		// nothing: -Inf.
		one := mustArr[float32](t)(gpu.FromSlice(s, []float32{5}, 1))
		if v := toSlice(t, mustArr[float32](t)(gpu.Var[float32](s, one, gpu.Ddof(1)))); !math.IsNaN(float64(v[0])) {
			t.Fatalf("Var ddof=1 of one element = %v, want NaN", v)
		}
		empty := mustArr[float32](t)(gpu.Empty[float32](s, 0))
		if v := toSlice(t, mustArr[float32](t)(gpu.LogSumExp[float32](s, empty))); !math.IsInf(float64(v[0]), -1) {
			t.Fatalf("LogSumExp of nothing = %v, want -Inf", v)
		}
		// Norm of order ±Inf: an empty result is fine (numpy.linalg.norm(zeros((0, 3)),
		// inf, axis=1) is empty); a maximum over an empty axis is an error, as Max's.
		for _, ord := range []float64{math.Inf(1), math.Inf(-1)} {
			rows := mustArr[float32](t)(gpu.Zeros[float32](s, 0, 3))
			if v, err := gpu.Norm[float32](s, rows, ord, gpu.Axes(1)); err != nil || v.Size() != 0 {
				t.Fatalf("Norm %v of (0, 3) along axis 1: %v, %v; want an empty array", ord, v, err)
			}
			cols := mustArr[float32](t)(gpu.Zeros[float32](s, 3, 0))
			if _, err := gpu.Norm[float32](s, cols, ord, gpu.Axes(1)); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("Norm %v of (3, 0) along axis 1: %v, want ErrInvalidValue", ord, err)
			}
			if _, err := gpu.Norm[float32](s, empty, ord); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("Norm %v of nothing: %v, want ErrInvalidValue", ord, err)
			}
		}
	})
}

// softmaxRef computes softmax (log: log-softmax) of each row along the last axis.
func softmaxRef(x []float64, n int, log bool) []float64 {
	out := make([]float64, len(x))
	for r := 0; r < len(x)/n; r++ {
		row := x[r*n : (r+1)*n]
		lse := statRef("lse", row, 0)
		for j, v := range row {
			if log {
				out[r*n+j] = v - lse
			} else {
				out[r*n+j] = math.Exp(v - lse)
			}
		}
	}
	return out
}

// TestSoftmaxLayerNorm checks Softmax, LogSoftmax (every axis) and LayerNorm (with and
// without weight and bias) against float64 references.
func TestSoftmaxLayerNorm(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range [][]int{{1}, {5}, {3, 7}, {4, 1000}, {2, 3, 33}, {3, 40000}, {2, 70001}, {300, 64}, {1, 2, 3, 4, 5}} {
			n := 1
			for _, v := range shape {
				n *= v
			}
			data := make([]float64, n)
			for i := range data {
				data[i] = rand.NormFloat64() * 4
			}
			a64 := mustArr[float64](t)(gpu.FromSlice(s, data, shape...))
			a32 := mustArr[float32](t)(gpu.Astype[float32](s, a64))
			for axis := range shape {
				// Reference along axis: move it last on the host.
				perm, moved := moveLast(data, shape, axis)
				for _, log := range []bool{false, true} {
					ref := softmaxRef(moved, shape[axis], log)
					want := unmoveLast(ref, shape, axis, perm)
					f := gpu.Softmax[float32]
					if log {
						f = gpu.LogSoftmax[float32]
					}
					got := toSlice(t, mustArr[float32](t)(f(s, a32, axis)))
					for i := range want {
						if !closeTo(float64(got[i]), want[i], 1e-5) {
							t.Fatalf("softmax(log=%v) %v axis %d: [%d] = %v, want %v", log, shape, axis, i, got[i], want[i])
						}
					}
				}
			}
			for nd := 1; nd <= len(shape); nd++ {
				m := 1
				for _, v := range shape[len(shape)-nd:] {
					m *= v
				}
				w, b := make([]float64, m), make([]float64, m)
				for i := range w {
					w[i], b[i] = rand.Float64()+0.5, rand.NormFloat64()
				}
				wa := mustArr[float64](t)(gpu.FromSlice(s, w, shape[len(shape)-nd:]...))
				ba := mustArr[float64](t)(gpu.FromSlice(s, b, shape[len(shape)-nd:]...))
				for _, withWB := range []bool{false, true} {
					var wp, bp *gpu.Array[float64]
					if withWB {
						wp, bp = wa, ba
					}
					got := toSlice(t, mustArr[float64](t)(gpu.LayerNorm(s, a64, nd, wp, bp, 1e-5)))
					for r := 0; r < n/m; r++ {
						row := data[r*m : (r+1)*m]
						mean, v := 0.0, statRef("var", row, 0)
						for _, x := range row {
							mean += x
						}
						mean /= float64(m)
						for j, x := range row {
							y := (x - mean) / math.Sqrt(v+1e-5)
							if withWB {
								y = y*w[j] + b[j]
							}
							if !closeTo(got[r*m+j], y, 1e-9) {
								t.Fatalf("LayerNorm %v over %d axes (weights %v): [%d] = %v, want %v", shape, nd, withWB, r*m+j, got[r*m+j], y)
							}
						}
					}
				}
				wa.Free()
				ba.Free()
			}
			a64.Free()
			a32.Free()
		}
	})
}

// moveLast returns data with axis moved last (and the permutation).
func moveLast(data []float64, shape []int, axis int) ([]int, []float64) {
	r := len(shape)
	perm := make([]int, 0, r)
	for d := 0; d < r; d++ {
		if d != axis {
			perm = append(perm, d)
		}
	}
	perm = append(perm, axis)
	return perm, permuteHost(data, shape, perm)
}

func unmoveLast(data []float64, shape []int, axis int, perm []int) []float64 {
	pshape := make([]int, len(shape))
	for i, p := range perm {
		pshape[i] = shape[p]
	}
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	return permuteHost(data, pshape, inv)
}

// permuteHost returns data (row-major, shape) with axes permuted: out axis i is axis perm[i].
func permuteHost(data []float64, shape, perm []int) []float64 {
	r := len(shape)
	st := make([]int, r)
	acc := 1
	for d := r - 1; d >= 0; d-- {
		st[d] = acc
		acc *= shape[d]
	}
	oshape := make([]int, r)
	for i, p := range perm {
		oshape[i] = shape[p]
	}
	out := make([]float64, len(data))
	idx := make([]int, r)
	for o := range out {
		off := 0
		for i := range idx {
			off += idx[i] * st[perm[i]]
		}
		out[o] = data[off]
		for i := r - 1; i >= 0; i-- {
			idx[i]++
			if idx[i] < oshape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return out
}

// TestNorm checks the vector norms against float64 references.
func TestNorm(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		data := make([]float64, 6*50)
		for i := range data {
			data[i] = rand.NormFloat64()
			if i%7 == 0 {
				data[i] = 0
			}
		}
		a := mustArr[float64](t)(gpu.FromSlice(s, data, 6, 50))
		for _, ord := range []float64{2, 1, math.Inf(1), math.Inf(-1), 0, 3, 0.5} {
			got := toSlice(t, mustArr[float64](t)(gpu.Norm[float64](s, a, ord, gpu.Axes(1))))
			for r := 0; r < 6; r++ {
				row := data[r*50 : (r+1)*50]
				var want float64
				switch {
				case math.IsInf(ord, 1):
					for _, x := range row {
						want = math.Max(want, math.Abs(x))
					}
				case math.IsInf(ord, -1):
					want = math.Inf(1)
					for _, x := range row {
						want = math.Min(want, math.Abs(x))
					}
				case ord == 0:
					for _, x := range row {
						if x != 0 {
							want++
						}
					}
				default:
					for _, x := range row {
						want += math.Pow(math.Abs(x), ord)
					}
					want = math.Pow(want, 1/ord)
				}
				if !closeTo(got[r], want, 1e-12) {
					t.Fatalf("Norm ord %v row %d = %v, want %v", ord, r, got[r], want)
				}
			}
		}
		// Integers into float64; Frobenius over both axes.
		ints := mustArr[int32](t)(gpu.FromSlice(s, []int32{3, 4, 0, 0}, 2, 2))
		if v := toSlice(t, mustArr[float64](t)(gpu.Norm[float64](s, ints, 2))); v[0] != 5 {
			t.Fatalf("Norm of [[3 4] [0 0]] = %v, want 5", v)
		}
		if _, err := gpu.Norm[float64](s, a, math.NaN()); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("Norm ord NaN: %v", err)
		}
		// An order or its reciprocal past float32's range: Inf in float32, as NumPy's
		// absx**ord and ret**reciprocal(ord, dtype=float32) give, not an error.
		small := [][]float32{{0, 0.5}, {3, 4}, {0.5, 3}}
		f32 := mustArr[float32](t)(gpu.FromSlice(s, slices.Concat(small...), 3, 2))
		for _, ord := range []float64{1e-39, 1e39, 1e-300} {
			got := toSlice(t, mustArr[float32](t)(gpu.Norm[float32](s, f32, ord, gpu.Axes(1))))
			p := float64(float32(ord))
			for r, row := range small {
				var sum float64
				for _, x := range row {
					sum += math.Pow(math.Abs(float64(x)), p)
				}
				want := float32(math.Pow(sum, float64(float32(1/ord))))
				if got[r] != want {
					t.Fatalf("Norm[float32] ord %v of %v = %v, want %v", ord, row, got[r], want)
				}
			}
		}
		f32.Free()
		a.Free()
	})
}

// TestStatErrors checks bad arguments.
func TestStatErrors(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float32](t)(gpu.FromSlice(s, randF32(12), 3, 4))
		w := mustArr[float32](t)(gpu.FromSlice(s, randF32(3), 3))
		for i, err := range []error{
			func() error { _, err := gpu.Var[float32](s, (*gpu.Array[float32])(nil)); return err }(),
			func() error { _, err := gpu.Var[float32](nil, a); return err }(),
			func() error { _, err := gpu.Var[float32](s, a, gpu.Axes(2)); return err }(),
			func() error { _, err := gpu.Sum[float32](s, a, gpu.Ddof(1)); return err }(),
			func() error { _, err := gpu.LogSumExp[float32](s, a, gpu.Ddof(1)); return err }(),
			func() error { _, err := gpu.Softmax(s, a, 2); return err }(),
			func() error { _, err := gpu.LayerNorm(s, a, 3, nil, nil, 1e-5); return err }(),
			func() error { _, err := gpu.LayerNorm(s, a, 1, w, nil, 1e-5); return err }(),
			func() error { _, err := gpu.LayerNorm(s, a, 1, nil, nil, -1); return err }(),
		} {
			if !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("case %d: error %v, want ErrInvalidValue", i, err)
			}
		}
		a.Free()
		w.Free()
	})
}

// TestStatInputsUnchanged checks that the statistics leave their inputs alone, over a
// strided view.
func TestStatInputsUnchanged(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		data := randF32(6 * 40)
		a := mustArr[float32](t)(gpu.FromSlice(s, data, 6, 40))
		v, err := a.Transpose()
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []func() error{
			func() error { _, err := gpu.Var[float32](s, v, gpu.Axes(0)); return err },
			func() error { _, err := gpu.Softmax(s, v, 0); return err },
			func() error { _, err := gpu.LogSoftmax(s, v, 1); return err },
			func() error { _, err := gpu.LayerNorm(s, v, 1, nil, nil, 1e-5); return err },
		} {
			if err := f(); err != nil {
				t.Fatal(err)
			}
		}
		if got := toSlice(t, a); !slices.Equal(got, data) {
			t.Fatal("input changed")
		}
		a.Free()
	})
}

func ExampleSoftmax() {
	dev, _ := gpu.OpenBackend("cpu", 0)
	s, _ := dev.NewStream()
	defer s.Close()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 0, 0, 0}, 2, 3)
	p, _ := gpu.Softmax(s, x, 1)
	out, _ := p.ToSlice(bg)
	for i, v := range out {
		out[i] = float32(math.Round(float64(v)*1e4) / 1e4)
	}
	fmt.Println(out)
	// Output: [0.09 0.2447 0.6652 0.3333 0.3333 0.3333]
}

func ExampleVar() {
	dev, _ := gpu.OpenBackend("cpu", 0)
	s, _ := dev.NewStream()
	defer s.Close()
	x, _ := gpu.FromSlice(s, []float64{1, 2, 3, 4, 10, 10, 10, 10}, 2, 4)
	v, _ := gpu.Var[float64](s, x, gpu.Axes(1), gpu.Ddof(1))
	out, _ := v.ToSlice(bg)
	fmt.Println(out)
	// Output: [1.6666666666666667 0]
}

// TestSoftmaxTileEdges checks float32 Softmax, LogSoftmax and LogSumExp on rows around
// the length that one block keeps in registers (16384: 1024 threads of 16; 32768: of
// 32) and just past it (read twice), with enough rows on CUDA that the rows are not
// split across blocks (the kept-row kernel runs), and special rows among them: a NaN, a
// +Inf, all -Inf, -Inf beside finite values, and values far below the maximum (exp
// underflows).
func TestSoftmaxTileEdges(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rows := 4
		if d.Backend() != "cpu" {
			rows = 300 // more than two rows a multiprocessor
		}
		rng := rand.New(rand.NewPCG(11, 12))
		for _, n := range []int{16383, 16384, 32768, 32769} {
			if testing.Short() && n > 16384 {
				continue
			}
			t.Run(fmt.Sprint(n), func(t *testing.T) {
				data := make([]float32, rows*n)
				for i := range data {
					data[i] = float32(rng.NormFloat64() * 8)
				}
				row := func(r int) []float32 { return data[r*n : (r+1)*n] }
				inf := float32(math.Inf(1))
				row(0)[n-1] = float32(math.NaN())
				row(1)[n/2] = inf
				for i := range row(2) {
					row(2)[i] = -inf
				}
				for i := 0; i < n; i += 3 {
					row(rows - 1)[i] = -inf
				}
				row(rows - 1)[1] = 200 // the rest underflow or nearly
				a := mustArr[float32](t)(gpu.FromSlice(s, data, rows, n))
				defer a.Free()
				sm := toSlice(t, mustArr[float32](t)(gpu.Softmax(s, a, 1)))
				lsm := toSlice(t, mustArr[float32](t)(gpu.LogSoftmax(s, a, 1)))
				lse := toSlice(t, mustArr[float32](t)(gpu.LogSumExp[float32](s, a, gpu.Axes(1))))
				x64 := make([]float64, n)
				for r := range rows {
					for i, v := range row(r) {
						x64[i] = float64(v)
					}
					want := statRef("lse", x64, 0)
					if !closeTo(float64(lse[r]), want, 2e-6) {
						t.Fatalf("LogSumExp row %d = %v, want %v", r, lse[r], want)
					}
					for i, v := range x64 {
						ws, wl := math.NaN(), math.NaN()
						if r != 0 && r != 1 && r != 2 {
							ws, wl = math.Exp(v-want), v-want
						}
						if got := sm[r*n+i]; !closeTo(float64(got), ws, 1e-5) {
							t.Fatalf("Softmax row %d [%d] (x %v) = %v, want %v", r, i, v, got, ws)
						}
						if got := lsm[r*n+i]; !closeTo(float64(got), wl, 1e-5) {
							t.Fatalf("LogSoftmax row %d [%d] (x %v) = %v, want %v", r, i, v, got, wl)
						}
					}
				}
				// Inputs unchanged.
				back := toSlice(t, a)
				for i := range back {
					if math.Float32bits(back[i]) != math.Float32bits(data[i]) {
						t.Fatalf("input [%d] changed: %v, was %v", i, back[i], data[i])
					}
				}
			})
		}
	})
}

// TestVarShifted: Var, Std and LayerNorm of float32 rows far from 0 next to their
// spread (a mean of 10^4, a spread of 1), against float64 over the same float32
// values. The moments are of x minus the row's first element, so the merges of partial
// means keep their precision (unshifted, Var's relative error was about 10^-4).
// On every device and on the simulated CUDA device (the PTX of every pass: one tile
// kept in registers, tiles in a loop, rows split into chunks; the plans pick them by
// row length).
func TestVarShifted(t *testing.T) {
	run := func(t *testing.T, s *gpu.Stream, shapes [][2]int) {
		rng := rand.New(rand.NewPCG(31, 4))
		for _, sh := range shapes {
			rows, n := sh[0], sh[1]
			xs := make([]float32, rows*n)
			for i := range xs {
				xs[i] = float32(1e4 + rng.Float64())
			}
			a := mustArr[float32](t)(gpu.FromSlice(s, xs, rows, n))
			v := toSlice(t, mustArr[float32](t)(gpu.Var[float32](s, a, gpu.Axes(1))))
			sd := toSlice(t, mustArr[float32](t)(gpu.Std[float32](s, a, gpu.Axes(1), gpu.Ddof(1))))
			ln := toSlice(t, mustArr[float32](t)(gpu.LayerNorm(s, a, 1, nil, nil, 1e-5)))
			a.Free()
			for r := range rows {
				row := make([]float64, n)
				for i := range row {
					row[i] = float64(xs[r*n+i])
				}
				wv, ws := statRef("var", row, 0), statRef("std", row, 1)
				if wv == 0 {
					if v[r] != 0 {
						t.Fatalf("%v row %d: Var %v, want 0", sh, r, v[r])
					}
					continue
				}
				if e := math.Abs(float64(v[r])-wv) / wv; e > 1e-5 {
					t.Fatalf("%v row %d: Var %v, want %v (relative error %.2g)", sh, r, v[r], wv, e)
				}
				if e := math.Abs(float64(sd[r])-ws) / ws; e > 1e-5 {
					t.Fatalf("%v row %d: Std ddof 1 %v, want %v (relative error %.2g)", sh, r, sd[r], ws, e)
				}
				mean := 0.0
				for _, x := range row {
					mean += x
				}
				mean /= float64(n)
				rstd := 1 / math.Sqrt(wv+1e-5)
				for i, x := range row {
					// Within the rounding of the row's center to float32 (a few 10^-3
					// of a spread of 1 where the write loads the values again).
					if want, got := (x-mean)*rstd, float64(ln[r*n+i]); math.Abs(got-want) > 4e-3 {
						t.Fatalf("%v row %d: LayerNorm[%d] = %v, want %v", sh, r, i, got, want)
					}
				}
			}
		}
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		run(t, s, [][2]int{{1, 1000000}, {4, 100003}, {300, 1000}, {3, 1}})
	})
	t.Run("sim", func(t *testing.T) {
		if testing.Short() {
			t.Skip("the simulator is slow")
		}
		_, s := simStream(t)
		run(t, s, [][2]int{{1, 70001}, {2, 40003}, {3, 5000}, {40, 100}})
	})
}

// TestVarDdofPastCount: Var and Std with ddof at or past a row's count divide by 0, as
// NumPy's do (numpy.var: max(n - ddof, 0)): +Inf where the row's elements differ, NaN
// where they are all equal; on every device and the simulated CUDA device (the PTX).
func TestVarDdofPastCount(t *testing.T) {
	run := func(t *testing.T, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(7, 11))
		for _, n := range []int{1, 2, 3, 40} {
			// Row 0 random, row 1 all one value; ddof n - 1 (a divisor of 1), n and n + 2.
			xs := make([]float64, 2*n)
			c := float64(rng.IntN(10)) - 4.5 // (its sums exact: a mean of exactly c, M2 0)
			for i := range n {
				xs[i], xs[n+i] = rng.Float64()*10-5, c
			}
			a64 := mustArr[float64](t)(gpu.FromSlice(s, xs, 2, n))
			a32 := mustArr[float32](t)(gpu.Astype[float32](s, a64))
			for _, ddof := range []int{n - 1, n, n + 2} {
				want := [2]float64{statRef("var", xs[:n], ddof), statRef("var", xs[n:], ddof)}
				if ddof >= n && (!math.IsInf(want[0], 1) && n > 1 || !math.IsNaN(want[1])) {
					t.Fatalf("the reference of n=%d ddof=%d: %v", n, ddof, want)
				}
				v64 := toSlice(t, mustArr[float64](t)(gpu.Var[float64](s, a64, gpu.Axes(1), gpu.Ddof(ddof))))
				sd64 := toSlice(t, mustArr[float64](t)(gpu.Std[float64](s, a64, gpu.Axes(1), gpu.Ddof(ddof))))
				v32 := toSlice(t, mustArr[float32](t)(gpu.Var[float32](s, a32, gpu.Axes(1), gpu.Ddof(ddof))))
				for r := range 2 {
					if !closeTo(v64[r], want[r], 1e-12) || !closeTo(sd64[r], math.Sqrt(want[r]), 1e-12) ||
						!closeTo(float64(v32[r]), want[r], 1e-4) {
						t.Fatalf("n=%d ddof=%d row %d: Var %v, Std %v, Var of float32 %v, want %v", n, ddof, r, v64[r], sd64[r], v32[r], want[r])
					}
				}
			}
			a64.Free()
			a32.Free()
		}
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) { run(t, s) })
	t.Run("sim", func(t *testing.T) {
		_, s := simStream(t)
		run(t, s)
	})
}

// TestNormNegativeOrder: numpy.linalg.norm's vector norms of negative finite order,
// sum(|x|^ord)^(1/ord): 0 for a row with a zero (|0|^ord is +Inf), +Inf for an empty
// row; against float64 on every device and the simulated CUDA device (pow's PTX).
func TestNormNegativeOrder(t *testing.T) {
	run := func(t *testing.T, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(3, 9))
		const rows, n = 5, 37
		data := make([]float64, rows*n)
		for i := range data {
			data[i] = rng.NormFloat64() * 4
		}
		data[2*n+5] = 0 // row 2 has a zero
		data[3*n+1] = math.Copysign(0, -1)
		a := mustArr[float64](t)(gpu.FromSlice(s, data, rows, n))
		defer a.Free()
		a32 := mustArr[float32](t)(gpu.Astype[float32](s, a))
		defer a32.Free()
		empty := mustArr[float64](t)(gpu.Empty[float64](s, 2, 0))
		defer empty.Free()
		for _, ord := range []float64{-1, -2, -0.5, -3.5} {
			got := toSlice(t, mustArr[float64](t)(gpu.Norm[float64](s, a, ord, gpu.Axes(1))))
			got32 := toSlice(t, mustArr[float32](t)(gpu.Norm[float32](s, a32, ord, gpu.Axes(1))))
			for r := range rows {
				var sum, sum32 float64
				for _, x := range data[r*n : (r+1)*n] {
					sum += math.Pow(math.Abs(x), ord)
					sum32 += math.Pow(math.Abs(float64(float32(x))), ord)
				}
				want, want32 := math.Pow(sum, 1/ord), math.Pow(sum32, 1/ord)
				if (r == 2 || r == 3) && want != 0 {
					t.Fatalf("the reference of row %d: %v, want 0", r, want)
				}
				if !closeTo(got[r], want, 1e-12) || !closeTo(float64(got32[r]), want32, 1e-5) {
					t.Fatalf("Norm ord %v row %d = %v (float32 %v), want %v (%v)", ord, r, got[r], got32[r], want, want32)
				}
			}
			if e := toSlice(t, mustArr[float64](t)(gpu.Norm[float64](s, empty, ord, gpu.Axes(1)))); !math.IsInf(e[0], 1) || !math.IsInf(e[1], 1) {
				t.Fatalf("Norm ord %v of empty rows = %v, want +Inf (0^(1/ord))", ord, e)
			}
		}
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) { run(t, s) })
	t.Run("sim", func(t *testing.T) {
		_, s := simStream(t)
		run(t, s)
	})
}
