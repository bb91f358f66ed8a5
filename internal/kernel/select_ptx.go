package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// PTX of the selection kernels.

// PTX returns the select histogram's PTX: shared counts in 8 copies (lane % 8) against
// contention, flushed with one atomic add per nonzero bin.
func (s *SelectHist) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "select_hist"
	params := []ptx.Param{ptx.P("keys", ptx.U64), ptx.P("hist", ptx.U64), ptx.P("state", ptx.U64), ptx.P("rowLen", ptx.U64),
		ptx.P("chunk", ptx.U64), ptx.P("chunks", ptx.U64), ptx.P("pass", ptx.U64)}
	if s.Fused {
		params = append(params, ptx.P("k", ptx.U64))
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	const copies = 8
	f.Shared("sh_hist", ptx.B32, 16, copies*RadixDigits)
	g := newSortGen(f, s.Order, s.Items)
	ks := s.Order.Size()
	P := s.Order.Passes()
	pk, ph := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pk, f.LdParam(0))
	f.CvtaTo(ptx.Global, ph, f.LdParam(1))
	rowLen, chunk, chunks := f.LdParam(3), f.LdParam(4), f.LdParam(5)
	pass := f.Reg(ptx.U32)
	f.Cvt(pass, f.LdParam(6))
	hb := f.Reg(ptx.U32)
	f.Op("mov.u32", hb, ptx.Sym("sh_hist"))
	{
		z := f.Reg(ptx.U32)
		f.Mov(z, ptx.Int(0))
		a := f.Reg(ptx.U32)
		f.Fma(a, g.tid, ptx.Int(4), hb)
		for j := 0; j < copies; j++ {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(j*SortBlock*4)), z)
		}
	}
	f.BarSync(0)
	b := f.Reg(ptx.U64)
	f.Cvt(b, f.Special(ptx.CtaidX))
	row := f.Reg(ptx.U64)
	f.Div(row, b, chunks)
	c := f.Reg(ptx.U64)
	f.Mul(c, row, chunks)
	f.Sub(c, b, c)
	start := f.Reg(ptx.U64)
	f.Mul(start, c, chunk)
	end := f.Reg(ptx.U64)
	f.Add(end, start, chunk)
	f.Min(end, end, rowLen)
	rowBase := f.Reg(ptx.U64)
	f.Mul(rowBase, row, rowLen)
	// The prefix (not read in the first pass: the top digit has no higher bits).
	prefix := f.Reg(g.kt())
	f.Mov(prefix, ptx.Int(0))
	{
		first := f.Setp(ptx.Eq, pass, ptx.Int(P-1))
		ps := f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, ps, f.LdParam(2))
		a := f.Reg(ptx.U64)
		f.Fma(a, row, ptx.Int(16), ps)
		x := f.Reg(ptx.U64)
		f.Mov(x, ptx.Int(0))
		f.AtNot(first).Op("ld.global.u64", x, ptx.Mem(a, 0))
		f.Cvt(prefix, x)
	}
	hi := f.Reg(ptx.U32)
	f.Shl(hi, pass, ptx.Int(3))
	f.Add(hi, hi, ptx.Int(8))
	ph2 := f.Reg(g.kt())
	f.Shr(ph2, prefix, hi) // shifts of the width or more give 0 (the first pass)
	cp := f.Reg(ptx.U32)
	f.And(cp, g.lane, ptx.Int(copies-1))
	cb := f.Reg(ptx.U32)
	f.Fma(cb, cp, ptx.Int(RadixDigits*4), hb)
	shift := f.Reg(ptx.U32)
	f.Shl(shift, pass, ptx.Int(3))
	i := f.Reg(ptx.U64)
	tid64 := f.Reg(ptx.U64)
	f.Cvt(tid64, g.tid)
	G := 1 // keys a thread reads together
	if s.Vector {
		G = 16 / ks
	}
	{
		th := f.Reg(ptx.U64)
		f.Mul(th, tid64, ptx.Int(G))
		f.Add(i, start, th)
	}
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	if s.Vector {
		// (block-uniform: the loop ends when the block's first key is past the end)
		ib := f.Reg(ptx.U64)
		f.Mul(ib, tid64, ptx.Int(G))
		f.Sub(ib, i, ib)
		f.At(f.Setp(ptx.Ge, ib, end)).Bra(done)
	} else {
		f.At(f.Setp(ptx.Ge, i, end)).Bra(done)
	}
	keys := make([]ptx.Reg, s.Items)
	valid := make([]ptx.Reg, s.Items)
	for j := 0; j < s.Items; j += G {
		ij := f.Reg(ptx.U64)
		f.Add(ij, i, ptx.Int((j/G)*SortBlock*G))
		a := f.Reg(ptx.U64)
		f.Add(a, ij, rowBase)
		f.Fma(a, a, ptx.Int(ks), pk)
		if !s.Vector {
			valid[j] = f.Setp(ptx.Lt, ij, end)
			keys[j] = loadElem(f, ks, valid[j], ptx.Mem(a, 0), true)
			continue
		}
		ijG := f.Reg(ptx.U64)
		f.Add(ijG, ij, ptx.Int(G))
		full := f.Setp(ptx.Le, ijG, end)
		rt := regType(ks)
		for e := 0; e < G; e++ {
			keys[j+e] = f.Reg(rt)
			f.Mov(keys[j+e], ptx.Int(0))
			ie := f.Reg(ptx.U64)
			f.Add(ie, ij, ptx.Int(e))
			valid[j+e] = f.Setp(ptx.Lt, ie, end)
		}
		f.At(full).Op(fmt.Sprintf("ld.global.nc.v%d%s", G, rt), ptx.Vec(keys[j:j+G]), ptx.Mem(a, 0))
		for e := 0; e < G; e++ {
			p := f.Reg(ptx.Pred)
			f.Op("and.pred", p, valid[j+e], notp(f, full))
			f.At(p).Op("ld.global.nc"+memType(ks).String(), keys[j+e], ptx.Mem(a, int64(e*ks)))
		}
	}
	for j, k := range keys {
		o := g.ordered(k)
		oh := f.Reg(g.kt())
		f.Shr(oh, o, hi)
		w := f.Reg(ptx.Pred)
		f.Op("and.pred", w, valid[j], f.Setp(ptx.Eq, oh, ph2))
		d := g.digitOf(o, shift)
		a := f.Reg(ptx.U32)
		f.Fma(a, d, ptx.Int(4), cb)
		old := f.Reg(ptx.U32)
		f.At(w).Op("atom.shared.add.u32", old, ptx.Mem(a, 0), ptx.Int(1))
	}
	f.Add(i, i, ptx.Int(s.Items*SortBlock))
	f.Bra(loop)
	f.Place(done)
	f.BarSync(0)
	v := f.Reg(ptx.U32)
	f.Mov(v, ptx.Int(0))
	for cpy := 0; cpy < copies; cpy++ {
		x := f.Reg(ptx.U32)
		a := f.Reg(ptx.U32)
		f.Fma(a, g.tid, ptx.Int(4), hb)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(cpy*RadixDigits*4)), x)
		f.Add(v, v, x)
	}
	skip := f.NewLabel()
	f.At(f.Setp(ptx.Eq, v, ptx.Int(0))).Bra(skip)
	ga := f.Reg(ptx.U64)
	f.Fma(ga, row, ptx.Int(RadixDigits), tid64)
	f.Fma(ga, ga, ptx.Int(4), ph)
	old := f.Reg(ptx.U32)
	f.Atom("", "", ptx.Global, "add", ptx.U32, old, ptx.Mem(ga, 0), v)
	f.Place(skip)
	if s.Fused {
		s.fusedStep(f, g, major*10+minor, ph, row, chunks, tid64, pass)
	}
	f.Ret()
	return m.String(), entry, nil
}

// fusedStep emits the tail of a fused histogram pass: the block takes its row's
// ticket, and the last block of the row does the select step.
func (s *SelectHist) fusedStep(f *ptx.Func, g *sortGen, sm int, ph, row, chunks, tid64 ptx.Reg, pass ptx.Reg) {
	f.Shared("sh_last", ptx.B32, 4, 1)
	f.Shared("sh_sum", ptx.B64, 8, SortBlock/32)
	fence := func() {
		if sm >= 70 {
			f.Fence("acq_rel", "gpu")
		} else {
			f.Membar("gl")
		}
	}
	rows := f.Reg(ptx.U64)
	f.Cvt(rows, f.Special(ptx.NctaidX))
	f.Div(rows, rows, chunks)
	ta := f.Reg(ptx.U64)
	f.Fma(ta, rows, ptx.Int(RadixDigits), row)
	f.Fma(ta, ta, ptx.Int(4), ph)
	flagAddr := ptx.Mem(ptx.Sym("sh_last"), 0)
	f.BarSync(0) // every thread's flush before the ticket
	notFirst := f.Setp(ptx.Ne, g.tid, ptx.Int(0))
	skip := f.NewLabel()
	f.At(notFirst).Bra(skip)
	fence() // release: the block's counts before its ticket
	old := f.Reg(ptx.U32)
	f.Atom("", "", ptx.Global, "add", ptx.U32, old, ptx.Mem(ta, 0), ptx.Int(1))
	last1 := f.Reg(ptx.U32)
	f.Cvt(last1, chunks)
	f.Sub(last1, last1, ptx.Int(1))
	last := f.Setp(ptx.Eq, old, last1)
	flag := f.Reg(ptx.U32)
	f.Selp(flag, ptx.Int(1), ptx.Int(0), last)
	f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, flagAddr, flag)
	f.AtNot(last).Bra(skip)
	fence() // acquire: the other blocks' counts
	f.Place(skip)
	f.BarSync(0)
	fl := f.Reg(ptx.U32)
	f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, flagAddr, fl)
	done := f.NewLabel()
	f.At(f.Setp(ptx.Eq, fl, ptx.Int(0))).Bra(done)
	ps := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, ps, f.LdParam(2))
	selectStepBody(f, g, s.Order.Passes(), ph, ps, row, tid64, f.LdParam(7), pass, "sh_sum", true, s.KState)
	f.At(notFirst).Bra(done)
	zero := f.Reg(ptx.U32)
	f.Mov(zero, ptx.Int(0))
	f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(ta, 0), zero)
	f.Place(done)
}

// PTX returns the select step's PTX.
func (s *SelectStep) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "select_step"
	f := m.Kernel(entry, ptx.P("hist", ptx.U64), ptx.P("state", ptx.U64), ptx.P("k", ptx.U64), ptx.P("pass", ptx.U64))
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	f.Shared("ss_sum", ptx.B64, 8, SortBlock/32)
	g := newSortGen(f, SortKey{}, 1)
	ph, ps := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, ph, f.LdParam(0))
	f.CvtaTo(ptx.Global, ps, f.LdParam(1))
	k := f.LdParam(2)
	pass := f.Reg(ptx.U32)
	f.Cvt(pass, f.LdParam(3))
	row := f.Reg(ptx.U64)
	f.Cvt(row, f.Special(ptx.CtaidX))
	tid64 := f.Reg(ptx.U64)
	f.Cvt(tid64, g.tid)
	selectStepBody(f, g, s.Passes, ph, ps, row, tid64, k, pass, "ss_sum", false, false)
	f.Ret()
	return m.String(), entry, nil
}

// selectStepBody emits SelectStep's work on row's histogram (at ph) and state (at ps)
// for a block of SortBlock threads; sum is a shared array of SortBlock/32 u64 for the
// block scan. With cg the counts are read at L2 (ld.global.cg: written by other
// blocks' atomics in this launch). With kState the first pass too reads the prefix
// and the keys to select from the state (SelectHist.KState; k is not read).
func selectStepBody(f *ptx.Func, g *sortGen, P int, ph, ps, row, tid64, k, pass ptx.Reg, sum string, cg, kState bool) {
	ha := f.Reg(ptx.U64)
	f.Fma(ha, row, ptx.Int(RadixDigits), tid64)
	f.Fma(ha, ha, ptx.Int(4), ph)
	c := f.Reg(ptx.U32)
	cache := ptx.CacheDefault
	if cg {
		cache = ptx.CacheCG
	}
	f.Ld(ptx.Global, cache, ptx.U32, ptx.Mem(ha, 0), c)
	z := f.Reg(ptx.U32)
	f.Mov(z, ptx.Int(0))
	f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(ha, 0), z)
	sa := f.Reg(ptx.U64)
	f.Fma(sa, row, ptx.Int(16), ps)
	prefix, rem := f.Reg(ptx.U64), f.Reg(ptx.U64)
	if kState {
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), prefix, rem)
	} else {
		f.Mov(prefix, ptx.Int(0))
		f.Mov(rem, k)
		first := f.Setp(ptx.Eq, pass, ptx.Int(P-1))
		f.AtNot(first).Op("ld.global.u64", prefix, ptx.Mem(sa, 0))
		f.AtNot(first).Op("ld.global.u64", rem, ptx.Mem(sa, 8))
	}
	c64 := f.Reg(ptx.U64)
	f.Cvt(c64, c)
	excl, _ := g.blockScan(c64, sum)
	incl := f.Reg(ptx.U64)
	f.Add(incl, excl, c64)
	found := f.Reg(ptx.Pred)
	f.Op("and.pred", found, f.Setp(ptx.Lt, excl, rem), f.Setp(ptx.Le, rem, incl))
	skip := f.NewLabel()
	f.AtNot(found).Bra(skip)
	sh := f.Reg(ptx.U32)
	f.Shl(sh, pass, ptx.Int(3))
	d := f.Reg(ptx.U64)
	f.Shl(d, tid64, sh)
	f.Or(prefix, prefix, d)
	f.Sub(rem, rem, excl)
	f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), prefix, rem)
	f.Place(skip)
}

// topkTile emits what TopKCount and TopKGather share: the block's row and tile, T and
// rem, and each item's key (blocked: thread t owns tile keys t*Items to t*Items+Items-1),
// whether it is below T, equal, and its index in the row. Striped: item i of thread t
// is the tile's key i*SortBlock+t (coalesced; for counts only).
type topkTile struct {
	row, tileI       ptx.Reg // u64
	T, rem           ptx.Reg
	keys, idx        []ptx.Reg
	less, eq         []ptx.Reg
	nLess, nEq       ptx.Reg // u32 counts of the thread's items
	rowLen, tilesArg ptx.Reg
}

func topkLoad(f *ptx.Func, g *sortGen, items int, striped bool, pk, pstate, rowLen, tiles ptx.Reg) *topkTile {
	ks := g.order.Size()
	tt := &topkTile{rowLen: rowLen, tilesArg: tiles}
	b := f.Reg(ptx.U64)
	f.Cvt(b, f.Special(ptx.CtaidX))
	tt.row = f.Reg(ptx.U64)
	f.Div(tt.row, b, tiles)
	tt.tileI = f.Reg(ptx.U64)
	f.Mul(tt.tileI, tt.row, tiles)
	f.Sub(tt.tileI, b, tt.tileI)
	sa := f.Reg(ptx.U64)
	f.Fma(sa, tt.row, ptx.Int(16), pstate)
	T64 := f.Reg(ptx.U64)
	f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), T64)
	tt.rem = f.Reg(ptx.U64)
	f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 8), tt.rem)
	tt.T = f.Reg(g.kt())
	f.Cvt(tt.T, T64)
	first := f.Reg(ptx.U64)
	f.Mul(first, tt.tileI, ptx.Int(SortBlock*items))
	th := f.Reg(ptx.U64)
	stride := 1
	if striped {
		f.Cvt(th, g.tid)
		stride = SortBlock
	} else {
		f.MulWide(th, g.tid, ptx.Int(items))
	}
	f.Add(first, first, th)
	rowBase := f.Reg(ptx.U64)
	f.Mul(rowBase, tt.row, rowLen)
	tt.nLess, tt.nEq = f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Mov(tt.nLess, ptx.Int(0))
	f.Mov(tt.nEq, ptx.Int(0))
	for i := 0; i < items; i++ {
		ix := f.Reg(ptx.U64)
		f.Add(ix, first, ptx.Int(i*stride))
		v := f.Setp(ptx.Lt, ix, rowLen)
		a := f.Reg(ptx.U64)
		f.Add(a, ix, rowBase)
		f.Fma(a, a, ptx.Int(ks), pk)
		key := loadElem(f, ks, v, ptx.Mem(a, 0), true)
		o := g.ordered(key)
		l, e := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
		f.Op("and.pred", l, v, f.Setp(ptx.Lt, o, tt.T))
		f.Op("and.pred", e, v, f.Setp(ptx.Eq, o, tt.T))
		f.At(l).Op("add.u32", tt.nLess, tt.nLess, ptx.Int(1))
		f.At(e).Op("add.u32", tt.nEq, tt.nEq, ptx.Int(1))
		tt.keys = append(tt.keys, key)
		tt.idx = append(tt.idx, ix)
		tt.less = append(tt.less, l)
		tt.eq = append(tt.eq, e)
	}
	return tt
}

// PTX returns the top-k count's PTX.
func (c *TopKCount) PTX(major, minor int) (src, entry string, err error) {
	if err := c.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "topk_count"
	params := []ptx.Param{ptx.P("keys", ptx.U64), ptx.P("state", ptx.U64), ptx.P("counts", ptx.U64),
		ptx.P("rowLen", ptx.U64), ptx.P("tiles", ptx.U64)}
	if c.Guard {
		params = append(params, ptx.P("guard", ptx.U64))
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	exit := guardExit(f, c.Guard, 5)
	f.Shared("tc_sum", ptx.B32, 16, SortBlock/32)
	g := newSortGen(f, c.Order, c.Items)
	pk, pst, pc := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pk, f.LdParam(0))
	f.CvtaTo(ptx.Global, pst, f.LdParam(1))
	f.CvtaTo(ptx.Global, pc, f.LdParam(2))
	tt := topkLoad(f, g, c.Items, c.Striped, pk, pst, f.LdParam(3), f.LdParam(4))
	packed := f.Reg(ptx.U32)
	f.Shl(packed, tt.nEq, ptx.Int(16))
	f.Or(packed, packed, tt.nLess)
	_, total := g.blockScan(packed, "tc_sum")
	skip := f.NewLabel()
	f.AtNot(f.Setp(ptx.Eq, g.tid, ptx.Int(0))).Bra(skip)
	l, e := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(l, total, ptx.Int(0xffff))
	f.Shr(e, total, ptx.Int(16))
	l64, e64 := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Cvt(l64, l)
	f.Cvt(e64, e)
	a := f.Reg(ptx.U64)
	f.Fma(a, tt.row, tt.tilesArg, tt.tileI)
	f.Fma(a, a, ptx.Int(16), pc)
	f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), l64, e64)
	f.Place(skip)
	f.Place(exit)
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the top-k gather's PTX.
func (c *TopKGather) PTX(major, minor int) (src, entry string, err error) {
	if err := c.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "topk_gather"
	params := []ptx.Param{ptx.P("keys", ptx.U64), ptx.P("state", ptx.U64), ptx.P("prefix", ptx.U64),
		ptx.P("outKeys", ptx.U64), ptx.P("outIdx", ptx.U64), ptx.P("rowLen", ptx.U64), ptx.P("tiles", ptx.U64), ptx.P("k", ptx.U64),
		ptx.P("counts", ptx.U64)}
	if c.Guard {
		params = append(params, ptx.P("guard", ptx.U64))
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	gexit := guardExit(f, c.Guard, 9)
	f.Shared("tg_sum", ptx.B32, 16, SortBlock/32)
	g := newSortGen(f, c.Order, c.Items)
	ks := c.Order.Size()
	pk, pst, pp, pok, poi := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pk, f.LdParam(0))
	f.CvtaTo(ptx.Global, pst, f.LdParam(1))
	f.CvtaTo(ptx.Global, pp, f.LdParam(2))
	f.CvtaTo(ptx.Global, pok, f.LdParam(3))
	f.CvtaTo(ptx.Global, poi, f.LdParam(4))
	k := f.LdParam(7)
	exit := f.NewLabel()
	if c.Skip {
		// The tile's counts: nothing below T, and no key equal to T among the rem
		// first ones (block-uniform: the whole block leaves).
		pc := f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, pc, f.LdParam(8))
		b := f.Reg(ptx.U64)
		f.Cvt(b, f.Special(ptx.CtaidX))
		tiles := f.LdParam(6)
		row := f.Reg(ptx.U64)
		f.Div(row, b, tiles)
		sa := f.Reg(ptx.U64)
		f.Fma(sa, row, ptx.Int(16), pst)
		rem := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 8), rem)
		ca, pa := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Fma(ca, b, ptx.Int(16), pc)
		f.Fma(pa, b, ptx.Int(16), pp)
		cl, ce, pe := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(ca, 0), cl, ce)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(pa, 8), pe)
		none := f.Reg(ptx.Pred)
		f.Op("or.pred", none, f.Setp(ptx.Eq, ce, ptx.Int(0)), f.Setp(ptx.Ge, pe, rem))
		f.Op("and.pred", none, none, f.Setp(ptx.Eq, cl, ptx.Int(0)))
		f.At(none).Bra(exit)
	}
	tt := topkLoad(f, g, c.Items, false, pk, pst, f.LdParam(5), f.LdParam(6))
	packed := f.Reg(ptx.U32)
	f.Shl(packed, tt.nEq, ptx.Int(16))
	f.Or(packed, packed, tt.nLess)
	excl, _ := g.blockScan(packed, "tg_sum")
	pa := f.Reg(ptx.U64)
	f.Fma(pa, tt.row, tt.tilesArg, tt.tileI)
	f.Fma(pa, pa, ptx.Int(16), pp)
	pl, pe := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(pa, 0), pl, pe)
	el, ee := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(el, excl, ptx.Int(0xffff))
	f.Shr(ee, excl, ptx.Int(16))
	el64, ee64 := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Cvt(el64, el)
	f.Cvt(ee64, ee)
	f.Add(pl, pl, el64)
	f.Add(pe, pe, ee64)
	less := f.Reg(ptx.U64)
	f.Sub(less, k, tt.rem)
	rowOut := f.Reg(ptx.U64)
	f.Mul(rowOut, tt.row, k)
	rowBase := f.Reg(ptx.U64)
	f.Mul(rowBase, tt.row, tt.rowLen)
	kmt := memType(ks)
	for i := range tt.keys {
		pos := f.Reg(ptx.U64)
		f.Mov(pos, pl)
		w := f.Reg(ptx.Pred)
		f.Mov(w, tt.less[i])
		takeEq := f.Reg(ptx.Pred)
		f.Op("and.pred", takeEq, tt.eq[i], f.Setp(ptx.Lt, pe, tt.rem))
		pq := f.Reg(ptx.U64)
		f.Add(pq, less, pe)
		f.At(takeEq).Op("mov.u64", pos, pq)
		f.Op("or.pred", w, w, takeEq)
		f.At(tt.less[i]).Op("add.u64", pl, pl, ptx.Int(1))
		f.At(tt.eq[i]).Op("add.u64", pe, pe, ptx.Int(1))
		j := f.Reg(ptx.U64)
		f.Add(j, rowOut, pos)
		a := f.Reg(ptx.U64)
		f.Fma(a, j, ptx.Int(ks), pok)
		f.At(w).Op("st.global"+kmt.String(), ptx.Mem(a, 0), tt.keys[i])
		f.Fma(a, j, ptx.Int(8), poi)
		f.At(w).Op("st.global.u64", ptx.Mem(a, 0), tt.idx[i])
	}
	_ = rowBase
	f.Place(exit)
	f.Place(gexit)
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the rank sort's PTX.
func (r *TopKRankSort) PTX(major, minor int) (src, entry string, err error) {
	if err := r.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "topk_rank"
	params := []ptx.Param{ptx.P("inKeys", ptx.U64), ptx.P("outKeys", ptx.U64), ptx.P("inIdx", ptx.U64),
		ptx.P("outIdx", ptx.U64), ptx.P("rows", ptx.U64), ptx.P("k", ptx.U64)}
	if r.Guard {
		params = append(params, ptx.P("guard", ptx.U64))
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	exit := guardExit(f, r.Guard, 6)
	g := newSortGen(f, r.Order, 1)
	ks := r.Order.Size()
	kt := g.kt()
	kw := kt.Bits() / 8
	f.Shared("tr_keys", ptx.B8, 16, TopKRankMax*kw)
	pik, pok, pii, poi := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	for i, p := range []ptx.Reg{pik, pok, pii, poi} {
		f.CvtaTo(ptx.Global, p, f.LdParam(i))
	}
	k := f.Reg(ptx.U32)
	f.Cvt(k, f.LdParam(5))
	sh := f.Reg(ptx.U32)
	f.Op("mov.u32", sh, ptx.Sym("tr_keys"))
	row := f.Reg(ptx.U64)
	f.Cvt(row, f.Special(ptx.CtaidX))
	base := f.Reg(ptx.U64) // the row's first element
	k64 := f.Reg(ptx.U64)
	f.Cvt(k64, k)
	f.Mul(base, row, k64)
	always := f.Reg(ptx.Pred)
	f.Op("setp.eq.u32", always, g.tid, g.tid)
	// forItems runs body for i = tid, tid+SortBlock, ... below k.
	forItems := func(body func(i ptx.Reg)) {
		i := f.Reg(ptx.U32)
		f.Mov(i, g.tid)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, i, k)).Bra(done)
		body(i)
		f.Add(i, i, ptx.Int(SortBlock))
		f.Bra(loop)
		f.Place(done)
	}
	load := func(i ptx.Reg) (raw ptx.Reg, gi ptx.Reg) {
		gi = f.Reg(ptx.U64)
		f.Cvt(gi, i)
		f.Add(gi, gi, base)
		a := f.Reg(ptx.U64)
		f.Fma(a, gi, ptx.Int(ks), pik)
		return loadElem(f, ks, always, ptx.Mem(a, 0), false), gi
	}
	forItems(func(i ptx.Reg) {
		raw, _ := load(i)
		sa := f.Reg(ptx.U32)
		f.Fma(sa, i, ptx.Int(kw), sh)
		f.St(ptx.Shared, ptx.CacheDefault, kt, ptx.Mem(sa, 0), g.ordered(raw))
	})
	f.BarSync(0)
	forItems(func(i ptx.Reg) {
		raw, gi := load(i)
		o := g.ordered(raw)
		rank := f.Reg(ptx.U32)
		f.Mov(rank, ptx.Int(0))
		j := f.Reg(ptx.U32)
		f.Mov(j, ptx.Int(0))
		sa := f.Reg(ptx.U32)
		f.Mov(sa, sh)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, j, k)).Bra(done)
		y := f.Reg(kt)
		f.Ld(ptx.Shared, ptx.CacheDefault, kt, ptx.Mem(sa, 0), y)
		before := f.Reg(ptx.Pred)
		f.Op("and.pred", before, f.Setp(ptx.Eq, y, o), f.Setp(ptx.Lt, j, i))
		f.Op("or.pred", before, before, f.Setp(ptx.Lt, y, o))
		f.At(before).Op("add.u32", rank, rank, ptx.Int(1))
		f.Add(j, j, ptx.Int(1))
		f.Add(sa, sa, ptx.Int(kw))
		f.Bra(loop)
		f.Place(done)
		d := f.Reg(ptx.U64)
		f.Cvt(d, rank)
		f.Add(d, d, base)
		a := f.Reg(ptx.U64)
		f.Fma(a, d, ptx.Int(ks), pok)
		f.St(ptx.Global, ptx.CacheDefault, memType(ks), ptx.Mem(a, 0), raw)
		ia := f.Reg(ptx.U64)
		f.Fma(ia, gi, ptx.Int(8), pii)
		x := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(ia, 0), x)
		f.Fma(a, d, ptx.Int(8), poi)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), x)
	})
	f.Place(exit)
	f.Ret()
	return m.String(), entry, nil
}

// guardExit emits a guarded kernel's test (TopKCount.Guard): a jump to the returned
// label, placed before the kernel's final ret, when the u32 at parameter i is zero.
// Without guard the label is never jumped to.
func guardExit(f *ptx.Func, guard bool, i int) ptx.Label {
	exit := f.NewLabel()
	if !guard {
		return exit
	}
	a := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, a, f.LdParam(i))
	v := f.Reg(ptx.U32)
	f.Ld(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), v)
	f.At(f.Setp(ptx.Eq, v, ptx.Int(0))).Bra(exit)
	return exit
}
