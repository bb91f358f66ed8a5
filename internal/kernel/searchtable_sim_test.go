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
// element, and an array that isn't sorted (the answers arbitrary, but the same on the
// simulator and the CPU); queries between, on and past the array's keys, its first
// and last elements among them.
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
			for _, bits := range []int{4, 10, 15} {
				tab := simAgree(t, &SearchTable{Order: o, Bits: bits}, 3, SortBlock,
					[]spectest.Arg{spectest.Buf(sorted), spectest.U64(uint64(m)), spectest.Buf(make([]byte, 4*SearchTableWords(bits)))})[2]
				// The table's ranges: nondecreasing, from 0 to m, each bucket's elements
				// inside its range.
				w := func(b int) int { return int(binary.LittleEndian.Uint32(tab[4*(2+b):])) }
				f, sc := math.Float32frombits(binary.LittleEndian.Uint32(tab)), math.Float32frombits(binary.LittleEndian.Uint32(tab[4:]))
				if c.sorted && (w(0) != 0 || w(1<<bits) != m) {
					t.Fatalf("%v %s, m %d, %d bits: T[0] %d, T[B] %d", kt, c.name, m, bits, w(0), w(1<<bits))
				}
				for b := 0; c.sorted && b < 1<<bits; b++ {
					if w(b) > w(b+1) {
						t.Fatalf("%v %s, m %d, %d bits: T[%d] %d > T[%d] %d", kt, c.name, m, bits, b, w(b), b+1, w(b+1))
					}
				}
				for i := 0; c.sorted && i < m; i++ {
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
				// Queries: new keys, the first and last 50 elements, keys past the last
				// (the answers m), NaN for floats.
				n := 300
				q := append(c.gen(n-min(m, 50)-min(m, 50)-3), sorted[:min(m, 50)*4]...)
				q = append(q, sorted[(m-min(m, 50))*4:]...)
				for _, raw := range [][4]byte{searchPast(sorted, kt, m, 1), searchPast(sorted, kt, m, 1000), {0x00, 0x00, 0xc0, 0x7f}} {
					q = append(q, raw[:]...)
				}
				for _, right := range []bool{false, true} {
					// The table staged in shared memory beside no shared level or all
					// of them, and read from global memory (TableGlobal) beside none
					// or all; tables of more than SearchTableMaxBits bits only so.
					for k, sh := range []int{0, min(L-1, SearchTreeMaxShared(4)), 0, min(L-1, SearchTreeMaxShared(4))} {
						global := k >= 2
						if !global && bits > SearchTableMaxBits {
							continue
						}
						block := []int{256, 1024}[(m+sh+bits)%2]
						sp := &SearchTree{Order: o, Right: right, Levels: L, Shared: sh, Queries: 1 + (m+bits+k)%min(SearchTreeTableQueries, SearchTreeMaxQueries(4, block)),
							Vector: (k+bits/2)%2 == 0, Block: block, Swizzle: sh > 0 && right, TableBits: bits, TableGlobal: global, Hints: (k + bits) % 5}
						sampleArg := spectest.U64(0)
						if sample != nil {
							sampleArg = spectest.Buf(sample)
						}
						padded := append(sorted[:len(sorted):len(sorted)], make([]byte, 16-len(sorted)%16)...)
						out := simAgree(t, sp, 2, block, []spectest.Arg{spectest.Buf(padded), spectest.U64(uint64(m)),
							sampleArg, spectest.Buf(q), spectest.Buf(make([]byte, n*8)), spectest.U64(uint64(n)), spectest.Buf(tab)})[4]
						got := cpuSliceI64(out)
						for i := 0; c.sorted && i < n; i++ {
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

// searchPast returns a raw key of type kt above the last of the m sorted keys (by d
// for integers, by a factor for finite floats), the last itself where there is none.
func searchPast(sorted []byte, kt dtype.DType, m, d int) [4]byte {
	last := binary.LittleEndian.Uint32(sorted[4*(m-1):])
	var r [4]byte
	switch kt {
	case dtype.Float32:
		if v := math.Float32frombits(last); !math.IsNaN(float64(v)) && !math.IsInf(float64(v), 0) {
			last = math.Float32bits(float32(math.Abs(float64(v))*1.5 + float64(d)))
		}
	case dtype.Int32:
		if int64(int32(last))+int64(d) <= math.MaxInt32 {
			last = uint32(int32(last) + int32(d))
		}
	default:
		if uint64(last)+uint64(d) <= math.MaxUint32 {
			last += uint32(d)
		}
	}
	binary.LittleEndian.PutUint32(r[:], last)
	return r
}

// The table makes the search skip levels: int32 keys i/8 (each value 8 times, m 4096,
// 4 levels), 512 buckets (bucket(v) = v: the range of v is [8v, 8v+8]), so that a
// query v with v%8 != 7 needs level 1 and the array alone. The sample's levels 2 and 3
// poisoned (in global and in shared memory), its answers stay right with the table and
// go wrong without it.
func TestSearchTableSkips(t *testing.T) {
	const m, bits = 4096, 9
	o := SortKey{Type: dtype.Int32}
	sorted := make([]byte, 4*m)
	for i := range m {
		binary.LittleEndian.PutUint32(sorted[4*i:], uint32(i/8))
	}
	L := SearchTreeLevels(m)
	sample := simAgree(t, &SearchTreeSample{Order: o, Levels: L}, 2, SortBlock,
		[]spectest.Arg{spectest.Buf(sorted), spectest.U64(m), spectest.Buf(make([]byte, SearchTreeLayout(m)[L-1]*4))})[2]
	for i := 4 * SearchTreeLayout(m)[1]; i < len(sample); i++ { // levels 2 and up
		sample[i] = 0x5a
	}
	tab := simAgree(t, &SearchTable{Order: o, Bits: bits}, 2, SortBlock,
		[]spectest.Arg{spectest.Buf(sorted), spectest.U64(m), spectest.Buf(make([]byte, 4*SearchTableWords(bits)))})[2]
	var q []byte
	for v := range 512 {
		if v%8 != 7 {
			q = binary.LittleEndian.AppendUint32(q, uint32(v))
		}
	}
	n := len(q) / 4
	for _, right := range []bool{false, true} {
		for k, sh := range []int{0, L - 1, 0} {
			for _, table := range []int{bits, 0} {
				global := k == 2 && table != 0
				sp := &SearchTree{Order: o, Right: right, Levels: L, Shared: sh, Queries: 2, Vector: true, Block: 256, TableBits: table, TableGlobal: global}
				args := []spectest.Arg{spectest.Buf(sorted), spectest.U64(m), spectest.Buf(sample), spectest.Buf(q),
					spectest.Buf(make([]byte, 8*n)), spectest.U64(uint64(n))}
				if table != 0 {
					args = append(args, spectest.Buf(tab))
				}
				got := cpuSliceI64(simAgree(t, sp, 2, 256, args)[4])
				wrong := 0
				for i := range n {
					v := int64(binary.LittleEndian.Uint32(q[4*i:]))
					want := 8 * v
					if right {
						want += 8
					}
					if got[i] != want {
						wrong++
					}
				}
				if table != 0 && wrong > 0 {
					t.Errorf("%s: %d of %d answers wrong with the sample's levels 2 and 3 poisoned (they should be skipped)", sp.Key(), wrong, n)
				}
				if table == 0 && wrong == 0 {
					t.Errorf("%s: the poisoned sample gave every answer right without the table: the test shows nothing", sp.Key())
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
