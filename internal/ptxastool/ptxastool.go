// Package ptxastool finds NVIDIA's PTX assembler (ptxas) for the tests that assemble
// the generated PTX, and tells which targets it accepts: CUDA 13's assembler no longer
// knows sm_52 or sm_70, which CUDA 11.8's (CI's) does, so target lists follow the
// assembler found (ptxas --help lists the values --gpu-name allows).
package ptxastool

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"sync"
)

// Path returns ptxas: $PTXAS, then ptxas on PATH, then /opt/ctk/usr/bin/ptxas (CI's
// CUDA 11.8); "" if none.
func Path() string {
	if p := os.Getenv("PTXAS"); p != "" {
		return p
	}
	if p, err := exec.LookPath("ptxas"); err == nil {
		return p
	}
	if _, err := os.Stat("/opt/ctk/usr/bin/ptxas"); err == nil {
		return "/opt/ctk/usr/bin/ptxas"
	}
	return ""
}

var (
	mu      sync.Mutex
	targets = map[string][]string{}
	reSM    = regexp.MustCompile(`'(sm_[0-9]+[a-z]?)'`)
)

// Targets returns the real targets (sm_XX) that the assembler at path accepts, from
// its --help; nil if it can't say.
func Targets(path string) []string {
	mu.Lock()
	defer mu.Unlock()
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

// Supports reports whether the assembler at path accepts target ("sm_70"). An
// assembler whose --help lists no targets is taken to accept any.
func Supports(path, target string) bool {
	t := Targets(path)
	return len(t) == 0 || slices.Contains(t, target)
}
