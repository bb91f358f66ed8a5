package main

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/ptxsim"
	"github.com/go-gpu/gpu/internal/testenv"
)

// TestRawGraphKernels runs the raw graph baselines' ten kernels (rawEWSpec's PTX, with
// the geometry and arguments the raw rows launch them with) in the PTX simulator, and
// the ten operations with Eval on the CPU backend, on the same random inputs: the same
// values, so the raw rows do the work of ours.
func TestRawGraphKernels(t *testing.T) {
	const n = 4099 // not a multiple of the vector width: the tail loop runs too
	d := cpuDevice(t)
	xs := randFloats(n, 3)
	for i := range xs {
		xs[i] += 0.5 // in (0.25, 1.25): sqrt of y*y stays real either way
	}
	x, err := gpu.FromSlice(d.s, xs)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	y, err := gpu.Full(d.s, float32(math.NaN()), n)
	if err != nil {
		t.Fatal(err)
	}
	defer y.Free()
	if err := tenOps(d.s, x, y); err != nil {
		t.Fatal(err)
	}
	wantX, err := x.ToSlice(bg)
	if err != nil {
		t.Fatal(err)
	}
	wantY, err := y.ToSlice(bg)
	if err != nil {
		t.Fatal(err)
	}

	sx := append([]float32(nil), xs...)
	sy := make([]float32, n)
	for i := range sy {
		sy[i] = float32(math.NaN())
	}
	const xBase, yBase = 1 << 24, 2 << 24
	mem := &ptxsim.Regions{}
	mem.Map(xBase, unsafe.Slice((*byte)(unsafe.Pointer(&sx[0])), 4*n))
	mem.Map(yBase, unsafe.Slice((*byte)(unsafe.Pointer(&sy[0])), 4*n))
	names := map[string]bool{}
	for _, op := range graphOps {
		sp, err := rawEWSpec(op.toY, op.src)
		if err != nil {
			t.Fatal(err)
		}
		src, entry, err := sp.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		names[entry] = true
		m, err := ptxsim.Parse(src)
		if err != nil {
			t.Fatalf("%s: %v", op.src, err)
		}
		f := m.Func(entry)
		if f == nil {
			t.Fatalf("%s: no entry %s", op.src, entry)
		}
		grid, block := sp.Geometry(n, 132)
		out, in := uint64(xBase), uint64(yBase)
		if op.toY {
			out, in = yBase, xBase
		}
		if err := f.Launch(mem, ptxsim.Linear(grid, block), []uint64{out, n, in}); err != nil {
			t.Fatalf("%s: %v", op.src, err)
		}
	}
	// y*y and x*x are one kernel (the operand's name is not part of it): nine.
	if len(names) != 9 {
		t.Errorf("%d distinct kernels, want 9: %v", len(names), names)
	}
	for i := range n {
		for _, c := range []struct {
			name      string
			got, want float32
		}{{"x", sx[i], wantX[i]}, {"y", sy[i], wantY[i]}} {
			if d := math.Abs(float64(c.got - c.want)); !(d <= 1e-6*max(1, math.Abs(float64(c.want)))) {
				t.Fatalf("%s[%d] = %v after the raw kernels, %v after Eval on the CPU", c.name, i, c.got, c.want)
			}
		}
	}
	if xs[0] == sx[0] {
		t.Errorf("x[0] unchanged (%v): the kernels did not run", sx[0])
	}
}

// TestGridDepControl: the programmatic-dependent-launch variant of the raw kernels
// starts each body with the two griddepcontrol instructions and is valid PTX for sm_90
// (assembled with ptxas where the environment has one).
func TestGridDepControl(t *testing.T) {
	var srcs []string
	for _, op := range graphOps {
		sp, err := rawEWSpec(op.toY, op.src)
		if err != nil {
			t.Fatal(err)
		}
		src, entry, err := sp.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		got, err := withGridDepControl(src)
		if err != nil {
			t.Fatal(err)
		}
		body := got[strings.Index(got, ".entry "+entry):]
		body = body[strings.Index(body, "\n{\n")+3:]
		if !strings.HasPrefix(body, "\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n") {
			t.Fatalf("%s: the body starts %q", op.src, body[:min(len(body), 80)])
		}
		if strings.Count(got, "griddepcontrol") != 2 || len(got) != len(src)+len("\tgriddepcontrol.launch_dependents;\n\tgriddepcontrol.wait;\n") {
			t.Fatalf("%s: more than the two instructions changed", op.src)
		}
		srcs = append(srcs, got)
	}
	ptxas := testenv.Ptxas(t)
	dir := t.TempDir()
	for i, src := range srcs {
		in := filepath.Join(dir, "k"+strconv.Itoa(i)+".ptx")
		if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command(ptxas, "-arch=sm_90", in, "-o", filepath.Join(dir, "k.cubin")).CombinedOutput(); err != nil {
			t.Fatalf("ptxas %s: %v\n%s", graphOps[i].src, err, out)
		}
	}
}
