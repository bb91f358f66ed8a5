package random

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/testenv"
)

var (
	reRegs  = regexp.MustCompile(`Used (\d+) registers`)
	reSpill = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
	reSass  = regexp.MustCompile(`^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;`)
	reBra   = regexp.MustCompile("BRA (?:!?U?P\\d+, )?`\\((\\.L_x_\\d+)\\)")
	reLabel = regexp.MustCompile(`^(\.L_x_\d+):`)
)

// sassProg is one function's SASS (nvdisasm text) as a list of instructions with the
// indices of its labels.
type sassProg struct {
	ins    []string
	labels map[string]int // label -> index of the next instruction
}

func parseSass(sass string) sassProg {
	p := sassProg{labels: map[string]int{}}
	for _, line := range strings.Split(sass, "\n") {
		if m := reLabel.FindStringSubmatch(line); m != nil {
			p.labels[m[1]] = len(p.ins)
			continue
		}
		if m := reSass.FindStringSubmatch(line); m != nil {
			p.ins = append(p.ins, m[2])
		}
	}
	return p
}

// target returns the index a branch at i goes to, or -1.
func (p sassProg) target(i int) int {
	if m := reBra.FindStringSubmatch(p.ins[i]); m != nil {
		if j, ok := p.labels[m[1]]; ok {
			return j
		}
	}
	return -1
}

// slowPaths returns how many instructions of [from, to) lie in out-of-the-way slow paths
// that the common case branches over: the code between a forward branch and its target
// when that code calls a function (the slow paths ptxas emits for sqrt.rn and div.rn
// with unusual operands).
func (p sassProg) slowPaths(from, to int) int {
	n := 0
	for i := from; i < to; i++ {
		j := p.target(i)
		if j <= i+1 || j > to {
			continue
		}
		for k := i + 1; k < j; k++ {
			if strings.HasPrefix(p.ins[k], "CALL") {
				n += j - (i + 1)
				i = j - 1
				break
			}
		}
	}
	return n
}

// pairLoopStats returns the instruction count of the normal kernels' main loop (two whole
// blocks an iteration, two vector stores) on its common path, or 0 if there is none.
func pairLoopStats(sass string) int {
	p := parseSass(sass)
	for i := range p.ins {
		j := p.target(i)
		if j < 0 || j >= i {
			continue
		}
		stores := 0
		for k := j; k <= i; k++ {
			if strings.Contains(p.ins[k], "STG.E.128") {
				stores++
			}
		}
		if stores == 2 {
			return i - j + 1 - p.slowPaths(j, i)
		}
	}
	return 0
}

// sassStats returns the instruction counts of the general grid-stride loop of one
// function's SASS (nvdisasm text): the whole loop body, and the path a whole, aligned
// block takes (without the scalar tail stores, the rejection redraw loop and slow paths).
func sassStats(sass string) (loop, fast int, err error) {
	p := parseSass(sass)
	prog, target := p.ins, p.target
	// Backward branches: the last one closes the main loop; others inside it are the
	// redraw loop.
	type edge struct{ from, to int }
	var back []edge
	for i := range prog {
		if j := target(i); j >= 0 && j < i {
			back = append(back, edge{i, j})
		}
	}
	if len(back) == 0 {
		return 0, 0, fmt.Errorf("no loop found")
	}
	main := back[len(back)-1]
	loop = main.from - main.to + 1
	fast = loop
	for _, e := range back[:len(back)-1] {
		if e.to > main.to && e.from < main.from {
			fast -= e.from - e.to + 1
		}
	}
	// The scalar tail: from the forward branch right after the vector store to its target.
	for i := main.to; i < main.from; i++ {
		if strings.Contains(prog[i], "STG.E.128") {
			if j := target(i + 1); j > i+1 {
				fast -= j - (i + 2)
			}
			break
		}
	}
	fast -= p.slowPaths(main.to, main.from)
	return loop, fast, nil
}

// module joins kernels into one PTX module (they share .version and .target).
func module(ks []Kernel) string {
	var b strings.Builder
	fmt.Fprintf(&b, ".version %s\n.target %s\n.address_size 64\n", PTXVersion, ks[0].Target)
	for _, k := range ks {
		b.WriteString("\n")
		_, body, _ := strings.Cut(k.PTX, ".address_size 64\n") // module-scope tables and the entry
		b.WriteString(body)
	}
	return b.String()
}

// kernelOptions returns the kernel choices (Options) that make different kernels for s:
// the defaults first.
func kernelOptions(s Spec) []Options {
	if s.Dist == Uniform && (s.Type == dtype.Float16 || s.Type == dtype.BFloat16) {
		return []Options{{}, {HalfUniform: 1}, {HalfUniform: 2}}
	}
	return []Options{{}}
}

var reFunc = regexp.MustCompile(`(?:Compiling entry function|Function properties for) '?([A-Za-z0-9_]+)'?`)

// TestPTXAssembles assembles every kernel variant with ptxas for sm_90 (and, without
// -short, sm_80 and sm_52, where the assembler found still knows them), requiring no spills, no stack frame and no local memory, and
// logs the register counts and, with nvdisasm, the SASS instruction counts of the loop.
// All kernels of a target go into one module: one ptxas and one nvdisasm run (cuobjdump
// -sass gives the same code but takes about 0.7 s a kernel).
func TestPTXAssembles(t *testing.T) {
	ptxas := testenv.Ptxas(t)
	nvdisasm := testenv.CUDATool("nvdisasm")
	dir := t.TempDir()
	targets := [][2]int{{9, 0}}
	if !testing.Short() {
		targets = append(targets, [2]int{8, 0}, [2]int{5, 2})
	}
	for _, cc := range targets {
		if sm := fmt.Sprintf("sm_%d%d", cc[0], cc[1]); !testenv.PtxasSupports(ptxas, sm) {
			t.Logf("%s doesn't assemble for %s (CUDA 13 dropped sm_52 and sm_70): not assembled", ptxas, sm)
			continue
		}
		var ks []Kernel
		seen := map[string]bool{}
		for _, s := range Specs() {
			for _, ix := range []bool{false, true} {
				for _, o := range kernelOptions(s) {
					k, err := s.KernelOptions(cc[0], cc[1], ix, o)
					if err != nil {
						t.Fatal(err)
					}
					if !seen[k.Name] { // options that don't apply on this target give the same kernel
						seen[k.Name] = true
						ks = append(ks, k)
					}
				}
			}
		}
		target := ks[0].Target
		base := filepath.Join(dir, target)
		if err := os.WriteFile(base+".ptx", []byte(module(ks)), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(ptxas, "-arch="+target, "-v", base+".ptx", "-o", base+".cubin").CombinedOutput()
		if err != nil {
			t.Fatalf("%s: ptxas: %v\n%s", target, err, out)
		}
		// ptxas -v: per function, "Function properties for NAME", then the stack/spill
		// line, then "Used N registers".
		regs := map[string]string{}
		fn := ""
		for _, line := range strings.Split(string(out), "\n") {
			if m := reFunc.FindStringSubmatch(line); m != nil {
				fn = m[1]
			}
			if m := reSpill.FindStringSubmatch(line); m != nil && (m[1] != "0" || m[2] != "0" || m[3] != "0") {
				t.Errorf("%s %s: %s", fn, target, strings.TrimSpace(line))
			}
			if m := reRegs.FindStringSubmatch(line); m != nil {
				regs[fn] = m[1]
			}
			if strings.Contains(line, "lmem") {
				t.Errorf("%s %s: local memory: %s", fn, target, line)
			}
		}
		sass := map[string]string{}
		if nvdisasm != "" && target == "sm_90" {
			d, err := exec.Command(nvdisasm, "-c", base+".cubin").CombinedOutput()
			if err != nil {
				t.Fatalf("nvdisasm: %v\n%s", err, d)
			}
			for _, part := range strings.Split(string(d), "//--------------------- .text.")[1:] {
				name, body, _ := strings.Cut(part, " ")
				sass[name] = body
			}
		}
		for _, k := range ks {
			r, ok := regs[k.Name]
			if !ok {
				t.Errorf("%s %s: no register count in ptxas output", k.Name, target)
				continue
			}
			line := fmt.Sprintf("%-32s %-6s %3s registers", k.Name, target, r)
			if body, ok := sass[k.Name]; ok {
				epb := k.Spec.ElemsPerBlock()
				loop, fast, err := sassStats(body)
				if err != nil {
					t.Errorf("%s: %v", k.Name, err)
				} else {
					line += fmt.Sprintf(", loop %3d SASS instructions, %3d per whole block of %2d elements (%.1f per element)",
						loop, fast, epb, float64(fast)/float64(epb))
				}
				if pl := pairLoopStats(body); pl > 0 {
					line += fmt.Sprintf("; main loop %d per 2 blocks (%.1f per element)", pl, float64(pl)/float64(2*epb))
				}
			}
			t.Log(line)
		}
	}
}
