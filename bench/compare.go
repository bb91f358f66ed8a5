package bench

import (
	"cmp"
	"strings"
)

// DefaultThreshold is the default regression threshold: 10% slower.
const DefaultThreshold = 0.10

// Delta compares one benchmark's median with an earlier run's.
type Delta struct {
	// Name is the benchmark's name.
	Name string
	// OldNs and NewNs are the medians in nanoseconds.
	OldNs, NewNs float64
	// Ratio is NewNs / OldNs: above 1 is slower.
	Ratio float64
	// Regression is Ratio > 1 + threshold.
	Regression bool
	// Improvement is Ratio < 1 / (1 + threshold).
	Improvement bool
}

// Comparison is a run compared with an earlier one.
type Comparison struct {
	// Threshold is the fraction past which a slowdown is a regression.
	Threshold float64
	// Old is the earlier run.
	Old *Report
	// Deltas holds one entry per benchmark measured without error in both
	// runs, in the new run's order.
	Deltas []Delta
}

// Compare compares cur with old, benchmark by benchmark (matched by name).
// A benchmark whose median grew by more than threshold (0.10: 10%) is a
// regression. Benchmarks that failed or have no samples in either run are
// left out, and so are the LargeSuffix ones when the two runs used different
// sides (Meta.LargeSide).
func Compare(cur, old *Report, threshold float64) *Comparison {
	c := &Comparison{Threshold: threshold, Old: old}
	sameLarge := cmp.Or(cur.Meta.LargeSide, LargeSide) == cmp.Or(old.Meta.LargeSide, LargeSide)
	for _, r := range cur.Results {
		o, ok := old.Lookup(r.Name)
		if !ok || r.Err != "" || o.Err != "" || r.MedianNs <= 0 || o.MedianNs <= 0 {
			continue
		}
		if !sameLarge && strings.HasSuffix(r.Name, LargeSuffix) {
			continue // another size under the same name
		}
		ratio := r.MedianNs / o.MedianNs
		c.Deltas = append(c.Deltas, Delta{
			Name:        r.Name,
			OldNs:       o.MedianNs,
			NewNs:       r.MedianNs,
			Ratio:       ratio,
			Regression:  ratio > 1+threshold,
			Improvement: ratio < 1/(1+threshold),
		})
	}
	return c
}

// Lookup returns the delta for a benchmark name.
func (c *Comparison) Lookup(name string) (Delta, bool) {
	if c == nil {
		return Delta{}, false
	}
	for _, d := range c.Deltas {
		if d.Name == name {
			return d, true
		}
	}
	return Delta{}, false
}

// Regressions returns the deltas flagged as regressions.
func (c *Comparison) Regressions() []Delta {
	if c == nil {
		return nil
	}
	var out []Delta
	for _, d := range c.Deltas {
		if d.Regression {
			out = append(out, d)
		}
	}
	return out
}
