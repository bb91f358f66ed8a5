package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// PTX returns the pass's PTX (TopKRadix's doc has the algorithm).
func (r *TopKRadix) PTX(major, minor int) (src, entry string, err error) {
	if err := r.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = fmt.Sprintf("topk_radix%d", r.Pass)
	names := []string{"keys", "scratch", "state", "buf1", "buf2", "sure", "outKeys", "outIdx",
		"rowLen", "chunk", "chunks", "k", "cap1", "cap2"}
	params := make([]ptx.Param, len(names))
	for i, n := range names {
		params[i] = ptx.P(n, ptx.U64)
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	if LiftRegCap {
		// (three blocks a multiprocessor, TopKRadixBlocksPerSM; CUDA 13's ptxas
		// picks 32 or 64 registers without it, blockAttrs's doc)
		f.Attr(fmt.Sprintf(".maxnreg %d", 65536/(TopKRadixBlocksPerSM*SortBlock)/8*8))
	}
	pass := r.Pass
	items := topkRadixItems
	shift, width := topkRadixShift(pass)
	bins := 1 << width
	copies := 1
	if pass == 0 {
		copies = TopKRadixCopies
	}
	f.Shared("tx_hist", ptx.B32, 16, copies*bins)
	f.Shared("tx_sum", ptx.B64, 8, SortBlock/32)
	f.Shared("tx_w", ptx.B32, 16, 8)
	g := newSortGen(f, r.Order, items)
	ptr := func(i int) ptx.Reg {
		p := f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, p, f.LdParam(i))
		return p
	}
	pk, pscr, pst, pb1, pb2, psure := ptr(0), ptr(1), ptr(2), ptr(3), ptr(4), ptr(5)
	rowLen, chunk, chunks, k64 := f.LdParam(8), f.LdParam(9), f.LdParam(10), f.LdParam(11)
	cap1, cap2 := f.LdParam(12), f.LdParam(13)
	u32 := func(x ptx.Reg) ptx.Reg {
		y := f.Reg(ptx.U32)
		f.Cvt(y, x)
		return y
	}
	k := u32(k64)
	hb, wb := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Op("mov.u32", hb, ptx.Sym("tx_hist"))
	f.Op("mov.u32", wb, ptx.Sym("tx_w"))
	zero := f.Reg(ptx.U32)
	f.Mov(zero, ptx.Int(0))
	{
		a := f.Reg(ptx.U32)
		f.Fma(a, g.tid, ptx.Int(4), hb)
		for j := 0; j < copies*bins/SortBlock; j++ {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(j*SortBlock*4)), zero)
		}
	}
	f.BarSync(0)
	b := f.Reg(ptx.U64)
	f.Cvt(b, f.Special(ptx.CtaidX))
	row := f.Reg(ptx.U64)
	f.Div(row, b, chunks)
	cI := f.Reg(ptx.U64)
	f.Mul(cI, row, chunks)
	f.Sub(cI, b, cI)
	rowBase := f.Reg(ptx.U64)
	f.Mul(rowBase, row, rowLen)
	tid64 := f.Reg(ptx.U64)
	f.Cvt(tid64, g.tid)
	scr := f.Reg(ptx.U64)
	f.Fma(scr, row, ptx.Int(TopKRadixScratchWords*4), pscr)
	sa := f.Reg(ptx.U64)
	f.Fma(sa, row, ptx.Int(16), pst)
	rows := f.Reg(ptx.U64)
	f.Cvt(rows, f.Special(ptx.NctaidX))
	f.Div(rows, rows, chunks)
	flagAddr := f.Reg(ptx.U64)
	f.Fma(flagAddr, rows, ptx.Int(16), pst)
	kRow := f.Reg(ptx.U64)
	f.Mul(kRow, row, k64)
	prefix := f.Reg(ptx.U32)
	f.Mov(prefix, ptx.Int(0))
	if pass > 0 {
		x := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), x)
		f.Cvt(prefix, x)
	}
	cb := f.Reg(ptx.U32)
	{
		cp := f.Reg(ptx.U32)
		f.And(cp, g.lane, ptx.Int(copies-1))
		f.Fma(cb, cp, ptx.Int(bins*4), hb)
	}
	// What a pass does with a key, and the candidates' appends.
	var capR, pbuf, bufRow, cntOff ptx.Reg
	var lo, hiPre ptx.Reg
	hiSh := 21 // the bits above the digit: pass 1 compares o>>21, pass 2 o>>10
	if pass > 0 {
		capR, pbuf, cntOff = cap1, pb1, f.Reg(ptx.U64)
		f.Mov(cntOff, ptx.Int((TopKRadixBins+1)*4))
		if pass == 2 {
			capR, pbuf, hiSh = cap2, pb2, 10
			f.Mov(cntOff, ptx.Int((TopKRadixBins+2)*4))
		}
		bufRow = f.Reg(ptx.U64)
		f.Mul(bufRow, row, capR)
		hiPre = f.Reg(ptx.U32)
		f.Shr(hiPre, prefix, ptx.Int(hiSh))
		lo = f.Reg(ptx.U32)
		f.And(lo, prefix, ptx.Uint(0xffe00000))
		if pass == 1 {
			f.Mov(lo, ptx.Int(0))
		}
	}
	capU := f.Reg(ptx.U32)
	if pass > 0 {
		f.Cvt(capU, capR)
	}
	type item struct{ o, idx, hit ptx.Reg }
	process := func(o, idx, valid ptx.Reg) item {
		d := f.Reg(ptx.U32)
		f.Shr(d, o, ptx.Int(int(shift)))
		if pass != 0 {
			f.And(d, d, ptx.Int(bins-1))
		}
		a := f.Reg(ptx.U32)
		f.Fma(a, d, ptx.Int(4), cb)
		if pass == 0 {
			f.At(valid).Op("red.shared.add.u32", ptx.Mem(a, 0), ptx.Int(1))
			return item{}
		}
		oh := f.Reg(ptx.U32)
		f.Shr(oh, o, ptx.Int(hiSh))
		hit := f.Reg(ptx.Pred)
		f.Op("and.pred", hit, valid, f.Setp(ptx.Eq, oh, hiPre))
		f.At(hit).Op("red.shared.add.u32", ptx.Mem(a, 0), ptx.Int(1))
		s := f.Reg(ptx.Pred)
		f.Op("and.pred", s, valid, f.Setp(ptx.Lt, o, prefix))
		f.Op("and.pred", s, s, f.Setp(ptx.Ge, o, lo))
		skip := f.NewLabel()
		f.AtNot(s).Bra(skip)
		pos := f.Reg(ptx.U32)
		na := f.Reg(ptx.U64)
		f.Add(na, scr, ptx.Int((TopKRadixBins+3)*4))
		f.Atom("", "", ptx.Global, "add", ptx.U32, pos, ptx.Mem(na, 0), ptx.Int(1))
		f.At(f.Setp(ptx.Ge, pos, k)).Bra(skip)
		comp := f.Reg(ptx.U64)
		f.Op("mov.b64", comp, ptx.Vec{idx.As(ptx.B32), o.As(ptx.B32)})
		sp := f.Reg(ptx.U64)
		f.Cvt(sp, pos)
		f.Add(sp, sp, kRow)
		f.Fma(sp, sp, ptx.Int(8), psure)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sp, 0), comp)
		f.Place(skip)
		return item{o, idx, hit}
	}
	// appendHits writes the iteration's hits to the pass's buffer at positions the
	// block reserves with one atomic add (the count goes on past the capacity).
	appendHits := func(its []item) {
		if pass == 0 {
			return
		}
		h := f.Reg(ptx.U32)
		f.Mov(h, ptx.Int(0))
		for _, it := range its {
			f.At(it.hit).Op("add.u32", h, h, ptx.Int(1))
		}
		excl, total := g.blockScan(h, "tx_sum")
		none := f.NewLabel()
		f.At(f.Setp(ptx.Eq, total, ptx.Int(0))).Bra(none) // (block-uniform)
		{
			skip := f.NewLabel()
			f.AtNot(f.Setp(ptx.Eq, g.tid, ptx.Int(0))).Bra(skip)
			ca := f.Reg(ptx.U64)
			f.Add(ca, scr, cntOff)
			base := f.Reg(ptx.U32)
			f.Atom("", "", ptx.Global, "add", ptx.U32, base, ptx.Mem(ca, 0), total)
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(wb, 0), base)
			f.Place(skip)
		}
		f.BarSync(0)
		pos := f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(wb, 0), pos)
		f.Add(pos, pos, excl)
		for _, it := range its {
			w := f.Reg(ptx.Pred)
			f.Op("and.pred", w, it.hit, f.Setp(ptx.Lt, pos, capU))
			comp := f.Reg(ptx.U64)
			f.Op("mov.b64", comp, ptx.Vec{it.idx.As(ptx.B32), it.o.As(ptx.B32)})
			a := f.Reg(ptx.U64)
			f.Cvt(a, pos)
			f.Add(a, a, bufRow)
			f.Fma(a, a, ptx.Int(8), pbuf)
			f.At(w).Op("st.global.u64", ptx.Mem(a, 0), comp)
			f.At(it.hit).Op("add.u32", pos, pos, ptx.Int(1))
		}
		f.Place(none)
		// (the next iteration's block scan writes tx_sum after the barrier above, or
		// after its own when no thread had a hit: the scan's loads precede both)
		f.BarSync(0)
	}
	ks := 4
	// keysLoop runs over the block's chunk of the row's keys.
	keysLoop := func() {
		start := f.Reg(ptx.U64)
		f.Mul(start, cI, chunk)
		end := f.Reg(ptx.U64)
		f.Add(end, start, chunk)
		f.Min(end, end, rowLen)
		G := 1
		if r.Vector {
			G = 16 / ks
		}
		// itemAt returns item j's index in the row (u64) of the iteration at i.
		itemAt := func(i ptx.Reg, j int) ptx.Reg {
			ie := f.Reg(ptx.U64)
			f.Add(ie, i, ptx.Int((j/G)*SortBlock*G+j%G))
			return ie
		}
		// loadAt loads the thread's keys of the iteration at i (past end: none).
		loadAt := func(i ptx.Reg) []ptx.Reg {
			keys := make([]ptx.Reg, items)
			for j := 0; j < items; j += G {
				ij := itemAt(i, j)
				a := f.Reg(ptx.U64)
				f.Add(a, ij, rowBase)
				f.Fma(a, a, ptx.Int(ks), pk)
				if !r.Vector {
					keys[j] = loadElem(f, ks, f.Setp(ptx.Lt, ij, end), ptx.Mem(a, 0), true)
					continue
				}
				ijG := f.Reg(ptx.U64)
				f.Add(ijG, ij, ptx.Int(G))
				full := f.Setp(ptx.Le, ijG, end)
				for e := 0; e < G; e++ {
					keys[j+e] = f.Reg(ptx.U32)
					f.Mov(keys[j+e], ptx.Int(0))
				}
				f.At(full).Op(fmt.Sprintf("ld.global.nc.v%d.u32", G), ptx.Vec(keys[j:j+G]), ptx.Mem(a, 0))
				for e := 0; e < G; e++ {
					ie := f.Reg(ptx.U64)
					f.Add(ie, ij, ptx.Int(e))
					p := f.Reg(ptx.Pred)
					f.Op("and.pred", p, f.Setp(ptx.Lt, ie, end), notp(f, full))
					f.At(p).Op("ld.global.nc.u32", keys[j+e], ptx.Mem(a, int64(e*ks)))
				}
			}
			return keys
		}
		i := f.Reg(ptx.U64)
		th := f.Reg(ptx.U64)
		f.Mul(th, tid64, ptx.Int(G))
		f.Add(i, start, th)
		// The next iteration's keys are loaded before this one's counts (and appends:
		// the reservation's atomic and barriers overlap the loads).
		keys := loadAt(i)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		ib := f.Reg(ptx.U64)
		f.Sub(ib, i, th)
		f.At(f.Setp(ptx.Ge, ib, end)).Bra(done) // (block-uniform)
		i1 := f.Reg(ptx.U64)
		f.Add(i1, i, ptx.Int(items*SortBlock))
		nk := loadAt(i1)
		var its []item
		for j := range keys {
			ie := itemAt(i, j)
			its = append(its, process(g.ordered(keys[j]), u32(ie), f.Setp(ptx.Lt, ie, end)))
		}
		appendHits(its)
		for j := range keys {
			f.Mov(keys[j], nk[j])
		}
		f.Mov(i, i1)
		f.Bra(loop)
		f.Place(done)
	}
	afterLoops := f.NewLabel()
	if pass == 2 {
		// buf1 when it holds the whole bucket, else the keys again.
		c1 := f.Reg(ptx.U32)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(scr, (TopKRadixBins+1)*4), c1)
		c1w := f.Reg(ptx.U64)
		f.Cvt(c1w, c1)
		useKeys := f.NewLabel()
		f.At(f.Setp(ptx.Gt, c1w, cap1)).Bra(useKeys)
		{
			per := items / 2    // entries a thread reads in an iteration
			n := f.Reg(ptx.U64) // entries a block
			f.Add(n, c1w, chunks)
			f.Sub(n, n, ptx.Int(1))
			f.Div(n, n, chunks)
			start := f.Reg(ptx.U64)
			f.Mul(start, cI, n)
			end := f.Reg(ptx.U64)
			f.Add(end, start, n)
			f.Min(end, end, c1w)
			base := f.Reg(ptx.U64)
			f.Mul(base, row, cap1)
			i := f.Reg(ptx.U64)
			f.Mov(i, start)
			loop := f.NewLabel()
			f.Place(loop)
			f.At(f.Setp(ptx.Ge, i, end)).Bra(afterLoops) // (block-uniform)
			var its []item
			es := make([]ptx.Reg, per)
			vs := make([]ptx.Reg, per)
			for j := 0; j < per; j++ {
				ij := f.Reg(ptx.U64)
				f.Add(ij, i, tid64)
				f.Add(ij, ij, ptx.Int(j*SortBlock))
				vs[j] = f.Setp(ptx.Lt, ij, end)
				a := f.Reg(ptx.U64)
				f.Add(a, ij, base)
				f.Fma(a, a, ptx.Int(8), pb1)
				es[j] = f.Reg(ptx.U64)
				f.Mov(es[j], ptx.Int(0))
				f.At(vs[j]).Op("ld.global.nc.u64", es[j], ptx.Mem(a, 0))
			}
			for j := 0; j < per; j++ {
				lo32, hi32 := f.Reg(ptx.U32), f.Reg(ptx.U32)
				f.Op("mov.b64", ptx.Vec{lo32.As(ptx.B32), hi32.As(ptx.B32)}, es[j])
				its = append(its, process(hi32, lo32, vs[j]))
			}
			appendHits(its)
			f.Add(i, i, ptx.Int(per*SortBlock))
			f.Bra(loop)
		}
		f.Place(useKeys)
	}
	keysLoop()
	f.Place(afterLoops)
	// Flush the counts that the select step can read: thread t sums bins t*B to
	// t*B+B-1 over the copies, and a bin goes out when nonzero and the block's keys in
	// the bins before it are fewer than rem. (The bin of the k-th key is at most the
	// first where this block alone reaches rem: every bin up to it goes out from every
	// block, and the step reads no count past it. Most blocks send a few bins.)
	rem := f.Reg(ptx.U32)
	f.Mov(rem, k)
	if pass > 0 {
		x := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 8), x)
		f.Cvt(rem, x)
	}
	B := bins / SortBlock
	f.BarSync(0)
	{
		vs := f.Regs(ptx.U32, B)
		a := f.Reg(ptx.U32)
		f.Fma(a, g.tid, ptx.Int(B*4), hb)
		sum := f.Reg(ptx.U32)
		f.Mov(sum, ptx.Int(0))
		for j, v := range vs {
			f.Mov(v, ptx.Int(0))
			for cp := 0; cp < copies; cp++ {
				x := f.Reg(ptx.U32)
				f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64((cp*bins+j)*4)), x)
				f.Add(v, v, x)
			}
			f.Add(sum, sum, v)
		}
		run, _ := g.blockScan(sum, "tx_sum")
		ga := f.Reg(ptx.U64)
		f.Mul(ga, tid64, ptx.Int(B*4))
		f.Add(ga, ga, scr)
		for j, v := range vs {
			w := f.Reg(ptx.Pred)
			f.Op("and.pred", w, f.Setp(ptx.Ne, v, ptx.Int(0)), f.Setp(ptx.Lt, run, rem))
			f.At(w).Op("red.global.add.u32", ptx.Mem(ga, int64(j*4)), v)
			f.Add(run, run, v)
		}
	}
	// The ticket: the row's last block goes on.
	fence := func() {
		if major*10+minor >= 70 {
			f.Fence("acq_rel", "gpu")
		} else {
			f.Membar("gl")
		}
	}
	if pass > 0 {
		fence() // (every thread's appends, before the barrier and the ticket)
	}
	f.BarSync(0)
	exit := f.NewLabel()
	isT0 := f.Setp(ptx.Eq, g.tid, ptx.Int(0))
	{
		skip := f.NewLabel()
		f.AtNot(isT0).Bra(skip)
		fence() // release: the block's counts and appends before its ticket
		old := f.Reg(ptx.U32)
		f.Atom("", "", ptx.Global, "add", ptx.U32, old, ptx.Mem(scr, TopKRadixBins*4), ptx.Int(1))
		last1 := u32(chunks)
		f.Sub(last1, last1, ptx.Int(1))
		last := f.Setp(ptx.Eq, old, last1)
		fl := f.Reg(ptx.U32)
		f.Selp(fl, ptx.Int(1), ptx.Int(0), last)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(wb, 4), fl)
		f.AtNot(last).Bra(skip)
		fence() // acquire: the other blocks' counts and appends
		f.Place(skip)
	}
	f.BarSync(0)
	{
		fl := f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(wb, 4), fl)
		f.At(f.Setp(ptx.Eq, fl, ptx.Int(0))).Bra(exit)
	}
	// The select step: thread t holds bins t*B to t*B+B-1.
	ha := f.Reg(ptx.U64)
	f.Mul(ha, tid64, ptx.Int(B*4))
	f.Add(ha, ha, scr)
	cs := f.Regs(ptx.U32, B)
	for j := 0; j < B; j += 4 {
		f.Ld(ptx.Global, ptx.CacheCG, ptx.U32, ptx.Mem(ha, int64(j*4)), cs[j:j+4]...)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(ha, int64(j*4)), zero, zero, zero, zero)
	}
	sum := f.Reg(ptx.U32)
	f.Mov(sum, ptx.Int(0))
	for _, c := range cs {
		f.Add(sum, sum, c)
	}
	excl, _ := g.blockScan(sum, "tx_sum")
	run := f.Reg(ptx.U32)
	f.Mov(run, excl)
	for j, c := range cs {
		incl := f.Reg(ptx.U32)
		f.Add(incl, run, c)
		found := f.Reg(ptx.Pred)
		f.Op("and.pred", found, f.Setp(ptx.Lt, run, rem), f.Setp(ptx.Le, rem, incl))
		skip := f.NewLabel()
		f.AtNot(found).Bra(skip)
		d := f.Reg(ptx.U32)
		f.Fma(d, g.tid, ptx.Int(B), ptx.Int(j))
		f.Shl(d, d, ptx.Int(int(shift)))
		np := f.Reg(ptx.U32)
		f.Or(np, prefix, d)
		nr := f.Reg(ptx.U32)
		f.Sub(nr, rem, run)
		np64, nr64 := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Cvt(np64, np)
		f.Cvt(nr64, nr)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), np64, nr64)
		if pass == 2 {
			for w, v := range []ptx.Reg{np, nr, c} {
				f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(wb, int64(8+4*w)), v)
			}
		}
		f.Place(skip)
		f.Mov(run, incl)
	}
	if pass != 2 {
		skip := f.NewLabel()
		f.AtNot(isT0).Bra(skip)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(scr, TopKRadixBins*4), zero)
		if pass == 0 {
			// Volatile: the last blocks of several rows store it (the one flag).
			f.Op("st.volatile.global.u32", ptx.Mem(flagAddr, 0), zero)
		}
		f.Place(skip)
		f.Place(exit)
		f.Ret()
		return m.String(), entry, nil
	}
	r.finish(f, g, finishRegs{pk: pk, pb2: pb2, psure: psure, scr: scr, flagAddr: flagAddr, rowBase: rowBase, row: row,
		kRow: kRow, cap2: cap2, k: k, hb: hb, wb: wb, zero: zero, isT0: isT0})
	f.Place(exit)
	f.Ret()
	return m.String(), entry, nil
}

type finishRegs struct {
	pk, pb2, psure, scr, flagAddr, rowBase, row, kRow, cap2 ptx.Reg // u64
	k, hb, wb, zero                                         ptx.Reg // u32
	isT0                                                    ptx.Reg
}

// finish emits pass 2's end in the row's last block: the ties taken, the k gathered
// and ordered, the scratch cleared (TopKRadix's doc).
func (r *TopKRadix) finish(f *ptx.Func, g *sortGen, x finishRegs) {
	f.BarSync(0)
	T, rem, E := f.Reg(ptx.U32), f.Reg(ptx.U32), f.Reg(ptx.U32)
	for w, v := range []ptx.Reg{T, rem, E} {
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(x.wb, int64(8+4*w)), v)
	}
	c2, ns := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Ld(ptx.Global, ptx.CacheCG, ptx.U32, ptx.Mem(x.scr, (TopKRadixBins+2)*4), c2, ns)
	cleanup := f.NewLabel()
	{
		c2w := f.Reg(ptx.U64)
		f.Cvt(c2w, c2)
		ok := f.NewLabel()
		f.At(f.Setp(ptx.Le, c2w, x.cap2)).Bra(ok)
		one := f.Reg(ptx.U32)
		f.Mov(one, ptx.Int(1))
		// Volatile: the finishing blocks of several rows may store it at once.
		f.At(x.isT0).Op("st.volatile.global.u32", ptx.Mem(x.flagAddr, 0), one)
		f.Bra(cleanup)
		f.Place(ok)
	}
	b2Row := f.Reg(ptx.U64)
	f.Mul(b2Row, x.row, x.cap2)
	// forB2 runs body over buf2's entries of the row (thread-strided).
	forB2 := func(body func(o, idx ptx.Reg)) {
		i := f.Reg(ptx.U32)
		f.Mov(i, g.tid)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, i, c2)).Bra(done)
		a := f.Reg(ptx.U64)
		f.Cvt(a, i)
		f.Add(a, a, b2Row)
		f.Fma(a, a, ptx.Int(8), x.pb2)
		e := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheCG, ptx.U64, ptx.Mem(a, 0), e)
		lo32, hi32 := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Op("mov.b64", ptx.Vec{lo32.As(ptx.B32), hi32.As(ptx.B32)}, e)
		body(hi32, lo32)
		f.Add(i, i, ptx.Int(SortBlock))
		f.Bra(loop)
		f.Place(done)
	}
	// The ties taken: indices up to lim.
	lim := f.Reg(ptx.U32)
	f.Mov(lim, ptx.Uint(0xffffffff))
	{
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Le, E, rem)).Bra(skip) // (block-uniform)
		ipre, irem := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Mov(ipre, ptx.Int(0))
		f.Mov(irem, rem)
		ta := f.Reg(ptx.U32)
		f.Fma(ta, g.tid, ptx.Int(4), x.hb)
		for ip := 3; ip >= 0; ip-- {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ta, 0), x.zero)
			f.BarSync(0)
			ph := f.Reg(ptx.U32)
			if ip < 3 {
				f.Shr(ph, ipre, ptx.Int(8*ip+8))
			}
			forB2(func(o, idx ptx.Reg) {
				w := f.Setp(ptx.Eq, o, T)
				if ip < 3 {
					h := f.Reg(ptx.U32)
					f.Shr(h, idx, ptx.Int(8*ip+8))
					f.Op("and.pred", w, w, f.Setp(ptx.Eq, h, ph))
				}
				d := f.Reg(ptx.U32)
				f.Shr(d, idx, ptx.Int(8*ip))
				f.And(d, d, ptx.Int(255))
				a := f.Reg(ptx.U32)
				f.Fma(a, d, ptx.Int(4), x.hb)
				f.At(w).Op("red.shared.add.u32", ptx.Mem(a, 0), ptx.Int(1))
			})
			f.BarSync(0)
			c := f.Reg(ptx.U32)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ta, 0), c)
			ex, _ := g.blockScan(c, "tx_sum")
			in := f.Reg(ptx.U32)
			f.Add(in, ex, c)
			found := f.Reg(ptx.Pred)
			f.Op("and.pred", found, f.Setp(ptx.Lt, ex, irem), f.Setp(ptx.Le, irem, in))
			np, nr := f.Reg(ptx.U32), f.Reg(ptx.U32)
			f.Shl(np, g.tid, ptx.Int(8*ip))
			f.Or(np, np, ipre)
			f.Sub(nr, irem, ex)
			f.At(found).Op("st.shared.v2.u32", ptx.Mem(x.wb, 24), ptx.Vec{np, nr})
			f.BarSync(0)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(x.wb, 24), ipre, irem)
			f.BarSync(0)
		}
		f.Mov(lim, ipre)
		f.Place(skip)
	}
	// Gather the k composites into shared memory (over the counts).
	{
		f.At(x.isT0).Op("st.shared.u32", ptx.Mem(x.wb, 20), x.zero)
		f.BarSync(0)
		put := func(e ptx.Reg, w ptx.Reg) {
			skip := f.NewLabel()
			f.AtNot(w).Bra(skip)
			p := f.Reg(ptx.U32)
			f.Atom("", "", ptx.Shared, "add", ptx.U32, p, ptx.Mem(x.wb, 20), ptx.Int(1))
			f.At(f.Setp(ptx.Ge, p, x.k)).Bra(skip)
			a := f.Reg(ptx.U32)
			f.Fma(a, p, ptx.Int(8), x.hb)
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), e)
			f.Place(skip)
		}
		i := f.Reg(ptx.U32)
		f.Mov(i, g.tid)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, i, ns)).Bra(done)
		a := f.Reg(ptx.U64)
		f.Cvt(a, i)
		f.Add(a, a, x.kRow)
		f.Fma(a, a, ptx.Int(8), x.psure)
		e := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheCG, ptx.U64, ptx.Mem(a, 0), e)
		always := f.Setp(ptx.Eq, i, i)
		put(e, always)
		f.Add(i, i, ptx.Int(SortBlock))
		f.Bra(loop)
		f.Place(done)
		forB2(func(o, idx ptx.Reg) {
			take := f.Reg(ptx.Pred)
			f.Op("and.pred", take, f.Setp(ptx.Eq, o, T), f.Setp(ptx.Le, idx, lim))
			f.Op("or.pred", take, take, f.Setp(ptx.Lt, o, T))
			e := f.Reg(ptx.U64)
			f.Op("mov.b64", e, ptx.Vec{idx.As(ptx.B32), o.As(ptx.B32)})
			put(e, take)
		})
		f.BarSync(0)
	}
	// Rank sort (the composites are distinct) and the outputs.
	{
		i := f.Reg(ptx.U32)
		f.Mov(i, g.tid)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, i, x.k)).Bra(done)
		a := f.Reg(ptx.U32)
		f.Fma(a, i, ptx.Int(8), x.hb)
		e := f.Reg(ptx.U64)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), e)
		rank := f.Reg(ptx.U32)
		f.Mov(rank, ptx.Int(0))
		j := f.Reg(ptx.U32)
		f.Mov(j, x.hb)
		end := f.Reg(ptx.U32)
		f.Fma(end, x.k, ptx.Int(8), x.hb)
		inner, innerDone := f.NewLabel(), f.NewLabel()
		f.Place(inner)
		f.At(f.Setp(ptx.Ge, j, end)).Bra(innerDone)
		y := f.Reg(ptx.U64)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(j, 0), y)
		f.At(f.Setp(ptx.Lt, y, e)).Op("add.u32", rank, rank, ptx.Int(1))
		f.Add(j, j, ptx.Int(8))
		f.Bra(inner)
		f.Place(innerDone)
		idx := f.Reg(ptx.U32)
		f.Cvt(idx, e)
		idx64 := f.Reg(ptx.U64)
		f.Cvt(idx64, idx)
		ka := f.Reg(ptx.U64)
		f.Add(ka, idx64, x.rowBase)
		f.Fma(ka, ka, ptx.Int(4), x.pk)
		raw := f.Reg(ptx.U32)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(ka, 0), raw)
		d := f.Reg(ptx.U64)
		f.Cvt(d, rank)
		f.Add(d, d, x.kRow)
		oa := f.Reg(ptx.U64)
		pok, poi := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, pok, f.LdParam(6))
		f.CvtaTo(ptx.Global, poi, f.LdParam(7))
		f.Fma(oa, d, ptx.Int(4), pok)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(oa, 0), raw)
		f.Fma(oa, d, ptx.Int(8), poi)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(oa, 0), idx64)
		f.Add(i, i, ptx.Int(SortBlock))
		f.Bra(loop)
		f.Place(done)
	}
	f.Place(cleanup)
	f.BarSync(0) // (every thread's reads of the counts before they clear)
	skip := f.NewLabel()
	f.AtNot(x.isT0).Bra(skip)
	f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(x.scr, TopKRadixBins*4), x.zero, x.zero, x.zero, x.zero)
	f.Place(skip)
}
