package ptx

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/ptx/gomath"
)

var long = flag.Bool("long", false, "run the long accuracy sweeps (millions of inputs per function)")

// ulp32 returns the error of got in float32 ulps of the exact value ref.
func ulp32(got float32, ref float64) float64 {
	if math.IsNaN(ref) || got != got {
		if math.IsNaN(ref) && got != got {
			return 0
		}
		return math.Inf(1)
	}
	g := float64(got)
	if g == 0 && ref == 0 && math.Signbit(g) != math.Signbit(ref) {
		return math.Inf(1) // wrong sign of zero
	}
	r32 := float32(ref)
	if math.IsInf(g, 0) || math.IsInf(float64(r32), 0) {
		if g == float64(r32) {
			return 0
		}
		if math.IsInf(g, 0) {
			g = math.Copysign(0x1p128, g)
		}
	}
	a := math.Abs(ref)
	_, e := math.Frexp(a)
	e-- // a in [2^e, 2^(e+1))
	if e < -126 {
		e = -126
	}
	if math.IsInf(ref, 0) {
		ref = math.Copysign(0x1p128, ref)
		e = 127
	}
	return math.Abs(g-ref) / math.Ldexp(1, e-23)
}

// errStat collects the worst error of a function.
type errStat struct {
	mu    sync.Mutex
	max   float64
	worst []float64 // arguments of the worst case
	n     int
}

func (s *errStat) add(e float64, args ...float64) {
	s.mu.Lock()
	s.n++
	if e > s.max || s.worst == nil {
		s.max, s.worst = e, args
	}
	s.mu.Unlock()
}

type case32 struct {
	fn     MathFn
	mirror func(x, y float32) float32
	ref    func(x, y float64) float64
	lo, hi float64 // sampling range of the first argument (also uniform-bits sampling)
	bound  float64 // allowed max ulp
}

func one32(f func(float32) float32) func(x, y float32) float32 {
	return func(x, _ float32) float32 { return f(x) }
}

func one64(f func(float64) float64) func(x, y float64) float64 {
	return func(x, _ float64) float64 { return f(x) }
}

var cases32 = []case32{
	{Exp, one32(gomath.ExpF32), one64(math.Exp), -110, 90, 1},
	{Exp2, one32(gomath.Exp2F32), one64(math.Exp2), -160, 130, 1},
	{Expm1, one32(gomath.Expm1F32), one64(math.Expm1), -20, 90, 1.5},
	{Log, one32(gomath.LogF32), one64(math.Log), 0, 10, 1},
	{Log2, one32(gomath.Log2F32), one64(math.Log2), 0, 10, 1.5},    // 1.006 in the -long sweep
	{Log10, one32(gomath.Log10F32), one64(math.Log10), 0, 10, 1.5}, // 1.006 in the -long sweep
	{Log1p, one32(gomath.Log1pF32), one64(math.Log1p), -1, 10, 1},
	{Sin, one32(gomath.SinF32), one64(math.Sin), -1e6, 1e6, 1.5},
	{Cos, one32(gomath.CosF32), one64(math.Cos), -1e6, 1e6, 1.5},
	{Tan, one32(gomath.TanF32), one64(math.Tan), -1e6, 1e6, 1.5},
	{Atan, one32(gomath.AtanF32), one64(math.Atan), -4, 4, 1.5},
	{Cbrt, one32(gomath.CbrtF32), one64(math.Cbrt), -30, 30, 1},
	{Asin, one32(gomath.AsinF32), one64(math.Asin), -1, 1, 1},
	{Acos, one32(gomath.AcosF32), one64(math.Acos), -1, 1, 1},
	{Asinh, one32(gomath.AsinhF32), one64(math.Asinh), -10, 10, 1},
	{Acosh, one32(gomath.AcoshF32), one64(math.Acosh), 1, 10, 1},
	{Atanh, one32(gomath.AtanhF32), one64(math.Atanh), -1, 1, 1},
	{Erf, one32(gomath.ErfF32), one64(math.Erf), -5, 5, 1},
	{Tanh, one32(gomath.TanhF32), one64(math.Tanh), -12, 12, 1.5},
	{Sinh, one32(gomath.SinhF32), one64(math.Sinh), -92, 92, 1.5},
	{Cosh, one32(gomath.CoshF32), one64(math.Cosh), -92, 92, 1.5},
}

// inputs32 returns n float32 arguments: uniform in [lo, hi], uniform bit patterns
// (every magnitude), and special values.
func inputs32(r *rand.Rand, n int, lo, hi float64) []float32 {
	xs := []float32{0, float32(math.Copysign(0, -1)), float32(math.Inf(1)), float32(math.Inf(-1)),
		float32(math.NaN()), math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
		-math.SmallestNonzeroFloat32, 0x1p-126, -0x1p-126, 1, -1, 0.5, 2, float32(lo), float32(hi)}
	for len(xs) < n {
		switch len(xs) % 3 {
		case 0, 1:
			xs = append(xs, float32(lo+(hi-lo)*r.Float64()))
		default:
			xs = append(xs, math.Float32frombits(r.Uint32()))
		}
	}
	return xs
}

// TestPow32 checks pow against math.Pow on (x, y) pairs over every magnitude and on the
// special cases of C99 Annex F.
func TestPow32(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	n := 300000
	if *long {
		n = 30000000
	}
	sp := []float32{0, float32(math.Copysign(0, -1)), 1, -1, 2, -2, 0.5, -0.5, 3, -3, float32(math.Inf(1)),
		float32(math.Inf(-1)), float32(math.NaN()), 0x1p-149, -0x1p-149, math.MaxFloat32, 0x1p24, -0x1p24, 0x1p24 + 2, 1.5, -1.5, 0x1p31}
	var st errStat
	check := func(x, y float32) {
		got := gomath.PowF32(x, y)
		want := math.Pow(float64(x), float64(y))
		e := ulp32(got, want)
		if e > st.max {
			st.add(e, float64(x), float64(y))
		}
		if want == 0 || math.IsInf(want, 0) {
			if math.Float32bits(got) != math.Float32bits(float32(want)) {
				t.Errorf("pow(%g, %g) = %g, want %g", x, y, got, want)
			}
		}
	}
	for _, x := range sp {
		for _, y := range sp {
			check(x, y)
		}
	}
	for range n {
		var x, y float32
		switch r.IntN(4) {
		case 0: // any magnitude, moderate exponent
			x = math.Float32frombits(r.Uint32())
			y = float32(r.NormFloat64() * 4)
		case 1: // near 1, large exponent
			x = 1 + float32(r.NormFloat64()*1e-3)
			y = float32(r.NormFloat64() * 1e5)
		case 2: // negative base, integer exponent
			x = -float32(r.Float64() * 10)
			y = float32(r.IntN(81) - 40)
		default: // results near overflow and underflow
			x = float32(r.Float64()*100 + 1e-3)
			y = float32((r.Float64()*2 - 1) * 150 / math.Log2(float64(x)))
		}
		check(x, y)
	}
	t.Logf("Pow    f32 max %.3f ulp at (x, y)=%v", st.max, st.worst)
	if st.max > 1 {
		t.Errorf("pow: max error %.3f ulp at %v", st.max, st.worst)
	}
}

func TestAccuracy32(t *testing.T) {
	n := 200000
	if *long {
		n = 20000000
	}
	var rows []string
	var rowsMu sync.Mutex
	for _, c := range cases32 {
		t.Run(c.fn.String(), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(c.fn), 32))
			xs := inputs32(r, n, c.lo, c.hi)
			var st errStat
			for _, x := range xs {
				got := c.mirror(x, 0)
				e := ulp32(got, c.ref(float64(x), 0))
				if e > st.max {
					st.add(e, float64(x))
				}
			}
			rowsMu.Lock()
			rows = append(rows, fmt.Sprintf("%-6s f32 max %.3f ulp at x=%g", c.fn, st.max, st.worst))
			rowsMu.Unlock()
			if st.max > c.bound {
				t.Errorf("%v: max error %.3f ulp at %v (bound %v)", c.fn, st.max, st.worst, c.bound)
			}
		})
	}
	t.Cleanup(func() {
		sort.Strings(rows)
		t.Log("\n" + strings.Join(rows, "\n"))
	})
}
