package bench

import (
	"math"
	"slices"
)

// Stats summarizes samples, each the time of one call in nanoseconds.
type Stats struct {
	// N is the number of samples.
	N int `json:"n"`
	// MinNs is the fastest sample.
	MinNs float64 `json:"min_ns"`
	// MedianNs is the median sample (the mean of the middle two for an even N).
	MedianNs float64 `json:"median_ns"`
	// MeanNs is the arithmetic mean.
	MeanNs float64 `json:"mean_ns"`
	// MaxNs is the slowest sample.
	MaxNs float64 `json:"max_ns"`
	// StddevNs is the sample standard deviation (N-1 in the denominator; 0
	// for fewer than two samples).
	StddevNs float64 `json:"stddev_ns"`
}

// Summarize returns the statistics of samples (nanoseconds per call). It does
// not modify samples. No samples give zero Stats.
func Summarize(samples []float64) Stats {
	n := len(samples)
	if n == 0 {
		return Stats{}
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	st := Stats{N: n, MinNs: s[0], MaxNs: s[n-1]}
	if n%2 == 1 {
		st.MedianNs = s[n/2]
	} else {
		st.MedianNs = (s[n/2-1] + s[n/2]) / 2
	}
	var sum float64
	for _, v := range s {
		sum += v
	}
	st.MeanNs = sum / float64(n)
	if n > 1 {
		var ss float64
		for _, v := range s {
			d := v - st.MeanNs
			ss += d * d
		}
		st.StddevNs = math.Sqrt(ss / float64(n-1))
	}
	return st
}

// GBps returns bytes moved per call over the time of a call in nanoseconds, in
// GB/s (10^9 bytes per second); 0 when either is not positive.
func GBps(bytes int64, ns float64) float64 {
	if bytes <= 0 || ns <= 0 {
		return 0
	}
	return float64(bytes) / ns
}
