package gpu

import (
	"testing"
	"time"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// nopDev is a backend whose operations do nothing: BenchmarkHostOverhead measures the
// runtime's own host-side cost per operation with it (the driver's cost comes on top).
type nopDev struct{ cpu *cpu.Device }
type nopStream struct{}
type nopEvent struct{}
type nopMem struct{ size int64 }

func (d nopDev) Info() backend.Info                   { i := d.cpu.Info(); i.Backend = "cpu"; return i }
func (d nopDev) NewStream() (backend.Stream, error)   { return nopStream{}, nil }
func (d nopDev) NewEvent(bool) (backend.Event, error) { return nopEvent{}, nil }
func (d nopDev) Alloc(k backend.MemKind, n int64, s backend.Stream) (backend.Mem, error) {
	return &nopMem{n}, nil
}
func (d nopDev) FreeNow(backend.Mem) error                                           { return nil }
func (d nopDev) MemInfo() (int64, int64, error)                                      { return 1 << 40, 1 << 40, nil }
func (d nopDev) TrimPool(int64) error                                                { return nil }
func (d nopDev) LoadModule([]byte) (backend.Module, error)                           { return nil, nil }
func (d nopDev) Builtin(n string) (backend.Function, error)                          { return d.cpu.Builtin(n) }
func (d nopDev) Synchronize() error                                                  { return nil }
func (d nopDev) CanAccessPeer(backend.Device) (bool, error)                          { return true, nil }
func (d nopDev) EnablePeerAccess(backend.Device) error                               { return nil }
func (nopStream) Launch(backend.Function, backend.LaunchConfig, []backend.Arg) error { return nil }
func (nopStream) Memset(backend.Mem, int64, uint32, int, int64) error                { return nil }
func (nopStream) Copy(backend.Mem, int64, backend.Mem, int64, int64) error           { return nil }
func (nopStream) CopyFromHost(backend.Mem, int64, []byte) error                      { return nil }
func (nopStream) CopyToHost([]byte, backend.Mem, int64) error                        { return nil }
func (nopStream) Record(backend.Event) error                                         { return nil }
func (nopStream) WaitEvent(backend.Event) error                                      { return nil }
func (nopStream) Query() (bool, error)                                               { return true, nil }
func (nopStream) Synchronize() error                                                 { return nil }
func (nopStream) FreeAsync(backend.Mem) error                                        { return nil }
func (nopStream) Destroy() error                                                     { return nil }
func (nopEvent) Query() (bool, error)                                                { return true, nil }
func (nopEvent) Synchronize() error                                                  { return nil }
func (nopEvent) Elapsed(backend.Event) (time.Duration, error)                        { return 0, nil }
func (nopEvent) Destroy() error                                                      { return nil }
func (m *nopMem) Ptr() uint64                                                        { return 1 << 20 }
func (m *nopMem) Size() int64                                                        { return m.size }
func (m *nopMem) Kind() backend.MemKind                                              { return backend.DeviceMem }
func (m *nopMem) Host() []byte                                                       { return nil }

func BenchmarkHostOverhead(b *testing.B) {
	d, _ := NewDevice(nopDev{cpu.New(1)})
	s, _ := d.NewStream()
	x, _ := Empty[float32](s, 64)
	y, _ := Empty[float32](s, 64)
	k := NewKernel[float32]("x + 1", "x")
	add, _ := d.Builtin("add_u32")
	b.Run("kernel", func(b *testing.B) {
		for b.Loop() {
			if err := k.Into(s, y, x); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("eval", func(b *testing.B) {
		for b.Loop() {
			if err := EvalInto(s, y, "x + 1", Vars{"x": x}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("launch", func(b *testing.B) {
		cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 64}}
		for b.Loop() {
			if err := s.Launch(add, cfg, Out(y), In(x), uint32(1), uint64(64)); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("access", func(b *testing.B) {
		for b.Loop() {
			if err := x.buf.Access(s, Read, func(DevicePtr) error { return nil }); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("construct", func(b *testing.B) {
		// gpubench's array/construct: an 8-byte array from the stream's block cache.
		b.ReportAllocs()
		for b.Loop() {
			a, err := Empty[int64](s, 1)
			if err != nil {
				b.Fatal(err)
			}
			if err := a.Free(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("launch/untracked", func(b *testing.B) {
		// The same launch with raw pointers: the difference to "launch" is the tracking.
		cfg := LaunchConfig{Grid: Dim3{X: 1}, Block: Dim3{X: 64}}
		var px, py DevicePtr
		x.buf.Access(s, Read, func(p DevicePtr) error { px = p; return nil })
		y.buf.Access(s, Read, func(p DevicePtr) error { py = p; return nil })
		for b.Loop() {
			if err := s.Launch(add, cfg, py, px, uint32(1), uint64(64)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
