// Package groupby is the device work of the columns example: a filtered group-by
// aggregation of a table held as columns, sorted by an aggregate,
//
//	SELECT key, SUM(amount), AVG(amount), COUNT(*), MAX(amount)
//	FROM t WHERE qty > minQty GROUP BY key ORDER BY SUM(amount) DESC
//
// written with the library's operations, and the same query in plain Go (Reference),
// the baseline a Go program would otherwise run. The columns example moves Apache
// Arrow record batches into the columns and the result back into an Arrow record;
// this package has no Arrow dependency.
//
// On the device: the filter is a comparison (one fused expression) and two
// compactions (gpu.Extract of the keys and amounts where it holds); the groups are
// scatters into one slot per key: gpu.AddAt (the sums), gpu.Bincount (the counts),
// gpu.MaximumAt (the maxima), each accumulating in shared memory per block when the
// keys are few (at most 4096 groups of float64); the groups present are
// gpu.Nonzero of the counts, gathered with gpu.Take and ordered by gpu.Argsort
// (descending, stable: equal sums in key order).
package groupby

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sync"

	"github.com/go-gpu/gpu"
)

// Table is the query's columns on a device: one row per index, the keys in [0, groups).
type Table struct {
	Key    *gpu.Array[int32]
	Qty    *gpu.Array[int32]
	Amount *gpu.Array[float64]
}

// Result is the query's answer: one row per group with at least one row passing the
// filter, by decreasing Sum (equal sums by increasing key).
type Result struct {
	Key   []int32
	Sum   []float64
	Mean  []float64
	Count []int64
	Max   []float64
}

// Len returns the number of groups in r.
func (r *Result) Len() int { return len(r.Key) }

// Query runs the query on t's columns (1-D, of one length) with keys in [0, groups)
// and reads the result back under ctx. A key outside [0, groups) is an error wrapping
// gpu.ErrIndexOutOfRange.
func Query(ctx context.Context, s *gpu.Stream, t Table, groups int, minQty int32) (res *Result, err error) {
	if t.Key == nil || t.Qty == nil || t.Amount == nil {
		return nil, fmt.Errorf("groupby: a nil column: %w", gpu.ErrInvalidValue)
	}

	if t.Key.Ndim() != 1 || !slices.Equal(t.Qty.Shape(), t.Key.Shape()) || !slices.Equal(t.Amount.Shape(), t.Key.Shape()) {
		return nil, fmt.Errorf("groupby: columns of shapes %v, %v, %v, want one length: %w", t.Key.Shape(), t.Qty.Shape(), t.Amount.Shape(), gpu.ErrInvalidValue)
	}
	if groups < 1 {
		return nil, fmt.Errorf("groupby: %d groups: %w", groups, gpu.ErrInvalidValue)
	}
	var frees []interface{ Free() error }
	defer func() {
		for _, a := range frees {
			err = errors.Join(err, a.Free())
		}
		if err != nil {
			res = nil
		}
	}()
	keep := func(a interface{ Free() error }) { frees = append(frees, a) }

	// WHERE qty > minQty
	mask, err := gpu.Eval[bool](s, "q > lim", gpu.Vars{"q": t.Qty, "lim": minQty})
	if err != nil {
		return nil, err
	}
	keep(mask)
	key, err := gpu.Extract(ctx, s, mask, t.Key)
	if err != nil {
		return nil, err
	}
	keep(key)
	amount, err := gpu.Extract(ctx, s, mask, t.Amount)
	if err != nil {
		return nil, err
	}
	keep(amount)

	// GROUP BY key: SUM, COUNT, MAX.
	sums, err := gpu.Zeros[float64](s, groups)
	if err != nil {
		return nil, err
	}
	keep(sums)
	if err := gpu.AddAt(s, sums, key, amount); err != nil {
		return nil, err
	}
	counts, err := gpu.Bincount(ctx, s, key, groups, gpu.Bins(groups))
	if err != nil {
		return nil, err
	}
	keep(counts)
	maxs, err := gpu.Full(s, math.Inf(-1), groups)
	if err != nil {
		return nil, err
	}
	keep(maxs)
	if err := gpu.MaximumAt(s, maxs, key, amount); err != nil {
		return nil, err
	}

	// The groups present, ORDER BY SUM(amount) DESC.
	present, err := gpu.Nonzero(ctx, s, counts)
	if err != nil {
		return nil, err
	}
	keep(present)
	res = &Result{}
	if present.Size() == 0 {
		return res, nil
	}
	pSums, err := gpu.Take(s, sums, present)
	if err != nil {
		return nil, err
	}
	keep(pSums)
	order, err := gpu.Argsort(s, pSums, 0, gpu.Descending())
	if err != nil {
		return nil, err
	}
	keep(order)
	rows, err := gpu.Take(s, present, order) // the keys, in the result's order
	if err != nil {
		return nil, err
	}
	keep(rows)
	gather := func(col *gpu.Array[float64]) ([]float64, error) {
		v, err := gpu.Take(s, col, rows)
		if err != nil {
			return nil, err
		}
		defer v.Free()
		return v.ToSlice(ctx)
	}
	if res.Sum, err = gather(sums); err != nil {
		return nil, err
	}
	if res.Max, err = gather(maxs); err != nil {
		return nil, err
	}
	cnt, err := gpu.Take(s, counts, rows)
	if err != nil {
		return nil, err
	}
	keep(cnt)
	if res.Count, err = cnt.ToSlice(ctx); err != nil {
		return nil, err
	}
	keys, err := gpu.Astype[int32](s, rows)
	if err != nil {
		return nil, err
	}
	keep(keys)
	if res.Key, err = keys.ToSlice(ctx); err != nil {
		return nil, err
	}
	res.Mean = make([]float64, len(res.Sum))
	for i := range res.Sum {
		res.Mean[i] = res.Sum[i] / float64(res.Count[i])
	}
	return res, nil
}

// RandomTable draws a table of rows rows on the device from g: keys uniform in
// [0, groups), qty uniform in 1..100, amount log-normal (e^(3 + N(0, 1))) rounded to
// cents. Free its columns when done.
func RandomTable(s *gpu.Stream, g *gpu.Generator, rows, groups int) (t Table, err error) {
	if rows < 0 || groups < 1 {
		return t, fmt.Errorf("groupby: a table of %d rows with %d keys: %w", rows, groups, gpu.ErrInvalidValue)
	}
	defer func() {
		if err != nil {
			t.Free()
			t = Table{}
		}
	}()
	if t.Key, err = gpu.RandInt[int32](s, g, 0, int64(groups), rows); err != nil {
		return t, err
	}
	if t.Qty, err = gpu.RandInt[int32](s, g, 1, 101, rows); err != nil {
		return t, err
	}
	z, err := gpu.RandN[float64](s, g, rows)
	if err != nil {
		return t, err
	}
	defer z.Free()
	t.Amount, err = gpu.Eval[float64](s, "round(exp(3 + z)*100)/100", gpu.Vars{"z": z})
	return t, err
}

// Free frees the columns that are not nil.
func (t Table) Free() error {
	var err error
	if t.Key != nil {
		err = errors.Join(err, t.Key.Free())
	}
	if t.Qty != nil {
		err = errors.Join(err, t.Qty.Free())
	}
	if t.Amount != nil {
		err = errors.Join(err, t.Amount.Free())
	}
	return err
}

// Columns is one batch of the table in Go memory (an Arrow record batch's values).
type Columns struct {
	Key, Qty []int32
	Amount   []float64
}

// Reference runs the query in plain Go over the batches, the batches split among
// GOMAXPROCS goroutines, each aggregating into its own slots, merged at the end: the
// baseline of the example. Keys must be in [0, groups).
func Reference(batches []Columns, groups int, minQty int32) (*Result, error) {
	type agg struct {
		sum, max []float64
		count    []int64
	}
	newAgg := func() *agg {
		a := &agg{sum: make([]float64, groups), max: make([]float64, groups), count: make([]int64, groups)}
		for i := range a.max {
			a.max[i] = math.Inf(-1)
		}
		return a
	}
	workers := min(runtime.GOMAXPROCS(0), max(len(batches), 1))
	parts := make([]*agg, workers)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := newAgg()
			parts[w] = a
			for b := w; b < len(batches); b += workers {
				c := batches[b]
				if len(c.Qty) != len(c.Key) || len(c.Amount) != len(c.Key) {
					errs[w] = fmt.Errorf("groupby: batch %d has columns of %d, %d and %d rows: %w", b, len(c.Key), len(c.Qty), len(c.Amount), gpu.ErrInvalidValue)
					return
				}
				for i, k := range c.Key {
					if c.Qty[i] <= minQty {
						continue
					}
					if k < 0 || int(k) >= groups {
						errs[w] = fmt.Errorf("groupby: key %d of %d groups: %w", k, groups, gpu.ErrIndexOutOfRange)
						return
					}
					v := c.Amount[i]
					a.sum[k] += v
					a.count[k]++
					if v > a.max[k] || math.IsNaN(v) {
						a.max[k] = v
					}
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	tot := parts[0]
	for _, p := range parts[1:] {
		for k := range groups {
			tot.sum[k] += p.sum[k]
			tot.count[k] += p.count[k]
			if p.max[k] > tot.max[k] || math.IsNaN(p.max[k]) {
				tot.max[k] = p.max[k]
			}
		}
	}
	var keys []int32
	for k := range groups {
		if tot.count[k] > 0 {
			keys = append(keys, int32(k))
		}
	}
	slices.SortStableFunc(keys, func(a, b int32) int { return cmp.Compare(tot.sum[b], tot.sum[a]) })
	res := &Result{Key: keys}
	for _, k := range keys {
		res.Sum = append(res.Sum, tot.sum[k])
		res.Count = append(res.Count, tot.count[k])
		res.Max = append(res.Max, tot.max[k])
		res.Mean = append(res.Mean, tot.sum[k]/float64(tot.count[k]))
	}
	return res, nil
}

// Compare returns an error describing the first difference between got and want:
// keys, counts and maxima exactly, sums and means within tol relatively (float sums
// in another order), the order allowing neighbours whose sums are within tol to swap.
func Compare(got, want *Result, tol float64) error {
	if got.Len() != want.Len() {
		return fmt.Errorf("%d groups, want %d", got.Len(), want.Len())
	}
	at := make(map[int32]int, want.Len())
	for i, k := range want.Key {
		at[k] = i
	}
	rel := func(a, b float64) bool { return math.Abs(a-b) <= tol*math.Max(math.Abs(a), math.Abs(b)) }
	for i, k := range got.Key {
		j, ok := at[k]
		if !ok {
			return fmt.Errorf("row %d: key %d is not in the reference", i, k)
		}
		if got.Count[i] != want.Count[j] || got.Max[i] != want.Max[j] || !rel(got.Sum[i], want.Sum[j]) || !rel(got.Mean[i], want.Mean[j]) {
			return fmt.Errorf("key %d: sum %v mean %v count %d max %v, want %v %v %d %v", k,
				got.Sum[i], got.Mean[i], got.Count[i], got.Max[i], want.Sum[j], want.Mean[j], want.Count[j], want.Max[j])
		}
		if j != i && !rel(want.Sum[i], want.Sum[j]) {
			return fmt.Errorf("key %d in row %d, want row %d", k, i, j)
		}
		if i > 0 && got.Sum[i] > got.Sum[i-1] {
			return fmt.Errorf("rows %d and %d out of order: sums %v, %v", i-1, i, got.Sum[i-1], got.Sum[i])
		}
	}
	return nil
}
