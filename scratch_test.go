package gpu

import (
	"context"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/backend/cpu"
)

// scratchBytes copies the first n bytes of a use's memory to the host, after s's work.
func scratchBytes(t *testing.T, s *Stream, sc *scratch, n int) []byte {
	t.Helper()
	if err := s.Synchronize(context.Background()); err != nil {
		t.Fatal(err)
	}
	out := make([]byte, n)
	if sc.buf != nil {
		if err := sc.buf.CopyToHost(context.Background(), out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if err := s.be.CopyToHost(out, sc.mem, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.be.Synchronize(); err != nil {
		t.Fatal(err)
	}
	return out
}

func isZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// TestScratchPool checks the stream's scratch service: clean blocks of at least the
// size asked, reused when given back clean, freed when given back dirty or past the
// pool's room, distinct for concurrent users, counted, and freed by Close.
func TestScratchPool(t *testing.T) {
	d, err := NewDevice(cpu.New(2))
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	held := func() int64 {
		s.scratchPool.mu.Lock()
		defer s.scratchPool.mu.Unlock()
		return s.scratchPool.held
	}
	a, err := s.scratch(scratchScanStatus, 5000, true)
	if err != nil {
		t.Fatal(err)
	}
	if a.mem.Size() != 8192 || held() != 8192 {
		t.Fatalf("a block of %d bytes for 5000, %d held; want 8192", a.mem.Size(), held())
	}
	if got := scratchBytes(t, s, a, 8192); !isZero(got) {
		t.Fatal("new scratch isn't zero")
	}
	// Dirty it and give it back dirty: it is freed.
	if err := s.be.Memset(a.mem, 0xAB, 0, 1, 100); err != nil {
		t.Fatal(err)
	}
	p := a.mem.Ptr()
	a.release(false)
	if held() != 0 {
		t.Fatalf("%d bytes held after a dirty release", held())
	}
	// Clean ones come back: the same block again, for a smaller request too.
	b, err := s.scratch(scratchScanStatus, 100, true)
	if err != nil {
		t.Fatal(err)
	}
	if got := scratchBytes(t, s, b, 4096); !isZero(got) {
		t.Fatal("scratch isn't zero")
	}
	pb := b.mem.Ptr()
	b.release(true)
	c, err := s.scratch(scratchScanStatus, 64, true)
	if err != nil {
		t.Fatal(err)
	}
	if c.mem.Ptr() != pb {
		t.Errorf("a clean block wasn't reused (%#x, then %#x; freed one %#x)", pb, c.mem.Ptr(), p)
	}
	// Kinds have pools of their own.
	k, err := s.scratch(scratchTickets, 64, true)
	if err != nil {
		t.Fatal(err)
	}
	if k.mem.Ptr() == c.mem.Ptr() {
		t.Error("two uses share a block")
	}
	c.release(true)
	k.release(true)

	// Concurrent users of one stream get distinct blocks; the pool keeps scratchKeep.
	var mu sync.Mutex
	inUse := map[uint64]bool{}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				sc, err := s.scratch(scratchCompactStatus, 1000+g, true)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if inUse[sc.mem.Ptr()] {
					t.Error("a block handed out twice at once")
				}
				inUse[sc.mem.Ptr()] = true
				mu.Unlock()
				mu.Lock()
				delete(inUse, sc.mem.Ptr())
				mu.Unlock()
				sc.release(true)
			}
		}()
	}
	wg.Wait()
	s.scratchPool.mu.Lock()
	n := len(s.scratchPool.free[scratchCompactStatus])
	s.scratchPool.mu.Unlock()
	if n < 1 || n > scratchKeep {
		t.Errorf("%d clean compaction blocks pooled, want 1 to %d", n, scratchKeep)
	}
	// A full pool keeps the larger blocks: scratchKeep small ones, then a large one
	// given back replaces the smallest.
	var small []*scratch
	for range scratchKeep + 1 {
		sc, err := s.scratch(scratchScanStatus, 100, true)
		if err != nil {
			t.Fatal(err)
		}
		small = append(small, sc)
	}
	big, err := s.scratch(scratchScanStatus, 60000, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range small {
		sc.release(true)
	}
	bigMem := big.mem // (a record is not to be read after its release)
	big.release(true)
	if sc, err := s.scratch(scratchScanStatus, 60000, true); err != nil {
		t.Fatal(err)
	} else {
		if sc.mem != bigMem {
			t.Error("the large block wasn't kept")
		}
		sc.release(true)
	}

	// Unpooled scratch is a zeroed buffer.
	u, err := s.scratch(scratchCompactStatus, 100000, false)
	if err != nil {
		t.Fatal(err)
	}
	if u.buf == nil || u.mem != nil || !isZero(scratchBytes(t, s, u, 100000)) {
		t.Fatal("unpooled scratch isn't a zeroed buffer")
	}
	u.release(false)

	// A use holds the stream: Close from another goroutine finishes after the release,
	// and frees every block.
	h, err := s.scratch(scratchTickets, 64, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if held() == 0 {
		t.Fatal("Close freed the scratch in use")
	}
	h.release(true)
	if held() != 0 {
		t.Errorf("%d bytes of scratch held after Close", held())
	}
	if _, err := s.scratch(scratchTickets, 64, true); err == nil {
		t.Error("scratch from a closed stream")
	}
}
