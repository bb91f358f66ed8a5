package main

import (
	"math"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
	"github.com/go-gpu/gpu/examples/columns/groupby"
	"github.com/go-gpu/gpu/examples/image/filter"
	"github.com/go-gpu/gpu/examples/kmeans/cluster"
	"github.com/go-gpu/gpu/examples/options/montecarlo"
	"github.com/go-gpu/gpu/examples/transformer/decoder"
)

// The workloads: the examples' work (examples/, issue 24) at their full sizes, by the
// same code (the examples' packages), one call plus a synchronize per sample (Host
// mode), as peers/peers.py times the same work in PyTorch and CuPy:
//
//   - workload/kmeans/1e7x16/k64/20it: cluster.Fit of 10^7 Gaussian-blob points of 16
//     float32 dimensions into 64 clusters, 20 iterations (random initial centroids,
//     21 assignments, 20 updates, the counts and inertia read back). TFLOP/s of the
//     distance products (2nkd per assignment).
//   - workload/transformer/bf16/16x1024/d768: decoder.Weights.Forward of GPT-2 small's
//     block (d 768, 12 heads, MLP 3072, vocabulary 50257) on 16 random sequences of 1024
//     tokens, bfloat16. TFLOP/s of its matrix products (decoder.Config.Flops).
//   - workload/options/european/1e8 and asian/1e8x64: montecarlo.European of 10^8
//     paths, montecarlo.Asian of 10^8 paths of 64 dates, 2^24 normals per batch.
//   - workload/columns/1e8/1000keys: groupby.Query (qty > 50, 1000 keys) on a device
//     table of 10^8 rows (groupby.RandomTable), the result read back.
//   - workload/image/8192x8192/sigma3: filter.Pipeline of filter.TestCard's 3 planes of
//     8192x8192 float32: Gaussian blur (sigma 3), luminance, Sobel.
//
// On the CPU backend every size is scaled by (side/16384)^2/64 (-large; 1/1024 by
// default, the transformer's widths and sequence by side/16384): the CPU rows
// exercise the code in a few seconds, the GPU rows are the figures.
func registerWorkloads() {
	registerWorkload("workload/kmeans/1e7x16/k64/20it", func(c *setupCtx) (func() error, error) {
		const d, k, iters = 16, 64, 20
		n := c.scaled(10_000_000, 1000)
		x, err := cluster.Blobs(c.s(), c.g, n, d, k, 20, 1)
		if err != nil {
			return nil, err
		}
		c.k.add(x.Free)
		c.env.Flops = int64(iters+1) * 2 * int64(n) * d * k
		s, g := c.s(), c.g
		return func() error {
			res, err := cluster.Fit(bg, s, g, x, k, iters)
			if err != nil {
				return err
			}
			return res.Free()
		}, nil
	})
	registerWorkload("workload/transformer/bf16/16x1024/d768", func(c *setupCtx) (func() error, error) {
		cfg, batch, seq := decoder.Small, 16, 1024
		if c.d.backend == "cpu" {
			// One sequence, and the widths scaled by side/16384 (whole heads of 16).
			f := float64(c.side) / bench.LargeSide
			batch, seq = 1, max(16, int(1024*f))
			cfg.Heads = max(1, int(12*f))
			cfg.D, cfg.Hidden = 64*cfg.Heads, 256*cfg.Heads
			cfg.MaxSeq = seq
		}
		w, err := decoder.NewWeights(c.s(), c.g, cfg)
		if err != nil {
			return nil, err
		}
		c.k.add(w.Free)
		tokens, err := gpu.RandInt[int32](c.s(), c.g, 0, int64(cfg.Vocab), batch, seq)
		if err != nil {
			return nil, err
		}
		c.k.add(tokens.Free)
		c.env.Flops = cfg.Flops(batch, seq)
		s := c.s()
		return func() error {
			out, err := w.Forward(s, tokens)
			return freeing(err, out)
		}, nil
	})
	registerWorkload("workload/options/european/1e8", func(c *setupCtx) (func() error, error) {
		paths := c.scaled(100_000_000, 10_000)
		s, g := c.s(), c.g
		return func() error {
			_, err := montecarlo.European(bg, s, g, montecarlo.Example, paths, 1<<24)
			return err
		}, nil
	})
	registerWorkload("workload/options/asian/1e8x64", func(c *setupCtx) (func() error, error) {
		const steps = 64
		paths := c.scaled(100_000_000, 2000) // at least 2000 x 64 normals
		s, g := c.s(), c.g
		return func() error {
			_, err := montecarlo.Asian(bg, s, g, montecarlo.Example, paths, steps, (1<<24)/steps)
			return err
		}, nil
	})
	registerWorkload("workload/columns/1e8/1000keys", func(c *setupCtx) (func() error, error) {
		const groups, minQty = 1000, 50
		t, err := groupby.RandomTable(c.s(), c.g, c.scaled(100_000_000, 10_000), groups)
		if err != nil {
			return nil, err
		}
		c.k.add(t.Free)
		s := c.s()
		return func() error {
			_, err := groupby.Query(bg, s, t, groups, minQty)
			return err
		}, nil
	})
	registerWorkload("workload/image/8192x8192/sigma3", func(c *setupCtx) (func() error, error) {
		side := max(64, int(math.Sqrt(float64(c.scaled(8192*8192, 1)))))
		planes, err := filter.TestCard(c.s(), side, side)
		if err != nil {
			return nil, err
		}
		c.k.add(planes.Free)
		s := c.s()
		return func() error {
			blurred, edges, err := filter.Pipeline(s, planes, 3)
			return freeing(err, blurred, edges)
		}, nil
	})
}

// registerWorkload registers a workload row: Host mode, one call per sample (the call
// and a synchronize), the inputs made in setup with the row's generator.
func registerWorkload(name string, setup func(c *setupCtx) (func() error, error)) {
	registerOp(op{name: name, setup: func(c *setupCtx) (func() error, int64, error) {
		body, err := setup(c)
		return body, 0, err
	}})
}

// scaled returns n on a GPU, and on the CPU backend n scaled by (side/16384)^2/64, at
// least lo.
func (c *setupCtx) scaled(n, lo int) int {
	if c.d.backend != "cpu" {
		return n
	}
	f := float64(c.side) / bench.LargeSide
	return max(lo, int(float64(n)*f*f/64))
}
