package gpu

import (
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// TestFusedSortSpec checks which sorts take the fused path, and with what tiles and
// blocks, on an H200's figures: the fewest blocks a multiprocessor whose wave holds
// the row, tiles no larger than shared memory allows (GPU_SORT_ITEMS may ask for
// more), nothing on the CPU or past the limits.
func TestFusedSortSpec(t *testing.T) {
	h200 := DeviceInfo{Backend: "cuda", ComputeMajor: 9, Multiprocessors: 132, MaxSharedPerMultiprocessor: 228 << 10, ReservedSharedPerBlock: 1 << 10}
	def := sortConfigFromEnv(func(string) string { return "" })
	big := def
	big.Items4, big.Items8 = 28, 16
	one := def
	one.FusedBlocks = 1
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
		{"2^20+1 float32", def, h200, f32, 1<<20 + 1, 0, 0},
		{"2^20 float32, one block", one, h200, f32, 1 << 20, 0, 0},
		{"10000 float32", def, h200, f32, 10000, 1, 1},
		{"500000 float64", def, h200, f64, 500000, 8, 2},
		{"500000 float64, 16 items asked", big, h200, f64, 500000, 8, 2},
		{"512000 float32, 28 items asked", big, h200, f32, 512000, 16, 1},
		{"900000 float64", def, h200, f64, 900000, 0, 0},
		{"the CPU", def, DeviceInfo{Backend: "cpu", Multiprocessors: 8}, f32, 512000, 0, 0},
	} {
		sp := fusedSortSpec(c.cfg, &c.info, c.order, c.n)
		switch {
		case c.items == 0 && sp != nil:
			t.Errorf("%s: %s under %d blocks, want the passes", c.name, sp.Key(), sp.MinBlocks)
		case c.items != 0 && sp == nil:
			t.Errorf("%s: the passes, want %d items under %d blocks", c.name, c.items, c.blocks)
		case sp != nil && (sp.Items != c.items || sp.MinBlocks != c.blocks || sp.Validate() != nil):
			t.Errorf("%s: %s under %d blocks (valid: %v), want %d items under %d", c.name, sp.Key(), sp.MinBlocks, sp.Validate(), c.items, c.blocks)
		}
	}
}
