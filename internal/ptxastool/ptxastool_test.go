package ptxastool

import "testing"

// The assembler found lists its targets, sm_90 (what the library targets) among them.
func TestTargets(t *testing.T) {
	p := Path()
	if p == "" {
		t.Skip("ptxas not found")
	}
	ts := Targets(p)
	t.Logf("%s: %v", p, ts)
	if len(ts) == 0 || !Supports(p, "sm_90") {
		t.Errorf("%s: targets %v, want sm_90 among them", p, ts)
	}
	if Supports(p, "sm_1") {
		t.Errorf("%s supports sm_1", p)
	}
}
