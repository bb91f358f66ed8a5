package kernel

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"math/bits"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// The CUDA implementation of Reduce: one PTX module with one kernel, written with package
// ptx. The strategy (ReduceGPU, chosen by PlanReduce) is the one of Harris, "Optimizing
// Parallel Reduction in CUDA" (NVIDIA, 2007) with warp shuffles in place of his
// shared-memory tail, and the per-shape choices of CUDA.jl's mapreducedim (serial per
// output, a warp or a block per output, or threads across outputs):
//
//   - every thread first accumulates privately, in Unroll×Vec independent accumulators
//     (one per load in flight: Unroll vector loads of Vec elements are all issued before
//     the first is used), over the positions r = y*L + lane, then every S*L (L threads
//     per output, S = gridDim.y blocks per output), in a grid-stride loop;
//   - the thread's accumulators then combine pairwise ((a0∘a1)∘(a2∘a3)...), and the L
//     threads of an output combine: rows by xor-butterfly warp shuffles
//     (shfl.sync.bfly: every lane ends with the same, bitwise identical value) and, for a
//     block per output, the warps' results through shared memory and one more butterfly;
//     columns (threads across outputs) by a tree over the row lanes in shared memory;
//   - a block loops over tiles of outputs (tile += gridDim.x), so any grid is correct;
//     every thread of a block runs the same number of iterations, so barriers and
//     shuffles are always reached by the whole block (threads without an output carry
//     the identity);
//   - with Partial set, out[y*m + o] receives the partial result of block row y, for a
//     second launch (PlanReduce's second pass) to combine, or, with Final set too, for
//     the last block of the tile to combine in this launch (FuseReduce, ticket and
//     buildFinal); otherwise the final value is stored (Mean divides it by count).
//
// Values combine by the operator table (operator.go), lowered by the elementwise
// generator: the same bits as the CPU, NaNs canonical, -0 below +0. The arg operators
// compare (value, index) pairs by a total order (Op.Before: NaN first, then value, then
// the lower index), so the result doesn't depend on the order in which partial results
// meet.
//
// Indices are 32-bit unless Index64 (then positions, offsets and tile numbers are 64-bit;
// byte addresses are always 64-bit); the arg operations' indices are always int64.

// EntryName returns the kernel's entry name: "reduce_" and a hash of the key.
func (r *Reduce) EntryName() string {
	h := sha256.Sum256([]byte(r.Key()))
	return "reduce_" + r.Op.String() + "_" + hex.EncodeToString(h[:6])
}

// redType is the type a reduction holds a value of type t as: bools as bytes 0 and 1
// (Uint8), so that they shuffle and sit in shared memory as numbers. Registers are the
// elementwise lowering's (ewRT of it), memory accesses too (ewMemSuffix).
func redType(t dtype.DType) dtype.DType {
	if t == dtype.Bool {
		return dtype.Uint8
	}
	return t
}

// redVal is an accumulator: a value and, for the arg operations, its index (S64).
type redVal struct {
	v, i ptx.Reg
}

type redGen struct {
	r   *Reduce
	g   ReduceGPU
	m   *ptx.Module
	f   *ptx.Func
	sm  int
	it  ptx.Type // positions and counts: U32 or U64
	st  ptx.Type // signed element offsets: S32 or S64
	at  ptx.Type // accumulator register type
	ixt ptx.Type // arg operations' index registers: S32 (positions < 2^31) or S64
	arg bool

	params                             []ptx.Param
	pOut, pIdx, pM, pK, pInIdx, pCount int
	pIn, pMShape, pKShape              []int
	pMStr, pKStr                       [][]int
	pMap                               map[int]int

	out, idx, inIdx ptx.Reg   // u64 addresses
	mr, kr          ptx.Reg   // it
	ins             []ptx.Reg // u64 addresses
	mshape, kshape  []ptx.Reg // it
	mstr, kstr      [][]ptx.Reg
	mapParams       map[int]ptx.Reg
	smV, smI        string // shared memory arrays

	// a fused kernel's parameters (Final set), -1 if absent
	pFOut, pFIdx, pFCnt, pFCount int
	ewl                          *ewGen // the operator's lowering (ew)
	// the final pass of a fused kernel: partial results are read with ld.global.cg,
	// shared arrays are named fin_*, and only outputs in [lo, hi) are stored
	final    bool
	lo, hi   ptx.Reg
	nthreads int // a final pass: the block's threads (Block or more; columns only)
}

// redLoop is the tile loop of a kernel body: positions start at block row y of S,
// tiles go from tile by tstep while below tend (if valid; else the number of tiles),
// and after, if set, runs after each tile's store (with the block's thread index).
type redLoop struct {
	y, S        ptx.Reg
	tile, tstep ptx.Reg
	tend        ptx.Reg
	after       func(tile, tid ptx.Reg)
}

// PTX returns the kernel's PTX module for a GPU of compute capability major.minor.
func (r *Reduce) PTX(major, minor int) (src string, entry string, err error) {
	if err := r.Validate(); err != nil {
		return "", "", err
	}
	if r.GPU.Block == 0 {
		return "", "", fmt.Errorf("kernel: reduction %s has no GPU strategy", r.Key())
	}
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("kernel: generating %s: %v", r.Key(), p)
		}
	}()
	g := &redGen{r: r, g: r.GPU, m: ptx.NewModule(major, minor), sm: major*10 + minor,
		it: ptx.U32, st: ptx.S32, ixt: ptx.S32, at: ewRT(redType(r.Acc)), arg: r.Op.IsArg()}
	if r.Index64 {
		g.it, g.st, g.ixt = ptx.U64, ptx.S64, ptx.S64
	}
	g.build()
	return g.m.String(), r.EntryName(), nil
}

func (g *redGen) add(name string, t ptx.Type) int {
	g.params = append(g.params, ptx.P(name, t))
	return len(g.params) - 1
}

func (g *redGen) ldParam(i int) ptx.Reg {
	p := g.params[i]
	r := g.f.Reg(p.Type)
	g.f.Op("ld.param"+p.Type.String(), r, ptx.Mem(ptx.Sym(p.Name), 0))
	return r
}

// narrow returns an it copy of a u64 register.
func (g *redGen) narrow(r ptx.Reg) ptx.Reg {
	if g.it == ptx.U64 {
		return r
	}
	d := g.f.Reg(ptx.U32)
	g.f.Cvt(d, r)
	return d
}

func (g *redGen) declare() {
	r := g.r
	g.pOut = g.add("red_out", ptx.U64)
	g.pIdx = -1
	if g.arg {
		g.pIdx = g.add("red_idx", ptx.U64)
	}
	g.pM = g.add("red_m", ptx.U64)
	g.pK = g.add("red_k", ptx.U64)
	for j := range r.Ins {
		g.pIn = append(g.pIn, g.add(fmt.Sprintf("red_in%d", j), ptx.U64))
	}
	g.pInIdx = -1
	if g.arg && r.Pre == PrePartial {
		g.pInIdx = g.add("red_inidx", ptx.U64)
	}
	for d := 0; d < r.KeptRank; d++ {
		g.pMShape = append(g.pMShape, g.add(fmt.Sprintf("red_mshape%d", d), ptx.U64))
	}
	for d := 0; d < r.RedRank; d++ {
		g.pKShape = append(g.pKShape, g.add(fmt.Sprintf("red_kshape%d", d), ptx.U64))
	}
	g.pMStr = make([][]int, len(r.Ins))
	g.pKStr = make([][]int, len(r.Ins))
	for j := range r.Ins {
		for d := 0; d < r.KeptRank; d++ {
			g.pMStr[j] = append(g.pMStr[j], g.add(fmt.Sprintf("red_mstr%d_%d", j, d), ptx.S64))
		}
	}
	for j := range r.Ins {
		for d := 0; d < r.RedRank; d++ {
			g.pKStr[j] = append(g.pKStr[j], g.add(fmt.Sprintf("red_kstr%d_%d", j, d), ptx.S64))
		}
	}
	g.pCount = -1
	if r.Mean {
		g.pCount = g.add("red_count", ptx.U64)
	}
	g.pMap = map[int]int{}
	if r.Map != nil {
		for _, p := range r.Map.Params {
			g.pMap[p.Index] = g.add(fmt.Sprintf("red_p%d", p.Index), ewParamType(p.DType))
		}
	}
	g.pFOut, g.pFIdx, g.pFCnt, g.pFCount = -1, -1, -1, -1
	if r.Final != nil {
		g.pFOut = g.add("red_fout", ptx.U64)
		if g.arg {
			g.pFIdx = g.add("red_fidx", ptx.U64)
		}
		g.pFCnt = g.add("red_fcnt", ptx.U64)
		if r.Final.Mean {
			g.pFCount = g.add("red_fcount", ptx.U64)
		}
	}
	if len(g.params) != r.numParams() {
		panic(fmt.Sprintf("%d parameters declared, %d documented", len(g.params), r.numParams()))
	}
}

// reads reports whether operand j is read.
func (g *redGen) reads(j int) bool {
	return g.r.Pre != PreExpr || redExprReads(g.r.Map, j)
}

func (g *redGen) loadParams() {
	r := g.r
	g.out = g.ldParam(g.pOut)
	if g.arg {
		g.idx = g.ldParam(g.pIdx)
	}
	g.mr = g.narrow(g.ldParam(g.pM))
	g.kr = g.narrow(g.ldParam(g.pK))
	g.ins = make([]ptx.Reg, len(r.Ins))
	for j := range r.Ins {
		if g.reads(j) {
			g.ins[j] = g.ldParam(g.pIn[j])
		}
	}
	if g.pInIdx >= 0 {
		g.inIdx = g.ldParam(g.pInIdx)
	}
	for _, p := range g.pMShape {
		g.mshape = append(g.mshape, g.narrow(g.ldParam(p)))
	}
	for _, p := range g.pKShape {
		g.kshape = append(g.kshape, g.narrow(g.ldParam(p)))
	}
	g.mstr = make([][]ptx.Reg, len(r.Ins))
	g.kstr = make([][]ptx.Reg, len(r.Ins))
	for j := range r.Ins {
		if !g.reads(j) {
			continue
		}
		for _, p := range g.pMStr[j] {
			g.mstr[j] = append(g.mstr[j], g.narrow(g.ldParam(p)).As(g.st))
		}
		for _, p := range g.pKStr[j] {
			g.kstr[j] = append(g.kstr[j], g.narrow(g.ldParam(p)).As(g.st))
		}
	}
	g.mapParams = map[int]ptx.Reg{}
	if r.Map != nil {
		for _, p := range r.Map.Params {
			g.mapParams[p.Index] = g.ldMapParam(g.pMap[p.Index], p.DType)
		}
	}
}

// ldMapParam loads a scalar parameter of the map as a value in the elementwise
// lowering's register form.
func (g *redGen) ldMapParam(i int, t dtype.DType) ptx.Reg {
	f := g.f
	p := g.params[i]
	if t == dtype.Bool {
		r := f.Reg(ptx.U32)
		f.Op("ld.param.u8", r, ptx.Mem(ptx.Sym(p.Name), 0))
		return f.Setp(ptx.Ne, r, ptx.Int(0))
	}
	r := f.Reg(ewRT(t))
	f.Op("ld.param"+p.Type.String(), r, ptx.Mem(ptx.Sym(p.Name), 0))
	return r
}

// ---- constants ----

func (g *redGen) fimm(x float64) ptx.Operand {
	if g.at == ptx.F64 {
		return ptx.ImmF64(x)
	}
	return ptx.ImmF32(float32(x))
}

// identity returns the operator's identity (Op.Identity) as an immediate of the
// accumulator's register type.
func (g *redGen) identity() ptx.Operand {
	return ewImm(g.r.Op.Identity(g.r.Acc).Convert(redType(g.r.Acc)))
}

func (g *redGen) newAcc() redVal {
	f := g.f
	a := redVal{v: f.Reg(g.at)}
	f.Mov(a.v, g.identity())
	if g.arg {
		a.i = f.Reg(g.ixt)
		f.Mov(a.i, g.noIndex())
	}
	return a
}

// noIndex is the index of an accumulator without an element: greater than any index,
// so that it loses every tie.
func (g *redGen) noIndex() ptx.Operand {
	if g.ixt == ptx.S32 {
		return ptx.Int(math.MaxInt32)
	}
	return ptx.Int(math.MaxInt64)
}

// ---- combining ----

func (g *redGen) bitsOf(t ptx.Type) ptx.Type {
	if t.Bits() == 64 {
		return ptx.B64
	}
	return ptx.B32
}

// ew returns the expression lowering writing into g.f, which lowers the operator.
func (g *redGen) ew() *ewGen {
	if g.ewl == nil || g.ewl.f != g.f {
		g.ewl = exprLowering(g.m, g.f, g.sm, nil)
	}
	return g.ewl
}

// combine sets a = a ∘ b.
func (g *redGen) combine(a, b redVal) {
	f := g.f
	t := redType(g.r.Acc)
	if !g.arg {
		f.Mov(a.v, g.ew().combine(g.r.Op.For(g.r.Acc), t, a.v, b.v))
		return
	}
	it := dtype.Int32
	if g.ixt == ptx.S64 {
		it = dtype.Int64
	}
	take := g.ew().before(g.r.Op, t, it, a.v, a.i, b.v, b.i)
	f.Selp(a.v, b.v, a.v, take)
	f.Selp(a.i, b.i, a.i, take)
}

// redCascadeState is the outer accumulators of a cascade (one per group of
// accumulators) and the iteration counter; nil without a cascade.
type redCascadeState struct {
	outer []redVal
	cnt   ptx.Reg
}

func (g *redGen) newCascade(n int) *redCascadeState {
	if g.g.Cascade <= 0 {
		return nil
	}
	c := &redCascadeState{cnt: g.f.Reg(ptx.U32)}
	g.f.Mov(c.cnt, ptx.Int(0))
	for i := 0; i < n; i++ {
		c.outer = append(c.outer, g.newAcc())
	}
	return c
}

// cascadeStep counts a main-loop iteration and, every Cascade iterations, folds each
// group pairwise into its outer accumulator and resets the accumulators.
func (g *redGen) cascadeStep(c *redCascadeState, accs []redVal, groups [][]redVal) {
	if c == nil {
		return
	}
	f := g.f
	f.Add(c.cnt, c.cnt, ptx.Int(1))
	skip := f.NewLabel()
	f.At(f.Setp(ptx.Lt, c.cnt, ptx.Int(g.g.Cascade))).Bra(skip)
	for i, grp := range groups {
		g.combine(c.outer[i], g.combineAll(slicesClone(grp)))
	}
	for _, a := range accs {
		f.Mov(a.v, g.identity())
	}
	f.Mov(c.cnt, ptx.Int(0))
	f.Place(skip)
}

// finish returns each group's result: its accumulators combined pairwise, folded into
// the outer accumulator if there is a cascade.
func (g *redGen) finish(c *redCascadeState, groups [][]redVal) []redVal {
	res := make([]redVal, len(groups))
	for i, grp := range groups {
		res[i] = g.combineAll(slicesClone(grp))
		if c != nil {
			g.combine(c.outer[i], res[i])
			res[i] = c.outer[i]
		}
	}
	return res
}

func slicesClone(s []redVal) []redVal { return append([]redVal(nil), s...) }

// combineAll combines accs pairwise into accs[0].
func (g *redGen) combineAll(accs []redVal) redVal {
	for len(accs) > 1 {
		var next []redVal
		for i := 0; i+1 < len(accs); i += 2 {
			g.combine(accs[i], accs[i+1])
			next = append(next, accs[i])
		}
		if len(accs)%2 == 1 {
			next = append(next, accs[len(accs)-1])
		}
		accs = next
	}
	return accs[0]
}

// ---- loads and the map ----

// load loads V consecutive elements of operand j at byte address a, as register values
// (ewRT of the operand's redType).
func (g *redGen) load(t dtype.DType, a ptx.Reg, V int) []ptx.Reg {
	f := g.f
	if isHalfType(t) && V > 1 {
		// V halves as V/2 packed 32-bit words (16 bytes for V = 8), unpacked to B16.
		ws := f.Regs(ptx.B32, V/2)
		op := "ld.global.nc.b32"
		if V > 2 {
			op = fmt.Sprintf("ld.global.nc.v%d.b32", V/2)
			f.Op(op, ptx.Vec(ws), ptx.Mem(a, 0))
		} else {
			f.Op(op, ws[0], ptx.Mem(a, 0))
		}
		return ptxUnpackHalves(f, ws, V)
	}
	rt := ptx.B16 // a half-precision element: its bits
	if !isHalfType(t) {
		rt = ewRT(redType(t))
	}
	vals := f.Regs(rt, V)
	op := "ld.global.nc"
	if g.final {
		op = "ld.global.cg" // written by other blocks during the launch
	}
	if V > 1 {
		op += fmt.Sprintf(".v%d", V)
	}
	op += ewMemSuffix(t)
	if V == 1 {
		f.Op(op, vals[0], ptx.Mem(a, 0))
	} else {
		f.Op(op, ptx.Vec(vals), ptx.Mem(a, 0))
	}
	return vals
}

// convert converts a register value of element type from (ewRT of its redType) to the
// accumulator's register form.
func (g *redGen) convert(x ptx.Reg, from dtype.DType) ptx.Reg {
	f := g.f
	to := g.r.Acc
	if to == dtype.Bool {
		if from == dtype.Bool {
			return x
		}
		return g.nonzero(x, from)
	}
	switch {
	case g.arg && from == dtype.Float16:
		x = ptxF16ToF32Exact(f, x) // a NaN's payload too: the value is the element
	case isHalfType(from):
		x, _ = ptxHalfToF32(f, x, from) // exact
	}
	xt := x.Type()
	if xt == g.at {
		return x
	}
	d := f.Reg(g.at)
	switch {
	case g.at.IsFloat() && xt.IsFloat():
		f.Cvt(d, x)
	case g.at.IsFloat():
		f.CvtRound(d, x, ".rn")
	case xt.Bits() == g.at.Bits():
		return x.As(g.at)
	case xt.Bits() < g.at.Bits():
		// sign- or zero-extend by the source's signedness
		f.CvtRound(d, x, "")
	default:
		f.CvtRound(d.As(ptx.U32), x.As(ptx.U64), "")
	}
	return d
}

// nonzero returns x != 0 (NaN is nonzero) as 0 or 1 in the accumulator's form.
func (g *redGen) nonzero(x ptx.Reg, from dtype.DType) ptx.Reg {
	f := g.f
	var p ptx.Reg
	switch {
	case isHalfType(from):
		p = ptxHalfNonzero(f, x)
	case from.IsFloat():
		p = f.Reg(ptx.Pred)
		zero := ptx.Operand(ptx.ImmF32(0))
		if from == dtype.Float64 {
			zero = ptx.ImmF64(0)
		}
		f.Op("setp.neu"+x.Type().String(), p, x, zero)
	default:
		p = f.Reg(ptx.Pred)
		f.Op("setp.ne"+opTypeOf(x.Type()), p, x, ptx.Int(0))
	}
	d := f.Reg(g.at)
	if g.at.IsFloat() {
		f.Selp(d, g.fimm(1), g.fimm(0), p)
	} else {
		f.Selp(d, ptx.Int(1), ptx.Int(0), p)
	}
	return d
}

func opTypeOf(t ptx.Type) string {
	if t.IsBits() {
		return t.Unsigned().String()
	}
	return t.String()
}

// element turns the loaded operands (vals[j] for each operand read) into an
// accumulator value.
func (g *redGen) element(vals map[int]ptx.Reg) ptx.Reg {
	r := g.r
	switch r.Pre {
	case PreConvert, PrePartial:
		return g.convert(vals[0], r.Ins[0])
	case PreNonzero:
		return g.nonzero(vals[0], r.Ins[0])
	}
	return g.mapValue(vals)
}

// mapValue lowers the map for one element with the elementwise lowering.
func (g *redGen) mapValue(vals map[int]ptx.Reg) ptx.Reg {
	r := g.r
	ins := map[int]ptx.Reg{}
	for j, v := range vals {
		ins[j] = g.toEW(v, r.Ins[j])
	}
	res := lowerExpr(g.m, g.f, g.sm, r.Map, ins, g.mapParams)
	return g.fromEW(res, r.Acc)
}

// toEW converts a loaded value to the elementwise lowering's register form (bools are
// predicates there).
func (g *redGen) toEW(v ptx.Reg, t dtype.DType) ptx.Reg {
	if t == dtype.Bool {
		return g.f.Setp(ptx.Ne, v, ptx.Int(0))
	}
	return v
}

// fromEW converts a value in the elementwise lowering's form to the accumulator's.
func (g *redGen) fromEW(v ptx.Reg, t dtype.DType) ptx.Reg {
	if t == dtype.Bool {
		d := g.f.Reg(ptx.U32)
		g.f.Selp(d, ptx.Int(1), ptx.Int(0), v)
		return d
	}
	return v.As(g.at)
}

// ---- index arithmetic ----

// digits returns the multi-index of x (it) in shape (innermost last).
func (g *redGen) digits(x ptx.Reg, shape []ptx.Reg) []ptx.Reg {
	f := g.f
	out := make([]ptx.Reg, len(shape))
	q := x
	for d := len(shape) - 1; d >= 0; d-- {
		if d == 0 {
			out[d] = q
			break
		}
		rem := f.Reg(g.it)
		f.Rem(rem, q, shape[d])
		nq := f.Reg(g.it)
		f.Div(nq, q, shape[d])
		out[d] = rem
		q = nq
	}
	return out
}

// dot returns sum of digits[d]*strides[d] (st).
func (g *redGen) dot(digits []ptx.Reg, strides []ptx.Reg) ptx.Reg {
	f := g.f
	acc := f.Reg(g.st)
	f.Mov(acc, ptx.Int(0))
	for d := range digits {
		f.Fma(acc, digits[d].As(g.st), strides[d], acc)
	}
	return acc
}

// keptOffsets returns each read operand's element offset of output o.
func (g *redGen) keptOffsets(o ptx.Reg) []ptx.Reg {
	offs := make([]ptx.Reg, len(g.r.Ins))
	var dg []ptx.Reg
	if len(g.mshape) > 0 {
		dg = g.digits(o, g.mshape)
	}
	for j := range g.r.Ins {
		if g.reads(j) {
			offs[j] = g.dot(dg, g.mstr[j])
		}
	}
	return offs
}

// redOffsets returns each read operand's element offset of reduced position p (it);
// unit says every operand has one reduced dim of stride 1.
func (g *redGen) redOffsets(p ptx.Reg, unit bool) []ptx.Reg {
	offs := make([]ptx.Reg, len(g.r.Ins))
	var dg []ptx.Reg
	switch {
	case unit:
		for j := range offs {
			offs[j] = p.As(g.st)
		}
		return offs
	case len(g.kshape) == 1:
		dg = []ptx.Reg{p}
	case len(g.kshape) > 1:
		dg = g.digits(p, g.kshape)
	}
	for j := range g.r.Ins {
		if g.reads(j) {
			offs[j] = g.dot(dg, g.kstr[j])
		}
	}
	return offs
}

// address returns base + (a+b)*size as a u64 address.
func (g *redGen) address(base ptx.Reg, a, b ptx.Reg, size int) ptx.Reg {
	f := g.f
	s := f.Reg(g.st)
	f.Add(s, a, b)
	addr := f.Reg(ptx.U64)
	if g.st == ptx.S64 {
		f.Op("mad.lo.s64", addr.As(ptx.S64), s, ptx.Int(size), base.As(ptx.S64))
	} else {
		f.Op("mad.wide.s32", addr.As(ptx.S64), s, ptx.Int(size), base.As(ptx.S64))
	}
	return addr
}

// pos64 returns a position as an index (ixt: the same width as it).
func (g *redGen) pos64(p ptx.Reg) ptx.Reg {
	return p.As(g.ixt)
}

// ---- the kernel ----

// loadGroup loads the elements of one vector of every read operand at positions
// (element offsets) koff[j] + roff[j] ... +V-1, and their arg indices.
type loaded struct {
	vals []map[int]ptx.Reg // per vector element: operand -> value
	idx  []ptx.Reg         // per vector element, arg operations: S64 index
}

func (g *redGen) loadAt(koff, roff []ptx.Reg, V int, index func(v int) ptx.Reg) loaded {
	r := g.r
	ld := loaded{vals: make([]map[int]ptx.Reg, V)}
	for v := range ld.vals {
		ld.vals[v] = map[int]ptx.Reg{}
	}
	for j, t := range r.Ins {
		if !g.reads(j) {
			continue
		}
		a := g.address(g.ins[j], koff[j], roff[j], t.Size())
		vs := g.load(t, a, V)
		for v := range vs {
			ld.vals[v][j] = vs[v]
		}
	}
	if g.arg {
		if r.Pre == PrePartial {
			a := g.address(g.inIdx, koff[0], roff[0], 8)
			is := g.load(dtype.Int64, a, V)
			if g.ixt == ptx.S32 {
				// positions below 2^31 (the sentinel MaxInt32 of an empty split too)
				for i, x := range is {
					d := g.f.Reg(ptx.S32)
					g.f.CvtRound(d.As(ptx.U32), x.As(ptx.U64), "")
					is[i] = d
				}
			}
			ld.idx = is
		} else {
			for v := 0; v < V; v++ {
				ld.idx = append(ld.idx, index(v))
			}
		}
	}
	return ld
}

// fold combines loaded values into accs (one per vector element).
func (g *redGen) fold(accs []redVal, ld loaded) {
	for v := range accs {
		x := redVal{v: g.element(ld.vals[v])}
		if g.arg {
			x.i = ld.idx[v]
		}
		g.combine(accs[v], x)
	}
}

func (g *redGen) build() {
	r := g.r
	gp := g.g
	g.declare()
	g.f = g.m.Kernel(r.EntryName(), g.params...)
	f := g.f
	mapText := ""
	if r.Map != nil {
		mapText = " map " + r.Map.String()
	}
	f.Comment(fmt.Sprintf("%s%s", r.Key(), mapText))
	g.loadParams()
	loop := redLoop{y: g.special(ptx.CtaidY), S: g.special(ptx.NctaidY), tile: g.special(ptx.CtaidX), tstep: g.special(ptx.NctaidX)}
	if r.Final != nil {
		f.Shared("red_last", ptx.U32, 4, 1)
		loop.after = g.ticket
	}
	if gp.Cols {
		g.buildCols(loop)
	} else {
		g.buildRows(loop)
	}
	f.Ret()
}

// special returns a special register as an it value.
func (g *redGen) special(s ptx.SReg) ptx.Reg {
	x := g.f.Special(s)
	if g.it == ptx.U32 {
		return x
	}
	d := g.f.Reg(ptx.U64)
	g.f.Cvt(d, x)
	return d
}

func (g *redGen) imm(v int) ptx.Operand { return ptx.Int(v) }

func log2(n int) int { return bits.Len(uint(n)) - 1 }

// buildRows writes the kernel body for Lanes threads per output.
func (g *redGen) buildRows(lp redLoop) {
	gp := g.g
	f := g.f
	G, V, U, B := gp.Lanes, gp.Vec, gp.Unroll, gp.Block
	P := B / G // outputs per tile
	tid := g.special(ptx.TidX)
	lane := f.Reg(g.it)
	f.And(lane.As(g.bitsOf(g.it)), tid, g.imm(G-1))
	slot := f.Reg(g.it)
	f.Shr(slot, tid, g.imm(log2(G)))
	y, S := lp.y, lp.S
	rstart := f.Reg(g.it)
	f.Fma(rstart, y, g.imm(G), lane)
	step := f.Reg(g.it)
	f.Mul(step, S, g.imm(G))
	kv := f.Reg(g.it)
	f.Shr(kv, g.kr, g.imm(log2(V)))
	ntiles := lp.tend
	if !ntiles.Valid() {
		ntiles = f.Reg(g.it)
		f.Add(ntiles, g.mr, g.imm(P-1))
		f.Shr(ntiles, ntiles, g.imm(log2(P)))
	}
	tile, tstep := lp.tile, lp.tstep
	unit := V > 1 // one reduced dim of stride 1 (PlanReduce guarantees it for Vec > 1)

	if G == B && B > 32 {
		g.declareShared(B / 32)
	}

	loop, end := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, tile, ntiles)).Bra(end)
	o := f.Reg(g.it)
	f.Fma(o, tile, g.imm(P), slot)
	valid := f.Setp(ptx.Lt, o, g.mr)
	g.inWindow(valid, o, 1)
	A := gp.accSets()
	accs := make([]redVal, A*V)
	for i := range accs {
		accs[i] = g.newAcc()
	}
	groups := [][]redVal{accs} // all fold into one result
	casc := g.newCascade(len(groups))
	combine := f.NewLabel()
	f.AtNot(valid).Bra(combine)
	koff := g.keptOffsets(o)
	rr := f.Reg(g.it)
	f.Mov(rr, rstart)
	index := func(p ptx.Reg) func(v int) ptx.Reg {
		return func(v int) ptx.Reg {
			i := g.pos64(p)
			if V > 1 {
				d := f.Reg(g.ixt)
				f.Fma(d, i, ptx.Int(V), ptx.Int(v))
				return d
			}
			return i
		}
	}
	// elemPos returns the element position of vector position p.
	elemPos := func(p ptx.Reg) ptx.Reg {
		if V == 1 {
			return p
		}
		e := f.Reg(g.it)
		f.Shl(e, p, g.imm(log2(V)))
		return e
	}
	// main loop: U vectors per iteration
	mainL, tailL := f.NewLabel(), f.NewLabel()
	if U > 1 {
		f.Place(mainL)
		last := f.Reg(g.it)
		f.Fma(last, step, g.imm(U-1), rr)
		f.At(f.Setp(ptx.Ge, last, kv)).Bra(tailL)
		var lds []loaded
		p := rr
		for u := 0; u < U; u++ {
			if u > 0 {
				np := f.Reg(g.it)
				f.Add(np, p, step)
				p = np
			}
			e := elemPos(p)
			lds = append(lds, g.loadAt(koff, g.redOffsets(e, unit), V, index(p)))
		}
		for u := 0; u < U; u++ {
			a := u % A
			g.fold(accs[a*V:(a+1)*V], lds[u])
		}
		g.cascadeStep(casc, accs, groups)
		f.Fma(rr, step, g.imm(U), rr)
		f.Bra(mainL)
	}
	f.Place(tailL)
	f.At(f.Setp(ptx.Ge, rr, kv)).Bra(combine)
	e := elemPos(rr)
	g.fold(accs[:V], g.loadAt(koff, g.redOffsets(e, unit), V, index(rr)))
	f.Add(rr, rr, step)
	f.Bra(tailL)

	f.Place(combine)
	acc := g.finish(casc, groups)[0]
	if G > 1 {
		g.butterfly(acc, min(G, 32))
	}
	if G == B && B > 32 {
		g.blockCombine(acc, tid, B/32)
	}
	// store
	skip := f.NewLabel()
	f.AtNot(valid).Bra(skip)
	if G > 1 {
		f.At(f.Setp(ptx.Ne, lane, ptx.Int(0))).Bra(skip)
	}
	g.store(acc, o, y)
	f.Place(skip)
	if G == B && B > 32 {
		f.BarSync(0)
	}
	if lp.after != nil {
		lp.after(tile, tid)
	}
	f.Add(tile, tile, tstep)
	f.Bra(loop)
	f.Place(end)
}

// buildCols writes the kernel body for threads across outputs.
func (g *redGen) buildCols(lp redLoop) {
	gp := g.g
	f := g.f
	R, V, U, B := gp.Lanes, gp.Vec, gp.Unroll, gp.Block
	C := B / R // vector columns per tile
	tid := g.special(ptx.TidX)
	slot := f.Reg(g.it)
	f.Rem(slot, tid, g.imm(C))
	lane := f.Reg(g.it)
	f.Div(lane, tid, g.imm(C))
	y, S := lp.y, lp.S
	rstart := f.Reg(g.it)
	f.Fma(rstart, y, g.imm(R), lane)
	step := f.Reg(g.it)
	f.Mul(step, S, g.imm(R))
	mv := f.Reg(g.it)
	f.Shr(mv, g.mr, g.imm(log2(V)))
	ntiles := lp.tend
	if !ntiles.Valid() {
		ntiles = f.Reg(g.it)
		f.Add(ntiles, mv, g.imm(C-1))
		f.Div(ntiles, ntiles, g.imm(C))
	}
	tile, tstep := lp.tile, lp.tstep
	if R > 1 {
		g.declareShared(max(B, g.nthreads) * V) // every thread stores its own (laneTree)
	}

	loop, end := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, tile, ntiles)).Bra(end)
	ov := f.Reg(g.it)
	f.Fma(ov, tile, g.imm(C), slot)
	valid := f.Setp(ptx.Lt, ov, mv)
	if g.nthreads > B {
		// a final pass in a larger block: the threads past B have no row lane
		f.And(valid, valid, f.Setp(ptx.Lt, lane, g.imm(R)))
	}
	o := f.Reg(g.it)
	f.Shl(o, ov, g.imm(log2(V)))
	g.inWindow(valid, o, V)
	A := gp.accSets()
	accs := make([]redVal, A*V)
	for i := range accs {
		accs[i] = g.newAcc()
	}
	// per vector element v, its A accumulators
	groups := make([][]redVal, V)
	for v := range groups {
		for a := 0; a < A; a++ {
			groups[v] = append(groups[v], accs[a*V+v])
		}
	}
	casc := g.newCascade(len(groups))
	combine := f.NewLabel()
	f.AtNot(valid).Bra(combine)
	koff := g.keptOffsets(o)
	rr := f.Reg(g.it)
	f.Mov(rr, rstart)
	index := func(p ptx.Reg) func(v int) ptx.Reg {
		return func(int) ptx.Reg { return g.pos64(p) }
	}
	mainL, tailL := f.NewLabel(), f.NewLabel()
	if U > 1 {
		f.Place(mainL)
		last := f.Reg(g.it)
		f.Fma(last, step, g.imm(U-1), rr)
		f.At(f.Setp(ptx.Ge, last, g.kr)).Bra(tailL)
		var lds []loaded
		p := rr
		for u := 0; u < U; u++ {
			if u > 0 {
				np := f.Reg(g.it)
				f.Add(np, p, step)
				p = np
			}
			lds = append(lds, g.loadAt(koff, g.redOffsets(p, false), V, index(p)))
		}
		for u := 0; u < U; u++ {
			a := u % A
			g.fold(accs[a*V:(a+1)*V], lds[u])
		}
		g.cascadeStep(casc, accs, groups)
		f.Fma(rr, step, g.imm(U), rr)
		f.Bra(mainL)
	}
	f.Place(tailL)
	f.At(f.Setp(ptx.Ge, rr, g.kr)).Bra(combine)
	g.fold(accs[:V], g.loadAt(koff, g.redOffsets(rr, false), V, index(rr)))
	f.Add(rr, rr, step)
	f.Bra(tailL)

	f.Place(combine)
	// combine the U sets: per vector element v, pairwise over u
	res := g.finish(casc, groups)
	if R > 1 {
		g.laneTree(res, tid, R, B)
	}
	skip := f.NewLabel()
	f.AtNot(valid).Bra(skip)
	if R > 1 {
		f.At(f.Setp(ptx.Ne, lane, ptx.Int(0))).Bra(skip)
	}
	for v := 0; v < V; v++ {
		ov := o
		if v > 0 {
			ov = f.Reg(g.it)
			f.Add(ov, o, g.imm(v))
		}
		g.store(res[v], ov, y)
	}
	f.Place(skip)
	if R > 1 {
		f.BarSync(0)
	}
	if lp.after != nil {
		lp.after(tile, tid)
	}
	f.Add(tile, tile, tstep)
	f.Bra(loop)
	f.Place(end)
}

// declareShared declares the shared arrays of n accumulators (and indices).
func (g *redGen) declareShared(n int) {
	pre := "red_"
	if g.final {
		pre = "fin_"
	}
	g.smV = pre + "smv"
	size := g.at.Bits() / 8
	g.f.Shared(g.smV, g.at, size, n)
	if g.arg {
		g.smI = pre + "smi"
		g.f.Shared(g.smI, g.ixt, g.ixt.Bits()/8, n)
	}
}

// smAddr returns the shared address of element i (it) of array name with elements of
// size bytes.
func (g *redGen) smAddr(name string, i ptx.Reg, size int) ptx.Reg {
	f := g.f
	base := f.Reg(ptx.U32)
	f.Mov(base, ptx.Sym(name))
	i32 := i
	if i.Type().Bits() == 64 {
		i32 = f.Reg(ptx.U32)
		f.Cvt(i32, i)
	}
	a := f.Reg(ptx.U32)
	f.Fma(a, i32.As(ptx.U32), ptx.Int(size), base)
	return a
}

func (g *redGen) stShared(a redVal, i ptx.Reg) {
	f := g.f
	f.St(ptx.Shared, ptx.CacheDefault, g.at, ptx.Mem(g.smAddr(g.smV, i, g.at.Bits()/8), 0), a.v)
	if g.arg {
		f.St(ptx.Shared, ptx.CacheDefault, g.ixt, ptx.Mem(g.smAddr(g.smI, i, g.ixt.Bits()/8), 0), a.i)
	}
}

func (g *redGen) ldShared(i ptx.Reg) redVal {
	f := g.f
	x := redVal{v: f.Reg(g.at)}
	f.Ld(ptx.Shared, ptx.CacheDefault, g.at, ptx.Mem(g.smAddr(g.smV, i, g.at.Bits()/8), 0), x.v)
	if g.arg {
		x.i = f.Reg(g.ixt)
		f.Ld(ptx.Shared, ptx.CacheDefault, g.ixt, ptx.Mem(g.smAddr(g.smI, i, g.ixt.Bits()/8), 0), x.i)
	}
	return x
}

// shfl returns x from the lane laneid^mask (shflBfly).
func (g *redGen) shfl(x ptx.Reg, mask int) ptx.Reg { return shflBfly(g.f, x, mask) }

// shflBfly returns x (32 or 64 bits: two shuffles of its halves) from the lane
// laneid^mask of a full warp.
func shflBfly(f *ptx.Func, x ptx.Reg, mask int) ptx.Reg {
	if x.Type().Bits() == 64 {
		lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{lo, hi}, x)
		lo2, hi2 := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Shfl("bfly", lo2, lo, ptx.Int(mask), ptx.Int(31), ptx.Uint(0xffffffff))
		f.Shfl("bfly", hi2, hi, ptx.Int(mask), ptx.Int(31), ptx.Uint(0xffffffff))
		d := f.Reg(x.Type())
		f.Op("mov.b64", d, ptx.Vec{lo2, hi2})
		return d
	}
	d := f.Reg(x.Type())
	f.Shfl("bfly", d, x, ptx.Int(mask), ptx.Int(31), ptx.Uint(0xffffffff))
	return d
}

// butterfly combines acc across groups of n lanes (n a power of 2, ≤ 32): every lane
// ends with the group's result.
func (g *redGen) butterfly(acc redVal, n int) {
	for m := n / 2; m >= 1; m /= 2 {
		o := redVal{v: g.shfl(acc.v, m)}
		if g.arg {
			o.i = g.shfl(acc.i, m)
		}
		g.combine(acc, o)
	}
}

// blockCombine combines the warps' results (every lane holds its warp's) into warp 0.
func (g *redGen) blockCombine(acc redVal, tid ptx.Reg, warps int) {
	f := g.f
	laneID := f.Reg(g.it)
	f.And(laneID.As(g.bitsOf(g.it)), tid, g.imm(31))
	warp := f.Reg(g.it)
	f.Shr(warp, tid, g.imm(5))
	skip := f.NewLabel()
	f.At(f.Setp(ptx.Ne, laneID, ptx.Int(0))).Bra(skip)
	g.stShared(acc, warp)
	f.Place(skip)
	f.BarSync(0)
	done := f.NewLabel()
	f.At(f.Setp(ptx.Ne, warp, ptx.Int(0))).Bra(done)
	// warp 0: lanes < warps load, the others hold the identity
	x := g.newAcc()
	noLoad := f.NewLabel()
	f.At(f.Setp(ptx.Ge, laneID, g.imm(warps))).Bra(noLoad)
	y := g.ldShared(laneID)
	f.Mov(x.v, y.v)
	if g.arg {
		f.Mov(x.i, y.i)
	}
	f.Place(noLoad)
	g.butterfly(x, 32)
	f.Mov(acc.v, x.v)
	if g.arg {
		f.Mov(acc.i, x.i)
	}
	f.Place(done)
}

// laneTree combines res (V accumulators per thread) over the R row lanes of each
// column through shared memory; lane 0 ends with the result.
func (g *redGen) laneTree(res []redVal, tid ptx.Reg, R, B int) {
	f := g.f
	V := len(res)
	C := B / R
	lane := f.Reg(g.it)
	f.Div(lane, tid, g.imm(C))
	// element index of (lane, slot, v) is tid*V + v: lanes are C*V apart.
	base := f.Reg(g.it)
	f.Mul(base, tid, g.imm(V))
	idx := func(v, laneOff int) ptx.Reg {
		d := f.Reg(g.it)
		f.Add(d, base, g.imm(v+laneOff*C*V))
		return d
	}
	for v := 0; v < V; v++ {
		g.stShared(res[v], idx(v, 0))
	}
	f.BarSync(0)
	for h := R / 2; h >= 1; h /= 2 {
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Ge, lane, g.imm(h))).Bra(skip)
		for v := 0; v < V; v++ {
			other := g.ldShared(idx(v, h))
			g.combine(res[v], other)
			if h > 1 {
				g.stShared(res[v], idx(v, 0))
			}
		}
		f.Place(skip)
		if h > 1 {
			f.BarSync(0)
		}
	}
}

// inWindow narrows valid, in a fused kernel's final pass, to the threads whose outputs
// (the V at o) meet the fusing block's tile [lo, hi). The final pass's tile may hold
// outputs of other tiles, whose partial results their own blocks may still be storing:
// reading them would be a data race (the PTX memory model's, which the simulator under
// -race reports), even though store never writes their results. No-op elsewhere.
func (g *redGen) inWindow(valid, o ptx.Reg, V int) {
	if !g.final {
		return
	}
	f := g.f
	end := f.Reg(g.it)
	f.Add(end, o, g.imm(V))
	f.And(valid, valid, f.Setp(ptx.Gt, end, g.lo))
	f.And(valid, valid, f.Setp(ptx.Lt, o, g.hi))
}

// store writes the result of output o (it): the final value, or a partial at y*m + o.
func (g *redGen) store(acc redVal, o, y ptx.Reg) {
	f := g.f
	r := g.r
	if g.final {
		// the outputs of the fusing block's tile only
		out := f.NewLabel()
		f.At(f.Setp(ptx.Lt, o, g.lo)).Bra(out)
		f.At(f.Setp(ptx.Ge, o, g.hi)).Bra(out)
		defer f.Place(out)
	}
	pos := o
	if g.g.Partial {
		pos = f.Reg(g.it)
		f.Fma(pos, y, g.mr, o)
	}
	off := f.Reg(ptx.U64)
	if g.it == ptx.U64 {
		f.Mov(off, pos)
	} else {
		f.Cvt(off, pos)
	}
	v := acc.v
	if r.Mean {
		cnt := g.ldParam(g.pCount)
		c := f.Reg(g.at)
		f.CvtRound(c, cnt, ".rn")
		d := f.Reg(g.at)
		f.Div(d, v, c)
		v = d
	}
	if g.arg {
		a := f.Reg(ptx.U64)
		f.Op("mad.lo.u64", a, off, ptx.Int(8), g.idx)
		i := acc.i
		if g.ixt != ptx.S64 {
			i = f.Reg(ptx.S64)
			f.Cvt(i, acc.i)
		}
		f.St(ptx.Global, ptx.CacheDefault, ptx.S64, ptx.Mem(a, 0), i)
		noVal := f.NewLabel()
		f.At(f.Setp(ptx.Eq, g.out, ptx.Int(0))).Bra(noVal)
		defer f.Place(noVal)
	}
	ot := r.Acc
	if !g.g.Partial {
		ot = r.outType()
	}
	if ot != r.Acc { // a half type: round the float32 once
		switch {
		case g.arg && ot == dtype.BFloat16:
			// the value of an element: its bits exactly (a NaN's payload too)
			h := f.Regs(ptx.B16, 2)
			f.Op("mov.b32", ptx.Vec(h), v)
			v = h[1]
		case g.arg:
			v = ptxF32ToF16Exact(f, v) // the same for float16
		default:
			v = ptxF32ToHalf(f, g.sm, v, ot)
		}
	}
	a := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", a, off, ptx.Int(ot.Size()), g.out)
	f.Op("st.global"+ewMemSuffix(ot), ptx.Mem(a, 0), v)
}

// ---- the fused final pass ----

// tileOutputs returns the number of outputs of one tile of r's strategy.
func (r *Reduce) tileOutputs() int {
	g := r.GPU
	if g.Cols {
		return g.Block / g.Lanes * g.Vec
	}
	return g.Block / g.Lanes
}

// fence appends a GPU-scope fence: fence.acq_rel.gpu from sm_70, membar.gl before.
func (g *redGen) fence() {
	if g.sm >= 70 {
		g.f.Fence("acq_rel", "gpu")
	} else {
		g.f.Membar("gl")
	}
}

// ticket ends a tile of a fused kernel's partial pass ("last block finishes", the CUDA
// samples' threadFenceReduction, with the release and acquire of cooperative groups'
// grid sync): once the block's partial results are stored (bar.sync), thread 0 fences
// and adds 1 to the tile's counter; the block that draws S-1 fences again, combines
// the tile's outputs (buildFinal) and resets the counter to 0. Every thread of the
// block runs the same barriers: the flag goes through shared memory.
func (g *redGen) ticket(tile, tid ptx.Reg) {
	f := g.f
	counter := func() ptx.Reg {
		base := g.ldParam(g.pFCnt)
		a := f.Reg(ptx.U64)
		if g.it == ptx.U64 {
			f.Op("mad.lo.u64", a, tile, ptx.Int(4), base)
		} else {
			f.Op("mad.wide.u32", a, tile, ptx.Int(4), base)
		}
		return a
	}
	flagAddr := ptx.Mem(ptx.Sym("red_last"), 0)
	f.BarSync(0)
	notFirst := f.Setp(ptx.Ne, tid, ptx.Int(0))
	skip := f.NewLabel()
	f.At(notFirst).Bra(skip)
	g.fence() // release: the block's partial results before its ticket
	old := f.Reg(ptx.U32)
	f.Atom("", "", ptx.Global, "add", ptx.U32, old, ptx.Mem(counter(), 0), ptx.Int(1))
	last1 := f.Special(ptx.NctaidY)
	f.Sub(last1, last1, ptx.Int(1))
	last := f.Setp(ptx.Eq, old, last1)
	flag := f.Reg(ptx.U32)
	f.Selp(flag, ptx.Int(1), ptx.Int(0), last)
	f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, flagAddr, flag)
	f.AtNot(last).Bra(skip)
	g.fence() // acquire: the other blocks' partial results
	f.Place(skip)
	f.BarSync(0)
	fl := f.Reg(ptx.U32)
	f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, flagAddr, fl)
	done := f.NewLabel()
	f.At(f.Setp(ptx.Eq, fl, ptx.Int(0))).Bra(done)
	g.buildFinal(tile)
	f.At(notFirst).Bra(done)
	zero := f.Reg(ptx.U32)
	f.Mov(zero, ptx.Int(0))
	f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(counter(), 0), zero)
	f.Place(done)
}

// buildFinal writes, into a fused kernel, the code of its final pass (r.Final) for the
// outputs of the partial pass's tile: a generator for the final spec whose registers
// are the values a launch of that kernel on the partial results would be given (m, k
// = S, the [S][m] layout), looping over the final pass's tiles that meet this tile's
// outputs and storing only those.
func (g *redGen) buildFinal(tile ptx.Reg) {
	f := g.f
	fin := g.r.Final
	h := &redGen{r: fin, g: fin.GPU, m: g.m, f: f, sm: g.sm, it: ptx.U32, st: ptx.S32, ixt: ptx.S32,
		at: ewRT(redType(fin.Acc)), arg: fin.Op.IsArg(), params: g.params, final: true,
		pOut: -1, pIdx: -1, pM: -1, pK: -1, pInIdx: -1, pCount: g.pFCount,
		pFOut: -1, pFIdx: -1, pFCnt: -1, pFCount: -1, nthreads: g.g.Block}
	if fin.Index64 {
		h.it, h.st, h.ixt = ptx.U64, ptx.S64, ptx.S64
	}
	conv := func(x ptx.Reg) ptx.Reg {
		if x.Type() == h.it {
			return x
		}
		d := f.Reg(h.it)
		f.Cvt(d, x)
		return d
	}
	h.mr = conv(g.mr)
	h.kr = h.special(ptx.NctaidY)
	h.out = g.ldParam(g.pFOut)
	if h.arg {
		h.idx = g.ldParam(g.pFIdx)
		h.inIdx = g.idx
	}
	h.ins = []ptx.Reg{g.out}
	unit := f.Reg(h.st)
	f.Mov(unit, ptx.Int(1))
	h.mstr = [][]ptx.Reg{nil}
	if fin.KeptRank == 1 {
		h.mshape = []ptx.Reg{h.mr}
		h.mstr = [][]ptx.Reg{{unit}}
	}
	h.kshape = []ptx.Reg{h.kr}
	h.kstr = [][]ptx.Reg{{h.mr.As(h.st)}}
	h.mapParams = map[int]ptx.Reg{}
	// this tile's outputs [lo, hi), and the final pass's tiles [t0, t1) holding them
	w1, w2 := g.r.tileOutputs(), fin.tileOutputs()
	h.lo, h.hi = f.Reg(h.it), f.Reg(h.it)
	f.Mul(h.lo, conv(tile), h.imm(w1))
	f.Add(h.hi, h.lo, h.imm(w1))
	f.Min(h.hi, h.hi, h.mr)
	t0, t1 := f.Reg(h.it), f.Reg(h.it)
	f.Div(t0, h.lo, h.imm(w2))
	f.Sub(t1, h.hi, h.imm(1))
	f.Div(t1, t1, h.imm(w2))
	f.Add(t1, t1, h.imm(1))
	zero, one := f.Reg(h.it), f.Reg(h.it)
	f.Mov(zero, ptx.Int(0))
	f.Mov(one, ptx.Int(1))
	lp := redLoop{y: zero, S: one, tile: t0, tstep: one, tend: t1}
	if fin.GPU.Cols {
		h.buildCols(lp)
	} else {
		h.buildRows(lp)
	}
}
