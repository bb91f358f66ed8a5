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
// types, 32x32 for 8-byte ones, flatter tiles for short dimensions), read and written
// with consecutive threads along the contiguous dimension of each side, with a
// padding column against bank conflicts (Harris, "An Efficient Matrix Transpose in
// CUDA C/C++", NVIDIA 2013). Otherwise it is the elementwise strided copy (Copy).
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
	cshape, cst := kernel.Collapse(out.shape, [][]int{out.strides, in.strides})
	ist := cst[1]
	r := len(cshape)
	absI := func(v int) int {
		if v < 0 {
			return -v
		}
		return v
	}
	b := -1
	for k := 0; k < r-1; k++ {
		if ist[k] != 0 && (b < 0 || absI(ist[k]) < absI(ist[b])) {
			b = k
		}
	}
	size := in.dt.Size()
	if r < 2 || b < 0 || absI(ist[r-1]) <= absI(ist[b]) {
		// The innermost dimension is (as good as) the input's contiguous one: a
		// plain strided copy reads and writes along it.
		return evalIntoHeader(s, out, in)
	}
	sp := &kernel.Permute{Size: size, Rank: r, B: b, TB: 64, TA: 64, Index64: kernel.PermuteNeedIndex64(cshape, ist)}
	if size == 8 {
		sp.TB, sp.TA = 32, 32
	}
	switch sa, sb := cshape[r-1], cshape[b]; {
	case sa <= 16 && sb <= 16:
		sp.TB, sp.TA = 16, 16
	case sa <= 16:
		sp.TB, sp.TA = kernel.PermuteBlock/16*2, 16
		if size == 8 {
			sp.TB = kernel.PermuteBlock / 16
		}
	case sb <= 16:
		sp.TB, sp.TA = 16, kernel.PermuteBlock/16*2
		if size == 8 {
			sp.TA = kernel.PermuteBlock / 16
		}
	}
	if d.tuning().PermuteVariant == 2 {
		permuteV2(sp, cshape, ist, in, out, d.info.Multiprocessors)
	}
	fn, err := d.kernel(sp)
	if err != nil {
		return err
	}
	blocks := sp.Blocks(cshape)
	if blocks > 1<<31-1 {
		return fmt.Errorf("gpu: permute of %d tiles: %w", blocks, ErrNotSupported)
	}
	args := make([]any, 0, 2+2*r)
	args = append(args, In(in), Out(out))
	for _, v := range cshape {
		args = append(args, uint64(v))
	}
	for _, v := range ist {
		args = append(args, int64(v))
	}
	cfg := LaunchConfig{Grid: Dim3{X: blocks}, Block: Dim3{X: kernel.PermuteBlock}}
	return s.Launch(fn, cfg, args...)
}

// permuteV2 turns the first kernel's spec into the second's: tiles of 32 along a
// dimension of 17 to 32 (the first kernel's 64 would leave half the threads idle),
// 32x32 tiles instead of 64x64 when 64x64 gives fewer than two blocks per
// multiprocessor (512x1000 float32: 128 blocks of 64x64 on 132 SMs, 512 of 32x32), and
// the widest vector (up to 16 bytes, at most 4 elements) that the shape, the strides
// and the element-0 addresses allow.
func permuteV2(sp *kernel.Permute, shape, istr []int, in, out *header, sms int) {
	sp.V2 = true
	r := sp.Rank
	sa, sb := shape[r-1], shape[sp.B]
	if sa > 16 && sa <= 32 && sp.TA > 32 {
		sp.TA = 32
	}
	if sb > 16 && sb <= 32 && sp.TB > 32 {
		sp.TB = 32
	}
	if sp.TA == 64 && sp.TB == 64 && sp.Blocks(shape) < 2*max(sms, 1) {
		sp.TA, sp.TB = 32, 32
	}
	ptr := func(h *header) uint64 { return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size()) }
	for _, v := range []int{4, 2} {
		sp.Vec = v
		if sp.Validate() == nil && sp.VecOK(shape, istr) && ptr(in)%uint64(v*sp.Size) == 0 && ptr(out)%uint64(v*sp.Size) == 0 {
			return
		}
	}
	sp.Vec = 1
}
