package kernel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// fuseCases are split reductions (H200: 132 multiprocessors, 6 blocks each) of every
// operation kind and strategy shape.
func fuseCases() []struct {
	name  string
	base  Reduce
	shape []int
	axes  []int
} {
	f32 := []dtype.DType{dtype.Float32}
	type tc = struct {
		name  string
		base  Reduce
		shape []int
		axes  []int
	}
	return []tc{
		{"2^28 f32 sum", Reduce{Op: OpSum, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, []int{1 << 28}, nil},
		{"512x1000 f32 sum", Reduce{Op: OpSum, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, []int{512, 1000}, nil},
		{"512x1000 f32 sum axis 0", Reduce{Op: OpSum, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, []int{512, 1000}, []int{0}},
		{"(1e6, 3) axis 0 f64 mean", Reduce{Op: OpSum, Pre: PreConvert, Ins: f32, Acc: dtype.Float64, Mean: true}, []int{1000000, 3}, []int{0}},
		{"2^24 argmax", Reduce{Op: OpArgMax, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, []int{1 << 24}, nil},
		{"(1000, 512) axis 0 argmin f64", Reduce{Op: OpArgMin, Pre: PreConvert, Ins: []dtype.DType{dtype.Float64}, Acc: dtype.Float64}, []int{1000, 512}, []int{0}},
		{"2^26 int32 sum", Reduce{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{dtype.Int32}, Acc: dtype.Int64}, []int{1 << 26}, nil},
		{"2^26 max", Reduce{Op: OpMax, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, []int{1 << 26}, nil},
		{"(3, 2^22) axis 1 sum", Reduce{Op: OpSum, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, []int{3, 1 << 22}, []int{1}},
		{"(10, 2^22) axis 1 argmax", Reduce{Op: OpArgMax, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, []int{10, 1 << 22}, []int{1}},
		{"2^26 any", Reduce{Op: OpOr, Pre: PreConvert, Ins: []dtype.DType{dtype.Bool}, Acc: dtype.Bool}, []int{1 << 26}, nil},
	}
}

// TestReduceFusedAssembles compiles the fused kernels of split plans with ptxas: no
// errors, no spills; it logs their registers against the partial pass's.
func TestReduceFusedAssembles(t *testing.T) {
	occ := func(*Reduce) int { return 6 }
	mods := map[string]string{}
	var pairs [][3]string
	for _, c := range fuseCases() {
		l := contiguousLayout(c.shape, c.axes, !c.base.Op.IsArg())
		ps := PlanReduce(c.base, l, []bool{true}, 132, DefaultReduceTuning, occ)
		if len(ps) != 2 {
			t.Fatalf("%s: %d passes", c.name, len(ps))
		}
		fp, n, ok := FuseReduce(ps[0], ps[1])
		if !ok {
			t.Fatalf("%s: doesn't fuse (%+v then %+v)", c.name, ps[0].Spec.GPU, ps[1].Spec.GPU)
		}
		if err := fp.Spec.Validate(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n != ps[0].GridX {
			t.Errorf("%s: %d counters for %d tiles", c.name, n, ps[0].GridX)
		}
		for _, r := range []*Reduce{ps[0].Spec, fp.Spec} {
			src, entry, err := r.PTX(9, 0)
			if err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
			mods[entry] = src
		}
		pairs = append(pairs, [3]string{c.name, ps[0].Spec.EntryName(), fp.Spec.EntryName()})
		// and with 64-bit indexing in both passes
		fin := *fp.Spec.Final
		fin.Index64 = true
		sp := *fp.Spec
		sp.Index64, sp.Final = true, &fin
		src, entry, err := sp.PTX(9, 0)
		if err != nil {
			t.Fatalf("%s index64: %v", c.name, err)
		}
		mods[entry] = src
	}
	regs := redAssemble(t, mods)
	var b strings.Builder
	for _, p := range pairs {
		fmt.Fprintf(&b, "\n%s: partial %d registers, fused %d", p[0], regs[p[1]], regs[p[2]])
	}
	t.Log(b.String())
}
