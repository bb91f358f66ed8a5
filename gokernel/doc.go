// Package gokernel runs GPU kernels written in Go: it compiles a kernel's Go source to
// PTX for CUDA devices (go/parser, go/types, and package ptx's builder; no toolkit
// at run time), and on the CPU backend it runs the kernel's compiled Go function
// itself, so that the same kernel is tested without a GPU.
//
// A kernel is an ordinary Go function whose first parameter is a kern.Thread (package
// kern: the thread's position, the block barrier, shared memory, warp shuffles and
// votes, atomics, fences, and math functions that give the same bits everywhere):
//
//	//go:embed saxpy.go
//	var saxpySrc string
//
//	func Saxpy(t kern.Thread, a float32, x, y []float32) {
//		if i := t.Index(); i < len(y) {
//			y[i] = a*x[i] + y[i]
//		}
//	}
//
//	k, err := gokernel.New(saxpySrc, Saxpy)  // parse and check now
//	err = k.LaunchN(s, n, 2, x, y)           // x, y: *gpu.Array[float32] of n elements
//
// The source comes as a string, typically the kernel's own file through //go:embed (a
// program's binary holds no source). New finds the function's name and file itself;
// Compile takes them for a kernel without a Go function (GPU only). The source is
// parsed and type-checked against declarations of packages kern, math and math/bits
// embedded here, so no Go toolchain is needed; the file may hold other code (imports,
// tests, the embed directive): only errors inside the functions the kernel reaches
// count.
//
// # The Go subset
//
// A kernel takes a kern.Thread, then numbers (the sized integers, int, uint, uintptr,
// float32, float64; bool) and slices of numbers, and returns nothing. Its body may
// use local variables of those types (and kern.Dim), constants, every arithmetic,
// bit, comparison and logical operator, conversions between number types, if, for
// (all three forms), for range over an integer or a slice, switch (with or without a
// tag; no fallthrough), break and continue (with labels), return, len, cap, min, max,
// slice expressions (s[lo:hi], s[lo:hi:max]), panic with a constant, calls of the
// source's other functions (inlined; no recursion), of package kern, and of the math
// and math/bits functions listed below. Generic kernels are instantiated per
// launch, with the type arguments the launch's arguments give; generic helpers per
// call.
//
// Everything else is refused with an *Error at its position (file:line:col) saying
// what to write instead: goroutines, defer, channels, select, goto, fallthrough,
// closures and function values, methods, pointers (&x; index a slice instead),
// allocation (make, new, append: memory comes from the parameters and kern.Shared),
// composite literals, arrays, strings, maps, interfaces, package-level variables
// (pass a parameter, or use a constant).
//
// A slice is a pointer, a length and a capacity. A kernel's slice parameters are
// global memory; kern.Shared returns shared memory. The state space of a slice
// variable is fixed by the first value it holds: a variable can't hold global memory
// at one time and shared memory at another.
//
// # Go's semantics on the GPU
//
// Integer arithmetic wraps at the type's width (8- and 16-bit values live in 32-bit
// registers and are wrapped after each operation); division truncates toward zero,
// and MinInt / -1 is MinInt (its remainder 0), as in Go; a shift by the width or
// more gives 0 (or the sign, for >> of a negative value). Float arithmetic is IEEE
// with round-to-nearest, every operation rounded (add.rn, mul.rn: no contraction into
// fused multiply-adds; kern.FMA and math.FMA fuse explicitly). Go's compiler may fuse
// x*y + z on arm64, ppc64 and s390x (the spec allows it): write float32(x*y) + z where
// the CPU must give the GPU's bits. Comparisons with NaN are false (!= true).
// Conversions: integer to float rounds to nearest; float to integer truncates toward
// zero; Go leaves out-of-range float-to-integer conversions (NaN, ±Inf, values beyond
// the type) to the implementation: the GPU saturates (NaN gives 0), amd64 gives the
// "integer indefinite" value. Go does not specify a NaN's sign or payload either: the
// GPU produces the canonical NaN (0x7fffffff, 0x7fffffffffffffff), amd64 a negative
// one for 0/0, so code that inspects a NaN's bits (math.Signbit, math.Copysign with a
// NaN sign, math.Float64bits) can see different bits on the CPU.
//
// # Checks and failures
//
// Index expressions, slice expressions, integer divisions (and remainders) and shifts
// by signed counts are checked as Go checks them, and panic(c) fails on purpose. A
// failing thread records the failure and exits: the other threads run on (an exited
// thread releases the barriers it would hold up, PTX's rule for exit), and the next
// wait that covers the launch (Synchronize of its stream or of the device, a host read
// of an array the launch, or later work on its stream, wrote: the waits that report
// gpu.ErrIndexOutOfRange) returns a *Fault that wraps gpu.ErrKernelFailure and names
// the kernel, the source line, the block and thread, with Go's own message ("index
// out of range [1000] with length 1000"); each failing launch's first failure is
// reported once. The device stays usable: a CUDA trap would end its context for good,
// so the kernel writes its first failure into its launch's check slot (pinned memory
// mapped for the device: gpu.Stream.LaunchChecked, the mechanism of the index
// operations' errors too) and exits instead. On the CPU backend the Go function's own
// panics are recovered per thread and recorded the same way. Kernel.Unchecked compiles the checks
// out (the GPU only: the CPU runs compiled Go, which always checks); a failure then is
// whatever the hardware makes of it. A launch that keeps checks can't be captured
// into a graph (see Graphs).
//
// # Threads, barriers, warps, shared memory
//
// The threads of a launch are those of CUDA (see package kern). t.Sync() is the block
// barrier; the warp operations (kern.ShflXor, kern.ShflDown, kern.ShflUp, kern.Shfl,
// t.Ballot, t.All, t.Any, t.SyncWarp) use the mask of the lanes of the warp that exist
// (a partial last warp has fewer), and a source lane outside them gives the caller
// its own value, on the GPU (shfl.sync's clamp) as on the CPU. Every lane of a warp
// must call a warp operation together; every thread of a block must reach the same
// barriers. kern.Shared(t, n) declares a .shared array of n elements (n constant):
// one per source line, type and length, the same array for every thread of the block
// and every iteration, as CUDA's __shared__; a block has 48 KiB of it.
//
// # Math
//
// Package kern's math functions (kern.Exp, kern.Log, kern.Sin, kern.Pow, ... 25 of
// them, and kern.Sqrt, kern.FMA), for float32 and float64, give the same bits on the
// CPU and the GPU: the GPU runs the device math library of package ptx, the CPU its
// Go mirrors (package ptx/gomath).
//
// Of package math a kernel may call Sqrt, Abs, Floor, Ceil, Trunc, Round,
// RoundToEven, Copysign, Signbit, IsNaN, IsInf, Inf, NaN, FMA, Max, Min, Mod,
// Float32bits, Float32frombits, Float64bits and Float64frombits, which give Go's exact
// results on the GPU (but for NaN bits, above), and Exp, Exp2, Expm1, Log, Log2, Log10,
// Log1p, Sin, Cos, Tan, Asin, Acos, Atan, Atan2, Sinh, Cosh, Tanh, Asinh, Acosh,
// Atanh, Pow, Cbrt, Hypot and Erf, which run the device library on the GPU (within
// about an ulp, see package ptx) while the CPU runs Go's math package: the two may
// differ in the last bit. Use package kern's functions where the CPU and the GPU
// must agree. Of math/bits: OnesCount, LeadingZeros, TrailingZeros, Len, RotateLeft
// and Reverse, and their 32- and 64-bit forms. Every constant of both packages can be
// used.
//
// # Launching
//
// Kernel.Launch takes the stream, the grid and block (CUDA's limits apply on every
// backend) and one argument per parameter after the Thread: a contiguous *gpu.Array
// of the element type for a slice (the kernel sees its elements in row-major order;
// its use is tracked, as a read, a write or both, from what the kernel's code does
// with the slice), a Go value for a scalar (an int or a float64 converts to the
// parameter's type where it is representable, as Go defines it for untyped constants,
// so untyped constants in the call just work: an integer type must hold the value
// exactly (2.0 converts to an int; 2.5 and 300 for a uint8 are errors), a float type
// rounds it to nearest (16777217 gives float32 16777216) unless that overflows (1e300
// for a float32 is an error), and NaN and ±Inf convert to a float type as
// themselves). Kernel.LaunchN launches one thread per element (blocks of 256; n = 0
// launches nothing). Each instantiation is compiled and loaded once per device and
// kept for the process's life: New parses and checks the source (about a millisecond
// for a file of a few kernels), the first launch on a device compiles the
// instantiation (tens of microseconds) and has the driver load the module.
// Kernel.PTX returns the module text for a compute capability. The cache is the
// Kernel's own (per device and type arguments), not the device's cache of the
// library's kernels, which package gpu keeps unexported.
//
// # Elementwise operations on arrays
//
// A scalar function in the subset (numbers in, a number out, no kern.Thread) becomes
// an operation on arrays with NumPy's broadcasting, as NumPy's ufuncs and Numba's
// @vectorize make one: NewFunc1 for func(X) R, NewFunc2 for func(X, Y) R.
//
//	func clampedSum(x, y float32) float32 { return min(max(x+y, 0), 10) }
//
//	f, err := gokernel.NewFunc2(src, clampedSum)
//	z, err := f.Apply(s, x, y) // x (2, 3), y (3): z (2, 3)
//
// Apply returns a new contiguous array of the broadcast shape (gpu.BroadcastShapes);
// Into writes a given one (out=, which may be an input, updated in place; an input
// that overlaps it otherwise is copied first, as gpu.EvalInto and NumPy do, so the
// result is computed from the inputs as they were). The inputs may be any views:
// one of a single element is read as such (once per thread), a contiguous one of the
// result's shape as it is, and any other (strided, or broadcast along some axes) is
// first made a contiguous copy of its broadcast view (gpu.Contiguous: one more pass
// over it). The operation's kernel is a grid-stride loop over the result, made here
// and appended to the source, that calls the function (inlined on the GPU; the
// Go function itself on the CPU backend); its own indexing keeps no checks, and a
// failing check in the function is a *Fault naming it. Func1.Unchecked and
// Func2.Unchecked compile the function's checks out, as Kernel.Unchecked does.
//
// # Graphs
//
// A launch can be captured into a graph (gpu.Stream.Capture) where it is a plain
// launch on a GPU: where the instantiation keeps none of Go's run-time checks. Those
// are the kernels of Kernel.Unchecked (unless they call panic, which stays), the
// kernels whose every check the compiler proves passes (see "Why some checks are
// left out" below: for i := t.Index(); i < len(x); i += t.GridStride() { x[i] ... },
// say), and the elementwise operations whose function keeps none (x + y; or any
// function through Func1.Unchecked and Func2.Unchecked). A launch that keeps a check
// can't be: its failure is reported by a later wait that reads its launch's check
// slot (gpu.Stream.LaunchChecked), and no wait covers a graph's launches. On a
// capturing stream it is refused, the capture going on unharmed, with an error
// wrapping gpu.ErrCapturing that names the first check kept and what to launch
// instead. A scalar that the graph's launches should change (a seed, a step) is a
// *gpu.Param of the parameter's basic type (32- or 64-bit numbers), set between
// launches by gpu.Graph.SetParam; a plain value is fixed at the capture.
//
// The rule is the same on every backend, though the CPU backend's Go function always
// checks: what a GPU captures, it captures, with the same results at each launch of
// the graph. Outside a graph it reports a failure of any launch as a *Fault; in a
// graph, where a launch has no check slot, a failure faults the device
// (gpu.ErrLaunchFailed, naming the kernel and the line), as a failure of an unchecked
// kernel may fault a GPU.
//
// # On the CPU
//
// The CPU backend runs the Go function given to New through kern.Run: each block's
// threads one after another, or, for a kernel that reaches t.Sync or a warp
// operation (the compiler knows), each thread on its own goroutine, with barriers and
// warp operations that behave as the GPU's. Each thread is a call through reflection
// (a fraction of a microsecond): fine for tests and modest sizes, not a fast CPU
// path. A generic kernel runs on the CPU only with the instantiations given to New
// (NewNamed for instantiations made inside generic code).
//
// # Design notes
//
// Why the CPU runs the user's compiled function rather than executing the checked
// source: its semantics are Go's by construction, so the tests compare the compiler's
// PTX (on a GPU, or the PTX simulator) with Go itself, and a differential fuzzer
// generates kernels, builds them with the go command and compares. The price is speed
// on the CPU and the need to pass a generic kernel's instantiations.
//
// Why one shared array per source line: the CPU tells the arrays of a block apart by
// the call's position (runtime.Callers), and a line is what both sides agree on; a
// second kern.Shared on the same line is refused.
//
// Why a statement's loads are issued first: a checked index is a compare and a
// branch to the failure path, and ptxas moves no load above a branch, so in
// y[i] = a*x[i] + y[i] the multiplication would wait for x[i] before y[i] is even
// requested. The compiler loads the elements a statement reads first, in Go's order
// of evaluation, up to the first other check or call with effects (which keeps the
// first failure Go's). Across statements it doesn't: to keep several loads in flight
// in a loop of dependent statements, load into variables first (gpubench's
// gokernels.go has examples), or use Kernel.Unchecked. For the same reason a tuple
// assignment's stores (a[i], b[j] = x, y) follow one another with no branch between
// them: the elements' indices are checked, left to right, before the first store
// (ptxas sinks a load to its first use, so a check between two stores would leave
// each load waiting in turn). The first failure stays Go's, but a failing check
// keeps the statement's earlier stores from happening, where Go makes them before
// it panics.
//
// Why some checks are left out: as Go's compiler does (its prove pass), the compiler
// leaves out an index check it can prove passes: where a guard dominates the index
// (if i < len(x) { x[i] }; for i := a; i < len(x); i += d; if i >= n { return }),
// where an earlier check covers it (after x[i+3], x[i] needs none), where min bounds
// it, or where the index's range is known (t.Lane(), x & 31, a shared array's
// length). It follows integer values as affine forms over registers with ranges
// (the thread's position, lengths, constants, masks), through +, - and * that
// provably don't wrap. A variable written once keeps what is known of its value;
// writing a variable (or entering a loop that writes it) forgets every fact about
// it, and a check evaluated conditionally (right of && or ||, a case) proves
// nothing after it. So: to help it, write each index variable once (a new variable
// rather than reassigning one), guard a group of accesses with the highest index
// (if i3 < len(y) before y[i], y[i1], y[i3]), and mask indices into shared arrays
// (gpubench's gokernels.go has examples).
//
// Why consecutive elements read in one statement are one access: a CUDA programmer
// moves four floats in one 16-byte load (float4); in Go, write the elements
// themselves, in order, in one statement, and the compiler does it:
//
//	x0, x1, x2, x3 := x[i], x[i+1], x[i+2], x[i+3]       // ld.global.v4.f32
//	y[i], y[i+1], y[i+2], y[i+3] = x3, x2, x1, x0        // st.global.v4.f32
//
// Consecutive elements of one slice variable in global memory (4- or 8-byte
// elements; 16 bytes at most: four float32 or two float64), with indices e+c, e+c+1,
// ... of one expression e of type int, int64, uint, uint64 or int32, group into one
// access where the first element's address is aligned to the access's size, and go
// one by one where it is not (a slice expression x[1:] starts off the alignment):
// the result is the same either way. The run's checks are its first and last index
// (each index in between is then in range); only where those fail do the checks run
// one by one, so the failure is still Go's first. Indices of other forms, other
// types, shared arrays and other statements go one element at a time.
//
// Why an int32 index is cheaper: an index of 32 bits or fewer (int32 arithmetic,
// the CUDA programmer's int) is checked by one 32-bit compare with min(len, 2^31)
// (computed once per slice) and addressed by one widening multiply-add; an int
// index costs a 64-bit compare and 64-bit address arithmetic.
//
// Why int is 64-bit on the GPU too: it is Go's int. Index arithmetic in int costs
// 64-bit integer instructions; a kernel that needs the last bit of integer throughput
// can compute in int32.
package gokernel
