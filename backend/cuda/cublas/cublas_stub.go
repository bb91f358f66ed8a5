//go:build !cgo || !unix

package cublas

// Without cgo (or dlopen) nothing can be loaded: the table's functions fail, and every
// call returns an error matching ErrUnavailable.

// libHandle stands for a dlopen handle.
type libHandle = uintptr

func openLibrary(path string) (libHandle, string) { return 0, errNoCgo.Error() }

func lookup(h libHandle, name string) uintptr { return 0 }

func pathOf(fn uintptr) string { return "" }

func callC(fn uintptr, a *[MaxArgs]uint64, n int, ref uint32) uint64 { return ^uint64(0) }

func cString(p uint64) string { return "" }
