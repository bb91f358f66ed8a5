package kernel

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/backend/cuda/cu"
)

// The PTX-assembly tests (TestScanTilesPtxas, TestScanTilesPtxasTuned,
// TestScanColumnsPtxas, TestPermutePtxas, TestSearchPtxas: every configuration that
// scanPtxas or scanPtxasRaw assembles) also, through checkPTXConfig:
//   - write each configuration's PTX into the folder -ptx-dump (or $GPU_PTX_DUMP)
//     names, one file a configuration named after its test, so that another CUDA
//     version's ptxas can be run over them (scripts/ptxas-dump);
//   - on a machine with a CUDA device, load it through the driver (which compiles it
//     with its own assembler: CUDA 13's on the H200, where CI's ptxas is 11.8's) and
//     require CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 0 for every kernel: no spill and
//     no stack in what actually runs. GPU_PTX_DRIVER=0 turns it off.

var ptxDump = flag.String("ptx-dump", os.Getenv("GPU_PTX_DUMP"), "write the PTX of every configuration the ptxas tests assemble into this folder")

var (
	driverOnce sync.Once
	driverDev  backend.Device
	reEntry    = regexp.MustCompile(`\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)`)
	reFileName = regexp.MustCompile(`[^A-Za-z0-9_.=-]+`)
)

// ptxDriver returns the CUDA device the configurations load on, or nil.
func ptxDriver() backend.Device {
	driverOnce.Do(func() {
		if os.Getenv("GPU_PTX_DRIVER") == "0" {
			return
		}
		if d, err := (cuda.Backend{}).Open(0); err == nil {
			driverDev = d
		}
	})
	return driverDev
}

// checkPTXConfig dumps src (with -ptx-dump) and checks it through the driver (see
// above); without strict (the configurations ptxas may trade spills for occupancy in,
// .minnctapersm) local memory is logged, not failed.
func checkPTXConfig(t testing.TB, src string, strict bool) {
	t.Helper()
	if dir := *ptxDump; dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		name := reFileName.ReplaceAllString(t.Name(), "_") + ".ptx"
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d := ptxDriver()
	if d == nil {
		return
	}
	mod, err := d.LoadModule([]byte(src))
	if err != nil {
		t.Fatalf("the driver rejects the PTX: %v", err)
	}
	defer mod.Unload()
	for _, m := range reEntry.FindAllStringSubmatch(src, -1) {
		f, err := mod.Function(m[1])
		if err != nil {
			t.Fatal(err)
		}
		cf, ok := f.(interface {
			Attribute(cu.FuncAttribute) (int, error)
		})
		if !ok {
			t.Fatalf("%s: a %T has no attributes", m[1], f)
		}
		local, err := cf.Attribute(cu.FuncLocalSizeBytes)
		if err != nil {
			t.Fatal(err)
		}
		regs, _ := cf.Attribute(cu.FuncNumRegs)
		if local != 0 && strict {
			t.Errorf("%s: %d bytes of local memory per thread as the driver compiles it (%d registers): it spills", m[1], local, regs)
		} else if local != 0 {
			t.Logf("%s: driver: %d registers, %d bytes of local memory (reported, not failed)", m[1], regs, local)
		} else if testing.Verbose() {
			t.Logf("%s: driver: %d registers, no local memory", m[1], regs)
		}
	}
}

// TestPTXDriverCheck: a kernel that needs local memory is caught (on a machine with a
// CUDA device).
func TestPTXDriverCheck(t *testing.T) {
	if ptxDriver() == nil {
		t.Skip("no CUDA device")
	}
	src := `.version 7.8
.target sm_80
.address_size 64
.visible .entry uses_local(.param .u64 p, .param .u32 i)
{
	.local .align 4 .b8 buf[256];
	.reg .b64 %rd<4>;
	.reg .b32 %r<4>;
	ld.param.u64 %rd1, [p];
	ld.param.u32 %r1, [i];
	and.b32 %r1, %r1, 63;
	mov.u64 %rd2, buf;
	mul.wide.u32 %rd3, %r1, 4;
	add.u64 %rd2, %rd2, %rd3;
	st.local.u32 [%rd2], %r1;
	ld.local.u32 %r2, [buf+8];
	st.global.u32 [%rd1], %r2;
	ret;
}`
	ft := &fakeT{TB: t}
	checkPTXConfig(ft, src, true)
	if !ft.failed {
		t.Error("a kernel with a local array passed the driver check")
	}
}

// fakeT records a failure instead of failing.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }
func (f *fakeT) Helper()               {}
