package main

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/columns/groupby"
	"github.com/go-gpu/gpu/examples/internal/extest"
)

var bg = context.Background()

func TestMain(m *testing.M) { extest.Main(m, "github.com/go-gpu/gpu/examples/columns") }

// TestSmall runs the example at a small size on the default device (the CPU backend
// without a GPU): its device query against the plain-Go baseline on the same Arrow
// batches (a short last batch included).
func TestSmall(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(bg, []string{"-rows", "60000", "-batch", "7000", "-groups", "300", "-min-qty", "30", "-seed", "3"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if !strings.Contains(out.String(), "check: ok (300 groups)") {
		t.Errorf("output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(bg, []string{"-rows", "x"}, &out, &errs); code != 2 {
		t.Errorf("exit %d for a bad flag", code)
	}
	if code := run(bg, []string{"-rows", "0"}, &out, &errs); code != 1 {
		t.Errorf("exit %d for no rows", code)
	}
	for _, c := range []config{{rows: 0, batch: 1, groups: 1}, {rows: 1, batch: 0, groups: 1}, {rows: 1, batch: 1, groups: 0}} {
		if err := columns(bg, io.Discard, c); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "at least 1") {
			t.Errorf("%+v: %v, want an error wrapping ErrInvalidValue that says why", c, err)
		}
	}
}

// TestArrow checks Generate's batches, Load's columns and the result record's round
// trip on every device, and that Load and Baseline refuse nulls and other schemas.
func TestArrow(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		recs, err := Generate(bg, s, gpu.NewGenerator(9), 2500, 1000, 7)
		if err != nil {
			t.Fatal(err)
		}
		defer release(recs)
		if len(recs) != 3 || recs[2].NumRows() != 500 {
			t.Fatalf("%d batches, the last of %d rows", len(recs), recs[len(recs)-1].NumRows())
		}
		tab, err := Load(bg, s, recs)
		if err != nil {
			t.Fatal(err)
		}
		defer tab.Free()
		keys, _ := tab.Key.ToSlice(bg)
		amounts, _ := tab.Amount.ToSlice(bg)
		for i, r := range recs {
			k := r.Column(0).(*array.Int32).Int32Values()
			q := r.Column(1).(*array.Int32).Int32Values()
			a := r.Column(2).(*array.Float64).Float64Values()
			for j := range k {
				if q[j] < 1 || q[j] > 100 || a[j] != math.Round(a[j]*100)/100 {
					t.Fatalf("batch %d row %d: qty %d, amount %v", i, j, q[j], a[j])
				}
				if keys[1000*i+j] != k[j] || amounts[1000*i+j] != a[j] || k[j] < 0 || k[j] >= 7 || !(a[j] > 0) {
					t.Fatalf("batch %d row %d: key %d amount %v on the device, %d %v in the batch", i, j, keys[1000*i+j], amounts[1000*i+j], k[j], a[j])
				}
			}
		}
		res := &groupby.Result{Key: []int32{5, 2}, Sum: []float64{3, 2}, Mean: []float64{1.5, 2}, Count: []int64{2, 1}, Max: []float64{2, 2}}
		rec := ToRecord(res)
		defer rec.Release()
		if !rec.Schema().Equal(ResultSchema) || rec.NumRows() != 2 {
			t.Errorf("record %v", rec)
		}
		if err := groupby.Compare(FromRecord(rec), res, 0); err != nil {
			t.Errorf("round trip: %v", err)
		}

		// A batch with a null, and one of another schema.
		b := array.NewInt32Builder(memory.DefaultAllocator)
		b.AppendValues([]int32{1, 2}, []bool{true, false})
		withNull := b.NewInt32Array()
		defer withNull.Release()
		f := array.NewFloat64Builder(memory.DefaultAllocator)
		f.AppendValues([]float64{1, 2}, nil)
		amt := f.NewFloat64Array()
		defer amt.Release()
		nulls := array.NewRecordBatch(Schema, []arrow.Array{withNull, withNull, amt}, 2)
		defer nulls.Release()
		if _, err := Load(bg, s, []arrow.RecordBatch{nulls}); !errors.Is(err, gpu.ErrNotSupported) {
			t.Errorf("Load of a batch with nulls: %v", err)
		}
		if _, err := Baseline([]arrow.RecordBatch{nulls}, 7, 0); !errors.Is(err, gpu.ErrNotSupported) {
			t.Errorf("Baseline of a batch with nulls: %v", err)
		}
		other := array.NewRecordBatch(arrow.NewSchema([]arrow.Field{{Name: "x", Type: arrow.PrimitiveTypes.Float64}}, nil), []arrow.Array{amt}, 2)
		defer other.Release()
		if _, err := Load(bg, s, []arrow.RecordBatch{other}); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Load of another schema: %v", err)
		}
	})
}
