package kernel

import (
	"fmt"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// Selection: the k-th smallest ordered key of each row by a most-significant-digit
// radix select, and the k smallest keys of a row (TopK) gathered in index order.
//
// SelectHist and SelectStep alternate from the key's top digit down: the histogram
// counts, per row, the digit of the keys whose higher digits equal the row's prefix so
// far; the step finds the digit whose bucket holds the k-th smallest key, appends it
// to the prefix and subtracts the keys of smaller digits from k. After the last digit
// the prefix is the k-th smallest key T itself and k the number of keys equal to T
// among the k smallest. TopKCount counts each tile's keys below T and equal to T;
// after an exclusive scan of those counts along the row (a ScanTiles scan), TopKGather
// writes every key below T and the first keys equal to T, in index order, with their
// indices: the k smallest keys of the row, in index order within each of the two
// groups, ready for a stable sort. (TopK's largest keys are the smallest of the
// descending order.)
//
// The state of a row is two u64 words: the prefix (the ordered key's bits found so far)
// and the keys still to select.

// SelectHist is the histogram pass of the radix select.
//
// Kernel parameters, in order:
//
//	keys    u64  address of the keys (Order.Type, contiguous rows)
//	hist    u64  u32 counts [rows][256], zero at the launch
//	state   u64  u64 [rows][2] (prefix, k); unused in the first pass but with KState
//	rowLen  u64
//	chunk   u64  keys per block
//	chunks  u64  ceil(rowLen / chunk)
//	pass    u64  the digit (Order.Passes()-1 first, then down to 0)
//	k       u64  the keys to select in each row (with Fused but not KState; unused
//	             otherwise)
//
// With Fused the kernel also does SelectStep's work: hist holds, after the counts, a
// u32 ticket per row (zero at the launch, as the counts), and the row's last block to
// finish (the one that draws ticket chunks-1, after a fence: CUDA samples'
// threadFenceReduction) picks the digit, updates the state and leaves the counts and
// the ticket zero for the next pass; no SelectStep launch follows.
//
// With KState (Fused only) each row's k comes from the state, which holds (0, k) at
// the first pass's launch: its step reads the state as the later passes' do (a
// NanMedian's k depends on each row's NaNs). A row whose k is 0 is left alone: no
// digit holds its 0th key, so the step never writes its state, which stays (0, 0).
//
// The grid has rows*chunks blocks of SortBlock threads. With Vector (keys of 4 or 8 bytes, Items a multiple of 16/size), each thread
// reads 16 consecutive bytes at a time: the keys' address and each row's and chunk's
// first key are 16-byte aligned.
type SelectHist struct {
	Order  SortKey
	Items  int
	Vector bool
	Fused  bool
	KState bool
}

// Key identifies the kernel.
func (s *SelectHist) Key() string {
	k := fmt.Sprintf("select.hist|%s|k%d|v%v|f%v", s.Order.key(), s.Items, s.Vector, s.Fused)
	if s.KState {
		k += "|ks"
	}
	return k
}

// Validate checks the spec.
func (s *SelectHist) Validate() error {
	if err := s.Order.Validate(); err != nil {
		return err
	}
	if ks := s.Order.Size(); s.Vector && (ks != 4 && ks != 8 || s.Items%(16/ks) != 0) {
		return fmt.Errorf("kernel: vector select histogram of %d %d-byte keys a thread", s.Items, ks)
	}
	if s.KState && !s.Fused {
		return fmt.Errorf("kernel: select histogram with k from the state but no step")
	}
	return sortItemsValid(s.Items)
}

// cpuSelectPart is the keys of a row that the CPU histogram pass counts as one piece
// of work (rows are cut into such parts, counted in parallel).
const cpuSelectPart = 1 << 16

// selectHistKeys counts digit pass of the ordered keys of keys (ordered: SortKey's
// orderedFunc) whose higher digits equal prefix's (all of them in the first pass) into
// h.
func selectHistKeys[K uint8 | uint16 | uint32 | uint64](keys []K, ordered func(uint64) uint64, prefix uint64, pass int, first bool, h *[RadixDigits]uint32) {
	shift := uint(8 * pass)
	if first {
		for _, k := range keys {
			h[uint8(ordered(uint64(k))>>shift)]++
		}
		return
	}
	want := prefix >> (shift + 8)
	for _, k := range keys {
		if o := ordered(uint64(k)); o>>(shift+8) == want {
			h[uint8(o>>shift)]++
		}
	}
}

// CPU returns the kernel for the CPU backend.
func (s *SelectHist) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	key := s.Order
	ks := key.Size()
	P := key.Passes()
	return func(l *cpu.Launch) error {
		rowLen, chunk, chunks, pass := int(l.Uint64(3)), int(l.Uint64(4)), int(l.Uint64(5)), int(l.Uint64(6))
		if rowLen <= 0 || chunk <= 0 || chunks != (rowLen+chunk-1)/chunk || pass < 0 || pass >= P ||
			int(l.Grid[0])%chunks != 0 || l.Block[0] != SortBlock {
			return launchErr("select histogram: row %d, chunk %d (%d), pass %d, grid %d", rowLen, chunk, chunks, pass, l.Grid[0])
		}
		rows := int(l.Grid[0]) / chunks
		keys, err := sortMem(l, 0, rows*rowLen*ks)
		if err != nil {
			return err
		}
		hbLen := rows * RadixDigits * 4
		if s.Fused {
			hbLen += rows * 4 // the tickets
		}
		hb, err := sortMem(l, 1, hbLen)
		if err != nil {
			return err
		}
		if !checkZero(hb) {
			return launchErr("select histogram not zeroed")
		}
		var k uint64
		if s.Fused && !s.KState {
			if k = l.Uint64(7); k == 0 || k > uint64(rowLen) {
				return launchErr("select histogram: k %d of %d", k, rowLen)
			}
		}
		if s.Vector && (!aligned16(l, 0) || (rows > 1 && rowLen*ks%16 != 0) || chunk*ks%16 != 0) {
			return launchErr("select histogram: vector loads of unaligned keys")
		}
		hist := cpu.Slice[uint32](hb)
		var state []uint64
		if pass != P-1 || s.KState {
			sb, err := sortMem(l, 2, rows*16)
			if err != nil {
				return err
			}
			state = cpu.Slice[uint64](sb)
		}
		if s.KState && pass == P-1 {
			for r := range rows {
				if state[2*r] != 0 || state[2*r+1] > uint64(rowLen) {
					return launchErr("select histogram: state (%#x, %d) of a row of %d at the start", state[2*r], state[2*r+1], rowLen)
				}
			}
		}
		// Parts of rows of up to cpuSelectPart keys in parallel, each counting into its
		// own histogram, added to the row's at the end.
		ordered := key.orderedFunc()
		parts := (rowLen + cpuSelectPart - 1) / cpuSelectPart
		l.Parallel(rows*parts, 1, func(lo, hi int) {
			var h [RadixDigits]uint32
			for b := lo; b < hi; b++ {
				r, p := b/parts, b%parts
				var prefix uint64
				if state != nil {
					prefix = state[2*r]
				}
				i0 := r*rowLen + p*cpuSelectPart
				i1 := min(i0+cpuSelectPart, (r+1)*rowLen)
				clear(h[:])
				switch ks {
				case 1:
					selectHistKeys(keys[i0:i1], ordered, prefix, pass, pass == P-1, &h)
				case 2:
					selectHistKeys(cpu.Slice[uint16](keys)[i0:i1], ordered, prefix, pass, pass == P-1, &h)
				case 4:
					selectHistKeys(cpu.Slice[uint32](keys)[i0:i1], ordered, prefix, pass, pass == P-1, &h)
				default:
					selectHistKeys(cpu.Slice[uint64](keys)[i0:i1], ordered, prefix, pass, pass == P-1, &h)
				}
				dst := hist[r*RadixDigits:][:RadixDigits]
				for d, c := range h {
					if c != 0 {
						atomic.AddUint32(&dst[d], c)
					}
				}
			}
		})
		if s.Fused {
			if state == nil {
				sb, err := sortMem(l, 2, rows*16)
				if err != nil {
					return err
				}
				state = cpu.Slice[uint64](sb)
			}
			selectStepCPU(hist, state, rows, k, pass, P, s.KState)
		}
		return nil
	}, nil
}

// SelectStep picks each row's digit after a SelectHist pass and leaves the histogram
// zero for the next.
//
// Kernel parameters, in order:
//
//	hist    u64  u32 counts [rows][256]; zero afterwards
//	state   u64  u64 [rows][2]: read (but in the first pass) and written
//	k       u64  the keys to select in each row (1 to rowLen)
//	pass    u64  the digit (Passes-1 first)
//
// The grid has rows blocks of SortBlock threads.
type SelectStep struct {
	Passes int
}

// Key identifies the kernel.
func (s *SelectStep) Key() string { return fmt.Sprintf("select.step|p%d", s.Passes) }

// Validate checks the spec.
func (s *SelectStep) Validate() error {
	if s.Passes < 1 || s.Passes > SortMaxPasses {
		return fmt.Errorf("kernel: select of %d passes", s.Passes)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (s *SelectStep) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	P := s.Passes
	return func(l *cpu.Launch) error {
		k, pass := l.Uint64(2), int(l.Uint64(3))
		rows := int(l.Grid[0])
		if pass < 0 || pass >= P || k == 0 || l.Block[0] != SortBlock {
			return launchErr("select step: k %d, pass %d, block %d", k, pass, l.Block[0])
		}
		hb, err := sortMem(l, 0, rows*RadixDigits*4)
		if err != nil {
			return err
		}
		sb, err := sortMem(l, 1, rows*16)
		if err != nil {
			return err
		}
		selectStepCPU(cpu.Slice[uint32](hb), cpu.Slice[uint64](sb), rows, k, pass, P, false)
		return nil
	}, nil
}

// selectStepCPU is SelectStep's work on rows histograms; with kState the first pass
// too reads the state (SelectHist.KState).
func selectStepCPU(hist []uint32, state []uint64, rows int, k uint64, pass, P int, kState bool) {
	for r := 0; r < rows; r++ {
		prefix, rem := uint64(0), k
		if pass != P-1 || kState {
			prefix, rem = state[2*r], state[2*r+1]
		}
		h := hist[r*RadixDigits:][:RadixDigits]
		var run uint64
		for d := range h {
			c := uint64(h[d])
			if run < rem && rem <= run+c {
				state[2*r], state[2*r+1] = prefix|uint64(d)<<(8*pass), rem-run
			}
			run += c
		}
		clear(h)
	}
}

// TopKCount counts each tile's keys below and equal to its row's selected key.
//
// Kernel parameters, in order:
//
//	keys    u64  address of the keys
//	state   u64  u64 [rows][2]: the selected key T and the keys equal to it to take
//	counts  u64  int64 [rows][tiles][2]: keys below T, keys equal to T
//	rowLen  u64
//	tiles   u64  tiles per row: ceil(rowLen / Tile())
//
// The grid has rows*tiles blocks of SortBlock threads. Striped reads a tile with
// coalesced loads (item i of thread t is the tile's key i*SortBlock+t; the counts do
// not depend on who reads what); otherwise thread t reads keys t*Items to
// t*Items+Items-1. With Guard a last parameter, guard (u64), is the address of a u32
// flag: the kernel returns at once when it is zero (TopKRadix's fallback).
type TopKCount struct {
	Order   SortKey
	Items   int
	Striped bool
	Guard   bool
}

// Tile returns the keys per tile.
func (c *TopKCount) Tile() int { return SortBlock * c.Items }

// Key identifies the kernel.
func (c *TopKCount) Key() string {
	return fmt.Sprintf("topk.count|%s|k%d|s%v|g%v", c.Order.key(), c.Items, c.Striped, c.Guard)
}

// Validate checks the spec.
func (c *TopKCount) Validate() error {
	if err := c.Order.Validate(); err != nil {
		return err
	}
	return sortItemsValid(c.Items)
}

// CPU returns the kernel for the CPU backend.
func (c *TopKCount) CPU() (func(*cpu.Launch) error, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	key, ks, tile := c.Order, c.Order.Size(), c.Tile()
	return func(l *cpu.Launch) error {
		rowLen, tiles := int(l.Uint64(3)), int(l.Uint64(4))
		if rowLen <= 0 || tiles != (rowLen+tile-1)/tile || int(l.Grid[0])%tiles != 0 || l.Block[0] != SortBlock {
			return launchErr("top-k count: row %d, %d tiles, grid %d", rowLen, tiles, l.Grid[0])
		}
		if skip, err := guardClear(l, c.Guard, 5); skip || err != nil {
			return err
		}
		rows := int(l.Grid[0]) / tiles
		keys, err := sortMem(l, 0, rows*rowLen*ks)
		if err != nil {
			return err
		}
		sb, err := sortMem(l, 1, rows*16)
		if err != nil {
			return err
		}
		cb, err := sortMem(l, 2, rows*tiles*16)
		if err != nil {
			return err
		}
		state, counts := cpu.Slice[uint64](sb), cpu.Slice[int64](cb)
		l.Parallel(rows*tiles, 4, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				r, t := b/tiles, b%tiles
				T := state[2*r]
				var less, eq int64
				for i := r*rowLen + t*tile; i < r*rowLen+min(rowLen, (t+1)*tile); i++ {
					switch o := key.Ordered(loadRaw(keys, ks, i)); {
					case o < T:
						less++
					case o == T:
						eq++
					}
				}
				counts[2*b], counts[2*b+1] = less, eq
			}
		})
		return nil
	}, nil
}

// TopKGather writes each row's k smallest keys and their indices in the row: the
// keys below T at positions 0 to k-rem-1 and the first rem keys equal to T after them,
// each group in index order.
//
// Kernel parameters, in order:
//
//	keys     u64  address of the keys
//	state    u64  u64 [rows][2]: T and rem
//	prefix   u64  int64 [rows][tiles][2]: exclusive prefix sums of TopKCount's counts
//	outKeys  u64  [rows][k] keys (Order.Type)
//	outIdx   u64  [rows][k] int64 indices
//	rowLen   u64
//	tiles    u64
//	k        u64
//	counts   u64  TopKCount's counts (with Skip; unused otherwise)
//
// The grid has rows*tiles blocks of SortBlock threads. With Skip, a tile that its
// counts show has none of the k (no key below T, and no key equal to T or only ones
// past the rem first) returns at once, reading none of its keys. With Guard a last
// parameter, guard (u64), is TopKCount.Guard's flag.
type TopKGather struct {
	Order SortKey
	Items int
	Skip  bool
	Guard bool
}

// Tile returns the keys per tile (TopKCount's with the same Items).
func (c *TopKGather) Tile() int { return SortBlock * c.Items }

// Key identifies the kernel.
func (c *TopKGather) Key() string {
	return fmt.Sprintf("topk.gather|%s|k%d|s%v|g%v", c.Order.key(), c.Items, c.Skip, c.Guard)
}

// Validate checks the spec.
func (c *TopKGather) Validate() error {
	if err := c.Order.Validate(); err != nil {
		return err
	}
	return sortItemsValid(c.Items)
}

// CPU returns the kernel for the CPU backend.
func (c *TopKGather) CPU() (func(*cpu.Launch) error, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	key, ks, tile := c.Order, c.Order.Size(), c.Tile()
	return func(l *cpu.Launch) error {
		rowLen, tiles, k := int(l.Uint64(5)), int(l.Uint64(6)), int(l.Uint64(7))
		if rowLen <= 0 || tiles != (rowLen+tile-1)/tile || int(l.Grid[0])%tiles != 0 || l.Block[0] != SortBlock || k <= 0 || k > rowLen {
			return launchErr("top-k gather: row %d, %d tiles, k %d, grid %d", rowLen, tiles, k, l.Grid[0])
		}
		if skip, err := guardClear(l, c.Guard, 9); skip || err != nil {
			return err
		}
		rows := int(l.Grid[0]) / tiles
		keys, err := sortMem(l, 0, rows*rowLen*ks)
		if err != nil {
			return err
		}
		sb, err := sortMem(l, 1, rows*16)
		if err != nil {
			return err
		}
		pb, err := sortMem(l, 2, rows*tiles*16)
		if err != nil {
			return err
		}
		ok, err := sortMem(l, 3, rows*k*ks)
		if err != nil {
			return err
		}
		oi, err := sortMem(l, 4, rows*k*8)
		if err != nil {
			return err
		}
		if c.Skip {
			// (the counts only let tiles with none of the k return early)
			if _, err := sortMem(l, 8, rows*tiles*16); err != nil {
				return err
			}
		}
		state, prefix, idx := cpu.Slice[uint64](sb), cpu.Slice[int64](pb), cpu.Slice[int64](oi)
		var bad atomic.Bool
		l.Parallel(rows*tiles, 4, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				r, t := b/tiles, b%tiles
				T, rem := state[2*r], int64(state[2*r+1])
				less := int64(k) - rem
				pl, pe := prefix[2*b], prefix[2*b+1]
				for i := r*rowLen + t*tile; i < r*rowLen+min(rowLen, (t+1)*tile); i++ {
					pos := int64(-1)
					switch o := key.Ordered(loadRaw(keys, ks, i)); {
					case o < T:
						pos = pl
						pl++
					case o == T:
						if pe < rem {
							pos = less + pe
						}
						pe++
					}
					if pos < 0 {
						continue
					}
					if pos >= int64(k) {
						bad.Store(true)
						continue
					}
					j := r*k + int(pos)
					copy(ok[j*ks:(j+1)*ks], keys[i*ks:(i+1)*ks])
					idx[j] = int64(i - r*rowLen)
				}
			}
		})
		if bad.Load() {
			return fmt.Errorf("kernel: illegal address: top-k gather past k: %w", backend.ErrLaunchFailed)
		}
		return nil
	}, nil
}

// TopKRankSort orders each row's k gathered keys (TopKGather's output: the keys in
// index order within the keys below T and within those equal to it) by a stable rank
// sort, for k up to TopKRankMax: one block a row stages the row's ordered keys in
// shared memory, and each key's place is the number of keys before it in the order
// or equal to it and before it in the row, the same order as a stable block sort.
//
// Kernel parameters, in order:
//
//	inKeys   u64  [rows][k] keys (Order.Type)
//	outKeys  u64  [rows][k]
//	inIdx    u64  [rows][k] int64
//	outIdx   u64  [rows][k] int64
//	rows     u64
//	k        u64  1 to TopKRankMax
//
// The grid has rows blocks of SortBlock threads. With Guard a last parameter, guard
// (u64), is TopKCount.Guard's flag.
type TopKRankSort struct {
	Order SortKey
	Guard bool
}

// TopKRankMax is the most keys a row TopKRankSort orders.
const TopKRankMax = 512

// Key identifies the kernel.
func (r *TopKRankSort) Key() string {
	if r.Guard {
		return "topk.rank|" + r.Order.key() + "|g"
	}
	return "topk.rank|" + r.Order.key()
}

// Validate checks the spec.
func (r *TopKRankSort) Validate() error { return r.Order.Validate() }

// CPU returns the kernel for the CPU backend.
func (r *TopKRankSort) CPU() (func(*cpu.Launch) error, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	key, ks := r.Order, r.Order.Size()
	return func(l *cpu.Launch) error {
		rows, k := int(l.Uint64(4)), int(l.Uint64(5))
		if k < 1 || k > TopKRankMax || int(l.Grid[0]) != rows || l.Block[0] != SortBlock {
			return launchErr("top-k rank sort: %d rows, k %d, grid %d", rows, k, l.Grid[0])
		}
		if skip, err := guardClear(l, r.Guard, 6); skip || err != nil {
			return err
		}
		var bufs [4][]byte
		for i, sz := range []int{ks, ks, 8, 8} {
			b, err := sortMem(l, i, rows*k*sz)
			if err != nil {
				return err
			}
			bufs[i] = b
		}
		inI, outI := cpu.Slice[int64](bufs[2]), cpu.Slice[int64](bufs[3])
		l.Parallel(rows, 1, func(lo, hi int) {
			o := make([]uint64, k)
			for row := lo; row < hi; row++ {
				for i := range o {
					o[i] = key.Ordered(loadRaw(bufs[0], ks, row*k+i))
				}
				for i, x := range o {
					rank := 0
					for j, y := range o {
						if y < x || y == x && j < i {
							rank++
						}
					}
					d := row*k + rank
					copy(bufs[1][d*ks:(d+1)*ks], bufs[0][(row*k+i)*ks:(row*k+i+1)*ks])
					outI[d] = inI[row*k+i]
				}
			}
		})
		return nil
	}, nil
}

// guardClear reads a guarded kernel's flag (a u32 at argument i): skip when it is zero.
func guardClear(l *cpu.Launch, guard bool, i int) (skip bool, err error) {
	if !guard {
		return false, nil
	}
	b, err := sortMem(l, i, 4)
	if err != nil {
		return false, err
	}
	return cpu.Slice[uint32](b)[0] == 0, nil
}
