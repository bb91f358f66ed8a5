package gpu

import (
	"errors"
	"fmt"
	"slices"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Joining and splitting: Concatenate, Stack, Tile, Repeat, Roll and Pad make new
// arrays; Split, ArraySplit and SplitAt return views.
//
// Concatenate (and Stack and Roll, which are concatenations) copies in one kernel
// launch for up to eight inputs (kernel.ConcatRows): each input whose axes from the
// joined one on are laid out contiguously is a block of rows (the product of the axes
// before the joined one) of equal length, copied into its columns of the result with
// 16-byte accesses where the lengths, strides and addresses allow, by blocks that each
// copy a chunk of rows and find their input without dividing (Tuning.Concat.Variant 2:
// the tiled kernel, one tile of consecutive rows per block in the result's address
// order, kernel.ConcatRows.Tiles). Inputs joined on axis 0
// (a single row) that are contiguous are copied by the driver (cuMemcpyDtoDAsync), and
// so, with Tuning.Concat.RowsKernel off, are large inputs of wide rows joined on another
// axis, each by one pitched copy (cuMemcpy2DAsync: slower on the H200); other inputs
// (views with gaps inside the joined axes, short rows) by the elementwise strided copy
// into their part of the result.

// concatMinRow is the shortest row (bytes) that ConcatRows copies; shorter ones go
// through the elementwise copy, which spreads elements rather than rows over threads.
const concatMinRow = 512

// concatLoopBlocksPerSM is the tiled kernel's blocks per multiprocessor, each looping
// over tiles of rows, where Tuning.Concat.BlocksPerSM is 0 but rows are short (the
// first kernel's default).
const concatLoopBlocksPerSM = 32

// concatInto copies parts into out (contiguous, fresh) side by side along axis.
func concatInto(s *Stream, out *header, parts []*header, axis int) error {
	if prod(out.shape) == 0 {
		return nil
	}
	size := out.dt.Size()
	outer := prod(out.shape[:axis])
	ldd := prod(out.shape[axis:])
	type rowPart struct {
		h          *header
		cols, lds  int // elements
		doff       int
		ptr        uint64
		contiguous bool
	}
	var wideSmall [kernel.ConcatMaxInputs]rowPart
	wide := wideSmall[:0]
	doff := 0
	for _, p := range parts {
		inner := prod(p.shape[axis:])
		n := prod(p.shape)
		off := doff
		doff += inner
		if n == 0 {
			continue
		}
		var st [2]int
		if viewStridesInto(st[:], p.shape, p.strides, []int{outer, inner}) && (st[1] == 1 || inner == 1) && (outer == 1 || inner*size >= concatMinRow) {
			if outer == 1 {
				st[0] = inner
			}
			wide = append(wide, rowPart{h: p, cols: inner, lds: st[0], doff: off, ptr: headerPtr(p),
				contiguous: contiguous(p.shape, p.strides)})
			continue
		}
		// The elementwise copy into the part's place in out.
		if err := evalIntoHeader(s, sliceAlong(out, axis, off/prod(p.shape[axis+1:]), p.shape[axis]), p); err != nil {
			return err
		}
	}
	if len(wide) == 0 {
		return nil
	}
	tu := s.dev.tuning().Concat
	if outer == 1 && !tu.Axis0Kernel {
		// One row each: contiguous parts are plain copies.
		keep := wide[:0]
		for _, w := range wide {
			if !w.contiguous || w.h.buf.a.dev != out.buf.a.dev {
				keep = append(keep, w)
				continue
			}
			db, err := out.buf.Slice(int64((out.off+w.doff)*size), int64(w.cols*size))
			if err != nil {
				return err
			}
			sb, err := w.h.buf.Slice(int64(w.h.off*size), int64(w.cols*size))
			if err != nil {
				return err
			}
			if err := s.CopyDtoD(db, sb); err != nil {
				return err
			}
		}
		wide = keep
	}
	if outer > 1 && !tu.RowsKernel {
		// Blocks of wide rows: one pitched driver copy each where the stream has it.
		keep := wide[:0]
		for _, w := range wide {
			ok, err := concatCopy2D(s, out, w.h, w.cols, w.lds, w.doff, outer, ldd)
			if err != nil {
				return err
			}
			if !ok {
				keep = append(keep, w)
			}
		}
		wide = keep
	}
	for len(wide) > 0 {
		batch := wide[:min(len(wide), kernel.ConcatMaxInputs)]
		wide = wide[len(batch):]
		// The widest vector every length, stride and address allows.
		V := 16
		fits := func(v int) bool {
			if headerPtr(out)%uint64(v) != 0 || ldd*size%v != 0 {
				return false
			}
			for _, w := range batch {
				if w.ptr%uint64(v) != 0 || w.cols*size%v != 0 || w.doff*size%v != 0 || (outer > 1 && w.lds*size%v != 0) {
					return false
				}
			}
			return true
		}
		for V > size && !fits(V) {
			V /= 2
		}
		if !fits(V) {
			V = size
		}
		per := V / size
		sp := &kernel.ConcatRows{Inputs: len(batch), Vec: V, Rows: tu.Rows}
		if tu.Variant == 2 && slices.IndexFunc(batch, func(w rowPart) bool { return int64(w.cols/per) >= 1<<31 }) < 0 {
			// The tiled kernel (its row offsets are 32-bit).
			sp.Tiles, sp.Items, sp.Stream = true, tu.Items, tu.Stream
		}
		if outer == 1 {
			sp.Rows = 1 // one row: nothing to pair
		}
		fn, err := s.dev.kernel(sp)
		if err != nil {
			return err
		}
		la := newLaunchArgs()
		la.hdr(out, Write)
		la.u64(uint64(outer))
		la.u64(uint64(ldd / per))
		chunks := 0
		for _, w := range batch {
			la.hdr(w.h, Read)
			la.u64(uint64(w.cols / per))
			la.u64(uint64(w.lds / per))
			la.u64(uint64(w.doff / per))
			la.u64(uint64(chunks))
			chunks += sp.Chunks(w.cols / per)
		}
		if chunks > 1<<31-1 {
			// (la's pooled slice is dropped, not leaked)
			return fmt.Errorf("gpu: concatenation of rows of %d chunks: %w", chunks, ErrNotSupported)
		}
		// About Tuning.Concat.BlocksPerSM blocks per multiprocessor in all, each
		// looping over its rows (a block finds its input once, however many rows it
		// copies); 0: a block for every row (the first kernel) or tile of rows (the
		// tiled one), up to 65535, except that the tiled kernel's blocks loop as with
		// concatLoopBlocksPerSM where a row of an input fills less than half a chunk
		// (rows of a few KiB: a block each would cost more to start than it moves).
		rowsY, bpsm := outer, tu.BlocksPerSM
		if sp.Tiles {
			rowsY = (outer + max(1, sp.Rows) - 1) / max(1, sp.Rows)
			if bpsm == 0 && slices.IndexFunc(batch, func(w rowPart) bool { return 2*(w.cols/per) < sp.Chunk() }) >= 0 {
				bpsm = concatLoopBlocksPerSM
			}
		}
		rowsY = min(rowsY, 65535)
		if bpsm > 0 {
			rowsY = min(rowsY, max(1, bpsm*max(1, s.dev.info.Multiprocessors)/max(1, chunks)))
		}
		if err := la.launch(s, fn, launchGeometry(max(1, chunks), rowsY, kernel.ConcatBlock)); err != nil {
			return err
		}
	}
	return nil
}

// concatMemcpyMinRow is the shortest row (bytes) that concatCopy2D copies: narrower
// rows go to the kernel, which spreads several of them over a block. concatMemcpyMin is
// the fewest bytes of an input it copies: smaller inputs go to the kernel, which copies
// up to eight in one launch where each pitched copy is a driver call of its own (a few
// microseconds of the host's). Variables for the tests.
var (
	concatMemcpyMinRow int64 = 4096
	concatMemcpyMin    int64 = 4 << 20
)

// concatCopy2D copies the rows rows of part p (cols elements each, lds apart) into out
// (ldd elements apart) from column doff, with one pitched copy of the stream's backend
// (backend.Copier2D: cuMemcpy2DAsync), and reports whether it did: false, with nothing
// enqueued, for a backend without it, memory of another device, rows narrower than
// concatMemcpyMinRow, fewer bytes than concatMemcpyMin or pitches the driver doesn't
// take (2^31 bytes and more).
func concatCopy2D(s *Stream, out, p *header, cols, lds, doff, rows, ldd int) (bool, error) {
	c, ok := s.be.(backend.Copier2D)
	size := out.dt.Size()
	width, spitch, dpitch := int64(cols*size), int64(lds*size), int64(ldd*size)
	if !ok || p.buf.a.dev != out.buf.a.dev || width < concatMemcpyMinRow || width*int64(rows) < concatMemcpyMin ||
		spitch < width || dpitch < width || spitch >= 1<<31 || dpitch >= 1<<31 {
		return false, nil
	}
	soff := p.buf.off + int64(p.off*size)
	doffB := out.buf.off + int64((out.off+doff)*size)
	sn, dn := int64(rows-1)*spitch+width, int64(rows-1)*dpitch+width
	uses := []use{{a: out.buf.a, mode: Write, off: doffB, n: dn}, {a: p.buf.a, mode: Read, off: soff, n: sn}}
	refused := false
	_, err := s.trackedScope(uses, func() error {
		err := c.Copy2D(out.buf.a.mem, doffB, dpitch, p.buf.a.mem, soff, spitch, width, int64(rows))
		if errors.Is(err, ErrNotSupported) || errors.Is(err, ErrInvalidValue) {
			refused = true // before anything was enqueued: the kernel copies it
		}
		return err
	}, false)
	if refused {
		return false, nil
	}
	return err == nil, err
}

// sliceAlong returns the view of h with n elements from start along axis.
func sliceAlong(h *header, axis, start, n int) *header {
	v := *h
	v.shape = slices.Clone(h.shape)
	v.shape[axis] = n
	if n > 0 && prod(v.shape) > 0 {
		v.off = h.off + start*h.strides[axis]
	}
	return &v
}

// joinArgs checks a join's stream and arrays.
func joinArgs[T Elem](s *Stream, arrays []*Array[T], what string) error {
	if len(arrays) == 0 {
		return fmt.Errorf("gpu: %s of no arrays: %w", what, ErrInvalidValue)
	}
	for _, a := range arrays {
		if a.isNil() {
			return errNilArray
		}
	}
	for _, a := range arrays {
		if err := indexArgs(s, a); err != nil {
			return err
		}
	}
	return nil
}

// Concatenate returns the arrays joined along an existing axis (numpy.concatenate):
// their shapes must agree except on axis (counting from the end when negative); the
// result's length there is the sum of theirs. Any views. Inputs whose axes from axis on
// are laid out contiguously are copied as blocks of rows, up to eight inputs in one
// kernel with 16-byte accesses where lengths, strides and addresses allow
// (kernel.ConcatRows), or those of 4 MiB and more with rows of 4 KiB and more by one
// pitched driver copy each (cuMemcpy2DAsync; see ConcatTuning.RowsKernel); contiguous
// inputs joined on axis 0 by the driver's copy; others by the elementwise strided copy.
func Concatenate[T Elem](s *Stream, arrays []*Array[T], axis int) (*Array[T], error) {
	if err := joinArgs(s, arrays, "Concatenate"); err != nil {
		return nil, err
	}
	first := arrays[0].shape
	if len(first) == 0 {
		return nil, fmt.Errorf("gpu: Concatenate of 0-d arrays: %w", ErrInvalidValue)
	}
	ax, err := normAxis(axis, len(first))
	if err != nil {
		return nil, err
	}
	var shapeSmall [8]int
	shape := append(shapeSmall[:0], first...)
	shape[ax] = 0
	hs, parts := make([]header, len(arrays)), make([]*header, len(arrays))
	for i, a := range arrays {
		if len(a.shape) != len(first) {
			return nil, fmt.Errorf("gpu: Concatenate of arrays of %d and %d dimensions: %w", len(first), len(a.shape), ErrInvalidValue)
		}
		for d := range first {
			if d != ax && a.shape[d] != first[d] {
				return nil, fmt.Errorf("gpu: Concatenate along axis %d of shapes %v and %v: %w", ax, first, a.shape, ErrInvalidValue)
			}
		}
		var ok bool
		if shape[ax], ok = grownDim(shape[ax], 1, a.shape[ax]); !ok {
			return nil, fmt.Errorf("gpu: Concatenate along axis %d has too many elements: %w", ax, ErrInvalidValue)
		}
		hs[i] = a.hdr()
		parts[i] = &hs[i]
	}
	out, err := Empty[T](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := concatInto(s, out.header(), parts, ax); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// Stack returns the arrays, all of one shape, joined along a new axis at position axis
// of the result (numpy.stack): Concatenate of each with an axis of size 1 inserted.
func Stack[T Elem](s *Stream, arrays []*Array[T], axis int) (*Array[T], error) {
	if err := joinArgs(s, arrays, "Stack"); err != nil {
		return nil, err
	}
	first := arrays[0].shape
	ax, err := normAxis(axis, len(first)+1)
	if err != nil {
		return nil, err
	}
	views := make([]*Array[T], len(arrays))
	for i, a := range arrays {
		if !slices.Equal(a.shape, first) {
			return nil, fmt.Errorf("gpu: Stack of shapes %v and %v: %w", first, a.shape, ErrInvalidValue)
		}
		if views[i], err = a.ExpandDims(ax); err != nil {
			return nil, err
		}
	}
	return Concatenate(s, views, ax)
}

// splitAt returns views of a cut along axis before each index (NumPy's split with
// indices: a[:i0], a[i0:i1], ..., a[ik:], indices clamped as slices are).
func (a *Array[T]) splitAt(axis int, indices []int) ([]*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	ax, err := normAxis(axis, len(a.shape))
	if err != nil {
		return nil, err
	}
	ranges := make([]Range, ax+1)
	for d := range ranges {
		ranges[d] = R()
	}
	out := make([]*Array[T], 0, len(indices)+1)
	prev := 0
	for i := 0; i <= len(indices); i++ {
		stop := End
		if i < len(indices) {
			stop = indices[i]
		}
		ranges[ax] = Range{prev, stop, 1}
		v, err := a.Slice(ranges...)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if i < len(indices) {
			prev = stop
		}
	}
	return out, nil
}

// SplitAt returns views of a cut along axis before each of the indices (numpy.split
// with a list of indices): a[:i0], a[i0:i1], ..., a[ik:] along axis, indices counting
// from the end when negative and clamped as Slice clamps (so some views may be empty).
func (a *Array[T]) SplitAt(axis int, indices ...int) ([]*Array[T], error) {
	return a.splitAt(axis, indices)
}

// Split returns sections views of equal length along axis (numpy.split with an
// integer): the axis's length must be a multiple of sections.
func (a *Array[T]) Split(sections, axis int) ([]*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	ax, err := normAxis(axis, len(a.shape))
	if err != nil {
		return nil, err
	}
	if sections <= 0 || a.shape[ax]%sections != 0 {
		return nil, fmt.Errorf("gpu: Split of an axis of %d into %d equal sections: %w", a.shape[ax], sections, ErrInvalidValue)
	}
	return a.ArraySplit(sections, axis)
}

// ArraySplit returns sections views along axis, of lengths differing by at most one
// (numpy.array_split): the first n % sections have one more.
func (a *Array[T]) ArraySplit(sections, axis int) ([]*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	ax, err := normAxis(axis, len(a.shape))
	if err != nil {
		return nil, err
	}
	if sections <= 0 {
		return nil, fmt.Errorf("gpu: ArraySplit into %d sections: %w", sections, ErrInvalidValue)
	}
	n := a.shape[ax]
	cuts := make([]int, sections-1)
	pos := 0
	for i := range cuts {
		pos += n / sections
		if i < n%sections {
			pos++
		}
		cuts[i] = pos
	}
	return a.splitAt(ax, cuts)
}

// Tile returns a repeated reps[d] times along each axis d (numpy.tile): reps shorter
// than a's dimensions apply to the last ones, and longer ones prepend axes of size 1 to
// a. One elementwise copy from a broadcast view.
func Tile[T Elem](s *Stream, a *Array[T], reps ...int) (*Array[T], error) {
	if err := indexArgs(s, a); err != nil {
		return nil, err
	}
	nd := max(len(reps), len(a.shape))
	shape, strides := make([]int, nd), make([]int, nd)
	r := make([]int, nd)
	for d := range nd {
		shape[d], r[d] = 1, 1
	}
	copy(shape[nd-len(a.shape):], a.shape)
	copy(strides[nd-len(a.shape):], a.strides)
	for i, v := range reps {
		if v < 0 {
			return nil, fmt.Errorf("gpu: Tile with repetitions %v: %w", reps, ErrInvalidValue)
		}
		r[nd-len(reps)+i] = v
	}
	// out viewed as (r0, s0, r1, s1, ...), a broadcast to it.
	outShape := make([]int, nd)
	view := make([]int, 2*nd)
	src := make([]int, 2*nd)
	for d := range nd {
		var ok bool
		if outShape[d], ok = grownDim(shape[d], r[d], 0); !ok {
			return nil, fmt.Errorf("gpu: Tile of shape %v by %v has too many elements: %w", a.shape, reps, ErrInvalidValue)
		}
		view[2*d], view[2*d+1] = r[d], shape[d]
		src[2*d+1] = strides[d]
	}
	if _, err := checkShape(outShape); err != nil {
		return nil, err
	}
	out, err := Empty[T](s, outShape...)
	if err != nil {
		return nil, err
	}
	if out.Size() == 0 {
		return out, nil
	}
	oh := out.header()
	ov := &header{buf: oh.buf, dt: oh.dt, shape: view, strides: rowMajor(view), off: oh.off}
	ah := a.header()
	av := &header{buf: ah.buf, dt: ah.dt, shape: view, strides: src, off: ah.off}
	if err := evalIntoHeader(s, ov, av); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// Repeat returns a with each element repeated repeats times (numpy.repeat with an
// integer): along OnAxis's axis, or over the flattened a (a 1-D result) without one.
// One elementwise copy from a broadcast view.
func Repeat[T Elem](s *Stream, a *Array[T], repeats int, opts ...IndexOption) (*Array[T], error) {
	if err := indexArgs(s, a); err != nil {
		return nil, err
	}
	cfg, err := indexOptions("Repeat", optAxis, opts)
	if err != nil {
		return nil, err
	}
	if repeats < 0 {
		return nil, fmt.Errorf("gpu: Repeat %d times: %w", repeats, ErrInvalidValue)
	}
	h := a.header()
	ax := 0
	if !cfg.hasAxis {
		n, st, ok := flatView(h)
		if !ok {
			c, err := copyOf(s, h)
			if err != nil {
				return nil, err
			}
			defer c.buf.Free()
			h, n, st = c, prod(c.shape), 1
		}
		h = &header{buf: h.buf, dt: h.dt, shape: []int{n}, strides: []int{st}, off: h.off}
	} else if ax, err = normAxis(cfg.axis, len(h.shape)); err != nil {
		return nil, err
	}
	outShape := slices.Clone(h.shape)
	var ok bool
	if outShape[ax], ok = grownDim(outShape[ax], repeats, 0); !ok {
		return nil, fmt.Errorf("gpu: Repeat of %d elements along an axis %d times has too many elements: %w", h.shape[ax], repeats, ErrInvalidValue)
	}
	if _, err := checkShape(outShape); err != nil {
		return nil, err
	}
	out, err := Empty[T](s, outShape...)
	if err != nil {
		return nil, err
	}
	if out.Size() == 0 {
		return out, nil
	}
	// (..., n, repeats, ...) on both sides, a broadcast on the new axis.
	view := slices.Insert(slices.Clone(h.shape), ax+1, repeats)
	src := slices.Insert(slices.Clone(h.strides), ax+1, 0)
	oh := out.header()
	ov := &header{buf: oh.buf, dt: oh.dt, shape: view, strides: rowMajor(view), off: oh.off}
	av := &header{buf: h.buf, dt: h.dt, shape: view, strides: src, off: h.off}
	if err := evalIntoHeader(s, ov, av); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// Roll returns a with its elements shifted by shift positions along OnAxis's axis, or
// over the flattened a without one, those shifted past the end coming back at the
// start (numpy.roll); a negative shift rolls the other way. A concatenation of a's two
// parts.
func Roll[T Elem](s *Stream, a *Array[T], shift int, opts ...IndexOption) (*Array[T], error) {
	if err := indexArgs(s, a); err != nil {
		return nil, err
	}
	cfg, err := indexOptions("Roll", optAxis, opts)
	if err != nil {
		return nil, err
	}
	h := a.header()
	ax := 0
	if !cfg.hasAxis {
		n, st, ok := flatView(h)
		if !ok {
			c, err := copyOf(s, h)
			if err != nil {
				return nil, err
			}
			defer c.buf.Free()
			h, n, st = c, prod(c.shape), 1
		}
		h = &header{buf: h.buf, dt: h.dt, shape: []int{n}, strides: []int{st}, off: h.off}
	} else if ax, err = normAxis(cfg.axis, len(h.shape)); err != nil {
		return nil, err
	}
	out, err := Empty[T](s, h.shape...)
	if err != nil {
		return nil, err
	}
	n := h.shape[ax]
	k := 0
	if n > 0 {
		k = ((shift % n) + n) % n
	}
	parts := []*header{sliceAlong(h, ax, n-k, k), sliceAlong(h, ax, 0, n-k)}
	if err := concatInto(s, out.header(), parts, ax); err != nil {
		out.Free()
		return nil, err
	}
	if !cfg.hasAxis {
		out.shape, out.strides = layout(a.shape)
	}
	return out, nil
}

// Pad returns a with value around it (numpy.pad with mode "constant"): widths[d] =
// {before, after} elements on axis d; a single pair applies to every axis. A fill of
// the result, then a copy of a into its middle.
func Pad[T Elem](s *Stream, a *Array[T], widths [][2]int, value T) (*Array[T], error) {
	if err := indexArgs(s, a); err != nil {
		return nil, err
	}
	nd := len(a.shape)
	if len(widths) != nd && len(widths) != 1 {
		return nil, fmt.Errorf("gpu: Pad with %d widths for %d dimensions: %w", len(widths), nd, ErrInvalidValue)
	}
	shape := slices.Clone(a.shape)
	ranges := make([]Range, nd)
	for d := range nd {
		w := widths[0]
		if len(widths) == nd {
			w = widths[d]
		}
		if w[0] < 0 || w[1] < 0 {
			return nil, fmt.Errorf("gpu: Pad widths %v: %w", widths, ErrInvalidValue)
		}
		var ok bool
		if shape[d], ok = grownDim(shape[d], 1, w[0]); ok {
			shape[d], ok = grownDim(shape[d], 1, w[1])
		}
		if !ok {
			return nil, fmt.Errorf("gpu: Pad of shape %v with widths %v has too many elements: %w", a.shape, widths, ErrInvalidValue)
		}
		ranges[d] = Range{w[0], w[0] + a.shape[d], 1}
	}
	if _, err := checkShape(shape); err != nil {
		return nil, err
	}
	out, err := Full(s, value, shape...)
	if err != nil {
		return nil, err
	}
	if a.Size() == 0 {
		return out, nil
	}
	mid, err := out.Slice(ranges...)
	if err != nil {
		out.Free()
		return nil, err
	}
	if err := Copy(s, mid, a); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}
