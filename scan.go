package gpu

import (
	"fmt"
	"slices"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Scans (cumulative sums, products, maxima and minima, and Accumulate with any
// associative operator) along one axis, as numpy.cumsum, numpy.cumprod,
// numpy.maximum.accumulate and numpy.minimum.accumulate, and Julia's accumulate.
//
// The result is a new contiguous array of the input's shape. Types follow NumPy: the
// result type R is the accumulator (NumPy's dtype argument): every element is converted
// to R first (with the conversion rules of package expr) and combined in R. NumPy's
// default for sums and products is AccumType(T): int64 for bool and signed integers,
// uint64 for unsigned integers, T itself for floats, so CumSum[int64] of an int32 array
// is NumPy's cumsum, which never overflows where int32 would. Integer overflow wraps as
// in Go. Float16 and BFloat16 accumulate in float32: a result of a half type holds the
// float32 running values each rounded once (CumSum[float32] of a half array keeps
// them), where NumPy rounds every partial sum to the half type (float16 [2048, 1, 1]:
// [2048, 2048, 2050] here, [2048, 2048, 2048] in NumPy). CumMax and CumMin keep T and
// propagate NaN (numpy.maximum: from the first NaN on, every element is the canonical
// NaN, the package's NaN policy), with -0 below +0; a float sum or product that is NaN
// is the canonical NaN too. That holds for the first element of a row as well (a row of
// length 1 included), which is the element itself, and for a NaN initial value
// (ExclusiveFrom): the built-in operators' float results never carry a NaN's payload or
// sign.
//
// On CUDA, scans of contiguous rows (1-D arrays, the last axis, and axes followed by at
// most 8 elements) run in a single pass over the data with decoupled look-back
// (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back",
// NVIDIA NVR-2016-002, 2016): tiles of up to 4096 elements take their numbers from an
// atomic counter, publish their aggregate and then their inclusive prefix with flags,
// and later tiles combine the published values of their predecessors. Other axes map
// threads to the kept columns and loop along the scanned axis (coalesced), with long
// axes cut into chunks linked by the same look-back per column. A scan is one kernel
// launch: when the axis has more than one tile, the tiles' status lives in a scratch
// that the stream keeps and the kernel leaves zero, or, past 32 KiB (and on the CPU
// backend), in a zeroed buffer from the pool. Strided inputs that the kernels can't
// address directly are copied to a contiguous array first.
//
// Float results depend on the association: the GPU combines within a thread, then
// across a warp, a block, and tiles; the CPU folds left to right within chunks of 65536
// elements and combines chunk totals in order, the same on any number of cores.
// Integer scans and CumMax/CumMin are exact and identical on every backend, NaNs
// included.

// Op is the associative operator of Accumulate: OpSum, OpProd, OpMax, OpMin, or an
// expression of the names a (the combination of the earlier elements) and b (the next
// element), both of the accumulator type, in the language of Eval ("a + 2*b" is not
// associative and gives unspecified results; "maximum(a, b)", "a | b", "a & b" are).
// The expression's result is converted to the accumulator type. The reductions
// (ReduceInto, MapReduce) take only the named operators (and OpAny, OpAll): an
// expression there is an error wrapping ErrNotSupported.
type Op string

// The built-in operators.
const (
	OpSum  Op = "a + b"
	OpProd Op = "a * b"
	OpMax  Op = "maximum(a, b)"
	OpMin  Op = "minimum(a, b)"
)

// ScanOption is an option of a scan.
type ScanOption func(*scanOptions)

type scanOptions struct {
	exclusive bool
	from      bool // ExclusiveFrom: init is the initial value
	init      any
}

// Exclusive makes a scan exclusive: element k combines the elements before k, starting
// from the operator's identity (0 for sums, 1 for products, the lowest value or -Inf
// for CumMax, the highest or +Inf for CumMin), so element 0 is the identity. For an
// expression operator, use ExclusiveFrom.
func Exclusive() ScanOption { return func(o *scanOptions) { o.exclusive = true } }

// ExclusiveFrom makes a scan exclusive starting from init (a Go number or bool,
// converted to the accumulator type): element 0 is init, element k is init combined
// with the elements before k. For an integer accumulator, init must be one of its
// values (ErrInvalidValue otherwise: no wrapping, no truncation of a fraction).
func ExclusiveFrom(init any) ScanOption {
	return func(o *scanOptions) { o.exclusive, o.from, o.init = true, true, init }
}

// AccumType returns NumPy's accumulator type for sums and products of t: Int64 for Bool
// and the signed integers, Uint64 for the unsigned ones, t for floats.
func AccumType(t dtype.DType) dtype.DType {
	switch {
	case t == dtype.Bool || t.IsSigned():
		return dtype.Int64
	case t.IsUnsigned():
		return dtype.Uint64
	}
	return t
}

// CumSum returns the cumulative sums of a along axis (negative counts from the end),
// accumulated in R (numpy.cumsum(a, axis, dtype=R); NumPy's default R is AccumType(T)).
// On CUDA a long float scan adds the tiles' partial sums in an order that depends on
// timing (decoupled look-back: Merrill & Garland 2016), so two runs may differ in the
// last bits, by roundings of the largest partial sums (as CUB's scans do); integer
// scans give the same result every run. Floats into an integer R are refused (an
// error wrapping ErrInvalidValue), as Sum's: convert first (Astype).
//
//	c, err := gpu.CumSum[float32](s, x, 0)
//	n, err := gpu.CumSum[int64](s, counts32, -1, gpu.Exclusive())
func CumSum[R, T Elem](s *Stream, a *Array[T], axis int, opts ...ScanOption) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	return Accumulate[R](s, a, OpSum, axis, opts...)
}

// CumProd returns the cumulative products of a along axis, accumulated in R
// (numpy.cumprod). Floats into an integer R are refused, as CumSum's.
func CumProd[R, T Elem](s *Stream, a *Array[T], axis int, opts ...ScanOption) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	return Accumulate[R](s, a, OpProd, axis, opts...)
}

// CumMax returns the running maximum of a along axis (numpy.maximum.accumulate):
// the canonical NaN from the first NaN on; bools combine with "or".
func CumMax[T Elem](s *Stream, a *Array[T], axis int, opts ...ScanOption) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	return Accumulate[T](s, a, OpMax, axis, opts...)
}

// CumMin returns the running minimum of a along axis (numpy.minimum.accumulate):
// the canonical NaN from the first NaN on; bools combine with "and".
func CumMin[T Elem](s *Stream, a *Array[T], axis int, opts ...ScanOption) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	return Accumulate[T](s, a, OpMin, axis, opts...)
}

// Accumulate returns the scan of a along axis with the associative operator op,
// accumulated in R (Julia's accumulate(op, a; dims), NumPy's ufunc.accumulate). On
// Bool accumulators OpSum and OpMax are "or", OpProd and OpMin "and". An expression
// operator has Eval's semantics: on CUDA it is lowered into the scan kernels by the
// elementwise generator (an expression it can't lower is an error wrapping
// ErrNotSupported); on the CPU it runs through the expression interpreter, one call
// per element (slow: prefer the built-in operators). Its results are the expression's,
// and the first element of a row (or ExclusiveFrom's init) is the value itself,
// converted to R: a NaN there keeps its bits, as Eval's moves do (the built-in
// operators make it the canonical NaN). Floats into an integer R are refused (an
// error wrapping ErrInvalidValue; NumPy's same_kind casting), whatever op: convert
// first (Astype).
func Accumulate[R, T Elem](s *Stream, a *Array[T], op Op, axis int, opts ...ScanOption) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if nd := len(a.shape); axis < -nd || axis >= nd {
		return nil, fmt.Errorf("gpu: scan axis %d of a %d-d array: %w", axis, nd, ErrInvalidValue)
	}
	out, err := Empty[R](s, a.shape...)
	if err != nil {
		return nil, err
	}
	if err := accumulate(s, out, a, op, axis, opts); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// AccumulateInto is Accumulate writing into out, an array of a's shape (any view
// that isn't broadcast; NumPy's out argument). out must not share memory with a.
func AccumulateInto[R, T Elem](s *Stream, out *Array[R], a *Array[T], op Op, axis int, opts ...ScanOption) error {
	if err := nonNil(out, a); err != nil {
		return err
	}
	if !slices.Equal(out.shape, a.shape) {
		return fmt.Errorf("gpu: scan of shape %v into shape %v: %w", a.shape, out.shape, ErrInvalidValue)
	}
	if out.hasZeroStride() {
		return fmt.Errorf("gpu: scan into a broadcast view: %w", ErrInvalidValue)
	}
	if out.buf.a == a.buf.a {
		return fmt.Errorf("gpu: scan into an array sharing memory with its input: %w", ErrInvalidValue)
	}
	if out.IsContiguous() {
		return accumulate(s, out, a, op, axis, opts)
	}
	tmp, err := Empty[R](s, a.shape...)
	if err != nil {
		return err
	}
	defer tmp.Free()
	if err := accumulate(s, tmp, a, op, axis, opts); err != nil {
		return err
	}
	return Copy(s, out, tmp)
}

// accumulate scans a into the contiguous out.
func accumulate[R, T Elem](s *Stream, out *Array[R], a *Array[T], op Op, axis int, opts []ScanOption) error {
	var o scanOptions
	for _, f := range opts {
		if f == nil {
			return fmt.Errorf("gpu: a nil ScanOption: %w", ErrInvalidValue)
		}
		f(&o)
	}
	// Scans of floats into integers are refused, as Sum's and Prod's (NumPy's same_kind
	// casting: numpy.cumsum(a, dtype=int32), numpy.maximum.accumulate(a, dtype=int32)):
	// each element would be truncated first.
	if r := dtype.Of[R](); a.dt.IsFloat() && r.IsInteger() {
		name := "scan (" + string(op) + ")"
		switch op {
		case OpSum:
			name = "cumulative sum"
		case OpProd:
			name = "cumulative product"
		}
		return fmt.Errorf("gpu: %s of %v in %v: convert first (Astype): %w", name, a.dt, r, ErrInvalidValue)
	}
	// A half-precision result accumulates in float32, rounded once per element.
	rt, _ := redAcc(dtype.Of[R]())
	comb, err := scanCombine(op, rt)
	if err != nil {
		return err
	}
	nd := len(a.shape)
	if axis < 0 {
		axis += nd
	}
	if axis < 0 || axis >= nd {
		return fmt.Errorf("gpu: scan axis %d of a %d-d array: %w", axis, nd, ErrInvalidValue)
	}
	var init uint64
	if o.exclusive {
		if o.from {
			if init, err = scanScalarBits(o.init, rt); err != nil {
				return err
			}
		} else if id, ok := comb.Identity(); ok {
			init = id
		} else {
			return fmt.Errorf("gpu: exclusive scan with operator %q needs an initial value (ExclusiveFrom): %w", op, ErrInvalidValue)
		}
	}
	return scanInto(s, out.header(), a.header(), comb, axis, o.exclusive, init)
}

// scanCombine parses op for accumulator type t.
func scanCombine(op Op, t dtype.DType) (kernel.Combine, error) {
	if k, ok := namedOps[op]; ok && (t == dtype.Bool || op != OpAny && op != OpAll) {
		return kernel.Combine{Op: k, Type: t}, nil
	}
	env := expr.Env{"a": expr.OperandDecl(0, t), "b": expr.OperandDecl(1, t)}
	e, err := expr.Parse(string(op), env)
	if err != nil {
		return kernel.Combine{}, fmt.Errorf("%w (%w)", err, ErrInvalidValue)
	}
	if e.DType() != t {
		e = e.Convert(t)
	}
	return kernel.Combine{Type: t, Expr: e}, nil
}

// scanScalarBits converts a Go number or bool to t (Cast's rules) and returns its bits.
func scanScalarBits(v any, t dtype.DType) (uint64, error) {
	_, vt, bits, err := scalarDecl(0, v)
	if err != nil {
		return 0, fmt.Errorf("gpu: initial value: %w", err)
	}
	x := expr.ScalarFromBits(vt, bits)
	c := x.Convert(t)
	back := c.Convert(vt)
	// A float must come back equal (so -0 is 0, and NaN and fractions fail), anything
	// else bit for bit.
	changed := back.Bits() != x.Bits()
	if vt.IsFloat() {
		changed = back.Float64() != x.Float64()
		if t.IsInteger() {
			// The round trip can't see a saturated conversion where t's largest value
			// rounds to the float past it (MaxInt64 comes back as 2^63): compare with
			// t's range, whose ends are exact in float64.
			f := x.Float64()
			lo, hi := t.IntRange()
			changed = changed || !(f >= lo && f < hi)
		}
	}
	if t.IsInteger() && (changed || scalarNegative(c) != scalarNegative(x)) {
		return 0, fmt.Errorf("gpu: initial value %v is not a value of the accumulator type %v: %w", v, t, ErrInvalidValue)
	}
	return c.Bits(), nil
}

// scalarNegative reports whether x is below zero.
func scalarNegative(x expr.Scalar) bool {
	switch t := x.DType(); {
	case t.IsFloat():
		return x.Float64() < 0
	case t.IsSigned():
		return x.Int64() < 0
	}
	return false
}

// scanInto scans in along axis into out (contiguous, in's shape, comb's type or a
// half-precision type for a float32 comb).
func scanInto(s *Stream, out, in *header, comb kernel.Combine, axis int, excl bool, init uint64) error {
	if err := nilStream(s); err != nil {
		return err
	}
	d := s.dev
	tu := d.tuning()
	if in.buf.a.dev != d && in.buf.a.dev.info.Backend != d.info.Backend {
		return fmt.Errorf("gpu: scan of an array on %v on a stream of %v: %w", in.buf.a.dev, d, ErrInvalidValue)
	}
	outer, n, inner := prod(in.shape[:axis]), in.shape[axis], prod(in.shape[axis+1:])
	if outer*n*inner == 0 {
		return nil
	}
	so, okO := scanCollapseStride(in.shape[:axis], in.strides[:axis])
	sj, okJ := scanCollapseStride(in.shape[axis+1:], in.strides[axis+1:])
	sk := in.strides[axis]
	// Rows of at least a block's worth of elements go to the tile kernel; shorter
	// rows are better served by a thread each.
	tiles := inner <= kernel.MaxScanGroup && n*inner >= kernel.ScanTilesBlock
	contig := contiguous(in.shape, in.strides)
	if (tiles && !contig) || !okO || !okJ {
		c, err := copyOf(s, in)
		if err != nil {
			return err
		}
		defer c.buf.Free()
		in = c
		so, sk, sj = n*inner, inner, 1
	}
	if tiles {
		so, sk, sj = n*inner, inner, 1
	}
	if tiles {
		sp := &kernel.ScanTiles{In: in.dt, Comb: comb, Exclusive: excl, Group: inner}
		rowLen := n * inner
		outT := kernel.ScanOutType(comb.Type, out.dt)
		sp.Out = outT
		kmax := 16
		if comb.Type.Size() == 8 {
			kmax = 8
		}
		tune := tu.Scan
		if tune.Variant == 2 && (comb.Type.Size() == 4 || comb.Type.Size() == 8) && outT == dtype.Invalid {
			// The second variant: twice the items per thread (tiles of 8192 4-byte or
			// 4096 8-byte values), so twice the bytes in flight per thread and half the
			// tiles (atomics, look-backs, barriers) per byte. (Not for a half-precision
			// output, which isn't staged: 32 values a thread would spill.)
			kmax *= 2
		}
		// The largest multiple of the group up to kmax, preferring thread chunks of a
		// multiple of 16 bytes (vector accesses).
		kfull := max(inner, kmax/inner*inner)
		for k := kfull; k >= inner; k -= inner {
			if k*comb.Type.Size()%16 == 0 {
				kfull = k
				break
			}
		}
		if inner > 4 {
			kfull = inner // registers: the warp scan moves inner values per lane
		}
		// Shorter rows take fewer items per thread: the groups per thread that cover the
		// row, rounded up to a power of two so that rows of any length share a handful of
		// kernels (each distinct kernel is a compilation, tens of milliseconds).
		perThread := (rowLen + kernel.ScanTilesBlock - 1) / kernel.ScanTilesBlock
		groups := 1
		for groups*inner < perThread {
			groups *= 2
		}
		k := min(kfull, groups*inner)
		sp.Items = k
		sp.Lookback = tune.Lookback
		sp.Stage = tune.Stage && sp.CanStage()
		if inner == 1 {
			sp.MinBlocks = tune.MinBlocks
		}
		ptr := func(h *header) uint64 { return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size()) }
		sp.Vector = ptr(in)%16 == 0 && ptr(out)%16 == 0 &&
			(outer == 1 || (rowLen*in.dt.Size()%16 == 0 && rowLen*out.dt.Size()%16 == 0))
		tile := sp.Tile()
		tpr := (rowLen + tile - 1) / tile
		ntiles := outer * tpr
		if ntiles > 1<<31-1 {
			return fmt.Errorf("gpu: scan of %d tiles: %w", ntiles, ErrNotSupported)
		}
		fn, err := d.kernel(sp)
		if err != nil {
			return err
		}
		status, err := scanStatus(s, tu, tpr == 1, sp.StatusBytes(ntiles))
		if err != nil {
			return err
		}
		defer status.release(true)
		cfg := LaunchConfig{Grid: Dim3{X: ntiles}, Block: Dim3{X: kernel.ScanTilesBlock}}
		return s.Launch(fn, cfg, In(in), Out(out), status.argument(),
			uint64(outer), uint64(rowLen), uint64(tpr), init)
	}
	sp := &kernel.ScanColumns{In: in.dt, Comb: comb, Out: kernel.ScanOutType(comb.Type, out.dt), Exclusive: excl, Groups: 8, Rows: 16}
	if n <= sp.Rows {
		sp.Groups, sp.Rows = 1, n
	}
	cols := outer * inner
	colBlocks := (cols + sp.Width() - 1) / sp.Width()
	chunks := (n + sp.TileRows() - 1) / sp.TileRows()
	ntiles := colBlocks * chunks
	if ntiles > 1<<31-1 {
		return fmt.Errorf("gpu: scan of %d tiles: %w", ntiles, ErrNotSupported)
	}
	fn, err := d.kernel(sp)
	if err != nil {
		return err
	}
	status, err := scanStatus(s, tu, chunks == 1, sp.StatusBytes(ntiles))
	if err != nil {
		return err
	}
	defer status.release(true)
	cfg := LaunchConfig{Grid: Dim3{X: ntiles}, Block: Dim3{X: kernel.ScanColumnsBlock}}
	return s.Launch(fn, cfg, In(in), Out(out), status.argument(),
		uint64(outer), uint64(n), uint64(inner), int64(so), int64(sk), int64(sj), uint64(chunks), init)
}

// scanStatus returns the status scratch of a scan launch of size bytes, zero: the
// stream's pooled scratch when the kernels leave it zero (kernel.ScanTiles and
// ScanColumns clear a status of at most kernel.ScanSelfCleanMax bytes past its header,
// and never touch an unused one, which is then 16 bytes) and the tuning keeps statuses
// (Tuning.ScanKeepStatus), else a zeroed buffer. The launch leaves it clean either way.
func scanStatus(s *Stream, tu *Tuning, unused bool, size int) (*scratch, error) {
	if unused {
		return s.scratch(scratchScanStatus, 16, true)
	}
	return s.scratch(scratchScanStatus, size, tu.ScanKeepStatus && size-16 <= kernel.ScanSelfCleanMax)
}

// scanCollapseStride returns the single stride that walks the dimensions shape (with
// strides st) in row-major order, and false if there is none.
func scanCollapseStride(shape, st []int) (int, bool) {
	stride, ok := 0, true
	first := true
	want := 0
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] == 1 {
			continue
		}
		if first {
			stride, want, first = st[d], st[d]*shape[d], false
			continue
		}
		if st[d] != want {
			ok = false
		}
		want = st[d] * shape[d]
	}
	return stride, ok
}

// The row scan's tuning (Tuning.Scan, ScanTuning in tuning.go): the measurements
// behind its defaults.
//
// Measured on the H200 (BenchmarkCumSumTuned, one run, 1-D CumSum of 2^28 float32 /
// 2^27 int64, median us): v2 913 / 1296; v2 Stage 889 / 1210; v2 Stage MinBlocks 5 865
// / 1088; MinBlocks 6 975 / 1168; Lookback 2 with Stage 885 / 1159, Lookback 4 945 /
// 1197, Lookback 8 1103 / 1304 (wider look-backs cost more than the round trips they
// save); v1 Stage Lookback 2 910 / 1241. These figures predate the packed status of
// 8-byte accumulators with Stage (two words, no fence: one round trip per look-back
// instead of two), which took gpubench's 1-D CumSum of 2^28 int64 from 1.91 ms to 1.40
// ms (72.5% of the device copy; 2^28 float32 in the same run: 726 us, 69.9%).
//
// Four more designs were built, passed the simulator, CUDA, memcheck and racecheck,
// and were measured slower, so they were not kept (H200, 2026-11-30 session 4,
// BenchmarkCumSumTuned, 1-D CumSum of 2^28 float32 / 2^27 int64, us; the default in the
// same runs 737-740 / 715-732, the device copy 514-520; the outputs are in
// docs/benchmarks/h200-2026-11-30-s4-scan.txt):
//
//   - warp tiles: each warp a tile of 32*Items elements with its own look-back and no
//     block barrier after the tile number: 935-1089 / 1016-1398 with windows of 32,
//     3600-3850 / 6960-7110 with the wide look-back (Lookback 4 or 8);
//   - persistent blocks: a grid of the resident blocks, each looping over tiles from
//     the counter and issuing the next tile's loads before the look-back and stores of
//     the current one: 894 / 892 at 3 blocks an SM (78 registers), 1027 / 832 at 4,
//     1412 / 1322 at 5 (spills); 1110-1889 / 1050-2981 with 16 float32 a thread;
//   - blocks of 512 or 1024 threads (tiles of 16384 or 32768 float32, the staging area
//     in dynamic shared memory): 777-971 / 753-1028 with 512, 909-919 / 998-1011 with
//     1024; 780-804 / 773-906 with 16 float32 a thread;
//   - two passes in persistent blocks: each block reads a new tile and publishes its
//     aggregate at once, then looks back for the tile it took before and reads that
//     again (from L2) to scan and store it, so that no aggregate waits for another
//     tile: 931-946 / 930-957, and 759-806 / 790-878 with 16 float32 a thread (the
//     default 740 / 732 in that run); 16384 rows of 16384 float32 910 us against 632.
//
// So neither more tiles in flight nor fewer, larger tiles helped, nor aggregates
// published without waiting. (Session 6: for small 1-D scans, fewer items per thread,
// so more and shorter tiles, made the kernel slower too: 512000 float32 and int64,
// Nsight Compute's kernel time 7.7-8.1 us with the default 63 tiles, 8.7-9.2 with 125,
// 8.0-9.9 with 250, 8.9-10.5 with 500, 13.1-13.8 with 1000.) Nor is the length of
// the chain of look-backs the cost: BenchmarkCumSumRows (same session) scans 2^28
// float32 as k rows, k chains each k times shorter and started k times less often, in
// 727, 727, 728, 728, 729 and 720 us for k = 1, 2, 4, 8, 32 and 128; only where a
// row's look-backs reach its first tile, which publishes its inclusive prefix at once,
// does it get faster: 673 us at 1024 rows (32 tiles a row), 640 at 16384 (2 tiles),
// against a copy of 513. A tile's prefix needs every earlier tile's aggregate, so one
// late tile (loads still in flight) holds up the look-backs of all the tiles after it
// in its row; rows bound how far that reaches.
//
