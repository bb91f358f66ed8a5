// Package testenv holds what the tests of several packages need to know about their
// environment: whether the race detector is on, where NVIDIA's PTX assembler is, and
// which targets it accepts.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"testing"
)

// ctkBin is where CI's CUDA toolkit (Debian's CUDA 11.8 packages) keeps its tools.
const ctkBin = "/opt/ctk/usr/bin"

// CUDATool returns the path of a CUDA toolkit program ("ptxas", "cuobjdump",
// "nvdisasm"), or "" where there is none: for ptxas $PTXAS, for the others the
// directory of $PTXAS; then PATH; then /opt/ctk/usr/bin.
func CUDATool(name string) string {
	if p := os.Getenv("PTXAS"); p != "" {
		if name == "ptxas" {
			return p
		}
		if q := filepath.Join(filepath.Dir(p), name); isFile(q) {
			return q
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if q := filepath.Join(ctkBin, name); isFile(q) {
		return q
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Ptxas returns the path of ptxas (see CUDATool), or skips t where there is none.
func Ptxas(t testing.TB) string {
	t.Helper()
	p := CUDATool("ptxas")
	if p == "" {
		t.Skip("ptxas not found ($PTXAS, PATH, " + ctkBin + "/ptxas): skipping the PTX assembly check")
	}
	return p
}

var (
	targetsMu sync.Mutex
	targets   = map[string][]string{}
	reSM      = regexp.MustCompile(`'(sm_[0-9]+[a-z]?)'`)
)

// PtxasTargets returns the real targets (sm_XX) that the assembler at path accepts,
// from its --help (the values --gpu-name allows); nil if it can't say. CUDA 13's
// assembler no longer knows sm_52 or sm_70, which CUDA 11.8's (CI's) does, so target
// lists follow the assembler found.
func PtxasTargets(path string) []string {
	targetsMu.Lock()
	defer targetsMu.Unlock()
	if t, ok := targets[path]; ok {
		return t
	}
	var out []string
	if b, err := exec.Command(path, "--help").CombinedOutput(); err == nil {
		for _, m := range reSM.FindAllStringSubmatch(string(b), -1) {
			if !slices.Contains(out, m[1]) {
				out = append(out, m[1])
			}
		}
	}
	targets[path] = out
	return out
}

// PtxasSupports reports whether the assembler at path accepts target ("sm_70"). An
// assembler whose --help lists no targets is taken to accept any.
func PtxasSupports(path, target string) bool {
	t := PtxasTargets(path)
	return len(t) == 0 || slices.Contains(t, target)
}
