package cu

import (
	"testing"
	"unsafe"
)

// The Go mirrors of the driver's structures have the C layouts (cuda.h, x86-64 and
// arm64): CUlaunchConfig 56 bytes with the stream at 32, CUlaunchAttribute 72 with the
// value at 8.
func TestLaunchExLayout(t *testing.T) {
	var c launchConfig
	var a LaunchAttribute
	for _, x := range []struct {
		what      string
		got, want uintptr
	}{
		{"sizeof(CUlaunchConfig)", unsafe.Sizeof(c), 56},
		{"offsetof(hStream)", unsafe.Offsetof(c.stream), 32},
		{"offsetof(attrs)", unsafe.Offsetof(c.attrs), 40},
		{"offsetof(numAttrs)", unsafe.Offsetof(c.numAttrs), 48},
		{"sizeof(CUlaunchAttribute)", unsafe.Sizeof(a), 72},
		{"offsetof(value)", unsafe.Offsetof(a.Value), 8},
		{"alignof(CUlaunchAttribute)", unsafe.Alignof(a), 8},
	} {
		if x.got != x.want {
			t.Errorf("%s = %d, want %d", x.what, x.got, x.want)
		}
	}
}
