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

// TestFaultRecord records a failure from a CPU kernel as a device kernel would and
// checks that the next wait, and only it, returns it, with the device still usable.
func TestFaultRecord(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rec, err := d.NewFaultRecord(4, func(w []uint32) error { return fmt.Errorf("site %d value %d", w[0], w[2]) })
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.NewFaultRecord(1, func([]uint32) error { return nil }); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("a 1-word record: %v", err)
	}
	var zero gpu.FaultRecord
	if err := zero.Check(); !errors.Is(err, gpu.ErrInvalidValue) || zero.Ptr() != 0 || zero.Words() != nil {
		t.Errorf("the zero FaultRecord: %v, %v, %v", err, zero.Ptr(), zero.Words())
	}
	if err := rec.Check(); err != nil {
		t.Errorf("a fresh record: %v", err)
	}
	fail := func(l *cpu.Launch) error {
		w := cpu.Slice[uint32](l.Mem(0))
		if atomic.CompareAndSwapUint32(&w[1], 0, 1) {
			atomic.StoreUint32(&w[2], uint32(l.Uint64(1)))
			atomic.StoreUint32(&w[0], 7)
		}
		return nil
	}
	fn, err := gpu.NewGoFunction(d, "fail", fail)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	for _, wait := range []struct {
		name string
		f    func() error
	}{
		{"stream", func() error { return s.Synchronize(ctx) }},
		{"device", func() error { return d.Synchronize(ctx) }},
		{"read", func() error {
			a, err := gpu.Zeros[float32](s, 4)
			if err != nil {
				return err
			}
			_, err = a.ToSlice(ctx)
			return err
		}},
	} {
		if err := s.Launch(fn, cfg, rec.Ptr(), uint64(42)); err != nil {
			t.Fatal(err)
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
}
