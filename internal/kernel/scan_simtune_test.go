package kernel

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"

	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The tuning options of ScanTiles (Lookback, Stage, MinBlocks) on the simulator.

func TestScanTilesSimTuned(t *testing.T) {
	rng := rand.New(rand.NewPCG(45, 46))
	type tc struct {
		in        dtype.DType
		comb      Combine
		g, k      int
		excl, vec bool
		rows, len int
		off       int
		resident  int
		lb        int
		stage     bool
		mb        int
	}
	i64 := Combine{Op: OpSum, Type: dtype.Int64}
	i32 := Combine{Op: OpSum, Type: dtype.Int32}
	f32 := Combine{Op: OpSum, Type: dtype.Float32}
	cases := []tc{
		// Wide look-back without staging: flagged and packed status, several windows.
		{dtype.Int32, i64, 1, 1, false, true, 1, 256*40 + 17, 0, 40, 1, false, 0},
		{dtype.Int32, i32, 1, 1, true, true, 1, 256*70 + 3, 0, 69, 2, false, 0},
		{dtype.Int32, i32, 1, 1, false, true, 2, 256 * 35, 0, 20, 4, false, 0},
		{dtype.Int64, i64, 1, 2, true, false, 2, 512*9 + 3, 0, 6, 8, false, 0},
		{dtype.Int32, i64, 3, 3, false, false, 2, 768*9 + 3*7, 0, 9, 2, false, 0},
		{dtype.Float32, Combine{Op: OpMax, Type: dtype.Float32}, 1, 2, false, true, 1, 512 * 9, 0, 5, 4, false, 0},
		{dtype.Bool, Combine{Op: OpMax, Type: dtype.Bool}, 1, 2, false, true, 1, 512 * 35, 0, 30, 2, false, 0},
		{dtype.Int32, scanExprComb(t, "b", dtype.Int32), 1, 1, false, true, 1, 256*70 + 3, 0, 60, 2, false, 0},
		{dtype.Int32, scanExprComb(t, "a", dtype.Int32), 1, 1, true, true, 1, 256*70 + 3, 0, 60, 4, false, 0},
		{dtype.Int64, scanExprComb(t, "b", dtype.Int64), 3, 3, false, false, 1, 768*35 + 6, 0, 30, 4, false, 0},
		// Staged outputs (4- and 8-byte accumulators, 4 to 32 words a thread).
		{dtype.Int32, i32, 1, 4, false, true, 1, 1024*70 + 5, 0, 69, 2, true, 0},
		{dtype.Int32, i32, 1, 4, true, true, 2, 1024 * 40, 0, 30, 1, true, 0},
		{dtype.Float32, f32, 1, 8, false, true, 1, 2048*9 + 7, 0, 8, 4, true, 6},
		{dtype.Float32, f32, 1, 32, false, true, 1, 8192*3 + 100, 0, 3, 4, true, 6},
		{dtype.Float32, f32, 1, 32, true, true, 2, 8192*2 + 36, 0, 3, 2, true, 5},
		{dtype.Float32, f32, 1, 32, false, true, 1, 8192 * 3, 0, 3, 0, true, 0},                                       // staged, original look-back
		{dtype.Float32, Combine{Op: OpMin, Type: dtype.Float32}, 1, 32, true, false, 1, 8192*2 + 3, 4, 2, 4, true, 0}, // misaligned
		{dtype.Float32, Combine{Op: OpMax, Type: dtype.Float32}, 1, 16, false, true, 1, 4096*5 + 1, 0, 5, 8, true, 0},
		{dtype.Int64, i64, 1, 16, false, true, 1, 4096*3 + 5, 0, 3, 4, true, 0},
		{dtype.Int64, i64, 1, 16, true, true, 2, 4096 * 2, 0, 3, 4, true, 0},
		{dtype.Int32, i64, 1, 2, false, true, 1, 512*70 + 17, 0, 69, 2, true, 0},
		{dtype.Int16, i64, 1, 4, true, false, 1, 1024*9 + 1, 2, 9, 8, true, 0},
		{dtype.Float64, Combine{Op: OpMax, Type: dtype.Float64}, 1, 8, false, true, 1, 2048*5 + 1, 0, 5, 2, true, 0},
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Uint32}, 1, 8, true, true, 1, 2048*9 + 2, 0, 9, 4, true, 0},
		{dtype.Int32, scanExprComb(t, "a", dtype.Int32), 1, 4, false, true, 1, 1024*40 + 3, 0, 40, 2, true, 0},
		{dtype.Int32, scanExprComb(t, "b", dtype.Int32), 1, 4, false, true, 1, 1024*40 + 3, 0, 40, 4, true, 0},
		{dtype.Int32, scanExprComb(t, "a", dtype.Int32), 1, 4, true, true, 2, 1024 * 35, 0, 30, 1, true, 0},
		{dtype.Int32, scanExprComb(t, "b", dtype.Int32), 1, 4, true, true, 2, 1024 * 35, 0, 30, 8, true, 0},
		{dtype.Int64, scanExprComb(t, "b", dtype.Int64), 1, 2, true, false, 1, 512*35 + 6, 0, 30, 4, true, 0},
		{dtype.Uint32, Combine{Op: OpSum, Type: dtype.Uint64}, 1, 2, false, true, 1, 300, 0, 1, 4, true, 0}, // one partial tile
	}
	for i, c := range cases {
		if testenv.Race && i%5 != 0 {
			continue // see testenv.Race
		}
		sp := &ScanTiles{In: c.in, Comb: c.comb, Exclusive: c.excl, Group: c.g, Items: c.k, Vector: c.vec,
			Lookback: c.lb, Stage: c.stage, MinBlocks: c.mb}
		name := fmt.Sprintf("%s/rows%d/len%d/res%d", sp.Key(), c.rows, c.len, c.resident)
		t.Run(name, func(t *testing.T) {
			if err := sp.Validate(); err != nil {
				t.Fatal(err)
			}
			T := sp.Tile()
			if testenv.Race && c.len > 34*T {
				// under the race detector rows of 34 tiles (still two look-back
				// windows), at most 33 blocks resident: half the time
				c.len, c.resident = 34*T+c.len%T, min(c.resident, 33)
			}
			tpr := (c.len + T - 1) / T
			tiles := c.rows * tpr
			in := spectest.RandBytes(rng, c.in, c.rows*c.len, true)
			out := make([]byte, c.rows*c.len*c.comb.Type.Size())
			for i := range out {
				out[i] = 0xCD // poison
			}
			status := make([]byte, sp.StatusBytes(tiles))
			init := scanInitBits(rng, c.comb, c.excl)
			args := []spectest.Arg{spectest.BufAt(in, c.off), spectest.Buf(out), spectest.Buf(status), spectest.U64(uint64(c.rows)), spectest.U64(uint64(c.len)), spectest.U64(uint64(tpr)), spectest.U64(init)}
			got := spectest.Sim(t, sp, tiles, ScanTilesBlock, c.resident, args)
			want := spectest.CPU(t, sp, tiles, ScanTilesBlock, args)
			scanCompare(t, name, c.comb.Type, c.comb.Op, got[1], want[1])
			if spectest.FirstDiff(dtype.Uint8, got[0], in) >= 0 {
				t.Fatalf("%s: input modified", name)
			}
		})
	}
}

// TestScanTilesSimDeepLookback runs the last few tiles of a long row on the simulator
// with the statuses of the earlier tiles already published (mostly aggregates, a few
// inclusive prefixes, and a tile that never publishes behind the nearest inclusive
// prefix): look-backs cross several windows, stop at the nearest inclusive prefix, and
// don't wait for the tiles beyond it.
func TestScanTilesSimDeepLookback(t *testing.T) {
	rng := rand.New(rand.NewPCG(47, 48))
	type tc struct {
		comb  Combine
		excl  bool
		k     int
		lb    int
		stage bool
	}
	i32 := Combine{Op: OpSum, Type: dtype.Int32}
	i64 := Combine{Op: OpSum, Type: dtype.Int64}
	var cases []tc
	for _, lb := range []int{1, 2, 4, 8} {
		cases = append(cases,
			tc{i32, false, 1, lb, false},
			tc{i32, true, 4, lb, true},
			tc{scanExprComb(t, "a", dtype.Int32), false, 4, lb, true},
			tc{scanExprComb(t, "b", dtype.Int32), true, 4, lb, true},
			tc{scanExprComb(t, "a", dtype.Int32), false, 1, lb, false},
			tc{i64, lb%2 == 0, 2, lb, true},
			tc{i64, false, 1, lb, false})
	}
	const (
		pre  = 300 // tiles published before the launch
		run  = 10  // tiles run
		hole = 149 // a tile that has not published (behind the inclusive prefix at 150)
	)
	incl := map[int]bool{0: true, 37: true, 150: true}
	for i, c := range cases {
		if testenv.Race && i%7 != 0 {
			continue
		}
		sp := &ScanTiles{In: dtype.Int32, Comb: c.comb, Exclusive: c.excl, Group: 1, Items: c.k, Vector: true,
			Lookback: c.lb, Stage: c.stage}
		t.Run(sp.Key(), func(t *testing.T) {
			if err := sp.Validate(); err != nil {
				t.Fatal(err)
			}
			T := sp.Tile()
			tiles := pre + run
			n := tiles * T
			size := c.comb.Type.Size()
			in := spectest.RandBytes(rng, dtype.Int32, n, false)
			init := scanInitBits(rng, c.comb, c.excl)
			args := func(out, status []byte) []spectest.Arg {
				return []spectest.Arg{spectest.Buf(in), spectest.Buf(out), spectest.Buf(status), spectest.U64(1), spectest.U64(uint64(n)), spectest.U64(uint64(tiles)), spectest.U64(init)}
			}
			want := spectest.CPU(t, sp, tiles, ScanTilesBlock, args(make([]byte, n*size), make([]byte, sp.StatusBytes(tiles))))[1]
			// The inclusive scan's value at element e (init on the left when exclusive):
			// the exclusive output of e+1, or the inclusive output of e.
			inclAt := func(e int) []byte {
				if c.excl {
					return want[(e+1)*size : (e+2)*size]
				}
				return want[e*size : (e+1)*size]
			}
			// The aggregate of tile t: the sum (inclusive at its end minus at the end of
			// the tile before), its first element for "a", its last for "b".
			agg := func(tl int) uint64 {
				last := (tl+1)*T - 1
				if c.comb.Expr != nil {
					if c.comb.Expr.Key() == scanExprComb(t, "a", dtype.Int32).Expr.Key() {
						last = tl * T
					}
					return uint64(binary.LittleEndian.Uint32(in[4*last:]))
				}
				a := leUint(inclAt(last))
				if tl > 0 {
					a -= leUint(inclAt(tl*T - 1))
				} else if c.excl {
					a -= init
				}
				return a
			}
			status := make([]byte, sp.StatusBytes(tiles))
			binary.LittleEndian.PutUint32(status, pre) // the tile counter
			for tl := 0; tl < pre; tl++ {
				if tl == hole {
					continue
				}
				flag, v := scanFlagAgg, agg(tl)
				if incl[tl] {
					flag, v = scanFlagIncl, leUint(inclAt((tl+1)*T-1))
				}
				if sp.Packed() {
					pw := sp.PackedWords()
					for i := range pw {
						binary.LittleEndian.PutUint64(status[16+8*(pw*tl+i):], uint64(uint32(v>>(32*i)))|uint64(flag)<<32)
					}
					continue
				}
				lay := flaggedLayout(tiles, size)
				binary.LittleEndian.PutUint32(status[lay.flags+int64(4*tl):], uint32(flag))
				off := lay.agg
				if flag == scanFlagIncl {
					off = lay.incl
				}
				binary.LittleEndian.PutUint64(status[off+int64(size*tl):], v)
			}
			out := make([]byte, n*size)
			got := spectest.Sim(t, sp, run, ScanTilesBlock, run, args(out, status))[1]
			lo := pre * T * size
			if i := spectest.FirstDiff(c.comb.Type, got[lo:], want[lo:]); i >= 0 {
				e := pre*T + i
				t.Fatalf("element %d (tile %d) = %x, want %x", e, e/T, got[e*size:(e+1)*size], want[e*size:(e+1)*size])
			}
		})
	}
}

// leUint reads a little-endian value of 4 or 8 bytes.
func leUint(b []byte) uint64 {
	if len(b) == 4 {
		return uint64(binary.LittleEndian.Uint32(b))
	}
	return binary.LittleEndian.Uint64(b)
}
