package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the scatters (see Scatter).

// scatterGen holds a scatter kernel's registers.
type scatterGen struct {
	s    *Scatter
	f    *ptx.Func
	ig   *idxGen
	pdst ptx.Reg
	acc  ptx.Type
	ew   *ewGen // the operator's lowering (combine)
	// FixedAcc: the targets and the scale (fixed.go).
	targets, shift ptx.Reg
}

// toF64 converts a loaded float value (register of ewRT(vt)) to float64.
func (g *scatterGen) toF64(x ptx.Reg, vt dtype.DType) ptx.Reg {
	f := g.f
	if vt == dtype.Float64 {
		return x
	}
	if vt != dtype.Float32 {
		save := g.acc
		g.acc = ptx.F32
		x = g.toAcc(x, vt)
		g.acc = save
	}
	r := f.Reg(ptx.F64)
	f.Cvt(r, x)
	return r
}

// fixedParts returns an update's fixed-point words (s64) and its Inf/NaN flag (u32),
// zero for an invalid update (see fixed.go).
func (g *scatterGen) fixedParts(off, v, valid ptx.Reg) (lo, hi, flag ptx.Reg) {
	f := g.f
	lo, hi, flag = f.Reg(ptx.S64), f.Reg(ptx.S64), f.Reg(ptx.U32)
	f.Mov(lo, ptx.Int(0))
	f.Mov(hi, ptx.Int(0))
	f.Mov(flag, ptx.Int(0))
	ea := f.Reg(ptx.S64)
	f.Op("mad.lo.s64", ea, off, ptx.Int(4), g.pdst.As(ptx.S64))
	e := f.Reg(ptx.S32)
	f.Mov(e, ptx.Int(2047))
	f.At(valid).Op("ld.global.s32", e, ptx.Mem(ea, 0))
	done := f.NewLabel()
	// Inf and NaN: a flag; any of them makes the target's exponent 2047.
	b := f.Reg(ptx.U64)
	f.Op("mov.b64", b, v)
	f.And(b, b, ptx.Uint(0x7fffffffffffffff))
	spec := f.Setp(ptx.Ge, b, ptx.Uint(0x7ff0000000000000))
	f.Op("and.pred", spec, spec, valid)
	nan := f.Setp(ptx.Gt, b, ptx.Uint(0x7ff0000000000000))
	neg := f.Setp(ptx.Lt, v, ptx.ImmF64(0))
	fl := f.Reg(ptx.U32)
	f.Selp(fl, ptx.Int(2), ptx.Int(1), neg)
	f.At(nan).Op("mov.u32", fl, ptx.Int(3))
	f.At(spec).Op("mov.u32", flag, fl)
	skip := f.Setp(ptx.Ge, e, ptx.Int(2047))
	f.At(skip).Bra(done)
	pa, pb := fixedScale(f, g.shift, e, false)
	w := f.Reg(ptx.F64)
	f.Mul(w, v, pa)
	f.Mul(w, w, pb)
	h := f.Reg(ptx.F64)
	f.Mul(h, w, ptx.ImmF64(0x1p-32))
	f.CvtRound(h, h, ".rmi")
	l := f.Reg(ptx.F64)
	f.Mul(l, h, ptx.ImmF64(0x1p32))
	f.Sub(l, w, l)
	f.CvtRound(hi, h, ".rzi")
	f.CvtRound(lo, l, ".rni")
	f.Place(done)
	return lo, hi, flag
}

// fixedCombine adds the leaders' fixed-point words into HI and LO and every flag into
// F (scratch at dst: E s32[T], F u32[T], HI s64[T], LO s64[T]).
func (g *scatterGen) fixedCombine(offs, los, his, flags, leaders []ptx.Reg) {
	f := g.f
	for j, off := range offs {
		skipF := f.NewLabel()
		f.At(f.Setp(ptx.Eq, flags[j], ptx.Int(0))).Bra(skipF)
		fa := f.Reg(ptx.S64)
		f.Add(fa, g.targets.As(ptx.S64), off)
		f.Op("mad.lo.s64", fa, fa, ptx.Int(4), g.pdst.As(ptx.S64))
		junk := f.Reg(ptx.B32)
		f.Op("atom.global.or.b32", junk, ptx.Mem(fa, 0), flags[j])
		f.Place(skipF)
		skip := f.NewLabel()
		f.AtNot(leaders[j]).Bra(skip)
		ha := f.Reg(ptx.S64)
		f.Add(ha, g.targets.As(ptx.S64), off)
		f.Op("mad.lo.s64", ha, ha, ptx.Int(8), g.pdst.As(ptx.S64))
		j1, j2 := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Op("atom.global.add.u64", j1, ptx.Mem(ha, 0), his[j].As(ptx.U64))
		la := f.Reg(ptx.S64)
		f.Op("mad.lo.s64", la, g.targets.As(ptx.S64), ptx.Int(8), ha)
		f.Op("atom.global.add.u64", j2, ptx.Mem(la, 0), los[j].As(ptx.U64))
		f.Place(skip)
	}
}

// toAcc converts a loaded value (register of ewRT(vt)) to the accumulator type.
func (g *scatterGen) toAcc(x ptx.Reg, vt dtype.DType) ptx.Reg {
	f := g.f
	switch vt {
	case dtype.Bool:
		u := f.Reg(ptx.U32)
		f.Selp(u, ptx.Int(1), ptx.Int(0), x)
		x = u
	case dtype.Float16:
		r := f.Reg(ptx.F32)
		f.Op("cvt.f32.f16", r, x)
		x = r
	case dtype.BFloat16:
		u := f.Reg(ptx.U32)
		f.Op("cvt.u32.u16", u, x.As(ptx.U16))
		f.Shl(u, u, ptx.Int(16))
		r := f.Reg(ptx.F32)
		f.Op("mov.b32", r, u)
		x = r
	}
	if x.Type() == g.acc {
		return x
	}
	r := f.Reg(g.acc)
	f.Cvt(r, x)
	return r
}

// accBits returns the accumulator value as a .b32 or .b64 register of its bits.
func accBits(f *ptx.Func, v ptx.Reg) ptx.Reg {
	if v.Type().Bits() == 64 {
		r := f.Reg(ptx.B64)
		f.Op("mov.b64", r, v)
		return r
	}
	r := f.Reg(ptx.B32)
	f.Op("mov.b32", r, v)
	return r
}

// fromBits returns bits (.b32/.b64) as an accumulator value.
func fromBits(f *ptx.Func, at ptx.Type, b ptx.Reg) ptx.Reg {
	r := f.Reg(at)
	if at.Bits() == 64 {
		f.Op("mov.b64", r, b)
	} else {
		f.Op("mov.b32", r, b)
	}
	return r
}

// shflAcc returns v of lane src (shfl.sync.idx), for 32- and 64-bit values.
func shflAcc(f *ptx.Func, v, src ptx.Reg) ptx.Reg {
	b := accBits(f, v)
	if b.Type().Bits() == 32 {
		o := f.Reg(ptx.B32)
		f.Shfl("idx", o, b, src, ptx.Int(31), ptx.Uint(0xffffffff))
		return fromBits(f, v.Type(), o)
	}
	lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
	f.Op("mov.b64", ptx.Vec([]ptx.Reg{lo, hi}), b)
	olo, ohi := f.Reg(ptx.B32), f.Reg(ptx.B32)
	f.Shfl("idx", olo, lo, src, ptx.Int(31), ptx.Uint(0xffffffff))
	f.Shfl("idx", ohi, hi, src, ptx.Int(31), ptx.Uint(0xffffffff))
	o := f.Reg(ptx.B64)
	f.Op("mov.b64", o, ptx.Vec([]ptx.Reg{olo, ohi}))
	return fromBits(f, v.Type(), o)
}

// reducePeers combines v over each group of lanes whose bit is set in peers (the
// lanes' match.any mask); the group's lowest lane ends with the group's total
// (Westphal 2015: a tree over the group's members in lane order). Every lane of the
// warp must execute it.
func (g *scatterGen) reducePeers(peers, v ptx.Reg) ptx.Reg {
	f := g.f
	lane := g.ig.lane
	x := f.Reg(v.Type())
	f.Mov(x, v)
	// The lane's rank in its group: peers in lower lanes.
	below := f.Reg(ptx.B32)
	sh := f.Reg(ptx.U32)
	f.Sub(sh, ptx.Int(32), lane)
	f.Shl(below, peers, sh)
	rel := f.Reg(ptx.U32)
	f.Op("popc.b32", rel, below)
	// The peers above the lane.
	rem := f.Reg(ptx.B32)
	f.Shl(rem, ptx.Uint(0xfffffffe), lane)
	f.And(rem, rem, peers)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	has := f.Setp(ptx.Ne, rem.As(ptx.U32), ptx.Int(0))
	any := f.Reg(ptx.Pred)
	f.Vote("any", any, has, ptx.Uint(0xffffffff))
	f.AtNot(any).Bra(done)
	next := lowestSetBit(f, rem)
	f.And(next, next, ptx.Int(31))
	t := shflAcc(f, x, next)
	c := g.combine(g.s.Dst, x, t)
	f.At(has).Op("mov"+movType(x.Type()), x, c)
	odd := f.Reg(ptx.U32)
	f.And(odd, rel, ptx.Int(1))
	isOdd := f.Setp(ptx.Ne, odd, ptx.Int(0))
	gone := f.Reg(ptx.B32)
	f.Vote("ballot", gone, isOdd, ptx.Uint(0xffffffff))
	f.Not(gone, gone)
	f.And(rem, rem, gone)
	f.Shr(rel, rel, ptx.Int(1))
	f.Bra(loop)
	f.Place(done)
	return x
}

// movType is the mov suffix of a register type.
func movType(t ptx.Type) string {
	switch t {
	case ptx.F32, ptx.F64, ptx.Pred:
		return t.String()
	}
	return t.Bit().String()
}

// atomicFloatMinMax combines the float value v into [a] (space sp) for max or min
// through integer atomics on its bits, NaN winning as the canonical NaN.
func atomicFloatMinMax(f *ptx.Func, sp ptx.Space, isMax bool, a ptx.Addr, v ptx.Reg) {
	w := v.Type().Bits()
	bt, st, ut := ptx.B32, ptx.S32, ptx.U32
	nanPos, nanNeg, abs, inf := uint64(0x7fffffff), uint64(0xffffffff), uint64(0x7fffffff), uint64(0x7f800000)
	if w == 64 {
		bt, st, ut = ptx.B64, ptx.S64, ptx.U64
		nanPos, nanNeg, abs, inf = 0x7fffffffffffffff, 0xffffffffffffffff, 0x7fffffffffffffff, 0x7ff0000000000000
	}
	canon := nanNeg
	if isMax {
		canon = nanPos
	}
	bits := f.Reg(bt)
	f.Op("mov"+bt.String(), bits, v)
	nan := f.Setp(ptx.NaN, v, v)
	f.Selp(bits.As(ut), ptx.Uint(canon), bits.As(ut), nan)
	neg := f.Setp(ptx.Lt, bits.As(st), ptx.Int(0))
	old := f.Reg(ut)
	opPos, opNeg := "min", "max"
	if isMax {
		opPos, opNeg = "max", "min"
	}
	f.AtNot(neg).Op("atom"+sp.String()+"."+opPos+st.String(), old, a, bits.As(st))
	f.At(neg).Op("atom"+sp.String()+"."+opNeg+ut.String(), old, a, bits.As(ut))
	// An old NaN that a number replaced comes back.
	m := f.Reg(ut)
	f.And(m, old, ptx.Uint(abs))
	wasNaN := f.Setp(ptx.Gt, m, ptx.Uint(inf))
	junk := f.Reg(ut)
	if isMax {
		f.At(wasNaN).Op("atom"+sp.String()+".max"+st.String(), junk.As(st), a, ptx.Uint(nanPos))
		return
	}
	// The minimum's NaN went in as all ones, the one NaN that wins the atomics above:
	// it, and a NaN that a number replaced, become the canonical NaN (the operator
	// table's NaN policy). Once a NaN is in, every atomic that takes it out is followed
	// by its thread's exchange, so the last operation on the element leaves a NaN.
	f.Op("or.pred", wasNaN, wasNaN, nan)
	f.At(wasNaN).Op("atom"+sp.String()+".exch"+bt.String(), junk.As(bt), a, ptx.Uint(nanPos))
}

// atomicAcc combines v (accumulator type) into the accumulator-typed element at [a]
// of space sp (shared bins, or a 4- or 8-byte destination).
func (g *scatterGen) atomicAcc(sp ptx.Space, a ptx.Addr, v ptx.Reg) {
	f := g.f
	t := g.s.Dst
	at := v.Type()
	junk := f.Reg(at)
	switch op := g.s.Op; {
	case t == dtype.Bool:
		name := "or"
		if op.For(t) == OpAnd {
			name = "and"
		}
		f.Op("atom"+sp.String()+"."+name+".b32", junk, a, v)
	case op == OpSum:
		ty := at
		if ty == ptx.S32 || ty == ptx.S64 {
			ty = ty.Unsigned()
		}
		f.Op("atom"+sp.String()+".add"+ty.String(), junk.As(ty), a, v.As(ty))
		if sp == ptx.Global && at == ptx.F64 {
			// The GPU's float64 addition, atomic too, passes a NaN operand's payload on
			// (and +Inf + -Inf gives 0xfff8000000000000): a thread whose addition gives
			// NaN writes the canonical NaN after it. NaN absorbs every later addition, so
			// the element's last atomic is followed by such a store and it ends canonical
			// (the package's NaN policy).
			sum := f.Reg(ptx.F64)
			f.Op("add.rn.f64", sum, junk, v)
			// (An atomic exchange rather than a plain store: the PTX memory model orders
			// only strong writes against the other threads' atomics.)
			canon, old := f.Reg(ptx.B64), f.Reg(ptx.B64)
			f.Op("mov.b64", canon, ptx.Uint(fp.NaN64Bits))
			f.At(f.Setp(ptx.NaN, sum, sum)).Op("atom.global.exch.b64", old, a, canon)
		}
	case at == ptx.F32 || at == ptx.F64:
		atomicFloatMinMax(f, sp, op == OpMax, a, v)
	default:
		f.Op("atom"+sp.String()+"."+op.String()+at.String(), junk, a, v)
	}
}

// casCombine combines each v (accumulator type) whose pending predicate holds into
// the 1- or 2-byte destination element at address a (u64), through compare-and-swap
// loops on their aligned 32-bit words, all in one loop (one back edge, so that ptxas
// needs one convergence barrier, not one per element). The predicates are cleared.
func (g *scatterGen) casCombine(as, vs, pending []ptx.Reg) {
	f := g.f
	t := g.s.Dst
	bits := 8 * t.Size()
	was := make([]ptx.Reg, len(as))
	shs := make([]ptx.Reg, len(as))
	olds := make([]ptx.Reg, len(as))
	for j, a := range as {
		was[j] = f.Reg(ptx.U64)
		f.And(was[j], a, ptx.Uint(^uint64(3)))
		shs[j] = f.Reg(ptx.U32)
		f.Cvt(shs[j], a)
		f.And(shs[j], shs[j], ptx.Int(3))
		f.Shl(shs[j], shs[j], ptx.Int(3))
		olds[j] = f.Reg(ptx.B32)
		f.Mov(olds[j].As(ptx.U32), ptx.Int(0))
		f.At(pending[j]).Op("ld.global.b32", olds[j], ptx.Mem(was[j], 0))
	}
	loop := f.NewLabel()
	f.Place(loop)
	for j := range as {
		skip := f.NewLabel()
		f.AtNot(pending[j]).Bra(skip)
		old, sh := olds[j], shs[j]
		var cur ptx.Reg
		switch t {
		case dtype.Int8, dtype.Int16:
			cur = f.Reg(ptx.S32)
			f.Op("bfe.s32", cur, old.As(ptx.S32), sh, ptx.Int(bits))
		case dtype.Float16:
			u := f.Reg(ptx.U32)
			f.Op("bfe.u32", u, old.As(ptx.U32), sh, ptx.Int(bits))
			h := f.Reg(ptx.U16)
			f.Cvt(h, u)
			cur = f.Reg(ptx.F32)
			f.Op("cvt.f32.f16", cur, h.As(ptx.B16))
		case dtype.BFloat16:
			u := f.Reg(ptx.U32)
			f.Op("bfe.u32", u, old.As(ptx.U32), sh, ptx.Int(bits))
			f.Shl(u, u, ptx.Int(16))
			cur = f.Reg(ptx.F32)
			f.Op("mov.b32", cur, u)
		default:
			cur = f.Reg(ptx.U32)
			f.Op("bfe.u32", cur, old.As(ptx.U32), sh, ptx.Int(bits))
		}
		nv := g.combine(t, cur, vs[j])
		nb := f.Reg(ptx.B32)
		switch t {
		case dtype.Float16, dtype.BFloat16:
			h := f.Reg(ptx.B16)
			name := "f16"
			if t == dtype.BFloat16 {
				name = "bf16"
			}
			f.Op("cvt.rn."+name+".f32", h, nv)
			u := f.Reg(ptx.U16)
			f.Op("mov.b16", u, h)
			f.Op("cvt.u32.u16", nb.As(ptx.U32), u)
		default:
			f.Op("mov.b32", nb, nv)
		}
		nw := f.Reg(ptx.B32)
		f.Op("bfi.b32", nw, nb, old, sh, ptx.Int(bits))
		prev := f.Reg(ptx.B32)
		f.Op("atom.global.cas.b32", prev, ptx.Mem(was[j], 0), old, nw)
		f.Op("setp.ne.u32", pending[j], prev.As(ptx.U32), old.As(ptx.U32))
		f.Op("mov.b32", old, prev)
		f.Place(skip)
	}
	again := f.Reg(ptx.Pred)
	f.Op("mov.pred", again, pending[0])
	for _, p := range pending[1:] {
		f.Op("or.pred", again, again, p)
	}
	f.At(again).Bra(loop)
}

// globalCombine combines each v (accumulator type) whose predicate holds into the
// destination element at its offset (s64). The predicates may be cleared.
func (g *scatterGen) globalCombine(offs, vs, preds []ptx.Reg) {
	f := g.f
	as := make([]ptx.Reg, len(offs))
	for j, off := range offs {
		as[j] = f.Reg(ptx.S64)
		f.Op("mad.lo.s64", as[j], off, ptx.Int(g.s.Dst.Size()), g.pdst.As(ptx.S64))
	}
	if g.s.Dst.Size() < 4 {
		us := make([]ptx.Reg, len(as))
		for j, a := range as {
			us[j] = a.As(ptx.U64)
		}
		g.casCombine(us, vs, preds)
		return
	}
	for j, a := range as {
		skip := f.NewLabel()
		f.AtNot(preds[j]).Bra(skip)
		g.atomicAcc(ptx.Global, ptx.Mem(a, 0), vs[j])
		f.Place(skip)
	}
}

// binAddr returns the shared address of bin off (s64).
func (g *scatterGen) binAddr(off ptx.Reg) ptx.Reg {
	f := g.f
	o32 := f.Reg(ptx.U32)
	f.Cvt(o32, off)
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym("sc_bins"))
	f.Op("mad.lo.u32", a, o32, ptx.Int(g.acc.Bits()/8), a)
	return a
}

// PTX returns the scatter's PTX.
func (s *Scatter) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	if s.Variant == 2 {
		return s.ptx2(major, minor)
	}
	m := ptx.NewModule(major, minor)
	entry = "scatter"
	params := append([]ptx.Param{ptx.P("dst", ptx.U64), ptx.P("vals", ptx.U64), ptx.P("idx", ptx.U64),
		ptx.P("err", ptx.U64), ptx.P("n", ptx.U64)}, gatherPTXParams(s.Rank, 3)...)
	if s.Fixed == FixedAcc {
		params = append(params, ptx.P("targets", ptx.U64), ptx.P("shift", ptx.U64))
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", GatherBlock))
	g := &scatterGen{s: s, f: f, acc: accType(s.Dst), ew: exprLowering(m, f, 10*major+minor, nil)}
	g.pdst = f.Reg(ptx.U64)
	pvals, pidx, perr := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, g.pdst, f.LdParam(0))
	f.CvtaTo(ptx.Global, pvals, f.LdParam(1))
	f.CvtaTo(ptx.Global, pidx, f.LdParam(2))
	f.CvtaTo(ptx.Global, perr, f.LdParam(3))
	n := f.LdParam(4)
	g.ig = newIdxGen(f, s.Mode, s.Index, s.Rank, s.Index64, perr, 5, 3)
	ig := g.ig
	if s.Fixed == FixedAcc {
		p := 5 + 2 + s.Rank + 3*s.Rank
		g.targets = f.LdParam(p)
		g.shift = f.Reg(ptx.S32)
		f.Cvt(g.shift, f.LdParam(p+1))
	}
	tid := f.Special(ptx.TidX)
	accBytes := g.acc.Bits() / 8
	identity := scatterIdentity(s.Op, s.Dst)
	if s.Copies > 0 {
		f.Shared("sc_bins", ptx.B8, 16, s.Bins*s.Copies*accBytes)
		g.initCopies(tid, identity)
		f.BarSync(0)
	} else if s.Bins > 0 {
		f.Shared("sc_bins", ptx.B8, 16, s.Bins*accBytes)
		g.binLoop(tid, func(b, a ptx.Reg) {
			if accBytes == 8 {
				f.Op("st.shared.u64", ptx.Mem(a, 0), ptx.Uint(identity))
			} else {
				f.Op("st.shared.u32", ptx.Mem(a, 0), ptx.Uint(identity))
			}
		})
		f.BarSync(0)
	}
	vt := s.Val
	chunkLoop(f, n, func(e, full ptx.Reg, valid []ptx.Reg) {
		raws := make([]ptx.Reg, GatherItems)
		dos := make([]ptx.Reg, GatherItems)
		vos := make([]ptx.Reg, GatherItems)
		if s.Rank == 0 {
			for j := range vos {
				vos[j] = f.Reg(ptx.S64)
				f.Add(vos[j], e.As(ptx.S64), ptx.Int(j))
			}
		} else {
			dig, offs := ig.digits(e)
			for j := range dos {
				dos[j], vos[j] = f.Reg(ptx.S64), f.Reg(ptx.S64)
				f.Mov(dos[j], offs[0])
				f.Mov(vos[j], offs[1])
				raws[j] = f.Reg(ptx.S64)
				f.Mov(raws[j], offs[2]) // the index offset, loaded below
				if j < GatherItems-1 {
					ig.step(dig, offs)
				}
			}
		}
		// The indices.
		if s.Rank == 0 && s.Vector {
			for j := range raws {
				raws[j] = f.Reg(ptx.S64)
			}
			partial, loaded := f.NewLabel(), f.NewLabel()
			f.AtNot(full).Bra(partial)
			for j, r := range ig.loadIndexVector(pidx, e) {
				f.Mov(raws[j], r)
			}
			f.Bra(loaded)
			f.Place(partial)
			for j := range raws {
				f.Mov(raws[j], ig.loadIndex(pidx, vos[j], valid[j]))
			}
			f.Place(loaded)
		} else {
			for j := range raws {
				io := vos[j]
				if s.Rank > 0 {
					io = raws[j]
				}
				raws[j] = ig.loadIndex(pidx, io, valid[j])
			}
		}
		// The values.
		vals := make([]ptx.Reg, GatherItems)
		switch {
		case s.Ones:
			for j := range vals {
				vals[j] = f.Reg(g.acc)
				switch g.acc {
				case ptx.F32:
					f.Mov(vals[j], ptx.ImmF32(1))
				case ptx.F64:
					f.Mov(vals[j], ptx.ImmF64(1))
				default:
					f.Mov(vals[j], ptx.Int(1))
				}
			}
		case s.Op == ScatterStore:
			rt, mem := bitsType(s.Dst.Size())
			for j := range vals {
				a := f.Reg(ptx.S64)
				f.Op("mad.lo.s64", a, vos[j], ptx.Int(s.Dst.Size()), pvals.As(ptx.S64))
				vals[j] = f.Reg(rt)
				f.Mov(vals[j], ptx.Int(0))
				f.At(valid[j]).Op("ld.global.nc"+mem, vals[j], ptx.Mem(a, 0))
			}
		default:
			loaded := make([]ptx.Reg, GatherItems)
			for j := range loaded {
				loaded[j] = f.Reg(ewRT(vt))
			}
			done := f.NewLabel()
			if s.Rank == 0 && s.Vector && vt.Size() >= 4 {
				partial := f.NewLabel()
				f.AtNot(full).Bra(partial)
				a := f.Reg(ptx.U64)
				f.Op("mad.lo.u64", a, e, ptx.Int(vt.Size()), pvals)
				for j, r := range loadVectorWide(f, vt, a) {
					f.Mov(loaded[j], r)
				}
				f.Bra(done)
				f.Place(partial)
			}
			for j := range loaded {
				a := f.Reg(ptx.S64)
				f.Op("mad.lo.s64", a, vos[j], ptx.Int(vt.Size()), pvals.As(ptx.S64))
				f.Op("mov"+movType(loaded[j].Type()), loaded[j], guardedLoad(f, vt, valid[j], ptx.Mem(a, 0)))
			}
			f.Place(done)
			for j := range vals {
				switch s.Fixed {
				case FixedExp:
					b := f.Reg(ptx.U64)
					f.Op("mov.b64", b, g.toF64(loaded[j], vt))
					f.Shr(b, b, ptx.Int(52))
					f.And(b, b, ptx.Int(0x7ff))
					vals[j] = f.Reg(ptx.S32)
					f.Cvt(vals[j], b)
				case FixedAcc:
					vals[j] = g.toF64(loaded[j], vt)
				default:
					vals[j] = g.toAcc(loaded[j], vt)
				}
			}
		}
		// Every warp-synchronous step (the index checks' votes, the matches and
		// shuffles) first, then the atomics, which diverge (ptxas then needs fewer
		// convergence barriers).
		offs := make([]ptx.Reg, GatherItems)
		leaders := make([]ptx.Reg, GatherItems)
		fixedHi := make([]ptx.Reg, GatherItems)   // FixedAcc: vals holds the low words
		fixedFlag := make([]ptx.Reg, GatherItems) // FixedAcc: Inf and NaN flags
		// live: the updates that apply: in range, and with an index in range or
		// recorded as bad (Raise, Check), which skips the update rather than writing
		// the value to the nearest end of the axis.
		live := make([]ptx.Reg, GatherItems)
		agg := s.aggregation()
		for j := range vals {
			k, bad := ig.normBad(raws[j], valid[j])
			live[j] = valid[j]
			if bad.Valid() {
				live[j] = f.Reg(ptx.Pred)
				f.Op("and.pred", live[j], valid[j], notp(f, bad))
			}
			off := f.Reg(ptx.S64)
			f.Mul(off, k, ig.ast)
			if s.Rank > 0 {
				f.Add(off, off, dos[j])
			}
			offs[j] = off
			if s.Op == ScatterStore {
				continue
			}
			if s.Fixed == FixedAcc {
				vals[j], fixedHi[j], fixedFlag[j] = g.fixedParts(off, vals[j], live[j])
			}
			leaders[j] = f.Reg(ptx.Pred)
			f.Op("mov.pred", leaders[j], live[j])
			if agg == aggAlways {
				g.aggregate(offs[j], live[j], vals[j], fixedHi[j], leaders[j])
			}
		}
		if agg == aggDetect {
			// Only rounds whose vote finds neighbours with one target aggregate.
			aggregated := f.NewLabel()
			f.AtNot(g.dupVote(offs, live)).Bra(aggregated)
			for j := range offs {
				g.aggregate(offs[j], live[j], vals[j], fixedHi[j], leaders[j])
			}
			f.Place(aggregated)
		}
		for j := range vals {
			if s.Op == ScatterStore {
				_, mem := bitsType(s.Dst.Size())
				a := f.Reg(ptx.S64)
				f.Op("mad.lo.s64", a, offs[j], ptx.Int(s.Dst.Size()), g.pdst.As(ptx.S64))
				f.At(live[j]).Op("st.global"+mem, ptx.Mem(a, 0), vals[j])
				continue
			}
			if s.Copies > 0 {
				g.copyCombine(tid, offs[j], vals[j], leaders[j])
			} else if s.Bins > 0 {
				skip := f.NewLabel()
				f.AtNot(leaders[j]).Bra(skip)
				g.atomicAcc(ptx.Shared, ptx.Mem(g.binAddr(offs[j]), 0), vals[j])
				f.Place(skip)
			}
		}
		switch {
		case s.Fixed == FixedAcc:
			g.fixedCombine(offs, vals, fixedHi, fixedFlag, leaders)
		case s.Op != ScatterStore && s.Bins == 0:
			g.globalCombine(offs, vals, leaders)
		}
	})
	if s.Copies > 0 {
		f.BarSync(0)
		g.flushCopies(tid, identity)
	} else if s.Bins > 0 {
		f.BarSync(0)
		g.binLoop(tid, func(b, a ptx.Reg) {
			bits := f.Reg(ptx.B32)
			if accBytes == 8 {
				bits = f.Reg(ptx.B64)
			}
			f.Op("ld.shared"+bits.Type().String(), bits, ptx.Mem(a, 0))
			use := f.Setp(ptx.Ne, bits.As(bits.Type().Unsigned()), ptx.Uint(identity))
			off := f.Reg(ptx.S64)
			f.Cvt(off, b)
			g.globalCombine([]ptx.Reg{off}, []ptx.Reg{fromBits(f, g.acc, bits)}, []ptx.Reg{use})
		})
	}
	f.Ret()
	return m.String(), entry, nil
}

// aggregate combines, in every warp, the values v (and with FixedAcc the high words
// hi) of the live lanes with the same target off over each group (match.any, then
// the shuffle tree), and sets leader for each group's lowest live lane only: the
// group's total is its. Every lane of the warp must execute it.
func (g *scatterGen) aggregate(off, live, v, hi, leader ptx.Reg) {
	f := g.f
	// The key of a lane without an update is -2^63 + lane, its own: no offset is that
	// low (offsets are element offsets within an allocation, of either sign: a view's
	// stride may be negative, so -1-lane would match the offsets -1 to -32 and let a
	// lane's value without an update into that target's group).
	key := f.Reg(ptx.S64)
	other := f.Reg(ptx.S64)
	f.Cvt(other, g.ig.lane)
	f.Op("or.b64", other.As(ptx.B64), other.As(ptx.B64), ptx.Uint(1<<63))
	f.Selp(key, off, other, live)
	peers := f.Reg(ptx.B32)
	f.Op("match.any.sync.b64", peers, key.As(ptx.B64), ptx.Uint(0xffffffff))
	r := g.reducePeers(peers, v)
	f.Op("mov"+movType(r.Type()), v, r)
	if g.s.Fixed == FixedAcc {
		h := g.reducePeers(peers, hi)
		f.Op("mov"+movType(h.Type()), hi, h)
	}
	first := lowestSetBit(f, peers)
	f.Op("setp.eq.and.u32", leader, g.ig.lane, first, live)
}

// binLoop runs body for each bin b (u32) the thread owns (b = tid, tid+GatherBlock,
// ...) with its shared address a (u32).
func (g *scatterGen) binLoop(tid ptx.Reg, body func(b, a ptx.Reg)) {
	f := g.f
	b := f.Reg(ptx.U32)
	f.Mov(b, tid)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, b, ptx.Int(g.s.Bins))).Bra(done)
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym("sc_bins"))
	f.Op("mad.lo.u32", a, b, ptx.Int(g.acc.Bits()/8), a)
	body(b, a)
	f.Add(b, b, ptx.Int(GatherBlock))
	f.Bra(loop)
	f.Place(done)
}

// loadVectorWide loads GatherItems consecutive 4- or 8-byte elements of type t at a
// (16-byte aligned) with one or two accesses.
func loadVectorWide(f *ptx.Func, t dtype.DType, a ptx.Reg) []ptx.Reg {
	rt := ewRT(t)
	if t.Size() == 4 {
		rs := f.Regs(rt, GatherItems)
		f.Op(fmt.Sprintf("ld.global.nc.v%d%s", GatherItems, rt), ptx.Vec(rs), ptx.Mem(a, 0))
		return rs
	}
	var out []ptx.Reg
	for j := 0; j < GatherItems; j += 2 {
		rs := f.Regs(rt, 2)
		f.Op("ld.global.nc.v2"+rt.String(), ptx.Vec(rs), ptx.Mem(a, int64(8*j)))
		out = append(out, rs...)
	}
	return out
}
