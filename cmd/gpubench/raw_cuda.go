package main

import (
	"fmt"
	"runtime"
	"unsafe"

	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/bench"
)

// raw is a raw driver baseline's handle: the device's CUDA context (the
// primary context the runtime uses) and a stream of the baseline's own, so
// that the runtime's streams are never handed out (Stream.BackendStream would
// turn off the runtime's idle bookkeeping for the rest of the run).
type raw struct {
	ctx   cu.Context
	s     cu.Stream
	empty cu.Function
	pin   runtime.Pinner
}

// openRaw returns a raw handle for the benchmark's device, or an error
// wrapping bench.ErrSkip when the device is not a CUDA device.
func openRaw(env *bench.Env) (*raw, error) {
	d, err := devOf(env)
	if err != nil {
		return nil, err
	}
	cd, ok := d.dev.BackendDevice().(*cuda.Device)
	if !ok {
		return nil, errNoRaw
	}
	f, ok := d.empty.BackendFunction().(*cuda.Function)
	if !ok {
		return nil, fmt.Errorf("the empty kernel is a %T, not a CUDA function", d.empty.BackendFunction())
	}
	ctx := cd.Context()
	s, err := ctx.StreamCreate(cu.StreamNonBlocking)
	if err != nil {
		return nil, err
	}
	return &raw{ctx: ctx, s: s, empty: f.Handle()}, nil
}

// close waits for the raw stream, destroys it and unpins what was pinned.
func (r *raw) close() error {
	if r == nil {
		return nil
	}
	err := r.ctx.StreamSynchronize(r.s)
	if derr := r.ctx.StreamDestroy(r.s); err == nil {
		err = derr
	}
	r.pin.Unpin()
	return err
}

// syncStream is cuStreamSynchronize of the raw stream.
func (r *raw) syncStream() error { return r.ctx.StreamSynchronize(r.s) }

// queryStream is cuStreamQuery of the raw stream.
func (r *raw) queryStream() (bool, error) { return r.ctx.StreamQuery(r.s) }

// syncContext is cuCtxSynchronize.
func (r *raw) syncContext() error { return r.ctx.Synchronize() }

// launchEmpty is cuLaunchKernel of the empty kernel, one block of one thread,
// on the raw stream.
func (r *raw) launchEmpty() error {
	return r.ctx.LaunchKernel(r.empty, [3]uint32{1, 1, 1}, [3]uint32{1, 1, 1}, 0, r.s, nil, nil)
}

// memAlloc is cuMemAlloc.
func (r *raw) memAlloc(n int64) (uint64, error) {
	p, err := r.ctx.MemAlloc(n)
	return uint64(p), err
}

// memFree is cuMemFree.
func (r *raw) memFree(p uint64) error { return r.ctx.MemFree(cu.DevicePtr(p)) }

// allocAsync is cuMemAllocAsync on the raw stream.
func (r *raw) allocAsync(n int64) (uint64, error) {
	p, err := r.ctx.MemAllocAsync(n, r.s)
	return uint64(p), err
}

// freeAsync is cuMemFreeAsync on the raw stream.
func (r *raw) freeAsync(p uint64) error { return r.ctx.MemFreeAsync(cu.DevicePtr(p), r.s) }

// hostAlloc is cuMemHostAlloc: n bytes of pinned host memory.
func (r *raw) hostAlloc(n int64) ([]byte, error) {
	p, err := r.ctx.MemHostAlloc(n, 0)
	if err != nil {
		return nil, err
	}
	return unsafe.Slice((*byte)(p), n), nil
}

// hostFree is cuMemFreeHost.
func (r *raw) hostFree(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	return r.ctx.MemFreeHost(unsafe.Pointer(&b[0]))
}

// pinGo pins Go memory for the handle's lifetime, since the driver reads or
// writes it after the call that enqueued the copy has returned.
func (r *raw) pinGo(b []byte) {
	if len(b) > 0 {
		r.pin.Pin(&b[0])
	}
}

// copyHtoD is cuMemcpyHtoDAsync on the raw stream, then cuStreamSynchronize.
func (r *raw) copyHtoD(dst uint64, src []byte) error {
	if err := r.ctx.MemcpyHtoDAsync(cu.DevicePtr(dst), unsafe.Pointer(&src[0]), int64(len(src)), r.s); err != nil {
		return err
	}
	return r.ctx.StreamSynchronize(r.s)
}

// copyDtoH is cuMemcpyDtoHAsync on the raw stream, then cuStreamSynchronize.
func (r *raw) copyDtoH(dst []byte, src uint64) error {
	if err := r.ctx.MemcpyDtoHAsync(unsafe.Pointer(&dst[0]), cu.DevicePtr(src), int64(len(dst)), r.s); err != nil {
		return err
	}
	return r.ctx.StreamSynchronize(r.s)
}

// copyDtoD is cuMemcpyDtoDAsync on the raw stream, then cuStreamSynchronize.
func (r *raw) copyDtoD(dst, src uint64, n int64) error {
	if err := r.ctx.MemcpyDtoDAsync(cu.DevicePtr(dst), cu.DevicePtr(src), n, r.s); err != nil {
		return err
	}
	return r.ctx.StreamSynchronize(r.s)
}
