package gpu

import (
	"context"
	"fmt"
	"reflect"

	"gonum.org/v1/gonum/mat"
)

// FromDense returns a new (r, c) array on s holding a copy of the r x c matrix m,
// converted to T (gonum's float64 values rounded to nearest for float32). A *mat.Dense
// (or anything with a mat.RawMatrixer view of its rows) is copied row by row; another
// mat.Matrix (a transpose, a symmetric matrix) through its At method. m may be reused
// as soon as FromDense returns. A nil m, or a nil pointer such as a (*mat.Dense)(nil)
// (whose methods gonum lets panic), is an error wrapping ErrInvalidValue.
func FromDense[T float32 | float64](s *Stream, m mat.Matrix) (*Array[T], error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if v := reflect.ValueOf(m); m == nil || v.Kind() == reflect.Pointer && v.IsNil() {
		return nil, fmt.Errorf("gpu: FromDense of a nil matrix (%T): %w", m, ErrInvalidValue)
	}
	r, c := m.Dims()
	data := make([]T, r*c)
	if raw, ok := m.(mat.RawMatrixer); ok {
		rm := raw.RawMatrix()
		for i := range r {
			row := rm.Data[i*rm.Stride : i*rm.Stride+c]
			for j, v := range row {
				data[i*c+j] = T(v)
			}
		}
	} else {
		for i := range r {
			for j := range c {
				data[i*c+j] = T(m.At(i, j))
			}
		}
	}
	return FromSlice(s, data, r, c)
}

// ToDense copies a 2-D array into a new *mat.Dense (float32 widened exactly) and returns
// once the copy is there; it waits under ctx as ToSlice does. An array with another
// number of dimensions, or an empty one (gonum has no empty Dense), is an error wrapping
// ErrInvalidValue.
func ToDense[T float32 | float64](ctx context.Context, a *Array[T]) (*mat.Dense, error) {
	if err := nilContext(ctx); err != nil {
		return nil, err
	}
	if err := nonNil(a); err != nil {
		return nil, err
	}
	if a.Ndim() != 2 || a.Size() == 0 {
		return nil, fmt.Errorf("gpu: ToDense of an array of shape %v: want a non-empty matrix: %w", a.shape, ErrInvalidValue)
	}
	vals, err := a.ToSlice(ctx)
	if err != nil {
		return nil, err
	}
	var data []float64
	switch v := any(vals).(type) {
	case []float64:
		data = v
	case []float32:
		data = make([]float64, len(v))
		for i, x := range v {
			data[i] = float64(x)
		}
	}
	return mat.NewDense(a.shape[0], a.shape[1], data), nil
}
