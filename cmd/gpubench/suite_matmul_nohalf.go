//go:build !matmulhalf

package main

// Without the half-precision element types (see suite_matmul.go) there are no
// bfloat16 and float16 rows.

func registerMatMulHalf(sq mmRow, prefix string, n int) {}

func registerMatMulBatchedHalf(b mmRow, prefix string) {}
