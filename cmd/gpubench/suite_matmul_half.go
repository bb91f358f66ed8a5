package main

// The bfloat16 and float16 rows.

import (
	"fmt"

	"github.com/go-gpu/gpu"
)

// randHalf returns a new array of uniform numbers in [0, 1) rounded to T.
func randHalf[T gpu.Elem](s *gpu.Stream, g *gpu.Generator, shape ...int) (*gpu.Array[T], error) {
	x, err := randFloat[float32](s, g, shape...)
	if err != nil {
		return nil, err
	}
	defer x.Free()
	return gpu.Astype[T](s, x)
}

func registerMatMulHalf(sq mmRow, prefix string, n int) {
	r := sq
	r.name, r.peak = fmt.Sprintf("%sbfloat16/%d", prefix, n), "fp16"
	registerMatMulRow(r, randHalf[gpu.BFloat16])
	r.name = fmt.Sprintf("%sfloat16/%d", prefix, n)
	registerMatMulRow(r, randHalf[gpu.Float16])
}

func registerMatMulBatchedHalf(b mmRow, prefix string) {
	b.name, b.peak = prefix+"batched/bfloat16/256x128^3", "fp16"
	registerMatMulRow(b, randHalf[gpu.BFloat16])
}
