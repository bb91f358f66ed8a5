package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the scan kernels.
//
// ScanTiles, per block (one tile of ScanTilesBlock*Items elements of one row):
//
//  1. Thread 0 takes the tile number from the counter in the status header (atom.add;
//     blockIdx when the rows have one tile each) and shares it through shared memory.
//  2. Each thread loads its Items consecutive elements (16-byte vector loads for full
//     tiles when Vector is set, guarded scalar loads otherwise), converts them to the
//     accumulator type and reduces them per column (the Group interleaved columns).
//  3. An inclusive warp scan of the thread aggregates (shfl.up, 5 steps), warp totals
//     through shared memory, and each warp's exclusive prefix from the totals of the
//     warps before it; the block aggregate is the tile's.
//  4. The tile's prefix: the first tile of a row publishes its inclusive prefix at
//     once; any other publishes its aggregate, then warp 0 looks back over windows of
//     32 predecessors (lane i reads tile r-1-i), waiting until all have published
//     (vote.all), keeping the lanes up to the nearest inclusive prefix (ballot), and
//     folding them with a shuffle-down tree (the earlier tile always on the left: the
//     operator need not commute); then it publishes its own inclusive prefix.
//  5. Each thread folds its elements from its prefix (tile prefix, warp prefix, lanes
//     before it) and stores them (vector stores for full tiles).
//
// Status: with one column of a 4- or 8-byte accumulator, one or two 64-bit words per
// tile, each with the flag in its high half and a 32-bit word of the value in its low
// half, written and read with relaxed .gpu accesses, which are single-copy atomic, so no
// fence is needed (the flag travels with the data). A reader of two words uses them only
// when both carry the same flag, and otherwise reads again: the words of one status are
// written together and flags only increase, so equal flags mean words of one value.
// Otherwise a 32-bit flag per tile and
// separate aggregate and inclusive-prefix vectors: the publisher stores the values,
// then fence.acq_rel.gpu, then the flag (a release pattern); a reader that sees the
// flag with a relaxed load issues fence.acq_rel.gpu before reading the values (an
// acquire pattern), per the PTX memory model (PTX ISA 7.8, "Memory Consistency Model":
// release and acquire patterns through fences). Flags only increase (0, 1: aggregate,
// 2: inclusive prefix), and each value slot is written once before its flag.

const (
	scanFlagAgg  = 1
	scanFlagIncl = 2
)

// scanPTXError converts a panic of the generators into an error.
func scanPTXError(err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("kernel: PTX generation: %v: %w", r, backend.ErrNotSupported)
	}
}

// ScanSelfCleanMax is the largest status, past its 16-byte header, that the scan
// kernels clear themselves (selfClean): larger ones take a zeroed scratch each launch.
const ScanSelfCleanMax = 32 << 10

// selfClean emits the end of a block whose kernel used its status (used: a predicate,
// the same in every thread of the block) of clear() bytes past the header (a u64
// register, a multiple of 16: the whole status but the header, so that any later
// layout finds zeros) when that is at most ScanSelfCleanMax: after a barrier (every
// thread is past its status accesses), thread 0 counts the block done in the header's
// second word (fence.acq_rel.gpu, then atom.add); the block that counts the grid's last
// (nctaid.x) zeroes the status, header included, after fence.acq_rel.gpu, so the
// kernel leaves its status zero as it found it. The other blocks' done counts follow
// their last status access (a release pattern through the fence), and the last block's
// stores follow its count (acquire), so no block reads a cleared word. A stream can
// then keep one status for all its scans with no memset between launches (the
// reduction tickets' scheme, reduce_ptx.go). pst emits the status address (late, so
// that no register holds it through the kernel). The kernel returns afterwards.
func selfClean(f *ptx.Func, pst func() ptx.Reg, used ptx.Reg, clear func() ptx.Reg, block int) {
	end := f.NewLabel()
	f.AtNot(used).Bra(end)
	n := clear()
	f.At(f.Setp(ptx.Gt, n, ptx.Int(ScanSelfCleanMax))).Bra(end)
	f.BarSync(0)
	tid := f.Special(ptx.TidX)
	tid0 := f.Setp(ptx.Eq, tid, ptx.Int(0))
	skip := f.NewLabel()
	f.AtNot(tid0).Bra(skip)
	f.Fence("acq_rel", "gpu")
	t := f.Reg(ptx.U32)
	f.Atom("", "", ptx.Global, "add", ptx.U32, t, ptx.Mem(pst(), 4), ptx.Int(1))
	n1 := f.Reg(ptx.U32)
	f.Sub(n1, f.Special(ptx.NctaidX), ptx.Int(1))
	last := f.Reg(ptx.U32)
	f.Op("selp.u32", last, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Eq, t, n1))
	f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("sc_tile"), 0), last)
	f.Place(skip)
	f.BarSync(0)
	lv := f.Reg(ptx.U32)
	f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("sc_tile"), 0), lv)
	f.At(f.Setp(ptx.Eq, lv, ptx.Int(0))).Bra(end)
	f.Fence("acq_rel", "gpu")
	p := pst()
	z := f.Reg(ptx.U32)
	f.Mov(z, ptx.Int(0))
	i := f.Reg(ptx.U64)
	f.MulWide(i, tid, ptx.Int(16))
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, n)).Bra(done)
	a := f.Reg(ptx.U64)
	f.Add(a, p, i)
	f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 16), z, z, z, z)
	f.Add(i, i, ptx.Int(16*block))
	f.Bra(loop)
	f.Place(done)
	f.AtNot(tid0).Bra(end)
	f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(p, 0), z, z)
	f.Place(end)
	f.Ret()
}

// lateStatus emits the status address (parameter param) for selfClean, plus an opaque
// zero (nctaid.y - 1: the kernels' grids are one-dimensional), so that ptxas computes
// it anew rather than keeping the kernel's first copy in registers through the kernel.
func lateStatus(f *ptx.Func, param int) ptx.Reg {
	z32 := f.Reg(ptx.U32)
	f.Sub(z32, f.Special(ptx.NctaidY), ptx.Int(1))
	z := f.Reg(ptx.U64)
	f.Cvt(z, z32)
	p := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, p, f.LdParam(param))
	f.Add(p, p, z)
	return p
}

// flaggedBytes emits the bytes of a flagged status of tiles tiles (a u64 register) and
// vec bytes of values per tile, past its header (flaggedLayout): selfClean's clear.
func flaggedBytes(f *ptx.Func, tiles ptx.Reg, vec int) ptx.Reg {
	pad := func(per int) ptx.Reg {
		c := f.Reg(ptx.U64)
		f.Mul(c, tiles, ptx.Int(per))
		f.Add(c, c, ptx.Int(15))
		f.And(c, c, ptx.Uint(^uint64(15)))
		return c
	}
	c := pad(4)
	v := pad(vec)
	f.Add(c, c, v)
	f.Add(c, c, v)
	return c
}

// statusLayout is the byte layout of a flagged status: flags, aggregate and inclusive
// vectors (vec bytes per tile).
type statusLayout struct{ flags, agg, incl int64 }

func flaggedLayout(tiles, vec int) statusLayout {
	flags := int64(16)
	agg := flags + int64(scanPad16(4*tiles))
	incl := agg + int64(scanPad16(vec*tiles))
	return statusLayout{flags, agg, incl}
}

// PTX returns the kernel's PTX text and entry name.
func (s *ScanTiles) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "scan_tiles"
	k := m.Kernel(entry, ptx.P("in", ptx.U64), ptx.P("out", ptx.U64), ptx.P("status", ptx.U64),
		ptx.P("rows", ptx.U64), ptx.P("row_len", ptx.U64), ptx.P("tiles_per_row", ptx.U64), ptx.P("init", ptx.U64))
	if s.MinBlocks > 0 {
		k.Attr(fmt.Sprintf(".maxntid %d, 1, 1", ScanTilesBlock))
		k.Attr(fmt.Sprintf(".minnctapersm %d", s.MinBlocks))
	} else {
		regAttrs(k, ScanTilesBlock, ScanRegCap)
	}
	(&tilesGen{s: s, g: newSGen(m, k, major*10+minor, s.Comb)}).build()
	return m.String(), entry, nil
}

type tilesGen struct {
	s *ScanTiles
	g *sgen
}

// finish ends the kernel: selfClean of the status when the rows have several tiles
// (its operands from the parameters again: registers kept from the start would spill).
func (tg *tilesGen) finish() {
	f := tg.g.f
	status := func() ptx.Reg { return lateStatus(f, 2) }
	clear := func() ptx.Reg {
		tiles := f.Reg(ptx.U64)
		f.Mul(tiles, f.LdParam(3), f.LdParam(5))
		if tg.s.Packed() {
			// As StatusBytes: padded to 16 bytes, selfClean's store.
			c := f.Reg(ptx.U64)
			f.Mul(c, tiles, ptx.Int(8*tg.s.PackedWords()))
			f.Add(c, c, ptx.Int(15))
			f.And(c, c, ptx.Uint(^uint64(15)))
			return c
		}
		return flaggedBytes(f, tiles, tg.vecBytes())
	}
	selfClean(f, status, f.Setp(ptx.Gt, f.LdParam(5), ptx.Int(1)), clear, ScanTilesBlock)
}

func (tg *tilesGen) build() {
	s, g := tg.s, tg.g
	f := g.f
	G, K := s.Group, s.Items
	T := s.Tile()
	nw := g.nwords()
	warps := ScanTilesBlock / 32
	inSize, outT := s.In.Size(), s.outType()
	outSize := outT.Size()

	f.Shared("sc_tile", ptx.B32, 4, 1)
	f.Shared("sc_t0", ptx.B64, 8, 1) // the block's start (spinStart)
	f.Shared("sc_wh", ptx.B32, 4, warps)
	f.Shared("sc_wv", ptx.B32, 8, warps*G*nw)
	f.Shared("sc_pv", ptx.B32, 8, G*nw)
	if tg.transposedStore() || s.Stage {
		f.Shared("sc_xs", ptx.B32, 16, warps*tg.xsWords())
	}

	pin, pout, pst := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, pout, f.LdParam(1))
	f.CvtaTo(ptx.Global, pst, f.LdParam(2))
	rowLen := f.LdParam(4)
	tpr64 := f.LdParam(5)
	initV := g.fromBits64(f.LdParam(6))
	if s.Exclusive {
		initV = g.canonFirst(initV) // element 0 of a row (Combine.canonFirst)
	}
	tpr := f.Reg(ptx.U32)
	f.Cvt(tpr, tpr64)
	tid := f.Special(ptx.TidX)
	lane, warp := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(lane, tid, ptx.Int(31))
	f.Shr(warp, tid, ptx.Int(5))
	tid0 := f.Setp(ptx.Eq, tid, ptx.Int(0))

	// 1. The tile number.
	tile := f.Reg(ptx.U32)
	f.Mov(tile, ptx.SReg(ptx.CtaidX))
	oneTile := f.Setp(ptx.Eq, tpr, ptx.Int(1))
	gotTile := f.NewLabel()
	f.At(oneTile).Bra(gotTile)
	{
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		t := f.Reg(ptx.U32)
		f.Atom("", "", ptx.Global, "add", ptx.U32, t, ptx.Mem(pst, 0), ptx.Int(1))
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("sc_tile"), 0), t)
		spinStart(f, "sc_t0")
		f.Place(skip)
		f.BarSync(0)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("sc_tile"), 0), tile)
	}
	f.Place(gotTile)
	row, r := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Div(row, tile, tpr)
	f.Mul(r, row, tpr)
	f.Sub(r, tile, r)
	// elem0: the tile's first element; tileLen: its elements.
	row64 := f.Reg(ptx.U64)
	f.Cvt(row64, row)
	elem0 := f.Reg(ptx.U64)
	f.Mul(elem0, row64, rowLen)
	tstart := f.Reg(ptx.U64)
	f.MulWide(tstart, r, ptx.Int(T))
	f.Add(elem0, elem0, tstart)
	rem64 := f.Reg(ptx.U64)
	f.Sub(rem64, rowLen, tstart)
	f.Min(rem64, rem64, ptx.Int(T))
	tileLen := f.Reg(ptx.U32)
	f.Cvt(tileLen, rem64)
	full := f.Setp(ptx.Eq, tileLen, ptx.Int(T))
	thStart := f.Reg(ptx.U32)
	f.Mul(thStart, tid, ptx.Int(K))
	cnt := f.Reg(ptx.S32)
	f.Sub(cnt, tileLen.As(ptx.S32), thStart.As(ptx.S32))
	f.Max(cnt, cnt, ptx.Int(0))
	f.Min(cnt, cnt, ptx.Int(K))
	// Addresses of the thread's first element.
	idx := f.Reg(ptx.U64)
	f.Cvt(idx, thStart)
	f.Add(idx, idx, elem0)
	ain, aout := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Fma(ain, idx, ptx.Int(inSize), pin)
	f.Fma(aout, idx, ptx.Int(outSize), pout)

	// 2. Loads and the thread's aggregates per column (agg), in fixed registers: the
	// full-tile path needs no per-element guards.
	x := make([]ptx.Reg, K)
	for i := range x {
		x[i] = g.reg()
	}
	agg := make([]ptx.Reg, G)
	for c := range agg {
		agg[c] = g.reg()
	}
	loaded := f.NewLabel()
	if s.Vector {
		partial := f.NewLabel()
		f.AtNot(full).Bra(partial)
		v := vectorWidth(K, inSize)
		for i := 0; i < K; i += v {
			vals := loadVector(f, s.In, v, ptx.Mem(ain, int64(i*inSize)))
			for j, val := range vals {
				g.movTo(x[i+j], castValue(g.ew, val, s.In, g.t))
			}
		}
		if s.Stage {
			g.movTo(agg[0], tg.stageLocal(x, nil, lane, warp))
		} else {
			for c := 0; c < G; c++ {
				a := x[c]
				for i := c + G; i < K; i += G {
					a = g.op(a, x[i])
				}
				g.movTo(agg[c], a)
			}
		}
		f.Bra(loaded)
		f.Place(partial)
	}
	{
		valid := make([]ptx.Reg, K)
		for i := range valid {
			valid[i] = f.Setp(ptx.Gt, cnt, ptx.Int(i))
			raw := tg.guardedLoad(valid[i], ptx.Mem(ain, int64(i*inSize)))
			g.movTo(x[i], castValue(g.ew, raw, s.In, g.t))
		}
		if s.Stage {
			g.movTo(agg[0], tg.stageLocal(x, valid, lane, warp))
		} else {
			for c := 0; c < G; c++ {
				a := x[c]
				for i := c + G; i < K; i += G {
					a = g.sel(valid[i], g.op(a, x[i]), a)
				}
				g.movTo(agg[c], a)
			}
		}
	}
	f.Place(loaded)
	has := f.Setp(ptx.Gt, cnt, ptx.Int(0))
	agg = append([]ptx.Reg(nil), agg...)

	// 3. Warp scan.
	for d := 1; d < 32; d *= 2 {
		hy := shflPred(f, "up", has, ptx.Int(d), ptx.Int(0))
		ok := f.Reg(ptx.Pred)
		f.Op("and.pred", ok, hy, f.Setp(ptx.Ge, lane, ptx.Int(d)))
		var h ptx.Reg
		for c := range agg {
			y := g.shfl("up", agg[c], ptx.Int(d), ptx.Int(0))
			h, agg[c] = g.combineHas(ok, y, has, agg[c])
		}
		has = h
	}
	// Warp totals.
	{
		skip := f.NewLabel()
		f.AtNot(f.Setp(ptx.Eq, lane, ptx.Int(31))).Bra(skip)
		hw := f.Reg(ptx.U32)
		f.Selp(hw, ptx.Int(1), ptx.Int(0), has)
		wa := f.Reg(ptx.U32)
		f.Op("mov.u32", wa, ptx.Sym("sc_wh"))
		f.Fma(wa, warp, ptx.Int(4), wa)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(wa, 0), hw)
		va := f.Reg(ptx.U32)
		f.Op("mov.u32", va, ptx.Sym("sc_wv"))
		f.Fma(va, warp, ptx.Int(G*nw*4), va)
		for c := range agg {
			for i, w := range g.words(agg[c]) {
				f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(va, int64((c*nw+i)*4)), w)
			}
		}
		f.Place(skip)
	}
	// The lanes' exclusive prefixes.
	hlx := shflPred(f, "up", has, ptx.Int(1), ptx.Int(0))
	f.Op("and.pred", hlx, hlx, f.Setp(ptx.Ge, lane, ptx.Int(1)))
	lx := make([]ptx.Reg, G)
	for c := range agg {
		lx[c] = g.shfl("up", agg[c], ptx.Int(1), ptx.Int(0))
	}
	f.BarSync(0)
	// Warp prefixes and the tile aggregate.
	hw, ht := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
	f.Op("setp.ne.u32", hw, tid, tid) // false
	f.Op("setp.ne.u32", ht, tid, tid)
	wp := make([]ptx.Reg, G)
	ta := make([]ptx.Reg, G)
	for c := range wp {
		wp[c], ta[c] = g.zero(), g.zero()
	}
	for w := 0; w < warps; w++ {
		hv := f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("sc_wh"), int64(4*w)), hv)
		pv := f.Setp(ptx.Ne, hv, ptx.Int(0))
		take := f.Reg(ptx.Pred)
		f.Op("and.pred", take, pv, f.Setp(ptx.Gt, warp, ptx.Int(w)))
		var h1, h2 ptx.Reg
		for c := 0; c < G; c++ {
			ws := make([]ptx.Reg, nw)
			for i := range ws {
				ws[i] = f.Reg(ptx.B32)
				f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ptx.Sym("sc_wv"), int64(((w*G+c)*nw+i)*4)), ws[i])
			}
			v := g.value(ws)
			h1, wp[c] = g.combineHas(hw, wp[c], take, v)
			h2, ta[c] = g.combineHas(ht, ta[c], pv, v)
		}
		hw, ht = h1, h2
	}
	// The thread's prefix within the tile.
	hp := hw
	tp := make([]ptx.Reg, G)
	for c := range tp {
		hp, tp[c] = g.combineHas(hw, wp[c], hlx, lx[c])
	}

	if s.Stage {
		tg.stagedTail(stagedArgs{pst: pst, tile: tile, r: r, tpr: tpr, lane: lane, warp: warp, tid: tid,
			tid0: tid0, initV: initV, ta: ta, tp: tp, hp: hp, full: full, tileLen: tileLen, aout: aout})
		return
	}

	// 4. The tile's prefix.
	rZero := f.Setp(ptx.Eq, r, ptx.Int(0))
	tileG := tile // global tile number, the status index
	notFirst, prefixDone := f.NewLabel(), f.NewLabel()
	f.AtNot(rZero).Bra(notFirst)
	{
		// The first tile of its row: publish the inclusive prefix (if the row has more
		// tiles).
		pub := f.Reg(ptx.Pred)
		f.Op("and.pred", pub, tid0, f.Setp(ptx.Gt, tpr, ptx.Int(1)))
		skip := f.NewLabel()
		f.AtNot(pub).Bra(skip)
		incl := ta
		if s.Exclusive {
			incl = make([]ptx.Reg, G)
			for c := range ta {
				incl[c] = g.op(initV, ta[c])
			}
		}
		tg.publish(pst, tileG, scanFlagIncl, incl)
		f.Place(skip)
		f.Bra(prefixDone)
	}
	f.Place(notFirst)
	{
		skipA := f.NewLabel()
		f.AtNot(tid0).Bra(skipA)
		tg.publish(pst, tileG, scanFlagAgg, ta)
		f.Place(skipA)
		f.AtNot(f.Setp(ptx.Eq, warp, ptx.Int(0))).Bra(prefixDone)
		var X []ptx.Reg
		if s.Lookback > 0 {
			X = tg.lookbackWide(pst, tile, r, lane, initV)
		} else {
			X = tg.lookback(pst, tile, r, lane, initV)
		}
		skipP := f.NewLabel()
		f.AtNot(tid0).Bra(skipP)
		incl := make([]ptx.Reg, G)
		for c := range X {
			incl[c] = g.op(X[c], ta[c])
			for i, w := range g.words(X[c]) {
				f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ptx.Sym("sc_pv"), int64((c*nw+i)*4)), w)
			}
		}
		tg.publish(pst, tileG, scanFlagIncl, incl)
		f.Place(skipP)
	}
	f.Place(prefixDone)
	f.BarSync(0)

	// 5. Fold and store.
	hasTP := f.Reg(ptx.Pred)
	f.Op("not.pred", hasTP, rZero)
	if s.Exclusive {
		f.Op("setp.eq.u32", hasTP, tid, tid) // always: init or the look-back's
	}
	pre := make([]ptx.Reg, G)
	hpre := hp
	for c := range pre {
		ws := make([]ptx.Reg, nw)
		for i := range ws {
			ws[i] = f.Reg(ptx.B32)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ptx.Sym("sc_pv"), int64((c*nw+i)*4)), ws[i])
		}
		tpv := g.sel(rZero, initV, g.value(ws))
		hpre, pre[c] = g.combineHas(hasTP, tpv, hp, tp[c])
	}
	out := make([]ptx.Reg, K)
	run := append([]ptx.Reg(nil), pre...)
	for i := 0; i < K; i++ {
		c := i % G
		if s.Exclusive {
			out[i] = run[c]
			run[c] = g.op(run[c], x[i])
			continue
		}
		if i < G {
			// Without a prefix (the row's first element of column c): the element
			// itself, canonical (Combine.canonFirst).
			run[c] = g.sel(hpre, g.op(run[c], x[i]), g.canonFirst(x[i]))
		} else {
			run[c] = g.op(run[c], x[i])
		}
		out[i] = run[c]
	}
	if outT != g.t {
		// A half-precision output: each value rounded once.
		for i := range out {
			out[i] = castValue(g.ew, out[i], g.t, outT)
		}
	}
	done := f.NewLabel()
	if s.Vector {
		partial := f.NewLabel()
		f.AtNot(full).Bra(partial)
		if tg.transposedStore() {
			tg.storeTransposed(out, aout, lane)
		} else {
			v := vectorWidth(K, outSize)
			for i := 0; i < K; i += v {
				storeVector(f, outT, ptx.Mem(aout, int64(i*outSize)), out[i:i+v])
			}
		}
		f.Bra(done)
		f.Place(partial)
	}
	for i := 0; i < K; i++ {
		skip := f.NewLabel()
		f.AtNot(f.Setp(ptx.Gt, cnt, ptx.Int(i))).Bra(skip)
		storeValue(f, outT, ptx.Mem(aout, int64(i*outSize)), out[i])
		f.Place(skip)
	}
	f.Place(done)
	tg.finish()
}

// transposedStore reports whether full tiles are stored through shared memory, warp
// by warp, so that each store instruction writes 512 contiguous bytes: for 4- and
// 8-byte outputs, and half-precision ones in pairs, whose thread chunk is 16, 32, 64 or
// 128 bytes.
func (tg *tilesGen) transposedStore() bool {
	kw := tg.outWords()
	size := tg.s.outType().Size()
	ok := size == 4 || size == 8 || isHalfType(tg.s.outType()) && tg.s.Items%2 == 0
	return tg.s.Vector && ok && (kw == 4 || kw == 8 || kw == 16 || kw == 32)
}

// outWords is the 32-bit words of a thread's outputs: Items*nwords, or Items/2 for a
// half-precision output (two per word, the first in the low half).
func (tg *tilesGen) outWords() int {
	if isHalfType(tg.s.outType()) {
		return tg.s.Items / 2
	}
	return tg.s.Items * tg.g.nwords()
}

// xsWords is the words of a warp's staging area: 32 lanes of outWords words, one word
// of padding after every 32 (word i at i + i/32) so that both the blocked writes and
// the striped reads hit 32 distinct banks.
func (tg *tilesGen) xsWords() int {
	kw := tg.outWords()
	return 32*kw + kw
}

// storeTransposed stores the thread's outputs (a full tile) through the warp's
// staging area: blocked writes (lane l, word j at l*kw + j), bar.warp.sync, then
// striped reads of 4 words (lane l, row r: words 128r + 4l .. +3) and 16-byte stores,
// each row of the warp 512 contiguous bytes.
func (tg *tilesGen) storeTransposed(out []ptx.Reg, aout, lane ptx.Reg) {
	g := tg.g
	f := g.f
	K := tg.s.Items
	kw := tg.outWords()
	warpBase := f.Reg(ptx.U32) // the warp's staging area
	warp := f.Reg(ptx.U32)
	f.Shr(warp, f.Special(ptx.TidX), ptx.Int(5))
	f.Op("mov.u32", warpBase, ptx.Sym("sc_xs"))
	f.Fma(warpBase, warp, ptx.Int(4*tg.xsWords()), warpBase)
	// Blocked writes: word l*kw + j at (l*kw + (l*kw)/32 + j)*4 (kw divides 32).
	wb := f.Reg(ptx.U32)
	f.Mul(wb, lane, ptx.Int(kw))
	pad := f.Reg(ptx.U32)
	f.Shr(pad, wb, ptx.Int(5))
	f.Add(wb, wb, pad)
	f.Fma(wb, wb, ptx.Int(4), warpBase)
	var words []ptx.Reg
	if isHalfType(tg.s.outType()) {
		for i := 0; i < len(out); i += 2 {
			w := f.Reg(ptx.B32)
			f.Op("mov.b32", w, ptx.Vec{out[i], out[i+1]})
			words = append(words, w)
		}
	} else {
		for _, v := range out {
			words = append(words, g.words(v)...)
		}
	}
	for j, w := range words {
		f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(wb, int64(4*j)), w)
	}
	f.Op("bar.warp.sync", ptx.Uint(0xffffffff))
	// Striped reads: words 128r + 4l + q at (132r + 4l + l/8 + q)*4.
	rb := f.Reg(ptx.U32)
	f.Shl(rb, lane, ptx.Int(2))
	l8 := f.Reg(ptx.U32)
	f.Shr(l8, lane, ptx.Int(3))
	f.Add(rb, rb, l8)
	f.Fma(rb, rb, ptx.Int(4), warpBase)
	// The warp's output: aout of lane 0 (lane l's chunk starts l*K elements later).
	wo := f.Reg(ptx.U64)
	lo := f.Reg(ptx.U64)
	f.MulWide(lo, lane, ptx.Int(K*tg.s.outType().Size()))
	f.Sub(wo, aout, lo)
	lo16 := f.Reg(ptx.U64)
	f.MulWide(lo16, lane, ptx.Int(16))
	f.Add(wo, wo, lo16)
	for r := 0; r < kw/4; r++ {
		ws := f.Regs(ptx.B32, 4)
		for q := range ws {
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(rb, int64(4*(132*r+q))), ws[q])
		}
		f.St(ptx.Global, ptx.CacheDefault, ptx.B32, ptx.Mem(wo, int64(512*r)), regsToOps(ws)...)
	}
}

// guardedLoad loads the element at a when p holds (zero otherwise), as a value of the
// input type.
func (tg *tilesGen) guardedLoad(p ptx.Reg, a ptx.Addr) ptx.Reg {
	return guardedLoad(tg.g.f, tg.s.In, p, a)
}

func guardedLoad(f *ptx.Func, t dtype.DType, p ptx.Reg, a ptx.Addr) ptx.Reg {
	if t == dtype.Bool {
		r := f.Reg(ptx.U32)
		f.Mov(r, ptx.Int(0))
		f.At(p).Op("ld.global.nc.u8", r, a)
		return f.Setp(ptx.Ne, r, ptx.Int(0))
	}
	r := f.Reg(ewRT(t))
	f.Mov(r, zeroOf(r.Type()))
	f.At(p).Op("ld.global.nc"+ewMemSuffix(t), r, a)
	return r
}

func zeroOf(t ptx.Type) ptx.Operand {
	switch t {
	case ptx.F32:
		return ptx.ImmF32(0)
	case ptx.F64:
		return ptx.ImmF64(0)
	}
	return ptx.Int(0)
}

// zero returns a register holding some value (0 or false), for values that are
// selected away.
func (g *sgen) zero() ptx.Reg {
	f := g.f
	r := g.reg()
	if g.t == dtype.Bool {
		u := f.Reg(ptx.U32)
		f.Mov(u, ptx.Int(0))
		return f.Setp(ptx.Ne, u, ptx.Int(0))
	}
	f.Mov(r, zeroOf(r.Type()))
	return r
}

// movTo copies src into dst.
func (g *sgen) movTo(dst, src ptx.Reg) {
	t := dst.Type()
	if t != ptx.Pred && t != ptx.F32 && t != ptx.F64 {
		t = t.Bit()
	}
	g.f.Op("mov"+t.String(), dst, src)
}

// statusAddr returns the address of tile t's slot: the packed word, or the flag.
func (tg *tilesGen) vecBytes() int { return tg.s.Group * tg.g.nwords() * 4 }

// publish stores the tile's status (flag, values): called by one thread.
func (tg *tilesGen) publish(pst, tile ptx.Reg, flag int, vals []ptx.Reg) {
	g := tg.g
	f := g.f
	if tg.s.Packed() {
		w := g.words(vals[0])
		fl := tg.constWord(flag)
		a := f.Reg(ptx.U64)
		f.MulWide(a, tile, ptx.Int(8*len(w)))
		f.Add(a, a, pst)
		for i := range w {
			word := f.Reg(ptx.U64)
			f.Op("mov.b64", word, ptx.Vec{w[i], fl})
			f.Op("st.relaxed.gpu.global.u64", ptx.Mem(a, int64(16+8*i)), word)
		}
		return
	}
	publishFlagged(g, pst, tile, flag, vals, tg.vecBytes(), tg.layoutReg(pst))
}

// loadPacked loads a packed status at addr+off (PackedWords() relaxed 64-bit loads, under
// valid), leaves the low halves in lo (0 where not valid) and, where valid, sets flag to
// the words' common flag, or to 0 (not yet published) when their flags differ.
func (tg *tilesGen) loadPacked(valid, addr ptx.Reg, off int64, lo []ptx.Reg, flag ptx.Reg) {
	f := tg.g.f
	hi := make([]ptx.Reg, len(lo))
	for i := range lo {
		w := f.Reg(ptx.U64)
		f.Mov(w, ptx.Int(0))
		f.At(valid).Op("ld.relaxed.gpu.global.u64", w, ptx.Mem(addr, off+int64(8*i)))
		hi[i] = f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{lo[i], hi[i]}, w)
	}
	fl := hi[0].As(ptx.U32)
	if len(hi) == 2 {
		same := f.Setp(ptx.Eq, fl, hi[1].As(ptx.U32))
		f.Selp(fl, fl, ptx.Int(0), same)
	}
	f.At(valid).Op("mov.u32", flag, fl)
}

// constWord returns a .b32 register holding v.
func (tg *tilesGen) constWord(v int) ptx.Reg {
	r := tg.g.f.Reg(ptx.B32)
	tg.g.f.Mov(r, ptx.Int(v))
	return r
}

// layoutReg returns the registers of the flagged layout's array addresses: the status
// address plus offsets that depend on the number of tiles (rows*tiles_per_row).
func (tg *tilesGen) layoutReg(pst ptx.Reg) statusRegs {
	f := tg.g.f
	rows, tpr := f.LdParam(3), f.LdParam(5)
	tiles := f.Reg(ptx.U64)
	f.Mul(tiles, rows, tpr)
	return statusAddrs(f, pst, tiles, tg.vecBytes())
}

// statusRegs holds the addresses of a flagged status's arrays.
type statusRegs struct{ flags, agg, incl ptx.Reg }

// statusAddrs computes the flagged layout (flaggedLayout) on the device from the
// number of tiles.
func statusAddrs(f *ptx.Func, pst, tiles ptx.Reg, vec int) statusRegs {
	var s statusRegs
	s.flags = f.Reg(ptx.U64)
	f.Add(s.flags, pst, ptx.Int(16))
	pad := func(bytes ptx.Reg) ptx.Reg {
		p := f.Reg(ptx.U64)
		f.Add(p, bytes, ptx.Int(15))
		f.And(p, p, ptx.Uint(^uint64(15)))
		return p
	}
	fb := f.Reg(ptx.U64)
	f.Shl(fb, tiles, ptx.Int(2))
	s.agg = f.Reg(ptx.U64)
	f.Add(s.agg, s.flags, pad(fb))
	vb := f.Reg(ptx.U64)
	f.Mul(vb, tiles, ptx.Int(vec))
	s.incl = f.Reg(ptx.U64)
	f.Add(s.incl, s.agg, pad(vb))
	return s
}

// publishFlagged stores vals in the aggregate or inclusive slot of tile (vec bytes
// each), then fence.acq_rel.gpu, then the flag (a release pattern).
func publishFlagged(g *sgen, pst, tile ptx.Reg, flag int, vals []ptx.Reg, vec int, st statusRegs) {
	f := g.f
	nw := g.nwords()
	base := st.agg
	if flag == scanFlagIncl {
		base = st.incl
	}
	a := f.Reg(ptx.U64)
	f.MulWide(a, tile, ptx.Int(vec))
	f.Add(a, a, base)
	for c, v := range vals {
		for i, w := range g.words(v) {
			f.Op("st.relaxed.gpu.global.b32", ptx.Mem(a, int64((c*nw+i)*4)), w)
		}
	}
	f.Fence("acq_rel", "gpu")
	fa := f.Reg(ptx.U64)
	f.MulWide(fa, tile, ptx.Int(4))
	f.Add(fa, fa, st.flags)
	fl := f.Reg(ptx.U32)
	f.Mov(fl, ptx.Int(flag))
	f.Op("st.relaxed.gpu.global.u32", ptx.Mem(fa, 0), fl)
}

// lookback runs in warp 0 of a tile r > 0 of its row: it returns the exclusive prefix
// of the tile (valid in lane 0).
func (tg *tilesGen) lookback(pst, tile, r, lane ptx.Reg, initV ptx.Reg) []ptx.Reg {
	s, g := tg.s, tg.g
	f := g.f
	G := s.Group
	nw := g.nwords()
	var st statusRegs
	if !s.Packed() {
		st = tg.layoutReg(pst)
	}
	// The row's first tile: tile - r.
	first := f.Reg(ptx.U32)
	f.Sub(first, tile, r)
	base := f.Reg(ptx.S32)
	f.Sub(base, r.As(ptx.S32), ptx.Int(1))
	hx := f.Reg(ptx.Pred)
	f.Op("setp.ne.u32", hx, lane, lane) // false
	X := make([]ptx.Reg, G)
	for c := range X {
		X[c] = g.zero()
	}
	loop, spin, done := f.NewLabel(), f.NewLabel(), f.NewLabel()
	f.Place(loop)
	j := f.Reg(ptx.S32)
	f.Sub(j, base, lane.As(ptx.S32))
	valid := f.Setp(ptx.Ge, j, ptx.Int(0))
	tj := f.Reg(ptx.U32)
	f.Add(tj, first, j.As(ptx.U32))
	flag := f.Reg(ptx.U32)
	var words []ptx.Reg
	var fa ptx.Reg
	if s.Packed() {
		words = f.Regs(ptx.B32, s.PackedWords())
		fa = f.Reg(ptx.U64)
		f.MulWide(fa, tj, ptx.Int(8*s.PackedWords()))
		f.Add(fa, fa, pst)
	} else {
		fa = f.Reg(ptx.U64)
		f.MulWide(fa, tj, ptx.Int(4))
		f.Add(fa, fa, st.flags)
	}
	f.Place(spin)
	f.Mov(flag, ptx.Int(scanFlagIncl))
	if s.Packed() {
		tg.loadPacked(valid, fa, 16, words, flag)
	} else {
		f.At(valid).Op("ld.relaxed.gpu.global.u32", flag, ptx.Mem(fa, 0))
	}
	ready := f.Setp(ptx.Ne, flag, ptx.Int(0))
	all := f.Reg(ptx.Pred)
	f.Vote("all", all, ready, ptx.Uint(0xffffffff))
	spinPause(f, notp(f, all), "sc_t0")
	f.AtNot(all).Bra(spin)
	if !s.Packed() {
		f.Fence("acq_rel", "gpu")
	}
	isP := f.Setp(ptx.Eq, flag, ptx.Int(scanFlagIncl))
	pm := f.Reg(ptx.B32)
	f.Vote("ballot", pm, isP, ptx.Uint(0xffffffff))
	pos := lowestSetBit(f, pm)
	// The lanes' values: the status's, or init for the virtual tile before the row.
	v := make([]ptx.Reg, G)
	if s.Packed() {
		v[0] = g.value(words)
	} else {
		va, vi := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.MulWide(va, tj, ptx.Int(tg.vecBytes()))
		f.Add(vi, va, st.incl)
		f.Add(va, va, st.agg)
		f.At(isP).Op("mov.b64", va, vi)
		for c := 0; c < G; c++ {
			ws := make([]ptx.Reg, nw)
			for i := range ws {
				ws[i] = f.Reg(ptx.B32)
				f.Mov(ws[i], ptx.Int(0))
				f.At(valid).Op("ld.relaxed.gpu.global.b32", ws[i], ptx.Mem(va, int64((c*nw+i)*4)))
			}
			v[c] = g.value(ws)
		}
	}
	hasv := valid
	if s.Exclusive {
		for c := range v {
			v[c] = g.sel(valid, v[c], initV)
		}
		hasv = f.Reg(ptx.Pred)
		f.Op("setp.eq.u32", hasv, lane, lane) // true
	}
	// Lanes up to pos contribute (pos itself if it holds a value).
	h := f.Setp(ptx.Lt, lane, pos)
	atPos := f.Reg(ptx.Pred)
	f.Op("and.pred", atPos, f.Setp(ptx.Eq, lane, pos), hasv)
	f.Op("or.pred", h, h, atPos)
	// Fold lanes 0..last: the higher lane (earlier tile) on the left.
	for d := 1; d < 32; d *= 2 {
		hy := shflPred(f, "down", h, ptx.Int(d), ptx.Int(31))
		ok := f.Reg(ptx.Pred)
		f.Op("and.pred", ok, hy, f.Setp(ptx.Lt, lane, ptx.Int(32-d)))
		var hn ptx.Reg
		for c := range v {
			y := g.shfl("down", v[c], ptx.Int(d), ptx.Int(31))
			hn, v[c] = g.combineHas(ok, y, h, v[c])
		}
		h = hn
	}
	// The window is earlier than what X holds: X = W ⊕ X, kept in the same registers
	// across iterations.
	var hn ptx.Reg
	for c := range X {
		var nx ptx.Reg
		hn, nx = g.combineHas(h, v[c], hx, X[c])
		g.movTo(X[c], nx)
	}
	g.movPred(hx, hn)
	f.At(f.Setp(ptx.Ne, pm, ptx.Int(0))).Bra(done)
	f.Sub(base, base, ptx.Int(32))
	f.Bra(loop)
	f.Place(done)
	return X
}

func (g *sgen) movPred(dst, src ptx.Reg) { g.f.Op("mov.pred", dst, src) }

// PTX returns the kernel's PTX text and entry name.
//
// ScanColumns, per block (a tile: Groups*Rows elements of the axis for Width()
// columns): thread (group, column) loads its Rows elements of the column (consecutive
// threads read consecutive columns: coalesced when the input's inner stride is 1),
// folds them, and the groups' aggregates are combined in order through shared memory.
// With more than one chunk, the tile then publishes its per-column aggregates (stores
// by the group-0 threads, bar.sync, fence.acq_rel.gpu and the flag by thread 0), each
// group-0 thread looks back along its column (relaxed flag loads, fence.acq_rel.gpu,
// relaxed value loads; one predecessor at a time until an inclusive prefix), stores its
// inclusive prefix, and thread 0 flags it after a barrier and a fence. Finally each
// thread folds its elements from its prefix and stores them.
func (s *ScanColumns) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "scan_columns"
	k := m.Kernel(entry, ptx.P("in", ptx.U64), ptx.P("out", ptx.U64), ptx.P("status", ptx.U64),
		ptx.P("outer", ptx.U64), ptx.P("n", ptx.U64), ptx.P("inner", ptx.U64),
		ptx.P("so", ptx.S64), ptx.P("sk", ptx.S64), ptx.P("sj", ptx.S64),
		ptx.P("chunks", ptx.U64), ptx.P("init", ptx.U64))
	regAttrs(k, ScanColumnsBlock, ScanRegCap)
	s.build(newSGen(m, k, major*10+minor, s.Comb))
	return m.String(), entry, nil
}

func scanLog2(v int) int {
	n := 0
	for v > 1 {
		v >>= 1
		n++
	}
	return n
}

func (s *ScanColumns) build(g *sgen) {
	f := g.f
	H, W, R := s.Groups, s.Width(), s.Rows
	nw := g.nwords()
	inSize, outT := s.In.Size(), s.outType()
	outSize := outT.Size()
	vec := W * nw * 4

	f.Shared("sc_tile", ptx.B32, 4, 1)
	f.Shared("sc_t0", ptx.B64, 8, 1) // the block's start (spinStart)
	f.Shared("sc_px", ptx.B32, 8, W*nw)
	if H > 1 {
		f.Shared("sc_gh", ptx.B32, 4, H*W)
		f.Shared("sc_gv", ptx.B32, 8, H*W*nw)
	}
	pin, pout, pst := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, pout, f.LdParam(1))
	f.CvtaTo(ptx.Global, pst, f.LdParam(2))
	outer, n, inner := f.LdParam(3), f.LdParam(4), f.LdParam(5)
	so, sk, sj := f.LdParam(6), f.LdParam(7), f.LdParam(8)
	chunks64 := f.LdParam(9)
	initV := g.fromBits64(f.LdParam(10))
	if s.Exclusive {
		initV = g.canonFirst(initV) // element 0 of a column (Combine.canonFirst)
	}
	chunks := f.Reg(ptx.U32)
	f.Cvt(chunks, chunks64)
	tid := f.Special(ptx.TidX)
	cl, grp := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(cl, tid, ptx.Int(W-1))
	f.Shr(grp, tid, ptx.Int(scanLog2(W)))
	tid0 := f.Setp(ptx.Eq, tid, ptx.Int(0))
	grp0 := f.Setp(ptx.Eq, grp, ptx.Int(0))
	multi := f.Setp(ptx.Gt, chunks, ptx.Int(1))

	// The tile number.
	tile := f.Reg(ptx.U32)
	f.Mov(tile, ptx.SReg(ptx.CtaidX))
	got := f.NewLabel()
	f.AtNot(multi).Bra(got)
	{
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		t := f.Reg(ptx.U32)
		f.Atom("", "", ptx.Global, "add", ptx.U32, t, ptx.Mem(pst, 0), ptx.Int(1))
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("sc_tile"), 0), t)
		spinStart(f, "sc_t0")
		f.Place(skip)
		f.BarSync(0)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("sc_tile"), 0), tile)
	}
	f.Place(got)
	cols := f.Reg(ptx.U64)
	f.Mul(cols, outer, inner)
	cb64 := f.Reg(ptx.U64)
	f.Add(cb64, cols, ptx.Int(W-1))
	f.Shr(cb64, cb64, ptx.Int(scanLog2(W)))
	cb := f.Reg(ptx.U32)
	f.Cvt(cb, cb64)
	q, b := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Div(q, tile, cb)
	f.Mul(b, q, cb)
	f.Sub(b, tile, b)
	// The thread's column and rows.
	c := f.Reg(ptx.U64)
	f.MulWide(c, b, ptx.Int(W))
	cl64 := f.Reg(ptx.U64)
	f.Cvt(cl64, cl)
	f.Add(c, c, cl64)
	colValid := f.Setp(ptx.Lt, c, cols)
	o, j := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Div(o, c, inner)
	f.Mul(j, o, inner)
	f.Sub(j, c, j)
	k0 := f.Reg(ptx.U64)
	f.MulWide(k0, q, ptx.Int(H*R))
	gr := f.Reg(ptx.U64)
	f.MulWide(gr, grp, ptx.Int(R))
	f.Add(k0, k0, gr)
	left := f.Reg(ptx.S64)
	f.Sub(left, n.As(ptx.S64), k0.As(ptx.S64))
	f.Max(left, left, ptx.Int(0))
	f.Min(left, left, ptx.Int(R))
	cnt := f.Reg(ptx.S32)
	f.Cvt(cnt, left)
	f.AtNot(colValid).Op("mov.s32", cnt, ptx.Int(0))
	// Addresses.
	inOff := f.Reg(ptx.S64)
	f.Mul(inOff, o.As(ptx.S64), so)
	f.Fma(inOff, j.As(ptx.S64), sj, inOff)
	f.Fma(inOff, k0.As(ptx.S64), sk, inOff)
	ain := f.Reg(ptx.S64)
	f.Fma(ain, inOff, ptx.Int(inSize), pin.As(ptx.S64))
	step := f.Reg(ptx.S64)
	f.Mul(step, sk, ptx.Int(inSize))
	outOff := f.Reg(ptx.U64)
	f.Fma(outOff, o, n, k0)
	f.Fma(outOff, outOff, inner, j)
	aout := f.Reg(ptx.U64)
	f.Fma(aout, outOff, ptx.Int(outSize), pout)
	ostep := f.Reg(ptx.U64)
	f.Mul(ostep, inner, ptx.Int(outSize))

	// Loads and the thread's aggregate.
	x := make([]ptx.Reg, R)
	valid := make([]ptx.Reg, R)
	a := f.Reg(ptx.S64)
	f.Mov(a, ain)
	for i := 0; i < R; i++ {
		valid[i] = f.Setp(ptx.Gt, cnt, ptx.Int(i))
		raw := guardedLoad(f, s.In, valid[i], ptx.Mem(a, 0))
		x[i] = castValue(g.ew, raw, s.In, g.t)
		if i+1 < R {
			f.Add(a, a, step)
		}
	}
	has := f.Setp(ptx.Gt, cnt, ptx.Int(0))
	agg := x[0]
	for i := 1; i < R; i++ {
		agg = g.sel(valid[i], g.op(agg, x[i]), agg)
	}
	// The groups' prefixes and the tile aggregate.
	hg := f.Reg(ptx.Pred)
	f.Op("setp.ne.u32", hg, tid, tid) // false
	gp := g.zero()
	ht, ta := has, agg
	if H > 1 {
		slot := f.Reg(ptx.U32)
		f.Fma(slot, grp, ptx.Int(W), cl)
		ha := f.Reg(ptx.U32)
		f.Op("mov.u32", ha, ptx.Sym("sc_gh"))
		f.Fma(ha, slot, ptx.Int(4), ha)
		hw := f.Reg(ptx.U32)
		f.Selp(hw, ptx.Int(1), ptx.Int(0), has)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ha, 0), hw)
		va := f.Reg(ptx.U32)
		f.Op("mov.u32", va, ptx.Sym("sc_gv"))
		f.Fma(va, slot, ptx.Int(nw*4), va)
		for i, w := range g.words(agg) {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(va, int64(4*i)), w)
		}
		f.BarSync(0)
		ht = f.Reg(ptx.Pred)
		f.Op("setp.ne.u32", ht, tid, tid)
		ta = g.zero()
		ca := f.Reg(ptx.U32) // column cl of group 0
		f.Op("mov.u32", ca, ptx.Sym("sc_gh"))
		f.Fma(ca, cl, ptx.Int(4), ca)
		cv := f.Reg(ptx.U32)
		f.Op("mov.u32", cv, ptx.Sym("sc_gv"))
		f.Fma(cv, cl, ptx.Int(nw*4), cv)
		for gg := 0; gg < H; gg++ {
			hv := f.Reg(ptx.U32)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ca, int64(gg*W*4)), hv)
			pv := f.Setp(ptx.Ne, hv, ptx.Int(0))
			ws := make([]ptx.Reg, nw)
			for i := range ws {
				ws[i] = f.Reg(ptx.B32)
				f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(cv, int64((gg*W*nw+i)*4)), ws[i])
			}
			v := g.value(ws)
			take := f.Reg(ptx.Pred)
			f.Op("and.pred", take, pv, f.Setp(ptx.Gt, grp, ptx.Int(gg)))
			hg, gp = g.combineHas(hg, gp, take, v)
			ht, ta = g.combineHas(ht, ta, pv, v)
		}
	}

	// The tile's prefix per column.
	qZero := f.Setp(ptx.Eq, q, ptx.Int(0))
	single, prefixDone := f.NewLabel(), f.NewLabel()
	f.AtNot(multi).Bra(single)
	tiles := f.Reg(ptx.U64)
	f.Mul(tiles, chunks64, cb64)
	st := statusAddrs(f, pst, tiles, vec)
	slotAddr := func(base ptx.Reg, t ptx.Reg) ptx.Reg {
		ad := f.Reg(ptx.U64)
		f.MulWide(ad, t, ptx.Int(vec))
		f.Add(ad, ad, base)
		off := f.Reg(ptx.U64)
		f.MulWide(off, cl, ptx.Int(nw*4))
		f.Add(ad, ad, off)
		return ad
	}
	storeSlot := func(base ptx.Reg, t ptx.Reg, v ptx.Reg) {
		ad := slotAddr(base, t)
		for i, w := range g.words(v) {
			f.Op("st.relaxed.gpu.global.b32", ptx.Mem(ad, int64(4*i)), w)
		}
	}
	flagTile := func(flag int) {
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		f.Fence("acq_rel", "gpu")
		fa := f.Reg(ptx.U64)
		f.MulWide(fa, tile, ptx.Int(4))
		f.Add(fa, fa, st.flags)
		fl := f.Reg(ptx.U32)
		f.Mov(fl, ptx.Int(flag))
		f.Op("st.relaxed.gpu.global.u32", ptx.Mem(fa, 0), fl)
		f.Place(skip)
	}
	notFirst := f.NewLabel()
	f.AtNot(qZero).Bra(notFirst)
	{
		skip := f.NewLabel()
		f.AtNot(grp0).Bra(skip)
		incl := ta
		if s.Exclusive {
			incl = g.op(initV, ta)
		}
		storeSlot(st.incl, tile, incl)
		f.Place(skip)
		f.BarSync(0)
		flagTile(scanFlagIncl)
		f.Bra(single) // the prefix is init (or none), as for a single chunk
	}
	f.Place(notFirst)
	{
		skip := f.NewLabel()
		f.AtNot(grp0).Bra(skip)
		storeSlot(st.agg, tile, ta)
		f.Place(skip)
		f.BarSync(0)
		flagTile(scanFlagAgg)
		lbDone := f.NewLabel()
		f.AtNot(grp0).Bra(lbDone)
		// Look back along the column, one predecessor at a time.
		hx := f.Reg(ptx.Pred)
		f.Op("setp.ne.u32", hx, tid, tid)
		X := g.zero()
		p := f.Reg(ptx.U32)
		f.Sub(p, q, ptx.Int(1))
		loop, spin, out := f.NewLabel(), f.NewLabel(), f.NewLabel()
		f.Place(loop)
		tp := f.Reg(ptx.U32)
		f.Fma(tp, p, cb, b)
		fa := f.Reg(ptx.U64)
		f.MulWide(fa, tp, ptx.Int(4))
		f.Add(fa, fa, st.flags)
		flag := f.Reg(ptx.U32)
		f.Place(spin)
		f.Op("ld.relaxed.gpu.global.u32", flag, ptx.Mem(fa, 0))
		notReady := f.Setp(ptx.Eq, flag, ptx.Int(0))
		spinPause(f, notReady, "sc_t0")
		f.At(notReady).Bra(spin)
		f.Fence("acq_rel", "gpu")
		isP := f.Setp(ptx.Eq, flag, ptx.Int(scanFlagIncl))
		va, vi := slotAddr(st.agg, tp), slotAddr(st.incl, tp)
		f.At(isP).Op("mov.b64", va, vi)
		ws := make([]ptx.Reg, nw)
		for i := range ws {
			ws[i] = f.Reg(ptx.B32)
			f.Op("ld.relaxed.gpu.global.b32", ws[i], ptx.Mem(va, int64(4*i)))
		}
		on := f.Reg(ptx.Pred)
		f.Op("setp.eq.u32", on, tid, tid) // true
		hn, nx := g.combineHas(on, g.value(ws), hx, X)
		g.movTo(X, nx)
		g.movPred(hx, hn)
		f.At(isP).Bra(out)
		f.Sub(p, p, ptx.Int(1))
		f.Bra(loop)
		f.Place(out)
		storeSlot(st.incl, tile, g.op(X, ta))
		pa := f.Reg(ptx.U32)
		f.Op("mov.u32", pa, ptx.Sym("sc_px"))
		f.Fma(pa, cl, ptx.Int(nw*4), pa)
		for i, w := range g.words(X) {
			f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(pa, int64(4*i)), w)
		}
		f.Place(lbDone)
		f.BarSync(0)
		flagTile(scanFlagIncl)
		f.Bra(prefixDone)
	}
	f.Place(single)
	f.Place(prefixDone)
	// The thread's prefix: the chunk's (X from shared memory, or init), then the
	// groups' before it.
	fromLB := f.Reg(ptx.Pred)
	notQ0 := f.Reg(ptx.Pred)
	f.Op("not.pred", notQ0, qZero)
	f.Op("and.pred", fromLB, multi, notQ0)
	pa := f.Reg(ptx.U32)
	f.Op("mov.u32", pa, ptx.Sym("sc_px"))
	f.Fma(pa, cl, ptx.Int(nw*4), pa)
	ws := make([]ptx.Reg, nw)
	for i := range ws {
		ws[i] = f.Reg(ptx.B32)
		f.Mov(ws[i], ptx.Int(0))
		f.At(fromLB).Op("ld.shared.b32", ws[i], ptx.Mem(pa, int64(4*i)))
	}
	tpv := g.sel(fromLB, g.value(ws), initV)
	hasTP := fromLB
	if s.Exclusive {
		hasTP = f.Reg(ptx.Pred)
		f.Op("setp.eq.u32", hasTP, tid, tid)
	}
	hpre, pre := g.combineHas(hasTP, tpv, hg, gp)
	// Fold and store.
	run := pre
	ao := f.Reg(ptx.U64)
	f.Mov(ao, aout)
	for i := 0; i < R; i++ {
		var outV ptx.Reg
		switch {
		case s.Exclusive:
			outV = run
			run = g.op(run, x[i])
		case i == 0:
			// Without a prefix (the column's first element): the element itself,
			// canonical (Combine.canonFirst).
			run = g.sel(hpre, g.op(run, x[i]), g.canonFirst(x[i]))
			outV = run
		default:
			run = g.op(run, x[i])
			outV = run
		}
		skip := f.NewLabel()
		f.AtNot(valid[i]).Bra(skip)
		if outT != g.t {
			outV = castValue(g.ew, outV, g.t, outT) // a half-precision output: rounded once
		}
		storeValue(f, outT, ptx.Mem(ao, 0), outV)
		f.Place(skip)
		if i+1 < R {
			f.Add(ao, ao, ostep)
		}
	}
	// selfClean's operands from the parameters again (registers kept from the start
	// would spill).
	status := func() ptx.Reg { return lateStatus(f, 2) }
	clear := func() ptx.Reg {
		cbs, tiles := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Mul(cbs, f.LdParam(3), f.LdParam(5))
		f.Add(cbs, cbs, ptx.Int(W-1))
		f.Shr(cbs, cbs, ptx.Int(scanLog2(W)))
		f.Mul(tiles, cbs, f.LdParam(9))
		return flaggedBytes(f, tiles, vec)
	}
	selfClean(f, status, f.Setp(ptx.Gt, f.LdParam(9), ptx.Int(1)), clear, ScanColumnsBlock)
}
