package cluster

import (
	"math"
	"slices"
)

// Reference is Run in plain Go, the check of the example and its tests: iters
// iterations of Lloyd's algorithm in float64 on the points x (n x d, row-major) from
// the centroids c (k x d, row-major), then a final assignment, with squared distances
// summed directly (not expanded). Ties go to the lower index, as gpu.FindMin's.
func Reference(x []float32, d int, c []float64, iters int) (cent []float64, labels []int64, counts []int64, inertia float64) {
	n, k := len(x)/d, len(c)/d
	cent = slices.Clone(c)
	labels = make([]int64, n)
	assign := func() float64 {
		total := 0.0
		for i := range n {
			best, bi := math.Inf(1), 0
			for j := range k {
				s := 0.0
				for q := range d {
					v := float64(x[i*d+q]) - cent[j*d+q]
					s += v * v
				}
				if s < best {
					best, bi = s, j
				}
			}
			labels[i] = int64(bi)
			total += best
		}
		return total
	}
	for range iters {
		assign()
		sums := make([]float64, k*d)
		cnt := make([]int64, k)
		for i := range n {
			j := labels[i]
			cnt[j]++
			for q := range d {
				sums[int(j)*d+q] += float64(x[i*d+q])
			}
		}
		for j := range k {
			if cnt[j] > 0 {
				for q := range d {
					cent[j*d+q] = sums[j*d+q] / float64(cnt[j])
				}
			}
		}
	}
	inertia = assign()
	counts = make([]int64, k)
	for _, j := range labels {
		counts[j]++
	}
	return cent, labels, counts, inertia
}
