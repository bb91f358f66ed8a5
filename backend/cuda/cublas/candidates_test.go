package cublas

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestCandidates checks the search order on a made-up file system: the environment
// variable alone when set; else the sonames, the toolkit directories, then NVIDIA's
// wheels in the site-packages of the active environments and the usual prefixes.
func TestCandidates(t *testing.T) {
	root := t.TempDir()
	mk := func(rel string) string {
		p := filepath.Join(root, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, nil, 0o644)
		return p
	}
	cudaHome := mk("cuda-12.9/lib64/libcublas.so.12")
	venv13 := mk("venv/lib/python3.12/site-packages/nvidia/cu13/lib/libcublas.so.13")
	venv12 := mk("venv/lib/python3.12/site-packages/nvidia/cublas/lib/libcublas.so.12")
	local := mk("home/.local/lib/python3.11/site-packages/nvidia/cublas/lib/libcublas.so.12")
	mk("venv/lib/python3.12/site-packages/nvidia/cudnn/lib/libcudnn.so.9")
	env := map[string]string{
		"CUDA_HOME":   filepath.Join(root, "cuda-12.9"),
		"VIRTUAL_ENV": filepath.Join(root, "venv"),
		"HOME":        filepath.Join(root, "home"),
	}
	// Globs outside the made-up root see nothing (the machine's own files stay out).
	glob := func(p string) ([]string, error) {
		if !filepath.HasPrefix(p, root) {
			return nil, nil
		}
		return filepath.Glob(p)
	}
	got := Candidates(func(k string) string { return env[k] }, glob)
	want := []string{"libcublas.so.13", "libcublas.so.12", cudaHome, venv13, venv12, local}
	if !slices.Equal(got, want) {
		t.Errorf("Candidates =\n%q\nwant\n%q", got, want)
	}
	env[EnvLibrary] = "/x/libcublas.so"
	if got := Candidates(func(k string) string { return env[k] }, glob); !slices.Equal(got, []string{"/x/libcublas.so"}) {
		t.Errorf("with %s: %q", EnvLibrary, got)
	}
}
