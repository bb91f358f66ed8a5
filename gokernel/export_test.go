package gokernel

// KernelPTX returns the PTX of k (checked or not) for compute capability
// major.minor with the type arguments given by the kinds of targs' values.
func KernelPTX(k *Kernel, major, minor int, checks bool, targs ...any) (src, entry string, err error) {
	if !checks {
		k = k.Unchecked()
	}
	return k.PTX(major, minor, targs...)
}

// SetCompileHook makes f see every module compiled from now on.
func SetCompileHook(f func(entry, src string)) { compileHook = f }
