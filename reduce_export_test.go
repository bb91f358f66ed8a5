package gpu

// SetReduceIndex64 forces 64-bit indexing in every CUDA reduction kernel (on) or
// restores the choice by size (off), dropping the cached plans.
func SetReduceIndex64(on bool) {
	redForceIndex64 = on
	redPlans.Clear()
	redPlanCount.Store(0)
}
