package cuda

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda/cu"
)

// Stream is a CUDA stream.
type Stream struct {
	d       *Device
	h       cu.Stream
	foreign bool // adopted (AdoptStream): Destroy leaves the handle to its owner
	cap     atomic.Pointer[capture]
	obs     func([]backend.MemUse) // an observed copy's observer (Observed), or nil
}

// Observed returns a stream on the same CUDA stream that passes the memory of each
// operation enqueued through it to f first (backend.Observable).
func (s *Stream) Observed(f func([]backend.MemUse)) backend.Stream {
	return &Stream{d: s.d, h: s.h, foreign: true, obs: f}
}

// observe reports uses to the observer.
func (s *Stream) observe(uses ...backend.MemUse) { s.obs(uses) }

// Handle returns the driver's handle.
func (s *Stream) Handle() cu.Stream { return s.h }

// Context returns the stream's context.
func (s *Stream) Context() cu.Context { return s.d.ctx }

type packBuf struct {
	blob []byte
	offs []int32
}

var packPool = sync.Pool{New: func() any { return &packBuf{blob: make([]byte, 0, 256), offs: make([]int32, 0, 16)} }}

// Launch enqueues kernel f. Arguments are packed 8-byte aligned; a by-value Blob is
// copied whole.
func (s *Stream) Launch(f backend.Function, cfg backend.LaunchConfig, args []backend.Arg) error {
	fn, ok := f.(*Function)
	if !ok {
		return fmt.Errorf("cuda: launch of %T, not a CUDA function: %w", f, backend.ErrInvalidValue)
	}
	if s.obs != nil {
		var uses []backend.MemUse
		for _, a := range args {
			if a.Kind == backend.ArgMem {
				uses = append(uses, backend.MemUse{Mem: a.Mem, Off: a.Off, Write: true})
			}
		}
		s.obs(uses)
	}
	if len(args) == 0 {
		if cfg.Cooperative {
			return s.launchCooperative(fn, cfg, nil, nil)
		}
		if cfg.Programmatic {
			return s.launchProgrammatic(fn, cfg, nil, nil)
		}
		return s.d.ctx.LaunchKernel(fn.h, cfg.Grid, cfg.Block, cfg.SharedMem, s.h, nil, nil)
	}
	p := packPool.Get().(*packBuf)
	blob, offs, err := packArgs(p.blob[:0], p.offs[:0], args)
	if err != nil {
		packPool.Put(p)
		return err
	}
	switch {
	case cfg.Cooperative:
		err = s.launchCooperative(fn, cfg, blob, offs)
	case cfg.Programmatic:
		err = s.launchProgrammatic(fn, cfg, blob, offs)
	default:
		err = s.d.ctx.LaunchKernel(fn.h, cfg.Grid, cfg.Block, cfg.SharedMem, s.h, blob, offs)
	}
	p.blob, p.offs = blob, offs
	packPool.Put(p)
	return err
}

func (s *Stream) mem(m backend.Mem, off, n int64) (*Mem, error) {
	cm, ok := m.(*Mem)
	if !ok {
		return nil, fmt.Errorf("cuda: memory of type %T is not CUDA memory: %w", m, backend.ErrInvalidValue)
	}
	if off < 0 || n < 0 || off+n > cm.size {
		return nil, fmt.Errorf("cuda: range [%d, %d) outside an allocation of %d bytes: %w", off, off+n, cm.size, backend.ErrInvalidValue)
	}
	return cm, nil
}

// Memset sets n elements of width bytes.
func (s *Stream) Memset(dst backend.Mem, off int64, value uint32, width int, n int64) error {
	m, err := s.mem(dst, off, n*int64(width))
	if err != nil || n == 0 {
		return err
	}
	if s.obs != nil {
		s.observe(backend.MemUse{Mem: dst, Off: off, N: n * int64(width), Write: true})
	}
	return s.d.ctx.MemsetAsync(m.ptr+cu.DevicePtr(off), value, width, n, s.h)
}

// Copy2D copies height rows of width bytes between two device memories of this
// stream's device (backend.Copier2D; cuMemcpy2DAsync). Pitches below width, or memory
// of another device, are errors wrapping ErrInvalidValue.
func (s *Stream) Copy2D(dst backend.Mem, dstOff, dstPitch int64, src backend.Mem, srcOff, srcPitch int64, width, height int64) error {
	if width <= 0 || height <= 0 {
		return nil
	}
	if dstPitch < width || srcPitch < width {
		return fmt.Errorf("cuda: 2-D copy of rows of %d bytes with pitches %d and %d: %w", width, dstPitch, srcPitch, backend.ErrInvalidValue)
	}
	dn, sn := (height-1)*dstPitch+width, (height-1)*srcPitch+width
	d, err := s.mem(dst, dstOff, dn)
	if err != nil {
		return err
	}
	r, err := s.mem(src, srcOff, sn)
	if err != nil {
		return err
	}
	if d.d != s.d || r.d != s.d || d.kind != backend.DeviceMem || r.kind != backend.DeviceMem {
		return fmt.Errorf("cuda: 2-D copy between memories not both of this stream's device: %w", backend.ErrInvalidValue)
	}
	if s.obs != nil {
		s.observe(backend.MemUse{Mem: dst, Off: dstOff, N: dn, Write: true}, backend.MemUse{Mem: src, Off: srcOff, N: sn})
	}
	return s.d.ctx.Memcpy2DDtoDAsync(d.ptr+cu.DevicePtr(dstOff), dstPitch, r.ptr+cu.DevicePtr(srcOff), srcPitch, width, height, s.h)
}

// Copy copies n bytes; between devices it is a peer copy (cuMemcpyPeerAsync).
func (s *Stream) Copy(dst backend.Mem, dstOff int64, src backend.Mem, srcOff int64, n int64) error {
	d, err := s.mem(dst, dstOff, n)
	if err != nil {
		return err
	}
	r, err := s.mem(src, srcOff, n)
	if err != nil || n == 0 {
		return err
	}
	if s.obs != nil {
		s.observe(backend.MemUse{Mem: dst, Off: dstOff, N: n, Write: true}, backend.MemUse{Mem: src, Off: srcOff, N: n})
	}
	dp, sp := d.ptr+cu.DevicePtr(dstOff), r.ptr+cu.DevicePtr(srcOff)
	dk, sk := d.kind, r.kind
	switch {
	case d.d != r.d && dk == backend.DeviceMem && sk == backend.DeviceMem:
		return s.d.ctx.MemcpyPeerAsync(dp, d.d.ctx, sp, r.d.ctx, n, s.h)
	case d.d == r.d && dk == backend.DeviceMem && sk == backend.DeviceMem:
		return s.d.ctx.MemcpyDtoDAsync(dp, sp, n, s.h)
	case dk == backend.DeviceMem && sk == backend.PinnedMem && r.host != nil:
		// The direction-specific calls skip cuMemcpyAsync's lookup of both pointers.
		return s.d.ctx.MemcpyHtoDAsync(dp, unsafe.Add(r.host, srcOff), n, s.h)
	case dk == backend.PinnedMem && sk == backend.DeviceMem && d.host != nil:
		return s.d.ctx.MemcpyDtoHAsync(unsafe.Add(d.host, dstOff), sp, n, s.h)
	}
	return s.d.ctx.MemcpyAsync(dp, sp, n, s.h)
}

// CopyFromHost copies src into dst at off; the caller keeps src pinned until done.
func (s *Stream) CopyFromHost(dst backend.Mem, off int64, src []byte) error {
	d, err := s.mem(dst, off, int64(len(src)))
	if err != nil || len(src) == 0 {
		return err
	}
	if s.obs != nil {
		s.observe(backend.MemUse{Mem: dst, Off: off, N: int64(len(src)), Write: true})
	}
	return s.d.ctx.MemcpyHtoDAsync(d.ptr+cu.DevicePtr(off), unsafe.Pointer(&src[0]), int64(len(src)), s.h)
}

// CopyToHost copies into dst from src at off; the caller keeps dst pinned until done.
func (s *Stream) CopyToHost(dst []byte, src backend.Mem, off int64) error {
	r, err := s.mem(src, off, int64(len(dst)))
	if err != nil || len(dst) == 0 {
		return err
	}
	if s.obs != nil {
		s.observe(backend.MemUse{Mem: src, Off: off, N: int64(len(dst))})
	}
	return s.d.ctx.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), r.ptr+cu.DevicePtr(off), int64(len(dst)), s.h)
}

func event(e backend.Event) (*Event, error) {
	ce, ok := e.(*Event)
	if !ok {
		return nil, fmt.Errorf("cuda: event of type %T: %w", e, backend.ErrInvalidValue)
	}
	return ce, nil
}

// Record records e on the stream.
func (s *Stream) Record(e backend.Event) error {
	ce, err := event(e)
	if err != nil {
		return err
	}
	return s.d.ctx.EventRecord(ce.h, s.h)
}

// WaitEvent makes the stream wait for e (which may belong to another device).
func (s *Stream) WaitEvent(e backend.Event) error {
	ce, err := event(e)
	if err != nil {
		return err
	}
	return s.d.ctx.StreamWaitEvent(s.h, ce.h)
}

// Query reports whether the stream is idle.
func (s *Stream) Query() (bool, error) { return s.d.ctx.StreamQuery(s.h) }

// Synchronize blocks until the stream is idle.
func (s *Stream) Synchronize() error { return s.d.ctx.StreamSynchronize(s.h) }

// FreeAsync frees device memory in stream order (cuMemFreeAsync).
func (s *Stream) FreeAsync(m backend.Mem) error {
	cm, ok := m.(*Mem)
	if !ok {
		return fmt.Errorf("cuda: memory of type %T: %w", m, backend.ErrInvalidValue)
	}
	if cm.size == 0 {
		return nil
	}
	if cm.kind != backend.DeviceMem || cm.d.pool == 0 {
		return fmt.Errorf("cuda: stream-ordered free of %s memory: %w", cm.kind, backend.ErrNotSupported)
	}
	return s.d.ctx.MemFreeAsync(cm.ptr, s.h)
}

// Destroy destroys the stream; its work still completes. Its cuBLAS handle, if it has
// one, goes back to the device's pool (gemm.go).
func (s *Stream) Destroy() error {
	s.releaseBlas()
	if s.foreign {
		return nil
	}
	return s.d.ctx.StreamDestroy(s.h)
}

// MemOpsSupported reports whether stream memory operations work here: the driver's
// _v2 entry points (CUDA 11.7 and later), which need no opt-in. GPU_STREAM_MEMOPS=0 in
// the environment turns them off (package gpu then copies pageable memory
// synchronously, the driver's way).
func (s *Stream) MemOpsSupported() bool {
	return s.d.info.DriverVersion >= 11070 && memOpsEnv
}

var memOpsEnv = os.Getenv("GPU_STREAM_MEMOPS") != "0"

// WaitValue32 makes later work wait until the word at off of m (pinned memory) reaches
// v, cyclically (CUDA Driver API: cuStreamWaitValue32_v2, CU_STREAM_WAIT_VALUE_GEQ).
func (s *Stream) WaitValue32(m backend.Mem, off int64, v uint32) error {
	cm, err := s.mem(m, off, 4)
	if err != nil {
		return err
	}
	if cm.kind != backend.PinnedMem || off%4 != 0 {
		return fmt.Errorf("cuda: waiting on a word of %s memory at offset %d: %w", cm.kind, off, backend.ErrInvalidValue)
	}
	return s.d.ctx.StreamWaitValue32(s.h, cm.ptr+cu.DevicePtr(off), v, cu.StreamWaitValueGEQ)
}

// programmatic are the launch attributes of a programmatic dependent launch.
var programmatic = [1]cu.LaunchAttribute{{ID: cu.LaunchAttributeProgrammaticStreamSerialization, Value: [8]uint64{1}}}

// cooperative are the launch attributes of a cooperative launch.
var cooperative = [1]cu.LaunchAttribute{{ID: cu.LaunchAttributeCooperative, Value: [8]uint64{1}}}

// launchCooperative launches fn with every block resident at once
// (backend.LaunchConfig.Cooperative: cuLaunchKernelEx). Programmatic is not combined
// with it: the launch waits for the kernel ahead of it as usual.
func (s *Stream) launchCooperative(fn *Function, cfg backend.LaunchConfig, blob []byte, offs []int32) error {
	return s.d.ctx.LaunchKernelEx(fn.h, cfg.Grid, cfg.Block, cfg.SharedMem, s.h, blob, offs, cooperative[:])
}

// launchProgrammatic launches fn with programmatic stream serialization
// (backend.LaunchConfig.Programmatic: cuLaunchKernelEx), or, on a device below compute
// capability 9.0 or a driver without cuLaunchKernelEx, as usual.
func (s *Stream) launchProgrammatic(fn *Function, cfg backend.LaunchConfig, blob []byte, offs []int32) error {
	if s.d.info.ComputeMajor >= 9 {
		err := s.d.ctx.LaunchKernelEx(fn.h, cfg.Grid, cfg.Block, cfg.SharedMem, s.h, blob, offs, programmatic[:])
		if !errors.Is(err, backend.ErrNotSupported) {
			return err
		}
	}
	return s.d.ctx.LaunchKernel(fn.h, cfg.Grid, cfg.Block, cfg.SharedMem, s.h, blob, offs)
}
