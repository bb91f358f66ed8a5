package main

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/go-gpu/gpu/bench"
)

// The latency benchmarks (Metal.jl's latency/import and latency/ttfp, for a
// library that needs no compilation): the time to open the device
// (latency/init: gpu.Open or gpu.OpenBackend, which loads the driver, creates
// or retains the context and the default stream) and the time to load, launch
// and wait for a first kernel after that (latency/first_kernel: the built-in
// module's load, on CUDA a PTX JIT compile that the driver caches on disk, a
// launch of its empty kernel and a synchronize). Each call runs a fresh
// gpubench process (the same binary, with a hidden first argument) that
// times both with its own clock and prints them; the process's start-up and
// exit are not counted. The warm-up runs make the figures those of a warm
// start (the binary, the driver and the JIT cache in the page cache).

// childFlag is the hidden first argument that makes gpubench a latency child.
const childFlag = "-gpubench-latency-child"

// childMain is the latency child: it opens the device of -backend, loads,
// launches and waits for the empty kernel, and prints
// "init_ns=N first_kernel_ns=M".
func childMain(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gpubench latency child", flag.ContinueOnError)
	fs.SetOutput(stderr)
	backend := fs.String("backend", "auto", "device backend: auto, cpu or cuda")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	t0 := time.Now()
	d, err := openDevice(*backend)
	if err != nil {
		fmt.Fprintf(stderr, "opening backend %s: %v\n", *backend, err)
		return 1
	}
	t1 := time.Now()
	err = func() error {
		f, err := d.Builtin("empty")
		if err != nil {
			return err
		}
		s := d.DefaultStream()
		if err := s.Launch(f, one); err != nil {
			return err
		}
		return s.Synchronize(bg)
	}()
	t2 := time.Now()
	if err != nil {
		fmt.Fprintf(stderr, "first kernel: %v\n", err)
		return 1
	}
	gk, err := firstGoKernel(d)
	if err != nil {
		fmt.Fprintf(stderr, "first Go kernel: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "init_ns=%d first_kernel_ns=%d first_gokernel_ns=%d\n", t1.Sub(t0).Nanoseconds(), t2.Sub(t1).Nanoseconds(), gk.Nanoseconds())
	return 0
}

// runChild runs a latency child for backend and returns the figure named key
// ("init_ns" or "first_kernel_ns").
func runChild(backend, key string) (time.Duration, error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, err
	}
	cmd := exec.Command(exe, childFlag, "-backend", backend)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("latency child: %v: %s", err, strings.TrimSpace(stderr.String()))
	}
	for _, f := range strings.Fields(stdout.String()) {
		if k, v, ok := strings.Cut(f, "="); ok && k == key {
			ns, err := strconv.ParseInt(v, 10, 64)
			if err != nil || ns < 0 {
				return 0, fmt.Errorf("latency child printed %q", f)
			}
			return time.Duration(ns), nil
		}
	}
	return 0, fmt.Errorf("latency child printed no %s: %q", key, stdout.String())
}

// childTimer adds up the figures the children of a sample reported.
type childTimer struct{ total time.Duration }

func (t *childTimer) Start() error                 { t.total = 0; return nil }
func (t *childTimer) Stop() (time.Duration, error) { return t.total, nil }

func registerLatency() {
	for _, l := range []struct{ name, key string }{
		{"latency/init", "init_ns"},
		{"latency/first_kernel", "first_kernel_ns"},
		{"latency/first_gokernel", "first_gokernel_ns"},
	} {
		t := &childTimer{}
		var backend string
		bench.Register(bench.Benchmark{
			Name:  l.name,
			Mode:  bench.Host, // the child's host clock
			Iters: 1,
			Timer: t,
			Setup: func(env *bench.Env) error {
				backend = env.Backend
				if backend == "" {
					backend = "auto"
				}
				if _, err := devOf(env); err != nil {
					return errors.New("no device")
				}
				return nil
			},
			Body: func() error {
				d, err := runChild(backend, l.key)
				t.total += d
				return err
			},
		})
	}
}
