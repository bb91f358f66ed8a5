package gpu_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/testenv"
)

// Scan tests: every operator and dtype against references computed here in Go (exact
// in the accumulator type for integers, float64 for float sums and products), 1-D
// sizes around warp, block and tile boundaries, every axis of 1-D to 5-D arrays with
// odd and size-1 dimensions, strided views, NaN/Inf/-0, empty arrays, wrap-around,
// exclusive scans, expression operators, untouched inputs and fully written outputs.

// scanRef is the scan of xs (of shape, already converted to R) along axis, folding left
// to right.
func scanRef[R any](xs []R, shape []int, axis int, op func(a, b R) R, excl bool, init R) []R {
	out := make([]R, len(xs))
	if len(xs) == 0 {
		return out
	}
	outer, n, inner := 1, shape[axis], 1
	for _, d := range shape[:axis] {
		outer *= d
	}
	for _, d := range shape[axis+1:] {
		inner *= d
	}
	for o := 0; o < outer; o++ {
		for j := 0; j < inner; j++ {
			var run R
			for k := 0; k < n; k++ {
				i := (o*n+k)*inner + j
				switch {
				case excl:
					if k == 0 {
						run = init
					}
					out[i] = run
					run = op(run, xs[i])
				case k == 0:
					run = xs[i]
					out[i] = run
				default:
					run = op(run, xs[i])
					out[i] = run
				}
			}
		}
	}
	return out
}

type scNum interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint | ~float32 | ~float64
}

func scIsNaN[T any](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return x != x
	case float64:
		return x != x
	}
	return false
}

func scIsFloat[T any]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

// scGen returns n values of T: random bits for integers (so sums wrap), normal
// floats, random bools.
func scGen[T gpu.Elem](rng *rand.Rand, n int) []T {
	out := make([]T, n)
	for i := range out {
		switch p := any(&out[i]).(type) {
		case *bool:
			*p = rng.IntN(2) == 1
		case *float32:
			*p = float32(rng.NormFloat64())
		case *float64:
			*p = rng.NormFloat64()
		default:
			u := rng.Uint64()
			copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[i])), unsafe.Sizeof(out[i])), unsafe.Slice((*byte)(unsafe.Pointer(&u)), 8))
		}
	}
	return out
}

// scConv converts a value of T to R as Go does (the tests avoid float to integer).
func scConv[R, T gpu.Elem](v T) R {
	var r R
	switch p := any(&r).(type) {
	case *bool:
		*p = !scIsZero(v)
		return r
	}
	switch x := any(v).(type) {
	case bool:
		if x {
			return scFromF[R](1)
		}
		return scFromF[R](0)
	case int8:
		return scFromI[R](int64(x))
	case int16:
		return scFromI[R](int64(x))
	case int32:
		return scFromI[R](int64(x))
	case int64:
		return scFromI[R](x)
	case int:
		return scFromI[R](int64(x))
	case uint8:
		return scFromU[R](uint64(x))
	case uint16:
		return scFromU[R](uint64(x))
	case uint32:
		return scFromU[R](uint64(x))
	case uint64:
		return scFromU[R](x)
	case uint:
		return scFromU[R](uint64(x))
	case float32:
		return scFromF[R](float64(x))
	case float64:
		return scFromF[R](x)
	}
	panic("scConv")
}

func scIsZero[T gpu.Elem](v T) bool {
	var z T
	return v == z
}

func scFromI[R gpu.Elem](v int64) R {
	var r R
	switch p := any(&r).(type) {
	case *int8:
		*p = int8(v)
	case *int16:
		*p = int16(v)
	case *int32:
		*p = int32(v)
	case *int64:
		*p = v
	case *int:
		*p = int(v)
	case *uint8:
		*p = uint8(v)
	case *uint16:
		*p = uint16(v)
	case *uint32:
		*p = uint32(v)
	case *uint64:
		*p = uint64(v)
	case *uint:
		*p = uint(v)
	case *float32:
		*p = float32(v)
	case *float64:
		*p = float64(v)
	case *bool:
		*p = v != 0
	}
	return r
}

func scFromU[R gpu.Elem](v uint64) R {
	var r R
	switch p := any(&r).(type) {
	case *float32:
		*p = float32(v)
	case *float64:
		*p = float64(v)
	default:
		return scFromI[R](int64(v))
	}
	return r
}

func scFromF[R gpu.Elem](v float64) R {
	var r R
	switch p := any(&r).(type) {
	case *float32:
		*p = float32(v)
	case *float64:
		*p = v
	case *bool:
		*p = v != 0
	default:
		return scFromI[R](int64(v))
	}
	return r
}

func scToF[T gpu.Elem](v T) float64 { return scConv[float64](v) }

// scAdd and friends are the operators on R in Go.
func scAdd[R scNum](a, b R) R { return a + b }
func scMul[R scNum](a, b R) R { return a * b }
func scMax[R scNum](a, b R) R { return max(a, b) }
func scMin[R scNum](a, b R) R { return min(a, b) }

// sameBits reports equality, any NaN equal to any NaN.
func scSame[R gpu.Elem](a, b R) bool {
	if scIsNaN(a) || scIsNaN(b) {
		return scIsNaN(a) && scIsNaN(b)
	}
	if a != b {
		return false
	}
	// -0 vs +0
	switch x := any(a).(type) {
	case float32:
		return math.Signbit(float64(x)) == math.Signbit(float64(any(b).(float32)))
	case float64:
		return math.Signbit(x) == math.Signbit(any(b).(float64))
	}
	return true
}

// scCheckExact compares element by element.
func scCheckExact[R gpu.Elem](t *testing.T, what string, got, want []R) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
	}
	for i := range want {
		if !scSame(got[i], want[i]) {
			t.Fatalf("%s: element %d = %v, want %v", what, i, got[i], want[i])
		}
	}
}

// scCheckCanonNaN fails t unless every NaN of got, a scan's result, is the canonical NaN
// (package doc, "NaN"): the first element of a row too, which no combination produces.
func scCheckCanonNaN[R gpu.Elem](t *testing.T, what string, got []R) {
	t.Helper()
	for i, v := range got {
		var bits, canon uint64
		switch x := any(v).(type) {
		case float32:
			bits, canon = uint64(math.Float32bits(x)), 0x7fffffff
		case float64:
			bits, canon = math.Float64bits(x), 0x7fffffffffffffff
		default:
			return
		}
		if scIsNaN(v) && bits != canon {
			t.Fatalf("%s: element %d = NaN %#x, want the canonical NaN %#x", what, i, bits, canon)
		}
	}
}

// scCheckFloat compares a float scan with a float64 reference of the same scan: the
// error allowed grows with the sum of magnitudes combined so far.
func scCheckFloat[R gpu.Elem](t *testing.T, what string, got []R, want, mag []float64) {
	t.Helper()
	var z R
	eps := 1.2e-7
	if _, ok := any(z).(float64); ok {
		eps = 2.3e-16
	}
	for i := range want {
		g := scToF(got[i])
		if math.IsNaN(want[i]) || math.IsInf(want[i], 0) {
			if !(math.IsNaN(g) && math.IsNaN(want[i])) && g != want[i] {
				t.Fatalf("%s: element %d = %v, want %v", what, i, g, want[i])
			}
			continue
		}
		if tol := 64*eps*mag[i] + 1e-30; math.Abs(g-want[i]) > tol {
			t.Fatalf("%s: element %d = %v, want %v (tolerance %g)", what, i, g, want[i], tol)
		}
	}
}

func scMust[R gpu.Elem](t *testing.T) func(*gpu.Array[R], error) *gpu.Array[R] {
	return func(a *gpu.Array[R], err error) *gpu.Array[R] {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
}

type scanOp int

const (
	sSum scanOp = iota
	sProd
	sMax
	sMin
)

func (o scanOp) String() string { return [...]string{"sum", "prod", "max", "min"}[o] }

// runScan runs the scan op on a into R.
func runScan[R, T gpu.Elem](s *gpu.Stream, a *gpu.Array[T], op scanOp, axis int, opts ...gpu.ScanOption) (*gpu.Array[R], error) {
	switch op {
	case sSum:
		return gpu.CumSum[R](s, a, axis, opts...)
	case sProd:
		return gpu.CumProd[R](s, a, axis, opts...)
	case sMax:
		return gpu.Accumulate[R](s, a, gpu.OpMax, axis, opts...)
	}
	return gpu.Accumulate[R](s, a, gpu.OpMin, axis, opts...)
}

// checkScan scans a (holding xs, of shape) with op along axis into R and compares
// with the reference, exactly for integers, bools and max/min, with a tolerance for
// float sums and products.
func checkScan[R, T gpu.Elem](t *testing.T, s *gpu.Stream, a *gpu.Array[T], xs []T, shape []int, op scanOp, axis int, excl bool) {
	t.Helper()
	checkScanConfigs[R](t, s, a, xs, shape, op, axis, excl, scTestConfigs(s.Device()))
}

// checkScanConfigs is checkScan under each of the row-scan configurations cs.
func checkScanConfigs[R, T gpu.Elem](t *testing.T, s *gpu.Stream, a *gpu.Array[T], xs []T, shape []int, op scanOp, axis int, excl bool, cs []gpu.ScanConfig) {
	t.Helper()
	d := s.Device()
	defer gpu.SetScanConfig(d, gpu.SetScanConfig(d, gpu.ScanConfig{Variant: 1}))
	for _, c := range cs {
		gpu.SetScanConfig(d, c)
		checkScanVariant[R](t, s, a, xs, shape, op, axis, excl, c)
	}
}

// scTestConfigs returns the row-scan configurations the tests run on d: the default one,
// both plain variants, and on CUDA the tuning options too (on the CPU they only change
// the tile size). The first two are the default and variant 1 (see scan1D).
func scTestConfigs(d *gpu.Device) []gpu.ScanConfig {
	cs := []gpu.ScanConfig{gpu.ScanConfigFromEnv(func(string) string { return "" }), {Variant: 1}, {Variant: 2}}
	if d.Backend() == "cuda" {
		cs = append(cs,
			gpu.ScanConfig{Variant: 2, Stage: true, Lookback: 4, MinBlocks: 6},
			gpu.ScanConfig{Variant: 1, Stage: true, Lookback: 2, MinBlocks: 8},
			gpu.ScanConfig{Variant: 2, Lookback: 1},
			gpu.ScanConfig{Variant: 2, Stage: true, Lookback: 8})
	}
	return cs
}

// checkScanVariant is checkScan with the row-scan configuration c selected.
func checkScanVariant[R, T gpu.Elem](t *testing.T, s *gpu.Stream, a *gpu.Array[T], xs []T, shape []int, op scanOp, axis int, excl bool, c gpu.ScanConfig) {
	t.Helper()
	what := fmt.Sprintf("%v %+v %s[%v<-%v] shape %v axis %d excl %v", s.Device(), c, op, dtype.Of[R](), dtype.Of[T](), shape, axis, excl)
	var opts []gpu.ScanOption
	if excl {
		opts = append(opts, gpu.Exclusive())
	}
	out, err := runScan[R](s, a, op, axis, opts...)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer out.Free()
	if !slices.Equal(out.Shape(), shape) {
		t.Fatalf("%s: shape %v", what, out.Shape())
	}
	got := toSlice(t, out)
	scCheckCanonNaN(t, what, got)
	rs := make([]R, len(xs))
	for i, v := range xs {
		rs[i] = scConv[R](v)
	}
	if scIsFloat[R]() && (op == sSum || op == sProd) {
		fs := make([]float64, len(rs))
		ms := make([]float64, len(rs))
		for i, v := range rs {
			fs[i] = scToF(v)
			ms[i] = math.Abs(fs[i])
		}
		var want, mag []float64
		if op == sSum {
			want = scanRef(fs, shape, axis, func(a, b float64) float64 { return a + b }, excl, 0)
			mag = scanRef(ms, shape, axis, func(a, b float64) float64 { return a + b }, excl, 0)
		} else {
			want = scanRef(fs, shape, axis, func(a, b float64) float64 { return a * b }, excl, 1)
			mag = scanRef(ms, shape, axis, func(a, b float64) float64 { return a * b }, excl, 1)
			for i := range mag {
				mag[i] *= float64(shape[axis])
			}
		}
		scCheckFloat(t, what, got, want, mag)
		return
	}
	want := scanRef(rs, shape, axis, scRefOp[R](op), excl, scIdentity[R](op))
	scCheckExact(t, what, got, want)
}

// scRefOp returns op on R (bool: or/and).
func scRefOp[R gpu.Elem](op scanOp) func(a, b R) R {
	var z R
	switch any(z).(type) {
	case bool:
		f := func(a, b bool) bool { return a || b }
		if op == sProd || op == sMin {
			f = func(a, b bool) bool { return a && b }
		}
		return any(f).(func(a, b R) R)
	case int8:
		return any(scNumRef[int8](op)).(func(a, b R) R)
	case int16:
		return any(scNumRef[int16](op)).(func(a, b R) R)
	case int32:
		return any(scNumRef[int32](op)).(func(a, b R) R)
	case int64:
		return any(scNumRef[int64](op)).(func(a, b R) R)
	case int:
		return any(scNumRef[int](op)).(func(a, b R) R)
	case uint8:
		return any(scNumRef[uint8](op)).(func(a, b R) R)
	case uint16:
		return any(scNumRef[uint16](op)).(func(a, b R) R)
	case uint32:
		return any(scNumRef[uint32](op)).(func(a, b R) R)
	case uint64:
		return any(scNumRef[uint64](op)).(func(a, b R) R)
	case uint:
		return any(scNumRef[uint](op)).(func(a, b R) R)
	case float32:
		return any(scNumRef[float32](op)).(func(a, b R) R)
	case float64:
		return any(scNumRef[float64](op)).(func(a, b R) R)
	}
	panic("scRefOp")
}

func scNumRef[R scNum](op scanOp) func(a, b R) R {
	return [...]func(a, b R) R{scAdd[R], scMul[R], scMax[R], scMin[R]}[op]
}

// scIdentity returns op's scIdentity in R.
func scIdentity[R gpu.Elem](op scanOp) R {
	var r R
	switch p := any(&r).(type) {
	case *bool:
		*p = op == sProd || op == sMin
		return r
	case *float32:
		*p = [...]float32{0, 1, float32(math.Inf(-1)), float32(math.Inf(1))}[op]
		return r
	case *float64:
		*p = [...]float64{0, 1, math.Inf(-1), math.Inf(1)}[op]
		return r
	}
	switch op {
	case sSum:
		return r
	case sProd:
		return scFromI[R](1)
	}
	// integers: the lowest or highest value
	lo, hi := scIntRange[R]()
	if op == sMax {
		return lo
	}
	return hi
}

func scIntRange[R gpu.Elem]() (lo, hi R) {
	var z R
	size := unsafe.Sizeof(z)
	signed := dtype.Of[R]().IsSigned()
	if signed {
		return scFromI[R](-1 << (8*size - 1)), scFromI[R](1<<(8*size-1) - 1)
	}
	return z, scFromI[R](-1)
}

// scanAllTypes runs f for each element type.
func TestCumSumSizes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range sizes {
			for _, excl := range []bool{false, true} {
				scan1D[int64, bool](t, s, rng, n, sSum, excl)
				scan1D[int64, int8](t, s, rng, n, sSum, excl)
				scan1D[int64, int16](t, s, rng, n, sSum, excl)
				scan1D[int64, int32](t, s, rng, n, sSum, excl)
				scan1D[int64, int64](t, s, rng, n, sSum, excl)
				scan1D[int, int](t, s, rng, n, sSum, excl)
				scan1D[uint64, uint8](t, s, rng, n, sSum, excl)
				scan1D[uint64, uint16](t, s, rng, n, sSum, excl)
				scan1D[uint64, uint32](t, s, rng, n, sSum, excl)
				scan1D[uint64, uint64](t, s, rng, n, sSum, excl)
				scan1D[uint, uint](t, s, rng, n, sSum, excl)
				scan1D[float32, float32](t, s, rng, n, sSum, excl)
				scan1D[float64, float64](t, s, rng, n, sSum, excl)
			}
		}
	})
}

func TestCumProdMaxMinSizes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, n := range sizes {
			for _, excl := range []bool{false, true} {
				for _, op := range []scanOp{sProd, sMax, sMin} {
					scan1D[int64, int32](t, s, rng, n, op, excl)
					scan1D[uint64, uint64](t, s, rng, n, op, excl)
					scan1D[float32, float32](t, s, rng, n, op, excl)
					scan1D[float64, float64](t, s, rng, n, op, excl)
					scan1D[bool, bool](t, s, rng, n, op, excl)
				}
				for _, op := range []scanOp{sMax, sMin} {
					scan1D[int8, int8](t, s, rng, n, op, excl)
					scan1D[uint16, uint16](t, s, rng, n, op, excl)
					scan1D[int32, int32](t, s, rng, n, op, excl)
					scan1D[uint32, uint32](t, s, rng, n, op, excl)
				}
				// Narrow accumulators wrap.
				scan1D[int8, int8](t, s, rng, n, sSum, excl)
				scan1D[uint16, uint16](t, s, rng, n, sSum, excl)
				scan1D[int32, int32](t, s, rng, n, sSum, excl)
				// Conversions into the accumulator.
				scan1D[float64, int32](t, s, rng, n, sSum, excl)
				scan1D[float64, float32](t, s, rng, n, sSum, excl)
				scan1D[int32, uint8](t, s, rng, n, sSum, excl)
			}
		}
	})
}

// scKey reports the cases that run at every size: float32 and int32 sums and maxima.
func scKey[T gpu.Elem](op scanOp) bool {
	var z T
	switch any(z).(type) {
	case float32, int32:
		return op == sSum || op == sMax
	}
	return false
}

// scProdVals makes values near 1 so that long products stay finite.
func scProdVals[T gpu.Elem](rng *rand.Rand, xs []T) {
	for i := range xs {
		switch p := any(&xs[i]).(type) {
		case *float32:
			*p = float32(1 + 0.001*rng.NormFloat64())
		case *float64:
			*p = 1 + 0.001*rng.NormFloat64()
		}
	}
}

// scBig reports whether the largest test size runs for a case of lesser importance:
// not under the race detector or -short.
func scBig(n int) bool { return n < 1<<20 || !(testenv.Race || testing.Short()) }

func scan1D[R, T gpu.Elem](t *testing.T, s *gpu.Stream, rng *rand.Rand, n int, op scanOp, excl bool) {
	t.Helper()
	if !scBig(n) && !scKey[T](op) {
		return
	}
	xs := scGen[T](rng, n)
	if op == sProd {
		scProdVals(rng, xs)
	}
	a := mustArr[T](t)(gpu.FromSlice(s, xs))
	defer a.Free()
	// Every configuration for the key cases and the sizes around a tile boundary and
	// past 2^20; the default and variant 1 for the rest (each configuration is a kernel
	// to compile per type and operator: all of them everywhere took minutes on CUDA).
	cs := scTestConfigs(s.Device())
	if !scKey[T](op) && n != 1025 && n < 1<<20 {
		cs = cs[:2]
	}
	checkScanConfigs[R](t, s, a, xs, []int{n}, op, 0, excl, cs)
	if n > 0 {
		if got := toSlice(t, a); !slices.EqualFunc(got, xs, scSame[T]) {
			t.Fatalf("scan modified its input")
		}
	}
}

// scanShapes are 1-D to 5-D shapes with odd and size-1 dimensions, covering both
// kernels (rows, interleaved groups, chunked columns).
var scanShapes = [][]int{
	{7}, {300}, {5000},
	{3, 5}, {1, 9}, {9, 1}, {5, 1025}, {300, 3}, {200, 40}, {40, 200}, {1000, 17}, {2, 3000},
	{4, 1, 6}, {3, 300, 9}, {2, 70, 5}, {65, 2, 3}, {6, 33, 70},
	{2, 3, 1, 5}, {3, 1, 40, 4}, {5, 7, 3, 2},
	{3, 2, 4, 1, 3}, {2, 5, 3, 4, 7}, {1, 1, 1, 1, 1},
}

func TestScanAxes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(5, 6))
		for _, shape := range scanShapes {
			n := 1
			for _, v := range shape {
				n *= v
			}
			xf := scGen[float32](rng, n)
			xi := scGen[int32](rng, n)
			xd := scGen[float64](rng, n)
			xb := scGen[bool](rng, n)
			af := mustArr[float32](t)(gpu.FromSlice(s, xf, shape...))
			ai := mustArr[int32](t)(gpu.FromSlice(s, xi, shape...))
			ad := mustArr[float64](t)(gpu.FromSlice(s, xd, shape...))
			ab := mustArr[bool](t)(gpu.FromSlice(s, xb, shape...))
			for axis := range shape {
				for _, excl := range []bool{false, true} {
					checkScan[float32](t, s, af, xf, shape, sSum, axis, excl)
					checkScan[float32](t, s, af, xf, shape, sMax, axis, excl)
					checkScan[int64](t, s, ai, xi, shape, sSum, axis, excl)
					checkScan[int32](t, s, ai, xi, shape, sMin, axis, excl)
					checkScan[float64](t, s, ad, xd, shape, sSum, axis, excl)
					checkScan[int64](t, s, ab, xb, shape, sSum, axis, excl)
				}
			}
			// Negative axis.
			checkScan[int64](t, s, ai, xi, shape, sSum, len(shape)-1, false)
			got := toSlice(t, scMust[int64](t)(gpu.CumSum[int64](s, ai, -1)))
			want := toSlice(t, scMust[int64](t)(gpu.CumSum[int64](s, ai, len(shape)-1)))
			scCheckExact(t, "negative axis", got, want)
			for _, a := range []interface{ Free() error }{af, ai, ad, ab} {
				a.Free()
			}
		}
	})
}

// scHostView returns the elements of a strided view of xs (base shape) in row-major
// order of the view.
func scHostView[T any](xs []T, shape, strides []int, off int) []T {
	n := 1
	for _, d := range shape {
		n *= d
	}
	out := make([]T, 0, n)
	idx := make([]int, len(shape))
	for i := 0; i < n; i++ {
		p := off
		for d := range shape {
			p += idx[d] * strides[d]
		}
		out = append(out, xs[p])
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

func TestScanStrided(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(7, 8))
		base := []int{6, 50, 7}
		xs := scGen[int32](rng, 6*50*7)
		xf := scGen[float32](rng, 6*50*7)
		a := mustArr[int32](t)(gpu.FromSlice(s, xs, base...))
		af := mustArr[float32](t)(gpu.FromSlice(s, xf, base...))
		defer a.Free()
		defer af.Free()
		views := []func(*gpu.Array[int32]) (*gpu.Array[int32], error){
			func(a *gpu.Array[int32]) (*gpu.Array[int32], error) { return a.Transpose() },
			func(a *gpu.Array[int32]) (*gpu.Array[int32], error) { return a.Transpose(1, 0, 2) },
			func(a *gpu.Array[int32]) (*gpu.Array[int32], error) { return a.Transpose(2, 0, 1) },
			func(a *gpu.Array[int32]) (*gpu.Array[int32], error) {
				return a.Slice(gpu.R(1, 5), gpu.R(0, gpu.End, 3))
			},
			func(a *gpu.Array[int32]) (*gpu.Array[int32], error) {
				return a.Slice(gpu.R(0, gpu.End, -1), gpu.R(2, 49), gpu.R(0, gpu.End, 2))
			},
			func(a *gpu.Array[int32]) (*gpu.Array[int32], error) {
				v, err := a.Slice(gpu.R(2), gpu.R(), gpu.R(3))
				if err != nil {
					return nil, err
				}
				return v.Reshape(50)
			},
		}
		for vi, mk := range views {
			v, err := mk(a)
			if err != nil {
				if vi == 5 {
					continue // reshape of a non-contiguous view
				}
				t.Fatal(err)
			}
			hv := scHostView(xs, v.Shape(), v.Strides(), v.Offset())
			for axis := range v.Shape() {
				checkScan[int64](t, s, v, hv, v.Shape(), sSum, axis, false)
				checkScan[int32](t, s, v, hv, v.Shape(), sMax, axis, true)
			}
		}
		// A strided 1-D view long enough for tiles: every third element.
		long := mustArr[float32](t)(gpu.FromSlice(s, scGen[float32](rng, 30000)))
		defer long.Free()
		lv, err := long.Slice(gpu.R(1, gpu.End, 3))
		if err != nil {
			t.Fatal(err)
		}
		hl := scHostView(toSlice(t, long), lv.Shape(), lv.Strides(), lv.Offset())
		checkScan[float32](t, s, lv, hl, lv.Shape(), sSum, 0, false)
		ft, _ := af.Transpose(2, 1, 0)
		hf := scHostView(xf, ft.Shape(), ft.Strides(), ft.Offset())
		for axis := 0; axis < 3; axis++ {
			checkScan[float32](t, s, ft, hf, ft.Shape(), sSum, axis, false)
		}
	})
}

func TestScanNaN(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		nan := math.NaN()
		inf := math.Inf(1)
		negz := math.Copysign(0, -1)
		cases := [][]float64{
			{1, 2, nan, 3, 4},
			{nan, 1, 2},
			{1, inf, 2, -inf, 3},
			{-inf, -inf, nan},
			{negz, 0, negz, 0},
			{0, negz, 0},
			{inf, -inf}, // sum: NaN
		}
		// A long case: NaN deep in a multi-tile array.
		long := make([]float64, 50000)
		for i := range long {
			long[i] = float64(i % 97)
		}
		long[31337] = nan
		cases = append(cases, long)
		for _, c := range cases {
			f32 := make([]float32, len(c))
			for i, v := range c {
				f32[i] = float32(v)
			}
			a := mustArr[float64](t)(gpu.FromSlice(s, c))
			b := mustArr[float32](t)(gpu.FromSlice(s, f32))
			for _, op := range []scanOp{sMax, sMin, sSum} {
				for _, excl := range []bool{false, true} {
					checkScan[float64](t, s, a, c, []int{len(c)}, op, 0, excl)
					checkScan[float32](t, s, b, f32, []int{len(c)}, op, 0, excl)
				}
			}
			a.Free()
			b.Free()
		}
		// NaN in one column of a 2-D array only poisons that column.
		x := []float32{1, 2, 3, float32(nan), 5, 6, 7, 8, 9}
		a := mustArr[float32](t)(gpu.FromSlice(s, x, 3, 3))
		for axis := 0; axis < 2; axis++ {
			checkScan[float32](t, s, a, x, []int{3, 3}, sMax, axis, false)
			checkScan[float32](t, s, a, x, []int{3, 3}, sMin, axis, false)
		}
		a.Free()
	})
}

func TestScanEmpty(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, shape := range [][]int{{0}, {0, 5}, {5, 0}, {3, 0, 4}, {0, 0}} {
			a := mustArr[float32](t)(gpu.Empty[float32](s, shape...))
			for axis := range shape {
				for _, excl := range []bool{false, true} {
					var opts []gpu.ScanOption
					if excl {
						opts = append(opts, gpu.Exclusive())
					}
					out := scMust[float32](t)(gpu.CumSum[float32](s, a, axis, opts...))
					if !slices.Equal(out.Shape(), shape) || out.Size() != 0 {
						t.Fatalf("empty scan of %v: shape %v", shape, out.Shape())
					}
					o2 := scMust[float32](t)(gpu.CumMax(s, a, axis))
					if !slices.Equal(o2.Shape(), shape) {
						t.Fatalf("empty CumMax of %v: shape %v", shape, o2.Shape())
					}
				}
			}
			a.Free()
		}
	})
}

func TestScanErrors(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float32](t)(gpu.Zeros[float32](s, 3, 4))
		defer a.Free()
		for _, axis := range []int{2, -3, 100} {
			if _, err := gpu.CumSum[float32](s, a, axis); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("axis %d: %v", axis, err)
			}
		}
		z := mustArr[float32](t)(gpu.Zeros[float32](s))
		if _, err := gpu.CumSum[float32](s, z, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("scan of a 0-d array: %v", err)
		}
		if _, err := gpu.Accumulate[float32](s, a, "a +", 0); err == nil {
			t.Errorf("bad expression accepted")
		}
		if _, err := gpu.Accumulate[float32](s, a, "maximum(b, a)", 0, gpu.Exclusive()); err == nil {
			t.Errorf("exclusive expression scan without an initial value accepted")
		}
		// -0.0 is the integer 0 (it compares equal), as a float initial value.
		xi := mustArr[int32](t)(gpu.FromSlice(s, []int32{3, -1, 4}))
		if c, err := gpu.CumSum[int32](s, xi, 0, gpu.ExclusiveFrom(math.Copysign(0, -1))); err != nil {
			t.Errorf("ExclusiveFrom(-0.0) into int32: %v", err)
		} else if got := toSlice(t, c); !slices.Equal(got, []int32{0, 3, 2}) {
			t.Errorf("ExclusiveFrom(-0.0) into int32: %v, want [0 3 2]", got)
		}
		xi.Free()
		// ExclusiveFrom(nil) names no initial value: an error, not the identity.
		if _, err := gpu.CumSum[float32](s, a, 0, gpu.ExclusiveFrom(nil)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("ExclusiveFrom(nil): %v", err)
		}
		if _, err := gpu.Accumulate[float32](s, a, "maximum(b, a)", 0, gpu.ExclusiveFrom(nil)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("ExclusiveFrom(nil) of an expression: %v", err)
		}
		// Sums and products of floats into integers, as Sum's and Prod's.
		if _, err := gpu.CumSum[int32](s, a, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("CumSum of float32 into int32: %v", err)
		}
		if _, err := gpu.CumProd[int64](s, a, 1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("CumProd of float32 into int64: %v", err)
		}
		for _, op := range []gpu.Op{gpu.OpMax, gpu.OpMin, "a + 2*b"} {
			if _, err := gpu.Accumulate[int32](s, a, op, 0); !errors.Is(err, gpu.ErrInvalidValue) {
				t.Errorf("Accumulate %q of float32 into int32: %v", op, err)
			}
		}
		// A nil option is bad input, not a panic.
		if _, err := gpu.CumSum[float32](s, a, 0, nil); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("a nil ScanOption: %v", err)
		}
		if err := gpu.AccumulateInto(s, mustArr[float32](t)(gpu.Zeros[float32](s, 3, 4)), a, gpu.OpMax, 1, gpu.Exclusive(), nil); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("a nil ScanOption of AccumulateInto: %v", err)
		}
		// Initial values that are not values of an integer accumulator.
		ai := mustArr[int32](t)(gpu.Arange[int32](s, 1, 7, 1))
		defer ai.Free()
		for _, c := range []struct {
			init          any
			int32, uint64 bool // fits
		}{
			{int64(1) << 40, false, true}, {1.5, false, false}, {math.NaN(), false, false},
			{-1, true, false}, {uint64(1) << 63, false, true}, {math.Inf(1), false, false},
			{0x1p63, false, true}, {0x1p64, false, false}, {-0x1p31, true, false}, {0x1p31, false, true},
			{float32(0x1p31), false, true}, // (MaxInt32 converts back to float32 2^31)
		} {
			_, err := gpu.CumSum[int32](s, ai, 0, gpu.ExclusiveFrom(c.init))
			if (err == nil) != c.int32 || (err != nil && !errors.Is(err, gpu.ErrInvalidValue)) {
				t.Errorf("ExclusiveFrom(%v) into int32: %v", c.init, err)
			}
			_, err = gpu.CumSum[uint64](s, ai, 0, gpu.ExclusiveFrom(c.init))
			if (err == nil) != c.uint64 || (err != nil && !errors.Is(err, gpu.ErrInvalidValue)) {
				t.Errorf("ExclusiveFrom(%v) into uint64: %v", c.init, err)
			}
		}
		// int64's ends as floats: -2^63 is its least value, 2^63 one past its largest
		// (whose conversion saturates to MaxInt64, which converts back to 2^63).
		if got := toSlice(t, scMust[int64](t)(gpu.CumSum[int64](s, ai, 0, gpu.ExclusiveFrom(-0x1p63)))); got[0] != math.MinInt64 || got[1] != math.MinInt64+1 {
			t.Errorf("ExclusiveFrom(-2^63) into int64: %v", got)
		}
		if _, err := gpu.CumSum[int64](s, ai, 0, gpu.ExclusiveFrom(0x1p63)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("ExclusiveFrom(2^63 as a float) into int64: %v", err)
		}
		if got := toSlice(t, scMust[uint64](t)(gpu.CumSum[uint64](s, ai, 0, gpu.ExclusiveFrom(uint64(1)<<63)))); got[1] != 1<<63+1 {
			t.Errorf("ExclusiveFrom(2^63) into uint64: %v", got)
		}
		if got := toSlice(t, scMust[int32](t)(gpu.CumSum[int32](s, ai, 0, gpu.ExclusiveFrom(2.0)))); got[0] != 2 || got[1] != 3 {
			t.Errorf("ExclusiveFrom(2.0) into int32: %v", got)
		}
		out := mustArr[float32](t)(gpu.Zeros[float32](s, 4, 3))
		if err := gpu.AccumulateInto(s, out, a, gpu.OpSum, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("AccumulateInto with a wrong shape: %v", err)
		}
		if err := gpu.AccumulateInto(s, a, a, gpu.OpSum, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("AccumulateInto in place: %v", err)
		}
	})
}

func TestScanWraps(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		big := []int64{math.MaxInt64, 1, math.MaxInt64, 2}
		a := mustArr[int64](t)(gpu.FromSlice(s, big))
		got := toSlice(t, scMust[int64](t)(gpu.CumSum[int64](s, a, 0)))
		want := []int64{math.MaxInt64, math.MinInt64, -1, 1}
		scCheckExact(t, "int64 wrap", got, want)
		u := mustArr[uint8](t)(gpu.FromSlice(s, []uint8{200, 100, 255}))
		gu := toSlice(t, scMust[uint8](t)(gpu.CumSum[uint8](s, u, 0)))
		scCheckExact(t, "uint8 wrap", gu, []uint8{200, 44, 43})
		gw := toSlice(t, scMust[uint64](t)(gpu.CumSum[uint64](s, u, 0)))
		scCheckExact(t, "uint8 widened", gw, []uint64{200, 300, 555})
		p := mustArr[int32](t)(gpu.FromSlice(s, []int32{1 << 20, 1 << 20, 1 << 20}))
		gp := toSlice(t, scMust[int32](t)(gpu.CumProd[int32](s, p, 0)))
		scCheckExact(t, "int32 product wrap", gp, []int32{1 << 20, 0, 0})
	})
}

func TestAccumulateExpr(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(9, 10))
		for _, n := range []int{1, 33, 1025, 20000} {
			for _, shape := range [][]int{{n}, {3, n / 3}, {n / 3, 3}, {n / 20, 20}} {
				if shape[0]*shape[len(shape)-1] == 0 {
					continue
				}
				m := 1
				for _, v := range shape {
					m *= v
				}
				xs := scGen[int32](rng, m)
				a := mustArr[int32](t)(gpu.FromSlice(s, xs, shape...))
				xf := scGen[float32](rng, m)
				af := mustArr[float32](t)(gpu.FromSlice(s, xf, shape...))
				for axis := range shape {
					rs := make([]int64, m)
					for i, v := range xs {
						rs[i] = int64(v)
					}
					// Not the OpSum string: the expression path.
					got := toSlice(t, scMust[int64](t)(gpu.Accumulate[int64](s, a, "b + a", axis)))
					scCheckExact(t, "b + a", got, scanRef(rs, shape, axis, scAdd[int64], false, 0))
					got = toSlice(t, scMust[int64](t)(gpu.Accumulate[int64](s, a, "a ^ b", axis, gpu.ExclusiveFrom(5))))
					scCheckExact(t, "a ^ b from 5", got, scanRef(rs, shape, axis, func(x, y int64) int64 { return x ^ y }, true, 5))
					got = toSlice(t, scMust[int64](t)(gpu.Accumulate[int64](s, a, "where(a > b, a, b)", axis)))
					scCheckExact(t, "where max", got, scanRef(rs, shape, axis, scMax[int64], false, 0))
					// An exclusive built-in from a chosen start.
					got = toSlice(t, scMust[int64](t)(gpu.CumSum[int64](s, a, axis, gpu.ExclusiveFrom(-7))))
					scCheckExact(t, "sum from -7", got, scanRef(rs, shape, axis, scAdd[int64], true, -7))
					gf := toSlice(t, scMust[float32](t)(gpu.Accumulate[float32](s, af, "fmax(a, b)", axis, gpu.ExclusiveFrom(math.Inf(-1)))))
					scCheckExact(t, "fmax", gf, scanRef(xf, shape, axis, scMax[float32], true, float32(math.Inf(-1))))
				}
				a.Free()
				af.Free()
			}
		}
	})
}

// TestScanInto writes into poisoned outputs, contiguous and strided, and checks that
// every element was written and the rest left alone.
func TestScanInto(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(11, 12))
		for _, shape := range [][]int{{1 << 20}, {37, 300}, {300, 37}, {5, 6, 7}} {
			m := 1
			for _, v := range shape {
				m *= v
			}
			xs := scGen[float32](rng, m)
			a := mustArr[float32](t)(gpu.FromSlice(s, xs, shape...))
			for axis := range shape {
				out := mustArr[float32](t)(gpu.Full(s, float32(math.NaN()), shape...))
				if err := gpu.AccumulateInto(s, out, a, gpu.OpMax, axis); err != nil {
					t.Fatal(err)
				}
				scCheckExact(t, "into", toSlice(t, out), scanRef(xs, shape, axis, scMax[float32], false, 0))
				out.Free()
			}
			// A strided destination: every other row of a bigger array.
			big := append([]int{2 * shape[0]}, shape[1:]...)
			dst := mustArr[float32](t)(gpu.Full(s, float32(-1), big...))
			view, err := dst.Slice(gpu.R(0, gpu.End, 2))
			if err != nil {
				t.Fatal(err)
			}
			if err := gpu.AccumulateInto(s, view, a, gpu.OpMax, 0); err != nil {
				t.Fatal(err)
			}
			all := toSlice(t, dst)
			want := scanRef(xs, shape, 0, scMax[float32], false, 0)
			row := m / shape[0]
			for r := 0; r < 2*shape[0]; r++ {
				for j := 0; j < row; j++ {
					g := all[r*row+j]
					if r%2 == 1 && g != -1 {
						t.Fatalf("strided into: row %d written", r)
					}
					if r%2 == 0 && g != want[r/2*row+j] {
						t.Fatalf("strided into: element (%d, %d) = %v, want %v", r, j, g, want[r/2*row+j])
					}
				}
			}
			dst.Free()
			if got := toSlice(t, a); !slices.EqualFunc(got, xs, scSame[float32]) {
				t.Fatalf("scan modified its input")
			}
			a.Free()
		}
	})
}

// TestScanCrossBackend compares CUDA with the CPU backend on the same data.
func TestScanCrossBackend(t *testing.T) {
	devs := devices(t)
	if len(devs) < 2 {
		t.Skip("no CUDA device")
	}
	rng := rand.New(rand.NewPCG(13, 14))
	for _, shape := range [][]int{{1<<20 + 3}, {1000, 512}, {512, 1000}, {1000000, 3}, {3, 100000}} {
		m := 1
		for _, v := range shape {
			m *= v
		}
		xi := scGen[int32](rng, m)
		xf := scGen[float32](rng, m)
		for axis := range shape {
			var gi [2][]int64
			var gf [2][]float32
			for k, d := range devs[:2] {
				// Logged as it starts (with -v, as it happens): a run that stops shows where.
				t.Logf("%v axis %d on %s", shape, axis, d.Backend())
				s := d.DefaultStream()
				a := mustArr[int32](t)(gpu.FromSlice(s, xi, shape...))
				b := mustArr[float32](t)(gpu.FromSlice(s, xf, shape...))
				gi[k] = toSlice(t, scMust[int64](t)(gpu.CumSum[int64](s, a, axis)))
				gf[k] = toSlice(t, scMust[float32](t)(gpu.CumMax(s, b, axis)))
				a.Free()
				b.Free()
			}
			scCheckExact(t, fmt.Sprintf("cpu vs cuda int sum %v axis %d", shape, axis), gi[1], gi[0])
			scCheckExact(t, fmt.Sprintf("cpu vs cuda float max %v axis %d", shape, axis), gf[1], gf[0])
		}
	}
}

// scCUDA returns the CUDA device for the tests past 2^31 elements, or skips: they
// need a GPU, the long mode (not -short) and free device memory of need bytes.
func scCUDA(t *testing.T, need int64) *gpu.Device {
	t.Helper()
	if testing.Short() {
		t.Skip("a test past 2^31 elements: not in -short mode")
	}
	d, err := gpu.OpenBackend("cuda", 0)
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skip("no CUDA device")
	}
	if err != nil {
		t.Fatal(err)
	}
	free, _, err := d.MemInfo()
	if err != nil {
		t.Fatal(err)
	}
	if free < need {
		t.Skipf("%d bytes of device memory free, %d needed", free, need)
	}
	return d
}

// TestCumSumPast2G scans 2^31+4099 int8 values into int32 (exact) on CUDA and checks
// every element on the host, and the last elements of an int64 exclusive scan.
func TestCumSumPast2G(t *testing.T) {
	n := 1<<31 + 4099
	d := scCUDA(t, int64(n)*(1+4)+1<<30)
	s := d.DefaultStream()
	xs := make([]int8, n)
	rng := rand.New(rand.NewPCG(71, 72))
	for i := range xs {
		xs[i] = int8(rng.IntN(3) - 1)
	}
	xs[n-1] = 7
	a := mustArr[int8](t)(gpu.FromSlice(s, xs))
	defer a.Free()
	defer gpu.SetScanConfig(d, gpu.SetScanConfig(d, gpu.ScanConfig{Variant: 1}))
	for _, c := range scTestConfigs(d)[:3] { // the default and the two plain variants
		gpu.SetScanConfig(d, c)
		scPast2G(t, s, a, xs, fmt.Sprintf("%+v", c))
	}
}

// scPast2G runs TestCumSumPast2G's checks with one row-scan configuration.
func scPast2G(t *testing.T, s *gpu.Stream, a *gpu.Array[int8], xs []int8, variant string) {
	n := len(xs)
	out := scMust[int32](t)(gpu.CumSum[int32](s, a, 0))
	got := toSlice(t, out)
	out.Free()
	var run int32
	for i, v := range xs {
		run += int32(v)
		if got[i] != run {
			t.Fatalf("%s: element %d = %d, want %d", variant, i, got[i], run)
		}
	}
	got = nil
	// The int64 exclusive scan of the same data: check the tail, past 2^31.
	ex := scMust[int64](t)(gpu.CumSum[int64](s, a, 0, gpu.Exclusive()))
	defer ex.Free()
	tail, err := ex.Slice(gpu.R(n-5000, n))
	if err != nil {
		t.Fatal(err)
	}
	tv := toSlice(t, tail)
	want := int64(run) - int64(xs[n-1])
	if tv[len(tv)-1] != want {
		t.Fatalf("%s: last exclusive element = %d, want %d", variant, tv[len(tv)-1], want)
	}
}

// TestScanRepeatCUDA repeats multi-tile scans and compactions on CUDA: the
// look-back's results must never change (a protocol race would show as a rare
// difference). Integer scans are exact, so every run must equal the host reference.
func TestScanRepeatCUDA(t *testing.T) {
	d, err := gpu.OpenBackend("cuda", 0)
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skip("no CUDA device")
	}
	if err != nil {
		t.Fatal(err)
	}
	s := d.DefaultStream()
	reps := 200
	if testing.Short() {
		reps = 20
	}
	rng := rand.New(rand.NewPCG(81, 82))
	n := 1<<22 + 3
	xs := scGen[int32](rng, n)
	a := mustArr[int32](t)(gpu.FromSlice(s, xs))
	defer a.Free()
	rs := make([]int64, n)
	for i, v := range xs {
		rs[i] = int64(v)
	}
	want := scanRef(rs, []int{n}, 0, scAdd[int64], false, 0)
	wantF := scanRef(xs, []int{n}, 0, scMax[int32], false, 0)
	flags := srGen[bool](rng, n, 0.3)
	m := mustArr[bool](t)(gpu.FromSlice(s, flags))
	defer m.Free()
	wantIdx := srNonzero(flags)
	defer gpu.SetScanConfig(d, gpu.SetScanConfig(d, gpu.ScanConfig{Variant: 1}))
	cs := scTestConfigs(d)
	for r := 0; r < 3*reps; r++ {
		gpu.SetScanConfig(d, cs[r%len(cs)]) // every row-scan configuration, in turn
		o64 := scMust[int64](t)(gpu.CumSum[int64](s, a, 0))
		scCheckExact(t, fmt.Sprintf("run %d: int64 sum", r), toSlice(t, o64), want)
		o32 := scMust[int32](t)(gpu.CumMax(s, a, 0))
		scCheckExact(t, fmt.Sprintf("run %d: int32 max (packed status)", r), toSlice(t, o32), wantF)
		idx := mustArr[int64](t)(gpu.Nonzero(bg, s, m))
		scCheckExact(t, fmt.Sprintf("run %d: nonzero", r), toSlice(t, idx), wantIdx)
		o64.Free()
		o32.Free()
		idx.Free()
	}
}

// TestScanConfigFromEnv checks the environment variables of the row-scan
// configuration.
func TestScanConfigFromEnv(t *testing.T) {
	cases := []struct {
		env  map[string]string
		want gpu.ScanConfig
	}{
		{nil, gpu.ScanConfig{Variant: 2, Stage: true, MinBlocks: 5}},
		{map[string]string{"GPU_SCAN_VARIANT": "v1"}, gpu.ScanConfig{Variant: 1, Stage: true, MinBlocks: 5}},
		{map[string]string{"GPU_SCAN_VARIANT": "v4"}, gpu.ScanConfig{Variant: 2, Stage: true, MinBlocks: 5}},
		{map[string]string{"GPU_SCAN_VARIANT": "v1", "GPU_SCAN_STAGE": "1", "GPU_SCAN_LOOKBACK": "4", "GPU_SCAN_MINBLOCKS": "8"},
			gpu.ScanConfig{Variant: 1, Stage: true, Lookback: 4, MinBlocks: 8}},
		{map[string]string{"GPU_SCAN_VARIANT": "v4", "GPU_SCAN_STAGE": "0", "GPU_SCAN_LOOKBACK": "2", "GPU_SCAN_MINBLOCKS": "0"},
			gpu.ScanConfig{Variant: 2, Lookback: 2}},
		{map[string]string{"GPU_SCAN_LOOKBACK": "3", "GPU_SCAN_MINBLOCKS": "9"}, gpu.ScanConfig{Variant: 2, Stage: true, MinBlocks: 5}},
	}
	for _, c := range cases {
		if got := gpu.ScanConfigFromEnv(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("%v: %+v, want %+v", c.env, got, c.want)
		}
	}
}

// TestScanStatusShared runs scans of growing and shrinking sizes (int64 and int32 sums:
// statuses of two words and of one word a tile, odd tile counts among them) from several
// goroutines on one stream and on streams of their own, closed afterwards: on CUDA the
// scans of a stream share its status scratch, which each kernel leaves zero and a larger
// scan replaces, so every result must still equal the host reference.
func TestScanStatusShared(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, shared *gpu.Stream) {
		type job struct {
			shape []int
			axis  int
		}
		jobs := []job{{[]int{1<<20 + 3}, 0}, {[]int{1000}, 0}, {[]int{3 << 20}, 0}, {[]int{700, 1000}, 0},
			{[]int{70000}, 0}, {[]int{300, 2000}, 1}, {[]int{5000, 9}, 0}, {[]int{2*8192 + 100}, 0}}
		if testing.Short() {
			jobs = jobs[1:2]
		}
		var wg sync.WaitGroup
		errs := make(chan error, 64)
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := shared
				if g%2 == 1 {
					own, err := d.NewStream()
					if err != nil {
						errs <- err
						return
					}
					defer own.Close()
					s = own
				}
				rng := rand.New(rand.NewPCG(uint64(g), 91))
				for k := range jobs {
					j := jobs[(k+g)%len(jobs)]
					n := 1
					for _, v := range j.shape {
						n *= v
					}
					xs := scGen[int32](rng, n)
					rs := make([]int64, n)
					for i, v := range xs {
						rs[i] = int64(v)
					}
					want := scanRef(rs, j.shape, j.axis, scAdd[int64], false, 0)
					a, err := gpu.FromSlice(s, xs, j.shape...)
					if err != nil {
						errs <- err
						return
					}
					c, err := gpu.CumSum[int64](s, a, j.axis)
					if err != nil {
						errs <- err
						return
					}
					got, err := c.ToSlice(bg)
					if err != nil {
						errs <- err
						return
					}
					if !slices.Equal(got, want) {
						errs <- fmt.Errorf("goroutine %d: CumSum of %v along %d differs from the reference", g, j.shape, j.axis)
					}
					// int32 sums (wrapping): a status of one 4-byte word per tile.
					c32, err := gpu.CumSum[int32](s, a, j.axis)
					if err != nil {
						errs <- err
						return
					}
					got32, err := c32.ToSlice(bg)
					if err != nil {
						errs <- err
						return
					}
					if want32 := scanRef(xs, j.shape, j.axis, scAdd[int32], false, 0); !slices.Equal(got32, want32) {
						errs <- fmt.Errorf("goroutine %d: int32 CumSum of %v along %d differs from the reference", g, j.shape, j.axis)
					}
					a.Free()
					c.Free()
					c32.Free()
				}
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}
