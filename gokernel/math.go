package gokernel

import (
	"go/ast"
	"go/types"
	"math"

	"github.com/go-gpu/gpu/ptx"
)

// mathFuncs lists the functions of package math a kernel may call, with their
// device function (0: lowered here). Those lowered here, and Mod, are exact: the
// same bits as Go's math package on the CPU. The others run the device math library
// (package ptx), within about an ulp of Go's.
var mathFuncs = map[string]ptx.MathFn{
	"Exp": ptx.Exp, "Exp2": ptx.Exp2, "Expm1": ptx.Expm1, "Log": ptx.Log, "Log2": ptx.Log2,
	"Log10": ptx.Log10, "Log1p": ptx.Log1p, "Sin": ptx.Sin, "Cos": ptx.Cos, "Tan": ptx.Tan,
	"Asin": ptx.Asin, "Acos": ptx.Acos, "Atan": ptx.Atan, "Atan2": ptx.Atan2, "Sinh": ptx.Sinh,
	"Cosh": ptx.Cosh, "Tanh": ptx.Tanh, "Asinh": ptx.Asinh, "Acosh": ptx.Acosh, "Atanh": ptx.Atanh,
	"Pow": ptx.Pow, "Cbrt": ptx.Cbrt, "Hypot": ptx.Hypot, "Erf": ptx.Erf, "Mod": ptx.Fmod,
	"Sqrt": 0, "Abs": 0, "Floor": 0, "Ceil": 0, "Trunc": 0, "Round": 0, "RoundToEven": 0,
	"Copysign": 0, "Signbit": 0, "IsNaN": 0, "IsInf": 0, "Inf": 0, "NaN": 0, "FMA": 0,
	"Max": 0, "Min": 0, "Float32bits": 0, "Float32frombits": 0, "Float64bits": 0, "Float64frombits": 0,
}

// bitsFuncs lists the functions of package math/bits a kernel may call (all exact).
var bitsFuncs = map[string]bool{
	"OnesCount": true, "OnesCount32": true, "OnesCount64": true,
	"LeadingZeros": true, "LeadingZeros32": true, "LeadingZeros64": true,
	"TrailingZeros": true, "TrailingZeros32": true, "TrailingZeros64": true,
	"Len": true, "Len32": true, "Len64": true,
	"RotateLeft": true, "RotateLeft32": true, "RotateLeft64": true,
	"Reverse": true, "Reverse32": true, "Reverse64": true,
}

var (
	tF64 = types.Typ[types.Float64]
	tF32 = types.Typ[types.Float32]
	tU64 = types.Typ[types.Uint64]
)

// mathCall compiles a call of package math.
func (g *gen) mathCall(name string, e *ast.CallExpr) value {
	mf, ok := mathFuncs[name]
	if !ok {
		g.fail(e.Pos(), "math.%s is not supported in kernels (see package gokernel's documentation for the list)", name)
	}
	t := g.typeOf(e)
	f := g.f
	arg := func(i int, at types.Type) value { return g.convertTo(g.expr(e.Args[i]), at, e.Args[i].Pos()) }
	if mf != 0 {
		regs := make([]ptx.Reg, len(e.Args))
		for i := range e.Args {
			regs[i] = g.reg(arg(i, tF64))
		}
		return scalar(tF64, f.Math(mf, regs...))
	}
	d := f.Reg(ptx.F64)
	switch name {
	case "Sqrt":
		f.Sqrt(d, g.reg(arg(0, tF64)))
	case "Abs":
		f.Abs(d, g.reg(arg(0, tF64)))
	case "Floor", "Ceil", "Trunc", "RoundToEven":
		rnd := map[string]string{"Floor": ".rmi", "Ceil": ".rpi", "Trunc": ".rzi", "RoundToEven": ".rni"}[name]
		f.CvtRound(d, g.reg(arg(0, tF64)), rnd)
	case "Round":
		// Trunc(x), plus a unit away from zero when |x - Trunc(x)| >= 0.5 (exact).
		x := g.reg(arg(0, tF64))
		tr, diff, one := f.Reg(ptx.F64), f.Reg(ptx.F64), f.Reg(ptx.F64)
		f.CvtRound(tr, x, ".rzi")
		f.Sub(diff, x, tr)
		f.Abs(diff, diff)
		half := f.Setp(ptx.Ge, diff, ptx.ImmF64(0.5))
		f.Mov(one, g.copysign(ptx.ImmF64(1), x))
		f.Add(d, tr, one)
		f.Selp(d, d, tr, half)
	case "Copysign":
		f.Mov(d, g.copysign(g.reg(arg(0, tF64)), g.reg(arg(1, tF64))))
	case "Signbit":
		b := f.Reg(ptx.S64)
		f.Mov(b, g.reg(arg(0, tF64)))
		return scalar(tBool, f.Setp(ptx.Lt, b, ptx.Int(0)))
	case "IsNaN":
		x := g.reg(arg(0, tF64))
		p := f.Reg(ptx.Pred)
		f.Op("setp.nan.f64", p, x, x)
		return scalar(tBool, p)
	case "IsInf":
		// sign >= 0 && x > MaxFloat64 || sign <= 0 && x < -MaxFloat64
		x := g.reg(arg(0, tF64))
		sign := g.reg(arg(1, tInt))
		pos := f.Setp(ptx.Gt, x, ptx.ImmF64(math.MaxFloat64))
		neg := f.Setp(ptx.Lt, x, ptx.ImmF64(-math.MaxFloat64))
		sp := f.Setp(ptx.Ge, sign, ptx.Int(0))
		sn := f.Setp(ptx.Le, sign, ptx.Int(0))
		f.And(pos, pos, sp)
		f.And(neg, neg, sn)
		f.Or(pos, pos, neg)
		return scalar(tBool, pos)
	case "Inf":
		sign := g.reg(arg(0, tInt))
		p := f.Setp(ptx.Ge, sign, ptx.Int(0))
		f.Selp(d, ptx.ImmF64(math.Inf(1)), ptx.ImmF64(math.Inf(-1)), p)
	case "NaN":
		f.Mov(d, ptx.ImmF64(math.NaN())) // Go's NaN bits (0x7ff8000000000001)
	case "FMA":
		f.Fma(d, g.reg(arg(0, tF64)), arg(1, tF64).op, arg(2, tF64).op)
	case "Max", "Min":
		return g.minMax(name == "Min", arg(0, tF64), arg(1, tF64), tF64, true, e.Pos())
	case "Float64bits":
		u := f.Reg(ptx.U64)
		f.Mov(u, g.reg(arg(0, tF64)))
		return scalar(tU64, u)
	case "Float64frombits":
		f.Mov(d, g.reg(arg(0, tU64)))
	case "Float32bits":
		u := f.Reg(ptx.U32)
		f.Mov(u, g.reg(arg(0, tF32)))
		return scalar(tUint32, u)
	case "Float32frombits":
		s := f.Reg(ptx.F32)
		f.Mov(s, g.reg(arg(0, tUint32)))
		return scalar(tF32, s)
	}
	return scalar(t, d)
}

// copysign returns a float64 register with x's magnitude and s's sign.
func (g *gen) copysign(x ptx.Operand, s ptx.Reg) ptx.Reg {
	f := g.f
	xr, ok := x.(ptx.Reg)
	if !ok {
		xr = f.Reg(ptx.F64)
		f.Mov(xr, x)
	}
	xb, sb := f.Reg(ptx.B64), f.Reg(ptx.B64)
	f.Mov(xb, xr)
	f.Mov(sb, s)
	f.And(xb, xb, ptx.Uint(math.MaxInt64))
	f.And(sb, sb, ptx.Uint(1<<63))
	f.Or(xb, xb, sb)
	d := f.Reg(ptx.F64)
	f.Mov(d, xb)
	return d
}

// bitsCall compiles a call of package math/bits.
func (g *gen) bitsCall(name string, e *ast.CallExpr) value {
	if !bitsFuncs[name] {
		g.fail(e.Pos(), "bits.%s is not supported in kernels (see package gokernel's documentation for the list)", name)
	}
	f := g.f
	xt := g.typeOf(e.Args[0])
	x := g.reg(g.expr(e.Args[0]))
	w := x.Type().Bits()
	bt := x.Type().Bit()
	count := func(c ptx.Reg) value { // a u32 count as an int
		d := f.Reg(ptx.S64)
		f.Cvt(d, c)
		return scalar(tInt, d)
	}
	switch name[:3] {
	case "One":
		c := f.Reg(ptx.U32)
		f.Op("popc"+bt.String(), c, x)
		return count(c)
	case "Lea", "Len":
		c := f.Reg(ptx.U32)
		f.Op("clz"+bt.String(), c, x)
		if name[:3] == "Len" {
			f.Sub(c, ptx.Reg(g.constReg(ptx.U32, int64(w))), c)
		}
		return count(c)
	case "Tra":
		r, c := f.Reg(bt), f.Reg(ptx.U32)
		f.Op("brev"+bt.String(), r, x)
		f.Op("clz"+bt.String(), c, r)
		return count(c)
	case "Rev":
		r := f.Reg(x.Type())
		f.Op("brev"+bt.String(), r, x)
		return scalar(xt, r)
	case "Rot":
		// (x << (k mod w)) | (x >> (w - k mod w)); a shift by w gives 0.
		k := g.reg(g.convertTo(g.expr(e.Args[1]), tInt, e.Args[1].Pos()))
		s := f.Reg(ptx.U32)
		f.CvtRound(s, k.As(ptx.U64), "")
		f.And(s, s, ptx.Int(int64(w-1)))
		r := f.Reg(ptx.U32)
		f.Sub(r, g.constReg(ptx.U32, int64(w)), s)
		a, b := f.Reg(x.Type()), f.Reg(x.Type())
		f.Shl(a, x, s)
		f.Shr(b, x.As(x.Type().Unsigned()), r)
		f.Or(a, a, b)
		return scalar(xt, a)
	}
	g.fail(e.Pos(), "bits.%s is not supported in kernels", name)
	return value{}
}

// constReg returns a new register of type t holding c.
func (g *gen) constReg(t ptx.Type, c int64) ptx.Reg {
	r := g.f.Reg(t)
	g.f.Mov(r, ptx.Int(c))
	return r
}
