package kernel

import (
	"fmt"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// statSpecs lists the configurations the row statistics use (every op, type, pass and a
// spread of geometries).
func statSpecs() []*RowStat {
	var out []*RowStat
	for op := StatVar; op <= StatLayerNorm; op++ {
		for _, tc := range []struct{ in, out, comp dtype.DType }{
			{dtype.Float32, dtype.Float32, dtype.Float32},
			{dtype.Float64, dtype.Float64, dtype.Float64},
			{dtype.BFloat16, dtype.BFloat16, dtype.Float32},
			{dtype.Float16, dtype.Float32, dtype.Float32},
		} {
			for _, g := range []struct{ threads, items, vec int }{{32, 4, 1}, {256, 8, 4}, {1024, 4, 2}, {1024, 8, 4}} {
				if g.vec*tc.in.Size() > 16 || g.vec*tc.out.Size() > 16 || (tc.in != dtype.Float32 && g.threads != 256) {
					continue
				}
				for pass := StatFull; pass <= StatFinish; pass++ {
					r := &RowStat{Op: op, In: tc.in, Out: tc.out, Comp: tc.comp, Pass: pass, Threads: g.threads, Items: g.items, Vec: g.vec}
					if pass == StatFinish && !op.Transform() {
						r.Threads, r.Items, r.Vec = 32, 1, 1
					}
					if op == StatLayerNorm {
						r.Weight, r.Bias = true, pass != StatPartial
					}
					out = append(out, r)
					if pass == StatFull && op.Transform() {
						one := *r
						one.OneTile = true
						out = append(out, &one)
					}
				}
			}
		}
	}
	return out
}

// TestRowStatPtxas assembles every configuration of the row statistics for sm_90 (with
// the PTXAS the tests find, CUDA 13's where it is given) and checks that none spills.
func TestRowStatPtxas(t *testing.T) {
	specs := statSpecs()
	if testing.Short() {
		specs = specs[:len(specs)/4]
	}
	for _, sp := range specs {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			if err := sp.Validate(); err != nil {
				t.Fatal(err)
			}
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

// TestRowStatValidate checks that bad specs are refused.
func TestRowStatValidate(t *testing.T) {
	good := RowStat{Op: StatSoftmax, In: dtype.Float32, Out: dtype.Float32, Comp: dtype.Float32, Threads: 256, Items: 8, Vec: 4}
	if err := good.Validate(); err != nil {
		t.Fatal(err)
	}
	for i, mod := range []func(*RowStat){
		func(r *RowStat) { r.Op = 99 },
		func(r *RowStat) { r.In = dtype.Int32 },
		func(r *RowStat) { r.Comp = dtype.Float16 },
		func(r *RowStat) { r.In = dtype.Float64 },
		func(r *RowStat) { r.Threads = 48 },
		func(r *RowStat) { r.Threads = 2048 },
		func(r *RowStat) { r.Items = 16 },
		func(r *RowStat) { r.Vec = 8 },
		func(r *RowStat) { r.Weight = true },
		func(r *RowStat) { r.Op, r.OneTile = StatVar, true },
		func(r *RowStat) { r.Pass = 7 },
	} {
		r := good
		mod(&r)
		if err := r.Validate(); err == nil {
			t.Errorf("case %d: %+v accepted", i, r)
		}
	}
	_ = fmt.Sprint
}
