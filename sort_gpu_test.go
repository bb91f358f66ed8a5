package gpu_test

import (
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Large sorts on CUDA only (the CPU backend runs the same code at the other tests'
// sizes), checked in O(n): the result is ordered, Argsort's indices are a permutation
// that gives the sorted values, and equal keys' indices increase (so the result is the
// stable sort's, which is unique).
//
// The GPU checks: go test -run 'Sort|Argsort|TopK|Unique|SearchSorted|Quantile|Median|Partition' .

func cudaOnly(t *testing.T, d *gpu.Device) {
	if d.Backend() != "cuda" {
		t.Skip("CUDA only")
	}
}

// checkSortedFast checks Sort and Argsort of xs (1-D) in O(n).
func checkSortedFast[T gpu.Elem](t *testing.T, s *gpu.Stream, xs []T, desc bool) {
	t.Helper()
	n := len(xs)
	a := mustArr[T](t)(gpu.FromSlice(s, xs, n))
	defer a.Free()
	var opts []gpu.SortOption
	if desc {
		opts = append(opts, gpu.Descending())
	}
	srt := mustArr[T](t)(gpu.Sort(s, a, 0, opts...))
	defer srt.Free()
	idx := mustArr[int64](t)(gpu.Argsort(s, a, 0, opts...))
	defer idx.Free()
	checkArgsortFast(t, xs, toSlice(t, srt), toSlice(t, idx), desc)
}

// checkArgsortFast checks in O(n) that gi (Argsort of xs) is a permutation of 0..n-1
// along which xs is in order, its indices increasing among equal keys (the stable
// sort's), and, got not nil, that got (Sort of xs) is xs along it, bit for bit.
func checkArgsortFast[T gpu.Elem](t *testing.T, xs, got []T, gi []int64, desc bool) {
	t.Helper()
	n := len(xs)
	if len(gi) != n || got != nil && len(got) != n {
		t.Fatalf("%v n=%d: %d indices, %d sorted keys", dtype.Of[T](), n, len(gi), len(got))
	}
	before := func(x, y T) bool { // x strictly before y in the order
		if desc {
			return stLess(y, x)
		}
		return stLess(x, y)
	}
	seen := make([]bool, n)
	for i := 0; i < n; i++ {
		j := gi[i]
		if j < 0 || j >= int64(n) || seen[j] {
			t.Fatalf("%v n=%d: argsort[%d] = %d: not a permutation", dtype.Of[T](), n, i, j)
		}
		seen[j] = true
		if got != nil && stBits(xs[j]) != stBits(got[i]) {
			t.Fatalf("%v n=%d: sorted[%d] = %v but a[argsort[%d]] = %v", dtype.Of[T](), n, i, got[i], i, xs[j])
		}
		if i > 0 {
			k, prev := xs[j], xs[gi[i-1]]
			if before(k, prev) {
				t.Fatalf("%v n=%d: out of order at %d: %v after %v", dtype.Of[T](), n, i, k, prev)
			}
			if !before(prev, k) && gi[i] < gi[i-1] {
				t.Fatalf("%v n=%d: unstable at %d: index %d after %d among equal keys", dtype.Of[T](), n, i, gi[i], gi[i-1])
			}
		}
	}
}

// checkSortByKeyFast checks SortByKey of xs (1-D) with each key's index as the
// payload, of 4 and of 8 bytes, against Argsort (both stable, so equal; Argsort
// checked first, checkArgsortFast): the passes that carry payloads.
func checkSortByKeyFast[T gpu.Elem](t *testing.T, s *gpu.Stream, xs []T) {
	t.Helper()
	n := len(xs)
	a := mustArr[T](t)(gpu.FromSlice(s, xs, n))
	defer a.Free()
	idx := mustArr[int64](t)(gpu.Argsort(s, a, 0))
	defer idx.Free()
	want := toSlice(t, idx)
	checkArgsortFast(t, xs, nil, want, false)
	i64 := mustArr[int64](t)(gpu.Arange[int64](s, 0, int64(n), 1))
	defer i64.Free()
	i32 := mustArr[int32](t)(gpu.Arange[int32](s, 0, int32(n), 1))
	defer i32.Free()
	k8, v8, err := gpu.SortByKey(s, a, i64, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer k8.Free()
	defer v8.Free()
	k4, v4, err := gpu.SortByKey(s, a, i32, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer k4.Free()
	defer v4.Free()
	g8, g4, gk8, gk4 := toSlice(t, v8), toSlice(t, v4), toSlice(t, k8), toSlice(t, k4)
	for i, w := range want {
		if g8[i] != w || int64(g4[i]) != w || stBits(gk8[i]) != stBits(xs[w]) || stBits(gk4[i]) != stBits(xs[w]) {
			t.Fatalf("%v n=%d: at %d: SortByKey (%v, %d) and (%v, %d), Argsort %d (key %v)", dtype.Of[T](), n, i,
				gk8[i], g8[i], gk4[i], g4[i], w, xs[w])
		}
	}
}

func TestSortLargeGPU(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		cudaOnly(t, d)
		rng := rand.New(rand.NewPCG(23, 1))
		// Each check is logged as it starts and ends (with -v, as it happens), so that a
		// run that stops shows where.
		start := time.Now()
		step := func(what string, f func()) {
			t0 := time.Now()
			t.Logf("%s ...", what)
			f()
			t.Logf("%s: %v (%v in all)", what, time.Since(t0).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
		}
		sizes := []int{1<<22 + 5, 1 << 24}
		if !testing.Short() {
			sizes = append(sizes, 1<<26+1)
		}
		for i, n := range sizes {
			// Every pattern at the first size; the larger ones (the host's checks take
			// most of the time) the random and special patterns.
			for p := stPattern(0); p < numPatterns; p++ {
				if i > 0 && p != patRandom && p != patSpecial {
					continue
				}
				step(fmt.Sprintf("float32 n=%d %v", n, p), func() { checkSortedFast(t, s, stGen[float32](rng, n, p), false) })
				step(fmt.Sprintf("int64 n=%d %v", n, p), func() { checkSortedFast(t, s, stGen[int64](rng, n, p), p == patFew) })
			}
			step(fmt.Sprintf("uint8 n=%d", n), func() { checkSortedFast(t, s, stGen[uint8](rng, n, patRandom), false) })
			step(fmt.Sprintf("int16 n=%d", n), func() { checkSortedFast(t, s, stGen[int16](rng, n, patSpecial), true) })
			step(fmt.Sprintf("float64 n=%d", n), func() { checkSortedFast(t, s, stGen[float64](rng, n, patSpecial), false) })
			step(fmt.Sprintf("bool n=%d", n), func() { checkSortedFast(t, s, stGen[bool](rng, n, patRandom), false) })
			step(fmt.Sprintf("float32 by key n=%d", n), func() { checkSortByKeyFast(t, s, stGen[float32](rng, n, patSpecial)) })
			step(fmt.Sprintf("uint16 by key n=%d", n), func() { checkSortByKeyFast(t, s, stGen[uint16](rng, n, patFew)) })
		}
		// Rows: many short rows (block sort), rows of a few tiles, 1 and 10^6.
		for _, sh := range [][2]int{{1 << 16, 33}, {1024, 16384}, {3, 1000000}, {1 << 20, 1}, {1 << 19, 2}} {
			step(fmt.Sprintf("float32 rows %v", sh), func() {
				checkSorted(t, s, stGen[float32](rng, sh[0]*sh[1], patSpecial), []int{sh[0], sh[1]}, false)
			})
		}
	})
}

// A sort past 2^31 elements (uint8 keys: 2 GiB), checked by order and counts.
func TestSortPast2to31GPU(t *testing.T) {
	if testing.Short() {
		t.Skip("2 GiB of keys")
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		cudaOnly(t, d)
		n := 1<<31 + 3
		xs := make([]uint8, n)
		var cnt [256]int
		x := uint64(0x9E3779B97F4A7C15)
		for i := range xs {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			xs[i] = uint8(x >> 56)
			cnt[xs[i]]++
		}
		a := mustArr[uint8](t)(gpu.FromSlice(s, xs, n))
		defer a.Free()
		srt := mustArr[uint8](t)(gpu.Sort(s, a, 0))
		defer srt.Free()
		got := toSlice(t, srt)
		var c [256]int
		for i, v := range got {
			if i > 0 && v < got[i-1] {
				t.Fatalf("out of order at %d: %d after %d", i, v, got[i-1])
			}
			c[v]++
		}
		if c != cnt {
			t.Fatal("the sorted keys are not the input's")
		}
	})
}

// TestSortFusedGPU sorts single rows of keys alone through the fused sort (one
// cooperative launch: kernel.RadixFused) at the sizes around its limits on the device:
// one block a multiprocessor and two (one also with the counts' barrier joined, pass 0
// ranked after the first barrier and the ballot ranking), the largest tiles (Items4, Items8) filling the wave, the
// larger tiles past it (up to FusedItems4, keys of up to 4 bytes), and a row
// one key past a tile boundary; every key width and the special, few-distinct and
// sorted patterns, ascending and descending.
func TestSortFusedGPU(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		cudaOnly(t, d)
		rng := rand.New(rand.NewPCG(23, 5))
		def := gpu.SortConfigFromEnv(func(string) string { return "" })
		sms := d.Info().Multiprocessors
		var fused atomic.Int64 // (the fused sorts run: each check's Sort must be one)
		defer gpu.SetSortFusedHook(func(*kernel.RadixFused) { fused.Add(1) })()
		check := func(run func()) {
			t.Helper()
			before := fused.Load()
			run()
			if fused.Load() == before {
				t.Fatal("the sort did not take the fused path")
			}
		}
		for i, blocks := range []int{1, 2, 1} {
			c := def
			c.FusedMax, c.FusedBlocks = 1<<24, blocks
			if i == 2 {
				c.FusedSplit, c.FusedRank, c.FusedEarly = false, kernel.RankBallot, false
			}
			old := gpu.SetSortConfig(c)
			wave := blocks * sms * kernel.SortBlock
			for _, n := range []int{wave*c.Items8 - 7, wave*c.Items4 - 1, wave*3 + 1, 40001, wave*c.Items4 + 1, wave*c.FusedItems4 - 5} {
				t.Run(fmt.Sprintf("blocks%d/split=%v/early=%v/%v/%d", blocks, c.FusedSplit, c.FusedEarly, c.FusedRank, n), func(t *testing.T) {
					for _, p := range []stPattern{patSpecial, patFew, patSorted} {
						desc := p == patFew
						check(func() { checkSortedFast(t, s, stGen[float32](rng, n, p), desc) })
						check(func() { checkSortedFast(t, s, stGen[int16](rng, n, p), !desc) })
						check(func() { checkSortedFast(t, s, stGen[uint8](rng, n, p), desc) })
					}
					if n <= wave*c.Items8 {
						check(func() { checkSortedFast(t, s, stGen[float64](rng, n, patSpecial), false) })
						check(func() { checkSortedFast(t, s, stGen[int64](rng, n, patFew), true) })
					}
				})
			}
			gpu.SetSortConfig(old)
		}
		// FusedFull: rows of whole tiles (a wave of one block a multiprocessor, of
		// two, with tiles of 1 to FusedItems4 keys a thread) take the kernel without
		// bounds tests.
		var full atomic.Int64
		defer gpu.SetSortFusedHook(func(sp *kernel.RadixFused) {
			fused.Add(1)
			if sp.Full {
				full.Add(1)
			}
		})()
		c := def
		c.FusedFull = true
		defer gpu.SetSortConfig(gpu.SetSortConfig(c))
		for _, bk := range [][2]int{{1, 1}, {1, 5}, {1, c.Items4}, {2, c.Items4}, {2, 20}, {2, c.FusedItems4}} {
			n := bk[0] * sms * kernel.SortBlock * bk[1]
			t.Run(fmt.Sprintf("full/%d", n), func(t *testing.T) {
				before := full.Load()
				check(func() { checkSortedFast(t, s, stGen[float32](rng, n, patSpecial), false) })
				check(func() { checkSortedFast(t, s, stGen[int32](rng, n, patFew), true) })
				check(func() { checkSortedFast(t, s, stGen[uint8](rng, n, patSorted), false) })
				if bk[1] <= c.Items8 {
					check(func() { checkSortedFast(t, s, stGen[float64](rng, n, patSpecial), true) })
				}
				if got, want := full.Load()-before, int64(3); got < want {
					t.Errorf("%d of the sorts took the kernel without bounds tests, want at least %d", got, want)
				}
			})
		}
	})
}
