package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of SearchSorted's bucket table (searchtable.go).

// searchTableValuePTX returns the float32 a raw key (u32) of type t stands for
// (searchTableValue).
func searchTableValuePTX(f *ptx.Func, t dtype.DType, raw ptx.Reg) ptx.Reg {
	v := f.Reg(ptx.F32)
	switch t {
	case dtype.Int32:
		f.Op("cvt.rn.f32.s32", v, raw)
	case dtype.Uint32:
		f.Op("cvt.rn.f32.u32", v, raw)
	default:
		f.Op("mov.b32", v, raw)
	}
	return v
}

// searchTableBucketPTX returns bucket(v) (an s32 register from 0 to 2^bits-1) for the
// header's F and S (searchTableBucket).
func searchTableBucketPTX(f *ptx.Func, bits int, first, scale, v ptx.Reg) ptx.Reg {
	x := f.Reg(ptx.F32)
	f.Op("sub.rn.f32", x, v, first)
	f.Op("mul.rn.f32", x, x, scale)
	b := f.Reg(ptx.S32)
	f.Op("cvt.rmi.s32.f32", b, x)
	f.Max(b, b, ptx.Int(0))
	f.Min(b, b, ptx.Int(1<<bits-1))
	nan := f.Reg(ptx.Pred)
	f.Op("testp.notanumber.f32", nan, v)
	f.At(nan).Op("mov.s32", b, ptx.Int(1<<bits-1))
	return b
}

// PTX returns the table kernel's PTX.
func (s *SearchTable) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "search_table"
	m, f := auxKernel(major, minor, entry, "sorted", "m", "table")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	t := s.Order.Type
	pa, pt := globalParam(f, 0), globalParam(f, 2)
	mLen := f.LdParam(1)
	m32 := f.Reg(ptx.U32)
	f.Cvt(m32, mLen)
	load := func(i ptx.Reg) ptx.Reg { // the value of element i (u32)
		a := f.Reg(ptx.U64)
		f.Op("mul.wide.u32", a, i, ptx.Int(4))
		f.Add(a, a, pa)
		raw := f.Reg(ptx.U32)
		f.Ld(ptx.Global, ptx.NC, ptx.U32, ptx.Mem(a, 0), raw)
		return searchTableValuePTX(f, t, raw)
	}
	zero := f.Reg(ptx.U32)
	f.Mov(zero, ptx.Int(0))
	first := load(zero)
	lastI := f.Reg(ptx.U32)
	f.Sub(lastI, m32, ptx.Int(1))
	last := load(lastI)
	scale := f.Reg(ptx.F32)
	{
		ok, p := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
		f.Op("testp.finite.f32", ok, first)
		f.Op("testp.finite.f32", p, last)
		f.Op("and.pred", ok, ok, p)
		f.Op("and.pred", ok, ok, f.Setp(ptx.Gt, last, first))
		d := f.Reg(ptx.F32)
		f.Op("sub.rn.f32", d, last, first)
		f.Op("div.rn.f32", scale, ptx.ImmF32(float32(int(1)<<s.Bits)), d)
		f.AtNot(ok).Op("mov.f32", scale, ptx.ImmF32(0))
	}
	buckets := f.Reg(ptx.U64)
	f.Mov(buckets, ptx.Int(1<<s.Bits+1))
	gridStride(f, buckets, func(e ptx.Reg) {
		b := f.Reg(ptx.S32)
		f.Cvt(b, e)
		lo := searchPTX(f, ptx.U32, m32, func(mid ptx.Reg) ptx.Reg {
			return f.Setp(ptx.Ge, searchTableBucketPTX(f, s.Bits, first, scale, load(mid)), b)
		})
		a := f.Reg(ptx.U64)
		f.Fma(a, e, ptx.Int(4), pt)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 8), lo)
		head := f.Setp(ptx.Eq, e, ptx.Int(0))
		fb, sb := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Op("mov.b32", fb, first)
		f.Op("mov.b32", sb, scale)
		f.At(head).Op("st.global.v2.u32", ptx.Mem(pt, 0), ptx.Vec([]ptx.Reg{fb, sb}))
	})
	f.Ret()
	return m.String(), entry, nil
}
