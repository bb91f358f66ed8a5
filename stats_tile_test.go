package gpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
)

// TestSoftmaxTileEdges checks float32 Softmax, LogSoftmax and LogSumExp on rows around
// the length that one block keeps in registers (16384: 1024 threads of 16; 32768: of
// 32) and just past it (read twice), with enough rows on CUDA that the rows are not
// split across blocks (the kept-row kernel runs), and special rows among them: a NaN, a
// +Inf, all -Inf, -Inf beside finite values, and values far below the maximum (exp
// underflows).
func TestSoftmaxTileEdges(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rows := 4
		if d.Backend() != "cpu" {
			rows = 300 // more than two rows a multiprocessor
		}
		rng := rand.New(rand.NewPCG(11, 12))
		for _, n := range []int{16383, 16384, 32768, 32769} {
			if testing.Short() && n > 16384 {
				continue
			}
			t.Run(fmt.Sprint(n), func(t *testing.T) {
				data := make([]float32, rows*n)
				for i := range data {
					data[i] = float32(rng.NormFloat64() * 8)
				}
				row := func(r int) []float32 { return data[r*n : (r+1)*n] }
				inf := float32(math.Inf(1))
				row(0)[n-1] = float32(math.NaN())
				row(1)[n/2] = inf
				for i := range row(2) {
					row(2)[i] = -inf
				}
				for i := 0; i < n; i += 3 {
					row(rows - 1)[i] = -inf
				}
				row(rows - 1)[1] = 200 // the rest underflow or nearly
				a := mustArr[float32](t)(gpu.FromSlice(s, data, rows, n))
				defer a.Free()
				sm := toSlice(t, mustArr[float32](t)(gpu.Softmax(s, a, 1)))
				lsm := toSlice(t, mustArr[float32](t)(gpu.LogSoftmax(s, a, 1)))
				lse := toSlice(t, mustArr[float32](t)(gpu.LogSumExp[float32](s, a, gpu.Axes(1))))
				x64 := make([]float64, n)
				for r := range rows {
					for i, v := range row(r) {
						x64[i] = float64(v)
					}
					want := statRef("lse", x64, 0)
					if !closeTo(float64(lse[r]), want, 2e-6) {
						t.Fatalf("LogSumExp row %d = %v, want %v", r, lse[r], want)
					}
					for i, v := range x64 {
						ws, wl := math.NaN(), math.NaN()
						if r != 0 && r != 1 && r != 2 {
							ws, wl = math.Exp(v-want), v-want
						}
						if got := sm[r*n+i]; !closeTo(float64(got), ws, 1e-5) {
							t.Fatalf("Softmax row %d [%d] (x %v) = %v, want %v", r, i, v, got, ws)
						}
						if got := lsm[r*n+i]; !closeTo(float64(got), wl, 1e-5) {
							t.Fatalf("LogSoftmax row %d [%d] (x %v) = %v, want %v", r, i, v, got, wl)
						}
					}
				}
				// Inputs unchanged.
				back := toSlice(t, a)
				for i := range back {
					if math.Float32bits(back[i]) != math.Float32bits(data[i]) {
						t.Fatalf("input [%d] changed: %v, was %v", i, back[i], data[i])
					}
				}
			})
		}
	})
}
