package gpu_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
)

// TestUniqueDense runs Unique (values only, and with counts, which always sort) under
// Tuning.UniqueDenseMax 0 (the sort), a limit that narrow ranges pass and wide ones fail
// (the range pass, then the sort), and the largest, on every device: integer keys of a
// narrow range at an offset (negative int64, near the top of uint64, int8 over its
// whole range), of 2^18 values (the most the CPU backend's shared memory holds is
// 393216) and on CUDA of 2^20 (the benchmark's case, 2^22 keys), one value, and keys
// over all 64 bits.
func TestUniqueDense(t *testing.T) {
	defer gpu.SetUniqueDenseMinN(gpu.SetUniqueDenseMinN(1)) // small inputs too
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		old := d.Tuning()
		defer d.SetTuning(old)
		rng := rand.New(rand.NewPCG(22, 9))
		narrow := func(n int, lo, span int64) []int64 {
			xs := make([]int64, n)
			for i := range xs {
				xs[i] = lo + rng.Int64N(span)
			}
			return xs
		}
		i64 := map[string][]int64{
			"negative":  narrow(300001, -70000, 100000),
			"2^18":      narrow(300000, 1<<40, 1<<18),
			"one":       narrow(5000, -3, 1),
			"small":     narrow(3, 7, 2),
			"all-bits":  stGen[int64](rng, 100000, patRandom),
			"few-2^40s": {1 << 40, -(1 << 40), 0, 1 << 40, 5},
		}
		if d.Backend() != "cpu" {
			i64["2^20"] = narrow(1<<22, 0, 1<<20)
		}
		u64 := make([]uint64, 200000)
		for i := range u64 {
			u64[i] = ^uint64(0) - rng.Uint64N(5000)
		}
		i8 := stGen[int8](rng, 100000, patRandom)
		u16 := make([]uint16, 70000)
		for i := range u16 {
			u16[i] = uint16(1000 + rng.IntN(3000))
		}
		i32 := make([]int32, 150000)
		for i := range i32 {
			i32[i] = int32(rng.IntN(200000)) - 100000
		}
		for _, lim := range []int{0, 200000, 1 << 21} {
			tu := old
			tu.UniqueDenseMax = lim
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("max=%d", lim), func(t *testing.T) {
				for name, xs := range i64 {
					t.Run("int64/"+name, func(t *testing.T) { checkUniqueValues(t, s, xs) })
				}
				t.Run("uint64", func(t *testing.T) { checkUniqueValues(t, s, u64) })
				t.Run("int8", func(t *testing.T) { checkUniqueValues(t, s, i8) })
				t.Run("uint16", func(t *testing.T) { checkUniqueValues(t, s, u16) })
				t.Run("int32", func(t *testing.T) { checkUniqueValues(t, s, i32) })
				t.Run("counts", func(t *testing.T) { checkUnique(t, s, i64["negative"][:5000], []int{5000}) })
			})
		}
	})
}

// checkUniqueValues checks Unique's values of xs (a 1-D array) against uniqueRef's.
func checkUniqueValues[T gpu.Elem](t *testing.T, s *gpu.Stream, xs []T) {
	t.Helper()
	a := mustArr[T](t)(gpu.FromSlice(s, xs))
	defer a.Free()
	want, _, _, _ := uniqueRef(xs)
	r, err := gpu.Unique(bg, s, a)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Free()
	got := toSlice(t, r.Values)
	if len(got) != len(want) {
		t.Fatalf("%v: %d unique values, want %d", dtype.Of[T](), len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("%v: unique value %d: %v, want %v", dtype.Of[T](), i, got[i], want[i])
		}
	}
}

// TestUniqueDenseSimDevice runs the dense unique's CUDA path (the generated PTX, the
// launch geometry, the dynamic shared memory) on the simulated device: int64 of a
// negative narrow range, uint16 near its top, and int64 over all bits (the range pass,
// then the sort).
func TestUniqueDenseSimDevice(t *testing.T) {
	defer gpu.SetUniqueDenseMinN(gpu.SetUniqueDenseMinN(1))
	d, s := simStream(t)
	old := d.Tuning()
	defer d.SetTuning(old)
	tu := old
	tu.UniqueDenseMax = 1 << 21
	if _, err := d.SetTuning(tu); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(22, 10))
	i64 := make([]int64, 20000)
	for i := range i64 {
		i64[i] = rng.Int64N(9000) - 5000
	}
	u16 := make([]uint16, 9000)
	for i := range u16 {
		u16[i] = 65535 - uint16(rng.IntN(700))
	}
	checkUniqueValues(t, s, i64)
	checkUniqueValues(t, s, u16)
	checkUniqueValues(t, s, stGen[int64](rng, 3000, patRandom))
}
