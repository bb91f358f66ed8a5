//go:build !cgo && linux && !gpu_nodlopen

package dl

// Mechanism names how this build calls C: "cgo" (a C trampoline built by cgo),
// "purego" (no cgo: purego's runtime support and this package's assembly trampoline),
// "purego-syscalln" (no cgo: purego.SyscallN), or "" (no calls into C).
const Mechanism = "purego"

// trampoline and noop are the addresses of the assembly functions of
// trampoline_amd64.s, which follow the C calling convention.
var trampoline, noop uintptr
