package kernel

import (
	"fmt"
	"math"

	"github.com/go-gpu/gpu/backend/cpu"
)

// SearchSorted's second design: a search tree of fanout 8 over the sorted array, each
// step reading eight consecutive keys (one 32-byte sector for 4-byte keys) instead of
// one key per binary step, the top levels in shared memory and the middle ones in a
// small sample that stays in L2, so that of a query's steps only the last one reads
// the array itself (a B-tree laid over the sorted array, as in the static search trees
// of Khuong and Morin, "Array layouts for comparison-based searching", 2017).
//
// With L the least L >= 1 such that 8^L >= m (SearchTreeLevels), level j (0 <= j < L)
// divides the array into nb_j = ceil(m / 8^j) blocks of 8^j elements; its sample holds
// each block's last element (clamped to the array's end), T_j[b] = ordered(a[min((b+1)
// 8^j - 1, m-1)]), for b up to pad8(nb_j) = 8*ceil(nb_j/8) (the padding repeats
// a[m-1]); level 0 is the array itself. The samples of levels 1 to L-1 lie one after
// the other in one buffer of ordered keys (4 bytes for keys of up to 4 bytes, else 8):
// level j at entry offset off_j = sum of pad8(nb_i) for 1 <= i < j (SearchTreeLayout).
//
// A query v starts at block p = 0 of level L and, at each level j from L-1 down,
// counts the entries c of T_j[8p .. 8p+7] that come before v (T < v for the left side,
// T <= v for the right) and moves to p = min(8p + c, nb_j); at level 0 p is the
// answer: the number of elements before v. Each T_j[b] is the last element of its
// block, so the blocks before v at level j are those inside the blocks before v at
// level j+1 plus those counted; the clamp keeps a query past every element at the end.

// SearchTreeFanout is the fanout of SearchSorted's tree (keys read per step).
const SearchTreeFanout = 8

// SearchTreeLevels returns L, the tree's levels over an array of m > 0 elements: the
// least L >= 1 with 8^L >= m.
func SearchTreeLevels(m int) int {
	L := 1
	for span := uint64(SearchTreeFanout); span < uint64(m); span *= SearchTreeFanout {
		L++
	}
	return L
}

// searchTreeBlocks returns nb_j = ceil(m / 8^j).
func searchTreeBlocks(m uint64, j int) uint64 {
	sh := uint(3 * j)
	if sh >= 64 {
		return 1
	}
	return (m + 1<<sh - 1) >> sh
}

// SearchTreeLayout returns the entry offsets off_1, ..., off_L of the sample levels of
// an array of m elements (off[j-1] is level j's; off[L-1] the entries in all).
func SearchTreeLayout(m int) []int {
	L := SearchTreeLevels(m)
	off := make([]int, L)
	for j := 1; j < L; j++ {
		off[j] = off[j-1] + int((searchTreeBlocks(uint64(m), j)+7)&^7)
	}
	return off
}

// SearchTreeSample writes the sample levels of SearchTree.
//
// Kernel parameters, in order:
//
//	sorted  u64  the sorted array (Order.Type)
//	m       u64  its length (> 0), with SearchTreeLevels(m) == Levels
//	sample  u64  the sample: SearchTreeLayout(m)[Levels-1] ordered keys (4 or 8 bytes)
//
// Any grid of SortBlock-thread blocks (a grid-stride loop over the entries).
type SearchTreeSample struct {
	Order  SortKey
	Levels int // 2 to 22
}

// Key identifies the kernel.
func (s *SearchTreeSample) Key() string {
	return fmt.Sprintf("searchtree.sample|%s|l%d", s.Order.key(), s.Levels)
}

// Validate checks the spec.
func (s *SearchTreeSample) Validate() error {
	if err := s.Order.Validate(); err != nil {
		return err
	}
	if s.Order.Descending {
		return fmt.Errorf("kernel: search of a descending order")
	}
	if s.Levels < 2 || s.Levels > 22 {
		return fmt.Errorf("kernel: search tree of %d levels", s.Levels)
	}
	return nil
}

// searchTreeEntry returns the element index of sample entry b of level j.
func searchTreeEntry(m uint64, j int, b uint64) uint64 {
	return min((b+1)<<uint(3*j)-1, m-1)
}

// searchPivotSize returns the bytes of a sample entry of keys of size ks.
func searchPivotSize(ks int) int {
	if ks == 8 {
		return 8
	}
	return 4
}

// CPU returns the kernel for the CPU backend.
func (s *SearchTreeSample) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	key, ks := s.Order, s.Order.Size()
	pw := searchPivotSize(ks)
	return func(l *cpu.Launch) error {
		m := int(l.Uint64(1))
		if m <= 0 || SearchTreeLevels(m) != s.Levels || l.Block[0] != SortBlock {
			return launchErr("search tree sample: array of %d, %d levels, block %d", m, s.Levels, l.Block[0])
		}
		a, err := sortMem(l, 0, m*ks)
		if err != nil {
			return err
		}
		off := SearchTreeLayout(m)
		sb, err := sortMem(l, 2, off[s.Levels-1]*pw)
		if err != nil {
			return err
		}
		for j := 1; j < s.Levels; j++ {
			for e := off[j-1]; e < off[j]; e++ {
				o := key.Ordered(loadRaw(a, ks, int(searchTreeEntry(uint64(m), j, uint64(e-off[j-1])))))
				storeRaw(sb, pw, e, o)
			}
		}
		return nil
	}, nil
}

// SearchTree answers SearchSorted's queries by the tree of SearchTreeSample: the first
// i with a[i] >= v (left) or a[i] > v (Right), m if none. Each block first copies the
// top Shared levels of the sample into shared memory.
//
// Kernel parameters, in order:
//
//	sorted   u64  the sorted array (Order.Type)
//	m        u64  its length (> 0), with SearchTreeLevels(m) == Levels
//	sample   u64  SearchTreeSample's output (unused when Levels is 1)
//	queries  u64  Order.Type
//	out      u64  int64, one a query
//	n        u64  queries
//	table    u64  SearchTable's table of 2^TableBits buckets (only with TableBits)
//
// Any grid of blocks of Block threads (SearchSortedBlock when 0). With Vector set (keys
// of 4 or 8 bytes), the sorted array's address is 16-byte aligned and the last step
// reads a full block of the array with vector loads. Shared levels of more than 48 KiB
// (5 levels of 4-byte keys: 37448 entries, 146 KiB) lie in dynamic shared memory, of
// SharedBytes() bytes, which the launch gives (one block a multiprocessor: with Block
// 1024 it holds the multiprocessor's 2048 threads' half).
type SearchTree struct {
	Order   SortKey
	Right   bool
	Levels  int  // L, 1 to 22
	Shared  int  // levels staged in shared memory: 0 to min(L-1, SearchTreeMaxShared)
	Queries int  // queries a thread searches at once (1 to SearchTreeMaxQueries)
	Vector  bool // 16-byte aligned sorted array, keys of 4 or 8 bytes
	Block   int  // threads a block: 0 (SearchSortedBlock), 256, 512 or 1024
	// Swizzle lays the shared levels' 16-byte chunks out XOR-swizzled: chunk c at
	// (c &^ 7) | ((c ^ c>>3) & 7), so that the eight lanes of a quarter warp reading
	// the first chunks of eight random nodes spread over all eight 16-byte bank groups
	// instead of 4 of them (2 for 8-byte keys: nodes are 32 or 64 bytes). The buffer
	// is then rounded up to a multiple of 128 bytes (see sharedSize).
	Swizzle bool
	// TableBits, where not 0 (4 to SearchTableMaxBits, to SearchTableGlobalMaxBits
	// with TableGlobal; float32, int32 and uint32 keys of arrays of less than 2^32
	// elements), gives the kernel a seventh parameter, SearchTable's table of
	// 2^TableBits buckets, which each block stages in shared memory after the shared
	// levels (unless TableGlobal): a query's bucket bounds its answer to [lo, hi],
	// and a level whose block index lo and hi share needs no load (for uniform keys
	// all levels but the last few), nor the array where lo == hi. A warp skips a
	// level's step for a query where none of its lanes needs its load.
	TableBits int
	// TableGlobal reads the table from global memory (each query its bucket's two
	// words, which stay in L2) instead of staging it in shared memory: tables of up
	// to SearchTableGlobalMaxBits bits, for arrays too large for the shared levels to
	// hold the tree (on uniform keys, a bucket of about 16 elements leaves a query a
	// step in the sample's lowest level and one in the array).
	TableGlobal bool
	// Hints gives the global loads cache eviction priorities (on compute capability
	// 8.0 and later; the PTX for earlier targets has none): 1, the array's vector loads
	// (keys of 4 or 8 bytes, Vector; each sector read about once, by a query at random)
	// .L1::no_allocate.L2::evict_first, so that they pass through the caches rather
	// than push the sample out; 2, besides, the sample's and a global table's
	// .L2::evict_last; 3, besides, the sample's lowest level's loads .L1::no_allocate,
	// 4 every global level's. 0: none. (L2 priorities by createpolicy and
	// .L2::cache_hint: ptxas 11.8 takes no .L2::evict_* on ld.)
	Hints int
	// Pair reads the global nodes (the sample's global levels and the array; Vector,
	// no table) by lane pairs: lanes 2i and 2i+1 load the node of the even lane's
	// query together, each a 16-byte half of every 32-byte sector, then the odd
	// lane's, count the keys of their halves before the query of that node and add
	// the two halves' counts with a shuffle. Each load of a warp then asks for 16
	// whole sectors instead of 32 halves, where each half of a sector read without L1
	// allocation (the array's loads under Hints) is a request of its own to L2 (an
	// array 16 but not 32 bytes aligned, as a view may be, straddles two sectors a
	// node: the results are the same, the gain smaller). The warp leaves the query
	// loop together (its lanes past n search for nothing).
	Pair bool
}

// Key identifies the kernel.
func (s *SearchTree) Key() string {
	k := fmt.Sprintf("searchtree|%s|r%v|l%d|s%d|q%d|v%v", s.Order.key(), s.Right, s.Levels, s.Shared, s.Queries, s.Vector)
	if s.Block != 0 {
		k += fmt.Sprintf("|b%d", s.Block)
	}
	if s.Swizzle {
		k += "|z"
	}
	if s.TableBits != 0 {
		k += fmt.Sprintf("|t%d", s.TableBits)
	}
	if s.TableGlobal {
		k += "g"
	}
	if s.Hints != 0 {
		k += fmt.Sprintf("|h%d", s.Hints)
	}
	if s.Pair {
		k += "|p"
	}
	return k
}

// block returns the threads of a block.
func (s *SearchTree) block() int {
	if s.Block == 0 {
		return SearchSortedBlock
	}
	return s.Block
}

// SearchTreeMaxShared returns the most levels SearchTree stages in shared memory for
// keys of ks bytes: 5 for keys of up to 4 bytes (146 KiB, dynamic), else
// SearchTreeShared.
func SearchTreeMaxShared(ks int) int {
	if ks == 8 {
		return SearchTreeShared
	}
	return SearchTreeShared + 1
}

// searchTreeStaticMax is the most bytes of shared levels in static shared memory.
const searchTreeStaticMax = 48 << 10

// SharedBytes returns the dynamic shared memory of a block: the shared levels' bytes
// (sharedSize: with Swizzle, rounded up to a multiple of 128) and the table's
// (tableOffset) when they exceed 48 KiB (5 levels; a table of 2^14 buckets, or of 2^13
// beside 4 levels), else 0 (they are static).
func (s *SearchTree) SharedBytes() int {
	if b := s.sharedTotal(); b > searchTreeStaticMax {
		return b
	}
	return 0
}

// tableOffset returns the byte offset of the table in the block's shared memory: the
// shared levels' bytes rounded up to 16.
func (s *SearchTree) tableOffset() int { return (s.sharedSize() + 15) &^ 15 }

// sharedTotal returns the bytes of the block's shared memory: the shared levels and the
// table.
func (s *SearchTree) sharedTotal() int {
	if s.TableBits == 0 || s.TableGlobal {
		return s.sharedSize()
	}
	return s.tableOffset() + 4*SearchTableWords(s.TableBits)
}

// searchTreeSharedMax is the most shared memory of a block of compute capability 9.0
// (227 KiB).
const searchTreeSharedMax = 227 << 10

// sharedSize returns the bytes of the shared levels' buffer: their entries' static
// bound, with Swizzle rounded up to whole groups of eight 16-byte chunks (the swizzle
// maps a chunk within its group, so the last, partial group reaches past the entries).
func (s *SearchTree) sharedSize() int {
	b := s.sharedEntries() * searchPivotSize(s.Order.Size())
	if s.Swizzle {
		b = (b + 127) &^ 127
	}
	return b
}

// SearchTreeShared is the most levels SearchTree stages in static shared memory: 4680
// entries at most (18 KiB of 4-byte keys); SearchTreeMaxShared.
const SearchTreeShared = 4

// SearchTreeQueries is the most queries a SearchTree thread searches at once (keys of
// up to 4 bytes; SearchTreeMaxQueries).
const SearchTreeQueries = 8

// SearchTreeMaxQueries returns the most queries a SearchTree thread of a block of block
// threads searches at once for keys of ks bytes: 8, or 4 for 8-byte keys (8 take more
// than 128 registers, spilling, with ptxas 12.4 for sm_90); 2 in blocks of 1024 threads
// (64 registers a thread: 4 queries of float16 keys spill with ptxas 11.8).
func SearchTreeMaxQueries(ks, block int) int {
	switch {
	case block > 512:
		return 2
	case ks == 8:
		return SearchTreeQueries / 2
	}
	return SearchTreeQueries
}

// SearchTreeTableQueries is the most queries a SearchTree thread searches at once with
// a table (TableBits): 8 spill 8 to 16 bytes under 128 registers (ptxas 11.8, sm_90).
const SearchTreeTableQueries = 4

// Validate checks the spec.
func (s *SearchTree) Validate() error {
	if err := s.Order.Validate(); err != nil {
		return err
	}
	if s.Order.Descending {
		return fmt.Errorf("kernel: search of a descending order")
	}
	if s.Levels < 1 || s.Levels > 22 || s.Shared < 0 || s.Shared > min(s.Levels-1, SearchTreeMaxShared(s.Order.Size())) {
		return fmt.Errorf("kernel: search tree of %d levels, %d shared", s.Levels, s.Shared)
	}
	if s.Block != 0 && s.Block != 256 && s.Block != 512 && s.Block != 1024 {
		return fmt.Errorf("kernel: search tree of blocks of %d threads", s.Block)
	}
	if s.Queries < 1 || s.Queries > SearchTreeMaxQueries(s.Order.Size(), s.block()) {
		return fmt.Errorf("kernel: search of %d queries a thread", s.Queries)
	}
	if ks := s.Order.Size(); s.Vector && ks != 4 && ks != 8 {
		return fmt.Errorf("kernel: vector search of %d-byte keys", ks)
	}
	if s.Hints < 0 || s.Hints > 4 {
		return fmt.Errorf("kernel: search tree cache hints %d", s.Hints)
	}
	if s.Pair && (!s.Vector || s.TableBits != 0) {
		return fmt.Errorf("kernel: search tree's pair loads need the vector loads and no table")
	}
	if s.TableGlobal && s.TableBits == 0 {
		return fmt.Errorf("kernel: search tree with a global table of no bits")
	}
	if s.TableBits != 0 {
		// (m < 2^32: at most 11 levels)
		most := SearchTableMaxBits
		if s.TableGlobal {
			most = SearchTableGlobalMaxBits
		}
		if s.TableBits < 4 || s.TableBits > most || !searchTableTypes(s.Order.Type) || s.Levels > 11 {
			return fmt.Errorf("kernel: search of %v keys, %d levels, with a table of %d bits", s.Order.Type, s.Levels, s.TableBits)
		}
		if s.Queries > SearchTreeTableQueries {
			return fmt.Errorf("kernel: search of %d queries a thread with a table (at most %d)", s.Queries, SearchTreeTableQueries)
		}
		if b := s.sharedTotal(); b > searchTreeSharedMax {
			return fmt.Errorf("kernel: search tree of %d shared levels and a table of %d bits: %d bytes of shared memory", s.Shared, s.TableBits, b)
		}
	}
	return nil
}

// sharedEntries returns the static bound of the shared levels' entries: 8 + 64 + ...
// + 8^Shared.
func (s *SearchTree) sharedEntries() int {
	n, p := 0, 1
	for range s.Shared {
		p *= SearchTreeFanout
		n += p
	}
	return n
}

// CPU returns the kernel for the CPU backend: the same walk down the tree.
func (s *SearchTree) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	key, ks := s.Order, s.Order.Size()
	pw := searchPivotSize(ks)
	ordered := key.orderedFunc()
	return func(l *cpu.Launch) error {
		m, n := int(l.Uint64(1)), int(l.Uint64(5))
		if m <= 0 || SearchTreeLevels(m) != s.Levels || int(l.Block[0]) != s.block() || s.TableBits != 0 && uint64(m) >= 1<<32 {
			return launchErr("search tree: array of %d, %d levels, block %d, table of %d bits", m, s.Levels, l.Block[0], s.TableBits)
		}
		if s.Vector && !aligned16(l, 0) {
			return launchErr("vector loads of an unaligned array")
		}
		a, err := sortMem(l, 0, m*ks)
		if err != nil {
			return err
		}
		off := SearchTreeLayout(m)
		var sample []byte
		if s.Levels > 1 {
			if sample, err = sortMem(l, 2, off[s.Levels-1]*pw); err != nil {
				return err
			}
		}
		q, err := sortMem(l, 3, n*ks)
		if err != nil {
			return err
		}
		ob, err := sortMem(l, 4, n*8)
		if err != nil {
			return err
		}
		out := cpu.Slice[int64](ob)
		um := uint64(m)
		before := func(t, v uint64) bool {
			if s.Right {
				return t <= v
			}
			return t < v
		}
		// The table (TableBits): each query's range [tlo, thi] and the levels it skips,
		// as the PTX does (on arrays not sorted too, where the answers are arbitrary).
		var words []uint32
		var first, scale float32
		if s.TableBits != 0 {
			tb, err := sortMem(l, 6, 4*SearchTableWords(s.TableBits))
			if err != nil {
				return err
			}
			words = cpu.Slice[uint32](tb)
			first, scale = math.Float32frombits(words[0]), math.Float32frombits(words[1])
		}
		l.Parallel(n, 1<<12, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				rv := loadRaw(q, ks, i)
				v := ordered(rv)
				var p uint64
				tlo, thi := uint32(0), uint32(m)
				if words != nil {
					b := searchTableBucket(s.TableBits, first, scale, searchTableValue(key.Type, rv))
					tlo, thi = words[2+b], words[3+b]
					if thi > uint32(m) || tlo > thi { // (an array not sorted)
						tlo, thi = 0, uint32(m)
					}
				}
				for j := s.Levels - 1; j >= 1; j-- {
					if sh := min(3*j, 31); words != nil && tlo>>sh == thi>>sh {
						p = uint64(tlo >> sh)
						continue
					}
					c := uint64(0)
					for t := range uint64(SearchTreeFanout) {
						if before(loadRaw(sample, pw, off[j-1]+int(8*p+t)), v) {
							c++
						}
					}
					p = min(8*p+c, searchTreeBlocks(um, j))
				}
				c := uint64(0)
				for t := range uint64(SearchTreeFanout) {
					if 8*p+t < um && before(ordered(loadRaw(a, ks, int(8*p+t))), v) {
						c++
					}
				}
				out[i] = int64(min(8*p+c, um))
				if words != nil && tlo == thi {
					out[i] = int64(tlo)
				}
			}
		})
		return nil
	}, nil
}
