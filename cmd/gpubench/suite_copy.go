package main

import (
	"errors"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// sBytes is the size of Metal.jl's fixture, a 512x1000 Float32 matrix.
const sBytes = 512 * 1000 * 4

// fullLargeBytes is the size of a /16k float32 array at full size (1 GiB).
const fullLargeBytes = 4 * bench.LargeSide * bench.LargeSide

// largeBytes is the size of a /16k float32 array in this run: 1 GiB, or 64 MiB
// on the CPU backend.
func largeBytes(env *bench.Env) int64 {
	s := int64(env.Side())
	return 4 * s * s
}

// pageable is ordinary Go memory shared by the copy benchmarks: the largest
// size asked for so far, kept for the run.
var pageable []byte

// hostBytes returns n bytes of pageable Go memory holding a nonzero pattern.
func hostBytes(n int64) []byte {
	if int64(len(pageable)) < n {
		pageable = nil // let the smaller one go first
		pageable = make([]byte, n)
		fillPattern(pageable)
	}
	return pageable[:n]
}

// fillPattern fills b with a nonzero byte pattern.
func fillPattern(b []byte) {
	for i := range min(len(b), 4096) {
		b[i] = byte(i*7 + 1)
	}
	for k := 4096; k < len(b); k *= 2 {
		copy(b[k:], b[:k])
	}
}

// hostFloats returns n bytes of pageable Go memory holding a nonzero pattern,
// as float32s.
func hostFloats(n int64) []float32 {
	b := hostBytes(n)
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n/4)
}

// allocFilled allocates n bytes of device memory on the benchmarks' stream and
// fills it with a nonzero pattern.
func allocFilled(d *device, n int64) (*gpu.Buffer, error) {
	b, err := d.s.Alloc(n)
	if err != nil {
		return nil, err
	}
	if err := d.s.MemsetD32(b, fillWord); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// fillWord is the float32 1.23.
const fillWord = 0x3f9d70a4

// filledArray returns a rows x cols float32 array of 1.23 on the benchmarks' stream.
func filledArray(d *device, rows, cols int) (*gpu.Array[float32], error) {
	return gpu.Full[float32](d.s, 1.23, rows, cols)
}

// freeArrays frees the arrays that are not nil.
func freeArrays(as ...*gpu.Array[float32]) error {
	var err error
	for _, a := range as {
		if a != nil {
			err = errors.Join(err, a.Free())
		}
	}
	return err
}

// allocPinned allocates n bytes of pinned host memory holding a nonzero pattern.
func allocPinned(d *device, n int64) (*gpu.Buffer, error) {
	b, err := d.dev.AllocPinned(n)
	if err != nil {
		return nil, err
	}
	if err := b.HostAccess(bg, gpu.Write, func(h []byte) error { fillPattern(h); return nil }); err != nil {
		b.Free()
		return nil, err
	}
	return b, nil
}

// freeAll frees the buffers that are not nil.
func freeAll(bs ...*gpu.Buffer) error {
	var err error
	for _, b := range bs {
		if b != nil {
			err = errors.Join(err, b.Free())
		}
	}
	return err
}

// The copy directions of Metal.jl's copyto! benchmarks, and our pinned ones.
var copyDirs = []string{"cpu_to_gpu", "gpu_to_cpu", "gpu_to_gpu", "cpu_to_gpu_pinned", "gpu_to_cpu_pinned"}

// registerCopies registers array/copyto/<dir> (Metal.jl's copyto! between a
// Float32 matrix on the device and one on the host, or two on the device) at
// Metal.jl's size (a 1000x512 float32 array, Julia's 512x1000) and at /16k
// (16384x16384): Array.CopyFromHost and CopyToHost from and to a pageable Go
// slice (pinned by the runtime while the copy runs), gpu.Copy of one array
// into another plus a stream synchronize, and for the _pinned rows
// Buffer.CopyFrom between the array's buffer and pinned host memory
// (Device.AllocPinned; there are no arrays in pinned memory). Each returns once
// the data is in place; host clock, as Metal.jl and the peers time them.
// Bytes: the bytes copied, twice that for gpu_to_gpu (read and written in
// device memory).
//
// raw/array/copyto/<dir>[/16k]: cuMemcpyHtoDAsync, cuMemcpyDtoHAsync or
// cuMemcpyDtoDAsync on a raw stream and cuStreamSynchronize, between memory
// from cuMemAlloc and Go memory (pinned with runtime.Pinner, as ours is) or
// cuMemHostAlloc memory.
func registerCopies() {
	for _, large := range []bool{false, true} {
		for _, dir := range copyDirs {
			registerCopy(dir, large)
		}
	}
}

func registerCopy(dir string, large bool) {
	name := "array/copyto/" + dir
	regBytes := int64(sBytes)
	if large {
		name += bench.LargeSuffix
		regBytes = fullLargeBytes
	}
	factor := int64(1)
	if dir == "gpu_to_gpu" {
		factor = 2
	}
	size := func(env *bench.Env) int64 {
		n := int64(sBytes)
		if large {
			n = largeBytes(env)
		}
		env.Bytes = factor * n
		return n
	}

	var d *device
	var src, dst *gpu.Array[float32] // device arrays
	var pin *gpu.Buffer              // pinned host memory
	var host []float32               // pageable Go memory
	bodies := map[string]func() error{
		"cpu_to_gpu": func() error { return dst.CopyFromHost(bg, host) },
		"gpu_to_cpu": func() error { return src.CopyToHost(bg, host) },
		"gpu_to_gpu": func() error {
			if err := gpu.Copy(d.s, dst, src); err != nil {
				return err
			}
			return d.s.Synchronize(bg)
		},
		"cpu_to_gpu_pinned": func() error { return dst.Buffer().CopyFrom(bg, pin) },
		"gpu_to_cpu_pinned": func() error { return pin.CopyFrom(bg, src.Buffer()) },
	}
	bench.Register(bench.Benchmark{
		Name:       name,
		Mode:       bench.Host,
		Bytes:      factor * regBytes,
		Interleave: name,
		Baseline:   "raw/" + name,
		Setup: func(env *bench.Env) (err error) {
			if d, err = devOf(env); err != nil {
				return err
			}
			n := size(env)
			rows, cols := 1000, 512 // Julia's 512x1000 matrix, row-major
			if large {
				rows, cols = env.Side(), env.Side()
			}
			defer func() {
				if err != nil {
					freeArrays(src, dst)
					freeAll(pin)
					src, dst, pin = nil, nil, nil
				}
			}()
			switch dir {
			case "cpu_to_gpu", "cpu_to_gpu_pinned":
				dst, err = gpu.Empty[float32](d.s, rows, cols)
			case "gpu_to_cpu", "gpu_to_cpu_pinned":
				src, err = filledArray(d, rows, cols)
			case "gpu_to_gpu":
				if src, err = filledArray(d, rows, cols); err == nil {
					dst, err = gpu.Empty[float32](d.s, rows, cols)
				}
			}
			if err != nil {
				return err
			}
			switch dir {
			case "cpu_to_gpu", "gpu_to_cpu":
				host = hostFloats(n)
			case "cpu_to_gpu_pinned", "gpu_to_cpu_pinned":
				pin, err = allocPinned(d, n)
			}
			return err
		},
		Teardown: func(*bench.Env) error {
			err := errors.Join(freeArrays(src, dst), freeAll(pin))
			src, dst, pin, host = nil, nil, nil, nil
			return err
		},
		Body: bodies[dir],
	})

	var dsrc, ddst uint64 // cuMemAlloc memory
	var rhost []byte      // Go memory or cuMemHostAlloc memory
	var n int64
	registerRaw(rawSpec{
		Name:       "raw/" + name,
		Interleave: name,
		Bytes:      factor * regBytes,
		Setup: func(r *raw, env *bench.Env) (err error) {
			n = size(env)
			if dsrc, err = r.memAlloc(n); err != nil {
				return err
			}
			if ddst, err = r.memAlloc(n); err != nil {
				return errors.Join(err, r.memFree(dsrc))
			}
			if dir == "cpu_to_gpu_pinned" || dir == "gpu_to_cpu_pinned" {
				if rhost, err = r.hostAlloc(n); err != nil {
					return errors.Join(err, r.memFree(dsrc), r.memFree(ddst))
				}
				fillPattern(rhost)
			} else {
				rhost = hostBytes(n)
				r.pinGo(rhost)
			}
			// A nonzero source for the device-side copies.
			if err := r.copyHtoD(dsrc, rhost); err != nil {
				err = errors.Join(err, r.memFree(dsrc), r.memFree(ddst))
				if dir == "cpu_to_gpu_pinned" || dir == "gpu_to_cpu_pinned" {
					err = errors.Join(err, r.hostFree(rhost))
				}
				return err
			}
			return nil
		},
		Teardown: func(r *raw) error {
			err := errors.Join(r.memFree(dsrc), r.memFree(ddst))
			if dir == "cpu_to_gpu_pinned" || dir == "gpu_to_cpu_pinned" {
				err = errors.Join(err, r.hostFree(rhost))
			}
			rhost = nil
			return err
		},
		Body: func(r *raw) error {
			switch dir {
			case "cpu_to_gpu", "cpu_to_gpu_pinned":
				return r.copyHtoD(ddst, rhost)
			case "gpu_to_cpu", "gpu_to_cpu_pinned":
				return r.copyDtoH(rhost, dsrc)
			default:
				return r.copyDtoD(ddst, dsrc, n)
			}
		},
	})
}

// refBytes is the size of the reference copy: 1 GiB on a GPU, 256 MiB at the
// CPU backend's reduced size (far larger than the caches either way).
func refBytes(env *bench.Env) int64 { return min(1<<30, 4*largeBytes(env)) }

// registerReference registers reference/dtod_copy, the run's reference
// bandwidth (the "% copy" column): Stream.CopyDtoD of one device buffer into
// another, refBytes each, timed with device events; bytes = read + written.
func registerReference() {
	var d *device
	var src, dst *gpu.Buffer
	bench.Register(bench.Benchmark{
		Name:      "reference/dtod_copy",
		Mode:      bench.GPU,
		Bytes:     2 << 30,
		Reference: true,
		Setup: func(env *bench.Env) (err error) {
			if d, err = devOf(env); err != nil {
				return err
			}
			n := refBytes(env)
			env.Bytes = 2 * n
			if src, err = allocFilled(d, n); err != nil {
				return err
			}
			if dst, err = d.s.Alloc(n); err != nil {
				src.Free()
				return err
			}
			return nil
		},
		Teardown: func(*bench.Env) error {
			err := freeAll(src, dst)
			src, dst = nil, nil
			return err
		},
		Body: func() error { return d.s.CopyDtoD(dst, src) },
	})
}

// registerConstruct registers array/construct, Metal.jl's
// MtlArray{Int}(undef, 1): gpu.Empty[int64](s, 1) (from the runtime's
// small-block cache or the stream-ordered pool) and its Free; /16k makes and
// frees the peers' uninitialized 16384x16384 float32 array. Host clock; a
// sample ends with a synchronize of the stream. raw/array/construct[/16k]:
// cuMemAllocAsync + cuMemFreeAsync of the same bytes on a raw stream, from the
// same pool.
func registerConstruct() {
	for _, large := range []bool{false, true} {
		name := "array/construct"
		if large {
			name += bench.LargeSuffix
		}
		var d *device
		var side int
		bench.Register(bench.Benchmark{
			Name:       name,
			Mode:       bench.Host,
			Interleave: name,
			Baseline:   "raw/" + name,
			Setup: func(env *bench.Env) (err error) {
				side = env.Side()
				d, err = devOf(env)
				return err
			},
			Body: func() error {
				if large {
					a, err := gpu.Empty[float32](d.s, side, side)
					if err != nil {
						return err
					}
					return a.Free()
				}
				a, err := gpu.Empty[int64](d.s, 1)
				if err != nil {
					return err
				}
				return a.Free()
			},
		})
		var n int64
		registerRaw(rawSpec{
			Name:       "raw/" + name,
			Interleave: name,
			SyncTimer:  true,
			Setup: func(r *raw, env *bench.Env) error {
				n = 8
				if large {
					n = largeBytes(env)
				}
				return nil
			},
			Body: func(r *raw) error {
				p, err := r.allocAsync(n)
				if err != nil {
					return err
				}
				return r.freeAsync(p)
			},
		})
	}
}
