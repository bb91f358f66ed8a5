package gpu_test

// Half precision: every operation on float16 and bfloat16 arrays, on every device (the
// CPU, and CUDA device 0 when there is one), against a float64 reference rounded once to
// the format, and bit for bit between the CPU and CUDA for elementwise operations,
// casts and random numbers (NaNs as NaNs of the same sign: payloads are the device's).

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/half"
	"github.com/go-gpu/gpu/internal/testenv"
)

// hf returns f rounded once to T.
func hf[T gpu.HalfFloat](f float64) T {
	var z T
	if _, ok := any(z).(gpu.Float16); ok {
		return T(half.NewFloat16(f))
	}
	return T(half.NewBFloat16(f))
}

// hv returns the value of x.
func hv[T gpu.HalfFloat](x T) float64 {
	if v, ok := any(x).(gpu.Float16); ok {
		return v.Float64()
	}
	return any(x).(gpu.BFloat16).Float64()
}

func isF16[T gpu.HalfFloat]() bool {
	var z T
	_, ok := any(z).(gpu.Float16)
	return ok
}

// hulp returns the spacing of T's values at |v| (its subnormal spacing below the normal
// range).
func hulp[T gpu.HalfFloat](v float64) float64 {
	mant, emin := 10, -14
	if !isF16[T]() {
		mant, emin = 7, -126
	}
	_, e := math.Frexp(math.Abs(v))
	return math.Ldexp(1, max(e-1, emin)-mant)
}

// halfSpecials are values every test includes: NaN, ±Inf, ±0, the smallest subnormal,
// the largest finite value, 1 and its neighbours.
func halfSpecials[T gpu.HalfFloat]() []T {
	maxF, sub := 65504.0, 0x1p-24
	if !isF16[T]() {
		maxF, sub = hv(T(0x7f7f)), 0x1p-133
	}
	out := []T{}
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), sub, -sub,
		maxF, -maxF, 1, -1, 1 + hulp[T](1), 1 - hulp[T](1)/2, 0.5, 3, 100} {
		out = append(out, hf[T](f))
	}
	return out
}

// halfRand returns n values: normal samples at mixed scales, with the specials spread
// through.
func halfRand[T gpu.HalfFloat](r *rand.Rand, n int, specials bool) []T {
	out := make([]T, n)
	for i := range out {
		out[i] = hf[T](r.NormFloat64() * math.Ldexp(1, r.IntN(8)-3))
	}
	if specials {
		sp := halfSpecials[T]()
		for i := range out {
			if r.IntN(16) == 0 {
				out[i] = sp[r.IntN(len(sp))]
			}
		}
	}
	return out
}

// sameHalf reports whether a and b are the same value (NaNs: both NaN with one sign).
func sameHalf[T gpu.HalfFloat](a, b T) bool {
	if math.IsNaN(hv(a)) || math.IsNaN(hv(b)) {
		return math.IsNaN(hv(a)) && math.IsNaN(hv(b)) && a&0x8000 == b&0x8000
	}
	return a == b
}

// results collects, per test case, the first device's output, which the next devices
// must reproduce bit for bit.
type results map[string][]uint16

func (r results) check(t *testing.T, d *gpu.Device, key string, got []uint16, nanAny bool) {
	t.Helper()
	first, ok := r[key]
	if !ok {
		r[key] = got
		return
	}
	for i := range got {
		a, b := got[i], first[i]
		if a == b {
			continue
		}
		nanA, nanB := a&0x7fff > 0x7c00, b&0x7fff > 0x7c00
		if len(key) > 0 && key[0] == 'b' {
			nanA, nanB = a&0x7fff > 0x7f80, b&0x7fff > 0x7f80
		}
		if nanA && nanB && (nanAny || a&0x8000 == b&0x8000) {
			continue
		}
		t.Fatalf("%s: element %d on %s is %#04x, on the first device %#04x", key, i, d.Backend(), a, b)
	}
}

func halfBits[T gpu.HalfFloat](v []T) []uint16 {
	out := make([]uint16, len(v))
	for i, x := range v {
		out[i] = uint16(x)
	}
	return out
}

func typeName[T gpu.HalfFloat]() string {
	if isF16[T]() {
		return "float16"
	}
	return "bfloat16"
}

func TestHalfConstruct(t *testing.T) {
	testHalfConstruct[gpu.Float16](t)
	testHalfConstruct[gpu.BFloat16](t)
}

func testHalfConstruct[T gpu.HalfFloat](t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		name := typeName[T]()
		if e := mustArr[T](t)(gpu.Empty[T](s, 2, 3)); e.DType().String() != name || fmt.Sprintf("%#v", e) != fmt.Sprintf("Array[%s](2, 3) on %s:0", name, d.Backend()) {
			t.Errorf("Empty: %#v, dtype %v", e, e.DType())
		}
		for _, n := range []int{0, 1, 2, 31, 33, 257, 1025, 1<<16 + 3} {
			z := toSlice(t, mustArr[T](t)(gpu.Zeros[T](s, n)))
			o := toSlice(t, mustArr[T](t)(gpu.Ones[T](s, n)))
			f := toSlice(t, mustArr[T](t)(gpu.Full(s, hf[T](-2.5), n)))
			for i := 0; i < n; i++ {
				if z[i] != 0 || hv(o[i]) != 1 || hv(f[i]) != -2.5 {
					t.Fatalf("n=%d element %d: zeros %v, ones %v, full %v", n, i, z[i], o[i], f[i])
				}
			}
		}
		r := rand.New(rand.NewPCG(1, 2))
		vals := halfRand[T](r, 37*43, true)
		x := mustArr[T](t)(gpu.FromSlice(s, vals, 37, 43))
		if got := toSlice(t, x); !slices.Equal(got, vals) {
			t.Fatal("FromSlice/ToSlice changed the values")
		}
		fb := mustArr[T](t)(gpu.FromBits[T](s, halfBits(vals), 37, 43))
		if got := toSlice(t, fb); !slices.Equal(got, vals) {
			t.Fatal("FromBits changed the values")
		}
		// At, Set, views, copies.
		if v, err := x.At(bg, 5, 7); err != nil || v != vals[5*43+7] {
			t.Fatalf("At = %v, %v, want %v", v, err, vals[5*43+7])
		}
		if err := x.Set(bg, hf[T](0.1), -1, -1); err != nil {
			t.Fatal(err)
		}
		vals[len(vals)-1] = hf[T](0.1)
		tr := mustArr[T](t)(x.Transpose())
		st := mustArr[T](t)(x.Slice(gpu.R(1, gpu.End, 3), gpu.R(0, gpu.End, -2)))
		row := mustArr[T](t)(x.Slice(gpu.R(4)))
		bc := mustArr[T](t)(row.BroadcastTo(5, 43))
		for _, c := range []struct {
			name string
			a    *gpu.Array[T]
			at   func(idx []int) T
		}{
			{"transpose", tr, func(i []int) T { return vals[i[1]*43+i[0]] }},
			{"strided", st, func(i []int) T { return vals[(1+3*i[0])*43+42-2*i[1]] }},
			{"broadcast", bc, func(i []int) T { return vals[4*43+i[1]] }},
		} {
			cl := mustArr[T](t)(gpu.Clone(s, c.a))
			got := toSlice(t, cl)
			sh := c.a.Shape()
			for k := range got {
				idx := []int{k / sh[1], k % sh[1]}
				if want := c.at(idx); got[k] != want {
					t.Fatalf("%s: element %v is %v, want %v", c.name, idx, got[k], want)
				}
			}
			cl.Free()
		}
		// Copy into a strided view, Fill of a view.
		dst := mustArr[T](t)(gpu.Full(s, hf[T](7), 8, 6))
		dv := mustArr[T](t)(dst.Slice(gpu.R(0, gpu.End, 2)))
		src := mustArr[T](t)(gpu.FromSlice(s, vals[:4*6], 4, 6))
		if err := gpu.Copy(s, dv, src); err != nil {
			t.Fatal(err)
		}
		if err := gpu.Fill(s, mustArr[T](t)(dst.Slice(gpu.R(1, gpu.End, 2))), hf[T](math.Copysign(0, -1))); err != nil {
			t.Fatal(err)
		}
		got := toSlice(t, dst)
		for i := range 8 {
			for j := range 6 {
				want := hf[T](math.Copysign(0, -1))
				if i%2 == 0 {
					want = vals[i/2*6+j]
				}
				if got[i*6+j] != want {
					t.Fatalf("copy/fill: element (%d, %d) %v, want %v", i, j, got[i*6+j], want)
				}
			}
		}
		// Arange and Linspace, computed in float64 and rounded once.
		ar := toSlice(t, mustArr[T](t)(gpu.Arange(s, hf[T](-1), hf[T](2), hf[T](0.125))))
		if len(ar) != 24 {
			t.Fatalf("Arange: %d elements, want 24", len(ar))
		}
		for i, v := range ar {
			if want := hf[T](-1 + float64(i)*0.125); v != want {
				t.Fatalf("Arange element %d = %v, want %v", i, v, want)
			}
		}
		ls := toSlice(t, mustArr[T](t)(gpu.Linspace(s, hf[T](0), hf[T](1), 7)))
		for i, v := range ls {
			if want := hf[T](float64(i) / 6); v != want && !(i == 6 && hv(v) == 1) {
				t.Fatalf("Linspace element %d = %v, want %v", i, v, want)
			}
		}
		if hv(ls[6]) != 1 {
			t.Fatalf("Linspace's last element %v, want 1", ls[6])
		}
	})
}

// TestHalfCasts converts to and from every element type: one rounding to nearest even
// (from 64-bit integers and float64 too, where going through float32 would round twice),
// NaN, ±Inf and ±0 kept, float to integer truncating with NaN 0 and saturation.
func TestHalfCasts(t *testing.T) {
	testHalfCasts[gpu.Float16](t)
	testHalfCasts[gpu.BFloat16](t)
}

func testHalfCasts[T gpu.HalfFloat](t *testing.T) {
	res := results{}
	name := typeName[T]()
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		r := rand.New(rand.NewPCG(3, 4))
		hs := append(halfSpecials[T](), halfRand[T](r, 1000, true)...)
		x := mustArr[T](t)(gpu.FromSlice(s, hs))
		// From T to every type.
		castFrom[bool](t, s, x, hs, func(v float64) bool { return v != 0 })
		castFrom[int8](t, s, x, hs, satInt[int8](math.MinInt8, math.MaxInt8))
		castFrom[int16](t, s, x, hs, satInt[int16](math.MinInt16, math.MaxInt16))
		castFrom[int32](t, s, x, hs, satInt[int32](math.MinInt32, math.MaxInt32))
		castFrom[int64](t, s, x, hs, satInt[int64](math.MinInt64, math.MaxInt64))
		castFrom[uint8](t, s, x, hs, satInt[uint8](0, math.MaxUint8))
		castFrom[uint16](t, s, x, hs, satInt[uint16](0, math.MaxUint16))
		castFrom[uint32](t, s, x, hs, satInt[uint32](0, math.MaxUint32))
		castFrom[uint64](t, s, x, hs, satInt[uint64](0, math.MaxUint64))
		castFrom[float32](t, s, x, hs, func(v float64) float32 { return float32(v) })
		castFrom[float64](t, s, x, hs, func(v float64) float64 { return v })
		castFrom[gpu.Float16](t, s, x, hs, func(v float64) gpu.Float16 { return half.NewFloat16(v) })
		castFrom[gpu.BFloat16](t, s, x, hs, func(v float64) gpu.BFloat16 { return half.NewBFloat16(v) })

		// From every type to T.
		var prec uint = 11
		if !isF16[T]() {
			prec = 8
		}
		roundInt := func(v *big.Int) T {
			f, _ := new(big.Float).SetMode(big.ToNearestEven).SetPrec(prec).SetInt(v).Float64()
			return hf[T](f) // exact, or past the range: ±Inf
		}
		tie := math.Ldexp(1, -int(prec)) // 1 + tie is halfway between 1 and its successor
		ints := []int64{0, 1, -1, 7, 255, -128, 2047, 2049, 4097, 65504, 65519, 65520, 1 << 24, 1<<24 + 1,
			1<<53 + 1, math.MaxInt64, math.MinInt64, 257, 513, -32768}
		for i := 0; i < 200; i++ {
			ints = append(ints, r.Int64()>>r.IntN(63))
		}
		check := func(what string, got []T, want []T) {
			t.Helper()
			for i := range got {
				if !sameHalf(got[i], want[i]) {
					t.Fatalf("%s to %s: element %d is %v (%#04x), want %v (%#04x)", what, name, i, got[i], uint16(got[i]), want[i], uint16(want[i]))
				}
			}
			res.check(t, d, name+"/from "+what, halfBits(got), false)
		}
		{
			vals := make([]int64, len(ints))
			want := make([]T, len(ints))
			for i, v := range ints {
				vals[i], want[i] = v, roundInt(big.NewInt(v))
			}
			check("int64", toSlice(t, mustArr[T](t)(gpu.Astype[T](s, mustArr[int64](t)(gpu.FromSlice(s, vals))))), want)
		}
		{
			vals := make([]uint64, len(ints))
			want := make([]T, len(ints))
			for i, v := range ints {
				vals[i], want[i] = uint64(v), roundInt(new(big.Int).SetUint64(uint64(v)))
			}
			check("uint64", toSlice(t, mustArr[T](t)(gpu.Astype[T](s, mustArr[uint64](t)(gpu.FromSlice(s, vals))))), want)
		}
		{
			vals := make([]int32, len(ints))
			want := make([]T, len(ints))
			for i, v := range ints {
				vals[i] = int32(v)
				want[i] = roundInt(big.NewInt(int64(vals[i])))
			}
			check("int32", toSlice(t, mustArr[T](t)(gpu.Astype[T](s, mustArr[int32](t)(gpu.FromSlice(s, vals))))), want)
		}
		{
			vals := make([]uint8, 256)
			want := make([]T, 256)
			for i := range vals {
				vals[i], want[i] = uint8(i), hf[T](float64(i))
			}
			check("uint8", toSlice(t, mustArr[T](t)(gpu.Astype[T](s, mustArr[uint8](t)(gpu.FromSlice(s, vals))))), want)
		}
		{
			b := []bool{true, false, true}
			want := []T{hf[T](1), hf[T](0), hf[T](1)}
			check("bool", toSlice(t, mustArr[T](t)(gpu.Astype[T](s, mustArr[bool](t)(gpu.FromSlice(s, b))))), want)
		}
		// Floats: ties (1 + tie rounds to 1, 1 + 3 tie up to 1 + 4 tie), a float64 just
		// above a tie (rounding through float32 would land on the tie and round down),
		// values past the largest finite, subnormals, NaN, ±Inf, ±0.
		f64s := []float64{1 + tie, 1 + 3*tie, -(1 + tie), 1 + tie + 0x1p-40, 1 + tie - 0x1p-40, 65519.99, 65520,
			1e39, -1e39, 3.3961e38, 0x1p-25, 0x1.8p-25, 0x1p-134, 0x1.8p-134, 5e-324, math.NaN(),
			math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.MaxFloat64, 0.1, 1.0 / 3}
		for i := 0; i < 500; i++ {
			f64s = append(f64s, r.NormFloat64()*math.Ldexp(1, r.IntN(300)-150))
		}
		{
			want := make([]T, len(f64s))
			for i, v := range f64s {
				want[i] = hf[T](v)
			}
			check("float64", toSlice(t, mustArr[T](t)(gpu.Astype[T](s, mustArr[float64](t)(gpu.FromSlice(s, f64s))))), want)
		}
		{
			f32s := make([]float32, len(f64s))
			want := make([]T, len(f64s))
			for i, v := range f64s {
				f32s[i] = float32(v)
				want[i] = hf[T](float64(f32s[i]))
			}
			check("float32", toSlice(t, mustArr[T](t)(gpu.Astype[T](s, mustArr[float32](t)(gpu.FromSlice(s, f32s))))), want)
		}
		{
			// The other half type: through its exact value, rounded once.
			other := make([]T, 0, 1<<16)
			src := make([]uint16, 0, 1<<16)
			for b := 0; b < 1<<16; b++ {
				src = append(src, uint16(b))
			}
			var got []T
			if isF16[T]() {
				a := mustArr[gpu.BFloat16](t)(gpu.FromBits[gpu.BFloat16](s, src))
				got = toSlice(t, mustArr[T](t)(gpu.Astype[T](s, a)))
				for _, b := range src {
					other = append(other, hf[T](half.BFloat16(b).Float64()))
				}
				check("bfloat16", got, other)
			} else {
				a := mustArr[gpu.Float16](t)(gpu.FromBits[gpu.Float16](s, src))
				got = toSlice(t, mustArr[T](t)(gpu.Astype[T](s, a)))
				for _, b := range src {
					other = append(other, hf[T](half.Float16(b).Float64()))
				}
				check("float16", got, other)
			}
		}
	})
}

// satInt is expr's float to integer conversion: truncation, NaN 0, saturation to
// [lo, hi].
func satInt[I int8 | int16 | int32 | int64 | uint8 | uint16 | uint32 | uint64](lo, hi I) func(float64) I {
	return func(v float64) I {
		switch {
		case math.IsNaN(v):
			return 0
		case v <= float64(lo):
			return lo
		case v >= float64(hi):
			return hi
		}
		return I(math.Trunc(v))
	}
}

func castFrom[R gpu.Elem, T gpu.HalfFloat](t *testing.T, s *gpu.Stream, x *gpu.Array[T], hs []T, ref func(float64) R) {
	t.Helper()
	got := toSlice(t, mustArr[R](t)(gpu.Astype[R](s, x)))
	for i, h := range hs {
		want := ref(hv(h))
		g, w := any(got[i]), any(want)
		if fmt.Sprintf("%#v", g) == fmt.Sprintf("%#v", w) {
			continue
		}
		if gf, ok := g.(float32); ok && gf != gf && math.IsNaN(hv(h)) {
			continue
		}
		if gf, ok := g.(float64); ok && gf != gf && math.IsNaN(hv(h)) {
			continue
		}
		if gh, ok := g.(gpu.Float16); ok && gh.IsNaN() && math.IsNaN(hv(h)) {
			continue
		}
		if gh, ok := g.(gpu.BFloat16); ok && gh.IsNaN() && math.IsNaN(hv(h)) {
			continue
		}
		t.Fatalf("%v(%v): %#v, want %#v", dtype.Of[R](), h, g, w)
	}
}

// halfOp is an elementwise test: its expression over x, y, z (and scalars a, b) and
// the float64 reference of one element (nil: the float32 reference, for the functions
// the device library computes within 2 float32 ulp, where one half ulp is allowed).
type halfOp struct {
	src   string
	ref   func(x, y, z float64) float64
	ulp32 func(x, y, z float32) float32
}

var halfOps = []halfOp{
	{src: "x + y", ref: func(x, y, z float64) float64 { return x + y }},
	{src: "x - y", ref: func(x, y, z float64) float64 { return x - y }},
	{src: "x * y", ref: func(x, y, z float64) float64 { return x * y }},
	{src: "x / y", ref: func(x, y, z float64) float64 { return x / y }},
	{src: "sqrt(x)", ref: func(x, y, z float64) float64 { return math.Sqrt(x) }},
	{src: "-x", ref: func(x, y, z float64) float64 { return -x }},
	{src: "abs(x)", ref: func(x, y, z float64) float64 { return math.Abs(x) }},
	{src: "floor(x)", ref: func(x, y, z float64) float64 { return math.Floor(x) }},
	{src: "maximum(x, y)", ref: func(x, y, z float64) float64 {
		if math.IsNaN(x) || math.IsNaN(y) {
			return math.NaN()
		}
		return math.Max(x, y)
	}},
	{src: "where(x > y, x, z)", ref: func(x, y, z float64) float64 {
		if x > y {
			return x
		}
		return z
	}},
	{src: "where(isnan(x), 1, 0)", ref: func(x, y, z float64) float64 {
		if math.IsNaN(x) {
			return 1
		}
		return 0
	}},
	// Fused: float32 arithmetic, one rounding on store.
	{src: "x*y + z", ulp32: func(x, y, z float32) float32 { return x*y + z }},
	{src: "a*x + b", ulp32: func(x, y, z float32) float32 { return 2.5*x - 1.25 }},
	{src: "(x - y) * (x + y)", ulp32: func(x, y, z float32) float32 { return (x - y) * (x + y) }},
	// The device library (within 2 float32 ulp).
	{src: "exp(x)", ulp32: func(x, y, z float32) float32 { return float32(math.Exp(float64(x))) }},
	{src: "sin(x)", ulp32: func(x, y, z float32) float32 { return float32(math.Sin(float64(x))) }},
	{src: "tanh(x)", ulp32: func(x, y, z float32) float32 { return float32(math.Tanh(float64(x))) }},
	{src: "log(x)", ulp32: func(x, y, z float32) float32 { return float32(math.Log(float64(x))) }},
}

// TestHalfElementwise runs arithmetic, functions, comparisons, where and fused
// expressions on the size ladder, odd shapes, strided and broadcast views.
func TestHalfElementwise(t *testing.T) {
	testHalfElementwise[gpu.Float16](t)
	testHalfElementwise[gpu.BFloat16](t)
}

func testHalfElementwise[T gpu.HalfFloat](t *testing.T) {
	res := results{}
	name := typeName[T]()
	sizes := []int{0, 1, 2, 31, 33, 257, 1025, 1<<16 + 3}
	if !testing.Short() {
		sizes = append(sizes, 1<<20+3)
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		check := func(key string, op halfOp, xs, ys, zs, got []T, scalars bool) {
			t.Helper()
			for i := range got {
				x, y, z := hv(xs[i]), hv(ys[i]), hv(zs[i])
				var want T
				tol := 0.0
				if op.ref != nil {
					want = hf[T](op.ref(x, y, z))
				} else {
					want = hf[T](float64(op.ulp32(float32(x), float32(y), float32(z))))
					if op.src != "x*y + z" && op.src != "a*x + b" && op.src != "(x - y) * (x + y)" {
						tol = hulp[T](hv(want)) // a float32 result within 2 ulp, rounded
					}
				}
				// (The sign of a NaN that arithmetic makes is the device's: x86 and the GPU
				// differ, as expr documents.)
				if sameHalf(got[i], want) || math.IsNaN(hv(got[i])) && math.IsNaN(hv(want)) {
					continue
				}
				if tol > 0 && !math.IsNaN(hv(want)) && math.Abs(hv(got[i])-hv(want)) <= tol {
					continue
				}
				t.Fatalf("%s %s: element %d at x=%v y=%v z=%v: %v (%#04x), want %v (%#04x)", name, key, i, xs[i], ys[i], zs[i], got[i], uint16(got[i]), want, uint16(want))
			}
			res.check(t, d, name+"/"+key, halfBits(got), true)
		}
		for _, n := range sizes {
			r := rand.New(rand.NewPCG(uint64(n), 5))
			xs, ys, zs := halfRand[T](r, n, true), halfRand[T](r, n, true), halfRand[T](r, n, true)
			x := mustArr[T](t)(gpu.FromSlice(s, xs))
			y := mustArr[T](t)(gpu.FromSlice(s, ys))
			z := mustArr[T](t)(gpu.FromSlice(s, zs))
			for _, op := range halfOps {
				if n == 1<<20+3 && op.src != "a*x + b" && op.src != "x + y" {
					continue
				}
				out := mustArr[T](t)(gpu.Empty[T](s, n))
				if err := gpu.Fill(s, out, hf[T](12345)); err != nil { // poison
					t.Fatal(err)
				}
				vars := gpu.Vars{"x": x, "y": y, "z": z, "a": 2.5, "b": -1.25}
				if err := gpu.EvalInto(s, out, op.src, vars); err != nil {
					t.Fatalf("%s: %v", op.src, err)
				}
				check(fmt.Sprintf("%s/%d", op.src, n), op, xs, ys, zs, toSlice(t, out), false)
				out.Free()
			}
			if got := toSlice(t, x); !slices.Equal(got, xs) {
				t.Fatal("an operand changed")
			}
			x.Free()
			y.Free()
			z.Free()
		}
		// Strided and broadcast views of an odd shape, with a typed half scalar and a
		// Kernel.
		r := rand.New(rand.NewPCG(7, 8))
		xs := halfRand[T](r, 37*43, true)
		rs := halfRand[T](r, 43, true)
		x := mustArr[T](t)(gpu.FromSlice(s, xs, 37, 43))
		row := mustArr[T](t)(gpu.FromSlice(s, rs, 1, 43))
		xv := mustArr[T](t)(x.Slice(gpu.R(0, gpu.End, 2), gpu.R(42, 0, -3)))
		rowv := mustArr[T](t)(row.Slice(gpu.R(), gpu.R(42, 0, -3)))
		k := gpu.NewKernel[T]("x*c + r", "x", "c", "r")
		c := hf[T](0.75)
		out := mustArr[T](t)(k.Eval(s, xv, c, rowv))
		got := toSlice(t, out)
		sh := out.Shape()
		for i := range sh[0] {
			for j := range sh[1] {
				xe, re := hv(xs[2*i*43+42-3*j]), hv(rs[42-3*j])
				want := hf[T](float64(float32(xe)*float32(hv(c)) + float32(re)))
				if g := got[i*sh[1]+j]; !sameHalf(g, want) && !(math.IsNaN(hv(g)) && math.IsNaN(hv(want))) {
					t.Fatalf("%s x*c + r at (%d, %d): %v, want %v", name, i, j, g, want)
				}
			}
		}
		res.check(t, d, name+"/views", halfBits(got), true)
		// Comparisons give bool; float16 with bfloat16 is float32 (NumPy 2 with ml_dtypes).
		lt := toSlice(t, mustArr[bool](t)(gpu.Eval[bool](s, "x < r", gpu.Vars{"x": x, "r": row})))
		for i, v := range lt {
			if want := hv(xs[i]) < hv(rs[i%43]); v != want {
				t.Fatalf("%s x < r at %d: %v", name, i, v)
			}
		}
		var mixed *gpu.Array[float32]
		if isF16[T]() {
			o := mustArr[gpu.BFloat16](t)(gpu.FromSlice(s, halfRand[gpu.BFloat16](r, 37*43, false), 37, 43))
			mixed = mustArr[float32](t)(gpu.Eval[float32](s, "x + o", gpu.Vars{"x": x, "o": o}))
			ov := toSlice(t, o)
			for i, v := range toSlice(t, mixed) {
				if want := float32(hv(xs[i])) + ov[i].Float32(); v != want && !(v != v && want != want) {
					t.Fatalf("float16 + bfloat16 at %d: %v, want %v (float32)", i, v, want)
				}
			}
		}
	})
}

// TestHalfReductions checks the reductions of both formats against float64 references:
// sums and means within the float32 accumulation's error plus one rounding to the
// format; Min, Max and the arg operations exactly.
func TestHalfReductions(t *testing.T) {
	testHalfReductions[gpu.Float16](t)
	testHalfReductions[gpu.BFloat16](t)
}

func testHalfReductions[T gpu.HalfFloat](t *testing.T) {
	name := typeName[T]()
	type shapeCase struct {
		shape []int
		axes  []int // nil: all
	}
	cases := []shapeCase{{[]int{1}, nil}, {[]int{33}, nil}, {[]int{1025}, nil}, {[]int{1<<16 + 3}, nil},
		{[]int{37, 43}, []int{1}}, {[]int{37, 43}, []int{0}}, {[]int{5, 7, 9}, []int{0, 2}}, {[]int{256, 96}, []int{0}},
		{[]int{64, 512}, []int{1}}}
	if !testing.Short() {
		cases = append(cases, shapeCase{[]int{1<<20 + 3}, nil}, shapeCase{[]int{1024, 1024}, []int{0}})
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, c := range cases {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			r := rand.New(rand.NewPCG(uint64(n), 9))
			xs := halfRand[T](r, n, false)
			x := mustArr[T](t)(gpu.FromSlice(s, xs, c.shape...))
			var opts []gpu.ReduceOption
			if c.axes != nil {
				opts = append(opts, gpu.Axes(c.axes...))
			}
			key := fmt.Sprintf("%s %v axes %v", name, c.shape, c.axes)
			// The reference: outputs over the kept axes, each the float64 sum, the sum
			// of magnitudes, the extreme values and their first indices.
			outs, groups := reduceGroups(c.shape, c.axes)
			sum := toSlice(t, mustArr[T](t)(gpu.Sum[T](s, x, opts...)))
			sum32 := toSlice(t, mustArr[float32](t)(gpu.Sum[float32](s, x, opts...)))
			mean := toSlice(t, mustArr[T](t)(gpu.Mean[T](s, x, opts...)))
			mn := toSlice(t, mustArr[T](t)(gpu.Min(s, x, opts...)))
			mx := toSlice(t, mustArr[T](t)(gpu.Max(s, x, opts...)))
			ss := toSlice(t, mustArr[float32](t)(gpu.MapReduce[float32](s, "x*x", gpu.Vars{"x": x}, gpu.OpSum, opts...)))
			if len(sum) != outs {
				t.Fatalf("%s: %d sums, want %d", key, len(sum), outs)
			}
			for o, g := range groups {
				var s64, abs, sq, sqAbs float64
				lo, hi := math.Inf(1), math.Inf(-1)
				for _, i := range g {
					v := hv(xs[i])
					s64 += v
					abs += math.Abs(v)
					sq += float64(float32(v) * float32(v))
					sqAbs += float64(float32(v) * float32(v))
					lo, hi = math.Min(lo, v), math.Max(hi, v)
				}
				// float32 accumulation: each of the log2(n)+16 levels of the tree rounds
				// with relative error 2^-24.
				acc := abs * math.Ldexp(float64(math.Ilogb(float64(len(g)))+18), -24)
				if e := math.Abs(float64(sum32[o]) - s64); e > acc {
					t.Fatalf("%s: Sum[float32] output %d = %v, want %v within %g", key, o, sum32[o], s64, acc)
				}
				if e := math.Abs(hv(sum[o]) - s64); e > acc+hulp[T](s64) {
					t.Fatalf("%s: Sum output %d = %v, want %v within %g", key, o, sum[o], s64, acc+hulp[T](s64))
				}
				if sum[o] != hf[T](float64(sum32[o])) && isCPU(d) {
					t.Fatalf("%s: Sum output %d = %v is not the float32 sum %v rounded once", key, o, sum[o], sum32[o])
				}
				m64 := s64 / float64(len(g))
				if e := math.Abs(hv(mean[o]) - m64); e > acc/float64(len(g))+hulp[T](m64) {
					t.Fatalf("%s: Mean output %d = %v, want %v", key, o, mean[o], m64)
				}
				if hv(mn[o]) != lo || hv(mx[o]) != hi {
					t.Fatalf("%s: Min/Max output %d = %v, %v, want %v, %v", key, o, mn[o], mx[o], lo, hi)
				}
				if e := math.Abs(float64(ss[o]) - sq); e > sqAbs*math.Ldexp(float64(math.Ilogb(float64(len(g)))+18), -24) {
					t.Fatalf("%s: MapReduce x*x output %d = %v, want %v", key, o, ss[o], sq)
				}
			}
			if c.axes == nil || len(c.axes) == 1 {
				am := toSlice(t, mustArr[int64](t)(gpu.ArgMax(s, x, opts...)))
				vals, idx, err := gpu.FindMin(s, x, opts...)
				if err != nil {
					t.Fatal(err)
				}
				fv, fi := toSlice(t, vals), toSlice(t, idx)
				for o, g := range groups {
					bestMax, bestMin := 0, 0
					for k, i := range g {
						if hv(xs[i]) > hv(xs[g[bestMax]]) {
							bestMax = k
						}
						if hv(xs[i]) < hv(xs[g[bestMin]]) {
							bestMin = k
						}
					}
					if am[o] != int64(bestMax) || fi[o] != int64(bestMin) || fv[o] != xs[g[bestMin]] {
						t.Fatalf("%s: ArgMax %d, FindMin %v at %d; want %d, %v at %d", key, am[o], fv[o], fi[o], bestMax, xs[g[bestMin]], bestMin)
					}
				}
			}
			x.Free()
		}
		// NaN and the specials: Min and Max propagate NaN, ArgMin finds the first NaN,
		// Prod and Sum overflow to Inf, Count skips ±0.
		sp := []T{hf[T](1), hf[T](math.Copysign(0, -1)), hf[T](3), hf[T](math.NaN()), hf[T](-5), hf[T](math.NaN())}
		x := mustArr[T](t)(gpu.FromSlice(s, sp))
		if v := toSlice(t, mustArr[T](t)(gpu.Min(s, x)))[0]; !math.IsNaN(hv(v)) {
			t.Errorf("%s Min with NaN = %v", name, v)
		}
		if i := toSlice(t, mustArr[int64](t)(gpu.ArgMin(s, x)))[0]; i != 3 {
			t.Errorf("%s ArgMin with NaN = %d, want 3", name, i)
		}
		if c := toSlice(t, mustArr[int64](t)(gpu.Count(s, x)))[0]; c != 5 {
			t.Errorf("%s Count = %d, want 5", name, c)
		}
		big := mustArr[T](t)(gpu.Full(s, hf[T](60000), 4))
		if v := hv(toSlice(t, mustArr[T](t)(gpu.Sum[T](s, big)))[0]); isF16[T]() && !math.IsInf(v, 1) {
			t.Errorf("float16 Sum of 4 x 60000 = %v, want +Inf (rounded once from float32)", v)
		}
		if v := toSlice(t, mustArr[float32](t)(gpu.Sum[float32](s, big)))[0]; float64(v) != 4*hv(hf[T](60000)) {
			t.Errorf("%s Sum[float32] of 4 x 60000 = %v", name, v)
		}
		if v := hv(toSlice(t, mustArr[T](t)(gpu.Prod[T](s, mustArr[T](t)(gpu.Full(s, hf[T](1.5), 3)))))[0]); v != 3.375 {
			t.Errorf("%s Prod = %v", name, v)
		}
		empty := mustArr[T](t)(gpu.Zeros[T](s, 0))
		if v := toSlice(t, mustArr[T](t)(gpu.Sum[T](s, empty)))[0]; v != 0 {
			t.Errorf("%s Sum of nothing = %v", name, v)
		}
		if _, err := gpu.Max(s, empty); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("%s Max of nothing: %v", name, err)
		}
	})
}

func isCPU(d *gpu.Device) bool { return d.Backend() == "cpu" }

// reduceGroups returns, for a row-major array of the shape reduced over axes (nil: all),
// the number of outputs and, per output, the flat indices it reduces in row-major order
// of the reduced axes.
func reduceGroups(shape, axes []int) (int, [][]int) {
	red := make([]bool, len(shape))
	for d := range red {
		red[d] = axes == nil
	}
	for _, a := range axes {
		red[a] = true
	}
	n := 1
	for _, v := range shape {
		n *= v
	}
	outIdx := map[int]int{}
	var groups [][]int
	idx := make([]int, len(shape))
	for i := 0; i < n; i++ {
		rem := i
		for d := len(shape) - 1; d >= 0; d-- {
			idx[d] = rem % shape[d]
			rem /= shape[d]
		}
		o := 0
		for d := range shape {
			if !red[d] {
				o = o*shape[d] + idx[d]
			}
		}
		g, ok := outIdx[o]
		if !ok {
			g = len(groups)
			outIdx[o] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	// outputs in row-major order of the kept axes: o increases with i's first visit
	return len(groups), groups
}

// TestHalfScans checks CumSum (float32 accumulators rounded per element), CumSum[float32]
// and CumMax of both formats along each axis.
func TestHalfScans(t *testing.T) {
	testHalfScans[gpu.Float16](t)
	testHalfScans[gpu.BFloat16](t)
}

func testHalfScans[T gpu.HalfFloat](t *testing.T) {
	name := typeName[T]()
	cases := []struct {
		shape []int
		axis  int
	}{{[]int{1}, 0}, {[]int{33}, 0}, {[]int{5000}, 0}, {[]int{1<<16 + 3}, 0}, {[]int{37, 43}, 1},
		{[]int{37, 43}, 0}, {[]int{3, 4096}, 1}, {[]int{1000, 3}, 0}, {[]int{6, 5, 7}, 1}}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		for _, c := range cases {
			n := 1
			for _, v := range c.shape {
				n *= v
			}
			r := rand.New(rand.NewPCG(uint64(n), 11))
			xs := halfRand[T](r, n, false)
			x := mustArr[T](t)(gpu.FromSlice(s, xs, c.shape...))
			cs := toSlice(t, mustArr[T](t)(gpu.CumSum[T](s, x, c.axis)))
			cs32 := toSlice(t, mustArr[float32](t)(gpu.CumSum[float32](s, x, c.axis)))
			cm := toSlice(t, mustArr[T](t)(gpu.CumMax(s, x, c.axis)))
			ex := toSlice(t, mustArr[T](t)(gpu.CumSum[T](s, x, c.axis, gpu.Exclusive())))
			inner := 1
			for _, v := range c.shape[c.axis+1:] {
				inner *= v
			}
			m := c.shape[c.axis]
			for col := 0; col < n/m; col++ {
				base := col/inner*m*inner + col%inner
				var s64, abs float64
				hi := math.Inf(-1)
				for k := range m {
					i := base + k*inner
					v := hv(xs[i])
					s64 += v
					abs += math.Abs(v)
					hi = math.Max(hi, v)
					tol := abs * float64(k+2) * 0x1p-24
					key := fmt.Sprintf("%s %v axis %d element %d", name, c.shape, c.axis, i)
					if e := math.Abs(float64(cs32[i]) - s64); e > tol {
						t.Fatalf("%s: CumSum[float32] %v, want %v", key, cs32[i], s64)
					}
					// (On CUDA the float32 scan may associate differently: staged tiles.)
					if cs[i] != hf[T](float64(cs32[i])) && isCPU(d) || math.Abs(hv(cs[i])-s64) > tol+hulp[T](s64) {
						t.Fatalf("%s: CumSum %v is not the float32 running sum %v rounded (%v)", key, cs[i], cs32[i], s64)
					}
					if hv(cm[i]) != hi {
						t.Fatalf("%s: CumMax %v, want %v", key, cm[i], hi)
					}
					if e := math.Abs(hv(ex[i]) - (s64 - v)); e > tol+hulp[T](s64-v) {
						t.Fatalf("%s: exclusive CumSum %v, want %v", key, ex[i], s64-v)
					}
				}
			}
			x.Free()
		}
	})
}

// TestHalfSearchPermute: Nonzero, Extract, FindFirst and CountNonzero treat ±0 as zero
// and NaN as nonzero; Permute moves the elements exactly.
func TestHalfSearchPermute(t *testing.T) {
	testHalfSearchPermute[gpu.Float16](t)
	testHalfSearchPermute[gpu.BFloat16](t)
}

func testHalfSearchPermute[T gpu.HalfFloat](t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		ctx := context.Background()
		r := rand.New(rand.NewPCG(13, 14))
		for _, n := range []int{1, 33, 5000, 1<<16 + 3} {
			xs := make([]T, n)
			var want []int64
			for i := range xs {
				switch r.IntN(4) {
				case 0:
					xs[i] = hf[T](0)
				case 1:
					xs[i] = hf[T](math.Copysign(0, -1))
				case 2:
					xs[i] = hf[T](math.NaN())
					want = append(want, int64(i))
				default:
					xs[i] = hf[T](r.NormFloat64() + 3)
					want = append(want, int64(i))
				}
			}
			x := mustArr[T](t)(gpu.FromSlice(s, xs))
			nz, err := gpu.Nonzero(ctx, s, x)
			if err != nil {
				t.Fatal(err)
			}
			if got := toSlice(t, nz); !slices.Equal(got, want) {
				t.Fatalf("n=%d: Nonzero found %d, want %d", n, len(got), len(want))
			}
			if c, err := gpu.CountNonzero(ctx, s, x); err != nil || c != len(want) {
				t.Fatalf("CountNonzero = %d, %v, want %d", c, err, len(want))
			}
			if f, err := gpu.FindFirst(ctx, s, x); err != nil || len(want) > 0 && f != int(want[0]) {
				t.Fatalf("FindFirst = %d, %v", f, err)
			}
			mask := mustArr[bool](t)(gpu.Eval[bool](s, "x", gpu.Vars{"x": x}))
			ext, err := gpu.Extract(ctx, s, mask, x)
			if err != nil {
				t.Fatal(err)
			}
			got := toSlice(t, ext)
			for k, i := range want {
				if got[k] != xs[i] {
					t.Fatalf("Extract element %d = %v, want %v", k, got[k], xs[i])
				}
			}
		}
		xs := halfRand[T](r, 5*6*7, true)
		x := mustArr[T](t)(gpu.FromSlice(s, xs, 5, 6, 7))
		p := toSlice(t, mustArr[T](t)(gpu.Permute(s, x, 2, 0, 1)))
		for i := range 5 {
			for j := range 6 {
				for k := range 7 {
					if p[k*30+i*6+j] != xs[i*42+j*7+k] {
						t.Fatalf("Permute: (%d, %d, %d) differs", i, j, k)
					}
				}
			}
		}
	})
}

// TestHalfRandom checks that uniform draws are in [0, 1) after rounding to the format
// (10^7 of each; 10^6 with -short), that normal values are the float32 normals of the
// same generator state rounded once, and that the CPU and CUDA give the same bits.
func TestHalfRandom(t *testing.T) {
	testHalfRandom[gpu.Float16](t)
	testHalfRandom[gpu.BFloat16](t)
}

func testHalfRandom[T gpu.HalfFloat](t *testing.T) {
	res := results{}
	name := typeName[T]()
	n := 10_000_000
	if testing.Short() || testenv.Race {
		n = 1_000_000
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		g := gpu.NewGenerator(0x5eed)
		u := mustArr[T](t)(gpu.Rand[T](s, g, n))
		bad, err := gpu.CountNonzero(context.Background(), s, mustArr[bool](t)(gpu.Eval[bool](s, "!(x >= 0 && x < 1)", gpu.Vars{"x": u})))
		if err != nil || bad != 0 {
			t.Fatalf("%s: %d of %d uniform draws outside [0, 1) (%v)", name, bad, n, err)
		}
		mean := toSlice(t, mustArr[float64](t)(gpu.Mean[float64](s, u)))[0]
		if math.Abs(mean-0.5) > 0.01 {
			t.Errorf("%s: uniform mean %v", name, mean)
		}
		us := toSlice(t, u)
		u.Free()
		mx := 0.0
		for _, v := range us {
			mx = math.Max(mx, hv(v))
		}
		if want := 1 - hulp[T](0.75); mx != want {
			t.Errorf("%s: largest of %d draws %v, want %v", name, n, mx, want)
		}
		res.check(t, d, name+"/rand", halfBits(us[:1<<16]), false)
		// Normals: the float32 normals from the same state, rounded.
		seed, off := g.State()
		z := toSlice(t, mustArr[T](t)(gpu.RandN[T](s, g, 1<<16+5)))
		g32 := gpu.NewGenerator(seed)
		if err := g32.SetState(seed, off); err != nil {
			t.Fatal(err)
		}
		z32 := toSlice(t, mustArr[float32](t)(gpu.RandN[float32](s, g32, 1<<16+5)))
		for i := range z {
			if z[i] != hf[T](float64(z32[i])) {
				t.Fatalf("%s normal %d = %v, want the float32 normal %v rounded", name, i, z[i], z32[i])
			}
		}
		if a, b := g.State(); true {
			if c, e := g32.State(); a != c || b != e {
				t.Errorf("%s normals advanced the generator to %d, float32 ones to %d", name, b, e)
			}
		}
		res.check(t, d, name+"/randn", halfBits(z), false)
	})
}

func ExampleFromBits() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromBits[gpu.BFloat16](s, []uint16{0x3f80, 0x4000, 0x4040}) // 1, 2, 3
	y, _ := gpu.Eval[gpu.BFloat16](s, "x*x + 0.1", gpu.Vars{"x": x})
	sum, _ := gpu.Sum[float32](s, y) // accumulated in float32, returned as float32
	vals, _ := y.ToSlice(context.Background())
	total, _ := sum.At(context.Background())
	fmt.Println(vals, total, y.DType())
	// Output: [1.1 4.1 9.1] 14.3203125 bfloat16
}

// TestHalfEvalWider: Eval into a wider type rounds a half-type result once, to the
// output type (Eval's doc): Eval[float64] of x*3 is the float32 product; float16(x*3)
// in the source rounds to float16 first, as NumPy's (x*3).astype(float64).
func TestHalfEvalWider(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(11, 12))
		xs := make([]gpu.Float16, 1000)
		for i := range xs {
			xs[i] = hf[gpu.Float16](rng.NormFloat64())
		}
		x := mustArr[gpu.Float16](t)(gpu.FromSlice(s, xs))
		defer x.Free()
		wide := mustArr[float64](t)(gpu.Eval[float64](s, "x*3", gpu.Vars{"x": x}))
		defer wide.Free()
		narrow := mustArr[float64](t)(gpu.Eval[float64](s, "float16(x*3)", gpu.Vars{"x": x}))
		defer narrow.Free()
		gw, gn := toSlice(t, wide), toSlice(t, narrow)
		for i, v := range xs {
			p := float64(float32(v.Float64()) * 3)
			if gw[i] != p {
				t.Fatalf("Eval[float64](x*3)[%d] = %v, want the float32 product %v", i, gw[i], p)
			}
			if want := half.NewFloat16(p).Float64(); gn[i] != want {
				t.Fatalf("Eval[float64](float16(x*3))[%d] = %v, want %v", i, gn[i], want)
			}
		}
	})
}
