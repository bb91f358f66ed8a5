package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// topkRadixRun runs TopKRadix's three passes on the simulator (sim) or the CPU and
// returns the final buffers: scratch, state, outKeys, outIdx.
func topkRadixRun(t *testing.T, sim bool, o SortKey, vector bool, keys []byte, rows, n, k, chunk, cap1, cap2 int) [][]byte {
	t.Helper()
	chunks := (n + chunk - 1) / chunk
	scr := make([]byte, rows*TopKRadixScratchWords*4)
	state := make([]byte, TopKRadixStateBytes(rows))
	b1, b2, sure := make([]byte, rows*cap1*8), make([]byte, rows*cap2*8), make([]byte, rows*k*8)
	ok, oi := make([]byte, rows*k*4), make([]byte, rows*k*8)
	for p := 0; p < 3; p++ {
		sp := &TopKRadix{Order: o, Pass: p, Vector: vector}
		args := []spectest.Arg{spectest.Buf(keys), spectest.Buf(scr), spectest.Buf(state), spectest.Buf(b1), spectest.Buf(b2),
			spectest.Buf(sure), spectest.Buf(ok), spectest.Buf(oi), spectest.U64(uint64(n)), spectest.U64(uint64(chunk)),
			spectest.U64(uint64(chunks)), spectest.U64(uint64(k)), spectest.U64(uint64(cap1)), spectest.U64(uint64(cap2))}
		var r [][]byte
		if sim {
			r = spectest.Sim(t, sp, rows*chunks, SortBlock, 3, args)
		} else {
			r = spectest.CPU(t, sp, rows*chunks, SortBlock, args)
		}
		scr, state, b1, b2, sure, ok, oi = r[1], r[2], r[3], r[4], r[5], r[6], r[7]
		if p < 2 {
			// Only the counts past the bins survive a pass.
			if !checkZero(scr[:TopKRadixBins*4]) {
				t.Fatalf("pass %d left its histogram", p)
			}
		}
	}
	return [][]byte{scr, state, ok, oi}
}

// The three passes on the simulator against the CPU and a stable sort: the fast path
// (buf1 and buf2 hold their buckets), buf1 overflowing (pass 2 reads the keys), buf2
// overflowing (the fallback flag), ties at the k-th key (the index select).
func TestTopKRadixSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 9))
	for _, c := range []struct {
		kt         dtype.DType
		desc       bool
		vector     bool
		rows, n, k int
		chunkT     int
		cap1, cap2 int
		few        bool // keys 0, 1, 2 (ties)
	}{
		{dtype.Float32, true, true, 2, 9000, 37, 1, 2250, 2250, false},
		{dtype.Float32, false, true, 1, 10001, 100, 2, 2, 4096, false},
		{dtype.Int32, true, true, 1, 9001, 300, 1, 4096, 0, false},
		{dtype.Int32, true, false, 2, 7000, 100, 1, 7000, 7000, true},
		{dtype.Uint32, false, true, 1, 5000, 512, 1, 1250, 5000, true},
		{dtype.Float32, true, false, 1, 4100, 1, 1, 1026, 1026, false},
	} {
		if testenv.Race && c.n > 6000 {
			continue
		}
		t.Run(fmt.Sprintf("%v/%dx%d/k%d/caps%d,%d", c.kt, c.rows, c.n, c.k, c.cap1, c.cap2), func(t *testing.T) {
			o := SortKey{Type: c.kt, Descending: c.desc}
			keys := sortSimKeys(rng, c.kt, c.rows*c.n)
			if c.few {
				for i := 0; i < c.rows*c.n; i++ {
					binary.LittleEndian.PutUint32(keys[4*i:], uint32(rng.IntN(3)))
				}
			}
			chunk := c.chunkT * TopKRadixTile
			s := topkRadixRun(t, true, o, c.vector, keys, c.rows, c.n, c.k, chunk, c.cap1, c.cap2)
			cp := topkRadixRun(t, false, o, c.vector, keys, c.rows, c.n, c.k, chunk, c.cap1, c.cap2)
			for i, name := range []string{"scratch", "state"} {
				if !bytes.Equal(s[i], cp[i]) {
					t.Fatalf("%s differs (sim vs CPU) at byte %d", name, firstDiff(s[i], cp[i]))
				}
			}
			if !checkZero(s[0]) {
				t.Fatal("scratch not left zero")
			}
			flag := binary.LittleEndian.Uint32(s[1][c.rows*16:])
			if wantFlag := c.cap2 == 0; (flag != 0) != wantFlag {
				t.Fatalf("fallback flag %d", flag)
			}
			// The state: T and rem of a stable sort's first k.
			for row := 0; row < c.rows; row++ {
				perm := make([]int, c.n)
				ord := make([]uint64, c.n)
				for i := range perm {
					perm[i] = i
					ord[i] = o.Ordered(loadRaw(keys, 4, row*c.n+i))
				}
				stableSortPerm(perm, ord)
				T := ord[perm[c.k-1]]
				rem := 0
				for _, p := range perm[:c.k] {
					if ord[p] == T {
						rem++
					}
				}
				st := cpuSliceI64(s[1][:c.rows*16])
				if uint64(st[2*row]) != T || int(st[2*row+1]) != rem {
					t.Fatalf("row %d: state (%#x, %d), want (%#x, %d)", row, st[2*row], st[2*row+1], T, rem)
				}
				if flag != 0 {
					topkGuardedSim(t, o, keys, s[1], c.rows, c.n, c.k, row, perm)
					continue
				}
				for i, name := range []string{"keys", "indices"} {
					if !bytes.Equal(s[2+i], cp[2+i]) {
						t.Fatalf("%s differ (sim vs CPU) at byte %d", name, firstDiff(s[2+i], cp[2+i]))
					}
				}
				got := cpuSliceI64(s[3])[row*c.k : (row+1)*c.k]
				for j, p := range perm[:c.k] {
					if got[j] != int64(p) {
						t.Fatalf("row %d: %d is index %d, want %d", row, j, got[j], p)
					}
					if g, w := loadRaw(s[2], 4, row*c.k+j), loadRaw(keys, 4, row*c.n+p); g != w {
						t.Fatalf("row %d: key %d is %#x, want %#x", row, j, g, w)
					}
				}
			}
		})
	}
}

// topkGuardedSim runs the guarded fallback (TopKCount, TopKGather, TopKRankSort with
// Guard) on the simulator and the CPU from state (TopKRadix's, its flag set) and checks
// row's k against perm (a stable sort's order); with the flag clear they write nothing.
func topkGuardedSim(t *testing.T, o SortKey, keys, state []byte, rows, n, k, row int, perm []int) {
	t.Helper()
	const items = 2
	tiles := (n + SortBlock*items - 1) / (SortBlock * items)
	for _, set := range []bool{true, false} {
		flag := make([]byte, 4)
		if set {
			flag[0] = 1
		}
		counts := make([]byte, rows*tiles*16)
		r := simAgree(t, &TopKCount{Order: o, Items: items, Striped: true, Guard: true}, rows*tiles, SortBlock,
			[]spectest.Arg{spectest.Buf(keys), spectest.Buf(state), spectest.Buf(counts), spectest.U64(uint64(n)), spectest.U64(uint64(tiles)), spectest.Buf(flag)})
		if !set {
			if !checkZero(r[2]) {
				t.Fatal("guarded count wrote with its flag clear")
			}
			continue
		}
		c := cpuSliceI64(r[2])
		pb := make([]byte, len(r[2]))
		for rw := 0; rw < rows; rw++ {
			var l, e int64
			for ti := 0; ti < tiles; ti++ {
				j := 2 * (rw*tiles + ti)
				binary.LittleEndian.PutUint64(pb[8*j:], uint64(l))
				binary.LittleEndian.PutUint64(pb[8*j+8:], uint64(e))
				l, e = l+c[j], e+c[j+1]
			}
		}
		g := simAgree(t, &TopKGather{Order: o, Items: items, Skip: true, Guard: true}, rows*tiles, SortBlock,
			[]spectest.Arg{spectest.Buf(keys), spectest.Buf(state), spectest.Buf(pb), spectest.Buf(make([]byte, rows*k*4)),
				spectest.Buf(make([]byte, rows*k*8)), spectest.U64(uint64(n)), spectest.U64(uint64(tiles)), spectest.U64(uint64(k)),
				spectest.Buf(r[2]), spectest.Buf(flag)})
		rs := simAgree(t, &TopKRankSort{Order: o, Guard: true}, rows, SortBlock, []spectest.Arg{spectest.Buf(g[3]), spectest.Buf(make([]byte, rows*k*4)),
			spectest.Buf(g[4]), spectest.Buf(make([]byte, rows*k*8)), spectest.U64(uint64(rows)), spectest.U64(uint64(k)), spectest.Buf(flag)})
		got := cpuSliceI64(rs[3])[row*k : (row+1)*k]
		for j, p := range perm[:k] {
			if got[j] != int64(p) {
				t.Fatalf("fallback row %d: %d is index %d, want %d", row, j, got[j], p)
			}
		}
	}
}
