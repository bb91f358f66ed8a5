package kernel

import (
	"fmt"
	"math"
	"math/rand/v2"
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
						if tc.comp == dtype.Float32 && g.threads == 256 {
							exact := *r // Tuning.StatExactExp
							exact.ExactExp = true
							out = append(out, &exact)
						}
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

// expShiftedRef mirrors expShifted's arithmetic in Go, with ex2.approx taken as exact
// (its own error is at most 2 ulp on the H200).
func expShiftedRef(d float32) float32 {
	fma := func(a, b, c float32) float32 { return float32(math.FMA(float64(a), float64(b), float64(c))) }
	const magic = float32(0x1.8p23)
	t := fma(d, statLog2E, magic)
	nj := magic - t
	r := fma(d, statLog2E, nj)
	r = fma(d, statLog2ELo, r)
	p := float32(math.Exp2(float64(r)))
	sc := math.Float32frombits((math.Float32bits(t) + 127) << 23)
	p *= sc
	if d < statExpMin {
		return 0
	}
	return p
}

// TestExpShiftedReduction checks expShifted's range reduction (its constants and the
// exponent trick) against math.Exp over the arguments softmax gives it: within 1.5 ulp
// before ex2.approx's own error, 0 below 2^-126, NaN for NaN.
func TestExpShiftedReduction(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(d float32) {
		got, want := expShiftedRef(d), math.Exp(float64(d))
		if want < 0x1p-126 {
			if got != 0 && math.Abs(float64(got)-want) > 0x1p-149 {
				t.Fatalf("exp(%v) = %v, want 0 or %v", d, got, want)
			}
			return
		}
		ulp := math.Abs(float64(math.Nextafter32(float32(want), 0)) - want)
		if math.Abs(float64(got)-want) > 1.5*ulp+want*0x1p-24 {
			t.Fatalf("exp(%v) = %v, want %v (%.2f ulp)", d, got, want, math.Abs(float64(got)-want)/ulp)
		}
	}
	for _, d := range []float32{0, float32(math.Copysign(0, -1)), -1e-30, -0.5, -0.34657359, -1, -87.33654, -87.3365, -87.33, -87.3, -20, -60.5} {
		check(d)
	}
	for i := 0; i < 200000; i++ {
		check(-rng.Float32() * 88)
	}
	if got := expShiftedRef(float32(math.Inf(-1))); got != 0 {
		t.Fatalf("exp(-Inf) = %v", got)
	}
	if got := expShiftedRef(float32(math.NaN())); !math.IsNaN(float64(got)) {
		t.Fatalf("exp(NaN) = %v", got)
	}
}
