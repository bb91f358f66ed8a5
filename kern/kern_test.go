package kern_test

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/go-gpu/gpu/kern"
)

func saxpy(t kern.Thread, a float32, x, y []float32) {
	if i := t.Index(); i < len(y) {
		y[i] = a*x[i] + y[i]
	}
}

func TestRunSerial(t *testing.T) {
	n := 1000
	x, y := make([]float32, n), make([]float32, n)
	want := make([]float32, n)
	for i := range x {
		x[i], y[i] = rand.Float32(), rand.Float32()
		want[i] = 3*x[i] + y[i]
	}
	err := kern.Run(kern.Config{Grid: kern.Dim{X: (n + 127) / 128}, Block: kern.Dim{X: 128}}, func(th kern.Thread) { saxpy(th, 3, x, y) })
	if err != nil {
		t.Fatal(err)
	}
	for i := range y {
		if y[i] != want[i] {
			t.Fatalf("y[%d] = %v, want %v", i, y[i], want[i])
		}
	}
}

// blockSum sums x into out[block] with shared memory and warp shuffles.
func blockSum(t kern.Thread, x []int32, out []int32) {
	partial := kern.Shared[int32](t, 32)
	var s int32
	for i := t.Index(); i < len(x); i += t.GridStride() {
		s += x[i]
	}
	for m := 16; m > 0; m /= 2 {
		s += kern.ShflXor(t, s, m)
	}
	if t.Lane() == 0 {
		partial[t.Warp()] = s
	}
	t.Sync()
	if t.Warp() == 0 {
		nw := (t.BlockDim().X + 31) / 32
		s = 0
		if t.Lane() < nw {
			s = partial[t.Lane()]
		}
		for m := 16; m > 0; m /= 2 {
			s += kern.ShflDown(t, s, m)
		}
		if t.Lane() == 0 {
			out[t.BlockIdx().X] = s
		}
	}
}

func TestRunCooperative(t *testing.T) {
	for _, block := range []int{32, 64, 96, 256, 1024} {
		n := 5000
		x := make([]int32, n)
		var want int64
		for i := range x {
			x[i] = rand.Int32N(1000) - 500
			want += int64(x[i])
		}
		grid := 7
		out := make([]int32, grid)
		err := kern.Run(kern.Config{Grid: kern.Dim{X: grid}, Block: kern.Dim{X: block}, Cooperative: true}, func(th kern.Thread) { blockSum(th, x, out) })
		if err != nil {
			t.Fatal(block, err)
		}
		var got int64
		for _, v := range out {
			got += int64(v)
		}
		if got != want {
			t.Errorf("block %d: sum %d, want %d", block, got, want)
		}
	}
}

func TestFaultPosition(t *testing.T) {
	x := make([]float32, 10)
	err := kern.Run(kern.Config{Grid: kern.Dim{X: 2}, Block: kern.Dim{X: 8}}, func(th kern.Thread) {
		x[th.Index()] = 1 // 16 threads, 10 elements
	})
	var f *kern.Fault
	if !errors.As(err, &f) {
		t.Fatalf("got %v, want a *Fault", err)
	}
	if f.Block.X != 1 || f.Thread.X != 2 || f.File != "kern_test.go" || f.Message() != "index out of range [10] with length 10" {
		t.Errorf("fault %+v: %v", f, f)
	}
	// The other threads ran on.
	for i, v := range x {
		if v != 1 {
			t.Errorf("x[%d] = %v", i, v)
		}
	}
}

func TestDeadlock(t *testing.T) {
	for _, tc := range []struct {
		name string
		body func(th kern.Thread)
	}{
		{"barrier and warp", func(th kern.Thread) {
			if th.ThreadIdx().X == 0 {
				th.Sync()
				th.Ballot(true)
			} else {
				th.Sync()
				th.Sync()
			}
		}},
		{"diverged warp", func(th kern.Thread) {
			if th.Lane() < 4 {
				th.Ballot(true)
			} else {
				th.Sync()
			}
		}},
	} {
		err := kern.Run(kern.Config{Grid: kern.Dim{X: 3}, Block: kern.Dim{X: 64}, Cooperative: true}, tc.body)
		if !errors.Is(err, kern.ErrDeadlock) {
			t.Errorf("%s: got %v, want a deadlock", tc.name, err)
		}
	}
}

func TestMixedWarpOps(t *testing.T) {
	err := kern.Run(kern.Config{Grid: kern.Dim{X: 1}, Block: kern.Dim{X: 32}, Cooperative: true}, func(th kern.Thread) {
		if th.Lane() == 3 {
			th.Any(true)
		} else {
			th.All(true)
		}
	})
	if err == nil || !strings.Contains(err.Error(), "different warp operations") {
		t.Errorf("got %v", err)
	}
}

// An early return counts as arrival at later barriers.
func TestExitReleasesBarrier(t *testing.T) {
	var n atomic.Int32
	err := kern.Run(kern.Config{Grid: kern.Dim{X: 2}, Block: kern.Dim{X: 40}, Cooperative: true}, func(th kern.Thread) {
		if th.ThreadIdx().X%3 == 0 {
			return
		}
		th.Sync()
		n.Add(1)
		th.Sync()
	})
	if err != nil || n.Load() != 2*26 {
		t.Errorf("err %v, %d threads passed", err, n.Load())
	}
}

func TestWarpOps(t *testing.T) {
	for _, block := range []int{32, 45, 7} {
		nl := make([]int, block) // lanes of each thread's warp
		for i := range nl {
			nl[i] = min(32, block-i/32*32)
		}
		got := make([][6]int64, block)
		err := kern.Run(kern.Config{Grid: kern.Dim{X: 1}, Block: kern.Dim{X: block}, Cooperative: true}, func(th kern.Thread) {
			i := th.ThreadIdx().X
			v := int64(i*10 + 1)
			got[i][0] = kern.ShflXor(th, v, 5)
			got[i][1] = kern.ShflDown(th, v, 3)
			got[i][2] = kern.ShflUp(th, v, 2)
			got[i][3] = kern.Shfl(th, v, 40)
			got[i][4] = int64(th.Ballot(i%3 == 0))
			if th.All(i < 1000) && th.Any(i == 0) {
				got[i][5] = 1
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			lane, base, n := i%32, i/32*32, nl[i]
			val := func(src int) int64 {
				if src < 0 || src >= n {
					src = lane
				}
				return int64((base+src)*10 + 1)
			}
			var ballot int64
			for l := range n {
				if (base+l)%3 == 0 {
					ballot |= 1 << l
				}
			}
			want := [6]int64{val(lane ^ 5), val(lane + 3), val(lane - 2), val(40), ballot, 0}
			if base == 0 {
				want[5] = 1
			}
			if got[i] != want {
				t.Errorf("block %d thread %d: %v, want %v", block, i, got[i], want)
			}
		}
	}
}

func TestAtomicsContention(t *testing.T) {
	hist := make([]uint32, 16)
	fl := make([]float64, 1)
	mn := []int64{1 << 40}
	n := 64 * 256
	err := kern.Run(kern.Config{Grid: kern.Dim{X: 64}, Block: kern.Dim{X: 256}, Workers: 4}, func(th kern.Thread) {
		i := th.Index()
		kern.AtomicAdd(hist, i%16, 1)
		kern.AtomicAdd(fl, 0, 0.5)
		kern.AtomicMin(mn, 0, int64(n-i))
	})
	if err != nil {
		t.Fatal(err)
	}
	for b, v := range hist {
		if v != uint32(n/16) {
			t.Errorf("hist[%d] = %d", b, v)
		}
	}
	if fl[0] != float64(n)/2 || mn[0] != 1 {
		t.Errorf("sum %v, min %v", fl[0], mn[0])
	}
}

func TestSharedPerSite(t *testing.T) {
	var bad atomic.Int32
	err := kern.Run(kern.Config{Grid: kern.Dim{X: 4}, Block: kern.Dim{X: 64}, Cooperative: true}, func(th kern.Thread) {
		a := kern.Shared[int32](th, 64)
		b := kern.Shared[int32](th, 64)
		i := th.ThreadIdx().X
		a[i] = int32(i)
		b[i] = int32(-i)
		th.Sync()
		if a[63-i] != int32(63-i) || b[63-i] != int32(i-63) {
			bad.Add(1)
		}
	})
	if err != nil || bad.Load() != 0 {
		t.Errorf("err %v, %d bad", err, bad.Load())
	}
}
