package nccl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/nccl/internal/ncclapi"
)

// The CUDA tests skip unless there are two CUDA devices and NCCL loads. Tests that
// abort a communicator with work in flight fault the device (a sticky CUDA error), so
// they run in child processes: the test binary runs itself again with
// GO_NCCL_TEST_CHILD set, and with RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR and
// MASTER_PORT for the multi-process tests.

const childEnv = "GO_NCCL_TEST_CHILD"

// cudaPair returns CUDA devices 0 and 1, or skips.
func cudaPair(t testing.TB) []*gpu.Device {
	t.Helper()
	var devs []*gpu.Device
	for i := range 2 {
		d, err := gpu.OpenBackend("cuda", i)
		if errors.Is(err, gpu.ErrNoDevice) {
			t.Skipf("needs 2 CUDA devices: %v", err)
		}
		if err != nil {
			t.Fatal(err)
		}
		devs = append(devs, d)
	}
	if err := ncclapi.Load(); err != nil {
		t.Skipf("NCCL: %v", err)
	}
	return devs
}

func cudaGroup(t testing.TB, opts ...Option) []*Comm {
	t.Helper()
	devs := cudaPair(t)
	comms, err := NewGroup(context.Background(), devs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range comms {
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	})
	return comms
}

// TestNCCLCUDACollectives runs every collective, element type and operator on two
// GPUs driven by one process (NewGroup), sizes 0, 1, 1001 and 16 MiB.
func TestNCCLCUDACollectives(t *testing.T) {
	for _, mode := range []struct {
		name string
		opts []Option
	}{{"nonblocking", nil}, {"blocking", []Option{Blocking()}}} {
		t.Run(mode.name, func(t *testing.T) {
			comms := cudaGroup(t, mode.opts...)
			r := newRig(t, comms)
			large := []int64{16 << 20}
			if mode.name == "blocking" {
				large = nil
			}
			for _, s := range specs(2, []int64{0, 1, 1001}, large) {
				t.Run(s.String(), func(t *testing.T) { r.runSpec(t, s, false) })
			}
		})
	}
}

// TestNCCLCUDAAllReduce1GiB: a float32 AllReduce of 1 GiB per GPU.
func TestNCCLCUDAAllReduce1GiB(t *testing.T) {
	comms := cudaGroup(t)
	r := newRig(t, comms)
	for _, inPlace := range []bool{false, true} {
		s := spec{kind: opAllReduce, t: dtype.Float32, count: 1 << 28, red: Sum, seed: 99, inPlace: inPlace}
		start := time.Now()
		r.runSpec(t, s, false)
		t.Logf("%v: checked in %v", s, time.Since(start))
	}
}

// rankRun runs one rank's part of s: its buffers, its call, its check.
func rankRun(t testing.TB, c *Comm, st *gpu.Stream, s spec, exact bool) {
	t.Helper()
	world, rank := c.World(), c.Rank()
	ins := make([][]byte, world)
	for r := range world {
		ins[r] = s.input(r, world)
	}
	b := s.prepare(t, c.Device(), rank, world, ins[rank])
	defer func() {
		for _, a := range b.alloc {
			a.Free()
		}
	}()
	var err error
	if s.kind == opSend {
		err = c.Group(func() error { return s.call(c, st, b) })
	} else {
		err = s.call(c, st, b)
	}
	if err != nil {
		t.Fatalf("rank %d: %v: %v", rank, s, err)
	}
	s.check(t, rank, b, s.expected(rank, ins), exact)
}

// TestNCCLCUDAGoroutineRanks: NewComm ranks in one process, one goroutine each, no
// groups.
func TestNCCLCUDAGoroutineRanks(t *testing.T) {
	devs := cudaPair(t)
	id, err := NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cases := specs(2, []int64{1, 1001}, []int64{4 << 20})
	var wg sync.WaitGroup
	for rank := range 2 {
		wg.Go(func() {
			c, err := NewComm(ctx, devs[rank], id, rank, 2)
			if err != nil {
				t.Errorf("rank %d: %v", rank, err)
				return
			}
			defer c.Close()
			st, err := devs[rank].NewStream()
			if err != nil {
				t.Error(err)
				return
			}
			defer st.Close()
			for _, s := range cases {
				rankRun(t, c, st, s, false)
			}
		})
	}
	wg.Wait()
}

// TestNCCLCUDAInitCancel: a creation that waits for a rank that never comes ends with
// the context.
func TestNCCLCUDAInitCancel(t *testing.T) {
	devs := cudaPair(t)
	id, _ := NewUniqueID()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	start := time.Now()
	c, err := NewComm(ctx, devs[0], id, 0, 2)
	took := time.Since(start)
	if err == nil {
		c.Close()
		t.Fatal("NewComm of rank 0 of 2, alone, succeeded")
	}
	if !errors.Is(err, context.DeadlineExceeded) || took > 8*time.Second {
		t.Errorf("NewComm alone = %v after %v, want DeadlineExceeded after about 2 s", err, took)
	}
	t.Logf("NewComm alone: %v after %v", err, took)
}

// TestNCCLCUDABadInputs: CUDA-specific argument errors.
func TestNCCLCUDABadInputs(t *testing.T) {
	comms := cudaGroup(t)
	d := comms[0].Device()
	b, err := d.Alloc(1024)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	s1, _ := d.NewStream()
	s2, _ := d.NewStream()
	defer s1.Close()
	defer s2.Close()
	// One buffer on two streams in one group.
	err = comms[0].Group(func() error {
		if err := comms[0].Send(s1, b, 16, dtype.Float32, 1); err != nil {
			return err
		}
		return comms[0].Send(s2, b, 16, dtype.Float32, 1)
	})
	if !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("a buffer on two streams in one group = %v", err)
	}
	var cpuID UniqueID
	copy(cpuID[:], cpuIDMagic)
	if _, err := NewComm(context.Background(), d, cpuID, 0, 2); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewComm on CUDA with a CPU id = %v", err)
	}
	if _, err := NewGroup(context.Background(), []*gpu.Device{d, cpuDevices(t, 1)[0]}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewGroup of a CUDA and a CPU device = %v", err)
	}
}

// child runs f if this process is a child of the given role, then exits.
func child(t *testing.T, role string, f func(t *testing.T)) bool {
	if os.Getenv(childEnv) != role {
		return false
	}
	f(t)
	return true
}

type childResult struct {
	rank int
	code int
	out  string
}

// spawn runs world children of the test binary in the given role, as the ranks of a
// torchrun-style job on this host, and returns their exit codes and outputs.
func spawn(t *testing.T, role string, world int, timeout time.Duration) []childResult {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res := make([]childResult, world)
	var wg sync.WaitGroup
	for rank := range world {
		cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+t.Name()+"$", "-test.v", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+role,
			"RANK="+strconv.Itoa(rank), "LOCAL_RANK="+strconv.Itoa(rank), "WORLD_SIZE="+strconv.Itoa(world),
			"MASTER_ADDR=127.0.0.1", "MASTER_PORT="+strconv.Itoa(port))
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() {
			err := cmd.Wait()
			code := 0
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				code = ee.ExitCode()
			} else if err != nil {
				code = -1
			}
			res[rank] = childResult{rank: rank, code: code, out: out.String()}
		})
	}
	wg.Wait()
	for _, r := range res {
		t.Logf("rank %d exited with %d:\n%s", r.rank, r.code, r.out)
	}
	return res
}

func passed(r childResult) bool {
	return r.code == 0 && strings.Contains(r.out, "--- PASS") && !strings.Contains(r.out, "--- FAIL")
}

// TestNCCLCUDAProcesses: two processes, one GPU each, meet through the rendezvous
// (FromEnv) and run every collective and element type, sizes 0, 1, 1001 and 4 MiB.
func TestNCCLCUDAProcesses(t *testing.T) {
	if child(t, "collectives", func(t *testing.T) {
		ctx := context.Background()
		c, err := FromEnv(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		st, err := c.Device().NewStream()
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range specs(c.World(), []int64{0, 1, 1001}, []int64{4 << 20}) {
			rankRun(t, c, st, s, false)
		}
		st.Close()
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		if err := c.Err(); err != nil {
			t.Logf("Err after Close (a peer that closed first): %v", err)
		}
	}) {
		return
	}
	cudaPair(t)
	for _, r := range spawn(t, "collectives", 2, 5*time.Minute) {
		if !passed(r) {
			t.Errorf("rank %d failed (exit %d)", r.rank, r.code)
		}
	}
}

// TestNCCLCUDAProcessExit: rank 1 exits in the middle of the job; rank 0's pending
// AllReduce must end with an error within 10 s, not hang.
func TestNCCLCUDAProcessExit(t *testing.T) {
	if child(t, "exit", func(t *testing.T) {
		ctx := context.Background()
		c, err := FromEnv(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		d := c.Device()
		st, _ := d.NewStream()
		x, _ := d.Alloc(4 << 20)
		if err := c.AllReduce(st, x, x, 1<<20, dtype.Float32, Sum); err != nil {
			t.Fatal(err)
		}
		if err := st.Synchronize(ctx); err != nil {
			t.Fatal(err)
		}
		if c.Rank() == 1 {
			// Rank 0's second AllReduce is in flight by now, waiting for this rank.
			time.Sleep(500 * time.Millisecond)
			fmt.Println("rank 1 exits now")
			os.Exit(3)
		}
		if err := c.AllReduce(st, x, x, 1<<20, dtype.Float32, Sum); err != nil {
			t.Fatalf("the second AllReduce: %v", err)
		}
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		start := time.Now()
		err = st.Synchronize(wctx)
		took := time.Since(start)
		t.Logf("rank 0: the wait returned after %v: %v; Err: %v", took, err, c.Err())
		if err == nil || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("rank 0: the wait for an AllReduce whose peer exited = %v after %v, want an error within 10 s", err, took)
		}
		if !errors.Is(c.Err(), ErrAborted) {
			t.Errorf("rank 0: Err = %v, want ErrAborted", c.Err())
		}
	}) {
		return
	}
	cudaPair(t)
	res := spawn(t, "exit", 2, 2*time.Minute)
	if !passed(res[0]) {
		t.Errorf("rank 0 failed (exit %d)", res[0].code)
	}
	if res[1].code != 3 {
		t.Errorf("rank 1 exited with %d, want 3", res[1].code)
	}
}

// TestNCCLCUDAAbort: in one process with two GPUs, rank 0's AllReduce waits for rank
// 1, which aborts (or whose context ends); rank 0's wait must end with an error within
// 10 s. Each variant runs in a child process: the abort faults the devices.
func TestNCCLCUDAAbort(t *testing.T) {
	variants := []string{"abort", "context", "keepdevice"}
	for _, v := range variants {
		if child(t, "abort-"+v, func(t *testing.T) { abortChild(t, v) }) {
			return
		}
	}
	cudaPair(t)
	for _, v := range variants {
		t.Run(v, func(t *testing.T) {
			res := spawn(t, "abort-"+v, 1, 2*time.Minute)
			if !passed(res[0]) {
				t.Errorf("the child failed (exit %d)", res[0].code)
			}
		})
	}
}

func abortChild(t *testing.T, variant string) {
	devs := cudaPair(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var opts []Option
	if variant == "keepdevice" {
		opts = append(opts, KeepDeviceOnAbort())
	}
	comms, err := NewGroup(ctx, devs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	r := newRig(t, comms)
	// A grouped AllReduce first: the connections are made.
	r.runSpec(t, spec{kind: opAllReduce, t: dtype.Float32, count: 1 << 20, red: Sum, seed: 5}, false)
	x, _ := devs[0].Alloc(4 << 20)
	if err := comms[0].AllReduce(r.streams[0], x, x, 1<<20, dtype.Float32, Sum); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	if done, err := r.streams[0].Query(); done || err != nil {
		t.Fatalf("rank 0's lone AllReduce ended (%v) without rank 1", err)
	}
	switch variant {
	case "context":
		cancel()
	default:
		comms[1].Abort()
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	start := time.Now()
	err = r.streams[0].Synchronize(wctx)
	took := time.Since(start)
	t.Logf("rank 0: the wait returned after %v: %v; Err: %v", took, err, comms[0].Err())
	if errors.Is(err, context.DeadlineExceeded) {
		t.Fatal("rank 0: still waiting 10 s after the abort")
	}
	if variant == "keepdevice" {
		if err != nil {
			t.Errorf("with KeepDeviceOnAbort the wait = %v, want nil", err)
		}
		// The device is still usable.
		if err := devs[0].Synchronize(context.Background()); err != nil {
			t.Errorf("device 0 after an abort with KeepDeviceOnAbort: %v", err)
		}
	} else if !errors.Is(err, gpu.ErrLaunchFailed) {
		t.Errorf("rank 0: wait = %v, want an error wrapping ErrLaunchFailed", err)
	}
	for _, c := range comms {
		if !errors.Is(c.Err(), ErrAborted) {
			t.Errorf("%v: Err = %v, want ErrAborted", c, c.Err())
		}
		if err := c.Close(); err != nil {
			t.Errorf("%v: Close after the abort = %v", c, err)
		}
	}
}
