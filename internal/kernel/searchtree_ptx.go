package kernel

import (
	"fmt"
	"strings"

	"github.com/go-gpu/gpu/ptx"
)

// PTX of SearchSorted's tree (searchtree.go).

// searchTreeLayoutRegs emits nb_j (j = 0..L-1; nb_0 = m) and off_j (j = 1..L; off[j] is
// level j's entry offset, off[L] the total) from m.
func searchTreeLayoutRegs(f *ptx.Func, m ptx.Reg, L int) (nb, off []ptx.Reg) {
	nb = make([]ptx.Reg, L)
	off = make([]ptx.Reg, L+1)
	nb[0] = m
	for j := 1; j < L; j++ {
		nb[j] = f.Reg(ptx.U64)
		f.Add(nb[j], m, ptx.Uint(uint64(1)<<uint(3*j)-1))
		f.Shr(nb[j], nb[j], ptx.Int(3*j))
	}
	off[1] = f.Reg(ptx.U64)
	f.Mov(off[1], ptx.Int(0))
	for j := 1; j < L; j++ {
		off[j+1] = f.Reg(ptx.U64)
		f.Add(off[j+1], nb[j], ptx.Int(7))
		f.And(off[j+1], off[j+1], ptx.Uint(^uint64(7)))
		f.Add(off[j+1], off[j+1], off[j])
	}
	return nb, off
}

// PTX returns the sample kernel's PTX.
func (s *SearchTreeSample) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "search_tree_sample"
	m, f := auxKernel(major, minor, entry, "sorted", "m", "sample")
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	g := newSortGen(f, s.Order, 1)
	ks := s.Order.Size()
	pw := searchPivotSize(ks)
	pa, ps := globalParam(f, 0), globalParam(f, 2)
	mLen := f.LdParam(1)
	L := s.Levels
	_, off := searchTreeLayoutRegs(f, mLen, L)
	last := f.Reg(ptx.U64)
	f.Sub(last, mLen, ptx.Int(1))
	always := f.Reg(ptx.Pred)
	f.Op("setp.eq.u32", always, g.tid, g.tid)
	gridStride(f, off[L], func(e ptx.Reg) {
		sh := f.Reg(ptx.U32)
		f.Mov(sh, ptx.Int(3))
		b := f.Reg(ptx.U64)
		f.Mov(b, e)
		for j := 2; j < L; j++ {
			ge := f.Setp(ptx.Ge, e, off[j])
			f.At(ge).Op("mov.u32", sh, ptx.Int(3*j))
			f.At(ge).Op("sub.u64", b, e, off[j])
		}
		i := f.Reg(ptx.U64)
		f.Add(i, b, ptx.Int(1))
		f.Shl(i, i, sh)
		f.Sub(i, i, ptx.Int(1))
		f.Min(i, i, last)
		a := f.Reg(ptx.U64)
		f.Fma(a, i, ptx.Int(ks), pa)
		o := g.ordered(loadElem(f, ks, always, ptx.Mem(a, 0), true))
		f.Fma(a, e, ptx.Int(pw), ps)
		f.St(ptx.Global, ptx.CacheDefault, g.kt(), ptx.Mem(a, 0), o)
	})
	f.Ret()
	return m.String(), entry, nil
}

// swizzleBytes replaces b (u32, a byte offset into the shared levels) by its place in
// the swizzled layout (SearchTree.Swizzle): its 16-byte chunk c = b>>4 moved to
// c ^ (c>>3 & 7), the byte within the chunk kept, that is b ^ (b>>3 & 0x70).
func swizzleBytes(f *ptx.Func, b ptx.Reg) {
	hi := f.Reg(ptx.U32)
	f.Shr(hi, b, ptx.Int(3))
	f.Op("and.b32", hi, hi, ptx.Int(0x70))
	f.Op("xor.b32", b, b, hi)
}

// PTX returns the search's PTX.
func (s *SearchTree) PTX(major, minor int) (src, entry string, err error) {
	if err := s.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	entry = "search_tree"
	params := []string{"sorted", "m", "sample", "queries", "out", "n"}
	if s.TableBits != 0 {
		params = append(params, "table")
	}
	m, f := auxKernel(major, minor, entry, params...)
	B := s.block()
	if s.Block == 0 {
		f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", B))
	} else {
		blockAttrs(f, B)
	}
	g := newSortGen(f, s.Order, 1)
	ks := s.Order.Size()
	kt := g.kt()
	pw := searchPivotSize(ks)
	L, S, Q := s.Levels, s.Shared, s.Queries
	pa, pq, po := globalParam(f, 0), globalParam(f, 3), globalParam(f, 4)
	mLen, n := f.LdParam(1), f.LdParam(5)
	var psm ptx.Reg
	if L > 1 {
		psm = globalParam(f, 2)
	}
	nb, off := searchTreeLayoutRegs(f, mLen, L)
	// The cache hints (Hints) of the array's vector loads and of the sample's global
	// loads: L2 priorities by createpolicy and .L2::cache_hint (ptxas 11.8 takes no
	// .L2::evict_* on ld), which need sm_80 (none below it). hinted returns a load's
	// operands, with the policy appended where its qualifiers name one.
	hints := s.Hints
	if major < 8 {
		hints = 0
	}
	leafHint, levelHint := "", ""
	var leafPol, levelPol ptx.Reg
	if hints >= 1 && s.Vector {
		leafHint = ".L1::no_allocate.L2::cache_hint"
		leafPol = f.Reg(ptx.B64)
		f.Op("createpolicy.fractional.L2::evict_first.b64", leafPol)
	}
	if hints >= 2 {
		levelHint = ".L2::cache_hint"
		levelPol = f.Reg(ptx.B64)
		f.Op("createpolicy.fractional.L2::evict_last.b64", levelPol)
	}
	hinted := func(hint string, pol ptx.Reg, ops ...ptx.Operand) []ptx.Operand {
		if strings.Contains(hint, ".L2::cache_hint") {
			ops = append(ops, pol)
		}
		return ops
	}
	// Stage the top S levels (entries off[L-S] to off[L]) in shared memory, and the
	// table after them.
	staged := s.TableBits != 0 && !s.TableGlobal // (the table in shared memory)
	var shBase, shStart ptx.Reg
	if S > 0 || staged {
		if s.SharedBytes() > 0 {
			m.ExternShared("st_piv", 16)
		} else {
			f.Shared("st_piv", ptx.B8, 16, s.sharedTotal())
		}
		shBase = f.Reg(ptx.U32)
		f.Op("mov.u32", shBase, ptx.Sym("st_piv"))
	}
	var tBase ptx.Reg // the table in shared memory
	var pt ptx.Reg    // the table's global address
	if s.TableBits != 0 {
		pt = globalParam(f, 6)
	}
	if staged {
		tBase = f.Reg(ptx.U32)
		f.Add(tBase, shBase, ptx.Int(s.tableOffset()))
		idx := f.Reg(ptx.U32)
		f.Mov(idx, g.tid)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, idx, ptx.Int(SearchTableWords(s.TableBits)))).Bra(done)
		ga := f.Reg(ptx.U64)
		f.Op("mul.wide.u32", ga, idx, ptx.Int(4))
		f.Add(ga, ga, pt)
		x := f.Reg(ptx.U32)
		f.Ld(ptx.Global, ptx.NC, ptx.U32, ptx.Mem(ga, 0), x)
		sa := f.Reg(ptx.U32)
		f.Fma(sa, idx, ptx.Int(4), tBase)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(sa, 0), x)
		f.Add(idx, idx, ptx.Int(B))
		f.Bra(loop)
		f.Place(done)
		if S == 0 {
			f.BarSync(0)
		}
	}
	if S > 0 {
		shStart = off[L-S]
		cnt := f.Reg(ptx.U64)
		f.Sub(cnt, off[L], shStart)
		idx := f.Reg(ptx.U64)
		f.Cvt(idx, g.tid)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, idx, cnt)).Bra(done)
		ga := f.Reg(ptx.U64)
		f.Add(ga, idx, shStart)
		f.Fma(ga, ga, ptx.Int(pw), psm)
		x := f.Reg(kt)
		f.Ld(ptx.Global, ptx.NC, kt, ptx.Mem(ga, 0), x)
		sa := f.Reg(ptx.U32)
		f.Cvt(sa, idx)
		if s.Swizzle {
			f.Mul(sa, sa, ptx.Int(pw))
			swizzleBytes(f, sa)
			f.Add(sa, sa, shBase)
		} else {
			f.Fma(sa, sa, ptx.Int(pw), shBase)
		}
		f.St(ptx.Shared, ptx.CacheDefault, kt, ptx.Mem(sa, 0), x)
		f.Add(idx, idx, ptx.Int(B))
		f.Bra(loop)
		f.Place(done)
		f.BarSync(0)
	}
	// Pair: the lane's parity and its half's byte offset in a 32-byte sector.
	var odd, oddOff ptx.Reg
	if s.Pair {
		lb := f.Reg(ptx.U32)
		f.And(lb, g.lane, ptx.Int(1))
		odd = f.Setp(ptx.Ne, lb, ptx.Int(0))
		oddOff = f.Reg(ptx.U64)
		f.Op("mul.wide.u32", oddOff, lb, ptx.Int(16))
	}
	before := func(t, v ptx.Reg) ptx.Reg {
		if s.Right {
			return f.Setp(ptx.Le, t, v)
		}
		return f.Setp(ptx.Lt, t, v)
	}
	// The table's header: F and S (searchtable.go), and m as a u32 (m < 2^32).
	var first, scale, m32 ptx.Reg
	if s.TableBits != 0 {
		first, scale, m32 = f.Reg(ptx.F32), f.Reg(ptx.F32), f.Reg(ptx.U32)
		if s.TableGlobal {
			f.Ld(ptx.Global, ptx.NC, ptx.F32, ptx.Mem(pt, 0), first, scale)
		} else {
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.F32, ptx.Mem(tBase, 0), first, scale)
		}
		f.Cvt(m32, mLen)
	}
	// Q queries per thread and round: i, i+step, ... (grid-stride).
	i := f.Reg(ptx.U64)
	{
		b, tid := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Cvt(b, f.Special(ptx.CtaidX))
		f.Cvt(tid, g.tid)
		f.Fma(i, b, ptx.Int(B), tid)
	}
	step := f.Reg(ptx.U64)
	f.Cvt(step, f.Special(ptx.NctaidX))
	f.Mul(step, step, ptx.Int(B))
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	if s.TableBits != 0 || s.Pair {
		// A warp leaves the loop together (its lanes past n with no query in
		// bounds), so that the votes of the steps and the pairs' shuffles (below)
		// see all its lanes.
		more := f.Reg(ptx.Pred)
		f.Op("vote.sync.any.pred", more, f.Setp(ptx.Lt, i, n), ptx.Uint(0xffffffff))
		f.AtNot(more).Bra(done)
	} else {
		f.At(f.Setp(ptx.Ge, i, n)).Bra(done)
	}
	// lo and hi bound a query's answer (the table's range for its bucket; without a
	// table none is taken); known[j], where lo and hi share their level-j block
	// index, makes that level's step p = lo >> 3j, without loads.
	type query struct {
		idx, in, v, p, lo, hi ptx.Reg
		ve, vo                ptx.Reg // (Pair: the queries of the pair's even and odd lanes)
		paired                bool    // (ve and vo are set)
	}
	qs := make([]query, Q)
	for j := range qs {
		q := &qs[j]
		q.idx = f.Reg(ptx.U64)
		f.Fma(q.idx, step, ptx.Int(j), i)
		q.in = f.Setp(ptx.Lt, q.idx, n)
		qa := f.Reg(ptx.U64)
		f.Fma(qa, q.idx, ptx.Int(ks), pq)
		// (queries and results stream: .cs, first out of the caches, which keep the
		// tree)
		raw := f.Reg(regType(ks))
		f.Mov(raw, ptx.Int(0))
		f.At(q.in).Op("ld.global.cs"+memType(ks).String(), raw, ptx.Mem(qa, 0))
		q.v = g.ordered(raw)
		q.p = f.Reg(ptx.U64)
		f.Mov(q.p, ptx.Int(0))
		if s.TableBits != 0 {
			b := searchTableBucketPTX(f, s.TableBits, first, scale, searchTableValuePTX(f, s.Order.Type, raw))
			q.lo, q.hi = f.Reg(ptx.U32), f.Reg(ptx.U32)
			if s.TableGlobal {
				ta := f.Reg(ptx.U64)
				f.Op("mul.wide.s32", ta, b, ptx.Int(4))
				f.Add(ta, ta, pt)
				f.Op("ld.global.nc"+levelHint+".u32", hinted(levelHint, levelPol, q.lo, ptx.Mem(ta, 8))...)
				f.Op("ld.global.nc"+levelHint+".u32", hinted(levelHint, levelPol, q.hi, ptx.Mem(ta, 12))...)
			} else {
				ta := f.Reg(ptx.U32)
				f.Fma(ta, b, ptx.Int(4), tBase)
				f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ta, 8), q.lo)
				f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ta, 12), q.hi)
			}
			// (an array not sorted: a range past m or reversed is the whole array)
			bad := f.Setp(ptx.Gt, q.hi, m32)
			f.Op("or.pred", bad, bad, f.Setp(ptx.Gt, q.lo, q.hi))
			f.At(bad).Op("mov.u32", q.lo, ptx.Int(0))
			f.At(bad).Op("mov.u32", q.hi, m32)
		}
	}
	// known returns, for the table, whether lo and hi share their level-j block
	// index (and that index, u64), else nil.
	known := func(q *query, j int) (ptx.Reg, ptx.Reg) {
		if s.TableBits == 0 {
			return ptx.Reg{}, ptx.Reg{}
		}
		lj, hj := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Shr(lj, q.lo, ptx.Int(min(3*j, 31)))
		f.Shr(hj, q.hi, ptx.Int(min(3*j, 31)))
		k := f.Setp(ptx.Eq, lj, hj)
		l64 := f.Reg(ptx.U64)
		f.Cvt(l64, lj)
		return k, l64
	}
	// ld is f.Ld, guarded by need where there is a table, with hint after .nc.
	ld := func(need ptx.Reg, space ptx.Space, cache ptx.Cache, hint string, t ptx.Type, addr ptx.Addr, dst ...ptx.Reg) {
		if s.TableBits == 0 && hint == "" {
			f.Ld(space, cache, t, addr, dst...)
			return
		}
		op := "ld" + space.String()
		if cache&ptx.NC != 0 {
			op += ".nc"
		}
		op += hint
		if len(dst) > 1 {
			op += fmt.Sprintf(".v%d", len(dst))
		}
		op += t.String()
		var d ptx.Operand = ptx.Vec(dst)
		if len(dst) == 1 {
			d = dst[0]
		}
		ops := hinted(hint, levelPol, d, addr)
		if s.TableBits == 0 {
			f.Op(op, ops...)
			return
		}
		for _, r := range dst { // (a register a guarded load may leave unwritten: defined here, its live range starts here)
			f.Op("mov"+t.String(), r, ptx.Int(0))
		}
		f.At(need).Op(op, ops...)
	}
	// count adds to c (u64) the keys of ts before v, where valid (nil: all).
	count := func(c ptx.Reg, ts []ptx.Reg, valid []ptx.Reg, v ptx.Reg) {
		for t, x := range ts {
			b := before(x, v)
			if valid != nil {
				f.Op("and.pred", b, b, valid[t])
			}
			f.At(b).Op("add.u64", c, c, ptx.Int(1))
		}
	}
	// pairCount is a global step of Pair: e (u64) indexes this lane's node, of
	// eight es-byte keys, in the buffer at base; the pair loads the even lane's node
	// (X) and then the odd lane's (Y), 16-byte chunk 2k+parity of each by load k,
	// counts the keys of its chunks before the node's query and returns (u32) the
	// count of this lane's node: its chunks' and its partner's. The array's
	// nodes (leaf) are ordered here: a node that reaches past the array's end loads
	// its keys below m one by one, the others holding maxRaw (the caller clamps the
	// position to m).
	pairCount := func(q *query, e, base ptx.Reg, es int, leaf bool, hint string, pol ptx.Reg) ptx.Reg {
		per := 16 / es       // keys of a chunk
		loads := 8 * es / 32 // chunks a lane loads of a node
		if !q.paired {
			// (at the first global step, so that the shared levels' steps hold
			// neither)
			vp := shflBfly(f, q.v, 1)
			sel := fmt.Sprintf("selp.b%d", kt.Bits())
			q.ve, q.vo = f.Reg(kt), f.Reg(kt)
			f.Op(sel, q.ve, vp, q.v, odd)
			f.Op(sel, q.vo, q.v, vp, odd)
			q.paired = true
		}
		ep := shflBfly(f, e, 1)
		var cnt [2]ptx.Reg
		var nodes [2][]ptx.Reg
		for nd := range 2 {
			en := f.Reg(ptx.U64)
			if nd == 0 {
				f.Op("selp.b64", en, ep, e, odd)
			} else {
				f.Op("selp.b64", en, e, ep, odd)
			}
			ga := f.Reg(ptx.U64)
			f.Fma(ga, en, ptx.Int(es), base)
			f.Add(ga, ga, oddOff)
			raw := make([]ptx.Reg, loads*per)
			var full ptx.Reg
			var valid []ptx.Reg
			// A key past the array's end (not loaded) holds the raw key whose
			// ordered key is the largest: never before a query on the left; on the
			// right before the largest query only, after every key of the array, and
			// the clamp to m takes the count back.
			maxRaw := uint64(1)<<(8*es) - 1
			if t := s.Order.Type; t.IsFloat() || t.IsSigned() {
				maxRaw >>= 1
			}
			if leaf {
				e8 := f.Reg(ptx.U64)
				f.Add(e8, en, ptx.Int(SearchTreeFanout))
				full = f.Setp(ptx.Le, e8, mLen)
				// Key t of load k is element en + (2k + parity)*per + t.
				ef := f.Reg(ptx.U64)
				f.Op("shr.u64", ef, oddOff, ptx.Int(4)) // the parity
				f.Fma(ef, ef, ptx.Int(per), en)
				valid = make([]ptx.Reg, len(raw))
				for k := range loads {
					for t := range per {
						et := f.Reg(ptx.U64)
						f.Add(et, ef, ptx.Int(2*k*per+t))
						valid[k*per+t] = f.Setp(ptx.Lt, et, mLen)
					}
				}
			}
			rt := regType(es)
			for k := range loads {
				regs := raw[k*per : (k+1)*per]
				for t := range regs {
					regs[t] = f.Reg(rt)
					if leaf {
						f.Mov(regs[t], ptx.Uint(maxRaw))
					}
				}
				op := fmt.Sprintf("ld.global.nc%s.v%d%s", hint, per, rt)
				if leaf {
					f.At(full).Op(op, hinted(hint, pol, ptx.Vec(regs), ptx.Mem(ga, int64(32*k)))...)
					for t, r := range regs {
						p := f.Reg(ptx.Pred)
						f.Op("and.pred", p, valid[k*per+t], notp(f, full))
						f.At(p).Op("ld.global.nc"+hint+memType(es).String(), hinted(hint, pol, r, ptx.Mem(ga, int64(32*k+t*es)))...)
					}
				} else {
					f.Op(op, hinted(hint, pol, ptx.Vec(regs), ptx.Mem(ga, int64(32*k)))...)
				}
			}
			nodes[nd] = raw
		}
		for nd, v := range []ptx.Reg{q.ve, q.vo} {
			c := f.Reg(ptx.U32)
			f.Mov(c, ptx.Int(0))
			for _, x := range nodes[nd] {
				if leaf {
					x = g.ordered(x)
				}
				f.At(before(x, v)).Op("add.u32", c, c, ptx.Int(1))
			}
			cnt[nd] = c
		}
		keep, send := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Op("selp.b32", keep, cnt[1], cnt[0], odd)
		f.Op("selp.b32", send, cnt[0], cnt[1], odd)
		got := shflBfly(f, send, 1)
		f.Add(keep, keep, got)
		return keep
	}
	// Levels L-1 to 1: the sample, in shared memory or global.
	for j := L - 1; j >= 1; j-- {
		for k := range qs {
			q := &qs[k]
			kn, kp := known(q, j)
			var need ptx.Reg
			var skip ptx.Label
			if s.TableBits != 0 {
				need = notp(f, kn)
				// None of the warp's lanes needs the step: skip it.
				skip = f.NewLabel()
				any := f.Reg(ptx.Pred)
				f.Op("vote.sync.any.pred", any, need, ptx.Uint(0xffffffff))
				f.AtNot(any).Bra(skip)
			}
			e := f.Reg(ptx.U64)
			f.Shl(e, q.p, ptx.Int(3))
			ts := make([]ptx.Reg, SearchTreeFanout)
			for t := range ts {
				ts[t] = f.Reg(kt)
			}
			per := 16 / pw // entries per 16-byte load
			if j >= L-S {
				f.Add(e, e, off[j])
				f.Sub(e, e, shStart)
				sa := f.Reg(ptx.U32)
				f.Cvt(sa, e)
				if !s.Swizzle {
					f.Fma(sa, sa, ptx.Int(pw), shBase)
					for t := 0; t < SearchTreeFanout; t += per {
						ld(need, ptx.Shared, ptx.CacheDefault, "", kt, ptx.Mem(sa, int64(t*pw)), ts[t:t+per]...)
					}
				} else {
					// The node's first chunk c0 is a multiple of its chunks (pw/2), so
					// chunk k of the node is at swizzle(c0) ^ k: bytes
					// swizzleBytes(16*c0) ^ 16*k.
					f.Mul(sa, sa, ptx.Int(pw))
					swizzleBytes(f, sa)
					for t := 0; t < SearchTreeFanout; t += per {
						ck := f.Reg(ptx.U32)
						f.Op("xor.b32", ck, sa, ptx.Int(16*(t/per)))
						f.Add(ck, ck, shBase)
						ld(need, ptx.Shared, ptx.CacheDefault, "", kt, ptx.Mem(ck, 0), ts[t:t+per]...)
					}
				}
			} else if s.Pair {
				f.Add(e, e, off[j])
				hint := levelHint
				if hints >= 4 || hints == 3 && j == 1 {
					hint = ".L1::no_allocate" + levelHint
				}
				c := f.Reg(ptx.U64)
				f.Cvt(c, pairCount(q, e, psm, pw, false, hint, levelPol))
				f.Fma(q.p, q.p, ptx.Int(SearchTreeFanout), c)
				f.Min(q.p, q.p, nb[j])
				continue
			} else {
				f.Add(e, e, off[j])
				ga := f.Reg(ptx.U64)
				f.Fma(ga, e, ptx.Int(pw), psm)
				for t := 0; t < SearchTreeFanout; t += per {
					hint := levelHint
					if hints >= 4 || hints == 3 && j == 1 {
						hint = ".L1::no_allocate" + levelHint
					}
					ld(need, ptx.Global, ptx.NC, hint, kt, ptx.Mem(ga, int64(t*pw)), ts[t:t+per]...)
				}
			}
			c := f.Reg(ptx.U64)
			f.Mov(c, ptx.Int(0))
			count(c, ts, nil, q.v)
			f.Fma(q.p, q.p, ptx.Int(SearchTreeFanout), c)
			f.Min(q.p, q.p, nb[j])
			if s.TableBits != 0 {
				f.Place(skip)
				f.At(kn).Op("mov.u64", q.p, kp)
			}
		}
	}
	// Level 0: the array.
	for k := range qs {
		q := &qs[k]
		e := f.Reg(ptx.U64)
		f.Shl(e, q.p, ptx.Int(3))
		if s.Pair {
			c := f.Reg(ptx.U64)
			f.Cvt(c, pairCount(q, e, pa, ks, true, leafHint, leafPol))
			f.Add(q.p, e, c)
			f.Min(q.p, q.p, mLen)
			continue
		}
		ga := f.Reg(ptx.U64)
		f.Fma(ga, e, ptx.Int(ks), pa)
		valid := make([]ptx.Reg, SearchTreeFanout)
		raw := make([]ptx.Reg, SearchTreeFanout)
		var need0 ptx.Reg // (the table: lo < hi, the array read)
		if s.TableBits != 0 {
			need0 = f.Setp(ptx.Ne, q.lo, q.hi)
		}
		var full ptx.Reg
		if s.Vector {
			e8 := f.Reg(ptx.U64)
			f.Add(e8, e, ptx.Int(SearchTreeFanout))
			full = f.Setp(ptx.Le, e8, mLen)
			if s.TableBits != 0 {
				f.Op("and.pred", full, full, need0)
			}
		}
		for t := range raw {
			et := f.Reg(ptx.U64)
			f.Add(et, e, ptx.Int(t))
			valid[t] = f.Setp(ptx.Lt, et, mLen)
			if s.TableBits != 0 {
				f.Op("and.pred", valid[t], valid[t], need0)
			}
			if !s.Vector {
				raw[t] = loadElem(f, ks, valid[t], ptx.Mem(ga, int64(t*ks)), true)
				continue
			}
			raw[t] = f.Reg(regType(ks))
			f.Mov(raw[t], ptx.Int(0))
		}
		if s.Vector {
			per := 16 / ks
			rt := regType(ks)
			for t := 0; t < SearchTreeFanout; t += per {
				f.At(full).Op(fmt.Sprintf("ld.global.nc%s.v%d%s", leafHint, per, rt), hinted(leafHint, leafPol, ptx.Vec(raw[t:t+per]), ptx.Mem(ga, int64(t*ks)))...)
			}
			for t := range raw {
				p := f.Reg(ptx.Pred)
				f.Op("and.pred", p, valid[t], notp(f, full))
				f.At(p).Op("ld.global.nc"+leafHint+memType(ks).String(), hinted(leafHint, leafPol, raw[t], ptx.Mem(ga, int64(t*ks)))...)
			}
		}
		ts := make([]ptx.Reg, len(raw))
		for t, r := range raw {
			ts[t] = g.ordered(r)
		}
		c := f.Reg(ptx.U64)
		f.Mov(c, ptx.Int(0))
		count(c, ts, valid, q.v)
		f.Add(q.p, e, c)
		f.Min(q.p, q.p, mLen)
		if s.TableBits != 0 {
			lo := f.Reg(ptx.U64)
			f.Cvt(lo, q.lo)
			f.AtNot(need0).Op("mov.u64", q.p, lo)
		}
	}
	for k := range qs {
		q := &qs[k]
		oa := f.Reg(ptx.U64)
		f.Fma(oa, q.idx, ptx.Int(8), po)
		f.At(q.in).Op("st.global.cs.u64", ptx.Mem(oa, 0), q.p)
	}
	f.Fma(i, step, ptx.Int(Q), i)
	f.Bra(loop)
	f.Place(done)
	f.Ret()
	return m.String(), entry, nil
}
