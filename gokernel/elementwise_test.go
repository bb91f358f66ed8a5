package gokernel_test

import (
	_ "embed"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
)

// The scalar functions of the tests below, and this file's source for the GPU.
//
//go:embed elementwise_test.go
var elementwiseTestSrc string

func mulAdd(x float32, y float64) float64 { return float64(x)*y + 1 }

func scaleInt(x int32) float32 { return float32(x)*0.5 - 3 }

func divInts(x, y int32) int32 { return x / y }

// stride and out are named as the generated kernel's variables were (TestFuncNames).
func stride(v int32) int32 { return 2*v + 1 }

func out(a, b int32) int32 { return a - 3*b }

// hostView returns a view's elements in row-major order as the CPU reference sees
// them: the root package's BroadcastTo and ToSlice, which have their own tests.
func hostView[T gpu.Elem](t *testing.T, a *gpu.Array[T], shape []int) []T {
	t.Helper()
	b, err := a.BroadcastTo(shape...)
	if err != nil {
		t.Fatal(err)
	}
	return toSlice(t, b)
}

// views returns arrays of shape made several ways: contiguous, a transposed copy's
// transpose (strided), a slice of a larger array (offset and step), one element
// broadcast (zero strides).
func views(t *testing.T, s *gpu.Stream, shape []int) map[string]*gpu.Array[float32] {
	t.Helper()
	n := 1
	for _, d := range shape {
		n *= d
	}
	out := map[string]*gpu.Array[float32]{"contiguous": fromSliceShape(t, s, randF32(n), shape...)}
	if len(shape) == 2 {
		tr := fromSliceShape(t, s, randF32(n), shape[1], shape[0])
		v, err := tr.Transpose()
		if err != nil {
			t.Fatal(err)
		}
		out["transposed"] = v
		big := fromSliceShape(t, s, randF32((shape[0]+1)*(2*shape[1]+3)), shape[0]+1, 2*shape[1]+3)
		v, err = big.Slice(gpu.R(1, shape[0]+1), gpu.R(1, 2*shape[1]+1, 2))
		if err != nil {
			t.Fatal(err)
		}
		out["sliced"] = v
	}
	if len(shape) == 0 {
		z, err := fromSliceShape(t, s, randF32(1), 1).Reshape() // 0-d
		if err != nil {
			t.Fatal(err)
		}
		out["contiguous"] = z
		return out
	}
	one := fromSliceShape(t, s, randF32(1), 1)
	v, err := one.BroadcastTo(shape...)
	if err != nil {
		t.Fatal(err)
	}
	out["broadcast"] = v
	return out
}

func fromSliceShape[T gpu.Elem](t *testing.T, s *gpu.Stream, x []T, shape ...int) *gpu.Array[T] {
	t.Helper()
	a, err := gpu.FromSlice(s, x, shape...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Free() })
	return a
}

// TestFunc2Broadcast checks NewFunc2's operation against plain Go over pairs of
// shapes that broadcast (rows, columns, scalars, a 0-d array, empty arrays) and
// every kind of view, on every device; the inputs stay unchanged.
func TestFunc2Broadcast(t *testing.T) {
	f, err := gokernel.NewFunc2(elementwiseSrc, clampedSum)
	if err != nil {
		t.Fatal(err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		for _, tc := range []struct{ x, y []int }{
			{[]int{7, 33}, []int{7, 33}}, {[]int{7, 33}, []int{33}}, {[]int{7, 1}, []int{1, 33}},
			{[]int{7, 33}, []int{7, 1}}, {[]int{300}, []int{}}, {[]int{}, []int{}}, {[]int{3, 1, 5}, []int{4, 1}},
			{[]int{0, 5}, []int{5}}, {[]int{2, 3}, []int{2, 3}},
		} {
			shape, err := gpu.BroadcastShapes(tc.x, tc.y)
			if err != nil {
				t.Fatal(err)
			}
			for xn, x := range views(t, s, tc.x) {
				for yn, y := range views(t, s, tc.y) {
					xh, yh := hostView(t, x, shape), hostView(t, y, shape)
					xBefore, yBefore := toSlice(t, x), toSlice(t, y)
					z, err := f.Apply(s, x, y)
					if err != nil {
						t.Fatalf("%v %s, %v %s: %v", tc.x, xn, tc.y, yn, err)
					}
					if !equalInts(z.Shape(), shape) {
						t.Fatalf("%v, %v: shape %v, want %v", tc.x, tc.y, z.Shape(), shape)
					}
					got := toSlice(t, z)
					for i := range got {
						if want := clampedSum(xh[i], yh[i]); got[i] != want {
							t.Fatalf("%v %s, %v %s: element %d is %v, want %v", tc.x, xn, tc.y, yn, i, got[i], want)
						}
					}
					z.Free()
					if !equalF32(toSlice(t, x), xBefore) || !equalF32(toSlice(t, y), yBefore) {
						t.Fatalf("%v %s, %v %s: an input changed", tc.x, xn, tc.y, yn)
					}
				}
			}
		}
	})
}

// TestFunc2Into checks Into: a poisoned result every element of which is written,
// mixed element types, in place (out is x), and the errors.
func TestFunc2Into(t *testing.T) {
	f, err := gokernel.NewFunc2(elementwiseTestSrc, mulAdd)
	if err != nil {
		t.Fatal(err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x := fromSliceShape(t, s, randF32(40*3), 40, 3)
		yh := make([]float64, 3)
		for i := range yh {
			yh[i] = rand.Float64()*4 - 2
		}
		y := fromSliceShape(t, s, yh, 3)
		poison := make([]float64, 120)
		for i := range poison {
			poison[i] = math.NaN()
		}
		out := fromSliceShape(t, s, poison, 40, 3)
		if err := f.Into(s, out, x, y); err != nil {
			t.Fatal(err)
		}
		xh, got := toSlice(t, x), toSlice(t, out)
		for i := range got {
			if want := mulAdd(xh[i], yh[i%3]); got[i] != want {
				t.Fatalf("element %d is %v, want %v", i, got[i], want)
			}
		}
		// In place: out is y's array, x broadcast over it.
		g, err := gokernel.NewFunc2(elementwiseSrc, clampedSum)
		if err != nil {
			t.Fatal(err)
		}
		a := fromSliceShape(t, s, randF32(5), 5)
		b := fromSliceShape(t, s, randF32(4*5), 4, 5)
		ah, bh := toSlice(t, a), toSlice(t, b)
		if err := g.Into(s, b, a, b); err != nil {
			t.Fatal(err)
		}
		for i, v := range toSlice(t, b) {
			if want := clampedSum(ah[i%5], bh[i]); v != want {
				t.Fatalf("in place: element %d is %v, want %v", i, v, want)
			}
		}
		// Errors.
		bad := fromSliceShape(t, s, make([]float64, 4), 4)
		strided, err := fromSliceShape(t, s, make([]float64, 240), 40, 6).Slice(gpu.R(), gpu.R(0, 6, 2))
		if err != nil {
			t.Fatal(err)
		}
		for name, err := range map[string]error{
			"shapes":        f.Into(s, bad, x, y),
			"strided out":   f.Into(s, strided, x, y),
			"nil":           f.Into(s, out, nil, y),
			"no broadcast":  func() error { _, err := f.Apply(s, x, fromSliceShape(t, s, yh[:2], 2)); return err }(),
			"out too small": f.Into(s, fromSliceShape(t, s, make([]float64, 3), 3), x, y),
		} {
			if !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("%s: %v, want an error wrapping ErrInvalidValue", name, err)
			}
		}
	})
}

// TestFunc1 checks NewFunc1's operation on a strided view and a broadcast scalar,
// and that a failing check in the scalar function is a Fault naming it.
func TestFunc1(t *testing.T) {
	f, err := gokernel.NewFunc1(elementwiseTestSrc, scaleInt)
	if err != nil {
		t.Fatal(err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		xh := edgeInts[int32](6 * 50)
		x, err := fromSliceShape(t, s, xh, 6, 50).Slice(gpu.R(0, 6, 2), gpu.R(3, 50))
		if err != nil {
			t.Fatal(err)
		}
		z, err := f.Apply(s, x)
		if err != nil {
			t.Fatal(err)
		}
		defer z.Free()
		if !equalInts(z.Shape(), []int{3, 47}) {
			t.Fatalf("shape %v", z.Shape())
		}
		for i, v := range toSlice(t, z) {
			r, c := i/47, i%47
			if want := scaleInt(xh[(2*r)*50+3+c]); v != want {
				t.Fatalf("element %d is %v, want %v", i, v, want)
			}
		}
		d, err := gokernel.NewFunc2(elementwiseTestSrc, divInts)
		if err != nil {
			t.Fatal(err)
		}
		num := fromSliceShape(t, s, []int32{7, -7, 9}, 3)
		den := fromSliceShape(t, s, []int32{2, 0, 1}, 3)
		q, err := d.Apply(s, num, den)
		if err == nil {
			defer q.Free()
			err = s.Synchronize(bg)
		}
		var fault *gokernel.Fault
		if !errors.As(err, &fault) || fault.Kernel != "divInts" || fault.Msg != "integer divide by zero" || fault.File != "elementwise_test.go" {
			t.Fatalf("got %v, want a Fault in divInts", err)
		}
	})
}

// TestFuncRejects checks the errors of NewFunc1 and NewFunc2: a function the subset
// refuses, at its position, and element types that are not Go's numbers.
func TestFuncRejects(t *testing.T) {
	_, err := gokernel.NewFunc1(elementwiseTestSrc, refused)
	var e *gokernel.Error
	if !errors.As(err, &e) || !errors.Is(err, gpu.ErrInvalidValue) || e.Pos.Filename != "elementwise_test.go" || e.Pos.Line == 0 {
		t.Fatalf("got %v, want an *Error in elementwise_test.go", err)
	}
	if _, err := gokernel.NewFunc1(elementwiseSrc, func(x float32) float32 { return x }); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("a function literal: %v", err)
	}
	// Element types of package gpu that are not Go's numbers: the error names the
	// type, not the generated kernel's parameters.
	for name, mk := range map[string]func() error{
		"bool": func() error {
			_, err := gokernel.NewFunc1(elementwiseTestSrc, positive)
			return err
		},
		"half.Float16": func() error {
			_, err := gokernel.NewFunc2(elementwiseTestSrc, halfAdd)
			return err
		},
	} {
		err := mk()
		if !errors.Is(err, gpu.ErrInvalidValue) || errors.As(err, &e) || !strings.Contains(err.Error(), "number types, not "+name) {
			t.Errorf("%s: got %v, want an error naming %s", name, err, name)
		}
	}
}

func positive(x float32) bool { return x > 0 }

func halfAdd(x gpu.Float16, y float32) float32 { return y }

func refused(x float32) float32 {
	go func() {}()
	return x
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(a[i] != a[i] && b[i] != b[i]) {
			return false
		}
	}
	return true
}

// TestFuncIntoOverlap checks Into with a result that overlaps an input otherwise than
// by being it (x[1:] into x[:7], a broadcast element inside the result, a reversed
// view): the input is read as it was before the call, as gpu.EvalInto reads it (and
// NumPy), on every device.
func TestFuncIntoOverlap(t *testing.T) {
	add, err := gokernel.NewFunc2(captureTestSrc, addF32)
	if err != nil {
		t.Fatal(err)
	}
	neg, err := gokernel.NewFunc1(captureTestSrc, negF32)
	if err != nil {
		t.Fatal(err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		view := func(w *gpu.Array[float32], lo, hi int) *gpu.Array[float32] {
			t.Helper()
			v, err := w.Slice(gpu.R(lo, hi))
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		flip := func(w *gpu.Array[float32]) *gpu.Array[float32] {
			t.Helper()
			v, err := w.Flip()
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		zero := fromSlice(t, s, make([]float32, 7))
		for _, tc := range []struct {
			name  string
			src   string // the operation as an expression, for EvalInto
			views func(w *gpu.Array[float32]) (out *gpu.Array[float32], vars gpu.Vars)
			want  []float32
		}{
			{"x[:7] into x[1:]", "x + y", func(w *gpu.Array[float32]) (*gpu.Array[float32], gpu.Vars) {
				return view(w, 1, 8), gpu.Vars{"x": view(w, 0, 7), "y": zero}
			}, []float32{1, 1, 2, 3, 4, 5, 6, 7}},
			{"x[1:] into x[:7]", "x + y", func(w *gpu.Array[float32]) (*gpu.Array[float32], gpu.Vars) {
				return view(w, 0, 7), gpu.Vars{"x": view(w, 1, 8), "y": zero}
			}, []float32{2, 3, 4, 5, 6, 7, 8, 8}},
			{"x[3] broadcast into x", "x + y", func(w *gpu.Array[float32]) (*gpu.Array[float32], gpu.Vars) {
				return w, gpu.Vars{"x": view(w, 3, 4), "y": w}
			}, []float32{5, 6, 7, 8, 9, 10, 11, 12}},
			{"-x[:6] into x[2:]", "-x", func(w *gpu.Array[float32]) (*gpu.Array[float32], gpu.Vars) {
				return view(w, 2, 8), gpu.Vars{"x": view(w, 0, 6)}
			}, []float32{1, 2, -1, -2, -3, -4, -5, -6}},
			{"-flip(x) into x", "-x", func(w *gpu.Array[float32]) (*gpu.Array[float32], gpu.Vars) {
				return w, gpu.Vars{"x": flip(w)}
			}, []float32{-8, -7, -6, -5, -4, -3, -2, -1}},
		} {
			for _, eval := range []bool{false, true} {
				w := fromSlice(t, s, []float32{1, 2, 3, 4, 5, 6, 7, 8})
				out, vars := tc.views(w)
				var err error
				switch {
				case eval:
					err = gpu.EvalInto(s, out, tc.src, vars)
				case vars["y"] != nil:
					err = add.Into(s, out, vars["x"].(*gpu.Array[float32]), vars["y"].(*gpu.Array[float32]))
				default:
					err = neg.Into(s, out, vars["x"].(*gpu.Array[float32]))
				}
				if err != nil {
					t.Fatalf("%s (EvalInto %v): %v", tc.name, eval, err)
				}
				if got := toSlice(t, w); !equalF32(got, tc.want) {
					t.Errorf("%s (EvalInto %v): %v, want %v", tc.name, eval, got, tc.want)
				}
				w.Free()
			}
		}
	})
}

// TestFuncNames checks functions named as the generated kernel's variables once were
// (stride, out): the kernel's own names must hide none of the file's.
func TestFuncNames(t *testing.T) {
	f1, err := gokernel.NewFunc1(elementwiseTestSrc, stride)
	if err != nil {
		t.Fatal(err)
	}
	f2, err := gokernel.NewFunc2(elementwiseTestSrc, out)
	if err != nil {
		t.Fatal(err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		xh := edgeInts[int32](300)
		yh := edgeInts[int32](300)
		slices.Reverse(yh)
		x, y := fromSliceShape(t, s, xh, 300), fromSliceShape(t, s, yh, 300)
		a, err := f1.Apply(s, x)
		if err != nil {
			t.Fatal(err)
		}
		defer a.Free()
		b, err := f2.Apply(s, x, y)
		if err != nil {
			t.Fatal(err)
		}
		defer b.Free()
		ah, bh := toSlice(t, a), toSlice(t, b)
		for i := range xh {
			if ah[i] != stride(xh[i]) || bh[i] != out(xh[i], yh[i]) {
				t.Fatalf("element %d: %d and %d, want %d and %d", i, ah[i], bh[i], stride(xh[i]), out(xh[i], yh[i]))
			}
		}
	})
}
