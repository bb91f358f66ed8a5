package cublas

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu/internal/dl"
)

// Status is a cuBLAS status code (cuBLAS API: cublasStatus_t).
type Status int32

// The status codes (cublas_api.h).
const (
	StatusSuccess         Status = 0
	StatusNotInitialized  Status = 1
	StatusAllocFailed     Status = 3
	StatusInvalidValue    Status = 7
	StatusArchMismatch    Status = 8
	StatusMappingError    Status = 11
	StatusExecutionFailed Status = 13
	StatusInternalError   Status = 14
	StatusNotSupported    Status = 15
	StatusLicenseError    Status = 16
)

// statusUnavailable is the Status of ErrUnavailable; not a cuBLAS code.
const statusUnavailable Status = -1

var statusNames = map[Status]string{
	StatusSuccess:         "CUBLAS_STATUS_SUCCESS",
	StatusNotInitialized:  "CUBLAS_STATUS_NOT_INITIALIZED",
	StatusAllocFailed:     "CUBLAS_STATUS_ALLOC_FAILED",
	StatusInvalidValue:    "CUBLAS_STATUS_INVALID_VALUE",
	StatusArchMismatch:    "CUBLAS_STATUS_ARCH_MISMATCH",
	StatusMappingError:    "CUBLAS_STATUS_MAPPING_ERROR",
	StatusExecutionFailed: "CUBLAS_STATUS_EXECUTION_FAILED",
	StatusInternalError:   "CUBLAS_STATUS_INTERNAL_ERROR",
	StatusNotSupported:    "CUBLAS_STATUS_NOT_SUPPORTED",
	StatusLicenseError:    "CUBLAS_STATUS_LICENSE_ERROR",
	statusUnavailable:     "unavailable",
}

// String returns the status's C name ("CUBLAS_STATUS_INVALID_VALUE"), from this
// package's table (cublasGetStatusName gives the same names).
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return fmt.Sprintf("cublasStatus(%d)", int32(s))
}

// Operation is a transposition (cuBLAS API: cublasOperation_t).
type Operation int32

const (
	OpN Operation = 0 // CUBLAS_OP_N: the matrix as stored
	OpT Operation = 1 // CUBLAS_OP_T: its transpose
)

// DataType is an element type (CUDA library types: cudaDataType_t).
type DataType int32

const (
	R32F  DataType = 0  // CUDA_R_32F: float
	R64F  DataType = 1  // CUDA_R_64F: double
	R16F  DataType = 2  // CUDA_R_16F: IEEE half
	R16BF DataType = 14 // CUDA_R_16BF: bfloat16
)

// ComputeType is the precision a product accumulates in (cuBLAS API:
// cublasComputeType_t).
type ComputeType int32

const (
	Compute16F         ComputeType = 64 // CUBLAS_COMPUTE_16F
	Compute32F         ComputeType = 68 // CUBLAS_COMPUTE_32F: float32 accumulation, float32 scalars
	Compute32FPedantic ComputeType = 69 // CUBLAS_COMPUTE_32F_PEDANTIC
	Compute64F         ComputeType = 70 // CUBLAS_COMPUTE_64F: double accumulation and scalars
	Compute32FFast16F  ComputeType = 74 // CUBLAS_COMPUTE_32F_FAST_16F
	Compute32FFast16BF ComputeType = 75 // CUBLAS_COMPUTE_32F_FAST_16BF
	Compute32FFastTF32 ComputeType = 77 // CUBLAS_COMPUTE_32F_FAST_TF32: float32 inputs rounded to TF32 on tensor cores
)

// GemmAlgo chooses a GEMM algorithm (cuBLAS API: cublasGemmAlgo_t).
type GemmAlgo int32

// GemmDefault lets cuBLAS choose (CUBLAS_GEMM_DEFAULT).
const GemmDefault GemmAlgo = -1

// Math is a handle's math mode (cuBLAS API: cublasMath_t).
type Math int32

const (
	DefaultMath  Math = 0 // CUBLAS_DEFAULT_MATH
	PedanticMath Math = 2 // CUBLAS_PEDANTIC_MATH
	// TF32TensorOpMath lets float32 routines use TF32 (CUBLAS_TF32_TENSOR_OP_MATH).
	TF32TensorOpMath Math = 3
	// DisallowReducedPrecisionReduction (CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)
	// is a flag or'ed into a mode.
	DisallowReducedPrecisionReduction Math = 16
)

// PointerMode says where alpha and beta live (cuBLAS API: cublasPointerMode_t).
type PointerMode int32

const (
	PointerHost   PointerMode = 0 // CUBLAS_POINTER_MODE_HOST
	PointerDevice PointerMode = 1 // CUBLAS_POINTER_MODE_DEVICE
)

// library properties (libraryPropertyType).
const (
	propMajor = 0 // MAJOR_VERSION
	propMinor = 1 // MINOR_VERSION
	propPatch = 2 // PATCH_LEVEL
)

// cuBLAS's entry points: the one table, used by every build (cgo or not, see package
// internal/dl). The C prototypes are our own, written from the cuBLAS documentation
// (cublas_api.h, CUDA 12 and 13), as the conversions of each function's arguments in
// cublas.go. Add an entry point with one line here and its Go function there: Load
// resolves them all, and refuses a library without a required one as older than
// cuBLAS 12.
var (
	api dl.Table

	cublasCreate               = api.Func("cublasCreate_v2")
	cublasDestroy              = api.Func("cublasDestroy_v2")
	cublasGetProperty          = api.Func("cublasGetProperty")
	cublasGetVersion           = api.Optional("cublasGetVersion_v2")
	cublasSetStream            = api.Func("cublasSetStream_v2")
	cublasSetWorkspace         = api.Func("cublasSetWorkspace_v2")
	cublasSetMathMode          = api.Func("cublasSetMathMode")
	cublasSetPointerMode       = api.Func("cublasSetPointerMode_v2")
	cublasGemmEx               = api.Func("cublasGemmEx")
	cublasGemmStridedBatchedEx = api.Func("cublasGemmStridedBatchedEx")
	cublasSgemm                = api.Optional("cublasSgemm_v2")
	cublasDgemm                = api.Optional("cublasDgemm_v2")
	cublasGetStatusName        = api.Optional("cublasGetStatusName") // CUDA 11.4.2 and later
	cublasGetStatusString      = api.Optional("cublasGetStatusString")
)

// Binding names how this build calls cuBLAS: "cgo", "purego" (CGO_ENABLED=0 on
// linux/amd64 or linux/arm64), or "" when it cannot load libraries (see package
// internal/dl).
const Binding = dl.Mechanism

// Error is a failed cuBLAS call: the status, its name, the entry point and, for a
// failure to load, what was tried.
type Error struct {
	Status  Status
	Name    string // "CUBLAS_STATUS_INVALID_VALUE", or "unavailable"
	Op      string // "cublasGemmEx"
	Message string // cublasGetStatusString's text, or why the library is unavailable
}

// Error formats "cublas: <op>: <name>: <message>".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("cublas: ")
	if e.Op != "" {
		b.WriteString(e.Op + ": ")
	}
	b.WriteString(e.Name)
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Is matches the sentinel of the same status.
func (e *Error) Is(target error) bool {
	t, ok := target.(*Error)
	return ok && t.Op == "" && t.Message == "" && t.Status == e.Status
}

func sentinel(s Status) *Error { return &Error{Status: s, Name: s.String()} }

// Sentinels: errors.Is(err, ErrInvalidValue) matches any call that failed with that status.
var (
	// ErrUnavailable: the library could not be loaded, or lacks the entry point.
	ErrUnavailable     = sentinel(statusUnavailable)
	ErrNotInitialized  = sentinel(StatusNotInitialized)
	ErrAllocFailed     = sentinel(StatusAllocFailed)
	ErrInvalidValue    = sentinel(StatusInvalidValue)
	ErrArchMismatch    = sentinel(StatusArchMismatch)
	ErrExecutionFailed = sentinel(StatusExecutionFailed)
	ErrInternal        = sentinel(StatusInternalError)
	ErrNotSupported    = sentinel(StatusNotSupported)
)

func unavailable(op, msg string) *Error {
	return &Error{Status: statusUnavailable, Name: statusUnavailable.String(), Op: op, Message: msg}
}

// EnvLibrary names the environment variable that names the library file.
const EnvLibrary = "GPU_CUBLAS_LIBRARY"

// sonames are the libraries tried by name, newest first.
var sonames = []string{"libcublas.so.13", "libcublas.so.12"}

// Candidates returns the libraries load tries, in order: a name for the loader or a path
// that exists, given the environment (getenv) and a glob function. It is exported for
// tests and for the other bindings of the table.
func Candidates(getenv func(string) string, glob func(string) ([]string, error)) []string {
	if p := getenv(EnvLibrary); p != "" {
		return []string{p}
	}
	out := slices.Clone(sonames)
	seen := map[string]bool{}
	add := func(paths ...string) {
		for _, p := range paths {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	var dirs []string
	for _, v := range []string{"CUDA_HOME", "CUDA_PATH"} {
		if d := getenv(v); d != "" {
			dirs = append(dirs, filepath.Join(d, "lib64"))
		}
	}
	dirs = append(dirs, "/usr/local/cuda/lib64")
	for _, d := range dirs {
		for _, so := range sonames {
			m, _ := glob(filepath.Join(d, so))
			add(m...)
		}
	}
	// Python site-packages holding NVIDIA's wheels.
	var sites []string
	pyLib := func(prefix string) {
		for _, kind := range []string{"site-packages", "dist-packages"} {
			sites = append(sites, filepath.Join(prefix, "lib", "python3*", kind))
		}
	}
	for _, v := range []string{"VIRTUAL_ENV", "CONDA_PREFIX"} {
		if d := getenv(v); d != "" {
			pyLib(d)
		}
	}
	for _, d := range filepath.SplitList(getenv("PYTHONPATH")) {
		if d != "" {
			sites = append(sites, d)
		}
	}
	if h := getenv("HOME"); h != "" {
		pyLib(filepath.Join(h, ".local"))
	}
	for _, p := range []string{"/usr/local", "/usr", "/opt/conda", "/opt/*/.venv", "/opt/*"} {
		pyLib(p)
	}
	sites = append(sites, "/usr/lib/python3/dist-packages")
	for _, so := range sonames {
		for _, s := range sites {
			m, _ := glob(filepath.Join(s, "nvidia", "*", "lib", so))
			slices.Sort(m)
			add(m...)
		}
	}
	return out
}

// lib is the loaded library.
var lib struct {
	once    sync.Once
	err     *Error
	path    string // the file libcublas came from
	ltPath  string // libcublasLt opened beside it, if any
	ltErr   error  // why the cuBLASLt entry points (lt.go) are unavailable, nil if bound
	version [3]int
}

// ready loads the library on first use and returns nil or the loading error.
func ready() *Error {
	lib.once.Do(load)
	return lib.err
}

// noLoader is the loading error of a build that cannot load libraries.
const noLoader = "this build cannot load libraries (CGO_ENABLED=0 outside linux/amd64 and linux/arm64, or the tag gpu_nodlopen): cuBLAS cannot be loaded"

func load() {
	if !dl.Available {
		lib.err = unavailable("", noLoader)
		return
	}
	from := ""
	if os.Getenv(EnvLibrary) != "" {
		from = EnvLibrary + "="
	}
	var tried []string
	for _, name := range Candidates(os.Getenv, filepath.Glob) {
		lt := ""
		if strings.ContainsRune(name, '/') {
			// Open libcublasLt first from the same directory: libcublas needs it, and
			// the loader may not know the directory (it then finds the library it
			// needs among those loaded, by soname).
			base := filepath.Base(name)
			ver := base[strings.Index(base, ".so"):]
			if cand := filepath.Join(filepath.Dir(name), "libcublasLt"+ver); fileExists(cand) {
				lt = cand
			} else if m, _ := filepath.Glob(filepath.Join(filepath.Dir(name), "libcublasLt.so."+soMajor(base))); len(m) > 0 {
				lt = m[0]
			}
			if lt != "" {
				if _, err := dl.Open(lt); err != nil {
					lt = ""
				}
			}
		}
		l, err := dl.Open(name)
		if err != nil {
			tried = append(tried, fmt.Sprintf("%s%s (%v)", from, name, err))
			continue
		}
		if err := api.Bind(l); err != nil {
			l.Close()
			tried = append(tried, fmt.Sprintf("%s%s (%v: not cuBLAS 12 or later)", from, name, err))
			continue
		}
		lib.path = name
		if p := dl.PathOf(cublasCreate.Addr()); p != "" {
			lib.path = p
		}
		lib.ltPath = lt
		for i, prop := range []int{propMajor, propMinor, propPatch} {
			var v int32
			if r := cublasGetProperty.Call(uintptr(prop), uintptr(unsafe.Pointer(&v))); int32(r) == 0 {
				lib.version[i] = int(v)
			}
		}
		// cuBLASLt: the one beside the libcublas loaded (which libcublas itself loaded
		// from there), or, for a libcublas the loader found by its soname, the one the
		// loader finds: never one from elsewhere, which could be another version.
		ltName := lt
		if ltName == "" {
			ltName = "libcublasLt.so." + soMajor(filepath.Base(name))
			if lib.version[0] > 0 {
				ltName = fmt.Sprintf("libcublasLt.so.%d", lib.version[0])
			}
			if dir := filepath.Dir(lib.path); strings.ContainsRune(lib.path, '/') {
				ltName = filepath.Join(dir, ltName)
			}
		}
		lib.ltErr = bindLt(ltName)
		return
	}
	if len(tried) == 0 {
		tried = []string{"nothing"}
	}
	lib.err = unavailable("", "cannot load cuBLAS: tried "+strings.Join(tried, "; "))
}

// soMajor returns the major version of a name like libcublas.so.13.1.0.3 ("13").
func soMajor(base string) string {
	v := base[strings.Index(base, ".so")+3:]
	v = strings.TrimPrefix(v, ".")
	if i := strings.IndexByte(v, '.'); i >= 0 {
		v = v[:i]
	}
	return v
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// Load loads cuBLAS if it is not loaded yet and returns nil, or an error matching
// ErrUnavailable that lists what was tried. Every other function loads it on first use.
func Load() error {
	if e := ready(); e != nil {
		c := *e
		c.Op = "load"
		return &c
	}
	return nil
}

// Library describes the loaded library: "cuBLAS 13.1.0 (/usr/local/cuda/lib64/
// libcublas.so.13, with libcublasLt.so.13)", or the loading error.
func Library() (string, error) {
	if err := Load(); err != nil {
		return "", err
	}
	s := fmt.Sprintf("cuBLAS %d.%d.%d (%s", lib.version[0], lib.version[1], lib.version[2], lib.path)
	if lib.ltPath != "" {
		s += ", with " + filepath.Base(lib.ltPath)
	}
	return s + ")", nil
}

// Path returns the file the library was loaded from, or "" if it is not loaded.
func Path() string {
	if ready() != nil {
		return ""
	}
	return lib.path
}

// Version returns the loaded library's version (cuBLAS API: cublasGetProperty).
func Version() (major, minor, patch int, err error) {
	if err := Load(); err != nil {
		return 0, 0, 0, err
	}
	return lib.version[0], lib.version[1], lib.version[2], nil
}

// usable returns nil if f can be called, else the error its function returns: the
// loading error, or that the library lacks f (an optional entry point).
func usable(f *dl.Func) error {
	if e := ready(); e != nil {
		c := *e
		c.Op = f.Name()
		return &c
	}
	if !f.Bound() {
		return unavailable(f.Name(), fmt.Sprintf("%s has no symbol %s", lib.path, f.Name()))
	}
	return nil
}

//go:noinline
func failure(op string, s Status) error {
	e := &Error{Status: s, Name: s.String(), Op: op}
	if n := statusText(cublasGetStatusName, s); n != "" {
		e.Name = n
	}
	if m := statusText(cublasGetStatusString, s); m != "" && m != e.Name {
		e.Message = m
	}
	return e
}

// statusText calls cublasGetStatusName or cublasGetStatusString, "" if absent.
func statusText(f *dl.Func, s Status) string {
	if !f.Bound() {
		return ""
	}
	return dl.GoString(f.Call(uintptr(uint32(s))))
}

// StatusName returns the library's name for s (cublasGetStatusName), or this package's
// when the library is unavailable.
func StatusName(s Status) string {
	if ready() == nil {
		if n := statusText(cublasGetStatusName, s); n != "" {
			return n
		}
	}
	return s.String()
}
