package ptx

import (
	"math"
)

// This file holds the small intermediate form the math library is written in. Each
// device math function is written once, as Go code that calls the methods of mb below.
// Two backends consume the result: lowerPTX (mathptx.go) appends PTX instructions to a
// Func, and the Go generator (gen_test.go) writes package gomath, the CPU mirrors. Both
// map every node to one IEEE operation with the same rounding, so the GPU and the CPU
// compute bit-identical results by construction.

// vtype is the type of an IR value.
type vtype uint8

const (
	tPred vtype = iota + 1
	tU32
	tU64
	tF32
	tF64
)

func (t vtype) ptx() Type {
	switch t {
	case tPred:
		return Pred
	case tU32:
		return U32
	case tU64:
		return U64
	case tF32:
		return F32
	case tF64:
		return F64
	}
	panic("bad vtype")
}

// opc is an IR operation.
type opc uint8

const (
	oArg      opc = iota + 1 // function argument imm
	oConst                   // constant with bits imm
	oVar                     // mutable variable, initialised from a[0]
	oSet                     // a[0] (a var) = a[1]
	oIf                      // if a[0] { then } else { els }
	oAdd                     // float or integer
	oSub                     //
	oMul                     // float; integer low half
	oFma                     // float
	oDiv                     // float .rn
	oSqrt                    // float .rn
	oNeg                     // float
	oAbs                     // float
	oRint                    // float: round to integral, ties to even (cvt.rni.fX.fX)
	oFloor                   // float: cvt.rmi.fX.fX
	oTrunc                   // float: cvt.rzi.fX.fX
	oMulHi                   // unsigned high half
	oMulWide                 // u32*u32 -> u64
	oAnd                     // integer or pred
	oOr                      //
	oXor                     //
	oNot                     //
	oShl                     // integer << u32
	oShr                     // logical >>
	oSar                     // arithmetic >>
	oCmp                     // setp; imm = cmpKind; t = operand type
	oSel                     // a[0] ? a[1] : a[2]
	oBits                    // float -> same-width unsigned bits
	oFromBits                // unsigned bits -> float
	oLo                      // u64 -> low u32
	oHi                      // u64 -> high u32
	oPack                    // (lo u32, hi u32) -> u64
	oZext                    // u32 -> u64
	oSext                    // s32 -> s64
	oCvtF                    // float <-> float (rn when narrowing)
	oCvtSI                   // signed integer (s32 in tU32 / s64 in tU64) -> float, rn
	oCvtFI                   // float -> s32 rounding to nearest even (cvt.rni.s32), saturating
	oLoad                    // table load: imm = table index, a[0] = u32 index
	oLoop                    // while: then computes the condition a[0]; els is the body
)

// cmpKind is a comparison. Signed variants compare integers as two's complement.
type cmpKind uint8

const (
	cEq cmpKind = iota + 1
	cNe
	cLt
	cLe
	cGt
	cGe
	cLtU // unordered (true if NaN) for floats
	cLeU
	cGtU
	cGeU
	cNeU
	cNaN
	cSLt // signed integer
	cSLe
	cSGt
	cSGe
)

var cmpPTX = map[cmpKind]string{cEq: "eq", cNe: "ne", cLt: "lt", cLe: "le", cGt: "gt", cGe: "ge",
	cLtU: "ltu", cLeU: "leu", cGtU: "gtu", cGeU: "geu", cNeU: "neu", cNaN: "nan",
	cSLt: "lt", cSLe: "le", cSGt: "gt", cSGe: "ge"}

// val is an IR value: an index into mb.vals (0 is invalid).
type val int32

type valInfo struct {
	t     vtype
	def   *node // defining node (nil for consts? no: consts have nodes too)
	isVar bool
}

type node struct {
	op   opc
	t    vtype // result type; for oCmp the operand type
	dst  val
	a    [3]val
	imm  uint64
	then []*node
	els  []*node
}

// mtable is a constant table the IR loads from (a .global array in PTX, a Go array).
type mtable struct {
	name string
	t    vtype
	data []uint64 // bit patterns
}

// mb builds the IR of one math function.
type mb struct {
	vals   []valInfo
	top    []*node
	cur    *[]*node
	args   []val
	ret    val
	tables []*mtable
	consts map[[2]uint64]val
}

func newMB() *mb {
	b := &mb{vals: make([]valInfo, 1), consts: map[[2]uint64]val{}}
	b.cur = &b.top
	return b
}

func (b *mb) newVal(t vtype) val {
	b.vals = append(b.vals, valInfo{t: t})
	return val(len(b.vals) - 1)
}

func (b *mb) emit(n *node) val {
	*b.cur = append(*b.cur, n)
	if n.dst != 0 {
		b.vals[n.dst].def = n
	}
	return n.dst
}

func (b *mb) typ(v val) vtype { return b.vals[v].t }

func (b *mb) arg(t vtype) val {
	v := b.newVal(t)
	b.emit(&node{op: oArg, t: t, dst: v, imm: uint64(len(b.args))})
	b.args = append(b.args, v)
	return v
}

// isConst reports whether v is a constant and returns its bits.
func (b *mb) isConst(v val) (uint64, bool) {
	n := b.vals[v].def
	if n != nil && n.op == oConst {
		return n.imm, true
	}
	return 0, false
}

// constant returns a constant of type t with bit pattern bits. Constants are hoisted
// to the top of the function so they are visible in every block.
func (b *mb) constant(t vtype, bits uint64) val {
	k := [2]uint64{uint64(t), bits}
	if v, ok := b.consts[k]; ok {
		return v
	}
	v := b.newVal(t)
	n := &node{op: oConst, t: t, dst: v, imm: bits}
	b.vals[v].def = n
	b.top = append([]*node{n}, b.top...)
	b.consts[k] = v
	return v
}

func (b *mb) f32(x float32) val { return b.constant(tF32, uint64(math.Float32bits(x))) }
func (b *mb) f64(x float64) val { return b.constant(tF64, math.Float64bits(x)) }
func (b *mb) u32(x uint32) val  { return b.constant(tU32, uint64(x)) }
func (b *mb) u64(x uint64) val  { return b.constant(tU64, x) }

// fc returns a float constant of type t (tF32 or tF64) with value x rounded to it.
func (b *mb) fc(t vtype, x float64) val {
	if t == tF32 {
		return b.f32(float32(x))
	}
	return b.f64(x)
}

func (b *mb) op1(o opc, t vtype, x val) val {
	return b.emit(&node{op: o, t: t, dst: b.newVal(t), a: [3]val{x}})
}

func (b *mb) op2(o opc, t vtype, x, y val) val {
	return b.emit(&node{op: o, t: t, dst: b.newVal(t), a: [3]val{x, y}})
}

func (b *mb) op3(o opc, t vtype, x, y, z val) val {
	return b.emit(&node{op: o, t: t, dst: b.newVal(t), a: [3]val{x, y, z}})
}

func (b *mb) same(x, y val) vtype {
	if b.typ(x) != b.typ(y) {
		panic("mathir: type mismatch")
	}
	return b.typ(x)
}

func (b *mb) add(x, y val) val    { return b.op2(oAdd, b.same(x, y), x, y) }
func (b *mb) sub(x, y val) val    { return b.op2(oSub, b.same(x, y), x, y) }
func (b *mb) mul(x, y val) val    { return b.op2(oMul, b.same(x, y), x, y) }
func (b *mb) fma(x, y, z val) val { b.same(x, y); return b.op3(oFma, b.same(y, z), x, y, z) }
func (b *mb) div(x, y val) val    { return b.op2(oDiv, b.same(x, y), x, y) }
func (b *mb) sqrt(x val) val      { return b.op1(oSqrt, b.typ(x), x) }
func (b *mb) neg(x val) val       { return b.op1(oNeg, b.typ(x), x) }
func (b *mb) abs(x val) val       { return b.op1(oAbs, b.typ(x), x) }
func (b *mb) rint(x val) val      { return b.op1(oRint, b.typ(x), x) }
func (b *mb) floor(x val) val     { return b.op1(oFloor, b.typ(x), x) }
func (b *mb) trunc(x val) val     { return b.op1(oTrunc, b.typ(x), x) }
func (b *mb) mulhi(x, y val) val  { return b.op2(oMulHi, b.same(x, y), x, y) }
func (b *mb) mulwide(x, y val) val {
	b.same(x, y)
	return b.op2(oMulWide, tU64, x, y)
}
func (b *mb) and(x, y val) val { return b.op2(oAnd, b.same(x, y), x, y) }
func (b *mb) or(x, y val) val  { return b.op2(oOr, b.same(x, y), x, y) }
func (b *mb) xor(x, y val) val { return b.op2(oXor, b.same(x, y), x, y) }
func (b *mb) not(x val) val    { return b.op1(oNot, b.typ(x), x) }
func (b *mb) shl(x, n val) val { return b.op2(oShl, b.typ(x), x, b.toU32(n)) }
func (b *mb) shr(x, n val) val { return b.op2(oShr, b.typ(x), x, b.toU32(n)) }
func (b *mb) sar(x, n val) val { return b.op2(oSar, b.typ(x), x, b.toU32(n)) }

func (b *mb) toU32(n val) val {
	if b.typ(n) != tU32 {
		panic("mathir: shift count must be u32")
	}
	return n
}

func (b *mb) cmp(k cmpKind, x, y val) val {
	t := b.same(x, y)
	if k >= cLtU && k <= cNaN && t != tF32 && t != tF64 {
		panic("mathir: unordered comparison of integers")
	}
	if k >= cSLt && (t == tF32 || t == tF64) {
		panic("mathir: signed integer comparison of floats")
	}
	return b.emit(&node{op: oCmp, t: t, dst: b.newVal(tPred), a: [3]val{x, y}, imm: uint64(k)})
}

func (b *mb) sel(p, x, y val) val {
	if b.typ(p) != tPred {
		panic("mathir: sel needs a predicate")
	}
	return b.op3(oSel, b.same(x, y), p, x, y)
}

func (b *mb) bits(x val) val {
	if b.typ(x) == tF32 {
		return b.op1(oBits, tU32, x)
	}
	return b.op1(oBits, tU64, x)
}

func (b *mb) fromBits(x val) val {
	if b.typ(x) == tU32 {
		return b.op1(oFromBits, tF32, x)
	}
	return b.op1(oFromBits, tF64, x)
}

func (b *mb) lo(x val) val      { return b.op1(oLo, tU32, x) }
func (b *mb) hi(x val) val      { return b.op1(oHi, tU32, x) }
func (b *mb) pack(l, h val) val { return b.op2(oPack, tU64, l, h) }
func (b *mb) zext(x val) val    { return b.op1(oZext, tU64, x) }
func (b *mb) sext(x val) val    { return b.op1(oSext, tU64, x) }

// cvtF converts between f32 and f64 (rounding to nearest when narrowing).
func (b *mb) cvtF(x val, t vtype) val { return b.op1(oCvtF, t, x) }

// cvtSI converts a signed integer (u32 holding an s32, or u64 holding an s64) to float t.
func (b *mb) cvtSI(x val, t vtype) val { return b.op1(oCvtSI, t, x) }

// cvtFI converts a float to s32 (in a u32), rounding to nearest even, saturating.
func (b *mb) cvtFI(x val) val { return b.op1(oCvtFI, tU32, x) }

// variable returns a new mutable variable initialised to init.
func (b *mb) variable(init val) val {
	v := b.newVal(b.typ(init))
	b.vals[v].isVar = true
	b.emit(&node{op: oVar, t: b.typ(init), dst: v, a: [3]val{init}})
	return v
}

// set assigns x to the variable v.
func (b *mb) set(v, x val) {
	if !b.vals[v].isVar {
		panic("mathir: set of a non-variable")
	}
	b.same(v, x)
	b.emit(&node{op: oSet, a: [3]val{v, x}})
}

// ifElse runs then when p is true and els (may be nil) otherwise. Values made inside
// a block are visible only there; communicate through variables.
func (b *mb) ifElse(p val, then, els func()) {
	n := &node{op: oIf, a: [3]val{p}}
	saved := b.cur
	b.cur = &n.then
	then()
	if els != nil {
		b.cur = &n.els
		els()
	}
	b.cur = saved
	b.emit(n)
}

func (b *mb) ifThen(p val, then func()) { b.ifElse(p, then, nil) }

// loop runs body while the predicate cond returns is true; cond is evaluated before
// every iteration, and values it makes are visible in body. State lives in variables.
func (b *mb) loop(cond func() val, body func()) {
	n := &node{op: oLoop}
	saved := b.cur
	b.cur = &n.then
	n.a[0] = cond()
	b.cur = &n.els
	body()
	b.cur = saved
	b.emit(n)
}

// table registers a constant table and returns its index for load.
func (b *mb) table(name string, t vtype, data []uint64) uint64 {
	for i, tb := range b.tables {
		if tb.name == name {
			return uint64(i)
		}
	}
	b.tables = append(b.tables, &mtable{name: name, t: t, data: data})
	return uint64(len(b.tables) - 1)
}

// load returns table[idx] (idx a u32).
func (b *mb) load(tbl uint64, idx val) val {
	t := b.tables[tbl].t
	return b.emit(&node{op: oLoad, t: t, dst: b.newVal(t), a: [3]val{b.toU32(idx)}, imm: tbl})
}

// finish sets the result and removes dead code.
func (b *mb) finish(ret val) *mb {
	b.ret = ret
	b.dce()
	return b
}

// dce removes nodes whose results are never used, to a fixed point.
func (b *mb) dce() {
	for {
		uses := make([]int, len(b.vals))
		uses[b.ret]++
		var count func(ns []*node)
		count = func(ns []*node) {
			for _, n := range ns {
				for _, a := range n.a {
					if a != 0 && !(n.op == oSet && a == n.a[0]) {
						uses[a]++
					}
				}
				count(n.then)
				count(n.els)
			}
		}
		count(b.top)
		changed := false
		var sweep func(ns []*node) []*node
		sweep = func(ns []*node) []*node {
			out := ns[:0]
			for _, n := range ns {
				switch {
				case n.op == oArg:
				case n.op == oSet:
					if uses[n.a[0]] == 0 {
						changed = true
						continue
					}
				case n.op == oIf:
					n.then = sweep(n.then)
					n.els = sweep(n.els)
					if len(n.then) == 0 && len(n.els) == 0 {
						changed = true
						continue
					}
				case n.op == oLoop:
					n.then = sweep(n.then)
					n.els = sweep(n.els)
					if len(n.els) == 0 {
						changed = true
						continue
					}
				case n.dst != 0 && uses[n.dst] == 0:
					changed = true
					continue
				}
				out = append(out, n)
			}
			return out
		}
		b.top = sweep(b.top)
		if !changed {
			return
		}
	}
}

// fbits returns the bits of x rounded to the float type t.
func fbits(t vtype, x float64) uint64 {
	if t == tF32 {
		return uint64(math.Float32bits(float32(x)))
	}
	return math.Float64bits(x)
}
