package nccl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
	"github.com/go-gpu/gpu/dtype"
)

func fill(n int, v byte) []byte { return bytes.Repeat([]byte{v}, n) }

func readBack(t testing.TB, b *gpu.Buffer) []byte {
	t.Helper()
	out := make([]byte, b.Size())
	if err := b.CopyToHost(context.Background(), out); err != nil {
		t.Fatalf("reading back: %v", err)
	}
	return out
}

// TestCPUSendRecvOrder: several sends between the same two ranks in one group are
// received in the order they were made; a ring runs grouped.
func TestCPUSendRecvOrder(t *testing.T) {
	comms := cpuGroup(t, 3)
	r := newRig(t, comms)
	const n = 1000
	srcs := make([][]*gpu.Buffer, 3) // srcs[rank][k]
	dsts := make([][]*gpu.Buffer, 3)
	for rank, c := range comms {
		for k := range 3 {
			srcs[rank] = append(srcs[rank], upload(t, c.Device(), fill(4*n, byte(16*rank+k))))
			dsts[rank] = append(dsts[rank], upload(t, c.Device(), fill(4*n, 0xEE)))
		}
	}
	// Every rank sends three buffers to the next rank and receives three from the
	// previous one, the receives made in the same order as the sends.
	err := Group(comms, func() error {
		for rank, c := range comms {
			next, prev := (rank+1)%3, (rank+2)%3
			for k := range 3 {
				if err := c.Recv(r.streams[rank], dsts[rank][k], n, dtype.Int32, prev); err != nil {
					return err
				}
				if err := c.Send(r.streams[rank], srcs[rank][k], n, dtype.Int32, next); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for rank := range comms {
		prev := (rank + 2) % 3
		for k := range 3 {
			if got, want := readBack(t, dsts[rank][k]), fill(4*n, byte(16*prev+k)); !bytes.Equal(got, want) {
				t.Fatalf("rank %d, receive %d: got bytes %#x..., want %#x", rank, k, got[0], want[0])
			}
		}
	}
}

// TestCPUGoroutineRanks drives each rank from its own goroutine with communicators
// made by NewComm, without groups: point-to-point calls need none then.
func TestCPUGoroutineRanks(t *testing.T) {
	const world = 3
	devs := cpuDevices(t, world)
	id, err := NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var wg sync.WaitGroup
	errs := make([]error, world)
	for rank := range world {
		wg.Go(func() {
			errs[rank] = func() error {
				c, err := NewComm(ctx, devs[rank], id, rank, world)
				if err != nil {
					return err
				}
				defer c.Close()
				if c.Rank() != rank || c.World() != world || c.Device() != devs[rank] {
					return fmt.Errorf("comm %v: wrong rank, world or device", c)
				}
				s := devs[rank].DefaultStream()
				x := upload(t, devs[rank], fill(8*100, byte(rank+1)))
				// Int64 sum of the bytes 1, 2, 3 repeated: each int64 is 0x0606...06.
				if err := c.AllReduce(s, x, x, 100, dtype.Int64, Sum); err != nil {
					return err
				}
				if got := readBack(t, x); !bytes.Equal(got, fill(800, 6)) {
					return fmt.Errorf("rank %d: AllReduce gave %x...", rank, got[:8])
				}
				// Ungrouped point to point: rank 0 sends to rank 1.
				switch rank {
				case 0:
					if err := c.Send(s, x, 100, dtype.Int64, 1); err != nil {
						return err
					}
				case 1:
					y := upload(t, devs[rank], fill(800, 0))
					if err := c.Recv(s, y, 100, dtype.Int64, 0); err != nil {
						return err
					}
					if got := readBack(t, y); !bytes.Equal(got, fill(800, 6)) {
						return fmt.Errorf("rank 1 received %x...", got[:8])
					}
				}
				return s.Synchronize(ctx)
			}()
		})
	}
	wg.Wait()
	for rank, err := range errs {
		if err != nil {
			t.Errorf("rank %d: %v", rank, err)
		}
	}
}

// TestCPUNewCommErrors: ranks that disagree, and a rank that never comes.
func TestCPUNewCommErrors(t *testing.T) {
	devs := cpuDevices(t, 2)
	id, _ := NewUniqueID()
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() {
		_, err := NewComm(ctx, devs[0], id, 0, 2)
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if _, err := NewComm(ctx, devs[1], id, 1, 3); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewComm with another world size = %v", err)
	}
	if err := <-errc; err == nil {
		t.Error("the first rank got no error after a rank with another world size came")
	}
	// A rank alone gives up when its context ends.
	id2, _ := NewUniqueID()
	tctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := NewComm(tctx, devs[0], id2, 0, 2); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("NewComm waiting for a missing rank = %v, want DeadlineExceeded", err)
	}
	// Two ranks on one device.
	id3, _ := NewUniqueID()
	go func() {
		_, err := NewComm(ctx, devs[0], id3, 0, 2)
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if _, err := NewComm(ctx, devs[0], id3, 1, 2); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("two ranks on one device = %v", err)
	}
	<-errc
	for _, c := range []struct{ rank, world int }{{-1, 2}, {2, 2}, {0, 0}} {
		if _, err := NewComm(ctx, devs[0], id3, c.rank, c.world); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("NewComm(rank %d, world %d) = %v", c.rank, c.world, err)
		}
	}
	if _, err := NewComm(ctx, nil, id3, 0, 1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewComm(nil device) = %v", err)
	}
	// Two ranks on two gpu.Devices of one CPU device: one device, as NewGroup says.
	cd := cpu.New(1)
	same := []*gpu.Device{mustDev(t, cd), mustDev(t, cd)}
	if _, err := NewGroup(ctx, same); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewGroup of one CPU device twice = %v", err)
	}
	id4, _ := NewUniqueID()
	go func() {
		_, err := NewComm(ctx, same[0], id4, 0, 2)
		errc <- err
	}()
	time.Sleep(10 * time.Millisecond)
	if _, err := NewComm(ctx, same[1], id4, 1, 2); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("two ranks on one CPU device through two gpu.Devices = %v", err)
	}
	if err := <-errc; !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("the first rank on that device = %v", err)
	}
}

// TestCPUFromEnv: one rank works; several processes are not supported on the CPU.
func TestCPUFromEnv(t *testing.T) {
	for _, k := range []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"} {
		t.Setenv(k, "")
	}
	d := cpuDevices(t, 1)[0]
	c, err := FromEnv(context.Background(), d)
	if err != nil {
		t.Fatal(err)
	}
	x := upload(t, d, fill(16, 3))
	y := upload(t, d, fill(16, 0))
	if err := c.AllReduce(d.DefaultStream(), x, y, 4, dtype.Uint32, Max); err != nil {
		t.Fatal(err)
	}
	if got := readBack(t, y); !bytes.Equal(got, fill(16, 3)) {
		t.Errorf("AllReduce of one rank gave %x", got)
	}
	c.Close()
	t.Setenv("WORLD_SIZE", "2")
	t.Setenv("RANK", "0")
	if _, err := FromEnv(context.Background(), d); !errors.Is(err, ErrNotSupported) {
		t.Errorf("FromEnv with 2 CPU processes = %v, want ErrNotSupported", err)
	}
	t.Setenv("RANK", "5")
	if _, err := FromEnv(context.Background(), d); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("FromEnv with RANK out of range = %v, want ErrInvalidValue", err)
	}
}

// waitErr waits for s under a 10 s deadline and returns the error and how long it took.
func waitErr(s *gpu.Stream) (error, time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	start := time.Now()
	err := s.Synchronize(ctx)
	return err, time.Since(start)
}

// abortScenario launches an AllReduce on every rank but the last, lets it wait for the
// missing rank, then runs fail on the last rank; every other rank's wait must end with
// an error within 10 s.
func abortScenario(t *testing.T, comms []*Comm, streams []*gpu.Stream, fail func()) []error {
	t.Helper()
	world := len(comms)
	for rank, c := range comms[:world-1] {
		x := upload(t, c.Device(), fill(4*1001, 1))
		if err := c.AllReduce(streams[rank], x, x, 1001, dtype.Float32, Sum); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(20 * time.Millisecond) // the kernels wait for the last rank
	for rank := range world - 1 {
		if done, err := streams[rank].Query(); done || err != nil {
			t.Fatalf("rank %d: its AllReduce ended (%v) before the last rank came", rank, err)
		}
	}
	fail()
	errs := make([]error, world-1)
	for rank := range world - 1 {
		err, took := waitErr(streams[rank])
		if errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("rank %d: still waiting 10 s after the last rank failed", rank)
		}
		t.Logf("rank %d: wait returned after %v: %v", rank, took, err)
		errs[rank] = err
	}
	return errs
}

func TestCPUAbortMidCollective(t *testing.T) {
	comms := cpuGroup(t, 4)
	r := newRig(t, comms)
	errs := abortScenario(t, comms, r.streams, func() { comms[3].Abort() })
	for rank, err := range errs {
		if !errors.Is(err, gpu.ErrLaunchFailed) || !errors.Is(err, ErrAborted) {
			t.Errorf("rank %d: wait = %v, want an error matching ErrLaunchFailed and ErrAborted", rank, err)
		}
	}
	for _, c := range comms {
		if !errors.Is(c.Err(), ErrAborted) {
			t.Errorf("%v: Err = %v", c, c.Err())
		}
	}
	// Later calls fail at once with the abort error.
	d := comms[3].Device() // the aborting rank had nothing in flight: its device is fine
	x := upload(t, d, fill(4, 0))
	if err := comms[3].AllReduce(d.DefaultStream(), x, x, 1, dtype.Int32, Sum); !errors.Is(err, ErrAborted) {
		t.Errorf("AllReduce after Abort = %v", err)
	}
	if err := d.DefaultStream().Synchronize(context.Background()); err != nil {
		t.Errorf("the aborting rank's device, idle at the abort, faulted: %v", err)
	}
	if err := comms[0].Close(); err != nil {
		t.Errorf("Close after an abort = %v", err)
	}
}

func TestCPUContextCancelMidCollective(t *testing.T) {
	const world = 3
	devs := cpuDevices(t, world)
	id, _ := NewUniqueID()
	comms := make([]*Comm, world)
	ctx3, cancel3 := context.WithCancel(context.Background())
	defer cancel3()
	var wg sync.WaitGroup
	for rank := range world {
		wg.Go(func() {
			ctx := context.Background()
			if rank == world-1 {
				ctx = ctx3
			}
			c, err := NewComm(ctx, devs[rank], id, rank, world)
			if err != nil {
				t.Error(err)
				return
			}
			comms[rank] = c
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	r := newRig(t, comms)
	errs := abortScenario(t, comms, r.streams, cancel3)
	for rank, err := range errs {
		if !errors.Is(err, ErrAborted) || !strings.Contains(err.Error(), "context") {
			t.Errorf("rank %d: wait = %v, want an abort naming the context", rank, err)
		}
	}
}

// TestCPUDeviceFault: a rank whose device faulted never runs its collective; the
// watchdog aborts the others.
func TestCPUDeviceFault(t *testing.T) {
	comms := cpuGroup(t, 2)
	r := newRig(t, comms)
	errs := abortScenario(t, comms, r.streams, func() {
		d := comms[1].Device()
		trap, err := d.Builtin("trap")
		if err != nil {
			t.Fatal(err)
		}
		d.DefaultStream().Launch(trap, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}})
	})
	if !errors.Is(errs[0], ErrAborted) || !strings.Contains(errs[0].Error(), "faulted") {
		t.Errorf("rank 0: wait = %v, want an abort naming rank 1's fault", errs[0])
	}
}

// TestCPUMismatch: ranks calling different collectives get ErrInvalidUsage.
func TestCPUMismatch(t *testing.T) {
	comms := cpuGroup(t, 2)
	r := newRig(t, comms)
	x0 := upload(t, comms[0].Device(), fill(64, 1))
	x1 := upload(t, comms[1].Device(), fill(64, 1))
	if err := comms[0].AllReduce(r.streams[0], x0, x0, 10, dtype.Int32, Sum); err != nil {
		t.Fatal(err)
	}
	if err := comms[1].AllReduce(r.streams[1], x1, x1, 11, dtype.Int32, Sum); err != nil {
		t.Fatal(err)
	}
	for rank, s := range r.streams {
		if err, _ := waitErr(s); !errors.Is(err, ErrInvalidUsage) {
			t.Errorf("rank %d: wait = %v, want ErrInvalidUsage", rank, err)
		}
	}
}

// TestCPUAbortIdle: an abort with nothing in flight leaves the devices usable.
func TestCPUAbortIdle(t *testing.T) {
	comms := cpuGroup(t, 2)
	r := newRig(t, comms)
	r.runSpec(t, spec{kind: opAllReduce, t: dtype.Float32, count: 100, red: Sum, seed: 7}, true)
	comms[0].Abort()
	for rank, c := range comms {
		if !errors.Is(c.Err(), ErrAborted) {
			t.Errorf("rank %d: Err = %v", rank, c.Err())
		}
		if err := c.Device().Synchronize(context.Background()); err != nil {
			t.Errorf("rank %d: the device faulted after an idle abort: %v", rank, err)
		}
	}
}

// TestCPUKeepDeviceOnAbort: with the option, an abort in flight completes the waits
// without a fault; Err reports it.
func TestCPUKeepDeviceOnAbort(t *testing.T) {
	comms := cpuGroup(t, 2, KeepDeviceOnAbort())
	r := newRig(t, comms)
	errs := abortScenario(t, comms, r.streams, func() { comms[1].Abort() })
	if errs[0] != nil {
		t.Errorf("rank 0: wait = %v, want nil with KeepDeviceOnAbort", errs[0])
	}
	if !errors.Is(comms[0].Err(), ErrAborted) {
		t.Errorf("rank 0: Err = %v", comms[0].Err())
	}
}

// TestBadInputs: every bad argument gives an error, not a panic, and nothing runs.
func TestBadInputs(t *testing.T) {
	comms := cpuGroup(t, 2)
	c := comms[0]
	d := c.Device()
	other := comms[1].Device()
	s := d.DefaultStream()
	b := upload(t, d, fill(64, 0))
	ob := upload(t, other, fill(64, 0))
	mis := view(t, b, 2, 32)
	const f32 = dtype.Float32
	cases := []struct {
		name string
		err  error
	}{
		{"nil stream", c.AllReduce(nil, b, b, 4, f32, Sum)},
		{"stream of another device", c.AllReduce(other.DefaultStream(), b, b, 4, f32, Sum)},
		{"nil send", c.AllReduce(s, nil, b, 4, f32, Sum)},
		{"nil recv", c.AllReduce(s, b, nil, 4, f32, Sum)},
		{"buffer of another device", c.AllReduce(s, ob, b, 4, f32, Sum)},
		{"buffer too small", c.AllReduce(s, b, b, 17, f32, Sum)},
		{"negative count", c.AllReduce(s, b, b, -1, f32, Sum)},
		{"huge count", c.AllReduce(s, b, b, 1<<62, f32, Sum)},
		{"bool", c.AllReduce(s, b, b, 4, dtype.Bool, Sum)},
		{"int16", c.AllReduce(s, b, b, 4, dtype.Int16, Sum)},
		{"invalid dtype", c.AllReduce(s, b, b, 4, dtype.Invalid, Sum)},
		{"unknown op", c.AllReduce(s, b, b, 4, f32, Op(9))},
		{"misaligned view", c.AllReduce(s, mis, mis, 4, f32, Sum)},
		{"root out of range", c.Broadcast(s, b, b, 4, f32, 2)},
		{"negative root", c.Reduce(s, b, b, 4, f32, Sum, -1)},
		{"peer out of range", c.Send(s, b, 4, f32, 2)},
		{"negative peer", c.Recv(s, b, 4, f32, -1)},
		{"AllGather recv too small", c.AllGather(s, b, b, 9, f32)},
		{"ReduceScatter send too small", c.ReduceScatter(s, b, b, 9, f32, Sum)},
		{"nil communicator", (*Comm)(nil).AllReduce(s, b, b, 4, f32, Sum)},
	}
	for _, tc := range cases {
		if !errors.Is(tc.err, gpu.ErrInvalidValue) {
			t.Errorf("%s: %v, want an error wrapping gpu.ErrInvalidValue", tc.name, tc.err)
		}
	}
	// Broadcast ignores send on a non-root rank and Reduce recv: nil is fine there.
	grpErr := Group(comms, func() error {
		if err := comms[0].Broadcast(s, nil, b, 4, f32, 1); err != nil {
			return err
		}
		return comms[1].Broadcast(other.DefaultStream(), ob, ob, 4, f32, 1)
	})
	if grpErr != nil {
		t.Errorf("Broadcast with a nil send buffer off the root: %v", grpErr)
	}
	// Count 0 launches nothing and accepts nil buffers.
	if err := c.AllReduce(s, nil, nil, 0, f32, Sum); err != nil {
		t.Errorf("AllReduce of 0 elements = %v", err)
	}
	// Creation errors.
	ctx := context.Background()
	two := cpuDevices(t, 1)[0]
	for name, devs := range map[string][]*gpu.Device{
		"none": nil, "nil device": {two, nil}, "one device twice": {two, two},
	} {
		if _, err := NewGroup(ctx, devs); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("NewGroup(%s) = %v", name, err)
		}
	}
	if _, err := NewGroup(ctx, []*gpu.Device{two, mustDev(t, cpu.New(1))}, WithName("x")); err != nil {
		t.Errorf("NewGroup of two fresh devices = %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := NewGroup(cctx, cpuDevices(t, 2)); !errors.Is(err, context.Canceled) {
		t.Errorf("NewGroup with a cancelled context = %v", err)
	}
	if err := Group([]*Comm{c, nil}, func() error { return nil }); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Group with a nil communicator = %v", err)
	}
	// After Close.
	c.Close()
	if err := c.AllReduce(s, b, b, 4, f32, Sum); !errors.Is(err, ErrClosed) {
		t.Errorf("AllReduce after Close = %v", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
}

func mustDev(t testing.TB, bd *cpu.Device) *gpu.Device {
	d, err := gpu.NewDevice(bd)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestGroupSemantics: a failing group function drops its calls; nested groups launch
// with the outer one; calls of a group run after f returns.
func TestGroupSemantics(t *testing.T) {
	comms := cpuGroup(t, 2)
	r := newRig(t, comms)
	xs := []*gpu.Buffer{upload(t, comms[0].Device(), fill(16, 1)), upload(t, comms[1].Device(), fill(16, 2))}
	boom := errors.New("boom")
	err := Group(comms, func() error {
		for i, c := range comms {
			if err := c.AllReduce(r.streams[i], xs[i], xs[i], 4, dtype.Uint32, Sum); err != nil {
				return err
			}
		}
		return boom
	})
	if err != boom {
		t.Fatalf("Group = %v, want f's error", err)
	}
	for i, x := range xs {
		if got := readBack(t, x); !bytes.Equal(got, fill(16, byte(i+1))) {
			t.Fatalf("rank %d: a dropped group changed the buffer: %x", i, got)
		}
	}
	// Nested, one communicator per inner group; the inner calls wait for the outer end.
	err = Group(comms[:1], func() error {
		for i, c := range comms {
			err := c.Group(func() error {
				return c.AllReduce(r.streams[i], xs[i], xs[i], 4, dtype.Uint32, Sum)
			})
			if err != nil {
				return err
			}
		}
		// A nested group that fails drops its own calls only.
		if err := comms[0].Group(func() error {
			comms[0].AllReduce(r.streams[0], xs[0], xs[0], 4, dtype.Uint32, Sum)
			return boom
		}); err != boom {
			return fmt.Errorf("nested group = %v, want boom", err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for i, x := range xs {
		if got := readBack(t, x); !bytes.Equal(got, fill(16, 3)) {
			t.Fatalf("rank %d after a nested group: %x, want 03...", i, got)
		}
	}
	// The communicators are out of the group: single calls launch again.
	r.runSpec(t, spec{kind: opAllGather, t: dtype.Int8, count: 5, seed: 3}, true)
}

// TestCPUGroupStreams: a group whose calls on one rank use several streams behaves as
// NCCL's, as if posted on every stream: the collectives wait for the work enqueued on
// each stream before the group, and later work on each stream waits for them. Rank 0's
// second AllReduce is on stream B, whose input a 100 ms kernel on B writes first, and
// whose result B reads back after the group; the buffer is untracked, so that only the
// streams order these uses.
func TestCPUGroupStreams(t *testing.T) {
	const world = 2
	comms := cpuGroup(t, world)
	r := newRig(t, comms)
	d0 := comms[0].Device()
	sB, err := d0.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer sB.Close()
	k := conformance.Kernels(t, d0)
	const n = 1001
	sx := spec{kind: opAllReduce, t: dtype.Int32, count: n, red: Sum, seed: 11}
	sy := spec{kind: opAllReduce, t: dtype.Int32, count: n, red: Sum, seed: 12}
	xs, ys := make([][]byte, world), make([][]byte, world)
	xb, yb := make([]*gpu.Buffer, world), make([]*gpu.Buffer, world)
	for rank, c := range comms {
		xs[rank], ys[rank] = sx.input(rank, world), sy.input(rank, world)
		xb[rank] = upload(t, c.Device(), xs[rank])
		yb[rank] = upload(t, c.Device(), ys[rank])
	}
	// Rank 0's y starts poisoned; its input arrives through a slow copy on B.
	ysrc := yb[0]
	yb[0] = upload(t, d0, fill(4*n, 0xCD))
	if err := d0.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := yb[0].SetTracking(false); err != nil {
		t.Fatal(err)
	}
	if err := k.SpinCopyU32(sB, yb[0], ysrc, 100*time.Millisecond, nil); err != nil {
		t.Fatal(err)
	}
	err = Group(comms, func() error {
		for rank, c := range comms {
			sy := r.streams[rank]
			if rank == 0 {
				sy = sB
			}
			if err := c.AllReduce(r.streams[rank], xb[rank], xb[rank], n, dtype.Int32, Sum); err != nil {
				return err
			}
			if err := c.AllReduce(sy, yb[rank], yb[rank], n, dtype.Int32, Sum); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	got := fill(4*n, 0xEE)
	if err := sB.CopyDtoH(got, yb[0]); err != nil {
		t.Fatal(err)
	}
	if err, _ := waitErr(sB); err != nil {
		t.Fatal(err)
	}
	if want := sy.expected(0, ys); !bytes.Equal(got, want) {
		t.Errorf("rank 0's AllReduce on stream B, read back on B: %s", firstDiff(dtype.Int32, got, want))
	}
	for rank := range comms {
		if got, want := readBack(t, xb[rank]), sx.expected(rank, xs); !bytes.Equal(got, want) {
			t.Errorf("rank %d's AllReduce on its first stream: %s", rank, firstDiff(dtype.Int32, got, want))
		}
	}
}

// TestCPUGroupBufferOnTwoStreams: a group that uses one buffer on two streams is an
// error, as on CUDA, and launches nothing.
func TestCPUGroupBufferOnTwoStreams(t *testing.T) {
	comms := cpuGroup(t, 2)
	r := newRig(t, comms)
	sB, err := comms[0].Device().NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer sB.Close()
	xs := []*gpu.Buffer{upload(t, comms[0].Device(), fill(16, 1)), upload(t, comms[1].Device(), fill(16, 2))}
	err = Group(comms, func() error {
		for rank, c := range comms {
			for _, s := range []*gpu.Stream{r.streams[rank], sB} {
				if rank == 1 {
					s = r.streams[1]
				}
				if err := c.AllReduce(s, xs[rank], xs[rank], 4, dtype.Uint32, Sum); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("a group using a buffer on two streams = %v, want an error wrapping gpu.ErrInvalidValue", err)
	}
	for rank, x := range xs {
		if got := readBack(t, x); !bytes.Equal(got, fill(16, byte(rank+1))) {
			t.Fatalf("rank %d: the refused group changed the buffer: %x", rank, got)
		}
	}
	// Nothing was launched: the communicators go on.
	r.runSpec(t, spec{kind: opAllReduce, t: dtype.Uint32, count: 7, red: Max, seed: 5}, true)
}

// TestOverlapNotInPlace: send and receive buffers that overlap without the call's
// in-place layout are errors (NCCL leaves them undefined; the CPU ranks would race),
// returned by the call; buffers that share an allocation without overlapping, and the
// in-place layouts, are accepted. The calls are made in a group that is then dropped,
// so that nothing runs.
func TestOverlapNotInPlace(t *testing.T) {
	comms := cpuGroup(t, 2)
	c := comms[1] // rank 1: the in-place views are not at offset 0
	d := c.Device()
	s := d.DefaultStream()
	b := upload(t, d, fill(64, 7))
	v := func(off, n int64) *gpu.Buffer { return view(t, b, off, n) }
	const f32 = dtype.Float32
	boom := errors.New("boom")
	collect := func(call func() error) error {
		var callErr error
		if err := c.Group(func() error { callErr = call(); return boom }); err != boom {
			t.Fatalf("the dropped group = %v, want boom", err)
		}
		return callErr
	}
	bad := map[string]func() error{
		"AllReduce":                             func() error { return c.AllReduce(s, v(0, 16), v(8, 16), 4, f32, Sum) },
		"Broadcast on root":                     func() error { return c.Broadcast(s, v(4, 16), v(0, 16), 4, f32, 1) },
		"Reduce on root":                        func() error { return c.Reduce(s, v(0, 16), v(12, 16), 4, f32, Sum, 1) },
		"AllGather, send at rank 0's place":     func() error { return c.AllGather(s, v(0, 16), v(0, 32), 4, f32) },
		"AllGather, send straddling":            func() error { return c.AllGather(s, v(8, 16), v(0, 32), 4, f32) },
		"ReduceScatter, recv at rank 0's place": func() error { return c.ReduceScatter(s, v(0, 32), v(0, 16), 4, f32, Sum) },
		"ReduceScatter, recv straddling":        func() error { return c.ReduceScatter(s, v(0, 32), v(24, 16), 4, f32, Sum) },
	}
	for name, call := range bad {
		if err := collect(call); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("%s with overlapping buffers not in place: %v, want an error wrapping gpu.ErrInvalidValue", name, err)
		}
	}
	good := map[string]func() error{
		"AllReduce in place":      func() error { return c.AllReduce(s, v(0, 16), v(0, 16), 4, f32, Sum) },
		"AllReduce disjoint":      func() error { return c.AllReduce(s, v(0, 16), v(16, 16), 4, f32, Sum) },
		"Broadcast off the root":  func() error { return c.Broadcast(s, v(4, 16), v(0, 16), 4, f32, 0) },
		"Reduce off the root":     func() error { return c.Reduce(s, v(0, 16), v(12, 16), 4, f32, Sum, 0) },
		"AllGather in place":      func() error { return c.AllGather(s, v(16, 16), v(0, 32), 4, f32) },
		"AllGather disjoint":      func() error { return c.AllGather(s, v(32, 16), v(0, 32), 4, f32) },
		"ReduceScatter in place":  func() error { return c.ReduceScatter(s, v(0, 32), v(16, 16), 4, f32, Sum) },
		"ReduceScatter disjoint":  func() error { return c.ReduceScatter(s, v(0, 32), v(32, 16), 4, f32, Sum) },
		"AllReduce of 0 elements": func() error { return c.AllReduce(s, v(0, 16), v(8, 16), 0, f32, Sum) },
	}
	for name, call := range good {
		if err := collect(call); err != nil {
			t.Errorf("%s: %v, want no error", name, err)
		}
	}
	if got := readBack(t, b); !bytes.Equal(got, fill(64, 7)) {
		t.Fatalf("a dropped call changed the buffer: %x", got)
	}
}

// TestNilCommAndContext: a nil communicator and a nil context give errors wrapping
// gpu.ErrInvalidValue, not panics.
func TestNilCommAndContext(t *testing.T) {
	var c *Comm
	for name, err := range map[string]error{
		"Close": c.Close(), "Abort": c.Abort(), "Err": c.Err(),
		"Group": c.Group(func() error { return nil }),
	} {
		if !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("nil communicator: %s = %v, want an error wrapping gpu.ErrInvalidValue", name, err)
		}
	}
	if c.Rank() != 0 || c.World() != 0 || c.Device() != nil {
		t.Errorf("nil communicator: Rank %d, World %d, Device %v, want zero values", c.Rank(), c.World(), c.Device())
	}
	devs := cpuDevices(t, 2)
	var nilCtx context.Context // the nil context
	if _, err := NewGroup(nilCtx, devs); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewGroup(nil context) = %v", err)
	}
	id, err := NewUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := NewComm(nilCtx, devs[0], id, 0, 1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewComm(nil context) = %v", err)
	}
	for _, k := range []string{"RANK", "WORLD_SIZE", "LOCAL_RANK", "MASTER_ADDR", "MASTER_PORT"} {
		t.Setenv(k, "")
	}
	if _, err := FromEnv(nilCtx, devs[0]); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("FromEnv(nil context) = %v", err)
	}
	// The devices are usable: nothing was made with them.
	comms, err := NewGroup(context.Background(), devs)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	newRig(t, comms).runSpec(t, spec{kind: opBroadcast, t: dtype.Int64, count: 33, root: 1, seed: 9}, true)
}

// TestCPUAvgManyRanks: Avg of 1-byte integers on 128 and 256 ranks divides by world in
// 64 bits (int8(128) is -128 and uint8(256) is 0: the sum divided by those was wrong or
// faulted the device).
func TestCPUAvgManyRanks(t *testing.T) {
	if testing.Short() {
		t.Skip("hundreds of ranks")
	}
	for _, c := range []struct {
		world int
		t     dtype.DType
	}{{128, dtype.Int8}, {130, dtype.Int8}, {256, dtype.Uint8}} {
		comms := cpuGroup(t, c.world)
		r := newRig(t, comms)
		r.runSpec(t, spec{kind: opAllReduce, t: c.t, count: 33, red: Avg, seed: 5}, true)
	}
}

// TestCPUAbortAfterClose: Abort of a closed communicator (a deferred Abort after Close)
// leaves the other ranks alone.
func TestCPUAbortAfterClose(t *testing.T) {
	comms := cpuGroup(t, 2)
	if err := comms[0].Close(); err != nil {
		t.Fatal(err)
	}
	if err := comms[0].Abort(); err != nil {
		t.Fatal(err)
	}
	if err := comms[1].Err(); err != nil {
		t.Fatalf("rank 1 after rank 0's Close and Abort: %v", err)
	}
}

// TestGroupPanic: a panic inside Group's function drops its calls and ends the group:
// the communicators take later calls and groups as before.
func TestGroupPanic(t *testing.T) {
	comms := cpuGroup(t, 2)
	r := newRig(t, comms)
	func() {
		defer func() {
			if p := recover(); p != "boom" {
				t.Fatalf("recover() = %v, want the panic", p)
			}
		}()
		Group(comms, func() error { panic("boom") })
	}()
	sp := spec{kind: opAllReduce, t: dtype.Int32, count: 9, red: Sum, seed: 8}
	r.runSpec(t, sp, true) // (single calls, after the group)
	nested := func() {
		defer func() { recover() }()
		Group(comms, func() error {
			return Group(comms[:1], func() error { panic("inner") })
		})
	}
	nested()
	r.runSpec(t, sp, true)
}
