//go:build cgo && unix

package cublas

/*
#cgo linux LDFLAGS: -ldl

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

// The whole C side of the binding: dlopen, dlsym, dladdr, and one caller for every entry
// point of the table in api.go. Every argument is a 64-bit slot; the callee reads an int
// from its low 32 bits, as the x86-64 and arm64 (AAPCS64, Linux) conventions pass
// integers and pointers in 64-bit registers and 8-byte stack slots. Slots marked in ref
// are passed by address: the callee gets a pointer to a copy of the slot (alpha, beta,
// an output), whose final value is copied back.

static void *gb_open(const char *path, char *err, size_t errlen) {
	dlerror();
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		const char *e = dlerror();
		snprintf(err, errlen, "%s", e ? e : "dlopen failed");
	}
	return h;
}

static uintptr_t gb_sym(void *h, const char *name) { return (uintptr_t)dlsym(h, name); }

static const char *gb_str(uint64_t p) { return (const char *)(uintptr_t)p; }

static const char *gb_path(uintptr_t fn) {
	Dl_info info;
	if (fn != 0 && dladdr((void *)fn, &info) != 0) return info.dli_fname;
	return NULL;
}

static uint64_t gb_dispatch(uintptr_t fn, const uint64_t *x, int n) {
	switch (n) {
	case 0: return ((uint64_t (*)(void))fn)();
	case 1: return ((uint64_t (*)(uint64_t))fn)(x[0]);
	case 2: return ((uint64_t (*)(uint64_t, uint64_t))fn)(x[0], x[1]);
	case 3: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2]);
	case 4: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3]);
	case 5: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4]);
	case 6: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5]);
	case 7: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6]);
	case 8: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7]);
	case 9: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8]);
	case 10: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9]);
	case 11: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10]);
	case 12: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11]);
	case 13: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12]);
	case 14: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13]);
	case 15: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14]);
	case 16: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15]);
	case 17: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16]);
	case 18: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16], x[17]);
	case 19: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16], x[17], x[18]);
	case 20: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16], x[17], x[18], x[19]);
	case 21: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16], x[17], x[18], x[19], x[20]);
	case 22: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16], x[17], x[18], x[19], x[20], x[21]);
	case 23: return ((uint64_t (*)(uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t, uint64_t))fn)(x[0], x[1], x[2], x[3], x[4], x[5], x[6], x[7], x[8], x[9], x[10], x[11], x[12], x[13], x[14], x[15], x[16], x[17], x[18], x[19], x[20], x[21], x[22]);
	}
	return 0;
}

static uint64_t gb_call(uintptr_t fn, uint64_t *a, int n, uint32_t ref) {
	uint64_t v[24], x[24];
	for (int i = 0; i < n; i++) {
		if (ref >> i & 1) {
			v[i] = a[i];
			x[i] = (uint64_t)(uintptr_t)&v[i];
		} else {
			x[i] = a[i];
		}
	}
	uint64_t r = gb_dispatch(fn, x, n);
	for (int i = 0; i < n; i++) {
		if (ref >> i & 1) a[i] = v[i];
	}
	return r;
}
*/
import "C"

import "unsafe"

// libHandle is a dlopen handle.
type libHandle = unsafe.Pointer

// openLibrary opens a shared library, returning its handle or why it failed.
func openLibrary(path string) (libHandle, string) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var buf [512]C.char
	h := C.gb_open(cpath, &buf[0], C.size_t(len(buf)))
	if h == nil {
		return nil, C.GoString(&buf[0])
	}
	return h, ""
}

// lookup returns the address of symbol name in library h, or 0.
func lookup(h libHandle, name string) uintptr {
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	return uintptr(C.gb_sym(h, cname))
}

// pathOf returns the file holding the function at fn, or "".
func pathOf(fn uintptr) string {
	if p := C.gb_path(C.uintptr_t(fn)); p != nil {
		return C.GoString(p)
	}
	return ""
}

// callC calls the function at fn with the first n slots of a; slots whose bit is set in
// ref are passed by address and updated.
func callC(fn uintptr, a *[MaxArgs]uint64, n int, ref uint32) uint64 {
	return uint64(C.gb_call(C.uintptr_t(fn), (*C.uint64_t)(unsafe.Pointer(&a[0])), C.int(n), C.uint32_t(ref)))
}

// cString returns the C string at p ("" for NULL).
func cString(p uint64) string {
	if p == 0 {
		return ""
	}
	return C.GoString(C.gb_str(C.uint64_t(p)))
}
