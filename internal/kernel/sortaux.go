package kernel

import (
	"fmt"
	"math"
	"sort"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// The kernels around sorting: Unique's run flags, run lengths and inverse indices,
// SearchSorted's batched binary search, and Quantile's interpolation of sorted rows.
// All run over a one-dimensional index space with a grid-stride loop (any grid of
// SortBlock-thread blocks) but SearchSorted, whose blocks also stage the top levels of
// the search in shared memory.

// UniqueFlags marks the first element of each run of equal keys of a sorted array
// (SortKey order: NaNs equal, -0 equal to +0): flags[i] = i == 0 || x[i] != x[i-1].
//
// Kernel parameters: sorted u64 (Order.Type), flags u64 (bool), n u64.
type UniqueFlags struct {
	Order SortKey
}

// Key identifies the kernel.
func (u *UniqueFlags) Key() string { return "unique.flags|" + u.Order.key() }

// Validate checks the spec.
func (u *UniqueFlags) Validate() error { return u.Order.Validate() }

// CPU returns the kernel for the CPU backend.
func (u *UniqueFlags) CPU() (func(*cpu.Launch) error, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	key, ks := u.Order, u.Order.Size()
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(2))
		x, err := sortMem(l, 0, n*ks)
		if err != nil {
			return err
		}
		fl, err := sortMem(l, 1, n)
		if err != nil {
			return err
		}
		l.Parallel(n, 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				fl[i] = 1
				if i > 0 && key.Ordered(loadRaw(x, ks, i)) == key.Ordered(loadRaw(x, ks, i-1)) {
					fl[i] = 0
				}
			}
		})
		return nil
	}, nil
}

// UniqueCounts turns the starts of u runs (int64, increasing, within n elements) into
// their lengths: counts[j] = starts[j+1] - starts[j], the last n - starts[u-1].
//
// Kernel parameters: starts u64, counts u64 (int64), u u64, n u64.
type UniqueCounts struct{}

// Key identifies the kernel.
func (u *UniqueCounts) Key() string { return "unique.counts" }

// CPU returns the kernel for the CPU backend.
func (u *UniqueCounts) CPU() (func(*cpu.Launch) error, error) {
	return func(l *cpu.Launch) error {
		nu, n := int(l.Uint64(2)), int64(l.Uint64(3))
		sb, err := sortMem(l, 0, nu*8)
		if err != nil {
			return err
		}
		cb, err := sortMem(l, 1, nu*8)
		if err != nil {
			return err
		}
		st, c := cpu.Slice[int64](sb), cpu.Slice[int64](cb)
		for j := range st {
			next := n
			if j+1 < nu {
				next = st[j+1]
			}
			c[j] = next - st[j]
		}
		return nil
	}, nil
}

// InverseScatter writes inv[perm[i]] = cum[i] - 1: each element's run number, from
// the sorting permutation and the inclusive running count of run starts.
//
// Kernel parameters: perm u64 (int64), cum u64 (int64), inv u64 (int64), n u64.
type InverseScatter struct{}

// Key identifies the kernel.
func (u *InverseScatter) Key() string { return "unique.inverse" }

// CPU returns the kernel for the CPU backend.
func (u *InverseScatter) CPU() (func(*cpu.Launch) error, error) {
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(3))
		pb, err := sortMem(l, 0, n*8)
		if err != nil {
			return err
		}
		cb, err := sortMem(l, 1, n*8)
		if err != nil {
			return err
		}
		ib, err := sortMem(l, 2, n*8)
		if err != nil {
			return err
		}
		perm, cum, inv := cpu.Slice[int64](pb), cpu.Slice[int64](cb), cpu.Slice[int64](ib)
		for i, p := range perm {
			if p < 0 || p >= int64(n) {
				return fmt.Errorf("kernel: illegal address: inverse index %d of %d: %w", p, n, backend.ErrLaunchFailed)
			}
			inv[p] = cum[i] - 1
		}
		return nil
	}, nil
}

// SearchSortedBlock is the number of threads of a SearchSorted block.
const SearchSortedBlock = 256

// SearchSorted finds, for each query v, the index at which v would be inserted into
// the sorted array a (SortKey order) to keep it sorted: the first i with a[i] >= v
// (left: numpy.searchsorted side="left") or a[i] > v (Right), m if none. Each block
// first stages the 2^Levels-1 pivots of the search's top Levels levels (the implicit
// tree of the binary search's midpoints) in shared memory, so that those steps read
// shared memory; the rest read global memory.
//
// Kernel parameters: sorted u64 (Order.Type), m u64 (> 0), queries u64 (Order.Type),
// out u64 (int64), n u64. Any grid of SearchSortedBlock-thread blocks.
type SearchSorted struct {
	Order   SortKey
	Right   bool
	Levels  int // 1 to 12
	Queries int // queries a thread searches at once (1 to 4)
}

// Key identifies the kernel.
func (s *SearchSorted) Key() string {
	return fmt.Sprintf("searchsorted|%s|r%v|l%d|q%d", s.Order.key(), s.Right, s.Levels, s.Queries)
}

// Validate checks the spec.
func (s *SearchSorted) Validate() error {
	if err := s.Order.Validate(); err != nil {
		return err
	}
	if s.Order.Descending {
		return fmt.Errorf("kernel: search of a descending order")
	}
	if s.Levels < 1 || s.Levels > 12 {
		return fmt.Errorf("kernel: search levels %d", s.Levels)
	}
	if s.Queries < 1 || s.Queries > 4 {
		return fmt.Errorf("kernel: search of %d queries a thread", s.Queries)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (s *SearchSorted) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	key, ks := s.Order, s.Order.Size()
	return func(l *cpu.Launch) error {
		m, n := int(l.Uint64(1)), int(l.Uint64(4))
		if m <= 0 || l.Block[0] != SearchSortedBlock {
			return launchErr("searchsorted: array of %d, block %d", m, l.Block[0])
		}
		a, err := sortMem(l, 0, m*ks)
		if err != nil {
			return err
		}
		q, err := sortMem(l, 2, n*ks)
		if err != nil {
			return err
		}
		ob, err := sortMem(l, 3, n*8)
		if err != nil {
			return err
		}
		out := cpu.Slice[int64](ob)
		ordered := key.orderedFunc()
		// The sorted array's ordered keys once.
		oa := make([]uint64, m)
		l.Parallel(m, 1<<14, func(lo, hi int) {
			for j := lo; j < hi; j++ {
				oa[j] = ordered(loadRaw(a, ks, j))
			}
		})
		l.Parallel(n, 1<<12, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				v := ordered(loadRaw(q, ks, i))
				if s.Right {
					out[i] = int64(sort.Search(m, func(j int) bool { return oa[j] > v }))
				} else {
					out[i] = int64(sort.Search(m, func(j int) bool { return oa[j] >= v }))
				}
			}
		})
		return nil
	}, nil
}

// QuantileGather computes quantiles of sorted rows by NumPy's default (linear)
// method: for q, position q*(n-1) between elements lo = floor and hi = lo+1, t its
// fraction (at or past the last element, n-1: lo = hi = n-1 and t = pos+1, numpy's
// _get_indexes and _get_gamma: quantilePos), a = x[lo], b = x[hi] in float64, and
// a + (b-a)*t when t < 0.5, b - (b-a)*(1-t) otherwise (numpy's _lerp); with Median, (a + b)/2 of the middle
// elements (numpy.median's mean). A row with a NaN (sorted last) gives NaN; with
// SkipNaN (numpy.nanquantile, numpy.nanmedian) the row's NaNs are left out instead: n
// is the row's elements before its first NaN (a binary search of the sorted row), and
// a row of NaNs alone gives NaN. The result converts once to Out; a NaN result is the
// canonical NaN (quantileNaN).
//
// Kernel parameters: sorted u64 ([rows][n] of In), out u64 ([nq][rows] of Out), qs u64
// (float64 [nq]; unused with Median), rows u64, n u64 (> 0), nq u64.
type QuantileGather struct {
	In, Out dtype.DType
	Median  bool
	SkipNaN bool
}

// Key identifies the kernel.
func (g *QuantileGather) Key() string {
	k := fmt.Sprintf("quantile|%v|%v|m%v", g.In, g.Out, g.Median)
	if g.SkipNaN {
		k += "|nan"
	}
	return k
}

// Validate checks the spec.
func (g *QuantileGather) Validate() error {
	if !g.In.Valid() || !g.Out.IsFloat() {
		return fmt.Errorf("kernel: quantile of %v into %v: %w", g.In, g.Out, backend.ErrNotSupported)
	}
	return nil
}

// quantileNaN is the NaN quantiles give (the GPU's canonical NaN: all bits but the
// sign's), whatever NaN the input or the arithmetic had.
func quantileNaN(t dtype.DType) uint64 { return 1<<(t.Bits()-1) - 1 }

// quantileLerp is numpy's _lerp.
func quantileLerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - float64(d*float64(1-t)) // (the conversions keep Go from fusing)
	}
	return a + float64(d*t)
}

// quantileMid is numpy.median's mean of the two middle elements (n even).
func quantileMid(a, b float64) float64 { return (a + b) / 2 }

// quantilePos returns lo, hi and t of quantile q of n sorted elements: numpy's
// _get_indexes and _get_gamma for the linear method, whose position at or past the
// last element (pos >= n-1) reads the last element twice with t = pos+1 (its previous
// index is -1), so that a row of one -0.0 keeps its sign (quantileLerp: b - 0*0).
func quantilePos(q float64, n int) (lo, hi int, t float64) {
	pos := q * float64(n-1)
	if pos >= float64(n-1) {
		return n - 1, n - 1, pos + 1
	}
	lo = int(math.Floor(pos))
	lo = max(0, min(lo, n-1))
	hi = min(lo+1, n-1)
	return lo, hi, pos - float64(lo)
}

// CPU returns the kernel for the CPU backend.
func (g *QuantileGather) CPU() (func(*cpu.Launch) error, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	is, os := g.In.Size(), g.Out.Size()
	return func(l *cpu.Launch) error {
		rows, n, nq := int(l.Uint64(3)), int(l.Uint64(4)), int(l.Uint64(5))
		if n <= 0 || (g.Median && nq != 1) {
			return launchErr("quantile of rows of %d, %d quantiles", n, nq)
		}
		x, err := sortMem(l, 0, rows*n*is)
		if err != nil {
			return err
		}
		out, err := sortMem(l, 1, nq*rows*os)
		if err != nil {
			return err
		}
		var qs []float64
		if !g.Median {
			qb, err := sortMem(l, 2, nq*8)
			if err != nil {
				return err
			}
			qs = cpu.Slice[float64](qb)
		}
		elem := func(i int) float64 { return expr.ScalarFromBits(g.In, loadRaw(x, is, i)).Float64() }
		skip := g.SkipNaN && g.In.IsFloat()
		l.Parallel(rows*nq, 1024, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				j, r := b/rows, b%rows
				s := r * n
				n := n
				if skip {
					// The row's elements before its first NaN (sorted last).
					n = sort.Search(n, func(i int) bool { return math.IsNaN(elem(s + i)) })
				}
				var v float64
				switch {
				case n == 0:
					v = math.NaN()
				case !skip && g.In.IsFloat() && math.IsNaN(elem(s+n-1)):
					v = math.NaN()
				case g.Median && n%2 == 1:
					v = elem(s + n/2) // the middle element itself: (a + a)/2 overflows past MaxFloat64/2
				case g.Median:
					v = quantileMid(elem(s+n/2-1), elem(s+n/2))
				default:
					l, h, t := quantilePos(qs[j], n)
					v = quantileLerp(elem(s+l), elem(s+h), t)
				}
				bits := expr.ScalarOf(v).Convert(g.Out).Bits()
				if math.IsNaN(v) {
					bits = quantileNaN(g.Out)
				}
				storeRaw(out, os, b, bits)
			}
		})
		return nil
	}, nil
}
