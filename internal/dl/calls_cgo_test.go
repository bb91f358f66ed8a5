//go:build cgo && unix && !gpu_nodlopen

package dl_test

import (
	"testing"

	"github.com/go-gpu/gpu/internal/dl"
)

// benchOther times the empty C function called the way cgo calls it (a C call in Go
// source: cgo's generated wrapper), beside Noop's trampoline.
func benchOther(b *testing.B) {
	b.Run("noop-cgo-direct", func(b *testing.B) {
		for b.Loop() {
			dl.NoopCgo()
		}
	})
}
