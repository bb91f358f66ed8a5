package cu

import (
	"runtime"
	"unsafe"
)

// LaunchAttributeProgrammaticStreamSerialization is the launch attribute that lets a
// kernel start before the kernel ahead of it on the stream has completed, once every
// block of that one has executed griddepcontrol.launch_dependents (or completed): the
// kernel itself waits for its predecessor's results with griddepcontrol.wait
// (programmatic dependent launch, compute capability 9.0+; a graph captured from such
// launches keeps them as programmatic edges). Value: a non-zero int32 (CUDA Driver API:
// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION, CUlaunchAttributeValue::
// programmaticStreamSerializationAllowed).
const LaunchAttributeProgrammaticStreamSerialization uint32 = 6

// LaunchAttribute is one attribute of LaunchKernelEx, laid out as CUlaunchAttribute:
// the attribute's id, then its value (CUlaunchAttributeValue, a union of 64 bytes;
// an int32 value is Value[0]'s low 32 bits).
type LaunchAttribute struct {
	ID    uint32
	_     uint32
	Value [8]uint64
}

// launchConfig is CUlaunchConfig.
type launchConfig struct {
	grid, block [3]uint32
	smem        uint32
	_           uint32
	stream      uintptr
	attrs       uintptr
	numAttrs    uint32
	_           uint32
}

// LaunchKernelEx launches f as LaunchKernel does, with launch attributes (CUDA Driver
// API: cuLaunchKernelEx, CUDA 12.0+; an error wrapping backend.ErrNotSupported on an
// older driver). attrs, blob and offs are read during the call only.
func (c Context) LaunchKernelEx(f Function, grid, block [3]uint32, smem uint32, s Stream, blob []byte, offs []int32, attrs []LaunchAttribute) error {
	if !cuLaunchKernelEx.Bound() {
		return notSupported(cuLaunchKernelEx)
	}
	cfg := launchConfig{grid: grid, block: block, smem: smem, stream: uintptr(s), numAttrs: uint32(len(attrs))}
	if len(attrs) > 0 {
		cfg.attrs = uintptr(unsafe.Pointer(&attrs[0]))
	}
	var small [maxStackParams]uintptr
	params := small[:0]
	if len(offs) > len(small) {
		params = make([]uintptr, 0, len(offs))
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(blob)))
	for _, o := range offs {
		params = append(params, base+uintptr(o))
	}
	var pp uintptr
	if len(params) > 0 {
		pp = uintptr(unsafe.Pointer(&params[0]))
	}
	// (No function is called between taking the addresses and the call: package dl's
	// rule, so that all of them may be on the stack.)
	r := cuLaunchKernelEx.CallIn(&cur, uintptr(c), uintptr(unsafe.Pointer(&cfg)), uintptr(f), pp, 0)
	runtime.KeepAlive(blob)
	runtime.KeepAlive(attrs)
	runtime.KeepAlive(params)
	return check("cuLaunchKernelEx", r)
}
