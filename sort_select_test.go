package gpu_test

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/half"
)

// TopK, Unique, SearchSorted, Median, Quantile and Partition against references in
// plain Go (stArgsort's stable sort for the order).

// checkTopK checks TopK of xs (rows of n along the last axis) against the first k of a
// stable sort.
func checkTopK[T gpu.Elem](t *testing.T, s *gpu.Stream, xs []T, rows, n, k int, smallest bool) {
	t.Helper()
	a := mustArr[T](t)(gpu.FromSlice(s, xs, rows, n))
	defer a.Free()
	var opts []gpu.SortOption
	if smallest {
		opts = append(opts, gpu.Smallest())
	}
	v, idx, err := gpu.TopK(s, a, k, -1, opts...)
	if err != nil {
		t.Fatal(err)
	}
	defer v.Free()
	defer idx.Free()
	if !slices.Equal(v.Shape(), []int{rows, k}) || !slices.Equal(idx.Shape(), []int{rows, k}) {
		t.Fatalf("shapes %v %v, want [%d %d]", v.Shape(), idx.Shape(), rows, k)
	}
	want := stArgsort(xs, n, !smallest)
	gv, gi := toSlice(t, v), toSlice(t, idx)
	for i, x := range toSlice(t, a) {
		if stBits(x) != stBits(xs[i]) {
			t.Fatalf("TopK changed its input at %d", i)
		}
	}
	for r := 0; r < rows; r++ {
		for j := 0; j < k; j++ {
			w := want[r*n+j]
			if gi[r*k+j] != w || stBits(gv[r*k+j]) != stBits(xs[r*n+int(w)]) {
				t.Fatalf("%v rows %d n %d k %d smallest %v: row %d, %d: (%v, %d), want (%v, %d)",
					dtype.Of[T](), rows, n, k, smallest, r, j, gv[r*k+j], gi[r*k+j], xs[r*n+int(w)], w)
			}
		}
	}
}

func TestTopK(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(22, 1))
		for _, c := range []struct{ rows, n, k int }{
			{1, 1, 1}, {1, 10, 0}, {1, 10, 1}, {1, 10, 10}, {3, 100, 7}, {1, 5000, 100}, {2, 20000, 1},
			{1, 70000, 100}, {4, 9000, 4096}, {2, 9000, 5000}, {1, 5000, 5000},
		} {
			for _, sm := range []bool{false, true} {
				checkTopK(t, s, stGen[float32](rng, c.rows*c.n, patSpecial), c.rows, c.n, c.k, sm)
				checkTopK(t, s, stGen[int32](rng, c.rows*c.n, patFew), c.rows, c.n, c.k, sm)
				checkTopK(t, s, stGen[uint8](rng, c.rows*c.n, patRandom), c.rows, c.n, c.k, sm)
				checkTopK(t, s, stGen[float64](rng, c.rows*c.n, patRandom), c.rows, c.n, c.k, sm)
			}
		}
		// 1-D.
		x1 := mustArr[float32](t)(gpu.FromSlice(s, []float32{0.5, 2, -3, 2, 7}, 5))
		v1, i1, err := gpu.TopK(s, x1, 3, 0)
		if err != nil {
			t.Fatal(err)
		}
		if g, gi := toSlice(t, v1), toSlice(t, i1); !slices.Equal(g, []float32{7, 2, 2}) || !slices.Equal(gi, []int64{4, 1, 3}) {
			t.Fatalf("1-D top 3: %v %v", g, gi)
		}
		x1.Free()
		v1.Free()
		i1.Free()
		// Ties at the k-th value: the first ones by index.
		xs := randIntsOf[int64](rng, 30000, 3, 0)
		checkTopK(t, s, xs, 1, len(xs), 100, false)
		checkTopK(t, s, xs, 1, len(xs), 100, true)
		// Errors.
		a := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3}, 3))
		defer a.Free()
		if _, _, err := gpu.TopK(s, a, 4, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("k past n: %v", err)
		}
		if _, _, err := gpu.TopK(s, a, -1, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("k -1: %v", err)
		}
		if _, _, err := gpu.TopK(s, a, 1, 1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("axis 1: %v", err)
		}
		if _, _, err := gpu.TopK(s, a, 1, 0, gpu.Descending()); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "Descending applies to Sort") {
			t.Errorf("Descending: %v", err)
		}
	})
}

// TestTopKVariants runs the radix-select cases of TopK under every
// Tuning.TopKVariant value: long rows, few and many rows, ties at the k-th key. For
// variant 3 (4-byte keys) also: odd lengths (scalar loads), k of 1 and 512, the k-th
// key's bucket too large for its buffer (the guarded fallback), ties past rem in the
// buffer (its index select), all keys equal, NaN and -0, and up to 256 rows.
func TestTopKVariants(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		old := d.Tuning()
		defer d.SetTuning(old)
		rng := rand.New(rand.NewPCG(22, 7))
		ties := randIntsOf[int64](rng, 70000, 3, 0)
		ties32 := randIntsOf[int32](rng, 70001, 3, 0)
		spread := randIntsOf[int32](rng, 200000, 4096, 10) // 4096 values with distinct top 22 bits, ~49 each
		for v := 1; v <= 3; v++ {
			tu := old
			tu.TopKVariant = v
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
				for _, c := range []struct{ rows, n, k int }{{1, 200000, 100}, {2, 20000, 1}, {4, 9000, 4096}, {3, 30000, 2000}} {
					for _, sm := range []bool{false, true} {
						checkTopK(t, s, stGen[float32](rng, c.rows*c.n, patSpecial), c.rows, c.n, c.k, sm)
						checkTopK(t, s, stGen[int32](rng, c.rows*c.n, patFew), c.rows, c.n, c.k, sm)
					}
				}
				checkTopK(t, s, ties, 1, len(ties), 100, false)
				checkTopK(t, s, ties, 2, len(ties)/2, 5000, true)
				if v != 3 {
					return
				}
				for _, c := range []struct{ rows, n, k int }{{1, 70001, 7}, {5, 9001, 512}, {1, 1 << 17, 1}, {3, 20000, 100}, {256, 6000, 50}} {
					for _, sm := range []bool{false, true} {
						checkTopK(t, s, stGen[float32](rng, c.rows*c.n, patSpecial), c.rows, c.n, c.k, sm)
						checkTopK(t, s, stGen[uint32](rng, c.rows*c.n, patRandom), c.rows, c.n, c.k, sm)
					}
				}
				for _, sm := range []bool{false, true} {
					checkTopK(t, s, ties32, 1, len(ties32), 100, sm)
					checkTopK(t, s, spread, 1, len(spread), 100, sm)
					checkTopK(t, s, spread, 4, len(spread)/4, 300, sm)
					checkTopK(t, s, stGen[float32](rng, 50000, patEqual), 1, 50000, 100, sm)
					checkTopK(t, s, stGen[float32](rng, 50000, patSorted), 1, 50000, 100, sm)
					checkTopK(t, s, stGen[int32](rng, 50000, patReverse), 2, 25000, 200, sm)
				}
			})
		}
	})
}

// TestTopKVariant3Sim runs TopK's variant 3 end to end on the simulated CUDA device
// (the host's plan, the PTX of the three passes, the guarded fallback and its scan):
// vector and scalar loads, several rows, the buffer select of ties and the fallback.
func TestTopKVariant3Sim(t *testing.T) {
	d, s := simStream(t)
	old := d.Tuning()
	defer d.SetTuning(old)
	tu := old
	tu.TopKVariant = 3
	if _, err := d.SetTuning(tu); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(22, 11))
	few := randIntsOf[int32](rng, 12000, 3, 0)
	spread := randIntsOf[int32](rng, 20000, 512, 10)
	checkTopK(t, s, stGen[float32](rng, 20000, patSpecial), 1, 20000, 100, false)
	checkTopK(t, s, stGen[float32](rng, 3*9001, patSpecial), 3, 9001, 33, true)
	checkTopK(t, s, few, 1, len(few), 100, false) // (fallback: the k-th key's bucket past buf2)
	checkTopK(t, s, spread, 2, len(spread)/2, 64, true)
}

// TestTopKLargeGPU checks TopK's variants at the benchmark's size (the 100 largest of
// 2^24 uniform float32, gpubench's array/topk/100/float32/2^24) and near it, on CUDA:
// go test -run TopKLargeGPU .
func TestTopKLargeGPU(t *testing.T) {
	d, s, old := cudaTuningStream(t)
	rng := rand.New(rand.NewPCG(22, 9))
	u := make([]float32, 1<<24+3)
	for i := range u {
		u[i] = float32(rng.IntN(1<<24)) / (1 << 24) // [0, 1) in steps of 2^-24: ties
	}
	for v := 1; v <= 3; v++ {
		tu := old
		tu.TopKVariant = v
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) {
			checkTopK(t, s, u[:1<<24], 1, 1<<24, 100, false)
			checkTopK(t, s, u, 1, len(u), 512, true)
			checkTopK(t, s, u[:1<<24], 4, 1<<22, 1, false)
		})
	}
}

// TopK along a middle axis.
func TestTopKAxis(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(22, 2))
		shape := []int{3, 50, 4}
		xs := stGen[float32](rng, 600, patRandom)
		a := mustArr[float32](t)(gpu.FromSlice(s, xs, shape...))
		defer a.Free()
		v, idx, err := gpu.TopK(s, a, 5, 1)
		if err != nil {
			t.Fatal(err)
		}
		gv, gi := toSlice(t, v), toSlice(t, idx)
		for i := 0; i < 3; i++ {
			for j := 0; j < 4; j++ {
				line := make([]float32, 50)
				for k := range line {
					line[k] = xs[(i*50+k)*4+j]
				}
				want := stArgsort(line, 50, true)
				for k := 0; k < 5; k++ {
					o := (i*5+k)*4 + j
					if gi[o] != want[k] || gv[o] != line[want[k]] {
						t.Fatalf("(%d, %d, %d): (%v, %d), want (%v, %d)", i, k, j, gv[o], gi[o], line[want[k]], want[k])
					}
				}
			}
		}
		v.Free()
		idx.Free()
	})
}

// uniqueRef returns NumPy's unique of xs: values, first indices, inverse, counts.
func uniqueRef[T gpu.Elem](xs []T) (vals []T, first, inv, counts []int64) {
	perm := stArgsort(xs, len(xs), false)
	inv = make([]int64, len(xs))
	for i, p := range perm {
		if i == 0 || stLess(xs[perm[i-1]], xs[p]) {
			vals = append(vals, xs[p])
			first = append(first, p)
			counts = append(counts, 0)
		}
		counts[len(counts)-1]++
		inv[p] = int64(len(vals) - 1)
	}
	return
}

func checkUnique[T gpu.Elem](t *testing.T, s *gpu.Stream, xs []T, shape []int) {
	t.Helper()
	a := mustArr[T](t)(gpu.FromSlice(s, xs, shape...))
	defer a.Free()
	wv, wf, wi, wc := uniqueRef(xs)
	r, err := gpu.Unique(bg, s, a, gpu.ReturnIndex(), gpu.ReturnInverse(), gpu.ReturnCounts())
	if err != nil {
		t.Fatal(err)
	}
	defer r.Free()
	gv, gf, gi, gc := toSlice(t, r.Values), toSlice(t, r.Indices), toSlice(t, r.Inverse), toSlice(t, r.Counts)
	for i, x := range toSlice(t, a) {
		if stBits(x) != stBits(xs[i]) {
			t.Fatalf("Unique changed its input at %d", i)
		}
	}
	if len(gv) != len(wv) {
		t.Fatalf("%v: %d unique values, want %d", dtype.Of[T](), len(gv), len(wv))
	}
	for i := range wv {
		if stBits(gv[i]) != stBits(wv[i]) || gf[i] != wf[i] || gc[i] != wc[i] {
			t.Fatalf("%v: unique %d: (%v, %d, %d), want (%v, %d, %d)", dtype.Of[T](), i, gv[i], gf[i], gc[i], wv[i], wf[i], wc[i])
		}
	}
	if !slices.Equal(gi, wi) || !slices.Equal(r.Inverse.Shape(), a.Shape()) {
		t.Fatalf("%v: inverse %v (shape %v), want %v", dtype.Of[T](), gi, r.Inverse.Shape(), wi)
	}
	// Values only.
	r2, err := gpu.Unique(bg, s, a)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Free()
	if r2.Indices != nil || r2.Inverse != nil || r2.Counts != nil {
		t.Fatal("arrays not asked for")
	}
	if g := toSlice(t, r2.Values); len(g) != len(wv) {
		t.Fatalf("values only: %d, want %d", len(g), len(wv))
	}
}

func TestUnique(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(22, 3))
		for _, n := range []int{0, 1, 2, 100, 5000, 70001} {
			checkUnique(t, s, stGen[int64](rng, n, patFew), []int{n})
			checkUnique(t, s, stGen[float32](rng, n, patSpecial), []int{n})
			checkUnique(t, s, stGen[uint8](rng, n, patRandom), []int{n})
			checkUnique(t, s, stGen[bool](rng, n, patRandom), []int{n})
		}
		checkUnique(t, s, stGen[int16](rng, 600, patRandom), []int{10, 6, 10})
		// NaNs collapse, ±0 collapse into the first.
		checkUnique(t, s, []float64{math.NaN(), 0, math.Copysign(0, -1), -math.NaN(), 1, 0}, []int{6})
		if _, err := gpu.Unique[float32](bg, s, nil); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("nil array: %v", err)
		}
	})
}

func checkSearchSorted[T gpu.Elem](t *testing.T, s *gpu.Stream, sorted, q []T, qshape []int) {
	t.Helper()
	a := mustArr[T](t)(gpu.FromSlice(s, sorted, len(sorted)))
	defer a.Free()
	v := mustArr[T](t)(gpu.FromSlice(s, q, qshape...))
	defer v.Free()
	for _, side := range []gpu.Side{gpu.SideLeft, gpu.SideRight} {
		got, err := gpu.SearchSorted(s, a, v, side)
		if err != nil {
			t.Fatal(err)
		}
		g := toSlice(t, got)
		for i, x := range q {
			want := sort.Search(len(sorted), func(j int) bool {
				if side == gpu.SideLeft {
					return !stLess(sorted[j], x)
				}
				return stLess(x, sorted[j])
			})
			if g[i] != int64(want) {
				t.Fatalf("%v side %d: query %d (%v): %d, want %d", dtype.Of[T](), side, i, x, g[i], want)
			}
		}
		if !slices.Equal(got.Shape(), v.Shape()) {
			t.Fatalf("shape %v", got.Shape())
		}
		got.Free()
	}
}

// TestSearchSorted runs under both Tuning.SearchVariant values.
func TestSearchSorted(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		old := d.Tuning()
		defer d.SetTuning(old)
		for v := 1; v <= 2; v++ {
			tu := old
			tu.SearchVariant = v
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("v%d", v), func(t *testing.T) { searchSortedCases(t, s) })
		}
	})
}

// TestSearchSortedTree runs the tree (Tuning.SearchVariant 2) under its other
// configurations (SearchShared, SearchQueries, SearchBlock, SearchBlocksPerSM; every
// other one with SearchSwizzle), on
// arrays of 7 and 8 levels too (float32 and int64 with negative keys; on CUDA 5 shared
// levels of float32 go to dynamic shared memory, the CPU backend's 48 KiB takes 4).
func TestSearchSortedTree(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		old := d.Tuning()
		defer d.SetTuning(old)
		rng := rand.New(rand.NewPCG(22, 8))
		f32 := stGen[float32](rng, 300000, patRandom)
		slices.SortFunc(f32, func(a, b float32) int { return cmp.Compare(a, b) })
		i64 := make([]int64, 2200000)
		for i := range i64 {
			i64[i] = rng.Int64N(1<<40) - 1<<39
		}
		slices.Sort(i64)
		qf := append(stGen[float32](rng, 20000, patRandom), f32[:1000]...)
		qi := make([]int64, 20000)
		for i := range qi {
			qi[i] = rng.Int64N(1<<41) - 1<<40
		}
		qi = append(qi, i64[len(i64)-1000:]...)
		// (global: Tuning.SearchTableGlobal, which the float32 array of 7 levels takes,
		// 2^14 buckets at most, before a table in shared memory)
		for i, c := range []struct{ shared, queries, block, blocks, table, global int }{{0, 1, 256, 1, 0, 0}, {1, 3, 512, 2, 0, 0}, {2, 8, 512, 4, 0, 0}, {3, 6, 256, 16, 0, 0},
			{4, 5, 1024, 64, 0, 0}, {4, 0, 256, 16, 0, 0}, {5, 8, 512, 1, 0, 0}, {5, 2, 1024, 1, 0, 0}, {5, 0, 256, 16, 0, 0}, {5, 0, 0, 0, 0, 0}, {3, 6, 256, 16, 0, 0},
			{5, 0, 0, 0, 14, 0}, {5, 0, 0, 0, 10, 0}, {4, 0, 256, 16, 12, 0}, {0, 1, 256, 1, 4, 0},
			{5, 0, 0, 0, 0, 20}, {5, 0, 0, 0, 14, 9}, {0, 2, 256, 1, 0, 4}} {
			tu := old
			tu.SearchVariant, tu.SearchShared, tu.SearchQueries, tu.SearchBlock, tu.SearchBlocksPerSM = 2, c.shared, c.queries, c.block, c.blocks
			tu.SearchSwizzle = i%2 == 1                                                   // the shared levels swizzled in every other configuration
			tu.SearchTable, tu.SearchTableGlobal, tu.SearchHints = c.table, c.global, i%5 // (every hint level in turn)
			tu.SearchCarveout = []int{0, 65, 100, 1}[i%4]
			tu.SearchPair = i%3 != 1 // (pair loads, where there is no table, in two of three)
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			t.Run(fmt.Sprintf("s%d-q%d-t%d-b%d-z%v-table%d-global%d-hints%d-pair%v", c.shared, c.queries, c.block, c.blocks, tu.SearchSwizzle, c.table, c.global, tu.SearchHints, tu.SearchPair), func(t *testing.T) {
				searchSortedCases(t, s)
				checkSearchSorted(t, s, f32, qf, []int{len(qf)})
				checkSearchSorted(t, s, i64, qi, []int{len(qi)})
			})
		}
	})
}

// TestSearchSortedTreeSimDevice runs the tree's configurations on the simulated CUDA
// device (its 48 KiB of shared memory take 4 levels, not 5).
func TestSearchSortedTreeSimDevice(t *testing.T) {
	d, s := simStream(t)
	old := d.Tuning()
	defer d.SetTuning(old)
	rng := rand.New(rand.NewPCG(22, 11))
	a := stGen[float32](rng, 40000, patRandom)
	slices.SortFunc(a, func(x, y float32) int { return cmp.Compare(x, y) })
	q := append(stGen[float32](rng, 5000, patRandom), a[:100]...) // (at least 2^12: the table's buckets)
	ai := make([]int64, 5000)
	for i := range ai {
		ai[i] = int64(i/3) - 800
	}
	qi := make([]int64, 1000)
	for i := range qi {
		qi[i] = rng.Int64N(2000) - 1000
	}
	for i, c := range []struct{ shared, queries, block, blocks, table int }{{2, 8, 512, 1, 0}, {5, 2, 1024, 1, 0}, {3, 5, 256, 2, 0}, {5, 2, 1024, 1, 0},
		{5, 2, 1024, 1, 12}, {3, 5, 256, 2, 14}} { // (on 40000 keys at most 2^12 buckets)
		tu := old
		tu.SearchVariant, tu.SearchShared, tu.SearchQueries, tu.SearchBlock, tu.SearchBlocksPerSM = 2, c.shared, c.queries, c.block, c.blocks
		tu.SearchSwizzle = i%2 == 1
		tu.SearchTable = c.table // (the bucket table: 14 bits don't fit 48 KiB beside the levels: fewer levels, then fewer bits)
		tu.SearchPair = i%4 < 2  // (pair loads in the first two configurations, not in the next two)
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("s%d-q%d-t%d-b%d-z%v-table%d-pair%v", c.shared, c.queries, c.block, c.blocks, tu.SearchSwizzle, c.table, tu.SearchPair), func(t *testing.T) {
			checkSearchSorted(t, s, a, q, []int{len(q)})
			checkSearchSorted(t, s, ai, qi, []int{len(qi)})
		})
	}
}

// TestSearchSortedGlobalTableSimDevice runs the tree with a global bucket table
// (Tuning.SearchTableGlobal) and each hint level on the simulated CUDA device: an array
// of 7 levels (more than 8^6 elements, the least that takes the table), the host's
// choice of the table's bits, the sample, the table's launch and the walk, against
// checkSearchSorted's reference.
func TestSearchSortedGlobalTableSimDevice(t *testing.T) {
	if testing.Short() {
		t.Skip("a 270000-element array on the simulator")
	}
	d, s := simStream(t)
	old := d.Tuning()
	defer d.SetTuning(old)
	rng := rand.New(rand.NewPCG(22, 12))
	a := stGen[float32](rng, 270000, patRandom)
	slices.SortFunc(a, func(x, y float32) int { return cmp.Compare(x, y) })
	q := append(stGen[float32](rng, 16400, patRandom), a[:50]...) // (at least 2^14: the table's buckets)
	q = append(q, a[len(a)-50:]...)
	for _, c := range []struct{ global, hints int }{{14, 2}, {9, 4}, {4, 0}} {
		tu := old
		tu.SearchTableGlobal, tu.SearchHints = c.global, c.hints
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("global%d-hints%d", c.global, c.hints), func(t *testing.T) {
			checkSearchSorted(t, s, a, q, []int{len(q)})
		})
	}
}

func searchSortedCases(t *testing.T, s *gpu.Stream) {
	{
		rng := rand.New(rand.NewPCG(22, 4))
		sortedOf := func(xs []float32) []float32 {
			slices.SortStableFunc(xs, func(a, b float32) int {
				switch {
				case stLess(a, b):
					return -1
				case stLess(b, a):
					return 1
				}
				return 0
			})
			return xs
		}
		for _, m := range []int{1, 2, 7, 1000, 5000, 100000} {
			a := sortedOf(stGen[float32](rng, m, patSpecial))
			q := stGen[float32](rng, 3000, patSpecial)
			// Both ends and every element (duplicates too).
			q = append(q, a[0], a[m-1], float32(math.Inf(-1)), float32(math.Inf(1)), float32(math.NaN()))
			for i := 0; i < min(m, 200); i++ {
				q = append(q, a[rng.IntN(m)])
			}
			checkSearchSorted(t, s, a, q, []int{len(q)})
		}
		ai := make([]int32, 1000)
		for i := range ai {
			ai[i] = int32(i / 10) // duplicates
		}
		qi := make([]int32, 120)
		for i := range qi {
			qi[i] = int32(i) - 10
		}
		checkSearchSorted(t, s, ai, qi, []int{4, 30})
		checkSearchSorted(t, s, []uint64{3}, []uint64{0, 3, 4}, []int{3})
		// An array at an address of no 16-byte alignment (a view from element 1).
		{
			a := sortedOf(stGen[float32](rng, 4099, patSpecial))
			q := append(stGen[float32](rng, 2000, patSpecial), a[1:300]...)
			full := mustArr[float32](t)(gpu.FromSlice(s, a))
			defer full.Free()
			view, err := full.Slice(gpu.R(1, len(a)))
			if err != nil {
				t.Fatal(err)
			}
			v := mustArr[float32](t)(gpu.FromSlice(s, q))
			defer v.Free()
			got, err := gpu.SearchSorted(s, view, v, gpu.SideLeft)
			if err != nil {
				t.Fatal(err)
			}
			g := toSlice(t, got)
			got.Free()
			for i, x := range q {
				want := sort.Search(len(a)-1, func(j int) bool { return !stLess(a[1+j], x) })
				if g[i] != int64(want) {
					t.Fatalf("view: query %d (%v): %d, want %d", i, x, g[i], want)
				}
			}
		}
		// Empty array: all zeros.
		e := mustArr[int32](t)(gpu.Empty[int32](s, 0))
		defer e.Free()
		v := mustArr[int32](t)(gpu.FromSlice(s, []int32{5, 6}, 2))
		defer v.Free()
		got, err := gpu.SearchSorted(s, e, v, gpu.SideRight)
		if err != nil {
			t.Fatal(err)
		}
		if g := toSlice(t, got); !slices.Equal(g, []int64{0, 0}) {
			t.Fatalf("empty array: %v", g)
		}
		two := mustArr[int32](t)(gpu.FromSlice(s, []int32{1, 2, 3, 4}, 2, 2))
		defer two.Free()
		if _, err := gpu.SearchSorted(s, two, v, gpu.SideLeft); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("2-d array: %v", err)
		}
		if _, err := gpu.SearchSorted(s, e, v, gpu.Side(7)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("bad side: %v", err)
		}
	}
}

// quantileRef is numpy.quantile's linear method (and median) of xs, in float64.
func quantileRef(xs []float64, q float64, median bool) float64 {
	n := len(xs)
	if n == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.SortFunc(s, func(a, b float64) int {
		switch {
		case stLess(a, b):
			return -1
		case stLess(b, a):
			return 1
		}
		return 0
	})
	if math.IsNaN(s[n-1]) {
		return math.NaN()
	}
	if median {
		return (s[(n-1)/2] + s[n/2]) / 2
	}
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	t := pos - float64(lo)
	if pos >= float64(n-1) {
		// numpy's _get_indexes: at or past the last element both indexes are -1 (the
		// last element) and gamma = pos - (-1).
		lo, hi, t = n-1, n-1, pos+1
	}
	a, b := s[lo], s[hi]
	if t >= 0.5 {
		return b - float64((b-a)*float64(1-t))
	}
	return a + float64((b-a)*t)
}

// TestQuantileSignedZero checks the sign of zero results against numpy's linear
// method, bit for bit: a row of one -0.0 gives -0.0 at every q (numpy reads its last
// element twice with gamma 1: b - 0*0), a row whose largest is -0.0 gives +0.0 at q = 1
// when it has two elements or more (b - (+0)*(1-gamma), gamma = n), NaNs skipped first.
func TestQuantileSignedZero(t *testing.T) {
	nz := math.Copysign(0, -1)
	nan := math.NaN()
	cases := []struct {
		xs     []float64
		q      float64 // (-1: the median)
		skip   bool    // NanQuantile, NanMedian
		negZer bool    // the result is -0.0 (else +0.0)
	}{
		{[]float64{nz}, 0, false, true},
		{[]float64{nz}, 0.3, false, true},
		{[]float64{nz}, 1, false, true},
		{[]float64{nz}, -1, false, true},
		{[]float64{nz, nan}, 1, true, true},
		{[]float64{nan, nz, nan}, 0.5, true, true},
		{[]float64{nan, nz}, -1, true, true},
		{[]float64{-1, nz}, 1, false, false},
		{[]float64{nz, nz}, 0, false, false},
		{[]float64{nz, nz, nz}, 1, false, false},
		{[]float64{nz, nan, nz}, 1, true, false},
	}
	run := func(t *testing.T, s *gpu.Stream) {
		for _, c := range cases {
			a := mustArr[float64](t)(gpu.FromSlice(s, c.xs, len(c.xs)))
			var r *gpu.Array[float32]
			var err error
			switch {
			case c.q < 0 && c.skip:
				r, err = gpu.NanMedian[float32](s, a)
			case c.q < 0:
				r, err = gpu.Median[float32](s, a)
			case c.skip:
				r, err = gpu.NanQuantile[float32](s, a, c.q)
			default:
				r, err = gpu.Quantile[float32](s, a, c.q)
			}
			if err != nil {
				t.Fatalf("%v q=%v: %v", c.xs, c.q, err)
			}
			var r64 *gpu.Array[float64]
			switch {
			case c.q < 0 && c.skip:
				r64, err = gpu.NanMedianOf(s, a)
			case c.q < 0:
				r64, err = gpu.MedianOf(s, a)
			case c.skip:
				r64, err = gpu.NanQuantiles[float64](s, a, []float64{c.q, c.q})
			default:
				r64, err = gpu.Quantiles[float64](s, a, []float64{c.q, c.q})
			}
			if err != nil {
				t.Fatalf("%v q=%v: %v", c.xs, c.q, err)
			}
			g32, g64 := toSlice(t, r), toSlice(t, r64)
			for i, g := range append([]float64{float64(g32[0])}, g64...) {
				if g != 0 || math.Signbit(g) != c.negZer {
					t.Errorf("%v q=%v skip=%v (result %d): %v (sign %v), want a zero of sign %v", c.xs, c.q, c.skip, i, g, math.Signbit(g), c.negZer)
				}
			}
			if w := quantileRef(c.xs, max(c.q, 0), c.q < 0); !c.skip && (w != 0 || math.Signbit(w) != c.negZer) {
				t.Errorf("%v q=%v: the reference gives %v", c.xs, c.q, w)
			}
			a.Free()
			r.Free()
			r64.Free()
		}
	}
	forDevicesAndSim(t, false, run)
}

func TestQuantile(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(22, 5))
		shape := []int{4, 30, 5}
		xs := stGen[int32](rng, 600, patRandom)
		for i := range xs {
			xs[i] %= 1000
		}
		a := mustArr[int32](t)(gpu.FromSlice(s, xs, shape...))
		defer a.Free()
		fx := make([]float64, len(xs))
		for i, x := range xs {
			fx[i] = float64(x)
		}
		line := func(keep []int, axes []int, idx []int) []float64 {
			// The elements with the kept axes at idx, over the reduced axes.
			var out []float64
			for i := 0; i < 600; i++ {
				c := []int{i / 150, i / 5 % 30, i % 5}
				ok := true
				for j, k := range keep {
					if c[k] != idx[j] {
						ok = false
					}
				}
				if ok {
					out = append(out, fx[i])
				}
			}
			return out
		}
		for _, axes := range [][]int{{1}, {0, 2}, {-1}, nil} {
			var opts []gpu.ReduceOption
			if axes != nil {
				opts = append(opts, gpu.Axes(axes...))
			}
			var keep []int
			for k := 0; k < 3; k++ {
				red := axes == nil
				for _, ax := range axes {
					if (ax+3)%3 == k {
						red = true
					}
				}
				if !red {
					keep = append(keep, k)
				}
			}
			qs := []float64{0, 0.1, 0.5, 0.75, 1}
			got, err := gpu.Quantiles[float64](s, a, qs, opts...)
			if err != nil {
				t.Fatal(err)
			}
			med, err := gpu.Median[float32](s, a, opts...)
			if err != nil {
				t.Fatal(err)
			}
			g, gm := toSlice(t, got), toSlice(t, med)
			outs := 1
			for _, k := range keep {
				outs *= shape[k]
			}
			for o := 0; o < outs; o++ {
				idx := make([]int, len(keep))
				r := o
				for j := len(keep) - 1; j >= 0; j-- {
					idx[j] = r % shape[keep[j]]
					r /= shape[keep[j]]
				}
				ln := line(keep, axes, idx)
				for qi, q := range qs {
					if w := quantileRef(ln, q, false); g[qi*outs+o] != w {
						t.Fatalf("axes %v q %v out %d: %v, want %v", axes, q, o, g[qi*outs+o], w)
					}
				}
				if w := float32(quantileRef(ln, 0, true)); gm[o] != w {
					t.Fatalf("axes %v median %d: %v, want %v", axes, o, gm[o], w)
				}
			}
			got.Free()
			med.Free()
		}
		// NaN gives NaN; one quantile keeps the reduced shape; errors.
		f := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, float32(math.NaN()), 3, 4, 5, 6}, 2, 3))
		defer f.Free()
		q, err := gpu.Quantile[float32](s, f, 0.5, gpu.Axes(1))
		if err != nil {
			t.Fatal(err)
		}
		if g := toSlice(t, q); len(g) != 2 || !math.IsNaN(float64(g[0])) || g[1] != 5 {
			t.Fatalf("quantile with NaN: %v", g)
		}
		if _, err := gpu.Quantile[float32](s, f, 1.5); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("q 1.5: %v", err)
		}
		if _, err := gpu.Quantile[float32](s, f, math.NaN()); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("q NaN: %v", err)
		}
		e := mustArr[float32](t)(gpu.Empty[float32](s, 0))
		defer e.Free()
		m, err := gpu.Median[float64](s, e)
		if err != nil {
			t.Fatal(err)
		}
		if g := toSlice(t, m); len(g) != 1 || math.Float64bits(g[0]) != 0x7fffffffffffffff {
			t.Fatalf("median of nothing: %v, want the canonical NaN", g)
		}
		// Odd counts: the middle element itself, even past MaxFloat64/2 (where a + a
		// overflows); no qs: an empty array of shape (0, kept axes...).
		big := mustArr[float64](t)(gpu.FromSlice(s, []float64{1e308, 1.7e308, 1.5e308, -1.7e308, 1e308, -1.6e308}, 2, 3))
		defer big.Free()
		if g := toSlice(t, mustArr[float64](t)(gpu.Median[float64](s, big, gpu.Axes(1)))); len(g) != 2 || g[0] != 1.5e308 || g[1] != -1.6e308 {
			t.Fatalf("median of rows near MaxFloat64: %v, want [1.5e308 -1.6e308]", g)
		}
		if g := mustArr[float64](t)(gpu.Quantiles[float64](s, big, nil, gpu.Axes(1))); !slices.Equal(g.Shape(), []int{0, 2}) {
			t.Fatalf("no quantiles: shape %v, want [0 2]", g.Shape())
		}
		// Of a half type too (NaN's bits, not a conversion of NaN to uint16: 0).
		m16, err := gpu.Median[gpu.Float16](s, e)
		if err != nil {
			t.Fatal(err)
		}
		if g := toSlice(t, m16); len(g) != 1 || g[0].Bits() != 0x7fff {
			t.Fatalf("float16 median of nothing: %v, want the canonical NaN 0x7fff", g)
		}
		// Bools are 0 and 1 and interpolate (numpy.quantile raises a TypeError for
		// them; numpy.median's mean of the middle ones is Median's).
		bv := []bool{true, false, false, true, true, false, true, true}
		bf := make([]float64, len(bv))
		for i, b := range bv {
			if b {
				bf[i] = 1
			}
		}
		for _, n := range []int{5, 8} {
			ba := mustArr[bool](t)(gpu.FromSlice(s, bv[:n]))
			bqs := []float64{0, 0.3, 0.5, 0.55, 1}
			g := toSlice(t, mustArr[float64](t)(gpu.Quantiles[float64](s, ba, bqs)))
			for i, q := range bqs {
				if w := quantileRef(bf[:n], q, false); g[i] != w {
					t.Errorf("bool quantile %v of %v: %v, want %v", q, bv[:n], g[i], w)
				}
			}
			if g := toSlice(t, mustArr[float64](t)(gpu.Median[float64](s, ba))); g[0] != quantileRef(bf[:n], 0, true) {
				t.Errorf("bool median of %v: %v, want %v", bv[:n], g[0], quantileRef(bf[:n], 0, true))
			}
			ba.Free()
		}
		if g := toSlice(t, mustArr[float64](t)(gpu.Quantile[float64](s, mustArr[bool](t)(gpu.FromSlice(s, bv[:5])), 0.3))); math.Abs(g[0]-0.2) > 1e-15 {
			t.Errorf("bool quantile 0.3 of %v: %v, want 0.2 (the documented example)", bv[:5], g[0])
		}
		ei := mustArr[int32](t)(gpu.Zeros[int32](s, 0, 2))
		defer ei.Free()
		qb, err := gpu.Quantile[gpu.BFloat16](s, ei, 0.5, gpu.Axes(0))
		if err != nil {
			t.Fatal(err)
		}
		if g := toSlice(t, qb); len(g) != 2 || g[0].Bits() != 0x7fff || g[1].Bits() != 0x7fff {
			t.Fatalf("bfloat16 quantiles over an empty axis: %v, want the canonical NaN 0x7fff", g)
		}
	})
}

// TestNanQuantile: NanQuantiles and NanMedian leave each row's NaNs out (rows of none,
// one, some, all but one and all NaN, ±Inf among the rest), against quantileRef of the
// row's other elements, along either axis (the second through a copy to rows), on every
// device and on the CUDA path of the PTX simulator; a row of NaNs alone is the
// canonical NaN; of integers, Median's.
func TestNanQuantile(t *testing.T) {
	run := func(t *testing.T, s *gpu.Stream) {
		t.Run("float32", func(t *testing.T) { nanQuantile[float32](t, s) })
		t.Run("float64", func(t *testing.T) { nanQuantile[float64](t, s) })
		xs := []int32{5, -3, 9, 1, 1, 7}
		a := mustArr[int32](t)(gpu.FromSlice(s, xs, 2, 3))
		defer a.Free()
		m := mustArr[float64](t)(gpu.NanMedian[float64](s, a, gpu.Axes(1)))
		if g := toSlice(t, m); !slices.Equal(g, []float64{5, 1}) {
			t.Errorf("NanMedian of int32 rows %v: %v, want [5 1]", xs, g)
		}
		m.Free()
		// Half types: rows [3 NaN 1 NaN], [NaN NaN NaN NaN] and [-2 NaN 0.5 4].
		for _, half16 := range []bool{false, true} {
			vals := []float64{3, math.NaN(), 1, math.NaN(), math.NaN(), math.NaN(), math.NaN(), math.NaN(), -2, math.NaN(), 0.5, 4}
			var med *gpu.Array[float32]
			if half16 {
				med = nanMedianOfHalf(t, s, vals, half.NewFloat16)
			} else {
				med = nanMedianOfHalf(t, s, vals, half.NewBFloat16)
			}
			g := toSlice(t, med)
			med.Free()
			if len(g) != 3 || g[0] != 2 || math.Float32bits(g[1]) != 0x7fffffff || g[2] != 0.5 {
				t.Errorf("NanMedian of half rows (float16 %v): %v (%#x), want [2 NaN 0.5] (0x7fffffff)", half16, g, math.Float32bits(g[1]))
			}
		}
	}
	forDevicesAndSim(t, false, run)
}

// nanMedianOfHalf returns NanMedian (float32) along axis 1 of vals as a (3, 4) array of
// the half type H.
func nanMedianOfHalf[H gpu.Float16 | gpu.BFloat16](t *testing.T, s *gpu.Stream, vals []float64, conv func(float64) H) *gpu.Array[float32] {
	hs := make([]H, len(vals))
	for i, v := range vals {
		hs[i] = conv(v)
	}
	h := mustArr[H](t)(gpu.FromSlice(s, hs, 3, 4))
	defer h.Free()
	return mustArr[float32](t)(gpu.NanMedian[float32](s, h, gpu.Axes(1)))
}

func nanQuantile[T float32 | float64](t *testing.T, s *gpu.Stream) {
	rng := rand.New(rand.NewPCG(23, uint64(unsafe.Sizeof(T(0)))))
	const rows, n = 7, 50
	nans := []int{0, 1, 25, n - 1, n, 3, 0}
	xs := make([]T, rows*n)
	for r, c := range nans {
		row := xs[r*n : (r+1)*n]
		for i := range row {
			row[i] = T(rng.NormFloat64() * 100)
			if rng.IntN(20) == 0 {
				row[i] = T(math.Inf(1 - 2*rng.IntN(2)))
			}
		}
		for _, i := range rng.Perm(n)[:c] {
			row[i] = nanFromBits[T](nanPayloads[T]()[rng.IntN(4)])
		}
	}
	qs := []float64{0, 0.2, 0.5, 0.9, 1}
	for _, axis := range []int{1, 0} {
		// Along axis 0: the transpose's rows.
		shape, src := []int{rows, n}, xs
		if axis == 0 {
			shape, src = []int{n, rows}, make([]T, rows*n)
			for r := range rows {
				for i := range n {
					src[i*rows+r] = xs[r*n+i]
				}
			}
		}
		a := mustArr[T](t)(gpu.FromSlice(s, src, shape...))
		q := mustArr[float64](t)(gpu.NanQuantiles[float64](s, a, qs, gpu.Axes(axis)))
		m := mustArr[T](t)(gpu.NanMedian[T](s, a, gpu.Axes(axis)))
		gq, gm := toSlice(t, q), toSlice(t, m)
		for r := range rows {
			var keep []float64
			for _, x := range xs[r*n : (r+1)*n] {
				if x == x {
					keep = append(keep, float64(x))
				}
			}
			for j, qv := range qs {
				w, g := quantileRef(keep, qv, false), gq[j*rows+r]
				if math.IsNaN(w) && math.Float64bits(g) != 0x7fffffffffffffff || !math.IsNaN(w) && g != w {
					t.Errorf("axis %d row %d (%d NaN) q %v: %v (%#x), want %v", axis, r, nans[r], qv, g, math.Float64bits(g), w)
				}
			}
			w, g := T(quantileRef(keep, 0, true)), gm[r]
			if math.IsNaN(float64(w)) && nanBits(g) != canonNaN[T]() || w == w && g != w {
				t.Errorf("axis %d row %d (%d NaN) median: %v (%#x), want %v", axis, r, nans[r], g, nanBits(g), w)
			}
		}
		if got := toSlice(t, a); !slices.EqualFunc(got, src, func(x, y T) bool { return nanBits(x) == nanBits(y) }) {
			t.Errorf("axis %d: the input changed", axis)
		}
		a.Free()
		q.Free()
		m.Free()
	}
}

func TestPartition(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(22, 6))
		xs := stGen[float64](rng, 1000, patRandom)
		a := mustArr[float64](t)(gpu.FromSlice(s, xs, 10, 100))
		defer a.Free()
		for _, kth := range []int{0, 50, 99, -1} {
			p := mustArr[float64](t)(gpu.Partition(s, a, kth, 1))
			pi := mustArr[int64](t)(gpu.Argpartition(s, a, kth, 1))
			g, gi := toSlice(t, p), toSlice(t, pi)
			k := (kth + 100) % 100
			for r := 0; r < 10; r++ {
				row := g[r*100 : (r+1)*100]
				for j := range row {
					if (j < k && row[j] > row[k]) || (j > k && row[j] < row[k]) {
						t.Fatalf("kth %d row %d: not partitioned at %d", kth, r, j)
					}
					if xs[r*100+int(gi[r*100+j])] != row[j] {
						t.Fatalf("argpartition row %d at %d", r, j)
					}
				}
			}
			p.Free()
			pi.Free()
		}
		_ = fmt.Sprint()
	})
}

// randIntsOf returns n values drawn uniformly from [0, k), each shifted left by shift
// bits: keys with many ties (shift spreads them over the high bits).
func randIntsOf[T int32 | int64](rng *rand.Rand, n, k int, shift uint) []T {
	xs := make([]T, n)
	for i := range xs {
		xs[i] = T(rng.IntN(k)) << shift
	}
	return xs
}

// TestMedianOddSim: the median of an odd count is the middle element itself on the
// simulated CUDA device too (the generated kernel: (a + a)/2 overflowed past
// MaxFloat64/2), and the mean of the two middle ones for an even count.
func TestMedianOddSim(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulator is slow")
	}
	_, s := simStream(t)
	big := mustArr[float64](t)(gpu.FromSlice(s, []float64{1e308, 1.7e308, 1.5e308, -1.7e308, 1e308, -1.6e308, 3, 1, 4, 1.5, 9, 2}, 4, 3))
	defer big.Free()
	if g := toSlice(t, mustArr[float64](t)(gpu.Median[float64](s, big, gpu.Axes(1)))); !slices.Equal(g, []float64{1.5e308, -1.6e308, 3, 2}) {
		t.Fatalf("medians: %v, want [1.5e308 -1.6e308 3 2]", g)
	}
	even := mustArr[float64](t)(gpu.FromSlice(s, []float64{4, 1, 3, 2}))
	defer even.Free()
	if g := toSlice(t, mustArr[float64](t)(gpu.Median[float64](s, even))); !slices.Equal(g, []float64{2.5}) {
		t.Fatalf("median of 4 values: %v, want [2.5]", g)
	}
}
