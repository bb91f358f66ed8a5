package kernel

import (
	"fmt"
	"strconv"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// Sorting.
//
// Keys. Every element type sorts as unsigned integers of its width (SortKey.Ordered):
// unsigned integers and bools as they are, signed integers with the sign bit flipped,
// floats with the sign bit set on non-negative values and all bits flipped on negative
// ones, so that unsigned order is numeric order. Two exceptions give NumPy's order:
// every NaN maps to the largest key (all ones: NaNs sort last, equal to each other)
// and -0 maps to +0's key (equal). A descending sort flips all bits of the key. The
// kernels move the elements' own bits and derive the key's digits from them in every
// pass, so NaN payloads and the sign of zero come out as they went in, in a stable
// order (equal keys keep their input order).
//
// One-dimensional arrays and long rows sort by a least-significant-digit radix sort,
// one pass per 8-bit digit, each pass a single sweep with decoupled look-back (Adinets
// and Merrill, "Onesweep: A Faster Least Significant Digit Radix Sort for GPUs", 2022):
//
//  1. RadixHist counts every digit of every pass over the input once (shared-memory
//     histograms, flushed to global memory per segment).
//  2. RadixPlan turns the counts into each digit's first output position per segment
//     and pass, and marks the passes whose digit is not the same for all keys of some
//     row (the others are skipped: a pass over one digit value changes nothing).
//  3. RadixPass, once per pass: each block takes a tile, ranks its keys by the pass's
//     digit (warp-level multi-split: for each key, the lanes holding the same digit, by
//     eight ballots, and a per-warp running count), publishes the tile's digit counts,
//     looks back over the preceding tiles' counts for its 256 offsets, sorts the tile
//     by digit in shared memory and writes each key (and value) to its place.
//
// The passes run on the device without a round trip to the host: RadixPass reads the
// plan, returns at once when its pass is skipped, and picks its source and destination
// buffers from the number of active passes before it and in all, so that the last
// active pass writes the result. Rows short enough for one block (RadixBlockSort) sort
// entirely in shared memory, many rows per block.
//
// A single row of keys alone whose tiles all fit the device at once sorts in one
// cooperative launch instead (RadixFused): the same counting, ranking and scatter,
// with grid-wide barriers between the passes' steps where the passes would launch and
// look back.
//
// A row is cut into segments of at most 2^28 keys (a multiple of the tile), each with
// its own histogram and base offsets, so that the 30-bit counts of the look-back never
// overflow; a launch covers whole segments, at most SortSegmentMax keys.

// SortBlock is the number of threads of every sort block: one per digit value.
const SortBlock = 256

// RadixDigits is the number of values of a digit (8 bits).
const RadixDigits = 256

// SortMaxPasses is the most digit passes of a key (8 bytes).
const SortMaxPasses = 8

// SortPlanBytes is the size of a sort plan: one 32-bit flag per pass (padded).
const SortPlanBytes = 64

// SortCounterBytes returns the bytes of the passes' tile counters that follow a sort's
// plan (RadixPass's plan parameter): one u32 per pass and launch group, zero at the
// sort's start, padded to 16 bytes.
func SortCounterBytes(passes, groups int) int { return (passes*groups*4 + 15) &^ 15 }

// Look-back status words: the flag in the top two bits, a 30-bit count below.
const (
	radixFlagAgg  = 1 << 30
	radixFlagIncl = 2 << 30
	radixValMask  = 1<<30 - 1
)

// SortSegmentMax is the most keys of a segment: its look-back counts take 30 bits.
const SortSegmentMax = 1 << 28

// SortKey says how elements of Type order.
type SortKey struct {
	Type       dtype.DType
	Descending bool
}

// Validate checks the key type.
func (k SortKey) Validate() error {
	if !k.Type.Valid() {
		return fmt.Errorf("kernel: sort of %v elements: %w", k.Type, backend.ErrNotSupported)
	}
	return nil
}

// Size returns the bytes of a key.
func (k SortKey) Size() int { return k.Type.Size() }

// Passes returns the 8-bit digits of a key.
func (k SortKey) Passes() int { return k.Type.Size() }

func (k SortKey) key() string { return string(k.appendKey(nil)) }

// appendKey appends the order's part of a kernel key to b.
func (k SortKey) appendKey(b []byte) []byte {
	b = append(b, k.Type.String()...)
	if k.Descending {
		b = append(b, "/desc"...)
	}
	return b
}

// floatInf returns the bits of +Inf for a float type (0 for the others).
func floatInf(t dtype.DType) uint64 {
	switch t {
	case dtype.Float16:
		return 0x7c00
	case dtype.BFloat16:
		return 0x7f80
	case dtype.Float32:
		return 0x7f800000
	case dtype.Float64:
		return 0x7ff0000000000000
	}
	return 0
}

// Ordered returns the order-preserving unsigned key of an element's bits raw (the low
// Size() bytes): NaNs give the largest key, -0 and +0 the same; Descending flips it.
func (k SortKey) Ordered(raw uint64) uint64 {
	bits := 8 * k.Size()
	mask := ^uint64(0) >> (64 - bits)
	sign := uint64(1) << (bits - 1)
	raw &= mask
	var o uint64
	switch t := k.Type; {
	case t.IsSigned():
		o = raw ^ sign
	case t.IsFloat():
		abs := raw &^ sign
		switch {
		case abs > floatInf(t):
			o = mask
		case abs == 0:
			o = sign
		case raw&sign != 0:
			o = ^raw & mask
		default:
			o = raw | sign
		}
	default:
		o = raw
	}
	if k.Descending {
		o = ^o & mask
	}
	return o
}

// Unordered is Ordered's inverse: the element bits of the ordered key o. The keys
// that Ordered merges give one element: +0 for the zero key (-0 and +0's) and the
// canonical NaN (all bits but the sign's) for the NaN key.
func (k SortKey) Unordered(o uint64) uint64 {
	bits := 8 * k.Size()
	mask := ^uint64(0) >> (64 - bits)
	sign := uint64(1) << (bits - 1)
	o &= mask
	if k.Descending {
		o = ^o & mask
	}
	switch t := k.Type; {
	case t.IsSigned():
		return o ^ sign
	case t.IsFloat():
		if o < sign {
			return ^o & mask
		}
		return o &^ sign
	}
	return o
}

// sortItemsValid checks an Items option.
func sortItemsValid(items int) error {
	if items < 1 || items > 32 {
		return fmt.Errorf("kernel: sort items %d", items)
	}
	return nil
}

// SortVal is what a sort carries along with its keys.
type SortVal uint8

const (
	// ValNone: keys only.
	ValNone SortVal = iota
	// ValIndex: each key's index in its row (argsort), written as int64.
	ValIndex
	// ValPayload: a payload element of ValSize bytes per key (sort by key).
	ValPayload
)

func (v SortVal) String() string {
	switch v {
	case ValNone:
		return "none"
	case ValIndex:
		return "index"
	case ValPayload:
		return "payload"
	}
	return fmt.Sprintf("SortVal(%d)", uint8(v))
}

func sortValValid(v SortVal, size int) error {
	switch v {
	case ValNone:
		return nil
	case ValIndex:
		if size != 4 && size != 8 {
			return fmt.Errorf("kernel: sort index of %d bytes", size)
		}
		return nil
	case ValPayload:
		switch size {
		case 1, 2, 4, 8:
			return nil
		}
		return fmt.Errorf("kernel: sort payload of %d bytes", size)
	}
	return fmt.Errorf("kernel: sort values %v", v)
}

// RadixHist counts the digits of every pass of the keys of rows rows of rowLen
// contiguous elements, per segment (segments of segLen keys, the last of a row
// shorter). Each block counts one chunk of chunk keys of one row (chunks never cross a
// segment: segLen is a multiple of chunk, or a row is a single segment).
//
// Kernel parameters, in order:
//
//	keys    u64  address of the keys (Order.Type, contiguous rows)
//	hist    u64  u32 counts [segments][Order.Passes()][256]; with store == 0 zero at the
//	             launch (blocks add their counts), with store == 1 written whole (each
//	             segment is one chunk)
//	rowLen  u64
//	chunk   u64  keys per block (> 0)
//	chunks  u64  chunks per row: ceil(rowLen / chunk)
//	segLen  u64  keys per segment (a multiple of chunk unless chunks == 1)
//	segs    u64  segments per row: ceil(rowLen / segLen)
//	store   u64  1: every segment is exactly one chunk (plain stores of all bins)
//
// The grid has rows*chunks blocks of SortBlock threads.
type RadixHist struct {
	Order SortKey
	Items int // keys per thread per round (unrolled loads)
	// Lean pads each copy of the shared counts by one word (the lanes of a warp
	// counting one digit in different copies hit different banks: skewed digits,
	// such as a float's exponent byte, no longer serialize on one bank), guards the
	// atomics by predicates rather than branches and addresses a round's keys from
	// one pointer with 32-bit bounds.
	Lean bool
}

// Key identifies the kernel.
func (h *RadixHist) Key() string { return string(h.AppendKey(nil)) }

// AppendKey appends Key to b (the runtime's kernel cache finds it without allocating).
func (h *RadixHist) AppendKey(b []byte) []byte {
	b = h.Order.appendKey(append(b, "sort.hist|"...))
	b = strconv.AppendInt(append(b, "|k"...), int64(h.Items), 10)
	if h.Lean {
		b = append(b, "|lean"...)
	}
	return b
}

// Validate checks the spec.
func (h *RadixHist) Validate() error {
	if err := h.Order.Validate(); err != nil {
		return err
	}
	return sortItemsValid(h.Items)
}

// CPU returns the kernel for the CPU backend.
func (h *RadixHist) CPU() (func(*cpu.Launch) error, error) {
	if err := h.Validate(); err != nil {
		return nil, err
	}
	key := h.Order
	P := key.Passes()
	return func(l *cpu.Launch) error {
		rowLen, chunk, chunks := int(l.Uint64(2)), int(l.Uint64(3)), int(l.Uint64(4))
		segLen, segs, store := int(l.Uint64(5)), int(l.Uint64(6)), l.Uint64(7)
		if rowLen <= 0 || chunk <= 0 || chunks != (rowLen+chunk-1)/chunk || segLen <= 0 || segs != (rowLen+segLen-1)/segLen ||
			(segs > 1 && segLen%chunk != 0) || l.Block[0] != SortBlock || int(l.Grid[0])%chunks != 0 ||
			(store == 1 && chunks != segs) {
			return launchErr("sort histogram: row %d, chunk %d (%d), segment %d (%d), store %d, grid %d, block %d",
				rowLen, chunk, chunks, segLen, segs, store, l.Grid[0], l.Block[0])
		}
		rows := int(l.Grid[0]) / chunks
		n := rows * rowLen
		keys, err := sortMem(l, 0, n*key.Size())
		if err != nil {
			return err
		}
		hist, err := sortMem(l, 1, rows*segs*P*RadixDigits*4)
		if err != nil {
			return err
		}
		counts := cpu.Slice[uint32](hist)
		if store != 1 && !checkZero(hist) {
			return launchErr("sort histogram not zeroed")
		}
		if store == 1 {
			clear(counts)
		}
		ordered := key.orderedFunc()
		// Spans of at most histSpan keys of a segment in parallel: each worker counts
		// its spans locally and adds the counts to their segment's atomically (the
		// same sums in any order).
		type span struct{ seg, start, end int }
		var spans []span
		for s := 0; s < rows*segs; s++ {
			r, q := s/segs, s%segs
			start, end := r*rowLen+q*segLen, r*rowLen+min(rowLen, (q+1)*segLen)
			for a := start; a < end; a += histSpan {
				spans = append(spans, span{s, a, min(a+histSpan, end)})
			}
		}
		l.Parallel(len(spans), 1, func(lo, hi int) {
			var local [SortMaxPasses * RadixDigits]uint32
			cur := -1
			flush := func() {
				if cur < 0 {
					return
				}
				c := counts[cur*P*RadixDigits : (cur+1)*P*RadixDigits]
				for j, v := range local[:P*RadixDigits] {
					if v != 0 {
						atomic.AddUint32(&c[j], v)
						local[j] = 0
					}
				}
			}
			for _, sp := range spans[lo:hi] {
				if sp.seg != cur {
					flush()
					cur = sp.seg
				}
				switch key.Size() {
				case 1:
					histCount(keys, sp.start, sp.end, ordered, P, &local)
				case 2:
					histCount(cpu.Slice[uint16](keys), sp.start, sp.end, ordered, P, &local)
				case 4:
					histCount(cpu.Slice[uint32](keys), sp.start, sp.end, ordered, P, &local)
				default:
					histCount(cpu.Slice[uint64](keys), sp.start, sp.end, ordered, P, &local)
				}
			}
			flush()
		})
		return nil
	}, nil
}

// histSpan is the most keys of one task of RadixHist's CPU kernel.
const histSpan = 1 << 16

// histCount adds the digits of every pass of keys[start:end] (ordered: their
// order-preserving bits) to c.
func histCount[E uint8 | uint16 | uint32 | uint64](keys []E, start, end int, ordered func(uint64) uint64, P int, c *[SortMaxPasses * RadixDigits]uint32) {
	for _, k := range keys[start:end] {
		o := ordered(uint64(k))
		for p := 0; p < P; p++ {
			c[p*RadixDigits+int(o>>(8*p)&0xff)]++
		}
	}
}

// sortMem returns the first n bytes of argument i, or an illegal-address error.
func sortMem(l *cpu.Launch, i, n int) ([]byte, error) {
	m := l.Mem(i)
	if len(m) < n {
		return nil, fmt.Errorf("kernel: illegal address: %d bytes past an allocation of %d (argument %d): %w", n, len(m), i, backend.ErrLaunchFailed)
	}
	return m[:n], nil
}

// loadRaw returns element i of size bytes of b, zero-extended.
func loadRaw(b []byte, size, i int) uint64 {
	p := b[i*size : (i+1)*size]
	switch size {
	case 1:
		return uint64(p[0])
	case 2:
		return uint64(p[0]) | uint64(p[1])<<8
	case 4:
		return uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24
	}
	return leU64(p)
}

// storeRaw stores the low size bytes of v as element i of b.
func storeRaw(b []byte, size, i int, v uint64) {
	p := b[i*size : (i+1)*size]
	for k := range p {
		p[k] = byte(v >> (8 * k))
	}
}

// RadixPlan turns the histograms of RadixHist into base offsets and marks the passes
// to run.
//
// Kernel parameters, in order:
//
//	hist    u64  u32 counts [segments][Passes][256] (RadixHist's)
//	base    u64  u64 output positions [segments][Passes][256]: where the first key of
//	             each digit of each segment goes in the pass (row r's output starts at
//	             r*rowLen; a segment's keys of digit d follow those of earlier segments)
//	plan    u64  u32 flags [Passes], zero at the launch: flag p becomes nonzero when some
//	             row's keys do not all share pass p's digit
//	rowLen  u64
//	segs    u64  segments per row
//
// The grid has rows*Passes blocks of SortBlock threads.
type RadixPlan struct {
	Passes int
	// GridDep starts the kernel for a programmatic dependent launch (as
	// Elementwise.GridDep; compute capability 9.0+).
	GridDep bool
}

// Key identifies the kernel.
func (p *RadixPlan) Key() string { return string(p.AppendKey(nil)) }

// AppendKey appends Key to b.
func (p *RadixPlan) AppendKey(b []byte) []byte {
	b = strconv.AppendInt(append(b, "sort.plan|p"...), int64(p.Passes), 10)
	if p.GridDep {
		b = append(b, "|gd"...)
	}
	return b
}

// Validate checks the spec.
func (p *RadixPlan) Validate() error {
	if p.Passes < 1 || p.Passes > SortMaxPasses {
		return fmt.Errorf("kernel: sort plan of %d passes", p.Passes)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (p *RadixPlan) CPU() (func(*cpu.Launch) error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	P := p.Passes
	return func(l *cpu.Launch) error {
		rowLen, segs := int(l.Uint64(3)), int(l.Uint64(4))
		if rowLen <= 0 || segs <= 0 || l.Block[0] != SortBlock || int(l.Grid[0])%P != 0 {
			return launchErr("sort plan: row %d, %d segments, grid %d, block %d", rowLen, segs, l.Grid[0], l.Block[0])
		}
		rows := int(l.Grid[0]) / P
		hb, err := sortMem(l, 0, rows*segs*P*RadixDigits*4)
		if err != nil {
			return err
		}
		bb, err := sortMem(l, 1, rows*segs*P*RadixDigits*8)
		if err != nil {
			return err
		}
		pb, err := sortMem(l, 2, 4*P)
		if err != nil {
			return err
		}
		if !checkZero(pb) {
			return launchErr("sort plan not zeroed")
		}
		hist, base, plan := cpu.Slice[uint32](hb), cpu.Slice[uint64](bb), cpu.Slice[uint32](pb)
		active := make([]bool, rows*P)
		l.Parallel(rows*P, 16, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				r, pass := b/P, b%P
				var total [RadixDigits]uint64
				for q := 0; q < segs; q++ {
					h := hist[((r*segs+q)*P+pass)*RadixDigits:][:RadixDigits]
					for d := range total {
						total[d] += uint64(h[d])
					}
				}
				trivial := false
				run := uint64(r) * uint64(rowLen)
				var start [RadixDigits]uint64
				for d := range total {
					start[d] = run
					run += total[d]
					if total[d] == uint64(rowLen) {
						trivial = true
					}
				}
				for q := 0; q < segs; q++ {
					i := ((r*segs+q)*P + pass) * RadixDigits
					for d := 0; d < RadixDigits; d++ {
						base[i+d] = start[d]
						start[d] += uint64(hist[i+d])
					}
				}
				active[b] = !trivial
			}
		})
		for b, a := range active {
			if a {
				plan[b%P] = 1
			}
		}
		return nil
	}, nil
}

// sortActive returns, from the plan flags of P passes, whether pass runs, its number
// among the active passes (k) and their count (m). A plan with no flag runs the last
// pass alone (a stable copy), so that the result is always written.
func sortActive(plan []uint32, P, pass int) (active bool, k, m int) {
	for p := 0; p < P; p++ {
		if plan[p] != 0 {
			if p < pass {
				k++
			}
			m++
		}
	}
	if m == 0 {
		return pass == P-1, 0, 1
	}
	return plan[pass] != 0, k, m
}

// SortRank is how the ranking finds the lanes of a warp whose keys share a digit.
type SortRank uint8

const (
	// RankBallot: eight ballots, one per digit bit (CUB's MatchAny).
	RankBallot SortRank = iota
	// RankMatch: one match.any.sync.b32 (sm_70 on).
	RankMatch
	// RankAtomicOr: each lane ORs its bit into the warp's shared word of its digit and
	// reads the word back (CUB's WARP_MATCH_ATOMIC_OR); two sets of words alternate
	// between items so that one warp barrier per item orders their reuse.
	RankAtomicOr
	// RankBallot3: RankBallot's ballots ANDed three at a time (lop3), four instructions
	// two deep rather than a chain of eight ANDs. ptxas 11.8 (sm_90) makes the long
	// passes of 4-byte keys alone 6-8% fewer SASS instructions (static counts, 48
	// items: float32 5623 against 5983, int32 5487 against 5991), spilling 8 and 24
	// bytes there (RankBallot: 0 and 16), and float64's 32-item passes 56-64 (RankBallot:
	// none). On an H100 (2026-12-07) it took 0.985-0.999x RankBallot's time in the
	// sorts of keys alone, 1.001x in the argsorts of 4-byte keys and 1.038x in float64's
	// (spilling): the passes of keys alone take it by default (GPU_SORT_RANK_ALONE).
	RankBallot3
)

func (r SortRank) String() string {
	switch r {
	case RankBallot:
		return "ballot"
	case RankMatch:
		return "match"
	case RankAtomicOr:
		return "or"
	case RankBallot3:
		return "ballot3"
	}
	return fmt.Sprintf("SortRank(%d)", uint8(r))
}

// RadixPass is one digit pass of the radix sort over tiles of Tile() keys: tiles of a
// row never cross a segment boundary, and the tiles of a launch are whole segments.
//
// Buffers. Active pass k of m (sortActive) reads keyIn (k == 0) or the buffer pass k-1
// wrote, and writes keyFinal (k == m-1) or keyA when m-1-k is even, keyB when odd;
// keyA may be keyFinal. keyFinal 0 writes no keys in the last pass (argsort). Values
// move the same way through valIn (ValPayload; with ValIndex the first active pass makes
// each key's index in its row), valA, valB and valFinal; ValIndex carries ValSize-byte
// indices and writes int64 ones to valFinal.
//
// Kernel parameters, in order:
//
//	keyIn, keyA, keyB, keyFinal   u64 addresses (Order.Type, contiguous rows)
//	valIn, valA, valB, valFinal   u64 addresses (unused with ValNone)
//	plan     u64  RadixPlan's flags (SortPlanBytes), then the tile counters
//	              [passes][groups] u32 (SortCounterBytes), zero at the sort's start:
//	              this launch's is counter pass*groups + group
//	base     u64  RadixPlan's base offsets [segments][passes][256]; the last tile of a
//	              segment writes the next segment's (a launch covers one segment of a
//	              long row, and the next segment's launch follows)
//	status   u64  two halves of maxTiles*1024 bytes (StatusBytes; 128-byte aligned,
//	              so that a warp's 32 words of a tile are one cache line); launch
//	              number L of the pass (L = k*groups + group) uses half L%2, which is
//	              zero at the launch, and zeroes half (L+1)%2 for the next launch
//	pass     u64  the pass (digit p: key bits 8p to 8p+7)
//	rowLen   u64
//	tilesPerRow u64  ceil(rowLen / Tile())
//	tilesPerSeg u64  tiles of a full segment
//	segs     u64  segments per row
//	tileBase u64  the launch's first tile (rows' tiles numbered row-major)
//	maxTiles u64  the most tiles of any launch of the sort
//	groups   u64  launches per pass
//	group    u64  this launch's number in the pass
//
// The grid has the launch's tiles, blocks of SortBlock threads. Blocks take tile
// numbers from the launch's counter, so every tile's predecessors have started before
// it.
type RadixPass struct {
	Order   SortKey
	Items   int
	Val     SortVal
	ValSize int // bytes of a carried value (ValIndex: 4 or 8; ValPayload: 1, 2, 4, 8)
	// Lookback is the widest window of predecessors a thread reads at once (1 to 32,
	// doubling from 1 while no inclusive count is found).
	Lookback int
	// Rank is how the ranking finds a key's peers in its warp.
	Rank SortRank
	// LoadFence makes every key of the tile arrive before the ranking starts
	// (sortGen.landKeys) rather than as ptxas schedules them.
	LoadFence bool
	// MinBlocks > 0 asks ptxas for that many resident blocks per multiprocessor
	// (.minnctapersm: it caps the registers).
	MinBlocks int
	// LeanLookback reads every round's whole window at once and folds it with a
	// running predicate (sortGen.lookbackLean: about a quarter of the instructions);
	// false: windows doubling from one predecessor, folded word by word with explicit
	// stop logic (sortGen.lookback).
	LeanLookback bool
	// GridDep starts the kernel for a programmatic dependent launch (as
	// Elementwise.GridDep; compute capability 9.0+): its blocks may be scheduled while
	// the kernel ahead of it runs and take their tile numbers once it has completed.
	GridDep bool
	// FullTiles gives full tiles (every tile but a row's partial last one) their own
	// copy of the key loads and the ranking, without the per-item bounds tests (the
	// staging, the scatter and the value loads keep theirs): fewer instructions an
	// item, and under the register cap of MinBlocks spills may change (ptxas 11.8: the
	// 28-item passes' go, 8-byte keys' 12-item passes under four blocks gain some).
	FullTiles bool
	// Sectors writes the keys and values so that each store of a warp covers whole
	// 32-byte sectors but at the runs' ends (sortGen.writeSectors), rather than 32
	// consecutive tile slots (writeTile); it keeps no digits in shared memory.
	Sectors bool
	// Prefetch > 0: at its tile's start each block asks L2 for the keys of the tile
	// Prefetch tile numbers later in the launch (prefetch.global.L2, one 128-byte line
	// a thread), which a block takes about Prefetch/resident blocks waves of tiles
	// later, so that its key loads hit L2 rather than wait on DRAM. 0: none.
	Prefetch int
	// PrefetchVals: at its tile's start each block asks L2 for the values it loads
	// once the keys are written (not the indices the first pass of an argsort makes).
	PrefetchVals bool
	// Prmt takes each key's digit by one prmt (a byte of the 32-bit word; PTX ISA:
	// prmt, default mode) rather than a shift and a mask, for keys of up to 4 bytes
	// (sortGen.digitSelector):
	// ptxas 11.8 (sm_90) gives the 48-item passes of float32 keys alone 1.5% fewer
	// instructions, of int32 keys 3.2% (under RankBallot; under RankBallot3 int32's
	// about 0.9%).
	Prmt bool
}

// Tile returns the keys per tile.
func (p *RadixPass) Tile() int { return SortBlock * p.Items }

// StatusBytes returns the bytes of the status for launches of at most maxTiles tiles.
func StatusBytes(maxTiles int) int { return 2 * sortStatusHalf(maxTiles) }

func sortStatusHalf(maxTiles int) int { return maxTiles * RadixDigits * 4 }

// Key identifies the kernel.
func (p *RadixPass) Key() string { return string(p.AppendKey(nil)) }

// AppendKey appends Key to b.
func (p *RadixPass) AppendKey(b []byte) []byte {
	b = p.Order.appendKey(append(b, "sort.pass|"...))
	b = strconv.AppendInt(append(b, "|k"...), int64(p.Items), 10)
	b = append(append(b, '|'), p.Val.String()...)
	if p.Val != ValNone {
		b = strconv.AppendInt(b, int64(p.ValSize), 10)
	}
	b = strconv.AppendInt(append(b, "|lb"...), int64(p.Lookback), 10)
	if p.Rank != RankBallot {
		b = append(append(b, '|'), p.Rank.String()...)
	}
	if p.MinBlocks > 0 {
		b = strconv.AppendInt(append(b, "|mb"...), int64(p.MinBlocks), 10)
	}
	if p.LoadFence {
		b = append(b, "|lf"...)
	}
	if p.LeanLookback {
		b = append(b, "|ll"...)
	}
	if p.GridDep {
		b = append(b, "|gd"...)
	}
	if p.FullTiles {
		b = append(b, "|ft"...)
	}
	if p.Sectors {
		b = append(b, "|sw"...)
	}
	if p.Prefetch > 0 {
		b = strconv.AppendInt(append(b, "|pf"...), int64(p.Prefetch), 10)
	}
	if p.PrefetchVals {
		b = append(b, "|pv"...)
	}
	if p.Prmt {
		b = append(b, "|pm"...)
	}
	return b
}

// Validate checks the spec.
func (p *RadixPass) Validate() error {
	if err := p.Order.Validate(); err != nil {
		return err
	}
	if p.Items < 1 || p.Items > SortPassMaxItems || p.Sectors && p.Items > 32 {
		return fmt.Errorf("kernel: sort pass items %d (sectors %v)", p.Items, p.Sectors)
	}
	if err := sortValValid(p.Val, p.ValSize); err != nil {
		return err
	}
	switch p.Lookback {
	case 1, 2, 4, 8, 16, 32:
	default:
		return fmt.Errorf("kernel: sort look-back window %d", p.Lookback)
	}
	if p.Rank > RankBallot3 {
		return fmt.Errorf("kernel: sort ranking %v", p.Rank)
	}
	if smem := p.SharedBytes(); smem-p.DynamicBytes() > SortStaticShared || smem > SortMaxShared {
		return fmt.Errorf("kernel: sort tile of %d keys takes too much shared memory", p.Tile())
	}
	if p.MinBlocks < 0 || p.MinBlocks > 8 {
		return fmt.Errorf("kernel: sort min blocks %d", p.MinBlocks)
	}
	if p.Prefetch < 0 || p.Prefetch > 1<<20 {
		return fmt.Errorf("kernel: sort prefetch distance %d tiles", p.Prefetch)
	}
	if p.Prmt && p.Order.Size() > 4 {
		return fmt.Errorf("kernel: sort digits by prmt of %d-byte keys", p.Order.Size())
	}
	return nil
}

// SortPassMaxItems is the most keys a thread of a pass's tile may hold (32 with
// Sectors, whose tables in the warp counters' array hold no more).
const SortPassMaxItems = 64

// SortStaticShared is the most static shared memory a kernel may declare (48 KiB:
// more takes dynamic shared memory and the device's opt-in).
const SortStaticShared = 48 << 10

// SortMaxShared is the most shared memory a pass may take a block: sm_90's opt-in
// limit (227 KiB: CUDA C Programming Guide, "Compute Capabilities"); a device whose
// limit is lower (DeviceInfo.MaxSharedPerBlock) takes smaller tiles.
const SortMaxShared = 227 << 10

// DynamicBytes returns the dynamic shared memory of a launch of the pass, in bytes:
// where SharedBytes passes 48 KiB the tile's keys or values move to dynamic shared
// memory (tileBytes; the launch must raise the kernel's limit to it: CUDA Driver API,
// cuFuncSetAttribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES), else 0.
func (p *RadixPass) DynamicBytes() int {
	if p.SharedBytes() <= SortStaticShared {
		return 0
	}
	return p.tileBytes()
}

// SharedBytes returns the pass kernel's shared memory in bytes, static and dynamic
// (DynamicBytes): the tile's keys or values, warp counters, digit offsets, a few words
// and, with values or float keys, each slot's digit (at most SortMaxShared: Validate).
// It is ptxas's count or up to 16 bytes more (the small arrays rounded up).
func (p *RadixPass) SharedBytes() int {
	smem := p.tileBytes() + 8*RadixDigits*4 + RadixDigits*8 + 64
	if p.digitsInSmem() {
		smem += p.Tile() // the digits
	}
	return smem
}

// tileBytes is the shared memory of a pass's tile of keys or values (RankAtomicOr
// keeps its 16 KiB of match words there during the ranking).
func (p *RadixPass) tileBytes() int {
	b := p.Tile() * max(p.Order.Size(), p.ValSize, 4)
	if p.Rank == RankAtomicOr {
		b = max(b, 2*8*RadixDigits*4)
	}
	return b
}

// digitsInSmem reports whether a pass keeps each tile slot's digit in shared memory
// for the writes (values, or float keys, whose digit takes several instructions to
// derive again) rather than deriving it from the key again; Sectors finds each slot's
// run otherwise.
func (p *RadixPass) digitsInSmem() bool {
	return !p.Sectors && (p.Val != ValNone || p.Order.Type.IsFloat())
}

// sortSmemBytes is the shared memory of a pass or block-sort kernel: the tile's keys
// or values, warp counters, digit starts and offsets.
func sortSmemBytes(tile, ks, vs int) int {
	return tile*max(ks, vs, 4) + 8*RadixDigits*4 + RadixDigits*4 + RadixDigits*8 + 64
}

// CPU returns the kernel for the CPU backend: the same stable scatter (tiles counted
// in parallel, their offsets in order, then scattered in parallel).
func (p *RadixPass) CPU() (func(*cpu.Launch) error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	key := p.Order
	ks := key.Size()
	tile := p.Tile()
	P := key.Passes()
	return func(l *cpu.Launch) error {
		pass, rowLen := int(l.Uint64(11)), int(l.Uint64(12))
		tpr, tps, segs := int(l.Uint64(13)), int(l.Uint64(14)), int(l.Uint64(15))
		tileBase, maxTiles := int(l.Uint64(16)), int(l.Uint64(17))
		groups, group := int(l.Uint64(18)), int(l.Uint64(19))
		grid := int(l.Grid[0])
		if pass < 0 || pass >= P || rowLen <= 0 || tpr != (rowLen+tile-1)/tile || tps <= 0 ||
			segs != (tpr+tps-1)/tps || l.Block[0] != SortBlock || grid > maxTiles ||
			!segStart(tileBase, tpr, tps) || !segStart(tileBase+grid, tpr, tps) ||
			group >= groups || (segs > 1 && int64(tps)*int64(tile) > SortSegmentMax) || (segs == 1 && rowLen > SortSegmentMax) {
			return launchErr("sort pass %d: row %d, %d tiles per row, %d per segment, %d segments, tiles %d+%d of %d, group %d of %d",
				pass, rowLen, tpr, tps, segs, tileBase, grid, maxTiles, group, groups)
		}
		pb, err := sortMem(l, 8, SortPlanBytes+SortCounterBytes(P, groups))
		if err != nil {
			return err
		}
		// The launch's tile counter, zero at the launch, takes its tiles as the
		// blocks' atomics do (those of a skipped pass too).
		ctr := &cpu.Slice[uint32](pb)[SortPlanBytes/4+pass*groups+group]
		if *ctr != 0 {
			return launchErr("sort pass %d: launch %d's tile counter is %d, not zero", pass, group, *ctr)
		}
		*ctr = uint32(grid)
		active, k, m := sortActive(cpu.Slice[uint32](pb), P, pass)
		if !active {
			return nil
		}
		half := sortStatusHalf(maxTiles)
		stb, err := sortMem(l, 10, 2*half)
		if err != nil {
			return err
		}
		L := k*groups + group
		cur, next := stb[L%2*half:][:half], stb[(L+1)%2*half:][:half]
		if !checkZero(cur[:grid*RadixDigits*4]) {
			return launchErr("sort pass %d: status half %d not zeroed", pass, L%2)
		}
		rows := (tileBase + grid + tpr - 1) / tpr
		n := rows * rowLen
		ptr := func(i int) bool { return l.Args[i].Kind != backend.ArgPtr || l.Args[i].Val != 0 }
		// Source and destination of this pass.
		keyDst := 3
		if k != m-1 {
			keyDst = 1 + (m-1-k)%2
		}
		keySrc := 0
		if k > 0 {
			keySrc = 1 + (m-k)%2 // what pass k-1 wrote
		}
		src, err := sortMem(l, keySrc, n*ks)
		if err != nil {
			return err
		}
		var dst []byte
		if keyDst != 3 || ptr(3) {
			if dst, err = sortMem(l, keyDst, n*ks); err != nil {
				return err
			}
		}
		vs, vsOut := p.ValSize, p.ValSize
		var vsrc, vdst []byte
		if p.Val != ValNone {
			valDst := keyDst + 4
			if k == m-1 && p.Val == ValIndex {
				vsOut = 8
			}
			if dst := valDst; dst != 7 || ptr(7) {
				if vdst, err = sortMem(l, dst, n*vsOut); err != nil {
					return err
				}
			}
			if k > 0 || p.Val == ValPayload {
				if vsrc, err = sortMem(l, keySrc+4, n*vs); err != nil {
					return err
				}
			}
		}
		bb, err := sortMem(l, 9, rows*segs*P*RadixDigits*8)
		if err != nil {
			return err
		}
		base := cpu.Slice[uint64](bb)
		// Each element's digit once, then the tiles' counts and offsets, then the
		// stable scatter, tiles in parallel.
		digits := make([]uint8, rows*rowLen)
		ordered := key.orderedFunc()
		shift := 8 * pass
		span := func(t int) (row, start, end int) {
			g := tileBase + t
			row, tr := g/tpr, g%tpr
			start = row*rowLen + tr*tile
			end = row*rowLen + min(rowLen, (tr+1)*tile)
			return
		}
		l.Parallel(grid, 4, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				_, start, end := span(t)
				sortDigits(src, ks, start, end, digits, ordered, shift)
			}
		})
		offs := tileOffsets(grid, tpr, tps, segs, tileBase, pass, P, base, func(t int, c *[RadixDigits]uint32) {
			_, start, end := span(t)
			for _, d := range digits[start:end] {
				c[d]++
			}
		})
		gen := p.Val == ValIndex && k == 0
		l.Parallel(grid, 4, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				row, start, end := span(t)
				off := &offs[t]
				if dst != nil {
					o := *off
					scatterElems(dst, src, ks, start, end, digits, &o)
				}
				if vdst == nil {
					continue
				}
				o := *off
				switch {
				case gen && vsOut == 8:
					genIndices(cpu.Slice[uint64](vdst), start, end, row*rowLen, digits, &o)
				case gen && vsOut == 4:
					genIndices(cpu.Slice[uint32](vdst), start, end, row*rowLen, digits, &o)
				case vsOut == vs:
					scatterElems(vdst, vsrc, vs, start, end, digits, &o)
				default: // 4-byte indices widened to 8
					d8, s4 := cpu.Slice[uint64](vdst), cpu.Slice[uint32](vsrc)
					for i := start; i < end; i++ {
						d := digits[i]
						d8[o[d]] = uint64(s4[i])
						o[d]++
					}
				}
			}
		})
		// Leave the other half zero for the next launch, as the kernel does.
		clear(next[:maxTiles*RadixDigits*4])
		return nil
	}, nil
}

// orderedFunc returns Ordered specialised for the key's type (the hot loops of the
// CPU kernels call it per element).
func (k SortKey) orderedFunc() func(uint64) uint64 {
	bits := 8 * k.Size()
	mask := ^uint64(0) >> (64 - bits)
	sign := uint64(1) << (bits - 1)
	flip := uint64(0)
	if k.Descending {
		flip = mask
	}
	switch t := k.Type; {
	case t.IsSigned():
		return func(raw uint64) uint64 { return (raw ^ sign) ^ flip }
	case t.IsFloat():
		inf := floatInf(t)
		return func(raw uint64) uint64 {
			abs := raw &^ sign
			var o uint64
			switch {
			case abs > inf:
				o = mask
			case abs == 0:
				o = sign
			case raw&sign != 0:
				o = ^raw & mask
			default:
				o = raw | sign
			}
			return o ^ flip
		}
	}
	return func(raw uint64) uint64 { return raw ^ flip }
}

// sortDigits writes the digit at shift of the ordered keys start to end-1 of b
// (elements of ks bytes) into digits.
func sortDigits(b []byte, ks, start, end int, digits []uint8, ordered func(uint64) uint64, shift int) {
	switch ks {
	case 1:
		for i, v := range b[start:end] {
			digits[start+i] = uint8(ordered(uint64(v)) >> shift)
		}
	case 2:
		for i, v := range cpu.Slice[uint16](b)[start:end] {
			digits[start+i] = uint8(ordered(uint64(v)) >> shift)
		}
	case 4:
		for i, v := range cpu.Slice[uint32](b)[start:end] {
			digits[start+i] = uint8(ordered(uint64(v)) >> shift)
		}
	default:
		for i, v := range cpu.Slice[uint64](b)[start:end] {
			digits[start+i] = uint8(ordered(v) >> shift)
		}
	}
}

// scatterElems copies elements start to end-1 of src (size bytes each) to dst at
// off[digit], counting off up.
func scatterElems(dst, src []byte, size, start, end int, digits []uint8, off *[RadixDigits]uint64) {
	switch size {
	case 1:
		scatterTyped(dst, src, start, end, digits, off)
	case 2:
		scatterTyped(cpu.Slice[uint16](dst), cpu.Slice[uint16](src), start, end, digits, off)
	case 4:
		scatterTyped(cpu.Slice[uint32](dst), cpu.Slice[uint32](src), start, end, digits, off)
	default:
		scatterTyped(cpu.Slice[uint64](dst), cpu.Slice[uint64](src), start, end, digits, off)
	}
}

// genIndices scatters the indices i-rowStart of elements start to end-1.
func genIndices[E uint32 | uint64](dst []E, start, end, rowStart int, digits []uint8, off *[RadixDigits]uint64) {
	for i := start; i < end; i++ {
		d := digits[i]
		dst[off[d]] = E(i - rowStart)
		off[d]++
	}
}

func scatterTyped[E any](dst, src []E, start, end int, digits []uint8, off *[RadixDigits]uint64) {
	for i := start; i < end; i++ {
		d := digits[i]
		dst[off[d]] = src[i]
		off[d]++
	}
}

// segStart reports whether global tile g starts a segment (or ends the last row).
func segStart(g, tpr, tps int) bool { return g%tpr%tps == 0 }

// tileOffsets returns each tile's first output position per digit: the segment's base
// plus the counts of the segment's earlier tiles (count fills a tile's counts).
func tileOffsets(grid, tpr, tps, segs, tileBase, pass, P int, base []uint64, count func(t int, c *[RadixDigits]uint32)) [][RadixDigits]uint64 {
	cs := make([][RadixDigits]uint32, grid)
	cpu.Parallel(4, grid, 4, func(lo, hi int) {
		for t := lo; t < hi; t++ {
			count(t, &cs[t])
		}
	})
	offs := make([][RadixDigits]uint64, grid)
	var run [RadixDigits]uint64
	for t := 0; t < grid; t++ {
		g := tileBase + t
		row, tr := g/tpr, g%tpr
		if tr%tps == 0 {
			seg := row*segs + tr/tps
			copy(run[:], base[(seg*P+pass)*RadixDigits:][:RadixDigits])
		}
		offs[t] = run
		for d := range run {
			run[d] += uint64(cs[t][d])
		}
		if (tr+1)%tps == 0 && tr+1 < tpr {
			// A segment's last tile: the next segment's keys of each digit follow
			// this one's in the pass's input order (the histogram's split holds for
			// the sort's input only).
			seg := row*segs + tr/tps
			copy(base[((seg+1)*P+pass)*RadixDigits:][:RadixDigits], run[:])
		}
	}
	return offs
}

// RadixBlockSort sorts rows of at most Tile() keys entirely in one block's shared
// memory: each block sorts rowsPerBlock consecutive rows (rowsPerBlock*rowLen <=
// Tile()) by a radix sort over the key's digits and then the row numbers' (a stable
// sort by row last separates the rows again, each sorted). It carries each key's
// position in the block, from which the values come at the end: the key's index in
// its row (ValIndex, as int64) or its payload element (ValPayload).
//
// Kernel parameters, in order:
//
//	keyIn   u64  address of the keys (Order.Type, contiguous rows)
//	keyOut  u64  address of the sorted keys, or 0 for none (argsort)
//	valIn   u64  address of the payload (ValPayload)
//	valOut  u64  address of the values (int64 indices or payload)
//	rows    u64
//	rowLen  u64  (> 0)
//	rowsPerBlock u64  (> 0, rowsPerBlock*rowLen <= Tile())
//
// The grid has ceil(rows / rowsPerBlock) blocks of SortBlock threads.
type RadixBlockSort struct {
	Order   SortKey
	Items   int
	Val     SortVal
	ValSize int // payload bytes (ValPayload)
}

// Tile returns the most keys of a block.
func (b *RadixBlockSort) Tile() int { return SortBlock * b.Items }

// Key identifies the kernel.
func (b *RadixBlockSort) Key() string { return string(b.AppendKey(nil)) }

// AppendKey appends Key to buf.
func (b *RadixBlockSort) AppendKey(buf []byte) []byte {
	buf = b.Order.appendKey(append(buf, "sort.block|"...))
	buf = strconv.AppendInt(append(buf, "|k"...), int64(b.Items), 10)
	buf = append(append(buf, '|'), b.Val.String()...)
	if b.Val == ValPayload {
		buf = strconv.AppendInt(buf, int64(b.ValSize), 10)
	}
	return buf
}

// Validate checks the spec.
func (b *RadixBlockSort) Validate() error {
	if err := b.Order.Validate(); err != nil {
		return err
	}
	if err := sortItemsValid(b.Items); err != nil {
		return err
	}
	vs := b.ValSize
	if b.Val == ValIndex {
		vs = 8
	}
	if err := sortValValid(b.Val, vs); err != nil {
		return err
	}
	if sortSmemBytes(b.Tile(), b.Order.Size(), 4)+b.Tile()*4 > SortStaticShared {
		return fmt.Errorf("kernel: block sort of %d keys takes too much shared memory", b.Tile())
	}
	return nil
}

// CPU returns the kernel for the CPU backend: each row sorted stably on its own (a
// stable sort's result is unique, so it is the GPU's).
func (b *RadixBlockSort) CPU() (func(*cpu.Launch) error, error) {
	if err := b.Validate(); err != nil {
		return nil, err
	}
	key := b.Order
	ks := key.Size()
	return func(l *cpu.Launch) error {
		rows, rowLen, rpb := int(l.Uint64(4)), int(l.Uint64(5)), int(l.Uint64(6))
		if rows <= 0 || rowLen <= 0 || rpb <= 0 || rpb*rowLen > b.Tile() || int(l.Grid[0]) != (rows+rpb-1)/rpb || l.Block[0] != SortBlock {
			return launchErr("block sort: %d rows of %d, %d a block, grid %d, block %d", rows, rowLen, rpb, l.Grid[0], l.Block[0])
		}
		n := rows * rowLen
		in, err := sortMem(l, 0, n*ks)
		if err != nil {
			return err
		}
		var out, vin, vout []byte
		if l.Args[1].Kind != backend.ArgPtr || l.Args[1].Val != 0 {
			if out, err = sortMem(l, 1, n*ks); err != nil {
				return err
			}
		}
		switch b.Val {
		case ValIndex:
			if vout, err = sortMem(l, 3, n*8); err != nil {
				return err
			}
		case ValPayload:
			if vin, err = sortMem(l, 2, n*b.ValSize); err != nil {
				return err
			}
			if vout, err = sortMem(l, 3, n*b.ValSize); err != nil {
				return err
			}
		}
		ordered := key.orderedFunc()
		var idx []int64
		if b.Val == ValIndex {
			idx = cpu.Slice[int64](vout)
		}
		l.Parallel(rows, max(1, 4096/rowLen), func(lo, hi int) {
			perm := make([]int, rowLen)
			ord := make([]uint64, rowLen)
			for r := lo; r < hi; r++ {
				s := r * rowLen
				for i := range perm {
					perm[i] = i
					ord[i] = ordered(loadRaw(in, ks, s+i))
				}
				stableSortPerm(perm, ord)
				if out != nil {
					gatherElems(out, in, ks, s, perm)
				}
				switch b.Val {
				case ValIndex:
					for i, j := range perm {
						idx[s+i] = int64(j)
					}
				case ValPayload:
					gatherElems(vout, vin, b.ValSize, s, perm)
				}
			}
		})
		return nil
	}, nil
}

// gatherElems sets element s+i of dst (size bytes each) to element s+perm[i] of src.
func gatherElems(dst, src []byte, size, s int, perm []int) {
	switch size {
	case 1:
		gatherTyped(dst, src, s, perm)
	case 2:
		gatherTyped(cpu.Slice[uint16](dst), cpu.Slice[uint16](src), s, perm)
	case 4:
		gatherTyped(cpu.Slice[uint32](dst), cpu.Slice[uint32](src), s, perm)
	default:
		gatherTyped(cpu.Slice[uint64](dst), cpu.Slice[uint64](src), s, perm)
	}
}

func gatherTyped[E any](dst, src []E, s int, perm []int) {
	for i, j := range perm {
		dst[s+i] = src[s+j]
	}
}

// stableSortPerm sorts perm (indices into ord) stably by ord: a merge sort, so that
// rows of any length take n log n.
func stableSortPerm(perm []int, ord []uint64) {
	if len(perm) <= 16 {
		for i := 1; i < len(perm); i++ {
			for j := i; j > 0 && ord[perm[j]] < ord[perm[j-1]]; j-- {
				perm[j], perm[j-1] = perm[j-1], perm[j]
			}
		}
		return
	}
	tmp := make([]int, len(perm))
	mergeSortPerm(perm, tmp, ord)
}

func mergeSortPerm(a, tmp []int, ord []uint64) {
	n := len(a)
	if n <= 16 {
		stableSortPerm(a, ord)
		return
	}
	m := n / 2
	mergeSortPerm(a[:m], tmp[:m], ord)
	mergeSortPerm(a[m:], tmp[m:], ord)
	if ord[a[m-1]] <= ord[a[m]] {
		return
	}
	copy(tmp, a)
	i, j, k := 0, m, 0
	for i < m && j < n {
		if ord[tmp[j]] < ord[tmp[i]] {
			a[k] = tmp[j]
			j++
		} else {
			a[k] = tmp[i]
			i++
		}
		k++
	}
	for i < m {
		a[k] = tmp[i]
		i++
		k++
	}
	for j < n {
		a[k] = tmp[j]
		j++
		k++
	}
}
