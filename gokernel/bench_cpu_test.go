package gokernel_test

import "testing"

// BenchmarkCPUCopy times the CPU backend's run of a one-element-per-thread kernel:
// the cost of calling the Go function per thread.
func BenchmarkCPUCopy(b *testing.B) {
	s := cpuStream(b)
	k := newKernel(b, Copy)
	n := 1 << 20
	x, y := fromSlice(b, s, randF32(n)), fromSlice(b, s, make([]float32, n))
	b.SetBytes(int64(8 * n))
	for b.Loop() {
		if err := k.LaunchN(s, n, y, x); err != nil {
			b.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/thread")
}
