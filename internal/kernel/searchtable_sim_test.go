package kernel

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The bucket table (SearchTable) on the simulator and the CPU, and the search tree's
// walk that starts where the table's range allows (SearchTree.TableBits), against a
// binary search of the ordered keys: uniform keys (the interpolation fits: most levels
// skipped), keys with NaN, ±Inf and ties (the first or last element not finite: one
// range, the whole array), clustered keys (a few buckets hold most of them), one
// element, and an array that isn't sorted (its table checked on both; no search).
func TestSearchTableSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 7))
	for _, kt := range []dtype.DType{dtype.Float32, dtype.Int32, dtype.Uint32} {
		if testenv.Race && kt != dtype.Float32 {
			continue
		}
		o := SortKey{Type: kt}
		for _, c := range []struct {
			name   string
			m      int
			gen    func(n int) []byte
			sorted bool
		}{
			{"uniform", 33000, func(n int) []byte { return searchUniform(rng, kt, n) }, true},
			{"uniform", 4097, func(n int) []byte { return searchUniform(rng, kt, n) }, true},
			{"special", 4100, func(n int) []byte { return sortSimKeys(rng, kt, n) }, true},
			{"clustered", 5000, func(n int) []byte { return searchClustered(rng, kt, n) }, true},
			{"one", 1, func(n int) []byte { return searchUniform(rng, kt, n) }, true},
			{"unsorted", 3000, func(n int) []byte { return searchUniform(rng, kt, n) }, false},
		} {
			m := c.m
			keys := c.gen(m)
			ord := make([]uint64, m)
			for i := range ord {
				ord[i] = o.Ordered(loadRaw(keys, 4, i))
			}
			sorted := keys
			if c.sorted {
				idx := make([]int, m)
				for i := range idx {
					idx[i] = i
				}
				sort.SliceStable(idx, func(i, j int) bool { return ord[idx[i]] < ord[idx[j]] })
				sorted = make([]byte, 4*m)
				for i, k := range idx {
					storeRaw(sorted, 4, i, loadRaw(keys, 4, k))
				}
				sort.Slice(ord, func(i, j int) bool { return ord[i] < ord[j] })
			}
			for _, bits := range []int{4, 10} {
				tab := simAgree(t, &SearchTable{Order: o, Bits: bits}, 3, SortBlock,
					[]spectest.Arg{spectest.Buf(sorted), spectest.U64(uint64(m)), spectest.Buf(make([]byte, 4*SearchTableWords(bits)))})[2]
				if !c.sorted {
					continue
				}
				// The table's ranges: nondecreasing, from 0 to m, each bucket's elements
				// inside its range.
				w := func(b int) int { return int(binary.LittleEndian.Uint32(tab[4*(2+b):])) }
				f, sc := math.Float32frombits(binary.LittleEndian.Uint32(tab)), math.Float32frombits(binary.LittleEndian.Uint32(tab[4:]))
				if w(0) != 0 || w(1<<bits) != m {
					t.Fatalf("%v %s, m %d, %d bits: T[0] %d, T[B] %d", kt, c.name, m, bits, w(0), w(1<<bits))
				}
				for i := range m {
					b := searchTableBucket(bits, f, sc, searchTableValue(kt, loadRaw(sorted, 4, i)))
					if i < w(b) || i >= w(b+1) {
						t.Fatalf("%v %s, m %d, %d bits: element %d in bucket %d, range [%d, %d)", kt, c.name, m, bits, i, b, w(b), w(b+1))
					}
				}
				if c.name == "uniform" && bits == 10 && sc == 0 {
					t.Fatalf("%v uniform keys, m %d: scale 0", kt, m)
				}
				L := SearchTreeLevels(m)
				var sample []byte
				if L > 1 {
					sample = simAgree(t, &SearchTreeSample{Order: o, Levels: L}, 2, SortBlock,
						[]spectest.Arg{spectest.Buf(sorted), spectest.U64(uint64(m)), spectest.Buf(make([]byte, SearchTreeLayout(m)[L-1]*4))})[2]
				}
				n := 300
				q := append(c.gen(n-min(m, 100)), sorted[:min(m, 100)*4]...)
				for _, right := range []bool{false, true} {
					for _, sh := range []int{0, min(L-1, SearchTreeMaxShared(4))} {
						block := []int{256, 1024}[(m+sh+bits)%2]
						sp := &SearchTree{Order: o, Right: right, Levels: L, Shared: sh, Queries: 1 + (m+bits)%SearchTreeMaxQueries(4, block),
							Vector: sh > 0, Block: block, Swizzle: sh > 0, TableBits: bits}
						sampleArg := spectest.U64(0)
						if sample != nil {
							sampleArg = spectest.Buf(sample)
						}
						padded := append(sorted[:len(sorted):len(sorted)], make([]byte, 16-len(sorted)%16)...)
						out := simAgree(t, sp, 2, block, []spectest.Arg{spectest.Buf(padded), spectest.U64(uint64(m)),
							sampleArg, spectest.Buf(q), spectest.Buf(make([]byte, n*8)), spectest.U64(uint64(n)), spectest.Buf(tab)})[4]
						got := cpuSliceI64(out)
						for i := range n {
							v := o.Ordered(loadRaw(q, 4, i))
							want := sort.Search(m, func(j int) bool { return ord[j] >= v })
							if right {
								want = sort.Search(m, func(j int) bool { return ord[j] > v })
							}
							if got[i] != int64(want) {
								t.Fatalf("%s, %s m %d: query %d (%#x): %d, want %d", sp.Key(), c.name, m, i, v, got[i], want)
							}
						}
					}
				}
			}
		}
	}
}

// searchUniform returns n raw keys of type kt (float32, int32 or uint32) spread evenly
// over a range, with ties.
func searchUniform(rng *rand.Rand, kt dtype.DType, n int) []byte {
	b := make([]byte, 4*n)
	for i := range n {
		var r uint32
		switch kt {
		case dtype.Float32:
			r = math.Float32bits(float32(rng.Float64()*2000 - 1000))
		case dtype.Int32:
			r = uint32(int32(rng.IntN(1<<20) - 1<<19))
		default:
			r = uint32(rng.IntN(1 << 30))
		}
		if rng.IntN(16) == 0 && i > 0 {
			r = binary.LittleEndian.Uint32(b[4*(i-1):]) // a tie
		}
		binary.LittleEndian.PutUint32(b[4*i:], r)
	}
	return b
}

// searchClustered returns n raw keys, most of them in a narrow cluster, a few far out.
func searchClustered(rng *rand.Rand, kt dtype.DType, n int) []byte {
	b := searchUniform(rng, kt, n)
	for i := range n {
		if rng.IntN(20) == 0 {
			continue
		}
		v := binary.LittleEndian.Uint32(b[4*i:])
		switch kt {
		case dtype.Float32:
			v = math.Float32bits(math.Float32frombits(v) * 1e-4)
		case dtype.Int32:
			v = uint32(int32(v) >> 12)
		default:
			v >>= 12
		}
		binary.LittleEndian.PutUint32(b[4*i:], v)
	}
	return b
}
