package gpu

import (
	"context"
	"encoding/binary"
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// UniqueOption is an option of Unique.
type UniqueOption func(*uniqueOptions)

type uniqueOptions struct{ index, inverse, counts bool }

// ReturnIndex makes Unique return each unique value's first index in a (flat, row-major;
// numpy.unique's return_index).
func ReturnIndex() UniqueOption { return func(o *uniqueOptions) { o.index = true } }

// ReturnInverse makes Unique return, for every element of a, the index of its value
// among the unique values (numpy.unique's return_inverse).
func ReturnInverse() UniqueOption { return func(o *uniqueOptions) { o.inverse = true } }

// ReturnCounts makes Unique return how many times each unique value occurs
// (numpy.unique's return_counts).
func ReturnCounts() UniqueOption { return func(o *uniqueOptions) { o.counts = true } }

// UniqueResult is what Unique returns: the sorted unique values and, when asked for,
// the first indices (int64, flat), the inverse (int64, a's shape: Values at Inverse
// rebuilds a, as numpy.unique_inverse of NumPy 2) and the counts (int64). The arrays not
// asked for are nil.
type UniqueResult[T Elem] struct {
	Values  *Array[T]
	Indices *Array[int64]
	Inverse *Array[int64]
	Counts  *Array[int64]
}

// Free frees the result's arrays.
func (r *UniqueResult[T]) Free() {
	if r == nil {
		return
	}
	if r.Values != nil {
		r.Values.Free()
	}
	for _, a := range []*Array[int64]{r.Indices, r.Inverse, r.Counts} {
		if a != nil {
			a.Free()
		}
	}
}

// Unique returns the sorted unique elements of a, flattened (numpy.unique with no
// axis), by NumPy's float order: NaNs collapse into one, last (equal_nan), and -0 and
// +0 into one (whichever comes first in a). It sorts a (stably, with the permutation
// when indices or the inverse are asked for), flags the first element of each run of
// equal values, and compacts the flagged elements, which waits (under ctx) for their
// count to size the result. The values alone of an integer array of at least 2^16
// elements and a range of at most Tuning.UniqueDenseMax values come from a bitmap of the
// range instead (by default: ranges of up to 8 bits a byte of a block's shared memory,
// about 1.8 million values on the H200), after one more pass and wait for the range: on
// the H200 (2026-12-02) 2^26 int64 of 2^20 values took 346 us against the sort's 2.64
// ms.
func Unique[T Elem](ctx context.Context, s *Stream, a *Array[T], opts ...UniqueOption) (*UniqueResult[T], error) {
	if err := searchArgs(ctx, s, "Unique"); err != nil {
		return nil, err
	}
	if err := nonNil(a); err != nil {
		return nil, err
	}
	var o uniqueOptions
	for _, f := range opts {
		if f == nil {
			return nil, fmt.Errorf("gpu: a nil UniqueOption: %w", ErrInvalidValue)
		}
		f(&o)
	}
	d := s.dev
	h := a.header()
	if h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
		return nil, fmt.Errorf("gpu: unique of an array on %v on a stream of %v: %w", h.buf.a.dev, d, ErrInvalidValue)
	}
	n := a.Size()
	res := &UniqueResult[T]{}
	fail := func(err error) (*UniqueResult[T], error) {
		res.Free()
		return nil, err
	}
	if n == 0 {
		var err error
		if res.Values, err = Empty[T](s, 0); err != nil {
			return fail(err)
		}
		for _, p := range []struct {
			want bool
			dst  **Array[int64]
			sh   []int
		}{{o.index, &res.Indices, []int{0}}, {o.inverse, &res.Inverse, a.shape}, {o.counts, &res.Counts, []int{0}}} {
			if p.want {
				if *p.dst, err = Empty[int64](s, p.sh...); err != nil {
					return fail(err)
				}
			}
		}
		return res, nil
	}
	flat, free, err := contiguousHeader(s, h)
	if err != nil {
		return fail(err)
	}
	defer free()
	flat = &header{buf: flat.buf, dt: flat.dt, shape: []int{n}, strides: []int{1}, off: flat.off}
	if lim := min(d.tuning().UniqueDenseMax, 8*d.info.MaxSharedPerBlock); lim > 0 && n >= uniqueDenseMinN && a.dt.IsInteger() && !o.index && !o.inverse && !o.counts {
		vh, err := uniqueDense(ctx, s, flat, n, lim)
		if err != nil {
			return fail(err)
		}
		if vh != nil {
			res.Values = &Array[T]{buf: vh.buf, dt: vh.dt, shape: vh.shape, strides: vh.strides}
			return res, nil
		}
	}
	sortedB, err := s.Alloc(int64(n * a.dt.Size()))
	if err != nil {
		return fail(err)
	}
	defer sortedB.Free()
	sorted := &header{buf: sortedB, dt: a.dt, shape: []int{n}, strides: []int{1}}
	var perm *header
	if o.index || o.inverse {
		pb, err := s.Alloc(int64(n * 8))
		if err != nil {
			return fail(err)
		}
		defer pb.Free()
		perm = &header{buf: pb, dt: dtype.Int64, shape: []int{n}, strides: []int{1}}
	}
	if err := sortRows(s, flat, nil, 1, n, false, sorted, perm); err != nil {
		return fail(err)
	}
	flagsB, err := s.Alloc(int64(n))
	if err != nil {
		return fail(err)
	}
	defer flagsB.Free()
	flags := &header{buf: flagsB, dt: dtype.Bool, shape: []int{n}, strides: []int{1}}
	fsp := &kernel.UniqueFlags{Order: kernel.SortKey{Type: a.dt}}
	if err := auxLaunch(s, fsp, n, In(sorted), Out(flags), uint64(n)); err != nil {
		return fail(err)
	}
	vh, err := compact(ctx, s, flags, sorted)
	if err != nil {
		return fail(err)
	}
	res.Values = &Array[T]{buf: vh.buf, dt: vh.dt, shape: vh.shape, strides: vh.strides}
	if o.index {
		ih, err := compact(ctx, s, flags, perm)
		if err != nil {
			return fail(err)
		}
		res.Indices = &Array[int64]{buf: ih.buf, dt: ih.dt, shape: ih.shape, strides: ih.strides}
	}
	if o.counts {
		st, err := compact(ctx, s, flags, nil)
		if err != nil {
			return fail(err)
		}
		defer st.buf.Free()
		u := st.shape[0]
		c, err := Empty[int64](s, u)
		if err != nil {
			return fail(err)
		}
		res.Counts = c
		if err := auxLaunch(s, &kernel.UniqueCounts{}, u, In(st), Out(c), uint64(u), uint64(n)); err != nil {
			return fail(err)
		}
	}
	if o.inverse {
		cum, err := Empty[int64](s, n)
		if err != nil {
			return fail(err)
		}
		defer cum.Free()
		if err := scanInto(s, cum.header(), flags, kernel.Combine{Op: kernel.OpSum, Type: dtype.Int64}, 0, false, 0); err != nil {
			return fail(err)
		}
		inv, err := Empty[int64](s, a.shape...)
		if err != nil {
			return fail(err)
		}
		res.Inverse = inv
		if err := auxLaunch(s, &kernel.InverseScatter{}, n, In(perm), In(cum), Out(inv), uint64(n)); err != nil {
			return fail(err)
		}
	}
	return res, nil
}

// uniqueDenseMinN is the fewest elements whose Unique tries the bitmap of their range:
// below, the range's pass and wait (a round trip) weigh more than the sort they save.
var uniqueDenseMinN = 1 << 16 // (a variable for the tests)

// uniqueDense returns the sorted unique values of the n > 0 integer keys of flat
// (contiguous) by a bitmap of their range (Tuning.UniqueDenseMax), or nil when the
// range holds more than limit values (the caller sorts). internal/kernel's UniqueRange
// finds the range's ends, which the host reads (under ctx); UniqueMark sets the bit of
// each key present in a bitmap of one bit a value of the range, each block in its
// dynamic shared memory first; UniqueExpand writes the range's flags and values, which
// compact turns into the result (one more wait, for the count).
func uniqueDense(ctx context.Context, s *Stream, flat *header, n, limit int) (*header, error) {
	d := s.dev
	dt := flat.dt
	rb, err := s.Alloc(16)
	if err != nil {
		return nil, err
	}
	defer rb.Free()
	if err := s.MemsetD32(rb, 0xFFFFFFFF); err != nil {
		return nil, err
	}
	if err := auxLaunch(s, &kernel.UniqueRange{Type: dt}, (n+kernel.UniqueDenseUnroll-1)/kernel.UniqueDenseUnroll,
		In(flat), uint64(n), InOut(rb)); err != nil {
		return nil, err
	}
	var ends [16]byte
	if err := readSmall(ctx, s, rb, 0, ends[:]); err != nil {
		return nil, err
	}
	lo, hi := binary.LittleEndian.Uint64(ends[:8]), ^binary.LittleEndian.Uint64(ends[8:])
	if hi < lo {
		return nil, fmt.Errorf("gpu: unique: key range [%#x, %#x] of %d keys: %w", lo, hi, n, ErrLaunchFailed)
	}
	if hi-lo >= uint64(limit) {
		return nil, nil
	}
	r := int(hi-lo) + 1
	words := kernel.UniqueDenseWords(uint64(r))
	bm, err := s.Alloc(int64(4 * words))
	if err != nil {
		return nil, err
	}
	defer bm.Free()
	if err := s.MemsetD32(bm, 0); err != nil {
		return nil, err
	}
	fn, err := d.kernel(&kernel.UniqueMark{Type: dt})
	if err != nil {
		return nil, err
	}
	smem := 4 * words
	if err := fn.raiseSharedLimit(d.info.MaxSharedPerBlock); err != nil {
		return nil, err
	}
	// One or two blocks a multiprocessor (two of 1024 threads fill one), each marking
	// its keys once in shared memory and merging its copy once.
	per := 1
	if 2*smem <= d.info.MaxSharedPerBlock {
		per = 2
	}
	grid := max(1, min(per*max(1, d.info.Multiprocessors), (n+kernel.UniqueDenseBlock*kernel.UniqueDenseUnroll-1)/(kernel.UniqueDenseBlock*kernel.UniqueDenseUnroll)))
	if err := s.Launch(fn, LaunchConfig{Grid: Dim3{X: grid}, Block: Dim3{X: kernel.UniqueDenseBlock}, SharedMem: smem},
		In(flat), uint64(n), InOut(bm), lo, uint64(words)); err != nil {
		return nil, err
	}
	fb, err := s.Alloc(int64(r))
	if err != nil {
		return nil, err
	}
	defer fb.Free()
	vb, err := s.Alloc(int64(r * dt.Size()))
	if err != nil {
		return nil, err
	}
	defer vb.Free()
	if err := auxLaunch(s, &kernel.UniqueExpand{Type: dt}, r, In(bm), Out(fb), Out(vb), lo, uint64(r)); err != nil {
		return nil, err
	}
	flags := &header{buf: fb, dt: dtype.Bool, shape: []int{r}, strides: []int{1}}
	vals := &header{buf: vb, dt: dt, shape: []int{r}, strides: []int{1}}
	return compact(ctx, s, flags, vals)
}

// auxLaunch launches a grid-stride kernel over n elements.
func auxLaunch(s *Stream, sp kernelSpec, n int, args ...any) error {
	fn, err := s.dev.kernel(sp)
	if err != nil {
		return err
	}
	grid := max(1, min((n+kernel.SortBlock-1)/kernel.SortBlock, 8*max(1, s.dev.info.Multiprocessors)))
	return s.Launch(fn, LaunchConfig{Grid: Dim3{X: grid}, Block: Dim3{X: kernel.SortBlock}}, args...)
}

// Side is the side of SearchSorted.
type Side int

const (
	// SideLeft finds the first position where a value could go: the first element
	// not below it.
	SideLeft Side = iota
	// SideRight finds the last: the first element above it.
	SideRight
)

// SearchSorted returns, for each element of v (any shape), the index at which it
// would be inserted into a, a sorted 1-D array, to keep a sorted (numpy.searchsorted):
// with SideLeft the first i such that a[i] >= v, with SideRight the first with
// a[i] > v, or len(a); by Sort's order (NaNs last, -0 equal to +0). The result is int64
// of v's shape. a is not checked to be sorted (an unsorted a gives unspecified indices,
// as in NumPy). On CUDA each query walks down a search tree of fanout 8 laid over a
// (internal/kernel's SearchTree: eight keys, one memory sector, a step), its top
// levels in shared memory and the next ones in a sample of a (about len(a)/7 keys of
// 4 bytes, 8 for 8-byte elements, in temporary memory) that stays in L2, so only the
// last step reads a itself (on compute capability 8.0 and later with an L2
// evict-first hint, the sample's loads evict-last: Tuning.SearchHints); for elements
// of 4 or 8 bytes (a 16-byte aligned array) the lanes of a warp read the nodes outside
// shared memory in pairs, each lane a 16-byte half, so that a warp's load covers whole
// 32-byte sectors (Tuning.SearchPair);
// Tuning.SearchVariant 1 selects the first design, a binary search whose top 12 levels
// (11 for 8-byte elements) read a copy of their pivots in shared memory.
func SearchSorted[T Elem](s *Stream, a, v *Array[T], side Side) (*Array[int64], error) {
	if err := nonNil(a, v); err != nil {
		return nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if len(a.shape) != 1 {
		return nil, fmt.Errorf("gpu: searchsorted in a %d-d array (1-d needed): %w", len(a.shape), ErrInvalidValue)
	}
	if side != SideLeft && side != SideRight {
		return nil, fmt.Errorf("gpu: searchsorted side %d: %w", side, ErrInvalidValue)
	}
	d := s.dev
	for _, h := range []*header{a.header(), v.header()} {
		if h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
			return nil, fmt.Errorf("gpu: searchsorted of an array on %v on a stream of %v: %w", h.buf.a.dev, d, ErrInvalidValue)
		}
	}
	out, err := Empty[int64](s, v.shape...)
	if err != nil {
		return nil, err
	}
	n, m := v.Size(), a.Size()
	if n == 0 {
		return out, nil
	}
	if m == 0 {
		if err := s.Memset(out.buf, 0); err != nil {
			out.Free()
			return nil, err
		}
		return out, nil
	}
	ah, freeA, err := contiguousHeader(s, a.header())
	if err != nil {
		out.Free()
		return nil, err
	}
	defer freeA()
	vh, freeV, err := contiguousHeader(s, v.header())
	if err != nil {
		out.Free()
		return nil, err
	}
	defer freeV()
	if d.tuning().SearchVariant != 1 {
		if err := searchTree(s, ah, vh, m, n, side == SideRight, out.header()); err != nil {
			out.Free()
			return nil, err
		}
		return out, nil
	}
	levels := 12 // 16 KiB of pivots for keys of up to 4 bytes
	if a.dt.Size() == 8 {
		levels = 11
	}
	sp := &kernel.SearchSorted{Order: kernel.SortKey{Type: a.dt}, Right: side == SideRight, Levels: levels, Queries: 2}
	fn, err := d.kernel(sp)
	if err != nil {
		out.Free()
		return nil, err
	}
	// Enough blocks to fill the GPU (16 KiB of pivots each), not many more: each
	// stages the pivots once.
	grid := max(1, min((n+2*kernel.SearchSortedBlock-1)/(2*kernel.SearchSortedBlock), 8*max(1, d.info.Multiprocessors)))
	if err := s.Launch(fn, LaunchConfig{Grid: Dim3{X: grid}, Block: Dim3{X: kernel.SearchSortedBlock}},
		In(ah), uint64(m), In(vh), Out(out), uint64(n)); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}
