package main

import (
	"encoding/binary"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/bench"
	"github.com/go-gpu/gpu/internal/ptxsim"
	"github.com/go-gpu/gpu/internal/testenv"
)

// Random123's known answers for Philox2x32-10 (kat_vectors).
func TestPhilox(t *testing.T) {
	for _, tc := range []struct{ x0, x1, key, w0, w1 uint32 }{
		{0, 0, 0, 0xff1dae59, 0x6cd10df2},
		{0xffffffff, 0xffffffff, 0xffffffff, 0x2c3f628b, 0xab4fd7ad},
		{0x243f6a88, 0x85a308d3, 0x13198a2e, 0xdd7ce038, 0xf62a4c12},
	} {
		if w0, w1 := philox2x32(tc.x0, tc.x1, tc.key); w0 != tc.w0 || w1 != tc.w1 {
			t.Errorf("philox2x32(%#x, %#x, %#x) = %#x %#x, want %#x %#x", tc.x0, tc.x1, tc.key, w0, w1, tc.w0, tc.w1)
		}
	}
	if u := philoxUniform(0, 0, 0); u != float32(0xff1dae59>>8)/(1<<24) {
		t.Errorf("philoxUniform(0, 0, 0) = %v", u)
	}
}

// cpuDevice opens the CPU backend as the suite sees it.
func cpuDevice(t *testing.T) *device {
	t.Helper()
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	return &device{dev: d, s: d.DefaultStream(), backend: "cpu"}
}

// interpRun runs kernel name of src in the PTX simulator over the float32
// buffers (mapped at 1 MiB apart, passed as the first len(bufs) arguments)
// and the scalar arguments after them.
func interpRun(t *testing.T, src, name string, grid, block uint32, bufs [][]float32, scalars ...uint64) {
	t.Helper()
	m, err := ptxsim.Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	f := m.Func(name)
	if f == nil {
		t.Fatalf("no kernel %s", name)
	}
	mem := &ptxsim.Regions{}
	var args []uint64
	for i, b := range bufs {
		base := uint64(1+i) << 24
		mem.Map(base, unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 4*len(b)))
		args = append(args, base)
	}
	if err := f.Launch(mem, ptxsim.Linear(int(grid), int(block)), append(args, scalars...)); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

func randFloats(n int, seed uint32) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = philoxUniform(uint32(i), 7, seed) - 0.25
	}
	return out
}

// TestUserKernels runs the PTX kernels in the PTX simulator and the Go
// functions on the CPU backend on the same inputs: bit for bit the same
// results, the ones the kernels are meant to compute.
func TestUserKernels(t *testing.T) {
	d := cpuDevice(t)
	k, err := kernelsOf(d)
	if err != nil {
		t.Fatal(err)
	}
	s := d.s
	onCPU := func(fn *gpu.Function, cfg gpu.LaunchConfig, ins [][]float32, outLen []int, scalars ...any) [][]float32 {
		t.Helper()
		var args []any
		var outs []*gpu.Array[float32]
		for _, l := range outLen {
			a, err := gpu.Full(s, float32(math.NaN()), l)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Free()
			outs = append(outs, a)
			args = append(args, gpu.Out(a))
		}
		for _, in := range ins {
			a, err := gpu.FromSlice(s, in)
			if err != nil {
				t.Fatal(err)
			}
			defer a.Free()
			args = append(args, gpu.In(a))
		}
		if err := s.Launch(fn, cfg, append(args, scalars...)...); err != nil {
			t.Fatal(err)
		}
		var res [][]float32
		for _, a := range outs {
			v, err := a.ToSlice(bg)
			if err != nil {
				t.Fatal(err)
			}
			res = append(res, v)
		}
		return res
	}
	nans := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(math.NaN())
		}
		return v
	}
	same := func(what string, got, want []float32) {
		t.Helper()
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Errorf("%s: element %d is %v, want %v", what, i, got[i], want[i])
				return
			}
		}
	}
	cfg := func(grid, block int) gpu.LaunchConfig {
		return gpu.LaunchConfig{Grid: gpu.Dim3{X: grid}, Block: gpu.Dim3{X: block}}
	}

	// copy_unchecked: 3 blocks of 8 threads copy 24 elements.
	src := randFloats(24, 1)
	dst := nans(24)
	interpRun(t, userPTX, "copy_unchecked", 3, 8, [][]float32{dst, src})
	same("copy_unchecked (PTX)", dst, src)
	same("copy_unchecked (Go)", onCPU(k.copyUnchecked, cfg(3, 8), [][]float32{src}, []int{24})[0], src)

	// copy_checked: 3 blocks of 8 threads, n = 21: the last 3 stay NaN.
	want := append(slices.Clone(src[:21]), nans(3)...)
	dst = nans(24)
	interpRun(t, userPTX, "copy_checked", 3, 8, [][]float32{dst, src}, 21)
	same("copy_checked (PTX)", dst, want)
	same("copy_checked (Go)", onCPU(k.copyChecked, cfg(3, 8), [][]float32{src}, []int{24}, uint64(21))[0], want)

	// rand_f32: the Go mirror's numbers.
	want = make([]float32, 32)
	for i := range want {
		want[i] = philoxUniform(uint32(i), 5, randSeed)
	}
	dst = nans(32)
	interpRun(t, userPTX, "rand_f32", 4, 8, [][]float32{dst}, randSeed, 5)
	same("rand_f32 (PTX)", dst, want)
	same("rand_f32 (Go)", onCPU(k.rand, cfg(4, 8), nil, []int{32}, uint32(randSeed), uint32(5))[0], want)

	// add_f32 (n first, then x1, x2, y on the PTX side).
	x1, x2 := randFloats(20, 2), randFloats(20, 3)
	want = make([]float32, 24)
	for i := range want {
		want[i] = float32(math.NaN())
		if i < 20 {
			want[i] = x1[i] + x2[i]
		}
	}
	y := nans(24)
	m, err := ptxsim.Parse(userPTX)
	if err != nil {
		t.Fatal(err)
	}
	mem := &ptxsim.Regions{}
	for i, b := range [][]float32{x1, x2, y} {
		mem.Map(uint64(1+i)<<24, unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 4*len(b)))
	}
	if err := m.Func("add_f32").Launch(mem, ptxsim.Linear(3, 8), []uint64{20, 1 << 24, 2 << 24, 3 << 24}); err != nil {
		t.Fatal(err)
	}
	same("add_f32 (PTX)", y, want)
	{
		a1, _ := gpu.FromSlice(s, x1)
		a2, _ := gpu.FromSlice(s, x2)
		ay, _ := gpu.FromSlice(s, nans(24))
		if err := s.Launch(k.add, cfg(3, 8), uint64(20), gpu.In(a1), gpu.In(a2), gpu.Out(ay)); err != nil {
			t.Fatal(err)
		}
		got, _ := ay.ToSlice(bg)
		same("add_f32 (Go)", got, want)
		a1.Free()
		a2.Free()
		ay.Free()
	}

	// add_mat_vec: 3 columns of m = 10 (blocks of 4 threads stride along them).
	const mm, cols = 10, 3
	x1, x2 = randFloats(mm*cols, 4), randFloats(cols, 5)
	want = make([]float32, mm*cols)
	for j := range cols {
		for i := range mm {
			want[j*mm+i] = x1[j*mm+i] + x2[j]
		}
	}
	y = nans(mm * cols)
	mem = &ptxsim.Regions{}
	for i, b := range [][]float32{x1, x2, y} {
		mem.Map(uint64(1+i)<<24, unsafe.Slice((*byte)(unsafe.Pointer(&b[0])), 4*len(b)))
	}
	if err := m.Func("add_mat_vec").Launch(mem, ptxsim.Linear(cols, 4), []uint64{mm, 1 << 24, 2 << 24, 3 << 24}); err != nil {
		t.Fatal(err)
	}
	same("add_mat_vec (PTX)", y, want)
	{
		a1, _ := gpu.FromSlice(s, x1)
		a2, _ := gpu.FromSlice(s, x2)
		ay, _ := gpu.FromSlice(s, nans(mm*cols))
		if err := s.Launch(k.addMatVec, cfg(cols, 4), uint64(mm), gpu.In(a1), gpu.In(a2), gpu.Out(ay)); err != nil {
			t.Fatal(err)
		}
		got, _ := ay.ToSlice(bg)
		same("add_mat_vec (Go)", got, want)
		a1.Free()
		a2.Free()
		ay.Free()
	}
}

// TestByvalLayout checks that the by-value struct has the C layout the PTX
// reads: n, then x1[k], x2[k], y[k] of 16-byte {pointer, length} slices.
func TestByvalLayout(t *testing.T) {
	var a byvalArgs
	if unsafe.Sizeof(devSlice{}) != 16 || unsafe.Offsetof(a.Slices) != 8 || unsafe.Offsetof(a.Slices[0].Len) != 8 {
		t.Fatalf("layout: slice %d bytes, slices at %d", unsafe.Sizeof(devSlice{}), unsafe.Offsetof(a.Slices))
	}
	for k := 1; k <= maxSlices; k++ {
		for i := range 3 * k {
			a.Slices[i].Ptr = gpu.DevicePtr(0x1000 + i)
		}
		b := gpu.ByValue(a)[:byvalSize(k)]
		for arr := range 3 {
			for j := range k {
				if p := binary.LittleEndian.Uint64(b[byvalOffset(k, arr, j):]); p != uint64(0x1000+arr*k+j) {
					t.Errorf("k=%d: array %d slice %d at offset %d reads %#x", k, arr, j, byvalOffset(k, arr, j), p)
				}
			}
		}
		if !strings.Contains(byvalPTX(), ".b8 args["+strconv.Itoa(byvalSize(k))+"]") {
			t.Errorf("the PTX of add_slices%d does not take %d bytes", k, byvalSize(k))
		}
	}
}

// TestPTXAssembles assembles the suite's PTX with ptxas for sm_90 when ptxas
// is installed ($PTXAS, PATH or /opt/ctk/usr/bin/ptxas), and checks that
// metaldevrt's device function stays a call (the raw index baselines' module too).
func TestPTXAssembles(t *testing.T) {
	ptxas := testenv.Ptxas(t)
	dir := t.TempDir()
	for name, src := range map[string]string{"user": userPTX, "byval": byvalPTX(), "rawindex": rawIndexPTX, "rawfloor": rawFloorPTX, "smcopy": rawSMCopyPTX, "rawsearch": rawSearchPTX} {
		in := filepath.Join(dir, name+".ptx")
		if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(ptxas, "-arch=sm_90", "-v", in, "-o", filepath.Join(dir, name+".cubin")).CombinedOutput()
		if err != nil {
			t.Fatalf("ptxas %s: %v\n%s", name, err, out)
		}
		if strings.Contains(string(out), "spill") && !strings.Contains(string(out), "0 bytes spill stores") {
			t.Errorf("%s spills:\n%s", name, out)
		}
		if name == "user" && !strings.Contains(string(out), "Function properties for addf") {
			t.Errorf("addf was inlined:\n%s", out)
		}
	}
}

func TestBalancedFactors(t *testing.T) {
	for _, tc := range []struct {
		n, k int
		want []int
	}{
		{16384, 2, []int{128, 128}},
		{16384, 3, []int{32, 32, 16}},
		{4096, 3, []int{16, 16, 16}},
		{256, 3, []int{8, 8, 4}},
		{1000, 2, []int{40, 25}},
		{7, 3, []int{7, 1, 1}},
		{1, 2, []int{1, 1}},
	} {
		got := balancedFactors(tc.n, tc.k)
		p := 1
		for _, f := range got {
			p *= f
		}
		if !slices.Equal(got, tc.want) || p != tc.n {
			t.Errorf("balancedFactors(%d, %d) = %v, want %v", tc.n, tc.k, got, tc.want)
		}
	}
	if s := largeShape(3, 16384); !slices.Equal(s, []int{128, 128, 16384}) {
		t.Errorf("3d /16k shape %v, the peers' is (128, 128, 16384)", s)
	}
	if s := largeShape(4, 16384); !slices.Equal(s, []int{32, 32, 16, 16384}) {
		t.Errorf("4d /16k shape %v, the peers' is (32, 32, 16, 16384)", s)
	}
}

// TestPeerRows checks the suite against bench.PeerNames: every row names a
// registered benchmark, and every benchmark of Metal.jl's suite that the
// peers measure (array/ on device memory, kernel/, integration/) has a row.
func TestPeerRows(t *testing.T) {
	for _, p := range bench.PeerNames {
		if _, ok := bench.Default.Lookup(p.Ours); !ok {
			t.Errorf("PeerNames row %s: no such benchmark", p.Ours)
		}
	}
	for _, b := range bench.Default.All() {
		switch {
		case strings.HasPrefix(b.Name, "array/shared/"):
			if _, _, ok := bench.PeerKey(b.Name); ok {
				t.Errorf("%s has a peer row: the peers have no unified memory", b.Name)
			}
			continue
		case strings.HasPrefix(b.Name, "array/"), strings.HasPrefix(b.Name, "kernel/"), strings.HasPrefix(b.Name, "integration/"):
		default:
			continue
		}
		if _, _, ok := bench.PeerKey(b.Name); !ok {
			t.Errorf("%s has no PeerNames row", b.Name)
		}
	}
	// The S rows are timed as the peers time theirs; the /16k rows by events.
	for _, b := range bench.Default.All() {
		if b.Group != "array" && b.Group != "kernel" && b.Group != "integration" || b.Name == "kernel/launch" ||
			strings.HasPrefix(b.Name, "array/copyto/") || strings.HasPrefix(b.Name, "array/construct") {
			continue
		}
		large := strings.HasSuffix(b.Name, bench.LargeSuffix)
		wantGPU := large && !strings.Contains(b.Name, "/scalar")
		if (b.Mode == bench.GPU) != wantGPU || (!large && b.Iters != 1) {
			t.Errorf("%s: mode %v, %d calls per sample", b.Name, b.Mode, b.Iters)
		}
	}
}
