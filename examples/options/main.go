// Command options prices a European and an Asian call option by Monte Carlo on the
// default device (a CUDA GPU if there is one, else the CPU backend; GPU_BACKEND=cpu|cuda
// forces one), and checks the estimates against the closed-form prices:
//
//	go run ./examples/options                       # 10^8 paths, Asian on 64 dates
//	go run ./examples/options -paths 200000 -check  # small, also against plain Go
//
// The work is package montecarlo's: standard normals from the library's generator
// (gpu.RandNInto), payoffs as fused expressions evaluated inside the reductions
// (gpu.MapReduce), Brownian paths by a cumulative sum (gpu.AccumulateInto). The
// European estimate must be within 4.5 standard errors of Black-Scholes, and the
// geometric-average Asian one within 4.5 of its closed form (Kemna & Vorst): a
// check that fails by chance about once in 150,000 runs. -check also replays the
// same normals through plain Go (float64) and compares the estimates (keep paths
// small: the normals are copied to the host).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/internal/extest"
	"github.com/go-gpu/gpu/examples/options/montecarlo"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

type config struct {
	m            montecarlo.Market
	paths, steps int
	batch        int
	seed         uint64
	check        bool
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("options", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c config
	c.m = montecarlo.Example
	fs.IntVar(&c.paths, "paths", 100_000_000, "simulated paths of each option")
	fs.IntVar(&c.steps, "steps", 64, "dates of the Asian option's average (the last at maturity)")
	fs.IntVar(&c.batch, "batch", 1<<24, "normals drawn per batch (the memory used is a few times this)")
	fs.Float64Var(&c.m.S0, "s0", c.m.S0, "spot price")
	fs.Float64Var(&c.m.K, "k", c.m.K, "strike")
	fs.Float64Var(&c.m.R, "r", c.m.R, "risk-free rate per year")
	fs.Float64Var(&c.m.Sigma, "sigma", c.m.Sigma, "volatility")
	fs.Float64Var(&c.m.T, "t", c.m.T, "maturity in years")
	fs.Uint64Var(&c.seed, "seed", 1, "generator seed")
	fs.BoolVar(&c.check, "check", false, "also compare with plain Go on the same normals (slow for many paths)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := price(ctx, stdout, c); err != nil {
		fmt.Fprintln(stderr, "options:", err)
		return 1
	}
	return 0
}

func price(ctx context.Context, w io.Writer, c config) error {
	if c.steps < 1 || c.batch < c.steps {
		return fmt.Errorf("%d dates with %d normals per batch: want at least 1 date and a batch of at least as many normals: %w", c.steps, c.batch, gpu.ErrInvalidValue)
	}
	dev, err := gpu.Open()
	if err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	m := c.m
	fmt.Fprintf(w, "options: %d paths on %v; S0 %g, K %g, r %g, sigma %g, T %g\n", c.paths, dev, m.S0, m.K, m.R, m.Sigma, m.T)
	asianBatch := c.batch / c.steps

	// Warm-up: compile and load the kernels.
	if _, err := montecarlo.European(ctx, s, gpu.NewGenerator(c.seed+1), m, 1000, 1000); err != nil {
		return err
	}
	if _, err := montecarlo.Asian(ctx, s, gpu.NewGenerator(c.seed+1), m, 1000, c.steps, 1000); err != nil {
		return err
	}

	g := gpu.NewGenerator(c.seed)
	t0 := time.Now()
	eu, err := montecarlo.European(ctx, s, g, m, c.paths, c.batch)
	if err != nil {
		return err
	}
	el := time.Since(t0)
	bs := montecarlo.BlackScholesCall(m)
	fmt.Fprintf(w, "European call: %.5f ± %.5f; Black-Scholes %.5f (%+.2f standard errors); %v, %.3g paths/s\n",
		eu.Price, eu.StdErr, bs, (eu.Price-bs)/eu.StdErr, el.Round(time.Microsecond), float64(c.paths)/el.Seconds())
	_, asianOffset := g.State()
	t0 = time.Now()
	as, err := montecarlo.Asian(ctx, s, g, m, c.paths, c.steps, asianBatch)
	if err != nil {
		return err
	}
	el = time.Since(t0)
	geo := montecarlo.GeometricAsianCall(m, c.steps)
	fmt.Fprintf(w, "Asian call on %d dates: arithmetic %.5f ± %.5f, with the geometric control variate %.5f ± %.6f; %v, %.3g path-dates/s\n",
		c.steps, as.Arithmetic.Price, as.Arithmetic.StdErr, as.ControlVariate.Price, as.ControlVariate.StdErr,
		el.Round(time.Microsecond), float64(c.paths)*float64(c.steps)/el.Seconds())
	fmt.Fprintf(w, "  geometric average: %.5f ± %.5f; closed form %.5f (%+.2f standard errors)\n",
		as.Geometric.Price, as.Geometric.StdErr, geo, (as.Geometric.Price-geo)/as.Geometric.StdErr)
	if math.Abs(eu.Price-bs) > 4.5*eu.StdErr || math.Abs(as.Geometric.Price-geo) > 4.5*as.Geometric.StdErr {
		return errors.New("check failed: an estimate is more than 4.5 standard errors from the exact price")
	}
	if !c.check {
		fmt.Fprintln(w, "check: within 4.5 standard errors of the closed forms")
		return nil
	}
	z, err := montecarlo.Normals(ctx, s, c.seed, 0, c.paths, 0, c.batch)
	if err != nil {
		return err
	}
	t0 = time.Now()
	eu0 := montecarlo.ReferenceEuropean(m, z)
	z, err = montecarlo.Normals(ctx, s, c.seed, asianOffset, c.paths, c.steps, asianBatch)
	if err != nil {
		return err
	}
	as0 := montecarlo.ReferenceAsian(m, z, c.steps)
	fmt.Fprintf(w, "plain Go (float64, one goroutine) on the same normals: European %.5f, Asian %.5f / %.5f / %.5f; %v\n",
		eu0.Price, as0.Arithmetic.Price, as0.ControlVariate.Price, as0.Geometric.Price, time.Since(t0).Round(time.Microsecond))
	for _, p := range [][2]float64{{eu.Price, eu0.Price}, {as.Arithmetic.Price, as0.Arithmetic.Price},
		{as.Geometric.Price, as0.Geometric.Price}, {as.ControlVariate.Price, as0.ControlVariate.Price}} {
		if !extest.Close(p[0], p[1], 1e-4) {
			return fmt.Errorf("check failed: %v, plain Go %v", p[0], p[1])
		}
	}
	fmt.Fprintln(w, "check: ok")
	return nil
}
