package main

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/ptxsim/simdev"
)

// goKernelDevices returns the CPU backend, the PTX simulator's fake CUDA device (the
// compiler's PTX) and the CUDA device where there is one, on which
// TestGoBenchKernels runs gokernels.go's kernels.
func goKernelDevices(t *testing.T) map[string]*gpu.Device {
	t.Helper()
	c, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := gpu.NewDevice(simdev.New(2))
	if err != nil {
		t.Fatal(err)
	}
	devs := map[string]*gpu.Device{"cpu": c, "sim": sim}
	if d, err := gpu.OpenBackend("cuda", 0); err == nil {
		devs["cuda"] = d
	}
	return devs
}

func randSlice(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = rand.Float32()*2 - 1
	}
	return x
}

func upload(t *testing.T, s *gpu.Stream, x []float32) *gpu.Array[float32] {
	t.Helper()
	a, err := gpu.FromSlice(s, x, len(x))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Free() })
	return a
}

func download(t *testing.T, a *gpu.Array[float32]) []float32 {
	t.Helper()
	x, err := a.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return x
}

// TestGoBenchKernels checks gpubench's Saxpy, Transpose and Sum (gokernels.go), and the
// first Saxpy and Transpose, against plain Go on both devices: Saxpy over sizes that leave a
// tail of single elements, grids of one block to several, and arrays that start off
// the 16-byte alignment (the element-by-element path of the vector accesses);
// Transpose over whole and partial tiles.
func TestGoBenchKernels(t *testing.T) {
	for name, d := range goKernelDevices(t) {
		t.Run(name, func(t *testing.T) {
			s := d.DefaultStream()
			for _, kname := range []string{"Saxpy", "SaxpyV1"} {
				k, err := goKernel(kname)
				if err != nil {
					t.Fatal(err)
				}
				for _, tc := range []struct{ n, sms, off int }{{1, 1, 0}, {1023, 1, 0}, {4096, 1, 0}, {5003, 1, 0}, {9000, 2, 0}, {9000, 2, 1}, {4099, 1, 2}} {
					x, y := randSlice(tc.n+tc.off), randSlice(tc.n+tc.off)
					a := float32(1.5)
					gx, gy := upload(t, s, x), upload(t, s, y)
					vx, err1 := gx.Slice(gpu.R(tc.off, tc.n+tc.off))
					vy, err2 := gy.Slice(gpu.R(tc.off, tc.n+tc.off))
					if err1 != nil || err2 != nil {
						t.Fatal(err1, err2)
					}
					if err := k.Launch(s, saxpyConfig(tc.n, tc.sms), a, vx, vy); err != nil {
						t.Fatal(err)
					}
					got := download(t, gy)
					for i := range y {
						want := y[i]
						if i >= tc.off {
							want = float32(a*x[i]) + y[i]
						}
						if got[i] != want {
							t.Fatalf("%s n=%d off=%d: y[%d] = %v, want %v", kname, tc.n, tc.off, i, got[i], want)
						}
					}
					if back := download(t, gx); !equalF32(back, x) {
						t.Fatalf("%s n=%d: x changed", kname, tc.n)
					}
				}
			}
			for _, v1 := range []bool{false, true} {
				kname := map[bool]string{false: "Transpose", true: "TransposeV1"}[v1]
				k, err := goKernel(kname)
				if err != nil {
					t.Fatal(err)
				}
				for _, tc := range []struct{ rows, cols int }{{64, 96}, {70, 45}, {1, 33}, {33, 1}, {128, 192}, {130, 67}} {
					in := randSlice(tc.rows * tc.cols)
					out := make([]float32, len(in))
					for i := range out {
						out[i] = 1e30 // poison
					}
					gin, gout := upload(t, s, in), upload(t, s, out)
					if err := k.Launch(s, transposeConfig(tc.rows, tc.cols, v1), tc.rows, tc.cols, gin, gout); err != nil {
						t.Fatal(err)
					}
					got := download(t, gout)
					for r := range tc.rows {
						for c := range tc.cols {
							if got[c*tc.rows+r] != in[r*tc.cols+c] {
								t.Fatalf("%s %dx%d: out[%d][%d] = %v, want %v", kname, tc.rows, tc.cols, c, r, got[c*tc.rows+r], in[r*tc.cols+c])
							}
						}
					}
				}
			}
			// Sum over sizes with tails of every length (1067 and 2150 end inside a
			// thread's second run), off the 16-byte alignment, on
			// grids of one block to several; small integers, so every order of the
			// additions gives the exact sum.
			k, err := goKernel("Sum")
			if err != nil {
				t.Fatal(err)
			}
			for _, tc := range []struct{ n, blocks, off int }{{1, 1, 0}, {7, 1, 0}, {1023, 1, 0}, {1067, 1, 0}, {2150, 2, 1}, {4096, 1, 0}, {5003, 2, 0}, {9001, 3, 1}, {4099, 1, 2}, {20000, 3, 3}} {
				x := make([]float32, tc.n+tc.off)
				want := float32(0)
				for i := range x {
					x[i] = float32(rand.IntN(17) - 8)
					if i >= tc.off {
						want += x[i]
					}
				}
				gx := upload(t, s, x)
				vx, err := gx.Slice(gpu.R(tc.off, tc.n+tc.off))
				if err != nil {
					t.Fatal(err)
				}
				sum := upload(t, s, []float32{0.5})
				cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: tc.blocks}, Block: gpu.Dim3{X: 256}}
				if err := k.Launch(s, cfg, vx, sum); err != nil {
					t.Fatal(err)
				}
				if got := download(t, sum)[0]; got != want+0.5 {
					t.Fatalf("Sum n=%d off=%d blocks=%d: %v, want %v", tc.n, tc.off, tc.blocks, got-0.5, want)
				}
			}
		})
	}
}

func equalF32(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
