package gpu

import (
	"context"

	"github.com/go-gpu/gpu/dtype"
)

// WithDType returns a view of a whose elements are read as type dt of the same size:
// the tests' float16 and bfloat16 arrays are uint16 arrays of their bits until the
// element types of their own exist.
func WithDType[T Elem](a *Array[T], dt dtype.DType) *Array[T] {
	v := a.derive(a.shape, a.strides, a.off)
	v.dt = dt
	return v
}

// ReadRaw returns a's elements in row-major order, copying a non-contiguous view with
// its own element type (ToSlice's copy would convert WithDType's views to T).
func ReadRaw[T Elem](s *Stream, a *Array[T]) ([]T, error) {
	out, err := Empty[T](s, a.shape...)
	if err != nil {
		return nil, err
	}
	defer out.Free()
	out.dt = a.dt
	if err := Copy(s, out, a); err != nil {
		return nil, err
	}
	return out.ToSlice(context.Background())
}

// ConvertInto writes x converted to out's element type (its DType, so WithDType's
// views take float16 or bfloat16 values) into out.
func ConvertInto[T, U Elem](s *Stream, out *Array[T], x *Array[U]) error {
	return evalIntoHeader(s, out.header(), x.header())
}

// SetMatMulAlignOnCPU makes the CPU backend's generated kernel take A and B aligned as
// the CUDA kernel does (copied when they are not), and returns the previous setting.
func SetMatMulAlignOnCPU(on bool) bool {
	old := mmAlignOnCPU
	mmAlignOnCPU = on
	return old
}
