package kernel

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// mmSpecs lists every kernel MatMul generates: the four types, the four layouts, TF32.
func mmSpecs() []*MatMul {
	var out []*MatMul
	for _, dt := range []dtype.DType{dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64} {
		for _, tf32 := range []bool{false, true} {
			if tf32 && dt != dtype.Float32 {
				continue
			}
			for _, ta := range []bool{false, true} {
				for _, tb := range []bool{false, true} {
					out = append(out, &MatMul{Type: dt, TransA: ta, TransB: tb, TF32: tf32})
				}
			}
		}
	}
	return out
}

// mmTileSpecs lists the tensor-core kernels of every tiling but the default (which
// mmSpecs has), for the 16-bit types and TF32 in two layouts (A and B as stored, and
// both transposed).
func mmTileSpecs() []*MatMul {
	var out []*MatMul
	for tile := 1; tile <= len(mmTensorTiles); tile++ {
		if tile == mmDefaultTile {
			continue
		}
		for _, sp := range []MatMul{{Type: dtype.BFloat16}, {Type: dtype.Float16, TransA: true, TransB: true},
			{Type: dtype.Float32, TF32: true}, {Type: dtype.Float32, TF32: true, TransA: true, TransB: true}} {
			sp.Tile = tile
			out = append(out, &sp)
		}
	}
	return out
}

// TestMatMulPtxas assembles every MatMul kernel with ptxas for sm_80 and sm_90 and
// checks that none spills or uses a stack frame; it logs the registers and shared
// memory (go test -v). It skips without ptxas (PTXAS=/opt/ctk/usr/bin/ptxas).
func TestMatMulPtxas(t *testing.T) {
	p := scanPtxasPath()
	if p == "" {
		t.Skip("ptxas not found ($PTXAS, PATH, /opt/ctk/usr/bin/ptxas)")
	}
	for _, arch := range [][2]int{{8, 0}, {9, 0}} {
		specs := mmSpecs()
		if arch[0] == 9 {
			specs = append(specs, mmTileSpecs()...)
		}
		for _, sp := range specs {
			t.Run(fmt.Sprintf("sm_%d%d/%s", arch[0], arch[1], sp.Key()), func(t *testing.T) {
				t.Parallel()
				src, _, err := sp.PTX(arch[0], arch[1])
				if err != nil {
					t.Fatal(err)
				}
				dir := t.TempDir()
				in := filepath.Join(dir, "m.ptx")
				os.WriteFile(in, []byte(src), 0o644)
				out, err := exec.Command(p, fmt.Sprintf("-arch=sm_%d%d", arch[0], arch[1]), "-v", in, "-o", filepath.Join(dir, "m.cubin")).CombinedOutput()
				if err != nil {
					var nb strings.Builder
					for i, l := range strings.Split(src, "\n") {
						fmt.Fprintf(&nb, "%d\t%s\n", i+1, l)
					}
					t.Fatalf("ptxas: %v\n%s\n%.20000s", err, out, nb.String())
				}
				log := string(out)
				if st, ld := scanSpills(log); st != 0 || ld != 0 {
					t.Errorf("spills: %d bytes stored, %d loaded\n%s", st, ld, log)
				}
				for _, m := range scanReStack.FindAllStringSubmatch(log, -1) {
					if m[1] != "0" {
						t.Errorf("stack frame: %s", m[0])
					}
				}
				regs, _ := scanRegs(log)
				t.Logf("%d registers, %d bytes of dynamic shared memory, %d threads", regs, sp.SharedBytes(), sp.Threads())
			})
		}
	}
}
