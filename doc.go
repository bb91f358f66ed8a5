// Package gpu is GPU computing for Go: devices, streams, events, memory and kernels,
// correct under any number of goroutines and streams, on NVIDIA GPUs through the CUDA
// driver (loaded at run time: building needs no CUDA toolkit, and with CGO_ENABLED=0 on
// linux/amd64 or linux/arm64 no C compiler either: see package cu's Binding) or on the
// CPU backend, which has the same semantics and is the default where there is no GPU.
//
// # Waiting
//
// Every wait takes a context.Context and never pins an OS thread for long: a wait
// queries, spins briefly, then parks the goroutine, and a small, bounded set of waiter
// threads per device completes parked waits with blocking driver calls that sleep. A
// cancelled wait returns ctx.Err() at once (the GPU work goes on); a fault ends every
// wait with an error wrapping ErrLaunchFailed. WaitPolicy chooses another way per call
// or per device. (CUDA.jl and Metal.jl made their waits non-blocking for the same
// reasons.)
//
// # Buffers are ordered across streams automatically
//
// Launch and the copy methods take buffers, not raw pointers, and record each use: an
// operation on stream S waits for conflicting uses on other streams (a read for the last
// write; a write also for the reads since), and the event marking a use is recorded
// after the operation is enqueued. A buffer used on one stream only costs nothing, and
// one that moved to a stream returns to that free path once the other streams' uses are
// behind it (complete, or waited for). Raw device pointers exist only inside
// Buffer.Access, whose use is recorded after the scope returns. Free is safe at any
// moment.
//
// # Host copies
//
// The plain host reads and copies (Buffer.CopyToHost, CopyFromHost and CopyFrom,
// Array.ToSlice, CopyToHost, CopyFromHost, At and Set) first wait on the host, under
// their context and without the driver, for the uses of the buffer they conflict with,
// then copy on the device's own copy streams through pinned memory with asynchronous
// copies and the package's own waits: a cancel returns ctx.Err() at once and nothing
// touches the Go memory afterwards, a copy of a buffer that is ready never waits behind
// copies that wait, and any number of goroutines copying at once hold a bounded number
// of OS threads. Stream.CopyDtoH and CopyHtoD only enqueue, pageable Go memory
// included (through the stream's pinned staging ring on CUDA, whose driver copies
// pageable memory synchronously).
//
// # Graphs and host functions
//
// Stream.BeginCapture ... EndCapture (or Stream.Capture) records the work enqueued on a
// stream, any of the package's operations, into a Graph, which Graph.Launch runs as a
// whole, as often as wanted, on any stream of the device: on CUDA one launch costs about
// one kernel launch however many operations the graph holds (CUDA graphs, captured in
// relaxed mode). A launch is one tracked operation: it waits for conflicting uses of the
// graph's buffers on other streams, and later uses wait for it. The graph keeps the
// memory it uses until Graph.Close, and owns its scratch. What needs the host in the
// middle of the work (waits, events, copies of Go memory, results read back, index
// checks in raise mode) is refused during a capture with ErrCapturing, and so is a
// read, on the host or by an operation on a stream that isn't capturing, of what the
// open capture writes (another capture may read it: its graph's launch comes after).
// Graph.SetParam changes a captured launch's Param argument without a new capture.
// Random numbers drawn inside a capture are fresh at every launch, as in PyTorch's
// graphs: each launch draws what its captured calls would draw if made at the launch,
// from their generators' state then, and advances the generators past them; the capture
// itself draws nothing and leaves the generators where they were. (A kernel of your own,
// by Stream.Launch or package gokernel, taking a seed as a plain scalar repeats it;
// pass a Param and SetParam it instead.)
//
// Stream.HostFunc runs a Go function in stream order, on a goroutine of the stream's
// own (not the driver's callback thread): the work after it waits for it to return, and
// it may wait for other streams, take locks or do I/O. An error or panic faults the
// stream.
//
// # Streams of other libraries
//
// Device.AdoptStream wraps a stream handle made by other code in the process (CUDA: a
// CUstream; 0 for the legacy default stream), and Stream.Handle hands one out. What is
// ordered: everything enqueued on one device stream, whoever enqueued it, runs in
// order; the package's operations on an adopted stream are tracked like any other, so
// they wait for, and are waited for by, its operations on other streams. What needs an
// event: another library's work on its own streams that reads or writes this package's
// buffers. Hand a buffer to such work inside Buffer.Access on a Stream of the stream
// that work runs on (adopt it), which orders it with every other use; otherwise order it
// yourself with Stream.Record and WaitEvent on adopted streams. The legacy default
// stream does not synchronize with this package's streams (they are created
// non-blocking).
//
// # Element types
//
// Arrays hold bool, the sized integers, int and uint, float32, float64, and the
// half-precision Float16 and BFloat16 (package half's named uint16s): see Float16 for
// how they compute (float32 arithmetic and accumulation, one rounding to nearest even
// on store, NumPy 2's promotion).
//
// # Printing
//
// fmt prints an array's values in NumPy's layout (fmt.Println(a) shows [[1 2 3] ...],
// summarised past PrintThreshold elements), reading them from the device and waiting
// for the work writing them: see Array.Format, and Array.Text for a read under a
// context.
//
// # Errors
//
// Errors wrap the sentinels ErrNoDevice, ErrOutOfMemory, ErrInvalidValue,
// ErrLaunchFailed, ErrNotSupported and ErrClosed; match them with errors.Is. A CUDA
// error is also a *cu.Error with the CUresult's name and message. An index out of
// range that a kernel finds (Take, Put, AddAt ... in raise mode) is reported by a later
// wait, wrapping ErrIndexOutOfRange and ErrInvalidValue: see ErrIndexOutOfRange. The
// same waits report the failures of kernels launched by Stream.LaunchChecked (package
// gokernel's kernels, written in Go, on an index out of range), wrapping
// ErrKernelFailure; the device stays usable.
//
// Bad input gets an error, never a panic: a nil *Stream, a nil array, a nil
// context.Context or a nil ReduceOption or ScanOption given to an operation is an error
// wrapping ErrInvalidValue, and so is a method called on a nil receiver (a nil *Array,
// *Buffer, *Device, *Event, *Module, *Kernel or *Stream), Free and Close included: a
// nil array from a failed Reshape gives BroadcastTo or Free an error. On a nil receiver
// of any of the package's types (*Function and *Generator too) the methods that return
// no error return zero values (Size 0, Shape nil, String "<nil array>"), as each type's
// documentation says. A zero value the package didn't make (&Stream{}, &Device{},
// &Buffer{}, &Event{}, &Module{}, &Graph{}, &Array[T]{}) is a nil one.
//
// # Matrix products
//
// MatMul (numpy.matmul), MatMulInto, Gemm (C = alpha*A@B + beta*C), Dot and Vdot run on
// the device's library where it has one (cuBLAS on CUDA, loaded at run time; gonum on the
// CPU), else on a kernel this package generates; views go to the library as
// transposes and leading dimensions. GPU_MATMUL=generated forces the generated kernel,
// GPU_CUBLAS_LIBRARY names the cuBLAS file, and SetFloat32MatMulPrecision allows TF32.
//
// # NaN
//
// One policy, on every backend: a NaN that an operation computes is the canonical NaN,
// 0x7fffffff for float32 and 0x7fffffffffffffff for float64 (float16 and bfloat16 round
// it to 0x7fff). That covers arithmetic (+ - * / %, sqrt, the math functions, rounding),
// Minimum, Maximum, fmin and fmax, the reductions and scans (Sum, Prod, Min, Max, CumSum,
// CumMax...), Median and Quantile (NanMedian and NanQuantile leave NaNs out, and give NaN
// where all are NaN), the sums of AddAt and BincountWeights (atomic or Deterministic): a minimum,
// maximum, sum or product with a NaN operand is the canonical NaN, whichever NaN it was
// and in whatever order the values met. It is what NVIDIA GPUs' float32 arithmetic gives
// anyway (their float64 arithmetic passes an operand's payload on: the kernels replace
// it), and it makes results independent of the order of evaluation, which differs
// between backends and launch shapes. NumPy instead returns the NaN operand itself. Operations
// that move values without computing keep a NaN's bits (copies, Where, views, FindMin and
// FindMax's values, which are the elements at the indices), and so do those defined on
// the sign bit (negation, Absolute, copysign); conversions between float types keep its
// sign. ArgMin and ArgMax take the first NaN. Matrix products are the libraries' (cuBLAS,
// gonum): NaN where NumPy gives NaN, with bits of the library's choosing. Zeros: -0 is
// below +0 for Minimum, Maximum, Min, Max, CumMin and CumMax, and equal to it for ArgMin,
// ArgMax and comparisons. (internal/fp states the rules; internal/kernel's operator table
// applies them.)
//
// # Choosing a device
//
// Open returns the first CUDA device, else the CPU. GPU_BACKEND=cpu, cuda or cuda:N
// forces a choice.
package gpu
