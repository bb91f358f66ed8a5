package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/ptx"
)

// The second ConcatRows kernel (Tiles): a block moves one tile, Rows consecutive rows
// by Chunk() vectors of one input, and a grid of one tile per block schedules its
// blocks in the destination's address order (x: the row's chunks across the inputs,
// y: the tiles of rows), so that the blocks resident at any moment read and write one
// contiguous window of each array, as a plain copy does, rather than the first
// kernel's rows r and r + gridDim.y far apart. The tiled permute kernels, the generated
// kernels nearest to the copy bandwidth on the H200 (permutedims of 2^28 float32 at
// 95.9-97.7% of it, 2026-12-02), are built the same way: one tile per block, every load
// of a thread issued before its first store, the hardware's block scheduler balancing
// the load.
//
// Per thread and row: Items 16-byte (Vec-byte) loads at tid*Vec + j*ConcatBlock*Vec
// bytes into the tile, then the stores. The row offsets are 32-bit (cols_k < 2^31,
// which the host checks), the byte offset one wide multiply; the loop over the tiles of
// rows (gridDim.y smaller than the tiles) steps 64-bit row addresses. A tile wholly
// inside its input's row and the rows takes the path without predicates; the last
// chunk of a row that isn't a whole number of chunks and the last tile of rows take the
// predicated one.

// ptxTiles returns the Tiles kernel's PTX.
func (c *ConcatRows) ptxTiles(major, minor int) (src, entry string, err error) {
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "concat_tiles"
	params := []ptx.Param{ptx.P("dst", ptx.U64), ptx.P("rows", ptx.U64), ptx.P("ldd", ptx.U64)}
	for k := range c.Inputs {
		for _, name := range []string{"src", "cols", "lds", "doff", "first"} {
			params = append(params, ptx.P(fmt.Sprintf("%s%d", name, k), ptx.U64))
		}
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", ConcatBlock))
	V, items, chunk := c.Vec, c.items(), c.Chunk()
	nrows := max(1, c.Rows)
	pdst := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pdst, f.LdParam(0))
	rows, ldd := f.LdParam(1), f.LdParam(2)
	bx := f.Special(ptx.CtaidX)
	bx64 := f.Reg(ptx.U64)
	f.Cvt(bx64, bx)
	// The block's input: the last whose first chunk is at most this one.
	psrc, cols, lds, doff, first := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	for k := range c.Inputs {
		p := 3 + 5*k
		vals := []ptx.Reg{f.LdParam(p), f.LdParam(p + 1), f.LdParam(p + 2), f.LdParam(p + 3), f.LdParam(p + 4)}
		dsts := []ptx.Reg{psrc, cols, lds, doff, first}
		if k == 0 {
			for i, d := range dsts {
				f.Mov(d, vals[i])
			}
			continue
		}
		take := f.Setp(ptx.Ge, bx64, vals[4])
		for i, d := range dsts {
			f.Selp(d, vals[i], d, take)
		}
	}
	f.CvtaTo(ptx.Global, psrc, psrc)
	// The chunk within the input's row, its first vector, and whether it is whole.
	ch, first32, cols32 := f.Reg(ptx.U32), f.Reg(ptx.U32), f.Reg(ptx.U32)
	f.Cvt(first32, first)
	f.Cvt(cols32, cols)
	f.Sub(ch, bx, first32)
	c0 := f.Reg(ptx.U32)
	f.Mul(c0, ch, ptx.Int(chunk))
	end := f.Reg(ptx.U32)
	f.Add(end, c0, ptx.Int(chunk))
	whole := f.Setp(ptx.Le, end, cols32)
	col := f.Reg(ptx.U32)
	f.Add(col, c0, f.Special(ptx.TidX))
	off := f.Reg(ptx.U64)
	f.MulWide(off, col, ptx.Int(V))
	ldsB, lddB, doffB := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Mul(ldsB, lds, ptx.Int(V))
	f.Mul(lddB, ldd, ptx.Int(V))
	f.Mul(doffB, doff, ptx.Int(V))
	// The first row of the block's tile and the step between its tiles of rows.
	r, step := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Cvt(r, f.Special(ptx.CtaidY))
	f.Cvt(step, f.Special(ptx.NctaidY))
	if nrows > 1 {
		f.Mul(r, r, ptx.Int(nrows))
		f.Mul(step, step, ptx.Int(nrows))
	}
	sa, da := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Op("mad.lo.u64", sa, r, ldsB, psrc)
	f.Add(sa, sa, off)
	f.Op("mad.lo.u64", da, r, lddB, pdst)
	f.Add(da, da, doffB)
	f.Add(da, da, off)
	sstep, dstep := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Mul(sstep, step, ldsB)
	f.Mul(dstep, step, lddB)

	rt, nregs, suffix := vecAccess(V)
	ldOp, stOp := "ld.global.nc"+suffix, "st.global"+suffix
	if c.Stream {
		ldOp, stOp = "ld.global.cs.nc"+suffix, "st.global.cs"+suffix
	}
	regs := make([][][]ptx.Reg, nrows)
	for i := range regs {
		regs[i] = make([][]ptx.Reg, items)
		for j := range regs[i] {
			regs[i][j] = f.Regs(rt, nregs)
		}
	}
	vec := func(rs []ptx.Reg) ptx.Operand {
		if len(rs) == 1 {
			return rs[0]
		}
		return ptx.Vec(rs)
	}
	// body moves the tile's rows, guarded by ok[i][j] (nil: unguarded).
	body := func(sas, das []ptx.Reg, ok [][]ptx.Reg) {
		for i := range nrows {
			for j := range items {
				a := ptx.Mem(sas[i], int64(j*ConcatBlock*V))
				if ok == nil {
					f.Op(ldOp, vec(regs[i][j]), a)
				} else {
					f.At(ok[i][j]).Op(ldOp, vec(regs[i][j]), a)
				}
			}
		}
		for i := range nrows {
			for j := range items {
				a := ptx.Mem(das[i], int64(j*ConcatBlock*V))
				if ok == nil {
					f.Op(stOp, a, vec(regs[i][j]))
				} else {
					f.At(ok[i][j]).Op(stOp, a, vec(regs[i][j]))
				}
			}
		}
	}
	loop, part, next, done := f.NewLabel(), f.NewLabel(), f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, r, rows)).Bra(done)
	// The addresses of the tile's other rows, and whether they exist.
	sas, das := []ptx.Reg{sa}, []ptx.Reg{da}
	inRows := []ptx.Reg{}
	for i := 1; i < nrows; i++ {
		si, di := f.Reg(ptx.U64), f.Reg(ptx.U64)
		f.Add(si, sas[i-1], ldsB)
		f.Add(di, das[i-1], lddB)
		sas, das = append(sas, si), append(das, di)
		ri := f.Reg(ptx.U64)
		f.Add(ri, r, ptx.Int(i))
		inRows = append(inRows, f.Setp(ptx.Lt, ri, rows))
	}
	fast := whole
	if nrows > 1 {
		fast = f.Reg(ptx.Pred)
		f.And(fast, whole, inRows[nrows-2])
	}
	f.AtNot(fast).Bra(part)
	body(sas, das, nil)
	f.Bra(next)
	f.Place(part)
	// The thread's vectors inside the row (computed here: whole tiles don't need them).
	valid := make([]ptx.Reg, items)
	for j := range valid {
		cj := f.Reg(ptx.U32)
		f.Add(cj, col, ptx.Int(j*ConcatBlock))
		valid[j] = f.Setp(ptx.Lt, cj, cols32)
	}
	ok := make([][]ptx.Reg, nrows)
	for i := range ok {
		ok[i] = valid
		if i > 0 {
			ok[i] = make([]ptx.Reg, items)
			for j := range ok[i] {
				ok[i][j] = f.Reg(ptx.Pred)
				f.And(ok[i][j], valid[j], inRows[i-1])
			}
		}
	}
	body(sas, das, ok)
	f.Place(next)
	f.Add(r, r, step)
	f.Add(sa, sa, sstep)
	f.Add(da, da, dstep)
	f.Bra(loop)
	f.Place(done)
	f.Ret()
	return m.String(), entry, nil
}
