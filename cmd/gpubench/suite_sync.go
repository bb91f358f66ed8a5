package main

import (
	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// The synchronization benchmarks: Metal.jl's metal/synchronization/stream and
// /context (synchronize an idle device, host clock), here sync/stream
// (Stream.Synchronize of the benchmarks' stream) and sync/context
// (Device.Synchronize), each with the default policy (WaitAuto: query, spin,
// then park), /blocking (WaitBlock: the blocking driver call) and /spinning
// (WaitSpin: query in a loop).
//
// On an idle device the runtime answers from its own bookkeeping without a
// driver call, so the sync/.../after_kernel/... variants launch the empty
// kernel first and then synchronize: the figure of a real, short wait.
//
// Raw baselines, interleaved with ours: cuStreamSynchronize of an idle raw
// stream (and cuStreamQuery, the spinning wait's one query), cuCtxSynchronize;
// after the empty kernel, cuLaunchKernel + cuStreamSynchronize (or a
// cuStreamQuery loop) and cuLaunchKernel + cuCtxSynchronize.

// policies are the wait policies of the sync benchmarks: the name's suffix and
// the policy.
var policies = []struct {
	suffix string
	p      gpu.WaitPolicy
}{
	{"", gpu.WaitPolicy{Mode: gpu.WaitAuto}},
	{"/blocking", gpu.WaitPolicy{Mode: gpu.WaitBlock}},
	{"/spinning", gpu.WaitPolicy{Mode: gpu.WaitSpin}},
}

func registerSync() {
	for _, after := range []bool{false, true} {
		variant := ""
		if after {
			variant = "/after_kernel"
		}
		// Stream.Synchronize.
		group := "sync/stream" + variant
		rawSync := "raw/" + group + "/cuStreamSynchronize"
		rawQuery := "raw/" + group + "/cuStreamQuery"
		for _, pol := range policies {
			var d *device
			base := rawSync
			if pol.p.Mode == gpu.WaitSpin {
				base = rawQuery
			}
			bench.Register(bench.Benchmark{
				Name:       group + pol.suffix,
				Mode:       bench.Host,
				Interleave: group,
				Baseline:   base,
				Setup:      func(env *bench.Env) (err error) { d, err = devOf(env); return err },
				Body: func() error {
					if after {
						if err := d.s.Launch(d.empty, one); err != nil {
							return err
						}
					}
					return d.s.Synchronize(bg, pol.p)
				},
			})
		}
		registerRaw(rawSpec{
			Name:       rawSync,
			Interleave: group,
			Body: func(r *raw) error {
				if after {
					if err := r.launchEmpty(); err != nil {
						return err
					}
				}
				return r.syncStream()
			},
		})
		registerRaw(rawSpec{
			Name:       rawQuery,
			Interleave: group,
			Body: func(r *raw) error {
				if after {
					if err := r.launchEmpty(); err != nil {
						return err
					}
				}
				for {
					if done, err := r.queryStream(); done || err != nil {
						return err
					}
				}
			},
		})

		// Device.Synchronize.
		group = "sync/context" + variant
		rawCtx := "raw/" + group + "/cuCtxSynchronize"
		for _, pol := range policies {
			var d *device
			bench.Register(bench.Benchmark{
				Name:       group + pol.suffix,
				Mode:       bench.Host,
				Interleave: group,
				Baseline:   rawCtx,
				Setup:      func(env *bench.Env) (err error) { d, err = devOf(env); return err },
				Body: func() error {
					if after {
						if err := d.s.Launch(d.empty, one); err != nil {
							return err
						}
					}
					return d.dev.Synchronize(bg, pol.p)
				},
			})
		}
		registerRaw(rawSpec{
			Name:       rawCtx,
			Interleave: group,
			Body: func(r *raw) error {
				if after {
					if err := r.launchEmpty(); err != nil {
						return err
					}
				}
				return r.syncContext()
			},
		})
	}
}
