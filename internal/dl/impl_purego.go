//go:build !cgo && linux && (amd64 || arm64) && !gpu_nodlopen

package dl

import (
	"errors"
	"runtime"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Without cgo, purego supplies what cgo's runtime support would: its fakecgo package
// sets the runtime up as cgo does (threads made by pthread_create, the C thread-local
// storage libraries expect, runtime.cgocall), and dlopen and dlsym come from the
// system's C library through the dynamic linker (so the binary is linked dynamically
// against libc: see the package documentation).

// Mechanism names how this build calls C: "cgo" (a C trampoline built by cgo),
// "purego" (no cgo: purego's runtime support and this package's assembly trampoline),
// or "" (no calls into C).
const Mechanism = "purego"

// trampoline and noop are the addresses of the assembly functions of
// trampoline_GOARCH.s, which follow the C calling convention.
var trampoline, noop uintptr

var platform = runtime.GOOS + "/" + runtime.GOARCH

func dlopen(name string) (uintptr, error) {
	// dlerror's message is the calling thread's: stay on one thread from dlopen to
	// dlerror (purego.Dlopen calls them one after the other).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	h, err := purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_LOCAL)
	if err != nil {
		msg := err.Error()
		if msg == "" {
			msg = "dlopen " + name + " failed"
		}
		return 0, errors.New(msg)
	}
	return h, nil
}

func dlsym(h uintptr, name string) uintptr {
	p, err := purego.Dlsym(h, name)
	if err != nil {
		return 0
	}
	return p
}

func dlclose(h uintptr) error { return purego.Dlclose(h) }

var dladdr = func() uintptr {
	p, _ := purego.Dlsym(purego.RTLD_DEFAULT, "dladdr")
	return p
}()

// dlInfo is the C struct Dl_info.
type dlInfo struct {
	fname, fbase, sname, saddr uintptr
}

func dladdrPath(addr uintptr) string {
	if dladdr == 0 {
		return ""
	}
	var info dlInfo
	if int32(rawCall(dladdr, addr, uintptr(unsafe.Pointer(&info)))) == 0 {
		return ""
	}
	return GoString(info.fname)
}
