package kernel

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// quantileSelectRows returns rows of n keys of kt for the selection's tests: random
// keys with NaNs, infinities and zeros (sortSimKeys), a row of few distinct keys
// (long runs of ties around every position), and for floats rows of all -0, all +0,
// mostly zeros of both signs (a middle position on a zero whose sign the scan finds)
// with a NaN-free and a NaN row, a row of NaNs alone (their payloads and signs
// differ), a row of one valid key among NaNs, and one mostly NaN.
func quantileSelectRows(rng *rand.Rand, kt dtype.DType, n int) (keys []byte, rows int) {
	ks := kt.Size()
	keys = sortSimKeys(rng, kt, 2*n)
	rows = 2
	add := func(gen func(i int) uint64) {
		row := make([]byte, n*ks)
		for i := range n {
			storeRaw(row, ks, i, gen(i))
		}
		keys = append(keys, row...)
		rows++
	}
	few := []uint64{0, 1, 2, 1 << (8*ks - 1), ^uint64(0) >> (64 - 8*ks)}
	if kt == dtype.Bool {
		few = []uint64{0, 1, 1}
	}
	add(func(int) uint64 { return few[rng.IntN(len(few))] }) // ties
	if !kt.IsFloat() {
		return keys, rows
	}
	sign := uint64(1) << (8*ks - 1)
	inf := floatInf(kt)
	nan := func() uint64 { return inf | 1 + uint64(rng.IntN(3)) | sign*uint64(rng.IntN(2)) } // payloads and signs
	add(func(int) uint64 { return sign })                                                    // all -0
	add(func(int) uint64 { return 0 })                                                       // all +0
	add(func(int) uint64 { return sign * uint64(rng.IntN(2)) })                              // mixed zeros
	add(func(i int) uint64 {                                                                 // mixed zeros, a few others
		switch rng.IntN(8) {
		case 0:
			return inf | sign*uint64(rng.IntN(2))
		case 1:
			return 1 | sign*uint64(rng.IntN(2)) // the smallest subnormals
		}
		return sign * uint64(rng.IntN(2))
	})
	add(func(i int) uint64 { // mixed zeros and a NaN
		if i == n/3 {
			return nan()
		}
		return sign * uint64(rng.IntN(2))
	})
	add(func(int) uint64 { return nan() }) // NaNs alone
	add(func(i int) uint64 {               // one valid key
		if i == n/2 {
			return sign | 3
		}
		return nan()
	})
	add(func(int) uint64 { // mostly NaN, then zeros, infinities and ties
		switch rng.IntN(6) {
		case 0:
			return sign * uint64(rng.IntN(2))
		case 1:
			return inf | sign*uint64(rng.IntN(2))
		case 2:
			return 0x3c // a tie
		}
		return nan()
	})
	return keys, rows
}

// quantileSelectStates returns the select's states for position pos(r) of each row r
// (what SelectHist leaves: the ordered key at that position of the stable ascending
// order and its tie rank; (0, 0) where pos is negative), and the rows sorted.
func quantileSelectStates(kt dtype.DType, keys []byte, rows, n int, pos func(r int) int) (state, sorted []byte) {
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
		p := pos(r)
		if p < 0 {
			continue
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

// quantileFlagsSim runs QuantileFlags (counts, next) on the simulator and the CPU over
// flags in chunks of chunk keys, and checks the counts it adds against a plain count
// (T of state for next) and, with counts, each chunk's zeros it stores (over poison;
// left alone without counts). It returns the flags and the chunks' zeros.
func quantileFlagsSim(t *testing.T, kt dtype.DType, keys []byte, rows, n int, counts, next bool, state, flags []byte, chunk int) (flagsOut, zeros []byte) {
	t.Helper()
	chunks := (n + chunk - 1) / chunk
	sp := &QuantileFlags{Type: kt, Counts: counts, Next: next}
	poison := bytes.Repeat([]byte{0xa5}, rows*chunks*4)
	r := simAgree(t, sp, rows*chunks, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(flags), spectest.Buf(state),
		spectest.U64(uint64(n)), spectest.U64(uint64(chunk)), spectest.U64(uint64(chunks)), spectest.Buf(poison)})
	ks := kt.Size()
	for row := range rows {
		for c := range chunks {
			want := binary.LittleEndian.Uint32(poison[4*(row*chunks+c):])
			if counts {
				want = 0
				for i := c * chunk; i < min(n, (c+1)*chunk); i++ {
					if loadRaw(keys, ks, row*n+i)&^(1<<(8*ks-1)) == 0 {
						want++
					}
				}
			}
			if got := binary.LittleEndian.Uint32(r[6][4*(row*chunks+c):]); got != want {
				t.Fatalf("%s: row %d: chunk %d of %d keys: %d zeros, want %d", sp.Key(), row, c, chunk, got, want)
			}
		}
	}
	o := SortKey{Type: kt}
	mask := ^uint64(0) >> (64 - 8*ks)
	got, before := cpuSliceI64(r[1]), cpuSliceI64(flags)
	for row := range rows {
		var want [QuantileFlagsWords]int64
		copy(want[:], before[row*QuantileFlagsWords:])
		var T uint64
		if next {
			T = binary.LittleEndian.Uint64(state[16*row:])
		}
		for i := range n {
			raw := loadRaw(keys, ks, row*n+i)
			ord := o.Ordered(raw)
			if counts {
				switch {
				case ord == mask && kt.IsFloat():
					want[0]++
				case raw == 1<<(8*ks-1):
					want[1]++
				case raw == 0:
					want[2]++
				}
			}
			if next {
				if ord <= T {
					want[3]++
				} else {
					want[4] = int64(max(uint64(want[4]), mask^ord))
				}
			}
		}
		if [QuantileFlagsWords]int64(got[row*QuantileFlagsWords:][:QuantileFlagsWords]) != want {
			t.Fatalf("%s: row %d: flags %v, want %v", sp.Key(), row, got[row*QuantileFlagsWords:][:QuantileFlagsWords], want)
		}
	}
	return r[1], r[6]
}

// The flags (Counts and Next, in one launch and in two), QuantileK and the finish on
// the simulator against the CPU; the flags against plain counts, the upper
// neighbour's state that the finish derives from them (quantileNext) against a
// stable sort's, and the finish's results against QuantileGather's of the sorted
// rows, bit for bit, with and without SkipNaN.
func TestQuantileSelectSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 12))
	var branches [2]int // quantileNext's: T's ties go on, the least key above T
	defer func() {
		if !t.Failed() && (branches[0] == 0 || branches[1] == 0) {
			t.Errorf("the upper neighbour's branches taken %v times: each should be", branches)
		}
	}()
	for _, kt := range []dtype.DType{dtype.Float32, dtype.Float64, dtype.Int32, dtype.Uint8, dtype.Bool, dtype.Int64, dtype.BFloat16, dtype.Float16} {
		if testenv.Race && kt != dtype.Float32 {
			continue
		}
		for ni, n := range []int{700, 1001} {
			if testing.Short() && ni != int(kt)%2 {
				continue
			}
			t.Run(fmt.Sprintf("%v/%d", kt, n), func(t *testing.T) {
				ks := kt.Size()
				mask := ^uint64(0) >> (64 - 8*ks)
				keys, rows := quantileSelectRows(rng, kt, n)
				float := kt.IsFloat()
				// Each row's NaNs (the sort's count: keys of the largest ordered key).
				nans := make([]int, rows)
				if float {
					for r := range rows {
						for i := range n {
							if (SortKey{Type: kt}).Ordered(loadRaw(keys, ks, r*n+i)) == mask {
								nans[r]++
							}
						}
					}
				}
				chunks := []int{100, 300, SortBlock * (&QuantileFlags{Type: kt}).Items(), n}
				for qi, q := range []float64{-1, 0, 0.25, 0.5, 1, rng.Float64(), rng.Float64()} { // (-1: the median)
					median := q < 0
					qb := make([]byte, 8)
					binary.LittleEndian.PutUint64(qb, math.Float64bits(max(q, 0)))
					for _, skip := range []bool{false, true} {
						if skip && !float {
							continue
						}
						m := func(r int) int {
							if skip {
								return n - nans[r]
							}
							return n
						}
						at := func(r int, up bool) int {
							if m(r) == 0 {
								return -1
							}
							lo, hi := QuantilePositions(median, max(q, 0), m(r))
							if up {
								return hi
							}
							return lo
						}
						stA, sorted := quantileSelectStates(kt, keys, rows, n, func(r int) int { return at(r, false) })
						stB, _ := quantileSelectStates(kt, keys, rows, n, func(r int) int { return at(r, true) })
						chunk := chunks[(qi+len(chunks)*ks)%len(chunks)]
						flags := make([]byte, rows*QuantileFlagsWords*8)
						var zeros []byte // (of the Counts launch, in chunks of chunk)
						if skip {
							// Two launches: the NaNs for QuantileK, then the counts around T.
							flags, zeros = quantileFlagsSim(t, kt, keys, rows, n, true, false, nil, flags, chunk)
							st := make([]byte, rows*16)
							for i := range st {
								st[i] = byte(rng.Uint32())
							}
							r := simAgree(t, &QuantileK{Median: median}, 1+rows%2, SortBlock, []spectest.Arg{spectest.Buf(flags), spectest.Buf(st),
								spectest.Buf(qb), spectest.U64(uint64(rows)), spectest.U64(uint64(n))})
							for row := range rows {
								want := [2]uint64{0, uint64(at(row, false) + 1)}
								if got := [2]uint64{binary.LittleEndian.Uint64(r[1][16*row:]), binary.LittleEndian.Uint64(r[1][16*row+8:])}; got != want {
									t.Fatalf("QuantileK q %v: row %d: state %v, want %v", q, row, got, want)
								}
							}
							flags, _ = quantileFlagsSim(t, kt, keys, rows, n, false, true, stA, flags, SortBlock*(&QuantileFlags{Type: kt}).Items())
						} else {
							flags, zeros = quantileFlagsSim(t, kt, keys, rows, n, float, true, stA, flags, chunk)
						}
						nch := (n + chunk - 1) / chunk
						// The upper neighbour's state from the counts.
						for row := range rows {
							lo, hi := at(row, false), at(row, true)
							if lo < 0 || hi == lo {
								continue
							}
							w := cpuSliceI64(flags)[row*QuantileFlagsWords:]
							T, rk := binary.LittleEndian.Uint64(stA[16*row:]), binary.LittleEndian.Uint64(stA[16*row+8:])
							gT, grk := quantileNext(T, rk, uint64(w[3]), uint64(w[4]), mask, hi)
							if grk == 1 {
								branches[1]++
							} else {
								branches[0]++
							}
							if wT, wrk := binary.LittleEndian.Uint64(stB[16*row:]), binary.LittleEndian.Uint64(stB[16*row+8:]); gT != wT || grk != wrk {
								t.Fatalf("q %v: row %d: position %d's state (%#x, %d), want (%#x, %d)", q, row, hi, gT, grk, wT, wrk)
							}
						}
						for _, out := range []dtype.DType{dtype.Float32, dtype.Float64} {
							sp := &QuantileSelect{In: kt, Out: out, Median: median, SkipNaN: skip}
							r := simAgree(t, sp, rows, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(stA), spectest.Buf(flags),
								spectest.Buf(bytes.Repeat([]byte{0xa5}, rows*out.Size())), spectest.Buf(qb), // (poisoned: an unwritten result shows)
								spectest.U64(uint64(rows)), spectest.U64(uint64(n)), spectest.Buf(zeros), spectest.U64(uint64(chunk)), spectest.U64(uint64(nch))})
							want := spectest.CPU(t, &QuantileGather{In: kt, Out: out, Median: median, SkipNaN: skip}, 1, SortBlock, []spectest.Arg{spectest.Buf(sorted),
								spectest.Buf(make([]byte, rows*out.Size())), spectest.Buf(qb), spectest.U64(uint64(rows)), spectest.U64(uint64(n)), spectest.U64(1)})
							if !bytes.Equal(r[3], want[1]) {
								t.Fatalf("%s q %v: the selection's results differ from the sort's at byte %d", sp.Key(), q, firstDiff(r[3], want[1]))
							}
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
				want, _ := quantileSelectStates(c.kt, keys[r*c.n*ks:(r+1)*c.n*ks], 1, c.n, func(int) int { return k - 1 })
				if got := state[16*r : 16*r+16]; !bytes.Equal(got, want) {
					t.Fatalf("row %d, k %d: state %x, want %x", r, k, got, want)
				}
			}
		})
	}
}

// The finish's search for the r-th zero of a row of mixed zeros through the chunks'
// zero counts, on the simulator against the CPU and QuantileGather of the sorted row:
// the zero in the first chunk, in the last (a chunk of one key), the first key of a
// chunk, the median's two zeros on either side of a chunk boundary and in chunks far
// apart with chunks of no zeros between, more than 256 chunks (several steps of the
// search: a chunk of 2 keys, of 1), and one chunk a row. The row's negatives put
// the median on the wanted zero; the wanted zeros are -0 and every other +0 (then
// the other way round), so that a neighbouring zero shows in the result's sign.
func TestQuantileSelectZerosSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 15))
	span := func(lo, hi, step int) []int { // lo, lo+step, ... below hi
		var s []int
		for i := lo; i < hi; i += step {
			s = append(s, i)
		}
		return s
	}
	cat := func(ss ...[]int) []int { return slices.Concat(ss...) }
	for _, c := range []struct {
		name    string
		kt      dtype.DType
		n       int
		chunk   int
		zeros   []int // the zeros' indices, ascending
		rank    int   // the lower middle's zero (1-based, in index order)
		chunkAt [2]int
	}{
		{"first", dtype.Float32, 641, 64, span(10, 41, 1), 5, [2]int{0, 0}},
		{"last", dtype.Float32, 641, 64, span(610, 641, 1), 31, [2]int{10, 10}},
		{"chunkstart", dtype.Float64, 641, 64, span(120, 141, 1), 9, [2]int{2, 2}},
		{"boundary", dtype.Float32, 640, 64, span(100, 151, 1), 28, [2]int{1, 2}},
		{"gap", dtype.Float16, 640, 64, cat(span(60, 64, 1), span(600, 611, 1)), 4, [2]int{0, 9}},
		{"steps", dtype.Float32, 1101, 2, cat(span(0, 40, 3), span(700, 1101, 5)), 30, [2]int{387, 387}},
		{"stepgap", dtype.BFloat16, 1100, 2, cat(span(0, 40, 3), []int{511, 700}, span(900, 1000, 4)), 15, [2]int{255, 350}},
		{"ones", dtype.Float32, 301, 1, span(0, 301, 1), 151, [2]int{150, 150}},
		{"onechunk", dtype.Float64, 700, 700, span(0, 700, 2), 200, [2]int{0, 0}},
	} {
		t.Run(c.name, func(t *testing.T) {
			kt, n, ks := c.kt, c.n, c.kt.Size()
			sign := uint64(1) << (8*ks - 1)
			lo, hi := QuantilePositions(true, 0, n)
			if hi != lo && c.rank == len(c.zeros) {
				t.Fatal("the upper middle is no zero")
			}
			nch := (n + c.chunk - 1) / c.chunk
			for j, want := range c.chunkAt {
				if hi == lo && j == 1 {
					break
				}
				if got := c.zeros[c.rank-1+j] / c.chunk; got != want {
					t.Fatalf("the middle's zero %d in chunk %d of %d, want %d", j, got, nch, want)
				}
			}
			// The negatives that put the lower middle on the zero of that rank.
			neg := lo - (c.rank - 1)
			isZero := make([]bool, n)
			for _, i := range c.zeros {
				isZero[i] = true
			}
			var others []int
			for i := range n {
				if !isZero[i] {
					others = append(others, i)
				}
			}
			if neg < 0 || neg > len(others) {
				t.Fatalf("%d negatives of %d other keys", neg, len(others))
			}
			rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
			one := SortKey{Type: kt}.Unordered(SortKey{Type: kt}.Ordered(0) + 1) // the smallest positive
			for _, flip := range []bool{false, true} {
				keys := make([]byte, n*ks)
				for k, i := range others {
					x := one + uint64(rng.IntN(100))
					if k < neg {
						x |= sign
					}
					storeRaw(keys, ks, i, x)
				}
				for k, i := range c.zeros {
					wanted := k == c.rank-1 || hi != lo && k == c.rank
					if wanted != flip {
						storeRaw(keys, ks, i, sign)
					}
				}
				st, sorted := quantileSelectStates(kt, keys, 1, n, func(int) int { return lo })
				if T, rk := binary.LittleEndian.Uint64(st), binary.LittleEndian.Uint64(st[8:]); T != sign || rk != uint64(c.rank) {
					t.Fatalf("the lower middle's state (%#x, %d), want the zero's (%#x, %d)", T, rk, sign, c.rank)
				}
				flags, zeros := quantileFlagsSim(t, kt, keys, 1, n, true, hi != lo, st, make([]byte, QuantileFlagsWords*8), c.chunk)
				out := dtype.Float64
				r := simAgree(t, &QuantileSelect{In: kt, Out: out, Median: true}, 1, SortBlock, []spectest.Arg{spectest.Buf(keys), spectest.Buf(st),
					spectest.Buf(flags), spectest.Buf(bytes.Repeat([]byte{0xa5}, out.Size())), spectest.Buf(nil),
					spectest.U64(1), spectest.U64(uint64(n)), spectest.Buf(zeros), spectest.U64(uint64(c.chunk)), spectest.U64(uint64(nch))})
				want := spectest.CPU(t, &QuantileGather{In: kt, Out: out, Median: true}, 1, SortBlock, []spectest.Arg{spectest.Buf(sorted),
					spectest.Buf(make([]byte, out.Size())), spectest.Buf(nil), spectest.U64(1), spectest.U64(uint64(n)), spectest.U64(1)})
				if !bytes.Equal(r[3], want[1]) {
					t.Fatalf("flip %v: median %#x, the sort's %#x", flip, r[3], want[1])
				}
				if got, wantNeg := math.Signbit(math.Float64frombits(binary.LittleEndian.Uint64(r[3]))), !flip; got != wantNeg {
					t.Fatalf("flip %v: median %#x: sign %v, want %v", flip, r[3], got, wantNeg)
				}
			}
		})
	}
}
