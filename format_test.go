package gpu_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/half"
)

// numpyStr is testdata/numpy_str.json: str() of int64 arrays as NumPy prints them
// (testdata/numpy_str.py made it), element i of a case being start + i*scale, negated
// where i%3 == 0 when neg.
type numpyStr struct {
	NumPy string `json:"numpy"`
	Cases []struct {
		Shape []int  `json:"shape"`
		Start int64  `json:"start"`
		Scale int64  `json:"scale"`
		Neg   bool   `json:"neg"`
		Str   string `json:"str"`
	} `json:"cases"`
}

func readNumpyStr(t *testing.T) numpyStr {
	t.Helper()
	b, err := os.ReadFile("testdata/numpy_str.json")
	if err != nil {
		t.Fatal(err)
	}
	var ns numpyStr
	if err := json.Unmarshal(b, &ns); err != nil {
		t.Fatal(err)
	}
	if len(ns.Cases) < 20 {
		t.Fatalf("%d cases in testdata/numpy_str.json", len(ns.Cases))
	}
	return ns
}

// TestPrintLikeNumPy: fmt's %v, String and Text of int64 arrays (every layout rule:
// wrapping at 75 characters, summaries past 1000 elements on each long axis, blank
// lines between blocks, 0-d and empty arrays) equal NumPy's str(), for contiguous
// arrays, non-contiguous views of the same values and other integer types, on every
// device. Each read leaves the array as it was.
func TestPrintLikeNumPy(t *testing.T) {
	ns := readNumpyStr(t)
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		views := 0
		defer func() {
			if views < 15 {
				t.Errorf("%d non-contiguous views printed", views)
			}
		}()
		for _, c := range ns.Cases {
			n := 1
			for _, x := range c.Shape {
				n *= x
			}
			vals := make([]int64, n)
			for i := range vals {
				vals[i] = c.Start + int64(i)*c.Scale
				if c.Neg && i%3 == 0 {
					vals[i] = -vals[i]
				}
			}
			name := fmt.Sprint(c.Shape)
			a := fromShape(t, s, vals, c.Shape)
			if got := fmt.Sprint(a); got != c.Str {
				t.Errorf("%s: fmt.Sprint =\n%s\nNumPy %s prints\n%s", name, got, ns.NumPy, c.Str)
			}
			if got := fmt.Sprintf("%v|%s", a, a); got != c.Str+"|"+c.Str {
				t.Errorf("%s: %%v|%%s = %q", name, got)
			}
			if got := a.String(); got != c.Str {
				t.Errorf("%s: String() = %q", name, got)
			}
			if got, err := a.Text(bg); got != c.Str || err != nil {
				t.Errorf("%s: Text = %q, %v", name, got, err)
			}
			if back := toSlice(t, a); fmt.Sprint(back) != fmt.Sprint(vals) {
				t.Errorf("%s: the array changed", name)
			}
			// The same values as a transposed view of the transpose.
			if len(c.Shape) >= 2 && n > 0 {
				rev := make([]int, len(c.Shape))
				for i := range rev {
					rev[i] = c.Shape[len(rev)-1-i]
				}
				tr := make([]int64, n)
				src := must[*gpu.Array[int64]](t)(gpu.FromSlice(s, vals, c.Shape...))
				tt := must[*gpu.Array[int64]](t)(gpu.Transpose(s, src))
				must[struct{}](t)(struct{}{}, tt.CopyToHost(bg, tr))
				back := must[*gpu.Array[int64]](t)(gpu.FromSlice(s, tr, rev...))
				view := must[*gpu.Array[int64]](t)(back.Transpose())
				if !view.IsContiguous() {
					views++
				}
				if got := fmt.Sprint(view); got != c.Str {
					t.Errorf("%s: a transposed view prints\n%s\nwant\n%s", name, got, c.Str)
				}
				src.Free()
				tt.Free()
				back.Free()
			}
			// int16 (when the values fit): the same text.
			if c.Scale == 1 && c.Start+int64(n) < math.MaxInt16 {
				small := make([]int16, n)
				for i, v := range vals {
					small[i] = int16(v)
				}
				b := fromShape(t, s, small, c.Shape)
				if got := fmt.Sprint(b); got != c.Str {
					t.Errorf("%s int16: fmt.Sprint = %q", name, got)
				}
				b.Free()
			}
			a.Free()
		}
	})
}

// fromShape is FromSlice with any shape, 0-d included.
func fromShape[T gpu.Elem](t *testing.T, s *gpu.Stream, vals []T, shape []int) *gpu.Array[T] {
	t.Helper()
	a := must[*gpu.Array[T]](t)(gpu.Empty[T](s, shape...))
	if err := a.CopyFromHost(bg, vals); err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPrintElementTypes: each element type prints as fmt prints its Go values (bool
// true/false, floats shortest, half types their shortest decimal), right-aligned.
func TestPrintElementTypes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		check := func(what, got, want string) {
			t.Helper()
			if got != want {
				t.Errorf("%s: got\n%s\nwant\n%s", what, got, want)
			}
		}
		b := must[*gpu.Array[bool]](t)(gpu.FromSlice(s, []bool{true, false, false, true}, 2, 2))
		check("bool", fmt.Sprint(b), "[[ true false]\n [false  true]]")
		check("bool %t", fmt.Sprintf("%t", b), "[[ true false]\n [false  true]]")
		i8 := must[*gpu.Array[int8]](t)(gpu.FromSlice(s, []int8{-128, 5, 127}))
		check("int8", fmt.Sprint(i8), "[-128    5  127]")
		check("int8 %x", fmt.Sprintf("%x", i8), "[-80   5  7f]")
		u8 := must[*gpu.Array[uint8]](t)(gpu.FromSlice(s, []uint8{0, 255, 7}))
		check("uint8 %03d", fmt.Sprintf("%03d", u8), "[000 255 007]")
		u64 := must[*gpu.Array[uint64]](t)(gpu.FromSlice(s, []uint64{math.MaxUint64, 1}))
		check("uint64", fmt.Sprint(u64), "[18446744073709551615                    1]")
		in := must[*gpu.Array[int]](t)(gpu.FromSlice(s, []int{-1, 22, 333}))
		check("int", fmt.Sprint(in), "[ -1  22 333]")
		f32 := must[*gpu.Array[float32]](t)(gpu.FromSlice(s, []float32{0.1, -2.5, 1e6, float32(math.Inf(1)), float32(math.NaN()), 3}, 2, 3))
		check("float32", fmt.Sprint(f32), "[[  0.1  -2.5 1e+06]\n [ +Inf   NaN     3]]")
		check("float32 %.2f", fmt.Sprintf("%.2f", f32), "[[      0.10      -2.50 1000000.00]\n [      +Inf        NaN       3.00]]")
		check("float32 %-6.1e", fmt.Sprintf("%-6.1e", f32), "[[1.0e-01  -2.5e+00 1.0e+06 ]\n [+Inf     NaN      3.0e+00 ]]")
		f64 := must[*gpu.Array[float64]](t)(gpu.FromSlice(s, []float64{1.0 / 3, math.Copysign(0, -1)}))
		check("float64", fmt.Sprint(f64), "[0.3333333333333333                 -0]")
		check("float64 %.3v", fmt.Sprintf("%.3v", f64), "[0.333    -0]")
		h := must[*gpu.Array[gpu.Float16]](t)(gpu.FromSlice(s, []gpu.Float16{half.NewFloat16(0.1), half.NewFloat16(65504), half.NewFloat16(-1.5), half.Float16FromBits(0x7e00)}))
		check("float16", fmt.Sprint(h), "[  0.1 65500  -1.5   NaN]")
		check("float16 %.3f", fmt.Sprintf("%.3f", h), "[    0.100 65504.000    -1.500       NaN]")
		bf := must[*gpu.Array[gpu.BFloat16]](t)(gpu.FromSlice(s, []gpu.BFloat16{half.NewBFloat16(0.1), half.NewBFloat16(3), half.NewBFloat16(math.Inf(-1))}))
		check("bfloat16", fmt.Sprint(bf), "[ 0.1    3 -Inf]")
		// A named element type prints through its own methods, as in a slice.
		c := must[*gpu.Array[degC]](t)(gpu.FromSlice(s, []degC{20.5, -3}))
		check("degC", fmt.Sprint(c), "[20.5°C   -3°C]")

		// %+v: the description first; %#v: the description alone.
		desc := fmt.Sprintf("Array[float32](2, 3) on %s:0", d.Backend())
		check("%+v", fmt.Sprintf("%+v", f32), desc+"\n[[  0.1  -2.5 1e+06]\n [ +Inf   NaN     3]]")
		check("%#v", fmt.Sprintf("%#v", f32), desc)
		check("%+v 1-d", fmt.Sprintf("%+v", in), fmt.Sprintf("Array[int64](3) on %s:0 [ -1  22 333]", d.Backend()))
		check("%+v bfloat16", fmt.Sprintf("%+v", bf), fmt.Sprintf("Array[bfloat16](3) on %s:0 [ 0.1    3 -Inf]", d.Backend()))
		// Width pads each element, as for a slice; - aligns left.
		check("%5v", fmt.Sprintf("%5v", in), "[   -1    22   333]")
		check("%-4v", fmt.Sprintf("%-4v", in), "[-1   22   333 ]")

		// 0-d, empty, views.
		z := must[*gpu.Array[float32]](t)(gpu.Full(s, float32(2.5)))
		check("0-d", fmt.Sprint(z), "2.5")
		check("0-d %+v", fmt.Sprintf("%+v", z), fmt.Sprintf("Array[float32]() on %s:0 2.5", d.Backend()))
		e := must[*gpu.Array[float32]](t)(gpu.Empty[float32](s, 3, 0, 2))
		check("empty", fmt.Sprint(e), "[]")
		check("empty %+v", fmt.Sprintf("%+v", e), fmt.Sprintf("Array[float32](3, 0, 2) on %s:0 []", d.Backend()))
		sl := must[*gpu.Array[float32]](t)(f32.Slice(gpu.R(), gpu.R(0, gpu.End, 2)))
		check("slice view", fmt.Sprint(sl), "[[  0.1 1e+06]\n [ +Inf     3]]")
		col := must[*gpu.Array[float32]](t)(f32.Slice(gpu.R(), gpu.R(1)))
		bc := must[*gpu.Array[float32]](t)(col.BroadcastTo(2, 2, 1))
		check("broadcast view", fmt.Sprint(bc), "[[[-2.5]\n  [ NaN]]\n\n [[-2.5]\n  [ NaN]]]")
		for _, x := range []interface{ Free() error }{b, i8, u8, u64, in, f32, f64, h, bf, c, z, e} {
			x.Free()
		}
	})
}

type degC float32

func (c degC) String() string { return fmt.Sprintf("%g°C", float32(c)) }

// TestPrintLarge: a large array reads only the elements it shows (the values are
// right), on a broadcast view too, where a full copy would be 8 GB.
func TestPrintLarge(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := must[*gpu.Array[int32]](t)(gpu.Arange(s, int32(0), int32(3000), int32(1)))
		m := must[*gpu.Array[int32]](t)(a.Reshape(3, 1000))
		want := "[[   0    1    2 ...  997  998  999]\n [1000 1001 1002 ... 1997 1998 1999]\n [2000 2001 2002 ... 2997 2998 2999]]"
		if got := fmt.Sprint(m); got != want {
			t.Errorf("3x1000: got\n%s\nwant\n%s", got, want)
		}
		row := must[*gpu.Array[int32]](t)(m.Slice(gpu.R(1)))
		huge := must[*gpu.Array[int32]](t)(row.BroadcastTo(1<<20, 2, 1000))
		want = "[[[1000 1001 1002 ... 1997 1998 1999]\n  [1000 1001 1002 ... 1997 1998 1999]]\n\n" +
			" [[1000 1001 1002 ... 1997 1998 1999]\n  [1000 1001 1002 ... 1997 1998 1999]]\n\n" +
			" [[1000 1001 1002 ... 1997 1998 1999]\n  [1000 1001 1002 ... 1997 1998 1999]]\n\n" +
			" ...\n\n" +
			" [[1000 1001 1002 ... 1997 1998 1999]\n  [1000 1001 1002 ... 1997 1998 1999]]\n\n" +
			" [[1000 1001 1002 ... 1997 1998 1999]\n  [1000 1001 1002 ... 1997 1998 1999]]\n\n" +
			" [[1000 1001 1002 ... 1997 1998 1999]\n  [1000 1001 1002 ... 1997 1998 1999]]]"
		if got := fmt.Sprint(huge); got != want {
			t.Errorf("broadcast (1<<20, 2, 1000): got\n%s\nwant\n%s", got, want)
		}
		a.Free()
	})
}

// TestPrintErrors: a nil, freed or unreadable array prints what went wrong, never
// panics, and Text returns the error.
func TestPrintErrors(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		var nilArr *gpu.Array[float32]
		if got := fmt.Sprintf("%v %+v %#v %d", nilArr, nilArr, nilArr, nilArr); got != "<nil array> <nil array> <nil array> <nil array>" {
			t.Errorf("nil array prints %q", got)
		}
		if _, err := nilArr.Text(bg); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Text of a nil array = %v", err)
		}
		a := must[*gpu.Array[float32]](t)(gpu.FromSlice(s, []float32{1, 2, 3, 4, 5, 6}, 2, 3))
		v := must[*gpu.Array[float32]](t)(a.Transpose())
		if err := a.Free(); err != nil {
			t.Fatal(err)
		}
		for _, x := range []*gpu.Array[float32]{a, v} {
			desc := fmt.Sprintf("%#v", x)
			got := fmt.Sprint(x)
			if !strings.HasPrefix(got, "%!v("+desc+": ") || !strings.Contains(got, "after Free") || !strings.HasSuffix(got, ")") {
				t.Errorf("a freed array prints %q", got)
			}
			if got := fmt.Sprintf("%.2f", x); !strings.HasPrefix(got, "%!f("+desc) {
				t.Errorf("a freed array's %%.2f prints %q", got)
			}
			if _, err := x.Text(bg); !errors.Is(err, gpu.ErrClosed) {
				t.Errorf("Text of a freed array = %v, want ErrClosed", err)
			}
		}
		b := must[*gpu.Array[float32]](t)(gpu.FromSlice(s, []float32{1, 2}))
		ctx, cancel := context.WithCancel(bg)
		cancel()
		if _, err := b.Text(ctx); !errors.Is(err, context.Canceled) {
			t.Errorf("Text under a cancelled context = %v", err)
		}
		var noCtx context.Context
		if _, err := b.Text(noCtx); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Text(nil) = %v", err)
		}
		b.Free()
	})
}

// TestPrintFaultedDevice: after a fault, printing says so instead of values.
func TestPrintFaultedDevice(t *testing.T) {
	d, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	s := d.DefaultStream()
	a := must[*gpu.Array[float32]](t)(gpu.FromSlice(s, []float32{1, 2}))
	if err := s.Synchronize(bg); err != nil {
		t.Fatal(err)
	}
	// A spin first, so that the trap has not faulted the stream yet when the write is
	// queued behind it (the write never runs; the read waits for it).
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	spin := must[*gpu.Function](t)(d.Builtin("spin"))
	if err := s.Launch(spin, one, uint64(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	trap := must[*gpu.Function](t)(d.Builtin("trap"))
	if err := s.Launch(trap, one); err != nil {
		t.Fatal(err)
	}
	if err := gpu.Fill(s, a, 3); err != nil {
		t.Fatalf("Fill queued behind the trap: %v", err)
	}
	got := fmt.Sprint(a)
	if !strings.HasPrefix(got, "%!v(Array[float32](2) on cpu:") || !errors.Is(func() error { _, err := a.Text(bg); return err }(), gpu.ErrLaunchFailed) {
		t.Errorf("an array of a faulted device prints %q", got)
	}
}

// TestPrintConcurrent: printing from many goroutines while other goroutines work on
// the same array (race detector).
func TestPrintConcurrent(t *testing.T) {
	d := must[*gpu.Device](t)(gpu.OpenBackend("cpu", 0))
	s := d.DefaultStream()
	a := must[*gpu.Array[int64]](t)(gpu.Arange(s, int64(0), int64(2000), int64(1)))
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 5 {
				if got := fmt.Sprint(a); got != "[   0    1    2 ... 1997 1998 1999]" {
					t.Errorf("got %q", got)
				}
			}
		})
	}
	wg.Wait()
	a.Free()
}

func ExampleArray_Format() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	y, _ := gpu.Eval[float32](s, "a*x + b", gpu.Vars{"a": 2.0, "x": x, "b": 1.0})
	rows, _ := gpu.SumOf(s, y, gpu.Axes(1))
	fmt.Println(y)
	fmt.Printf("%+v\n", rows)
	fmt.Printf("%.1f\n", y)
	fmt.Printf("%#v\n", y)
	big, _ := gpu.Arange(s, int64(0), int64(5000), int64(1))
	fmt.Println(big)
	// Output:
	// [[ 3  5  7]
	//  [ 9 11 13]]
	// Array[float32](2) on cpu:0 [15 33]
	// [[ 3.0  5.0  7.0]
	//  [ 9.0 11.0 13.0]]
	// Array[float32](2, 3) on cpu:0
	// [   0    1    2 ... 4997 4998 4999]
}
