package gokernel

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"

	"github.com/go-gpu/gpu/ptx"
)

// Vector accesses (the package doc's design note says what a kernel writes to get
// them): the run of slice elements at the start of a statement's right-hand side, or
// of a tuple assignment's left-hand side, groups into vector accesses of consecutive
// elements. Grouping is syntactic: indices e+c0, e+c1, ... of one expression e
// (its text: no variable changes within a statement) with c1 = c0+1, ... The index
// types vecSplit takes don't wrap between the elements of a run inside the slice
// (int32's e+c wraps only to a negative index, which the check stops; unchecked, an
// index out of range reads whatever it reaches anyway).

// vecMax is the widest access in bytes.
const vecMax = 16

// vecIndex is an index expression split into an expression and a constant offset
// (base nil: a constant index).
type vecIndex struct {
	base string // the expression's text, "" for a constant index
	off  int64
}

// vecSplit splits an index expression into e + c; ok is false for an index whose
// type may wrap between consecutive elements.
func (g *gen) vecSplit(e ast.Expr) (vecIndex, bool) {
	ti, ok := scalarInfo(g.typeOf(e))
	if !ok || ti.float || ti.bool {
		return vecIndex{}, false
	}
	switch {
	case ti.bits == 64, ti.bits == 32 && ti.signed:
	default:
		return vecIndex{}, false
	}
	if c, ok := g.intConst(e); ok {
		return vecIndex{off: c}, true
	}
	e = ast.Unparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok && (b.Op == token.ADD || b.Op == token.SUB) {
		if c, ok := g.intConst(b.Y); ok {
			if b.Op == token.SUB {
				c = -c
			}
			return vecIndex{base: types.ExprString(ast.Unparen(b.X)), off: c}, true
		}
		if c, ok := g.intConst(b.X); ok && b.Op == token.ADD {
			return vecIndex{base: types.ExprString(ast.Unparen(b.Y)), off: c}, true
		}
	}
	return vecIndex{base: types.ExprString(e)}, true
}

// intConst returns a constant integer expression's value.
func (g *gen) intConst(e ast.Expr) (int64, bool) {
	tv, ok := g.p.info.Types[e]
	if !ok || tv.Value == nil || tv.Value.Kind() != constant.Int {
		return 0, false
	}
	return constant.Int64Val(tv.Value)
}

// vecSlot is a slice element of a statement that may join a vector access.
type vecSlot struct {
	obj  types.Object // the slice variable
	s    *sliceVal
	ix   *ast.IndexExpr
	idx  vecIndex
	size int
}

// vecCandidate returns e as a slot if it is x[index] for a slice variable x in
// global memory of 4- or 8-byte elements, with an index that vecSplit takes and
// that evaluates with no check or load of its own (identifiers, constants, +, -, *,
// &, |, ^, conversions and the thread's position).
func (g *gen) vecCandidate(e ast.Expr) (vecSlot, bool) {
	ix, ok := ast.Unparen(e).(*ast.IndexExpr)
	if !ok {
		return vecSlot{}, false
	}
	id, ok := ast.Unparen(ix.X).(*ast.Ident)
	if !ok {
		return vecSlot{}, false
	}
	obj, ok := g.p.info.Uses[id].(*types.Var)
	if !ok {
		return vecSlot{}, false
	}
	if _, ok := g.typeOf(ix.X).Underlying().(*types.Slice); !ok {
		return vecSlot{}, false
	}
	x := g.lookup(obj, id.Pos()).v
	if x.k != vSlice || x.s.space != ptx.Global {
		return vecSlot{}, false
	}
	ti, ok := scalarInfo(g.subst(x.s.elem))
	if !ok || ti.bool || ti.size != 4 && ti.size != 8 {
		return vecSlot{}, false
	}
	if !g.plainIndex(ix.Index) {
		return vecSlot{}, false
	}
	idx, ok := g.vecSplit(ix.Index)
	if !ok {
		return vecSlot{}, false
	}
	return vecSlot{obj: obj, s: x.s, ix: ix, idx: idx, size: ti.size}, true
}

// plainIndex reports whether an index expression evaluates with no check, load or
// effect: its operands may then be evaluated together before the checks.
func (g *gen) plainIndex(e ast.Expr) bool {
	if tv, ok := g.p.info.Types[e]; ok && tv.Value != nil {
		return true
	}
	switch e := e.(type) {
	case *ast.Ident:
		_, ok := g.p.info.Uses[e].(*types.Var)
		return ok
	case *ast.ParenExpr:
		return g.plainIndex(e.X)
	case *ast.BinaryExpr:
		switch e.Op {
		case token.ADD, token.SUB, token.MUL, token.AND, token.OR, token.XOR, token.AND_NOT:
			return g.plainIndex(e.X) && g.plainIndex(e.Y)
		}
	case *ast.SelectorExpr:
		if sel := g.p.info.Selections[e]; sel != nil && sel.Kind() == types.FieldVal && isDim(sel.Recv()) {
			return g.plainIndex(e.X)
		}
	case *ast.CallExpr:
		if !g.pureCall(e) {
			return false
		}
		if tv := g.p.info.Types[ast.Unparen(e.Fun)]; !tv.IsType() {
			// Thread methods and len/cap only: math functions may be costly, and
			// min/max of floats are no index.
			if f, ok := ast.Unparen(e.Fun).(*ast.SelectorExpr); !ok || !isThread(g.typeOf(f.X)) {
				if id, ok := ast.Unparen(e.Fun).(*ast.Ident); !ok || id.Name != "len" && id.Name != "cap" {
					return false
				}
			}
		}
		for _, a := range e.Args {
			if !g.plainIndex(a) {
				return false
			}
		}
		return true
	}
	return false
}

// vecRun returns the length of the run of slots at the start of es on one slice
// (at most vecMax bytes), and the slots.
func (g *gen) vecRun(es []ast.Expr) []vecSlot {
	var run []vecSlot
	for _, e := range es {
		sl, ok := g.vecCandidate(e)
		if !ok {
			break
		}
		if len(run) > 0 && (sl.obj != run[0].obj || (len(run)+1)*sl.size > vecMax) {
			break
		}
		run = append(run, sl)
	}
	return run
}

// vecGroups splits a run into groups: a group of n > 1 slots is n consecutive
// elements (n*size bytes, 8 or 16), n a power of two; other slots are groups of one.
func vecGroups(run []vecSlot) [][]vecSlot {
	var out [][]vecSlot
	for i := 0; i < len(run); {
		n := 1
		for _, k := range []int{vecMax / run[i].size, vecMax / run[i].size / 2} {
			if k < 2 || i+k > len(run) {
				continue
			}
			ok := true
			for m := 1; m < k && ok; m++ {
				ok = run[i+m].idx.base == run[i].idx.base && run[i+m].idx.off == run[i].idx.off+int64(m)
			}
			if ok {
				n = k
				break
			}
		}
		out = append(out, run[i:i+n])
		i += n
	}
	return out
}

// vectorLoads loads the run of consecutive elements at the start of es (a
// statement's right-hand side), in vector accesses where they group, into
// g.loaded, and returns how many expressions it loaded (0: none, the caller
// prefetches es[0] as usual).
func (g *gen) vectorLoads(es []ast.Expr) int {
	run := g.vecRun(es)
	groups := vecGroups(run)
	if len(groups) == len(run) {
		return 0 // no group: nothing to gain
	}
	if g.loaded == nil {
		g.loaded = map[ast.Expr]value{}
	}
	for _, grp := range groups {
		first, addr := g.groupAddr(grp)
		sv := grp[0].s
		ti := g.info(sv.elem, grp[0].ix.Pos())
		regs := make([]ptx.Reg, len(grp))
		for m := range grp {
			regs[m] = g.f.Reg(ti.reg)
			g.access(sv, true, false)
			g.loaded[grp[m].ix] = scalar(sv.elem, regs[m])
		}
		g.vecAccess(sv, first, addr, len(grp), ti, func(a ptx.Addr, r []ptx.Reg) {
			g.f.Ld(sv.space, ptx.CacheDefault, ti.mem, a, r...)
		}, regs)
	}
	return len(run)
}

// groupAddr evaluates a group's indices and checks them, in Go's order, and returns
// the first index's value and the first element's address (the others follow it).
// A group of several elements is checked at once where it can be: its first and
// last index in range mean every index is (vecSplit's types don't wrap between
// them), and only when that fails do the checks run one by one, in a cold block
// after the kernel's end (one of them then fails: Go's first failure).
func (g *gen) groupAddr(grp []vecSlot) (value, ptx.Addr) {
	sv := grp[0].s
	vals := make([]value, len(grp))
	for m, sl := range grp {
		vals[m] = g.expr(sl.ix.Index)
	}
	if len(grp) > 1 && g.checks && !g.allProven(sv, vals) {
		n := len(grp) - 1
		p0, ok0 := g.outOfRange(sv, vals[0])
		p1, ok1 := g.outOfRange(sv, vals[n])
		if ok0 && ok1 {
			bad := g.f.Reg(ptx.Pred)
			g.f.Op("or.pred", bad, p0, p1)
			slow, back := g.f.NewLabel(), g.f.NewLabel()
			g.f.At(bad).Bra(slow)
			g.f.Place(back)
			// The checks one by one, where the group's failed: the same
			// comparisons and fault sites as elemAddrOf's, of the index values
			// the branch left with.
			g.cold = append(g.cold, func() {
				g.f.Place(slow)
				for m, sl := range grp {
					p, _ := g.outOfRange(sv, vals[m])
					ti, _ := scalarInfo(vals[m].t)
					x := vals[m].op
					if ti.reg.Bits() != 32 {
						x, _ = g.index64(vals[m], sl.ix.Index.Pos())
					}
					st := g.site(sl.ix.Lbrack, kIndex)
					g.sites[st-1].signed = ti.signed
					g.failTo(p, st, x, sv.len)
				}
				g.f.Bra(back)
			})
			// Past the group's check every index is in range.
			L := g.linOf(scalar(tInt, sv.len))
			for _, v := range vals {
				g.pushFact(g.linOf(v), L, true)
			}
			g.checks = false
			a := g.elemAddrOf(sv, vals[0], grp[0].ix.Index.Pos(), grp[0].ix.Lbrack)
			g.checks = true
			return vals[0], a
		}
	}
	a := g.elemAddrOf(sv, vals[0], grp[0].ix.Index.Pos(), grp[0].ix.Lbrack)
	for m := 1; m < len(grp); m++ {
		g.elemAddrOf(sv, vals[m], grp[m].ix.Index.Pos(), grp[m].ix.Lbrack)
	}
	return vals[0], a
}

// writeCold writes the cold blocks after the kernel's end.
func (g *gen) writeCold() {
	for i := 0; i < len(g.cold); i++ {
		g.cold[i]()
	}
}

// allProven reports whether every index of vals is proven in range of s (without
// counting the proofs: elemAddrOf counts them when it leaves the checks out).
func (g *gen) allProven(s *sliceVal, vals []value) bool {
	n := g.pr.proved
	defer func() { g.pr.proved = n }()
	for _, v := range vals {
		if !g.proven(v, s.len) {
			return false
		}
	}
	return true
}

// outOfRange returns a predicate true where the index v (a register) is out of
// s's range, compared as elemAddrOf's check compares it; false if v is a constant.
func (g *gen) outOfRange(s *sliceVal, v value) (ptx.Reg, bool) {
	ti, ok := scalarInfo(v.t)
	r, isReg := v.op.(ptx.Reg)
	if !ok || !isReg {
		return ptx.Reg{}, false
	}
	p := g.f.Reg(ptx.Pred)
	if ti.reg.Bits() == 32 && (ti.signed || ti.bits < 32) {
		g.f.Op("setp.ge.u32", p, r.As(ptx.U32), s.len32)
		return p, true
	}
	idx, _ := g.index64(v, token.NoPos)
	xr, ok := idx.(ptx.Reg)
	if !ok {
		return ptx.Reg{}, false
	}
	g.f.Op("setp.ge.u64", p, xr.As(ptx.U64), s.len)
	return p, true
}

// vecAccess emits one group's access of n elements from the first element's
// address a: op(a, regs) as one vector access when a is aligned to the group's
// size, else op once per element (n = 1: just that).
func (g *gen) vecAccess(sv *sliceVal, first value, a ptx.Addr, n int, ti tinfo, op func(ptx.Addr, []ptx.Reg), regs []ptx.Reg) {
	if n == 1 {
		op(a, regs)
		return
	}
	bytes := int64(n * ti.size)
	// The address to test: the slice's own where the index is a multiple of the
	// group's length (a loop invariant), else the first element's.
	var test ptx.Reg
	if l := g.linOf(first); l != nil && multipleOf(l, int64(n)) {
		test = sv.ptr
	} else {
		test = g.f.Reg(ptx.U64)
		g.f.Add(test, a.Base.(ptx.Reg).As(ptx.U64), ptx.Int(a.Off))
	}
	low := g.f.Reg(ptx.U64)
	g.f.And(low, test.As(ptx.U64), ptx.Int(bytes-1))
	p := g.f.Reg(ptx.Pred)
	g.f.Op("setp.ne.u64", p, low, ptx.Int(0))
	// The element-by-element access is a cold block after the kernel's end: inline,
	// ptxas would predicate it, and its instructions would issue (predicated off)
	// beside every vector access.
	scalarL, doneL := g.f.NewLabel(), g.f.NewLabel()
	g.f.At(p).Bra(scalarL)
	op(a, regs)
	g.f.Place(doneL)
	g.cold = append(g.cold, func() {
		g.f.Place(scalarL)
		for m := range n {
			op(ptx.Mem(a.Base, a.Off+int64(m*ti.size)), regs[m:m+1])
		}
		g.f.Bra(doneL)
	})
}

// multipleOf reports whether every value of l is a multiple of k.
func multipleOf(l *linear, k int64) bool {
	if l.c%k != 0 {
		return false
	}
	for _, t := range l.terms {
		if t.k%k != 0 {
			return false
		}
	}
	return true
}

// storeGroups returns, for a tuple assignment's left-hand side, the length of the
// vector group that starts at each operand (0 inside a group, 1 alone).
func (g *gen) storeGroups(lhs []ast.Expr) []int {
	n := make([]int, len(lhs))
	for i := 0; i < len(lhs); {
		run := g.vecRun(lhs[i:])
		if len(run) < 2 {
			n[i] = 1
			i++
			continue
		}
		for _, grp := range vecGroups(run) {
			n[i] = len(grp)
			i += len(grp)
		}
	}
	return n
}

// vecStore stores vals (converted to the slice's element type) to the group's
// elements from the first one's address a.
func (g *gen) vecStore(grp []vecSlot, first value, a ptx.Addr, lhs []ast.Expr, vals []value) {
	sv := grp[0].s
	ti := g.info(sv.elem, grp[0].ix.Pos())
	regs := make([]ptx.Reg, len(grp))
	for m := range grp {
		g.access(sv, false, true)
		regs[m] = g.reg(g.convertTo(vals[m], sv.elem, lhs[m].Pos()))
	}
	g.vecAccess(sv, first, a, len(grp), ti, func(a ptx.Addr, r []ptx.Reg) {
		src := make([]ptx.Operand, len(r))
		for m := range r {
			src[m] = r[m]
		}
		g.f.St(sv.space, ptx.CacheDefault, ti.mem, a, src...)
	}, regs)
}
