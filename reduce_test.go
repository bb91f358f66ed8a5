package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/testenv"
)

// The reductions are tested on the CPU backend, on the PTX simulator behind a fake
// CUDA device (internal/ptxsim/simdev: the planner, both passes and the generated kernels),
// and on CUDA device 0 when there is one, against references computed here (float64
// with compensation for float sums, exact arithmetic in the accumulator type for
// integers).

type redDev struct {
	name string
	d    *gpu.Device
	sim  bool
}

func redDevices(t testing.TB) []redDev {
	t.Helper()
	cpuDev, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []redDev{{"cpu", cpuDev, false}}
	sd, err := simGPU()
	if err != nil {
		t.Fatal(err)
	}
	out = append(out, redDev{"sim", sd, true})
	if d, err := gpu.OpenBackend("cuda", 0); err == nil {
		out = append(out, redDev{"cuda", d, false})
	} else if !errors.Is(err, gpu.ErrNoDevice) {
		t.Fatal(err)
	}
	return out
}

func forRedDevices(t *testing.T, f func(t *testing.T, rd redDev, s *gpu.Stream)) {
	forRedDevicesOpt(t, false, f)
}

// forHeavyRedDevices is forRedDevices for the long tests: under the race detector,
// which slows the simulator down several times, they leave the simulator out (the
// normal runs cover it; the race detector's business is the host code).
func forHeavyRedDevices(t *testing.T, f func(t *testing.T, rd redDev, s *gpu.Stream)) {
	forRedDevicesOpt(t, testenv.Race, f)
}

func forRedDevicesOpt(t *testing.T, noSim bool, f func(t *testing.T, rd redDev, s *gpu.Stream)) {
	for _, rd := range redDevices(t) {
		if rd.sim && noSim {
			continue
		}
		t.Run(rd.name, func(t *testing.T) {
			s, err := rd.d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			f(t, rd, s)
		})
	}
}

// ---- host references ----

// logical returns a view's elements in row-major order, from the data its base array
// was made from.
func logical[T any](data []T, shape, strides []int, off int) []T {
	n := 1
	for _, d := range shape {
		n *= d
	}
	out := make([]T, 0, n)
	if n == 0 {
		return out
	}
	idx := make([]int, len(shape))
	for range n {
		p := off
		for d, i := range idx {
			p += i * strides[d]
		}
		out = append(out, data[p])
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// groups splits row-major values of shape into the reduction's groups: one per output
// (row-major over the kept axes), each in row-major order over the reduced axes.
func groups[T any](vals []T, shape []int, mask []bool) [][]T {
	m := 1
	for d, n := range shape {
		if !mask[d] {
			m *= n
		}
	}
	out := make([][]T, m)
	idx := make([]int, len(shape))
	for _, v := range vals {
		o := 0
		for d, i := range idx {
			if !mask[d] {
				o = o*shape[d] + i
			}
		}
		out[o] = append(out[o], v)
		for d := len(idx) - 1; d >= 0; d-- {
			idx[d]++
			if idx[d] < shape[d] {
				break
			}
			idx[d] = 0
		}
	}
	return out
}

// maskOf returns the reduced-axes mask of axes (nil: all) for a rank.
func maskOf(rank int, axes []int) []bool {
	m := make([]bool, rank)
	if axes == nil {
		for d := range m {
			m[d] = true
		}
	}
	for _, a := range axes {
		if a < 0 {
			a += rank
		}
		m[a] = true
	}
	return m
}

// resultShape returns the result shape of a reduction.
func resultShape(shape []int, mask []bool, keep bool) []int {
	out := []int{}
	for d, n := range shape {
		if !mask[d] {
			out = append(out, n)
		} else if keep {
			out = append(out, 1)
		}
	}
	return out
}

func axesOpts(axes []int, keep bool) []gpu.ReduceOption {
	var o []gpu.ReduceOption
	if axes != nil {
		o = append(o, gpu.Axes(axes...))
	}
	if keep {
		o = append(o, gpu.KeepDims())
	}
	return o
}

// fsum returns the sum of xs in float64 with Neumaier's compensation, and the sum of
// magnitudes.
func fsum(xs []float64) (sum, mag float64) {
	var c float64
	for _, x := range xs {
		t := sum + x
		if math.Abs(sum) >= math.Abs(x) {
			c += (sum - t) + x
		} else {
			c += (x - t) + sum
		}
		sum = t
		mag += math.Abs(x)
	}
	return sum + c, mag
}

func toF64[T gpu.Elem](v T) float64 {
	switch x := any(v).(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case int8:
		return float64(x)
	case int16:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case int:
		return float64(x)
	case uint8:
		return float64(x)
	case uint16:
		return float64(x)
	case uint32:
		return float64(x)
	case uint64:
		return float64(x)
	case uint:
		return float64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	}
	panic("type")
}

// conv converts like the reductions' conversions (Go's numeric conversion; bools 0/1).
func conv[R, T gpu.Elem](v T) R {
	var r R
	switch p := any(&r).(type) {
	case *bool:
		*p = toF64(v) != 0 || isNaNv(v)
		return r
	case *float32:
		switch x := any(v).(type) {
		case int64:
			*p = float32(x)
		case uint64:
			*p = float32(x)
		case int:
			*p = float32(x)
		case uint:
			*p = float32(x)
		default:
			*p = float32(toF64(v))
		}
		return r
	case *float64:
		switch x := any(v).(type) {
		case int64:
			*p = float64(x)
		case uint64:
			*p = float64(x)
		default:
			*p = toF64(v)
		}
		return r
	}
	// integers: through int64/uint64 bits (wrapping)
	var bitsv uint64
	switch x := any(v).(type) {
	case bool:
		if x {
			bitsv = 1
		}
	case int8:
		bitsv = uint64(int64(x))
	case int16:
		bitsv = uint64(int64(x))
	case int32:
		bitsv = uint64(int64(x))
	case int64:
		bitsv = uint64(x)
	case int:
		bitsv = uint64(x)
	case uint8:
		bitsv = uint64(x)
	case uint16:
		bitsv = uint64(x)
	case uint32:
		bitsv = uint64(x)
	case uint64:
		bitsv = x
	case uint:
		bitsv = uint64(x)
	default:
		panic("float to integer")
	}
	switch p := any(&r).(type) {
	case *int8:
		*p = int8(bitsv)
	case *int16:
		*p = int16(bitsv)
	case *int32:
		*p = int32(bitsv)
	case *int64:
		*p = int64(bitsv)
	case *int:
		*p = int(bitsv)
	case *uint8:
		*p = uint8(bitsv)
	case *uint16:
		*p = uint16(bitsv)
	case *uint32:
		*p = uint32(bitsv)
	case *uint64:
		*p = bitsv
	case *uint:
		*p = uint(bitsv)
	}
	return r
}

func isNaNv[T gpu.Elem](v T) bool {
	switch x := any(v).(type) {
	case float32:
		return x != x
	case float64:
		return x != x
	}
	return false
}

func isFloatT[T gpu.Elem]() bool {
	var z T
	switch any(z).(type) {
	case float32, float64:
		return true
	}
	return false
}

func epsOf[R gpu.Elem]() float64 {
	var z R
	if _, ok := any(z).(float32); ok {
		return 0x1p-24
	}
	return 0x1p-53
}

// less orders values for min/max/arg references (bools as 0 < 1; NaN handled by callers).
func less[T gpu.Elem](a, b T) bool { return toF64Ord(a) < toF64Ord(b) }

// toF64Ord is an exact order key for comparisons (int64/uint64 beyond 2^53 kept exact).
func toF64Ord[T gpu.Elem](v T) float64 { return toF64(v) }

func lessExact[T gpu.Elem](a, b T) bool {
	switch x := any(a).(type) {
	case int64:
		return x < any(b).(int64)
	case int:
		return x < any(b).(int)
	case uint64:
		return x < any(b).(uint64)
	case uint:
		return x < any(b).(uint)
	}
	return less(a, b)
}

func eqExact[T gpu.Elem](a, b T) bool { return !lessExact(a, b) && !lessExact(b, a) }

// refArg returns the index of the result of argmin (isMin) or argmax over g.
func refArg[T gpu.Elem](g []T, isMin bool) int {
	best := -1
	for i, v := range g {
		if isNaNv(v) {
			return i
		}
		if best < 0 || isMin && lessExact(v, g[best]) || !isMin && lessExact(g[best], v) {
			best = i
		}
	}
	return best
}

// refMinMax returns min or max of g: NaN if any, -0 below +0.
func refMinMax[T gpu.Elem](g []T, isMin bool) T {
	m := g[0]
	for _, v := range g {
		if isNaNv(v) {
			return v
		}
		if isMin && (lessExact(v, m) || eqExact(v, m) && math.Signbit(toF64(v))) ||
			!isMin && (lessExact(m, v) || eqExact(v, m) && !math.Signbit(toF64(v))) {
			m = v
		}
	}
	return m
}

// sameValue compares exactly (NaN equals NaN; -0 differs from +0 for floats).
func sameValue[T gpu.Elem](a, b T) bool {
	if isNaNv(a) || isNaNv(b) {
		return isNaNv(a) && isNaNv(b)
	}
	if isFloatT[T]() && a == b {
		return math.Signbit(toF64(a)) == math.Signbit(toF64(b))
	}
	return a == b
}

// ---- data ----

func randVals[T gpu.Elem](rng *rand.Rand, n int) []T {
	out := make([]T, n)
	for i := range out {
		var v T
		switch p := any(&v).(type) {
		case *bool:
			*p = rng.IntN(3) == 0
		case *float32:
			*p = float32(rng.NormFloat64())
		case *float64:
			*p = rng.NormFloat64()
		default:
			b := rng.Uint64()
			*(*uint64)(unsafe.Pointer(&b)) = b
			v = fromBits[T](b)
		}
		out[i] = v
	}
	return out
}

func fromBits[T gpu.Elem](b uint64) T {
	var v T
	size := int(unsafe.Sizeof(v))
	for i := 0; i < size; i++ {
		*(*byte)(unsafe.Add(unsafe.Pointer(&v), i)) = byte(b >> (8 * i))
	}
	return v
}

// smallInts returns integers in [-lo, hi) as T (for readable tie-rich data).
func smallInts[T gpu.Elem](rng *rand.Rand, n, lo, hi int) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = conv[T](int64(rng.IntN(lo+hi) - lo))
	}
	return out
}

func upload[T gpu.Elem](t testing.TB, s *gpu.Stream, data []T, shape ...int) *gpu.Array[T] {
	t.Helper()
	a, err := gpu.FromSlice(s, data, shape...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// ---- checks ----

// checkSum compares float or integer sums with the reference.
func checkSum[R, T gpu.Elem](t *testing.T, what string, got []R, gs [][]T, mean bool) {
	t.Helper()
	if len(got) != len(gs) {
		t.Fatalf("%s: %d results, want %d", what, len(got), len(gs))
	}
	for o, g := range gs {
		if isFloatT[R]() {
			xs := make([]float64, len(g))
			for i, v := range g {
				xs[i] = toF64(conv[R](v))
			}
			want, mag := fsum(xs)
			n := float64(len(g))
			if mean {
				want, mag = want/n, mag/n
				if len(g) == 0 {
					if !math.IsNaN(toF64(got[o])) {
						t.Fatalf("%s: mean of nothing = %v, want NaN", what, got[o])
					}
					continue
				}
			}
			tol := epsOf[R]() * (2*math.Log2(n+1) + 128) * mag
			if mean {
				tol += epsOf[R]() * math.Abs(want)
			}
			if d := math.Abs(toF64(got[o]) - want); !(d <= tol) {
				t.Fatalf("%s: output %d of %d (%d elements) = %v, want %v (error %g > %g)", what, o, len(gs), len(g), got[o], want, d, tol)
			}
			continue
		}
		var want R
		for _, v := range g {
			want = addR(want, conv[R](v))
		}
		if got[o] != want {
			t.Fatalf("%s: output %d (%d elements) = %v, want %v", what, o, len(g), got[o], want)
		}
	}
}

func addR[R gpu.Elem](a, b R) R {
	switch x := any(a).(type) {
	case int8:
		return any(x + any(b).(int8)).(R)
	case int16:
		return any(x + any(b).(int16)).(R)
	case int32:
		return any(x + any(b).(int32)).(R)
	case int64:
		return any(x + any(b).(int64)).(R)
	case int:
		return any(x + any(b).(int)).(R)
	case uint8:
		return any(x + any(b).(uint8)).(R)
	case uint16:
		return any(x + any(b).(uint16)).(R)
	case uint32:
		return any(x + any(b).(uint32)).(R)
	case uint64:
		return any(x + any(b).(uint64)).(R)
	case uint:
		return any(x + any(b).(uint)).(R)
	}
	panic("addR")
}

func mulR[R gpu.Elem](a, b R) R {
	switch x := any(a).(type) {
	case int8:
		return any(x * any(b).(int8)).(R)
	case int16:
		return any(x * any(b).(int16)).(R)
	case int32:
		return any(x * any(b).(int32)).(R)
	case int64:
		return any(x * any(b).(int64)).(R)
	case int:
		return any(x * any(b).(int)).(R)
	case uint8:
		return any(x * any(b).(uint8)).(R)
	case uint16:
		return any(x * any(b).(uint16)).(R)
	case uint32:
		return any(x * any(b).(uint32)).(R)
	case uint64:
		return any(x * any(b).(uint64)).(R)
	case uint:
		return any(x * any(b).(uint)).(R)
	}
	panic("mulR")
}

func checkMinMax[T gpu.Elem](t *testing.T, what string, got []T, gs [][]T, isMin bool) {
	t.Helper()
	for o, g := range gs {
		want := refMinMax(g, isMin)
		if !sameValue(got[o], want) {
			t.Fatalf("%s: output %d (%d elements) = %v, want %v", what, o, len(g), got[o], want)
		}
	}
}

func checkArg[T gpu.Elem](t *testing.T, what string, got []int64, vals []T, gs [][]T, isMin bool) {
	t.Helper()
	for o, g := range gs {
		want := refArg(g, isMin)
		if got[o] != int64(want) {
			t.Fatalf("%s: output %d (%d elements) = %d, want %d (%v vs %v)", what, o, len(g), got[o], want, g[min(max(0, int(got[o])), len(g)-1)], g[want])
		}
		if vals != nil && !sameValue(vals[o], g[want]) {
			t.Fatalf("%s: value %d = %v, want %v", what, o, vals[o], g[want])
		}
	}
}

func must[T any](t testing.TB) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// ---- tests ----

func TestReduceSizes(t *testing.T) {
	forHeavyRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(1, 2))
		for _, n := range sizes {
			big := n > 1<<16
			if big && rd.sim && testenv.Race {
				continue
			}
			xs := randVals[float32](rng, n)
			x := upload(t, s, xs)
			gs := [][]float32{xs}
			checkSum(t, fmt.Sprint("sum f32 ", n), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, x))), gs, false)
			if n > 0 {
				checkArg(t, fmt.Sprint("argmax ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x))), nil, gs, false)
			}
			if !big || !rd.sim {
				checkSum(t, fmt.Sprint("sum f64 ", n), toSlice(t, must[*gpu.Array[float64]](t)(gpu.Sum[float64](s, x))), gs, false)
				checkSum(t, fmt.Sprint("mean ", n), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Mean[float32](s, x))), gs, true)
				if n > 0 {
					checkMinMax(t, fmt.Sprint("min ", n), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Min(s, x))), gs, true)
					checkMinMax(t, fmt.Sprint("max ", n), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Max(s, x))), gs, false)
					v, i, err := gpu.FindMin(s, x)
					if err != nil {
						t.Fatal(err)
					}
					checkArg(t, fmt.Sprint("findmin ", n), toSlice(t, i), toSlice(t, v), gs, true)
				}
				is := smallInts[int32](rng, n, 1<<30, 1<<30)
				ia := upload(t, s, is)
				igs := [][]int32{is}
				checkSum(t, fmt.Sprint("sum i32 ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, ia))), igs, false)
				checkSum(t, fmt.Sprint("sum i32 in i32 ", n), toSlice(t, must[*gpu.Array[int32]](t)(gpu.Sum[int32](s, ia))), igs, false)
				if n > 0 {
					checkArg(t, fmt.Sprint("argmin i32 ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMin(s, ia))), nil, igs, true)
					checkMinMax(t, fmt.Sprint("max i32 ", n), toSlice(t, must[*gpu.Array[int32]](t)(gpu.Max(s, ia))), igs, false)
				}
				bs := randVals[bool](rng, n)
				ba := upload(t, s, bs)
				checkSum(t, fmt.Sprint("sum bool ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, ba))), [][]bool{bs}, false)
				cnt := toSlice(t, must[*gpu.Array[int64]](t)(gpu.Count(s, x)))
				if cnt[0] != int64(n) {
					t.Fatalf("count %d = %d", n, cnt[0])
				}
				anyT, allT := false, true
				for _, b := range bs {
					anyT = anyT || b
					allT = allT && b
				}
				if got := toSlice(t, must[*gpu.Array[bool]](t)(gpu.Any(s, ba))); got[0] != anyT {
					t.Fatalf("any %d = %v", n, got[0])
				}
				if got := toSlice(t, must[*gpu.Array[bool]](t)(gpu.All(s, ba))); got[0] != allT {
					t.Fatalf("all %d = %v", n, got[0])
				}
				ia.Free()
				ba.Free()
			}
			x.Free()
		}
	})
}

// layout is a way to view an array: contiguous, transposed, or sliced with steps.
type layout struct {
	name string
	make func(a *gpu.Array[float32]) (*gpu.Array[float32], error)
}

var layouts = []layout{
	{"contig", func(a *gpu.Array[float32]) (*gpu.Array[float32], error) { return a, nil }},
	{"transposed", func(a *gpu.Array[float32]) (*gpu.Array[float32], error) { return a.Transpose() }},
	{"sliced", func(a *gpu.Array[float32]) (*gpu.Array[float32], error) {
		var rs []gpu.Range
		for d, n := range a.Shape() {
			switch {
			case n >= 4 && d%2 == 0:
				rs = append(rs, gpu.R(1, gpu.End, 2))
			case n >= 2:
				rs = append(rs, gpu.Range{Start: -1, Stop: gpu.End, Step: -1})
			default:
				rs = append(rs, gpu.R())
			}
		}
		return a.Slice(rs...)
	}},
}

// subsets returns every subset of the axes of a rank (as axes lists), then nil (all).
func subsets(rank int) [][]int {
	var out [][]int
	for m := 0; m < 1<<rank; m++ {
		axes := []int{}
		for d := 0; d < rank; d++ {
			if m&(1<<d) != 0 {
				axes = append(axes, d)
			}
		}
		out = append(out, axes)
	}
	return append(out, nil)
}

func TestReduceAxes(t *testing.T) {
	shapes := [][]int{{7}, {5, 9}, {1, 1}, {3, 1, 33}, {2, 3, 5, 7}, {3, 1, 4, 2, 5}, {37, 129}, {129, 37}, {4, 300, 5}, {2, 1, 1, 3}}
	forHeavyRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(3, 4))
		for _, shape := range shapes {
			n := 1
			for _, d := range shape {
				n *= d
			}
			data := randVals[float32](rng, n)
			base := upload(t, s, data, shape...)
			for _, lay := range layouts {
				v := must[*gpu.Array[float32]](t)(lay.make(base))
				vals := logical(data, v.Shape(), v.Strides(), v.Offset())
				rank := len(v.Shape())
				for si, axes := range subsets(rank) {
					if rd.sim && testenv.Race && (si%3 != 0 || lay.name == "sliced" || n > 4000 && lay.name != "contig") {
						continue
					}
					keep := si%2 == 1
					what := fmt.Sprintf("%v %s axes %v keep %v", shape, lay.name, axes, keep)
					mask := maskOf(rank, axes)
					gs := groups(vals, v.Shape(), mask)
					want := resultShape(v.Shape(), mask, keep)
					sum := must[*gpu.Array[float64]](t)(gpu.Sum[float64](s, v, axesOpts(axes, keep)...))
					if !slices.Equal(sum.Shape(), want) {
						t.Fatalf("%s: shape %v, want %v", what, sum.Shape(), want)
					}
					checkSum(t, "sum "+what, toSlice(t, sum), gs, false)
					checkMinMax(t, "max "+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.Max(s, v, axesOpts(axes, keep)...))), gs, false)
					if rd.sim && n > 4000 && si%3 != 0 {
						continue
					}
					checkSum(t, "sum32 "+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, v, axesOpts(axes, keep)...))), gs, false)
					if axes == nil || len(axes) == 1 {
						val, idx, err := gpu.FindMax(s, v, axesOpts(axes, keep)...)
						if err != nil {
							t.Fatal(what, err)
						}
						if !slices.Equal(idx.Shape(), want) {
							t.Fatalf("%s: argmax shape %v, want %v", what, idx.Shape(), want)
						}
						checkArg(t, "findmax "+what, toSlice(t, idx), toSlice(t, val), gs, false)
						val.Free()
						idx.Free()
					}
					sum.Free()
				}
			}
			// integer sums over axes (exact)
			is := smallInts[int32](rng, n, 1<<31, 1<<31-1)
			ia := upload(t, s, is, shape...)
			for _, axes := range subsets(len(shape)) {
				gs := groups(is, shape, maskOf(len(shape), axes))
				checkSum(t, fmt.Sprintf("isum %v %v", shape, axes), toSlice(t, must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, ia, axesOpts(axes, false)...))), gs, false)
			}
			ia.Free()
			base.Free()
		}
	})
}

func TestReduceNaNInfTies(t *testing.T) {
	nan := float32(math.NaN())
	inf := float32(math.Inf(1))
	negz := float32(math.Copysign(0, -1))
	cases := [][]float32{
		{1, nan, 3, nan},
		{nan},
		{3, 1, 1, 3},
		{inf, -inf, 2},
		{-inf, -inf},
		{0, negz, 0},
		{negz, 0},
		{5, 5, 5, 5, 5},
		{inf, inf},
		{2, nan, inf, -inf},
	}
	forHeavyRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		for _, c := range cases {
			x := upload(t, s, c)
			gs := [][]float32{c}
			checkMinMax(t, fmt.Sprint("min ", c), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Min(s, x))), gs, true)
			checkMinMax(t, fmt.Sprint("max ", c), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Max(s, x))), gs, false)
			checkArg(t, fmt.Sprint("argmin ", c), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMin(s, x))), nil, gs, true)
			checkArg(t, fmt.Sprint("argmax ", c), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x))), nil, gs, false)
			sum := toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, x)))[0]
			xs := make([]float64, len(c))
			for i, v := range c {
				xs[i] = float64(v)
			}
			var want float64
			for _, v := range xs {
				want += v
			}
			if !(sum == float32(want) || math.IsNaN(want) && sum != sum) {
				t.Fatalf("sum %v = %v, want %v", c, sum, want)
			}
			x.Free()
		}
		// Long arrays: NaNs and ties far apart, so that different blocks and passes meet.
		for _, n := range []int{1000, 100003, 1<<20 + 3} {
			if rd.sim && (n > 1<<17 || testenv.Race && n > 1000) {
				continue
			}
			xs := make([]float32, n)
			for i := range xs {
				xs[i] = float32(i % 1000)
			}
			xs[n/3] = 5000
			xs[n-2] = 5000
			xs[n/2] = -7
			xs[n-5] = -7
			x := upload(t, s, xs)
			gs := [][]float32{xs}
			checkArg(t, fmt.Sprint("argmax ties ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x))), nil, gs, false)
			checkArg(t, fmt.Sprint("argmin ties ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMin(s, x))), nil, gs, true)
			xs[n-3] = nan
			xs[2*n/3] = nan
			x2 := upload(t, s, xs)
			gs = [][]float32{xs}
			checkArg(t, fmt.Sprint("argmax nan ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x2))), nil, gs, false)
			checkArg(t, fmt.Sprint("argmin nan ", n), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMin(s, x2))), nil, gs, true)
			checkMinMax(t, fmt.Sprint("max nan ", n), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Max(s, x2))), gs, false)
			checkMinMax(t, fmt.Sprint("min nan ", n), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Min(s, x2))), gs, true)
			x.Free()
			x2.Free()
		}
		// Along axes: NaN in some rows and columns.
		rows, cols := 37, 300
		xs := make([]float32, rows*cols)
		for i := range xs {
			xs[i] = float32((i * 7919) % 101)
		}
		xs[5*cols+17] = nan
		xs[9*cols+250] = nan
		xs[30*cols+17] = nan
		xs[12*cols+3] = -inf
		x := upload(t, s, xs, rows, cols)
		for _, ax := range []int{0, 1} {
			gs := groups(xs, []int{rows, cols}, maskOf(2, []int{ax}))
			checkMinMax(t, fmt.Sprint("max axis ", ax), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Max(s, x, gpu.Axes(ax)))), gs, false)
			checkMinMax(t, fmt.Sprint("min axis ", ax), toSlice(t, must[*gpu.Array[float32]](t)(gpu.Min(s, x, gpu.Axes(ax)))), gs, true)
			checkArg(t, fmt.Sprint("argmax axis ", ax), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x, gpu.Axes(ax)))), nil, gs, false)
			checkArg(t, fmt.Sprint("argmin axis ", ax), toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMin(s, x, gpu.Axes(ax)))), nil, gs, true)
		}
		x.Free()
	})
}

func TestReduceEmpty(t *testing.T) {
	forRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		for _, shape := range [][]int{{0}, {0, 3}, {3, 0}, {2, 0, 4}} {
			a := must[*gpu.Array[float32]](t)(gpu.Empty[float32](s, shape...))
			if v := toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, a))); v[0] != 0 {
				t.Fatalf("sum of %v = %v", shape, v)
			}
			if v := toSlice(t, must[*gpu.Array[float64]](t)(gpu.Prod[float64](s, a))); v[0] != 1 {
				t.Fatalf("prod of %v = %v", shape, v)
			}
			if v := toSlice(t, must[*gpu.Array[bool]](t)(gpu.Any(s, a))); v[0] {
				t.Fatalf("any of %v = %v", shape, v)
			}
			if v := toSlice(t, must[*gpu.Array[bool]](t)(gpu.All(s, a))); !v[0] {
				t.Fatalf("all of %v = %v", shape, v)
			}
			if v := toSlice(t, must[*gpu.Array[int64]](t)(gpu.Count(s, a))); v[0] != 0 {
				t.Fatalf("count of %v = %v", shape, v)
			}
			if v := toSlice(t, must[*gpu.Array[float32]](t)(gpu.Mean[float32](s, a))); !math.IsNaN(float64(v[0])) {
				t.Fatalf("mean of %v = %v", shape, v)
			}
			for name, f := range map[string]func() error{
				"min":     func() error { _, err := gpu.Min(s, a); return err },
				"max":     func() error { _, err := gpu.Max(s, a); return err },
				"argmin":  func() error { _, err := gpu.ArgMin(s, a); return err },
				"argmax":  func() error { _, err := gpu.ArgMax(s, a); return err },
				"findmax": func() error { _, _, err := gpu.FindMax(s, a); return err },
			} {
				if err := f(); !errors.Is(err, gpu.ErrInvalidValue) {
					t.Fatalf("%s of %v: %v, want ErrInvalidValue", name, shape, err)
				}
			}
			// Each axis: an empty reduced axis with outputs is an error for min; an
			// empty result is fine.
			for ax := range shape {
				mask := maskOf(len(shape), []int{ax})
				out := resultShape(shape, mask, false)
				outN := 1
				for _, d := range out {
					outN *= d
				}
				sum := must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, a, gpu.Axes(ax)))
				if !slices.Equal(sum.Shape(), out) {
					t.Fatalf("sum of %v axis %d: shape %v, want %v", shape, ax, sum.Shape(), out)
				}
				for _, v := range toSlice(t, sum) {
					if v != 0 {
						t.Fatalf("sum of %v axis %d = %v", shape, ax, v)
					}
				}
				_, err := gpu.Min(s, a, gpu.Axes(ax))
				if wantErr := shape[ax] == 0 && outN > 0; wantErr != (err != nil) {
					t.Fatalf("min of %v axis %d: %v (want an error: %v)", shape, ax, err, wantErr)
				}
				_, err = gpu.ArgMax(s, a, gpu.Axes(ax))
				if wantErr := shape[ax] == 0 && outN > 0; wantErr != (err != nil) {
					t.Fatalf("argmax of %v axis %d: %v (want an error: %v)", shape, ax, err, wantErr)
				}
			}
		}
	})
}

// dtypeCase runs the reductions of one element type over a [33, 17] array.
func dtypeCase[T gpu.Elem, R gpu.Elem](t *testing.T, s *gpu.Stream, rng *rand.Rand) {
	shape := []int{33, 17}
	data := randVals[T](rng, 33*17)
	a := upload(t, s, data, shape...)
	defer a.Free()
	for ai, axes := range [][]int{nil, {0}, {1}, {-1}} {
		if testenv.Race && ai%2 == 1 {
			continue
		}
		mask := maskOf(2, axes)
		gs := groups(data, shape, mask)
		what := fmt.Sprintf("%v axes %v", dtype.Of[T](), axes)
		checkSum(t, "sum "+what, toSlice(t, must[*gpu.Array[R]](t)(gpu.Sum[R](s, a, axesOpts(axes, false)...))), gs, false)
		checkMinMax(t, "min "+what, toSlice(t, must[*gpu.Array[T]](t)(gpu.Min(s, a, axesOpts(axes, false)...))), gs, true)
		checkMinMax(t, "max "+what, toSlice(t, must[*gpu.Array[T]](t)(gpu.Max(s, a, axesOpts(axes, false)...))), gs, false)
		checkArg(t, "argmin "+what, toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMin(s, a, axesOpts(axes, false)...))), nil, gs, true)
		v, i, err := gpu.FindMax(s, a, axesOpts(axes, false)...)
		if err != nil {
			t.Fatal(err)
		}
		checkArg(t, "findmax "+what, toSlice(t, i), toSlice(t, v), gs, false)
		cnt := toSlice(t, must[*gpu.Array[int64]](t)(gpu.Count(s, a, axesOpts(axes, false)...)))
		anys := toSlice(t, must[*gpu.Array[bool]](t)(gpu.Any(s, a, axesOpts(axes, false)...)))
		alls := toSlice(t, must[*gpu.Array[bool]](t)(gpu.All(s, a, axesOpts(axes, false)...)))
		for o, g := range gs {
			c := 0
			for _, x := range g {
				if conv[bool](x) {
					c++
				}
			}
			if cnt[o] != int64(c) || anys[o] != (c > 0) || alls[o] != (c == len(g)) {
				t.Fatalf("%s: output %d: count %d any %v all %v, want %d of %d", what, o, cnt[o], anys[o], alls[o], c, len(g))
			}
		}
		if !isFloatT[R]() {
			// products wrap: compare with the exact product in R
			prod := toSlice(t, must[*gpu.Array[R]](t)(gpu.Prod[R](s, a, axesOpts(axes, false)...)))
			for o, g := range gs {
				want := conv[R](int64(1))
				for _, x := range g {
					want = mulR(want, conv[R](x))
				}
				if prod[o] != want {
					t.Fatalf("%s: prod %d = %v, want %v", what, o, prod[o], want)
				}
			}
		}
	}
}

func TestReduceDTypes(t *testing.T) {
	forHeavyRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(5, 6))
		t.Run("bool", func(t *testing.T) { dtypeCase[bool, int64](t, s, rng) })
		t.Run("int8", func(t *testing.T) { dtypeCase[int8, int64](t, s, rng) })
		t.Run("int16", func(t *testing.T) { dtypeCase[int16, int64](t, s, rng) })
		t.Run("int32", func(t *testing.T) { dtypeCase[int32, int64](t, s, rng) })
		t.Run("int64", func(t *testing.T) { dtypeCase[int64, int64](t, s, rng) })
		t.Run("int", func(t *testing.T) { dtypeCase[int, int](t, s, rng) })
		t.Run("uint8", func(t *testing.T) { dtypeCase[uint8, uint64](t, s, rng) })
		t.Run("uint16", func(t *testing.T) { dtypeCase[uint16, uint64](t, s, rng) })
		t.Run("uint32", func(t *testing.T) { dtypeCase[uint32, uint64](t, s, rng) })
		t.Run("uint64", func(t *testing.T) { dtypeCase[uint64, uint64](t, s, rng) })
		t.Run("uint", func(t *testing.T) { dtypeCase[uint, uint](t, s, rng) })
		t.Run("float32", func(t *testing.T) { dtypeCase[float32, float32](t, s, rng) })
		t.Run("float64", func(t *testing.T) { dtypeCase[float64, float64](t, s, rng) })
		// narrow accumulators wrap (numpy.sum(a, dtype=int8))
		t.Run("int8-in-int8", func(t *testing.T) { dtypeCase[int8, int8](t, s, rng) })
		t.Run("uint16-in-int32", func(t *testing.T) { dtypeCase[uint16, int32](t, s, rng) })
		t.Run("int32-in-float64", func(t *testing.T) { dtypeCase[int32, float64](t, s, rng) })
		t.Run("int64-in-float32", func(t *testing.T) { dtypeCase[int64, float32](t, s, rng) })
		t.Run("float64-in-float32", func(t *testing.T) { dtypeCase[float64, float32](t, s, rng) })
		t.Run("float32-in-float64", func(t *testing.T) { dtypeCase[float32, float64](t, s, rng) })
	})
}

func TestReduceRepeat(t *testing.T) {
	forRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		n, reps := 100003, 1000
		if rd.sim {
			n = 1025
			if testenv.Race {
				reps = 200
			}
		}
		rng := rand.New(rand.NewPCG(7, 8))
		xs := randVals[float32](rng, n)
		x := upload(t, s, xs, n)
		first := toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, x)))[0]
		firstMax := toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x)))[0]
		for i := 1; i < reps; i++ {
			r := must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, x))
			v := toSlice(t, r)[0]
			r.Free()
			if math.Float32bits(v) != math.Float32bits(first) {
				t.Fatalf("repetition %d: %v, first %v", i, v, first)
			}
			if i%100 == 0 {
				if a := toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x)))[0]; a != firstMax {
					t.Fatalf("argmax repetition %d: %d, first %d", i, a, firstMax)
				}
			}
		}
		if !slices.Equal(toSlice(t, x), xs) {
			t.Fatal("the input changed")
		}
		// Axis reductions leave their input alone too.
		m := upload(t, s, xs[:100*10], 100, 10)
		for _, ax := range []int{0, 1} {
			must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, m, gpu.Axes(ax)))
			must[*gpu.Array[int64]](t)(gpu.ArgMin(s, m, gpu.Axes(ax)))
			must[*gpu.Array[float32]](t)(gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": m}, gpu.OpMax, gpu.Axes(ax)))
		}
		if !slices.Equal(toSlice(t, m), xs[:1000]) {
			t.Fatal("an axis reduction changed its input")
		}
	})
}

func TestReduceInto(t *testing.T) {
	forRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(9, 10))
		rows, cols := 33, 65
		xs := randVals[float32](rng, rows*cols)
		x := upload(t, s, xs, rows, cols)
		gs := groups(xs, []int{rows, cols}, maskOf(2, []int{1}))
		nan := float32(math.NaN())
		// a contiguous output, poisoned
		out := must[*gpu.Array[float32]](t)(gpu.Full(s, nan, rows))
		if err := gpu.ReduceInto(s, out, gpu.OpSum, x, gpu.Axes(1)); err != nil {
			t.Fatal(err)
		}
		checkSum(t, "sum into", toSlice(t, out), gs, false)
		if err := gpu.ReduceInto(s, out, gpu.OpMax, x, gpu.Axes(1)); err != nil {
			t.Fatal(err)
		}
		checkMinMax(t, "max into", toSlice(t, out), gs, false)
		// a strided output: column 2 of a poisoned [rows, 4] array, the result kept 2-d
		big := must[*gpu.Array[float32]](t)(gpu.Full(s, nan, rows, 4))
		col := must[*gpu.Array[float32]](t)(big.Slice(gpu.R(), gpu.R(2)))
		if err := gpu.ReduceInto(s, col, gpu.OpSum, x, gpu.Axes(1), gpu.KeepDims()); err != nil {
			t.Fatal(err)
		}
		all := toSlice(t, big)
		got := make([]float32, rows)
		for r := range rows {
			got[r] = all[r*4+2]
			for c := range 4 {
				if c != 2 && !math.IsNaN(float64(all[r*4+c])) {
					t.Fatalf("element (%d, %d) outside the output view was written: %v", r, c, all[r*4+c])
				}
			}
		}
		checkSum(t, "sum into a strided view", got, gs, false)
		// MapReduceInto, poisoned
		out2 := must[*gpu.Array[float64]](t)(gpu.Full(s, math.NaN(), cols))
		if err := gpu.MapReduceInto(s, out2, "float64(x)*2", gpu.Vars{"x": x}, gpu.OpSum, gpu.Axes(0)); err != nil {
			t.Fatal(err)
		}
		g0 := groups(xs, []int{rows, cols}, maskOf(2, []int{0}))
		got2 := toSlice(t, out2)
		for o := range got2 {
			got2[o] /= 2
		}
		checkSum(t, "mapreduce into", got2, g0, false)
		// an output in the input's own memory: the sums of the rows into column 0 of x
		xcopy := upload(t, s, xs, rows, cols)
		c0 := must[*gpu.Array[float32]](t)(xcopy.Slice(gpu.R(), gpu.R(0)))
		if err := gpu.ReduceInto(s, c0, gpu.OpSum, xcopy, gpu.Axes(1), gpu.KeepDims()); err != nil {
			t.Fatal(err)
		}
		after := toSlice(t, xcopy)
		got3 := make([]float32, rows)
		for r := range rows {
			got3[r] = after[r*cols]
		}
		checkSum(t, "sum into its own input", got3, gs, false)
		// shape and type errors
		if err := gpu.ReduceInto(s, out, gpu.OpSum, x, gpu.Axes(0)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("ReduceInto with a wrong shape: %v", err)
		}
		bad := must[*gpu.Array[float64]](t)(gpu.Empty[float64](s, rows))
		if err := gpu.ReduceInto(s, bad, gpu.OpMin, x, gpu.Axes(1)); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("ReduceInto min into another type: %v", err)
		}
	})
}

func TestMapReduce(t *testing.T) {
	forHeavyRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(11, 12))
		rows, cols := 70, 130
		xs := randVals[float32](rng, rows*cols)
		ys := randVals[float32](rng, cols)
		is := smallInts[int32](rng, rows*cols, 1000, 1000)
		x := upload(t, s, xs, rows, cols)
		y := upload(t, s, ys, 1, cols)
		ia := upload(t, s, is, rows, cols)
		shape := []int{rows, cols}
		for ai, axes := range [][]int{nil, {0}, {1}, {}} {
			if rd.sim && testenv.Race && ai%2 == 1 {
				continue
			}
			mask := maskOf(2, axes)
			if axes != nil && len(axes) == 0 {
				mask = []bool{false, false}
			}
			what := fmt.Sprint(" axes ", axes)
			opts := axesOpts(axes, false)
			// x*x
			sq := make([]float32, len(xs))
			for i, v := range xs {
				sq[i] = v * v
			}
			checkSum(t, "x*x"+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum, opts...))), groups(sq, shape, mask), false)
			// a*x + y with a broadcast y and a parameter, into float64
			axy := make([]float64, len(xs))
			for i, v := range xs {
				axy[i] = float64(float32(float32(2.5)*v) + ys[i%cols])
			}
			checkSum(t, "a*x+y"+what, toSlice(t, must[*gpu.Array[float64]](t)(gpu.MapReduce[float64](s, "a*x + y", gpu.Vars{"x": x, "y": y, "a": 2.5}, gpu.OpSum, opts...))), groups(axy, shape, mask), false)
			// max of abs
			ab := make([]float32, len(xs))
			for i, v := range xs {
				ab[i] = float32(math.Abs(float64(v)))
			}
			checkMinMax(t, "max abs"+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.MapReduce[float32](s, "abs(x)", gpu.Vars{"x": x}, gpu.OpMax, opts...))), groups(ab, shape, mask), false)
			// integer map, wrapping sum in int64; min of a mixed-type expression
			i7 := make([]int64, len(is))
			for i, v := range is {
				i7[i] = int64(v%7) * 3
			}
			checkSum(t, "i%7*3"+what, toSlice(t, must[*gpu.Array[int64]](t)(gpu.MapReduce[int64](s, "i%7*3", gpu.Vars{"i": ia}, gpu.OpSum, opts...))), groups(i7, shape, mask), false)
			mix := make([]float64, len(is))
			for i, v := range is {
				mix[i] = float64(v) - float64(xs[i])
			}
			checkMinMax(t, "i-x"+what, toSlice(t, must[*gpu.Array[float64]](t)(gpu.MapReduce[float64](s, "i - x", gpu.Vars{"i": ia, "x": x}, gpu.OpMin, opts...))), groups(mix, shape, mask), true)
			// any and all of predicates
			gt := make([]bool, len(xs))
			for i, v := range xs {
				gt[i] = v > 2
			}
			anyv := toSlice(t, must[*gpu.Array[bool]](t)(gpu.MapReduce[bool](s, "x > 2", gpu.Vars{"x": x}, gpu.OpAny, opts...)))
			allv := toSlice(t, must[*gpu.Array[bool]](t)(gpu.MapReduce[bool](s, "x > -4", gpu.Vars{"x": x}, gpu.OpAll, opts...)))
			for o, g := range groups(gt, shape, mask) {
				w := false
				for _, b := range g {
					w = w || b
				}
				if anyv[o] != w {
					t.Fatalf("any x > 2%s: output %d = %v", what, o, anyv[o])
				}
			}
			for o, g := range groups(xs, shape, mask) {
				w := true
				for _, v := range g {
					w = w && v > -4
				}
				if allv[o] != w {
					t.Fatalf("all x > -4%s: output %d = %v", what, o, allv[o])
				}
			}
		}
		// a map that reads no operand: the count of elements per output
		for _, axes := range [][]int{nil, {1}} {
			c := toSlice(t, must[*gpu.Array[int64]](t)(gpu.MapReduce[int64](s, "1", gpu.Vars{"x": x}, gpu.OpSum, axesOpts(axes, false)...)))
			want := int64(rows * cols)
			if axes != nil {
				want = int64(cols)
			}
			for o, v := range c {
				if v != want {
					t.Fatalf("count by a constant map, axes %v: output %d = %d, want %d", axes, o, v, want)
				}
			}
		}
		if _, err := gpu.MapReduce[float32](s, "x*", gpu.Vars{"x": x}, gpu.OpSum); err == nil {
			t.Fatal("MapReduce with a syntax error succeeded")
		}
		if _, err := gpu.MapReduce[float32](s, "x", gpu.Vars{"x": x}, gpu.Op("a - b"), gpu.Axes(0)); !errors.Is(err, gpu.ErrNotSupported) {
			t.Fatalf("MapReduce with an expression operator: %v", err)
		}
		if _, err := gpu.MapReduce[float32](s, "x", gpu.Vars{"x": x}, gpu.OpAny); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("MapReduce any into float32: %v", err)
		}
		if _, err := gpu.MapReduce[float32](s, "x + z", gpu.Vars{"x": x, "z": upload(t, s, []float32{1, 2, 3})}, gpu.OpSum); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Fatalf("MapReduce of shapes that don't broadcast: %v", err)
		}
	})
}

func TestReduceErrors(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := d.DefaultStream()
	x := upload(t, s, make([]float32, 24), 2, 3, 4)
	for name, f := range map[string]func() error{
		"repeated axis":    func() error { _, err := gpu.Sum[float32](s, x, gpu.Axes(1, -2)); return err },
		"axis too large":   func() error { _, err := gpu.Sum[float32](s, x, gpu.Axes(3)); return err },
		"axis too small":   func() error { _, err := gpu.Max(s, x, gpu.Axes(-4)); return err },
		"sum into bool":    func() error { _, err := gpu.Sum[bool](s, x); return err },
		"float sum in int": func() error { _, err := gpu.Sum[int64](s, x); return err },
		"argmax two axes":  func() error { _, err := gpu.ArgMax(s, x, gpu.Axes(0, 1)); return err },
		"argmax no axes":   func() error { _, err := gpu.ArgMax(s, x, gpu.Axes()); return err },
		// A nil option is bad input, not a panic.
		"nil option":           func() error { _, err := gpu.Sum[float32](s, x, gpu.Axes(0), nil); return err },
		"nil option of argmax": func() error { _, err := gpu.ArgMax(s, x, nil); return err },
		"nil option of mapreduce": func() error {
			_, err := gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum, nil)
			return err
		},
		"nil option of ReduceInto": func() error {
			out := upload(t, s, make([]float32, 1))
			r, _ := out.Reshape()
			return gpu.ReduceInto(s, r, gpu.OpMax, x, nil)
		},
	} {
		if err := f(); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("%s: %v, want ErrInvalidValue", name, err)
		}
	}
	// Axes() reduces nothing: the result is the input (converted).
	y := upload(t, s, []int32{1, -2, 3, 4, 5, 6}, 2, 3)
	r := must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, y, gpu.Axes()))
	if !slices.Equal(r.Shape(), []int{2, 3}) || !slices.Equal(toSlice(t, r), []int64{1, -2, 3, 4, 5, 6}) {
		t.Fatalf("sum over no axes: %v %v", r.Shape(), toSlice(t, r))
	}
	k := must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, y, gpu.KeepDims()))
	if !slices.Equal(k.Shape(), []int{1, 1}) || toSlice(t, k)[0] != 17 {
		t.Fatalf("sum keepdims: %v %v", k.Shape(), toSlice(t, k))
	}
	// 0-d arrays
	z := must[*gpu.Array[float64]](t)(gpu.Full(s, 2.5))
	if v := toSlice(t, must[*gpu.Array[float64]](t)(gpu.Sum[float64](s, z))); v[0] != 2.5 {
		t.Fatalf("sum of a 0-d array: %v", v)
	}
	if v := toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, z))); v[0] != 0 {
		t.Fatalf("argmax of a 0-d array: %v", v)
	}
}

// TestReduceCPUWorkers checks that the CPU's float sums don't depend on the number of
// workers, bit for bit.
func TestReduceCPUWorkers(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	type tc struct {
		shape []int
		axes  []int
	}
	cases := []tc{{[]int{1<<20 + 3}, nil}, {[]int{300, 1000}, []int{0}}, {[]int{300, 1000}, []int{1}}, {[]int{3, 200000}, []int{1}}, {[]int{200000, 3}, []int{0}}, {[]int{64, 70, 30}, []int{0, 2}}}
	var ref [][]float32
	for wi, workers := range []int{1, 2, 3, 8} {
		d, err := gpu.NewDevice(cpu.New(workers))
		if err != nil {
			t.Fatal(err)
		}
		s := d.DefaultStream()
		for ci, c := range cases {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			if wi == 0 {
				ref = append(ref, nil)
			}
			r := rand.New(rand.NewPCG(uint64(ci), 1))
			xs := randVals[float32](r, n)
			x := upload(t, s, xs, c.shape...)
			got := toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, x, axesOpts(c.axes, false)...)))
			got = append(got, toSlice(t, must[*gpu.Array[float32]](t)(gpu.Prod[float32](s, x, axesOpts(c.axes, false)...)))...)
			if wi == 0 {
				ref[ci] = got
				checkSum(t, fmt.Sprint("sum ", c), got[:len(got)/2], groups(xs, c.shape, maskOf(len(c.shape), c.axes)), false)
				continue
			}
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(ref[ci][i]) {
					t.Fatalf("%v with %d workers: result %d = %v, with 1 worker %v", c, workers, i, got[i], ref[ci][i])
				}
			}
		}
	}
	_ = rng
}

// TestReduceVsCPU compares CUDA's results (the simulator's here) with the CPU
// backend's on random shapes, axes and layouts: exactly for integers, min, max and the
// arg operations, within the accuracy bound for float sums.
func TestReduceVsCPU(t *testing.T) {
	cpuDev, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	cs := cpuDev.DefaultStream()
	for _, rd := range redDevices(t) {
		if rd.name == "cpu" {
			continue
		}
		t.Run(rd.name, func(t *testing.T) {
			s, err := rd.d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			rng := rand.New(rand.NewPCG(15, 16))
			iters, limit := 300, 1<<18
			if rd.sim {
				iters, limit = 60, 6000
				if testenv.Race {
					iters = 20
				}
			}
			for it := 0; it < iters; it++ {
				rank := 1 + rng.IntN(4)
				shape := make([]int, rank)
				n := 1
				for d := range shape {
					shape[d] = 1 + rng.IntN(40)
					if rng.IntN(6) == 0 {
						shape[d] = 1
					}
					n *= shape[d]
				}
				if n > limit {
					it--
					continue
				}
				is := smallInts[int16](rng, n, 50, 50)
				fs := randVals[float64](rng, n)
				var axes []int
				if rng.IntN(4) > 0 {
					for d := range rank {
						if rng.IntN(2) == 0 {
							axes = append(axes, d-rank*rng.IntN(2))
						}
					}
				}
				var one []int
				if rng.IntN(3) > 0 {
					one = []int{rng.IntN(rank)}
				}
				keep := rng.IntN(2) == 0
				what := fmt.Sprintf("shape %v axes %v keep %v", shape, axes, keep)
				ga, ca := upload(t, s, is, shape...), upload(t, cs, is, shape...)
				gf, cf := upload(t, s, fs, shape...), upload(t, cs, fs, shape...)
				if rng.IntN(2) == 0 {
					ga, ca = must[*gpu.Array[int16]](t)(ga.Transpose()), must[*gpu.Array[int16]](t)(ca.Transpose())
					gf, cf = must[*gpu.Array[float64]](t)(gf.Transpose()), must[*gpu.Array[float64]](t)(cf.Transpose())
					what += " transposed"
				}
				opts := axesOpts(axes, keep)
				eqI := func(name string, g, c *gpu.Array[int64]) {
					if a, b := toSlice(t, g), toSlice(t, c); !slices.Equal(a, b) {
						t.Fatalf("%s %s: %v, cpu %v", name, what, a, b)
					}
				}
				eqI("sum", must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, ga, opts...)), must[*gpu.Array[int64]](t)(gpu.Sum[int64](cs, ca, opts...)))
				eqI("count", must[*gpu.Array[int64]](t)(gpu.Count(s, ga, opts...)), must[*gpu.Array[int64]](t)(gpu.Count(cs, ca, opts...)))
				g1, c1 := must[*gpu.Array[int16]](t)(gpu.Min(s, ga, opts...)), must[*gpu.Array[int16]](t)(gpu.Min(cs, ca, opts...))
				if a, b := toSlice(t, g1), toSlice(t, c1); !slices.Equal(a, b) {
					t.Fatalf("min %s: %v, cpu %v", what, a, b)
				}
				g2, c2 := must[*gpu.Array[float64]](t)(gpu.Max(s, gf, opts...)), must[*gpu.Array[float64]](t)(gpu.Max(cs, cf, opts...))
				if a, b := toSlice(t, g2), toSlice(t, c2); !slices.Equal(a, b) {
					t.Fatalf("max %s: %v, cpu %v", what, a, b)
				}
				oneOpts := axesOpts(one, keep)
				eqI("argmax "+fmt.Sprint(one), must[*gpu.Array[int64]](t)(gpu.ArgMax(s, gf, oneOpts...)), must[*gpu.Array[int64]](t)(gpu.ArgMax(cs, cf, oneOpts...)))
				eqI("argmin "+fmt.Sprint(one), must[*gpu.Array[int64]](t)(gpu.ArgMin(s, ga, oneOpts...)), must[*gpu.Array[int64]](t)(gpu.ArgMin(cs, ca, oneOpts...)))
				g3, c3 := toSlice(t, must[*gpu.Array[float64]](t)(gpu.Sum[float64](s, gf, opts...))), toSlice(t, must[*gpu.Array[float64]](t)(gpu.Sum[float64](cs, cf, opts...)))
				for i := range g3 {
					if d := math.Abs(g3[i] - c3[i]); d > 1e-12*float64(n) {
						t.Fatalf("sum %s: output %d = %v, cpu %v", what, i, g3[i], c3[i])
					}
				}
			}
		})
	}
}

// TestReduceLarge reduces arrays past 2^31 elements on CUDA (64-bit indexing).
func TestReduceLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("large arrays: not in -short")
	}
	d, err := gpu.OpenBackend("cuda", 0)
	if err != nil {
		t.Skipf("no CUDA device: %v", err)
	}
	const n = 1<<31 + 9
	if free, _, err := d.MemInfo(); err != nil || free < 3*n {
		t.Skipf("not enough device memory (%d free): %v", free, err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ones := must[*gpu.Array[uint8]](t)(gpu.Full[uint8](s, 1, n))
	if v := toSlice(t, must[*gpu.Array[uint64]](t)(gpu.Sum[uint64](s, ones))); v[0] != n {
		t.Fatalf("sum of %d ones = %d", n, v[0])
	}
	ones.Free()
	x := must[*gpu.Array[int8]](t)(gpu.Full[int8](s, 3, n))
	for _, i := range []int{n - 4, 1<<31 + 1} {
		if err := x.Set(bg, 100, i); err != nil {
			t.Fatal(err)
		}
	}
	if v := toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x))); v[0] != 1<<31+1 {
		t.Fatalf("argmax past 2^31 = %d, want %d", v[0], 1<<31+1)
	}
	if v := toSlice(t, must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, x))); v[0] != 3*(n-2)+200 {
		t.Fatalf("sum of int8 past 2^31 = %d", v[0])
	}
	// axes of an array of 2^31+8 elements: [2, 2^30+4], the 100s at row 1, columns
	// 2^30-3 and 2^30+1
	const half = (n - 1) / 2
	x2 := must[*gpu.Array[int8]](t)(x.Slice(gpu.R(0, n-1)))
	x2 = must[*gpu.Array[int8]](t)(x2.Reshape(2, half))
	if v := toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x2, gpu.Axes(1)))); v[0] != 0 || v[1] != 1<<30-3 {
		t.Fatalf("argmax over axis 1 = %v, want [0 %d]", v, 1<<30-3)
	}
	cols := toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, x2, gpu.Axes(0))))
	for c, v := range cols {
		want := int64(0)
		if c == 1<<30-3 || c == 1<<30+1 {
			want = 1
		}
		if v != want {
			t.Fatalf("argmax over axis 0: column %d = %d, want %d", c, v, want)
		}
	}
	sums := toSlice(t, must[*gpu.Array[int64]](t)(gpu.Sum[int64](s, x2, gpu.Axes(1))))
	if sums[0] != 3*half || sums[1] != 3*(half-2)+200 {
		t.Fatalf("sums over axis 1 = %v", sums)
	}
	x.Free()
}

// TestReduceIndex64 runs the 64-bit-index kernels (chosen past 2^31 elements) on small
// arrays, in the simulator and on CUDA.
func TestReduceIndex64(t *testing.T) {
	for _, rd := range redDevices(t) {
		if rd.name == "cpu" {
			continue
		}
		t.Run(rd.name, func(t *testing.T) {
			defer gpu.SetReduceIndex64(rd.d, gpu.SetReduceIndex64(rd.d, true))
			s, err := rd.d.NewStream()
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			index64Cases(t, s)
		})
	}
}

func index64Cases(t *testing.T, s *gpu.Stream) {
	rng := rand.New(rand.NewPCG(17, 18))
	// the simulator splits from 2048 elements here, to test the 64-bit partial passes
	d := s.Device()
	defer gpu.SetReduceSplitMin(d, gpu.SetReduceSplitMin(d, 2048))
	shapes := [][]int{{1000}, {9001}, {33, 70}, {3, 3001}, {3001, 3}, {5, 7, 9}}
	if testenv.Race {
		shapes = [][]int{{1000}, {33, 70}, {5, 7, 9}}
	}
	for _, shape := range shapes {
		n := 1
		for _, v := range shape {
			n *= v
		}
		xs := randVals[float32](rng, n)
		xs[n/2] = float32(math.NaN())
		x := upload(t, s, xs, shape...)
		xt := must[*gpu.Array[float32]](t)(x.Transpose())
		views := []*gpu.Array[float32]{x, xt}

		for _, v := range views {
			vals := logical(xs, v.Shape(), v.Strides(), v.Offset())
			for _, axes := range [][]int{nil, {0}, {-1}} {
				if axes != nil && axes[0] == 0 && len(shape) == 1 {
					continue
				}
				gs := groups(vals, v.Shape(), maskOf(len(shape), axes))
				what := fmt.Sprintf("%v axes %v", v.Shape(), axes)
				checkArg(t, "argmax64 "+what, toSlice(t, must[*gpu.Array[int64]](t)(gpu.ArgMax(s, v, axesOpts(axes, false)...))), nil, gs, false)
				checkMinMax(t, "min64 "+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.Min(s, v, axesOpts(axes, false)...))), gs, true)
				cnt := toSlice(t, must[*gpu.Array[int64]](t)(gpu.Count(s, v, axesOpts(axes, false)...)))
				for o, g := range gs {
					c := 0
					for _, f := range g {
						if f != 0 {
							c++
						}
					}
					if cnt[o] != int64(c) {
						t.Fatalf("count64 %s: %d = %d, want %d", what, o, cnt[o], c)
					}
				}
				mr := toSlice(t, must[*gpu.Array[float64]](t)(gpu.MapReduce[float64](s, "where(isnan(x), 0, x)", gpu.Vars{"x": v}, gpu.OpSum, axesOpts(axes, false)...)))
				clean := make([][]float32, len(gs))
				for o, g := range gs {
					for _, f := range g {
						if f != f {
							f = 0
						}
						clean[o] = append(clean[o], f)
					}
				}
				checkSum(t, "mapreduce64 "+what, mr, clean, false)
			}
		}
		x.Free()
	}
}

// TestReduceSplit runs every operation on shapes large enough for CUDA to split them in
// two passes (partial results, then their combination): whole arrays, long rows and long
// columns, with NaN and ties placed in different splits.
func TestReduceSplit(t *testing.T) {
	t.Run("scratch", testReduceSplit)
	t.Run("buffer", func(t *testing.T) {
		// partial results in a buffer of their own, as large ones are
		defer gpu.SetReducePartialsScratchMax(0)()
		testReduceSplit(t)
	})
}

func testReduceSplit(t *testing.T) {
	forHeavyRedDevices(t, func(t *testing.T, rd redDev, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 22))
		shapes := [][]int{{150001}, {3, 50001}, {50001, 3}}
		if rd.sim {
			// the simulator splits from 4096 elements here, to keep its time down
			defer gpu.SetReduceSplitMin(rd.d, gpu.SetReduceSplitMin(rd.d, 2048))
			shapes = [][]int{{9001}, {3, 3001}, {3001, 3}}
		}
		for _, shape := range shapes {
			n := 1
			for _, v := range shape {
				n *= v
			}
			xs := randVals[float32](rng, n)
			for i := range xs {
				xs[i] = float32(math.Round(float64(xs[i]) * 4)) // many ties
			}
			ps := make([]float32, n)
			for i := range ps {
				ps[i] = float32(1 + rng.NormFloat64()/1000)
			}
			nanx := slices.Clone(xs)
			nanx[n-7], nanx[n/2+1] = float32(math.NaN()), float32(math.NaN())
			bs := make([]bool, n)
			for i := range bs {
				bs[i] = true
			}
			bs[n-2] = false
			fs := make([]bool, n)
			fs[n/3] = true
			x, p, nx := upload(t, s, xs, shape...), upload(t, s, ps, shape...), upload(t, s, nanx, shape...)
			b, f := upload(t, s, bs, shape...), upload(t, s, fs, shape...)
			for _, axes := range [][]int{nil, {0}, {-1}} {
				if len(shape) == 1 && axes != nil {
					continue
				}
				o := axesOpts(axes, false)
				mask := maskOf(len(shape), axes)
				what := fmt.Sprintf(" %v %v", shape, axes)
				gs := groups(xs, shape, mask)
				checkSum(t, "sum"+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.Sum[float32](s, x, o...))), gs, false)
				checkSum(t, "mean"+what, toSlice(t, must[*gpu.Array[float64]](t)(gpu.Mean[float64](s, x, o...))), gs, true)
				sq := make([]float64, n)
				for i, v := range xs {
					sq[i] = float64(v * v)
				}
				checkSum(t, "x*x"+what, toSlice(t, must[*gpu.Array[float64]](t)(gpu.MapReduce[float64](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum, o...))), groups(sq, shape, mask), false)
				pr := toSlice(t, must[*gpu.Array[float64]](t)(gpu.Prod[float64](s, p, o...)))
				for oi, g := range groups(ps, shape, mask) {
					want := 1.0
					for _, v := range g {
						want *= float64(v)
					}
					if math.Abs(pr[oi]-want) > 1e-9*math.Abs(want) {
						t.Fatalf("prod%s: output %d = %v, want %v", what, oi, pr[oi], want)
					}
				}
				ngs := groups(nanx, shape, mask)
				for _, arr := range []struct {
					a  *gpu.Array[float32]
					gs [][]float32
				}{{x, gs}, {nx, ngs}} {
					checkMinMax(t, "min"+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.Min(s, arr.a, o...))), arr.gs, true)
					checkMinMax(t, "max"+what, toSlice(t, must[*gpu.Array[float32]](t)(gpu.Max(s, arr.a, o...))), arr.gs, false)
					if axes == nil || len(axes) == 1 {
						v, i, err := gpu.FindMin(s, arr.a, o...)
						if err != nil {
							t.Fatal(err)
						}
						checkArg(t, "findmin"+what, toSlice(t, i), toSlice(t, v), arr.gs, true)
						v, i, err = gpu.FindMax(s, arr.a, o...)
						if err != nil {
							t.Fatal(err)
						}
						checkArg(t, "findmax"+what, toSlice(t, i), toSlice(t, v), arr.gs, false)
					}
				}
				all := toSlice(t, must[*gpu.Array[bool]](t)(gpu.All(s, b, o...)))
				for oi, g := range groups(bs, shape, mask) {
					if want := !slices.Contains(g, false); all[oi] != want {
						t.Fatalf("all%s: output %d = %v", what, oi, all[oi])
					}
				}
				anys := toSlice(t, must[*gpu.Array[bool]](t)(gpu.Any(s, f, o...)))
				cnt := toSlice(t, must[*gpu.Array[int64]](t)(gpu.Count(s, f, o...)))
				for oi, g := range groups(fs, shape, mask) {
					c := 0
					for _, v := range g {
						if v {
							c++
						}
					}
					if anys[oi] != (c > 0) || cnt[oi] != int64(c) {
						t.Fatalf("any/count%s: output %d = %v %d, want %d", what, oi, anys[oi], cnt[oi], c)
					}
				}
			}
			for _, a := range []interface{ Free() error }{x, p, nx, b, f} {
				a.Free()
			}
		}
	})
}

// An empty slice of an empty array: the reductions of no elements still give their
// identity (NumPy: np.zeros((0, 12))[0:0:2, 11::-3].sum() is 0.0), though a start along
// a non-empty axis lies past the (empty) buffer.
func TestReduceEmptySliceOfEmptyBuffer(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	a, err := gpu.Zeros[float32](s, 0, 12)
	if err != nil {
		t.Fatal(err)
	}
	v, err := a.Slice(gpu.R(0, 0, 2), gpu.Range{Start: 11, Stop: gpu.End, Step: -3})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(v.Shape(), []int{0, 4}) {
		t.Fatalf("shape %v", v.Shape())
	}
	sum, err := gpu.Sum[float64](s, v)
	if err != nil {
		t.Fatalf("Sum: %v", err)
	}
	if x, err := sum.At(ctx); err != nil || x != 0 {
		t.Errorf("Sum = %v, %v; want 0", x, err)
	}
	all, err := gpu.All(s, v, gpu.Axes(0))
	if err != nil {
		t.Fatalf("All: %v", err)
	}
	if x, err := all.ToSlice(ctx); err != nil || !slices.Equal(x, []bool{true, true, true, true}) {
		t.Errorf("All over axis 0 = %v, %v", x, err)
	}
	mean, err := gpu.Mean[float64](s, v, gpu.Axes(0))
	if err != nil {
		t.Fatalf("Mean: %v", err)
	}
	if x, err := mean.At(ctx, 2); err != nil || !math.IsNaN(x) {
		t.Errorf("Mean = %v, %v; want NaN", x, err)
	}
	if _, err := gpu.Max(s, v, gpu.Axes(0)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Max over an empty axis: %v; want ErrInvalidValue", err)
	}
}

// MapReduce over operands that broadcast to more elements than an int counts is refused,
// not reduced over a wrapped count (2^40 x 2^40 = 2^80 elements: the sum was 0).
func TestMapReduceBroadcastOverflow(t *testing.T) {
	s := freshStream(t)
	one, _ := gpu.FromSlice(s, []float64{1})
	a, err := one.BroadcastTo(1<<40, 1)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := one.BroadcastTo(1, 1<<40)
	for _, op := range []gpu.Op{gpu.OpSum, gpu.OpMax} {
		if r, err := gpu.MapReduce[float64](s, "a*b", gpu.Vars{"a": a, "b": b}, op); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("MapReduce %s over 2^80 elements: %v, %v; want ErrInvalidValue", op, r, err)
		}
	}
}

// TestMapReduceUnusedScalars: scalars in Vars that the expression doesn't read are no
// kernel arguments (they used to be passed all the same, and the launch failed with "N
// arguments, want M"), wherever they sort among the names; the scalars it reads keep
// their values.
func TestMapReduceUnusedScalars(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		const n = 1000
		xh := randF32(n)
		x := mustArr[float32](t)(gpu.FromSlice(s, xh, n))
		defer x.Free()
		yh := randF32(n)
		y := mustArr[float32](t)(gpu.FromSlice(s, yh, n))
		defer y.Free()
		a, b := rand.Float64()+0.5, rand.Float64()-2
		for _, c := range []struct {
			src  string
			vars gpu.Vars
			want func(x, y float64) float64
		}{
			{"x", gpu.Vars{"x": x, "a": a}, func(x, y float64) float64 { return x }},
			{"x", gpu.Vars{"A": a, "x": x, "z": b, "y": y}, func(x, y float64) float64 { return x }},
			{"b*x", gpu.Vars{"a": a, "b": b, "c": 3.0, "x": x}, func(x, y float64) float64 { return b * x }},
			{"a*x + c", gpu.Vars{"a": a, "b": b, "c": 3.0, "x": x, "y": y}, func(x, y float64) float64 { return a*x + 3 }},
			{"maximum(y - b, 0)", gpu.Vars{"a": a, "b": b, "x": x, "y": y}, func(x, y float64) float64 { return max(y-b, 0) }},
		} {
			r, err := gpu.MapReduce[float64](s, c.src, c.vars, gpu.OpSum)
			if err != nil {
				t.Fatalf("%s %v: %v", c.src, c.vars, err)
			}
			got, err := r.At(bg)
			r.Free()
			if err != nil {
				t.Fatalf("%s %v: %v", c.src, c.vars, err)
			}
			want := 0.0
			for i := range n {
				// float32 arithmetic, as the expression computes it.
				want += float64(float32(c.want(float64(xh[i]), float64(yh[i]))))
			}
			if math.Abs(got-want) > 1e-4*math.Max(1, math.Abs(want)) {
				t.Errorf("%s with %d vars: %v, want %v", c.src, len(c.vars), got, want)
			}
		}
		if got := toSlice(t, x); !slices.Equal(got, xh) {
			t.Errorf("the operand changed")
		}
	})
}
