package kernel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/testenv"
)

// halfKernels returns the kernels of every family over float16 or bfloat16 elements:
// reductions as PlanReduce plans them (whole arrays, rows, columns, the fused second
// pass, Min/Max/arg, a map), scans of both layouts, the search kernels and an
// elementwise kernel, for a GPU of compute capability cc.
func halfKernels(t *testing.T, h dtype.DType) []interface {
	Key() string
	PTX(major, minor int) (string, string, error)
} {
	t.Helper()
	var ks []interface {
		Key() string
		PTX(major, minor int) (string, string, error)
	}
	sq, err := expr.Parse("x*x", expr.Env{"x": expr.OperandDecl(0, h)})
	if err != nil {
		t.Fatal(err)
	}
	sq = sq.Convert(dtype.Float32)
	bases := []Reduce{
		{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{h}, Acc: dtype.Float32, Out: h},
		{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{h}, Acc: dtype.Float32, Out: h, Mean: true},
		{Op: OpMax, Pre: PreConvert, Ins: []dtype.DType{h}, Acc: dtype.Float32, Out: h},
		{Op: OpArgMin, Pre: PreConvert, Ins: []dtype.DType{h}, Acc: dtype.Float32, Out: h},
		{Op: OpSum, Pre: PreNonzero, Ins: []dtype.DType{h}, Acc: dtype.Int64},
		{Op: OpSum, Pre: PreExpr, Map: sq, Ins: []dtype.DType{h}, Acc: dtype.Float32, Out: h},
	}
	layouts := []struct {
		shape []int
		red   []bool
	}{
		{[]int{1 << 28}, []bool{true}},             // whole array: split, fused final pass
		{[]int{16384, 16384}, []bool{true, false}}, // columns, 8 outputs per thread
		{[]int{16384, 16384}, []bool{false, true}}, // a block per row
		{[]int{1000, 100}, []bool{false, true}},    // a warp per row
		{[]int{3001, 7}, []bool{false, true}},      // a thread per row, unaligned
		{[]int{1<<31 + 16}, []bool{true}},          // 64-bit indices
	}
	for _, b := range bases {
		for _, l := range layouts {
			st := make([]int, len(l.shape))
			s := 1
			for d := len(st) - 1; d >= 0; d-- {
				st[d] = s
				s *= l.shape[d]
			}
			lay := CollapseReduce(l.shape, [][]int{st}, l.red, !b.Op.IsArg())
			passes := PlanReduce(b, lay, []bool{l.shape[len(l.shape)-1]%8 == 0}, 132, DefaultReduceTuning, nil)
			for _, p := range passes {
				ks = append(ks, p.Spec)
			}
			if len(passes) == 2 {
				if f, _, ok := FuseReduce(passes[0], passes[1]); ok {
					ks = append(ks, f.Spec)
				}
			}
		}
	}
	add, mx := Combine{Op: OpSum, Type: dtype.Float32}, Combine{Op: OpMax, Type: dtype.Float32}
	// The root package's choices: 16 items a thread (32 for a float32 output, staged),
	// .minnctapersm 5 for rows.
	for _, items := range []int{4, 16} {
		for _, vec := range []bool{false, true} {
			ks = append(ks, &ScanTiles{In: h, Comb: add, Out: h, Group: 1, Items: items, Vector: vec, Lookback: 4, MinBlocks: 5})
		}
	}
	ks = append(ks,
		&ScanTiles{In: h, Comb: mx, Out: h, Exclusive: true, Group: 1, Items: 16, Vector: true, Lookback: 4, MinBlocks: 5},
		&ScanTiles{In: h, Comb: add, Out: h, Group: 4, Items: 16, Vector: true, Lookback: 4},
		&ScanTiles{In: h, Comb: add, Group: 1, Items: 32, Vector: true, Lookback: 4, Stage: true, MinBlocks: 5},
		&ScanColumns{In: h, Comb: add, Out: h, Groups: 8, Rows: 16},
		&ScanColumns{In: h, Comb: mx, Out: h, Exclusive: true, Groups: 1, Rows: 5},
		&ScanColumns{In: h, Comb: add, Groups: 8, Rows: 16})
	for _, vec := range []bool{false, true} {
		ks = append(ks, &CompactCount{In: h, Items: 16, Vector: vec},
			&CompactScatter{In: h, Items: 16, Vector: vec},
			&CompactScatter{In: dtype.Bool, Values: h, Items: 16, Vector: vec})
	}
	ks = append(ks, &FindFirst{In: h, Items: 16}, &CountNonzero{In: h, Items: 16})
	return ks
}

// TestHalfKernelsAssemble assembles every family's half-precision kernels with ptxas,
// for sm_90 (with no spills) and sm_75 (bfloat16's integer rounding before sm_80).
func TestHalfKernelsAssemble(t *testing.T) {
	p := testenv.Ptxas(t)
	for _, h := range []dtype.DType{dtype.Float16, dtype.BFloat16} {
		ks := halfKernels(t, h)
		ccs := [][2]int{{9, 0}}
		if h == dtype.BFloat16 && !testing.Short() {
			ccs = append(ccs, [2]int{7, 5}) // the integer rounding before sm_80
		}
		for _, cc := range ccs {
			// Modules of kernels with distinct entry names (reductions' are hashed
			// keys; scans and searches share theirs), their texts concatenated under one
			// header: few ptxas runs.
			type module struct {
				names map[string]bool
				body  strings.Builder
			}
			var mods []*module
			header := ""
			seen := map[string]bool{}
			for _, k := range ks {
				if seen[k.Key()] {
					continue
				}
				seen[k.Key()] = true
				src, entry, err := k.PTX(cc[0], cc[1])
				if err != nil {
					t.Fatalf("%s: %v", k.Key(), err)
				}
				if ownRegs(k) && cc[0] == 9 {
					// ptxas's register choice: assembled alone, spills logged.
					ptxasFor(t, k, k.Key(), src)
					continue
				}
				i := strings.Index(src, ".address_size 64")
				if i < 0 {
					t.Fatalf("%s: no module header", k.Key())
				}
				i += len(".address_size 64")
				if header == "" {
					header = src[:i]
				}
				var m *module
				for _, c := range mods {
					if !c.names[entry] {
						m = c
						break
					}
				}
				if m == nil {
					m = &module{names: map[string]bool{}}
					mods = append(mods, m)
				}
				m.names[entry] = true
				m.body.WriteString(src[i:])
				m.body.WriteString("\n")
			}
			arch := fmt.Sprintf("sm_%d%d", cc[0], cc[1])
			for _, m := range mods {
				src := header + m.body.String()
				if cc[0] == 9 {
					assemble(t, p, src, arch, t.TempDir()) // and no spills
					continue
				}
				// sm_75: bfloat16's integer rounding; a few bytes of spills are
				// tolerated there (the H200 is sm_90).
				in := filepath.Join(t.TempDir(), "k.ptx")
				if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
					t.Fatal(err)
				}
				if out, err := exec.Command(p, "-arch="+arch, in, "-o", in+".cubin").CombinedOutput(); err != nil {
					t.Fatalf("ptxas -arch=%s: %v\n%s", arch, err, out)
				}
			}
			t.Logf("%v sm_%d%d: %d kernels assembled in %d modules", h, cc[0], cc[1], len(seen), len(mods))
		}
	}
}
