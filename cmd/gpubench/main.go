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
//     reference bandwidth (the "% copy" column), device events.
//
// Each benchmark that has a raw driver counterpart is sampled in turn with it
// (raw/<name>/<driver call>: cuStreamSynchronize, cuLaunchKernel,
// cuMemcpyHtoDAsync, ... on a stream of its own), and the table shows our
// median over the raw one ("vs raw"). The raw rows need cgo and the CUDA
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
