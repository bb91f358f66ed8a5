package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the gathers and scatters. Each thread handles GatherItems consecutive elements
// of a tile of GatherBlock*GatherItems, in a grid-stride loop whose condition is the
// same for every thread of a block (so that warp votes see every lane); the elements
// past n are predicated off. An element's multi-index in the iteration shape is
// computed once per thread chunk (divisions, 32-bit without Index64) and stepped from
// element to element with carries.

// idxGen holds what the gather and scatter generators share.
type idxGen struct {
	f     *ptx.Func
	mode  IndexMode
	index dtype.DType
	rank  int
	i64   bool
	lane  ptx.Reg
	perr  ptx.Reg   // u64: the error word
	l     ptx.Reg   // u64: axis length
	lm1   ptx.Reg   // s64: l-1
	ast   ptx.Reg   // s64: axis stride
	shape []ptx.Reg // u64
	st    [][]ptx.Reg
	back  [][]ptx.Reg // s64: shape[d]*st[k][d], the step back on a carry
}

// newIdxGen loads the layout parameters starting at parameter first (n is first-1's
// caller's; here l, ast, shape, then ops stride sets).
func newIdxGen(f *ptx.Func, mode IndexMode, index dtype.DType, rank int, i64 bool, perr ptx.Reg, first, ops int) *idxGen {
	g := &idxGen{f: f, mode: mode, index: index, rank: rank, i64: i64, perr: perr}
	tid := f.Special(ptx.TidX)
	g.lane = f.Reg(ptx.U32)
	f.And(g.lane, tid, ptx.Int(31))
	g.l = f.LdParam(first)
	g.ast = f.LdParam(first + 1)
	g.lm1 = f.Reg(ptx.S64)
	f.Sub(g.lm1, g.l.As(ptx.S64), ptx.Int(1))
	p := first + 2
	for range rank {
		g.shape = append(g.shape, f.LdParam(p))
		p++
	}
	for range ops {
		var s []ptx.Reg
		for range rank {
			s = append(s, f.LdParam(p))
			p++
		}
		g.st = append(g.st, s)
	}
	for k := range ops {
		var b []ptx.Reg
		for d := range rank {
			r := f.Reg(ptx.S64)
			f.Mul(r, g.shape[d].As(ptx.S64), g.st[k][d])
			b = append(b, r)
		}
		g.back = append(g.back, b)
	}
	return g
}

// digits returns the multi-index of linear element e (u64) and the offsets (s64) of
// each operand for it.
func (g *idxGen) digits(e ptx.Reg) (dig, offs []ptx.Reg) {
	f := g.f
	dig = make([]ptx.Reg, g.rank)
	offs = make([]ptx.Reg, len(g.st))
	for k := range offs {
		offs[k] = f.Reg(ptx.S64)
		f.Mov(offs[k], ptx.Int(0))
	}
	rem := f.Reg(ptx.U64)
	f.Mov(rem, e)
	if !g.i64 {
		rem32 := f.Reg(ptx.U32)
		f.Cvt(rem32, rem)
		for d := g.rank - 1; d >= 0; d-- {
			s32 := f.Reg(ptx.U32)
			f.Cvt(s32, g.shape[d])
			q, r := f.Reg(ptx.U32), f.Reg(ptx.U32)
			if d > 0 {
				f.Div(q, rem32, s32)
				f.Op("mul.lo.u32", r, q, s32)
				f.Sub(r, rem32, r)
				f.Mov(rem32, q)
			} else {
				f.Mov(r, rem32)
			}
			dig[d] = f.Reg(ptx.U64)
			f.Cvt(dig[d], r)
		}
	} else {
		for d := g.rank - 1; d >= 0; d-- {
			q, r := f.Reg(ptx.U64), f.Reg(ptx.U64)
			if d > 0 {
				f.Div(q, rem, g.shape[d])
				f.Op("mul.lo.u64", r, q, g.shape[d])
				f.Sub(r, rem, r)
				f.Mov(rem, q)
			} else {
				f.Mov(r, rem)
			}
			dig[d] = r
		}
	}
	for d := range g.rank {
		for k := range offs {
			f.Op("mad.lo.s64", offs[k], dig[d].As(ptx.S64), g.st[k][d], offs[k])
		}
	}
	return dig, offs
}

// step advances the multi-index and offsets by one element.
func (g *idxGen) step(dig, offs []ptx.Reg) {
	f := g.f
	done := f.NewLabel()
	for d := g.rank - 1; d >= 0; d-- {
		f.Add(dig[d], dig[d], ptx.Int(1))
		for k := range offs {
			f.Add(offs[k], offs[k], g.st[k][d])
		}
		if d == 0 {
			break
		}
		f.At(f.Setp(ptx.Lt, dig[d], g.shape[d])).Bra(done)
		f.Mov(dig[d], ptx.Int(0))
		for k := range offs {
			f.Sub(offs[k], offs[k], g.back[k][d])
		}
	}
	f.Place(done)
}

// loadIndex loads the index at element offset io (s64) of pidx when valid (0
// otherwise), as an s64.
func (g *idxGen) loadIndex(pidx, io, valid ptx.Reg) ptx.Reg {
	f := g.f
	a := f.Reg(ptx.S64)
	f.Op("mad.lo.s64", a, io, ptx.Int(g.index.Size()), pidx.As(ptx.S64))
	raw := f.Reg(ptx.S64)
	f.Mov(raw, ptx.Int(0))
	if g.index == dtype.Int32 {
		r := f.Reg(ptx.S32)
		f.Mov(r, ptx.Int(0))
		f.At(valid).Op("ld.global.nc.s32", r, ptx.Mem(a, 0))
		f.Cvt(raw, r)
	} else {
		f.At(valid).Op("ld.global.nc.s64", raw, ptx.Mem(a, 0))
	}
	return raw
}

// loadIndexVector loads GatherItems consecutive indices at pidx + e*size (aligned to
// 16 bytes) as s64 values.
func (g *idxGen) loadIndexVector(pidx, e ptx.Reg) []ptx.Reg {
	return g.loadIndexVectorN(pidx, e, GatherItems)
}

// loadIndexVectorN loads items (a multiple of 4) consecutive indices at pidx + e*size
// (aligned to 16 bytes) as s64 values, in 16-byte vector loads, all issued before any
// conversion.
func (g *idxGen) loadIndexVectorN(pidx, e ptx.Reg, items int) []ptx.Reg {
	f := g.f
	a := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", a, e, ptx.Int(g.index.Size()), pidx)
	out := make([]ptx.Reg, items)
	if g.index == dtype.Int32 {
		var rs []ptx.Reg
		for j := 0; j < items; j += 4 {
			v := f.Regs(ptx.S32, 4)
			f.Op("ld.global.nc.v4.s32", ptx.Vec(v), ptx.Mem(a, int64(4*j)))
			rs = append(rs, v...)
		}
		for j := range out {
			out[j] = f.Reg(ptx.S64)
			f.Cvt(out[j], rs[j])
		}
		return out
	}
	for j := 0; j < items; j += 2 {
		rs := f.Regs(ptx.S64, 2)
		f.Op("ld.global.nc.v2.s64", ptx.Vec(rs), ptx.Mem(a, int64(8*j)))
		out[j], out[j+1] = rs[0], rs[1]
	}
	return out
}

// norm returns the position (s64) for the raw index of a valid element by the mode,
// recording an out-of-range one (Raise, Check) through a warp vote: one lane per warp
// stores its raw index into the error word; the position of such an index is the
// nearest end of the axis (what a gather reads: IndexMode.NormIndex). Every lane of
// the warp must execute it.
func (g *idxGen) norm(raw, valid ptx.Reg) ptx.Reg {
	k, _ := g.normBad(raw, valid)
	return k
}

// normBad is norm that also returns, in the modes that record (Raise, Check), the
// predicate of a valid element whose index was out of range (the zero Reg in the
// others, where every index has a position): a scatter skips that element's update.
func (g *idxGen) normBad(raw, valid ptx.Reg) (k, bad ptx.Reg) {
	f := g.f
	k = f.Reg(ptx.S64)
	f.Mov(k, raw)
	switch g.mode {
	case IndexClip:
		f.Max(k, k, ptx.Int(0))
		f.Min(k, k, g.lm1)
		return k, ptx.Reg{}
	case IndexWrap:
		skip := f.NewLabel()
		f.AtNot(f.Setp(ptx.Ge, k.As(ptx.U64), g.l)).Bra(skip)
		f.Rem(k, k, g.l.As(ptx.S64))
		neg := f.Setp(ptx.Lt, k, ptx.Int(0))
		f.At(neg).Op("add.s64", k, k, g.l.As(ptx.S64))
		f.Place(skip)
		return k, ptx.Reg{}
	case IndexRaise:
		neg := f.Setp(ptx.Lt, k, ptx.Int(0))
		f.At(neg).Op("add.s64", k, k, g.l.As(ptx.S64))
	}
	bad = f.Setp(ptx.Ge, k.As(ptx.U64), g.l)
	f.Op("and.pred", bad, bad, valid)
	m := f.Reg(ptx.B32)
	f.Vote("ballot", m, bad, ptx.Uint(0xffffffff))
	first := lowestSetBit(f, m)
	f.At(f.Setp(ptx.Eq, g.lane, first)).Op("st.volatile.global.u64", ptx.Mem(g.perr, 0), raw) // warps race: a strong store (volatile: any target)
	low := f.Setp(ptx.Lt, k, ptx.Int(0))
	clamped := f.Reg(ptx.S64)
	f.Selp(clamped, ptx.Int(0), g.lm1, low)
	f.Selp(k, clamped, k, bad)
	return k, bad
}

// bitsType returns the register and memory type moving size bytes as bits.
func bitsType(size int) (reg ptx.Type, mem string) {
	switch size {
	case 1:
		return ptx.U16, ".u8"
	case 2:
		return ptx.U16, ".u16"
	case 4:
		return ptx.U32, ".u32"
	}
	return ptx.U64, ".u64"
}

// storeChunk stores len(vals) values (bits of size bytes; a multiple of 4 values) at
// pout + e*size: vector accesses of up to 4 elements and 16 bytes when full (one for
// GatherItems values, two for 8-byte elements), else one per valid element.
// With cs, the stores are st.global.cs (evict first).
func storeChunk(f *ptx.Func, pout, e ptx.Reg, size int, vals, valid []ptx.Reg, full ptx.Reg, cs bool) {
	a := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", a, e, ptx.Int(size), pout)
	_, mem := bitsType(size)
	st := "st.global"
	if cs {
		st += ".cs"
	}
	partial, done := f.NewLabel(), f.NewLabel()
	f.AtNot(full).Bra(partial)
	storeVectors(f, a, size, vals, st)
	f.Bra(done)
	f.Place(partial)
	for j, v := range vals {
		f.At(valid[j]).Op(st+mem, ptx.Mem(a, int64(j*size)), v)
	}
	f.Place(done)
}

// storeVectors stores vals (bits of size bytes; a multiple of 4 values) at a (aligned
// to 16 bytes or to 4*size) with the store op st ("st.global", "st.global.cs"): vector
// accesses of up to 4 elements and 16 bytes.
func storeVectors(f *ptx.Func, a ptx.Reg, size int, vals []ptx.Reg, st string) {
	_, mem := bitsType(size)
	w := min(4, 16/size)
	for j := 0; j < len(vals); j += w {
		f.Op(fmt.Sprintf("%s.v%d%s", st, w, mem), ptx.Mem(a, int64(j*size)), ptx.Vec(vals[j:j+w]))
	}
}

// chunkLoop emits the grid-stride loop over thread chunks: body gets the chunk's first
// element (u64), whether all GatherItems elements are in range (full) and each one's
// validity. The code after it runs once the loop is done.
func chunkLoop(f *ptx.Func, n ptx.Reg, body func(e, full ptx.Reg, valid []ptx.Reg)) {
	chunkLoopN(f, n, GatherItems, body)
}

// chunkLoopN is chunkLoop over chunks of items elements per thread.
func chunkLoopN(f *ptx.Func, n ptx.Reg, items int, body func(e, full ptx.Reg, valid []ptx.Reg)) {
	T := GatherBlock * items
	tid := f.Special(ptx.TidX)
	tile := f.Reg(ptx.U64)
	f.MulWide(tile, f.Special(ptx.CtaidX), ptx.Int(T))
	stride := f.Reg(ptx.U64)
	f.MulWide(stride, f.Special(ptx.NctaidX), ptx.Int(T))
	off := f.Reg(ptx.U64)
	f.MulWide(off, tid, ptx.Int(items))
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, tile, n)).Bra(done)
	e := f.Reg(ptx.U64)
	f.Add(e, tile, off)
	valid := make([]ptx.Reg, items)
	for j := range valid {
		ej := f.Reg(ptx.U64)
		f.Add(ej, e, ptx.Int(j))
		valid[j] = f.Setp(ptx.Lt, ej, n)
	}
	full := valid[items-1]
	body(e, full, valid)
	f.Add(tile, tile, stride)
	f.Bra(loop)
	f.Place(done)
}

// gatherPTXParams returns a gather's or scatter's layout parameters from l on.
func gatherPTXParams(rank, ops int) []ptx.Param {
	ps := []ptx.Param{ptx.P("l", ptx.U64), ptx.P("ast", ptx.S64)}
	for d := range rank {
		ps = append(ps, ptx.P(fmt.Sprintf("shape%d", d), ptx.U64))
	}
	for k := range ops {
		for d := range rank {
			ps = append(ps, ptx.P(fmt.Sprintf("st%d_%d", k, d), ptx.S64))
		}
	}
	return ps
}

// PTX returns the gather's PTX.
func (g *Gather) PTX(major, minor int) (src, entry string, err error) {
	if err := g.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	if g.Variant == 2 {
		return g.ptx2(major, minor)
	}
	m := ptx.NewModule(major, minor)
	entry = "gather"
	params := append([]ptx.Param{ptx.P("out", ptx.U64), ptx.P("src", ptx.U64), ptx.P("idx", ptx.U64),
		ptx.P("err", ptx.U64), ptx.P("n", ptx.U64)}, gatherPTXParams(g.Rank, 2)...)
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", GatherBlock))
	pout, psrc, pidx, perr := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pout, f.LdParam(0))
	f.CvtaTo(ptx.Global, psrc, f.LdParam(1))
	f.CvtaTo(ptx.Global, pidx, f.LdParam(2))
	f.CvtaTo(ptx.Global, perr, f.LdParam(3))
	n := f.LdParam(4)
	ig := newIdxGen(f, g.Mode, g.Index, g.Rank, g.Index64, perr, 5, 2)
	rt, mem := bitsType(g.Size)
	stream := g.Stream && major >= 7
	srcLoad := "ld.global.nc"
	if stream {
		srcLoad += ".L1::no_allocate"
	}
	chunkLoop(f, n, func(e, full ptx.Reg, valid []ptx.Reg) {
		raws := make([]ptx.Reg, GatherItems)
		if g.Rank == 0 {
			if g.Vector {
				for j := range raws {
					raws[j] = f.Reg(ptx.S64)
				}
				partial, loaded := f.NewLabel(), f.NewLabel()
				f.AtNot(full).Bra(partial)
				for j, r := range ig.loadIndexVector(pidx, e) {
					f.Mov(raws[j], r)
				}
				f.Bra(loaded)
				f.Place(partial)
				for j := range raws {
					ej := f.Reg(ptx.S64)
					f.Add(ej, e.As(ptx.S64), ptx.Int(j))
					f.Mov(raws[j], ig.loadIndex(pidx, ej, valid[j]))
				}
				f.Place(loaded)
			} else {
				for j := range raws {
					ej := f.Reg(ptx.S64)
					f.Add(ej, e.As(ptx.S64), ptx.Int(j))
					raws[j] = ig.loadIndex(pidx, ej, valid[j])
				}
			}
		}
		sos := make([]ptx.Reg, GatherItems)
		if g.Rank > 0 {
			// Every element's offsets first, then every index load, so that the loads
			// are all in flight together.
			dig, offs := ig.digits(e)
			ios := make([]ptx.Reg, GatherItems)
			for j := range sos {
				sos[j], ios[j] = f.Reg(ptx.S64), f.Reg(ptx.S64)
				f.Mov(sos[j], offs[0])
				f.Mov(ios[j], offs[1])
				if j < GatherItems-1 {
					ig.step(dig, offs)
				}
			}
			for j := range raws {
				raws[j] = ig.loadIndex(pidx, ios[j], valid[j])
			}
		}
		vals := make([]ptx.Reg, GatherItems)
		for j := range vals {
			k := ig.norm(raws[j], valid[j])
			a := f.Reg(ptx.S64)
			f.Mul(a, k, ig.ast)
			if g.Rank > 0 {
				f.Add(a, a, sos[j])
			}
			f.Op("mad.lo.s64", a, a, ptx.Int(g.Size), psrc.As(ptx.S64))
			vals[j] = f.Reg(rt)
			f.Mov(vals[j], ptx.Int(0))
			f.At(valid[j]).Op(srcLoad+mem, vals[j], ptx.Mem(a, 0))
		}
		storeChunk(f, pout, e, g.Size, vals, valid, full, stream)
	})
	f.Ret()
	return m.String(), entry, nil
}
