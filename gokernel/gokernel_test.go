package gokernel_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
)

var bg = context.Background()

// deviceMaker opens a device the tests run on.
type deviceMaker struct {
	name string
	open func() (*gpu.Device, error)
}

// extraDevices are devices besides the CPU and CUDA (sim_test.go adds the PTX
// simulator).
var extraDevices []deviceMaker

var (
	devOnce sync.Once
	devList []testDevice
	devErr  error
)

type testDevice struct {
	name string
	dev  *gpu.Device
}

// devices returns the devices every test runs on: the CPU backend, the CUDA device
// when there is one, and the extra ones.
func devices(t testing.TB) []testDevice {
	devOnce.Do(func() {
		cpu, err := gpu.OpenBackend("cpu", 0)
		if err != nil {
			devErr = err
			return
		}
		devList = append(devList, testDevice{"cpu", cpu})
		if d, err := gpu.OpenBackend("cuda", 0); err == nil {
			devList = append(devList, testDevice{"cuda", d})
		}
		for _, m := range extraDevices {
			d, err := m.open()
			if err != nil {
				devErr = err
				return
			}
			devList = append(devList, testDevice{m.name, d})
		}
	})
	if devErr != nil {
		t.Fatal(devErr)
	}
	return devList
}

// forDevices runs f as a subtest on every device, with a stream.
func forDevices(t *testing.T, f func(t *testing.T, s *gpu.Stream)) {
	for _, d := range devices(t) {
		t.Run(d.name, func(t *testing.T) {
			s, err := d.dev.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f(t, s)
		})
	}
}

func cpuStream(t testing.TB) *gpu.Stream {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func randF32(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = rand.Float32()*2 - 1
	}
	return x
}

// newKernel makes a kernel of kernelsSrc or fails t.
func newKernel(t testing.TB, fns ...any) *gokernel.Kernel {
	t.Helper()
	k, err := gokernel.New(kernelsSrc, fns...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func fromSlice[T gpu.Elem](t testing.TB, s *gpu.Stream, x []T) *gpu.Array[T] {
	t.Helper()
	a, err := gpu.FromSlice(s, x, len(x))
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func toSlice[T gpu.Elem](t testing.TB, a *gpu.Array[T]) []T {
	t.Helper()
	x, err := a.ToSlice(bg)
	if err != nil {
		t.Fatal(err)
	}
	return x
}

func TestSaxpy(t *testing.T) {
	k := newKernel(t, Saxpy)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		for _, n := range []int{1, 255, 256, 1000} {
			xs, ys := randF32(n), randF32(n)
			x, y := fromSlice(t, s, xs), fromSlice(t, s, ys)
			if err := k.LaunchN(s, n, 2.5, x, y); err != nil {
				t.Fatal(err)
			}
			got := toSlice(t, y)
			for i := range got {
				if want := 2.5*xs[i] + ys[i]; got[i] != want {
					t.Fatalf("n=%d: y[%d] = %v, want %v", n, i, got[i], want)
				}
			}
			if g := toSlice(t, x); !slices.Equal(g, xs) {
				t.Fatalf("n=%d: x changed", n)
			}
		}
	})
}

func TestGenericScale(t *testing.T) {
	k := newKernel(t, Scale[float32], Scale[float64])
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		n := 777
		x32 := randF32(n)
		x64 := make([]float64, n)
		for i := range x64 {
			x64[i] = rand.Float64()
		}
		a32, a64 := fromSlice(t, s, x32), fromSlice(t, s, x64)
		cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 2}, Block: gpu.Dim3{X: 64}}
		if err := k.Launch(s, cfg, float32(3), a32); err != nil {
			t.Fatal(err)
		}
		if err := k.Launch(s, cfg, 0.5, a64); err != nil {
			t.Fatal(err)
		}
		g32, g64 := toSlice(t, a32), toSlice(t, a64)
		for i := range n {
			if g32[i] != 3*x32[i] || g64[i] != 0.5*x64[i] {
				t.Fatalf("element %d: %v %v, want %v %v", i, g32[i], g64[i], 3*x32[i], 0.5*x64[i])
			}
		}
	})
}

func TestTranspose(t *testing.T) {
	k := newKernel(t, Transpose)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		for _, sh := range [][2]int{{1, 1}, {32, 32}, {33, 70}, {100, 5}} {
			rows, cols := sh[0], sh[1]
			in := randF32(rows * cols)
			a, b := fromSlice(t, s, in), fromSlice(t, s, make([]float32, rows*cols))
			cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: (cols + 31) / 32, Y: (rows + 31) / 32}, Block: gpu.Dim3{X: 32, Y: 8}}
			if err := k.Launch(s, cfg, rows, cols, a, b); err != nil {
				t.Fatal(err)
			}
			got := toSlice(t, b)
			for r := range rows {
				for c := range cols {
					if got[c*rows+r] != in[r*cols+c] {
						t.Fatalf("%dx%d: out[%d][%d] = %v, want %v", rows, cols, c, r, got[c*rows+r], in[r*cols+c])
					}
				}
			}
		}
	})
}

func TestBlockSum(t *testing.T) {
	k := newKernel(t, BlockSum)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		for _, n := range []int{0, 1, 1000, 5000} {
			xs := make([]float32, n)
			want := 0
			for i := range xs {
				v := rand.IntN(200) - 100
				xs[i], want = float32(v), want+v
			}
			x, sum := fromSlice(t, s, append(xs, 0)[:max(n, 1)]), fromSlice(t, s, []float32{0})
			if n == 0 {
				x, _ = x.Slice(gpu.R(0, 0))
			}
			cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 3}, Block: gpu.Dim3{X: 96}}
			if err := k.Launch(s, cfg, x, sum); err != nil {
				t.Fatal(err)
			}
			if got := toSlice(t, sum)[0]; got != float32(want) {
				t.Errorf("n=%d: sum %v, want %d", n, got, want)
			}
		}
	})
}

func TestHistogram(t *testing.T) {
	k := newKernel(t, Histogram)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		n, bins := 3000, 37
		xs := make([]float32, n)
		want := make([]uint32, bins)
		for i := range xs {
			xs[i] = rand.Float32()
			want[min(int(xs[i]*float32(bins)), bins-1)]++
		}
		x, h := fromSlice(t, s, xs), fromSlice(t, s, make([]uint32, bins))
		if err := k.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: 4}, Block: gpu.Dim3{X: 128}}, x, h); err != nil {
			t.Fatal(err)
		}
		if got := toSlice(t, h); !slices.Equal(got, want) {
			t.Errorf("histogram %v, want %v", got, want)
		}
	})
}

// TestBounds runs Copy over one thread more than the arrays have: the last thread
// fails, at the first element past the end, and the next wait says where.
func TestBounds(t *testing.T) {
	k := newKernel(t, Copy)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		for _, n := range []int{0, 1, 1000} {
			src := fromSlice(t, s, randF32(max(n, 1)))
			dst := fromSlice(t, s, make([]float32, max(n, 1)))
			if n == 0 {
				src, _ = src.Slice(gpu.R(0, 0))
				dst, _ = dst.Slice(gpu.R(0, 0))
			}
			if err := k.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: n/256 + 1}, Block: gpu.Dim3{X: 256}}, dst, src); err != nil {
				t.Fatal(err)
			}
			err := s.Synchronize(bg)
			var f *gokernel.Fault
			if !errors.As(err, &f) || !errors.Is(err, gpu.ErrKernelFailure) {
				t.Fatalf("n=%d: got %v, want a *gokernel.Fault", n, err)
			}
			// Every thread from n on fails; which records first varies on a GPU: the
			// record must be that thread's own.
			i := f.Block.X*256 + f.Thread.X
			want := fmt.Sprintf("index out of range [%d] with length %d", i, n)
			if f.Msg != want || f.Kernel != "Copy" || f.File != "kernels_test.go" || f.Line != 26 || i < n {
				t.Errorf("n=%d: %v", n, f)
			}
			if err := s.Synchronize(bg); err != nil {
				t.Fatalf("n=%d: the second wait: %v", n, err)
			}
		}
		// In bounds: no failure.
		n := 512
		src, dst := fromSlice(t, s, randF32(n)), fromSlice(t, s, make([]float32, n))
		if err := k.LaunchN(s, n, dst, src); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		// Unchecked: the same launch runs (on the GPU without checks).
		if err := k.Unchecked().LaunchN(s, n, dst, src); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(toSlice(t, dst), toSlice(t, src)) {
			t.Error("unchecked copy differs")
		}
	})
}

func TestZeroLaunch(t *testing.T) {
	k := newKernel(t, Saxpy)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x := fromSlice(t, s, []float32{1})
		if err := k.LaunchN(s, 0, float32(1), x, x); err != nil {
			t.Fatal(err)
		}
		if got := toSlice(t, x); got[0] != 1 {
			t.Errorf("x = %v", got)
		}
	})
}
