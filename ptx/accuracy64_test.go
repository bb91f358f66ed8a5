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
}

var cases64 = []case64{
	{Exp, gomath.ExpF64, bigExp, math.Exp, -746, 710, 1},
	{Exp2, gomath.Exp2F64, func(x *big.Float) *big.Float { return bigExp(newF().Mul(x, bigLn2())) }, math.Exp2, -1076, 1025, 1},
	{Expm1, gomath.Expm1F64, bigExpm1, math.Expm1, -40, 710, 1.5},
	{Tanh, gomath.TanhF64, func(x *big.Float) *big.Float {
		e := bigExpm1(newF().Add(x, x))
		return e.Quo(e, newF().Add(e, bf(2)))
	}, math.Tanh, -25, 25, 1.5},
	{Sinh, gomath.SinhF64, func(x *big.Float) *big.Float {
		e, f := bigExpm1(x), bigExpm1(newF().Neg(x))
		return e.Sub(e, f).Quo(e, bf(2))
	}, math.Sinh, -712, 712, 1.5},
	{Cosh, gomath.CoshF64, func(x *big.Float) *big.Float {
		e, f := bigExp(x), bigExp(newF().Neg(x))
		return e.Add(e, f).Quo(e, bf(2))
	}, math.Cosh, -712, 712, 1.5},
	{Log, gomath.LogF64, bigLogPos, math.Log, 0, 4, 1},
	{Log2, gomath.Log2F64, func(x *big.Float) *big.Float { return newF().Quo(bigLogPos(x), bigLn2()) }, math.Log2, 0, 4, 1},
	{Log10, gomath.Log10F64, func(x *big.Float) *big.Float { return newF().Quo(bigLogPos(x), bigLogPos(bf(10))) }, math.Log10, 0, 4, 1},
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
			for len(xs) < n {
				switch len(xs) % 4 {
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
				case math.IsNaN(x) || math.IsInf(x, 0) || x == 0 || math.Abs(x) > 2000 && (c.fn == Exp || c.fn == Exp2 || c.fn == Expm1 || c.fn == Sinh || c.fn == Cosh || c.fn == Tanh) || x < 0 && (c.fn == Log || c.fn == Log2 || c.fn == Log10):
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
