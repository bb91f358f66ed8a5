package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/ptx"
)

// Helpers of the scan, search and permute PTX generators.
//
// Values live in registers as the elementwise lowering keeps them (ewRT): Bool in a
// predicate, 8- to 32-bit integers in 32-bit registers (sign- or zero-extended), 64-bit
// integers and floats in their own, so that expression operators and conversions are
// lowered by the elementwise generator (exprLowering), with expr's semantics bit for
// bit.
// Shuffles, shared memory and the look-back status move values as 32-bit words.

// sgen writes values of one accumulator type into a function.
type sgen struct {
	m    *ptx.Module
	f    *ptx.Func
	sm   int
	t    dtype.DType
	comb Combine
	ew   *ewGen
}

func newSGen(m *ptx.Module, f *ptx.Func, sm int, comb Combine) *sgen {
	return &sgen{m: m, f: f, sm: sm, t: comb.Type, comb: comb, ew: exprLowering(m, f, sm, nil)}
}

// vt is the register type of a value.
func (g *sgen) vt() ptx.Type { return ewRT(g.t) }

func (g *sgen) reg() ptx.Reg { return g.f.Reg(g.vt()) }

// nwords is the number of 32-bit words of a value.
func (g *sgen) nwords() int {
	if g.t.Size() == 8 {
		return 2
	}
	return 1
}

// op returns a new register holding a ⊕ b (a the earlier operand): the expression, or
// the operator of the table.
func (g *sgen) op(a, b ptx.Reg) ptx.Reg {
	if g.comb.Expr != nil {
		c := &ewElem{ins: map[int]ptx.Reg{0: a, 1: b}, memo: map[expr.Node]ptx.Reg{}}
		return g.ew.eval(g.comb.Expr.Root, c)
	}
	return g.ew.combine(g.comb.Op, g.t, a, b)
}

// sel returns p ? a : b.
func (g *sgen) sel(p, a, b ptx.Reg) ptx.Reg {
	f := g.f
	d := g.reg()
	if g.t == dtype.Bool {
		f.Op("mov.pred", d, b)
		f.At(p).Op("mov.pred", d, a)
		return d
	}
	f.Selp(d, a, b, p)
	return d
}

// canonFirst returns v, or the canonical NaN in a new register if v is a NaN, where
// the scan makes the values that no combination produces canonical
// (Combine.canonFirst: the table's operators on floats); v itself otherwise. Two
// instructions (setp.nan, selp), no branch.
func (g *sgen) canonFirst(v ptx.Reg) ptx.Reg {
	if !g.comb.canonFirst() {
		return v
	}
	f := g.f
	d := g.reg()
	f.Selp(d, ewCanonNaN(g.t), v, f.Setp(ptx.NaN, v, v))
	return d
}

// words returns the value as 32-bit words (bool: 0 or 1).
func (g *sgen) words(v ptx.Reg) []ptx.Reg {
	f := g.f
	switch {
	case g.t == dtype.Bool:
		w := f.Reg(ptx.B32)
		f.Selp(w.As(ptx.U32), ptx.Int(1), ptx.Int(0), v)
		return []ptx.Reg{w}
	case g.nwords() == 2:
		w := f.Regs(ptx.B32, 2)
		f.Op("mov.b64", ptx.Vec(w), v)
		return w
	}
	w := f.Reg(ptx.B32)
	f.Op("mov.b32", w, v)
	return []ptx.Reg{w}
}

// value returns the value of words.
func (g *sgen) value(w []ptx.Reg) ptx.Reg {
	f := g.f
	switch {
	case g.t == dtype.Bool:
		return f.Setp(ptx.Ne, w[0].As(ptx.U32), ptx.Int(0))
	case len(w) == 2:
		v := g.reg()
		f.Op("mov.b64", v, ptx.Vec(w))
		return v
	}
	v := g.reg()
	f.Op("mov.b32", v, w[0])
	return v
}

// fromBits64 returns the value whose bits are the low bits of the 64-bit register b
// (narrow integers sign- or zero-extended as values are).
func (g *sgen) fromBits64(b ptx.Reg) ptx.Reg {
	f := g.f
	if g.nwords() == 2 {
		v := g.reg()
		f.Op("mov.b64", v, b)
		return v
	}
	lo := f.Reg(ptx.B32)
	f.Op("cvt.u32.u64", lo.As(ptx.U32), b.As(ptx.U64))
	if g.t == dtype.Bool {
		return f.Setp(ptx.Ne, lo.As(ptx.U32), ptx.Int(0))
	}
	v := g.value([]ptx.Reg{lo})
	g.ew.norm(v, g.t)
	return v
}

// shfl returns the value shuffled (mode up, down or idx, with lane operand b and the
// clamp c).
func (g *sgen) shfl(mode string, v ptx.Reg, b, c ptx.Operand) ptx.Reg {
	f := g.f
	w := g.words(v)
	out := make([]ptx.Reg, len(w))
	for i, x := range w {
		out[i] = f.Reg(ptx.B32)
		f.Shfl(mode, out[i], x, b, c, ptx.Uint(0xffffffff))
	}
	return g.value(out)
}

// shflPred shuffles a predicate.
func shflPred(f *ptx.Func, mode string, p ptx.Reg, b, c ptx.Operand) ptx.Reg {
	w := f.Reg(ptx.U32)
	f.Selp(w, ptx.Int(1), ptx.Int(0), p)
	o := f.Reg(ptx.U32)
	f.Shfl(mode, o, w, b, c, ptx.Uint(0xffffffff))
	return f.Setp(ptx.Ne, o, ptx.Int(0))
}

// combineHas returns (a ⊕ b with has flags): the result is b when a is absent, a when
// b is absent, and the flag is ha || hb. pa says whether a is present; hb whether b is.
func (g *sgen) combineHas(ha, a, hb, b ptx.Reg) (ptx.Reg, ptx.Reg) {
	f := g.f
	c := g.op(a, b)
	r := g.sel(hb, c, a) // b present: a⊕b, else a
	r = g.sel(ha, r, b)  // a absent: b
	h := f.Reg(ptx.Pred)
	f.Op("or.pred", h, ha, hb)
	return h, r
}

// loadValue loads one element of type t at a (ld.global.nc) as a value of type t.
func loadValue(f *ptx.Func, t dtype.DType, a ptx.Addr) ptx.Reg {
	if t == dtype.Bool {
		r := f.Reg(ptx.U32)
		f.Op("ld.global.nc.u8", r, a)
		return f.Setp(ptx.Ne, r, ptx.Int(0))
	}
	r := f.Reg(ewRT(t))
	f.Op("ld.global.nc"+ewMemSuffix(t), r, a)
	return r
}

// loadVector loads v consecutive elements of type t at a (aligned to v*size bytes)
// with one access, as values.
func loadVector(f *ptx.Func, t dtype.DType, v int, a ptx.Addr) []ptx.Reg {
	size := t.Size()
	if v == 1 {
		return []ptx.Reg{loadValue(f, t, a)}
	}
	if size >= 4 {
		vals := f.Regs(ewRT(t), v)
		f.Op(fmt.Sprintf("ld.global.nc.v%d%s", v, ewRT(t)), ptx.Vec(vals), a)
		return vals
	}
	bytes := v * size
	var ws []ptx.Reg
	switch bytes {
	case 2:
		ws = f.Regs(ptx.B32, 1)
		f.Op("ld.global.nc.u16", ws[0].As(ptx.U32), a)
	case 4:
		ws = f.Regs(ptx.B32, 1)
		f.Op("ld.global.nc.b32", ws[0], a)
	case 8:
		ws = f.Regs(ptx.B32, 2)
		f.Op("ld.global.nc.v2.b32", ptx.Vec(ws), a)
	case 16:
		ws = f.Regs(ptx.B32, 4)
		f.Op("ld.global.nc.v4.b32", ptx.Vec(ws), a)
	default:
		panic(fmt.Sprintf("kernel: vector load of %d bytes", bytes))
	}
	per := 4 / size
	vals := make([]ptx.Reg, 0, v)
	for _, w := range ws {
		for j := 0; j < per && len(vals) < v; j++ {
			vals = append(vals, extractValue(f, t, w, j))
		}
	}
	return vals
}

// extractValue returns element j of the packed little-endian word w.
func extractValue(f *ptx.Func, t dtype.DType, w ptx.Reg, j int) ptx.Reg {
	bits := 8 * t.Size()
	pos := j * bits
	if isHalfType(t) {
		return ptxUnpackHalves(f, []ptx.Reg{w}, 2)[j]
	}
	if t == dtype.Bool {
		m := f.Reg(ptx.U32)
		f.And(m, w.As(ptx.U32), ptx.Uint(0xff<<pos))
		return f.Setp(ptx.Ne, m, ptx.Int(0))
	}
	r := f.Reg(ewRT(t))
	if t.IsSigned() {
		f.Op("bfe.s32", r.As(ptx.S32), w.As(ptx.S32), ptx.Int(pos), ptx.Int(bits))
	} else {
		f.Op("bfe.u32", r.As(ptx.U32), w.As(ptx.U32), ptx.Int(pos), ptx.Int(bits))
	}
	return r
}

// storeValue stores the value v of type t at a (st.global).
func storeValue(f *ptx.Func, t dtype.DType, a ptx.Addr, v ptx.Reg) {
	if t == dtype.Bool {
		r := f.Reg(ptx.U32)
		f.Selp(r, ptx.Int(1), ptx.Int(0), v)
		v = r
	}
	f.Op("st.global"+ewMemSuffix(t), a, v)
}

// storeVector stores values (len a power of two, v*size <= 16, address aligned) with
// one access when the type is 4 or 8 bytes wide, else with scalar stores.
func storeVector(f *ptx.Func, t dtype.DType, a ptx.Addr, vals []ptx.Reg) {
	if len(vals) == 1 || t.Size() < 4 {
		for j, v := range vals {
			storeValue(f, t, ptx.Mem(a.Base, a.Off+int64(j*t.Size())), v)
		}
		return
	}
	f.St(ptx.Global, ptx.CacheDefault, ewRT(t), a, regsToOps(vals)...)
}

func regsToOps(rs []ptx.Reg) []ptx.Operand {
	out := make([]ptx.Operand, len(rs))
	for i, r := range rs {
		out[i] = r
	}
	return out
}

// vectorWidth returns the elements per access for a thread chunk of k elements of
// size bytes: the largest of 4, 2, 1 dividing k with at most 16 bytes, or 8 for 2-byte
// elements (16 bytes of halves).
func vectorWidth(k, size int) int {
	for _, v := range []int{8, 4, 2} {
		if k%v == 0 && v*size <= 16 && (v < 8 || size == 2) {
			return v
		}
	}
	return 1
}

// castValue converts the value x of type from to type to (expr's Cast).
func castValue(ew *ewGen, x ptx.Reg, from, to dtype.DType) ptx.Reg {
	if from == to {
		return x
	}
	return ew.cast(x, from, to)
}

// lowestSetBit returns the index of the lowest set bit of the .b32 register m (32 if
// m is 0).
func lowestSetBit(f *ptx.Func, m ptx.Reg) ptx.Reg {
	neg := f.Reg(ptx.S32)
	f.Neg(neg, m.As(ptx.S32))
	low := f.Reg(ptx.U32)
	f.And(low, m.As(ptx.U32), neg.As(ptx.U32))
	pos := f.Reg(ptx.U32)
	f.Op("bfind.u32", pos, low) // 0xffffffff when low is 0
	f.Op("min.u32", pos, pos, ptx.Int(32))
	return pos
}
