package gokernel_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
)

// checkKernel runs fn (compiled by k) with args on every device and as Go on the
// host (kern.Run over copies of the slices), and requires every slice to come back
// the same, bit for bit (any NaN equals any NaN). Host slices among args travel as
// arrays.
func checkKernel(t *testing.T, k *gokernel.Kernel, fn any, cfg gpu.LaunchConfig, args ...any) {
	t.Helper()
	want := reference(t, fn, cfg, args)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		t.Helper()
		largs := make([]any, len(args))
		downs := map[int]func() any{}
		for i, a := range args {
			if reflect.TypeOf(a).Kind() == reflect.Slice {
				arr, down := upload(t, s, a)
				largs[i], downs[i] = arr, down
			} else {
				largs[i] = a
			}
		}
		if err := k.Launch(s, cfg, largs...); err != nil {
			t.Fatal(err)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Fatal(err)
		}
		for i, down := range downs {
			if msg := diff(want[i], down()); msg != "" {
				t.Errorf("argument %d: %s", i+1, msg)
			}
		}
	})
}

// reference runs fn as Go over copies of args' slices and returns the results.
func reference(t *testing.T, fn any, cfg gpu.LaunchConfig, args []any) []any {
	t.Helper()
	vals := make([]reflect.Value, 1+len(args))
	out := make([]any, len(args))
	ft := reflect.TypeOf(fn)
	for i, a := range args {
		v := reflect.ValueOf(a)
		if v.Kind() == reflect.Slice {
			c := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
			reflect.Copy(c, v)
			v = c
			out[i] = c.Interface()
		} else {
			v = v.Convert(ft.In(1 + i))
		}
		vals[1+i] = v
	}
	f := reflect.ValueOf(fn)
	err := kern.Run(kern.Config{
		Grid:        kern.Dim{X: cfg.Grid.X, Y: cfg.Grid.Y, Z: cfg.Grid.Z},
		Block:       kern.Dim{X: cfg.Block.X, Y: cfg.Block.Y, Z: cfg.Block.Z},
		Cooperative: true,
	}, func(th kern.Thread) {
		a := make([]reflect.Value, len(vals))
		copy(a, vals)
		a[0] = reflect.ValueOf(th)
		f.Call(a)
	})
	if err != nil {
		t.Fatalf("the reference run: %v", err)
	}
	return out
}

// upload copies a host slice to an array and returns it with a function that reads
// it back.
func upload(t *testing.T, s *gpu.Stream, x any) (any, func() any) {
	switch v := x.(type) {
	case []int8:
		return up(t, s, v)
	case []int16:
		return up(t, s, v)
	case []int32:
		return up(t, s, v)
	case []int64:
		return up(t, s, v)
	case []int:
		return up(t, s, v)
	case []uint8:
		return up(t, s, v)
	case []uint16:
		return up(t, s, v)
	case []uint32:
		return up(t, s, v)
	case []uint64:
		return up(t, s, v)
	case []uint:
		return up(t, s, v)
	case []float32:
		return up(t, s, v)
	case []float64:
		return up(t, s, v)
	}
	t.Fatalf("no arrays of %T", x)
	return nil, nil
}

func up[T gpu.Elem](t *testing.T, s *gpu.Stream, x []T) (any, func() any) {
	var z T
	a := fromSlice(t, s, append(x[:len(x):len(x)], z))
	a, err := a.Slice(gpu.R(0, len(x)))
	if err != nil {
		t.Fatal(err)
	}
	return a, func() any { return toSlice(t, a) }
}

// diff compares two slices of numbers bit for bit (NaNs equal).
func diff(want, got any) string {
	w, g := reflect.ValueOf(want), reflect.ValueOf(got)
	if w.Len() != g.Len() {
		return fmt.Sprintf("%d elements, want %d", g.Len(), w.Len())
	}
	bad := 0
	var first string
	for i := range w.Len() {
		a, b := w.Index(i), g.Index(i)
		same := false
		switch a.Kind() {
		case reflect.Float32, reflect.Float64:
			fa, fb := a.Float(), b.Float()
			same = fa != fa && fb != fb || fa == fb && math.Signbit(fa) == math.Signbit(fb)
		default:
			same = a.Interface() == b.Interface()
		}
		if !same {
			if bad == 0 {
				first = fmt.Sprintf("element %d is %v, want %v", i, b, a)
			}
			bad++
		}
	}
	if bad > 0 {
		return fmt.Sprintf("%d elements differ; %s", bad, first)
	}
	return ""
}

// edgeInts returns n values of T: the extremes, 0, ±1, and random ones.
func edgeInts[T kern.Integer](n int) []T {
	var z T
	bits := 8 * int(reflect.TypeOf(z).Size())
	signed := ^z < 0
	var lo, hi int64
	if signed {
		lo, hi = -1<<(bits-1), 1<<(bits-1)-1
	} else {
		lo, hi = 0, -1 // all ones
	}
	edge := []T{T(lo), T(hi), 0, 1, ^T(0), 2, T(hi) - 1, T(lo) + 1, 7, 63, 64, 31, 32}
	x := make([]T, n)
	for i := range x {
		if i < len(edge) && rand.IntN(2) == 0 {
			x[i] = edge[rand.IntN(len(edge))]
		} else if rand.IntN(3) == 0 {
			x[i] = edge[rand.IntN(len(edge))]
		} else {
			x[i] = T(rand.Uint64())
		}
	}
	return x
}

func linear(n, block int) gpu.LaunchConfig {
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: (n + block - 1) / block}, Block: gpu.Dim3{X: block}}
}

func testIntOps[T kern.Integer](t *testing.T) {
	var z T
	t.Run(reflect.TypeOf(z).String(), func(t *testing.T) {
		k, err := gokernel.NewNamed("semkernels_test.go", semSrc, "IntOps", IntOps[T])
		if err != nil {
			t.Fatal(err)
		}
		n := 300
		a, b := edgeInts[T](n), edgeInts[T](n)
		checkKernel(t, k, IntOps[T], linear(n, 64), a, b, make([]T, 16*n))
	})
}

// TestIntOps checks every integer operator of every integer type: wrapping,
// truncating division, MinInt / -1, shifts past the width.
func TestIntOps(t *testing.T) {
	testIntOps[int8](t)
	testIntOps[int16](t)
	testIntOps[int32](t)
	testIntOps[int64](t)
	testIntOps[int](t)
	testIntOps[uint8](t)
	testIntOps[uint16](t)
	testIntOps[uint32](t)
	testIntOps[uint64](t)
	testIntOps[uint](t)
}

func testShifts[T, U kern.Integer](t *testing.T) {
	var z T
	var zu U
	t.Run(fmt.Sprintf("%T<<%T", z, zu), func(t *testing.T) {
		k, err := gokernel.NewNamed("semkernels_test.go", semSrc, "Shifts", Shifts[T, U])
		if err != nil {
			t.Fatal(err)
		}
		n := 200
		a := edgeInts[T](n)
		s := make([]U, n)
		for i := range s {
			s[i] = U(rand.IntN(140))
		}
		checkKernel(t, k, Shifts[T, U], linear(n, 64), a, s, make([]T, 2*n))
	})
}

func TestShifts(t *testing.T) {
	testShifts[int8, uint8](t)
	testShifts[uint16, int64](t)
	testShifts[int32, uint](t)
	testShifts[uint32, int16](t)
	testShifts[int64, uint32](t)
	testShifts[uint64, uint64](t)
}

func isFloatKind(v any) bool {
	k := reflect.TypeOf(v).Kind()
	return k == reflect.Float32 || k == reflect.Float64
}

func testConvert[F, T kern.Number](t *testing.T) {
	var zf F
	var zt T
	t.Run(fmt.Sprintf("%T->%T", zf, zt), func(t *testing.T) {
		k, err := gokernel.NewNamed("semkernels_test.go", semSrc, "Convert", Convert[F, T])
		if err != nil {
			t.Fatal(err)
		}
		n := 100
		a := make([]F, n)
		ints := edgeInts[int64](n)
		for i := range a {
			switch {
			case isFloatKind(zf) && !isFloatKind(zt):
				// In range of T: Go leaves other float-to-integer conversions to
				// the implementation.
				size := reflect.TypeOf(zt).Size()
				lim := math.Ldexp(1, int(8*size)-1)
				unsigned := strings.HasPrefix(reflect.TypeOf(zt).Kind().String(), "uint")
				if unsigned {
					lim *= 2
				}
				lim = math.Min(lim, 1<<60)
				v := rand.Float64() * lim * 0.999
				if !unsigned && rand.IntN(2) == 0 {
					v = -v
				}
				a[i] = F(v)
			case isFloatKind(zf):
				v := rand.NormFloat64() * math.Exp(rand.Float64()*100-50)
				switch i % 20 {
				case 0:
					v = math.NaN()
				case 1:
					v = math.Inf(-1)
				case 2:
					v = math.Copysign(0, -1)
				case 3:
					v = 1e300
				case 4:
					v = 1e-310
				}
				a[i] = F(v)
			default:
				a[i] = F(ints[i])
			}
		}
		checkKernel(t, k, Convert[F, T], linear(n, 32), a, make([]T, n))
	})
}

func testConvertFrom[F kern.Number](t *testing.T) {
	testConvert[F, int8](t)
	testConvert[F, int16](t)
	testConvert[F, int32](t)
	testConvert[F, int64](t)
	testConvert[F, int](t)
	testConvert[F, uint8](t)
	testConvert[F, uint16](t)
	testConvert[F, uint32](t)
	testConvert[F, uint64](t)
	testConvert[F, uint](t)
	testConvert[F, float32](t)
	testConvert[F, float64](t)
}

// TestConvert checks the conversions between every pair of number types.
func TestConvert(t *testing.T) {
	testConvertFrom[int8](t)
	testConvertFrom[int16](t)
	testConvertFrom[int32](t)
	testConvertFrom[int64](t)
	testConvertFrom[int](t)
	testConvertFrom[uint8](t)
	testConvertFrom[uint16](t)
	testConvertFrom[uint32](t)
	testConvertFrom[uint64](t)
	testConvertFrom[uint](t)
	testConvertFrom[float32](t)
	testConvertFrom[float64](t)
}

// specialFloats returns n values of every magnitude, with NaN, infinities, zeros
// of both signs and subnormals among them.
func specialFloats[T kern.Float](n int) []T {
	sp := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1, -1, 0.5, -2.5, 1e-320, 3e38, 1e300, 1e-40}
	x := make([]T, n)
	for i := range x {
		if rand.IntN(4) == 0 {
			x[i] = T(sp[rand.IntN(len(sp))])
		} else {
			x[i] = T(rand.NormFloat64() * math.Exp(rand.Float64()*20-10))
		}
	}
	return x
}

func testFloatOps[T kern.Float](t *testing.T) {
	var z T
	t.Run(reflect.TypeOf(z).String(), func(t *testing.T) {
		k, err := gokernel.NewNamed("semkernels_test.go", semSrc, "FloatOps", FloatOps[T])
		if err != nil {
			t.Fatal(err)
		}
		n := 300
		checkKernel(t, k, FloatOps[T], linear(n, 64), specialFloats[T](n), specialFloats[T](n), make([]T, 24*n))
	})
}

// TestFloatOps checks float arithmetic, comparisons with NaN, the builtin min and
// max, the exact math functions and package kern's bit-identical ones.
func TestFloatOps(t *testing.T) {
	testFloatOps[float32](t)
	testFloatOps[float64](t)
}

func TestControlFlow(t *testing.T) {
	k := newSem(t, ControlFlow)
	n := 500
	a := edgeInts[int32](n)
	for i := range a {
		if i%2 == 0 {
			a[i] = int32(rand.IntN(200) - 100)
		}
	}
	checkKernel(t, k, ControlFlow, linear(n, 128), a, make([]int64, n))
}

func TestTupleAssign(t *testing.T) {
	k := newSem(t, TupleAssign)
	n := 300
	checkKernel(t, k, TupleAssign, linear(n, 64), edgeInts[int32](n), make([]int32, 3*n))
}

func TestBits(t *testing.T) {
	k := newSem(t, Bits)
	n := 300
	checkKernel(t, k, Bits, linear(n, 64), edgeInts[uint64](n), edgeInts[uint32](n), make([]int64, 8*n))
}

// TestWarpOps checks shuffles and votes with full and partial warps, 1-, 2- and
// 3-dimensional blocks.
func TestWarpOps(t *testing.T) {
	k := newSem(t, WarpOps)
	for _, b := range []gpu.Dim3{{X: 32}, {X: 45}, {X: 7}, {X: 100}, {X: 5, Y: 9}, {X: 3, Y: 4, Z: 5}} {
		t.Run(fmt.Sprint(b), func(t *testing.T) {
			nt := b.X * max(b.Y, 1) * max(b.Z, 1)
			checkKernel(t, k, WarpOps, gpu.LaunchConfig{Grid: gpu.Dim3{X: 3}, Block: b}, make([]int64, 8*3*nt))
		})
	}
}

func TestSharedReverse(t *testing.T) {
	k := newSem(t, Reverse)
	for _, n := range []int{1, 100, 1000} {
		checkKernel(t, k, Reverse, linear(n, 128), edgeInts[int32](n))
	}
}

// TestSyncAfterExit: threads that returned, or failed a check, before a barrier
// don't hold it up, on every device, and the failure is reported as a *Fault.
func TestSyncAfterExit(t *testing.T) {
	k := newSem(t, SyncAfterExit)
	for _, n := range []int{1, 100, 128, 200} {
		checkKernel(t, k, SyncAfterExit, linear(n+50, 128), -1, edgeInts[int32](n))
	}
	line := strings.Count(semSrc[:strings.Index(semSrc, "v = x[len(x)+j]")], "\n") + 1
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x := fromSlice(t, s, make([]int32, 200))
		if err := k.Launch(s, linear(250, 128), 130, x); err != nil {
			t.Fatal(err)
		}
		err := s.Synchronize(bg)
		var f *gokernel.Fault
		if !errors.As(err, &f) {
			t.Fatalf("got %v, want a *gokernel.Fault", err)
		}
		want := &gokernel.Fault{Kernel: "SyncAfterExit", File: "semkernels_test.go", Line: line,
			Msg: "index out of range [330] with length 200", Block: kern.Dim{X: 1}, Thread: kern.Dim{X: 2}}
		if *f != *want {
			t.Errorf("got  %v\nwant %v", f, want)
		}
		if err := s.Synchronize(bg); err != nil {
			t.Errorf("the device after the fault: %v", err)
		}
	})
}

// TestSharedHelper: a generic helper's kern.Shared is one array per element type
// (two for two types, on the GPU as on the CPU), and the same array at each call.
func TestSharedHelper(t *testing.T) {
	k := newSem(t, SharedHelper)
	n, block := 200, 64
	xs, ys := make([]int32, n), make([]float64, n)
	for i := range xs {
		xs[i], ys[i] = rand.Int32(), rand.NormFloat64()
	}
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		x, y := fromSlice(t, s, xs), fromSlice(t, s, ys)
		if err := k.Launch(s, linear(n, block), x, y); err != nil {
			t.Fatal(err)
		}
		wx, wy := slices.Clone(xs), slices.Clone(ys)
		for b := 0; b+block <= n; b += block { // a partial last block keeps its values
			slices.Reverse(wx[b : b+block])
			slices.Reverse(wy[b : b+block])
		}
		if got := toSlice(t, x); !slices.Equal(got, wx) {
			t.Errorf("x: %v\nwant %v", got, wx)
		}
		if got := toSlice(t, y); !slices.Equal(got, wy) {
			t.Errorf("y: %v\nwant %v", got, wy)
		}
	})
}

// TestAtomics checks the atomics' deterministic results under contention.
func TestAtomics(t *testing.T) {
	k := newSem(t, Atomics)
	forDevices(t, func(t *testing.T, s *gpu.Stream) {
		blocks, threads := 8, 128
		n := blocks * threads
		gi := fromSlice(t, s, []int32{0, 1 << 30, -1 << 30, 0, 0, -1 << 30})
		gu := fromSlice(t, s, []uint64{0, ^uint64(0), 0})
		gf := fromSlice(t, s, []float32{0, 1e30})
		gd := fromSlice(t, s, []float64{-1e300, 0})
		flags := fromSlice(t, s, make([]uint32, 5))
		if err := k.Launch(s, linear(n, threads), gi, gu, gf, gd, flags); err != nil {
			t.Fatal(err)
		}
		var wi [6]int32
		var wf [2]float32
		var wd [2]float64
		wi[1], wi[2], wi[5] = 1<<30, -1<<30, -1<<30
		wf[1], wd[0] = 1e30, -1e300
		for i := range n {
			v := int32(i%97) - 40
			wi[0] += v
			wi[1] = min(wi[1], v)
			wi[2] = max(wi[2], v)
			wi[3] ^= v
			wf[0] += float32(v)
			wf[1] = min(wf[1], float32(v)/4)
			wd[0] = max(wd[0], float64(v)/8)
			wd[1] += 0.5
		}
		for b := range blocks {
			wi[4] += int32(threads)
			m := int32(-1 << 30)
			for i := b * threads; i < (b+1)*threads; i++ {
				m = max(m, int32(i%97)-40)
			}
			wi[5] = max(wi[5], m)
		}
		if got := toSlice(t, gi); !slices.Equal(got, wi[:]) {
			t.Errorf("int32: %v, want %v", got, wi)
		}
		if got := toSlice(t, gu); got[0] != ^uint64(0) || got[1] != 0 || got[2] != uint64(n*(n-1)/2) {
			t.Errorf("uint64: %v", got)
		}
		if got := toSlice(t, gf); !slices.Equal(got, wf[:]) {
			t.Errorf("float32: %v, want %v", got, wf)
		}
		if got := toSlice(t, gd); !slices.Equal(got, wd[:]) {
			t.Errorf("float64: %v, want %v", got, wd)
		}
		if got := toSlice(t, flags); got[0] == 0 || got[0] > uint32(n) || got[1] != 1 || got[3] != uint32(n) || got[4] != 1 {
			t.Errorf("flags: %v", got)
		}
	})
}

func newSem(t testing.TB, fns ...any) *gokernel.Kernel {
	t.Helper()
	k, err := gokernel.New(semSrc, fns...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestFailures checks each of Go's run-time checks: the message, the line, the
// thread, and that the other threads ran.
func TestFailures(t *testing.T) {
	k := newSem(t, Failures)
	line := func(mode int) int {
		start := strings.Count(semSrc[:strings.Index(semSrc, "func Failures")], "\n")
		for i, l := range strings.Split(semSrc, "\n")[start:] {
			if strings.TrimSpace(l) == fmt.Sprintf("case %d:", mode) {
				return start + i + 2
			}
		}
		return 0
	}
	n, at := 300, 257
	for _, tc := range []struct {
		mode int
		msg  string
	}{
		{0, "index out of range [-1]"},
		{1, "index out of range [10] with length 10"},
		{2, "slice bounds out of range [2:0]"},
		{3, "slice bounds out of range [:11] with capacity 10"},
		{4, "integer divide by zero"},
		{5, "negative shift amount"},
		{6, "mode 6"},
		{7, "slice bounds out of range [::12] with capacity 10"},
		{8, "integer divide by zero"},
		{9, "index out of range [7] with length 7"},
		{10, "index out of range [-1]"},
		{11, "index out of range [10] with length 10"},
		{12, "index out of range [7] with length 7"},
	} {
		t.Run(fmt.Sprint(tc.mode), func(t *testing.T) {
			forDevices(t, func(t *testing.T, s *gpu.Stream) {
				thread := at
				if tc.mode == 2 {
					thread = 0
				}
				x := fromSlice(t, s, make([]int32, 10))
				out := fromSlice(t, s, make([]int32, n))
				if err := k.Launch(s, linear(n, 128), tc.mode, thread, x, out); err != nil {
					t.Fatal(err)
				}
				err := s.Synchronize(bg)
				var f *gokernel.Fault
				if !errors.As(err, &f) {
					t.Fatalf("got %v, want a *gokernel.Fault", err)
				}
				want := &gokernel.Fault{Kernel: "Failures", File: "semkernels_test.go", Line: line(tc.mode) + 2*boolInt(tc.mode == 9) + boolInt(tc.mode == 12),
					Msg: tc.msg, Block: kern.Dim{X: thread / 128}, Thread: kern.Dim{X: thread % 128}}
				if *f != *want {
					t.Errorf("got  %v\nwant %v", f, want)
				}
				got := toSlice(t, out)
				for i, v := range got {
					if v != 1 {
						t.Fatalf("out[%d] = %d: a thread did not run", i, v)
					}
				}
			})
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestExampleKernels runs the examples' kernels on every device against Go.
func TestExampleKernels(t *testing.T) {
	n := 3000
	k, err := gokernel.New(saxpySrc, saxpy)
	if err != nil {
		t.Fatal(err)
	}
	checkKernel(t, k, saxpy, linear(n, 128), float32(1.5), randF32(n), randF32(n))
	k, err = gokernel.New(transposeSrc, transpose)
	if err != nil {
		t.Fatal(err)
	}
	rows, cols := 70, 45
	checkKernel(t, k, transpose, gpu.LaunchConfig{Grid: gpu.Dim3{X: 2, Y: 3}, Block: gpu.Dim3{X: 32, Y: 8}}, rows, cols, randF32(rows*cols), make([]float32, rows*cols))
	k, err = gokernel.New(reduceSrc, sum[int64])
	if err != nil {
		t.Fatal(err)
	}
	checkKernel(t, k, sum[int64], linear(n, 256), edgeInts[int64](n), []int64{5})
	k, err = gokernel.New(histogramSrc, histogram)
	if err != nil {
		t.Fatal(err)
	}
	checkKernel(t, k, histogram, linear(n, 128), edgeInts[uint8](n), make([]uint32, 256))
}
