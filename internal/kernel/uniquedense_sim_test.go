package kernel

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The dense unique's kernels (UniqueRange, UniqueMark, UniqueExpand) on the simulator
// and the CPU, chained as the root package chains them, against the set of ordered
// keys: every integer type, keys over the whole range (negative ones for the signed
// types), a narrow range around a negative or a large offset, and one value.
func TestUniqueDenseSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 7))
	for _, kt := range []dtype.DType{dtype.Int8, dtype.Uint8, dtype.Int16, dtype.Uint16, dtype.Int32, dtype.Uint32, dtype.Int64, dtype.Uint64} {
		if testenv.Race && kt != dtype.Int64 {
			continue
		}
		o := SortKey{Type: kt}
		ks := kt.Size()
		for _, c := range []struct {
			name string
			n    int
			span uint64 // 0: any bits
			off  int64
		}{{"full", 900, 0, 0}, {"narrow-negative", 2000, 300, -150}, {"narrow-offset", 1500, 1000, 1 << 40}, {"one", 70, 1, -3}} {
			t.Run(kt.String()+"/"+c.name, func(t *testing.T) {
				keys := spectest.RandBytes(rng, kt, c.n, true)
				if c.span > 0 {
					for i := range c.n {
						v := uint64(c.off + int64(rng.Uint64N(c.span)))
						for k := range ks {
							keys[i*ks+k] = byte(v >> (8 * k))
						}
					}
				}
				want := map[uint64]bool{}
				lo, hi := ^uint64(0), uint64(0)
				for i := range c.n {
					k := o.Ordered(loadRaw(keys, ks, i))
					want[k] = true
					lo, hi = min(lo, k), max(hi, k)
				}
				ones := make([]byte, 16)
				for i := range ones {
					ones[i] = 0xff
				}
				out := simAgree(t, &UniqueRange{Type: kt}, 3, 64, []spectest.Arg{spectest.Buf(keys), spectest.U64(uint64(c.n)), spectest.Buf(ones)})
				gl, gh := binary.LittleEndian.Uint64(out[2]), ^binary.LittleEndian.Uint64(out[2][8:])
				if gl != lo || gh != hi {
					t.Fatalf("range [%#x, %#x], want [%#x, %#x]", gl, gh, lo, hi)
				}
				if hi-lo >= 1<<16 {
					return // too wide a bitmap for the test (the root package falls back to the sort)
				}
				r := hi - lo + 1
				words := UniqueDenseWords(r)
				bm := make([]byte, 4*words)
				mark := &UniqueMark{Type: kt}
				args := []spectest.Arg{spectest.Buf(keys), spectest.U64(uint64(c.n)), spectest.Buf(bm), spectest.U64(lo), spectest.U64(uint64(words))}
				cfg := ptxsim.Linear(3, 64)
				cfg.Resident = 2
				cfg.SharedMem = 4 * words
				sim, err := spectest.SimConfigErr(t, mark, cfg, args)
				if err != nil {
					t.Fatal(err)
				}
				cp := spectest.CPU(t, mark, 3, 64, args)
				if firstDiff(sim[2], cp[2]) >= 0 {
					t.Fatalf("bitmap differs (sim vs CPU) at byte %d", firstDiff(sim[2], cp[2]))
				}
				ex := simAgree(t, &UniqueExpand{Type: kt}, 2, 64, []spectest.Arg{spectest.Buf(cp[2]), spectest.Buf(make([]byte, r)),
					spectest.Buf(make([]byte, int(r)*ks)), spectest.U64(lo), spectest.U64(r)})
				got := 0
				for j := range int(r) {
					v := o.Ordered(loadRaw(ex[2], ks, j))
					if v != lo+uint64(j) {
						t.Fatalf("value %d: ordered %#x, want %#x", j, v, lo+uint64(j))
					}
					if (ex[1][j] == 1) != want[v] || ex[1][j] > 1 {
						t.Fatalf("flag %d (ordered %#x) = %d, present %v", j, v, ex[1][j], want[v])
					}
					got += int(ex[1][j])
				}
				if got != len(want) {
					t.Fatalf("%d flags, want %d", got, len(want))
				}
			})
		}
	}
}

func TestUniqueDensePtxas(t *testing.T) {
	for _, kt := range []dtype.DType{dtype.Int8, dtype.Uint16, dtype.Int32, dtype.Uint32, dtype.Int64, dtype.Uint64} {
		for _, sp := range []spectest.Spec{&UniqueRange{Type: kt}, &UniqueMark{Type: kt}, &UniqueExpand{Type: kt}} {
			t.Run(sp.Key(), func(t *testing.T) {
				src, _, err := sp.PTX(9, 0)
				if err != nil {
					t.Fatal(err)
				}
				log, _ := scanPtxas(t, src)
				regs, smem := scanRegs(log)
				t.Logf("%s: %d registers, %d bytes smem", sp.Key(), regs, smem)
			})
		}
	}
}
