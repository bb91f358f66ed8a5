package gpu_test

import (
	"errors"
	"runtime"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestIndexErrorReadAfterSettle: a raise-mode Take on s, seen complete by s.Query
// (which reports nothing), then read by an operation on another stream: that stream's
// tracking drops the completed write from the allocation (track.go's settle), yet a
// host read of the result still reports the index error, since the Take is the last
// write to it. The read of what the other stream computed from it reports nothing
// (other streams don't), and the error is reported once.
func TestIndexErrorReadAfterSettle(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		s2, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		a := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3, 4}))
		defer a.Free()
		bad := mustArr[int32](t)(gpu.FromSlice(s, []int32{1, 4, -2}))
		defer bad.Free()
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		for _, read := range []string{"ToSlice", "At", "CopyToHost"} {
			r, err := gpu.Take(s, a, bad)
			if err != nil {
				t.Fatal(err)
			}
			for {
				done, err := s.Query()
				if err != nil {
					t.Fatal(err)
				}
				if done {
					break
				}
				runtime.Gosched()
			}
			sum := mustArr[float32](t)(gpu.Add(s2, r, r)) // on s2: settles r's write
			if got, err := sum.ToSlice(bg); err != nil || !slices.Equal(got, []float32{4, 8, 6}) {
				t.Fatalf("%s: the sum on another stream: %v, %v (want [4 8 6], no error)", read, got, err)
			}
			switch read {
			case "ToSlice":
				_, err = r.ToSlice(bg)
			case "At":
				_, err = r.At(bg, 0)
			case "CopyToHost":
				err = r.CopyToHost(bg, make([]float32, 3))
			}
			if !errors.Is(err, gpu.ErrIndexOutOfRange) || !errors.Is(err, gpu.ErrInvalidValue) {
				t.Fatalf("%s of the result after another stream read it: %v, want ErrIndexOutOfRange", read, err)
			}
			if err := s.Synchronize(bg); err != nil {
				t.Fatalf("%s: reported twice: %v", read, err)
			}
			sum.Free()
			r.Free()
		}
	})
}
