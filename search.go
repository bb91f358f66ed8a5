package gpu

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Search: the indices of the nonzero elements (numpy.flatnonzero, numpy.argwhere,
// Julia's findall), boolean-mask selection (a[mask], numpy.extract), the first nonzero
// element (Julia's findfirst) and counting (numpy.count_nonzero). "Nonzero" is NumPy's
// truth: x != 0, so NaN counts and -0 doesn't; the ...Where forms take a predicate
// expression instead (evaluated by Eval into a bool array first).
//
// Results whose size depends on the data (Nonzero, Argwhere, Extract) are computed in
// two passes over the flags on the stream: a count pass, a single-pass scan of the
// per-tile counts with decoupled look-back (Merrill and Garland, NVR-2016-002, 2016),
// then one 8-byte device-to-host copy of the total, which is the only host
// synchronization (under ctx), then the output is allocated and a scatter pass writes
// each tile's elements as one contiguous run at its offset. Small outputs (at most 4
// MiB for every element) are allocated first instead, and the scatter writes the total
// into pinned host memory: one host synchronization, after both passes (Nonzero).
// Indices are int64 flat (row-major) indices, exact past 2^31 elements. FindFirst and
// CountNonzero return their result to the host (one 8-byte copy). Each checks its
// stream (nil or closed) and context (nil or already done) before it enqueues anything
// (searchArgs).
//
// Index errors. The wait of each of these (and of Unique, and of Bincount without
// Bins) is a host read of a result computed on s, and reports what Array.At of that
// result would: the error of an earlier ModeRaise index operation (Take, Put, ...) on s
// that no wait has reported yet (see ErrIndexOutOfRange; Stream.LaunchChecked's
// failures too), returned once, in place of the result (nil, 0 for CountNonzero, -1
// for FindFirst). A call that needs no wait (an empty input) reports nothing.

// searchArgs returns the error of a nil stream or a nil context, which the search
// functions check first: they wait on the host, and the ...Where forms run Eval before.
func searchArgs(ctx context.Context, s *Stream, op string) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if err := s.refuseReadBack(op); err != nil {
		return err
	}
	if err := nilContext(ctx); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if s.isClosed() {
		return fmt.Errorf("gpu: %v: %w", s, ErrClosed)
	}
	return nil
}

// searchItems returns the elements per thread of the search kernels for elements of
// the given size.
func searchItems(size int) int {
	if size <= 2 {
		return 16
	}
	return 8
}

// Nonzero returns the flat indices of the nonzero elements of a, in increasing order
// (numpy.flatnonzero; Julia's findall on a vector), as a new 1-D int64 array. It waits
// (under ctx) for the count, to size the result: a count pass and a single-pass scan of
// the per-tile counts with decoupled look-back (Merrill and Garland 2016), one 8-byte
// copy of the total to the host, and a scatter pass into the new array. When a.Size()
// indices take at most 4 MiB, the scatter runs into an array of a.Size() elements before
// the count is known and writes the count into pinned host memory, so the host waits
// once; on CUDA the tiles' status comes from the stream's pool, which the scatter leaves
// zero, instead of a memset. A result that uses at most a quarter of those a.Size()
// indices (and would leave at least 64 KiB unused) is then copied into an array of its
// own size; otherwise it holds the memory of a.Size() indices (at most 4 MiB: at most
// four times its own size, or less than 64 KiB more) until it is freed. Larger outputs are scattered after the count, into an array of the count.
// Argwhere and Extract work the same way.
func Nonzero[T Elem](ctx context.Context, s *Stream, a *Array[T]) (*Array[int64], error) {
	if err := searchArgs(ctx, s, "Nonzero"); err != nil {
		return nil, err
	}
	if err := nonNil(a); err != nil {
		return nil, err
	}
	h, err := compact(ctx, s, a.header(), nil)
	if err != nil {
		return nil, err
	}
	return &Array[int64]{buf: h.buf, dt: dtype.Int64, shape: h.shape, strides: h.strides}, nil
}

// NonzeroWhere returns the flat indices where the predicate src (an expression over
// vars as in Eval, converted to bool) is true, over the broadcast shape of the arrays in
// vars (Julia's findall(pred, a)).
//
//	odd, err := gpu.NonzeroWhere(ctx, s, "x % 2 != 0", gpu.Vars{"x": x})
func NonzeroWhere(ctx context.Context, s *Stream, src string, vars Vars) (*Array[int64], error) {
	if err := searchArgs(ctx, s, "NonzeroWhere"); err != nil {
		return nil, err
	}
	mask, err := Eval[bool](s, src, vars)
	if err != nil {
		return nil, err
	}
	defer mask.Free()
	return Nonzero(ctx, s, mask)
}

// Argwhere returns the multi-indices of the nonzero elements of a as an (N, ndim)
// int64 array, one row per element in row-major order (numpy.argwhere; the rows of
// numpy.nonzero's tuple are its columns). A 0-d array gives (N, 0).
func Argwhere[T Elem](ctx context.Context, s *Stream, a *Array[T]) (*Array[int64], error) {
	if err := searchArgs(ctx, s, "Argwhere"); err != nil {
		return nil, err
	}
	if err := nonNil(a); err != nil {
		return nil, err
	}
	flat, err := Nonzero(ctx, s, a)
	if err != nil {
		return nil, err
	}
	nd := len(a.shape)
	n := flat.Size()
	if nd == 1 {
		// The result owns flat's buffer (a view could not be freed: its parent is
		// not the caller's).
		return &Array[int64]{buf: flat.buf, dt: dtype.Int64, shape: []int{n, 1}, strides: []int{1, 1}}, nil
	}
	if nd == 0 || n == 0 {
		flat.Free()
		return Empty[int64](s, n, nd)
	}
	defer flat.Free()
	st := rowMajor(a.shape)
	sh64 := make([]int64, nd)
	st64 := make([]int64, nd)
	for k := range sh64 {
		sh64[k], st64[k] = int64(a.shape[k]), int64(st[k])
	}
	shA, err := FromSlice(s, sh64)
	if err != nil {
		return nil, err
	}
	defer shA.Free()
	stA, err := FromSlice(s, st64)
	if err != nil {
		return nil, err
	}
	defer stA.Free()
	col, err := flat.Reshape(n, 1)
	if err != nil {
		return nil, err
	}
	return Eval[int64](s, "i / st % sh", Vars{"i": col, "st": stA, "sh": shA})
}

// Extract returns the elements of a where mask is true, in row-major order, as a new
// 1-D array: boolean-mask selection a[mask] (numpy.extract(mask, a); Julia's a[mask]).
// mask must have a's shape.
func Extract[T Elem](ctx context.Context, s *Stream, mask *Array[bool], a *Array[T]) (*Array[T], error) {
	if err := searchArgs(ctx, s, "Extract"); err != nil {
		return nil, err
	}
	if err := nonNil(mask, a); err != nil {
		return nil, err
	}
	if !slices.Equal(mask.shape, a.shape) {
		return nil, fmt.Errorf("gpu: mask of shape %v for an array of shape %v: %w", mask.shape, a.shape, ErrInvalidValue)
	}
	h, err := compact(ctx, s, mask.header(), a.header())
	if err != nil {
		return nil, err
	}
	return &Array[T]{buf: h.buf, dt: h.dt, shape: h.shape, strides: h.strides}, nil
}

// contiguousHeader returns h, or a contiguous copy of it (and a function freeing it).
func contiguousHeader(s *Stream, h *header) (*header, func(), error) {
	if contiguous(h.shape, h.strides) {
		return h, func() {}, nil
	}
	c, err := copyOf(s, h)
	if err != nil {
		return nil, nil, err
	}
	return c, func() { c.buf.Free() }, nil
}

// readU64 copies the 8 bytes at off in b to the host on s and waits for them (under
// ctx): readSmall.
func readU64(ctx context.Context, s *Stream, b *Buffer, off int64) (uint64, error) {
	var x [8]byte
	if err := readSmall(ctx, s, b, off, x[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint64(x[:]), nil
}

// readSmall copies len(dst) bytes, at most 8, at off in b into dst on s and waits for
// them (under ctx), through one of the device's pinned words (wordPool) when b is
// device memory: the copy is then asynchronous and the wait the package's own, where a
// copy into pageable memory returns from the driver only when done. If ctx ends first,
// dst is not written. Like Array.At, it then returns the failures its read reports
// (readReport: the index errors of the launches on the stream of b's last write, up
// to it), so that a call returning a result computed on s reports an earlier
// raise-mode index error on s as a host read of that result would.
func readSmall(ctx context.Context, s *Stream, b *Buffer, off int64, dst []byte) error {
	if err := s.refuseReadBack("a read of a small result"); err != nil {
		return err // (the copy would go into the graph, the wait return at once)
	}
	v, err := b.Slice(off, int64(len(dst)))
	if err != nil {
		return err
	}
	ws, wseq, err := b.a.lastWrite(ctx) // for the index errors this read reports
	if err != nil {
		return err
	}
	d := s.dev
	host := dst
	var word *Buffer
	if b.a.kind == DeviceMem && s.dev.tuning().ReadPinned && len(dst) <= 8 {
		if w, err := d.wordPool.get(d); err == nil {
			word, host = w, hostBytes(w)[:len(dst)]
		}
	}
	seq, p, err := s.copyDtoH(host, v)
	if err != nil {
		if word != nil && seq == 0 {
			d.wordPool.put(word)
		}
		return err
	}
	if err := s.waitUnpin(ctx, seq, p); err != nil {
		if word != nil { // the copy may still be in flight: the word goes back after it
			s.runAfter(seq, func() { d.wordPool.put(word) })
		}
		return err
	}
	if word != nil {
		copy(dst, host)
		d.wordPool.put(word)
	}
	return readReport(b, ws, wseq)
}

// compact returns the indices of the nonzero elements of flags (values nil) or the
// elements of values at them, as a new 1-D contiguous array.
func compact(ctx context.Context, s *Stream, flags, values *header) (*header, error) {
	d := s.dev
	for _, h := range []*header{flags, values} {
		if h != nil && h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
			return nil, fmt.Errorf("gpu: search of an array on %v on a stream of %v: %w", h.buf.a.dev, d, ErrInvalidValue)
		}
	}
	outType := dtype.Int64
	if values != nil {
		outType = values.dt
	}
	n := prod(flags.shape)
	empty := func() (*header, error) {
		buf, err := s.Alloc(0)
		if err != nil {
			return nil, err
		}
		return &header{buf: buf, dt: outType, shape: []int{0}, strides: []int{1}}, nil
	}
	if n == 0 {
		return empty()
	}
	flags, freeF, err := contiguousHeader(s, flags)
	if err != nil {
		return nil, err
	}
	defer freeF()
	var vt dtype.DType
	if values != nil {
		var freeV func()
		if values, freeV, err = contiguousHeader(s, values); err != nil {
			return nil, err
		}
		defer freeV()
		vt = values.dt
	}
	items := searchItems(flags.dt.Size())
	ptr := func(h *header) uint64 { return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size()) }
	vec := ptr(flags)%16 == 0
	count := &kernel.CompactCount{In: flags.dt, Items: items, Vector: vec}
	scatter := &kernel.CompactScatter{In: flags.dt, Values: vt, Items: items, Vector: vec}
	tile := count.Tile()
	tiles := (n + tile - 1) / tile
	if tiles > 1<<31-1 {
		return nil, fmt.Errorf("gpu: compaction of %d tiles: %w", tiles, ErrNotSupported)
	}
	fnCount, err := d.kernel(count)
	if err != nil {
		return nil, err
	}
	fnScatter, err := d.kernel(scatter)
	if err != nil {
		return nil, err
	}
	cfg := launchGeometry(tiles, 1, kernel.SearchBlock)
	// The status: 16 bytes and a word per tile, padded to 16 (the scatter's clear).
	statusSize := 16 + (8*tiles+15)&^15
	if int64(n)*int64(outType.Size()) <= d.tuning().CompactEagerMax {
		// Small: an output of n elements, scattered into before the count is known, so
		// that the host waits once, after both kernels, rather than twice; the scatter
		// writes the count into a pinned word, and the result views its first count
		// elements.
		return compactEager(ctx, s, fnCount, fnScatter, cfg, flags, values, n, outType, statusSize, empty)
	}
	// The host reads the count from the status: a zeroed buffer of the stream's scratch.
	sc, err := s.scratch(scratchCompactStatus, statusSize, false)
	if err != nil {
		return nil, err
	}
	defer sc.release(false)
	status := sc.buf
	if err := launchCount(s, fnCount, cfg, flags, sc, n); err != nil {
		return nil, err
	}
	// total reads the count from the last tile's status word, waiting for it.
	total := func() (int, error) {
		word, err := readU64(ctx, s, status, int64(16+8*(tiles-1)))
		if err != nil {
			return 0, err
		}
		t := int(word & (1<<62 - 1))
		if word>>62 != 2 || t > n {
			return 0, fmt.Errorf("gpu: compaction status word %#x for %d elements: %w", word, n, ErrLaunchFailed)
		}
		return t, nil
	}
	t, err := total()
	if err != nil {
		return nil, err
	}
	if t == 0 {
		return empty()
	}
	buf, err := s.Alloc(int64(t * outType.Size()))
	if err != nil {
		return nil, err
	}
	out := &header{buf: buf, dt: outType, shape: []int{t}, strides: []int{1}}
	if err := launchScatter(s, fnScatter, cfg, flags, sc, buf, values, n, nil); err != nil {
		buf.Free()
		return nil, err
	}
	return out, nil
}

// compactEager is compact's path for small outputs: the status from the stream's
// scratch (pooled: the scatter leaves it zero, kernel.CompactScatter), both kernels,
// then one wait for the count, which the scatter writes into one of the device's
// pinned words.
func compactEager(ctx context.Context, s *Stream, fnCount, fnScatter *Function, cfg backend.LaunchConfig, flags *header,
	values *header, n int, outType dtype.DType, statusSize int, empty func() (*header, error)) (*header, error) {
	d := s.dev
	// Held throughout (runAfter below needs the stream).
	if err := s.hold(); err != nil {
		return nil, err
	}
	defer s.unhold()
	// The scatter leaves a status of at most kernel.ScanSelfCleanMax bytes past its
	// header zero, so that one comes from the stream's pool of clean scratch.
	sc, err := s.scratch(scratchCompactStatus, statusSize, statusSize-16 <= kernel.ScanSelfCleanMax)
	if err != nil {
		return nil, err
	}
	release := sc.release
	word, err := d.wordPool.get(d)
	if err != nil {
		release(true)
		return nil, err
	}
	buf, err := s.Alloc(int64(n * outType.Size()))
	if err != nil {
		release(true)
		d.wordPool.put(word)
		return nil, err
	}
	if err := launchCount(s, fnCount, cfg, flags, sc, n); err != nil {
		release(true)
		d.wordPool.put(word)
		buf.Free()
		return nil, err
	}
	if err := launchScatter(s, fnScatter, cfg, flags, sc, buf, values, n, word); err != nil {
		release(false) // counted, not cleared
		d.wordPool.put(word)
		buf.Free()
		return nil, err
	}
	release(true) // the scatter leaves it zero for the stream's next compaction
	// The word's last write is the scatter: the index errors this read reports.
	ws, wseq, _ := word.a.lastWrite(context.Background()) // (the package's own word: no scope holds it)
	var t uint64
	if err := word.HostAccess(ctx, Read, func(h []byte) error { t = binary.LittleEndian.Uint64(h); return nil }); err != nil {
		buf.Free()
		// The scatter may still write the word: it goes back after the stream's work.
		s.runAfter(s.seq.Load()+1<<62, func() { d.wordPool.put(word) })
		return nil, err
	}
	err = readReport(word, ws, wseq)
	d.wordPool.put(word)
	if err != nil {
		buf.Free()
		return nil, err
	}
	if t > uint64(n) {
		buf.Free()
		return nil, fmt.Errorf("gpu: compaction count %d for %d elements: %w", t, n, ErrLaunchFailed)
	}
	if t == 0 {
		buf.Free()
		return empty()
	}
	used := int64(t) * int64(outType.Size())
	if full := int64(n) * int64(outType.Size()); full-used >= compactShrinkMin && compactShrinkRatio*used <= full {
		// Much smaller than the n elements: an exact-size copy, so that the result
		// doesn't hold the whole buffer (200 one-element results held 800 MiB).
		if exact, err := s.Alloc(used); err == nil {
			part := &Buffer{a: buf.a, off: buf.off, size: used}
			if err := s.CopyDtoD(exact, part); err == nil {
				buf.Free()
				return &header{buf: exact, dt: outType, shape: []int{int(t)}, strides: []int{1}}, nil
			}
			exact.Free()
		}
	}
	// The result's buffer is its t elements (Buffer().Size(), copies of the whole
	// buffer); the allocation, freed as a whole, keeps its n.
	buf.size = used
	return &header{buf: buf, dt: outType, shape: []int{int(t)}, strides: []int{1}}, nil
}

// compactShrinkMin is the least memory an eager compaction's result must waste (its n
// elements' buffer past its count) to be copied into a buffer of its exact size, and
// compactShrinkRatio the least ratio of that buffer to the result's size: one more
// device copy, about 10 us of the host's on the H200 (the copy's call and its wait),
// which at half (Metal.jl's findall of odd integers, 47.6% of them) made the row 1.5
// times as long.
const (
	compactShrinkMin   = 64 << 10
	compactShrinkRatio = 4
)

// FindFirst returns the flat index of the first nonzero element of a, or -1 if there
// is none (Julia's findfirst; numpy.argmax of a bool array when one is true); -1 with
// an error too. Blocks
// skip the tiles past an index already found, so the kernel ends early when the
// element comes early. It waits (under ctx) for the result.
func FindFirst[T Elem](ctx context.Context, s *Stream, a *Array[T]) (int, error) {
	if err := searchArgs(ctx, s, "FindFirst"); err != nil {
		return -1, err
	}
	if err := nonNil(a); err != nil {
		return -1, err
	}
	return findFirst(ctx, s, a.header())
}

// FindFirstWhere returns the flat index of the first element where the predicate src
// (an expression over vars as in Eval, converted to bool) is true, or -1 (Julia's
// findfirst(pred, a)). The predicate is evaluated for every element first.
func FindFirstWhere(ctx context.Context, s *Stream, src string, vars Vars) (int, error) {
	if err := searchArgs(ctx, s, "FindFirstWhere"); err != nil {
		return -1, err
	}
	mask, err := Eval[bool](s, src, vars)
	if err != nil {
		return -1, err
	}
	defer mask.Free()
	return findFirst(ctx, s, mask.header())
}

func findFirst(ctx context.Context, s *Stream, h *header) (int, error) {
	d := s.dev
	if h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
		return -1, fmt.Errorf("gpu: search of an array on %v on a stream of %v: %w", h.buf.a.dev, d, ErrInvalidValue)
	}
	n := prod(h.shape)
	if n == 0 {
		return -1, nil
	}
	h, free, err := contiguousHeader(s, h)
	if err != nil {
		return -1, err
	}
	defer free()
	sp := &kernel.FindFirst{In: h.dt, Items: searchItems(h.dt.Size())}
	fn, err := d.kernel(sp)
	if err != nil {
		return -1, err
	}
	res, err := s.Alloc(8)
	if err != nil {
		return -1, err
	}
	defer res.Free()
	if err := s.MemsetD32(res, 0xFFFFFFFF); err != nil {
		return -1, err
	}
	tiles := (n + sp.Tile() - 1) / sp.Tile()
	grid := min(tiles, 8*max(1, d.info.Multiprocessors))
	if err := launchSearch(s, fn, launchGeometry(grid, 1, kernel.SearchBlock), h, res, n); err != nil {
		return -1, err
	}
	v, err := readU64(ctx, s, res, 0)
	if err != nil {
		return -1, err
	}
	if v == ^uint64(0) {
		return -1, nil
	}
	return int(v), nil
}

// CountNonzero returns the number of nonzero elements of a (numpy.count_nonzero with no
// axis). It waits (under ctx) for the result.
func CountNonzero[T Elem](ctx context.Context, s *Stream, a *Array[T]) (int, error) {
	if err := searchArgs(ctx, s, "CountNonzero"); err != nil {
		return 0, err
	}
	if err := nonNil(a); err != nil {
		return 0, err
	}
	d := s.dev
	h := a.header()
	if h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
		return 0, fmt.Errorf("gpu: count of an array on %v on a stream of %v: %w", h.buf.a.dev, d, ErrInvalidValue)
	}
	n := prod(h.shape)
	if n == 0 {
		return 0, nil
	}
	h, free, err := contiguousHeader(s, h)
	if err != nil {
		return 0, err
	}
	defer free()
	sp := &kernel.CountNonzero{In: h.dt, Items: searchItems(h.dt.Size())}
	fn, err := d.kernel(sp)
	if err != nil {
		return 0, err
	}
	res, err := s.Alloc(8)
	if err != nil {
		return 0, err
	}
	defer res.Free()
	if err := s.MemsetD32(res, 0); err != nil {
		return 0, err
	}
	tiles := (n + sp.Tile() - 1) / sp.Tile()
	grid := min(tiles, 4*max(1, d.info.Multiprocessors))
	if err := launchSearch(s, fn, launchGeometry(grid, 1, kernel.SearchBlock), h, res, n); err != nil {
		return 0, err
	}
	v, err := readU64(ctx, s, res, 0)
	return int(v), err
}

// launchSearch enqueues a reduction to one word (FindFirst, CountNonzero): in, the
// result word res (read and written), n.
func launchSearch(s *Stream, fn *Function, cfg backend.LaunchConfig, in *header, res *Buffer, n int) error {
	la := newLaunchArgs()
	la.hdr(in, Read)
	la.buf(res, ReadWrite)
	la.u64(uint64(n))
	return la.launch(s, fn, cfg)
}

// launchCount enqueues a compaction's count (kernel.CompactCount): flags, the status,
// n.
func launchCount(s *Stream, fn *Function, cfg backend.LaunchConfig, flags *header, status *scratch, n int) error {
	la := newLaunchArgs()
	la.hdr(flags, Read)
	status.addTo(&la)
	la.u64(uint64(n))
	return la.launch(s, fn, cfg)
}

// launchScatter enqueues a compaction's scatter (kernel.CompactScatter): flags, the
// status, out, the values (nil: the indices), n, and the word the count goes to (nil:
// none).
func launchScatter(s *Stream, fn *Function, cfg backend.LaunchConfig, flags *header, status *scratch, out *Buffer, values *header, n int, word *Buffer) error {
	la := newLaunchArgs()
	la.hdr(flags, Read)
	status.addTo(&la)
	la.buf(out, Write)
	if values != nil {
		la.hdr(values, Read)
	} else {
		la.null()
	}
	la.u64(uint64(n))
	if word != nil {
		la.buf(word, Write)
	} else {
		la.null()
	}
	return la.launch(s, fn, cfg)
}
