package gpu_test

import (
	"context"
	"testing"

	"github.com/go-gpu/gpu"
)

// Buffers that moved to a stream S once, whatever moved them (an allocation on the
// default stream, a plain host copy, FromSlice on the default stream, a read on the
// default stream), settle after a launch or two on S: later launches record no event
// (gpu.SharedUse), as for buffers used on S only. The ordering that the settling must
// keep is checked by the conformance suite (SettledTracking).
func TestTrackingSettles(t *testing.T) {
	d, k := freshCPU(t)
	ctx := context.Background()
	cases := []struct {
		name string
		make func(s *gpu.Stream) (x, y *gpu.Buffer)
	}{
		{"stream-alloc", func(s *gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := s.Alloc(1024)
			y, _ := s.Alloc(1024)
			return x, y
		}},
		{"device-alloc", func(*gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := d.Alloc(1024)
			y, _ := d.Alloc(1024)
			return x, y
		}},
		{"fromslice-default", func(*gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := gpu.FromSlice(d.DefaultStream(), make([]uint32, 256))
			y, _ := gpu.FromSlice(d.DefaultStream(), make([]uint32, 256))
			return x.Buffer(), y.Buffer()
		}},
		{"host-copy", func(*gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := d.Alloc(1024)
			y, _ := d.Alloc(1024)
			x.CopyFromHost(ctx, make([]byte, 1024))
			y.CopyFromHost(ctx, make([]byte, 1024))
			return x, y
		}},
		{"default-read", func(s *gpu.Stream) (*gpu.Buffer, *gpu.Buffer) {
			x, _ := s.Alloc(1024)
			y, _ := s.Alloc(1024)
			tmp, _ := d.Alloc(1024)
			k.AddU32(d.DefaultStream(), tmp, x, 1)
			k.AddU32(d.DefaultStream(), tmp, y, 1)
			tmp.Free()
			return x, y
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			x, y := c.make(s)
			defer x.Free()
			defer y.Free()
			for i := range 3 {
				if err := k.AddU32(s, y, x, 1); err != nil {
					t.Fatal(err)
				}
				shared, err := gpu.SharedUse(s, y, x)
				if err != nil {
					t.Fatal(err)
				}
				if shared && i > 0 {
					t.Errorf("launch %d on one stream still records events", i+2)
				}
			}
		})
	}
}
