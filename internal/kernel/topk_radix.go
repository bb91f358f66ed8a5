package kernel

import (
	"fmt"
	"slices"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// TopK of 4-byte keys by an 11-bit radix select with candidate buffers (TopK's
// Tuning.TopKVariant 3), after RAFT's AIR top-k (Zhang et al., "Parallel Top-K
// Algorithms on GPU: A Comprehensive Study and New Methods", SC 2023): three passes
// of TopKRadix, one launch each, without a round trip to the host.
//
// The ordered key o (SortKey.Ordered: TopK's largest keys are the smallest of the
// descending order) has three digits: bits 31-21 (pass 0), 20-10 (pass 1) and 9-0
// (pass 2). The k smallest of a row are its k smallest composites o<<32 | index (ties
// in index order: a stable sort's first k).
//
//   - Pass 0 counts the top digit of every key (shared-memory histograms of 2048 bins,
//     TopKRadixCopies copies by lane, flushed with one atomic add per nonzero bin).
//   - Pass 1 reads the keys again: a key whose top digit is below the selected one b1
//     is among the k (its composite goes to sure, at most k-1 of them); a key of digit
//     b1 is counted by its second digit and its composite appended to buf1 (up to cap1
//     a row; the count goes on past it).
//   - Pass 2 reads buf1 (or, when it overflowed, the keys again): keys of prefix b1 and
//     a second digit below b2 go to sure, keys of prefix b1 b2 are counted by their
//     last digit and appended to buf2 (up to cap2).
//
// Each pass's last block (a ticket after a fence, as SelectHist.Fused) picks the digit
// whose bucket holds the k-th smallest key and leaves the histogram and ticket zero.
// After pass 2 the state holds the k-th smallest key T and rem, the keys equal to T
// among the k (SelectHist's state), and the last block finishes the row: when buf2
// holds the whole bucket (its count is at most cap2), it finds the rem-th smallest
// index among the keys equal to T in buf2 (a block radix select of four 8-bit digits;
// only when more keys equal T than rem), gathers the k composites (sure's, buf2's below
// T and the ties up to that index) into shared memory, orders them by a rank sort and
// writes the keys (read back from the input at their index: NaN payloads and the sign
// of zero come out as they went in) and the int64 indices. Otherwise it sets the
// fallback flag, and TopKCount, TopKGather and TopKRankSort with Guard (launched after
// pass 2 in every case, returning at once when the flag is clear) finish all rows from
// the state. The scratch (histograms, tickets, counts) is zero at the launch of pass 0
// and zero again after pass 2.
//
// Kernel parameters, the same for the three passes:
//
//	keys     u64  [rows][rowLen] keys (Order.Type, 4 bytes; 16-byte aligned rows with Vector)
//	scratch  u64  u32 [rows][TopKRadixScratchWords]: 2048 counts, ticket, buf1's count,
//	              buf2's count, sure's count; zero at pass 0's launch, left zero by pass 2
//	state    u64  u64 [rows][2] (prefix, rem), then the u32 fallback flag (TopKRadixStateBytes)
//	buf1     u64  u64 [rows][cap1] composites
//	buf2     u64  u64 [rows][cap2] composites
//	sure     u64  u64 [rows][k] composites
//	outKeys  u64  [rows][k] keys
//	outIdx   u64  [rows][k] int64 indices
//	rowLen   u64
//	chunk    u64  keys per block (a multiple of TopKRadixTile)
//	chunks   u64  blocks per row: ceil(rowLen / chunk)
//	k        u64  1 to min(rowLen, TopKRankMax)
//	cap1     u64  even
//	cap2     u64  even
//
// The grid has rows*chunks blocks of SortBlock threads for every pass (pass 2 spreads
// buf1's entries of a row over the row's blocks).
type TopKRadix struct {
	Order  SortKey
	Pass   int
	Vector bool
}

const (
	// TopKRadixBins is the bins of a TopKRadix histogram (11 bits).
	TopKRadixBins = 2048
	// TopKRadixCopies is the copies of pass 0's shared histogram (by lane).
	TopKRadixCopies = 4
	// topkRadixItems is the keys a thread reads in an iteration (two 16-byte loads
	// with Vector), loaded an iteration ahead.
	topkRadixItems = 8
	// TopKRadixBlocksPerSM is the blocks of a pass a multiprocessor holds: the
	// kernels cap their registers at 80 for it.
	TopKRadixBlocksPerSM = 3
	// TopKRadixTile is the keys a block reads in an iteration.
	TopKRadixTile = topkRadixItems * SortBlock
	// TopKRadixScratchWords is the u32 words of a row's scratch: the counts, the
	// ticket, buf1's, buf2's and sure's counts.
	TopKRadixScratchWords = TopKRadixBins + 4
)

// TopKRadixStateBytes returns the bytes of the state of rows rows.
func TopKRadixStateBytes(rows int) int { return rows*16 + 16 }

// topkRadixShift returns the lowest bit and the width of pass p's digit.
func topkRadixShift(p int) (shift, width uint) {
	switch p {
	case 0:
		return 21, 11
	case 1:
		return 10, 11
	}
	return 0, 10
}

// Key identifies the kernel.
func (r *TopKRadix) Key() string {
	return fmt.Sprintf("topk.radix|%s|p%d|v%v", r.Order.key(), r.Pass, r.Vector)
}

// Validate checks the spec.
func (r *TopKRadix) Validate() error {
	if err := r.Order.Validate(); err != nil {
		return err
	}
	if r.Order.Size() != 4 {
		return fmt.Errorf("kernel: top-k radix select of %d-byte keys: %w", r.Order.Size(), backend.ErrNotSupported)
	}
	if r.Pass < 0 || r.Pass > 2 {
		return fmt.Errorf("kernel: top-k radix pass %d", r.Pass)
	}
	return nil
}

// CPU returns the kernel for the CPU backend: each row at once, buf1, buf2 and sure
// filled in index order (the GPU's order is any).
func (r *TopKRadix) CPU() (func(*cpu.Launch) error, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	key, pass := r.Order, r.Pass
	return func(l *cpu.Launch) error {
		rowLen, chunk, chunks := int(l.Uint64(8)), int(l.Uint64(9)), int(l.Uint64(10))
		k, cap1, cap2 := int(l.Uint64(11)), int(l.Uint64(12)), int(l.Uint64(13))
		if rowLen <= 0 || chunk <= 0 || chunk%TopKRadixTile != 0 || chunks != (rowLen+chunk-1)/chunk ||
			int(l.Grid[0])%chunks != 0 || l.Block[0] != SortBlock || k < 1 || k > rowLen || k > TopKRankMax ||
			cap1 < 0 || cap2 < 0 || cap1%2 != 0 || cap2%2 != 0 {
			return launchErr("top-k radix: row %d, chunk %d (%d), k %d, caps %d %d, grid %d", rowLen, chunk, chunks, k, cap1, cap2, l.Grid[0])
		}
		rows := int(l.Grid[0]) / chunks
		if r.Vector && (!aligned16(l, 0) || (rows > 1 && rowLen%4 != 0)) {
			return launchErr("top-k radix: vector loads of unaligned keys")
		}
		var bufs [8][]byte
		for i, n := range []int{rows * rowLen * 4, rows * TopKRadixScratchWords * 4, TopKRadixStateBytes(rows),
			rows * cap1 * 8, rows * cap2 * 8, rows * k * 8, rows * k * 4, rows * k * 8} {
			if pass != 2 && i >= 6 {
				break // (the outputs: pass 2's)
			}
			b, err := sortMem(l, i, n)
			if err != nil {
				return err
			}
			bufs[i] = b
		}
		scr, state := cpu.Slice[uint32](bufs[1]), cpu.Slice[uint64](bufs[2][:rows*16])
		if pass == 0 && !checkZero(bufs[1]) {
			return launchErr("top-k radix scratch not zeroed")
		}
		b1, b2, sure := cpu.Slice[uint64](bufs[3]), cpu.Slice[uint64](bufs[4]), cpu.Slice[uint64](bufs[5])
		flag := bufs[2][rows*16:]
		shift, width := topkRadixShift(pass)
		bad := false
		for row := 0; row < rows; row++ {
			sc := scr[row*TopKRadixScratchWords:][:TopKRadixScratchWords]
			hist := sc[:TopKRadixBins]
			c1, c2, ns := &sc[TopKRadixBins+1], &sc[TopKRadixBins+2], &sc[TopKRadixBins+3]
			prefix, rem := uint64(0), uint64(k)
			if pass > 0 {
				prefix, rem = state[2*row], state[2*row+1]
			}
			keyOf := func(i int) uint64 { return key.Ordered(loadRaw(bufs[0], 4, row*rowLen+i)) }
			visit := func(o, idx uint64) {
				comp := o<<32 | idx
				switch pass {
				case 0:
					hist[o>>21]++
				case 1:
					if o < prefix {
						if int(*ns) >= k {
							bad = true
							return
						}
						sure[row*k+int(*ns)] = comp
						*ns++
					} else if o>>21 == prefix>>21 {
						hist[o>>10&0x7ff]++
						if int(*c1) < cap1 {
							b1[row*cap1+int(*c1)] = comp
						}
						*c1++
					}
				case 2:
					if o < prefix && o >= prefix&^(1<<21-1) {
						if int(*ns) >= k {
							bad = true
							return
						}
						sure[row*k+int(*ns)] = comp
						*ns++
					} else if o>>10 == prefix>>10 {
						hist[o&0x3ff]++
						if int(*c2) < cap2 {
							b2[row*cap2+int(*c2)] = comp
						}
						*c2++
					}
				}
			}
			if pass == 2 && int(*c1) <= cap1 {
				for _, e := range b1[row*cap1:][:*c1] {
					visit(e>>32, e&0xffffffff)
				}
			} else {
				for i := 0; i < rowLen; i++ {
					visit(keyOf(i), uint64(i))
				}
			}
			// The select step.
			var run, e uint64
			for d := range 1 << width {
				c := uint64(hist[d])
				if run < rem && rem <= run+c {
					prefix, rem, e = prefix|uint64(d)<<shift, rem-run, c
				}
				run += c
			}
			clear(hist)
			state[2*row], state[2*row+1] = prefix, rem
			if pass == 0 {
				clear(flag)
			}
			if pass != 2 {
				continue
			}
			if int(*c2) > cap2 {
				flag[0] = 1
			} else {
				// The ties taken: the rem smallest indices of the keys equal to T.
				T := prefix
				var ties []uint64
				for _, x := range b2[row*cap2:][:*c2] {
					if x>>32 == T {
						ties = append(ties, x&0xffffffff)
					}
				}
				lim := uint64(1<<32 - 1)
				if uint64(len(ties)) != e || e < rem {
					bad = true
				} else if e > rem {
					slices.Sort(ties)
					lim = ties[rem-1]
				}
				cand := slices.Clone(sure[row*k:][:*ns])
				for _, x := range b2[row*cap2:][:*c2] {
					if o := x >> 32; o < T || o == T && x&0xffffffff <= lim {
						cand = append(cand, x)
					}
				}
				if len(cand) != k {
					bad = true
				} else {
					slices.Sort(cand)
					outI := cpu.Slice[int64](bufs[7])
					for j, x := range cand {
						idx := int(x & 0xffffffff)
						copy(bufs[6][(row*k+j)*4:][:4], bufs[0][(row*rowLen+idx)*4:][:4])
						outI[row*k+j] = int64(idx)
					}
				}
			}
			*c1, *c2, *ns = 0, 0, 0
		}
		if bad {
			return fmt.Errorf("kernel: illegal address: top-k radix past its buffers: %w", backend.ErrLaunchFailed)
		}
		return nil
	}, nil
}
