package kernel

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
)

// TestRadixPassSpinTrapSim checks that a sort pass whose look-back waits for a tile
// that never publishes traps (a launch error) after spinLimitNs rather than spinning
// forever: a tile counter that isn't zero at the launch gives the launch's only
// block tile 1 of a row of 2, whose tile 0 no block takes.
func TestRadixPassSpinTrapSim(t *testing.T) {
	save := spinLimitNs
	spinLimitNs = 200_000_000 // 0.2 s
	defer func() { spinLimitNs = save }()
	sp := &RadixPass{Order: SortKey{Type: dtype.Uint8}, Items: 1, Val: ValNone, Lookback: 2}
	const rowLen = 2 * SortBlock
	keys := make([]byte, rowLen)
	for i := range keys {
		keys[i] = byte(i * 7)
	}
	plan := make([]byte, SortPlanBytes+SortCounterBytes(1, 1))
	plan[0] = 1
	binary.LittleEndian.PutUint32(plan[SortPlanBytes:], 1) // a dirty counter
	status := make([]byte, StatusBytes(2))
	args := []spectest.Arg{spectest.Buf(keys), spectest.Buf(make([]byte, rowLen)), spectest.Buf(make([]byte, rowLen)), spectest.Buf(make([]byte, rowLen)),
		spectest.Buf([]byte{0}), spectest.Buf([]byte{0}), spectest.Buf([]byte{0}), spectest.Buf([]byte{0}),
		spectest.Buf(plan), spectest.Buf(make([]byte, RadixDigits*8)), spectest.Buf(status),
		spectest.U64(0), spectest.U64(rowLen), spectest.U64(2), spectest.U64(2), spectest.U64(1), spectest.U64(0), spectest.U64(2), spectest.U64(1), spectest.U64(0)}
	_, err := spectest.SimErr(t, sp, 1, SortBlock, 1, args) // (spectest caches kernels by their text: this one's limit)
	if err == nil || !strings.Contains(err.Error(), "trap") {
		t.Fatalf("a look-back waiting for a tile no block takes: %v, want a trap", err)
	}
}
