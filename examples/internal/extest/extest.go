// Package extest holds what the examples' tests share: running a check on every
// device there is (the CPU backend always, CUDA device 0 where a driver and a device
// are found) and comparing results with plain-Go references.
package extest

import (
	"errors"
	"fmt"
	"math"
	"os"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/gputest"
)

// Main is the TestMain of a package whose tests use ForDevices: on a machine without a
// CUDA device it says once that their CUDA runs skip, and why (gputest.Note), then
// runs the tests and exits with their status.
func Main(m *testing.M, pkg string) {
	gputest.Note(pkg, "the CUDA runs of the tests skip; the CPU backend runs them all", 1)
	os.Exit(m.Run())
}

// Devices returns the CPU backend and, where there is one, CUDA device 0. A CUDA error
// other than gpu.ErrNoDevice fails the test.
func Devices(t testing.TB) []*gpu.Device {
	t.Helper()
	cpu, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []*gpu.Device{cpu}
	if d, err := gpu.OpenBackend("cuda", 0); err == nil {
		out = append(out, d)
	} else if !errors.Is(err, gpu.ErrNoDevice) {
		t.Fatal(err)
	}
	return out
}

// ForDevices runs f as a subtest named after each device's backend, on a new stream
// of that device (closed afterwards).
func ForDevices(t *testing.T, f func(t *testing.T, s *gpu.Stream)) {
	t.Helper()
	for _, d := range Devices(t) {
		t.Run(d.Backend(), func(t *testing.T) {
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f(t, s)
		})
	}
}

// Close reports whether got is within tol of want, relative to max(1, |want|).
func Close(got, want, tol float64) bool {
	return math.Abs(got-want) <= tol*math.Max(1, math.Abs(want))
}

// MaxRelErr returns the largest |got[i]-want[i]| / max(floor, |want[i]|) and its index;
// an error when the lengths differ or got has a NaN where want doesn't.
func MaxRelErr[T, U ~float32 | ~float64](got []T, want []U, floor float64) (float64, int, error) {
	if len(got) != len(want) {
		return 0, 0, fmt.Errorf("%d values, want %d", len(got), len(want))
	}
	worst, at := 0.0, -1
	for i := range got {
		g, w := float64(got[i]), float64(want[i])
		if math.IsNaN(g) != math.IsNaN(w) {
			return math.Inf(1), i, fmt.Errorf("element %d: %v, want %v", i, g, w)
		}
		if e := math.Abs(g-w) / math.Max(floor, math.Abs(w)); e > worst {
			worst, at = e, i
		}
	}
	return worst, at, nil
}
