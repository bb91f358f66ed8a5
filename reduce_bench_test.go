package gpu_test

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/go-gpu/gpu"
)

// Reduction benchmarks for the acceptance figures, on CUDA device 0 (they skip without
// one; GPU_BENCH_CPU=1 isn't needed: the CPU backend has its own tests). Each iteration
// is one call and a synchronize, as the peers were measured (Metal.@sync); b.SetBytes is
// the bytes read, so "MB/s" is read bandwidth, and GB/s is reported as a metric.
//
//	go test -run '^$' -bench 'Reduce' -benchtime 20x .
//
// BenchmarkReduceSum2e28/copy measures the device-to-device copy of the same 1 GiB in
// the same run (its GB/s counts bytes read plus written): Sum's read GB/s should be
// within 10% of it.

// benchSmall is set by GPU_REDUCE_BENCH_SIMT=1: the benchmarks then run on the PTX
// simulator with small sizes, to check their code, not to measure.
var benchSmall = os.Getenv("GPU_REDUCE_BENCH_SIMT") == "1"

// bsz returns n, or small under benchSmall.
func bsz(n, small int) int {
	if benchSmall {
		return small
	}
	return n
}

func benchDevice(b *testing.B) (*gpu.Device, *gpu.Stream) {
	d, err := gpu.OpenBackend("cuda", 0)
	if benchSmall {
		d, err = simGPU()
	}
	if errors.Is(err, gpu.ErrNoDevice) {
		b.Skipf("no CUDA device: %v", err)
	}
	if err != nil {
		b.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return d, s
}

// benchLoop runs op (returning something to free) b.N times with a synchronize each.
func benchLoop(b *testing.B, s *gpu.Stream, bytes int64, op func() (interface{ Free() error }, error)) {
	b.Helper()
	// warm up: compile the kernels, fill the caches
	for range 3 {
		r, err := op()
		if err != nil {
			b.Fatal(err)
		}
		r.Free()
	}
	if err := s.Synchronize(bg); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(bytes)
	b.ResetTimer()
	for b.Loop() {
		r, err := op()
		if err != nil {
			b.Fatal(err)
		}
		r.Free()
		if err := s.Synchronize(bg); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if sec := b.Elapsed().Seconds(); sec > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/sec/1e9, "GB/s")
	}
}

// frees frees several results.
type frees []interface{ Free() error }

func (f frees) Free() error {
	var err error
	for _, x := range f {
		err = errors.Join(err, x.Free())
	}
	return err
}

func findMin(s *gpu.Stream, a *gpu.Array[float32], opts ...gpu.ReduceOption) (interface{ Free() error }, error) {
	v, i, err := gpu.FindMin(s, a, opts...)
	if err != nil {
		return nil, err
	}
	return frees{v, i}, nil
}

func BenchmarkReduceSum2e28(b *testing.B) {
	_, s := benchDevice(b)
	n := bsz(1<<28, 1<<16)
	x, err := gpu.Full[float32](s, 1, n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	b.Run("copy", func(b *testing.B) {
		y, err := gpu.Empty[float32](s, n)
		if err != nil {
			b.Fatal(err)
		}
		defer y.Free()
		benchLoop(b, s, int64(2*4*n), func() (interface{ Free() error }, error) {
			return nopFree{}, gpu.Copy(s, y, x)
		})
	})
	b.Run("sum", func(b *testing.B) {
		benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) { return gpu.Sum[float32](s, x) })
	})
	b.Run("max", func(b *testing.B) {
		benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) { return gpu.Max(s, x) })
	})
	b.Run("argmax", func(b *testing.B) {
		benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) { return gpu.ArgMax(s, x) })
	})
	b.Run("mapreduce-x*x", func(b *testing.B) {
		benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) {
			return gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum)
		})
	})
}

type nopFree struct{}

func (nopFree) Free() error { return nil }

// BenchmarkReduceAxis16k sums a 16384x16384 float32 array over each axis.
func BenchmarkReduceAxis16k(b *testing.B) {
	_, s := benchDevice(b)
	n := bsz(16384, 256)
	x, err := gpu.Full[float32](s, 1, n, n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	for _, ax := range []int{0, 1} {
		b.Run(fmt.Sprintf("axis=%d", ax), func(b *testing.B) {
			benchLoop(b, s, int64(4*n*n), func() (interface{ Free() error }, error) { return gpu.Sum[float32](s, x, gpu.Axes(ax)) })
		})
	}
}

// BenchmarkReduceMetal runs Metal.jl's reduction benchmarks: S is the 512x1000 Julia
// array (a (1000, 512) array here), L the 3x1e6 one ((1000000, 3)), and L16k the
// 16384x16384 array of the peers' L column (../shared/peers); Julia's dims=1 is our
// last axis. reduce is sum, mapreduce is sum of x+1, findmin is FindMin.
func BenchmarkReduceMetal(b *testing.B) {
	_, s := benchDevice(b)
	sizes := []struct {
		name  string
		shape []int
	}{{"S", []int{1000, 512}}, {"L", []int{bsz(1000000, 20000), 3}}, {"L16k", []int{bsz(16384, 200), bsz(16384, 300)}}}
	for _, sz := range sizes {
		n := sz.shape[0] * sz.shape[1]
		f32, err := gpu.Full[float32](s, 1, sz.shape...)
		if err != nil {
			b.Fatal(err)
		}
		i64, err := gpu.Full[int64](s, 1, sz.shape...)
		if err != nil {
			b.Fatal(err)
		}
		f1 := must[*gpu.Array[float32]](b)(f32.Reshape(n))
		i1 := must[*gpu.Array[int64]](b)(i64.Reshape(n))
		dims := []struct {
			name string
			opts []gpu.ReduceOption
		}{{"dims=1", []gpu.ReduceOption{gpu.Axes(1)}}, {"dims=2", []gpu.ReduceOption{gpu.Axes(0)}}}
		b.Run(fmt.Sprintf("reduce/Float32/1d/%s", sz.name), func(b *testing.B) {
			benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) { return gpu.Sum[float32](s, f1) })
		})
		b.Run(fmt.Sprintf("reduce/Int64/1d/%s", sz.name), func(b *testing.B) {
			benchLoop(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.Sum[int64](s, i1) })
		})
		b.Run(fmt.Sprintf("mapreduce/Float32/1d/%s", sz.name), func(b *testing.B) {
			benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) {
				return gpu.MapReduce[float32](s, "x + 1", gpu.Vars{"x": f1}, gpu.OpSum)
			})
		})
		b.Run(fmt.Sprintf("findmin/1d/%s", sz.name), func(b *testing.B) {
			benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) { return findMin(s, f1) })
		})
		for _, d := range dims {
			b.Run(fmt.Sprintf("reduce/Float32/%s/%s", d.name, sz.name), func(b *testing.B) {
				benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) { return gpu.Sum[float32](s, f32, d.opts...) })
			})
			b.Run(fmt.Sprintf("reduce/Int64/%s/%s", d.name, sz.name), func(b *testing.B) {
				benchLoop(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.Sum[int64](s, i64, d.opts...) })
			})
			b.Run(fmt.Sprintf("mapreduce/Float32/%s/%s", d.name, sz.name), func(b *testing.B) {
				benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) {
					return gpu.MapReduce[float32](s, "x + 1", gpu.Vars{"x": f32}, gpu.OpSum, d.opts...)
				})
			})
			b.Run(fmt.Sprintf("findmin/2d/%s/%s", d.name, sz.name), func(b *testing.B) {
				benchLoop(b, s, int64(4*n), func() (interface{ Free() error }, error) { return findMin(s, f32, d.opts...) })
			})
		}
		f32.Free()
		i64.Free()
	}
}

// BenchmarkReduceCPU measures the CPU backend's reductions (all its workers).
func BenchmarkReduceCPU(b *testing.B) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		b.Fatal(err)
	}
	s := d.DefaultStream()
	const n = 1 << 24
	x := must[*gpu.Array[float32]](b)(gpu.Full[float32](s, 1, n))
	m := must[*gpu.Array[float32]](b)(x.Reshape(4096, 4096))
	i := must[*gpu.Array[int32]](b)(gpu.Full[int32](s, 1, n))
	for _, c := range []struct {
		name string
		op   func() (interface{ Free() error }, error)
	}{
		{"sum/f32", func() (interface{ Free() error }, error) { return gpu.Sum[float32](s, x) }},
		{"sum/i32", func() (interface{ Free() error }, error) { return gpu.Sum[int64](s, i) }},
		{"max/f32", func() (interface{ Free() error }, error) { return gpu.Max(s, x) }},
		{"argmax/f32", func() (interface{ Free() error }, error) { return gpu.ArgMax(s, x) }},
		{"sum/axis=0", func() (interface{ Free() error }, error) { return gpu.Sum[float32](s, m, gpu.Axes(0)) }},
		{"sum/axis=1", func() (interface{ Free() error }, error) { return gpu.Sum[float32](s, m, gpu.Axes(1)) }},
		{"mapreduce/x*x", func() (interface{ Free() error }, error) {
			return gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum)
		}},
	} {
		b.Run(c.name, func(b *testing.B) { benchLoop(b, s, 4*n, c.op) })
	}
}
