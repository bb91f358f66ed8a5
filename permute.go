package gpu

import (
	"fmt"

	"github.com/go-gpu/gpu/internal/kernel"
)

// Permute returns a new contiguous array holding a with its axes permuted: axis i of
// the result is axis axes[i] of a (numpy.transpose(a, axes) made contiguous, i.e.
// numpy.ascontiguousarray; Julia's permutedims, whose 1-based column-major
// permutation p is axes[i] = n - p[n-1-i] here). axes must name every axis once;
// negative axes count from the end. Any rank is supported.
//
// Dimensions that stay adjacent (and in order) in both the input and the output are
// merged first, and size-1 dimensions dropped, so a permutation often reduces to a 2-D
// or 3-D one. When the output's innermost dimension is not the input's most contiguous
// one, the copy goes through shared-memory tiles (64x64 elements for 1- to 4-byte
// types, 32x32 for 8-byte ones), read and written with consecutive threads along the
// contiguous dimension of each side, with a padding column against bank conflicts
// (Harris, "An Efficient Matrix Transpose in CUDA C/C++", NVIDIA 2013). When one of
// the two dimensions is short (at most 32 elements, as the 16-element output rows of
// (32, 32, 16, 16384) permuted with (1, 0, 3, 2)), the tile covers it whole and 16
// elements per thread of the other, through an XOR-swizzled shared tile (Device
// Tuning's PermuteVariant selects the kernels). Otherwise it is the elementwise
// strided copy (Copy).
func Permute[T Elem](s *Stream, a *Array[T], axes ...int) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if len(axes) != len(a.shape) {
		return nil, fmt.Errorf("gpu: permutation %v of a %d-d array: %w", axes, len(a.shape), ErrInvalidValue)
	}
	return Transpose(s, a, axes...)
}

// Transpose returns a new contiguous array holding a with its axes permuted as
// Array.Transpose views them: reversed when no axes are given (numpy.transpose
// followed by numpy.ascontiguousarray). It is Permute's kernel.
func Transpose[T Elem](s *Stream, a *Array[T], axes ...int) (*Array[T], error) {
	if err := nonNil(a); err != nil {
		return nil, err
	}
	v, err := a.Transpose(axes...)
	if err != nil {
		return nil, err
	}
	out, err := Empty[T](s, v.shape...)
	if err != nil {
		return nil, err
	}
	if err := permuteInto(s, out.header(), v.header()); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// permuteInto copies the view in into the contiguous out of the same shape.
func permuteInto(s *Stream, out, in *header) error {
	if err := nilStream(s); err != nil {
		return err
	}
	d := s.dev
	if in.buf.a.dev != d && in.buf.a.dev.info.Backend != d.info.Backend {
		return fmt.Errorf("gpu: permute of an array on %v on a stream of %v: %w", in.buf.a.dev, d, ErrInvalidValue)
	}
	if prod(out.shape) == 0 {
		return nil
	}
	cshape, ist, b, tiled := kernel.PermuteDims(out.shape, out.strides, in.strides)
	if !tiled {
		// The innermost dimension is (as good as) the input's contiguous one: a
		// plain strided copy reads and writes along it.
		return evalIntoHeader(s, out, in)
	}
	size := in.dt.Size()
	ptr := func(h *header) uint64 { return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*size) }
	sp := kernel.PlanPermute(cshape, ist, b, size, d.tuning().PermuteVariant, d.info.Multiprocessors, ptr(in)|ptr(out))
	fn, err := d.kernel(sp)
	if err != nil {
		return err
	}
	blocks := sp.Blocks(cshape)
	if blocks > 1<<31-1 {
		return fmt.Errorf("gpu: permute of %d tiles: %w", blocks, ErrNotSupported)
	}
	la := newLaunchArgs()
	la.hdr(in, Read)
	la.hdr(out, Write)
	for _, v := range cshape {
		la.u64(uint64(v))
	}
	for _, v := range ist {
		la.u64(uint64(v))
	}
	return la.launch(s, fn, launchGeometry(blocks, 1, kernel.PermuteBlock))
}
