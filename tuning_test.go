package gpu_test

import (
	"errors"
	"strconv"
	"sync"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/internal/kernel"
)

// TestTuningFromEnv checks the defaults and every environment variable of Tuning.
func TestTuningFromEnv(t *testing.T) {
	def := gpu.TuningFromEnv(func(string) string { return "" })
	want := gpu.Tuning{ReduceSplitMin: 1 << 17, ReduceFuse: true, ReduceHalfUnroll: 4, ReduceHalfAccs: 2, ScanKeepStatus: true,
		CompactEagerMax: 4 << 20, ReadPinned: true, PermuteVariant: 3, RandomWaves: 4, RandomUniformWaves: 16, RandomHalfUniform: 3,
		Scan: gpu.ScanTuning{Variant: 2, Stage: true, MinBlocks: 5}, Concat: gpu.ConcatTuning{Variant: 2, Rows: 1, BlocksPerSM: 0, Items: 4, RowsKernel: true}, ScatterVariant: 2,
		SearchVariant: 2, SearchShared: 5, SearchSwizzle: true, SearchHints: 2, SearchPair: true, TopKVariant: 3, UniqueDenseMax: 1 << 21, QuantileSelect: 1 << 16, QuantileSelectTotal: 1 << 20, GatherVariant: 1, PutVariant: 1}
	if def != want {
		t.Fatalf("defaults %+v, want %+v", def, want)
	}
	env := map[string]string{"GPU_PERMUTE_VARIANT": "v1", "GPU_RANDOM_WAVES": "16", "GPU_RANDOM_UNIFORM_WAVES": "2", "GPU_SCAN_VARIANT": "v1",
		"GPU_SCAN_STAGE": "off", "GPU_SCAN_LOOKBACK": "2", "GPU_SCAN_MINBLOCKS": "0", "GPU_MATMUL_TILE": "3",
		"GPU_CONCAT_ROWS": "2", "GPU_CONCAT_BLOCKS_PER_SM": "32", "GPU_CONCAT_AXIS0": "kernel", "GPU_CONCAT_AXIS1": "kernel",
		"GPU_CONCAT_VARIANT": "v1", "GPU_CONCAT_ITEMS": "8", "GPU_CONCAT_STREAM": "1",
		"GPU_SCATTER_VARIANT": "v3", "GPU_GATHER_STREAM": "1", "GPU_GATHER_VARIANT": "v2", "GPU_PUT_VARIANT": "2", "GPU_EW_PDL": "1", "GPU_RANDOM_HALF_UNIFORM": "v1",
		"GPU_REDUCE_BLOCKS_PER_SM": "8", "GPU_SEARCH_VARIANT": "v1", "GPU_TOPK_VARIANT": "1", "GPU_UNIQUE_DENSE_MAX": "1048576", "GPU_QUANTILE_SELECT": "0", "GPU_QUANTILE_SELECT_TOTAL": "7",
		"GPU_SEARCH_SHARED": "2", "GPU_SEARCH_QUERIES": "8", "GPU_SEARCH_BLOCK": "1024", "GPU_SEARCH_BLOCKS_PER_SM": "4", "GPU_SEARCH_SWIZZLE": "off", "GPU_SEARCH_TABLE": "12", "GPU_SEARCH_TABLE_GLOBAL": "18", "GPU_SEARCH_HINTS": "4", "GPU_SEARCH_CARVEOUT": "65", "GPU_SEARCH_PAIR": "off",
		"GPU_REDUCE_HALF_UNROLL": "2", "GPU_REDUCE_HALF_ACCS": "1", "GPU_STAT_EXACT_EXP": "1"}
	got := gpu.TuningFromEnv(func(k string) string { return env[k] })
	want.PermuteVariant, want.RandomWaves, want.RandomUniformWaves, want.MatMulTile = 1, 16, 2, 3
	want.Concat = gpu.ConcatTuning{Variant: 1, Rows: 2, BlocksPerSM: 32, Items: 8, Stream: true, Axis0Kernel: true, RowsKernel: true}
	want.ScatterVariant, want.GatherStream, want.ElementwisePDL = 3, true, true
	want.RandomHalfUniform, want.ReduceBlocksPerSM = 1, 8
	want.SearchVariant, want.TopKVariant, want.GatherVariant, want.PutVariant = 1, 1, 2, 2
	want.UniqueDenseMax, want.QuantileSelect, want.QuantileSelectTotal = 1<<20, 0, 7
	want.SearchShared, want.SearchQueries, want.SearchBlock, want.SearchBlocksPerSM, want.SearchSwizzle, want.SearchTable = 2, 8, 1024, 4, false, 12
	want.SearchTableGlobal, want.SearchHints, want.SearchCarveout, want.SearchPair = 18, 4, 65, false
	want.ReduceHalfUnroll, want.ReduceHalfAccs, want.StatExactExp = 2, 1, true
	want.Scan = gpu.ScanTuning{Variant: 1, Lookback: 2}
	if got != want {
		t.Errorf("from %v: %+v, want %+v", env, got, want)
	}
	for v, want := range map[string]int{"v1": 1, "2": 2, "v2": 2, "3": 3, "v3": 3} {
		if got := gpu.TuningFromEnv(func(k string) string { return map[string]string{"GPU_PERMUTE_VARIANT": v}[k] }); got.PermuteVariant != want {
			t.Errorf("GPU_PERMUTE_VARIANT=%s: variant %d, want %d", v, got.PermuteVariant, want)
		}
	}
	for v, want := range map[string]int{"v1": 1, "2": 2, "v3": 3, "3": 3} {
		if got := gpu.TuningFromEnv(func(k string) string { return map[string]string{"GPU_TOPK_VARIANT": v}[k] }); got.TopKVariant != want {
			t.Errorf("GPU_TOPK_VARIANT=%s: variant %d, want %d", v, got.TopKVariant, want)
		}
	}
	for v, want := range map[string]int{"v1": 1, "1": 1, "2": 2, "v2": 2, "3": 3} {
		if got := gpu.TuningFromEnv(func(k string) string { return map[string]string{"GPU_SCATTER_VARIANT": v}[k] }); got.ScatterVariant != want {
			t.Errorf("GPU_SCATTER_VARIANT=%s: variant %d, want %d", v, got.ScatterVariant, want)
		}
	}
	bad := map[string]string{"GPU_PERMUTE_VARIANT": "v4", "GPU_RANDOM_WAVES": "0", "GPU_SCAN_LOOKBACK": "3", "GPU_SCAN_MINBLOCKS": "9",
		"GPU_CONCAT_ROWS": "3", "GPU_CONCAT_BLOCKS_PER_SM": "-1", "GPU_CONCAT_VARIANT": "v3", "GPU_CONCAT_ITEMS": "2", "GPU_MATMUL_TILE": strconv.Itoa(len(kernel.MatMulTiles()) + 1), "GPU_SCATTER_VARIANT": "v0",
		"GPU_RANDOM_HALF_UNIFORM": "v4", "GPU_REDUCE_BLOCKS_PER_SM": "-1", "GPU_SEARCH_VARIANT": "v3", "GPU_TOPK_VARIANT": "0", "GPU_UNIQUE_DENSE_MAX": "-1", "GPU_QUANTILE_SELECT": "-1", "GPU_QUANTILE_SELECT_TOTAL": "-1", "GPU_SEARCH_SHARED": "6", "GPU_SEARCH_QUERIES": "0", "GPU_SEARCH_BLOCK": "128", "GPU_SEARCH_BLOCKS_PER_SM": "65", "GPU_SEARCH_TABLE": "3", "GPU_GATHER_VARIANT": "v3", "GPU_PUT_VARIANT": "v0",
		"GPU_REDUCE_HALF_UNROLL": "3", "GPU_REDUCE_HALF_ACCS": "16"}
	if got := gpu.TuningFromEnv(func(k string) string { return bad[k] }); got != def {
		t.Errorf("from %v: %+v, want the defaults", bad, got)
	}
}

// TestTuningPerDevice checks that each device has its own tuning, that invalid values
// are refused, and that changing it while operations run is safe (run with -race).
func TestTuningPerDevice(t *testing.T) {
	d1, err := gpu.NewDevice(cpu.New(2))
	if err != nil {
		t.Fatal(err)
	}
	d2, err := gpu.NewDevice(cpu.New(2))
	if err != nil {
		t.Fatal(err)
	}
	if d1.Tuning() != gpu.DefaultTuning() {
		t.Fatalf("a new device's tuning %+v, want DefaultTuning %+v", d1.Tuning(), gpu.DefaultTuning())
	}
	tu := d1.Tuning()
	tu.PermuteVariant, tu.ReduceSplitMin = 1, 4096
	old, err := d1.SetTuning(tu)
	if err != nil || old != gpu.DefaultTuning() {
		t.Fatalf("SetTuning: %+v, %v", old, err)
	}
	if d1.Tuning() != tu || d2.Tuning() != gpu.DefaultTuning() {
		t.Fatalf("d1 %+v, d2 %+v: the tunings are not per device", d1.Tuning(), d2.Tuning())
	}
	for _, bad := range []func(*gpu.Tuning){
		func(t *gpu.Tuning) { t.PermuteVariant = 4 },
		func(t *gpu.Tuning) { t.PermuteVariant = 0 },
		func(t *gpu.Tuning) { t.Scan.Variant = 0 },
		func(t *gpu.Tuning) { t.Scan.Lookback = 3 },
		func(t *gpu.Tuning) { t.Scan.MinBlocks = 9 },
		func(t *gpu.Tuning) { t.RandomWaves = 0 },
		func(t *gpu.Tuning) { t.SearchVariant = 3 },
		func(t *gpu.Tuning) { t.TopKVariant = 0 },
		func(t *gpu.Tuning) { t.TopKVariant = 4 },
		func(t *gpu.Tuning) { t.UniqueDenseMax = -1 },
		func(t *gpu.Tuning) { t.QuantileSelect = -1 },
		func(t *gpu.Tuning) { t.QuantileSelectTotal = -1 },
		func(t *gpu.Tuning) { t.SearchShared = 6 },
		func(t *gpu.Tuning) { t.SearchBlock = 128 },
		func(t *gpu.Tuning) { t.SearchQueries = 9 },
		func(t *gpu.Tuning) { t.SearchBlocksPerSM = -1 },
		func(t *gpu.Tuning) { t.SearchTable = 3 },
		func(t *gpu.Tuning) { t.SearchTable = 15 },
		func(t *gpu.Tuning) { t.SearchTableGlobal = 2 },
		func(t *gpu.Tuning) { t.SearchTableGlobal = 23 },
		func(t *gpu.Tuning) { t.SearchHints = 5 },
		func(t *gpu.Tuning) { t.SearchHints = -1 },
		func(t *gpu.Tuning) { t.SearchCarveout = -1 },
		func(t *gpu.Tuning) { t.SearchCarveout = 101 },
		func(t *gpu.Tuning) { t.RandomUniformWaves = 0 },
		func(t *gpu.Tuning) { t.RandomHalfUniform = 0 },
		func(t *gpu.Tuning) { t.ReduceBlocksPerSM = -1 },
		func(t *gpu.Tuning) { t.Concat.Rows = 0 },
		func(t *gpu.Tuning) { t.Concat.BlocksPerSM = -1 },
		func(t *gpu.Tuning) { t.Concat.Variant = 3 },
		func(t *gpu.Tuning) { t.Concat.Items = 2 },
		func(t *gpu.Tuning) { t.ScatterVariant = 0 },
		func(t *gpu.Tuning) { t.ScatterVariant = 4 },
		func(t *gpu.Tuning) { t.MatMulTile = -1 },
		func(t *gpu.Tuning) { t.MatMulTile = len(kernel.MatMulTiles()) + 1 },
		func(t *gpu.Tuning) { t.ReduceSplitMin = -1 },
		func(t *gpu.Tuning) { t.ReduceHalfUnroll = 3 },
		func(t *gpu.Tuning) { t.ReduceHalfAccs = 0 },
		func(t *gpu.Tuning) { t.CompactEagerMax = -1 },
	} {
		b := tu
		bad(&b)
		if _, err := d1.SetTuning(b); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("SetTuning(%+v): %v, want ErrInvalidValue", b, err)
		}
		if d1.Tuning() != tu {
			t.Fatalf("a refused SetTuning changed the tuning to %+v", d1.Tuning())
		}
	}
	var nilDev *gpu.Device
	if _, err := nilDev.SetTuning(tu); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("SetTuning on a nil device: %v", err)
	}

	// Operations while another goroutine switches the knobs: the results don't change.
	s, err := d1.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	xs := make([]float32, 3*5000)
	for i := range xs {
		xs[i] = float32(i%7) - 3
	}
	x := mustArr[float32](t)(gpu.FromSlice(s, xs, 3, 5000))
	defer x.Free()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			tu := d1.Tuning()
			tu.PermuteVariant = 1 + i%3
			tu.Scan.Variant = 1 + i%2
			tu.ReduceFuse = i%2 == 0
			if _, err := d1.SetTuning(tu); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	for range 20 {
		p := mustArr[float32](t)(gpu.Permute(s, x, 1, 0))
		c := mustArr[float32](t)(gpu.CumSum[float32](s, x, 1))
		m := mustArr[float32](t)(gpu.Max(s, x, gpu.Axes(1)))
		pv, cv, mv := toSlice(t, p), toSlice(t, c), toSlice(t, m)
		if pv[1*3+2] != xs[2*5000+1] || cv[4] != xs[0]+xs[1]+xs[2]+xs[3]+xs[4] || mv[0] != 3 {
			t.Fatalf("wrong results while the tuning changes: %v %v %v", pv[1*3+2], cv[4], mv[0])
		}
		p.Free()
		c.Free()
		m.Free()
	}
	close(stop)
	wg.Wait()
}

// TestRegCapEnv: GPU_COMPACT_REGCAP's and GPU_SCAN_REGCAP's values: ptxas (0), lift
// (-1), a count from 24 to 128; anything else leaves the cap.
func TestRegCapEnv(t *testing.T) {
	for _, c := range []struct {
		v    string
		want int
	}{{"ptxas", 0}, {"lift", -1}, {"24", 24}, {"128", 128}, {"", 7}, {"23", 7}, {"129", 7}, {"x", 7}, {"Ptxas", 7}} {
		got := 7
		gpu.RegCapEnv(func(k string) string {
			if k == "GPU_SCAN_REGCAP" {
				return c.v
			}
			return ""
		}, "GPU_SCAN_REGCAP", &got)
		if got != c.want {
			t.Errorf("GPU_SCAN_REGCAP=%q: %d, want %d", c.v, got, c.want)
		}
	}
}
