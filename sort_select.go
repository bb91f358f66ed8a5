package gpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/internal/kernel"
)

// TopK returns the k largest elements of a along axis (torch.topk), in decreasing
// order, and their indices (int64) along the axis; with Smallest(), the k smallest in
// increasing order. Equal elements come in index order (the first k of a stable sort,
// descending or ascending), and NaN counts as the largest value (torch.topk). The
// results have a's shape with the axis of length k (0 <= k <= its length, else an error
// wrapping ErrInvalidValue); a 0-d array is one element (k must be 1; the results are
// 0-d).
//
// On CUDA, rows longer than a block's tile with k up to a tile select rather than sort.
// Rows of 4-byte keys with k up to 512 (up to 256 rows) take an 11-bit radix select
// that buffers the k-th key's bucket (after RAFT's AIR top-k): three launches, two reads
// of the keys, no host round trip, on the H200 150 µs for the 100 largest of 2^24
// float32. Others, and those whose last bucket overflows its buffer (many ties), take
// a most-significant-digit radix select: one histogram pass per 8-bit digit finds the
// k-th key, the pass's last block picking the digit; one pass counts the keys before
// it per tile, one gathers the k keys in index order, and a block sort, or for k up to
// 512 a rank sort, orders them (Tuning.TopKVariant selects among the designs). Other
// rows sort whole and keep k.
func TopK[T Elem](s *Stream, a *Array[T], k, axis int, opts ...SortOption) (*Array[T], *Array[int64], error) {
	if err := nonNil(a); err != nil {
		return nil, nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, nil, err
	}
	o, err := sortOpts("TopK", opts)
	if err != nil {
		return nil, nil, err
	}
	ax, err := sortAxisOf(a.shape, axis)
	if err != nil {
		return nil, nil, err
	}
	n := 1
	if len(a.shape) > 0 {
		n = a.shape[ax]
	}
	if k < 0 || k > n {
		return nil, nil, fmt.Errorf("gpu: top %d of an axis of %d: %w", k, n, ErrInvalidValue)
	}
	shape := slices.Clone(a.shape)
	if len(shape) > 0 {
		shape[ax] = k
	} else if k == 0 {
		return nil, nil, fmt.Errorf("gpu: top 0 of a 0-d array: %w", ErrInvalidValue)
	}
	vals, err := Empty[T](s, shape...)
	if err != nil {
		return nil, nil, err
	}
	idx, err := Empty[int64](s, shape...)
	if err != nil {
		vals.Free()
		return nil, nil, err
	}
	if k > 0 {
		mask := make([]bool, len(a.shape))
		if len(mask) > 0 {
			mask[ax] = true
		}
		err = alongAxes(s, []*header{a.header()}, []*header{vals.header(), idx.header()}, mask, k,
			func(in, out []*header, rows, n int) error {
				return topkRows(s, in[0], rows, n, k, !o.smallest, out[0], out[1])
			})
	}
	if err != nil {
		vals.Free()
		idx.Free()
		return nil, nil, err
	}
	return vals, idx, nil
}

// topkHistBlocks is the select histogram's blocks a multiprocessor with
// Tuning.TopKVariant 2 but for the vector kernel (8): one wave of them (6 fit with the
// 40 registers of most scalar kernels under CUDA 13's ptxas).
const topkHistBlocks = 6

// topkRows writes the k smallest keys of each row in the order desc (the largest
// first when desc) and their indices into outK and outV ([rows, k]).
func topkRows(s *Stream, keys *header, rows, n, k int, desc bool, outK, outV *header) error {
	d := s.dev
	cfg := *sortCfg.Load()
	order := kernel.SortKey{Type: keys.dt, Descending: desc}
	bs := &kernel.RadixBlockSort{Order: order, Items: cfg.Block8, Val: kernel.ValPayload, ValSize: 8}
	blockKeys := cfg.Block4
	if keys.dt.Size() == 8 {
		blockKeys = cfg.Block8
	}
	if n <= kernel.SortBlock*blockKeys || k > bs.Tile() || uint64(n) >= 1<<32 {
		// Sort whole rows and keep their first k (rows of 2^32 keys or more too: the
		// radix select counts a bucket in u32).
		if k == n {
			return sortRows(s, keys, nil, rows, n, desc, outK, outV)
		}
		tk, err := s.Alloc(int64(rows * n * keys.dt.Size()))
		if err != nil {
			return err
		}
		defer tk.Free()
		tv, err := s.Alloc(int64(rows * n * 8))
		if err != nil {
			return err
		}
		defer tv.Free()
		hk := &header{buf: tk, dt: keys.dt, shape: []int{rows, n}, strides: []int{n, 1}}
		hv := &header{buf: tv, dt: dtype.Int64, shape: []int{rows, n}, strides: []int{n, 1}}
		if err := sortRows(s, keys, nil, rows, n, desc, hk, hv); err != nil {
			return err
		}
		for _, pr := range [][2]*header{{outK, hk}, {outV, hv}} {
			v := &header{buf: pr[1].buf, dt: pr[1].dt, shape: []int{rows, k}, strides: []int{n, 1}}
			o := &header{buf: pr[0].buf, dt: pr[0].dt, shape: []int{rows, k}, strides: []int{k, 1}, off: pr[0].off}
			if err := permuteInto(s, o, v); err != nil {
				return err
			}
		}
		return nil
	}
	tu := d.tuning()
	if tu.TopKVariant == 3 && keys.dt.Size() == 4 && k <= kernel.TopKRankMax && rows <= topkRadixMaxRows {
		return topkRadix(s, keys, rows, n, k, order, outK, outV)
	}
	// Radix select.
	v2 := tu.TopKVariant >= 2
	tiles := (n + kernel.SortBlock*16 - 1) / (kernel.SortBlock * 16)
	if int64(rows)*int64(tiles) > 1<<31-1 {
		return fmt.Errorf("gpu: top-k of %d rows of %d: %w", rows, n, ErrNotSupported)
	}
	state, err := s.Alloc(int64(rows * 16))
	if err != nil {
		return err
	}
	defer state.Free()
	if err := radixSelect(s, keys, rows, n, k, order, v2, state); err != nil {
		return err
	}
	return topkGather(s, keys, rows, n, k, order, state, v2, nil, bs, outK, outV)
}

// radixSelect finds the k-th smallest key (1 <= k <= n) of each of rows contiguous
// rows of keys by the most-significant-digit radix select (internal/kernel's
// SelectHist): one histogram pass per 8-bit digit, then a SelectStep launch, or with
// fused (Tuning.TopKVariant 2 on) the pass's last block picking the digit. It leaves
// in state (u64 [rows][2]) the ordered key T of the k-th smallest and the number of
// keys equal to T among the k smallest (its tie rank in index order, 1-based). With k
// 0 (fused only) each row's k comes from state, which holds (0, k) (SelectHist.KState;
// a row whose k is 0 keeps (0, 0)).
func radixSelect(s *Stream, keys *header, rows, n, k int, order kernel.SortKey, fused bool, state *Buffer) error {
	d := s.dev
	P := order.Passes()
	items := 16
	tile := kernel.SortBlock * items
	sms := max(1, d.info.Multiprocessors)
	waves := 4 * sms
	vector := fused && keys.dt.Size() == 4 && headerPtr(keys)%16 == 0 && (rows == 1 || n*4%16 == 0)
	if vector {
		waves = 8 * sms // (32 registers: 8 blocks an SM)
	} else if fused {
		waves = topkHistBlocks * sms
	}
	chunk, chunks := rowChunks(rows, n, tile, waves)
	if int64(rows)*int64(chunks) > 1<<31-1 {
		return fmt.Errorf("gpu: select of %d rows of %d: %w", rows, n, ErrNotSupported)
	}
	hist := &kernel.SelectHist{Order: order, Items: 8}
	step := &kernel.SelectStep{Passes: P}
	if fused {
		hist.Fused = true
		hist.KState = k == 0
		// 16-byte loads of 4-byte keys (8-byte keys: the scalar kernel, which needs
		// fewer registers than their vector one).
		hist.Vector = vector
	}
	var fns [2]*Function
	for i, sp := range []kernelSpec{hist, step} {
		fn, err := d.kernel(sp)
		if err != nil {
			return err
		}
		fns[i] = fn
	}
	histLen := rows * kernel.RadixDigits * 4
	if hist.Fused {
		histLen += rows * 4 // the tickets
	}
	histB, err := s.allocZeroed(int64(histLen))
	if err != nil {
		return err
	}
	defer histB.Free()
	block := Dim3{X: kernel.SortBlock}
	for p := P - 1; p >= 0; p-- {
		if hist.Fused {
			if err := s.Launch(fns[0], LaunchConfig{Grid: Dim3{X: rows * chunks}, Block: block}, In(keys), InOut(histB), InOut(state),
				uint64(n), uint64(chunk), uint64(chunks), uint64(p), uint64(k)); err != nil {
				return err
			}
			continue
		}
		if err := s.Launch(fns[0], LaunchConfig{Grid: Dim3{X: rows * chunks}, Block: block}, In(keys), InOut(histB), InOut(state),
			uint64(n), uint64(chunk), uint64(chunks), uint64(p)); err != nil {
			return err
		}
		if err := s.Launch(fns[1], LaunchConfig{Grid: Dim3{X: rows}, Block: block}, InOut(histB), InOut(state),
			uint64(k), uint64(p)); err != nil {
			return err
		}
	}
	return nil
}

// topkGather ends topkRows after the radix select (state: the k-th smallest key T and
// rem, SelectHist's): TopKCount counts each tile's keys below and equal to T, a scan
// turns the counts into offsets, TopKGather writes the k in index order and a rank
// sort (v2, k up to kernel.TopKRankMax) or bs orders them into outK and outV. With a
// guard (a u32 flag on the device; TopKRadix's fallback flag) the kernels return at
// once when it is zero (the scan runs on whatever the counts hold).
func topkGather(s *Stream, keys *header, rows, n, k int, order kernel.SortKey, state *Buffer, v2 bool, guard *header,
	bs *kernel.RadixBlockSort, outK, outV *header) error {
	d := s.dev
	const items = 16
	tiles := (n + kernel.SortBlock*items - 1) / (kernel.SortBlock * items)
	block := Dim3{X: kernel.SortBlock}
	count := &kernel.TopKCount{Order: order, Items: items, Striped: v2, Guard: guard != nil}
	gather := &kernel.TopKGather{Order: order, Items: items, Skip: v2, Guard: guard != nil}
	var fns [2]*Function
	for i, sp := range []kernelSpec{count, gather} {
		fn, err := d.kernel(sp)
		if err != nil {
			return err
		}
		fns[i] = fn
	}
	var guardArgs []any
	if guard != nil {
		guardArgs = []any{In(guard)}
	}
	counts, err := s.Alloc(int64(rows * tiles * 16))
	if err != nil {
		return err
	}
	defer counts.Free()
	prefix, err := s.Alloc(int64(rows * tiles * 16))
	if err != nil {
		return err
	}
	defer prefix.Free()
	tg := LaunchConfig{Grid: Dim3{X: rows * tiles}, Block: block}
	if err := s.Launch(fns[0], tg, append([]any{In(keys), In(state), Out(counts), uint64(n), uint64(tiles)}, guardArgs...)...); err != nil {
		return err
	}
	ch := &header{buf: counts, dt: dtype.Int64, shape: []int{rows, tiles, 2}, strides: []int{2 * tiles, 2, 1}}
	ph := &header{buf: prefix, dt: dtype.Int64, shape: []int{rows, tiles, 2}, strides: []int{2 * tiles, 2, 1}}
	if err := scanInto(s, ph, ch, kernel.Combine{Op: kernel.OpSum, Type: dtype.Int64}, 1, true, 0); err != nil {
		return err
	}
	candK, err := s.Alloc(int64(rows * k * keys.dt.Size()))
	if err != nil {
		return err
	}
	defer candK.Free()
	candV, err := s.Alloc(int64(rows * k * 8))
	if err != nil {
		return err
	}
	defer candV.Free()
	var countsArg any = DevicePtr(0)
	if v2 {
		countsArg = In(counts)
	}
	if err := s.Launch(fns[1], tg, append([]any{In(keys), In(state), In(prefix), Out(candK), Out(candV),
		uint64(n), uint64(tiles), uint64(k), countsArg}, guardArgs...)...); err != nil {
		return err
	}
	if v2 && k <= kernel.TopKRankMax {
		fn, err := d.kernel(&kernel.TopKRankSort{Order: order, Guard: guard != nil})
		if err != nil {
			return err
		}
		return s.Launch(fn, LaunchConfig{Grid: Dim3{X: rows}, Block: block},
			append([]any{In(candK), Out(outK), In(candV), Out(outV), uint64(rows), uint64(k)}, guardArgs...)...)
	}
	if guard != nil {
		return fmt.Errorf("gpu: top %d with a guard: %w", k, ErrNotSupported)
	}
	rpb := bs.Tile() / k
	fn, err := d.kernel(bs)
	if err != nil {
		return err
	}
	return s.Launch(fn, LaunchConfig{Grid: Dim3{X: (rows + rpb - 1) / rpb}, Block: block},
		In(candK), Out(outK), In(candV), Out(outV), uint64(rows), uint64(k), uint64(rpb))
}

// topkRadixMaxRows is the most rows that Tuning.TopKVariant 3 takes (8 KiB of scratch
// a row); more take variant 2.
const topkRadixMaxRows = 256

// topkRadixBufMax is the most bytes topkRadix's first candidate buffer takes, all rows
// together (256 MiB).
const topkRadixBufMax = 256 << 20

// topkRadix is topkRows by internal/kernel's TopKRadix (Tuning.TopKVariant 3; 4-byte
// keys, k up to kernel.TopKRankMax): three passes without a round trip to the host,
// then topkGather guarded by the fallback flag, which returns at once unless a row's
// last bucket overflowed its candidate buffer. buf1 holds a quarter of a row (at most
// topkRadixBufMax bytes for all rows), buf2 at most 2^16 keys.
func topkRadix(s *Stream, keys *header, rows, n, k int, order kernel.SortKey, outK, outV *header) error {
	d := s.dev
	sms := max(1, d.info.Multiprocessors)
	chunk, chunks := rowChunks(rows, n, kernel.TopKRadixTile, kernel.TopKRadixBlocksPerSM*sms) // (one wave)
	if int64(rows)*int64(max(chunks, (n+kernel.SortBlock*16-1)/(kernel.SortBlock*16))) > 1<<31-1 || int64(n) > 1<<31-1 {
		return fmt.Errorf("gpu: top-k of %d rows of %d: %w", rows, n, ErrNotSupported)
	}
	// The first candidate buffer: a quarter of a row, at most topkRadixBufMax bytes
	// for all rows (a row whose bucket overflows it has pass 2 read its keys again).
	cap1 := max(2, min((n/4+2)&^1, (topkRadixBufMax/(8*rows))&^1))
	cap2 := min(cap1, 1<<16)
	vector := headerPtr(keys)%16 == 0 && (rows == 1 || n%4 == 0)
	var fns [3]*Function
	for p := range fns {
		fn, err := d.kernel(&kernel.TopKRadix{Order: order, Pass: p, Vector: vector})
		if err != nil {
			return err
		}
		fns[p] = fn
	}
	state, err := s.Alloc(int64(kernel.TopKRadixStateBytes(rows)))
	if err != nil {
		return err
	}
	defer state.Free()
	var bufs [3]*Buffer
	for i, size := range []int{rows * cap1 * 8, rows * cap2 * 8, rows * k * 8} {
		b, err := s.Alloc(int64(size))
		if err != nil {
			return err
		}
		defer b.Free()
		bufs[i] = b
	}
	sc, err := s.scratch(scratchSelect, rows*kernel.TopKRadixScratchWords*4, true)
	if err != nil {
		return err
	}
	launched := 0
	for p := range fns {
		if err = s.Launch(fns[p], LaunchConfig{Grid: Dim3{X: rows * chunks}, Block: Dim3{X: kernel.SortBlock}},
			In(keys), sc.argument(), InOut(state), InOut(bufs[0]), InOut(bufs[1]), InOut(bufs[2]), Out(outK), Out(outV),
			uint64(n), uint64(chunk), uint64(chunks), uint64(k), uint64(cap1), uint64(cap2)); err != nil {
			break
		}
		launched++
	}
	sc.release(launched == len(fns)) // (pass 2 leaves the scratch zero)
	if err != nil {
		return err
	}
	flag := &header{buf: state, dt: dtype.Uint32, shape: []int{1}, strides: []int{1}, off: rows * 4}
	return topkGather(s, keys, rows, n, k, order, state, true, flag, nil, outK, outV)
}

// Median returns the median of a's elements over the axes (all by default;
// numpy.median): the middle element of the sorted values, or the mean of the two
// middle ones, computed in float64 and rounded once to R. A NaN among them gives NaN;
// no elements give NaN (NumPy warns and returns NaN). The result type R is a float type
// (NumPy: float64 for integer inputs, the input's for floats; MedianOf keeps a float
// array's type without spelling it).
//
// Options, as the reductions': Axes (the axes reduced, negative counting from the end;
// all by default) and KeepDims. The result has a's shape without the reduced axes (0-d
// for all of them), or with them as length 1 under KeepDims; Median, Quantile,
// NanMedian and NanQuantile share these. An axis out of range or repeated, or Ddof
// (Var's and Std's alone), is an error wrapping ErrInvalidValue.
//
// Rows (the elements of one result) of at least Tuning.QuantileSelect elements (2^16 by
// default), in calls of at least Tuning.QuantileSelectTotal elements (2^20), are not
// sorted: a radix select finds the (lower) middle element, one
// histogram pass per byte of the element type, each reading the row once, with no
// copy of the row (a sort reads and writes it once per byte); then one more read
// counts the keys up to that element and finds the least above it, which give the
// upper middle element of an even count, and in float rows the NaNs and the zeros of
// each sign (the sign of a zero in the middle: the zero that the sort's stable order
// puts there); integer rows of an odd count skip it. The results are the sort's, bit
// for bit. A float32 median reads the keys 5 times, a float64 one 9. Where a middle
// element is a zero and the row holds zeros of both signs (x*mask with negative x
// makes -0), its sign is that of the zero the stable order puts there: the counting
// read also stores the zeros of each chunk of the row (one per block of that read),
// and one block a row finds the chunk holding that zero from those counts and reads
// that chunk alone in order (two chunks where an even count's two middles are zeros
// of different chunks).
func Median[R Float, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, nil, true, false, false, opts)
}

// Quantile returns the q-th quantile (0 <= q <= 1) of a's elements over the axes
// (numpy.quantile with the default linear method): the sorted values' position
// q*(n-1), interpolated between its neighbours as NumPy does (in float64, rounded once
// to R). A NaN among the values gives NaN; no values give NaN. As NumPy's, the
// interpolation a + (b-a)*t is NaN where a neighbour is infinite and b-a is NaN or
// infinite, even at a position on an element (t = 0): numpy.quantile([4, 5, inf], 0.5)
// is NaN where numpy.median gives 5. Bools count as 0 and 1 and interpolate (q = 0.3
// of [false false true true true] is 0.2), as Median's mean of two middle bools does
// and as NumPy's median does; numpy.quantile and numpy.nanquantile instead raise a
// TypeError for bool arrays (their interpolation subtracts bools). Options and the
// result's shape: Median's. q outside [0, 1], or NaN, is an error wrapping
// ErrInvalidValue.
//
// Rows of at least Tuning.QuantileSelect elements, in calls of at least
// Tuning.QuantileSelectTotal, select instead of sorting, as
// Median's do: the lower neighbour by a radix select, the upper one (which NumPy's
// formula reads even at t = 0, but for the row's last element) from the one counting
// read after it; so do Quantiles of one q. Several qs sort.
func Quantile[R Float, T Elem](s *Stream, a *Array[T], q float64, opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, []float64{q}, false, false, false, opts)
}

// Quantiles returns the quantiles qs of a over the axes as one array whose first axis
// runs over qs (numpy.quantile with an array of q; no qs give an empty array):
// Quantile's for each q (its NaN and infinity rules), shape [len(qs)] followed by
// Quantile's result shape (Median's options). A q outside [0, 1], or NaN, is an
// error wrapping ErrInvalidValue. One q selects as Quantile does; several sort.
func Quantiles[R Float, T Elem](s *Stream, a *Array[T], qs []float64, opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, qs, false, true, false, opts)
}

// NanMedian returns the median of a's elements over the axes leaving NaNs out
// (numpy.nanmedian): Median's, of the elements that aren't NaN; where all are NaN, or
// there are none, NaN (NumPy warns and returns NaN). Of integers and bools, Median's.
//
// Float rows of at least Tuning.QuantileSelect elements, in calls of at least
// Tuning.QuantileSelectTotal, select as Median's do, with one
// more read of the row before the select counting its NaNs (the middle positions are
// those of the elements that aren't NaN, which order first; each row's own): a
// float32 NanMedian reads the keys 6 times. The results are the sort's, bit for bit.
func NanMedian[R Float, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, nil, true, false, true, opts)
}

// NanQuantile returns the q-th quantile of a's elements over the axes leaving NaNs out
// (numpy.nanquantile, linear method): Quantile's, of the elements that aren't NaN;
// where all are NaN, or there are none, NaN. q outside [0, 1], or NaN, is an error
// wrapping ErrInvalidValue. Long rows select as NanMedian's do.
func NanQuantile[R Float, T Elem](s *Stream, a *Array[T], q float64, opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, []float64{q}, false, false, true, opts)
}

// NanQuantiles returns the quantiles qs of a over the axes leaving NaNs out, as one
// array whose first axis runs over qs (numpy.nanquantile with an array of q; no qs
// give an empty array): NanQuantile's for each q. A q outside [0, 1], or NaN, is an
// error wrapping ErrInvalidValue. One q selects as NanQuantile does; several sort.
func NanQuantiles[R Float, T Elem](s *Stream, a *Array[T], qs []float64, opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, qs, false, true, true, opts)
}

// quantiles computes quantiles qs (or the median) of a over the axes of opts; lead
// gives the result a first axis over qs; skipNaN leaves each row's NaNs out (sorted
// last, they are the end of the sorted row: QuantileGather.SkipNaN).
func quantiles[R Float, T Elem](s *Stream, a *Array[T], qs []float64, median, lead, skipNaN bool, opts []ReduceOption) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, err
	}
	for _, q := range qs {
		if !(q >= 0 && q <= 1) {
			return nil, fmt.Errorf("gpu: quantile %v outside [0, 1]: %w", q, ErrInvalidValue)
		}
	}
	mask, outShape, err := resolveAxes(a.shape, opts, false)
	if err != nil {
		return nil, err
	}
	nq := max(len(qs), 1)
	shape := outShape
	if lead {
		shape = append([]int{len(qs)}, outShape...) // no qs: an empty array (numpy.quantile(a, []))
	}
	out, err := Empty[R](s, shape...)
	if err != nil {
		return nil, err
	}
	n := 1
	for k, m := range mask {
		if m {
			n *= a.shape[k]
		}
	}
	rt := dtype.Of[R]()
	fail := func(err error) (*Array[R], error) {
		out.Free()
		return nil, err
	}
	if out.Size() == 0 {
		return out, nil
	}
	if n == 0 {
		// No values: NaN (NumPy's mean of nothing), the canonical one (the package's NaN
		// policy), rounded to R.
		if err := Fill(s, out, fromFloat[R](math.Float64frombits(fp.NaN64Bits))); err != nil {
			return fail(err)
		}
		return out, nil
	}
	sp := &kernel.QuantileGather{In: a.dt, Out: rt, Median: median, SkipNaN: skipNaN && a.dt.IsFloat()}
	fn, err := s.dev.kernel(sp)
	if err != nil {
		return fail(err)
	}
	var qb *Buffer
	if !median {
		qa, err := FromSlice(s, qs) // (in a capture: copied at once, a constant of the graph)
		if err != nil {
			return fail(err)
		}
		defer qa.Free()
		qb = qa.buf
	}
	// Long rows select rather than sort (Tuning.QuantileSelect, QuantileSelectTotal).
	tu := s.dev.tuning()
	selMin := tu.QuantileSelect
	if !median && len(qs) != 1 || a.Size() < tu.QuantileSelectTotal {
		selMin = 0
	}
	err = alongAxes(s, []*header{a.header()}, nil, mask, n, func(in, _ []*header, rows, n int) error {
		if selMin > 0 && n >= selMin && uint64(n) < 1<<32 { // (the select counts a bucket in u32)
			q := 0.0
			if !median {
				q = qs[0]
			}
			return quantileSelect(s, in[0], rows, n, median, skipNaN, q, qb, rt, out.header())
		}
		sorted, err := s.Alloc(int64(rows * n * a.dt.Size()))
		if err != nil {
			return err
		}
		defer sorted.Free()
		hs := &header{buf: sorted, dt: a.dt, shape: []int{rows, n}, strides: []int{n, 1}}
		if err := sortRows(s, in[0], nil, rows, n, false, hs, nil); err != nil {
			return err
		}
		qarg := any(DevicePtr(0))
		if qb != nil {
			qarg = In(qb)
		}
		total := rows * nq
		grid := max(1, min((total+kernel.SortBlock-1)/kernel.SortBlock, 8*max(1, s.dev.info.Multiprocessors)))
		return s.Launch(fn, LaunchConfig{Grid: Dim3{X: grid}, Block: Dim3{X: kernel.SortBlock}},
			In(hs), Out(out), qarg, uint64(rows), uint64(n), uint64(nq))
	})
	if err != nil {
		return fail(err)
	}
	return out, nil
}

// quantileSelect writes the median (median) or quantile q of each of rows contiguous
// rows of n keys into out ([rows] of rt) by selection (Tuning.QuantileSelect), with
// skipNaN (float keys) leaving each row's NaNs out; qb holds q (float64; nil with
// median). A radix select (radixSelect, fused) finds position lo that QuantileGather
// would read of the sorted row (internal/kernel's QuantilePositions); one more read
// of the rows, QuantileFlags, counts each float row's NaNs and zeros of each sign (and
// stores each chunk's zeros: where a row's zeros have both signs, QuantileSelect finds
// the chunk of a middle zero from them) and, where the upper neighbour hi = lo+1 is
// read too, the keys up to lo's and the least above it, from which QuantileSelect
// derives hi's select and applies the sort path's arithmetic. With skipNaN the positions depend on each row's NaNs: QuantileFlags
// counts them first, QuantileK writes each row's k for the select (SelectHist.KState),
// and a second QuantileFlags pass counts around lo's key.
func quantileSelect(s *Stream, keys *header, rows, n int, median, skipNaN bool, q float64, qb *Buffer, rt dtype.DType, out *header) error {
	d := s.dev
	if int64(rows) > 1<<31-1 {
		return fmt.Errorf("gpu: quantiles of %d rows: %w", rows, ErrNotSupported)
	}
	order := kernel.SortKey{Type: keys.dt}
	float := keys.dt.IsFloat()
	skipNaN = skipNaN && float
	sms := max(1, d.info.Multiprocessors)
	block := Dim3{X: kernel.SortBlock}
	// QuantileFlags' blocks: chunks of each row, about 8 blocks a multiprocessor.
	chunk, chunks := rowChunks(rows, n, kernel.SortBlock*(&kernel.QuantileFlags{Type: keys.dt}).Items(), 8*sms)
	if int64(rows)*int64(chunks) > 1<<31-1 {
		return fmt.Errorf("gpu: quantiles of %d rows of %d: %w", rows, n, ErrNotSupported)
	}
	state, err := s.Alloc(int64(rows * 16))
	if err != nil {
		return err
	}
	defer state.Free()
	lo, hi := kernel.QuantilePositions(median, q, n) // (with skipNaN, each row's own)
	var flags *Buffer
	if float || hi != lo {
		if flags, err = s.allocZeroed(int64(rows * kernel.QuantileFlagsWords * 8)); err != nil {
			return err
		}
		defer flags.Free()
	}
	// Float rows: each chunk's zeros (QuantileFlags' Counts writes them all), where
	// QuantileSelect finds the zero of a position on the zero key in a row of both.
	var zeros *Buffer
	if float {
		if zeros, err = s.Alloc(int64(rows * chunks * 4)); err != nil {
			return err
		}
		defer zeros.Free()
	}
	flagsPass := func(counts, next bool) error {
		fn, err := d.kernel(&kernel.QuantileFlags{Type: keys.dt, Counts: counts, Next: next})
		if err != nil {
			return err
		}
		stateArg, zerosArg := any(DevicePtr(0)), any(DevicePtr(0))
		if next {
			stateArg = In(state)
		}
		if counts {
			zerosArg = Out(zeros)
		}
		return s.Launch(fn, LaunchConfig{Grid: Dim3{X: rows * chunks}, Block: block}, In(keys), InOut(flags), stateArg,
			uint64(n), uint64(chunk), uint64(chunks), zerosArg)
	}
	qarg := any(DevicePtr(0))
	if qb != nil {
		qarg = In(qb)
	}
	if skipNaN {
		// Each row's NaNs, its k (position lo+1 of its valid keys), the select, and
		// the counts around lo's key.
		if err := flagsPass(true, false); err != nil {
			return err
		}
		fn, err := d.kernel(&kernel.QuantileK{Median: median})
		if err != nil {
			return err
		}
		grid := max(1, min((rows+kernel.SortBlock-1)/kernel.SortBlock, 8*sms))
		if err := s.Launch(fn, LaunchConfig{Grid: Dim3{X: grid}, Block: block}, In(flags), Out(state), qarg,
			uint64(rows), uint64(n)); err != nil {
			return err
		}
		if err := radixSelect(s, keys, rows, n, 0, order, true, state); err != nil {
			return err
		}
		if err := flagsPass(false, true); err != nil {
			return err
		}
	} else {
		if err := radixSelect(s, keys, rows, n, lo+1, order, true, state); err != nil {
			return err
		}
		if flags != nil {
			if err := flagsPass(float, hi != lo); err != nil {
				return err
			}
		}
	}
	fn, err := d.kernel(&kernel.QuantileSelect{In: keys.dt, Out: rt, Median: median, SkipNaN: skipNaN})
	if err != nil {
		return err
	}
	flagsArg, zerosArg := any(DevicePtr(0)), any(DevicePtr(0))
	if flags != nil {
		flagsArg = In(flags)
	}
	if zeros != nil {
		zerosArg = In(zeros)
	}
	return s.Launch(fn, LaunchConfig{Grid: Dim3{X: rows}, Block: block}, In(keys), In(state), flagsArg,
		Out(out), qarg, uint64(rows), uint64(n), zerosArg, uint64(chunk), uint64(chunks))
}

// rowChunks cuts each of rows rows of n keys into chunks of whole tiles of tile keys,
// one block a chunk, about blocks blocks in all: chunk keys a chunk (at least a tile),
// chunks a row.
func rowChunks(rows, n, tile, blocks int) (chunk, chunks int) {
	tiles := (n + tile - 1) / tile
	chunk = max(1, (rows*tiles+blocks-1)/blocks) * tile
	return chunk, (n + chunk - 1) / chunk
}
