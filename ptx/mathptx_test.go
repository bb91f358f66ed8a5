package ptx

import (
	"fmt"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/internal/testenv"
)

// mathKernel returns a module with one kernel computing y[i] = fn(x[i] (, x2[i])) for
// one element per thread, either inline (Math) or through the .func (MathFunc).
func mathKernel(fn MathFn, t Type, viaFunc bool) *Module {
	m := NewModule(9, 0)
	k := m.Kernel("k", P("x", U64), P("x2", U64), P("y", U64))
	tid := k.Special(TidX)
	off := k.Reg(U64)
	k.MulWide(off, tid, Int(t.Bits()/8))
	addr := func(i int) Reg {
		a := k.Reg(U64)
		k.CvtaTo(Global, a, k.LdParam(i))
		k.Add(a, a, off)
		return a
	}
	args := []Reg{k.Reg(t)}
	k.Ld(Global, NC, t, Mem(addr(0), 0), args[0])
	if fn.NumArgs() == 2 {
		args = append(args, k.Reg(t))
		k.Ld(Global, NC, t, Mem(addr(1), 0), args[1])
	}
	var r Reg
	if viaFunc {
		g := m.MathFunc(fn, t)
		r = k.Reg(t)
		k.Call(g, []Reg{r}, regsToOps(args)...)
	} else {
		r = k.Math(fn, args...)
	}
	k.St(Global, CacheDefault, t, Mem(addr(2), 0), r)
	return m
}

func regsToOps(rs []Reg) []Operand {
	o := make([]Operand, len(rs))
	for i, r := range rs {
		o[i] = r
	}
	return o
}

// TestMathPtxas compiles every math function, inline and as a .func, with ptxas for
// sm_90 and checks nothing spills or uses local memory.
func TestMathPtxas(t *testing.T) {
	testenv.Ptxas(t)
	for _, typ := range []Type{F32, F64} {
		for _, fn := range MathFns(typ) {
			t.Run(fmt.Sprintf("%v%v", fn, typ), func(t *testing.T) {
				t.Parallel()
				for _, viaFunc := range []bool{false, true} {
					r := ptxas(t, mathKernel(fn, typ, viaFunc).String())
					checkNoSpill(t, r.Log)
				}
			})
		}
	}
}

var reSassOp = regexp.MustCompile(`/\*[0-9a-f]{4}\*/\s+(@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)(\.[A-Z0-9_.]+)?`)

// sassCounts counts the SASS instructions of the kernel by class.
func sassCounts(s string) (total int, byOp map[string]int) {
	byOp = map[string]int{}
	for _, m := range reSassOp.FindAllStringSubmatch(s, -1) {
		op := m[2]
		if op == "NOP" {
			continue
		}
		total++
		byOp[op]++
	}
	return total, byOp
}

// TestMathSassCounts prints the SASS instruction counts of each function (go test -v
// -run MathSassCounts): the numbers in the package documentation's table.
func TestMathSassCounts(t *testing.T) {
	if testenv.CUDATool("ptxas") == "" || !testing.Verbose() {
		t.Skip("needs ptxas and -v")
	}
	// The baseline: a kernel that only copies.
	var rows []string
	for _, typ := range []Type{F32, F64} {
		for _, fn := range MathFns(typ) {
			r := ptxas(t, mathKernel(fn, typ, false).String())
			total, by := sassCounts(sass(t, r.Cubin))
			fp := 0
			for op, n := range by {
				if strings.HasPrefix(op, "F") && op != "FSETP" && op != "FSEL" && op != "FCHK" ||
					strings.HasPrefix(op, "D") && op != "DSETP" || op == "MUFU" {
					fp += n
				}
			}
			var ops []string
			for op, n := range by {
				ops = append(ops, fmt.Sprintf("%s:%d", op, n))
			}
			sort.Strings(ops)
			regs := reRegs.FindStringSubmatch(r.Log)
			rows = append(rows, fmt.Sprintf("%-6v %v total %3d fp %3d regs %s  %s", fn, typ, total, fp, regs[1], strings.Join(ops, " ")))
		}
	}
	t.Log("\n" + strings.Join(rows, "\n"))
}
