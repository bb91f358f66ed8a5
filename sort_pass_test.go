package gpu

import (
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// The devices the passes' choices are tested on: an H200 (228 KiB of shared memory a
// multiprocessor, 227 KiB a block) and a GPU of compute capability 8.6 (100 and 99).
var (
	sortTestH200 = DeviceInfo{Backend: "cuda", Multiprocessors: 132, MaxSharedPerBlock: 227 << 10, MaxSharedPerMultiprocessor: 228 << 10, ReservedSharedPerBlock: 1 << 10}
	sortTestSM86 = DeviceInfo{Backend: "cuda", Multiprocessors: 84, MaxSharedPerBlock: 99 << 10, MaxSharedPerMultiprocessor: 100 << 10, ReservedSharedPerBlock: 1 << 10}
)

// The passes' blocks per multiprocessor (MinBlocks, the long rule's wave) at most what
// the device's shared memory fits: unchanged on the H200 (228 KiB a multiprocessor),
// fewer on sm_86/89 (100 KiB), unchanged where the device doesn't say (the CPU).
func TestSortResidentBlocks(t *testing.T) {
	h200 := sortTestH200
	sm86 := sortTestSM86
	cpu := DeviceInfo{Backend: "cpu", Multiprocessors: 84}
	for _, c := range []struct {
		want, smem int
		info       DeviceInfo
		out        int
	}{
		{3, 46144, h200, 3}, {4, 47168, h200, 4}, {8, 47168, h200, 4}, {4, 48 << 10, h200, 4},
		{3, 46144, sm86, 2}, {4, 26688, sm86, 3}, {4, 37952, sm86, 2}, {1, 46144, sm86, 1},
		{0, 46144, sm86, 0}, {4, 200 << 10, sm86, 1}, {3, 46144, cpu, 3},
		{2, 50 << 10, DeviceInfo{MaxSharedPerMultiprocessor: 100 << 10}, 2}, // no reserve
	} {
		if got := sortResidentBlocks(c.want, c.smem, &c.info); got != c.out {
			t.Errorf("%d blocks of %d bytes on %d KiB (%d reserved): %d, want %d", c.want, c.smem,
				c.info.MaxSharedPerMultiprocessor>>10, c.info.ReservedSharedPerBlock, got, c.out)
		}
	}

	def := sortConfigFromEnv(func(string) string { return "" })
	f32, f64 := kernel.SortKey{Type: dtype.Float32}, kernel.SortKey{Type: dtype.Float64}
	i32 := kernel.SortKey{Type: dtype.Int32}
	for _, c := range []sortPassCase{
		// The H200's choices: the long passes under 2 blocks (their tiles past 48 KiB),
		// the base ones under 4.
		{"h200 2^28 float32", h200, f32, kernel.ValNone, 0, 1, 1 << 28, 48, 2},
		{"h200 2^28 float32 argsort", h200, f32, kernel.ValIndex, 4, 1, 1 << 28, 48, 2},
		{"h200 2^27 float64 argsort", h200, f64, kernel.ValIndex, 4, 1, 1 << 27, 32, 2},
		{"h200 2^27 float64", h200, f64, kernel.ValNone, 0, 1, 1 << 27, 28, 2},             // (LongItems8; with values LongItems8Vals)
		{"h200 2^28 float32 by int64", h200, f32, kernel.ValPayload, 8, 1, 1 << 28, 32, 2}, // (8-byte values: LongItems8Vals)
		{"h200 16384x16384 int32", h200, i32, kernel.ValNone, 0, 16384, 16384, 16, 4},
		{"h200 2^22 float64", h200, f64, kernel.ValNone, 0, 1, 1 << 22, 12, 4},
		// 100 KiB a multiprocessor: 2 long blocks of the largest tiles that fit two
		// (TestSortPassSharedLimit), 3 of 16 items of 4 bytes, 2 of 12 of 8.
		{"sm86 2^28 float32", sm86, f32, kernel.ValNone, 0, 1, 1 << 28, 31, 2},
		{"sm86 2^27 float64 argsort", sm86, f64, kernel.ValIndex, 4, 1, 1 << 27, 17, 2},
		{"sm86 16384x16384 int32", sm86, i32, kernel.ValNone, 0, 16384, 16384, 16, 3},
		{"sm86 2^20 float64", sm86, f64, kernel.ValNone, 0, 1, 1 << 20, 12, 2},
		// The wave rule at the long tiles that fit: 4 waves of 2 blocks of 7936 keys
		// (31 a thread) on 84 multiprocessors are 672 tiles; 700 are long, 600 not.
		{"sm86 700 long tiles", sm86, f32, kernel.ValNone, 0, 1, 700 * 7936, 31, 2},
		{"sm86 600 long tiles", sm86, f32, kernel.ValNone, 0, 1, 600 * 7936, 16, 3},
		// A device that doesn't say its shared memory: long tiles of at most 48 KiB
		// (30 items, 7680 keys), of which 654 are short of 4 waves of 2 blocks (672).
		{"unknown 700 long tiles", DeviceInfo{Multiprocessors: 84}, f32, kernel.ValNone, 0, 1, 700 * 7168, 16, 4},
		{"unknown 700 tiles of 30", DeviceInfo{Multiprocessors: 84}, f32, kernel.ValNone, 0, 1, 700 * 7680, 30, 2},
		{"cpu 2^28 float32", cpu, f32, kernel.ValNone, 0, 1, 1 << 28, 30, 2},
	} {
		c.check(t, def)
	}
	// The look-back windows: 2 predecessors in the long passes of 8-byte keys alone
	// (LongLookback8), 4 in other passes of keys alone (Lookback), 2 with values
	// (LookbackVals); LongLookback8 0: Lookback's.
	noLb8, lb8x := def, def
	noLb8.LongLookback8, lb8x.LongLookback8 = 0, 8
	for _, c := range []struct {
		cfg   sortConfig
		order kernel.SortKey
		val   kernel.SortVal
		vs, n int
		want  int
	}{
		{def, f64, kernel.ValNone, 0, 1 << 27, 2}, {def, f64, kernel.ValNone, 0, 1 << 22, 4}, {def, f32, kernel.ValNone, 0, 1 << 28, 4},
		{def, i32, kernel.ValIndex, 8, 1 << 28, 2}, {noLb8, f64, kernel.ValNone, 0, 1 << 27, 4},
		{lb8x, f64, kernel.ValNone, 0, 1 << 27, 8}, {lb8x, f64, kernel.ValIndex, 4, 1 << 27, 2}, {lb8x, i32, kernel.ValNone, 0, 1 << 28, 4},
		{lb8x, f64, kernel.ValNone, 0, 1 << 16, 8}, {lb8x, f64, kernel.ValNone, 0, 1 << 22, 4}, // (small: SmallLookback; short: Lookback)
	} {
		if sp := sortPass(c.cfg, &h200, c.order, c.val, c.vs, 1, c.n); sp.Lookback != c.want {
			t.Errorf("LongLookback8 %d, %d keys of %v, values %v: pass %s, want a window of %d", c.cfg.LongLookback8, c.n, c.order.Type, c.val, sp.Key(), c.want)
		}
	}
	// GPU_SORT_LONG_ITEMS8=0: no long passes for 8-byte keys, with values or not
	// (LongItems8Vals applies only where LongItems8 does).
	off := def
	off.LongItems8 = 0
	for _, c := range []sortPassCase{
		{"h200 2^27 float64, no long 8-byte passes", h200, f64, kernel.ValNone, 0, 1, 1 << 27, 12, 4},
		{"h200 2^27 float64 argsort, no long 8-byte passes", h200, f64, kernel.ValIndex, 4, 1, 1 << 27, 12, 4},
	} {
		c.check(t, off)
	}
}

// sortConfig.FullTiles: narrow by default, which gives RadixPass.FullTiles to the long
// rows' passes and to every pass of keys and values of at most 4 bytes; long to the
// long rows' passes alone; all to every pass.
func TestSortPassFullTiles(t *testing.T) {
	h200 := sortTestH200
	f32, f64 := kernel.SortKey{Type: dtype.Float32}, kernel.SortKey{Type: dtype.Float64}
	for _, c := range []struct {
		env        string
		key        kernel.SortKey
		val        kernel.SortVal
		vs, n      int
		long, full bool
	}{
		{"", f32, kernel.ValNone, 0, 1 << 28, true, true}, {"", f32, kernel.ValNone, 0, 1 << 22, false, true},
		{"", f32, kernel.ValIndex, 4, 1 << 22, false, true}, {"", f32, kernel.ValIndex, 8, 1 << 22, false, false},
		{"", f64, kernel.ValNone, 0, 1 << 22, false, false}, {"", f64, kernel.ValNone, 0, 1 << 28, true, true},
		{"narrow", f64, kernel.ValNone, 0, 1 << 22, false, false}, {"narrow", f32, kernel.ValNone, 0, 1 << 22, false, true},
		{"off", f32, kernel.ValNone, 0, 1 << 28, true, false},
		{"long", f32, kernel.ValNone, 0, 1 << 28, true, true}, {"long", f32, kernel.ValNone, 0, 1 << 22, false, false},
		{"all", f32, kernel.ValNone, 0, 1 << 28, true, true}, {"all", f32, kernel.ValNone, 0, 1 << 22, false, true},
		{"all", f64, kernel.ValNone, 0, 1 << 22, false, true},
	} {
		cfg := sortConfigFromEnv(func(k string) string {
			if k == "GPU_SORT_FULL_TILES" {
				return c.env
			}
			return ""
		})
		sp := sortPass(cfg, &h200, c.key, c.val, c.vs, 1, c.n)
		longItems := cfg.LongItems4
		if c.key.Size() == 8 || c.vs == 8 {
			longItems = cfg.LongItems8
			if c.val != kernel.ValNone {
				longItems = cfg.LongItems8Vals
			}
		}
		if long := sp.Items == longItems; long != c.long || sp.FullTiles != c.full {
			t.Errorf("GPU_SORT_FULL_TILES=%q, %d keys of %v, values of %d bytes: %s, want long %v, full tiles %v", c.env, c.n, c.key.Type, c.vs, sp.Key(), c.long, c.full)
		}
	}
}

// Tiles past 48 KiB of shared memory (the tile's keys or values in dynamic shared
// memory) where the device's opt-in limit holds them and LongMinBlocks of them fit a
// multiprocessor; fewer keys a thread where not; no whole-sector writes past 32 keys a
// thread.
func TestSortPassSharedLimit(t *testing.T) {
	h200 := sortTestH200
	sm86 := sortTestSM86
	small := DeviceInfo{Backend: "cuda", Multiprocessors: 84, MaxSharedPerBlock: 48 << 10, MaxSharedPerMultiprocessor: 100 << 10, ReservedSharedPerBlock: 1 << 10}
	cfg := sortConfigFromEnv(func(k string) string {
		return map[string]string{"GPU_SORT_LONG_ITEMS": "48", "GPU_SORT_LONG_ITEMS8": "32", "GPU_SORT_LONG_MINBLOCKS": "2"}[k]
	})
	f32, f64 := kernel.SortKey{Type: dtype.Float32}, kernel.SortKey{Type: dtype.Float64}
	for _, c := range []sortPassCase{
		{"h200 float32", h200, f32, kernel.ValNone, 0, 1, 1 << 28, 48, 2},
		{"h200 float32 argsort", h200, f32, kernel.ValIndex, 4, 1, 1 << 28, 48, 2},
		{"h200 float64", h200, f64, kernel.ValNone, 0, 1, 1 << 28, 32, 2},
		// 100 KiB a multiprocessor: the largest tiles of which LongMinBlocks (2) fit
		// (float32 keys with each slot's digit: 31 a thread, 49,984 bytes).
		{"sm86 float32", sm86, f32, kernel.ValNone, 0, 1, 1 << 28, 31, 2},
		{"sm86 float64 argsort", sm86, f64, kernel.ValIndex, 4, 1, 1 << 28, 17, 2},
		// 48 KiB: the most keys a thread whose tile fits (float32: 30 with each
		// slot's digit, 16-byte records of 8 warps' counters, offsets and words).
		{"48 KiB float32", small, f32, kernel.ValNone, 0, 1, 1 << 28, 30, 2},
		{"48 KiB float64", small, f64, kernel.ValNone, 0, 1, 1 << 28, 16, 2},
	} {
		sp := c.check(t, cfg)
		if big := sp.SharedBytes() > kernel.SortStaticShared; big != (sp.DynamicBytes() > 0) || sp.SharedBytes() > c.info.MaxSharedPerBlock || sp.Sectors && sp.Items > 32 {
			t.Errorf("%s: pass %s: %d bytes of shared memory, %d of them dynamic, on %d a block", c.name, sp.Key(), sp.SharedBytes(), sp.DynamicBytes(), c.info.MaxSharedPerBlock)
		}
	}
}

// sortPassCase is a sort and the pass sortPass should choose for it.
type sortPassCase struct {
	name       string
	info       DeviceInfo
	order      kernel.SortKey
	val        kernel.SortVal
	vs         int
	rows, n    int
	items, min int // the pass: items, MinBlocks
}

// check returns sortPass's choice under cfg, reporting a pass other than the case's
// or one that fails Validate.
func (c sortPassCase) check(t *testing.T, cfg sortConfig) *kernel.RadixPass {
	t.Helper()
	sp := sortPass(cfg, &c.info, c.order, c.val, c.vs, c.rows, c.n)
	if sp.Items != c.items || sp.MinBlocks != c.min {
		t.Errorf("%s: pass %s, want %d items under %d blocks", c.name, sp.Key(), c.items, c.min)
	}
	if err := sp.Validate(); err != nil {
		t.Errorf("%s: %v", c.name, err)
	}
	if want := cfg.Prmt && c.order.Size() <= 4; sp.Prmt != want { // (RadixPass.Prmt: keys of up to 4 bytes)
		t.Errorf("%s: pass %s, want digits by prmt %v", c.name, sp.Key(), want)
	}
	if want := map[bool]kernel.SortRank{true: cfg.RankAlone, false: cfg.Rank}[c.val == kernel.ValNone]; sp.Rank != want {
		t.Errorf("%s: pass %s, want ranking %v", c.name, sp.Key(), want)
	}
	return sp
}
