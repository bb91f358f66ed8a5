package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// The Variant 2 store scatter (Put's flat Vector form): the Variant 2 gather's design
// (gather2_ptx.go) turned around. GatherItems2 consecutive updates per thread, one
// chunk per thread over a grid that covers n; a warp whose chunks are all in range
// loads its indices and its values in 16-byte loads, checks the indices (Raise and
// Check: two compares per element and one vote), then stores every value at its
// random position, in element order. A warp with an out-of-range index, and the warp
// holding n, go one update after another, each lane recording its own out-of-range
// index and skipping that update, as the first kernel does.

// ptx2 returns the Variant 2 store scatter's PTX (validated by PTX).
func (s *Scatter) ptx2(major, minor int) (src, entry string, err error) {
	const items = GatherItems2
	m := ptx.NewModule(major, minor)
	entry = "scatter"
	params := append([]ptx.Param{ptx.P("dst", ptx.U64), ptx.P("vals", ptx.U64), ptx.P("idx", ptx.U64),
		ptx.P("err", ptx.U64), ptx.P("n", ptx.U64)}, gatherPTXParams(0, 3)...)
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", GatherBlock))
	pdst, pvals, pidx, perr := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pdst, f.LdParam(0))
	f.CvtaTo(ptx.Global, pvals, f.LdParam(1))
	f.CvtaTo(ptx.Global, pidx, f.LdParam(2))
	f.CvtaTo(ptx.Global, perr, f.LdParam(3))
	n := f.LdParam(4)
	ig := newIdxGen(f, s.Mode, s.Index, 0, s.Index64, perr, 5, 3)
	size := s.Dst.Size()
	addr := posAddr(f, ig, s.Index64, size, pdst) // the destination element at a position
	rt, mem := bitsType(size)
	// One chunk per thread: Geometry's grid covers n.
	e := f.Reg(ptx.U64)
	f.MulWide(e, f.Special(ptx.CtaidX), ptx.Int(GatherBlock))
	tid := f.Reg(ptx.U64)
	f.Cvt(tid, f.Special(ptx.TidX))
	f.Add(e, e, tid)
	f.Mul(e, e, ptx.Int(items))
	exit := f.NewLabel()
	f.At(f.Setp(ptx.Ge, e, n)).Bra(exit)
	back := f.Reg(ptx.U64) // the distance from the warp's last element to the thread's first
	f.MulWide(back, ig.lane, ptx.Int(items))
	f.Sub(back, back, ptx.Int(32*items-1))
	va := f.Reg(ptx.U64) // the address of value e
	f.Op("mad.lo.u64", va, e, ptx.Int(size), pvals)
	last := f.Reg(ptx.U64)
	f.Sub(last, e, back)
	partial := f.NewLabel()
	f.AtNot(f.Setp(ptx.Lt, last, n)).Bra(partial)

	// Full path: every lane of the warp has items updates in range.
	raws := ig.loadIndexVectorN(pidx, e, items)
	vals := loadVectors(f, va, size, items)
	ks, _ := flatNorm(ig, s.Index64, raws, nil, partial, true)
	for j, k := range ks {
		f.Op("st.global"+mem, ptx.Mem(addr(k), 0), vals[j])
	}
	f.Bra(exit)

	// Partial path (the warp holding n, or one with an out-of-range index in Raise
	// or Check mode): one update after another.
	f.Place(partial)
	j := f.Reg(ptx.U64)
	f.Mov(j, ptx.Int(0))
	elem := f.NewLabel()
	f.Place(elem)
	ej := f.Reg(ptx.U64)
	f.Add(ej, e, j)
	valid := f.Setp(ptx.Lt, ej, n)
	raw := ig.loadIndex(pidx, ej.As(ptx.S64), valid)
	kk, bads := flatNorm(ig, s.Index64, []ptx.Reg{raw}, []ptx.Reg{valid}, ptx.Label{}, true)
	live := valid
	if bads != nil {
		live = f.Reg(ptx.Pred)
		f.Op("and.pred", live, valid, notp(f, bads[0]))
	}
	a := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", a, j, ptx.Int(size), va)
	v := f.Reg(rt)
	f.At(live).Op("ld.global.nc"+mem, v, ptx.Mem(a, 0))
	f.At(live).Op("st.global"+mem, ptx.Mem(addr(kk[0]), 0), v)
	f.Add(j, j, ptx.Int(1))
	f.At(f.Setp(ptx.Lt, j, ptx.Int(items))).Bra(elem)
	f.Place(exit)
	f.Ret()
	return m.String(), entry, nil
}

// loadVectors loads items values (bits of size bytes; a multiple of 4) at a (aligned
// to 16 bytes or to 4*size) in vector loads of up to 4 elements and 16 bytes:
// storeVectors' loads.
func loadVectors(f *ptx.Func, a ptx.Reg, size, items int) []ptx.Reg {
	rt, mem := bitsType(size)
	w := min(4, 16/size)
	var out []ptx.Reg
	for j := 0; j < items; j += w {
		rs := f.Regs(rt, w)
		f.Op(fmt.Sprintf("ld.global.nc.v%d%s", w, mem), ptx.Vec(rs), ptx.Mem(a, int64(j*size)))
		out = append(out, rs...)
	}
	return out
}
