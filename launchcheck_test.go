package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
)

// checkFailPTX is a kernel that records a failure as package gokernel's kernels do
// (claim in word 1, the value in word 2, the flag in word 0 last) from thread 3 of
// block 0 when its argument v is not zero.
const checkFailPTX = `.version 7.0
.target sm_75
.address_size 64
.visible .entry fail(.param .u64 v, .param .u64 slot)
{
	.reg .u64 %rd<3>;
	.reg .u32 %r<4>;
	.reg .pred %p<2>;
	ld.param.u64 %rd1, [v];
	ld.param.u64 %rd2, [slot];
	mov.u32 %r1, %tid.x;
	setp.ne.u32 %p1, %r1, 3;
	@%p1 bra DONE;
	setp.eq.u64 %p1, %rd1, 0;
	@%p1 bra DONE;
	atom.cas.b32 %r2, [%rd2+4], 0, 1;
	setp.ne.u32 %p1, %r2, 0;
	@%p1 bra DONE;
	cvt.u32.u64 %r3, %rd1;
	st.u32 [%rd2+8], %r3;
	membar.sys;
	st.volatile.u32 [%rd2], 7;
DONE:
	ret;
}
`

// checkFailFunc returns the device's version of checkFailPTX.
func checkFailFunc(t *testing.T, d *gpu.Device) *gpu.Function {
	t.Helper()
	if d.Backend() != "cpu" {
		mod, err := d.LoadModule([]byte(checkFailPTX))
		if err != nil {
			t.Fatal(err)
		}
		fn, err := mod.Function("fail")
		if err != nil {
			t.Fatal(err)
		}
		return fn
	}
	fn, err := gpu.NewGoFunction(d, "fail", func(l *cpu.Launch) error {
		v := l.Uint64(0)
		if v == 0 {
			return nil
		}
		w := cpu.Slice[uint32](l.Mem(1))
		for range 8 { // threads 0..7 of the block: 3 fails
			if atomic.CompareAndSwapUint32(&w[1], 0, 1) {
				atomic.StoreUint32(&w[2], uint32(v))
				atomic.StoreUint32(&w[0], 7)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return fn
}

// TestLaunchChecked launches a kernel that records a failure in its check slot and
// checks that the waits covering the launch report it once, decoded and wrapping
// ErrKernelFailure, that the waits that don't cover it don't, and that the device
// stays usable.
func TestLaunchChecked(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		ctx := context.Background()
		fn := checkFailFunc(t, d)
		var decodes atomic.Int32
		decode := func(w []uint32) error {
			decodes.Add(1)
			if len(w) != gpu.CheckSlotWords || w[1] != 1 {
				return fmt.Errorf("slot %v", w)
			}
			return fmt.Errorf("site %d value %d", w[0], w[2])
		}
		cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 8}}
		s2, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		for _, wait := range []struct {
			name string
			f    func() error
		}{
			{"stream", func() error { return s.Synchronize(ctx) }},
			{"device", func() error { return d.Synchronize(ctx) }},
			{"read", func() error {
				a, err := gpu.Full[float32](s, 1.5, 4)
				if err != nil {
					return err
				}
				defer a.Free()
				_, err = a.ToSlice(ctx)
				return err
			}},
		} {
			if err := s.LaunchChecked(fn, cfg, decode, uint64(42)); err != nil {
				t.Fatal(err)
			}
			// Waits that don't cover the launch don't report it.
			if err := s2.Synchronize(ctx); err != nil {
				t.Errorf("%s: another stream's wait returned %v", wait.name, err)
			}
			err := wait.f()
			if !errors.Is(err, gpu.ErrKernelFailure) || err.Error() != "gpu: kernel failure: site 7 value 42" {
				t.Errorf("%s: the first wait returned %v", wait.name, err)
			}
			if err := s.Synchronize(ctx); err != nil {
				t.Errorf("%s: the second wait returned %v", wait.name, err)
			}
			if err := d.Err(); err != nil {
				t.Errorf("%s: the device is faulted: %v", wait.name, err)
			}
		}
		if n := decodes.Swap(0); n != 3 {
			t.Errorf("%d decodes, want 3", n)
		}

		// Launches that record nothing, more than the pending list keeps, then two
		// failures: one wait reports both, in launch order, and decodes only them.
		for range 150 {
			if err := s.LaunchChecked(fn, cfg, decode, uint64(0)); err != nil {
				t.Fatal(err)
			}
		}
		for _, v := range []uint64{1, 2} {
			if err := s.LaunchChecked(fn, cfg, decode, v); err != nil {
				t.Fatal(err)
			}
		}
		err = s.Synchronize(ctx)
		if want := "gpu: kernel failure: site 7 value 1\ngpu: kernel failure: site 7 value 2"; err == nil || err.Error() != want {
			t.Errorf("two failures: %v, want %q", err, want)
		}
		if n := decodes.Swap(0); n != 2 {
			t.Errorf("%d decodes, want 2", n)
		}

		// A decoder that finds no failure, and one whose error wraps ErrKernelFailure
		// already.
		if err := s.LaunchChecked(fn, cfg, func([]uint32) error { return nil }, uint64(5)); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(ctx); err != nil {
			t.Errorf("a decoder's nil: %v", err)
		}
		mine := fmt.Errorf("mine: %w", gpu.ErrKernelFailure)
		if err := s.LaunchChecked(fn, cfg, func([]uint32) error { return mine }, uint64(5)); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(ctx); err != mine {
			t.Errorf("a decoder's own ErrKernelFailure: %v", err)
		}

		// An index error and a kernel failure covered by one wait: both reported.
		src := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3}))
		defer src.Free()
		idx := mustArr[int32](t)(gpu.FromSlice(s, []int32{0, 3}))
		defer idx.Free()
		r, err := gpu.Take(s, src, idx)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Free()
		if err := s.LaunchChecked(fn, cfg, decode, uint64(9)); err != nil {
			t.Fatal(err)
		}
		err = d.Synchronize(ctx)
		if !errors.Is(err, gpu.ErrIndexOutOfRange) || !errors.Is(err, gpu.ErrKernelFailure) {
			t.Errorf("an index error and a kernel failure: %v", err)
		}
		if err := d.Synchronize(ctx); err != nil {
			t.Errorf("the second wait: %v", err)
		}

		if err := s.LaunchChecked(fn, cfg, nil, uint64(1)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("no decoder: %v", err)
		}
		if err := s.LaunchChecked(nil, cfg, decode, uint64(1)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("a nil function: %v", err)
		}
		if err := s.Synchronize(ctx); err != nil {
			t.Errorf("after the refused launches: %v", err)
		}
	})
}
