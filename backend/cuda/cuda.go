package cuda

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda/cu"
)

var (
	devMu   sync.Mutex
	devices = map[int]*Device{}
)

// DeviceCount returns the number of CUDA devices; an error wrapping
// backend.ErrNoDevice if there is no driver or no device.
func (Backend) DeviceCount() (int, error) {
	if err := cu.Load(); err != nil {
		return 0, err
	}
	n, err := cu.DeviceCount()
	if err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, fmt.Errorf("cuda: the driver reports no device: %w", backend.ErrNoDevice)
	}
	return n, nil
}

// Open retains device ordinal's primary context. Every Open of one ordinal returns the
// same device.
func (b Backend) Open(ordinal int) (backend.Device, error) {
	n, err := b.DeviceCount()
	if err != nil {
		return nil, err
	}
	if ordinal < 0 || ordinal >= n {
		return nil, fmt.Errorf("cuda: device %d of %d: %w", ordinal, n, backend.ErrNoDevice)
	}
	devMu.Lock()
	defer devMu.Unlock()
	if d := devices[ordinal]; d != nil {
		return d, nil
	}
	d, err := open(ordinal)
	if err != nil {
		return nil, err
	}
	devices[ordinal] = d
	return d, nil
}

// Device is a CUDA device and its primary context.
type Device struct {
	dev  cu.Device
	ctx  cu.Context
	pool cu.MemPool
	info backend.Info

	builtinOnce sync.Once
	builtinErr  error
	builtinMod  backend.Module

	// replayCaptures is held for reading by each capture of a repeated product
	// (gemm_replay.go) and for writing by a context-wide synchronize (syncDevice).
	replayCaptures sync.RWMutex
}

func open(ordinal int) (*Device, error) {
	dev, err := cu.DeviceGet(ordinal)
	if err != nil {
		return nil, err
	}
	ctx, err := dev.PrimaryCtxRetain()
	if err != nil {
		return nil, err
	}
	d := &Device{dev: dev, ctx: ctx}
	info := backend.Info{Backend: "cuda", Ordinal: ordinal, WarpSize: 32, StagedHostCopies: true}
	if info.Name, err = dev.Name(); err != nil {
		return nil, err
	}
	info.PCIBusID, _ = dev.PCIBusID()
	if info.TotalMemory, err = dev.TotalMem(); err != nil {
		return nil, err
	}
	info.DriverVersion, _ = cu.DriverVersion()
	for _, a := range []struct {
		attr cu.DeviceAttribute
		dst  *int
	}{
		{cu.AttrComputeCapabilityMajor, &info.ComputeMajor},
		{cu.AttrComputeCapabilityMinor, &info.ComputeMinor},
		{cu.AttrMultiprocessorCount, &info.Multiprocessors},
		{cu.AttrMaxThreadsPerBlock, &info.MaxThreadsPerBlock},
		{cu.AttrMaxSharedMemoryOptin, &info.MaxSharedPerBlock},
		{cu.AttrWarpSize, &info.WarpSize},
	} {
		if *a.dst, err = dev.Attribute(a.attr); err != nil {
			return nil, err
		}
	}
	// (Left 0 where the driver lacks them: the reserve came with CUDA 11.)
	info.MaxSharedPerMultiprocessor, _ = dev.Attribute(cu.AttrMaxSharedMemoryPerSM)
	info.ReservedSharedPerBlock, _ = dev.Attribute(cu.AttrReservedSharedMemory)
	l2, err := dev.Attribute(cu.AttrL2CacheSize)
	if err != nil {
		return nil, err
	}
	info.L2CacheBytes = int64(l2)
	d.info = info
	if ok, _ := dev.Attribute(cu.AttrMemoryPoolsSupported); ok != 0 {
		if d.pool, err = dev.DefaultMemPool(); err != nil {
			return nil, err
		}
		// Keep freed memory in the pool for reuse rather than handing it back at every
		// synchronization (CUDA Programming Guide: "Physical page caching behavior").
		if err := ctx.MemPoolSetAttribute(d.pool, cu.MemPoolReleaseThreshold, math.MaxUint64); err != nil {
			return nil, err
		}
	}
	return d, nil
}

// Info describes the device.
func (d *Device) Info() backend.Info { return d.info }

// Context returns the device's primary context.
func (d *Device) Context() cu.Context { return d.ctx }

// NewStream creates a non-blocking stream.
func (d *Device) NewStream() (backend.Stream, error) {
	s, err := d.ctx.StreamCreate(cu.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	return &Stream{d: d, h: s}, nil
}

// NewEvent creates an event whose synchronization yields the CPU
// (CU_EVENT_BLOCKING_SYNC); non-timing events also disable timing.
func (d *Device) NewEvent(timing bool) (backend.Event, error) {
	flags := cu.EventBlockingSync
	if !timing {
		flags |= cu.EventDisableTiming
	}
	e, err := d.ctx.EventCreate(flags)
	if err != nil {
		return nil, err
	}
	return &Event{d: d, h: e}, nil
}

// Mem is CUDA memory.
type Mem struct {
	d    *Device
	ptr  cu.DevicePtr
	size int64
	kind backend.MemKind
	host unsafe.Pointer
}

// Ptr returns the device address.
func (m *Mem) Ptr() uint64 { return uint64(m.ptr) }

// Size returns the size in bytes.
func (m *Mem) Size() int64 { return m.size }

// Kind returns the kind of memory.
func (m *Mem) Kind() backend.MemKind { return m.kind }

// Host returns pinned or unified memory as a host slice; nil for device memory.
func (m *Mem) Host() []byte {
	if m.host == nil {
		return nil
	}
	return unsafe.Slice((*byte)(m.host), m.size)
}

// Alloc allocates memory. Device memory comes from the default pool, ordered on s.
func (d *Device) Alloc(kind backend.MemKind, size int64, s backend.Stream) (backend.Mem, error) {
	if size < 0 {
		return nil, fmt.Errorf("cuda: allocating %d bytes: %w", size, backend.ErrInvalidValue)
	}
	m := &Mem{d: d, size: size, kind: kind}
	if size == 0 {
		return m, nil
	}
	var err error
	switch kind {
	case backend.DeviceMem:
		if d.pool == 0 {
			m.ptr, err = d.ctx.MemAlloc(size)
			break
		}
		var sh cu.Stream
		if cs, ok := s.(*Stream); ok && cs != nil {
			sh = cs.h
		}
		m.ptr, err = d.ctx.MemAllocAsync(size, sh)
	case backend.UnifiedMem:
		if m.ptr, err = d.ctx.MemAllocManaged(size); err == nil {
			m.host = cu.HostPointer(m.ptr)
		}
	case backend.PinnedMem:
		if m.host, err = d.ctx.MemHostAlloc(size, cu.MemHostAllocPortable|cu.MemHostAllocDeviceMap); err == nil {
			m.ptr, err = d.ctx.MemHostGetDevicePointer(m.host)
		}
	default:
		return nil, fmt.Errorf("cuda: memory kind %d: %w", kind, backend.ErrInvalidValue)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

func (d *Device) mem(m backend.Mem) (*Mem, error) {
	cm, ok := m.(*Mem)
	if !ok {
		return nil, fmt.Errorf("cuda: memory of type %T is not CUDA memory: %w", m, backend.ErrInvalidValue)
	}
	return cm, nil
}

// FreeNow frees memory synchronously.
func (d *Device) FreeNow(m backend.Mem) error {
	cm, err := d.mem(m)
	if err != nil || cm.size == 0 {
		return err
	}
	switch cm.kind {
	case backend.PinnedMem:
		return d.ctx.MemFreeHost(cm.host)
	default:
		return d.ctx.MemFree(cm.ptr)
	}
}

// MemInfo returns free and total device memory.
func (d *Device) MemInfo() (free, total int64, err error) { return d.ctx.MemGetInfo() }

// TrimPool releases pooled memory beyond keep bytes.
func (d *Device) TrimPool(keep int64) error {
	if d.pool == 0 {
		return nil
	}
	return d.ctx.MemPoolTrimTo(d.pool, keep)
}

// PoolReserved returns the bytes the pool holds from the system, and those in use.
func (d *Device) PoolReserved() (reserved, used uint64, err error) {
	if d.pool == 0 {
		return 0, 0, nil
	}
	if reserved, err = d.ctx.MemPoolGetAttribute(d.pool, cu.MemPoolReservedMemCurrent); err != nil {
		return
	}
	used, err = d.ctx.MemPoolGetAttribute(d.pool, cu.MemPoolUsedMemCurrent)
	return
}

// LoadModule loads PTX text, a cubin (ELF) or a fatbin.
func (d *Device) LoadModule(image []byte) (backend.Module, error) {
	img := image
	isELF := bytes.HasPrefix(image, []byte("\x7fELF"))
	isFat := len(image) >= 4 && binary.LittleEndian.Uint32(image) == 0xBA55ED50
	if !isELF && !isFat && (len(image) == 0 || image[len(image)-1] != 0) {
		img = append(append(make([]byte, 0, len(image)+1), image...), 0)
	}
	m, err := d.ctx.ModuleLoadData(img)
	if err != nil {
		return nil, err
	}
	return &Module{d: d, h: m}, nil
}

// Synchronize blocks until the context is idle (CUDA Driver API: cuCtxSynchronize).
func (d *Device) Synchronize() error { return d.syncDevice() }

// syncDevice waits for all the device's work (cuCtxSynchronize), after any capture of a
// repeated product in progress (gemm_replay.go): a context-wide synchronize during a
// capture fails and ends it.
func (d *Device) syncDevice() error {
	d.replayCaptures.Lock()
	defer d.replayCaptures.Unlock()
	return d.ctx.Synchronize()
}

// CanAccessPeer reports whether d can address peer's memory.
func (d *Device) CanAccessPeer(peer backend.Device) (bool, error) {
	p, ok := peer.(*Device)
	if !ok {
		return false, nil
	}
	if p == d {
		return true, nil
	}
	return d.dev.CanAccessPeer(p.dev)
}

// EnablePeerAccess lets d address peer's memory.
func (d *Device) EnablePeerAccess(peer backend.Device) error {
	p, ok := peer.(*Device)
	if !ok {
		return fmt.Errorf("cuda: peer is not a CUDA device: %w", backend.ErrInvalidValue)
	}
	if p == d {
		return nil
	}
	if err := d.ctx.EnablePeerAccess(p.ctx); err != nil {
		return err
	}
	// Pool allocations need their own grant (cuMemPoolSetAccess).
	if p.pool != 0 {
		return p.ctx.MemPoolSetAccessDevice(p.pool, d.dev)
	}
	return nil
}

// Module is a loaded module.
type Module struct {
	d *Device
	h cu.Module
}

// Function looks up a kernel.
func (m *Module) Function(name string) (backend.Function, error) {
	f, err := m.d.ctx.ModuleGetFunction(m.h, name)
	if err != nil {
		return nil, err
	}
	return &Function{d: m.d, h: f, name: name}, nil
}

// Unload unloads the module.
func (m *Module) Unload() error { return m.d.ctx.ModuleUnload(m.h) }

// Function is a kernel.
type Function struct {
	d    *Device
	h    cu.Function
	name string
}

// Name returns the kernel's name.
func (f *Function) Name() string { return f.name }

// Handle returns the driver's handle.
func (f *Function) Handle() cu.Function { return f.h }

// Attribute reads a kernel attribute (registers, local memory...).
func (f *Function) Attribute(a cu.FuncAttribute) (int, error) {
	return f.d.ctx.FuncGetAttribute(f.h, a)
}

// SetMaxDynamicShared allows the kernel up to n bytes of dynamic shared memory.
func (f *Function) SetMaxDynamicShared(n int) error {
	return f.d.ctx.FuncSetAttribute(f.h, cu.FuncMaxDynamicSharedMem, n)
}

// SetSharedCarveout asks for pct percent (0 to 100) of a multiprocessor's unified
// L1/shared memory as shared memory for the kernel's launches, or (-1) for none in
// particular (CUDA Driver API: CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT; a
// hint the driver rounds up to a size the hardware has).
func (f *Function) SetSharedCarveout(pct int) error {
	return f.d.ctx.FuncSetAttribute(f.h, cu.FuncPreferredSharedCarveout, pct)
}

// OccupancyBlocks returns how many blocks of the given size fit on one multiprocessor.
func (f *Function) OccupancyBlocks(block, dynSmem int) (int, error) {
	return f.d.ctx.OccupancyMaxActiveBlocks(f.h, block, dynSmem)
}

// Event is a CUDA event.
type Event struct {
	d *Device
	h cu.Event
}

// Handle returns the driver's handle.
func (e *Event) Handle() cu.Event { return e.h }

// Query reports whether the event completed.
func (e *Event) Query() (bool, error) { return e.d.ctx.EventQuery(e.h) }

// Synchronize blocks the calling thread, yielding the CPU, until the event completes.
func (e *Event) Synchronize() error { return e.d.ctx.EventSynchronize(e.h) }

// Elapsed returns the time from start to e.
func (e *Event) Elapsed(start backend.Event) (time.Duration, error) {
	s, ok := start.(*Event)
	if !ok {
		return 0, fmt.Errorf("cuda: elapsed time from a non-CUDA event: %w", backend.ErrInvalidValue)
	}
	// CUDA 13's cuEventElapsedTime may succeed on an event still pending (its doc says
	// to poll with cuEventQuery, and the H200's driver 580 returns a time), so both
	// events are queried first.
	for _, ev := range [...]*Event{s, e} {
		done, err := ev.Query()
		if err != nil {
			return 0, err
		}
		if !done {
			return 0, fmt.Errorf("cuda: elapsed time of an event not yet complete: %w", backend.ErrInvalidValue)
		}
	}
	ms, err := e.d.ctx.EventElapsedTime(s.h, e.h)
	if ce := (*cu.Error)(nil); errors.As(err, &ce) && ce.Code == cu.ErrorNotReady {
		// As on the CPU backend: a caller's mistake, not a device error.
		return 0, fmt.Errorf("cuda: elapsed time of an event not yet complete (%w): %w", err, backend.ErrInvalidValue)
	}
	if err != nil {
		return 0, err
	}
	return time.Duration(float64(ms) * 1e6), nil
}

// Destroy destroys the event.
func (e *Event) Destroy() error { return e.d.ctx.EventDestroy(e.h) }
