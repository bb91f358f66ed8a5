// Package nccl runs collectives across devices: AllReduce, Broadcast, Reduce,
// AllGather, ReduceScatter, and Send and Recv, on gpu.Buffers, enqueued on gpu.Streams.
// On CUDA it is NVIDIA's NCCL (loaded at run time by package ncclapi: building needs no
// NCCL); on the CPU backend an in-process communicator over goroutines offers the same
// API and semantics, so that code and tests run without GPUs.
//
// # Making communicators
//
// One process driving all its GPUs (or CPU devices):
//
//	comms, err := nccl.NewGroup(ctx, []*gpu.Device{d0, d1})
//
// One process per GPU, started torchrun-style (RANK, WORLD_SIZE, MASTER_ADDR,
// MASTER_PORT, LOCAL_RANK):
//
//	comm, err := nccl.FromEnv(ctx, nil) // CUDA device LOCAL_RANK
//
// or with an id passed by other means: rank 0 calls NewUniqueID, every rank NewComm.
// The context given at creation bounds the creation (NCCL's non-blocking creation,
// polled, so that it can be aborted) and then the communicator's life: when it ends,
// the communicator is aborted.
//
// # Calls
//
//	err = comm.AllReduce(s, x, x, n, dtype.Float32, nccl.Sum) // in place
//	err = s.Synchronize(ctx)
//
// A call checks its arguments (sizes, element type, ranks, devices, send and receive
// buffers that overlap other than in place: errors wrap gpu.ErrInvalidValue), then
// enqueues the collective on s and returns. Its buffers are
// ordered by the runtime's tracking, like a kernel's: the collective waits for earlier
// conflicting uses on other streams, and later uses wait for it, with no explicit
// synchronization (Buffer.Access on s with Read for the send buffer and Write for the
// receive buffer, nested, the NCCL call inside the innermost scope). Waits are the
// runtime's: Stream.Synchronize, events, copies to the host.
//
// Group launches several calls together (NCCL API: ncclGroupStart, ncclGroupEnd): a
// process driving several ranks from one goroutine must group their calls, and
// dependent Send and Recv calls must be grouped. A group whose calls use several
// streams acts, as NCCL's, as if posted on every one of them: it waits for the work
// enqueued on each before it, and their later work waits for it.
//
// # Failures
//
// NCCL's result codes become errors matching ErrInvalidArgument, ErrInvalidUsage,
// ErrRemote and the other sentinels. A communicator is aborted (NCCL API:
// ncclCommAbort) by Comm.Abort, by the end of its context, by an asynchronous error
// that its watchdog finds (it polls ncclCommGetAsyncError every few milliseconds while
// collectives are in flight), by the failure of a rank of the same NewGroup, and, for
// FromEnv, by the loss of another process (its rendezvous connection breaks). An abort
// makes every rank's pending calls end with an error rather than hang: with
// collectives in flight it faults the device (see Comm.Abort), so that the waits for
// their work return errors; Comm.Err says why. NCCL itself does not notice a peer
// process that exits while the survivors' kernels wait on NVLink: the rendezvous
// connection of FromEnv, or a context, is what ends such waits.
//
// # The CPU communicator
//
// On the CPU backend each call is a Go kernel (gpu.NewGoFunction) launched on the
// rank's stream with the call's buffers as tracked arguments (a group's calls of one
// rank are one kernel, on the stream of the first, joined with the others by events); inside, the ranks meet at
// a rendezvous per call (keyed by a sequence number per communicator, or per pair of
// ranks for Send and Recv), each computes its share of the result in the element type,
// and each waits for the others before its kernel returns. The ranks must be distinct
// CPU devices: make them with gpu.NewDevice(cpu.New(0)). Unlike NCCL, it checks that
// the ranks make the same calls (kind, count, type, operator, root), failing them with
// ErrInvalidUsage otherwise. A rank that aborts (or whose context ends, or whose device
// faulted) makes the other ranks' pending kernels return an error, which faults their
// devices: a CPU device's fault is sticky, like CUDA's, so make new devices to go on.
// A Group launches its ranks' kernels one rank after another: if one rank's launch
// fails (a buffer freed meanwhile, a closed stream), the ranks launched before it would
// wait for it forever, so the communicators are aborted, as by a failed rank (on CUDA
// the group is one ncclGroupEnd, and a failed launch launches nothing). Ranks in
// several processes are not supported (FromEnv with WORLD_SIZE > 1 returns an
// error wrapping ErrNotSupported).
//
// NVLink multicast (NVLS) stays off: package ncclapi sets NCCL_NVLS_ENABLE=0 before
// loading NCCL unless the variable is set, and this package never sets it.
package nccl
