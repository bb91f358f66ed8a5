//go:build unix

package gpu_test

import (
	"context"
	"testing"

	"github.com/go-gpu/gpu"
)

// BenchmarkHostCostCUDA times the host's part of calls whose kernels take far longer (the
// GPU busy, so that no call waits for it): the time from the call to its return, which
// gpubench's device-event timing adds to a kernel's when the GPU is idle before the
// call. Every 32 calls, a synchronize outside the clock keeps the queue short. The
// arrays are those of gpubench's index/concat/float32/axis1/16k.
func BenchmarkHostCostCUDA(b *testing.B) {
	d := cudaDev(b)
	s, err := d.NewStream()
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	bg := context.Background()
	const side = 8192
	parts := make([]*gpu.Array[float32], 2)
	for i := range parts {
		if parts[i], err = gpu.Full(s, float32(i+1), side, side); err != nil {
			b.Fatal(err)
		}
		defer parts[i].Free()
	}
	whole, err := gpu.Concatenate(s, parts, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer whole.Free()
	run := func(b *testing.B, call func() (*gpu.Array[float32], error)) {
		if err := d.Synchronize(bg); err != nil {
			b.Fatal(err)
		}
		i := 0
		for b.Loop() {
			out, err := call()
			if err != nil {
				b.Fatal(err)
			}
			out.Free()
			if i++; i%32 == 0 {
				b.StopTimer()
				if err := d.Synchronize(bg); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
			}
		}
		if err := d.Synchronize(bg); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("concatenate-axis1", func(b *testing.B) {
		run(b, func() (*gpu.Array[float32], error) { return gpu.Concatenate(s, parts, 1) })
	})
	b.Run("clone", func(b *testing.B) {
		run(b, func() (*gpu.Array[float32], error) { return gpu.Clone(s, whole) })
	})
	b.Run("empty", func(b *testing.B) {
		run(b, func() (*gpu.Array[float32], error) { return gpu.Empty[float32](s, side, 2*side) })
	})
}
