package kernel

import (
	"math/bits"

	"github.com/go-gpu/gpu/dtype"
)

// ReducePass is one launch of a CUDA reduction: a kernel spec, the iteration space it
// covers (operands' strides included) and its grid.
type ReducePass struct {
	Spec   *Reduce
	Layout ReduceLayout
	GridX  int
	GridY  int // blocks per output: > 1 only for a Partial pass
	Block  int
}

// Tunables of PlanReduce.
const (
	redBlock        = 256     // threads per block
	redBlocksPerSM  = 8       // blocks of redBlock threads resident on an SM
	redWaves        = 4       // a split aims at this many times the resident blocks
	redSplitMin     = 1 << 17 // fewer elements than this never split (one launch)
	redSmallK       = 16      // rows this short get one thread per output
	redWarpK        = 4096    // rows up to this long get a warp per output...
	redPartialSoft  = 1 << 20 // partial results kept within the small-block cache if possible
	redPartialLimit = 64 << 20
)

// PlanReduce chooses how CUDA computes the reduction base (Op, Pre, Map, Ins, Acc and
// Mean set; the rest is filled in) over the iteration space l, whose operands' element 0
// addresses are 16-byte aligned where aligned[j] is set, on a GPU of sms
// multiprocessors. It returns one pass, or two when the first writes S partial results
// per output (an [S][M] array of Acc, and of int64 indices for the arg operations)
// that the second combines.
//
// The choice follows the shape (CUDA.jl's mapreducedim makes the same distinctions):
//
//   - reduced elements contiguous ("rows": the innermost reduced dim has stride 1 in
//     every operand): one thread per output for rows of at most 16 elements, a warp per
//     output for rows up to 4096 elements or when there are enough outputs to fill the
//     GPU with warps, else a block per output; 16-byte vector loads when the rows are
//     aligned. A whole-array reduction is the one-row case.
//   - outputs contiguous ("columns": the innermost kept dim has stride 1 and the reduced
//     elements are strided, e.g. a sum over the leading axis): threads map to
//     consecutive outputs (coalesced reads, vector loads of 4 outputs where aligned) and
//     groups of threads in a block split the reduced axis;
//   - anything else: rows with one thread per output reading through the strides.
//
// When the outputs alone can't keep the GPU busy (fewer tiles than redWaves times the
// resident blocks) and there are at least redSplitMin elements, the reduced axis is
// split across S = gridDim.y blocks, S chosen so that every thread still has Unroll
// loads to do and the grid reaches redWaves waves; the second pass then reduces the
// [S][M] partials (as columns, or as one row when M = 1).
func PlanReduce(base Reduce, l ReduceLayout, aligned []bool, sms int) []ReducePass {
	sms = max(1, sms)
	first := base
	first.KeptRank, first.RedRank = len(l.Kept), len(l.Red)
	p1 := planPass(&first, l, aligned, sms, true)
	if p1.GridY <= 1 {
		first.GPU.Partial = false
		first.Index64 = ReduceNeedIndex64(&l, 1)
		return []ReducePass{p1}
	}
	first.GPU.Partial = true
	first.Mean = false
	first.Index64 = ReduceNeedIndex64(&l, p1.GridY)
	m, s := l.M(), p1.GridY
	second := Reduce{Op: base.Op, Pre: PreConvert, Ins: []dtype.DType{base.Acc}, Acc: base.Acc, Mean: base.Mean}
	if base.Op.IsArg() {
		second.Pre = PrePartial
	}
	l2 := CollapseReduce([]int{s, m}, [][]int{{m, 1}}, []bool{true, false}, false)
	second.KeptRank, second.RedRank = len(l2.Kept), len(l2.Red)
	p2 := planPass(&second, l2, []bool{true}, sms, false)
	second.Index64 = ReduceNeedIndex64(&l2, 1)
	return []ReducePass{p1, p2}
}

// redVmax returns the widest vector (elements) every read operand can load in 16
// bytes or less, at most 4.
func redVmax(r *Reduce) int {
	v := 4
	for j, t := range r.Ins {
		if r.Pre == PreExpr && !redExprReads(r.Map, j) {
			continue
		}
		v = min(v, 16/t.Size())
	}
	return v
}

func floorPow2(n int) int {
	if n < 1 {
		return 1
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// planPass fills r's strategy for the layout and returns the pass (GridY > 1 asks for
// a partial pass when split is allowed).
func planPass(r *Reduce, l ReduceLayout, aligned []bool, sms int, split bool) ReducePass {
	m, k := l.M(), l.K()
	resident := sms * redBlocksPerSM
	reads := func(j int) bool { return r.Pre != PreExpr || redExprReads(r.Map, j) }
	allAligned := true
	for j := range r.Ins {
		if reads(j) && (j >= len(aligned) || !aligned[j]) {
			allAligned = false
		}
	}
	rowsOK := len(l.Red) > 0
	colsOK := len(l.Kept) > 0
	for j := range r.Ins {
		if !reads(j) {
			continue
		}
		if rowsOK && l.RedStr[j][len(l.Red)-1] != 1 {
			rowsOK = false
		}
		if colsOK && l.KeptStr[j][len(l.Kept)-1] != 1 {
			colsOK = false
		}
	}
	if k == 0 || m == 0 {
		rowsOK, colsOK = false, false
	}
	vmax := redVmax(r)
	multiple := func(strides [][]int, v int, skipLast bool) bool {
		for j, st := range strides {
			if !reads(j) {
				continue
			}
			for d, s := range st {
				if skipLast && d == len(st)-1 {
					continue
				}
				if s%v != 0 {
					return false
				}
			}
		}
		return true
	}
	pass := ReducePass{Spec: r, Layout: l, GridY: 1}
	splits := func(tiles, perSplitMax int) int {
		if !split || m*k < redSplitMin || tiles >= redWaves*resident {
			return 1
		}
		s := min((redWaves*resident+tiles-1)/tiles, max(1, perSplitMax), 65535)
		acc := r.Acc.Size()
		if r.Op.IsArg() {
			acc += 8
		}
		if soft := redPartialSoft / max(1, m*acc); s > soft && tiles*soft >= resident {
			s = max(1, soft)
		}
		s = min(s, max(1, redPartialLimit/max(1, m*acc)))
		return s
	}
	if colsOK && !rowsOK {
		V := 1
		if vmax > 1 && l.Kept[len(l.Kept)-1]%vmax == 0 && allAligned &&
			multiple(l.KeptStr, vmax, true) && multiple(l.RedStr, vmax, false) {
			V = vmax
		}
		mv := m / V
		C := 32
		if mv < 32 {
			C = mv
		}
		R := floorPow2(redBlock / C)
		U := 4
		r.GPU = ReduceGPU{Cols: true, Lanes: R, Block: C * R, Vec: V, Unroll: U}
		tiles := (mv + C - 1) / C
		pass.GridY = splits(tiles, k/(R*U))
		pass.GridX = max(1, min(tiles, 32*resident))
		pass.Block = C * R
		return pass
	}
	V := 1
	if rowsOK && len(l.Red) == 1 && vmax > 1 && k%vmax == 0 && allAligned && multiple(l.KeptStr, vmax, false) {
		V = vmax
	}
	G := redBlock
	switch {
	case k <= redSmallK || !rowsOK && k < 64:
		G = 1
	case k <= redWarpK || m >= 8*resident:
		G = 32
	}
	if !rowsOK && G > 1 && m >= resident*redBlock/32 {
		// strided rows with many outputs: one thread each
		G = 1
	}
	U := 4
	r.GPU = ReduceGPU{Lanes: G, Block: redBlock, Vec: V, Unroll: U}
	tiles := (m + redBlock/G - 1) / (redBlock / G)
	pass.GridY = splits(tiles, (k/V)/(G*U))
	pass.GridX = max(1, min(tiles, 32*resident))
	pass.Block = redBlock
	return pass
}

// ReducePartialBytes returns the bytes of the partial results a first pass of S splits
// over m outputs writes: values, and int64 indices for the arg operations.
func ReducePartialBytes(r *Reduce, m, s int) (values, indices int64) {
	n := int64(m) * int64(s)
	values = n * int64(r.Acc.Size())
	if r.Op.IsArg() {
		indices = n * 8
	}
	return
}
