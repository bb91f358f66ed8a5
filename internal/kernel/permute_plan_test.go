package kernel

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/go-gpu/gpu/internal/testenv"
)

// pmContiguous returns the output shape and strides of the permutation axes of a
// contiguous array of the shape (numpy.transpose made contiguous) and the input
// strides per output dimension.
func pmContiguous(shape, axes []int) (oshape, ostr, istr []int) {
	r := len(shape)
	st := make([]int, r)
	for k, n := r-1, 1; k >= 0; k-- {
		st[k], n = n, n*shape[k]
	}
	oshape, istr, ostr = make([]int, r), make([]int, r), make([]int, r)
	for i, a := range axes {
		oshape[i], istr[i] = shape[a], st[a]
	}
	for k, n := r-1, 1; k >= 0; k-- {
		ostr[k], n = n, n*oshape[k]
	}
	return oshape, ostr, istr
}

// pmPerms returns every permutation of 0..r-1.
func pmPerms(r int) [][]int {
	if r == 0 {
		return [][]int{{}}
	}
	var out [][]int
	for _, p := range pmPerms(r - 1) {
		for i := 0; i <= len(p); i++ {
			out = append(out, append(append(append([]int{}, p[:i]...), r-1), p[i:]...))
		}
	}
	return out
}

// TestPlanPermute checks which tiled kernel each variant runs on gpubench's
// permutedims rows (H200: 132 SMs): variant 3 changes only the shapes with a short
// side (the 4d rows, the 3d row at Metal.jl's size), and moves 16 elements per thread
// in 16-byte accesses on the 4d/16k row and its inverse.
func TestPlanPermute(t *testing.T) {
	const sms = 132
	for _, c := range []struct {
		shape, axes []int
		size        int
		v2, v3      string // kernel keys; v3 "" is v2's
	}{
		{[]int{32, 32, 16, 16384}, []int{1, 0, 3, 2}, 4, "permute|s4|r4|b2|32x16|i64=false|v2|vec2", "permute|s4|r4|b2|256x16|i64=false|v3|vec4"},
		{[]int{32, 32, 16384, 16}, []int{1, 0, 3, 2}, 4, "permute|s4|r4|b2|16x32|i64=false|v2|vec2", "permute|s4|r4|b2|16x256|i64=false|v3|vec4"},
		{[]int{32, 32, 16, 16384}, []int{1, 0, 3, 2}, 8, "permute|s8|r4|b2|16x16|i64=false|v2|vec1", "permute|s8|r4|b2|128x16|i64=false|v3|vec2"},
		{[]int{32, 32, 16, 16384}, []int{1, 0, 3, 2}, 1, "permute|s1|r4|b2|32x16|i64=false|v2|vec2", "permute|s1|r4|b2|256x16|i64=false|v3|vec4"},
		{[]int{16384, 16384}, []int{1, 0}, 4, "permute|s4|r2|b0|64x64|i64=false|v2|vec4", ""},
		{[]int{128, 128, 16384}, []int{1, 2, 0}, 4, "permute|s4|r2|b0|64x64|i64=false|v2|vec4", ""},
		{[]int{1000, 512}, []int{1, 0}, 4, "permute|s4|r2|b0|32x32|i64=false|v2|vec4", ""},
		{[]int{25, 40, 512}, []int{1, 2, 0}, 4, "permute|s4|r2|b0|64x32|i64=false|v2|vec1", "permute|s4|r2|b0|64x32|i64=false|v3|vec1"},
		{[]int{10, 10, 10, 512}, []int{1, 0, 3, 2}, 4, "permute|s4|r4|b2|32x16|i64=false|v2|vec2", "permute|s4|r4|b2|128x16|i64=false|v3|vec2"},
		{[]int{1 << 20, 3}, []int{1, 0}, 4, "permute|s4|r2|b0|16x32|i64=false|v2|vec1", "permute|s4|r2|b0|4x256|i64=false|v3|vec1"},
		{[]int{3, 1 << 20}, []int{1, 0}, 4, "permute|s4|r2|b0|32x16|i64=false|v2|vec1", "permute|s4|r2|b0|256x4|i64=false|v3|vec1"},
		{[]int{1 << 20, 33}, []int{1, 0}, 4, "permute|s4|r2|b0|64x64|i64=false|v2|vec1", ""},
		{[]int{3, 1 << 20}, []int{0, 1}, 4, "", ""}, // a plain copy: the innermost dimension stays
	} {
		oshape, ostr, istr := pmContiguous(c.shape, c.axes)
		key := func(variant int) string {
			cs, ci, b, tiled := PermuteDims(oshape, ostr, istr)
			if !tiled {
				return ""
			}
			return PlanPermute(cs, ci, b, c.size, variant, sms, 256).Key()
		}
		if c.v3 == "" {
			c.v3 = c.v2
		}
		if v2, v3 := key(2), key(3); v2 != c.v2 || v3 != c.v3 {
			t.Errorf("%v %v (%d bytes): variant 2 %q, 3 %q; want %q, %q", c.shape, c.axes, c.size, v2, v3, c.v2, c.v3)
		}
	}
	// Misaligned addresses narrow the vectors.
	oshape, ostr, istr := pmContiguous([]int{32, 32, 16, 16384}, []int{1, 0, 3, 2})
	cs, ci, b, _ := PermuteDims(oshape, ostr, istr)
	for addrs, want := range map[uint64]string{8: "permute|s4|r4|b2|256x16|i64=false|v3|vec2", 4: "permute|s4|r4|b2|256x16|i64=false|v3|vec1"} {
		if got := PlanPermute(cs, ci, b, 4, 3, sms, 1<<20|addrs).Key(); got != want {
			t.Errorf("addresses aligned to %d bytes: %q, want %q", addrs, got, want)
		}
	}
}

// TestPermutePlansSim runs the third kernel on the simulator, side by side with the
// CPU's gather, as variant 3 plans it for the permutations of the root package's
// permute tests (permute_test.go, permute_short_test.go): pmShapes under every axis
// order up to rank 4 and six random ones above, Metal.jl's cases, 1- to 8-byte
// elements, with the grid rule on (132 SMs) and off (1 SM: the largest tiles).
// Dimensions above 40 shrink to 36-39 (the same remainder modulo 4, still above 32)
// so that the simulator is quick; TestPermuteV3Sim covers tiles repeated along the
// long side. Each tile and vector width runs its smallest case, and without -short
// every float32 case on 132 SMs (what the H200 runs); under the race detector, eight
// cases.
func TestPermutePlansSim(t *testing.T) {
	rng := rand.New(rand.NewPCG(65, 66))
	type pcase struct {
		shape, axes []int
	}
	var cases []pcase
	for _, sh := range [][]int{
		{1}, {33},
		{1, 1}, {7, 5}, {64, 64}, {65, 63}, {1000, 512}, {3, 2000}, {2000, 3}, {17, 300}, {129, 16},
		{4, 1, 6}, {25, 40, 512}, {40, 9, 70}, {3, 130, 5},
		{10, 10, 10, 512}, {5, 6, 7, 8}, {2, 1, 33, 65},
		{3, 4, 5, 6, 7}, {2, 3, 1, 4, 5, 6}, {2, 3, 2, 3, 2, 3, 5}, {2, 2, 3, 1, 2, 3, 2, 5},
		{300, 70}, {3, 50, 40}, {70, 300},
	} {
		if len(sh) <= 4 {
			for _, ax := range pmPerms(len(sh)) {
				cases = append(cases, pcase{sh, ax})
			}
			continue
		}
		for range 6 {
			cases = append(cases, pcase{sh, rng.Perm(len(sh))})
		}
	}
	for _, c := range []pcase{
		{[]int{25, 40, 512}, []int{1, 2, 0}},
		{[]int{10, 10, 10, 512}, []int{1, 0, 3, 2}},
		{[]int{1025, 2049}, []int{1, 0}},
		{[]int{1028, 2052}, []int{1, 0}},
		{[]int{20, 4, 36, 1000}, []int{3, 1, 0, 2}},
		{[]int{24, 40}, []int{1, 0}},
		// permute_short_test.go's.
		{[]int{3, 2, 16, 1000}, []int{1, 0, 3, 2}},
		{[]int{3, 2, 1000, 16}, []int{1, 0, 3, 2}},
		{[]int{2, 10, 1030}, []int{0, 2, 1}},
		{[]int{2, 1030, 10}, []int{0, 2, 1}},
		{[]int{25, 40, 300}, []int{1, 2, 0}},
		{[]int{3, 5000}, []int{1, 0}},
		{[]int{5000, 3}, []int{1, 0}},
		{[]int{2, 3000}, []int{1, 0}},
		{[]int{8, 700}, []int{1, 0}},
		{[]int{4, 1100}, []int{1, 0}},
		{[]int{32, 300}, []int{1, 0}},
		{[]int{300, 32}, []int{1, 0}},
		{[]int{17, 20, 30}, []int{0, 2, 1}},
		{[]int{7, 16, 300}, []int{2, 0, 1}},
	} {
		cases = append(cases, c)
	}
	type run struct {
		sp           *Permute
		cshape, cist []int
		n            int
		real         bool // float32 on 132 SMs: what gpubench's H200 runs
	}
	seen := map[string]bool{}
	var runs []run
	for _, c := range cases {
		sh := append([]int(nil), c.shape...)
		for i, d := range sh {
			if d > 40 {
				sh[i] = 36 + d%4
			}
		}
		oshape, ostr, istr := pmContiguous(sh, c.axes)
		cs, ci, b, tiled := PermuteDims(oshape, ostr, istr)
		if !tiled {
			continue
		}
		n := pmElems(cs)
		for _, sz := range []int{1, 2, 4, 8} {
			for _, sms := range []int{1, 132} {
				sp := PlanPermute(cs, ci, b, sz, 3, sms, 256)
				if !sp.V3 {
					continue
				}
				k := fmt.Sprint(sp.Key(), cs, ci)
				if seen[k] {
					continue
				}
				seen[k] = true
				runs = append(runs, run{sp, cs, ci, n, sz == 4 && sms == 132})
			}
		}
	}
	// Each tile and vector's smallest case, and without -short every float32 case on
	// 132 SMs; under the race detector, a few only.
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].n < runs[j].n })
	keys := map[string]bool{}
	k := 0
	for _, r := range runs {
		tile := fmt.Sprintf("s%d|%dx%d|vec%d", r.sp.Size, r.sp.TB, r.sp.TA, r.sp.Vec)
		if !keys[tile] || r.real && !testing.Short() {
			keys[tile] = true
			runs[k] = r
			k++
		}
	}
	runs = runs[:k]
	if testenv.Race && len(runs) > 8 {
		runs = runs[:8]
	}
	if len(runs) < 8 {
		t.Fatalf("%d cases run the third kernel, want the plans to pick it often", len(runs))
	}
	t.Logf("%d cases", len(runs))
	for _, r := range runs {
		pmSimCase(t, rng, r.sp, r.sp.Size, r.cshape, r.cist)
	}
}
