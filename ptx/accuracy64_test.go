package ptx

import (
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/ptx/gomath"
)

type case64 struct {
	fn     MathFn
	mirror func(float64) float64
	ref    func(*big.Float) *big.Float // exact-ish value for a finite argument
	goRef  func(float64) float64       // for special values (NaN, Inf, 0)
	lo, hi float64
	bound  float64
	// special reports the arguments compared exactly with goRef instead (NaN, ±Inf and
	// ±0 always).
	special func(x float64) bool
	extra   []float64 // hard cases added to the arguments
}

// expLike marks the arguments whose results overflow or vanish: compared with Go's.
func expLike(x float64) bool { return math.Abs(x) > 2000 }

// outside1 marks the arguments outside [-1, 1].
func outside1(x float64) bool { return math.Abs(x) > 1 }

// logLike marks the negative arguments of logarithms.
func logLike(x float64) bool { return x < 0 }

// trigHard holds float64 arguments very close to multiples of π/2: the worst case of
// all float64 (6381956970095103·2^797, about 2^-61 from one), the nearest float64 to
// k·π/2 for small k and a few large ones.
var trigHard = func() []float64 {
	xs := []float64{math.Ldexp(6381956970095103, 797), -math.Ldexp(6381956970095103, 797),
		math.Ldexp(5319172537579963, 63), 0x1p1023, math.MaxFloat64, 0x1p28, 0x1p28 - 0x1p-25,
		1e22, 3.14159265358979e15, 1.5707963267948966, 4.71238898038469, 355, 103993, 0x1.921fb54442d18p1}
	for k := 1; k < 40; k++ {
		xs = append(xs, float64(k)*math.Pi/2, math.Nextafter(float64(k)*math.Pi/2, 0))
	}
	return xs
}()

func bigSin(x *big.Float) *big.Float {
	f, _ := x.Float64()
	s, _ := bigSinCos(f)
	return s
}

func bigCos(x *big.Float) *big.Float {
	f, _ := x.Float64()
	_, c := bigSinCos(f)
	return c
}

func bigTan(x *big.Float) *big.Float {
	f, _ := x.Float64()
	s, c := bigSinCos(f)
	return s.Quo(s, c)
}

var cases64 = []case64{
	{fn: Exp, mirror: gomath.ExpF64, ref: bigExp, goRef: math.Exp, lo: -746, hi: 710, bound: 1, special: expLike},
	{fn: Exp2, mirror: gomath.Exp2F64, ref: func(x *big.Float) *big.Float { return bigExp(newF().Mul(x, bigLn2())) },
		goRef: math.Exp2, lo: -1076, hi: 1025, bound: 1, special: expLike},
	{fn: Expm1, mirror: gomath.Expm1F64, ref: bigExpm1, goRef: math.Expm1, lo: -40, hi: 710, bound: 1.5, special: expLike},
	{fn: Tanh, mirror: gomath.TanhF64, ref: func(x *big.Float) *big.Float {
		e := bigExpm1(newF().Add(x, x))
		return e.Quo(e, newF().Add(e, bf(2)))
	}, goRef: math.Tanh, lo: -25, hi: 25, bound: 1.5, special: expLike},
	{fn: Sinh, mirror: gomath.SinhF64, ref: func(x *big.Float) *big.Float {
		e, f := bigExpm1(x), bigExpm1(newF().Neg(x))
		return e.Sub(e, f).Quo(e, bf(2))
	}, goRef: math.Sinh, lo: -712, hi: 712, bound: 1.5, special: expLike},
	{fn: Cosh, mirror: gomath.CoshF64, ref: func(x *big.Float) *big.Float {
		e, f := bigExp(x), bigExp(newF().Neg(x))
		return e.Add(e, f).Quo(e, bf(2))
	}, goRef: math.Cosh, lo: -712, hi: 712, bound: 1.5, special: expLike},
	{fn: Log, mirror: gomath.LogF64, ref: bigLogPos, goRef: math.Log, lo: 0, hi: 4, bound: 1, special: logLike},
	{fn: Log2, mirror: gomath.Log2F64, ref: func(x *big.Float) *big.Float { return newF().Quo(bigLogPos(x), bigLn2()) },
		goRef: math.Log2, lo: 0, hi: 4, bound: 1, special: logLike},
	{fn: Log10, mirror: gomath.Log10F64, ref: func(x *big.Float) *big.Float { return newF().Quo(bigLogPos(x), bigLogPos(bf(10))) },
		goRef: math.Log10, lo: 0, hi: 4, bound: 1, special: logLike},
	{fn: Log1p, mirror: gomath.Log1pF64, ref: bigLog1p, goRef: math.Log1p, lo: -1, hi: 4, bound: 1,
		special: func(x float64) bool { return x <= -1 }, extra: []float64{-1 + 0x1p-53, -0.5, 0x1p-53, -0x1p-54, 1e-300, 0x1p1020, 0x1p1023, math.MaxFloat64, 0x1p53 + 2,
			-5.814211639333188e-17, 8.352538917294027e-16, 0x1p-20}},
	{fn: Atan, mirror: gomath.AtanF64, ref: bigAtanAny, goRef: math.Atan, lo: -20, hi: 20, bound: 1,
		extra: []float64{1, 1.0625, 0.0625, 0.0625 - 0x1p-56, 16, 16 - 0x1p-49, 1e300, 1e-300, 0.96875, 0.9999999999999999}},
	{fn: Cbrt, mirror: gomath.CbrtF64, ref: bigCbrt, goRef: math.Cbrt, lo: -30, hi: 30, bound: 1,
		extra: []float64{27, -8, 0x1p-1074, 0x1p-1073, 3e-320, 1e308, 1000, 0x1p3}},
	{fn: Asin, mirror: gomath.AsinF64, ref: bigAsin, goRef: math.Asin, lo: -1, hi: 1, bound: 1, special: outside1,
		extra: []float64{0.5, -0.5, 0.5 + 0x1p-53, 1 - 0x1p-53, -1 + 0x1p-53, 1e-300, 0.49999999999999994, 2, -2}},
	{fn: Acos, mirror: gomath.AcosF64, ref: bigAcos, goRef: math.Acos, lo: -1, hi: 1, bound: 1, special: outside1,
		extra: []float64{0.5, -0.5, 0.5 + 0x1p-53, 1 - 0x1p-53, -1 + 0x1p-53, 1e-300, 0.49999999999999994, 2, -2}},
	{fn: Asinh, mirror: gomath.AsinhF64, ref: bigAsinh, goRef: math.Asinh, lo: -8, hi: 8, bound: 1,
		extra: []float64{0x1p28, 0x1p28 - 0x1p-24, -0x1p28, 1e300, 0x1p-30, 0x1p-20, 0x1p-1022, 0.5, 1, 0x1p1023,
			1.232389809893982e-16, 0x1p-20 - 0x1p-75, 2.2424829297125855e-4}},
	{fn: Acosh, mirror: gomath.AcoshF64, ref: bigAcosh, goRef: math.Acosh, lo: 1, hi: 8, bound: 1,
		special: func(x float64) bool { return x <= 1 }, extra: []float64{1 + 0x1p-52, 1 + 0x1p-30, 1.25, 2, 0x1p28, 0x1p28 - 0x1p-24, 1e300, 0x1p1023}},
	{fn: Atanh, mirror: gomath.AtanhF64, ref: bigAtanh, goRef: math.Atanh, lo: -1, hi: 1, bound: 1,
		special: func(x float64) bool { return math.Abs(x) >= 1 }, extra: []float64{1 - 0x1p-53, -1 + 0x1p-53, 0.5, 1e-300, 0x1p-30, 0x1p-20, -6.087491410644313e-17, 9.066874664194878e-05}},
	{fn: Erf, mirror: gomath.ErfF64, ref: bigErf, goRef: math.Erf, lo: -7, hi: 7, bound: 1,
		special: func(x float64) bool { return math.Abs(x) > 7 }, extra: []float64{1, 1 - 0x1p-53, 1.5, 5.9, 6, 6 - 0x1p-50, 0x1p-1070, 1e-300}},
	{fn: Sin, mirror: gomath.SinF64, ref: bigSin, goRef: math.Sin, lo: -10, hi: 10, bound: 1, extra: trigHard},
	{fn: Cos, mirror: gomath.CosF64, ref: bigCos, goRef: math.Cos, lo: -10, hi: 10, bound: 1, extra: trigHard},
	{fn: Tan, mirror: gomath.TanF64, ref: bigTan, goRef: math.Tan, lo: -10, hi: 10, bound: 1, extra: trigHard},
}

// bigLogPos is log for positive x; NaN (as a nil-free sentinel) is left to goRef.
func bigLogPos(x *big.Float) *big.Float {
	if x.Sign() <= 0 {
		return bf(0)
	}
	return bigLog(x)
}

func TestAccuracy64(t *testing.T) {
	n := 3000
	if *long {
		n = 300000
	}
	var rows []string
	var rowsMu sync.Mutex
	for _, c := range cases64 {
		t.Run(c.fn.String(), func(t *testing.T) {
			t.Parallel()
			r := rand.New(rand.NewPCG(uint64(c.fn), 64))
			xs := []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(), 1, -1, 0.5,
				math.SmallestNonzeroFloat64, 0x1p-1022, c.lo, c.hi, 1e-300, -1e-300}
			xs = append(xs, c.extra...)
			for len(xs) < n {
				switch len(xs) % 5 {
				case 4: // small magnitudes, log-uniform down to 2^-70
					xs = append(xs, math.Copysign(math.Ldexp(1+r.Float64(), -r.IntN(70)), r.NormFloat64()))
				case 3:
					xs = append(xs, 1+r.NormFloat64()*math.Ldexp(1, -r.IntN(50))) // near 1
				case 2:
					xs = append(xs, math.Float64frombits(r.Uint64()))
				default:
					xs = append(xs, c.lo+(c.hi-c.lo)*r.Float64())
				}
			}
			var st errStat
			for _, x := range xs {
				got := c.mirror(x)
				want := c.goRef(x)
				var e float64
				switch {
				case math.IsNaN(x) || math.IsInf(x, 0) || x == 0 || c.special != nil && c.special(x):
					if !(got == want || got != got && want != want) || math.Signbit(got) != math.Signbit(want) && want == 0 {
						e = math.Inf(1)
					}
				default:
					e = ulp64(got, c.ref(bf(x)))
				}
				if e > st.max || st.worst == nil {
					st.add(e, x)
				}
			}
			rowsMu.Lock()
			rows = append(rows, fmt.Sprintf("%-6s f64 max %.3f ulp at x=%v", c.fn, st.max, st.worst))
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
