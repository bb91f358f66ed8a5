// Command gpubench runs the benchmark suite of github.com/go-gpu/gpu and
// compares it with CuPy and PyTorch measured on the same machine
// (peers/peers.py), with the raw CUDA driver calls doing the same work in the
// same run, and with earlier runs.
//
//	gpubench                          # everything on the default device, a table on stdout
//	gpubench -backend cpu             # the CPU backend (the /16k rows at 4096x4096)
//	gpubench -run 'sync/|kernel/' -json new.json -compare old.json
//	gpubench -format gobench > new.txt && benchstat old.txt new.txt
//	gpubench -list
//
// Benchmarks are registered by the suite*.go files of this package
// (bench.Register); see package bench for the harness, the naming rules, the
// JSON schema and the mapping onto the peers' names. Run gpubench -h for the
// flags.
//
// The runtime-level suite (suite.go registers it in this order):
//
//   - sync/stream and sync/context: Stream.Synchronize and Device.Synchronize
//     on an idle device (as Metal.jl measures them), with the default policy,
//     /blocking and /spinning; the same after launching an empty kernel
//     (sync/.../after_kernel/...). Host clock.
//   - kernel/launch: an empty kernel launched without waiting, host clock,
//     1000 launches per sample and one stream synchronize, per launch.
//   - array/construct: an 8-byte allocation and its free (/16k: 1 GiB).
//   - array/copyto/{cpu_to_gpu,gpu_to_cpu,gpu_to_gpu}, and from or to pinned
//     memory (_pinned): the copy methods of gpu.Buffer, which return once the
//     data is in place; host clock. At Metal.jl's size (2,048,000 bytes) and
//     /16k (1 GiB).
//   - latency/init and latency/first_kernel: opening the device, and loading,
//     launching and waiting for a first kernel, in a fresh process.
//   - reference/dtod_copy: the device-to-device copy whose GB/s is the run's
//     reference bandwidth (the "% copy" column), device events. On the CPU
//     backend the column is left out and this is an ordinary row: the CPU's
//     caches hold many of the suite's arrays and its kernels use every core
//     while the copy is one memmove, so rows went past 100% of the copy for
//     reasons that are not efficiency (-ref-gbps still sets a reference).
//
// Progress goes to stderr: a line rewritten in place on a terminal, and a
// line per group of benchmarks (and at least every 10 s) when stderr is a
// pipe or a file, as with gpubench | tee out.txt; -q turns it off.
//
// The array-level suite (suite_array.go, suite_reduce.go, suite_random.go) and
// the hand-written kernels (suite_kernels.go), registered between copyto and
// latency: the rest of Metal.jl's CI suite under its names, each doing what
// peers/peers.py does under the same key:
//
//   - array/copy and array/iteration/{scalar, logical, findall/{bool,int},
//     findfirst/{bool,int}, findmin/{1d,2d}}, on device memory and, as
//     array/shared/..., on unified memory (Metal.jl's private and shared);
//   - array/broadcast, array/accumulate, array/reductions/{reduce,mapreduce}
//     (Float32 and Int64; 1d, dims=1, dims=2, dims=1L, dims=2L),
//     array/random/{rand,rand!,randn,randn!}, array/permutedims/{2d,3d,4d};
//   - array/floor_divide/int32 and array/remainder/float32: gpu.FloorDivide and
//     gpu.Remainder of two matrices (NumPy's floor_divide and remainder, not in
//     Metal.jl's suite; the peers' keys floor_divide/int32, remainder/float32);
//   - kernel/{indexing,indexing_checked,rand}: PTX loaded with
//     Device.LoadModule (Go functions on the CPU backend);
//   - integration/byval/{reference,slices=1,2,3} and integration/metaldevrt.
//
// At Metal.jl's sizes these are timed as Metal.@sync and the peers time them:
// one call and a stream synchronize on the host clock. The same operations at
// 2^28 elements (/16k; 4096^2 on the CPU backend) are bandwidth figures timed
// with device events.
//
// Each benchmark that has a raw driver counterpart is sampled in turn with it
// (raw/<name>/<driver call>: cuStreamSynchronize, cuLaunchKernel,
// cuMemcpyHtoDAsync, ... on a stream of its own), and the table shows our
// median over the raw one ("vs raw"). The raw rows need the CUDA
// backend; elsewhere they are skipped.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/go-gpu/gpu/bench"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == childFlag {
		os.Exit(childMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, bench.Default, open)
	stop()
	os.Exit(code)
}
