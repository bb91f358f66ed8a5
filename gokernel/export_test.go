package gokernel

import "go/types"

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

// IndexChecks returns how many index checks the kernel's PTX keeps (its
// instantiation with the first type of each constraint).
func IndexChecks(k *Kernel) (int, error) {
	inst, err := k.p.compile(k.params, k.warp, compileOptions{major: 9, minor: 0, checks: true, subst: representatives(k)})
	if err != nil {
		return 0, err
	}
	n := 0
	for _, s := range inst.sites {
		if s.kind == kIndex {
			n++
		}
	}
	return n, nil
}

func representatives(k *Kernel) map[*types.TypeParam]types.Type {
	subst := map[*types.TypeParam]types.Type{}
	for i := range k.p.sig.TypeParams().Len() {
		tp := k.p.sig.TypeParams().At(i)
		subst[tp] = representative(tp)
	}
	return subst
}
