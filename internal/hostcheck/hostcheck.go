// Package hostcheck carries one question from package gokernel to package gpu
// without exporting it from gpu: may the calling goroutine load a module on a device
// now? A Go kernel's first launch builds and loads its module while holding the
// instantiation's lock; a host function that launched the kernel meanwhile must not
// wait for that lock, since on CUDA the module load may wait for the host function
// (gpu.Stream.HostFunc).
package hostcheck

// ModuleLoad, set by package gpu when it initializes, returns an error wrapping
// gpu.ErrInvalidValue if dev (a *gpu.Device) is a CUDA device and the calling
// goroutine runs a host function of one of its streams, nil otherwise.
var ModuleLoad = func(dev any) error { return nil }
