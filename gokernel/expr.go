package gokernel

import (
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"

	"github.com/go-gpu/gpu/ptx"
)

// expr evaluates e.
func (g *gen) expr(e ast.Expr) value {
	if tv, ok := g.p.info.Types[e]; ok && tv.Value != nil {
		return g.constant(e, tv)
	}
	switch e := e.(type) {
	case *ast.ParenExpr:
		return g.expr(e.X)
	case *ast.Ident:
		switch obj := g.p.info.Uses[e].(type) {
		case *types.Var:
			return g.lookup(obj, e.Pos()).v
		case *types.Nil:
			g.fail(e.Pos(), "a kernel has no nil: its slices come from its parameters and kern.Shared")
		}
		g.fail(e.Pos(), "%s is not a value a kernel can use", e.Name)
	case *ast.BinaryExpr:
		switch e.Op {
		case token.LAND, token.LOR, token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			return scalar(tBool, g.boolValue(e))
		}
		x := g.expr(e.X)
		y := g.expr(e.Y)
		return g.binary(e.Op, x, y, g.typeOf(e), e.OpPos)
	case *ast.UnaryExpr:
		return g.unary(e)
	case *ast.CallExpr:
		vals := g.call(e, false)
		if len(vals) != 1 {
			g.fail(e.Pos(), "this call has %d results, not one", len(vals))
		}
		return vals[0]
	case *ast.IndexExpr:
		if v, ok := g.loaded[e]; ok {
			return v
		}
		x := g.expr(e.X)
		if x.k != vSlice {
			g.fail(e.Pos(), "a kernel indexes slices only (no arrays, strings or maps)")
		}
		addr := g.elemAddr(x.s, e.Index, e.Lbrack)
		g.access(x.s, true, false)
		ti := g.info(x.s.elem, e.Pos())
		r := g.f.Reg(ti.reg)
		g.f.Ld(x.s.space, ptx.CacheDefault, ti.mem, addr, r)
		return scalar(x.s.elem, r)
	case *ast.SliceExpr:
		return g.sliceExpr(e)
	case *ast.SelectorExpr:
		sel := g.p.info.Selections[e]
		if sel != nil && sel.Kind() == types.FieldVal && isDim(sel.Recv()) {
			x := g.expr(e.X)
			return x.d[sel.Index()[0]]
		}
		if sel != nil && sel.Kind() == types.MethodVal {
			g.fail(e.Pos(), "a kernel has no function values: call %s() where its value is needed", types.ExprString(e))
		}
		g.fail(e.Pos(), "a kernel selects only the X, Y and Z of a kern.Dim")
	case *ast.CompositeLit:
		g.fail(e.Pos(), "a kernel has no composite literals: its slices come from its parameters and kern.Shared")
	case *ast.FuncLit:
		g.fail(e.Pos(), "a kernel has no function literals: declare a function in the kernel's file (calls are inlined)")
	case *ast.StarExpr:
		g.fail(e.Pos(), "a kernel has no pointers: index a slice")
	case *ast.TypeAssertExpr:
		g.fail(e.Pos(), "a kernel has no interfaces: write a generic kernel")
	}
	g.fail(e.Pos(), "this expression is not in the kernel subset of Go")
	return value{}
}

// constant returns a constant's value as an immediate (a predicate register for
// bools).
func (g *gen) constant(e ast.Expr, tv types.TypeAndValue) value {
	t := g.subst(tv.Type)
	ti, ok := scalarInfo(t)
	if !ok {
		g.fail(e.Pos(), "a kernel computes with numbers and bools, not %s", t)
	}
	if isUntyped(t) {
		t = types.Default(t)
	}
	return scalar(t, g.immediate(tv.Value, ti, e.Pos()))
}

func isUntyped(t types.Type) bool {
	b, ok := t.(*types.Basic)
	return ok && b.Info()&types.IsUntyped != 0
}

// immediate returns the operand of constant v as a value of type ti.
func (g *gen) immediate(v constant.Value, ti tinfo, pos token.Pos) ptx.Operand {
	switch {
	case ti.bool:
		p := g.f.Reg(ptx.Pred)
		if constant.BoolVal(v) {
			g.f.Mov(p, ptx.Int(1))
		} else {
			g.f.Mov(p, ptx.Int(0))
		}
		return p
	case ti.float:
		if ti.reg == ptx.F32 {
			x, _ := constant.Float32Val(constant.ToFloat(v))
			return ptx.ImmF32(x)
		}
		x, _ := constant.Float64Val(constant.ToFloat(v))
		return ptx.ImmF64(x)
	}
	iv := constant.ToInt(v)
	if iv.Kind() != constant.Int {
		g.fail(pos, "constant %s is not an integer", v)
	}
	if x, ok := constant.Int64Val(iv); ok {
		return ptx.Int(x)
	}
	x, _ := constant.Uint64Val(iv)
	return ptx.Uint(x)
}

// intImm returns a constant integer operand's value.
func intImm(op ptx.Operand) (int64, bool) {
	switch x := op.(type) {
	case ptx.Int:
		return int64(x), true
	case ptx.Uint:
		return int64(x), true
	}
	return 0, false
}

// normalize wraps a register holding an 8- or 16-bit integer to its Go width.
func (g *gen) normalize(r ptx.Reg, ti tinfo) {
	if !ti.small() {
		return
	}
	switch {
	case ti.signed && ti.bits == 8:
		g.f.Op("cvt.s32.s8", r, r)
	case ti.signed:
		g.f.Op("cvt.s32.s16", r, r)
	default:
		g.f.And(r, r, ptx.Int(1<<ti.bits-1))
	}
}

// binary computes x op y of type t (arithmetic and bit operators).
func (g *gen) binary(op token.Token, x, y value, t types.Type, pos token.Pos) value {
	if op == token.SHL || op == token.SHR {
		return g.shift(op, x, y, t, pos)
	}
	ti := g.info(t, pos)
	if ti.bool {
		g.fail(pos, "operator %s on bools", op)
	}
	xc, yc := g.convertTo(x, t, pos), g.convertTo(y, t, pos)
	a := g.reg(xc)
	b := yc.op
	d := g.f.Reg(ti.reg)
	switch op {
	case token.ADD:
		g.f.Add(d, a, b)
	case token.SUB:
		g.f.Sub(d, a, b)
	case token.MUL:
		g.f.Mul(d, a, b)
	case token.QUO:
		if ti.float {
			g.f.Div(d, a, b)
		} else {
			d = g.divide(a, b, ti, false, pos)
		}
	case token.REM:
		d = g.divide(a, b, ti, true, pos)
	case token.AND:
		g.f.And(d, a, b)
	case token.OR:
		g.f.Or(d, a, b)
	case token.XOR:
		g.f.Xor(d, a, b)
	case token.AND_NOT:
		nb := g.f.Reg(ti.reg)
		g.f.Not(nb, b)
		g.f.And(d, a, nb)
	default:
		g.fail(pos, "operator %s is not in the kernel subset of Go", op)
	}
	switch op {
	case token.ADD, token.SUB, token.MUL, token.QUO, token.XOR, token.AND_NOT:
		g.normalize(d, ti)
	}
	return g.arith(op, xc, yc, scalar(t, d), ti)
}

// divide returns a/b (rem: a%b) for integers with Go's semantics: a division by
// zero fails (with checks), and MinInt / -1 is MinInt (its remainder 0).
func (g *gen) divide(a ptx.Reg, b ptx.Operand, ti tinfo, rem bool, pos token.Pos) ptx.Reg {
	d := g.f.Reg(ti.reg)
	bc, isConst := intImm(b)
	if isConst && bc == 0 {
		g.failHere(pos, kDivide, nil, nil)
		return d
	}
	needMinus1 := ti.signed && !ti.small() && (!isConst || bc == -1)
	if !isConst && g.checks {
		p := g.f.Setp(ptx.Eq, b.(ptx.Reg), ptx.Int(0))
		g.failIf(p, pos, kDivide, nil, nil)
	}
	if isConst && bc == -1 && needMinus1 {
		if rem {
			g.f.Mov(d, ptx.Int(0))
		} else {
			g.f.Neg(d, a)
		}
		return d
	}
	if !needMinus1 {
		if rem {
			g.f.Rem(d, a, b)
		} else {
			g.f.Div(d, a, b)
		}
		return d
	}
	// b == -1: divide by 1 (no overflow) and negate.
	m1 := g.f.Setp(ptx.Eq, b.(ptx.Reg), ptx.Int(-1))
	bb := g.f.Reg(ti.reg)
	g.f.Selp(bb, ptx.Int(1), b, m1)
	if rem {
		g.f.Rem(d, a, bb) // a % 1 = 0
		return d
	}
	g.f.Div(d, a, bb)
	n := g.f.Reg(ti.reg)
	g.f.Neg(n, a)
	g.f.Selp(d, n, d, m1)
	return d
}

// shift computes x << y or x >> y with Go's semantics: counts past the width give 0
// (or the sign), a negative count fails (with checks).
func (g *gen) shift(op token.Token, x, y value, t types.Type, pos token.Pos) value {
	ti := g.info(t, pos)
	a := g.reg(g.convertTo(x, t, pos))
	d := g.f.Reg(ti.reg)
	width := ti.reg.Bits()
	var n ptx.Operand
	if c, ok := intImm(y.op); ok {
		if c < 0 {
			g.failHere(pos, kShift, nil, nil)
			return scalar(t, d)
		}
		n = ptx.Int(min(c, int64(width)))
	} else {
		yi := g.info(y.t, pos)
		yr := g.reg(y)
		if yi.signed && g.checks {
			p := g.f.Setp(ptx.Lt, yr, ptx.Int(0))
			g.failIf(p, pos, kShift, nil, nil)
		}
		if yi.reg.Bits() == 64 {
			// A count of 2^32 or more must still shift everything out.
			c := g.f.Reg(ptx.U64)
			g.f.Op("min.u64", c, yr, ptx.Int(64))
			c32 := g.f.Reg(ptx.U32)
			g.f.CvtRound(c32, c, "")
			n = c32
		} else {
			n = yr.As(ptx.U32)
		}
	}
	if op == token.SHL {
		g.f.Shl(d, a, n)
		g.normalize(d, ti)
	} else {
		g.f.Shr(d, a, n) // arithmetic for signed registers; 8/16-bit values are extended
	}
	return scalar(t, d)
}

// unary computes -x, +x, ^x and !x.
func (g *gen) unary(e *ast.UnaryExpr) value {
	switch e.Op {
	case token.AND:
		g.fail(e.Pos(), "a kernel has no pointers: index a slice (kern.AtomicAdd(x, i, v) for an atomic on x[i])")
	case token.ARROW:
		g.fail(e.Pos(), "a kernel has no channels")
	case token.NOT:
		p := g.f.Reg(ptx.Pred)
		g.f.Not(p, g.reg(g.expr(e.X)))
		return scalar(tBool, p)
	}
	t := g.typeOf(e)
	x := g.convertTo(g.expr(e.X), t, e.Pos())
	ti := g.info(t, e.Pos())
	switch e.Op {
	case token.ADD:
		return x
	case token.SUB:
		d := g.f.Reg(ti.reg)
		g.f.Neg(d, g.reg(x))
		g.normalize(d, ti)
		return scalar(t, d)
	case token.XOR:
		d := g.f.Reg(ti.reg)
		g.f.Not(d, g.reg(x))
		g.normalize(d, ti)
		return scalar(t, d)
	}
	g.fail(e.Pos(), "operator %s is not in the kernel subset of Go", e.Op)
	return value{}
}

var cmpOps = map[token.Token]ptx.Cmp{
	token.EQL: ptx.Eq, token.NEQ: ptx.Ne, token.LSS: ptx.Lt, token.LEQ: ptx.Le, token.GTR: ptx.Gt, token.GEQ: ptx.Ge,
}

// compare returns the predicate x op y.
func (g *gen) compare(op token.Token, x, y value, pos token.Pos) ptx.Reg {
	t := x.t
	if isUntyped(t) {
		t = y.t
	}
	ti := g.info(t, pos)
	x, y = g.convertTo(x, t, pos), g.convertTo(y, t, pos)
	p := g.f.Reg(ptx.Pred)
	if ti.bool {
		xr := g.f.Reg(ptx.Pred)
		g.f.Xor(xr, g.reg(x), g.reg(y))
		switch op {
		case token.NEQ:
			return xr
		case token.EQL:
			g.f.Not(p, xr)
			return p
		}
		g.fail(pos, "operator %s on bools", op)
	}
	cmp := cmpOps[op]
	if ti.float && op == token.NEQ {
		cmp = ptx.Neu // NaN != NaN
	}
	g.f.Op("setp."+string(cmp)+opSuffix(ti), p, g.reg(x), y.op)
	return p
}

// boolValue evaluates a boolean expression into a predicate register.
func (g *gen) boolValue(e ast.Expr) ptx.Reg {
	e = ast.Unparen(e)
	if b, ok := e.(*ast.BinaryExpr); ok {
		switch b.Op {
		case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
			x, y := g.expr(b.X), g.expr(b.Y)
			p := g.compare(b.Op, x, y, b.OpPos)
			delete(g.cmps, b)
			if ti, ok := scalarInfo(g.typeOf(b.X)); ok && !ti.float && !ti.bool {
				if lx, ly := g.linOf(x), g.linOf(y); lx != nil && ly != nil {
					g.cmps[b] = cmpLins{lx, ly}
				}
			}
			return p
		case token.LAND, token.LOR:
			p := g.f.Reg(ptx.Pred)
			no := g.f.NewLabel()
			g.f.Mov(p, ptx.Int(0))
			g.condJump(e, no, false)
			g.f.Mov(p, ptx.Int(1))
			g.f.Place(no)
			return p
		}
	}
	return g.reg(g.expr(e))
}

// condJump branches to target when e evaluates to when (short-circuiting && and ||).
func (g *gen) condJump(e ast.Expr, target ptx.Label, when bool) {
	e = ast.Unparen(e)
	if tv, ok := g.p.info.Types[e]; ok && tv.Value != nil {
		if constant.BoolVal(tv.Value) == when {
			g.f.Bra(target)
		}
		return
	}
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			g.condJump(x.X, target, !when)
			return
		}
	case *ast.BinaryExpr:
		switch x.Op {
		case token.LAND, token.LOR:
			// when && is true (|| false) both sides must be; else either decides.
			if (x.Op == token.LAND) == when {
				skip := g.f.NewLabel()
				g.condJump(x.X, skip, !when)
				g.pr.condEval++ // the right operand is evaluated conditionally
				g.condJump(x.Y, target, when)
				g.pr.condEval--
				g.f.Place(skip)
			} else {
				g.condJump(x.X, target, when)
				g.pr.condEval++
				g.condJump(x.Y, target, when)
				g.pr.condEval--
			}
			return
		}
	}
	p := g.boolValue(e)
	if when {
		g.f.At(p).Bra(target)
	} else {
		g.f.AtNot(p).Bra(target)
	}
}

// convertTo returns v as a value of type t: constants and values of identical
// types as they are, others through a conversion (Go's implicit conversions of
// untyped values).
func (g *gen) convertTo(v value, t types.Type, pos token.Pos) value {
	if v.k != vScalar || types.Identical(v.t, t) {
		v.t = t
		return v
	}
	return g.convert(v, t, pos)
}

// convert is the conversion T(v) between numeric types.
func (g *gen) convert(v value, t types.Type, pos token.Pos) (out value) {
	if v.k != vScalar {
		if types.Identical(v.t.Underlying(), t.Underlying()) {
			v.t = t
			return v
		}
		g.fail(pos, "a kernel converts numbers only")
	}
	from := g.info(v.t, pos)
	to := g.info(t, pos)
	if from.bool || to.bool {
		if from.bool && to.bool {
			v.t = t
			return v
		}
		g.fail(pos, "Go has no conversion between bool and numbers")
	}
	// Immediates convert at compile time.
	switch c := v.op.(type) {
	case ptx.Int, ptx.Uint:
		iv, _ := intImm(c)
		var cv constant.Value
		if from.signed {
			cv = constant.MakeInt64(iv)
		} else {
			cv = constant.MakeUint64(uint64(iv))
		}
		if to.float {
			return scalar(t, g.immediate(constant.ToFloat(cv), to, pos))
		}
		return scalar(t, g.immediate(constant.MakeInt64(wrapInt(iv, to)), to, pos))
	case ptx.ImmF32, ptx.ImmF64:
		var f float64
		if c32, ok := c.(ptx.ImmF32); ok {
			f = float64(c32)
		} else {
			f = float64(c.(ptx.ImmF64))
		}
		if to.float {
			return scalar(t, g.immediate(constant.MakeFloat64(f), to, pos))
		}
		// Out-of-range float to integer conversions are left to the device's cvt.
		if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return scalar(t, g.immediate(constant.MakeInt64(wrapInt(int64(f), to)), to, pos))
		}
	}
	src := g.reg(v)
	if !from.float && !to.float {
		// An integer conversion keeps the value where it fits (prove.go).
		defer func() { out = g.exact(out, g.linOf(v), to) }()
	}
	switch {
	case from.reg == to.reg && !to.small():
		return scalar(t, src) // same register type (int32 -> rune, int -> int64)
	case from.float && to.float:
		d := g.f.Reg(to.reg)
		g.f.Cvt(d, src)
		return scalar(t, d)
	case to.float:
		d := g.f.Reg(to.reg)
		g.f.Cvt(d, src) // cvt.rn.fXX.{s,u}YY
		return scalar(t, d)
	case from.float:
		// Truncate toward zero into a register of the destination's width
		// (saturating, NaN to 0: Go leaves out-of-range values to the
		// implementation), then wrap 8- and 16-bit results.
		d := g.f.Reg(to.reg)
		g.f.CvtRound(d, src, ".rzi")
		g.normalize(d, to)
		return scalar(t, d)
	}
	// Integer to integer.
	d := g.f.Reg(to.reg)
	switch {
	case from.reg.Bits() == to.reg.Bits():
		g.f.Mov(d, src.As(to.reg))
	case from.reg.Bits() < to.reg.Bits():
		g.f.Cvt(d, src) // sign- or zero-extends from the (normalized) source
	default:
		g.f.CvtRound(d, src, "") // truncates
	}
	g.normalize(d, to)
	return scalar(t, d)
}

// wrapInt returns x wrapped to the width and signedness of ti.
func wrapInt(x int64, ti tinfo) int64 {
	switch ti.bits {
	case 8:
		if ti.signed {
			return int64(int8(x))
		}
		return int64(uint8(x))
	case 16:
		if ti.signed {
			return int64(int16(x))
		}
		return int64(uint16(x))
	case 32:
		if ti.signed {
			return int64(int32(x))
		}
		return int64(uint32(x))
	}
	return x
}

// ---- slices ----

// index64 returns an index value as a 64-bit integer operand (sign-extended from
// signed types) and whether its type is signed.
func (g *gen) index64(v value, pos token.Pos) (ptx.Operand, bool) {
	ti := g.info(v.t, pos)
	if ti.float || ti.bool {
		g.fail(pos, "an index must be an integer")
	}
	if c, ok := intImm(v.op); ok {
		return ptx.Int(c), ti.signed
	}
	r := g.reg(v)
	if r.Type().Bits() == 64 {
		return r.As(ptx.S64), ti.signed
	}
	d := g.f.Reg(ptx.S64)
	g.f.Cvt(d, r)
	return d, ti.signed
}

// elemAddr returns the address of s[idx], checking the index.
func (g *gen) elemAddr(s *sliceVal, idxExpr ast.Expr, pos token.Pos) ptx.Addr {
	return g.elemAddrOf(s, g.expr(idxExpr), idxExpr.Pos(), pos)
}

// elemAddrOf is elemAddr for the index's value v (its expression at ipos).
func (g *gen) elemAddrOf(s *sliceVal, v value, ipos, pos token.Pos) ptx.Addr {
	if a, ok := g.elemAddr32(s, v, pos); ok {
		return a
	}
	idx, signed := g.index64(v, ipos)
	if !g.checks || !g.proven(v, s.len) {
		g.checkBound(kIndex, idx, s.len, signed, pos)
		g.pushFact(g.linOf(v), g.linOf(scalar(tInt, s.len)), true)
	}
	return g.addrOf(s, idx)
}

// clamp32 returns min(n, 2^31) as a u32 operand, for a slice's length n: a 32-bit
// index i (an int32, or a narrower integer) is in range exactly when uint32(i) <
// min(len, 2^31), one 32-bit compare (a negative i is 2^31 or more as a uint32).
func (g *gen) clamp32(n ptx.Operand) ptx.Operand {
	if c, ok := intImm(n); ok {
		return ptx.Int(min(uint64(c), 1<<31))
	}
	m := g.f.Reg(ptx.U64)
	g.f.Min(m, n.(ptx.Reg).As(ptx.U64), ptx.Int(1<<31))
	r := g.f.Reg(ptx.U32)
	g.f.CvtRound(r, m, "")
	return r
}

// elemAddr32 is elemAddr for an index of 32 bits or fewer held in a register
// (int32 arithmetic, or a smaller type's): the check compares 32 bits with the
// slice's len32, and the address is a widening multiply-add, where a 64-bit index
// would cost a conversion, a 64-bit compare and 64-bit shifts and adds. A uint32
// index (whose values reach 2^32-1) goes the 64-bit way.
func (g *gen) elemAddr32(s *sliceVal, v value, pos token.Pos) (ptx.Addr, bool) {
	ti, ok := scalarInfo(v.t)
	r, isReg := v.op.(ptx.Reg)
	if !ok || ti.float || ti.bool || !isReg || ti.reg.Bits() != 32 || (!ti.signed && ti.bits >= 32) {
		return ptx.Addr{}, false
	}
	i32 := r.As(ptx.U32)
	if g.checks && !g.proven(v, s.len) {
		g.pushFact(g.linOf(v), g.linOf(scalar(tInt, s.len)), true)
		p := g.f.Reg(ptx.Pred)
		g.f.Op("setp.ge.u32", p, i32, s.len32)
		st := g.site(pos, kIndex)
		g.sites[st-1].signed = ti.signed
		g.failTo(p, st, r, s.len)
	}
	size := int64(g.info(s.elem, token.NoPos).size)
	if s.space == ptx.Shared {
		a := g.f.Reg(ptx.U32)
		g.f.Op("mad.lo.u32", a, i32, ptx.Int(size), s.ptr)
		return ptx.Mem(a, 0), true
	}
	off := g.f.Reg(ptx.U64)
	if ti.signed {
		g.f.MulWide(off, r.As(ptx.S32), ptx.Int(size))
	} else {
		g.f.MulWide(off, i32, ptx.Int(size))
	}
	a := g.f.Reg(ptx.U64)
	g.f.Add(a, s.ptr, off)
	return ptx.Mem(a, 0), true
}

// checkBound fails at pos (kind k, values x and y) unless x < y (k == kIndex) or
// x <= y (the slice checks), compared unsigned as Go does.
func (g *gen) checkBound(k siteKind, x, y ptx.Operand, signed bool, pos token.Pos) {
	if !g.checks {
		return
	}
	xc, xok := intImm(x)
	yc, yok := intImm(y)
	if xok && yok {
		if uint64(xc) < uint64(yc) || k != kIndex && uint64(xc) == uint64(yc) {
			return
		}
	}
	cmp := ptx.Gt
	if k == kIndex {
		cmp = ptx.Ge
	}
	xr, ok := x.(ptx.Reg)
	if !ok {
		xr = g.f.Reg(ptx.S64)
		g.f.Mov(xr, x)
	}
	p := g.f.Reg(ptx.Pred)
	g.f.Op("setp."+string(cmp)+".u64", p, xr, y)
	s := g.site(pos, k)
	g.sites[s-1].signed = signed
	g.failTo(p, s, x, y)
}

// addrOf returns the address of s[idx] (idx a 64-bit operand).
func (g *gen) addrOf(s *sliceVal, idx ptx.Operand) ptx.Addr {
	size := int64(g.info(s.elem, token.NoPos).size)
	if c, ok := intImm(idx); ok {
		return ptx.Mem(s.ptr, c*size)
	}
	ir := idx.(ptx.Reg)
	shift := ptx.Int(log2(size))
	if s.space == ptx.Shared {
		i32 := g.f.Reg(ptx.U32)
		g.f.CvtRound(i32, ir.As(ptx.U64), "")
		off := g.f.Reg(ptx.U32)
		g.f.Shl(off, i32, shift)
		a := g.f.Reg(ptx.U32)
		g.f.Add(a, s.ptr, off)
		return ptx.Mem(a, 0)
	}
	off := g.f.Reg(ptx.U64)
	g.f.Shl(off, ir.As(ptx.U64), shift)
	a := g.f.Reg(ptx.U64)
	g.f.Add(a, s.ptr, off)
	return ptx.Mem(a, 0)
}

func log2(n int64) int64 {
	k := int64(0)
	for n > 1 {
		n >>= 1
		k++
	}
	return k
}

// access records a load (read) or store (write) through s.
func (g *gen) access(s *sliceVal, read, write bool) {
	g.accesses = append(g.accesses, access{os: s.os, read: read, write: write})
}

// sliceExpr is x[lo:hi] and x[lo:hi:max], checked as Go checks them.
func (g *gen) sliceExpr(e *ast.SliceExpr) value {
	x := g.expr(e.X)
	if x.k != vSlice {
		g.fail(e.Pos(), "a kernel slices slices only (no arrays or strings)")
	}
	s := x.s
	var lo, hi, mx ptx.Operand = ptx.Int(0), s.len, s.cap
	var loS, hiS, mxS bool
	if e.Low != nil {
		lo, loS = g.index64(g.expr(e.Low), e.Low.Pos())
	}
	if e.High != nil {
		hi, hiS = g.index64(g.expr(e.High), e.High.Pos())
	}
	if e.Max != nil {
		mx, mxS = g.index64(g.expr(e.Max), e.Max.Pos())
	}
	switch {
	case e.Slice3:
		g.checkBound(kSlice3Acap, mx, s.cap, mxS, e.Lbrack)
		g.checkBound(kSlice3B, hi, mx, hiS, e.Lbrack)
		g.checkBound(kSlice3C, lo, hi, loS, e.Lbrack)
	case e.High != nil:
		g.checkBound(kSliceAcap, hi, s.cap, hiS, e.Lbrack)
		g.checkBound(kSliceB, lo, hi, loS, e.Lbrack)
	default:
		g.checkBound(kSliceB, lo, hi, loS, e.Lbrack)
	}
	ns := &sliceVal{space: s.space, os: s.os, elem: s.elem}
	if c, ok := intImm(lo); ok && c == 0 {
		ns.ptr = s.ptr
	} else {
		addr := g.addrOf(s, lo)
		ns.ptr = g.f.Reg(s.ptr.Type())
		g.f.Add(ns.ptr, addr.Base.(ptx.Reg), ptx.Int(addr.Off))
	}
	ns.len = g.sub64(hi, lo)
	ns.cap = g.sub64(mx, lo)
	ns.len32 = g.clamp32(ns.len)
	return value{k: vSlice, t: g.typeOf(e), s: ns}
}

// sub64 returns a - b for 64-bit integer operands.
func (g *gen) sub64(a, b ptx.Operand) ptx.Operand {
	ac, aok := intImm(a)
	bc, bok := intImm(b)
	if aok && bok {
		return ptx.Int(ac - bc)
	}
	if bok && bc == 0 {
		return a
	}
	d := g.f.Reg(ptx.S64)
	ar, ok := a.(ptx.Reg)
	if !ok {
		ar = g.f.Reg(ptx.S64)
		g.f.Mov(ar, a)
	}
	g.f.Sub(d, ar, b)
	return d
}

// prefetchAll loads, before the rest of a statement's expressions is computed, the
// slice elements the expressions read, in Go's order of evaluation, so that the
// loads are in flight together: arithmetic between two loads would otherwise wait for
// the first before the second is issued (a bounds check's branch keeps the compiler
// from moving a load up). Only what can't be told apart moves: a load moves above
// arithmetic, never above another check (a division, a signed shift, a slice
// expression, a short-circuit's conditional operand) or a call that has effects.
//
// Consecutive elements of one slice among the expressions load together, in vector
// accesses (vector.go).
func (g *gen) prefetchAll(es []ast.Expr) {
	for i := 0; i < len(es); {
		if n := g.vectorLoads(es[i:]); n > 0 {
			i += n
			continue
		}
		if g.prefetch(es[i]) {
			return
		}
		i++
	}
}

// prefetch loads the elements e reads up to the first construct it can't move a load
// above, and reports whether it stopped there.
func (g *gen) prefetch(e ast.Expr) (stop bool) {
	if tv, ok := g.p.info.Types[e]; ok && tv.Value != nil {
		return false
	}
	switch e := e.(type) {
	case *ast.Ident, *ast.BasicLit:
		return false
	case *ast.ParenExpr:
		return g.prefetch(e.X)
	case *ast.UnaryExpr:
		return g.prefetch(e.X)
	case *ast.BinaryExpr:
		if g.prefetch(e.X) {
			return true
		}
		switch e.Op {
		case token.LAND, token.LOR:
			return true // the right operand is conditional
		}
		if g.prefetch(e.Y) {
			return true
		}
		switch e.Op {
		case token.QUO, token.REM, token.SHL, token.SHR:
			ti, ok := scalarInfo(g.typeOf(e.X))
			return !ok || !ti.float // a check may follow
		}
		return false
	case *ast.CallExpr:
		if !g.pureCall(e) {
			return true
		}
		for _, a := range e.Args {
			if g.prefetch(a) {
				return true
			}
		}
		return false
	case *ast.IndexExpr:
		if _, ok := g.typeOf(e.X).Underlying().(*types.Slice); !ok {
			return true
		}
		if g.prefetch(e.X) || g.prefetch(e.Index) {
			return true
		}
		v := g.expr(e)
		if g.loaded == nil {
			g.loaded = map[ast.Expr]value{}
		}
		g.loaded[e] = v
		return false
	}
	return true
}

// pureCall reports whether a call has no effect but its result: a conversion, len,
// cap, min, max, a math or math/bits function, kern's math and the thread's position.
func (g *gen) pureCall(e *ast.CallExpr) bool {
	fun := ast.Unparen(e.Fun)
	tv := g.p.info.Types[fun]
	if tv.IsType() {
		return true
	}
	if tv.IsBuiltin() {
		switch fun.(*ast.Ident).Name {
		case "len", "cap", "min", "max":
			return true
		}
		return false
	}
	var id *ast.Ident
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
	case *ast.IndexExpr:
		if x, ok := ast.Unparen(f.X).(*ast.SelectorExpr); ok {
			id = x.Sel
		} else if x, ok := ast.Unparen(f.X).(*ast.Ident); ok {
			id = x
		}
	}
	if id == nil {
		return false
	}
	fn, ok := g.p.info.Uses[id].(*types.Func)
	if !ok || fn.Pkg() == nil {
		return false
	}
	switch fn.Pkg().Path() {
	case "math", "math/bits":
		return true
	case kernPath:
		if _, ok := kernMath[fn.Name()]; ok {
			return true
		}
		switch fn.Name() {
		case "Sqrt", "FMA", "ThreadIdx", "BlockIdx", "BlockDim", "GridDim", "Index", "GridStride", "Lane", "Warp":
			return true
		}
	}
	return false
}
