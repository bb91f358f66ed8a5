package random

import (
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// Dist is a distribution.
type Dist uint8

// The distributions.
const (
	// Uniform: floats uniform on [0, 1), never 1.0. Types Float16, BFloat16, Float32,
	// Float64.
	Uniform Dist = iota + 1
	// Normal: standard normal floats (mean 0, standard deviation 1). Types Float16,
	// BFloat16 (the Float32 normals rounded), Float32, Float64.
	Normal
	// FullRange: integers uniform over the type's full range; Bool is a fair coin. Types
	// Bool, Int8, Int16, Int32, Int64, Uint8, Uint16, Uint32, Uint64.
	FullRange
	// Range: integers uniform on [Spec.Lo, Spec.Hi), without bias. Types Int32, Int64.
	Range
)

var distNames = map[Dist]string{Uniform: "uniform", Normal: "normal", FullRange: "fullrange", Range: "range"}

// String returns the distribution's lower-case name.
func (d Dist) String() string {
	if n, ok := distNames[d]; ok {
		return n
	}
	return fmt.Sprintf("dist(%d)", uint8(d))
}

// Spec is one kind of request: a distribution, an element type and, for Range, the bounds.
type Spec struct {
	Dist Dist
	Type dtype.DType
	// Lo and Hi bound Range: values in [Lo, Hi), Lo < Hi, Lo within Type's range and Hi at
	// most one past its maximum (for Int32 also Hi - Lo < 2^32).
	// Ignored by the other distributions.
	Lo, Hi int64
}

// Specs lists every supported distribution and type (Range with bounds [0, 1)).
func Specs() []Spec {
	var out []Spec
	for _, t := range []dtype.DType{dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64} {
		out = append(out, Spec{Dist: Uniform, Type: t})
	}
	for _, t := range []dtype.DType{dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64} {
		out = append(out, Spec{Dist: Normal, Type: t})
	}
	for _, t := range []dtype.DType{dtype.Bool, dtype.Int8, dtype.Int16, dtype.Int32, dtype.Int64,
		dtype.Uint8, dtype.Uint16, dtype.Uint32, dtype.Uint64} {
		out = append(out, Spec{Dist: FullRange, Type: t})
	}
	out = append(out, Spec{Dist: Range, Type: dtype.Int32, Lo: 0, Hi: 1}, Spec{Dist: Range, Type: dtype.Int64, Lo: 0, Hi: 1})
	return out
}

// String describes the spec, e.g. "uniform float32" or "range int32 [-5, 7)".
func (s Spec) String() string {
	if s.Dist == Range {
		return fmt.Sprintf("%v %v [%d, %d)", s.Dist, s.Type, s.Lo, s.Hi)
	}
	return fmt.Sprintf("%v %v", s.Dist, s.Type)
}

// Validate reports whether the package supports s.
func (s Spec) Validate() error {
	ok := false
	switch s.Dist {
	case Uniform:
		ok = s.Type == dtype.Float16 || s.Type == dtype.BFloat16 || s.Type == dtype.Float32 || s.Type == dtype.Float64
	case Normal:
		ok = s.Type.IsFloat()
	case FullRange:
		ok = s.Type == dtype.Bool || s.Type.IsInteger()
	case Range:
		switch s.Type {
		case dtype.Int32:
			// hi is exclusive: up to 2^31. The kernels draw from r = hi - lo values as a
			// uint32, so the whole int32 range (r = 2^32) is FullRange's.
			if s.Lo < math.MinInt32 || s.Hi > math.MaxInt32+1 {
				return fmt.Errorf("random: %v: bounds outside int32", s)
			}
			if s.Lo < s.Hi && s.Hi-s.Lo > math.MaxUint32 {
				return fmt.Errorf("random: %v: the whole int32 range: use full-range integers (RandBits)", s)
			}
			ok = true
		case dtype.Int64:
			ok = true
		}
		if ok && s.Lo >= s.Hi {
			return fmt.Errorf("random: %v: empty range", s)
		}
	}
	if !ok {
		return fmt.Errorf("random: unsupported %v", s)
	}
	return nil
}

// ElemsPerBlock returns how many elements one Philox block gives: 16 bytes of output, so
// 16 / Type.Size() (2, 4, 8 or 16), except 4 for normal float16 and bfloat16 (the four
// float32 normals of the block, rounded).
func (s Spec) ElemsPerBlock() int {
	if s.halfNormal() {
		return 4
	}
	return 16 / s.Type.Size()
}

// halfNormal reports whether s is a normal float16 or bfloat16 request.
func (s Spec) halfNormal() bool {
	return s.Dist == Normal && (s.Type == dtype.Float16 || s.Type == dtype.BFloat16)
}

// Blocks returns the number of Philox blocks a request of n elements consumes: the
// counters offset .. offset+Blocks(n)-1 (round 0, and for Range also the redraw rounds of
// those same counters). A generator that advances its offset by Blocks(n) after each
// request never reuses a block. It is ceil(n / ElemsPerBlock()): ceil(n * Type.Size() /
// 16) for every distribution but normal halves.
func (s Spec) Blocks(n int64) uint64 {
	if n <= 0 {
		return 0
	}
	e := uint64(s.ElemsPerBlock())
	return (uint64(n) + e - 1) / e
}

// Elem is the set of Go element types Fill accepts. Float16 and BFloat16 values are
// their bits in a uint16.
type Elem interface {
	~bool | ~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// Fill writes elements first .. first+len(dst)-1 of the request (s, seed, offset) into dst,
// on the calling goroutine. The array layer calls it on chunks [i0, i1) of a large output
// (dst = out[i0:i1], first = i0) from its own workers: chunks may start and end anywhere,
// though boundaries at multiples of 16 elements avoid computing a block twice. T must be
// the Go type of s.Type (uint16 for Float16 and BFloat16).
func Fill[T Elem](s Spec, dst []T, seed, offset uint64, first int64) error {
	if err := s.check(reflect.TypeFor[T]().Kind()); err != nil {
		return err
	}
	if first < 0 {
		return fmt.Errorf("random: negative first element %d", first)
	}
	fillPtr(s, unsafe.Pointer(unsafe.SliceData(dst)), len(dst), seed, offset, first)
	return nil
}

// FillParallel writes the whole request (s, seed, offset) of len(dst) elements into dst,
// splitting it over GOMAXPROCS goroutines. The result equals Fill(s, dst, seed, offset, 0).
func FillParallel[T Elem](s Spec, dst []T, seed, offset uint64) error {
	if err := s.check(reflect.TypeFor[T]().Kind()); err != nil {
		return err
	}
	p := unsafe.Pointer(unsafe.SliceData(dst))
	size := uintptr(s.Type.Size())
	Parallel(int64(len(dst)), func(i0, i1 int64) {
		fillPtr(s, unsafe.Add(p, uintptr(i0)*size), int(i1-i0), seed, offset, i0)
	})
	return nil
}

// FillBytes writes elements first .. first+len(dst)/size-1 of the request (s, seed, offset)
// into dst as little-endian bytes: exactly the bytes the PTX kernel stores. len(dst) must
// be a multiple of s.Type.Size(); dst needs no alignment.
func FillBytes(s Spec, dst []byte, seed, offset uint64, first int64) error {
	if err := s.Validate(); err != nil {
		return err
	}
	size := s.Type.Size()
	if len(dst)%size != 0 {
		return fmt.Errorf("random: %d bytes is not a whole number of %v elements", len(dst), s.Type)
	}
	if first < 0 {
		return fmt.Errorf("random: negative first element %d", first)
	}
	n := len(dst) / size
	if n == 0 {
		return nil
	}
	p := unsafe.Pointer(unsafe.SliceData(dst))
	if littleEndian && uintptr(p)%uintptr(size) == 0 {
		fillPtr(s, p, n, seed, offset, first)
		return nil
	}
	// Unaligned or big-endian: generate into an aligned buffer and encode.
	var buf [4096]uint64
	per := len(buf) * 8 / size
	for i := 0; i < n; i += per {
		m := min(per, n-i)
		fillPtr(s, unsafe.Pointer(&buf[0]), m, seed, offset, first+int64(i))
		encodeNative(s, dst[i*size:(i+m)*size], unsafe.Pointer(&buf[0]), m)
	}
	return nil
}

// encodeNative writes m native-order elements at p to dst in little-endian order.
func encodeNative(s Spec, dst []byte, p unsafe.Pointer, m int) {
	switch s.Type.Size() {
	case 1:
		copy(dst, unsafe.Slice((*byte)(p), m))
	case 2:
		for i, v := range unsafe.Slice((*uint16)(p), m) {
			binary.LittleEndian.PutUint16(dst[2*i:], v)
		}
	case 4:
		for i, v := range unsafe.Slice((*uint32)(p), m) {
			binary.LittleEndian.PutUint32(dst[4*i:], v)
		}
	case 8:
		for i, v := range unsafe.Slice((*uint64)(p), m) {
			binary.LittleEndian.PutUint64(dst[8*i:], v)
		}
	}
}

// Expected returns the n elements (little-endian bytes) that the PTX kernel of s writes
// for (n, seed, offset): the reference a GPU test compares with, bit for bit. It fills in
// parallel.
func Expected(s Spec, n int64, seed, offset uint64) ([]byte, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	size := int64(s.Type.Size())
	out := make([]byte, n*size)
	var err error
	var mu sync.Mutex
	Parallel(n, func(i0, i1 int64) {
		if e := FillBytes(s, out[i0*size:i1*size], seed, offset, i0); e != nil {
			mu.Lock()
			err = e
			mu.Unlock()
		}
	})
	return out, err
}

// Args returns the kernel's parameters for a request, in order, each a 64-bit value:
// out (the device address), n, seed, offset and, for Range, lo and hi (two's
// complement).
func (s Spec) Args(out uint64, n int64, seed, offset uint64) []uint64 {
	a := []uint64{out, uint64(n), seed, offset}
	if s.Dist == Range {
		a = append(a, uint64(s.Lo), uint64(s.Hi))
	}
	return a
}

// Parallel splits [0, n) into contiguous chunks, at multiples of 16 elements, and calls
// f(i0, i1) for each on its own goroutine (at most GOMAXPROCS of them), returning when
// all are done. Small n runs on the calling goroutine.
func Parallel(n int64, f func(i0, i1 int64)) {
	const minChunk = 1 << 14
	if n <= 0 {
		return
	}
	parts := int64(runtime.GOMAXPROCS(0))
	if c := (n + minChunk - 1) / minChunk; c < parts {
		parts = c
	}
	if parts <= 1 {
		f(0, n)
		return
	}
	chunk := (n/parts + 15) &^ 15
	var wg sync.WaitGroup
	for i0 := int64(0); i0 < n; i0 += chunk {
		i1 := min(i0+chunk, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			f(i0, i1)
		}()
	}
	wg.Wait()
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// check validates s and that a Go value of kind k holds s.Type.
func (s Spec) check(k reflect.Kind) error {
	if err := s.Validate(); err != nil {
		return err
	}
	want := s.Type
	if want == dtype.Float16 || want == dtype.BFloat16 {
		want = dtype.Uint16
	}
	if dtype.OfKind(k) != want {
		return fmt.Errorf("random: %v needs %v elements, not %v", s, want, k)
	}
	return nil
}

// fillPtr fills n elements of s.Type at p (aligned, native order) with elements first...
func fillPtr(s Spec, p unsafe.Pointer, n int, seed, offset uint64, first int64) {
	switch s.Dist {
	case Uniform:
		switch s.Type {
		case dtype.Float16:
			UniformFloat16(unsafe.Slice((*uint16)(p), n), seed, offset, first)
		case dtype.BFloat16:
			UniformBFloat16(unsafe.Slice((*uint16)(p), n), seed, offset, first)
		case dtype.Float32:
			UniformFloat32(unsafe.Slice((*float32)(p), n), seed, offset, first)
		case dtype.Float64:
			UniformFloat64(unsafe.Slice((*float64)(p), n), seed, offset, first)
		}
	case Normal:
		switch s.Type {
		case dtype.Float32:
			NormalFloat32(unsafe.Slice((*float32)(p), n), seed, offset, first)
		case dtype.Float64:
			NormalFloat64(unsafe.Slice((*float64)(p), n), seed, offset, first)
		case dtype.Float16:
			NormalFloat16(unsafe.Slice((*uint16)(p), n), seed, offset, first)
		case dtype.BFloat16:
			NormalBFloat16(unsafe.Slice((*uint16)(p), n), seed, offset, first)
		}
	case FullRange:
		switch s.Type {
		case dtype.Bool:
			Bool(unsafe.Slice((*bool)(p), n), seed, offset, first)
		case dtype.Int8, dtype.Uint8:
			Bits(unsafe.Slice((*uint8)(p), n), seed, offset, first)
		case dtype.Int16, dtype.Uint16:
			Bits(unsafe.Slice((*uint16)(p), n), seed, offset, first)
		case dtype.Int32, dtype.Uint32:
			Bits(unsafe.Slice((*uint32)(p), n), seed, offset, first)
		case dtype.Int64, dtype.Uint64:
			Bits(unsafe.Slice((*uint64)(p), n), seed, offset, first)
		}
	case Range:
		switch s.Type {
		case dtype.Int32:
			IntRange32(unsafe.Slice((*int32)(p), n), seed, offset, first, int32(s.Lo), s.Hi)
		case dtype.Int64:
			IntRange64(unsafe.Slice((*int64)(p), n), seed, offset, first, s.Lo, s.Hi)
		}
	}
}
