package gpu

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/go-gpu/gpu/internal/kernel"
)

// Sorting and selection: Sort, Argsort, SortByKey, Partition and Argpartition along an
// axis (numpy.sort, numpy.argsort, numpy.partition), TopK (torch.topk), Unique
// (numpy.unique), SearchSorted (numpy.searchsorted), Median, Quantile and Quantiles
// (numpy.median, numpy.quantile), NanMedian, NanQuantile and NanQuantiles
// (numpy.nanmedian, numpy.nanquantile).
//
// Order. Sorts are stable: equal keys keep their input order, so Argsort's indices
// increase within equal keys and the result is the same on every backend. Integers and
// bools sort by value; floats by NumPy's order: -Inf < negative < -0 = +0 < positive <
// +Inf < NaN, every NaN equal to every other (NaNs last), and -0 equal to +0: their
// order in the result is their order in the input, and each keeps its sign. Descending
// reverses the order of keys (NaNs first), still stable: equal keys keep their input
// order (torch.sort(descending=True, stable=True)). Sorted values keep their bits (NaN
// payloads too).
//
// Algorithm. On CUDA, rows longer than one block's tile (4096 keys of up to 4 bytes,
// 3072 of 8) sort by a least-significant-digit radix sort on the keys' bits made
// order-preserving (package internal/kernel: SortKey), one pass per 8-bit digit, each
// a single sweep with decoupled look-back (Adinets and Merrill, "Onesweep: A Faster
// Least Significant Digit Radix Sort for GPUs", 2022): one histogram pass counts every
// digit first, passes whose digit is the same for all keys of every row are skipped
// (on the device: no host synchronization), and each pass ranks a tile's keys with a
// warp-level multi-split (ballots), looks back for the tile's offsets and scatters the
// keys and values. Shorter rows sort in one block's shared memory, many rows per block.
// A single row of keys alone that fits one wave of tiles (on the H200, under two blocks
// a multiprocessor, up to 1,757,184 keys of up to 4 bytes, in tiles of up to 26 keys a
// thread, and 811,008 of 8) sorts in one cooperative launch instead (internal/kernel's
// RadixFused): the same passes, with grid-wide barriers where the passes would launch
// and look back, so that its time is not a chain of launches and look-backs.
// The CPU backend runs the same passes (stable counting scatters, tiles in parallel over
// the cores) and sorts short rows with a stable merge sort: the same results.
//
// Memory. Besides the result, a sort of n keys of s bytes takes on CUDA a second key
// buffer (n*s bytes; none for 1-byte keys, which take one pass), per segment and pass
// 3 KiB of counts and offsets, and two look-back statuses of 1 KiB per tile of the
// largest launch, a launch covering at most 2^28 keys (with the default tiles at most
// 2*64 MiB for keys of up to 4 bytes, 2*85 MiB for 8-byte ones); the single
// cooperative launch takes 1 KiB of counts per tile and pass, and sums of 2 KiB per 16
// tiles and pass, scratch that the stream keeps clean for its next sorts until it
// closes (on the H200 at most 280 KiB, float64 keys, in a block of 512 KiB; a stream
// keeps up to four). Argsort takes up to two key buffers and two 32-bit index buffers (8 bytes
// per index past 2^32 keys in a row), SortByKey a second payload buffer. Sorts along
// an axis other than the last, or of non-contiguous arrays, copy the input to rows
// first and the result back. Inputs are never modified.
//
// Tuning. Environment variables set the pass kernels' items per thread, look-back
// window, occupancy and peer matching at start-up (tuning.go's sortConfigFromEnv); the CPU
// kernels check every launch's contract (grid, scratch sizes and zeroing), so that the
// CPU tests also check the host code that plans CUDA launches.

// SortOption is an option of Sort, Argsort, SortByKey and TopK: Descending of the
// sorts, Smallest of TopK (another's is an error wrapping ErrInvalidValue).
type SortOption func(*sortOptions)

type sortOptions struct {
	desc bool
	// smallest: TopK's k smallest instead of largest.
	smallest bool
}

// Descending sorts in decreasing order (NaNs first), stably.
func Descending() SortOption { return func(o *sortOptions) { o.desc = true } }

// Smallest makes TopK return the k smallest elements (in increasing order) instead of
// the k largest.
func Smallest() SortOption { return func(o *sortOptions) { o.smallest = true } }

// sortOpts applies opts to the options of op (its name in errors): TopK takes Smallest
// and not Descending, the sorts the reverse; an option op doesn't take is an error
// wrapping ErrInvalidValue.
func sortOpts(op string, opts []SortOption) (sortOptions, error) {
	var o sortOptions
	for _, f := range opts {
		if f == nil {
			return o, fmt.Errorf("gpu: %s: a nil SortOption: %w", op, ErrInvalidValue)
		}
		f(&o)
	}
	switch topK := op == "TopK"; {
	case topK && o.desc:
		return o, fmt.Errorf("gpu: TopK: Descending applies to Sort, Argsort and SortByKey (TopK returns the largest first; Smallest the smallest): %w", ErrInvalidValue)
	case !topK && o.smallest:
		return o, fmt.Errorf("gpu: %s: Smallest applies to TopK only (Descending reverses a sort): %w", op, ErrInvalidValue)
	}
	return o, nil
}

// Sort returns a sorted copy of a along axis (negative counts from the end; -1 is
// NumPy's default), as numpy.sort(a, axis, kind="stable"): ascending, or descending
// with Descending(). A 0-d array is sorted as one element. Floats sort in NumPy's
// order, -Inf < negatives < -0 = +0 < positives < +Inf < NaN (every NaN equal to every
// other; -0 and +0 keep their signs and their input order); Descending reverses it
// (NaNs first), still stable. Besides the result, a sort on CUDA takes a second buffer
// of the keys and up to 2*64 MiB of look-back status (2*85 MiB for 8-byte keys; the
// details, and the algorithm: the comment that opens sort.go). An axis
// out of range, a nil array or stream, or an option Sort doesn't take (Smallest) is
// an error wrapping ErrInvalidValue.
//
//	y, err := gpu.Sort(s, x, -1)
func Sort[T Elem](s *Stream, a *Array[T], axis int, opts ...SortOption) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, err
	}
	o, err := sortOpts("Sort", opts)
	if err != nil {
		return nil, err
	}
	out, err := Empty[T](s, a.shape...)
	if err != nil {
		return nil, err
	}
	if err := sortAxis(s, a.header(), nil, axis, o.desc, out.header(), nil); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// Argsort returns the indices (int64, of a's shape) that sort a along axis, stably
// (numpy.argsort(a, axis, kind="stable")): along the axis, a's elements at the
// indices are in order, and equal elements' indices increase, with Descending() too.
// Axes and errors as Sort's.
func Argsort[T Elem](s *Stream, a *Array[T], axis int, opts ...SortOption) (*Array[int64], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, err
	}
	o, err := sortOpts("Argsort", opts)
	if err != nil {
		return nil, err
	}
	out, err := Empty[int64](s, a.shape...)
	if err != nil {
		return nil, err
	}
	if err := sortAxis(s, a.header(), nil, axis, o.desc, nil, out.header()); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// SortByKey sorts keys along axis and carries vals (an array of keys' shape) along:
// it returns the sorted keys and vals[argsort(keys)], in one sort (the payload moves
// with the keys rather than through indices). Descending() and the axes as Sort's;
// vals of another shape is an error wrapping ErrInvalidValue.
func SortByKey[K, V Elem](s *Stream, keys *Array[K], vals *Array[V], axis int, opts ...SortOption) (*Array[K], *Array[V], error) {
	if err := nonNil(keys, vals); err != nil {
		return nil, nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, nil, err
	}
	if !slices.Equal(keys.shape, vals.shape) {
		return nil, nil, fmt.Errorf("gpu: sort by keys of shape %v with values of shape %v: %w", keys.shape, vals.shape, ErrInvalidValue)
	}
	o, err := sortOpts("SortByKey", opts)
	if err != nil {
		return nil, nil, err
	}
	ko, err := Empty[K](s, keys.shape...)
	if err != nil {
		return nil, nil, err
	}
	vo, err := Empty[V](s, keys.shape...)
	if err != nil {
		ko.Free()
		return nil, nil, err
	}
	if err := sortAxis(s, keys.header(), vals.header(), axis, o.desc, ko.header(), vo.header()); err != nil {
		ko.Free()
		vo.Free()
		return nil, nil, err
	}
	return ko, vo, nil
}

// Partition returns a copy of a along axis with the element at kth (negative counts
// from the end) where a sorted array would have it, the smaller ones before it and the
// larger ones after (numpy.partition). kth is one position: numpy's sequence of kth
// has no form here, and needs none, as the result is sorted. It returns the sorted
// array, which is one such arrangement: a stable sort costs about what a selection
// does here, and the result is the same on every backend. kth out of range for the
// axis's length, or an axis out of range, is an error wrapping ErrInvalidValue.
func Partition[T Elem](s *Stream, a *Array[T], kth, axis int) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := checkKth(a.shape, kth, axis); err != nil {
		return nil, err
	}
	return Sort(s, a, axis)
}

// Argpartition returns the indices that partition a along axis around kth
// (numpy.argpartition): Argsort's, which are one such arrangement (see Partition), as
// int64. kth (one position) out of range for the axis's length, or an axis out of
// range, is an error wrapping ErrInvalidValue.
func Argpartition[T Elem](s *Stream, a *Array[T], kth, axis int) (*Array[int64], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := checkKth(a.shape, kth, axis); err != nil {
		return nil, err
	}
	return Argsort(s, a, axis)
}

func checkKth(shape []int, kth, axis int) error {
	ax, err := sortAxisOf(shape, axis)
	if err != nil {
		return err
	}
	n := 1
	if len(shape) > 0 {
		n = shape[ax]
	}
	if kth < -n || kth >= n {
		return fmt.Errorf("gpu: kth %d out of range for an axis of %d: %w", kth, n, ErrInvalidValue)
	}
	return nil
}

// sortAxisOf resolves axis for shape (a 0-d array has the one axis 0 or -1).
func sortAxisOf(shape []int, axis int) (int, error) {
	nd := len(shape)
	if nd == 0 {
		if axis == 0 || axis == -1 {
			return 0, nil
		}
		return 0, fmt.Errorf("gpu: axis %d out of range for a 0-d array (0 or -1): %w", axis, ErrInvalidValue)
	}
	if axis < -nd || axis >= nd {
		return 0, fmt.Errorf("gpu: axis %d out of range for a %d-d array: %w", axis, nd, ErrInvalidValue)
	}
	if axis < 0 {
		axis += nd
	}
	return axis, nil
}

// sortAxis sorts keys (and vals, when given) along axis into the contiguous outputs
// outK (nil: keys not wanted) and outV (int64 indices when vals is nil, else vals'
// type; nil: values not wanted).
func sortAxis(s *Stream, keys, vals *header, axis int, desc bool, outK, outV *header) error {
	if err := nilStream(s); err != nil {
		return err
	}
	ax, err := sortAxisOf(keys.shape, axis)
	if err != nil {
		return err
	}
	mask := make([]bool, len(keys.shape))
	if len(mask) > 0 {
		mask[ax] = true
	}
	rowLen := 1
	if len(keys.shape) > 0 {
		rowLen = keys.shape[ax]
	}
	return alongAxes(s, []*header{keys, vals}, []*header{outK, outV}, mask, rowLen,
		func(in, out []*header, rows, n int) error {
			return sortRows(s, in[0], in[1], rows, n, desc, out[0], out[1])
		})
}

// alongAxes runs an operation over the axes mask of its inputs (all of one shape; nil
// entries are skipped) as rows: run gets the inputs as contiguous [rows, n] arrays (n
// the product of the masked axes, which move last in order; rows the kept axes in
// order) and, for each output, a contiguous [rows, outLen] array. An output has the
// inputs' shape with the one masked axis of length outLen; when that axis isn't the
// last, run writes a temporary that alongAxes permutes into the output. (With several
// masked axes, outs must be nil: the caller lays out its own results.) Nothing runs for
// an empty input.
func alongAxes(s *Stream, ins, outs []*header, mask []bool, outLen int, run func(in, out []*header, rows, n int) error) error {
	d := s.dev
	var shape []int
	for _, h := range ins {
		if h == nil {
			continue
		}
		if h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
			return fmt.Errorf("gpu: sort of an array on %v on a stream of %v: %w", h.buf.a.dev, d, ErrInvalidValue)
		}
		shape = h.shape
	}
	total := prod(shape)
	if total == 0 {
		return nil
	}
	// perm: the kept axes, then the masked ones.
	var perm []int
	n, nm := 1, 0
	for k := range shape {
		if !mask[k] {
			perm = append(perm, k)
		}
	}
	for k := range shape {
		if mask[k] {
			perm = append(perm, k)
			n *= shape[k]
			nm++
		}
	}
	rows := total / n
	// Already rows: the masked axes are the last ones.
	last := true
	for i, p := range perm {
		if p != i {
			last = false
		}
	}
	rowsOf := func(h *header) (*header, func(), error) {
		if h == nil {
			return nil, func() {}, nil
		}
		if last {
			return contiguousHeader(s, h)
		}
		c, err := copyOf(s, permutedHeader(h, perm))
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.buf.Free() }, nil
	}
	rin := make([]*header, len(ins))
	for i, h := range ins {
		r, free, err := rowsOf(h)
		if err != nil {
			return err
		}
		defer free()
		rin[i] = r
	}
	// Outputs: when the masked axes are last (or one axis), an output's layout is
	// [kept..., outLen]; it is used directly if the masked axis is last, else through
	// a temporary permuted back.
	direct := last
	rout := make([]*header, len(outs))
	for i, h := range outs {
		if h == nil {
			continue
		}
		if direct {
			rout[i] = h
			continue
		}
		buf, err := s.Alloc(int64(rows * outLen * h.dt.Size()))
		if err != nil {
			return err
		}
		defer buf.Free()
		rout[i] = &header{buf: buf, dt: h.dt, shape: []int{rows, outLen}, strides: []int{outLen, 1}}
	}
	if err := run(rin, rout, rows, n); err != nil {
		return err
	}
	hasOut := false
	for _, h := range outs {
		hasOut = hasOut || h != nil
	}
	if direct || !hasOut {
		return nil
	}
	// Back: the output's axes are the input's with the single masked axis of length
	// outLen; the temporary holds them in perm's order.
	if nm != 1 {
		return fmt.Errorf("gpu: internal: %d masked axes moved back: %w", nm, ErrInvalidValue)
	}
	inv := make([]int, len(perm))
	for i, p := range perm {
		inv[p] = i
	}
	for i, h := range outs {
		if h == nil {
			continue
		}
		sh := make([]int, len(perm))
		for j, p := range perm {
			sh[j] = h.shape[p]
		}
		tmp := &header{buf: rout[i].buf, dt: h.dt, shape: sh, strides: rowMajor(sh)}
		if err := permuteInto(s, h, permutedHeader(tmp, inv)); err != nil {
			return err
		}
	}
	return nil
}

// permutedHeader returns the view of h with its axes in the order perm.
func permutedHeader(h *header, perm []int) *header {
	sh, st := make([]int, len(perm)), make([]int, len(perm))
	for i, p := range perm {
		sh[i], st[i] = h.shape[p], h.strides[p]
	}
	return &header{buf: h.buf, dt: h.dt, shape: sh, strides: st, off: h.off}
}

// sortConfig is the sort kernels' tuning: items per thread of the passes and of the
// block sort by key size, and the look-back window.
type sortConfig struct {
	Items4, Items8 int // RadixPass items for keys of up to 4 bytes, of 8
	Block4, Block8 int // RadixBlockSort items
	Lookback       int // look-back window of the passes (RadixPass.Lookback)
	LookbackVals   int // the same for passes that carry values (0: Lookback; small sorts: SmallLookback)
	HistItems      int
	MinBlocks      int             // RadixPass.MinBlocks (0: none)
	Rank           kernel.SortRank // RadixPass.Rank: how a warp finds a key's peers, in the passes with values
	RankAlone      kernel.SortRank // the same in the passes of keys alone
	LoadFence      bool            // RadixPass.LoadFence: all keys arrive before the ranking
	SmallItems     int             // pass items of sorts of under two tiles per multiprocessor (0: Items4/8)
	LeanLookback   bool            // RadixPass.LeanLookback: whole windows, predicated fold
	HistLean       bool            // RadixHist.Lean: padded copies, predicated atomics
	SmallLookback  int             // look-back window of the small-tile sorts, with values too (SmallItems; 0: LookbackVals or Lookback)
	// LongItems4 and LongItems8 (0: none) replace Items4 and Items8, and LongMinBlocks
	// MinBlocks, in sorts of rows of at least sortLongRowTiles such tiles and at least
	// LongWaves waves of them (sortPass; LongWaves 0: any number).
	LongItems4, LongItems8 int
	// LongItems8Vals (0: LongItems8) replaces LongItems8 in the passes that carry
	// values: on an H100 (2026-12-07) 28 keys a thread sorted 2^27 float64 keys alone
	// 2.3% faster than 32, and argsorted them 2.1% slower.
	LongItems8Vals int
	LongMinBlocks  int
	// LongLookback8 (0: Lookback) replaces Lookback in the long rows' passes of
	// 8-byte keys alone: on an H100 (2026-12-07) a window of 4 there took 1.018x the
	// time of 2 for a sort of 2^27 float64 keys (GPU_SORT_LOOKBACK=2, every pass of
	// keys alone, had taken 0.983x that of 4 for it, but 1.014x and 1.018x for 2^28
	// float32 and int32 keys).
	LongLookback8 int
	LongWaves     int // (not from the environment: 4; tests set it small)
	// SegMax is the most keys of a segment and, over the tile size, the most tiles of
	// a launch (kernel.SortSegmentMax; tests make it small to exercise segments and
	// launch groups).
	SegMax int
	// PDL launches the plan and the passes with programmatic dependent launch on CUDA
	// devices of compute capability 9.0+ (RadixPlan.GridDep, RadixPass.GridDep), as
	// Tuning.ElementwisePDL does the elementwise kernels: each is scheduled while the
	// kernel ahead of it runs, taking the launch latency between them off the sort's
	// critical path.
	PDL bool
	// FusedMax is the most keys of a one-row sort of keys alone that runs as one
	// cooperative launch (kernel.RadixFused: grid-wide barriers in place of the
	// passes' look-back and launches) on a CUDA device, where its tiles of at most
	// Items4 (Items8) keys a thread fit one wave of FusedBlocks blocks a
	// multiprocessor, or, for keys of up to 4 bytes, tiles of at most FusedItems4
	// keys a thread one wave of the most blocks that fit; 0: never.
	FusedMax    int
	FusedItems4 int  // the largest fused tiles' items (keys of up to 4 bytes), past Items4's wave
	FusedBlocks int  // the most blocks a multiprocessor of RadixFused (its MinBlocks; at least 1)
	FusedSplit  bool // RadixFused.Split: the counts' barrier split around the tile's staging
	FusedEarly  bool // RadixFused.EarlyRank: pass 0 ranked while the first barrier waits
	// FusedRank is RadixFused.Rank (RankMatch: RankBallot): the atomic-OR match words,
	// where the passes take the ballots of Rank and RankAlone.
	FusedRank kernel.SortRank
	// FusedFull gives a fused sort whose row is a whole number of its tiles
	// RadixFused.Full (no per-item bounds tests).
	FusedFull bool
	// FullTiles is which passes take RadixPass.FullTiles (a copy of the key loads and
	// the ranking without bounds tests for full tiles): sortFullNone, sortFullLong
	// (the long rows' passes), sortFullNarrow (those and every pass of keys and values
	// of at most 4 bytes) or sortFullAll.
	FullTiles int
	// Sectors is which passes take RadixPass.Sectors (the keys' stores on whole
	// sectors): sortSectorsOff, sortSectorsValues (those that carry values, argsorts'
	// and SortByKey's, of keys of up to 4 bytes) or sortSectorsAll.
	Sectors int
	// Prefetch > 0 gives the passes of keys alone RadixPass.Prefetch of Prefetch tiles
	// a multiprocessor: each block asks L2 for the keys of the tile that many tiles a
	// multiprocessor (Prefetch / the blocks a multiprocessor waves) after its own, where
	// its launch has one. 0: none.
	Prefetch int
	// PrefetchKV is Prefetch for the passes that carry values (argsorts', SortByKey's).
	PrefetchKV int
	// PrefetchVals gives the passes with values RadixPass.PrefetchVals (each tile's
	// values asked for L2 at its start).
	PrefetchVals bool
	// Prmt gives the passes of keys of up to 4 bytes RadixPass.Prmt (each digit by
	// one prmt).
	Prmt bool
}

// sortConfig.Sectors's values.
const (
	sortSectorsOff = iota
	sortSectorsValues
	sortSectorsAll
)

// sortConfig.FullTiles's values.
const (
	sortFullNone = iota
	sortFullLong
	sortFullAll
	sortFullNarrow
)

// sortPDL reports whether the radix sort's plan and passes use programmatic dependent
// launch on the device (sortConfig.PDL).
func sortPDL(cfg sortConfig, info *DeviceInfo) bool { return cfg.PDL && pdlCapable(info) }

// The long-row rule (sortConfig.LongItems4): a row of at least sortLongRowTiles tiles
// (its last tile's padding at most 1/16 of it) and at least sortConfig.LongWaves
// (default 4) waves of tiles over the device, a wave LongMinBlocks blocks (at least 1,
// at most what fits: sortResidentBlocks) on each multiprocessor. On the H200
// (2026-12-03) tiles of 28 items under three blocks took 6.16 ms against 7.78 for 2^28
// float32 keys, but 7.17 ms against 6.15 for the rows of 16384x16384 (2.3 such tiles a
// row).
const sortLongRowTiles = 16

// sortCfg is the sort kernels' configuration, process-wide: sortConfigFromEnv's at
// start-up (tuning.go), setSortConfig's for tests and benchmarks.
var sortCfg atomic.Pointer[sortConfig]

// setSortConfig selects the configuration and returns the previous one (tests and
// benchmarks).
func setSortConfig(c sortConfig) sortConfig { return *sortCfg.Swap(&c) }

// sortPassHook, when set (tests), sees every radix sort's pass spec before it runs.
var sortPassHook atomic.Pointer[func(*kernel.RadixPass)]

// sortFusedHook, when set (tests), sees every fused sort's spec before it launches.
var sortFusedHook atomic.Pointer[func(*kernel.RadixFused)]

// sortFusedTrace, when set (benchmarks), is the trace of every fused sort: its kernel
// the traced one (kernel.RadixFused.Trace), writing at least grid*FusedTraceSlots u64
// words of the buffer.
var sortFusedTrace atomic.Pointer[Buffer]

// sortRows sorts rows rows of rowLen contiguous keys (and vals) into outK and outV
// (contiguous; either may be nil: keys or values not wanted). With vals nil, outV gets
// each key's index in its row (int64).
func sortRows(s *Stream, keys, vals *header, rows, rowLen int, desc bool, outK, outV *header) error {
	cfg := *sortCfg.Load()
	order := kernel.SortKey{Type: keys.dt, Descending: desc}
	ks := keys.dt.Size()
	val, vs := kernel.ValNone, 0
	switch {
	case outV == nil:
	case vals == nil:
		val, vs = kernel.ValIndex, 4
		if uint64(rowLen) > 1<<32 {
			vs = 8
		}
	default:
		val, vs = kernel.ValPayload, vals.dt.Size()
	}
	if outK == nil && outV == nil {
		return nil
	}
	blockItems := cfg.Block4
	if ks == 8 || vs == 8 && val == kernel.ValPayload {
		blockItems = cfg.Block8
	}
	bs := &kernel.RadixBlockSort{Order: order, Items: blockItems, Val: val}
	if val == kernel.ValPayload {
		bs.ValSize = vs
	}
	if rowLen <= bs.Tile() {
		return blockSort(s, bs, keys, vals, rows, rowLen, outK, outV)
	}
	if rows == 1 && val == kernel.ValNone && !s.dev.noCoopSort.Load() {
		if fp := fusedSortSpec(cfg, &s.dev.info, order, rowLen); fp != nil {
			// A device or driver that refuses the cooperative launch (no
			// cuLaunchKernelEx; a grid it can't hold at once: MPS limits) takes the
			// passes, from then on.
			err := fusedSort(s, fp, keys, rowLen, outK)
			if !errors.Is(err, ErrNotSupported) {
				return err
			}
			s.dev.noCoopSort.Store(true)
		}
	}
	sp := sortPass(cfg, &s.dev.info, order, val, vs, rows, rowLen)
	if h := sortPassHook.Load(); h != nil {
		(*h)(sp)
	}
	return radixSort(s, sp, cfg, keys, vals, rows, rowLen, outK, outV)
}

// sortPass returns the pass of a radix sort of rows rows of rowLen keys (with values
// val of vs bytes) on the device info describes, under cfg.
//
// A sort of less than one wave of tiles runs as long as one tile's block: smaller
// tiles (SmallItems) make more, shorter blocks. Long rows take larger tiles
// (LongItems4/8), which spend fewer instructions a key on the look-back and the
// per-tile steps, where the padding of a row's last tile stays small. The passes'
// MinBlocks (their register cap) and the blocks of the long rule's wave are at most
// the blocks whose shared memory fits a multiprocessor (sortResidentBlocks). A tile
// past the shared memory a block may opt in to (DeviceInfo.MaxSharedPerBlock) takes
// fewer keys a thread, and so does a long tile past 48 KiB (its keys or values in
// dynamic shared memory: kernel.RadixPass.DynamicBytes) of which fewer than
// LongMinBlocks fit a multiprocessor.
func sortPass(cfg sortConfig, info *DeviceInfo, order kernel.SortKey, val kernel.SortVal, vs, rows, rowLen int) *kernel.RadixPass {
	ks := order.Size()
	items, long := cfg.Items4, cfg.LongItems4
	if ks == 8 || vs == 8 {
		items, long = cfg.Items8, cfg.LongItems8
		if val != kernel.ValNone && cfg.LongItems8Vals > 0 && long > 0 {
			long = cfg.LongItems8Vals
		}
	}
	lb, minBlocks := cfg.Lookback, cfg.MinBlocks
	if val != kernel.ValNone && cfg.LookbackVals > 0 {
		lb = cfg.LookbackVals
	}
	sms := max(1, info.Multiprocessors)
	tileCount := func(items int) int {
		tile := kernel.SortBlock * items
		return (rowLen + tile - 1) / tile
	}
	sp := &kernel.RadixPass{Order: order, Val: val, ValSize: vs, Rank: cfg.Rank, LoadFence: cfg.LoadFence, LeanLookback: cfg.LeanLookback,
		GridDep: sortPDL(cfg, info)}
	if val == kernel.ValNone {
		sp.Rank = cfg.RankAlone
	}
	sectors := cfg.Sectors == sortSectorsAll || cfg.Sectors == sortSectorsValues && val != kernel.ValNone && ks <= 4
	// setItems sets the tile's keys a thread, and Sectors where the kernel has it at that
	// size (it changes the shared memory).
	setItems := func(items int) {
		sp.Items, sp.Sectors = items, sectors && items <= 32
	}
	// A tile past the shared memory a block may take (the device's opt-in limit) takes
	// fewer keys a thread.
	limit := info.MaxSharedPerBlock
	if limit <= 0 {
		limit = kernel.SortStaticShared
	}
	shrink := func(items int) int {
		for ; items > 4; items-- {
			if setItems(items); sp.SharedBytes() <= limit {
				break
			}
		}
		return items
	}
	fits := func(items, blocks int) int { // blocks, at most those that fit
		setItems(items)
		return sortResidentBlocks(blocks, sp.SharedBytes(), info)
	}
	items = shrink(items)
	if long > 0 {
		// Long tiles past 48 KiB (dynamic shared memory) only where LongMinBlocks of
		// them fit a multiprocessor; else fewer keys a thread.
		room := func(items int) bool {
			return fits(items, cfg.LongMinBlocks) >= cfg.LongMinBlocks || sp.DynamicBytes() == 0
		}
		for long = shrink(long); long > 4 && !room(long); long-- {
		}
	}
	small := cfg.SmallItems > 0 && cfg.SmallItems < items && rows*tileCount(items) < 2*sms
	isLong := !small && long > 0 && tileCount(long) >= sortLongRowTiles &&
		rows*tileCount(long) >= cfg.LongWaves*max(1, fits(long, cfg.LongMinBlocks))*sms
	switch {
	case small:
		items = cfg.SmallItems
		if cfg.SmallLookback > 0 {
			lb = cfg.SmallLookback
		}
	case isLong:
		items, minBlocks = long, cfg.LongMinBlocks
		if ks == 8 && val == kernel.ValNone && cfg.LongLookback8 > 0 {
			lb = cfg.LongLookback8
		}
	}
	sp.Lookback = lb
	sp.MinBlocks = fits(items, minBlocks) // (and Items, Sectors)
	sp.Prefetch = cfg.Prefetch * sms
	if val != kernel.ValNone {
		sp.Prefetch, sp.PrefetchVals = cfg.PrefetchKV*sms, cfg.PrefetchVals
	}
	sp.Prmt = cfg.Prmt && ks <= 4
	switch cfg.FullTiles {
	case sortFullAll:
		sp.FullTiles = true
	case sortFullLong:
		sp.FullTiles = isLong
	case sortFullNarrow:
		sp.FullTiles = isLong || ks < 8 && vs < 8
	}
	return sp
}

// fusedSortSpec returns the fused sort (kernel.RadixFused) of one row of n keys alone
// under cfg on the device info describes, or nil where it doesn't apply: not a CUDA
// device (compute capability below 7.0: no cooperative launch; the CPU backend), n
// past cfg.FusedMax, or more tiles than one wave of FusedBlocks blocks (at most what
// fits: sortResidentBlocks) on every multiprocessor holds: tiles of Items8 keys a
// thread for 8-byte keys, of FusedItems4 (at most what shared memory allows) for the
// others. It takes the fewest blocks a multiprocessor whose wave of tiles of at most
// Items4 (Items8) keys a thread holds the row, and then the smallest tiles that fit
// that wave, so that every multiprocessor works; a row of keys of up to 4 bytes past
// the largest such wave takes the most blocks that fit and the smallest tiles of up
// to FusedItems4 keys a thread that hold it.
func fusedSortSpec(cfg sortConfig, info *DeviceInfo, order kernel.SortKey, n int) *kernel.RadixFused {
	if cfg.FusedMax <= 0 || n > cfg.FusedMax || info.ComputeMajor < 7 || info.Multiprocessors <= 0 {
		return nil
	}
	rank := cfg.FusedRank
	if rank == kernel.RankMatch {
		rank = kernel.RankBallot // (match.any: slower in the passes, not offered here)
	}
	sp := &kernel.RadixFused{Order: order, Items: cfg.Items4, LoadFence: cfg.LoadFence, Rank: rank, Split: cfg.FusedSplit,
		EarlyRank: cfg.FusedEarly}
	if order.Size() == 8 {
		sp.Items = cfg.Items8
	}
	// found finishes the spec of the tiles chosen.
	found := func() *kernel.RadixFused {
		sp.Full = cfg.FusedFull && n%sp.Tile() == 0
		return sp
	}
	// largest sets sp.Items to the largest tiles from items down to floor+1 whose
	// shared memory a block may take (the settings may ask past them), else floor.
	largest := func(items, floor int) int {
		for sp.Items = items; sp.Items > floor && sp.Validate() != nil; sp.Items-- {
		}
		return sp.Items
	}
	// take sets the smallest tiles of at most most keys a thread that hold the row in
	// a wave of blocks a multiprocessor, and reports whether there are such.
	take := func(blocks, most int) bool {
		wave := blocks * info.Multiprocessors * kernel.SortBlock
		items := (n + wave - 1) / wave
		if items > most {
			return false
		}
		sp.Items, sp.MinBlocks = items, blocks
		return true
	}
	most := largest(sp.Items, 1)
	if sp.Validate() != nil {
		return nil
	}
	fit := sortResidentBlocks(max(1, cfg.FusedBlocks), sp.SharedBytes(), info)
	for blocks := 1; blocks <= fit; blocks++ {
		if take(blocks, most) {
			return found()
		}
	}
	// Past the largest such wave, keys of up to 4 bytes take larger tiles.
	if order.Size() > 4 || cfg.FusedItems4 <= most {
		return nil
	}
	big := largest(cfg.FusedItems4, most)
	if take(sortResidentBlocks(max(1, cfg.FusedBlocks), sp.SharedBytes(), info), big) {
		return found()
	}
	return nil
}

// fusedSort sorts one row of n keys into outK in one cooperative launch
// (kernel.RadixFused). Its sums and barrier counters are the stream's scratch, which
// the kernel leaves zero (no memset; past fusedSumsPooled bytes a zeroed buffer).
func fusedSort(s *Stream, sp *kernel.RadixFused, keys *header, n int, outK *header) error {
	if h := sortFusedHook.Load(); h != nil {
		(*h)(sp)
	}
	trace := sortFusedTrace.Load()
	if trace != nil {
		c := *sp
		c.Trace = true
		sp = &c
	}
	fn, err := s.dev.kernel(sp)
	if err != nil {
		return err
	}
	P, ks := sp.Order.Passes(), sp.Order.Size()
	grid := (n + sp.Tile() - 1) / sp.Tile()
	if sp.Full && n%sp.Tile() != 0 {
		return fmt.Errorf("gpu: a fused sort for whole tiles of %d keys given %d keys: %w", sp.Tile(), n, ErrInvalidValue)
	}
	if trace != nil && trace.Size() < int64(8*grid*kernel.FusedTraceSlots) {
		return fmt.Errorf("gpu: a fused sort's trace of %d bytes for %d blocks: %w", trace.Size(), grid, ErrInvalidValue)
	}
	// The buffers before the scratch, whose first use on a stream enqueues its zeroing:
	// a failed allocation leaves nothing behind (and scratch given back is clean).
	work, err := s.Alloc(int64(kernel.FusedWorkBytes(P, grid)))
	if err != nil {
		return err
	}
	defer work.Free()
	var keyB sortBuf
	if P > 1 {
		b, err := s.Alloc(int64(n * ks))
		if err != nil {
			return err
		}
		defer b.Free()
		keyB = sortBuf{b: b, mode: ReadWrite}
	}
	size := kernel.FusedSumsBytes(P, grid)
	sums, err := s.scratch(scratchFusedSort, size, size <= fusedSumsPooled)
	if err != nil {
		return err
	}
	defer sums.release(true)
	l := newLaunchArgs()
	l.hdr(keys, Read)
	keyB.add(&l)
	l.hdr(outK, ReadWrite)
	l.buf(work, ReadWrite)
	sums.addTo(&l)
	l.u64(uint64(n))
	if trace != nil {
		l.buf(trace, ReadWrite)
	}
	lc := launchGeometry(grid, 1, kernel.SortBlock)
	lc.Cooperative = true
	return l.launch(s, fn, lc)
}

// fusedSumsPooled is the most bytes of a fused sort's sums that come from the stream's
// scratch pool (kept clean by the kernel, up to scratchKeep blocks until the stream
// closes); larger ones are a zeroed buffer's. On the H200, 512000 float32 keys (125
// tiles) take 68 KiB, 2^20 (256 tiles) 132 KiB, and the most, float64 keys in 264
// tiles, 280 KiB (a 512 KiB block).
const fusedSumsPooled = 512 << 10

// sortResidentBlocks returns want (a pass's MinBlocks: .minnctapersm, which caps its
// registers so that want blocks fit a multiprocessor) clamped to the blocks of smem
// bytes of static shared memory that fit a multiprocessor of the device: its
// MaxSharedPerMultiprocessor over smem plus the driver's ReservedSharedPerBlock, at
// least 1. want 0 (no cap) stays 0; where the device doesn't say (0: the CPU backend)
// want stays as it is. The defaults (MinBlocks 4, LongMinBlocks 3) are the H200's: 228
// KiB a multiprocessor, where every pass (at most 48 KiB) fits four times, so nothing
// changes there. A GPU of 100 KiB a multiprocessor (sm_86, sm_89) fits two of the long
// rows' passes (45-46 KiB) and of the base passes of 8-byte keys (34-37 KiB), three of
// those of 4-byte keys (26-30 KiB); a cap past those would cost registers (spills) for
// no occupancy.
func sortResidentBlocks(want, smem int, info *DeviceInfo) int {
	if want <= 0 || info.MaxSharedPerMultiprocessor <= 0 || smem <= 0 {
		return want
	}
	return max(1, min(want, info.MaxSharedPerMultiprocessor/(smem+max(0, info.ReservedSharedPerBlock))))
}

// blockSort sorts rows of at most a tile in shared memory.
func blockSort(s *Stream, sp *kernel.RadixBlockSort, keys, vals *header, rows, rowLen int, outK, outV *header) error {
	fn, err := s.dev.kernel(sp)
	if err != nil {
		return err
	}
	rpb := sp.Tile() / rowLen
	grid := (rows + rpb - 1) / rpb
	if grid > 1<<31-1 {
		return fmt.Errorf("gpu: sort of %d rows: %w", rows, ErrNotSupported)
	}
	l := newLaunchArgs()
	l.hdr(keys, Read)
	sortBuf{h: outK, mode: Write}.add(&l)
	sortBuf{h: vals, mode: Read}.add(&l)
	sortBuf{h: outV, mode: Write}.add(&l)
	l.u64(uint64(rows))
	l.u64(uint64(rowLen))
	l.u64(uint64(rpb))
	return l.launch(s, fn, launchGeometry(grid, 1, kernel.SortBlock))
}

// sortBuf is one of a radix pass's optional buffers: an array (h), a temporary buffer
// (b), or neither (a null pointer).
type sortBuf struct {
	h    *header
	b    *Buffer
	mode AccessMode
}

// add adds the buffer to l.
func (x sortBuf) add(l *launchArgs) {
	switch {
	case x.h != nil:
		l.hdr(x.h, x.mode)
	case x.b != nil:
		l.buf(x.b, x.mode)
	default:
		l.null()
	}
}

// radixSort is the onesweep radix sort of rows longer than a block's tile.
func radixSort(s *Stream, sp *kernel.RadixPass, cfg sortConfig, keys, vals *header, rows, rowLen int, outK, outV *header) error {
	d := s.dev
	P := sp.Order.Passes()
	tile := sp.Tile()
	tpr := (rowLen + tile - 1) / tile
	segMax := min(kernel.SortSegmentMax, max(cfg.SegMax, tile))
	maxLaunch := segMax / tile
	// Histogram chunks: about 4 blocks per multiprocessor (one wave of them: each
	// takes 32 KiB of shared memory and 47 registers a thread), never across a segment.
	sms := max(1, d.info.Multiprocessors)
	chunkTiles := max(1, (rows*tpr+4*sms-1)/(4*sms))
	tps, segs := tpr, 1
	if rowLen > segMax {
		chunkTiles = min(chunkTiles, maxLaunch)
		tps = maxLaunch / chunkTiles * chunkTiles
		segs = (tpr + tps - 1) / tps
	}
	chunkTiles = min(chunkTiles, tps)
	segLen := tps * tile
	// Launch groups: whole rows (one segment each) up to maxLaunch tiles, or one
	// segment of a long row.
	var groups, rowsPerGroup, maxTiles int
	if segs == 1 {
		rowsPerGroup = max(1, maxLaunch/tpr)
		groups = (rows + rowsPerGroup - 1) / rowsPerGroup
		maxTiles = min(rows, rowsPerGroup) * tpr
	} else {
		groups = rows * segs
		maxTiles = tps
	}
	chunk := chunkTiles * tile
	chunks := (rowLen + chunk - 1) / chunk
	store := uint64(0)
	if chunks == segs {
		store = 1
	}
	if int64(rows)*int64(chunks) > 1<<31-1 || int64(rows)*int64(P) > 1<<31-1 {
		return fmt.Errorf("gpu: sort of %d rows of %d: %w", rows, rowLen, ErrNotSupported)
	}
	hist := &kernel.RadixHist{Order: sp.Order, Items: cfg.HistItems, Lean: cfg.HistLean}
	pdl := sortPDL(cfg, &d.info)
	plan := &kernel.RadixPlan{Passes: P, GridDep: pdl}
	fnHist, err := d.kernel(hist)
	if err != nil {
		return err
	}
	fnPlan, err := d.kernel(plan)
	if err != nil {
		return err
	}
	fnPass, err := d.kernel(sp)
	if err != nil {
		return err
	}
	if n := sp.DynamicBytes(); n > 0 {
		if err := fnPass.raiseSharedLimit(n); err != nil {
			return err
		}
	}
	// Work, one allocation: the counts, the plan flags, the two look-back status
	// halves and the base offsets; one memset zeroes the plan, the passes' tile
	// counters and the first status half (and the counts, when blocks add to them).
	nseg := rows * segs
	histBytes := int64(nseg) * int64(P) * kernel.RadixDigits * 4
	statusBytes := int64(kernel.StatusBytes(maxTiles))
	planOff := histBytes
	planBytes := int64(kernel.SortPlanBytes + kernel.SortCounterBytes(P, groups)) // (the passes' plan and counters)
	// The status 128-byte aligned: a tile's status words are whole cache lines.
	statusOff := (planOff + planBytes + 127) &^ 127
	baseOff := statusOff + statusBytes
	work, err := s.Alloc(baseOff + 2*histBytes)
	if err != nil {
		return err
	}
	defer work.Free()
	// Ping-pong buffers, allocated before the first enqueue: an allocation that fails
	// leaves nothing behind.
	n := rows * rowLen
	ks := sp.Order.Size()
	var tmps [4]*Buffer
	nt := 0
	defer func() {
		for _, b := range tmps[:nt] {
			b.Free()
		}
	}()
	alloc := func(size int) (sortBuf, error) {
		b, err := s.Alloc(int64(size))
		if err != nil {
			return sortBuf{}, err
		}
		tmps[nt] = b
		nt++
		return sortBuf{b: b, mode: ReadWrite}, nil
	}
	// With m active passes, pass k writes keyA when m-1-k is even (k < m-1), keyB
	// when odd: one pass needs neither, two keyB only, three or more both.
	var keyA, keyB, keyFinal sortBuf
	if P >= 2 {
		if keyB, err = alloc(n * ks); err != nil {
			return err
		}
	}
	if outK != nil {
		keyA, keyFinal = sortBuf{h: outK, mode: ReadWrite}, sortBuf{h: outK, mode: ReadWrite}
	} else if P >= 3 {
		if keyA, err = alloc(n * ks); err != nil {
			return err
		}
	}
	var valIn, valA, valB, valFinal sortBuf
	switch sp.Val {
	case kernel.ValIndex:
		valFinal = sortBuf{h: outV, mode: ReadWrite}
		if P >= 3 {
			if valA, err = alloc(n * sp.ValSize); err != nil {
				return err
			}
		}
		if P >= 2 {
			if valB, err = alloc(n * sp.ValSize); err != nil {
				return err
			}
		}
	case kernel.ValPayload:
		valIn = sortBuf{h: vals, mode: Read}
		valA, valFinal = sortBuf{h: outV, mode: ReadWrite}, sortBuf{h: outV, mode: ReadWrite}
		if P >= 2 {
			if valB, err = alloc(n * sp.ValSize); err != nil {
				return err
			}
		}
	}
	zeroFrom := planOff
	if store == 0 {
		zeroFrom = 0
	}
	if err := sliceMemset(s, work, zeroFrom, statusOff+statusBytes/2-zeroFrom); err != nil {
		return err
	}
	// The work's parts: the counts, the plan flags, the look-back status and the base
	// offsets.
	part := func(l *launchArgs, off, n int64, mode AccessMode) {
		l.hold(work)
		l.span(work.a, work.off+off, mode, work.off+off, n)
	}
	hist0 := func(l *launchArgs, mode AccessMode) { part(l, 0, histBytes, mode) }
	block := kernel.SortBlock
	l := newLaunchArgs()
	l.hdr(keys, Read)
	hist0(&l, ReadWrite)
	for _, v := range [...]uint64{uint64(rowLen), uint64(chunk), uint64(chunks), uint64(segLen), uint64(segs), store} {
		l.u64(v)
	}
	if err := l.launch(s, fnHist, launchGeometry(rows*chunks, 1, block)); err != nil {
		return err
	}
	l = newLaunchArgs()
	hist0(&l, Read)
	part(&l, baseOff, 2*histBytes, Write)
	part(&l, planOff, kernel.SortPlanBytes, ReadWrite)
	l.u64(uint64(rowLen))
	l.u64(uint64(segs))
	lc := launchGeometry(rows*P, 1, block)
	lc.Programmatic = pdl
	if err := l.launch(s, fnPlan, lc); err != nil {
		return err
	}
	for pass := 0; pass < P; pass++ {
		for g := 0; g < groups; g++ {
			var tileBase, tiles int
			if segs == 1 {
				r0 := g * rowsPerGroup
				tileBase, tiles = r0*tpr, (min(rows, r0+rowsPerGroup)-r0)*tpr
			} else {
				r, q := g/segs, g%segs
				tileBase = r*tpr + q*tps
				tiles = min(tpr, (q+1)*tps) - q*tps
			}
			l := newLaunchArgs()
			l.hdr(keys, Read)
			for _, x := range [...]sortBuf{keyA, keyB, keyFinal, valIn, valA, valB, valFinal} {
				x.add(&l)
			}
			part(&l, planOff, planBytes, ReadWrite)
			part(&l, baseOff, 2*histBytes, Read)
			part(&l, statusOff, statusBytes, ReadWrite)
			for _, v := range [...]uint64{uint64(pass), uint64(rowLen), uint64(tpr), uint64(tps),
				uint64(segs), uint64(tileBase), uint64(maxTiles), uint64(groups), uint64(g)} {
				l.u64(v)
			}
			lc := launchGeometry(tiles, 1, block)
			lc.Programmatic = pdl
			lc.SharedMem = uint32(sp.DynamicBytes())
			if err := l.launch(s, fnPass, lc); err != nil {
				return err
			}
		}
	}
	return nil
}

// sliceMemset zeroes n bytes (a multiple of 4) at off in b on s.
func sliceMemset(s *Stream, b *Buffer, off, n int64) error {
	if n == 0 {
		return nil
	}
	v, err := b.Slice(off, n)
	if err != nil {
		return err
	}
	return s.MemsetD32(v, 0)
}
