package ptx

import (
	"fmt"
	"strconv"
)

// SReg is a special register (%tid.x, %laneid ...), usable as an operand of mov.
type SReg string

func (s SReg) appendTo(b []byte) []byte { return append(b, s...) }

// Special registers (PTX ISA "Special Registers"). All are .u32 except Clock64 and
// GlobalTimer (.u64).
const (
	TidX        SReg = "%tid.x"
	TidY        SReg = "%tid.y"
	TidZ        SReg = "%tid.z"
	NtidX       SReg = "%ntid.x"
	NtidY       SReg = "%ntid.y"
	NtidZ       SReg = "%ntid.z"
	CtaidX      SReg = "%ctaid.x"
	CtaidY      SReg = "%ctaid.y"
	CtaidZ      SReg = "%ctaid.z"
	NctaidX     SReg = "%nctaid.x"
	NctaidY     SReg = "%nctaid.y"
	NctaidZ     SReg = "%nctaid.z"
	LaneID      SReg = "%laneid"
	WarpID      SReg = "%warpid"
	NWarpID     SReg = "%nwarpid"
	SMID        SReg = "%smid"
	NSMID       SReg = "%nsmid"
	LanemaskLt  SReg = "%lanemask_lt"
	LanemaskLe  SReg = "%lanemask_le"
	LanemaskEq  SReg = "%lanemask_eq"
	LanemaskGe  SReg = "%lanemask_ge"
	LanemaskGt  SReg = "%lanemask_gt"
	Clock       SReg = "%clock"
	Clock64     SReg = "%clock64"
	GlobalTimer SReg = "%globaltimer"
)

// Special returns a new register holding the special register s.
func (f *Func) Special(s SReg) Reg {
	t := U32
	if s == Clock64 || s == GlobalTimer {
		t = U64
	}
	r := f.Reg(t)
	f.Op("mov"+t.String(), r, s)
	return r
}

// opType is the type suffix an arithmetic helper uses for registers of type t:
// bit types become unsigned (add.u32), the others are themselves.
func opType(t Type) string {
	if t.IsBits() {
		return t.Unsigned().String()
	}
	return t.String()
}

// typeOf returns the type of an operand that must be a register.
func typeOf(o Operand, what string) Type {
	r, ok := o.(Reg)
	if !ok {
		panic("ptx: " + what + " needs a register operand to infer its type")
	}
	return r.t
}

// Mov appends "mov.t d, src" with t the type of d.
func (f *Func) Mov(d Reg, src Operand) {
	t := d.t
	if t != Pred && t != F32 && t != F64 {
		t = t.Bit()
	}
	f.Op("mov"+t.String(), d, src)
}

// arith appends "name[.rn].type d, a, b..." where floats get round-to-nearest, so
// ptxas never contracts a mul and an add into an fma behind our back.
func (f *Func) arith(name string, d Reg, args ...Operand) {
	rn := ""
	if d.t == F32 || d.t == F64 {
		rn = ".rn"
	}
	f.Op(name+rn+opType(d.t), append([]Operand{d}, args...)...)
}

// Add appends d = a + b (add.rn for floats).
func (f *Func) Add(d Reg, a, b Operand) { f.arith("add", d, a, b) }

// Sub appends d = a - b (sub.rn for floats).
func (f *Func) Sub(d Reg, a, b Operand) { f.arith("sub", d, a, b) }

// Mul appends d = a * b: mul.rn for floats, mul.lo (the low half) for integers.
func (f *Func) Mul(d Reg, a, b Operand) {
	if d.t.IsFloat() {
		f.arith("mul", d, a, b)
		return
	}
	f.Op("mul.lo"+opType(d.t), d, a, b)
}

// MulHi appends d = the high half of the product a*b (integers).
func (f *Func) MulHi(d Reg, a, b Operand) { f.Op("mul.hi"+opType(d.t), d, a, b) }

// MulWide appends d = a * b where a and b are 32-bit (or 16-bit) and d twice as wide:
// mul.wide.u32 or mul.wide.s32 depending on the type of a.
func (f *Func) MulWide(d Reg, a Reg, b Operand) { f.Op("mul.wide"+opType(a.t), d, a, b) }

// Fma appends d = a*b + c with one rounding (fma.rn) for floats; mad.lo for integers.
func (f *Func) Fma(d Reg, a, b, c Operand) {
	if d.t.IsFloat() {
		f.arith("fma", d, a, b, c)
		return
	}
	f.Op("mad.lo"+opType(d.t), d, a, b, c)
}

// Div appends d = a / b: div.rn (IEEE, correctly rounded) for floats, truncating
// integer division otherwise.
func (f *Func) Div(d Reg, a, b Operand) { f.arith("div", d, a, b) }

// Rem appends d = a % b (integers; the sign of a, as in Go).
func (f *Func) Rem(d Reg, a, b Operand) { f.Op("rem"+opType(d.t), d, a, b) }

// Sqrt appends d = sqrt(a), correctly rounded (sqrt.rn).
func (f *Func) Sqrt(d Reg, a Operand) { f.Op("sqrt.rn"+d.t.String(), d, a) }

// Neg appends d = -a.
func (f *Func) Neg(d Reg, a Operand) {
	t := d.t
	if t.IsUnsigned() || t.IsBits() {
		t = signedOf(t)
	}
	f.Op("neg"+t.String(), d, a)
}

// Abs appends d = |a|.
func (f *Func) Abs(d Reg, a Operand) {
	t := d.t
	if t.IsUnsigned() || t.IsBits() {
		t = signedOf(t)
	}
	f.Op("abs"+t.String(), d, a)
}

func signedOf(t Type) Type {
	switch t.Bits() {
	case 16:
		return S16
	case 32:
		return S32
	case 64:
		return S64
	}
	return t
}

// Min appends d = min(a, b). For floats PTX returns the non-NaN operand when one is NaN.
func (f *Func) Min(d Reg, a, b Operand) { f.Op("min"+opType(d.t), d, a, b) }

// Max appends d = max(a, b). For floats PTX returns the non-NaN operand when one is NaN.
func (f *Func) Max(d Reg, a, b Operand) { f.Op("max"+opType(d.t), d, a, b) }

func bitOp(t Type) string {
	if t == Pred {
		return ".pred"
	}
	return t.Bit().String()
}

// And appends d = a & b (and.pred for predicates).
func (f *Func) And(d Reg, a, b Operand) { f.Op("and"+bitOp(d.t), d, a, b) }

// Or appends d = a | b.
func (f *Func) Or(d Reg, a, b Operand) { f.Op("or"+bitOp(d.t), d, a, b) }

// Xor appends d = a ^ b.
func (f *Func) Xor(d Reg, a, b Operand) { f.Op("xor"+bitOp(d.t), d, a, b) }

// Not appends d = ^a (not.pred for predicates).
func (f *Func) Not(d Reg, a Operand) { f.Op("not"+bitOp(d.t), d, a) }

// Shl appends d = a << n (n is a .u32 operand; counts past the width give 0).
func (f *Func) Shl(d Reg, a, n Operand) { f.Op("shl"+d.t.Bit().String(), d, a, n) }

// Shr appends d = a >> n: arithmetic for signed d, logical otherwise.
func (f *Func) Shr(d Reg, a, n Operand) {
	t := d.t
	if t.IsBits() {
		t = t.Unsigned()
	}
	f.Op("shr"+t.String(), d, a, n)
}

// Cmp is a comparison operator of setp. The "u" forms are true when an operand is NaN.
type Cmp string

// Comparison operators. Lo/Ls/Hi/Hs are the unsigned names PTX also accepts.
const (
	Eq  Cmp = "eq"
	Ne  Cmp = "ne"
	Lt  Cmp = "lt"
	Le  Cmp = "le"
	Gt  Cmp = "gt"
	Ge  Cmp = "ge"
	Equ Cmp = "equ"
	Neu Cmp = "neu"
	Ltu Cmp = "ltu"
	Leu Cmp = "leu"
	Gtu Cmp = "gtu"
	Geu Cmp = "geu"
	Num Cmp = "num"
	NaN Cmp = "nan"
)

// Setp returns a new predicate p = a cmp b, comparing as a's type.
func (f *Func) Setp(cmp Cmp, a Reg, b Operand) Reg {
	p := f.Reg(Pred)
	f.Op("setp."+string(cmp)+opType(a.t), p, a, b)
	return p
}

// Selp appends d = p ? a : b.
func (f *Func) Selp(d Reg, a, b Operand, p Reg) {
	f.Op("selp"+opType(d.t), d, a, b, p)
}

// Cvt appends a conversion d = src with the rounding C and Go use: float to narrower
// float and integer to float round to nearest even (.rn), float to integer truncates
// toward zero (.rzi, saturating; NaN gives 0), integer to integer truncates or extends
// (sign-extends from a signed source). Predicates convert to 0/1 with selp; a value
// converts to a predicate as value != 0.
func (f *Func) Cvt(d, src Reg) {
	dt, st := d.t, src.t
	switch {
	case dt == st:
		f.Mov(d, src)
		return
	case st == Pred:
		if dt == F32 {
			f.Selp(d, ImmF32(1), ImmF32(0), src)
		} else if dt == F64 {
			f.Selp(d, ImmF64(1), ImmF64(0), src)
		} else if dt == F16 || dt == BF16 {
			one := 0x3C00
			if dt == BF16 {
				one = 0x3F80
			}
			f.Selp(d.As(B16), Uint(one), Uint(0), src)
		} else {
			f.Selp(d, Int(1), Int(0), src)
		}
		return
	case dt == Pred:
		switch {
		case st == F16 || st == BF16:
			// nonzero unless +0 or -0: clear the sign bit.
			t := f.Reg(B16)
			f.Op("and.b16", t, src, Uint(0x7FFF))
			f.Op("setp.ne.u16", d, t, Int(0))
		case st.IsFloat():
			f.Op("setp.neu"+st.String(), d, src, zeroImm(st))
		default:
			f.Op("setp.ne"+opType(st), d, src, Int(0))
		}
		return
	}
	var rnd string
	switch {
	case dt.IsFloat() && st.IsFloat():
		if dt.Bits() < st.Bits() {
			rnd = ".rn"
		}
	case dt.IsFloat():
		rnd = ".rn"
	case st.IsFloat():
		rnd = ".rzi"
	}
	f.CvtRound(d, src, rnd)
}

func zeroImm(t Type) Operand {
	if t == F64 {
		return ImmF64(0)
	}
	return ImmF32(0)
}

// CvtRound appends "cvt<rnd>.dt.st d, src" with an explicit rounding modifier
// (".rn", ".rz", ".rm", ".rp", ".rni", ".rzi", ".rmi", ".rpi" or "").
func (f *Func) CvtRound(d, src Reg, rnd string) {
	dt, st := d.t, src.t
	if dt.IsBits() {
		dt = dt.Unsigned()
	}
	if st.IsBits() {
		st = st.Unsigned()
	}
	f.Op("cvt"+rnd+dt.String()+st.String(), d, src)
}

// Ld appends a load of len(dst) consecutive elements of type t (1, 2 or 4; .v2/.v4 for
// more than one) from addr in the given space, with a cache operator:
// "ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd4];". The address of a vector load
// must be aligned to its full size.
func (f *Func) Ld(space Space, cache Cache, t Type, addr Addr, dst ...Reg) {
	op := "ld" + space.String() + cache.op()
	if cache&NC != 0 {
		op += ".nc"
	}
	op += vecSuffix(len(dst)) + t.String()
	if len(dst) == 1 {
		f.Op(op, dst[0], addr)
	} else {
		f.Op(op, Vec(dst), addr)
	}
}

// St appends a store of len(src) consecutive elements of type t to addr:
// "st.global.cs.v4.f32 [%rd5], {%f5, %f6, %f7, %f8};".
func (f *Func) St(space Space, cache Cache, t Type, addr Addr, src ...Operand) {
	op := "st" + space.String() + cache.op() + vecSuffix(len(src)) + t.String()
	if len(src) == 1 {
		f.Op(op, addr, src[0])
		return
	}
	b := append(f.body, '\t')
	b = append(b, op...)
	b = append(b, ' ')
	b = addr.appendTo(b)
	b = append(b, ", {"...)
	for i, s := range src {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = s.appendTo(b)
	}
	f.body = append(b, "};\n"...)
}

func vecSuffix(n int) string {
	switch n {
	case 1:
		return ""
	case 2:
		return ".v2"
	case 4:
		return ".v4"
	case 8:
		return ".v8"
	}
	panic("ptx: vector width " + strconv.Itoa(n))
}

// LdParam loads parameter i of f into a new register of the parameter's type.
func (f *Func) LdParam(i int) Reg {
	p := f.params[i]
	t := p.Type
	if t == Pred {
		t = U32
	}
	r := f.Reg(t)
	f.Op("ld.param"+t.String(), r, Addr{Base: Sym(p.Name)})
	return r
}

// Return stores vals into f's return parameters (a device function) and appends ret.
func (f *Func) Return(vals ...Operand) {
	if len(vals) != len(f.rets) {
		panic(fmt.Sprintf("ptx: %s returns %d values, got %d", f.name, len(f.rets), len(vals)))
	}
	for i, v := range vals {
		f.Op("st.param"+f.rets[i].Type.String(), Addr{Base: Sym(f.rets[i].Name)}, v)
	}
	f.Ret()
}

// Call appends a call of the device function callee with arguments args, storing its
// return values in rets, in a scope block with the .param declarations PTX needs.
func (f *Func) Call(callee *Func, rets []Reg, args ...Operand) {
	if len(args) != len(callee.params) || len(rets) != len(callee.rets) {
		panic("ptx: call of " + callee.name + ": wrong number of arguments or results")
	}
	b := append(f.body, "\t{\n"...)
	var argNames, retNames []byte
	for i, a := range args {
		p := callee.params[i]
		name := "param" + strconv.Itoa(i)
		b = append(b, "\t"+(Param{Name: name, Type: p.Type, Align: p.Align, Count: p.Count}).decl()+";\n"...)
		b = append(b, "\tst.param"+p.Type.String()+" ["+name+"], "...)
		b = a.appendTo(b)
		b = append(b, ";\n"...)
		if i > 0 {
			argNames = append(argNames, ", "...)
		}
		argNames = append(argNames, name...)
	}
	for i, p := range callee.rets {
		name := "retval" + strconv.Itoa(i)
		b = append(b, "\t"+(Param{Name: name, Type: p.Type}).decl()+";\n"...)
		if i > 0 {
			retNames = append(retNames, ", "...)
		}
		retNames = append(retNames, name...)
	}
	b = append(b, "\tcall.uni "...)
	if len(rets) > 0 {
		b = append(b, '(')
		b = append(b, retNames...)
		b = append(b, "), "...)
	}
	b = append(b, callee.name...)
	b = append(b, ", ("...)
	b = append(b, argNames...)
	b = append(b, ");\n"...)
	for i, r := range rets {
		b = append(b, "\tld.param"+callee.rets[i].Type.String()+" "...)
		b = r.appendTo(b)
		b = append(b, ", [retval"+strconv.Itoa(i)+"];\n"...)
	}
	f.body = append(b, "\t}\n"...)
}

// Atom appends an atomic read-modify-write returning the old value:
// "atom.global.add.f32 d, [addr], b" (op is add, min, max, inc, dec, and, or, xor,
// exch or cas; cas takes two operands: compare and new value). sem and scope may be
// empty or ".relaxed"/".acquire"/".release"/".acq_rel" and ".cta"/".gpu"/".sys".
func (f *Func) Atom(sem, scope string, space Space, op string, t Type, d Reg, addr Addr, b ...Operand) {
	args := append([]Operand{d, addr}, b...)
	f.Op("atom"+sem+scope+space.String()+"."+op+atomType(op, t), args...)
}

// Red appends a reduction to memory without result: "red.global.add.f32 [addr], b".
func (f *Func) Red(sem, scope string, space Space, op string, t Type, addr Addr, b Operand) {
	f.Op("red"+sem+scope+space.String()+"."+op+atomType(op, t), addr, b)
}

func atomType(op string, t Type) string {
	switch op {
	case "and", "or", "xor", "exch", "cas":
		return t.Bit().String()
	}
	if t.IsBits() {
		return t.Unsigned().String()
	}
	return t.String()
}

// Shfl appends a warp shuffle "shfl.sync.mode.b32 d, a, b, c, membermask;" (mode is
// up, down, bfly or idx; c packs the clamp and segment mask, 31 for a full warp).
// d and a must be 32-bit registers.
func (f *Func) Shfl(mode string, d, a Reg, b, c, mask Operand) {
	f.Op("shfl.sync."+mode+".b32", d, a, b, c, mask)
}

// Vote appends "vote.sync.mode.pred d, p, membermask;" (mode all, any, uni) or, for
// mode "ballot", "vote.sync.ballot.b32 d, p, membermask;".
func (f *Func) Vote(mode string, d, p Reg, mask Operand) {
	if mode == "ballot" {
		f.Op("vote.sync.ballot.b32", d, p, mask)
		return
	}
	f.Op("vote.sync."+mode+".pred", d, p, mask)
}

// BarSync appends "bar.sync id;": wait until all threads of the block arrive.
func (f *Func) BarSync(id int) { f.Op("bar.sync", Int(id)) }

// BarSyncCount appends "bar.sync id, count;" for a barrier over count threads.
func (f *Func) BarSyncCount(id int, count Operand) { f.Op("bar.sync", Int(id), count) }

// Membar appends "membar.level;" (level: cta, gl, sys).
func (f *Func) Membar(level string) { f.Op("membar." + level) }

// Fence appends "fence.sem.scope;" (sem: sc, acq_rel; scope: cta, cluster, gpu, sys).
func (f *Func) Fence(sem, scope string) { f.Op("fence." + sem + "." + scope) }

// Cvta appends "cvta.space.u64 d, a": a space-relative address to a generic one.
func (f *Func) Cvta(space Space, d Reg, a Operand) { f.Op("cvta"+space.String()+".u64", d, a) }

// CvtaTo appends "cvta.to.space.u64 d, a": a generic address to a space-relative one
// (cvta.to.global on a kernel's pointer parameters is what nvcc emits).
func (f *Func) CvtaTo(space Space, d Reg, a Operand) {
	f.Op("cvta.to"+space.String()+".u64", d, a)
}
