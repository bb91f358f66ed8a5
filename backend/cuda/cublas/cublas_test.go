package cublas

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda/cu"
	"github.com/go-gpu/gpu/internal/dl"
	"github.com/go-gpu/gpu/internal/dl/dltest"
)

// The tests load a fake libcublas (testdata/fakecublas.c) named by GPU_CUBLAS_LIBRARY,
// and the fake CUDA driver of package cu (../cu/testdata/fakecuda.c) named by
// GPU_CUDA_LIBRARY, for the contexts: both compiled by the C compiler run as a program
// (package dltest), so the same tests check the cgo and the CGO_ENABLED=0 build. The
// library loads once per process, so the scenarios that need another environment run
// in a child process: the test binary itself, selected by childEnv.

const childEnv = "CUBLAS_TEST_CHILD"

var (
	fakeLib, fakeSkip string

	// The fake's own entry points, for the tests.
	fake          dl.Table
	fakeLast      = fake.Func("fake_last")
	fakeCtx       = fake.Func("fake_ctx")
	fakeBindOnce  sync.Once
	fakeBindError error
)

// The contexts of the fake driver's two devices (its cuDevicePrimaryCtxRetain).
const ctx0, ctx1 = cu.Context(0xC0000), cu.Context(0xC0001)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		fakeLib, fakeSkip = os.Getenv(EnvLibrary), "no library in the child's environment"
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "cublas-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeLib, fakeSkip = buildFakes(dir)
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildFakes compiles the fake cuBLAS and the fake driver into dir and names them in
// the environment; it returns the fake cuBLAS's path, or "" and why not.
func buildFakes(dir string) (path, skip string) {
	if !dl.Available {
		return "", "this build cannot load libraries (dl.Mechanism is \"\")"
	}
	drv, skip := dltest.Build(filepath.Join("..", "cu", "testdata", "fakecuda.c"), dir, "libcuda-fake.so.1")
	if drv == "" {
		return "", skip
	}
	path, skip = dltest.Build(filepath.Join("testdata", "fakecublas.c"), dir, "libcublas.so.13")
	if path == "" {
		return "", skip
	}
	os.Setenv("GPU_CUDA_LIBRARY", drv)
	os.Setenv(EnvLibrary, path)
	return path, ""
}

// needFake loads the fake cuBLAS and the fake driver, or skips.
func needFake(t testing.TB) {
	t.Helper()
	if fakeLib == "" {
		t.Skip(fakeSkip)
	}
	if err := cu.Load(); err != nil {
		t.Fatal(err)
	}
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	fakeBindOnce.Do(func() {
		l, err := dl.Open(fakeLib)
		if err == nil {
			err = fake.Bind(l)
		}
		fakeBindError = err
	})
	if fakeBindError != nil {
		t.Fatal(fakeBindError)
	}
}

// last returns the fake's record of its last call.
func last() string { return dl.GoString(fakeLast.Call()) }

func TestLoadFake(t *testing.T) {
	needFake(t)
	s, err := Library()
	if err != nil {
		t.Fatal(err)
	}
	if want := "cuBLAS 13.1.7 (" + fakeLib + ")"; s != want {
		t.Errorf("Library() = %q, want %q", s, want)
	}
	if Path() != fakeLib {
		t.Errorf("Path() = %q", Path())
	}
	if a, b, c, err := Version(); err != nil || a != 13 || b != 1 || c != 7 {
		t.Errorf("Version() = %d.%d.%d, %v", a, b, c, err)
	}
	if Binding != dl.Mechanism || Binding == "" {
		t.Errorf("Binding = %q", Binding)
	}
	t.Logf("binding %q", Binding)
}

// TestCalls checks that every argument reaches the library where its prototype wants
// it (ints, 64-bit strides, size_t, negative enums, float and double scalars by
// reference, outputs written back), and that every call runs in the handle's context
// whatever context the thread had.
func TestCalls(t *testing.T) {
	needFake(t)
	runtime.LockOSThread() // so that the thread's context below stays the thread's
	defer runtime.UnlockOSThread()
	if err := ctx0.EnsureOnly(); err != nil {
		t.Fatal(err)
	}
	h, err := Create(ctx1)
	if err != nil {
		t.Fatal(err)
	}
	if h.IsZero() || h.Context() != ctx1 || last() != fmt.Sprintf("create %#x", h.Ptr()) {
		t.Fatalf("Create: handle %#x in %#x, record %q", h.Ptr(), h.Context(), last())
	}
	hs := fmt.Sprintf("%#x", h.Ptr())
	check := func(what string, err error, want string) {
		t.Helper()
		if err != nil {
			t.Errorf("%s: %v", what, err)
		}
		if got := last(); got != want {
			t.Errorf("%s: the library saw %q, want %q", what, got, want)
		}
		if c := cu.Context(fakeCtx.Call()); c != ctx1 {
			t.Errorf("%s: called in context %#x, want %#x", what, c, ctx1)
		}
		ctx0.EnsureOnly() // the next call must make ctx1 current again
	}
	check("Create", nil, "create "+hs)
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
	check("negative stride", h.GemmStridedBatchedEx(OpN, OpN, 2, 2, 2, f32(1),
		Matrix{Ptr: 0x40000, Type: R32F, LD: 2, Stride: -4}, Matrix{Ptr: 0x50000, Type: R32F, LD: 2, Stride: -(1 << 35)},
		f32(0), Matrix{Ptr: 0x60000, Type: R32F, LD: 2, Stride: 4}, 3, Compute32F, GemmDefault),
		"batched "+hs+" ta=0 tb=0 m=2 n=2 k=2 alpha=1 A=0x40000/0/2/-4 B=0x50000/0/2/-34359738368 beta=0 "+
			"C=0x60000/0/2/4 batch=3 compute=68 algo=-1")
	check("TF32", h.GemmEx(OpN, OpN, 1, 1, 1, f32(1), Matrix{Ptr: 8, Type: R32F, LD: 1}, Matrix{Ptr: 16, Type: R32F, LD: 1},
		f32(0), Matrix{Ptr: 24, Type: R32F, LD: 1}, Compute32FFastTF32, GemmDefault),
		"gemm "+hs+" ta=0 tb=0 m=1 n=1 k=1 alpha=1 A=0x8/0/1 B=0x10/0/1 beta=0 C=0x18/0/1 compute=77 algo=-1")
	check("Destroy", h.Destroy(), "destroy "+hs)
}

// TestContextConcurrent: goroutines, not locked to their threads, call handles of two
// contexts; the fake fails any call made in another context than its handle's.
func TestContextConcurrent(t *testing.T) {
	needFake(t)
	var hs [2]Handle
	for i, c := range []cu.Context{ctx0, ctx1} {
		var err error
		if hs[i], err = Create(c); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			h := hs[g%2]
			for i := range 300 {
				if err := h.SetStream(uintptr(i)); err != nil {
					errs <- fmt.Errorf("goroutine %d, call %d: %w", g, i, err)
					return
				}
				runtime.Gosched()
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// TestNoAllocations: the products' calls allocate nothing; alpha and beta (passed by
// address) stay on the stack, as package dl's rules allow.
func TestNoAllocations(t *testing.T) {
	needFake(t)
	h, err := Create(ctx1)
	if err != nil {
		t.Fatal(err)
	}
	a := Matrix{Ptr: 0x1000, Type: R32F, LD: 4, Stride: 16}
	for name, f := range map[string]func(){
		"GemmEx": func() { h.GemmEx(OpN, OpT, 4, 4, 4, 1, a, a, 0, a, Compute32F, GemmDefault) },
		"GemmStridedBatchedEx": func() {
			h.GemmStridedBatchedEx(OpN, OpT, 4, 4, 4, 1, a, a, 0, a, 2, Compute32F, GemmDefault)
		},
		"SetStream": func() { h.SetStream(0x5000) },
	} {
		if n := testing.AllocsPerRun(500, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

func TestStatusErrors(t *testing.T) {
	needFake(t)
	h, err := Create(ctx1)
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

// TestContextErrors: a context the driver refuses fails the call with the driver's
// error, without calling cuBLAS; the zero context and the zero Handle are refused.
func TestContextErrors(t *testing.T) {
	needFake(t)
	h, err := Create(ctx1)
	if err != nil {
		t.Fatal(err)
	}
	before := last()
	_, err = Create(cu.Context(0xBAD)) // the fake's cuCtxSetCurrent refuses 0xBAD
	var ce *cu.Error
	if !errors.As(err, &ce) || ce.Code != cu.ErrorInvalidContext || !errors.Is(err, backend.ErrInvalidValue) ||
		!strings.Contains(err.Error(), "cublasCreate_v2") {
		t.Errorf("Create(0xBAD) = %v, want the driver's CUDA_ERROR_INVALID_CONTEXT", err)
	}
	if got := last(); got != before {
		t.Errorf("cuBLAS was called (%q) in a context the driver refused", got)
	}
	if _, err := Create(0); !errors.Is(err, ErrInvalidValue) {
		t.Errorf("Create(0) = %v, want ErrInvalidValue", err)
	}
	var zero Handle
	for name, err := range map[string]error{
		"SetStream":            zero.SetStream(1),
		"SetWorkspace":         zero.SetWorkspace(0, 0),
		"SetMathMode":          zero.SetMathMode(0),
		"SetPointerMode":       zero.SetPointerMode(0),
		"GemmEx":               zero.GemmEx(OpN, OpN, 1, 1, 1, 0, Matrix{}, Matrix{}, 0, Matrix{}, Compute32F, GemmDefault),
		"GemmStridedBatchedEx": zero.GemmStridedBatchedEx(OpN, OpN, 1, 1, 1, 0, Matrix{}, Matrix{}, 0, Matrix{}, 1, Compute32F, GemmDefault),
		"Destroy":              zero.Destroy(),
	} {
		if !errors.Is(err, ErrNotInitialized) {
			t.Errorf("%s on the zero Handle = %v, want ErrNotInitialized", name, err)
		}
	}
	if _, err := zero.LibraryVersion(); !errors.Is(err, ErrNotInitialized) {
		t.Errorf("LibraryVersion on the zero Handle = %v", err)
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

// TestEveryEntryPointHasItsFunction reads api.go and cublas.go: every entry point of
// the table is called (cublasGetProperty by load, the status texts by failure, the others
// by cublas.go's functions).
func TestEveryEntryPointHasItsFunction(t *testing.T) {
	fset := token.NewFileSet()
	declared := map[string]bool{}
	apiFile, err := parser.ParseFile(fset, "api.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	ast.Inspect(apiFile, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Values) == 1 {
			if call, ok := vs.Values[0].(*ast.CallExpr); ok {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok && fmt.Sprint(sel.X) == "api" {
					declared[vs.Names[0].Name] = true
				}
			}
		}
		return true
	})
	if len(declared) != len(api.Funcs()) || len(declared) == 0 {
		t.Fatalf("found %d entry points in api.go, the table has %d", len(declared), len(api.Funcs()))
	}
	calls, err := parser.ParseFile(fset, "cublas.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A use is any mention of the entry point's variable but its declaration: a call
	// (f.Call, f.CallIn) or the variable passed to a helper that calls it (statusText).
	used := map[string]int{}
	for _, f := range []*ast.File{apiFile, calls} {
		ast.Inspect(f, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok && declared[id.Name] {
				used[id.Name]++
			}
			return true
		})
	}
	for name := range declared {
		if used[name] < 2 {
			t.Errorf("entry point %s has no function calling it", name)
		}
	}
}

// runChild runs the test named name in a child process with env added; the child's
// test does the checking.
func runChild(t *testing.T, name string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+name+"$", "-test.v")
	cmd.Env = append(os.Environ(), append(env, childEnv+"=1", "GORACE=atexit_sleep_ms=0")...)
	out, err := cmd.CombinedOutput()
	if err != nil || !regexp.MustCompile(`(?m)^--- PASS: `+name).Match(out) {
		t.Fatalf("child %s: %v\n%s", name, err, out)
	}
}

// TestMissingLibrary: a library that can't be found gives a clear error on every call,
// naming what was tried.
func TestMissingLibrary(t *testing.T) {
	if os.Getenv(childEnv) == "" {
		if !dl.Available {
			t.Skip("this build cannot load libraries (TestUnavailable)")
		}
		runChild(t, "TestMissingLibrary", EnvLibrary+"=/nonexistent/libcublas.so.13")
		return
	}
	err := Load()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "/nonexistent/libcublas.so.13") ||
		!strings.Contains(err.Error(), EnvLibrary) {
		t.Fatalf("Load() = %v", err)
	}
	if _, err := Create(ctx1); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cublasCreate_v2") {
		t.Errorf("Create() = %v", err)
	}
	if _, err := Library(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Library() = %v", err)
	}
	if err := (Handle{}).SetStream(0); !errors.Is(err, ErrUnavailable) {
		t.Errorf("SetStream() = %v", err)
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
	err := Load()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "lacks cublasCreate_v2") ||
		!strings.Contains(err.Error(), "not cuBLAS 12 or later") {
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
	needFake(t)
	if _, err := Create(ctx1); !errors.Is(err, ErrNotInitialized) || !strings.Contains(err.Error(), "FAKE_1") {
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
			b, err := os.ReadFile(fakeLib)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		runChild(t, "TestLtBeside", EnvLibrary+"="+cb)
		return
	}
	s, err := Library()
	if err != nil || !strings.HasSuffix(s, ", with libcublasLt.so.13)") {
		t.Fatalf("Library() = %q, %v", s, err)
	}
}

// TestUnavailable: a build that cannot load libraries fails every call with
// ErrUnavailable, saying why.
func TestUnavailable(t *testing.T) {
	if dl.Available {
		t.Skip("this build can load libraries")
	}
	if err := Load(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cannot load libraries") {
		t.Fatalf("Load() = %v", err)
	}
	if _, err := Create(ctx1); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Create() = %v", err)
	}
	if _, err := Library(); !errors.Is(err, ErrUnavailable) || Path() != "" {
		t.Errorf("Library() = %v", err)
	}
	if err := (Handle{}).GemmEx(OpN, OpN, 1, 1, 1, 0, Matrix{}, Matrix{}, 0, Matrix{}, Compute32F, GemmDefault); !errors.Is(err, ErrUnavailable) {
		t.Errorf("GemmEx() = %v", err)
	}
}
