package kernel

import (
	"fmt"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// Search kernels: stream compaction (the indices or values of the nonzero elements),
// the first nonzero element, and the number of nonzero elements. An element is
// "nonzero" as in NumPy (x != 0: NaN is nonzero, -0 is zero; bools are 0 or 1).
//
// Compaction takes two passes over the flags, because its output size must be known
// before the output is allocated (one 8-byte device-to-host copy in between, the only
// host synchronization):
//
//  1. CompactCount: each tile of Tile() elements counts its nonzero elements and
//     publishes the count, then the inclusive prefix of the counts, in a status word
//     per tile: a single-pass scan with decoupled look-back (Merrill and Garland 2016).
//     The last tile's word holds the total.
//  2. CompactScatter: each tile reads its offset (the previous tile's inclusive
//     prefix), ranks its nonzero elements with a block scan, stages their indices (or
//     values) in shared memory and writes them out as one contiguous, coalesced run.
//
// A status word is 64 bits: the state in the top two bits (1: aggregate, 2: inclusive
// prefix) and the count in the low 62, written and read as one relaxed 64-bit access
// (single-copy atomic), so no fence is needed between a flag and its value.

// SearchBlock is the number of threads of a search block.
const SearchBlock = 256

// Status word states (the top two bits).
const (
	statusAggregate = 1
	statusPrefix    = 2
	statusShift     = 62
	statusMask      = 1<<statusShift - 1
)

func searchValid(t dtype.DType) error {
	if !t.Valid() {
		return fmt.Errorf("kernel: search of %v elements: %w", t, backend.ErrNotSupported)
	}
	return nil
}

// CompactCount is the first compaction pass: tile counts and their inclusive prefixes.
//
// Kernel parameters, in order:
//
//	in      u64  address of the contiguous input (In)
//	status  u64  16-byte header (the tile counter) and a 64-bit word per tile, zeroed
//	             before the launch
//	n       u64  elements
//
// The grid has exactly ceil(n / Tile()) blocks of SearchBlock threads. After it,
// word t (at status+16+8t) is statusPrefix<<62 | (nonzero elements in tiles 0..t).
// With Vector set the input address is 16-byte aligned.
type CompactCount struct {
	In     dtype.DType
	Items  int
	Vector bool
}

// Tile returns the elements per tile.
func (c *CompactCount) Tile() int { return SearchBlock * c.Items }

// Key identifies the kernel.
func (c *CompactCount) Key() string {
	return fmt.Sprintf("search.count|%v|k%d|v%v", c.In, c.Items, c.Vector)
}

// Validate checks the spec.
func (c *CompactCount) Validate() error {
	if err := searchValid(c.In); err != nil {
		return err
	}
	if c.Items < 1 || c.Items > 32 {
		return fmt.Errorf("kernel: compaction items %d", c.Items)
	}
	return nil
}

// CPU returns the pass for the CPU backend (it writes every tile's word).
func (c *CompactCount) CPU() (func(*cpu.Launch) error, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	tile := c.Tile()
	float := c.In.IsFloat()
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(2))
		in, err := searchIn(l, 0, c.In, n)
		if err != nil {
			return err
		}
		tiles := (n + tile - 1) / tile
		status := l.Mem(1)
		if len(status) < 16+8*tiles {
			return fmt.Errorf("kernel: illegal address: status of %d tiles: %w", tiles, backend.ErrLaunchFailed)
		}
		if int(l.Grid[0]) != tiles || l.Block[0] != SearchBlock || !checkZero(status[:16+8*tiles]) {
			return launchErr("grid %d, block %d, zeroed status, for %d tiles", l.Grid[0], l.Block[0], tiles)
		}
		if c.Vector && !aligned16(l, 0) {
			return launchErr("vector loads of an unaligned input")
		}
		words := cpu.Slice[uint64](status[16 : 16+8*tiles])
		sz := c.In.Size()
		l.Parallel(tiles, 16, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				words[t] = uint64(countNonzeroT(in[t*tile*sz:min(n, (t+1)*tile)*sz], sz, float))
			}
		})
		var run uint64
		for t := range words {
			run += words[t]
			words[t] = statusPrefix<<statusShift | run
		}
		return nil
	}, nil
}

// searchIn returns the bytes of n elements of type t of argument i.
func searchIn(l *cpu.Launch, i int, t dtype.DType, n int) ([]byte, error) {
	m := l.Mem(i)
	if len(m) < n*t.Size() {
		return nil, fmt.Errorf("kernel: illegal address: %d elements past an allocation of %d bytes: %w", n, len(m), backend.ErrLaunchFailed)
	}
	return m[:n*t.Size()], nil
}

// nonzeroAt reports whether the element of size sz at b is nonzero (floats: -0 is
// zero).
func nonzeroAt(b []byte, sz int, float bool) bool {
	switch sz {
	case 1:
		return b[0] != 0
	case 2:
		if float { // float16, bfloat16: the sign bit is bit 15
			return b[0]|b[1]&0x7f != 0
		}
		return b[0]|b[1] != 0
	case 4:
		v := uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24
		if float {
			v &^= 1 << 31
		}
		return v != 0
	}
	var v uint64
	for k := 7; k >= 0; k-- {
		v = v<<8 | uint64(b[k])
	}
	if float {
		v &^= 1 << 63
	}
	return v != 0
}

// countNonzeroT counts the nonzero elements of b (elements of size sz; for floats -0
// is zero).
func countNonzeroT(b []byte, sz int, float bool) int {
	n := 0
	if sz == 1 && !float {
		for _, v := range b {
			if v != 0 {
				n++
			}
		}
		return n
	}
	for i := 0; i+sz <= len(b); i += sz {
		if nonzeroAt(b[i:i+sz], sz, float) {
			n++
		}
	}
	return n
}

// CompactScatter is the second compaction pass: it writes the flat indices (as int64)
// of the nonzero elements of in, or, with Values set, the elements of a second array
// of type Values at those positions (boolean-mask selection), to out in order.
//
// Kernel parameters, in order:
//
//	in      u64  address of the contiguous flags input (In)
//	status  u64  the status written by CompactCount with the same Items
//	out     u64  address of the output (int64 or Values)
//	values  u64  address of the contiguous values (Values; unused otherwise)
//	n       u64  elements
//	total   u64  address of a u64 that receives the number of outputs, or 0
//
// The grid has exactly ceil(n / Tile()) blocks. With Vector set the input address is
// 16-byte aligned. The kernel leaves a status of at most ScanSelfCleanMax bytes past its
// header zero (selfClean), ready for the next CompactCount: the count, if needed after
// the scatter, comes through total.
type CompactScatter struct {
	In     dtype.DType
	Values dtype.DType // Invalid: write indices
	Items  int
	Vector bool
}

// Tile returns the elements per tile (the same as CompactCount's for the same Items).
func (c *CompactScatter) Tile() int { return SearchBlock * c.Items }

// OutType returns the output's element type.
func (c *CompactScatter) OutType() dtype.DType {
	if c.Values == dtype.Invalid {
		return dtype.Int64
	}
	return c.Values
}

// Key identifies the kernel.
func (c *CompactScatter) Key() string {
	return fmt.Sprintf("search.scatter|%v|%v|k%d|v%v", c.In, c.Values, c.Items, c.Vector)
}

// Validate checks the spec.
func (c *CompactScatter) Validate() error {
	if err := searchValid(c.In); err != nil {
		return err
	}
	if c.Values != dtype.Invalid {
		if err := searchValid(c.Values); err != nil {
			return err
		}
	}
	if c.Items < 1 || c.Items > 32 {
		return fmt.Errorf("kernel: compaction items %d", c.Items)
	}
	return nil
}

// CPU returns the pass for the CPU backend.
func (c *CompactScatter) CPU() (func(*cpu.Launch) error, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	tile := c.Tile()
	float := c.In.IsFloat()
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(4))
		in, err := searchIn(l, 0, c.In, n)
		if err != nil {
			return err
		}
		tiles := (n + tile - 1) / tile
		status := l.Mem(1)
		if len(status) < 16+8*tiles {
			return fmt.Errorf("kernel: illegal address: status of %d tiles: %w", tiles, backend.ErrLaunchFailed)
		}
		if int(l.Grid[0]) != tiles || l.Block[0] != SearchBlock {
			return launchErr("grid %d, block %d for %d tiles", l.Grid[0], l.Block[0], tiles)
		}
		if c.Vector && !aligned16(l, 0) {
			return launchErr("vector loads of an unaligned input")
		}
		words := cpu.Slice[uint64](status[16 : 16+8*tiles])
		for _, w := range words {
			if w>>statusShift != statusPrefix {
				return launchErr("status word %#x before the scatter", w)
			}
		}
		total := 0
		if tiles > 0 {
			total = int(words[tiles-1] & statusMask)
		}
		ot := c.OutType()
		osz := ot.Size()
		out := l.Mem(2)
		if len(out) < total*osz {
			return fmt.Errorf("kernel: illegal address: %d outputs past their allocation: %w", total, backend.ErrLaunchFailed)
		}
		var vals []byte
		if c.Values != dtype.Invalid {
			if vals, err = searchIn(l, 3, c.Values, n); err != nil {
				return err
			}
		}
		sz := c.In.Size()
		l.Parallel(tiles, 16, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				pos := 0
				if t > 0 {
					pos = int(words[t-1] & statusMask)
				}
				end := min(n, (t+1)*tile)
				for i := t * tile; i < end; i++ {
					if !nonzeroAt(in[i*sz:(i+1)*sz], sz, float) {
						continue
					}
					if vals == nil {
						putU64(out[pos*8:], uint64(i))
					} else {
						copy(out[pos*osz:(pos+1)*osz], vals[i*osz:(i+1)*osz])
					}
					pos++
				}
			}
		})
		if tm := l.Mem(5); len(tm) >= 8 {
			putU64(tm, uint64(total))
		}
		if c := (8*tiles + 15) &^ 15; c <= ScanSelfCleanMax { // as selfClean
			clear(status[:min(len(status), 16+c)])
		}
		return nil
	}, nil
}

func putU64(b []byte, v uint64) {
	_ = b[7]
	for k := 0; k < 8; k++ {
		b[k] = byte(v >> (8 * k))
	}
}

// FindFirst writes the smallest flat index of a nonzero element of in into a 64-bit
// result slot (atom.min), which the caller sets to all ones (-1: none) before the
// launch. Blocks walk tiles of Tile() elements in increasing order (tile b, b+grid, ...)
// and stop as soon as the slot holds an index before their next tile, so the kernel
// ends early when the first nonzero element comes early.
//
// Kernel parameters, in order:
//
//	in      u64  address of the contiguous input (In)
//	result  u64  address of the result slot (u64, initially 2^64-1)
//	n       u64  elements
//
// Any grid of SearchBlock-thread blocks.
type FindFirst struct {
	In    dtype.DType
	Items int
}

// Tile returns the elements per tile.
func (f *FindFirst) Tile() int { return SearchBlock * f.Items }

// Key identifies the kernel.
func (f *FindFirst) Key() string { return fmt.Sprintf("search.first|%v|k%d", f.In, f.Items) }

// Validate checks the spec.
func (f *FindFirst) Validate() error {
	if err := searchValid(f.In); err != nil {
		return err
	}
	if f.Items < 1 || f.Items > 32 {
		return fmt.Errorf("kernel: find-first items %d", f.Items)
	}
	return nil
}

// CPU returns the kernel for the CPU backend: chunks in parallel, each stopping once
// an earlier chunk has found an element.
func (f *FindFirst) CPU() (func(*cpu.Launch) error, error) {
	if err := f.Validate(); err != nil {
		return nil, err
	}
	float := f.In.IsFloat()
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(2))
		in, err := searchIn(l, 0, f.In, n)
		if err != nil {
			return err
		}
		res := l.Mem(1)
		if len(res) < 8 {
			return fmt.Errorf("kernel: illegal address: find-first result: %w", backend.ErrLaunchFailed)
		}
		if l.Block[0] != SearchBlock || l.Grid[0] == 0 || leU64(res) != ^uint64(0) {
			return launchErr("block %d, result %#x before the launch", l.Block[0], leU64(res))
		}
		found := new(atomic.Uint64)
		found.Store(^uint64(0))
		sz := f.In.Size()
		const grain = 1 << 14
		chunks := (n + grain - 1) / grain
		l.Parallel(chunks, 1, func(lo, hi int) {
			for c := lo; c < hi; c++ {
				start := c * grain
				if uint64(start) > found.Load() {
					return
				}
				for i := start; i < min(n, start+grain); i++ {
					if nonzeroAt(in[i*sz:(i+1)*sz], sz, float) {
						for {
							old := found.Load()
							if uint64(i) >= old || found.CompareAndSwap(old, uint64(i)) {
								break
							}
						}
						return
					}
				}
			}
		})
		v := min(found.Load(), leU64(res))
		putU64(res, v)
		return nil
	}, nil
}

func leU64(b []byte) uint64 {
	var v uint64
	for k := 7; k >= 0; k-- {
		v = v<<8 | uint64(b[k])
	}
	return v
}

// CountNonzero adds the number of nonzero elements of in to a 64-bit counter (which
// the caller zeroes before the launch).
//
// Kernel parameters, in order:
//
//	in      u64  address of the contiguous input (In)
//	result  u64  address of the counter (u64)
//	n       u64  elements
//
// Any grid of SearchBlock-thread blocks (a grid-stride loop over tiles of Tile()
// elements, one atomic add per block).
type CountNonzero struct {
	In    dtype.DType
	Items int
}

// Tile returns the elements per tile.
func (c *CountNonzero) Tile() int { return SearchBlock * c.Items }

// Key identifies the kernel.
func (c *CountNonzero) Key() string { return fmt.Sprintf("search.countnz|%v|k%d", c.In, c.Items) }

// Validate checks the spec.
func (c *CountNonzero) Validate() error {
	if err := searchValid(c.In); err != nil {
		return err
	}
	if c.Items < 1 || c.Items > 32 {
		return fmt.Errorf("kernel: count items %d", c.Items)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (c *CountNonzero) CPU() (func(*cpu.Launch) error, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	float := c.In.IsFloat()
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(2))
		in, err := searchIn(l, 0, c.In, n)
		if err != nil {
			return err
		}
		res := l.Mem(1)
		if len(res) < 8 {
			return fmt.Errorf("kernel: illegal address: count result: %w", backend.ErrLaunchFailed)
		}
		sz := c.In.Size()
		var total atomic.Uint64
		l.Parallel(n, 1<<16, func(lo, hi int) {
			total.Add(uint64(countNonzeroT(in[lo*sz:hi*sz], sz, float)))
		})
		putU64(res, leU64(res)+total.Load())
		return nil
	}, nil
}
