package gpu_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-gpu/gpu"
)

func ExampleTake() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float32{10, 11, 12, 20, 21, 22}, 2, 3)
	idx, _ := gpu.FromSlice(s, []int64{2, 0, -1})
	flat, _ := gpu.Take(s, x, idx)                // x.flat[[2, 0, -1]]
	cols, _ := gpu.Take(s, x, idx, gpu.OnAxis(1)) // x[:, [2, 0, -1]]
	a, _ := flat.ToSlice(context.Background())
	b, _ := cols.ToSlice(context.Background())
	fmt.Println(a, cols.Shape(), b)
	// Output: [12 10 22] [2 3] [12 10 12 22 20 22]
}

// An index out of range in raise mode (the default) is found by the kernel and
// reported by the next wait that covers it, here the read of the result.
func ExampleErrIndexOutOfRange() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3})
	idx, _ := gpu.FromSlice(s, []int32{0, 3})
	y, err := gpu.Take(s, x, idx) // no error yet: the kernel hasn't run
	fmt.Println(err)
	_, err = y.ToSlice(context.Background())
	fmt.Println(errors.Is(err, gpu.ErrIndexOutOfRange))
	clip, _ := gpu.Take(s, x, idx, gpu.WithMode(gpu.ModeClip))
	out, _ := clip.ToSlice(context.Background())
	fmt.Println(out)
	// Output:
	// <nil>
	// true
	// [1 3]
}

func ExampleAddAt() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	a, _ := gpu.Zeros[float32](s, 4)
	idx, _ := gpu.FromSlice(s, []int64{0, 1, 1, 3, 1})
	v, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4, 5})
	gpu.AddAt(s, a, idx, v) // duplicates accumulate: numpy.add.at
	out, _ := a.ToSlice(context.Background())
	fmt.Println(out)
	// Output: [1 10 0 4]
}

func ExampleBincount() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []int32{0, 1, 1, 3, 1})
	c, _ := gpu.Bincount(context.Background(), s, x, 0)
	out, _ := c.ToSlice(context.Background())
	fmt.Println(out)
	// Output: [1 3 0 1]
}

func ExampleConcatenate() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	a, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4}, 2, 2)
	b, _ := gpu.FromSlice(s, []float32{5, 6}, 2, 1)
	c, _ := gpu.Concatenate(s, []*gpu.Array[float32]{a, b}, 1)
	out, _ := c.ToSlice(context.Background())
	parts, _ := c.ArraySplit(2, 1) // views
	fmt.Println(c.Shape(), out, parts[0].Shape(), parts[1].Shape())
	// Output: [2 3] [1 2 5 3 4 6] [2 2] [2 1]
}

func ExampleArray_ExpandDims() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3})
	col, _ := x.ExpandDims(1)      // x[:, newaxis]
	row, _ := x.Slice(gpu.NewAxis) // x[newaxis, :]
	back, _ := col.Squeeze()       // x again
	rev, _ := x.Flip()             // x[::-1], a view
	r, _ := rev.ToSlice(context.Background())
	fmt.Println(col.Shape(), row.Shape(), back.Shape(), r)
	// Output: [3 1] [1 3] [3] [3 2 1]
}
