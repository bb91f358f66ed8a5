package gpu

import (
	"context"
	"errors"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// TestFusedSortSpec checks which sorts take the fused path, and with what tiles and
// blocks, on an H200's figures: the fewest blocks a multiprocessor whose wave holds
// the row (for keys of up to 4 bytes past two blocks' tiles of Items4 keys, larger
// tiles up to FusedItems4 under the most blocks that fit), tiles no larger than shared memory allows (GPU_SORT_ITEMS may ask for
// more), nothing on the CPU or past the limits.
func TestFusedSortSpec(t *testing.T) {
	h200 := DeviceInfo{Backend: "cuda", ComputeMajor: 9, Multiprocessors: 132, MaxSharedPerMultiprocessor: 228 << 10, ReservedSharedPerBlock: 1 << 10}
	def := sortConfigFromEnv(func(string) string { return "" })
	big := def
	big.Items4, big.Items8 = 28, 16
	one := def
	one.FusedBlocks = 1
	small, upto := def, def
	small.FusedItems4 = 16
	upto.FusedMax = 1 << 20
	late := def
	late.FusedEarly, late.FusedSplit, late.FusedRank = false, false, kernel.RankBallot
	f32, f64 := kernel.SortKey{Type: dtype.Float32}, kernel.SortKey{Type: dtype.Float64}
	for _, c := range []struct {
		name          string
		cfg           sortConfig
		info          DeviceInfo
		order         kernel.SortKey
		n             int
		items, blocks int // 0: no fused sort
	}{
		{"512000 float32", def, h200, f32, 512000, 16, 1},
		{"2^20 float32", def, h200, f32, 1 << 20, 16, 2},
		{"2^20+1 float32", def, h200, f32, 1<<20 + 1, 16, 2},
		{"two blocks' tiles of 16 items + 1, float32", def, h200, f32, 2*132*256*16 + 1, 17, 2},
		{"1,500,000 float32", def, h200, f32, 1_500_000, 23, 2},
		{"1,757,184 int16 (the largest tiles)", def, h200, kernel.SortKey{Type: dtype.Int16}, 2 * 132 * 256 * 26, 26, 2},
		{"1,757,185 float32", def, h200, f32, 2*132*256*26 + 1, 0, 0},
		{"1,500,000 float32, no larger tiles", small, h200, f32, 1_500_000, 0, 0},
		{"1,500,000 float32, fused up to 2^20", upto, h200, f32, 1_500_000, 0, 0},
		{"2^20 float32, one block", one, h200, f32, 1 << 20, 0, 0},
		{"800,000 float32, one block, larger tiles", one, h200, f32, 800_000, 24, 1},
		{"10000 float32", def, h200, f32, 10000, 1, 1},
		{"512000 float32, late, joined", late, h200, f32, 512000, 16, 1},
		{"500000 float64", def, h200, f64, 500000, 8, 2},
		{"500000 float64, 16 items asked", big, h200, f64, 500000, 8, 2},
		{"512000 float32, 28 items asked", big, h200, f32, 512000, 16, 1},
		{"900000 float64", def, h200, f64, 900000, 0, 0},
		{"850000 float64 (no larger tiles for 8-byte keys)", def, h200, f64, 850000, 0, 0},
		{"the CPU", def, DeviceInfo{Backend: "cpu", Multiprocessors: 8}, f32, 512000, 0, 0},
	} {
		sp := fusedSortSpec(c.cfg, &c.info, c.order, c.n)
		switch {
		case c.items == 0 && sp != nil:
			t.Errorf("%s: %s under %d blocks, want the passes", c.name, sp.Key(), sp.MinBlocks)
		case c.items != 0 && sp == nil:
			t.Errorf("%s: the passes, want %d items under %d blocks", c.name, c.items, c.blocks)
		case sp != nil && (sp.Items != c.items || sp.MinBlocks != c.blocks || sp.Validate() != nil ||
			sp.EarlyRank != c.cfg.FusedEarly || sp.Split != c.cfg.FusedSplit || sp.Rank != c.cfg.FusedRank):
			t.Errorf("%s: %s under %d blocks (valid: %v), want %d items under %d", c.name, sp.Key(), sp.MinBlocks, sp.Validate(), c.items, c.blocks)
		case sp != nil && sp.Full:
			t.Errorf("%s: %s, want bounds tests (FusedFull off)", c.name, sp.Key())
		}
	}
	// FusedFull: the kernel without bounds tests where the row is whole tiles.
	full := def
	full.FusedFull = true
	for _, c := range []struct {
		n           int
		items, full int // full 1: RadixFused.Full
	}{
		{512000, 16, 1}, {512001, 16, 0}, {1 << 20, 16, 1}, {1<<20 + 1, 16, 0}, {1_500_000, 23, 0},
		{2 * 132 * 256 * 20, 20, 1}, {10000, 1, 0}, {10240, 1, 1},
	} {
		sp := fusedSortSpec(full, &h200, f32, c.n)
		if sp == nil || sp.Items != c.items || sp.Full != (c.full == 1) {
			t.Errorf("%d float32 keys, FusedFull: %v, want %d items, full %v", c.n, sp, c.items, c.full == 1)
		}
	}
}

// TestCooperativeLaunchGPU launches an empty kernel cooperatively on CUDA: a grid
// the device holds at once runs; one 64 times larger is refused with an error that
// matches ErrNotSupported (CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE), which the sort
// falls back on, and leaves the context usable.
func TestCooperativeLaunchGPU(t *testing.T) {
	d, err := OpenBackend("cuda", 0)
	if errors.Is(err, ErrNoDevice) {
		t.Skip("no CUDA device")
	}
	if err != nil {
		t.Fatal(err)
	}
	const src = ".version 7.0\n.target sm_70\n.address_size 64\n.visible .entry k()\n{\n\tret;\n}\n"
	m, err := d.be.LoadModule([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	defer m.Unload()
	fn, err := m.Function("k")
	if err != nil {
		t.Fatal(err)
	}
	s := d.DefaultStream()
	sms := d.info.Multiprocessors
	lc := launchGeometry(sms, 1, 1024)
	lc.Cooperative = true
	if err := s.be.Launch(fn, lc, nil); err != nil {
		t.Fatalf("a cooperative grid of %d blocks of 1024 threads: %v", sms, err)
	}
	lc = launchGeometry(64*sms, 1, 1024)
	lc.Cooperative = true
	if err := s.be.Launch(fn, lc, nil); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("a cooperative grid of %d blocks of 1024 threads: %v, want an error matching ErrNotSupported", 64*sms, err)
	}
	if err := s.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
}
