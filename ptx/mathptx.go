package ptx

import "math"

// lowerPTX appends the IR b to f, reading the arguments from args, and returns the
// register holding the result.
func lowerPTX(f *Func, b *mb, args []Reg) Reg {
	l := &lowerer{f: f, b: b, regs: make([]Reg, len(b.vals)), args: args}
	l.block(b.top)
	r := l.regs[b.ret]
	if !r.Valid() { // the result is a constant or argument: copy it
		r = f.Reg(b.typ(b.ret).ptx())
		f.Mov(r, l.opnd(b.ret))
	}
	return r
}

type lowerer struct {
	f    *Func
	b    *mb
	regs []Reg
	args []Reg
}

func (l *lowerer) opnd(v val) Operand {
	if bits, ok := l.b.isConst(v); ok {
		switch l.b.typ(v) {
		case tF32:
			return ImmF32(math.Float32frombits(uint32(bits)))
		case tF64:
			return ImmF64(math.Float64frombits(bits))
		default:
			return Uint(bits)
		}
	}
	r := l.regs[v]
	if !r.Valid() {
		panic("mathir: value used before definition")
	}
	return r
}

func (l *lowerer) reg(v val) Reg {
	if o, ok := l.opnd(v).(Reg); ok {
		return o
	}
	// constant where a register is needed: materialise it
	r := l.f.Reg(l.b.typ(v).ptx())
	l.f.Mov(r, l.opnd(v))
	return r
}

func (l *lowerer) def(n *node) Reg {
	r := l.f.Reg(n.t.ptx())
	l.regs[n.dst] = r
	return r
}

func ftype(t vtype) string {
	if t == tF32 {
		return ".f32"
	}
	return ".f64"
}

func itype(t vtype) string {
	switch t {
	case tU32:
		return ".u32"
	case tU64:
		return ".u64"
	case tPred:
		return ".pred"
	}
	return ftype(t)
}

func btype(t vtype) string {
	switch t {
	case tU32, tF32:
		return ".b32"
	case tU64, tF64:
		return ".b64"
	}
	return ".pred"
}

func stype(t vtype) string {
	if t == tU32 {
		return ".s32"
	}
	return ".s64"
}

func isF(t vtype) bool { return t == tF32 || t == tF64 }

func (l *lowerer) block(ns []*node) {
	f := l.f
	for _, n := range ns {
		a := func(i int) Operand { return l.opnd(n.a[i]) }
		switch n.op {
		case oConst:
		case oArg:
			l.regs[n.dst] = l.args[n.imm]
		case oVar:
			f.Op("mov"+btypeMov(n.t), l.def(n), a(0))
		case oSet:
			f.Op("mov"+btypeMov(l.b.typ(n.a[0])), l.regs[n.a[0]], a(1))
		case oIf:
			p := l.reg(n.a[0])
			end := f.NewLabel()
			switch {
			case len(n.els) == 0:
				f.AtNot(p).Bra(end)
				l.block(n.then)
			case len(n.then) == 0:
				f.At(p).Bra(end)
				l.block(n.els)
			default:
				els := f.NewLabel()
				f.AtNot(p).Bra(els)
				l.block(n.then)
				f.Bra(end)
				f.Place(els)
				l.block(n.els)
			}
			f.Place(end)
		case oLoop:
			top, end := f.NewLabel(), f.NewLabel()
			f.Place(top)
			l.block(n.then)
			f.AtNot(l.reg(n.a[0])).Bra(end)
			l.block(n.els)
			f.Bra(top)
			f.Place(end)
		case oAdd, oSub, oMul:
			name := map[opc]string{oAdd: "add", oSub: "sub", oMul: "mul"}[n.op]
			if isF(n.t) {
				f.Op(name+".rn"+ftype(n.t), l.def(n), a(0), a(1))
			} else if n.op == oMul {
				f.Op("mul.lo"+itype(n.t), l.def(n), a(0), a(1))
			} else {
				f.Op(name+itype(n.t), l.def(n), a(0), a(1))
			}
		case oFma:
			f.Op("fma.rn"+ftype(n.t), l.def(n), a(0), a(1), a(2))
		case oDiv:
			f.Op("div.rn"+ftype(n.t), l.def(n), a(0), a(1))
		case oSqrt:
			f.Op("sqrt.rn"+ftype(n.t), l.def(n), a(0))
		case oNeg:
			f.Op("neg"+ftype(n.t), l.def(n), a(0))
		case oAbs:
			f.Op("abs"+ftype(n.t), l.def(n), a(0))
		case oRint:
			f.Op("cvt.rni"+ftype(n.t)+ftype(n.t), l.def(n), a(0))
		case oFloor:
			f.Op("cvt.rmi"+ftype(n.t)+ftype(n.t), l.def(n), a(0))
		case oTrunc:
			f.Op("cvt.rzi"+ftype(n.t)+ftype(n.t), l.def(n), a(0))
		case oMulHi:
			f.Op("mul.hi"+itype(n.t), l.def(n), a(0), a(1))
		case oMulWide:
			f.Op("mul.wide.u32", l.def(n), a(0), a(1))
		case oAnd, oOr, oXor:
			name := map[opc]string{oAnd: "and", oOr: "or", oXor: "xor"}[n.op]
			f.Op(name+btype(n.t), l.def(n), a(0), a(1))
		case oNot:
			f.Op("not"+btype(n.t), l.def(n), a(0))
		case oShl:
			f.Op("shl"+btype(n.t), l.def(n), a(0), a(1))
		case oShr:
			f.Op("shr"+itype(n.t), l.def(n), a(0), a(1))
		case oSar:
			f.Op("shr"+stype(n.t), l.def(n), a(0), a(1))
		case oCmp:
			k := cmpKind(n.imm)
			t := itype(n.t)
			if k >= cSLt {
				t = stype(n.t)
			}
			d := f.Reg(Pred)
			l.regs[n.dst] = d
			f.Op("setp."+cmpPTX[k]+t, d, l.reg(n.a[0]), a(1))
		case oSel:
			f.Op("selp"+selType(n.t), l.def(n), a(1), a(2), l.reg(n.a[0]))
		case oBits, oFromBits:
			f.Op("mov"+btype(n.t), l.def(n), a(0))
		case oLo, oHi:
			d := l.def(n)
			other := f.Reg(U32)
			lo, hi := d, other
			if n.op == oHi {
				lo, hi = other, d
			}
			f.Op("mov.b64", Vec{lo, hi}, l.reg(n.a[0]))
		case oPack:
			f.Op("mov.b64", l.def(n), Vec{l.reg(n.a[0]), l.reg(n.a[1])})
		case oZext:
			f.Op("cvt.u64.u32", l.def(n), a(0))
		case oSext:
			f.Op("cvt.s64.s32", l.def(n), a(0))
		case oCvtF:
			if n.t == tF32 {
				f.Op("cvt.rn.f32.f64", l.def(n), a(0))
			} else {
				f.Op("cvt.f64.f32", l.def(n), a(0))
			}
		case oCvtSI:
			f.Op("cvt.rn"+ftype(n.t)+stype(l.b.typ(n.a[0])), l.def(n), a(0))
		case oCvtFI:
			f.Op("cvt.rni.s32"+ftype(l.b.typ(n.a[0])), l.def(n), a(0))
		case oLoad:
			tb := l.b.tables[n.imm]
			sym := "__gpumath_tbl_" + tb.name // apart from the function names
			size := 4
			if tb.t == tF64 || tb.t == tU64 {
				size = 8
			}
			if !f.m.HasVar(sym) {
				bt := B32
				if size == 8 {
					bt = B64
				}
				f.m.Var(Global, sym, bt, size, len(tb.data), tb.data)
			}
			base := f.Reg(U64)
			f.Op("mov.u64", base, Sym(sym))
			off := f.Reg(U64)
			f.Op("mul.wide.u32", off, l.reg(n.a[0]), Int(size))
			f.Op("add.u64", off, base, off)
			f.Op("ld.global.nc"+itype(n.t), l.def(n), Addr{Base: off})
		default:
			panic("mathir: unknown op")
		}
	}
}

func btypeMov(t vtype) string {
	switch t {
	case tF32:
		return ".f32"
	case tF64:
		return ".f64"
	}
	return btype(t)
}

func selType(t vtype) string {
	switch t {
	case tF32:
		return ".f32"
	case tF64:
		return ".f64"
	}
	return btype(t)
}
