package kernel

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/internal/ptxsim"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

func TestConcatPtxas(t *testing.T) {
	for i, v := range []int{1, 2, 4, 8, 16} {
		for _, k := range []int{[]int{1, 2, 8}[i%3]} {
			sp := &ConcatRows{Inputs: k, Vec: v, Rows: 1 + i%2}
			t.Run(sp.Key(), func(t *testing.T) {
				t.Parallel()
				src, _, err := sp.PTX(9, 0)
				if err != nil {
					t.Fatal(err)
				}
				log, _ := scanPtxas(t, src)
				regs, _ := scanRegs(log)
				t.Logf("%s: %d registers", sp.Key(), regs)
			})
		}
	}
}

func TestConcatSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(81, 82))
	for i, c := range []struct {
		vec  int
		rows int
		cols []int // vectors
		gap  int   // extra vectors per source row
	}{
		{16, 3, []int{1500, 7}, 0},
		{4, 5, []int{1024, 1025, 1}, 3},
		{1, 2, []int{3000}, 1},
		{8, 1, []int{10, 20, 30, 40, 50, 60, 70, 80}, 0},
	} {
		for nr := 1; nr <= 2; nr++ {
			if testenv.Race && (i != 0 || nr != 2) {
				continue
			}
			sp := &ConcatRows{Inputs: len(c.cols), Vec: c.vec, Rows: nr}
			t.Run(fmt.Sprintf("%d/%s", i, sp.Key()), func(t *testing.T) {
				V := c.vec
				ldd := 0
				for _, n := range c.cols {
					ldd += n
				}
				dst := bytes.Repeat([]byte{0xCD}, c.rows*ldd*V)
				want := bytes.Clone(dst)
				args := []spectest.Arg{spectest.Buf(dst), spectest.U64(uint64(c.rows)), spectest.U64(uint64(ldd))}
				doff, first := 0, 0
				srcs := make([][]byte, len(c.cols))
				for k, n := range c.cols {
					lds := n + c.gap
					srcs[k] = make([]byte, c.rows*lds*V)
					for b := range srcs[k] {
						srcs[k][b] = byte(rng.Uint32())
					}
					for r := range c.rows {
						copy(want[(r*ldd+doff)*V:(r*ldd+doff+n)*V], srcs[k][r*lds*V:(r*lds+n)*V])
					}
					args = append(args, spectest.Buf(srcs[k]), spectest.U64(uint64(n)), spectest.U64(uint64(lds)), spectest.U64(uint64(doff)), spectest.U64(uint64(first)))
					doff += n
					first += ConcatChunks(n)
				}
				// The simulator's grid has one row: the kernel's loop walks every row.
				got := spectest.Sim(t, sp, first, ConcatBlock, first, args)
				cpu := spectest.CPU(t, sp, first, ConcatBlock, args)
				for w, res := range [][]byte{got[0], cpu[0]} {
					if !bytes.Equal(res, want) {
						for b := range res {
							if res[b] != want[b] {
								t.Fatalf("%s: byte %d = %#x, want %#x", []string{"PTX", "CPU"}[w], b, res[b], want[b])
							}
						}
					}
				}
			})
		}
	}
}

// TestConcatTilesPtxas assembles the tiled kernel in every shape the array layer
// launches (each vector width, one to eight inputs, one or two rows, 4 or 8 items,
// streaming or not): no spills, no stack (scanPtxas fails on either).
func TestConcatTilesPtxas(t *testing.T) {
	for i, v := range []int{1, 2, 4, 8, 16} {
		for _, k := range []int{1, 2, 8} {
			for _, items := range []int{4, 8} {
				sp := &ConcatRows{Inputs: k, Vec: v, Rows: 1 + (i+k)%2, Tiles: true, Items: items, Stream: (i+items)%3 == 0}
				t.Run(sp.Key(), func(t *testing.T) {
					t.Parallel()
					src, _, err := sp.PTX(9, 0)
					if err != nil {
						t.Fatal(err)
					}
					log, _ := scanPtxas(t, src)
					regs, _ := scanRegs(log)
					t.Logf("%s: %d registers", sp.Key(), regs)
				})
			}
		}
	}
}

// TestConcatTilesSim runs the tiled kernel's PTX on the simulator and its CPU
// implementation against a plain copy: every vector width, rows that are and aren't a
// whole number of chunks, inputs with a row pitch above the row (column slices), one
// row, odd row counts with tiles of two rows, one tile per block (x: chunks, y: tiles
// of rows) and fewer blocks than tiles (the loop over tiles), into a poisoned
// destination (bytes between the inputs' columns must stay poisoned: ldd is wider than
// the inputs' columns here).
func TestConcatTilesSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(83, 84))
	for i, c := range []struct {
		vec   int
		rows  int
		cols  []int // vectors
		gap   int   // extra vectors per source row
		items int
		nrows int
		gridY int // 0: one tile of rows per block
		extra int // destination vectors per row past the inputs' (left unwritten)
	}{
		{16, 3, []int{2048, 7, 1500}, 0, 4, 1, 0, 0},
		{16, 5, []int{1024, 2049}, 2, 8, 2, 0, 3},
		{16, 5, []int{1024, 2049}, 2, 8, 2, 2, 0},
		{8, 4, []int{300, 1}, 1, 4, 2, 1, 1},
		{4, 7, []int{1024, 1025, 1}, 3, 4, 2, 0, 0},
		{2, 2, []int{2500, 3}, 0, 8, 1, 1, 2},
		{1, 3, []int{3000}, 1, 4, 1, 0, 0},
		{8, 1, []int{10, 20, 30, 40, 50, 60, 70, 80}, 0, 8, 1, 0, 5},
	} {
		for _, stream := range []bool{false, true} {
			if stream && i%2 == 1 || testenv.Race && (i != 1 || stream) {
				continue
			}
			sp := &ConcatRows{Inputs: len(c.cols), Vec: c.vec, Rows: c.nrows, Tiles: true, Items: c.items, Stream: stream}
			t.Run(fmt.Sprintf("%d/%s", i, sp.Key()), func(t *testing.T) {
				V := c.vec
				ldd := c.extra
				for _, n := range c.cols {
					ldd += n
				}
				dst := bytes.Repeat([]byte{0xCD}, c.rows*ldd*V)
				want := bytes.Clone(dst)
				args := []spectest.Arg{spectest.Buf(dst), spectest.U64(uint64(c.rows)), spectest.U64(uint64(ldd))}
				doff, chunks := 0, 0
				for _, n := range c.cols {
					lds := n + c.gap
					src := make([]byte, c.rows*lds*V)
					for b := range src {
						src[b] = byte(rng.Uint32())
					}
					for r := range c.rows {
						copy(want[(r*ldd+doff)*V:(r*ldd+doff+n)*V], src[r*lds*V:(r*lds+n)*V])
					}
					args = append(args, spectest.Buf(src), spectest.U64(uint64(n)), spectest.U64(uint64(lds)), spectest.U64(uint64(doff)), spectest.U64(uint64(chunks)))
					doff += n
					chunks += sp.Chunks(n)
				}
				gy := c.gridY
				if gy == 0 {
					gy = (c.rows + c.nrows - 1) / c.nrows
				}
				cfg := ptxsim.Config{Grid: [3]uint32{uint32(chunks), uint32(gy), 1}, Block: [3]uint32{ConcatBlock, 1, 1}, Resident: 8}
				got, err := spectest.SimConfigErr(t, sp, cfg, args)
				if err != nil {
					t.Fatal(err)
				}
				cpu := spectest.CPU(t, sp, chunks, ConcatBlock, args)
				for w, res := range [][]byte{got[0], cpu[0]} {
					if b := firstDiff(res, want); b >= 0 {
						r, col := b/V/ldd, b/V%ldd
						t.Fatalf("%s: byte %d (row %d, vector %d) = %#x, want %#x", []string{"PTX", "CPU"}[w], b, r, col, res[b], want[b])
					}
				}
				for k := range c.cols {
					if !bytes.Equal(got[3+5*k], args[3+5*k].Data) {
						t.Fatalf("input %d changed", k)
					}
				}
			})
		}
	}
}

// TestConcatTilesSpec checks the tiled spec's key, chunks and refusals.
func TestConcatTilesSpec(t *testing.T) {
	a := &ConcatRows{Inputs: 2, Vec: 16, Rows: 2}
	b := &ConcatRows{Inputs: 2, Vec: 16, Rows: 2, Tiles: true}
	c := &ConcatRows{Inputs: 2, Vec: 16, Rows: 2, Tiles: true, Items: 8, Stream: true}
	if a.Key() == b.Key() || b.Key() == c.Key() {
		t.Fatalf("keys %q, %q, %q not distinct", a.Key(), b.Key(), c.Key())
	}
	for _, x := range []struct {
		sp         *ConcatRows
		cols, want int
	}{{a, 1024, 1}, {a, 1025, 2}, {b, 2048, 2}, {c, 2048, 1}, {c, 2049, 2}, {c, 1, 1}} {
		if got := x.sp.Chunks(x.cols); got != x.want {
			t.Errorf("%s: Chunks(%d) = %d, want %d", x.sp.Key(), x.cols, got, x.want)
		}
	}
	for _, bad := range []*ConcatRows{
		{Inputs: 2, Vec: 16, Items: 8}, {Inputs: 2, Vec: 16, Stream: true}, {Inputs: 2, Vec: 16, Tiles: true, Items: 2},
		{Inputs: 9, Vec: 16, Tiles: true}, {Inputs: 2, Vec: 32, Tiles: true}, {Inputs: 2, Vec: 16, Rows: 3, Tiles: true},
	} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v: no error", *bad)
		}
	}
}
