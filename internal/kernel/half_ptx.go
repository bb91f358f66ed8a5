package kernel

import (
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// Half-precision values in the generated kernels: every kernel (elementwise, reductions,
// scans, searches) holds a float16 or bfloat16 element as its bits in a B16 register,
// loads and stores it as .b16 (or packed in 32-bit words, two per word, low element
// first), computes on its exact float32 value, and rounds a float32 result once to
// nearest even. These are the conversions they share.

// ptxHalfToF32 returns the float32 value of the float16 or bfloat16 bits x (exact), and
// a 32-bit register holding x's bits in its high half (for bfloat16 the float32 itself;
// for float16 its sign bit is the value's, for keeping the sign of a NaN).
func ptxHalfToF32(f *ptx.Func, x ptx.Reg, from dtype.DType) (v, w ptx.Reg) {
	v = f.Reg(ptx.F32)
	z := f.Reg(ptx.B16)
	f.Mov(z, ptx.Uint(0))
	w = f.Reg(ptx.B32)
	f.Op("mov.b32", w, ptx.Vec{z, x})
	if from == dtype.Float16 {
		f.Op("cvt.f32.f16", v, x)
	} else {
		f.Op("mov.b32", v, w)
	}
	return v, w
}

// ptxF16ToF32Exact widens the float16 bits x to float32 as cvt.f32.f16 does but keeps a
// NaN's sign and payload (its 10 fraction bits at the top of float32's 23), which the
// PTX ISA leaves to the hardware: for the arg reductions, whose value is the element
// itself. ptxF32ToF16Exact takes such a value back to its bits.
func ptxF16ToF32Exact(f *ptx.Func, x ptx.Reg) ptx.Reg {
	v := f.Reg(ptx.F32)
	f.Op("cvt.f32.f16", v, x)
	w := f.Reg(ptx.U32)
	f.Op("cvt.u32.u16", w, x.As(ptx.U16))
	mag := f.Reg(ptx.U32)
	f.And(mag, w, ptx.Uint(0x7fff))
	isNaN := f.Setp(ptx.Gt, mag, ptx.Uint(0x7c00))
	s := f.Reg(ptx.U32)
	f.And(s, w, ptx.Uint(0x8000))
	f.Shl(s, s, ptx.Int(16))
	m := f.Reg(ptx.U32)
	f.And(m, w, ptx.Uint(0x3ff))
	f.Shl(m, m, ptx.Int(13))
	f.Or(s, s, m)
	f.Or(s, s, ptx.Uint(0x7f800000))
	e := f.Reg(ptx.F32)
	f.Op("mov.b32", e, s)
	f.Selp(v, e, v, isNaN)
	return v
}

// ptxF32ToF16Exact narrows x, a value of ptxF16ToF32Exact, back to float16 bits: a NaN
// to its sign and payload, anything else by cvt.rn.f16.f32 (exact for float16 values).
func ptxF32ToF16Exact(f *ptx.Func, x ptx.Reg) ptx.Reg {
	d := ptxF32ToHalf(f, 0, x, dtype.Float16)
	u := f.Reg(ptx.U32)
	f.Op("mov.b32", u, x)
	s := f.Reg(ptx.U32)
	f.Shr(s, u, ptx.Int(16))
	f.And(s, s, ptx.Uint(0x8000))
	m := f.Reg(ptx.U32)
	f.Shr(m, u, ptx.Int(13))
	f.And(m, m, ptx.Uint(0x3ff))
	f.Or(s, s, m)
	f.Or(s, s, ptx.Uint(0x7c00))
	h := f.Reg(ptx.B16)
	f.Op("cvt.u16.u32", h.As(ptx.U16), s)
	f.Selp(d, h, d, f.Setp(ptx.NaN, x, x))
	return d
}

// ptxF32ToHalf rounds the float32 x to float16 or bfloat16 bits, to nearest even: the
// native cvt.rn.f16.f32 and, on sm_80 and later, cvt.rn.bf16.f32; before sm_80 bfloat16
// rounds on the bits (add 0x7fff plus the lowest kept bit and truncate, which also
// rounds up to Inf), NaN giving the canonical 0x7fff as the native instruction does.
func ptxF32ToHalf(f *ptx.Func, sm int, x ptx.Reg, to dtype.DType) ptx.Reg {
	d := f.Reg(ptx.B16)
	if to == dtype.Float16 {
		f.Op("cvt.rn.f16.f32", d, x)
		return d
	}
	if sm >= 80 {
		f.Op("cvt.rn.bf16.f32", d, x)
		return d
	}
	u := f.Reg(ptx.U32)
	f.Op("mov.b32", u, x)
	l := f.Reg(ptx.U32)
	f.Op("bfe.u32", l, u, ptx.Int(16), ptx.Int(1))
	f.Add(l, l, ptx.Uint(0x7fff))
	f.Add(l, l, u)
	f.Shr(l, l, ptx.Int(16))
	h := f.Reg(ptx.B16)
	f.Op("cvt.u16.u32", h, l)
	f.Op("selp.b16", d, ptx.Uint(0x7fff), h, f.Setp(ptx.NaN, x, x))
	return d
}

// ptxHalfNonzero returns the predicate "the half value x is not ±0" (NaN is nonzero).
func ptxHalfNonzero(f *ptx.Func, x ptx.Reg) ptx.Reg {
	m := f.Reg(ptx.B16)
	f.Op("and.b16", m, x, ptx.Uint(0x7fff))
	return f.Setp(ptx.Ne, m.As(ptx.U16), ptx.Int(0))
}

// ptxUnpackHalves splits 32-bit words of packed half values (the low half first) into
// n B16 registers.
func ptxUnpackHalves(f *ptx.Func, words []ptx.Reg, n int) []ptx.Reg {
	out := make([]ptx.Reg, 0, n)
	for _, w := range words {
		h := f.Regs(ptx.B16, 2)
		f.Op("mov.b32", ptx.Vec(h), w)
		out = append(out, h...)
	}
	return out[:n]
}
