package main

import (
	"encoding/binary"
	"math"
	"slices"
	"sort"
	"testing"

	"github.com/go-gpu/gpu/internal/ptxsim"
)

// TestRawSearchSim runs the searchsorted floor kernel on the PTX simulator over a
// ragged launch and checks every output against the kernel's definition (j + the keys
// of the sector below the query), and that it is the left insertion index wherever
// that lies inside the sector.
func TestRawSearchSim(t *testing.T) {
	mod, err := ptxsim.Parse(rawSearchPTX)
	if err != nil {
		t.Fatal(err)
	}
	m, n := rawSearchSizes(128) // 1024 keys, 4096 queries
	const block = 64
	n = n - 37 // ragged
	keysB, queriesB := rawSearchKeys(m, n)
	f32 := func(b []byte, i int64) float32 { return math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:])) }
	keys := make([]float32, m)
	for i := range keys {
		keys[i] = f32(keysB, int64(i))
	}
	if !slices.IsSorted(keys) {
		t.Fatal("the keys are not sorted")
	}
	const outBase, aBase, qBase = 1 << 20, 2 << 20, 3 << 20
	out := make([]byte, 8*n)
	for i := range out {
		out[i] = 0xa5 // poison
	}
	mem := &ptxsim.Regions{}
	mem.Map(outBase, out)
	mem.Map(aBase, keysB)
	mem.Map(qBase, queriesB)
	cfg := ptxsim.Linear(int((n+block-1)/block), block)
	cfg.Resident = 1
	if err := mod.Func("searchsorted_sector").Launch(mem, cfg, []uint64{outBase, aBase, qBase, uint64(n), uint64(m)}); err != nil {
		t.Fatal(err)
	}
	inside := 0
	for i := range n {
		v := f32(queriesB, i)
		j := min(int64(v*float32(m)), m-8) &^ 7
		want := j
		for _, k := range keys[j : j+8] {
			if k < v {
				want++
			}
		}
		got := int64(binary.LittleEndian.Uint64(out[8*i:]))
		if got != want {
			t.Fatalf("query %d (%v): %d, want %d", i, v, got, want)
		}
		if left := int64(sort.Search(int(m), func(k int) bool { return keys[k] >= v })); left > j && left < j+8 {
			inside++
			if got != left {
				t.Fatalf("query %d (%v): %d, the insertion index %d is inside its sector [%d, %d)", i, v, got, left, j, j+8)
			}
		}
	}
	if inside < int(n)/10 {
		t.Errorf("only %d of %d queries land inside their sector: the check above checked little", inside, n)
	}
}
