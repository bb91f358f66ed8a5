package nccl

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/nccl/internal/ncclapi"
)

// Op is a reduction operator (NCCL API: ncclRedOp_t).
type Op int

// The reduction operators (NCCL API: ncclSum, ncclProd, ncclMin, ncclMax, ncclAvg).
const (
	// Sum adds, in the element type: integers wrap around, floats round at each step.
	Sum Op = iota
	// Prod multiplies, in the element type.
	Prod
	// Min takes the smallest element; for floats a NaN loses to a number (C's fmin).
	Min
	// Max takes the largest element; for floats a NaN loses to a number (C's fmax).
	Max
	// Avg is the mean. For floats each input is multiplied by 1/world (rounded to the
	// element type) and the products summed; for integers the sum (wrapping) is divided
	// by world, truncating toward zero (NCCL: ncclAvg as PreMulSum and SumPostDiv).
	Avg
)

var opNames = [...]string{Sum: "sum", Prod: "prod", Min: "min", Max: "max", Avg: "avg"}

// String returns "sum", "prod", "min", "max" or "avg".
func (o Op) String() string {
	if o >= 0 && int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", int(o))
}

func (o Op) valid() bool { return o >= Sum && o <= Avg }

// redOp returns NCCL's operator.
func (o Op) redOp() ncclapi.RedOp {
	switch o {
	case Prod:
		return ncclapi.Prod
	case Min:
		return ncclapi.Min
	case Max:
		return ncclapi.Max
	case Avg:
		return ncclapi.Avg
	}
	return ncclapi.Sum
}

// DTypes lists the element types the collectives support: those NCCL supports (NCCL
// API: ncclDataType_t, without the FP8 types, which package dtype lacks).
var DTypes = []dtype.DType{
	dtype.Int8, dtype.Uint8, dtype.Int32, dtype.Uint32, dtype.Int64, dtype.Uint64,
	dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64,
}

// ncclType returns NCCL's element type for t.
func ncclType(t dtype.DType) (ncclapi.DataType, bool) {
	switch t {
	case dtype.Int8:
		return ncclapi.Int8, true
	case dtype.Uint8:
		return ncclapi.Uint8, true
	case dtype.Int32:
		return ncclapi.Int32, true
	case dtype.Uint32:
		return ncclapi.Uint32, true
	case dtype.Int64:
		return ncclapi.Int64, true
	case dtype.Uint64:
		return ncclapi.Uint64, true
	case dtype.Float16:
		return ncclapi.Float16, true
	case dtype.BFloat16:
		return ncclapi.Bfloat16, true
	case dtype.Float32:
		return ncclapi.Float32, true
	case dtype.Float64:
		return ncclapi.Float64, true
	}
	return 0, false
}

// Errors. NCCL's result codes become errors matching the sentinels below with
// errors.Is (ErrInvalidUsage for ncclInvalidUsage, and so on); argument checks made
// before NCCL is called return errors wrapping gpu.ErrInvalidValue.
var (
	// ErrAborted: the communicator was aborted: by Abort, by the cancellation of the
	// context it was created with, by an asynchronous NCCL error (ncclCommGetAsyncError),
	// or by the failure of another rank. The error that caused it is wrapped too.
	ErrAborted = errors.New("nccl: communicator aborted")
	// ErrNotSupported: the operation is not supported for the device's backend (a
	// multi-process communicator on the CPU backend).
	ErrNotSupported = gpu.ErrNotSupported
	// ErrClosed: the communicator was closed.
	ErrClosed = gpu.ErrClosed

	// ErrUnavailable: NCCL could not be loaded (no libnccl.so.2, or a build that cannot load libraries: see package cu's Binding).
	ErrUnavailable error = ncclapi.ErrUnavailable
	// ErrUnhandledCuda matches ncclUnhandledCudaError: a CUDA call inside NCCL failed.
	ErrUnhandledCuda error = ncclapi.ErrUnhandledCuda
	// ErrSystem matches ncclSystemError: a system call inside NCCL failed.
	ErrSystem error = ncclapi.ErrSystem
	// ErrInternal matches ncclInternalError.
	ErrInternal error = ncclapi.ErrInternal
	// ErrInvalidArgument matches ncclInvalidArgument.
	ErrInvalidArgument error = ncclapi.ErrInvalidArgument
	// ErrInvalidUsage matches ncclInvalidUsage; the CPU communicator also returns it
	// when ranks call different collectives (or different counts, types, operators or
	// roots) at the same point of their sequence, which NCCL does not detect.
	ErrInvalidUsage error = ncclapi.ErrInvalidUsage
	// ErrRemote matches ncclRemoteError: another rank or the network failed.
	ErrRemote error = ncclapi.ErrRemote
	// ErrTimeout matches ncclTimeout (NCCL releases after 2.28).
	ErrTimeout error = ncclapi.ErrTimeout
)

// Option configures a communicator at creation.
type Option func(*options)

type options struct {
	name     string
	noFault  bool
	blocking bool
}

// WithName names the communicator in NCCL's logs (NCCL API: ncclConfig_t.commName).
func WithName(name string) Option { return func(o *options) { o.name = name } }

// KeepDeviceOnAbort turns off the device fault that an abort with collectives in flight
// otherwise raises (see Comm.Abort): the aborted collectives' streams then complete
// normally, with undefined data in the buffers they wrote, and only Comm.Err reports
// the failure. Use it when the process must go on using the device after a failure (to
// save a checkpoint, say) and checks Comm.Err after each wait.
func KeepDeviceOnAbort() Option { return func(o *options) { o.noFault = true } }

// Blocking makes a blocking NCCL communicator (NCCL API: ncclConfig_t.blocking = 1)
// instead of the default non-blocking one. NCCL 2.28 runs each launch on a non-blocking
// communicator in a thread of its own and reports it as in progress until that thread is
// done, which costs tens of microseconds per call; a blocking communicator launches on
// the calling thread. The price: its creation cannot be aborted. If ctx ends first,
// NewComm and NewGroup return ctx's error at once, but the creation goes on in the
// background (holding an OS thread) until the other ranks arrive, and the communicator
// is then destroyed. It has no effect on the CPU backend.
func Blocking() Option { return func(o *options) { o.blocking = true } }

// Comm is one rank's communicator: a member of a clique of World ranks, each on its own
// device, that run collectives together (NCCL API: ncclComm_t).
//
// Every rank calls the same collectives in the same order, each on a stream of its own
// device with buffers of that device. A collective only enqueues work: it returns once
// the work is on the stream, ordered after the earlier uses of its buffers and before
// their later uses by the same tracking that orders kernels (gpu.Buffer). Wait with
// the runtime's waits (Stream.Synchronize, Buffer.CopyToHost, events).
//
// A Comm is safe for concurrent use, but the order of collectives must be the same on
// every rank, so calls from several goroutines need an order of their own.
//
// A nil *Comm is never valid: its calls, Group, Abort, Close and Err return errors
// wrapping gpu.ErrInvalidValue, and Rank, World and Device return zero values (0, 0,
// nil).
type Comm struct {
	dev   *gpu.Device
	rank  int
	world int
	id    uint64

	mu     sync.Mutex
	grp    *group // the open Group collecting this communicator's calls, or nil
	closed bool

	err       atomic.Pointer[error]
	stopCtx   func() bool
	closeOnce sync.Once
	closeErr  error

	be impl
}

// impl is a backend's communicator.
type impl interface {
	// launch enqueues ops, all of this backend (of this and maybe other communicators).
	launch(ops []*op) error
	// abort makes the communicator's pending and future work fail with cause.
	abort(cause error)
	// close releases the communicator after its pending work.
	close() error
}

var nextCommID atomic.Uint64

func newComm(dev *gpu.Device, rank, world int, be impl) *Comm {
	return &Comm{dev: dev, rank: rank, world: world, id: nextCommID.Add(1), be: be}
}

// watchContext aborts c when ctx ends.
func (c *Comm) watchContext(ctx context.Context) {
	c.stopCtx = context.AfterFunc(ctx, func() {
		c.fail(fmt.Errorf("nccl: rank %d: the communicator's context ended: %w", c.rank, context.Cause(ctx)))
	})
}

// Rank returns the communicator's rank, 0 to World-1 (NCCL API: ncclCommUserRank); 0
// for a nil communicator.
func (c *Comm) Rank() int {
	if c == nil {
		return 0
	}
	return c.rank
}

// World returns the number of ranks (NCCL API: ncclCommCount); 0 for a nil
// communicator.
func (c *Comm) World() int {
	if c == nil {
		return 0
	}
	return c.world
}

// Device returns the communicator's device (nil for a nil communicator).
func (c *Comm) Device() *gpu.Device {
	if c == nil {
		return nil
	}
	return c.dev
}

// errNilComm is the error of a nil *Comm as the receiver.
var errNilComm = fmt.Errorf("nccl: nil communicator: %w", gpu.ErrInvalidValue)

// String returns "rank 1 of 2 on cuda:1 (NVIDIA H200)".
func (c *Comm) String() string {
	if c == nil {
		return "nil communicator"
	}
	return fmt.Sprintf("rank %d of %d on %v", c.rank, c.world, c.dev)
}

// Err returns the error that aborted the communicator, or that made it unusable (the
// loss of another process of a FromEnv job), matching ErrAborted; nil while it works.
// For a nil communicator it returns an error wrapping gpu.ErrInvalidValue.
func (c *Comm) Err() error {
	if c == nil {
		return errNilComm
	}
	if p := c.err.Load(); p != nil {
		return *p
	}
	return nil
}

// fail aborts the communicator once, with cause. It may be called again from inside
// be.abort (a clique aborting its ranks), which then returns at once.
func (c *Comm) fail(cause error) {
	if err, ok := c.setErr(cause); ok {
		c.be.abort(err)
	}
}

// setErr records the communicator's failure, wrapped to match ErrAborted, unless one
// is recorded already.
func (c *Comm) setErr(cause error) (error, bool) {
	err := cause
	if !errors.Is(err, ErrAborted) {
		err = fmt.Errorf("%w: %w", ErrAborted, cause)
	}
	return err, c.err.CompareAndSwap(nil, &err)
}

// Abort aborts the communicator (NCCL API: ncclCommAbort): collectives in flight end
// early, later calls return an error matching ErrAborted, and the other ranks' pending
// collectives fail too (in the same process at once; in other processes through NCCL's
// error reporting, their contexts, or, for communicators made by FromEnv, the
// rendezvous connection within about a second).
//
// An abort with collectives in flight faults the device, as a trap would: the data
// those collectives left is undefined, so every later wait for the device's work returns
// an error wrapping gpu.ErrLaunchFailed instead of a success, and the device is
// unusable, for the rest of the process on CUDA (a sticky fault) and until a new
// device is made on the CPU backend. Comm.Err tells why. An abort with nothing in
// flight leaves the device alone. KeepDeviceOnAbort turns the fault off.
//
// The communicator's context, ending, aborts it the same way. Abort is idempotent and
// safe to call at any time from any goroutine; after it, Close has nothing left to do.
// Abort of a closed communicator does nothing (it has left the clique: a deferred
// Abort after Close does not abort the other ranks). Aborting a nil communicator is an
// error wrapping gpu.ErrInvalidValue.
func (c *Comm) Abort() error {
	if c == nil {
		return errNilComm
	}
	c.mu.Lock()
	closed := c.closed
	c.mu.Unlock()
	if closed {
		return nil
	}
	c.fail(fmt.Errorf("nccl: rank %d: Abort called", c.rank))
	return nil
}

// Close releases the communicator once its pending collectives have completed (NCCL
// API: ncclCommFinalize, then ncclCommDestroy). Later calls return an error wrapping
// ErrClosed. Close is not collective, but a rank that closes while others still wait for
// it makes them fail (or hang, where nothing detects it): close after the last
// collective has completed everywhere. Close of an aborted communicator returns nil.
// Close is idempotent. Closing a nil communicator is an error wrapping
// gpu.ErrInvalidValue.
func (c *Comm) Close() error {
	if c == nil {
		return errNilComm
	}
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		if c.stopCtx != nil {
			c.stopCtx()
		}
		c.closeErr = c.be.close()
	})
	return c.closeErr
}

// usableLocked is usable, taking c.mu.
func (c *Comm) usableLocked() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.usable()
}

// usable returns an error if the communicator was closed or aborted. The caller holds
// c.mu.
func (c *Comm) usable() error {
	if err := c.Err(); err != nil {
		return err
	}
	if c.closed {
		return fmt.Errorf("nccl: %v: %w", c, ErrClosed)
	}
	return nil
}

// opKind is a kind of collective.
type opKind uint8

const (
	opAllReduce opKind = iota
	opBroadcast
	opReduce
	opAllGather
	opReduceScatter
	opSend
	opRecv
)

var opKindNames = [...]string{
	opAllReduce: "AllReduce", opBroadcast: "Broadcast", opReduce: "Reduce",
	opAllGather: "AllGather", opReduceScatter: "ReduceScatter", opSend: "Send", opRecv: "Recv",
}

func (k opKind) String() string { return opKindNames[k] }

// op is one validated call.
type op struct {
	c     *Comm
	kind  opKind
	s     *gpu.Stream
	send  *gpu.Buffer // nil where this rank does not read one
	recv  *gpu.Buffer // nil where this rank does not write one
	count int64       // NCCL's count argument
	t     dtype.DType
	red   Op
	peer  int // root, or the peer of Send and Recv

	sendBytes, recvBytes int64 // bytes of send and recv used
}

// sameMemory reports whether two buffers are views of one allocation.
func sameMemory(a, b *gpu.Buffer) bool {
	if a == nil || b == nil {
		return false
	}
	ma, _ := a.BackendMem()
	mb, _ := b.BackendMem()
	return ma == mb
}

// newOp checks a call's arguments and returns it.
func (c *Comm) newOp(kind opKind, s *gpu.Stream, send, recv *gpu.Buffer, count int64, t dtype.DType, red Op, peer int) (*op, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("nccl: %s on %v: %s: %w", kind, c, fmt.Sprintf(format, args...), gpu.ErrInvalidValue)
	}
	if c == nil {
		return nil, fmt.Errorf("nccl: %s on a nil communicator: %w", kind, gpu.ErrInvalidValue)
	}
	if s == nil {
		return nil, bad("nil stream")
	}
	if s.Device() != c.dev {
		return nil, bad("a stream of %v, not of the communicator's device", s.Device())
	}
	if _, ok := ncclType(t); !ok {
		return nil, bad("element type %v is not one NCCL supports (%v)", t, DTypes)
	}
	if count < 0 {
		return nil, bad("count %d is negative", count)
	}
	esize := int64(t.Size())
	if count > math.MaxInt64/esize/int64(c.world) {
		return nil, bad("count %d is too large", count)
	}
	switch kind {
	case opAllReduce, opReduce, opReduceScatter:
		if !red.valid() {
			return nil, bad("unknown reduction operator %v", red)
		}
	default:
		red = Sum
	}
	switch kind {
	case opBroadcast, opReduce:
		if peer < 0 || peer >= c.world {
			return nil, bad("root %d is out of range for %d ranks", peer, c.world)
		}
	case opSend, opRecv:
		if peer < 0 || peer >= c.world {
			return nil, bad("peer %d is out of range for %d ranks", peer, c.world)
		}
	default:
		peer = 0
	}
	o := &op{c: c, kind: kind, s: s, count: count, t: t, red: red, peer: peer}
	n := count * esize
	switch kind {
	case opAllReduce:
		o.send, o.recv, o.sendBytes, o.recvBytes = send, recv, n, n
	case opBroadcast:
		o.recv, o.recvBytes = recv, n
		if c.rank == peer {
			o.send, o.sendBytes = send, n
		}
	case opReduce:
		o.send, o.sendBytes = send, n
		if c.rank == peer {
			o.recv, o.recvBytes = recv, n
		}
	case opAllGather:
		o.send, o.recv, o.sendBytes, o.recvBytes = send, recv, n, n*int64(c.world)
	case opReduceScatter:
		o.send, o.recv, o.sendBytes, o.recvBytes = send, recv, n*int64(c.world), n
	case opSend:
		o.send, o.sendBytes = send, n
	case opRecv:
		o.recv, o.recvBytes = recv, n
	}
	for _, b := range []struct {
		name string
		buf  *gpu.Buffer
		need int64
	}{{"send", o.send, o.sendBytes}, {"receive", o.recv, o.recvBytes}} {
		if b.need == 0 && b.buf == nil {
			continue
		}
		if b.buf == nil {
			return nil, bad("nil %s buffer", b.name)
		}
		if b.buf.Device() != c.dev {
			return nil, bad("the %s buffer belongs to %v, not to the communicator's device", b.name, b.buf.Device())
		}
		if b.buf.Size() < b.need {
			return nil, bad("the %s buffer has %d bytes, the call needs %d (%d elements of %v)", b.name, b.buf.Size(), b.need, b.need/esize, t)
		}
		if b.buf.Offset()%esize != 0 {
			return nil, bad("the %s buffer is a view at byte %d, not aligned for %v", b.name, b.buf.Offset(), t)
		}
	}
	if o.send != nil && o.recv != nil && sameMemory(o.send, o.recv) {
		// Overlapping buffers must be laid out as the call's in-place form says: NCCL
		// leaves any other overlap undefined (and the CPU communicator's ranks would
		// race on it).
		so, ro := o.send.Offset(), o.recv.Offset()
		inPlace, rule := so == ro, "send must be recv"
		switch kind {
		case opAllGather:
			inPlace, rule = so == ro+int64(c.rank)*n, "send must be the view of recv at rank*sendCount elements"
		case opReduceScatter:
			inPlace, rule = ro == so+int64(c.rank)*n, "recv must be the view of send at rank*recvCount elements"
		}
		if !inPlace && so < ro+o.recvBytes && ro < so+o.sendBytes {
			return nil, bad("the send buffer (at byte %d of its allocation) overlaps the receive buffer (at byte %d) without being in place: %s", so, ro, rule)
		}
	}
	if count == 0 {
		o.send, o.recv = nil, nil
	}
	return o, nil
}

// submit launches o, or adds it to the communicator's open group.
func (c *Comm) submit(o *op, err error) error {
	if err != nil {
		return err
	}
	c.mu.Lock()
	if err := c.usable(); err != nil {
		c.mu.Unlock()
		return err
	}
	if g := c.grp; g != nil {
		g.add(o)
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	if o.count == 0 {
		return nil
	}
	return c.be.launch([]*op{o})
}

// AllReduce reduces count elements of type t of send across the ranks with op and
// leaves the result in recv on every rank (NCCL API: ncclAllReduce). send and recv may
// be the same buffer (in place); otherwise they must not overlap. Both need count
// elements.
func (c *Comm) AllReduce(s *gpu.Stream, send, recv *gpu.Buffer, count int64, t dtype.DType, op Op) error {
	return c.submit(c.newOp(opAllReduce, s, send, recv, count, t, op, 0))
}

// Broadcast copies count elements of type t of send on rank root into recv on every
// rank (NCCL API: ncclBroadcast). send is read on root only (other ranks may pass nil);
// on root it may be recv (in place), or else must not overlap it.
func (c *Comm) Broadcast(s *gpu.Stream, send, recv *gpu.Buffer, count int64, t dtype.DType, root int) error {
	return c.submit(c.newOp(opBroadcast, s, send, recv, count, t, Sum, root))
}

// Reduce reduces count elements of type t of send across the ranks with op into recv
// on rank root (NCCL API: ncclReduce). recv is written on root only (other ranks may
// pass nil); on root it may be send (in place), or else must not overlap it.
func (c *Comm) Reduce(s *gpu.Stream, send, recv *gpu.Buffer, count int64, t dtype.DType, op Op, root int) error {
	return c.submit(c.newOp(opReduce, s, send, recv, count, t, op, root))
}

// AllGather gathers sendCount elements of type t from every rank into recv, rank i's
// at element i*sendCount (NCCL API: ncclAllGather). recv needs World*sendCount
// elements. In place: send is the view of recv at rank*sendCount elements; send and recv
// must not overlap otherwise.
func (c *Comm) AllGather(s *gpu.Stream, send, recv *gpu.Buffer, sendCount int64, t dtype.DType) error {
	return c.submit(c.newOp(opAllGather, s, send, recv, sendCount, t, Sum, 0))
}

// ReduceScatter reduces World*recvCount elements of type t of send across the ranks
// with op and leaves block i of the result (recvCount elements from element
// i*recvCount) in recv on rank i (NCCL API: ncclReduceScatter). In place: recv is the
// view of send at rank*recvCount elements; send and recv must not overlap otherwise.
func (c *Comm) ReduceScatter(s *gpu.Stream, send, recv *gpu.Buffer, recvCount int64, t dtype.DType, op Op) error {
	return c.submit(c.newOp(opReduceScatter, s, send, recv, recvCount, t, op, 0))
}

// Send sends count elements of type t of buf to rank peer, which calls Recv with the
// same count and type (NCCL API: ncclSend). Sends and receives between two ranks match
// in the order they were called. A Send waits for its Recv on the device: put the
// sends and receives that depend on each other (a ring, an exchange) in one Group, or
// they deadlock, as with NCCL.
func (c *Comm) Send(s *gpu.Stream, buf *gpu.Buffer, count int64, t dtype.DType, peer int) error {
	return c.submit(c.newOp(opSend, s, buf, nil, count, t, Sum, peer))
}

// Recv receives count elements of type t from rank peer into buf (NCCL API: ncclRecv).
// See Send.
func (c *Comm) Recv(s *gpu.Stream, buf *gpu.Buffer, count int64, t dtype.DType, peer int) error {
	return c.submit(c.newOp(opRecv, s, nil, buf, count, t, Sum, peer))
}

// group collects the calls made inside Group.
type group struct {
	mu      sync.Mutex
	ops     []*op
	members []*Comm // the communicators attached to the group
}

func (g *group) add(o *op) {
	g.mu.Lock()
	g.ops = append(g.ops, o)
	g.mu.Unlock()
}

// attach makes c's calls join g; false if c is in another group.
func (g *group) attach(c *Comm) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch c.grp {
	case g:
		return true
	case nil:
		c.grp = g
		g.mu.Lock()
		g.members = append(g.members, c)
		g.mu.Unlock()
		return true
	}
	return false
}

// detach ends the group: its members' calls launch one by one again.
func (g *group) detach() {
	g.mu.Lock()
	members := g.members
	g.members = nil
	g.mu.Unlock()
	for _, c := range members {
		c.mu.Lock()
		if c.grp == g {
			c.grp = nil
		}
		c.mu.Unlock()
	}
}

// Group is Group(c, f) for this communicator alone.
func (c *Comm) Group(f func() error) error { return Group([]*Comm{c}, f) }

// Group runs f with the collectives and point-to-point calls on comms collected rather
// than launched, then launches them together (NCCL API: ncclGroupStart, ncclGroupEnd,
// on one locked OS thread). Use it
//
//   - for Send and Recv calls that depend on each other (a ring, an exchange), which
//     deadlock one at a time;
//   - to drive several communicators of one process from one goroutine (the ranks made
//     by NewGroup): each rank's collective waits for the others', so they must be
//     launched together;
//   - to fuse several collectives into fewer launches.
//
// While f runs, every call on comms, from any goroutine, joins the group: it checks its
// arguments and returns at once. If f returns an error, the collected calls are
// dropped, none is launched, and Group returns f's error; if f panics, they are dropped
// and the panic goes on. Otherwise Group launches them
// and returns the launch's error. The buffers of the calls are ordered as for single
// calls, their uses recorded after the launch; a buffer may be used by several calls of
// a group, but on one stream only (else Group returns an error wrapping
// gpu.ErrInvalidValue and launches nothing). The calls on several streams act as if
// posted on every one of them, as NCCL's (see the package documentation). Groups nest:
// a Group inside f, on communicators of the outer group or on others (which join it),
// launches with the outer one.
func Group(comms []*Comm, f func() error) error {
	if f == nil {
		return fmt.Errorf("nccl: Group of a nil function: %w", gpu.ErrInvalidValue)
	}
	for _, c := range comms {
		if c == nil {
			return fmt.Errorf("nccl: Group of a nil communicator: %w", gpu.ErrInvalidValue)
		}
		if c.dev.Backend() != comms[0].dev.Backend() {
			return fmt.Errorf("nccl: Group of communicators of backends %s and %s: %w", comms[0].dev.Backend(), c.dev.Backend(), gpu.ErrInvalidValue)
		}
	}
	// Find the open group, if any: the new communicators join it.
	var outer *group
	for _, c := range comms {
		c.mu.Lock()
		g := c.grp
		c.mu.Unlock()
		if g != nil {
			if outer != nil && outer != g {
				return fmt.Errorf("nccl: Group: %v and another communicator are in two different open groups: %w", c, gpu.ErrInvalidValue)
			}
			outer = g
		}
	}
	g := outer
	if g == nil {
		g = &group{}
	}
	for _, c := range comms {
		if !g.attach(c) {
			if outer == nil {
				g.detach()
			}
			return fmt.Errorf("nccl: Group: %v joined another group meanwhile: %w", c, gpu.ErrInvalidValue)
		}
	}
	if outer != nil {
		// Nested: the outer Group launches. An error or a panic of f drops f's calls.
		g.mu.Lock()
		mark := len(g.ops)
		g.mu.Unlock()
		done := false
		drop := func() {
			g.mu.Lock()
			g.ops = g.ops[:min(mark, len(g.ops))]
			g.mu.Unlock()
		}
		defer func() {
			if !done {
				drop() // f panicked
			}
		}()
		err := f()
		done = true
		if err != nil {
			drop()
			return err
		}
		return nil
	}
	// A panic of f ends the group too (its calls dropped, the communicators free for
	// later calls and groups), then goes on.
	done := false
	defer func() {
		if !done {
			g.detach()
		}
	}()
	err := f()
	done = true
	g.detach()
	if err != nil {
		return err
	}
	g.mu.Lock()
	var ops []*op
	for _, o := range g.ops {
		if o.count > 0 {
			ops = append(ops, o)
		}
	}
	g.ops = nil
	g.mu.Unlock()
	if len(ops) == 0 {
		return nil
	}
	for _, o := range ops {
		if err := o.c.usableLocked(); err != nil {
			return err
		}
		if o.c.dev.Backend() != ops[0].c.dev.Backend() {
			return fmt.Errorf("nccl: a group with calls on %s and %s communicators: %w", ops[0].c.dev.Backend(), o.c.dev.Backend(), gpu.ErrInvalidValue)
		}
	}
	return ops[0].c.be.launch(ops)
}
