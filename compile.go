package gpu

import (
	"fmt"
	"sync"
	"sync/atomic"

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
	done atomic.Bool // once has run
	fn   *Function
	err  error
}

// keyAppender is a spec on a per-call path that can write its Key into a buffer, so
// that a cache hit allocates nothing (Key is then string(AppendKey(nil))).
type keyAppender interface {
	AppendKey(b []byte) []byte
}

// keyBufs holds the buffers keyAppenders write into.
var keyBufs = sync.Pool{New: func() any { b := make([]byte, 0, 64); return &b }}

// kernel returns the device's compiled kernel for sp, compiling it on first use (PTX
// generation and cuModuleLoadData on CUDA; the driver caches machine code on disk).
func (d *Device) kernel(sp kernelSpec) (*Function, error) {
	var e *kernelEntry
	key := ""
	if ka, ok := sp.(keyAppender); ok {
		bp := keyBufs.Get().(*[]byte)
		b := ka.AppendKey((*bp)[:0])
		d.kc.mu.Lock()
		if e = d.kc.m[string(b)]; e == nil { // the conversion in the index allocates nothing
			key = string(b)
			e = d.kc.add(key)
		}
		d.kc.mu.Unlock()
		*bp = b[:0]
		keyBufs.Put(bp)
	} else {
		key = sp.Key()
		d.kc.mu.Lock()
		if e = d.kc.m[key]; e == nil {
			e = d.kc.add(key)
		}
		d.kc.mu.Unlock()
	}
	if !e.done.Load() {
		// (Not cached: the kernel loads once the caller is out of the host function.)
		if err := d.moduleLoadAllowed(); err != nil {
			return nil, err
		}
	}
	e.once.Do(func() {
		if key == "" {
			key = sp.Key()
		}
		e.fn, e.err = d.compile(sp, key)
		e.done.Store(true)
	})
	return e.fn, e.err
}

// add makes the entry of key; c.mu is held.
func (c *kernelCache) add(key string) *kernelEntry {
	if c.m == nil {
		c.m = map[string]*kernelEntry{}
	}
	e := &kernelEntry{}
	c.m[key] = e
	return e
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
