package kernel

import (
	"fmt"
	"math"

	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// SearchSorted's bucket table: a radix-like index over the values of a sorted array of
// float32, int32 or uint32, that lets SearchTree start each query's walk low in the
// tree instead of at its root (an interpolation index on top of a static search tree,
// as learned indexes put one on a B-tree: Kraska et al., "The Case for Learned Index
// Structures", 2018).
//
// With B = 2^Bits buckets, F the array's first element and Z its last, both taken as
// float32 (integers rounded to nearest), the scale is S = B / (Z - F) where F and Z are
// finite and Z > F, else 0; a value v falls in bucket
//
//	bucket(v) = B-1 if v is NaN, else min(max(floor((v - F) * S), 0), B-1)
//
// (float32 arithmetic, each operation rounded to nearest; a NaN product counts as 0),
// which never decreases as v grows in the search's order (NaN last, -0 equal to +0), so
// that every element of a smaller bucket comes before v and every element of a larger
// one after it. The table holds T[b], the number of elements whose bucket is below b,
// for b = 0 to B: a query's answer, left or right, lies in [T[b], T[b+1]] for b its
// bucket. Its layout, 4-byte words: F's and S's float32 bits, then T[0] to T[B]
// (SearchTableWords). On uniform keys a bucket holds about m/B elements, and the walk
// starts at the level whose blocks hold that many; on keys the interpolation fits
// badly it starts higher, at the root at worst (all keys in one bucket): never a wrong
// answer. An array that isn't sorted gets a table whose ranges may be reversed or
// reach past m, where SearchTree walks from the root; its answers there are arbitrary
// (as NumPy's), but the same on every backend and every run.

// SearchTableMaxBits is the most bits of a table SearchTree stages in shared memory
// (SearchTree.TableBits without TableGlobal): 2^14 buckets, 64 KiB of table beside the
// five shared levels' 146 KiB.
const SearchTableMaxBits = 14

// SearchTableGlobalMaxBits is the most bits of SearchTable, and of a table SearchTree
// reads from global memory (TableGlobal): 2^22 buckets, 16 MiB.
const SearchTableGlobalMaxBits = 22

// SearchTableWords returns the 4-byte words of a table of 2^bits buckets: the header's
// two and T[0] to T[2^bits].
func SearchTableWords(bits int) int { return 1<<bits + 3 }

// SearchTableTakes reports whether SearchTable takes keys of type t: float32, int32 and
// uint32.
func SearchTableTakes(t dtype.DType) bool { return searchTableTypes(t) }

// searchTableTypes reports whether SearchTable takes keys of type t.
func searchTableTypes(t dtype.DType) bool {
	return t == dtype.Float32 || t == dtype.Int32 || t == dtype.Uint32
}

// searchTableValue returns the float32 a raw key of type t stands for in the bucket
// rule.
func searchTableValue(t dtype.DType, raw uint64) float32 {
	switch t {
	case dtype.Int32:
		return float32(int32(uint32(raw)))
	case dtype.Uint32:
		return float32(uint32(raw))
	}
	return math.Float32frombits(uint32(raw))
}

// searchTableScale returns S for the first and last elements f and z.
func searchTableScale(bits int, f, z float32) float32 {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) || math.IsNaN(float64(z)) || math.IsInf(float64(z), 0) || !(z > f) {
		return 0
	}
	d := z - f
	return float32(int(1)<<bits) / d
}

// searchTableBucket returns bucket(v) for 2^bits buckets, F f and S s: the rule the
// PTX computes with sub.rn, mul.rn and cvt.rmi.s32 (saturating; NaN gives 0).
func searchTableBucket(bits int, f, s, v float32) int {
	last := 1<<bits - 1
	if v != v {
		return last
	}
	x := v - f
	x *= s
	var b int64
	switch {
	case x != x:
		b = 0
	case x >= math.MaxInt32:
		b = math.MaxInt32
	case x <= math.MinInt32:
		b = math.MinInt32
	default:
		b = int64(math.Floor(float64(x)))
	}
	return int(min(max(b, 0), int64(last)))
}

// SearchTable writes the bucket table of a sorted array.
//
// Kernel parameters, in order:
//
//	sorted  u64  the sorted array (Order.Type: float32, int32 or uint32)
//	m       u64  its length (0 < m < 2^32)
//	table   u64  SearchTableWords(Bits) 4-byte words
//
// Any grid of SortBlock-thread blocks (a grid-stride loop over the buckets 0 to B,
// each a binary search of the array: about log2(m) loads).
type SearchTable struct {
	Order SortKey
	Bits  int // 4 to SearchTableGlobalMaxBits
}

// Key identifies the kernel.
func (s *SearchTable) Key() string {
	return fmt.Sprintf("searchtable|%s|b%d", s.Order.key(), s.Bits)
}

// Validate checks the spec.
func (s *SearchTable) Validate() error {
	if err := s.Order.Validate(); err != nil {
		return err
	}
	if s.Order.Descending || !searchTableTypes(s.Order.Type) {
		return fmt.Errorf("kernel: search table of %v keys (descending %v)", s.Order.Type, s.Order.Descending)
	}
	if s.Bits < 4 || s.Bits > SearchTableGlobalMaxBits {
		return fmt.Errorf("kernel: search table of %d bits", s.Bits)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (s *SearchTable) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	t := s.Order.Type
	return func(l *cpu.Launch) error {
		m := l.Uint64(1)
		if m == 0 || m >= 1<<32 || l.Block[0] != SortBlock {
			return launchErr("search table: array of %d, block %d", m, l.Block[0])
		}
		a, err := sortMem(l, 0, int(m)*4)
		if err != nil {
			return err
		}
		tb, err := sortMem(l, 2, SearchTableWords(s.Bits)*4)
		if err != nil {
			return err
		}
		words := cpu.Slice[uint32](tb)
		val := func(i int) float32 { return searchTableValue(t, loadRaw(a, 4, i)) }
		f := val(0)
		sc := searchTableScale(s.Bits, f, val(int(m)-1))
		words[0], words[1] = math.Float32bits(f), math.Float32bits(sc)
		for b := 0; b <= 1<<s.Bits; b++ {
			lo, hi := 0, int(m)
			for lo < hi {
				mid := int(uint(lo+hi) >> 1)
				if searchTableBucket(s.Bits, f, sc, val(mid)) < b {
					lo = mid + 1
				} else {
					hi = mid
				}
			}
			words[2+b] = uint32(lo)
		}
		return nil
	}, nil
}
