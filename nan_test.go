package gpu_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
)

// The NaN policy (package doc, "NaN"): a NaN that an operation computes is the canonical
// NaN, on every backend; FindMin and FindMax return the element itself. These tests put
// NaNs with payloads and either sign through every operation of the min/max family,
// sums and the arg operations, and check the result's bits.

// nanBits returns the bits of v (float32 or float64), zero-extended.
func nanBits[T float32 | float64](v T) uint64 {
	if unsafe.Sizeof(v) == 4 {
		return uint64(math.Float32bits(float32(v)))
	}
	return math.Float64bits(float64(v))
}

func nanFromBits[T float32 | float64](b uint64) T {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return T(math.Float32frombits(uint32(b)))
	}
	return T(math.Float64frombits(b))
}

// nanPayloads returns NaNs with payloads of T: negative quiet with a payload (the
// issue's 0xffc00123), positive quiet, a signaling one and the negative default NaN.
func nanPayloads[T float32 | float64]() []uint64 {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return []uint64{0xffc00123, 0x7fc00001, 0x7f800001, 0xffc00000}
	}
	return []uint64{0xfff8000000000123, 0x7ff8000000000001, 0x7ff0000000000001, 0xfff8000000000000}
}

func canonNaN[T float32 | float64]() uint64 {
	var z T
	if unsafe.Sizeof(z) == 4 {
		return 0x7fffffff
	}
	return 0x7fffffffffffffff
}

// TestNaNPolicy runs the NaN cases on every device (the CPU backend, CUDA where there is
// a GPU) and on the CUDA path of the PTX simulator (simdev), with one answer for all:
// the package documentation's.
func TestNaNPolicy(t *testing.T) {
	both := func(t *testing.T, s *gpu.Stream, n int) {
		t.Run("float32", func(t *testing.T) { nanPolicy[float32](t, s, n) })
		t.Run("float64", func(t *testing.T) { nanPolicy[float64](t, s, n) })
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) { both(t, s, 300007) })
	t.Run("sim", func(t *testing.T) {
		if testing.Short() {
			t.Skip("the simulator is slow")
		}
		d, s := simStream(t)
		// A shorter long array, split across blocks all the same: the reductions from
		// 2^12 elements (the scans take 8192 elements a block).
		tu := d.Tuning()
		tu.ReduceSplitMin = 1 << 12
		old, err := d.SetTuning(tu)
		if err != nil {
			t.Fatal(err)
		}
		defer d.SetTuning(old)
		both(t, s, 40009)
	})
}

// nanPolicy runs the cases on s, the long ones over n elements.
func nanPolicy[T float32 | float64](t *testing.T, s *gpu.Stream, n int) {
	canon := canonNaN[T]()
	check := func(what string, a *gpu.Array[T], err error, want ...uint64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := toSlice(t, a)
		a.Free()
		if len(got) != len(want) {
			t.Fatalf("%s: %d elements, want %d", what, len(got), len(want))
		}
		for i, g := range got {
			if nanBits(g) != want[i] {
				t.Errorf("%s[%d] = %#x, want %#x", what, i, nanBits(g), want[i])
			}
		}
	}
	checkIdx := func(what string, a *gpu.Array[int64], err error, want int64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if got := toSlice(t, a); len(got) != 1 || got[0] != want {
			t.Errorf("%s = %v, want [%d]", what, got, want)
		}
		a.Free()
	}
	b := func(v T) uint64 { return nanBits(v) }
	for _, nb := range nanPayloads[T]() {
		name := fmt.Sprintf("%#x", nb)
		nan := nanFromBits[T](nb)
		x := mustArr[T](t)(gpu.FromSlice(s, []T{1, nan, 2}))
		y := mustArr[T](t)(gpu.FromSlice(s, []T{3, 0, 1}))
		z := mustArr[T](t)(gpu.FromSlice(s, []T{nan, nan, 5}))
		m, err := gpu.Max(s, x)
		check(name+" Max", m, err, canon)
		m, err = gpu.Min(s, x)
		check(name+" Min", m, err, canon)
		m, err = gpu.MapReduce[T](s, "x", gpu.Vars{"x": x}, gpu.OpMax)
		check(name+" MapReduce max", m, err, canon)
		m, err = gpu.CumMax(s, x, 0)
		check(name+" CumMax", m, err, b(1), canon, canon)
		m, err = gpu.CumMin(s, x, 0)
		check(name+" CumMin", m, err, b(1), canon, canon)
		m, err = gpu.Accumulate[T](s, x, "maximum(a, b)", 0)
		check(name+" Accumulate maximum", m, err, b(1), canon, canon)
		m, err = gpu.Maximum(s, x, y)
		check(name+" Maximum", m, err, b(3), canon, b(2))
		m, err = gpu.Maximum(s, y, x)
		check(name+" Maximum(y, x)", m, err, b(3), canon, b(2))
		m, err = gpu.Minimum(s, x, y)
		check(name+" Minimum", m, err, b(1), canon, b(1))
		m, err = gpu.Minimum(s, x, z)
		check(name+" Minimum of NaNs", m, err, canon, canon, b(2))
		m, err = gpu.Eval[T](s, "fmax(x, y)", gpu.Vars{"x": x, "y": z})
		check(name+" fmax", m, err, b(1), canon, b(5))
		m, err = gpu.Eval[T](s, "clip(x, 0, 1.5)", gpu.Vars{"x": x})
		check(name+" clip", m, err, b(1), canon, b(1.5))
		m, err = gpu.Add(s, x, y)
		check(name+" Add", m, err, b(4), canon, b(3))
		m, err = gpu.Sum[T](s, x)
		check(name+" Sum", m, err, canon)
		m, err = gpu.CumSum[T](s, x, 0)
		check(name+" CumSum", m, err, b(1), canon, canon)
		// The row statistics: a NaN in a row makes every output of it NaN.
		m, err = gpu.Softmax(s, x, 0)
		check(name+" Softmax", m, err, canon, canon, canon)
		m, err = gpu.LogSumExp[T](s, x)
		check(name+" LogSumExp", m, err, canon)
		m, err = gpu.Var[T](s, x)
		check(name+" Var", m, err, canon)
		// Moves and sign-bit operations keep the NaN's bits.
		m, err = gpu.Eval[T](s, "where(x > 1.5, y, x)", gpu.Vars{"x": x, "y": y})
		check(name+" where", m, err, b(1), nb, b(1))
		i, err := gpu.ArgMax(s, x)
		checkIdx(name+" ArgMax", i, err, 1)
		i, err = gpu.ArgMin(s, x)
		checkIdx(name+" ArgMin", i, err, 1)
		v, i, err := gpu.FindMax(s, z)
		check(name+" FindMax value", v, err, nb)
		checkIdx(name+" FindMax index", i, err, 0)
		v, i, err = gpu.FindMin(s, x)
		check(name+" FindMin value", v, err, nb)
		checkIdx(name+" FindMin index", i, err, 1)
		x.Free()
		y.Free()
		z.Free()
	}

	// Signed zeros: -0 below +0 for min and max, whatever the order.
	negz := T(math.Copysign(0, -1))
	zs := mustArr[T](t)(gpu.FromSlice(s, []T{0, negz, 0}))
	zr := mustArr[T](t)(gpu.FromSlice(s, []T{negz, 0, negz}))
	m, err := gpu.Max(s, zs)
	check("Max(0, -0, 0)", m, err, 0)
	m, err = gpu.Min(s, zs)
	check("Min(0, -0, 0)", m, err, b(negz))
	m, err = gpu.Minimum(s, zs, zr)
	check("Minimum(±0)", m, err, b(negz), b(negz), b(negz))
	m, err = gpu.Maximum(s, zs, zr)
	check("Maximum(±0)", m, err, 0, 0, 0)
	zs.Free()
	zr.Free()

	// Long arrays: NaNs with different payloads far apart, so that on CUDA many blocks
	// (and the second pass) combine them in an order of their own.
	rng := rand.New(rand.NewPCG(7, uint64(unsafe.Sizeof(T(0)))))
	xs := make([]T, n)
	for i := range xs {
		xs[i] = T(rng.NormFloat64())
	}
	payloads := nanPayloads[T]()
	first := n
	for k := 0; k < 5; k++ {
		p := rng.IntN(n)
		xs[p] = nanFromBits[T](payloads[k%len(payloads)])
		first = min(first, p)
	}
	a := mustArr[T](t)(gpu.FromSlice(s, xs))
	defer a.Free()
	m, err = gpu.Max(s, a)
	check("long Max", m, err, canon)
	m, err = gpu.Min(s, a)
	check("long Min", m, err, canon)
	m, err = gpu.Sum[T](s, a)
	check("long Sum", m, err, canon)
	i, err := gpu.ArgMax(s, a)
	checkIdx("long ArgMax", i, err, int64(first))
	v, i, err := gpu.FindMin(s, a)
	check("long FindMin value", v, err, nanBits(xs[first]))
	checkIdx("long FindMin index", i, err, int64(first))
	for _, op := range []struct {
		name string
		f    func(*gpu.Stream, *gpu.Array[T], int, ...gpu.ScanOption) (*gpu.Array[T], error)
	}{{"CumMax", gpu.CumMax[T]}, {"CumMin", gpu.CumMin[T]}} {
		c, err := op.f(s, a, 0)
		if err != nil {
			t.Fatal(err)
		}
		got := toSlice(t, c)
		c.Free()
		for j := first; j < n; j++ {
			if nanBits(got[j]) != canon {
				t.Fatalf("long %s[%d] = %#x, want %#x (first NaN at %d)", op.name, j, nanBits(got[j]), canon, first)
			}
		}
		if first > 0 && got[first-1] != got[first-1] {
			t.Fatalf("long %s[%d] is NaN before the first NaN", op.name, first-1)
		}
	}
}

// TestNaNPolicyHalf: sums, products and means of float16 and bfloat16 arrays
// accumulate in float32 and round once; a NaN among the operands gives the canonical
// 0x7fff, whichever NaN it was and in whichever order (on the CPU the float32
// accumulator kept the first NaN's payload, which the rounding kept too).
func TestNaNPolicyHalf(t *testing.T) {
	run := func(t *testing.T, s *gpu.Stream) {
		t.Run("float16", func(t *testing.T) { nanPolicyHalf[gpu.Float16](t, s, []uint16{0xfe01, 0x7e02, 0x7c01}, 0x3c00) })
		t.Run("bfloat16", func(t *testing.T) { nanPolicyHalf[gpu.BFloat16](t, s, []uint16{0xffc1, 0x7fc2, 0x7f81}, 0x3f80) })
	}
	forDevicesAndSim(t, true, run)
}

// nanPolicyHalf checks SumOf, ProdOf and MeanOf, whole and along an axis, of arrays of
// ones (bits one) holding the NaNs nans in both orders, and that FindMax's value keeps
// the element's bits.
func nanPolicyHalf[T interface {
	gpu.HalfFloat
	Bits() uint16
}](t *testing.T, s *gpu.Stream, nans []uint16, one uint16) {
	const canon = 0x7fff
	bitsOf := func(what string, a *gpu.Array[T], err error) []uint16 {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := toSlice(t, a)
		a.Free()
		out := make([]uint16, len(got))
		for i, g := range got {
			out[i] = g.Bits()
		}
		return out
	}
	for _, order := range [][]uint16{nans, {nans[1], nans[0], nans[2]}, {nans[2], nans[1], nans[0]}} {
		// Two rows: [1 NaN_a 1 NaN_b 1 NaN_c] and the same reversed.
		var xs []uint16
		for _, nb := range order {
			xs = append(xs, one, nb)
		}
		for i := len(xs) - 1; i >= 0; i-- {
			xs = append(xs, xs[i])
		}
		a := mustArr[T](t)(gpu.FromBits[T](s, xs, 2, len(order)*2))
		for _, op := range []struct {
			name string
			f    func(*gpu.Stream, *gpu.Array[T], ...gpu.ReduceOption) (*gpu.Array[T], error)
		}{{"SumOf", gpu.SumOf[T]}, {"ProdOf", gpu.ProdOf[T]}, {"MeanOf", gpu.MeanOf[T]}} {
			r, err := op.f(s, a)
			if got := bitsOf(op.name, r, err); len(got) != 1 || got[0] != canon {
				t.Errorf("%s of %#x: %#x, want [%#x]", op.name, xs, got, canon)
			}
			r, err = op.f(s, a, gpu.Axes(1))
			if got := bitsOf(op.name+" axis 1", r, err); len(got) != 2 || got[0] != canon || got[1] != canon {
				t.Errorf("%s along axis 1 of %#x: %#x, want [%#x %#x]", op.name, xs, got, canon, canon)
			}
		}
		for _, fm := range []struct {
			name string
			f    func(*gpu.Stream, *gpu.Array[T], ...gpu.ReduceOption) (*gpu.Array[T], *gpu.Array[int64], error)
		}{{"FindMax", gpu.FindMax[T]}, {"FindMin", gpu.FindMin[T]}} {
			v, i, err := fm.f(s, a)
			if err != nil {
				t.Fatal(err)
			}
			i.Free()
			if got := bitsOf(fm.name, v, nil); len(got) != 1 || got[0] != order[0] {
				t.Errorf("%s's value of %#x: %#x, want the first NaN [%#x]", fm.name, xs, got, order[0])
			}
		}
		a.Free()
	}
	// A long array (several blocks, the second pass): FindMax's value is the first NaN.
	rng := rand.New(rand.NewPCG(9, uint64(nans[0])))
	xs := make([]uint16, 100003)
	for i := range xs {
		xs[i] = one + uint16(rng.IntN(64))
	}
	first := len(xs)
	for k, nb := range nans {
		p := rng.IntN(len(xs))
		xs[p] = nb
		if p < first || k == 0 {
			first = min(first, p)
		}
	}
	a := mustArr[T](t)(gpu.FromBits[T](s, xs))
	defer a.Free()
	v, i, err := gpu.FindMax(s, a)
	if err != nil {
		t.Fatal(err)
	}
	i.Free()
	if got := bitsOf("long FindMax", v, nil); len(got) != 1 || got[0] != xs[first] {
		t.Errorf("long FindMax's value: %#x, want the first NaN's bits [%#x]", got, xs[first])
	}
}

// TestScanNaNFirst: a NaN that starts a scanned row, which no combination meets before
// it is stored (the first element of an inclusive scan, or a row of length 1), or that
// ExclusiveFrom starts every row with, gives the canonical NaN as a NaN met later does
// (package doc, "NaN"; they passed through with their payload and sign). Fresh random
// rows with NaNs of every payload first, in the middle or not at all, along every axis
// of 3-D arrays (the row kernel, with interleaved columns too, and the column kernel),
// every scan operator and mode, float32, float64 (and float32 into float64), float16
// and bfloat16 (accumulated in float32, rounded to 0x7fff; and float16 into float32);
// on every device, and on the CUDA path of the PTX simulator under each row-scan
// configuration (the staged outputs included). Integer scans move their first element
// unchanged.
func TestScanNaNFirst(t *testing.T) {
	run := func(t *testing.T, s *gpu.Stream) {
		f32 := scanNaNKind{canon: 0x7fffffff, nans: nanPayloads[float32](), lo: 0x3f000000, hi: 0x3fbfffff,
			isNaN: func(b uint64) bool { return b&0x7fffffff > 0x7f800000 }}
		f64 := scanNaNKind{canon: 0x7fffffffffffffff, nans: nanPayloads[float64](), lo: 0x3fe0000000000000, hi: 0x3ff7ffffffffffff,
			isNaN: func(b uint64) bool { return b&(1<<63-1) > 0x7ff0000000000000 }}
		f16 := scanNaNKind{canon: 0x7fff, nans: []uint64{0xfe01, 0x7e02, 0x7c01, 0xfe00}, lo: 0x3800, hi: 0x3dff,
			isNaN: func(b uint64) bool { return b&0x7fff > 0x7c00 }}
		bf16 := scanNaNKind{canon: 0x7fff, nans: []uint64{0xffc1, 0x7fc2, 0x7f81, 0xffc0}, lo: 0x3f00, hi: 0x3fbf,
			isNaN: func(b uint64) bool { return b&0x7fff > 0x7f80 }}
		t.Run("float32", func(t *testing.T) { scanNaNFirst[float32, float32](t, s, f32, f32) })
		t.Run("float64", func(t *testing.T) { scanNaNFirst[float64, float64](t, s, f64, f64) })
		t.Run("float32-float64", func(t *testing.T) { scanNaNFirst[float64, float32](t, s, f32, f64) })
		t.Run("float16", func(t *testing.T) { scanNaNFirst[gpu.Float16, gpu.Float16](t, s, f16, f16) })
		t.Run("bfloat16", func(t *testing.T) { scanNaNFirst[gpu.BFloat16, gpu.BFloat16](t, s, bf16, bf16) })
		t.Run("float16-float32", func(t *testing.T) { scanNaNFirst[float32, gpu.Float16](t, s, f16, f32) })
		t.Run("int32", func(t *testing.T) { scanNaNFirstInt(t, s) })
		t.Run("expression", func(t *testing.T) { scanNaNFirstExpr(t, s) })
	}
	forDevicesAndSim(t, true, run)
}

// scanNaNKind describes a float type's bits for TestScanNaNFirst.
type scanNaNKind struct {
	canon  uint64   // the canonical NaN
	nans   []uint64 // NaNs with payloads and either sign
	lo, hi uint64   // the numbers' bits: [lo, hi] holds values in [0.5, 1.5]
	isNaN  func(uint64) bool
}

// elemBits returns v's bits, zero-extended; elemFromBits is its inverse.
func elemBits[T gpu.Elem](v T) uint64 {
	switch unsafe.Sizeof(v) {
	case 2:
		return uint64(*(*uint16)(unsafe.Pointer(&v)))
	case 4:
		return uint64(*(*uint32)(unsafe.Pointer(&v)))
	}
	return *(*uint64)(unsafe.Pointer(&v))
}

func elemFromBits[T gpu.Elem](b uint64) T {
	var v T
	switch unsafe.Sizeof(v) {
	case 2:
		*(*uint16)(unsafe.Pointer(&v)) = uint16(b)
	case 4:
		*(*uint32)(unsafe.Pointer(&v)) = uint32(b)
	default:
		*(*uint64)(unsafe.Pointer(&v)) = b
	}
	return v
}

// scanNaNShapes are TestScanNaNFirst's arrays: along each axis, rows of the row kernel
// (a last axis of 600 and 400, three interleaved columns of 130), of the column kernel,
// and of length 1.
var scanNaNShapes = [][]int{{2, 600, 1}, {3, 1, 5}, {2, 130, 3}, {1, 7, 400}, {5, 2, 40}}

// scanNaNFirst scans T arrays into R (its kind out; in is T's) and checks the NaNs'
// bits and places.
func scanNaNFirst[R, T gpu.Elem](t *testing.T, s *gpu.Stream, in, out scanNaNKind) {
	d := s.Device()
	rng := rand.New(rand.NewPCG(uint64(in.canon), uint64(out.canon)))
	nanInit := math.Float64frombits(0xfff8000000000123) // ExclusiveFrom's NaN, with a payload
	ops := []gpu.Op{gpu.OpSum, gpu.OpProd, gpu.OpMax, gpu.OpMin}
	configs := scTestConfigs(d)
	defer gpu.SetScanConfig(d, gpu.SetScanConfig(d, configs[0]))
	for _, shape := range scanNaNShapes {
		for axis := range shape {
			outer, n, inner := 1, shape[axis], 1
			for _, v := range shape[:axis] {
				outer *= v
			}
			for _, v := range shape[axis+1:] {
				inner *= v
			}
			// Fresh rows: a NaN first, in the middle, or none (a row of length 1
			// holds a NaN alone or none); first[row] is the first NaN's index.
			xs := make([]T, outer*n*inner)
			for i := range xs {
				xs[i] = elemFromBits[T](in.lo + rng.Uint64N(in.hi-in.lo+1))
			}
			first := make([]int, outer*inner)
			for row := range first {
				o, j := row/inner, row%inner
				first[row] = n
				switch rng.IntN(3) {
				case 0:
					continue
				case 1:
					first[row] = 0
				default:
					first[row] = rng.IntN(n)
				}
				for _, k := range []int{first[row], first[row] + rng.IntN(n-first[row])} {
					xs[(o*n+k)*inner+j] = elemFromBits[T](in.nans[rng.IntN(len(in.nans))])
				}
			}
			a := mustArr[T](t)(gpu.FromSlice(s, xs, shape...))
			for _, op := range ops {
				for mode, opts := range [][]gpu.ScanOption{nil, {gpu.Exclusive()}, {gpu.ExclusiveFrom(nanInit)}} {
					cs := configs
					if mode > 0 {
						cs = cs[:1]
					}
					for _, c := range cs {
						gpu.SetScanConfig(d, c)
						what := fmt.Sprintf("%v %+v Accumulate[%T](%T %v, %q, axis %d) mode %d", d, c, *new(R), *new(T), shape, op, axis, mode)
						r, err := gpu.Accumulate[R](s, a, op, axis, opts...)
						if err != nil {
							t.Fatalf("%s: %v", what, err)
						}
						got := toSlice(t, r)
						r.Free()
						for i, v := range got {
							o, k, j := i/(n*inner), i/inner%n, i%inner
							f := first[o*inner+j]
							wantNaN := [3]bool{k >= f, k > f, true}[mode]
							b := elemBits(v)
							switch {
							case wantNaN && b != out.canon:
								t.Fatalf("%s: element %d (row %d, index %d; first NaN at %d, %#x) = %#x, want the canonical NaN %#x",
									what, i, o*inner+j, k, f, elemBits(xs[(o*n+f)*inner+j]), b, out.canon)
							case !wantNaN && out.isNaN(b):
								t.Fatalf("%s: element %d (row %d, index %d; first NaN at %d) = NaN %#x, want a number", what, i, o*inner+j, k, f, b)
							}
						}
					}
				}
			}
			a.Free()
		}
	}
}

// scanNaNFirstInt: an int32 with a NaN's bits starts the rows of integer scans, which
// store it unchanged (the canonicalization is the float scans').
func scanNaNFirstInt(t *testing.T, s *gpu.Stream) {
	v := int32(-0x3fffff) // 0xffc00001
	xs := []int32{v, 3, v, 1, v, -5}
	a := mustArr[int32](t)(gpu.FromSlice(s, xs, 2, 3, 1))
	defer a.Free()
	for axis, want := range map[int][]int32{
		0: {v, 3, v, 1, 3, -5}, // CumMax along axis 0: rows of 2
		1: {v, 3, 3, 1, 1, 1},  // along axis 1: rows of 3
		2: {v, 3, v, 1, v, -5}, // along axis 2: rows of 1
	} {
		for _, op := range []gpu.Op{gpu.OpMax, gpu.OpMin, gpu.OpSum} {
			r, err := gpu.Accumulate[int32](s, a, op, axis)
			if err != nil {
				t.Fatal(err)
			}
			got := toSlice(t, r)
			r.Free()
			for i, g := range got {
				first := i == 0 || axis == 2 || axis == 0 && i < 3 || axis == 1 && i%3 == 0
				if first && g != xs[i] {
					t.Errorf("int32 Accumulate(%q) along axis %d: element %d = %#x, want the element %#x", op, axis, i, uint32(g), uint32(xs[i]))
				}
				if op == gpu.OpMax && g != want[i] {
					t.Errorf("int32 CumMax along axis %d: %v, want %v", axis, got, want)
					break
				}
			}
		}
	}
}

// scanNaNFirstExpr: an expression operator's first element is the element itself, its
// NaN bits kept (Accumulate's documentation), as the projection "b" keeps every later
// one; ExclusiveFrom's NaN init too.
func scanNaNFirstExpr(t *testing.T, s *gpu.Stream) {
	nb := uint64(0xffc00001)
	x := mustArr[float32](t)(gpu.FromSlice(s, []float32{math.Float32frombits(uint32(nb)), 1, math.Float32frombits(0x7fc00002)}))
	defer x.Free()
	check := func(what string, r *gpu.Array[float32], err error, want ...uint64) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		got := toSlice(t, r)
		r.Free()
		for i, g := range got {
			if nanBits(g) != want[i] {
				t.Errorf("%s[%d] = %#x, want %#x", what, i, nanBits(g), want[i])
			}
		}
	}
	r, err := gpu.Accumulate[float32](s, x, "b", 0)
	check(`Accumulate "b"`, r, err, nb, nanBits[float32](1), 0x7fc00002)
	r, err = gpu.Accumulate[float32](s, x, "maximum(b, a)", 0)
	check(`Accumulate "maximum(b, a)"`, r, err, nb, 0x7fffffff, 0x7fffffff)
	r, err = gpu.Accumulate[float32](s, x, "a", 0, gpu.ExclusiveFrom(math.Float64frombits(0xfff8000000000000)))
	check(`Accumulate "a" from -NaN`, r, err, 0xffc00000, 0xffc00000, 0xffc00000)
}
