// Package testenv holds what the tests of several packages need to know about their
// environment: whether the race detector is on, and where NVIDIA's PTX assembler is.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
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
