package gokernel_test

import (
	_ "embed"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/gokernel"
)

// The scalar functions of the capture tests, and this file's source for the GPU.
//
//go:embed capture_test.go
var captureTestSrc string

func addF32(x, y float32) float32 { return x + y }

func negF32(x float32) float32 { return -x }

// replay launches g on s and returns the values of a afterwards.
func replay[T gpu.Elem](t *testing.T, s *gpu.Stream, g *gpu.Graph, a *gpu.Array[T]) []T {
	t.Helper()
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(bg); err != nil {
		t.Fatal(err)
	}
	return toSlice(t, a)
}

func setHost[T gpu.Elem](t *testing.T, a *gpu.Array[T], v []T) {
	t.Helper()
	if err := a.CopyFromHost(bg, v); err != nil {
		t.Fatal(err)
	}
}

// TestCaptureGoKernel captures launches of Go kernels that are plain launches on a
// GPU (an Unchecked kernel; one whose every check the compiler proves) into a graph,
// on every device (the CPU backend's Go function included), and replays the graph
// twice with changed inputs: the values are the kernels' each time.
func TestCaptureGoKernel(t *testing.T) {
	scale := newKernel(t, Scale[float32])
	if n, err := gokernel.IndexChecks(scale); err != nil || n != 0 {
		t.Fatalf("Scale keeps %d index checks (%v): the test wants a kernel without", n, err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x := fromSlice(t, s, []float32{1, 2, 3, 4})
		y := fromSlice(t, s, []float32{1, 2, 3, 4, 5, 6})
		g, err := s.Capture(func() error {
			if err := scale.Unchecked().LaunchN(s, 4, 2.0, x); err != nil {
				return err
			}
			return scale.LaunchN(s, 6, 3.0, y) // checks on, all proven
		})
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		defer g.Close()
		if got := toSlice(t, x); !equalF32(got, []float32{1, 2, 3, 4}) {
			t.Fatalf("the capture ran the launch: %v", got)
		}
		for _, in := range [][]float32{{1, 2, 3, 4}, {-1, 0.5, 8, 100}} {
			setHost(t, x, in)
			setHost(t, y, append(in, 7, 9))
			gx := replay(t, s, g, x)
			gy := toSlice(t, y)
			for i, v := range in {
				if gx[i] != 2*v || gy[i] != 3*v {
					t.Fatalf("in %v: x %v, y %v", in, gx, gy)
				}
			}
			if gy[4] != 21 || gy[5] != 27 {
				t.Fatalf("in %v: y %v", in, gy)
			}
		}
	})
}

// TestCaptureFunc captures elementwise operations (Apply, Into, broadcast operands)
// whose function keeps no checks, and replays them with changed inputs.
func TestCaptureFunc(t *testing.T) {
	add, err := gokernel.NewFunc2(captureTestSrc, addF32)
	if err != nil {
		t.Fatal(err)
	}
	neg, err := gokernel.NewFunc1(captureTestSrc, negF32)
	if err != nil {
		t.Fatal(err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x := fromSlice(t, s, []float32{1, 2, 3, 4, 5})
		y := fromSlice(t, s, []float32{10, 20, 30, 40, 50})
		one := fromSlice(t, s, []float32{100})
		out := fromSlice(t, s, make([]float32, 5))
		var z *gpu.Array[float32]
		g, err := s.Capture(func() error {
			var err error
			if z, err = add.Apply(s, x, y); err != nil {
				return err
			}
			if err := add.Into(s, out, z, one); err != nil { // a broadcast operand
				return err
			}
			return neg.Into(s, out, out) // in place
		})
		if err != nil {
			t.Fatalf("capture: %v", err)
		}
		defer g.Close()
		defer z.Free()
		for _, xs := range [][]float32{{1, 2, 3, 4, 5}, {-3, 0, 0.25, 7, 1e6}} {
			setHost(t, x, xs)
			got := replay(t, s, g, out)
			zs := toSlice(t, z)
			ys := toSlice(t, y)
			for i := range xs {
				if zs[i] != xs[i]+ys[i] || got[i] != -((xs[i]+ys[i])+100) {
					t.Fatalf("x %v: z %v, out %v", xs, zs, got)
				}
			}
		}
	})
}

// TestCaptureRefused checks the launches that keep checks, which no device can
// capture (their failures are reported by a wait, and no wait covers a graph's
// launches): the error wraps gpu.ErrCapturing and says what to do, in the terms of
// the call; the capture goes on unharmed. What can be captured is the same on every
// device.
func TestCaptureRefused(t *testing.T) {
	saxpy := newKernel(t, Saxpy)
	failures := newSem(t, Failures)
	div, err := gokernel.NewFunc2(elementwiseTestSrc, divInts)
	if err != nil {
		t.Fatal(err)
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x := fromSlice(t, s, []float32{1, 2, 3, 4})
		y := fromSlice(t, s, []float32{1, 1, 1, 1})
		a := fromSlice(t, s, []int32{7, -9, 12, 100})
		b := fromSlice(t, s, []int32{2, 3, -5, 7})
		q := fromSlice(t, s, make([]int32, 4))
		xi := fromSlice(t, s, make([]int32, 4))
		for _, tc := range []struct {
			name string
			call func() error
			want []string
		}{
			{"Kernel", func() error { return saxpy.LaunchN(s, 4, 2.0, x, y) },
				[]string{"Saxpy", "keeps Go's run-time checks (an index at kernels_test.go:18)", "Kernel.Unchecked"}},
			{"Func2.Apply", func() error { _, err := div.Apply(s, a, b); return err },
				[]string{"divInts", fmt.Sprintf("an integer division at elementwise_test.go:%d", lineOf(elementwiseTestSrc, "func divInts")), "Func2.Unchecked"}},
			{"Func2.Into", func() error { return div.Into(s, q, a, b) },
				[]string{"divInts", "Func2.Unchecked"}},
			{"panic", func() error { return failures.Unchecked().LaunchN(s, 4, 6, 0, xi, xi) },
				[]string{"Failures", "calls panic (semkernels_test.go:", "even Unchecked keeps"}},
		} {
			var callErr error
			g, err := s.Capture(func() error {
				callErr = tc.call()
				// The capture goes on: an unchecked launch after the refusal.
				return saxpy.Unchecked().LaunchN(s, 4, 2.0, x, y)
			})
			if err != nil {
				t.Fatalf("%s: the capture: %v", tc.name, err)
			}
			if !errors.Is(callErr, gpu.ErrCapturing) {
				t.Errorf("%s: %v, want an error wrapping gpu.ErrCapturing", tc.name, callErr)
			} else {
				for _, w := range tc.want {
					if !strings.Contains(callErr.Error(), w) {
						t.Errorf("%s: %q lacks %q", tc.name, callErr, w)
					}
				}
			}
			setHost(t, y, []float32{1, 1, 1, 1})
			if got := replay(t, s, g, y); !equalF32(got, []float32{3, 5, 7, 9}) {
				t.Errorf("%s: the graph's saxpy gives %v", tc.name, got)
			}
			g.Close()
		}
		// Unchecked, the division captures; its results are Go's (no zero divisors).
		g, err := s.Capture(func() error { return div.Unchecked().Into(s, q, a, b) })
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		for _, as := range [][]int32{{7, -9, 12, 100}, {-1 << 31, 5, 0, -7}} {
			setHost(t, a, as)
			got := replay(t, s, g, q)
			for i, bv := range []int32{2, 3, -5, 7} {
				if got[i] != as[i]/bv {
					t.Fatalf("a %v: %v", as, got)
				}
			}
		}
		// Outside a capture the checked launches run.
		if err := saxpy.LaunchN(s, 4, 2.0, x, y); err != nil {
			t.Fatal(err)
		}
		if _, err := div.Apply(s, a, b); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
	})
}

// TestCaptureFaultCPU: on the CPU backend, whose Go function checks always, a
// failure in a launch a graph replays (an Unchecked kernel indexing out of range)
// has no check slot to go to: it faults the device, with the kernel's message, as a
// failure of an unchecked kernel may fault a GPU. (A device of its own: the fault is
// for good.)
func TestCaptureFaultCPU(t *testing.T) {
	d, err := gpu.NewDevice(cpu.New(2))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	copyK := newKernel(t, Copy)
	src, dst := fromSlice(t, s, []float32{1, 2, 3}), fromSlice(t, s, make([]float32, 3))
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 4}} // one thread too many
	g, err := s.Capture(func() error { return copyK.Unchecked().Launch(s, cfg, dst, src) })
	if err != nil {
		t.Fatal(err)
	}
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	err = s.Synchronize(bg)
	if !errors.Is(err, gpu.ErrLaunchFailed) || !strings.Contains(err.Error(), "Copy: kernels_test.go:26: index out of range [3] with length 3") {
		t.Fatalf("got %v, want a launch failure naming the check", err)
	}
}

// lineOf returns the line (from 1) of src where text first appears.
func lineOf(src, text string) int {
	return strings.Count(src[:strings.Index(src, text)], "\n") + 1
}

// TestLaunchParam: a *gpu.Param in a scalar's place passes its value outside a capture,
// and in a graph the value that Graph.SetParam set last; a Param of another type, of a
// narrow type or nil is refused.
func TestLaunchParam(t *testing.T) {
	saxpy, scale := newKernel(t, Saxpy).Unchecked(), newKernel(t, Scale[float32], Scale[float64])
	n := 300
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = rand.Float32()*8-4, rand.Float32()*8-4
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x, y := fromSlice(t, s, xs), fromSlice(t, s, ys)
		want := slices.Clone(ys)
		saxpyWant := func(a float32) {
			for i := range want {
				want[i] = a*xs[i] + want[i]
			}
		}
		p, err := gpu.NewParam(float32(2))
		if err != nil {
			t.Fatal(err)
		}
		if err := saxpy.LaunchN(s, n, p, x, y); err != nil { // eager: the Param's value
			t.Fatal(err)
		}
		saxpyWant(2)
		g, err := s.Capture(func() error { return saxpy.LaunchN(s, n, p, x, y) })
		if err != nil {
			t.Fatal(err)
		}
		defer g.Close()
		for _, a := range []float32{2, -3, 0.5} {
			if a != 2 {
				if err := g.SetParam(p, a); err != nil {
					t.Fatal(err)
				}
			}
			if err := g.Launch(s); err != nil {
				t.Fatal(err)
			}
			saxpyWant(a)
		}
		if got := toSlice(t, y); !slices.Equal(got, want) {
			t.Errorf("y after an eager launch and three graph launches with a = 2, -3, 0.5:\n%v\nwant %v", got, want)
		}
		// A generic kernel's Param of the type its slices decide.
		zs := []float64{1.5, -2, 4}
		z := fromSlice(t, s, zs)
		p64, err := gpu.NewParam(float64(-0.25))
		if err != nil {
			t.Fatal(err)
		}
		if err := scale.LaunchN(s, len(zs), p64, z); err != nil {
			t.Fatal(err)
		}
		if got := toSlice(t, z); !slices.Equal(got, []float64{-0.375, 0.5, -1}) {
			t.Errorf("Scale by a float64 Param of -0.25: %v", got)
		}
		for _, c := range []struct {
			k    *gokernel.Kernel
			v    any
			want string
		}{
			{saxpy, float64(2), "a Param of type float64 for a float32"},
			{scale, float32(2), "a Param of type float32 for a float64"},
			{saxpy, int8(2), "Params of 32- and 64-bit numbers only"},
			{saxpy, true, "Params of 32- and 64-bit numbers only"},
		} {
			q, err := gpu.NewParam(c.v)
			if err != nil {
				t.Fatal(err)
			}
			arr := any(y)
			if c.k == scale {
				arr = z
			}
			args := []any{q, arr}
			if c.k == saxpy {
				args = append(args, y)
			}
			if err := c.k.LaunchN(s, 3, args...); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), c.want) {
				t.Errorf("a Param of a %T: %v; want ErrInvalidValue saying %q", c.v, err, c.want)
			}
		}
		if err := saxpy.LaunchN(s, 3, (*gpu.Param)(nil), x, y); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "nil Param") {
			t.Errorf("a nil Param: %v; want ErrInvalidValue", err)
		}
	})
}

// TestUintptrScalar: a uintptr parameter takes a uintptr, an int and a float64 of an
// integer value (as any unsigned integer parameter does), and a uintptr Param (64
// bits on every platform a kernel runs on).
func TestUintptrScalar(t *testing.T) {
	k := newKernel(t, FillUintptr).Unchecked()
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x := fromSlice(t, s, []float32{0, 0, 0})
		p, err := gpu.NewParam(uintptr(9))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			v    any
			want float32
		}{{uintptr(3), 3}, {4, 4}, {5.0, 5}, {p, 9}} {
			if err := k.LaunchN(s, 3, x, c.v); err != nil {
				t.Errorf("a %T for a uintptr: %v", c.v, err)
				continue
			}
			if got := toSlice(t, x); !slices.Equal(got, []float32{c.want, c.want, c.want}) {
				t.Errorf("a %T of %v for a uintptr: %v", c.v, c.want, got)
			}
		}
		for _, v := range []any{-1.0, 0.5, 0x1p64} {
			if err := k.LaunchN(s, 3, x, v); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("%v for a uintptr: %v, want ErrInvalidValue", v, err)
			}
		}
	})
}
