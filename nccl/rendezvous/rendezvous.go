// Package rendezvous brings the ranks of a job together over TCP, in the style of
// torchrun's static rendezvous, so that they can create an NCCL communicator.
//
// Rank 0 listens; every other rank connects to it and says hello (world size and rank,
// after a magic number and a protocol version). When all ranks have joined, rank 0
// sends its payload (typically the 128-byte ncclUniqueId) to all of them and every rank
// returns it from Rendezvous. The connections stay open, in a star around rank 0, for
// small collectives on the host: Barrier, and AllGather of byte strings (host names,
// device lists, error texts). The placement comes from torchrun's variables through
// FromEnv.
//
//	env, err := rendezvous.FromEnv()
//	...
//	var id []byte
//	if env.Rank == 0 {
//		id = newUniqueID() // only rank 0 makes the id (ncclGetUniqueId)
//	}
//	g, id, err := env.Rendezvous(ctx, id) // every rank gets rank 0's id
//	if err != nil { ... }
//	defer g.Close()
//
// # Failures
//
// Every wait is bounded by the ctx of the call. Nothing hangs when a rank fails: a rank
// whose connection breaks, that gives up (its ctx ends), or that closes the group while
// the others still use it, makes rank 0 abort the group, and every rank returns an error
// matching ErrAborted that says which rank failed and why. A failed or cancelled
// operation leaves the group unusable; Close it. Rank 0 rejects, with ErrRejected on
// the joining side, a rank that claims another world size, a rank number out of range
// or already taken (the rendezvous then fails on every rank: the job is misconfigured),
// and a rank that arrives after the group is complete (only the late rank fails). A
// peer that is not a rendezvous peer, or speaks another protocol version, gets
// ErrProtocol.
//
// A rank that gives up after its arrival in an operation was sent (its ctx ends while
// it waits for the result) can leave the others with a success for that operation, since
// every rank did arrive; they get ErrAborted at the next one. A host that vanishes
// without closing its connections (power loss, a network partition) is noticed by TCP
// keepalive, which takes minutes, or by the ctx of the waiting ranks: give collective
// waits a deadline.
//
// Operations are collective: every rank calls the same operations in the same order,
// one at a time. Rank 0 checks the order (each operation carries its kind and sequence
// number) and aborts the group on a mismatch.
package rendezvous

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"time"
)

// The errors of the package, matched with errors.Is.
var (
	// ErrProtocol: the peer is not a rendezvous peer (bad magic) or speaks another
	// protocol version, or sent a message that breaks the protocol.
	ErrProtocol = errors.New("rendezvous: protocol error")
	// ErrRejected: rank 0 refused this rank (wrong world size, rank out of range or
	// taken, group already complete).
	ErrRejected = errors.New("rendezvous: rejected by rank 0")
	// ErrAborted: the group failed: a rank broke its connection, gave up, closed the
	// group early, or called a different operation.
	ErrAborted = errors.New("rendezvous: group aborted")
	// ErrClosed: the group was closed by this process.
	ErrClosed = errors.New("rendezvous: group closed")
)

// Timeouts that do not come from a ctx: how long rank 0 waits for a new connection's
// hello (so that a silent stray connection cannot hold a slot), and how long a failing
// or closing rank tries to tell its peers.
var (
	helloTimeout  = 10 * time.Second
	noticeTimeout = time.Second
)

// testHookJoined, if set, is called by Serve when a rank has joined.
var testHookJoined func(rank int)

// Group is a set of ranks that have met. Its methods other than Close are collective
// and must not be called concurrently; Close may be called at any time.
type Group struct {
	rank, world int

	mu     sync.Mutex // serialises operations
	seq    uint64     // sequence number of the last operation
	broken error      // the failure that made the group unusable

	life      context.Context // cancelled on shutdown
	kill      context.CancelFunc
	closeOnce sync.Once
	wg        sync.WaitGroup // the group's goroutines

	// rank 0
	ln     net.Listener
	peers  []*conn        // by rank; nil at 0
	joins  chan join      // handshakes done by accepted connections
	events chan peerEvent // frames and failures from the peers' readers

	// rank > 0
	root    *conn
	frames  chan frame // from rank 0's reader; closed when it stops
	rootErr error      // why the reader stopped; read after frames is closed
}

// conn is a connection with a write lock, so that frames never interleave.
type conn struct {
	net.Conn
	wmu sync.Mutex
}

// send writes f, within ctx.
func (c *conn) send(ctx context.Context, f frame) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	d, _ := ctx.Deadline()
	c.SetWriteDeadline(d)
	// A cancelled ctx ends a blocked write. If this fires late it can only hit a later
	// write of a group that has failed anyway: any send error breaks the group.
	stop := context.AfterFunc(ctx, func() { c.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.Write(f.encode()); err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	return nil
}

// notify tries to send a last frame (abort or bye) without waiting on a write in flight
// and for at most noticeTimeout.
func (c *conn) notify(f frame) {
	if !c.wmu.TryLock() {
		return
	}
	defer c.wmu.Unlock()
	c.SetWriteDeadline(time.Now().Add(noticeTimeout))
	c.Write(f.encode())
}

type join struct {
	c           *conn
	rank, world int
	note        string // a rejected connection, for rank 0's error if it times out
}

type peerEvent struct {
	rank int
	f    frame
	err  error // the peer failed or left; f is unset
}

func newGroup(rank, world int) *Group {
	g := &Group{rank: rank, world: world}
	g.life, g.kill = context.WithCancel(context.Background())
	return g
}

// Rank returns this process's rank.
func (g *Group) Rank() int { return g.rank }

// World returns the number of ranks.
func (g *Group) World() int { return g.world }

// Rendezvous brings world ranks together at addr (host:port) and returns the group and
// rank 0's payload, the same bytes on every rank. Rank 0 listens on addr (so addr must
// be an address of rank 0's host, or ":port" for every interface); the other ranks
// connect to it, retrying until ctx ends, so they may start first. payload, at most
// MaxPayload bytes, is used on rank 0 only. With world == 1 no network is used.
func Rendezvous(ctx context.Context, addr string, rank, world int, payload []byte) (*Group, []byte, error) {
	if world < 1 || rank < 0 || rank >= world {
		return nil, nil, fmt.Errorf("rendezvous: rank %d of world size %d is out of range", rank, world)
	}
	if rank != 0 {
		return Join(ctx, addr, rank, world)
	}
	if len(payload) > MaxPayload {
		return nil, nil, fmt.Errorf("rendezvous: payload of %d bytes exceeds MaxPayload", len(payload))
	}
	if world == 1 {
		return newGroup(0, 1), bytes.Clone(payload), nil
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, nil, fmt.Errorf("rendezvous: rank 0: %w", err)
	}
	g, err := Serve(ctx, ln, world, payload)
	if err != nil {
		return nil, nil, err
	}
	return g, bytes.Clone(payload), nil
}

// Serve is rank 0's side of Rendezvous on a listener of the caller's: it waits until
// ranks 1 to world-1 have joined, sends them payload and returns the group. The group
// owns ln: it keeps accepting on it to reject late ranks, and closes it on Close or on
// failure.
func Serve(ctx context.Context, ln net.Listener, world int, payload []byte) (*Group, error) {
	if world < 1 {
		ln.Close()
		return nil, fmt.Errorf("rendezvous: world size %d, want at least 1", world)
	}
	if len(payload) > MaxPayload {
		ln.Close()
		return nil, fmt.Errorf("rendezvous: payload of %d bytes exceeds MaxPayload", len(payload))
	}
	g := newGroup(0, world)
	g.ln = ln
	g.peers = make([]*conn, world)
	g.joins = make(chan join)
	g.events = make(chan peerEvent, world)
	g.wg.Add(1)
	go g.accept()

	var notes []string
	for joined := 1; joined < world; {
		select {
		case j := <-g.joins:
			if j.note != "" {
				notes = append(notes, j.note)
				continue
			}
			from := j.c.RemoteAddr()
			var why string
			switch {
			case j.world != world:
				why = fmt.Sprintf("rank %d (%v) has world size %d, rank 0 has %d", j.rank, from, j.world, world)
			case j.rank == 0:
				why = fmt.Sprintf("a second rank 0 (%v) joined", from)
			case j.rank < 0 || j.rank >= world:
				why = fmt.Sprintf("rank %d (%v) is out of range for world size %d", j.rank, from, world)
			case g.peers[j.rank] != nil:
				why = fmt.Sprintf("rank %d joined twice (%v and %v)", j.rank, g.peers[j.rank].RemoteAddr(), from)
			}
			if why != "" {
				j.c.notify(frame{kind: kindReject, body: reason(why)})
				j.c.Close()
				return nil, g.fail(fmt.Errorf("%w: rank 0: %s", ErrAborted, why))
			}
			g.peers[j.rank] = j.c
			joined++
			if testHookJoined != nil {
				testHookJoined(j.rank)
			}
			g.wg.Add(1)
			go g.readPeer(j.rank, j.c)
		case ev := <-g.events:
			return nil, g.fail(peerFailure(ev))
		case <-ctx.Done():
			var missing []int
			for r := 1; r < world; r++ {
				if g.peers[r] == nil {
					missing = append(missing, r)
				}
			}
			err := fmt.Errorf("rendezvous: rank 0: %w while waiting for ranks %v", ctx.Err(), missing)
			if len(notes) > 0 {
				err = fmt.Errorf("%w (refused connections: %s)", err, strings.Join(notes, "; "))
			}
			return nil, g.fail(err)
		}
	}
	for r := 1; r < world; r++ {
		if err := g.peers[r].send(ctx, frame{kind: kindWelcome, body: payload}); err != nil {
			return nil, g.fail(fmt.Errorf("rendezvous: rank 0: sending the payload to rank %d: %w", r, err))
		}
	}
	g.wg.Add(1)
	go g.rejectLate()
	return g, nil
}

// accept runs on rank 0: it accepts connections and reads their hello, each in its own
// goroutine.
func (g *Group) accept() {
	defer g.wg.Done()
	for {
		nc, err := g.ln.Accept()
		if err != nil {
			if g.life.Err() != nil {
				return
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			// The listener is broken: the join phase will time out, naming the
			// missing ranks; late ranks will fail to connect.
			return
		}
		g.wg.Add(1)
		go g.handshake(&conn{Conn: nc})
	}
}

// handshake reads a new connection's hello and hands it to rank 0's loop.
func (g *Group) handshake(c *conn) {
	defer g.wg.Done()
	c.SetReadDeadline(time.Now().Add(helloTimeout))
	stop := context.AfterFunc(g.life, func() { c.SetReadDeadline(time.Unix(1, 0)) })
	f, err := readFrame(c, helloBodyLen)
	stop()
	var j join
	var ve *versionError
	switch {
	case errors.As(err, &ve):
		j.note = fmt.Sprintf("%v speaks protocol version %d", c.RemoteAddr(), ve.theirs)
		c.notify(frame{kind: kindReject, body: reason(fmt.Sprintf("rank 0 speaks protocol version %d, you speak %d", protoVersion, ve.theirs))})
	case err != nil:
		j.note = fmt.Sprintf("%v: %v", c.RemoteAddr(), err)
	case f.kind != kindHello || len(f.body) != helloBodyLen:
		j.note = fmt.Sprintf("%v sent a %v frame instead of a hello", c.RemoteAddr(), f.kind)
		c.notify(frame{kind: kindReject, body: reason("expected a hello")})
	default:
		c.SetReadDeadline(time.Time{})
		j = join{c: c, world: int(int32(binary.BigEndian.Uint32(f.body[0:]))),
			rank: int(int32(binary.BigEndian.Uint32(f.body[4:])))}
	}
	if j.note != "" {
		c.Close()
	}
	select {
	case g.joins <- j:
	case <-g.life.Done():
		if j.c != nil {
			j.c.Close()
		}
	}
}

// rejectLate runs on rank 0 once the group is complete: connections that arrive later
// are rejected.
func (g *Group) rejectLate() {
	defer g.wg.Done()
	for {
		select {
		case j := <-g.joins:
			if j.c != nil {
				why := fmt.Sprintf("rank %d joined after the group of %d ranks was complete", j.rank, g.world)
				j.c.notify(frame{kind: kindReject, body: reason(why)})
				j.c.Close()
			}
		case <-g.life.Done():
			return
		}
	}
}

// readPeer runs on rank 0 for each joined rank, forwarding its frames and its failure.
func (g *Group) readPeer(rank int, c *conn) {
	defer g.wg.Done()
	for {
		f, err := readFrame(c, MaxPayload)
		ev := peerEvent{rank: rank, f: f, err: err}
		if err == nil && (f.kind == kindAbort || f.kind == kindBye) {
			ev.err = &leftError{f.kind, string(f.body)}
		}
		select {
		case g.events <- ev:
		case <-g.life.Done():
			return
		}
		if ev.err != nil {
			return
		}
	}
}

// leftError: a peer sent abort or bye.
type leftError struct {
	k   kind
	why string
}

func (e *leftError) Error() string {
	if e.k == kindBye {
		return "closed the group"
	}
	return "gave up: " + e.why
}

// peerFailure describes, on rank 0, a peer's failure.
func peerFailure(ev peerEvent) error {
	var le *leftError
	switch {
	case errors.As(ev.err, &le):
		return fmt.Errorf("%w: rank %d %v", ErrAborted, ev.rank, le)
	case ev.err == io.EOF:
		return fmt.Errorf("%w: rank %d disconnected", ErrAborted, ev.rank)
	default:
		return fmt.Errorf("%w: rank %d: %v", ErrAborted, ev.rank, ev.err)
	}
}

// Join is the side of Rendezvous of a rank other than 0: it connects to rank 0 at addr,
// retrying until ctx ends, says hello, and waits for the group to be complete.
func Join(ctx context.Context, addr string, rank, world int) (*Group, []byte, error) {
	if world < 2 || rank < 1 || rank >= world {
		return nil, nil, fmt.Errorf("rendezvous: Join: rank %d of world size %d (rank 0 calls Serve)", rank, world)
	}
	who := fmt.Sprintf("rendezvous: rank %d", rank)
	var d net.Dialer
	var nc net.Conn
	for wait := 10 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		var err error
		if nc, err = d.DialContext(ctx, "tcp", addr); err == nil {
			break
		}
		if ctx.Err() != nil {
			return nil, nil, fmt.Errorf("%s: %w: cannot reach rank 0 at %s: %v", who, ctx.Err(), addr, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, nil, fmt.Errorf("%s: %w: cannot reach rank 0 at %s: %v", who, ctx.Err(), addr, err)
		}
	}
	c := &conn{Conn: nc}
	hello := make([]byte, helloBodyLen)
	binary.BigEndian.PutUint32(hello[0:], uint32(world))
	binary.BigEndian.PutUint32(hello[4:], uint32(rank))
	if err := c.send(ctx, frame{kind: kindHello, body: hello}); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("%s: saying hello to rank 0 at %s: %w", who, addr, err)
	}

	d2, _ := ctx.Deadline()
	c.SetReadDeadline(d2)
	stop := context.AfterFunc(ctx, func() { c.SetReadDeadline(time.Unix(1, 0)) })
	f, err := readFrame(c, handshakeBody)
	if !stop() || ctx.Err() != nil {
		c.Close()
		return nil, nil, fmt.Errorf("%s: %w while waiting for the other ranks to join", who, ctx.Err())
	}
	var ve *versionError
	switch {
	case errors.Is(err, errBadMagic):
		err = fmt.Errorf("%w: %s: %s does not answer as rank 0 of a rendezvous", ErrProtocol, who, addr)
	case errors.As(err, &ve):
		err = fmt.Errorf("%w: %s: rank 0 speaks protocol version %d, this rank speaks %d", ErrProtocol, who, ve.theirs, protoVersion)
	case err == io.EOF:
		err = fmt.Errorf("%w: %s: rank 0 closed the connection during the handshake", ErrAborted, who)
	case err != nil:
		err = fmt.Errorf("%w: %s: during the handshake: %v", ErrAborted, who, err)
	case f.kind == kindReject:
		err = fmt.Errorf("%w: %s: %s", ErrRejected, who, f.body)
	case f.kind == kindAbort:
		err = fmt.Errorf("%w: %s: rank 0 reports: %s", ErrAborted, who, f.body)
	case f.kind != kindWelcome:
		err = fmt.Errorf("%w: %s: rank 0 sent a %v frame during the handshake", ErrProtocol, who, f.kind)
	}
	if err != nil {
		c.Close()
		return nil, nil, err
	}
	c.SetReadDeadline(time.Time{})
	g := newGroup(rank, world)
	g.root = c
	g.frames = make(chan frame, 2)
	g.wg.Add(1)
	go g.readRoot()
	return g, f.body, nil
}

// readRoot runs on a rank > 0, forwarding rank 0's frames.
func (g *Group) readRoot() {
	defer g.wg.Done()
	defer close(g.frames)
	for {
		f, err := readFrame(g.root, resultLimit(g.world))
		if err != nil {
			g.rootErr = err
			return
		}
		select {
		case g.frames <- f:
		case <-g.life.Done():
			g.rootErr = ErrClosed
			return
		}
		if f.kind == kindAbort || f.kind == kindBye {
			g.rootErr = io.EOF
			return
		}
	}
}

// Barrier returns when every rank has called Barrier (or with an error).
func (g *Group) Barrier(ctx context.Context) error {
	_, err := g.op(ctx, kindBarrier, nil)
	return err
}

// AllGather sends data (at most MaxPayload bytes) to every rank and returns every rank's
// data, indexed by rank. The result is freshly allocated.
func (g *Group) AllGather(ctx context.Context, data []byte) ([][]byte, error) {
	if len(data) > MaxPayload {
		return nil, fmt.Errorf("rendezvous: AllGather of %d bytes exceeds MaxPayload", len(data))
	}
	return g.op(ctx, kindGather, data)
}

func (g *Group) op(ctx context.Context, k kind, data []byte) ([][]byte, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.life.Done():
		if g.broken != nil {
			return nil, fmt.Errorf("rendezvous: the group failed earlier: %w", g.broken)
		}
		return nil, ErrClosed
	default:
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	g.seq++
	switch {
	case g.world == 1:
		return [][]byte{bytes.Clone(data)}, nil
	case g.rank == 0:
		return g.rootOp(ctx, k, data)
	default:
		return g.peerOp(ctx, k, data)
	}
}

// rootOp is an operation on rank 0: collect every rank's frame, answer with the result.
func (g *Group) rootOp(ctx context.Context, k kind, data []byte) ([][]byte, error) {
	parts := make([][]byte, g.world)
	got := make([]bool, g.world)
	parts[0], got[0] = bytes.Clone(data), true
	for have := 1; have < g.world; {
		select {
		case ev := <-g.events:
			if ev.err != nil {
				return nil, g.fail(peerFailure(ev))
			}
			if ev.f.kind != k || ev.f.seq != g.seq {
				return nil, g.fail(fmt.Errorf("%w: rank %d called %v (operation %d) while rank 0 called %v (operation %d)",
					ErrAborted, ev.rank, ev.f.kind, ev.f.seq, k, g.seq))
			}
			if got[ev.rank] {
				return nil, g.fail(fmt.Errorf("%w: rank %d sent operation %d twice", ErrProtocol, ev.rank, g.seq))
			}
			parts[ev.rank], got[ev.rank] = ev.f.body, true
			have++
		case <-ctx.Done():
			var missing []int
			for r, ok := range got {
				if !ok {
					missing = append(missing, r)
				}
			}
			return nil, g.fail(fmt.Errorf("rendezvous: rank 0: %w in %v while waiting for ranks %v", ctx.Err(), k, missing))
		case <-g.life.Done():
			return nil, ErrClosed
		}
	}
	var body []byte
	if k == kindGather {
		body = encodeList(parts)
	}
	for r := 1; r < g.world; r++ {
		if err := g.peers[r].send(ctx, frame{kind: kindResult, seq: g.seq, body: body}); err != nil {
			return nil, g.fail(fmt.Errorf("%w: rank 0: sending the %v result to rank %d: %v", ErrAborted, k, r, err))
		}
	}
	if k != kindGather {
		return nil, nil
	}
	for i, p := range parts {
		if p == nil {
			parts[i] = []byte{}
		}
	}
	return parts, nil
}

// peerOp is an operation on a rank > 0: send this rank's frame, wait for the result.
func (g *Group) peerOp(ctx context.Context, k kind, data []byte) ([][]byte, error) {
	who := fmt.Sprintf("rendezvous: rank %d", g.rank)
	if err := g.root.send(ctx, frame{kind: k, seq: g.seq, body: data}); err != nil {
		if ctx.Err() != nil {
			return nil, g.fail(fmt.Errorf("%s: %w in %v", who, ctx.Err(), k))
		}
		return nil, g.fail(g.rootFailure(who, err))
	}
	select {
	case f, ok := <-g.frames:
		if !ok {
			return nil, g.fail(g.rootFailure(who, nil))
		}
		switch {
		case f.kind == kindAbort:
			return nil, g.quit(fmt.Errorf("%w: %s: rank 0 reports: %s", ErrAborted, who, f.body))
		case f.kind == kindBye:
			return nil, g.quit(fmt.Errorf("%w: %s: rank 0 closed the group", ErrAborted, who))
		case f.kind != kindResult || f.seq != g.seq:
			return nil, g.fail(fmt.Errorf("%w: %s: rank 0 sent %v (operation %d) during %v (operation %d)",
				ErrProtocol, who, f.kind, f.seq, k, g.seq))
		}
		if k != kindGather {
			return nil, nil
		}
		parts, err := decodeList(f.body, g.world)
		if err != nil {
			return nil, g.fail(fmt.Errorf("%w: %s: %v", ErrProtocol, who, err))
		}
		return parts, nil
	case <-ctx.Done():
		return nil, g.fail(fmt.Errorf("%s: %w in %v", who, ctx.Err(), k))
	case <-g.life.Done():
		return nil, ErrClosed
	}
}

// rootFailure describes, on a rank > 0, the loss of rank 0: its abort reason if it sent
// one, else the connection's error (or err, from a write).
func (g *Group) rootFailure(who string, err error) error {
	for {
		select {
		case f, ok := <-g.frames:
			if !ok {
				if err == nil {
					err = g.rootErr
				}
				if err == io.EOF {
					return fmt.Errorf("%w: %s: rank 0 disconnected", ErrAborted, who)
				}
				return fmt.Errorf("%w: %s: lost rank 0: %v", ErrAborted, who, err)
			}
			if f.kind == kindAbort {
				return fmt.Errorf("%w: %s: rank 0 reports: %s", ErrAborted, who, f.body)
			}
			if f.kind == kindBye {
				return fmt.Errorf("%w: %s: rank 0 closed the group", ErrAborted, who)
			}
		default:
			// The reader still runs (the write failed first): err says why.
			return fmt.Errorf("%w: %s: lost rank 0: %v", ErrAborted, who, err)
		}
	}
}

// fail records err, tells the peers that this rank gives up, and shuts the group down.
func (g *Group) fail(err error) error {
	if g.broken == nil {
		g.broken = err
	}
	g.shutdown(frame{kind: kindAbort, body: reason(fmt.Sprintf("rank %d: %v", g.rank, err))})
	return err
}

// quit is fail without telling rank 0, which gave up first.
func (g *Group) quit(err error) error {
	if g.broken == nil {
		g.broken = err
	}
	g.shutdown(frame{})
	return err
}

// Close leaves the group: it tells the other ranks, closes the connections (and rank 0's
// listener) and waits for the group's goroutines. Operations in progress return
// ErrClosed; other ranks that still use the group get ErrAborted. Close is idempotent.
func (g *Group) Close() error {
	g.shutdown(frame{kind: kindBye})
	return nil
}

// shutdown runs once: it sends last (unless zero) to every peer, closes everything and
// waits for the goroutines.
func (g *Group) shutdown(last frame) {
	g.closeOnce.Do(func() {
		g.kill()
		var conns []*conn
		if g.root != nil {
			conns = append(conns, g.root)
		}
		for _, c := range g.peers {
			if c != nil {
				conns = append(conns, c)
			}
		}
		if last.kind != 0 {
			var wg sync.WaitGroup
			for _, c := range conns {
				wg.Go(func() { c.notify(last) })
			}
			wg.Wait()
		}
		for _, c := range conns {
			c.Close()
		}
		if g.ln != nil {
			g.ln.Close()
		}
	})
	g.wg.Wait()
}
