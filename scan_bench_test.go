package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// Benchmarks of the scans, search and permute figures (run them on the H200):
//
//	go test -run '^$' -bench 'CumSum|Accumulate|Findall|Findfirst|Logical|Permute' -benchtime 2s .
//
// Each iteration is one call and a stream synchronize (as Metal.@sync and the peers'
// scripts measure); GB/s counts the bytes read plus written. The .../copy rows are a
// device-to-device copy of the same bytes in the same run: the ceiling the acceptance
// figures are relative to. Metal.jl's names: S is the 512x1000 fixture (a NumPy
// (1000, 512) array) or 3x1e6 for the L variants of dims; L is 16384x16384 (2^28).
// Without CUDA they run on the CPU with the large sizes skipped (set GPU_BENCH_CPU_L=1
// to run them anyway).

// scBenchDev returns the CUDA device, or the CPU device when there is none.
func scBenchDev(b *testing.B) *gpu.Device {
	b.Helper()
	if d, err := gpu.OpenBackend("cuda", 0); err == nil {
		return d
	} else if !errors.Is(err, gpu.ErrNoDevice) {
		b.Fatal(err)
	}
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		b.Fatal(err)
	}
	return d
}

// scBenchLarge reports whether a large case runs on d.
func scBenchLarge(d *gpu.Device) bool {
	return d.Backend() == "cuda" || os.Getenv("GPU_BENCH_CPU_L") != ""
}

// scRun times f (one call, whose result it frees) plus a synchronize, and reports
// GB/s for bytes moved per call.
func scRun(b *testing.B, s *gpu.Stream, bytes int64, f func() (interface{ Free() error }, error)) {
	b.Helper()
	ctx := context.Background()
	// Warm up: compile the kernels, fill the pool.
	for range 2 {
		r, err := f()
		if err != nil {
			b.Fatal(err)
		}
		if r != nil {
			r.Free()
		}
	}
	if err := s.Synchronize(ctx); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		r, err := f()
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(ctx); err != nil {
			b.Fatal(err)
		}
		if r != nil {
			r.Free()
		}
	}
	el := time.Since(start)
	if bytes > 0 && b.N > 0 {
		b.ReportMetric(float64(bytes)*float64(b.N)/el.Seconds()/1e9, "GB/s")
	}
}

type scNoFree struct{}

func (scNoFree) Free() error { return nil }

// scCopyBench is the device-to-device copy of n elements of T (bytes read plus
// written), the ceiling of the bandwidth figures.
func scCopyBench[T gpu.Elem](b *testing.B, s *gpu.Stream, shape ...int) {
	src, err := gpu.Zeros[T](s, shape...)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	dst, err := gpu.Empty[T](s, shape...)
	if err != nil {
		b.Fatal(err)
	}
	defer dst.Free()
	bytes := int64(2 * src.Size() * int(scDtypeSize[T]()))
	scRun(b, s, bytes, func() (interface{ Free() error }, error) { return scNoFree{}, gpu.Copy(s, dst, src) })
}

func scDtypeSize[T gpu.Elem]() int64 {
	var z T
	switch any(z).(type) {
	case bool, int8, uint8:
		return 1
	case int16, uint16:
		return 2
	case int32, uint32, float32:
		return 4
	}
	return 8
}

// BenchmarkCumSum is the 1-D CumSum of 2^28 float32 against the copy bandwidth
// (acceptance: within 20% of copy), plus int64; each with the first row-scan
// configuration and, as <name>/v2, the second (gpu.SetScanVariant).
func BenchmarkCumSum(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	n := 1 << 28
	if !scBenchLarge(d) {
		n = 1 << 22
	}
	b.Run(fmt.Sprintf("1d/%d/float32/copy", n), func(b *testing.B) { scCopyBench[float32](b, s, n) })
	for _, variant := range []int{1, 2} {
		suffix := ""
		if variant == 2 {
			suffix = "/v2"
		}
		b.Run(fmt.Sprintf("1d/%d/float32%s", n, suffix), func(b *testing.B) {
			defer gpu.SetScanVariant(s.Device(), gpu.SetScanVariant(s.Device(), variant))
			x, err := gpu.Rand[float32](s, gpu.NewGenerator(1), n)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Free()
			scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.CumSum[float32](s, x, 0) })
		})
		b.Run(fmt.Sprintf("1d/%d/int64%s", n/2, suffix), func(b *testing.B) {
			defer gpu.SetScanVariant(s.Device(), gpu.SetScanVariant(s.Device(), variant))
			x, err := gpu.RandInt[int64](s, gpu.NewGenerator(2), -10, 11, n/2)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Free()
			scRun(b, s, int64(16*(n/2)), func() (interface{ Free() error }, error) { return gpu.CumSum[int64](s, x, 0) })
		})
	}
	b.Run(fmt.Sprintf("1d/%d/int64/copy", n/2), func(b *testing.B) { scCopyBench[int64](b, s, n/2) })
}

// BenchmarkAccumulate is Metal.jl's accumulate group (cumsum): Float32 and Int64;
// 1d (the flattened matrix), dims=1 (Julia's dims=1: NumPy axis 1, contiguous) and
// dims=2 (axis 0) of the 512x1000 matrix, and of 3x1e6 for dims=1L/dims=2L; the L
// size (16384^2) for 1d, dims=1 and dims=2. Acceptance: at most half the time of the
// better of CuPy and PyTorch (../shared/peers).
func BenchmarkAccumulate(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	type fixture struct {
		name  string
		shape []int
		axis  int // -1: flattened
	}
	fixtures := []fixture{
		{"1d", []int{1000 * 512}, 0},
		{"dims=1", []int{1000, 512}, 1},
		{"dims=2", []int{1000, 512}, 0},
		{"dims=1L", []int{1000000, 3}, 1},
		{"dims=2L", []int{1000000, 3}, 0},
	}
	if scBenchLarge(d) {
		fixtures = append(fixtures,
			fixture{"1d/16k", []int{16384 * 16384}, 0},
			fixture{"dims=1/16k", []int{16384, 16384}, 1},
			fixture{"dims=2/16k", []int{16384, 16384}, 0})
	}
	for _, fx := range fixtures {
		n := 1
		for _, v := range fx.shape {
			n *= v
		}
		b.Run("Float32/"+fx.name, func(b *testing.B) {
			x, err := gpu.Rand[float32](s, gpu.NewGenerator(3), fx.shape...)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Free()
			scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.CumSum[float32](s, x, fx.axis) })
		})
		b.Run("Int64/"+fx.name, func(b *testing.B) {
			x, err := gpu.RandInt[int64](s, gpu.NewGenerator(4), -10, 11, fx.shape...)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Free()
			scRun(b, s, int64(16*n), func() (interface{ Free() error }, error) { return gpu.CumSum[int64](s, x, fx.axis) })
		})
	}
}

// scTunedConfigs are the row-scan configurations BenchmarkCumSumTuned sweeps.
var scTunedConfigs = []gpu.ScanConfig{
	{Variant: 2},
	{Variant: 2, Lookback: 1},
	{Variant: 2, Lookback: 2},
	{Variant: 2, Lookback: 4},
	{Variant: 2, Stage: true},
	{Variant: 2, Stage: true, Lookback: 2},
	{Variant: 2, Stage: true, Lookback: 4},
	{Variant: 2, Stage: true, Lookback: 8},
	{Variant: 2, Stage: true, MinBlocks: 5},
	{Variant: 2, Stage: true, MinBlocks: 6},
	{Variant: 2, Stage: true, Lookback: 2, MinBlocks: 6},
	{Variant: 2, Stage: true, Lookback: 4, MinBlocks: 5},
	{Variant: 2, Stage: true, Lookback: 4, MinBlocks: 6},
	{Variant: 2, Stage: true, Lookback: 8, MinBlocks: 5},
	{Variant: 1, Stage: true, Lookback: 2},
	{Variant: 1, Stage: true, Lookback: 4},
	{Variant: 1, Stage: true, Lookback: 2, MinBlocks: 8},
	{Variant: 1, Stage: true, Lookback: 4, MinBlocks: 8},
}

// scConfigName names a configuration as its environment variables would:
// v2 (GPU_SCAN_VARIANT), -stage (GPU_SCAN_STAGE=1; v2-stage is GPU_SCAN_VARIANT=v4),
// -lbN (GPU_SCAN_LOOKBACK=N), -mbN (GPU_SCAN_MINBLOCKS=N).
func scConfigName(c gpu.ScanConfig) string {
	n := fmt.Sprintf("v%d", c.Variant)
	if c.Stage {
		n += "-stage"
	}
	if c.Lookback > 0 {
		n += fmt.Sprintf("-lb%d", c.Lookback)
	}
	if c.MinBlocks > 0 {
		n += fmt.Sprintf("-mb%d", c.MinBlocks)
	}
	return n
}

// BenchmarkCumSumTuned is BenchmarkCumSum's 1-D float32 and int64 scans under each
// row-scan configuration of scTunedConfigs (the options of GPU_SCAN_VARIANT,
// GPU_SCAN_STAGE, GPU_SCAN_LOOKBACK and GPU_SCAN_MINBLOCKS), in one run:
//
//	go test -run '^$' -bench 'CumSumTuned' -benchtime 2s .
//
// Each configuration's result is checked once against the default's (exactly for
// int64; float32 within a relative 1e-3, since the association differs).
func BenchmarkCumSumTuned(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	n := 1 << 28
	if !scBenchLarge(d) {
		n = 1 << 22
	}
	xf, err := gpu.Rand[float32](s, gpu.NewGenerator(1), n)
	if err != nil {
		b.Fatal(err)
	}
	defer xf.Free()
	xi, err := gpu.RandInt[int64](s, gpu.NewGenerator(2), -10, 11, n/2)
	if err != nil {
		b.Fatal(err)
	}
	defer xi.Free()
	var refF []float32
	var refI []int64
	b.Run(fmt.Sprintf("1d/%d/float32/copy", n), func(b *testing.B) { scCopyBench[float32](b, s, n) })
	b.Run(fmt.Sprintf("1d/%d/int64/copy", n/2), func(b *testing.B) { scCopyBench[int64](b, s, n/2) })
	for _, c := range scTunedConfigs {
		name := scConfigName(c)
		b.Run(fmt.Sprintf("1d/%d/float32/%s", n, name), func(b *testing.B) {
			defer gpu.SetScanConfig(s.Device(), gpu.SetScanConfig(s.Device(), c))
			got := scBenchResult[float32](b, s, xf)
			if refF == nil {
				refF = got
			} else {
				for i := range got {
					if g, w := float64(got[i]), float64(refF[i]); math.Abs(g-w) > 1e-3*(1+math.Abs(w)) {
						b.Fatalf("%s: element %d = %v, default configuration %v", name, i, got[i], refF[i])
					}
				}
			}
			scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.CumSum[float32](s, xf, 0) })
		})
		b.Run(fmt.Sprintf("1d/%d/int64/%s", n/2, name), func(b *testing.B) {
			defer gpu.SetScanConfig(s.Device(), gpu.SetScanConfig(s.Device(), c))
			got := scBenchResult[int64](b, s, xi)
			if refI == nil {
				refI = got
			} else {
				for i := range got {
					if got[i] != refI[i] {
						b.Fatalf("%s: element %d = %d, default configuration %d", name, i, got[i], refI[i])
					}
				}
			}
			scRun(b, s, int64(16*(n/2)), func() (interface{ Free() error }, error) { return gpu.CumSum[int64](s, xi, 0) })
		})
	}
}

// scBenchResult returns the 1-D CumSum of x on the host.
func scBenchResult[T gpu.Elem](b *testing.B, s *gpu.Stream, x *gpu.Array[T]) []T {
	b.Helper()
	r, err := gpu.CumSum[T](s, x, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Free()
	h, err := r.ToSlice(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	return h
}

// BenchmarkCumSumRows scans 2^28 float32 as k rows of 2^28/k along the rows (k
// independent chains of look-backs, each 1/k as long, started k times less often), for
// k from 1 (the 1-D scan) to 16384 (two tiles a row, so every look-back ends at once):
// where the 1-D scan loses against the rows tells what the chain of look-backs costs.
//
//	go test -run '^$' -bench 'CumSumRows' -benchtime 1s .
func BenchmarkCumSumRows(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	n := 1 << 28
	if !scBenchLarge(d) {
		n = 1 << 20
	}
	x, err := gpu.Rand[float32](s, gpu.NewGenerator(1), n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	b.Run("copy", func(b *testing.B) { scCopyBench[float32](b, s, n) })
	for _, k := range []int{1, 2, 4, 8, 32, 128, 1024, 16384} {
		b.Run(fmt.Sprintf("rows=%d", k), func(b *testing.B) {
			v, err := x.Reshape(k, n/k)
			if err != nil {
				b.Fatal(err)
			}
			scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.CumSum[float32](s, v, 1) })
		})
	}
}

// BenchmarkScanStatus times small scans plus a synchronize with the stream's own
// status, which the kernel leaves zero (keep), and with a zeroed pool buffer and its
// memset each scan (fresh), in turns: Metal.jl's 512x1000 float32 as 1-D and along
// each axis, and 3x1e6 int64 along its long axis.
func BenchmarkScanStatus(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	x, err := gpu.Rand[float32](s, gpu.NewGenerator(3), 512*1000)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	m, err := x.Reshape(512, 1000)
	if err != nil {
		b.Fatal(err)
	}
	y, err := gpu.RandInt[int64](s, gpu.NewGenerator(4), -10, 11, 3*1000000)
	if err != nil {
		b.Fatal(err)
	}
	defer y.Free()
	l, err := y.Reshape(3, 1000000)
	if err != nil {
		b.Fatal(err)
	}
	cases := []struct {
		name string
		f    func() (interface{ Free() error }, error)
	}{
		{"1d/float32", func() (interface{ Free() error }, error) { return gpu.CumSum[float32](s, x, 0) }},
		{"512x1000/axis0/float32", func() (interface{ Free() error }, error) { return gpu.CumSum[float32](s, m, 0) }},
		{"512x1000/axis1/float32", func() (interface{ Free() error }, error) { return gpu.CumSum[float32](s, m, 1) }},
		{"3x1e6/axis1/int64", func() (interface{ Free() error }, error) { return gpu.CumSum[int64](s, l, 1) }},
	}
	for _, c := range cases {
		for _, keep := range []bool{true, false} {
			name := c.name + "/fresh"
			if keep {
				name = c.name + "/keep"
			}
			b.Run(name, func(b *testing.B) {
				defer gpu.SetScanKeepStatus(s.Device(), gpu.SetScanKeepStatus(s.Device(), keep))
				scRun(b, s, 0, c.f)
			})
		}
	}
}
