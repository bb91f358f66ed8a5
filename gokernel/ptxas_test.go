package gokernel_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/internal/ptxastool"
)

var reSpill = regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
var reStack = regexp.MustCompile(`(\d+) bytes stack frame`)

// assemble runs ptxas over src for sm_90 and fails on an error, a spill or a stack
// frame; it returns ptxas's report.
func assemble(t *testing.T, src string) string {
	t.Helper()
	ptxas := ptxastool.Path()
	if ptxas == "" {
		t.Skip("no ptxas")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "k.ptx")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(ptxas, "-arch=sm_90", "-v", "-o", filepath.Join(dir, "k.cubin"), in).CombinedOutput()
	if err != nil {
		t.Fatalf("ptxas: %v\n%s\n%s", err, out, numbered(src))
	}
	for _, m := range reSpill.FindAllStringSubmatch(string(out), -1) {
		if m[1] != "0" || m[2] != "0" {
			t.Errorf("spills: %s", m[0])
		}
	}
	for _, m := range reStack.FindAllStringSubmatch(string(out), -1) {
		if m[1] != "0" {
			t.Errorf("stack: %s", m[0])
		}
	}
	return string(out)
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		b.WriteString(strings.Repeat(" ", 4-len(itoa(i+1))) + itoa(i+1) + " " + l + "\n")
	}
	return b.String()
}

func itoa(i int) string { return strings.TrimSpace(strings.Repeat(" ", 0) + string(rune('0'+i%10))) }

func TestPtxasKernels(t *testing.T) {
	for _, tc := range []struct {
		fn    any
		targs []any
	}{
		{Saxpy, nil}, {Copy, nil}, {Scale[float32], []any{float32(0)}}, {Scale[float64], []any{float64(0)}},
		{Transpose, nil}, {BlockSum, nil}, {Histogram, nil}, {Ops, nil},
	} {
		k, err := gokernel.New(kernelsSrc, tc.fn)
		if err != nil {
			t.Fatal(err)
		}
		for _, checks := range []bool{true, false} {
			src, _, err := gokernel.KernelPTX(k, 9, 0, checks, tc.targs...)
			if err != nil {
				t.Fatal(err)
			}
			if testing.Verbose() && checks {
				t.Logf("%s:\n%s", k.Name(), src)
			}
			rep := assemble(t, src)
			if testing.Verbose() {
				t.Log(rep)
			}
		}
	}
}
