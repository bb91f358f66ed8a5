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

// The scatter kernel's PTX: every type and operator through ptxas; on the simulator
// (which has no match.sync, float atomics, compare-and-swap or shared-memory atomics,
// and whose atom.max compares as unsigned) the stores and the integer operators, with
// no warp aggregation and no shared bins, against the CPU implementation. The GPU tests
// of package gpu cover the rest.

func TestScatterPtxas(t *testing.T) {
	// Each type through each path it takes (atomics of its width, compare-and-swap
	// loops, float maximum and minimum on the bits, shared bins, the general form,
	// stores, counts, weights, the fixed-point passes), not every combination:
	// ptxas takes a while.
	var specs []spectest.Spec
	sc := func(dt dtype.DType, op Op) *Scatter {
		return &Scatter{Dst: dt, Val: dt, Index: dtype.Int64, Mode: IndexRaise, Op: op, Vector: true}
	}
	for _, dt := range []dtype.DType{dtype.Bool, dtype.Int8, dtype.Uint16, dtype.Int32, dtype.Uint64, dtype.Float16,
		dtype.BFloat16, dtype.Float32, dtype.Float64} {
		specs = append(specs, sc(dt, OpSum))
	}
	for _, dt := range []dtype.DType{dtype.Int64, dtype.Float32, dtype.Float64, dtype.BFloat16} {
		specs = append(specs, sc(dt, OpMax))
	}
	for _, dt := range []dtype.DType{dtype.Uint32, dtype.Float32, dtype.Int8} {
		specs = append(specs, sc(dt, OpMin))
	}
	specs = append(specs,
		&Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int32, Mode: IndexWrap, Op: OpSum, Bins: 1024},
		&Scatter{Dst: dtype.Int8, Val: dtype.Int8, Index: dtype.Int32, Mode: IndexWrap, Op: OpMax, Bins: 1024},
		&Scatter{Dst: dtype.Float64, Val: dtype.Float64, Index: dtype.Int32, Mode: IndexWrap, Op: OpMin, Bins: 1024},
		&Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int32, Mode: IndexClip, Op: OpSum, Rank: 2, Index64: true},
		&Scatter{Dst: dtype.Uint16, Val: dtype.Uint16, Index: dtype.Int32, Mode: IndexClip, Op: OpMin, Rank: 2},
		&Scatter{Dst: dtype.Int8, Val: dtype.Int8, Index: dtype.Int64, Op: ScatterStore, Vector: true},
		&Scatter{Dst: dtype.Float16, Val: dtype.Float16, Index: dtype.Int32, Op: ScatterStore, Rank: 3},
		&Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int64, Op: ScatterStore, Vector: true},
		&Scatter{Dst: dtype.Uint64, Val: dtype.Uint64, Index: dtype.Int32, Op: ScatterStore, Rank: 3},
		&Scatter{Dst: dtype.Int64, Index: dtype.Int64, Mode: IndexCheck, Op: OpSum, Ones: true, Vector: true},
		&Scatter{Dst: dtype.Int64, Index: dtype.Int32, Mode: IndexCheck, Op: OpSum, Ones: true, Bins: 4096},
		&Scatter{Dst: dtype.Float64, Val: dtype.Float32, Index: dtype.Int64, Mode: IndexCheck, Op: OpSum, Vector: true},
		&Scatter{Dst: dtype.Float64, Val: dtype.Int16, Index: dtype.Int64, Mode: IndexCheck, Op: OpSum, Bins: 2048},
		&Scatter{Dst: dtype.Int32, Val: dtype.Float32, Index: dtype.Int64, Op: OpMax, Fixed: FixedExp, Vector: true, Bins: 1024},
		&Scatter{Dst: dtype.Int32, Val: dtype.BFloat16, Index: dtype.Int32, Op: OpMax, Fixed: FixedExp, Rank: 2},
		&Scatter{Dst: dtype.Int64, Val: dtype.Float32, Index: dtype.Int64, Op: OpSum, Fixed: FixedAcc, Vector: true},
		&Scatter{Dst: dtype.Int64, Val: dtype.Float64, Index: dtype.Int32, Op: OpSum, Fixed: FixedAcc, Rank: 2, Mode: IndexWrap},
		&Scatter{Dst: dtype.Int64, Val: dtype.Float16, Index: dtype.Int64, Op: OpSum, Fixed: FixedAcc},
		// The fast paths: private copies of few bins, lane copies, one copy with the
		// vote, the vote on the global atomics.
		&Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int64, Op: OpSum, Vector: true, Bins: 8, Copies: GatherBlock},
		&Scatter{Dst: dtype.Float64, Val: dtype.Float64, Index: dtype.Int64, Op: OpMax, Vector: true, Bins: 16, Copies: 64},
		&Scatter{Dst: dtype.Int8, Val: dtype.Int8, Index: dtype.Int32, Mode: IndexWrap, Op: OpMin, Bins: 300, Copies: 16},
		&Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int64, Op: OpSum, Vector: true, Bins: 8192, Copies: 1},
		&Scatter{Dst: dtype.Int32, Val: dtype.Float32, Index: dtype.Int64, Op: OpMax, Fixed: FixedExp, Vector: true, Bins: 8, Copies: GatherBlock},
		&Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int64, Mode: IndexRaise, Op: OpSum, Vector: true, Detect: true},
		&Scatter{Dst: dtype.Int64, Index: dtype.Int64, Mode: IndexCheck, Op: OpSum, Ones: true, Vector: true, Detect: true},
		&Scatter{Dst: dtype.Float16, Val: dtype.Float16, Index: dtype.Int64, Mode: IndexRaise, Op: OpSum, Vector: true, Detect: true},
		&Scatter{Dst: dtype.Int8, Val: dtype.Int8, Index: dtype.Int32, Mode: IndexClip, Op: OpMin, Rank: 2, Detect: true},
		&Scatter{Dst: dtype.Int64, Val: dtype.Float32, Index: dtype.Int64, Op: OpSum, Fixed: FixedAcc, Vector: true, Detect: true},
		&Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int64, Mode: IndexRaise, Op: ScatterStore, Vector: true, Variant: 2},
		&Scatter{Dst: dtype.Int8, Val: dtype.Int8, Index: dtype.Int32, Mode: IndexCheck, Op: ScatterStore, Vector: true, Variant: 2, Index64: true},
		&Scatter{Dst: dtype.Float16, Val: dtype.Float16, Index: dtype.Int64, Mode: IndexWrap, Op: ScatterStore, Vector: true, Variant: 2},
		&Scatter{Dst: dtype.Uint64, Val: dtype.Uint64, Index: dtype.Int32, Mode: IndexClip, Op: ScatterStore, Vector: true, Variant: 2})
	for _, dt := range []dtype.DType{dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64} {
		specs = append(specs, &FixedFinish{Dst: dt})
	}
	for _, sp := range specs {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
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

type scatterCase struct {
	sp    Scatter
	shape []int // nil: flat
	dst   []int // destination strides
	val   []int
	ist   []int
	l     int
	ast   int
	n     int
	dstN  int // destination elements
	bad   float64
}

func TestScatter2Sim(t *testing.T) {
	// The Variant 2 store scatter (Put, flat, vector) in every element size, index
	// type and mode, over ragged sizes (one warp on the partial path), with
	// out-of-range indices in some cases (recorded and skipped) and none in others,
	// non-unit and negative axis strides, and Index64.
	rng := rand.New(rand.NewPCG(73, 74))
	var cases []scatterCase
	modes := []IndexMode{IndexRaise, IndexWrap, IndexClip, IndexCheck}
	i := 0
	for _, dt := range []dtype.DType{dtype.Uint8, dtype.Int16, dtype.Float32, dtype.Int64} {
		for _, it := range []dtype.DType{dtype.Int32, dtype.Int64} {
			for _, m := range modes {
				l := 20000 + 37*i
				c := scatterCase{sp: Scatter{Dst: dt, Val: dt, Index: it, Mode: m, Op: ScatterStore, Vector: true, Variant: 2},
					l: l, ast: 1, n: GatherBlock*GatherItems2 + 1 + 97*(i%5), dstN: l}
				switch i % 4 {
				case 0:
					c.bad = 0.002
				case 1:
					c.ast, c.dstN = 3, 3*l
				case 2:
					c.bad, c.sp.Index64 = 0.3, true
				case 3:
					c.bad = 0.01
				}
				cases = append(cases, c)
				i++
			}
		}
	}
	cases = append(cases,
		// Every warp on the full path: only the votes send warps to the partial path.
		scatterCase{sp: Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int64, Mode: IndexRaise, Op: ScatterStore, Vector: true, Variant: 2},
			l: 50000, ast: 1, n: 2 * GatherBlock * GatherItems2, dstN: 50000, bad: 0.002},
		scatterCase{sp: Scatter{Dst: dtype.Uint8, Val: dtype.Uint8, Index: dtype.Int32, Mode: IndexCheck, Op: ScatterStore, Vector: true, Variant: 2},
			l: 3000, ast: 1, n: 32 * GatherItems2 * 5, dstN: 3000, bad: 0.01},
		scatterCase{sp: Scatter{Dst: dtype.Int64, Val: dtype.Int64, Index: dtype.Int64, Mode: IndexRaise, Op: ScatterStore, Vector: true, Variant: 2},
			l: 9, ast: 1, n: 1, dstN: 9, bad: 1},
		// Duplicate targets (few positions): any one of their values.
		scatterCase{sp: Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int32, Mode: IndexWrap, Op: ScatterStore, Vector: true, Variant: 2},
			l: 64, ast: 1, n: 3000, dstN: 64, bad: 0.1})
	// Under the race detector, only cases of one block: the simulator runs blocks
	// concurrently, and stores of two blocks to one target race there as on a GPU.
	runScatterCases(t, rng, cases, func(i int) bool { return i == len(cases)-3 || i == len(cases)-2 })
}

func TestScatterSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(71, 72))
	cases := []scatterCase{
		{sp: Scatter{Dst: dtype.Int32, Val: dtype.Int32, Index: dtype.Int64, Op: OpSum, Vector: true}, l: 8, ast: 1, n: 4099, dstN: 8},
		{sp: Scatter{Dst: dtype.Uint64, Val: dtype.Uint64, Index: dtype.Int32, Op: OpMax, Mode: IndexWrap}, l: 100, ast: 1, n: 3000, dstN: 100, bad: 0.1},
		{sp: Scatter{Dst: dtype.Uint32, Val: dtype.Uint32, Index: dtype.Int64, Op: OpMin, Mode: IndexClip, Vector: true}, l: 50, ast: 2, n: 1025, dstN: 100, bad: 0.1},
		{sp: Scatter{Dst: dtype.Int32, Val: dtype.Int32, Index: dtype.Int32, Op: OpMin}, l: 64, ast: 1, n: 5000, dstN: 64, bad: 0.01},
		{sp: Scatter{Dst: dtype.Int64, Index: dtype.Int64, Op: OpSum, Mode: IndexCheck, Ones: true}, l: 300, ast: 1, n: 2000, dstN: 300, bad: 0.01},
		{sp: Scatter{Dst: dtype.Float32, Val: dtype.Float32, Index: dtype.Int64, Op: ScatterStore, Vector: true}, l: 5000, ast: 1, n: 2000, dstN: 5000},
		{sp: Scatter{Dst: dtype.Int16, Val: dtype.Int16, Index: dtype.Int32, Op: ScatterStore, Mode: IndexRaise}, l: 700, ast: 1, n: 301, dstN: 700, bad: 0.02},
		// Private copies of few bins (no atomics but the global ones): sums, counts,
		// minimum, a partial last tile, out-of-range indices skipped.
		{sp: Scatter{Dst: dtype.Int32, Val: dtype.Int32, Index: dtype.Int64, Op: OpSum, Vector: true, Bins: 8, Copies: GatherBlock}, l: 8, ast: 1, n: 9001, dstN: 8, bad: 0.01},
		{sp: Scatter{Dst: dtype.Int64, Index: dtype.Int32, Op: OpSum, Mode: IndexCheck, Ones: true, Bins: 16, Copies: GatherBlock}, l: 16, ast: 1, n: 6000, dstN: 16, bad: 0.01},
		{sp: Scatter{Dst: dtype.Uint32, Val: dtype.Uint32, Index: dtype.Int64, Op: OpMin, Mode: IndexWrap, Bins: 5, Copies: GatherBlock}, l: 5, ast: 1, n: 3001, dstN: 5, bad: 0.1},
		// AddAt on axis 0 of (20, 6) with indices (9,) and values (9, 6) transposed.
		{sp: Scatter{Dst: dtype.Int32, Val: dtype.Int32, Index: dtype.Int64, Op: OpSum, Rank: 2}, shape: []int{9, 6}, dst: []int{0, 1}, val: []int{1, 9}, ist: []int{1, 0}, l: 20, ast: 6, dstN: 120},
		// put_along_axis on axis 1 of (5, 40) with indices (5, 7) and a broadcast value row.
		{sp: Scatter{Dst: dtype.Uint64, Val: dtype.Uint64, Index: dtype.Int32, Op: ScatterStore, Rank: 2, Mode: IndexWrap}, shape: []int{5, 7}, dst: []int{40, 0}, val: []int{0, 1}, ist: []int{7, 1}, l: 40, ast: 1, dstN: 200, bad: 0.2},
	}
	runScatterCases(t, rng, cases, func(i int) bool { return i == 0 || i == 10 })
}

// runScatterCases runs each case on the simulator and the CPU backend against a
// reference; under the race detector, only the cases race says.
func runScatterCases(t *testing.T, rng *rand.Rand, cases []scatterCase, race func(i int) bool) {
	for i, c := range cases {
		if testenv.Race && !race(i) {
			continue // see testenv.Race
		}
		c.sp.NoWarp = true
		sp := &c.sp
		rank := len(c.shape)
		n := c.n
		if rank > 0 {
			n = prodInts(c.shape)
		} else {
			c.shape, c.dst, c.val, c.ist = []int{n}, []int{0}, []int{1}, []int{1}
		}
		t.Run(fmt.Sprintf("%d/%s", i, sp.Key()), func(t *testing.T) {
			vlo, vhi := extent(c.shape, c.val)
			ilo, ihi := extent(c.shape, c.ist)
			dt := sp.Dst
			dst := spectest.RandBytes(rng, dt, c.dstN, false)
			var vals []byte
			if !sp.Ones {
				vals = spectest.RandBytes(rng, sp.Val, vhi-vlo+1, false)
			} else {
				vals = make([]byte, 8)
			}
			idx := make([]int64, ihi-ilo+1)
			bad := map[int64]bool{}
			for k := range idx {
				v := int64(rng.IntN(c.l))
				if rng.Float64() < c.bad {
					v = int64(c.l + rng.IntN(3))
					if rng.IntN(2) == 0 && sp.Mode != IndexCheck {
						v = -v - 1
					}
				}
				idx[k] = v
			}
			offsetsN(c.shape, [][]int{c.ist}, 0, n, func(j int, o []int) {
				if _, b := sp.Mode.NormIndex(idx[o[0]-ilo], int64(c.l)); b {
					bad[idx[o[0]-ilo]] = true
				}
			})
			errw := make([]byte, 8)
			args := []spectest.Arg{spectest.Buf(dst), spectest.PtrAt(vals, -vlo*max(1, sp.Val.Size())),
				spectest.PtrAt(indexBytes(sp.Index, idx), -ilo*sp.Index.Size()), spectest.Buf(errw),
				spectest.U64(uint64(n)), spectest.U64(uint64(c.l)), spectest.I64(int64(c.ast))}
			if rank > 0 {
				for _, v := range c.shape {
					args = append(args, spectest.U64(uint64(v)))
				}
				for _, st := range [][]int{c.dst, c.val, c.ist} {
					for _, v := range st {
						args = append(args, spectest.I64(int64(v)))
					}
				}
			}
			grid, _ := sp.Geometry(n, 2)
			got := spectest.Sim(t, sp, grid, GatherBlock, grid, args)
			want := spectest.CPU(t, sp, grid, GatherBlock, args)
			// The reference: NumPy's sequential semantics (Put: the last value wins);
			// an index out of range that the mode records skips its update.
			ref := bytes.Clone(dst)
			sz := dt.Size()
			offsetsN(c.shape, [][]int{c.dst, c.val, c.ist}, 0, n, func(j int, o []int) {
				k, b := sp.Mode.NormIndex(idx[o[2]-ilo], int64(c.l))
				if b {
					return
				}
				p := (o[0] + int(k)*c.ast) * sz
				if sp.Op == ScatterStore {
					q := (o[1] - vlo) * sz
					copy(ref[p:p+sz], vals[q:q+sz])
					return
				}
				v := cpuNum{i: 1, f: 1}
				if !sp.Ones {
					q := (o[1] - vlo) * sp.Val.Size()
					v = convertNum(loadNum(vals[q:], sp.Val), sp.Val, dt)
				}
				storeNum(ref[p:p+sz], dt, cpuCombine(sp.Op, dt, loadNum(ref[p:], dt), v))
			})
			for w, res := range [][][]byte{got, want} {
				who := []string{"PTX", "CPU"}[w]
				if sp.Op == ScatterStore && w == 0 {
					// Duplicate targets: any one of their values.
					checkStores(t, who, res[0], ref, dst, vals, c, idx, ilo, vlo, n)
				} else if i := spectest.FirstDiff(dt, res[0], ref); i >= 0 {
					t.Fatalf("%s: element %d = %x, want %x", who, i, res[0][i*sz:(i+1)*sz], ref[i*sz:(i+1)*sz])
				}
				ew := int64(binary.LittleEndian.Uint64(res[3]))
				switch {
				case !sp.Mode.Records() || len(bad) == 0:
					if ew != 0 {
						t.Fatalf("%s: error word %d, no index out of range", who, ew)
					}
				case !bad[ew]:
					t.Fatalf("%s: error word %d, not one of the out-of-range indices %v", who, ew, bad)
				}
			}
		})
	}
}

// checkStores checks a Put's result: each target holds one of the values stored there,
// the others (those of skipped out-of-range indices too) are unchanged.
func checkStores(t *testing.T, who string, got, ref, dst, vals []byte, c scatterCase, idx []int64, ilo, vlo, n int) {
	t.Helper()
	sz := c.sp.Dst.Size()
	cand := map[int][][]byte{}
	offsetsN(c.shape, [][]int{c.dst, c.val, c.ist}, 0, n, func(j int, o []int) {
		k, b := c.sp.Mode.NormIndex(idx[o[2]-ilo], int64(c.l))
		if b {
			return // skipped
		}
		p := o[0] + int(k)*c.ast
		q := (o[1] - vlo) * sz
		cand[p] = append(cand[p], vals[q:q+sz])
	})
	for e := 0; e < len(dst)/sz; e++ {
		g := got[e*sz : (e+1)*sz]
		vs, ok := cand[e]
		if !ok {
			if !bytes.Equal(g, dst[e*sz:(e+1)*sz]) {
				t.Fatalf("%s: element %d changed: %x", who, e, g)
			}
			continue
		}
		found := false
		for _, v := range vs {
			found = found || bytes.Equal(g, v)
		}
		if !found {
			t.Fatalf("%s: element %d = %x, not one of the values stored there", who, e, g)
		}
	}
}
