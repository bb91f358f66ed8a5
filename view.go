package gpu

import (
	"fmt"
	"math"
	"slices"
)

// Views that add, drop or reverse axes (numpy.squeeze, numpy.expand_dims, numpy.flip,
// numpy.newaxis) and the reshape of a view that isn't contiguous. None of them copies:
// the result shares the array's buffer and its ordering across streams, like Slice and
// Transpose.

// NewAxis, given to Slice among the ranges, inserts an axis of size 1 at its place
// (numpy.newaxis, None in a NumPy subscript): a.Slice(gpu.R(), gpu.NewAxis) of a (3, 4)
// array is a (3, 1, 4) view. It selects no axis of the array.
var NewAxis = Range{Start: math.MinInt, Stop: math.MinInt, Step: math.MinInt}

// isNewAxis reports whether r is NewAxis.
func (r Range) isNewAxis() bool { return r == NewAxis }

// normAxis returns axis, counting from the end when negative, checked against ndim.
func normAxis(axis, ndim int) (int, error) {
	a := axis
	if a < 0 {
		a += ndim
	}
	if a < 0 || a >= ndim {
		return 0, fmt.Errorf("gpu: axis %d out of range for %d dimensions: %w", axis, ndim, ErrInvalidValue)
	}
	return a, nil
}

// normAxes returns the axes, counting from the end when negative, checked against ndim
// and for repeats, as a mask of ndim entries.
func normAxes(axes []int, ndim int) ([]bool, error) {
	mask := make([]bool, ndim)
	for _, ax := range axes {
		a, err := normAxis(ax, ndim)
		if err != nil {
			return nil, err
		}
		if mask[a] {
			return nil, fmt.Errorf("gpu: axis %d repeated in %v: %w", ax, axes, ErrInvalidValue)
		}
		mask[a] = true
	}
	return mask, nil
}

// Squeeze returns a view without the given axes of size 1, or without every axis of
// size 1 when none are given (numpy.squeeze). Naming an axis whose size isn't 1 is an
// error wrapping ErrInvalidValue. Squeezing every axis of a one-element array gives a
// 0-d view.
func (a *Array[T]) Squeeze(axes ...int) (*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	drop := make([]bool, len(a.shape))
	if len(axes) == 0 {
		for d, n := range a.shape {
			drop[d] = n == 1
		}
	} else {
		var err error
		if drop, err = normAxes(axes, len(a.shape)); err != nil {
			return nil, err
		}
		for d, on := range drop {
			if on && a.shape[d] != 1 {
				return nil, fmt.Errorf("gpu: squeeze of axis %d of size %d: %w", d, a.shape[d], ErrInvalidValue)
			}
		}
	}
	var shape, strides []int
	for d, n := range a.shape {
		if !drop[d] {
			shape = append(shape, n)
			strides = append(strides, a.strides[d])
		}
	}
	if shape == nil {
		shape, strides = []int{}, []int{}
	}
	return a.derive(shape, strides, a.off), nil
}

// ExpandDims returns a view with axes of size 1 inserted at the given positions of the
// result (numpy.expand_dims): a (3, 4) array expanded at 0 is (1, 3, 4), at -1 (3, 4,
// 1), at 0 and 2 (1, 3, 1, 4). Positions count from the end of the result when
// negative; a position out of range or repeated is an error wrapping ErrInvalidValue.
// At least one axis must be given.
func (a *Array[T]) ExpandDims(axes ...int) (*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	if len(axes) == 0 {
		return nil, fmt.Errorf("gpu: ExpandDims without an axis: %w", ErrInvalidValue)
	}
	nd := len(a.shape) + len(axes)
	ins, err := normAxes(axes, nd)
	if err != nil {
		return nil, err
	}
	shape, strides := make([]int, nd), make([]int, nd)
	k := 0
	for d := range nd {
		if ins[d] {
			shape[d] = 1
			// The stride of a size-1 axis is never used to step; a row-major one keeps
			// the view contiguous by every definition.
			strides[d] = 1
			if k < len(a.shape) {
				strides[d] = a.strides[k] * a.shape[k]
			}
			continue
		}
		shape[d], strides[d] = a.shape[k], a.strides[k]
		k++
	}
	return a.derive(shape, strides, a.off), nil
}

// Flip returns a view with the order of the elements reversed along the given axes, or
// along every axis when none are given (numpy.flip): a negative stride, no copy. Axes
// count from the end when negative; one out of range or repeated is an error wrapping
// ErrInvalidValue.
func (a *Array[T]) Flip(axes ...int) (*Array[T], error) {
	if a.isNil() {
		return nil, errNilArray
	}
	flip := make([]bool, len(a.shape))
	if len(axes) == 0 {
		for d := range flip {
			flip[d] = true
		}
	} else {
		var err error
		if flip, err = normAxes(axes, len(a.shape)); err != nil {
			return nil, err
		}
	}
	shape, strides, off := slices.Clone(a.shape), slices.Clone(a.strides), a.off
	empty := prod(shape) == 0
	for d, on := range flip {
		if !on || shape[d] <= 1 {
			continue
		}
		if !empty {
			off += (shape[d] - 1) * strides[d]
		}
		strides[d] = -strides[d]
	}
	return a.derive(shape, strides, off), nil
}

// viewStrides returns the strides of a view of an array of shape and strides with the
// shape to, of the same size, when one exists (NumPy's _attempt_nocopy_reshape): the
// axes of each group of old axes whose product is that of a group of new axes must be
// laid out one after the other in memory (stride[i] = stride[i+1]*shape[i+1]); size-1
// axes are ignored. ok is false when the reshape needs a copy.
func viewStrides(shape, strides, to []int) (out []int, ok bool) {
	out = make([]int, len(to))
	if !viewStridesInto(out, shape, strides, to) {
		return nil, false
	}
	return out, true
}

// viewStridesInto is viewStrides writing the strides into out (len(to) of them).
func viewStridesInto(out, shape, strides, to []int) bool {
	var osb, ostb [8]int
	os, ost := osb[:0], ostb[:0] // the old shape and strides without size-1 axes
	for d, n := range shape {
		if n != 1 {
			os = append(os, n)
			ost = append(ost, strides[d])
		}
	}
	if prod(shape) == 0 {
		// Nothing is addressed: row-major strides of the new shape.
		st := 1
		for d := len(to) - 1; d >= 0; d-- {
			out[d] = st
			st *= to[d]
		}
		return true
	}
	oi, ni := 0, 0
	for ni < len(to) {
		if to[ni] == 1 {
			ni++
			continue
		}
		if oi >= len(os) {
			return false
		}
		// Grow a group on each side until the products agree.
		o0, n0 := oi, ni
		op, np := os[oi], to[ni]
		oi++
		ni++
		for op != np {
			if op < np {
				if oi >= len(os) {
					return false
				}
				op *= os[oi]
				oi++
			} else {
				for ni < len(to) && to[ni] == 1 {
					ni++
				}
				if ni >= len(to) {
					return false
				}
				np *= to[ni]
				ni++
			}
		}
		// The old axes of the group must be contiguous with each other.
		for k := o0; k < oi-1; k++ {
			if ost[k] != ost[k+1]*os[k+1] {
				return false
			}
		}
		// New strides: the group's innermost stride, growing outwards.
		st := ost[oi-1]
		for k := ni - 1; k >= n0; k-- {
			out[k] = st
			st *= to[k]
		}
	}
	if oi != len(os) {
		return false
	}
	// Size-1 axes of the new shape: a stride that keeps the view contiguous where it is.
	for k := len(to) - 1; k >= 0; k-- {
		if to[k] == 1 {
			out[k] = 1
			if k+1 < len(to) {
				out[k] = out[k+1] * to[k+1]
			}
		}
	}
	return true
}

// reshapeShape resolves a reshape's target shape (one -1 inferred) for size elements.
func reshapeShape(size int, shape []int) ([]int, error) {
	shape = slices.Clone(shape)
	infer := -1
	n := 1
	for d, v := range shape {
		switch {
		case v == -1 && infer < 0:
			infer = d
		case v < 0:
			return nil, fmt.Errorf("gpu: reshape to %v: %w", shape, ErrInvalidValue)
		case v > 0 && n > math.MaxInt/v:
			// A product that wrapped around could equal the size and give a view whose
			// indices reach past the buffer.
			return nil, fmt.Errorf("gpu: reshape of %d elements to %v: %w", size, shape, ErrInvalidValue)
		default:
			n *= v
		}
	}
	if infer >= 0 {
		if n == 0 || size%n != 0 {
			return nil, fmt.Errorf("gpu: reshape of %d elements to %v: %w", size, shape, ErrInvalidValue)
		}
		shape[infer] = size / n
		n *= shape[infer]
	}
	if n != size {
		return nil, fmt.Errorf("gpu: reshape of %d elements to %v: %w", size, shape, ErrInvalidValue)
	}
	return shape, nil
}

// Reshape returns a with a new shape of the same size (numpy.reshape; one dimension may
// be -1, inferred): a view of a's buffer whenever one exists, as Array.Reshape returns
// (every contiguous array, and the views whose axes that merge or split are laid out one
// after the other, such as a slice of whole rows or a transposed array reshaped without
// merging its swapped axes), else a new contiguous copy made on s, as NumPy makes one.
// The result is a view exactly when its Buffer() is a's: a view's Free is an error (free
// a), a copy owns its buffer and is freed by the caller.
func Reshape[T Elem](s *Stream, a *Array[T], shape ...int) (*Array[T], error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := nonNil(a); err != nil {
		return nil, err
	}
	to, err := reshapeShape(a.Size(), shape)
	if err != nil {
		return nil, err
	}
	if st, ok := viewStrides(a.shape, a.strides, to); ok {
		return a.derive(to, st, a.off), nil
	}
	c, err := Clone(s, a)
	if err != nil {
		return nil, err
	}
	c.shape, c.strides = layout(to)
	return c, nil
}
