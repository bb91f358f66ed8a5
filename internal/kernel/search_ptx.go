package kernel

import (
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the search kernels. Each thread owns Items consecutive elements of a tile of
// SearchBlock*Items (16-byte vector loads for full tiles when Vector is set) and turns
// them into flags (x != 0 on the element's bits: floats ignore the sign bit, so -0 is
// zero and NaN nonzero).

// nonzeroPred returns p = (v != 0) for a value register of element type t.
func nonzeroPred(f *ptx.Func, t dtype.DType, v ptx.Reg) ptx.Reg {
	switch t {
	case dtype.Bool:
		return v
	case dtype.Float16, dtype.BFloat16:
		return ptxHalfNonzero(f, v)
	case dtype.Float32:
		b := f.Reg(ptx.U32)
		f.Op("and.b32", b, v, ptx.Uint(0x7fffffff))
		return f.Setp(ptx.Ne, b, ptx.Int(0))
	case dtype.Float64:
		b := f.Reg(ptx.U64)
		f.Op("and.b64", b, v, ptx.Uint(0x7fffffffffffffff))
		return f.Setp(ptx.Ne, b, ptx.Int(0))
	}
	return f.Setp(ptx.Ne, v, ptx.Int(0))
}

// searchGen holds what the search kernels share.
type searchGen struct {
	f      *ptx.Func
	in     dtype.DType
	k      int
	vector bool
	tid    ptx.Reg
	lane   ptx.Reg
	warp   ptx.Reg
}

func newSearchGen(f *ptx.Func, in dtype.DType, items int, vector bool) *searchGen {
	g := &searchGen{f: f, in: in, k: items, vector: vector}
	g.tid = f.Special(ptx.TidX)
	g.lane, g.warp = f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(g.lane, g.tid, ptx.Int(31))
	f.Shr(g.warp, g.tid, ptx.Int(5))
	return g
}

// flags loads the thread's elements of the tile starting at element start (u64) of n
// (u64) from pin and returns a predicate per element (false past the end) and the
// number of the thread's elements in range (cnt, s32).
func (g *searchGen) flags(pin, start, n ptx.Reg) (flags []ptx.Reg, cnt ptx.Reg) {
	f := g.f
	T := SearchBlock * g.k
	size := g.in.Size()
	rem := f.Reg(ptx.U64)
	f.Sub(rem, n, start)
	f.Min(rem, rem, ptx.Int(T))
	tileLen := f.Reg(ptx.U32)
	f.Cvt(tileLen, rem)
	full := f.Setp(ptx.Eq, tileLen, ptx.Int(T))
	thStart := f.Reg(ptx.U32)
	f.Mul(thStart, g.tid, ptx.Int(g.k))
	cnt = f.Reg(ptx.S32)
	f.Sub(cnt, tileLen.As(ptx.S32), thStart.As(ptx.S32))
	f.Max(cnt, cnt, ptx.Int(0))
	f.Min(cnt, cnt, ptx.Int(g.k))
	idx := f.Reg(ptx.U64)
	f.Cvt(idx, thStart)
	f.Add(idx, idx, start)
	a := f.Reg(ptx.U64)
	f.Fma(a, idx, ptx.Int(size), pin)
	flags = make([]ptx.Reg, g.k)
	for i := range flags {
		flags[i] = f.Reg(ptx.Pred)
	}
	done := f.NewLabel()
	if g.vector {
		partial := f.NewLabel()
		f.AtNot(full).Bra(partial)
		v := vectorWidth(g.k, size)
		for i := 0; i < g.k; i += v {
			vals := loadVector(f, g.in, v, ptx.Mem(a, int64(i*size)))
			for j, val := range vals {
				f.Op("mov.pred", flags[i+j], nonzeroPred(f, g.in, val))
			}
		}
		f.Bra(done)
		f.Place(partial)
	}
	for i := 0; i < g.k; i++ {
		valid := f.Setp(ptx.Gt, cnt, ptx.Int(i))
		val := guardedLoad(f, g.in, valid, ptx.Mem(a, int64(i*size)))
		f.Op("and.pred", flags[i], valid, nonzeroPred(f, g.in, val))
	}
	f.Place(done)
	return flags, cnt
}

// count returns the number of true flags (u32).
func (g *searchGen) count(flags []ptx.Reg) ptx.Reg {
	f := g.f
	c := f.Reg(ptx.U32)
	f.Mov(c, ptx.Int(0))
	one := f.Reg(ptx.U32)
	for _, p := range flags {
		f.Selp(one, ptx.Int(1), ptx.Int(0), p)
		f.Add(c, c, one)
	}
	return c
}

// blockSum returns the sum of v (u32) over the block in every thread, through the
// shared array sym of SearchBlock/32 words; it has a barrier before its reads and one
// after them, so sym can be reused.
func (g *searchGen) blockSum(v ptx.Reg, sym string) ptx.Reg {
	f := g.f
	s := f.Reg(ptx.U32)
	f.Mov(s, v)
	for d := 16; d >= 1; d /= 2 {
		o := f.Reg(ptx.U32)
		f.Shfl("bfly", o, s, ptx.Int(d), ptx.Int(31), ptx.Uint(0xffffffff))
		f.Add(s, s, o)
	}
	skip := f.NewLabel()
	f.AtNot(f.Setp(ptx.Eq, g.lane, ptx.Int(0))).Bra(skip)
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym(sym))
	f.Fma(a, g.warp, ptx.Int(4), a)
	f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), s)
	f.Place(skip)
	f.BarSync(0)
	total := f.Reg(ptx.U32)
	f.Mov(total, ptx.Int(0))
	for w := 0; w < SearchBlock/32; w++ {
		x := f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym(sym), int64(4*w)), x)
		f.Add(total, total, x)
	}
	f.BarSync(0)
	return total
}

// PTX returns the count pass's PTX: tile counts, and their inclusive prefixes by
// decoupled look-back over packed 64-bit status words.
func (c *CompactCount) PTX(major, minor int) (src, entry string, err error) {
	if err := c.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "compact_count"
	f := m.Kernel(entry, ptx.P("in", ptx.U64), ptx.P("status", ptx.U64), ptx.P("n", ptx.U64))
	compactAttrs(f)
	f.Shared("cc_tile", ptx.B32, 4, 1)
	f.Shared("cc_t0", ptx.B64, 8, 1) // the block's start (spinStart)
	f.Shared("cc_sum", ptx.B32, 4, SearchBlock/32)
	pin, pst := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, pst, f.LdParam(1))
	n := f.LdParam(2)
	g := newSearchGen(f, c.In, c.Items, c.Vector)
	tid0 := f.Setp(ptx.Eq, g.tid, ptx.Int(0))
	// The tile number, in start order.
	{
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		t := f.Reg(ptx.U32)
		f.Atom("", "", ptx.Global, "add", ptx.U32, t, ptx.Mem(pst, 0), ptx.Int(1))
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("cc_tile"), 0), t)
		spinStart(f, "cc_t0")
		f.Place(skip)
		f.BarSync(0)
	}
	tile := f.Reg(ptx.U32)
	f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("cc_tile"), 0), tile)
	start := f.Reg(ptx.U64)
	f.MulWide(start, tile, ptx.Int(c.Tile()))
	flags, _ := g.flags(pin, start, n)
	total := g.blockSum(g.count(flags), "cc_sum")
	tot64 := f.Reg(ptx.U64)
	f.Cvt(tot64, total)
	done := f.NewLabel()
	f.AtNot(f.Setp(ptx.Eq, g.warp, ptx.Int(0))).Bra(done)
	wa := f.Reg(ptx.U64)
	f.MulWide(wa, tile, ptx.Int(8))
	f.Add(wa, wa, pst)
	publish := func(state uint64, v ptx.Reg) {
		w := f.Reg(ptx.U64)
		f.Or(w, v, ptx.Uint(state<<statusShift))
		f.Op("st.relaxed.gpu.global.u64", ptx.Mem(wa, 16), w)
	}
	notFirst := f.NewLabel()
	f.AtNot(f.Setp(ptx.Eq, tile, ptx.Int(0))).Bra(notFirst)
	{
		f.AtNot(tid0).Bra(done)
		publish(statusPrefix, tot64)
		f.Bra(done)
	}
	f.Place(notFirst)
	{
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		publish(statusAggregate, tot64)
		f.Place(skip)
		x := lookbackCounts(f, pst, tile, g.lane)
		f.AtNot(tid0).Bra(done)
		incl := f.Reg(ptx.U64)
		f.Add(incl, x, tot64)
		publish(statusPrefix, incl)
	}
	f.Place(done)
	f.Ret()
	return m.String(), entry, nil
}

// lookbackCounts runs in warp 0 of tile > 0: the sum of the counts of the tiles before
// tile, read from packed status words (valid in every lane).
func lookbackCounts(f *ptx.Func, pst, tile, lane ptx.Reg) ptx.Reg {
	x := f.Reg(ptx.U64)
	f.Mov(x, ptx.Int(0))
	base := f.Reg(ptx.S32)
	f.Sub(base, tile.As(ptx.S32), ptx.Int(1))
	loop, spin, done := f.NewLabel(), f.NewLabel(), f.NewLabel()
	f.Place(loop)
	j := f.Reg(ptx.S32)
	f.Sub(j, base, lane.As(ptx.S32))
	valid := f.Setp(ptx.Ge, j, ptx.Int(0))
	a := f.Reg(ptx.U64)
	f.MulWide(a, j, ptx.Int(8))
	f.Add(a, a, pst.As(ptx.S64))
	w := f.Reg(ptx.U64)
	f.Place(spin)
	f.Mov(w, ptx.Uint(statusPrefix<<statusShift)) // before tile 0: a prefix of 0
	f.At(valid).Op("ld.relaxed.gpu.global.u64", w, ptx.Mem(a, 16))
	state := f.Reg(ptx.U64)
	f.Shr(state, w, ptx.Int(statusShift))
	ready := f.Setp(ptx.Ne, state, ptx.Int(0))
	all := f.Reg(ptx.Pred)
	f.Vote("all", all, ready, ptx.Uint(0xffffffff))
	spinPause(f, notp(f, all), "cc_t0")
	f.AtNot(all).Bra(spin)
	isP := f.Setp(ptx.Eq, state, ptx.Int(statusPrefix))
	pm := f.Reg(ptx.B32)
	f.Vote("ballot", pm, isP, ptx.Uint(0xffffffff))
	pos := lowestSetBit(f, pm)
	v := f.Reg(ptx.U64)
	f.And(v, w, ptx.Uint(statusMask))
	f.AtNot(f.Setp(ptx.Le, lane, pos)).Op("mov.u64", v, ptx.Int(0))
	// Sum over the warp (every lane gets it).
	for d := 16; d >= 1; d /= 2 {
		lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{lo, hi}, v)
		olo, ohi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Shfl("bfly", olo, lo, ptx.Int(d), ptx.Int(31), ptx.Uint(0xffffffff))
		f.Shfl("bfly", ohi, hi, ptx.Int(d), ptx.Int(31), ptx.Uint(0xffffffff))
		o := f.Reg(ptx.U64)
		f.Op("mov.b64", o, ptx.Vec{olo, ohi})
		f.Add(v, v, o)
	}
	f.Add(x, x, v)
	f.At(f.Setp(ptx.Ne, pm, ptx.Int(0))).Bra(done)
	f.Sub(base, base, ptx.Int(32))
	f.Bra(loop)
	f.Place(done)
	return x
}

// PTX returns the scatter pass's PTX.
func (c *CompactScatter) PTX(major, minor int) (src, entry string, err error) {
	if err := c.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "compact_scatter"
	f := m.Kernel(entry, ptx.P("in", ptx.U64), ptx.P("status", ptx.U64), ptx.P("out", ptx.U64),
		ptx.P("values", ptx.U64), ptx.P("n", ptx.U64), ptx.P("total", ptx.U64))
	compactAttrs(f)
	T := c.Tile()
	ot := c.OutType()
	osz := ot.Size()
	f.Shared("sc_tile", ptx.B32, 4, 1) // selfClean's
	f.Shared("cs_warp", ptx.B32, 4, SearchBlock/32)
	f.Shared("cs_stage", ptx.B8, 16, T*osz)
	pin, pst, pout := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, pst, f.LdParam(1))
	f.CvtaTo(ptx.Global, pout, f.LdParam(2))
	pval := f.LdParam(3)
	if c.Values != dtype.Invalid {
		f.CvtaTo(ptx.Global, pval, pval)
	}
	n := f.LdParam(4)
	g := newSearchGen(f, c.In, c.Items, c.Vector)
	tile := f.Special(ptx.CtaidX)
	start := f.Reg(ptx.U64)
	f.MulWide(start, tile, ptx.Int(T))
	// The tile's offset: the previous tile's inclusive prefix.
	off := f.Reg(ptx.U64)
	f.Mov(off, ptx.Int(0))
	pa := f.Reg(ptx.U64)
	f.MulWide(pa, tile, ptx.Int(8))
	f.Add(pa, pa, pst)
	// (Not ld.global.nc: the last block clears the status before the kernel ends.)
	f.At(f.Setp(ptx.Ne, tile, ptx.Int(0))).Op("ld.global.u64", off, ptx.Mem(pa, 8)) // word tile-1 at 16+8(tile-1)
	f.And(off, off, ptx.Uint(statusMask))
	flags, _ := g.flags(pin, start, n)
	cnt := g.count(flags)
	// Exclusive block scan of the counts.
	incl := f.Reg(ptx.U32)
	f.Mov(incl, cnt)
	for d := 1; d < 32; d *= 2 {
		o := f.Reg(ptx.U32)
		f.Shfl("up", o, incl, ptx.Int(d), ptx.Int(0), ptx.Uint(0xffffffff))
		f.At(f.Setp(ptx.Ge, g.lane, ptx.Int(d))).Op("add.u32", incl, incl, o)
	}
	{
		skip := f.NewLabel()
		f.AtNot(f.Setp(ptx.Eq, g.lane, ptx.Int(31))).Bra(skip)
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym("cs_warp"))
		f.Fma(a, g.warp, ptx.Int(4), a)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), incl)
		f.Place(skip)
	}
	f.BarSync(0)
	pos := f.Reg(ptx.U32)
	f.Sub(pos, incl, cnt)
	total := f.Reg(ptx.U32)
	f.Mov(total, ptx.Int(0))
	for w := 0; w < SearchBlock/32; w++ {
		x := f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("cs_warp"), int64(4*w)), x)
		f.At(f.Setp(ptx.Gt, g.warp, ptx.Int(w))).Op("add.u32", pos, pos, x)
		f.Add(total, total, x)
	}
	// Stage the thread's outputs at its positions.
	sa := f.Reg(ptx.U32)
	f.Op("mov.u32", sa, ptx.Sym("cs_stage"))
	f.Fma(sa, pos, ptx.Int(osz), sa)
	idx := f.Reg(ptx.U64)
	th := f.Reg(ptx.U32)
	f.Mul(th, g.tid, ptx.Int(c.Items))
	f.Cvt(idx, th)
	f.Add(idx, idx, start)
	var va ptx.Reg
	if c.Values != dtype.Invalid {
		va = f.Reg(ptx.U64)
		f.Fma(va, idx, ptx.Int(osz), pval)
	}
	stType := map[int]ptx.Type{1: ptx.U8, 2: ptx.U16, 4: ptx.U32, 8: ptx.U64}[osz]
	for i, p := range flags {
		skip := f.NewLabel()
		f.AtNot(p).Bra(skip)
		if c.Values == dtype.Invalid {
			e := f.Reg(ptx.U64)
			f.Add(e, idx, ptx.Int(i))
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), e)
		} else {
			r := f.Reg(stType)
			if osz < 4 {
				r = f.Reg(ptx.U32)
			}
			f.Op("ld.global.nc"+stType.String(), r, ptx.Mem(va, int64(i*osz)))
			f.St(ptx.Shared, ptx.CacheDefault, stType, ptx.Mem(sa, 0), r)
		}
		f.Add(sa, sa, ptx.Int(osz))
		f.Place(skip)
	}
	f.BarSync(0)
	// Write the tile's run out, coalesced.
	i := f.Reg(ptx.U32)
	f.Mov(i, g.tid)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, total)).Bra(done)
	s := f.Reg(ptx.U32)
	f.Op("mov.u32", s, ptx.Sym("cs_stage"))
	f.Fma(s, i, ptx.Int(osz), s)
	r := f.Reg(stType)
	if osz < 4 {
		r = f.Reg(ptx.U32)
	}
	f.Ld(ptx.Shared, ptx.CacheDefault, stType, ptx.Mem(s, 0), r)
	d := f.Reg(ptx.U64)
	f.Cvt(d, i)
	f.Add(d, d, off)
	f.Fma(d, d, ptx.Int(osz), pout)
	f.St(ptx.Global, ptx.CacheDefault, stType, ptx.Mem(d, 0), r)
	f.Add(i, i, ptx.Int(SearchBlock))
	f.Bra(loop)
	f.Place(done)
	// The last tile's thread 0 writes the number of outputs to total (if given).
	{
		skip := f.NewLabel()
		ptot := f.LdParam(5)
		last := f.Reg(ptx.U32)
		f.Sub(last, f.Special(ptx.NctaidX), ptx.Int(1))
		w := f.Reg(ptx.Pred)
		f.Op("and.pred", w, f.Setp(ptx.Eq, g.tid, ptx.Int(0)), f.Setp(ptx.Eq, tile, last))
		f.Op("and.pred", w, w, f.Setp(ptx.Ne, ptot, ptx.Int(0)))
		f.AtNot(w).Bra(skip)
		t64 := f.Reg(ptx.U64)
		f.Cvt(t64, total)
		f.Add(t64, t64, off)
		pt := f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, pt, ptot)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(pt, 0), t64)
		f.Place(skip)
	}
	clearBytes := func() ptx.Reg {
		c := f.Reg(ptx.U64)
		f.Cvt(c, f.Special(ptx.NctaidX))
		f.Mul(c, c, ptx.Int(8))
		f.Add(c, c, ptx.Int(15))
		f.And(c, c, ptx.Uint(^uint64(15)))
		return c
	}
	selfClean(f, func() ptx.Reg { return lateStatus(f, 1) }, f.Setp(ptx.Ge, n, ptx.Int(0)), clearBytes, SearchBlock)
	return m.String(), entry, nil
}

// PTX returns the find-first kernel's PTX.
func (s *FindFirst) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "find_first"
	f := m.Kernel(entry, ptx.P("in", ptx.U64), ptx.P("result", ptx.U64), ptx.P("n", ptx.U64))
	blockAttrs(f, SearchBlock)
	f.Shared("ff_found", ptx.B64, 8, 1)
	f.Shared("ff_warp", ptx.B64, 8, SearchBlock/32)
	pin, pres := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, pres, f.LdParam(1))
	n := f.LdParam(2)
	g := newSearchGen(f, s.In, s.Items, false)
	T := s.Tile()
	tid0 := f.Setp(ptx.Eq, g.tid, ptx.Int(0))
	tile := f.Reg(ptx.U64)
	f.Cvt(tile, f.Special(ptx.CtaidX))
	stride := f.Reg(ptx.U64)
	f.Cvt(stride, f.Special(ptx.NctaidX))
	tiles := f.Reg(ptx.U64)
	f.Add(tiles, n, ptx.Int(T-1))
	f.Div(tiles, tiles, ptx.Int(T))
	loop, exit := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, tile, tiles)).Bra(exit)
	start := f.Reg(ptx.U64)
	f.Mul(start, tile, ptx.Int(T))
	// Stop when an index before this tile is already known.
	f.BarSync(0)
	{
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		fr := f.Reg(ptx.U64)
		f.Op("ld.relaxed.gpu.global.u64", fr, ptx.Mem(pres, 0))
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym("ff_found"), 0), fr)
		f.Place(skip)
	}
	f.BarSync(0)
	found := f.Reg(ptx.U64)
	f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym("ff_found"), 0), found)
	f.At(f.Setp(ptx.Le, found, start)).Bra(exit)
	flags, _ := g.flags(pin, start, n)
	// The thread's first flagged element (all ones if none), backwards so the lowest
	// wins.
	first := f.Reg(ptx.U64)
	f.Mov(first, ptx.Uint(^uint64(0)))
	th := f.Reg(ptx.U32)
	f.Mul(th, g.tid, ptx.Int(s.Items))
	base := f.Reg(ptx.U64)
	f.Cvt(base, th)
	f.Add(base, base, start)
	for i := len(flags) - 1; i >= 0; i-- {
		e := f.Reg(ptx.U64)
		f.Add(e, base, ptx.Int(i))
		f.At(flags[i]).Op("mov.u64", first, e)
	}
	for d := 16; d >= 1; d /= 2 {
		lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{lo, hi}, first)
		olo, ohi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Shfl("bfly", olo, lo, ptx.Int(d), ptx.Int(31), ptx.Uint(0xffffffff))
		f.Shfl("bfly", ohi, hi, ptx.Int(d), ptx.Int(31), ptx.Uint(0xffffffff))
		o := f.Reg(ptx.U64)
		f.Op("mov.b64", o, ptx.Vec{olo, ohi})
		f.Min(first, first, o)
	}
	{
		skip := f.NewLabel()
		f.AtNot(f.Setp(ptx.Eq, g.lane, ptx.Int(0))).Bra(skip)
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym("ff_warp"))
		f.Fma(a, g.warp, ptx.Int(8), a)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), first)
		f.Place(skip)
	}
	f.BarSync(0)
	best := f.Reg(ptx.U64)
	f.Mov(best, ptx.Uint(^uint64(0)))
	for w := 0; w < SearchBlock/32; w++ {
		x := f.Reg(ptx.U64)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym("ff_warp"), int64(8*w)), x)
		f.Min(best, best, x)
	}
	hit := f.Setp(ptx.Ne, best, ptx.Uint(^uint64(0)))
	{
		skip := f.NewLabel()
		pub := f.Reg(ptx.Pred)
		f.Op("and.pred", pub, hit, tid0)
		f.AtNot(pub).Bra(skip)
		old := f.Reg(ptx.U64)
		f.Atom("", "", ptx.Global, "min", ptx.U64, old, ptx.Mem(pres, 0), best)
		f.Place(skip)
	}
	f.At(hit).Bra(exit) // later tiles of this block come after
	f.Add(tile, tile, stride)
	f.Bra(loop)
	f.Place(exit)
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the count kernel's PTX: a grid-stride loop over tiles, a block sum and
// one atomic add per block.
func (c *CountNonzero) PTX(major, minor int) (src, entry string, err error) {
	if err := c.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "count_nonzero"
	f := m.Kernel(entry, ptx.P("in", ptx.U64), ptx.P("result", ptx.U64), ptx.P("n", ptx.U64))
	blockAttrs(f, SearchBlock)
	f.Shared("cn_sum", ptx.B32, 4, SearchBlock/32)
	pin, pres := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	f.CvtaTo(ptx.Global, pres, f.LdParam(1))
	n := f.LdParam(2)
	g := newSearchGen(f, c.In, c.Items, false)
	T := c.Tile()
	tile := f.Reg(ptx.U64)
	f.Cvt(tile, f.Special(ptx.CtaidX))
	stride := f.Reg(ptx.U64)
	f.Cvt(stride, f.Special(ptx.NctaidX))
	tiles := f.Reg(ptx.U64)
	f.Add(tiles, n, ptx.Int(T-1))
	f.Div(tiles, tiles, ptx.Int(T))
	acc := f.Reg(ptx.U32)
	f.Mov(acc, ptx.Int(0))
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, tile, tiles)).Bra(done)
	start := f.Reg(ptx.U64)
	f.Mul(start, tile, ptx.Int(T))
	flags, _ := g.flags(pin, start, n)
	f.Add(acc, acc, g.count(flags))
	f.Add(tile, tile, stride)
	f.Bra(loop)
	f.Place(done)
	total := g.blockSum(acc, "cn_sum")
	skip := f.NewLabel()
	f.AtNot(f.Setp(ptx.Eq, g.tid, ptx.Int(0))).Bra(skip)
	t64 := f.Reg(ptx.U64)
	f.Cvt(t64, total)
	old := f.Reg(ptx.U64)
	f.Atom("", "", ptx.Global, "add", ptx.U64, old, ptx.Mem(pres, 0), t64)
	f.Place(skip)
	f.Ret()
	return m.String(), entry, nil
}
