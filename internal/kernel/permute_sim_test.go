package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

func TestPermutePtxas(t *testing.T) {
	for _, sp := range []*Permute{
		{Size: 4, Rank: 2, B: 0, TB: 64, TA: 64},
		{Size: 8, Rank: 2, B: 0, TB: 32, TA: 32},
		{Size: 1, Rank: 3, B: 1, TB: 64, TA: 64},
		{Size: 2, Rank: 4, B: 2, TB: 128, TA: 16},
		{Size: 4, Rank: 8, B: 3, TB: 16, TA: 128},
	} {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			log, cubin := scanPtxas(t, src)
			regs, smem := scanRegs(log)
			sass := 0
			if testing.Verbose() {
				sass = scanSassCount(t, cubin)
			}
			t.Logf("%s: %d registers, %d bytes smem, %d SASS", sp.Key(), regs, smem, sass)
		})
	}
}

// TestPermuteSim runs the tiled permute on the simulator against the CPU's gather:
// partial tiles on both tile dimensions, batches, negative and odd strides.
func TestPermuteSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	for _, c := range []struct {
		sz     int
		shape  []int // output shape
		istr   []int // input strides per output dimension
		b      int
		tb, ta int
	}{
		{4, []int{70, 45}, []int{1, 70}, 0, 64, 64},                   // a transpose with partial tiles
		{8, []int{33, 40}, []int{1, 33}, 0, 32, 32},                   // 8-byte
		{1, []int{3, 65, 20}, []int{20 * 65, 1, 65}, 1, 64, 64},       // bytes, a batch
		{2, []int{2, 130, 9}, []int{1, 18, 2}, 1, 128, 16},            // short A
		{4, []int{9, 3, 100}, []int{300, 100, 1 * 3 * 9}, 0, 16, 128}, // short B (strides made up: B=0 has 300?)
		{4, []int{40, 50}, []int{-1, 2 * 40}, 0, 64, 64},              // negative stride
	} {
		sp := &Permute{Size: c.sz, Rank: len(c.shape), B: c.b, TB: c.tb, TA: c.ta}
		t.Run(fmt.Sprintf("%s/%v/%v", sp.Key(), c.shape, c.istr), func(t *testing.T) {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			lo, hi := extent(c.shape, c.istr)
			span := hi - lo + 1
			in := randBytes(rng, dtype.Uint8, span*c.sz, false)
			out := make([]byte, n*c.sz)
			// Element 0 sits -lo elements into the buffer.
			args := []kArg{{buf: true, data: in, ptr: -lo * c.sz}, kBuf(out)}
			for _, v := range c.shape {
				args = append(args, kU64(uint64(v)))
			}
			for _, v := range c.istr {
				args = append(args, kI64(int64(v)))
			}
			grid := sp.Blocks(c.shape)
			got := runSim(t, sp, grid, PermuteBlock, 8, args)
			want := runCPU(t, sp, grid, PermuteBlock, args)
			if i := sameElems(dtype.Uint8, got[1], want[1]); i >= 0 {
				t.Fatalf("byte %d differs", i)
			}
		})
	}
}
