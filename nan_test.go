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
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) { run(t, s) })
	t.Run("sim", func(t *testing.T) {
		if testing.Short() {
			t.Skip("the simulator is slow")
		}
		_, s := simStream(t)
		run(t, s)
	})
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
