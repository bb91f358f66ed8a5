package kernel

import (
	"fmt"
	"math/bits"

	"github.com/go-gpu/gpu/ptx"
)

// The Variant 2 gather (flat Vector form): GatherItems2 consecutive elements per
// thread, one chunk per thread over a grid that covers n, as the device's floor under
// the random loads does (cmd/gpubench's raw/index/take/float32/random/floor row: eight
// independent loads per thread, 2048 threads a multiprocessor). A warp whose chunks
// are all in range (every warp but the one holding n) takes the full path: its
// indices in 16-byte loads, the range check of Raise and Check (two signed 64-bit
// compares per element, no new values) and one vote, then every source load (none
// predicated; 32-bit position times stride without Index64), then 16-byte stores.
// A warp with an out-of-range index, and the warp holding n, take the partial path:
// one element after another in a loop (so that its registers don't raise the
// kernel's: 30 on sm_90 for 4-byte elements and int64 indices), every access
// predicated by the element's validity, each lane with an out-of-range index storing
// it into the error word itself (no vote: the lanes may diverge there) and reading
// the nearest end instead, as IndexMode.NormIndex says.

// ptx2 returns the Variant 2 gather's PTX (validated by PTX).
func (g *Gather) ptx2(major, minor int) (src, entry string, err error) {
	const items = GatherItems2
	m := ptx.NewModule(major, minor)
	entry = "gather"
	params := append([]ptx.Param{ptx.P("out", ptx.U64), ptx.P("src", ptx.U64), ptx.P("idx", ptx.U64),
		ptx.P("err", ptx.U64), ptx.P("n", ptx.U64)}, gatherPTXParams(0, 2)...)
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", GatherBlock))
	pout, psrc, pidx, perr := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pout, f.LdParam(0))
	f.CvtaTo(ptx.Global, psrc, f.LdParam(1))
	f.CvtaTo(ptx.Global, pidx, f.LdParam(2))
	f.CvtaTo(ptx.Global, perr, f.LdParam(3))
	n := f.LdParam(4)
	ig := newIdxGen(f, g.Mode, g.Index, 0, g.Index64, perr, 5, 2)
	addr := posAddr(f, ig, g.Index64, g.Size, psrc) // the source element at a position
	rt, mem := bitsType(g.Size)
	stream := g.Stream && major >= 7
	srcLoad := "ld.global.nc"
	if stream {
		srcLoad += ".L1::no_allocate"
	}
	st := "st.global"
	if stream {
		st += ".cs"
	}
	// One chunk per thread: Geometry's grid covers n.
	e := f.Reg(ptx.U64)
	f.MulWide(e, f.Special(ptx.CtaidX), ptx.Int(GatherBlock))
	tid := f.Reg(ptx.U64)
	f.Cvt(tid, f.Special(ptx.TidX))
	f.Add(e, e, tid)
	f.Mul(e, e, ptx.Int(items))
	exit := f.NewLabel()
	f.At(f.Setp(ptx.Ge, e, n)).Bra(exit)
	// back is the distance from the warp's last element to the thread's first.
	back := f.Reg(ptx.U64)
	f.MulWide(back, ig.lane, ptx.Int(items))
	f.Sub(back, back, ptx.Int(32*items-1))
	oa := f.Reg(ptx.U64) // the output address of element e
	f.Op("mad.lo.u64", oa, e, ptx.Int(g.Size), pout)
	last := f.Reg(ptx.U64)
	f.Sub(last, e, back)
	partial, next := f.NewLabel(), f.NewLabel()
	f.AtNot(f.Setp(ptx.Lt, last, n)).Bra(partial)

	// Full path: every lane of the warp has items elements in range.
	raws := ig.loadIndexVectorN(pidx, e, items)
	ks, _ := flatNorm(ig, g.Index64, raws, nil, partial, false)
	vals := make([]ptx.Reg, items)
	for j, k := range ks {
		a := addr(k)
		vals[j] = f.Reg(rt)
		f.Op(srcLoad+mem, vals[j], ptx.Mem(a, 0))
	}
	storeVectors(f, oa, g.Size, vals, st)
	f.Bra(next)

	// Partial path (the warp holding n, or one with an out-of-range index in Raise
	// or Check mode): one element after another, in a loop (its registers don't
	// raise the kernel's count).
	f.Place(partial)
	j := f.Reg(ptx.U64)
	f.Mov(j, ptx.Int(0))
	elem := f.NewLabel()
	f.Place(elem)
	ej := f.Reg(ptx.U64)
	f.Add(ej, e, j)
	valid := f.Setp(ptx.Lt, ej, n)
	raw := ig.loadIndex(pidx, ej.As(ptx.S64), valid)
	kk, _ := flatNorm(ig, g.Index64, []ptx.Reg{raw}, []ptx.Reg{valid}, ptx.Label{}, false)
	k := kk[0]
	sa := addr(k)
	v := f.Reg(rt)
	f.At(valid).Op(srcLoad+mem, v, ptx.Mem(sa, 0))
	da := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", da, j, ptx.Int(g.Size), oa)
	f.At(valid).Op(st+mem, ptx.Mem(da, 0), v)
	f.Add(j, j, ptx.Int(1))
	f.At(f.Setp(ptx.Lt, j, ptx.Int(items))).Bra(elem)
	f.Place(next)
	f.Place(exit)
	f.Ret()
	return m.String(), entry, nil
}

// flatNorm returns the positions of raws by ig's mode (s32 in Raise and Check without
// Index64, else s64), for the Variant 2 gather and scatter. In Raise and Check mode:
// with valid nil (the full path: every lane of the warp executes it, every element
// valid), a warp with an out-of-range index among its raws branches to slow (the
// partial path, which records it) after a vote, so that the check costs two compares
// per element and only the raw indices live across it; with valid (the partial path,
// lanes possibly diverged, elements that are not valid having raw index 0, in range),
// each lane stores its own out-of-range raw index into the error word, and bads says
// which (a scatter skips those updates; without skip, the position is the nearest end,
// which a gather reads).
func flatNorm(ig *idxGen, index64 bool, raws, valid []ptx.Reg, slow ptx.Label, skip bool) (ks, bads []ptx.Reg) {
	f := ig.f
	ks = make([]ptx.Reg, len(raws))
	if !ig.mode.Records() {
		for j, raw := range raws {
			ks[j] = ig.norm(raw, ptx.Reg{})
		}
		return ks, nil
	}
	// The range check, in signed compares that make no new values: Check, raw < 0
	// or raw >= l; Raise, raw < -l or raw >= l.
	lo := ptx.Operand(ptx.Int(0))
	if ig.mode == IndexRaise {
		negL := f.Reg(ptx.S64)
		f.Neg(negL, ig.l.As(ptx.S64))
		lo = negL
	}
	bads = make([]ptx.Reg, len(raws))
	for j, raw := range raws {
		bads[j] = f.Setp(ptx.Ge, raw, ig.l.As(ptx.S64))
		f.Op("or.pred", bads[j], bads[j], f.Setp(ptx.Lt, raw, lo))
	}
	if valid != nil {
		for j, raw := range raws {
			f.At(bads[j]).Op("st.volatile.global.u64", ptx.Mem(ig.perr, 0), raw) // lanes race: a strong store
			if skip {
				continue
			}
			// The nearest end's position: 0 or l-1 (positions of themselves).
			low := f.Setp(ptx.Lt, raw, ptx.Int(0))
			c := f.Reg(ptx.S64)
			f.Selp(c, ptx.Int(0), ig.lm1, low)
			f.Selp(raw, c, raw, bads[j])
		}
	} else {
		anyBad := f.Reg(ptx.Pred)
		f.Mov(anyBad, bads[0])
		for _, b := range bads[1:] {
			f.Op("or.pred", anyBad, anyBad, b)
		}
		f.Vote("any", anyBad, anyBad, ptx.Uint(0xffffffff))
		f.At(anyBad).Bra(slow)
	}
	// Every raw index is now in range (or, with skip, its update predicated off):
	// in [-l, l) for Raise, [0, l) for Check.
	for j, raw := range raws {
		neg := ptx.Reg{}
		if ig.mode == IndexRaise {
			neg = f.Setp(ptx.Lt, raw, ptx.Int(0))
		}
		if index64 {
			k := f.Reg(ptx.S64)
			f.Mov(k, raw)
			if ig.mode == IndexRaise {
				f.At(neg).Op("add.s64", k, k, ig.l.As(ptx.S64))
			}
			ks[j] = k
			continue
		}
		// l < 2^31 without Index64: the position is the low word's.
		k := f.Reg(ptx.S32)
		f.Cvt(k, raw)
		if ig.mode == IndexRaise {
			l32 := f.Reg(ptx.S32)
			f.Cvt(l32, ig.l)
			f.At(neg).Op("add.s32", k, k, l32)
		}
		ks[j] = k
	}
	return ks, bads
}

// posAddr returns, for the Variant 2 kernels, a function from a position k along the
// indexed axis (s32 or s64) to the address (s64) of the element there in the array at
// base (elements of size bytes, ig.ast apart). Without index64, (l-1)*ast < 2^31, so a
// position times the stride is a 32-bit product (ast is truncated only where l is 1
// and every position 0): posAddr converts ast to 32 bits here, once.
func posAddr(f *ptx.Func, ig *idxGen, index64 bool, size int, base ptx.Reg) func(k ptx.Reg) ptx.Reg {
	var ast32 ptx.Reg
	if !index64 {
		ast32 = f.Reg(ptx.S32)
		f.Cvt(ast32, ig.ast)
	}
	shift := bits.TrailingZeros(uint(size))
	return func(k ptx.Reg) ptx.Reg {
		off := f.Reg(ptx.S64)
		if !index64 {
			if k.Type() != ptx.S32 {
				k32 := f.Reg(ptx.S32)
				f.Cvt(k32, k)
				k = k32
			}
			f.MulWide(off, k, ast32)
		} else {
			f.Mul(off, k, ig.ast)
		}
		if shift > 0 {
			f.Shl(off, off, ptx.Int(shift))
		}
		a := f.Reg(ptx.S64)
		f.Add(a, off, base.As(ptx.S64))
		return a
	}
}
