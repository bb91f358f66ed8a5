package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// PTX returns the tiled permute kernel's PTX: per block, the batch offsets from the
// block number (div/mod over the batch dimensions, once), TA*TB/PermuteBlock loads
// per thread along B into the padded shared tile, a barrier, and as many stores along
// A. Offsets are 64-bit; consecutive loads and stores of a thread differ by a constant
// stride, so each costs one add.
func (p *Permute) PTX(major, minor int) (src, entry string, err error) {
	if err := p.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "permute_tiled"
	r := p.Rank
	params := []ptx.Param{ptx.P("in", ptx.U64), ptx.P("out", ptx.U64)}
	for d := 0; d < r; d++ {
		params = append(params, ptx.P(fmt.Sprintf("shape%d", d), ptx.U64))
	}
	for d := 0; d < r; d++ {
		params = append(params, ptx.P(fmt.Sprintf("istr%d", d), ptx.S64))
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", PermuteBlock))
	A, B := r-1, p.B
	TA, TB, sz := p.TA, p.TB, p.Size
	pitch := TB + 1
	et := map[int]ptx.Type{1: ptx.U8, 2: ptx.U16, 4: ptx.U32, 8: ptx.U64}[sz]
	rt := ptx.U32
	if sz == 8 {
		rt = ptx.U64
	}
	f.Shared("pm_tile", et, 16, TA*pitch)
	pin, pout := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, pout, f.LdParam(1))
	shape := make([]ptx.Reg, r)
	istr := make([]ptx.Reg, r)
	for d := 0; d < r; d++ {
		shape[d] = f.LdParam(2 + d)
		istr[d] = f.LdParam(2 + r + d)
	}
	// Output strides (row-major).
	ostr := make([]ptx.Reg, r)
	ostr[r-1] = f.Reg(ptx.U64)
	f.Mov(ostr[r-1], ptx.Int(1))
	for d := r - 2; d >= 0; d-- {
		ostr[d] = f.Reg(ptx.U64)
		f.Mul(ostr[d], ostr[d+1], shape[d+1])
	}
	// Block -> (batch, tile along B, tile along A).
	nA, nB := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Add(nA, shape[A], ptx.Int(TA-1))
	f.Shr(nA, nA, ptx.Int(scanLog2(TA)))
	f.Add(nB, shape[B], ptx.Int(TB-1))
	f.Shr(nB, nB, ptx.Int(scanLog2(TB)))
	bid := f.Reg(ptx.U64)
	f.Cvt(bid, f.Special(ptx.CtaidX))
	rest := f.Reg(ptx.U64)
	f.Div(rest, bid, nA)
	tA := f.Reg(ptx.U64)
	f.Mul(tA, rest, nA)
	f.Sub(tA, bid, tA)
	batch := f.Reg(ptx.U64)
	f.Div(batch, rest, nB)
	tB := f.Reg(ptx.U64)
	f.Mul(tB, batch, nB)
	f.Sub(tB, rest, tB)
	inBase, outBase := f.Reg(ptx.S64), f.Reg(ptx.U64)
	f.Mov(inBase, ptx.Int(0))
	f.Mov(outBase, ptx.Int(0))
	for d := r - 1; d >= 0; d-- {
		if d == A || d == B {
			continue
		}
		q := f.Reg(ptx.U64)
		f.Div(q, batch, shape[d])
		idx := f.Reg(ptx.U64)
		f.Mul(idx, q, shape[d])
		f.Sub(idx, batch, idx)
		f.Mov(batch, q)
		f.Fma(inBase, idx.As(ptx.S64), istr[d], inBase)
		f.Fma(outBase, idx, ostr[d], outBase)
	}
	a0, b0 := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Shl(a0, tA, ptx.Int(scanLog2(TA)))
	f.Shl(b0, tB, ptx.Int(scanLog2(TB)))
	tid := f.Special(ptx.TidX)
	// Loads: lb = tid % TB along B, la = tid / TB + i*(256/TB) along A.
	lb, la := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(lb, tid, ptx.Int(TB-1))
	f.Shr(la, tid, ptx.Int(scanLog2(TB)))
	gb := f.Reg(ptx.U64)
	f.Cvt(gb, lb)
	f.Add(gb, gb, b0)
	bOK := f.Setp(ptx.Lt, gb, shape[B])
	ga := f.Reg(ptx.U64)
	f.Cvt(ga, la)
	f.Add(ga, ga, a0)
	off := f.Reg(ptx.S64)
	f.Fma(off, ga.As(ptx.S64), istr[A], inBase)
	f.Fma(off, gb.As(ptx.S64), istr[B], off)
	addr := f.Reg(ptx.S64)
	f.Fma(addr, off, ptx.Int(sz), pin.As(ptx.S64))
	rowsL := PermuteBlock / TB
	stepA := f.Reg(ptx.S64)
	f.Mul(stepA, istr[A], ptx.Int(rowsL*sz))
	sa := f.Reg(ptx.U32)
	f.Op("mov.u32", sa, ptx.Sym("pm_tile"))
	f.Fma(sa, la, ptx.Int(pitch*sz), sa)
	f.Fma(sa, lb, ptx.Int(sz), sa)
	v := f.Reg(rt)
	for i := 0; i < TA/rowsL; i++ {
		ok := f.Setp(ptx.Lt, ga, shape[A])
		f.Op("and.pred", ok, ok, bOK)
		f.At(ok).Op("ld.global.nc"+et.String(), v, ptx.Mem(addr, 0))
		f.At(ok).Op("st.shared"+et.String(), ptx.Mem(sa, 0), v)
		if i+1 < TA/rowsL {
			f.Add(ga, ga, ptx.Int(rowsL))
			f.Add(addr, addr, stepA)
			f.Add(sa, sa, ptx.Int(rowsL*pitch*sz))
		}
	}
	f.BarSync(0)
	// Stores: sa = tid % TA along A, sb = tid / TA + i*(256/TA) along B.
	wa, wb := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(wa, tid, ptx.Int(TA-1))
	f.Shr(wb, tid, ptx.Int(scanLog2(TA)))
	oa := f.Reg(ptx.U64)
	f.Cvt(oa, wa)
	f.Add(oa, oa, a0)
	aOK := f.Setp(ptx.Lt, oa, shape[A])
	ob := f.Reg(ptx.U64)
	f.Cvt(ob, wb)
	f.Add(ob, ob, b0)
	o := f.Reg(ptx.U64)
	f.Fma(o, ob, ostr[B], outBase)
	f.Add(o, o, oa)
	oaddr := f.Reg(ptx.U64)
	f.Fma(oaddr, o, ptx.Int(sz), pout)
	rowsS := PermuteBlock / TA
	stepB := f.Reg(ptx.U64)
	f.Mul(stepB, ostr[B], ptx.Int(rowsS*sz))
	ss := f.Reg(ptx.U32)
	f.Op("mov.u32", ss, ptx.Sym("pm_tile"))
	f.Fma(ss, wa, ptx.Int(pitch*sz), ss)
	f.Fma(ss, wb, ptx.Int(sz), ss)
	for i := 0; i < TB/rowsS; i++ {
		ok := f.Setp(ptx.Lt, ob, shape[B])
		f.Op("and.pred", ok, ok, aOK)
		f.At(ok).Op("ld.shared"+et.String(), v, ptx.Mem(ss, 0))
		f.At(ok).Op("st.global"+et.String(), ptx.Mem(oaddr, 0), v)
		if i+1 < TB/rowsS {
			f.Add(ob, ob, ptx.Int(rowsS))
			f.Add(oaddr, oaddr, stepB)
			f.Add(ss, ss, ptx.Int(rowsS*sz))
		}
	}
	f.Ret()
	return m.String(), entry, nil
}
