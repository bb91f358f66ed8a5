package bench

import (
	"math"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name    string
		samples []float64
		want    Stats
	}{
		{"empty", nil, Stats{}},
		{"one", []float64{7}, Stats{N: 1, MinNs: 7, MedianNs: 7, MeanNs: 7, MaxNs: 7}},
		{"odd", []float64{5, 1, 4, 2, 3}, Stats{N: 5, MinNs: 1, MedianNs: 3, MeanNs: 3, MaxNs: 5, StddevNs: math.Sqrt(2.5)}},
		{"even", []float64{4, 1, 3, 2}, Stats{N: 4, MinNs: 1, MedianNs: 2.5, MeanNs: 2.5, MaxNs: 4, StddevNs: math.Sqrt(5.0 / 3)}},
		{"outlier", []float64{10, 10, 10, 10, 1000}, Stats{N: 5, MinNs: 10, MedianNs: 10, MeanNs: 208, MaxNs: 1000, StddevNs: math.Sqrt(4 * 198 * 198 * 5 / 4)}},
		{"equal", []float64{2, 2, 2}, Stats{N: 3, MinNs: 2, MedianNs: 2, MeanNs: 2, MaxNs: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]float64(nil), tc.samples...)
			got := Summarize(tc.samples)
			if got.N != tc.want.N || got.MinNs != tc.want.MinNs || got.MedianNs != tc.want.MedianNs ||
				got.MaxNs != tc.want.MaxNs || !near(got.MeanNs, tc.want.MeanNs) || !near(got.StddevNs, tc.want.StddevNs) {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.samples, got, tc.want)
			}
			for i := range in {
				if in[i] != tc.samples[i] {
					t.Fatalf("Summarize modified its input")
				}
			}
		})
	}
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }

func TestGBps(t *testing.T) {
	if g := GBps(2e9, 1e9); g != 2 {
		t.Errorf("GBps(2e9 B, 1 s) = %v, want 2", g)
	}
	if g := GBps(4<<30, 2.1e6); !near(g, float64(4<<30)/2.1e6) {
		t.Errorf("GBps = %v", g)
	}
	if GBps(0, 5) != 0 || GBps(5, 0) != 0 {
		t.Errorf("GBps with zero bytes or time should be 0")
	}
}

func TestRotation(t *testing.T) {
	r := NewRotation("a", "b", "c")
	var got string
	for range 7 {
		got += r.Next()
	}
	if got != "abcabca" || r.Len() != 3 || len(r.Sets()) != 3 {
		t.Errorf("rotation gave %q, len %d", got, r.Len())
	}
	defer func() {
		if recover() == nil {
			t.Errorf("NewRotation() with no sets did not panic")
		}
	}()
	NewRotation[int]()
}

func TestSetsFor(t *testing.T) {
	const l2 = 50 << 20
	for _, tc := range []struct {
		set, cache int64
		want       int
	}{
		{1 << 30, l2, 1},        // 1 GiB: far past the cache
		{100 << 20, l2, 1},      // exactly twice
		{99 << 20, l2, 2},       // (k-1)*set >= cache with k = 2
		{50 << 20, l2, 2},       //
		{2 << 20, l2, 26},       // 25 others fill the cache
		{3 << 20, l2, 18},       // ceil(50/3) = 17 others
		{2 << 20, 0, 1},         // no cache
		{2048000, 32 << 20, 18}, // the host placeholder: 2 MB sets, 32 MiB cache
	} {
		if got := SetsFor(tc.set, tc.cache); got != tc.want {
			t.Errorf("SetsFor(%d, %d) = %d, want %d", tc.set, tc.cache, got, tc.want)
		}
		if k := SetsFor(tc.set, tc.cache); k > 1 && int64(k-1)*tc.set < tc.cache {
			t.Errorf("SetsFor(%d, %d) = %d: the other sets do not fill the cache", tc.set, tc.cache, k)
		}
	}
}
