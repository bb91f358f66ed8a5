package kernel

// PermuteDims collapses a permuted copy (the output's shape and strides, the input's
// strides) and picks the dimension b to read along: the one, other than the output's
// innermost, with the smallest nonzero input stride. tiled is false when the
// innermost dimension is (as good as) the input's contiguous one, so that a plain
// strided copy reads and writes along it.
func PermuteDims(shape, ostr, istr []int) (cshape, ist []int, b int, tiled bool) {
	cshape, cst := Collapse(shape, [][]int{ostr, istr})
	ist = cst[1]
	r := len(cshape)
	absI := func(v int) int {
		if v < 0 {
			return -v
		}
		return v
	}
	b = -1
	for k := 0; k < r-1; k++ {
		if ist[k] != 0 && (b < 0 || absI(ist[k]) < absI(ist[b])) {
			b = k
		}
	}
	tiled = r >= 2 && b >= 0 && absI(ist[r-1]) > absI(ist[b])
	return cshape, ist, b, tiled
}

// PlanPermute returns the tiled kernel's spec for the collapsed output shape, the input
// strides, the dimension b read along (PermuteDims) and the element size, for variant
// 1, 2 or 3 (gpu.Tuning's PermuteVariant: the first, second or third kernel, the third
// only where the tile has a short side), on sms multiprocessors; addrs is the bitwise
// or of the element-0 addresses of the input and the output (their common alignment).
func PlanPermute(shape, istr []int, b, size, variant, sms int, addrs uint64) *Permute {
	r := len(shape)
	sp := &Permute{Size: size, Rank: r, B: b, TB: 64, TA: 64, Index64: PermuteNeedIndex64(shape, istr)}
	if size == 8 {
		sp.TB, sp.TA = 32, 32
	}
	switch sa, sb := shape[r-1], shape[b]; {
	case sa <= 16 && sb <= 16:
		sp.TB, sp.TA = 16, 16
	case sa <= 16:
		sp.TB, sp.TA = PermuteBlock/16*2, 16
		if size == 8 {
			sp.TB = PermuteBlock / 16
		}
	case sb <= 16:
		sp.TB, sp.TA = 16, PermuteBlock/16*2
		if size == 8 {
			sp.TA = PermuteBlock / 16
		}
	}
	switch variant {
	case 2:
		planPermuteV2(sp, shape, istr, sms, addrs)
	case 3:
		if !planPermuteV3(sp, shape, istr, sms, addrs) {
			planPermuteV2(sp, shape, istr, sms, addrs)
		}
	}
	return sp
}

// planPermuteV2 turns the first kernel's spec into the second's: tiles of 32 along a
// dimension of 17 to 32 (the first kernel's 64 would leave half the threads idle),
// 32x32 tiles instead of 64x64 when 64x64 gives fewer than two blocks per
// multiprocessor (512x1000 float32: 128 blocks of 64x64 on 132 SMs, 512 of 32x32), and
// the widest vector (up to 16 bytes, at most 4 elements) that the shape, the strides
// and the element-0 addresses allow.
func planPermuteV2(sp *Permute, shape, istr []int, sms int, addrs uint64) {
	sp.V2 = true
	r := sp.Rank
	sa, sb := shape[r-1], shape[sp.B]
	if sa > 16 && sa <= 32 && sp.TA > 32 {
		sp.TA = 32
	}
	if sb > 16 && sb <= 32 && sp.TB > 32 {
		sp.TB = 32
	}
	if sp.TA == 64 && sp.TB == 64 && sp.Blocks(shape) < 2*max(sms, 1) {
		sp.TA, sp.TB = 32, 32
	}
	for _, v := range []int{4, 2} {
		sp.Vec = v
		if permuteVecOK(sp, shape, istr, addrs) {
			return
		}
	}
	sp.Vec = 1
}

// permuteVecOK reports whether sp (its Vec set) is valid for the shape, the input
// strides and the element-0 addresses (addrs: PlanPermute's).
func permuteVecOK(sp *Permute, shape, istr []int, addrs uint64) bool {
	return sp.Validate() == nil && sp.VecOK(shape, istr) && addrs%uint64(sp.Vec*sp.Size) == 0
}

// planPermuteV3 turns the first kernel's spec into the third's (Permute.V3) when
// the tile has a short side: the shorter of the dimensions A and B (the output's
// innermost and the one read along) at most 32 elements. The tile covers the short
// dimension (rounded up to a power of two) and as much of the long one (at least 32)
// as makes 16 elements per thread (8 of 8 bytes), halved down to 32 while the grid
// has fewer than two blocks per multiprocessor; the vector is the widest (up to 16
// bytes, at most 4 elements, at most the short side) that the shape, the strides and
// the element-0 addresses allow. It reports false, changing nothing, for other
// shapes: the second kernel's square tiles move them.
//
// Why (the H200's figures, 2026-11-30): the 4-d permutation (1, 0, 3, 2) of a
// (32, 32, 16, 16384) float32 array is a batch of 16 x 16384 planes transposed, output
// rows of 16 elements. The second kernel tiled it 32 x 16 with 2-element accesses: 8
// bytes per thread, 2^27 threads of about 176 instructions (the block decomposition's
// four divisions dominate), some 740 million warp instructions, about 0.75 ms of
// issue on 132 SMs against a 0.51 ms copy: 956 us, 53.5% of the copy bandwidth. The
// third kernel's 256 x 16 tiles move 64 bytes per thread in four 16-byte loads, 2^24
// threads of about 260 instructions (0.13 ms of issue), with a shared tile free of
// bank conflicts (the padded 256 x 16 tile with 4-element accesses has three times the
// minimum shared wavefronts).
func planPermuteV3(sp *Permute, shape, istr []int, sms int, addrs uint64) bool {
	r := sp.Rank
	sa, sb := shape[r-1], shape[sp.B]
	short, long := min(sa, sb), max(sa, sb)
	if short > 32 {
		return false
	}
	ceil2 := func(v int) int {
		p := 1
		for p < v {
			p <<= 1
		}
		return p
	}
	tr := max(ceil2(short), 2)
	per := 16
	if sp.Size == 8 {
		per = 8
	}
	for _, v := range []int{4, 2, 1} {
		if v*sp.Size > 16 || v > tr {
			continue
		}
		tc := min(per*PermuteBlock/tr, PermuteBlock*v, max(32, ceil2(long)))
		if tc < 32 || tr*tc < PermuteBlock*v {
			continue
		}
		c := *sp
		c.V3, c.Vec = true, v
		set := func(tc int) {
			c.TA, c.TB = tr, tc
			if sa > sb {
				c.TA, c.TB = tc, tr
			}
		}
		set(tc)
		for tc > 32 && tr*tc/2 >= PermuteBlock*v && c.Blocks(shape) < 2*max(sms, 1) {
			tc /= 2
			set(tc)
		}
		if permuteVecOK(&c, shape, istr, addrs) {
			*sp = c
			return true
		}
	}
	return false
}
