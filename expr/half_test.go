package expr

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// TestHalfFusedRoundsOnce checks that a fused half-precision expression keeps its
// intermediate values in float32 and rounds once on store, that an explicit conversion
// rounds where it is written, and that Convert to float32 takes the float32 value.
func TestHalfFusedRoundsOnce(t *testing.T) {
	type format struct {
		t    dtype.DType
		to   func(uint16) float32
		from func(float32) uint16
	}
	for _, f := range []format{
		{dtype.Float16, dtype.Float16ToFloat32, dtype.Float16FromFloat32},
		{dtype.BFloat16, dtype.BFloat16ToFloat32, dtype.BFloat16FromFloat32},
	} {
		const n = 4096
		r := rand.New(rand.NewPCG(1, uint64(f.t)))
		x, y, z := make([]uint16, n), make([]uint16, n), make([]uint16, n)
		for i := range x {
			x[i] = f.from(float32(r.NormFloat64()))
			y[i] = f.from(float32(r.NormFloat64()))
			z[i] = f.from(float32(r.NormFloat64()))
		}
		env := Env{"x": OperandDecl(0, f.t), "y": OperandDecl(1, f.t), "z": OperandDecl(2, f.t)}
		ins := []any{x, y, z}
		_, fused := evalExpr(t, "x*y + z", env, ins, nil, n)
		_, explicit := evalExpr(t, "float16(x*y) + z", env, ins, nil, n)
		e := MustParse("x*y", env).Convert(dtype.Float32)
		p, err := e.Compile()
		if err != nil {
			t.Fatal(err)
		}
		wide := make([]float32, n)
		if err := p.Eval(wide, ins, nil); err != nil {
			t.Fatal(err)
		}
		differ := 0
		for i := range x {
			a, b, c := f.to(x[i]), f.to(y[i]), f.to(z[i])
			want := f.from(a*b + c) // float32 product (exact) and sum, one rounding
			perOp := f.from(f.to(f.from(a*b)) + c)
			if got := uint16(fused[i].Bits()); got != want {
				t.Fatalf("%v: x*y + z at %v, %v, %v: %#04x, want %#04x", f.t, a, b, c, got, want)
			}
			// float16(...) of a bfloat16 product rounds it to float16 first.
			p16 := dtype.Float16ToFloat32(dtype.Float16FromFloat32(a * b))
			wantExplicit := f.from(p16 + c)
			if f.t == dtype.BFloat16 {
				// float16 + bfloat16 is float32: the result is float32, unrounded.
				if got := math.Float32frombits(uint32(explicit[i].Bits())); got != p16+c {
					t.Fatalf("%v: float16(x*y) + z at %v, %v, %v: %v, want %v", f.t, a, b, c, got, p16+c)
				}
			} else if got := uint16(explicit[i].Bits()); got != wantExplicit {
				t.Fatalf("%v: float16(x*y) + z at %v, %v, %v: %#04x, want %#04x", f.t, a, b, c, got, wantExplicit)
			}
			if wide[i] != a*b {
				t.Fatalf("%v: x*y converted to float32 at %v, %v: %v, want %v", f.t, a, b, wide[i], a*b)
			}
			if perOp != want {
				differ++
			}
		}
		if differ == 0 {
			t.Errorf("%v: no input where rounding the product changes x*y + z: the test can't tell", f.t)
		}
	}
}
