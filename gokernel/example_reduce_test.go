package gokernel_test

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
)

//go:embed example_reduce_test.go
var reduceSrc string

// sum adds the elements of x into total[0]: each thread sums a grid-stride slice of
// x, each warp adds its threads' sums with butterfly shuffles, the warps' sums meet
// in shared memory, and the first warp adds them and the block's total atomically.
// It is generic: the launch's arguments choose T.
func sum[T kern.Integer | kern.Float](t kern.Thread, x, total []T) {
	warps := kern.Shared[T](t, 32)
	var s T
	for i := t.Index(); i < len(x); i += t.GridStride() {
		s += x[i]
	}
	s = warpTotal(t, s)
	if t.Lane() == 0 {
		warps[t.Warp()] = s
	}
	t.Sync()
	if t.Warp() == 0 {
		s = 0
		if t.Lane() < t.BlockDim().X/kern.WarpSize {
			s = warps[t.Lane()]
		}
		if s = warpTotal(t, s); t.Lane() == 0 {
			kern.AtomicAdd(total, 0, s)
		}
	}
}

// warpTotal returns the sum of s over the warp, in every lane (calls are inlined).
func warpTotal[T kern.Integer | kern.Float](t kern.Thread, s T) T {
	for m := kern.WarpSize / 2; m > 0; m /= 2 {
		s += kern.ShflXor(t, s, m)
	}
	return s
}

// A block reduction with warp shuffles, shared memory and an atomic, generic over the
// element type.
func Example_reduction() {
	ctx := context.Background()
	dev, err := gpu.Open()
	if err != nil {
		panic(err)
	}
	s := dev.DefaultStream()
	// The CPU runs the instantiations it is given.
	k, err := gokernel.New(reduceSrc, sum[int64], sum[float64])
	if err != nil {
		panic(err)
	}
	n := 100000
	ints := make([]int64, n)
	floats := make([]float64, n)
	for i := range ints {
		ints[i], floats[i] = int64(i), 0.5
	}
	xi, _ := gpu.FromSlice(s, ints, n)
	xf, _ := gpu.FromSlice(s, floats, n)
	ti, _ := gpu.Zeros[int64](s, 1)
	tf, _ := gpu.Zeros[float64](s, 1)
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 8}, Block: gpu.Dim3{X: 256}}
	if err := k.Launch(s, cfg, xi, ti); err != nil {
		panic(err)
	}
	if err := k.Launch(s, cfg, xf, tf); err != nil {
		panic(err)
	}
	a, _ := ti.At(ctx, 0)
	b, err := tf.At(ctx, 0)
	if err != nil {
		panic(err)
	}
	fmt.Println(a, b)
	// Output: 4999950000 50000
}
