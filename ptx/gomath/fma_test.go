package gomath

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

func fmaBig(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(200).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetFloat64(float64(c)))
	f, _ := x.Float32()
	if x.Sign() == 0 {
		return float32(float64(a)*float64(b) + float64(c)) // sign of zero
	}
	return f
}

func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	check := func(a, b, c float32) {
		got, want := FMA32(a, b, c), fmaBig(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("FMA32(%g, %g, %g) = %g (%#x), want %g (%#x)", a, b, c, got, math.Float32bits(got), want, math.Float32bits(want))
		}
	}
	for range 300000 {
		a := math.Float32frombits(r.Uint32())
		b := math.Float32frombits(r.Uint32())
		if a != a || b != b || math.IsInf(float64(a), 0) || math.IsInf(float64(b), 0) {
			continue
		}
		p := float64(a) * float64(b)
		// c near -p so the sum cancels, or c of a nearby magnitude with few bits so the
		// exact sum lies near a float32 halfway point: where double rounding fails.
		var c float32
		switch r.IntN(3) {
		case 0:
			c = float32(-p)
		case 1:
			c = float32(p) * float32(math.Ldexp(1, -r.IntN(30)))
			if math.Float32bits(c)&1 == 0 {
				c = -c
			}
		default:
			c = math.Float32frombits(r.Uint32())
		}
		if c != c || math.IsInf(float64(c), 0) || math.IsInf(p, 0) || math.Abs(p) > math.MaxFloat32 {
			continue
		}
		check(a, b, c)
	}
	// Hand-made halfway cases: (1+2^-23)(1+2^-23) = 1 + 2^-22 + 2^-46, and the like.
	e := float32(math.Ldexp(1, -23))
	check(1+e, 1+e, -1)
	check(1+e, 1-e, -1)
	check(1+e, 1+e, float32(math.Ldexp(1, -24)))
	check(1+2*e, 1+2*e, float32(-math.Ldexp(1, -24)))
	check(float32(math.Ldexp(1, -75)), float32(math.Ldexp(1, -75)), float32(math.Ldexp(1, -149)))
	check(3, float32(math.Ldexp(1, -149)), float32(-math.Ldexp(1, -148)))
	// Exact products on a float32 halfway point plus a tiny c: float64 rounds the sum
	// onto the halfway point and a second rounding to float32 then goes the wrong way.
	// float32(math.FMA(...)) fails these; FMA32 must not.
	naiveWrong := 0
	for range 20000 {
		m := r.Uint32()&0x7fffff | 0x800001 // odd 24-bit significand
		a := float32(m) * float32(math.Ldexp(1, -23))
		b := float32(3 + 2*r.IntN(3)) // 3, 5 or 7: a*b has 25..27 bits, odd
		c := float32(math.Ldexp(1, -30-r.IntN(40)))
		if r.IntN(2) == 0 {
			c = -c
		}
		check(a, b, c)
		if float32(math.FMA(float64(a), float64(b), float64(c))) != fmaBig(a, b, c) {
			naiveWrong++
		}
	}
	if naiveWrong == 0 {
		t.Error("the halfway cases did not exercise double rounding")
	}
}
