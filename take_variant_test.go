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
	d, s, old := cudaTuningStream(t)
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

// TestPutVariants runs the flat Put under every Tuning.PutVariant on the GPU: element
// sizes 1, 2, 4 and 8, int32 and int64 indices, every mode, distinct targets (so that
// the result is exact) named by indices negative, wrapped or clipped, sizes that leave
// a partial warp and ones that don't; in raise mode, out-of-range indices (skipped,
// reported by the next read) in a full warp and in the partial one. Every element the
// indices don't name keeps its value.
func TestPutVariants(t *testing.T) {
	d, s, old := cudaTuningStream(t)
	rng := rand.New(rand.NewPCG(47, 48))
	const m = 1<<20 + 9
	for _, v := range []int{1, 2} {
		tu := old
		tu.PutVariant = v
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 255, 2048, 1<<16 + 3, 1 << 18} {
			for _, mode := range []gpu.IndexMode{gpu.ModeRaise, gpu.ModeWrap, gpu.ModeClip} {
				// Distinct positions in [1, m-1), then raw indices that name them.
				pos := rng.Perm(m - 2)[:n]
				idx := make([]int64, n)
				for i, p := range pos {
					p++
					switch {
					case mode == gpu.ModeRaise && rng.IntN(2) == 0:
						idx[i] = int64(p - m)
					case mode == gpu.ModeWrap:
						idx[i] = int64(p + (rng.IntN(7)-3)*m)
					default:
						idx[i] = int64(p)
					}
				}
				switch mode {
				case gpu.ModeClip:
					idx[0], idx[n-1] = int64(-1-rng.IntN(m)), int64(m+rng.IntN(m)) // the two ends (0 and m-1 otherwise unnamed)
				case gpu.ModeRaise:
					idx[n-1] = int64(m + rng.IntN(3)) // out of range: skipped
					if n > 300 {
						idx[7] = -int64(m) - 1
					}
				}
				name := fmt.Sprintf("v%d/n%d/%v", v, n, mode)
				t.Run(name+"/float32/int64", func(t *testing.T) { putVariantT[float32, int64](t, s, rng, idx, m, mode) })
				t.Run(name+"/int64/int32", func(t *testing.T) { putVariantT[int64, int32](t, s, rng, idx, m, mode) })
				t.Run(name+"/uint8/int64", func(t *testing.T) { putVariantT[uint8, int64](t, s, rng, idx, m, mode) })
				t.Run(name+"/int16/int32", func(t *testing.T) { putVariantT[int16, int32](t, s, rng, idx, m, mode) })
			}
		}
	}
}

// putVariantT puts random values of T at idx (as I, naming distinct positions) into m
// random elements in mode and checks every element against the host's put, and the
// raise-mode error reported by the next read exactly when an index is out of range.
func putVariantT[T gpu.Elem, I int32 | int64](t *testing.T, s *gpu.Stream, rng *rand.Rand, idx []int64, m int, mode gpu.IndexMode) {
	dst := make([]T, m)
	for i := range dst {
		dst[i] = elemFromInt[T](rng.IntN(60) + 1)
	}
	vals := make([]T, len(idx))
	for i := range vals {
		vals[i] = elemFromInt[T](rng.IntN(60) + 61) // never a destination's old value
	}
	a := mustArr[T](t)(gpu.FromSlice(s, dst))
	defer a.Free()
	ii := make([]I, len(idx))
	for i, k := range idx {
		ii[i] = I(k)
	}
	ia := mustArr[I](t)(gpu.FromSlice(s, ii))
	defer ia.Free()
	va := mustArr[T](t)(gpu.FromSlice(s, vals))
	defer va.Free()
	if err := gpu.Put(s, a, ia, va, gpu.WithMode(mode)); err != nil {
		t.Fatal(err)
	}
	got, err := a.ToSlice(bg)
	want := append([]T(nil), dst...)
	bad := false
	for i, k := range ii {
		p, isBad := normRef(int64(k), m, mode)
		if isBad {
			bad = true
			continue
		}
		want[p] = vals[i]
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], want[i])
		}
	}
	switch {
	case bad && !errors.Is(err, gpu.ErrIndexOutOfRange):
		t.Fatalf("an index out of range: error %v, want ErrIndexOutOfRange", err)
	case !bad && err != nil:
		t.Fatal(err)
	}
}
