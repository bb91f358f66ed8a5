//go:build unix

package conformance_test

import (
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/conformance"
)

// The race checker's cost on the conformance suite (issue #22), on demand:
//
//	GPU_RACE_COST=1 go test -run '^TestCUDARaceCost$' -v ./conformance
//
// runs the whole suite (Run and RunGraphs) on one device four times, the race checker
// off, on, off, on (the first pass also warms the kernel caches: compare the last
// three), failing on any race report while it is on, and logs each pass's wall and
// process CPU time and the ratios of the on passes to the off pass before them. The
// suite's wall time includes its own sleeps and spins (the same in every pass); its
// CPU time is where the checker's recording (a stack per access) shows. Nothing is
// asserted about the times. TestCPURaceCost does the same on the CPU backend.

// raceCostPasses is the race checker's setting in each pass.
var raceCostPasses = []bool{false, true, false, true}

func raceCost(t *testing.T, d *gpu.Device) {
	if os.Getenv("GPU_RACE_COST") != "1" {
		t.Skip("set GPU_RACE_COST=1 to measure the race checker's cost on the suite")
	}
	var wall, cpuT [4]time.Duration
	for i, on := range raceCostPasses {
		name := "off"
		if on {
			name = "on"
		}
		c0, t0 := processCPU(), time.Now()
		t.Run(name, func(t *testing.T) {
			if on {
				conformance.FailOnRace(t, d)
			}
			conformance.Run(t, d)
			conformance.RunGraphs(t, d)
		})
		wall[i], cpuT[i] = time.Since(t0), processCPU()-c0
		t.Logf("pass %d, race checker %s: wall %v, process CPU %v", i+1, name, wall[i].Round(time.Millisecond), cpuT[i].Round(time.Millisecond))
	}
	for _, i := range []int{1, 3} {
		t.Logf("race checker on/off (passes %d/%d): wall %.3f, process CPU %.3f", i+1, i,
			wall[i].Seconds()/wall[i-1].Seconds(), cpuT[i].Seconds()/cpuT[i-1].Seconds())
	}
}

// processCPU returns the process's user and system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func TestCUDARaceCost(t *testing.T) {
	if os.Getenv("GPU_RACE_COST") != "1" {
		t.Skip("set GPU_RACE_COST=1 to measure the race checker's cost on the suite")
	}
	raceCost(t, openCUDA(t))
}

func TestCPURaceCost(t *testing.T) {
	if os.Getenv("GPU_RACE_COST") != "1" {
		t.Skip("set GPU_RACE_COST=1 to measure the race checker's cost on the suite")
	}
	d, err := gpu.NewDevice(cpu.New(0))
	if err != nil {
		t.Fatal(err)
	}
	raceCost(t, d)
}
