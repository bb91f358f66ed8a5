package gpu

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// TestCaptureInsideAccessScope: BeginCapture and EndCapture wait for the operations
// holding the stream, so inside an Access scope on the same stream (which holds it)
// they would wait for themselves: each returns an error wrapping ErrInScope instead
// (they used to hang), and leaves the capture as it was; another stream captures
// inside the scope, and the stream captures once the scope has returned.
func TestCaptureInsideAccessScope(t *testing.T) {
	d, s := cpuTestStream(t)
	other, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	b, err := s.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	// within runs f in an Access scope of b on s, failing the test if it doesn't return.
	within := func(what string, f func() error) error {
		done := make(chan error, 1)
		go func() {
			done <- b.Access(s, Read, func(DevicePtr) error { return f() })
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			// Crash (a panic on a goroutine of its own runs none of the test's deferred
			// frees and closes, which would wait for the scope).
			go panic(what + " inside an Access scope on its stream: no return in 20 s")
			select {}
		}
	}
	var inner, innerOther error
	if err := within("BeginCapture", func() error {
		inner = s.BeginCapture()
		if innerOther = other.BeginCapture(); innerOther == nil {
			_, innerOther = other.EndCapture()
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, ErrInScope) || s.Capturing() {
		t.Fatalf("BeginCapture inside an Access scope on the stream: %v (capturing %v), want ErrInScope", inner, s.Capturing())
	}
	if innerOther != nil {
		t.Fatalf("another stream's capture inside the scope: %v", innerOther)
	}

	// A capture begun outside: EndCapture inside a scope is refused and the capture
	// goes on; after the scope it ends, and its graph runs.
	xs := make([]float32, 100)
	for i := range xs {
		xs[i] = rand.Float32()
	}
	x, err := FromSlice(s, xs)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if err := s.BeginCapture(); err != nil {
		t.Fatal(err)
	}
	y, err := Eval[float32](s, "x*3 + 1", Vars{"x": x})
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	var g *Graph
	if err := within("EndCapture", func() error {
		g, inner = s.EndCapture()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if !errors.Is(inner, ErrInScope) || g != nil || !s.Capturing() {
		t.Fatalf("EndCapture inside an Access scope on the stream: %v (graph %v, capturing %v), want ErrInScope", inner, g, s.Capturing())
	}
	if g, err = s.EndCapture(); err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if err := g.Launch(s); err != nil {
		t.Fatal(err)
	}
	got, err := y.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := make([]float32, len(xs))
	for i, v := range xs {
		want[i] = v*3 + 1
	}
	if !slices.Equal(got, want) {
		t.Fatalf("the graph's result %v, want %v", got[:4], want[:4])
	}
}
