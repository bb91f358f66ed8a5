package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Raw driver baselines of the graph rows (issue #22), what the same work costs with
// nothing of ours around the driver calls. The ten kernels are ours, exactly: each of
// graphOps parsed and compiled as Eval compiles a contiguous, 16-byte aligned float32
// operation (internal/kernel's Elementwise with Vector set, the same Key, so the same
// PTX and entry names, ew_53ac3fa4b2e7ffcf ... as the H200 profile of graph/launch
// shows), launched with the geometry Eval gives them (Elementwise.Geometry: 500 blocks
// of 256 threads, one 16-byte vector a thread, for 512x1000 on 132 SMs) and the same
// arguments (out, n, in), over two cuMemAlloc arrays of 512000 float32 on the raw
// stream:
//
//   - raw/graph/launch/10ops/512x1000/cuGraphLaunch: the ten captured into a CUDA
//     graph through the driver (cuStreamBeginCapture_v2, relaxed mode;
//     cuStreamEndCapture; cuGraphInstantiateWithFlags), then cuGraphLaunch and
//     cuStreamSynchronize: the floor of graph/launch/10ops/512x1000 (no tracking, no
//     events). Ours over it is what our Graph.Launch and Stream.Synchronize add.
//   - raw/graph/launch/10ops/512x1000/cuGraphLaunch/block128: the same graph with 1000
//     blocks of 128 threads (the same one vector a thread, twice the blocks spread
//     over the SMs): whether Eval's geometry is the better one at this size.
//   - raw/graph/launch/10ops/512x1000/cuGraphLaunch/pdl: the same graph with
//     programmatic dependent launch (compute capability 9.0+, skipped below): each
//     kernel's PTX begins with griddepcontrol.launch_dependents and
//     griddepcontrol.wait, and each is launched with cuLaunchKernelEx and
//     CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, so that the next kernel's
//     blocks are scheduled while the one before runs and start the moment it
//     completes: how much of a ten-kernel graph is launch latency between kernels,
//     that our kernels could take back.
//   - raw/graph/launch/10empty/cuGraphLaunch: a graph of ten empty kernels (one
//     thread each) launched and synchronized: the floor of any ten-kernel graph; the
//     ten-operation graph over it is the kernels' own time.
//   - raw/graph/eager/10ops/512x1000: the ten launched one by one (cuLaunchKernel) and
//     cuStreamSynchronize: the baseline of graph/eager/10ops/512x1000.
//
// raw/graph/launch/10ops/512x1000 (suite_graph.go) stays the yardstick: one
// empty kernel launched and synchronized.

// rawGraphN is the elements of each array: 512x1000.
const rawGraphN = 512 * 1000

// rawTenOps is the raw baselines' state: the ten kernels and their memory, and the
// graph captured of them (or of ten empty kernels).
type rawTenOps struct {
	mods  []cu.Module
	fns   [10]cu.Function
	cfg   [10][2]uint32 // grid, block
	x, y  uint64
	pdl   bool // programmatic dependent launch
	graph cu.Graph
	exec  cu.GraphExec
}

// rawEWSpec returns the elementwise kernel of graph operation op over float32 arrays,
// as Eval compiles it (elementwise.go: planKernel's spec for contiguous, aligned
// operands of one shape).
func rawEWSpec(toY bool, src string) (*kernel.Elementwise, error) {
	name := "y"
	if toY {
		name = "x"
	}
	e, err := expr.Parse(src, expr.Env{name: expr.OperandDecl(0, dtype.Float32)})
	if err != nil {
		return nil, err
	}
	if e.DType() != dtype.Float32 {
		e = e.Convert(dtype.Float32)
	}
	return &kernel.Elementwise{Expr: e, Out: kernel.Operand{DType: dtype.Float32, Kind: kernel.Contig},
		Ins: []kernel.Operand{{DType: dtype.Float32, Kind: kernel.Contig}}, Vector: true}, nil
}

// setup loads the ten kernels and allocates x (0.5 everywhere) and y (zeros); block
// 0 keeps Geometry's launch, another block size spreads the same threads over more or
// fewer blocks.
func (k *rawTenOps) setup(r *raw, env *bench.Env, block uint32, pdl bool) (err error) {
	d, err := devOf(env)
	if err != nil {
		return err
	}
	info := d.dev.Info()
	if pdl && info.ComputeMajor < 9 {
		return fmt.Errorf("programmatic dependent launch needs compute capability 9.0, %s has %d.%d: %w",
			info.Name, info.ComputeMajor, info.ComputeMinor, bench.ErrSkip)
	}
	k.pdl = pdl
	defer func() {
		if err != nil {
			err = errors.Join(err, k.free(r))
		}
	}()
	loaded := map[string]cu.Function{}
	for i, op := range graphOps {
		sp, err := rawEWSpec(op.toY, op.src)
		if err != nil {
			return err
		}
		grid, blk := sp.Geometry(rawGraphN, info.Multiprocessors)
		if block != 0 {
			grid, blk = (grid*blk+int(block)-1)/int(block), int(block)
		}
		k.cfg[i] = [2]uint32{uint32(grid), uint32(blk)}
		if f, ok := loaded[sp.Key()]; ok {
			k.fns[i] = f
			continue
		}
		src, entry, err := sp.PTX(info.ComputeMajor, info.ComputeMinor)
		if err != nil {
			return err
		}
		if pdl {
			if src, err = withGridDepControl(src); err != nil {
				return err
			}
		}
		m, err := r.ctx.ModuleLoadData(append([]byte(src), 0))
		if err != nil {
			return fmt.Errorf("loading %s (%s): %w", entry, op.src, err)
		}
		k.mods = append(k.mods, m)
		if k.fns[i], err = r.ctx.ModuleGetFunction(m, entry); err != nil {
			return err
		}
		loaded[sp.Key()] = k.fns[i]
	}
	if k.x, err = r.memAlloc(4 * rawGraphN); err != nil {
		return err
	}
	if k.y, err = r.memAlloc(4 * rawGraphN); err != nil {
		return err
	}
	if err := r.ctx.MemsetAsync(cu.DevicePtr(k.x), math.Float32bits(0.5), 4, rawGraphN, r.s); err != nil {
		return err
	}
	if err := r.ctx.MemsetAsync(cu.DevicePtr(k.y), 0, 4, rawGraphN, r.s); err != nil {
		return err
	}
	return r.syncStream()
}

// launchOps enqueues the ten kernels on the raw stream (cuLaunchKernel each, the
// arguments out, n, in).
func (k *rawTenOps) launchOps(r *raw) error {
	var blob [24]byte
	offs := []int32{0, 8, 16}
	binary.LittleEndian.PutUint64(blob[8:], rawGraphN)
	for i, op := range graphOps {
		out, in := k.x, k.y
		if op.toY {
			out, in = k.y, k.x
		}
		binary.LittleEndian.PutUint64(blob[0:], out)
		binary.LittleEndian.PutUint64(blob[16:], in)
		c := k.cfg[i]
		var err error
		if k.pdl {
			err = r.ctx.LaunchKernelEx(k.fns[i], [3]uint32{c[0], 1, 1}, [3]uint32{c[1], 1, 1}, 0, r.s, blob[:], offs, pdlAttrs[:])
		} else {
			err = r.ctx.LaunchKernel(k.fns[i], [3]uint32{c[0], 1, 1}, [3]uint32{c[1], 1, 1}, 0, r.s, blob[:], offs)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// pdlAttrs are the launch attributes of a programmatic dependent launch.
var pdlAttrs = [1]cu.LaunchAttribute{{ID: cu.LaunchAttributeProgrammaticStreamSerialization, Value: [8]uint64{1}}}

// withGridDepControl returns the PTX module src (one entry) with the entry's body
// starting with griddepcontrol.launch_dependents (the next kernel may be scheduled
// once every block got here) and griddepcontrol.wait (this kernel reads nothing until
// the one before it has completed and its writes are visible): PTX ISA 7.8, sm_90.
func withGridDepControl(src string) (string, error) {
	i := strings.Index(src, ".entry ")
	if i < 0 {
		return "", fmt.Errorf("no entry in the kernel's PTX")
	}
	j := strings.Index(src[i:], "\n{\n")
	if j < 0 {
		return "", fmt.Errorf("no body in the kernel's PTX")
	}
	at := i + j + len("\n{\n")
	return src[:at] + "\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n" + src[at:], nil
}

// launchEmpties enqueues ten empty kernels on the raw stream.
func launchEmpties(r *raw) error {
	for range 10 {
		if err := r.launchEmpty(); err != nil {
			return err
		}
	}
	return nil
}

// capture captures what enqueue puts on the raw stream into a graph and instantiates it.
func (k *rawTenOps) capture(r *raw, enqueue func(*raw) error) error {
	if err := r.ctx.StreamBeginCapture(r.s, cu.StreamCaptureModeRelaxed); err != nil {
		return err
	}
	err := enqueue(r)
	g, eerr := r.ctx.StreamEndCapture(r.s)
	if err = errors.Join(err, eerr); err != nil {
		if g != 0 {
			err = errors.Join(err, r.ctx.GraphDestroy(g))
		}
		return err
	}
	k.graph = g
	k.exec, err = r.ctx.GraphInstantiate(g, 0)
	return err
}

// launchGraph is cuGraphLaunch of the graph on the raw stream.
func (k *rawTenOps) launchGraph(r *raw) error { return r.ctx.GraphLaunch(k.exec, r.s) }

// free releases what setup and capture made, after the raw stream's work.
func (k *rawTenOps) free(r *raw) error {
	err := r.syncStream()
	if k.exec != 0 {
		err = errors.Join(err, r.ctx.GraphExecDestroy(k.exec))
	}
	if k.graph != 0 {
		err = errors.Join(err, r.ctx.GraphDestroy(k.graph))
	}
	for _, p := range []uint64{k.x, k.y} {
		if p != 0 {
			err = errors.Join(err, r.memFree(p))
		}
	}
	for _, m := range k.mods {
		err = errors.Join(err, r.ctx.ModuleUnload(m))
	}
	*k = rawTenOps{}
	return err
}

// registerRawGraphs registers the raw graph baselines (see above) in the interleave
// group of graph/launch and graph/eager.
func registerRawGraphs(group, eagerRaw string) {
	const bytes = 10 * 2 * rawGraphN * 4
	ops := func(name string, block uint32, pdl bool) {
		var k rawTenOps
		registerRaw(rawSpec{
			Name: name, Interleave: group, Bytes: bytes,
			Setup: func(r *raw, env *bench.Env) error {
				if err := k.setup(r, env, block, pdl); err != nil {
					return err
				}
				return k.capture(r, k.launchOps)
			},
			Teardown: func(r *raw) error { return k.free(r) },
			Body:     func(r *raw) error { return errors.Join(k.launchGraph(r), r.syncStream()) },
		})
	}
	ops("raw/graph/launch/10ops/512x1000/cuGraphLaunch", 0, false)
	ops("raw/graph/launch/10ops/512x1000/cuGraphLaunch/block128", 128, false)
	ops("raw/graph/launch/10ops/512x1000/cuGraphLaunch/pdl", 0, true)
	var e rawTenOps
	registerRaw(rawSpec{
		Name: "raw/graph/launch/10empty/cuGraphLaunch", Interleave: group,
		Setup:    func(r *raw, _ *bench.Env) error { return e.capture(r, launchEmpties) },
		Teardown: func(r *raw) error { return e.free(r) },
		Body:     func(r *raw) error { return errors.Join(e.launchGraph(r), r.syncStream()) },
	})
	var k rawTenOps
	registerRaw(rawSpec{
		Name: eagerRaw, Interleave: group, Bytes: bytes,
		Setup:    func(r *raw, env *bench.Env) error { return k.setup(r, env, 0, false) },
		Teardown: func(r *raw) error { return k.free(r) },
		Body:     func(r *raw) error { return errors.Join(k.launchOps(r), r.syncStream()) },
	})
}
