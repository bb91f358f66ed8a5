package random

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"
)

// exactFMA32 is a*b+c rounded once to float32, computed with math/big.
func exactFMA32(a, b, c float32) float32 {
	x := new(big.Float).SetPrec(400).SetFloat64(float64(a))
	x.Mul(x, new(big.Float).SetFloat64(float64(b)))
	x.Add(x, new(big.Float).SetFloat64(float64(c)))
	f, _ := x.Float32() // nearest even, with subnormals
	if f == 0 && math.Signbit(float64(a*b)) && math.Signbit(float64(c)) {
		return float32(math.Copysign(0, -1))
	}
	return f
}

func TestFMA32(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 300000
	if testing.Short() {
		n = 30000
	}
	naiveWrong := 0
	check := func(a, b, c float32) {
		want := exactFMA32(a, b, c)
		got := fma32(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got == 0 && want == 0) {
			t.Fatalf("fma32(%x, %x, %x) = %x, want %x", a, b, c, got, want)
		}
		if float32(math.FMA(float64(a), float64(b), float64(c))) != want {
			naiveWrong++
		}
	}
	randf := func(emin, emax int) float32 {
		m := 1 + rng.Float64()
		e := emin + rng.IntN(emax-emin+1)
		x := float32(math.Ldexp(m, e))
		if rng.IntN(2) == 0 {
			x = -x
		}
		return x
	}
	for i := 0; i < n; i++ {
		a, b := randf(-30, 30), randf(-30, 30)
		// c near -a*b so that the sum cancels, or of similar or tiny size.
		var c float32
		switch i % 4 {
		case 0:
			c = -float32(float64(a) * float64(b))
		case 1:
			c = randf(-60, 60)
		case 2:
			p := float64(a) * float64(b)
			c = float32(math.Ldexp(p, -25-rng.IntN(5)))
		default:
			c = randf(-149, -126) // subnormal-ish sums
			a, b = randf(-80, -60), randf(-80, -60)
		}
		check(a, b, c)
	}
	// Halfway cases where rounding to float64 first makes a tie: a*b = 1 + 2^-24 + 2^-60
	// style sums. a = 1 + 2^-12, b = 1 + 2^-12 gives 1 + 2^-11 + 2^-24; with c tiny the
	// exact result is just above the float32 halfway point.
	for _, c := range []float32{0x1p-80, -0x1p-80, 0x1p-60, -0x1p-60, 0x1p-140} {
		check(1+0x1p-12, 1+0x1p-12, c)
		check(1+0x1p-12, -(1 + 0x1p-12), c)
	}
	check(0, 0, 0)
	check(float32(math.Inf(1)), 1, 1)
	check(float32(math.MaxFloat32), 2, -float32(math.MaxFloat32))
	check(0x1p-149, 0.5, 0)
	t.Logf("naive float32(math.FMA) wrong in %d of the checked cases", naiveWrong)
	if naiveWrong == 0 {
		t.Errorf("no case exercised double rounding")
	}
}

// bigPi returns pi to 300 bits (Machin's formula).
func bigPi() *big.Float {
	atanInv := func(x int64) *big.Float {
		sum := new(big.Float).SetPrec(300)
		term := new(big.Float).SetPrec(300).Quo(big.NewFloat(1), new(big.Float).SetInt64(x))
		x2 := new(big.Float).SetInt64(x * x)
		for k := int64(0); k < 250; k++ {
			q := new(big.Float).SetPrec(300).Quo(term, new(big.Float).SetInt64(2*k+1))
			if k%2 == 0 {
				sum.Add(sum, q)
			} else {
				sum.Sub(sum, q)
			}
			term.Quo(term, x2)
		}
		return sum
	}
	a := atanInv(5)
	a.Mul(a, big.NewFloat(16))
	b := atanInv(239)
	b.Mul(b, big.NewFloat(4))
	return a.Sub(a, b)
}

// bigLn2 returns ln 2 = 2 atanh(1/3) to 300 bits.
func bigLn2() *big.Float {
	sum := new(big.Float).SetPrec(300)
	term := new(big.Float).SetPrec(300).Quo(big.NewFloat(1), big.NewFloat(3))
	for k := int64(0); k < 250; k++ {
		sum.Add(sum, new(big.Float).SetPrec(300).Quo(term, new(big.Float).SetInt64(2*k+1)))
		term.Quo(term, big.NewFloat(9))
	}
	return sum.Mul(sum, big.NewFloat(2))
}

// TestCoefficients recomputes the float64 Taylor coefficients and ln 2 split with math/big
// and checks the constants are their correctly rounded values. (The float32 normal
// transform's polynomials are fitted, not Taylor: TestRadius32, TestSinCosPi32 and
// TestBoxMuller32 check what they achieve.)
func TestCoefficients(t *testing.T) {
	half := new(big.Float).SetPrec(300).Quo(bigPi(), big.NewFloat(2))
	// c[n] = (-1)^(n/2) (pi/2)^n / n!
	c := make([]*big.Float, 19)
	pow, fact := new(big.Float).SetPrec(300).SetInt64(1), new(big.Float).SetPrec(300).SetInt64(1)
	for n := 0; n < len(c); n++ {
		if n > 0 {
			pow.Mul(pow, half)
			fact.Mul(fact, new(big.Float).SetInt64(int64(n)))
		}
		c[n] = new(big.Float).SetPrec(300).Quo(pow, fact)
		if (n/2)%2 == 1 {
			c[n].Neg(c[n])
		}
	}
	f64 := func(x *big.Float) float64 { v, _ := x.Float64(); return v }
	for k, v := range sinCoef64 {
		if want := f64(c[2*k+1]); v != want {
			t.Errorf("sinCoef64[%d] = %x, want %x", k, v, want)
		}
	}
	for k, v := range cosCoef64 {
		if want := f64(c[2*k+2]); v != want {
			t.Errorf("cosCoef64[%d] = %x, want %x", k, v, want)
		}
	}
	for k, v := range logCoef64 {
		q := new(big.Float).SetPrec(300).Quo(big.NewFloat(2), big.NewFloat(float64(2*k+3)))
		if want := f64(q); v != want {
			t.Errorf("logCoef64[%d] = %x, want %x", k, v, want)
		}
	}
	l := bigLn2()
	hi64 := f64(l)
	lo64 := f64(new(big.Float).SetPrec(300).Sub(l, big.NewFloat(hi64)))
	if hi64 != ln2Hi64 || lo64 != ln2Lo64 {
		t.Errorf("ln2 split: got %x %x, want %x %x", ln2Hi64, ln2Lo64, hi64, lo64)
	}
	if math.Float32bits(math.Float32frombits(sqrtHalf32Bits)) != sqrtHalf32Bits ||
		math.Abs(float64(math.Float32frombits(sqrtHalf32Bits))-math.Sqrt(0.5)) > 0x1p-25 ||
		math.Float64frombits(sqrtHalf64Bits) != math.Sqrt(0.5) {
		t.Errorf("sqrt(1/2) bits")
	}
}

// ulps32 returns |got - want| in units of the last place of float32 at want.
func ulps32(got float32, want float64) float64 {
	w := float32(want)
	ulp := float64(math.Nextafter32(float32(math.Abs(float64(w))), float32(math.Inf(1)))) - math.Abs(float64(w))
	if w == 0 {
		ulp = 0x1p-149
	}
	return math.Abs(float64(got)-want) / ulp
}

func ulps64(got, want float64) float64 {
	ulp := math.Nextafter(math.Abs(want), math.Inf(1)) - math.Abs(want)
	return math.Abs(got-want) / ulp
}

// radiusRef is sqrt(-2 ln u) in float64 for the u that radius32(a) uses, and
// radius32(a)/sqrt(lambda) in float64 (exact up to the division's rounding).
func radiusRef(a uint32) (got, want float64) {
	u := float64(float32(a<<1|1)) * 0x1p-32
	return float64(radius32(a)) / math.Sqrt(radLambda32), math.Sqrt(-2 * math.Log(u))
}

// radiusInputs returns random words and every word near the ends of the range of u and
// near the split of its reduction (m = sqrt(1/2)).
func radiusInputs(n int) []uint32 {
	rng := rand.New(rand.NewPCG(3, 4))
	var as []uint32
	for i := 0; i < n; i++ {
		as = append(as, rng.Uint32())
	}
	for i := uint32(0); i < 1<<14; i++ {
		as = append(as, i, 0x7FFFFFFF-i, 0x3504F333-i*37, 0x3504F333+i*37, 0x80000000|i<<10)
	}
	for e := uint32(1); e < 31; e++ { // every power of two and sqrt(1/2) multiple of u
		for d := uint32(0); d < 64; d++ {
			as = append(as, 1<<e-32+d, uint32(float64(uint32(1)<<e)*math.Sqrt(0.5))-32+d)
		}
	}
	return as
}

// TestRadius32 measures radius32 against sqrt(-2 ln u) in float64 on the same u:
// relative error below 3.2 * 2^-24 (L' = lambda (-2 ln u) within 5.1 * 2^-24 relative,
// then the square root and its rounding), r = 0 exactly for u = 1, and the largest radius
// sqrt(64 ln 2) for u = 2^-32.
func TestRadius32(t *testing.T) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	worst, at := 0.0, uint32(0)
	for _, a := range radiusInputs(n) {
		got, want := radiusRef(a)
		if math.IsNaN(got) || got < 0 {
			t.Fatalf("radius32(%#x) = %v", a, got)
		}
		if want == 0 {
			if got != 0 {
				t.Fatalf("radius32(%#x) = %v for u = 1", a, got)
			}
			continue
		}
		if e := math.Abs(got-want) / want / 0x1p-24; e > worst {
			worst, at = e, a
		}
	}
	t.Logf("radius32: max relative error %.3f * 2^-24 at a=%#x", worst, at)
	if worst > 3.2 {
		t.Errorf("radius32 error %.3f * 2^-24 at %#x", worst, at)
	}
	if r := radius32(0x7FFFFFFF); r != 0 {
		t.Errorf("radius32 at u = 1: %v", r)
	}
	if got, want := radiusRef(0); math.Abs(got-math.Sqrt(64*math.Ln2)) > 3e-7 || want != math.Sqrt(64*math.Ln2) {
		t.Errorf("largest radius %v, want %v", got, want)
	}
}

func TestLog64(t *testing.T) {
	if log64(1) != 0 || math.Signbit(log64(1)) {
		t.Fatalf("log64(1) = %v", log64(1))
	}
	worst, at := 0.0, 0.0
	check := func(x float64) {
		got := log64(x)
		if got > 0 {
			t.Fatalf("log64(%x) = %v > 0", x, got)
		}
		if e := ulps64(got, math.Log(x)); e > worst {
			worst, at = e, x
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	for i := 0; i < n; i++ {
		check(math.FMA(float64(rng.Uint64()), 0x1p-64, 0x1p-65))
		check(math.Float64frombits(0x0010000000000000 + rng.Uint64()%(0x3FF0000000000000-0x0010000000000000+1)))
	}
	for i := uint64(0); i < 1<<16; i++ {
		check(math.Float64frombits(0x3FF0000000000000 - i))
		check(math.Float64frombits(sqrtHalf64Bits - 1<<15 + i))
	}
	t.Logf("log64: max difference from math.Log %.3f ulp at %x", worst, at)
	if worst > 3 {
		t.Errorf("log64 error %.3f ulp at %x", worst, at)
	}
}

// angleInputs returns random words and every word near the ends and the middle of the
// half-turn and near its quarters.
func angleInputs(n int) []uint32 {
	rng := rand.New(rand.NewPCG(7, 8))
	var bs []uint32
	for i := 0; i < n; i++ {
		bs = append(bs, rng.Uint32())
	}
	for i := uint32(0); i < 1<<14; i++ {
		bs = append(bs, i, -i, 0x80000000+i, 0x7FFFFFFF-i, 0x40000000+i-1<<13, 0xC0000000+i-1<<13)
	}
	return bs
}

// TestSinCosPi32 measures sincospi32 (times sqrt(lambda)) against math.Sincos of pi*t in
// float64 for the same t = fl32(int32(b)) * 2^-32: absolute errors below 2.5 * 2^-24 (sin)
// and 3.4 * 2^-24 (cos), and s^2 + c^2 = 1 within 2^-21.
func TestSinCosPi32(t *testing.T) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	sl := math.Sqrt(radLambda32)
	var ws, wc float64
	var as, ac uint32
	for _, b := range angleInputs(n) {
		s, c := sincospi32(b)
		gs, gc := float64(s)*sl, float64(c)*sl
		rs, rc := math.Sincos(math.Pi * float64(float32(int32(b))) * 0x1p-32)
		if e := math.Abs(gs-rs) / 0x1p-24; e > ws {
			ws, as = e, b
		}
		if e := math.Abs(gc-rc) / 0x1p-24; e > wc {
			wc, ac = e, b
		}
		if n := gs*gs + gc*gc; math.Abs(n-1) > 0x1p-21 {
			t.Fatalf("sincospi32(%#x): s^2+c^2 = %v", b, n)
		}
	}
	t.Logf("sincospi32: max absolute error %.3f * 2^-24 (sin, at %#x), %.3f * 2^-24 (cos, at %#x)", ws, as, wc, ac)
	if ws > 2.5 || wc > 3.4 {
		t.Errorf("sincospi32 errors %.3f, %.3f * 2^-24", ws, wc)
	}
}

// TestBoxMuller32 compares boxMuller32 with Box-Muller in float64 (the sign from bit 31
// of a), first on the same float32 inputs (u = fl32(2k+1) 2^-32, t = fl32(int32(b))
// 2^-32): |z - z64| <= 5.5 * 2^-24 * r64 (r64 = sqrt(-2 ln u)); then with the exact angle
// t = int32(b) 2^-32, which adds the rounding of its conversion: |z - z64| <= 1.5e-6
// (|z| <= 6.661). (u is the float32 fl32(2k+1) 2^-32 by definition, as a float32 uniform
// is: near 1 its spacing is 2^-24, so r near 0 takes the values sqrt(-2 ln(1 - j 2^-24)).)
func TestBoxMuller32(t *testing.T) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	as, bs := radiusInputs(n), angleInputs(n)
	rel, abs, absExact := 0.0, 0.0, 0.0
	for i := range as {
		a, b := as[i], bs[i%len(bs)]
		if i%4 == 1 { // also pair every special radius with every special angle
			b = bs[len(bs)-1-i%(6<<14)]
		}
		z0, z1 := boxMuller32(a, b)
		for j, in := range [2][2]float64{
			{float64(float32(a<<1 | 1)), float64(float32(int32(b)))},
			{float64(float32(a<<1 | 1)), float64(int32(b))},
		} {
			r := math.Sqrt(-2 * math.Log(in[0]*0x1p-32))
			s, c := math.Sincos(math.Pi * in[1] * 0x1p-32)
			if a&0x80000000 != 0 {
				c = -c
			}
			for _, d := range [2]float64{math.Abs(float64(z0) - r*c), math.Abs(float64(z1) - r*s)} {
				if j == 1 {
					absExact = math.Max(absExact, d)
					continue
				}
				abs = math.Max(abs, d)
				if r > 0 {
					rel = math.Max(rel, d/r/0x1p-24)
				}
			}
		}
	}
	t.Logf("boxMuller32 vs float64 on the float32 inputs: max |z - z64| = %.3g, max |z - z64|/r64 = %.3f * 2^-24; with the exact angle: max |z - z64| = %.3g",
		abs, rel, absExact)
	if rel > 5.5 || absExact > 1.5e-6 {
		t.Errorf("boxMuller32 error %.3f * 2^-24 relative to r, %.3g absolute (exact angle)", rel, absExact)
	}
}

func TestSinCos64(t *testing.T) {
	worst := 0.0
	var at uint64
	check := func(x uint64) {
		s, c := sincos2pi64(x)
		// Reference: reduce exactly in integers, then math.Sincos of a small angle.
		q := (x + 1<<61) >> 62
		d := int64(x - q<<62)
		a := math.Pi / 2 * float64(d) * 0x1p-62
		ws, wc := math.Sincos(a)
		switch q & 3 {
		case 1:
			ws, wc = wc, -ws
		case 2:
			ws, wc = -ws, -wc
		case 3:
			ws, wc = -wc, ws
		}
		for _, e := range []float64{ulps64(s, ws), ulps64(c, wc)} {
			if e > worst && math.Abs(ws) > 0x1p-40 && math.Abs(wc) > 0x1p-40 {
				worst, at = e, x
			}
		}
		if math.Abs(s-ws) > 0x1p-52 || math.Abs(c-wc) > 0x1p-52 {
			t.Fatalf("sincos2pi64(%#x) = %v, %v; want %v, %v", x, s, c, ws, wc)
		}
	}
	rng := rand.New(rand.NewPCG(9, 10))
	n := 1 << 20
	if testing.Short() {
		n = 1 << 16
	}
	for i := 0; i < n; i++ {
		check(rng.Uint64())
	}
	for q := uint64(0); q < 8; q++ {
		for d := uint64(0); d < 2048; d++ {
			check(q<<61 + d<<40 - 1024<<40)
		}
	}
	t.Logf("sincos2pi64: max difference from math.Sincos %.3f ulp at x=%#x", worst, at)
	if worst > 3 {
		t.Errorf("sincos2pi64 error %.3f ulp at %#x", worst, at)
	}
}

// TestConversions checks that Go's integer to float conversions, which stand for PTX's
// cvt.rn.f32.u32, cvt.rn.f32.s32, cvt.rn.f64.u64 and cvt.rn.f64.s64, round to nearest
// even, including ties and uint64 values of 2^63 and more.
func TestConversions(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	for i := 0; i < 200000; i++ {
		// Values with few significant bits around the rounding point make ties likely.
		u := rng.Uint64() >> uint(rng.IntN(64))
		if i%3 == 0 {
			u = u&^(1<<11-1) | 1<<10 // a tie at 53 bits when u >= 2^63
		}
		if i%3 == 1 {
			u = u | 1<<63
		}
		b := new(big.Float).SetUint64(u)
		if want, _ := b.Float64(); float64(u) != want {
			t.Fatalf("float64(uint64 %#x) = %x, want %x", u, float64(u), want)
		}
		s := int64(u)
		if want, _ := new(big.Float).SetInt64(s).Float64(); float64(s) != want {
			t.Fatalf("float64(int64 %d) = %x, want %x", s, float64(s), want)
		}
		w := uint32(u)
		if i%2 == 0 {
			w = w&^(1<<8-1) | 1<<7
		}
		if want, _ := new(big.Float).SetUint64(uint64(w)).Float32(); float32(w) != want {
			t.Fatalf("float32(uint32 %#x) = %x, want %x", w, float32(w), want)
		}
		if want, _ := new(big.Float).SetInt64(int64(int32(w))).Float32(); float32(int32(w)) != want {
			t.Fatalf("float32(int32 %d) = %x, want %x", int32(w), float32(int32(w)), want)
		}
	}
}
