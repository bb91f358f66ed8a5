package gpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// BenchmarkSortTuned sorts and argsorts 2^28 float32 (2^22 on the CPU) with each
// configuration of the radix passes (gpu.SortConfig: items per thread, look-back
// window, .minnctapersm, the ranking, the load fence, the lean look-back and
// histogram, full tiles' own copy of the loads and ranking, the whole-sector
// writes), one call plus a synchronize per iteration,
// GB/s counting the keys read and written once (argsort: keys read, int64 indices
// written), beside a device-to-device copy of the keys; every configuration's result
// must equal the default's.
//
//	go test -run XXX -bench SortTuned -benchtime 20x .
func BenchmarkSortTuned(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	n := 1 << 28
	if !scBenchLarge(d) {
		n = 1 << 22
	}
	x, err := gpu.Rand[float32](s, gpu.NewGenerator(5), n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	def := gpu.SortConfigFromEnv(func(string) string { return "" })
	configs := []gpu.SortConfig{def}
	for _, f := range []func(c *gpu.SortConfig){
		func(c *gpu.SortConfig) { c.LeanLookback, c.HistLean = false, false }, // the first kernels
		func(c *gpu.SortConfig) { c.LeanLookback = false },
		func(c *gpu.SortConfig) { c.HistLean = false },
		func(c *gpu.SortConfig) { c.Lookback = 32 },
		func(c *gpu.SortConfig) { c.Lookback = 8 },
		func(c *gpu.SortConfig) { c.LongItems4 = 0 }, // the base passes for every row
		func(c *gpu.SortConfig) { c.MinBlocks, c.LongItems4 = 0, 0 },
		func(c *gpu.SortConfig) { c.MinBlocks, c.LongItems4 = 3, 0 },
		func(c *gpu.SortConfig) { c.Rank, c.MinBlocks = kernel.RankAtomicOr, 0 },
		func(c *gpu.SortConfig) { c.Rank, c.MinBlocks = kernel.RankMatch, 0 },
		func(c *gpu.SortConfig) { c.MinBlocks, c.Items4, c.LongItems4 = 3, 14, 0 },
		func(c *gpu.SortConfig) { c.LoadFence = false },
		func(c *gpu.SortConfig) { c.Rank = kernel.RankMatch },
		func(c *gpu.SortConfig) { c.Rank = kernel.RankAtomicOr },
		func(c *gpu.SortConfig) { c.Rank, c.MinBlocks = kernel.RankAtomicOr, 3 },
		func(c *gpu.SortConfig) { c.Lookback = 2 },
		func(c *gpu.SortConfig) { c.LongMinBlocks = 2 },
		func(c *gpu.SortConfig) { c.Lookback = 1 },
		func(c *gpu.SortConfig) { c.Items4, c.LongItems4 = 12, 0 },
		func(c *gpu.SortConfig) { c.Items4, c.LongItems4 = 20, 0 },
		func(c *gpu.SortConfig) { c.LongItems4 = 24 },
		func(c *gpu.SortConfig) { c.FullTiles = gpu.SortFullNone },
		func(c *gpu.SortConfig) { c.FullTiles = gpu.SortFullLong },
		func(c *gpu.SortConfig) { c.FullTiles = gpu.SortFullAll },
		func(c *gpu.SortConfig) { c.FullTiles, c.LongItems4 = gpu.SortFullAll, 0 },
		func(c *gpu.SortConfig) { c.Sectors = gpu.SortSectorsAll },
		func(c *gpu.SortConfig) { c.Sectors = gpu.SortSectorsValues },
	} {
		c := def
		f(&c)
		configs = append(configs, c)
	}
	var ref []float32
	b.Run(fmt.Sprintf("%d/float32/copy", n), func(b *testing.B) { scCopyBench[float32](b, s, n) })
	for _, c := range configs {
		// (at 2^28 keys the long rows' passes run: LongItems4 under LongMinBlocks, when set)
		name := fmt.Sprintf("k%d/lb%d/mb%d/long%d-mb%d/%v/lf=%v/ll=%v/hl=%v/full=%s/sectors=%s", c.Items4, c.Lookback, c.MinBlocks, c.LongItems4,
			c.LongMinBlocks, c.Rank, c.LoadFence, c.LeanLookback, c.HistLean, []string{"off", "long", "all", "narrow"}[c.FullTiles],
			[]string{"off", "values", "on"}[c.Sectors])
		b.Run(fmt.Sprintf("%d/float32/sort/%s", n, name), func(b *testing.B) {
			defer gpu.SetSortConfig(gpu.SetSortConfig(c))
			y, err := gpu.Sort(s, x, 0)
			if err != nil {
				b.Fatal(err)
			}
			got := toSliceB(b, y)
			y.Free()
			if ref == nil {
				ref = got
			}
			for i := range got {
				if got[i] != ref[i] {
					b.Fatalf("%s: element %d = %v, default configuration %v", name, i, got[i], ref[i])
				}
			}
			scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.Sort(s, x, 0) })
		})
		b.Run(fmt.Sprintf("%d/float32/argsort/%s", n, name), func(b *testing.B) {
			defer gpu.SetSortConfig(gpu.SetSortConfig(c))
			scRun(b, s, int64(12*n), func() (interface{ Free() error }, error) { return gpu.Argsort(s, x, 0) })
		})
	}
}

func toSliceB[T gpu.Elem](b *testing.B, a *gpu.Array[T]) []T {
	b.Helper()
	out, err := a.ToSlice(bg)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkSortFused sorts one row of float32 keys (float64 at 2^18) of sizes around
// gpubench's 512000 seven ways: the passes (GPU_SORT_FUSED=0: histogram, plan and a
// launch a digit), and the fused sort (kernel.RadixFused: one cooperative launch) as
// configured (up to two blocks a multiprocessor), under one block at most, without the
// split barrier (GPU_SORT_FUSED_SPLIT=off), with the ballot ranking
// (GPU_SORT_FUSED_RANK=ballot), with pass 0 ranked after the first barrier
// (GPU_SORT_FUSED_EARLY=off) and without bounds tests where the row is whole tiles
// (GPU_SORT_FUSED_FULL=on: on the H200, 2^18, 512000 and 2^20 keys); one call plus a synchronize per
// iteration, GB/s counting the keys read and written once. Every way's result must
// equal the passes'. On the CPU they are the same sort.
//
//	go test -run XXX -bench SortFused -benchtime 2000x .
func BenchmarkSortFused(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	def := gpu.SortConfigFromEnv(func(string) string { return "" })
	passes, fused, one := def, def, def
	passes.FusedMax = 0
	fused.FusedMax = 1 << 24
	one.FusedMax, one.FusedBlocks = 1<<24, 1
	joined, ballot, late, full := fused, fused, fused, fused
	joined.FusedSplit = false
	ballot.FusedRank = kernel.RankBallot
	late.FusedEarly = false
	full.FusedFull = true
	ways := []sortWay{{"passes", passes}, {"fused", fused}, {"fused-max1", one}, {"fused-joined", joined}, {"fused-ballot", ballot}, {"fused-late", late},
		{"fused-full", full}}
	for _, n := range []int{100_000, 1 << 18, 512000, 1 << 20} {
		benchSortFusedWays[float32](b, s, ways, n, func(v float32) uint64 { return uint64(math.Float32bits(v)) })
	}
	benchSortFusedWays[float64](b, s, ways, 1<<18, math.Float64bits)
}

// BenchmarkSortFusedLarge times rows past two blocks' tiles of 16 keys a thread (the
// most the fused sort took before its larger tiles: 1,081,344 keys on the H200)
// through the passes and through the fused sort with tiles of up to 20, 24 or 26 keys
// a thread (FusedItems4: two blocks a multiprocessor hold 1.35M, 1.62M or 1.76M keys on
// the H200); 2^20 keys take the 16-item tiles either way.
func BenchmarkSortFusedLarge(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	def := gpu.SortConfigFromEnv(func(string) string { return "" })
	passes := def
	passes.FusedMax = 0
	sms := d.Info().Multiprocessors
	for _, n := range []int{1 << 20, 1_250_000, 1_500_000, 1_750_000} {
		ways := []sortWay{{"passes", passes}}
		for _, items := range []int{20, 24, 26} {
			if n <= 2*sms*kernel.SortBlock*items { // (else the passes again)
				c := def
				c.FusedItems4 = items
				ways = append(ways, sortWay{fmt.Sprintf("fused-items%d", items), c})
			}
		}
		benchSortFusedWays[float32](b, s, ways, n, func(v float32) uint64 { return uint64(math.Float32bits(v)) })
	}
}

// sortWay is a named sort configuration of a benchmark.
type sortWay struct {
	name string
	c    gpu.SortConfig
}

// benchSortFusedWays times Sort of n uniform keys of type T under each way's
// configuration, after checking that every way's result has the first way's bits.
func benchSortFusedWays[T float32 | float64](b *testing.B, s *gpu.Stream, ways []sortWay, n int, bits func(T) uint64) {
	x, err := gpu.Rand[T](s, gpu.NewGenerator(uint64(n)), n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	var ref []uint64
	for _, w := range ways {
		b.Run(fmt.Sprintf("%v/%d/%s", dtype.Of[T](), n, w.name), func(b *testing.B) {
			defer gpu.SetSortConfig(gpu.SetSortConfig(w.c))
			y, err := gpu.Sort(s, x, 0)
			if err != nil {
				b.Fatal(err)
			}
			got := make([]uint64, 0, n)
			for _, v := range toSliceB(b, y) {
				got = append(got, bits(v))
			}
			y.Free()
			if ref == nil {
				ref = got
			}
			for i := range got {
				if got[i] != ref[i] {
					b.Fatalf("%s: element %d = %#x, the %s way's %#x", w.name, i, got[i], ways[0].name, ref[i])
				}
			}
			scRun(b, s, int64(2*dtype.Of[T]().Size()*n), func() (interface{ Free() error }, error) { return gpu.Sort(s, x, 0) })
		})
	}
}

// BenchmarkSortFullTilesMid sorts and argsorts rows of 2^21 to 2^24 keys (the passes
// below the long rows', one call plus a synchronize per iteration) with full tiles
// given to the long rows' passes only (gpu.SortFullLong) and to every pass
// (SortFullAll), float32 and float64 keys; each configuration's result must equal the
// other's. On the CPU (2^16 keys) they are the same sort.
//
//	go test -run XXX -bench SortFullTilesMid -benchtime 50x .
func BenchmarkSortFullTilesMid(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	sizes := []int{1 << 21, 1 << 22, 1 << 23, 1 << 24}
	if !scBenchLarge(d) {
		sizes = []int{1 << 16}
	}
	def := gpu.SortConfigFromEnv(func(string) string { return "" })
	for _, n := range sizes {
		b.Run(fmt.Sprintf("%d/float32", n), func(b *testing.B) { sortFullTilesMid[float32](b, s, def, n) })
		b.Run(fmt.Sprintf("%d/float64", n), func(b *testing.B) { sortFullTilesMid[float64](b, s, def, n) })
	}
}

func sortFullTilesMid[T float32 | float64](b *testing.B, s *gpu.Stream, def gpu.SortConfig, n int) {
	x, err := gpu.Rand[T](s, gpu.NewGenerator(uint64(n)), n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	size := int64(dtype.Of[T]().Size())
	var ref []int64
	for _, full := range []int{gpu.SortFullLong, gpu.SortFullAll} {
		c := def
		c.FullTiles = full
		name := []string{"off", "long", "all", "narrow"}[full]
		b.Run("sort/full="+name, func(b *testing.B) {
			defer gpu.SetSortConfig(gpu.SetSortConfig(c))
			scRun(b, s, 2*size*int64(n), func() (interface{ Free() error }, error) { return gpu.Sort(s, x, 0) })
		})
		b.Run("argsort/full="+name, func(b *testing.B) {
			defer gpu.SetSortConfig(gpu.SetSortConfig(c))
			i, err := gpu.Argsort(s, x, 0)
			if err != nil {
				b.Fatal(err)
			}
			got := toSliceB(b, i)
			i.Free()
			if ref == nil {
				ref = got
			}
			for k := range got {
				if got[k] != ref[k] {
					b.Fatalf("full=%s: index %d = %d, full=long %d", name, k, got[k], ref[k])
				}
			}
			scRun(b, s, (size+8)*int64(n), func() (interface{ Free() error }, error) { return gpu.Argsort(s, x, 0) })
		})
	}
}

// BenchmarkQuantileSelect times Median of float32 rows by selection (Tuning.QuantileSelect
// 1) and by sorting (0), for one row of 2^14 to 2^24 elements and for 2^24 elements as
// 16 to 4096 rows (2^20 on the CPU, rows scaled down alike), NanMedian beside them,
// and Quantile 0.3 (two neighbours: one select and the counting pass) at the long row; one
// call plus a synchronize per iteration, GB/s counting the keys read once. The two
// ways' results must be equal: the threshold's measurement.
//
//	go test -run XXX -bench QuantileSelect -benchtime 200x .
func BenchmarkQuantileSelect(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	total := 1 << 24
	if !scBenchLarge(d) {
		total = 1 << 20
	}
	type shape struct{ rows, n int }
	var shapes []shape
	for n := 1 << 14; n <= total; n <<= 2 {
		shapes = append(shapes, shape{1, n})
	}
	for _, rows := range []int{16, 256, 4096} {
		if total/rows >= 1<<8 {
			shapes = append(shapes, shape{rows, total / rows})
		}
	}
	for _, sh := range shapes {
		x, err := gpu.Rand[float32](s, gpu.NewGenerator(7), sh.rows, sh.n)
		if err != nil {
			b.Fatal(err)
		}
		calls := []struct {
			name string
			f    func() (*gpu.Array[float32], error)
		}{
			{"median", func() (*gpu.Array[float32], error) { return gpu.Median[float32](s, x, gpu.Axes(1)) }},
			{"nanmedian", func() (*gpu.Array[float32], error) { return gpu.NanMedian[float32](s, x, gpu.Axes(1)) }},
		}
		if sh.rows == 1 && sh.n == total {
			calls = append(calls, struct {
				name string
				f    func() (*gpu.Array[float32], error)
			}{"quantile0.3", func() (*gpu.Array[float32], error) { return gpu.Quantile[float32](s, x, 0.3, gpu.Axes(1)) }})
		}
		for _, c := range calls {
			var ref []float32
			for _, sel := range []int{1, 0} {
				way := map[int]string{1: "select", 0: "sort"}[sel]
				b.Run(fmt.Sprintf("%dx%d/%s/%s", sh.rows, sh.n, c.name, way), func(b *testing.B) {
					benchSame(b, d, func(tu *gpu.Tuning) { tu.QuantileSelect, tu.QuantileSelectTotal = sel, 0 }, c.f, &ref,
						func(x, y float32) bool { return math.Float32bits(x) == math.Float32bits(y) },
						func(i int) string { return fmt.Sprintf("row %d under %s", i, way) })
					scRun(b, s, int64(4*sh.rows*sh.n), func() (interface{ Free() error }, error) { return c.f() })
				})
			}
		}
		x.Free()
	}
}

// BenchmarkSearchSortedDist searches 2^26 float32 queries in 2^24 sorted float32 keys
// (2^20 in 2^18 on the CPU, where the tree is shallow and the settings change nothing)
// under four settings: the tree without cache hints (Tuning.SearchHints 0), with
// them (the default, 2), with them but without pair loads (Tuning.SearchPair off),
// and with a global bucket table of 2^20 buckets besides (Tuning.SearchTableGlobal
// 20, which takes no pair loads); on keys of four distributions, the queries drawn from
// the same one: uniform in [0, 1), normal, log-normal (exp of 4 normals: most values
// crowd into few buckets) and clustered (19 of 20 in a band of a ten-thousandth of the
// range). Every setting must give the same positions. GB/s counts 12 bytes a query,
// as gpubench's row.
//
//	go test -run XXX -bench SearchSortedDist -benchtime 20x .
func BenchmarkSearchSortedDist(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	m, n := 1<<24, 1<<26
	if !scBenchLarge(d) {
		m, n = 1<<18, 1<<20
	}
	rng := rand.New(rand.NewPCG(5, 21))
	dists := []struct {
		name string
		gen  func() float32
	}{
		{"uniform", func() float32 { return rng.Float32() }},
		{"normal", func() float32 { return float32(rng.NormFloat64()) }},
		{"lognormal", func() float32 { return float32(math.Exp(4 * rng.NormFloat64())) }},
		{"clustered", func() float32 {
			if rng.IntN(20) == 0 {
				return rng.Float32()
			}
			return 0.5 + 1e-4*rng.Float32()
		}},
	}
	settings := []struct {
		name        string
		hints, bits int
		pair        bool
	}{{"nohints", 0, 0, true}, {"default", 2, 0, true}, {"nopair", 2, 0, false}, {"table20", 2, 20, true}}
	for _, dist := range dists {
		keys, qs := make([]float32, m), make([]float32, n)
		for i := range keys {
			keys[i] = dist.gen()
		}
		for i := range qs {
			qs[i] = dist.gen()
		}
		slices.Sort(keys)
		a, err := gpu.FromSlice(s, keys)
		if err != nil {
			b.Fatal(err)
		}
		v, err := gpu.FromSlice(s, qs)
		if err != nil {
			b.Fatal(err)
		}
		var ref []int64
		for _, set := range settings {
			b.Run(dist.name+"/"+set.name, func(b *testing.B) {
				search := func() (*gpu.Array[int64], error) { return gpu.SearchSorted(s, a, v, gpu.SideLeft) }
				benchSame(b, d, func(tu *gpu.Tuning) {
					tu.SearchHints, tu.SearchTableGlobal, tu.SearchPair = set.hints, set.bits, set.pair
				}, search, &ref,
					func(x, y int64) bool { return x == y },
					func(j int) string { return fmt.Sprintf("query %d (%v) under %s", j, qs[j], set.name) })
				scRun(b, s, int64(12*n), func() (interface{ Free() error }, error) { return search() })
			})
		}
		a.Free()
		v.Free()
	}
}

// benchSame sets d's tuning as set says for the rest of b (restoring it at b's end),
// makes one result of f and compares it with *ref, elementwise by same, failing b
// where they differ (what names element i); the first setting's result, where *ref
// is nil, becomes the reference.
func benchSame[T gpu.Elem](b *testing.B, d *gpu.Device, set func(*gpu.Tuning), f func() (*gpu.Array[T], error), ref *[]T, same func(x, y T) bool, what func(i int) string) {
	b.Helper()
	tu := d.Tuning()
	set(&tu)
	old, err := d.SetTuning(tu)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { d.SetTuning(old) })
	y, err := f()
	if err != nil {
		b.Fatal(err)
	}
	got := toSliceB(b, y)
	y.Free()
	if *ref == nil {
		*ref = got
		return
	}
	for i := range got {
		if !same(got[i], (*ref)[i]) {
			b.Fatalf("%s: %v, the reference %v", what(i), got[i], (*ref)[i])
		}
	}
}

// BenchmarkSortRunsAligned sorts the same int32 keys (about 2^26; 2^20 on the CPU) in
// two orders: "aligned", built so that every tile of every pass of the long rows' radix
// sort (tiles of LongItems4 keys a thread) holds each of 224 digits exactly 32 times
// (in a random order within the tile), so that every run a pass writes is 32 keys on a
// 128-byte line of its own; and "shuffled", the same keys in a random order, whose runs
// start and end anywhere in a 32-byte sector, as a sort's do. The two sorts do the
// same work but for the partly written sectors (and the ranking's peers: 32 of a digit
// a tile in both), so the difference is what those sectors cost a sort. One call plus
// a synchronize per iteration, GB/s counting the keys read and written once; the two
// results must be equal.
//
//	go test -run XXX -bench SortRunsAligned -benchtime 20x .
func BenchmarkSortRunsAligned(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	def := gpu.SortConfigFromEnv(func(string) string { return "" })
	tile := kernel.SortBlock * def.LongItems4
	const run, digits = 32, 224
	if tile != run*digits {
		b.Skipf("tiles of %d keys (not %d runs of %d)", tile, digits, run)
	}
	tiles := (1 << 26) / tile
	if !scBenchLarge(d) {
		tiles = (1 << 20) / tile
	}
	n := tiles * tile
	keys := sortAlignedKeys(n, tile, run, rand.New(rand.NewPCG(3, 4)))
	shuffled := slices.Clone(keys)
	rand.New(rand.NewPCG(5, 6)).Shuffle(n, func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
	var ref []int32
	for _, c := range []struct {
		name string
		keys []int32
	}{{"aligned", keys}, {"shuffled", shuffled}} {
		x, err := gpu.FromSlice(s, c.keys)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%d/int32/%s", n, c.name), func(b *testing.B) {
			y, err := gpu.Sort(s, x, 0)
			if err != nil {
				b.Fatal(err)
			}
			got := toSliceB(b, y)
			y.Free()
			if !slices.IsSorted(got) {
				b.Fatal("not sorted")
			}
			if ref == nil {
				ref = got
			} else if !slices.Equal(got, ref) {
				b.Fatal("the two orders' sorts differ")
			}
			scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.Sort(s, x, 0) })
		})
		x.Free()
	}
}

// sortAlignedKeys returns n int32 keys (n a multiple of tile, tile = run*digits) whose
// every radix pass (8-bit digits, least significant first, the sign bit flipped)
// reads tiles of tile keys each holding every digit below digits exactly run times,
// in a random order within the tile.
func sortAlignedKeys(n, tile, run int, r *rand.Rand) []int32 {
	tiles := n / tile
	order := make([]int32, n) // the key (by input position) at each place of the pass's input
	for i := range order {
		order[i] = int32(i)
	}
	next := make([]int32, n)
	raw := make([]uint32, n)
	slot := make([]uint8, tile)
	for i := range slot {
		slot[i] = uint8(i / run)
	}
	for p := range 4 {
		for t := range tiles {
			r.Shuffle(tile, func(i, j int) { slot[i], slot[j] = slot[j], slot[i] })
			var seen [256]int
			for i, dg := range slot {
				id := order[t*tile+i]
				o := uint32(dg)
				if p == 3 {
					o ^= 0x80 // the ordered key's top byte is the sign bit flipped
				}
				raw[id] |= o << (8 * p)
				// The stable scatter: digit dg's bucket, tile t's run in it.
				next[int(dg)*run*tiles+t*run+seen[dg]] = id
				seen[dg]++
			}
		}
		order, next = next, order
	}
	out := make([]int32, n)
	for i, v := range raw {
		out[i] = int32(v)
	}
	return out
}

// BenchmarkSortShortRows sorts 2^28 random int32 keys (2^22 on the CPU) as one row and
// as rows of 1024 to 8192 keys: rows of at most a block sort's tile (4096 keys by
// default) are sorted in shared memory, one read and one write, where the one row
// takes the histogram and four radix passes. The short rows bound what the last stage
// of a hybrid sort would take (most-significant digits first until the buckets fit a
// block, then a block sort of each: Stehle & Jacobsen, "A Memory Bandwidth-Efficient
// Hybrid Radix Sort on GPUs", SIGMOD 2017) from above: the block sort ranks all four
// digits, where a bucket left by two 8-bit partitions needs two. Such a hybrid serves
// keys whose top 16 bits spread evenly (these int32 bits) and not gpubench's float32
// keys, uniform in [0, 1): their top 16 bits take about 1700 of 65536 values, the most
// common each 1/256 of the keys, so that two partitions of 2^28 leave buckets of 2^20
// keys. Beside a copy of the keys; GB/s counts the keys read and written once.
//
//	go test -run XXX -bench SortShortRows -benchtime 20x .
func BenchmarkSortShortRows(b *testing.B) {
	d := scBenchDev(b)
	s := d.DefaultStream()
	n := 1 << 28
	if !scBenchLarge(d) {
		n = 1 << 22
	}
	x, err := gpu.Empty[int32](s, n)
	if err != nil {
		b.Fatal(err)
	}
	defer x.Free()
	if err := gpu.RandBitsInto(s, gpu.NewGenerator(7), x); err != nil {
		b.Fatal(err)
	}
	b.Run(fmt.Sprintf("%d/int32/copy", n), func(b *testing.B) { scCopyBench[int32](b, s, n) })
	for _, row := range []int{n, 8192, 4096, 2048, 1024} {
		xr, err := x.Reshape(n/row, row)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%d/int32/rows-of-%d", n, row), func(b *testing.B) {
			y, err := gpu.Sort(s, xr, -1)
			if err != nil {
				b.Fatal(err)
			}
			got := toSliceB(b, y)
			y.Free()
			for r := 0; r < n; r += row {
				if !slices.IsSorted(got[r : r+row]) {
					b.Fatalf("row %d not sorted", r/row)
				}
			}
			scRun(b, s, int64(8*n), func() (interface{ Free() error }, error) { return gpu.Sort(s, xr, -1) })
		})
	}
}
