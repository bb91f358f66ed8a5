package kernel

import "github.com/go-gpu/gpu/ptx"

// The third tiled permute kernel, for tiles with a short side (at most 32 elements)
// and a long one (at least 32): a 16 x 16384 plane read in 16 x 256 tiles, say, whose
// output rows are 16 elements long. Its global accesses are the second kernel's
// (ptxLoads, ptxStores: Vec consecutive elements per access, every load of a thread in
// flight before any use); what changes is the shared tile and the tile shape the host
// picks (16*PermuteBlock elements, so a thread moves 16 of them).
//
// The shared tile has no padding. It is laid out in rows along the tile's short side
// ("rows", tr of them) and columns along its long side (tc, contiguous), and column c
// of row r is stored at column c ^ swz(r), with
//
//	swz(r) = ((r / Vec) mod (tr/Vec)) * (32*Vec/tr)
//
// a multiple of Vec below 32. So:
//
//   - the side that moves Vec elements along the long dimension (the loads when the
//     short side is A, the stores when it is B) finds them consecutive and aligned in
//     shared memory too: one st.shared.v4/ld.shared.v4 per access, consecutive
//     threads on consecutive 16-byte words of one 128-byte row, no bank conflict;
//   - the other side reads or writes Vec scalars from Vec consecutive rows; a warp's
//     threads cover tr/Vec column groups (one per swizzle value) by 32*Vec/tr
//     consecutive columns, and the XOR sends them to 32 distinct banks (4-byte
//     elements; tc is a multiple of 32).
//
// The padded tile of the first two kernels, read and written with Vec = 4 along a
// row of 16 elements, has 4-way conflicts on one side and 2-way on the other. XOR
// swizzles of this kind are CUTLASS's (cute::Swizzle); the transposition through
// shared memory is Harris's ("An Efficient Matrix Transpose in CUDA C/C++", 2013).

// v3Trans reports whether the third kernel's shared rows run along B (the short side
// is B); otherwise they run along A.
func (p *Permute) v3Trans() bool { return p.TA > p.TB }

// v3Sides returns the third kernel's tile sides: rows (short) and columns (long).
func (p *Permute) v3Sides() (tr, tc int) {
	if p.v3Trans() {
		return p.TB, p.TA
	}
	return p.TA, p.TB
}

// ptxV3 returns the third tiled permute kernel (see above).
func (p *Permute) ptxV3(major, minor int) (src, entry string, err error) {
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "permute_tiled_v3"
	sz, V := p.Size, p.vec()
	tr, tc := p.v3Sides()
	trans := p.v3Trans()
	h := p.ptxHead(m, entry, p.TA*p.TB)
	f := h.f
	et, rt := pmTypes(sz)
	vs := map[int]string{1: "", 2: ".v2", 4: ".v4"}[V]
	lv, ls := scanLog2(V), scanLog2(32*V/tr)
	mask := tr/V - 1 // swizzle values: (r/V) & mask
	// swz returns the swizzle of row r (u32).
	swz := func(r ptx.Reg) ptx.Reg {
		s := f.Reg(ptx.U32)
		f.Shr(s, r, ptx.Int(lv))
		f.And(s, s, ptx.Int(mask))
		f.Shl(s, s, ptx.Int(ls))
		return s
	}
	// swzAt returns the swizzle of row r0 + i*rows given s0 = swz(r0), where r0 <
	// rows (a thread's first row) and rows is a power of two: rows >= Vec makes
	// (r0 + i*rows)/Vec = r0/Vec + i*rows/Vec, rows < Vec makes it i*rows/Vec (r0
	// adds no carry), both (s0 >> ls) + (i*rows >> lv) modulo tr/Vec.
	swzAt := func(s0 ptx.Reg, i, rows int) ptx.Reg {
		k := ((i * rows) >> lv) & mask
		if k == 0 {
			return s0
		}
		s := f.Reg(ptx.U32)
		f.Add(s, s0, ptx.Int(k<<ls))
		f.And(s, s, ptx.Int(mask<<ls))
		return s
	}
	// colAt returns the swizzled column of column c0 + i*rows under swizzle s, as
	// a register and an immediate column offset: when rows is a multiple of 32 the
	// XOR (below 32) commutes with the addition, and every i shares the register of
	// i = 0 (c0 ^ s, passed back in as prev).
	colAt := func(c0, s, prev ptx.Reg, i, rows int) (ptx.Reg, int) {
		if rows%32 == 0 && i > 0 {
			return prev, i * rows
		}
		c := f.Reg(ptx.U32)
		f.Add(c, c0, ptx.Int(i*rows))
		f.Xor(c, c, s)
		return c, 0
	}
	tile := f.Reg(ptx.U32)
	f.Op("mov.u32", tile, ptx.Sym("pm_tile"))
	// slot returns the shared address of (row r, swizzled column c): tile + (r*tc +
	// c)*sz.
	slot := func(r, c ptx.Reg) ptx.Reg {
		a := f.Reg(ptx.U32)
		f.Fma(a, r, ptx.Int(tc), c)
		f.Fma(a, a, ptx.Int(sz), tile)
		return a
	}
	vec := func(regs []ptx.Reg) ptx.Operand {
		if V == 1 {
			return regs[0]
		}
		return ptx.Vec(regs)
	}

	// Loads, then shared stores, unguarded: a slot outside the array holds a value
	// no store reads back.
	ld := p.ptxLoads(h)
	if !trans {
		// Rows along A: a load's Vec elements are consecutive in row la + i*rows.
		s0 := swz(ld.la)
		for i, v := range ld.vals {
			a := f.Reg(ptx.U32)
			f.Add(a, ld.la, ptx.Int(i*ld.rows))
			c := ld.lb
			if mask > 0 {
				c = f.Reg(ptx.U32)
				f.Xor(c, ld.lb, swzAt(s0, i, ld.rows))
			}
			f.Op("st.shared"+vs+et.String(), ptx.Mem(slot(a, c), 0), vec(v))
		}
	} else {
		// Rows along B: element j of a load goes to row lb + j, whose swizzle is
		// lb's (lb is a multiple of Vec); its column is la + i*rows.
		s := swz(ld.lb)
		var c, base ptx.Reg
		for i, v := range ld.vals {
			var off int
			if c, off = colAt(ld.la, s, c, i, ld.rows); off == 0 {
				base = slot(ld.lb, c)
			}
			for j := range v {
				f.Op("st.shared"+et.String(), ptx.Mem(base, int64((off+j*tc)*sz)), v[j])
			}
		}
	}
	f.BarSync(0)

	// Shared loads, then the global stores.
	st := p.ptxStoreThreads(h)
	if !trans {
		// Rows along A: element j of a store comes from row wa + j, whose swizzle is
		// wa's; its column is wb + i*rows.
		s := swz(st.wa)
		var c, base ptx.Reg
		for i := range st.vals {
			st.vals[i] = f.Regs(rt, V)
			var off int
			if c, off = colAt(st.wb, s, c, i, st.rows); off == 0 {
				base = slot(st.wa, c)
			}
			for j := 0; j < V; j++ {
				f.Op("ld.shared"+et.String(), st.vals[i][j], ptx.Mem(base, int64((off+j*tc)*sz)))
			}
		}
	} else {
		// Rows along B: a store's Vec elements are consecutive in row wb + i*rows.
		s0 := swz(st.wb)
		for i := range st.vals {
			st.vals[i] = f.Regs(rt, V)
			b := f.Reg(ptx.U32)
			f.Add(b, st.wb, ptx.Int(i*st.rows))
			c := st.wa
			if mask > 0 {
				c = f.Reg(ptx.U32)
				f.Xor(c, st.wa, swzAt(s0, i, st.rows))
			}
			f.Op("ld.shared"+vs+et.String(), vec(st.vals[i]), ptx.Mem(slot(b, c), 0))
		}
	}
	p.ptxStores(h, st)
	f.Ret()
	return m.String(), entry, nil
}
