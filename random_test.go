package gpu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/random"
)

// TestRandomHalfUniformVariants checks every uniform float16 and bfloat16 kernel
// (Tuning.RandomHalfUniform 1, 2 and 3) on the GPU against the bytes package random
// defines, at sizes that end mid-block and with an odd offset.
func TestRandomHalfUniformVariants(t *testing.T) {
	d, s, old := cudaTuningStream(t)
	for _, v := range []int{1, 2, 3} {
		tu := old
		tu.RandomHalfUniform = v
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		for _, ty := range []dtype.DType{dtype.Float16, dtype.BFloat16} {
			sp := random.Spec{Dist: random.Uniform, Type: ty}
			for _, n := range []int{5, 4099, 1<<22 + 3} {
				t.Run(fmt.Sprintf("v%d/%v/%d", v, ty, n), func(t *testing.T) {
					g := gpu.NewGenerator(0xBEEF + uint64(n))
					if _, err := gpu.Rand[float32](s, g, 7); err != nil {
						t.Fatal(err)
					}
					seed, offset := g.State()
					got, err := randBytes(s, g, sp, n)
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
}

// A nil generator is an error, not a panic.
func TestRandNilGenerator(t *testing.T) {
	s := freshStream(t)
	if _, err := gpu.Rand[float32](s, nil, 4); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Rand with a nil generator: %v", err)
	}
	a, _ := gpu.Zeros[int32](s, 4)
	if err := gpu.RandIntInto(s, nil, a, 0, 5); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("RandIntInto with a nil generator: %v", err)
	}
}

// A generator set back to a saved State repeats the numbers it gave after it, across
// kinds of requests; SetState to another seed gives that seed's numbers.
func TestGeneratorSetState(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	g := gpu.NewGenerator(11)
	if _, err := gpu.Rand[float32](s, g, 100); err != nil { // move it off 0
		t.Fatal(err)
	}
	seed, off := g.State()
	draw := func(g *gpu.Generator) ([]float32, []int64) {
		t.Helper()
		a, err := gpu.RandN[float32](s, g, 1001)
		if err != nil {
			t.Fatal(err)
		}
		b, err := gpu.RandInt[int64](s, g, -5, 1<<40, 333)
		if err != nil {
			t.Fatal(err)
		}
		ha, err := a.ToSlice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.ToSlice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ha, hb
	}
	a1, b1 := draw(g)
	_, after := g.State()
	if err := g.SetState(seed, off); err != nil {
		t.Fatal(err)
	}
	a2, b2 := draw(g)
	if !slices.Equal(a1, a2) || !slices.Equal(b1, b2) {
		t.Errorf("after SetState(%d, %d) the numbers differ", seed, off)
	}
	if _, off2 := g.State(); off2 != after {
		t.Errorf("offset after the repeat %d, first time %d", off2, after)
	}
	// Another generator set to the same state agrees; a fresh generator of that seed
	// (offset 0) does not.
	h := gpu.NewGenerator(999)
	if err := h.SetState(seed, off); err != nil {
		t.Fatal(err)
	}
	a3, b3 := draw(h)
	if !slices.Equal(a1, a3) || !slices.Equal(b1, b3) {
		t.Errorf("another generator set to (%d, %d) gives other numbers", seed, off)
	}
	a4, _ := draw(gpu.NewGenerator(seed))
	if slices.Equal(a1, a4) {
		t.Errorf("offset %d and offset 0 gave the same numbers", off)
	}
}
