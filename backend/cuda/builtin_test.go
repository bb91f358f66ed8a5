package cuda

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-gpu/gpu/internal/ptxsim"
	"github.com/go-gpu/gpu/internal/testenv"
)

// TestBuiltinSim runs the built-in spins on the PTX simulator (whose %globaltimer is
// the host's clock): spin lasts at least its nanoseconds, and spin_copy_u32 copies
// every word of a ragged grid after its spin and writes its stamps (start, end) at
// least the spin apart.
func TestBuiltinSim(t *testing.T) {
	mod, err := ptxsim.Parse(builtinPTX)
	if err != nil {
		t.Fatal(err)
	}
	const ns = 3 * time.Millisecond
	start := time.Now()
	if err := mod.Func("spin").Launch(&ptxsim.Regions{}, ptxsim.Linear(1, 1), []uint64{uint64(ns)}); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el < ns {
		t.Fatalf("spin of %v returned after %v", ns, el)
	}
	const n, dstBase, srcBase, stBase = 1000, 1 << 20, 2 << 20, 3 << 20
	src, dst, stamps := make([]byte, 4*n), make([]byte, 4*n), make([]byte, 16)
	for i := range n {
		binary.LittleEndian.PutUint32(src[4*i:], uint32(i*2654435761+7))
		binary.LittleEndian.PutUint32(dst[4*i:], 0xa5a5a5a5)
	}
	mem := &ptxsim.Regions{}
	mem.Map(dstBase, dst)
	mem.Map(srcBase, src)
	mem.Map(stBase, stamps)
	if err := mod.Func("spin_copy_u32").Launch(mem, ptxsim.Linear(3, 128), []uint64{dstBase, srcBase, n, uint64(ns), stBase}); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got, want := binary.LittleEndian.Uint32(dst[4*i:]), binary.LittleEndian.Uint32(src[4*i:]); got != want {
			t.Fatalf("word %d: %#x, want %#x", i, got, want)
		}
	}
	t0, t1 := binary.LittleEndian.Uint64(stamps), binary.LittleEndian.Uint64(stamps[8:])
	if t1 < t0 || time.Duration(t1-t0) < ns {
		t.Fatalf("stamps %d, %d: less than the spin of %v apart", t0, t1, ns)
	}
}

// TestBuiltinPtxas assembles the built-in kernels for sm_90 with the local ptxas.
func TestBuiltinPtxas(t *testing.T) {
	p := testenv.Ptxas(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "builtin.ptx")
	if err := os.WriteFile(in, []byte(builtinPTX), 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command(p, "-arch=sm_90", in, "-o", filepath.Join(dir, "builtin.cubin")).CombinedOutput(); err != nil {
		t.Fatalf("ptxas: %v\n%s", err, b)
	}
}
