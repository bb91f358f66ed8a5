package ptx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/ptx/gomath"
)

// pairs returns (x, y) pairs: special values crossed, then random pairs of every
// magnitude and of nearby magnitudes.
func pairs(r *rand.Rand, n int, f32 bool) [][2]float64 {
	sp := []float64{0, math.Copysign(0, -1), 1, -1, 2, -3, 0.5, 0.1, math.Inf(1), math.Inf(-1), math.NaN(),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 0x1p-1022,
		0x1.fffffffffffffp-1023, 1e300, 1e-300, 3 * math.SmallestNonzeroFloat64}
	if f32 {
		sp = []float64{0, math.Copysign(0, -1), 1, -1, 2, -3, 0.5, 0.1, math.Inf(1), math.Inf(-1), math.NaN(),
			math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32, 0x1p-126,
			0x1.fffffcp-127, 1e30, 1e-30, 3 * math.SmallestNonzeroFloat32}
	}
	var ps [][2]float64
	for _, y := range sp {
		for _, x := range sp {
			ps = append(ps, [2]float64{x, y})
		}
	}
	for len(ps) < n {
		var x, y float64
		switch r.IntN(3) {
		case 0:
			x, y = r.NormFloat64()*100, r.NormFloat64()
		case 1:
			if f32 {
				x = float64(math.Float32frombits(r.Uint32()))
				y = float64(math.Float32frombits(r.Uint32()))
			} else {
				x = math.Float64frombits(r.Uint64())
				y = math.Float64frombits(r.Uint64())
			}
		default:
			x = r.NormFloat64() * math.Ldexp(1, r.IntN(60)-30)
			y = x * r.NormFloat64() * math.Ldexp(1, -r.IntN(40))
		}
		if f32 {
			x, y = float64(float32(x)), float64(float32(y))
		}
		ps = append(ps, [2]float64{x, y})
	}
	return ps
}

// TestFmod checks that fmod is exact: bit for bit Go's math.Mod, which is exact.
func TestFmod(t *testing.T) {
	n := 100000
	if *long {
		n = 10000000
	}
	for _, p := range pairs(rand.New(rand.NewPCG(5, 32)), n, true) {
		x, y := float32(p[0]), float32(p[1])
		got := gomath.FmodF32(x, y)
		want := float32(math.Mod(float64(x), float64(y)))
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fmod(%g, %g) float32 = %g, want %g", x, y, got, want)
		}
	}
	for _, p := range pairs(rand.New(rand.NewPCG(5, 64)), n, false) {
		x, y := p[0], p[1]
		got := gomath.FmodF64(x, y)
		want := math.Mod(x, y)
		if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
			t.Fatalf("fmod(%g, %g) float64 = %g, want %g", x, y, got, want)
		}
	}
}

// TestFmodF32Quotients checks float32 fmod bit for bit against math.Mod where its
// one-step path (a quotient below 2^28 of a normal divisor) is most likely to go
// wrong: quotients at and a few ulps around integers up to past 2^28, x around y·2^28,
// divisors of the lowest normal binades (subnormal remainders), powers of two and
// their neighbours, each with the four sign combinations (zero results keep x's sign).
func TestFmodF32Quotients(t *testing.T) {
	r := rand.New(rand.NewPCG(28, 32))
	step := func(f float32, k int) float32 { // k ulps from f, staying finite and >= 0
		b := int64(math.Float32bits(f)) + int64(k)
		if b < 0 || b >= 0x7f800000 {
			return f
		}
		return math.Float32frombits(uint32(b))
	}
	n := 0
	check := func(x, y float32) {
		for _, p := range [][2]float32{{x, y}, {-x, y}, {x, -y}, {-x, -y}} {
			n++
			got := gomath.FmodF32(p[0], p[1])
			want := float32(math.Mod(float64(p[0]), float64(p[1])))
			if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
				t.Fatalf("fmod(%g, %g) float32 = %g (%#x), want %g (%#x)", p[0], p[1], got, math.Float32bits(got), want, math.Float32bits(want))
			}
		}
	}
	ys := []float32{0x1p-126, 0x1.000002p-126, 0x1.fffffep-126, 0x1.8p-125, 0x1.555556p-120, 0x1p-100, 0.1, 1, 3, 7,
		0x1.fffffep0, 0x1p127, 0x1.fffffep127}
	for range 400 {
		ys = append(ys, math.Float32frombits(uint32(1+r.IntN(254))<<23|r.Uint32()&0x7fffff))
	}
	for _, y := range ys {
		ks := []float64{1, 2, 3, 0x1p24 - 1, 0x1p24, 0x1p24 + 1, 0x1p25 + 3, 0x1p27, 0x1p28 - 1, 0x1p28, 0x1p28 + 1, 0x1p29}
		for range 20 {
			ks = append(ks, math.Floor(math.Ldexp(1+r.Float64(), r.IntN(29))))
		}
		for _, k := range ks {
			if x := float32(float64(y) * k); !math.IsInf(float64(x), 0) {
				for d := -3; d <= 3; d++ {
					check(step(x, d), y)
				}
			}
		}
		for d := -2; d <= 2; d++ {
			check(step(y, d), y)
		}
	}
	for ex := -149; ex <= 127; ex += 2 {
		for ey := -149; ey <= 127; ey += 3 {
			x, y := float32(math.Ldexp(1, ex)), float32(math.Ldexp(1, ey))
			for _, xy := range [][2]float32{{x, y}, {step(x, 1), y}, {step(x, -1), y}, {x, step(y, 1)}, {x, step(y, -1)}} {
				check(xy[0], xy[1])
			}
		}
	}
	for range 200000 { // divisors of the lowest binades: remainders mostly subnormal
		y := math.Float32frombits(uint32(1+r.IntN(3))<<23 | r.Uint32()&0x7fffff)
		check(float32(float64(y)*math.Ldexp(1+r.Float64(), r.IntN(30))), y)
	}
	t.Logf("%d pairs", n)
}

func TestHypot(t *testing.T) {
	n := 100000
	if *long {
		n = 10000000
	}
	var st32, st64 errStat
	for _, p := range pairs(rand.New(rand.NewPCG(6, 32)), n, true) {
		x, y := float32(p[0]), float32(p[1])
		e := ulp32(gomath.HypotF32(x, y), math.Hypot(float64(x), float64(y)))
		if e > st32.max || st32.worst == nil {
			st32.add(e, float64(x), float64(y))
		}
	}
	for _, p := range pairs(rand.New(rand.NewPCG(6, 64)), n/10, false) {
		x, y := p[0], p[1]
		got := gomath.HypotF64(x, y)
		var e float64
		if math.IsInf(x, 0) || math.IsInf(y, 0) || x != x || y != y {
			want := math.Hypot(x, y)
			if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
				e = math.Inf(1)
			}
		} else {
			e = ulp64(got, bigHypot(x, y))
		}
		if e > st64.max || st64.worst == nil {
			st64.add(e, x, y)
		}
	}
	t.Logf("Hypot  f32 max %.3f ulp at %v; f64 max %.3f ulp at %v", st32.max, st32.worst, st64.max, st64.worst)
	if st32.max > 1 || st64.max > 1 {
		t.Errorf("hypot: max error %.3f (f32), %.3f (f64)", st32.max, st64.max)
	}
}

// TestFmodNearIntegerQuotients: float32 fmod is exact (math.Mod's bits) where the
// quotient is an integer or one ulp of x off one, up to 2^40 (across the one-step
// path's bound of 2^28), for normal and subnormal divisors of both signs.
func TestFmodNearIntegerQuotients(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 32))
	for range 300000 {
		y := float32(r.NormFloat64() * math.Ldexp(1, r.IntN(80)-40))
		if r.IntN(10) == 0 {
			y = math.Float32frombits(uint32(r.IntN(1 << 23))) // subnormal (or 0)
		}
		x := float32(float64(r.Uint64N(1<<uint(r.IntN(41)))) * float64(y))
		switch r.IntN(3) {
		case 0:
			x = math.Nextafter32(x, 0)
		case 1:
			x = math.Nextafter32(x, float32(math.Inf(1)))
		}
		if r.IntN(2) == 0 {
			x = -x
		}
		got := gomath.FmodF32(x, y)
		want := float32(math.Mod(float64(x), float64(y)))
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fmod(%g, %g) float32 = %g, want %g", x, y, got, want)
		}
	}
}
