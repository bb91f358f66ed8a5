package gokernel_test

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
)

// The kernel's own source, for the GPU compiler.
//
//go:embed example_saxpy_test.go
var saxpySrc string

// saxpy computes y = a*x + y, one element per thread.
func saxpy(t kern.Thread, a float32, x, y []float32) {
	if i := t.Index(); i < len(y) {
		y[i] = a*x[i] + y[i]
	}
}

// A kernel written in Go: compiled to PTX for a CUDA device, run as Go on the CPU.
func ExampleNew() {
	ctx := context.Background()
	dev, err := gpu.Open() // the first CUDA device, else the CPU
	if err != nil {
		panic(err)
	}
	s := dev.DefaultStream()
	k, err := gokernel.New(saxpySrc, saxpy)
	if err != nil {
		panic(err)
	}
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4}, 4)
	y, _ := gpu.FromSlice(s, []float32{10, 20, 30, 40}, 4)
	// One thread per element; 2 converts to the kernel's float32.
	if err := k.LaunchN(s, 4, 2, x, y); err != nil {
		panic(err)
	}
	out, err := y.ToSlice(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(out)
	// Output: [12 24 36 48]
}
