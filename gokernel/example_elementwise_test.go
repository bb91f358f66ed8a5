package gokernel_test

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
)

// The scalar function's own source, for the GPU compiler.
//
//go:embed example_elementwise_test.go
var elementwiseSrc string

// clampedSum is a scalar function in the kernel subset: no kern.Thread, numbers in
// and out.
func clampedSum(x, y float32) float32 {
	return min(max(x+y, 0), 10)
}

// A scalar Go function made an elementwise operation on arrays, with NumPy's
// broadcasting: a (2, 3) matrix and a row of 3.
func ExampleNewFunc2() {
	dev, err := gpu.Open() // the first CUDA device, else the CPU
	if err != nil {
		panic(err)
	}
	s := dev.DefaultStream()
	f, err := gokernel.NewFunc2(elementwiseSrc, clampedSum)
	if err != nil {
		panic(err)
	}
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	y, _ := gpu.FromSlice(s, []float32{-5, 0, 5}, 3)
	z, err := f.Apply(s, x, y)
	if err != nil {
		panic(err)
	}
	out, err := z.ToSlice(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(z.Shape(), out)
	// Output: [2 3] [0 2 8 0 5 10]
}
