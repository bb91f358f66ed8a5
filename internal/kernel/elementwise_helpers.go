package kernel

import (
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// Device functions of elementwise kernels for the operations that loop: float fmod and
// integer pow. Each is defined once per module, on first use, and called (a call keeps
// an unrolled kernel small; these are rare and slow anyway).

// helper returns the device function name(x, y) of type t, defining it with body.
func (g *ewGen) helper(name string, t ptx.Type, body func(h *ptx.Func, x, y ptx.Reg) ptx.Reg) *ptx.Func {
	if h := g.m.Lookup(name); h != nil {
		return h
	}
	h := g.m.Func(name, []ptx.Param{ptx.P(name+"_r", t)}, ptx.P(name+"_x", t), ptx.P(name+"_y", t))
	x, y := h.LdParam(0), h.LdParam(1)
	h.Return(body(h, x, y))
	return h
}

func (g *ewGen) callHelper(h *ptx.Func, t ptx.Type, x, y ptx.Reg) ptx.Reg {
	d := g.f.Reg(t)
	g.f.Call(h, []ptx.Reg{d}, x, y)
	return d
}

// fmod returns x % y for floats: C's fmod, exact, with the sign of x; NaN when x is
// infinite or NaN or y is 0 or NaN; x when |x| < |y| (so also when y is infinite).
//
// With x = mx*2^ex and y = my*2^ey (integer significands, ex >= ey), the result is
// ((mx * 2^(ex-ey)) mod my) * 2^ey: the significand remainder is built up in 64-bit
// steps of at most 40 (float32) or 11 (float64) doublings, and scaled back exactly (the
// result is representable: a multiple of y's unit in the last place below |y|).
func (g *ewGen) fmod(t dtype.DType, x, y ptx.Reg) ptx.Reg {
	if t == dtype.Float32 {
		return g.callHelper(g.helper("__ew_fmod_f32", ptx.F32, ewFmod32), ptx.F32, x, y)
	}
	return g.callHelper(g.helper("__ew_fmod_f64", ptx.F64, ewFmod64), ptx.F64, x, y)
}

func ewFmod32(h *ptx.Func, x, y ptx.Reg) ptx.Reg {
	ux, uy := h.Reg(ptx.U32), h.Reg(ptx.U32)
	h.Op("mov.b32", ux, x)
	h.Op("mov.b32", uy, y)
	ax, ay := h.Reg(ptx.U32), h.Reg(ptx.U32)
	h.And(ax, ux, ptx.Uint(0x7fffffff))
	h.And(ay, uy, ptx.Uint(0x7fffffff))
	res := h.Reg(ptx.F32)
	nan := h.Reg(ptx.Pred)
	h.Or(nan, h.Setp(ptx.Eq, ay, ptx.Int(0)), h.Setp(ptx.Ge, ax, ptx.Uint(0x7f800000)))
	h.Or(nan, nan, h.Setp(ptx.Gt, ay, ptx.Uint(0x7f800000)))
	ret := h.NewLabel()
	h.Mov(res, ewCanonNaN(dtype.Float32))
	h.At(nan).Bra(ret)
	h.Mov(res, x)
	h.At(h.Setp(ptx.Lt, ax, ay)).Bra(ret)

	split := func(a ptx.Reg) (e, m ptx.Reg) {
		e, m = h.Reg(ptx.U32), h.Reg(ptx.U32)
		h.Shr(e, a, ptx.Int(23))
		h.And(m, a, ptx.Uint(0x7fffff))
		sub := h.Setp(ptx.Eq, e, ptx.Int(0))
		h.AtNot(sub).Op("or.b32", m, m, ptx.Uint(0x800000))
		h.At(sub).Op("mov.u32", e, ptx.Int(1))
		return e, m
	}
	ex, mx := split(ax)
	ey, my := split(ay)
	d := h.Reg(ptx.U32)
	h.Sub(d, ex, ey)
	r, m := h.Reg(ptx.U64), h.Reg(ptx.U64)
	h.Cvt(r, mx)
	h.Cvt(m, my)
	h.Rem(r, r, m)
	ewRemLoop(h, r, m, d, 40)

	rf := h.Reg(ptx.F64)
	h.Cvt(rf, r) // exact: r < 2^24
	k := h.Reg(ptx.U32)
	h.Add(k, ey, ptx.Int(1023-150))
	k64 := h.Reg(ptx.U64)
	h.Cvt(k64, k)
	h.Shl(k64, k64, ptx.Int(52))
	scale := h.Reg(ptx.F64)
	h.Op("mov.b64", scale, k64)
	h.Mul(rf, rf, scale)
	h.Cvt(res, rf) // exact
	s := h.Reg(ptx.U32)
	h.And(s, ux, ptx.Uint(0x80000000))
	h.Op("or.b32", res, res, s)
	h.Place(ret)
	return res
}

func ewFmod64(h *ptx.Func, x, y ptx.Reg) ptx.Reg {
	ux, uy := h.Reg(ptx.U64), h.Reg(ptx.U64)
	h.Op("mov.b64", ux, x)
	h.Op("mov.b64", uy, y)
	const inf = 0x7ff0000000000000
	ax, ay := h.Reg(ptx.U64), h.Reg(ptx.U64)
	h.And(ax, ux, ptx.Uint(1<<63-1))
	h.And(ay, uy, ptx.Uint(1<<63-1))
	res := h.Reg(ptx.F64)
	nan := h.Reg(ptx.Pred)
	h.Or(nan, h.Setp(ptx.Eq, ay, ptx.Int(0)), h.Setp(ptx.Ge, ax, ptx.Uint(inf)))
	h.Or(nan, nan, h.Setp(ptx.Gt, ay, ptx.Uint(inf)))
	ret := h.NewLabel()
	h.Mov(res, ewCanonNaN(dtype.Float64))
	h.At(nan).Bra(ret)
	h.Mov(res, x)
	h.At(h.Setp(ptx.Lt, ax, ay)).Bra(ret)

	split := func(a ptx.Reg) (e ptx.Reg, m ptx.Reg) {
		e64 := h.Reg(ptx.U64)
		h.Shr(e64, a, ptx.Int(52))
		e = h.Reg(ptx.U32)
		h.Cvt(e, e64)
		m = h.Reg(ptx.U64)
		h.And(m, a, ptx.Uint(1<<52-1))
		sub := h.Setp(ptx.Eq, e, ptx.Int(0))
		h.AtNot(sub).Op("or.b64", m, m, ptx.Uint(1<<52))
		h.At(sub).Op("mov.u32", e, ptx.Int(1))
		return e, m
	}
	ex, mx := split(ax)
	ey, my := split(ay)
	d := h.Reg(ptx.U32)
	h.Sub(d, ex, ey)
	r := h.Reg(ptx.U64)
	h.Rem(r, mx, my)
	ewRemLoop(h, r, my, d, 11)

	// res = r * 2^(ey-1075), exact; below 2^-1022 the scale is applied in two steps.
	h.Cvt(res, r) // exact: r < 2^53
	k := h.Reg(ptx.S32)
	h.Add(k, ey.As(ptx.S32), ptx.Int(1023-1075))
	tiny := h.Setp(ptx.Lt, k, ptx.Int(1))
	h.At(tiny).Op("add.s32", k, k, ptx.Int(200))
	k64 := h.Reg(ptx.U64)
	h.Cvt(k64, k.As(ptx.U32))
	h.Shl(k64, k64, ptx.Int(52))
	scale := h.Reg(ptx.F64)
	h.Op("mov.b64", scale, k64)
	h.Mul(res, res, scale)
	h.At(tiny).Op("mul.rn.f64", res, res, ptx.ImmF64(0x1p-200))
	s := h.Reg(ptx.U64)
	h.And(s, ux, ptx.Uint(1<<63))
	h.Op("or.b64", res, res, s)
	h.Place(ret)
	return res
}

// ewRemLoop sets r = (r * 2^d) mod m in steps of at most step doublings (r < m, and
// m * 2^step must fit in 64 bits).
func ewRemLoop(h *ptx.Func, r, m, d ptx.Reg, step int) {
	loop, done := h.NewLabel(), h.NewLabel()
	h.Place(loop)
	h.At(h.Setp(ptx.Eq, d, ptx.Int(0))).Bra(done)
	s := h.Reg(ptx.U32)
	h.Min(s, d, ptx.Int(step))
	h.Shl(r, r, s)
	h.Rem(r, r, m)
	h.Sub(d, d, s)
	h.Bra(loop)
	h.Place(done)
}

// powi returns x**y for integers: by squaring, wrapping; for y < 0, 1/x**|y|
// truncated (1 for x == 1, ±1 for x == -1, else 0). Narrow types use the 32-bit
// function on their extended values and truncate the result.
func (g *ewGen) powi(t dtype.DType, x, y ptx.Reg) ptx.Reg {
	rty := ewRT(t)
	name := "__ew_powi" + rty.String()[1:]
	signed := t.IsSigned()
	h := g.helper(name, rty, func(h *ptx.Func, x, y ptx.Reg) ptx.Reg {
		r := h.Reg(rty)
		ret := h.NewLabel()
		if signed {
			pos := h.NewLabel()
			h.At(h.Setp(ptx.Ge, y, ptx.Int(0))).Bra(pos)
			h.Selp(r, ptx.Int(1), ptx.Int(0), h.Setp(ptx.Eq, x, ptx.Int(1)))
			odd := h.Reg(rty)
			h.And(odd, y, ptx.Int(1))
			m1 := h.Reg(rty)
			h.Selp(m1, ptx.Int(-1), ptx.Int(1), h.Setp(ptx.Ne, odd, ptx.Int(0)))
			h.Selp(r, m1, r, h.Setp(ptx.Eq, x, ptx.Int(-1)))
			h.Bra(ret)
			h.Place(pos)
		}
		h.Mov(r, ptx.Int(1))
		loop := h.NewLabel()
		h.Place(loop)
		h.At(h.Setp(ptx.Eq, y, ptx.Int(0))).Bra(ret)
		b := h.Reg(rty)
		h.And(b, y, ptx.Int(1))
		h.At(h.Setp(ptx.Ne, b, ptx.Int(0))).Op("mul.lo"+rty.String(), r, r, x)
		h.Mul(x, x, x)
		h.Op("shr"+rty.Unsigned().String(), y, y, ptx.Int(1))
		h.Bra(loop)
		h.Place(ret)
		return r
	})
	d := g.callHelper(h, rty, x, y)
	g.norm(d, t)
	return d
}
