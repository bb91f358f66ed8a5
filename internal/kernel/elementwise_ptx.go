package kernel

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/bits"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/ptx"
)

// The CUDA implementation of Elementwise: one PTX module with one kernel (and the device
// functions it calls), written with package ptx.
//
// Shape of the kernel. Every thread starts at its global index g = ctaid*ntid + tid and
// walks a grid-stride loop with step T = ntid*nctaid, so any launch grid is correct;
// threads with g >= n return at once. The per-element code is the IR lowered node by
// node (elementwise_lower.go); nodes that depend only on parameters, constants and
// Scalar operands are computed once per thread before the loop.
//
//   - Vector (every operand Contig and 16-byte aligned): the loop runs over vectors of V
//     elements, V = 16 bytes / the widest element size among the memory operands, so
//     the widest operand moves in 16-byte accesses and a narrower one in V*size-byte
//     accesses (ld.global.nc.v4.f32, v2.b32 of packed bytes, ...). Each iteration handles
//     U vectors, v, v+T, ..., v+(U-1)T, issuing every load before the first use. A second
//     loop takes the remaining full vectors one at a time, and the last n mod V elements
//     go to threads g < n mod V, one element each (a loop, for launches of fewer threads).
//   - Otherwise: the same grid-stride loop over elements, unrolled U times, with scalar
//     loads and stores. Strided operands follow the multi-index of the element in the
//     iteration shape: each thread divides its first index into digits once, then adds
//     the digits of T with carries at each step (no division in the loop).
//   - Contiguous operands are addressed by running 64-bit pointers, advanced by T
//     elements (or vectors) of their size per step, so an access costs one add.
//   - Index64 unset: indices, the multi-index and strided offsets are 32-bit (n and every
//     offset are below 2^31, and T is clamped to n so that i+T cannot wrap); byte
//     addresses are always 64-bit. Index64 set: everything is 64-bit.
//   - Float fmod and integer pow, which loop, are device functions (elementwise_helpers.go);
//     the math functions are the device library's (package ptx, Module.MathFunc).
//
// Inputs are read with ld.global.nc (the read-only path). An input may share memory with
// the output only element for element (an in-place update out[i] = f(x[i]), each element
// read before it is written, by the thread that writes it).

// ewBlock is the block size Geometry chooses; ewBlocksPerSM blocks of it fill an SM
// (2048 threads, when a kernel needs at most 32 registers), and the grid is at most
// ewWaves such fillings.
const (
	ewBlock       = 256
	ewBlocksPerSM = 8
	ewWaves       = 8
)

// ewPlan is how a kernel walks the elements: V elements per vector access (1: scalar
// accesses) and U vectors or elements per loop iteration.
type ewPlan struct {
	V, U int
}

// plan returns the kernel's vector width and unroll factor.
func (e *Elementwise) plan() ewPlan {
	reads := e.readSlots()
	streams := 0
	for _, s := range reads {
		if k := e.Ins[s].Kind; k == Contig || k == Strided {
			streams++
		}
	}
	heavy := e.Expr != nil && ewHeavy(e.Expr.Root)
	p := ewPlan{V: 1, U: 4}
	if e.Vector {
		widest := e.Out.DType.Size()
		for _, s := range reads {
			if e.Ins[s].Kind == Contig {
				widest = max(widest, e.Ins[s].DType.Size())
			}
		}
		p.V = 16 / widest
		p.U = min(4, 32/p.V) // at most 32 elements in flight per thread
	}
	switch {
	case streams >= 5:
		p.U = 1
	case streams >= 3 || heavy:
		p.U = min(p.U, 2)
	}
	return p
}

// ewHeavy reports whether the IR calls a device function (math library, fmod, integer
// pow, also through the definition of a call: expr.Definition): such kernels compute
// more than they move, and unrolling only grows the code.
func ewHeavy(n expr.Node) bool {
	heavy := false
	expr.Walk(n, func(n expr.Node) {
		switch n := n.(type) {
		case *expr.Call:
			if _, ok := ewMathFns[n.Func]; ok || n.Func == expr.Pow {
				heavy = true
			}
			if d := expr.Definition(n); d != nil && ewHeavy(d) {
				heavy = true // float floor_divide and remainder call fmod
			}
		case *expr.Binary:
			if n.Op == expr.Rem && n.X.DType().IsFloat() {
				heavy = true
			}
		}
	})
	return heavy
}

// readSlots returns the input slots the expression reads, in increasing order.
func (e *Elementwise) readSlots() []int {
	if e.Expr == nil {
		return nil
	}
	var s []int
	for _, in := range e.Expr.Inputs {
		if in.Index < len(e.Ins) {
			s = append(s, in.Index)
		}
	}
	return s
}

// Geometry returns the launch the array layer uses for n elements on a device with the
// given number of multiprocessors: blocks of 256 threads, one block per 256 loop
// iterations of U vectors (or elements), at most 64 blocks per multiprocessor, which the
// grid-stride loop then reuses. Any grid is correct; this one is chosen for speed:
//   - with several blocks of work per multiprocessor slot, a kernel whose registers
//     allow fewer than 8 resident blocks loses at most a fraction of a wave to the
//     last, partial wave (one persistent wave of 8 blocks per SM would lose up to half);
//   - an array too small to give every multiprocessor a full set of blocks gets one
//     vector per thread instead (the one-vector loop), spreading its loads over more
//     multiprocessors: such launches are latency-bound.
//
// n must be positive.
func (e *Elementwise) Geometry(n, multiprocessors int) (grid, block int) {
	p := e.plan()
	sms := max(multiprocessors, 1)
	block = ewBlock
	need := (n + block*p.V*p.U - 1) / (block * p.V * p.U)
	if need < sms*ewBlocksPerSM {
		need = (n + block*p.V - 1) / (block * p.V)
	}
	grid = min(max(need, 1), sms*ewBlocksPerSM*ewWaves)
	return grid, block
}

// EntryName returns the kernel's name: "ew_" and 16 hex digits of a hash of Key.
func (e *Elementwise) EntryName() string {
	h := sha256.Sum256([]byte(e.Key()))
	return "ew_" + hex.EncodeToString(h[:8])
}

// ewGenError is a failure to lower the spec (a function the math library lacks), carried
// by panic from deep in the lowering to PTX, which returns it.
type ewGenError struct{ err error }

// PTX returns the kernel as a PTX module for a GPU of compute capability major.minor, and
// the name of its entry. The parameters are those documented on Elementwise, in that
// order; Geometry gives the launch. It fails for a spec that does not validate and for a
// math function the device library (package ptx) does not have for the type.
func (e *Elementwise) PTX(major, minor int) (src string, entry string, err error) {
	if err := e.Validate(); err != nil {
		return "", "", err
	}
	if err := expr.Validate(e.Expr.Root); err != nil {
		return "", "", fmt.Errorf("kernel: %w", err)
	}
	defer func() {
		if r := recover(); r != nil {
			ge, ok := r.(ewGenError)
			if !ok {
				panic(r)
			}
			src, entry, err = "", "", ge.err
		}
	}()
	g := newEWGen(e, major, minor)
	g.build()
	return g.m.String(), g.entry, nil
}

// ewGen writes one elementwise kernel.
type ewGen struct {
	e     *Elementwise
	plan  ewPlan
	sm    int // compute capability as major*10+minor
	m     *ptx.Module
	f     *ptx.Func
	entry string

	i64 bool
	it  ptx.Type // index type: U32 or U64
	st  ptx.Type // strided offset type: S32 or S64

	outBase ptx.Reg
	inBase  map[int]ptx.Reg   // read Contig/Strided/Scalar input slots: element 0's address
	shape   []ptx.Reg         // it
	strides map[int][]ptx.Reg // operand (-1 for the output) -> strides, st
	params  map[int]ptx.Reg   // parameter slot -> value
	reads   []int             // input slots read

	T     ptx.Reg // grid stride (it)
	delta []ptx.Reg

	uniform   map[expr.Node]bool
	keepNaN   map[expr.Node]bool // float conversions keeping the sign of NaNs
	uniCtx    *ewElem
	uniPacked []ptx.Reg // a uniform root, packed for vector stores
}

// ewElem is the evaluation context of one element.
type ewElem struct {
	ins   map[int]ptx.Reg // input slot -> the element's value (Contig, Strided)
	index func() ptx.Reg  // the element's linear index as an S64 (Index operands)
	memo  map[expr.Node]ptx.Reg
}

func newEWGen(e *Elementwise, major, minor int) *ewGen {
	g := &ewGen{
		e:       e,
		plan:    e.plan(),
		sm:      major*10 + minor,
		m:       ptx.NewModule(major, minor),
		entry:   e.EntryName(),
		i64:     e.Index64,
		it:      ptx.U32,
		st:      ptx.S32,
		inBase:  map[int]ptx.Reg{},
		strides: map[int][]ptx.Reg{},
		params:  map[int]ptx.Reg{},
		reads:   e.readSlots(),
		uniform: map[expr.Node]bool{},
		keepNaN: nanSignCasts(e.Expr.Root),
	}
	if g.i64 {
		g.it, g.st = ptx.U64, ptx.S64
	}
	return g
}

// exprLowering returns an expression lowering (its eval method) writing into f of m, in
// a kernel other than Elementwise's own: a reduction's map and combining operator, a
// scan's operator. Only the parts eval uses are set; params maps parameter slots to
// their registers (nil: none).
func exprLowering(m *ptx.Module, f *ptx.Func, sm int, params map[int]ptx.Reg) *ewGen {
	if params == nil {
		params = map[int]ptx.Reg{}
	}
	return &ewGen{
		e:       &Elementwise{},
		sm:      sm,
		m:       m,
		f:       f,
		it:      ptx.U32,
		st:      ptx.S32,
		inBase:  map[int]ptx.Reg{},
		strides: map[int][]ptx.Reg{},
		params:  params,
		uniform: map[expr.Node]bool{},
	}
}

// lowerExpr lowers e for one element whose input slots hold the registers ins (the
// lowering's register forms: ewRT, bools as predicates), with scalar parameters params,
// and returns the result's register: a reduction's map has exactly Eval's semantics.
func lowerExpr(m *ptx.Module, f *ptx.Func, sm int, e *expr.Expr, ins, params map[int]ptx.Reg) ptx.Reg {
	return exprLowering(m, f, sm, params).eval(e.Root, &ewElem{ins: ins, memo: map[expr.Node]ptx.Reg{}})
}

// ewParamType is the PTX type of a scalar kernel parameter of element type t.
func ewParamType(t dtype.DType) ptx.Type {
	switch t {
	case dtype.Bool, dtype.Uint8:
		return ptx.U8
	case dtype.Int8:
		return ptx.S8
	case dtype.Int16:
		return ptx.S16
	case dtype.Uint16:
		return ptx.U16
	case dtype.Float16, dtype.BFloat16:
		return ptx.B16
	}
	return ewRT(t)
}

func (g *ewGen) build() {
	e := g.e
	var params []ptx.Param
	add := func(name string, t ptx.Type) int {
		params = append(params, ptx.P(name, t))
		return len(params) - 1
	}
	pOut := add("ew_out", ptx.U64)
	pN := add("ew_n", ptx.U64)
	pIn := map[int]int{}
	for k, in := range e.Ins {
		if in.Kind != Index {
			pIn[k] = add(fmt.Sprintf("ew_in%d", k), ptx.U64)
		}
	}
	pShape := make([]int, e.Rank)
	for d := range pShape {
		pShape[d] = add(fmt.Sprintf("ew_shape%d", d), ptx.U64)
	}
	pStride := map[int][]int{}
	for _, op := range e.stridedOrder() {
		name := "out"
		if op >= 0 {
			name = fmt.Sprintf("in%d", op)
		}
		for d := 0; d < e.Rank; d++ {
			pStride[op] = append(pStride[op], add(fmt.Sprintf("ew_stride_%s_%d", name, d), ptx.S64))
		}
	}
	pParam := map[int]int{}
	for _, p := range e.Expr.Params {
		pParam[p.Index] = add(fmt.Sprintf("ew_p%d", p.Index), ewParamType(p.DType))
	}
	g.f = g.m.Kernel(g.entry, params...)
	f := g.f
	f.Comment(fmt.Sprintf("%s\nout = %s; V=%d U=%d", e.Key(), e.Expr.String(), g.plan.V, g.plan.U))
	if e.GridDep {
		if err := gridDep(f, g.sm); err != nil {
			panic(ewGenError{err})
		}
	}

	// Thread index and grid stride, 64-bit; threads past n have nothing to do.
	tid := f.Special(ptx.TidX)
	ntid := f.Special(ptx.NtidX)
	ctaid := f.Special(ptx.CtaidX)
	nctaid := f.Special(ptx.NctaidX)
	tid64 := f.Reg(ptx.U64)
	f.Cvt(tid64, tid)
	g64 := f.Reg(ptx.U64)
	f.Op("mad.wide.u32", g64, ctaid, ntid, tid64)
	t64 := f.Reg(ptx.U64)
	f.MulWide(t64, ntid, nctaid)
	n64 := g.ldParam(params[pN])
	done := f.NewLabel()
	f.At(f.Setp(ptx.Ge, g64, n64)).Bra(done)
	var gi, n ptx.Reg
	if g.i64 {
		gi, n, g.T = g64, n64, t64
	} else {
		// n < 2^31 and, with T clamped to n, i + T < 2^32 for any i < n.
		tc := f.Reg(ptx.U64)
		f.Min(tc, t64, n64)
		gi, n, g.T = g.narrow(g64), g.narrow(n64), g.narrow(tc)
	}

	// Parameters, Scalar operands and the uniform part of the expression.
	g.outBase = g.ldParam(params[pOut])
	for _, s := range g.reads {
		if e.Ins[s].Kind != Index {
			g.inBase[s] = g.ldParam(params[pIn[s]])
		}
	}
	for _, p := range pShape {
		r := g.ldParam(params[p])
		if !g.i64 {
			r = g.narrow(r)
		}
		g.shape = append(g.shape, r)
	}
	for op, ps := range pStride {
		if op >= 0 && !g.isRead(op) {
			continue
		}
		for _, p := range ps {
			r := g.ldParam(params[p])
			if !g.i64 {
				r = g.narrow(r).As(ptx.S32)
			}
			g.strides[op] = append(g.strides[op], r)
		}
	}
	for _, p := range e.Expr.Params {
		g.params[p.Index] = g.ldValueParam(params[pParam[p.Index]], p.DType)
	}
	g.hoist()

	if g.plan.V > 1 {
		g.vectorLoops(gi, n)
	} else {
		g.scalarLoops(gi, n)
	}
	f.Place(done)
	f.Ret()
}

func (g *ewGen) isRead(slot int) bool {
	for _, s := range g.reads {
		if s == slot {
			return true
		}
	}
	return false
}

// narrow returns the low 32 bits of a 64-bit register.
func (g *ewGen) narrow(r ptx.Reg) ptx.Reg {
	d := g.f.Reg(ptx.U32)
	g.f.Cvt(d, r.As(ptx.U64))
	return d
}

func (g *ewGen) ldParam(p ptx.Param) ptx.Reg {
	r := g.f.Reg(p.Type)
	g.f.Op("ld.param"+p.Type.String(), r, ptx.Mem(ptx.Sym(p.Name), 0))
	return r
}

// ldValueParam loads a scalar parameter of element type t as a value.
func (g *ewGen) ldValueParam(p ptx.Param, t dtype.DType) ptx.Reg {
	f := g.f
	switch t {
	case dtype.Bool:
		r := f.Reg(ptx.U32)
		f.Op("ld.param.u8", r, ptx.Mem(ptx.Sym(p.Name), 0))
		return f.Setp(ptx.Ne, r, ptx.Int(0))
	case dtype.Int8, dtype.Int16, dtype.Uint8, dtype.Uint16:
		r := f.Reg(ewRT(t))
		f.Op("ld.param"+p.Type.String(), r, ptx.Mem(ptx.Sym(p.Name), 0))
		return r
	}
	r := f.Reg(ewRT(t))
	f.Op("ld.param"+p.Type.String(), r, ptx.Mem(ptx.Sym(p.Name), 0))
	return r
}

// hoist marks the uniform nodes (no per-element input below them) and computes the
// maximal ones once, before the loops.
func (g *ewGen) hoist() {
	e := g.e
	expr.Walk(e.Expr.Root, func(n expr.Node) {
		u := true
		switch n := n.(type) {
		case *expr.Input:
			u = e.Ins[n.Slot].Kind == Scalar
		case *expr.Param, *expr.Const:
		default:
			for _, c := range expr.Children(n) {
				u = u && g.uniform[c]
			}
		}
		g.uniform[n] = u
	})
	g.uniCtx = &ewElem{ins: map[int]ptx.Reg{}, memo: map[expr.Node]ptx.Reg{}}
	for _, s := range g.reads {
		if e.Ins[s].Kind == Scalar {
			g.uniCtx.ins[s] = g.ldElem(e.Ins[s].DType, ptx.Mem(g.inBase[s], 0), true)
		}
	}
	var top func(n expr.Node)
	top = func(n expr.Node) {
		if g.uniform[n] {
			g.eval(n, g.uniCtx)
			return
		}
		for _, c := range expr.Children(n) {
			top(c)
		}
	}
	top(e.Expr.Root)
	if g.plan.V > 1 && g.uniform[e.Expr.Root] {
		v := g.eval(e.Expr.Root, g.uniCtx)
		vals := make([]ptx.Reg, g.plan.V)
		for j := range vals {
			vals[j] = v
		}
		g.uniPacked = g.pack(e.Out.DType, vals)
	}
}

// scalarLoops writes the element loop: U elements per iteration while all U are below
// n, then one at a time.
func (g *ewGen) scalarLoops(i, n ptx.Reg) {
	f := g.f
	U := g.plan.U
	var digits []ptx.Reg
	if g.e.Rank > 0 {
		digits = g.decompose(i, true)
		g.delta = g.decompose(g.T, false)
	}
	p := g.newPtrs(i, 1)
	tail, end := f.NewLabel(), f.NewLabel()
	if U > 1 {
		lim := g.limit(n, U)
		ut := f.Reg(g.it) // U*T: wraps only if the loop never runs
		f.Mul(ut, g.T, ptx.Int(U))
		loop := f.NewLabel()
		f.At(f.Setp(ptx.Ge, i, lim)).Bra(tail)
		f.Place(loop)
		g.elements(i, digits, U, p)
		f.Add(i, i, ut)
		f.At(f.Setp(ptx.Lt, i, lim)).Bra(loop)
	}
	f.Place(tail)
	loop := f.NewLabel()
	f.At(f.Setp(ptx.Ge, i, n)).Bra(end)
	f.Place(loop)
	g.elements(i, digits, 1, p)
	f.Add(i, i, g.T)
	f.At(f.Setp(ptx.Lt, i, n)).Bra(loop)
	f.Place(end)
}

// ewPtrs are the running addresses of the contiguous memory operands (-1 the output):
// ptr is the current element's or vector's, step the distance to the next one of the
// thread (T of them), in bytes.
type ewPtrs struct {
	ops  []int
	ptr  map[int]ptx.Reg
	step map[int]ptx.Reg
}

// contigOps lists the contiguous memory operands: the output (-1) and the read inputs.
func (g *ewGen) contigOps() []int {
	var ops []int
	if g.e.Out.Kind == Contig {
		ops = append(ops, -1)
	}
	for _, s := range g.reads {
		if g.e.Ins[s].Kind == Contig {
			ops = append(ops, s)
		}
	}
	return ops
}

func (g *ewGen) opType(op int) dtype.DType {
	if op < 0 {
		return g.e.Out.DType
	}
	return g.e.Ins[op].DType
}

func (g *ewGen) opBase(op int) ptx.Reg {
	if op < 0 {
		return g.outBase
	}
	return g.inBase[op]
}

// newPtrs starts the running addresses at index idx, of per elements each.
func (g *ewGen) newPtrs(idx ptx.Reg, per int) *ewPtrs {
	f := g.f
	p := &ewPtrs{ptr: map[int]ptx.Reg{}, step: map[int]ptx.Reg{}}
	for _, op := range g.contigOps() {
		b := per * g.opType(op).Size()
		p.ops = append(p.ops, op)
		p.ptr[op] = g.scaled(g.opBase(op), idx, b)
		st := f.Reg(ptx.U64)
		if g.i64 {
			f.Mul(st, g.T, ptx.Int(b))
		} else {
			f.MulWide(st, g.T, ptx.Int(b))
		}
		p.step[op] = st
	}
	return p
}

// addrs returns the addresses of the u next elements or vectors of the thread, and
// advances the running addresses past them.
func (g *ewGen) addrs(p *ewPtrs, u int) []map[int]ptx.Reg {
	f := g.f
	out := make([]map[int]ptx.Reg, u)
	for k := range out {
		out[k] = map[int]ptx.Reg{}
		for _, op := range p.ops {
			if k == 0 {
				out[k][op] = p.ptr[op]
				continue
			}
			a := f.Reg(ptx.U64)
			f.Add(a, out[k-1][op], p.step[op])
			out[k][op] = a
		}
	}
	return out
}

// advance moves the running addresses past the addresses last (from addrs).
func (g *ewGen) advancePtrs(p *ewPtrs, last map[int]ptx.Reg) {
	for _, op := range p.ops {
		g.f.Add(p.ptr[op], last[op], p.step[op])
	}
}

// limit returns max(n - (u-1)*T, 0): while i < limit, elements i, i+T, ... i+(u-1)T
// are all below n. It is computed in 64 bits.
func (g *ewGen) limit(n ptx.Reg, u int) ptx.Reg {
	f := g.f
	n64, t64 := n, g.T
	if !g.i64 {
		n64, t64 = f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Cvt(n64, n)
		f.Cvt(t64, g.T)
	}
	c := f.Reg(ptx.U64)
	f.Mul(c, t64, ptx.Int(u-1))
	d := f.Reg(ptx.U64)
	f.Sub(d, n64, c)
	lim := f.Reg(ptx.U64)
	f.Selp(lim, d, ptx.Int(0), f.Setp(ptx.Gt, n64, c))
	if g.i64 {
		return lim
	}
	return g.narrow(lim)
}

// decompose returns the multi-index (digits, outermost first) of the linear index x in
// the iteration shape. The outermost digit is not reduced. With fresh set, the digits
// are new registers the caller may update in place.
func (g *ewGen) decompose(x ptx.Reg, fresh bool) []ptx.Reg {
	f := g.f
	r := len(g.shape)
	digits := make([]ptx.Reg, r)
	rem := x
	for d := r - 1; d >= 1; d-- {
		q := f.Reg(g.it)
		f.Div(q, rem, g.shape[d])
		m := f.Reg(g.it)
		f.Mul(m, q, g.shape[d])
		digits[d] = f.Reg(g.it)
		f.Sub(digits[d], rem, m)
		rem = q
	}
	digits[0] = f.Reg(g.it)
	f.Mov(digits[0], rem)
	return digits
}

// advance adds the digits of T to the multi-index digits in place, with carries.
func (g *ewGen) advance(digits []ptx.Reg) {
	f := g.f
	var carry ptx.Reg
	for d := len(digits) - 1; d >= 0; d-- {
		f.Add(digits[d], digits[d], g.delta[d])
		if carry.Valid() {
			f.At(carry).Op("add"+g.it.String(), digits[d], digits[d], ptx.Int(1))
		}
		if d > 0 {
			carry = f.Setp(ptx.Ge, digits[d], g.shape[d])
			f.At(carry).Op("sub"+g.it.String(), digits[d], digits[d], g.shape[d])
		}
	}
}

// offset returns the strided offset sum of digit*stride for operand op.
func (g *ewGen) offset(op int, digits []ptx.Reg) ptx.Reg {
	f := g.f
	st := g.strides[op]
	off := f.Reg(g.st)
	f.Mul(off, digits[0].As(g.st), st[0])
	for d := 1; d < len(digits); d++ {
		f.Fma(off, digits[d].As(g.st), st[d], off)
	}
	return off
}

// scaled returns the 64-bit address base + x*size for an index x of type it.
func (g *ewGen) scaled(base, x ptx.Reg, size int) ptx.Reg {
	a := g.f.Reg(ptx.U64)
	if g.i64 {
		g.f.Op("mad.lo.u64", a, x.As(ptx.U64), ptx.Int(size), base)
	} else {
		g.f.Op("mad.wide.u32", a, x.As(ptx.U32), ptx.Int(size), base)
	}
	return a
}

// scaledSigned returns base + off*size for a strided offset off of type st.
func (g *ewGen) scaledSigned(base, off ptx.Reg, size int) ptx.Reg {
	a := g.f.Reg(ptx.U64)
	if g.i64 {
		g.f.Op("mad.lo.s64", a, off, ptx.Int(size), base)
	} else {
		g.f.Op("mad.wide.s32", a, off, ptx.Int(size), base)
	}
	return a
}

// index64 returns an S64 copy of a linear index of type it.
func (g *ewGen) index64(i ptx.Reg) ptx.Reg {
	r := g.f.Reg(ptx.S64)
	if g.i64 {
		g.f.Mov(r, i)
	} else {
		g.f.Cvt(r.As(ptx.U64), i.As(ptx.U32))
	}
	return r
}

// elements writes u elements i, i+T, ..., i+(u-1)T: addresses and loads of all of them
// first, then the computations and stores. It advances digits (when strided) and the
// running addresses p by u steps; with p nil, contiguous operands are addressed from i
// (one element).
func (g *ewGen) elements(i ptx.Reg, digits []ptx.Reg, u int, p *ewPtrs) {
	f := g.f
	e := g.e
	type slot struct {
		offs map[int]ptx.Reg
		adr  map[int]ptx.Reg
		ctx  *ewElem
	}
	var adrs []map[int]ptx.Reg
	if p != nil {
		adrs = g.addrs(p, u)
	}
	slots := make([]slot, u)
	cur := i
	for k := range slots {
		if k > 0 && g.hasIndex() {
			nx := f.Reg(g.it)
			f.Add(nx, cur, g.T)
			cur = nx
		}
		s := slot{offs: map[int]ptx.Reg{}}
		if p != nil {
			s.adr = adrs[k]
		} else {
			s.adr = map[int]ptx.Reg{}
			for _, op := range g.contigOps() {
				s.adr[op] = g.scaled(g.opBase(op), i, g.opType(op).Size())
			}
		}
		if digits != nil {
			for _, op := range e.stridedOrder() {
				if op < 0 || g.isRead(op) {
					s.offs[op] = g.offset(op, digits)
				}
			}
			g.advance(digits)
		}
		ik := cur
		s.ctx = &ewElem{ins: map[int]ptx.Reg{}, memo: map[expr.Node]ptx.Reg{}}
		var idx ptx.Reg
		s.ctx.index = func() ptx.Reg {
			if !idx.Valid() {
				idx = g.index64(ik)
			}
			return idx
		}
		for _, sl := range g.reads {
			in := e.Ins[sl]
			switch in.Kind {
			case Contig:
				s.ctx.ins[sl] = g.ldElem(in.DType, ptx.Mem(s.adr[sl], 0), true)
			case Strided:
				s.ctx.ins[sl] = g.ldElem(in.DType, ptx.Mem(g.scaledSigned(g.inBase[sl], s.offs[sl], in.DType.Size()), 0), true)
			}
		}
		slots[k] = s
	}
	size := e.Out.DType.Size()
	for _, s := range slots {
		v := g.eval(e.Expr.Root, s.ctx)
		var a ptx.Reg
		if e.Out.Kind == Strided {
			a = g.scaledSigned(g.outBase, s.offs[-1], size)
		} else {
			a = s.adr[-1]
		}
		g.stElem(e.Out.DType, ptx.Mem(a, 0), v)
	}
	if p != nil {
		g.advancePtrs(p, adrs[u-1])
	}
}

// hasIndex reports whether the expression reads an Index operand.
func (g *ewGen) hasIndex() bool {
	for _, s := range g.reads {
		if g.e.Ins[s].Kind == Index {
			return true
		}
	}
	return false
}

// vectorLoops writes the vector loops and the scalar tail.
func (g *ewGen) vectorLoops(gi, n ptx.Reg) {
	f := g.f
	V, U := g.plan.V, g.plan.U
	sh := bits.TrailingZeros(uint(V))
	nv := f.Reg(g.it)
	f.Shr(nv, n, ptx.Int(sh))
	v := f.Reg(g.it)
	f.Mov(v, gi)
	p := g.newPtrs(v, V)
	tail, scalar, end := f.NewLabel(), f.NewLabel(), f.NewLabel()
	if U > 1 {
		lim := g.limit(nv, U)
		ut := f.Reg(g.it) // U*T: wraps only if the loop never runs
		f.Mul(ut, g.T, ptx.Int(U))
		loop := f.NewLabel()
		f.At(f.Setp(ptx.Ge, v, lim)).Bra(tail)
		f.Place(loop)
		g.vectors(v, U, p)
		f.Add(v, v, ut)
		f.At(f.Setp(ptx.Lt, v, lim)).Bra(loop)
	}
	f.Place(tail)
	loop := f.NewLabel()
	f.At(f.Setp(ptx.Ge, v, nv)).Bra(scalar)
	f.Place(loop)
	g.vectors(v, 1, p)
	f.Add(v, v, g.T)
	f.At(f.Setp(ptx.Lt, v, nv)).Bra(loop)

	// The last n mod V elements: element n - r + j for thread j, j < r (a loop for
	// launches of fewer than r threads).
	f.Place(scalar)
	r := f.Reg(g.it)
	f.And(r, n, ptx.Int(V-1))
	j := f.Reg(g.it)
	f.Mov(j, gi)
	f.At(f.Setp(ptx.Ge, j, r)).Bra(end)
	first := f.Reg(g.it)
	f.Sub(first, n, r)
	loop = f.NewLabel()
	f.Place(loop)
	i := f.Reg(g.it)
	f.Add(i, first, j)
	g.elements(i, nil, 1, nil)
	f.Add(j, j, g.T)
	f.At(f.Setp(ptx.Lt, j, r)).Bra(loop)
	f.Place(end)
}

// vectors writes u vectors v, v+T, ..., v+(u-1)T at the running addresses p: all loads
// first, then the computations and stores. It advances p past them.
func (g *ewGen) vectors(v ptx.Reg, u int, p *ewPtrs) {
	f := g.f
	e := g.e
	V := g.plan.V
	sh := bits.TrailingZeros(uint(V))
	adrs := g.addrs(p, u)
	vs := make([]ptx.Reg, u)
	loads := make([]map[int][]ptx.Reg, u)
	cur := v
	for k := range vs {
		if k > 0 && g.hasIndex() {
			nx := f.Reg(g.it)
			f.Add(nx, cur, g.T)
			cur = nx
		}
		vs[k] = cur
		loads[k] = map[int][]ptx.Reg{}
		for _, sl := range g.reads {
			in := e.Ins[sl]
			if in.Kind == Contig {
				loads[k][sl] = g.ldVec(in.DType, V, ptx.Mem(adrs[k][sl], 0))
			}
		}
	}
	for k, vk := range vs {
		var base ptx.Reg // the vector's first element index, S64, for Index operands
		vals := make([]ptx.Reg, V)
		for j := range vals {
			ctx := &ewElem{ins: map[int]ptx.Reg{}, memo: map[expr.Node]ptx.Reg{}}
			for sl, l := range loads[k] {
				ctx.ins[sl] = l[j]
			}
			ctx.index = func() ptx.Reg {
				if !base.Valid() {
					i := f.Reg(g.it)
					f.Shl(i, vk, ptx.Int(sh))
					base = g.index64(i)
				}
				if j == 0 {
					return base
				}
				r := f.Reg(ptx.S64)
				f.Add(r, base, ptx.Int(j))
				return r
			}
			vals[j] = g.eval(e.Expr.Root, ctx)
		}
		words := g.uniPacked
		if words == nil {
			words = g.pack(e.Out.DType, vals)
		}
		g.stWords(ptx.Mem(adrs[k][-1], 0), e.Out.DType, words)
	}
	g.advancePtrs(p, adrs[u-1])
}

// gridDep starts a kernel for a programmatic dependent launch (PTX ISA: griddepcontrol,
// compute capability sm = major*10+minor of 9.0 or more): the next kernel on the
// stream may be scheduled now, and this one reads and writes nothing before the one
// ahead of it has completed and its memory is visible.
func gridDep(f *ptx.Func, sm int) error {
	if sm < 90 {
		return fmt.Errorf("kernel: griddepcontrol (GridDep) needs compute capability 9.0, not %d.%d", sm/10, sm%10)
	}
	f.Op("griddepcontrol.launch_dependents")
	f.Op("griddepcontrol.wait")
	return nil
}
