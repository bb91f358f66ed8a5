package gpu_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestTakeVariants runs the flat Take under every Tuning.GatherVariant on the GPU (the
// CPU backend has one implementation), with and without GatherStream: element sizes
// 1, 2, 4 and 8, int32 and int64 indices, every mode, negative indices, sizes that
// leave a partial warp and one that doesn't, against the host's gather; in raise
// mode, an out-of-range index (in a warp of the full path, and in the partial warp)
// is reported as ErrIndexOutOfRange by the first read and the output still holds
// every in-range element.
func TestTakeVariants(t *testing.T) {
	d := cudaOrSkip(t)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := d.Tuning()
	defer d.SetTuning(old)
	rng := rand.New(rand.NewPCG(45, 46))
	const m = 1<<20 + 7
	for _, v := range []int{1, 2} {
		for _, stream := range []bool{false, true} {
			tu := old
			tu.GatherVariant, tu.GatherStream = v, stream
			if _, err := d.SetTuning(tu); err != nil {
				t.Fatal(err)
			}
			for _, n := range []int{1, 255, 2048, 1<<16 + 3, 1 << 18} {
				for _, mode := range []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip} {
					name := fmt.Sprintf("v%d/stream=%v/n%d/%v", v, stream, n, mode)
					idx := make([]int64, n)
					for i := range idx {
						idx[i] = int64(rng.IntN(2*m) - m) // negative ones count from the end
						if mode != gpu.ModeRaise && rng.IntN(8) == 0 {
							idx[i] = int64(rng.IntN(8*m) - 4*m) // out of range
						}
					}
					t.Run(name+"/float32/int64", func(t *testing.T) { takeVariantT[float32, int64](t, s, rng, idx, m, mode) })
					t.Run(name+"/int64/int32", func(t *testing.T) { takeVariantT[int64, int32](t, s, rng, idx, m, mode) })
					t.Run(name+"/uint8/int64", func(t *testing.T) { takeVariantT[uint8, int64](t, s, rng, idx, m, mode) })
					t.Run(name+"/int16/int32", func(t *testing.T) { takeVariantT[int16, int32](t, s, rng, idx, m, mode) })
				}
				// Raise mode with an out-of-range index: in the first warp (the full
				// path where n allows one) and in the last element.
				for _, at := range []int{0, n - 1} {
					idx := make([]int64, n)
					for i := range idx {
						idx[i] = int64(rng.IntN(2*m) - m)
					}
					idx[at] = m + int64(rng.IntN(3))
					if rng.IntN(2) == 0 {
						idx[at] = -idx[at] - 1
					}
					t.Run(fmt.Sprintf("v%d/stream=%v/n%d/bad%d", v, stream, n, at), func(t *testing.T) {
						takeVariantT[float32, int64](t, s, rng, idx, m, gpu.ModeRaise)
					})
				}
			}
		}
	}
}

// takeVariantT takes idx (as I) from m random elements of T in mode and checks the
// result against the host's gather: every element read from the position the mode
// gives (an out-of-range one in raise mode from the nearest end), and the raise-mode
// error reported by the first read exactly when an index is out of range.
func takeVariantT[T gpu.Elem, I int32 | int64](t *testing.T, s *gpu.Stream, rng *rand.Rand, idx []int64, m int, mode gpu.IndexMode) {
	src := make([]T, m)
	for i := range src {
		src[i] = elemFromInt[T](rng.IntN(120) + 1)
	}
	a := mustArr[T](t)(gpu.FromSlice(s, src))
	defer a.Free()
	ii := make([]I, len(idx))
	for i, k := range idx {
		ii[i] = I(k)
	}
	ia := mustArr[I](t)(gpu.FromSlice(s, ii))
	defer ia.Free()
	out, err := gpu.Take(s, a, ia, gpu.WithMode(mode))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Free()
	got, err := out.ToSlice(bg)
	bad := false
	for i, k := range ii {
		pos, isBad := normRef(int64(k), m, mode)
		bad = bad || isBad
		if got[i] != src[pos] {
			t.Fatalf("element %d (index %d, position %d) = %v, want %v", i, k, pos, got[i], src[pos])
		}
	}
	switch {
	case bad && !errors.Is(err, gpu.ErrIndexOutOfRange):
		t.Fatalf("an index out of range: error %v, want ErrIndexOutOfRange", err)
	case !bad && err != nil:
		t.Fatal(err)
	}
}
