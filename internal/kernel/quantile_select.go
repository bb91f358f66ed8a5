package kernel

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// Quantiles of long rows by selection instead of a sort. The radix select
// (SelectHist) finds the ordered key at the lower position lo that QuantileGather
// would read of the sorted row; QuantileFlags, one read of the rows, counts the keys
// up to it and finds the least above it (the upper position lo+1 follows: one pass
// in place of a second select) and each float row's NaNs and zeros of each sign (and
// each chunk's zeros, where the finish looks for a zero's sign); QuantileSelect
// derives the upper position's key, decodes the keys and applies QuantileGather's
// arithmetic. Leaving NaNs out (QuantileGather.SkipNaN), the positions depend on each
// row's NaNs: QuantileFlags counts them first, QuantileK writes each row's k for the
// select (SelectHist.KState), and QuantileFlags counts around lo's key after it. The
// results are the sort's, bit for bit.

// QuantileFlags reads each row once and counts what the selected ordered keys don't
// tell. With Counts (float keys), the row's NaNs, -0s and +0s by their raw bits
// (every NaN and both zeros are one ordered key each), and each chunk's zeros of
// either sign (QuantileSelect's way to the r-th zero of a row). With Next, against
// the row's selected key T (the state's first word: SelectHist's result for a
// position lo), the keys whose ordered key (SortKey, SelectHist's) is at most T, and
// the least ordered key above T, as the largest of its complement within the key's
// width (mask ^ o; zero if no key is above T): what QuantileSelect derives the state
// of position lo+1 from (quantileNext), one read of the row in place of a second
// select.
//
// Kernel parameters, in order:
//
//	keys    u64  [rows][n] of Type, contiguous
//	flags   u64  u64 [rows][QuantileFlagsWords]: NaNs, -0s, +0s (Counts), keys <= T,
//	             mask ^ (the least key above T) (Next); the words a mode writes are zero
//	             at the launch (Counts and Next may be separate launches on one buffer)
//	state   u64  u64 [rows][2]: T first (Next; unused otherwise)
//	n       u64  (> 0)
//	chunk   u64  keys per block (> 0)
//	chunks  u64  ceil(n / chunk)
//	zeros   u64  u32 [rows][chunks]: each chunk's zeros of either sign (Counts: every
//	             word written, a plain store; unused otherwise), which QuantileSelect
//	             searches for the r-th zero of a row of mixed zeros
//
// The grid has rows*chunks blocks of SortBlock threads: block b counts chunk
// b%chunks of row b/chunks (Items() keys a thread in flight, coalesced),
// sums its threads' counts (warp shuffles, then a shared atomic per warp) and adds
// the block's nonzero ones to the row's (a global atomic add, or max for the
// complement); with Counts it stores its chunk's -0s plus +0s into zeros.
type QuantileFlags struct {
	Type   dtype.DType
	Counts bool
	Next   bool
}

// QuantileFlagsWords is the u64 words a row's flags take.
const QuantileFlagsWords = 5

// Items returns the keys a thread loads at once: 8, or 4 of 8-byte keys (fewer
// registers); a chunk's natural multiple is SortBlock*Items().
func (q *QuantileFlags) Items() int {
	if q.Type.Size() == 8 {
		return 4
	}
	return 8
}

// Key identifies the kernel.
func (q *QuantileFlags) Key() string {
	return fmt.Sprintf("quantile.flags|%v|c%v|n%v", q.Type, q.Counts, q.Next)
}

// Validate checks the spec.
func (q *QuantileFlags) Validate() error {
	if !q.Type.Valid() || q.Counts && !q.Type.IsFloat() || !q.Counts && !q.Next {
		return fmt.Errorf("kernel: quantile flags of %v (counts %v, next %v): %w", q.Type, q.Counts, q.Next, backend.ErrNotSupported)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (q *QuantileFlags) CPU() (func(*cpu.Launch) error, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	ks := q.Type.Size()
	sign := uint64(1) << (8*ks - 1)
	mask := ^uint64(0) >> (64 - 8*ks)
	inf := floatInf(q.Type)
	ordered := SortKey{Type: q.Type}.orderedFunc()
	return func(l *cpu.Launch) error {
		n, chunk, chunks := int(l.Uint64(3)), int(l.Uint64(4)), int(l.Uint64(5))
		if n <= 0 || chunk <= 0 || chunks != (n+chunk-1)/chunk || int(l.Grid[0])%chunks != 0 || l.Block[0] != SortBlock {
			return launchErr("quantile flags: rows of %d, chunk %d (%d), grid %d, block %d", n, chunk, chunks, l.Grid[0], l.Block[0])
		}
		rows := int(l.Grid[0]) / chunks
		keys, err := sortMem(l, 0, rows*n*ks)
		if err != nil {
			return err
		}
		fb, err := sortMem(l, 1, rows*QuantileFlagsWords*8)
		if err != nil {
			return err
		}
		flags := cpu.Slice[uint64](fb)
		for r := range rows {
			w := flags[r*QuantileFlagsWords:][:QuantileFlagsWords]
			if q.Counts && (w[0]|w[1]|w[2]) != 0 || q.Next && (w[3]|w[4]) != 0 {
				return launchErr("quantile flags not zeroed")
			}
		}
		var zeros []uint32
		if q.Counts {
			zb, err := sortMem(l, 6, rows*chunks*4)
			if err != nil {
				return err
			}
			zeros = cpu.Slice[uint32](zb)
			clear(zeros) // (the blocks' counts added below: each word written)
		}
		var state []uint64
		if q.Next {
			sb, err := sortMem(l, 2, rows*16)
			if err != nil {
				return err
			}
			state = cpu.Slice[uint64](sb)
		}
		parts := (n + cpuSelectPart - 1) / cpuSelectPart
		l.Parallel(rows*parts, 1, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				r, p := b/parts, b%parts
				i0 := r*n + p*cpuSelectPart
				i1 := min(i0+cpuSelectPart, (r+1)*n)
				var T uint64
				if q.Next {
					T = state[2*r]
				}
				var c [QuantileFlagsWords]uint64 // NaNs, -0s, +0s, keys <= T, the complement's max
				// The part's keys, a segment a chunk: its zeros are the chunk's.
				for s0 := i0; s0 < i1; {
					ci := (s0 - r*n) / chunk
					s1 := min(i1, r*n+(ci+1)*chunk)
					z := c[1] + c[2]
					for i := s0; i < s1; i++ {
						raw := loadRaw(keys, ks, i)
						if q.Counts {
							switch abs := raw &^ sign; {
							case abs > inf:
								c[0]++
							case abs == 0 && raw != 0:
								c[1]++
							case abs == 0:
								c[2]++
							}
						}
						if q.Next {
							if o := ordered(raw); o <= T {
								c[3]++
							} else {
								c[4] = max(c[4], mask^o)
							}
						}
					}
					if z = c[1] + c[2] - z; z != 0 {
						atomic.AddUint32(&zeros[r*chunks+ci], uint32(z))
					}
					s0 = s1
				}
				w := flags[r*QuantileFlagsWords:][:QuantileFlagsWords]
				for j, x := range c[:4] {
					if x != 0 {
						atomic.AddUint64(&w[j], x)
					}
				}
				for x := c[4]; ; {
					old := atomic.LoadUint64(&w[4])
					if old >= x || atomic.CompareAndSwapUint64(&w[4], old, x) {
						break
					}
				}
			}
		})
		return nil
	}, nil
}

// quantileNext returns the select state of position hi = lo+1 (k+1 = hi+1, 1-based)
// from that of lo, (T, rank), and QuantileFlags' Next counts of the row: le keys at
// most T and comp, mask ^ the least key above T. T's ties go on while le > hi; else
// the next key is the least above T, its first.
func quantileNext(T, rank, le, comp, mask uint64, hi int) (uint64, uint64) {
	if le >= uint64(hi)+1 {
		return T, rank + 1
	}
	return comp ^ mask, 1
}

// QuantileSelect computes each row's median or quantile from the radix select's
// result, as QuantileGather does from the sorted row: the same positions (lo and hi
// of quantilePos; the middle ones of a median), the same arithmetic (quantileLerp,
// quantileMid) in float64, the same NaN rule (a row with a NaN gives the canonical
// NaN, quantileNaN) and one conversion to Out. With SkipNaN (float In: NanMedian,
// NanQuantile) the row's NaNs are left out, as QuantileGather.SkipNaN does: the
// positions are those of the row's m = n - NaNs valid elements (the m smallest
// ordered keys: NaNs order last), and a row of NaNs alone gives the canonical NaN.
//
// The select found position lo (state: SelectHist's ordered key T of the k-th
// smallest key, k = lo+1, and its tie rank r, 1-based, among the keys equal to T in
// index order). Position hi is lo, or lo+1, whose state QuantileFlags' Next counts
// give (quantileNext): (T, r+1) when more than hi keys are at most T, else the least
// key above T with rank 1. Each position's element is SortKey.Unordered of its key,
// but for the zero key of a float row, which stands for -0 and +0 alike: the sorted
// row's element there is the r-th zero of the row in index order (the sort is stable),
// whose sign the flags tell when the row's zeros all have one sign. When they are
// mixed, the block finds the chunk of QuantileFlags that holds the r-th zero from the
// chunks' zero counts (a block-wide count of 256 chunks a step) and scans that chunk
// alone in index order (a block-wide count of 256 keys a step) for it: one read of a
// chunk, after chunks/256 steps (a float row with zeros of both signs whose selected
// position lands on a zero; a second chunk where positions lo and hi are zeros of
// different chunks).
//
// Kernel parameters, in order:
//
//	keys    u64  [rows][n] of In, contiguous (read only by the scan for a zero)
//	state   u64  u64 [rows][2]: the select of position lo (a median's (m-1)/2, m = n
//	             or, with SkipNaN, the row's valid elements; a row of NaNs alone
//	             is not read)
//	flags   u64  QuantileFlags' u64 [rows][QuantileFlagsWords]: with float In its
//	             Counts; where hi is lo+1 (a median of an even m, a quantile below the
//	             row's end) its Next counts; unused otherwise
//	out     u64  [rows] of Out
//	qs      u64  float64 [1]: q (unused with Median)
//	rows    u64
//	n       u64  (> 0)
//	zeros   u64  QuantileFlags' u32 [rows][chunks] of its Counts: each chunk's zeros
//	             (float In; unused otherwise)
//	chunk   u64  QuantileFlags' keys per block (> 0; float In, unused otherwise)
//	chunks  u64  ceil(n / chunk) (float In, unused otherwise)
//
// The grid has rows blocks of SortBlock threads.
type QuantileSelect struct {
	In, Out dtype.DType
	Median  bool
	SkipNaN bool
}

// Key identifies the kernel.
func (q *QuantileSelect) Key() string {
	return fmt.Sprintf("quantile.select|%v|%v|m%v|s%v", q.In, q.Out, q.Median, q.SkipNaN)
}

// Validate checks the spec.
func (q *QuantileSelect) Validate() error {
	if !q.In.Valid() || !q.Out.IsFloat() || q.SkipNaN && !q.In.IsFloat() {
		return fmt.Errorf("kernel: quantile of %v into %v (skip NaN %v): %w", q.In, q.Out, q.SkipNaN, backend.ErrNotSupported)
	}
	return nil
}

// QuantilePositions returns the 0-based positions of the ascending (stable) order of
// n elements that the median (median) or quantile q reads: lo and hi, equal when one
// element decides (QuantileGather's positions); hi is lo or lo+1.
func QuantilePositions(median bool, q float64, n int) (lo, hi int) {
	if median {
		return (n - 1) / 2, n / 2
	}
	lo, hi, _ = quantilePos(q, n)
	return lo, hi
}

// CPU returns the kernel for the CPU backend.
func (q *QuantileSelect) CPU() (func(*cpu.Launch) error, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	key := SortKey{Type: q.In}
	is, os := q.In.Size(), q.Out.Size()
	float := q.In.IsFloat()
	zero := uint64(1) << (8*is - 1) // the zero's ordered key (and the sign bit)
	mask := ^uint64(0) >> (64 - 8*is)
	return func(l *cpu.Launch) error {
		rows, n := int(l.Uint64(5)), int(l.Uint64(6))
		if n <= 0 || int(l.Grid[0]) != rows || l.Block[0] != SortBlock {
			return launchErr("quantile select: %d rows of %d, grid %d", rows, n, l.Grid[0])
		}
		keys, err := sortMem(l, 0, rows*n*is)
		if err != nil {
			return err
		}
		sb, err := sortMem(l, 1, rows*16)
		if err != nil {
			return err
		}
		state := cpu.Slice[uint64](sb)
		var qv float64
		if !q.Median {
			qb, err := sortMem(l, 4, 8)
			if err != nil {
				return err
			}
			qv = cpu.Slice[float64](qb)[0]
		}
		// The rows' valid elements, positions and whether hi is lo+1 (then the flags
		// hold the Next counts).
		ms := make([]int, rows)
		next := false
		for r := range ms {
			ms[r] = n
		}
		var flags []uint64
		needFlags := float
		if !q.SkipNaN {
			lo, hi := QuantilePositions(q.Median, qv, n)
			needFlags = float || hi != lo
		}
		if needFlags {
			fb, err := sortMem(l, 2, rows*QuantileFlagsWords*8)
			if err != nil {
				return err
			}
			flags = cpu.Slice[uint64](fb)
		}
		// Float rows: each chunk's zeros, which add up to the row's.
		var zeros []uint32
		chunk, chunks := int(l.Uint64(8)), int(l.Uint64(9))
		if float {
			if chunk <= 0 || chunks != (n+chunk-1)/chunk {
				return launchErr("quantile select: rows of %d, chunk %d (%d)", n, chunk, chunks)
			}
			zb, err := sortMem(l, 7, rows*chunks*4)
			if err != nil {
				return err
			}
			zeros = cpu.Slice[uint32](zb)
			for r := range rows {
				var z uint64
				for _, c := range zeros[r*chunks:][:chunks] {
					z += uint64(c)
				}
				if w := flags[r*QuantileFlagsWords:]; z != w[1]+w[2] {
					return launchErr("quantile select: row %d: chunks of %d zeros, flags of %d", r, z, w[1]+w[2])
				}
			}
		}
		for r := range ms {
			if q.SkipNaN {
				ms[r] = n - int(flags[r*QuantileFlagsWords])
			}
			if m := ms[r]; m > 0 {
				lo, hi := QuantilePositions(q.Median, qv, m)
				next = next || hi != lo
				if rk := state[2*r+1]; rk == 0 || rk > uint64(m) {
					return fmt.Errorf("kernel: illegal address: quantile select: tie rank %d of %d: %w", rk, m, backend.ErrLaunchFailed)
				}
			}
		}
		if next && flags == nil {
			return launchErr("quantile select: no flags for the upper neighbour")
		}
		out, err := sortMem(l, 3, rows*os)
		if err != nil {
			return err
		}
		l.Parallel(rows, 1, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				m := ms[r]
				if m == 0 { // (SkipNaN: NaNs alone)
					storeRaw(out, os, r, quantileNaN(q.Out))
					continue
				}
				pl, ph := QuantilePositions(q.Median, qv, m)
				var st [2][2]uint64
				st[0] = [2]uint64{state[2*r], state[2*r+1]}
				st[1] = st[0]
				if ph != pl {
					w := flags[r*QuantileFlagsWords:]
					st[1][0], st[1][1] = quantileNext(st[0][0], st[0][1], w[3], w[4], mask, ph)
				}
				var v [2]float64
				for j := range v {
					T, rank := st[j][0], st[j][1]
					raw := key.Unordered(T)
					if float && T == zero {
						switch neg, pos := flags[r*QuantileFlagsWords+1], flags[r*QuantileFlagsWords+2]; {
						case pos == 0:
							raw = zero // all -0
						case neg != 0:
							// Mixed: the rank-th zero of the row in index order, in the
							// chunk that holds it.
							ci, c := 0, uint64(0)
							for ; ci < chunks && c+uint64(zeros[r*chunks+ci]) < rank; ci++ {
								c += uint64(zeros[r*chunks+ci])
							}
							for i := r*n + ci*chunk; i < r*n+min(n, (ci+1)*chunk); i++ {
								if x := loadRaw(keys, is, i); x&^zero == 0 {
									if c++; c == rank {
										raw = x
										break
									}
								}
							}
						}
					}
					v[j] = expr.ScalarFromBits(q.In, raw).Float64()
				}
				var x float64
				switch {
				case float && !q.SkipNaN && flags[r*QuantileFlagsWords] != 0:
					x = math.NaN()
				case q.Median && m%2 == 1:
					x = v[0]
				case q.Median:
					x = quantileMid(v[0], v[1])
				default:
					_, _, t := quantilePos(qv, m)
					x = quantileLerp(v[0], v[1], t)
				}
				bits := expr.ScalarOf(x).Convert(q.Out).Bits()
				if math.IsNaN(x) {
					bits = quantileNaN(q.Out)
				}
				storeRaw(out, os, r, bits)
			}
		})
		return nil
	}, nil
}

// QuantileK writes each row's k for the select of a NanMedian or NanQuantile (the
// position lo+1 of QuantilePositions for the row's m = n - NaNs valid elements, 0
// for a row of NaNs alone, which SelectHist.KState then leaves alone) as a state for
// SelectHist.KState: (0, k).
//
// Kernel parameters, in order:
//
//	flags   u64  QuantileFlags' u64 [rows][QuantileFlagsWords] (Counts: the NaNs first)
//	state   u64  u64 [rows][2]: written
//	qs      u64  float64 [1]: q (unused with Median)
//	rows    u64
//	n       u64  (> 0)
//
// Any grid of SortBlock-thread blocks (a grid-stride loop over the rows).
type QuantileK struct {
	Median bool
}

// Key identifies the kernel.
func (q *QuantileK) Key() string { return fmt.Sprintf("quantile.k|m%v", q.Median) }

// CPU returns the kernel for the CPU backend.
func (q *QuantileK) CPU() (func(*cpu.Launch) error, error) {
	return func(l *cpu.Launch) error {
		rows, n := int(l.Uint64(3)), int(l.Uint64(4))
		if n <= 0 || rows < 0 || l.Block[0] != SortBlock {
			return launchErr("quantile k: %d rows of %d, block %d", rows, n, l.Block[0])
		}
		fb, err := sortMem(l, 0, rows*QuantileFlagsWords*8)
		if err != nil {
			return err
		}
		sb, err := sortMem(l, 1, rows*16)
		if err != nil {
			return err
		}
		var qv float64
		if !q.Median {
			qb, err := sortMem(l, 2, 8)
			if err != nil {
				return err
			}
			qv = cpu.Slice[float64](qb)[0]
		}
		flags, state := cpu.Slice[uint64](fb), cpu.Slice[uint64](sb)
		for r := range rows {
			nan := flags[r*QuantileFlagsWords]
			if nan > uint64(n) {
				return fmt.Errorf("kernel: illegal address: quantile k: %d NaNs of %d: %w", nan, n, backend.ErrLaunchFailed)
			}
			var k uint64
			if m := n - int(nan); m > 0 {
				lo, _ := QuantilePositions(q.Median, qv, m)
				k = uint64(lo) + 1
			}
			state[2*r], state[2*r+1] = 0, k
		}
		return nil
	}, nil
}
