package gpu_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestScatterVariants runs the scatter-combines under every Tuning.ScatterVariant on
// the GPU (the CPU backend has one implementation): destinations of the shared-bin
// sizes (private copies per thread, per lane, one copy) and past them, with index
// patterns that make few targets contend (one index, a period of 16 into a large
// destination, sorted runs) as well as random ones, against the plain-Go reference;
// Bincount and the deterministic sum too.
func TestScatterVariants(t *testing.T) {
	d, s, old := cudaTuningStream(t)
	rng := rand.New(rand.NewPCG(41, 42))
	type tc struct {
		n, bins int
		pattern string
	}
	cases := []tc{{1<<16 + 5, 8, "random"}, {1 << 16, 33, "random"}, {1 << 16, 300, "random"}, {1 << 17, 5000, "random"},
		{1 << 16, 8, "one"}, {1 << 16, 300, "one"}, {1 << 16, 1 << 20, "one"}, {1 << 16, 1 << 20, "period16"},
		{1 << 16, 1 << 20, "sorted"}, {1 << 16, 1 << 20, "random"}, {3001, 1 << 14, "random"}}
	for v := 1; v <= 3; v++ {
		tu := old
		tu.ScatterVariant = v
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		for _, c := range cases {
			idx := make([]int64, c.n)
			for i := range idx {
				switch c.pattern {
				case "one":
					idx[i] = int64(c.bins / 3)
				case "period16":
					idx[i] = int64(i%16) * 997
				case "sorted":
					idx[i] = int64(i / 37)
				default:
					idx[i] = int64(rng.IntN(c.bins))
				}
			}
			ia := mustArr[int64](t)(gpu.FromSlice(s, idx))
			name := fmt.Sprintf("v%d/n%d/bins%d/%s", v, c.n, c.bins, c.pattern)
			t.Run(name+"/float32", func(t *testing.T) { scatterBinsT[float32](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/int32", func(t *testing.T) { scatterBinsT[int32](t, s, rng, ia, idx, c.bins) })
			t.Run(name+"/float64", func(t *testing.T) { scatterBinsT[float64](t, s, rng, ia, idx, c.bins) })
			if c.bins <= 1<<14 {
				t.Run(name+"/int16", func(t *testing.T) { scatterBinsT[int16](t, s, rng, ia, idx, c.bins) })
				t.Run(name+"/uint64", func(t *testing.T) { scatterBinsT[uint64](t, s, rng, ia, idx, c.bins) })
				t.Run(name+"/bool", func(t *testing.T) { scatterBinsT[bool](t, s, rng, ia, idx, c.bins) })
			}
			t.Run(name+"/bincount", func(t *testing.T) {
				want := make([]int64, c.bins)
				for _, k := range idx {
					want[k]++
				}
				for _, opts := range [][]gpu.IndexOption{nil, {gpu.Bins(c.bins)}} {
					got := mustArr[int64](t)(gpu.Bincount(context.Background(), s, ia, c.bins, opts...))
					if g := toSlice(t, got); !slices.Equal(g, want) {
						t.Errorf("Bincount (%d options) differs from the reference", len(opts))
					}
					got.Free()
				}
			})
			t.Run(name+"/deterministic", func(t *testing.T) {
				vals := make([]float32, c.n)
				for i := range vals {
					vals[i] = float32(rng.IntN(64) - 32)
				}
				want := make([]float32, c.bins)
				for i, k := range idx {
					want[k] += vals[i]
				}
				va := mustArr[float32](t)(gpu.FromSlice(s, vals))
				defer va.Free()
				a := mustArr[float32](t)(gpu.Zeros[float32](s, c.bins))
				defer a.Free()
				if err := gpu.AddAt(s, a, ia, va, gpu.Deterministic()); err != nil {
					t.Fatal(err)
				}
				if g := toSlice(t, a); !slices.Equal(g, want) {
					t.Errorf("deterministic AddAt differs from the reference")
				}
			})
			ia.Free()
		}
	}
}

// TestTakeStream runs Take with Tuning.GatherStream on the GPU (both settings), for
// 4- and 8-byte elements and a 1-byte one, against the host's gather.
func TestTakeStream(t *testing.T) {
	d, s, old := cudaTuningStream(t)
	rng := rand.New(rand.NewPCG(43, 44))
	const m, n = 1 << 20, 1<<16 + 3
	idx := make([]int64, n)
	for i := range idx {
		idx[i] = int64(rng.IntN(2*m) - m) // negative ones count from the end
	}
	ia := mustArr[int64](t)(gpu.FromSlice(s, idx))
	defer ia.Free()
	for _, on := range []bool{false, true} {
		tu := old
		tu.GatherStream = on
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		t.Run(fmt.Sprintf("stream=%v/float32", on), func(t *testing.T) { takeStreamT[float32](t, s, rng, ia, idx, m) })
		t.Run(fmt.Sprintf("stream=%v/int64", on), func(t *testing.T) { takeStreamT[int64](t, s, rng, ia, idx, m) })
		t.Run(fmt.Sprintf("stream=%v/uint8", on), func(t *testing.T) { takeStreamT[uint8](t, s, rng, ia, idx, m) })
	}
}

func takeStreamT[T gpu.Elem](t *testing.T, s *gpu.Stream, rng *rand.Rand, ia *gpu.Array[int64], idx []int64, m int) {
	src := make([]T, m)
	for i := range src {
		src[i] = elemFromInt[T](rng.IntN(250))
	}
	a := mustArr[T](t)(gpu.FromSlice(s, src))
	defer a.Free()
	out := mustArr[T](t)(gpu.Take(s, a, ia))
	defer out.Free()
	got := toSlice(t, out)
	for i, k := range idx {
		if k < 0 {
			k += int64(m)
		}
		if got[i] != src[k] {
			t.Fatalf("element %d (index %d) = %v, want %v", i, k, got[i], src[k])
		}
	}
}
