package cu

import (
	"fmt"

	"github.com/go-gpu/gpu/backend"
)

// Result is a CUresult code (CUDA Driver API: CUresult).
type Result int32

// The CUresult codes the library tests for by value.
const (
	Success                 Result = 0
	ErrorInvalidValue       Result = 1
	ErrorOutOfMemory        Result = 2
	ErrorNotInitialized     Result = 3
	ErrorDeinitialized      Result = 4
	ErrorStubLibrary        Result = 34
	ErrorInsufficientDriver Result = 35
	ErrorDeviceUnavailable  Result = 46
	ErrorNoDevice           Result = 100
	ErrorInvalidDevice      Result = 101
	ErrorInvalidImage       Result = 200
	ErrorInvalidContext     Result = 201
	ErrorNoBinaryForGPU     Result = 209
	ErrorInvalidPTX         Result = 218
	ErrorUnsupportedPTX     Result = 221
	ErrorInvalidHandle      Result = 400
	ErrorNotFound           Result = 500
	ErrorNotReady           Result = 600
	ErrorIllegalAddress     Result = 700
	ErrorLaunchOutOfRes     Result = 701
	ErrorLaunchTimeout      Result = 702
	ErrorPeerAccessEnabled  Result = 704
	ErrorContextDestroyed   Result = 709
	ErrorAssert             Result = 710
	ErrorHardwareStack      Result = 714
	ErrorIllegalInstruction Result = 715
	ErrorMisalignedAddress  Result = 716
	ErrorInvalidAddrSpace   Result = 717
	ErrorInvalidPC          Result = 718
	ErrorLaunchFailed       Result = 719
	ErrorCoopTooLarge       Result = 720 // a cooperative grid larger than the device holds at once
	ErrorNotPermitted       Result = 800
	ErrorNotSupported       Result = 801
	ErrorSystemDriver       Result = 803
	ErrorCompatNotSupported Result = 804
	// Stream capture (CUDA Driver API: CUDA_ERROR_STREAM_CAPTURE_*).
	ErrorCaptureUnsupported Result = 900 // not permitted while the stream captures
	ErrorCaptureInvalidated Result = 901 // an earlier error ended the capture
	ErrorCaptureMerge       Result = 902
	ErrorCaptureUnmatched   Result = 903 // the stream is not capturing
	ErrorCaptureUnjoined    Result = 904
	ErrorCaptureIsolation   Result = 905 // a dependency on work outside the capture
	ErrorCaptureImplicit    Result = 906
	ErrorCapturedEvent      Result = 907
	ErrorCaptureWrongThread Result = 908
	ErrorUnknown            Result = 999
)

// Error is a failed driver call: the CUresult with its name and message from the
// driver (CUDA Driver API: cuGetErrorName, cuGetErrorString), and the entry point.
type Error struct {
	Code    Result
	Name    string // "CUDA_ERROR_OUT_OF_MEMORY"
	Message string // "out of memory"
	Op      string // "cuMemAllocAsync"
	Detail  string // extra context, such as a JIT error log
}

// Error returns "cuda: cuMemAllocAsync: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory".
func (e *Error) Error() string {
	s := fmt.Sprintf("cuda: %s: %s (%d): %s", e.Op, e.Name, int(e.Code), e.Message)
	if e.Detail != "" {
		s += ": " + e.Detail
	}
	return s
}

// Is matches the sentinels of package backend: ErrNoDevice, ErrOutOfMemory,
// ErrInvalidValue, ErrLaunchFailed and ErrNotSupported.
func (e *Error) Is(target error) bool {
	return target != nil && Sentinel(e.Code) == target
}

// Sentinel returns the backend sentinel a code maps to, or nil.
func Sentinel(r Result) error {
	switch r {
	case ErrorNoDevice, ErrorInvalidDevice, ErrorNotInitialized, ErrorDeinitialized,
		ErrorStubLibrary, ErrorInsufficientDriver, ErrorDeviceUnavailable,
		ErrorSystemDriver, ErrorCompatNotSupported:
		return backend.ErrNoDevice
	case ErrorOutOfMemory:
		return backend.ErrOutOfMemory
	case ErrorInvalidValue, ErrorInvalidHandle, ErrorInvalidContext, ErrorInvalidImage,
		ErrorInvalidPTX, ErrorUnsupportedPTX, ErrorNoBinaryForGPU, ErrorNotFound:
		return backend.ErrInvalidValue
	case ErrorIllegalAddress, ErrorLaunchOutOfRes, ErrorLaunchTimeout, ErrorAssert,
		ErrorHardwareStack, ErrorIllegalInstruction, ErrorMisalignedAddress,
		ErrorInvalidAddrSpace, ErrorInvalidPC, ErrorLaunchFailed, ErrorContextDestroyed:
		return backend.ErrLaunchFailed
	case ErrorNotSupported, ErrorNotPermitted, ErrorCoopTooLarge, ErrorCaptureUnsupported, ErrorCaptureInvalidated,
		ErrorCaptureMerge, ErrorCaptureUnjoined, ErrorCaptureIsolation, ErrorCaptureImplicit,
		ErrorCapturedEvent, ErrorCaptureWrongThread:
		return backend.ErrNotSupported
	case ErrorCaptureUnmatched:
		return backend.ErrInvalidValue
	}
	return nil
}

// Sticky reports whether r leaves the context unusable (a kernel fault): every later
// call in the process's context fails (CUDA Programming Guide: "sticky" errors).
func Sticky(r Result) bool {
	return Sentinel(r) == backend.ErrLaunchFailed && r != ErrorLaunchOutOfRes
}
