package kernel

import (
	"fmt"
	"hash/fnv"
	"math/rand"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/ptx"

	"github.com/go-gpu/gpu/internal/testenv"
)

// The PTX elementwise kernels are checked in two ways without a GPU: ptxas assembles
// them (sm_90 and sm_80, no stack frame, no spills), and the PTX simulator
// (internal/ptxsim) runs them on random inputs with special values, compared with the
// CPU implementation (Elementwise.CPU) bit for bit, NaN payloads aside.
//
// The default run covers every operator, function and conversion for every type, with
// the layouts (vector or not, 64-bit indices or not, scalar and strided operands)
// rotating over the cases. GPU_KERNEL_SWEEP=1 runs every case in every layout, on every
// size, and assembles every kernel.

var sweep = os.Getenv("GPU_KERNEL_SWEEP") != ""

var ewSizes = []int{1, 2, 31, 33, 255, 257, 1023, 1025, 37, 4099}

// hashOf gives a stable small number for a case name, to rotate layouts and sizes.
func hashOf(s string) int {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int(h.Sum32() & 0x7fffffff)
}

// env is the environment of the operator tables: x and y operands of type t (slots 0
// and 1), c a bool operand (slot 2), p a parameter of type t.
func env(t dtype.DType) expr.Env {
	return expr.Env{
		"x": expr.OperandDecl(0, t), "y": expr.OperandDecl(1, t), "c": expr.OperandDecl(2, dtype.Bool),
		"p": expr.ParamDecl(0, t),
	}
}

var opSources = []string{
	"-x", "^x", "!x", "x + y", "x - y", "x * y", "x / y", "x % y", "x & y", "x | y", "x ^ y",
	"x &^ y", "x << y", "x >> y", "x == y", "x != y", "x < y", "x <= y", "x > y", "x >= y",
	"x && y", "x || y", "where(c, x, y)", "where(x > y, x, p)", "clip(x, y, p)", "x*p + y", "p",
	"x", "c && (x < y) || !c && (x >= p)", "x == x", "x*x - y*y",
}

var funcs1 = []string{
	"abs", "sqrt", "cbrt", "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sin", "cos",
	"tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "floor",
	"ceil", "trunc", "rint", "round", "sign", "isnan", "isinf", "isfinite", "signbit", "square",
	"reciprocal", "erf",
}

var funcs2 = []string{"atan2", "pow", "hypot", "minimum", "maximum", "fmin", "fmax", "copysign", "fmod",
	"floor_divide", "remainder", "mod"}

// callsDefined reports whether the IR calls a function that package expr defines in the
// other operations (expr.Definition: floor_divide, remainder), whose lowering inlines
// the definition.
func callsDefined(n expr.Node) bool {
	found := false
	expr.Walk(n, func(n expr.Node) {
		if c, ok := n.(*expr.Call); ok && expr.Definition(c) != nil {
			found = true
		}
	})
	return found
}

// usesLibrary reports whether the IR calls the device math library (whose results may
// differ from the CPU evaluator's by a few ulps) and whether all its calls are supported.
func usesLibrary(n expr.Node) (uses, supported bool) {
	supported = true
	expr.Walk(n, func(n expr.Node) {
		c, ok := n.(*expr.Call)
		if !ok {
			return
		}
		t := c.Args[0].DType()
		if _, lib := ewMathFns[c.Func]; lib || (c.Func == expr.Pow && ewIsFloat(t)) {
			uses = true
		}
		supported = supported && ElementwisePTXSupports(c.Func, t)
	})
	return uses, supported
}

// layoutVariant is one way to lay out a case's operands.
type layoutVariant struct {
	vector, index64, scalarY, misaligned bool
}

func (v layoutVariant) String() string {
	return fmt.Sprintf("vec=%v/i64=%v/scalarY=%v", v.vector, v.index64, v.scalarY)
}

var variants = []layoutVariant{
	{vector: true}, {misaligned: true}, {vector: true, index64: true}, {index64: true},
	{vector: true, scalarY: true}, {scalarY: true, misaligned: true},
}

// opCase is an expression of the tables over operands x, y, c.
type opCase struct {
	name string
	ex   *expr.Expr
	t    dtype.DType
}

// opCases returns the table cases that parse: operators, functions and conversions for
// every type.
func opCases(t testing.TB) []opCase {
	var cases []opCase
	add := func(src string, ty dtype.DType) {
		ex, err := expr.Parse(src, env(ty))
		if err != nil {
			return // not defined on this type (% on bool, ^ on floats ...)
		}
		cases = append(cases, opCase{name: fmt.Sprintf("%v/%s", ty, src), ex: ex, t: ty})
	}
	for _, ty := range allTypes {
		for _, s := range opSources {
			add(s, ty)
		}
		for _, f := range funcs1 {
			add(f+"(x)", ty)
		}
		for _, f := range funcs2 {
			add(f+"(x, y)", ty)
		}
		for _, to := range allTypes {
			add(to.String()+"(x)", ty)
		}
	}
	if len(cases) < 600 {
		t.Fatalf("only %d table cases parse", len(cases))
	}
	return cases
}

// specFor builds the spec of a table case in a layout.
func specFor(oc opCase, v layoutVariant) *Elementwise {
	yk := Contig
	if v.scalarY {
		yk = Scalar
	}
	return &Elementwise{
		Expr:    oc.ex,
		Ins:     []Operand{{oc.t, Contig}, {oc.t, yk}, {dtype.Bool, Contig}},
		Out:     Operand{oc.ex.DType(), Contig},
		Index64: v.index64,
		Vector:  v.vector,
	}
}

func paramsFor(ex *expr.Expr, r *rand.Rand) []expr.Scalar {
	var ps []expr.Scalar
	for _, p := range ex.Params {
		ps = append(ps, expr.ScalarFromBits(p.DType, randBits(r, p.DType)))
	}
	return ps
}

// runCase generates, runs and checks one spec on the given sizes, with the grids
// Geometry chooses (for 1 and 2 multiprocessors) and an odd one.
func runCase(t *testing.T, e *Elementwise, sizes []int, seed int64, misaligned bool, ulpTol uint64) uint64 {
	return runCaseRef(t, e, sizes, seed, misaligned, ulpTol, nil)
}

// runCaseRef is runCase with a reference replacing the CPU's (see ewCase.ref); without
// one, inputs where Go's math.Log is wrong are exempt.
func runCaseRef(t *testing.T, e *Elementwise, sizes []int, seed int64, misaligned bool, ulpTol uint64,
	ref func(int, [][]byte) ([]byte, error)) uint64 {
	var exempt func([]uint64) bool
	if ref == nil {
		exempt = goLogBug(e.Expr)
	}
	return runCaseExempt(t, e, sizes, seed, misaligned, ulpTol, exempt, ref)
}

// goLogBug returns, for log(x) and log10(x) of a float64 operand, a test of the inputs
// where the CPU reference is wrong: Go's math.Log on amd64 mishandles subnormal
// arguments (golang/go#56600: log(5e-324) gives -709.09 instead of -744.44).
func goLogBug(ex *expr.Expr) func(in []uint64) bool {
	c, ok := ex.Root.(*expr.Call)
	if !ok || (c.Func != expr.Log && c.Func != expr.Log10) || c.Args[0].DType() != dtype.Float64 {
		return nil
	}
	if _, ok := c.Args[0].(*expr.Input); !ok {
		return nil
	}
	return func(in []uint64) bool {
		x := in[0] &^ (1 << 63)
		return x != 0 && x < 1<<52
	}
}

func runCaseExempt(t *testing.T, e *Elementwise, sizes []int, seed int64, misaligned bool, ulpTol uint64,
	exempt func([]uint64) bool, ref func(int, [][]byte) ([]byte, error)) uint64 {
	t.Helper()
	src, entry, err := e.PTX(9, 0)
	if err != nil {
		t.Fatalf("%s: %v", e.Key(), err)
	}
	r := rand.New(rand.NewSource(seed))
	var worst uint64
	for k, n := range sizes {
		grid, blk := e.Geometry(n, 1+k%2)
		if k%3 == 2 {
			grid, blk = 3, 37 // not a warp multiple, several grid-stride steps
		}
		c := &ewCase{e: e, n: n, grid: grid, blk: blk, seed: r.Int63(), misaligned: misaligned,
			params: paramsFor(e.Expr, r), ulpTol: ulpTol, exempt: exempt, ref: ref}
		worst = max(worst, c.check(t, c.run(t, src, entry)))
	}
	return worst
}

// TestElementwisePTXTable runs every operator, function and conversion of the tables for
// every type on the simulator against the CPU implementation.
func TestElementwisePTXTable(t *testing.T) {
	cases := opCases(t)
	unsupported := 0
	var noMirror []string
	for _, oc := range cases {
		uses, ok := usesLibrary(oc.ex.Root)
		if !ok {
			e := specFor(oc, variants[0])
			if _, _, err := e.PTX(9, 0); err == nil {
				t.Errorf("%s: PTX accepted a function the library lacks", oc.name)
			}
			unsupported++
			continue
		}
		// Library calls are checked bit for bit against the Go mirrors of package
		// ptx/gomath (the CPU evaluator uses Go's math package: see
		// TestElementwisePTXMathMirrors). A function newer than the test's table of
		// mirrors is left to package ptx's own tests.
		ref := mirrorRef(oc.ex)
		if uses && ref == nil {
			noMirror = append(noMirror, oc.name)
			continue
		}
		h := hashOf(oc.name)
		vs := []layoutVariant{variants[h%len(variants)]}
		sizes := []int{ewSizes[h%9]}
		switch {
		case sweep:
			vs, sizes = variants, ewSizes
		case testenv.Race && h%4 != 0:
			continue
		}
		oc := oc
		t.Run(oc.name, func(t *testing.T) {
			t.Parallel()
			for _, v := range vs {
				runCaseRef(t, specFor(oc, v), sizes, int64(h), v.misaligned, 0, ref)
			}
		})
	}
	t.Cleanup(func() {
		t.Logf("%d table cases; %d skipped for functions the PTX math library lacks, %d for library functions without a Go mirror known to the test: %v",
			len(cases), unsupported, len(noMirror), noMirror)
	})
}

// TestElementwisePTXAssemble assembles the table kernels with ptxas for sm_90 and sm_80:
// no stack frame and no spills. The default run assembles every sixth case in one layout
// (rotating) for sm_90 and every 24th for sm_80, and every case of a defined function
// (floor_divide, remainder: their lowering is the longest) for both; the sweep every
// case in every layout for both.
func TestElementwisePTXAssemble(t *testing.T) {
	ptxas := testenv.Ptxas(t)
	cases := opCases(t)
	type job struct {
		name  string
		e     *Elementwise
		major int
	}
	var jobs []job
	for i, oc := range cases {
		uses, ok := usesLibrary(oc.ex.Root)
		if !ok || (uses && mirrorRef(oc.ex) == nil) {
			continue // unsupported, or a library function newer than the test (ptx tests it)
		}
		h := hashOf(oc.name)
		vs := []layoutVariant{variants[h%len(variants)]}
		every := 6 // the race detector does not look into ptxas: a smaller sample
		if testenv.Race {
			every = 24
		}
		defined := callsDefined(oc.ex.Root)
		if sweep {
			vs = variants
		} else if i%every != 0 && !defined {
			continue
		}
		for _, v := range vs {
			jobs = append(jobs, job{oc.name + "/" + v.String(), specFor(oc, v), 9})
			if sweep || defined || i%(4*every) == 0 {
				jobs = append(jobs, job{oc.name + "/" + v.String(), specFor(oc, v), 8})
			}
		}
	}
	var mu sync.Mutex
	maxRegs := map[string]int{}
	for _, j := range jobs {
		j := j
		t.Run(fmt.Sprintf("sm_%d0/%s", j.major, j.name), func(t *testing.T) {
			t.Parallel()
			src, _, err := j.e.PTX(j.major, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := assemble(t, ptxas, src, fmt.Sprintf("sm_%d0", j.major), t.TempDir())
			mu.Lock()
			k := j.e.Out.DType.String()
			maxRegs[k] = max(maxRegs[k], r.regs)
			mu.Unlock()
		})
	}
	t.Cleanup(func() { t.Logf("%d kernels assembled; most registers by output type: %v", len(jobs), maxRegs) })
}

// TestElementwisePTXErrors: invalid specs and missing library functions are errors.
func TestElementwisePTXErrors(t *testing.T) {
	ex := expr.MustParse("x + y", env(dtype.Float32))
	bad := []*Elementwise{
		{Expr: ex, Ins: []Operand{{dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}},
		{Expr: ex, Ins: []Operand{{dtype.Float32, Strided}, {dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}, Rank: 1, Vector: true},
		{Expr: ex, Ins: []Operand{{dtype.Float64, Contig}, {dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}},
	}
	for _, e := range bad {
		if _, _, err := e.PTX(9, 0); err == nil {
			t.Errorf("%s: no error", e.Key())
		}
	}
	for _, f := range []expr.Func{expr.Sin, expr.Erf, expr.Atan2, expr.Acosh} {
		if ElementwisePTXSupports(f, dtype.Float64) {
			continue
		}
		src := f.String() + "(x)"
		if f.NumArgs() == 2 {
			src = f.String() + "(x, y)"
		}
		e := specFor(opCase{ex: expr.MustParse(src, env(dtype.Float64)), t: dtype.Float64}, variants[0])
		_, _, err := e.PTX(9, 0)
		if err == nil || !strings.Contains(err.Error(), "math library") {
			t.Errorf("%s on float64: err = %v, want the missing library function", f, err)
		}
	}
}

// TestElementwisePTXEntry: the entry is derived from Key, and the text is deterministic.
func TestElementwisePTXEntry(t *testing.T) {
	ex := expr.MustParse("x*p + y", env(dtype.Float32))
	a := specFor(opCase{ex: ex, t: dtype.Float32}, variants[0])
	b := specFor(opCase{ex: ex, t: dtype.Float32}, variants[1])
	sa, ea, _ := a.PTX(9, 0)
	sa2, ea2, _ := a.PTX(9, 0)
	_, eb, _ := b.PTX(9, 0)
	if sa != sa2 || ea != ea2 || ea == eb || !strings.HasPrefix(ea, "ew_") || !strings.Contains(sa, ".entry "+ea+"(") {
		t.Errorf("entries %q %q %q", ea, ea2, eb)
	}
	if !strings.Contains(sa, ".target sm_90") {
		t.Errorf("no sm_90 target")
	}
	if s80, _, _ := a.PTX(8, 0); !strings.Contains(s80, ".target sm_80") {
		t.Errorf("no sm_80 target")
	}
}

// TestElementwisePTXOldTargets runs the bfloat16 conversions of a pre-sm_80 target (the
// integer rounding path) on the simulator and assembles them for sm_70 where the
// assembler found still knows it (CUDA 13's doesn't).
func TestElementwisePTXOldTargets(t *testing.T) {
	for _, from := range allTypes {
		oc := opCase{ex: expr.MustParse("bfloat16(x)", env(from)), t: from}
		for _, v := range variants[:2] {
			e := specFor(oc, v)
			src, entry, err := e.PTX(7, 0)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(src, "cvt.rn.bf16") {
				t.Errorf("sm_70 kernel uses bf16 instructions")
			}
			r := rand.New(rand.NewSource(int64(from)))
			sizes := []int{33, 1025}
			if testenv.Race {
				sizes = sizes[:1]
			}
			for _, n := range sizes {
				grid, blk := e.Geometry(n, 1)
				c := &ewCase{e: e, n: n, grid: grid, blk: blk, seed: r.Int63(), misaligned: v.misaligned}
				c.check(t, c.run(t, src, entry))
			}
			if p := testenv.CUDATool("ptxas"); p != "" && testenv.PtxasSupports(p, "sm_70") { // not CUDA 13's
				assemble(t, p, src, "sm_70", t.TempDir())
			}
		}
	}
}

// TestElementwisePTXMathMirrors: a kernel computing one library function of a float32
// or float64 input equals the Go mirror (package ptx/gomath) bit for bit, and the CPU
// evaluator (Go's math package in float64) within a few ulps, which the log reports.
func TestElementwisePTXMathMirrors(t *testing.T) {
	for _, ty := range []dtype.DType{dtype.Float32, dtype.Float64} {
		for _, fn := range ptx.MathFns(ewRT(ty)) {
			mirror := mirrorOf(fn, ty)
			ef, ok := exprFuncOf(fn)
			if !ok {
				continue
			}
			name := fmt.Sprintf("%v/%v", ty, fn)
			t.Run(name, func(t *testing.T) {
				if mirror == nil {
					t.Skipf("no Go mirror of %v for %v known to the test", fn, ty)
				}
				src := ef.String() + "(x)"
				if fn.NumArgs() == 2 {
					src = ef.String() + "(x, y)"
				}
				ex := expr.MustParse(src, env(ty))
				e := specFor(opCase{ex: ex, t: ty}, variants[hashOf(name)%2])
				pt, entry, err := e.PTX(9, 0)
				if err != nil {
					t.Fatal(err)
				}
				r := rand.New(rand.NewSource(int64(hashOf(name))))
				c := &ewCase{e: e, n: 1025, seed: r.Int63(), misaligned: !e.Vector}
				if testenv.Race {
					c.n = 129
				}
				c.grid, c.blk = e.Geometry(c.n, 2)
				res := c.run(t, pt, entry)
				size := ty.Size()
				var cpuWorst, worstX, worstY uint64
				for i, off := range res.outOffs {
					x := getBits(res.logical[0][i*size:], size)
					y := getBits(res.logical[1][i*size:], size)
					want := mirror(x, y)
					got := getBits(res.got[off:], size)
					if got != want && !(isNaNBits(ty, got) && isNaNBits(ty, want)) {
						t.Errorf("%s(%#x, %#x): kernel %#x, mirror %#x", fn, x, y, got, want)
					}
					cpu := getBits(res.want[off:], size)
					switch {
					case isNaNBits(ty, cpu) != isNaNBits(ty, want):
						t.Logf("%s(%#x, %#x): CPU evaluator %#x, mirror %#x (NaN mismatch)", fn, x, y, cpu, want)
					case !isNaNBits(ty, cpu):
						if d := ulps(ty, cpu, want); d > cpuWorst {
							cpuWorst, worstX, worstY = d, x, y
						}
					}
				}
				t.Logf("%s: CPU evaluator vs mirror: max %d ulps over %d inputs (at %#x, %#x)", name, cpuWorst, c.n, worstX, worstY)
			})
		}
	}
}

func exprFuncOf(fn ptx.MathFn) (expr.Func, bool) {
	for ef, mf := range ewMathFns {
		if mf == fn {
			return ef, true
		}
	}
	if fn == ptx.Pow {
		return expr.Pow, true
	}
	return 0, false
}
