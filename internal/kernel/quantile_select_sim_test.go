package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// quantileSelectRows returns rows of n keys of kt for the selection's tests: random
// keys with NaNs, infinities and zeros (sortSimKeys), and for floats rows of all -0,
// all +0, and mostly zeros of both signs (a middle position on a zero whose sign the
// scan finds) with a NaN-free and a NaN row.
func quantileSelectRows(rng *rand.Rand, kt dtype.DType, n int) (keys []byte, rows int) {
	ks := kt.Size()
	keys = sortSimKeys(rng, kt, 2*n)
	if !kt.IsFloat() {
		return keys, 2
	}
	sign := uint64(1) << (8*ks - 1)
	add := func(gen func(i int) uint64) {
		row := make([]byte, n*ks)
		for i := range n {
			storeRaw(row, ks, i, gen(i))
		}
		keys = append(keys, row...)
		rows++
	}
	rows = 2
	add(func(int) uint64 { return sign })                       // all -0
	add(func(int) uint64 { return 0 })                          // all +0
	add(func(int) uint64 { return sign * uint64(rng.IntN(2)) }) // mixed zeros
	add(func(i int) uint64 {                                    // mixed zeros, a few others
		switch rng.IntN(8) {
		case 0:
			return floatInf(kt) | sign*uint64(rng.IntN(2))
		case 1:
			return 1 | sign*uint64(rng.IntN(2)) // the smallest subnormals
		}
		return sign * uint64(rng.IntN(2))
	})
	add(func(i int) uint64 { // mixed zeros and a NaN
		if i == n/3 {
			return floatInf(kt) | 1
		}
		return sign * uint64(rng.IntN(2))
	})
	return keys, rows
}

// quantileSelectStates returns the select's states for position p of each row (what
// SelectHist leaves: the ordered key at p of the stable ascending order and its tie
// rank), and the rows sorted.
func quantileSelectStates(kt dtype.DType, keys []byte, rows, n, p int) (state, sorted []byte) {
	o := SortKey{Type: kt}
	ks := kt.Size()
	state = make([]byte, rows*16)
	sorted = make([]byte, len(keys))
	for r := range rows {
		perm := make([]int, n)
		ord := make([]uint64, n)
		for i := range perm {
			perm[i], ord[i] = i, o.Ordered(loadRaw(keys, ks, r*n+i))
		}
		stableSortPerm(perm, ord)
		for i, q := range perm {
			storeRaw(sorted, ks, r*n+i, loadRaw(keys, ks, r*n+q))
		}
		T := ord[perm[p]]
		rank := 0
		for _, q := range perm[:p+1] {
			if ord[q] == T {
				rank++
			}
		}
		binary.LittleEndian.PutUint64(state[16*r:], T)
		binary.LittleEndian.PutUint64(state[16*r+8:], uint64(rank))
	}
	return state, sorted
}

// The flags and the finish on the simulator against the CPU, and the finish's results
// against QuantileGather's of the sorted rows, bit for bit.
func TestQuantileSelectSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 12))
	for _, kt := range []dtype.DType{dtype.Float32, dtype.Float64, dtype.Int32, dtype.Uint8, dtype.Bool, dtype.Int64, dtype.BFloat16, dtype.Float16} {
		if testenv.Race && kt != dtype.Float32 {
			continue
		}
		for _, n := range []int{700, 1001} {
			t.Run(fmt.Sprintf("%v/%d", kt, n), func(t *testing.T) {
				ks := kt.Size()
				keys, rows := quantileSelectRows(rng, kt, n)
				flags := make([]byte, rows*24)
				if kt.IsFloat() {
					for _, grid := range []int{1, 3} {
						r := simAgree(t, &QuantileFlags{Type: kt}, grid, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(make([]byte, rows*24)),
							spectest.U64(uint64(rows)), spectest.U64(uint64(n))})
						flags = r[1]
					}
					// The counts themselves.
					f := cpuSliceI64(flags)
					for r := range rows {
						var c [3]int64
						for i := range n {
							raw := loadRaw(keys, ks, r*n+i)
							switch {
							case SortKey{Type: kt}.Ordered(raw) == ^uint64(0)>>(64-8*ks):
								c[0]++
							case raw == 1<<(8*ks-1):
								c[1]++
							case raw == 0:
								c[2]++
							}
						}
						if [3]int64(f[3*r:3*r+3]) != c {
							t.Fatalf("row %d: flags %v, want %v", r, f[3*r:3*r+3], c)
						}
					}
				}
				for _, out := range []dtype.DType{dtype.Float32, dtype.Float64} {
					for _, q := range []float64{-1, 0, 0.25, 0.5, 1, rng.Float64(), rng.Float64()} { // (-1: the median)
						median := q < 0
						lo, hi := QuantilePositions(median, q, n)
						stA, sorted := quantileSelectStates(kt, keys, rows, n, lo)
						stB, _ := quantileSelectStates(kt, keys, rows, n, hi)
						qb := make([]byte, 8)
						binary.LittleEndian.PutUint64(qb, math.Float64bits(max(q, 0)))
						sp := &QuantileSelect{In: kt, Out: out, Median: median}
						r := simAgree(t, sp, rows, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(stA), spectest.Buf(stB),
							spectest.Buf(flags), spectest.Buf(bytes.Repeat([]byte{0xa5}, rows*out.Size())), spectest.Buf(qb), // (poisoned: an unwritten result shows)
							spectest.U64(uint64(rows)), spectest.U64(uint64(n))})
						want := spectest.CPU(t, &QuantileGather{In: kt, Out: out, Median: median}, 1, SortBlock, []spectest.Arg{spectest.Buf(sorted),
							spectest.Buf(make([]byte, rows*out.Size())), spectest.Buf(qb), spectest.U64(uint64(rows)), spectest.U64(uint64(n)), spectest.U64(1)})
						if !bytes.Equal(r[4], want[1]) {
							t.Fatalf("%s q %v: the selection's results differ from the sort's at byte %d", sp.Key(), q, firstDiff(r[4], want[1]))
						}
					}
				}
			})
		}
	}
}

// The radix select with each row's k from the state (SelectHist.KState) on the
// simulator, pass by pass, against the CPU and a stable sort: rows of k 0 (left
// (0, 0)), 1, the row's length and others, several chunks a row, scalar and vector.
func TestSelectKStateSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 14))
	for _, c := range []struct {
		kt       dtype.DType
		rows, n  int
		chunk    int
		vector   bool
		items    int
		fixedKs  []int
		randRows int
	}{
		{dtype.Float32, 5, 1500, 512, true, 4, []int{0, 1, 1500, 750}, 1},
		{dtype.Float64, 3, 900, 1024, false, 2, []int{900, 0}, 1},
		{dtype.Int16, 3, 1100, 2048, false, 8, []int{1, 550}, 1},
		{dtype.Uint8, 4, 700, 256, false, 2, []int{0, 700, 350}, 1},
	} {
		if testenv.Race && c.kt != dtype.Float32 {
			continue
		}
		t.Run(fmt.Sprintf("%v/%dx%d", c.kt, c.rows, c.n), func(t *testing.T) {
			o := SortKey{Type: c.kt}
			ks := c.kt.Size()
			keys := sortSimKeys(rng, c.kt, c.rows*c.n)
			ksel := append([]int(nil), c.fixedKs...)
			for len(ksel) < c.rows {
				ksel = append(ksel, 1+rng.IntN(c.n))
			}
			state := make([]byte, c.rows*16)
			for r, k := range ksel {
				binary.LittleEndian.PutUint64(state[16*r+8:], uint64(k))
			}
			hist := &SelectHist{Order: o, Items: c.items, Vector: c.vector, Fused: true, KState: true}
			chunks := (c.n + c.chunk - 1) / c.chunk
			histB := make([]byte, c.rows*(RadixDigits+1)*4)
			for p := o.Passes() - 1; p >= 0; p-- {
				r := simAgree(t, hist, c.rows*chunks, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(histB), spectest.Buf(state),
					spectest.U64(uint64(c.n)), spectest.U64(uint64(c.chunk)), spectest.U64(uint64(chunks)), spectest.U64(uint64(p)), spectest.U64(0)})
				histB, state = r[1], r[2]
				if !checkZero(histB) {
					t.Fatal("select step left a histogram")
				}
			}
			for r, k := range ksel {
				want := make([]byte, 16)
				if k > 0 {
					want, _ = quantileSelectStates(c.kt, keys[r*c.n*ks:(r+1)*c.n*ks], 1, c.n, k-1)
				}
				if got := state[16*r : 16*r+16]; !bytes.Equal(got, want) {
					t.Fatalf("row %d, k %d: state %x, want %x", r, k, got, want)
				}
			}
		})
	}
}
