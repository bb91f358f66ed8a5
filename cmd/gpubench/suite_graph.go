package main

import (
	"errors"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// Graphs and host functions (issue #22), each timed on the host around the call and
// its synchronize:
//
//   - graph/launch/10ops/512x1000: a graph of ten elementwise operations on 512x1000
//     float32 arrays, launched and synchronized; graph/eager/10ops/512x1000 the same
//     ten issued one by one and synchronized, sampled in turn with them. The graph's
//     baseline is the raw empty-kernel launch plus cuStreamSynchronize
//     (raw/graph/launch/10ops/512x1000, which does not do the ten operations: it is
//     the floor one launch can reach, which the graph should approach, at most 1.5x).
//     suite_graph_raw.go adds the same ten kernels captured into a graph through the
//     driver alone (raw/graph/launch/10ops/512x1000/cuGraphLaunch: what is possible),
//     a graph of ten empty kernels, and the ten launched raw one by one (the eager
//     row's baseline, raw/graph/eager/10ops/512x1000).
//   - hostfunc/round_trip: Stream.HostFunc of a function that does nothing, the empty
//     kernel after it, and a synchronize; its baseline (cgo builds) is cuLaunchHostFunc
//     with a callback into Go through cgo, the empty kernel and cuStreamSynchronize
//     (raw/hostfunc/round_trip/cuLaunchHostFunc).

// graphOps are the ten operations: y = f(x) or x = f(y), one operation each, which
// the peers (peers/peers.py) run as one kernel each too; values stay bounded.
var graphOps = []struct {
	toY bool
	src string
}{
	{true, "x*0.5"}, {false, "y*y"}, {true, "sqrt(x)"}, {false, "y - 0.5"}, {true, "x*x"},
	{false, "sin(y)"}, {true, "x + 1.5"}, {false, "y*0.75"}, {true, "abs(x)"}, {false, "y - 0.2"},
}

// tenOps enqueues graphOps on s.
func tenOps(s *gpu.Stream, x, y *gpu.Array[float32]) error {
	for _, op := range graphOps {
		var err error
		if op.toY {
			err = gpu.EvalInto(s, y, op.src, gpu.Vars{"x": x})
		} else {
			err = gpu.EvalInto(s, x, op.src, gpu.Vars{"y": y})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func registerGraphs() {
	const group = "graph/launch"
	const rawName = "raw/graph/launch/10ops/512x1000" // the empty kernel, not the ten operations
	const eagerRaw = "raw/graph/eager/10ops/512x1000"
	// Two float32 arrays of 512x1000: each operation reads one and writes the other.
	const bytes = 10 * 2 * 512 * 1000 * 4
	var d *device
	var x, y *gpu.Array[float32]
	var g *gpu.Graph
	setup := func(env *bench.Env) error {
		var err error
		if d, err = devOf(env); err != nil {
			return err
		}
		if x == nil {
			if x, err = gpu.Full[float32](d.s, 0.5, 512, 1000); err != nil {
				return err
			}
			if y, err = gpu.Zeros[float32](d.s, 512, 1000); err != nil {
				return err
			}
			if err := tenOps(d.s, x, y); err != nil { // compile the kernels
				return err
			}
		}
		if g == nil {
			if g, err = d.s.Capture(func() error { return tenOps(d.s, x, y) }); err != nil {
				return err
			}
		}
		return nil
	}
	teardown := func(*bench.Env) error {
		var err error
		if g != nil {
			err = g.Close()
			g = nil
		}
		if x != nil {
			err = errors.Join(err, x.Free(), y.Free())
			x, y = nil, nil
		}
		return err
	}
	bench.Register(bench.Benchmark{
		Name: "graph/launch/10ops/512x1000", Mode: bench.Host, Bytes: bytes,
		Interleave: group, Baseline: rawName,
		Setup: setup, Teardown: teardown,
		Body: func() error { return errors.Join(g.Launch(d.s), d.s.Synchronize(bg)) },
	})
	bench.Register(bench.Benchmark{
		Name: "graph/eager/10ops/512x1000", Mode: bench.Host, Bytes: bytes,
		Interleave: group, Baseline: eagerRaw, // (compare with graph/launch and its raw rows)
		Setup: setup, Teardown: teardown,
		Body: func() error { return errors.Join(tenOps(d.s, x, y), d.s.Synchronize(bg)) },
	})
	registerRaw(rawSpec{
		Name:       rawName,
		Interleave: group,
		Body:       func(r *raw) error { return errors.Join(r.launchEmpty(), r.syncStream()) },
	})
	registerRawGraphs(group, eagerRaw) // the same ten kernels through the driver (suite_graph_raw.go)

	const hgroup = "hostfunc/round_trip"
	const hraw = "raw/hostfunc/round_trip/cuLaunchHostFunc"
	var hd *device
	nop := func() error { return nil }
	bench.Register(bench.Benchmark{
		Name: hgroup, Mode: bench.Host, Interleave: hgroup, Baseline: hraw,
		Setup: func(env *bench.Env) (err error) { hd, err = devOf(env); return err },
		Body: func() error {
			return errors.Join(hd.s.HostFunc(nop), hd.s.Launch(hd.empty, one), hd.s.Synchronize(bg))
		},
	})
	registerRaw(rawSpec{
		Name:       hraw,
		Interleave: hgroup,
		Setup:      func(*raw, *bench.Env) error { return rawHostFuncAvailable() },
		Body: func(r *raw) error {
			return errors.Join(r.launchHostFuncGo(), r.launchEmpty(), r.syncStream())
		},
	})
}
