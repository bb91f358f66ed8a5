package cuda

import (
	"testing"

	"github.com/go-gpu/gpu/backend/cuda/cu"
)

// TestReplayEntries: the cache of a stream's products keeps at most replayMaxEntries,
// finds a product again by its key, and forgets the one called longest ago, destroying
// its graph (only entries with one). No GPU needed.
func TestReplayEntries(t *testing.T) {
	var r gemmReplay
	var destroyed []cu.GraphExec
	destroy := func(x cu.GraphExec) { destroyed = append(destroyed, x) }
	key := func(i int) replayKey { return replayKey{call: gemmCall{m: i, n: 1, k: 1, batch: 1}} }
	for i := range replayMaxEntries {
		e := r.entry(key(i), destroy)
		if e.seen != 0 || e.exec != 0 {
			t.Fatalf("new entry %d: %+v", i, e)
		}
		e.seen++
		e.exec = cu.GraphExec(100 + i)
	}
	// Key 0 called again: key 1 is now the oldest.
	if e := r.entry(key(0), destroy); e.seen != 1 || e.exec != 100 {
		t.Fatalf("entry 0 again: %+v", e)
	}
	if e := r.entry(replayKey{call: gemmCall{m: 0, n: 1, k: 1, batch: 1}, tf32: true}, destroy); e.exec != 0 {
		t.Fatalf("another key (tf32) found entry 0's graph")
	}
	if len(r.entries) != replayMaxEntries || len(destroyed) != 1 || destroyed[0] != 101 {
		t.Fatalf("%d entries, destroyed %v; want %d and [101]", len(r.entries), destroyed, replayMaxEntries)
	}
	if _, ok := r.entries[key(1)]; ok {
		t.Fatal("entry 1 (the oldest) kept")
	}
	// An entry without a graph (the tf32 one, after the others are called again) is
	// forgotten without a destroy.
	for i := 2; i < replayMaxEntries; i++ {
		r.entry(key(i), destroy)
	}
	r.entry(key(0), destroy)
	r.entry(key(50), destroy)
	if len(destroyed) != 1 || len(r.entries) != replayMaxEntries {
		t.Fatalf("destroyed %v, %d entries", destroyed, len(r.entries))
	}
	if _, ok := r.entries[replayKey{call: gemmCall{m: 0, n: 1, k: 1, batch: 1}, tf32: true}]; ok {
		t.Fatal("the tf32 entry (the oldest) kept")
	}
	// Then the oldest is key 2's, with a graph.
	r.entry(key(51), destroy)
	if len(destroyed) != 2 || destroyed[1] != 102 {
		t.Fatalf("destroyed %v", destroyed)
	}
}

// TestReplayable: what may be replayed.
func TestReplayable(t *testing.T) {
	small := &gemmCall{m: 512, n: 512, k: 1000, batch: 1}
	big := &gemmCall{m: 2048, n: 1024, k: 1024, batch: 1} // exactly 2^32 flops
	if !replayable(small, engineGemmEx, 32<<20, true) || !replayable(small, engineLt, 1, true) || !replayable(small, engineClassic, 1, true) {
		t.Error("the S-size product is not replayed")
	}
	if replayable(big, engineGemmEx, 32<<20, true) || replayable(small, engineTune, 32<<20, true) || replayable(small, engineGemmEx, 0, true) ||
		replayable(small, engineGemmEx, 32<<20, false) {
		t.Error("a product of 2^32 flops, the tune engine, a handle without workspace or replay off replayed")
	}
}
