package kernel

import (
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// Device functions of elementwise kernels for the operations that loop: float fmod (the
// math library's) and integer pow. Each is defined once per module, on first use, and
// called (a call keeps an unrolled kernel small).

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

// fmod returns x % y for floats: C's fmod, exact, by the math library's (package ptx:
// Fmod, whose Go mirror the tests check against math.Mod), which gokernel's math.Mod
// calls too.
func (g *ewGen) fmod(t dtype.DType, x, y ptx.Reg) ptx.Reg {
	return g.libCall(ptx.Fmod, t, []ptx.Reg{x, y})
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
