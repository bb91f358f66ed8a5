package conformance_test

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
	"github.com/go-gpu/gpu/internal/ptxsim/simdev"
)

func TestCPU(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, d)
}

func TestCPUFault(t *testing.T) {
	d, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunFault(t, d)
}

func openCUDA(t *testing.T) *gpu.Device {
	d, err := gpu.OpenBackend("cuda", 0)
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skipf("no CUDA device, skipping the CUDA conformance run: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestCUDA(t *testing.T) {
	conformance.Run(t, openCUDA(t))
}

// TestCUDAFault runs the fault test in a child process: a CUDA fault is sticky for the
// whole process.
func TestCUDAFault(t *testing.T) {
	if os.Getenv("GPU_CONFORMANCE_FAULT_CHILD") == "1" {
		conformance.RunFault(t, openCUDA(t))
		return
	}
	openCUDA(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestCUDAFault$", "-test.v")
	cmd.Env = append(os.Environ(), "GPU_CONFORMANCE_FAULT_CHILD=1")
	out, err := cmd.CombinedOutput()
	t.Logf("child process:\n%s", out)
	if err != nil || !strings.Contains(string(out), "--- PASS: TestCUDAFault") {
		t.Fatalf("the fault test failed in its child process: %v", err)
	}
}

func TestCPUGraphs(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunGraphs(t, d)
}

func TestCUDAGraphs(t *testing.T) {
	conformance.RunGraphs(t, openCUDA(t))
}

func TestCPURace(t *testing.T) {
	d, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	conformance.RunRace(t, d)
}

func TestCUDARace(t *testing.T) {
	conformance.RunRace(t, openCUDA(t))
}

// TestCPURaceChecked runs the whole suite with the race checker on: no report.
func TestCPURaceChecked(t *testing.T) {
	if testing.Short() {
		t.Skip("the whole suite again (-short)")
	}
	d, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	conformance.FailOnRace(t, d)
	conformance.Run(t, d)
	conformance.RunGraphs(t, d)
}

// TestCUDARaceChecked runs the whole suite on CUDA with the race checker on: no report.
func TestCUDARaceChecked(t *testing.T) {
	d := openCUDA(t)
	conformance.FailOnRace(t, d)
	conformance.Run(t, d)
	conformance.RunGraphs(t, d)
}

// TestSim runs the suite on the CUDA path of the PTX simulator (internal/ptxsim's
// simdev): the generated kernels, launch geometry and scratch without a GPU.
func TestSim(t *testing.T) {
	if testing.Short() {
		t.Skip("the simulator is slow")
	}
	d, err := gpu.NewDevice(simdev.New(2))
	if err != nil {
		t.Fatal(err)
	}
	conformance.Run(t, d)
}
