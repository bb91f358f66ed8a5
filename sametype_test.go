package gpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/half"
)

// sameTypeCase checks the ...Of forms on x (shape 3x5 of T) against the explicit forms
// and against a float64 reference, for every option set.
func testSameType[T gpu.SameAccum](t *testing.T, s *gpu.Stream, vals []T) {
	t.Helper()
	name := dtype.Of[T]().String()
	x := must[*gpu.Array[T]](t)(gpu.FromSlice(s, vals, 3, 5))
	defer x.Free()
	f64 := make([]float64, len(vals))
	for i, v := range vals {
		f64[i] = elemF64(v)
	}
	type red struct {
		what     string
		of, expl func(opts ...gpu.ReduceOption) (*gpu.Array[T], error)
		ref      func(xs []float64) float64
	}
	reds := []red{
		{"Sum", func(o ...gpu.ReduceOption) (*gpu.Array[T], error) { return gpu.SumOf(s, x, o...) },
			func(o ...gpu.ReduceOption) (*gpu.Array[T], error) { return gpu.Sum[T](s, x, o...) },
			func(xs []float64) float64 {
				t := 0.0
				for _, v := range xs {
					t += v
				}
				return t
			}},
		{"Prod", func(o ...gpu.ReduceOption) (*gpu.Array[T], error) { return gpu.ProdOf(s, x, o...) },
			func(o ...gpu.ReduceOption) (*gpu.Array[T], error) { return gpu.Prod[T](s, x, o...) },
			func(xs []float64) float64 {
				t := 1.0
				for _, v := range xs {
					t *= v
				}
				return t
			}},
	}
	for _, r := range reds {
		for _, opts := range [][]gpu.ReduceOption{nil, {gpu.Axes(1)}, {gpu.Axes(0), gpu.KeepDims()}} {
			of := must[*gpu.Array[T]](t)(r.of(opts...))
			ex := must[*gpu.Array[T]](t)(r.expl(opts...))
			got, want := toSlice(t, of), toSlice(t, ex)
			if of.DType() != dtype.Of[T]() || !slices.Equal(of.Shape(), ex.Shape()) || !slices.Equal(got, want) {
				t.Errorf("%s %sOf %d options: %v %v %v, explicit %v %v", name, r.what, len(opts), of.DType(), of.Shape(), got, ex.Shape(), want)
			}
			if len(opts) == 0 {
				if ref := r.ref(f64); math.Abs(elemF64(got[0])-ref) > 1e-2*math.Max(1, math.Abs(ref)) {
					t.Errorf("%s %sOf = %v, want %v", name, r.what, got[0], ref)
				}
			}
			of.Free()
			ex.Free()
		}
	}
	for _, excl := range []bool{false, true} {
		var opts []gpu.ScanOption
		if excl {
			opts = append(opts, gpu.Exclusive())
		}
		for _, c := range []struct {
			what     string
			of, expl func() (*gpu.Array[T], error)
		}{
			{"CumSum", func() (*gpu.Array[T], error) { return gpu.CumSumOf(s, x, 1, opts...) }, func() (*gpu.Array[T], error) { return gpu.CumSum[T](s, x, 1, opts...) }},
			{"CumProd", func() (*gpu.Array[T], error) { return gpu.CumProdOf(s, x, 0, opts...) }, func() (*gpu.Array[T], error) { return gpu.CumProd[T](s, x, 0, opts...) }},
			{"Accumulate", func() (*gpu.Array[T], error) { return gpu.AccumulateOf(s, x, gpu.OpMax, -1, opts...) }, func() (*gpu.Array[T], error) { return gpu.Accumulate[T](s, x, gpu.OpMax, -1, opts...) }},
		} {
			of := must[*gpu.Array[T]](t)(c.of())
			ex := must[*gpu.Array[T]](t)(c.expl())
			if got, want := toSlice(t, of), toSlice(t, ex); !slices.Equal(got, want) || !slices.Equal(of.Shape(), []int{3, 5}) {
				t.Errorf("%s %sOf exclusive %v = %v, explicit %v", name, c.what, excl, got, want)
			}
			of.Free()
			ex.Free()
		}
	}
	// CumSumOf against a plain running sum along the rows.
	cs := toSlice(t, must[*gpu.Array[T]](t)(gpu.CumSumOf(s, x, 1)))
	for r := range 3 {
		run := 0.0
		for c := range 5 {
			run += f64[r*5+c]
			if math.Abs(elemF64(cs[r*5+c])-run) > 1e-2*math.Max(1, math.Abs(run)) {
				t.Errorf("%s CumSumOf[%d,%d] = %v, want %v", name, r, c, cs[r*5+c], run)
			}
		}
	}
	if got := toSlice(t, x); !slices.Equal(got, vals) {
		t.Errorf("%s: the input changed", name)
	}
}

// elemF64 is toF64 for the half types too.
func elemF64[T gpu.Elem](v T) float64 {
	switch x := any(v).(type) {
	case gpu.Float16:
		return x.Float64()
	case gpu.BFloat16:
		return x.Float64()
	}
	return toF64(v)
}

// TestSameTypeReductions: the ...Of forms are the explicit forms with R = T, for each
// SameAccum type, with every option kind; the float statistics likewise.
func TestSameTypeReductions(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		f32 := make([]float32, 15)
		f64 := make([]float64, 15)
		i64 := make([]int64, 15)
		u64 := make([]uint64, 15)
		in := make([]int, 15)
		h := make([]gpu.Float16, 15)
		bf := make([]gpu.BFloat16, 15)
		for i := range 15 {
			v := 0.5 + rand.Float64()
			f32[i], f64[i] = float32(v), v
			i64[i], u64[i], in[i] = int64(rand.IntN(7))-3, uint64(1+rand.IntN(3)), 1+rand.IntN(3)
			h[i], bf[i] = half.NewFloat16(v), half.NewBFloat16(v)
		}
		testSameType(t, s, f32)
		testSameType(t, s, f64)
		testSameType(t, s, i64)
		testSameType(t, s, u64)
		testSameType(t, s, in)
		testSameType(t, s, h)
		testSameType(t, s, bf)

		x := must[*gpu.Array[float32]](t)(gpu.FromSlice(s, f32, 3, 5))
		defer x.Free()
		for _, c := range []struct {
			what     string
			of, expl func() (*gpu.Array[float32], error)
		}{
			{"Mean", func() (*gpu.Array[float32], error) { return gpu.MeanOf(s, x, gpu.Axes(1)) }, func() (*gpu.Array[float32], error) { return gpu.Mean[float32](s, x, gpu.Axes(1)) }},
			{"Var", func() (*gpu.Array[float32], error) { return gpu.VarOf(s, x, gpu.Ddof(1)) }, func() (*gpu.Array[float32], error) { return gpu.Var[float32](s, x, gpu.Ddof(1)) }},
			{"Std", func() (*gpu.Array[float32], error) { return gpu.StdOf(s, x, gpu.Axes(0)) }, func() (*gpu.Array[float32], error) { return gpu.Std[float32](s, x, gpu.Axes(0)) }},
			{"LogSumExp", func() (*gpu.Array[float32], error) { return gpu.LogSumExpOf(s, x) }, func() (*gpu.Array[float32], error) { return gpu.LogSumExp[float32](s, x) }},
			{"Norm", func() (*gpu.Array[float32], error) { return gpu.NormOf(s, x, 2, gpu.Axes(-1)) }, func() (*gpu.Array[float32], error) { return gpu.Norm[float32](s, x, 2, gpu.Axes(-1)) }},
			{"Median", func() (*gpu.Array[float32], error) { return gpu.MedianOf(s, x, gpu.Axes(1)) }, func() (*gpu.Array[float32], error) { return gpu.Median[float32](s, x, gpu.Axes(1)) }},
			{"NanMedian", func() (*gpu.Array[float32], error) { return gpu.NanMedianOf(s, x, gpu.Axes(0)) }, func() (*gpu.Array[float32], error) { return gpu.NanMedian[float32](s, x, gpu.Axes(0)) }},
			{"Quantile", func() (*gpu.Array[float32], error) { return gpu.QuantileOf(s, x, 0.3, gpu.Axes(1)) }, func() (*gpu.Array[float32], error) { return gpu.Quantile[float32](s, x, 0.3, gpu.Axes(1)) }},
			{"Quantiles", func() (*gpu.Array[float32], error) { return gpu.QuantilesOf(s, x, []float64{0.1, 0.9}) }, func() (*gpu.Array[float32], error) { return gpu.Quantiles[float32](s, x, []float64{0.1, 0.9}) }},
			{"NanQuantile", func() (*gpu.Array[float32], error) { return gpu.NanQuantileOf(s, x, 0.7, gpu.Axes(0)) }, func() (*gpu.Array[float32], error) { return gpu.NanQuantile[float32](s, x, 0.7, gpu.Axes(0)) }},
			{"NanQuantiles", func() (*gpu.Array[float32], error) { return gpu.NanQuantilesOf(s, x, []float64{0, 1}, gpu.Axes(1)) }, func() (*gpu.Array[float32], error) {
				return gpu.NanQuantiles[float32](s, x, []float64{0, 1}, gpu.Axes(1))
			}},
		} {
			of := must[*gpu.Array[float32]](t)(c.of())
			ex := must[*gpu.Array[float32]](t)(c.expl())
			if got, want := toSlice(t, of), toSlice(t, ex); !slices.Equal(got, want) || len(got) == 0 {
				t.Errorf("%sOf = %v, explicit %v", c.what, got, want)
			}
			of.Free()
			ex.Free()
		}
		// MeanOf against a plain mean of each row.
		m := toSlice(t, must[*gpu.Array[float32]](t)(gpu.MeanOf(s, x, gpu.Axes(1))))
		for r := range 3 {
			sum := 0.0
			for c := range 5 {
				sum += float64(f32[r*5+c])
			}
			if math.Abs(float64(m[r])-sum/5) > 1e-5 {
				t.Errorf("MeanOf row %d = %v, want %v", r, m[r], sum/5)
			}
		}
	})
}

func ExampleSumOf() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	total, _ := gpu.SumOf(s, x)                // float32, as numpy.sum(x)
	rows, _ := gpu.SumOf(s, x, gpu.Axes(-1))   // one per row
	mean, _ := gpu.MeanOf(s, x, gpu.Axes(0))   // one per column
	c, _ := gpu.FromSlice(s, []int32{1, 2, 3}) // int32: NumPy sums into int64,
	n, _ := gpu.Sum[int64](s, c)               // so the type is spelled out
	fmt.Println(total, rows, mean, n)
	fmt.Printf("%+v\n", total)
	// Output:
	// 21 [ 6 15] [2.5 3.5 4.5] 6
	// Array[float32]() on cpu:0 21
}
