package cublas

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/go-gpu/gpu/internal/dl"
	"github.com/go-gpu/gpu/internal/dl/dltest"
)

// TestLtWithoutLt: the fake libcublas has no cuBLASLt entry points: GemmEx still works
// (TestCalls), and every cuBLASLt call returns an error matching ErrUnavailable that
// says so, without a crash.
func TestLtWithoutLt(t *testing.T) {
	if fakeLib == "" {
		t.Skip(fakeSkip)
	}
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	if LtAvailable() {
		t.Fatal("LtAvailable() with a library that has no cublasLt symbols")
	}
	if _, err := LtCreate(ctx0); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("LtCreate: %v, want ErrUnavailable", err)
	}
	if _, err := (LtHandle{}).Plan(&LtProblem{}); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Plan: %v, want ErrUnavailable", err)
	}
}

// TestAlignment: the largest power of two up to 256 dividing an address.
func TestAlignment(t *testing.T) {
	for _, c := range []struct {
		p    uintptr
		want uint32
	}{{0, 256}, {0x1000, 256}, {0x1080, 128}, {0x1002, 2}, {0x1001, 1}, {0x1010, 16}} {
		if got := Alignment(c.p); got != c.want {
			t.Errorf("Alignment(%#x) = %d, want %d", c.p, got, c.want)
		}
	}
}

// TestLtAlgoFields: the offsets of cublasLtMatmulHeuristicResult_t's fields.
func TestLtAlgoFields(t *testing.T) {
	var a LtAlgo
	a.raw[0] = 21
	a.raw[8] = 1 << 20
	a.raw[9] = uint64(0x3f800000)<<32 | 15
	if a.ID() != 21 || a.Workspace() != 1<<20 || a.state() != StatusNotSupported || a.Waves() != 1 {
		t.Fatalf("ID %d, workspace %d, state %v, waves %v", a.ID(), a.Workspace(), a.state(), a.Waves())
	}
}

// TestLtCalls: with a fake libcublasLt beside the fake libcublas (testdata/
// fakecublaslt.c, cublasLt.h's prototypes), every cuBLASLt call passes its arguments
// as C receives them: the descriptors' attributes, the preferences, the heuristic's
// results (count, failed states dropped, workspace sizes), and cublasLtMatmul's
// sixteen arguments, for float32 and float64 scalars and a batch.
func TestLtCalls(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakeLib == "" {
			t.Skip(fakeSkip)
		}
		dir := t.TempDir()
		b, err := os.ReadFile(fakeLib)
		if err != nil {
			t.Fatal(err)
		}
		cb := filepath.Join(dir, "libcublas.so.13")
		if err := os.WriteFile(cb, b, 0o755); err != nil {
			t.Fatal(err)
		}
		if p, skip := dltest.Build(filepath.Join("testdata", "fakecublaslt.c"), dir, "libcublasLt.so.13"); p == "" {
			t.Skip(skip)
		}
		runChild(t, "TestLtCalls", EnvLibrary+"="+cb)
		return
	}
	if !LtAvailable() {
		t.Fatalf("LtAvailable() false: %v", lib.ltErr)
	}
	var fk dl.Table
	last := fk.Func("fake_lt_last")
	l, err := dl.Open(filepath.Join(filepath.Dir(Path()), "libcublasLt.so.13"))
	if err != nil {
		t.Fatal(err)
	}
	if err := fk.Bind(l); err != nil {
		t.Fatal(err)
	}
	h, err := LtCreate(ctx0)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Destroy()
	p := &LtProblem{TransA: OpT, TransB: OpN, M: 5, N: 7, K: 3,
		A: Matrix{Type: R32F, LD: 4}, B: Matrix{Type: R32F, LD: 9}, C: Matrix{Type: R32F, LD: 6},
		Batch: 1, Compute: Compute32FFastTF32, Scale: R32F}
	pl, err := h.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	defer pl.Destroy()
	algos, err := pl.Heuristics(3, 8<<20, 256, 16, 8)
	if err != nil {
		t.Fatal(err)
	}
	if len(algos) != 2 || algos[0].ID() != 100 || algos[1].ID() != 101 || algos[1].Workspace() != 1<<20 || algos[1].Waves() != 1.5 {
		t.Fatalf("heuristics: %d results %+v", len(algos), algos)
	}
	if err := pl.Matmul(Scalar(math.Float32bits(1.5)), 0xA000, 0xB000, Scalar(math.Float32bits(-2)), 0xC000, &algos[0],
		0xD000, 8<<20, 0xE000); err != nil {
		t.Fatal(err)
	}
	want := "matmul compute=77 scale=0 ta=1 tb=0 alpha=1.5 A=0xa000[0:3x5/4/b1/s0] B=0xb000[0:3x7/9/b1/s0] beta=-2 " +
		"C=0xc000[0:5x7/6/b1/s0] D=C algo=100 ws=0xd000/8388608 stream=0xe000 heur{requested=3 ws=8388608 align=256/16/8/8}"
	if got := dl.GoString(last.Call()); got != want {
		t.Errorf("cublasLtMatmul received\n%s\nwant\n%s", got, want)
	}
	// The second algorithm refuses (id 101); too little workspace is refused here.
	if err := pl.Matmul(0, 0xA000, 0xB000, 0, 0xC000, &algos[1], 0xD000, 8<<20, 0xE000); !errors.Is(err, ErrNotSupported) {
		t.Errorf("algorithm 101: %v, want ErrNotSupported", err)
	}
	if err := pl.Matmul(0, 0xA000, 0xB000, 0, 0xC000, &algos[1], 0xD000, 1<<10, 0xE000); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("short workspace: %v, want ErrInvalidValue", err)
	}

	// float64, batched, transposed B.
	p = &LtProblem{TransA: OpN, TransB: OpT, M: 2, N: 3, K: 4,
		A: Matrix{Type: R64F, LD: 2, Stride: 8}, B: Matrix{Type: R64F, LD: 3, Stride: 0}, C: Matrix{Type: R64F, LD: 2, Stride: 6},
		Batch: 5, Compute: Compute64F, Scale: R64F}
	pl2, err := h.Plan(p)
	if err != nil {
		t.Fatal(err)
	}
	defer pl2.Destroy()
	algos, err = pl2.Heuristics(1, 0, 8, 8, 8)
	if err == nil || !errors.Is(err, ErrNotSupported) {
		t.Fatalf("one algorithm requested of a fake that returns requested-1: %v, %v", algos, err)
	}
	algos, err = pl2.Heuristics(2, 0, 8, 8, 8)
	if err != nil || len(algos) != 1 {
		t.Fatalf("heuristics: %v, %v", algos, err)
	}
	if err := pl2.Matmul(Scalar(math.Float64bits(0.25)), 0xA000, 0xB000, Scalar(math.Float64bits(1)), 0xC000, &algos[0],
		0, 0, 0); err != nil {
		t.Fatal(err)
	}
	want = "matmul compute=70 scale=1 ta=0 tb=1 alpha=0.25 A=0xa000[1:2x4/2/b5/s8] B=0xb000[1:3x4/3/b5/s0] beta=1 " +
		"C=0xc000[1:2x3/2/b5/s6] D=C algo=100 ws=(nil)/0 stream=(nil) heur{requested=2 ws=0 align=8/8/8/8}"
	if got := dl.GoString(last.Call()); got != want {
		t.Errorf("cublasLtMatmul received\n%s\nwant\n%s", got, want)
	}
}
