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
	if p.V2 {
		return p.ptxV2(major, minor)
	}
	if p.V3 {
		return p.ptxV3(major, minor)
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
	blockAttrs(f, PermuteBlock)
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

// ptxV2 returns the second tiled permute kernel. The tile, grid and parameters are the
// first kernel's; what changes is how a thread moves its elements:
//
//   - every global load of a thread is issued, into its own registers, before any of
//     them is stored to shared memory (the first kernel reuses one register, so that
//     ptxas serializes load -> shared store -> next load: one load in flight per
//     thread, a DRAM round trip per element row);
//   - with Vec > 1 a thread moves Vec consecutive elements per global access
//     (ld.global.nc.v4.u32 and st.global.v4.u32 for float32: 16 bytes), read along B
//     and written along A; the padded shared tile is accessed with scalars (the
//     padding column makes rows odd, at most 2-way bank conflicts);
//   - the shared-memory reads of the store phase are all issued before the global
//     stores;
//   - without Index64 the block number is decomposed with 32-bit divisions (the
//     first kernel calls the 64-bit division routine two or more times per thread).
func (p *Permute) ptxV2(major, minor int) (src, entry string, err error) {
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "permute_tiled_v2"
	TA, TB, sz, V := p.TA, p.TB, p.Size, p.vec()
	pitch := TB + 1
	h := p.ptxHead(m, entry, TA*pitch)
	f := h.f
	et, rt := pmTypes(sz)
	ld := p.ptxLoads(h)
	// Shared stores, unguarded: a slot outside the array holds a value no store
	// reads back.
	sa := f.Reg(ptx.U32)
	f.Op("mov.u32", sa, ptx.Sym("pm_tile"))
	f.Fma(sa, ld.la, ptx.Int(pitch*sz), sa)
	f.Fma(sa, ld.lb, ptx.Int(sz), sa)
	for i := range ld.vals {
		for j := 0; j < V; j++ {
			f.Op("st.shared"+et.String(), ptx.Mem(sa, int64((i*ld.rows*pitch+j)*sz)), ld.vals[i][j])
		}
	}
	f.BarSync(0)
	st := p.ptxStoreThreads(h)
	ss := f.Reg(ptx.U32)
	f.Op("mov.u32", ss, ptx.Sym("pm_tile"))
	f.Fma(ss, st.wa, ptx.Int(pitch*sz), ss)
	f.Fma(ss, st.wb, ptx.Int(sz), ss)
	for i := range st.vals {
		st.vals[i] = f.Regs(rt, V)
		for j := 0; j < V; j++ {
			f.Op("ld.shared"+et.String(), st.vals[i][j], ptx.Mem(ss, int64((i*st.rows+j*pitch)*sz)))
		}
	}
	p.ptxStores(h, st)
	f.Ret()
	return m.String(), entry, nil
}

// pmTypes returns the PTX type of an element of sz bytes and the register type
// that holds one.
func pmTypes(sz int) (et, rt ptx.Type) {
	et = map[int]ptx.Type{1: ptx.U8, 2: ptx.U16, 4: ptx.U32, 8: ptx.U64}[sz]
	rt = ptx.U32
	if sz == 8 {
		rt = ptx.U64
	}
	return et, rt
}

// pmHead is what the second and third tiled permute kernels compute before moving
// any element: the global addresses, the parameters, the output strides, the block's
// batch offsets and the tile's origin.
type pmHead struct {
	f                 *ptx.Func
	pin, pout         ptx.Reg   // u64 global addresses of element 0
	shape, istr, ostr []ptx.Reg // u64, s64, u64 per dimension
	inBase, outBase   ptx.Reg   // s64, u64: the batch's offsets in elements
	a0, b0            ptx.Reg   // u64: the tile's first index along A and B
	tid               ptx.Reg
}

// ptxHead declares the kernel entry with the permute parameters and a shared tile
// "pm_tile" of smem elements (16-byte aligned), and computes the head: block ->
// (batch, tile along B, tile along A), in 32 bits unless Index64 (then every count
// is below 2^31).
func (p *Permute) ptxHead(m *ptx.Module, entry string, smem int) pmHead {
	r := p.Rank
	params := []ptx.Param{ptx.P("in", ptx.U64), ptx.P("out", ptx.U64)}
	for d := 0; d < r; d++ {
		params = append(params, ptx.P(fmt.Sprintf("shape%d", d), ptx.U64))
	}
	for d := 0; d < r; d++ {
		params = append(params, ptx.P(fmt.Sprintf("istr%d", d), ptx.S64))
	}
	f := m.Kernel(entry, params...)
	blockAttrs(f, PermuteBlock)
	A, B := r-1, p.B
	TA, TB := p.TA, p.TB
	et, _ := pmTypes(p.Size)
	f.Shared("pm_tile", et, 16, smem)
	h := pmHead{f: f}
	h.pin, h.pout = f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, h.pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, h.pout, f.LdParam(1))
	h.shape = make([]ptx.Reg, r)
	h.istr = make([]ptx.Reg, r)
	for d := 0; d < r; d++ {
		h.shape[d] = f.LdParam(2 + d)
		h.istr[d] = f.LdParam(2 + r + d)
	}
	h.ostr = make([]ptx.Reg, r)
	h.ostr[r-1] = f.Reg(ptx.U64)
	f.Mov(h.ostr[r-1], ptx.Int(1))
	for d := r - 2; d >= 0; d-- {
		h.ostr[d] = f.Reg(ptx.U64)
		f.Mul(h.ostr[d], h.ostr[d+1], h.shape[d+1])
	}
	it := ptx.U64
	if !p.Index64 {
		it = ptx.U32
	}
	narrow := func(x ptx.Reg) ptx.Reg {
		if it == ptx.U64 {
			return x
		}
		y := f.Reg(ptx.U32)
		f.Cvt(y, x)
		return y
	}
	wide := func(x ptx.Reg) ptx.Reg {
		if it == ptx.U64 {
			return x
		}
		y := f.Reg(ptx.U64)
		f.Cvt(y, x)
		return y
	}
	nA, nB := f.Reg(it), f.Reg(it)
	f.Add(nA, narrow(h.shape[A]), ptx.Int(TA-1))
	f.Shr(nA, nA, ptx.Int(scanLog2(TA)))
	f.Add(nB, narrow(h.shape[B]), ptx.Int(TB-1))
	f.Shr(nB, nB, ptx.Int(scanLog2(TB)))
	bid := f.Special(ptx.CtaidX)
	if it == ptx.U64 {
		b64 := f.Reg(ptx.U64)
		f.Cvt(b64, bid)
		bid = b64
	}
	rest := f.Reg(it)
	f.Div(rest, bid, nA)
	tA := f.Reg(it)
	f.Mul(tA, rest, nA)
	f.Sub(tA, bid, tA)
	batch := f.Reg(it)
	f.Div(batch, rest, nB)
	tB := f.Reg(it)
	f.Mul(tB, batch, nB)
	f.Sub(tB, rest, tB)
	h.inBase, h.outBase = f.Reg(ptx.S64), f.Reg(ptx.U64)
	f.Mov(h.inBase, ptx.Int(0))
	f.Mov(h.outBase, ptx.Int(0))
	for d := r - 1; d >= 0; d-- {
		if d == A || d == B {
			continue
		}
		sd := narrow(h.shape[d])
		q := f.Reg(it)
		f.Div(q, batch, sd)
		idx := f.Reg(it)
		f.Mul(idx, q, sd)
		f.Sub(idx, batch, idx)
		f.Mov(batch, q)
		iw := wide(idx)
		f.Fma(h.inBase, iw.As(ptx.S64), h.istr[d], h.inBase)
		f.Fma(h.outBase, iw, h.ostr[d], h.outBase)
	}
	h.a0, h.b0 = f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Shl(h.a0, wide(tA), ptx.Int(scanLog2(TA)))
	f.Shl(h.b0, wide(tB), ptx.Int(scanLog2(TB)))
	h.tid = f.Special(ptx.TidX)
	return h
}

// pmLoads is a thread's part of the load phase: it moves Vec consecutive elements
// along B per access, starting at (la, lb) of the tile and then every rows along A.
type pmLoads struct {
	lb, la ptx.Reg     // u32: the first access's offsets in the tile along B and A
	rows   int         // rows along A between a thread's accesses
	vals   [][]ptx.Reg // per access, Vec registers
}

// ptxLoads emits the load phase shared by the second and third kernels: threads per
// row along B tpr = TB/Vec; lb = Vec*(tid % tpr) along B, la = tid/tpr + i*rows
// along A; every global load of the thread is issued before any use, each guarded by
// the array's bounds.
func (p *Permute) ptxLoads(h pmHead) pmLoads {
	f := h.f
	A, B := p.Rank-1, p.B
	TA, TB, sz, V := p.TA, p.TB, p.Size, p.vec()
	et, rt := pmTypes(sz)
	vs := map[int]string{1: "", 2: ".v2", 4: ".v4"}[V]
	tpr := TB / V
	rowsL := PermuteBlock / tpr
	nL := TA / rowsL
	ld := pmLoads{lb: f.Reg(ptx.U32), la: f.Reg(ptx.U32), rows: rowsL}
	f.And(ld.lb, h.tid, ptx.Int(tpr-1))
	f.Shl(ld.lb, ld.lb, ptx.Int(scanLog2(V)))
	f.Shr(ld.la, h.tid, ptx.Int(scanLog2(tpr)))
	gb := f.Reg(ptx.U64)
	f.Cvt(gb, ld.lb)
	f.Add(gb, gb, h.b0)
	bOK := f.Setp(ptx.Lt, gb, h.shape[B])
	ga := f.Reg(ptx.U64)
	f.Cvt(ga, ld.la)
	f.Add(ga, ga, h.a0)
	off := f.Reg(ptx.S64)
	f.Fma(off, ga.As(ptx.S64), h.istr[A], h.inBase)
	f.Fma(off, gb.As(ptx.S64), h.istr[B], off)
	addr := f.Reg(ptx.S64)
	f.Fma(addr, off, ptx.Int(sz), h.pin.As(ptx.S64))
	stepA := f.Reg(ptx.S64)
	f.Mul(stepA, h.istr[A], ptx.Int(rowsL*sz))
	ld.vals = make([][]ptx.Reg, nL)
	for i := 0; i < nL; i++ {
		ld.vals[i] = f.Regs(rt, V)
		ok := f.Setp(ptx.Lt, ga, h.shape[A])
		f.Op("and.pred", ok, ok, bOK)
		if V == 1 {
			f.At(ok).Op("ld.global.nc"+et.String(), ld.vals[i][0], ptx.Mem(addr, 0))
		} else {
			f.At(ok).Op("ld.global.nc"+vs+et.String(), ptx.Vec(ld.vals[i]), ptx.Mem(addr, 0))
		}
		if i+1 < nL {
			f.Add(ga, ga, ptx.Int(rowsL))
			f.Add(addr, addr, stepA)
		}
	}
	return ld
}

// pmStores is a thread's part of the store phase: it moves Vec consecutive elements
// along A per access, starting at (wa, wb) of the tile and then every rows along B.
type pmStores struct {
	wa, wb ptx.Reg     // u32: the first access's offsets in the tile along A and B
	rows   int         // rows along B between a thread's accesses
	vals   [][]ptx.Reg // per access, Vec registers: the caller allocates them
}

// ptxStoreThreads assigns the store phase's elements: threads per row along A tpa =
// TA/Vec; wa = Vec*(tid % tpa) along A, wb = tid/tpa + i*rows along B.
func (p *Permute) ptxStoreThreads(h pmHead) pmStores {
	f := h.f
	TA, TB, V := p.TA, p.TB, p.vec()
	tpa := TA / V
	rowsS := PermuteBlock / tpa
	nS := TB / rowsS
	st := pmStores{wa: f.Reg(ptx.U32), wb: f.Reg(ptx.U32), rows: rowsS, vals: make([][]ptx.Reg, nS)}
	f.And(st.wa, h.tid, ptx.Int(tpa-1))
	f.Shl(st.wa, st.wa, ptx.Int(scanLog2(V)))
	f.Shr(st.wb, h.tid, ptx.Int(scanLog2(tpa)))
	return st
}

// ptxStores emits the global stores of the store phase, each guarded by the array's
// bounds.
func (p *Permute) ptxStores(h pmHead, st pmStores) {
	f := h.f
	A, B := p.Rank-1, p.B
	sz, V := p.Size, p.vec()
	et, _ := pmTypes(sz)
	vs := map[int]string{1: "", 2: ".v2", 4: ".v4"}[V]
	oa := f.Reg(ptx.U64)
	f.Cvt(oa, st.wa)
	f.Add(oa, oa, h.a0)
	aOK := f.Setp(ptx.Lt, oa, h.shape[A])
	ob := f.Reg(ptx.U64)
	f.Cvt(ob, st.wb)
	f.Add(ob, ob, h.b0)
	o := f.Reg(ptx.U64)
	f.Fma(o, ob, h.ostr[B], h.outBase)
	f.Add(o, o, oa)
	oaddr := f.Reg(ptx.U64)
	f.Fma(oaddr, o, ptx.Int(sz), h.pout)
	stepB := f.Reg(ptx.U64)
	f.Mul(stepB, h.ostr[B], ptx.Int(st.rows*sz))
	nS := len(st.vals)
	for i := 0; i < nS; i++ {
		ok := f.Setp(ptx.Lt, ob, h.shape[B])
		f.Op("and.pred", ok, ok, aOK)
		if V == 1 {
			f.At(ok).Op("st.global"+et.String(), ptx.Mem(oaddr, 0), st.vals[i][0])
		} else {
			f.At(ok).Op("st.global"+vs+et.String(), ptx.Mem(oaddr, 0), ptx.Vec(st.vals[i]))
		}
		if i+1 < nS {
			f.Add(ob, ob, ptx.Int(st.rows))
			f.Add(oaddr, oaddr, stepB)
		}
	}
}
