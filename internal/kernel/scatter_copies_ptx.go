package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// The scatters' fast paths (Scatter.Copies and Scatter.Detect): copies of the shared
// bins, so that the lanes of a warp don't contend for a bin and need no aggregation,
// and the vote that sends rounds with mostly distinct targets straight to the
// atomics.

// How a scatter round aggregates within a warp before its atomics.
const (
	aggNone   = iota // every live lane combines on its own
	aggDetect        // match and shuffle only in rounds where the vote finds neighbours with one target
	aggAlways        // match and shuffle in every round
)

// aggregation returns how the scatter aggregates within a warp.
func (s *Scatter) aggregation() int {
	switch {
	case s.NoWarp || s.Op == ScatterStore || s.Copies >= 32:
		return aggNone
	case s.Detect || s.Copies > 0:
		return aggDetect
	}
	return aggAlways
}

// slotLoop runs body for each slot (u32) of count the thread owns (tid, tid +
// GatherBlock, ...) with its shared address a (u32) in the array sym of elements of
// size bytes.
func (g *scatterGen) slotLoop(tid ptx.Reg, sym string, count, size int, body func(slot, a ptx.Reg)) {
	f := g.f
	b := f.Reg(ptx.U32)
	f.Mov(b, tid)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, b, ptx.Int(count))).Bra(done)
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym(sym))
	f.Op("mad.lo.u32", a, b, ptx.Int(size), a)
	body(b, a)
	f.Add(b, b, ptx.Int(GatherBlock))
	f.Bra(loop)
	f.Place(done)
}

// copyCombine combines v (accumulator type) into the thread's copy of bin off (s64)
// when live: slot off*Copies + tid%Copies, without atomics when the thread owns it.
func (g *scatterGen) copyCombine(tid, off, v, live ptx.Reg) {
	f := g.f
	c := g.s.Copies
	acc := g.acc.Bits() / 8
	slot := f.Reg(ptx.U32)
	f.Cvt(slot, off)
	f.Shl(slot, slot, ptx.Int(log2(c)))
	if c > 1 {
		r := f.Reg(ptx.U32)
		f.And(r, tid, ptx.Int(c-1))
		f.Or(slot, slot, r)
	}
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym("sc_bins"))
	f.Op("mad.lo.u32", a, slot, ptx.Int(acc), a)
	if c < GatherBlock {
		skip := f.NewLabel()
		f.AtNot(live).Bra(skip)
		g.atomicAcc(ptx.Shared, ptx.Mem(a, 0), v)
		f.Place(skip)
		return
	}
	bits := f.Reg(ptx.B32)
	if acc == 8 {
		bits = f.Reg(ptx.B64)
	}
	f.Mov(bits.As(bits.Type().Unsigned()), ptx.Int(0))
	f.At(live).Op("ld.shared"+bits.Type().String(), bits, ptx.Mem(a, 0))
	nv := accBits(f, g.combine(g.s.Dst, fromBits(f, g.acc, bits), v))
	f.At(live).Op("st.shared"+bits.Type().String(), ptx.Mem(a, 0), nv)
}

// shflAccBfly returns the accumulator value v of lane lane^mask (shflBfly of its bits).
func shflAccBfly(f *ptx.Func, v ptx.Reg, mask int) ptx.Reg {
	return fromBits(f, v.Type(), shflBfly(f, accBits(f, v), mask))
}

// initCopies fills the copies with the identity.
func (g *scatterGen) initCopies(tid ptx.Reg, identity uint64) {
	f := g.f
	acc := g.acc.Bits() / 8
	g.slotLoop(tid, "sc_bins", g.s.Bins*g.s.Copies, acc, func(_, a ptx.Reg) {
		f.Op(fmt.Sprintf("st.shared.u%d", 8*acc), ptx.Mem(a, 0), ptx.Uint(identity))
	})
}

// flushCopies combines the copies of each bin (after a barrier) and the result into
// the destination: the warp holding a bin's copies (or 32 of them) combines them by a
// butterfly; with at most 32 copies its first lane combines the bin's total into the
// destination, with more it stores the partial over the first of the 32 copies, and
// after a second barrier a thread per bin combines the bin's partials in order (no
// shared atomics) into the destination.
func (g *scatterGen) flushCopies(tid ptx.Reg, identity uint64) {
	f := g.f
	s := g.s
	c := s.Copies
	acc := g.acc.Bits() / 8
	w := min(c, 32)
	total := s.Bins * c
	bound := (total + GatherBlock - 1) / GatherBlock * GatherBlock
	bitsReg := func() ptx.Reg {
		if acc == 8 {
			return f.Reg(ptx.B64)
		}
		return f.Reg(ptx.B32)
	}
	i := f.Reg(ptx.U32)
	f.Mov(i, tid)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	// A bound that is a multiple of the block: every lane runs the shuffles.
	f.At(f.Setp(ptx.Ge, i, ptx.Int(bound))).Bra(done)
	in := f.Setp(ptx.Lt, i, ptx.Int(total))
	a := f.Reg(ptx.U32)
	f.Op("mov.u32", a, ptx.Sym("sc_bins"))
	f.Op("mad.lo.u32", a, i, ptx.Int(acc), a)
	bits := bitsReg()
	f.Mov(bits.As(bits.Type().Unsigned()), ptx.Uint(identity))
	f.At(in).Op("ld.shared"+bits.Type().String(), bits, ptx.Mem(a, 0))
	v := fromBits(f, g.acc, bits)
	for m := w / 2; m >= 1; m /= 2 {
		v = g.combine(s.Dst, v, shflAccBfly(f, v, m))
	}
	head := f.Reg(ptx.Pred)
	lanePos := f.Reg(ptx.U32)
	f.And(lanePos, g.ig.lane, ptx.Int(w-1))
	f.Op("setp.eq.and.u32", head, lanePos, ptx.Int(0), in)
	if c <= 32 {
		bin := f.Reg(ptx.U32)
		f.Shr(bin, i, ptx.Int(log2(c)))
		vb := accBits(f, v)
		use := f.Reg(ptx.Pred)
		f.Op("setp.ne.and"+vb.Type().Unsigned().String(), use, vb.As(vb.Type().Unsigned()), ptx.Uint(identity), head)
		off := f.Reg(ptx.S64)
		f.Cvt(off, bin)
		g.globalCombine([]ptx.Reg{off}, []ptx.Reg{v}, []ptx.Reg{use})
	} else {
		f.At(head).Op("st.shared"+bits.Type().String(), ptx.Mem(a, 0), accBits(f, v))
	}
	f.Add(i, i, ptx.Int(GatherBlock))
	f.Bra(loop)
	f.Place(done)
	if c <= 32 {
		return
	}
	f.BarSync(0)
	g.slotLoop(tid, "sc_bins", s.Bins, acc*c, func(b, a ptx.Reg) {
		var v ptx.Reg
		for k := 0; k < c/32; k++ {
			tb := bitsReg()
			f.Op("ld.shared"+tb.Type().String(), tb, ptx.Mem(a, int64(32*k*acc)))
			if k == 0 {
				v = fromBits(f, g.acc, tb)
			} else {
				v = g.combine(s.Dst, v, fromBits(f, g.acc, tb))
			}
		}
		vb := accBits(f, v)
		use := f.Setp(ptx.Ne, vb.As(vb.Type().Unsigned()), ptx.Uint(identity))
		off := f.Reg(ptx.S64)
		f.Cvt(off, b)
		g.globalCombine([]ptx.Reg{off}, []ptx.Reg{v}, []ptx.Reg{use})
	})
}

// dupVote returns whether any lane of the warp has, in this round, a live target equal
// to the next lane's for the same item, or two consecutive items with one target (on
// the low 32 bits of the offsets: a false positive only costs the aggregation). Every
// lane of the warp must execute it.
func (g *scatterGen) dupVote(offs, live []ptx.Reg) ptx.Reg {
	f := g.f
	lane := g.ig.lane
	notLast := f.Setp(ptx.Ne, lane, ptx.Int(31))
	dup := f.Setp(ptx.Ne, lane, lane) // false
	var prev ptx.Reg
	for j, off := range offs {
		// A lane without an update keys with its lane and item, above 2^31: its own
		// key among those of the warp's dead lanes.
		k := f.Reg(ptx.U32)
		f.Cvt(k, off)
		dead := f.Reg(ptx.U32)
		f.Or(dead, lane, ptx.Uint(0x80000000|uint64(j)<<5))
		f.Selp(k, k, dead, live[j])
		next := f.Reg(ptx.U32)
		f.Shfl("down", next.As(ptx.B32), k.As(ptx.B32), ptx.Int(1), ptx.Int(31), ptx.Uint(0xffffffff))
		eq := f.Reg(ptx.Pred)
		f.Op("setp.eq.and.u32", eq, k, next, notLast)
		f.Op("or.pred", dup, dup, eq)
		if j > 0 {
			f.Op("setp.eq.or.u32", dup, k, prev, dup)
		}
		prev = k
	}
	any := f.Reg(ptx.Pred)
	f.Vote("any", any, dup, ptx.Uint(0xffffffff))
	return any
}
