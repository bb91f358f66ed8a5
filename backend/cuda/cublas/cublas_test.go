//go:build cgo && unix

package cublas

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The tests load a fake libcublas (testdata/fakecublas.c, compiled here with the C
// compiler) named by GPU_CUBLAS_LIBRARY. The library loads once per process, so the
// scenarios that need another environment run in a child process: the test binary
// itself, selected by childEnv.

const childEnv = "CUBLAS_TEST_CHILD"

var fakeLib, fakeSkip string

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cublas-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeLib, fakeSkip = buildFake(dir)
	if fakeLib != "" {
		os.Setenv(EnvLibrary, fakeLib)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func buildFake(dir string) (path, skip string) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Sprintf("no C compiler (%s) to build the fake libcublas: %v", cc, err)
	}
	path = filepath.Join(dir, "libcublas.so.13")
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", path, filepath.Join("testdata", "fakecublas.c")).CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("building the fake libcublas failed: %v\n%s", err, out)
	}
	return path, ""
}

func needFake(t *testing.T) {
	t.Helper()
	if fakeLib == "" {
		t.Skip(fakeSkip)
	}
	if err := Load(); err != nil {
		t.Fatal(err)
	}
}

// last returns the fake's record of its last call.
func last(t *testing.T) string {
	t.Helper()
	fn := lookup(lib.handle, "fake_last")
	if fn == 0 {
		t.Fatal("the fake has no fake_last")
	}
	var a [MaxArgs]uint64
	return cString(callC(fn, &a, 0, 0))
}

func TestLoadFake(t *testing.T) {
	needFake(t)
	s, err := Library()
	if err != nil {
		t.Fatal(err)
	}
	if want := "cuBLAS 13.1.7 (" + fakeLib; !strings.HasPrefix(s, want) {
		t.Errorf("Library() = %q, want prefix %q", s, want)
	}
	if Path() != fakeLib {
		t.Errorf("Path() = %q", Path())
	}
	if a, b, c, err := Version(); err != nil || a != 13 || b != 1 || c != 7 {
		t.Errorf("Version() = %d.%d.%d, %v", a, b, c, err)
	}
}

// TestCalls checks that every argument reaches the library where its prototype wants
// it: ints, 64-bit strides, size_t, negative enums, float and double scalars by
// reference, outputs written back.
func TestCalls(t *testing.T) {
	needFake(t)
	h, err := Create()
	if err != nil {
		t.Fatal(err)
	}
	if h == 0 || last(t) != fmt.Sprintf("create %#x", uintptr(h)) {
		t.Fatalf("Create: handle %#x, record %q", uintptr(h), last(t))
	}
	hs := fmt.Sprintf("%#x", uintptr(h))
	check := func(what string, err error, want string) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		if got := last(t); got != want {
			t.Errorf("%s: the library saw %q, want %q", what, got, want)
		}
	}
	check("SetStream", h.SetStream(0xabc0), "stream "+hs+" 0xabc0")
	check("SetWorkspace", h.SetWorkspace(0x7f0000001000, 32<<20), "workspace "+hs+" 0x7f0000001000 33554432")
	check("SetMathMode", h.SetMathMode(DefaultMath|DisallowReducedPrecisionReduction), "math "+hs+" 16")
	check("SetPointerMode", h.SetPointerMode(PointerHost), "pointer "+hs+" 0")
	v, err := h.LibraryVersion()
	check("LibraryVersion", err, "version "+hs)
	if v != 130107 {
		t.Errorf("LibraryVersion = %d", v)
	}
	f32 := func(x float32) Scalar { return Scalar(math.Float32bits(x)) }
	f64 := func(x float64) Scalar { return Scalar(math.Float64bits(x)) }
	check("GemmEx", h.GemmEx(OpT, OpN, 3, 5, 7, f32(1.5),
		Matrix{Ptr: 0x1000, Type: R16BF, LD: 9}, Matrix{Ptr: 0x2000, Type: R16BF, LD: 11}, f32(-0.25),
		Matrix{Ptr: 0x3000, Type: R16BF, LD: 13}, Compute32F, GemmDefault),
		"gemm "+hs+" ta=1 tb=0 m=3 n=5 k=7 alpha=1.5 A=0x1000/14/9 B=0x2000/14/11 beta=-0.25 C=0x3000/14/13 compute=68 algo=-1")
	check("GemmStridedBatchedEx", h.GemmStridedBatchedEx(OpN, OpT, 128, 64, 32, f64(2.5),
		Matrix{Ptr: 0x10000, Type: R64F, LD: 128, Stride: 1 << 40}, Matrix{Ptr: 0x20000, Type: R64F, LD: 32, Stride: 0},
		f64(1e-300), Matrix{Ptr: 0x30000, Type: R64F, LD: 130, Stride: 3 << 33}, 256, Compute64F, GemmDefault),
		"batched "+hs+" ta=0 tb=1 m=128 n=64 k=32 alpha=2.5 A=0x10000/1/128/1099511627776 B=0x20000/1/32/0 beta=1e-300 "+
			"C=0x30000/1/130/25769803776 batch=256 compute=70 algo=-1")
	check("TF32", h.GemmEx(OpN, OpN, 1, 1, 1, f32(1), Matrix{Ptr: 8, Type: R32F, LD: 1}, Matrix{Ptr: 16, Type: R32F, LD: 1},
		f32(0), Matrix{Ptr: 24, Type: R32F, LD: 1}, Compute32FFastTF32, GemmDefault),
		"gemm "+hs+" ta=0 tb=0 m=1 n=1 k=1 alpha=1 A=0x8/0/1 B=0x10/0/1 beta=0 C=0x18/0/1 compute=77 algo=-1")
	check("Destroy", h.Destroy(), "destroy "+hs)
}

func TestStatusErrors(t *testing.T) {
	needFake(t)
	h, err := Create()
	if err != nil {
		t.Fatal(err)
	}
	err = h.GemmEx(OpN, OpN, 0xBAD, 1, 1, 0, Matrix{LD: 1}, Matrix{LD: 1}, 0, Matrix{LD: 1}, Compute32F, GemmDefault)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrInvalidValue) || e.Op != "cublasGemmEx" || e.Name != "FAKE_7" ||
		e.Message != "an invalid value was passed" {
		t.Errorf("GemmEx(m=0xBAD) = %#v", err)
	}
	if got := err.Error(); got != "cublas: cublasGemmEx: FAKE_7: an invalid value was passed" {
		t.Errorf("Error() = %q", got)
	}
	if err := h.SetMathMode(99); !errors.Is(err, ErrNotSupported) || errors.Is(err, ErrInvalidValue) {
		t.Errorf("SetMathMode(99) = %v", err)
	}
	if StatusName(StatusNotSupported) != "FAKE_15" {
		t.Errorf("StatusName = %q", StatusName(StatusNotSupported))
	}
	h.Destroy()
}

func TestNames(t *testing.T) {
	if StatusInvalidValue.String() != "CUBLAS_STATUS_INVALID_VALUE" || Status(99).String() != "cublasStatus(99)" {
		t.Error("status names")
	}
	if !errors.Is(unavailable("x", "y"), ErrUnavailable) || errors.Is(ErrInvalidValue, ErrUnavailable) {
		t.Error("sentinels")
	}
}

// runChild runs the test named name in a child process with env added, and returns its
// output; the child's test does the checking.
func runChild(t *testing.T, name string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, childEnv+"=1")...)
	out, err := cmd.CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^--- PASS: `+name).Match(out) {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
}

// TestMissingLibrary: a library that can't be found gives a clear error on every call,
// naming what was tried.
func TestMissingLibrary(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		runChild(t, "TestMissingLibrary", EnvLibrary+"=/nonexistent/libcublas.so.13")
		return
	}
	err := Load()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/libcublas.so.13") ||
		!strings.Contains(err.Error(), EnvLibrary) {
		t.Fatalf("Load() = %v", err)
	}
	if _, err := Create(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cublasCreate_v2") {
		t.Errorf("Create() = %v", err)
	}
	if _, err := Library(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Library() = %v", err)
	}
	if Path() != "" || StatusName(StatusAllocFailed) != "CUBLAS_STATUS_ALLOC_FAILED" {
		t.Error("Path or StatusName without a library")
	}
}

// TestNotCublas: a library without cuBLAS's entry points is refused, naming them.
func TestNotCublas(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakeLib == "" {
			t.Skip(fakeSkip)
		}
		runChild(t, "TestNotCublas", EnvLibrary+"=libc.so.6")
		return
	}
	if err := Load(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "lacks cublasCreate_v2") {
		t.Fatalf("Load() = %v", err)
	}
}

// TestCreateFails: a library that loads but cannot make a handle (no driver, an older
// driver than the library needs) fails Create with the library's status.
func TestCreateFails(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakeLib == "" {
			t.Skip(fakeSkip)
		}
		runChild(t, "TestCreateFails", "FAKE_CUBLAS_CREATE_FAIL=1")
		return
	}
	if _, err := Create(); !errors.Is(err, ErrNotInitialized) {
		t.Fatalf("Create() = %v", err)
	}
}

// TestLtBeside: a library named by its path gets libcublasLt from its directory first.
func TestLtBeside(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if fakeLib == "" {
			t.Skip(fakeSkip)
		}
		dir := t.TempDir()
		lt := filepath.Join(dir, "libcublasLt.so.13")
		cb := filepath.Join(dir, "libcublas.so.13")
		for _, p := range []string{lt, cb} {
			b, _ := os.ReadFile(fakeLib)
			os.WriteFile(p, b, 0o755)
		}
		runChild(t, "TestLtBeside", EnvLibrary+"="+cb)
		return
	}
	s, err := Library()
	if err != nil || !strings.HasSuffix(s, ", with libcublasLt.so.13)") {
		t.Fatalf("Library() = %q, %v", s, err)
	}
}
