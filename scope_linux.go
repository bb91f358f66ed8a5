package gpu

import (
	"runtime"
	"syscall"
)

// enterScope marks the start of an access scope on the calling goroutine and returns
// its identity for the scope's allocations (see lockAll): the goroutine is locked to its
// OS thread until leaveScope, so the thread's id names it (no other goroutine runs on a
// locked thread). It costs a system call where goid's stack trace took microseconds.
func enterScope() int64 {
	runtime.LockOSThread()
	return int64(syscall.Gettid())
}

// leaveScope ends the scope enterScope began.
func leaveScope() { runtime.UnlockOSThread() }

// scopeID returns the identity enterScope would give the calling goroutine if it is
// inside a scope (then it is locked to its thread); any other goroutine gets an id no
// scope holds.
func scopeID() int64 { return int64(syscall.Gettid()) }
