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
//     it adds them to the row's totals (atomics); barrier;
//  2. passes whose digit is the same for every key are skipped (as RadixPlan does);
//     for each other pass k of m: load the tile from the pass's input, rank the keys
//     as RadixPass does (warp-level multi-split), publish the tile's counts (pass 0's
//     are step 1's); barrier; each block adds the counts of the tiles before it (its
//     warps reading those rows in parallel) and the totals of the digits before,
//     and scatters its keys; barrier unless it was the last pass.
//
// 2m-1 barriers in all. Buffers: active pass k writes keyOut when m-1-k is even,
// keyB when odd (pass k reads keyIn for k = 0, else what pass k-1 wrote), as
// RadixPass does with keyA = keyFinal.
//
// Kernel parameters, in order:
//
//	keyIn, keyB, keyOut  u64 addresses (Order.Type; n keys each; keyB unused with one pass)
//	work     u64  FusedWorkBytes(passes, grid) bytes: the tiles' counts [passes][grid][256]
//	              u32, then the totals [passes][256] u32 and the barrier's counter,
//	              FusedZeroBytes(passes) bytes from FusedZeroOffset(passes, grid), zero
//	              at the launch
//	n        u64  keys, at most grid*Tile() and more than (grid-1)*Tile()
//
// The grid has ceil(n/Tile()) blocks of SortBlock threads.
type RadixFused struct {
	Order SortKey
	Items int
	// MinBlocks > 0 asks ptxas for that many resident blocks per multiprocessor
	// (.minnctapersm), which the host's co-residency count may then use.
	MinBlocks int
	// LoadFence makes every key of the tile arrive before the ranking (as RadixPass's).
	LoadFence bool
}

// Tile returns the keys per block.
func (p *RadixFused) Tile() int { return SortBlock * p.Items }

// FusedZeroOffset returns the offset of the part of RadixFused's work that must be zero
// at the launch: the totals and the barrier's counter.
func FusedZeroOffset(passes, grid int) int { return passes * grid * RadixDigits * 4 }

// FusedZeroBytes returns the size of that part.
func FusedZeroBytes(passes int) int { return passes*RadixDigits*4 + 16 }

// FusedWorkBytes returns the bytes of RadixFused's work for a grid of grid blocks.
func FusedWorkBytes(passes, grid int) int {
	return FusedZeroOffset(passes, grid) + FusedZeroBytes(passes)
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
	return nil
}

// SharedBytes returns the kernel's static shared memory in bytes (ptxas's count or up
// to 16 bytes more): the tile's keys and digits, the warps' counters, the digits'
// output addresses and a few words.
func (p *RadixFused) SharedBytes() int {
	return p.Tile()*max(p.Order.Size(), 4) + p.Tile() + 8*RadixDigits*4 + RadixDigits*8 + 64
}

// CPU returns the kernel for the CPU backend: the same passes over the whole row
// (stable counting scatters), leaving the totals and the barrier's count as the
// kernel does.
func (p *RadixFused) CPU() (func(*cpu.Launch) error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	key := p.Order
	ks, P, tile := key.Size(), key.Passes(), p.Tile()
	return func(l *cpu.Launch) error {
		n, grid := int(l.Uint64(4)), int(l.Grid[0])
		if n <= 0 || grid != (n+tile-1)/tile || l.Block[0] != SortBlock || l.Grid[1] != 1 || l.Grid[2] != 1 {
			return launchErr("fused sort of %d keys: grid %v, block %v (tile %d)", n, l.Grid, l.Block, tile)
		}
		wb, err := sortMem(l, 3, FusedWorkBytes(P, grid))
		if err != nil {
			return err
		}
		zo := FusedZeroOffset(P, grid)
		if !checkZero(wb[zo : zo+FusedZeroBytes(P)]) {
			return launchErr("fused sort of %d keys: work not zeroed", n)
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
		totals := cpu.Slice[uint32](wb[zo:])[:P*RadixDigits]
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
		// The barrier's count as the kernel leaves it: one arrival a block a barrier.
		storeRaw(wb[zo+P*RadixDigits*4:], 4, 0, uint64((2*m-1)*grid))
		return nil
	}, nil
}
