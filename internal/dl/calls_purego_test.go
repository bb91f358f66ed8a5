//go:build !cgo && linux && (amd64 || arm64) && !gpu_nodlopen

package dl_test

import (
	"testing"
	"unsafe"

	"github.com/ebitengine/purego"
)

// benchOther times the same C functions through purego's own calls: SyscallN with the
// symbol's address, and a Go function made by RegisterLibFunc.
func benchOther(b *testing.B) {
	b.Run("get-purego-SyscallN", func(b *testing.B) {
		for b.Loop() {
			purego.SyscallN(fakeCurrent.Addr())
		}
	})
	b.Run("get-in-context-purego-SyscallN", func(b *testing.B) {
		// What CallIn would cost through SyscallN: two crossings (the third, Set, only
		// when the context changes).
		var c uintptr
		for b.Loop() {
			purego.SyscallN(fakeGet.Addr(), uintptr(unsafe.Pointer(&c)))
			purego.SyscallN(fakeCurrent.Addr())
		}
	})
	b.Run("get-purego-RegisterLibFunc", func(b *testing.B) {
		var f func() uintptr
		purego.RegisterFunc(&f, fakeCurrent.Addr())
		for b.Loop() {
			f()
		}
	})
}
