package gokernel_test

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
)

//go:embed example_histogram_test.go
var histogramSrc string

// histogram counts the bytes of data into 256 bins: each block counts into shared
// memory with atomics, then adds its counts into bins.
func histogram(t kern.Thread, data []uint8, bins []uint32) {
	local := kern.Shared[uint32](t, 256)
	for i := t.ThreadIdx().X; i < 256; i += t.BlockDim().X {
		local[i] = 0
	}
	t.Sync()
	for i := t.Index(); i < len(data); i += t.GridStride() {
		kern.AtomicAdd(local, int(data[i]), 1)
	}
	t.Sync()
	for i := t.ThreadIdx().X; i < 256; i += t.BlockDim().X {
		kern.AtomicAdd(bins, i, local[i])
	}
}

// A histogram with atomics in shared and global memory; then the same kernel given
// too few bins, whose bounds check stops the failing threads and reports the first
// failure recorded.
func Example_histogram() {
	ctx := context.Background()
	dev, err := gpu.Open()
	if err != nil {
		panic(err)
	}
	s := dev.DefaultStream()
	k, err := gokernel.New(histogramSrc, histogram)
	if err != nil {
		panic(err)
	}
	data := make([]uint8, 10000)
	for i := range data {
		data[i] = uint8(i % 200)
	}
	d, _ := gpu.FromSlice(s, data, len(data))
	bins, _ := gpu.Zeros[uint32](s, 256)
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 4}, Block: gpu.Dim3{X: 128}}
	if err := k.Launch(s, cfg, d, bins); err != nil {
		panic(err)
	}
	h, err := bins.ToSlice(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(h[0], h[199], h[200])

	// bins[200:] is out of range for a 200-bin array: the next wait says where.
	few, _ := gpu.Zeros[uint32](s, 200)
	if err := k.Launch(s, cfg, d, few); err != nil {
		panic(err)
	}
	err = s.Synchronize(ctx)
	var f *gokernel.Fault
	if errors.As(err, &f) {
		// Threads 200 to 255 of every block fail; which of them records its failure
		// first varies from run to run on a GPU.
		var i, n int
		fmt.Sscanf(f.Msg, "index out of range [%d] with length %d", &i, &n)
		fmt.Println(errors.Is(err, gpu.ErrKernelFailure), f.File, f.Line, i >= 200 && i < 256, n)
	}
	// Output:
	// 50 50 0
	// true example_histogram_test.go 30 true 200
}
