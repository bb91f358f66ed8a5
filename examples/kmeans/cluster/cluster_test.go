package cluster

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/examples/internal/extest"
)

var bg = context.Background()

// blobs returns n points of d dimensions around k random centres in [0, 20)^d at
// least 8 apart (so that no point is near a tie between the nearest centroids of a
// run started at one point of each blob), with noise of standard deviation 0.5, and
// one point of each blob as the initial centroids.
func blobs(n, d, k int) (x, c0 []float32) {
	centres := make([]float64, k*d)
	for j := 0; j < k; {
		for q := range d {
			centres[j*d+q] = 20 * rand.Float64()
		}
		ok := true
		for j2 := range j {
			s := 0.0
			for q := range d {
				v := centres[j*d+q] - centres[j2*d+q]
				s += v * v
			}
			ok = ok && s > 64
		}
		if ok {
			j++
		}
	}
	x = make([]float32, n*d)
	c0 = make([]float32, k*d)
	for i := range n {
		j := i % k
		for q := range d {
			x[i*d+q] = float32(centres[j*d+q] + 0.5*rand.NormFloat64())
		}
		if i < k {
			copy(c0[j*d:(j+1)*d], x[i*d:(i+1)*d])
		}
	}
	return x, c0
}

// TestRunMatchesReference runs k-means on well-separated random blobs on every device
// and checks the labels, counts, centroids and inertia against Reference from the same
// initial centroids, and that the inputs are unchanged.
func TestRunMatchesReference(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		const n, d, k, iters = 3000, 16, 8, 6
		xh, c0h := blobs(n, d, k)
		x, err := gpu.FromSlice(s, xh, n, d)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		c0, err := gpu.FromSlice(s, c0h, k, d)
		if err != nil {
			t.Fatal(err)
		}
		defer c0.Free()
		c0f := make([]float64, len(c0h))
		for i, v := range c0h {
			c0f[i] = float64(v)
		}
		wantC, wantL, wantN, wantI := Reference(xh, d, c0f, iters)

		res, err := Run(bg, s, x, c0, iters)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Free()
		labels, err := res.Labels.ToSlice(bg)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(labels, wantL) {
			bad := 0
			for i := range labels {
				if labels[i] != wantL[i] {
					bad++
				}
			}
			t.Errorf("%d of %d labels differ from the reference", bad, n)
		}
		if !slices.Equal(res.Counts, wantN) {
			t.Errorf("counts %v, want %v", res.Counts, wantN)
		}
		cent, err := res.Centroids.ToSlice(bg)
		if err != nil {
			t.Fatal(err)
		}
		if e, i, err := extest.MaxRelErr(cent, wantC, 1); err != nil || e > 1e-4 {
			t.Errorf("centroids: relative error %g at %d (%v): %v, want %v", e, i, err, cent[i], wantC[i])
		}
		if !extest.Close(res.Inertia, wantI, 1e-3) {
			t.Errorf("inertia %v, want %v", res.Inertia, wantI)
		}
		if got, _ := x.ToSlice(bg); !slices.Equal(got, xh) {
			t.Errorf("Run changed the points")
		}
		if got, _ := c0.ToSlice(bg); !slices.Equal(got, c0h) {
			t.Errorf("Run changed the initial centroids")
		}
	})
}

// TestInitAndBlobs checks that Init picks k distinct points of x, and Blobs' shape and
// range.
func TestInitAndBlobs(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		const n, d, k = 2000, 5, 40
		seed := rand.Uint64()
		t.Logf("seed %d", seed)
		g := gpu.NewGenerator(seed)
		x, err := Blobs(s, g, n, d, 7, 20, 0.5)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		if !slices.Equal(x.Shape(), []int{n, d}) {
			t.Fatalf("Blobs shape %v", x.Shape())
		}
		xh, err := x.ToSlice(bg)
		if err != nil {
			t.Fatal(err)
		}
		for i, v := range xh {
			if !(v > -6 && v < 26) { // 12 standard deviations
				t.Fatalf("Blobs value %d is %v", i, v)
			}
		}
		c0, err := Init(s, g, x, k)
		if err != nil {
			t.Fatal(err)
		}
		defer c0.Free()
		c0h, err := c0.ToSlice(bg)
		if err != nil {
			t.Fatal(err)
		}
		for j := range k {
			row := c0h[j*d : (j+1)*d]
			found := false
			for i := range n {
				if slices.Equal(row, xh[i*d:(i+1)*d]) {
					found = true
					break
				}
			}
			if !found {
				t.Fatalf("initial centroid %d is not a point of x", j)
			}
			for j2 := range j {
				if slices.Equal(row, c0h[j2*d:(j2+1)*d]) {
					t.Fatalf("initial centroids %d and %d are the same point", j2, j)
				}
			}
		}
	})
}

func TestBadInput(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		g := gpu.NewGenerator(1)
		x, err := Blobs(s, g, 10, 3, 2, 1, 0.1)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		if _, err := Init(s, g, x, 11); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Init of 11 clusters of 10 points: %v", err)
		}
		c, err := gpu.Zeros[float32](s, 2, 4)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Free()
		if _, err := Run(bg, s, x, c, 1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Run with centroids of 4 dimensions for points of 3: %v", err)
		}
		if _, err := Fit(bg, s, g, x, 2, -1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Fit with -1 iterations: %v", err)
		}
		if _, err := Blobs(s, g, 0, 3, 2, 1, 1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Blobs of 0 points: %v", err)
		}
	})
}

// An empty cluster keeps its centroid: a centroid far from every point gets none.
func TestEmptyClusterKeepsCentroid(t *testing.T) {
	extest.ForDevices(t, func(t *testing.T, s *gpu.Stream) {
		x, err := gpu.FromSlice(s, []float32{0, 0, 1, 0, 0, 1, 10, 10, 11, 10}, 5, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer x.Free()
		c0, err := gpu.FromSlice(s, []float32{0, 0, 10, 10, 1e6, 1e6}, 3, 2)
		if err != nil {
			t.Fatal(err)
		}
		defer c0.Free()
		res, err := Run(bg, s, x, c0, 3)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Free()
		cent, _ := res.Centroids.ToSlice(bg)
		want := []float32{1.0 / 3, 1.0 / 3, 10.5, 10, 1e6, 1e6}
		if e, i, err := extest.MaxRelErr(cent, want, 1); err != nil || e > 1e-6 {
			t.Errorf("centroids %v, want %v (at %d)", cent, want, i)
		}
		if !slices.Equal(res.Counts, []int64{3, 2, 0}) {
			t.Errorf("counts %v", res.Counts)
		}
		if want := 4.0/9*2 + 1.0/9*4 + 0.25*2; !extest.Close(res.Inertia, want, 1e-5) {
			t.Errorf("inertia %v, want %v", res.Inertia, want)
		}
	})
}
