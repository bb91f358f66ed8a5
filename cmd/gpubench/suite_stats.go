package main

import (
	"github.com/go-gpu/gpu"
)

// The statistics group, over the rows of the float32 matrix (Metal.jl's
// (1000, 512) at S; 16384x16384 at /16k):
//
//   - stats/var: gpu.Var[float32] along axis 1 (numpy.var(x, axis=1));
//   - stats/logsumexp: gpu.LogSumExp[float32] along axis 1;
//   - stats/softmax: gpu.Softmax along axis 1 (a new array);
//   - stats/layernorm: gpu.LayerNorm over the last axis, with a weight and a
//     bias of the row's length (torch.nn.functional.layer_norm), eps 1e-5.
//
// Bytes: the reductions count the input read (the one value per row written
// is negligible); the transforms the input read and the output written.
func registerStats() {
	for _, large := range []bool{false, true} {
		registerStat("var", large, 4, func(s *gpu.Stream, x, w, b *gpu.Array[float32]) error {
			out, err := gpu.Var[float32](s, x, gpu.Axes(1))
			return freeing(err, out)
		})
		registerStat("logsumexp", large, 4, func(s *gpu.Stream, x, w, b *gpu.Array[float32]) error {
			out, err := gpu.LogSumExp[float32](s, x, gpu.Axes(1))
			return freeing(err, out)
		})
		registerStat("softmax", large, 8, func(s *gpu.Stream, x, w, b *gpu.Array[float32]) error {
			out, err := gpu.Softmax(s, x, 1)
			return freeing(err, out)
		})
		registerStat("layernorm", large, 8, func(s *gpu.Stream, x, w, b *gpu.Array[float32]) error {
			out, err := gpu.LayerNorm(s, x, 1, w, b, 1e-5)
			return freeing(err, out)
		})
	}
}

// registerStat registers a statistic of the float32 matrix's rows that moves
// perElem bytes per element.
func registerStat(name string, large bool, perElem int64, call func(s *gpu.Stream, x, w, b *gpu.Array[float32]) error) {
	registerOp(op{
		name: "array/stats/" + name, large: large, bytes: perElem * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			n := int64(elems(shape))
			rot, err := rotation(c.sets(4*n), func() (*gpu.Array[float32], error) { return uniform(c, devMem, shape...) })
			if err != nil {
				return nil, 0, err
			}
			w, err := uniform(c, devMem, shape[1])
			if err != nil {
				return nil, 0, err
			}
			b, err := uniform(c, devMem, shape[1])
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error { return call(s, rot.Next(), w, b) }, perElem * n, nil
		},
	})
}
