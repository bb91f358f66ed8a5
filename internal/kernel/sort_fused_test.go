package kernel

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// fusedSimRun sorts keys with RadixFused on the simulator and on the CPU and checks
// both outputs against a stable sort, and that both leave the sums zero.
func fusedSimRun(t *testing.T, sp *RadixFused, keys []byte, n int) {
	t.Helper()
	P, ks := sp.Order.Passes(), sp.Order.Size()
	grid := (n + sp.Tile() - 1) / sp.Tile()
	args := []spectest.Arg{spectest.Buf(keys), spectest.Buf(fusedPoison(n * ks)), spectest.Buf(fusedPoison(n * ks)),
		spectest.Buf(fusedPoison(FusedWorkBytes(P, grid))), spectest.Buf(make([]byte, FusedSumsBytes(P, grid))), spectest.U64(uint64(n))}
	sim, cpu := spectest.Both(t, sp, grid, SortBlock, grid, args)
	checkSortResult(t, sp.Order, ValNone, 0, keys, nil, 1, n, sim[2], nil)
	checkSortResult(t, sp.Order, ValNone, 0, keys, nil, 1, n, cpu[2], nil)
	for i, out := range [][]byte{sim[4], cpu[4]} {
		for j, b := range out {
			if b != 0 {
				t.Fatalf("%s: the %s left the sums' byte %d of %d at %#x", sp.Key(), []string{"simulator", "CPU"}[i], j, len(out), b)
			}
		}
	}
}

// fusedPoison returns size bytes of 0xA5, so that an unwritten element shows.
func fusedPoison(size int) []byte {
	b := make([]byte, size)
	for i := range b {
		b[i] = 0xA5
	}
	return b
}

func TestRadixFusedSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 9))
	type tc struct {
		kt    dtype.DType
		desc  bool
		n     int
		items int
		split bool
		rank  SortRank
		early bool
	}
	cases := []tc{
		{dtype.Float32, false, 3000, 4, true, RankBallot, true},
		{dtype.Int32, true, 1025, 4, false, RankAtomicOr, true},
		{dtype.Float64, false, 2100, 4, false, RankBallot, false},
		{dtype.Uint8, false, 700, 2, true, RankAtomicOr, true},
		{dtype.Float16, true, 1500, 2, false, RankBallot, false},
		{dtype.Bool, false, 600, 1, true, RankBallot, true},
		{dtype.Int64, true, 1800, 4, true, RankBallot, false},
		{dtype.Float32, true, 4096, 16, true, RankAtomicOr, true},
		{dtype.Float32, false, 2*26*256 - 3, 26, true, RankAtomicOr, true},
		{dtype.Float32, false, 3000, 4, true, RankBallot, false},
		// 90 tiles (6 groups): a block adds up to 5 group sums and 15 tiles' counts.
		{dtype.Int32, false, 90*256 - 5, 1, true, RankBallot, true},
		// 320 tiles: the last block adds 19 group sums and 15 tiles' counts, past
		// the 32 rows of one round.
		{dtype.Uint16, false, 320*256 - 1, 1, false, RankBallot, false},
	}
	// RadixFused.Full: rows of whole tiles without the bounds tests (one tile, and
	// several across groups), every ranking, with and without the split barrier and
	// the early ranking.
	fulls := []tc{
		{dtype.Int16, true, 2 * 256, 2, false, RankBallot, false},
		{dtype.Float32, false, 3 * 4 * 256, 4, true, RankAtomicOr, true},
		{dtype.Float64, false, 4 * 256, 4, true, RankBallot, true},
		{dtype.Uint8, false, 20 * 256, 1, true, RankAtomicOr, false},
		{dtype.Float32, true, 2 * 16 * 256, 16, true, RankAtomicOr, true},
	}
	if testing.Short() || testenv.Race {
		cases, fulls = cases[:2], fulls[:1]
	}
	for i, c := range append(cases, fulls...) {
		sp := &RadixFused{Order: SortKey{Type: c.kt, Descending: c.desc}, Items: c.items, LoadFence: c.items > 1, Split: c.split, Rank: c.rank, EarlyRank: c.early,
			Full: i >= len(cases)}
		t.Run(fmt.Sprintf("%s/%d", sp.Key(), c.n), func(t *testing.T) {
			fusedSimRun(t, sp, sortSimKeys(rng, c.kt, c.n), c.n)
		})
	}
	// A row that isn't whole tiles is the full kernel's launch error.
	sp := &RadixFused{Order: SortKey{Type: dtype.Float32}, Items: 2, Full: true}
	fn, err := sp.CPU()
	if err != nil {
		t.Fatal(err)
	}
	n := 3*sp.Tile() - 1
	args := make([]backend.Arg, 6) // (checked before the buffers are touched)
	args[5] = backend.Arg{Kind: backend.ArgScalar, Size: 8, Val: uint64(n)}
	l := &cpu.Launch{Grid: [3]uint32{3, 1, 1}, Block: [3]uint32{SortBlock, 1, 1}, Args: args}
	if err := fn(l); err == nil || !strings.Contains(err.Error(), "full") {
		t.Errorf("a full fused sort of %d keys in tiles of %d: %v, want a launch error", n, sp.Tile(), err)
	}
}

// Passes whose digit is the same for every key are skipped, with every digit the same
// the last pass alone copies, and with one active pass the result goes straight to the
// output.
func TestRadixFusedSkipSim(t *testing.T) {
	for _, c := range []struct {
		name string
		mask uint32
	}{{"two", 0xff00ff}, {"one", 0xff00}, {"none", 0}, {"three", 0xffff00}} {
		t.Run(c.name, func(t *testing.T) {
			n := 1500
			keys := make([]byte, 4*n)
			for i := 0; i < n; i++ {
				binary.LittleEndian.PutUint32(keys[4*i:], 0x12345678&^c.mask|uint32(i*7919)&c.mask)
			}
			for _, early := range []bool{false, true} {
				fusedSimRun(t, &RadixFused{Order: SortKey{Type: dtype.Uint32}, Items: 2, Split: c.name != "one", EarlyRank: early}, keys, n)
			}
		})
	}
}

// TestRadixFusedOrder checks the memory ordering the simulator can't (it has no weak
// memory model) in the PTX of each variant: every barrier arrival (a red of 1) right
// after fence.acq_rel.gpu, and one exit ticket, acq_rel, after the block's last reads
// of the sums (the rows' ld.global.cg.v4).
func TestRadixFusedOrder(t *testing.T) {
	for _, sp := range []*RadixFused{
		{Order: SortKey{Type: dtype.Float32}, Items: 16, LoadFence: true, Split: true, EarlyRank: true, Rank: RankAtomicOr},
		{Order: SortKey{Type: dtype.Float64}, Items: 12, LoadFence: true},
		{Order: SortKey{Type: dtype.Uint8}, Items: 4, Split: true},
	} {
		src, _, err := sp.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(src, "\n")
		ticket, lastRow, arrivals := -1, -1, 0
		for i, l := range lines {
			l = strings.TrimSpace(l)
			switch {
			case strings.Contains(l, "red.global.add.u32") && strings.HasSuffix(l, ", 1;"):
				arrivals++
				if i == 0 || strings.TrimSpace(lines[i-1]) != "fence.acq_rel.gpu;" {
					t.Errorf("%s: line %d: a barrier arrival without fence.acq_rel.gpu before it: %s", sp.Key(), i+1, l)
				}
			case strings.Contains(l, "atom.") && strings.Contains(l, "add.u32") && !strings.Contains(l, ".shared"):
				if ticket >= 0 || !strings.Contains(l, "atom.acq_rel.gpu.global.add.u32") {
					t.Errorf("%s: line %d: a second or not acq_rel exit ticket: %s", sp.Key(), i+1, l)
				}
				ticket = i
			case strings.Contains(l, "ld.global.cg.v4.u32"):
				lastRow = i
			}
		}
		if arrivals == 0 || ticket < lastRow {
			t.Errorf("%s: %d barrier arrivals, the exit ticket at line %d, the last row read at line %d", sp.Key(), arrivals, ticket+1, lastRow+1)
		}
	}
}

// TestRadixFusedTraceSim checks the traced kernel: the same sort, and each block's
// trace holding a time at every step it passes, in order, and nothing elsewhere.
func TestRadixFusedTraceSim(t *testing.T) {
	const n = 3000
	rng := rand.New(rand.NewPCG(3, 77))
	sp := &RadixFused{Order: SortKey{Type: dtype.Float32}, Items: 4, LoadFence: true, Split: true, EarlyRank: true, Rank: RankAtomicOr, Trace: true}
	keys := sortSimKeys(rng, sp.Order.Type, n)
	P, grid := sp.Order.Passes(), (n+sp.Tile()-1)/sp.Tile()
	const poison = 0xA5A5A5A5A5A5A5A5
	args := []spectest.Arg{spectest.Buf(keys), spectest.Buf(fusedPoison(n * 4)), spectest.Buf(fusedPoison(n * 4)),
		spectest.Buf(fusedPoison(FusedWorkBytes(P, grid))), spectest.Buf(make([]byte, FusedSumsBytes(P, grid))), spectest.U64(n),
		spectest.Buf(fusedPoison(grid * FusedTraceSlots * 8))}
	out := spectest.Sim(t, sp, grid, SortBlock, grid, args)
	checkSortResult(t, sp.Order, ValNone, 0, keys, nil, 1, n, out[2], nil)
	// Every pass is active (normal floats): pass 0 starts at its counts barrier (ranked
	// in step 1), the last has no keys barrier after it.
	var want []int
	for i := 0; i < FusedTraceSlots; i++ {
		pass, j := (i-fusedTraceStep)/fusedTracePass, (i-fusedTraceStep)%fusedTracePass
		switch {
		case i < fusedTraceStep || i == FusedTraceSlots-1:
		case pass >= P || pass == 0 && j < 2 || pass == P-1 && j == 5:
			continue
		}
		want = append(want, i)
	}
	for b := 0; b < grid; b++ {
		tr := out[6][b*FusedTraceSlots*8:][:FusedTraceSlots*8]
		var last uint64
		w := 0
		for i := 0; i < FusedTraceSlots; i++ {
			v := binary.LittleEndian.Uint64(tr[8*i:])
			if w < len(want) && want[w] == i {
				w++
				if v == poison || v < last {
					t.Fatalf("block %d: %s at %#x after %#x", b, FusedTraceSlot(i), v, last)
				}
				last = v
			} else if v != poison {
				t.Fatalf("block %d: slot %d (%s) written: %#x", b, i, FusedTraceSlot(i), v)
			}
		}
	}
}
