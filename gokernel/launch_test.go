package gokernel_test

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
	"github.com/go-gpu/gpu/ptx"
)

// TestLaunchErrors checks the errors of bad launches: each wraps ErrInvalidValue (or
// ErrNotSupported) and says what is wrong.
func TestLaunchErrors(t *testing.T) {
	s := cpuStream(t)
	saxpyK := newKernel(t, Saxpy)
	scale := newKernel(t, Scale[float32])
	x := fromSlice(t, s, randF32(16))
	xi := fromSlice(t, s, []int32{1, 2, 3})
	m, err := gpu.FromSlice(s, randF32(16), 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	mt, err := m.Transpose()
	if err != nil {
		t.Fatal(err)
	}
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 16}}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"args", saxpyK.Launch(s, one, x, x), "takes 3 arguments"},
		{"type", saxpyK.Launch(s, one, float32(1), xi, x), "a slice of float32, not of int32"},
		{"slice", saxpyK.Launch(s, one, float32(1), []float32{1}, x), "takes a *gpu.Array"},
		{"scalar", saxpyK.Launch(s, one, "2", x, x), "wants a value of type float32, not string"},
		{"overflow", newSem(t, Failures).Launch(s, one, 1<<40, 0, xi, xi), ""},
		{"strided", saxpyK.Launch(s, one, float32(1), mt, mt), "not contiguous"},
		{"block", saxpyK.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 2048}}, float32(1), x, x), "at most 1024 threads"},
		{"grid", saxpyK.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: 0}, Block: gpu.Dim3{X: 1}}, float32(1), x, x), "grid"},
		{"shared", saxpyK.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}, SharedMem: 16}, float32(1), x, x), "SharedMem must be 0"},
		{"nil stream", saxpyK.Launch(nil, one, float32(1), x, x), "nil stream"},
		{"n", saxpyK.LaunchN(s, -1, float32(1), x, x), "-1 threads"},
		{"generic", scale.Launch(s, one, float32(1), xi), "int32 does not satisfy"},
		{"instantiation", scale.Launch(s, one, 2.0, fromSlice(t, s, []float64{1})), "no function given to New takes these argument types"},
	} {
		if tc.name == "overflow" {
			// Failures takes (mode, at int, ...): 1<<40 is an int; fine.
			if tc.err != nil {
				t.Errorf("overflow: %v", tc.err)
			}
			continue
		}
		if tc.err == nil || !strings.Contains(tc.err.Error(), tc.want) ||
			!errors.Is(tc.err, gpu.ErrInvalidValue) && !errors.Is(tc.err, gpu.ErrNotSupported) {
			t.Errorf("%s: got %v, want %q", tc.name, tc.err, tc.want)
		}
	}
	// An instantiation made at a call site that is not generic has its name.
	if _, err := gokernel.New(semSrc, Shifts[int8, uint8]); err != nil {
		t.Errorf("New(Shifts[int8, uint8]): %v", err)
	}
	// A kernel compiled without its function can't run on the CPU.
	gk, err := gokernel.Compile("kernels_test.go", kernelsSrc, "Saxpy")
	if err != nil {
		t.Fatal(err)
	}
	if err := gk.Launch(s, one, float32(1), x, x); !errors.Is(err, gpu.ErrNotSupported) {
		t.Errorf("Compile's kernel on the CPU: %v", err)
	}
	if err := s.Synchronize(bg); err != nil {
		t.Fatal(err)
	}
	// New's own errors.
	for _, fns := range [][]any{nil, {42}, {Saxpy, Copy}, {func(float32) {}}} {
		if _, err := gokernel.New(kernelsSrc, fns...); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("New(%v): %v", fns, err)
		}
	}
}

// TestScalarConversion checks how Go values become scalar parameters.
func TestScalarConversion(t *testing.T) {
	s := cpuStream(t)
	k := newSem(t, Failures) // (mode, at int, x, out []int32)
	x, out := fromSlice(t, s, make([]int32, 4)), fromSlice(t, s, make([]int32, 4))
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 4}}
	if err := k.Launch(s, one, int64(-1), -1, x, out); err == nil || !strings.Contains(err.Error(), "wants a value of type int, not int64") {
		t.Errorf("int64 for int: %v", err)
	}
	if err := k.Launch(s, one, 2.5, -1, x, out); err == nil {
		t.Errorf("float64 for int: no error")
	}
	sx := newKernel(t, Saxpy)
	y := fromSlice(t, s, make([]float32, 4))
	if err := sx.Launch(s, one, 3, y, y); err != nil { // an int constant for a float32
		t.Errorf("int for float32: %v", err)
	}
	if err := s.Synchronize(bg); err != nil {
		t.Fatal(err)
	}
}

// TestScalarRepresentable checks the conversions of int and float64 arguments to
// scalar parameters, Go's rule for untyped constants: an integer type holds the value
// exactly, a float type rounds it to nearest unless that overflows, and NaN and ±Inf
// stay themselves; the values the kernel sees are compared with Go's conversions.
func TestScalarRepresentable(t *testing.T) {
	k := newKernel(t, Scalars) // (a uint8, b int32, c float32, d float64, out []float64)
	nan, inf := math.NaN(), math.Inf(1)
	maxUp := float64(math.MaxFloat32) + math.Ldexp(1, 102) // rounds down to MaxFloat32
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		out := fromSlice(t, s, make([]float64, 4))
		for _, tc := range []struct {
			a, b, c, d any
			want       []float64 // nil: an error
		}{
			{255, -1 << 31, 16777217, 1<<53 + 1, []float64{255, -1 << 31, 16777216, 1 << 53}},
			{255.0, 2.0, 16777217.0, 0.1, []float64{255, 2, 16777216, 0.1}},
			{0, -2147483648.0, 0.1, 1e300, []float64{0, -1 << 31, float64(float32(0.1)), 1e300}},
			{0, 0, maxUp, inf, []float64{0, 0, math.MaxFloat32, inf}},
			{0, 0, -maxUp, -inf, []float64{0, 0, -math.MaxFloat32, -inf}},
			{0, 0, inf, nan, []float64{0, 0, inf, nan}},
			{0, 0, -inf, 0, []float64{0, 0, -inf, 0}},
			{0, 0, nan, 0, []float64{0, 0, nan, 0}},
			{0, 0, 1e-50, 0, []float64{0, 0, 0, 0}}, // underflow rounds to zero
			{uint8(7), int32(-3), float32(1.5), 2.5, []float64{7, -3, 1.5, 2.5}},
			// Not representable.
			{0, 0, 1e300, 0, nil},
			{0, 0, -1e300, 0, nil},
			{0, 0, math.Ldexp(1, 128), 0, nil},
			{256, 0, 0, 0, nil},
			{-1, 0, 0, 0, nil},
			{255.5, 0, 0, 0, nil},
			{-1.0, 0, 0, 0, nil},
			{nan, 0, 0, 0, nil},
			{inf, 0, 0, 0, nil},
			{0, 1 << 31, 0, 0, nil},
			{0, 2147483648.0, 0, 0, nil},
			{0, 2.5, 0, 0, nil},
			{0, -inf, 0, 0, nil},
			{0, int64(1), 0, 0, nil}, // typed values keep their type
			{0, 0, float32(1), float32(1), nil},
		} {
			err := k.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, tc.a, tc.b, tc.c, tc.d, out)
			if tc.want == nil {
				if !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "representable") &&
					!strings.Contains(err.Error(), "overflows") && !strings.Contains(err.Error(), "wants a value") {
					t.Errorf("%v, %v, %v, %v: %v, want an error", tc.a, tc.b, tc.c, tc.d, err)
				}
				continue
			}
			if err != nil {
				t.Errorf("%v, %v, %v, %v: %v", tc.a, tc.b, tc.c, tc.d, err)
				continue
			}
			got := toSlice(t, out)
			for i, w := range tc.want {
				if got[i] != w && !(math.IsNaN(got[i]) && math.IsNaN(w)) {
					t.Errorf("%v, %v, %v, %v: the kernel sees %v, want %v", tc.a, tc.b, tc.c, tc.d, got, tc.want)
					break
				}
			}
		}
	})
}

// TestNilArrayArgument: a nil array for a slice parameter is an error that says so,
// wrapping gpu.ErrInvalidValue as the library's other calls do, on Launch and on the
// elementwise operations.
func TestNilArrayArgument(t *testing.T) {
	s := cpuStream(t)
	k := newKernel(t, Saxpy)
	x := fromSlice(t, s, randF32(4))
	var nilA *gpu.Array[float32]
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"nil", k.LaunchN(s, 4, 1, nilA, x)},
		{"nil out", k.LaunchN(s, 4, 1, x, nilA)},
		{"zero Array", k.LaunchN(s, 4, 1, x, &gpu.Array[float32]{})},
	} {
		if !errors.Is(tc.err, gpu.ErrInvalidValue) || !strings.Contains(tc.err.Error(), "nil array") ||
			strings.Contains(tc.err.Error(), "contiguous") {
			t.Errorf("%s: %v, want a nil array error", tc.name, tc.err)
		}
	}
	if err := s.Synchronize(bg); err != nil {
		t.Fatal(err)
	}
}

// TestLargeLaunch launches one thread per element of 2^31 + 5 bytes (GPU only).
func TestLargeLaunch(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a 2 GiB launch")
	}
	d, err := gpu.OpenBackend("cuda", 0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 1<<31 + 5
	out, err := gpu.Empty[uint8](s, n)
	if err != nil {
		t.Skipf("no room for 2 GiB: %v", err)
	}
	defer out.Free()
	k := newKernel(t, Fill8)
	if err := k.LaunchN(s, n, out); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1, 255, 1<<31 - 1, 1 << 31, 1<<31 + 1, n - 1} {
		v, err := out.At(bg, i)
		if err != nil {
			t.Fatal(err)
		}
		if want := uint8(i) ^ uint8(i>>31); v != want {
			t.Errorf("out[%d] = %d, want %d", i, v, want)
		}
	}
}

// TestZeroLaunchErrors: LaunchN of no threads launches nothing but checks its stream
// and arguments as Launch does.
func TestZeroLaunchErrors(t *testing.T) {
	s := cpuStream(t)
	k := newKernel(t, Saxpy)
	x := fromSlice(t, s, randF32(4))
	xi := fromSlice(t, s, []int32{1, 2, 3})
	closed, err := s.Device().NewStream()
	if err != nil {
		t.Fatal(err)
	}
	if err := closed.Close(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		err  error
		is   error
		want string
	}{
		{"nil stream", k.LaunchN(nil, 0, float32(1), x, x), gpu.ErrInvalidValue, "nil stream"},
		{"args", k.LaunchN(s, 0, "a", 1, 2, 3), gpu.ErrInvalidValue, "takes 3 arguments"},
		{"type", k.LaunchN(s, 0, float32(1), xi, x), gpu.ErrInvalidValue, "a slice of float32, not of int32"},
		{"scalar", k.LaunchN(s, 0, "2", x, x), gpu.ErrInvalidValue, "not string"},
		{"closed stream", k.LaunchN(closed, 0, float32(1), x, x), gpu.ErrClosed, ""},
	} {
		if !errors.Is(tc.err, tc.is) || !strings.Contains(fmt.Sprint(tc.err), tc.want) {
			t.Errorf("%s: got %v, want an error wrapping %v saying %q", tc.name, tc.err, tc.is, tc.want)
		}
	}
	if err := k.LaunchN(s, 0, float32(1), x, x); err != nil {
		t.Errorf("LaunchN of no threads: %v", err)
	}
	// A zero stream is a nil one, for every entry point.
	zero := &gpu.Stream{}
	neg, err := gokernel.NewFunc1(captureTestSrc, negF32)
	if err != nil {
		t.Fatal(err)
	}
	add, err := gokernel.NewFunc2(captureTestSrc, addF32)
	if err != nil {
		t.Fatal(err)
	}
	empty := fromSlice(t, s, []float32{})
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"LaunchN, zero stream", k.LaunchN(zero, 4, float32(1), x, x)},
		{"LaunchN of 0, zero stream", k.LaunchN(zero, 0, float32(1), x, x)},
		{"Launch, zero stream", k.Launch(zero, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 4}}, float32(1), x, x)},
		{"Func1.Apply, zero stream", e1(neg.Apply(zero, x))},
		{"Func1.Into, zero stream", neg.Into(zero, empty, empty)},
		{"Func2.Apply, zero stream", e1(add.Apply(zero, x, x))},
		{"Func2.Into, zero stream", add.Into(zero, empty, empty, empty)},
	} {
		if !errors.Is(tc.err, gpu.ErrInvalidValue) || !strings.Contains(fmt.Sprint(tc.err), "nil stream") {
			t.Errorf("%s: %v, want an error wrapping ErrInvalidValue saying \"nil stream\"", tc.name, tc.err)
		}
	}
	// Empty operations on a closed stream are errors too.
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"Func1.Into, closed stream", neg.Into(closed, empty, empty)},
		{"Func2.Into, closed stream", add.Into(closed, empty, empty, empty)},
	} {
		if !errors.Is(tc.err, gpu.ErrClosed) {
			t.Errorf("%s: %v, want an error wrapping ErrClosed", tc.name, tc.err)
		}
	}
	// LaunchN of no threads in a capture adds nothing and is no error (the stream
	// is open), nor is an empty elementwise operation.
	g, err := s.Capture(func() error {
		if err := k.Unchecked().LaunchN(s, 0, float32(1), x, x); err != nil {
			return err
		}
		return neg.Unchecked().Into(s, empty, empty)
	})
	if err != nil {
		t.Fatalf("a capture of LaunchN of no threads: %v", err)
	}
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	g.Close()
}

// e1 keeps the error of a call returning one value besides it.
func e1[T any](_ T, err error) error { return err }

// TestNilKernel: a nil or zero Kernel, Func1 or Func2 (a failed New's, say) gives
// errors wrapping ErrInvalidValue, never a panic.
func TestNilKernel(t *testing.T) {
	s := cpuStream(t)
	x := fromSlice(t, s, randF32(4))
	one := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 4}}
	call := func(name string, f func() error) {
		t.Helper()
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("%s panicked: %v", name, p)
			}
		}()
		if err := f(); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "nil") {
			t.Errorf("%s: %v, want an error wrapping ErrInvalidValue", name, err)
		}
	}
	for _, k := range []*gokernel.Kernel{nil, {}} {
		call("LaunchN", func() error { return k.LaunchN(s, 4, float32(1), x, x) })
		call("LaunchN of 0", func() error { return k.LaunchN(s, 0, float32(1), x, x) })
		call("Launch", func() error { return k.Launch(s, one, float32(1), x, x) })
		call("PTX", func() error { _, _, err := k.PTX(9, 0); return err })
		call("Unchecked().LaunchN", func() error { return k.Unchecked().LaunchN(s, 4, float32(1), x, x) })
		if k == nil && k.Name() != "" {
			t.Errorf("Name of a nil kernel: %q", k.Name())
		}
	}
	for _, f := range []*gokernel.Func1[float32, float32]{nil, {}} {
		call("Func1.Apply", func() error { _, err := f.Apply(s, x); return err })
		call("Func1.Into", func() error { return f.Into(s, x, x) })
		call("Func1.Unchecked().Apply", func() error { _, err := f.Unchecked().Apply(s, x); return err })
		if f == nil && f.Kernel() != nil {
			t.Error("Kernel of a nil Func1 isn't nil")
		}
	}
	for _, f := range []*gokernel.Func2[float32, float32, float32]{nil, {}} {
		call("Func2.Apply", func() error { _, err := f.Apply(s, x, x); return err })
		call("Func2.Into", func() error { return f.Into(s, x, x, x) })
		call("Func2.Unchecked().Into", func() error { return f.Unchecked().Into(s, x, x, x) })
		if f == nil && f.Kernel() != nil {
			t.Error("Kernel of a nil Func2 isn't nil")
		}
	}
}

// TestPTXTarget: PTX writes the module for the compute capability asked for (past
// 9.0, for sm_90, the newest target of the PTX ISA version declared, which the driver
// compiles forward), and refuses those a Go kernel can't run on (below 7.0, as a
// launch on such a device) and those that aren't one, rather than writing a .target of
// sm_00 or sm_-10.
func TestPTXTarget(t *testing.T) {
	k, err := gokernel.New(kernelsSrc, Saxpy)
	if err != nil {
		t.Fatal(err)
	}
	for _, cc := range [][3]int{{7, 0, 70}, {8, 6, 86}, {9, 0, 90}, {10, 0, 90}, {12, 0, 90}} {
		src, _, err := k.PTX(cc[0], cc[1])
		want := fmt.Sprintf("\n.version %s\n.target sm_%d\n", ptx.DefaultVersion, cc[2])
		if err != nil || !strings.Contains(src, want) {
			t.Errorf("%d.%d: error %v, or no %q in the module", cc[0], cc[1], err, want)
		}
	}
	for _, tc := range []struct {
		major, minor int
		want         error
	}{{6, 1, gpu.ErrNotSupported}, {0, 0, gpu.ErrNotSupported}, {-1, 0, gpu.ErrNotSupported}, {9, -1, gpu.ErrInvalidValue}, {9, 10, gpu.ErrInvalidValue}} {
		if src, _, err := k.PTX(tc.major, tc.minor); !errors.Is(err, tc.want) || src != "" {
			t.Errorf("%d.%d: %v (module of %d bytes), want an error wrapping %v", tc.major, tc.minor, err, len(src), tc.want)
		}
	}
}

// TestPTXTypeArgs: PTX instantiates a generic kernel with the type arguments given,
// the first type of the constraint for those missing, and refuses more than the
// kernel has or ones outside the constraint.
func TestPTXTypeArgs(t *testing.T) {
	k, err := gokernel.New(kernelsSrc, Scale[float32], Scale[float64])
	if err != nil {
		t.Fatal(err)
	}
	f32, _, err := k.PTX(9, 0)
	if err != nil {
		t.Fatal(err)
	}
	f64, _, err := k.PTX(9, 0, float64(0))
	if err != nil {
		t.Fatal(err)
	}
	if f32 == f64 || !strings.Contains(f64, ".f64") {
		t.Errorf("PTX(9, 0, float64(0)) is not the float64 instantiation")
	}
	for _, targs := range [][]any{{float64(0), float64(0)}, {"x"}} {
		if src, _, err := k.PTX(9, 0, targs...); !errors.Is(err, gpu.ErrInvalidValue) || src != "" {
			t.Errorf("type arguments %v: %v, want an error wrapping ErrInvalidValue", targs, err)
		}
	}
}

// TestNewStaleFunction: New refuses a function whose parameters' number types differ
// from its source's (a function compiled from another version of the source).
func TestNewStaleFunction(t *testing.T) {
	const sig = "func Saxpy(t kern.Thread, a float32, x, y []float32)"
	if !strings.Contains(kernelsSrc, sig) {
		t.Fatalf("the source has no %q", sig)
	}
	for _, stale := range []string{
		"func Saxpy(t kern.Thread, a float64, x, y []float64)",
		"func Saxpy(t kern.Thread, a int32, x, y []int32)",
	} {
		src := strings.Replace(kernelsSrc, sig, stale, 1)
		if _, err := gokernel.New(src, Saxpy); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "the source's is") {
			t.Errorf("New with %q: %v, want an error wrapping ErrInvalidValue", stale, err)
		}
	}
	// A function of the source's name whose parameters aren't number types.
	for _, fn := range []any{
		func(kern.Thread, complex64, []float32, []float32) {},
		func(kern.Thread, any, []float32, []float32) {},
		func(kern.Thread, float32, []complex64, []float32) {},
	} {
		if _, err := gokernel.NewNamed("kernels_test.go", kernelsSrc, "Saxpy", fn); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "the source's is") {
			t.Errorf("NewNamed(Saxpy, %T): %v, want an error wrapping ErrInvalidValue", fn, err)
		}
	}
	// Generic parameters match any of their constraint's types.
	if _, err := gokernel.New(kernelsSrc, Scale[float32], Scale[float64]); err != nil {
		t.Errorf("New(Scale[float32], Scale[float64]): %v", err)
	}
}
