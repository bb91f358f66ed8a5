package gpu

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/go-gpu/gpu/backend/cpu"
)

// TestSlowSyncCount checks the word Device.Synchronize's idle path reads for every
// reason to take its full path: the race checker while on, a host function while it
// runs, launch checks while pending (and a pending check's failure reported by a wait
// of an idle device), and work the device can't count once a backend stream is out.
func TestSlowSyncCount(t *testing.T) {
	ctx := context.Background()
	d, err := NewDevice(cpu.New(2))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	want := func(what string, n int64) {
		t.Helper()
		if got := d.slowSync.Load(); got != n {
			t.Fatalf("%s: slowSync %d, want %d", what, got, n)
		}
	}
	want("new device", 0)
	if err := d.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}

	d.SetRaceCheck(true)
	want("race checker on", 1)
	d.SetRaceCheck(true)
	want("race checker on twice", 1)
	d.SetRaceCheck(false)
	want("race checker off", 0)
	d.SetRaceCheck(false)
	want("race checker off twice", 0)

	inside := int64(-1)
	if err := s.HostFunc(func() error { inside = d.slowSync.Load(); return nil }); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	if inside != 1 {
		t.Fatalf("slowSync %d inside a host function, want 1", inside)
	}
	want("after a host function", 0)
	if err := d.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
	if d.pend.Load() != d.idleAt.Load() {
		t.Fatal("the device isn't idle after Device.Synchronize")
	}

	// Two checks pending, one with a failure: the device is idle (nothing enqueued),
	// and Device.Synchronize must still report it, once.
	boom := errors.New("recorded failure")
	for _, fail := range []bool{false, true} {
		slot, err := s.checkSlot()
		if err != nil {
			t.Fatal(err)
		}
		if fail {
			binary.LittleEndian.PutUint64(hostBytes(slot), 7)
		}
		s.addCheck(slot, func(b []byte) error {
			if binary.LittleEndian.Uint64(b) != 0 {
				return boom
			}
			return nil
		})
		want("checks pending", 1)
	}
	if err := d.Synchronize(ctx); !errors.Is(err, boom) {
		t.Fatalf("Device.Synchronize with a failed check pending: %v, want %v", err, boom)
	}
	want("checks reported", 0)
	if err := d.Synchronize(ctx); err != nil {
		t.Fatalf("the second Device.Synchronize: %v, want nil (reported once)", err)
	}

	s.BackendStream()
	want("a backend stream handed out", 1)
	s.BackendStream()
	want("a second backend stream handed out", 1)
	if err := d.Synchronize(ctx); err != nil {
		t.Fatal(err)
	}
}
