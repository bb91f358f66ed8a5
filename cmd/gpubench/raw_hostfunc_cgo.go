//go:build cgo

package main

/*
#include <stdint.h>

extern void gpubenchHostFunc(void *);

// hostFuncTrampoline is the C callback the driver calls: it calls into Go.
static void hostFuncTrampoline(void *data) { gpubenchHostFunc(data); }

static uintptr_t hostFuncAddr(void) { return (uintptr_t)hostFuncTrampoline; }
*/
import "C"

import (
	"sync/atomic"
	"unsafe"
)

// hostFuncCalls counts the raw host functions' calls into Go.
var hostFuncCalls atomic.Int64

//export gpubenchHostFunc
func gpubenchHostFunc(unsafe.Pointer) { hostFuncCalls.Add(1) }

// rawHostFuncAvailable reports whether the raw host-function baseline can run: with
// cgo it can.
func rawHostFuncAvailable() error { return nil }

// launchHostFuncGo is cuLaunchHostFunc on the raw stream of a C callback that calls
// into Go through cgo (the way a Go program takes CUDA's host functions directly).
func (r *raw) launchHostFuncGo() error {
	return r.ctx.LaunchHostFunc(r.s, uintptr(C.hostFuncAddr()), 0)
}
