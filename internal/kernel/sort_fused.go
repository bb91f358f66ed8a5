package kernel

import (
	"fmt"
	"strconv"

	"github.com/go-gpu/gpu/backend/cpu"
)

// RadixFused sorts one row of n keys (the keys alone) in a single launch: every digit
// pass of the radix sort, least significant first, with grid-wide barriers between
// the passes' steps in place of RadixPass's look-back, so that no tile waits on a
// chain of predecessors and no pass waits for a launch. It is for sorts whose tiles all
// run at once: the launch must be cooperative (backend.LaunchConfig.Cooperative: every
// block resident together), at most MinBlocks (at least 1) blocks a multiprocessor.
//
// The steps (Tile() keys a block, block b's tile its keys b*Tile() on):
//  1. each block counts its tile's digits of every pass and publishes the counts;
//     it adds them to the row's totals and to its group's sums (groups of
//     FusedGroup tiles; atomics); barrier (with EarlyRank, the block ranks and
//     stages pass 0's tile between its arrival and its wait); every block turns the
//     totals into each digit's first position in the row, for every pass, in shared
//     memory;
//  2. passes whose digit is the same for every key are skipped (as RadixPlan does);
//     for each other pass k of m: load the tile from the pass's input, rank the keys
//     as RadixPass does (warp-level multi-split), publish the tile's counts and add
//     them to its group's (pass 0's are step 1's); barrier; each block adds the sums
//     of the groups before its own and the counts of its group's tiles before it (at
//     most grid/FusedGroup + FusedGroup-1 rows, its warps reading them in parallel)
//     to the digits' first positions, and scatters its keys; barrier unless it was
//     the last pass.
//
// Kernel parameters, in order:
//
//	keyIn, keyB, keyOut  u64 addresses (Order.Type; n keys each; keyB unused with one pass)
//	work     u64  FusedWorkBytes(passes, grid) bytes: the tiles' counts [passes][grid][256] u32
//	sums     u64  FusedSumsBytes(passes, grid) bytes, zero at the launch and left zero:
//	              the groups' sums [2*passes][ceil(grid/FusedGroup)][256] u32 (step 1's
//	              of each pass, then the later passes'), the totals [passes][256] u32,
//	              the barrier's counter and the exit counter (u32 each, 16 bytes)
//	n        u64  keys, at most grid*Tile() and more than (grid-1)*Tile()
//
// The grid has ceil(n/Tile()) blocks of SortBlock threads. The kernel leaves the sums
// zero (a stream's self-cleaning scratch, with no memset before the next launch): after
// its scatter in the last active pass, each block zeroes rows of the groups' sums that
// no block reads or adds to any more (all but the last pass's: past that pass's counts
// barrier, or with one active pass past step 1's, every other row's last use is done),
// then takes an exit ticket (an acq_rel atomic, its last reads done), and the last
// block out zeroes the rest (the totals, which step 2 may still read with one active
// pass; the last pass's rows; the counters).
type RadixFused struct {
	Order SortKey
	Items int
	// MinBlocks > 0 asks ptxas for that many resident blocks per multiprocessor
	// (.minnctapersm), which the host's co-residency count may then use.
	MinBlocks int
	// LoadFence makes every key of the tile arrive before the ranking (as RadixPass's).
	LoadFence bool
	// Rank is how the ranking finds a key's peers in its warp (as RadixPass's).
	Rank SortRank
	// Split arrives at the barrier after a pass's counts as soon as they are published
	// and waits for it once the tile is staged in shared memory, so that the wait
	// overlaps the block's own work.
	Split bool
	// EarlyRank ranks and stages pass 0's tile in step 1, on the keys the block
	// already holds, between its arrival at step 1's barrier and its wait there, so
	// that the wait overlaps the ranking; when pass 0 is active it starts at its
	// scatter. (When it is skipped, the work is wasted.)
	EarlyRank bool
	// Trace takes a seventh parameter, a u64 address of grid*FusedTraceSlots u64
	// words: thread 0 of each block writes the %globaltimer (ns) there as the block
	// passes each step (FusedTraceSlot names them; a slot the block doesn't pass
	// keeps what it held). A measuring tool (the benchmarks' timeline), not for use.
	Trace bool
	// Full is for rows whose every tile is full (n a multiple of Tile()): the kernel
	// leaves out the per-item bounds tests of the loads, the ranking and the staging
	// (a launch with another n is an error: CPU's, the host's check).
	Full bool
}

// The slots of RadixFused's trace, a block's FusedTraceSlots words: step 1's, then
// fusedTracePass a pass (the pass's digit index, up to 8), then the end.
const (
	fusedTraceStep = 4
	fusedTracePass = 6
	// FusedTraceSlots is the words of a block's trace.
	FusedTraceSlots = fusedTraceStep + SortMaxPasses*fusedTracePass + 1
)

// FusedTraceSlot names slot i of a block's trace: the step the block had just passed.
func FusedTraceSlot(i int) string {
	step := []string{"start", "step 1 counts published", "step 1 barrier passed", "digit starts"}
	pass := []string{"keys loaded and ranked", "tile staged", "counts barrier passed", "offsets", "scatter issued", "keys barrier passed"}
	switch {
	case i < 0 || i >= FusedTraceSlots:
		return ""
	case i < fusedTraceStep:
		return step[i]
	case i == FusedTraceSlots-1:
		return "end"
	}
	i -= fusedTraceStep
	return fmt.Sprintf("pass %d: %s", i/fusedTracePass, pass[i%fusedTracePass])
}

// Tile returns the keys per block.
func (p *RadixFused) Tile() int { return SortBlock * p.Items }

// FusedGroup is the tiles of a group of RadixFused, whose counts it also sums, so that
// a block adds at most grid/FusedGroup + FusedGroup-1 rows of counts for its offsets
// rather than one a tile before it.
const FusedGroup = 16

// FusedWorkBytes returns the bytes of RadixFused's work (the tiles' counts) for a grid
// of grid blocks.
func FusedWorkBytes(passes, grid int) int { return passes * grid * RadixDigits * 4 }

// FusedSumsBytes returns the bytes of RadixFused's sums (zero at the launch, left
// zero): the groups' sums, the totals and the counters.
func FusedSumsBytes(passes, grid int) int {
	groups := (grid + FusedGroup - 1) / FusedGroup
	return (2*passes*groups+passes)*RadixDigits*4 + 16
}

// Key identifies the kernel.
func (p *RadixFused) Key() string { return string(p.AppendKey(nil)) }

// AppendKey appends Key to b.
func (p *RadixFused) AppendKey(b []byte) []byte {
	b = p.Order.appendKey(append(b, "sort.fused|"...))
	b = strconv.AppendInt(append(b, "|k"...), int64(p.Items), 10)
	if p.MinBlocks > 0 {
		b = strconv.AppendInt(append(b, "|mb"...), int64(p.MinBlocks), 10)
	}
	if p.LoadFence {
		b = append(b, "|lf"...)
	}
	if p.Rank != RankBallot {
		b = append(append(b, '|'), p.Rank.String()...)
	}
	if p.Split {
		b = append(b, "|split"...)
	}
	if p.EarlyRank {
		b = append(b, "|early"...)
	}
	if p.Trace {
		b = append(b, "|trace"...)
	}
	if p.Full {
		b = append(b, "|full"...)
	}
	return b
}

// Validate checks the spec.
func (p *RadixFused) Validate() error {
	if err := p.Order.Validate(); err != nil {
		return err
	}
	if err := sortItemsValid(p.Items); err != nil {
		return err
	}
	if smem := p.SharedBytes(); smem > 48<<10 {
		return fmt.Errorf("kernel: fused sort tile of %d keys takes too much shared memory", p.Tile())
	}
	if p.MinBlocks < 0 || p.MinBlocks > 8 {
		return fmt.Errorf("kernel: fused sort min blocks %d", p.MinBlocks)
	}
	if p.Rank > RankAtomicOr {
		return fmt.Errorf("kernel: sort ranking %v", p.Rank)
	}
	return nil
}

// SharedBytes returns the kernel's static shared memory in bytes (ptxas's count or up
// to 16 bytes more): the tile's keys and digits, the warps' counters, every pass's
// digit starts, the digits' output addresses and a few words.
func (p *RadixFused) SharedBytes() int {
	return p.tileBytes() + p.Tile() + (8+p.Order.Passes())*RadixDigits*4 + RadixDigits*8 + 64
}

// tileBytes is the shared memory of the tile's keys (RankAtomicOr keeps its 16 KiB of
// match words there during the ranking).
func (p *RadixFused) tileBytes() int {
	b := p.Tile() * max(p.Order.Size(), 4)
	if p.Rank == RankAtomicOr {
		b = max(b, 2*8*RadixDigits*4)
	}
	return b
}

// CPU returns the kernel for the CPU backend: the same passes over the whole row
// (stable counting scatters), leaving the sums zero as the kernel does (and the work
// as it was).
func (p *RadixFused) CPU() (func(*cpu.Launch) error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	key := p.Order
	ks, P, tile := key.Size(), key.Passes(), p.Tile()
	return func(l *cpu.Launch) error {
		n, grid := int(l.Uint64(5)), int(l.Grid[0])
		if n <= 0 || grid != (n+tile-1)/tile || l.Block[0] != SortBlock || l.Grid[1] != 1 || l.Grid[2] != 1 || p.Full && n%tile != 0 {
			return launchErr("fused sort of %d keys: grid %v, block %v (tile %d, full %v)", n, l.Grid, l.Block, tile, p.Full)
		}
		if _, err := sortMem(l, 3, FusedWorkBytes(P, grid)); err != nil {
			return err
		}
		sums, err := sortMem(l, 4, FusedSumsBytes(P, grid))
		if err != nil {
			return err
		}
		if !checkZero(sums) {
			return launchErr("fused sort of %d keys: sums not zeroed", n)
		}
		in, err := sortMem(l, 0, n*ks)
		if err != nil {
			return err
		}
		out, err := sortMem(l, 2, n*ks)
		if err != nil {
			return err
		}
		ordered := key.orderedFunc()
		digits := make([]uint8, n)
		totals := make([]uint32, P*RadixDigits)
		active := make([]int, 0, P)
		for pass := 0; pass < P; pass++ {
			sortDigits(in, ks, 0, n, digits, ordered, 8*pass)
			c := totals[pass*RadixDigits:][:RadixDigits]
			trivial := false
			for _, d := range digits {
				c[d]++
			}
			for _, v := range c {
				trivial = trivial || int(v) == n
			}
			if !trivial {
				active = append(active, pass)
			}
		}
		if len(active) == 0 {
			active = append(active, P-1)
		}
		m := len(active)
		var keyB []byte
		if m > 1 {
			if keyB, err = sortMem(l, 1, n*ks); err != nil {
				return err
			}
		}
		src := in
		for k, pass := range active {
			dst := out
			if (m-1-k)%2 == 1 {
				dst = keyB
			}
			sortDigits(src, ks, 0, n, digits, ordered, 8*pass)
			var off [RadixDigits]uint64
			var run uint64
			for d, v := range totals[pass*RadixDigits:][:RadixDigits] {
				off[d] = run
				run += uint64(v)
			}
			scatterElems(dst, src, ks, 0, n, digits, &off)
			src = dst
		}
		return nil
	}, nil
}
