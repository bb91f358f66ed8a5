// Command kmeans clusters random points with k-means on the default device (a CUDA GPU
// if there is one, else the CPU backend; GPU_BACKEND=cpu|cuda forces one):
//
//	go run ./examples/kmeans                    # 10^7 points of 16 dimensions, k = 64, 20 iterations
//	go run ./examples/kmeans -n 20000 -check    # small, checked against plain Go
//
// The points are Gaussian blobs drawn on the device (-blobs centres); the work is
// package cluster's: distances through a matrix product, assignment by FindMin,
// centroids through AddAt and Bincount. It prints the time of a fit (initial centroids
// and the iterations, after an untimed warm-up that compiles the kernels), the inertia
// and the cluster sizes; -check reruns the fit in plain Go (float64) from the same
// initial centroids and compares labels, centroids and inertia (its cost grows as
// n*k*d*iters: keep n small).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/internal/extest"
	"github.com/go-gpu/gpu/examples/kmeans/cluster"
)

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("kmeans", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 10_000_000, "number of points")
	d := fs.Int("d", 16, "dimensions")
	k := fs.Int("k", 64, "clusters")
	iters := fs.Int("iters", 20, "iterations")
	blobs := fs.Int("blobs", 64, "centres the points are drawn around")
	seed := fs.Uint64("seed", 1, "generator seed")
	check := fs.Bool("check", false, "compare with the plain-Go reference (slow for large n)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if err := kmeans(ctx, stdout, *n, *d, *k, *iters, *blobs, *seed, *check); err != nil {
		fmt.Fprintln(stderr, "kmeans:", err)
		return 1
	}
	return 0
}

func kmeans(ctx context.Context, w io.Writer, n, d, k, iters, blobs int, seed uint64, check bool) error {
	dev, err := gpu.Open()
	if err != nil {
		return err
	}
	s, err := dev.NewStream()
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(w, "kmeans: %d points of %d dimensions, k = %d, %d iterations on %v\n", n, d, k, iters, dev)
	g := gpu.NewGenerator(seed)
	t0 := time.Now()
	x, err := cluster.Blobs(s, g, n, d, blobs, 20, 1)
	if err != nil {
		return err
	}
	defer x.Free()
	if err := s.Synchronize(ctx); err != nil {
		return err
	}
	fmt.Fprintf(w, "data:  %v (%d Gaussian blobs)\n", time.Since(t0).Round(time.Microsecond), blobs)

	// Warm-up: the same work with one iteration compiles and loads every kernel.
	warm, err := cluster.Fit(ctx, s, gpu.NewGenerator(seed+1), x, k, 1)
	if err != nil {
		return err
	}
	warm.Free()

	state, offset := g.State()
	t0 = time.Now()
	res, err := cluster.Fit(ctx, s, g, x, k, iters)
	if err != nil {
		return err
	}
	defer res.Free()
	el := time.Since(t0)
	fmt.Fprintf(w, "fit:   %v (initial centroids and %d iterations; %.3g point-iterations/s)\n",
		el.Round(time.Microsecond), iters, float64(n)*float64(max(iters, 1))/el.Seconds())
	fmt.Fprintf(w, "inertia %.6g; cluster sizes %d to %d\n", res.Inertia, slices.Min(res.Counts), slices.Max(res.Counts))
	if !check {
		return nil
	}

	// The reference from the same initial centroids: replay the generator.
	if err := g.SetState(state, offset); err != nil {
		return err
	}
	c0, err := cluster.Init(s, g, x, k)
	if err != nil {
		return err
	}
	defer c0.Free()
	xh, err := x.ToSlice(ctx)
	if err != nil {
		return err
	}
	c0h, err := c0.ToSlice(ctx)
	if err != nil {
		return err
	}
	c0f := make([]float64, len(c0h))
	for i, v := range c0h {
		c0f[i] = float64(v)
	}
	t0 = time.Now()
	wantC, wantL, _, wantI := cluster.Reference(xh, d, c0f, iters)
	fmt.Fprintf(w, "plain Go (float64, one goroutine): %v\n", time.Since(t0).Round(time.Microsecond))
	labels, err := res.Labels.ToSlice(ctx)
	if err != nil {
		return err
	}
	cent, err := res.Centroids.ToSlice(ctx)
	if err != nil {
		return err
	}
	differ := 0
	for i := range labels {
		if labels[i] != wantL[i] {
			differ++
		}
	}
	e, _, err := extest.MaxRelErr(cent, wantC, 1)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "check: %d labels differ; centroids within %.2g; inertia %.6g (plain Go %.6g)\n", differ, e, res.Inertia, wantI)
	// Each label must be a nearest centroid of the result's centroids, up to float32's
	// rounding of the expanded distance. A point near a tie may go to the other
	// centroid in float32 than in float64, and move the centroids a little from then
	// on: a few such labels are allowed (at most one in a thousand), not a worse fit.
	// Each centroid may differ by the share of the points whose labels differ at the
	// end (|x - c| / the cluster's size, for the cluster they are in and the one they
	// left), and by 1e-2 besides: a point may also move in an earlier iteration only,
	// the labels then agreeing at the end while the centroids still differ by its share
	// (seen on the H200: 0 labels differ, centroids within 0.0019).
	if far := notNearest(xh, cent, labels, d); far > 0 {
		return fmt.Errorf("check failed: %d points are not assigned to a nearest centroid", far)
	}
	if c := centroidsOff(xh, cent, wantC, labels, wantL, res.Counts, d); c >= 0 {
		return fmt.Errorf("check failed: centroid %d differs from the plain-Go reference beyond the share of the moved points", c)
	}
	if differ*1000 > n || !extest.Close(res.Inertia, wantI, 1e-3) {
		return errors.New("check failed: the result differs from the plain-Go reference")
	}
	fmt.Fprintln(w, "check: ok")
	return nil
}

// centroidsOff returns the first centroid of cent (k, d) that differs from want's by more
// than 1e-2 (relative, floor 1) plus the share of the points whose labels differ
// (got against wantL): max |x - want centroid| / the cluster's size (counts, at least 1)
// for each such point, in the cluster it is in and the one it left; -1 if none.
func centroidsOff(x, cent []float32, want []float64, got, wantL, counts []int64, d int) int {
	k := len(cent) / d
	share := make([]float64, k)
	for i := range got {
		if got[i] == wantL[i] {
			continue
		}
		for _, c := range []int64{got[i], wantL[i]} {
			far := 0.0
			for j := range d {
				far = max(far, math.Abs(float64(x[i*d+j])-want[int(c)*d+j]))
			}
			share[c] += far / float64(max(counts[c], 1))
		}
	}
	for c := range k {
		for j := range d {
			w := want[c*d+j]
			if math.Abs(float64(cent[c*d+j])-w) > 1e-2*math.Max(1, math.Abs(w))+share[c] {
				return c
			}
		}
	}
	return -1
}

// notNearest returns how many points x (n x d) are labelled with a centroid of cent
// (k x d) farther than the nearest by more than float32 rounding could make it.
func notNearest(x, cent []float32, labels []int64, d int) int {
	k := len(cent) / d
	bad := 0
	for i := range labels {
		p := x[i*d : (i+1)*d]
		best, xx := math.Inf(1), 0.0
		for _, v := range p {
			xx += float64(v) * float64(v)
		}
		var dl, cl float64
		for j := range k {
			s, cc := 0.0, 0.0
			for q, v := range p {
				c := float64(cent[j*d+q])
				s += (float64(v) - c) * (float64(v) - c)
				cc += c * c
			}
			best = min(best, s)
			if int64(j) == labels[i] {
				dl, cl = s, cc
			}
		}
		if dl-best > 1e-5*(xx+cl) {
			bad++
		}
	}
	return bad
}
