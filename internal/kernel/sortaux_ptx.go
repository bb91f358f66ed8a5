package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the kernels around sorting.

// gridIndex emits a thread's index in a one-dimensional grid, ctaid.x*ntid.x + tid.x,
// and the grid's width in threads, nctaid.x*ntid.x (both u64).
func gridIndex(f *ptx.Func) (i, width ptx.Reg) {
	i = f.Reg(ptx.U64)
	b := f.Reg(ptx.U64)
	f.Cvt(b, f.Special(ptx.CtaidX))
	nt := f.Reg(ptx.U64)
	f.Cvt(nt, f.Special(ptx.NtidX))
	tid := f.Reg(ptx.U64)
	f.Cvt(tid, f.Special(ptx.TidX))
	f.Fma(i, b, nt, tid)
	width = f.Reg(ptx.U64)
	f.Cvt(width, f.Special(ptx.NctaidX))
	f.Mul(width, width, nt)
	return i, width
}

// gridStride emits a grid-stride loop over [0, n) (u64) and calls body with the index;
// body must not branch out of the loop.
func gridStride(f *ptx.Func, n ptx.Reg, body func(i ptx.Reg)) {
	i, step := gridIndex(f)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, n)).Bra(done)
	body(i)
	f.Add(i, i, step)
	f.Bra(loop)
	f.Place(done)
}

// searchPTX emits a binary search of [0, n) (n a register of type t, U32 or U64) for
// the first index at which past holds (false before it, true from it on; sort.Search)
// and returns it, n if none.
func searchPTX(f *ptx.Func, t ptx.Type, n ptx.Operand, past func(mid ptx.Reg) ptx.Reg) ptx.Reg {
	lo, hi := f.Reg(t), f.Reg(t)
	f.Mov(lo, ptx.Int(0))
	f.Mov(hi, n)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, lo, hi)).Bra(done)
	mid := f.Reg(t)
	f.Sub(mid, hi, lo)
	f.Shr(mid, mid, ptx.Int(1))
	f.Add(mid, mid, lo)
	p := past(mid)
	f.At(p).Op("mov"+t.String(), hi, mid)
	f.AtNot(p).Op("add"+t.String(), lo, mid, ptx.Int(1))
	f.Bra(loop)
	f.Place(done)
	return lo
}

func auxKernel(major, minor int, entry string, params ...string) (*ptx.Module, *ptx.Func) {
	m := ptx.NewModule(major, minor)
	ps := make([]ptx.Param, len(params))
	for i, p := range params {
		ps[i] = ptx.P(p, ptx.U64)
	}
	f := m.Kernel(entry, ps...)
	return m, f
}

func globalParam(f *ptx.Func, i int) ptx.Reg {
	r := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, r, f.LdParam(i))
	return r
}

// PTX returns the run flags' PTX.
func (u *UniqueFlags) PTX(major, minor int) (src, entry string, err error) {
	if err := u.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "unique_flags"
	m, f := auxKernel(major, minor, entry, "sorted", "flags", "n")
	g := &sortGen{f: f, order: u.Order}
	ks := u.Order.Size()
	px, pf := globalParam(f, 0), globalParam(f, 1)
	n := f.LdParam(2)
	gridStride(f, n, func(i ptx.Reg) {
		a := f.Reg(ptx.U64)
		f.Fma(a, i, ptx.Int(ks), px)
		t := f.Reg(ptx.Pred)
		f.Op("setp.ne.u64", t, i, ptx.Int(0))
		x := loadElem(f, ks, t, ptx.Mem(a, 0), true)
		ap := f.Reg(ptx.U64)
		f.Sub(ap, a, ptx.Int(ks))
		y := loadElem(f, ks, t, ptx.Mem(ap, 0), true)
		ne := f.Setp(ptx.Ne, g.ordered(x), g.ordered(y))
		fl := f.Reg(ptx.U32)
		f.Selp(fl, ptx.Int(1), ptx.Int(0), ne)
		f.AtNot(t).Op("mov.u32", fl, ptx.Int(1))
		fa := f.Reg(ptx.U64)
		f.Add(fa, i, pf)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U8, ptx.Mem(fa, 0), fl)
	})
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the run lengths' PTX.
func (u *UniqueCounts) PTX(major, minor int) (src, entry string, err error) {
	defer scanPTXError(&err)
	entry = "unique_counts"
	m, f := auxKernel(major, minor, entry, "starts", "counts", "u", "n")
	ps, pc := globalParam(f, 0), globalParam(f, 1)
	nu, n := f.LdParam(2), f.LdParam(3)
	gridStride(f, nu, func(j ptx.Reg) {
		a := f.Reg(ptx.U64)
		f.Fma(a, j, ptx.Int(8), ps)
		s := f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), s)
		next := f.Reg(ptx.U64)
		f.Mov(next, n)
		j1 := f.Reg(ptx.U64)
		f.Add(j1, j, ptx.Int(1))
		f.At(f.Setp(ptx.Lt, j1, nu)).Op("ld.global.u64", next, ptx.Mem(a, 8))
		f.Sub(next, next, s)
		ca := f.Reg(ptx.U64)
		f.Fma(ca, j, ptx.Int(8), pc)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(ca, 0), next)
	})
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the inverse scatter's PTX.
func (u *InverseScatter) PTX(major, minor int) (src, entry string, err error) {
	defer scanPTXError(&err)
	entry = "unique_inverse"
	m, f := auxKernel(major, minor, entry, "perm", "cum", "inv", "n")
	pp, pc, pi := globalParam(f, 0), globalParam(f, 1), globalParam(f, 2)
	n := f.LdParam(3)
	gridStride(f, n, func(i ptx.Reg) {
		a := f.Reg(ptx.U64)
		f.Fma(a, i, ptx.Int(8), pp)
		p := f.Reg(ptx.U64)
		f.Op("ld.global.nc.u64", p, ptx.Mem(a, 0))
		f.Fma(a, i, ptx.Int(8), pc)
		c := f.Reg(ptx.U64)
		f.Op("ld.global.nc.u64", c, ptx.Mem(a, 0))
		f.Sub(c, c, ptx.Int(1))
		ia := f.Reg(ptx.U64)
		f.Fma(ia, p, ptx.Int(8), pi)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(ia, 0), c)
	})
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the batched binary search's PTX: pivots in shared memory as ordered
// keys of the key's width, and Queries searches interleaved per thread (their loads
// in flight together).
func (s *SearchSorted) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "search_sorted"
	m, f := auxKernel(major, minor, entry, "sorted", "m", "queries", "out", "n")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SearchSortedBlock))
	g := newSortGen(f, s.Order, 1)
	ks := s.Order.Size()
	kt := g.kt()
	pw := kt.Bits() / 8 // pivot bytes
	nodes := 1<<s.Levels - 1
	f.Shared("sr_piv", ptx.B8, 16, nodes*pw)
	pa, pq, po := globalParam(f, 0), globalParam(f, 2), globalParam(f, 3)
	mLen, n := f.LdParam(1), f.LdParam(4)
	pivBase := f.Reg(ptx.U32)
	f.Op("mov.u32", pivBase, ptx.Sym("sr_piv"))
	f.Sub(pivBase, pivBase, ptx.Int(pw)) // node i (from 1) at pw*(i-1)
	// goRight emits the step's decision: pivot (ordered) before the query v?
	goRight := func(piv, v ptx.Reg) ptx.Reg {
		if s.Right {
			return f.Setp(ptx.Le, piv, v)
		}
		return f.Setp(ptx.Lt, piv, v)
	}
	always := f.Reg(ptx.Pred)
	f.Op("setp.eq.u32", always, g.tid, g.tid)
	// Stage the pivots: node i (heap order from 1) replays its path from the root.
	{
		node := f.Reg(ptx.U32)
		f.Add(node, g.tid, ptx.Int(1))
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Gt, node, ptx.Int(nodes))).Bra(done)
		depth := f.Reg(ptx.U32)
		f.Op("bfind.u32", depth, node)
		lo, hi := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Mov(lo, ptx.Int(0))
		f.Mov(hi, mLen)
		for lvl := 0; lvl < s.Levels-1; lvl++ {
			// Bit depth-1-lvl of node says right (1) or left at level lvl.
			act := f.Setp(ptx.Gt, depth, ptx.Int(lvl))
			sh := f.Reg(ptx.U32)
			f.Sub(sh, depth, ptx.Int(lvl+1))
			bit := f.Reg(ptx.U32)
			f.Op("bfe.u32", bit, node, sh, ptx.Int(1))
			mid := f.Reg(ptx.U64)
			f.Add(mid, lo, hi)
			f.Shr(mid, mid, ptx.Int(1))
			r, l := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
			f.Op("and.pred", r, act, f.Setp(ptx.Ne, bit, ptx.Int(0)))
			f.Op("and.pred", l, act, f.Setp(ptx.Eq, bit, ptx.Int(0)))
			m1 := f.Reg(ptx.U64)
			f.Add(m1, mid, ptx.Int(1))
			f.At(r).Op("mov.u64", lo, m1)
			f.At(l).Op("mov.u64", hi, mid)
		}
		mid := f.Reg(ptx.U64)
		f.Add(mid, lo, hi)
		f.Shr(mid, mid, ptx.Int(1))
		ok := f.Setp(ptx.Lt, lo, hi)
		a := f.Reg(ptx.U64)
		f.Fma(a, mid, ptx.Int(ks), pa)
		o := g.ordered(loadElem(f, ks, ok, ptx.Mem(a, 0), true))
		sa := f.Reg(ptx.U32)
		f.Fma(sa, node, ptx.Int(pw), pivBase)
		f.St(ptx.Shared, ptx.CacheDefault, kt, ptx.Mem(sa, 0), o)
		f.Add(node, node, ptx.Int(SearchSortedBlock))
		f.Bra(loop)
		f.Place(done)
	}
	f.BarSync(0)
	// Q queries per thread and round: i, i+step, ... (grid-stride).
	Q := s.Queries
	i := f.Reg(ptx.U64)
	{
		b, nt, tid := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Cvt(b, f.Special(ptx.CtaidX))
		f.Cvt(nt, f.Special(ptx.NtidX))
		f.Cvt(tid, f.Special(ptx.TidX))
		f.Fma(i, b, nt, tid)
	}
	step := f.Reg(ptx.U64)
	f.Cvt(step, f.Special(ptx.NctaidX))
	f.Mul(step, step, ptx.Int(SearchSortedBlock))
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, n)).Bra(done)
	type query struct{ idx, v, lo, hi, node ptx.Reg }
	qs := make([]query, Q)
	for j := range qs {
		q := &qs[j]
		q.idx = f.Reg(ptx.U64)
		f.Fma(q.idx, step, ptx.Int(j), i)
		in := f.Setp(ptx.Lt, q.idx, n)
		qa := f.Reg(ptx.U64)
		f.Fma(qa, q.idx, ptx.Int(ks), pq)
		q.v = g.ordered(loadElem(f, ks, in, ptx.Mem(qa, 0), true))
		q.lo, q.hi = f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Mov(q.lo, ptx.Int(0))
		f.Mov(q.hi, mLen)
		f.At(notp(f, in)).Op("mov.u64", q.hi, ptx.Int(0)) // no search past the end
		q.node = f.Reg(ptx.U32)
		f.Mov(q.node, ptx.Int(1))
	}
	// step emits one step of query q reading its pivot with load.
	stepQ := func(q *query, act ptx.Reg, load func(mid ptx.Reg) ptx.Reg) {
		mid := f.Reg(ptx.U64)
		f.Add(mid, q.lo, q.hi)
		f.Shr(mid, mid, ptx.Int(1))
		right := goRight(load(mid), q.v)
		r, l := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
		f.Op("and.pred", r, act, right)
		f.Op("and.pred", l, act, notp(f, right))
		m1 := f.Reg(ptx.U64)
		f.Add(m1, mid, ptx.Int(1))
		f.At(r).Op("mov.u64", q.lo, m1)
		f.At(l).Op("mov.u64", q.hi, mid)
		rb := f.Reg(ptx.U32)
		f.Selp(rb, ptx.Int(1), ptx.Int(0), right)
		f.At(act).Op("mad.lo.u32", q.node, q.node, ptx.Int(2), rb)
	}
	for lvl := 0; lvl < s.Levels; lvl++ {
		for j := range qs {
			q := &qs[j]
			act := f.Setp(ptx.Lt, q.lo, q.hi)
			stepQ(q, act, func(ptx.Reg) ptx.Reg {
				sa := f.Reg(ptx.U32)
				f.Fma(sa, q.node, ptx.Int(pw), pivBase)
				piv := f.Reg(kt)
				f.Mov(piv, ptx.Int(0))
				f.At(act).Op("ld.shared"+kt.String(), piv, ptx.Mem(sa, 0))
				return piv
			})
		}
	}
	// The rest of the searches in global memory, together.
	{
		inner, innerDone := f.NewLabel(), f.NewLabel()
		f.Place(inner)
		any := f.Reg(ptx.Pred)
		f.Op("setp.ne.u32", any, g.tid, g.tid) // false
		acts := make([]ptx.Reg, Q)
		for j := range qs {
			acts[j] = f.Setp(ptx.Lt, qs[j].lo, qs[j].hi)
			f.Op("or.pred", any, any, acts[j])
		}
		f.AtNot(any).Bra(innerDone)
		for j := range qs {
			q := &qs[j]
			act := acts[j]
			stepQ(q, act, func(mid ptx.Reg) ptx.Reg {
				a := f.Reg(ptx.U64)
				f.Fma(a, mid, ptx.Int(ks), pa)
				return g.ordered(loadElem(f, ks, act, ptx.Mem(a, 0), true))
			})
		}
		f.Bra(inner)
		f.Place(innerDone)
	}
	for j := range qs {
		q := &qs[j]
		in := f.Setp(ptx.Lt, q.idx, n)
		oa := f.Reg(ptx.U64)
		f.Fma(oa, q.idx, ptx.Int(8), po)
		f.At(in).Op("st.global.u64", ptx.Mem(oa, 0), q.lo)
	}
	f.Fma(i, step, ptx.Int(Q), i)
	f.Bra(loop)
	f.Place(done)
	_ = always
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the quantile interpolation's PTX.
func (q *QuantileGather) PTX(major, minor int) (src, entry string, err error) {
	if err := q.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "quantile_gather"
	m, f := auxKernel(major, minor, entry, "sorted", "out", "qs", "rows", "n", "nq")
	ew := exprLowering(m, f, major*10+minor, nil)
	is, os := q.In.Size(), q.Out.Size()
	px, po := globalParam(f, 0), globalParam(f, 1)
	rows, n, nq := f.LdParam(3), f.LdParam(4), f.LdParam(5)
	var pqs ptx.Reg
	if !q.Median {
		pqs = globalParam(f, 2)
	}
	total := f.Reg(ptx.U64)
	f.Mul(total, rows, nq)
	elem := func(i ptx.Reg) ptx.Reg {
		a := f.Reg(ptx.U64)
		f.Fma(a, i, ptx.Int(is), px)
		return castValue(ew, loadValue(f, q.In, ptx.Mem(a, 0)), q.In, dtype.Float64)
	}
	gridStride(f, total, func(b ptx.Reg) {
		j := f.Reg(ptx.U64)
		f.Div(j, b, rows)
		r := f.Reg(ptx.U64)
		f.Mul(r, j, rows)
		f.Sub(r, b, r)
		s := f.Reg(ptx.U64)
		f.Mul(s, r, n)
		n := n
		skip, end := f.NewLabel(), f.NewLabel()
		var oa ptx.Reg
		skipNaN := q.SkipNaN && q.In.IsFloat()
		if skipNaN {
			// The row's elements before its first NaN (sorted last), by a binary search;
			// none: NaN.
			oa = f.Reg(ptx.U64)
			f.Fma(oa, b, ptx.Int(os), po)
			lo := searchPTX(f, ptx.U64, n, func(mid ptx.Reg) ptx.Reg {
				at := f.Reg(ptx.U64)
				f.Add(at, s, mid)
				x := elem(at)
				return f.Setp(ptx.NaN, x, x)
			})
			f.At(f.Setp(ptx.Eq, lo, ptx.Int(0))).Bra(skip)
			n = lo
		}
		n1 := f.Reg(ptx.U64)
		f.Sub(n1, n, ptx.Int(1))
		var v ptx.Reg // (float64)
		if q.Median {
			i1, i2 := f.Reg(ptx.U64), f.Reg(ptx.U64)
			f.Shr(i1, n1, ptx.Int(1))
			f.Shr(i2, n, ptx.Int(1))
			f.Add(i1, i1, s)
			f.Add(i2, i2, s)
			a, c := elem(i1), elem(i2)
			v = quantileMidPTX(f, a, c, f.Setp(ptx.Eq, i1, i2))
		} else {
			qa := f.Reg(ptx.U64)
			f.Fma(qa, j, ptx.Int(8), pqs)
			qv := f.Reg(ptx.F64)
			f.Ld(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(qa, 0), qv)
			lo, hi, t := quantilePosPTX(f, qv, n1)
			il, ih := f.Reg(ptx.U64), f.Reg(ptx.U64)
			f.Add(il, lo.As(ptx.U64), s)
			f.Add(ih, hi.As(ptx.U64), s)
			v = quantileLerpPTX(f, elem(il), elem(ih), t)
		}
		isNaN := f.Setp(ptx.NaN, v, v)
		if q.In.IsFloat() && !skipNaN {
			last := f.Reg(ptx.U64)
			f.Add(last, s, n1)
			x := elem(last)
			f.Op("or.pred", isNaN, isNaN, f.Setp(ptx.NaN, x, x))
		}
		if !skipNaN {
			oa = f.Reg(ptx.U64)
			f.Fma(oa, b, ptx.Int(os), po)
		}
		quantileStorePTX(f, ew, v, isNaN, q.Out, oa, skip, end)
	})
	f.Ret()
	return m.String(), entry, nil
}

// quantileMidPTX emits numpy.median's value of the middle elements a and c (float64):
// quantileMid(a, c), or a itself where odd (n odd: (a + a)/2 overflows past
// MaxFloat64/2).
func quantileMidPTX(f *ptx.Func, a, c, odd ptx.Reg) ptx.Reg {
	v := f.Reg(ptx.F64)
	f.Add(v, a, c)
	f.Mul(v, v, ptx.ImmF64(0.5)) // (exact: (a+c)/2)
	f.Selp(v, a, v, odd)
	return v
}

// quantilePosPTX emits quantilePos of q (f64) for n1 = n-1 (u64): lo and hi (s64)
// and t (f64).
func quantilePosPTX(f *ptx.Func, qv, n1 ptx.Reg) (lo, hi, t ptx.Reg) {
	nf := f.Reg(ptx.F64)
	f.Cvt(nf, n1)
	pos := f.Reg(ptx.F64)
	f.Mul(pos, qv, nf)
	fl := f.Reg(ptx.F64)
	f.Op("cvt.rmi.f64.f64", fl, pos)
	lo = f.Reg(ptx.S64)
	f.Op("cvt.rzi.s64.f64", lo, fl)
	f.Max(lo, lo, ptx.Int(0))
	f.Min(lo, lo, n1.As(ptx.S64))
	hi = f.Reg(ptx.S64)
	f.Add(hi, lo, ptx.Int(1))
	f.Min(hi, hi, n1.As(ptx.S64))
	lof := f.Reg(ptx.F64)
	f.Cvt(lof, lo)
	t = f.Reg(ptx.F64)
	f.Sub(t, pos, lof)
	// At or past the last element (lo = hi = n-1 already): t = pos+1.
	top := f.Reg(ptx.F64)
	f.Add(top, pos, ptx.ImmF64(1))
	f.Selp(t, top, t, f.Setp(ptx.Ge, pos, nf))
	return lo, hi, t
}

// quantileLerpPTX emits quantileLerp(a, c, t) (float64).
func quantileLerpPTX(f *ptx.Func, a, c, t ptx.Reg) ptx.Reg {
	d := f.Reg(ptx.F64)
	f.Sub(d, c, a)
	// t < 0.5: a + d*t; else b - d*(1-t)
	dt := f.Reg(ptx.F64)
	f.Mul(dt, d, t)
	lowV := f.Reg(ptx.F64)
	f.Add(lowV, a, dt)
	omt := f.Reg(ptx.F64)
	f.Sub(omt, ptx.ImmF64(1), t)
	d2 := f.Reg(ptx.F64)
	f.Mul(d2, d, omt)
	highV := f.Reg(ptx.F64)
	f.Sub(highV, c, d2)
	v := f.Reg(ptx.F64)
	f.Selp(v, highV, lowV, f.Setp(ptx.Ge, t, ptx.ImmF64(0.5)))
	return v
}

// quantileStorePTX emits a quantile's store at oa: v (float64) converted once to out,
// or the canonical NaN (quantileNaN) where isNaN; nan is the label of the NaN's store
// (placed here; a jump to it stores the NaN) and end the label after both.
func quantileStorePTX(f *ptx.Func, ew *ewGen, v, isNaN ptx.Reg, out dtype.DType, oa ptx.Reg, nan, end ptx.Label) {
	os := out.Size()
	res := castValue(ew, v, dtype.Float64, out)
	f.At(isNaN).Bra(nan)
	storeValue(f, out, ptx.Mem(oa, 0), res)
	f.Bra(end)
	f.Place(nan)
	bits := f.Reg(regType(os))
	f.Mov(bits, ptx.Uint(quantileNaN(out)))
	f.Op("st.global"+memType(os).String(), ptx.Mem(oa, 0), bits)
	f.Place(end)
}
