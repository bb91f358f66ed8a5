package gpu

import (
	"fmt"
	"math"
	"slices"

	"github.com/go-gpu/gpu/dtype"
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
// On CUDA, rows longer than a block's tile with k up to a tile select rather than sort
// (a most-significant-digit radix select: one histogram pass per 8-bit digit finds the
// k-th key, the pass's last block picking the digit; one pass counts the keys before
// it per tile, one gathers the k keys in index order, and a block sort, or for k up
// to 512 a rank sort, orders them; Tuning.TopKVariant 1 selects the first design);
// other rows sort whole and keep k.
func TopK[T Elem](s *Stream, a *Array[T], k, axis int, opts ...SortOption) (*Array[T], *Array[int64], error) {
	if err := nonNil(a); err != nil {
		return nil, nil, err
	}
	if err := nilStream(s); err != nil {
		return nil, nil, err
	}
	o, err := sortOpts(opts)
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
	if n <= kernel.SortBlock*blockKeys || k > bs.Tile() {
		// Sort whole rows and keep their first k.
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
	// Radix select.
	P := order.Passes()
	items := 16
	tile := kernel.SortBlock * items
	tiles := (n + tile - 1) / tile
	sms := max(1, d.info.Multiprocessors)
	v2 := d.tuning().TopKVariant == 2
	waves := 4 * sms
	vector := v2 && keys.dt.Size() == 4 && headerPtr(keys)%16 == 0 && (rows == 1 || n*4%16 == 0)
	if vector {
		waves = 8 * sms // (32 registers: 8 blocks an SM)
	} else if v2 {
		waves = topkHistBlocks * sms
	}
	chunkTiles := max(1, (rows*tiles+waves-1)/waves)
	chunk := chunkTiles * tile
	chunks := (n + chunk - 1) / chunk
	if int64(rows)*int64(max(chunks, tiles)) > 1<<31-1 {
		return fmt.Errorf("gpu: top-k of %d rows of %d: %w", rows, n, ErrNotSupported)
	}
	hist := &kernel.SelectHist{Order: order, Items: 8}
	step := &kernel.SelectStep{Passes: P}
	count := &kernel.TopKCount{Order: order, Items: items}
	gather := &kernel.TopKGather{Order: order, Items: items}
	if v2 {
		hist.Fused, count.Striped, gather.Skip = true, true, true
		// 16-byte loads of 4-byte keys (8-byte keys: the scalar kernel, which needs
		// fewer registers than their vector one).
		hist.Vector = vector
	}
	var fns [5]*Function
	for i, sp := range []kernelSpec{hist, step, count, gather, bs} {
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
	state, err := s.Alloc(int64(rows * 16))
	if err != nil {
		return err
	}
	defer state.Free()
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
	if err := s.Launch(fns[2], tg, In(keys), In(state), Out(counts), uint64(n), uint64(tiles)); err != nil {
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
	if err := s.Launch(fns[3], tg, In(keys), In(state), In(prefix), Out(candK), Out(candV),
		uint64(n), uint64(tiles), uint64(k), countsArg); err != nil {
		return err
	}
	if v2 && k <= kernel.TopKRankMax {
		fn, err := d.kernel(&kernel.TopKRankSort{Order: order})
		if err != nil {
			return err
		}
		return s.Launch(fn, LaunchConfig{Grid: Dim3{X: rows}, Block: block},
			In(candK), Out(outK), In(candV), Out(outV), uint64(rows), uint64(k))
	}
	rpb := bs.Tile() / k
	return s.Launch(fns[4], LaunchConfig{Grid: Dim3{X: (rows + rpb - 1) / rpb}, Block: block},
		In(candK), Out(outK), In(candV), Out(outV), uint64(rows), uint64(k), uint64(rpb))
}

// Median returns the median of a's elements over the axes (all by default;
// numpy.median): the middle element of the sorted values, or the mean of the two
// middle ones, computed in float64 and rounded once to R. A NaN among them gives NaN;
// no elements give NaN (NumPy warns and returns NaN). The result type R is a float type
// (NumPy: float64 for integer inputs, the input's for floats).
func Median[R Float, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, nil, true, false, opts)
}

// Quantile returns the q-th quantile (0 <= q <= 1) of a's elements over the axes
// (numpy.quantile with the default linear method): the sorted values' position
// q*(n-1), interpolated between its neighbours as NumPy does (in float64, rounded once
// to R). A NaN among the values gives NaN; no values give NaN.
func Quantile[R Float, T Elem](s *Stream, a *Array[T], q float64, opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, []float64{q}, false, false, opts)
}

// Quantiles returns the quantiles qs of a over the axes as one array whose first axis
// runs over qs (numpy.quantile with an array of q).
func Quantiles[R Float, T Elem](s *Stream, a *Array[T], qs []float64, opts ...ReduceOption) (*Array[R], error) {
	return quantiles[R](s, a, qs, false, true, opts)
}

// quantiles computes quantiles qs (or the median) of a over the axes of opts; lead
// gives the result a first axis over qs.
func quantiles[R Float, T Elem](s *Stream, a *Array[T], qs []float64, median, lead bool, opts []ReduceOption) (*Array[R], error) {
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
	if !median && len(qs) == 0 {
		return nil, fmt.Errorf("gpu: no quantiles: %w", ErrInvalidValue)
	}
	mask, outShape, err := resolveAxes(a.shape, opts, false)
	if err != nil {
		return nil, err
	}
	nq := max(len(qs), 1)
	shape := outShape
	if lead {
		shape = append([]int{nq}, outShape...)
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
		// No values: NaN (NumPy's mean of nothing).
		if err := Fill(s, out, R(math.NaN())); err != nil {
			return fail(err)
		}
		return out, nil
	}
	sp := &kernel.QuantileGather{In: a.dt, Out: rt, Median: median}
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
	err = alongAxes(s, []*header{a.header()}, nil, mask, n, func(in, _ []*header, rows, n int) error {
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
