package gpu

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Scatters: Put, PutAlongAxis, PutMask, AddAt, MaximumAt, MinimumAt, Bincount (the
// kernel: kernel.Scatter). Reproducibility: see Deterministic. Contention (the choice
// is by the destination's size, Tuning.ScatterVariant has the others): when the
// destination is small (at most 32 KiB) each block accumulates into copies of it in
// shared memory, one per thread for up to 32 4-byte elements (no atomics at all) or
// one per group of lanes, and adds them to it at the end, so that few distinct targets
// (a histogram of 8 bins) don't serialize on a few addresses; into a larger one, the
// updates go straight to global atomics (red.global), except in the warps whose vote
// finds neighbouring updates with one target (sorted indices, few distinct ones),
// which first combine the updates of their lanes that share a target (match.any, then
// a tree of shuffles: Westphal, "Voting and Shuffling to Optimize Atomic Operations",
// NVIDIA 2015).

// Deterministic makes the float sums of AddAt and BincountWeights reproducible.
//
// On the GPU, updates to one element from different threads combine through atomic
// operations in an order that varies from run to run. Integer sums, maximum and minimum
// don't depend on it, but float sums round differently from run to run (as PyTorch's
// index_add_ and CuPy's add.at do), and which of duplicate Put targets' values wins
// varies too. Under Deterministic (or SetDeterministic(true) for every call,
// PyTorch's use_deterministic_algorithms), float sums are computed in fixed point
// relative to each target's largest update, with integer atomics, whose order doesn't
// matter, and rounded once into the destination: the same bits on every run and on
// both backends, within n*2^-(94-bits(n)) of the largest update's magnitude of the
// exact sum (more accurate than a float32 sum), at about three times the cost and 24
// bytes of scratch per destination element (kernel.FixedFinish has the details). The
// CPU backend applies updates one by one in index order, as NumPy does, with or without
// it; its deterministic sums are the GPU's bits.
func Deterministic() IndexOption { return func(c *indexConfig) { c.deterministic = true } }

// SetDeterministic makes every later float scatter-sum deterministic, as if given
// Deterministic (PyTorch's torch.use_deterministic_algorithms), and returns the
// previous setting. It is process-wide.
func SetDeterministic(on bool) bool { return deterministicAll.Swap(on) }

// Bins makes Bincount return exactly n bins without reading the largest value first
// (no wait for the device: the call is asynchronous); a value outside [0, n) is then an
// error like ModeRaise's, reported by a later wait (see ErrIndexOutOfRange). n must be
// at least Bincount's minlength (the result has at least minlength bins, as
// numpy.bincount's): Bins(4) with minlength 10 is an error wrapping ErrInvalidValue.
func Bins(n int) IndexOption {
	return func(c *indexConfig) {
		if n < 0 {
			c.bad = fmt.Errorf("gpu: Bins(%d): %w", n, ErrInvalidValue)
		}
		c.bins = n
		c.hasBins = true
	}
}

// scatterJob is one scatter: for each update of the iteration shape, dst at do(i) +
// k*ast combines with vals at vo(i) (nil vals: 1).
type scatterJob struct {
	dst, vals, idx *header
	shape          []int
	dstSt, valSt   []int
	idxSt          []int
	l, ast         int
	op             kernel.Op
	mode           kernel.IndexMode
	deterministic  bool
	what           string
	checkEmpty     bool // where no element moves, ModeRaise still checks the indices (checkIndicesOnly), as numpy's ufunc.at does
}

// run enqueues the scatter on s.
func (j *scatterJob) run(s *Stream) error {
	n := prod(j.shape)
	if n == 0 {
		if j.checkEmpty {
			return checkIndicesOnly(s, j.idx, j.l, j.mode, j.what)
		}
		return nil
	}
	if j.l == 0 {
		return fmt.Errorf("gpu: %s: a non-empty scatter into an empty axis: %w", j.what, ErrIndexOutOfRange)
	}
	// Values or indices sharing the destination's memory are read from a copy (NumPy
	// buffers overlapping operands of ufunc.at too).
	for _, p := range []**header{&j.vals, &j.idx} {
		if *p != nil && (*p).buf.a == j.dst.buf.a {
			c, err := copyOf(s, *p)
			if err != nil {
				return err
			}
			defer c.buf.Free()
			if p == &j.vals {
				j.valSt = broadcastedLike(j.valSt, (*p).strides, c.strides, (*p).shape)
			} else {
				j.idxSt = broadcastedLike(j.idxSt, (*p).strides, c.strides, (*p).shape)
			}
			*p = c
		}
	}
	vt := dtype.Invalid
	if j.vals != nil {
		vt = j.vals.dt
	}
	if j.deterministic && j.op == kernel.OpSum && j.dst.dt.IsFloat() {
		return j.runFixed(s, n, vt)
	}
	sp, args, word, err := j.spec(s, n, vt)
	if err != nil {
		return err
	}
	if j.op != kernel.ScatterStore && s.dev.info.Backend == "cuda" && s.dev.info.ComputeMajor < 7 {
		sp.NoWarp = true
	}
	// Shared bins when the destination is small and updates many.
	lo, hi := j.dstExtent(sp)
	if j.op != kernel.ScatterStore && lo >= 0 && hi < kernel.ScatterMaxBins(j.dst.dt) && contiguous(j.dst.shape, j.dst.strides) {
		bins := hi + 1
		grid, _ := (&kernel.Scatter{Bins: 1}).Geometry(n, s.dev.info.Multiprocessors)
		if grid*bins <= n/8 {
			sp.Bins = bins
		}
	}
	scatterVariant(sp, s.dev.tuning().ScatterVariant)
	return j.launch(s, sp, n, args, word)
}

// broadcastedLike returns the iteration strides st of an operand (strides old, shape)
// for its copy's strides: each axis's old stride replaced by the new one.
func broadcastedLike(st, old, new, shape []int) []int {
	m := map[int]int{}
	for d, v := range old {
		if shape[d] > 1 {
			m[v] = new[d]
		}
	}
	out := make([]int, len(st))
	for i, v := range st {
		if v != 0 {
			out[i] = m[v]
		}
	}
	return out
}

// dstExtent returns the lowest and highest destination offsets the scatter reaches.
func (j *scatterJob) dstExtent(sp *kernel.Scatter) (lo, hi int) {
	lo, hi = extent(j.shape, j.dstSt)
	if j.ast < 0 {
		lo += (j.l - 1) * j.ast
	} else {
		hi += (j.l - 1) * j.ast
	}
	return lo, hi
}

// spec returns the scatter's spec (collapsed layout) and launch arguments after the
// error word's slot, and the error word (raise mode).
func (j *scatterJob) spec(s *Stream, n int, vt dtype.DType) (*kernel.Scatter, []uint64, *Buffer, error) {
	valSt := j.valSt
	if j.vals == nil {
		valSt = make([]int, len(j.shape))
	}
	shape, st := kernel.Collapse(j.shape, [][]int{j.dstSt, valSt, j.idxSt})
	dstSt, vSt, iSt := st[0], st[1], st[2]
	sp := &kernel.Scatter{Dst: j.dst.dt, Val: vt, Index: j.idx.dt, Mode: j.mode, Op: j.op, Rank: len(shape), Ones: j.vals == nil}
	big := func(lo, hi int) bool { return hi >= math.MaxInt32 || -lo >= math.MaxInt32 }
	lo, hi := extent(shape, dstSt)
	if j.ast < 0 {
		lo += (j.l - 1) * j.ast
	} else {
		hi += (j.l - 1) * j.ast
	}
	sp.Index64 = n >= math.MaxInt32 || big(lo, hi) || big(extent(shape, vSt)) || big(extent(shape, iSt))
	if len(shape) == 1 && dstSt[0] == 0 && iSt[0] == 1 && (vSt[0] == 1 || j.vals == nil) {
		sp.Rank = 0
		sp.Vector = headerPtr(j.idx)%16 == 0 && (j.vals == nil || headerPtr(j.vals)%16 == 0)
		if sp.Vector && sp.Op == kernel.ScatterStore && s.dev.tuning().PutVariant == 2 {
			sp.Variant = 2
		}
	}
	args := make([]uint64, 0, 3+4*sp.Rank+2)
	args = append(args, uint64(n), uint64(j.l), uint64(j.ast))
	if sp.Rank > 0 {
		for _, st := range [][]int{shape, dstSt, vSt, iSt} {
			for _, v := range st {
				args = append(args, uint64(v))
			}
		}
	}
	var word *Buffer
	if sp.Mode.Records() {
		var err error
		if word, err = s.checkSlot(); err != nil {
			return nil, nil, nil, err
		}
	}
	return sp, args, word, nil
}

// launch enqueues sp with dst, vals, idx, the error word and args (64-bit scalars),
// and registers the word.
func (j *scatterJob) launch(s *Stream, sp *kernel.Scatter, n int, args []uint64, word *Buffer) error {
	return j.launchInto(s, sp, n, j.dst, nil, args, word, true)
}

// launchInto is launch into dst, or into the scratch buffer scr where dst is nil;
// register false leaves the word to a later launch.
func (j *scatterJob) launchInto(s *Stream, sp *kernel.Scatter, n int, dst *header, scr *Buffer, args []uint64, word *Buffer, register bool) error {
	fn, err := s.dev.kernel(sp)
	var cfg backend.LaunchConfig
	if err == nil {
		cfg, err = s.dev.geometry(sp, n).backend()
	}
	if err != nil {
		if word != nil && register {
			s.dev.checkSlots.put(word)
		}
		return err
	}
	la := newLaunchArgs()
	if dst != nil {
		la.hdr(dst, ReadWrite)
	} else {
		la.buf(scr, ReadWrite)
	}
	if j.vals != nil {
		la.hdr(j.vals, Read)
	} else {
		la.null()
	}
	la.hdr(j.idx, Read)
	if word != nil {
		la.buf(word, Write)
	} else {
		la.null()
	}
	for _, v := range args {
		la.u64(v)
	}
	if err := la.launch(s, fn, cfg); err != nil {
		if word != nil && register {
			s.dev.checkSlots.put(word)
		}
		return err
	}
	if word != nil && register {
		s.addIndexCheck(word, j.what)
	}
	return nil
}

// runFixed is the deterministic float sum (kernel.FixedFinish): the exponent pass, the
// fixed-point pass and the finish, through a scratch of 24 bytes per destination
// element, on a contiguous destination (a copy of a view that isn't).
func (j *scatterJob) runFixed(s *Stream, n int, vt dtype.DType) error {
	dst := j.dst
	if !contiguous(dst.shape, dst.strides) {
		tmp, err := copyOf(s, dst)
		if err != nil {
			return err
		}
		defer tmp.buf.Free()
		// The destination offsets of the copy: its row-major strides for the view's.
		k := *j
		k.dst = tmp
		k.dstSt, k.ast = remapStrides(j, dst, tmp)
		if err := k.runFixed(s, n, vt); err != nil {
			return err
		}
		return evalIntoHeader(s, dst, tmp)
	}
	T := prod(dst.shape)
	scratch, err := s.Alloc(int64(24 * T))
	if err != nil {
		return err
	}
	defer scratch.Free()
	e, err := scratch.Slice(0, int64(4*T))
	if err != nil {
		return err
	}
	if err := s.Memset(e, 0xff); err != nil {
		return err
	}
	rest, err := scratch.Slice(int64(4*T), int64(20*T))
	if err != nil {
		return err
	}
	if err := s.Memset(rest, 0); err != nil {
		return err
	}
	sp, args, word, err := j.spec(s, n, vt)
	if err != nil {
		return err
	}
	sp.Dst, sp.Op, sp.Fixed = dtype.Int32, kernel.OpMax, kernel.FixedExp
	if T <= kernel.ScatterMaxBins(dtype.Int32) {
		grid, _ := (&kernel.Scatter{Bins: 1}).Geometry(n, s.dev.info.Multiprocessors)
		if grid*T <= n/8 {
			sp.Bins = T
		}
	}
	variant := s.dev.tuning().ScatterVariant
	scatterVariant(sp, variant)
	if err := j.launchInto(s, sp, n, nil, scratch, args, word, false); err != nil {
		if word != nil {
			s.dev.checkSlots.put(word)
		}
		return err
	}
	shift := kernel.FixedShift(n)
	sp2 := *sp
	sp2.Dst, sp2.Op, sp2.Fixed, sp2.Bins, sp2.Copies = dtype.Int64, kernel.OpSum, kernel.FixedAcc, 0, 0
	scatterVariant(&sp2, variant)
	if err := j.launchInto(s, &sp2, n, nil, scratch, append(args, uint64(T), uint64(shift)), word, true); err != nil {
		return err
	}
	fin := &kernel.FixedFinish{Dst: dst.dt}
	fn, err := s.dev.kernel(fin)
	if err != nil {
		return err
	}
	return s.Launch(fn, s.dev.geometry(fin, T), InOut(dst), In(scratch), uint64(T), uint64(shift))
}

// remapStrides returns the destination strides (over the iteration shape) and the
// axis stride of job j for the contiguous copy tmp of its destination view dst: each
// of dst's strides replaced by tmp's for the same axis.
func remapStrides(j *scatterJob, dst, tmp *header) ([]int, int) {
	out := broadcastedLike(append(slices.Clone(j.dstSt), j.ast), dst.strides, tmp.strides, dst.shape)
	return out[:len(j.dstSt)], out[len(j.dstSt)]
}

// scatterDest checks a destination array: not broadcast.
func scatterDest(a *header, what string) error {
	for d, st := range a.strides {
		if st == 0 && a.shape[d] > 1 && prod(a.shape) > 0 {
			return fmt.Errorf("gpu: %s into a broadcast view: %w", what, ErrInvalidValue)
		}
	}
	return nil
}

// valuesFor returns values' strides broadcast to shape (NumPy's broadcasting).
func valuesFor(v *header, shape []int, what string) ([]int, error) {
	st, err := broadcastStrides(v.shape, v.strides, shape)
	if err != nil {
		return nil, fmt.Errorf("gpu: %s: values of shape %v for updates of shape %v: %w", what, v.shape, shape, ErrInvalidValue)
	}
	return st, nil
}

// scatterAt is AddAt, MaximumAt and MinimumAt: numpy.ufunc.at(a, indices, values) on
// axis 0 of a, or another with OnAxis.
func scatterAt[T Elem, I IndexElem](s *Stream, op kernel.Op, what string, a *Array[T], indices *Array[I], values *Array[T], opts []IndexOption) error {
	if err := indexArgs(s, a, indices, values); err != nil {
		return err
	}
	cfg, err := indexOptions(what, optMode|optAxis|optDeterministic, opts)
	if err != nil {
		return err
	}
	dst, ih, vh := a.header(), indices.header(), values.header()
	if err := scatterDest(dst, what); err != nil {
		return err
	}
	if len(dst.shape) == 0 {
		return fmt.Errorf("gpu: %s into a 0-d array: %w", what, ErrInvalidValue)
	}
	ax, err := normAxis(cfg.axis, len(dst.shape))
	if err != nil {
		return err
	}
	ni := len(ih.shape)
	shape := append(append(slices.Clone(dst.shape[:ax]), ih.shape...), dst.shape[ax+1:]...)
	dstSt := make([]int, len(shape))
	idxSt := make([]int, len(shape))
	copy(dstSt, dst.strides[:ax])
	copy(dstSt[ax+ni:], dst.strides[ax+1:])
	copy(idxSt[ax:], ih.strides)
	valSt, err := valuesFor(vh, shape, what)
	if err != nil {
		return err
	}
	j := scatterJob{dst: dst, vals: vh, idx: ih, shape: shape, dstSt: dstSt, valSt: valSt, idxSt: idxSt,
		l: dst.shape[ax], ast: dst.strides[ax], op: op, mode: cfg.mode.kernelMode(), deterministic: cfg.deterministic,
		what: fmt.Sprintf("%s on axis %d of size %d", what, ax, dst.shape[ax]), checkEmpty: true}
	return j.run(s)
}

// AddAt adds values into a at indices along axis 0 (another with OnAxis), in place and
// unbuffered: duplicate indices accumulate (numpy.add.at(a, indices, values);
// PyTorch's index_add_). The updates have the shape a.shape[:axis] + indices.shape +
// a.shape[axis+1:], to which values broadcast. Modes as in Take (ModeRaise by default:
// an out-of-range index is reported by a later wait). Integer sums wrap; float sums
// are in a's precision (float16 and bfloat16 in float32, rounded at each atomic), in
// an order that varies from run to run unless Deterministic (see it). a may be any
// view that isn't broadcast.
func AddAt[T Elem, I IndexElem](s *Stream, a *Array[T], indices *Array[I], values *Array[T], opts ...IndexOption) error {
	return scatterAt(s, kernel.OpSum, "AddAt", a, indices, values, opts)
}

// MaximumAt sets each element of a at indices (along axis 0, or OnAxis's) to the
// maximum of itself and the values there (numpy.maximum.at; PyTorch's scatter_reduce_
// with "amax"). NaN propagates, as in numpy.maximum. The result doesn't depend on the
// order of updates. Shapes and modes as in AddAt.
func MaximumAt[T Elem, I IndexElem](s *Stream, a *Array[T], indices *Array[I], values *Array[T], opts ...IndexOption) error {
	return scatterAt(s, kernel.OpMax, "MaximumAt", a, indices, values, opts)
}

// MinimumAt is MaximumAt with the minimum (numpy.minimum.at).
func MinimumAt[T Elem, I IndexElem](s *Stream, a *Array[T], indices *Array[I], values *Array[T], opts ...IndexOption) error {
	return scatterAt(s, kernel.OpMin, "MinimumAt", a, indices, values, opts)
}

// cyclic returns values flattened and repeated to n elements (NumPy's put and putmask
// repeat a shorter values array), as a contiguous header of shape, and a function
// freeing what it made.
func cyclic[T Elem](s *Stream, values *Array[T], shape []int) (*header, func(), error) {
	vh := values.header()
	n := prod(shape)
	m := prod(vh.shape)
	if m == n && contiguous(vh.shape, vh.strides) {
		h := *vh
		h.shape, h.strides = slices.Clone(shape), rowMajor(shape)
		return &h, func() {}, nil
	}
	if m == 1 {
		h := *vh
		h.shape, h.strides = slices.Clone(shape), make([]int, len(shape))
		return &h, func() {}, nil
	}
	pos, err := Arange[int64](s, 0, int64(n), 1)
	if err != nil {
		return nil, nil, err
	}
	defer pos.Free()
	rep, err := Take(s, values, pos, WithMode(ModeWrap))
	if err != nil {
		return nil, nil, err
	}
	h := rep.header()
	h.shape, h.strides = slices.Clone(shape), rowMajor(shape)
	return h, func() { rep.Free() }, nil
}

// Put sets the elements of the flattened a at indices to values (numpy.put(a, indices,
// values): a.flat[indices] = values), in place. indices and values are read flattened;
// values shorter than indices repeat, as in NumPy. Modes as in Take (ModeRaise by
// default: an out-of-range index is reported by a later wait). With duplicate indices
// one of their values is written: the last on the CPU backend, as in NumPy; an
// unspecified one on CUDA. a may be any view that isn't broadcast (one with no 1-D view
// is updated through a contiguous copy).
//
// As numpy.put, a non-empty indices into an empty a is an error at the call (wrapping
// ErrIndexOutOfRange, in every mode), and an empty values array changes nothing: the
// indices are not read then, so one out of range is no error.
func Put[T Elem, I IndexElem](s *Stream, a *Array[T], indices *Array[I], values *Array[T], opts ...IndexOption) error {
	if err := indexArgs(s, a, indices, values); err != nil {
		return err
	}
	cfg, err := indexOptions("Put", optMode|optAxis, opts)
	if err != nil {
		return err
	}
	if cfg.hasAxis {
		return fmt.Errorf("gpu: Put has no axis (numpy.put indexes the flattened array): use PutAlongAxis: %w", ErrInvalidValue)
	}
	dst, ih := a.header(), indices.header()
	if err := scatterDest(dst, "Put"); err != nil {
		return err
	}
	n := prod(ih.shape)
	if n == 0 {
		return nil
	}
	if prod(dst.shape) == 0 {
		return fmt.Errorf("gpu: Put of %d indices into an empty array: %w", n, ErrIndexOutOfRange)
	}
	if values.Size() == 0 {
		return nil // numpy.put: nothing to write, and the indices aren't read
	}
	l, st, ok := flatView(dst)
	if !ok {
		tmp, err := copyOf(s, dst)
		if err != nil {
			return err
		}
		defer tmp.buf.Free()
		t := &Array[T]{buf: tmp.buf, dt: tmp.dt, shape: tmp.shape, strides: tmp.strides}
		if err := Put(s, t, indices, values, opts...); err != nil {
			return err
		}
		return evalIntoHeader(s, dst, tmp)
	}
	vh, free, err := cyclic(s, values, ih.shape)
	if err != nil {
		return err
	}
	defer free()
	j := scatterJob{dst: dst, vals: vh, idx: ih, shape: ih.shape, dstSt: make([]int, len(ih.shape)), valSt: vh.strides,
		idxSt: ih.strides, l: l, ast: st, op: kernel.ScatterStore, mode: cfg.mode.kernelMode(), what: "Put"}
	return j.run(s)
}

// PutAlongAxis sets the elements of a at indices along axis to values
// (numpy.put_along_axis), in place: indices has a's number of dimensions and
// broadcasts with a on the other axes, and values broadcast to the updates' shape (the
// broadcast shape, with indices' length on axis). Duplicates and modes as in Put.
func PutAlongAxis[T Elem, I IndexElem](s *Stream, a *Array[T], indices *Array[I], values *Array[T], axis int, opts ...IndexOption) error {
	if err := indexArgs(s, a, indices, values); err != nil {
		return err
	}
	cfg, err := indexOptions("PutAlongAxis", optMode, opts)
	if err != nil {
		return err
	}
	dst, ih, vh := a.header(), indices.header(), values.header()
	if err := scatterDest(dst, "PutAlongAxis"); err != nil {
		return err
	}
	ax, err := normAxis(axis, len(dst.shape))
	if err != nil {
		return err
	}
	shape, dstSt, idxSt, err := alongAxisShapes(dst, ih, ax, "PutAlongAxis")
	if err != nil {
		return err
	}
	valSt, err := valuesFor(vh, shape, "PutAlongAxis")
	if err != nil {
		return err
	}
	j := scatterJob{dst: dst, vals: vh, idx: ih, shape: shape, dstSt: dstSt, valSt: valSt, idxSt: idxSt,
		l: dst.shape[ax], ast: dst.strides[ax], op: kernel.ScatterStore, mode: cfg.mode.kernelMode(),
		what: fmt.Sprintf("PutAlongAxis on axis %d of size %d", ax, dst.shape[ax])}
	return j.run(s)
}

// PutMask sets the elements of a where mask is true to values (numpy.putmask:
// a.flat[i] = values.flat[i % values.Size()] where mask.flat[i]), in place. mask has
// a's shape; values may be smaller (they repeat) or of a's size; an empty values array
// changes nothing (NumPy). One elementwise kernel (Eval's "where").
func PutMask[T Elem](s *Stream, a *Array[T], mask *Array[bool], values *Array[T]) error {
	if err := indexArgs(s, a, mask, values); err != nil {
		return err
	}
	dst := a.header()
	if err := scatterDest(dst, "PutMask"); err != nil {
		return err
	}
	if !slices.Equal(mask.shape, dst.shape) {
		return fmt.Errorf("gpu: PutMask: a mask of shape %v for an array of shape %v: %w", mask.shape, dst.shape, ErrInvalidValue)
	}
	if values.Size() == 0 || prod(dst.shape) == 0 {
		return nil
	}
	vh, free, err := cyclic(s, values, dst.shape)
	if err != nil {
		return err
	}
	defer free()
	return evalInto(s, dst, "where(m, v, a)", Vars{"m": mask, "v": headerArray{vh}, "a": headerArray{dst}})
}

// Bincount counts the occurrences of each value of the 1-D non-negative array x
// (numpy.bincount): a new int64 array of max(max(x)+1, minlength) elements, element
// i holding how many of x are i. It reads the largest value first (one wait for the
// device, under ctx; a negative value is then an error wrapping ErrIndexOutOfRange at
// once, and a value of 2^31-1 or more one wrapping ErrOutOfMemory); with Bins(n) it
// doesn't, and returns n bins at once (values outside [0, n) reported by a later wait,
// as ModeRaise). The count is a scatter-add of ones.
//
// The result is made as Empty makes an array: a number of bins that no array can have
// (a minlength or Bins of 2^60 int64s) is an error wrapping ErrInvalidValue, one that
// doesn't fit in memory one wrapping ErrOutOfMemory, found before anything is enqueued
// where Bins or minlength sets the number whatever the values (Bins; a minlength of
// 2^31-1 or more; an empty x). Bins(n) with n below minlength is an error wrapping
// ErrInvalidValue (minlength is the fewest bins the result has, as numpy.bincount's).
//
// The wait for the largest value is a host read of work on s: like Array.At's, it
// returns, once, the error of an earlier ModeRaise index operation on s that no wait
// has reported yet (see ErrIndexOutOfRange), and then no result.
//
// A stream that captures a graph refuses a non-empty x (ErrCapturing), with or without
// Bins: the read of the largest value, and Bins' check of the values, need the host.
// In a graph, count with AddAt of ones into Zeros in ModeClip or ModeWrap.
func Bincount[I IndexElem](ctx context.Context, s *Stream, x *Array[I], minlength int, opts ...IndexOption) (*Array[int64], error) {
	if err := nilContext(ctx); err != nil {
		return nil, err
	}
	if err := indexArgs(s, x); err != nil {
		return nil, err
	}
	h, err := bincount(ctx, s, x, nil, dtype.Int64, minlength, opts)
	if err != nil {
		return nil, err
	}
	return &Array[int64]{buf: h.buf, dt: h.dt, shape: h.shape, strides: h.strides}, nil
}

// BincountWeights is Bincount with weights (numpy.bincount(x, weights)): element i of
// the float64 result is the sum of the weights of x's elements equal to i; weights
// has x's shape and any numeric type (converted to float64). Its float sums vary in
// their last bits from run to run on the GPU unless Deterministic.
func BincountWeights[I IndexElem, W Elem](ctx context.Context, s *Stream, x *Array[I], weights *Array[W], minlength int, opts ...IndexOption) (*Array[float64], error) {
	if err := nilContext(ctx); err != nil {
		return nil, err
	}
	if err := indexArgs(s, x, weights); err != nil {
		return nil, err
	}
	if !slices.Equal(weights.shape, x.shape) {
		return nil, fmt.Errorf("gpu: BincountWeights: weights of shape %v for values of shape %v: %w", weights.shape, x.shape, ErrInvalidValue)
	}
	if weights.dt == dtype.Bool {
		return nil, fmt.Errorf("gpu: BincountWeights: bool weights: %w", ErrNotSupported)
	}
	h, err := bincount(ctx, s, x, weights.header(), dtype.Float64, minlength, opts)
	if err != nil {
		return nil, err
	}
	return &Array[float64]{buf: h.buf, dt: h.dt, shape: h.shape, strides: h.strides}, nil
}

// bincountMaxValue bounds the values Bincount reads without Bins: one of it or more is
// an error (ErrOutOfMemory) rather than an array of that many bins, unless minlength's
// bins already hold it (as NumPy counts it), so a minlength of it or more is the
// result's length whatever the values.
const bincountMaxValue = math.MaxInt32

// bincountValueErr returns the error of Bincount without Bins whose values (of size
// bytes) have big as their largest, read as unsigned, or nil: a negative value (the
// sign bit set), or one of bincountMaxValue or more that the made bins (minlength's,
// 0 when none are made yet) don't hold.
func bincountValueErr(big uint64, size, made int) error {
	if big >= 1<<(8*size-1) {
		return fmt.Errorf("gpu: Bincount of a negative value: %w", ErrIndexOutOfRange)
	}
	if most := max(bincountMaxValue, uint64(made)); big >= most {
		return fmt.Errorf("gpu: Bincount of the value %d: %d bins, more than the %d it makes without Bins: %w", big, big+1, most, ErrOutOfMemory)
	}
	return nil
}

// bincount counts (w nil) or sums weights into a new array of type out. The bins are
// checked before anything is enqueued where their number is known then (Bins, or a
// minlength of bincountMaxValue or more, the length whatever the values Bincount
// accepts without Bins), by making their array; a capture's refusal comes first.
func bincount[I IndexElem](ctx context.Context, s *Stream, x *Array[I], w *header, out dtype.DType, minlength int, opts []IndexOption) (*header, error) {
	cfg, err := indexOptions("Bincount", optDeterministic|optBins, opts)
	if err != nil {
		return nil, err
	}
	if minlength < 0 {
		return nil, fmt.Errorf("gpu: Bincount: minlength %d: %w", minlength, ErrInvalidValue)
	}
	if len(x.shape) != 1 {
		return nil, fmt.Errorf("gpu: Bincount of a %d-d array (1-d only): %w", len(x.shape), ErrInvalidValue)
	}
	if cfg.hasBins && cfg.bins < minlength {
		return nil, fmt.Errorf("gpu: Bincount: Bins(%d) below minlength %d (the result would have fewer bins than minlength asks for): %w", cfg.bins, minlength, ErrInvalidValue)
	}
	n := x.shape[0]
	if !cfg.hasBins && n > 0 {
		// Before anything is allocated or enqueued: a refusal leaves a capture as it was.
		if err := s.refuseReadBack("Bincount (without Bins)"); err != nil {
			return nil, err
		}
	}
	if cfg.hasBins && n > 0 && s.cap.Load() != nil {
		// Its values are checked as ModeRaise's indices, which a graph can't report (and
		// Bincount takes no WithMode): refused at once too.
		return nil, fmt.Errorf("gpu: Bincount with Bins on %v, which captures a graph: values outside [0, %d) are reported by a later wait, as in ModeRaise, and no wait covers a graph's launches (in a graph, count with AddAt of ones into Zeros in ModeClip or ModeWrap): %w", s, cfg.bins, ErrCapturing)
	}
	length := minlength
	mode := kernel.IndexCheck
	var h *header
	switch {
	case cfg.hasBins:
		length = cfg.bins
		h, err = binsArray(s, out, length, "Bins(%d)", length)
	case n == 0 || minlength >= bincountMaxValue:
		// The length is minlength whatever the values (a larger one is refused below,
		// after a capture's refusal: nothing is made for a refused call).
		h, err = binsArray(s, out, length, "minlength %d", minlength)
	}
	if err != nil {
		return nil, err
	}
	if !cfg.hasBins && n > 0 {
		fail := func(err error) (*header, error) {
			if h != nil {
				h.buf.Free()
			}
			return nil, err
		}
		big, err := unsignedMax(ctx, s, x)
		if err != nil {
			return fail(err)
		}
		made := 0
		if h != nil {
			made = length
		}
		if err := bincountValueErr(big, x.dt.Size(), made); err != nil {
			return fail(err)
		}
		if h == nil {
			cause, arg := "the largest value, %d", int(big)
			if minlength > int(big) {
				cause, arg = "minlength %d", minlength
			}
			length = max(minlength, int(big)+1)
			if h, err = binsArray(s, out, length, cause, arg); err != nil {
				return nil, err
			}
		}
		mode = kernel.IndexClip // every value is in range: nothing to record
	}
	if n == 0 {
		return h, nil
	}
	if length == 0 {
		h.buf.Free()
		return nil, fmt.Errorf("gpu: Bincount into 0 bins: %w", ErrIndexOutOfRange)
	}
	xh := x.header()
	var valSt []int
	if w != nil {
		valSt = w.strides
	}
	j := scatterJob{dst: h, vals: w, idx: xh, shape: []int{n}, dstSt: []int{0}, valSt: valSt, idxSt: xh.strides,
		l: length, ast: 1, op: kernel.OpSum, mode: mode, deterministic: cfg.deterministic,
		what: fmt.Sprintf("Bincount into %d bins", length)}
	if err := j.run(s); err != nil {
		h.buf.Free()
		return nil, err
	}
	return h, nil
}

// binsArray returns a new zeroed 1-D array of n bins of type dt (int64 or float64),
// made as Empty makes any array, so that a number of bins no array can have is the
// same error (ErrInvalidValue) as a shape with too many elements, before anything is
// enqueued. The error names what set n: cause, a format of one %d, with arg (formatted
// only then: the call allocates what Bincount did before it).
func binsArray(s *Stream, dt dtype.DType, n int, cause string, arg int) (*header, error) {
	var h *header
	var err error
	switch dt {
	case dtype.Int64:
		var a *Array[int64]
		if a, err = Empty[int64](s, n); err == nil {
			h = a.header()
		}
	case dtype.Float64:
		var a *Array[float64]
		if a, err = Empty[float64](s, n); err == nil {
			h = a.header()
		}
	default:
		err = fmt.Errorf("gpu: bins of %v: %w", dt, ErrNotSupported)
	}
	if err != nil {
		return nil, fmt.Errorf("gpu: Bincount: %d bins (%s): %w", n, fmt.Sprintf(cause, arg), err)
	}
	if n > 0 {
		if err := s.Memset(h.buf, 0); err != nil {
			h.buf.Free()
			return nil, err
		}
	}
	return h, nil
}

// unsignedMax returns the largest element of x read as unsigned (a negative value is
// then 2^(bits-1) or more), waiting for it under ctx.
func unsignedMax[I IndexElem](ctx context.Context, s *Stream, x *Array[I]) (uint64, error) {
	if x.dt.Size() == 4 {
		u := &Array[uint32]{buf: x.buf, dt: dtype.Uint32, shape: x.shape, strides: x.strides, off: x.off, view: true}
		m, err := Max(s, u)
		if err != nil {
			return 0, err
		}
		defer m.Free()
		v, err := m.At(ctx)
		return uint64(v), err
	}
	u := &Array[uint64]{buf: x.buf, dt: dtype.Uint64, shape: x.shape, strides: x.strides, off: x.off, view: true}
	m, err := Max(s, u)
	if err != nil {
		return 0, err
	}
	defer m.Free()
	return m.At(ctx)
}

// scatterVariant sets how the scatter sp (its Bins chosen) avoids contention, by
// Tuning.ScatterVariant: 1, warp aggregation before every atomic and one copy of the
// shared bins; 2, copies of the shared bins (kernel.ScatterCopies) with no warp
// aggregation, and global atomics aggregated only in warps whose vote finds
// neighbouring updates with one target (kernel.Scatter.Detect); 3, as 2 without any
// aggregation of the global atomics.
func scatterVariant(sp *kernel.Scatter, v int) {
	if v < 2 || sp.Op == kernel.ScatterStore {
		return
	}
	if sp.Bins > 0 {
		sp.Copies = kernel.ScatterCopies(sp.Dst, sp.Bins)
	}
	sp.Detect = true
	if v == 3 && sp.Bins == 0 {
		sp.NoWarp = true
	}
}
