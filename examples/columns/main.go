// Command columns runs a filtered group-by aggregation over a table of Apache Arrow
// record batches on the default device (a CUDA GPU if there is one, else the CPU
// backend; GPU_BACKEND=cpu|cuda forces one), and the same query in plain Go on the
// same batches:
//
//	SELECT key, SUM(amount), AVG(amount), COUNT(*), MAX(amount)
//	FROM t WHERE qty > 50 GROUP BY key ORDER BY SUM(amount) DESC
//
//	go run ./examples/columns                 # 10^8 rows in batches of 2^20, 1000 keys
//	go run ./examples/columns -rows 1000000   # smaller
//
// The table (key int32, qty int32, amount float64, no nulls) is drawn with the
// library's generator (groupby.RandomTable) and copied into Arrow record batches
// (github.com/apache/arrow-go).
// The batches' value buffers are copied into device arrays (the "load"), package
// groupby runs the query there, and its result comes back as an Arrow record; the
// baseline runs groupby.Reference over the same batches' values (plain Go, one
// goroutine per core). Both results are compared (keys, counts and maxima exactly,
// sums and means to 1e-9) and the times printed: load, query (after an untimed
// warm-up query that compiles the kernels), the result's conversion, and the baseline.
//
// This is the work of a columnar engine (as Vortex, a columnar file format whose
// buffers CUDA kernels read in place): the library orders the copies and the kernels
// on the stream by the buffers they use, so that the load needs no synchronization of
// its own.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/columns/groupby"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	rows, batch, groups int
	minQty              int
	seed                uint64
	show                int
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("columns", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	fs.IntVar(&c.rows, "rows", 100_000_000, "rows of the table")
	fs.IntVar(&c.batch, "batch", 1<<20, "rows per Arrow record batch")
	fs.IntVar(&c.groups, "groups", 1000, "distinct keys")
	fs.IntVar(&c.minQty, "min-qty", 50, "the filter: qty > min-qty (qty is uniform in 1..100)")
	fs.Uint64Var(&c.seed, "seed", 1, "generator seed")
	fs.IntVar(&c.show, "show", 5, "result rows to print")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := columns(ctx, stdout, c); err != nil {
		fmt.Fprintln(stderr, "columns:", err)
		return 1
	}
	return 0
}

// Schema is the table's schema.
var Schema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: arrow.PrimitiveTypes.Int32},
	{Name: "qty", Type: arrow.PrimitiveTypes.Int32},
	{Name: "amount", Type: arrow.PrimitiveTypes.Float64},
}, nil)

// ResultSchema is the query result's schema.
var ResultSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: arrow.PrimitiveTypes.Int32},
	{Name: "sum", Type: arrow.PrimitiveTypes.Float64},
	{Name: "mean", Type: arrow.PrimitiveTypes.Float64},
	{Name: "count", Type: arrow.PrimitiveTypes.Int64},
	{Name: "max", Type: arrow.PrimitiveTypes.Float64},
}, nil)

func columns(ctx context.Context, w io.Writer, c config) error {
	if c.rows < 1 || c.batch < 1 || c.groups < 1 {
		return fmt.Errorf("%d rows in batches of %d, %d keys: each must be at least 1: %w", c.rows, c.batch, c.groups, gpu.ErrInvalidValue)
	}
	dev, err := gpu.Open()
	if err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(w, "columns: %d rows in Arrow record batches of %d, %d keys, qty > %d, on %v\n", c.rows, c.batch, c.groups, c.minQty, dev)

	t0 := time.Now()
	recs, err := Generate(ctx, s, gpu.NewGenerator(c.seed), c.rows, c.batch, c.groups)
	if err != nil {
		return err
	}
	defer release(recs)
	fmt.Fprintf(w, "table:    %v to draw %d record batches\n", time.Since(t0).Round(time.Microsecond), len(recs))

	t0 = time.Now()
	tab, err := Load(ctx, s, recs)
	if err != nil {
		return err
	}
	defer tab.Free()
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	load := time.Since(t0)
	bytes := float64(c.rows) * 16
	fmt.Fprintf(w, "load:     %v (Arrow batches to device arrays, %.3g GB/s)\n", load.Round(time.Microsecond), bytes/load.Seconds()/1e9)

	if _, err := groupby.Query(ctx, s, tab, c.groups, int32(c.minQty)); err != nil { // warm-up
		return err
	}
	t0 = time.Now()
	res, err := groupby.Query(ctx, s, tab, c.groups, int32(c.minQty))
	if err != nil {
		return err
	}
	query := time.Since(t0)
	t0 = time.Now()
	out := ToRecord(res)
	defer out.Release()
	conv := time.Since(t0)
	fmt.Fprintf(w, "query:    %v on the device (%.3g rows/s), %v to the Arrow record\n", query.Round(time.Microsecond),
		float64(c.rows)/query.Seconds(), conv.Round(time.Microsecond))

	t0 = time.Now()
	base, err := Baseline(recs, c.groups, int32(c.minQty))
	if err != nil {
		return err
	}
	defer base.Release()
	bt := time.Since(t0)
	fmt.Fprintf(w, "plain Go: %v (%d goroutines, %.3g rows/s): %.3gx the device query, %.3gx load + query + record\n",
		bt.Round(time.Microsecond), runtime.GOMAXPROCS(0), float64(c.rows)/bt.Seconds(),
		bt.Seconds()/query.Seconds(), bt.Seconds()/(load+query+conv).Seconds())

	got, want := FromRecord(out), FromRecord(base)
	if err := groupby.Compare(got, want, 1e-9); err != nil {
		return fmt.Errorf("check failed: the device's result differs from plain Go: %w", err)
	}
	fmt.Fprintf(w, "check: ok (%d groups)\n", got.Len())
	fmt.Fprintf(w, "%6s %16s %10s %10s %10s\n", "key", "sum", "mean", "count", "max")
	for i := range min(c.show, got.Len()) {
		fmt.Fprintf(w, "%6d %16.2f %10.4f %10d %10.2f\n", got.Key[i], got.Sum[i], got.Mean[i], got.Count[i], got.Max[i])
	}
	return nil
}

// Generate draws the table with groupby.RandomTable, batch rows at a time, and copies
// each batch's columns into Go memory that the Arrow arrays then own (no copy).
func Generate(ctx context.Context, s *gpu.Stream, g *gpu.Generator, rows, batch, groups int) (recs []arrow.RecordBatch, err error) {
	defer func() {
		if err != nil {
			release(recs)
			recs = nil
		}
	}()
	for off := 0; off < rows; off += batch {
		n := min(batch, rows-off)
		t, err := groupby.RandomTable(s, g, n, groups)
		if err != nil {
			return recs, err
		}
		key, err := t.Key.ToSlice(ctx)
		if err != nil {
			t.Free()
			return recs, err
		}
		qty, err := t.Qty.ToSlice(ctx)
		if err != nil {
			t.Free()
			return recs, err
		}
		amount, err := t.Amount.ToSlice(ctx)
		if err = errors.Join(err, t.Free()); err != nil {
			return recs, err
		}
		cols := []arrow.Array{
			array.NewInt32Data(wrap(arrow.PrimitiveTypes.Int32, key)),
			array.NewInt32Data(wrap(arrow.PrimitiveTypes.Int32, qty)),
			array.NewFloat64Data(wrap(arrow.PrimitiveTypes.Float64, amount)),
		}
		recs = append(recs, array.NewRecordBatch(Schema, cols, int64(n)))
		for _, a := range cols {
			a.Release()
		}
	}
	return recs, nil
}

// wrap returns the Arrow data of a column without nulls whose values are vals.
func wrap[T int32 | int64 | float64](t arrow.DataType, vals []T) arrow.ArrayData {
	return array.NewData(t, len(vals), []*memory.Buffer{nil, memory.NewBufferBytes(gpu.Bytes(vals))}, nil, 0, 0)
}

func release(recs []arrow.RecordBatch) {
	for _, r := range recs {
		r.Release()
	}
}

// Load copies the batches' columns (Schema's, without nulls) into device arrays, one
// per column, each batch's values into its rows.
func Load(ctx context.Context, s *gpu.Stream, recs []arrow.RecordBatch) (t groupby.Table, err error) {
	rows, err := checkBatches(recs)
	if err != nil {
		return t, err
	}
	defer func() {
		if err != nil {
			t.Free()
			t = groupby.Table{}
		}
	}()
	if t.Key, err = gpu.Empty[int32](s, rows); err != nil {
		return t, err
	}
	if t.Qty, err = gpu.Empty[int32](s, rows); err != nil {
		return t, err
	}
	if t.Amount, err = gpu.Empty[float64](s, rows); err != nil {
		return t, err
	}
	off := 0
	for _, r := range recs {
		n := int(r.NumRows())
		if err := copyIn(ctx, t.Key, off, r.Column(0).(*array.Int32).Int32Values()); err != nil {
			return t, err
		}
		if err := copyIn(ctx, t.Qty, off, r.Column(1).(*array.Int32).Int32Values()); err != nil {
			return t, err
		}
		if err := copyIn(ctx, t.Amount, off, r.Column(2).(*array.Float64).Float64Values()); err != nil {
			return t, err
		}
		off += n
	}
	return t, nil
}

// checkBatches checks that every batch has Schema and no nulls, and returns the
// number of rows.
func checkBatches(recs []arrow.RecordBatch) (int, error) {
	rows := 0
	for i, r := range recs {
		if !r.Schema().Equal(Schema) {
			return 0, fmt.Errorf("batch %d has schema %v, want %v: %w", i, r.Schema(), Schema, gpu.ErrInvalidValue)
		}
		for j, col := range r.Columns() {
			if col.NullN() > 0 {
				return 0, fmt.Errorf("batch %d, column %s: %d nulls (the query takes columns without nulls): %w",
					i, Schema.Field(j).Name, col.NullN(), gpu.ErrNotSupported)
			}
		}
		rows += int(r.NumRows())
	}
	return rows, nil
}

// copyIn copies vals into a's elements from off on.
func copyIn[T gpu.Elem](ctx context.Context, a *gpu.Array[T], off int, vals []T) error {
	v, err := a.Slice(gpu.R(off, off+len(vals)))
	if err != nil {
		return err
	}
	return v.CopyFromHost(ctx, vals)
}

// ToRecord returns res as an Arrow record of ResultSchema (its slices owned by the
// record, not copied).
func ToRecord(res *groupby.Result) arrow.RecordBatch {
	n := res.Len()
	cols := []arrow.Array{
		array.NewInt32Data(wrap(arrow.PrimitiveTypes.Int32, res.Key)),
		array.NewFloat64Data(wrap(arrow.PrimitiveTypes.Float64, res.Sum)),
		array.NewFloat64Data(wrap(arrow.PrimitiveTypes.Float64, res.Mean)),
		array.NewInt64Data(wrap(arrow.PrimitiveTypes.Int64, res.Count)),
		array.NewFloat64Data(wrap(arrow.PrimitiveTypes.Float64, res.Max)),
	}
	defer func() {
		for _, a := range cols {
			a.Release()
		}
	}()
	return array.NewRecordBatch(ResultSchema, cols, int64(n))
}

// FromRecord reads a record of ResultSchema.
func FromRecord(r arrow.RecordBatch) *groupby.Result {
	return &groupby.Result{
		Key:   r.Column(0).(*array.Int32).Int32Values(),
		Sum:   r.Column(1).(*array.Float64).Float64Values(),
		Mean:  r.Column(2).(*array.Float64).Float64Values(),
		Count: r.Column(3).(*array.Int64).Int64Values(),
		Max:   r.Column(4).(*array.Float64).Float64Values(),
	}
}

// Baseline runs the query in plain Go over the batches' values (groupby.Reference)
// and returns its result as an Arrow record.
func Baseline(recs []arrow.RecordBatch, groups int, minQty int32) (arrow.RecordBatch, error) {
	if _, err := checkBatches(recs); err != nil {
		return nil, err
	}
	batches := make([]groupby.Columns, len(recs))
	for i, r := range recs {
		batches[i] = groupby.Columns{
			Key:    r.Column(0).(*array.Int32).Int32Values(),
			Qty:    r.Column(1).(*array.Int32).Int32Values(),
			Amount: r.Column(2).(*array.Float64).Float64Values(),
		}
	}
	res, err := groupby.Reference(batches, groups, minQty)
	if err != nil {
		return nil, err
	}
	return ToRecord(res), nil
}
