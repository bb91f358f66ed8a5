package kernel

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim/spectest"
	"github.com/go-gpu/gpu/internal/testenv"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// The search tree (SearchTreeSample, SearchTree) on the simulator and the CPU, against
// a binary search of the ordered keys: sizes around the levels' edges, both sides,
// queries between, on and past the array's keys, ties, NaN and ±0; the shared levels
// laid out plainly and swizzled.
func TestSearchTreeSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(31, 5))
	for _, kt := range []dtype.DType{dtype.Float32, dtype.Int8, dtype.Float64, dtype.Uint16, dtype.Int64, dtype.Uint32} {
		if testenv.Race && kt != dtype.Float32 {
			continue
		}
		o := SortKey{Type: kt}
		ks := kt.Size()
		ms := []int{1, 3, 8, 9, 64, 65, 512, 600}
		if kt == dtype.Float32 {
			// 5 levels, 4 of them in shared memory; 6 levels, 5 shared (dynamic); full
			// trees of 4 and 6 levels, whose shared levels fill their static bound (a
			// partial last group of eight 16-byte chunks, which the swizzle maps past
			// the staged entries)
			ms = append(ms, 4097, 33000, 4096, 262144)
		}
		if kt == dtype.Int64 {
			ms = append(ms, 4096) // a full tree of 8-byte keys, 3 shared levels
		}
		for _, m := range ms {
			keys := sortSimKeys(rng, kt, m)
			ord := make([]uint64, m)
			for i := range ord {
				ord[i] = o.Ordered(loadRaw(keys, ks, i))
			}
			sort.Slice(ord, func(i, j int) bool { return ord[i] < ord[j] })
			// The sorted keys (any raw form of each ordered key: the first found).
			sorted := make([]byte, m*ks)
			raw := map[uint64]uint64{}
			for i := 0; i < m; i++ {
				raw[o.Ordered(loadRaw(keys, ks, i))] = loadRaw(keys, ks, i)
			}
			for i, v := range ord {
				storeRaw(sorted, ks, i, raw[v])
			}
			n := 300
			q := append(sortSimKeys(rng, kt, n-min(m, 100)), sorted[:min(m, 100)*ks]...)
			// The type's largest and smallest raw keys among the queries (on the right,
			// the largest counts the pair loads' filler past the array's end, which the
			// clamp to m takes back).
			hi, lo := ^uint64(0)>>(64-8*ks), uint64(0)
			if kt.IsSigned() || kt.IsFloat() {
				hi, lo = hi>>1, hi>>1+1
			}
			storeRaw(q, ks, 0, hi)
			storeRaw(q, ks, 1, lo)
			L := SearchTreeLevels(m)
			var sample []byte
			if L > 1 {
				sample = simAgree(t, &SearchTreeSample{Order: o, Levels: L}, 2, SortBlock,
					[]spectest.Arg{spectest.Buf(sorted), spectest.U64(uint64(m)), spectest.Buf(make([]byte, SearchTreeLayout(m)[L-1]*searchPivotSize(ks)))})[2]
			}
			for _, right := range []bool{false, true} {
				for _, sh := range []int{0, min(L-1, SearchTreeShared), min(L-1, SearchTreeMaxShared(ks))} {
					for _, cfg := range []struct{ vec, swizzle, pair bool }{{false, false, false}, {true, false, false}, {false, true, false}, {true, true, false}, {true, false, true}, {true, true, true}} {
						vec := cfg.vec
						if vec && ks != 4 && ks != 8 || cfg.swizzle && sh == 0 {
							continue
						}
						block := []int{256, 512, 1024}[(m+sh)%3]
						sp := &SearchTree{Order: o, Right: right, Levels: L, Shared: sh, Queries: 1 + (m+sh+3*ks)%SearchTreeMaxQueries(ks, block), Vector: vec, Block: block,
							Swizzle: cfg.swizzle, Hints: (m + sh + ks) % 5, Pair: cfg.pair}
						sampleArg := spectest.U64(0)
						if sample != nil {
							sampleArg = spectest.Buf(sample)
						}
						// (padded to a multiple of 16 bytes: such allocations are 16-byte aligned)
						padded := append(sorted[:len(sorted):len(sorted)], make([]byte, 16-len(sorted)%16)...)
						out := simAgree(t, sp, 1, block, []spectest.Arg{spectest.Buf(padded), spectest.U64(uint64(m)),
							sampleArg, spectest.Buf(q), spectest.Buf(make([]byte, n*8)), spectest.U64(uint64(n))})[4]
						got := cpuSliceI64(out)
						for i := range n {
							v := o.Ordered(loadRaw(q, ks, i))
							want := sort.Search(m, func(j int) bool { return ord[j] >= v })
							if right {
								want = sort.Search(m, func(j int) bool { return ord[j] > v })
							}
							if got[i] != int64(want) {
								t.Fatalf("%s, m %d: query %d (%#x): %d, want %d", sp.Key(), m, i, v, got[i], want)
							}
						}
					}
				}
			}
		}
	}
}

// The cache hints need compute capability 8.0 (createpolicy, .L2::cache_hint): the
// PTX for sm_75 has none and assembles for it; the PTX for sm_90 has them.
func TestSearchTreeHintsTargets(t *testing.T) {
	for h := 1; h <= 4; h++ {
		sp := &SearchTree{Order: SortKey{Type: dtype.Float32}, Levels: 8, Shared: 4, Queries: 2, Vector: true, Hints: h}
		old, _, err := sp.PTX(7, 5)
		if err != nil {
			t.Fatal(err)
		}
		cur, _, err := sp.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(old, "createpolicy") || strings.Contains(old, "cache_hint") || strings.Contains(old, "no_allocate") {
			t.Errorf("%s: cache hints in the PTX for sm_75", sp.Key())
		}
		if !strings.Contains(cur, "createpolicy") || !strings.Contains(cur, "L2::cache_hint") {
			t.Errorf("%s: no cache hints in the PTX for sm_90", sp.Key())
		}
		p := testenv.Ptxas(t)
		dir := t.TempDir()
		in := filepath.Join(dir, "m.ptx")
		if err := os.WriteFile(in, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(p, "-arch=sm_75", in, "-o", filepath.Join(dir, "m.cubin")).CombinedOutput(); err != nil {
			t.Errorf("%s for sm_75: %v\n%s", sp.Key(), err, b)
		}
	}
}
