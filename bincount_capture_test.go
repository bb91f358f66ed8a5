package gpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
)

// TestBincountBinsInCapture: Bincount and BincountWeights with Bins check their values
// as ModeRaise does, which a graph can't; on a capturing stream they are refused
// (ErrCapturing) before anything is made or enqueued, leaving the capture as it was
// (they used to allocate and zero the bins in the capture, then be refused with
// advice to use ModeClip or ModeWrap, options Bincount doesn't take). The graph then
// runs right, and the same calls work once the capture has ended.
func TestBincountBinsInCapture(t *testing.T) {
	ctx := context.Background()
	_, s := cpuTestStream(t)
	const n, bins = 300, 16
	vals := make([]int32, n)
	w := make([]float32, n)
	for i := range vals {
		vals[i] = rand.Int32N(bins)
		w[i] = float32(rand.IntN(9))
	}
	x, err := FromSlice(s, vals, n)
	if err != nil {
		t.Fatal(err)
	}
	wa, err := FromSlice(s, w, n)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	y, err := Eval[int32](s, "x + 0", Vars{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	c := s.cap.Load()
	c.mu.Lock()
	before := len(c.order)
	c.mu.Unlock()
	if _, err := Bincount(ctx, s, y, 0, Bins(bins)); !errors.Is(err, ErrCapturing) {
		t.Errorf("Bincount with Bins in a capture = %v, want ErrCapturing", err)
	}
	if _, err := BincountWeights(ctx, s, y, wa, 0, Bins(bins)); !errors.Is(err, ErrCapturing) {
		t.Errorf("BincountWeights with Bins in a capture = %v, want ErrCapturing", err)
	}
	c.mu.Lock()
	after := len(c.order)
	c.mu.Unlock()
	if after != before {
		t.Errorf("the refused calls added %d buffers to the capture", after-before)
	}
	g, err := s.EndCapture()
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	got, err := y.ToSlice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if got[i] != vals[i] {
			t.Fatalf("the graph's result [%d] = %d, want %d", i, got[i], vals[i])
		}
	}
	counts, err := Bincount(ctx, s, x, 0, Bins(bins))
	if err != nil {
		t.Fatal(err)
	}
	sums, err := BincountWeights(ctx, s, x, wa, 0, Bins(bins))
	if err != nil {
		t.Fatal(err)
	}
	wantC, wantS := make([]int64, bins), make([]float64, bins)
	for i, v := range vals {
		wantC[v]++
		wantS[v] += float64(w[i])
	}
	gotC, err := counts.ToSlice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	gotS, err := sums.ToSlice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i := range bins {
		if gotC[i] != wantC[i] || gotS[i] != wantS[i] {
			t.Errorf("bin %d after the capture: count %d, sum %v; want %d, %v", i, gotC[i], gotS[i], wantC[i], wantS[i])
		}
	}
}
