package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the quantile selection's kernels.

// unordered returns the element bits of the ordered key o (SortKey.Unordered).
func (g *sortGen) unordered(o ptx.Reg) ptx.Reg {
	f := g.f
	t := g.order.Type
	bits := 8 * g.order.Size()
	kt := g.kt()
	mask := ^uint64(0) >> (64 - bits)
	sign := uint64(1) << (bits - 1)
	if g.order.Descending {
		x := f.Reg(kt)
		f.Xor(x, o, ptx.Uint(mask))
		o = x
	}
	r := f.Reg(kt)
	switch {
	case t.IsSigned():
		f.Xor(r, o, ptx.Uint(sign))
	case t.IsFloat():
		// Below the sign bit: a negative value (all bits flipped); else clear the sign.
		flip := f.Reg(kt)
		f.Xor(flip, o, ptx.Uint(mask))
		f.And(r, o, ptx.Uint(mask&^sign))
		f.At(f.Setp(ptx.Lt, o, ptx.Uint(sign))).Op("mov"+kt.String(), r, flip)
	default:
		f.Mov(r, o)
	}
	return r
}

// PTX returns the flags pass's PTX.
func (q *QuantileFlags) PTX(major, minor int) (src, entry string, err error) {
	if err := q.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "quantile_flags"
	m, f := auxKernel(major, minor, entry, "keys", "flags", "state", "n", "chunk", "chunks", "zeros")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	f.Shared("qf_sum", ptx.B64, 8, QuantileFlagsWords)
	items := q.Items()
	g := newSortGen(f, SortKey{Type: q.Type}, items)
	ks := q.Type.Size()
	kt := g.kt()
	sign := uint64(1) << (8*ks - 1)
	mask := ^uint64(0) >> (64 - 8*ks)
	pk, pf := globalParam(f, 0), globalParam(f, 1)
	n, chunk, chunks := f.LdParam(3), f.LdParam(4), f.LdParam(5)
	// The words this mode adds to: NaNs, -0s, +0s (Counts), keys <= T, the
	// complement (Next).
	var words []int
	if q.Counts {
		words = append(words, 0, 1, 2)
	}
	if q.Next {
		words = append(words, 3, 4)
	}
	{
		// The block's sums start at zero.
		z := f.Reg(ptx.U64)
		f.Mov(z, ptx.Int(0))
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym("qf_sum"))
		f.Fma(a, g.tid, ptx.Int(8), a)
		f.At(f.Setp(ptx.Lt, g.tid, ptx.Int(QuantileFlagsWords))).Op("st.shared.u64", ptx.Mem(a, 0), z)
	}
	f.BarSync(0)
	b := f.Reg(ptx.U64)
	f.Cvt(b, f.Special(ptx.CtaidX))
	row := f.Reg(ptx.U64)
	f.Div(row, b, chunks)
	ci := f.Reg(ptx.U64) // the chunk of the row
	f.Mul(ci, row, chunks)
	f.Sub(ci, b, ci)
	start := f.Reg(ptx.U64)
	f.Mul(start, ci, chunk)
	end := f.Reg(ptx.U64)
	f.Add(end, start, chunk)
	f.Min(end, end, n)
	rowBase := f.Reg(ptx.U64)
	f.Mul(rowBase, row, n)
	var T ptx.Reg
	if q.Next {
		ps := globalParam(f, 2)
		a := f.Reg(ptx.U64)
		f.Fma(a, row, ptx.Int(16), ps)
		x := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), x)
		T = f.Reg(kt)
		f.Cvt(T, x)
	}
	// The thread's counts (u32: a row has fewer than 2^32 keys) and complement.
	var acc [QuantileFlagsWords]ptx.Reg
	for _, j := range words {
		t := ptx.U32
		if j == 4 {
			t = kt
		}
		acc[j] = f.Reg(t)
		f.Mov(acc[j], ptx.Int(0))
	}
	i := f.Reg(ptx.U64)
	tid64 := f.Reg(ptx.U64)
	f.Cvt(tid64, g.tid)
	f.Add(i, start, tid64)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, end)).Bra(done)
	raws, valid := loadRound(f, ks, items, i, end, rowBase, pk)
	and := func(ps ...ptx.Reg) ptx.Reg {
		p := f.Reg(ptx.Pred)
		f.Op("and.pred", p, ps[0], ps[1])
		for _, x := range ps[2:] {
			f.Op("and.pred", p, p, x)
		}
		return p
	}
	for j, raw := range raws {
		v := valid[j]
		var o ptx.Reg
		if q.Next {
			o = g.ordered(raw)
			f.At(and(v, f.Setp(ptx.Le, o, T))).Op("add.u32", acc[3], acc[3], ptx.Int(1))
			c := f.Reg(kt)
			f.Xor(c, o, ptx.Uint(mask))
			f.At(and(v, f.Setp(ptx.Gt, o, T))).Op("max"+kt.String(), acc[4], acc[4], c)
		}
		if q.Counts {
			// A NaN, a zero (by the ordered key where there is one: NaNs take the
			// largest key, both zeros the sign bit), and the zero's sign.
			var nan, zero ptx.Reg
			if q.Next {
				nan, zero = f.Setp(ptx.Eq, o, ptx.Uint(mask)), f.Setp(ptx.Eq, o, ptx.Uint(sign))
			} else {
				abs := f.Reg(kt)
				f.And(abs, raw, ptx.Uint(sign-1))
				nan, zero = f.Setp(ptx.Gt, abs, ptx.Uint(floatInf(q.Type))), f.Setp(ptx.Eq, abs, ptx.Int(0))
			}
			f.At(and(v, nan)).Op("add.u32", acc[0], acc[0], ptx.Int(1))
			f.At(and(v, zero, f.Setp(ptx.Ne, raw, ptx.Int(0)))).Op("add.u32", acc[1], acc[1], ptx.Int(1))
			f.At(and(v, zero, f.Setp(ptx.Eq, raw, ptx.Int(0)))).Op("add.u32", acc[2], acc[2], ptx.Int(1))
		}
	}
	f.Add(i, i, ptx.Int(items*SortBlock))
	f.Bra(loop)
	f.Place(done)
	// The warp's sums (butterfly shuffles), lane 0's into the block's, thread 0's into
	// the row's.
	lane0 := f.Setp(ptx.Eq, g.lane, ptx.Int(0))
	for _, j := range words {
		op := "add"
		if j == 4 {
			op = "max"
		}
		x := acc[j]
		for d := 16; d >= 1; d /= 2 {
			y := shflBfly(f, x, d)
			f.Op(op+x.Type().String(), x, x, y)
		}
		x64 := x
		if x.Type() != ptx.U64 {
			x64 = f.Reg(ptx.U64)
			f.Cvt(x64, x)
		}
		f.At(lane0).Op("red.shared."+op+".u64", ptx.Mem(ptx.Sym("qf_sum"), int64(8*j)), x64)
	}
	f.BarSync(0)
	exit := f.NewLabel()
	f.At(f.Setp(ptx.Ne, g.tid, ptx.Int(0))).Bra(exit)
	fa := f.Reg(ptx.U64)
	f.Mul(fa, row, ptx.Int(8*QuantileFlagsWords))
	f.Add(fa, fa, pf)
	var sums [QuantileFlagsWords]ptx.Reg
	for _, j := range words {
		op := "add"
		if j == 4 {
			op = "max"
		}
		x := f.Reg(ptx.U64)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym("qf_sum"), int64(8*j)), x)
		f.At(f.Setp(ptx.Ne, x, ptx.Int(0))).Op("red.global."+op+".u64", ptx.Mem(fa, int64(8*j)), x)
		sums[j] = x
	}
	if q.Counts {
		// The chunk's zeros (-0s and +0s), a plain store.
		z := f.Reg(ptx.U64)
		f.Add(z, sums[1], sums[2])
		z32 := f.Reg(ptx.U32)
		f.Cvt(z32, z)
		za := f.Reg(ptx.U64)
		f.Mul(za, row, chunks)
		f.Add(za, za, ci)
		f.Fma(za, za, ptx.Int(4), globalParam(f, 6))
		f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(za, 0), z32)
	}
	f.Place(exit)
	f.Ret()
	return m.String(), entry, nil
}

// quantileRowPosPTX emits QuantilePositions for m elements (u64, > 0): lo and hi
// (u64), and for a quantile (qv its q, f64) t, quantilePos's (the fraction, or pos+1
// at the last element; nil with median).
func quantileRowPosPTX(f *ptx.Func, median bool, qv, m ptx.Reg) (lo, hi, t ptx.Reg) {
	m1 := f.Reg(ptx.U64)
	f.Sub(m1, m, ptx.Int(1))
	if median {
		lo, hi = f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Shr(lo, m1, ptx.Int(1))
		f.Shr(hi, m, ptx.Int(1))
		return lo, hi, ptx.Reg{}
	}
	l, h, t := quantilePosPTX(f, qv, m1)
	return l.As(ptx.U64), h.As(ptx.U64), t
}

// PTX returns the quantile selection's finish: every thread of the row's block reads
// the state and flags (block-uniform), the block searches the chunks' zero counts and
// scans a chunk when a zero's sign needs it, and thread 0 computes and stores the
// result.
func (q *QuantileSelect) PTX(major, minor int) (src, entry string, err error) {
	if err := q.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "quantile_select"
	m, f := auxKernel(major, minor, entry, "keys", "state", "flags", "out", "qs", "rows", "n", "zeros", "chunk", "chunks")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	ew := exprLowering(m, f, major*10+minor, nil)
	f.Shared("qsel_sum", ptx.B32, 16, SortBlock/32)
	f.Shared("qsel_raw", ptx.B64, 16, 2)
	f.Shared("qsel_val", ptx.B64, 16, 2)
	if q.In.IsFloat() {
		f.Shared("qsel_at", ptx.B64, 16, 2) // the chunk of a zero, and the zeros before it
	}
	g := newSortGen(f, SortKey{Type: q.In}, 1)
	is, os := q.In.Size(), q.Out.Size()
	kt := g.kt()
	zero := uint64(1) << (8*is - 1) // the zero's ordered key (and the sign bit)
	mask := ^uint64(0) >> (64 - 8*is)
	float := q.In.IsFloat()
	pk, pf := globalParam(f, 0), globalParam(f, 2)
	n := f.LdParam(6)
	row := f.Reg(ptx.U64)
	f.Cvt(row, f.Special(ptx.CtaidX))
	fa := f.Reg(ptx.U64)
	f.Fma(fa, row, ptx.Int(8*QuantileFlagsWords), pf)
	var qv ptx.Reg
	if !q.Median {
		pq := globalParam(f, 4)
		qv = f.Reg(ptx.F64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(pq, 0), qv)
	}
	// The row's NaNs and valid elements m (n, or with SkipNaN n - NaNs; empty: none,
	// the positions then those of one element, unread).
	var nans, empty ptx.Reg
	mv := n
	if float {
		nans = f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(fa, 0), nans)
	}
	if q.SkipNaN {
		mv = f.Reg(ptx.U64)
		f.Sub(mv, n, nans)
		empty = f.Setp(ptx.Eq, mv, ptx.Int(0))
	}
	mp := f.Reg(ptx.U64)
	f.Max(mp, mv, ptx.Int(1))
	lo, hi, t := quantileRowPosPTX(f, q.Median, qv, mp)
	// Position lo's state, and hi's: lo's, or from the Next counts (quantileNext).
	var raws, ranks, keys [2]ptx.Reg
	{
		sa := f.Reg(ptx.U64)
		f.Fma(sa, row, ptx.Int(16), globalParam(f, 1))
		T, rk := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), T, rk)
		keys[0] = f.Reg(kt)
		f.Cvt(keys[0], T)
		ranks[0] = rk
		next := f.Setp(ptx.Ne, hi, lo)
		le, comp := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Mov(le, ptx.Int(0))
		f.Mov(comp, ptx.Int(0))
		f.At(next).Op("ld.global.u64", le, ptx.Mem(fa, 24))
		f.At(next).Op("ld.global.u64", comp, ptx.Mem(fa, 32))
		h1 := f.Reg(ptx.U64)
		f.Add(h1, hi, ptx.Int(1))
		ties := f.Reg(ptx.Pred) // hi is another key equal to T (or hi is lo)
		f.Op("or.pred", ties, notp(f, next), f.Setp(ptx.Ge, le, h1))
		above := f.Reg(kt)
		f.Cvt(above, comp)
		f.Xor(above, above, ptx.Uint(mask))
		keys[1] = f.Reg(kt)
		f.Selp(keys[1], keys[0], above, ties)
		ranks[1] = f.Reg(ptx.U64)
		f.Add(ranks[1], rk, ptx.Int(1))
		f.At(notp(f, next)).Op("mov.u64", ranks[1], rk)
		f.At(notp(f, ties)).Op("mov.u64", ranks[1], ptx.Int(1))
	}
	for j := range raws {
		raws[j] = g.unordered(keys[j])
	}
	var nanRow ptx.Reg
	if float {
		negs, poss := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(fa, 8), negs)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(fa, 16), poss)
		if !q.SkipNaN {
			nanRow = f.Setp(ptx.Ne, nans, ptx.Int(0))
		}
		allNeg := f.Setp(ptx.Eq, poss, ptx.Int(0))
		mixed := f.Reg(ptx.Pred)
		f.Op("and.pred", mixed, f.Setp(ptx.Ne, negs, ptx.Int(0)), notp(f, allNeg))
		// need[j]: the selected key is the zero and the row's zeros have both signs.
		var need [2]ptx.Reg
		maxRank, minRank := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Mov(maxRank, ptx.Int(0))
		for j := range raws {
			z := f.Setp(ptx.Eq, keys[j], ptx.Uint(zero))
			neg := f.Reg(ptx.Pred)
			f.Op("and.pred", neg, z, allNeg)
			f.At(neg).Op("mov"+kt.String(), raws[j], ptx.Uint(zero))
			need[j] = f.Reg(ptx.Pred)
			f.Op("and.pred", need[j], z, mixed)
			f.At(need[j]).Op("max.u64", maxRank, maxRank, ranks[j])
		}
		// The smaller rank needed (lo's, where both are: hi's is at least lo's).
		f.Mov(minRank, ranks[1])
		f.At(need[0]).Op("mov.u64", minRank, ranks[0])
		// The zeros: the chunk of the next rank needed from the chunks' zero counts
		// (256 chunks a step), then that chunk's keys in index order (256 a step) up to
		// the larger rank's zero or the chunk's end (then the larger rank's chunk, after
		// it). All the branches are block-uniform.
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Eq, maxRank, ptx.Int(0))).Bra(skip)
		chunk, chunks := f.LdParam(8), f.LdParam(9)
		rowBase := f.Reg(ptx.U64)
		f.Mul(rowBase, row, n)
		tid64 := f.Reg(ptx.U64)
		f.Cvt(tid64, g.tid)
		zrow := f.Reg(ptx.U64) // the row's chunk counts
		f.Mul(zrow, row, chunks)
		f.Fma(zrow, zrow, ptx.Int(4), globalParam(f, 7))
		seen, cb := f.Reg(ptx.U64), f.Reg(ptx.U64) // the zeros before chunk cb (or key base)
		f.Mov(seen, ptx.Int(0))
		f.Mov(cb, ptx.Int(0))
		outer, search, loop, next, done := f.NewLabel(), f.NewLabel(), f.NewLabel(), f.NewLabel(), f.NewLabel()
		f.Place(outer)
		f.At(f.Setp(ptx.Ge, seen, maxRank)).Bra(done)
		target := f.Reg(ptx.U64)
		f.Selp(target, minRank, maxRank, f.Setp(ptx.Lt, seen, minRank))
		f.Place(search)
		f.BarSync(0) // (the block scan's partial sums read)
		// (Counts short of the rank: no chunk holds it.)
		f.At(f.Setp(ptx.Ge, cb, chunks)).Bra(done)
		{
			ci := f.Reg(ptx.U64)
			f.Add(ci, cb, tid64)
			inC := f.Setp(ptx.Lt, ci, chunks)
			a := f.Reg(ptx.U64)
			f.Fma(a, ci, ptx.Int(4), zrow)
			cnt := f.Reg(ptx.U32)
			f.Mov(cnt, ptx.Int(0))
			f.At(inC).Op("ld.global.u32", cnt, ptx.Mem(a, 0))
			excl, total := g.blockScan(cnt, "qsel_sum")
			before, after := f.Reg(ptx.U64), f.Reg(ptx.U64)
			f.Cvt(before, excl)
			f.Add(before, before, seen)
			f.Cvt(after, cnt)
			f.Add(after, after, before)
			hit := f.Reg(ptx.Pred)
			f.Op("and.pred", hit, inC, f.Setp(ptx.Lt, before, target))
			f.Op("and.pred", hit, hit, f.Setp(ptx.Le, target, after))
			f.At(hit).Op("st.shared.u64", ptx.Mem(ptx.Sym("qsel_at"), 0), ci)
			f.At(hit).Op("st.shared.u64", ptx.Mem(ptx.Sym("qsel_at"), 8), before)
			t64 := f.Reg(ptx.U64)
			f.Cvt(t64, total)
			f.Add(seen, seen, t64)
			f.Add(cb, cb, ptx.Int(SortBlock))
			f.At(f.Setp(ptx.Lt, seen, target)).Bra(search)
		}
		f.BarSync(0)
		c := f.Reg(ptx.U64)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym("qsel_at"), 0), c)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(ptx.Sym("qsel_at"), 8), seen)
		base, end := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Mul(base, c, chunk)
		f.Add(end, base, chunk)
		f.Min(end, end, n)
		f.Place(loop)
		f.BarSync(0) // (the block scan's partial sums and qsel_at read)
		f.At(f.Setp(ptx.Ge, seen, maxRank)).Bra(done)
		f.At(f.Setp(ptx.Ge, base, end)).Bra(next)
		idx := f.Reg(ptx.U64)
		f.Add(idx, base, tid64)
		in := f.Setp(ptx.Lt, idx, end)
		a := f.Reg(ptx.U64)
		f.Add(a, idx, rowBase)
		f.Fma(a, a, ptx.Int(is), pk)
		x := loadElem(f, is, in, ptx.Mem(a, 0), true)
		abs := f.Reg(kt)
		f.And(abs, x, ptx.Uint(zero-1))
		isZero := f.Reg(ptx.Pred)
		f.Op("and.pred", isZero, in, f.Setp(ptx.Eq, abs, ptx.Int(0)))
		zc := f.Reg(ptx.U32)
		f.Selp(zc, ptx.Int(1), ptx.Int(0), isZero)
		excl, total := g.blockScan(zc, "qsel_sum")
		at := f.Reg(ptx.U64) // the zero's rank in the row (1-based)
		f.Cvt(at, excl)
		f.Add(at, at, seen)
		f.Add(at, at, ptx.Int(1))
		x64 := f.Reg(ptx.U64)
		f.Cvt(x64, x)
		for j := range raws {
			hit := f.Reg(ptx.Pred)
			f.Op("and.pred", hit, isZero, need[j])
			f.Op("and.pred", hit, hit, f.Setp(ptx.Eq, at, ranks[j]))
			f.At(hit).Op("st.shared.u64", ptx.Mem(ptx.Sym("qsel_raw"), int64(8*j)), x64)
		}
		t64 := f.Reg(ptx.U64)
		f.Cvt(t64, total)
		f.Add(seen, seen, t64)
		f.Add(base, base, ptx.Int(SortBlock))
		f.Bra(loop)
		f.Place(next) // (the chunk's end: seen counts the zeros before chunk c+1)
		f.Add(cb, c, ptx.Int(1))
		f.Bra(outer)
		f.Place(done)
		for j := range raws {
			y := f.Reg(ptx.U64)
			f.Mov(y, ptx.Int(0))
			f.At(need[j]).Op("ld.shared.u64", y, ptx.Mem(ptx.Sym("qsel_raw"), int64(8*j)))
			yk := f.Reg(kt)
			f.Cvt(yk, y)
			f.At(need[j]).Op("mov"+kt.String(), raws[j], yk)
		}
		f.Place(skip)
	}
	end := f.NewLabel()
	f.At(f.Setp(ptx.Ne, g.tid, ptx.Int(0))).Bra(end)
	// Each element as a value of In (through shared memory: its bits stored as the
	// element, loaded as a value), then float64.
	var vals [2]ptx.Reg
	for j := range raws {
		sa := ptx.Mem(ptx.Sym("qsel_val"), int64(8*j))
		f.Op("st.shared"+memType(is).String(), sa, raws[j])
		var v ptx.Reg
		if q.In == dtype.Bool {
			r := f.Reg(ptx.U32)
			f.Op("ld.shared.u8", r, sa)
			v = f.Setp(ptx.Ne, r, ptx.Int(0))
		} else {
			v = f.Reg(ewRT(q.In))
			f.Op("ld.shared"+ewMemSuffix(q.In), v, sa)
		}
		vals[j] = castValue(ew, v, q.In, dtype.Float64)
	}
	var v ptx.Reg
	if q.Median {
		odd := f.Reg(ptx.U64)
		f.And(odd, mp, ptx.Int(1))
		v = quantileMidPTX(f, vals[0], vals[1], f.Setp(ptx.Ne, odd, ptx.Int(0)))
	} else {
		v = quantileLerpPTX(f, vals[0], vals[1], t)
	}
	isNaN := f.Setp(ptx.NaN, v, v)
	switch {
	case q.SkipNaN:
		f.Op("or.pred", isNaN, isNaN, empty)
	case float:
		f.Op("or.pred", isNaN, isNaN, nanRow)
	}
	po := globalParam(f, 3)
	oa := f.Reg(ptx.U64)
	f.Fma(oa, row, ptx.Int(os), po)
	quantileStorePTX(f, ew, v, isNaN, q.Out, oa, f.NewLabel(), end)
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns QuantileK's PTX: a grid-stride loop over the rows.
func (q *QuantileK) PTX(major, minor int) (src, entry string, err error) {
	defer scanPTXError(&err)
	entry = "quantile_k"
	m, f := auxKernel(major, minor, entry, "flags", "state", "qs", "rows", "n")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	pf, ps := globalParam(f, 0), globalParam(f, 1)
	rows, n := f.LdParam(3), f.LdParam(4)
	var qv ptx.Reg
	if !q.Median {
		pq := globalParam(f, 2)
		qv = f.Reg(ptx.F64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(pq, 0), qv)
	}
	gridStride(f, rows, func(r ptx.Reg) {
		a := f.Reg(ptx.U64)
		f.Fma(a, r, ptx.Int(8*QuantileFlagsWords), pf)
		mv := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), mv)
		f.Sub(mv, n, mv)
		empty := f.Setp(ptx.Eq, mv, ptx.Int(0))
		f.Max(mv, mv, ptx.Int(1))
		lo, _, _ := quantileRowPosPTX(f, q.Median, qv, mv)
		k := f.Reg(ptx.U64)
		f.Add(k, lo, ptx.Int(1))
		f.At(empty).Op("mov.u64", k, ptx.Int(0))
		z := f.Reg(ptx.U64)
		f.Mov(z, ptx.Int(0))
		sa := f.Reg(ptx.U64)
		f.Fma(sa, r, ptx.Int(16), ps)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(sa, 0), z, k)
	})
	f.Ret()
	return m.String(), entry, nil
}
