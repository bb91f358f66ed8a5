//go:build !linux

package gpu

// enterScope marks the start of an access scope on the calling goroutine and returns
// its identity for the scope's allocations (see lockAll): its goroutine id.
func enterScope() int64 { return goid() }

// leaveScope ends the scope enterScope began.
func leaveScope() {}

// scopeID returns the calling goroutine's identity as enterScope gives it.
func scopeID() int64 { return goid() }
