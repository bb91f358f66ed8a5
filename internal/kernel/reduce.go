package kernel

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// ReducePre says how a reduction turns its operands into accumulator values.
type ReducePre uint8

const (
	// PreConvert converts the one operand to the accumulator type: numeric conversion
	// (integer to integer wraps, integer to float rounds to nearest, float to float
	// rounds to nearest; float to integer is not allowed), bool to 0 or 1, and any value
	// to Bool as value != 0 (NaN is true).
	PreConvert ReducePre = iota
	// PreNonzero maps the one operand to 1 where it is nonzero and 0 elsewhere, in the
	// accumulator type (CountNonzero).
	PreNonzero
	// PreExpr evaluates Map over the operands (its input slots); Map's type is the
	// accumulator type.
	PreExpr
	// PrePartial reads partial results of an earlier pass: the one operand is of the
	// accumulator type and, for the arg operations, the indices come from the inIdx
	// parameter instead of the position.
	PrePartial
)

var reducePreNames = [...]string{"convert", "nonzero", "expr", "partial"}

// String returns "convert", "nonzero", "expr" or "partial".
func (p ReducePre) String() string {
	if int(p) < len(reducePreNames) {
		return reducePreNames[p]
	}
	return fmt.Sprintf("reducepre(%d)", uint8(p))
}

// Reduce is a reduction kernel: for each output o < m,
//
//	out[o] = Op over r < k of Pre(operands at (o, r))
//
// with Op one of the combining operators (operator.go; on a Bool accumulator OpOr is
// numpy.any, OpAnd numpy.all)//
// where the element of operand j at (o, r) is at in_j + base_j(o) + red_j(r) (element
// offsets): base_j(o) = sum over d of o_d*mstr_j[d], o_d being o's multi-index in the kept
// shape (row-major), and red_j(r) likewise over the reduced shape with kstr_j. The output
// is contiguous (out[o], o < m). For the arg operations the index of an element is r,
// its row-major position in the reduced shape (or, with PrePartial, the value read from
// inIdx), and idx[o] receives the index of the result.
//
// Kernel parameters, in order (every backend):
//
//	out      u64   address of the output's element 0 (type Acc); for the arg operations
//	               it may be 0, and then the values are not stored
//	idx      u64   arg operations only: address of the int64 indices' element 0
//	m        u64   number of outputs
//	k        u64   number of reduced elements per output
//	in_j     u64   address of operand j's element 0, for each operand in Ins order
//	inIdx    u64   arg operations with PrePartial only: the partial indices (int64),
//	               laid out like operand 0
//	mshape   u64   KeptRank dims of the kept shape, outermost first
//	kshape   u64   RedRank dims of the reduced shape, outermost first
//	mstr     s64   KeptRank strides (elements) for each operand in Ins order
//	kstr     s64   RedRank strides (elements) for each operand in Ins order
//	count    u64   Mean only: the number of elements each output averages
//	param_i        each parameter slot of Map in order, as a scalar of its dtype
//
// and, for a fused kernel (Final set):
//
//	fout     u64   address of the final output's element 0 (type Acc; arg operations:
//	               may be 0, as out)
//	fidx     u64   arg operations only: address of the final int64 indices' element 0
//	fcnt     u64   address of the ticket counters: one uint32 per output tile of this
//	               pass (ReduceFuseCounters), zero before the launch and zero again after
//	               it completes
//	fcount   u64   Final.Mean only: the number of elements each output averages
//
// m, k, the shapes and the strides are consistent (m is the product of mshape, k of
// kshape; a rank of 0 is a product of 1). k may be 0: the output is then the
// operator's identity (Op.Identity: 0 for sums, 1 for products, false for or, true for
// and; NaN for Mean); the arg operators, OpMin and OpMax need k > 0. With Index64 unset,
// m*k, every element offset and, for a partial pass, m times the grid's y size are
// below 2^31.
//
// GPU describes the CUDA kernel's strategy; the CPU implementation ignores it, and
// computes the whole reduction in one launch (GPU.Partial must be unset).
type Reduce struct {
	Op  Op
	Pre ReducePre
	Map *expr.Expr    // PreExpr only
	Ins []dtype.DType // operand types (PreExpr: one per input slot of Map)
	Acc dtype.DType   // accumulator and output type (arg operations: the value type)
	// Out, if set, is the type of the final result when it is not Acc: Float16 or
	// BFloat16 with Acc Float32, the accumulator (Mean: the quotient) rounded once to
	// nearest even. A half-precision operand converts to Float32 or Float64 exactly (to
	// Bool: nonzero), so sums of halves accumulate in float32 and store halves; the arg
	// operations of a half operand compare float32 values and store the elements (Out =
	// Ins[0]). A partial pass (GPU.Partial) stores Acc, its fused Final Out.
	Out      dtype.DType
	Mean     bool // divide the result by count (Acc a float; Op OpSum)
	KeptRank int
	RedRank  int
	Index64  bool
	GPU      ReduceGPU
	// Final, on a partial pass (GPU.Partial), fuses the second pass into this kernel:
	// the last block of each output tile to finish (by an atomic ticket) combines the
	// tile's partial results as the kernel of the spec Final would (see FuseReduce).
	Final *Reduce
}

// ReduceGPU is the strategy of a CUDA reduction kernel (see PlanReduce).
//
// A block of Block threads works on a tile of outputs. With Cols unset ("rows"), Lanes
// consecutive threads share one output (Lanes is 1, 32 or Block), splitting its reduced
// elements between them (and between the gridDim.y blocks of a split), and combine
// their partial results with warp shuffles and, for Lanes = Block, shared memory. With
// Cols set, the block is Lanes "row lanes" of C = Block/Lanes threads: consecutive
// threads of a row lane take consecutive outputs (Vec each, C×Vec per tile), the row
// lanes split the reduced elements, and they combine through shared memory. Threads
// load Vec consecutive elements at once (along r for rows, along o for columns) and keep
// Unroll loads in flight.
type ReduceGPU struct {
	Cols   bool // columns: threads map to consecutive outputs
	Lanes  int  // rows: threads per output (1, 32 or Block); columns: row lanes (a power of 2)
	Block  int  // threads per block
	Vec    int  // elements per load: 1, 2 or 4 (8: half-precision operands only)
	Unroll int  // loads in flight per thread: 1, 2, 4 or 8
	// Accs is the sets of Vec accumulators a thread keeps (0: Unroll): load u of an
	// iteration folds into set u mod Accs, so Unroll loads can be in flight with fewer
	// registers (Unroll a multiple of Accs; Cascade then counts iterations of
	// Unroll/Accs terms an accumulator).
	Accs    int
	Partial bool // write out[y*m + o] (y = ctaid.y) for a later pass: no Mean, no final conversion
	Cascade int  // if > 0: fold the accumulators into an outer one every Cascade iterations
}

// Key identifies the kernel.
func (r *Reduce) Key() string {
	b := make([]byte, 0, 96)
	b = append(b, "red|"...)
	b = append(b, r.Op.String()...)
	b = append(b, '|')
	b = append(b, r.Pre.String()...)
	b = append(b, "|acc="...)
	b = append(b, r.Acc.String()...)
	if r.Out.Valid() {
		b = append(b, "|out="...)
		b = append(b, r.Out.String()...)
	}
	b = append(b, "|km"...)
	b = strconv.AppendInt(b, int64(r.KeptRank), 10)
	b = append(b, "|kr"...)
	b = strconv.AppendInt(b, int64(r.RedRank), 10)
	for _, t := range r.Ins {
		b = append(b, '|')
		b = append(b, t.String()...)
	}
	if r.Map != nil {
		b = append(b, "|map="...)
		b = append(b, r.Map.Key()...)
	}
	if r.Mean {
		b = append(b, "|mean"...)
	}
	if r.Index64 {
		b = append(b, "|i64"...)
	}
	if g := r.GPU; g.Block > 0 {
		b = append(b, "|cols="...)
		b = strconv.AppendBool(b, g.Cols)
		for _, f := range [...]struct {
			c byte
			v int
		}{{'l', g.Lanes}, {'b', g.Block}, {'v', g.Vec}, {'u', g.Unroll}, {'c', g.Cascade}} {
			b = append(b, '|', f.c)
			b = strconv.AppendInt(b, int64(f.v), 10)
		}
		if g.Accs > 0 && g.Accs != g.Unroll {
			b = append(b, "|a"...)
			b = strconv.AppendInt(b, int64(g.Accs), 10)
		}
		b = append(b, "|p="...)
		b = strconv.AppendBool(b, g.Partial)
	}
	if r.Final != nil {
		b = append(b, "|final{"...)
		b = append(b, r.Final.Key()...)
		b = append(b, '}')
	}
	return string(b)
}

// accSets returns the sets of Vec accumulators a thread keeps: Accs, or Unroll.
func (g ReduceGPU) accSets() int {
	if g.Accs > 0 {
		return g.Accs
	}
	return g.Unroll
}

// reduceAccOK reports whether t can be an accumulator type (no half-precision floats).
func reduceAccOK(t dtype.DType) bool {
	return t.Valid() && !isHalfType(t)
}

func isHalfType(t dtype.DType) bool { return t == dtype.Float16 || t == dtype.BFloat16 }

// outType returns the type of the final result's elements.
func (r *Reduce) outType() dtype.DType {
	if r.Out.Valid() {
		return r.Out
	}
	return r.Acc
}

// OutType returns the type of the elements of the final result: Out if set, else Acc.
func (r *Reduce) OutType() dtype.DType { return r.outType() }

// halfIns reports whether every operand the reduction reads is a half-precision float.
func (r *Reduce) halfIns() bool {
	n := 0
	for j, t := range r.Ins {
		if r.Pre == PreExpr && !redExprReads(r.Map, j) {
			continue
		}
		if !isHalfType(t) {
			return false
		}
		n++
	}
	return n > 0
}

// Validate checks the spec's consistency.
func (r *Reduce) Validate() error {
	if !r.Op.Accepts(r.Acc) {
		return fmt.Errorf("kernel: %v reduction with accumulator type %v", r.Op, r.Acc)
	}
	for _, t := range r.Ins {
		if !t.Valid() || isHalfType(t) && r.Pre == PreConvert && r.Acc != dtype.Float32 && r.Acc != dtype.Float64 && r.Acc != dtype.Bool {
			return fmt.Errorf("kernel: %v reduction of %v operands into %v", r.Op, t, r.Acc)
		}
	}
	if r.Out.Valid() && r.Out != r.Acc {
		if !isHalfType(r.Out) || r.Acc != dtype.Float32 {
			return fmt.Errorf("kernel: %v reduction with accumulator %v into %v", r.Op, r.Acc, r.Out)
		}
		if r.GPU.Partial {
			return fmt.Errorf("kernel: a partial pass into %v (partial results are the accumulator's)", r.Out)
		}
	}
	if r.KeptRank < 0 || r.RedRank < 0 || r.KeptRank > 16 || r.RedRank > 16 {
		return fmt.Errorf("kernel: reduction ranks %d, %d", r.KeptRank, r.RedRank)
	}
	if (r.Op == OpSum || r.Op == OpProd) && r.Acc == dtype.Bool {
		return fmt.Errorf("kernel: %v with a bool accumulator", r.Op)
	}
	if r.Mean && (r.Op != OpSum || !r.Acc.IsFloat()) {
		return fmt.Errorf("kernel: mean needs a float sum, not %v of %v", r.Op, r.Acc)
	}
	switch r.Pre {
	case PreConvert, PreNonzero, PrePartial:
		if len(r.Ins) != 1 {
			return fmt.Errorf("kernel: %v reduction with %d operands", r.Pre, len(r.Ins))
		}
		if r.Map != nil {
			return fmt.Errorf("kernel: %v reduction with a map", r.Pre)
		}
		in := r.Ins[0]
		if r.Pre == PrePartial && in != r.Acc {
			return fmt.Errorf("kernel: partial reduction of %v into %v", in, r.Acc)
		}
		if r.Pre == PreConvert && in.IsFloat() && (r.Acc.IsInteger()) {
			return fmt.Errorf("kernel: converting %v to %v accumulators (use a map)", in, r.Acc)
		}
		if r.Op.IsArg() && r.Pre == PreConvert && in != r.Acc && !(isHalfType(in) && r.Acc == dtype.Float32 && (r.Out == in || r.GPU.Partial)) {
			return fmt.Errorf("kernel: %v of %v with values of type %v", r.Op, in, r.Acc)
		}
		if r.Pre == PreNonzero && r.Op != OpSum {
			return fmt.Errorf("kernel: nonzero map with %v", r.Op)
		}
	case PreExpr:
		if r.Map == nil {
			return fmt.Errorf("kernel: expr reduction without a map")
		}
		if r.Map.DType() != r.Acc {
			return fmt.Errorf("kernel: map of type %v, accumulator %v", r.Map.DType(), r.Acc)
		}
		if r.Op.IsArg() {
			return fmt.Errorf("kernel: %v of a map", r.Op)
		}
		for _, s := range r.Map.Inputs {
			if s.Index >= len(r.Ins) || r.Ins[s.Index] != s.DType {
				return fmt.Errorf("kernel: map input %d of type %v, operands %v", s.Index, s.DType, r.Ins)
			}
		}
	default:
		return fmt.Errorf("kernel: reduction pre %v", r.Pre)
	}
	g := r.GPU
	if g.Block > 0 {
		vmax := 4
		if r.halfIns() {
			vmax = 8 // 16 bytes of halves
		}
		if g.Block > 1024 || g.Vec < 1 || g.Vec > vmax || g.Vec&(g.Vec-1) != 0 || g.Unroll < 1 || g.Unroll > 8 || g.Lanes < 1 ||
			g.Accs < 0 || g.Accs > 0 && g.Unroll%g.Accs != 0 {
			return fmt.Errorf("kernel: reduction strategy %+v", g)
		}
		if g.Cols {
			if g.Lanes&(g.Lanes-1) != 0 || g.Block%g.Lanes != 0 {
				return fmt.Errorf("kernel: column reduction with %d row lanes in %d threads", g.Lanes, g.Block)
			}
		} else if g.Lanes != 1 && g.Lanes != 32 && g.Lanes != g.Block || g.Block%32 != 0 {
			return fmt.Errorf("kernel: row reduction with %d lanes per output in %d threads", g.Lanes, g.Block)
		}
		if g.Partial && r.Mean {
			return fmt.Errorf("kernel: a partial pass with mean")
		}
	}
	if fin := r.Final; fin != nil {
		if err := fin.Validate(); err != nil {
			return err
		}
		wantPre := PreConvert
		if r.Op.IsArg() {
			wantPre = PrePartial
		}
		switch {
		case !g.Partial || g.Block == 0:
			return fmt.Errorf("kernel: a final pass fused into a kernel that isn't a partial pass")
		case fin.Final != nil || fin.GPU.Partial || fin.GPU.Block > g.Block || !fin.GPU.Cols && fin.GPU.Block != g.Block:
			return fmt.Errorf("kernel: fused final pass %+v after a pass of %d threads", fin.GPU, g.Block)
		case fin.Op != r.Op || fin.Acc != r.Acc || fin.Pre != wantPre || len(fin.Ins) != 1 || fin.Ins[0] != r.Acc:
			return fmt.Errorf("kernel: fused final pass %s after %s", fin.Key(), r.Key())
		case fin.RedRank != 1 || fin.KeptRank > 1:
			return fmt.Errorf("kernel: fused final pass of ranks %d, %d", fin.KeptRank, fin.RedRank)
		}
	}
	return nil
}

// numParams returns the number of kernel parameters.
func (r *Reduce) numParams() int {
	n := 3 + len(r.Ins) + r.KeptRank + r.RedRank + len(r.Ins)*(r.KeptRank+r.RedRank)
	if r.Op.IsArg() {
		n++
		if r.Pre == PrePartial {
			n++
		}
	}
	if r.Mean {
		n++
	}
	if r.Map != nil {
		n += len(r.Map.Params)
	}
	if r.Final != nil {
		n += 2
		if r.Op.IsArg() {
			n++
		}
		if r.Final.Mean {
			n++
		}
	}
	return n
}

// ReduceLayout is a reduction's iteration space: outputs o < M over the Kept dims
// (row-major, outermost first) and reduced positions r < K over the Red dims, with each
// operand's strides (elements) over both.
type ReduceLayout struct {
	Kept    []int
	Red     []int
	KeptStr [][]int // [operand][dim]
	RedStr  [][]int
}

// M returns the number of outputs.
func (l *ReduceLayout) M() int { return redProd(l.Kept) }

// K returns the number of elements reduced into each output.
func (l *ReduceLayout) K() int { return redProd(l.Red) }

func redProd(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// CollapseReduce returns the iteration space of a reduction over the axes marked in
// reduced of an array of the given shape, read through each operand's strides. Kept
// dims stay in their order (the output is row-major over them); reduced dims stay in
// their order unless reorder is set, in which case they are sorted by decreasing
// absolute stride of operand 0 (so that the innermost is the one with the smallest
// stride: a sum over a transposed view reads memory in order). Size-1 dims are dropped
// and adjacent dims of each group merge when every operand's strides chain
// (stride[d] == stride[d+1]*shape[d+1]). The reduced positions r keep their row-major
// meaning when reorder is unset, which the arg operations need.
func CollapseReduce(shape []int, strides [][]int, reduced []bool, reorder bool) ReduceLayout {
	var kept, red []int
	for d := range shape {
		if reduced[d] {
			red = append(red, d)
		} else {
			kept = append(kept, d)
		}
	}
	if reorder && len(strides) > 0 {
		st := strides[0]
		slices.SortStableFunc(red, func(a, b int) int {
			sa, sb := redAbs(st[a]), redAbs(st[b])
			switch {
			case sa > sb:
				return -1
			case sa < sb:
				return 1
			}
			return 0
		})
	}
	var l ReduceLayout
	l.KeptStr = make([][]int, len(strides))
	l.RedStr = make([][]int, len(strides))
	l.Kept = redMergeDims(shape, strides, kept, l.KeptStr)
	l.Red = redMergeDims(shape, strides, red, l.RedStr)
	if redProd(l.Red) == 0 || redProd(l.Kept) == 0 {
		// An empty iteration: keep the shapes' zeros, strides don't matter.
		return l
	}
	return l
}

func redAbs(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// redMergeDims appends the dims of shape listed in dims (in order) to a new shape, dropping
// size-1 dims and merging adjacent ones whose strides chain for every operand; each
// operand's strides go to out[k].
func redMergeDims(shape []int, strides [][]int, dims []int, out [][]int) []int {
	var cs []int
	for _, d := range dims {
		n := shape[d]
		if n == 1 {
			continue
		}
		if n == 0 {
			// An empty group: a single zero dim.
			for k := range out {
				out[k] = []int{0}
			}
			return []int{0}
		}
		if len(cs) > 0 {
			last := len(cs) - 1
			ok := true
			for k := range strides {
				if out[k][last] != strides[k][d]*n {
					ok = false
					break
				}
			}
			if ok {
				cs[last] *= n
				for k := range strides {
					out[k][last] = strides[k][d]
				}
				continue
			}
		}
		cs = append(cs, n)
		for k := range strides {
			out[k] = append(out[k], strides[k][d])
		}
	}
	return cs
}

// reduceExtent returns the lowest and highest element offsets an operand with these
// strides reaches over the kept and reduced shapes (hi < lo when either is empty).
func reduceExtent(kept, red, kst, rst []int) (lo, hi int) {
	l1, h1 := extent(kept, kst)
	l2, h2 := extent(red, rst)
	if h1 < l1 || h2 < l2 {
		return 0, -1
	}
	return l1 + l2, h1 + h2
}

// ReduceNeedIndex64 reports whether a reduction over l (with partial passes of up to
// splits blocks along y) needs 64-bit index arithmetic.
func ReduceNeedIndex64(l *ReduceLayout, splits int) bool {
	m, k := l.M(), l.K()
	if m > 0 && k > math.MaxInt32/m || m*max(1, splits) >= math.MaxInt32 || m*k >= math.MaxInt32 {
		return true
	}
	for j := range l.KeptStr {
		lo, hi := reduceExtent(l.Kept, l.Red, l.KeptStr[j], l.RedStr[j])
		if hi >= math.MaxInt32 || -lo >= math.MaxInt32 {
			return true
		}
	}
	return false
}
