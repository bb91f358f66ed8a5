package gpu_test

import (
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
)

// A fused reduction's first use on a stream allocates the stream's ticket counters. Under
// memory pressure that the runtime's out-of-memory recovery (collecting dropped buffers)
// would cure, the reduction must still succeed, as the two-launch form does.
func TestReduceFusedCountersReclaim(t *testing.T) {
	d, err := simGPU()
	if err != nil {
		t.Fatal(err)
	}
	smallFusedSplits(t, d)
	rng := rand.New(rand.NewPCG(5, 6))
	for _, fuse := range []bool{false, true} {
		gpu.SetReduceFuse(d, fuse)
		s, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		x := upload(t, s, randVals[float32](rng, 20000), 20000)
		out := must[*gpu.Array[float32]](t)(gpu.Empty[float32](s))
		// Compile the plan's kernels first, with memory to spare.
		if err := gpu.ReduceInto(s, out, gpu.OpSum, x); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		// Garbage: 1 MiB of arrays dropped without Free, then leave 1 KiB free.
		for range 4 {
			must[*gpu.Array[float32]](t)(gpu.Empty[float32](s, 1<<16))
		}
		s2, err := d.NewStream() // no counters yet, no cached blocks
		if err != nil {
			t.Fatal(err)
		}
		free, _, _ := d.MemInfo()
		saved := cpu.TotalMemory
		cpu.TotalMemory -= free - 1024
		err = gpu.ReduceInto(s2, out, gpu.OpSum, x)
		cpu.TotalMemory = saved
		if err != nil {
			t.Errorf("fused %v: a reduction with reclaimable garbage: %v", fuse, err)
		}
		s2.Close()
		x.Free()
		out.Free()
		s.Close()
		runtime.GC()
	}
}
