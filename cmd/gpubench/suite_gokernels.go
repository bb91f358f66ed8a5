package main

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
	"github.com/go-gpu/gpu/gokernel"
)

// The Go kernels' suite: the hand-written kernels of suite_kernels.go written in Go
// (gokernels.go, compiled by package gokernel; on the CPU backend the Go functions
// run), beside the PTX ones and under the same peer keys, plus three kernels whose
// figures the issue asks for:
//
//   - kernel/indexing/go and kernel/indexing_checked/go: Indexing without and with
//     Go's bounds checks (Kernel.Unchecked), kernel/indexing's geometry.
//   - kernel/rand/go: Philox2x32-10 in Go, kernel/rand's geometry and check.
//   - integration/byval/reference/go, integration/byval/slices=k/go and
//     integration/metaldevrt/go: Metal.jl's integration benchmarks (the slices pass
//     by value as pointer and length parameters; metaldevrt's device function is
//     inlined, as every call in a Go kernel is).
//   - gokernel/saxpy: y = a*x + y over the benchmark's matrix as a CUDA programmer
//     writes it with float4: a grid-stride loop over one wave of blocks (8 of 256
//     threads a multiprocessor), two runs of four consecutive elements a thread per
//     iteration, each run one 16-byte access (the compiler's vector accesses), the
//     four loads in flight together; bytes 12 per element. Compare with
//     reference/dtod_copy (% copy). gokernel/saxpy_v1 is the first Saxpy (four
//     scalar elements a grid stride apart per iteration), kept to time both in one
//     run.
//   - gokernel/transpose: the matrix transposed as our Permute's tiled kernel does
//     it: a 64x65 shared tile, blocks of 16x16 threads, sixteen elements a thread in
//     four 16-byte loads and four 16-byte stores, int32 indices, no per-row range
//     tests in the blocks whose tile is whole; bytes 8 per element. Compare with
//     array/permutedims/2d and the copy. gokernel/transpose_v1 is the first one,
//     CUDA's transpose sample (a 32x33 tile, blocks of 32x8 threads, four scalar
//     elements a thread).
//   - gokernel/sum: a block reduction (grid-stride loop, warp shuffles, shared
//     memory, one atomic per block) of the matrix into one float, after a Fill of
//     it; bytes 4 per element. Compare with array/reductions/reduce/Float32/1d.
//   - gokernel/func2: MulAdd1 (x*y + 1, a scalar Go function) made an elementwise
//     operation by gokernel.NewFunc2, over the benchmark's matrix and a row
//     broadcast along it, into a preallocated result (Into); bytes: x and the
//     result, and the row once. Compare with the copy.
//   - latency/first_gokernel: in a fresh process after latency/first_kernel's
//     module load, New (parse, type-check, compile) of a kernel not launched before,
//     its first launch (compile for the device, load) and a synchronize.

// errSlowCPU skips a Go kernel's row on the CPU backend when its launches have more
// than cpuMaxThreads threads: the CPU backend calls a Go kernel's function once per
// thread through reflection (a fraction of a microsecond a thread, ten times that
// under the race detector), which is for tests, not benchmarks. The /16k rows run at
// gpubench's test size (-large 256).
var errSlowCPU = fmt.Errorf("the CPU backend calls a Go kernel's function per thread through reflection, too slow for more than %d threads: %w", cpuMaxThreads, bench.ErrSkip)

const cpuMaxThreads = 1 << 17

// slowOnCPU returns errSlowCPU for a launch of n threads on the CPU backend.
func slowOnCPU(c *setupCtx, n int) error {
	if c.d.backend == "cpu" && n > cpuMaxThreads {
		return errSlowCPU
	}
	return nil
}

var goKernelFuncs = map[string][]any{
	"Indexing": {Indexing}, "Rand": {Rand}, "Add": {Add}, "AddSlices1": {AddSlices1}, "AddSlices2": {AddSlices2},
	"AddSlices3": {AddSlices3}, "AddMatVec": {AddMatVec}, "Saxpy": {Saxpy}, "Transpose": {Transpose}, "Sum": {Sum},
	"SaxpyV1": {SaxpyV1}, "TransposeV1": {TransposeV1},
}

var goKernelCache sync.Map // name -> *goKernelEntry

type goKernelEntry struct {
	once sync.Once
	k    *gokernel.Kernel
	err  error
}

// goKernel returns the compiled Go kernel name (once per process).
func goKernel(name string) (*gokernel.Kernel, error) {
	v, _ := goKernelCache.LoadOrStore(name, &goKernelEntry{})
	e := v.(*goKernelEntry)
	e.once.Do(func() { e.k, e.err = gokernel.New(goKernelsSrc, goKernelFuncs[name]...) })
	return e.k, e.err
}

func registerGoKernels() {
	for _, large := range []bool{false, true} {
		for _, checked := range []bool{false, true} {
			registerGoIndexing(checked, large)
		}
		registerGoRand(large)
		for _, v1 := range []bool{false, true} {
			registerGoSaxpy(large, v1)
			registerGoTranspose(large, v1)
		}
		registerGoSum(large)
		registerGoFunc2(large)
	}
	registerGoByval()
	registerGoDevrt()
}

func registerGoIndexing(checked, large bool) {
	name := "kernel/indexing/go"
	if checked {
		name = "kernel/indexing_checked/go"
	}
	registerOp(op{
		name: name, large: large, bytes: 8 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			if err := slowOnCPU(c, elems(c.matShape())); err != nil {
				return nil, 0, err
			}
			return setupIndexing(c, name, func(_ int, cfg gpu.LaunchConfig) (func(dst, src *gpu.Array[float32]) error, error) {
				k, err := goKernel("Indexing")
				if err != nil {
					return nil, err
				}
				if !checked {
					k = k.Unchecked()
				}
				s := c.s()
				return func(dst, src *gpu.Array[float32]) error { return k.Launch(s, cfg, dst, src) }, nil
			})
		},
	})
}

func registerGoRand(large bool) {
	registerOp(op{
		name: "kernel/rand/go", large: large, bytes: 4 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			if err := slowOnCPU(c, elems(c.matShape())); err != nil {
				return nil, 0, err
			}
			return setupRand(c, "kernel/rand/go", func(cfg gpu.LaunchConfig) (func(*gpu.Array[float32], uint32) error, error) {
				k, err := goKernel("Rand")
				if err != nil {
					return nil, err
				}
				s := c.s()
				return func(dst *gpu.Array[float32], ctr uint32) error { return k.Launch(s, cfg, dst, uint32(randSeed), ctr) }, nil
			})
		},
	})
}

func registerGoByval() {
	for k := 0; k <= maxSlices; k++ {
		name := "integration/byval/reference/go"
		kname := "Add"
		if k > 0 {
			name = fmt.Sprintf("integration/byval/slices=%d/go", k)
			kname = fmt.Sprintf("AddSlices%d", k)
		}
		registerOp(op{
			name: name, bytes: 12 * intElems * int64(max(k, 1)),
			setup: func(c *setupCtx) (func() error, int64, error) {
				if err := slowOnCPU(c, intElems); err != nil {
					return nil, 0, err
				}
				return setupByval(c, name, k, func(arrs []*gpu.Array[float32], cfg gpu.LaunchConfig) (func() error, error) {
					kern, err := goKernel(kname)
					if err != nil {
						return nil, err
					}
					// The slices by value: each a pointer and a length parameter.
					args := []any{intElems}
					for _, a := range arrs {
						f, err := flat(a)
						if err != nil {
							return nil, err
						}
						args = append(args, f)
					}
					s := c.s()
					return func() error { return kern.Launch(s, cfg, args...) }, nil
				})
			},
		})
	}
}

func registerGoDevrt() {
	registerOp(op{
		name: "integration/metaldevrt/go", bytes: devrtBytes,
		setup: func(c *setupCtx) (func() error, int64, error) {
			if err := slowOnCPU(c, intElems); err != nil {
				return nil, 0, err
			}
			return setupDevrt(c, "integration/metaldevrt/go", func(x1, x2, y *gpu.Array[float32], cfg gpu.LaunchConfig) (func() error, error) {
				k, err := goKernel("AddMatVec")
				if err != nil {
					return nil, err
				}
				fx1, err1 := flat(x1)
				fx2, err2 := flat(x2)
				fy, err3 := flat(y)
				if err := errors.Join(err1, err2, err3); err != nil {
					return nil, err
				}
				s := c.s()
				return func() error { return k.Launch(s, cfg, intCols, fx1, fx2, fy) }, nil
			})
		},
	})
}

func registerGoSaxpy(large, v1 bool) {
	name, kname := "gokernel/saxpy", "Saxpy"
	if v1 {
		name, kname = "gokernel/saxpy_v1", "SaxpyV1"
	}
	registerOp(op{
		name: name, large: large, bytes: 12 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			if err := slowOnCPU(c, elems(c.matShape())); err != nil {
				return nil, 0, err
			}
			k, err := goKernel(kname)
			if err != nil {
				return nil, 0, err
			}
			n := elems(c.matShape())
			type io struct{ x, y *gpu.Array[float32] }
			rot, err := rotation(c.sets(8*int64(n)), func() (v io, err error) {
				if v.x, err = uniform(c, devMem, n); err == nil {
					v.y, err = uniform(c, devMem, n)
				}
				return v, err
			})
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			// Check once: y' = 2x + y.
			v := rot.Sets()[0]
			y0, err := newArr[float32](c, devMem, n)
			if err != nil {
				return nil, 0, err
			}
			if err := gpu.Copy(s, y0, v.y); err != nil {
				return nil, 0, err
			}
			cfg := saxpyConfig(n, c.d.dev.Info().Multiprocessors)
			if err := k.Launch(s, cfg, float32(2), v.x, v.y); err != nil {
				return nil, 0, err
			}
			if err := checkNone(s, name, "y != 2*x + y0", gpu.Vars{"x": v.x, "y": v.y, "y0": y0}); err != nil {
				return nil, 0, err
			}
			return func() error { v := rot.Next(); return k.Launch(s, cfg, float32(0.5), v.x, v.y) }, 12 * int64(n), nil
		},
	})
}

// saxpyConfig is the grid of Saxpy (and SaxpyV1) for n elements on a device of sms
// multiprocessors: blocks of 256 threads, one wave of them (8 a multiprocessor, 2048
// threads), fewer where the elements don't need them (four a thread).
func saxpyConfig(n, sms int) gpu.LaunchConfig {
	blocks := max(1, min((n+1023)/1024, 8*max(1, sms)))
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: blocks}, Block: gpu.Dim3{X: 256}}
}

func registerGoTranspose(large, v1 bool) {
	name, kname := "gokernel/transpose", "Transpose"
	if v1 {
		name, kname = "gokernel/transpose_v1", "TransposeV1"
	}
	registerOp(op{
		name: name, large: large, bytes: 8 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			if err := slowOnCPU(c, elems(c.matShape())); err != nil {
				return nil, 0, err
			}
			k, err := goKernel(kname)
			if err != nil {
				return nil, 0, err
			}
			shape := c.matShape()
			rows, cols := shape[0], shape[1]
			n := rows * cols
			type io struct{ in, out *gpu.Array[float32] }
			rot, err := rotation(c.sets(8*int64(n)), func() (v io, err error) {
				if v.in, err = uniform(c, devMem, n); err == nil {
					v.out, err = newArr[float32](c, devMem, n)
				}
				return v, err
			})
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			cfg := transposeConfig(rows, cols, v1)
			launch := func(v io) error { return k.Launch(s, cfg, rows, cols, v.in, v.out) }
			v := rot.Sets()[0]
			if err := launch(v); err != nil {
				return nil, 0, err
			}
			in2, err := v.in.Reshape(rows, cols)
			if err != nil {
				return nil, 0, err
			}
			want, err := gpu.Transpose(s, in2)
			if err != nil {
				return nil, 0, err
			}
			c.k.add(want.Free)
			out2, err := v.out.Reshape(cols, rows)
			if err != nil {
				return nil, 0, err
			}
			if err := checkNone(s, name, "o != w", gpu.Vars{"o": out2, "w": want}); err != nil {
				return nil, 0, err
			}
			return func() error { return launch(rot.Next()) }, 8 * int64(n), nil
		},
	})
}

// transposeConfig is the launch of Transpose (v1: TransposeV1) for a rows x cols
// matrix: a block per 64x64 tile of 16x16 threads (v1: per 32x32 tile, 32x8).
func transposeConfig(rows, cols int, v1 bool) gpu.LaunchConfig {
	if v1 {
		return gpu.LaunchConfig{Grid: gpu.Dim3{X: (cols + 31) / 32, Y: (rows + 31) / 32}, Block: gpu.Dim3{X: 32, Y: 8}}
	}
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: (cols + 63) / 64, Y: (rows + 63) / 64}, Block: gpu.Dim3{X: 16, Y: 16}}
}

func registerGoSum(large bool) {
	registerOp(op{
		name: "gokernel/sum", large: large, bytes: 4 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			if err := slowOnCPU(c, elems(c.matShape())); err != nil {
				return nil, 0, err
			}
			k, err := goKernel("Sum")
			if err != nil {
				return nil, 0, err
			}
			n := elems(c.matShape())
			rot, err := rotation(c.sets(4*int64(n)), func() (*gpu.Array[float32], error) { return uniform(c, devMem, n) })
			if err != nil {
				return nil, 0, err
			}
			sum, err := newArr[float32](c, devMem, 1)
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			info := c.d.dev.Info()
			blocks := max(1, min((n+1023)/1024, 8*max(1, info.Multiprocessors)))
			cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: blocks}, Block: gpu.Dim3{X: 256}}
			launch := func(x *gpu.Array[float32]) error {
				if err := gpu.Fill(s, sum, float32(0)); err != nil {
					return err
				}
				return k.Launch(s, cfg, x, sum)
			}
			x := rot.Sets()[0]
			if err := launch(x); err != nil {
				return nil, 0, err
			}
			got, err := sum.At(bg, 0)
			if err != nil {
				return nil, 0, err
			}
			want, err := gpu.Sum[float32, float32](s, x)
			if err != nil {
				return nil, 0, err
			}
			w, err := want.At(bg)
			want.Free()
			if err != nil {
				return nil, 0, err
			}
			if math.Abs(float64(got-w)) > 1e-4*math.Abs(float64(w))+1e-3 {
				return nil, 0, fmt.Errorf("gokernel/sum: %v, Sum says %v", got, w)
			}
			return func() error { return launch(rot.Next()) }, 4 * int64(n), nil
		},
	})
}

var goFunc2 = sync.OnceValues(func() (*gokernel.Func2[float32, float32, float32], error) {
	return gokernel.NewFunc2(goKernelsSrc, MulAdd1)
})

func registerGoFunc2(large bool) {
	registerOp(op{
		name: "gokernel/func2", large: large, bytes: 8 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			rows, cols := shape[0], shape[1]
			if err := slowOnCPU(c, rows*cols); err != nil {
				return nil, 0, err
			}
			f, err := goFunc2()
			if err != nil {
				return nil, 0, err
			}
			x, err := uniform(c, devMem, rows, cols)
			if err != nil {
				return nil, 0, err
			}
			y, err := uniform(c, devMem, cols)
			if err != nil {
				return nil, 0, err
			}
			z, err := newArr[float32](c, devMem, rows, cols)
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			if err := poison(s, z); err != nil {
				return nil, 0, err
			}
			launch := func() error { return f.Into(s, z, x, y) }
			if err := launch(); err != nil {
				return nil, 0, err
			}
			if err := checkNone(s, "gokernel/func2", "z != x*y + 1", gpu.Vars{"x": x, "y": y, "z": z}); err != nil {
				return nil, 0, err
			}
			return launch, 8*int64(rows*cols) + 4*int64(cols), nil
		},
	})
}

// firstGoKernel is latency/first_gokernel's figure in the latency child: New of a
// kernel this process has not compiled, its first launch and a synchronize.
func firstGoKernel(d *gpu.Device) (time.Duration, error) {
	t0 := time.Now()
	k, err := gokernel.New(goKernelsSrc, Saxpy)
	if err != nil {
		return 0, err
	}
	s := d.DefaultStream()
	x, err := gpu.Zeros[float32](s, 256)
	if err != nil {
		return 0, err
	}
	defer x.Free()
	t1 := time.Now()
	if err := s.Synchronize(bg); err != nil { // the allocation is not the kernel's
		return 0, err
	}
	t2 := time.Now()
	if err := k.LaunchN(s, 256, float32(2), x, x); err != nil {
		return 0, err
	}
	if err := s.Synchronize(bg); err != nil {
		return 0, err
	}
	return t1.Sub(t0) + time.Since(t2), nil
}
