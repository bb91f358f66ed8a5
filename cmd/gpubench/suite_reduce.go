package main

import (
	"strings"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// The scans and reductions: Metal.jl's array/accumulate/<T>/<dims>,
// array/reductions/reduce/<T>/<dims> and array/reductions/mapreduce/<T>/<dims>
// for T Float32 and Int64:
//
//   - accumulate(+, x; dims): gpu.CumSum[T] along the axis;
//   - reduce(+, x; dims): gpu.Sum[T] over the axis;
//   - mapreduce(x->x+1, +, x; dims): gpu.MapReduce[T]("x + 1", OpSum), one
//     fused kernel.
//
// dims: 1d is the flattened matrix (CumSum along axis 0; Sum of every
// element); Julia's dims=1 is our last axis (axis 1 of the (1000, 512) matrix:
// 1000 rows of 512), dims=2 our first (axis 0); dims=1L and dims=2L are the
// same on Metal.jl's 3x1000000 matrix, our (1000000, 3): 1000000 rows of 3,
// or 3 columns of 1000000. The /16k rows use the (side, side) matrix (1d: its
// flattened vector) and have no L variants. Results are accumulated in T, as
// Julia does. Bytes: the input and the output (the same size for a scan).

// dimsVariants are Metal.jl's dims names.
var dimsVariants = []string{"1d", "dims=1", "dims=2", "dims=1L", "dims=2L"}

// reduceOps are Metal.jl's operation groups.
var reduceOps = []string{"accumulate", "reductions/reduce", "reductions/mapreduce"}

func registerReductions() {
	for _, large := range []bool{false, true} {
		for _, group := range reduceOps {
			for _, dims := range dimsVariants {
				if large && strings.HasSuffix(dims, "L") {
					continue
				}
				registerReduction[float32](group, "Float32", dims, large)
				registerReduction[int64](group, "Int64", dims, large)
			}
		}
	}
}

// reduceShape returns the input shape of a dims variant and the axis (-1: all
// elements) for a size: side 0 is Metal.jl's.
func reduceShape(dims string, side int) (shape []int, axis int) {
	rows, cols := matRows, matCols
	switch {
	case side > 0:
		rows, cols = side, side
	case strings.HasSuffix(dims, "L"):
		rows, cols = longRows, longCols
	}
	switch strings.TrimSuffix(dims, "L") {
	case "1d":
		return []int{rows * cols}, -1
	case "dims=1":
		return []int{rows, cols}, 1
	default: // dims=2
		return []int{rows, cols}, 0
	}
}

// reduceBytes returns the bytes one call moves: the input, and the output.
func reduceBytes(group string, shape []int, axis int, size int64) int64 {
	n := int64(elems(shape))
	if group == "accumulate" {
		return 2 * n * size
	}
	outs := int64(1)
	if axis >= 0 {
		outs = int64(shape[1-axis])
	}
	return (n + outs) * size
}

func registerReduction[T float32 | int64](group, typ, dims string, large bool) {
	size := sizeOf[T]()
	nomSide := 0
	if large {
		nomSide = bench.LargeSide
	}
	nomShape, nomAxis := reduceShape(dims, nomSide)
	registerOp(op{
		name:  "array/" + group + "/" + typ + "/" + dims,
		large: large,
		bytes: reduceBytes(group, nomShape, nomAxis, size),
		setup: func(c *setupCtx) (func() error, int64, error) {
			side := 0
			if c.large {
				side = c.side
			}
			shape, axis := reduceShape(dims, side)
			n := int64(elems(shape))
			rot, err := rotation(c.sets(n*size), func() (*gpu.Array[T], error) { return fixture[T](c, devMem, shape...) })
			if err != nil {
				return nil, 0, err
			}
			var opts []gpu.ReduceOption
			if axis >= 0 {
				opts = append(opts, gpu.Axes(axis))
			}
			s := c.s()
			var body func() error
			switch group {
			case "accumulate":
				scanAxis := max(axis, 0)
				body = func() error {
					out, err := gpu.CumSum[T](s, rot.Next(), scanAxis)
					return freeing(err, out)
				}
			case "reductions/reduce":
				body = func() error {
					out, err := gpu.Sum[T](s, rot.Next(), opts...)
					return freeing(err, out)
				}
			default:
				vars := make([]gpu.Vars, rot.Len())
				for i, x := range rot.Sets() {
					vars[i] = gpu.Vars{"x": x}
				}
				vrot := bench.NewRotation(vars...)
				body = func() error {
					out, err := gpu.MapReduce[T](s, "x + 1", vrot.Next(), gpu.OpSum, opts...)
					return freeing(err, out)
				}
			}
			return body, reduceBytes(group, shape, axis, size), nil
		},
	})
}
