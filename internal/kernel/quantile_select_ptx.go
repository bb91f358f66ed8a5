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
	m, f := auxKernel(major, minor, entry, "keys", "flags", "rows", "n")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	ks := q.Type.Size()
	kt := regType(ks)
	sign := uint64(1) << (8*ks - 1)
	pk, pf := globalParam(f, 0), globalParam(f, 1)
	rows, n := f.LdParam(2), f.LdParam(3)
	total := f.Reg(ptx.U64)
	f.Mul(total, rows, n)
	i, step := gridIndex(f)
	// The thread's row (row, its end rowEnd) and its counts there.
	row, rowEnd := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Div(row, i, n)
	f.Fma(rowEnd, row, n, n)
	var cs [3]ptx.Reg
	for j := range cs {
		cs[j] = f.Reg(ptx.U64)
		f.Mov(cs[j], ptx.Int(0))
	}
	flush := func() {
		fa := f.Reg(ptx.U64)
		f.Mul(fa, row, ptx.Int(24))
		f.Add(fa, fa, pf)
		for j, c := range cs {
			f.At(f.Setp(ptx.Ne, c, ptx.Int(0))).Op("red.global.add.u64", ptx.Mem(fa, int64(8*j)), c)
			f.Mov(c, ptx.Int(0))
		}
	}
	loop, done, same := f.NewLabel(), f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, total)).Bra(done)
	f.At(f.Setp(ptx.Lt, i, rowEnd)).Bra(same)
	flush()
	f.Div(row, i, n)
	f.Fma(rowEnd, row, n, n)
	f.Place(same)
	a := f.Reg(ptx.U64)
	f.Fma(a, i, ptx.Int(ks), pk)
	raw := f.Reg(kt)
	f.Op("ld.global.nc"+memType(ks).String(), raw, ptx.Mem(a, 0))
	abs := f.Reg(kt)
	f.And(abs, raw, ptx.Uint(sign-1))
	zero := f.Setp(ptx.Eq, abs, ptx.Int(0))
	neg, pos := f.Reg(ptx.Pred), f.Reg(ptx.Pred)
	f.Op("and.pred", neg, zero, f.Setp(ptx.Ne, raw, ptx.Int(0)))
	f.Op("and.pred", pos, zero, f.Setp(ptx.Eq, raw, ptx.Int(0)))
	f.At(f.Setp(ptx.Gt, abs, ptx.Uint(floatInf(q.Type)))).Op("add.u64", cs[0], cs[0], ptx.Int(1))
	f.At(neg).Op("add.u64", cs[1], cs[1], ptx.Int(1))
	f.At(pos).Op("add.u64", cs[2], cs[2], ptx.Int(1))
	f.Add(i, i, step)
	f.Bra(loop)
	f.Place(done)
	flush()
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the quantile selection's finish: every thread of the row's block reads
// the states and flags (block-uniform), the block scans the row when a zero's sign
// needs it, and thread 0 computes and stores the result.
func (q *QuantileSelect) PTX(major, minor int) (src, entry string, err error) {
	if err := q.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "quantile_select"
	m, f := auxKernel(major, minor, entry, "keys", "stateA", "stateB", "flags", "out", "qs", "rows", "n")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	ew := exprLowering(m, f, major*10+minor, nil)
	f.Shared("qsel_sum", ptx.B32, 16, SortBlock/32)
	f.Shared("qsel_raw", ptx.B64, 16, 2)
	f.Shared("qsel_val", ptx.B64, 16, 2)
	g := newSortGen(f, SortKey{Type: q.In}, 1)
	is, os := q.In.Size(), q.Out.Size()
	kt := g.kt()
	zero := uint64(1) << (8*is - 1) // the zero's ordered key (and the sign bit)
	pk := globalParam(f, 0)
	n := f.LdParam(7)
	row := f.Reg(ptx.U64)
	f.Cvt(row, f.Special(ptx.CtaidX))
	var raws, ranks [2]ptx.Reg
	var keys [2]ptx.Reg
	for j := range raws {
		ps := globalParam(f, 1+j)
		a := f.Reg(ptx.U64)
		f.Fma(a, row, ptx.Int(16), ps)
		T, rk := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), T, rk)
		keys[j] = f.Reg(kt)
		f.Cvt(keys[j], T)
		raws[j], ranks[j] = g.unordered(keys[j]), rk
	}
	var nanRow ptx.Reg
	if q.In.IsFloat() {
		pf := globalParam(f, 3)
		fa := f.Reg(ptx.U64)
		f.Fma(fa, row, ptx.Int(24), pf)
		nans, negs, poss := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
		for j, c := range []ptx.Reg{nans, negs, poss} {
			f.Ld(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(fa, int64(8*j)), c)
		}
		nanRow = f.Setp(ptx.Ne, nans, ptx.Int(0))
		allNeg := f.Setp(ptx.Eq, poss, ptx.Int(0))
		mixed := f.Reg(ptx.Pred)
		f.Op("and.pred", mixed, f.Setp(ptx.Ne, negs, ptx.Int(0)), notp(f, allNeg))
		// need[j]: the selected key is the zero and the row's zeros have both signs.
		var need [2]ptx.Reg
		maxRank := f.Reg(ptx.U64)
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
		// The scan: 256 keys a step in index order, until the larger rank's zero.
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Eq, maxRank, ptx.Int(0))).Bra(skip)
		rowBase := f.Reg(ptx.U64)
		f.Mul(rowBase, row, n)
		tid64 := f.Reg(ptx.U64)
		f.Cvt(tid64, g.tid)
		seen, base := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Mov(seen, ptx.Int(0))
		f.Mov(base, ptx.Int(0))
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.BarSync(0) // (the block scan's partial sums read)
		f.At(f.Setp(ptx.Ge, seen, maxRank)).Bra(done)
		f.At(f.Setp(ptx.Ge, base, n)).Bra(done)
		idx := f.Reg(ptx.U64)
		f.Add(idx, base, tid64)
		in := f.Setp(ptx.Lt, idx, n)
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
	n1 := f.Reg(ptx.U64)
	f.Sub(n1, n, ptx.Int(1))
	var v ptx.Reg
	if q.Median {
		odd := f.Reg(ptx.U64)
		f.And(odd, n, ptx.Int(1))
		v = quantileMidPTX(f, vals[0], vals[1], f.Setp(ptx.Ne, odd, ptx.Int(0)))
	} else {
		pq := globalParam(f, 5)
		qv := f.Reg(ptx.F64)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(pq, 0), qv)
		_, _, t := quantilePosPTX(f, qv, n1)
		v = quantileLerpPTX(f, vals[0], vals[1], t)
	}
	isNaN := f.Setp(ptx.NaN, v, v)
	if q.In.IsFloat() {
		f.Op("or.pred", isNaN, isNaN, nanRow)
	}
	po := globalParam(f, 4)
	oa := f.Reg(ptx.U64)
	f.Fma(oa, row, ptx.Int(os), po)
	quantileStorePTX(f, ew, v, isNaN, q.Out, oa, f.NewLabel(), end)
	f.Ret()
	return m.String(), entry, nil
}
