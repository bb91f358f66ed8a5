package kernel

import (
	"encoding/binary"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// TestRadixPassSpinTrapSim checks that a sort pass whose look-back waits for a tile
// that never publishes traps (a launch error) after spinLimitNs rather than spinning
// forever: a status whose tile counter isn't zero at the launch gives the launch's only
// block tile 1 of a row of 2, whose tile 0 no block takes.
func TestRadixPassSpinTrapSim(t *testing.T) {
	save := spinLimitNs
	spinLimitNs = 200_000_000 // 0.2 s
	defer func() { spinLimitNs = save }()
	sp := &RadixPass{Order: SortKey{Type: dtype.Uint8}, Items: 1, Val: ValNone, Lookback: 2}
	src, entry, err := sp.PTX(9, 0)
	if err != nil {
		t.Fatal(err)
	}
	k, err := simParse(src, entry) // not simKernelOf: its cache holds the usual limit
	if err != nil {
		t.Fatal(err)
	}
	const rowLen = 2 * SortBlock
	keys := make([]byte, rowLen)
	for i := range keys {
		keys[i] = byte(i * 7)
	}
	plan := make([]byte, SortPlanBytes)
	plan[0] = 1
	status := make([]byte, StatusBytes(2))
	binary.LittleEndian.PutUint32(status, 1) // a dirty counter
	args := []kArg{kBuf(keys), kBuf(make([]byte, rowLen)), kBuf(make([]byte, rowLen)), kBuf(make([]byte, rowLen)),
		kBuf([]byte{0}), kBuf([]byte{0}), kBuf([]byte{0}), kBuf([]byte{0}),
		kBuf(plan), kBuf(make([]byte, RadixDigits*8)), kBuf(status),
		kU64(0), kU64(rowLen), kU64(2), kU64(2), kU64(1), kU64(0), kU64(2), kU64(1), kU64(0)}
	_, err = runSimKernel(k, 1, SortBlock, 1, args)
	if err == nil || !strings.Contains(err.Error(), "trap") {
		t.Fatalf("a look-back waiting for a tile no block takes: %v, want a trap", err)
	}
}
