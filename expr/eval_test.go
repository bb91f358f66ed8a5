package expr

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/testenv"
)

// interp evaluates the IR for element i by walking the tree, one node at a time through
// the kernels with n = 1: an independent check of Program's chunking, buffer allocation,
// broadcasting and merging of equal subtrees.
func interp(n Node, inputs [][]Scalar, params []Scalar, i int) Scalar {
	switch n := n.(type) {
	case *Input:
		return inputs[n.Slot][i]
	case *Param:
		return params[n.Slot]
	case *Const:
		return n.Value
	}
	args := Operands(n)
	var in [3]uint64
	var ptrs [3]unsafe.Pointer
	for j, a := range args {
		v := interp(a, inputs, params, i)
		storeBits(unsafe.Pointer(&in[j]), v.t.Size(), v.bits)
		ptrs[j] = unsafe.Pointer(&in[j])
	}
	var out uint64
	kernelFor(n)(1, unsafe.Pointer(&out), ptrs[0], ptrs[1], ptrs[2])
	return ScalarFromBits(n.DType(), loadBits(unsafe.Pointer(&out), n.DType().Size()))
}

// exprGen writes random expressions over stdEnv's names.
type exprGen struct {
	r *rand.Rand
}

var (
	genLeaves = []string{"b", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
		"pf32", "wf", "wi", "wb", "k3", "wk", "uk", "1", "2", "0", "-1", "3", "7", "2.5", "0.5", "-0.0", "1e3", "0x10",
		"true", "false", "pi", "inf", "nan", "255", "65504"}
	genUnary  = []string{"-", "+", "!", "^"}
	genBinary = []string{"+", "-", "*", "/", "%", "&", "|", "^", "&^", "<<", ">>", "==", "!=", "<", "<=", ">", ">=", "&&", "||"}
	genTypes  = []string{"bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "bfloat16", "float32", "float64"}
)

func (g *exprGen) expr(depth int) string {
	if depth <= 0 || g.r.IntN(4) == 0 {
		return genLeaves[g.r.IntN(len(genLeaves))]
	}
	switch g.r.IntN(6) {
	case 0:
		return genUnary[g.r.IntN(len(genUnary))] + "(" + g.expr(depth-1) + ")"
	case 1, 2:
		return "(" + g.expr(depth-1) + " " + genBinary[g.r.IntN(len(genBinary))] + " " + g.expr(depth-1) + ")"
	case 3:
		return genTypes[g.r.IntN(len(genTypes))] + "(" + g.expr(depth-1) + ")"
	case 4:
		switch g.r.IntN(3) {
		case 0:
			return "where(" + g.expr(depth-1) + ", " + g.expr(depth-1) + ", " + g.expr(depth-1) + ")"
		case 1:
			return "clip(" + g.expr(depth-1) + ", " + g.expr(depth-1) + ", " + g.expr(depth-1) + ")"
		}
	}
	name := sortedFuncNames[g.r.IntN(len(sortedFuncNames))]
	args := make([]string, funcNames[name])
	for i := range args {
		args[i] = g.expr(depth - 1)
	}
	return name + "(" + strings.Join(args, ", ") + ")"
}

var sortedFuncNames = func() []string {
	var s []string
	for n := range funcNames {
		s = append(s, n)
	}
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}()

// randomInputs makes n random elements for each operand of stdEnv, and the parameters.
func randomInputs(r *rand.Rand, n int) ([][]Scalar, []any, []Scalar, []any) {
	cols := make([][]Scalar, len(dtype.All))
	slices := make([]any, len(dtype.All))
	for i, t := range dtype.All {
		sp := specials(t, n, r)
		r.Shuffle(len(sp), func(a, b int) { sp[a], sp[b] = sp[b], sp[a] })
		cols[i] = sp[:n]
		slices[i] = toSlice(t, cols[i])
	}
	ps := []Scalar{ScalarOf(float32(r.NormFloat64())), ScalarOf(r.NormFloat64() * 100), ScalarOf(r.Int64N(1000) - 500), ScalarOf(r.IntN(2) == 0)}
	pa := []any{ps[0], ps[1].Float64(), ps[2].Int64(), ps[3].Bool()}
	return cols, slices, ps, pa
}

// checkAgainstInterp evaluates e with a Program over the inputs and compares every
// element with interp.
func checkAgainstInterp(t testing.TB, e *Expr, cols [][]Scalar, slices []any, ps []Scalar, pa []any, n int) {
	t.Helper()
	p, err := e.Compile()
	if err != nil {
		t.Fatalf("Compile(%s): %v", e, err)
	}
	in := make([]any, len(slices))
	for i, s := range slices {
		in[i] = sliceHead(s, n)
	}
	out := toSlice(e.DType(), make([]Scalar, n))
	if err := p.Eval(out, in, pa); err != nil {
		t.Fatalf("Eval(%s): %v", e, err)
	}
	for i := 0; i < n; i++ {
		w := interp(e.Root, cols, ps, i)
		if g := fromSlice(e.DType(), out, i); !sameValue(g, w) {
			t.Fatalf("%s: element %d of %d = %v, interpreter gives %v", e, i, n, g, w)
		}
	}
}

// sliceHead returns s[:n] for a slice made by toSlice.
func sliceHead(s any, n int) any {
	switch s := s.(type) {
	case []bool:
		return s[:n]
	case []int8:
		return s[:n]
	case []int16:
		return s[:n]
	case []int32:
		return s[:n]
	case []int64:
		return s[:n]
	case []uint8:
		return s[:n]
	case []uint16:
		return s[:n]
	case []uint32:
		return s[:n]
	case []uint64:
		return s[:n]
	case []float32:
		return s[:n]
	case []float64:
		return s[:n]
	}
	panic("bad slice")
}

// TestEvalMatchesInterp checks Programs of random expressions against the tree-walking
// interpreter, on lengths around the chunk size.
func TestEvalMatchesInterp(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 1))
	g := &exprGen{r}
	env := stdEnv()
	const n = 2*ChunkSize + 77
	cols, slices, ps, pa := randomInputs(r, n)
	ok := 0
	tries := 4000
	if testing.Short() {
		tries = 500
	}
	for i := 0; i < tries; i++ {
		src := g.expr(4)
		e, err := Parse(src, env)
		if err != nil {
			continue
		}
		ok++
		if err := Validate(e.Root); err != nil {
			t.Fatalf("%q: invalid IR %v", src, err)
		}
		checkRoundTrip(t, e, env)
		for _, m := range []int{n, 1, ChunkSize, ChunkSize + 1} {
			checkAgainstInterp(t, e, cols, slices, ps, pa, m)
		}
	}
	if ok < tries/10 {
		t.Errorf("only %d of %d random expressions parsed", ok, tries)
	}
	t.Logf("%d of %d random expressions type-checked", ok, tries)
}

// TestEvalShared checks an IR that shares subtrees and reads an input twice.
func TestEvalShared(t *testing.T) {
	x := &Input{Slot: 0, Type: dtype.Float32}
	sq := &Binary{Op: Mul, X: x, Y: x, Type: dtype.Float32}
	a := &Param{Slot: 0, Type: dtype.Float32}
	root := &Binary{Op: Add, X: &Binary{Op: Mul, X: sq, Y: a, Type: dtype.Float32}, Y: sq, Type: dtype.Float32}
	p, err := (&Expr{Root: root}).Compile()
	if err != nil {
		t.Fatal(err)
	}
	xs := []float32{1, 2, 3}
	out := make([]float32, 3)
	if err := p.Eval(out, []any{xs}, []any{float32(10)}); err != nil {
		t.Fatal(err)
	}
	for i, v := range xs {
		if out[i] != v*v*10+v*v {
			t.Errorf("element %d = %v", i, out[i])
		}
	}
}

func TestEvalInPlace(t *testing.T) {
	env := Env{"x": OperandDecl(0, dtype.Float64), "y": OperandDecl(1, dtype.Float64)}
	p, err := MustParse("sqrt(x*x + y*y) + x", env).Compile()
	if err != nil {
		t.Fatal(err)
	}
	const n = 3*ChunkSize + 5
	x, y := make([]float64, n), make([]float64, n)
	for i := range x {
		x[i], y[i] = float64(i), float64(2*i)
	}
	if err := p.Eval(x, []any{x, y}, nil); err != nil {
		t.Fatal(err)
	}
	for i := range x {
		if w := math.Sqrt(float64(i*i+4*i*i)) + float64(i); x[i] != w {
			t.Fatalf("x[%d] = %v, want %v", i, x[i], w)
		}
	}
}

// TestEvalLeaves checks expressions that are only an input, a parameter or a constant.
func TestEvalLeaves(t *testing.T) {
	env := Env{"x": OperandDecl(2, dtype.Int16), "a": ParamDecl(1, dtype.Float16)}
	for _, c := range []struct {
		src  string
		want func(i int) uint64
	}{
		{"x", func(i int) uint64 { return uint64(uint16(int16(i - 100))) }},
		{"a", func(int) uint64 { return 0x3c00 }},
		{"int16(7)", func(int) uint64 { return 7 }},
		{"float16(a * 2)", func(int) uint64 { return 0x4000 }},
	} {
		e := MustParse(c.src, env)
		p, err := e.Compile()
		if err != nil {
			t.Fatal(err)
		}
		if p.NumInputs() != 3*len(e.Inputs) || p.NumParams() != 2*len(e.Params) {
			t.Errorf("%s: NumInputs %d NumParams %d", c.src, p.NumInputs(), p.NumParams())
		}
		const n = ChunkSize + 3
		xs := make([]int16, n)
		for i := range xs {
			xs[i] = int16(i - 100)
		}
		outT := e.DType()
		vs := make([]Scalar, n)
		out := toSlice(outT, vs)
		if err := p.Eval(out, []any{nil, nil, xs}, []any{nil, uint16(0x3c00)}); err != nil {
			t.Fatalf("%s: %v", c.src, err)
		}
		for i := 0; i < n; i++ {
			if g := fromSlice(outT, out, i).bits; g != c.want(i) {
				t.Fatalf("%s: element %d = %#x, want %#x", c.src, i, g, c.want(i))
			}
		}
	}
}

func TestEvalErrors(t *testing.T) {
	env := Env{"x": OperandDecl(0, dtype.Float32), "h": OperandDecl(1, dtype.Float16), "a": ParamDecl(0, dtype.Int32)}
	p, err := MustParse("x + float32(h) * float32(a)", env).Compile()
	if err != nil {
		t.Fatal(err)
	}
	x, h, out := make([]float32, 4), make([]uint16, 4), make([]float32, 4)
	good := func() error { return p.Eval(out, []any{x, h}, []any{int32(2)}) }
	if err := good(); err != nil {
		t.Fatal(err)
	}
	bad := map[string]func() error{
		"output type":  func() error { return p.Eval(make([]float64, 4), []any{x, h}, []any{int32(2)}) },
		"output kind":  func() error { return p.Eval(3, []any{x, h}, []any{int32(2)}) },
		"input type":   func() error { return p.Eval(out, []any{h, h}, []any{int32(2)}) },
		"input length": func() error { return p.Eval(out, []any{x[:3], h}, []any{int32(2)}) },
		"nil input":    func() error { return p.Eval(out, []any{x, nil}, []any{int32(2)}) },
		"few inputs":   func() error { return p.Eval(out, []any{x}, []any{int32(2)}) },
		"param type":   func() error { return p.Eval(out, []any{x, h}, []any{int64(2)}) },
		"param scalar": func() error { return p.Eval(out, []any{x, h}, []any{ScalarOf(2.0)}) },
		"few params":   func() error { return p.Eval(out, []any{x, h}, nil) },
		"param nil":    func() error { return p.Eval(out, []any{x, h}, []any{nil}) },
	}
	for name, f := range bad {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		} else if !strings.HasPrefix(err.Error(), "expr: ") {
			t.Errorf("%s: error %q lacks the package prefix", name, err)
		}
	}
	if err := p.Eval(out, []any{x, h}, []any{ScalarOf(int32(2))}); err != nil {
		t.Errorf("Scalar parameter: %v", err)
	}
	// Invalid hand-built IR does not compile.
	for _, root := range []Node{
		nil,
		&Binary{Op: Add, X: &Input{Type: dtype.Float32}, Y: &Input{Slot: 1, Type: dtype.Float64}, Type: dtype.Float32},
		&Binary{Op: Add, X: &Input{Type: dtype.Float16}, Y: &Input{Type: dtype.Float16}, Type: dtype.Float16},
		&Unary{Op: Not, X: &Input{Type: dtype.Int8}, Type: dtype.Int8},
		&Call{Func: Sqrt, Args: []Node{&Input{Type: dtype.Int32}}, Type: dtype.Int32},
		&Call{Func: Pow, Args: []Node{&Input{Type: dtype.Int32}}, Type: dtype.Int32},
		&Select{Cond: &Input{Type: dtype.Int8}, X: &Const{ScalarOf(1.0)}, Y: &Const{ScalarOf(1.0)}, Type: dtype.Float64},
		&Cast{X: &Input{Slot: -1, Type: dtype.Int8}, Type: dtype.Float32},
		&Binary{Op: Add, X: &Input{Type: dtype.Int8}, Y: &Input{Type: dtype.Int16}, Type: dtype.Int16},
		&Binary{Op: Add, X: &Input{Type: dtype.Int8}, Y: &Input{Slot: 0, Type: dtype.Int16}, Type: dtype.Int8},
		&Const{},
	} {
		if _, err := (&Expr{Root: root}).Compile(); err == nil {
			t.Errorf("Compile(%s) succeeded", Key(root))
		}
	}
	// An input slot read with two types is rejected too.
	twice := &Binary{Op: Add, X: &Cast{X: &Input{Type: dtype.Int8}, Type: dtype.Int16}, Y: &Input{Type: dtype.Int16}, Type: dtype.Int16}
	if _, err := (&Expr{Root: twice}).Compile(); err == nil {
		t.Error("slot read as int8 and int16 compiled")
	}
}

func TestEvalBytes(t *testing.T) {
	env := Env{"x": OperandDecl(0, dtype.Float64), "a": ParamDecl(0, dtype.Float64)}
	p, err := MustParse("x * a", env).Compile()
	if err != nil {
		t.Fatal(err)
	}
	words := make([]uint64, 9)
	for i := range words {
		words[i] = math.Float64bits(float64(i))
	}
	in := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), 72)
	out := make([]uint64, 9)
	ob := unsafe.Slice((*byte)(unsafe.Pointer(&out[0])), 72)
	if err := p.EvalBytes(9, ob, [][]byte{in}, []Scalar{ScalarOf(3.0)}); err != nil {
		t.Fatal(err)
	}
	for i := range out {
		if g := math.Float64frombits(out[i]); g != float64(3*i) {
			t.Errorf("element %d = %v", i, g)
		}
	}
	for name, err := range map[string]error{
		"short":     p.EvalBytes(10, ob, [][]byte{in}, []Scalar{ScalarOf(3.0)}),
		"misalign":  p.EvalBytes(2, ob, [][]byte{in[1:]}, []Scalar{ScalarOf(3.0)}),
		"param":     p.EvalBytes(2, ob, [][]byte{in}, []Scalar{ScalarOf(float32(3))}),
		"negative":  p.EvalBytes(-1, ob, [][]byte{in}, []Scalar{ScalarOf(3.0)}),
		"no inputs": p.EvalBytes(2, ob, nil, []Scalar{ScalarOf(3.0)}),
	} {
		if err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := p.EvalBytes(0, nil, [][]byte{nil}, []Scalar{ScalarOf(3.0)}); err != nil {
		t.Errorf("empty: %v", err)
	}
}

// TestEvalConcurrent evaluates one Program from many goroutines at once, each on its own
// data (run with -race).
func TestEvalConcurrent(t *testing.T) {
	env := Env{"x": OperandDecl(0, dtype.Float32), "a": ParamDecl(0, dtype.Float32), "b": WeakParamDecl(1, dtype.Float64)}
	p, err := MustParse("where(x > 0, a*x + b, exp(x))", env).Compile()
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := 1000 + 517*g
			x, out := make([]float32, n), make([]float32, n)
			for i := range x {
				x[i] = float32(i%7) - 3
			}
			for rep := 0; rep < 20; rep++ {
				a := float32(g + rep)
				if err := p.Eval(out, []any{x}, []any{a, float64(rep)}); err != nil {
					errs <- err
					return
				}
				for i, v := range x {
					w := float32(math.Exp(float64(v)))
					if v > 0 {
						w = a*v + float32(rep)
					}
					if out[i] != w {
						errs <- fmt.Errorf("goroutine %d rep %d: out[%d] = %v, want %v", g, rep, i, out[i], w)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

func TestEvalAllocs(t *testing.T) {
	if testenv.Race {
		t.Skip("sync.Pool drops frames under the race detector")
	}
	env := Env{"x": OperandDecl(0, dtype.Float32), "a": ParamDecl(0, dtype.Float32)}
	p, err := MustParse("a*x + 1", env).Compile()
	if err != nil {
		t.Fatal(err)
	}
	x, out := make([]float32, 5000), make([]float32, 5000)
	var o any = out // converting a slice to an interface allocates: do it once
	in, params := []any{x}, []any{float32(2)}
	if err := p.Eval(o, in, params); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { p.Eval(o, in, params) }); n > 0 {
		t.Errorf("Eval allocates %v times per call", n)
	}
}

func TestPostorder(t *testing.T) {
	x := &Input{Slot: 0, Type: dtype.Float32}
	sq := &Binary{Op: Mul, X: x, Y: x, Type: dtype.Float32}
	root := &Call{Func: Sqrt, Args: []Node{&Binary{Op: Add, X: sq, Y: sq, Type: dtype.Float32}}, Type: dtype.Float32}
	got := Postorder(root)
	if len(got) != 4 || got[0] != Node(x) || got[1] != Node(sq) || got[3] != Node(root) {
		t.Errorf("Postorder = %v", got)
	}
	if Operands(x) != nil || len(Operands(root)) != 1 {
		t.Error("Operands")
	}
	if (&Expr{}).DType() != dtype.Invalid {
		t.Error("DType of an empty Expr")
	}
}
