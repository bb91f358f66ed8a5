package gokernel

import (
	"go/types"
	"reflect"
)

// KernelPTX returns the PTX of k for compute capability major.minor with the type
// arguments given by the kinds of targs' values.
func KernelPTX(k *Kernel, major, minor int, checks bool, targs ...any) (src, entry string, err error) {
	subst := map[*types.TypeParam]types.Type{}
	for i := range k.p.sig.TypeParams().Len() {
		tp := k.p.sig.TypeParams().At(i)
		if i < len(targs) {
			subst[tp] = goTypes[reflect.TypeOf(targs[i]).Kind()]
		} else {
			subst[tp] = representative(tp)
		}
	}
	inst, err := k.p.compile(k.params, k.warp, compileOptions{major: major, minor: minor, checks: checks, subst: subst})
	if err != nil {
		return "", "", err
	}
	return inst.ptx, inst.entry, nil
}

// SetCompileHook makes f see every module compiled from now on.
func SetCompileHook(f func(entry, src string)) { compileHook = f }
