package gpu

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"sync/atomic"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// Elem is the set of Go element types of arrays: bool, the sized integers, int and
// uint (64-bit), float32, float64, and Float16 and BFloat16 (named uint16s holding
// half-precision bits, which dtype.Of tells from uint16). Named types of these kinds
// (type Celsius float32) are elements of their kind.
type Elem = dtype.Number

// Array is an n-dimensional array of T on one device: a view (shape, strides and an
// offset, in elements, row-major like NumPy and gonum) of a Buffer. Views made by
// Reshape, Slice, Transpose and BroadcastTo share the buffer and its automatic ordering
// across streams; operations take the stream they are enqueued on. Operations never
// modify their inputs unless named for it (Fill, Copy, Set, the ...Into forms).
//
// fmt prints an array's values in NumPy's layout (fmt.Println(a) shows [[1 2 3] ...]),
// reading them from the device: see Format, and Text for a read under a context.
//
// A nil *Array (or a zero Array, which has no buffer) is never valid: its methods that
// return an error, Free included, return one wrapping ErrInvalidValue, and the others
// return zero values (nil, 0, false, dtype.Invalid, "<nil array>" for String), so that
// a chain such as a.Reshape(...) then BroadcastTo or Free after a failed call gives an
// error, not a panic.
type Array[T Elem] struct {
	buf     *Buffer
	dt      dtype.DType
	shape   []int
	strides []int // in elements; 0 for broadcast dimensions
	off     int   // in elements from the buffer's start
	view    bool
	args    atomic.Pointer[argRefs]
}

// AnyArray is an array of any element type, as passed to Eval and the other
// operations that mix types.
type AnyArray interface {
	DType() dtype.DType
	Shape() []int
	header() *header
	hdr() header
	isNil() bool
	isFreed() bool
}

func (a *Array[T]) isNil() bool { return a == nil || a.buf == nil }

// isFreed reports whether the array's memory was freed (views share their array's).
func (a *Array[T]) isFreed() bool { return a.buf.a.gone.Load() }

// header is an array's layout without its Go type.
type header struct {
	buf     *Buffer
	dt      dtype.DType
	shape   []int
	strides []int
	off     int
}

func (a *Array[T]) header() *header {
	h := a.hdr()
	return &h
}

func (a *Array[T]) hdr() header {
	return header{buf: a.buf, dt: a.dt, shape: a.shape, strides: a.strides, off: a.off}
}

// errNilArray is the error of a nil array, as receiver or argument.
var errNilArray = fmt.Errorf("gpu: nil array: %w", ErrInvalidValue)

// DType returns the element type (dtype.Invalid for a nil array).
func (a *Array[T]) DType() dtype.DType {
	if a.isNil() {
		return dtype.Invalid
	}
	return a.dt
}

// Shape returns the shape (a copy; nil for a nil array).
func (a *Array[T]) Shape() []int {
	if a.isNil() {
		return nil
	}
	return slices.Clone(a.shape)
}

// Strides returns the strides in elements (a copy; nil for a nil array).
func (a *Array[T]) Strides() []int {
	if a.isNil() {
		return nil
	}
	return slices.Clone(a.strides)
}

// Ndim returns the number of dimensions (0 for a nil array).
func (a *Array[T]) Ndim() int {
	if a.isNil() {
		return 0
	}
	return len(a.shape)
}

// Size returns the number of elements (0 for a nil array).
func (a *Array[T]) Size() int {
	if a.isNil() {
		return 0
	}
	return prod(a.shape)
}

// Device returns the array's device (nil for a nil array).
func (a *Array[T]) Device() *Device {
	if a.isNil() {
		return nil
	}
	return a.buf.a.dev
}

// Buffer returns the buffer the array views (nil for a nil array).
func (a *Array[T]) Buffer() *Buffer {
	if a.isNil() {
		return nil
	}
	return a.buf
}

// Offset returns the array's first element's offset in its buffer, in elements (0 for
// a nil array).
func (a *Array[T]) Offset() int {
	if a.isNil() {
		return 0
	}
	return a.off
}

// IsContiguous reports whether the array is laid out row-major with no gaps (false for
// a nil array).
func (a *Array[T]) IsContiguous() bool {
	if a.isNil() {
		return false
	}
	return contiguous(a.shape, a.strides)
}

// Free frees the array's buffer (see Buffer.Free). Freeing a view (of an array, or
// ArrayOf a buffer) is an error: free the array or buffer it was made from. Freeing a
// nil array is an error wrapping ErrInvalidValue.
func (a *Array[T]) Free() error {
	if a.isNil() {
		return errNilArray
	}
	if a.view {
		return fmt.Errorf("gpu: Free of an array view: free the array or buffer it was made from: %w", ErrInvalidValue)
	}
	return a.buf.Free()
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// layout returns a copy of shape and its row-major strides, in one allocation.
func layout(shape []int) (sh, st []int) {
	n := len(shape)
	both := make([]int, 2*n)
	sh, st = both[:n:n], both[n:]
	copy(sh, shape)
	s := 1
	for d := n - 1; d >= 0; d-- {
		st[d] = s
		s *= shape[d]
	}
	return sh, st
}

func rowMajor(shape []int) []int {
	st := make([]int, len(shape))
	s := 1
	for d := len(shape) - 1; d >= 0; d-- {
		st[d] = s
		s *= shape[d]
	}
	return st
}

func contiguous(shape, strides []int) bool {
	want := 1
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] != 1 && strides[d] != want {
			return false
		}
		want *= shape[d]
	}
	return true
}

// checkShape validates a shape and returns its element count.
func checkShape(shape []int) (int, error) {
	n := 1
	for _, d := range shape {
		if d < 0 {
			// (A copy, so that shape itself doesn't escape: callers' variadic shapes stay
			// on their stacks.)
			return 0, fmt.Errorf("gpu: negative dimension in shape %v: %w", slices.Clone(shape), ErrInvalidValue)
		}
		if d > 0 && n > math.MaxInt/d {
			return 0, fmt.Errorf("gpu: shape %v has too many elements: %w", slices.Clone(shape), ErrInvalidValue)
		}
		n *= d
	}
	return n, nil
}

// grownDim returns the dimension d*by+plus (d, by, plus >= 0) and whether it fits an
// int: the shape of Tile, Repeat, Pad and Concatenate before checkShape, which sees only
// the result.
func grownDim(d, by, plus int) (int, bool) {
	if by > 0 && d > math.MaxInt/by {
		return 0, false
	}
	d *= by
	if plus > math.MaxInt-d {
		return 0, false
	}
	return d + plus, true
}

func sizeOf[T Elem]() int {
	var z T
	return int(unsafe.Sizeof(z))
}

// Empty returns a new contiguous array of the given shape, allocated on s; its contents
// are undefined. A shape of no dimensions is a 0-d array of one element.
func Empty[T Elem](s *Stream, shape ...int) (*Array[T], error) {
	n, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	size := sizeOf[T]()
	if n > math.MaxInt/size { // (the byte count is an int: on the CPU backend a Go slice)
		return nil, fmt.Errorf("gpu: shape %v is too large: %w", slices.Clone(shape), ErrInvalidValue)
	}
	buf, err := s.Alloc(int64(n * size))
	if err != nil {
		return nil, err
	}
	sh, st := layout(shape)
	return &Array[T]{buf: buf, dt: dtype.Of[T](), shape: sh, strides: st}, nil
}

// Zeros returns a new array of zeros.
func Zeros[T Elem](s *Stream, shape ...int) (*Array[T], error) {
	a, err := Empty[T](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := s.Memset(a.buf, 0); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// Ones returns a new array of ones.
func Ones[T Elem](s *Stream, shape ...int) (*Array[T], error) {
	return Full(s, fromFloat[T](1), shape...)
}

// Full returns a new array with every element v.
func Full[T Elem](s *Stream, v T, shape ...int) (*Array[T], error) {
	a, err := Empty[T](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := Fill(s, a, v); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// fromFloat converts a float64 to T as a Go conversion would (bool: f != 0; Float16 and
// BFloat16: rounded to nearest even). T may be a named type (type Celsius float32): the
// conversion goes by its kind, as dtype.Of does.
func fromFloat[T Elem](f float64) T {
	var v T
	rv := reflect.ValueOf(&v).Elem()
	if t := dtype.Of[T](); isHalf(t) {
		rv.SetUint(uint64(halfFromFloat(t, f))) // rounded once, to nearest even
		return v
	}
	switch rv.Kind() {
	case reflect.Bool:
		rv.SetBool(f != 0)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		rv.SetInt(int64(f))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		rv.SetUint(uint64(f))
	default:
		rv.SetFloat(f)
	}
	return v
}

// toFloat returns v as a float64 (bool: 0 or 1; half types: their exact value).
func toFloat[T Elem](v T) float64 {
	rv := reflect.ValueOf(v)
	if t := dtype.Of[T](); isHalf(t) {
		return halfToFloat(t, uint16(rv.Uint()))
	}
	switch rv.Kind() {
	case reflect.Bool:
		if rv.Bool() {
			return 1
		}
		return 0
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return float64(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return float64(rv.Uint())
	}
	return rv.Float()
}

// intBits returns an integer element's value as an int64: sign-extended for signed
// types, the uint64 bits for unsigned ones.
func intBits[T Elem](v T) int64 {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(rv.Uint())
	}
	return rv.Int()
}

// bitsOf returns the element's bits, zero-extended.
func bitsOf[T Elem](v T) uint64 {
	var b [8]byte
	*(*T)(unsafe.Pointer(&b[0])) = v
	return binary.LittleEndian.Uint64(b[:])
}

func boolToU64(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Fill sets every element of a (any view, broadcast views excepted) to v.
func Fill[T Elem](s *Stream, a *Array[T], v T) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if err := nonNil(a); err != nil {
		return err
	}
	if a.hasZeroStride() {
		return fmt.Errorf("gpu: fill of a broadcast view: %w", ErrInvalidValue)
	}
	if a.Size() == 0 {
		return nil
	}
	if a.IsContiguous() {
		bits := bitsOf(v)
		buf, err := a.bytes()
		if err != nil {
			return err
		}
		switch size := sizeOf[T](); {
		case size == 1:
			return s.Memset(buf, byte(bits))
		case size == 4:
			return s.MemsetD32(buf, uint32(bits))
		case size == 2:
			return s.tracked([]use{{a: buf.a, mode: Write}}, func() error {
				return s.be.Memset(buf.a.mem, buf.off, uint32(bits), 2, buf.size/2)
			})
		case size == 8 && uint32(bits) == uint32(bits>>32):
			return s.MemsetD32(buf, uint32(bits))
		}
	}
	return evalInto(s, a.header(), "v", Vars{"v": v})
}

// bytes returns the buffer view holding a contiguous array's elements.
func (a *Array[T]) bytes() (*Buffer, error) {
	size := int64(sizeOf[T]())
	return a.buf.Slice(int64(a.off)*size, int64(a.Size())*size)
}

// FromSlice returns a new contiguous array holding data, with the given shape (a 1-d
// array of len(data) elements if no shape is given), copied on s. data may be reused as
// soon as FromSlice returns. On a stream that captures a graph, the copy is made at once,
// outside the graph (as CopyFromHost): the array holds data when FromSlice returns, a
// constant of the graph's launches unless work writes it.
func FromSlice[T Elem](s *Stream, data []T, shape ...int) (*Array[T], error) {
	if len(shape) == 0 {
		shape = []int{len(data)}
	}
	n, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	if n != len(data) {
		return nil, fmt.Errorf("gpu: %d values for shape %v of %d elements: %w", len(data), shape, n, ErrInvalidValue)
	}
	a, err := Empty[T](s, shape...)
	if err != nil {
		return nil, err
	}
	if n > 0 && s.Capturing() {
		if err := a.CopyFromHost(context.Background(), data); err != nil {
			a.Free()
			return nil, err
		}
	} else if n > 0 {
		src := Bytes(data)
		if s.ringCopyable(src, a.buf) || !s.dev.info.StagedHostCopies {
			// The copy reads src after the return (the stream's staging ring, the CPU
			// backend's queue): a copy of its own, so that data may be reused at once.
			src = bytes.Clone(src)
		}
		if err := s.CopyHtoD(a.buf, src); err != nil {
			a.Free()
			return nil, err
		}
	}
	return a, nil
}

// ToSlice copies the array to a new Go slice in row-major order and returns once it
// holds the data; it waits for pending writes to the array, on any stream, without
// pinning an OS thread. A non-contiguous array is first made contiguous on a stream of
// the package's own (not the default stream, which may capture or be faulted).
// On an error it returns a nil slice, but for the failures of earlier operations that
// the read reports (ErrIndexOutOfRange, ErrKernelFailure), read with the data.
func (a *Array[T]) ToSlice(ctx context.Context) ([]T, error) {
	if err := nilContext(ctx); err != nil {
		return nil, err
	}
	if a.isNil() {
		return nil, errNilArray
	}
	ws, wseq, err := a.buf.a.lastWrite(ctx) // for the index errors this read reports
	if err != nil {
		return nil, err
	}
	c := a
	if !a.IsContiguous() {
		// First, so that a view too large to copy (a broadcast one) or a freed array is
		// an error before the host slice is made.
		var err error
		if c, err = a.contiguousForRead(ctx); err != nil {
			return nil, err
		}
		defer c.Free()
	} else if a.buf.a.gone.Load() {
		return nil, fmt.Errorf("gpu: ToSlice of a freed array: %w", ErrClosed)
	}
	out := make([]T, c.Size())
	if err := c.CopyToHost(ctx, out); err != nil {
		if errors.Is(err, ErrIndexOutOfRange) || errors.Is(err, ErrKernelFailure) {
			return out, err // an earlier operation's failure that the read reports: the data is read
		}
		return nil, err
	}
	return out, readReport(a.buf, ws, wseq)
}

// CopyToHost copies the array into dst (len(dst) == Size()) and returns once it is there.
// If ctx ends first, see Buffer.CopyToHost.
func (a *Array[T]) CopyToHost(ctx context.Context, dst []T) error {
	if err := nilContext(ctx); err != nil {
		return err
	}
	if err := nonNil(a); err != nil {
		return err
	}
	if len(dst) != a.Size() {
		return fmt.Errorf("gpu: copying %d elements into %d: %w", a.Size(), len(dst), ErrInvalidValue)
	}
	if len(dst) == 0 {
		return nil
	}
	ws, wseq, err := a.buf.a.lastWrite(ctx) // for the index errors this read reports
	if err != nil {
		return err
	}
	c := a
	if !a.IsContiguous() {
		if c, err = a.contiguousForRead(ctx); err != nil {
			return err
		}
		defer c.Free()
	}
	buf, err := c.bytes()
	if err != nil {
		return err
	}
	if err := buf.CopyToHost(ctx, Bytes(dst)); err != nil {
		return err
	}
	return readReport(a.buf, ws, wseq)
}

// contiguousForRead is a contiguous copy of a non-contiguous array for a host read,
// made on the device's side stream once a's pending writes are done: waited for on the
// host under ctx first, so that the copy never waits in the device for another
// stream's work. Not on the default stream: a capture begun on it (in another goroutine
// too) would take the copy, and the read of it would spoil the capture; a failed
// HostFunc's fault on it would fail the read.
func (a *Array[T]) contiguousForRead(ctx context.Context) (*Array[T], error) {
	d := a.Device()
	pol, err := d.pickPolicy(nil)
	if err != nil {
		return nil, err
	}
	if !a.buf.a.gone.Load() && a.Size() > 0 {
		if err := a.buf.a.hostWait(ctx, Read, pol); err != nil {
			return nil, err
		}
	}
	side, err := d.sideStream()
	if err != nil {
		return nil, err
	}
	return Contiguous(side, a)
}

// CopyFromHost copies src (len(src) == Size(), row-major) into the array, which must be
// contiguous, and returns once it is there.
func (a *Array[T]) CopyFromHost(ctx context.Context, src []T) error {
	if err := nilContext(ctx); err != nil {
		return err
	}
	if err := nonNil(a); err != nil {
		return err
	}
	if len(src) != a.Size() {
		return fmt.Errorf("gpu: copying %d elements into %d: %w", len(src), a.Size(), ErrInvalidValue)
	}
	if !a.IsContiguous() {
		return fmt.Errorf("gpu: copying from the host into a non-contiguous array: %w", ErrInvalidValue)
	}
	if len(src) == 0 {
		return nil
	}
	buf, err := a.bytes()
	if err != nil {
		return err
	}
	return buf.CopyFromHost(ctx, Bytes(src))
}

// index returns the element offset of idx, checking bounds (negative indices count
// from the end, as in NumPy).
func (a *Array[T]) index(idx []int) (int, error) {
	if len(idx) != len(a.shape) {
		return 0, fmt.Errorf("gpu: %d indices for a %d-d array: %w", len(idx), len(a.shape), ErrInvalidValue)
	}
	off := a.off
	for d, i := range idx {
		if i < 0 {
			i += a.shape[d]
		}
		if i < 0 || i >= a.shape[d] {
			return 0, fmt.Errorf("gpu: index %d out of range for axis %d of size %d: %w", idx[d], d, a.shape[d], ErrInvalidValue)
		}
		off += i * a.strides[d]
	}
	return off, nil
}

// At returns one element. It is a round trip to the device (slow: use ToSlice for
// many); on unified memory it reads the host's view directly.
func (a *Array[T]) At(ctx context.Context, idx ...int) (T, error) {
	var v [1]T
	if a.isNil() {
		return v[0], errNilArray
	}
	off, err := a.index(idx)
	if err != nil {
		return v[0], err
	}
	size := int64(sizeOf[T]())
	elem, err := a.buf.Slice(int64(off)*size, size)
	if err != nil {
		return v[0], err
	}
	ws, wseq, err := a.buf.a.lastWrite(ctx) // for the index errors this read reports
	if err != nil {
		return v[0], err
	}
	if a.buf.Kind() == UnifiedMem {
		err = elem.HostAccess(ctx, Read, func(h []byte) error { copy(Bytes(v[:]), h); return nil })
	} else {
		// As CopyToHost: a wait on the host, then through a pinned word (an element of
		// at most 8 bytes) on a copy stream.
		err = elem.CopyToHost(ctx, Bytes(v[:]))
	}
	if err != nil {
		return v[0], err
	}
	return v[0], readReport(a.buf, ws, wseq)
}

// Set sets one element and returns once it is written (a round trip, like At). Setting
// an element of a broadcast view is an error (ErrInvalidValue), as writing one would
// write every element it stands for. If ctx ends first, Set returns ctx.Err() and the
// element may or may not be written: a copy to device memory already enqueued goes on,
// while a write to host-visible memory (the CPU backend, unified memory) that has not
// started is dropped.
func (a *Array[T]) Set(ctx context.Context, v T, idx ...int) error {
	if a.isNil() {
		return errNilArray
	}
	if a.hasZeroStride() {
		return fmt.Errorf("gpu: Set on a broadcast view: %w", ErrInvalidValue)
	}
	off, err := a.index(idx)
	if err != nil {
		return err
	}
	size := int64(sizeOf[T]())
	elem, err := a.buf.Slice(int64(off)*size, size)
	if err != nil {
		return err
	}
	val := [1]T{v}
	if a.buf.Kind() != DeviceMem || a.Device().info.Backend == "cpu" {
		return elem.HostAccess(ctx, Write, func(h []byte) error { copy(h, Bytes(val[:])); return nil })
	}
	return elem.CopyFromHost(ctx, Bytes(val[:]))
}

func (a *Array[T]) derive(shape, strides []int, off int) *Array[T] {
	return &Array[T]{buf: a.buf, dt: a.dt, shape: shape, strides: strides, off: off, view: true}
}

// Reshape returns a view with a new shape of the same size; one dimension may be -1
// (inferred). Every contiguous array has one, and so does a view whose axes that the
// reshape merges or splits are laid out one after the other (NumPy returns a view in
// the same cases); otherwise Reshape returns an error wrapping ErrInvalidValue: the
// function Reshape makes a copy then, as numpy.reshape does.
func (a *Array[T]) Reshape(shape ...int) (*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	to, err := reshapeShape(a.Size(), shape)
	if err != nil {
		return nil, err
	}
	if a.IsContiguous() {
		return a.derive(to, rowMajor(to), a.off), nil
	}
	st, ok := viewStrides(a.shape, a.strides, to)
	if !ok {
		return nil, fmt.Errorf("gpu: reshape of a %v view with strides %v to %v needs a copy: use the function Reshape, or Contiguous first: %w", a.shape, a.strides, to, ErrInvalidValue)
	}
	return a.derive(to, st, a.off), nil
}

// End stands for "to the end" as a Range's Stop.
const End = math.MaxInt

// Range selects indices Start, Start+Step, ... before Stop along one axis, as NumPy's
// start:stop:step. Negative Start and Stop count from the end; Start and Stop are
// clamped; Step 0 means 1; a negative Step walks backwards (then Stop End means "past
// the start"). Go has no "omitted start": Range{0, End, -1} is NumPy's ::-1 (the whole
// axis reversed), not 0::-1 (which is R(0, 1)).
type Range struct{ Start, Stop, Step int }

// R makes a Range: R() is the whole axis, R(i) the index i as the range i:i+1 (the axis
// is kept, with size 1, or 0 when i is past the end, as NumPy's a[i:i+1]; R(-1) is the
// last index), R(start, stop) and R(start, stop, step) as in NumPy; bounds past the
// third are ignored.
func R(bounds ...int) Range {
	switch len(bounds) {
	case 0:
		return Range{0, End, 1}
	case 1:
		if bounds[0] == -1 {
			return Range{-1, End, 1}
		}
		return Range{bounds[0], bounds[0] + 1, 1}
	case 2:
		return Range{bounds[0], bounds[1], 1}
	}
	return Range{bounds[0], bounds[1], bounds[2]}
}

// resolve returns the first index, count and step of r over an axis of size n
// (numpy's slice.indices).
func (r Range) resolve(n int) (start, count, step int) {
	step = r.Step
	if step == 0 {
		step = 1
	}
	clamp := func(i, lo, hi int) int { return max(lo, min(i, hi)) }
	norm := func(i int) int {
		if i < 0 && i != -End {
			i += n
		}
		return i
	}
	if step > 0 {
		start = clamp(norm(r.Start), 0, n)
		stop := n
		if r.Stop != End {
			stop = clamp(norm(r.Stop), 0, n)
		}
		if stop > start {
			count = (stop-start-1)/step + 1 // no overflow for any step
		}
		if count <= 1 {
			step = 1 // a step past the axis selects one element: keep strides small
		}
		return start, count, step
	}
	start = clamp(norm(r.Start), -1, n-1)
	if r.Start == 0 && r.Stop == End {
		start = n - 1 // R(0, End, -1) walks the whole axis backwards
	}
	stop := -1
	if r.Stop != End {
		stop = clamp(norm(r.Stop), -1, n-1)
	}
	if start > stop {
		if step == math.MinInt {
			count = 1 // -step overflows; any such step selects one element
		} else {
			count = (start-stop-1)/-step + 1
		}
	}
	if count <= 1 {
		step = 1
	}
	return start, count, step
}

// Slice returns a view selecting ranges along the leading axes (the remaining axes are
// whole), like NumPy's a[r0, r1, ...]. NewAxis among the ranges inserts an axis of size
// 1 there and selects no axis of a (NumPy's a[:, np.newaxis]).
func (a *Array[T]) Slice(ranges ...Range) (*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	used := 0
	for _, r := range ranges {
		if !r.isNewAxis() {
			used++
		}
	}
	if used > len(a.shape) {
		return nil, fmt.Errorf("gpu: %d ranges for a %d-d array: %w", used, len(a.shape), ErrInvalidValue)
	}
	nd := len(a.shape) + len(ranges) - used
	shape, strides, off := make([]int, 0, nd), make([]int, 0, nd), a.off
	d := 0
	var newAxes []int // positions of the inserted axes in the result
	for _, r := range ranges {
		if r.isNewAxis() {
			newAxes = append(newAxes, len(shape))
			shape = append(shape, 1)
			strides = append(strides, 0) // set below
			continue
		}
		start, count, step := r.resolve(a.shape[d])
		if count > 0 {
			off += start * a.strides[d]
		}
		shape = append(shape, count)
		strides = append(strides, a.strides[d]*step)
		d++
	}
	shape = append(shape, a.shape[d:]...)
	strides = append(strides, a.strides[d:]...)
	for i := len(newAxes) - 1; i >= 0; i-- {
		k := newAxes[i]
		// A size-1 axis never steps: the stride that keeps a contiguous view contiguous.
		strides[k] = 1
		if k+1 < len(shape) {
			strides[k] = strides[k+1] * shape[k+1]
		}
	}
	if prod(shape) == 0 {
		// An empty view has no element to point at: keep the parent's offset, which
		// is within the buffer (a start along one axis is not when another axis, and
		// so the buffer, is empty).
		off = a.off
	}
	return a.derive(shape, strides, off), nil
}

// Transpose returns a view with the axes permuted (reversed when none are given), as
// numpy.transpose.
func (a *Array[T]) Transpose(axes ...int) (*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	n := len(a.shape)
	if len(axes) == 0 {
		axes = make([]int, n)
		for i := range axes {
			axes[i] = n - 1 - i
		}
	}
	if len(axes) != n {
		return nil, fmt.Errorf("gpu: %d axes for a %d-d array: %w", len(axes), n, ErrInvalidValue)
	}
	seen := make([]bool, n)
	shape, strides := make([]int, n), make([]int, n)
	for i, ax := range axes {
		if ax < 0 {
			ax += n
		}
		if ax < 0 || ax >= n || seen[ax] {
			return nil, fmt.Errorf("gpu: axes %v are not a permutation of %d axes: %w", axes, n, ErrInvalidValue)
		}
		seen[ax] = true
		shape[i], strides[i] = a.shape[ax], a.strides[ax]
	}
	return a.derive(shape, strides, a.off), nil
}

// BroadcastTo returns a read-only view of the array broadcast to shape by NumPy's rules
// (numpy.broadcast_to): writing through it is an error.
func (a *Array[T]) BroadcastTo(shape ...int) (*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	if _, err := checkShape(shape); err != nil {
		return nil, err
	}
	st, err := broadcastStrides(a.shape, a.strides, shape)
	if err != nil {
		return nil, err
	}
	return a.derive(slices.Clone(shape), st, a.off), nil
}

// broadcastStrides returns the strides of an array of shape from/strides viewed with
// shape to, or an error if it doesn't broadcast.
func broadcastStrides(from, strides, to []int) ([]int, error) {
	if len(from) > len(to) {
		return nil, fmt.Errorf("gpu: shape %v doesn't broadcast to %v: %w", from, to, ErrInvalidValue)
	}
	out := make([]int, len(to))
	k := len(to) - len(from)
	for d := range to {
		if d < k {
			continue
		}
		switch f := from[d-k]; {
		case f == to[d]:
			out[d] = strides[d-k]
		case f == 1:
			out[d] = 0
		default:
			return nil, fmt.Errorf("gpu: shape %v doesn't broadcast to %v: %w", from, to, ErrInvalidValue)
		}
	}
	return out, nil
}

// BroadcastShapes returns the shape NumPy's broadcasting gives the shapes
// (numpy.broadcast_shapes). Shapes that don't broadcast together, or a negative
// dimension (numpy: "negative dimensions are not allowed"), are an error wrapping
// ErrInvalidValue.
func BroadcastShapes(shapes ...[]int) ([]int, error) {
	r := 0
	for _, s := range shapes {
		r = max(r, len(s))
		if slices.ContainsFunc(s, func(n int) bool { return n < 0 }) {
			return nil, fmt.Errorf("gpu: broadcast of shapes %v: negative dimension in %v: %w", shapes, s, ErrInvalidValue)
		}
	}
	out := make([]int, r)
	for i := range out {
		out[i] = 1
	}
	for _, s := range shapes {
		k := r - len(s)
		for d, n := range s {
			switch {
			case n == out[k+d] || n == 1:
			case out[k+d] == 1:
				out[k+d] = n
			default:
				return nil, fmt.Errorf("gpu: shapes %v don't broadcast together: %w", shapes, ErrInvalidValue)
			}
		}
	}
	return out, nil
}

// Contiguous returns a contiguous array with a's elements: a itself if it already is
// contiguous (numpy.ascontiguousarray), else a new copy made on s.
func Contiguous[T Elem](s *Stream, a *Array[T]) (*Array[T], error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if a.IsContiguous() && !a.hasZeroStride() {
		return a, nil
	}
	return Clone(s, a)
}

// Clone returns a new contiguous array holding a copy of a's elements, made on s
// (numpy.copy, torch.clone): unlike Contiguous, never a itself, so writes to either
// don't show in the other. A broadcast view's copy has every element of its shape.
func Clone[T Elem](s *Stream, a *Array[T]) (*Array[T], error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := nonNil(a); err != nil {
		return nil, err
	}
	out, err := Empty[T](s, a.shape...)
	if err != nil {
		return nil, err
	}
	if err := Copy(s, out, a); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

func (a *Array[T]) hasZeroStride() bool {
	if a.Size() == 0 {
		return false // no element to write twice (row-major strides of (3, 0) are (0, 1))
	}
	for d, st := range a.strides {
		if st == 0 && a.shape[d] > 1 {
			return true
		}
	}
	return false
}

// Copy copies src into dst on s: src broadcasts to dst's shape (numpy.copyto). Both may
// be views; contiguous arrays of the same shape copy with the driver's memcpy, also
// between two devices. Other copies run a kernel on s, which needs peer access to an
// array of another device (see Launch).
func Copy[T Elem](s *Stream, dst, src *Array[T]) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if err := nonNil(dst, src); err != nil {
		return err
	}
	if dst.hasZeroStride() {
		return fmt.Errorf("gpu: copy into a broadcast view: %w", ErrInvalidValue)
	}
	if dst.Size() == 0 {
		_, err := broadcastStrides(src.shape, src.strides, dst.shape)
		return err
	}
	if slices.Equal(dst.shape, src.shape) && dst.IsContiguous() && src.IsContiguous() {
		db, err := dst.bytes()
		if err != nil {
			return err
		}
		sb, err := src.bytes()
		if err != nil {
			return err
		}
		// Overlapping ranges (a[1:] from a[:-1]) go through the elementwise copy, which
		// reads an operand sharing out's memory from a copy first.
		if !db.overlaps(sb) {
			return s.CopyDtoD(db, sb)
		}
	}
	if !slices.Equal(dst.shape, src.shape) {
		// Here, so that the error names no operand of the copy's expression.
		if _, err := broadcastStrides(src.shape, src.strides, dst.shape); err != nil {
			return err
		}
	}
	return evalInto(s, dst.header(), "x", Vars{"x": src})
}

// Astype returns a new array of a's elements converted to R (numpy.ndarray.astype with
// casting="unsafe": float to integer truncates toward zero; NaN and out-of-range values
// follow the rules of package expr).
func Astype[R, T Elem](s *Stream, a *Array[T]) (*Array[R], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	return Eval[R](s, "x", Vars{"x": a})
}

// Arange returns the 1-d array start, start+step, ... up to but excluding stop, as
// numpy.arange: ceil((stop-start)/step) elements, element i computed as start + i*step
// in float64 (integers exactly in int64) and converted to T. step 0, a NaN bound and
// more elements than an int counts are errors wrapping ErrInvalidValue.
func Arange[T Elem](s *Stream, start, stop, step T) (*Array[T], error) {
	if t := dtype.Of[T](); t.IsInteger() {
		return arangeInt[T](s, start, stop, step, t.IsUnsigned())
	}
	f0, f1, fs := toFloat(start), toFloat(stop), toFloat(step)
	if fs == 0 || math.IsNaN(f0) || math.IsNaN(f1) || math.IsNaN(fs) {
		return nil, fmt.Errorf("gpu: arange(%v, %v, %v): %w", start, stop, step, ErrInvalidValue)
	}
	cnt := max(0, math.Ceil((f1-f0)/fs))
	if !(cnt < math.MaxInt) { // +Inf, or more than an int counts
		return nil, fmt.Errorf("gpu: arange(%v, %v, %v): too many elements: %w", start, stop, step, ErrInvalidValue)
	}
	a, err := Empty[T](s, int(cnt))
	if err != nil {
		return nil, err
	}
	vars := Vars{"i": LinearIndex, "a": f0, "d": fs}
	if err := evalInto(s, a.header(), "float64(i)*d + a", vars); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// arangeInt is Arange of an integer type: the count and the elements are exact (start
// and step never pass through float64).
func arangeInt[T Elem](s *Stream, start, stop, step T, unsigned bool) (*Array[T], error) {
	i0, i1, is := intBits(start), intBits(stop), intBits(step)
	toBig := func(v int64) *big.Int {
		if unsigned {
			return new(big.Int).SetUint64(uint64(v))
		}
		return big.NewInt(v)
	}
	b0, b1, bs := toBig(i0), toBig(i1), toBig(is)
	if bs.Sign() == 0 {
		return nil, fmt.Errorf("gpu: arange(%v, %v, %v): %w", start, stop, step, ErrInvalidValue)
	}
	// n = ceil((stop-start)/step) = floor((stop-start + step-sign(step)) / step) when
	// positive.
	n := 0
	d := new(big.Int).Sub(b1, b0)
	if d.Sign() == bs.Sign() {
		d.Add(d, bs).Sub(d, big.NewInt(int64(bs.Sign())))
		q := d.Quo(d, bs)
		if !q.IsInt64() || q.Int64() > math.MaxInt {
			return nil, fmt.Errorf("gpu: arange(%v, %v, %v): too many elements: %w", start, stop, step, ErrInvalidValue)
		}
		n = int(q.Int64())
	}
	a, err := Empty[T](s, n)
	if err != nil {
		return nil, err
	}
	// int64 arithmetic wraps like the element type's, so i*d + a is exact modulo 2^64
	// and each element, which is within T's range, converts exactly.
	vars := Vars{"i": LinearIndex, "a": i0, "d": is}
	if err := evalInto(s, a.header(), "i*d + a", vars); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// Linspace returns num evenly spaced values from start to stop inclusive
// (numpy.linspace with endpoint=True), computed in float64.
func Linspace[T Float](s *Stream, start, stop T, num int) (*Array[T], error) {
	if num < 0 {
		return nil, fmt.Errorf("gpu: linspace of %d values: %w", num, ErrInvalidValue)
	}
	a, err := Empty[T](s, num)
	if err != nil {
		return nil, err
	}
	f0, f1 := toFloat(start), toFloat(stop)
	step := 0.0
	if num > 1 {
		step = (f1 - f0) / float64(num-1)
	}
	// The last value is stop exactly, except for one value, which is start (NumPy).
	vars := Vars{"i": LinearIndex, "a": f0, "d": step, "b": f1, "last": int64(max(num-1, 1))}
	if err := evalInto(s, a.header(), "where(i == last, b, float64(i)*d + a)", vars); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// ArrayOf returns a contiguous array of the given shape over the start of buffer b (any
// kind of memory: device, unified or pinned), sharing b's memory and tracking; the array
// is a view (Free b itself). b must hold at least the array's bytes.
func ArrayOf[T Elem](b *Buffer, shape ...int) (*Array[T], error) {
	if b.isNil() {
		return nil, fmt.Errorf("gpu: ArrayOf a nil buffer: %w", ErrInvalidValue)
	}
	if b.a.gone.Load() {
		return nil, errBufferFreed
	}
	n, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	if n > math.MaxInt/sizeOf[T]() {
		return nil, fmt.Errorf("gpu: shape %v is too large: %w", shape, ErrInvalidValue)
	}
	if need := int64(n) * int64(sizeOf[T]()); need > b.size {
		return nil, fmt.Errorf("gpu: an array of shape %v needs %d bytes, the buffer has %d: %w", shape, need, b.size, ErrInvalidValue)
	}
	if b.off%int64(sizeOf[T]()) != 0 {
		return nil, fmt.Errorf("gpu: buffer offset %d is not aligned for %v: %w", b.off, dtype.Of[T](), ErrInvalidValue)
	}
	view := b
	if b.off != 0 {
		// Express the offset in elements of the root allocation.
		root := b.root
		if root == nil {
			root = b
		}
		view = root
	}
	sh := slices.Clone(shape)
	return &Array[T]{buf: view, dt: dtype.Of[T](), shape: sh, strides: rowMajor(sh), off: int(b.off / int64(sizeOf[T]())), view: true}, nil
}

// nonNil returns an error wrapping ErrInvalidValue if an array argument is nil.
func nonNil(arrays ...AnyArray) error {
	for _, a := range arrays {
		if a == nil || a.isNil() {
			return errNilArray
		}
		if a.isFreed() {
			// Also caught where the memory is used, but not by operations that have
			// nothing to do (empty arrays).
			return fmt.Errorf("gpu: array used after Free: %w", ErrClosed)
		}
	}
	return nil
}
