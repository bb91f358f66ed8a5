package main

import (
	"errors"
	"fmt"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
)

// The array-level suite: Metal.jl's perf/array.jl (and perf/kernel.jl,
// perf/byval.jl, perf/metaldevrt.jl in suite_kernels.go), at Metal.jl's sizes
// and at 2^28 elements (/16k), doing what peers/peers.py does for each name.
//
// Fixtures. Metal.jl's 512x1000 Julia matrix is our (1000, 512) row-major
// array (Julia is column-major: its dims=1 is our last axis, dims=2 our
// first), its vector the flattened 512000 elements; the "L" dims variants use
// its 3x1000000 matrix, our (1000000, 3). Float32 inputs are uniform in [0, 1),
// Int64 inputs uniform in [-10, 10] (Metal.jl's rand(-10:10)), Bool inputs
// fair coins (array/floor_divide and array/remainder, not Metal.jl's, have
// inputs of their own: registerDivmod), all drawn with gpu.Generator from a
// fixed seed. At /16k the arrays are (side, side), side = bench.Env.Side()
// (16384 on a GPU, 4096 on the CPU backend), the vectors their side^2 elements.
//
// Storage. Metal.jl runs copy and the iteration group twice, on private
// (device) and shared (unified) storage. Our device rows keep the peers' names
// (array/copy, array/iteration/..., arrays from the stream's pool); the
// unified rows are array/shared/... (inputs in Device.AllocUnified memory, seen
// through gpu.ArrayOf, written on the device in Setup; results are allocated
// as usual, in device memory). The peers have no unified-memory figures, and
// bench's naming rule keeps "shared/" names out of bench.PeerNames.
//
// Timing. At Metal.jl's size the figure is one call plus a synchronize of the
// stream on the host clock (Host mode, one call per sample), as Metal.@sync and
// the peers measure it: those calls last microseconds, so launch and host
// overhead are most of the figure. The /16k rows are bandwidth figures: device
// events around back-to-back calls (GPU mode), inputs rotated when they are
// smaller than twice the L2 cache (bench.SetsFor; never at 16384^2). Operations
// whose result size depends on the data (Extract, Nonzero) or that return a Go
// value (FindFirst) wait for the device inside the call, in either mode.
//
// Bytes are the fewest bytes the operation must move through device memory:
// each input read once, each output written once, whatever passes the
// implementation makes (a predicate's bool mask, a count pass). For results
// whose size depends on the data, the count k of selected elements is measured
// in Setup. Operations that allocate their result (copy, reductions, scans,
// permutedims, rand, findall, ...) allocate and free it in every call, as
// Metal.jl and the peers do, from the stream-ordered pool.

// storage says where a benchmark's inputs live.
type storage int

const (
	devMem     storage = iota // device memory from the stream's pool (Metal.jl's private storage)
	unifiedMem                // Device.AllocUnified (Metal.jl's shared storage)
)

// prefix returns the start of the benchmark names of the storage.
func (st storage) prefix() string {
	if st == unifiedMem {
		return "array/shared/"
	}
	return "array/"
}

// Metal.jl's fixtures as row-major shapes.
const (
	matRows, matCols   = 1000, 512    // Julia's 512x1000 matrix
	longRows, longCols = 1_000_000, 3 // Julia's 3x1000000 matrix
	matElems           = matRows * matCols
)

// benchSeed seeds every benchmark's generator: the same inputs in every run.
const benchSeed = 20261130

// keep collects what a benchmark's Setup made, for its Teardown to free.
type keep struct{ frees []func() error }

func (k *keep) add(f func() error) { k.frees = append(k.frees, f) }

// free frees everything, the last made first.
func (k *keep) free() error {
	var err error
	for i := len(k.frees) - 1; i >= 0; i-- {
		err = errors.Join(err, k.frees[i]())
	}
	k.frees = nil
	return err
}

// setupCtx is what a benchmark's setup function works with.
type setupCtx struct {
	env   *bench.Env
	d     *device
	k     *keep
	g     *gpu.Generator
	large bool // a /16k benchmark
	side  int  // env.Side()
}

// s is the benchmarks' stream.
func (c *setupCtx) s() *gpu.Stream { return c.d.s }

// sets returns how many input sets of setBytes a /16k benchmark rotates among
// so that no set is in the L2 cache when its turn comes (1 at Metal.jl's size,
// where the peers and Metal.jl keep one set).
func (c *setupCtx) sets(setBytes int64) int {
	if !c.large || setBytes <= 0 {
		return 1
	}
	return bench.SetsFor(setBytes, c.d.dev.Info().L2CacheBytes)
}

// matShape returns the shape of the benchmark's matrix: Metal.jl's (1000, 512)
// or (side, side) at /16k.
func (c *setupCtx) matShape() []int {
	if c.large {
		return []int{c.side, c.side}
	}
	return []int{matRows, matCols}
}

// elems returns the number of elements of shape.
func elems(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// sizeOf returns the size of a T in bytes.
func sizeOf[T gpu.Elem]() int64 {
	var z T
	return int64(unsafe.Sizeof(z))
}

// newArr returns an uninitialized contiguous array of the shape in st's memory;
// c's Teardown frees it.
func newArr[T gpu.Elem](c *setupCtx, st storage, shape ...int) (*gpu.Array[T], error) {
	if st == devMem {
		a, err := gpu.Empty[T](c.s(), shape...)
		if err != nil {
			return nil, err
		}
		c.k.add(a.Free)
		return a, nil
	}
	b, err := c.d.dev.AllocUnified(max(1, int64(elems(shape))*sizeOf[T]()))
	if err != nil {
		return nil, err
	}
	c.k.add(b.Free)
	return gpu.ArrayOf[T](b, shape...)
}

// uniform returns a float32 array of uniform numbers in [0, 1).
func uniform(c *setupCtx, st storage, shape ...int) (*gpu.Array[float32], error) {
	a, err := newArr[float32](c, st, shape...)
	if err != nil {
		return nil, err
	}
	return a, gpu.RandInto(c.s(), c.g, a)
}

// smallInts returns an int64 array uniform in [-10, 10].
func smallInts(c *setupCtx, st storage, shape ...int) (*gpu.Array[int64], error) {
	a, err := newArr[int64](c, st, shape...)
	if err != nil {
		return nil, err
	}
	return a, gpu.RandIntInto(c.s(), c.g, a, -10, 11)
}

// coins returns a bool array of fair coins.
func coins(c *setupCtx, st storage, shape ...int) (*gpu.Array[bool], error) {
	a, err := newArr[bool](c, st, shape...)
	if err != nil {
		return nil, err
	}
	return a, gpu.RandBitsInto(c.s(), c.g, a)
}

// fixture returns the benchmark's Float32 or Int64 input of the shape, in
// st's memory: uniform [0, 1) or [-10, 10].
func fixture[T float32 | int64](c *setupCtx, st storage, shape ...int) (*gpu.Array[T], error) {
	var z T
	switch any(z).(type) {
	case float32:
		a, err := uniform(c, st, shape...)
		return any(a).(*gpu.Array[T]), err
	default:
		a, err := smallInts(c, st, shape...)
		return any(a).(*gpu.Array[T]), err
	}
}

// flat returns the 1-d view of a contiguous array.
func flat[T gpu.Elem](a *gpu.Array[T]) (*gpu.Array[T], error) { return a.Reshape(-1) }

// freeing returns an error-joining helper for bodies that make results.
func freeing(err error, frees ...interface{ Free() error }) error {
	for _, f := range frees {
		if f != nil {
			err = errors.Join(err, f.Free())
		}
	}
	return err
}

// op is one benchmark of the array suite (or the kernel and integration
// suites) at one size.
type op struct {
	// name is the full name without LargeSuffix.
	name string
	// large makes the /16k benchmark: GPU mode (device events, calibrated
	// calls per sample) unless host is set.
	large bool
	// host keeps a /16k benchmark in Host mode (a latency, such as reading
	// ten scalars).
	host bool
	// bytes is the nominal Bytes for the registration (at 16384^2 for /16k;
	// setup reports the run's).
	bytes int64
	// setup makes the inputs, returns the body and the bytes one call moves.
	setup func(c *setupCtx) (body func() error, bytes int64, err error)
	// raw says that a raw driver baseline "raw/" + the full name is registered: the
	// op names it as its Baseline and shares its Interleave group.
	raw bool
	// interleave, if not empty, is the op's Interleave group (without raw).
	interleave string
}

// fullName returns the op's benchmark name.
func (o op) fullName() string {
	if o.large {
		return o.name + bench.LargeSuffix
	}
	return o.name
}

// registerOp registers o: at Metal.jl's size in Host mode with one call per
// sample (the call and a stream synchronize, as Metal.@sync), at /16k in GPU
// mode. Setup runs o.setup with a fresh generator and waits for the inputs
// (the runner synchronizes after Setup); Teardown frees what Setup made.
func registerOp(o op) {
	var c *setupCtx
	var body func() error
	b := bench.Benchmark{
		Name:  o.fullName(),
		Bytes: o.bytes,
		Mode:  bench.Host,
		Iters: 1,
		Setup: func(env *bench.Env) error {
			d, err := devOf(env)
			if err != nil {
				return err
			}
			c = &setupCtx{env: env, d: d, k: &keep{}, g: gpu.NewGenerator(benchSeed), large: o.large, side: env.Side()}
			fn, n, err := o.setup(c)
			if err != nil {
				return errors.Join(err, d.s.Synchronize(bg), c.k.free())
			}
			body, env.Bytes = fn, n
			return nil
		},
		Teardown: func(*bench.Env) error {
			err := c.k.free()
			c, body = nil, nil
			return err
		},
		Body: func() error { return body() },
	}
	if o.large && !o.host {
		b.Mode, b.Iters = bench.GPU, 0
	}
	if o.raw {
		b.Interleave, b.Baseline = b.Name, "raw/"+b.Name
	} else if o.interleave != "" {
		b.Interleave = o.interleave
	}
	bench.Register(b)
}

// rotation makes n sets with mk and returns a rotation over them.
func rotation[T any](n int, mk func() (T, error)) (*bench.Rotation[T], error) {
	sets := make([]T, n)
	for i := range sets {
		var err error
		if sets[i], err = mk(); err != nil {
			return nil, err
		}
	}
	return bench.NewRotation(sets...), nil
}

// registerArrays registers array/copy, the iteration group (on device and
// unified memory), array/broadcast, array/floor_divide/int32 and
// array/remainder/float32, at both sizes.
func registerArrays() {
	for _, large := range []bool{false, true} {
		for _, st := range []storage{devMem, unifiedMem} {
			registerCopyOp(st, large)
			registerIteration(st, large)
		}
		registerBroadcast(large)
		registerDivmod(large)
	}
}

// nominalElems is the element count of the registration's nominal Bytes:
// Metal.jl's matrix, or 16384^2 for /16k (Setup reports the run's bytes).
func nominalElems(large bool) int64 {
	if large {
		return bench.LargeSide * bench.LargeSide
	}
	return matElems
}

// registerCopyOp registers array/copy (Metal.jl's copy(gpu_mat)): a new array
// and gpu.Copy into it (the driver's device-to-device copy), freed again.
// Bytes: read and written, 8 per element.
func registerCopyOp(st storage, large bool) {
	registerOp(op{
		name:  st.prefix() + "copy",
		large: large,
		bytes: 8 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			n := int64(elems(shape))
			rot, err := rotation(c.sets(4*n), func() (*gpu.Array[float32], error) { return uniform(c, st, shape...) })
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				out, err := gpu.Empty[float32](s, shape...)
				if err != nil {
					return err
				}
				return freeing(gpu.Copy(s, out, rot.Next()), out)
			}, 8 * n, nil
		},
	})
}

// scalarReads is how many elements array/iteration/scalar reads, one by one
// (Metal.jl: [gpu_vec[i] for i in 1:10]).
const scalarReads = 10

// registerIteration registers Metal.jl's iteration group on the flattened
// matrix (its gpu_vec, gpu_vec_ints, gpu_vec_bools):
//
//   - scalar: Array.At of elements 0..9 one by one (each a round trip; on
//     unified memory a read of the host's view). Host clock at both sizes,
//     no bytes: a latency.
//   - logical: gpu.Extract(mask, v), v[mask] of the float32 vector with a
//     random mask. Bytes: the mask, the vector, the k selected elements.
//   - findall/bool: gpu.Nonzero of the bool vector; findall/int:
//     gpu.NonzeroWhere("x % 2 != 0") (Julia's isodd) of the Int64 vector.
//     Bytes: the input and 8 bytes per index found.
//   - findfirst/bool: gpu.FindFirst of the bool vector; findfirst/int:
//     gpu.FindFirstWhere("x % 2 != 0"). At Metal.jl's size the data are random
//     as in Metal.jl (the first hit is among the first elements, and our kernel
//     stops there; the peers' argmax reads everything); at /16k the one hit is
//     the last element, so the figure is the full scan's bandwidth. Bytes: the
//     input.
//   - findmin/1d: gpu.FindMin of the float32 vector (value and index);
//     findmin/2d: gpu.FindMin(Axes(1)) of the matrix, Julia's dims=1. Bytes:
//     the input and 12 bytes (value, index) per result.
func registerIteration(st storage, large bool) {
	p := st.prefix() + "iteration/"
	n := nominalElems(large)
	registerOp(op{
		name: p + "scalar", large: large, host: true,
		setup: func(c *setupCtx) (func() error, int64, error) {
			m, err := uniform(c, st, c.matShape()...)
			if err != nil {
				return nil, 0, err
			}
			v, err := flat(m)
			if err != nil {
				return nil, 0, err
			}
			return func() error {
				for i := range scalarReads {
					if _, err := v.At(bg, i); err != nil {
						return err
					}
				}
				return nil
			}, 0, nil
		},
	})

	registerOp(op{
		name: p + "logical", large: large, bytes: 5*n + 4*(n/2),
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := []int{elems(c.matShape())}
			type in struct {
				v    *gpu.Array[float32]
				mask *gpu.Array[bool]
			}
			rot, err := rotation(c.sets(5*int64(shape[0])), func() (x in, err error) {
				if x.v, err = uniform(c, st, shape...); err == nil {
					x.mask, err = coins(c, st, shape...)
				}
				return x, err
			})
			if err != nil {
				return nil, 0, err
			}
			k, err := gpu.CountNonzero(bg, c.s(), rot.Sets()[0].mask)
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			if err := checkSize(gpu.Extract(bg, s, rot.Sets()[0].mask, rot.Sets()[0].v))(k); err != nil {
				return nil, 0, err
			}
			return func() error {
				x := rot.Next()
				out, err := gpu.Extract(bg, s, x.mask, x.v)
				return freeing(err, out)
			}, 5*int64(shape[0]) + 4*int64(k), nil
		},
	})

	registerOp(op{
		name: p + "findall/bool", large: large, bytes: n + 8*(n/2),
		setup: func(c *setupCtx) (func() error, int64, error) {
			m := int64(elems(c.matShape()))
			rot, err := rotation(c.sets(m), func() (*gpu.Array[bool], error) { return coins(c, st, int(m)) })
			if err != nil {
				return nil, 0, err
			}
			k, err := gpu.CountNonzero(bg, c.s(), rot.Sets()[0])
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			if err := checkSize(gpu.Nonzero(bg, s, rot.Sets()[0]))(k); err != nil {
				return nil, 0, err
			}
			return func() error {
				out, err := gpu.Nonzero(bg, s, rot.Next())
				return freeing(err, out)
			}, m + 8*int64(k), nil
		},
	})

	registerOp(op{
		name: p + "findall/int", large: large, bytes: 8*n + 8*(n/2),
		setup: func(c *setupCtx) (func() error, int64, error) {
			m := int64(elems(c.matShape()))
			rot, err := rotation(c.sets(8*m), func() (gpu.Vars, error) {
				x, err := smallInts(c, st, int(m))
				return gpu.Vars{"x": x}, err
			})
			if err != nil {
				return nil, 0, err
			}
			k, err := countWhere(c.s(), "x % 2 != 0", rot.Sets()[0])
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			if err := checkSize(gpu.NonzeroWhere(bg, s, "x % 2 != 0", rot.Sets()[0]))(int(k)); err != nil {
				return nil, 0, err
			}
			return func() error {
				out, err := gpu.NonzeroWhere(bg, s, "x % 2 != 0", rot.Next())
				return freeing(err, out)
			}, 8*m + 8*k, nil
		},
	})

	registerOp(op{
		name: p + "findfirst/bool", large: large, bytes: n,
		setup: func(c *setupCtx) (func() error, int64, error) {
			m := int64(elems(c.matShape()))
			rot, err := rotation(c.sets(m), func() (*gpu.Array[bool], error) {
				if !c.large {
					return coins(c, st, int(m))
				}
				a, err := newArr[bool](c, st, int(m))
				if err == nil {
					err = gpu.Fill(c.s(), a, false)
				}
				if err == nil {
					err = a.Set(bg, true, int(m)-1)
				}
				return a, err
			})
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			if err := checkFirst(c.large, int(m))(gpu.FindFirst(bg, s, rot.Sets()[0])); err != nil {
				return nil, 0, err
			}
			return func() error {
				_, err := gpu.FindFirst(bg, s, rot.Next())
				return err
			}, m, nil
		},
	})

	registerOp(op{
		name: p + "findfirst/int", large: large, bytes: 8 * n,
		setup: func(c *setupCtx) (func() error, int64, error) {
			m := int64(elems(c.matShape()))
			rot, err := rotation(c.sets(8*m), func() (gpu.Vars, error) {
				if !c.large {
					x, err := smallInts(c, st, int(m))
					return gpu.Vars{"x": x}, err
				}
				x, err := newArr[int64](c, st, int(m))
				if err == nil {
					err = gpu.Fill(c.s(), x, 2)
				}
				if err == nil {
					err = x.Set(bg, -7, int(m)-1)
				}
				return gpu.Vars{"x": x}, err
			})
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			if err := checkFirst(c.large, int(m))(gpu.FindFirstWhere(bg, s, "x % 2 != 0", rot.Sets()[0])); err != nil {
				return nil, 0, err
			}
			return func() error {
				_, err := gpu.FindFirstWhere(bg, s, "x % 2 != 0", rot.Next())
				return err
			}, 8 * m, nil
		},
	})

	registerOp(op{
		name: p + "findmin/1d", large: large, bytes: 4*n + 12,
		setup: func(c *setupCtx) (func() error, int64, error) {
			m := int64(elems(c.matShape()))
			rot, err := rotation(c.sets(4*m), func() (*gpu.Array[float32], error) { return uniform(c, st, int(m)) })
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				v, i, err := gpu.FindMin(s, rot.Next())
				return freeing(err, v, i)
			}, 4*m + 12, nil
		},
	})

	rows := int64(matRows)
	if large {
		rows = bench.LargeSide
	}
	registerOp(op{
		name: p + "findmin/2d", large: large, bytes: 4*n + 12*rows,
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			m := int64(elems(shape))
			rot, err := rotation(c.sets(4*m), func() (*gpu.Array[float32], error) { return uniform(c, st, shape...) })
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				v, i, err := gpu.FindMin(s, rot.Next(), gpu.Axes(1))
				return freeing(err, v, i)
			}, 4*m + 12*int64(shape[0]), nil
		},
	})
}

// checkSize returns a check that a search's result (freed) has k elements.
func checkSize[T gpu.Elem](out *gpu.Array[T], err error) func(k int) error {
	return func(k int) error {
		if err != nil {
			return err
		}
		if n := out.Size(); n != k {
			err = fmt.Errorf("the search found %d elements, want %d", n, k)
		}
		return freeing(err, out)
	}
}

// checkFirst returns a check of a FindFirst over m elements: the last element
// at /16k, where it is the only hit; any hit at Metal.jl's size.
func checkFirst(large bool, m int) func(i int, err error) error {
	return func(i int, err error) error {
		switch {
		case err != nil:
			return err
		case large && i != m-1, i < 0 || i >= m:
			return fmt.Errorf("the first hit is at %d of %d", i, m)
		}
		return nil
	}
}

// countWhere returns how many elements satisfy the predicate src over vars.
func countWhere(s *gpu.Stream, src string, vars gpu.Vars) (int64, error) {
	r, err := gpu.MapReduce[int64](s, src, vars, gpu.OpSum)
	if err != nil {
		return 0, err
	}
	v, err := r.At(bg)
	return v, freeing(err, r)
}

// registerBroadcast registers array/broadcast, Metal.jl's gpu_mat .= 0f0 (the
// peers' fill(0)): gpu.EvalInto(mat, "v") with v a float32 0, the elementwise
// (broadcast) kernel writing every element. gpu.Fill would use the driver's
// memset instead. Bytes: 4 per element, written.
func registerBroadcast(large bool) {
	registerOp(op{
		name: "array/broadcast", large: large, bytes: 4 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			n := int64(elems(shape))
			zero := gpu.Vars{"v": float32(0)}
			rot, err := rotation(c.sets(4*n), func() (*gpu.Array[float32], error) { return uniform(c, devMem, shape...) })
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error { return gpu.EvalInto(s, rot.Next(), "v", zero) }, 4 * n, nil
		},
	})
}

// registerDivmod registers array/floor_divide/int32 and array/remainder/float32
// (NumPy's floor_divide and remainder; Metal.jl's suite has neither):
// gpu.FloorDivide and gpu.Remainder of two matrices, the named operations that
// allocate their result, so a new array per call, allocated and freed (as the
// peers' cp.floor_divide(a, b) and torch.floor_divide(a, b) without out=).
// Inputs (divmodInputs) have both signs in both operands and no divisor at or
// near 0: int32 x uniform in [-1000, 1000], y in [-1000, 1000] without 0;
// float32 x uniform in [-100, 100), y in [-10, -1) or [1, 10). Bytes: 12 per
// element, the two inputs read and the result written.
func registerDivmod(large bool) {
	registerBinaryOp(large, "array/floor_divide/int32", gpu.FloorDivide[int32])
	registerBinaryOp(large, "array/remainder/float32", gpu.Remainder[float32])
}

// registerBinaryOp registers name: f of two matrices of divmodInputs, its result
// freed in every call.
func registerBinaryOp[T int32 | float32](large bool, name string, f func(*gpu.Stream, *gpu.Array[T], *gpu.Array[T]) (*gpu.Array[T], error)) {
	size := sizeOf[T]()
	registerOp(op{
		name: name, large: large, bytes: 3 * size * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			shape := c.matShape()
			n := int64(elems(shape))
			type in struct{ x, y *gpu.Array[T] }
			rot, err := rotation(c.sets(2*size*n), func() (v in, err error) {
				v.x, v.y, err = divmodInputs[T](c, shape)
				return v, err
			})
			if err != nil {
				return nil, 0, err
			}
			s := c.s()
			return func() error {
				v := rot.Next()
				out, err := f(s, v.x, v.y)
				return freeing(err, out)
			}, 3 * size * n, nil
		},
	})
}

// divmodInputs returns the operands x and y of registerDivmod's rows, of the
// shape, in device memory: int32 x uniform in [-1000, 1000] and y in
// [-1000, 1000] without 0 (drawn in [-1000, 1000), the non-negative ones plus
// 1); float32 x uniform in [-100, 100) and y in [-10, -1) or [1, 10) (18u - 10
// for u < 0.5, 18u - 8 above, u uniform in [0, 1)).
func divmodInputs[T int32 | float32](c *setupCtx, shape []int) (x, y *gpu.Array[T], err error) {
	if x, err = newArr[T](c, devMem, shape...); err != nil {
		return nil, nil, err
	}
	if y, err = newArr[T](c, devMem, shape...); err != nil {
		return nil, nil, err
	}
	s := c.s()
	switch xv := any(x).(type) {
	case *gpu.Array[int32]:
		yv := any(y).(*gpu.Array[int32])
		if err = gpu.RandIntInto(s, c.g, xv, -1000, 1001); err == nil {
			err = gpu.RandIntInto(s, c.g, yv, -1000, 1000)
		}
		if err == nil {
			err = gpu.EvalInto(s, yv, "where(y >= 0, y + 1, y)", gpu.Vars{"y": yv})
		}
	case *gpu.Array[float32]:
		yv := any(y).(*gpu.Array[float32])
		if err = gpu.RandInto(s, c.g, xv); err == nil {
			err = gpu.RandInto(s, c.g, yv)
		}
		if err == nil {
			err = gpu.EvalInto(s, xv, "200*x - 100", gpu.Vars{"x": xv})
		}
		if err == nil {
			err = gpu.EvalInto(s, yv, "where(y < 0.5, 18*y - 10, 18*y - 8)", gpu.Vars{"y": yv})
		}
	}
	return x, y, err
}
