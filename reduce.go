package gpu

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/kernel"
)

// ReduceOption configures a reduction (Sum, Prod, Min, Max, Any, All, Count, Mean,
// Var, Std, LogSumExp, Norm, MapReduce, MapReduceInto, ReduceInto, ArgMin, ArgMax,
// FindMin, FindMax, Median, Quantile, Quantiles, NanMedian, NanQuantile, NanQuantiles,
// and their -Of forms): Axes, KeepDims
// (Var and Std also take Ddof). The
// reductions cover all elements or any set of axes, with NumPy's names and semantics
// (Julia's findmin and findmax for FindMin and FindMax).
//
// Axes. With no option a reduction covers every element and returns a 0-d array (use
// At(ctx) for its value). Axes(1), Axes(0, -1) reduce over the given axes (negative
// axes count from the end; a repeated or out-of-range axis is an error); Axes() with no
// axes reduces over none, as NumPy's axis=(). KeepDims() keeps the reduced axes with
// size 1, so the result broadcasts against the input.
//
// Result types. Go's generics fix the result type statically, while NumPy derives it from
// the input's; so the reductions whose NumPy result type differs from the input's take it
// as their first type parameter, with the meaning of NumPy's dtype= argument: R is the
// type elements are converted to and accumulated in, and the result's type.
// gpu.Sum[int64](s, a) of an int32 array is numpy.sum(a) (NumPy's default, AccumType
// gives it for any T); gpu.Sum[float64](s, x) of a float32 array is numpy.sum(x,
// dtype=float64). The other type parameter is inferred from the array. Converting floats
// to integer accumulators is refused (write the conversion in a MapReduce expression
// instead); bool accumulators are refused for sums and products. Min, Max, ArgMin,
// ArgMax, FindMin and FindMax keep the element type; Any and All give bool, Count int64;
// Mean[R] takes a float R (float64 is NumPy's choice for integer inputs, T for float
// inputs). Float16 and BFloat16 elements convert exactly to float32 and accumulate in
// float32 (CuPy and PyTorch reduce them so): a result of a half type is the float32
// result rounded once, to nearest even, and Sum[float32] (or Mean[float32]) of a half
// array returns the float32 accumulator itself, the accurate way to a wider result.
// Where NumPy's result type is the input's, the same-type forms SumOf, ProdOf, MeanOf
// (and CumSumOf, CumProdOf, AccumulateOf, VarOf, StdOf, LogSumExpOf, NormOf, MedianOf) infer
// every type: gpu.SumOf(s, x) of a float32 x is gpu.Sum[float32](s, x); see SameAccum.
//
// Semantics. The sum of no elements is 0 and their product 1 (Any: false, All: true,
// Mean: NaN); Min, Max, ArgMin, ArgMax, FindMin and FindMax of no elements (an empty
// array, or an empty reduced axis with a non-empty result) are errors wrapping
// ErrInvalidValue. Min and Max propagate NaN (the result is the canonical NaN: see the
// package documentation's NaN section) and order -0 below +0. ArgMin and ArgMax return the index of the first NaN if there is one, else
// the first index among equal extreme values; indices are int64 (flat row-major indices
// over all elements, or positions along the one reduced axis). Integer sums and
// products wrap as in Go.
//
// Accuracy. Float sums and products use tree (pairwise) order on every backend, never one
// sequential accumulator: the error bound grows with log2(n), not n (Higham, "The
// accuracy of floating point summation", SIAM J. Sci. Comput. 14(4), 1993). The CPU
// backend follows NumPy's pairwise rule exactly (blocks of 8 interleaved accumulators up
// to 128 elements, halving above) per output; a CUDA thread keeps 4 to 16 independent
// accumulators that each add at most 16 terms in sequence before they fold, pairwise,
// into an outer accumulator, and the threads' results combine as trees (warp shuffles,
// shared memory, the second pass; see internal/kernel PlanReduce). The two backends'
// float sums therefore differ in the last bits; each is deterministic: the same inputs
// and shapes give bitwise the same result at every call, and the CPU's result doesn't
// depend on its number of workers. Everything else (integers, Min, Max, Any, All, the
// arg operations, NaN and signed zeros included) is exact and identical on both
// backends.
//
// Kernels. Each reduction is one kernel launch. When a long reduced axis is split
// across blocks for parallelism, the blocks write partial results (from the stream's
// small-block cache) and, on CUDA, the last block of each output tile to finish
// combines them in the same kernel (a ticket counter per tile, kept zeroed per stream);
// the rare splits that can't fuse take a second kernel, with bitwise the same results.
// Nothing is launched for an empty result, and inputs are never modified. On CUDA: Harris's tree reduction ("Optimizing Parallel Reduction in CUDA", NVIDIA 2007)
// with warp shuffles, and CUDA.jl's choice of strategy by shape: a whole-array
// reduction, a thread, warp or block per output when the reduced elements are
// contiguous, threads across outputs when the outputs are (a sum over the leading
// axis). Adjacent reduced and kept axes are collapsed first; loads are 16 bytes wide
// where aligned, several in flight per thread; indexing is 64-bit past 2^31 elements.
// internal/kernel's PlanReduce documents the choices.
type ReduceOption func(*reduceConfig)

type reduceConfig struct {
	axes     []int
	axesSet  bool
	keepDims bool
	ddof     int // Var and Std only (Ddof)
	ddofSet  bool
}

// Axes reduces over the given axes only (negative axes count from the end). Axes()
// with no axes reduces over none (numpy's axis=()).
func Axes(axes ...int) ReduceOption {
	axes = slices.Clone(axes)
	return func(c *reduceConfig) { c.axes, c.axesSet = axes, true }
}

// KeepDims keeps the reduced axes in the result, with size 1 (numpy's keepdims=True).
func KeepDims() ReduceOption { return func(c *reduceConfig) { c.keepDims = true } }

// Any and All operators of MapReduce (OpSum, OpProd, OpMax and OpMin are the scans'):
// logical or and and of bool values.
const (
	OpAny Op = "a || b"
	OpAll Op = "a && b"
)

// namedOps maps the named operators to the operator table's (internal/kernel's Op).
var namedOps = map[Op]kernel.Op{OpSum: kernel.OpSum, OpProd: kernel.OpProd, OpMin: kernel.OpMin,
	OpMax: kernel.OpMax, OpAny: kernel.OpOr, OpAll: kernel.OpAnd}

// reduceOpOf maps MapReduce's operators to the table's.
func reduceOpOf(op Op) (kernel.Op, error) {
	if k, ok := namedOps[op]; ok {
		return k, nil
	}
	return 0, fmt.Errorf("gpu: reduction operator %q: only OpSum, OpProd, OpMin, OpMax, OpAny and OpAll reduce: %w", string(op), ErrNotSupported)
}

// resolveAxes returns the mask of reduced axes of a rank-n array and the result shape.
// Ddof is refused: only Var and Std (resolveReduce) take it.
func resolveAxes(shape []int, opts []ReduceOption, oneAxis bool) (mask []bool, out []int, err error) {
	mask, out, c, err := resolveReduce(shape, opts, oneAxis)
	if err == nil && c.ddofSet {
		return nil, nil, fmt.Errorf("gpu: Ddof applies to Var and Std only: %w", ErrInvalidValue)
	}
	return mask, out, err
}

// resolveReduce is resolveAxes returning the options too.
func resolveReduce(shape []int, opts []ReduceOption, oneAxis bool) (mask []bool, out []int, c reduceConfig, err error) {
	for _, o := range opts {
		if o == nil {
			return nil, nil, c, fmt.Errorf("gpu: a nil ReduceOption: %w", ErrInvalidValue)
		}
		o(&c)
	}
	n := len(shape)
	mask = make([]bool, n)
	if !c.axesSet {
		for d := range mask {
			mask[d] = true
		}
	} else {
		if oneAxis && len(c.axes) != 1 {
			return nil, nil, c, fmt.Errorf("gpu: axes %v: give one axis or none (all elements): %w", c.axes, ErrInvalidValue)
		}
		for _, ax := range c.axes {
			a := ax
			if a < 0 {
				a += n
			}
			if a < 0 || a >= n {
				return nil, nil, c, fmt.Errorf("gpu: axis %d out of range for a %d-d array: %w", ax, n, ErrInvalidValue)
			}
			if mask[a] {
				return nil, nil, c, fmt.Errorf("gpu: axis %d repeated in %v: %w", ax, c.axes, ErrInvalidValue)
			}
			mask[a] = true
		}
	}
	for d, v := range shape {
		switch {
		case !mask[d]:
			out = append(out, v)
		case c.keepDims:
			out = append(out, 1)
		}
	}
	if out == nil {
		out = []int{}
	}
	return mask, out, c, nil
}

// redOperand is an operand of a reduction: its layout and its strides over the
// iteration shape.
type redOperand struct {
	h  *header
	st []int
}

// redJob is a reduction to run.
type redJob struct {
	spec   kernel.Reduce // Op, Pre, Map, Ins, Acc, Mean
	shape  []int         // iteration shape
	mask   []bool        // reduced axes
	ops    []redOperand
	params []redParam
}

type redParam struct {
	t    dtype.DType
	bits uint64
}

// run computes the reduction into vals (contiguous, the result's size; nil for the arg
// operations when only indices are wanted) and idx (arg operations: contiguous int64).
func (j *redJob) run(s *Stream, vals, idx *header) error {
	if err := nilStream(s); err != nil {
		return err
	}
	d := s.dev
	for i, op := range j.ops {
		if op.h.buf.a.dev != d && op.h.buf.a.dev.info.Backend != d.info.Backend {
			return fmt.Errorf("gpu: reduction operand %d is on %v, the stream on %v: %w", i, op.h.buf.a.dev, d, ErrInvalidValue)
		}
	}
	tu := d.tuning()
	key, cacheable := j.planKey(d, tu)
	var plan *redPlan
	if cacheable {
		if v, ok := redPlans.Load(key); ok {
			plan = v.(*redPlan)
		}
	}
	if plan == nil {
		var err error
		if plan, err = j.plan(d, tu); err != nil {
			return err
		}
		if cacheable {
			if redPlanCount.Add(1) > redPlanMax {
				redPlans.Clear()
				redPlanCount.Store(0)
			}
			redPlans.Store(key, plan)
		}
	}
	l := plan.layout
	m, k := l.M(), l.K()
	if m == 0 {
		return nil
	}
	arg := j.spec.Op.IsArg()
	if k == 0 && (arg || j.spec.Op == kernel.OpMin || j.spec.Op == kernel.OpMax) {
		return fmt.Errorf("gpu: %v over an empty axis: %w", j.spec.Op, ErrInvalidValue)
	}
	// Outputs that share memory with an operand are written through a temporary.
	for _, out := range []*header{vals, idx} {
		if out == nil {
			continue
		}
		for _, op := range j.ops {
			if op.h.buf.a == out.buf.a {
				return j.viaTemp(s, vals, idx)
			}
		}
	}
	passes := plan.passes
	if len(passes) == 1 {
		p := passes[0]
		return j.launch(s, plan.fns[0], p.Spec, p.Layout, p.GridX, p.GridY, p.Block, vals, idx, nil, nil)
	}
	p1, p2 := passes[0], passes[1]
	var cnt backend.Mem
	if plan.fused != nil {
		p1 = *plan.fused
		// The ticket counters: the fused kernel leaves them zero.
		sc, err := s.scratch(scratchTickets, kernel.ReduceFuseMaxTiles*4, true)
		if err != nil {
			return err
		}
		defer sc.release(true)
		cnt = sc.mem
	}
	// The partial results: values, then (arg operations) their indices, 256 bytes on;
	// scratch of the stream's where small, else a buffer of their own.
	vb, ib := kernel.ReducePartialBytes(p1.Spec, m, p1.GridY)
	part := redPartials{ioff: (vb + 255) &^ 255}
	if n := part.ioff + ib; n <= redScratchMax {
		sc, err := s.scratch(scratchPartials, int(n), true)
		if err != nil {
			return err
		}
		defer sc.release(true)
		part.mem = sc.mem
	} else {
		b, err := s.Alloc(n)
		if err != nil {
			return err
		}
		defer b.Free()
		part.buf = b
	}
	if cnt != nil {
		return j.launch(s, plan.fns[0], p1.Spec, p1.Layout, p1.GridX, p1.GridY, p1.Block, nil, nil, &part,
			&redFinal{vals: vals, idx: idx, cnt: cnt})
	}
	if err := j.launch(s, plan.fns[0], p1.Spec, p1.Layout, p1.GridX, p1.GridY, p1.Block, nil, nil, &part, nil); err != nil {
		return err
	}
	return j.launchPartial(s, plan.fns[1], p2, &part, vals, idx)
}

// redScratchMax is the most bytes of partial results that come from the stream's
// scratch, which keeps up to scratchKeep blocks of a kind until the stream closes (out
// of TrimMemory's reach: so at most 1 MiB a stream here). Larger ones are a buffer's,
// from the block cache or the driver. The Metal-size rows' (1000x512 float32) take up
// to 186 KiB: FindMin over axis 0, values and indices. A variable for the tests.
var redScratchMax int64 = 256 << 10

// redPartials is where a first pass's partial results go, the values at byte 0 and the
// indices (arg operations) at ioff: scratch of the stream's (mem: untracked, the stream
// orders its uses) or a buffer.
type redPartials struct {
	mem  backend.Mem
	buf  *Buffer
	ioff int64
}

// add adds the pointer to the values (idx false) or the indices to la, used as mode.
func (p *redPartials) add(la *launchArgs, idx bool, mode AccessMode) {
	off := int64(0)
	if idx {
		off = p.ioff
	}
	if p.buf != nil {
		la.hold(p.buf)
		la.mem(p.buf.a, p.buf.off+off, mode)
	} else {
		la.raw(p.mem, off)
	}
}

// redFinal is the final outputs and the ticket counters of a fused launch.
type redFinal struct {
	vals, idx *header
	cnt       backend.Mem
}

// redPlan is a reduction's iteration space, launches and their kernels.
type redPlan struct {
	layout kernel.ReduceLayout
	passes []kernel.ReducePass
	fused  *kernel.ReducePass // the two passes in one launch (fns is then its kernel)
	fns    []*Function
}

// Plans are cached by everything they depend on, so that a repeated reduction spends no
// time planning (collapsing, choosing the passes, the kernels' keys).
const redPlanMax = 4096

var (
	redPlans     sync.Map // redPlanKey -> *redPlan
	redPlanCount atomic.Int64
)

type redPlanKey struct {
	dev *Device
	// the tuning the plan follows
	plan          kernel.ReduceTuning
	blocksPerSM   int
	fuse, index64 bool
	op            kernel.Op
	pre           kernel.ReducePre
	acc           dtype.DType
	out           dtype.DType
	mean          bool
	nins          int8
	ins           [4]dtype.DType
	mapExpr       *expr.Expr // the device's cached parse: equal pointers, equal maps
	rank          int8
	mask          uint16
	shape         [8]int
	strides       [4][8]int
	aligned       uint8
}

// planKey returns the job's plan key, if it fits one.
func (j *redJob) planKey(d *Device, tu *Tuning) (redPlanKey, bool) {
	k := redPlanKey{dev: d, plan: tu.reducePlan(), blocksPerSM: tu.ReduceBlocksPerSM, fuse: tu.ReduceFuse, index64: tu.ReduceIndex64, op: j.spec.Op, pre: j.spec.Pre, acc: j.spec.Acc, out: j.spec.Out, mean: j.spec.Mean,
		nins: int8(len(j.spec.Ins)), rank: int8(len(j.shape))}
	if len(j.shape) > len(k.shape) || len(j.ops) > len(k.strides) || len(j.spec.Ins) > len(k.ins) {
		return k, false
	}
	copy(k.ins[:], j.spec.Ins)
	k.mapExpr = j.spec.Map
	copy(k.shape[:], j.shape)
	for d, r := range j.mask {
		if r {
			k.mask |= 1 << d
		}
	}
	for i, op := range j.ops {
		copy(k.strides[i][:], op.st)
		if redPtr(op.h)%16 == 0 {
			k.aligned |= 1 << i
		}
	}
	return k, true
}

// plan collapses the job's iteration space, plans its launches on d and compiles their
// kernels.
func (j *redJob) plan(d *Device, tu *Tuning) (*redPlan, error) {
	p := j.planPasses(d, tu)
	if p.fused != nil {
		fn, err := d.kernel(p.fused.Spec)
		if err != nil {
			return nil, err
		}
		p.fns = []*Function{fn}
		return p, nil
	}
	for _, q := range p.passes {
		fn, err := d.kernel(q.Spec)
		if err != nil {
			return nil, err
		}
		p.fns = append(p.fns, fn)
	}
	return p, nil
}

func (j *redJob) planPasses(d *Device, tu *Tuning) *redPlan {
	strides := make([][]int, len(j.ops))
	for i, op := range j.ops {
		strides[i] = op.st
	}
	l := kernel.CollapseReduce(j.shape, strides, j.mask, !j.spec.Op.IsArg())
	p := &redPlan{layout: l}
	if l.M() == 0 {
		return p
	}
	if d.info.Backend == "cpu" {
		sp := j.spec
		sp.KeptRank, sp.RedRank = len(l.Kept), len(l.Red)
		p.passes = []kernel.ReducePass{{Spec: &sp, Layout: l, GridX: 1, GridY: 1, Block: 1}}
		return p
	}
	aligned := make([]bool, len(j.ops))
	for i, op := range j.ops {
		aligned[i] = redPtr(op.h)%16 == 0
	}
	occ := d.redOccupancy
	if n := tu.ReduceBlocksPerSM; n > 0 {
		occ = func(*kernel.Reduce) int { return n }
	}
	p.passes = kernel.PlanReduce(j.spec, l, aligned, d.info.Multiprocessors, tu.reducePlan(), occ)
	if tu.ReduceIndex64 {
		for _, q := range p.passes {
			q.Spec.Index64 = true
		}
	}
	if tu.ReduceFuse && len(p.passes) == 2 {
		if fp, _, ok := kernel.FuseReduce(p.passes[0], p.passes[1]); ok {
			p.fused = &fp
		}
	}
	return p
}

// redOccupancies caches the blocks per multiprocessor of reduction kernels.
var redOccupancies sync.Map // *Function -> int

// redOccupancy returns how many blocks of sp's kernel fit on one multiprocessor of d,
// or 0 if the backend can't tell.
func (d *Device) redOccupancy(sp *kernel.Reduce) int {
	fn, err := d.kernel(sp)
	if err != nil {
		return 0
	}
	if v, ok := redOccupancies.Load(fn); ok {
		return v.(int)
	}
	n := 0
	if o, ok := fn.BackendFunction().(interface {
		OccupancyBlocks(block, dynSmem int) (int, error)
	}); ok {
		if v, err := o.OccupancyBlocks(sp.GPU.Block, 0); err == nil {
			n = v
		}
	}
	redOccupancies.Store(fn, n)
	return n
}

// viaTemp computes into fresh arrays and copies them to vals and idx.
func (j *redJob) viaTemp(s *Stream, vals, idx *header) error {
	tmp := func(h *header) (*header, error) {
		if h == nil {
			return nil, nil
		}
		buf, err := s.Alloc(int64(prod(h.shape) * h.dt.Size()))
		if err != nil {
			return nil, err
		}
		return &header{buf: buf, dt: h.dt, shape: h.shape, strides: rowMajor(h.shape)}, nil
	}
	tv, err := tmp(vals)
	if err != nil {
		return err
	}
	ti, err := tmp(idx)
	if err != nil {
		if tv != nil {
			tv.buf.Free()
		}
		return err
	}
	for _, t := range []*header{tv, ti} {
		if t != nil {
			defer t.buf.Free()
		}
	}
	if err := j.run(s, tv, ti); err != nil {
		return err
	}
	for _, p := range [][2]*header{{vals, tv}, {idx, ti}} {
		if p[0] != nil {
			if err := evalIntoHeader(s, p[0], p[1]); err != nil {
				return err
			}
		}
	}
	return nil
}

// redPtr returns the device address of an array's element 0.
func redPtr(h *header) uint64 {
	return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size())
}

// launch enqueues one pass over layout l. The outputs are vals/idx (arrays) or, for a
// partial pass, the partial results part, and for a fused one (sp.Final set) also fin's. The
// backend's arguments are built directly (no boxing), as Eval does.
func (j *redJob) launch(s *Stream, fn *Function, sp *kernel.Reduce, l kernel.ReduceLayout, gx, gy, block int, vals, idx *header, part *redPartials, fin *redFinal) error {
	la := newLaunchArgs()
	switch {
	case part != nil:
		part.add(&la, false, Write)
	case vals != nil:
		la.hdr(vals, Write)
	default:
		la.null()
	}
	if sp.Op.IsArg() {
		if part != nil {
			part.add(&la, true, Write)
		} else {
			la.hdr(idx, Write)
		}
	}
	la.u64(uint64(l.M()))
	la.u64(uint64(l.K()))
	for i := range j.ops {
		la.hdr(j.ops[i].h, Read)
	}
	for _, n := range l.Kept {
		la.u64(uint64(n))
	}
	for _, n := range l.Red {
		la.u64(uint64(n))
	}
	for i := range j.ops {
		for _, v := range l.KeptStr[i] {
			la.u64(uint64(v))
		}
	}
	for i := range j.ops {
		for _, v := range l.RedStr[i] {
			la.u64(uint64(v))
		}
	}
	if sp.Mean {
		la.u64(uint64(j.count()))
	}
	for _, p := range j.params {
		la.scalar(p.t.Size(), p.bits)
	}
	if fin != nil {
		if fin.vals != nil {
			la.hdr(fin.vals, Write)
		} else {
			la.null()
		}
		if sp.Op.IsArg() {
			la.hdr(fin.idx, Write)
		}
		la.raw(fin.cnt, 0)
		if sp.Final.Mean {
			la.u64(uint64(j.count()))
		}
	}
	return la.launch(s, fn, launchGeometry(gx, gy, block))
}

// count returns the number of elements each output reduces.
func (j *redJob) count() int {
	n := 1
	for d, v := range j.shape {
		if j.mask[d] {
			n *= v
		}
	}
	return n
}

// launchPartial enqueues the second pass p over the partial results part, into vals and
// idx.
func (j *redJob) launchPartial(s *Stream, fn *Function, p kernel.ReducePass, part *redPartials, vals, idx *header) error {
	sp := p.Spec
	l := p.Layout
	la := newLaunchArgs()
	if vals != nil {
		la.hdr(vals, Write)
	} else {
		la.null()
	}
	if sp.Op.IsArg() {
		la.hdr(idx, Write)
	}
	la.u64(uint64(l.M()))
	la.u64(uint64(l.K()))
	part.add(&la, false, Read)
	if sp.Op.IsArg() {
		part.add(&la, true, Read)
	}
	for _, n := range l.Kept {
		la.u64(uint64(n))
	}
	for _, n := range l.Red {
		la.u64(uint64(n))
	}
	for _, v := range l.KeptStr[0] {
		la.u64(uint64(v))
	}
	for _, v := range l.RedStr[0] {
		la.u64(uint64(v))
	}
	if sp.Mean {
		la.u64(uint64(j.count()))
	}
	return la.launch(s, fn, launchGeometry(p.GridX, p.GridY, p.Block))
}

// newJob builds the reduction of one array a (Pre convert or nonzero) into results of
// type r (a half type accumulates in float32: redAcc).
func newJob[T Elem](a *Array[T], op kernel.Op, pre kernel.ReducePre, r dtype.DType, mask []bool) *redJob {
	h := a.header()
	acc, out := redAcc(r)
	return &redJob{
		spec:  kernel.Reduce{Op: op, Pre: pre, Ins: []dtype.DType{h.dt}, Acc: acc, Out: out},
		shape: h.shape,
		mask:  mask,
		ops:   []redOperand{{h: h, st: h.strides}},
	}
}

// redAcc returns the accumulator type of reductions into results of type r, and the
// result type when it differs (kernel.Reduce's Out): float16 and bfloat16 results
// accumulate in float32 and round once (as CuPy and PyTorch reduce them).
func redAcc(r dtype.DType) (acc, out dtype.DType) {
	if isHalf(r) {
		return dtype.Float32, r
	}
	return r, dtype.Invalid
}

// checkAcc checks the accumulator type R of a sum or product of T.
func checkAcc(name string, t, r dtype.DType) error {
	switch {
	case r == dtype.Bool:
		return fmt.Errorf("gpu: %s into bool: use Any or All, or an integer type: %w", name, ErrInvalidValue)
	case t.IsFloat() && r.IsInteger():
		return fmt.Errorf("gpu: %s of %v in %v: convert explicitly with MapReduce (\"int64(x)\"): %w", name, t, r, ErrInvalidValue)
	}
	return nil
}

// reduceNew runs j into a new array of R with the result shape.
func reduceNew[R Elem](s *Stream, j *redJob, out []int) (*Array[R], error) {
	res, err := Empty[R](s, out...)
	if err != nil {
		return nil, err
	}
	if err := j.run(s, res.header(), nil); err != nil {
		res.Free()
		return nil, err
	}
	return res, nil
}

// reduceTo runs j into out, which must have the result shape (any view that isn't a
// broadcast); a non-contiguous out is written through a temporary.
func reduceTo[R Elem](s *Stream, j *redJob, out *Array[R], shape []int) error {
	if !slices.Equal(out.shape, shape) {
		return fmt.Errorf("gpu: reduction result of shape %v into an array of shape %v: %w", shape, out.shape, ErrInvalidValue)
	}
	if out.hasZeroStride() {
		return fmt.Errorf("gpu: reduction into a broadcast view: %w", ErrInvalidValue)
	}
	if out.IsContiguous() {
		return j.run(s, out.header(), nil)
	}
	tmp, err := reduceNew[R](s, j, shape)
	if err != nil {
		return err
	}
	defer tmp.Free()
	return Copy(s, out, tmp)
}

func sumLike[R, T Elem](s *Stream, name string, op kernel.Op, a *Array[T], opts []ReduceOption) (*redJob, []int, error) {
	r := dtype.Of[R]()
	if err := checkAcc(name, a.dt, r); err != nil {
		return nil, nil, err
	}
	mask, out, err := resolveAxes(a.shape, opts, false)
	if err != nil {
		return nil, nil, err
	}
	return newJob(a, op, kernel.PreConvert, r, mask), out, nil
}

// Sum returns the sum of a's elements over the axes (all by default), accumulated in
// R (numpy.sum(a, axis, dtype=R); NumPy's default R is AccumType(T): int64 for bool
// and signed integers, uint64 for unsigned, T for floats). ReduceOption's documentation
// covers the axes, result types, semantics and accuracy of every reduction.
//
//	total, err := gpu.Sum[float32](s, x)                  // 0-d
//	rows, err := gpu.Sum[int64](s, counts, gpu.Axes(-1))  // one per row
func Sum[R, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	j, out, err := sumLike[R](s, "sum", kernel.OpSum, a, opts)
	if err != nil {
		return nil, err
	}
	return reduceNew[R](s, j, out)
}

// Prod returns the product of a's elements over the axes, accumulated in R
// (numpy.prod(a, axis, dtype=R)); the product of no elements is 1.
func Prod[R, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	j, out, err := sumLike[R](s, "prod", kernel.OpProd, a, opts)
	if err != nil {
		return nil, err
	}
	return reduceNew[R](s, j, out)
}

// Mean returns the arithmetic mean of a's elements over the axes: their sum
// accumulated in R, divided by their number (numpy.mean(a, axis, dtype=R); NumPy's
// default R is float64 for integer and bool inputs, T for float inputs). The mean of
// no elements is NaN.
func Mean[R Float, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	j, out, err := sumLike[R](s, "mean", kernel.OpSum, a, opts)
	if err != nil {
		return nil, err
	}
	j.spec.Mean = true
	return reduceNew[R](s, j, out)
}

func minMax[T Elem](s *Stream, op kernel.Op, a *Array[T], opts []ReduceOption) (*redJob, []int, error) {
	mask, out, err := resolveAxes(a.shape, opts, false)
	if err != nil {
		return nil, nil, err
	}
	return newJob(a, op, kernel.PreConvert, a.dt, mask), out, nil
}

// Min returns the least of a's elements over the axes (numpy.amin): the canonical NaN
// if any is NaN (the package's NaN policy; NumPy returns the NaN itself), with -0 below
// +0. An empty reduction (no elements for a
// non-empty result) is an error wrapping ErrInvalidValue.
func Min[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	j, out, err := minMax(s, kernel.OpMin, a, opts)
	if err != nil {
		return nil, err
	}
	return reduceNew[T](s, j, out)
}

// Max returns the greatest of a's elements over the axes (numpy.amax): the canonical
// NaN if any is NaN, with +0 above -0. An empty reduction is an error wrapping ErrInvalidValue.
func Max[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	j, out, err := minMax(s, kernel.OpMax, a, opts)
	if err != nil {
		return nil, err
	}
	return reduceNew[T](s, j, out)
}

func anyAll[T Elem](s *Stream, op kernel.Op, a *Array[T], opts []ReduceOption) (*Array[bool], error) {
	mask, out, err := resolveAxes(a.shape, opts, false)
	if err != nil {
		return nil, err
	}
	return reduceNew[bool](s, newJob(a, op, kernel.PreConvert, dtype.Bool, mask), out)
}

// Any reports over the axes whether any element of a is nonzero (NaN counts as
// nonzero) (numpy.any); false for no elements.
func Any[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[bool], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	return anyAll(s, kernel.OpOr, a, opts)
}

// All reports over the axes whether every element of a is nonzero (numpy.all); true
// for no elements.
func All[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[bool], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	return anyAll(s, kernel.OpAnd, a, opts)
}

// Count returns the number of nonzero elements of a over the axes (NaN counts as
// nonzero) (numpy.count_nonzero(a, axis)). CountNonzero gives the count over all
// elements as a Go int.
func Count[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[int64], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	mask, out, err := resolveAxes(a.shape, opts, false)
	if err != nil {
		return nil, err
	}
	return reduceNew[int64](s, newJob(a, kernel.OpSum, kernel.PreNonzero, dtype.Int64, mask), out)
}

// ReduceInto reduces a with op (OpSum, OpProd, OpMin, OpMax, OpAny, OpAll) over the
// axes into out, which must have the result's shape (KeepDims included) and may be any
// view that isn't broadcast. Elements are converted to R and accumulated in R, with
// the rules of Sum (OpSum, OpProd), Min and Max (R must then be T) and Any and All (R
// must be bool).
func ReduceInto[R, T Elem](s *Stream, out *Array[R], op Op, a *Array[T], opts ...ReduceOption) error {
	if err := nonNil(out, a); err != nil {
		return err
	}
	kop, err := reduceOpOf(op)
	if err != nil {
		return err
	}
	r := dtype.Of[R]()
	switch kop {
	case kernel.OpSum, kernel.OpProd:
		if err := checkAcc(string(op), a.dt, r); err != nil {
			return err
		}
	case kernel.OpMin, kernel.OpMax:
		if r != a.dt {
			return fmt.Errorf("gpu: %s of %v into %v: the types must match: %w", string(op), a.dt, r, ErrInvalidValue)
		}
	default:
		if r != dtype.Bool {
			return fmt.Errorf("gpu: %s into %v: want bool: %w", string(op), r, ErrInvalidValue)
		}
	}
	mask, shape, err := resolveAxes(a.shape, opts, false)
	if err != nil {
		return err
	}
	return reduceTo(s, newJob(a, kop, kernel.PreConvert, r, mask), out, shape)
}

// MapReduce evaluates the expression src over vars elementwise (as Eval: arrays
// broadcast together, Go scalars are parameters; the value is converted to R) and
// reduces the values with op over the axes of the broadcast shape, in one kernel with
// no intermediate array: the sum of squares is
//
//	ss, err := gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum)
//
// op is OpSum, OpProd, OpMin, OpMax, OpAny or OpAll (R must be bool for the last two,
// and not bool for sums and products), with the semantics of the named reductions.
func MapReduce[R Elem](s *Stream, src string, vars Vars, op Op, opts ...ReduceOption) (*Array[R], error) {
	j, shape, err := mapReduceJob[R](s, src, vars, op, opts)
	if err != nil {
		return nil, err
	}
	return reduceNew[R](s, j, shape)
}

// MapReduceInto is MapReduce into out, which must have the result's shape (any view
// that isn't broadcast).
func MapReduceInto[R Elem](s *Stream, out *Array[R], src string, vars Vars, op Op, opts ...ReduceOption) error {
	if err := nonNil(out); err != nil {
		return err
	}
	j, shape, err := mapReduceJob[R](s, src, vars, op, opts)
	if err != nil {
		return err
	}
	return reduceTo(s, j, out, shape)
}

func mapReduceJob[R Elem](s *Stream, src string, vars Vars, op Op, opts []ReduceOption) (*redJob, []int, error) {
	if err := nilStream(s); err != nil {
		return nil, nil, err
	}
	kop, err := reduceOpOf(op)
	if err != nil {
		return nil, nil, err
	}
	r := dtype.Of[R]()
	switch {
	case (kop == kernel.OpOr || kop == kernel.OpAnd) && r != dtype.Bool:
		return nil, nil, fmt.Errorf("gpu: %s into %v: want bool: %w", string(op), r, ErrInvalidValue)
	case (kop == kernel.OpSum || kop == kernel.OpProd) && r == dtype.Bool:
		return nil, nil, fmt.Errorf("gpu: %s into bool: %w", string(op), ErrInvalidValue)
	}
	// The parsed expression comes from the device's cache of Eval's plans (same
	// signature rules), so a repeated MapReduce parses nothing. Its values are the
	// accumulator's (a half-precision result: float32 values, rounded once at the end).
	acc, outT := redAcc(r)
	p, err := s.dev.plan(src, vars, acc)
	if err != nil {
		return nil, nil, err
	}
	var ops []redOperand
	var ins []dtype.DType
	var params []redParam
	var shapes [][]int
	for i, name := range p.names {
		switch p.kinds[i] {
		case 'i':
			return nil, nil, fmt.Errorf("gpu: MapReduce variable %q: LinearIndex is not available in reductions: %w", name, ErrNotSupported)
		case 'a':
			h := vars[name].(AnyArray).header()
			ops = append(ops, redOperand{h: h})
			ins = append(ins, h.dt)
			shapes = append(shapes, h.shape)
		default:
			_, t, bits, err := scalarDecl(len(params), vars[name])
			if err != nil {
				return nil, nil, fmt.Errorf("gpu: variable %q: %w", name, err)
			}
			if err := p.checkParam(len(params), name, bits); err != nil {
				return nil, nil, err
			}
			params = append(params, redParam{t, bits})
		}
	}
	if len(ops) == 0 {
		return nil, nil, fmt.Errorf("gpu: MapReduce of %q without an array operand: %w", src, ErrInvalidValue)
	}
	// The kernel takes the parameters the expression reads, in slot order: a scalar in
	// vars that src doesn't use is no argument.
	used := make([]redParam, 0, len(p.e.Params))
	for _, sl := range p.e.Params {
		used = append(used, params[sl.Index])
	}
	params = used
	shape, err := BroadcastShapes(shapes...)
	if err != nil {
		// Again, naming the variables (in name order, as p.names).
		vals := make([]any, len(p.names))
		for i, name := range p.names {
			vals[i] = vars[name]
		}
		if _, nerr := broadcastOperands("MapReduce", vals, variableLabels(p.names)); nerr != nil {
			err = nerr
		}
		return nil, nil, err
	}
	if _, err := checkShape(shape); err != nil {
		return nil, nil, err // an element count that wraps would reduce the wrong number of values
	}
	for i := range ops {
		if ops[i].st, err = broadcastStrides(ops[i].h.shape, ops[i].h.strides, shape); err != nil {
			return nil, nil, err
		}
	}
	mask, out, err := resolveAxes(shape, opts, false)
	if err != nil {
		return nil, nil, err
	}
	j := &redJob{
		spec:   kernel.Reduce{Op: kop, Pre: kernel.PreExpr, Map: p.e, Ins: ins, Acc: acc, Out: outT},
		shape:  shape,
		mask:   mask,
		ops:    ops,
		params: params,
	}
	return j, out, nil
}

func argJob[T Elem](op kernel.Op, a *Array[T], opts []ReduceOption) (*redJob, []int, error) {
	mask, out, err := resolveAxes(a.shape, opts, true)
	if err != nil {
		return nil, nil, err
	}
	return newJob(a, op, kernel.PreConvert, a.dt, mask), out, nil
}

func argRun[T Elem](s *Stream, op kernel.Op, a *Array[T], opts []ReduceOption, values bool) (*Array[T], *Array[int64], error) {
	j, shape, err := argJob(op, a, opts)
	if err != nil {
		return nil, nil, err
	}
	idx, err := Empty[int64](s, shape...)
	if err != nil {
		return nil, nil, err
	}
	var vals *Array[T]
	var vh *header
	if values {
		if vals, err = Empty[T](s, shape...); err != nil {
			idx.Free()
			return nil, nil, err
		}
		vh = vals.header()
	}
	if err := j.run(s, vh, idx.header()); err != nil {
		idx.Free()
		if vals != nil {
			vals.Free()
		}
		return nil, nil, err
	}
	return vals, idx, nil
}

// ArgMin returns the index of the least element of a (numpy.argmin): over all elements
// by default (a 0-d array holding the flat row-major index), or along the one axis
// given with Axes (the position along that axis; KeepDims keeps it with size 1). A NaN
// is least: the index of the first NaN is returned if there is one; among equal values
// (-0 equals +0) the first index wins. An empty reduction is an error wrapping
// ErrInvalidValue.
func ArgMin[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[int64], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	_, idx, err := argRun(s, kernel.OpArgMin, a, opts, false)
	return idx, err
}

// ArgMax returns the index of the greatest element of a (numpy.argmax), with ArgMin's
// rules (NaN first, then the first index among ties).
func ArgMax[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[int64], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	_, idx, err := argRun(s, kernel.OpArgMax, a, opts, false)
	return idx, err
}

// FindMin returns the least elements of a and their indices, as ArgMin (Julia's
// findmin): vals holds the elements at the indices, bit for bit (a NaN with its payload
// and sign, as it is in a: FindMin selects, it computes nothing).
func FindMin[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (vals *Array[T], idx *Array[int64], err error) {
	if err := nonNil(a); err != nil {
		return nil, nil, err
	}
	return argRun(s, kernel.OpArgMin, a, opts, true)
}

// FindMax returns the greatest elements of a and their indices, as ArgMax (Julia's
// findmax).
func FindMax[T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (vals *Array[T], idx *Array[int64], err error) {
	if err := nonNil(a); err != nil {
		return nil, nil, err
	}
	return argRun(s, kernel.OpArgMax, a, opts, true)
}
