package main

import (
	"github.com/go-gpu/gpu"
)

// The half-precision group: the float32 bandwidth rows in bfloat16 and float16, at
// 2^28 elements (/16k; side^2 on the CPU backend), inputs uniform in [0, 1) drawn in
// the type (gpu.Rand), so every operation moves half the bytes of its float32 row:
//
//   - copy/<T>: a new array and gpu.Copy into it (the driver's copy), as array/copy;
//   - broadcast/<T>: gpu.EvalInto(mat, "v") with v a T 0, as array/broadcast;
//   - axpb/<t>: gpu.Eval[T]("a*x + b") with a, b weak float64 scalars, a new array
//     (one fused kernel: float32 arithmetic, one rounding to T), also for float32
//     (the peers' anchor axpb/bfloat16/2^28: PyTorch's 2.5*x + 1.25);
//   - reductions/reduce/<T>/{1d,dims=1,dims=2}: gpu.Sum[T] over every element, the
//     last axis and the first axis of the (side, side) matrix (float32 accumulators,
//     the result rounded to T), as the Float32 rows;
//   - accumulate/<T>/{1d,dims=1}: gpu.CumSum[T] (float32 accumulators, each element
//     rounded to T);
//   - random/rand/<T>, random/randn/<T>: gpu.Rand[T], gpu.RandN[T], a new vector.
//
// Bytes: read and written, as the float32 rows count them.
func registerHalf() {
	registerHalfRows[gpu.BFloat16]("BFloat16", "bfloat16")
	registerHalfRows[gpu.Float16]("Float16", "float16")
	registerAxpb[float32]("float32")
}

func registerHalfRows[T gpu.HalfFloat](julia, numpy string) {
	size := sizeOf[T]()
	n := nominalElems(true)
	registerOp(op{
		name: "array/copy/" + julia, large: true, bytes: 2 * size * n,
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			rot, err := rotation(c.sets(size*int64(elems(shape))), func() (*gpu.Array[T], error) { return halfUniform[T](c, shape...) })
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				out, err := gpu.Empty[T](s, shape...)
				if err != nil {
					return err
				}
				return freeing(gpu.Copy(s, out, rot.Next()), out)
			}, 2 * size * int64(elems(shape)), nil
		},
	})
	registerOp(op{
		name: "array/broadcast/" + julia, large: true, bytes: size * n,
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			var zero T
			vars := gpu.Vars{"v": zero}
			rot, err := rotation(c.sets(size*int64(elems(shape))), func() (*gpu.Array[T], error) { return halfUniform[T](c, shape...) })
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error { return gpu.EvalInto(s, rot.Next(), "v", vars) }, size * int64(elems(shape)), nil
		},
	})
	registerAxpb[T](numpy)
	for _, dims := range []string{"1d", "dims=1", "dims=2"} {
		registerOp(op{
			name: "array/reductions/reduce/" + julia + "/" + dims, large: true,
			bytes: reduceBytes("reductions/reduce", []int{bench16k, bench16k}, reduceAxis(dims), size),
			setup: func(c *setupCtx) (func() error, int64, error) {
				shape, axis := reduceShape(dims, c.side)
				rot, err := rotation(c.sets(size*int64(elems(shape))), func() (*gpu.Array[T], error) { return halfUniform[T](c, shape...) })
				if err != nil {
					return nil, 0, err
				}
				var opts []gpu.ReduceOption
				if axis >= 0 {
					opts = append(opts, gpu.Axes(axis))
				}
				s := c.s()
				return func() error {
					out, err := gpu.Sum[T](s, rot.Next(), opts...)
					return freeing(err, out)
				}, reduceBytes("reductions/reduce", shape, axis, size), nil
			},
		})
	}
	for _, dims := range []string{"1d", "dims=1"} {
		registerOp(op{
			name: "array/accumulate/" + julia + "/" + dims, large: true, bytes: 2 * size * n,
			setup: func(c *setupCtx) (func() error, int64, error) {
				shape, axis := reduceShape(dims, c.side)
				rot, err := rotation(c.sets(size*int64(elems(shape))), func() (*gpu.Array[T], error) { return halfUniform[T](c, shape...) })
				if err != nil {
					return nil, 0, err
				}
				s := c.s()
				return func() error {
					out, err := gpu.CumSum[T](s, rot.Next(), max(axis, 0))
					return freeing(err, out)
				}, reduceBytes("accumulate", shape, axis, size), nil
			},
		})
	}
	registerRand("rand/"+julia, true, size, func(s *gpu.Stream, g *gpu.Generator, n int) error {
		a, err := gpu.Rand[T](s, g, n)
		return freeing(err, a)
	})
	registerRand("randn/"+julia, true, size, func(s *gpu.Stream, g *gpu.Generator, n int) error {
		a, err := gpu.RandN[T](s, g, n)
		return freeing(err, a)
	})
}

// bench16k is the nominal side of the /16k rows.
const bench16k = 16384

// reduceAxis returns the reduced axis of a dims variant (-1: every element).
func reduceAxis(dims string) int {
	_, axis := reduceShape(dims, bench16k)
	return axis
}

// registerAxpb registers array/axpb/<t>: y = a*x + b into a new array.
func registerAxpb[T gpu.Float](numpy string) {
	size := sizeOf[T]()
	registerOp(op{
		name: "array/axpb/" + numpy, large: true, bytes: 2 * size * nominalElems(true),
		setup: func(c *setupCtx) (func() error, int64, error) {
			n := elems(c.matShape())
			rot, err := rotation(c.sets(size*int64(n)), func() (*gpu.Array[T], error) { return halfUniform[T](c, n) })
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			k := gpu.NewKernel[T]("a*x + b", "a", "x", "b")
			return func() error {
				out, err := k.Eval(s, 2.5, rot.Next(), 1.25)
				return freeing(err, out)
			}, 2 * size * int64(n), nil
		},
	})
}

// halfUniform returns a new array of T uniform in [0, 1) (float32, float64 or a half
// type) on the benchmarks' stream; c's Teardown frees it.
func halfUniform[T gpu.Float](c *setupCtx, shape ...int) (*gpu.Array[T], error) {
	a, err := newArr[T](c, devMem, shape...)
	if err != nil {
		return nil, err
	}
	return a, gpu.RandInto(c.s(), c.g, a)
}
