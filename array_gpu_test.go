package gpu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/random"
)

func cudaOrSkip(t testing.TB) *gpu.Device {
	d, err := gpu.OpenBackend("cuda", 0)
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skipf("no CUDA device: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// cudaTuningStream returns the CUDA device (skipping without one), a new stream of it,
// and its tuning now: the stream is closed and the tuning restored when the test ends,
// for tests that run a kernel under each of its Tuning variants.
func cudaTuningStream(t *testing.T) (*gpu.Device, *gpu.Stream, gpu.Tuning) {
	t.Helper()
	d := cudaOrSkip(t)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	old := d.Tuning()
	t.Cleanup(func() {
		d.SetTuning(old)
		s.Close()
	})
	return d, s, old
}

// TestRandomExact checks every distribution and type on the GPU against the bytes
// package random defines (which the CPU backend produces), at odd sizes and offsets.
func TestRandomExact(t *testing.T) {
	d := cudaOrSkip(t)
	s, _ := d.NewStream()
	defer s.Close()
	for _, sp := range random.Specs() {
		sizes := []int{1, 3, 1025, 1<<20 + 7}
		if sp.Dist == random.Normal && sp.Type == dtype.Float32 && !testing.Short() {
			// 2^25 Box-Muller pairs: their square roots come from a short sequence
			// around rsqrt.approx (random/ptx.go, sqrt32) that must round exactly.
			sizes = append(sizes, 1<<26+5)
		}
		for _, n := range sizes {
			t.Run(fmt.Sprintf("%v/%d", sp, n), func(t *testing.T) {
				g := gpu.NewGenerator(0xC0FFEE + uint64(n))
				// Advance the generator by an odd number of blocks first.
				if _, err := gpu.Rand[float32](s, g, 13); err != nil {
					t.Fatal(err)
				}
				seed, offset := g.State()
				got, err := randBytes(s, g, sp, n)
				if errors.Is(err, errSkip) {
					t.Skip(err)
				}
				if err != nil {
					t.Fatal(err)
				}
				want, err := random.Expected(sp, int64(n), seed, offset)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got, want) {
					for i := range got {
						if got[i] != want[i] {
							t.Fatalf("byte %d of %d differs: GPU %#x, random.Expected %#x", i, len(got), got[i], want[i])
						}
					}
				}
			})
		}
	}
}

func randBytes(s *gpu.Stream, g *gpu.Generator, sp random.Spec, n int) ([]byte, error) {
	ctx := context.Background()
	switch sp.Type {
	case dtype.Float32:
		var a *gpu.Array[float32]
		var err error
		if sp.Dist == random.Normal {
			a, err = gpu.RandN[float32](s, g, n)
		} else {
			a, err = gpu.Rand[float32](s, g, n)
		}
		if err != nil {
			return nil, err
		}
		v, err := a.ToSlice(ctx)
		return gpu.Bytes(v), err
	case dtype.Float64:
		var a *gpu.Array[float64]
		var err error
		if sp.Dist == random.Normal {
			a, err = gpu.RandN[float64](s, g, n)
		} else {
			a, err = gpu.Rand[float64](s, g, n)
		}
		if err != nil {
			return nil, err
		}
		v, err := a.ToSlice(ctx)
		return gpu.Bytes(v), err
	case dtype.Int32:
		var a *gpu.Array[int32]
		var err error
		if sp.Dist == random.Range {
			a, err = gpu.RandInt[int32](s, g, sp.Lo, sp.Hi, n)
		} else {
			a, err = gpu.RandBits[int32](s, g, n)
		}
		if err != nil {
			return nil, err
		}
		v, err := a.ToSlice(ctx)
		return gpu.Bytes(v), err
	case dtype.Int64:
		var a *gpu.Array[int64]
		var err error
		if sp.Dist == random.Range {
			a, err = gpu.RandInt[int64](s, g, sp.Lo, sp.Hi, n)
		} else {
			a, err = gpu.RandBits[int64](s, g, n)
		}
		if err != nil {
			return nil, err
		}
		v, err := a.ToSlice(ctx)
		return gpu.Bytes(v), err
	case dtype.Uint32:
		return bitsBytes[uint32](s, g, n)
	case dtype.Uint64:
		return bitsBytes[uint64](s, g, n)
	case dtype.Uint8:
		return bitsBytes[uint8](s, g, n)
	case dtype.Int8:
		return bitsBytes[int8](s, g, n)
	case dtype.Int16:
		return bitsBytes[int16](s, g, n)
	case dtype.Uint16:
		return bitsBytes[uint16](s, g, n)
	case dtype.Bool:
		return bitsBytes[bool](s, g, n)
	case dtype.Float16:
		return halfRandBytes[gpu.Float16](s, g, sp, n)
	case dtype.BFloat16:
		return halfRandBytes[gpu.BFloat16](s, g, sp, n)
	}
	return nil, fmt.Errorf("%v: %w", sp, errSkip)
}

func halfRandBytes[T gpu.HalfFloat](s *gpu.Stream, g *gpu.Generator, sp random.Spec, n int) ([]byte, error) {
	var a *gpu.Array[T]
	var err error
	if sp.Dist == random.Normal {
		a, err = gpu.RandN[T](s, g, n)
	} else {
		a, err = gpu.Rand[T](s, g, n)
	}
	if err != nil {
		return nil, err
	}
	v, err := a.ToSlice(context.Background())
	return gpu.Bytes(v), err
}

var errSkip = errors.New("no Go type for this spec yet")

func bitsBytes[T gpu.Elem](s *gpu.Stream, g *gpu.Generator, n int) ([]byte, error) {
	a, err := gpu.RandBits[T](s, g, n)
	if err != nil {
		return nil, err
	}
	v, err := a.ToSlice(context.Background())
	return gpu.Bytes(v), err
}

// TestPast2to31 runs an elementwise kernel over more than 2^31 elements (64-bit
// indexing) and checks elements at both ends and around 2^31.
func TestPast2to31(t *testing.T) {
	d := cudaOrSkip(t)
	if testing.Short() {
		t.Skip("-short: skipping a 2 GiB test")
	}
	s, _ := d.NewStream()
	defer s.Close()
	const n = 1<<31 + 77
	a, err := gpu.Empty[uint8](s, n)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	if err := gpu.EvalInto(s, a, "uint8(i % 251)", gpu.Vars{"i": gpu.LinearIndex}); err != nil {
		t.Fatal(err)
	}
	b, err := gpu.Eval[uint8](s, "x + 1", gpu.Vars{"x": a})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	for _, i := range []int{0, 1, 1<<31 - 1, 1 << 31, 1<<31 + 1, n - 1} {
		v, err := b.At(context.Background(), i)
		if err != nil {
			t.Fatal(err)
		}
		if want := uint8(i%251) + 1; v != want {
			t.Errorf("element %d = %d, want %d", i, v, want)
		}
	}
}
