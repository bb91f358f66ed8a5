//go:build cgo && unix && !gpu_nodlopen

package dl

/*
#cgo linux LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>

typedef uintptr_t U;

// The argument block of package dl (type frame): keep the two in step.
typedef struct {
	U fn, get, set, ctx, n, r;
	const U *a;
	U reps;
} dl_frame;

typedef U (*dl_f6)(U, U, U, U, U, U);
typedef U (*dl_f12)(U, U, U, U, U, U, U, U, U, U, U, U);
typedef U (*dl_f24)(U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U, U);
typedef int (*dl_get)(U *);
typedef int (*dl_set)(U);

#define A(i) ((i) < n ? a[i] : 0)

// dl_trampoline runs on the system stack, called by runtime.cgocall with the frame:
// the context prologue, then the function with the frame's arguments as integer
// arguments (extra ones are ignored by the callee under the C calling conventions
// of amd64 and arm64), reps times unless it returns a non-zero int.
static void dl_trampoline(void *p) {
	dl_frame *f = (dl_frame *)p;
	if (f->get) {
		U cur = 0;
		int r = ((dl_get)f->get)(&cur);
		if (r == 0 && cur != f->ctx) r = ((dl_set)f->set)(f->ctx);
		if (r != 0) {
			f->r = (U)(unsigned)r;
			return;
		}
	}
	const U *a = f->a;
	U n = f->n, reps = f->reps;
	do {
		if (n <= 6) {
			f->r = ((dl_f6)f->fn)(A(0), A(1), A(2), A(3), A(4), A(5));
		} else if (n <= 12) {
			f->r = ((dl_f12)f->fn)(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11));
		} else {
			f->r = ((dl_f24)f->fn)(A(0), A(1), A(2), A(3), A(4), A(5), A(6), A(7), A(8), A(9), A(10), A(11),
				A(12), A(13), A(14), A(15), A(16), A(17), A(18), A(19), A(20), A(21), A(22), A(23));
		}
	} while (--reps > 0 && (int)f->r == 0);
}

static int dl_noop(void) { return 0; }

static U dl_trampoline_addr(void) { return (U)dl_trampoline; }
static U dl_noop_addr(void) { return (U)dl_noop; }

// dl_open opens name; on failure *err is dlerror's message, read on the same thread.
static U dl_open(const char *name, const char **err) {
	dlerror();
	void *h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
	*err = h ? NULL : dlerror();
	return (U)h;
}
static U dl_sym(U h, const char *name) { return (U)dlsym((void *)h, name); }
static const char *dl_close(U h) { return dlclose((void *)h) == 0 ? NULL : dlerror(); }
static const char *dl_addr_path(U addr) {
	Dl_info info;
	if (dladdr((void *)addr, &info) == 0) return NULL;
	return info.dli_fname;
}
*/
import "C"

import (
	"errors"
	"runtime"
	"unsafe"
)

// Mechanism names how this build calls C: "cgo" (a C trampoline built by cgo),
// "purego" (no cgo: purego's runtime support and this package's assembly trampoline),
// or "" (no calls into C).
const Mechanism = "cgo"

var (
	trampoline = uintptr(C.dl_trampoline_addr())
	noop       = uintptr(C.dl_noop_addr())
	platform   = runtime.GOOS + "/" + runtime.GOARCH
)

func dlopen(name string) (uintptr, error) {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var e *C.char
	h := C.dl_open(cname, &e)
	if h == 0 {
		msg := "dlopen " + name + " failed"
		if e != nil {
			msg = C.GoString(e)
		}
		return 0, errors.New(msg)
	}
	return uintptr(h), nil
}

func dlsym(h uintptr, name string) uintptr {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return uintptr(C.dl_sym(C.U(h), cname))
}

func dlclose(h uintptr) error {
	if e := C.dl_close(C.U(h)); e != nil {
		return errors.New("dl: dlclose: " + C.GoString(e))
	}
	return nil
}

func dladdrPath(addr uintptr) string {
	if p := C.dl_addr_path(C.U(addr)); p != nil {
		return C.GoString(p)
	}
	return ""
}

// noopCgo calls the empty C function as cgo calls it (for BenchmarkCall).
func noopCgo() { C.dl_noop() }
