package cuda

import (
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// TestParseBlasConfig: GPU_CUBLAS_API, GPU_CUBLAS_WORKSPACE, GPU_CUBLAS_TUNE_ALGOS and
// GPU_CUBLAS_REPLAY as gemm_engine.go documents them; values that don't parse leave the
// defaults.
func TestParseBlasConfig(t *testing.T) {
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }
	c := parseBlasConfig(env(nil))
	if c.workspace != -1 || c.tuneAlgos != 8 || c.engineFor(dtype.BFloat16, false) != engineGemmEx || !c.replay {
		t.Fatalf("defaults: %+v", c)
	}
	c = parseBlasConfig(env(map[string]string{
		"GPU_CUBLAS_API":        "lt, bfloat16=tune,float64=classic, tf32=bogus, nonsense",
		"GPU_CUBLAS_WORKSPACE":  "64",
		"GPU_CUBLAS_TUNE_ALGOS": "100",
	}))
	for _, tc := range []struct {
		t    dtype.DType
		tf32 bool
		want gemmEngine
	}{
		{dtype.Float16, false, engineLt}, {dtype.BFloat16, false, engineTune}, {dtype.Float32, false, engineLt},
		{dtype.Float32, true, engineLt}, {dtype.Float64, false, engineClassic},
	} {
		if got := c.engineFor(tc.t, tc.tf32); got != tc.want {
			t.Errorf("%v tf32=%v: %v, want %v", tc.t, tc.tf32, got, tc.want)
		}
	}
	if c.workspace != 64<<20 || c.tuneAlgos != 16 {
		t.Errorf("workspace %d, tune algos %d", c.workspace, c.tuneAlgos)
	}
	c = parseBlasConfig(env(map[string]string{"GPU_CUBLAS_WORKSPACE": "-3", "GPU_CUBLAS_TUNE_ALGOS": "0", "GPU_CUBLAS_REPLAY": "maybe"}))
	if c.workspace != -1 || c.tuneAlgos != 8 || !c.replay {
		t.Errorf("bad values taken: %+v", c)
	}
	if c := parseBlasConfig(env(map[string]string{"GPU_CUBLAS_WORKSPACE": "0"})); c.workspace != 0 {
		t.Errorf("workspace 0: %d", c.workspace)
	}
	for v, want := range map[string]bool{"0": false, "false": false, " 1 ": true, "true": true} {
		if c := parseBlasConfig(env(map[string]string{"GPU_CUBLAS_REPLAY": v})); c.replay != want {
			t.Errorf("GPU_CUBLAS_REPLAY=%q: replay %v", v, c.replay)
		}
	}
	if engineTune.String() != "tune" {
		t.Errorf("String: %q", engineTune.String())
	}
}
