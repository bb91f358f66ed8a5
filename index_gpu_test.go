package gpu_test

import (
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestIndexPast2to31 gathers from, scatters into and concatenates arrays of more than
// 2^31 elements on the GPU (64-bit offsets in every kernel), checking elements on both
// sides of 2^31.
func TestIndexPast2to31(t *testing.T) {
	d := cudaOrSkip(t)
	if testing.Short() {
		t.Skip("-short: skipping an 8 GiB test")
	}
	if free, _, err := d.MemInfo(); err != nil || free < 10<<30 {
		t.Skipf("needs 10 GiB of free device memory (%d free, %v)", free, err)
	}
	s, _ := d.NewStream()
	defer s.Close()
	const n = 1<<31 + 77
	a := mustArr[uint8](t)(gpu.Empty[uint8](s, n))
	defer a.Free()
	if err := gpu.EvalInto(s, a, "uint8(i % 251)", gpu.Vars{"i": gpu.LinearIndex}); err != nil {
		t.Fatal(err)
	}
	at := func(i int) uint8 { return uint8(i % 251) }
	pos := []int64{0, 1<<31 - 1, 1 << 31, 1<<31 + 1, n - 1, -1, -n}
	idx := mustArr[int64](t)(gpu.FromSlice(s, pos))
	defer idx.Free()
	// Flat take.
	flat := mustArr[uint8](t)(gpu.Take(s, a, idx))
	got := toSlice(t, flat)
	flat.Free()
	for i, p := range pos {
		if p < 0 {
			p += n
		}
		if got[i] != at(int(p)) {
			t.Fatalf("Take: element %d (index %d) = %d, want %d", i, p, got[i], at(int(p)))
		}
	}
	// Along axis 1 of a (2, n/2) view: offsets past 2^31 in the general form.
	const half = (n - 1) / 2
	m, err := a.Slice(gpu.R(0, 2*half))
	if err != nil {
		t.Fatal(err)
	}
	m, err = m.Reshape(2, half)
	if err != nil {
		t.Fatal(err)
	}
	cols := mustArr[int32](t)(gpu.FromSlice(s, []int32{0, half - 1, -2}))
	defer cols.Free()
	tk := mustArr[uint8](t)(gpu.Take(s, m, cols, gpu.OnAxis(1)))
	got = toSlice(t, tk)
	tk.Free()
	for r := range 2 {
		for j, c := range []int{0, half - 1, half - 2} {
			if w := at(r*half + c); got[r*3+j] != w {
				t.Fatalf("Take on axis 1: [%d, %d] = %d, want %d", r, c, got[r*3+j], w)
			}
		}
	}
	// Put and AddAt past 2^31, at distinct indices.
	dpos := []int64{0, 1<<31 - 1, 1 << 31, 1<<31 + 1, n - 1}
	didx := mustArr[int64](t)(gpu.FromSlice(s, dpos))
	defer didx.Free()
	vals := mustArr[uint8](t)(gpu.FromSlice(s, []uint8{100, 101, 102, 103, 104}))
	defer vals.Free()
	if err := gpu.Put(s, a, didx, vals); err != nil {
		t.Fatal(err)
	}
	if err := gpu.AddAt(s, a, didx, vals); err != nil {
		t.Fatal(err)
	}
	for i, p := range dpos {
		want := uint8(2 * (100 + i))
		v, err := a.At(bg, int(p))
		if err != nil {
			t.Fatal(err)
		}
		if v != want {
			t.Fatalf("Put and AddAt at %d: %d, want %d", p, v, want)
		}
	}
	// Concatenate two (2, 2^30+8) along axis 1: a (2, 2^31+16) result.
	const w = 1<<30 + 8
	x := mustArr[uint8](t)(gpu.Full[uint8](s, 3, 2, w))
	defer x.Free()
	y := mustArr[uint8](t)(gpu.Full[uint8](s, 5, 2, w))
	defer y.Free()
	if err := x.Set(bg, 7, 1, w-1); err != nil {
		t.Fatal(err)
	}
	c := mustArr[uint8](t)(gpu.Concatenate(s, []*gpu.Array[uint8]{x, y}, 1))
	defer c.Free()
	for _, e := range []struct {
		r, c int
		v    uint8
	}{{0, 0, 3}, {0, w, 5}, {1, w - 1, 7}, {1, w, 5}, {1, 2*w - 1, 5}, {1, 0, 3}} {
		v, err := c.At(bg, e.r, e.c)
		if err != nil {
			t.Fatal(err)
		}
		if v != e.v {
			t.Fatalf("Concatenate: [%d, %d] = %d, want %d", e.r, e.c, v, e.v)
		}
	}
	if !slices.Equal(c.Shape(), []int{2, 2 * w}) {
		t.Fatalf("Concatenate: shape %v", c.Shape())
	}
}
