package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cuda"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// The GPU tests of the matrix products (they skip without a CUDA driver). Every form and
// type runs against the CPU reference on CUDA in TestMatMulTypes and the others (both
// kernels: cuBLAS and the generated one); the tests here compare the generated kernel
// with cuBLAS at sizes too large for a reference on the host, and check the behaviour
// without cuBLAS.

// TestMatMulGeneratedVsLibrary compares the generated kernel with cuBLAS on products of
// uniform [0, 1) inputs (so that sum |a||b| is the product itself): every type, every
// layout, tiles partial on every side, K not a multiple of the tile, batches. The bound
// is the sum of both results' accumulation bounds (see mmCheck), relative to the value.
func TestMatMulGeneratedVsLibrary(t *testing.T) {
	d := cudaOrSkip(t)
	if lib, err := d.MatMulLibrary(); err != nil {
		t.Skipf("no cuBLAS: %v", err)
	} else {
		t.Logf("library: %s", lib)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	type shape struct{ batch, m, n, k int }
	// 512x512x1000 and 37x45x3000 leave most of the device idle unless K is split
	// (cuBLAS's heuristic splits it; the generated kernel does not).
	shapes := []shape{{1, 1031, 517, 2049}, {1, 4096, 4096, 1000}, {3, 129, 257, 65}, {256, 128, 128, 128}, {1, 8, 8, 8},
		{1, 512, 512, 1000}, {1, 37, 45, 3000}}
	for _, c := range []struct {
		name string
		dt   dtype.DType
		prec gpu.MatMulPrecision
		uIn  float64
	}{
		{"float32", dtype.Float32, gpu.PrecisionHighest, 0},
		{"tf32", dtype.Float32, gpu.PrecisionHigh, 0x1p-10},
		{"float64", dtype.Float64, gpu.PrecisionHighest, 0},
		{"bfloat16", dtype.BFloat16, gpu.PrecisionHighest, 0},
		{"float16", dtype.Float16, gpu.PrecisionHighest, 0},
	} {
		for _, ta := range []bool{false, true} {
			for _, tb := range []bool{false, true} {
				for _, sh := range shapes {
					t.Run(fmt.Sprintf("%s/ta=%v/tb=%v/%dx%dx%dx%d", c.name, ta, tb, sh.batch, sh.m, sh.n, sh.k), func(t *testing.T) {
						switch c.dt {
						case dtype.Float64:
							mmCompare[float64](t, s, c.dt, sh.batch, sh.m, sh.n, sh.k, ta, tb, c.prec, c.uIn)
						case dtype.Float32:
							mmCompare[float32](t, s, c.dt, sh.batch, sh.m, sh.n, sh.k, ta, tb, c.prec, c.uIn)
						case dtype.BFloat16:
							mmCompare[gpu.BFloat16](t, s, c.dt, sh.batch, sh.m, sh.n, sh.k, ta, tb, c.prec, c.uIn)
						case dtype.Float16:
							mmCompare[gpu.Float16](t, s, c.dt, sh.batch, sh.m, sh.n, sh.k, ta, tb, c.prec, c.uIn)
						}
					})
				}
			}
		}
	}
}

// mmUniform returns a new array of shape holding uniform [0, 1) values of type T (float32
// values rounded to T).
func mmUniform[T gpu.Elem](t *testing.T, s *gpu.Stream, g *gpu.Generator, shape ...int) *gpu.Array[T] {
	t.Helper()
	x, err := gpu.Empty[float32](s, shape...)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Free()
	if err := gpu.RandInto(s, g, x); err != nil {
		t.Fatal(err)
	}
	out, err := gpu.Astype[T](s, x)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { out.Free() })
	return out
}

func mmCompare[T gpu.Elem](t *testing.T, s *gpu.Stream, dt dtype.DType, batch, m, n, k int, ta, tb bool,
	prec gpu.MatMulPrecision, uIn float64) {
	g := gpu.NewGenerator(uint64(m*n + k))
	lead := []int{}
	if batch > 1 {
		lead = []int{batch}
	}
	dims := func(r, c int, tr bool) []int {
		if tr {
			return append(append([]int{}, lead...), c, r)
		}
		return append(append([]int{}, lead...), r, c)
	}
	a := mmUniform[T](t, s, g, dims(m, k, ta)...)
	b := mmUniform[T](t, s, g, dims(k, n, tb)...)
	swap := func(x *gpu.Array[T], tr bool) *gpu.Array[T] {
		if !tr {
			return x
		}
		r := x.Ndim()
		axes := make([]int, r)
		for i := range axes {
			axes[i] = i
		}
		axes[r-2], axes[r-1] = r-1, r-2
		v, err := x.Transpose(axes...)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	a, b = swap(a, ta), swap(b, tb)
	lib, err := gpu.MatMul(s, a, b, gpu.WithKernel(gpu.MatMulLibrary), gpu.WithPrecision(prec))
	if err != nil {
		t.Fatal(err)
	}
	defer lib.Free()
	gen, err := gpu.MatMul(s, a, b, gpu.WithKernel(gpu.MatMulGenerated), gpu.WithPrecision(prec))
	if err != nil {
		t.Fatal(err)
	}
	defer gen.Free()
	lv, err := lib.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	gv, err := gen.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var c mmCodec[T]
	switch any(lv).(type) {
	case []float32:
		c = any(codecF32()).(mmCodec[T])
	case []float64:
		c = any(codecF64()).(mmCodec[T])
	case []gpu.Float16:
		c = any(codecF16()).(mmCodec[T])
	case []gpu.BFloat16:
		c = any(codecBF16()).(mmCodec[T])
	}
	bound := 2 * (2*float64(k)*uAcc(dt) + uIn + c.uOut)
	bad := 0
	for i := range lv {
		x, y := c.from(lv[i]), c.from(gv[i])
		if !(math.Abs(x-y) <= bound*math.Abs(x)+1e-30) {
			if bad++; bad <= 5 {
				t.Errorf("element %d: cuBLAS %v, generated %v (bound %.3g relative)", i, x, y, bound)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d of %d elements differ", bad, len(lv))
	}
}

// TestMatMulNoLibrary runs, in a child process, with GPU_CUBLAS_LIBRARY naming a file
// that does not exist: the library is reported missing (an error wrapping
// ErrNotSupported that names the file), MatMulLibrary calls fail the same way, MatMul
// falls back to the generated kernel with correct results, and the rest of the package
// is unaffected.
func TestMatMulNoLibrary(t *testing.T) {
	const child = "GPU_MATMUL_TEST_CHILD"
	d := cudaOrSkip(t)
	if os.Getenv(child) == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestMatMulNoLibrary$", "-test.v")
		cmd.Env = append(os.Environ(), child+"=1", "GPU_CUBLAS_LIBRARY=/nonexistent/libcublas.so.13")
		out, err := cmd.CombinedOutput()
		if err != nil || !regexp.MustCompile(`(?m)^--- PASS: TestMatMulNoLibrary`).Match(out) {
			t.Fatalf("child: %v\n%s", err, out)
		}
		return
	}
	_, err := d.MatMulLibrary()
	if !errors.Is(err, gpu.ErrNotSupported) || !strings.Contains(err.Error(), "/nonexistent/libcublas.so.13") {
		t.Fatalf("MatMulLibrary() = %v", err)
	}
	t.Logf("without cuBLAS: %v", err)
	s := d.DefaultStream()
	a, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b, _ := gpu.FromSlice(s, []float32{1, 0, 0, 1, 1, 1}, 3, 2)
	if _, err := gpu.MatMul(s, a, b, gpu.WithKernel(gpu.MatMulLibrary)); !errors.Is(err, gpu.ErrNotSupported) {
		t.Errorf("MatMul with the library: %v", err)
	}
	c, err := gpu.MatMul(s, a, b)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := c.ToSlice(context.Background())
	if fmt.Sprint(got) != "[4 5 10 11]" {
		t.Errorf("MatMul without cuBLAS = %v", got)
	}
	sum, err := gpu.Sum[float32](s, a)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := sum.ToSlice(context.Background()); v[0] != 21 {
		t.Errorf("Sum = %v", v)
	}
}

// TestMatMulStreams checks the ordering of products on several streams: a product on
// one stream reads what another stream's product wrote, with no synchronization by
// the caller (the buffers' tracking orders them), on both kernels.
func TestMatMulStreams(t *testing.T) {
	d := cudaOrSkip(t)
	for _, kern := range []gpu.MatMulKernel{gpu.MatMulAuto, gpu.MatMulGenerated} {
		s1, _ := d.NewStream()
		s2, _ := d.NewStream()
		n := 512
		id := make([]float32, n*n)
		for i := 0; i < n; i++ {
			id[i*n+i] = 2
		}
		x, _ := gpu.FromSlice(s1, id, n, n)
		y, _ := gpu.Empty[float32](s1, n, n)
		z, _ := gpu.Empty[float32](s2, n, n)
		for i := 0; i < 5; i++ {
			// y = x@x on s1 (4*I), then z = y@x on s2 (8*I), then x = z@... chained.
			if err := gpu.MatMulInto(s1, y, x, x, gpu.WithKernel(kern)); err != nil {
				t.Fatal(err)
			}
			if err := gpu.MatMulInto(s2, z, y, x, gpu.WithKernel(kern)); err != nil {
				t.Fatal(err)
			}
		}
		v, err := z.At(context.Background(), n-1, n-1)
		if err != nil || v != 8 {
			t.Errorf("%v: z[n-1][n-1] = %v, %v; want 8", kern, v, err)
		}
		s1.Close()
		s2.Close()
	}
}

// TestMatMulGeneratedTiles compares every tiling of the generated tensor-core kernel
// (Tuning.MatMulTile, internal/kernel's MatMulTiles) with cuBLAS, for bfloat16, float16
// and TF32 in two layouts, on shapes with partial tiles on every side and K over more
// tiles than the pipelines have stages. One tiling: go test -run
// 'TestMatMulGeneratedTiles/.*/tile=7/'.
func TestMatMulGeneratedTiles(t *testing.T) {
	d := cudaOrSkip(t)
	if _, err := d.MatMulLibrary(); err != nil {
		t.Skipf("no cuBLAS: %v", err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	def := d.Tuning()
	defer d.SetTuning(def)
	for tile := 1; tile <= len(kernel.MatMulTiles()); tile++ {
		tu := def
		tu.MatMulTile = tile
		if _, err := d.SetTuning(tu); err != nil {
			t.Fatal(err)
		}
		for _, tr := range []bool{false, true} {
			for _, sh := range [][4]int{{1, 1031, 517, 2049}, {3, 129, 257, 65}, {2, 300, 200, 389}} {
				name := fmt.Sprintf("tile=%d/trans=%v/%dx%dx%dx%d", tile, tr, sh[0], sh[1], sh[2], sh[3])
				t.Run("bfloat16/"+name, func(t *testing.T) {
					mmCompare[gpu.BFloat16](t, s, dtype.BFloat16, sh[0], sh[1], sh[2], sh[3], tr, tr, gpu.PrecisionHighest, 0)
				})
				t.Run("float16/"+name, func(t *testing.T) {
					mmCompare[gpu.Float16](t, s, dtype.Float16, sh[0], sh[1], sh[2], sh[3], tr, !tr, gpu.PrecisionHighest, 0)
				})
				t.Run("tf32/"+name, func(t *testing.T) {
					mmCompare[float32](t, s, dtype.Float32, sh[0], sh[1], sh[2], sh[3], tr, tr, gpu.PrecisionHigh, 0x1p-10)
				})
			}
		}
	}
}

// TestMatMulReplay: a small product repeated on a stream is launched from a CUDA graph
// from its second call on (backend/cuda's gemm_replay.go). Each call's result must
// equal, bit for bit, the same product made directly (on a new stream, whose handle
// has seen nothing) and, for float32, match a float64 reference on the host, with A's
// values changed and the output poisoned between calls (the graph reads and writes the
// arrays anew): through MatMulInto with a transposed B, through Gemm with alpha and
// beta (C read too), on TF32, on a batched bfloat16 product, and over 24 products that
// overflow a stream's 16 remembered ones (graphs forgotten while their launches may
// run, captured again later); all while another goroutine synchronizes the device in a
// loop (a context-wide synchronize must wait for a capture, not end it). The device's
// counts must show one capture per product and a launch per call after the first. The
// cublasLt and classic engines run the same checks in child processes.
func TestMatMulReplay(t *testing.T) {
	const child = "GPU_MATMUL_REPLAY_CHILD"
	d := cudaOrSkip(t)
	if _, err := d.MatMulLibrary(); err != nil {
		t.Skipf("no cuBLAS: %v", err)
	}
	if os.Getenv(child) == "" {
		for _, api := range []string{"lt", "classic"} {
			t.Run(api, func(t *testing.T) {
				cmd := exec.Command(os.Args[0], "-test.run", "^TestMatMulReplay$", "-test.v")
				cmd.Env = append(os.Environ(), child+"=1", "GPU_CUBLAS_API="+api)
				out, err := cmd.CombinedOutput()
				if err != nil || !regexp.MustCompile(`(?m)^--- PASS: TestMatMulReplay`).Match(out) {
					t.Fatalf("child with GPU_CUBLAS_API=%s: %v\n%s", api, err, out)
				}
			})
		}
	}
	if on, err := strconv.ParseBool(strings.TrimSpace(os.Getenv("GPU_CUBLAS_REPLAY"))); err == nil && !on ||
		strings.Contains(os.Getenv("GPU_CUBLAS_API"), "tune") || strings.TrimSpace(os.Getenv("GPU_CUBLAS_WORKSPACE")) == "0" {
		t.Skip("no replay under GPU_CUBLAS_REPLAY=0, the tune engine or GPU_CUBLAS_WORKSPACE=0")
	}
	bd := d.BackendDevice().(*cuda.Device)
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	// Another goroutine synchronizes the device until the checks end.
	stop, syncErr := make(chan struct{}), make(chan error, 1)
	go func() {
		defer close(syncErr)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := d.Synchronize(ctx); err != nil {
				syncErr <- err
				return
			}
		}
	}()
	defer func() {
		close(stop)
		if err := <-syncErr; err != nil {
			t.Errorf("Device.Synchronize beside the replays: %v", err)
		}
	}()
	const m, k, n, calls = 96, 200, 80, 6
	g := gpu.NewGenerator(7)
	rand := func(shape ...int) *gpu.Array[float32] {
		x, err := gpu.Empty[float32](s, shape...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Free() })
		if err := gpu.RandInto(s, g, x); err != nil {
			t.Fatal(err)
		}
		return x
	}
	a, bt, out := rand(m, k), rand(n, k), rand(m, n)
	b, err := bt.Transpose(1, 0) // (k, n), transposed in memory
	if err != nil {
		t.Fatal(err)
	}
	host := func(x *gpu.Array[float32]) []float32 {
		v, err := x.ToSlice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	// direct returns the product made by mk on a new stream.
	direct := func(mk func(s2 *gpu.Stream) (*gpu.Array[float32], error)) []float32 {
		t.Helper()
		s2, err := d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s2.Close()
		ref, err := mk(s2)
		if err != nil {
			t.Fatal(err)
		}
		defer ref.Free()
		return host(ref)
	}
	// check compares out with want (bit for bit) and with the host's alpha*a@b +
	// beta*c0, within float32's accumulation bound: 2^-23 (twice float32's unit
	// roundoff) times k*sum|a_il*b_lj| + |result| (u: the bound's factor; TF32: 2^-10).
	check := func(what string, alpha, beta float64, c0, want []float32, u float64) {
		t.Helper()
		got, av, btv := host(out), host(a), host(bt)
		bad := 0
		for i := range m {
			for j := range n {
				var sum, mag float64
				for l := range k {
					p := float64(av[i*k+l]) * float64(btv[j*k+l])
					sum, mag = sum+p, mag+math.Abs(p)
				}
				x := alpha*sum + beta*float64(c0[i*n+j])
				g, w := got[i*n+j], want[i*n+j]
				if math.Float32bits(g) != math.Float32bits(w) || math.Abs(float64(g)-x) > u*(float64(k)*mag+math.Abs(x)) {
					if bad++; bad <= 3 {
						t.Errorf("%s, element (%d, %d): %v, direct %v, host %v", what, i, j, g, w, x)
					}
				}
			}
		}
	}
	counts := func(what string, wantCaptures, wantLaunches uint64, from [2]uint64) [2]uint64 {
		t.Helper()
		c, l := bd.GemmReplays()
		if c-from[0] != wantCaptures || l-from[1] != wantLaunches {
			t.Errorf("%s: %d captures, %d graph launches; want %d and %d", what, c-from[0], l-from[1], wantCaptures, wantLaunches)
		}
		return [2]uint64{c, l}
	}
	var at [2]uint64
	at[0], at[1] = bd.GemmReplays()
	zeros := make([]float32, m*n)
	for _, prec := range []gpu.MatMulPrecision{gpu.PrecisionHighest, gpu.PrecisionHigh} {
		u := 0x1p-23
		if prec == gpu.PrecisionHigh {
			u = 0x1p-10
		}
		for call := range calls {
			if err := gpu.RandInto(s, g, a); err != nil {
				t.Fatal(err)
			}
			if err := gpu.Fill(s, out, float32(math.NaN())); err != nil {
				t.Fatal(err)
			}
			opts := []gpu.MatMulOption{gpu.WithKernel(gpu.MatMulLibrary), gpu.WithPrecision(prec)}
			if err := gpu.MatMulInto(s, out, a, b, opts...); err != nil {
				t.Fatal(err)
			}
			want := direct(func(s2 *gpu.Stream) (*gpu.Array[float32], error) { return gpu.MatMul(s2, a, b, opts...) })
			check(fmt.Sprintf("MatMulInto, precision %d, call %d", prec, call), 1, 0, zeros, want, u)
		}
		at = counts(fmt.Sprintf("MatMulInto, precision %d", prec), 1, calls-1, at)
	}
	// Gemm: out = 0.5*a@b - 2*out, from new values of out each time.
	for call := range 3 {
		if err := gpu.RandInto(s, g, out); err != nil {
			t.Fatal(err)
		}
		cv := host(out)
		if err := gpu.Gemm(s, 0.5, a, b, -2, out, gpu.WithKernel(gpu.MatMulLibrary)); err != nil {
			t.Fatal(err)
		}
		want := direct(func(s2 *gpu.Stream) (*gpu.Array[float32], error) {
			c, err := gpu.FromSlice(s2, cv, m, n)
			if err != nil {
				return nil, err
			}
			return c, gpu.Gemm(s2, 0.5, a, b, -2, c, gpu.WithKernel(gpu.MatMulLibrary))
		})
		check(fmt.Sprintf("Gemm, call %d", call), 0.5, -2, cv, want, 0x1p-23)
	}
	at = counts("Gemm", 1, 2, at)
	// A batched bfloat16 product (cublasGemmStridedBatchedEx), against the direct one.
	ab, bb := mmUniform[gpu.BFloat16](t, s, g, 4, 24, 40), mmUniform[gpu.BFloat16](t, s, g, 40, 16)
	ob, err := gpu.Empty[gpu.BFloat16](s, 4, 24, 16)
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Free()
	ref, err := gpu.MatMul(s, ab, bb, gpu.WithKernel(gpu.MatMulLibrary)) // a product of its own (another output)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Free()
	wantB, err := ref.ToSlice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for call := range 3 {
		if err := gpu.Fill(s, ob, gpu.BFloat16(0x7fc1)); err != nil { // NaN
			t.Fatal(err)
		}
		if err := gpu.MatMulInto(s, ob, ab, bb, gpu.WithKernel(gpu.MatMulLibrary)); err != nil {
			t.Fatal(err)
		}
		if got, err := ob.ToSlice(ctx); err != nil || !slices.Equal(got, wantB) {
			t.Errorf("batched bfloat16, call %d: %v (error %v), want %v", call, got[:4], err, wantB[:4])
		}
	}
	at = counts("batched bfloat16", 1, 2, at)
	// 24 products (one per output) in three phases of three rounds: the first 12, the
	// other 12 (which push the first out of the stream's 16), the first 12 again.
	outs := make([]*gpu.Array[float32], 24)
	for i := range outs {
		outs[i] = rand(8, 8)
	}
	a8, b8 := rand(8, 16), rand(16, 8)
	want8 := direct(func(s2 *gpu.Stream) (*gpu.Array[float32], error) { return gpu.MatMul(s2, a8, b8) })
	for phase, keys := range [][]*gpu.Array[float32]{outs[:12], outs[12:], outs[:12]} {
		for round := range 3 {
			for i, o := range keys {
				if err := gpu.Fill(s, o, float32(math.NaN())); err != nil {
					t.Fatal(err)
				}
				if err := gpu.MatMulInto(s, o, a8, b8, gpu.WithKernel(gpu.MatMulLibrary)); err != nil {
					t.Fatal(err)
				}
				if got := host(o); !slices.Equal(got, want8) {
					t.Errorf("phase %d, round %d, product %d: %v, want %v", phase, round, i, got[:4], want8[:4])
				}
			}
		}
	}
	if c, _ := bd.GemmReplays(); c-at[0] < 24 {
		t.Errorf("24 products in three phases: %d captures, want at least 24", c-at[0])
	}
}
