package gokernel

import (
	"fmt"
	"go/ast"
	"go/token"
	"go/types"

	"github.com/go-gpu/gpu/ptx"
)

// The code generator turns a kernel's checked syntax tree into PTX with package ptx's
// builder, one Go construct at a time: every local variable is a virtual register
// (ptxas makes SSA of them), calls of the source's own functions are inlined, a slice
// is a pointer, a length and a capacity in registers (its state space, global or
// shared, fixed where it is made), and every check Go makes (an index, a slice
// expression, a division, a shift count) branches to a cold stub that records the
// failure and exits the thread.

// vkind is what a value is.
type vkind uint8

const (
	vScalar vkind = iota + 1
	vSlice
	vThread
	vDim
)

// value is an expression's result.
type value struct {
	k  vkind
	t  types.Type  // the instantiated Go type
	op ptx.Operand // vScalar: a register or an immediate
	s  *sliceVal   // vSlice
	d  []value     // vDim: X, Y, Z (int scalars)

	lin *linear // an integer's affine form, where known (prove.go)
}

// sliceVal is a slice: its address (64-bit global, or 32-bit shared), length and
// capacity (ints), the state space and where its memory comes from.
type sliceVal struct {
	ptr      ptx.Reg
	len, cap ptx.Operand
	len32    ptx.Operand // min(len, 2^31) as a u32: the bound of 32-bit indices
	space    ptx.Space
	os       *oset
	elem     types.Type
}

// oset is a union-find node: the kernel parameters a slice value may point into.
type oset struct {
	parent *oset
	params map[int]bool
}

func (o *oset) find() *oset {
	for o.parent != nil {
		o = o.parent
	}
	return o
}

func union(a, b *oset) {
	a, b = a.find(), b.find()
	if a == b {
		return
	}
	b.parent = a
	if a.params == nil {
		a.params = map[int]bool{}
	}
	for p := range b.params {
		a.params[p] = true
	}
}

// variable is a local variable (or a parameter, or a result) of an inlined frame.
type variable struct {
	t      types.Type
	v      value   // its registers (scalar, slice or Dim), or the Thread
	single bool    // assigned only where declared (prove.go)
	last   *irange // the range of the value assigned last, where known
}

// loop is an enclosing for or switch statement, for break and continue.
type loop struct {
	label     string // the statement's label, "" if none
	brk, cont ptx.Label
	isSwitch  bool
}

// frame is one inlined function (the kernel is the outermost).
type frame struct {
	parent  *frame
	fn      *types.Func
	subst   map[*types.TypeParam]types.Type
	vars    map[types.Object]*variable
	results []*variable
	retL    ptx.Label
	loops   []*loop
}

// access records a load or store through a slice whose memory comes from os.
type access struct {
	os          *oset
	read, write bool
}

// gen compiles one instantiation of a kernel.
type gen struct {
	p      *program
	m      *ptx.Module
	f      *ptx.Func
	checks bool
	errs   errorList
	fr     *frame

	// fault sites and the failure path
	sites       []site
	stubs       []failStub
	recIndex    int
	loaded      map[ast.Expr]value // slice elements the statement's prefetch loaded
	sharedAt    map[string]string  // line/type/length -> symbol
	sharedCall  map[int]token.Pos  // line -> the kern.Shared call on it
	sharedBytes int
	warpMask    ptx.Reg // lanes of the warp that exist (u32)
	warpClamp   ptx.Reg // their highest lane (u32)
	warpDone    bool
	accesses    []access
	depth       int
	cold        []func() // code placed after the kernel's end (vector.go)

	pr   prover                      // bounds-check elimination (prove.go)
	cmps map[*ast.BinaryExpr]cmpLins // integer comparisons' operands
}

// bail aborts compilation with an error at pos (caught by compile).
type bail struct{ err *Error }

// fail records an error at pos and aborts the compilation.
func (g *gen) fail(pos token.Pos, format string, args ...any) {
	panic(bail{g.p.errorf(pos, format, args...)})
}

// subst returns t with the current frame's type parameters replaced.
func (g *gen) subst(t types.Type) types.Type {
	if t == nil {
		return nil
	}
	if g.fr != nil && len(g.fr.subst) > 0 {
		return substitute(t, g.fr.subst)
	}
	return t
}

// substitute replaces type parameters in t (scalars and slices of them are all a
// kernel has).
func substitute(t types.Type, m map[*types.TypeParam]types.Type) types.Type {
	switch u := types.Unalias(t).(type) {
	case *types.TypeParam:
		if r, ok := m[u]; ok {
			return r
		}
	case *types.Slice:
		if e := substitute(u.Elem(), m); e != u.Elem() {
			return types.NewSlice(e)
		}
	}
	return t
}

// typeOf returns the instantiated type of e.
func (g *gen) typeOf(e ast.Expr) types.Type {
	tv, ok := g.p.info.Types[e]
	if !ok {
		g.fail(e.Pos(), "no type for this expression")
	}
	return g.subst(tv.Type)
}

// info returns the tinfo of a scalar type, failing at pos for others.
func (g *gen) info(t types.Type, pos token.Pos) tinfo {
	ti, ok := scalarInfo(t)
	if !ok {
		g.fail(pos, "a kernel computes with numbers and bools, not %s", t)
	}
	return ti
}

// reg returns a value's operand in a register (moving an immediate into one).
func (g *gen) reg(v value) ptx.Reg {
	if r, ok := v.op.(ptx.Reg); ok {
		return r
	}
	ti, _ := scalarInfo(v.t)
	r := g.f.Reg(ti.reg)
	g.f.Mov(r, v.op)
	return r
}

// scalar returns a scalar value of type t in operand op.
func scalar(t types.Type, op ptx.Operand) value { return value{k: vScalar, t: t, op: op} }

var (
	tInt    = types.Typ[types.Int]
	tUint32 = types.Typ[types.Uint32]
	tBool   = types.Typ[types.Bool]
)

// newVar makes a variable of type t in the current frame, zeroed.
func (g *gen) newVar(obj types.Object, t types.Type, pos token.Pos) *variable {
	v := &variable{t: t, single: obj != nil && g.pr.single[obj]}
	switch {
	case isThread(t):
		v.v = value{k: vThread, t: t}
	case isDim(t):
		v.v = value{k: vDim, t: t, d: make([]value, 3)}
		for i := range v.v.d {
			r := g.f.Reg(ptx.S64)
			g.f.Mov(r, ptx.Int(0))
			v.v.d[i] = scalar(tInt, r)
		}
	case sliceElem(t) != nil:
		if ti, ok := scalarInfo(sliceElem(t)); !ok || ti.bool {
			g.fail(pos, "a kernel's variables are numbers, bools, slices of numbers, kern.Dim or kern.Thread, not %s", t)
		}
		ptr, ln, cp, l32 := g.f.Reg(ptx.U64), g.f.Reg(ptx.S64), g.f.Reg(ptx.S64), g.f.Reg(ptx.U32)
		v.v = value{k: vSlice, t: t, s: &sliceVal{ptr: ptr, len: ln, cap: cp, len32: l32, os: &oset{}, elem: sliceElem(t)}}
		g.f.Mov(ptr, ptx.Int(0))
		g.f.Mov(ln, ptx.Int(0))
		g.f.Mov(cp, ptx.Int(0))
		g.f.Mov(l32, ptx.Int(0))
	default:
		ti, ok := scalarInfo(t)
		if !ok {
			g.fail(pos, "a kernel's variables are numbers, bools, slices of numbers, kern.Dim or kern.Thread, not %s", t)
		}
		r := g.f.Reg(ti.reg)
		if ti.bool {
			g.f.Mov(r, ptx.Int(0))
		} else {
			g.f.Mov(r, zeroImm(ti))
		}
		v.v = scalar(t, r)
	}
	if obj != nil {
		g.fr.vars[obj] = v
	}
	return v
}

func zeroImm(ti tinfo) ptx.Operand {
	switch ti.reg {
	case ptx.F32:
		return ptx.ImmF32(0)
	case ptx.F64:
		return ptx.ImmF64(0)
	}
	return ptx.Int(0)
}

// assign stores x into variable v.
func (g *gen) assign(v *variable, x value, pos token.Pos) {
	switch v.v.k {
	case vThread:
		return
	case vDim:
		for i := range v.v.d {
			g.f.Mov(v.v.d[i].op.(ptx.Reg), x.d[i].op)
		}
	case vSlice:
		d, s := v.v.s, x.s
		if d.space == ptx.Generic {
			d.space = s.space
			if s.space == ptx.Shared {
				// A shared address is 32 bits.
				d.ptr = g.f.Reg(ptx.U32)
			}
		} else if d.space != s.space {
			g.fail(pos, "this slice variable holds %s memory, not %s: a slice's state space is fixed where it is declared (use another variable)", spaceName(d.space), spaceName(s.space))
		}
		g.f.Mov(d.ptr, s.ptr)
		g.f.Mov(d.len.(ptx.Reg), s.len)
		g.f.Mov(d.cap.(ptx.Reg), s.cap)
		g.f.Mov(d.len32.(ptx.Reg), s.len32)
		union(d.os, s.os)
	default:
		g.f.Mov(v.v.op.(ptx.Reg), x.op)
	}
	g.assigned(v, x)
}

func spaceName(s ptx.Space) string {
	switch s {
	case ptx.Global:
		return "global"
	case ptx.Shared:
		return "shared"
	}
	return "no"
}

// lookup returns the variable obj names in the current frame.
func (g *gen) lookup(obj types.Object, pos token.Pos) *variable {
	if v := g.fr.vars[obj]; v != nil {
		return v
	}
	if obj.Parent() == g.p.pkg.Scope() {
		g.fail(pos, "a kernel can't use the package-level variable %s: pass it as a parameter, or make it a constant", obj.Name())
	}
	g.fail(pos, "%s is not a variable of this function", obj.Name())
	return nil
}

// ---- statements ----

func (g *gen) block(list []ast.Stmt) {
	g.scope(func() {
		for _, s := range list {
			g.stmt(s)
		}
	})
}

func (g *gen) stmt(s ast.Stmt) {
	saved := g.loaded
	g.loaded = nil
	defer func() { g.loaded = saved }()
	switch s := s.(type) {
	case *ast.BlockStmt:
		g.block(s.List)
	case *ast.ExprStmt:
		call, ok := ast.Unparen(s.X).(*ast.CallExpr)
		if !ok {
			g.fail(s.Pos(), "this expression's value is unused")
		}
		g.call(call, true)
	case *ast.DeclStmt:
		g.declStmt(s)
	case *ast.AssignStmt:
		g.assignStmt(s)
	case *ast.IncDecStmt:
		op := token.ADD
		if s.Tok == token.DEC {
			op = token.SUB
		}
		g.opAssign(s.X, op, nil, s.Pos())
	case *ast.IfStmt:
		g.ifStmt(s)
	case *ast.ForStmt:
		g.forStmt(s, "")
	case *ast.RangeStmt:
		g.rangeStmt(s, "")
	case *ast.SwitchStmt:
		g.switchStmt(s, "")
	case *ast.LabeledStmt:
		switch inner := s.Stmt.(type) {
		case *ast.ForStmt:
			g.forStmt(inner, s.Label.Name)
		case *ast.RangeStmt:
			g.rangeStmt(inner, s.Label.Name)
		case *ast.SwitchStmt:
			g.switchStmt(inner, s.Label.Name)
		default:
			g.fail(s.Pos(), "labels are only for for and switch statements (break and continue; a kernel has no goto)")
		}
	case *ast.BranchStmt:
		g.branchStmt(s)
	case *ast.ReturnStmt:
		g.returnStmt(s)
	case *ast.EmptyStmt:
	case *ast.GoStmt:
		g.fail(s.Pos(), "a kernel starts no goroutines: every thread of the launch already runs the kernel")
	case *ast.DeferStmt:
		g.fail(s.Pos(), "a kernel has no defer: write the deferred code before each return")
	case *ast.SelectStmt, *ast.SendStmt:
		g.fail(s.Pos(), "a kernel has no channels: threads communicate through shared memory (kern.Shared) and t.Sync()")
	case *ast.TypeSwitchStmt:
		g.fail(s.Pos(), "a kernel has no interfaces, so no type switches: write a generic kernel")
	default:
		g.fail(s.Pos(), "this statement is not in the kernel subset of Go")
	}
}

func (g *gen) declStmt(s *ast.DeclStmt) {
	gd := s.Decl.(*ast.GenDecl)
	switch gd.Tok {
	case token.CONST:
		return // constants are folded by the type checker
	case token.TYPE:
		g.fail(gd.Pos(), "a kernel declares no types: declare them at package level (a kernel's values are numbers and slices)")
	case token.VAR:
	default:
		g.fail(gd.Pos(), "this declaration is not in the kernel subset of Go")
	}
	for _, sp := range gd.Specs {
		vs := sp.(*ast.ValueSpec)
		var vals []value
		if len(vs.Values) > 0 {
			g.prefetchAll(vs.Values)
			vals = g.exprList(vs.Values, len(vs.Names))
		}
		for i, name := range vs.Names {
			obj := g.p.info.Defs[name]
			if obj == nil {
				continue // _
			}
			v := g.newVar(obj, g.subst(obj.Type()), name.Pos())
			if vals != nil {
				g.assign(v, g.convertTo(vals[i], v.t, vs.Values[min(i, len(vs.Values)-1)].Pos()), name.Pos())
			}
		}
	}
}

// exprList evaluates the right-hand side of an assignment of n values: n
// expressions, or one call with n results.
func (g *gen) exprList(es []ast.Expr, n int) []value {
	if len(es) == 1 && n > 1 {
		call, ok := ast.Unparen(es[0]).(*ast.CallExpr)
		if !ok {
			g.fail(es[0].Pos(), "a kernel has no maps, channels or interfaces: only a call can yield several values")
		}
		return g.call(call, false)
	}
	vals := make([]value, len(es))
	for i, e := range es {
		vals[i] = g.expr(e)
	}
	if len(es) > 1 {
		// a, b = b, a: every value is read before any is assigned.
		for i, v := range vals {
			vals[i] = g.copyValue(v)
		}
	}
	return vals
}

// copyValue returns v in fresh registers (a scalar register of a variable could be
// assigned before v is used).
func (g *gen) copyValue(v value) value {
	switch v.k {
	case vScalar:
		if r, ok := v.op.(ptx.Reg); ok {
			c := g.f.Reg(r.Type())
			g.f.Mov(c, r)
			out := scalar(v.t, c)
			if ti, ok := scalarInfo(v.t); ok && !ti.float && !ti.bool {
				out = g.exact(out, g.linOf(v), ti) // the same value
			}
			return out
		}
	case vSlice:
		s := *v.s
		s.ptr = g.f.Reg(v.s.ptr.Type())
		g.f.Mov(s.ptr, v.s.ptr)
		for _, o := range []*ptx.Operand{&s.len, &s.cap, &s.len32} {
			if r, ok := (*o).(ptx.Reg); ok {
				c := g.f.Reg(r.Type())
				g.f.Mov(c, r)
				*o = c
			}
		}
		v.s = &s
	case vDim:
		d := make([]value, 3)
		for i := range v.d {
			d[i] = g.copyValue(v.d[i])
		}
		v.d = d
	}
	return v
}

func (g *gen) assignStmt(s *ast.AssignStmt) {
	switch s.Tok {
	case token.DEFINE, token.ASSIGN:
	default:
		op := map[token.Token]token.Token{
			token.ADD_ASSIGN: token.ADD, token.SUB_ASSIGN: token.SUB, token.MUL_ASSIGN: token.MUL,
			token.QUO_ASSIGN: token.QUO, token.REM_ASSIGN: token.REM, token.AND_ASSIGN: token.AND,
			token.OR_ASSIGN: token.OR, token.XOR_ASSIGN: token.XOR, token.SHL_ASSIGN: token.SHL,
			token.SHR_ASSIGN: token.SHR, token.AND_NOT_ASSIGN: token.AND_NOT,
		}[s.Tok]
		g.opAssign(s.Lhs[0], op, s.Rhs[0], s.Pos())
		return
	}
	g.prefetchAll(s.Rhs)
	vals := g.exprList(s.Rhs, len(s.Lhs))
	if len(s.Lhs) > 1 {
		g.tupleStore(s.Lhs, vals, s.Tok == token.DEFINE)
		return
	}
	g.store(s.Lhs[0], vals[0], s.Tok == token.DEFINE)
}

// tupleStore is the second phase of a, b[i], c[j] = ...: the slice elements'
// addresses (their index operands, then their checks, left to right) come before
// any assignment, so that an index reads the variables as they were (i, x[i] = 1, 2
// sets x[0], as Go does) and the stores follow one another with no branch between
// them: ptxas sinks a load to its first use, and a check's branch between two
// stores would leave each load waiting in turn. The first failure is Go's; a
// failing check keeps the statement's earlier stores from happening, where Go
// would have made them before panicking (the thread exits either way).
func (g *gen) tupleStore(lhs []ast.Expr, vals []value, define bool) {
	type elem struct {
		sv    *sliceVal
		addr  ptx.Addr
		first value     // the index (a vector group's first)
		grp   []vecSlot // a vector group of consecutive elements (vector.go)
	}
	elems := make([]*elem, len(lhs))
	groups := g.storeGroups(lhs)
	for i := 0; i < len(lhs); i++ {
		if groups[i] > 1 {
			grp := g.vecRun(lhs[i : i+groups[i]])
			first, addr := g.groupAddr(grp)
			elems[i] = &elem{sv: grp[0].s, addr: addr, first: first, grp: grp}
			i += groups[i] - 1
			continue
		}
		ix, ok := ast.Unparen(lhs[i]).(*ast.IndexExpr)
		if !ok {
			continue
		}
		sv := g.expr(ix.X)
		if sv.k != vSlice {
			g.fail(ix.Pos(), "a kernel indexes slices only")
		}
		elems[i] = &elem{sv: sv.s, addr: g.elemAddr(sv.s, ix.Index, ix.Lbrack)}
	}
	for i := 0; i < len(lhs); i++ {
		l := lhs[i]
		e := elems[i]
		if e == nil {
			g.store(l, vals[i], define)
			continue
		}
		if e.grp != nil {
			n := len(e.grp)
			g.vecStore(e.grp, e.first, e.addr, lhs[i:i+n], vals[i:i+n])
			i += n - 1
			continue
		}
		g.access(e.sv, false, true)
		ti := g.info(e.sv.elem, l.Pos())
		g.f.St(e.sv.space, ptx.CacheDefault, ti.mem, e.addr, g.reg(g.convertTo(vals[i], e.sv.elem, l.Pos())))
	}
}

// store assigns x to the assignable expression lhs (defining it for :=).
func (g *gen) store(lhs ast.Expr, x value, define bool) {
	lhs = ast.Unparen(lhs)
	switch l := lhs.(type) {
	case *ast.Ident:
		if l.Name == "_" {
			return
		}
		if define {
			if obj := g.p.info.Defs[l]; obj != nil {
				v := g.newVar(obj, g.subst(obj.Type()), l.Pos())
				g.assign(v, g.convertTo(x, v.t, l.Pos()), l.Pos())
				return
			}
		}
		obj := g.p.info.Uses[l]
		v := g.lookup(obj, l.Pos())
		g.assign(v, g.convertTo(x, v.t, l.Pos()), l.Pos())
	case *ast.IndexExpr:
		sv := g.expr(l.X)
		if sv.k != vSlice {
			g.fail(l.Pos(), "a kernel indexes slices only")
		}
		addr := g.elemAddr(sv.s, l.Index, l.Lbrack)
		g.access(sv.s, false, true)
		ti := g.info(sv.s.elem, l.Pos())
		g.f.St(sv.s.space, ptx.CacheDefault, ti.mem, addr, g.reg(g.convertTo(x, sv.s.elem, l.Pos())))
	case *ast.SelectorExpr:
		g.fail(l.Pos(), "a kernel assigns to variables and slice elements only")
	case *ast.StarExpr:
		g.fail(l.Pos(), "a kernel has no pointers: index a slice")
	default:
		g.fail(lhs.Pos(), "a kernel assigns to variables and slice elements only")
	}
}

// opAssign is lhs op= rhs (rhs nil: lhs++ or lhs--).
func (g *gen) opAssign(lhs ast.Expr, op token.Token, rhs ast.Expr, pos token.Pos) {
	lhs = ast.Unparen(lhs)
	t := g.typeOf(lhs)
	var y value
	if rhs == nil {
		ti := g.info(t, pos)
		y = scalar(t, oneImm(ti))
	} else {
		g.prefetchAll([]ast.Expr{rhs})
		y = g.expr(rhs)
	}
	switch l := lhs.(type) {
	case *ast.Ident:
		v := g.lookup(g.p.info.Uses[l], l.Pos())
		r := g.binary(op, v.v, y, t, pos)
		g.assign(v, r, pos)
	case *ast.IndexExpr:
		sv := g.expr(l.X)
		if sv.k != vSlice {
			g.fail(l.Pos(), "a kernel indexes slices only")
		}
		addr := g.elemAddr(sv.s, l.Index, l.Lbrack)
		g.access(sv.s, true, true)
		ti := g.info(sv.s.elem, l.Pos())
		old := g.f.Reg(ti.reg)
		g.f.Ld(sv.s.space, ptx.CacheDefault, ti.mem, addr, old)
		r := g.binary(op, scalar(t, old), y, t, pos)
		g.f.St(sv.s.space, ptx.CacheDefault, ti.mem, addr, g.reg(r))
	default:
		g.fail(pos, "a kernel assigns to variables and slice elements only")
	}
}

func oneImm(ti tinfo) ptx.Operand {
	switch ti.reg {
	case ptx.F32:
		return ptx.ImmF32(1)
	case ptx.F64:
		return ptx.ImmF64(1)
	}
	return ptx.Int(1)
}

func (g *gen) ifStmt(s *ast.IfStmt) {
	if s.Init != nil {
		g.stmt(s.Init)
	}
	els, end := g.f.NewLabel(), g.f.NewLabel()
	g.condJump(s.Cond, els, false)
	g.scope(func() {
		g.guardFacts(s.Cond)
		g.block(s.Body.List)
	})
	if s.Else == nil {
		g.exitFacts(s)
	}
	if s.Else != nil {
		g.f.Bra(end)
	}
	g.f.Place(els)
	if s.Else != nil {
		g.stmt(s.Else)
		g.f.Place(end)
	}
}

func (g *gen) pushLoop(label string, isSwitch bool) *loop {
	l := &loop{label: label, brk: g.f.NewLabel(), cont: g.f.NewLabel(), isSwitch: isSwitch}
	g.fr.loops = append(g.fr.loops, l)
	return l
}

func (g *gen) popLoop() { g.fr.loops = g.fr.loops[:len(g.fr.loops)-1] }

func (g *gen) forStmt(s *ast.ForStmt, label string) {
	g.scope(func() {
		if s.Init != nil {
			g.stmt(s.Init)
		}
		var nodes []ast.Node
		if s.Cond != nil {
			nodes = append(nodes, s.Cond)
		}
		if s.Post != nil {
			nodes = append(nodes, s.Post)
		}
		g.loopKill(append(nodes, s.Body)...)
		if obj, r, ok := g.inductionRange(s); ok {
			reg := g.fr.vars[obj].v.op.(ptx.Reg)
			g.setRange(reg, r.lo, r.hi)
			defer delete(g.pr.rng, reg.String())
		}
		l := g.pushLoop(label, false)
		top := g.f.NewLabel()
		g.f.Place(top)
		if s.Cond != nil {
			g.condJump(s.Cond, l.brk, false)
		}
		g.scope(func() {
			if s.Cond != nil {
				g.guardFacts(s.Cond)
			}
			g.block(s.Body.List)
		})
		g.f.Place(l.cont)
		if s.Post != nil {
			g.stmt(s.Post)
		}
		g.f.Bra(top)
		g.f.Place(l.brk)
		g.popLoop()
	})
}

func (g *gen) rangeStmt(s *ast.RangeStmt, label string) {
	g.scope(func() { g.rangeLoop(s, label) })
}

func (g *gen) rangeLoop(s *ast.RangeStmt, label string) {
	g.loopKill(s)
	xt := g.typeOf(s.X)
	var n value // the count, evaluated once
	var sv *sliceVal
	switch {
	case sliceElem(xt) != nil:
		x := g.expr(s.X)
		sv = x.s
		n = scalar(tInt, sv.len)
		n = g.copyValue(n)
		sv = g.copyValue(x).s
	default:
		ti, ok := scalarInfo(xt)
		if !ok || ti.float || ti.bool {
			g.fail(s.X.Pos(), "a kernel ranges over integers and slices only")
		}
		n = g.copyValue(g.expr(s.X))
	}
	nt := n.t
	// The index variable.
	idx := g.f.Reg(g.info(nt, s.Pos()).reg)
	g.f.Mov(idx, zeroImm(g.info(nt, s.Pos())))
	l := g.pushLoop(label, false)
	top := g.f.NewLabel()
	g.f.Place(top)
	ti := g.info(nt, s.Pos())
	cmp := ptx.Ge
	p := g.f.Reg(ptx.Pred)
	g.f.Op("setp."+string(cmp)+opSuffix(ti), p, idx, n.op)
	g.f.At(p).Bra(l.brk)
	// Bind the key and value.
	bind := func(e ast.Expr, x value) {
		if e == nil {
			return
		}
		if id, ok := e.(*ast.Ident); ok && id.Name == "_" {
			return
		}
		g.store(e, x, s.Tok == token.DEFINE)
	}
	bind(s.Key, scalar(nt, idx))
	if s.Value != nil {
		if sv == nil {
			g.fail(s.Value.Pos(), "ranging over an integer yields one value")
		}
		et := sv.elem
		eti := g.info(et, s.Pos())
		addr := g.addrOf(sv, idx)
		g.access(sv, true, false)
		r := g.f.Reg(eti.reg)
		g.f.Ld(sv.space, ptx.CacheDefault, eti.mem, addr, r)
		bind(s.Value, scalar(et, r))
	}
	g.block(s.Body.List)
	g.f.Place(l.cont)
	g.f.Add(idx, idx, ptx.Int(1))
	g.f.Bra(top)
	g.f.Place(l.brk)
	g.popLoop()
}

func (g *gen) switchStmt(s *ast.SwitchStmt, label string) {
	if s.Init != nil {
		g.stmt(s.Init)
	}
	var tag value
	if s.Tag != nil {
		tag = g.copyValue(g.expr(s.Tag))
	}
	l := g.pushLoop(label, true)
	clauses := s.Body.List
	labels := make([]ptx.Label, len(clauses))
	def := -1
	g.pr.condEval++ // a case is evaluated only if the earlier ones failed
	for i, c := range clauses {
		cc := c.(*ast.CaseClause)
		labels[i] = g.f.NewLabel()
		if cc.List == nil {
			def = i
			continue
		}
		for _, e := range cc.List {
			if s.Tag == nil {
				g.condJump(e, labels[i], true)
				continue
			}
			v := g.expr(e)
			p := g.compare(token.EQL, tag, g.convertTo(v, tag.t, e.Pos()), e.Pos())
			g.f.At(p).Bra(labels[i])
		}
	}
	g.pr.condEval--
	if def >= 0 {
		g.f.Bra(labels[def])
	} else {
		g.f.Bra(l.brk)
	}
	for i, c := range clauses {
		cc := c.(*ast.CaseClause)
		g.f.Place(labels[i])
		for _, st := range cc.Body {
			if b, ok := st.(*ast.BranchStmt); ok && b.Tok == token.FALLTHROUGH {
				g.fail(b.Pos(), "a kernel has no fallthrough: list the values in one case, or repeat the code")
			}
		}
		g.block(cc.Body)
		g.f.Bra(l.brk)
	}
	g.f.Place(l.brk)
	g.popLoop()
}

func (g *gen) branchStmt(s *ast.BranchStmt) {
	switch s.Tok {
	case token.BREAK, token.CONTINUE:
	case token.GOTO:
		g.fail(s.Pos(), "a kernel has no goto: use a labeled break or continue")
	default:
		g.fail(s.Pos(), "a kernel has no fallthrough: list the values in one case, or repeat the code")
	}
	loops := g.fr.loops
	for i := len(loops) - 1; i >= 0; i-- {
		l := loops[i]
		if s.Label != nil && l.label != s.Label.Name {
			continue
		}
		if s.Tok == token.CONTINUE {
			if l.isSwitch {
				continue
			}
			g.f.Bra(l.cont)
			return
		}
		g.f.Bra(l.brk)
		return
	}
	g.fail(s.Pos(), "%s outside a loop", s.Tok)
}

func (g *gen) returnStmt(s *ast.ReturnStmt) {
	if g.fr.parent == nil {
		g.f.Ret()
		return
	}
	if len(s.Results) > 0 {
		g.prefetchAll(s.Results)
		vals := g.exprList(s.Results, len(g.fr.results))
		for i, r := range g.fr.results {
			g.assign(r, g.convertTo(vals[i], r.t, s.Pos()), s.Pos())
		}
	}
	g.f.Bra(g.fr.retL)
}

// opSuffix returns the setp type suffix of a comparison of values of type ti.
func opSuffix(ti tinfo) string {
	switch {
	case ti.float:
		return ti.reg.String()
	case ti.signed:
		return ".s" + bitsSuffix(ti.reg)
	}
	return ".u" + bitsSuffix(ti.reg)
}

func bitsSuffix(t ptx.Type) string { return fmt.Sprint(t.Bits()) }
