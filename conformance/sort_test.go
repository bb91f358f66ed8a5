package conformance_test

import (
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/conformance"
)

// The sorting and selection suite (conformance.RunSort) on the CPU and on CUDA.

func TestCPUSort(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunSort(t, d)
}

func TestCUDASort(t *testing.T) {
	conformance.RunSort(t, openCUDA(t))
}
