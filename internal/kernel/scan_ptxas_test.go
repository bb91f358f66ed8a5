package kernel

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

var (
	scanReSpill = regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
	scanReStack = regexp.MustCompile(`(\d+) bytes stack frame`)
	scanReRegs  = regexp.MustCompile(`Used (\d+) registers`)
	scanReSmem  = regexp.MustCompile(`(\d+) bytes smem`)
	scanReSass  = regexp.MustCompile(`(?m)^\s+/\*[0-9a-f]{4,}\*/\s+\S[^;]*;`)
)

// scanPtxas assembles src for sm_90 with -v and returns the log and the cubin's path;
// it fails on an error, a spill or a stack frame, and skips without ptxas.
func scanPtxas(t testing.TB, src string) (log, cubin string) {
	t.Helper()
	log, cubin = ptxasRun(t, src, true)
	for _, m := range scanReSpill.FindAllStringSubmatch(log, -1) {
		if m[1] != "0" || m[2] != "0" {
			t.Errorf("spills: %s\n%s", m[0], log)
		}
	}
	for _, m := range scanReStack.FindAllStringSubmatch(log, -1) {
		if m[1] != "0" {
			t.Errorf("stack frame: %s\n%s", m[0], log)
		}
	}
	return log, cubin
}

// ownRegs reports whether k's register count is left to ptxas (CompactRegCap or
// ScanRegCap 0, ptxattr.go): CUDA 13's ptxas may spill a few bytes in such a kernel
// for occupancy, measured faster, so the tests log those spills instead of failing.
func ownRegs(k any) bool {
	switch k := k.(type) {
	case *CompactScatter, *CompactCount:
		return CompactRegCap == 0
	case *ScanColumns:
		return ScanRegCap == 0
	case *ScanTiles:
		return ScanRegCap == 0 && k.MinBlocks == 0
	}
	return false
}

// ptxasFor is scanPtxas for kernel k, but a kernel whose registers ptxas chooses
// (ownRegs) may spill up to ptxasForSpillMax bytes each way, logged, in a stack frame
// of at most as many; more fails.
func ptxasFor(t testing.TB, k any, name, src string) (log, cubin string) {
	t.Helper()
	if !ownRegs(k) {
		return scanPtxas(t, src)
	}
	log, cubin = scanPtxasRaw(t, src)
	st, ld := scanSpills(log)
	if st+ld > 0 {
		t.Logf("%s: spills %d bytes stored, %d loaded (ptxas's register choice)", name, st, ld)
	}
	if st > ptxasForSpillMax || ld > ptxasForSpillMax {
		t.Errorf("%s: spills %d bytes stored, %d loaded, more than %d\n%s", name, st, ld, ptxasForSpillMax, log)
	}
	for _, m := range scanReStack.FindAllStringSubmatch(log, -1) {
		if n, _ := strconv.Atoi(m[1]); n > ptxasForSpillMax {
			t.Errorf("%s: a stack frame of %d bytes, more than %d\n%s", name, n, ptxasForSpillMax, log)
		}
	}
	return log, cubin
}

// ptxasForSpillMax is the most bytes a kernel at ptxas's register choice may spill
// each way, and its stack frame's size: CUDA 13.0's ptxas spilled 4 to 16 in the scan
// and compaction kernels (2026-12-02).
const ptxasForSpillMax = 32

// scanSpills returns the spill stores and loads (bytes) of a ptxas -v log.
func scanSpills(log string) (st, ld int) {
	for _, m := range scanReSpill.FindAllStringSubmatch(log, -1) {
		a, _ := strconv.Atoi(m[1])
		b, _ := strconv.Atoi(m[2])
		st, ld = st+a, ld+b
	}
	return
}

// scanPtxasRaw is scanPtxas without the spill and stack checks (the driver's check
// only logs what it finds).
func scanPtxasRaw(t testing.TB, src string) (log, cubin string) {
	t.Helper()
	return ptxasRun(t, src, false)
}

// ptxasRun assembles src; strict makes the driver's check fail on local memory.
func ptxasRun(t testing.TB, src string, strict bool) (log, cubin string) {
	t.Helper()
	checkPTXConfig(t, src, strict) // the dump and the driver's check (ptxdriver_test.go)
	p := testenv.Ptxas(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "m.ptx")
	cubin = filepath.Join(dir, "m.cubin")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(p, "-arch=sm_90", "-v", in, "-o", cubin).CombinedOutput()
	if err != nil {
		var nb strings.Builder
		for i, l := range strings.Split(src, "\n") {
			nb.WriteString(strconv.Itoa(i+1) + "\t" + l + "\n")
		}
		t.Fatalf("ptxas failed: %v\n%s\n--- source ---\n%s", err, b, nb.String())
	}
	return string(b), cubin
}

// scanRegs returns the register count and shared memory of a ptxas -v log.
func scanRegs(log string) (regs, smem int) {
	if m := scanReRegs.FindStringSubmatch(log); m != nil {
		regs, _ = strconv.Atoi(m[1])
	}
	if m := scanReSmem.FindStringSubmatch(log); m != nil {
		smem, _ = strconv.Atoi(m[1])
	}
	return
}

// scanSassCount returns the number of SASS instructions in a cubin (0 without
// cuobjdump).
func scanSassCount(t testing.TB, cubin string) int {
	p := testenv.CUDATool("cuobjdump")
	if p == "" {
		return 0
	}
	b, err := exec.Command(p, "-sass", cubin).CombinedOutput()
	if err != nil {
		t.Fatalf("cuobjdump: %v\n%s", err, b)
	}
	return len(scanReSass.FindAllString(string(b), -1))
}
