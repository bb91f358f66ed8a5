package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
)

// device is what the benchmarks get as bench.Env.Device: the device under test
// and the stream they use.
type device struct {
	dev *gpu.Device
	// s is the stream every benchmark uses: the device's default stream, which
	// the operations that take no stream (Device.Alloc, Buffer.CopyFromHost,
	// ...) use too. The run's event timer records on it and the run's Sync
	// synchronizes it.
	s *gpu.Stream
	// empty is the built-in empty kernel.
	empty *gpu.Function
	// backend is the device's backend, "cuda" or "cpu".
	backend string
}

// one is the launch geometry of the empty kernel: one block of one thread.
var one = gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}

// bg is the context of every wait in the suite.
var bg = context.Background()

// devOf returns the benchmark's device.
func devOf(env *bench.Env) (*device, error) {
	d, ok := env.Device.(*device)
	if !ok || d == nil {
		return nil, errors.New("no device: gpubench's open hook did not run")
	}
	return d, nil
}

// openDevice opens the device of a -backend value: auto is gpu.Open (the first
// CUDA device, else the CPU; GPU_BACKEND forces a choice), cpu and cuda open
// device 0 of that backend.
func openDevice(backend string) (*gpu.Device, error) {
	switch backend {
	case "auto", "":
		return gpu.Open()
	case "cpu", "cuda":
		return gpu.OpenBackend(backend, 0)
	}
	return nil, fmt.Errorf("unknown backend %q", backend)
}

// driverVersion formats a CUDA driver version (1000*major + 10*minor) and the
// build's binding of the driver (cu.Binding) as "13.0 cgo" or "13.0 purego", so
// that a report says which build made it; "cpu" on the CPU backend.
func driverVersion(info gpu.DeviceInfo) string {
	if info.Backend != "cuda" {
		return info.Backend
	}
	v := info.DriverVersion
	return fmt.Sprintf("%d.%d %s", v/1000, v%1000/10, cu.Binding)
}

// libraries names the device's matrix library (gpu.Device.MatMulLibrary: on CUDA the
// cuBLAS file and version loaded) and the environment's settings that choose among the
// matrix-product routines, for the report's header.
func libraries(d *gpu.Device) string {
	lib, err := d.MatMulLibrary()
	if err != nil {
		lib = "none (" + err.Error() + ")"
	}
	s := "matrix products: " + lib
	var env []string
	for _, v := range matmulEnv {
		if x := os.Getenv(v); x != "" {
			env = append(env, v+"="+x)
		}
	}
	if len(env) > 0 {
		s += "; " + strings.Join(env, " ")
	}
	return s
}

// matmulEnv are the environment variables that choose how matrix products run.
var matmulEnv = []string{"GPU_MATMUL", "GPU_MATMUL_TILE", "GPU_CUBLAS_LIBRARY", "GPU_CUBLAS_API", "GPU_CUBLAS_WORKSPACE", "GPU_CUBLAS_TUNE_ALGOS"}

// open is gpubench's open hook: the device of the -backend flag, its default
// stream for the benchmarks, and a timer of two timing events on that stream.
func open(backend string) (*bench.Target, error) {
	d, err := openDevice(backend)
	if err != nil {
		return nil, err
	}
	empty, err := d.Builtin("empty")
	if err != nil {
		return nil, fmt.Errorf("the built-in empty kernel: %w", err)
	}
	if err := setL2Fetch(d); err != nil {
		return nil, err
	}
	s := d.DefaultStream()
	t, err := newEventTimer(s)
	if err != nil {
		return nil, err
	}
	info := d.Info()
	side := 0 // bench.LargeSide
	noFrac := ""
	if info.Backend == "cpu" {
		side = bench.ReducedLargeSide
		noFrac = cpuNoCopyFraction
	}
	return &bench.Target{
		Device:         info.Name,
		Driver:         driverVersion(info),
		Libraries:      libraries(d),
		Timer:          t,
		Sync:           func() error { return s.Synchronize(bg) },
		Backend:        info.Backend,
		Handle:         &device{dev: d, s: s, empty: empty, backend: info.Backend},
		LargeSide:      side,
		NoCopyFraction: noFrac,
		Close: func() error {
			// The device lives as long as the process; give back what the
			// run made and wait for what it left queued.
			err := d.Synchronize(bg)
			return errors.Join(err, t.close())
		},
	}, nil
}

// cpuNoCopyFraction is why the CPU backend's table has no "% copy" column.
const cpuNoCopyFraction = "the CPU's caches hold many of the suite's arrays (Metal.jl's 2 MB sizes, " +
	"the reduced /16k rows' 16-128 MB), and its kernels run on every core while a copy is one memmove, " +
	"so rows went past 100% of the copy for reasons that are not efficiency; " +
	"compare GB/s with the machine's memory bandwidth instead"

// eventTimer times a sample with two timing events recorded on the stream the
// benchmarks use (CUDA: cuEventRecord, cuEventElapsedTime, about half a
// microsecond of resolution).
type eventTimer struct {
	s          *gpu.Stream
	start, end *gpu.Event
}

func newEventTimer(s *gpu.Stream) (*eventTimer, error) {
	start, err := s.Device().NewEvent()
	if err != nil {
		return nil, err
	}
	end, err := s.Device().NewEvent()
	if err != nil {
		start.Close()
		return nil, err
	}
	return &eventTimer{s: s, start: start, end: end}, nil
}

// Start records the start event.
func (t *eventTimer) Start() error { return t.s.Record(t.start) }

// Stop records the end event, waits for it and returns the time between the two.
func (t *eventTimer) Stop() (time.Duration, error) {
	if err := t.s.Record(t.end); err != nil {
		return 0, err
	}
	if err := t.end.Wait(bg); err != nil {
		return 0, err
	}
	return gpu.Elapsed(t.start, t.end)
}

func (t *eventTimer) close() error { return errors.Join(t.start.Close(), t.end.Close()) }
