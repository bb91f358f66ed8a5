package kernel

import (
	"fmt"
	"math"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/ptx"
)

// Lowering of the expression IR to PTX, one element at a time, with package expr's
// semantics (doc.go; eval.go and kernels.go define them bit for bit).
//
// Values in registers:
//   - Bool: a predicate;
//   - Int8, Int16, Int32: a 32-bit register, sign-extended (S32); Uint8, Uint16, Uint32:
//     zero-extended (U32). Arithmetic runs on 32 bits and narrow results are truncated
//     and extended again (norm), so a register always holds the exact value;
//   - Int64, Uint64: S64, U64; Float32, Float64: F32, F64;
//   - Float16, BFloat16: their bits in a 16-bit register (B16). The IR never computes on
//     them: Cast converts to and from Float32 (exactly one rounding), Select moves bits.
//
// Float arithmetic uses the .rn forms (never contracted into fma), no .ftz (subnormals
// are kept), and bit operations where expr flips or copies sign bits (neg, abs,
// copysign), so that NaN payloads and -0 behave as in Go.

// ewRT returns the register type of a value of element type t.
func ewRT(t dtype.DType) ptx.Type {
	switch t {
	case dtype.Bool:
		return ptx.Pred
	case dtype.Int8, dtype.Int16, dtype.Int32:
		return ptx.S32
	case dtype.Uint8, dtype.Uint16, dtype.Uint32:
		return ptx.U32
	case dtype.Int64:
		return ptx.S64
	case dtype.Uint64:
		return ptx.U64
	case dtype.Float16, dtype.BFloat16:
		return ptx.B16
	case dtype.Float32:
		return ptx.F32
	case dtype.Float64:
		return ptx.F64
	}
	panic(fmt.Sprintf("kernel: no register type for %v", t))
}

func ewIsFloat(t dtype.DType) bool { return t == dtype.Float32 || t == dtype.Float64 }
func ewIsHalf(t dtype.DType) bool  { return t == dtype.Float16 || t == dtype.BFloat16 }
func ewIs64(t dtype.DType) bool    { return t.Size() == 8 }

// ewBitType is the .bN type of a float register type (for and/or/xor on its bits).
func ewBitType(t dtype.DType) string {
	if t == dtype.Float64 {
		return ".b64"
	}
	return ".b32"
}

func ewSignMask(t dtype.DType) ptx.Operand {
	if t == dtype.Float64 {
		return ptx.Uint(1 << 63)
	}
	return ptx.Uint(1 << 31)
}

func ewAbsMask(t dtype.DType) ptx.Operand {
	if t == dtype.Float64 {
		return ptx.Uint(1<<63 - 1)
	}
	return ptx.Uint(1<<31 - 1)
}

func ewFImm(t dtype.DType, x float64) ptx.Operand {
	if t == dtype.Float64 {
		return ptx.ImmF64(x)
	}
	return ptx.ImmF32(float32(x))
}

// ewIntRange returns the smallest and largest value of integer type t.
func ewIntRange(t dtype.DType) (lo, hi int64) {
	if t.IsUnsigned() {
		return 0, int64(uint64(1)<<t.Bits() - 1)
	}
	return -1 << (t.Bits() - 1), 1<<(t.Bits()-1) - 1
}

func (g *ewGen) reg(t dtype.DType) ptx.Reg { return g.f.Reg(ewRT(t)) }

// norm truncates a narrow integer in its 32-bit register to t's width and extends it
// again, in place.
func (g *ewGen) norm(r ptx.Reg, t dtype.DType) {
	switch t {
	case dtype.Int8:
		g.f.Op("cvt.s32.s8", r, r)
	case dtype.Int16:
		g.f.Op("cvt.s32.s16", r, r)
	case dtype.Uint8:
		g.f.Op("and.b32", r, r, ptx.Uint(0xff))
	case dtype.Uint16:
		g.f.Op("and.b32", r, r, ptx.Uint(0xffff))
	}
}

// ---- memory ----

// ewMemSuffix is the type of a scalar load or store of an element of type t.
func ewMemSuffix(t dtype.DType) string {
	switch t {
	case dtype.Bool, dtype.Uint8:
		return ".u8"
	case dtype.Int8:
		return ".s8"
	case dtype.Int16:
		return ".s16"
	case dtype.Uint16:
		return ".u16"
	case dtype.Float16, dtype.BFloat16:
		return ".b16"
	}
	return ewRT(t).String()
}

// ldElem loads one element of type t (ld.global.nc when nc) as a value.
func (g *ewGen) ldElem(t dtype.DType, a ptx.Addr, nc bool) ptx.Reg {
	f := g.f
	op := "ld.global"
	if nc {
		op += ".nc"
	}
	if t == dtype.Bool {
		r := f.Reg(ptx.U32)
		f.Op(op+".u8", r, a)
		return f.Setp(ptx.Ne, r, ptx.Int(0))
	}
	r := g.reg(t)
	f.Op(op+ewMemSuffix(t), r, a)
	return r
}

// stElem stores the value v of type t.
func (g *ewGen) stElem(t dtype.DType, a ptx.Addr, v ptx.Reg) {
	f := g.f
	if t == dtype.Bool {
		r := f.Reg(ptx.U32)
		f.Selp(r, ptx.Int(1), ptx.Int(0), v)
		v = r
	}
	f.Op("st.global"+ewMemSuffix(t), a, v)
}

// words returns the registers and access type moving b bytes (2, 4, 8 or 16) as packed
// 32-bit words: one .u16 (in a 32-bit register), one .b32, .v2.b32 or .v4.b32.
func (g *ewGen) words(b int) ([]ptx.Reg, string) {
	switch b {
	case 2:
		return g.f.Regs(ptx.B32, 1), ".u16"
	case 4:
		return g.f.Regs(ptx.B32, 1), ".b32"
	case 8:
		return g.f.Regs(ptx.B32, 2), ".v2.b32"
	case 16:
		return g.f.Regs(ptx.B32, 4), ".v4.b32"
	}
	panic(fmt.Sprintf("kernel: vector of %d bytes", b))
}

func ewVecOperand(rs []ptx.Reg) ptx.Operand {
	if len(rs) == 1 {
		return rs[0]
	}
	return ptx.Vec(rs)
}

// ldVec loads V consecutive elements of type t with one access and returns their values.
func (g *ewGen) ldVec(t dtype.DType, V int, a ptx.Addr) []ptx.Reg {
	f := g.f
	size := t.Size()
	if size >= 4 {
		vals := f.Regs(ewRT(t), V)
		suffix := ewRT(t).String()
		if V > 1 {
			suffix = fmt.Sprintf(".v%d%s", V, suffix)
		}
		f.Op("ld.global.nc"+suffix, ewVecOperand(vals), a)
		return vals
	}
	ws, suffix := g.words(V * size)
	f.Op("ld.global.nc"+suffix, ewVecOperand(ws), a)
	vals := make([]ptx.Reg, 0, V)
	per := 4 / size
	for _, w := range ws {
		for j := 0; j < per && len(vals) < V; j++ {
			vals = append(vals, g.extract(t, w, j))
		}
	}
	return vals
}

// extract returns element j of the packed word w (elements of t's size, little-endian).
func (g *ewGen) extract(t dtype.DType, w ptx.Reg, j int) ptx.Reg {
	f := g.f
	bitsz := 8 * t.Size()
	pos := j * bitsz
	switch t {
	case dtype.Bool:
		m := f.Reg(ptx.U32)
		f.And(m, w, ptx.Uint(0xff<<pos))
		return f.Setp(ptx.Ne, m, ptx.Int(0))
	case dtype.Float16, dtype.BFloat16:
		h := f.Regs(ptx.B16, 2)
		f.Op("mov.b32", ptx.Vec(h), w)
		return h[j]
	}
	r := g.reg(t)
	if t.IsSigned() {
		if pos+bitsz == 32 {
			f.Op("shr.s32", r, w, ptx.Int(pos))
		} else {
			f.Op("bfe.s32", r, w, ptx.Int(pos), ptx.Int(bitsz))
		}
		return r
	}
	switch {
	case pos == 0:
		f.And(r, w, ptx.Uint(uint64(1)<<bitsz-1))
	case pos+bitsz == 32:
		f.Op("shr.u32", r, w, ptx.Int(pos))
	default:
		f.Op("bfe.u32", r, w, ptx.Int(pos), ptx.Int(bitsz))
	}
	return r
}

// pack returns the registers a vector store of the values vals of type t stores: the
// values themselves for 4- and 8-byte types, packed 32-bit words otherwise.
func (g *ewGen) pack(t dtype.DType, vals []ptx.Reg) []ptx.Reg {
	f := g.f
	switch t.Size() {
	case 4, 8:
		return vals
	case 2:
		var ws []ptx.Reg
		for j := 0; j < len(vals); j += 2 {
			w := f.Reg(ptx.B32)
			switch {
			case j+1 == len(vals):
				w = vals[j]
				if ewIsHalf(t) {
					w = f.Reg(ptx.B32)
					f.Op("cvt.u32.u16", w, vals[j])
				}
			case ewIsHalf(t):
				f.Op("mov.b32", w, ptx.Vec{vals[j], vals[j+1]})
			default:
				f.Op("prmt.b32", w, vals[j], vals[j+1], ptx.Uint(0x5410))
			}
			ws = append(ws, w)
		}
		return ws
	}
	bytes := make([]ptx.Reg, len(vals))
	for j, v := range vals {
		if t == dtype.Bool {
			r := f.Reg(ptx.U32)
			f.Selp(r, ptx.Int(1), ptx.Int(0), v)
			v = r
		}
		bytes[j] = v
	}
	var ws []ptx.Reg
	for j := 0; j < len(bytes); j += 4 {
		if j+1 == len(bytes) {
			ws = append(ws, bytes[j])
			break
		}
		lo := f.Reg(ptx.B32)
		f.Op("prmt.b32", lo, bytes[j], bytes[j+1], ptx.Uint(0x0040))
		if j+2 >= len(bytes) {
			ws = append(ws, lo)
			break
		}
		hi := f.Reg(ptx.B32)
		f.Op("prmt.b32", hi, bytes[j+2], bytes[j+3], ptx.Uint(0x0040))
		w := f.Reg(ptx.B32)
		f.Op("prmt.b32", w, lo, hi, ptx.Uint(0x5410))
		ws = append(ws, w)
	}
	return ws
}

// stWords stores the registers pack returned for a vector of elements of type t.
func (g *ewGen) stWords(a ptx.Addr, t dtype.DType, ws []ptx.Reg) {
	var suffix string
	if size := t.Size(); size >= 4 {
		suffix = ewRT(t).String()
	} else {
		_, suffix = g.words(len(ws) * 4)
		if len(ws) == 1 && g.plan.V*size == 2 {
			suffix = ".u16"
		}
	}
	if len(ws) > 1 && t.Size() >= 4 {
		suffix = fmt.Sprintf(".v%d%s", len(ws), suffix)
	}
	g.f.Op("st.global"+suffix, a, ewVecOperand(ws))
}

// ---- expressions ----

// eval returns the value of n for the element of context c.
func (g *ewGen) eval(n expr.Node, c *ewElem) ptx.Reg {
	if g.uniform[n] && c != g.uniCtx {
		if r, ok := g.uniCtx.memo[n]; ok {
			return r
		}
		panic(fmt.Sprintf("kernel: uniform node %v not hoisted", n))
	}
	if r, ok := c.memo[n]; ok {
		return r
	}
	r := g.lower(n, c)
	c.memo[n] = r
	return r
}

func (g *ewGen) lower(n expr.Node, c *ewElem) ptx.Reg {
	switch n := n.(type) {
	case *expr.Input:
		if n.Slot < len(g.e.Ins) && g.e.Ins[n.Slot].Kind == Index {
			return c.index()
		}
		r, ok := c.ins[n.Slot]
		if !ok {
			panic(fmt.Sprintf("kernel: input %d not loaded", n.Slot))
		}
		return r
	case *expr.Param:
		return g.params[n.Slot]
	case *expr.Const:
		return g.constant(n.Value)
	case *expr.Unary:
		return g.unary(n.Op, n.Type, g.eval(n.X, c))
	case *expr.Binary:
		return g.binary(n.Op, n.X.DType(), g.eval(n.X, c), g.eval(n.Y, c))
	case *expr.Call:
		if d := expr.Definition(n); d != nil {
			// floor_divide, remainder: package expr's definition in the other
			// operations, which the CPU evaluator computes too.
			return g.eval(d, c)
		}
		args := make([]ptx.Reg, len(n.Args))
		for i, a := range n.Args {
			args[i] = g.eval(a, c)
		}
		return g.call(n.Func, n.Args[0].DType(), args)
	case *expr.Cast:
		return g.castKeep(g.eval(n.X, c), n.X.DType(), n.Type, g.keepNaN == nil || g.keepNaN[n])
	case *expr.Select:
		return g.sel(n.Type, g.eval(n.Cond, c), g.eval(n.X, c), g.eval(n.Y, c))
	}
	panic(fmt.Sprintf("kernel: unknown IR node %T", n))
}

// constant materializes a constant.
func (g *ewGen) constant(s expr.Scalar) ptx.Reg {
	f := g.f
	t := s.DType()
	if t == dtype.Bool {
		r := f.Reg(ptx.U32)
		f.Mov(r, ewImm(s))
		return f.Setp(ptx.Ne, r, ptx.Int(0))
	}
	r := g.reg(t)
	f.Mov(r, ewImm(s))
	return r
}

// ewImm returns a constant as an immediate of its register type (ewRT; a Bool as 0 or
// 1, a narrow integer as its extended 32-bit pattern).
func ewImm(s expr.Scalar) ptx.Operand {
	t := s.DType()
	b := s.Bits()
	switch {
	case t == dtype.Float32:
		return ptx.ImmF32(math.Float32frombits(uint32(b)))
	case t == dtype.Float64:
		return ptx.ImmF64(math.Float64frombits(b))
	case ewIsHalf(t), ewIs64(t):
		return ptx.Uint(b)
	case t.IsSigned():
		sh := 64 - t.Bits()
		return ptx.Uint(uint64(uint32(int64(b<<sh) >> sh)))
	}
	return ptx.Uint(b)
}

func (g *ewGen) unary(op expr.UnaryOp, t dtype.DType, x ptx.Reg) ptx.Reg {
	f := g.f
	switch op {
	case expr.Neg:
		d := g.reg(t)
		if ewIsFloat(t) {
			f.Op("xor"+ewBitType(t), d, x, ewSignMask(t))
			return d
		}
		f.Neg(d, x)
		g.norm(d, t)
		return d
	case expr.Not:
		d := f.Reg(ptx.Pred)
		f.Not(d, x)
		return d
	case expr.BitNot:
		d := g.reg(t)
		f.Not(d, x)
		if t.IsUnsigned() {
			g.norm(d, t)
		}
		return d
	}
	panic(fmt.Sprintf("kernel: unary %v", op))
}

// ewCmpOf maps a comparison to setp's operator for floats (IEEE: only != is true for NaN)
// and integers.
func ewCmpOf(op expr.BinaryOp, float bool) ptx.Cmp {
	switch op {
	case expr.Eq:
		return ptx.Eq
	case expr.Ne:
		if float {
			return ptx.Neu
		}
		return ptx.Ne
	case expr.Lt:
		return ptx.Lt
	case expr.Le:
		return ptx.Le
	case expr.Gt:
		return ptx.Gt
	case expr.Ge:
		return ptx.Ge
	}
	panic(fmt.Sprintf("kernel: comparison %v", op))
}

func (g *ewGen) binary(op expr.BinaryOp, t dtype.DType, x, y ptx.Reg) ptx.Reg {
	f := g.f
	if t == dtype.Bool {
		return g.boolBinary(op, x, y)
	}
	if op.IsComparison() {
		return f.Setp(ewCmpOf(op, ewIsFloat(t)), x, y)
	}
	d := g.reg(t)
	switch op {
	case expr.Add:
		f.Add(d, x, y)
	case expr.Sub:
		f.Sub(d, x, y)
	case expr.Mul:
		f.Mul(d, x, y)
	case expr.Div:
		if ewIsFloat(t) {
			f.Div(d, x, y)
			return g.canon64(t, d)
		}
		return g.intDiv(t, x, y, false)
	case expr.Rem:
		if ewIsFloat(t) {
			return g.fmod(t, x, y)
		}
		return g.intDiv(t, x, y, true)
	case expr.And:
		f.And(d, x, y)
		return d
	case expr.Or:
		f.Or(d, x, y)
		return d
	case expr.Xor:
		f.Xor(d, x, y)
		return d
	case expr.Shl, expr.Shr:
		return g.shift(op, t, x, y)
	default:
		panic(fmt.Sprintf("kernel: binary %v on %v", op, t))
	}
	if !ewIsFloat(t) {
		g.norm(d, t)
	}
	return g.canon64(t, d)
}

// canon64 makes a float64 NaN result the canonical NaN (the package's NaN policy): the
// H200's float64 arithmetic passes an operand's payload on (seen 2026-12-01), where its
// float32 arithmetic gives the canonical NaN itself. Other types pass through.
func (g *ewGen) canon64(t dtype.DType, d ptx.Reg) ptx.Reg {
	if t != dtype.Float64 {
		return d
	}
	f := g.f
	f.Selp(d, ewCanonNaN(t), d, f.Setp(ptx.NaN, d, d))
	return d
}

func (g *ewGen) boolBinary(op expr.BinaryOp, x, y ptx.Reg) ptx.Reg {
	f := g.f
	d := f.Reg(ptx.Pred)
	not := func(a ptx.Reg) ptx.Reg {
		r := f.Reg(ptx.Pred)
		f.Not(r, a)
		return r
	}
	switch op {
	case expr.And:
		f.And(d, x, y)
	case expr.Or:
		f.Or(d, x, y)
	case expr.Xor, expr.Ne:
		f.Xor(d, x, y)
	case expr.Eq:
		f.Xor(d, x, y)
		return not(d)
	case expr.Lt: // false < true
		f.And(d, not(x), y)
	case expr.Le:
		f.Or(d, not(x), y)
	case expr.Gt:
		f.And(d, x, not(y))
	case expr.Ge:
		f.Or(d, x, not(y))
	default:
		panic(fmt.Sprintf("kernel: %v on bool", op))
	}
	return d
}

// intDiv is x/y (or x%y with rem) with Go's truncation, x/0 == x%0 == 0 and
// MinInt/-1 == MinInt: the divisor is replaced by 1 where the hardware result is
// unspecified and the result patched.
func (g *ewGen) intDiv(t dtype.DType, x, y ptx.Reg, rem bool) ptx.Reg {
	f := g.f
	zero := f.Setp(ptx.Eq, y, ptx.Int(0))
	bad := zero
	var m1 ptx.Reg
	if t.IsSigned() && (t.Bits() == 32 || t.Bits() == 64) {
		// -1 as a divisor: x/-1 is -x (wrapping), x%-1 is 0.
		m1 = f.Setp(ptx.Eq, y, ptx.Int(-1))
		bad = f.Reg(ptx.Pred)
		f.Or(bad, zero, m1)
	}
	yy := g.reg(t)
	f.Selp(yy, ptx.Int(1), y, bad)
	d := g.reg(t)
	if rem {
		f.Rem(d, x, yy)
	} else {
		f.Div(d, x, yy)
		if m1.Valid() {
			nx := g.reg(t)
			f.Neg(nx, x)
			f.Selp(d, nx, d, m1)
		}
	}
	f.Selp(d, ptx.Int(0), d, zero)
	g.norm(d, t)
	return d
}

// shift is x << y or x >> y with the count read as unsigned: counts of the width or more
// give 0 (or -1 for >> of a negative signed x). PTX clamps 32-bit counts itself; 64-bit
// counts are clamped to 64 before they are truncated to the .u32 operand. Narrow types
// shift their extended 32-bit value, which gives the same bits.
func (g *ewGen) shift(op expr.BinaryOp, t dtype.DType, x, y ptx.Reg) ptx.Reg {
	f := g.f
	cnt := y
	if ewIs64(t) {
		c := f.Reg(ptx.U64)
		f.Min(c, y.As(ptx.U64), ptx.Int(64))
		cnt = g.narrow(c)
	}
	d := g.reg(t)
	if op == expr.Shl {
		f.Shl(d, x, cnt)
		g.norm(d, t)
	} else {
		f.Shr(d, x, cnt)
	}
	return d
}

// sel is cond ? x : y.
func (g *ewGen) sel(t dtype.DType, c, x, y ptx.Reg) ptx.Reg {
	f := g.f
	if t == dtype.Bool {
		a := f.Reg(ptx.Pred)
		f.And(a, c, x)
		nc := f.Reg(ptx.Pred)
		f.Not(nc, c)
		b := f.Reg(ptx.Pred)
		f.And(b, nc, y)
		d := f.Reg(ptx.Pred)
		f.Or(d, a, b)
		return d
	}
	d := g.reg(t)
	if ewIsHalf(t) {
		f.Op("selp.b16", d, x, y, c)
		return d
	}
	f.Selp(d, x, y, c)
	return d
}

// ---- calls ----

// ewMathFns maps the IR's library functions to the device math library.
var ewMathFns = map[expr.Func]ptx.MathFn{
	expr.Cbrt: ptx.Cbrt, expr.Exp: ptx.Exp, expr.Exp2: ptx.Exp2, expr.Expm1: ptx.Expm1,
	expr.Log: ptx.Log, expr.Log2: ptx.Log2, expr.Log10: ptx.Log10, expr.Log1p: ptx.Log1p,
	expr.Sin: ptx.Sin, expr.Cos: ptx.Cos, expr.Tan: ptx.Tan, expr.Asin: ptx.Asin,
	expr.Acos: ptx.Acos, expr.Atan: ptx.Atan, expr.Atan2: ptx.Atan2, expr.Sinh: ptx.Sinh,
	expr.Cosh: ptx.Cosh, expr.Tanh: ptx.Tanh, expr.Asinh: ptx.Asinh, expr.Acosh: ptx.Acosh,
	expr.Atanh: ptx.Atanh, expr.Hypot: ptx.Hypot, expr.Erf: ptx.Erf,
}

// ElementwisePTXSupports reports whether PTX can lower function fn on arguments of type t: the
// functions the kernel computes itself always, the library's when package ptx has them.
func ElementwisePTXSupports(fn expr.Func, t dtype.DType) bool {
	if t == dtype.Float32 || t == dtype.Float64 {
		if mf, ok := ewMathFns[fn]; ok {
			return mf.Supports(ewRT(t))
		}
		if fn == expr.Pow {
			return ptx.Pow.Supports(ewRT(t))
		}
	}
	return true
}

// libCall calls the math library's fn on args of type t.
func (g *ewGen) libCall(fn ptx.MathFn, t dtype.DType, args []ptx.Reg) ptx.Reg {
	if !fn.Supports(ewRT(t)) {
		panic(ewGenError{fmt.Errorf("kernel: the PTX math library has no %v for %v yet", fn, t)})
	}
	callee := g.m.MathFunc(fn, ewRT(t))
	d := g.reg(t)
	ops := make([]ptx.Operand, len(args))
	for i, a := range args {
		ops[i] = a
	}
	g.f.Call(callee, []ptx.Reg{d}, ops...)
	return d
}

func (g *ewGen) call(fn expr.Func, t dtype.DType, a []ptx.Reg) ptx.Reg {
	f := g.f
	x := a[0]
	if mf, ok := ewMathFns[fn]; ok {
		return g.libCall(mf, t, a)
	}
	switch fn {
	case expr.Abs:
		switch {
		case ewIsFloat(t):
			d := g.reg(t)
			f.Op("and"+ewBitType(t), d, x, ewAbsMask(t))
			return d
		case t.IsUnsigned():
			return x
		}
		d := g.reg(t)
		f.Abs(d, x)
		g.norm(d, t)
		return d
	case expr.Sqrt:
		d := g.reg(t)
		f.Sqrt(d, x)
		return g.canon64(t, d)
	case expr.Floor, expr.Ceil, expr.Trunc, expr.Rint:
		rnd := map[expr.Func]string{expr.Floor: ".rmi", expr.Ceil: ".rpi", expr.Trunc: ".rzi", expr.Rint: ".rni"}[fn]
		d := g.reg(t)
		f.CvtRound(d, x, rnd)
		return d
	case expr.Minimum, expr.Maximum:
		if !ewIsFloat(t) {
			d := g.reg(t)
			if fn == expr.Minimum {
				f.Min(d, x, a[1])
			} else {
				f.Max(d, x, a[1])
			}
			return d
		}
		return g.fminmax(t, fn == expr.Minimum, true, x, a[1])
	case expr.Fmin, expr.Fmax:
		return g.fminmax(t, fn == expr.Fmin, false, x, a[1])
	case expr.Sign:
		return g.sign(t, x)
	case expr.IsNaN:
		return f.Setp(ptx.NaN, x, x)
	case expr.IsInf, expr.IsFinite:
		ax := g.reg(t)
		f.Op("abs"+ewRT(t).String(), ax, x)
		cmp := ptx.Eq
		if fn == expr.IsFinite {
			cmp = ptx.Lt
		}
		return f.Setp(cmp, ax, ewFImm(t, math.Inf(1)))
	case expr.Signbit:
		b := f.Reg(ptx.S32)
		if t == dtype.Float64 {
			f.Op("mov.b64", ptx.Vec{f.Reg(ptx.B32), b}, x)
		} else {
			f.Op("mov.b32", b, x)
		}
		return f.Setp(ptx.Lt, b, ptx.Int(0))
	case expr.Copysign:
		m := g.reg(t)
		f.Op("and"+ewBitType(t), m, x, ewAbsMask(t))
		s := g.reg(t)
		f.Op("and"+ewBitType(t), s, a[1], ewSignMask(t))
		d := g.reg(t)
		f.Op("or"+ewBitType(t), d, m, s)
		return d
	case expr.Square:
		d := g.reg(t)
		f.Mul(d, x, x)
		if !ewIsFloat(t) {
			g.norm(d, t)
		}
		return d
	case expr.Reciprocal:
		d := g.reg(t)
		if ewIsFloat(t) {
			f.Div(d, ewFImm(t, 1), x)
			return d
		}
		f.Selp(d, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Eq, x, ptx.Int(1)))
		if t.IsSigned() {
			f.Selp(d, ptx.Int(-1), d, f.Setp(ptx.Eq, x, ptx.Int(-1)))
		}
		return d
	case expr.Pow:
		if ewIsFloat(t) {
			return g.libCall(ptx.Pow, t, a)
		}
		return g.powi(t, x, a[1])
	}
	panic(fmt.Sprintf("kernel: function %v on %v", fn, t))
}

// fminmax is minimum/maximum (nanProp: the canonical NaN if either is NaN) or
// fmin/fmax (the other argument when one is NaN, the canonical NaN when both are), with
// -0 < +0: the library's NaN policy (internal/fp, whose Min, Max, Fmin and Fmax are the
// CPU's side). PTX min and max already return the non-NaN operand (the canonical NaN
// for two); equal operands (±0 among them) give the OR (min) or AND (max) of their bits.
// (max.NaN.f32, sm_80, would save the last two instructions for float32 only; these
// kernels are bound by memory, not by the few instructions of a combine.)
func (g *ewGen) fminmax(t dtype.DType, isMin, nanProp bool, x, y ptx.Reg) ptx.Reg {
	f := g.f
	d := g.reg(t)
	z := g.reg(t)
	if isMin {
		f.Min(d, x, y)
		f.Op("or"+ewBitType(t), z, x, y)
	} else {
		f.Max(d, x, y)
		f.Op("and"+ewBitType(t), z, x, y)
	}
	f.Selp(d, z, d, f.Setp(ptx.Eq, x, y))
	if nanProp {
		f.Selp(d, ewCanonNaN(t), d, f.Setp(ptx.NaN, x, y))
		return d
	}
	return g.canon64(t, d) // two NaNs
}

// ewCanonNaN is the canonical NaN of float type t as an immediate.
func ewCanonNaN(t dtype.DType) ptx.Operand {
	if t == dtype.Float64 {
		return ptx.ImmF64(math.Float64frombits(fp.NaN64Bits))
	}
	return ptx.ImmF32(math.Float32frombits(fp.NaN32Bits))
}

func (g *ewGen) sign(t dtype.DType, x ptx.Reg) ptx.Reg {
	f := g.f
	d := g.reg(t)
	switch {
	case ewIsFloat(t):
		f.Selp(d, ewFImm(t, 1), ewFImm(t, 0), f.Setp(ptx.Gt, x, ewFImm(t, 0)))
		f.Selp(d, ewFImm(t, -1), d, f.Setp(ptx.Lt, x, ewFImm(t, 0)))
		f.Selp(d, x, d, f.Setp(ptx.NaN, x, x))
	case t.IsSigned():
		f.Selp(d, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Gt, x, ptx.Int(0)))
		f.Selp(d, ptx.Int(-1), d, f.Setp(ptx.Lt, x, ptx.Int(0)))
	default:
		f.Selp(d, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Ne, x, ptx.Int(0)))
	}
	return d
}

// ---- conversions ----

// cast converts the value x of type from to type to, keeping the sign of a NaN.
func (g *ewGen) cast(x ptx.Reg, from, to dtype.DType) ptx.Reg { return g.castKeep(x, from, to, true) }

// castKeep is cast, keeping the sign of a NaN through float conversions only if keep
// (see nanSignCasts).
func (g *ewGen) castKeep(x ptx.Reg, from, to dtype.DType, keep bool) ptx.Reg {
	f := g.f
	switch {
	case from == to:
		return x
	case to == dtype.Bool:
		switch {
		case ewIsHalf(from):
			m := f.Reg(ptx.B16)
			f.Op("and.b16", m, x, ptx.Uint(0x7fff))
			return f.Setp(ptx.Ne, m.As(ptx.U16), ptx.Int(0))
		case ewIsFloat(from):
			return f.Setp(ptx.Neu, x, ewFImm(from, 0))
		}
		return f.Setp(ptx.Ne, x, ptx.Int(0))
	case from == dtype.Bool:
		d := g.reg(to)
		switch {
		case to == dtype.Float16:
			f.Op("selp.b16", d, ptx.Uint(0x3c00), ptx.Uint(0), x)
		case to == dtype.BFloat16:
			f.Op("selp.b16", d, ptx.Uint(0x3f80), ptx.Uint(0), x)
		case ewIsFloat(to):
			f.Selp(d, ewFImm(to, 1), ewFImm(to, 0), x)
		default:
			f.Selp(d, ptx.Int(1), ptx.Int(0), x)
		}
		return d
	case ewIsHalf(from):
		return g.castKeep(g.halfToF32(x, from, keep), dtype.Float32, to, keep)
	case ewIsHalf(to):
		return g.toHalf(x, from, to, keep)
	case ewIsFloat(from) && ewIsFloat(to):
		d := g.reg(to)
		f.Cvt(d, x) // .rn when narrowing, exact when widening
		if !keep {
			return d
		}
		return g.keepSign(d, to, g.signWord(x, from))
	case ewIsFloat(from):
		return g.floatToInt(x, from, to)
	case ewIsFloat(to):
		d := g.reg(to)
		f.Cvt(d, x) // cvt.rn.fN.{s,u}M
		return d
	}
	return g.intToInt(x, from, to)
}

// intToInt wraps: the low bits of the value, extended as to's signedness says.
func (g *ewGen) intToInt(x ptx.Reg, from, to dtype.DType) ptx.Reg {
	f := g.f
	switch {
	case ewIs64(from) && ewIs64(to):
		return x.As(ewRT(to))
	case ewIs64(to):
		d := g.reg(to)
		if from.IsSigned() {
			f.Op("cvt.s64.s32", d, x)
		} else {
			f.Op("cvt.u64.u32", d, x)
		}
		return d
	case ewIs64(from):
		d := g.reg(to)
		f.Op("cvt.u32.u64", d, x)
		g.norm(d, to)
		return d
	}
	// both in 32-bit registers
	if to.Bits() == 32 || (from.Bits() < to.Bits() && (from.IsUnsigned() || to.IsSigned())) {
		return x.As(ewRT(to)) // the register already holds the converted value
	}
	d := g.reg(to)
	f.Mov(d, x)
	g.norm(d, to)
	return d
}

// floatToInt truncates toward zero, NaN gives 0, and out-of-range values saturate:
// cvt.rzi truncates and saturates for 32- and 64-bit integers (narrower ones clamp its
// 32-bit result); NaN is selected to 0 explicitly, since sm_90 turns a NaN into the
// 64-bit integers' minimum (seen on the H200, driver 580, 2026-12-01).
func (g *ewGen) floatToInt(x ptx.Reg, from, to dtype.DType) ptx.Reg {
	f := g.f
	d := g.reg(to)
	f.CvtRound(d, x, ".rzi")
	if ewIs64(to) {
		nan := f.Reg(ptx.Pred)
		f.Op("setp.nan"+x.Type().String(), nan, x, x)
		f.Selp(d, ptx.Int(0), d, nan)
	}
	if to.Bits() < 32 {
		lo, hi := ewIntRange(to)
		if to.IsSigned() {
			f.Max(d, d, ptx.Int(lo))
		}
		f.Min(d, d, ptx.Int(hi))
	}
	return d
}

// halfToF32 converts float16 or bfloat16 bits to float32 (exact).
func (g *ewGen) halfToF32(x ptx.Reg, from dtype.DType, keep bool) ptx.Reg {
	d, w := ptxHalfToF32(g.f, x, from)
	if from == dtype.Float16 && keep {
		return g.keepSign(d, dtype.Float32, w)
	}
	return d
}

// signWord returns a 32-bit register whose bit 31 is the sign bit of the float x.
func (g *ewGen) signWord(x ptx.Reg, t dtype.DType) ptx.Reg {
	f := g.f
	w := f.Reg(ptx.B32)
	switch t {
	case dtype.Float64:
		f.Op("mov.b64", ptx.Vec{f.Reg(ptx.B32), w}, x)
	case dtype.Float32:
		f.Op("mov.b32", w, x)
	default:
		z := f.Reg(ptx.B16)
		f.Mov(z, ptx.Uint(0))
		f.Op("mov.b32", w, ptx.Vec{z, x})
	}
	return w
}

// keepSign sets the sign bit of the float d of type t to bit 31 of sw. Conversions
// between float types keep the sign, so this changes only NaNs: the GPU may return its
// canonical NaN, but the sign of a NaN is data (signbit, copysign), and Go's
// conversions keep it. It is applied where nanSignCasts says the sign matters.
func (g *ewGen) keepSign(d ptx.Reg, t dtype.DType, sw ptx.Reg) ptx.Reg {
	f := g.f
	m := f.Reg(ptx.B32)
	f.And(m, sw, ptx.Uint(1<<31))
	switch t {
	case dtype.Float64:
		lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{lo, hi}, d)
		f.And(hi, hi, ptx.Uint(1<<31-1))
		f.Or(hi, hi, m)
		r := f.Reg(ptx.F64)
		f.Op("mov.b64", r, ptx.Vec{lo, hi})
		return r
	case dtype.Float32:
		a := f.Reg(ptx.B32)
		f.Op("and.b32", a, d, ptx.Uint(1<<31-1))
		f.Or(a, a, m)
		r := f.Reg(ptx.F32)
		f.Op("mov.b32", r, a)
		return r
	}
	lo, hi := f.Reg(ptx.B16), f.Reg(ptx.B16)
	f.Op("mov.b32", ptx.Vec{lo, hi}, m)
	a := f.Reg(ptx.B16)
	f.Op("and.b16", a, d, ptx.Uint(0x7fff))
	r := f.Reg(ptx.B16)
	f.Op("or.b16", r, a, hi)
	return r
}

// toHalf rounds x (a float or integer of type from) to float16 or bfloat16 once, to
// nearest even. Sources wider than float32 go through float32 rounded to odd, which
// float32's 24 bits make exact for the final rounding to 11 or 8 bits (Boldo &
// Melquiond); integers of at most 16 bits convert to float32 exactly.
func (g *ewGen) toHalf(x ptx.Reg, from, to dtype.DType, keep bool) ptx.Reg {
	f := g.f
	var x32 ptx.Reg
	switch {
	case from == dtype.Float32 && keep:
		return g.keepSign(g.f32ToHalf(x, to), to, g.signWord(x, from))
	case from == dtype.Float32:
		return g.f32ToHalf(x, to)
	case from == dtype.Float64 && keep:
		return g.keepSign(g.f32ToHalf(g.f64ToF32Odd(x), to), to, g.signWord(x, from))
	case from == dtype.Float64:
		return g.f32ToHalf(g.f64ToF32Odd(x), to)
	case from.Bits() <= 16:
		x32 = f.Reg(ptx.F32)
		f.Cvt(x32, x)
	case from.Bits() == 32:
		x64 := f.Reg(ptx.F64)
		f.Cvt(x64, x) // exact
		x32 = g.f64ToF32Odd(x64)
	default:
		x32 = g.i64ToF32Odd(x, from)
	}
	return g.f32ToHalf(x32, to)
}

// setOdd ORs 1 into the bits of the float32 r where inexact holds.
func (g *ewGen) setOdd(r, inexact ptx.Reg) ptx.Reg {
	f := g.f
	o := f.Reg(ptx.F32)
	f.Op("or.b32", o, r, ptx.Uint(1))
	d := f.Reg(ptx.F32)
	f.Selp(d, o, r, inexact)
	return d
}

// f64ToF32Odd rounds a float64 to float32 rounding to odd: truncate, and set the last
// bit if that dropped anything. NaN stays NaN; ±Inf and overflows stay correct for the
// rounding that follows (truncation gives MaxFloat32 with its last bit already set).
func (g *ewGen) f64ToF32Odd(x ptx.Reg) ptx.Reg {
	f := g.f
	r := f.Reg(ptx.F32)
	f.CvtRound(r, x, ".rz")
	back := f.Reg(ptx.F64)
	f.Cvt(back, r)
	return g.setOdd(r, f.Setp(ptx.Neu, back, x))
}

// i64ToF32Odd is f64ToF32Odd for a 64-bit integer.
func (g *ewGen) i64ToF32Odd(x ptx.Reg, from dtype.DType) ptx.Reg {
	f := g.f
	r := f.Reg(ptx.F32)
	f.CvtRound(r, x, ".rz")
	back := g.reg(from)
	f.CvtRound(back, r, ".rzi") // |r| <= |x|: exact, in range
	return g.setOdd(r, f.Setp(ptx.Ne, back, x))
}

// f32ToHalf rounds a float32 to float16 or bfloat16, to nearest even (ptxF32ToHalf).
func (g *ewGen) f32ToHalf(x ptx.Reg, to dtype.DType) ptx.Reg { return ptxF32ToHalf(g.f, g.sm, x, to) }

// nanSignCasts returns the conversions between float types that must keep the sign of a
// NaN (keepSign): those whose NaN sign reaches the result (stored, or read by signbit
// or copysign, through moves, conversions, negation and select) and whose operand still
// has the sign the CPU computes, because it comes from data (inputs, parameters,
// constants) through moves and conversions only. The NaNs of arithmetic are the GPU's
// canonical NaN whatever the CPU gives, so there the sign is lost anyway.
func nanSignCasts(root expr.Node) map[expr.Node]bool {
	isF := func(t dtype.DType) bool { return t.IsFloat() }
	var order []expr.Node // children first
	expr.Walk(root, func(n expr.Node) { order = append(order, n) })
	exact := map[expr.Node]bool{}
	for _, n := range order {
		switch n := n.(type) {
		case *expr.Input, *expr.Param, *expr.Const:
			exact[n] = true
		case *expr.Cast:
			exact[n] = !isF(n.X.DType()) || exact[n.X]
		case *expr.Select:
			exact[n] = exact[n.X] && exact[n.Y]
		case *expr.Unary:
			exact[n] = n.Op != expr.Neg || exact[n.X]
		case *expr.Call:
			switch n.Func {
			case expr.Abs:
				exact[n] = true
			case expr.Copysign:
				exact[n] = exact[n.Args[1]]
			case expr.Sign:
				exact[n] = exact[n.Args[0]]
			default:
				exact[n] = !isF(n.Type) // integer results have no NaN
			}
		default:
			exact[n] = !isF(n.DType())
		}
	}
	seen := map[expr.Node]bool{root: true}
	for i := len(order) - 1; i >= 0; i-- { // parents first
		n := order[i]
		obs := seen[n]
		switch n := n.(type) {
		case *expr.Cast:
			if obs && isF(n.Type) {
				seen[n.X] = true
			}
		case *expr.Select:
			if obs {
				seen[n.X], seen[n.Y] = true, true
			}
		case *expr.Unary:
			if obs && n.Op == expr.Neg {
				seen[n.X] = true
			}
		case *expr.Call:
			switch n.Func {
			case expr.Copysign:
				seen[n.Args[1]] = true
			case expr.Signbit:
				seen[n.Args[0]] = true
			case expr.Sign:
				if obs {
					seen[n.Args[0]] = true
				}
			}
		}
	}
	keep := map[expr.Node]bool{}
	for _, n := range order {
		if c, ok := n.(*expr.Cast); ok && isF(c.X.DType()) && isF(c.Type) && seen[c] && exact[c.X] {
			keep[c] = true
		}
	}
	return keep
}
