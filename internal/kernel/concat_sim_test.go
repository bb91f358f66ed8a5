package kernel

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"

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
