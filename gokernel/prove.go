package gokernel

import (
	"go/ast"
	"go/token"
	"go/types"
	"slices"

	"github.com/go-gpu/gpu/ptx"
)

// Bounds-check elimination, a small form of Go's own (cmd/compile's prove pass):
// an index check is left out where the compiler can prove the index is in range.
//
// Integer values carry, where known, an affine form over registers (c + Σ k·r: a
// linear) and ranges of their registers: the thread's position (ThreadIdx below
// 1024, Index below 2^41, ...), lengths (below 2^48: no device has more memory),
// constants, masks (x & c), remainders, and what +, -, * and conversions make of
// them when the result provably doesn't wrap. Facts a < b (and a <= b) between
// linears come from the conditions that guard a block (if, for, &&), from min, and
// from each check made (after x[i] is checked, i < len(x) holds). A check of
// x[idx] is left out when idx >= 0 and a fact g < len(x) (directly, or through one
// fact g < m and one m <= len(x)) has g - idx >= 0.
//
// Soundness rests on three rules. A variable assigned only where it is declared (no
// =, op=, ++, range over it: found from the syntax) keeps its value's linear and
// range. Assigning any other variable kills every fact, and every variable's
// linear, that mentions its registers; so does entering a loop that assigns it
// anywhere (the back edge). Facts live in the block where they are made, and a
// check evaluated conditionally (right of && or ||, a case expression) makes none.
// A loop variable (for i := a; i+e < b; i += d, with a, d, e >= 0, b bounded, i
// assigned only in the post statement) is known to lie in [a, max(a, b+d)].

// maxLen bounds a slice's length: no device has 2^48 bytes.
const maxLen = 1 << 48

// rangeLimit bounds the ranges kept: beyond it a value's range is unknown (so that
// sums and products of ranges never overflow int64).
const rangeLimit = 1 << 60

type irange struct{ lo, hi int64 }

type term struct {
	key string // the register's name
	k   int64
}

// linear is c + Σ k·register.
type linear struct {
	c     int64
	terms []term // sorted by key, no zero k
}

func atomLin(r ptx.Reg) *linear { return &linear{terms: []term{{key: r.String(), k: 1}}} }

func (l *linear) equal(m *linear) bool {
	return l.c == m.c && slices.Equal(l.terms, m.terms)
}

func (l *linear) mentions(key string) bool {
	for _, t := range l.terms {
		if t.key == key {
			return true
		}
	}
	return false
}

// add returns l + s·m (s = 1 or -1), or nil if a coefficient leaves the limits.
func (l *linear) add(m *linear, s int64) *linear {
	out := &linear{c: l.c + s*m.c}
	i, j := 0, 0
	for i < len(l.terms) || j < len(m.terms) {
		switch {
		case j == len(m.terms) || i < len(l.terms) && l.terms[i].key < m.terms[j].key:
			out.terms = append(out.terms, l.terms[i])
			i++
		case i == len(l.terms) || m.terms[j].key < l.terms[i].key:
			out.terms = append(out.terms, term{m.terms[j].key, s * m.terms[j].k})
			j++
		default:
			if k := l.terms[i].k + s*m.terms[j].k; k != 0 {
				out.terms = append(out.terms, term{l.terms[i].key, k})
			}
			i++
			j++
		}
	}
	if !inLimit(out.c) {
		return nil
	}
	return out
}

// scale returns k·l, or nil if a coefficient leaves the limits.
func (l *linear) scale(k int64) *linear {
	if k == 0 {
		return &linear{}
	}
	c, ok := mulLimit(l.c, k)
	if !ok {
		return nil
	}
	out := &linear{c: c}
	for _, t := range l.terms {
		p, ok := mulLimit(t.k, k)
		if !ok {
			return nil
		}
		out.terms = append(out.terms, term{t.key, p})
	}
	return out
}

func inLimit(x int64) bool { return x > -rangeLimit && x < rangeLimit }

// mulLimit returns a·b if both and the product are within the limits.
func mulLimit(a, b int64) (int64, bool) {
	if !inLimit(a) || !inLimit(b) {
		return 0, false
	}
	if a == 0 || b == 0 {
		return 0, true
	}
	abs := func(x int64) int64 {
		if x < 0 {
			return -x
		}
		return x
	}
	if abs(a) > rangeLimit/abs(b) {
		return 0, false
	}
	return a * b, true
}

// prover is the state of bounds-check elimination in a compilation.
type prover struct {
	rng      map[string]irange      // register -> its values' range
	alias    map[string]*linear     // a slice variable's length register -> its value
	facts    []fact                 // live in the blocks that made them
	single   map[types.Object]bool  // variables assigned only where declared
	linVars  map[*variable]struct{} // variables whose value is a linear
	condEval int                    // > 0 while evaluating conditionally
	proved   int                    // checks left out (for tests)
}

// fact is a < b, or a <= b when !strict.
type fact struct {
	a, b   *linear
	strict bool
	dead   bool
}

// initProver finds the variables assigned only where they are declared, in every
// function the kernel reaches.
func (g *gen) initProver() {
	g.pr = prover{rng: map[string]irange{}, alias: map[string]*linear{}, single: map[types.Object]bool{}, linVars: map[*variable]struct{}{}}
	assigned := map[types.Object]bool{}
	for _, fd := range g.p.reachable() {
		g.assignedIn(fd.Body, assigned)
		ast.Inspect(fd, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if obj, ok := g.p.info.Defs[id].(*types.Var); ok && obj != nil {
					g.pr.single[obj] = true
				}
			}
			return true
		})
	}
	for obj := range assigned {
		delete(g.pr.single, obj)
	}
}

// assignedIn adds to set the variables n assigns other than where they are
// declared (=, op=, ++, --, and range's key and value).
func (g *gen) assignedIn(n ast.Node, set map[types.Object]bool) {
	if n == nil {
		return
	}
	mark := func(e ast.Expr) {
		if id, ok := ast.Unparen(e).(*ast.Ident); ok {
			if obj := g.p.info.Uses[id]; obj != nil {
				set[obj] = true
			}
			if obj := g.p.info.Defs[id]; obj != nil {
				set[obj] = true // a range's key and value change each iteration
			}
		}
	}
	ast.Inspect(n, func(n ast.Node) bool {
		switch s := n.(type) {
		case *ast.AssignStmt:
			for _, l := range s.Lhs {
				if id, ok := ast.Unparen(l).(*ast.Ident); ok {
					if obj := g.p.info.Uses[id]; obj != nil {
						set[obj] = true // =, op=, or redeclared by :=
					}
				}
			}
		case *ast.IncDecStmt:
			mark(s.X)
		case *ast.RangeStmt:
			if s.Key != nil {
				mark(s.Key)
			}
			if s.Value != nil {
				mark(s.Value)
			}
		}
		return true
	})
}

// linOf returns an integer value's linear (nil for none).
func (g *gen) linOf(v value) *linear {
	if v.k != vScalar {
		return nil
	}
	if v.lin != nil {
		return v.lin
	}
	switch c := v.op.(type) {
	case ptx.Int:
		if inLimit(int64(c)) {
			return &linear{c: int64(c)}
		}
	case ptx.Uint:
		if uint64(c) < rangeLimit {
			return &linear{c: int64(c)}
		}
	case ptx.Reg:
		if a := g.pr.alias[c.String()]; a != nil {
			return a
		}
		return atomLin(c)
	}
	return nil
}

// rangeOf returns the range of a linear's values, if its registers' are known.
func (g *gen) rangeOf(l *linear) (irange, bool) {
	if l == nil {
		return irange{}, false
	}
	lo, hi := l.c, l.c
	for _, t := range l.terms {
		r, ok := g.pr.rng[t.key]
		if !ok {
			return irange{}, false
		}
		a, ok1 := mulLimit(t.k, r.lo)
		b, ok2 := mulLimit(t.k, r.hi)
		if !ok1 || !ok2 {
			return irange{}, false
		}
		lo, hi = lo+min(a, b), hi+max(a, b)
		if !inLimit(lo) || !inLimit(hi) {
			return irange{}, false
		}
	}
	return irange{lo, hi}, true
}

// typeRange returns the values of an integer type (within the limits).
func typeRange(ti tinfo) irange {
	if ti.signed {
		if ti.bits >= 63 {
			return irange{-rangeLimit + 1, rangeLimit - 1}
		}
		return irange{-(1 << (ti.bits - 1)), 1<<(ti.bits-1) - 1}
	}
	if ti.bits >= 61 {
		return irange{0, rangeLimit - 1}
	}
	return irange{0, 1<<ti.bits - 1}
}

// setRange records the range of register r's values.
func (g *gen) setRange(r ptx.Reg, lo, hi int64) {
	if inLimit(lo) && inLimit(hi) && lo <= hi {
		g.pr.rng[r.String()] = irange{lo, hi}
	}
}

// exact returns v with the linear l where l's values provably fit v's type (the
// machine's result is then l's), and records the range of v's register.
func (g *gen) exact(v value, l *linear, ti tinfo) value {
	r, ok := g.rangeOf(l)
	if !ok {
		return v
	}
	tr := typeRange(ti)
	if r.lo < tr.lo || r.hi > tr.hi {
		return v
	}
	v.lin = l
	if d, ok := v.op.(ptx.Reg); ok {
		g.setRange(d, r.lo, r.hi)
	}
	return v
}

// arith returns the result d of x op y with its linear or range where known.
func (g *gen) arith(op token.Token, x, y, d value, ti tinfo) value {
	if ti.float || ti.bool {
		return d
	}
	lx, ly := g.linOf(x), g.linOf(y)
	if lx == nil || ly == nil {
		return d
	}
	var l *linear
	switch op {
	case token.ADD:
		l = lx.add(ly, 1)
	case token.SUB:
		l = lx.add(ly, -1)
	case token.MUL:
		switch {
		case len(ly.terms) == 0:
			l = lx.scale(ly.c)
		case len(lx.terms) == 0:
			l = ly.scale(lx.c)
		default:
			// A product of registers: its range only.
			rx, ok1 := g.rangeOf(lx)
			ry, ok2 := g.rangeOf(ly)
			if ok1 && ok2 {
				a, o1 := mulLimit(rx.lo, ry.lo)
				b, o2 := mulLimit(rx.lo, ry.hi)
				c, o3 := mulLimit(rx.hi, ry.lo)
				e, o4 := mulLimit(rx.hi, ry.hi)
				tr := typeRange(ti)
				lo, hi := min(a, b, c, e), max(a, b, c, e)
				if r, ok := d.op.(ptx.Reg); ok && o1 && o2 && o3 && o4 && lo >= tr.lo && hi <= tr.hi {
					g.setRange(r, lo, hi)
				}
			}
			return d
		}
	case token.AND:
		// x & c, c >= 0: [0, c]; and x & y with x >= 0: [0, x.hi].
		r, ok := d.op.(ptx.Reg)
		if !ok {
			return d
		}
		hi := int64(-1)
		for _, m := range []*linear{lx, ly} {
			if mr, ok := g.rangeOf(m); ok && mr.lo >= 0 && (hi < 0 || mr.hi < hi) {
				hi = mr.hi
			}
		}
		if hi >= 0 {
			g.setRange(r, 0, hi)
		}
		return d
	case token.REM:
		// x % c, x >= 0, c > 0: [0, c-1].
		r, ok := d.op.(ptx.Reg)
		rx, okx := g.rangeOf(lx)
		if ok && okx && rx.lo >= 0 && len(ly.terms) == 0 && ly.c > 0 {
			g.setRange(r, 0, min(rx.hi, ly.c-1))
		}
		return d
	default:
		return d
	}
	if l == nil {
		return d
	}
	return g.exact(d, l, ti)
}

// pushFact records a < b (a <= b when !strict) in the current block.
func (g *gen) pushFact(a, b *linear, strict bool) {
	if a == nil || b == nil || g.pr.condEval > 0 {
		return
	}
	g.pr.facts = append(g.pr.facts, fact{a: a, b: b, strict: strict})
}

// scope runs f with the facts it makes dropped afterwards.
func (g *gen) scope(f func()) {
	mark := len(g.pr.facts)
	f()
	g.pr.facts = g.pr.facts[:mark]
}

// kill forgets what mentions register r: its value is about to change.
func (g *gen) kill(r ptx.Reg) {
	key := r.String()
	for i := range g.pr.facts {
		f := &g.pr.facts[i]
		if !f.dead && (f.a.mentions(key) || f.b.mentions(key)) {
			f.dead = true
		}
	}
	for v := range g.pr.linVars {
		if v.v.lin.mentions(key) {
			v.v.lin = nil
			delete(g.pr.linVars, v)
		}
	}
	for k, a := range g.pr.alias {
		if a.mentions(key) {
			delete(g.pr.alias, k)
		}
	}
}

// killVar forgets what mentions a variable's registers.
func (g *gen) killVar(v *variable) {
	switch v.v.k {
	case vScalar:
		if r, ok := v.v.op.(ptx.Reg); ok {
			g.kill(r)
		}
	case vSlice:
		for _, o := range []ptx.Operand{v.v.s.len, v.v.s.cap, v.v.s.len32} {
			if r, ok := o.(ptx.Reg); ok {
				g.kill(r)
			}
		}
	case vDim:
		for _, d := range v.v.d {
			if r, ok := d.op.(ptx.Reg); ok {
				g.kill(r)
			}
		}
	}
}

// assigned records the assignment of x to the scalar variable v: a variable
// assigned only where it is declared keeps x's linear and range, another forgets
// what mentions it.
func (g *gen) assigned(v *variable, x value) {
	if !v.single {
		g.killVar(v)
		v.last = nil
		if v.v.k == vScalar {
			if r, ok := g.rangeOf(g.linOf(x)); ok {
				v.last = &r
			}
		}
		return
	}
	if v.v.k == vSlice {
		// len(v) and cap(v) are x's.
		for _, p := range [][2]ptx.Operand{{v.v.s.len, x.s.len}, {v.v.s.cap, x.s.cap}} {
			d, ok := p[0].(ptx.Reg)
			l := g.linOf(scalar(tInt, p[1]))
			if ok && l != nil && !l.mentions(d.String()) {
				g.pr.alias[d.String()] = l
				if r, ok := g.rangeOf(l); ok {
					g.setRange(d, r.lo, r.hi)
				}
			}
		}
		return
	}
	if v.v.k != vScalar {
		return
	}
	r, ok := v.v.op.(ptx.Reg)
	ti, tok := scalarInfo(v.t)
	if !ok || !tok || ti.float || ti.bool {
		return
	}
	l := g.linOf(x)
	if l == nil {
		return
	}
	if xr, ok := g.rangeOf(l); ok {
		g.setRange(r, xr.lo, xr.hi)
	}
	if len(l.terms) == 1 && l.c == 0 && l.terms[0].k == 1 && l.terms[0].key == r.String() {
		return
	}
	v.v.lin = l
	g.pr.linVars[v] = struct{}{}
}

// loopKill forgets, before a loop, what mentions the variables it assigns (they
// change between iterations).
func (g *gen) loopKill(nodes ...ast.Node) {
	set := map[types.Object]bool{}
	for _, n := range nodes {
		if n != nil && !isNilNode(n) {
			g.assignedIn(n, set)
		}
	}
	for obj := range set {
		if v := g.fr.vars[obj]; v != nil {
			g.killVar(v)
		}
	}
}

func isNilNode(n ast.Node) bool {
	switch x := n.(type) {
	case ast.Stmt:
		return x == nil || x == ast.Stmt(nil)
	case ast.Expr:
		return x == nil
	}
	return false
}

// proven reports whether idx < the length len of a slice is known (and idx >= 0).
func (g *gen) proven(idx value, length ptx.Operand) bool {
	l := g.linOf(idx)
	r, ok := g.rangeOf(l)
	if !ok || r.lo < 0 {
		return false
	}
	L := g.linOf(scalar(tInt, length))
	if L == nil {
		return false
	}
	if lr, ok := g.rangeOf(L); ok && r.hi < lr.lo {
		g.pr.proved++
		return true
	}
	// le reports whether l + off <= b follows from a fact a < b or a <= b: l <= a -
	// min(a - l), and a + s <= b (s = 1 for <).
	le := func(b *linear, off int64) bool {
		for _, f := range g.pr.facts {
			if f.dead || !f.b.equal(b) {
				continue
			}
			dr, ok := g.rangeOf(f.a.add(l, -1))
			if !ok {
				continue
			}
			s := int64(0)
			if f.strict {
				s = 1
			}
			if dr.lo+s >= off {
				return true
			}
		}
		return false
	}
	if le(L, 1) {
		g.pr.proved++
		return true
	}
	// One step further: m + s <= L and l + 1 - s <= m.
	for _, f := range g.pr.facts {
		if f.dead || !f.b.equal(L) {
			continue
		}
		s := int64(0)
		if f.strict {
			s = 1
		}
		if le(f.a, 1-s) {
			g.pr.proved++
			return true
		}
	}
	return false
}

// guardFacts records the facts a condition that held gives: its comparisons of
// integers, through &&.
func (g *gen) guardFacts(cond ast.Expr) {
	eachTerm(cond, token.LAND, func(b *ast.BinaryExpr) {
		c, ok := g.cmps[b]
		if !ok {
			return
		}
		switch b.Op {
		case token.LSS:
			g.pushFact(c.x, c.y, true)
		case token.LEQ:
			g.pushFact(c.x, c.y, false)
		case token.GTR:
			g.pushFact(c.y, c.x, true)
		case token.GEQ:
			g.pushFact(c.y, c.x, false)
		case token.EQL:
			g.pushFact(c.x, c.y, false)
			g.pushFact(c.y, c.x, false)
		}
	})
}

// eachTerm calls f with each binary expression of e's tree of op (&& or ||), its
// parentheses removed; terms that are not binary expressions are skipped.
func eachTerm(e ast.Expr, op token.Token, f func(b *ast.BinaryExpr)) {
	b, ok := ast.Unparen(e).(*ast.BinaryExpr)
	if !ok {
		return
	}
	if b.Op == op {
		eachTerm(b.X, op, f)
		eachTerm(b.Y, op, f)
		return
	}
	f(b)
}

// exitFacts records, after an if statement without else whose body can't fall
// through (it ends in return, break or continue), the facts of its condition's
// being false: the negations of its comparisons of integers, through ||.
func (g *gen) exitFacts(s *ast.IfStmt) {
	if s.Else != nil || len(s.Body.List) == 0 {
		return
	}
	switch last := s.Body.List[len(s.Body.List)-1].(type) {
	case *ast.ReturnStmt:
	case *ast.BranchStmt:
		if last.Tok != token.BREAK && last.Tok != token.CONTINUE {
			return
		}
	default:
		return
	}
	eachTerm(s.Cond, token.LOR, func(b *ast.BinaryExpr) {
		c, ok := g.cmps[b]
		if !ok {
			return
		}
		switch b.Op {
		case token.GEQ: // !(x >= y): x < y
			g.pushFact(c.x, c.y, true)
		case token.GTR:
			g.pushFact(c.x, c.y, false)
		case token.LSS:
			g.pushFact(c.y, c.x, false)
		case token.LEQ:
			g.pushFact(c.y, c.x, true)
		case token.NEQ:
			g.pushFact(c.x, c.y, false)
			g.pushFact(c.y, c.x, false)
		}
	})
}

// cmpLins are the linears of a comparison's operands, as last compiled.
type cmpLins struct{ x, y *linear }

// inductionRange returns the range of a for statement's loop variable (see the
// file's comment), if the loop has the form.
func (g *gen) inductionRange(s *ast.ForStmt) (obj types.Object, r irange, ok bool) {
	init, ok1 := s.Init.(*ast.AssignStmt)
	if !ok1 || init.Tok != token.DEFINE || len(init.Lhs) != 1 || s.Cond == nil || s.Post == nil {
		return nil, r, false
	}
	id, ok1 := init.Lhs[0].(*ast.Ident)
	if !ok1 {
		return nil, r, false
	}
	obj = g.p.info.Defs[id]
	v := g.fr.vars[obj]
	if obj == nil || v == nil || v.v.k != vScalar {
		return nil, r, false
	}
	ti, ok1 := scalarInfo(v.t)
	if !ok1 || ti.float || ti.bool || !ti.signed || ti.bits < 32 {
		return nil, r, false
	}
	isI := func(e ast.Expr) bool {
		x, ok := ast.Unparen(e).(*ast.Ident)
		return ok && g.p.info.Uses[x] == obj
	}
	// The step.
	var step irange
	switch p := s.Post.(type) {
	case *ast.IncDecStmt:
		if p.Tok != token.INC || !isI(p.X) {
			return nil, r, false
		}
		step = irange{1, 1}
	case *ast.AssignStmt:
		if p.Tok != token.ADD_ASSIGN || len(p.Lhs) != 1 || !isI(p.Lhs[0]) {
			return nil, r, false
		}
		if step, ok = g.staticRange(p.Rhs[0]); !ok || step.lo < 0 {
			return nil, r, false
		}
	default:
		return nil, r, false
	}
	// i assigned nowhere else.
	set := map[types.Object]bool{}
	g.assignedIn(s.Body, set)
	g.assignedIn(s.Cond, set)
	if set[obj] {
		return nil, r, false
	}
	// The bound: a conjunct i + e < b or i + e <= b.
	var bound irange
	found := false
	eachTerm(s.Cond, token.LAND, func(b *ast.BinaryExpr) {
		if b.Op != token.LSS && b.Op != token.LEQ {
			return
		}
		if !g.iPlusNonNeg(b.X, isI) {
			return
		}
		if br, ok := g.staticRange(b.Y); ok && (!found || br.hi < bound.hi) {
			bound, found = br, true
		}
	})
	if !found {
		return nil, r, false
	}
	if v.last == nil || v.last.lo < 0 {
		return nil, r, false
	}
	ir := *v.last
	hi := max(ir.hi, bound.hi+step.hi)
	if !inLimit(hi) || hi > typeRange(ti).hi {
		return nil, r, false // i + d could wrap
	}
	return obj, irange{ir.lo, hi}, true
}

// iPlusNonNeg reports whether e is i, or i plus terms known to be >= 0.
func (g *gen) iPlusNonNeg(e ast.Expr, isI func(ast.Expr) bool) bool {
	e = ast.Unparen(e)
	if isI(e) {
		return true
	}
	b, ok := e.(*ast.BinaryExpr)
	if !ok || b.Op != token.ADD {
		return false
	}
	if isI(b.X) {
		r, ok := g.staticRange(b.Y)
		return ok && r.lo >= 0
	}
	if isI(b.Y) {
		r, ok := g.staticRange(b.X)
		return ok && r.lo >= 0
	}
	return false
}

// staticRange returns the range of an expression made of constants, variables
// assigned only where declared, len and cap, t.GridStride() and + and *, before
// it is compiled.
func (g *gen) staticRange(e ast.Expr) (irange, bool) {
	if tv, ok := g.p.info.Types[e]; ok && tv.Value != nil {
		if v := g.linOf(g.expr(e)); v != nil && len(v.terms) == 0 {
			return irange{v.c, v.c}, true
		}
		return irange{}, false
	}
	switch x := ast.Unparen(e).(type) {
	case *ast.Ident:
		obj := g.p.info.Uses[x]
		v := g.fr.vars[obj]
		if v == nil || !v.single || v.v.k != vScalar {
			return irange{}, false
		}
		return g.rangeOf(g.linOf(v.v))
	case *ast.BinaryExpr:
		a, ok1 := g.staticRange(x.X)
		b, ok2 := g.staticRange(x.Y)
		if !ok1 || !ok2 {
			return irange{}, false
		}
		switch x.Op {
		case token.ADD:
			if inLimit(a.lo+b.lo) && inLimit(a.hi+b.hi) {
				return irange{a.lo + b.lo, a.hi + b.hi}, true
			}
		case token.MUL:
			if a.lo >= 0 && b.lo >= 0 {
				lo, ok1 := mulLimit(a.lo, b.lo)
				hi, ok2 := mulLimit(a.hi, b.hi)
				if ok1 && ok2 {
					return irange{lo, hi}, true
				}
			}
		}
	case *ast.CallExpr:
		if id, ok := ast.Unparen(x.Fun).(*ast.Ident); ok && (id.Name == "len" || id.Name == "cap") && g.p.info.Types[id].IsBuiltin() {
			return irange{0, maxLen}, true
		}
		if sel, ok := ast.Unparen(x.Fun).(*ast.SelectorExpr); ok && sel.Sel.Name == "GridStride" && isThread(g.typeOf(sel.X)) {
			return irange{1, maxThreadsX}, true
		}
	}
	return irange{}, false
}

// maxThreadsX bounds the threads of a launch along x: 2^31 blocks of 1024.
const maxThreadsX = (1<<31 - 1) * 1024

// specialRange returns the range of a special register.
func specialRange(s ptx.SReg) (irange, bool) {
	switch s {
	case ptx.TidX, ptx.TidY:
		return irange{0, 1023}, true
	case ptx.TidZ:
		return irange{0, 63}, true
	case ptx.NtidX, ptx.NtidY:
		return irange{1, 1024}, true
	case ptx.NtidZ:
		return irange{1, 64}, true
	case ptx.CtaidX:
		return irange{0, 1<<31 - 2}, true
	case ptx.CtaidY, ptx.CtaidZ:
		return irange{0, 65534}, true
	case ptx.NctaidX:
		return irange{1, 1<<31 - 1}, true
	case ptx.NctaidY, ptx.NctaidZ:
		return irange{1, 65535}, true
	case ptx.LaneID:
		return irange{0, 31}, true
	}
	return irange{}, false
}
