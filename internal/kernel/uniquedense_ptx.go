package kernel

import (
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the dense unique's kernels (uniquedense.go).

// uniqueDenseLoop emits a grid-stride loop over [0, n) (u64) that loads
// UniqueDenseUnroll keys of size ks from px together, a grid's width apart, and calls
// body with each loaded key's ordered value (zero-extended to u64) and its valid
// predicate. body must not branch out of the loop.
func uniqueDenseLoop(g *sortGen, px, n ptx.Reg, body func(o, valid ptx.Reg)) {
	f := g.f
	ks := g.order.Size()
	i, width := gridIndex(f)
	step := f.Reg(ptx.U64)
	f.Mul(step, width, ptx.Int(UniqueDenseUnroll))
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, n)).Bra(done)
	var raws, valids [UniqueDenseUnroll]ptx.Reg
	j := f.Reg(ptx.U64)
	f.Mov(j, i)
	for k := range UniqueDenseUnroll {
		if k > 0 {
			f.Add(j, j, width)
		}
		valids[k] = f.Setp(ptx.Lt, j, n)
		a := f.Reg(ptx.U64)
		f.Fma(a, j, ptx.Int(ks), px)
		raws[k] = loadElem(f, ks, valids[k], ptx.Mem(a, 0), true)
	}
	for k := range UniqueDenseUnroll {
		o := g.ordered(raws[k])
		if o.Type() != ptx.U64 {
			o64 := f.Reg(ptx.U64)
			f.Cvt(o64, o)
			o = o64
		}
		body(o, valids[k])
	}
	f.Add(i, i, step)
	f.Bra(loop)
	f.Place(done)
}

// PTX returns the range kernel's PTX: each thread's minimum key and minimum complement
// of a key, folded across the warp by shuffles, then one global reduction of each per
// warp.
func (u *UniqueRange) PTX(major, minor int) (src, entry string, err error) {
	if err := u.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "unique_range"
	m, f := auxKernel(major, minor, entry, "x", "n", "out")
	g := &sortGen{f: f, order: SortKey{Type: u.Type}}
	px, n, po := globalParam(f, 0), f.LdParam(1), globalParam(f, 2)
	lo, nhi := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Mov(lo, ptx.Uint(^uint64(0)))
	f.Mov(nhi, ptx.Uint(^uint64(0)))
	uniqueDenseLoop(g, px, n, func(o, valid ptx.Reg) {
		no := f.Reg(ptx.U64)
		f.Not(no, o)
		f.At(valid).Op("min.u64", lo, lo, o)
		f.At(valid).Op("min.u64", nhi, nhi, no)
	})
	rg := &redGen{f: f}
	for mask := 16; mask >= 1; mask /= 2 {
		f.Min(lo, lo, rg.shfl(lo, mask))
		f.Min(nhi, nhi, rg.shfl(nhi, mask))
	}
	lane := f.Reg(ptx.U32)
	f.And(lane, f.Special(ptx.TidX), ptx.Int(31))
	skip := f.NewLabel()
	f.At(f.Setp(ptx.Ne, lane, ptx.Int(0))).Bra(skip)
	f.Red("", "", ptx.Global, "min", ptx.U64, ptx.Mem(po, 0), lo)
	f.Red("", "", ptx.Global, "min", ptx.U64, ptx.Mem(po, 8), nhi)
	f.Place(skip)
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the marking kernel's PTX.
func (u *UniqueMark) PTX(major, minor int) (src, entry string, err error) {
	if err := u.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "unique_mark"
	m, f := auxKernel(major, minor, entry, "x", "n", "bitmap", "lo", "words")
	blockAttrs(f, UniqueDenseBlock)
	m.ExternShared("ubm", 16)
	g := &sortGen{f: f, order: SortKey{Type: u.Type}}
	px, n, pb := globalParam(f, 0), f.LdParam(1), globalParam(f, 2)
	lo, words := f.LdParam(3), f.LdParam(4)
	w32 := f.Reg(ptx.U32)
	f.Cvt(w32, words)
	base := f.Reg(ptx.U32)
	f.Op("mov.u32", base, ptx.Sym("ubm"))
	tid := f.Special(ptx.TidX)
	nt := f.Special(ptx.NtidX)
	// words strided over the block's threads: body(word index, shared address).
	overWords := func(body func(w, sa ptx.Reg)) {
		w := f.Reg(ptx.U32)
		f.Mov(w, tid)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, w, w32)).Bra(done)
		sa := f.Reg(ptx.U32)
		f.Fma(sa, w, ptx.Int(4), base)
		body(w, sa)
		f.Add(w, w, nt)
		f.Bra(loop)
		f.Place(done)
	}
	overWords(func(_, sa ptx.Reg) {
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(sa, 0), ptx.Int(0))
	})
	f.BarSync(0)
	span := f.Reg(ptx.U64)
	f.Shl(span, words, ptx.Int(5))
	uniqueDenseLoop(g, px, n, func(o, valid ptx.Reg) {
		d := f.Reg(ptx.U64)
		f.Sub(d, o, lo)
		in := f.Reg(ptx.Pred)
		f.Op("setp.lt.and.u64", in, d, span, valid)
		d32 := f.Reg(ptx.U32)
		f.Cvt(d32, d)
		wi := f.Reg(ptx.U32)
		f.Shr(wi, d32, ptx.Int(5))
		sa := f.Reg(ptx.U32)
		f.Fma(sa, wi, ptx.Int(4), base)
		bit := f.Reg(ptx.U32)
		f.And(bit, d32, ptx.Int(31))
		mask := f.Reg(ptx.B32)
		f.Op("shl.b32", mask, ptx.Int(1), bit)
		cur := f.Reg(ptx.B32)
		f.Mov(cur, ptx.Int(0))
		f.At(in).Op("ld.volatile.shared.b32", cur, ptx.Mem(sa, 0)) // (strong: it races with the reductions)
		f.And(cur, cur, mask)
		need := f.Reg(ptx.Pred)
		f.Op("setp.eq.and.b32", need, cur, ptx.Int(0), in)
		f.At(need).Op("red.shared.or.b32", ptx.Mem(sa, 0), mask)
	})
	f.BarSync(0)
	overWords(func(w, sa ptx.Reg) {
		v := f.Reg(ptx.B32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(sa, 0), v)
		ga := f.Reg(ptx.U64)
		f.Op("mul.wide.u32", ga, w, ptx.Int(4))
		f.Add(ga, ga, pb)
		f.At(f.Setp(ptx.Ne, v, ptx.Int(0))).Op("red.global.or.b32", ptx.Mem(ga, 0), v)
	})
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the expansion kernel's PTX.
func (u *UniqueExpand) PTX(major, minor int) (src, entry string, err error) {
	if err := u.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "unique_expand"
	m, f := auxKernel(major, minor, entry, "bitmap", "flags", "vals", "lo", "r")
	ks := u.Type.Size()
	pb, pf, pv := globalParam(f, 0), globalParam(f, 1), globalParam(f, 2)
	lo, r := f.LdParam(3), f.LdParam(4)
	gridStride(f, r, func(j ptx.Reg) {
		wi := f.Reg(ptx.U64)
		f.Shr(wi, j, ptx.Int(5))
		wa := f.Reg(ptx.U64)
		f.Fma(wa, wi, ptx.Int(4), pb)
		w := f.Reg(ptx.U32)
		f.Op("ld.global.nc.u32", w, ptx.Mem(wa, 0))
		j32 := f.Reg(ptx.U32)
		f.Cvt(j32, j)
		f.And(j32, j32, ptx.Int(31))
		f.Shr(w, w, j32)
		f.And(w, w, ptx.Int(1))
		fa := f.Reg(ptx.U64)
		f.Add(fa, j, pf)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U8, ptx.Mem(fa, 0), w)
		v := f.Reg(ptx.U64)
		f.Add(v, lo, j)
		if u.Type.IsSigned() {
			f.Xor(v, v, ptx.Uint(uint64(1)<<(8*ks-1)))
		}
		va := f.Reg(ptx.U64)
		f.Fma(va, j, ptx.Int(ks), pv)
		if ks == 8 {
			f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(va, 0), v)
		} else {
			v32 := f.Reg(ptx.U32)
			f.Cvt(v32, v)
			f.St(ptx.Global, ptx.CacheDefault, memType(ks), ptx.Mem(va, 0), v32)
		}
	})
	f.Ret()
	return m.String(), entry, nil
}
