package kern

import (
	"math"
	"reflect"
	"sync/atomic"
	"unsafe"
)

// The atomics operate on x[i] (an index out of range panics, as any index does) of
// 32- or 64-bit elements; 8- and 16-bit elements panic (and a kernel using them is
// rejected by the GPU compiler). On the GPU they are PTX atom instructions on global
// or shared memory; float minimum and maximum, which PTX lacks, are compare-and-swap
// loops on both.

// AtomicAdd adds v to x[i] atomically and returns the old value. A float32 addition
// flushes subnormal operands and results to zero of their sign, as PTX atom.add.f32
// does (float64 additions don't).
func AtomicAdd[T Number](x []T, i int, v T) T {
	p := &x[i]
	switch kindOf[T]() {
	case kInt32:
		return T(atomic.AddInt32((*int32)(unsafe.Pointer(p)), int32(v)) - int32(v))
	case kInt64:
		return T(atomic.AddInt64((*int64)(unsafe.Pointer(p)), int64(v)) - int64(v))
	case kFloat:
		if unsafe.Sizeof(v) == 4 {
			// PTX atom.add.f32 flushes subnormal operands and results to zero.
			fv := ftz32(float32(v))
			return rmw(p, func(o T) T { return T(ftz32(ftz32(float32(o)) + fv)) })
		}
	}
	return rmw(p, func(o T) T { return o + v })
}

// AtomicMin sets x[i] to min(x[i], v) atomically and returns the old value. For
// floats a NaN v leaves x[i] unchanged and a NaN x[i] is replaced by v (PTX min's
// rule: the number wins); -0 is below +0.
func AtomicMin[T Number](x []T, i int, v T) T {
	return rmw(&x[i], func(o T) T { return minOf(o, v) })
}

// AtomicMax sets x[i] to max(x[i], v) atomically and returns the old value (floats:
// as AtomicMin).
func AtomicMax[T Number](x []T, i int, v T) T {
	return rmw(&x[i], func(o T) T { return maxOf(o, v) })
}

// AtomicAnd sets x[i] to x[i] & v atomically and returns the old value.
func AtomicAnd[T Integer](x []T, i int, v T) T { return rmw(&x[i], func(o T) T { return o & v }) }

// AtomicOr sets x[i] to x[i] | v atomically and returns the old value.
func AtomicOr[T Integer](x []T, i int, v T) T { return rmw(&x[i], func(o T) T { return o | v }) }

// AtomicXor sets x[i] to x[i] ^ v atomically and returns the old value.
func AtomicXor[T Integer](x []T, i int, v T) T { return rmw(&x[i], func(o T) T { return o ^ v }) }

// AtomicExch sets x[i] to v atomically and returns the old value.
func AtomicExch[T Number](x []T, i int, v T) T { return rmw(&x[i], func(T) T { return v }) }

// AtomicCAS sets x[i] to new if its bits equal old's, atomically, and returns the old
// value (compare the result's bits with old's to know whether it swapped: for floats
// NaN != NaN).
func AtomicCAS[T Number](x []T, i int, old, new T) T {
	p := &x[i]
	checkWidth[T]()
	ob, nb := bitsOf(old), bitsOf(new)
	if unsafe.Sizeof(old) == 4 {
		for {
			cur := atomic.LoadUint32((*uint32)(unsafe.Pointer(p)))
			if uint64(cur) != ob || atomic.CompareAndSwapUint32((*uint32)(unsafe.Pointer(p)), cur, uint32(nb)) {
				return fromBits[T](uint64(cur))
			}
		}
	}
	for {
		cur := atomic.LoadUint64((*uint64)(unsafe.Pointer(p)))
		if cur != ob || atomic.CompareAndSwapUint64((*uint64)(unsafe.Pointer(p)), cur, nb) {
			return fromBits[T](cur)
		}
	}
}

// AtomicLoad returns x[i], read atomically (PTX ld.relaxed.gpu): for flags that other
// blocks set.
func AtomicLoad[T Number](x []T, i int) T {
	p := &x[i]
	checkWidth[T]()
	if unsafe.Sizeof(*p) == 4 {
		return fromBits[T](uint64(atomic.LoadUint32((*uint32)(unsafe.Pointer(p)))))
	}
	return fromBits[T](atomic.LoadUint64((*uint64)(unsafe.Pointer(p))))
}

// AtomicStore sets x[i] to v atomically (PTX st.relaxed.gpu).
func AtomicStore[T Number](x []T, i int, v T) {
	p := &x[i]
	checkWidth[T]()
	if unsafe.Sizeof(v) == 4 {
		atomic.StoreUint32((*uint32)(unsafe.Pointer(p)), uint32(bitsOf(v)))
		return
	}
	atomic.StoreUint64((*uint64)(unsafe.Pointer(p)), bitsOf(v))
}

// Fence orders the calling thread's memory accesses before it before those after it,
// as every thread of the device sees them (PTX membar.gl; CUDA __threadfence). On the
// CPU the atomics are sequentially consistent and Fence does nothing.
func Fence() {}

// FenceBlock is Fence for the threads of the caller's block (PTX membar.cta; CUDA
// __threadfence_block).
func FenceBlock() {}

// rmw applies f to *p atomically (a compare-and-swap loop) and returns the old value.
func rmw[T Number](p *T, f func(T) T) T {
	checkWidth[T]()
	if unsafe.Sizeof(*p) == 4 {
		q := (*uint32)(unsafe.Pointer(p))
		for {
			cur := atomic.LoadUint32(q)
			o := fromBits[T](uint64(cur))
			if atomic.CompareAndSwapUint32(q, cur, uint32(bitsOf(f(o)))) {
				return o
			}
		}
	}
	q := (*uint64)(unsafe.Pointer(p))
	for {
		cur := atomic.LoadUint64(q)
		o := fromBits[T](cur)
		if atomic.CompareAndSwapUint64(q, cur, bitsOf(f(o))) {
			return o
		}
	}
}

func checkWidth[T Number]() {
	var z T
	if s := unsafe.Sizeof(z); s != 4 && s != 8 {
		panic("kern: atomics need 32- or 64-bit elements, not " + reflect.TypeFor[T]().String())
	}
}

type kind uint8

const (
	kOther kind = iota
	kInt32
	kInt64
	kFloat
)

// kindOf classifies T for the atomics' fast paths.
func kindOf[T Number]() kind {
	switch reflect.TypeFor[T]().Kind() {
	case reflect.Int32, reflect.Uint32:
		return kInt32
	case reflect.Int64, reflect.Uint64, reflect.Int, reflect.Uint, reflect.Uintptr:
		return kInt64
	case reflect.Float32, reflect.Float64:
		return kFloat
	}
	return kOther
}

// minOf is PTX min: for floats the number wins over NaN, -0 is below +0.
func minOf[T Number](a, b T) T {
	if kindOf[T]() == kFloat {
		fa, fb := toF64(a), toF64(b)
		switch {
		case fa != fa:
			return b
		case fb != fb:
			return a
		case fa == fb:
			if math.Signbit(fa) {
				return a
			}
			return b
		}
	}
	if a < b {
		return a
	}
	return b
}

// maxOf is PTX max: for floats the number wins over NaN, +0 is above -0.
func maxOf[T Number](a, b T) T {
	if kindOf[T]() == kFloat {
		fa, fb := toF64(a), toF64(b)
		switch {
		case fa != fa:
			return b
		case fb != fb:
			return a
		case fa == fb:
			if math.Signbit(fa) {
				return b
			}
			return a
		}
	}
	if a > b {
		return a
	}
	return b
}

func toF64[T Number](v T) float64 { return float64(v) }

// ftz32 flushes a subnormal x to a zero of its sign.
func ftz32(x float32) float32 {
	if b := math.Float32bits(x); b&0x7f800000 == 0 {
		return math.Float32frombits(b & 0x80000000)
	}
	return x
}
