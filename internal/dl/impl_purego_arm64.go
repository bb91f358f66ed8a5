//go:build !cgo && linux && !gpu_nodlopen

package dl

import (
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// On linux/arm64 without cgo, calls go through purego.SyscallN: purego's own
// trampoline, tested there, but slower than the direct calls (about 100 ns and an
// allocation a call, and CallIn is up to three crossings). The functions are marked
// //go:uintptrescapes, so a pointer converted in their argument list is moved to the
// heap: SyscallN is not nosplit, and a goroutine's stack may move under it.

// Mechanism names how this build calls C: "cgo" (a C trampoline built by cgo),
// "purego" (no cgo: purego's runtime support and this package's assembly trampoline),
// "purego-syscalln" (no cgo: purego.SyscallN), or "" (no calls into C).
const Mechanism = "purego-syscalln"

// Call calls the entry point with args, C integers or pointers, and returns the C
// function's result register (int32(r) for an int result). Convert pointers to uintptr
// in the argument list itself; see the package documentation for the rules.
//
//go:uintptrescapes
func (f *Func) Call(args ...uintptr) uintptr {
	if f.addr == 0 {
		f.unbound()
	}
	return rawCall(f.addr, args...)
}

// CallIn is Call with ctx made current first: Get reads the thread's current context
// and, if it is not ctx, Set makes ctx current. If Get or Set fails, CallIn returns its
// result without calling the entry point. The thread cannot change between the three
// calls: they run with the goroutine locked to its thread.
//
//go:uintptrescapes
func (f *Func) CallIn(c *Current, ctx uintptr, args ...uintptr) uintptr {
	if f.addr == 0 {
		f.unbound()
	}
	if c.Get.addr == 0 {
		c.Get.unbound()
	}
	if c.Set.addr == 0 {
		c.Set.unbound()
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cur := new(uintptr)
	r := rawCall(c.Get.addr, uintptr(unsafe.Pointer(cur)))
	if int32(r) == 0 && *cur != ctx {
		r = rawCall(c.Set.addr, ctx)
	}
	if int32(r) != 0 {
		return uintptr(uint32(r))
	}
	return rawCall(f.addr, args...)
}

// CallInRepeat is CallIn calling the entry point reps times (at least once), stopping
// early at a non-zero int result, which it returns. Here each call is a crossing.
//
//go:uintptrescapes
func (f *Func) CallInRepeat(reps int, c *Current, ctx uintptr, args ...uintptr) uintptr {
	r := f.CallIn(c, ctx, args...)
	for i := 1; i < reps && int32(r) == 0; i++ {
		r = rawCall(f.addr, args...)
	}
	return r
}

// Make makes ctx current on the calling thread if it is not and returns the result of
// Get or Set, 0 on success. The goroutine must be locked to its thread
// (runtime.LockOSThread) for the context to stay current for later calls.
func (c *Current) Make(ctx uintptr) uintptr {
	cur := new(uintptr)
	r := rawCall(c.Get.addr, uintptr(unsafe.Pointer(cur)))
	if int32(r) == 0 && *cur != ctx {
		r = rawCall(c.Set.addr, ctx)
	}
	return uintptr(uint32(r))
}

// rawCall calls the C function at fn.
//
//go:uintptrescapes
func rawCall(fn uintptr, args ...uintptr) uintptr {
	if len(args) > MaxArgs {
		tooMany(len(args))
	}
	r, _, _ := purego.SyscallN(fn, args...)
	return r
}

// Noop calls an empty C function: the cost of one crossing into C and back.
func Noop() { rawCall(noop) }

// noop is the address of the assembly function of noop_arm64.s.
var noop uintptr
