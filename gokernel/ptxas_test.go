package gokernel_test

import (
	"crypto/sha256"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/internal/testenv"
)

// Every module the tests compile (the semantics tests' kernels, the fuzzer's, the
// examples) is assembled by ptxas at the end of the run, by each assembler found
// ($PTXAS, CI's CUDA 11.8 at /opt/ctk/usr/bin, CUDA 13 at /opt/cuda13/bin, what the
// H200's driver uses): none may fail, spill or use a stack frame. Skipped with
// -short, and where there is no ptxas.

var ptxDump = flag.String("ptx-dump", os.Getenv("GPU_PTX_DUMP"), "write every module the tests compile into this folder")

var compiled struct {
	sync.Mutex
	m map[[32]byte]string // module text by hash
	n map[[32]byte]string // its entry
}

func TestMain(m *testing.M) {
	compiled.m = map[[32]byte]string{}
	compiled.n = map[[32]byte]string{}
	gokernel.SetCompileHook(func(entry, src string) {
		h := sha256.Sum256([]byte(src))
		compiled.Lock()
		compiled.m[h], compiled.n[h] = src, entry
		compiled.Unlock()
	})
	code := m.Run()
	if code == 0 && !testing.Short() {
		if err := assembleAll(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			code = 1
		}
	}
	os.Exit(code)
}

// assemblers returns the ptxas programs to run.
func assemblers() []string {
	var out []string
	for _, p := range []string{testenv.CUDATool("ptxas"), "/opt/ctk/usr/bin/ptxas", "/opt/cuda13/bin/ptxas"} {
		if p == "" || slices.Contains(out, p) {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			out = append(out, p)
		}
	}
	return out
}

var (
	reSpill = regexp.MustCompile(`(\d+) bytes spill stores, (\d+) bytes spill loads`)
	reStack = regexp.MustCompile(`(\d+) bytes stack frame`)
)

// assemble runs ptxas over src for sm_90 and returns an error for a failure, a spill
// or a stack frame, and ptxas's report.
func assemble(ptxas, dir, name, src string) (string, error) {
	in := filepath.Join(dir, name+".ptx")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		return "", err
	}
	out, err := exec.Command(ptxas, "-arch=sm_90", "-v", "-o", filepath.Join(dir, name+".cubin"), in).CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("%s: %s: %v\n%s\n%s", ptxas, name, err, out, numbered(src))
	}
	for _, m := range reSpill.FindAllStringSubmatch(string(out), -1) {
		if m[1] != "0" || m[2] != "0" {
			return string(out), fmt.Errorf("%s: %s spills: %s", ptxas, name, m[0])
		}
	}
	for _, m := range reStack.FindAllStringSubmatch(string(out), -1) {
		if m[1] != "0" {
			return string(out), fmt.Errorf("%s: %s has a stack frame: %s", ptxas, name, m[0])
		}
	}
	return string(out), nil
}

func assembleAll() error {
	as := assemblers()
	if len(as) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "gokernel-ptxas")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	type job struct{ ptxas, name, src string }
	var jobs []job
	i := 0
	for h, src := range compiled.m {
		name := fmt.Sprintf("%s_%d", compiled.n[h], i)
		i++
		if *ptxDump != "" {
			os.MkdirAll(*ptxDump, 0o755)
			os.WriteFile(filepath.Join(*ptxDump, name+".ptx"), []byte(src), 0o644)
		}
		for _, p := range as {
			jobs = append(jobs, job{p, name, src})
		}
	}
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	ch := make(chan job)
	for w := 0; w < 2*runtime.GOMAXPROCS(0); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range ch {
				sub := filepath.Join(dir, strconv.Itoa(len(j.ptxas))+filepath.Base(filepath.Dir(j.ptxas)))
				os.MkdirAll(sub, 0o755)
				if _, err := assemble(j.ptxas, sub, j.name, j.src); err != nil {
					mu.Lock()
					errs = append(errs, err.Error())
					mu.Unlock()
				}
			}
		}()
	}
	for _, j := range jobs {
		ch <- j
	}
	close(ch)
	wg.Wait()
	if len(errs) > 0 {
		slices.Sort(errs)
		return fmt.Errorf("ptxas: %d of %d assemblies failed:\n%s", len(errs), len(jobs), strings.Join(errs[:min(len(errs), 5)], "\n"))
	}
	if testing.Verbose() {
		fmt.Printf("ptxas: %d modules assembled by %s, no spills\n", len(compiled.m), strings.Join(as, " and "))
	}
	return nil
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		fmt.Fprintf(&b, "%4d %s\n", i+1, l)
	}
	return b.String()
}

// TestPtxasReport shows ptxas's report of the examples (-v).
func TestPtxasReport(t *testing.T) {
	as := assemblers()
	if len(as) == 0 || !testing.Verbose() {
		t.Skip("no ptxas, or not -v")
	}
	for _, tc := range []struct {
		fn    any
		targs []any
	}{
		{Saxpy, nil}, {Copy, nil}, {Scale[float32], []any{float32(0)}}, {Transpose, nil}, {BlockSum, nil}, {Histogram, nil},
	} {
		k := newKernel(t, tc.fn)
		src, _, err := gokernel.KernelPTX(k, 9, 0, true, tc.targs...)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range as {
			rep, err := assemble(p, t.TempDir(), k.Name(), src)
			if err != nil {
				t.Error(err)
			}
			t.Logf("%s: %s", p, rep)
		}
	}
}
