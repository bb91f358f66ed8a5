package testenv

import "testing"

// The assembler found lists its targets, sm_90 (what the library targets) among them.
func TestPtxasTargets(t *testing.T) {
	p := Ptxas(t)
	ts := PtxasTargets(p)
	t.Logf("%s: %v", p, ts)
	if len(ts) == 0 || !PtxasSupports(p, "sm_90") {
		t.Errorf("%s: targets %v, want sm_90 among them", p, ts)
	}
	if PtxasSupports(p, "sm_1") {
		t.Errorf("%s supports sm_1", p)
	}
}
