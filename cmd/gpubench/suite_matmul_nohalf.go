//go:build !matmulhalf

package main

import (
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// Without the half-precision element types (see suite_matmul.go) the bfloat16 and
// float16 rows are registered, so that their names and peer rows exist, and skip.

// errNoHalf skips the bfloat16 and float16 rows.
var errNoHalf = fmt.Errorf("bfloat16 and float16 rows need gpu.BFloat16 and gpu.Float16: build with -tags matmulhalf once package gpu has them: %w", bench.ErrSkip)

func noHalf(*gpu.Stream, *gpu.Generator, ...int) (*gpu.Array[uint16], error) { return nil, errNoHalf }

func registerMatMulHalf(sq mmRow, prefix string, n int) {
	r := sq
	r.name, r.peak = fmt.Sprintf("%sbfloat16/%d", prefix, n), "fp16"
	registerMatMulRow(r, noHalf)
	r.name = fmt.Sprintf("%sfloat16/%d", prefix, n)
	registerMatMulRow(r, noHalf)
}

func registerMatMulBatchedHalf(b mmRow, prefix string) {
	b.name, b.peak = prefix+"batched/bfloat16/256x128^3", "fp16"
	registerMatMulRow(b, noHalf)
}
