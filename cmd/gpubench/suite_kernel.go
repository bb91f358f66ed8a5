package main

import "github.com/go-gpu/gpu/bench"

// launchBatch is the number of launches per sample of kernel/launch: the
// sample ends with one synchronize of the stream, so that the launch queue
// never fills, and that wait is spread over the batch.
const launchBatch = 1000

// kernel/launch is Metal.jl's: the host cost of launching an empty kernel
// (Stream.Launch of the built-in "empty", one block of one thread), without
// waiting for it. The device's time is meaningless here, so the host clock
// times samples of launchBatch launches and one stream synchronize, and the
// figure is per launch. raw/kernel/launch does the same with a Go loop of
// cuLaunchKernel calls (package cu) on a raw stream; the two are sampled in turn.
func registerKernel() {
	var d *device
	bench.Register(bench.Benchmark{
		Name:       "kernel/launch",
		Mode:       bench.Host, // the run's Sync: the benchmarks' stream
		Iters:      launchBatch,
		Interleave: "kernel/launch",
		Baseline:   "raw/kernel/launch",
		Setup:      func(env *bench.Env) (err error) { d, err = devOf(env); return err },
		Body:       func() error { return d.s.Launch(d.empty, one) },
	})
	registerRaw(rawSpec{
		Name:       "raw/kernel/launch",
		Interleave: "kernel/launch",
		Iters:      launchBatch,
		SyncTimer:  true,
		Body:       func(r *raw) error { return r.launchEmpty() },
	})
}
