package gpu_test

import (
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/kernel"
	"github.com/go-gpu/gpu/internal/ptxsim/simdev"
)

// simGPU returns the simulated CUDA device (internal/ptxsim/simdev) the tests run the
// CUDA path on without a GPU: the planners, the generated PTX, launch geometry,
// counters and scratch. It has 2 multiprocessors.
var simGPU = sync.OnceValues(func() (*gpu.Device, error) { return gpu.NewDevice(simdev.New(2)) })

// simStream returns a new stream of the simulated device, closed when t ends.
// forDevicesAndSim runs run on a stream of every device (forDevices) and of the PTX
// simulator (simStream), the latter left out under -short when slowSim.
func forDevicesAndSim(t *testing.T, slowSim bool, run func(t *testing.T, s *gpu.Stream)) {
	t.Helper()
	forDevices(t, func(t *testing.T, _ *gpu.Device, s *gpu.Stream) { run(t, s) })
	t.Run("sim", func(t *testing.T) {
		if slowSim && testing.Short() {
			t.Skip("the simulator is slow")
		}
		_, s := simStream(t)
		run(t, s)
	})
}

func simStream(t *testing.T) (*gpu.Device, *gpu.Stream) {
	t.Helper()
	d, err := simGPU()
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return d, s
}

// TestSortSim sorts on the simulated CUDA device (internal/ptxsim's simdev): the radix
// sort's host side (its plan, work layout, ping-pong buffers and launch arguments) and
// the block sort's, through the generated PTX, without a GPU. Keys only, Argsort's
// indices and SortByKey's payload; rows longer than a tile (the radix passes) and
// shorter (the block sort); the passes with programmatic dependent launch too, with
// the keys written on whole sectors (Sectors: the rows of 5001 keys), and
// one row of keys alone in one cooperative launch (the fused sort: the rows of 9000
// keys under two blocks a multiprocessor, 9 items a thread, and of 6001 under one, 12),
// the passes with full tiles' own copy of the loads and ranking (FullTiles) and L2
// prefetches of later tiles' keys and the tiles' values (Prefetch, PrefetchVals: the
// simulator faults on one outside the buffers), and the
// fused kernel without bounds tests for a row of whole tiles (FusedFull).
func TestSortSim(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulator is slow")
	}
	_, s := simStream(t)
	rng := rand.New(rand.NewPCG(21, 9))
	def := gpu.SortConfigFromEnv(func(string) string { return "" })
	pdl := def
	pdl.PDL = true // the plan and passes with griddepcontrol (the simulator is sm_90)
	pdl.FusedMax = 0
	full := def
	full.FullTiles = gpu.SortFullAll // (full tiles' copy of the loads and ranking)
	full.FusedMax = 0
	full.Prefetch, full.PrefetchKV, full.PrefetchVals = 1, 1, true // (2x8193: six tiles, the first four prefetching the keys of the tile two later)
	fusedFull := def
	fusedFull.FusedFull = true // (6144 keys: two tiles of 12 items, the fused kernel without bounds tests)
	sectors := def
	sectors.Sectors, sectors.FusedMax = gpu.SortSectorsAll, 0 // (the passes' keys written on whole sectors)
	var fullPasses, fullFused atomic.Int64
	var allFull atomic.Bool // (the default gives narrow keys' passes full tiles too: counted under full alone)
	defer gpu.SetSortPassHook(func(sp *kernel.RadixPass) {
		if sp.FullTiles && allFull.Load() {
			fullPasses.Add(1)
		}
	})()
	defer gpu.SetSortFusedHook(func(sp *kernel.RadixFused) {
		if sp.Full {
			fullFused.Add(1)
		}
	})()
	for i, sh := range [][2]int{{1, 9000}, {2, 5001}, {5, 100}, {1, 7000}, {1, 6001}, {2, 8193}, {1, 6144}} {
		c := def
		switch i {
		case 3:
			c = pdl
		case 5:
			c = full
		case 6:
			c = fusedFull
		case 1:
			c = sectors
		}
		old := gpu.SetSortConfig(c)
		defer gpu.SetSortConfig(old)
		allFull.Store(i == 5)
		rows, n := sh[0], sh[1]
		checkSorted(t, s, stGen[float32](rng, rows*n, patSpecial), []int{rows, n}, false)
		checkSorted(t, s, stGen[int64](rng, rows*n, patRandom), []int{rows, n}, true)
		ks := stGen[uint16](rng, rows*n, patFew)
		vs := stGen[float64](rng, rows*n, patRandom)
		ka := mustArr[uint16](t)(gpu.FromSlice(s, ks, rows, n))
		va := mustArr[float64](t)(gpu.FromSlice(s, vs, rows, n))
		ko, vo, err := gpu.SortByKey(s, ka, va, -1)
		if err != nil {
			t.Fatal(err)
		}
		want := stArgsort(ks, n, false)
		gk, gv := toSlice(t, ko), toSlice(t, vo)
		for i, w := range want {
			j := i/n*n + int(w)
			if gk[i] != ks[j] || stBits(gv[i]) != stBits(vs[j]) {
				t.Fatalf("%dx%d: SortByKey element %d: (%d, %v), want (%d, %v)", rows, n, i, gk[i], gv[i], ks[j], vs[j])
			}
		}
		for _, a := range []interface{ Free() error }{ko, vo, ka, va} {
			a.Free()
		}
	}
	if n := fullPasses.Load(); n != 5 { // the 2x8193 shape's two Sorts, two Argsorts and SortByKey
		t.Errorf("%d sorts took the full tiles' copy, want 5", n)
	}
	if n := fullFused.Load(); n != 2 { // the last shape's two Sorts of keys alone
		t.Errorf("%d fused sorts without bounds tests, want 2", n)
	}
}
