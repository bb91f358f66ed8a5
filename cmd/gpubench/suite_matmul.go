package main

import (
	"fmt"
	"strings"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// The matrix products (gpu.MatMul, issue 19), named as the peers' anchors
// (../shared/peers/h200-2026-12-01-extra.md):
//
//   - matmul/<type>/<n>: C = A @ B of n x n matrices for n = 512, 4096, 8192 and
//     type float32 (exact), tf32 (float32 with gpu.PrecisionHigh), bfloat16,
//     float16 and float64, into a preallocated C (gpu.MatMulInto), timed by
//     device events;
//   - matmul/batched/<type>/256x128^3: 256 products of 128 x 128 matrices (one
//     strided batched call), float32 and bfloat16;
//   - matmul/float32/512x1000x512+sync: Metal.jl's 512x1000 float32 fixture
//     times its transpose's shape, a (512, 1000) @ (1000, 512) product
//     allocating its result (as torch.matmul does), plus a synchronize, timed on
//     the host; matmul/float32/512x1000x512, the same product into a preallocated
//     C timed by device events (the device's share of the +sync row);
//   - matmul/generated/...: the same rows through the generated kernel
//     (gpu.MatMulGenerated) instead of cuBLAS, to measure it beside cuBLAS in
//     the same run (on the CPU backend, the generated kernel's Go mirror).
//
// Each row reports TFLOP/s (2mnk per product) and the fraction of the device's
// peak for its arithmetic where the device is known (peakFlops). On the CPU
// backend the 4096 and 8192 rows, and the batched ones, are scaled down by the
// run's side over 16384 (-large), at least 8: 4096 runs at 1024 by default, at
// 64 under the suite's test; the generated rows by another factor of 4 there.
//
// The bfloat16 and float16 rows are in suite_matmul_half.go.

// mmRow is one matrix-product benchmark.
type mmRow struct {
	name           string
	m, n, k, batch int
	scale          bool // sized down on the CPU backend
	prec           gpu.MatMulPrecision
	kernel         gpu.MatMulKernel
	sync           bool   // MatMul (allocating) + synchronize, host-timed
	peak           string // the arithmetic: "fp32", "tf32", "fp16", "fp64"
}

// mmSizes are the square sizes of the matmul/<type>/<n> rows.
var mmSizes = []int{512, 4096, 8192}

func registerMatMul() {
	for _, kernel := range []gpu.MatMulKernel{gpu.MatMulAuto, gpu.MatMulGenerated} {
		prefix := "matmul/"
		if kernel == gpu.MatMulGenerated {
			prefix = "matmul/generated/"
		}
		for _, n := range mmSizes {
			sq := mmRow{m: n, n: n, k: n, batch: 1, scale: n > 512, kernel: kernel}
			r := sq
			r.name, r.peak = fmt.Sprintf("%sfloat32/%d", prefix, n), "fp32"
			registerMatMulRow(r, randFloat[float32])
			r.name, r.peak, r.prec = fmt.Sprintf("%stf32/%d", prefix, n), "tf32", gpu.PrecisionHigh
			registerMatMulRow(r, randFloat[float32])
			r = sq
			r.name, r.peak = fmt.Sprintf("%sfloat64/%d", prefix, n), "fp64"
			registerMatMulRow(r, randFloat[float64])
			registerMatMulHalf(sq, prefix, n)
		}
		b := mmRow{m: 128, n: 128, k: 128, batch: 256, scale: true, kernel: kernel, peak: "fp32"}
		b.name = prefix + "batched/float32/256x128^3"
		registerMatMulRow(b, randFloat[float32])
		registerMatMulBatchedHalf(b, prefix)
		registerMatMulRow(mmRow{name: prefix + "float32/512x1000x512+sync", m: 512, n: 512, k: 1000, batch: 1,
			kernel: kernel, sync: true, peak: "fp32"}, randFloat[float32])
		if kernel == gpu.MatMulAuto {
			// The same product into a preallocated C, by device events: the device's
			// time of the +sync row, the rest of which is the host's.
			registerMatMulRow(mmRow{name: prefix + "float32/512x1000x512", m: 512, n: 512, k: 1000, batch: 1,
				kernel: kernel, peak: "fp32"}, randFloat[float32])
		}
	}
}

// randFloat returns a new array of uniform numbers in [0, 1), drawn in float32 and
// rounded to T, as peers.py draws the peers' inputs (torch.rand(...).to(dtype),
// cupy.random.random(..., float32).astype(dtype)), so that both multiply the same kind
// of numbers: the tensor cores' power, and so the H200's clock under its power limit,
// depends on how many mantissa bits toggle.
func randFloat[T gpu.Float](s *gpu.Stream, g *gpu.Generator, shape ...int) (*gpu.Array[T], error) {
	a, err := gpu.Empty[float32](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := gpu.RandInto(s, g, a); err != nil {
		a.Free()
		return nil, err
	}
	if t, ok := any(a).(*gpu.Array[T]); ok {
		return t, nil
	}
	defer a.Free()
	return gpu.Astype[T](s, a)
}

// size returns a dimension on this device: v, or on the CPU backend v scaled by
// side/16384 (at least 8) when the row scales, and every generated row's by a further
// quarter (the generated kernel's CPU implementation is a plain loop nest that
// mirrors the GPU's accumulation, not a fast product).
func (r mmRow) size(d *device, side, v int) int {
	if d.backend != "cpu" {
		return v
	}
	if r.scale {
		v = v * side / bench.LargeSide
	}
	if r.kernel == gpu.MatMulGenerated {
		v /= 4
	}
	return max(8, v)
}

func registerMatMulRow[T gpu.Elem](r mmRow, random func(*gpu.Stream, *gpu.Generator, ...int) (*gpu.Array[T], error)) {
	var k keep
	var body func() error
	flops := 2 * int64(r.m) * int64(r.n) * int64(r.k) * int64(r.batch)
	b := bench.Benchmark{
		Name:  r.name,
		Mode:  bench.GPU,
		Flops: flops,
		Setup: func(env *bench.Env) error {
			d, err := devOf(env)
			if err != nil {
				return err
			}
			m, n, kk := r.size(d, env.Side(), r.m), r.size(d, env.Side(), r.n), r.size(d, env.Side(), r.k)
			env.Flops = 2 * int64(m) * int64(n) * int64(kk) * int64(r.batch)
			env.PeakFlops = peakFlops(d.dev.Info(), r.peak)
			s := d.s
			g := gpu.NewGenerator(benchSeed)
			shape := func(rows, cols int) []int {
				if r.batch > 1 {
					return []int{r.batch, rows, cols}
				}
				return []int{rows, cols}
			}
			mk := func(rows, cols int, rand bool) (*gpu.Array[T], error) {
				var a *gpu.Array[T]
				var err error
				if rand {
					a, err = random(s, g, shape(rows, cols)...)
				} else {
					a, err = gpu.Empty[T](s, shape(rows, cols)...)
				}
				if err != nil {
					return nil, err
				}
				k.add(a.Free)
				return a, nil
			}
			a, err := mk(m, kk, true)
			if err != nil {
				return err
			}
			bm, err := mk(kk, n, true)
			if err != nil {
				return err
			}
			opts := []gpu.MatMulOption{gpu.WithKernel(r.kernel), gpu.WithPrecision(r.prec)}
			if r.sync {
				body = func() error {
					c, err := gpu.MatMul(s, a, bm, opts...)
					if err != nil {
						return err
					}
					return freeing(s.Synchronize(bg), c)
				}
				return nil
			}
			c, err := mk(m, n, false)
			if err != nil {
				return err
			}
			body = func() error { return gpu.MatMulInto(s, c, a, bm, opts...) }
			return nil
		},
		Teardown: func(*bench.Env) error {
			body = nil
			return k.free()
		},
		Body: func() error { return body() },
	}
	if r.sync {
		b.Mode, b.Iters = bench.Host, 1
	}
	bench.Register(b)
}

// peakFlops returns the device's dense peak in FLOP/s for the arithmetic (fp32:
// FMA units; tf32, fp16 (and bfloat16), fp64: tensor cores), or 0 when the device is
// not in the table. H100 SXM and H200 (NVIDIA's datasheets, dense figures): FP64
// tensor 67 TFLOP/s, FP32 67, TF32 494.7, FP16/BF16 989.4. The FMA kernels of the
// generated float64 product cannot use the FP64 tensor cores: their own ceiling is
// the 34 TFLOP/s of the FP64 units.
func peakFlops(info gpu.DeviceInfo, arith string) float64 {
	name := info.Name
	if !strings.Contains(name, "H200") && !strings.Contains(name, "H100 80GB HBM3") && !strings.Contains(name, "H100 SXM") {
		return 0
	}
	switch arith {
	case "fp32", "fp64":
		return 66.9e12
	case "tf32":
		return 494.7e12
	case "fp16":
		return 989.4e12
	}
	return 0
}
