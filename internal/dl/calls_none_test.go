//go:build !((cgo && unix) || (!cgo && linux && (amd64 || arm64))) || gpu_nodlopen

package dl_test

import "testing"

func benchOther(*testing.B) {}
