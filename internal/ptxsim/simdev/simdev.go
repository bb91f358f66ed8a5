// Package simdev is a fake CUDA device for tests: a CPU backend device (backend/cpu:
// memory, streams, events, built-in kernels) that reports itself as a CUDA device of
// compute capability 9.0 and runs the PTX modules it loads on the simulator
// (internal/ptxsim) over its own memory. Through it, the array layer's whole CUDA path
// (planning, the kernels' PTX, launch geometry, scratch and counters) runs in tests on
// a machine without a GPU:
//
//	d, err := gpu.NewDevice(simdev.New(2))
//
// A kernel's fault (a bad access, a deadlock, a shared-memory hazard) fails its launch
// with an error wrapping backend.ErrLaunchFailed and, as on CUDA, leaves the device
// faulted.
package simdev

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/internal/ptxsim"
)

// Device is the simulated CUDA device.
type Device struct {
	*cpu.Device
	sms int
	// Resident is how many blocks of a launch run at once (ptxsim.Config.Resident).
	Resident int
}

// New returns a simulated device with sms multiprocessors (what the planners size
// grids by), running 2*sms blocks at once.
func New(sms int) *Device {
	return &Device{Device: cpu.New(2), sms: sms, Resident: 2 * sms}
}

// Info describes the device as CUDA, compute capability 9.0, warps of 32 threads.
func (d *Device) Info() backend.Info {
	i := d.Device.Info()
	i.Backend, i.Name = "cuda", "PTX simulator"
	i.ComputeMajor, i.ComputeMinor = 9, 0
	i.Multiprocessors = d.sms
	i.WarpSize = 32
	return i
}

// LoadModule parses a PTX module (cubin images are not supported).
func (d *Device) LoadModule(image []byte) (backend.Module, error) {
	m, err := ptxsim.Parse(string(image))
	if err != nil {
		return nil, fmt.Errorf("simdev: %w: %w", err, backend.ErrInvalidValue)
	}
	return &module{d: d, m: m}, nil
}

type module struct {
	d *Device
	m *ptxsim.Module
}

// Function returns a kernel of the module, launched through the CPU device's streams.
func (m *module) Function(name string) (backend.Function, error) {
	f := m.m.Func(name)
	if f == nil || !f.Entry {
		return nil, fmt.Errorf("simdev: no kernel %q: %w", name, backend.ErrInvalidValue)
	}
	return cpu.NewFunc(name, func(l *cpu.Launch) error { return m.d.launch(f, l) }), nil
}

func (m *module) Unload() error { return nil }

// emptyAddr is the address passed for an empty allocation (never dereferenced).
const emptyAddr = 0x10

// launch runs f on the simulator over the memory of the launch's arguments.
func (d *Device) launch(f *ptxsim.Func, l *cpu.Launch) error {
	if len(l.Args) != len(f.Params) {
		return fmt.Errorf("simdev: %s: %d arguments for %d parameters: %w", f.Name, len(l.Args), len(f.Params), backend.ErrLaunchFailed)
	}
	mem := &ptxsim.Regions{}
	mapped := map[uint64]bool{}
	params := make([][]byte, len(l.Args))
	for i, a := range l.Args {
		var p []byte
		switch {
		case a.Kind == backend.ArgScalar && a.Blob != nil:
			p = a.Blob
		case a.Kind == backend.ArgScalar:
			p = binary.LittleEndian.AppendUint64(nil, a.Val)[:a.Size]
		case a.Kind == backend.ArgPtr && a.Val == 0:
			p = make([]byte, 8)
		default:
			full, off := l.MemAt(i)
			addr := uint64(emptyAddr)
			if len(full) > 0 {
				base := uint64(uintptr(unsafe.Pointer(&full[0])))
				if !mapped[base] {
					mapped[base] = true
					mem.Map(base, full)
				}
				addr = base + uint64(off)
			}
			p = binary.LittleEndian.AppendUint64(nil, addr)
		}
		if len(p) != f.Params[i].Size {
			return fmt.Errorf("simdev: %s: argument %d is %d bytes, parameter %s %d: %w", f.Name, i, len(p), f.Params[i].Name, f.Params[i].Size, backend.ErrLaunchFailed)
		}
		params[i] = p
	}
	cfg := ptxsim.Config{Grid: l.Grid, Block: l.Block, SharedMem: int(l.SharedMem), Resident: d.Resident}
	if err := f.LaunchParams(mem, cfg, params); err != nil {
		return fmt.Errorf("simdev: %w: %w", err, backend.ErrLaunchFailed)
	}
	return nil
}
