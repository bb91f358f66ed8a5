package cublas

import (
	"errors"
	"testing"
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
