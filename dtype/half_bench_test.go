package dtype

import (
	"math"
	"testing"
)

func benchHalfInput() ([]float32, []uint16) {
	xs := make([]float32, 1024)
	hs := make([]uint16, 1024)
	for i := range xs {
		xs[i] = float32(i%1000)*0.001 + 0.5
		hs[i] = Float16FromFloat32(xs[i])
	}
	return xs, hs
}

func BenchmarkFloat16FromFloat32(b *testing.B) {
	xs, hs := benchHalfInput()
	for b.Loop() {
		for i, x := range xs {
			hs[i] = Float16FromFloat32(x)
		}
	}
	b.ReportMetric(float64(b.N*len(xs))/b.Elapsed().Seconds(), "conv/s")
}

func BenchmarkFloat16ToFloat32(b *testing.B) {
	xs, hs := benchHalfInput()
	for b.Loop() {
		for i, h := range hs {
			xs[i] = Float16ToFloat32(h)
		}
	}
	b.ReportMetric(float64(b.N*len(hs))/b.Elapsed().Seconds(), "conv/s")
}

func BenchmarkBFloat16FromFloat32(b *testing.B) {
	xs, hs := benchHalfInput()
	for b.Loop() {
		for i, x := range xs {
			hs[i] = BFloat16FromFloat32(x)
		}
	}
	b.ReportMetric(float64(b.N*len(xs))/b.Elapsed().Seconds(), "conv/s")
}

// BenchmarkFloat32Bits is the baseline: a loop of the same shape that only moves bits.
func BenchmarkFloat32Bits(b *testing.B) {
	xs, hs := benchHalfInput()
	for b.Loop() {
		for i, x := range xs {
			hs[i] = uint16(math.Float32bits(x) >> 16)
		}
	}
	b.ReportMetric(float64(b.N*len(xs))/b.Elapsed().Seconds(), "conv/s")
}
