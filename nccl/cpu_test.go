package nccl

import (
	"context"
	"fmt"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/testenv"
)

// cpuDevices makes n fresh CPU devices (each fault test needs its own: faults are
// sticky).
func cpuDevices(t testing.TB, n int) []*gpu.Device {
	t.Helper()
	devs := make([]*gpu.Device, n)
	for i := range devs {
		d, err := gpu.NewDevice(cpu.New(2))
		if err != nil {
			t.Fatal(err)
		}
		devs[i] = d
	}
	return devs
}

func cpuGroup(t testing.TB, n int, opts ...Option) []*Comm {
	t.Helper()
	comms, err := NewGroup(context.Background(), cpuDevices(t, n), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, c := range comms {
			c.Close()
		}
	})
	return comms
}

// TestCPUCollectives checks every collective against the reference for every element
// type, sizes 0, 1, 1001 and 2 MiB (256 KiB under the race detector, 64 KiB with
// -short), on 2 and 4 ranks.
func TestCPUCollectives(t *testing.T) {
	large := int64(2 << 20)
	switch {
	case testing.Short():
		large = 64 << 10
	case testenv.Race:
		large = 256 << 10
	}
	for _, world := range []int{2, 4} {
		t.Run(fmt.Sprintf("world%d", world), func(t *testing.T) {
			r := newRig(t, cpuGroup(t, world))
			for _, s := range specs(world, []int64{0, 1, 1001}, []int64{large}) {
				t.Run(s.String(), func(t *testing.T) { r.runSpec(t, s, true) })
			}
		})
	}
}

// TestCPUKnownValues checks hand-computed results: integer wrap-around, integer
// average truncating toward zero, float16 rounding at each step.
func TestCPUKnownValues(t *testing.T) {
	comms := cpuGroup(t, 2)
	r := newRig(t, comms)
	ctx := context.Background()
	run := func(dt dtype.DType, red Op, a, b []byte) []byte {
		x := upload(t, comms[0].Device(), a)
		y := upload(t, comms[1].Device(), b)
		n := int64(len(a) / dt.Size())
		err := Group(comms, func() error {
			if err := comms[0].AllReduce(r.streams[0], x, x, n, dt, red); err != nil {
				return err
			}
			return comms[1].AllReduce(r.streams[1], y, y, n, dt, red)
		})
		if err != nil {
			t.Fatal(err)
		}
		out := make([]byte, len(a))
		if err := y.CopyToHost(ctx, out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	cases := []struct {
		name string
		t    dtype.DType
		red  Op
		a, b []byte
		want []byte
	}{
		{"int8 wraps", dtype.Int8, Sum, []byte{100, 0x80}, []byte{100, 0xFF}, []byte{200, 0x7F}},
		{"int8 avg truncates toward zero", dtype.Int8, Avg, []byte{0xFD, 3}, []byte{0, 0}, []byte{0xFF, 1}}, // -3/2 = -1, 3/2 = 1
		{"uint8 avg of a wrapped sum", dtype.Uint8, Avg, []byte{255}, []byte{255}, []byte{127}},             // 510 wraps to 254, /2
		{"int8 min is signed", dtype.Int8, Min, []byte{0x80}, []byte{1}, []byte{0x80}},
		{"uint8 min is unsigned", dtype.Uint8, Min, []byte{0x80}, []byte{1}, []byte{1}},
		// 2048 + 1 = 2049 is not a float16; it rounds to even: 2048.
		{"float16 rounds", dtype.Float16, Sum, le16(dtype.Float16FromFloat64(2048)), le16(dtype.Float16FromFloat64(1)), le16(dtype.Float16FromFloat64(2048))},
		{"bfloat16 avg", dtype.BFloat16, Avg, le16(dtype.BFloat16FromFloat64(3)), le16(dtype.BFloat16FromFloat64(5)), le16(dtype.BFloat16FromFloat64(4))},
	}
	for _, c := range cases {
		if got := run(c.t, c.red, c.a, c.b); string(got) != string(c.want) {
			t.Errorf("%s: got %x, want %x", c.name, got, c.want)
		}
	}
}

func le16(v uint16) []byte { return []byte{byte(v), byte(v >> 8)} }
