// Package montecarlo is the work of the options example: Monte Carlo prices of
// European and Asian call options under Black-Scholes dynamics (geometric Brownian
// motion), with the library's random numbers, fused expressions and reductions, and
// the closed-form prices the estimates are checked against.
//
// European call: S_T = S0 exp((r - σ²/2)T + σ√T Z), price e^{-rT} E[max(S_T - K, 0)].
// Each batch of paths is one gpu.RandNInto of standard normals and two gpu.MapReduce
// calls (the payoff and its square, summed in float64) that evaluate the payoff
// expression as they reduce, with no intermediate array.
//
// Asian call on the arithmetic average of S at M equally spaced dates t_j = jT/M: a
// batch of P paths is one RandNInto of a (P, M) array, a gpu.AccumulateInto (cumulative
// sums of the normals along the dates: the Brownian paths), and two row reductions: the
// sum over the dates of S_j = exp(ln S0 + (r - σ²/2) t_j + σ√(T/M) W_j) (arithmetic
// average) and of W_j (geometric average). The payoffs of both averages, their squares
// and their product are then summed over the paths. The geometric-average option has
// a closed form (Kemna & Vorst 1990, for discrete monitoring), which is the check of
// the simulation, and the control variate of the arithmetic one (Glasserman, "Monte
// Carlo Methods in Financial Engineering", 2004, section 4.1).
//
// The values are float32 on the device (as the peers' PyTorch and CuPy versions), the
// sums float64. Batch b's normals are the b-th RandNInto call on the generator, of the
// batch's shape, so that a test can replay them.
package montecarlo

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/go-gpu/gpu"
)

// Market is a call option and the Black-Scholes model it is priced in.
type Market struct {
	S0    float64 // spot price
	K     float64 // strike
	R     float64 // risk-free rate, continuously compounded, per year
	Sigma float64 // volatility, per square root of a year
	T     float64 // maturity, in years
}

// Example is the market of the example and its benchmark: an at-the-money one-year
// call at 20% volatility and a 5% rate (Black-Scholes price 10.4506).
var Example = Market{S0: 100, K: 100, R: 0.05, Sigma: 0.2, T: 1}

func (m Market) check() error {
	if !(m.S0 > 0 && m.K > 0 && m.Sigma > 0 && m.T > 0) || math.IsInf(m.S0+m.K+m.Sigma+m.T+m.R, 0) || math.IsNaN(m.R) {
		return fmt.Errorf("montecarlo: market %+v: S0, K, Sigma and T must be positive and finite: %w", m, gpu.ErrInvalidValue)
	}
	return nil
}

// Estimate is a Monte Carlo price and its standard error.
type Estimate struct {
	Price, StdErr float64
}

// estimate returns the discounted mean of n payoffs whose sum is s and sum of squares
// ss.
func estimate(m Market, n, s, ss float64) Estimate {
	df := math.Exp(-m.R * m.T)
	mean := s / n
	v := max(ss/n-mean*mean, 0) * n / max(n-1, 1)
	return Estimate{Price: df * mean, StdErr: df * math.Sqrt(v/n)}
}

// batches splits paths into batches of at most batch paths: their sizes.
func batches(paths, batch int) []int {
	var out []int
	for paths > 0 {
		p := min(paths, batch)
		out = append(out, p)
		paths -= p
	}
	return out
}

// European prices the European call by simulating paths terminal prices, batch at a
// time (at most batch paths per RandNInto), and waits for the result under ctx.
func European(ctx context.Context, s *gpu.Stream, g *gpu.Generator, m Market, paths, batch int) (est Estimate, err error) {
	if err := m.check(); err != nil {
		return est, err
	}
	if paths < 2 || batch < 1 {
		return est, fmt.Errorf("montecarlo: %d paths in batches of %d: %w", paths, batch, gpu.ErrInvalidValue)
	}
	bs := batches(paths, batch)
	z, err := gpu.Empty[float32](s, bs[0])
	if err != nil {
		return est, err
	}
	defer func() { err = errors.Join(err, z.Free()) }()
	sums, err := gpu.Empty[float64](s, len(bs), 2) // per batch: sum and sum of squares
	if err != nil {
		return est, err
	}
	defer func() { err = errors.Join(err, sums.Free()) }()
	const payoff = "maximum(s0*exp(mu + vol*z) - k, 0)"
	vars := gpu.Vars{"s0": m.S0, "mu": (m.R - m.Sigma*m.Sigma/2) * m.T, "vol": m.Sigma * math.Sqrt(m.T), "k": m.K}
	for b, p := range bs {
		zb, err := z.Slice(gpu.R(0, p))
		if err != nil {
			return est, err
		}
		if err := gpu.RandNInto(s, g, zb); err != nil {
			return est, err
		}
		vars["z"] = zb
		for j, src := range []string{payoff, "square(" + payoff + ")"} {
			out, err := scalarAt(sums, b, j)
			if err != nil {
				return est, err
			}
			if err := gpu.MapReduceInto(s, out, src, vars, gpu.OpSum); err != nil {
				return est, err
			}
		}
	}
	tot, err := totals(ctx, s, sums)
	if err != nil {
		return est, err
	}
	return estimate(m, float64(paths), tot[0], tot[1]), nil
}

// AsianResult holds the estimates of the Asian calls of one simulation.
type AsianResult struct {
	// Arithmetic is the plain estimate of the call on the arithmetic average.
	Arithmetic Estimate
	// Geometric is the estimate of the call on the geometric average, whose exact
	// price is GeometricAsianCall.
	Geometric Estimate
	// ControlVariate is the arithmetic call's estimate with the geometric call as its
	// control variate: Arithmetic - β(Geometric - exact), β the sample regression
	// coefficient of the two payoffs.
	ControlVariate Estimate
}

// Asian prices the calls on the arithmetic and geometric averages of the price at
// steps equally spaced dates (the last at maturity), simulating paths paths in
// batches of at most batch paths, and waits for the result under ctx.
func Asian(ctx context.Context, s *gpu.Stream, g *gpu.Generator, m Market, paths, steps, batch int) (res AsianResult, err error) {
	if err := m.check(); err != nil {
		return res, err
	}
	if paths < 2 || steps < 1 || batch < 1 {
		return res, fmt.Errorf("montecarlo: %d paths of %d steps in batches of %d: %w", paths, steps, batch, gpu.ErrInvalidValue)
	}
	bs := batches(paths, batch)
	var frees []*gpu.Array[float32]
	defer func() {
		for _, a := range frees {
			err = errors.Join(err, a.Free())
		}
	}()
	mk := func(shape ...int) (*gpu.Array[float32], error) {
		a, err := gpu.Empty[float32](s, shape...)
		if err == nil {
			frees = append(frees, a)
		}
		return a, err
	}
	z, err := mk(bs[0], steps)
	if err != nil {
		return res, err
	}
	w, err := mk(bs[0], steps) // the Brownian paths (in units of sqrt(dt))
	if err != nil {
		return res, err
	}
	arith, err := mk(bs[0]) // sum of S_j over the dates, per path
	if err != nil {
		return res, err
	}
	geo, err := mk(bs[0]) // sum of W_j over the dates, per path
	if err != nil {
		return res, err
	}
	// t_j / dt = 1 ... steps, a row broadcast over the paths.
	jj, err := gpu.Arange[float32](s, 1, float32(steps)+1, 1)
	if err != nil {
		return res, err
	}
	frees = append(frees, jj)
	sums, err := gpu.Empty[float64](s, len(bs), 5)
	if err != nil {
		return res, err
	}
	defer func() { err = errors.Join(err, sums.Free()) }()

	dt := m.T / float64(steps)
	mu := (m.R - m.Sigma*m.Sigma/2) * dt
	vol := m.Sigma * math.Sqrt(dt)
	vars := gpu.Vars{"lns0": math.Log(m.S0), "mu": mu, "vol": vol, "j": jj}
	pay := gpu.Vars{"k": m.K, "m": float64(steps), "lns0": math.Log(m.S0), "mu": mu * float64(steps+1) / 2, "vol": vol}
	const (
		pa = "maximum(a/m - k, 0)"
		pg = "maximum(exp(lns0 + mu + vol*g/m) - k, 0)"
	)
	for b, p := range bs {
		view := func(a *gpu.Array[float32]) (*gpu.Array[float32], error) { return a.Slice(gpu.R(0, p)) }
		zb, err := view(z)
		if err != nil {
			return res, err
		}
		wb, err := view(w)
		if err != nil {
			return res, err
		}
		ab, err := view(arith)
		if err != nil {
			return res, err
		}
		gb, err := view(geo)
		if err != nil {
			return res, err
		}
		if err := gpu.RandNInto(s, g, zb); err != nil {
			return res, err
		}
		if err := gpu.AccumulateInto(s, wb, zb, gpu.OpSum, 1); err != nil {
			return res, err
		}
		vars["w"] = wb
		if err := gpu.MapReduceInto(s, ab, "exp(lns0 + mu*j + vol*w)", vars, gpu.OpSum, gpu.Axes(1)); err != nil {
			return res, err
		}
		if err := gpu.ReduceInto(s, gb, gpu.OpSum, wb, gpu.Axes(1)); err != nil {
			return res, err
		}
		pay["a"], pay["g"] = ab, gb
		for j, src := range []string{pa, "square(" + pa + ")", pg, "square(" + pg + ")", "(" + pa + ")*(" + pg + ")"} {
			out, err := scalarAt(sums, b, j)
			if err != nil {
				return res, err
			}
			if err := gpu.MapReduceInto(s, out, src, pay, gpu.OpSum); err != nil {
				return res, err
			}
		}
	}
	tot, err := totals(ctx, s, sums)
	if err != nil {
		return res, err
	}
	n := float64(paths)
	res.Arithmetic = estimate(m, n, tot[0], tot[1])
	res.Geometric = estimate(m, n, tot[2], tot[3])
	res.ControlVariate = controlVariate(m, n, tot, GeometricAsianCall(m, steps))
	return res, nil
}

// controlVariate returns the arithmetic call's estimate with the geometric call (exact
// price exact) as control variate, from the sums of pa, pa², pg, pg², pa·pg over n
// paths.
func controlVariate(m Market, n float64, t []float64, exact float64) Estimate {
	df := math.Exp(-m.R * m.T)
	ma, mg := t[0]/n, t[2]/n
	va, vg := t[1]/n-ma*ma, t[3]/n-mg*mg
	cov := t[4]/n - ma*mg
	beta := 0.0
	if vg > 0 {
		beta = cov / vg
	}
	price := df * (ma - beta*(mg-exact/df))
	v := max(va-2*beta*cov+beta*beta*vg, 0) * n / max(n-1, 1)
	return Estimate{Price: price, StdErr: df * math.Sqrt(v/n)}
}

// scalarAt returns element (i, j) of the matrix a as a 0-d view.
func scalarAt(a *gpu.Array[float64], i, j int) (*gpu.Array[float64], error) {
	v, err := a.Slice(gpu.R(i), gpu.R(j))
	if err != nil {
		return nil, err
	}
	return v.Reshape()
}

// totals sums the per-batch sums (rows of sums) and reads them back under ctx.
func totals(ctx context.Context, s *gpu.Stream, sums *gpu.Array[float64]) ([]float64, error) {
	t, err := gpu.Sum[float64](s, sums, gpu.Axes(0))
	if err != nil {
		return nil, err
	}
	defer t.Free()
	return t.ToSlice(ctx)
}

// BlackScholesCall is the exact price of the European call (Black & Scholes 1973).
func BlackScholesCall(m Market) float64 {
	sd := m.Sigma * math.Sqrt(m.T)
	d1 := (math.Log(m.S0/m.K) + (m.R+m.Sigma*m.Sigma/2)*m.T) / sd
	return m.S0*normCDF(d1) - m.K*math.Exp(-m.R*m.T)*normCDF(d1-sd)
}

// GeometricAsianCall is the exact price of the call on the geometric average of the
// price at steps equally spaced dates jT/steps, j = 1..steps (Kemna & Vorst 1990, for
// discrete monitoring): the log of the average is normal with mean ln S0 + (r -
// σ²/2)T(M+1)/(2M) and variance σ²T(M+1)(2M+1)/(6M²).
func GeometricAsianCall(m Market, steps int) float64 {
	M := float64(steps)
	mean := math.Log(m.S0) + (m.R-m.Sigma*m.Sigma/2)*m.T*(M+1)/(2*M)
	sd := m.Sigma * math.Sqrt(m.T*(M+1)*(2*M+1)/(6*M*M))
	d1 := (mean - math.Log(m.K) + sd*sd) / sd
	return math.Exp(-m.R*m.T) * (math.Exp(mean+sd*sd/2)*normCDF(d1) - m.K*normCDF(d1-sd))
}

func normCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
