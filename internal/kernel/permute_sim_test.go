package kernel

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"

	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
)

func TestPermutePtxas(t *testing.T) {
	for _, sp := range []*Permute{
		{Size: 4, Rank: 2, B: 0, TB: 64, TA: 64},
		{Size: 8, Rank: 2, B: 0, TB: 32, TA: 32},
		{Size: 1, Rank: 3, B: 1, TB: 64, TA: 64},
		{Size: 2, Rank: 4, B: 2, TB: 128, TA: 16},
		{Size: 4, Rank: 8, B: 3, TB: 16, TA: 128},
		{Size: 4, Rank: 2, B: 0, TB: 64, TA: 64, V2: true, Vec: 4},
		{Size: 4, Rank: 2, B: 0, TB: 64, TA: 64, V2: true, Vec: 1},
		{Size: 4, Rank: 2, B: 0, TB: 32, TA: 32, V2: true, Vec: 4},
		{Size: 4, Rank: 2, B: 0, TB: 64, TA: 64, V2: true, Vec: 4, Index64: true},
		{Size: 8, Rank: 2, B: 0, TB: 32, TA: 32, V2: true, Vec: 2},
		{Size: 1, Rank: 3, B: 1, TB: 64, TA: 64, V2: true, Vec: 4},
		{Size: 2, Rank: 4, B: 2, TB: 128, TA: 16, V2: true, Vec: 2},
		{Size: 4, Rank: 4, B: 2, TB: 32, TA: 16, V2: true, Vec: 2},
		{Size: 4, Rank: 3, B: 0, TB: 64, TA: 32, V2: true, Vec: 1},
		{Size: 4, Rank: 8, B: 3, TB: 16, TA: 128, V2: true},
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
			if sp.V2 && regs > 64 {
				t.Errorf("%s: %d registers, want at most 64 (occupancy)", sp.Key(), regs)
			}
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
		// Vectorizable for the second kernel: stride 1 along B, multiples of 4.
		{4, []int{72, 132}, []int{1, 72}, 0, 64, 64},                       // partial tiles, vec 4
		{4, []int{72, 132}, []int{1, 72}, 0, 32, 32},                       // 32x32, vec 4
		{8, []int{34, 66}, []int{1, 34}, 0, 32, 32},                        // 8-byte, vec 2
		{1, []int{2, 68, 20}, []int{20 * 68, 1, 68}, 1, 64, 64},            // bytes, a batch, vec 4
		{2, []int{3, 132, 8}, []int{132 * 8, 1, 132}, 1, 128, 16},          // short A, vec 4 -> 2
		{4, []int{10, 10, 512, 10}, []int{5120, 51200, 1, 512}, 2, 32, 16}, // Metal.jl's 4d, vec 2
		{4, []int{4, 3, 12, 8}, []int{-96, 12 * 8 * 4, 1, 12}, 2, 64, 16},  // negative batch stride
		{4, []int{640, 25}, []int{1, 640}, 0, 64, 32},                      // Metal.jl's 3d shape, smaller
	} {
		for _, sp := range pmSimSpecs(c.sz, len(c.shape), c.b, c.tb, c.ta, c.shape, c.istr) {
			pmSimCase(t, rng, sp, c.sz, c.shape, c.istr)
		}
	}
}

// pmSimSpecs returns the first kernel's spec and the second kernel's, scalar and with
// the widest vector the case allows.
func pmSimSpecs(sz, rank, b, tb, ta int, shape, istr []int) []*Permute {
	specs := []*Permute{
		{Size: sz, Rank: rank, B: b, TB: tb, TA: ta},
		{Size: sz, Rank: rank, B: b, TB: tb, TA: ta, V2: true},
	}
	for _, v := range []int{4, 2} {
		sp := &Permute{Size: sz, Rank: rank, B: b, TB: tb, TA: ta, V2: true, Vec: v}
		if sp.Validate() == nil && sp.VecOK(shape, istr) {
			lo, _ := extent(shape, istr)
			if lo%v == 0 {
				specs = append(specs, sp)
				break
			}
		}
	}
	return specs
}

func pmSimCase(t *testing.T, rng *rand.Rand, sp *Permute, sz int, shape, istr []int) {
	c := struct {
		sz          int
		shape, istr []int
	}{sz, shape, istr}
	{
		t.Run(fmt.Sprintf("%s/%v/%v", sp.Key(), c.shape, c.istr), func(t *testing.T) {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			lo, hi := extent(c.shape, c.istr)
			span := hi - lo + 1
			in := spectest.RandBytes(rng, dtype.Uint8, span*c.sz, false)
			out := make([]byte, n*c.sz)
			// Element 0 sits -lo elements into the buffer.
			args := []spectest.Arg{spectest.PtrAt(in, -lo*c.sz), spectest.Buf(out)}
			for _, v := range c.shape {
				args = append(args, spectest.U64(uint64(v)))
			}
			for _, v := range c.istr {
				args = append(args, spectest.I64(int64(v)))
			}
			grid := sp.Blocks(c.shape)
			got := spectest.Sim(t, sp, grid, PermuteBlock, 8, args)
			want := spectest.CPU(t, sp, grid, PermuteBlock, args)
			if i := spectest.FirstDiff(dtype.Uint8, got[1], want[1]); i >= 0 {
				t.Fatalf("byte %d differs", i)
			}
		})
	}
}
