package gpu_test

import (
	"sync"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/ptxsim/simdev"
)

// simGPU returns the simulated CUDA device (internal/ptxsim/simdev) the tests run the
// CUDA path on without a GPU: the planners, the generated PTX, launch geometry,
// counters and scratch. It has 2 multiprocessors.
var simGPU = sync.OnceValues(func() (*gpu.Device, error) { return gpu.NewDevice(simdev.New(2)) })

// simStream returns a new stream of the simulated device, closed when t ends.
func simStream(t *testing.T) (*gpu.Device, *gpu.Stream) {
	t.Helper()
	d, err := simGPU()
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return d, s
}
