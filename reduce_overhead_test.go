package gpu

import (
	"testing"
	"time"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// A backend that reports itself as CUDA and does nothing, to measure the reductions'
// host-side cost per call (planning, allocation, argument building, tracking) without a
// GPU: BenchmarkReduceHostOverhead. The driver's cost (about 2-4 us per launch) comes
// on top on a real device.
type redNopDev struct{ cpu *cpu.Device }
type redNopStream struct{}
type redNopEvent struct{}
type redNopMem struct{ size int64 }
type redNopModule struct{}
type redNopFunc struct{ name string }

func (d redNopDev) Info() backend.Info {
	i := d.cpu.Info()
	i.Backend, i.ComputeMajor, i.ComputeMinor, i.Multiprocessors, i.WarpSize = "cuda", 9, 0, 132, 32
	return i
}
func (d redNopDev) NewStream() (backend.Stream, error)   { return redNopStream{}, nil }
func (d redNopDev) NewEvent(bool) (backend.Event, error) { return redNopEvent{}, nil }
func (d redNopDev) Alloc(k backend.MemKind, n int64, s backend.Stream) (backend.Mem, error) {
	return &redNopMem{n}, nil
}
func (d redNopDev) FreeNow(backend.Mem) error                                           { return nil }
func (d redNopDev) MemInfo() (int64, int64, error)                                      { return 1 << 40, 1 << 40, nil }
func (d redNopDev) TrimPool(int64) error                                                { return nil }
func (d redNopDev) LoadModule([]byte) (backend.Module, error)                           { return redNopModule{}, nil }
func (d redNopDev) Builtin(n string) (backend.Function, error)                          { return d.cpu.Builtin(n) }
func (d redNopDev) Synchronize() error                                                  { return nil }
func (d redNopDev) CanAccessPeer(backend.Device) (bool, error)                          { return true, nil }
func (d redNopDev) EnablePeerAccess(backend.Device) error                               { return nil }
func (redNopModule) Function(name string) (backend.Function, error)                     { return redNopFunc{name}, nil }
func (redNopModule) Unload() error                                                      { return nil }
func (f redNopFunc) Name() string                                                       { return f.name }
func (redNopStream) Launch(backend.Function, backend.LaunchConfig, []backend.Arg) error { return nil }
func (redNopStream) Memset(backend.Mem, int64, uint32, int, int64) error                { return nil }
func (redNopStream) Copy(backend.Mem, int64, backend.Mem, int64, int64) error           { return nil }
func (redNopStream) CopyFromHost(backend.Mem, int64, []byte) error                      { return nil }
func (redNopStream) CopyToHost([]byte, backend.Mem, int64) error                        { return nil }
func (redNopStream) Record(backend.Event) error                                         { return nil }
func (redNopStream) WaitEvent(backend.Event) error                                      { return nil }
func (redNopStream) Query() (bool, error)                                               { return true, nil }
func (redNopStream) Synchronize() error                                                 { return nil }
func (redNopStream) FreeAsync(backend.Mem) error                                        { return nil }
func (redNopStream) Destroy() error                                                     { return nil }
func (redNopEvent) Query() (bool, error)                                                { return true, nil }
func (redNopEvent) Synchronize() error                                                  { return nil }
func (redNopEvent) Elapsed(backend.Event) (time.Duration, error)                        { return 0, nil }
func (redNopEvent) Destroy() error                                                      { return nil }
func (m *redNopMem) Ptr() uint64                                                        { return 1 << 20 }
func (m *redNopMem) Size() int64                                                        { return m.size }
func (m *redNopMem) Kind() backend.MemKind                                              { return backend.DeviceMem }
func (m *redNopMem) Host() []byte                                                       { return nil }

// BenchmarkReduceHostOverhead measures one reduction call's host cost on a backend that
// does nothing, for Metal.jl's small shape (a (1000, 512) float32 array): one launch
// (axis 1) and two (axis 0, all elements; MapReduce).
func BenchmarkReduceHostOverhead(b *testing.B) {
	d, err := NewDevice(redNopDev{cpu.New(1)})
	if err != nil {
		b.Fatal(err)
	}
	s, _ := d.NewStream()
	x, _ := Empty[float32](s, 1000, 512)
	for _, c := range []struct {
		name string
		f    func() (*Array[float32], error)
	}{
		{"sum/axis=1", func() (*Array[float32], error) { return Sum[float32](s, x, Axes(1)) }},
		{"sum/axis=0", func() (*Array[float32], error) { return Sum[float32](s, x, Axes(0)) }},
		{"sum/all", func() (*Array[float32], error) { return Sum[float32](s, x) }},
		{"max/axis=1", func() (*Array[float32], error) { return Max(s, x, Axes(1)) }},
		{"mapreduce/all", func() (*Array[float32], error) { return MapReduce[float32](s, "x + 1", Vars{"x": x}, OpSum) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				r, err := c.f()
				if err != nil {
					b.Fatal(err)
				}
				r.Free()
			}
		})
	}
	b.Run("findmin/axis=1", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			v, i, err := FindMin(s, x, Axes(1))
			if err != nil {
				b.Fatal(err)
			}
			v.Free()
			i.Free()
		}
	})
}
