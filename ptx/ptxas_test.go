package ptx

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/internal/testenv"
)

type ptxasResult struct {
	Log   string // ptxas -v output
	Cubin string // path of the compiled cubin
}

// ptxas compiles src for sm_90 with -v and fails the test on error. It skips the test
// when ptxas isn't installed.
func ptxas(t testing.TB, src string) ptxasResult {
	t.Helper()
	p := testenv.Ptxas(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "m.ptx")
	out := filepath.Join(dir, "m.cubin")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(p, "-arch=sm_90", "-v", in, "-o", out)
	b, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ptxas failed: %v\n%s\n--- source ---\n%s", err, b, numbered(src))
	}
	return ptxasResult{Log: string(b), Cubin: out}
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		b.WriteString(strconv.Itoa(i+1) + "\t" + l + "\n")
	}
	return b.String()
}

var (
	reSpill = regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
	reStack = regexp.MustCompile(`(\d+) bytes stack frame`)
	reLmem  = regexp.MustCompile(`(\d+) bytes lmem`)
	reRegs  = regexp.MustCompile(`Used (\d+) registers`)
)

// checkNoSpill fails if any function in a ptxas -v log spills or uses local memory.
func checkNoSpill(t testing.TB, log string) {
	t.Helper()
	for _, m := range reSpill.FindAllStringSubmatch(log, -1) {
		if m[1] != "0" || m[2] != "0" {
			t.Errorf("spills: %s\n%s", m[0], log)
		}
	}
	for _, m := range reStack.FindAllStringSubmatch(log, -1) {
		if m[1] != "0" {
			t.Errorf("stack frame: %s\n%s", m[0], log)
		}
	}
	for _, m := range reLmem.FindAllStringSubmatch(log, -1) {
		if m[1] != "0" {
			t.Errorf("local memory: %s\n%s", m[0], log)
		}
	}
}

// sass returns the disassembly of a cubin (empty if cuobjdump is missing).
func sass(t testing.TB, cubin string) string {
	t.Helper()
	p := testenv.CUDATool("cuobjdump")
	if p == "" {
		return ""
	}
	b, err := exec.Command(p, "-sass", cubin).CombinedOutput()
	if err != nil {
		t.Fatalf("cuobjdump: %v\n%s", err, b)
	}
	return string(b)
}
