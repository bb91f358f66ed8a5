// Package cluster is the work of the kmeans example: Lloyd's k-means on an array of
// points, written with the library's operations only, so that it runs on every
// backend (the example's main and gpubench's workload/kmeans row call it).
//
// One iteration (Lloyd 1982; the distance expansion is the one scikit-learn and
// Faiss use):
//
//  1. squared distances through a matrix product: ||x||^2 - 2 x·c + ||c||^2, as
//     gpu.EvalInto of the two norms broadcast into D (n, k), then gpu.Gemm adding
//     -2 X @ C^T to it (cuBLAS on CUDA);
//  2. assignment: gpu.FindMin along the centroid axis (each point's nearest centroid
//     and its squared distance);
//  3. update: gpu.AddAt of the points into per-cluster sums (numpy.add.at) and
//     gpu.Bincount of the labels, then one gpu.EvalInto dividing the sums by the
//     counts (a cluster left empty keeps its centroid).
//
// The initial centroids are k distinct points drawn at random (Init: gpu.TopK of
// uniform keys from the generator picks k distinct indices, gpu.Take gathers them).
package cluster

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-gpu/gpu"
)

// Result is the outcome of Run.
type Result struct {
	// Centroids are the k centroids (k, d) after the last update.
	Centroids *gpu.Array[float32]
	// Labels (n,) is each point's nearest centroid among Centroids.
	Labels *gpu.Array[int64]
	// Inertia is the sum over the points of the squared distance to their nearest
	// centroid among Centroids (scikit-learn's inertia_), accumulated in float64.
	Inertia float64
	// Counts (k) is the number of points in each cluster of Labels.
	Counts []int64
}

// Free frees the result's arrays.
func (r *Result) Free() error {
	if r == nil {
		return nil
	}
	var err error
	if r.Centroids != nil {
		err = r.Centroids.Free()
	}
	if r.Labels != nil {
		err = errors.Join(err, r.Labels.Free())
	}
	return err
}

// Blobs returns n points of d dimensions (n, d) drawn around k centres: the centres
// uniform in [0, scale)^d, each point a centre chosen uniformly plus standard normal
// noise times spread. All three come from g.
func Blobs(s *gpu.Stream, g *gpu.Generator, n, d, k int, scale, spread float64) (*gpu.Array[float32], error) {
	if n < 1 || d < 1 || k < 1 {
		return nil, fmt.Errorf("cluster: Blobs of %d points, %d dimensions, %d centres: %w", n, d, k, gpu.ErrInvalidValue)
	}
	centres, err := gpu.Rand[float32](s, g, k, d)
	if err != nil {
		return nil, err
	}
	defer centres.Free()
	which, err := gpu.RandInt[int64](s, g, 0, int64(k), n)
	if err != nil {
		return nil, err
	}
	defer which.Free()
	at, err := gpu.Take(s, centres, which, gpu.OnAxis(0)) // (n, d)
	if err != nil {
		return nil, err
	}
	defer at.Free()
	noise, err := gpu.RandN[float32](s, g, n, d)
	if err != nil {
		return nil, err
	}
	if err := gpu.EvalInto(s, noise, "scale*c + spread*z", gpu.Vars{"scale": scale, "c": at, "spread": spread, "z": noise}); err != nil {
		noise.Free()
		return nil, err
	}
	return noise, nil
}

// Init returns k distinct points of x (n, d) chosen at random from g, as the initial
// centroids (k, d): the indices of the k largest of n uniform keys (gpu.TopK), which
// is a uniform sample without replacement, gathered with gpu.Take.
func Init(s *gpu.Stream, g *gpu.Generator, x *gpu.Array[float32], k int) (*gpu.Array[float32], error) {
	n, _, err := dims(x)
	if err != nil {
		return nil, err
	}
	if k < 1 || k > n {
		return nil, fmt.Errorf("cluster: %d clusters of %d points: %w", k, n, gpu.ErrInvalidValue)
	}
	keys, err := gpu.Rand[float32](s, g, n)
	if err != nil {
		return nil, err
	}
	defer keys.Free()
	vals, idx, err := gpu.TopK(s, keys, k, 0)
	if err != nil {
		return nil, err
	}
	defer vals.Free()
	defer idx.Free()
	return gpu.Take(s, x, idx, gpu.OnAxis(0))
}

// Fit is Init followed by Run.
func Fit(ctx context.Context, s *gpu.Stream, g *gpu.Generator, x *gpu.Array[float32], k, iters int) (*Result, error) {
	c0, err := Init(s, g, x, k)
	if err != nil {
		return nil, err
	}
	defer c0.Free()
	return Run(ctx, s, x, c0, iters)
}

// Run runs iters iterations of Lloyd's algorithm on the points x (n, d) from the
// centroids c0 (k, d), which it leaves unchanged, then assigns the points to the final
// centroids once more for the result's labels, counts and inertia. It waits for the
// device once, at the end (under ctx), to read the counts and the inertia.
func Run(ctx context.Context, s *gpu.Stream, x, c0 *gpu.Array[float32], iters int) (res *Result, err error) {
	n, d, err := dims(x)
	if err != nil {
		return nil, err
	}
	if c0 == nil || c0.Ndim() != 2 || c0.Shape()[1] != d || c0.Shape()[0] < 1 {
		return nil, fmt.Errorf("cluster: centroids of shape %v for points of shape %v: %w", c0.Shape(), x.Shape(), gpu.ErrInvalidValue)
	}
	if iters < 0 {
		return nil, fmt.Errorf("cluster: %d iterations: %w", iters, gpu.ErrInvalidValue)
	}
	k := c0.Shape()[0]
	var frees []func() error
	keep := func(a interface{ Free() error }) { frees = append(frees, a.Free) }
	defer func() {
		for _, f := range frees {
			err = errors.Join(err, f())
		}
		if err != nil {
			res.Free()
			res = nil
		}
	}()
	res = &Result{}
	if res.Centroids, err = gpu.Clone(s, c0); err != nil {
		return nil, err
	}
	c := res.Centroids
	// ||x||^2 of every point, once: (n, 1).
	xx, err := gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum, gpu.Axes(1), gpu.KeepDims())
	if err != nil {
		return nil, err
	}
	keep(xx)
	dist, err := gpu.Empty[float32](s, n, k)
	if err != nil {
		return nil, err
	}
	keep(dist)
	sums, err := gpu.Empty[float32](s, k, d)
	if err != nil {
		return nil, err
	}
	keep(sums)
	ct, err := c.Transpose() // (d, k): a view, given to the BLAS as a transpose
	if err != nil {
		return nil, err
	}
	assign := func() (*gpu.Array[float32], *gpu.Array[int64], error) {
		cc, err := gpu.MapReduce[float32](s, "c*c", gpu.Vars{"c": c}, gpu.OpSum, gpu.Axes(1))
		if err != nil {
			return nil, nil, err
		}
		defer cc.Free()
		if err := gpu.EvalInto(s, dist, "xx + cc", gpu.Vars{"xx": xx, "cc": cc}); err != nil {
			return nil, nil, err
		}
		if err := gpu.Gemm(s, -2, x, ct, 1, dist); err != nil {
			return nil, nil, err
		}
		return gpu.FindMin(s, dist, gpu.Axes(1))
	}
	update := func(labels *gpu.Array[int64]) (*gpu.Array[int64], error) {
		if err := gpu.Fill(s, sums, 0); err != nil {
			return nil, err
		}
		if err := gpu.AddAt(s, sums, labels, x); err != nil {
			return nil, err
		}
		counts, err := gpu.Bincount(ctx, s, labels, k, gpu.Bins(k))
		if err != nil {
			return nil, err
		}
		cnt, err := counts.Reshape(k, 1)
		if err == nil {
			err = gpu.EvalInto(s, c, "where(n > 0, sum / float32(n), c)", gpu.Vars{"n": cnt, "sum": sums, "c": c})
		}
		if err != nil {
			counts.Free()
			return nil, err
		}
		return counts, nil
	}
	for range iters {
		minD, labels, err := assign()
		if err != nil {
			return nil, err
		}
		minD.Free()
		counts, err := update(labels)
		labels.Free()
		if err != nil {
			return nil, err
		}
		counts.Free()
	}
	minD, labels, err := assign()
	if err != nil {
		return nil, err
	}
	keep(minD)
	res.Labels = labels
	counts, err := gpu.Bincount(ctx, s, labels, k, gpu.Bins(k))
	if err != nil {
		return nil, err
	}
	keep(counts)
	inertia, err := gpu.Sum[float64](s, minD)
	if err != nil {
		return nil, err
	}
	keep(inertia)
	if res.Counts, err = counts.ToSlice(ctx); err != nil {
		return nil, err
	}
	v, err := inertia.At(ctx)
	res.Inertia = v
	return res, err
}

// dims returns the number of points and dimensions of x (n, d).
func dims(x *gpu.Array[float32]) (n, d int, err error) {
	if x == nil || x.Ndim() != 2 || x.Size() == 0 {
		return 0, 0, fmt.Errorf("cluster: points of shape %v, want (n, d) with n, d >= 1: %w", x.Shape(), gpu.ErrInvalidValue)
	}
	return x.Shape()[0], x.Shape()[1], nil
}
