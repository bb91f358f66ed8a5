package kernel

import (
	"github.com/go-gpu/gpu/ptx"
)

// The tuning options of ScanTiles (see its documentation): the wide look-back
// (Lookback > 0) and staged outputs (Stage).

// stagedArgs are the registers of build that the staged tail uses.
type stagedArgs struct {
	pst, tile, r, tpr, lane, warp, tid ptx.Reg
	tid0, initV                        ptx.Reg
	ta, tp                             []ptx.Reg // tile aggregate, thread's in-tile prefix (Group 1)
	hp                                 ptx.Reg   // whether tp holds a value (all threads but 0)
	full                               ptx.Reg
	tileLen                            ptx.Reg
	aout                               ptx.Reg
}

// stageLocal emits the thread's local scan of a staged tile (Stage) right after its
// loads: s[i] = x[0] ⊕ ... ⊕ x[i] (valid[i] guards the elements of a partial tile, a
// suffix of them invalid; nil for a full tile), written blocked into the warp's staging
// area (word l*kw + j at (l*kw + (l*kw)/32 + j)*4: kw divides 32), slot i holding s[i]
// for an inclusive scan and s[i-1] for an exclusive one (slot 0: any value). It returns
// the thread's aggregate. The elements are dead afterwards: they don't occupy
// registers through the warp scan, the barriers and the look-back.
func (tg *tilesGen) stageLocal(x, valid []ptx.Reg, lane, warp ptx.Reg) ptx.Reg {
	s, g := tg.s, tg.g
	f := g.f
	K := s.Items
	kw := K * g.nwords()
	slots := make([]ptx.Reg, K)
	run := x[0]
	for i := 0; i < K; i++ {
		if i > 0 {
			if valid != nil {
				run = g.sel(valid[i], g.op(run, x[i]), run)
			} else {
				run = g.op(run, x[i])
			}
		}
		if !s.Exclusive {
			slots[i] = run
		} else if i+1 < K {
			slots[i+1] = run
		}
	}
	if s.Exclusive {
		slots[0] = x[0]
	}
	wb := f.Reg(ptx.U32)
	f.Op("mov.u32", wb, ptx.Sym("sc_xs"))
	f.Fma(wb, warp, ptx.Int(4*tg.xsWords()), wb)
	lw := f.Reg(ptx.U32)
	f.Mul(lw, lane, ptx.Int(kw))
	pad := f.Reg(ptx.U32)
	f.Shr(pad, lw, ptx.Int(5))
	f.Add(lw, lw, pad)
	f.Fma(wb, lw, ptx.Int(4), wb)
	j := 0
	for _, v := range slots {
		for _, w := range g.words(v) {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(wb, int64(4*j)), w)
			j++
		}
	}
	return run
}

// stagedTail emits steps 4 and 5 of a staged tile (Stage; Group 1, 4- or 8-byte
// accumulator, Items*nwords in 4, 8, 16, 32), whose local scans are staged
// (stageLocal):
//
//   - warp 0 of a tile r > 0 looks back and publishes the inclusive prefix (tile 0 of
//     a row publishes at once), thread 0 leaves the tile's prefix in sc_pv; the other
//     warps go straight to the barrier, holding only their thread prefixes;
//   - after bar.sync each thread combines the tile's prefix P (init for the first tile
//     of an exclusive scan, none for the first tile of an inclusive one) with its
//     in-tile prefix: Q = P ⊕ tp; then reads 4 striped words per row of its warp's
//     staging area, takes Q of the row's owner lane with shfl.idx (a lane's 4 words lie
//     in one lane's chunk), and stores Q ⊕ s (Q alone for the first element of a
//     chunk in an exclusive scan; s alone when Q is absent): one 16-byte store per row
//     for full tiles with Vector, guarded scalar stores otherwise.
func (tg *tilesGen) stagedTail(a stagedArgs) {
	s, g := tg.s, tg.g
	f := g.f
	K := s.Items
	nw := g.nwords()
	kw := K * nw
	size := s.Comb.Type.Size()

	// 4. The tile's prefix.
	rZero := f.Setp(ptx.Eq, a.r, ptx.Int(0))
	notFirst, prefixDone := f.NewLabel(), f.NewLabel()
	f.AtNot(rZero).Bra(notFirst)
	{
		pub := f.Reg(ptx.Pred)
		f.Op("and.pred", pub, a.tid0, f.Setp(ptx.Gt, a.tpr, ptx.Int(1)))
		skip := f.NewLabel()
		f.AtNot(pub).Bra(skip)
		incl := a.ta
		if s.Exclusive {
			incl = []ptx.Reg{g.op(a.initV, a.ta[0])}
		}
		tg.publish(a.pst, a.tile, scanFlagIncl, incl)
		f.Place(skip)
		f.Bra(prefixDone)
	}
	f.Place(notFirst)
	{
		skipA := f.NewLabel()
		f.AtNot(a.tid0).Bra(skipA)
		tg.publish(a.pst, a.tile, scanFlagAgg, a.ta)
		f.Place(skipA)
		f.AtNot(f.Setp(ptx.Eq, a.warp, ptx.Int(0))).Bra(prefixDone)
		var X []ptx.Reg
		if s.Lookback > 0 {
			X = tg.lookbackWide(a.pst, a.tile, a.r, a.lane, a.initV)
		} else {
			X = tg.lookback(a.pst, a.tile, a.r, a.lane, a.initV)
		}
		skipP := f.NewLabel()
		f.AtNot(a.tid0).Bra(skipP)
		for i, w := range g.words(X[0]) {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ptx.Sym("sc_pv"), int64(i*4)), w)
		}
		tg.publish(a.pst, a.tile, scanFlagIncl, []ptx.Reg{g.op(X[0], a.ta[0])})
		f.Place(skipP)
	}
	f.Place(prefixDone)
	f.BarSync(0)

	// 5. Q = P ⊕ tp per thread, then the striped rows.
	ws := make([]ptx.Reg, nw)
	for i := range ws {
		ws[i] = f.Reg(ptx.B32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ptx.Sym("sc_pv"), int64(i*4)), ws[i])
	}
	P := g.sel(rZero, a.initV, g.value(ws))
	hasP := f.Reg(ptx.Pred)
	f.Op("not.pred", hasP, rZero)
	if s.Exclusive {
		f.Op("setp.eq.u32", hasP, a.tid, a.tid) // always: init or the look-back's
	}
	_, Q := g.combineHas(hasP, P, a.hp, a.tp[0])
	// Q is absent only for thread 0 of the first tile of an inclusive scan: the row's
	// owner lane is 0 in warp 0 of a tile r == 0.
	noQ0 := f.Reg(ptx.Pred)
	f.Op("and.pred", noQ0, rZero, f.Setp(ptx.Eq, a.warp, ptx.Int(0)))
	// Striped reads: words 128r + 4l + q at (132r + 4l + l/8 + q)*4.
	rb := f.Reg(ptx.U32)
	f.Op("mov.u32", rb, ptx.Sym("sc_xs"))
	f.Fma(rb, a.warp, ptx.Int(4*tg.xsWords()), rb)
	lo4 := f.Reg(ptx.U32)
	f.Shl(lo4, a.lane, ptx.Int(2))
	l8 := f.Reg(ptx.U32)
	f.Shr(l8, a.lane, ptx.Int(3))
	f.Add(l8, l8, lo4)
	f.Fma(rb, l8, ptx.Int(4), rb)
	// The lane's output address in row 0: the warp's first element plus 16 bytes a lane.
	wo := f.Reg(ptx.U64)
	lo := f.Reg(ptx.U64)
	f.MulWide(lo, a.lane, ptx.Int(K*size))
	f.Sub(wo, a.aout, lo)
	lo16 := f.Reg(ptx.U64)
	f.MulWide(lo16, a.lane, ptx.Int(16))
	f.Add(wo, wo, lo16)
	vpr := 4 / nw // values per row and lane
	// The row's owner: lane (128r + 4l) / kw; the lane's first value is element
	// ((128r + 4l) % kw) / nw of the owner's chunk, which is r-invariant as kw | 128.
	shift := scanLog2(kw)
	owner0 := f.Reg(ptx.U32)
	f.Shr(owner0, lo4, ptx.Int(shift))
	first := f.Reg(ptx.Pred) // the lane's first value starts a chunk
	{
		m := f.Reg(ptx.U32)
		f.And(m, lo4, ptx.Int(kw-1))
		f.Op("setp.eq.u32", first, m, ptx.Int(0))
	}
	rowValues := func(rr int) []ptx.Reg {
		w := f.Regs(ptx.B32, 4)
		for q := range w {
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(rb, int64(4*(132*rr+q))), w[q])
		}
		owner := f.Reg(ptx.U32)
		f.Add(owner, owner0, ptx.Int(128*rr/kw))
		qr := g.shfl("idx", Q, owner, ptx.Int(31))
		out := make([]ptx.Reg, vpr)
		for q := range out {
			v := g.value(w[q*nw : (q+1)*nw])
			o := g.op(qr, v)
			switch {
			case s.Exclusive && q == 0:
				o = g.sel(first, qr, o)
			case !s.Exclusive && rr == 0:
				// Row 0 is the only one whose owners include lane 0 (kw <= 32).
				// Only the first value of lane 0 is the element itself (the row's
				// first): canonical (Combine.canonFirst); the others are combinations.
				none := f.Reg(ptx.Pred)
				f.Op("and.pred", none, noQ0, f.Setp(ptx.Eq, owner, ptx.Int(0)))
				if q == 0 {
					v = g.canonFirst(v)
				}
				o = g.sel(none, v, o)
			}
			out[q] = o
		}
		return out
	}
	done := f.NewLabel()
	if s.Vector {
		partial := f.NewLabel()
		f.AtNot(a.full).Bra(partial)
		for rr := 0; rr < kw/4; rr++ {
			var w []ptx.Operand
			for _, v := range rowValues(rr) {
				for _, x := range g.words(v) {
					w = append(w, x)
				}
			}
			f.St(ptx.Global, ptx.CacheDefault, ptx.B32, ptx.Mem(wo, int64(512*rr)), w...)
		}
		f.Bra(done)
		f.Place(partial)
	}
	// Element index in the tile of the lane's first value of row 0.
	eb := f.Reg(ptx.U32)
	f.Mul(eb, a.warp, ptx.Int(32*K))
	le := f.Reg(ptx.U32)
	f.Mul(le, a.lane, ptx.Int(vpr))
	f.Add(eb, eb, le)
	for rr := 0; rr < kw/4; rr++ {
		out := rowValues(rr)
		for q, v := range out {
			e := f.Reg(ptx.U32)
			f.Add(e, eb, ptx.Int(rr*128/nw+q))
			skip := f.NewLabel()
			f.AtNot(f.Setp(ptx.Lt, e, a.tileLen)).Bra(skip)
			storeValue(f, g.t, ptx.Mem(wo, int64(512*rr+q*size)), v)
			f.Place(skip)
		}
	}
	f.Place(done)
	tg.finish()
}

// lookbackWide is the wide look-back (Lookback = n > 0), in warp 0 of a tile r > 0 of
// its row; it returns the tile's exclusive prefix (valid in lane 0). Window w covers
// predecessors r-1-32n*w-p for positions p = 0 .. 32n-1; lane l loads positions
// l*n .. l*n+n-1 (all n loads issued before any is used). Scanning its slots in
// order, a lane is blocked at a slot not yet published, or terminated at a slot with
// an inclusive prefix (the virtual tile before the row, holding init for exclusive
// scans, counts as one). The warp waits (nanosleep, reload) while a blocked lane is
// at or before the first terminated lane; then each lane folds its slots up to its
// stop (the earlier tile on the left), and the lanes up to the first terminated one
// are folded with a shuffle-down tree as in lookback.
func (tg *tilesGen) lookbackWide(pst, tile, r, lane ptx.Reg, initV ptx.Reg) []ptx.Reg {
	s, g := tg.s, tg.g
	f := g.f
	G := s.Group
	L := s.Lookback
	nw := g.nwords()
	var st statusRegs
	if !s.Packed() {
		st = tg.layoutReg(pst)
	}
	first := f.Reg(ptx.U32)
	f.Sub(first, tile, r)
	base := f.Reg(ptx.S32) // the nearest predecessor of the window, in the row
	f.Sub(base, r.As(ptx.S32), ptx.Int(1))
	lo := f.Reg(ptx.S32)
	f.Mul(lo, lane.As(ptx.S32), ptx.Int(L))
	hx := f.Reg(ptx.Pred)
	f.Op("setp.ne.u32", hx, lane, lane) // false
	X := make([]ptx.Reg, G)
	for c := range X {
		X[c] = g.zero()
	}
	// The slots' registers, written at each window: lane l's slot q is tile tj - q,
	// its status word at fa + (L-1-q)*stride (fa: the address of tile tj - (L-1), an
	// address before the status when that tile is before the row's first one).
	valid := make([]ptx.Reg, L)
	flag := make([]ptx.Reg, L)
	words := make([][]ptx.Reg, L)
	for q := range L {
		valid[q] = f.Reg(ptx.Pred)
		flag[q] = f.Reg(ptx.U32)
		if s.Packed() {
			words[q] = f.Regs(ptx.B32, s.PackedWords())
		}
	}
	j, tj, fa := f.Reg(ptx.S32), f.Reg(ptx.U32), f.Reg(ptx.U64)
	stride := int64(4)
	if s.Packed() {
		stride = int64(8 * s.PackedWords())
	}
	addrs := func() {
		f.Sub(j, base, lo)
		for q := range L {
			f.Op("setp.ge.s32", valid[q], j, ptx.Int(q))
		}
		f.Add(tj, first, j.As(ptx.U32))
		f.MulWide(fa, tj, ptx.Int(stride))
		if s.Packed() {
			f.Add(fa, fa, pst)
		} else {
			f.Add(fa, fa, st.flags)
		}
		if L > 1 {
			f.Sub(fa, fa, ptx.Int(int(stride)*(L-1)))
		}
	}
	loads := func() {
		for q := range L {
			f.Mov(flag[q], ptx.Int(scanFlagIncl))
			if s.Packed() {
				tg.loadPacked(valid[q], fa, 16+stride*int64(L-1-q), words[q], flag[q])
			} else {
				f.At(valid[q]).Op("ld.relaxed.gpu.global.u32", flag[q], ptx.Mem(fa, stride*int64(L-1-q)))
			}
		}
	}
	loop, spin, check, done := f.NewLabel(), f.NewLabel(), f.NewLabel(), f.NewLabel()
	f.Place(loop)
	addrs()
	loads()
	f.Bra(check)
	f.Place(spin)
	spinPause(f, ptx.Reg{}, "sc_t0")
	loads()
	f.Place(check)
	// The lane's state along its slots: open, terminated or blocked.
	term, blk := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
	f.Op("setp.ne.u32", term, lane, lane) // false
	f.Op("setp.ne.u32", blk, lane, lane)
	inc := make([]ptx.Reg, L) // slot q ready and before the lane's stop
	isP := make([]ptx.Reg, L)
	for q := range L {
		open := f.Reg(ptx.Pred)
		f.Op("or.pred", open, term, blk)
		f.Op("not.pred", open, open)
		ready := f.Setp(ptx.Ne, flag[q], ptx.Int(0))
		isP[q] = f.Setp(ptx.Eq, flag[q], ptx.Int(scanFlagIncl))
		inc[q] = f.Reg(ptx.Pred)
		f.Op("and.pred", inc[q], open, ready)
		nb, nt := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
		f.Op("and.pred", nb, open, f.Setp(ptx.Eq, flag[q], ptx.Int(0)))
		f.Op("or.pred", blk, blk, nb)
		f.Op("and.pred", nt, open, isP[q])
		f.Op("or.pred", term, term, nt)
	}
	bm, tm := f.Reg(ptx.B32), f.Reg(ptx.B32)
	f.Vote("ballot", bm, blk, ptx.Uint(0xffffffff))
	f.Vote("ballot", tm, term, ptx.Uint(0xffffffff))
	// Lanes up to the first terminated one (all lanes when none): tm ^ (tm - 1).
	upto := f.Reg(ptx.U32)
	f.Sub(upto, tm.As(ptx.U32), ptx.Int(1))
	f.Xor(upto, upto, tm.As(ptx.U32))
	f.And(upto, upto, bm.As(ptx.U32))
	f.At(f.Setp(ptx.Ne, upto, ptx.Int(0))).Bra(spin)
	if !s.Packed() {
		f.Fence("acq_rel", "gpu")
	}
	// The slots' values: the status's, or init for the virtual tile before the row.
	v := make([][]ptx.Reg, L)
	hasv := make([]ptx.Reg, L)
	for q := range L {
		v[q] = make([]ptx.Reg, G)
		if s.Packed() {
			v[q][0] = g.value(words[q])
		} else {
			tq := f.Reg(ptx.U32)
			f.Sub(tq, tj, ptx.Int(q))
			va, vi := f.Reg(ptx.U64), f.Reg(ptx.U64)
			f.MulWide(va, tq, ptx.Int(tg.vecBytes()))
			f.Add(vi, va, st.incl)
			f.Add(va, va, st.agg)
			f.At(isP[q]).Op("mov.b64", va, vi)
			ld := f.Reg(ptx.Pred)
			f.Op("and.pred", ld, valid[q], inc[q])
			for c := 0; c < G; c++ {
				ws := make([]ptx.Reg, nw)
				for i := range ws {
					ws[i] = f.Reg(ptx.B32)
					f.Mov(ws[i], ptx.Int(0))
					f.At(ld).Op("ld.relaxed.gpu.global.b32", ws[i], ptx.Mem(va, int64((c*nw+i)*4)))
				}
				v[q][c] = g.value(ws)
			}
		}
		hasv[q] = valid[q]
		if s.Exclusive {
			for c := range v[q] {
				v[q][c] = g.sel(valid[q], v[q][c], initV)
			}
			hasv[q] = inc[q]
		} else {
			h := f.Reg(ptx.Pred)
			f.Op("and.pred", h, valid[q], inc[q])
			hasv[q] = h
		}
	}
	// The lane's fold: its slots up to its stop, the earlier (higher) slot on the left.
	acc := make([]ptx.Reg, G)
	copy(acc, v[L-1])
	hl := hasv[L-1]
	for q := L - 2; q >= 0; q-- {
		var hn ptx.Reg
		for c := range acc {
			hn, acc[c] = g.combineHas(hl, acc[c], hasv[q], v[q][c])
		}
		hl = hn
	}
	// Lanes up to the first terminated one contribute.
	pos := lowestSetBit(f, tm)
	h := f.Reg(ptx.Pred)
	f.Op("and.pred", h, f.Setp(ptx.Le, lane, pos), hl)
	for d := 1; d < 32; d *= 2 {
		hy := shflPred(f, "down", h, ptx.Int(d), ptx.Int(31))
		ok := f.Reg(ptx.Pred)
		f.Op("and.pred", ok, hy, f.Setp(ptx.Lt, lane, ptx.Int(32-d)))
		var hn ptx.Reg
		for c := range acc {
			y := g.shfl("down", acc[c], ptx.Int(d), ptx.Int(31))
			hn, acc[c] = g.combineHas(ok, y, h, acc[c])
		}
		h = hn
	}
	// The window is earlier than what X holds: X = W ⊕ X.
	var hn ptx.Reg
	for c := range X {
		var nx ptx.Reg
		hn, nx = g.combineHas(h, acc[c], hx, X[c])
		g.movTo(X[c], nx)
	}
	g.movPred(hx, hn)
	f.At(f.Setp(ptx.Ne, tm, ptx.Int(0))).Bra(done)
	f.Sub(base, base, ptx.Int(32*L))
	f.Bra(loop)
	f.Place(done)
	return X
}
