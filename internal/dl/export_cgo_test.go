//go:build cgo && unix && !gpu_nodlopen

package dl

// NoopCgo is noopCgo, for the benchmarks.
var NoopCgo = noopCgo
