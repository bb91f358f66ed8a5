package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// fusedRowsInFlight is how many rows of counts a warp of RadixFused loads at once when
// it adds the groups' and tiles' counts before its block (two 16-byte loads a lane a
// row: 8 in flight); the block's 8 warps take 32 rows a round, the most there are
// with up to 272 tiles.
const fusedRowsInFlight = 4

// gridBarrier emits a barrier of every block of the grid (all resident: a cooperative
// launch) on the u32 counter at bar, zero at the launch: the block's threads meet,
// thread 0 (tid0) publishes the block's writes (fence.acq_rel.gpu) and adds its
// arrival, then waits until the counter reaches target+grid (target advances by grid
// a barrier), with spinPause's bounded pauses (t0sym: spinStart's time), and the
// block's threads meet again. Data other blocks wrote before the barrier is read after
// it with ld.global.cg (L2), never through the incoherent L1 or the .nc path.
func gridBarrier(f *ptx.Func, tid0, bar, target, grid ptx.Reg, t0sym string) {
	gridArrive(f, tid0, bar, target, grid)
	gridWait(f, tid0, bar, target, t0sym)
}

// gridArrive is gridBarrier's first half: the block's writes so far are published and
// its arrival counted; the block may do work of its own before gridWait.
func gridArrive(f *ptx.Func, tid0, bar, target, grid ptx.Reg) {
	f.BarSync(0)
	f.Add(target, target, grid)
	skip := f.NewLabel()
	f.AtNot(tid0).Bra(skip)
	f.Op("fence.acq_rel.gpu")
	// (The fence and a relaxed add are a release pattern: a release add as well cost
	// the H200 1.2 µs a 512000-key sort, 2026-12-03.)
	f.Red("", "", ptx.Global, "add", ptx.U32, ptx.Mem(bar, 0), ptx.Int(1))
	f.Place(skip)
}

// gridWait is gridBarrier's second half: thread 0 waits for every block's arrival,
// then the block's threads meet. (Relaxed polls and one fence.acq_rel after the last
// cost the H200 0.3-0.5 µs a barrier against these acquire loads, 2026-12-04.)
func gridWait(f *ptx.Func, tid0, bar, target ptx.Reg, t0sym string) {
	skip := f.NewLabel()
	f.AtNot(tid0).Bra(skip)
	loop := f.NewLabel()
	f.Place(loop)
	v := f.Reg(ptx.U32)
	f.Op("ld.acquire.gpu.global.u32", v, ptx.Mem(bar, 0))
	wait := f.Setp(ptx.Lt, v, target)
	spinPause(f, wait, t0sym)
	f.At(wait).Bra(loop)
	f.Place(skip)
	f.BarSync(0)
}

// PTX returns the fused sort's PTX.
func (p *RadixFused) PTX(major, minor int) (text, entry string, err error) {
	if err := p.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "radix_fused"
	params := []ptx.Param{ptx.P("keyIn", ptx.U64), ptx.P("keyB", ptx.U64), ptx.P("keyOut", ptx.U64),
		ptx.P("work", ptx.U64), ptx.P("sums", ptx.U64), ptx.P("n", ptx.U64)}
	if p.Trace {
		params = append(params, ptx.P("trace", ptx.U64))
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	if p.MinBlocks > 0 {
		f.Attr(fmt.Sprintf(".minnctapersm %d", p.MinBlocks))
	}
	K, tile, ks := p.Items, p.Tile(), p.Order.Size()
	P := p.Order.Passes()
	kmt := memType(ks)
	f.Shared("rf_tile", ptx.B8, 16, p.tileBytes()) // (RankAtomicOr: the match words first)
	f.Shared("rf_dig", ptx.B8, 16, tile)
	f.Shared("rf_cnt", ptx.B32, 16, 8*RadixDigits)   // warp counters; the histograms; partial sums
	f.Shared("rf_start", ptx.B32, 16, P*RadixDigits) // every pass's digit starts in the row
	f.Shared("rf_off", ptx.B64, 16, RadixDigits)     // per digit: the key address of tile slot 0
	f.Shared("rf_sum", ptx.B32, 16, SortBlock/32)
	f.Shared("rf_misc", ptx.B32, 16, 2) // the trivial passes' mask; the block is the last out
	f.Shared("rf_t0", ptx.B64, 8, 1)
	g := newSortGen(f, p.Order, K)
	gp := func(i int) ptx.Reg {
		r := f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, r, f.LdParam(i))
		return r
	}
	keyIn, keyB, keyOut, work, groups := gp(0), gp(1), gp(2), gp(3), gp(4)
	if P == 1 {
		keyB = keyOut // (not used)
	}
	n64 := f.LdParam(5)
	n32 := f.Reg(ptx.U32)
	f.Cvt(n32, n64)
	tid0 := f.Setp(ptx.Eq, g.tid, ptx.Int(0))
	z := f.Reg(ptx.U32)
	f.Mov(z, ptx.Int(0))
	{
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		spinStart(f, "rf_t0")
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("rf_misc"), 0), z)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("rf_misc"), 4), z)
		f.Place(skip)
	}
	blk := f.Special(ptx.CtaidX)
	grid := f.Special(ptx.NctaidX)
	// markAt writes the time to trace slot slot (u32 register) of the block (Trace).
	var trace ptx.Reg
	if p.Trace {
		trace = f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, trace, f.LdParam(6))
	}
	markAt := func(slot ptx.Reg) {
		if !p.Trace {
			return
		}
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		i := f.Reg(ptx.U32)
		f.Fma(i, blk, ptx.Int(FusedTraceSlots), slot)
		a := f.Reg(ptx.U64)
		f.MulWide(a, i, ptx.Int(8))
		f.Add(a, a, trace)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), f.Special(ptx.GlobalTimer))
		f.Place(skip)
	}
	mark := func(slot int) {
		if !p.Trace {
			return
		}
		r := f.Reg(ptx.U32)
		f.Mov(r, ptx.Int(slot))
		markAt(r)
	}
	mark(0)
	tileOff := f.Reg(ptx.U64)
	f.MulWide(tileOff, blk, ptx.Int(tile))
	count := f.Reg(ptx.U32)
	if p.Full {
		f.Mov(count, ptx.Int(tile))
	} else {
		c := f.Reg(ptx.U64)
		f.Sub(c, n64, tileOff)
		f.Min(c, c, ptx.Int(tile))
		f.Cvt(count, c)
	}
	// The work: the tiles' counts [P][grid][256]; the sums: the groups' sums
	// [2P][ngroups][256], then the totals [P][256], the barrier's counter and the exit
	// counter.
	ngroups := f.Reg(ptx.U32)
	f.Add(ngroups, grid, ptx.Int(FusedGroup-1))
	f.Shr(ngroups, ngroups, ptx.Int(4))
	grp := f.Reg(ptx.U32) // this block's group
	f.Shr(grp, blk, ptx.Int(4))
	totals := f.Reg(ptx.U64)
	{
		x := f.Reg(ptx.U64)
		f.MulWide(x, ngroups, ptx.Int(2*P*RadixDigits*4))
		f.Add(totals, groups, x)
	}
	bar := f.Reg(ptx.U64)
	f.Add(bar, totals, ptx.Int(P*RadixDigits*4))
	target := f.Reg(ptx.U32)
	f.Mov(target, ptx.Int(0))
	tid4 := f.Reg(ptx.U64)
	f.MulWide(tid4, g.tid, ptx.Int(4))
	// wordAt returns the address of digit tid's word in row a*rows + r of the table
	// of 256-word rows at base (a, rows, r: u32 registers).
	wordAt := func(base, a, rows, r ptx.Reg) ptx.Reg {
		i := f.Reg(ptx.U32)
		f.Fma(i, a, rows, r)
		w := f.Reg(ptx.U64)
		f.MulWide(w, i, ptx.Int(RadixDigits*4))
		f.Add(w, w, base)
		f.Add(w, w, tid4)
		return w
	}
	// countAt: the count of digit tid of pass ps in tile r; groupAt: the sum of digit
	// tid in this block's group of slot sl (a pass's step 1 sums, or P + a pass's later
	// sums).
	countAt := func(ps, r ptx.Reg) ptx.Reg { return wordAt(work, ps, grid, r) }
	groupAt := func(sl ptx.Reg) ptx.Reg { return wordAt(groups, sl, ngroups, grp) }
	slot0 := g.slotOf(0)
	slotOf := func(i int) ptx.Reg {
		s := f.Reg(ptx.U32)
		f.Add(s, slot0, ptx.Int(32*i))
		return s
	}
	validOf := func(i int) ptx.Reg { return f.Setp(ptx.Lt, slotOf(i), count) }
	if p.Full {
		// Every slot holds a key: a predicate ptxas folds to true.
		always := g.alwaysValid()
		validOf = func(int) ptx.Reg { return always }
	}
	// loadTile loads the thread's keys of the tile from src (warp-striped).
	loadTile := func(src ptx.Reg, op string) []ptx.Reg {
		a0 := f.Reg(ptx.U64)
		f.Cvt(a0, slot0)
		f.Add(a0, a0, tileOff)
		f.Fma(a0, a0, ptx.Int(ks), src)
		keys := make([]ptx.Reg, K)
		for i := range keys {
			r := f.Reg(regType(ks))
			f.Mov(r, ptx.Int(0))
			f.At(validOf(i)).Op(op+kmt.String(), r, ptx.Mem(a0, int64(32*i*ks)))
			keys[i] = r
		}
		return keys
	}
	cntBase := f.Reg(ptx.U32)
	f.Op("mov.u32", cntBase, ptx.Sym("rf_cnt"))
	tb, dig := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Op("mov.u32", tb, ptx.Sym("rf_tile"))
	f.Op("mov.u32", dig, ptx.Sym("rf_dig"))
	// excl: each digit's first position in the staged tile (thread t: digit t).
	excl := f.Reg(ptx.U32)
	// rankTile ranks the keys on the digit at shift (warp-level multi-split).
	rankTile := func(keys []ptx.Reg, shift ptx.Operand) []ptx.Reg {
		return g.rankItems("rf_cnt", K, func(i int) (ptx.Reg, ptx.Reg) {
			return g.digitOf(g.ordered(keys[i]), shift), validOf(i)
		}, p.Rank, "rf_tile")
	}
	// stageStarts sets excl from the warps' counts of the ranking (cnt: their sum,
	// the tile's count of digit t) and leaves each warp's first position of each digit
	// in rf_cnt.
	stageStarts := func(counts []ptx.Reg, cnt ptx.Reg) {
		e, _ := g.blockScan(cnt, "rf_sum")
		f.Mov(excl, e)
		g.storeStarts("rf_cnt", counts, excl)
		f.BarSync(0) // the warps' digit starts
	}
	// stageKeys stores the ranked keys and their digits in tile order in shared memory.
	stageKeys := func(keys, packed []ptx.Reg) {
		g.finalRanks(packed, "rf_cnt", func(i int, fr, d ptx.Reg) {
			a := f.Reg(ptx.U32)
			f.Fma(a, fr, ptx.Int(ks), tb)
			v := validOf(i)
			f.At(v).Op("st.shared"+kmt.String(), ptx.Mem(a, 0), keys[i])
			da := f.Reg(ptx.U32)
			f.Add(da, dig, fr)
			f.At(v).Op("st.shared.u8", ptx.Mem(da, 0), d)
		})
	}
	// stageTile ranks and stages the tile on the digit at shift (the counts unpublished).
	stageTile := func(keys []ptx.Reg, shift ptx.Operand) {
		packed := rankTile(keys, shift)
		f.BarSync(0)
		counts, cnt := g.warpCounts("rf_cnt")
		stageStarts(counts, cnt)
		stageKeys(keys, packed)
	}

	// Step 1: the tile's digit counts of every pass, published and added to the totals.
	{
		a := f.Reg(ptx.U32)
		f.Fma(a, g.tid, ptx.Int(4), cntBase)
		for j := 0; j < 8; j++ {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(j*SortBlock*4)), z)
		}
		f.BarSync(0)
		keys := loadTile(keyIn, "ld.global.nc")
		countDigits := func(validOf func(i int) ptx.Reg) {
			for i, k := range keys {
				g.countDigits(k, validOf(i), cntBase)
			}
		}
		if p.Full {
			countDigits(validOf)
		} else {
			// A whole tile (every block's but the row's last) counts without the tests.
			g.wholeOrPartial(f.Setp(ptx.Eq, count, ptx.Int(tile)), validOf, countDigits)
		}
		f.BarSync(0)
		for ps := 0; ps < P; ps++ {
			c := f.Reg(ptx.U32)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(ps*RadixDigits*4)), c)
			psr := f.Reg(ptx.U32)
			f.Mov(psr, ptx.Int(ps))
			f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(countAt(psr, blk), 0), c)
			ta := f.Reg(ptx.U64)
			f.Add(ta, totals, tid4)
			nz := f.Setp(ptx.Ne, c, ptx.Int(0))
			f.At(nz).Op("red.global.add.u32", ptx.Mem(ta, int64(ps*RadixDigits*4)), c)
			f.At(nz).Op("red.global.add.u32", ptx.Mem(groupAt(psr), 0), c)
		}
		mark(1)
		if p.EarlyRank {
			// Pass 0 on the keys the block holds while the others arrive: its counts
			// are the ones just published; the tile staged as the loop would.
			gridArrive(f, tid0, bar, target, grid)
			stageTile(keys, ptx.Int(0))
			gridWait(f, tid0, bar, target, "rf_t0")
		} else {
			gridBarrier(f, tid0, bar, target, grid, "rf_t0")
		}
		mark(2)
	}
	// Step 2: the trivial passes (one digit holds every key), the same in every block.
	mask := f.Reg(ptx.B32)
	mcount := f.Reg(ptx.U32)
	{
		ta := f.Reg(ptx.U64)
		f.Add(ta, totals, tid4)
		sa := f.Reg(ptx.U32)
		f.Op("mov.u32", sa, ptx.Sym("rf_start"))
		f.Fma(sa, g.tid, ptx.Int(4), sa)
		ts := make([]ptx.Reg, P)
		for ps := range ts {
			ts[ps] = f.Reg(ptx.U32)
			f.Ld(ptx.Global, ptx.CacheCG, ptx.U32, ptx.Mem(ta, int64(ps*RadixDigits*4)), ts[ps])
		}
		for ps, t := range ts {
			f.At(f.Setp(ptx.Eq, t, n32)).Op("red.shared.or.b32", ptx.Mem(ptx.Sym("rf_misc"), 0), ptx.Uint(1<<ps))
			// Each digit's first position in the row: the totals of the digits before.
			if ps > 0 {
				f.BarSync(0) // (the last scan's reads of rf_sum)
			}
			st, _ := g.blockScan(t, "rf_sum")
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(sa, int64(ps*RadixDigits*4)), st)
		}
		f.BarSync(0)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ptx.Sym("rf_misc"), 0), mask)
		// Every pass trivial (all keys alike): the last one copies them.
		f.At(f.Setp(ptx.Eq, mask.As(ptx.U32), ptx.Int(1<<P-1))).Op("and.b32", mask, mask, ptx.Uint(1<<(P-1)-1))
		pc := f.Reg(ptx.U32)
		f.Op("popc.b32", pc, mask)
		f.Sub(mcount, ptx.Int(P), pc)
	}
	mark(3)
	// markPass writes the time to slot j of the pass's trace.
	markPass := func(pass ptx.Reg, j int) {
		if !p.Trace {
			return
		}
		r := f.Reg(ptx.U32)
		f.Fma(r, pass, ptx.Int(fusedTracePass), ptx.Int(fusedTraceStep+j))
		markAt(r)
	}
	lastSlot := f.Reg(ptx.U32) // the last active pass's slot
	f.Mov(lastSlot, ptx.Int(0))
	pass := f.Reg(ptx.U32)
	f.Mov(pass, ptx.Int(0))
	k := f.Reg(ptx.U32)
	f.Mov(k, ptx.Int(0))
	loop, done, next := f.NewLabel(), f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, pass, ptx.Int(P))).Bra(done)
	{
		bit := f.Reg(ptx.B32)
		f.Mov(bit, ptx.Int(1))
		f.Shl(bit, bit, pass)
		f.And(bit, bit, mask)
		f.At(f.Setp(ptx.Ne, bit.As(ptx.U32), ptx.Int(0))).Bra(next)
	}
	first := f.Setp(ptx.Eq, k, ptx.Int(0))
	shift := f.Reg(ptx.U32)
	f.Shl(shift, pass, ptx.Int(3))
	// Pass k of m writes keyOut when m-1-k is even, else keyB; it reads keyIn (k = 0)
	// or what pass k-1 wrote.
	par := f.Reg(ptx.U32)
	f.Sub(par, mcount, k)
	f.And(par, par, ptx.Int(1)) // (m-k)%2: 1 when this pass writes keyOut
	toOut := f.Setp(ptx.Eq, par, ptx.Int(1))
	// (The first pass's counts and group sums are step 1's.)
	slot := f.Reg(ptx.U32) // the group sums' slot
	f.Add(slot, pass, ptx.Int(P))
	f.At(first).Op("mov.u32", slot, pass)
	staged := f.NewLabel()
	if p.EarlyRank {
		f.At(f.Setp(ptx.Eq, pass, ptx.Int(0))).Bra(staged) // (step 1 staged pass 0)
	}
	keys := loadTile(selp64(f, first, keyIn, selp64(f, toOut, keyB, keyOut)), "ld.global.cg")
	if p.LoadFence {
		g.landKeys(keys, "rf_off")
	}
	packed := rankTile(keys, shift)
	f.BarSync(0)
	markPass(pass, 0)
	counts, cnt := g.warpCounts("rf_cnt")
	f.AtNot(first).Op("st.global.u32", ptx.Mem(countAt(pass, blk), 0), cnt)
	{
		w := f.Reg(ptx.Pred)
		f.Op("and.pred", w, notp(f, first), f.Setp(ptx.Ne, cnt, ptx.Int(0)))
		f.At(w).Op("red.global.add.u32", ptx.Mem(groupAt(slot), 0), cnt)
	}
	if p.Split {
		// Arrive now, wait once the tile is staged in shared memory.
		skip := f.NewLabel()
		f.At(first).Bra(skip)
		gridArrive(f, tid0, bar, target, grid)
		f.Place(skip)
	}
	stageStarts(counts, cnt)
	stageKeys(keys, packed)
	markPass(pass, 1)
	{
		skip := f.NewLabel()
		f.At(first).Bra(skip)
		// Every tile's counts of the pass.
		if p.Split {
			gridWait(f, tid0, bar, target, "rf_t0")
		} else {
			gridBarrier(f, tid0, bar, target, grid, "rf_t0")
		}
		f.Place(skip)
	}
	f.Place(staged)
	markPass(pass, 2)
	last := f.Reg(ptx.Pred) // the last active pass
	{
		k1 := f.Reg(ptx.U32)
		f.Add(k1, k, ptx.Int(1))
		f.Op("setp.eq.u32", last, k1, mcount)
		f.At(last).Op("mov.u32", lastSlot, slot)
	}
	// The digit's first position in the row (step 1).
	start := f.Reg(ptx.U32)
	{
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym("rf_start"))
		f.Fma(a, pass, ptx.Int(RadixDigits*4), a)
		f.Fma(a, g.tid, ptx.Int(4), a)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), start)
	}
	// The counts before this tile: the sums of the groups before its group (rows i <
	// grp) and the counts of its group's tiles before it (rows grp to R-1), R rows;
	// warp w adds rows w, w+8, ...; lane l digits 8l to 8l+7.
	{
		acc := make([]ptx.Reg, 8)
		for j := range acc {
			acc[j] = f.Reg(ptx.U32)
			f.Mov(acc[j], ptx.Int(0))
		}
		R := f.Reg(ptx.U32)
		f.And(R, blk, ptx.Int(FusedGroup-1))
		f.Add(R, R, grp)
		l32 := f.Reg(ptx.U64)
		f.MulWide(l32, g.lane, ptx.Int(32))
		gb := f.Reg(ptx.U64) // the slot's group 0, this lane's digits
		{
			i := f.Reg(ptx.U32)
			f.Mul(i, slot, ngroups)
			f.MulWide(gb, i, ptx.Int(RadixDigits*4))
			f.Add(gb, gb, groups)
			f.Add(gb, gb, l32)
		}
		tb0 := f.Reg(ptx.U64) // the pass's counts of tile 16*grp - grp (row grp's), this lane's digits
		{
			i := f.Reg(ptx.U32)
			f.Mul(i, pass, grid)
			f.Fma(i, grp, ptx.Int(FusedGroup-1), i)
			f.MulWide(tb0, i, ptx.Int(RadixDigits*4))
			f.Add(tb0, tb0, work)
			f.Add(tb0, tb0, l32)
		}
		r := f.Reg(ptx.U32)
		f.Mov(r, g.warp)
		rl, rd := f.NewLabel(), f.NewLabel()
		f.Place(rl)
		f.At(f.Setp(ptx.Ge, r, R)).Bra(rd)
		xs := make([][]ptx.Reg, fusedRowsInFlight)
		for u := range xs {
			ru := f.Reg(ptx.U32)
			f.Add(ru, r, ptx.Int(8*u))
			v := f.Setp(ptx.Lt, ru, R)
			inGroups := f.Setp(ptx.Lt, ru, grp)
			a := f.Reg(ptx.U64)
			f.MulWide(a, ru, ptx.Int(RadixDigits*4))
			f.Add(a, a, selp64(f, inGroups, gb, tb0))
			xs[u] = make([]ptx.Reg, 8)
			for j := range xs[u] {
				xs[u][j] = f.Reg(ptx.U32)
				f.Mov(xs[u][j], ptx.Int(0))
			}
			f.At(v).Op("ld.global.cg.v4.u32", ptx.Vec{xs[u][0], xs[u][1], xs[u][2], xs[u][3]}, ptx.Mem(a, 0))
			f.At(v).Op("ld.global.cg.v4.u32", ptx.Vec{xs[u][4], xs[u][5], xs[u][6], xs[u][7]}, ptx.Mem(a, 16))
		}
		for u := range xs {
			for j := range acc {
				f.Add(acc[j], acc[j], xs[u][j])
			}
		}
		f.Add(r, r, ptx.Int(8*fusedRowsInFlight))
		f.Bra(rl)
		f.Place(rd)
		f.BarSync(0) // (rf_cnt's last readers: finalRanks)
		pa := f.Reg(ptx.U32)
		f.Fma(pa, g.warp, ptx.Int(RadixDigits*4), cntBase)
		f.Fma(pa, g.lane, ptx.Int(32), pa)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(pa, 0), acc[0], acc[1], acc[2], acc[3])
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(pa, 16), acc[4], acc[5], acc[6], acc[7])
	}
	f.BarSync(0)
	before := f.Reg(ptx.U32)
	f.Mov(before, ptx.Int(0))
	{
		a := f.Reg(ptx.U32)
		f.Fma(a, g.tid, ptx.Int(4), cntBase)
		for w := 0; w < SortBlock/32; w++ {
			x := f.Reg(ptx.U32)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(w*RadixDigits*4)), x)
			f.Add(before, before, x)
		}
	}
	// off[d] = start + before - the digit's start in the tile: tile slot idx of digit d
	// goes to position off[d] + idx (off may be below 0).
	{
		off := f.Reg(ptx.S32)
		f.Add(off, start.As(ptx.S32), before.As(ptx.S32))
		f.Sub(off, off, excl.As(ptx.S32))
		off64 := f.Reg(ptx.S64)
		f.Cvt(off64, off)
		dst := selp64(f, toOut, keyOut, keyB)
		ka := f.Reg(ptx.U64)
		f.Fma(ka, off64.As(ptx.U64), ptx.Int(ks), dst)
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym("rf_off"))
		f.Fma(a, g.tid, ptx.Int(8), a)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), ka)
	}
	f.BarSync(0) // the addresses
	markPass(pass, 3)
	{
		ob := f.Reg(ptx.U32)
		f.Op("mov.u32", ob, ptx.Sym("rf_off"))
		db := f.Reg(ptx.U32)
		f.Add(db, dig, g.tid)
		g.writeTile(ks, count, tb, ob, db, ptx.Reg{}, func(ptx.Reg) ptx.Reg { return ptx.Reg{} })
	}
	markPass(pass, 4)
	// The last pass leaves the sums zero for the next launch, after its scatter (off
	// the critical path): past its counts' barrier no block reads the sums but the
	// pass's (slot's) groups' sums and (with one active pass) the totals, so each block
	// zeroes the other groups' rows blk, blk+grid, ...; then, its last reads long done,
	// it takes an exit ticket (acq_rel), and the last block out zeroes the rest at the
	// end. (A release ticket before the scatter, the last block acquiring after it,
	// held warp 0's scatter back as long as it took off the end: H200, 2026-12-04.)
	{
		skip, rl, rd := f.NewLabel(), f.NewLabel(), f.NewLabel()
		f.AtNot(last).Bra(skip)
		rows, lo, hi := f.Reg(ptx.U32), f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Mul(rows, ngroups, ptx.Int(2*P))
		f.Mul(lo, slot, ngroups)
		f.Add(hi, lo, ngroups)
		r := f.Reg(ptx.U32)
		f.Mov(r, blk)
		f.Place(rl)
		f.At(f.Setp(ptx.Ge, r, rows)).Bra(rd)
		keep := f.Reg(ptx.Pred)
		f.Op("and.pred", keep, f.Setp(ptx.Ge, r, lo), f.Setp(ptx.Lt, r, hi))
		a := f.Reg(ptx.U64)
		f.MulWide(a, r, ptx.Int(RadixDigits*4))
		f.Add(a, a, groups)
		f.Add(a, a, tid4)
		f.AtNot(keep).Op("st.global.u32", ptx.Mem(a, 0), z)
		f.Add(r, r, grid)
		f.Bra(rl)
		f.Place(rd)
		f.AtNot(tid0).Bra(skip)
		ticket := f.Reg(ptx.U32)
		f.Op("atom.acq_rel.gpu.global.add.u32", ticket, ptx.Mem(bar, 4), ptx.Int(1))
		gm1 := f.Reg(ptx.U32)
		f.Sub(gm1, grid, ptx.Int(1))
		out := f.Reg(ptx.U32)
		f.Op("selp.u32", out, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Eq, ticket, gm1))
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("rf_misc"), 4), out)
		f.Place(skip)
	}
	f.Add(k, k, ptx.Int(1))
	{
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Ge, k, mcount)).Bra(skip)
		gridBarrier(f, tid0, bar, target, grid, "rf_t0") // every key of the pass written
		markPass(pass, 5)
		f.Place(skip)
	}
	f.Place(next)
	f.Add(pass, pass, ptx.Int(1))
	f.Bra(loop)
	f.Place(done)
	// The last block out (every block's reads of the sums done) zeroes the totals, the
	// last pass's groups' sums and the counters.
	f.BarSync(0)
	{
		skip := f.NewLabel()
		flag := f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("rf_misc"), 4), flag)
		f.At(f.Setp(ptx.Eq, flag, ptx.Int(0))).Bra(skip)
		ta := f.Reg(ptx.U64)
		f.Add(ta, totals, tid4)
		for ps := 0; ps < P; ps++ {
			f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(ta, int64(ps*RadixDigits*4)), z)
		}
		i, end := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Mul(i, lastSlot, ngroups)
		f.Add(end, i, ngroups)
		rl := f.NewLabel()
		f.Place(rl)
		a := f.Reg(ptx.U64)
		f.MulWide(a, i, ptx.Int(RadixDigits*4))
		f.Add(a, a, groups)
		f.Add(a, a, tid4)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), z)
		f.Add(i, i, ptx.Int(1))
		f.At(f.Setp(ptx.Lt, i, end)).Bra(rl)
		z64 := f.Reg(ptx.U64)
		f.Mov(z64, ptx.Int(0))
		f.At(tid0).Op("st.global.u64", ptx.Mem(bar, 0), z64)
		f.Place(skip)
	}
	mark(FusedTraceSlots - 1)
	f.Ret()
	return m.String(), entry, nil
}
