package kernel

import (
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/testenv"
)

// TestElementwiseGridDep: GridDep starts the kernel with griddepcontrol.launch_dependents
// and griddepcontrol.wait before any memory access, changes the key (and so the entry
// name) and nothing else of the PTX, assembles for sm_90 (with ptxas where there is
// one), and is refused below compute capability 9.0.
func TestElementwiseGridDep(t *testing.T) {
	for _, src := range []string{"x*0.5", "sin(x) + x"} {
		e, err := expr.Parse(src, expr.Env{"x": expr.OperandDecl(0, dtype.Float32)})
		if err != nil {
			t.Fatal(err)
		}
		plain := &Elementwise{Expr: e, Out: Operand{DType: dtype.Float32, Kind: Contig},
			Ins: []Operand{{DType: dtype.Float32, Kind: Contig}}, Vector: true}
		gd := *plain
		gd.GridDep = true
		if plain.Key() == gd.Key() || plain.EntryName() == gd.EntryName() {
			t.Fatalf("%s: GridDep leaves the key %q", src, gd.Key())
		}
		p0, _, err := plain.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		p1, entry, err := gd.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		const ctl = "\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n"
		i := strings.Index(p1, ctl)
		if i < 0 || strings.Count(p1, "griddepcontrol") != 2 {
			t.Fatalf("%s: no griddepcontrol pair in\n%s", src, p1)
		}
		if ld := strings.Index(p1, "ld."); ld >= 0 && ld < i {
			t.Errorf("%s: a load before griddepcontrol.wait", src)
		}
		if st := strings.Index(p1, "st.global"); st >= 0 && st < i {
			t.Errorf("%s: a store before griddepcontrol.wait", src)
		}
		// The same kernel otherwise: the entry name and key comment differ, the code not.
		strip := func(s, name, key string) string {
			s = strings.ReplaceAll(s, name, "ENTRY")
			return strings.ReplaceAll(s, key, "KEY")
		}
		if a, b := strip(p0, plain.EntryName(), plain.Key()), strip(strings.Replace(p1, ctl, "", 1), entry, gd.Key()); a != b {
			t.Errorf("%s: GridDep changed more than the two instructions:\n%s\n---\n%s", src, a, b)
		}
		if _, _, err := gd.PTX(8, 0); err == nil {
			t.Errorf("%s: GridDep PTX for sm_80 made, want an error", src)
		}
		if p := testenv.CUDATool("ptxas"); p != "" && testenv.PtxasSupports(p, "sm_90") {
			assemble(t, p, p1, "sm_90", t.TempDir())
		}
	}
}
