package gokernel_test

import (
	"context"
	_ "embed"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
)

//go:embed example_transpose_test.go
var transposeSrc string

const tile = 32

// transpose writes the cols x rows transpose of the rows x cols matrix in into out,
// a 32x32 tile per block of 32x8 threads: coalesced reads of in's rows into shared
// memory, a barrier, coalesced writes of out's rows. The tile has 33 columns so that
// a column of it spans all 32 banks of shared memory.
func transpose(t kern.Thread, rows, cols int, in, out []float32) {
	buf := kern.Shared[float32](t, tile*(tile+1))
	bx, by := t.BlockIdx().X*tile, t.BlockIdx().Y*tile
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	for j := ty; j < tile; j += t.BlockDim().Y {
		if r, c := by+j, bx+tx; r < rows && c < cols {
			buf[j*(tile+1)+tx] = in[r*cols+c]
		}
	}
	t.Sync()
	for j := ty; j < tile; j += t.BlockDim().Y {
		if r, c := bx+j, by+tx; r < cols && c < rows {
			out[r*rows+c] = buf[tx*(tile+1)+j]
		}
	}
}

// A tiled transpose through shared memory, with a block barrier.
func Example_transpose() {
	dev, err := gpu.Open()
	if err != nil {
		panic(err)
	}
	s := dev.DefaultStream()
	k, err := gokernel.New(transposeSrc, transpose)
	if err != nil {
		panic(err)
	}
	rows, cols := 3, 40
	m := make([]float32, rows*cols)
	for i := range m {
		m[i] = float32(i)
	}
	in, _ := gpu.FromSlice(s, m, rows*cols)
	out, _ := gpu.Zeros[float32](s, rows*cols)
	cfg := gpu.LaunchConfig{
		Grid:  gpu.Dim3{X: (cols + tile - 1) / tile, Y: (rows + tile - 1) / tile},
		Block: gpu.Dim3{X: tile, Y: 8},
	}
	if err := k.Launch(s, cfg, rows, cols, in, out); err != nil {
		panic(err)
	}
	got, err := out.ToSlice(context.Background())
	if err != nil {
		panic(err)
	}
	fmt.Println(got[:rows], got[rows:2*rows], got[len(got)-rows:])
	// Output: [0 40 80] [1 41 81] [39 79 119]
}
