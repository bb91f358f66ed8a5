package gpu

import (
	"fmt"
	"math"
	"slices"
	"sync/atomic"

	"github.com/go-gpu/gpu/internal/kernel"
)

// Indexing through arrays of indices: gathers (Take, TakeAlongAxis) and scatters (Put,
// PutAlongAxis, PutMask, AddAt, MaximumAt, MinimumAt, Bincount), with NumPy's names,
// shapes and modes. Index arrays hold int32, int64 or int values, of any shape and
// layout (views, broadcast views). Out-of-range indices: see IndexMode and
// ErrIndexOutOfRange.
//
// One kernel per call (kernel.Gather, kernel.Scatter), of 256-thread blocks whose
// threads each handle four consecutive elements: the four index loads (16-byte vector
// loads of a contiguous index array) are in flight together, then the four data
// loads, then one vector store of the four results. An index array, source and result
// are walked in one pass whatever their strides (their dimensions collapsed where
// they allow, as Copy does).

// IndexMode says what an operation does with an index out of range for its axis
// (NumPy's mode argument). In every mode a non-empty index array into an empty axis is
// an error at the call, as in NumPy.
type IndexMode uint8

const (
	// ModeRaise: negative indices count from the end; an index still out of range is an
	// error wrapping ErrIndexOutOfRange, reported by a later wait (see
	// ErrIndexOutOfRange for which), and a scatter skips its update. The default.
	ModeRaise IndexMode = iota
	// ModeWrap: indices are taken modulo the axis length (Python's %: -1 is the last).
	ModeWrap
	// ModeClip: indices are clamped to the axis; negative ones become 0 (NumPy's clip
	// mode doesn't count from the end).
	ModeClip
)

// String returns "raise", "wrap" or "clip".
func (m IndexMode) String() string {
	switch m {
	case ModeRaise:
		return "raise"
	case ModeWrap:
		return "wrap"
	case ModeClip:
		return "clip"
	}
	return fmt.Sprintf("IndexMode(%d)", uint8(m))
}

// IndexElem is the set of Go types of index arrays.
type IndexElem interface{ ~int32 | ~int64 | ~int }

// IndexOption configures an indexing operation; make one with WithMode, OnAxis,
// Deterministic or Bins. An option the operation doesn't take is an error wrapping
// ErrInvalidValue.
type IndexOption func(*indexConfig)

type indexConfig struct {
	mode          IndexMode
	hasMode       bool
	axis          int
	hasAxis       bool
	deterministic bool
	bins          int // Bincount's Bins
	hasBins       bool
	bad           error // an invalid option
}

// deterministicAll makes every scatter deterministic (SetDeterministic).
var deterministicAll atomic.Bool

// WithMode selects how out-of-range indices are treated (ModeRaise by default).
func WithMode(m IndexMode) IndexOption {
	return func(c *indexConfig) {
		if m > ModeClip {
			c.bad = fmt.Errorf("gpu: index mode %d: %w", uint8(m), ErrInvalidValue)
		}
		c.mode, c.hasMode = m, true
	}
}

// OnAxis makes Take and Put index along axis (counting from the end when negative)
// instead of over the flattened array (NumPy's axis argument).
func OnAxis(axis int) IndexOption {
	return func(c *indexConfig) { c.axis, c.hasAxis = axis, true }
}

// The options an operation takes (indexOptions' allowed).
const (
	optMode = 1 << iota
	optAxis
	optDeterministic
	optBins
)

// indexOptions applies opts, of which what takes those in allowed: another is an
// error wrapping ErrInvalidValue.
func indexOptions(what string, allowed int, opts []IndexOption) (indexConfig, error) {
	var c indexConfig
	for _, o := range opts {
		if o == nil {
			return c, fmt.Errorf("gpu: %s: nil IndexOption: %w", what, ErrInvalidValue)
		}
		o(&c)
	}
	if c.bad != nil {
		return c, c.bad
	}
	for _, x := range []struct {
		set  bool
		opt  int
		name string
	}{{c.hasMode, optMode, "WithMode"}, {c.hasAxis, optAxis, "OnAxis"}, {c.deterministic, optDeterministic, "Deterministic"}, {c.hasBins, optBins, "Bins"}} {
		if x.set && allowed&x.opt == 0 {
			return c, fmt.Errorf("gpu: %s takes no %s option: %w", what, x.name, ErrInvalidValue)
		}
	}
	c.deterministic = c.deterministic || deterministicAll.Load()
	return c, nil
}

// kernelMode returns the kernel's mode.
func (m IndexMode) kernelMode() kernel.IndexMode {
	switch m {
	case ModeWrap:
		return kernel.IndexWrap
	case ModeClip:
		return kernel.IndexClip
	}
	return kernel.IndexRaise
}

// indexArgs checks an indexing operation's stream and arrays: a nil stream or array
// (ErrInvalidValue), a freed one (ErrClosed, as every operation), one of another backend.
func indexArgs(s *Stream, arrays ...AnyArray) error {
	if err := nilStream(s); err != nil {
		return err
	}
	for _, a := range arrays {
		if a == nil || a.isNil() {
			return errNilArray
		}
		if a.isFreed() {
			return fmt.Errorf("gpu: array used after Free: %w", ErrClosed)
		}
		h := a.hdr()
		if h.buf.a.dev != s.dev && h.buf.a.dev.info.Backend != s.dev.info.Backend {
			return fmt.Errorf("gpu: an array of %v on a stream of %v: %w", h.buf.a.dev, s.dev, ErrInvalidValue)
		}
	}
	return nil
}

// gatherJob is one gather: out (contiguous, fresh) of the iteration shape, elements of
// src at so(i) + k*ast, k = idx[io(i)].
type gatherJob struct {
	out, src, idx *header
	shape         []int
	sst, ist      []int
	l, ast        int
	mode          kernel.IndexMode
	what          string
	// checkEmpty: where no element moves, ModeRaise still checks the indices
	// (checkIndicesOnly), as NumPy's take does when the axes before the taken one
	// aren't empty.
	checkEmpty bool
}

// headerPtr is the device address of a header's element 0.
func headerPtr(h *header) uint64 {
	return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size())
}

// run enqueues the gather on s.
func (j *gatherJob) run(s *Stream) error {
	n := prod(j.shape)
	if n == 0 {
		if j.checkEmpty {
			return checkIndicesOnly(s, j.idx, j.l, j.mode, j.what)
		}
		return nil
	}
	if j.l == 0 {
		return fmt.Errorf("gpu: %s: a non-empty take from an empty axis: %w", j.what, ErrIndexOutOfRange)
	}
	shape, st := kernel.Collapse(j.shape, [][]int{j.sst, j.ist})
	sst, ist := st[0], st[1]
	sp := &kernel.Gather{Size: j.src.dt.Size(), Index: j.idx.dt, Mode: j.mode, Rank: len(shape), Stream: s.dev.tuning().GatherStream}
	lo, hi := extent(shape, sst)
	if j.ast < 0 {
		lo += (j.l - 1) * j.ast
	} else {
		hi += (j.l - 1) * j.ast
	}
	ilo, ihi := extent(shape, ist)
	sp.Index64 = n >= math.MaxInt32 || hi >= math.MaxInt32 || -lo >= math.MaxInt32 || ihi >= math.MaxInt32 || -ilo >= math.MaxInt32
	if len(shape) == 1 && sst[0] == 0 && ist[0] == 1 {
		sp.Rank = 0
		sp.Vector = headerPtr(j.idx)%16 == 0
		if sp.Vector && s.dev.tuning().GatherVariant == 2 {
			sp.Variant = 2
		}
	}
	if headerPtr(j.out)%16 != 0 {
		return fmt.Errorf("gpu: %s: unaligned output: %w", j.what, ErrNotSupported)
	}
	fn, err := s.dev.kernel(sp)
	if err != nil {
		return err
	}
	cfg, err := s.dev.geometry(sp, n).backend()
	if err != nil {
		return err
	}
	var word *Buffer
	if sp.Mode.Records() {
		if word, err = s.checkSlot(); err != nil {
			return err
		}
	}
	la := newLaunchArgs()
	la.hdr(j.out, Write)
	la.hdr(j.src, Read)
	la.hdr(j.idx, Read)
	if word != nil {
		la.buf(word, Write)
	} else {
		la.null()
	}
	la.u64(uint64(n))
	la.u64(uint64(j.l))
	la.u64(uint64(j.ast))
	if sp.Rank > 0 {
		for _, st := range [][]int{shape, sst, ist} {
			for _, v := range st {
				la.u64(uint64(v))
			}
		}
	}
	if err := la.launch(s, fn, cfg); err != nil {
		if word != nil {
			s.dev.checkSlots.put(word)
		}
		return err
	}
	if word != nil {
		s.addIndexCheck(word, j.what)
	}
	return nil
}

// checkIndicesOnly checks the indices of an index operation that moves no elements
// (an axis of its iteration has length 0), so that ModeRaise reports an index out of
// range as NumPy's take and ufunc.at do then: a gather of one byte per index from a
// one-byte source, whose result is dropped. Modes that don't record, and no indices,
// check nothing; indices into an empty axis are an error at the call; in a capture, as
// every index check in raise mode, it is refused (ErrCapturing).
func checkIndicesOnly(s *Stream, idx *header, l int, mode kernel.IndexMode, what string) error {
	m := prod(idx.shape)
	if !mode.Records() || m == 0 {
		return nil
	}
	if err := s.notCapturing(checkedLaunchWhat); err != nil {
		return err
	}
	if l == 0 {
		return fmt.Errorf("gpu: %s: %d indices into an empty axis: %w", what, m, ErrIndexOutOfRange)
	}
	src, err := Empty[uint8](s, 1) // (read at offset 0 whatever the index: ast 0)
	if err != nil {
		return err
	}
	defer src.Free()
	out, err := Empty[uint8](s, m)
	if err != nil {
		return err
	}
	defer out.Free()
	shape := slices.Clone(idx.shape)
	j := gatherJob{out: out.header(), src: src.header(), idx: idx, shape: shape, sst: make([]int, len(shape)),
		ist: idx.strides, l: l, mode: mode, what: what}
	return j.run(s)
}

// extent returns the lowest and highest element offsets strides reach over shape.
func extent(shape, st []int) (lo, hi int) {
	for d, n := range shape {
		if n == 0 {
			return 0, -1
		}
		if st[d] < 0 {
			lo += (n - 1) * st[d]
		} else {
			hi += (n - 1) * st[d]
		}
	}
	return lo, hi
}

// flatView returns a as a 1-D view (length and stride) when one exists, else false.
func flatView(h *header) (n, stride int, ok bool) {
	n = prod(h.shape)
	st, ok := viewStrides(h.shape, h.strides, []int{n})
	if !ok {
		return 0, 0, false
	}
	return n, st[0], true
}

// Take returns elements of a at the given indices (numpy.take): without OnAxis, of the
// flattened a (row-major), in an array of indices' shape; with OnAxis(k), the slices of
// a at the indices along axis k, in an array of shape a.shape[:k] + indices.shape +
// a.shape[k+1:]. Negative indices count from the end, and out-of-range ones follow the
// mode (WithMode; ModeRaise by default, whose error comes from a later wait: see
// ErrIndexOutOfRange; as in NumPy, with OnAxis(k) the indices are checked even where
// an axis after k has length 0, so that nothing is taken, unless one before k has).
// Any shapes and views;
// a flattened take from a view that has no 1-D view (a transposed matrix) copies it
// first, as NumPy ravels it.
func Take[T Elem, I IndexElem](s *Stream, a *Array[T], indices *Array[I], opts ...IndexOption) (*Array[T], error) {
	if err := indexArgs(s, a, indices); err != nil {
		return nil, err
	}
	cfg, err := indexOptions("Take", optMode|optAxis, opts)
	if err != nil {
		return nil, err
	}
	src := a.header()
	ih := indices.header()
	var job gatherJob
	var shape []int
	if !cfg.hasAxis {
		n, st, ok := flatView(src)
		if !ok {
			c, err := copyOf(s, src)
			if err != nil {
				return nil, err
			}
			defer c.buf.Free()
			src = c
			n, st = prod(c.shape), 1
		}
		shape = slices.Clone(ih.shape)
		job = gatherJob{src: src, idx: ih, shape: shape, sst: make([]int, len(shape)), ist: ih.strides, l: n, ast: st,
			what: "Take"}
	} else {
		ax, err := normAxis(cfg.axis, len(src.shape))
		if err != nil {
			return nil, err
		}
		ni := len(ih.shape)
		shape = append(append(slices.Clone(src.shape[:ax]), ih.shape...), src.shape[ax+1:]...)
		sst := make([]int, len(shape))
		ist := make([]int, len(shape))
		copy(sst, src.strides[:ax])
		copy(ist[ax:], ih.strides)
		copy(sst[ax+ni:], src.strides[ax+1:])
		job = gatherJob{src: src, idx: ih, shape: shape, sst: sst, ist: ist, l: src.shape[ax], ast: src.strides[ax],
			what: fmt.Sprintf("Take along axis %d of size %d", ax, src.shape[ax]), checkEmpty: prod(src.shape[:ax]) > 0}
	}
	job.mode = cfg.mode.kernelMode()
	out, err := Empty[T](s, shape...)
	if err != nil {
		return nil, err
	}
	job.out = out.header()
	if err := job.run(s); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// alongAxisShapes returns the iteration shape and the array's and the indices' strides
// over it for TakeAlongAxis and PutAlongAxis: the indices have a's number of
// dimensions and broadcast with a on every axis but axis, where their own length is
// the iteration's (numpy.take_along_axis).
func alongAxisShapes(a, idx *header, axis int, what string) (shape, ast, ist []int, err error) {
	nd := len(a.shape)
	if len(idx.shape) != nd {
		return nil, nil, nil, fmt.Errorf("gpu: %s: indices of %d dimensions for an array of %d: %w", what, len(idx.shape), nd, ErrInvalidValue)
	}
	shape = make([]int, nd)
	for d := range nd {
		switch {
		case d == axis:
			shape[d] = idx.shape[d]
		case a.shape[d] == idx.shape[d] || idx.shape[d] == 1:
			shape[d] = a.shape[d]
		case a.shape[d] == 1:
			shape[d] = idx.shape[d]
		default:
			return nil, nil, nil, fmt.Errorf("gpu: %s: indices of shape %v don't broadcast with an array of shape %v: %w", what, idx.shape, a.shape, ErrInvalidValue)
		}
	}
	ast = make([]int, nd)
	ist = make([]int, nd)
	for d := range nd {
		if d != axis && a.shape[d] == shape[d] {
			ast[d] = a.strides[d]
		}
		if idx.shape[d] == shape[d] {
			ist[d] = idx.strides[d]
		}
	}
	return shape, ast, ist, nil
}

// TakeAlongAxis returns the elements of a at the indices along axis
// (numpy.take_along_axis): indices has a's number of dimensions and broadcasts with a
// on the other axes; the result has the broadcast shape, with indices' length on axis.
// It pairs with Argsort and ArgMax(KeepDims) results. Modes as in Take (ModeRaise by
// default; an out-of-range index is reported by a later wait).
func TakeAlongAxis[T Elem, I IndexElem](s *Stream, a *Array[T], indices *Array[I], axis int, opts ...IndexOption) (*Array[T], error) {
	if err := indexArgs(s, a, indices); err != nil {
		return nil, err
	}
	cfg, err := indexOptions("TakeAlongAxis", optMode, opts)
	if err != nil {
		return nil, err
	}
	src, ih := a.header(), indices.header()
	ax, err := normAxis(axis, len(src.shape))
	if err != nil {
		return nil, err
	}
	shape, sst, ist, err := alongAxisShapes(src, ih, ax, "TakeAlongAxis")
	if err != nil {
		return nil, err
	}
	out, err := Empty[T](s, shape...)
	if err != nil {
		return nil, err
	}
	job := gatherJob{out: out.header(), src: src, idx: ih, shape: shape, sst: sst, ist: ist,
		l: src.shape[ax], ast: src.strides[ax], mode: cfg.mode.kernelMode(),
		what: fmt.Sprintf("TakeAlongAxis on axis %d of size %d", ax, src.shape[ax])}
	if err := job.run(s); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}
