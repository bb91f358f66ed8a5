package gokernel

import (
	"fmt"
	"go/ast"
	"go/constant"
	"go/token"
	"go/types"
	"math"

	"github.com/go-gpu/gpu/ptx"
)

// call compiles a call: a conversion, a builtin, a function of package kern, math
// or math/bits, or a function of the kernel's source (inlined). stmt says the call
// is a statement (its results unused).
func (g *gen) call(e *ast.CallExpr, stmt bool) []value {
	fun := ast.Unparen(e.Fun)
	tv := g.p.info.Types[fun]
	if tv.IsType() {
		if len(e.Args) != 1 {
			g.fail(e.Pos(), "a conversion takes one value")
		}
		return []value{g.convert(g.expr(e.Args[0]), g.subst(tv.Type), e.Pos())}
	}
	if e.Ellipsis.IsValid() {
		g.fail(e.Ellipsis, "a kernel has no variadic calls")
	}
	if tv.IsBuiltin() {
		return g.builtin(ast.Unparen(fun).(*ast.Ident), e)
	}
	var id *ast.Ident
	var recv ast.Expr
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = ast.Unparen(f.X)
	case *ast.IndexListExpr:
		fun = ast.Unparen(f.X)
	}
	switch f := fun.(type) {
	case *ast.Ident:
		id = f
	case *ast.SelectorExpr:
		id = f.Sel
		if sel := g.p.info.Selections[f]; sel != nil {
			if sel.Kind() != types.MethodVal {
				g.fail(e.Pos(), "a kernel calls functions and methods, not function values")
			}
			recv = f.X
		}
	default:
		g.fail(e.Pos(), "a kernel calls functions by name only")
	}
	fn, ok := g.p.info.Uses[id].(*types.Func)
	if !ok {
		g.fail(e.Pos(), "a kernel calls functions by name only (no function values)")
	}
	var targs []types.Type
	if inst, ok := g.p.info.Instances[id]; ok {
		for i := range inst.TypeArgs.Len() {
			targs = append(targs, g.subst(inst.TypeArgs.At(i)))
		}
	}
	switch {
	case isKernPkg(fn):
		return g.kernCall(fn, recv, targs, e)
	case fn.Pkg() != nil && fn.Pkg().Path() == "math":
		return []value{g.mathCall(fn.Name(), e)}
	case fn.Pkg() != nil && fn.Pkg().Path() == "math/bits":
		return []value{g.bitsCall(fn.Name(), e)}
	}
	if decl := g.p.decls[fn.Origin()]; decl != nil && fn.Pkg() == g.p.pkg {
		if recv != nil || decl.Recv != nil {
			g.fail(e.Pos(), "a kernel calls functions, not methods: make %s a function", fn.Name())
		}
		return g.inline(fn.Origin(), decl, targs, e)
	}
	g.fail(e.Pos(), "a kernel calls only the functions of its own source, of package kern, and what it supports of math and math/bits, not %s", funcName(fn))
	return nil
}

// args evaluates a call's arguments (one call with several results spreads).
func (g *gen) args(e *ast.CallExpr, n int) []value {
	if len(e.Args) == 1 && n > 1 {
		return g.exprList(e.Args, n)
	}
	vals := make([]value, len(e.Args))
	for i, a := range e.Args {
		vals[i] = g.expr(a)
	}
	return vals
}

// inline compiles a call of a function of the source in place.
func (g *gen) inline(fn *types.Func, decl *ast.FuncDecl, targs []types.Type, e *ast.CallExpr) []value {
	for fr := g.fr; fr != nil; fr = fr.parent {
		if fr.fn == fn {
			g.fail(e.Pos(), "a kernel's calls are inlined, so %s can't call itself (recursion): write a loop", fn.Name())
		}
	}
	sig := fn.Type().(*types.Signature)
	if sig.Variadic() {
		g.fail(e.Pos(), "a kernel has no variadic functions")
	}
	vals := g.args(e, sig.Params().Len())
	fr := &frame{parent: g.fr, fn: fn, vars: map[types.Object]*variable{}, retL: g.f.NewLabel()}
	if tps := sig.TypeParams(); tps.Len() > 0 {
		if len(targs) != tps.Len() {
			g.fail(e.Pos(), "cannot infer the type arguments of %s", fn.Name())
		}
		fr.subst = map[*types.TypeParam]types.Type{}
		for i := range tps.Len() {
			fr.subst[tps.At(i)] = targs[i]
		}
	}
	outer := g.fr
	g.fr = fr
	defer func() { g.fr = outer }()
	i := 0
	for _, field := range decl.Type.Params.List {
		names := field.Names
		if len(names) == 0 {
			names = []*ast.Ident{nil}
		}
		for _, name := range names {
			pt := g.subst(sig.Params().At(i).Type())
			var obj types.Object
			if name != nil && name.Name != "_" {
				obj = g.p.info.Defs[name]
			}
			v := g.newVar(obj, pt, e.Args[min(i, len(e.Args)-1)].Pos())
			g.assign(v, g.convertTo(vals[i], pt, e.Pos()), e.Pos())
			i++
		}
	}
	if decl.Type.Results != nil {
		i = 0
		for _, field := range decl.Type.Results.List {
			names := field.Names
			if len(names) == 0 {
				names = []*ast.Ident{nil}
			}
			for _, name := range names {
				rt := g.subst(sig.Results().At(i).Type())
				var obj types.Object
				if name != nil && name.Name != "_" {
					obj = g.p.info.Defs[name]
				}
				rv := g.newVar(obj, rt, decl.Pos())
				rv.single = false // every return assigns it
				fr.results = append(fr.results, rv)
				i++
			}
		}
	}
	g.depth++
	if g.depth > 100 {
		g.fail(e.Pos(), "calls nested more than 100 deep")
	}
	g.block(decl.Body.List)
	g.depth--
	g.f.Place(fr.retL)
	out := make([]value, len(fr.results))
	for i, r := range fr.results {
		out[i] = r.v
	}
	return out
}

// builtin compiles len, cap, min, max and panic.
func (g *gen) builtin(id *ast.Ident, e *ast.CallExpr) []value {
	switch id.Name {
	case "len", "cap":
		x := g.expr(e.Args[0])
		if x.k != vSlice {
			g.fail(e.Pos(), "%s of a kernel value: only slices have one", id.Name)
		}
		n := x.s.cap
		if id.Name == "len" {
			n = x.s.len
		}
		if r, ok := n.(ptx.Reg); ok {
			g.setRange(r, 0, maxLen)
		}
		return []value{scalar(tInt, n)}
	case "min", "max":
		t := g.typeOf(e)
		r := g.convertTo(g.expr(e.Args[0]), t, e.Pos())
		args := []value{r}
		for _, a := range e.Args[1:] {
			av := g.convertTo(g.expr(a), t, a.Pos())
			args = append(args, av)
			r = g.minMax(id.Name == "min", r, av, t, false, e.Pos())
		}
		if ti, ok := scalarInfo(t); ok && !ti.float && id.Name == "min" {
			// min(a, b) <= a and <= b; its range is within theirs.
			lr := g.linOf(r)
			lo, hi, known := int64(rangeLimit), int64(rangeLimit), true
			for _, a := range args {
				g.pushFact(lr, g.linOf(a), false)
				if ar, ok := g.rangeOf(g.linOf(a)); ok {
					lo, hi = min(lo, ar.lo), min(hi, ar.hi)
				} else {
					known = false
				}
			}
			if rr, ok := r.op.(ptx.Reg); ok && known {
				g.setRange(rr, lo, hi)
			}
		}
		return []value{r}
	case "panic":
		tv := g.p.info.Types[e.Args[0]]
		if tv.Value == nil {
			g.fail(e.Args[0].Pos(), "a kernel panics with a constant only (its text is kept for the error)")
		}
		s := g.failHere(e.Pos(), kPanic, nil, nil)
		if tv.Value.Kind() == constant.String {
			g.sites[s-1].msg = constant.StringVal(tv.Value)
		} else {
			g.sites[s-1].msg = tv.Value.ExactString()
		}
		return nil
	case "copy", "clear":
		g.fail(e.Pos(), "a kernel has no %s: write a loop over the elements", id.Name)
	case "append", "make", "new":
		g.fail(e.Pos(), "a kernel allocates no memory (%s): its slices come from its parameters and kern.Shared", id.Name)
	}
	g.fail(e.Pos(), "the builtin %s is not in the kernel subset of Go", id.Name)
	return nil
}

// minMax returns min(x, y) (or max) of type t: for floats with the builtin's rules
// (a NaN wins, -0 is below +0), or math.Min/Max's (goMath: an infinity of the right
// sign wins over NaN).
func (g *gen) minMax(isMin bool, x, y value, t types.Type, goMath bool, pos token.Pos) value {
	ti := g.info(t, pos)
	a, b := g.reg(x), y.op
	d := g.f.Reg(ti.reg)
	if isMin {
		g.f.Min(d, a, b)
	} else {
		g.f.Max(d, a, b)
	}
	if !ti.float {
		return scalar(t, d)
	}
	br := g.reg(y)
	// Equal operands (+0 and -0 among them): the sign bits decide.
	bt := ti.reg.Bit()
	eq := g.f.Setp(ptx.Eq, a, br)
	ab, bb, sb := g.f.Reg(bt), g.f.Reg(bt), g.f.Reg(bt)
	g.f.Mov(ab, a)
	g.f.Mov(bb, br)
	if isMin {
		g.f.Or(sb, ab, bb)
	} else {
		g.f.And(sb, ab, bb)
	}
	sf := g.f.Reg(ti.reg)
	g.f.Mov(sf, sb)
	g.f.Selp(d, sf, d, eq)
	// A NaN operand gives NaN.
	nan := g.f.Reg(ptx.Pred)
	g.f.Op("setp.nan"+ti.reg.String(), nan, a, br)
	g.f.Selp(d, nanImm(ti), d, nan)
	if goMath {
		inf := g.f.Reg(ptx.Pred)
		var infv ptx.Operand
		if isMin {
			infv = negInfImm(ti)
		} else {
			infv = infImm(ti)
		}
		ia := g.f.Setp(ptx.Eq, a, infv)
		ib := g.f.Setp(ptx.Eq, br, infv)
		g.f.Or(inf, ia, ib)
		g.f.Selp(d, infv, d, inf)
	}
	return scalar(t, d)
}

func nanImm(ti tinfo) ptx.Operand {
	if ti.reg == ptx.F32 {
		return ptx.ImmF32(math.Float32frombits(0x7fffffff))
	}
	return ptx.ImmF64(math.Float64frombits(0x7fffffffffffffff))
}

func infImm(ti tinfo) ptx.Operand {
	if ti.reg == ptx.F32 {
		return ptx.ImmF32(float32(math.Inf(1)))
	}
	return ptx.ImmF64(math.Inf(1))
}

func negInfImm(ti tinfo) ptx.Operand {
	if ti.reg == ptx.F32 {
		return ptx.ImmF32(float32(math.Inf(-1)))
	}
	return ptx.ImmF64(math.Inf(-1))
}

// ---- package kern ----

// special returns a special register as an int value.
func (g *gen) special(s ptx.SReg) value {
	r := g.f.Special(s)
	d := g.f.Reg(ptx.S64)
	g.f.Cvt(d, r)
	if sr, ok := specialRange(s); ok {
		g.setRange(d, sr.lo, sr.hi)
	}
	return scalar(tInt, d)
}

func (g *gen) dim(x, y, z ptx.SReg) value {
	dt := g.p.kernType("Dim")
	return value{k: vDim, t: dt, d: []value{g.special(x), g.special(y), g.special(z)}}
}

// kernMath maps package kern's math functions to the library's.
var kernMath = map[string]ptx.MathFn{
	"Exp": ptx.Exp, "Exp2": ptx.Exp2, "Expm1": ptx.Expm1, "Log": ptx.Log, "Log2": ptx.Log2,
	"Log10": ptx.Log10, "Log1p": ptx.Log1p, "Sin": ptx.Sin, "Cos": ptx.Cos, "Tan": ptx.Tan,
	"Asin": ptx.Asin, "Acos": ptx.Acos, "Atan": ptx.Atan, "Atan2": ptx.Atan2, "Sinh": ptx.Sinh,
	"Cosh": ptx.Cosh, "Tanh": ptx.Tanh, "Asinh": ptx.Asinh, "Acosh": ptx.Acosh, "Atanh": ptx.Atanh,
	"Pow": ptx.Pow, "Cbrt": ptx.Cbrt, "Hypot": ptx.Hypot, "Erf": ptx.Erf, "Mod": ptx.Fmod,
}

// kernCall compiles a call of package kern (recv: a method's receiver).
func (g *gen) kernCall(fn *types.Func, recv ast.Expr, targs []types.Type, e *ast.CallExpr) []value {
	name := fn.Name()
	one := func(v value) []value { return []value{v} }
	if recv != nil {
		rt := g.typeOf(recv)
		if isDim(rt) && name == "Size" {
			d := g.expr(recv)
			r := g.binary(token.MUL, d.d[0], d.d[1], tInt, e.Pos())
			return one(g.binary(token.MUL, r, d.d[2], tInt, e.Pos()))
		}
		if !isThread(rt) {
			g.fail(e.Pos(), "%s is not for kernels", funcName(fn))
		}
		switch name {
		case "ThreadIdx":
			return one(g.dim(ptx.TidX, ptx.TidY, ptx.TidZ))
		case "BlockIdx":
			return one(g.dim(ptx.CtaidX, ptx.CtaidY, ptx.CtaidZ))
		case "BlockDim":
			return one(g.dim(ptx.NtidX, ptx.NtidY, ptx.NtidZ))
		case "GridDim":
			return one(g.dim(ptx.NctaidX, ptx.NctaidY, ptx.NctaidZ))
		case "Index", "GridStride":
			a, b := ptx.CtaidX, ptx.TidX
			if name == "GridStride" {
				a = ptx.NctaidX
			}
			d := g.f.Reg(ptx.U64)
			g.f.MulWide(d, g.f.Special(a), g.f.Special(ptx.NtidX))
			if name == "Index" {
				t := g.f.Reg(ptx.U64)
				g.f.Cvt(t, g.f.Special(b))
				g.f.Add(d, d, t)
				g.setRange(d, 0, maxThreadsX-1)
			} else {
				g.setRange(d, 1, maxThreadsX)
			}
			return one(scalar(tInt, d.As(ptx.S64)))
		case "Lane":
			return one(g.special(ptx.LaneID))
		case "Warp":
			lin := g.linearTid()
			w := g.f.Reg(ptx.U32)
			g.f.Shr(w, lin, ptx.Int(5))
			d := g.f.Reg(ptx.S64)
			g.f.Cvt(d, w)
			g.setRange(d, 0, 31)
			return one(scalar(tInt, d))
		case "Sync":
			g.f.BarSync(0)
			return nil
		case "SyncWarp":
			mask, _ := g.warpLanes()
			g.f.Op("bar.warp.sync", mask)
			return nil
		case "Ballot", "All", "Any":
			p := g.reg(g.expr(e.Args[0]))
			mask, _ := g.warpLanes()
			if name == "Ballot" {
				d := g.f.Reg(ptx.U32)
				g.f.Vote("ballot", d, p, mask)
				return one(scalar(tUint32, d))
			}
			d := g.f.Reg(ptx.Pred)
			g.f.Vote(map[string]string{"All": "all", "Any": "any"}[name], d, p, mask)
			return one(scalar(tBool, d))
		}
		g.fail(e.Pos(), "%s is not for kernels", funcName(fn))
	}
	if mf, ok := kernMath[name]; ok {
		args := g.args(e, mf.NumArgs())
		t := g.typeOf(e)
		ti := g.info(t, e.Pos())
		regs := make([]ptx.Reg, len(args))
		for i, a := range args {
			regs[i] = g.reg(g.convertTo(a, t, e.Pos()))
		}
		if !mf.Supports(ti.reg) {
			g.fail(e.Pos(), "kern.%s has no %s version", name, t)
		}
		return one(scalar(t, g.f.Math(mf, regs...)))
	}
	switch name {
	case "Sqrt":
		t := g.typeOf(e)
		ti := g.info(t, e.Pos())
		d := g.f.Reg(ti.reg)
		g.f.Sqrt(d, g.reg(g.convertTo(g.expr(e.Args[0]), t, e.Pos())))
		return one(scalar(t, d))
	case "FMA":
		t := g.typeOf(e)
		ti := g.info(t, e.Pos())
		args := g.args(e, 3)
		d := g.f.Reg(ti.reg)
		g.f.Fma(d, g.reg(g.convertTo(args[0], t, e.Pos())), g.convertTo(args[1], t, e.Pos()).op, g.convertTo(args[2], t, e.Pos()).op)
		return one(scalar(t, d))
	case "Shared":
		return one(g.shared(targs[0], e))
	case "ShflXor", "ShflDown", "ShflUp", "Shfl":
		return one(g.shuffle(name, e))
	case "Fence":
		g.f.Membar("gl")
		return nil
	case "FenceBlock":
		g.f.Membar("cta")
		return nil
	case "AtomicAdd", "AtomicMin", "AtomicMax", "AtomicAnd", "AtomicOr", "AtomicXor", "AtomicExch",
		"AtomicCAS", "AtomicLoad", "AtomicStore":
		return g.atomic(name, e)
	}
	g.fail(e.Pos(), "%s is not for kernels", funcName(fn))
	return nil
}

// linearTid returns the thread's index in its block, x fastest (u32).
func (g *gen) linearTid() ptx.Reg {
	f := g.f
	lin := f.Reg(ptx.U32)
	f.Fma(lin, f.Special(ptx.TidZ), f.Special(ptx.NtidY), f.Special(ptx.TidY))
	f.Fma(lin, lin, f.Special(ptx.NtidX), f.Special(ptx.TidX))
	return lin
}

// warpLanes returns the member mask of the thread's warp (its lanes that exist) and
// its highest lane, computed at the kernel's entry.
func (g *gen) warpLanes() (mask, clamp ptx.Reg) {
	if !g.warpDone {
		g.fail(token.NoPos, "internal error: warp operations not found before compiling")
	}
	return g.warpMask, g.warpClamp
}

// writeWarpLanes computes the warp's member mask and highest lane (at the entry):
// the lanes of a partial last warp are those that exist.
func (g *gen) writeWarpLanes() {
	f := g.f
	lin := g.linearTid()
	n := f.Reg(ptx.U32)
	f.Mul(n, f.Special(ptx.NtidX), f.Special(ptx.NtidY))
	f.Mul(n, n, f.Special(ptx.NtidZ))
	base := f.Reg(ptx.U32)
	f.And(base, lin, ptx.Uint(0xFFFFFFE0))
	lanes := f.Reg(ptx.U32)
	f.Sub(lanes, n, base)
	f.Min(lanes, lanes, ptx.Int(32))
	one := f.Reg(ptx.U32)
	f.Mov(one, ptx.Int(1))
	g.warpMask = f.Reg(ptx.U32)
	f.Shl(g.warpMask, one, lanes) // 1 << 32 is 0: the full mask below
	f.Sub(g.warpMask, g.warpMask, ptx.Int(1))
	g.warpClamp = f.Reg(ptx.U32)
	f.Sub(g.warpClamp, lanes, ptx.Int(1))
	g.warpDone = true
}

// shuffle compiles ShflXor, ShflDown, ShflUp and Shfl.
func (g *gen) shuffle(name string, e *ast.CallExpr) value {
	t := g.typeOf(e)
	ti := g.info(t, e.Pos())
	v := g.reg(g.convertTo(g.expr(e.Args[1]), t, e.Pos()))
	lane := g.convertTo(g.expr(e.Args[2]), tInt, e.Pos())
	mask, clamp := g.warpLanes()
	mode := map[string]string{"ShflXor": "bfly", "ShflDown": "down", "ShflUp": "up", "Shfl": "idx"}[name]
	c := ptx.Operand(clamp)
	if mode == "up" {
		c = ptx.Int(0)
	}
	// The lane operand must be in [0, 32): others give the caller its own value.
	var b ptx.Operand
	var bad ptx.Reg
	if k, ok := intImm(lane.op); ok {
		if k < 0 || k >= 32 {
			return scalar(t, v)
		}
		b = ptx.Int(k)
	} else {
		lr := g.reg(lane)
		bad = g.f.Reg(ptx.Pred)
		g.f.Op("setp.ge.u64", bad, lr, ptx.Int(32))
		b32 := g.f.Reg(ptx.U32)
		g.f.CvtRound(b32, lr.As(ptx.U64), "")
		b = b32
	}
	var d ptx.Reg
	if ti.reg.Bits() == 64 {
		lo, hi := g.f.Reg(ptx.B32), g.f.Reg(ptx.B32)
		g.f.Op("mov.b64", ptx.Vec{lo, hi}, v)
		g.f.Shfl(mode, lo, lo, b, c, mask)
		g.f.Shfl(mode, hi, hi, b, c, mask)
		d = g.f.Reg(ti.reg)
		g.f.Op("mov.b64", d, ptx.Vec{lo, hi})
	} else {
		d = g.f.Reg(ti.reg)
		g.f.Shfl(mode, d, v, b, c, mask)
	}
	if bad.Valid() {
		g.f.Selp(d, v, d, bad)
	}
	return scalar(t, d)
}

// shared compiles kern.Shared[T](t, n): one .shared array per source line, type and
// length.
func (g *gen) shared(elem types.Type, e *ast.CallExpr) value {
	tv := g.p.info.Types[e.Args[1]]
	if tv.Value == nil {
		g.fail(e.Args[1].Pos(), "kern.Shared needs a constant length (its memory is reserved when the kernel is compiled)")
	}
	n, ok := constant.Int64Val(constant.ToInt(tv.Value))
	if !ok || n < 0 {
		g.fail(e.Args[1].Pos(), "kern.Shared of %s elements", tv.Value)
	}
	ti := g.info(elem, e.Pos())
	pos := g.p.position(e.Pos())
	key := fmt.Sprintf("%d/%s/%d", pos.Line, elem, n)
	// One call per line; the same call compiled again (a helper called twice, or a
	// generic one instantiated with another type) is the same declaration, as on the CPU.
	if at, ok := g.sharedCall[pos.Line]; ok && at != e.Pos() {
		g.fail(e.Pos(), "one kern.Shared per line: the CPU tells shared arrays apart by their line")
	}
	g.sharedCall[pos.Line] = e.Pos()
	name, ok := g.sharedAt[key]
	if !ok {
		name = fmt.Sprintf("__shared%d", len(g.sharedAt))
		g.sharedAt[key] = name
		g.sharedBytes += int(n) * ti.size
		g.m.Shared(name, ptx.B8, 16, max(1, int(n)*ti.size))
	}
	ptr := g.f.Reg(ptx.U32)
	g.f.Mov(ptr, ptx.Sym(name))
	return value{k: vSlice, t: types.NewSlice(elem), s: &sliceVal{
		ptr: ptr, len: ptx.Int(n), cap: ptx.Int(n), len32: g.clamp32(ptx.Int(n)), space: ptx.Shared, os: &oset{}, elem: elem,
	}}
}

// atomic compiles package kern's atomics.
func (g *gen) atomic(name string, e *ast.CallExpr) []value {
	x := g.expr(e.Args[0])
	if x.k != vSlice {
		g.fail(e.Args[0].Pos(), "an atomic operates on a slice element")
	}
	elem := x.s.elem
	ti := g.info(elem, e.Pos())
	if ti.size != 4 && ti.size != 8 {
		g.fail(e.Pos(), "atomics need 32- or 64-bit elements, not %s: use int32 or uint32", elem)
	}
	addr := g.elemAddr(x.s, e.Args[1], e.Args[1].Pos())
	g.access(x.s, name != "AtomicStore", name != "AtomicLoad")
	var vals []value
	for _, a := range e.Args[2:] {
		vals = append(vals, g.convertTo(g.expr(a), elem, a.Pos()))
	}
	sp := x.s.space
	d := g.f.Reg(ti.reg)
	switch name {
	case "AtomicLoad":
		g.f.Op(relaxed("ld", sp, ti.mem), d, addr)
		return []value{scalar(elem, d)}
	case "AtomicStore":
		g.f.Op(relaxed("st", sp, ti.mem), addr, g.reg(vals[0]))
		return nil
	case "AtomicAdd":
		t := ti.mem
		if !ti.float && ti.size == 8 {
			t = ptx.U64
		}
		g.f.Atom("", "", sp, "add", t, d, addr, vals[0].op)
	case "AtomicMin", "AtomicMax":
		op := "min"
		if name == "AtomicMax" {
			op = "max"
		}
		if ti.float {
			return []value{g.casLoop(addr, sp, elem, func(old ptx.Reg) ptx.Reg {
				return g.reg(g.minMax(op == "min", scalar(elem, old), vals[0], elem, false, e.Pos()))
			})}
		}
		g.f.Atom("", "", sp, op, ti.mem, d, addr, vals[0].op)
	case "AtomicAnd", "AtomicOr", "AtomicXor":
		g.f.Atom("", "", sp, map[string]string{"AtomicAnd": "and", "AtomicOr": "or", "AtomicXor": "xor"}[name], ti.mem, d, addr, vals[0].op)
	case "AtomicExch":
		g.f.Atom("", "", sp, "exch", ti.mem, d, addr, vals[0].op)
	case "AtomicCAS":
		g.f.Atom("", "", sp, "cas", ti.mem, d, addr, vals[0].op, vals[1].op)
	}
	return []value{scalar(elem, d)}
}

// relaxed returns the opcode of a relaxed load or store (op "ld" or "st") of type t in
// space sp: scope .cta in shared memory, .gpu elsewhere.
func relaxed(op string, sp ptx.Space, t ptx.Type) string {
	scope := ".gpu"
	if sp == ptx.Shared {
		scope = ".cta"
	}
	return op + ".relaxed" + scope + sp.String() + t.String()
}

// casLoop applies f to the element at addr atomically with a compare-and-swap loop
// and returns the old value. The first guess is a relaxed load (as AtomicLoad's): a
// plain one would race with other threads' atomics on the element (the PTX memory
// model's data race, which the simulator reports under -race).
func (g *gen) casLoop(addr ptx.Addr, sp ptx.Space, elem types.Type, f func(old ptx.Reg) ptx.Reg) value {
	ti := g.info(elem, token.NoPos)
	bt := ti.reg.Bit()
	old := g.f.Reg(ti.reg)
	g.f.Op(relaxed("ld", sp, ti.mem), old, addr)
	top := g.f.NewLabel()
	g.f.Place(top)
	nv := f(old)
	ob, nb, prev := g.f.Reg(bt), g.f.Reg(bt), g.f.Reg(bt)
	g.f.Mov(ob, old)
	g.f.Mov(nb, nv)
	g.f.Atom("", "", sp, "cas", bt, prev, addr, ob, nb)
	g.f.Mov(old, prev)
	again := g.f.Setp(ptx.Ne, prev, ob)
	g.f.At(again).Bra(top)
	return scalar(elem, old)
}
