//go:build !cgo

package cuda

// releaseBlas does nothing without cgo: the products through cuBLAS (gemm.go) need cgo,
// so no stream has a handle.
func (s *Stream) releaseBlas() {}
