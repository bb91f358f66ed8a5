package cublas

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Handle is a cuBLAS handle (cuBLAS API: cublasHandle_t), an opaque pointer.
type Handle uintptr

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

// Kind is the class of a C argument or result in Entries. Every argument travels in a
// 64-bit slot: integers and pointers in the low bits (int, long long, size_t, pointers
// and enums all fit, as the x86-64 and arm64 Linux calling conventions pass them).
type Kind uint8

const (
	KHandle Kind = iota // cublasHandle_t (a pointer)
	KPtr                // a device or host pointer, or a stream (cudaStream_t)
	KInt                // int or an enum (32 bits)
	KInt64              // long long
	KSize               // size_t
	// KRef is a pointer to a scalar that the binding provides: the slot holds the
	// scalar's bits (alpha, beta: a float or a double in the low bytes) and the callee
	// gets its address; after the call the slot holds what the callee left there
	// (outputs: a handle, a version).
	KRef
	KStatus // result: cublasStatus_t
	KString // result: const char *
)

// Entry is one cuBLAS entry point: its symbol, its arguments' classes and its result's.
// Required entries must all resolve for the library to count as loaded.
type Entry struct {
	Name     string
	Args     []Kind
	Ret      Kind
	Required bool
}

// The entry points' indices in Entries.
const (
	eCreate = iota
	eDestroy
	eGetProperty
	eGetVersion
	eSetStream
	eSetWorkspace
	eSetMathMode
	eSetPointerMode
	eGemmEx
	eGemmStridedBatchedEx
	eGetStatusName
	eGetStatusString
	numEntries
)

// MaxArgs is the most arguments an entry point takes.
const MaxArgs = 23

// Entries is the one description of the entry points this package calls (C prototypes
// from cublas_api.h, CUDA 12 and 13). A binding calls entry i with the slots of its
// arguments, in order.
var Entries = [numEntries]Entry{
	// cublasStatus_t cublasCreate_v2(cublasHandle_t *handle)
	eCreate: {"cublasCreate_v2", []Kind{KRef}, KStatus, true},
	// cublasStatus_t cublasDestroy_v2(cublasHandle_t handle)
	eDestroy: {"cublasDestroy_v2", []Kind{KHandle}, KStatus, true},
	// cublasStatus_t cublasGetProperty(libraryPropertyType type, int *value)
	eGetProperty: {"cublasGetProperty", []Kind{KInt, KRef}, KStatus, true},
	// cublasStatus_t cublasGetVersion_v2(cublasHandle_t handle, int *version)
	eGetVersion: {"cublasGetVersion_v2", []Kind{KHandle, KRef}, KStatus, false},
	// cublasStatus_t cublasSetStream_v2(cublasHandle_t handle, cudaStream_t streamId)
	eSetStream: {"cublasSetStream_v2", []Kind{KHandle, KPtr}, KStatus, true},
	// cublasStatus_t cublasSetWorkspace_v2(cublasHandle_t handle, void *workspace,
	//     size_t workspaceSizeInBytes)
	eSetWorkspace: {"cublasSetWorkspace_v2", []Kind{KHandle, KPtr, KSize}, KStatus, true},
	// cublasStatus_t cublasSetMathMode(cublasHandle_t handle, cublasMath_t mode)
	eSetMathMode: {"cublasSetMathMode", []Kind{KHandle, KInt}, KStatus, true},
	// cublasStatus_t cublasSetPointerMode_v2(cublasHandle_t handle, cublasPointerMode_t mode)
	eSetPointerMode: {"cublasSetPointerMode_v2", []Kind{KHandle, KInt}, KStatus, true},
	// cublasStatus_t cublasGemmEx(cublasHandle_t handle, cublasOperation_t transa,
	//     cublasOperation_t transb, int m, int n, int k, const void *alpha,
	//     const void *A, cudaDataType Atype, int lda,
	//     const void *B, cudaDataType Btype, int ldb, const void *beta,
	//     void *C, cudaDataType Ctype, int ldc,
	//     cublasComputeType_t computeType, cublasGemmAlgo_t algo)
	eGemmEx: {"cublasGemmEx", []Kind{KHandle, KInt, KInt, KInt, KInt, KInt, KRef,
		KPtr, KInt, KInt, KPtr, KInt, KInt, KRef, KPtr, KInt, KInt, KInt, KInt}, KStatus, true},
	// cublasStatus_t cublasGemmStridedBatchedEx(cublasHandle_t handle,
	//     cublasOperation_t transa, cublasOperation_t transb, int m, int n, int k,
	//     const void *alpha, const void *A, cudaDataType Atype, int lda,
	//     long long strideA, const void *B, cudaDataType Btype, int ldb,
	//     long long strideB, const void *beta, void *C, cudaDataType Ctype, int ldc,
	//     long long strideC, int batchCount, cublasComputeType_t computeType,
	//     cublasGemmAlgo_t algo)
	eGemmStridedBatchedEx: {"cublasGemmStridedBatchedEx", []Kind{KHandle, KInt, KInt, KInt, KInt, KInt, KRef,
		KPtr, KInt, KInt, KInt64, KPtr, KInt, KInt, KInt64, KRef, KPtr, KInt, KInt, KInt64, KInt, KInt, KInt}, KStatus, true},
	// const char *cublasGetStatusName(cublasStatus_t status) (CUDA 11.4.2 and later)
	eGetStatusName: {"cublasGetStatusName", []Kind{KInt}, KString, false},
	// const char *cublasGetStatusString(cublasStatus_t status)
	eGetStatusString: {"cublasGetStatusString", []Kind{KInt}, KString, false},
}

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

// lib is the loaded library: its entry points' addresses (0: missing).
var lib struct {
	once    sync.Once
	handle  libHandle
	err     *Error
	fns     [numEntries]uintptr
	path    string // the file libcublas came from
	ltPath  string // libcublasLt opened beside it, if any
	version [3]int
}

// ready loads the library on first use and returns nil or the loading error.
func ready() *Error {
	lib.once.Do(load)
	return lib.err
}

func load() {
	from := ""
	if os.Getenv(EnvLibrary) != "" {
		from = EnvLibrary + "="
	}
	var tried []string
	for _, name := range Candidates(os.Getenv, filepath.Glob) {
		lt := ""
		if strings.ContainsRune(name, '/') {
			// Open libcublasLt first from the same directory: libcublas needs it, and
			// the loader may not know the directory.
			base := filepath.Base(name)
			ver := base[strings.Index(base, ".so"):]
			if cand := filepath.Join(filepath.Dir(name), "libcublasLt"+ver); fileExists(cand) {
				lt = cand
			} else if m, _ := filepath.Glob(filepath.Join(filepath.Dir(name), "libcublasLt.so."+soMajor(base))); len(m) > 0 {
				lt = m[0]
			}
			if lt != "" {
				if _, msg := openLibrary(lt); msg != "" {
					lt = ""
				}
			}
		}
		h, msg := openLibrary(name)
		if msg != "" {
			tried = append(tried, fmt.Sprintf("%s%s (%s)", from, name, msg))
			continue
		}
		var missing []string
		var fns [numEntries]uintptr
		for i, e := range Entries {
			fns[i] = lookup(h, e.Name)
			if fns[i] == 0 && e.Required {
				missing = append(missing, e.Name)
			}
		}
		if len(missing) > 0 {
			tried = append(tried, fmt.Sprintf("%s%s (lacks %s: not cuBLAS 12 or later)", from, name, strings.Join(missing, ", ")))
			continue
		}
		lib.fns, lib.handle = fns, h
		lib.path = name
		if p := pathOf(fns[eCreate]); p != "" {
			lib.path = p
		}
		lib.ltPath = lt
		for i, prop := range []int{propMajor, propMinor, propPatch} {
			var a [MaxArgs]uint64
			a[0] = uint64(prop)
			if r := callC(fns[eGetProperty], &a, 2, 1<<1); Status(int32(r)) == StatusSuccess {
				lib.version[i] = int(int32(a[1]))
			}
		}
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

// call calls entry id with the n = len(Entries[id].Args) slots of a; ref marks the Ref
// slots. It returns the raw result.
func call(id int, a *[MaxArgs]uint64) (uint64, error) {
	e := &Entries[id]
	if err := ready(); err != nil {
		c := *err
		c.Op = e.Name
		return 0, &c
	}
	fn := lib.fns[id]
	if fn == 0 {
		return 0, unavailable(e.Name, fmt.Sprintf("%s has no symbol %s", lib.path, e.Name))
	}
	var ref uint32
	for i, k := range e.Args {
		if k == KRef {
			ref |= 1 << i
		}
	}
	return callC(fn, a, len(e.Args), ref), nil
}

// check calls entry id and converts a failing status to an *Error.
func check(id int, a *[MaxArgs]uint64) error {
	r, err := call(id, a)
	if err != nil {
		return err
	}
	if s := Status(int32(r)); s != StatusSuccess {
		return failure(Entries[id].Name, s)
	}
	return nil
}

//go:noinline
func failure(op string, s Status) error {
	e := &Error{Status: s, Name: s.String(), Op: op}
	if n := statusText(eGetStatusName, s); n != "" {
		e.Name = n
	}
	if m := statusText(eGetStatusString, s); m != "" && m != e.Name {
		e.Message = m
	}
	return e
}

// statusText calls cublasGetStatusName or cublasGetStatusString, "" if absent.
func statusText(id int, s Status) string {
	if lib.fns[id] == 0 {
		return ""
	}
	var a [MaxArgs]uint64
	a[0] = uint64(uint32(s))
	return cString(callC(lib.fns[id], &a, 1, 0))
}

// StatusName returns the library's name for s (cublasGetStatusName), or this package's
// when the library is unavailable.
func StatusName(s Status) string {
	if ready() == nil {
		if n := statusText(eGetStatusName, s); n != "" {
			return n
		}
	}
	return s.String()
}

// Create creates a handle on the calling thread's current device (cuBLAS API:
// cublasCreate).
func Create() (Handle, error) {
	var a [MaxArgs]uint64
	err := check(eCreate, &a)
	return Handle(a[0]), err
}

// Destroy releases the handle's resources (cuBLAS API: cublasDestroy), waiting for its
// work to finish.
func (h Handle) Destroy() error {
	var a [MaxArgs]uint64
	a[0] = uint64(h)
	return check(eDestroy, &a)
}

// LibraryVersion returns the version of the library behind h as 10000*major +
// 100*minor + patch (cuBLAS API: cublasGetVersion).
func (h Handle) LibraryVersion() (int, error) {
	var a [MaxArgs]uint64
	a[0] = uint64(h)
	err := check(eGetVersion, &a)
	return int(int32(a[1])), err
}

// SetStream makes h's later calls run on stream (a CUstream; cuBLAS API:
// cublasSetStream). It resets the workspace to cuBLAS's own pool: call SetWorkspace
// after it.
func (h Handle) SetStream(stream uintptr) error {
	var a [MaxArgs]uint64
	a[0], a[1] = uint64(h), uint64(stream)
	return check(eSetStream, &a)
}

// SetWorkspace gives h size bytes of device memory at ptr (256-byte aligned) as its
// workspace on the current stream (cuBLAS API: cublasSetWorkspace).
func (h Handle) SetWorkspace(ptr uintptr, size uint64) error {
	var a [MaxArgs]uint64
	a[0], a[1], a[2] = uint64(h), uint64(ptr), size
	return check(eSetWorkspace, &a)
}

// SetMathMode sets h's math mode (cuBLAS API: cublasSetMathMode).
func (h Handle) SetMathMode(m Math) error {
	var a [MaxArgs]uint64
	a[0], a[1] = uint64(h), uint64(uint32(m))
	return check(eSetMathMode, &a)
}

// SetPointerMode says where alpha and beta live (cuBLAS API: cublasSetPointerMode).
func (h Handle) SetPointerMode(m PointerMode) error {
	var a [MaxArgs]uint64
	a[0], a[1] = uint64(h), uint64(uint32(m))
	return check(eSetPointerMode, &a)
}

// Matrix is a GEMM operand: a device pointer, its element type and leading dimension,
// and (for the batched call) the elements from one matrix to the next.
type Matrix struct {
	Ptr    uintptr
	Type   DataType
	LD     int
	Stride int64
}

// Scalar is alpha or beta: its bits in the low bytes, as the compute type reads it
// (math.Float32bits for Compute32F and the 32F_FAST types, math.Float64bits for
// Compute64F), in host memory (PointerHost).
type Scalar uint64

func i32(v int) uint64 { return uint64(uint32(int32(v))) }

// GemmEx computes C = alpha*op(A)@op(B) + beta*C, column major, on h's stream (cuBLAS
// API: cublasGemmEx).
func (h Handle) GemmEx(ta, tb Operation, m, n, k int, alpha Scalar, A, B Matrix, beta Scalar, C Matrix, ct ComputeType, algo GemmAlgo) error {
	var a [MaxArgs]uint64
	a[0], a[1], a[2] = uint64(h), uint64(uint32(ta)), uint64(uint32(tb))
	a[3], a[4], a[5], a[6] = i32(m), i32(n), i32(k), uint64(alpha)
	a[7], a[8], a[9] = uint64(A.Ptr), uint64(uint32(A.Type)), i32(A.LD)
	a[10], a[11], a[12] = uint64(B.Ptr), uint64(uint32(B.Type)), i32(B.LD)
	a[13] = uint64(beta)
	a[14], a[15], a[16] = uint64(C.Ptr), uint64(uint32(C.Type)), i32(C.LD)
	a[17], a[18] = uint64(uint32(ct)), uint64(uint32(algo))
	return check(eGemmEx, &a)
}

// GemmStridedBatchedEx computes batch products C_i = alpha*op(A_i)@op(B_i) + beta*C_i,
// matrix i of each operand Stride elements after matrix i-1, column major, on h's
// stream (cuBLAS API: cublasGemmStridedBatchedEx).
func (h Handle) GemmStridedBatchedEx(ta, tb Operation, m, n, k int, alpha Scalar, A, B Matrix, beta Scalar, C Matrix, batch int, ct ComputeType, algo GemmAlgo) error {
	var a [MaxArgs]uint64
	a[0], a[1], a[2] = uint64(h), uint64(uint32(ta)), uint64(uint32(tb))
	a[3], a[4], a[5], a[6] = i32(m), i32(n), i32(k), uint64(alpha)
	a[7], a[8], a[9], a[10] = uint64(A.Ptr), uint64(uint32(A.Type)), i32(A.LD), uint64(A.Stride)
	a[11], a[12], a[13], a[14] = uint64(B.Ptr), uint64(uint32(B.Type)), i32(B.LD), uint64(B.Stride)
	a[15] = uint64(beta)
	a[16], a[17], a[18], a[19] = uint64(C.Ptr), uint64(uint32(C.Type)), i32(C.LD), uint64(C.Stride)
	a[20], a[21], a[22] = i32(batch), uint64(uint32(ct)), uint64(uint32(algo))
	return check(eGemmStridedBatchedEx, &a)
}

// errNoCgo is the loading error without cgo.
var errNoCgo = errors.New("built without cgo (CGO_ENABLED=0) or for a system without dlopen: cuBLAS cannot be loaded")
