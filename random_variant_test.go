package gpu_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/random"
)

// TestRandomHalfUniformVariants checks every uniform float16 and bfloat16 kernel
// (Tuning.RandomHalfUniform 1, 2 and 3) on the GPU against the bytes package random
// defines, at sizes that end mid-block and with an odd offset.
func TestRandomHalfUniformVariants(t *testing.T) {
	d := cudaOrSkip(t)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	old := d.Tuning()
	defer d.SetTuning(old)
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
