package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
)

// devices returns the devices to test: the CPU, and CUDA device 0 when there is one.
func devices(t *testing.T) []*gpu.Device {
	t.Helper()
	cpuDev, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []*gpu.Device{cpuDev}
	if d, err := gpu.OpenBackend("cuda", 0); err == nil {
		out = append(out, d)
	} else if !errors.Is(err, gpu.ErrNoDevice) {
		t.Fatal(err)
	}
	return out
}

// freshCPU returns a new CPU device, for tests that close, drop or fault what they use
// (a fault is sticky), and its conformance kernels.
func freshCPU(t *testing.T) (*gpu.Device, *conformance.K) {
	t.Helper()
	d, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	return d, conformance.Kernels(t, d)
}

// freshStream returns a stream of a new CPU device (freshCPU), closed when t ends.
func freshStream(t *testing.T) *gpu.Stream {
	t.Helper()
	d, _ := freshCPU(t)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func forDevices(t *testing.T, f func(t *testing.T, d *gpu.Device, s *gpu.Stream)) {
	for _, d := range devices(t) {
		t.Run(d.Backend(), func(t *testing.T) {
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f(t, d, s)
		})
	}
}

var sizes = []int{0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 1<<20 + 3}

var bg = context.Background()

func randF32(n int) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(rand.NormFloat64())
	}
	return out
}

// toSlice returns a's elements (a.ToSlice), failing t on an error.
func toSlice[T gpu.Elem](t testing.TB, a *gpu.Array[T]) []T {
	t.Helper()
	out, err := a.ToSlice(bg)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// mustArr is must for arrays.
func mustArr[T gpu.Elem](t *testing.T) func(*gpu.Array[T], error) *gpu.Array[T] {
	return must[*gpu.Array[T]](t)
}

func TestConstruct(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range sizes {
			z := mustArr[float64](t)(gpu.Zeros[float64](s, n))
			o := mustArr[int32](t)(gpu.Ones[int32](s, n))
			f := mustArr[float32](t)(gpu.Full[float32](s, 2.5, n))
			f8 := mustArr[int64](t)(gpu.Full[int64](s, -3<<40+7, n))
			b := mustArr[bool](t)(gpu.Full(s, true, n))
			for i, v := range toSlice(t, z) {
				if v != 0 {
					t.Fatalf("Zeros(%d)[%d] = %v", n, i, v)
				}
			}
			for i, v := range toSlice(t, o) {
				if v != 1 {
					t.Fatalf("Ones(%d)[%d] = %v", n, i, v)
				}
			}
			for i, v := range toSlice(t, f) {
				if v != 2.5 {
					t.Fatalf("Full(%d)[%d] = %v", n, i, v)
				}
			}
			for i, v := range toSlice(t, f8) {
				if v != -3<<40+7 {
					t.Fatalf("Full int64(%d)[%d] = %v", n, i, v)
				}
			}
			for i, v := range toSlice(t, b) {
				if !v {
					t.Fatalf("Full bool(%d)[%d] = %v", n, i, v)
				}
			}
			for _, a := range []interface{ Free() error }{z, o, f, f8, b} {
				a.Free()
			}
		}
	})
}

func TestFromSliceRoundTrip(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range sizes {
			data := randF32(n)
			a := mustArr[float32](t)(gpu.FromSlice(s, data))
			got := toSlice(t, a)
			if !slices.Equal(got, data) {
				t.Fatalf("round trip of %d elements differs", n)
			}
			a.Free()
		}
		if _, err := gpu.FromSlice(s, []float32{1, 2, 3}, 2, 2); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("FromSlice with a wrong shape = %v", err)
		}
	})
}

func TestEvalFused(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range sizes {
			xs := randF32(n)
			x := mustArr[float32](t)(gpu.FromSlice(s, xs))
			y := mustArr[float32](t)(gpu.Eval[float32](s, "a*x + b", gpu.Vars{"a": 2.0, "x": x, "b": 1.0}))
			got := toSlice(t, y)
			for i, v := range xs {
				if want := 2*v + 1; got[i] != want {
					t.Fatalf("n=%d: a*x+b at %d = %v, want %v", n, i, got[i], want)
				}
			}
			// The input is unchanged.
			if !slices.Equal(toSlice(t, x), xs) {
				t.Fatalf("n=%d: Eval modified its input", n)
			}
			x.Free()
			y.Free()
		}
	})
}

func TestEvalBroadcastStrided(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		const r, c = 37, 53
		as := randF32(r * c)
		bs := randF32(c)
		a := mustArr[float32](t)(gpu.FromSlice(s, as, r, c))
		b := mustArr[float32](t)(gpu.FromSlice(s, bs, c))
		// Broadcast a row over the rows.
		y := mustArr[float64](t)(gpu.Eval[float64](s, "a - b", gpu.Vars{"a": a, "b": b}))
		got := toSlice(t, y)
		for i := range r {
			for j := range c {
				if want := float64(as[i*c+j] - bs[j]); got[i*c+j] != want {
					t.Fatalf("a-b at (%d,%d) = %v, want %v", i, j, got[i*c+j], want)
				}
			}
		}
		// A transposed (strided) operand.
		at, err := a.Transpose()
		if err != nil {
			t.Fatal(err)
		}
		tt := mustArr[float32](t)(gpu.Eval[float32](s, "x * 2", gpu.Vars{"x": at}))
		if sh := tt.Shape(); !slices.Equal(sh, []int{c, r}) {
			t.Fatalf("shape %v", sh)
		}
		got32 := toSlice(t, tt)
		for i := range c {
			for j := range r {
				if want := 2 * as[j*c+i]; got32[i*r+j] != want {
					t.Fatalf("transpose*2 at (%d,%d) = %v, want %v", i, j, got32[i*r+j], want)
				}
			}
		}
		// A reversed, stepped slice written in place.
		v, err := a.Slice(gpu.R(1, gpu.End, 3), gpu.R(0, gpu.End, -1))
		if err != nil {
			t.Fatal(err)
		}
		vs := toSlice(t, v)
		if err := gpu.EvalInto(s, v, "v + 1", gpu.Vars{"v": v}); err != nil {
			t.Fatal(err)
		}
		after := toSlice(t, a)
		k := 0
		for i := 1; i < r; i += 3 {
			for j := c - 1; j >= 0; j-- {
				if after[i*c+j] != vs[k]+1 {
					t.Fatalf("in-place update through a reversed view at (%d,%d) = %v, want %v", i, j, after[i*c+j], vs[k]+1)
				}
				k++
			}
		}
		for i := 0; i < r; i++ {
			if i%3 == 1 {
				continue
			}
			for j := range c {
				if after[i*c+j] != as[i*c+j] {
					t.Fatalf("row %d outside the view changed", i)
				}
			}
		}
	})
}

func TestEvalTypes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		n := 1000
		is := make([]int32, n)
		for i := range is {
			is[i] = rand.Int32N(2000) - 1000
		}
		a := mustArr[int32](t)(gpu.FromSlice(s, is))
		// int32 with a weak float: float64 (NEP 50), then converted to float32.
		h := mustArr[float32](t)(gpu.Eval[float32](s, "a * 0.5", gpu.Vars{"a": a}))
		for i, v := range toSlice(t, h) {
			if want := float32(float64(is[i]) * 0.5); v != want {
				t.Fatalf("a*0.5 at %d = %v, want %v", i, v, want)
			}
		}
		// Integer division truncates toward zero and division by zero gives 0.
		q := mustArr[int32](t)(gpu.Eval[int32](s, "a / 7 + a % 7 + a / 0", gpu.Vars{"a": a}))
		for i, v := range toSlice(t, q) {
			if want := is[i]/7 + is[i]%7; v != want {
				t.Fatalf("integer ops at %d = %v, want %v", i, v, want)
			}
		}
		// Comparisons give bool; where selects.
		m := mustArr[bool](t)(gpu.Eval[bool](s, "a > 0", gpu.Vars{"a": a}))
		w := mustArr[int64](t)(gpu.Eval[int64](s, "where(m, a, -a)", gpu.Vars{"m": m, "a": a}))
		mv, wv := toSlice(t, m), toSlice(t, w)
		for i, x := range is {
			if mv[i] != (x > 0) {
				t.Fatalf("a > 0 at %d = %v", i, mv[i])
			}
			if want := int64(max(x, -x)); wv[i] != want {
				t.Fatalf("where at %d = %v, want %v", i, wv[i], want)
			}
		}
		// Math functions within a few ulp of float64.
		xs := randF32(n)
		x := mustArr[float32](t)(gpu.FromSlice(s, xs))
		y := mustArr[float32](t)(gpu.Eval[float32](s, "exp(x) + sin(x)*cos(x) - tanh(x) + sqrt(abs(x))", gpu.Vars{"x": x}))
		for i, v := range toSlice(t, y) {
			f := float64(xs[i])
			want := math.Exp(f) + math.Sin(f)*math.Cos(f) - math.Tanh(f) + math.Sqrt(math.Abs(f))
			if math.Abs(float64(v)-want) > 1e-5*math.Max(1, math.Abs(want)) {
				t.Fatalf("math at %d: %v, want %v", i, v, want)
			}
		}
		// Errors, not panics.
		if _, err := gpu.Eval[float32](s, "x +", gpu.Vars{"x": x}); err == nil {
			t.Error("a syntax error was accepted")
		}
		if _, err := gpu.Eval[float32](s, "y", gpu.Vars{"x": x}); err == nil {
			t.Error("an unknown name was accepted")
		}
		b2 := mustArr[float32](t)(gpu.Zeros[float32](s, 3, 7))
		if _, err := gpu.Eval[float32](s, "x + b", gpu.Vars{"x": x, "b": b2}); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("shapes that don't broadcast = %v", err)
		}
	})
}

func TestViews(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		xs := randF32(24)
		a := mustArr[float32](t)(gpu.FromSlice(s, xs, 2, 3, 4))
		r, err := a.Reshape(4, -1)
		if err != nil || !slices.Equal(r.Shape(), []int{4, 6}) {
			t.Fatalf("Reshape: %v %v", r, err)
		}
		tr, _ := a.Transpose(2, 0, 1)
		c := mustArr[float32](t)(gpu.Contiguous(s, tr))
		got := toSlice(t, c)
		for i := range 4 {
			for j := range 2 {
				for k := range 3 {
					if got[i*6+j*3+k] != xs[j*12+k*4+i] {
						t.Fatalf("transpose(2,0,1) at (%d,%d,%d)", i, j, k)
					}
				}
			}
		}
		if _, err := tr.Reshape(24); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Reshape of a non-contiguous view = %v", err)
		}
		bc, err := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3}, 3)).BroadcastTo(2, 3)
		if err != nil {
			t.Fatal(err)
		}
		if got := toSlice(t, bc); !slices.Equal(got, []float32{1, 2, 3, 1, 2, 3}) {
			t.Errorf("BroadcastTo = %v", got)
		}
		v, err := a.At(bg, 1, 2, 3)
		if err != nil || v != xs[23] {
			t.Errorf("At = %v, %v; want %v", v, err, xs[23])
		}
		if err := a.Set(bg, 42, 0, 1, 2); err != nil {
			t.Fatal(err)
		}
		if v, _ := a.At(bg, 0, 1, 2); v != 42 {
			t.Errorf("At after Set = %v", v)
		}
		if _, err := a.At(bg, 2, 0, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("At out of range = %v", err)
		}
	})
}

func TestArangeLinspaceAstype(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float64](t)(gpu.Arange[float64](s, 1, 10, 0.5))
		want := []float64{}
		for v := 1.0; v < 10; v += 0.5 {
			want = append(want, v)
		}
		if got := toSlice(t, a); !slices.Equal(got, want) {
			t.Errorf("Arange = %v", got)
		}
		l := mustArr[float32](t)(gpu.Linspace[float32](s, 0, 1, 5))
		if got := toSlice(t, l); !slices.Equal(got, []float32{0, 0.25, 0.5, 0.75, 1}) {
			t.Errorf("Linspace = %v", got)
		}
		i := mustArr[int32](t)(gpu.Astype[int32](s, a))
		for k, v := range toSlice(t, i) {
			if v != int32(want[k]) {
				t.Fatalf("Astype at %d = %v", k, v)
			}
		}
	})
}

// TestArangeIntegersExact checks that integer Arange is exact in int64 (start and step
// never pass through float64) and that a bound NumPy can't count is an error.
func TestArangeIntegersExact(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[int64](t)(gpu.Arange[int64](s, 1<<53+1, 1<<53+4, 1))
		if got, want := toSlice(t, a), []int64{1<<53 + 1, 1<<53 + 2, 1<<53 + 3}; !slices.Equal(got, want) {
			t.Errorf("Arange(2^53+1, 2^53+4, 1) = %v, want %v", got, want)
		}
		a = mustArr[int64](t)(gpu.Arange[int64](s, math.MinInt64, math.MaxInt64, math.MaxInt64))
		if got, want := toSlice(t, a), []int64{math.MinInt64, -1, math.MaxInt64 - 1}; !slices.Equal(got, want) {
			t.Errorf("Arange(MinInt64, MaxInt64, MaxInt64) = %v, want %v", got, want)
		}
		a = mustArr[int64](t)(gpu.Arange[int64](s, 10, -2, -4))
		if got, want := toSlice(t, a), []int64{10, 6, 2}; !slices.Equal(got, want) {
			t.Errorf("Arange(10, -2, -4) = %v, want %v", got, want)
		}
		u := mustArr[uint64](t)(gpu.Arange[uint64](s, math.MaxUint64-5, math.MaxUint64, 2))
		if got, want := toSlice(t, u), []uint64{math.MaxUint64 - 5, math.MaxUint64 - 3, math.MaxUint64 - 1}; !slices.Equal(got, want) {
			t.Errorf("Arange(MaxUint64-5, MaxUint64, 2) = %v, want %v", got, want)
		}
		if _, err := gpu.Arange[float32](s, 0, float32(math.Inf(1)), 1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Arange(0, +Inf, 1): %v, want ErrInvalidValue", err)
		}
	})
}

// TestReshapeOverflow: a shape whose product wraps around to the array's size is an
// error, not a view whose indices reach past the buffer.
func TestReshapeOverflow(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		x := mustArr[int32](t)(gpu.Zeros[int32](s, 12))
		// (2^62+3)*2*2 = 2^64 + 12, which wraps to 12.
		if r, err := x.Reshape(1<<62+3, 2, 2); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Reshape(2^62+3, 2, 2) of 12 elements = %v, %v; want ErrInvalidValue", r, err)
		}
		if r, err := x.Reshape(1<<62+3, -1, 4); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Reshape(2^62+3, -1, 4) of 12 elements = %v, %v; want ErrInvalidValue", r, err)
		}
	})
}

// Named element types (Elem allows ~float32 and the like) construct the same values as
// their underlying types.
type celsius float32
type count int32
type flag bool

func TestNamedElementTypes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		if got := toSlice(t, mustArr[celsius](t)(gpu.Ones[celsius](s, 2))); !slices.Equal(got, []celsius{1, 1}) {
			t.Errorf("Ones[celsius] = %v", got)
		}
		if got := toSlice(t, mustArr[count](t)(gpu.Ones[count](s, 2))); !slices.Equal(got, []count{1, 1}) {
			t.Errorf("Ones[count] = %v", got)
		}
		if got := toSlice(t, mustArr[flag](t)(gpu.Ones[flag](s, 2))); !slices.Equal(got, []flag{true, true}) {
			t.Errorf("Ones[flag] = %v", got)
		}
		if got := toSlice(t, mustArr[celsius](t)(gpu.Arange[celsius](s, 0, 3, 1))); !slices.Equal(got, []celsius{0, 1, 2}) {
			t.Errorf("Arange[celsius] = %v", got)
		}
		if got := toSlice(t, mustArr[count](t)(gpu.Arange[count](s, 5, 0, -2))); !slices.Equal(got, []count{5, 3, 1}) {
			t.Errorf("Arange[count] = %v", got)
		}
	})
}

// TestNilArguments: a nil Generator or Go kernel is an error wrapping ErrInvalidValue,
// not a panic or a device fault.
func TestNilArguments(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		if _, err := gpu.Rand[float32](s, nil, 3); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Rand with a nil Generator: %v", err)
		}
		x := mustArr[float64](t)(gpu.Zeros[float64](s, 3))
		if err := gpu.RandNInto(s, nil, x); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("RandNInto with a nil Generator: %v", err)
		}
		if d.Backend() == "cpu" {
			if _, err := gpu.NewGoFunction(d, "nil", nil); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("NewGoFunction(nil): %v", err)
			}
		}
	})
}

func TestRandomArrays(t *testing.T) {
	var ref []float32
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		g := gpu.NewGenerator(42)
		for _, n := range []int{0, 1, 1023, 1 << 20} {
			u := mustArr[float32](t)(gpu.Rand[float32](s, g, n))
			vals := toSlice(t, u)
			var sum float64
			for _, v := range vals {
				if v < 0 || v >= 1 {
					t.Fatalf("uniform value %v outside [0, 1)", v)
				}
				sum += float64(v)
			}
			if n >= 1023 {
				if mean := sum / float64(n); math.Abs(mean-0.5) > 5/math.Sqrt(12*float64(n)) {
					t.Errorf("mean of %d uniforms = %v", n, mean)
				}
			}
			if n == 1<<20 {
				if ref == nil {
					ref = vals
				} else if !slices.Equal(ref, vals) {
					t.Errorf("%s gives other uniforms than the first device for the same seed", d.Backend())
				}
			}
		}
		z := mustArr[float64](t)(gpu.RandN[float64](s, g, 1<<16))
		var m, v float64
		zs := toSlice(t, z)
		for _, x := range zs {
			m += x
		}
		m /= float64(len(zs))
		for _, x := range zs {
			v += (x - m) * (x - m)
		}
		v /= float64(len(zs))
		if math.Abs(m) > 0.02 || math.Abs(v-1) > 0.03 {
			t.Errorf("normals: mean %v, variance %v", m, v)
		}
		k := mustArr[int64](t)(gpu.RandInt[int64](s, g, -5, 7, 10000))
		seen := map[int64]bool{}
		for _, x := range toSlice(t, k) {
			if x < -5 || x >= 7 {
				t.Fatalf("RandInt value %d outside [-5, 7)", x)
			}
			seen[x] = true
		}
		if len(seen) != 12 {
			t.Errorf("RandInt hit %d of 12 values", len(seen))
		}
		if _, err := gpu.RandInt[int32](s, g, 5, 5, 3); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("RandInt with an empty range = %v", err)
		}
	})
}

func ExampleEval() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4}, 2, 2)
	y, _ := gpu.Eval[float32](s, "a*x + b", gpu.Vars{"a": 2.0, "x": x, "b": 1.0})
	out, _ := y.ToSlice(context.Background())
	fmt.Println(y.Shape(), out)
	// Output: [2 2] [3 5 7 9]
}

func ExampleClone() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4}, 2, 2)
	y, _ := gpu.Clone(s, x) // a copy: Contiguous(s, x) would return x itself
	gpu.Fill(s, x, 0)
	out, _ := y.ToSlice(context.Background())
	fmt.Println(out)
	// Output: [1 2 3 4]
}

// Clone copies contiguous, strided and broadcast views into new contiguous arrays that
// share nothing with the source.
func TestClone(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		vals := randF32(6 * 7)
		x := mustArr[float32](t)(gpu.FromSlice(s, vals, 6, 7))
		tr := mustArr[float32](t)(x.Transpose())
		row := mustArr[float32](t)(gpu.FromSlice(s, vals[:7], 1, 7))
		bc := mustArr[float32](t)(row.BroadcastTo(5, 7))
		for _, c := range []struct {
			name string
			a    *gpu.Array[float32]
			want func(i, j int) float32
		}{
			{"contiguous", x, func(i, j int) float32 { return vals[7*i+j] }},
			{"transposed", tr, func(i, j int) float32 { return vals[7*j+i] }},
			{"broadcast", bc, func(i, j int) float32 { return vals[j] }},
		} {
			y := mustArr[float32](t)(gpu.Clone(s, c.a))
			if !y.IsContiguous() || !slices.Equal(y.Shape(), c.a.Shape()) {
				t.Fatalf("%s: Clone is contiguous %v with shape %v, want true and %v", c.name, y.IsContiguous(), y.Shape(), c.a.Shape())
			}
			if err := gpu.Fill(s, y, -1); err != nil { // writes to the clone leave the source
				t.Fatal(err)
			}
			y2 := mustArr[float32](t)(gpu.Clone(s, c.a))
			got := toSlice(t, y2)
			cols := c.a.Shape()[1]
			for k, v := range got {
				if w := c.want(k/cols, k%cols); v != w {
					t.Fatalf("%s: clone[%d] = %v, want %v", c.name, k, v, w)
				}
			}
			y.Free()
			y2.Free()
		}
		if _, err := gpu.Clone[float32](s, nil); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Clone(nil) = %v, want ErrInvalidValue", err)
		}
	})
}

func TestNamedOps(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		as, bs := randF32(999), randF32(999)
		bs[3], as[5] = float32(math.NaN()), float32(math.Inf(1))
		a := mustArr[float32](t)(gpu.FromSlice(s, as))
		b := mustArr[float32](t)(gpu.FromSlice(s, bs))
		check := func(name string, got *gpu.Array[float32], err error, f func(x, y float32) float32) {
			t.Helper()
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for i, v := range toSlice(t, got) {
				w := f(as[i], bs[i])
				if v != w && !(v != v && w != w) {
					t.Fatalf("%s at %d: %v, want %v", name, i, v, w)
				}
			}
		}
		c, err := gpu.Add(s, a, b)
		check("Add", c, err, func(x, y float32) float32 { return x + y })
		c, err = gpu.Subtract(s, a, b)
		check("Subtract", c, err, func(x, y float32) float32 { return x - y })
		c, err = gpu.Multiply(s, a, b)
		check("Multiply", c, err, func(x, y float32) float32 { return x * y })
		c, err = gpu.Divide(s, a, b)
		check("Divide", c, err, func(x, y float32) float32 { return x / y })
		c, err = gpu.Minimum(s, a, b)
		check("Minimum", c, err, func(x, y float32) float32 {
			if x != x || y != y {
				return float32(math.NaN())
			}
			return min(x, y)
		})
		c, err = gpu.Negative(s, a)
		check("Negative", c, err, func(x, _ float32) float32 { return -x })
		c, err = gpu.Floor(s, a)
		check("Floor", c, err, func(x, _ float32) float32 { return float32(math.Floor(float64(x))) })
		m, err := gpu.Less(s, a, b)
		if err != nil {
			t.Fatal(err)
		}
		w, err := gpu.Where(s, m, a, b)
		check("Where(Less)", w, err, func(x, y float32) float32 {
			if x < y {
				return x
			}
			return y
		})
	})
}

// TestBoolAddMultiply: numpy.add and numpy.multiply of bool arrays are logical or and
// logical and.
func TestBoolAddMultiply(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(41, 42))
		xs, ys := make([]bool, 257), make([]bool, 257)
		for i := range xs {
			xs[i], ys[i] = rng.IntN(2) == 1, rng.IntN(2) == 1
		}
		x := mustArr[bool](t)(gpu.FromSlice(s, xs))
		y := mustArr[bool](t)(gpu.FromSlice(s, ys))
		sum, err := gpu.Add(s, x, y)
		if err != nil {
			t.Fatal(err)
		}
		prod, err := gpu.Multiply(s, x, y)
		if err != nil {
			t.Fatal(err)
		}
		gs, gp := toSlice(t, sum), toSlice(t, prod)
		for i := range xs {
			if gs[i] != (xs[i] || ys[i]) || gp[i] != (xs[i] && ys[i]) {
				t.Fatalf("element %d: %v + %v = %v, * = %v", i, xs[i], ys[i], gs[i], gp[i])
			}
		}
	})
}

func TestKernel(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		k := gpu.NewKernel[float32]("a*x + b - z", "x", "a", "z", "b")
		xs, zs := randF32(1000), randF32(1000)
		x := mustArr[float32](t)(gpu.FromSlice(s, xs))
		z := mustArr[float32](t)(gpu.FromSlice(s, zs))
		for round := range 3 {
			y, err := k.Eval(s, x, float32(round), z, 0.5)
			if err != nil {
				t.Fatal(err)
			}
			for i, v := range toSlice(t, y) {
				if want := float32(round)*xs[i] + 0.5 - zs[i]; v != want {
					t.Fatalf("round %d: element %d = %v, want %v", round, i, v, want)
				}
			}
		}
		if _, err := k.Eval(s, x, 1.0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("a kernel call with too few operands = %v", err)
		}
		if _, err := gpu.NewKernel[float32]("x + x", "x", "x").Eval(s, x, x); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("a kernel with a repeated name = %v", err)
		}
	})
}

// TestEvalMixedSignedUint64Compare: an int64 compared with a uint64 is exact (as NumPy
// since 1.25), on every device and the simulator: MaxInt64 < 2^63, 2^53 < 2^53+1 and -1
// < every uint64, where float64 (their promotion for arithmetic) would merge or flip them.
func TestEvalMixedSignedUint64Compare(t *testing.T) {
	forDevicesAndSim(t, false, func(t *testing.T, s *gpu.Stream) {
		r := rand.New(rand.NewPCG(5, 23))
		is := []int64{math.MaxInt64, 1 << 53, 1<<53 + 1, -1, math.MinInt64, 0, 1<<63 - 2}
		us := []uint64{1 << 63, 1<<53 + 1, 1 << 53, math.MaxUint64, 0, 0, 1<<63 - 1}
		for len(is) < 300 {
			v := int64(r.Uint64() >> r.IntN(64))
			if r.IntN(3) == 0 {
				v = -v
			}
			is, us = append(is, v), append(us, uint64(v)+uint64(r.IntN(3))-1)
		}
		a := mustArr[int64](t)(gpu.FromSlice(s, is))
		defer a.Free()
		b := mustArr[uint64](t)(gpu.FromSlice(s, us))
		defer b.Free()
		for _, c := range []struct {
			src  string
			want func(c int) bool // c: the exact comparison of a's element with b's
		}{
			{"a < b", func(c int) bool { return c < 0 }},
			{"a == b", func(c int) bool { return c == 0 }},
			{"b >= a", func(c int) bool { return c <= 0 }},
			{"b != a", func(c int) bool { return c != 0 }},
		} {
			m := mustArr[bool](t)(gpu.Eval[bool](s, c.src, gpu.Vars{"a": a, "b": b}))
			for i, v := range toSlice(t, m) {
				cmp := new(big.Int).SetInt64(is[i]).Cmp(new(big.Int).SetUint64(us[i]))
				if v != c.want(cmp) {
					t.Errorf("%s with a=%d b=%d = %v, want %v", c.src, is[i], us[i], v, !v)
				}
			}
			m.Free()
		}
		// A Go int is a weak value: compared with uint64 elements it stays exact, where
		// taking their type would wrap -1 to MaxUint64.
		m := mustArr[bool](t)(gpu.Eval[bool](s, "b > w", gpu.Vars{"b": b, "w": -1}))
		defer m.Free()
		for i, v := range toSlice(t, m) {
			if !v {
				t.Fatalf("b > -1 with b=%d = false", us[i])
			}
		}
	})
}

// TestEvalManyOperands: expressions of more operands than the plans' layout keys hold
// (15): Eval and MapReduce over 20 arrays (contiguous, transposed and broadcast), and a
// Kernel of 17 operands, arrays and scalars, named out of sorted order, whose values
// must reach their own names (the >15 path plans by sorted names).
func TestEvalManyOperands(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		const nops, rows, cols = 20, 5, 7
		vars := gpu.Vars{}
		src := ""
		host := make([][]float64, nops) // each operand broadcast to (rows, cols), row-major
		for k := range nops {
			name := fmt.Sprintf("v%02d", k)
			h := make([]float64, rows*cols)
			var a *gpu.Array[float64]
			switch k % 3 {
			case 0: // contiguous
				vals := make([]float64, rows*cols)
				for i := range vals {
					vals[i] = rand.NormFloat64()
				}
				copy(h, vals)
				a = mustArr[float64](t)(gpu.FromSlice(s, vals, rows, cols))
			case 1: // a transposed view
				vals := make([]float64, cols*rows)
				for i := range vals {
					vals[i] = rand.NormFloat64()
				}
				for i := range rows {
					for j := range cols {
						h[i*cols+j] = vals[j*rows+i]
					}
				}
				var err error
				if a, err = mustArr[float64](t)(gpu.FromSlice(s, vals, cols, rows)).Transpose(); err != nil {
					t.Fatal(err)
				}
			case 2: // a row broadcast along the rows
				vals := make([]float64, cols)
				for j := range vals {
					vals[j] = rand.NormFloat64()
				}
				for i := range rows {
					copy(h[i*cols:], vals)
				}
				a = mustArr[float64](t)(gpu.FromSlice(s, vals, cols))
			}
			host[k] = h
			vars[name] = a
			if k > 0 {
				src += " + "
			}
			src += fmt.Sprintf("%d*%s", k+1, name)
		}
		want := make([]float64, rows*cols)
		for i := range want {
			for k := range nops {
				want[i] += float64(k+1) * host[k][i]
			}
		}
		y, err := gpu.Eval[float64](s, src, vars)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range toSlice(t, y) {
			if math.Abs(v-want[i]) > 1e-12*(1+math.Abs(want[i])) {
				t.Fatalf("Eval of %d operands: element %d = %v, want %v", nops, i, v, want[i])
			}
		}
		// Into a poisoned transposed view.
		buf := mustArr[float64](t)(gpu.Full(s, math.NaN(), cols, rows))
		bt, err := buf.Transpose()
		if err != nil {
			t.Fatal(err)
		}
		if err := gpu.EvalInto(s, bt, src, vars); err != nil {
			t.Fatal(err)
		}
		for i, v := range toSlice(t, buf) {
			j, r := i/rows, i%rows
			if w := want[r*cols+j]; math.Abs(v-w) > 1e-12*(1+math.Abs(w)) {
				t.Fatalf("EvalInto a transposed view, %d operands: element %d = %v, want %v", nops, i, v, w)
			}
		}
		sums, err := gpu.MapReduce[float64](s, src, vars, gpu.OpSum, gpu.Axes(0))
		if err != nil {
			t.Fatal(err)
		}
		for j, v := range toSlice(t, sums) {
			var w float64
			for i := range rows {
				w += want[i*cols+j]
			}
			if math.Abs(v-w) > 1e-12*(1+math.Abs(w)) {
				t.Fatalf("MapReduce of %d operands: column %d = %v, want %v", nops, j, v, w)
			}
		}

		// A Kernel of 17 operands, named in reverse order: x, then scalars s15 ... s00.
		names := []string{"x"}
		ksrc := "x"
		for k := 15; k >= 0; k-- {
			names = append(names, fmt.Sprintf("s%02d", k))
			ksrc += fmt.Sprintf(" + %d*s%02d", 1<<k, k)
		}
		k := gpu.NewKernel[float64](ksrc, names...)
		xs := make([]float64, 100)
		for i := range xs {
			xs[i] = rand.NormFloat64()
		}
		x := mustArr[float64](t)(gpu.FromSlice(s, xs))
		for round := range 2 {
			args := []any{x}
			for k := 15; k >= 0; k-- {
				args = append(args, float64(k+10*round)) // s_k's value
			}
			out := mustArr[float64](t)(gpu.Full(s, math.NaN(), len(xs)))
			if err := k.Into(s, out, args...); err != nil {
				t.Fatal(err)
			}
			for i, v := range toSlice(t, out) {
				w := xs[i] // in the expression's order
				for k := 15; k >= 0; k-- {
					w += float64(int(1)<<k) * float64(k+10*round)
				}
				if v != w {
					t.Fatalf("round %d: Kernel of 17 operands: element %d = %v, want %v", round, i, v, w)
				}
			}
		}
		if _, err := gpu.NewKernel[float64](ksrc, append(names[:16:16], "x")...).Eval(s, make([]any, 17)...); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("a kernel of 17 operands with a repeated name = %v", err)
		}
	})
}

func TestArrayOfUnified(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		b, err := d.AllocUnified(4 * 1000)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		a, err := gpu.ArrayOf[float32](b, 10, 100)
		if err != nil {
			t.Fatal(err)
		}
		if err := gpu.Fill(s, a, 3); err != nil {
			t.Fatal(err)
		}
		y, err := gpu.Eval[float32](s, "x * 2", gpu.Vars{"x": a})
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range toSlice(t, y) {
			if v != 6 {
				t.Fatalf("element %d = %v", i, v)
			}
		}
		// The host reads unified memory directly, after the tracked wait.
		if v, err := a.At(bg, 9, 99); err != nil || v != 3 {
			t.Errorf("At on unified memory = %v, %v", v, err)
		}
		if _, err := gpu.ArrayOf[float32](b, 2000); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("an array larger than its buffer = %v", err)
		}
	})
}

// TestBroadcastViewWrites: writing through a broadcast view is an error for every writer
// (one element stands for many), and a failed random fill leaves the generator alone.
func TestBroadcastViewWrites(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		ctx := context.Background()
		z, err := gpu.FromSlice(s, []float32{1, 2, 3, 4})
		if err != nil {
			t.Fatal(err)
		}
		defer z.Free()
		first, _ := z.Slice(gpu.R(0, 1))
		bv, err := first.BroadcastTo(3)
		if err != nil {
			t.Fatal(err)
		}
		if err := gpu.Fill(s, bv, 7); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Fill of a broadcast view = %v, want ErrInvalidValue", err)
		}
		if err := bv.Set(ctx, 9, 2); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Set on a broadcast view = %v, want ErrInvalidValue", err)
		}
		g := gpu.NewGenerator(5)
		seed, off := g.State()
		if err := gpu.RandInto(s, g, bv); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("RandInto a broadcast view = %v, want ErrInvalidValue", err)
		}
		if s2, off2 := g.State(); s2 != seed || off2 != off {
			t.Errorf("a failed RandInto moved the generator from %d to %d", off, off2)
		}
		got, err := z.ToSlice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []float32{1, 2, 3, 4}) {
			t.Errorf("the array behind the view changed: %v", got)
		}
	})
}

// TestRandIntInt32Bounds: hi is exclusive, so int32's maximum can be drawn with hi = 2^31;
// the whole int32 range (hi - lo = 2^32) is an error pointing at RandBits.
func TestRandIntInt32Bounds(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		lo := int64(math.MaxInt32 - 2)
		a, err := gpu.RandInt[int32](s, gpu.NewGenerator(11), lo, 1<<31, 4096)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		v, err := a.ToSlice(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		seen := map[int32]int{}
		for _, x := range v {
			if int64(x) < lo {
				t.Fatalf("value %d below lo %d", x, lo)
			}
			seen[x]++
		}
		if len(seen) != 3 || seen[math.MaxInt32] == 0 {
			t.Errorf("values drawn: %v, want each of %d..%d", seen, lo, math.MaxInt32)
		}
		if _, err := gpu.RandInt[int32](s, gpu.NewGenerator(1), math.MinInt32, 1<<31, 8); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("the whole int32 range = %v, want ErrInvalidValue", err)
		}
		if _, err := gpu.RandInt[int32](s, gpu.NewGenerator(1), 0, 1<<31+1, 8); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("hi past 2^31 = %v, want ErrInvalidValue", err)
		}
	})
}

// TestExpressionErrors: a bad expression is an error wrapping ErrInvalidValue.
func TestExpressionErrors(t *testing.T) {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, err := gpu.FromSlice(s, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	for _, src := range []string{"x +", "y * 2", "x(", "x && 1.5"} {
		if _, err := gpu.Eval[float32](s, src, gpu.Vars{"x": x}); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Eval(%q) = %v, want ErrInvalidValue", src, err)
		}
	}
	for _, op := range []gpu.Op{"a +", "a + c"} {
		if _, err := gpu.Accumulate[float32](s, x, op, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Accumulate with %q = %v, want ErrInvalidValue", op, err)
		}
	}
}

// TestWeakIntRange: a Go int out of the range of the integer type it converts to is an
// error (as the same literal is), not a wrapped value.
func TestWeakIntRange(t *testing.T) {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	u8, err := gpu.FromSlice(s, []uint8{200, 100, 255})
	if err != nil {
		t.Fatal(err)
	}
	defer u8.Free()
	for _, k := range []int{300, -1, 256} {
		if _, err := gpu.Eval[bool](s, "u8 > k", gpu.Vars{"u8": u8, "k": k}); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("u8 > %d = %v, want ErrInvalidValue", k, err)
		}
		if _, err := gpu.MapReduce[int64](s, "int64(u8 + k)", gpu.Vars{"u8": u8, "k": k}, gpu.OpSum); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("MapReduce u8 + %d = %v, want ErrInvalidValue", k, err)
		}
	}
	got, err := gpu.Eval[bool](s, "u8 > k", gpu.Vars{"u8": u8, "k": 150})
	if err != nil {
		t.Fatal(err)
	}
	v, _ := got.ToSlice(context.Background())
	if !slices.Equal(v, []bool{true, false, true}) {
		t.Errorf("u8 > 150 = %v", v)
	}
	got.Free()
	// A float array takes any int.
	f, _ := gpu.FromSlice(s, []float32{1})
	defer f.Free()
	if _, err := gpu.Eval[float32](s, "f + k", gpu.Vars{"f": f, "k": 1 << 40}); err != nil {
		t.Errorf("float32 + 2^40: %v", err)
	}
}

// TestRangeHugeSteps: steps past the axis select one element (NumPy), without overflow.
func TestRangeHugeSteps(t *testing.T) {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, err := gpu.FromSlice(s, []float32{0, 1, 2, 3, 4})
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	for _, c := range []struct {
		r    gpu.Range
		want []float32
	}{
		{gpu.Range{0, 3, math.MaxInt}, []float32{0}},
		{gpu.Range{4, 0, -math.MaxInt}, []float32{4}},
		{gpu.Range{4, gpu.End, math.MinInt}, []float32{4}},
		{gpu.Range{1, gpu.End, 2}, []float32{1, 3}},
		{gpu.Range{4, 0, -3}, []float32{4, 1}},
		{gpu.Range{0, gpu.End, -1}, []float32{4, 3, 2, 1, 0}},
	} {
		v, err := x.Slice(c.r)
		if err != nil {
			t.Fatalf("%v: %v", c.r, err)
		}
		got, err := v.ToSlice(context.Background())
		if err != nil {
			t.Fatalf("%v: %v", c.r, err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("x[%v] = %v, want %v", c.r, got, c.want)
		}
	}
}

// TestBadShapesAndBounds: slices past a buffer's end (also when off+n overflows),
// negative broadcast shapes, a nil output and Linspace of one value.
func TestBadShapesAndBounds(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		b, err := d.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		for _, c := range [][2]int64{{math.MaxInt64, 2}, {1 << 62, 1 << 62}, {16, math.MaxInt64 - 8}, {65, 0}, {60, 5}} {
			if _, err := b.Slice(c[0], c[1]); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("Slice(%d, %d) of 64 bytes = %v, want ErrInvalidValue", c[0], c[1], err)
			}
		}
		if v, err := b.Slice(64, 0); err != nil || v.Size() != 0 {
			t.Errorf("Slice(64, 0) = %v, %v", v, err)
		}
		x, err := gpu.Zeros[float32](s, 4)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		if _, err := x.BroadcastTo(-3, 4); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("BroadcastTo(-3, 4) = %v, want ErrInvalidValue", err)
		}
		if err := gpu.EvalInto[float32](s, nil, "x", gpu.Vars{"x": x}); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("EvalInto a nil array = %v, want ErrInvalidValue", err)
		}
		l, err := gpu.Linspace[float64](s, 2, 3, 1)
		if err != nil {
			t.Fatal(err)
		}
		defer l.Free()
		if v, _ := l.ToSlice(context.Background()); !slices.Equal(v, []float64{2}) {
			t.Errorf("Linspace(2, 3, 1) = %v, want [2] (NumPy)", v)
		}
	})
}

// TestCopyOverlapping: Copy between overlapping views of one array gives NumPy's result
// (a[1:] = a[:-1] shifts by one), and CopyDtoD between overlapping buffers is refused
// (the driver's result would be undefined).
func TestCopyOverlapping(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, n := range []int{33, 1<<20 + 3} {
			xs := randF32(n)
			a := mustArr[float32](t)(gpu.FromSlice(s, xs))
			dst := mustArr[float32](t)(a.Slice(gpu.R(1, gpu.End)))
			src := mustArr[float32](t)(a.Slice(gpu.R(0, n-1)))
			if err := gpu.Copy(s, dst, src); err != nil {
				t.Fatal(err)
			}
			got := toSlice(t, a)
			if got[0] != xs[0] {
				t.Fatalf("n=%d: element 0 = %v, want %v", n, got[0], xs[0])
			}
			for i := 1; i < n; i++ {
				if got[i] != xs[i-1] {
					t.Fatalf("n=%d: element %d = %v, want %v", n, i, got[i], xs[i-1])
				}
			}
			a.Free()
		}
		b, err := s.Alloc(64)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		lo, _ := b.Slice(0, 32)
		hi, _ := b.Slice(16, 32)
		if err := s.CopyDtoD(hi, lo); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("CopyDtoD between overlapping buffers = %v, want ErrInvalidValue", err)
		}
		other, _ := b.Slice(32, 32)
		if err := s.CopyDtoD(other, lo); err != nil {
			t.Errorf("CopyDtoD between adjacent buffers: %v", err)
		}
	})
}

// A reshape whose element count overflows int must be refused, not wrap around to the
// array's size (274177 * 67280421310721 = 2^64 + 1) and view memory past the buffer.
func TestReshapeOverflowEdges(t *testing.T) {
	s := freshStream(t)
	one, err := gpu.FromSlice(s, []float32{7})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := one.Reshape(274177, 67280421310721); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Reshape(274177, 67280421310721) of 1 element: %v, %v; want ErrInvalidValue", v, err)
	}
	empty, err := gpu.Zeros[float32](s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := empty.Reshape(1<<32, 1<<32); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Reshape(2^32, 2^32) of 0 elements: %v, %v; want ErrInvalidValue", v, err)
	}
	if v, err := empty.Reshape(0, 1<<40, 1<<40); err != nil || v.Size() != 0 {
		t.Errorf("Reshape(0, 2^40, 2^40) of 0 elements: %v, %v", v, err)
	}
}

// ArrayOf must refuse a shape whose byte count overflows int64.
func TestArrayOfOverflow(t *testing.T) {
	s := freshStream(t)
	b, err := s.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if a, err := gpu.ArrayOf[int64](b, 1<<61); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("ArrayOf[int64](64-byte buffer, 2^61): %v, %v; want ErrInvalidValue", a, err)
	}
	if a, err := gpu.ArrayOf[int64](nil, 1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("ArrayOf(nil): %v, %v; want ErrInvalidValue", a, err)
	}
}

// Row-major strides of a shape with a zero dimension contain zeros ((3, 0) has strides
// (0, 1)): such an array is empty, not a broadcast view, and writing it is a no-op.
func TestEmptyArrayIsWritable(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	a, err := gpu.Ones[float32](s, 3, 0)
	if err != nil {
		t.Fatalf("Ones(3, 0): %v", err)
	}
	src, _ := gpu.Zeros[float32](s, 3, 0)
	m, _ := gpu.Zeros[float32](s, 3, 0, 4)
	checks := map[string]error{
		"Fill":           gpu.Fill(s, a, 2),
		"Copy":           gpu.Copy(s, a, src),
		"EvalInto":       gpu.EvalInto(s, a, "x + 1", gpu.Vars{"x": src}),
		"ReduceInto":     gpu.ReduceInto(s, a, gpu.OpSum, m, gpu.Axes(2)),
		"MapReduceInto":  gpu.MapReduceInto(s, a, "x", gpu.Vars{"x": m}, gpu.OpMax, gpu.Axes(-1)),
		"AccumulateInto": gpu.AccumulateInto(s, a, src, gpu.OpSum, 0),
		"RandInto":       gpu.RandInto(s, gpu.NewGenerator(1), a),
	}
	for name, err := range checks {
		if err != nil {
			t.Errorf("%s into a (3, 0) array: %v", name, err)
		}
	}
	if v, err := a.ToSlice(ctx); err != nil || len(v) != 0 {
		t.Errorf("ToSlice: %v, %v", v, err)
	}
	// A broadcast view of a non-empty shape is still refused.
	one, _ := gpu.Zeros[float32](s, 1)
	bc, _ := one.BroadcastTo(3)
	if err := gpu.Fill(s, bc, 1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Fill of a broadcast view: %v", err)
	}
}

// EvalInto an array that shares memory with an operand of another element size, at the
// same element offset and strides (ArrayOf over one buffer): the bytes differ, so the
// operand must be copied first.
func TestEvalIntoReinterpretedOperand(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	n := 1 << 16
	buf, err := s.Alloc(int64(8 * n))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	i32, _ := gpu.ArrayOf[int32](buf, n)
	i64, _ := gpu.ArrayOf[int64](buf, n)
	src := make([]int32, n)
	for i := range src {
		src[i] = int32(i)
	}
	if err := i32.CopyFromHost(ctx, src); err != nil {
		t.Fatal(err)
	}
	if err := gpu.EvalInto(s, i64, "int64(x) * 10", gpu.Vars{"x": i32}); err != nil {
		t.Fatal(err)
	}
	got, err := i64.ToSlice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != int64(i)*10 {
			t.Fatalf("[%d] = %d, want %d", i, v, int64(i)*10)
		}
	}
}

// An empty output still needs operands that broadcast to it (NumPy: np.copyto of a
// (5,) array into a (0,) one is a ValueError).
func TestEmptyOutputChecksOperands(t *testing.T) {
	s := freshStream(t)
	x, _ := gpu.Zeros[float32](s, 5)
	o, _ := gpu.Zeros[float32](s, 0)
	o2, _ := gpu.Zeros[float32](s, 3, 0)
	if err := gpu.EvalInto(s, o, "x + 1", gpu.Vars{"x": x}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("EvalInto (0,) from (5,): %v; want ErrInvalidValue", err)
	}
	if err := gpu.Copy(s, o, x); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Copy (0,) from (5,): %v; want ErrInvalidValue", err)
	}
	if err := gpu.Copy(s, o2, x); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Copy (3, 0) from (5,): %v; want ErrInvalidValue", err)
	}
	one, _ := gpu.Zeros[float32](s, 1)
	if err := gpu.Copy(s, o2, one); err != nil {
		t.Errorf("Copy (3, 0) from (1,): %v", err)
	}
	if err := gpu.EvalInto(s, o2, "x * 2", gpu.Vars{"x": one}); err != nil {
		t.Errorf("EvalInto (3, 0) from (1,): %v", err)
	}
}

// An operation on one device's stream with an array of another device of the same
// backend launches a kernel that addresses the other device's memory: refused until
// the stream's device has enabled peer access (on CUDA the kernel would fault, and the
// fault is sticky), then right. Reductions, scans and searches take the same launch
// path.
func TestOperandOfAnotherDevice(t *testing.T) {
	s0, s1 := freshStream(t), freshStream(t)
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{0.5, -1, 7, 2, 3}
	x0, err := gpu.FromSlice(s0, a)
	if err != nil {
		t.Fatal(err)
	}
	x1, err := gpu.FromSlice(s1, b)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := gpu.Add(s0, x0, x1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("Add of an array of another device without peer access: %v, %v; want ErrInvalidValue", r, err)
	}
	if r, err := gpu.Sum[float32](s0, x1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("Sum of an array of another device without peer access: %v, %v; want ErrInvalidValue", r, err)
	}
	if err := s0.Device().EnablePeerAccess(s1.Device()); err != nil {
		t.Fatal(err)
	}
	r, err := gpu.Add(s0, x0, x1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if got[i] != a[i]+b[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], a[i]+b[i])
		}
	}
}

// An array used after its Free is an error wrapping ErrClosed, for an empty array too
// (whose operations have no memory to touch, so only the arguments' check can tell).
func TestFreedArrayEdges(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	for _, n := range []int{0, 5} {
		a, err := gpu.FromSlice(s, make([]float32, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Free(); err != nil {
			t.Fatal(err)
		}
		calls := map[string]func() error{
			"ToSlice":  func() error { _, err := a.ToSlice(ctx); return err },
			"CopyFrom": func() error { return a.CopyFromHost(ctx, make([]float32, n)) },
			"Add":      func() error { _, err := gpu.Add(s, a, a); return err },
			"Eval":     func() error { _, err := gpu.Eval[float32](s, "2*x", gpu.Vars{"x": a}); return err },
			"Sum":      func() error { _, err := gpu.Sum[float32](s, a); return err },
			"CumSum":   func() error { _, err := gpu.CumSum[float32](s, a, 0); return err },
			"Copy": func() error {
				b, err := gpu.Empty[float32](s, n)
				if err != nil {
					return err
				}
				defer b.Free()
				return gpu.Copy(s, b, a)
			},
		}
		for name, f := range calls {
			if err := f(); !errors.Is(err, gpu.ErrClosed) {
				t.Errorf("%s of a freed array of %d elements: %v, want ErrClosed", name, n, err)
			}
		}
	}
	// A freed buffer: views and arrays of it, and its tracking, are errors at once.
	b, err := s.Device().Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	b.Free()
	for name, f := range map[string]func() error{
		"Buffer.Slice":       func() error { _, err := b.Slice(0, 8); return err },
		"ArrayOf":            func() error { _, err := gpu.ArrayOf[float32](b, 4); return err },
		"Buffer.SetTracking": func() error { return b.SetTracking(false) },
	} {
		if err := f(); !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("%s of a freed buffer: %v, want ErrClosed", name, err)
		}
	}
}

// ToSlice of a broadcast view too large to copy is an error, not a panic in make; of a
// freed array, ErrClosed.
func TestToSliceTooLarge(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	x, err := gpu.FromSlice(s, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := x.BroadcastTo(1<<60, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ToSlice(ctx); !errors.Is(err, gpu.ErrInvalidValue) && !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Errorf("ToSlice of a [2^60 3] broadcast view = %v, want ErrInvalidValue or ErrOutOfMemory", err)
	}
	x.Free()
	for _, a := range []*gpu.Array[float32]{x, b} {
		if _, err := a.ToSlice(ctx); !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("ToSlice of a freed array (shape %v) = %v, want ErrClosed", a.Shape(), err)
		}
	}
}

// A Vars key that isn't an identifier can't be named by the expression: an error, not a
// variable silently ignored (MapReduce goes through the same plans as Eval).
func TestEvalVarNotIdentifier(t *testing.T) {
	s := freshStream(t)
	x, err := gpu.FromSlice(s, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"not a name", "1x", "", "x-y"} {
		if _, err := gpu.Eval[float32](s, "x*2", gpu.Vars{"x": x, name: 2.0}); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Eval with a variable named %q = %v, want ErrInvalidValue", name, err)
		}
		if _, err := gpu.MapReduce[float32](s, "x*2", gpu.Vars{"x": x, name: 2.0}, gpu.OpSum); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("MapReduce with a variable named %q = %v, want ErrInvalidValue", name, err)
		}
	}
}

// FromSlice's data may be reused at once: overwriting it right after the call (behind
// a slow kernel on the stream) leaves the array's contents alone.
func TestFromSliceDataReusable(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	if err := k.SpinFor(s, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	data := []int32{1, 2, 3, 4, 5}
	a, err := gpu.FromSlice(s, data)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	for i := range data {
		data[i] = -1
	}
	got, err := a.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int32{1, 2, 3, 4, 5}) {
		t.Errorf("FromSlice then overwriting data: %v", got)
	}
}

// TestBroadcastShapes checks numpy.broadcast_shapes's results, and that shapes that
// don't broadcast or hold a negative dimension are errors wrapping ErrInvalidValue.
func TestBroadcastShapes(t *testing.T) {
	for _, c := range []struct {
		in   [][]int
		want []int
	}{
		{nil, []int{}},
		{[][]int{{3, 1}, {1, 4}}, []int{3, 4}},
		{[][]int{{2, 1, 5}, {3, 1}, {}}, []int{2, 3, 5}},
		{[][]int{{0}, {1}}, []int{0}},
		{[][]int{{1}, {0, 1}}, []int{0, 1}},
	} {
		got, err := gpu.BroadcastShapes(c.in...)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("BroadcastShapes(%v) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range [][][]int{
		{{-1}, {1}},
		{{-1}},
		{{1}, {-1}},
		{{2, -3}, {2, 1}},
		{{3}, {4}},
		{{2, 3}, {3, 2}},
	} {
		if got, err := gpu.BroadcastShapes(in...); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("BroadcastShapes(%v) = %v, %v; want an error wrapping ErrInvalidValue", in, got, err)
		}
	}
}
