package ncclapi

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu/internal/dl"
	"github.com/go-gpu/gpu/internal/dl/dltest"
)

// The tests load a fake libnccl (testdata/fakenccl.c), compiled here with the C
// compiler into a temporary directory and named by GPU_NCCL_LIBRARY. The library is
// loaded once per process, so the scenarios that need another environment (a missing
// library, a user-set NCCL_NVLS_ENABLE, concurrent first use) run in a child process:
// the test binary itself, selected by childEnv.

const childEnv = "NCCLAPI_TEST_CHILD"

var (
	fakeLib  string // path of the compiled fake library, "" if it could not be built
	fakeSkip string // why not
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		os.Exit(m.Run())
	}
	dir, err := os.MkdirTemp("", "ncclapi-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	fakeLib, fakeSkip = buildFake(dir)
	if fakeLib != "" {
		os.Setenv("GPU_NCCL_LIBRARY", fakeLib)
		os.Unsetenv("NCCL_NVLS_ENABLE")
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// buildFake compiles testdata/fakenccl.c into dir and returns its path, or "" and why.
func buildFake(dir string) (path, skip string) {
	if !dl.Available {
		return "", "this build cannot load libraries (dl.Mechanism is \"\")"
	}
	return dltest.Build(filepath.Join("testdata", "fakenccl.c"), dir, "libnccl-fake.so")
}

// needLoader skips in a build that cannot load libraries (stub_test.go tests it).
func needLoader(t testing.TB) {
	t.Helper()
	if !dl.Available {
		t.Skip("this build cannot load libraries")
	}
}

func needFake(t testing.TB) {
	t.Helper()
	if fakeLib == "" {
		t.Skip(fakeSkip)
	}
}

// lastCall returns the fake's record of its last call.
func lastCall() string { return ErrorString(1000) }

func TestLoadFake(t *testing.T) {
	needFake(t)
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	if got := LibraryPath(); got != fakeLib {
		t.Errorf("LibraryPath() = %q, want %q", got, fakeLib)
	}
	v, err := Version()
	if err != nil || v != 22803 {
		t.Fatalf("Version() = %d, %v; want 22803", v, err)
	}
	if a, b, c := SplitVersion(v); fmt.Sprint(a, b, c) != "2 28 3" {
		t.Errorf("SplitVersion = %d.%d.%d", a, b, c)
	}
}

func TestNVLSDisabledBeforeLoad(t *testing.T) {
	needFake(t)
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	// The fake captures the variable in its constructor, i.e. during dlopen.
	if got := ErrorString(1001); got != "0" {
		t.Errorf("NCCL_NVLS_ENABLE seen by the library at load = %q, want \"0\"", got)
	}
	if got := os.Getenv("NCCL_NVLS_ENABLE"); got != "0" {
		t.Errorf("NCCL_NVLS_ENABLE in the process = %q, want \"0\"", got)
	}
}

func TestUniqueIDAndInitRank(t *testing.T) {
	needFake(t)
	id, err := GetUniqueID()
	if err != nil {
		t.Fatal(err)
	}
	var sum uint64
	for i := range id {
		if id[i] != byte(i*7+3) {
			t.Fatalf("id[%d] = %d, want %d", i, id[i], byte(i*7+3))
		}
		sum = sum*31 + uint64(id[i])
	}
	comm, err := CommInitRank(4, id, 1)
	if err != nil || comm != 0xC0FFEE00 {
		t.Fatalf("CommInitRank = %#x, %v", comm, err)
	}
	if got, want := lastCall(), fmt.Sprintf("ncclCommInitRank 0x4 0x1 %#x", sum); got != want {
		t.Errorf("fake saw %q, want %q", got, want)
	}
	_, err = CommInitRank(0, id, 0)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "fake: nranks is 0") {
		t.Errorf("CommInitRank(0 ranks) = %v", err)
	}
}

func TestCommInitRankConfig(t *testing.T) {
	needFake(t)
	var id UniqueID
	id[0] = 1
	comm, err := CommInitRankConfig(2, id, 0, nil)
	if err != nil || comm != 0xC0FFEE02 {
		t.Fatalf("CommInitRankConfig(nil) = %#x, %v", comm, err)
	}
	undef := "-2147483648"
	want := "size=80 magic=0xcafebeef version=22800 blocking=" + undef + " cga=" + undef +
		" minCTAs=" + undef + " maxCTAs=" + undef + " netName=(null) splitShare=" + undef +
		" trafficClass=" + undef + " commName=(null) collnet=" + undef + " ctaPolicy=" + undef +
		" shrinkShare=" + undef + " nvlsCTAs=" + undef + " nChannelsPerNetPeer=" + undef +
		" nvlinkCentricSched=" + undef
	if got := ErrorString(1002); got != want {
		t.Errorf("default config seen as\n%s\nwant\n%s", got, want)
	}

	cfg := Config{Blocking: 0, CGAClusterSize: 2, MinCTAs: 3, MaxCTAs: 17, NetName: "Socket",
		SplitShare: 1, TrafficClass: 5, CommName: "tp-group", CollnetEnable: 0,
		CTAPolicy: CTAPolicyEfficiency, ShrinkShare: 1, NVLSCTAs: 6, NChannelsPerNetPeer: 7,
		NVLinkCentricSched: 1}
	comm, err = CommInitRankConfig(2, id, 1, &cfg)
	if !errors.Is(err, ErrInProgress) {
		t.Fatalf("non-blocking CommInitRankConfig error = %v, want ErrInProgress", err)
	}
	if comm != 0xC0FFEE01 {
		t.Fatalf("non-blocking CommInitRankConfig comm = %#x", comm)
	}
	if e := err.(*Error); e.Message != "fake: NCCL operation in progress" || e.Op != "ncclCommInitRankConfig" {
		t.Errorf("in-progress error = %+v", e)
	}
	want = "size=80 magic=0xcafebeef version=22800 blocking=0 cga=2 minCTAs=3 maxCTAs=17 netName=Socket " +
		"splitShare=1 trafficClass=5 commName=tp-group collnet=0 ctaPolicy=1 shrinkShare=1 nvlsCTAs=6 " +
		"nChannelsPerNetPeer=7 nvlinkCentricSched=1"
	if got := ErrorString(1002); got != want {
		t.Errorf("config seen as\n%s\nwant\n%s", got, want)
	}
	// Poll the asynchronous state as a non-blocking user would.
	var states []Result
	for range 5 {
		s, err := CommGetAsyncError(comm)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, s)
		if s != InProgress {
			break
		}
	}
	if fmt.Sprint(states) != "[ncclInProgress ncclInProgress ncclSuccess]" {
		t.Errorf("async states %v", states)
	}
	if got := lastCall(); got != "ncclCommGetAsyncError 0xc0ffee01" {
		t.Errorf("fake saw %q", got)
	}
}

func TestCommInitAll(t *testing.T) {
	needFake(t)
	comms, err := CommInitAll(2, []int{3, 1})
	if err != nil || fmt.Sprintf("%#x", comms) != "[0x1003 0x1001]" {
		t.Errorf("CommInitAll(devlist) = %#x, %v", comms, err)
	}
	comms, err = CommInitAll(3, nil)
	if err != nil || fmt.Sprintf("%#x", comms) != "[0x1000 0x1001 0x1002]" {
		t.Errorf("CommInitAll(nil) = %#x, %v", comms, err)
	}
	if got := lastCall(); got != "ncclCommInitAll 0x3 0xffff" {
		t.Errorf("fake saw %q", got)
	}
	if _, err := CommInitAll(3, []int{0}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("CommInitAll with short devlist: %v", err)
	}
}

// TestArguments checks that every argument arrives intact, with 64-bit values that
// would be cut by a 32-bit conversion anywhere on the way.
func TestArguments(t *testing.T) {
	needFake(t)
	const (
		send   = uintptr(0x7fff_1234_5678_9abc)
		recv   = uintptr(0x7ffe_0000_0000_1000)
		count  = uint64(1<<40 + 3)
		comm   = Comm(0x5555_6666_7777_8888)
		stream = uintptr(0x7f00_dead_beef_0000)
	)
	tail := " 0x5555666677778888 0x7f00deadbeef0000"
	for _, c := range []struct {
		name string
		call func() error
		want string
	}{
		{"AllReduce", func() error { return AllReduce(send, recv, count, Bfloat16, Avg, comm, stream) },
			"ncclAllReduce 0x7fff123456789abc 0x7ffe000000001000 0x10000000003 0x9 0x4" + tail},
		{"Broadcast", func() error { return Broadcast(send, recv, count, Float64, 3, comm, stream) },
			"ncclBroadcast 0x7fff123456789abc 0x7ffe000000001000 0x10000000003 0x8 0x3" + tail},
		{"Reduce", func() error { return Reduce(send, recv, count, Int64, Max, 2, comm, stream) },
			"ncclReduce 0x7fff123456789abc 0x7ffe000000001000 0x10000000003 0x4 0x2 0x2" + tail},
		{"AllGather", func() error { return AllGather(send, recv, count, Uint8, comm, stream) },
			"ncclAllGather 0x7fff123456789abc 0x7ffe000000001000 0x10000000003 0x1" + tail},
		{"ReduceScatter", func() error { return ReduceScatter(send, recv, count, Float16, Prod, comm, stream) },
			"ncclReduceScatter 0x7fff123456789abc 0x7ffe000000001000 0x10000000003 0x6 0x1" + tail},
		{"Send", func() error { return Send(send, count, Float32, 7, comm, stream) },
			"ncclSend 0x7fff123456789abc 0x10000000003 0x7 0x7" + tail},
		{"Recv", func() error { return Recv(recv, count, Float8e5m2, 1, comm, stream) },
			"ncclRecv 0x7ffe000000001000 0x10000000003 0xb 0x1" + tail},
		{"AllReduceDefaultStream", func() error { return AllReduce(send, send, 1, Float32, Sum, comm, 0) },
			"ncclAllReduce 0x7fff123456789abc 0x7fff123456789abc 0x1 0x7 0 0x5555666677778888 0"},
		{"CommFinalize", func() error { return CommFinalize(comm) }, "ncclCommFinalize 0x5555666677778888"},
		{"CommDestroy", func() error { return CommDestroy(comm) }, "ncclCommDestroy 0x5555666677778888"},
		{"CommAbort", func() error { return CommAbort(comm) }, "ncclCommAbort 0x5555666677778888"},
		{"RedOpDestroy", func() error { return RedOpDestroy(NumOps+1, comm) }, "ncclRedOpDestroy 0x6 0x5555666677778888"},
	} {
		if err := c.call(); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := lastCall(); got != c.want {
			t.Errorf("%s: fake saw\n%s\nwant\n%s", c.name, got, c.want)
		}
	}
}

func TestQueries(t *testing.T) {
	needFake(t)
	n, err1 := CommCount(1)
	d, err2 := CommCuDevice(1)
	r, err3 := CommUserRank(1)
	if n != 4 || d != 3 || r != 2 || errors.Join(err1, err2, err3) != nil {
		t.Errorf("count %d device %d rank %d, errors %v %v %v", n, d, r, err1, err2, err3)
	}
}

func TestPreMulSum(t *testing.T) {
	needFake(t)
	const comm = Comm(0xabc)
	for _, c := range []struct {
		bits uint64
		dt   DataType
		want string
	}{
		{uint64(math.Float32bits(0.5)), Float32, "ncclRedOpCreatePreMulSum 0x3f000000 0x7 0x1 0xabc"},
		{0x3c00, Float16, "ncclRedOpCreatePreMulSum 0x3c00 0x6 0x1 0xabc"},
		{math.Float64bits(0.25), Float64, "ncclRedOpCreatePreMulSum 0x3fd0000000000000 0x8 0x1 0xabc"},
		{0x1_0000_0042, Uint8, "ncclRedOpCreatePreMulSum 0x42 0x1 0x1 0xabc"}, // only the low byte
	} {
		op, err := RedOpCreatePreMulSumHost(c.bits, c.dt, comm)
		if err != nil || op != NumOps+1 {
			t.Errorf("%v: op %d, %v", c.dt, op, err)
		}
		if got := lastCall(); got != c.want {
			t.Errorf("%v: fake saw %q, want %q", c.dt, got, c.want)
		}
	}
	op, err := RedOpCreatePreMulSumDevice(0x7f00_0000_1000, Float32, comm)
	if err != nil || op != NumOps {
		t.Errorf("device: op %d, %v", op, err)
	}
	if got, want := lastCall(), "ncclRedOpCreatePreMulSum 0x7f0000001000 0x7 0 0xabc"; got != want {
		t.Errorf("device: fake saw %q, want %q", got, want)
	}
}

func TestErrorMapping(t *testing.T) {
	needFake(t)
	err := AllReduce(1, 2, 0xBAD, Float32, Sum, 3, 4)
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("AllReduce error %v is not an *Error", err)
	}
	if e.Code != 4 || e.Name != "ncclInvalidArgument" || e.Op != "ncclAllReduce" || e.Message != "fake: count 0xbad rejected" {
		t.Errorf("error = %+v", e)
	}
	if !errors.Is(err, ErrInvalidArgument) {
		t.Error("not ErrInvalidArgument")
	}
	if got := err.Error(); got != "nccl: ncclAllReduce: ncclInvalidArgument: fake: count 0xbad rejected" {
		t.Errorf("Error() = %q", got)
	}
	if got := LastError(0); got != "fake: count 0xbad rejected" {
		t.Errorf("LastError = %q", got)
	}

	sentinels := []error{nil, ErrUnhandledCuda, ErrSystem, ErrInternal, ErrInvalidArgument,
		ErrInvalidUsage, ErrRemote, ErrInProgress, ErrTimeout}
	for code := 1; code < len(sentinels); code++ {
		_, err := CommCount(Comm(0xE000 + code))
		if !errors.As(err, &e) || e.Code != code || e.Op != "ncclCommCount" {
			t.Errorf("code %d: %v", code, err)
			continue
		}
		for other, s := range sentinels[1:] {
			if errors.Is(err, s) != (other+1 == code) {
				t.Errorf("code %d: errors.Is(%v) = %v", code, s, !(other+1 == code))
			}
		}
		if errors.Is(err, ErrUnavailable) {
			t.Errorf("code %d matches ErrUnavailable", code)
		}
		wantMsg := fmt.Sprintf("fake: injected code %d", code)
		if code == int(InProgress) {
			// ncclGetLastError is not read for ncclInProgress: it is no failure.
			wantMsg = ErrorString(InProgress)
		}
		if e.Message != wantMsg {
			t.Errorf("code %d: message %q, want %q", code, e.Message, wantMsg)
		}
	}
	if _, err := CommCount(Comm(0xE000 + 42)); !errors.As(err, &e) || e.Name != "ncclResult(42)" || e.Code != 42 {
		t.Errorf("unknown code: %v", err)
	}
}

func TestGroup(t *testing.T) {
	needFake(t)
	if err := GroupEnd(); !errors.Is(err, ErrInvalidUsage) {
		t.Errorf("GroupEnd without GroupStart: %v", err)
	}
	if err := errors.Join(GroupStart(), GroupStart(), GroupEnd(), GroupEnd()); err != nil {
		t.Error(err)
	}
}

func TestMissingSymbol(t *testing.T) {
	needFake(t)
	_, err := CommSplit(1, 0, 0, nil)
	var e *Error
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) || e.Op != "ncclCommSplit" ||
		!strings.Contains(e.Message, "no symbol ncclCommSplit") || !strings.Contains(e.Message, fakeLib) {
		t.Errorf("CommSplit on a library without it: %v", err)
	}
}

func TestNoAllocations(t *testing.T) {
	needFake(t)
	for name, f := range map[string]func(){
		"AllReduce":  func() { _ = AllReduce(1, 2, 3, Float32, Sum, 5, 6) },
		"Send":       func() { _ = Send(1, 3, Float32, 1, 5, 6) },
		"GroupStart": func() { _ = GroupStart(); _ = GroupEnd() },
		"CommCount":  func() { _, _ = CommCount(5) },
	} {
		if n := testing.AllocsPerRun(1000, f); n != 0 {
			t.Errorf("%s allocates %v times per call", name, n)
		}
	}
}

// runChild runs the test named test in a child process with env added, and fails if
// the child fails.
func runChild(t *testing.T, test string, env ...string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.v", "-test.count=1")
	// GORACE: a race-enabled child would otherwise sleep a second at exit.
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0"), env...)
	out, err := cmd.CombinedOutput()
	switch {
	case err == nil && strings.Contains(string(out), "--- PASS: "+test):
		t.Logf("child %s:\n%s", test, out)
	case err == nil && strings.Contains(string(out), "--- SKIP: "+test):
		t.Skipf("child %s skipped:\n%s", test, out)
	default:
		t.Fatalf("child %s: %v\n%s", test, err, out)
	}
}

func TestMissingLibrary(t *testing.T) {
	needLoader(t)
	runChild(t, "TestChildMissingLibrary", childEnv+"=missing", "GPU_NCCL_LIBRARY=/nonexistent/libnccl-none.so.2")
}

func TestChildMissingLibrary(t *testing.T) {
	if os.Getenv(childEnv) != "missing" {
		t.Skip("run by TestMissingLibrary")
	}
	err := Load()
	var e *Error
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) {
		t.Fatalf("Load() = %v, want ErrUnavailable", err)
	}
	if !strings.Contains(e.Message, "GPU_NCCL_LIBRARY=/nonexistent/libnccl-none.so.2") ||
		!strings.Contains(e.Message, "No such file") {
		t.Errorf("message does not say what was tried and why: %q", e.Message)
	}
	if LibraryPath() != "" {
		t.Error("LibraryPath() not empty")
	}
	err = AllReduce(1, 2, 3, Float32, Sum, 5, 6)
	if !errors.Is(err, ErrUnavailable) || !errors.As(err, &e) || e.Op != "ncclAllReduce" || !strings.Contains(e.Message, "nonexistent") {
		t.Errorf("AllReduce = %v", err)
	}
	if _, err := Version(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Version = %v", err)
	}
	if ErrorString(InvalidUsage) != "ncclInvalidUsage" || LastError(0) != "" {
		t.Error("ErrorString/LastError without a library")
	}
	t.Log(err)
}

func TestDefaultSearch(t *testing.T) {
	needLoader(t)
	runChild(t, "TestChildDefaultSearch", childEnv+"=default", "GPU_NCCL_LIBRARY=")
}

func TestChildDefaultSearch(t *testing.T) {
	if os.Getenv(childEnv) != "default" {
		t.Skip("run by TestDefaultSearch")
	}
	err := Load()
	if err == nil {
		t.Skipf("a real NCCL is installed here: %s", LibraryPath())
	}
	if !strings.Contains(err.Error(), "libnccl.so.2 (") || !strings.Contains(err.Error(), "libnccl.so (") {
		t.Errorf("error does not list the default names: %v", err)
	}
	t.Log(err)
}

func TestNotNCCL(t *testing.T) {
	needLoader(t)
	runChild(t, "TestChildNotNCCL", childEnv+"=notnccl", "GPU_NCCL_LIBRARY=libm.so.6")
}

func TestChildNotNCCL(t *testing.T) {
	if os.Getenv(childEnv) != "notnccl" {
		t.Skip("run by TestNotNCCL")
	}
	err := Load()
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no symbol ncclGetVersion") {
		t.Errorf("Load(libm) = %v", err)
	}
}

func TestUserNVLSKept(t *testing.T) {
	needFake(t)
	runChild(t, "TestChildUserNVLS", childEnv+"=nvls", "GPU_NCCL_LIBRARY="+fakeLib, "NCCL_NVLS_ENABLE=1")
}

func TestChildUserNVLS(t *testing.T) {
	if os.Getenv(childEnv) != "nvls" {
		t.Skip("run by TestUserNVLSKept")
	}
	if err := Load(); err != nil {
		t.Fatal(err)
	}
	if got := ErrorString(1001); got != "1" {
		t.Errorf("the user's NCCL_NVLS_ENABLE=1 was not kept: library saw %q", got)
	}
}

func TestConcurrentFirstUse(t *testing.T) {
	needFake(t)
	runChild(t, "TestChildConcurrentFirstUse", childEnv+"=concurrent", "GPU_NCCL_LIBRARY="+fakeLib)
}

func TestChildConcurrentFirstUse(t *testing.T) {
	if os.Getenv(childEnv) != "concurrent" {
		t.Skip("run by TestConcurrentFirstUse")
	}
	var wg sync.WaitGroup
	errs := make([]error, 16)
	for i := range errs {
		wg.Go(func() {
			if i%2 == 0 {
				_, errs[i] = Version()
			} else {
				errs[i] = AllReduce(1, 2, 3, Float32, Sum, 5, 6)
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
}

// TestBuildWithoutCgo builds the nccl tree and runs this package's tests in the other
// builds: without cgo (purego, on linux/amd64 and linux/arm64, the fake library as
// here) and with the tag gpu_nodlopen (the stub: every call unavailable).
func TestBuildWithoutCgo(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		if gotool = filepath.Join(os.Getenv("GOROOT"), "bin", "go"); os.Getenv("GOROOT") == "" {
			t.Skip("no go command")
		}
	}
	for _, args := range [][]string{
		{"build", "../../..."},
		{"vet", "."},
		{"test", "-count=1", "-short", "."},
		{"test", "-count=1", "-short", "-tags", "gpu_nodlopen", "."},
	} {
		cmd := exec.Command(gotool, args...)
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("CGO_ENABLED=0 go %s: %v\n%s", strings.Join(args, " "), err, out)
		} else {
			t.Logf("CGO_ENABLED=0 go %s:\n%s", strings.Join(args, " "), out)
		}
	}
}

// TestConfigLayout checks cConfig against ncclConfig_t's offsets in NCCL 2.28's nccl.h
// (the fake library reads the fields at these offsets too).
func TestConfigLayout(t *testing.T) {
	var c cConfig
	for _, f := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof", unsafe.Sizeof(c), ConfigSize},
		{"magic", unsafe.Offsetof(c.magic), 8},
		{"blocking", unsafe.Offsetof(c.blocking), 16},
		{"netName", unsafe.Offsetof(c.netName), 32},
		{"commName", unsafe.Offsetof(c.commName), 48},
		{"collnetEnable", unsafe.Offsetof(c.collnetEnable), 56},
		{"nvlinkCentricSched", unsafe.Offsetof(c.nvlinkCentricSched), 76},
	} {
		if f.got != f.want {
			t.Errorf("ncclConfig_t %s: %d, want %d", f.name, f.got, f.want)
		}
	}
}

func BenchmarkAllReduce(b *testing.B) {
	needFake(b)
	if err := Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := AllReduce(1, 2, 3, Float32, Sum, 5, 6); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAllReduceParallel(b *testing.B) {
	needFake(b)
	if err := Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			_ = AllReduce(1, 2, 3, Float32, Sum, 5, 6)
		}
	})
}

// BenchmarkGroupStartEnd times a GroupStart/GroupEnd pair: two calls per iteration.
func BenchmarkGroupStartEnd(b *testing.B) {
	needFake(b)
	if err := Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = GroupStart()
		_ = GroupEnd()
	}
}

func BenchmarkCommCount(b *testing.B) {
	needFake(b)
	if err := Load(); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := CommCount(5); err != nil {
			b.Fatal(err)
		}
	}
}
