// Package gpu is GPU computing for Go: devices, streams, events, memory and kernels,
// correct under any number of goroutines and streams, on NVIDIA GPUs through the CUDA
// driver (loaded at run time: building needs no CUDA toolkit) or on the CPU backend,
// which has the same semantics and is the default where there is no GPU.
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
// # Errors
//
// Errors wrap the sentinels ErrNoDevice, ErrOutOfMemory, ErrInvalidValue,
// ErrLaunchFailed, ErrNotSupported and ErrClosed; match them with errors.Is. A CUDA
// error is also a *cu.Error with the CUresult's name and message. A kernel that
// records a failure in a FaultRecord (package gokernel's kernels, written in Go, on an
// index out of range) ends the next wait with an error wrapping ErrKernelFailure, and
// the device stays usable.
//
// Bad input gets an error, never a panic: a nil *Stream, a nil array, a nil
// context.Context or a nil ReduceOption or ScanOption given to an operation is an error
// wrapping ErrInvalidValue, and so is a method called on a nil receiver (a nil *Array,
// *Buffer, *Device, *Event, *Module, *Kernel or *Stream), Free and Close included: a
// nil array from a failed Reshape gives BroadcastTo or Free an error. On a nil receiver
// of any of the package's types (*Function and *Generator too) the methods that return
// no error return zero values (Size 0, Shape nil, String "<nil array>"), as each type's
// documentation says.
//
// # Choosing a device
//
// Open returns the first CUDA device, else the CPU. GPU_BACKEND=cpu, cuda or cuda:N
// forces a choice.
package gpu
