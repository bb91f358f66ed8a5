package kernel

import (
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"

	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
)

// A packed status of 4-byte words with an odd number of tiles: its 8*tiles bytes of
// words are padded to 16 in StatusBytes, and selfClean's 16-byte stores must stay
// within StatusBytes (a sentinel after it must survive).
func TestScanSelfCleanBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	sp := &ScanTiles{In: dtype.Int32, Comb: Combine{Op: OpSum, Type: dtype.Int32}, Group: 1, Items: 1, Vector: true}
	if !sp.Packed() {
		t.Fatal("want a packed status")
	}
	const rows, tpr = 1, 3
	n := 256 * tpr
	tiles := rows * tpr
	sb := sp.StatusBytes(tiles) // 16 + 32
	in := spectest.RandBytes(rng, dtype.Int32, n, true)
	out := make([]byte, 4*n)
	status := make([]byte, sb+16)
	for i := sb; i < len(status); i++ {
		status[i] = 0xAB // past the status: the kernel must not touch it
	}
	args := []spectest.Arg{spectest.Buf(in), spectest.Buf(out), spectest.Buf(status), spectest.U64(rows), spectest.U64(uint64(n)), spectest.U64(tpr), spectest.U64(0)}
	got := spectest.Sim(t, sp, tiles, ScanTilesBlock, 2, args)
	statusClean(t, "status", got[2][:sb])
	for i := sb; i < len(status); i++ {
		if got[2][i] != 0xAB {
			t.Fatalf("byte %d past a status of %d bytes is %#x: selfClean wrote past the status", i-sb, sb, got[2][i])
		}
	}
}
