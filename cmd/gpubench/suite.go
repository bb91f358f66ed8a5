package main

// The runtime-level suite, in the order the table lists it. Suites of later
// layers (arrays, ...) register from their own suite_<group>.go files.
func init() {
	registerSync()
	registerKernel()
	registerConstruct()
	registerCopies()
	registerLatency()
	registerReference()
}
