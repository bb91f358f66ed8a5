package rendezvous

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// prompt is how fast a failure must reach the other ranks; the ctx of the waiting ranks
// is far longer, so a test that passes did not just time out.
const (
	prompt = 5 * time.Second
	long   = 60 * time.Second
)

func listen(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// freeAddr returns a loopback address with a port that was free a moment ago.
func freeAddr(t *testing.T) string {
	ln := listen(t)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// checkNoLeak fails if the test leaves goroutines behind.
func checkNoLeak(t *testing.T) {
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(5 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines leaked:\n%s", n-before, buf[:runtime.Stack(buf, true)])
		}
	})
}

type outcome struct {
	g       *Group
	payload []byte
	err     error
}

// form runs rank 0 (Serve on ln) and ranks 1..world-1 (Join) concurrently.
func form(ctx context.Context, ln net.Listener, world int, payload []byte) []outcome {
	out := make([]outcome, world)
	var wg sync.WaitGroup
	wg.Go(func() {
		g, err := Serve(ctx, ln, world, payload)
		out[0] = outcome{g, payload, err}
	})
	for r := 1; r < world; r++ {
		wg.Go(func() {
			g, p, err := Join(ctx, ln.Addr().String(), r, world)
			out[r] = outcome{g, p, err}
		})
	}
	wg.Wait()
	return out
}

func mustForm(t *testing.T, world int, payload []byte) []*Group {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	out := form(ctx, listen(t), world, payload)
	groups := make([]*Group, world)
	for r, o := range out {
		if o.err != nil {
			t.Fatalf("rank %d: %v", r, o.err)
		}
		if !bytes.Equal(o.payload, payload) {
			t.Fatalf("rank %d got payload %x, want %x", r, o.payload, payload)
		}
		groups[r] = o.g
	}
	t.Cleanup(func() {
		for _, g := range groups {
			g.Close()
		}
	})
	return groups
}

// each runs f on every rank concurrently and returns the errors by rank.
func each(groups []*Group, f func(r int, g *Group) error) []error {
	errs := make([]error, len(groups))
	var wg sync.WaitGroup
	for r, g := range groups {
		wg.Go(func() { errs[r] = f(r, g) })
	}
	wg.Wait()
	return errs
}

func TestRendezvousAndCollectives(t *testing.T) {
	checkNoLeak(t)
	id := make([]byte, 128)
	rand.Read(id)
	const world = 4
	groups := mustForm(t, world, id)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	for round := range 5 {
		errs := each(groups, func(r int, g *Group) error {
			if g.Rank() != r || g.World() != world {
				return fmt.Errorf("Rank/World = %d/%d", g.Rank(), g.World())
			}
			if err := g.Barrier(ctx); err != nil {
				return err
			}
			data := []byte(fmt.Sprintf("host-%d-round-%d", r, round))
			if r == 2 {
				data = nil // empty contributions are fine
			}
			all, err := g.AllGather(ctx, data)
			if err != nil {
				return err
			}
			for i, p := range all {
				want := fmt.Sprintf("host-%d-round-%d", i, round)
				if i == 2 {
					want = ""
				}
				if string(p) != want {
					return fmt.Errorf("part %d = %q, want %q", i, p, want)
				}
			}
			return nil
		})
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	// A clean close on every rank, then operations report ErrClosed.
	for _, g := range groups {
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
	}
	for r, g := range groups {
		if err := g.Barrier(ctx); !errors.Is(err, ErrClosed) {
			t.Errorf("rank %d: Barrier after Close = %v", r, err)
		}
	}
}

func TestRendezvousOnAddrRanksFirst(t *testing.T) {
	checkNoLeak(t)
	addr := freeAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	const world = 3
	out := make([]outcome, world)
	var wg sync.WaitGroup
	for r := world - 1; r >= 0; r-- {
		wg.Go(func() {
			g, p, err := Rendezvous(ctx, addr, r, world, []byte("uid"))
			out[r] = outcome{g, p, err}
		})
		if r == 1 {
			time.Sleep(200 * time.Millisecond) // ranks 1 and 2 retry until rank 0 listens
		}
	}
	wg.Wait()
	var groups []*Group
	for r, o := range out {
		if o.err != nil {
			t.Fatalf("rank %d: %v", r, o.err)
		}
		if string(o.payload) != "uid" {
			t.Errorf("rank %d payload %q", r, o.payload)
		}
		groups = append(groups, o.g)
	}
	if err := errors.Join(each(groups, func(_ int, g *Group) error { return g.Barrier(ctx) })...); err != nil {
		t.Fatal(err)
	}
	for _, g := range groups {
		g.Close()
	}
}

func TestWorldOfOne(t *testing.T) {
	checkNoLeak(t)
	g, p, err := Rendezvous(context.Background(), "no.such.host:1", 0, 1, []byte("x"))
	if err != nil || string(p) != "x" {
		t.Fatalf("Rendezvous = %q, %v", p, err)
	}
	if err := g.Barrier(context.Background()); err != nil {
		t.Error(err)
	}
	all, err := g.AllGather(context.Background(), []byte("me"))
	if err != nil || len(all) != 1 || string(all[0]) != "me" {
		t.Errorf("AllGather = %q, %v", all, err)
	}
	g.Close()
}

func TestArgumentErrors(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ rank, world int }{{0, 0}, {-1, 2}, {2, 2}} {
		if _, _, err := Rendezvous(ctx, "127.0.0.1:1", c.rank, c.world, nil); err == nil {
			t.Errorf("Rendezvous(rank %d, world %d) succeeded", c.rank, c.world)
		}
	}
	if _, _, err := Rendezvous(ctx, "127.0.0.1:1", 0, 2, make([]byte, MaxPayload+1)); err == nil {
		t.Error("oversized payload accepted")
	}
	g, _, _ := Rendezvous(ctx, "", 0, 1, nil)
	if _, err := g.AllGather(ctx, make([]byte, MaxPayload+1)); err == nil {
		t.Error("oversized AllGather accepted")
	}
}

// joinedHook makes Serve report joins on a channel, for tests that need an order.
func joinedHook(t *testing.T) <-chan int {
	ch := make(chan int, 16)
	testHookJoined = func(r int) { ch <- r }
	t.Cleanup(func() { testHookJoined = nil })
	return ch
}

// waitJoined waits until Serve has registered rank r.
func waitJoined(t *testing.T, ch <-chan int, r int) {
	t.Helper()
	select {
	case got := <-ch:
		if got != r {
			t.Fatalf("rank %d joined, want %d", got, r)
		}
	case <-time.After(long):
		t.Fatalf("rank %d never joined", r)
	}
}

// misconfigured starts rank 0 of world 3 and a correct rank 1, waits until rank 1 has
// joined, then runs bad; it returns the errors of rank 0, rank 1 and bad.
func misconfigured(t *testing.T, bad func(ctx context.Context, addr string) error) (e0, e1, eBad error) {
	t.Helper()
	joined := joinedHook(t)
	ln := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	wg.Go(func() {
		g, err := Serve(ctx, ln, 3, []byte("id"))
		if err == nil {
			g.Close()
			err = errors.New("Serve succeeded")
		}
		e0 = err
	})
	wg.Go(func() {
		g, _, err := Join(ctx, ln.Addr().String(), 1, 3)
		if err == nil {
			g.Close()
			err = errors.New("Join succeeded")
		}
		e1 = err
	})
	waitJoined(t, joined, 1)
	eBad = bad(ctx, ln.Addr().String())
	wg.Wait()
	if d := time.Since(start); d > prompt {
		t.Errorf("the failure took %v to reach every rank", d)
	}
	return
}

func expect(t *testing.T, who string, err, sentinel error, texts ...string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Errorf("%s: error %v does not match %v", who, err, sentinel)
		return
	}
	for _, s := range texts {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%s: error %q does not say %q", who, err, s)
		}
	}
}

func TestWrongWorldSize(t *testing.T) {
	checkNoLeak(t)
	e0, e1, e2 := misconfigured(t, func(ctx context.Context, addr string) error {
		_, _, err := Join(ctx, addr, 2, 4)
		return err
	})
	const why = "rank 2 (127.0.0.1"
	expect(t, "rank 2", e2, ErrRejected, why, "has world size 4, rank 0 has 3")
	expect(t, "rank 0", e0, ErrAborted, "has world size 4, rank 0 has 3")
	expect(t, "rank 1", e1, ErrAborted, "rank 0 reports", "has world size 4, rank 0 has 3")
}

func TestDuplicateRank(t *testing.T) {
	checkNoLeak(t)
	e0, e1, eDup := misconfigured(t, func(ctx context.Context, addr string) error {
		_, _, err := Join(ctx, addr, 1, 3)
		return err
	})
	expect(t, "second rank 1", eDup, ErrRejected, "rank 1 joined twice")
	expect(t, "rank 0", e0, ErrAborted, "rank 1 joined twice")
	expect(t, "first rank 1", e1, ErrAborted, "rank 1 joined twice")
}

// rawHello sends a hello with any values and returns rank 0's answer.
func rawHello(ctx context.Context, addr string, version uint16, world, rank int) (frame, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	if err != nil {
		return frame{}, err
	}
	defer c.Close()
	b := frame{kind: kindHello, body: []byte{0, 0, 0, byte(world), 0, 0, 0, byte(rank)}}.encode()
	b[5] = byte(version)
	if _, err := c.Write(b); err != nil {
		return frame{}, err
	}
	c.SetReadDeadline(time.Now().Add(long))
	return readFrame(c, handshakeBody)
}

func TestRankOutOfRangeAndSecondRankZero(t *testing.T) {
	checkNoLeak(t)
	for _, rank := range []int{7, 0} {
		want := "rank 7 ("
		if rank == 0 {
			want = "a second rank 0"
		}
		var reply frame
		e0, e1, err := misconfigured(t, func(ctx context.Context, addr string) error {
			var err error
			reply, err = rawHello(ctx, addr, protoVersion, 3, rank)
			return err
		})
		if err != nil || reply.kind != kindReject || !strings.Contains(string(reply.body), want) {
			t.Errorf("hello as rank %d: reply %v %q, %v", rank, reply.kind, reply.body, err)
		}
		expect(t, "rank 0", e0, ErrAborted, want)
		expect(t, "rank 1", e1, ErrAborted, want)
	}
}

func TestLateJoiner(t *testing.T) {
	checkNoLeak(t)
	ln := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	out := form(ctx, ln, 2, []byte("id"))
	if out[0].err != nil || out[1].err != nil {
		t.Fatal(out[0].err, out[1].err)
	}
	defer out[0].g.Close()
	defer out[1].g.Close()
	_, _, err := Join(ctx, ln.Addr().String(), 1, 2)
	expect(t, "late rank 1", err, ErrRejected, "rank 1 joined after the group of 2 ranks was complete")
	// The group itself is unharmed.
	groups := []*Group{out[0].g, out[1].g}
	if err := errors.Join(each(groups, func(_ int, g *Group) error { return g.Barrier(ctx) })...); err != nil {
		t.Fatal(err)
	}
}

func TestVersionMismatchAndStrays(t *testing.T) {
	checkNoLeak(t)
	// A rank of another version is refused with a frame it can read, a stray connection
	// that sends garbage or nothing is dropped, and the rendezvous goes on without them.
	ln := listen(t)
	addr := ln.Addr().String()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	var g0 *Group
	var e0 error
	served := make(chan struct{})
	go func() {
		defer close(served)
		g0, e0 = Serve(ctx, ln, 2, []byte("id"))
	}()
	reply, err := rawHello(ctx, addr, protoVersion+1, 2, 1)
	// rawHello read the reply with this version's readFrame: the header is the same.
	if err != nil || reply.kind != kindReject || !strings.Contains(string(reply.body), "protocol version") {
		t.Errorf("hello of version %d: reply %v %q, %v", protoVersion+1, reply.kind, reply.body, err)
	}
	garbage, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	garbage.Write([]byte("GET / HTTP/1.1\r\nHost: x\r\n\r\n"))
	defer garbage.Close()
	silent, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()

	g1, p, err := Join(ctx, addr, 1, 2)
	if err != nil || string(p) != "id" {
		t.Fatalf("rank 1: %q, %v", p, err)
	}
	<-served
	if e0 != nil {
		t.Fatal(e0)
	}
	if n, err := garbage.Read(make([]byte, 64)); err == nil {
		t.Errorf("the garbage connection got %d bytes back", n)
	}
	g0.Close() // does not wait for the silent connection's hello timeout
	g1.Close()
}

func TestClientSideProtocolErrors(t *testing.T) {
	checkNoLeak(t)
	for _, c := range []struct {
		name   string
		answer []byte
		want   string
	}{
		{"not rendezvous", []byte("SSH-2.0-OpenSSH_9.2p1 Debian-2\r\nxxxxxxxxxxxxxxxx"), "does not answer as rank 0"},
		{"other version", func() []byte {
			b := frame{kind: kindReject, body: []byte("?")}.encode()
			b[5] = 9
			return b
		}(), "rank 0 speaks protocol version 9"},
		{"wrong frame", frame{kind: kindResult}.encode(), "sent a result frame during the handshake"},
	} {
		t.Run(c.name, func(t *testing.T) {
			ln := listen(t)
			defer ln.Close()
			go func() {
				conn, err := ln.Accept()
				if err != nil {
					return
				}
				defer conn.Close()
				conn.Write(c.answer)
				io.Copy(io.Discard, conn)
			}()
			ctx, cancel := context.WithTimeout(context.Background(), long)
			defer cancel()
			_, _, err := Join(ctx, ln.Addr().String(), 1, 2)
			expect(t, "Join", err, ErrProtocol, c.want)
		})
	}
}

func TestJoinNobodyListening(t *testing.T) {
	checkNoLeak(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_, _, err := Join(ctx, freeAddr(t), 1, 2)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "cannot reach rank 0") {
		t.Errorf("Join = %v", err)
	}
}

func TestRendezvousTimeoutNamesMissingRanks(t *testing.T) {
	checkNoLeak(t)
	ln := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	var e1 error
	var wg sync.WaitGroup
	wg.Go(func() { _, _, e1 = Join(ctx, ln.Addr().String(), 1, 3) })
	short, cancelShort := context.WithTimeout(context.Background(), time.Second)
	defer cancelShort()
	_, e0 := Serve(short, ln, 3, nil) // rank 2 never comes
	if !errors.Is(e0, context.DeadlineExceeded) || !strings.Contains(e0.Error(), "waiting for ranks [2]") {
		t.Errorf("rank 0: %v", e0)
	}
	start := time.Now()
	wg.Wait()
	expect(t, "rank 1", e1, ErrAborted, "rank 0 reports", "waiting for ranks [2]")
	if d := time.Since(start); d > prompt {
		t.Errorf("rank 1 learned of the failure after %v", d)
	}
}

func TestJoinerGivesUpDuringRendezvous(t *testing.T) {
	checkNoLeak(t)
	joined := joinedHook(t)
	ln := listen(t)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	var e0, e1 error
	done0 := make(chan struct{})
	go func() {
		defer close(done0)
		_, e0 = Serve(ctx, ln, 3, nil)
	}()
	ctx1, cancel1 := context.WithCancel(context.Background())
	done1 := make(chan struct{})
	go func() {
		defer close(done1)
		_, _, e1 = Join(ctx1, ln.Addr().String(), 1, 3)
	}()
	waitJoined(t, joined, 1)
	start := time.Now()
	cancel1() // rank 1 gives up while rank 2 has not come
	<-done1
	if !errors.Is(e1, context.Canceled) {
		t.Errorf("rank 1: %v", e1)
	}
	<-done0
	expect(t, "rank 0", e0, ErrAborted, "rank 1 disconnected")
	if d := time.Since(start); d > prompt {
		t.Errorf("rank 0 learned of it after %v", d)
	}
}

// threeRanks forms a group of 3 for the failure tests.
func threeRanks(t *testing.T) []*Group { return mustForm(t, 3, []byte("id")) }

// during runs op on the given ranks, waits a little so that they are blocked in it, runs
// kill, and returns the ranks' errors; it fails the test if they were not prompt.
func during(t *testing.T, groups []*Group, ranks []int, op func(ctx context.Context, g *Group) error, kill func()) map[int]error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	var mu sync.Mutex
	errs := map[int]error{}
	var wg sync.WaitGroup
	for _, r := range ranks {
		wg.Go(func() {
			err := op(ctx, groups[r])
			mu.Lock()
			errs[r] = err
			mu.Unlock()
		})
	}
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	kill()
	wg.Wait()
	if d := time.Since(start); d > prompt {
		t.Errorf("the failure took %v to reach the ranks", d)
	}
	return errs
}

func barrier(ctx context.Context, g *Group) error { return g.Barrier(ctx) }

func TestRankDiesDuringBarrier(t *testing.T) {
	checkNoLeak(t)
	for _, c := range []struct {
		name string
		kill func(g *Group)
		why  string
	}{
		{"crash", func(g *Group) { g.root.Conn.Close() }, "rank 2 disconnected"},
		{"close", func(g *Group) { g.Close() }, "rank 2 closed the group"},
	} {
		t.Run(c.name, func(t *testing.T) {
			g := threeRanks(t)
			errs := during(t, g, []int{0, 1}, barrier, func() { c.kill(g[2]) })
			expect(t, "rank 0", errs[0], ErrAborted, c.why)
			expect(t, "rank 1", errs[1], ErrAborted, "rank 0 reports", c.why)
			// The group is unusable afterwards, on every rank.
			for r := range 3 {
				if err := g[r].Barrier(context.Background()); err == nil {
					t.Errorf("rank %d: Barrier after the failure succeeded", r)
				}
			}
		})
	}
}

func TestRankZeroDiesDuringAllGather(t *testing.T) {
	checkNoLeak(t)
	g := threeRanks(t)
	errs := during(t, g, []int{1, 2}, func(ctx context.Context, g *Group) error {
		_, err := g.AllGather(ctx, []byte("x"))
		return err
	}, func() {
		for _, c := range g[0].peers {
			if c != nil {
				c.Conn.Close()
			}
		}
	})
	expect(t, "rank 1", errs[1], ErrAborted, "rank 0 disconnected")
	expect(t, "rank 2", errs[2], ErrAborted, "rank 0 disconnected")
}

func TestRankGivesUpInBarrier(t *testing.T) {
	checkNoLeak(t)
	g := mustForm(t, 4, []byte("id"))
	// Ranks 0, 1 and 2 wait in a barrier that rank 3 does not enter; rank 2's ctx ends
	// first. Ranks 0 and 1 must not wait for their own (long) ctx.
	short, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	errs := during(t, g, []int{0, 1}, barrier, func() {
		if err := g[2].Barrier(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("rank 2: %v", err)
		}
	})
	expect(t, "rank 0", errs[0], ErrAborted, "rank 2 gave up", "context deadline exceeded")
	expect(t, "rank 1", errs[1], ErrAborted, "rank 0 reports", "rank 2 gave up")
	expect(t, "rank 3", g[3].Barrier(context.Background()), ErrAborted, "rank 2 gave up")
}

func TestRankGivesUpAfterArriving(t *testing.T) {
	checkNoLeak(t)
	g := threeRanks(t)
	// Rank 2 enters a barrier alone and gives up; its arrival was already sent, so the
	// barrier may still complete for ranks 0 and 1, but their next operation fails.
	short, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := g[2].Barrier(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("rank 2: %v", err)
	}
	errs := during(t, g, []int{0, 1}, barrier, func() {})
	for r, err := range errs {
		if err != nil {
			expect(t, fmt.Sprint("rank ", r), err, ErrAborted, "rank 2 gave up")
		}
	}
	errs = during(t, g, []int{0, 1}, barrier, func() {})
	expect(t, "rank 0", errs[0], ErrAborted, "rank 2 gave up")
	expect(t, "rank 1", errs[1], ErrAborted, "rank 2 gave up")
}

func TestRankZeroTimesOutInBarrier(t *testing.T) {
	checkNoLeak(t)
	g := threeRanks(t)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	var e1 error
	var wg sync.WaitGroup
	wg.Go(func() { e1 = g[1].Barrier(ctx) })
	short, cancelShort := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancelShort()
	e0 := g[0].Barrier(short) // rank 2 never comes
	if !errors.Is(e0, context.DeadlineExceeded) || !strings.Contains(e0.Error(), "waiting for ranks [2]") {
		t.Errorf("rank 0: %v", e0)
	}
	wg.Wait()
	expect(t, "rank 1", e1, ErrAborted, "waiting for ranks [2]")
	expect(t, "rank 2", g[2].Barrier(ctx), ErrAborted, "waiting for ranks [2]")
}

func TestMismatchedOperations(t *testing.T) {
	checkNoLeak(t)
	g := threeRanks(t)
	ctx, cancel := context.WithTimeout(context.Background(), long)
	defer cancel()
	errs := each(g, func(r int, g *Group) error {
		if r == 2 {
			_, err := g.AllGather(ctx, []byte("x"))
			return err
		}
		return g.Barrier(ctx)
	})
	for r, err := range errs {
		expect(t, fmt.Sprint("rank ", r), err, ErrAborted, "rank 2 called AllGather (operation 1) while rank 0 called Barrier (operation 1)")
	}
}

func TestCloseDuringBarrier(t *testing.T) {
	checkNoLeak(t)
	g := threeRanks(t)
	errs := during(t, g, []int{0, 1}, barrier, func() { g[0].Close() })
	if !errors.Is(errs[0], ErrClosed) {
		t.Errorf("rank 0: %v", errs[0])
	}
	expect(t, "rank 1", errs[1], ErrAborted, "rank 0 closed the group")
}

func TestFramesRoundTrip(t *testing.T) {
	parts := [][]byte{[]byte("a"), {}, []byte("ccc")}
	got, err := decodeList(encodeList(parts), 3)
	if err != nil || len(got) != 3 || string(got[0]) != "a" || len(got[1]) != 0 || string(got[2]) != "ccc" {
		t.Fatalf("decodeList = %q, %v", got, err)
	}
	for _, bad := range [][]byte{nil, {0, 0, 0, 9, 1}, append(encodeList(parts), 1)} {
		if _, err := decodeList(bad, 3); err == nil {
			t.Errorf("decodeList(%x) accepted", bad)
		}
	}
	f := frame{kind: kindGather, seq: 1<<40 + 5, body: []byte("hello")}
	r, err := readFrame(bytes.NewReader(f.encode()), 5)
	if err != nil || r.kind != f.kind || r.seq != f.seq || string(r.body) != "hello" {
		t.Fatalf("readFrame = %+v, %v", r, err)
	}
	if _, err := readFrame(bytes.NewReader(f.encode()), 4); err == nil {
		t.Error("a frame over the limit was accepted")
	}
	if _, err := readFrame(bytes.NewReader(f.encode()[:22]), 5); err != io.ErrUnexpectedEOF {
		t.Errorf("truncated body: %v", err)
	}
}
