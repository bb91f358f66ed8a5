package gpu

// SetMatMulAlignOnCPU makes the CPU backend's generated kernel take A and B aligned as
// the CUDA kernel does (copied when they are not), and returns the previous setting.
func SetMatMulAlignOnCPU(on bool) bool {
	old := mmAlignOnCPU
	mmAlignOnCPU = on
	return old
}
