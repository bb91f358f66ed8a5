// Package kern is what a GPU kernel written in Go calls: the thread's position in its
// block and grid, the block barrier, shared memory, warp shuffles and votes, atomics,
// fences and math functions whose results are the same bits on the CPU and the GPU.
//
// A kernel is an ordinary Go function whose first parameter is a Thread:
//
//	func Saxpy(t kern.Thread, a float32, x, y []float32) {
//		if i := t.Index(); i < len(y) {
//			y[i] = a*x[i] + y[i]
//		}
//	}
//
// Package gokernel compiles such a function, from its source, to PTX for the GPU, and
// runs the compiled Go function itself on the CPU backend: both through this package,
// whose functions are real Go code (Run runs a grid of threads on goroutines, with
// barriers, shared memory and warp operations behaving as on a GPU). Go has no
// goroutine-local state, so the thread's context is the explicit parameter t.
//
// # Threads, blocks and warps
//
// A launch runs a grid of blocks of threads, both in up to three dimensions (Dim).
// t.ThreadIdx() is the thread's position in its block, t.BlockIdx() the block's in the
// grid, t.BlockDim() and t.GridDim() their sizes; t.Index() is the common
// one-dimensional global index BlockIdx().X*BlockDim().X + ThreadIdx().X, and
// t.GridStride() the number of threads along x (the step of a grid-stride loop).
//
// The threads of a block are numbered x fastest (x + y*BlockDim.X + z*BlockDim.X*
// BlockDim.Y); consecutive groups of WarpSize (32) of them are warps, t.Lane() is the
// position in the warp. The last warp of a block whose size is not a multiple of 32 is
// partial: it has only the lanes that exist.
//
// # Barriers and warp operations
//
// t.Sync() waits until every thread of the block has called it (CUDA's
// __syncthreads): what threads wrote before it, shared memory included, is visible to
// every thread of the block after it. A thread that has returned counts as arrived
// (PTX's exit releases barriers it holds up). Every thread of a block must reach the
// same sequence of Sync calls: on the CPU a block whose live threads all wait at
// different barriers is reported (a deadlock), on a GPU it hangs or misbehaves.
//
// The warp operations (ShflXor, ShflDown, ShflUp, Shfl, t.Ballot, t.All, t.Any,
// t.SyncWarp) exchange values among the lanes of a warp. Every lane of the warp that
// exists must call the same operation together (the CUDA *_sync functions with a full
// mask): don't call them under a condition that differs within a warp, or after some
// lanes have returned. A lane whose source lane is outside the warp's existing lanes
// (beyond a partial warp's end, or a computed lane outside [0, 32)) gets its own value
// back.
//
// # Shared memory
//
// Shared[T](t, n) declares an array of n (a constant) elements of type T shared by
// the threads of a block: every thread of the block gets the same array from the same
// call in the source, in every iteration of a loop (it is CUDA's __shared__
// declaration, one per source line: write at most one Shared call per line). Its
// contents at the start of a block are undefined on the GPU (zero on the CPU).
//
// # Atomics and fences
//
// AtomicAdd, AtomicMin, AtomicMax, AtomicAnd, AtomicOr, AtomicXor, AtomicExch,
// AtomicCAS, AtomicLoad and AtomicStore operate on one element of a slice (global or
// shared memory) of 32- or 64-bit elements; each returns the element's old value
// where it has one. Fence orders a thread's memory accesses for every thread of the
// device (PTX membar.gl), FenceBlock for the threads of its block (membar.cta).
//
// # Math
//
// Exp, Log, Sin, Pow and the other functions of this package compute exactly the same
// bits on the CPU and the GPU (the device math library of package ptx, whose Go
// mirrors are package ptx/gomath), NaN included. Go's own math package functions can
// be called in a kernel too; on the GPU they also run the device library, so the
// transcendental ones (math.Exp, math.Sin, ...) may differ from the CPU's math package
// in the last bit. Those that are exact on both are listed in package gokernel's
// documentation.
//
// # Running on the CPU
//
// Run runs a function over a grid on the CPU, each block's threads either one after
// another (the default, for kernels without barriers or warp operations) or each on
// its own goroutine (Config.Cooperative). A panic in a thread (an index out of range,
// a division by zero) ends that thread only, as a failed check ends a GPU thread, and
// Run returns the first one as a *Fault.
package kern

// WarpSize is the number of threads of a warp.
const WarpSize = 32

// Dim is a position or a size in up to three dimensions.
type Dim struct{ X, Y, Z int }

// Signed is the set of signed integer types.
type Signed interface {
	~int | ~int8 | ~int16 | ~int32 | ~int64
}

// Unsigned is the set of unsigned integer types.
type Unsigned interface {
	~uint | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uintptr
}

// Integer is the set of integer types.
type Integer interface{ Signed | Unsigned }

// Float is the set of floating-point types.
type Float interface{ ~float32 | ~float64 }

// Number is the set of the integer and floating-point types: the element types of a
// kernel's slices and the types its scalars may have (and bool).
type Number interface{ Integer | Float }

// Thread is the context of one thread of a kernel: its position and the machinery of
// its block. The zero Thread is not valid; Run and the launchers make them.
type Thread struct{ p *thread }

// ThreadIdx returns the thread's position in its block (CUDA threadIdx).
func (t Thread) ThreadIdx() Dim { return t.p.tid }

// BlockIdx returns the block's position in the grid (CUDA blockIdx).
func (t Thread) BlockIdx() Dim { return t.p.b.idx }

// BlockDim returns the size of a block in threads (CUDA blockDim).
func (t Thread) BlockDim() Dim { return t.p.b.run.block }

// GridDim returns the size of the grid in blocks (CUDA gridDim).
func (t Thread) GridDim() Dim { return t.p.b.run.grid }

// Index returns the thread's global index along x: BlockIdx().X*BlockDim().X +
// ThreadIdx().X.
func (t Thread) Index() int { return t.p.b.idx.X*t.p.b.run.block.X + t.p.tid.X }

// GridStride returns the number of threads of the grid along x: GridDim().X *
// BlockDim().X, the step of a grid-stride loop
// (for i := t.Index(); i < n; i += t.GridStride()).
func (t Thread) GridStride() int { return t.p.b.run.grid.X * t.p.b.run.block.X }

// Lane returns the thread's position in its warp, in [0, WarpSize).
func (t Thread) Lane() int { return t.p.linear % WarpSize }

// Warp returns the index of the thread's warp in its block.
func (t Thread) Warp() int { return t.p.linear / WarpSize }

// Sync waits until every thread of the block has called it (see the package doc).
func (t Thread) Sync() { t.p.syncBlock() }

// SyncWarp waits until every lane of the thread's warp has called it.
func (t Thread) SyncWarp() { t.p.warpOp(opSync, 0, 0) }

// Ballot returns a word whose bit i is set when lane i of the warp called it with p
// true (bits of lanes that don't exist are 0).
func (t Thread) Ballot(p bool) uint32 { return uint32(t.p.warpOp(opBallot, b2u(p), 0)) }

// All reports whether every lane of the warp called it with p true.
func (t Thread) All(p bool) bool { return t.p.warpOp(opAll, b2u(p), 0) != 0 }

// Any reports whether some lane of the warp called it with p true.
func (t Thread) Any(p bool) bool { return t.p.warpOp(opAny, b2u(p), 0) != 0 }

func b2u(p bool) uint64 {
	if p {
		return 1
	}
	return 0
}
