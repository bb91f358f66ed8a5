package kernel

import (
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"

	"github.com/go-gpu/gpu/internal/testenv"
)

// TestElementwisePTXSASS assembles the main kernels for sm_90 and reports, from the
// disassembly, the instructions per element of their main loops and their registers
// (the figures of the kernel report; run with -v). It checks that the vector loops
// move 16 bytes per access and use the read-only path.
func TestElementwisePTXSASS(t *testing.T) {
	ptxas := testenv.Ptxas(t)
	cuobjdump := testenv.CUDATool("cuobjdump")
	if cuobjdump == "" {
		t.Skip("cuobjdump not found beside ptxas, on PATH or in /opt/ctk/usr/bin")
	}
	f32 := dtype.Float32
	envF := expr.Env{"x": expr.OperandDecl(0, f32), "a": expr.ParamDecl(0, f32), "b": expr.ParamDecl(1, f32)}
	envD := expr.Env{"x": expr.OperandDecl(0, dtype.Float64), "a": expr.ParamDecl(0, dtype.Float64), "b": expr.ParamDecl(1, dtype.Float64)}
	envH := expr.Env{"x": expr.OperandDecl(0, dtype.Float16), "a": expr.ParamDecl(0, dtype.Float16), "b": expr.ParamDecl(1, dtype.Float16)}
	contig := func(ex *expr.Expr, in dtype.DType, vec, i64 bool) *Elementwise {
		return &Elementwise{Expr: ex, Ins: []Operand{{in, Contig}}, Out: Operand{ex.DType(), Contig}, Vector: vec, Index64: i64}
	}
	cases := []struct {
		name string
		e    *Elementwise
	}{
		{"f32 a*x+b vector", contig(expr.MustParse("a*x + b", envF), f32, true, false)},
		{"f32 a*x+b vector i64", contig(expr.MustParse("a*x + b", envF), f32, true, true)},
		{"f32 a*x+b scalar", contig(expr.MustParse("a*x + b", envF), f32, false, false)},
		{"f64 a*x+b vector", contig(expr.MustParse("a*x + b", envD), dtype.Float64, true, false)},
		{"f16 a*x+b vector", contig(expr.MustParse("a*x + b", envH), dtype.Float16, true, false)},
		{"f32 copy vector", contig(expr.MustParse("x", envF), f32, true, false)},
		{"f32->f16 cast vector", contig(expr.MustParse("float16(x)", envF), f32, true, false)},
		{"f32->i32 cast vector", contig(expr.MustParse("int32(x)", envF), f32, true, false)},
		{"f32 fill (param) vector", contig(expr.MustParse("a", envF), f32, true, false)},
		{"f32 x > a to bool vector", contig(expr.MustParse("x > a", envF), f32, true, false)},
		{"f32 2-D transpose copy", &Elementwise{Expr: expr.MustParse("x", envF), Ins: []Operand{{f32, Strided}}, Out: Operand{f32, Contig}, Rank: 2}},
		{"f32 3-D strided copy", &Elementwise{Expr: expr.MustParse("x", envF), Ins: []Operand{{f32, Strided}}, Out: Operand{f32, Contig}, Rank: 3}},
	}
	for _, c := range cases {
		src, _, err := c.e.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		dir := t.TempDir()
		r := assemble(t, ptxas, src, "sm_90", dir)
		out, err := exec.Command(cuobjdump, "-sass", r.cubin).CombinedOutput()
		if err != nil {
			t.Fatalf("cuobjdump: %v\n%s", err, out)
		}
		loop := mainLoop(string(out))
		p := c.e.plan()
		per := p.V * p.U
		ld, st := 0, 0
		for _, in := range loop {
			if strings.Contains(in, "LDG") {
				ld++
				if p.V > 1 && c.e.Ins[0].DType.Size()*p.V == 16 && !strings.Contains(in, "LDG.E.128.CONSTANT") {
					t.Errorf("%s: vector load %q", c.name, in)
				}
			}
			if strings.Contains(in, "STG") {
				st++
			}
			if strings.Contains(in, "LDL") || strings.Contains(in, "STL") {
				t.Errorf("%s: local memory: %q", c.name, in)
			}
		}
		t.Logf("%-26s V=%-2d U=%d regs=%-3d main loop: %3d instructions for %2d elements = %.2f per element (%d loads, %d stores)",
			c.name, p.V, p.U, r.regs, len(loop), per, float64(len(loop))/float64(per), ld, st)
	}
}

var reSASS = regexp.MustCompile(`/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;`)

// mainLoop returns the instructions of the first loop of the disassembly: from the
// target of the first backward branch to that branch.
func mainLoop(sass string) []string {
	type ins struct {
		addr int64
		text string
	}
	var all []ins
	for _, m := range reSASS.FindAllStringSubmatch(sass, -1) {
		a, _ := strconv.ParseInt(m[1], 16, 64)
		all = append(all, ins{a, m[2]})
	}
	for i, in := range all {
		f := strings.Fields(in.text)
		if len(f) < 2 || !strings.HasPrefix(f[len(f)-2], "BRA") {
			continue
		}
		target, err := strconv.ParseInt(strings.TrimPrefix(f[len(f)-1], "0x"), 16, 64)
		if err != nil || target >= in.addr {
			continue
		}
		var body []string
		for _, x := range all[:i+1] {
			if x.addr >= target {
				body = append(body, x.text)
			}
		}
		return body
	}
	return nil
}

// BenchmarkElementwisePTX measures generating the PTX of a*x+b (vector) and of a
// float32 sin through the math library: part of a kernel's time to first launch.
func BenchmarkElementwisePTX(b *testing.B) {
	envF := expr.Env{"x": expr.OperandDecl(0, dtype.Float32), "a": expr.ParamDecl(0, dtype.Float32), "b": expr.ParamDecl(1, dtype.Float32)}
	for _, src := range []string{"a*x + b", "sin(x)*a + b"} {
		ex := expr.MustParse(src, envF)
		e := &Elementwise{Expr: ex, Ins: []Operand{{dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}, Vector: true}
		b.Run(src, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if _, _, err := e.PTX(9, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
