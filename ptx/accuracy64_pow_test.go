package ptx

import (
	"math"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/ptx/gomath"
)

// pow64Cases returns (x, y) pairs for float64 pow: the special values crossed with
// each other, then random pairs of the kinds the float32 test uses.
func pow64Cases(r *rand.Rand, n int) [][2]float64 {
	sp := []float64{0, math.Copysign(0, -1), 1, -1, 2, -2, 0.5, -0.5, 3, -3, math.Inf(1), math.Inf(-1),
		math.NaN(), math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, 0x1p53,
		-0x1p53, 0x1p53 + 2, 1.5, -1.5, 0x1p63, 1 + 0x1p-52, 1 - 0x1p-53, 0x1p-1022, 1e300, -1e300}
	var ps [][2]float64
	for _, x := range sp {
		for _, y := range sp {
			ps = append(ps, [2]float64{x, y})
		}
	}
	for len(ps) < n {
		var x, y float64
		switch r.IntN(5) {
		case 0: // any magnitude, moderate exponent
			x = math.Float64frombits(r.Uint64())
			y = r.NormFloat64() * 4
		case 1: // near 1, large exponent
			x = 1 + r.NormFloat64()*math.Ldexp(1, -r.IntN(50))
			y = r.NormFloat64() * math.Ldexp(1, r.IntN(60))
		case 2: // negative base, integer exponent
			x = -r.Float64() * 10
			y = float64(r.IntN(601) - 300)
		case 3: // results near overflow and underflow (subnormal results included)
			x = r.Float64()*100 + 1e-3
			y = (r.Float64()*2 - 1) * 1080 / math.Log2(x)
		default: // small bases, any exponent
			x = math.Ldexp(r.Float64(), -r.IntN(1074))
			y = r.NormFloat64()
		}
		ps = append(ps, [2]float64{x, y})
	}
	return ps
}

// TestPow64 checks float64 pow against math/big on pairs over every magnitude, and
// against Go's math.Pow (C99 Annex F) on the special cases and where the result
// certainly overflows or vanishes.
func TestPow64(t *testing.T) {
	n := 20000
	if *long {
		n = 1000000
	}
	r := rand.New(rand.NewPCG(9, 64))
	var st errStat
	for _, p := range pow64Cases(r, n) {
		x, y := p[0], p[1]
		got := gomath.PowF64(x, y)
		var e float64
		finite := x != 0 && !math.IsInf(x, 0) && !math.IsNaN(x) && !math.IsInf(y, 0) && !math.IsNaN(y) && y != 0 && x != 1
		var ref = bigPowOrNil(x, y, finite)
		if ref == nil {
			want := math.Pow(x, y)
			if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
				e = math.Inf(1)
			}
		} else {
			e = ulp64(got, ref)
		}
		if e > st.max || st.worst == nil {
			st.add(e, x, y)
		}
	}
	t.Logf("Pow    f64 max %.3f ulp at (x, y)=%v", st.max, st.worst)
	if st.max > 1 {
		t.Errorf("pow: max error %.3f ulp at %v", st.max, st.worst)
	}
}

func bigPowOrNil(x, y float64, finite bool) *big.Float {
	if !finite || x < 0 && y != math.Trunc(y) {
		return nil
	}
	return bigPow(x, y)
}
