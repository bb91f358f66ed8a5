package gpu

import "github.com/go-gpu/gpu/internal/kernel"

// SetReduceIndex64 forces 64-bit indexing in every CUDA reduction kernel (on) or
// restores the choice by size (off), dropping the cached plans.
func SetReduceIndex64(on bool) {
	redForceIndex64 = on
	redPlans.Clear()
	redPlanCount.Store(0)
}

// SetReduceSplitMin sets the least number of elements a CUDA reduction splits in two
// passes (kernel.RedSplitMin), dropping the cached plans, and returns the old value.
func SetReduceSplitMin(n int) int {
	old := kernel.RedSplitMin
	kernel.RedSplitMin = n
	redPlans.Clear()
	redPlanCount.Store(0)
	return old
}
