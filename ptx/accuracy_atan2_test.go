package ptx

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/ptx/gomath"
)

// atan2Cases returns (y, x) pairs: the special values crossed, then random pairs of
// every magnitude, of near ratios and of ratios near 1.
func atan2Cases(r *rand.Rand, n int, f32 bool) [][2]float64 {
	sp := []float64{0, math.Copysign(0, -1), 1, -1, 2, -3, 0.5, math.Inf(1), math.Inf(-1), math.NaN(),
		math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 0x1p-1022, 1e300, 1e-300}
	if f32 {
		sp = append(sp, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0x1p-126)
	}
	var ps [][2]float64
	for _, y := range sp {
		for _, x := range sp {
			ps = append(ps, [2]float64{y, x})
		}
	}
	for len(ps) < n {
		var y, x float64
		switch r.IntN(3) {
		case 0:
			y, x = r.NormFloat64(), r.NormFloat64()
		case 1:
			y = math.Float64frombits(r.Uint64())
			x = math.Float64frombits(r.Uint64())
			if f32 {
				y = float64(math.Float32frombits(r.Uint32()))
				x = float64(math.Float32frombits(r.Uint32()))
			}
		default:
			x = r.NormFloat64() * math.Ldexp(1, r.IntN(40)-20)
			y = x * (1 + r.NormFloat64()*0.1)
			if r.IntN(2) == 0 {
				y = -y
			}
		}
		ps = append(ps, [2]float64{y, x})
	}
	return ps
}

func TestAtan2F32(t *testing.T) {
	n := 200000
	if *long {
		n = 20000000
	}
	var st errStat
	for _, p := range atan2Cases(rand.New(rand.NewPCG(3, 32)), n, true) {
		y, x := float32(p[0]), float32(p[1])
		got := gomath.Atan2F32(y, x)
		want := math.Atan2(float64(y), float64(x))
		e := ulp32(got, want)
		if e > st.max || st.worst == nil {
			st.add(e, float64(y), float64(x))
		}
	}
	t.Logf("Atan2  f32 max %.3f ulp at (y, x)=%v", st.max, st.worst)
	if st.max > 1 {
		t.Errorf("atan2: max error %.3f ulp at %v", st.max, st.worst)
	}
}

func TestAtan2F64(t *testing.T) {
	n := 10000
	if *long {
		n = 1000000
	}
	var st errStat
	for _, p := range atan2Cases(rand.New(rand.NewPCG(3, 64)), n, false) {
		y, x := p[0], p[1]
		got := gomath.Atan2F64(y, x)
		var e float64
		if y == 0 || x == 0 || math.IsInf(y, 0) || math.IsInf(x, 0) || y != y || x != x {
			want := math.Atan2(y, x)
			if math.Float64bits(got) != math.Float64bits(want) && !(got != got && want != want) {
				e = math.Inf(1)
			}
		} else {
			e = ulp64(got, bigAtan2(y, x))
		}
		if e > st.max || st.worst == nil {
			st.add(e, y, x)
		}
	}
	t.Logf("Atan2  f64 max %.3f ulp at (y, x)=%v", st.max, st.worst)
	if st.max > 1 {
		t.Errorf("atan2: max error %.3f ulp at %v", st.max, st.worst)
	}
}
