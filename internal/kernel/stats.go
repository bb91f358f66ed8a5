package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/ptx/gomath"
)

// Row statistics: variance, standard deviation, log-sum-exp, softmax, log-softmax and
// layer normalization of rows of n contiguous elements, each in one pass over the data.
//
// Every statistic is a fold of a small state over the row, merged across threads:
//
//   - moments (StatVar, StatStd, StatLayerNorm): (count, mean, M2), M2 the sum of
//     squared deviations from the mean, of the values shifted by the row's first
//     element K (the mean is of x - K): a row's values far from 0 next to their spread
//     (a mean of 10^4, a spread of 1) keep their precision through the merges, which
//     would otherwise round every partial mean to the spacing of values near 10^4 in
//     the compute type (in float32, Var's relative error was about 10^-4 at 10^6
//     values; now about 10^-6, as a two-pass method's). A thread's values of one tile
//     (Items*Vec of them, held in registers) give their mean as sum(x - K)/k and their
//     M2 as sum(((x - K) - mean)^2); states merge by Chan, Golub and LeVeque's formula
//     ("Updating formulae and a pairwise algorithm for computing sample variances",
//     1979): n = na + nb, d = mb - ma, mean = ma + d*nb/n, M2 = M2a + M2b + d^2*na*nb/n.
//     Never a sum of squares minus a squared sum; a constant row has M2 exactly 0, since
//     every deviation and every d is exactly 0. Layer norm writes ((x - K) - mean)/std
//     from a row's tile kept in registers, (x - (K + mean))/std otherwise.
//   - softmax (StatLogSumExp, StatSoftmax, StatLogSoftmax): (m, s), the running maximum
//     and the sum of exp(x - m) (Milakov & Gimelshein, "Online normalizer calculation
//     for softmax", 2018): states merge as m = max(ma, mb), s = sa*exp(ma - m) +
//     sb*exp(mb - m), a state whose maximum is -Inf contributing nothing. A NaN
//     propagates to m; a +Inf makes the row's sum NaN.
//
// A transform (softmax, log-softmax, layer norm) keeps the row's tile in registers
// between the fold and the write when the row fits one tile: one read and one write of
// every element. Longer rows are read twice (the second time mostly from L2).
//
// Passes. StatFull runs the whole statistic, RowsPerBlock rows a block (one row a block
// when Threads >= StatBlock). For few long rows, StatPartial splits each row into Parts
// chunks, one block each, and writes each chunk's state (three float64 values: count,
// then mean and M2, or m and s); StatFinish then merges a row's states and either
// writes the reduction (one warp a row) or, for a transform, writes its chunk again
// (one block a chunk, as StatPartial). Both backends implement every pass, so a plan
// runs the same way everywhere; their results differ in the last bits only (the order
// of the merges, and the PTX's float32 exp: expShifted), as the reductions' do.
//
// Kernel parameters, in order (every pass):
//
//	in     u64  address of row 0's element 0 (type In; rows are n apart)
//	out    u64  address of the output's element 0 (type Out): rows*n elements for a
//	            transform, rows for a reduction (StatPartial: unused, 0)
//	part   u64  address of the states: rows*Parts records of three float64 (StatFull: 0)
//	rows   u64  number of rows
//	n      u64  row length
//	parts  u64  chunks a row is split into (StatFull: 1)
//	chunk  u64  elements of a chunk, a multiple of Vec (StatFull: n rounded up to Vec)
//	arg    f64  StatVar/StatStd: ddof; StatLayerNorm: eps; else unused
//	w      u64  StatLayerNorm with Weight: the weights (n elements of type Out)
//	b      u64  StatLayerNorm with Bias: the biases (n elements of type Out)
type RowStat struct {
	Op   StatOp
	In   dtype.DType // Float16, BFloat16, Float32 or Float64
	Out  dtype.DType // a float type
	Comp dtype.DType // Float32 or Float64: the type the state is computed in
	Pass StatPass
	// Threads per row: a power of two from 32 to 1024. With 32, a block holds
	// StatBlock/32 rows, one a warp.
	Threads int
	// Items vectors of Vec elements per thread per tile: Items a power of two up to 32,
	// Vec 1, 2 or 4 (at most 16 bytes) with Items*Vec at most 32. With Vec > 1, n and
	// chunk are multiples of Vec and the rows (and LayerNorm's weights and biases) are
	// aligned to Vec elements.
	Items, Vec int
	// Weight and Bias say whether StatLayerNorm has them.
	Weight, Bias bool
	// OneTile (StatFull transforms): every row fits one tile (n <= Tile()), so each thread
	// keeps its elements in registers between the fold and the write.
	OneTile bool
	// ExactExp makes float32 statistics (Comp Float32) compute exp with the correctly
	// rounded-in-most-cases routine of ptx.Math (about 20 instructions and a branch)
	// instead of expShifted's 10 (max error about 2 ulp, the accuracy of CUDA's expf):
	// gpu.Tuning's StatExactExp, a measurement knob (the H200's softmax over
	// 16384-element rows was issue-bound with the exact routine).
	ExactExp bool
}

// StatOp is the statistic of a RowStat.
type StatOp uint8

const (
	// StatVar is M2/max(n - ddof, 0) per row, as NumPy divides: where n - ddof <= 0,
	// +Inf, or NaN where M2 is 0 (every element equal, one element, none).
	StatVar StatOp = iota
	// StatStd is the square root of StatVar.
	StatStd
	// StatLogSumExp is log(sum(exp(x))) per row, computed as m + log(s) (m the row's
	// maximum, taken as 0 when infinite: -Inf for a row of -Inf or an empty row, +Inf
	// for a row with +Inf, NaN for a row with NaN).
	StatLogSumExp
	// StatSoftmax is exp(x - m)/s for each element.
	StatSoftmax
	// StatLogSoftmax is x - m - log(s) for each element.
	StatLogSoftmax
	// StatLayerNorm is (x - mean)/sqrt(var + eps) (var the biased variance M2/n), times
	// the weight, plus the bias.
	StatLayerNorm
)

var statNames = [...]string{"var", "std", "logsumexp", "softmax", "logsoftmax", "layernorm"}

// String returns the statistic's name.
func (op StatOp) String() string {
	if int(op) < len(statNames) {
		return statNames[op]
	}
	return fmt.Sprintf("statop(%d)", uint8(op))
}

// Transform reports whether the statistic writes a row for a row (softmax, log-softmax,
// layer norm) rather than one value.
func (op StatOp) Transform() bool { return op >= StatSoftmax }

// moments reports whether the state is (count, mean, M2).
func (op StatOp) moments() bool { return op == StatVar || op == StatStd || op == StatLayerNorm }

// StatPass is a pass of a RowStat.
type StatPass uint8

const (
	// StatFull computes the statistic of whole rows.
	StatFull StatPass = iota
	// StatPartial writes the state of each chunk.
	StatPartial
	// StatFinish merges the chunks' states and writes the result.
	StatFinish
)

// StatBlock is the number of threads of a RowStat block when Threads is smaller.
const StatBlock = 256

// StatRecord is the size in bytes of one chunk's state (three float64).
const StatRecord = 24

// Block returns the threads of a block.
func (r *RowStat) Block() int {
	if r.Threads == 32 {
		return StatBlock
	}
	return r.Threads
}

// RowsPerBlock returns the rows a block of a StatFull pass (or a reduction's StatFinish
// pass, whose Threads is 32) handles.
func (r *RowStat) RowsPerBlock() int { return r.Block() / r.Threads }

// Tile returns the elements a row's threads hold at once.
func (r *RowStat) Tile() int { return r.Threads * r.Items * r.Vec }

// Key identifies the kernel.
func (r *RowStat) Key() string {
	k := fmt.Sprintf("rowstat|%v|%v|%v|%v|p%d|t%d|k%d|v%d", r.Op, r.In, r.Out, r.Comp, r.Pass, r.Threads, r.Items, r.Vec)
	if r.Weight {
		k += "|w"
	}
	if r.Bias {
		k += "|b"
	}
	if r.OneTile {
		k += "|one"
	}
	if r.ExactExp && r.Comp == dtype.Float32 {
		k += "|exactexp"
	}
	return k
}

// Validate checks the spec.
func (r *RowStat) Validate() error {
	isFloat := func(t dtype.DType) bool {
		return t == dtype.Float16 || t == dtype.BFloat16 || t == dtype.Float32 || t == dtype.Float64
	}
	pow2 := func(v int) bool { return v > 0 && v&(v-1) == 0 }
	switch {
	case r.Op > StatLayerNorm:
		return fmt.Errorf("kernel: row statistic %v: %w", r.Op, backend.ErrInvalidValue)
	case !isFloat(r.In) || !isFloat(r.Out):
		return fmt.Errorf("kernel: row statistic of %v into %v: %w", r.In, r.Out, backend.ErrNotSupported)
	case r.Comp != dtype.Float32 && r.Comp != dtype.Float64,
		r.Comp == dtype.Float32 && (r.In == dtype.Float64 || r.Out == dtype.Float64):
		return fmt.Errorf("kernel: row statistic of %v into %v computed in %v: %w", r.In, r.Out, r.Comp, backend.ErrNotSupported)
	case r.Pass > StatFinish:
		return fmt.Errorf("kernel: row statistic pass %d: %w", r.Pass, backend.ErrInvalidValue)
	case !pow2(r.Threads) || r.Threads < 32 || r.Threads > 1024:
		return fmt.Errorf("kernel: row statistic with %d threads a row: %w", r.Threads, backend.ErrInvalidValue)
	case !pow2(r.Items) || !pow2(r.Vec) || r.Items*r.Vec > 32 || r.Vec > 4 || r.Vec*r.In.Size() > 16 || r.Vec*r.Out.Size() > 16:
		return fmt.Errorf("kernel: row statistic with %d items of %d: %w", r.Items, r.Vec, backend.ErrInvalidValue)
	case r.OneTile && (r.Pass != StatFull || !r.Op.Transform()):
		return fmt.Errorf("kernel: OneTile for a %v pass of %v: %w", r.Pass, r.Op, backend.ErrInvalidValue)
	case (r.Weight || r.Bias) && r.Op != StatLayerNorm:
		return fmt.Errorf("kernel: weights for %v: %w", r.Op, backend.ErrInvalidValue)
	}
	return nil
}

// statArgs are a RowStat launch's parameters.
type statArgs struct {
	in, out, part, w, b        []byte
	rows, n, parts, chunk      int
	arg                        float64
	inSize, outSize, recordOff int
}

func statLaunchArgs(l *cpu.Launch, r *RowStat) statArgs {
	a := statArgs{
		rows: int(l.Uint64(3)), n: int(l.Uint64(4)), parts: int(l.Uint64(5)), chunk: int(l.Uint64(6)),
		arg: l.Float64(7), inSize: r.In.Size(), outSize: r.Out.Size(),
	}
	a.in = l.Mem(0)
	if r.Pass != StatPartial {
		a.out = l.Mem(1)
	}
	if r.Pass != StatFull {
		a.part = l.Mem(2)
	}
	if r.Weight {
		a.w = l.Mem(8)
	}
	if r.Bias {
		a.b = l.Mem(9)
	}
	return a
}

// CPU returns the kernel for the CPU backend: rows (or chunks) in parallel over the
// workers, each folded in order in the compute type.
func (r *RowStat) CPU() (func(*cpu.Launch) error, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.Comp == dtype.Float32 {
		return statCPU[float32](r), nil
	}
	return statCPU[float64](r), nil
}

// statFloat is a compute type of the row statistics.
type statFloat interface{ ~float32 | ~float64 }

// statState is a fold's state: moments (cnt, a = mean, b = M2) or softmax (a = m, b = s).
type statState[F statFloat] struct {
	cnt  int64
	a, b F
}

func statExp[F statFloat](x F) F {
	if unsafe.Sizeof(x) == 4 {
		return F(gomath.ExpF32(float32(x)))
	}
	return F(gomath.ExpF64(float64(x)))
}

func statLog[F statFloat](x F) F {
	if unsafe.Sizeof(x) == 4 {
		return F(gomath.LogF32(float32(x)))
	}
	return F(gomath.LogF64(float64(x)))
}

func statSqrt[F statFloat](x F) F { return F(math.Sqrt(float64(x))) } // exact in either type

// merge folds state o into s (both of the same kind).
func (s *statState[F]) merge(o statState[F], moments bool) {
	if moments {
		switch {
		case o.cnt == 0:
			return
		case s.cnt == 0:
			*s = o
			return
		}
		n := s.cnt + o.cnt
		d := o.a - s.a
		fb := F(o.cnt) / F(n)
		s.a = s.a + d*fb
		s.b = s.b + o.b + d*d*F(s.cnt)*fb
		s.cnt = n
		return
	}
	m := fp.Max(s.a, o.a)
	var t F
	if !math.IsInf(float64(s.a), -1) {
		t = s.b * statExp(s.a-m)
	}
	if !math.IsInf(float64(o.a), -1) {
		t += o.b * statExp(o.a-m)
	}
	s.a, s.b = m, t
	s.cnt += o.cnt
}

// fold returns the state of the values xs (a thread's tile, as the GPU forms it); k is
// the row's shift (moments).
func statFold[F statFloat](xs []F, moments bool, k F) statState[F] {
	if len(xs) == 0 {
		if moments {
			return statState[F]{}
		}
		return statState[F]{a: F(math.Inf(-1))}
	}
	if moments {
		var sum F
		for _, x := range xs {
			sum += x - k
		}
		mean := sum / F(len(xs))
		var m2 F
		for _, x := range xs {
			d := (x - k) - mean
			m2 += d * d
		}
		return statState[F]{cnt: int64(len(xs)), a: mean, b: m2}
	}
	m := F(math.Inf(-1))
	for _, x := range xs {
		m = fp.Max(m, x)
	}
	var s F
	if !math.IsInf(float64(m), -1) {
		for _, x := range xs {
			s += statExp(x - m)
		}
	}
	return statState[F]{cnt: int64(len(xs)), a: m, b: s}
}

// storeFloat stores v as element i of b (type t), rounding to nearest even; a NaN as
// the canonical NaN (internal/fp's policy, which the GPU's arithmetic follows).
func storeFloat[F statFloat](b []byte, t dtype.DType, i int, v F) {
	v = fp.Canon(v)
	switch t {
	case dtype.Float16:
		binary.LittleEndian.PutUint16(b[2*i:], dtype.Float16FromFloat32(float32(v)))
	case dtype.BFloat16:
		binary.LittleEndian.PutUint16(b[2*i:], dtype.BFloat16FromFloat32(float32(v)))
	case dtype.Float32:
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(v)))
	default:
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(v)))
	}
}

// rangeState folds elements [lo, hi) of row row: the values are converted in bulk, in
// blocks of statCPUBlock, each block folded as a GPU thread folds its tile, the blocks'
// states merged in order.
func rangeState[F statFloat](r *RowStat, a *statArgs, row, lo, hi int, buf []F) statState[F] {
	moments := r.Op.moments()
	st := statFold[F](nil, moments, 0)
	base := row * a.n
	k := rowShift[F](r, a, row)
	for b0 := lo; b0 < hi; b0 += statCPUBlock {
		b1 := min(b0+statCPUBlock, hi)
		buf = loadFloats(buf[:0], a.in, r.In, base+b0, base+b1)
		st.merge(statFold(buf, moments, k), moments)
	}
	return st
}

// rowShift returns K, the shift of row row's moments: its first element (0 for an
// empty row or a statistic without moments).
func rowShift[F statFloat](r *RowStat, a *statArgs, row int) F {
	if !r.Op.moments() || a.n == 0 {
		return 0
	}
	var one [1]F
	return loadFloats(one[:0], a.in, r.In, row*a.n, row*a.n+1)[0]
}

// statCPUBlock is the number of elements the CPU folds at once.
const statCPUBlock = 32

// loadFloats appends elements [lo, hi) of b (type t) as F to dst.
func loadFloats[F statFloat](dst []F, b []byte, t dtype.DType, lo, hi int) []F {
	switch t {
	case dtype.Float16:
		for i := lo; i < hi; i++ {
			dst = append(dst, F(dtype.Float16ToFloat32(binary.LittleEndian.Uint16(b[2*i:]))))
		}
	case dtype.BFloat16:
		for i := lo; i < hi; i++ {
			dst = append(dst, F(math.Float32frombits(uint32(binary.LittleEndian.Uint16(b[2*i:]))<<16)))
		}
	case dtype.Float32:
		for i := lo; i < hi; i++ {
			dst = append(dst, F(math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))))
		}
	default:
		for i := lo; i < hi; i++ {
			dst = append(dst, F(math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))))
		}
	}
	return dst
}

// finishValue returns a reduction's result from a row's state.
func finishValue[F statFloat](r *RowStat, st statState[F], arg float64) F {
	switch r.Op {
	case StatVar, StatStd:
		// NumPy's divisor, max(n - ddof, 0): M2/0 is +Inf, or NaN where M2 is 0.
		den := max(F(st.cnt)-F(arg), 0)
		v := st.b / den
		if r.Op == StatStd {
			v = statSqrt(v)
		}
		return v
	}
	m := st.a
	if math.IsInf(float64(m), 0) {
		m = 0
		// The sum with a shift of 0: +Inf for a +Inf in the row, 0 for all -Inf.
		if math.IsInf(float64(st.a), 1) {
			return st.a
		}
		return F(math.Inf(-1))
	}
	return m + statLog(st.b)
}

// writeRange writes a transform's outputs for elements [lo, hi) of row row from the
// row's state.
func writeRange[F statFloat](r *RowStat, a *statArgs, row, lo, hi int, st statState[F]) {
	base := row * a.n
	var c0, c1 F
	// Layer norm: ((x - K) - mean) where the GPU keeps the row's tile in registers,
	// shifted; x - (K + mean) where it loads the values again (statGen.writeRange).
	shift, center := F(0), st.a
	if r.Op == StatLayerNorm {
		if k := rowShift[F](r, a, row); r.Pass == StatFull && r.OneTile {
			shift = k
		} else {
			center = k + st.a
		}
	}
	switch r.Op {
	case StatSoftmax:
		c0 = 1 / st.b
	case StatLogSoftmax:
		c0 = st.a + statLog(st.b)
	case StatLayerNorm:
		v := F(0)
		if st.cnt > 0 {
			v = st.b / F(st.cnt)
		}
		c1 = 1 / statSqrt(v+F(a.arg))
	}
	var xs, ws, bs [statCPUBlock]F
	for b0 := lo; b0 < hi; b0 += statCPUBlock {
		b1 := min(b0+statCPUBlock, hi)
		x := loadFloats(xs[:0], a.in, r.In, base+b0, base+b1)
		var w, b []F
		if r.Weight {
			w = loadFloats(ws[:0], a.w, r.Out, b0, b1)
		}
		if r.Bias {
			b = loadFloats(bs[:0], a.b, r.Out, b0, b1)
		}
		for k, v := range x {
			var y F
			switch r.Op {
			case StatSoftmax:
				y = statExp(v-st.a) * c0
			case StatLogSoftmax:
				y = v - c0
			case StatLayerNorm:
				y = ((v - shift) - center) * c1
				if w != nil {
					y *= w[k]
				}
				if b != nil {
					y += b[k]
				}
			}
			storeFloat(a.out, r.Out, base+b0+k, y)
		}
	}
}

func getRecord[F statFloat](p []byte, i int, moments bool) statState[F] {
	b := p[i*StatRecord:]
	c := math.Float64frombits(binary.LittleEndian.Uint64(b))
	x := F(math.Float64frombits(binary.LittleEndian.Uint64(b[8:])))
	y := F(math.Float64frombits(binary.LittleEndian.Uint64(b[16:])))
	return statState[F]{cnt: int64(c), a: x, b: y}
}

func putRecord[F statFloat](p []byte, i int, st statState[F]) {
	b := p[i*StatRecord:]
	binary.LittleEndian.PutUint64(b, math.Float64bits(float64(st.cnt)))
	binary.LittleEndian.PutUint64(b[8:], math.Float64bits(float64(st.a)))
	binary.LittleEndian.PutUint64(b[16:], math.Float64bits(float64(st.b)))
}

func statCPU[F statFloat](r *RowStat) func(*cpu.Launch) error {
	return func(l *cpu.Launch) error {
		a := statLaunchArgs(l, r)
		moments := r.Op.moments()
		switch r.Pass {
		case StatFull:
			l.Parallel(a.rows, 1, func(lo, hi int) {
				buf := make([]F, 0, statCPUBlock)
				for row := lo; row < hi; row++ {
					st := rangeState(r, &a, row, 0, a.n, buf)
					if r.Op.Transform() {
						writeRange(r, &a, row, 0, a.n, st)
					} else {
						storeFloat(a.out, r.Out, row, finishValue(r, st, a.arg))
					}
				}
			})
		case StatPartial:
			l.Parallel(a.rows*a.parts, 1, func(lo, hi int) {
				buf := make([]F, 0, statCPUBlock)
				for b := lo; b < hi; b++ {
					row, p := b/a.parts, b%a.parts
					c0 := min(p*a.chunk, a.n)
					c1 := min(c0+a.chunk, a.n)
					putRecord(a.part, b, rangeState(r, &a, row, c0, c1, buf))
				}
			})
		case StatFinish:
			rowState := func(row int) statState[F] {
				st := statFold[F](nil, moments, 0)
				for p := 0; p < a.parts; p++ {
					st.merge(getRecord[F](a.part, row*a.parts+p, moments), moments)
				}
				return st
			}
			if !r.Op.Transform() {
				l.Parallel(a.rows, 1, func(lo, hi int) {
					for row := lo; row < hi; row++ {
						storeFloat(a.out, r.Out, row, finishValue(r, rowState(row), a.arg))
					}
				})
				return nil
			}
			l.Parallel(a.rows*a.parts, 1, func(lo, hi int) {
				for b := lo; b < hi; b++ {
					row, p := b/a.parts, b%a.parts
					c0 := min(p*a.chunk, a.n)
					c1 := min(c0+a.chunk, a.n)
					writeRange(r, &a, row, c0, c1, rowState(row))
				}
			})
		}
		return nil
	}
}
