package gpu_test

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/npyref"
)

// NumPy's floor_divide and remainder, transcribed from its C code, as the reference of
// TestFloorDivideRemainder: floats npyref.Divmod; integers floor_div and the remainder
// loop of numpy/_core/src/umath/loops_modulo.dispatch.c.src.

func npyDivmodSigned[T int8 | int16 | int32 | int64](a, b T) (q, r T) {
	minInt := T(-1) << (8*unsafe.Sizeof(a) - 1)
	switch {
	case b == 0:
		return 0, 0
	case a == minInt && b == -1:
		return minInt, 0
	}
	q, r = a/b, a%b
	if (a > 0) != (b > 0) && q*b != a {
		q--
	}
	if !((a > 0) == (b > 0) || r == 0) {
		r += b
	}
	return q, r
}

// checkDivmod runs FloorDivide and Remainder on xs and ys (ys with shape [len(ys)]
// broadcast against xs of shape [rows, len(ys)]) and compares every element with want.
func checkDivmod[T int8 | int64 | uint16 | float32 | float64](t *testing.T, s *gpu.Stream, seed uint64, xs, ys []T, want func(x, y T) (T, T)) {
	t.Helper()
	cols := len(ys)
	x := mustArr[T](t)(gpu.FromSlice(s, xs, len(xs)/cols, cols))
	y := mustArr[T](t)(gpu.FromSlice(s, ys))
	defer x.Free()
	defer y.Free()
	q := mustArr[T](t)(gpu.FloorDivide(s, x, y))
	defer q.Free()
	r := mustArr[T](t)(gpu.Remainder(s, x, y))
	defer r.Free()
	if !slices.Equal(q.Shape(), x.Shape()) || !slices.Equal(r.Shape(), x.Shape()) {
		t.Fatalf("shapes %v and %v, want %v", q.Shape(), r.Shape(), x.Shape())
	}
	same := func(a, b T) bool {
		return a == b && math.Signbit(float64(a)) == math.Signbit(float64(b)) || a != a && b != b
	}
	gq, gr := toSlice(t, q), toSlice(t, r)
	for i, xv := range xs {
		yv := ys[i%cols]
		wq, wr := want(xv, yv)
		if !same(gq[i], wq) {
			t.Fatalf("seed %d: FloorDivide(%v, %v) = %v, want %v", seed, xv, yv, gq[i], wq)
		}
		if !same(gr[i], wr) {
			t.Fatalf("seed %d: Remainder(%v, %v) = %v, want %v", seed, xv, yv, gr[i], wr)
		}
	}
}

// TestFloorDivideRemainder checks gpu.FloorDivide and gpu.Remainder against NumPy's
// rules on every pair of special values (both zeros, ±1, MinInt and -1, ±Inf, NaN ...)
// and fresh random values, for int8, int64, uint16, float32 and float64, with the
// divisor broadcast along rows.
func TestFloorDivideRemainder(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		r := rand.New(rand.NewPCG(seed, 11))
		// cross returns xs (rows of the specials, then random rows) and ys (the specials
		// and random values) for a divisor row of the specials plus n random values.
		cross := func(sp []float64, n int, rnd func() float64) (xs, ys []float64) {
			ys = append(ys, sp...)
			for range n {
				ys = append(ys, rnd())
			}
			for _, a := range sp {
				for range ys {
					xs = append(xs, a)
				}
			}
			for range 8 * len(ys) {
				xs = append(xs, rnd())
			}
			return xs, ys
		}

		// Signed integers.
		{
			sp := []float64{0, 1, -1, 2, -2, 3, -3, 7, -7, 127, -128, 126, -127}
			xf, yf := cross(sp, 20, func() float64 { return float64(r.IntN(256) - 128) })
			xs, ys := convert[int8](xf), convert[int8](yf)
			checkDivmod(t, s, seed, xs, ys, npyDivmodSigned[int8])
		}
		{
			sp := []float64{0, 1, -1, 2, -2, 7, -7, 1 << 40, -(1 << 40)}
			xf, yf := cross(sp, 20, func() float64 { return float64(r.IntN(2001) - 1000) })
			xs, ys := convert[int64](xf), convert[int64](yf)
			xs = append(xs, make([]int64, 2*len(ys))...) // MinInt64 and MaxInt64 rows
			for j := range ys {
				xs[len(xs)-2*len(ys)+j] = math.MinInt64
				xs[len(xs)-len(ys)+j] = math.MaxInt64
			}
			ys[0] = -1 // MinInt64 // -1
			checkDivmod(t, s, seed, xs, ys, npyDivmodSigned[int64])
		}
		// Unsigned: plain division, x // 0 = x % 0 = 0.
		{
			sp := []float64{0, 1, 2, 3, 7, 65535, 65534}
			xf, yf := cross(sp, 20, func() float64 { return float64(r.IntN(65536)) })
			xs, ys := convert[uint16](xf), convert[uint16](yf)
			checkDivmod(t, s, seed, xs, ys, func(a, b uint16) (uint16, uint16) {
				if b == 0 {
					return 0, 0
				}
				return a / b, a % b
			})
		}
		// Floats.
		inf, nan, negz := math.Inf(1), math.NaN(), math.Copysign(0, -1)
		sp := []float64{0, negz, 1, -1, 0.5, -0.5, 2, -2, 7.5, -7.5, 0.1, -0.1, 1e30, -1e30, 1e-40, inf, -inf, nan}
		rnd := func() float64 {
			if r.IntN(2) == 0 {
				return float64(r.IntN(41)-20) / 4
			}
			return r.NormFloat64() * math.Pow(10, float64(r.IntN(9)-4))
		}
		{
			xf, yf := cross(sp, 30, rnd)
			checkDivmod(t, s, seed, convert[float32](xf), convert[float32](yf), npyref.Divmod[float32])
		}
		{
			xf, yf := cross(sp, 30, rnd)
			checkDivmod(t, s, seed, xf, yf, npyref.Divmod[float64])
		}
	})
}

func convert[T int8 | int64 | uint16 | float32](vs []float64) []T {
	out := make([]T, len(vs))
	for i, v := range vs {
		out[i] = T(v)
	}
	return out
}

// TestFloorDivideRemainderBool: bool arrays are an error, as / and % on bools.
func TestFloorDivideRemainderBool(t *testing.T) {
	s := freshStream(t)
	b := mustArr[bool](t)(gpu.FromSlice(s, []bool{true, false}))
	defer b.Free()
	if _, err := gpu.FloorDivide(s, b, b); err == nil {
		t.Error("FloorDivide of bool arrays succeeded")
	}
	if _, err := gpu.Remainder(s, b, b); err == nil {
		t.Error("Remainder of bool arrays succeeded")
	}
}
