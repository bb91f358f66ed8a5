package kernel

import (
	"fmt"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// scanExprComb parses a two-operand expression operator.
func scanExprComb(t testing.TB, src string, ty dtype.DType) Combine {
	env := expr.Env{"a": expr.OperandDecl(0, ty), "b": expr.OperandDecl(1, ty)}
	e, err := expr.Parse(src, env)
	if err != nil {
		t.Fatal(err)
	}
	if e.DType() != ty {
		e = &expr.Expr{Root: &expr.Cast{X: e.Root, Type: ty}, Inputs: e.Inputs, Params: e.Params}
	}
	return Combine{Type: ty, Expr: e}
}

// scanTilesCases are the row scans TestScanTilesPtxas assembles: the operators, types,
// groups and modes.
func scanTilesCases(t *testing.T) []*ScanTiles {
	type tc struct {
		in   dtype.DType
		comb Combine
		g, k int
		ex   bool
		vec  bool
	}
	cases := []tc{
		{dtype.Float32, Combine{Op: OpSum, Type: dtype.Float32}, 1, 16, false, true},
		{dtype.Float32, Combine{Op: OpSum, Type: dtype.Float32}, 1, 16, true, true},
		{dtype.Int64, Combine{Op: OpSum, Type: dtype.Int64}, 1, 8, false, true},
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Int64}, 1, 8, false, true},
		{dtype.Bool, Combine{Op: OpSum, Type: dtype.Int64}, 1, 8, true, true},
		{dtype.Float32, Combine{Op: OpMax, Type: dtype.Float32}, 1, 16, false, true},
		{dtype.Float64, Combine{Op: OpMin, Type: dtype.Float64}, 1, 8, false, true},
		{dtype.Float32, Combine{Op: OpSum, Type: dtype.Float32}, 3, 12, false, true},
		{dtype.Int64, Combine{Op: OpSum, Type: dtype.Int64}, 3, 6, true, false},
		{dtype.Int8, Combine{Op: OpProd, Type: dtype.Int8}, 1, 16, false, true},
		{dtype.Bool, Combine{Op: OpMax, Type: dtype.Bool}, 2, 16, false, true},
		{dtype.Uint16, Combine{Op: OpMin, Type: dtype.Uint16}, 8, 8, true, true},
		{dtype.Int32, scanExprComb(t, "a ^ b", dtype.Int64), 1, 8, true, true},
		{dtype.Float32, scanExprComb(t, "fmax(a, b)", dtype.Float32), 1, 16, false, true},
		{dtype.Float64, Combine{Op: OpSum, Type: dtype.Float32}, 1, 16, false, true},
		// The second row-scan configuration (GPU_SCAN_VARIANT=v2).
		{dtype.Float32, Combine{Op: OpSum, Type: dtype.Float32}, 1, 32, false, true},
		{dtype.Float32, Combine{Op: OpSum, Type: dtype.Float32}, 1, 32, true, true},
		{dtype.Int64, Combine{Op: OpSum, Type: dtype.Int64}, 1, 16, false, true},
		{dtype.Int32, Combine{Op: OpSum, Type: dtype.Int64}, 1, 16, false, true},
		{dtype.Float32, Combine{Op: OpMax, Type: dtype.Float32}, 1, 32, false, true},
		{dtype.Float64, Combine{Op: OpMin, Type: dtype.Float64}, 1, 16, false, true},
	}
	var out []*ScanTiles
	for _, c := range cases {
		out = append(out, &ScanTiles{In: c.in, Comb: c.comb, Exclusive: c.ex, Group: c.g, Items: c.k, Vector: c.vec})
	}
	return out
}

// TestScanTilesPtxas assembles the row scan for the operators, types, groups and
// modes, and reports registers and SASS size.
func TestScanTilesPtxas(t *testing.T) {
	for _, sp := range scanTilesCases(t) {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			log, cubin := ptxasFor(t, sp, sp.Key(), src)
			regs, smem := scanRegs(log)
			sass := 0
			if testing.Verbose() {
				sass = scanSassCount(t, cubin)
			}
			t.Logf("%s: %d registers, %d bytes smem, %d SASS", sp.Key(), regs, smem, sass)
		})
	}
	_ = fmt.Sprint
}

// scanColumnsCases are the column scans TestScanColumnsPtxas assembles.
func scanColumnsCases(t *testing.T) []*ScanColumns {
	return []*ScanColumns{
		{In: dtype.Float32, Comb: Combine{Op: OpSum, Type: dtype.Float32}, Groups: 8, Rows: 16},
		{In: dtype.Float32, Comb: Combine{Op: OpSum, Type: dtype.Float32}, Groups: 1, Rows: 3},
		{In: dtype.Int32, Comb: Combine{Op: OpSum, Type: dtype.Int64}, Groups: 8, Rows: 16, Exclusive: true},
		{In: dtype.Int64, Comb: Combine{Op: OpSum, Type: dtype.Int64}, Groups: 8, Rows: 16},
		{In: dtype.Float64, Comb: Combine{Op: OpMax, Type: dtype.Float64}, Groups: 8, Rows: 16},
		{In: dtype.Bool, Comb: Combine{Op: OpMin, Type: dtype.Bool}, Groups: 1, Rows: 9, Exclusive: true},
		{In: dtype.Int32, Comb: scanExprComb(t, "where(a > b, a, b)", dtype.Int64), Groups: 8, Rows: 16},
	}
}

// TestScanColumnsPtxas assembles the column scan.
func TestScanColumnsPtxas(t *testing.T) {
	for _, sp := range scanColumnsCases(t) {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			log, cubin := ptxasFor(t, sp, sp.Key(), src)
			regs, smem := scanRegs(log)
			sass := 0
			if testing.Verbose() {
				sass = scanSassCount(t, cubin)
			}
			t.Logf("%s: %d registers, %d bytes smem, %d SASS", sp.Key(), regs, smem, sass)
		})
	}
}

// TestScanRegCapLiftPtxas assembles the row and column scans of the tests above at
// GPU_SCAN_REGCAP=lift (ScanRegCap -1, blockAttrs' .maxnreg), which must not spill:
// the setting the scans had before ptxas's choice became their default.
func TestScanRegCapLiftPtxas(t *testing.T) {
	if !LiftRegCap {
		t.Skip("GPU_KERNEL_REGCAP=ptxas: blockAttrs sets no cap")
	}
	var specs []interface {
		Key() string
		PTX(major, minor int) (string, string, error)
	}
	for _, sp := range scanTilesCases(t) {
		specs = append(specs, sp)
	}
	for _, sp := range scanColumnsCases(t) {
		specs = append(specs, sp)
	}
	// The PTX is made here, in turn, with the cap set; the subtests only assemble it.
	old := ScanRegCap
	ScanRegCap = -1
	srcs := make([]string, len(specs))
	for i, sp := range specs {
		src, _, err := sp.PTX(9, 0)
		if err != nil {
			ScanRegCap = old
			t.Fatalf("%s: %v", sp.Key(), err)
		}
		srcs[i] = src
	}
	ScanRegCap = old
	for i, sp := range specs {
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			log, _ := scanPtxas(t, srcs[i])
			regs, _ := scanRegs(log)
			t.Logf("%s at .maxnreg: %d registers", sp.Key(), regs)
		})
	}
}

// TestScanTilesPtxasTuned assembles the 1-D CumSum kernels (float32 with 32 or 16
// items a thread, int64 with 16) with the tuning options and logs registers, spills
// and shared memory (go test -run ScanTilesPtxasTuned -v ./internal/kernel/). The
// configurations without MinBlocks and with at most 4 look-back tiles a lane go through
// ptxasFor (at ScanRegCap 0, ptxas's choice: spills of at most ptxasForSpillMax bytes
// logged, more failed); the others' spills are reported, not failed (ptxas trades them
// for occupancy).
func TestScanTilesPtxasTuned(t *testing.T) {
	type tc struct {
		in    dtype.DType
		acc   dtype.DType
		k     int
		excl  bool
		lb    int
		stage bool
		mb    int
	}
	var cases []tc
	for _, base := range []tc{{in: dtype.Float32, acc: dtype.Float32, k: 32}, {in: dtype.Float32, acc: dtype.Float32, k: 16},
		{in: dtype.Int64, acc: dtype.Int64, k: 16}} {
		for _, stage := range []bool{false, true} {
			for _, lb := range []int{0, 1, 2, 4, 8} {
				for _, mb := range []int{0, 5, 6, 8} {
					c := base
					c.lb, c.stage, c.mb = lb, stage, mb
					cases = append(cases, c)
				}
			}
		}
	}
	cases = append(cases, tc{in: dtype.Float32, acc: dtype.Float32, k: 32, excl: true, lb: 4, stage: true},
		tc{in: dtype.Int64, acc: dtype.Int64, k: 16, excl: true, lb: 4, stage: true})
	for _, c := range cases {
		sp := &ScanTiles{In: c.in, Comb: Combine{Op: OpSum, Type: c.acc}, Exclusive: c.excl, Group: 1, Items: c.k, Vector: true,
			Lookback: c.lb, Stage: c.stage, MinBlocks: c.mb}
		t.Run(sp.Key(), func(t *testing.T) {
			t.Parallel()
			src, _, err := sp.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			var log string
			if c.mb == 0 && c.lb <= 4 {
				log, _ = ptxasFor(t, sp, sp.Key(), src)
			} else {
				log, _ = scanPtxasRaw(t, src)
			}
			regs, smem := scanRegs(log)
			st, ld := scanSpills(log)
			t.Logf("%s: %d registers, spills %d/%d bytes, %d bytes smem", sp.Key(), regs, st, ld, smem)
		})
	}
}
