//go:build ((cgo && unix) || (!cgo && linux && (amd64 || arm64))) && !gpu_nodlopen

package dl

import "unsafe"

// The direct calls: a frame on the goroutine's stack handed to a trampoline through
// runtime.cgocall, the function cgo's own calls go through (it switches to the system
// stack and marks the goroutine as in a system call, so a call that blocks releases its
// P). Everything from Call down to the trampoline is nosplit: the goroutine's stack
// cannot move between a pointer's conversion to uintptr in Call's argument list and the
// C function's use of it, so stack variables can be passed without escaping.

//go:linkname runtime_cgocall runtime.cgocall
//go:noescape
func runtime_cgocall(fn uintptr, arg unsafe.Pointer) int32

// Call calls the entry point with args, C integers or pointers, and returns the C
// function's result register (int32(r) for an int result). Convert pointers to uintptr
// in the argument list itself; see the package documentation for the rules.
//
//go:nosplit
func (f *Func) Call(args ...uintptr) uintptr {
	if f.addr == 0 {
		f.unbound()
	}
	return call(f.addr, 0, 0, 0, args)
}

// CallIn is Call with ctx made current first, in the same crossing into C: Get reads
// the thread's current context and, if it is not ctx, Set makes ctx current. If Get or
// Set fails, CallIn returns its result without calling the entry point.
//
//go:nosplit
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
	return call(f.addr, c.Get.addr, c.Set.addr, ctx, args)
}

// CallInRepeat is CallIn calling the entry point reps times (at least once) in one
// crossing into C, stopping early at a non-zero int result, which it returns: the cost
// of a C function without the crossing's, for benchmarks.
//
//go:nosplit
func (f *Func) CallInRepeat(reps int, c *Current, ctx uintptr, args ...uintptr) uintptr {
	if f.addr == 0 {
		f.unbound()
	}
	if c.Get.addr == 0 {
		c.Get.unbound()
	}
	if c.Set.addr == 0 {
		c.Set.unbound()
	}
	return callN(f.addr, c.Get.addr, c.Set.addr, ctx, args, max(reps, 1))
}

// Make makes ctx current on the calling thread if it is not (one crossing into C) and
// returns the result of Get or Set, 0 on success. The goroutine must be locked to its
// thread (runtime.LockOSThread) for the context to stay current for later calls.
func (c *Current) Make(ctx uintptr) uintptr {
	if c.Get.addr == 0 {
		c.Get.unbound()
	}
	if c.Set.addr == 0 {
		c.Set.unbound()
	}
	return call(noop, c.Get.addr, c.Set.addr, ctx, nil)
}

//go:nosplit
func call(fn, get, set, ctx uintptr, args []uintptr) uintptr {
	return callN(fn, get, set, ctx, args, 1)
}

//go:nosplit
func callN(fn, get, set, ctx uintptr, args []uintptr, reps int) uintptr {
	if len(args) > MaxArgs {
		tooMany(len(args))
	}
	fr := frame{fn: fn, get: get, set: set, ctx: ctx, n: uintptr(len(args)), args: unsafe.Pointer(unsafe.SliceData(args)), reps: uintptr(reps)}
	runtime_cgocall(trampoline, unsafe.Pointer(&fr))
	return fr.r
}

// rawCall calls the C function at fn.
//
//go:nosplit
func rawCall(fn uintptr, args ...uintptr) uintptr { return call(fn, 0, 0, 0, args) }

// Noop calls an empty C function: the cost of one crossing into C and back.
func Noop() { call(noop, 0, 0, 0, nil) }
