package groupby

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/internal/extest"
)

var bg = context.Background()

// table returns n random rows with keys in [0, used) and the same columns on the
// device.
func table(t *testing.T, s *gpu.Stream, n, used int) (Columns, Table) {
	t.Helper()
	c := Columns{Key: make([]int32, n), Qty: make([]int32, n), Amount: make([]float64, n)}
	for i := range n {
		c.Key[i] = int32(rand.IntN(used))
		c.Qty[i] = int32(1 + rand.IntN(100))
		c.Amount[i] = math.Round(math.Exp(3+rand.NormFloat64())*100) / 100
	}
	var d Table
	var err error
	if d.Key, err = gpu.FromSlice(s, c.Key, n); err != nil {
		t.Fatal(err)
	}
	if d.Qty, err = gpu.FromSlice(s, c.Qty, n); err != nil {
		t.Fatal(err)
	}
	if d.Amount, err = gpu.FromSlice(s, c.Amount, n); err != nil {
		t.Fatal(err)
	}
	return c, d
}

// split cuts c into batches of at most m rows.
func split(c Columns, m int) []Columns {
	var out []Columns
	for i := 0; i < len(c.Key); i += m {
		j := min(i+m, len(c.Key))
		out = append(out, Columns{Key: c.Key[i:j], Qty: c.Qty[i:j], Amount: c.Amount[i:j]})
	}
	return out
}

// TestQueryMatchesReference runs the query on random tables on every device, with
// groups the keys don't all reach, and compares it with plain Go.
func TestQueryMatchesReference(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		for _, c := range []struct{ n, used, groups int }{{100_000, 250, 300}, {5000, 3, 3}, {20_000, 5000, 5000}, {1, 1, 1}} {
			minQty := int32(rand.IntN(90))
			host, dev := table(t, s, c.n, c.used)
			got, err := Query(bg, s, dev, c.groups, minQty)
			if err != nil {
				t.Fatal(err)
			}
			want, err := Reference(split(host, 7777), c.groups, minQty)
			if err != nil {
				t.Fatal(err)
			}
			if err := Compare(got, want, 1e-9); err != nil {
				t.Errorf("%+v, qty > %d: %v", c, minQty, err)
			}
			if got.Len() == 0 && c.n > 1000 {
				t.Errorf("%+v: no group", c)
			}
			if k, _ := dev.Key.ToSlice(bg); !slices.Equal(k, host.Key) {
				t.Errorf("the keys changed")
			}
			dev.Free()
		}
	})
}

func TestEmptyAndBadInput(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		_, dev := table(t, s, 1000, 10)
		defer dev.Free()
		got, err := Query(bg, s, dev, 10, 100) // no qty is above 100
		if err != nil || got.Len() != 0 {
			t.Errorf("no row passing: %d groups, %v", got.Len(), err)
		}
		if _, err := Query(bg, s, dev, 5, 0); !errors.Is(err, gpu.ErrIndexOutOfRange) {
			t.Errorf("keys up to 9 in 5 groups: %v", err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Logf("stream after the error: %v", err)
		}
		if _, err := Query(bg, s, dev, 0, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("0 groups: %v", err)
		}
		short := dev
		short.Qty, _ = dev.Qty.Slice(gpu.R(0, 10))
		if _, err := Query(bg, s, short, 10, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("columns of different lengths: %v", err)
		}
		if _, err := Reference([]Columns{{Key: []int32{7}, Qty: []int32{5}, Amount: []float64{1}}}, 5, 0); !errors.Is(err, gpu.ErrIndexOutOfRange) {
			t.Errorf("Reference with key 7 of 5: %v", err)
		}
	})
}

// TestCompare: Compare catches a wrong count, a wrong sum and a wrong order.
func TestCompare(t *testing.T) {
	want := &Result{Key: []int32{4, 1, 2}, Sum: []float64{30, 20, 10}, Mean: []float64{15, 10, 5}, Count: []int64{2, 2, 2}, Max: []float64{20, 15, 6}}
	clone := func() *Result {
		return &Result{slices.Clone(want.Key), slices.Clone(want.Sum), slices.Clone(want.Mean), slices.Clone(want.Count), slices.Clone(want.Max)}
	}
	if err := Compare(clone(), want, 1e-9); err != nil {
		t.Errorf("equal results: %v", err)
	}
	r := clone()
	r.Count[1] = 3
	if Compare(r, want, 1e-9) == nil {
		t.Errorf("a wrong count passed")
	}
	r = clone()
	r.Sum[2] = 10.5
	if Compare(r, want, 1e-9) == nil {
		t.Errorf("a wrong sum passed")
	}
	r = &Result{Key: []int32{1, 4, 2}, Sum: []float64{20, 30, 10}, Mean: []float64{10, 15, 5}, Count: []int64{2, 2, 2}, Max: []float64{15, 20, 6}}
	if Compare(r, want, 1e-9) == nil {
		t.Errorf("a wrong order passed")
	}
}
