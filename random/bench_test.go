package random

import (
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// The CPU fill benchmarks report elements/s: "chunk" is one goroutine (what one worker
// of the array layer does), "parallel" is FillParallel over GOMAXPROCS goroutines.

func benchFill[T Elem](b *testing.B, s Spec, parallel bool) {
	dst := make([]T, 1<<20)
	b.SetBytes(int64(len(dst) * s.Type.Size()))
	for b.Loop() {
		var err error
		if parallel {
			err = FillParallel(s, dst, 1, 2)
		} else {
			err = Fill(s, dst, 1, 2, 0)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(len(dst))/b.Elapsed().Seconds(), "elements/s")
}

func BenchmarkUniformFloat32Chunk(b *testing.B) {
	benchFill[float32](b, Spec{Dist: Uniform, Type: dtype.Float32}, false)
}
func BenchmarkUniformFloat32Parallel(b *testing.B) {
	benchFill[float32](b, Spec{Dist: Uniform, Type: dtype.Float32}, true)
}
func BenchmarkNormalFloat32Chunk(b *testing.B) {
	benchFill[float32](b, Spec{Dist: Normal, Type: dtype.Float32}, false)
}
func BenchmarkNormalFloat32Parallel(b *testing.B) {
	benchFill[float32](b, Spec{Dist: Normal, Type: dtype.Float32}, true)
}
func BenchmarkNormalFloat64Chunk(b *testing.B) {
	benchFill[float64](b, Spec{Dist: Normal, Type: dtype.Float64}, false)
}
func BenchmarkUint32Chunk(b *testing.B) {
	benchFill[uint32](b, Spec{Dist: FullRange, Type: dtype.Uint32}, false)
}
func BenchmarkIntRange32Chunk(b *testing.B) {
	benchFill[int32](b, Spec{Dist: Range, Type: dtype.Int32, Lo: -3 << 29, Hi: 3 << 29}, false)
}
