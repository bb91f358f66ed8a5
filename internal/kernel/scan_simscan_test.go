package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"

	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The scan kernels' PTX run on the simulator against the CPU implementation: exactly
// for integers, bools, maxima and minima (NaN and -0 included), with a tolerance for
// float sums. Tiles are made small (few items per thread) so that rows span many
// tiles and the look-back crosses several 32-tile windows.

func scanInitBits(rng *rand.Rand, c Combine, excl bool) uint64 {
	if !excl {
		return 0
	}
	if id, ok := c.Identity(); ok && rng.IntN(2) == 0 {
		return id
	}
	b := spectest.RandBytes(rng, c.Type, 1, false)
	var v uint64
	for k := len(b) - 1; k >= 0; k-- {
		v = v<<8 | uint64(b[k])
	}
	return v
}

// scanCompare compares the simulator's output with the CPU's.
func scanCompare(t *testing.T, what string, acc dtype.DType, op Op, sim, cpuOut []byte) {
	t.Helper()
	if acc.IsFloat() && (op == OpSum || op == OpProd || op == 0) { // 0: an expression
		sz := acc.Size()
		for i := 0; i+sz <= len(sim); i += sz {
			var a, b float64
			if sz == 4 {
				a = float64(math.Float32frombits(binary.LittleEndian.Uint32(sim[i:])))
				b = float64(math.Float32frombits(binary.LittleEndian.Uint32(cpuOut[i:])))
			} else {
				a = math.Float64frombits(binary.LittleEndian.Uint64(sim[i:]))
				b = math.Float64frombits(binary.LittleEndian.Uint64(cpuOut[i:]))
			}
			if a != a && b != b {
				continue
			}
			if math.Abs(a-b) > 1e-3*(1+math.Abs(b)) {
				t.Fatalf("%s: element %d = %v, CPU %v", what, i/sz, a, b)
			}
		}
		return
	}
	if i := spectest.FirstDiff(acc, sim, cpuOut); i >= 0 {
		sz := acc.Size()
		t.Fatalf("%s: element %d = %x, CPU %x", what, i, sim[i*sz:(i+1)*sz], cpuOut[i*sz:(i+1)*sz])
	}
}

func TestScanTilesSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	type tc struct {
		in        dtype.DType
		comb      Combine
		g, k      int
		excl, vec bool
		rows, len int
		off       int
		resident  int
	}
	i64 := Combine{Op: OpSum, Type: dtype.Int64}
	cases := []tc{
		{dtype.Int32, i64, 1, 1, false, true, 1, 256*40 + 17, 0, 6},                                     // 41 tiles: two look-back windows
		{dtype.Int32, i64, 1, 1, true, true, 1, 256 * 35, 0, 40},                                        // exclusive, all resident
		{dtype.Int64, i64, 1, 2, false, false, 3, 512*5 + 3, 0, 4},                                      // rows of several tiles
		{dtype.Bool, i64, 1, 4, true, true, 2, 1024 * 3, 0, 3},                                          // bool input, vector loads of 4 bytes
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Int32}, 1, 16, false, true, 1, 4096*3 + 100, 0, 2}, // packed status, K=16
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Int32}, 1, 16, true, false, 1, 4096 * 2, 4, 2},     // misaligned, scalar path
		{dtype.Float32, Combine{Op: OpMax, Type: dtype.Float32}, 1, 2, false, true, 1, 512 * 9, 0, 5},   // NaN, -0
		{dtype.Float32, Combine{Op: OpMin, Type: dtype.Float32}, 1, 2, true, false, 2, 512*4 + 2, 0, 5},
		{dtype.Float64, Combine{Op: OpMax, Type: dtype.Float64}, 1, 1, false, true, 1, 256 * 33, 0, 8},
		{dtype.Float32, Combine{Op: OpSum, Type: dtype.Float32}, 1, 4, false, true, 1, 1024 * 6, 0, 3},
		{dtype.Int32, i64, 3, 3, false, false, 2, 768*4 + 3*7, 0, 4},                                   // three interleaved columns
		{dtype.Int16, Combine{Op: OpMin, Type: dtype.Int16}, 5, 5, true, false, 2, 1280*3 + 5*3, 0, 3}, // five
		{dtype.Uint8, Combine{Op: OpProd, Type: dtype.Uint8}, 2, 4, false, true, 1, 1024*7 + 2, 0, 3},
		{dtype.Bool, Combine{Op: OpMax, Type: dtype.Bool}, 1, 2, false, true, 1, 512 * 5, 0, 3},
		{dtype.Bool, Combine{Op: OpMin, Type: dtype.Bool}, 2, 2, true, true, 1, 512 * 5, 0, 3},
		{dtype.Int32, scanExprComb(t, "a ^ b", dtype.Int64), 1, 2, true, true, 1, 512*6 + 1, 0, 3},
		{dtype.Int32, scanExprComb(t, "where(a > b, a, b)", dtype.Int32), 1, 1, false, true, 1, 256*34 + 1, 0, 7},
		{dtype.Float64, Combine{Op: OpSum, Type: dtype.Float32}, 1, 2, false, true, 1, 512 * 3, 0, 3}, // conversion
		// Transposed stores of full tiles (4- and 8-byte accumulators, 4 to 16 words).
		{dtype.Int32, i64, 1, 2, false, true, 1, 512*9 + 5, 0, 4},
		{dtype.Int16, i64, 1, 4, true, true, 1, 1024*5 + 1, 0, 4},
		{dtype.Int64, i64, 1, 8, false, true, 2, 2048 * 3, 0, 4},
		{dtype.Float32, Combine{Op: OpMax, Type: dtype.Float32}, 1, 8, false, true, 1, 2048*3 + 7, 0, 3},
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Uint32}, 2, 4, true, true, 1, 1024*4 + 2, 0, 3},
		// Non-commutative operators: projections catch any operand swapped.
		{dtype.Int32, scanExprComb(t, "a", dtype.Int32), 1, 1, false, true, 1, 256*40 + 3, 0, 6},
		{dtype.Int32, scanExprComb(t, "b", dtype.Int32), 1, 1, false, true, 1, 256*40 + 3, 0, 6},
		{dtype.Int32, scanExprComb(t, "a", dtype.Int32), 1, 1, true, true, 2, 256 * 35, 0, 6},
		{dtype.Int32, scanExprComb(t, "b", dtype.Int32), 1, 1, true, true, 2, 256 * 35, 0, 6},
		{dtype.Int64, scanExprComb(t, "b", dtype.Int64), 3, 3, false, false, 1, 768*35 + 6, 0, 9},
		{dtype.Int64, scanExprComb(t, "a", dtype.Int64), 2, 2, true, false, 1, 512*35 + 6, 0, 9},
		{dtype.Int8, Combine{Op: OpSum, Type: dtype.Int8}, 1, 8, false, true, 1, 2048*2 + 9, 0, 3}, // wrap
		{dtype.Uint32, Combine{Op: OpSum, Type: dtype.Uint64}, 1, 1, false, true, 1, 10, 0, 1},     // tiny
	}
	// The second row-scan configuration (GPU_SCAN_VARIANT=v2): 32 items per thread for
	// 4-byte accumulators, 16 for 8-byte ones (32 words: transposed stores of 8 rows).
	v2 := len(cases)
	cases = append(cases, []tc{
		{dtype.Float32, Combine{Op: OpSum, Type: dtype.Float32}, 1, 32, false, true, 1, 8192*3 + 100, 0, 2},
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Int32}, 1, 32, true, true, 2, 8192*2 + 36, 0, 3}, // packed status
		{dtype.Int64, i64, 1, 16, false, true, 1, 4096*3 + 5, 0, 2},
		{dtype.Int64, i64, 1, 16, true, true, 2, 4096 * 2, 0, 3},
		{dtype.Int32, i64, 1, 16, false, true, 1, 4096*2 + 17, 0, 2},
		{dtype.Float64, Combine{Op: OpMax, Type: dtype.Float64}, 1, 16, false, true, 1, 4096*2 + 1, 0, 2},
		{dtype.Float32, Combine{Op: OpMin, Type: dtype.Float32}, 1, 32, true, false, 1, 8192*2 + 3, 4, 2}, // misaligned, scalar path
	}...)
	for i, c := range cases {
		if testenv.Race && i != 1 && i != 5 && i != 20 && i != v2 {
			continue // see testenv.Race
		}
		sp := &ScanTiles{In: c.in, Comb: c.comb, Exclusive: c.excl, Group: c.g, Items: c.k, Vector: c.vec}
		name := fmt.Sprintf("%s/rows%d/len%d/res%d", sp.Key(), c.rows, c.len, c.resident)
		t.Run(name, func(t *testing.T) {
			T := sp.Tile()
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
			statusClean(t, name, got[2])
			if spectest.FirstDiff(dtype.Uint8, got[0], in) >= 0 {
				t.Fatalf("%s: input modified", name)
			}
		})
	}
}

// statusClean fails the test unless the kernel left its status zero, as selfClean
// promises for a status of at most ScanSelfCleanMax bytes past the header, so that the
// next launch can use the same status without a memset.
func statusClean(t *testing.T, name string, status []byte) {
	t.Helper()
	if len(status)-16 > ScanSelfCleanMax {
		return
	}
	for i, b := range status {
		if b != 0 {
			t.Fatalf("%s: status byte %d of %d is %#x after the kernel, want 0", name, i, len(status), b)
		}
	}
}

func TestScanColumnsSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(43, 44))
	type tc struct {
		in              dtype.DType
		comb            Combine
		groups, rows    int
		excl            bool
		outer, n, inner int
		transposed      bool // read the input through a transposed layout
		resident        int
	}
	cases := []tc{
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Int64}, 8, 2, false, 2, 100, 37, false, 5},    // 7 chunks
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Int64}, 8, 2, true, 1, 160, 70, false, 3},     // exclusive
		{dtype.Float32, Combine{Op: OpMax, Type: dtype.Float32}, 8, 1, false, 3, 50, 33, false, 4}, // NaN, -0
		{dtype.Int64, Combine{Op: OpMin, Type: dtype.Int64}, 8, 2, true, 1, 77, 300, true, 6},      // strided input
		{dtype.Bool, Combine{Op: OpSum, Type: dtype.Int64}, 1, 3, false, 600, 3, 1, false, 3},      // rows of 3
		{dtype.Int32, Combine{Op: OpMax, Type: dtype.Int32}, 1, 5, true, 40, 5, 9, false, 3},
		{dtype.Float64, Combine{Op: OpSum, Type: dtype.Float64}, 8, 2, false, 1, 200, 20, false, 4},
		{dtype.Uint8, Combine{Op: OpProd, Type: dtype.Uint8}, 8, 1, false, 2, 40, 50, true, 3},
		{dtype.Int32, scanExprComb(t, "a | b", dtype.Int32), 8, 2, true, 1, 90, 40, false, 3},
		{dtype.Bool, Combine{Op: OpMin, Type: dtype.Bool}, 8, 1, false, 1, 70, 64, false, 3},
		{dtype.Int32, scanExprComb(t, "a", dtype.Int32), 8, 1, false, 2, 100, 40, false, 4},
		{dtype.Int32, scanExprComb(t, "b", dtype.Int32), 8, 1, true, 2, 100, 40, false, 4},
		{dtype.Int32, scanExprComb(t, "b", dtype.Int32), 1, 4, false, 50, 4, 3, false, 4},
	}
	for i, c := range cases {
		if testenv.Race && i%4 != 0 {
			continue // see testenv.Race
		}
		sp := &ScanColumns{In: c.in, Comb: c.comb, Exclusive: c.excl, Groups: c.groups, Rows: c.rows}
		name := fmt.Sprintf("%s/%dx%dx%d/t%v", sp.Key(), c.outer, c.n, c.inner, c.transposed)
		t.Run(name, func(t *testing.T) {
			total := c.outer * c.n * c.inner
			in := spectest.RandBytes(rng, c.in, total, true)
			// Strides of the [outer, n, inner] view: row-major, or the memory laid out
			// as [inner, n, outer] (a transposed view).
			so, sk, sj := c.n*c.inner, c.inner, 1
			if c.transposed {
				so, sk, sj = 1, c.outer, c.outer*c.n
			}
			out := make([]byte, total*c.comb.Type.Size())
			for i := range out {
				out[i] = 0xCD
			}
			cols := c.outer * c.inner
			cb := (cols + sp.Width() - 1) / sp.Width()
			chunks := (c.n + sp.TileRows() - 1) / sp.TileRows()
			tiles := cb * chunks
			status := make([]byte, sp.StatusBytes(tiles))
			init := scanInitBits(rng, c.comb, c.excl)
			args := []spectest.Arg{spectest.Buf(in), spectest.Buf(out), spectest.Buf(status), spectest.U64(uint64(c.outer)), spectest.U64(uint64(c.n)), spectest.U64(uint64(c.inner)),
				spectest.I64(int64(so)), spectest.I64(int64(sk)), spectest.I64(int64(sj)), spectest.U64(uint64(chunks)), spectest.U64(init)}
			got := spectest.Sim(t, sp, tiles, ScanColumnsBlock, c.resident, args)
			want := spectest.CPU(t, sp, tiles, ScanColumnsBlock, args)
			scanCompare(t, name, c.comb.Type, c.comb.Op, got[1], want[1])
			statusClean(t, name, got[2])
		})
	}
}
