package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestSmall runs the example at a small size on the default device (the CPU backend
// without a GPU) with its check against plain Go.
func TestSmall(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-n", "4000", "-k", "8", "-blobs", "8", "-iters", "5", "-check"}, &out, &errs); code != 0 {
		t.Fatalf("exit %d: %s\n%s", code, errs.String(), out.String())
	}
	if !strings.Contains(out.String(), "check: ok") {
		t.Errorf("no check in the output:\n%s", out.String())
	}
	t.Log("\n" + out.String())
}

func TestBadFlags(t *testing.T) {
	var out, errs bytes.Buffer
	if code := run(context.Background(), []string{"-n", "x"}, &out, &errs); code != 2 {
		t.Errorf("exit %d for a bad flag", code)
	}
	if code := run(context.Background(), []string{"-n", "0"}, &out, &errs); code != 1 {
		t.Errorf("exit %d for no points", code)
	}
}

// TestCentroidsOff checks the centroids' bound of -check: a centroid may differ from
// the reference by 1e-2 plus the share of the points whose labels differ, no more.
func TestCentroidsOff(t *testing.T) {
	// Two clusters of 1-D points: {0, 1, 2, 9} and {10, 11}; in the reference the point
	// 9 is in the second cluster.
	x := []float32{0, 1, 2, 9, 10, 11}
	got := []int64{0, 0, 0, 0, 1, 1}
	wantL := []int64{0, 0, 0, 1, 1, 1}
	counts := []int64{4, 2}
	want := []float64{1, 10}
	// The result's centroids, 3 and 10.5, differ from 1 and 10 by the moved point's share.
	if c := centroidsOff(x, []float32{3, 10.5}, want, got, wantL, counts, 1); c != -1 {
		t.Errorf("centroid %d off with one point moved", c)
	}
	// With the same labels, the same difference is beyond the bound.
	if c := centroidsOff(x, []float32{3, 10.5}, want, wantL, wantL, []int64{3, 3}, 1); c != 0 {
		t.Errorf("centroidsOff = %d with no point moved, want 0", c)
	}
	// Within 1e-2 (relative, floor 1).
	if c := centroidsOff(x, []float32{1.009, 10.09}, want, wantL, wantL, []int64{3, 3}, 1); c != -1 {
		t.Errorf("centroid %d off within 1e-2", c)
	}
	if c := centroidsOff(x, []float32{1, 10.2}, want, wantL, wantL, []int64{3, 3}, 1); c != 1 {
		t.Errorf("centroidsOff = %d for the second centroid 2e-2 off, want 1", c)
	}
	// The share is a distance, not scaled by the centroid: the second centroid (10)
	// may move by 1e-2*10 + 0.5 (point 9's share), not (1e-2 + 0.5)*10.
	if c := centroidsOff(x, []float32{1, 10.55}, want, got, wantL, counts, 1); c != -1 {
		t.Errorf("centroid %d off within its share", c)
	}
	if c := centroidsOff(x, []float32{1, 10.7}, want, got, wantL, counts, 1); c != 1 {
		t.Errorf("centroidsOff = %d for the second centroid past its share, want 1", c)
	}
}
