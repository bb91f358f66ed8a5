package kern

import (
	"fmt"
	"reflect"
	"runtime"
	"sync"
	"unsafe"
)

// Shared returns the block's shared array of n elements declared by this call: every
// thread of the block gets the same array from the same call in the source (see the
// package doc). n must be a constant in a kernel compiled for the GPU; on the GPU the
// contents are undefined at the start of a block, on the CPU they are zero.
//
//go:noinline
func Shared[T Number](t Thread, n int) []T {
	var pcs [1]uintptr
	runtime.Callers(2, pcs[:])
	k := sharedKey{site: siteOf(pcs[0]), typ: reflect.TypeFor[T](), n: n}
	b := t.p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	if s, ok := b.shared[k]; ok {
		return s.([]T)
	}
	if n < 0 {
		panic(fmt.Sprintf("kern: Shared of %d elements", n))
	}
	if b.shared == nil {
		b.shared = map[sharedKey]any{}
	}
	s := make([]T, n)
	b.shared[k] = s
	return s
}

// sharedKey names one shared array of a block: the source line of its declaration,
// its element type and length.
type sharedKey struct {
	site string
	typ  reflect.Type
	n    int
}

var sites sync.Map // return PC -> "file:line"

// siteOf returns the source position of the call that returns to pc.
func siteOf(pc uintptr) string {
	if s, ok := sites.Load(pc); ok {
		return s.(string)
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	s := fmt.Sprintf("%s:%d", f.File, f.Line)
	sites.Store(pc, s)
	return s
}

// bitsOf returns v's bits, zero-extended.
func bitsOf[T Number](v T) uint64 {
	switch unsafe.Sizeof(v) {
	case 1:
		return uint64(*(*uint8)(unsafe.Pointer(&v)))
	case 2:
		return uint64(*(*uint16)(unsafe.Pointer(&v)))
	case 4:
		return uint64(*(*uint32)(unsafe.Pointer(&v)))
	}
	return *(*uint64)(unsafe.Pointer(&v))
}

// fromBits returns the T whose bits are the low bits of b.
func fromBits[T Number](b uint64) T {
	var v T
	switch unsafe.Sizeof(v) {
	case 1:
		*(*uint8)(unsafe.Pointer(&v)) = uint8(b)
	case 2:
		*(*uint16)(unsafe.Pointer(&v)) = uint16(b)
	case 4:
		*(*uint32)(unsafe.Pointer(&v)) = uint32(b)
	default:
		*(*uint64)(unsafe.Pointer(&v)) = b
	}
	return v
}

// shfl returns the value of v of lane src of t's warp (t's own v when src is not a
// lane of the warp).
func shfl[T Number](t Thread, v T, src int) T {
	return fromBits[T](t.p.warpOp(opShfl, bitsOf(v), src))
}

// ShflXor returns v of the lane Lane()^mask of the warp (CUDA __shfl_xor_sync, PTX
// shfl.sync.bfly): the butterfly exchange of warp reductions. A lane outside the
// warp's existing lanes (a mask outside [0, 32) among them) gives the caller its own
// v.
func ShflXor[T Number](t Thread, v T, mask int) T { return shfl(t, v, t.Lane()^mask) }

// ShflDown returns v of the lane Lane()+delta (CUDA __shfl_down_sync); lanes past the
// warp's end get their own v, and so do all lanes for a delta outside [0, 32).
func ShflDown[T Number](t Thread, v T, delta int) T {
	if delta < 0 || delta >= WarpSize {
		return shfl(t, v, -1)
	}
	return shfl(t, v, t.Lane()+delta)
}

// ShflUp returns v of the lane Lane()-delta (CUDA __shfl_up_sync); lanes below delta
// get their own v, and so do all lanes for a delta outside [0, 32).
func ShflUp[T Number](t Thread, v T, delta int) T {
	if delta < 0 || delta >= WarpSize {
		return shfl(t, v, -1)
	}
	return shfl(t, v, t.Lane()-delta)
}

// Shfl returns v of lane src of the warp (CUDA __shfl_sync); a src outside the warp's
// existing lanes gives the caller its own v.
func Shfl[T Number](t Thread, v T, src int) T { return shfl(t, v, src) }
