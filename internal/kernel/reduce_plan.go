package kernel

import (
	"math"
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

// ReduceTuning is PlanReduce's tuning: gpu.Tuning's ReduceSplitMin, ReduceHalfUnroll
// and ReduceHalfAccs.
type ReduceTuning struct {
	// SplitMin is the least number of elements a reduction must have to be split.
	SplitMin int
	// HalfUnroll is the loads in flight per thread of a reduction reading 8-element
	// (16-byte) vectors of halves (1, 2, 4 or 8), and HalfAccs the sets of 8
	// accumulators they fold into (load u into set u mod HalfAccs; ReduceGPU.Accs).
	// Unroll 2 with 2 sets keeps the 16 accumulators of the other types' 4 vectors of
	// 4 but only 32 bytes in flight a thread instead of 64: measured on the H200
	// (2026-12-02) at 84.5% of the copy bandwidth for a sum of 2^28 bfloat16 and
	// 78.9% over axis 0 of 16384x16384 (42-43 registers, CUDA 13's ptxas); 4 with 4
	// sets, 32 accumulators (56-66 registers); 8 with 2, 128 bytes.
	HalfUnroll, HalfAccs int
}

// DefaultReduceTuning is the default of PlanReduce's tuning (gpu.DefaultTuning's).
var DefaultReduceTuning = ReduceTuning{SplitMin: 1 << 17, HalfUnroll: 4, HalfAccs: 2}

// Tunables of PlanReduce.
const (
	redBlock        = 256  // threads per block
	redBlocksPerSM  = 8    // blocks per SM assumed when the occupancy is unknown
	redSmallK       = 16   // rows this short get one thread per output
	redWarpK        = 4096 // rows up to this long get a warp per output
	redWaveEff      = 0.94 // the least fraction of the last wave a split grid fills
	redCascade      = 16   // float accumulators fold into an outer one this often
	redPartialLimit = 64 << 20
)

// PlanReduce chooses how CUDA computes the reduction base (Op, Pre, Map, Ins, Acc and
// Mean set; the rest is filled in) over the iteration space l, whose operands' element 0
// addresses are 16-byte aligned where aligned[j] is set, on a GPU of sms
// multiprocessors, with the tuning tu (reductions of fewer than tu.SplitMin elements are
// never split; tu.HalfUnroll and tu.HalfAccs for halves). occupancy,
// if not nil, returns how many blocks of a spec's kernel
// fit on one multiprocessor (CUDA's occupancy calculator; redBlocksPerSM is assumed
// otherwise). It returns one pass, or two when the first writes S partial results per
// output (an [S][M] array of Acc, and of int64 indices for the arg operations) that the
// second combines.
//
// The choice follows the shape (CUDA.jl's mapreducedim makes the same distinctions):
//
//   - reduced elements contiguous ("rows": the innermost reduced dim has stride 1 in
//     every operand): one thread per output for rows of at most 16 elements, a warp per
//     output for rows up to 4096 elements, else a block per output; 16-byte vector
//     loads when the rows are aligned. A whole-array reduction is the one-row case.
//   - outputs contiguous ("columns": the innermost kept dim has stride 1 and the reduced
//     elements are strided, e.g. a sum over the leading axis): threads map to
//     consecutive outputs (coalesced reads, vector loads of 4 outputs where aligned) and
//     the block's row lanes split the reduced axis;
//   - anything else: rows of one thread (short) or a warp per output reading through the
//     strides.
//
// Splits. The blocks of a grid run in waves of sms×occupancy; a grid that fills its
// last wave badly wastes the difference, and a grid of fewer tiles than one wave
// leaves multiprocessors idle. So when there are at least splitMin elements and the
// output tiles alone fill less than redWaveEff of their last wave, the reduced axis is
// split across S = gridDim.y blocks, the smallest S that fills waves to redWaveEff (a
// whole-array reduction gets exactly one block per resident slot), with every thread
// keeping at least Unroll loads; the second pass then reduces the [S][M] partials.
//
// Accuracy. Every thread keeps Unroll×Vec accumulators; for float sums and products
// they fold pairwise, every redCascade = 16 iterations of the main loop, into an outer
// accumulator. So an inner accumulator adds at most 16 terms in sequence, and an outer
// one k/(16×L×S×Unroll×Vec) (L threads per output): 6 for a 2^28-element sum on an
// H200. Everything above is trees: the accumulators, the warp butterflies, shared
// memory, the second pass.
func PlanReduce(base Reduce, l ReduceLayout, aligned []bool, sms int, tu ReduceTuning, occupancy func(*Reduce) int) []ReducePass {
	sms = max(1, sms)
	first := base
	first.KeptRank, first.RedRank = len(l.Kept), len(l.Red)
	first.Index64 = ReduceNeedIndex64(&l, 1)
	p1 := planPass(&first, l, aligned, sms, occupancy, tu)
	if p1.GridY <= 1 {
		return []ReducePass{p1}
	}
	m, s := l.M(), p1.GridY
	first.Index64 = ReduceNeedIndex64(&l, s)
	first.Out = dtype.Invalid // partial results are accumulators; the second pass converts
	return []ReducePass{p1, planSecond(&base, s, m, sms, first.Index64, tu)}
}

// planSecond returns the pass that combines the s partial results of each of the m
// outputs of a first pass of base (Index64 if the first pass is).
func planSecond(base *Reduce, s, m, sms int, index64 bool, tu ReduceTuning) ReducePass {
	second := Reduce{Op: base.Op, Pre: PreConvert, Ins: []dtype.DType{base.Acc}, Acc: base.Acc, Out: base.Out, Mean: base.Mean}
	if base.Op.IsArg() {
		second.Pre = PrePartial
	}
	l2 := CollapseReduce([]int{s, m}, [][]int{{m, 1}}, []bool{true, false}, false)
	second.KeptRank, second.RedRank = len(l2.Kept), len(l2.Red)
	// The partial indices of a 64-bit first pass need 64-bit index registers.
	second.Index64 = ReduceNeedIndex64(&l2, 1) || index64 && base.Op.IsArg()
	tu.SplitMin = math.MaxInt
	return planPass(&second, l2, []bool{true}, sms, nil, tu)
}

// redVmax returns the widest vector (elements) every read operand can load in 16
// bytes or less, at most 4 (8 when every read operand is half precision: 16 bytes).
func redVmax(r *Reduce) int {
	v := 4
	if r.halfIns() {
		v = 8
	}
	for j, t := range r.Ins {
		if r.Pre == PreExpr && !redExprReads(r.Map, j) {
			continue
		}
		v = min(v, 16/t.Size())
	}
	if r.Op.IsArg() && r.Pre == PrePartial {
		v = min(v, 2) // the int64 indices load alongside
	}
	return v
}

func floorPow2(n int) int {
	if n < 1 {
		return 1
	}
	return 1 << (bits.Len(uint(n)) - 1)
}

// waveEff returns the fraction of its last wave's slots a grid of b blocks uses, over
// all its waves.
func waveEff(b, resident int) float64 {
	waves := (b + resident - 1) / resident
	return float64(b) / float64(waves*resident)
}

// chooseSplit returns S for a grid of tiles blocks whose threads can each take at most
// maxS splits (each keeping Unroll loads), with resident blocks per wave.
func chooseSplit(tiles, maxS, resident int) int {
	if maxS <= 1 || waveEff(tiles, resident) >= redWaveEff && tiles >= resident {
		return 1
	}
	if tiles == 1 {
		return min(resident, maxS)
	}
	best, bestEff := 1, waveEff(tiles, resident)*min(1, float64(tiles)/float64(resident))
	for s := 2; s <= maxS && s <= 4*resident; s++ {
		b := tiles * s
		e := waveEff(b, resident)
		if b < resident {
			e *= float64(b) / float64(resident)
		}
		if e > bestEff+1e-9 {
			best, bestEff = s, e
		}
		if e >= redWaveEff {
			return s
		}
	}
	return best
}

// planPass fills r's strategy for the layout and returns the pass (GridY > 1: r is a
// partial pass; a second pass, which never splits, passes math.MaxInt for tu.SplitMin).
func planPass(r *Reduce, l ReduceLayout, aligned []bool, sms int, occupancy func(*Reduce) int, tu ReduceTuning) ReducePass {
	m, k := l.M(), l.K()
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
	cascade := 0
	if r.Acc.IsFloat() && (r.Op == OpSum || r.Op == OpProd) {
		cascade = redCascade
	}
	pass := ReducePass{Spec: r, Layout: l, GridY: 1}
	// splitFor returns S for tiles output tiles whose threads can take maxS splits.
	splitFor := func(tiles, maxS int) int {
		if m*k < tu.SplitMin {
			return 1
		}
		// Ask for the occupancy of the partial kernel: it writes partials (accumulators:
		// no Out type, which a half result would otherwise have and a partial kernel
		// refuses), and a mean divides only in the second pass. And of the fused kernel
		// (FuseReduce) of the split that gives, which the runtime launches instead where
		// it fuses: the grid must fit the waves of the kernel that runs, so the smaller
		// of the two counts. (Until 2026-12-02 the query failed for half results, and
		// their grids assumed redBlocksPerSM = 8 where 5 fit: a sum over axis 0 of
		// 16384x16384 bfloat16 ran 1024 blocks, a wave of 660 and one of 364.)
		mean, out := r.Mean, r.Out
		r.GPU.Partial, r.Mean, r.Out = true, false, dtype.Invalid
		occ := redBlocksPerSM
		if occupancy != nil {
			if o := occupancy(r); o > 0 {
				occ = o
			}
			if s := chooseSplit(tiles, min(maxS, 65535), sms*occ); s > 1 {
				base := *r
				base.Out, base.Mean = out, mean
				ix := ReduceNeedIndex64(&l, s)
				p1 := ReducePass{Spec: r, Layout: l, GridX: max(1, min(tiles, 1<<24)), GridY: s, Block: r.GPU.Block}
				if f, _, ok := FuseReduce(p1, planSecond(&base, s, m, sms, ix, tu)); ok {
					f.Spec.Index64 = ix
					if o := occupancy(f.Spec); o > 0 {
						occ = min(occ, o)
					}
				}
			}
		}
		r.Out = out
		s := chooseSplit(tiles, min(maxS, 65535), sms*occ)
		acc := r.Acc.Size()
		if r.Op.IsArg() {
			acc += 8
		}
		s = min(s, max(1, redPartialLimit/max(1, m*acc)))
		if s <= 1 {
			r.GPU.Partial, r.Mean = false, mean
			s = 1
		}
		return s
	}
	if colsOK && !rowsOK {
		V := 1
		if vmax > 1 && l.Kept[len(l.Kept)-1]%vmax == 0 && allAligned &&
			multiple(l.KeptStr, vmax, true) && multiple(l.RedStr, vmax, false) {
			V = vmax
		}
		mv := m / V
		C := min(mv, 32)
		R := floorPow2(redBlock / C)
		U, A := tu.unroll(V)
		r.GPU = ReduceGPU{Cols: true, Lanes: R, Block: C * R, Vec: V, Unroll: U, Accs: A, Cascade: redCascadeFor(cascade, U, A)}
		tiles := (mv + C - 1) / C
		pass.GridY = splitFor(tiles, k/(R*U))
		pass.GridX = max(1, min(tiles, 1<<24))
		pass.Block = C * R
		return pass
	}
	V := 1
	if rowsOK && len(l.Red) == 1 && vmax > 1 && k%vmax == 0 && allAligned && multiple(l.KeptStr, vmax, false) {
		V = vmax
	}
	G := redBlock
	switch {
	case k <= redSmallK || !rowsOK && k <= 64:
		G = 1
	case k <= redWarpK || !rowsOK:
		G = 32
	}
	U, A := tu.unroll(V)
	if G == 1 && k/V < U {
		U, A = max(1, k/V), 0 // short rows: every load of a row in flight at once
	}
	r.GPU = ReduceGPU{Lanes: G, Block: redBlock, Vec: V, Unroll: U, Accs: A, Cascade: redCascadeFor(cascade, U, A)}
	tiles := (m + redBlock/G - 1) / (redBlock / G)
	pass.GridY = splitFor(tiles, (k/V)/(G*U))
	pass.GridX = max(1, min(tiles, 1<<24))
	pass.Block = redBlock
	return pass
}

// unroll returns the loads in flight per thread for vectors of V elements and the
// sets of accumulators (ReduceGPU.Accs, 0: one per load): 4, or HalfUnroll and
// HalfAccs for the 8-element vectors of halves.
func (tu ReduceTuning) unroll(V int) (u, accs int) {
	if V == 8 {
		u := max(1, tu.HalfUnroll)
		a := min(max(1, tu.HalfAccs), u)
		if u%a != 0 {
			a = u
		}
		if a == u {
			a = 0
		}
		return u, a
	}
	return 4, 0
}

// redCascadeFor returns the cascade interval (iterations) that keeps an inner
// accumulator at redCascade terms when it takes unroll/accs loads an iteration.
func redCascadeFor(cascade, unroll, accs int) int {
	if cascade == 0 || accs == 0 {
		return cascade
	}
	return max(1, cascade/(unroll/accs))
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

// ReduceFuseMaxTiles is the most output tiles, and so ticket counters, a fused
// reduction may have (FuseReduce); the runtime keeps that many counters per stream.
const ReduceFuseMaxTiles = 4096

// FuseReduce returns the one-launch form of PlanReduce's two passes p1 (partial) and p2
// (combining): p1 with p2 fused in (Spec.Final), and the number of ticket counters
// (uint32, one per output tile of p1) its launch needs, zeroed. ok is false when they
// don't fuse: p2's block is larger than p1's (or smaller, for a p2 of rows), or p1 has
// more than ReduceFuseMaxTiles output tiles. (A p2 of columns in a larger block leaves
// the extra threads without a row lane: they carry the identity and only join its
// barriers.)
//
// The fused kernel runs p1's grid. Each block stores its partial results as p1 does,
// then (bar.sync; thread 0: fence.acq_rel.gpu, atom.global.add.u32 on its tile's
// counter) takes a ticket; the block that draws S-1 (S = gridDim.y, the last of its
// tile's blocks) fences again and runs p2's code (p2's strategy, registers and
// combining order: the same bits) over p2's output tiles that meet its own, storing
// only its tile's outputs, then resets the counter to 0 for the next launch. Partial
// results are read with ld.global.cg there, not .nc: they are written during the
// launch.
func FuseReduce(p1, p2 ReducePass) (fused ReducePass, counters int, ok bool) {
	b1, g2 := p1.Spec.GPU.Block, p2.Spec.GPU
	if p1.GridY <= 1 || !p1.Spec.GPU.Partial || g2.Block > b1 || !g2.Cols && g2.Block != b1 || p2.GridY != 1 {
		return ReducePass{}, 0, false
	}
	tiles := p1.Spec.tiles(p1.Layout.M())
	if tiles > ReduceFuseMaxTiles || tiles < p1.GridX {
		return ReducePass{}, 0, false
	}
	sp := *p1.Spec
	sp.Final = p2.Spec
	p1.Spec = &sp
	return p1, tiles, true
}

// tiles returns the number of output tiles of a kernel with r's strategy over m outputs.
func (r *Reduce) tiles(m int) int {
	g := r.GPU
	if g.Cols {
		c := g.Block / g.Lanes
		return (m/g.Vec + c - 1) / c
	}
	p := g.Block / g.Lanes
	return (m + p - 1) / p
}
