package gpu_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
)

// BenchmarkIndexExposed tells the device time an operation takes from the host time
// the device waits for: gpubench's GPU-mode rows time one call between two events
// (n = 1 for calls longer than its 10 µs minimum sample), so that the host's work
// before the first launch of a call (and between its launches) counts as device time.
// Each case times the call between two events twice: "exposed", the device idle when
// the start event is recorded (gpubench's way), and "hidden", after a 1 GiB memset
// enqueued first, which keeps the device busy while the host enqueues the call, so the
// time between the events is the device's own. Metrics (medians): exposed-ns/op,
// hidden-ns/op and host-ns/op, their difference: the device time the host's work
// costs per call. GPU only, at gpubench's /16k sizes (its index/ rows).
func BenchmarkIndexExposed(b *testing.B) {
	d := scBenchDev(b)
	if d.Backend() != "cuda" {
		b.Skip("times device events: CUDA only")
	}
	ctx := context.Background()
	s := d.DefaultStream()
	g := gpu.NewGenerator(44)
	busy, err := s.Alloc(1 << 30)
	if err != nil {
		b.Fatal(err)
	}
	defer busy.Free()
	start, err := d.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	defer start.Close()
	end, err := d.NewEvent()
	if err != nil {
		b.Fatal(err)
	}
	defer end.Close()
	const side = 16384
	src, err := gpu.Rand[float32](s, g, side*side)
	if err != nil {
		b.Fatal(err)
	}
	defer src.Free()
	n := side * side / 4
	vals, err := gpu.Rand[float32](s, g, n)
	if err != nil {
		b.Fatal(err)
	}
	defer vals.Free()
	idx, err := gpu.RandInt[int64](s, g, 0, int64(side*side), n)
	if err != nil {
		b.Fatal(err)
	}
	defer idx.Free()
	nb := side * side / 256
	bidx, err := gpu.RandInt[int64](s, g, 0, int64(nb), n)
	if err != nil {
		b.Fatal(err)
	}
	defer bidx.Free()
	bins, err := gpu.Zeros[float32](s, nb)
	if err != nil {
		b.Fatal(err)
	}
	defer bins.Free()
	var parts [2][]*gpu.Array[float32]
	for axis, shape := range [][]int{{side * side / 2}, {side / 2, side / 2}} {
		for range 2 {
			x, err := gpu.Rand[float32](s, g, shape...)
			if err != nil {
				b.Fatal(err)
			}
			defer x.Free()
			parts[axis] = append(parts[axis], x)
		}
	}
	freeing := func(a interface{ Free() error }, err error) error {
		if err == nil {
			a.Free()
		}
		return err
	}
	cases := []struct {
		name string
		f    func() error
	}{
		{"take/float32/random", func() error { return freeing(gpu.Take(s, src, idx)) }},
		{"put/float32/random", func() error { return gpu.Put(s, src, idx, vals) }},
		{"addat/float32/many", func() error { return gpu.AddAt(s, bins, bidx, vals) }},
		{"addat/float32/many/wrap", func() error { return gpu.AddAt(s, bins, bidx, vals, gpu.WithMode(gpu.ModeWrap)) }},
		{"bincount/many", func() error { return freeing(gpu.Bincount(ctx, s, bidx, nb)) }},
		{"bincount/many/bins", func() error { return freeing(gpu.Bincount(ctx, s, bidx, nb, gpu.Bins(nb))) }},
		// Bincount's first pass (without Bins): the largest of 2^26 int64 values, 512
		// MiB read, about 128 µs at the copy bandwidth.
		{"max/int64/2^26", func() error { return freeing(gpu.Max(s, bidx)) }},
		{"concat/float32/axis0", func() error { return freeing(gpu.Concatenate(s, parts[0], 0)) }},
		{"concat/float32/axis1", func() error { return freeing(gpu.Concatenate(s, parts[1], 1)) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			// One sample: the call between the events, the device busy first or not.
			sample := func(hide bool) time.Duration {
				if hide {
					if err := s.Memset(busy, 0); err != nil {
						b.Fatal(err)
					}
				}
				if err := s.Record(start); err != nil {
					b.Fatal(err)
				}
				if err := c.f(); err != nil {
					b.Fatal(err)
				}
				if err := s.Record(end); err != nil {
					b.Fatal(err)
				}
				if err := end.Wait(ctx); err != nil {
					b.Fatal(err)
				}
				t, err := gpu.Elapsed(start, end)
				if err != nil {
					b.Fatal(err)
				}
				return t
			}
			for range 3 {
				sample(false)
			}
			if err := s.Synchronize(ctx); err != nil {
				b.Fatal(err)
			}
			var exposed, hidden []time.Duration
			for b.Loop() {
				exposed = append(exposed, sample(false))
				hidden = append(hidden, sample(true))
			}
			if err := s.Synchronize(ctx); err != nil {
				b.Fatal(err)
			}
			med := func(x []time.Duration) float64 {
				slices.Sort(x)
				return float64(x[len(x)/2].Nanoseconds())
			}
			e, h := med(exposed), med(hidden)
			b.ReportMetric(e, "exposed-ns/op")
			b.ReportMetric(h, "hidden-ns/op")
			b.ReportMetric(e-h, "host-ns/op")
		})
	}
}
