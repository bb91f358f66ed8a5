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

// The gather kernel's PTX on the simulator against its CPU implementation, and both
// against a reference computed here.

func TestGatherPtxas(t *testing.T) {
	// Every element size, index type and mode, in the flat and the general form (each
	// combination not crossed with all others: ptxas takes a while).
	var specs []spectest.Spec
	modes := []IndexMode{IndexRaise, IndexWrap, IndexClip, IndexCheck}
	for i, size := range []int{1, 2, 4, 8} {
		it := []dtype.DType{dtype.Int32, dtype.Int64}[i%2]
		specs = append(specs, &Gather{Size: size, Index: it, Mode: modes[i], Vector: true},
			&Gather{Size: size, Index: it, Mode: modes[(i+2)%4], Rank: 3, Index64: size == 8},
			&Gather{Size: size, Index: it, Mode: modes[(i+1)%4], Vector: true, Stream: true},
			&Gather{Size: size, Index: it, Mode: modes[i], Vector: true, Variant: 2},
			&Gather{Size: size, Index: []dtype.DType{dtype.Int64, dtype.Int32}[i%2], Mode: modes[(i+3)%4], Vector: true, Variant: 2, Index64: true, Stream: true})
	}
	for _, sp := range specs {
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

// indexBytes encodes indices as int32 or int64.
func indexBytes(t dtype.DType, idx []int64) []byte {
	b := make([]byte, len(idx)*t.Size())
	for i, v := range idx {
		if t == dtype.Int32 {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(int32(v)))
		} else {
			binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
		}
	}
	return b
}

// gatherCase is one gather over an iteration shape with source and index strides.
type gatherCase struct {
	size  int
	index dtype.DType
	mode  IndexMode
	shape []int // nil: flat
	sst   []int
	ist   []int
	l     int
	ast   int
	n     int
	vec   bool
	bad   float64 // fraction of out-of-range indices
	// variant and i64 are the Gather's Variant and Index64.
	variant int
	i64     bool
}

func TestGatherSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(61, 62))
	cases := []gatherCase{
		{size: 4, index: dtype.Int64, mode: IndexRaise, l: 1000, ast: 1, n: 256*4*3 + 5, vec: true, bad: 0.001},
		{size: 4, index: dtype.Int32, mode: IndexRaise, l: 77, ast: 1, n: 1031, vec: true},
		{size: 8, index: dtype.Int32, mode: IndexWrap, l: 300, ast: 2, n: 2000, vec: true, bad: 0.3},
		{size: 2, index: dtype.Int64, mode: IndexClip, l: 50, ast: 3, n: 999, bad: 0.3},
		{size: 1, index: dtype.Int32, mode: IndexCheck, l: 40, ast: 1, n: 1500, vec: true, bad: 0.01},
		{size: 4, index: dtype.Int64, mode: IndexWrap, l: 1, ast: 1, n: 100, bad: 1},
		// Take along axis 1 of (3, 50, 5) with 7 indices: out (3, 7, 5).
		{size: 4, index: dtype.Int64, mode: IndexRaise, shape: []int{3, 7, 5}, sst: []int{250, 0, 1}, ist: []int{0, 1, 0}, l: 50, ast: 5, bad: 0.05},
		// take_along_axis on axis 0 of (40, 9) with indices (13, 9), transposed strides.
		{size: 8, index: dtype.Int32, mode: IndexWrap, shape: []int{13, 9}, sst: []int{0, 1}, ist: []int{1, 13}, l: 40, ast: 9, bad: 0.2},
		// A negative source stride (a flipped view).
		{size: 2, index: dtype.Int64, mode: IndexClip, shape: []int{4, 33}, sst: []int{-33, 0}, ist: []int{0, 1}, l: 33, ast: -1, bad: 0.1},
	}
	runGatherCases(t, rng, cases, func(i int) bool { return i == 0 || i == 6 })
}

// runGatherCases runs each case on the simulator and the CPU backend against a
// reference; under the race detector, only the cases race says.
func runGatherCases(t *testing.T, rng *rand.Rand, cases []gatherCase, race func(i int) bool) {
	for i, c := range cases {
		if testenv.Race && !race(i) {
			continue // see testenv.Race
		}
		rank := len(c.shape)
		n := c.n
		if rank > 0 {
			n = prodInts(c.shape)
		} else {
			c.shape, c.sst, c.ist = []int{n}, []int{0}, []int{1}
		}
		sp := &Gather{Size: c.size, Index: c.index, Mode: c.mode, Rank: rank, Vector: c.vec, Stream: i%2 == 1, Variant: c.variant, Index64: c.i64}
		t.Run(fmt.Sprintf("%d/%s", i, sp.Key()), func(t *testing.T) {
			// The source: every element the layout reaches.
			slo, shi := operandExtent(c.shape, c.sst, c.l, c.ast, true)
			ilo, ihi := extent(c.shape, c.ist)
			srcN := shi - slo + 1
			src := spectest.RandBytes(rng, dtype.Uint8, srcN*c.size, false)
			idxN := ihi - ilo + 1
			idx := make([]int64, idxN)
			var badSet = map[int64]bool{}
			for k := range idx {
				v := int64(rng.IntN(c.l))
				if c.mode != IndexCheck && c.mode != IndexClip && rng.IntN(2) == 0 {
					v -= int64(c.l) // counting from the end
				}
				if rng.Float64() < c.bad {
					v = int64(c.l) + int64(rng.IntN(5))
					if rng.IntN(2) == 0 {
						v = -v - 1
					}
				}
				idx[k] = v
			}
			// Out-of-range indices the iteration reaches.
			offsets2(c.shape, c.sst, c.ist, 0, n, func(j, so, io int) {
				if _, bad := c.mode.NormIndex(idx[io-ilo], int64(c.l)); bad {
					badSet[idx[io-ilo]] = true
				}
			})
			ib := indexBytes(c.index, idx)
			out := bytes.Repeat([]byte{0xCD}, n*c.size+16)
			errw := make([]byte, 8)
			args := []spectest.Arg{spectest.Buf(out), spectest.PtrAt(src, -slo*c.size), spectest.PtrAt(ib, -ilo*c.index.Size()),
				spectest.Buf(errw), spectest.U64(uint64(n)), spectest.U64(uint64(c.l)), spectest.I64(int64(c.ast))}
			if rank > 0 {
				for _, v := range c.shape {
					args = append(args, spectest.U64(uint64(v)))
				}
				for _, v := range c.sst {
					args = append(args, spectest.I64(int64(v)))
				}
				for _, v := range c.ist {
					args = append(args, spectest.I64(int64(v)))
				}
			}
			grid, _ := sp.Geometry(n, 3)
			got := spectest.Sim(t, sp, grid, GatherBlock, grid, args)
			want := spectest.CPU(t, sp, grid, GatherBlock, args)
			// The reference.
			ref := bytes.Repeat([]byte{0xCD}, n*c.size+16)
			offsets2(c.shape, c.sst, c.ist, 0, n, func(j, so, io int) {
				k, _ := c.mode.NormIndex(idx[io-ilo], int64(c.l))
				p := (so + int(k)*c.ast - slo) * c.size
				copy(ref[j*c.size:], src[p:p+c.size])
			})
			for w, res := range [][][]byte{got, want} {
				who := []string{"PTX", "CPU"}[w]
				if !bytes.Equal(res[0], ref) {
					for e := 0; e < n; e++ {
						if !bytes.Equal(res[0][e*c.size:(e+1)*c.size], ref[e*c.size:(e+1)*c.size]) {
							t.Fatalf("%s: element %d = %x, want %x", who, e, res[0][e*c.size:(e+1)*c.size], ref[e*c.size:(e+1)*c.size])
						}
					}
					t.Fatalf("%s: wrote past the output", who)
				}
				ew := int64(binary.LittleEndian.Uint64(res[3]))
				switch {
				case !c.mode.Records() || len(badSet) == 0:
					if ew != 0 {
						t.Fatalf("%s: error word %d, no index out of range", who, ew)
					}
				case !badSet[ew]:
					t.Fatalf("%s: error word %d, not one of the out-of-range indices %v", who, ew, badSet)
				}
			}
		})
	}
}

func TestGather2Sim(t *testing.T) {
	// The Variant 2 gather (flat, vector) in every element size, index type and mode,
	// over ragged sizes (a tile of 2048 elements and part of another, so that one warp
	// takes the partial path), with out-of-range indices in some cases (warps that
	// record) and none in others, negative and non-unit axis strides, and Index64.
	rng := rand.New(rand.NewPCG(63, 64))
	var cases []gatherCase
	modes := []IndexMode{IndexRaise, IndexWrap, IndexClip, IndexCheck}
	i := 0
	for _, size := range []int{1, 2, 4, 8} {
		for _, it := range []dtype.DType{dtype.Int32, dtype.Int64} {
			for _, m := range modes {
				c := gatherCase{size: size, index: it, mode: m, l: 500 + 37*i, ast: 1, n: GatherBlock*GatherItems2 + 1 + 97*(i%5), vec: true, variant: 2}
				switch i % 4 {
				case 0:
					c.bad = 0.002 // a few warps record
				case 1:
					c.ast = 3
				case 2:
					c.bad, c.i64 = 0.3, true
				case 3:
					c.ast, c.bad = -2, 0.01
				}
				cases = append(cases, c)
				i++
			}
		}
	}
	// Small: only the partial path; n a multiple of GatherItems2 and of 4; one element.
	cases = append(cases,
		gatherCase{size: 4, index: dtype.Int64, mode: IndexRaise, l: 9, ast: 1, n: 250, vec: true, variant: 2, bad: 0.05},
		gatherCase{size: 4, index: dtype.Int32, mode: IndexRaise, l: 1, ast: 1, n: 8 * 32 * 3, vec: true, variant: 2, bad: 0.5},
		gatherCase{size: 8, index: dtype.Int64, mode: IndexCheck, l: 3, ast: 1, n: 1, vec: true, variant: 2, bad: 1},
		gatherCase{size: 2, index: dtype.Int64, mode: IndexWrap, l: 1, ast: 1 << 40, n: 300, vec: true, variant: 2, bad: 1},
		// Every warp on the full path (n a multiple of 32*GatherItems2): only the votes
		// record.
		gatherCase{size: 4, index: dtype.Int64, mode: IndexRaise, l: 3000, ast: 1, n: 2 * GatherBlock * GatherItems2, vec: true, variant: 2, bad: 0.002},
		gatherCase{size: 1, index: dtype.Int32, mode: IndexCheck, l: 3000, ast: 1, n: 32 * GatherItems2 * 5, vec: true, variant: 2, bad: 0.01})
	runGatherCases(t, rng, cases, func(i int) bool { return i%7 == 0 })
}
