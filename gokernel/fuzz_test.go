package gokernel_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/gokernel"
)

// The differential fuzzer: random kernels of the subset (integer and float
// arithmetic of every type, conversions, shifts, divisions, math functions, if, for,
// range, switch, break, continue, inlined helpers with several results), compiled
// by gokernel for every device but the CPU, and run as Go, built by the go command
// (the reference), over the same inputs. Every generated kernel must compile (and,
// through TestMain, assemble); where a GPU or the simulator (-tags ptxsim) runs, the
// results must equal Go's bit for bit. Without the go command only the compilation is
// checked.

var (
	fuzzSeed  = flag.Uint64("fuzzseed", 0, "the fuzzer's seed (0: random)")
	fuzzCount = flag.Int("fuzzcount", 40, "kernels the fuzzer generates")
	fuzzOnly  = flag.Int("fuzzonly", -1, "check only this one of the generated kernels (to reproduce a failure)")
	fuzzDir   = flag.String("fuzzdir", "", "compare with the generated kernels, inputs and Go's results this folder holds; "+
		"if it holds none, generate them (with the go command) and save them there (for the GPU machine, which has no go command)")
)

// fuzzCase is what -fuzzdir keeps: the kernels' source, their names, the inputs and
// Go's results.
type fuzzCase struct {
	Seed   uint64
	Src    string
	Names  []string
	Inputs fuzzInputs
	Want   []byte
}

type fuzzInputs struct {
	IA []int32
	IB []int64
	UA []uint8
	FA []float32
	FB []float64
}

const fuzzN = 257 // threads (elements) of each fuzz kernel

var fuzzIntTypes = []string{"int8", "int16", "int32", "int64", "int", "uint8", "uint16", "uint32", "uint64", "uint"}
var fuzzFloatTypes = []string{"float32", "float64"}

func isIntType(t string) bool { return !strings.HasPrefix(t, "float") }

// fuzzGen writes one random kernel.
type fuzzGen struct {
	r       *rand.Rand
	b       strings.Builder
	scopes  [][]fvar
	nvar    int
	indent  int
	loops   int
	helpers []fhelper
	stmts   int
	kernel  bool // in the kernel (its inputs are in scope), not a helper
}

type fvar struct{ name, typ string }

type fhelper struct {
	name   string
	params []string
	result string
}

func (g *fuzzGen) line(format string, args ...any) {
	g.b.WriteString(strings.Repeat("\t", g.indent))
	fmt.Fprintf(&g.b, format, args...)
	g.b.WriteByte('\n')
}

func (g *fuzzGen) pick(l []string) string { return l[g.r.IntN(len(l))] }

func (g *fuzzGen) anyType() string {
	if g.r.IntN(4) == 0 {
		return g.pick(fuzzFloatTypes)
	}
	return g.pick(fuzzIntTypes)
}

// varsOf returns the variables in scope of type t ("" for any).
func (g *fuzzGen) varsOf(t string) []fvar {
	var out []fvar
	for _, s := range g.scopes {
		for _, v := range s {
			if t == "" || v.typ == t {
				out = append(out, v)
			}
		}
	}
	return out
}

func (g *fuzzGen) declare(t string) string {
	g.nvar++
	name := fmt.Sprintf("v%d", g.nvar)
	g.scopes[len(g.scopes)-1] = append(g.scopes[len(g.scopes)-1], fvar{name, t})
	return name
}

// constant returns a constant of type t.
func (g *fuzzGen) constant(t string) string {
	if !isIntType(t) {
		v := []float64{0.5, -1.25, 3, 1e10, -7e-5, 1e30, 0, 2.5e-8}[g.r.IntN(8)]
		return fmt.Sprintf("%s(%g)", t, v)
	}
	bits := 64
	switch strings.TrimLeft(t, "uint") {
	case "8":
		bits = 8
	case "16":
		bits = 16
	case "32":
		bits = 32
	}
	signed := !strings.HasPrefix(t, "u")
	var v int64
	switch g.r.IntN(5) {
	case 0:
		v = 1
	case 1:
		v = int64(g.r.IntN(100))
	case 2:
		if signed {
			v = -int64(g.r.IntN(100)) - 1
		} else {
			v = 3
		}
	default:
		v = int64(g.r.Uint64() >> (64 - bits + 1)) // in range, signed or not
	}
	return fmt.Sprintf("%s(%d)", t, v)
}

// expr returns an expression of type t and whether it is constant.
func (g *fuzzGen) expr(t string, d int) (string, bool) {
	if d <= 0 || g.r.IntN(4) == 0 {
		vs := g.varsOf(t)
		if len(vs) > 0 && g.r.IntN(5) != 0 {
			return vs[g.r.IntN(len(vs))].name, false
		}
		if g.r.IntN(3) == 0 {
			return g.constant(t), true
		}
		// A conversion from a variable of another type.
		if vs := g.varsOf(""); len(vs) > 0 {
			return g.convert(t, vs[g.r.IntN(len(vs))]), false
		}
		return g.constant(t), true
	}
	nc := func(tt string) string { // a non-constant operand
		s, c := g.expr(tt, d-1)
		for c {
			s, c = g.expr(tt, d-1)
			if c {
				if vs := g.varsOf(""); len(vs) > 0 {
					return g.convert(tt, vs[g.r.IntN(len(vs))])
				}
			}
		}
		return s
	}
	x, xc := g.expr(t, d-1)
	switch g.r.IntN(10) {
	case 0, 1, 2:
		ops := []string{"+", "-", "*", "/"}
		if isIntType(t) {
			ops = append(ops, "%", "&", "|", "^", "&^")
		}
		op := g.pick(ops)
		y, yc := g.expr(t, d-1)
		if xc && yc {
			y = nc(t)
		}
		switch {
		case (op == "/" || op == "%") && isIntType(t):
			return fmt.Sprintf("(%s %s (%s | 1))", x, op, y), false
		case op == "*" && !isIntType(t):
			return fmt.Sprintf("%s(%s * %s)", t, x, y), false // no fused multiply-add
		}
		return fmt.Sprintf("(%s %s %s)", x, op, y), false
	case 3:
		if isIntType(t) {
			if xc {
				x = nc(t)
			}
			c := nc(g.pick(fuzzIntTypes))
			op := g.pick([]string{"<<", ">>"})
			return fmt.Sprintf("(%s %s (uint(%s) %% 70))", x, op, c), false
		}
		return fmt.Sprintf("kern.%s(%s)", g.pick([]string{"Exp", "Sin", "Cos", "Atan", "Tanh", "Cbrt"}), nc(t)), false
	case 4:
		if xc {
			x = nc(t)
		}
		if isIntType(t) {
			return fmt.Sprintf("(%s%s)", g.pick([]string{"-", "^"}), x), false
		}
		return fmt.Sprintf("(-%s)", x), false
	case 5:
		vs := g.varsOf("")
		if len(vs) == 0 {
			return x, xc
		}
		return g.convert(t, vs[g.r.IntN(len(vs))]), false
	case 6:
		y := nc(t)
		return fmt.Sprintf("%s(%s, %s)", g.pick([]string{"min", "max"}), x, y), false
	case 7:
		if !isIntType(t) {
			y := nc("float64")
			f := g.pick([]string{"math.Abs(%[1]s)", "math.Sqrt(math.Abs(%[1]s))", "math.Floor(%[1]s)", "math.Ceil(%[1]s)", "math.Trunc(%[1]s)",
				"math.Round(%[1]s)", "math.Max(%[1]s, %[2]s)", "math.Min(%[1]s, %[2]s)", "math.Copysign(%[1]s, nonNaN(%[2]s))", "math.Mod(%[1]s, %[2]s)"})
			return fmt.Sprintf("%s(%s)", t, fmt.Sprintf(f, "float64("+nc(t)+")", y)), false
		}
		if !g.kernel {
			return x, xc
		}
		in := g.pick([]string{"ia", "ib", "ua"})
		return fmt.Sprintf("%s(%s[(i+%d)%%len(%s)])", t, in, g.r.IntN(20), in), false
	case 8:
		for _, h := range g.helpers {
			if h.result == t && g.r.IntN(2) == 0 {
				args := make([]string, len(h.params))
				for i, p := range h.params {
					args[i], _ = g.expr(p, d-1)
					if strings.HasPrefix(args[i], p+"(") && !strings.ContainsAny(args[i][len(p):], "vaiu") {
						args[i] = nc(p) // a constant argument could overflow the parameter
					}
				}
				return fmt.Sprintf("%s(%s)", h.name, strings.Join(args, ", ")), false
			}
		}
		return x, xc
	}
	return x, xc
}

// convert returns v converted to type t (floats to integers through f2i, which keeps
// the value in range).
func (g *fuzzGen) convert(t string, v fvar) string {
	if isIntType(t) && !isIntType(v.typ) {
		return fmt.Sprintf("%s(f2i(float64(%s)))", t, v.name)
	}
	return fmt.Sprintf("%s(%s)", t, v.name)
}

// cond returns a boolean expression.
func (g *fuzzGen) cond(d int) string {
	t := g.anyType()
	x, xc := g.expr(t, d)
	y, yc := g.expr(t, d)
	if xc && yc {
		if vs := g.varsOf(""); len(vs) > 0 {
			y = g.convert(t, vs[0])
		}
	}
	c := fmt.Sprintf("%s %s %s", x, g.pick([]string{"<", "<=", "==", "!=", ">", ">="}), y)
	switch g.r.IntN(5) {
	case 0:
		return "!(" + c + ")"
	case 1:
		return "(" + c + ") && (" + g.cond(d-1) + ")"
	case 2:
		return "(" + c + ") || (" + g.cond(d-1) + ")"
	}
	return c
}

// block writes n statements in a new scope.
func (g *fuzzGen) block(n, d int) {
	g.scopes = append(g.scopes, nil)
	g.indent++
	for range n {
		g.stmt(d)
	}
	for _, v := range g.scopes[len(g.scopes)-1] {
		g.line("_ = %s", v.name)
	}
	g.indent--
	g.scopes = g.scopes[:len(g.scopes)-1]
}

func (g *fuzzGen) stmt(d int) {
	g.stmts++
	if g.stmts > 120 {
		d = 0
	}
	switch k := g.r.IntN(12); {
	case k < 4 || d <= 0:
		t := g.anyType()
		e, _ := g.expr(t, 3)
		name := g.declare(t)
		g.line("%s := %s", name, e)
	case k < 7:
		vs := g.varsOf("")
		if len(vs) == 0 {
			return
		}
		v := vs[g.r.IntN(len(vs))]
		if strings.HasPrefix(v.name, "j") || v.name == "i" {
			return // the index and loop counters stay
		}
		e, _ := g.expr(v.typ, 3)
		ops := []string{"=", "+=", "-="}
		if isIntType(v.typ) {
			ops = append(ops, "^=", "|=", "&=", "*=")
		}
		op := g.pick(ops)
		if op == "*=" || g.r.IntN(8) == 0 && isIntType(v.typ) {
			if vs := g.varsOf(""); len(vs) > 0 {
				g.line("%s <<= uint(%s) %% 70", v.name, g.convert("uint", vs[g.r.IntN(len(vs))]))
				return
			}
		}
		g.line("%s %s %s", v.name, op, e)
	case k == 7:
		g.line("if %s {", g.cond(2))
		g.block(1+g.r.IntN(3), d-1)
		if g.r.IntN(2) == 0 {
			g.line("} else {")
			g.block(1+g.r.IntN(3), d-1)
		}
		g.line("}")
	case k == 8:
		j := fmt.Sprintf("j%d", g.nvar+1)
		g.nvar++
		if g.r.IntN(2) == 0 {
			g.line("for %s := 0; %s < %d; %s++ {", j, j, 1+g.r.IntN(5), j)
		} else {
			g.line("for %s := range %d {", j, 1+g.r.IntN(5))
		}
		g.scopes = append(g.scopes, []fvar{{j, "int"}})
		g.loops++
		g.indent++
		g.line("_ = %s", j)
		if g.r.IntN(3) == 0 {
			g.line("if %s {", g.cond(1))
			g.indent++
			g.line("%s", g.pick([]string{"break", "continue"}))
			g.indent--
			g.line("}")
		}
		g.indent--
		g.block(1+g.r.IntN(3), d-1)
		g.loops--
		g.scopes = g.scopes[:len(g.scopes)-1]
		g.line("}")
	case k == 9:
		e, _ := g.expr("int", 2)
		g.line("switch %s %% 3 {", e)
		g.line("case 0:")
		g.block(1+g.r.IntN(2), d-1)
		g.line("case 1, -2:")
		g.block(1+g.r.IntN(2), d-1)
		g.line("default:")
		g.block(1, d-1)
		g.line("}")
	default:
		// Two results from a call of a divmod-like helper.
		t := g.pick(fuzzIntTypes)
		x, _ := g.expr(t, 2)
		y, _ := g.expr(t, 2)
		a, b := g.declare(t), g.declare(t)
		g.line("%s, %s := qr(%s, %s)", a, b, x, y)
	}
}

// helper writes a helper function.
func (g *fuzzGen) helper(i int) {
	h := fhelper{name: fmt.Sprintf("h%d", i), result: g.anyType()}
	g.scopes = [][]fvar{nil}
	var ps []string
	for j := range 1 + g.r.IntN(3) {
		t := g.anyType()
		h.params = append(h.params, t)
		name := fmt.Sprintf("p%d", j)
		ps = append(ps, name+" "+t)
		g.scopes[0] = append(g.scopes[0], fvar{name, t})
	}
	g.line("func %s(%s) %s {", h.name, strings.Join(ps, ", "), h.result)
	g.indent++
	for range 1 + g.r.IntN(4) {
		g.stmt(1)
	}
	for _, v := range g.scopes[0] {
		g.line("_ = %s", v.name)
	}
	e, _ := g.expr(h.result, 3)
	g.line("return %s", e)
	g.indent--
	g.line("}")
	g.helpers = append(g.helpers, h)
	g.scopes = nil
}

// fuzzKernel returns the source of kernel name (its helpers prefixed by name).
func fuzzKernel(r *rand.Rand, name string) string {
	g := &fuzzGen{r: r}
	for i := range r.IntN(3) {
		g.helper(i)
	}
	g.scopes = [][]fvar{nil}
	g.kernel = true
	g.line("func %s(t kern.Thread, ia []int32, ib []int64, ua []uint8, fa []float32, fb []float64, out []int64, fout []float64) {", name)
	g.indent++
	g.line("i := t.Index()")
	g.line("if i >= len(out) {")
	g.line("\treturn")
	g.line("}")
	g.scopes[0] = []fvar{{"i", "int"}}
	for _, in := range []fvar{{"ia", "int32"}, {"ib", "int64"}, {"ua", "uint8"}, {"fa", "float32"}, {"fb", "float64"}} {
		v := g.declare(in.typ)
		g.line("%s := %s[i]", v, in.name)
	}
	for range 4 + r.IntN(12) {
		g.stmt(3)
	}
	g.line("var acc int64")
	g.line("var facc float64")
	for _, v := range g.scopes[0] {
		if isIntType(v.typ) {
			g.line("acc = acc*31 + int64(%s)", v.name)
		} else {
			g.line("acc = acc*31 + f2i(float64(%s))", v.name)
			g.line("facc += float64(%s)", v.name)
		}
	}
	g.line("out[i] = acc")
	g.line("fout[i] = facc")
	g.indent--
	g.line("}")
	src := g.b.String()
	// Helpers are per kernel.
	for i := range len(g.helpers) {
		src = strings.ReplaceAll(src, fmt.Sprintf("h%d(", i), fmt.Sprintf("%s_h%d(", name, i))
	}
	return src
}

const fuzzPrelude = `package main

import (
	"math"

	"github.com/go-gpu/gpu/kern"
)

var _ = math.Abs

// f2i converts x to an integer, in range: NaN and huge values give 0.
func f2i(x float64) int64 {
	if !(x > -1e15 && x < 1e15) {
		return 0
	}
	return int64(x)
}

// nonNaN is x, or 1 for NaN: Go leaves the sign of a NaN to the machine (amd64's
// 0/0 is negative, a GPU's positive), so Copysign's sign must not be one.
func nonNaN(x float64) float64 {
	if x != x {
		return 1
	}
	return x
}

// qr returns the quotient and remainder of a by b|1.
func qr[T kern.Integer](a, b T) (T, T) {
	b |= 1
	return a / b, a % b
}
`

const fuzzMain = `
func main() {
	in, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	var inputs struct {
		IA []int32
		IB []int64
		UA []uint8
		FA []float32
		FB []float64
	}
	if err := json.Unmarshal(in, &inputs); err != nil {
		panic(err)
	}
	n := len(inputs.IA)
	var res []byte
	for _, k := range kernels {
		out, fout := make([]int64, n), make([]float64, n)
		err := kern.Run(kern.Config{Grid: kern.Dim{X: (n + 63) / 64}, Block: kern.Dim{X: 64}}, func(t kern.Thread) {
			k(t, inputs.IA, inputs.IB, inputs.UA, inputs.FA, inputs.FB, out, fout)
		})
		if err != nil {
			panic(err)
		}
		for i := range n {
			res = binary.LittleEndian.AppendUint64(res, uint64(out[i]))
			res = binary.LittleEndian.AppendUint64(res, math.Float64bits(fout[i]))
		}
	}
	if err := os.WriteFile(os.Args[2], res, 0o644); err != nil {
		panic(err)
	}
}
`

// TestFuzzDifferential generates kernels, compiles each, and compares every
// non-CPU device's results with Go's.
func TestFuzzDifferential(t *testing.T) {
	seed := *fuzzSeed
	if seed == 0 {
		seed = rand.Uint64()
	}
	count := *fuzzCount
	if testing.Short() && count == 40 {
		count = 8
	}
	t.Logf("-fuzzseed=%d -fuzzcount=%d", seed, count)
	var fc fuzzCase
	if loaded := loadFuzzCase(t, &fc); loaded {
		seed = fc.Seed
		t.Logf("compared with the kernels and results of -fuzzdir=%s (seed %d)", *fuzzDir, seed)
	} else {
		fc = makeFuzzCase(t, seed, count)
	}
	names, inputs := fc.Names, fc.Inputs
	var src strings.Builder
	src.WriteString(fc.Src)
	kernels := make([]*gokernel.Kernel, len(names))
	for i, name := range names {
		k, err := gokernel.Compile("fuzz.go", fc.Src, name)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, numbered(fc.Src))
		}
		kernels[i] = k
	}
	want := fc.Want
	if want == nil {
		return
	}
	for _, d := range devices(t) {
		if d.name == "cpu" {
			continue // the reference ran the same Go
		}
		t.Run(d.name, func(t *testing.T) {
			s, err := d.dev.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ia, ib, ua := fromSlice(t, s, inputs.IA), fromSlice(t, s, inputs.IB), fromSlice(t, s, inputs.UA)
			fa, fb := fromSlice(t, s, inputs.FA), fromSlice(t, s, inputs.FB)
			for ki, k := range kernels {
				out, fout := fromSlice(t, s, make([]int64, fuzzN)), fromSlice(t, s, make([]float64, fuzzN))
				if err := k.Launch(s, linear(fuzzN, 64), ia, ib, ua, fa, fb, out, fout); err != nil {
					t.Fatal(err)
				}
				got, fgot := toSlice(t, out), toSlice(t, fout)
				for i := range fuzzN {
					off := 16 * (ki*fuzzN + i)
					w := int64(binary.LittleEndian.Uint64(want[off:]))
					fw := math.Float64frombits(binary.LittleEndian.Uint64(want[off+8:]))
					if got[i] != w || !(fgot[i] == fw || fgot[i] != fgot[i] && fw != fw) {
						t.Fatalf("%s, element %d: got %d %v, want %d %v (-fuzzseed=%d)\n%s", names[ki], i, got[i], fgot[i], w, fw, seed,
							numbered(extractFunc(src.String(), names[ki])))
					}
				}
			}
		})
	}
}

// makeFuzzCase generates count kernels from seed, with inputs, and Go's results
// (nil without the go command); with -fuzzdir it saves them.
func makeFuzzCase(t *testing.T, seed uint64, count int) fuzzCase {
	r := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	var src strings.Builder
	src.WriteString(fuzzPrelude)
	fc := fuzzCase{Seed: seed}
	for i := range count {
		name := fmt.Sprintf("Fuzz%d", i)
		k := fuzzKernel(r, name)
		if *fuzzOnly < 0 || *fuzzOnly == i {
			fc.Names = append(fc.Names, name)
			src.WriteString("\n" + k)
		}
	}
	fc.Src = src.String()
	in := &fc.Inputs
	in.IA, in.IB, in.UA = edgeInts[int32](fuzzN), edgeInts[int64](fuzzN), edgeInts[uint8](fuzzN)
	in.FA, in.FB = specialFloats[float32](fuzzN), specialFloats[float64](fuzzN)
	for i := range in.FB {
		if math.IsNaN(in.FB[i]) || math.IsInf(in.FB[i], 0) {
			in.FB[i] = float64(i) // JSON has no NaN or infinity
		}
		if math.IsNaN(float64(in.FA[i])) || math.IsInf(float64(in.FA[i]), 0) {
			in.FA[i] = -float32(i)
		}
	}
	// Compile first: a generator or compiler error is the first thing to know.
	for _, name := range fc.Names {
		if _, err := gokernel.Compile("fuzz.go", fc.Src, name); err != nil {
			t.Fatalf("%s: %v\n%s", name, err, numbered(fc.Src))
		}
	}
	fc.Want = fuzzReference(t, fc.Src, fc.Names, in)
	if *fuzzDir != "" && fc.Want != nil {
		b, err := json.Marshal(fc)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(*fuzzDir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(*fuzzDir, "fuzzcase.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("saved in %s", *fuzzDir)
	}
	return fc
}

// loadFuzzCase reads -fuzzdir's case if it has one.
func loadFuzzCase(t *testing.T, fc *fuzzCase) bool {
	if *fuzzDir == "" {
		return false
	}
	b, err := os.ReadFile(filepath.Join(*fuzzDir, "fuzzcase.json"))
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, fc); err != nil {
		t.Fatal(err)
	}
	return true
}

// goCommand returns the go command's path, or "".
func goCommand() string {
	goCmd := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goCmd); err == nil {
		return goCmd
	}
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return ""
}

// fuzzReference builds and runs the kernels as Go and returns their results (nil,
// with the test skipped, without the go command).
func fuzzReference(t *testing.T, src string, names []string, inputs any) []byte {
	goCmd := goCommand()
	if goCmd == "" {
		t.Log("no go command: the generated kernels compiled, but there is no Go reference to compare with (see -fuzzdir)")
		return nil
	}
	dir := t.TempDir()
	var list strings.Builder
	for _, n := range names {
		list.WriteString(n + ", ")
	}
	prog := strings.Replace(src, "import (\n", "import (\n\t\"encoding/binary\"\n\t\"encoding/json\"\n\t\"os\"\n", 1) +
		"\nvar kernels = []func(kern.Thread, []int32, []int64, []uint8, []float32, []float64, []int64, []float64){" + list.String() + "}\n" + fuzzMain
	mainFile := filepath.Join(dir, "main.go")
	if err := os.WriteFile(mainFile, []byte(prog), 0o644); err != nil {
		t.Fatal(err)
	}
	// The program must be in this module to import package kern: an overlay puts it
	// in a directory that doesn't exist.
	wd, _ := os.Getwd()
	virt := filepath.Join(wd, "internal", "fuzzref", "main.go")
	ov, _ := json.Marshal(map[string]any{"Replace": map[string]string{virt: mainFile}})
	ovFile := filepath.Join(dir, "overlay.json")
	os.WriteFile(ovFile, ov, 0o644)
	in, _ := json.Marshal(inputs)
	inFile, outFile := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.bin")
	os.WriteFile(inFile, in, 0o644)
	exe := filepath.Join(dir, "fuzzref")
	cmd := exec.Command(goCmd, "build", "-overlay", ovFile, "-o", exe, "./internal/fuzzref")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the reference: %v\n%s\n%s", err, out, numbered(prog))
	}
	if out, err := exec.Command(exe, inFile, outFile).CombinedOutput(); err != nil {
		t.Fatalf("running the reference: %v\n%s", err, out)
	}
	res, err := os.ReadFile(outFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 16*fuzzN*len(names) {
		t.Fatalf("the reference wrote %d bytes", len(res))
	}
	return res
}

// extractFunc returns the source of function name and its helpers.
func extractFunc(src, name string) string {
	var b strings.Builder
	for _, part := range strings.Split(src, "\nfunc ") {
		if strings.HasPrefix(part, name+"(") || strings.HasPrefix(part, name+"_h") {
			b.WriteString("func " + part + "\n")
		}
	}
	return b.String()
}
