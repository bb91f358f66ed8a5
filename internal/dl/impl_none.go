//go:build !((cgo && unix) || (!cgo && linux && (amd64 || arm64))) || gpu_nodlopen

package dl

import (
	"errors"
	"runtime"
)

// Mechanism names how this build calls C: "cgo" (a C trampoline built by cgo),
// "purego" (no cgo: purego's runtime support and this package's assembly trampoline),
// or "" (no calls into C).
const Mechanism = ""

var platform = runtime.GOOS + "/" + runtime.GOARCH

func dlopen(string) (uintptr, error) { return 0, errors.ErrUnsupported }
func dlsym(uintptr, string) uintptr  { return 0 }
func dlclose(uintptr) error          { return nil }
func dladdrPath(uintptr) string      { return "" }

// Call panics: this build cannot call into C, and no Table is ever bound.
func (f *Func) Call(args ...uintptr) uintptr {
	f.unbound()
	return 0
}

// CallIn panics: this build cannot call into C, and no Table is ever bound.
func (f *Func) CallIn(c *Current, ctx uintptr, args ...uintptr) uintptr {
	f.unbound()
	return 0
}

// CallInRepeat panics: this build cannot call into C, and no Table is ever bound.
func (f *Func) CallInRepeat(reps int, c *Current, ctx uintptr, args ...uintptr) uintptr {
	f.unbound()
	return 0
}

// Make panics: this build cannot call into C, and no Table is ever bound.
func (c *Current) Make(ctx uintptr) uintptr {
	c.Get.unbound()
	return 0
}

// Noop does nothing: this build cannot call into C.
func Noop() {}
