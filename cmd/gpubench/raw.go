package main

import (
	"errors"
	"fmt"

	"github.com/go-gpu/gpu/bench"
)

// Raw driver baselines. Each does the work of one of our benchmarks with raw
// CUDA driver calls through package backend/cuda/cu (the build's binding: cgo
// or purego), on a stream of its own in the device's primary context, and is named "raw/" + our name (+ the
// driver call where the name alone would not say it). Ours names it as its
// Baseline and both share an Interleave group, so that the run samples them in
// turn and the table's "vs raw" column is a fair ratio. Off CUDA the raw rows
// are skipped.

// errNoRaw skips a raw baseline on a device that is not a CUDA device.
var errNoRaw = fmt.Errorf("raw driver baselines need the CUDA backend: %w", bench.ErrSkip)

// rawSpec describes a raw baseline for registerRaw.
type rawSpec struct {
	Name       string
	Interleave string
	Bytes      int64
	Iters      int
	// SyncTimer times samples with the host clock and a cuStreamSynchronize
	// of the raw stream at the end of each (the run's Sync does not cover
	// that stream). Without it the body must leave nothing queued.
	SyncTimer bool
	Setup     func(r *raw, env *bench.Env) error
	Body      func(r *raw) error
	Teardown  func(r *raw) error
}

// registerRaw registers a Host-mode raw baseline: Setup opens the raw handle
// (skipping off CUDA) and then runs spec.Setup; Teardown runs spec.Teardown
// and closes the handle.
func registerRaw(spec rawSpec) {
	var r *raw
	b := bench.Benchmark{
		Name:       spec.Name,
		Group:      "raw",
		Mode:       bench.Host,
		Bytes:      spec.Bytes,
		Iters:      spec.Iters,
		Interleave: spec.Interleave,
		Setup: func(env *bench.Env) error {
			rr, err := openRaw(env)
			if err != nil {
				return err
			}
			if spec.Setup != nil {
				if err := spec.Setup(rr, env); err != nil {
					return errors.Join(err, rr.close())
				}
			}
			r = rr
			return nil
		},
		Teardown: func(*bench.Env) error {
			var err error
			if spec.Teardown != nil {
				err = spec.Teardown(r)
			}
			err = errors.Join(err, r.close())
			r = nil
			return err
		},
		Body: func() error { return spec.Body(r) },
	}
	if spec.SyncTimer {
		b.Timer = bench.NewHostTimer(func() error { return r.syncStream() })
	}
	bench.Register(b)
}
