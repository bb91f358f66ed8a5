// Command gpubench runs the benchmark suite of github.com/go-gpu/gpu and
// compares it with CuPy and PyTorch measured on the same machine
// (peers/peers.py) and with earlier runs.
//
//	gpubench                          # everything, a table on stdout
//	gpubench -run 'reductions/' -json new.json -compare old.json
//	gpubench -format gobench > new.txt && benchstat old.txt new.txt
//	gpubench -list
//
// Benchmarks are registered from init functions in the suite_*.go files of
// this package (bench.Register); see package bench for the harness, the
// naming rules, the JSON schema and the mapping onto the peers' names. Run
// gpubench -h for the flags.
package main

import (
	"context"
	"os"
	"os/signal"

	"github.com/go-gpu/gpu/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := bench.Main(ctx, os.Args[1:], os.Stdout, os.Stderr, bench.Default, open)
	stop()
	os.Exit(code)
}

// open opens the device under test. Until the runtime lands there is no device:
// the host placeholders run, timed by the host clock.
// TODO(runtime): open the backend's device, return its name and driver, an
// event-based bench.Timer and the device's synchronize.
func open(backend string) (*bench.Target, error) {
	return &bench.Target{Device: "host (no device backend yet)"}, nil
}
