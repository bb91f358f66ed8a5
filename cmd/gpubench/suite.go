package main

// The suite, in the order the table lists it: the runtime level (sync,
// kernel/launch, construct, copyto), the array level (suite_array.go,
// suite_reduce.go, suite_random.go, suite_half.go, suite_stats.go, suite_index.go), the
// examples' workloads (suite_workload.go), the hand-written kernels and Metal.jl's
// integration benchmarks (suite_kernels.go), then latency and the reference
// copy.
func init() {
	registerSync()
	registerKernel()
	registerConstruct()
	registerCopies()
	registerArrays()
	registerReductions()
	registerRandom()
	registerHalf()
	registerPermutations()
	registerStats()
	registerIndexOps()
	registerMatMul()
	registerGraphs()
	registerSort()
	registerWorkloads()
	registerKernels()
	registerGoKernels()
	registerLatency()
	registerReference()
}
