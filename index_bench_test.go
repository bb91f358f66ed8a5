package gpu_test

import (
	"context"
	"testing"

	"github.com/go-gpu/gpu"
)

// The indexing benchmarks at the anchors' sizes (a 2^28-element source, 2^26 indices
// or updates; ../shared/peers/h200-2026-12-01-extra.md) on a GPU, and at 2^20 and
// 2^18 on the CPU backend: one call plus a synchronize (scRun), GB/s as gpubench's
// index/ rows count it. gpubench's rows are the reference figures (device events);
// these are for profiling and A/B runs with go test.

// idxBenchSizes returns the source elements and the index count.
func idxBenchSizes(d *gpu.Device) (src, n int) {
	if scBenchLarge(d) {
		return 1 << 28, 1 << 26
	}
	return 1 << 20, 1 << 18
}

func BenchmarkTake(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	srcN, n := idxBenchSizes(d)
	g := gpu.NewGenerator(41)
	src, err := gpu.Rand[float32](s, g, srcN)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	random, err := gpu.RandInt[int64](s, g, 0, int64(srcN), n)
	if err != nil {
		b.Fatal(err)
	}
	defer random.Free()
	stride, err := gpu.Arange[int64](s, 0, int64(4*n), 4)
	if err != nil {
		b.Fatal(err)
	}
	defer stride.Free()
	for _, c := range []struct {
		name string
		idx  *gpu.Array[int64]
		mode gpu.IndexMode
	}{{"random", random, gpu.ModeRaise}, {"random/wrap", random, gpu.ModeWrap}, {"stride4", stride, gpu.ModeRaise}} {
		b.Run(c.name, func(b *testing.B) {
			scRun(b, s, 16*int64(n), func() (interface{ Free() error }, error) {
				return gpu.Take(s, src, c.idx, gpu.WithMode(c.mode))
			})
		})
	}
}

func BenchmarkAddAt(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	srcN, n := idxBenchSizes(d)
	g := gpu.NewGenerator(42)
	vals, err := gpu.Rand[float32](s, g, n)
	if err != nil {
		b.Fatal(err)
	}
	defer vals.Free()
	for _, bins := range []int{8, srcN / 256} {
		idx, err := gpu.RandInt[int64](s, g, 0, int64(bins), n)
		if err != nil {
			b.Fatal(err)
		}
		dst, err := gpu.Zeros[float32](s, bins)
		if err != nil {
			b.Fatal(err)
		}
		for _, det := range []bool{false, true} {
			name := "bins" + itoa(bins)
			var opts []gpu.IndexOption
			if det {
				name += "/deterministic"
				opts = append(opts, gpu.Deterministic())
			}
			b.Run(name, func(b *testing.B) {
				scRun(b, s, 12*int64(n)+8*int64(bins), func() (interface{ Free() error }, error) {
					return nil, gpu.AddAt(s, dst, idx, vals, opts...)
				})
			})
		}
		b.Run("bincount"+itoa(bins), func(b *testing.B) {
			scRun(b, s, 8*int64(n)+8*int64(bins), func() (interface{ Free() error }, error) {
				return gpu.Bincount(context.Background(), s, idx, bins)
			})
		})
		idx.Free()
		dst.Free()
	}
}

func BenchmarkConcatenate(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	srcN, _ := idxBenchSizes(d)
	g := gpu.NewGenerator(43)
	side := 1
	for side*side < srcN/4 {
		side *= 2
	}
	for _, c := range []struct {
		name  string
		shape []int
		axis  int
	}{{"axis0", []int{srcN / 2}, 0}, {"axis1", []int{side, side}, 1}} {
		x, err := gpu.Rand[float32](s, g, c.shape...)
		if err != nil {
			b.Fatal(err)
		}
		y, err := gpu.Rand[float32](s, g, c.shape...)
		if err != nil {
			b.Fatal(err)
		}
		parts := []*gpu.Array[float32]{x, y}
		b.Run(c.name, func(b *testing.B) {
			scRun(b, s, 16*int64(x.Size()), func() (interface{ Free() error }, error) {
				return gpu.Concatenate(s, parts, c.axis)
			})
		})
		x.Free()
		y.Free()
	}
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}
