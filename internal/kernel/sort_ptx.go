package kernel

import (
	"fmt"
	"math/bits"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the sort kernels.
//
// Tiles are loaded warp-striped (CUB's term): warp w of a tile of K items per thread
// owns the tile's keys w*32K to (w+1)*32K-1, and its lane l holds keys w*32K + 32i + l
// for i < K, so that each load instruction of a warp reads 32 consecutive keys and the
// keys of a warp are in input order item by item, lane by lane.
//
// Ranking (the warp-level multi-split of Onesweep): for item i, each lane finds the
// lanes of its warp holding the same digit (eight ballots, one per digit bit, each
// ANDed in or inverted: CUB's MatchAny), the lowest of them reads the warp's running
// count of the digit from shared memory and adds the group's size (one shared atomic),
// and every lane gets the old count by a shuffle and adds the number of its peers in
// lower lanes: its rank among the warp's keys of that digit so far. A __syncwarp
// separates items. Then one thread per digit turns the warps' counts into exclusive prefixes over
// the warps and the tile's total, a block scan over the digits gives each digit's first
// position in the tile, and a key's position in the tile sorted by digit (stably) is
// digit start + warp prefix + its rank.

// sortGen holds what the sort kernels share.
type sortGen struct {
	f     *ptx.Func
	order SortKey
	items int
	tid   ptx.Reg // u32
	lane  ptx.Reg
	warp  ptx.Reg
	ltm   ptx.Reg // lanes below this one (b32)
	// always holds the predicates alwaysValid made: true in every lane, so that
	// rankItems needs no ballot of them.
	always map[ptx.Reg]bool
	// selShift is the shift register digitSelector made sel for.
	selShift, sel ptx.Reg
}

// digitSelector has digitOf take the digit at shift (a u32 register holding 8*pass;
// pass, u32, below 4) of a key of up to 4 bytes by one prmt: sel = 0x4440 | pass
// moves byte pass of the 32-bit word to the low byte and zeroes the others, where a
// register shift takes a shr and an and (ptxas makes a bfe with a register shift
// four instructions). Call it where shift is set, outside any branch whose digits it
// serves.
func (g *sortGen) digitSelector(pass, shift ptx.Reg) {
	g.selShift = shift
	g.sel = g.f.Reg(ptx.B32)
	g.f.Or(g.sel.As(ptx.U32), pass, ptx.Uint(0x4440))
}

// alwaysValid returns a predicate true in every lane, set from a register holding 0
// (ptxas folds it): the validity of the items of a full tile, which rankItems knows
// needs no ballot.
func (g *sortGen) alwaysValid() ptx.Reg {
	f := g.f
	zero := f.Reg(ptx.U32)
	f.Mov(zero, ptx.Int(0))
	p := f.Setp(ptx.Eq, zero, ptx.Int(0))
	if g.always == nil {
		g.always = map[ptx.Reg]bool{}
	}
	g.always[p] = true
	return p
}

// wholeOrPartial emits body twice behind a branch on whole, a block-uniform predicate
// telling that every item of the tile (or round) is in bounds: first for a whole one,
// with every item valid (alwaysValid: no bounds tests, no ballot of the validity),
// then for a partial one, with validOf. ptxas makes each predicated shared atomic a
// branch of its own (BSSY/BRA/BSYNC), so the copy without the tests is worth its code.
// A body may end in a branch of its own (the join after it is then never reached).
func (g *sortGen) wholeOrPartial(whole ptx.Reg, validOf func(i int) ptx.Reg, body func(valid func(i int) ptx.Reg)) {
	f := g.f
	partial, join := f.NewLabel(), f.NewLabel()
	f.AtNot(whole).Bra(partial)
	always := g.alwaysValid()
	body(func(int) ptx.Reg { return always })
	f.Bra(join)
	f.Place(partial)
	body(validOf)
	f.Place(join)
}

func newSortGen(f *ptx.Func, order SortKey, items int) *sortGen {
	g := &sortGen{f: f, order: order, items: items}
	g.tid = f.Special(ptx.TidX)
	g.lane, g.warp = f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.And(g.lane, g.tid, ptx.Int(31))
	f.Shr(g.warp, g.tid, ptx.Int(5))
	g.ltm = f.Reg(ptx.B32)
	one := f.Reg(ptx.U32)
	f.Mov(one, ptx.Int(1))
	f.Shl(one, one, g.lane)
	f.Sub(g.ltm.As(ptx.U32), one, ptx.Int(1))
	return g
}

// kt is the register type of a key (u32 up to 4 bytes, u64 for 8).
func (g *sortGen) kt() ptx.Type {
	if g.order.Size() == 8 {
		return ptx.U64
	}
	return ptx.U32
}

// memType returns the memory type of an element of size bytes.
func memType(size int) ptx.Type {
	switch size {
	case 1:
		return ptx.U8
	case 2:
		return ptx.U16
	case 4:
		return ptx.U32
	}
	return ptx.U64
}

// regType returns the register type an element of size bytes is held in.
func regType(size int) ptx.Type {
	if size == 8 {
		return ptx.U64
	}
	return ptx.U32
}

// ordered returns the order-preserving key of the element bits raw (SortKey.Ordered).
func (g *sortGen) ordered(raw ptx.Reg) ptx.Reg {
	f := g.f
	t := g.order.Type
	bits := 8 * g.order.Size()
	kt := g.kt()
	mask := ^uint64(0) >> (64 - bits)
	sign := uint64(1) << (bits - 1)
	o := f.Reg(kt)
	switch {
	case t.IsSigned():
		f.Xor(o, raw, ptx.Uint(sign))
	case t == dtype.Float32:
		// Adding +0 makes -0 +0 and every NaN the canonical NaN 0x7fffffff (above
		// +Inf's key), as the GPU's float32 arithmetic does (the package's NaN rule;
		// internal/ptxsim models it), in one FADD on the FMA pipe; then negatives flip
		// all bits, the others the sign bit (x ^ (x>>s 31 | sign)): 3 instructions
		// where the tests below take 8 (ptxas 11.8, sm_90). Float64 takes its own case
		// with a NaN test: the H200's float64 arithmetic passes a NaN operand's payload
		// and sign on (canon64).
		x := f.Reg(ptx.F32)
		f.Op("mov.b32", x, raw)
		f.Add(x, x, ptx.ImmF32(0))
		c := f.Reg(kt)
		f.Op("mov.b32", c, x)
		m := f.Reg(ptx.S32)
		f.Shr(m, c.As(ptx.S32), ptx.Int(31))
		f.Or(m, m, ptx.Uint(sign))
		f.Xor(o, c, m)
	case t == dtype.Float64:
		// Adding +0 makes -0 +0 (one DADD); the H200's float64 arithmetic passes a NaN
		// operand's payload and sign on (canon64), so a NaN test gives every NaN the
		// largest key. Then, as float32's, negatives flip all bits and the others the
		// sign bit, a 32-bit half at a time: 7 instructions where the tests below take
		// 16 (ptxas 11.8, sm_90), two of them on the float64 pipe (half the float32
		// rate on sm_80 and sm_90; 1/64 on sm_86 and sm_89, not measured there).
		x := f.Reg(ptx.F64)
		f.Op("mov.b64", x, raw)
		f.Add(x, x, ptx.ImmF64(0))
		nan := f.Setp(ptx.NaN, x, x)
		lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{lo, hi}, x)
		m := f.Reg(ptx.S32)
		f.Shr(m, hi.As(ptx.S32), ptx.Int(31))
		olo, ohi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Xor(olo, lo, m.As(ptx.B32))
		f.Or(m, m, ptx.Uint(1<<31))
		f.Xor(ohi, hi, m.As(ptx.B32))
		f.Op("mov.b64", o, ptx.Vec{olo, ohi})
		f.At(nan).Op("mov.u64", o, ptx.Uint(mask))
	case t.IsFloat():
		// Negative: flip all bits; otherwise set the sign bit.
		neg := f.Setp(ptx.Ge, raw, ptx.Uint(sign))
		flip := f.Reg(kt)
		f.Xor(flip, raw, ptx.Uint(mask))
		f.Or(o, raw, ptx.Uint(sign))
		f.At(neg).Op("mov"+kt.String(), o, flip)
		abs := f.Reg(kt)
		f.And(abs, raw, ptx.Uint(mask&^sign))
		f.At(f.Setp(ptx.Eq, abs, ptx.Int(0))).Op("mov"+kt.String(), o, ptx.Uint(sign))
		f.At(f.Setp(ptx.Gt, abs, ptx.Uint(floatInf(t)))).Op("mov"+kt.String(), o, ptx.Uint(mask))
	default:
		f.Mov(o, raw)
	}
	if g.order.Descending {
		f.Xor(o, o, ptx.Uint(mask))
	}
	return o
}

// digitOf returns bits shift..shift+7 of the ordered key o (shift a u32 register or
// an Int) as a u32.
func (g *sortGen) digitOf(o ptx.Reg, shift ptx.Operand) ptx.Reg {
	f := g.f
	d := f.Reg(ptx.U32)
	if r, ok := shift.(ptx.Reg); ok && g.sel.Valid() && r == g.selShift && o.Type() == ptx.U32 {
		f.Op("prmt.b32", d.As(ptx.B32), o.As(ptx.B32), ptx.Uint(0), g.sel)
		return d
	}
	if o.Type() == ptx.U64 {
		d64 := f.Reg(ptx.U64)
		f.Op("bfe.u64", d64, o, shift, ptx.Int(8))
		f.Cvt(d, d64)
		return d
	}
	// (shr and and: ptxas makes a bfe with a register shift four instructions)
	f.Shr(d, o, shift)
	f.And(d, d, ptx.Int(RadixDigits-1))
	return d
}

// peers returns the lanes (b32 mask) among vmask whose digit equals this lane's, by
// eight ballots (RankBallot, RankBallot3) or match.any.sync (RankMatch).
func (g *sortGen) peers(d, vmask ptx.Reg, rank SortRank) ptx.Reg {
	f := g.f
	pm := f.Reg(ptx.B32)
	if rank == RankMatch {
		f.Op("match.any.sync.b32", pm, d, ptx.Uint(0xffffffff))
		f.And(pm, pm, vmask)
		return pm
	}
	if rank != RankBallot3 {
		f.Mov(pm, vmask)
	}
	// RankBallot3: (vmask, b0, b1), (b2, b3, b4) and (b5, b6, b7) ANDed by a lop3 each
	// (0x80: a&b&c), then the three.
	grp, terms := []ptx.Reg{vmask}, []ptx.Reg(nil)
	for b := 0; b < 8; b++ {
		bit := f.Reg(ptx.U32)
		f.And(bit, d, ptx.Int(1<<b))
		p := f.Setp(ptx.Ne, bit, ptx.Int(0))
		bal := f.Reg(ptx.B32)
		f.Vote("ballot", bal, p, ptx.Uint(0xffffffff))
		f.AtNot(p).Op("not.b32", bal, bal)
		if rank != RankBallot3 {
			f.And(pm, pm, bal)
			continue
		}
		if grp = append(grp, bal); len(grp) == 3 {
			t := f.Reg(ptx.B32)
			f.Op("lop3.b32", t, grp[0], grp[1], grp[2], ptx.Uint(0x80))
			grp, terms = nil, append(terms, t)
		}
	}
	if rank == RankBallot3 {
		f.Op("lop3.b32", pm, terms[0], terms[1], terms[2], ptx.Uint(0x80))
	}
	return pm
}

// rankItems ranks the warp's n items: item(i) emits item i's digit (u32) and whether
// this lane holds a key of it (pred; the valid lanes are the lowest), just before its
// ranking, so that only one item's digit is live at a time. It zeroes the warp's 256
// counters at sym+warp*1024 first and leaves the warp's count of each digit in them.
// RankAtomicOr uses the 2*8*1024 bytes at msym as match words (zeroed here; zero
// again at the end). It returns, per item, digit<<16 | rank among the warp's keys of
// that digit before it.
func (g *sortGen) rankItems(sym string, n int, item func(i int) (digit, valid ptx.Reg), rank SortRank, msym string) []ptx.Reg {
	f := g.f
	base := f.Reg(ptx.U32)
	f.Op("mov.u32", base, ptx.Sym(sym))
	wb := f.Reg(ptx.U32)
	f.Fma(wb, g.warp, ptx.Int(RadixDigits*4), base)
	// Zero the warp's counters (and match words).
	z := f.Reg(ptx.U32)
	f.Mov(z, ptx.Int(0))
	la := f.Reg(ptx.U32)
	f.Fma(la, g.lane, ptx.Int(4), wb)
	for j := 0; j < RadixDigits/32; j++ {
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(la, int64(j*128)), z)
	}
	var mb, bit ptx.Reg
	if rank == RankAtomicOr {
		mb = f.Reg(ptx.U32)
		f.Op("mov.u32", mb, ptx.Sym(msym))
		f.Fma(mb, g.warp, ptx.Int(RadixDigits*4), mb)
		ma := f.Reg(ptx.U32)
		f.Fma(ma, g.lane, ptx.Int(4), mb)
		for set := 0; set < 2; set++ {
			for j := 0; j < RadixDigits/32; j++ {
				f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ma, int64(set*8*RadixDigits*4+j*128)), z)
			}
		}
		bit = f.Reg(ptx.B32)
		f.Add(bit.As(ptx.U32), g.ltm.As(ptx.U32), ptx.Int(1))
	}
	f.Op("bar.warp.sync", ptx.Uint(0xffffffff))
	out := make([]ptx.Reg, n)
	for i := range out {
		d, valid := item(i)
		var pm, wa ptx.Reg
		if rank == RankAtomicOr {
			// The match words of set i%2: OR in, a warp barrier, read back. An invalid
			// lane ORs 0 into its (stale) digit's word rather than skipping the atomic
			// (ptxas makes a predicated atomic a branch), and its read is unused.
			wa = f.Reg(ptx.U32)
			f.Fma(wa, d, ptx.Int(4), mb)
			off := int64(i % 2 * 8 * RadixDigits * 4)
			b := bit
			if !g.always[valid] {
				b = f.Reg(ptx.B32)
				f.Op("selp.b32", b, bit, ptx.Uint(0), valid)
			}
			f.Op("atom.shared.or.b32", f.Reg(ptx.B32), ptx.Mem(wa, off), b)
			f.Op("bar.warp.sync", ptx.Uint(0xffffffff))
			pm = f.Reg(ptx.B32)
			f.Op("ld.shared.b32", pm, ptx.Mem(wa, off))
		} else {
			vm := f.Reg(ptx.B32)
			if g.always[valid] {
				f.Mov(vm, ptx.Uint(0xffffffff)) // (every lane: no ballot)
			} else {
				f.Vote("ballot", vm, valid, ptx.Uint(0xffffffff))
			}
			pm = g.peers(d, vm, rank)
		}
		lt := f.Reg(ptx.B32)
		f.And(lt, pm, g.ltm)
		pre := f.Reg(ptx.U32)
		f.Op("popc.b32", pre, lt)
		cnt := f.Reg(ptx.U32)
		f.Op("popc.b32", cnt, pm)
		// The group's lowest lane (none of its peers below: pre 0) adds the group's
		// size to the warp's count of the digit.
		lead := f.Setp(ptx.Eq, pre, ptx.Int(0))
		if !g.always[valid] {
			f.Op("and.pred", lead, lead, valid)
		}
		// Every lane of the group reads the warp's count of its digit (one word: a
		// broadcast), and after a warp barrier the leader stores it plus the group's
		// size: no atomic, no shuffle of its result, no branch around it (ptxas makes
		// a predicated atomic with a result a branch). The count is the warp's own, and
		// the barrier at the item's end orders the store before the next item's reads.
		a := f.Reg(ptx.U32)
		f.Fma(a, d, ptx.Int(4), wb)
		old := f.Reg(ptx.U32)
		f.Op("ld.shared.u32", old, ptx.Mem(a, 0))
		r := f.Reg(ptx.U32)
		f.Add(r, old, pre)
		f.Op("bar.warp.sync", ptx.Uint(0xffffffff))
		nw := f.Reg(ptx.U32)
		f.Add(nw, old, cnt)
		f.At(lead).Op("st.shared.u32", ptx.Mem(a, 0), nw)
		f.Op("bar.warp.sync", ptx.Uint(0xffffffff))
		if rank == RankAtomicOr {
			// Every lane has read the group's word: the leader clears it for item
			// i+2 (item i+1's barrier orders the clear before that item's ORs).
			f.At(lead).Op("st.shared.b32", ptx.Mem(wa, int64(i%2*8*RadixDigits*4)), z)
		}
		pk := f.Reg(ptx.U32)
		f.Op("prmt.b32", pk, r, d, ptx.Uint(0x5410)) // d<<16 | r (both below 2^16)
		out[i] = pk
	}
	if rank == RankAtomicOr {
		f.Op("bar.warp.sync", ptx.Uint(0xffffffff)) // the last clears
	}
	return out
}

// blockScan returns the exclusive prefix sum of v (u32 or u64, one per thread) over
// the block in thread order and the block's total, through the shared array sym of
// 8 words of v's width. It ends with the barrier after the partial sums' stores; the
// caller must not write sym again before another barrier.
func (g *sortGen) blockScan(v ptx.Reg, sym string) (excl, total ptx.Reg) {
	f := g.f
	t := v.Type()
	incl := f.Reg(t)
	f.Mov(incl, v)
	shfl := func(mode string, x ptx.Reg, b ptx.Operand, c ptx.Operand) ptx.Reg {
		o := f.Reg(t)
		if t == ptx.U64 {
			lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
			f.Op("mov.b64", ptx.Vec{lo, hi}, x)
			olo, ohi := f.Reg(ptx.B32), f.Reg(ptx.B32)
			f.Shfl(mode, olo, lo, b, c, ptx.Uint(0xffffffff))
			f.Shfl(mode, ohi, hi, b, c, ptx.Uint(0xffffffff))
			f.Op("mov.b64", o, ptx.Vec{olo, ohi})
			return o
		}
		f.Shfl(mode, o.As(ptx.B32), x.As(ptx.B32), b, c, ptx.Uint(0xffffffff))
		return o
	}
	for d := 1; d < 32; d *= 2 {
		o := shfl("up", incl, ptx.Int(d), ptx.Int(0))
		f.At(f.Setp(ptx.Ge, g.lane, ptx.Int(d))).Op("add"+t.String(), incl, incl, o)
	}
	size := t.Bits() / 8
	{
		skip := f.NewLabel()
		f.AtNot(f.Setp(ptx.Eq, g.lane, ptx.Int(31))).Bra(skip)
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym(sym))
		f.Fma(a, g.warp, ptx.Int(size), a)
		f.St(ptx.Shared, ptx.CacheDefault, t, ptx.Mem(a, 0), incl)
		f.Place(skip)
	}
	f.BarSync(0)
	excl = f.Reg(t)
	f.Sub(excl, incl, v)
	total = f.Reg(t)
	f.Mov(total, ptx.Int(0))
	for w := 0; w < SortBlock/32; w++ {
		x := f.Reg(t)
		f.Ld(ptx.Shared, ptx.CacheDefault, t, ptx.Mem(ptx.Sym(sym), int64(w*size)), x)
		f.At(f.Setp(ptx.Gt, g.warp, ptx.Int(w))).Op("add"+t.String(), excl, excl, x)
		f.Add(total, total, x)
	}
	return excl, total
}

// warpCounts runs in thread t (digit t) after the ranking: it returns the warps'
// counts of digit t in sym (8 warps of 256 counters) and their sum, the tile's count.
func (g *sortGen) warpCounts(sym string) (counts []ptx.Reg, total ptx.Reg) {
	f := g.f
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym(sym))
	f.Fma(a, g.tid, ptx.Int(4), a)
	total = f.Reg(ptx.U32)
	f.Mov(total, ptx.Int(0))
	counts = make([]ptx.Reg, SortBlock/32)
	for w := range counts {
		counts[w] = f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(w*RadixDigits*4)), counts[w])
		f.Add(total, total, counts[w])
	}
	return counts, total
}

// storeStarts replaces the warps' counts of digit t in sym by the tile position of
// each warp's first key of the digit: the digit's start start (u32) plus the counts
// of the warps before.
func (g *sortGen) storeStarts(sym string, counts []ptx.Reg, start ptx.Reg) {
	f := g.f
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym(sym))
	f.Fma(a, g.tid, ptx.Int(4), a)
	run := f.Reg(ptx.U32)
	f.Mov(run, start)
	for w, c := range counts {
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64(w*RadixDigits*4)), run)
		if w+1 < len(counts) {
			f.Add(run, run, c)
		}
	}
}

// finalRanks returns each valid item's position in the tile sorted by digit: the
// warp's start of the digit (csym, storeStarts) + the packed rank. It calls each(i,
// position, digit) after item i's, so that the caller may use them before the next
// item's are made. An invalid item's position is garbage (its digit, below 256, reads
// a start inside csym): the caller's uses of it take the item's predicate.
func (g *sortGen) finalRanks(packed []ptx.Reg, csym string, each func(i int, fr, d ptx.Reg)) []ptx.Reg {
	f := g.f
	cb := f.Reg(ptx.U32)
	f.Op("mov.u32", cb, ptx.Sym(csym))
	f.Fma(cb, g.warp, ptx.Int(RadixDigits*4), cb)
	out := make([]ptx.Reg, len(packed))
	for i, pk := range packed {
		d := f.Reg(ptx.U32)
		f.Shr(d, pk, ptx.Int(16))
		r := f.Reg(ptx.U32)
		f.And(r, pk, ptx.Int(0xffff))
		a := f.Reg(ptx.U32)
		f.Fma(a, d, ptx.Int(4), cb)
		c := f.Reg(ptx.U32)
		f.Op("ld.shared.u32", c, ptx.Mem(a, 0))
		fr := f.Reg(ptx.U32)
		f.Add(fr, c, r)
		out[i] = fr
		if each != nil {
			each(i, fr, d)
		}
	}
	return out
}

// landKeys makes every key load of the thread complete before the ranking: ptxas
// otherwise sinks the loads into the ranking, one item ahead of its use, to shorten
// their registers' lives, so that each item waits a memory latency. It stores the
// keys' XOR (32 bits) to the thread's word of the shared array sym (at least 1 KiB,
// rewritten after later barriers), and the warp barrier that opens the ranking orders that store
// before it.
func (g *sortGen) landKeys(keys []ptx.Reg, sym string) {
	f := g.f
	x := f.Reg(keys[0].Type())
	f.Mov(x, keys[0])
	for _, k := range keys[1:] {
		f.Xor(x, x, k)
	}
	if x.Type() != ptx.U32 {
		x32 := f.Reg(ptx.U32)
		f.Cvt(x32, x)
		x = x32
	}
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym(sym))
	f.Fma(a, g.tid, ptx.Int(4), a)
	f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), x)
}

// writeTile writes the block's tile of keys (size bytes each, at the shared array tb)
// in tile order, the scatter of a radix pass: slot idx = tid + j*SortBlock (j below
// the items, idx below count) goes to the address of its digit in the shared table
// ob (u64 a digit) plus idx*size. The digit is derive(key), or, where derive returns
// the zero Reg, the byte of slot idx at the shared array whose thread's address is db.
// With guard valid (a block-uniform predicate) nothing is written where it is false.
//
// Only the global store tests the slot against count: the shared loads stay inside
// their arrays for every slot (the tile holds tile slots, a digit is below 256), so a
// slot past count loads a stale key and digit and stores nothing. (A load under the
// slot's predicate needs its register zeroed first, or ptxas keeps it live from the
// kernel's start: the fused kernel spilled.)
func (g *sortGen) writeTile(size int, count, tb, ob, db, guard ptx.Reg, derive func(key ptx.Reg) ptx.Reg) {
	f := g.f
	mt := memType(size)
	var skip ptx.Label
	if guard.Valid() {
		skip = f.NewLabel()
		f.AtNot(guard).Bra(skip)
	}
	a := f.Reg(ptx.U32)
	f.Fma(a, g.tid, ptx.Int(size), tb)
	valid := g.slotTests(count)
	for j := 0; j < g.items; j++ {
		key := f.Reg(g.kt())
		f.Op("ld.shared"+mt.String(), key, ptx.Mem(a, int64(j*SortBlock*size)))
		d := derive(key)
		if !d.Valid() {
			d = f.Reg(ptx.U32)
			f.Op("ld.shared.u8", d, ptx.Mem(db, int64(j*SortBlock)))
		}
		oa := f.Reg(ptx.U32)
		f.Fma(oa, d, ptx.Int(8), ob)
		ba := f.Reg(ptx.U64)
		f.Op("ld.shared.u64", ba, ptx.Mem(oa, 0))
		// Slot tid + j*SortBlock at ba + tid*size + j*SortBlock*size: the slot's part
		// is the store's immediate offset.
		ga := f.Reg(ptx.U64)
		f.Op("mad.wide.u32", ga, g.tid, ptx.Int(size), ba)
		f.At(valid(j)).Op("st.global"+mt.String(), ptx.Mem(ga, int64(j*SortBlock*size)), key)
	}
	if guard.Valid() {
		f.Place(skip)
	}
}

// writeSectors writes the block's tile of keys or values (tsize bytes each in the
// shared array tb, sorted by digit; written as size bytes, 8 for 4-byte indices in an
// argsort's last pass) as writeTile does, but so that each store of a warp covers
// whole 32-byte sectors of the output but where a run of one digit starts or ends:
// writeTile's stores of 32 consecutive tile slots start anywhere in a sector, and a
// sector written in parts by two stores costs the L2 about as much as the two sectors
// whole (an H100 moves 2^28 float32 keys as runs of 28 at any alignment in 1.66 times
// the time of a copy, and the real pass's stores write 50% more sectors than the keys
// fill: docs/benchmarks/h100-2026-12-06-sort-pass.txt; a whole sort loses little to
// them, about 4% of an int32 sort's time, its passes being bound by their instructions:
// part 5 there). It runs in every thread, thread
// d after the look-back of digit d: ka the output address of its tile slot 0, first
// its run's first tile slot and cnt its keys.
//
// The runs are laid out in a virtual tile: run d starts at V_d, a multiple of the
// keys of a sector (Q), and takes a_d + cnt rounded up to a multiple of Q slots, a_d
// being the place of its first key in its sector; virtual slot v of run d is tile slot
// v + first - V_d - a_d, written where that is in the run. Thread t writes virtual
// slots t, t+SortBlock, ..., each finding its run in a table of every virtual sector's
// digit (filled by each run's thread, and its warp for long runs). The tables live in
// the warp counters' shared array (rs_cnt, free since the staging): each run's 16-byte
// record at 1 KiB, the sectors' digits at 5 KiB (a run of c keys touches at most
// (c+2Q-2)/Q sectors: at most (tile + 256(2Q-2))/Q bytes, and the last round reads up
// to 767/Q past them: 2,623 bytes at most for the items Validate allows, 4-byte
// indices of 32-item tiles written as int64, under the array's 3 KiB left). Nothing
// is written where guard (block-uniform) is false.
func (g *sortGen) writeSectors(tsize, size int, ka, first, cnt, tb, guard ptx.Reg) {
	f := g.f
	q := 32 / size
	lq := bits.TrailingZeros(uint(q))
	skip := f.NewLabel()
	f.AtNot(guard).Bra(skip)
	cb := f.Reg(ptx.U32)
	f.Op("mov.u32", cb, ptx.Sym("rs_cnt"))
	// a_d and the virtual run's length.
	ra := f.Reg(ptx.U64)
	f.MulWide(ra, first, ptx.Int(size))
	f.Add(ra, ra, ka)
	a := f.Reg(ptx.U32)
	f.Cvt(a, ra)
	f.And(a, a, ptx.Int(31))
	f.Shr(a, a, ptx.Int(bits.TrailingZeros(uint(size))))
	vl := f.Reg(ptx.U32)
	f.Add(vl, a, cnt)
	f.Add(vl, vl, ptx.Int(q-1))
	f.And(vl, vl, ptx.Int(-q))
	f.At(f.Setp(ptx.Eq, cnt, ptx.Int(0))).Op("mov.u32", vl, ptx.Int(0))
	vs, vt := g.blockScan(vl, "rs_sum")
	{
		// Run d's record: the address of its virtual slot 0, the tile slot of virtual
		// slot 0 (modulo 2^32), and its keys' virtual slots lo | hi<<16.
		lo := f.Reg(ptx.U32)
		f.Add(lo, vs, a)
		delta := f.Reg(ptx.U32)
		f.Sub(delta, first, lo)
		vb := f.Reg(ptx.U64)
		f.Mov(vb, ka)
		{
			d64 := f.Reg(ptx.S64)
			f.Cvt(d64, delta.As(ptx.S32))
			f.Fma(vb.As(ptx.S64), d64, ptx.Int(size), vb.As(ptx.S64))
		}
		hl := f.Reg(ptx.U32)
		f.Add(hl, lo, cnt)
		f.Shl(hl, hl, ptx.Int(16))
		f.Or(hl, hl, lo)
		vb2 := f.Reg(ptx.B32)
		vb1 := f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{vb1, vb2}, vb)
		y := f.Reg(ptx.U32)
		f.Fma(y, g.tid, ptx.Int(16), cb)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(y, 1024), vb1, vb2, delta.As(ptx.B32), hl.As(ptx.B32))
	}
	// (No barrier here: the fill below uses this thread's own run and its warp's, the
	// records and the table do not overlap, and the staging's reads of the warp
	// counters are behind blockScan's barrier; the one after the fill orders the tile,
	// the addresses, the records and the table before the stores.)
	// Each virtual sector's digit: thread d writes its run's first eight sectors', and
	// its warp together the rest of any longer run's (a pass of few digits: a run may
	// take most of the tile).
	{
		s0, ns := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Shr(s0, vs, ptx.Int(lq))
		f.Add(s0, s0, cb)
		f.Shr(ns, vl, ptx.Int(lq))
		for j := 0; j < 8; j++ {
			f.At(f.Setp(ptx.Gt, ns, ptx.Int(j))).Op("st.shared.u8", ptx.Mem(s0, int64(5120+j)), g.tid)
		}
		long := f.Reg(ptx.B32)
		f.Vote("ballot", long, f.Setp(ptx.Gt, ns, ptx.Int(8)), ptx.Uint(0xffffffff))
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Eq, long, ptx.Int(0))).Bra(done)
		l := f.Reg(ptx.U32)
		f.Op("bfind.u32", l, long)
		bit := f.Reg(ptx.B32)
		f.Shl(bit, ptx.Uint(1), l)
		f.Op("xor.b32", long, long, bit)
		sl, nl := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Shfl("idx", sl.As(ptx.B32), s0.As(ptx.B32), l, ptx.Int(31), ptx.Uint(0xffffffff))
		f.Shfl("idx", nl.As(ptx.B32), ns.As(ptx.B32), l, ptx.Int(31), ptx.Uint(0xffffffff))
		dl := f.Reg(ptx.U32)
		f.Fma(dl, g.warp, ptx.Int(32), l)
		j := f.Reg(ptx.U32)
		f.Add(j, g.lane, ptx.Int(8))
		inner, next := f.NewLabel(), f.NewLabel()
		f.Place(inner)
		f.At(f.Setp(ptx.Ge, j, nl)).Bra(next)
		a := f.Reg(ptx.U32)
		f.Add(a, sl, j)
		f.Op("st.shared.u8", ptx.Mem(a, 5120), dl)
		f.Add(j, j, ptx.Int(32))
		f.Bra(inner)
		f.Place(next)
		f.Bra(loop)
		f.Place(done)
	}
	f.BarSync(0) // the tile, the addresses, the runs' records and the sectors' table
	// The virtual slots, four a round.
	mt := memType(size)
	v0 := f.Reg(ptx.U32)
	f.Mov(v0, g.tid)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, v0, vt)).Bra(done)
	for u := 0; u < 4; u++ {
		v := f.Reg(ptx.U32)
		f.Add(v, v0, ptx.Int(u*SortBlock))
		sa := f.Reg(ptx.U32)
		f.Shr(sa, v, ptx.Int(lq))
		f.Add(sa, sa, cb)
		d := f.Reg(ptx.U32)
		f.Op("ld.shared.u8", d, ptx.Mem(sa, 5120)) // (past vt: a stale digit, below 256)
		ra := f.Reg(ptx.U32)
		f.Fma(ra, d, ptx.Int(16), cb)
		b1, b2, delta, hl := f.Reg(ptx.B32), f.Reg(ptx.B32), f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ra, 1024), b1, b2, delta.As(ptx.B32), hl.As(ptx.B32))
		lo, n := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.And(lo, hl, ptx.Int(0xffff))
		f.Shr(n, hl, ptx.Int(16))
		f.Sub(n, n, lo)
		k := f.Reg(ptx.U32)
		f.Sub(k, v, lo)
		ok := f.Reg(ptx.Pred)
		f.Op("setp.lt.and.u32", ok, k, n, f.Setp(ptx.Lt, v, vt))
		slot := f.Reg(ptx.U32)
		f.Add(slot, v, delta)
		f.Op("selp.b32", slot, slot, ptx.Uint(0), ok) // (a slot of the tile wherever the load goes)
		ta := f.Reg(ptx.U32)
		f.Fma(ta, slot, ptx.Int(tsize), tb)
		key := f.Reg(regType(tsize))
		f.Op("ld.shared"+memType(tsize).String(), key, ptx.Mem(ta, 0))
		if size > tsize { // (4-byte indices written as int64)
			k64 := f.Reg(ptx.U64)
			f.Cvt(k64, key)
			key = k64
		}
		vb := f.Reg(ptx.U64)
		f.Op("mov.b64", vb, ptx.Vec{b1, b2})
		ga := f.Reg(ptx.U64)
		f.Op("mad.wide.u32", ga, v, ptx.Int(size), vb)
		f.At(ok).Op("st.global"+mt.String(), ptx.Mem(ga, 0), key)
	}
	f.Add(v0, v0, ptx.Int(4*SortBlock))
	f.Bra(loop)
	f.Place(done)
	end := f.NewLabel()
	f.Bra(end)
	f.Place(skip)
	f.BarSync(0) // (as writeTile's callers: the tile and the addresses)
	f.Place(end)
}

// countDigits adds 1, where v holds, to key k's count of its digit in each pass p: the
// u32 at base + (p*RadixDigits + digit)*4 (shared), the histograms of a pass kernel's
// and the fused kernel's counts.
func (g *sortGen) countDigits(k, v, base ptx.Reg) {
	f := g.f
	o := g.ordered(k)
	for p := 0; p < g.order.Passes(); p++ {
		d := g.digitOf(o, ptx.Int(8*p))
		a := f.Reg(ptx.U32)
		f.Fma(a, d, ptx.Int(4), base)
		f.At(v).Op("red.shared.add.u32", ptx.Mem(a, int64(p*RadixDigits*4)), ptx.Int(1))
	}
}

// slotTests returns a function of j that tests whether tile slot tid + j*SortBlock is
// below count: j < the thread's slots below count, (count - tid + SortBlock-1) /
// SortBlock (signed: count is below 2^31), one comparison with a constant a slot.
func (g *sortGen) slotTests(count ptx.Reg) func(j int) ptx.Reg {
	f := g.f
	n := f.Reg(ptx.S32)
	f.Sub(n, count.As(ptx.S32), g.tid.As(ptx.S32))
	f.Add(n, n, ptx.Int(SortBlock-1))
	f.Op("shr.s32", n, n, ptx.Int(bits.TrailingZeros(SortBlock)))
	return func(j int) ptx.Reg { return f.Setp(ptx.Gt, n, ptx.Int(j)) }
}

// prefetchL2 asks L2 for the n bytes (u32) at global address a (u64), one 128-byte
// line a thread of the block in turn, for at most max bytes: prefetch.global.L2 (PTX
// ISA: a hint, no result; the lines are a's, a+128's, ..., so that an unaligned a
// leaves its last line's tail to the loads).
func (g *sortGen) prefetchL2(a, n ptx.Reg, max int) {
	f := g.f
	off := f.Reg(ptx.U32)
	f.Shl(off, g.tid, ptx.Int(7))
	for j := 0; j*SortBlock*128 < max; j++ {
		if j > 0 {
			f.Add(off, off, ptx.Int(SortBlock*128))
		}
		o64 := f.Reg(ptx.U64)
		f.Cvt(o64, off)
		la := f.Reg(ptx.U64)
		f.Add(la, a, o64)
		f.At(f.Setp(ptx.Lt, off, n)).Op("prefetch.global.L2", ptx.Mem(la, 0))
	}
}

// slotOf returns the warp-striped tile position of item i (u32).
func (g *sortGen) slotOf(i int) ptx.Reg {
	f := g.f
	s := f.Reg(ptx.U32)
	f.Fma(s, g.warp, ptx.Int(32*g.items), g.lane)
	f.Add(s, s, ptx.Int(32*i))
	return s
}

// loadElem loads an element of size bytes at a (guarded by p; 0 otherwise) into a
// register of regType(size).
func loadElem(f *ptx.Func, size int, p ptx.Reg, a ptx.Addr, nc bool) ptx.Reg {
	r := f.Reg(regType(size))
	f.Mov(r, ptx.Int(0))
	op := "ld.global"
	if nc {
		op += ".nc"
	}
	f.At(p).Op(op+memType(size).String(), r, a)
	return r
}

// loadRound loads a round of n keys of ks bytes a thread, strided by the block
// (SortBlock): key j of the thread at index i + j*SortBlock of its row, at
// pk + (rowBase + index)*ks, where the index is below end (valid[j]; else 0).
func loadRound(f *ptx.Func, ks, n int, i, end, rowBase, pk ptx.Reg) (keys, valid []ptx.Reg) {
	keys, valid = make([]ptx.Reg, n), make([]ptx.Reg, n)
	for j := range keys {
		ij := f.Reg(ptx.U64)
		f.Add(ij, i, ptx.Int(j*SortBlock))
		valid[j] = f.Setp(ptx.Lt, ij, end)
		a := f.Reg(ptx.U64)
		f.Add(a, ij, rowBase)
		f.Fma(a, a, ptx.Int(ks), pk)
		keys[j] = loadElem(f, ks, valid[j], ptx.Mem(a, 0), true)
	}
	return keys, valid
}

// PTX returns the histogram kernel's PTX.
func (h *RadixHist) PTX(major, minor int) (src, entry string, err error) {
	if err := h.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "radix_hist"
	f := m.Kernel(entry, ptx.P("keys", ptx.U64), ptx.P("hist", ptx.U64), ptx.P("rowLen", ptx.U64), ptx.P("chunk", ptx.U64),
		ptx.P("chunks", ptx.U64), ptx.P("segLen", ptx.U64), ptx.P("segs", ptx.U64), ptx.P("store", ptx.U64))
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	P := h.Order.Passes()
	copies := 8
	if P > 4 {
		copies = 4
	}
	stride := P * RadixDigits // words of a copy
	if h.Lean {
		stride++ // (a copy's digit d in bank d + copy)
	}
	words := copies * stride
	zr := (words + SortBlock - 1) / SortBlock // zeroing rounds
	f.Shared("rh_hist", ptx.B32, 16, zr*SortBlock)
	g := newSortGen(f, h.Order, h.Items)
	ks := h.Order.Size()
	pk, phist := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pk, f.LdParam(0))
	f.CvtaTo(ptx.Global, phist, f.LdParam(1))
	rowLen, chunk, chunks := f.LdParam(2), f.LdParam(3), f.LdParam(4)
	segLen, segs, store := f.LdParam(5), f.LdParam(6), f.LdParam(7)
	// Zero the shared counts.
	z := f.Reg(ptx.U32)
	f.Mov(z, ptx.Int(0))
	hb := f.Reg(ptx.U32)
	f.Op("mov.u32", hb, ptx.Sym("rh_hist"))
	{
		a := f.Reg(ptx.U32)
		f.Fma(a, g.tid, ptx.Int(4), hb)
		for j := 0; j < zr; j++ {
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
	// This thread's copy of the counts: lane % copies.
	cp := f.Reg(ptx.U32)
	f.And(cp, g.lane, ptx.Int(copies-1))
	cb := f.Reg(ptx.U32)
	f.Fma(cb, cp, ptx.Int(stride*4), hb)
	// Rounds of Items keys per thread, striped.
	i := f.Reg(ptx.U64)
	tid64 := f.Reg(ptx.U64)
	f.Cvt(tid64, g.tid)
	f.Add(i, start, tid64)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, end)).Bra(done)
	if h.Lean {
		// The round's keys from one address; key j valid while j*SortBlock < rem. A
		// whole round (every round but a chunk's last) takes a copy without the tests:
		// predicated, each shared atomic was a branch of its own (ptxas).
		rem64 := f.Reg(ptx.U64)
		f.Sub(rem64, end, i)
		f.Min(rem64, rem64, ptx.Int(1<<31))
		rem := f.Reg(ptx.U32)
		f.Cvt(rem, rem64)
		a := f.Reg(ptx.U64)
		f.Add(a, i, rowBase)
		f.Fma(a, a, ptx.Int(ks), pk)
		whole := f.Setp(ptx.Ge, rem, ptx.Int(h.Items*SortBlock))
		g.wholeOrPartial(whole, func(j int) ptx.Reg { return f.Setp(ptx.Gt, rem, ptx.Int(j*SortBlock)) }, func(valid func(j int) ptx.Reg) {
			keys := make([]ptx.Reg, h.Items)
			for j := range keys {
				keys[j] = loadElem(f, ks, valid(j), ptx.Mem(a, int64(j*SortBlock*ks)), true)
			}
			for j, k := range keys {
				g.countDigits(k, valid(j), cb)
			}
			// Each copy goes on to the next round itself: no join (where ptxas
			// would reconverge the warp a round).
			f.Add(i, i, ptx.Int(h.Items*SortBlock))
			f.Bra(loop)
		})
	}
	if !h.Lean {
		keys, valid := loadRound(f, ks, h.Items, i, end, rowBase, pk)
		for j, k := range keys {
			skip := f.NewLabel()
			f.AtNot(valid[j]).Bra(skip)
			o := g.ordered(k)
			for p := 0; p < P; p++ {
				d := g.digitOf(o, ptx.Int(8*p))
				a := f.Reg(ptx.U32)
				f.Fma(a, d, ptx.Int(4), cb)
				old := f.Reg(ptx.U32)
				f.Atom("", "", ptx.Shared, "add", ptx.U32, old, ptx.Mem(a, int64(p*RadixDigits*4)), ptx.Int(1))
			}
			f.Place(skip)
		}
		f.Add(i, i, ptx.Int(h.Items*SortBlock))
		f.Bra(loop)
	}
	f.Place(done)
	f.BarSync(0)
	// Flush: thread t sums its digit's copies for every pass.
	seg := f.Reg(ptx.U64)
	f.Div(seg, start, segLen)
	f.Fma(seg, row, segs, seg)
	st := f.Setp(ptx.Eq, store, ptx.Int(1))
	for p := 0; p < P; p++ {
		v := f.Reg(ptx.U32)
		f.Mov(v, ptx.Int(0))
		for cpy := 0; cpy < copies; cpy++ {
			x := f.Reg(ptx.U32)
			a := f.Reg(ptx.U32)
			f.Fma(a, g.tid, ptx.Int(4), hb)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(a, int64((cpy*stride+p*RadixDigits)*4)), x)
			f.Add(v, v, x)
		}
		ga := f.Reg(ptx.U64)
		f.Mul(ga, seg, ptx.Int(P))
		f.Add(ga, ga, ptx.Int(p))
		f.Mul(ga, ga, ptx.Int(RadixDigits))
		f.Add(ga, ga, tid64)
		f.Fma(ga, ga, ptx.Int(4), phist)
		f.At(st).Op("st.global.u32", ptx.Mem(ga, 0), v)
		add := f.Reg(ptx.Pred)
		f.Op("and.pred", add, f.Setp(ptx.Ne, v, ptx.Int(0)), f.Setp(ptx.Ne, store, ptx.Int(1)))
		skip := f.NewLabel()
		f.AtNot(add).Bra(skip)
		old := f.Reg(ptx.U32)
		f.Atom("", "", ptx.Global, "add", ptx.U32, old, ptx.Mem(ga, 0), v)
		f.Place(skip)
	}
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the plan kernel's PTX.
func (p *RadixPlan) PTX(major, minor int) (src, entry string, err error) {
	if err := p.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "radix_plan"
	f := m.Kernel(entry, ptx.P("hist", ptx.U64), ptx.P("base", ptx.U64), ptx.P("plan", ptx.U64),
		ptx.P("rowLen", ptx.U64), ptx.P("segs", ptx.U64))
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	if p.GridDep {
		if err := gridDep(f, 10*major+minor); err != nil {
			return "", "", err
		}
	}
	f.Shared("rp_sum", ptx.B64, 8, SortBlock/32)
	f.Shared("rp_triv", ptx.B32, 4, SortBlock/32)
	P := p.Passes
	g := newSortGen(f, SortKey{}, 1)
	ph, pb, pp := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, ph, f.LdParam(0))
	f.CvtaTo(ptx.Global, pb, f.LdParam(1))
	f.CvtaTo(ptx.Global, pp, f.LdParam(2))
	rowLen, segs := f.LdParam(3), f.LdParam(4)
	b := f.Special(ptx.CtaidX)
	row := f.Reg(ptx.U32)
	f.Div(row, b, ptx.Int(P))
	pass := f.Reg(ptx.U32)
	f.Mul(pass, row, ptx.Int(P))
	f.Sub(pass, b, pass)
	row64, pass64, tid64 := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Cvt(row64, row)
	f.Cvt(pass64, pass)
	f.Cvt(tid64, g.tid)
	// idx(q) = ((row*segs + q)*P + pass)*256 + tid
	first := f.Reg(ptx.U64)
	f.Mul(first, row64, segs)
	f.Mul(first, first, ptx.Int(P))
	f.Add(first, first, pass64)
	f.Mul(first, first, ptx.Int(RadixDigits))
	f.Add(first, first, tid64)
	total := f.Reg(ptx.U64)
	f.Mov(total, ptx.Int(0))
	q := f.Reg(ptx.U64)
	idx := f.Reg(ptx.U64)
	{
		f.Mov(q, ptx.Int(0))
		f.Mov(idx, first)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, q, segs)).Bra(done)
		a := f.Reg(ptx.U64)
		f.Fma(a, idx, ptx.Int(4), ph)
		c := f.Reg(ptx.U32)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), c)
		c64 := f.Reg(ptx.U64)
		f.Cvt(c64, c)
		f.Add(total, total, c64)
		f.Add(q, q, ptx.Int(1))
		f.Add(idx, idx, ptx.Int(P*RadixDigits))
		f.Bra(loop)
		f.Place(done)
	}
	// Is some digit the whole row? (per warp, then over the block)
	triv := f.Setp(ptx.Eq, total, rowLen)
	tb := f.Reg(ptx.B32)
	f.Vote("ballot", tb, triv, ptx.Uint(0xffffffff))
	{
		skip := f.NewLabel()
		f.AtNot(f.Setp(ptx.Eq, g.lane, ptx.Int(0))).Bra(skip)
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym("rp_triv"))
		f.Fma(a, g.warp, ptx.Int(4), a)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(a, 0), tb)
		f.Place(skip)
	}
	excl, _ := g.blockScan(total, "rp_sum") // its barrier orders rp_triv too
	any := f.Reg(ptx.B32)
	f.Mov(any, ptx.Int(0))
	for w := 0; w < SortBlock/32; w++ {
		x := f.Reg(ptx.B32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.B32, ptx.Mem(ptx.Sym("rp_triv"), int64(4*w)), x)
		f.Or(any, any, x)
	}
	run := f.Reg(ptx.U64)
	f.Mul(run, row64, rowLen)
	f.Add(run, run, excl)
	{
		f.Mov(q, ptx.Int(0))
		f.Mov(idx, first)
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, q, segs)).Bra(done)
		a := f.Reg(ptx.U64)
		f.Fma(a, idx, ptx.Int(8), pb)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), run)
		f.Fma(a, idx, ptx.Int(4), ph)
		c := f.Reg(ptx.U32)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), c)
		c64 := f.Reg(ptx.U64)
		f.Cvt(c64, c)
		f.Add(run, run, c64)
		f.Add(q, q, ptx.Int(1))
		f.Add(idx, idx, ptx.Int(P*RadixDigits))
		f.Bra(loop)
		f.Place(done)
	}
	// A pass no digit covers the whole row runs.
	{
		skip := f.NewLabel()
		w := f.Reg(ptx.Pred)
		f.Op("and.pred", w, f.Setp(ptx.Eq, g.tid, ptx.Int(0)), f.Setp(ptx.Eq, any, ptx.Int(0)))
		f.AtNot(w).Bra(skip)
		a := f.Reg(ptx.U64)
		f.Fma(a, pass64, ptx.Int(4), pp)
		one := f.Reg(ptx.U32)
		f.Mov(one, ptx.Int(1))
		f.Op("st.volatile.global.u32", ptx.Mem(a, 0), one) // rows' blocks race: a strong store
		f.Place(skip)
	}
	f.Ret()
	return m.String(), entry, nil
}

// selp64 returns p ? a : b (u64).
func selp64(f *ptx.Func, p ptx.Reg, a, b ptx.Operand) ptx.Reg {
	r := f.Reg(ptx.U64)
	f.Selp(r, a, b, p)
	return r
}

// lookback emits the decoupled look-back of thread tid (digit tid) of local tile t,
// the first tile of whose segment is lo (both s32): it returns the sum of the counts of
// the tile's predecessors in the segment (u32). Windows of 1, 2, 4, ... up to lb
// predecessors are loaded at once (all loads in flight together) and folded from the
// nearest: aggregates add and go on, an inclusive count adds and ends, an unpublished
// word stops the fold (the window is read again from there, after a pause: spinPause,
// which traps past spinLimitNs).
func (g *sortGen) lookback(cur, t, lo ptx.Reg, lb int) ptx.Reg {
	f := g.f
	excl := f.Reg(ptx.U32)
	f.Mov(excl, ptx.Int(0))
	j := f.Reg(ptx.S32)
	f.Sub(j, t.As(ptx.S32), ptx.Int(1))
	w := f.Reg(ptx.U32)
	f.Mov(w, ptx.Int(1))
	tid4 := f.Reg(ptx.U64)
	f.MulWide(tid4, g.tid, ptx.Int(4))
	colBase := f.Reg(ptx.U64)
	f.Add(colBase, cur, tid4)
	loop, exit := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	words := make([]ptx.Reg, lb)
	// One address: the window's farthest word; word i (tile j-i) at an offset above it.
	far := f.Reg(ptx.S32)
	f.Sub(far, j, ptx.Int(lb-1))
	aFar := f.Reg(ptx.U64)
	f.MulWide(aFar, far, ptx.Int(RadixDigits*4))
	f.Add(aFar, aFar, colBase)
	for i := range words {
		words[i] = f.Reg(ptx.U32)
		f.Mov(words[i], ptx.Int(0))
		jj := f.Reg(ptx.S32)
		f.Sub(jj, j, ptx.Int(i))
		v := f.Reg(ptx.Pred)
		f.Op("and.pred", v, f.Setp(ptx.Ge, jj, lo), f.Setp(ptx.Gt, w, ptx.Int(i)))
		f.At(v).Op("ld.relaxed.gpu.global.u32", words[i], ptx.Mem(aFar, int64((lb-1-i)*RadixDigits*4)))
	}
	stop := f.Reg(ptx.Pred)
	f.Op("setp.ne.u32", stop, w, w) // false
	done := f.Reg(ptx.Pred)
	f.Op("setp.ne.u32", done, w, w)
	adv := f.Reg(ptx.U32)
	f.Mov(adv, ptx.Int(0))
	for i, x := range words {
		flag := f.Reg(ptx.U32)
		f.Shr(flag, x, ptx.Int(30))
		ready := f.Setp(ptx.Ne, flag, ptx.Int(0))
		take := f.Reg(ptx.Pred)
		f.Op("and.pred", take, ready, notp(f, stop))
		val := f.Reg(ptx.U32)
		f.And(val, x, ptx.Int(radixValMask))
		f.At(take).Op("add.u32", excl, excl, val)
		f.At(take).Op("mov.u32", adv, ptx.Int(i+1))
		incl := f.Setp(ptx.Eq, flag, ptx.Int(2))
		tk := f.Reg(ptx.Pred)
		f.Op("and.pred", tk, take, incl)
		f.Op("or.pred", done, done, tk)
		f.Op("or.pred", stop, stop, notp(f, ready))
		f.Op("or.pred", stop, stop, incl)
	}
	f.At(done).Bra(exit)
	f.Sub(j, j, adv.As(ptx.S32))
	full := f.Setp(ptx.Eq, adv, w)
	w2 := f.Reg(ptx.U32)
	f.Shl(w2, w, ptx.Int(1))
	f.Min(w2, w2, ptx.Int(lb))
	f.At(full).Op("mov.u32", w, w2)
	spinPause(f, f.Setp(ptx.Eq, adv, ptx.Int(0)), "rs_t0") // (spin.go: bounded)
	f.Bra(loop)
	f.Place(exit)
	return excl
}

// lookbackLean is lookback (the same arguments and result) with fewer instructions:
// every round reads the whole window of lb predecessors at once (those from lo on),
// and folds it with about six instructions a word: a running predicate (published, and
// no inclusive count taken yet) guards the additions, so that no per-word stop logic
// remains. An unpublished word ends the round; the next round starts there after a
// pause (spinPause).
func (g *sortGen) lookbackLean(cur, t, lo ptx.Reg, lb int) ptx.Reg {
	f := g.f
	excl := f.Reg(ptx.U32)
	f.Mov(excl, ptx.Int(0))
	j := f.Reg(ptx.S32)
	f.Sub(j, t.As(ptx.S32), ptx.Int(1))
	tid4 := f.Reg(ptx.U64)
	f.MulWide(tid4, g.tid, ptx.Int(4))
	colBase := f.Reg(ptx.U64)
	f.Add(colBase, cur, tid4)
	loop, exit := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	// The words of tiles j, j-1, ..., max(j-lb+1, lo): nv of them.
	nv := f.Reg(ptx.S32)
	f.Sub(nv, j, lo)
	f.Add(nv, nv, ptx.Int(1))
	f.Min(nv, nv, ptx.Int(lb))
	far := f.Reg(ptx.S32)
	f.Sub(far, j, ptx.Int(lb-1))
	aFar := f.Reg(ptx.U64)
	f.MulWide(aFar, far, ptx.Int(RadixDigits*4))
	f.Add(aFar, aFar, colBase)
	words := make([]ptx.Reg, lb)
	for i := range words {
		words[i] = f.Reg(ptx.U32)
		f.Mov(words[i], ptx.Int(0))
		f.At(f.Setp(ptx.Gt, nv, ptx.Int(i))).Op("ld.relaxed.gpu.global.u32", words[i], ptx.Mem(aFar, int64((lb-1-i)*RadixDigits*4)))
	}
	// run: every word so far published and none inclusive; done: an inclusive taken.
	run := f.Setp(ptx.Eq, j, j)
	done := f.Reg(ptx.Pred)
	f.Op("setp.ne.s32", done, j, j) // false
	adv := f.Reg(ptx.U32)
	f.Mov(adv, ptx.Int(0))
	for i, x := range words {
		f.Op("setp.ge.and.u32", run, x, ptx.Uint(radixFlagAgg), run)
		val := f.Reg(ptx.U32)
		f.And(val, x, ptx.Int(radixValMask))
		f.At(run).Op("add.u32", excl, excl, val)
		f.At(run).Op("mov.u32", adv, ptx.Int(i+1))
		incl := f.Reg(ptx.Pred)
		f.Op("setp.ge.and.u32", incl, x, ptx.Uint(radixFlagIncl), run)
		f.Op("or.pred", done, done, incl)
		f.Op("setp.lt.and.u32", run, x, ptx.Uint(radixFlagIncl), run)
	}
	f.At(done).Bra(exit)
	f.Sub(j, j, adv.As(ptx.S32))
	spinPause(f, f.Setp(ptx.Eq, adv, ptx.Int(0)), "rs_t0") // (spin.go: bounded)
	f.Bra(loop)
	f.Place(exit)
	return excl
}

// notp returns a new predicate !p.
func notp(f *ptx.Func, p ptx.Reg) ptx.Reg {
	r := f.Reg(ptx.Pred)
	f.Op("not.pred", r, p)
	return r
}

// PTX returns the pass kernel's PTX.
func (p *RadixPass) PTX(major, minor int) (src, entry string, err error) {
	if err := p.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "radix_pass"
	names := []string{"keyIn", "keyA", "keyB", "keyFinal", "valIn", "valA", "valB", "valFinal", "plan", "base", "status",
		"pass", "rowLen", "tilesPerRow", "tilesPerSeg", "segs", "tileBase", "maxTiles", "groups", "group"}
	params := make([]ptx.Param, len(names))
	for i, n := range names {
		params[i] = ptx.P(n, ptx.U64)
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	if p.MinBlocks > 0 {
		f.Attr(fmt.Sprintf(".minnctapersm %d", p.MinBlocks))
	}
	if p.GridDep {
		if err := gridDep(f, 10*major+minor); err != nil {
			return "", "", err
		}
	}
	K, tile, ks, vs := p.Items, p.Tile(), p.Order.Size(), p.ValSize
	P := p.Order.Passes()
	if p.DynamicBytes() > 0 {
		m.ExternShared("rs_tile", 16)
	} else {
		f.Shared("rs_tile", ptx.B8, 16, p.tileBytes()) // (RankAtomicOr: the match words first)
	}
	f.Shared("rs_cnt", ptx.B32, 16, 8*RadixDigits)
	f.Shared("rs_off", ptx.B64, 16, RadixDigits) // per digit: the key (then value) address of tile slot 0
	f.Shared("rs_sum", ptx.B32, 16, SortBlock/32)
	f.Shared("rs_misc", ptx.B32, 16, 4)
	f.Shared("rs_t0", ptx.B64, 8, 1) // the block's start (spinStart)
	digSmem := p.digitsInSmem()
	if digSmem {
		f.Shared("rs_dig", ptx.B8, 16, tile) // each tile slot's digit
	}
	g := newSortGen(f, p.Order, K)
	gp := func(i int) ptx.Reg { // a global pointer parameter
		r := f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, r, f.LdParam(i))
		return r
	}
	pass32 := f.Reg(ptx.U32)
	f.Cvt(pass32, f.LdParam(11))
	groups, group := f.LdParam(18), f.LdParam(19)
	maxTiles := f.LdParam(17)
	half := f.Reg(ptx.U64)
	f.Mul(half, maxTiles, ptx.Int(RadixDigits*4))
	pst := gp(10)
	tid0 := f.Setp(ptx.Eq, g.tid, ptx.Int(0))
	// halfOf returns the address of status half L%2 (L = k*groups + group).
	halfOf := func(k ptx.Reg, plus int) ptx.Reg {
		L := f.Reg(ptx.U64)
		k64 := f.Reg(ptx.U64)
		f.Cvt(k64, k)
		f.Fma(L, k64, groups, group)
		f.Add(L, L, ptx.Int(plus))
		f.And(L, L, ptx.Int(1))
		a := f.Reg(ptx.U64)
		f.Fma(a, L, half, pst)
		return a
	}
	// Thread 0: the plan and the tile number.
	{
		skip := f.NewLabel()
		f.AtNot(tid0).Bra(skip)
		pplan := gp(8)
		// The tile number first, from the launch's counter after the plan's flags
		// (its round trip overlaps the flags' loads; the block of an inactive pass
		// takes one too, unused).
		ci := f.Reg(ptx.U64)
		f.Fma(ci, f.LdParam(11), groups, group)
		ca := f.Reg(ptx.U64)
		f.Fma(ca, ci, ptx.Int(4), pplan)
		t := f.Reg(ptx.U32)
		f.Op("atom.global.add.u32", t, ptx.Mem(ca, SortPlanBytes), ptx.Int(1))
		k, mm := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Mov(k, ptx.Int(0))
		f.Mov(mm, ptx.Int(0))
		for q := 0; q < P; q++ {
			x := f.Reg(ptx.U32)
			f.Ld(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(pplan, int64(4*q)), x)
			one := f.Reg(ptx.U32)
			f.Selp(one, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Ne, x, ptx.Int(0)))
			f.Add(mm, mm, one)
			f.At(f.Setp(ptx.Gt, pass32, ptx.Int(q))).Op("add.u32", k, k, one)
		}
		pa := f.Reg(ptx.U64)
		f.MulWide(pa, pass32, ptx.Int(4))
		f.Add(pa, pa, pplan)
		x := f.Reg(ptx.U32)
		f.Ld(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(pa, 0), x)
		act := f.Reg(ptx.U32)
		f.Selp(act, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Ne, x, ptx.Int(0)))
		none := f.Setp(ptx.Eq, mm, ptx.Int(0))
		last := f.Reg(ptx.U32)
		f.Selp(last, ptx.Int(1), ptx.Int(0), f.Setp(ptx.Eq, pass32, ptx.Int(P-1)))
		f.At(none).Op("mov.u32", act, last)
		f.At(none).Op("mov.u32", k, ptx.Int(0))
		f.At(none).Op("mov.u32", mm, ptx.Int(1))
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("rs_misc"), 0), t, k, mm, act)
		spinStart(f, "rs_t0")
		f.Place(skip)
	}
	f.BarSync(0)
	t, k, mm, act := f.Reg(ptx.U32), f.Reg(ptx.U32), f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("rs_misc"), 0), t, k, mm, act)
	{
		run := f.NewLabel()
		f.At(f.Setp(ptx.Ne, act, ptx.Int(0))).Bra(run)
		f.Ret()
		f.Place(run)
	}
	// The tile's geometry and buffers, from the tile number and plan in shared memory
	// and the parameters: computed before the ranking and again after it, so that no
	// register holds them through it.
	type passGeo struct {
		t, k, mm, tp, tr, tpr, tps, seg, count ptx.Reg // u32
		tileOff, elemStart                     ptx.Reg // u64
		even, first, final                     ptx.Reg // pred
		cur                                    ptx.Reg // u64 status half
	}
	// span returns the row of the launch's tile t (u32), its tile number in the row,
	// the tiles of a row, the tile's first key in the row (u64) and in the launch's
	// keys (u64), and its keys (u32).
	span := func(t ptx.Reg) (row, tr, tpr, tileOff, elemStart, count ptx.Reg) {
		rowLen := f.LdParam(12)
		tpr = f.Reg(ptx.U32)
		f.Cvt(tpr, f.LdParam(13))
		base32 := f.Reg(ptx.U32)
		f.Cvt(base32, f.LdParam(16))
		gt := f.Reg(ptx.U32)
		f.Add(gt, base32, t)
		row = f.Reg(ptx.U32)
		f.Div(row, gt, tpr)
		tr = f.Reg(ptx.U32)
		f.Mul(tr, row, tpr)
		f.Sub(tr, gt, tr)
		tileOff = f.Reg(ptx.U64)
		f.MulWide(tileOff, tr, ptx.Int(tile))
		row64 := f.Reg(ptx.U64)
		f.Cvt(row64, row)
		elemStart = f.Reg(ptx.U64)
		f.Fma(elemStart, row64, rowLen, tileOff)
		cnt64 := f.Reg(ptx.U64)
		f.Sub(cnt64, rowLen, tileOff)
		f.Min(cnt64, cnt64, ptx.Int(tile))
		count = f.Reg(ptx.U32)
		f.Cvt(count, cnt64)
		return
	}
	geo := func() *passGeo {
		ge := &passGeo{t: f.Reg(ptx.U32), k: f.Reg(ptx.U32), mm: f.Reg(ptx.U32)}
		x := f.Reg(ptx.U32)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(ptx.Sym("rs_misc"), 0), ge.t, ge.k, ge.mm, x)
		var row ptx.Reg
		row, ge.tr, ge.tpr, ge.tileOff, ge.elemStart, ge.count = span(ge.t)
		ge.tps = f.Reg(ptx.U32)
		f.Cvt(ge.tps, f.LdParam(14))
		segs32 := f.Reg(ptx.U32)
		f.Cvt(segs32, f.LdParam(15))
		q := f.Reg(ptx.U32)
		f.Div(q, ge.tr, ge.tps)
		ge.tp = f.Reg(ptx.U32)
		f.Mul(ge.tp, q, ge.tps)
		f.Sub(ge.tp, ge.tr, ge.tp)
		ge.seg = f.Reg(ptx.U32)
		f.Fma(ge.seg, row, segs32, q)
		e := f.Reg(ptx.U32)
		f.Sub(e, ge.mm, ge.k)
		f.And(e, e, ptx.Int(1))
		ge.even = f.Setp(ptx.Eq, e, ptx.Int(0))
		ge.first = f.Setp(ptx.Eq, ge.k, ptx.Int(0))
		mm1 := f.Reg(ptx.U32)
		f.Sub(mm1, ge.mm, ptx.Int(1))
		ge.final = f.Setp(ptx.Eq, ge.k, mm1)
		ge.cur = halfOf(ge.k, 0)
		return ge
	}
	// pick returns a pass's source and destination among the parameters in (the
	// sort's input; -1: none), a, b and fin (the result; 0: not written).
	pick := func(ge *passGeo, in, a, b, fin int) (src, dst ptx.Reg) {
		A, B := gp(a), gp(b)
		src = selp64(f, ge.even, A, B)
		if in >= 0 {
			src = selp64(f, ge.first, gp(in), src)
		}
		dst = selp64(f, ge.even, B, A)
		dst = selp64(f, ge.final, f.LdParam(fin), dst) // 0 stays 0
		isNull := f.Setp(ptx.Eq, dst, ptx.Int(0))
		cv := f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, cv, dst)
		f.At(isNull).Op("mov.u64", cv, ptx.Int(0))
		return src, cv
	}
	g1 := geo()
	// Zero the other status half for the next launch: rows t, t+grid, ...
	{
		next := halfOf(k, 1)
		z := f.Reg(ptx.U32)
		f.Mov(z, ptx.Int(0))
		r := f.Reg(ptx.U64)
		f.Cvt(r, t)
		grid := f.Reg(ptx.U64)
		f.Cvt(grid, f.Special(ptx.NctaidX))
		tid4 := f.Reg(ptx.U64)
		f.MulWide(tid4, g.tid, ptx.Int(4))
		loop, done := f.NewLabel(), f.NewLabel()
		f.Place(loop)
		f.At(f.Setp(ptx.Ge, r, maxTiles)).Bra(done)
		a := f.Reg(ptx.U64)
		f.Fma(a, r, ptx.Int(RadixDigits*4), next)
		f.Add(a, a, tid4)
		f.St(ptx.Global, ptx.CacheDefault, ptx.U32, ptx.Mem(a, 0), z)
		f.Add(r, r, grid)
		f.Bra(loop)
		f.Place(done)
	}
	kSrc, _ := pick(g1, 0, 1, 2, 3)
	valIn := 4 // the values' source parameter in the first pass (ValIndex: none, made)
	if p.Val == ValIndex {
		valIn = -1
	}
	if p.Prefetch > 0 {
		// The keys of tile t+Prefetch of this launch, where there is one.
		tn := f.Reg(ptx.U32)
		f.Add(tn, t, ptx.Int(p.Prefetch))
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Ge, tn, f.Special(ptx.NctaidX))).Bra(skip)
		_, _, _, _, start, cnt := span(tn)
		a := f.Reg(ptx.U64)
		f.Fma(a, start, ptx.Int(ks), kSrc)
		nb := f.Reg(ptx.U32)
		f.Mul(nb, cnt, ptx.Int(ks))
		g.prefetchL2(a, nb, tile*ks)
		f.Place(skip)
	}
	if p.PrefetchVals && p.Val != ValNone {
		// This tile's values, loaded once its keys are written.
		vSrc, _ := pick(g1, valIn, 5, 6, 7)
		skip := f.NewLabel()
		if p.Val == ValIndex {
			f.At(g1.first).Bra(skip) // (the first pass makes the indices)
		}
		a := f.Reg(ptx.U64)
		f.Fma(a, g1.elemStart, ptx.Int(vs), vSrc)
		nb := f.Reg(ptx.U32)
		f.Mul(nb, g1.count, ptx.Int(vs))
		g.prefetchL2(a, nb, tile*vs)
		f.Place(skip)
	}
	// Load the keys.
	shift := f.Reg(ptx.U32)
	f.Shl(shift, pass32, ptx.Int(3))
	if p.Prmt {
		g.digitSelector(pass32, shift)
	}
	// Slots, validity and digits are recomputed where needed rather than kept: fewer
	// registers live through the ranking.
	slot0 := g.slotOf(0)
	slotOf := func(i int) ptx.Reg {
		s := f.Reg(ptx.U32)
		f.Add(s, slot0, ptx.Int(32*i))
		return s
	}
	count := g1.count
	validOf := func(i int) ptx.Reg { return f.Setp(ptx.Lt, slotOf(i), count) }
	// loadRank loads the thread's keys and ranks them, valid(i) telling whether item
	// i is in the tile.
	loadRank := func(valid func(i int) ptx.Reg) (keys, packed []ptx.Reg) {
		keys = make([]ptx.Reg, K)
		{
			a0 := f.Reg(ptx.U64)
			f.Cvt(a0, slot0)
			f.Add(a0, a0, g1.elemStart)
			f.Fma(a0, a0, ptx.Int(ks), kSrc)
			for i := range keys {
				keys[i] = loadElem(f, ks, valid(i), ptx.Mem(a0, int64(32*i*ks)), true)
			}
			if p.LoadFence {
				g.landKeys(keys, "rs_off")
			}
		}
		packed = g.rankItems("rs_cnt", K, func(i int) (ptx.Reg, ptx.Reg) {
			return g.digitOf(g.ordered(keys[i]), shift), valid(i)
		}, p.Rank, "rs_tile")
		return keys, packed
	}
	var keys, packed []ptx.Reg
	if !p.FullTiles {
		keys, packed = loadRank(validOf)
	} else {
		// A full tile (every tile but a row's partial last one) takes a copy without
		// the per-item bounds tests: a predicate ptxas folds to true.
		keys, packed = make([]ptx.Reg, K), make([]ptx.Reg, K)
		for i := range keys {
			keys[i], packed[i] = f.Reg(regType(ks)), f.Reg(ptx.U32)
		}
		g.wholeOrPartial(f.Setp(ptx.Eq, count, ptx.Int(tile)), validOf, func(valid func(i int) ptx.Reg) {
			k, pk := loadRank(valid)
			for i := range keys {
				f.Mov(keys[i], k[i])
				f.Mov(packed[i], pk[i])
			}
		})
	}
	f.BarSync(0)
	g2 := geo()
	t, count = g2.t, g2.count
	cur, tp, seg, tr, tps32, tpr32 := g2.cur, g2.tp, g2.seg, g2.tr, g2.tps, g2.tpr
	tileOff, elemStart, first, final := g2.tileOff, g2.elemStart, g2.first, g2.final
	_, kDst := pick(g2, 0, 1, 2, 3)
	writeKeys := f.Setp(ptx.Ne, kDst, ptx.Int(0))
	counts, cnt := g.warpCounts("rs_cnt")
	// Publish the tile's count of digit tid: inclusive for a segment's first tile.
	sa := f.Reg(ptx.U64)
	{
		t64 := f.Reg(ptx.U64)
		f.Cvt(t64, t)
		f.Fma(sa, t64, ptx.Int(RadixDigits*4), cur)
		tid4 := f.Reg(ptx.U64)
		f.MulWide(tid4, g.tid, ptx.Int(4))
		f.Add(sa, sa, tid4)
		w := f.Reg(ptx.U32)
		f.Or(w, cnt, ptx.Uint(radixFlagAgg))
		f.At(f.Setp(ptx.Eq, tp, ptx.Int(0))).Op("or.b32", w, cnt, ptx.Uint(radixFlagIncl))
		f.Op("st.relaxed.gpu.global.u32", ptx.Mem(sa, 0), w)
	}
	excl, _ := g.blockScan(cnt, "rs_sum")
	g.storeStarts("rs_cnt", counts, excl)
	f.BarSync(0) // the warps' digit starts
	// Each key to its place in the tile sorted by digit (before the look-back, so that
	// the keys and ranks no longer take registers during it).
	tb := f.Reg(ptx.U32)
	f.Op("mov.u32", tb, ptx.Sym("rs_tile"))
	var dig ptx.Reg
	if digSmem {
		dig = f.Reg(ptx.U32)
		f.Op("mov.u32", dig, ptx.Sym("rs_dig"))
	}
	kmt := memType(ks)
	fr := g.finalRanks(packed, "rs_cnt", func(i int, fr, d ptx.Reg) {
		a := f.Reg(ptx.U32)
		f.Fma(a, fr, ptx.Int(ks), tb)
		v := validOf(i)
		f.At(v).Op("st.shared"+kmt.String(), ptx.Mem(a, 0), keys[i])
		if digSmem {
			da := f.Reg(ptx.U32)
			f.Add(da, dig, fr)
			f.At(v).Op("st.shared.u8", ptx.Mem(da, 0), d)
		}
	})
	// Look back for the counts of the segment's earlier tiles.
	before := f.Reg(ptx.U32)
	f.Mov(before, ptx.Int(0))
	{
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Eq, tp, ptx.Int(0))).Bra(skip)
		lo := f.Reg(ptx.S32)
		f.Sub(lo, t.As(ptx.S32), tp.As(ptx.S32))
		var x ptx.Reg
		if p.LeanLookback {
			x = g.lookbackLean(cur, t, lo, p.Lookback)
		} else {
			x = g.lookback(cur, t, lo, p.Lookback)
		}
		f.Mov(before, x)
		w := f.Reg(ptx.U32)
		f.Add(w, x, cnt)
		f.Or(w, w, ptx.Uint(radixFlagIncl))
		f.Op("st.relaxed.gpu.global.u32", ptx.Mem(sa, 0), w)
		f.Place(skip)
	}
	// off[d] = base + before - digit start: the output position of tile slot idx of
	// digit d is off[d] + idx.
	var ka ptx.Reg // the key address of digit tid's tile slot 0
	{
		pbase := gp(9)
		seg64 := f.Reg(ptx.U64)
		f.Cvt(seg64, seg)
		bi := f.Reg(ptx.U64)
		f.Mul(bi, seg64, ptx.Int(P))
		f.Add(bi, bi, f.LdParam(11))
		f.Mul(bi, bi, ptx.Int(RadixDigits))
		tid64 := f.Reg(ptx.U64)
		f.Cvt(tid64, g.tid)
		f.Add(bi, bi, tid64)
		f.Fma(bi, bi, ptx.Int(8), pbase)
		off := f.Reg(ptx.U64)
		f.Op("ld.global.u64", off, ptx.Mem(bi, 0)) // not .nc: written by the previous launch
		b64 := f.Reg(ptx.U64)
		f.Cvt(b64, before)
		f.Add(off, off, b64)
		e64 := f.Reg(ptx.U64)
		f.Cvt(e64, excl)
		f.Sub(off, off, e64)
		// The tables of addresses: tile slot idx of digit d goes to table[d] +
		// idx*size (modulo 2^64: off may be below 0).
		a := f.Reg(ptx.U32)
		f.Op("mov.u32", a, ptx.Sym("rs_off"))
		f.Fma(a, g.tid, ptx.Int(8), a)
		ka = f.Reg(ptx.U64)
		f.Fma(ka, off, ptx.Int(ks), kDst)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), ka)
		// The last tile of a segment that isn't its row's last: the next segment's
		// base offsets, in this pass's input order.
		nb := f.Reg(ptx.U32)
		f.Add(nb, tp, ptx.Int(1))
		nx := f.Reg(ptx.Pred)
		trn := f.Reg(ptx.U32)
		f.Add(trn, tr, ptx.Int(1))
		f.Op("and.pred", nx, f.Setp(ptx.Eq, nb, tps32), f.Setp(ptx.Lt, trn, tpr32))
		nbase := f.Reg(ptx.U64)
		f.Add(nbase, off, e64)
		c64 := f.Reg(ptx.U64)
		f.Cvt(c64, cnt)
		f.Add(nbase, nbase, c64)
		na := f.Reg(ptx.U64)
		f.Add(na, bi, ptx.Int(P*RadixDigits*8))
		f.At(nx).Op("st.global.u64", ptx.Mem(na, 0), nbase)
	}
	ob := f.Reg(ptx.U32)
	f.Op("mov.u32", ob, ptx.Sym("rs_off"))
	var db ptx.Reg
	if digSmem {
		db = f.Reg(ptx.U32)
		f.Add(db, dig, g.tid)
	}
	if p.Sectors {
		g.writeSectors(ks, ks, ka, excl, cnt, tb, writeKeys)
	} else {
		f.BarSync(0) // the tile and the addresses
		// Write the keys in tile order: runs of one digit go to consecutive addresses.
		g.writeTile(ks, count, tb, ob, db, writeKeys, func(key ptx.Reg) ptx.Reg {
			if digSmem {
				return ptx.Reg{}
			}
			return g.digitOf(g.ordered(key), shift)
		})
	}
	// The values: loaded once the keys are written (loaded before, they would take
	// registers during the keys' writes: ptxas spills argsorts of 1- and 8-byte keys).
	var vDst, vsz ptx.Reg
	var g3 *passGeo
	var vals []ptx.Reg
	vmt := memType(vs)
	if p.Val != ValNone {
		var vSrc ptx.Reg
		// The geometry again (no register held it through the keys' writes).
		g3 = geo()
		count, tileOff, elemStart, first, final = g3.count, g3.tileOff, g3.elemStart, g3.first, g3.final
		vSrc, vDst = pick(g3, valIn, 5, 6, 7)
		vsz = f.Reg(ptx.U32) // bytes of a written value
		f.Mov(vsz, ptx.Int(vs))
		if p.Val == ValIndex {
			f.At(final).Op("mov.u32", vsz, ptx.Int(8))
		}
		vals = make([]ptx.Reg, K)
		for i := range vals {
			a := f.Reg(ptx.U64)
			f.Cvt(a, slotOf(i))
			if p.Val == ValIndex {
				// The first active pass makes the indices: the key's place in its row.
				v := f.Reg(regType(vs))
				idx := f.Reg(ptx.U64)
				f.Add(idx, a, tileOff)
				f.Cvt(v, idx)
				ld := f.Reg(ptx.Pred)
				f.Op("and.pred", ld, validOf(i), notp(f, first))
				f.Add(a, a, elemStart)
				f.Fma(a, a, ptx.Int(vs), vSrc)
				f.At(ld).Op("ld.global.nc"+vmt.String(), v, ptx.Mem(a, 0))
				vals[i] = v
				continue
			}
			f.Add(a, a, elemStart)
			f.Fma(a, a, ptx.Int(vs), vSrc)
			vals[i] = loadElem(f, vs, validOf(i), ptx.Mem(a, 0), true)
		}
	}
	if p.Val != ValNone {
		f.BarSync(0)   // every key read from the tile, every key address from rs_off
		var va ptx.Reg // the value address of digit tid's tile slot 0
		{
			a := f.Reg(ptx.U32)
			f.Op("mov.u32", a, ptx.Sym("rs_off"))
			f.Fma(a, g.tid, ptx.Int(8), a)
			// The value address of digit tid's slot 0 replaces the key's: off is
			// (key address - keyDst) / key size (exact: |off| < 2^62 / 8).
			ka := f.Reg(ptx.U64)
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), ka)
			_, kd := pick(g3, 0, 1, 2, 3)
			off := f.Reg(ptx.S64)
			f.Sub(off, ka.As(ptx.S64), kd.As(ptx.S64))
			switch ks {
			case 2:
				f.Shr(off, off, ptx.Int(1))
			case 4:
				f.Shr(off, off, ptx.Int(2))
			case 8:
				f.Shr(off, off, ptx.Int(3))
			}
			vsz64 := f.Reg(ptx.U64)
			f.Cvt(vsz64, vsz)
			va = f.Reg(ptx.U64)
			f.Fma(va, off.As(ptx.U64), vsz64, vDst)
			if !p.Sectors { // (writeSectors takes va from this thread)
				f.St(ptx.Shared, ptx.CacheDefault, ptx.U64, ptx.Mem(a, 0), va)
			}
		}
		for i, v := range vals {
			a := f.Reg(ptx.U32)
			f.Fma(a, fr[i], ptx.Int(vs), tb)
			f.At(validOf(i)).Op("st.shared"+vmt.String(), ptx.Mem(a, 0), v)
		}
		if p.Sectors {
			// The values on whole sectors as the keys (a copy for the last pass's
			// int64 indices: its own sectors).
			writes := f.Setp(ptx.Ne, vDst, ptx.Int(0))
			if p.Val == ValIndex && vs != 8 {
				narrow, end := f.NewLabel(), f.NewLabel()
				f.AtNot(final).Bra(narrow)
				g.writeSectors(vs, 8, va, excl, cnt, tb, writes)
				f.Bra(end)
				f.Place(narrow)
				g.writeSectors(vs, vs, va, excl, cnt, tb, writes)
				f.Place(end)
			} else {
				g.writeSectors(vs, vs, va, excl, cnt, tb, writes)
			}
			f.Ret()
			return m.String(), entry, nil
		}
		f.BarSync(0)
		// The values in tile order, as writeTile writes the keys: nothing where the
		// pass writes no values (vDst 0), and for indices a copy of the loop for the
		// last pass (int64) and one for the others (the value type), so that each
		// store takes only its slot's predicate.
		done := f.NewLabel()
		f.At(f.Setp(ptx.Eq, vDst, ptx.Int(0))).Bra(done)
		scatter := func(wide bool) {
			a := f.Reg(ptx.U32)
			f.Fma(a, g.tid, ptx.Int(vs), tb)
			valid := g.slotTests(count)
			for j := 0; j < K; j++ {
				vj := valid(j)
				v := f.Reg(regType(vs))
				f.Op("ld.shared"+vmt.String(), v, ptx.Mem(a, int64(j*SortBlock*vs))) // (in the tile for every slot, as in writeTile)
				d := f.Reg(ptx.U32)
				f.Op("ld.shared.u8", d, ptx.Mem(db, int64(j*SortBlock)))
				oa := f.Reg(ptx.U32)
				f.Fma(oa, d, ptx.Int(8), ob)
				ba := f.Reg(ptx.U64)
				f.Op("ld.shared.u64", ba, ptx.Mem(oa, 0))
				ga := f.Reg(ptx.U64)
				if wide {
					// The last pass writes int64 indices.
					v64 := v
					if vs == 4 {
						v64 = f.Reg(ptx.U64)
						f.Cvt(v64, v)
					}
					f.Op("mad.wide.u32", ga, g.tid, ptx.Int(8), ba)
					f.At(vj).Op("st.global.u64", ptx.Mem(ga, int64(j*SortBlock*8)), v64)
					continue
				}
				f.Op("mad.wide.u32", ga, g.tid, ptx.Int(vs), ba)
				f.At(vj).Op("st.global"+vmt.String(), ptx.Mem(ga, int64(j*SortBlock*vs)), v)
			}
		}
		if p.Val == ValIndex && vs != 8 {
			narrow := f.NewLabel()
			f.AtNot(final).Bra(narrow)
			scatter(true)
			f.Bra(done)
			f.Place(narrow)
			scatter(false)
		} else {
			// (8-byte indices are written alike by every pass.)
			scatter(false)
		}
		f.Place(done)
	}
	f.Ret()
	return m.String(), entry, nil
}

// PTX returns the block sort's PTX.
func (b *RadixBlockSort) PTX(major, minor int) (src, entry string, err error) {
	if err := b.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "radix_block_sort"
	f := m.Kernel(entry, ptx.P("keyIn", ptx.U64), ptx.P("keyOut", ptx.U64), ptx.P("valIn", ptx.U64), ptx.P("valOut", ptx.U64),
		ptx.P("rows", ptx.U64), ptx.P("rowLen", ptx.U64), ptx.P("rowsPerBlock", ptx.U64))
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", SortBlock))
	f.Attr(".minnctapersm 2") // (its shared memory allows 5; two blocks keep 128 registers)
	K, tile, ks := b.Items, b.Tile(), b.Order.Size()
	P := b.Order.Passes()
	f.Shared("bs_keys", ptx.B8, 16, tile*max(ks, 4))
	f.Shared("bs_car", ptx.B32, 16, tile)
	f.Shared("bs_cnt", ptx.B32, 16, 8*RadixDigits)
	f.Shared("bs_sum", ptx.B32, 16, SortBlock/32)
	g := newSortGen(f, b.Order, K)
	pin := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pin, f.LdParam(0))
	keyOut := f.LdParam(1)
	pout := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pout, keyOut)
	rows, rowLen, rpb := f.LdParam(4), f.LdParam(5), f.LdParam(6)
	blk := f.Reg(ptx.U64)
	f.Cvt(blk, f.Special(ptx.CtaidX))
	row0 := f.Reg(ptx.U64)
	f.Mul(row0, blk, rpb)
	nrows := f.Reg(ptx.U64)
	f.Sub(nrows, rows, row0)
	f.Min(nrows, nrows, rpb)
	cnt64 := f.Reg(ptx.U64)
	f.Mul(cnt64, nrows, rowLen)
	count := f.Reg(ptx.U32)
	f.Cvt(count, cnt64)
	start := f.Reg(ptx.U64)
	f.Mul(start, row0, rowLen)
	rl := f.Reg(ptx.U32)
	f.Cvt(rl, rowLen)
	// Passes: the key's digits, then the row number's (rows of the block below 2^16).
	rpb32 := f.Reg(ptx.U32)
	f.Cvt(rpb32, rpb)
	rb := f.Reg(ptx.U32)
	f.Sub(rb, rpb32, ptx.Int(1))
	f.Op("bfind.u32", rb, rb) // 0xffffffff for 0
	f.Add(rb, rb, ptx.Int(1)) // bits of rpb-1
	passes := f.Reg(ptx.U32)
	f.Add(passes, rb, ptx.Int(7))
	f.Shr(passes, passes, ptx.Int(3))
	f.Add(passes, passes, ptx.Int(P))
	keys := make([]ptx.Reg, K)
	cars := make([]ptx.Reg, K)
	slot0 := g.slotOf(0)
	slotOf := func(i int) ptx.Reg {
		s := f.Reg(ptx.U32)
		f.Add(s, slot0, ptx.Int(32*i))
		return s
	}
	validOf := func(i int) ptx.Reg { return f.Setp(ptx.Lt, slotOf(i), count) }
	a0 := f.Reg(ptx.U64)
	f.Cvt(a0, slot0)
	f.Add(a0, a0, start)
	f.Fma(a0, a0, ptx.Int(ks), pin)
	for i := range keys {
		keys[i] = loadElem(f, ks, validOf(i), ptx.Mem(a0, int64(32*i*ks)), true)
		sl := slotOf(i)
		r := f.Reg(ptx.U32)
		f.Div(r, sl, rl)
		cars[i] = f.Reg(ptx.U32)
		f.Shl(cars[i], r, ptx.Int(16))
		f.Or(cars[i], cars[i], sl)
	}
	g.landKeys(keys, "bs_car") // (the thread's word there is rewritten after barriers)
	kb, cb := f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Op("mov.u32", kb, ptx.Sym("bs_keys"))
	f.Op("mov.u32", cb, ptx.Sym("bs_car"))
	kmt := memType(ks)
	ps := f.Reg(ptx.U32)
	f.Mov(ps, ptx.Int(0))
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, ps, passes)).Bra(done)
	{
		isKey := f.Setp(ptx.Lt, ps, ptx.Int(P))
		ksh := f.Reg(ptx.U32)
		f.Shl(ksh, ps, ptx.Int(3))
		rsh := f.Reg(ptx.U32)
		f.Sub(rsh, ksh, ptx.Int(8*P-16)) // 16 + 8*(ps-P): the row number's bits in car
		packed := g.rankItems("bs_cnt", K, func(i int) (ptx.Reg, ptx.Reg) {
			dk := g.digitOf(g.ordered(keys[i]), ksh)
			dr := f.Reg(ptx.U32)
			f.Op("bfe.u32", dr, cars[i], rsh, ptx.Int(8))
			d := f.Reg(ptx.U32)
			f.Selp(d, dk, dr, isKey)
			return d, validOf(i)
		}, RankBallot, "")
		f.BarSync(0)
		counts, cnt := g.warpCounts("bs_cnt")
		excl, _ := g.blockScan(cnt, "bs_sum")
		g.storeStarts("bs_cnt", counts, excl)
		f.BarSync(0)
		fr := g.finalRanks(packed, "bs_cnt", nil)
		for i := range keys {
			v := validOf(i)
			ka := f.Reg(ptx.U32)
			f.Fma(ka, fr[i], ptx.Int(ks), kb)
			f.At(v).Op("st.shared"+kmt.String(), ptx.Mem(ka, 0), keys[i])
			ca := f.Reg(ptx.U32)
			f.Fma(ca, fr[i], ptx.Int(4), cb)
			f.At(v).Op("st.shared.u32", ptx.Mem(ca, 0), cars[i])
		}
		f.BarSync(0)
		ka0, ca0 := f.Reg(ptx.U32), f.Reg(ptx.U32)
		f.Fma(ka0, slot0, ptx.Int(ks), kb)
		f.Fma(ca0, slot0, ptx.Int(4), cb)
		for i := range keys {
			v := validOf(i)
			f.At(v).Op("ld.shared"+kmt.String(), keys[i], ptx.Mem(ka0, int64(32*i*ks)))
			f.At(v).Op("ld.shared.u32", cars[i], ptx.Mem(ca0, int64(32*i*4)))
		}
	}
	f.Add(ps, ps, ptx.Int(1))
	f.Bra(loop)
	f.Place(done)
	// Write out: slot i of the block is its i-th key in (row, key) order.
	wk := f.Setp(ptx.Ne, keyOut, ptx.Int(0))
	var pvin, pvout ptx.Reg
	if b.Val != ValNone {
		pvout = f.Reg(ptx.U64)
		f.CvtaTo(ptx.Global, pvout, f.LdParam(3))
		if b.Val == ValPayload {
			pvin = f.Reg(ptx.U64)
			f.CvtaTo(ptx.Global, pvin, f.LdParam(2))
		}
	}
	for i := range keys {
		pos := f.Reg(ptx.U64)
		f.Cvt(pos, slotOf(i))
		f.Add(pos, pos, start)
		a := f.Reg(ptx.U64)
		f.Fma(a, pos, ptx.Int(ks), pout)
		vi := validOf(i)
		w := f.Reg(ptx.Pred)
		f.Op("and.pred", w, vi, wk)
		f.At(w).Op("st.global"+kmt.String(), ptx.Mem(a, 0), keys[i])
		if b.Val == ValNone {
			continue
		}
		orig := f.Reg(ptx.U32)
		f.And(orig, cars[i], ptx.Int(0xffff))
		if b.Val == ValIndex {
			r := f.Reg(ptx.U32)
			f.Shr(r, cars[i], ptx.Int(16))
			idx := f.Reg(ptx.U32)
			f.Mul(idx, r, rl)
			f.Sub(idx, orig, idx)
			i64 := f.Reg(ptx.U64)
			f.Cvt(i64, idx)
			va := f.Reg(ptx.U64)
			f.Fma(va, pos, ptx.Int(8), pvout)
			f.At(vi).Op("st.global.u64", ptx.Mem(va, 0), i64)
			continue
		}
		vs := b.ValSize
		src := f.Reg(ptx.U64)
		f.Cvt(src, orig)
		f.Add(src, src, start)
		f.Fma(src, src, ptx.Int(vs), pvin)
		v := loadElem(f, vs, vi, ptx.Mem(src, 0), true)
		va := f.Reg(ptx.U64)
		f.Fma(va, pos, ptx.Int(vs), pvout)
		f.At(vi).Op("st.global"+memType(vs).String(), ptx.Mem(va, 0), v)
	}
	f.Ret()
	return m.String(), entry, nil
}
