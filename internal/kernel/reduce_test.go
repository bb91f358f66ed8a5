package kernel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"

	"github.com/go-gpu/gpu/internal/testenv"
)

var (
	redReRegs  = regexp.MustCompile(`Compiling entry function '(\w+)'[\s\S]*?Used (\d+) registers`)
	redReSpill = regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
	redReStack = regexp.MustCompile(`(\d+) bytes stack frame`)
)

// redAssemble compiles the modules with ptxas for sm_90, several kernels per run, and
// returns each entry's register count. It fails on errors, spills and stack use.
func redAssemble(t *testing.T, mods map[string]string) map[string]int {
	t.Helper()
	p := testenv.Ptxas(t)
	names := make([]string, 0, len(mods))
	for n := range mods {
		names = append(names, n)
	}
	sort.Strings(names)
	regs := map[string]int{}
	dir := t.TempDir()
	// Kernels without device functions can share a module: strip the headers.
	const batch = 24
	var srcs []string
	for i := 0; i < len(names); i += batch {
		var b strings.Builder
		b.WriteString(".version 7.8\n.target sm_90\n.address_size 64\n")
		for _, n := range names[i:min(i+batch, len(names))] {
			src := mods[n]
			if strings.Contains(src, ".func") {
				srcs = append(srcs, src)
				continue
			}
			j := strings.Index(src, ".visible .entry")
			b.WriteString(src[j:])
			b.WriteString("\n")
		}
		srcs = append(srcs, b.String())
	}
	var mu sync.Mutex
	var errs []string
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for k, src := range srcs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			in := filepath.Join(dir, fmt.Sprintf("m%d.ptx", k))
			if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
				mu.Lock()
				errs = append(errs, err.Error())
				mu.Unlock()
				return
			}
			out, err := exec.Command(p, "-arch=sm_90", "-v", in, "-o", in+".cubin").CombinedOutput()
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("ptxas: %v\n%s", err, out))
				return
			}
			log := string(out)
			for _, m := range redReRegs.FindAllStringSubmatch(log, -1) {
				var n int
				fmt.Sscan(m[2], &n)
				regs[m[1]] = n
			}
			for _, m := range redReSpill.FindAllStringSubmatch(log, -1) {
				if m[1] != "0" || m[2] != "0" {
					errs = append(errs, "spills: "+m[0])
				}
			}
			for _, m := range redReStack.FindAllStringSubmatch(log, -1) {
				if m[1] != "0" {
					errs = append(errs, "stack frame: "+m[0])
				}
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		t.Fatal(strings.Join(errs, "\n"))
	}
	return regs
}

// redSpecs returns a matrix of reduction kernels: every operation and accumulator
// type, conversions, and every strategy shape.
func redSpecs() []*Reduce {
	var out []*Reduce
	strategies := []ReduceGPU{
		{Lanes: 1, Block: 256, Vec: 1, Unroll: 4},
		{Lanes: 32, Block: 256, Vec: 4, Unroll: 4},
		{Lanes: 256, Block: 256, Vec: 2, Unroll: 4, Partial: true},
		{Cols: true, Lanes: 8, Block: 256, Vec: 4, Unroll: 4, Partial: true},
		{Cols: true, Lanes: 64, Block: 192, Vec: 1, Unroll: 4},
	}
	ops := []Op{OpSum, OpProd, OpMin, OpMax, OpOr, OpAnd, OpArgMin, OpArgMax}
	for _, op := range ops {
		for _, t := range dtype.All {
			if t == dtype.Float16 || t == dtype.BFloat16 {
				continue
			}
			acc := t
			switch op {
			case OpOr, OpAnd:
				acc = dtype.Bool
			case OpSum, OpProd:
				if t == dtype.Bool {
					acc = dtype.Int64
				}
			}
			for si, g := range strategies {
				if (si+int(t))%2 == 1 && op != OpSum {
					continue // half the matrix for the other operations
				}
				if g.Vec > 16/max(t.Size(), acc.Size()) {
					g.Vec = 16 / max(t.Size(), acc.Size())
				}
				if acc.IsFloat() && (op == OpSum || op == OpProd) {
					g.Cascade = 16
				}
				r := &Reduce{Op: op, Pre: PreConvert, Ins: []dtype.DType{t}, Acc: acc, KeptRank: si % 3, RedRank: 1 + si%2, Index64: si == 2, GPU: g}
				if g.Vec > 1 && !g.Cols {
					r.RedRank = 1
				}
				if g.Cols && r.KeptRank == 0 {
					r.KeptRank = 1
				}
				out = append(out, r)
				if g.Partial && (op.IsArg()) {
					p := *r
					p.Pre = PrePartial
					p.GPU.Partial = false
					p.GPU.Vec = min(p.GPU.Vec, 2)
					out = append(out, &p)
				}
			}
		}
	}
	// conversions, nonzero, mean
	for _, c := range [][2]dtype.DType{{dtype.Int8, dtype.Int64}, {dtype.Uint16, dtype.Uint64}, {dtype.Int32, dtype.Float64},
		{dtype.Uint64, dtype.Float32}, {dtype.Float32, dtype.Float64}, {dtype.Float64, dtype.Float32}, {dtype.Bool, dtype.Int64},
		{dtype.Int64, dtype.Int8}, {dtype.Uint32, dtype.Int32}} {
		out = append(out, &Reduce{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{c[0]}, Acc: c[1], RedRank: 1,
			GPU: ReduceGPU{Lanes: 32, Block: 256, Vec: 16 / max(c[0].Size(), c[1].Size(), 4), Unroll: 4}})
	}
	for _, t := range []dtype.DType{dtype.Float32, dtype.Int8, dtype.Bool, dtype.Float64} {
		out = append(out, &Reduce{Op: OpSum, Pre: PreNonzero, Ins: []dtype.DType{t}, Acc: dtype.Int64, KeptRank: 1, RedRank: 1,
			GPU: ReduceGPU{Cols: true, Lanes: 8, Block: 256, Vec: 2, Unroll: 4}})
	}
	for _, t := range []dtype.DType{dtype.Float32, dtype.Float64} {
		out = append(out, &Reduce{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{dtype.Int32}, Acc: t, Mean: true, KeptRank: 1, RedRank: 1,
			GPU: ReduceGPU{Lanes: 256, Block: 256, Vec: 4, Unroll: 4, Cascade: 16}})
	}
	// maps
	env := expr.Env{"x": expr.OperandDecl(0, dtype.Float32), "y": expr.OperandDecl(1, dtype.Int32), "a": expr.WeakParamDecl(0, dtype.Float64)}
	for _, src := range []string{"x*x", "a*x + float32(y)", "abs(x) > a", "exp(x)", "y % 7"} {
		e := expr.MustParse(src, env)
		acc := e.DType()
		op := OpSum
		if acc == dtype.Bool {
			op = OpOr
		}
		out = append(out, &Reduce{Op: op, Pre: PreExpr, Map: e, Ins: []dtype.DType{dtype.Float32, dtype.Int32}, Acc: acc, KeptRank: 1, RedRank: 2,
			GPU: ReduceGPU{Lanes: 32, Block: 256, Vec: 1, Unroll: 4}})
	}
	return out
}

// TestReducePTXAssembles compiles the kernel matrix with ptxas for sm_90: no errors, no
// spills, no stack.
func TestReducePTXAssembles(t *testing.T) {
	mods := map[string]string{}
	keys := map[string]string{}
	for _, r := range redSpecs() {
		if err := r.Validate(); err != nil {
			t.Fatalf("%s: %v", r.Key(), err)
		}
		src, entry, err := r.PTX(9, 0)
		if err != nil {
			t.Fatalf("%s: %v", r.Key(), err)
		}
		if _, dup := mods[entry]; dup && keys[entry] != r.Key() {
			t.Fatalf("entry name collision: %s", entry)
		}
		mods[entry], keys[entry] = src, r.Key()
	}
	regs := redAssemble(t, mods)
	if len(regs) != len(mods) {
		t.Fatalf("ptxas reported %d kernels of %d", len(regs), len(mods))
	}
	max := 0
	for _, n := range regs {
		max = maxInt(max, n)
	}
	t.Logf("%d kernels assembled, at most %d registers", len(regs), max)
}

func maxInt(a, b int) int {
	if a > b {
		return a
	}
	return b
}

// TestReducePlan checks the strategies PlanReduce chooses for the shapes of the
// acceptance figures on an H200 (132 multiprocessors), and logs them.
func TestReducePlan(t *testing.T) {
	occ := func(*Reduce) int { return 6 }
	f32 := []dtype.DType{dtype.Float32}
	type tc struct {
		name   string
		shape  []int
		axes   []int
		cols   bool
		lanes  int
		vec    int
		splits int
	}
	cases := []tc{
		{"2^28 f32 sum", []int{1 << 28}, []int{0}, false, 256, 4, 792},
		{"16384^2 axis 0", []int{16384, 16384}, []int{0}, true, 8, 4, 6},
		{"16384^2 axis 1", []int{16384, 16384}, []int{1}, false, 256, 4, 1},
		{"(1000, 512) axis 1", []int{1000, 512}, []int{1}, false, 32, 4, 1},
		{"(1000, 512) axis 0", []int{1000, 512}, []int{0}, true, 8, 4, 31},
		{"(1000, 512) all", []int{1000, 512}, nil, false, 256, 4, 125},
		{"(1e6, 3) axis 1", []int{1000000, 3}, []int{1}, false, 1, 1, 1},
		{"(1e6, 3) axis 0", []int{1000000, 3}, []int{0}, true, 64, 1, 792},
		{"(1e6, 3) all", []int{1000000, 3}, nil, false, 256, 4, 732},
	}
	for _, c := range cases {
		l := contiguousLayout(c.shape, c.axes, true)
		passes := PlanReduce(Reduce{Op: OpSum, Pre: PreConvert, Ins: f32, Acc: dtype.Float32}, l, []bool{true}, 132, DefaultReduceTuning, occ)
		p := passes[0]
		g := p.Spec.GPU
		var desc []string
		for _, q := range passes {
			desc = append(desc, fmt.Sprintf("[grid %dx%d block %d %+v]", q.GridX, q.GridY, q.Block, q.Spec.GPU))
		}
		t.Logf("%s: m=%d k=%d: %s", c.name, l.M(), l.K(), strings.Join(desc, " then "))
		if g.Cols != c.cols || g.Lanes != c.lanes || g.Vec != c.vec || p.GridY != c.splits {
			t.Errorf("%s: cols %v lanes %d vec %d splits %d, want %v %d %d %d", c.name, g.Cols, g.Lanes, g.Vec, p.GridY, c.cols, c.lanes, c.vec, c.splits)
		}
		if (p.GridY > 1) != (len(passes) == 2) || p.Spec.GPU.Partial != (p.GridY > 1) {
			t.Errorf("%s: %d passes for %d splits", c.name, len(passes), p.GridY)
		}
		for _, q := range passes {
			if err := q.Spec.Validate(); err != nil {
				t.Errorf("%s: %v", c.name, err)
			}
		}
	}
}

// TestCollapseReduce checks the iteration spaces of reductions over views.
func TestCollapseReduce(t *testing.T) {
	type tc struct {
		shape   []int
		strides []int
		mask    []bool
		reorder bool
		kept    []int
		red     []int
		kst     []int
		rst     []int
	}
	cases := []tc{
		{[]int{4, 5, 6}, []int{30, 6, 1}, []bool{false, true, true}, true, []int{4}, []int{30}, []int{30}, []int{1}},
		{[]int{4, 5, 6}, []int{30, 6, 1}, []bool{true, false, true}, true, []int{5}, []int{4, 6}, []int{6}, []int{30, 1}},
		{[]int{4, 5, 6}, []int{30, 6, 1}, []bool{true, true, false}, true, []int{6}, []int{20}, []int{1}, []int{6}},
		// transposed (6, 5, 4) view of a (4, 5, 6) array, summed over axis 0 and 2:
		// reordered to read memory in order
		{[]int{6, 5, 4}, []int{1, 6, 30}, []bool{true, false, true}, true, []int{5}, []int{4, 6}, []int{6}, []int{30, 1}},
		{[]int{6, 5, 4}, []int{1, 6, 30}, []bool{true, false, true}, false, []int{5}, []int{6, 4}, []int{6}, []int{1, 30}},
		{[]int{1, 7, 1}, []int{7, 1, 1}, []bool{true, false, true}, true, []int{7}, nil, []int{1}, nil},
		{[]int{3, 0, 2}, []int{0, 2, 1}, []bool{false, true, false}, true, []int{3, 2}, []int{0}, []int{0, 1}, []int{0}},
	}
	for _, c := range cases {
		l := CollapseReduce(c.shape, [][]int{c.strides}, c.mask, c.reorder)
		if fmt.Sprint(l.Kept, l.Red) != fmt.Sprint(c.kept, c.red) ||
			fmt.Sprint(l.KeptStr[0]) != fmt.Sprint(c.kst) && len(c.kst) > 0 ||
			fmt.Sprint(l.RedStr[0]) != fmt.Sprint(c.rst) && len(c.rst) > 0 {
			t.Errorf("%v %v %v reorder %v: kept %v %v red %v %v, want %v %v %v %v", c.shape, c.strides, c.mask, c.reorder,
				l.Kept, l.KeptStr[0], l.Red, l.RedStr[0], c.kept, c.kst, c.red, c.rst)
		}
	}
}

// BenchmarkReducePlan measures the host-side planning of a small reduction: collapsing
// the layout, planning the passes and the kernels' keys.
func BenchmarkReducePlan(b *testing.B) {
	shape := []int{1000, 512}
	st := [][]int{{512, 1}}
	mask := []bool{true, false}
	for b.Loop() {
		l := CollapseReduce(shape, st, mask, true)
		ps := PlanReduce(Reduce{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{dtype.Float32}, Acc: dtype.Float32}, l, []bool{true}, 132, DefaultReduceTuning, nil)
		for _, p := range ps {
			_ = p.Spec.Key()
		}
	}
}

// BenchmarkReduceKey measures a spec's key.
func BenchmarkReduceKey(b *testing.B) {
	r := &Reduce{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{dtype.Float32}, Acc: dtype.Float32, KeptRank: 1, RedRank: 1,
		GPU: ReduceGPU{Cols: true, Lanes: 8, Block: 256, Vec: 4, Unroll: 4, Partial: true, Cascade: 16}}
	for b.Loop() {
		_ = r.Key()
	}
}

// contiguousLayout is the collapsed layout of a reduction of a contiguous array of the
// shape over axes (all if nil); perm as CollapseReduce's last argument.
func contiguousLayout(shape, axes []int, perm bool) ReduceLayout {
	mask := make([]bool, len(shape))
	for d := range mask {
		mask[d] = axes == nil
	}
	for _, a := range axes {
		mask[a] = true
	}
	st := make([]int, len(shape))
	s := 1
	for d := len(shape) - 1; d >= 0; d-- {
		st[d] = s
		s *= shape[d]
	}
	return CollapseReduce(shape, [][]int{st}, mask, perm)
}

// TestReducePlanOccupancy checks that the split grid fits one wave of the kernel that
// runs: the occupancy is asked of valid kernels only (a partial kernel of a half
// result has no Out type; the runtime's query fails on an invalid one), of the partial
// kernel and of the fused one, and the smaller count sizes the grid.
func TestReducePlanOccupancy(t *testing.T) {
	const sms = 132
	for _, c := range []struct {
		in, out        dtype.DType
		shape, axes    []int
		partial, fused int // blocks per SM of the two kernels
	}{
		{dtype.BFloat16, dtype.BFloat16, []int{16384, 16384}, []int{0}, 4, 5},
		{dtype.Float16, dtype.Float16, []int{16384, 16384}, []int{0}, 5, 4},
		{dtype.BFloat16, dtype.BFloat16, []int{1 << 28}, nil, 6, 5},
		{dtype.Float32, dtype.Invalid, []int{16384, 16384}, []int{0}, 4, 5},
	} {
		var asked []string
		occ := func(r *Reduce) int {
			if err := r.Validate(); err != nil {
				t.Errorf("%v %v: occupancy of an invalid kernel: %v", c.in, c.shape, err)
				return 0
			}
			if r.Final != nil {
				asked = append(asked, "fused")
				return c.fused
			}
			asked = append(asked, "partial")
			return c.partial
		}
		base := Reduce{Op: OpSum, Pre: PreConvert, Ins: []dtype.DType{c.in}, Acc: dtype.Float32, Out: c.out}
		passes := PlanReduce(base, contiguousLayout(c.shape, c.axes, true), []bool{true}, sms, DefaultReduceTuning, occ)
		p := passes[0]
		blocks, limit := p.GridX*p.GridY, sms*min(c.partial, c.fused)
		t.Logf("%v %v axes %v: asked %v, grid %dx%d, %d slots", c.in, c.shape, c.axes, asked, p.GridX, p.GridY, limit)
		if len(passes) != 2 || blocks > limit || float64(blocks) < 0.75*float64(limit) {
			t.Errorf("%v %v axes %v: %d passes, grid %dx%d for %d resident blocks", c.in, c.shape, c.axes, len(passes), p.GridX, p.GridY, limit)
		}
		if len(asked) != 2 || asked[0] != "partial" || asked[1] != "fused" {
			t.Errorf("%v %v axes %v: occupancy asked of %v, want the partial and the fused kernel", c.in, c.shape, c.axes, asked)
		}
	}
}
