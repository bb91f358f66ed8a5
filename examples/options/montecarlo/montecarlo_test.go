package montecarlo

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/internal/extest"
)

var bg = context.Background()

func replay(t *testing.T, s *gpu.Stream, seed, offset uint64, paths, steps, batch int) []float32 {
	t.Helper()
	z, err := Normals(bg, s, seed, offset, paths, steps, batch)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

func closeEst(got, want Estimate) bool {
	return extest.Close(got.Price, want.Price, 2e-5) && extest.Close(got.StdErr, want.StdErr, 2e-4)
}

// within reports whether est is within 4.5 standard errors of exact.
func within(est Estimate, exact float64) bool {
	return math.Abs(est.Price-exact) <= 4.5*est.StdErr
}

// TestEuropean checks the estimate against plain Go on the same normals and against
// the Black-Scholes price, in a market drawn at random.
func TestEuropean(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		seed := rand.Uint64()
		m := Market{S0: 50 + 100*rand.Float64(), R: 0.1 * rand.Float64(), Sigma: 0.1 + 0.4*rand.Float64(), T: 0.25 + 2*rand.Float64()}
		// The strike lies within two standard deviations of the terminal price's log
		// (z in [-2, 2]), so at least Φ(-2) ≈ 2.3% of the paths end in the money: a
		// strike drawn apart from the spot could leave no path in the money, a zero
		// standard error, and a price no bound on the error can compare.
		z := -2 + 4*rand.Float64()
		m.K = m.S0 * math.Exp((m.R-m.Sigma*m.Sigma/2)*m.T+z*m.Sigma*math.Sqrt(m.T))
		t.Logf("seed %d, %+v", seed, m)
		const paths, batch = 100_003, 30_000 // a short last batch
		g := gpu.NewGenerator(seed)
		est, err := European(bg, s, g, m, paths, batch)
		if err != nil {
			t.Fatal(err)
		}
		want := ReferenceEuropean(m, replay(t, s, seed, 0, paths, 0, batch))
		if !closeEst(est, want) {
			t.Errorf("European %+v, plain Go %+v", est, want)
		}
		if bs := BlackScholesCall(m); !within(est, bs) {
			t.Errorf("European %+v, Black-Scholes %v", est, bs)
		}
		if _, off := g.State(); off == 0 {
			t.Errorf("the generator did not advance")
		}
	})
}

// TestAsian checks the three estimates against plain Go on the same normals, the
// geometric one against its closed form, and the control-variate estimate against the
// plain one.
func TestAsian(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		seed := rand.Uint64()
		m := Example
		m.Sigma = 0.1 + 0.4*rand.Float64()
		t.Logf("seed %d, %+v", seed, m)
		const paths, steps, batch = 20_001, 12, 7_000
		res, err := Asian(bg, s, gpu.NewGenerator(seed), m, paths, steps, batch)
		if err != nil {
			t.Fatal(err)
		}
		want := ReferenceAsian(m, replay(t, s, seed, 0, paths, steps, batch), steps)
		for _, c := range []struct {
			name      string
			got, want Estimate
		}{{"arithmetic", res.Arithmetic, want.Arithmetic}, {"geometric", res.Geometric, want.Geometric}, {"control variate", res.ControlVariate, want.ControlVariate}} {
			if !closeEst(c.got, c.want) {
				t.Errorf("%s: %+v, plain Go %+v", c.name, c.got, c.want)
			}
		}
		if exact := GeometricAsianCall(m, steps); !within(res.Geometric, exact) {
			t.Errorf("geometric %+v, closed form %v", res.Geometric, exact)
		}
		a, cv := res.Arithmetic, res.ControlVariate
		if math.Abs(a.Price-cv.Price) > 4.5*a.StdErr || cv.StdErr > a.StdErr/3 {
			t.Errorf("control variate %+v beside the plain estimate %+v", cv, a)
		}
		// The arithmetic average is at least the geometric one.
		if a.Price < res.Geometric.Price {
			t.Errorf("arithmetic %v below geometric %v", a.Price, res.Geometric.Price)
		}
	})
}

// The closed forms against published values: Hull's Black-Scholes example (S0 42, K
// 40, r 10%, σ 20%, T 0.5: 4.76), and the geometric average of one date, which is the
// European call.
func TestClosedForms(t *testing.T) {
	if got := BlackScholesCall(Market{S0: 42, K: 40, R: 0.1, Sigma: 0.2, T: 0.5}); math.Abs(got-4.7594) > 1e-4 {
		t.Errorf("Black-Scholes %v, want 4.7594", got)
	}
	if got := BlackScholesCall(Example); math.Abs(got-10.4506) > 1e-4 {
		t.Errorf("Black-Scholes of Example %v, want 10.4506", got)
	}
	m := Market{S0: 90, K: 100, R: 0.03, Sigma: 0.3, T: 2}
	if a, b := GeometricAsianCall(m, 1), BlackScholesCall(m); math.Abs(a-b) > 1e-12 {
		t.Errorf("geometric Asian of one date %v, European %v", a, b)
	}
	// Continuous monitoring (M -> infinity): volatility σ/√3, (r - σ²/2)/2 drift.
	if a, b := GeometricAsianCall(m, 1_000_000), geometricContinuous(m); math.Abs(a-b) > 1e-5 {
		t.Errorf("geometric Asian of 10^6 dates %v, continuous %v", a, b)
	}
}

// geometricContinuous is the continuously monitored geometric Asian call: a European
// call with volatility σ/√3 and dividend yield (r + σ²/6)/2.
func geometricContinuous(m Market) float64 {
	sa := m.Sigma / math.Sqrt(3)
	q := (m.R + m.Sigma*m.Sigma/6) / 2
	d1 := (math.Log(m.S0/m.K) + (m.R-q+sa*sa/2)*m.T) / (sa * math.Sqrt(m.T))
	d2 := d1 - sa*math.Sqrt(m.T)
	return m.S0*math.Exp(-q*m.T)*normCDF(d1) - m.K*math.Exp(-m.R*m.T)*normCDF(d2)
}

func TestBadInput(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		g := gpu.NewGenerator(1)
		for _, m := range []Market{{S0: -1, K: 1, Sigma: 1, T: 1}, {S0: 1, K: 1, Sigma: 0, T: 1}, {S0: 1, K: 1, Sigma: 1, T: math.Inf(1)}, {S0: 1, K: 1, Sigma: 1, T: 1, R: math.NaN()}} {
			if _, err := European(bg, s, g, m, 10, 10); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("European in %+v: %v", m, err)
			}
			if _, err := Asian(bg, s, g, m, 10, 2, 10); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("Asian in %+v: %v", m, err)
			}
		}
		if _, err := European(bg, s, g, Example, 1, 10); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("European of one path: %v", err)
		}
		if _, err := Asian(bg, s, g, Example, 10, 0, 10); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Asian of no dates: %v", err)
		}
	})
}
