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

// TestMatMulSim runs the generated CUDA kernels on the PTX simulator against the CPU
// mirror: the FMA kernels (float32, float64) and the tensor-core kernels (float16,
// bfloat16, TF32: cp.async, ldmatrix and mma.sync as ptxsim runs them, by the PTX
// ISA's fragment layouts). Shapes: partial tiles on every side, K not a multiple of the
// tile, a batch with a broadcast operand, both layouts of A and B, alpha and beta.
//
// The larger shape runs for one layout of the 16-bit types, TF32 for the two mixed
// layouts (which cover both fragment-load styles of A and B), and under the race
// detector (or -short) only the small shape of float32, float64 and bfloat16,
// untransposed. The tilings other than the default (MatMul.Tile) run the small shape
// of bfloat16; the pipelined ones and those of warp tiles of 64x32 also a bfloat16, a
// transposed float16 and a TF32 product over more k tiles than stages.
func TestMatMulSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	type shape struct{ m, n, k, batch int }
	for _, c := range []struct {
		dt     dtype.DType
		tf32   bool
		shapes []shape
	}{
		{dtype.Float32, false, []shape{{130, 129, 19, 1}, {17, 9, 8, 3}}},
		{dtype.Float64, false, []shape{{70, 65, 21, 1}, {5, 3, 9, 2}}},
		{dtype.BFloat16, false, []shape{{136, 72, 40, 1}, {17, 9, 33, 2}}},
		{dtype.Float16, false, []shape{{136, 72, 40, 1}, {17, 9, 33, 2}}},
		{dtype.Float32, true, []shape{{136, 72, 20, 1}, {17, 9, 33, 2}}},
	} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				sp := &MatMul{Type: c.dt, TransA: ta, TransB: tb, TF32: c.tf32}
				for i, s := range c.shapes {
					tensor := c.tf32 || c.dt.Size() == 2
					if tensor && i == 0 && (ta || tb || c.tf32) {
						continue // the larger shape: one layout, 16-bit types
					}
					if c.tf32 && ta == tb {
						continue // TF32: both load styles of each operand in two layouts
					}
					if testenv.Race || testing.Short() {
						if ta || tb || i == 0 || c.tf32 || c.dt == dtype.Float16 {
							continue // one small case of each kernel family
						}
						s.k, s.batch = min(s.k, 20), 1
					}
					t.Run(fmt.Sprintf("%s/%dx%dx%dx%d", sp.Key(), s.m, s.n, s.k, s.batch), func(t *testing.T) {
						mmSimCase(t, rng, sp, s.m, s.n, s.k, s.batch)
					})
				}
			}
		}
	}
	// The other tilings of the tensor-core kernel (the default's is above): the small
	// shape, bfloat16, as stored (4 is 2 with fewer stages, which the shapes above
	// cover), and transposed for the K step of 64.
	for tile := 1; tile <= len(mmTensorTiles) && !testenv.Race && !testing.Short(); tile++ {
		if tile == mmDefaultTile || tile == 4 {
			continue
		}
		if tile == 6 {
			sp := &MatMul{Type: dtype.BFloat16, Tile: tile, TransA: true, TransB: true}
			t.Run(fmt.Sprintf("%s/17x9x70x1", sp.Key()), func(t *testing.T) {
				mmSimCase(t, rng, sp, 17, 9, 70, 1)
			})
		}
		sp := &MatMul{Type: dtype.BFloat16, Tile: tile}
		t.Run(fmt.Sprintf("%s/17x9x33x2", sp.Key()), func(t *testing.T) {
			mmSimCase(t, rng, sp, 17, 9, 33, 2)
		})
		if tt := mmTensorTiles[tile-1]; !tt.Pipelined && tt.WarpN == 0 {
			continue
		}
		// The pipelined main loop and the warp tiles of 64x32: more k tiles than
		// stages (the ring wraps), both fragment loaders (TF32's), transposed operands.
		for _, c := range []struct {
			sp      MatMul
			m, n, k int
		}{
			{MatMul{Type: dtype.BFloat16}, 70, 130, 6*64 + 3},
			{MatMul{Type: dtype.Float16, TransA: true, TransB: true}, 17, 9, 5*64 + 8},
			{MatMul{Type: dtype.Float32, TF32: true, TransA: true}, 17, 9, 5*32 + 1},
		} {
			sp := c.sp
			sp.Tile = tile
			t.Run(fmt.Sprintf("%s/%dx%dx%dx1", sp.Key(), c.m, c.n, c.k), func(t *testing.T) {
				mmSimCase(t, rng, &sp, c.m, c.n, c.k, 1)
			})
		}
	}
}

func mmSimCase(t *testing.T, rng *rand.Rand, sp *MatMul, m, n, k, batch int) {
	es := sp.Type.Size()
	V := 16 / es
	up := func(x int) int { return (x + V - 1) / V * V }
	ar, ac := m, k
	if sp.TransA {
		ar, ac = k, m
	}
	br, bc := k, n
	if sp.TransB {
		br, bc = n, k
	}
	lda, ldb, ldc := up(ac)+V, up(bc), n+1
	sa := ar * lda
	sb := 0 // B broadcast over the batch
	sc := m * ldc
	elems := func(rows, ld, stride int) int { return (batch-1)*stride + rows*ld }
	fill := func(n int, poison bool) []byte {
		b := make([]byte, n*es)
		for i := 0; i < n; i++ {
			x := (rng.Float64()*2 - 1) * 2
			if poison {
				x = math.NaN()
			}
			switch sp.Type {
			case dtype.Float64:
				binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(x))
			case dtype.Float32:
				binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(x)))
			case dtype.BFloat16:
				binary.LittleEndian.PutUint16(b[2*i:], dtype.BFloat16FromFloat64(x))
			case dtype.Float16:
				binary.LittleEndian.PutUint16(b[2*i:], dtype.Float16FromFloat64(x))
			}
		}
		return b
	}
	a := fill(elems(ar, lda, sa), false)
	b := fill(elems(br, ldb, sb), false)
	for _, beta := range []float64{0, -0.5} {
		c := fill(elems(m, ldc, sc), beta == 0)
		alpha := 1.25
		scalar := func(v float64) spectest.Arg {
			if sp.Type == dtype.Float64 {
				return spectest.U64(math.Float64bits(v))
			}
			return spectest.U64(uint64(math.Float32bits(float32(v))))
		}
		args := []spectest.Arg{spectest.Buf(a), spectest.Buf(b), spectest.Buf(c),
			spectest.U64(uint64(m)), spectest.U64(uint64(n)), spectest.U64(uint64(k)),
			spectest.U64(uint64(lda)), spectest.U64(uint64(ldb)), spectest.U64(uint64(ldc)),
			spectest.U64(uint64(sa)), spectest.U64(uint64(sb)), spectest.U64(uint64(sc)), spectest.U64(uint64(batch)),
			scalar(alpha), scalar(beta)}
		grid, _ := sp.Blocks(m, n, batch)
		got := spectest.Sim(t, sp, grid, sp.Threads(), 4, args)
		want := spectest.CPU(t, sp, grid, sp.Threads(), args)
		val := func(buf []byte, i int) float64 {
			switch sp.Type {
			case dtype.Float64:
				return math.Float64frombits(binary.LittleEndian.Uint64(buf[8*i:]))
			case dtype.Float32:
				return float64(math.Float32frombits(binary.LittleEndian.Uint32(buf[4*i:])))
			case dtype.Float16:
				return dtype.Float16ToFloat64(binary.LittleEndian.Uint16(buf[2*i:]))
			}
			return dtype.BFloat16ToFloat64(binary.LittleEndian.Uint16(buf[2*i:]))
		}
		// Elements outside the products (the padding of ldc) must keep their poison or
		// value; products within float32 (float64) accumulation error of the mirror.
		tol := 4 * float64(k) * 0x1p-24 * 4 * 4
		if sp.Type == dtype.Float64 {
			tol = 4 * float64(k) * 0x1p-53 * 4 * 4
		}

		bad := 0
		for i := 0; i < len(c)/es; i++ {
			g, w := val(got[2], i), val(want[2], i)
			inside := i%ldc < n
			same := g == w || (math.IsNaN(g) && math.IsNaN(w))
			lim := tol
			switch sp.Type {
			case dtype.BFloat16:
				lim += 0x1p-7 * math.Abs(w) // both round to bfloat16 once
			case dtype.Float16:
				lim += 0x1p-10 * math.Abs(w) // both round to float16 once
			}
			if !inside && !same || inside && !(math.Abs(g-w) <= lim) {
				if bad++; bad <= 5 {
					t.Errorf("beta %v: C element %d (row %d, column %d): %v, want %v", beta, i, i/ldc, i%ldc, g, w)
				}
			}
		}
		if bad > 0 {
			t.Fatalf("%d elements wrong", bad)
		}
	}
}
