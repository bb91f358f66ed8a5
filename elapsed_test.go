package gpu_test

import (
	"context"
	"errors"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
)

// TestElapsedTwoDevices: Elapsed of events of two devices (two CPU devices here; on
// CUDA, two contexts) is an error wrapping ErrInvalidValue, their clocks being apart;
// of one device's, a duration.
func TestElapsedTwoDevices(t *testing.T) {
	var evs [2][2]*gpu.Event
	for i := range evs {
		d, err := gpu.NewDevice(cpu.New(1))
		if err != nil {
			t.Fatal(err)
		}
		s := d.DefaultStream()
		for j := range evs[i] {
			if evs[i][j], err = d.NewEvent(); err != nil {
				t.Fatal(err)
			}
			if err := s.Record(evs[i][j]); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Synchronize(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if el, err := gpu.Elapsed(evs[0][0], evs[0][1]); err != nil || el < 0 {
		t.Fatalf("Elapsed of one device's events: %v, %v", el, err)
	}
	if el, err := gpu.Elapsed(evs[0][0], evs[1][1]); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("Elapsed of two devices' events: %v, %v; want ErrInvalidValue", el, err)
	}
}
