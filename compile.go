package gpu

import (
	"fmt"
	"sync"

	"github.com/go-gpu/gpu/backend/cpu"
)

// kernelSpec is what the array layer compiles: a backend-neutral kernel description
// (package internal/kernel) with a key, a CPU implementation and, for CUDA, PTX.
type kernelSpec interface {
	Key() string
	CPU() (func(*cpu.Launch) error, error)
}

type ptxSpec interface {
	PTX(major, minor int) (src, entry string, err error)
}

type geometrySpec interface {
	Geometry(n, multiprocessors int) (grid, block int)
}

// kernelCache maps a spec's key to its compiled kernel, per device.
type kernelCache struct {
	mu sync.Mutex
	m  map[string]*kernelEntry
}

type kernelEntry struct {
	once sync.Once
	fn   *Function
	err  error
}

// kernel returns the device's compiled kernel for sp, compiling it on first use (PTX
// generation and cuModuleLoadData on CUDA; the driver caches machine code on disk).
func (d *Device) kernel(sp kernelSpec) (*Function, error) {
	key := sp.Key()
	d.kc.mu.Lock()
	if d.kc.m == nil {
		d.kc.m = map[string]*kernelEntry{}
	}
	e := d.kc.m[key]
	if e == nil {
		e = &kernelEntry{}
		d.kc.m[key] = e
	}
	d.kc.mu.Unlock()
	e.once.Do(func() { e.fn, e.err = d.compile(sp, key) })
	return e.fn, e.err
}

func (d *Device) compile(sp kernelSpec, key string) (*Function, error) {
	switch d.info.Backend {
	case "cpu":
		f, err := sp.CPU()
		if err != nil {
			return nil, err
		}
		return NewGoFunction(d, key, f)
	case "cuda":
		p, ok := sp.(ptxSpec)
		if !ok {
			return nil, fmt.Errorf("gpu: kernel %s has no CUDA implementation yet: %w", key, ErrNotSupported)
		}
		src, entry, err := p.PTX(d.info.ComputeMajor, d.info.ComputeMinor)
		if err != nil {
			return nil, err
		}
		mod, err := d.LoadModule([]byte(src))
		if err != nil {
			return nil, fmt.Errorf("gpu: loading kernel %s: %w", key, err)
		}
		return mod.Function(entry)
	}
	return nil, fmt.Errorf("gpu: no kernels for backend %s: %w", d.info.Backend, ErrNotSupported)
}

// geometry returns the launch for a kernel over n elements.
func (d *Device) geometry(sp kernelSpec, n int) LaunchConfig {
	grid, block := 0, 256
	if g, ok := sp.(geometrySpec); ok {
		grid, block = g.Geometry(n, d.info.Multiprocessors)
	}
	if grid <= 0 {
		grid = max(1, min((n+block-1)/block, 8*max(1, d.info.Multiprocessors)))
	}
	return LaunchConfig{Grid: Dim3{X: grid}, Block: Dim3{X: block}}
}
