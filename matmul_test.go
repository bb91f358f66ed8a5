package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/testblas"
	"gonum.org/v1/gonum/mat"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/half"
	"github.com/go-gpu/gpu/internal/kernel"
)

// The matrix products are checked against a float64 reference computed here from the
// operands' logical values, with numpy.matmul's shape rules. An element may differ from
// the reference by at most
//
//	tol = (2*K*u_acc + u_in) * sum_k |a_ik*b_kj|  +  u_out*|ref|
//
// where u_acc is the unit roundoff of the accumulation (2^-24 for float32, float16,
// bfloat16; 2^-53 for float64): the standard bound K*u*sum|a||b| on a K-term dot
// product (Higham, "Accuracy and Stability of Numerical Algorithms", 3.1), doubled for
// the reassociation of split sums; u_in is the rounding of the inputs (TF32: 2^-11 per
// operand, so 2^-10; 0 otherwise) and u_out the rounding of the result to the output
// type (2^-11 for float16, 2^-8 for bfloat16, 0 for float32 and float64, whose results
// round within the accumulation bound). Inputs are exactly representable in their
// type. Every configuration runs on each device the machine has (the CPU always; CUDA
// when there is one) with each kernel (the device's library and the generated one).

type mmDev struct {
	name   string
	d      *gpu.Device
	kernel gpu.MatMulKernel
}

func mmDevices(t *testing.T) []mmDev {
	t.Helper()
	cpuDev, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	out := []mmDev{{"cpu/library", cpuDev, gpu.MatMulLibrary}, {"cpu/generated", cpuDev, gpu.MatMulGenerated}}
	if d, err := gpu.OpenBackend("cuda", 0); err == nil {
		if lib, err := d.MatMulLibrary(); err == nil {
			t.Logf("CUDA matrix library: %s", lib)
			out = append(out, mmDev{"cuda/library", d, gpu.MatMulLibrary})
		} else {
			t.Logf("no CUDA matrix library (%v): the generated kernel only", err)
		}
		out = append(out, mmDev{"cuda/generated", d, gpu.MatMulGenerated})
	} else if !errors.Is(err, gpu.ErrNoDevice) {
		t.Fatal(err)
	}
	return out
}

// mmCodec converts between float64 and an element type's Go representation.
type mmCodec[T gpu.Elem] struct {
	dt   dtype.DType
	to   func(float64) T // exact for values from round
	from func(T) float64
	// round returns the nearest value of the type.
	round func(float64) float64
	uOut  float64
}

func codecF32() mmCodec[float32] {
	return mmCodec[float32]{dtype.Float32, func(x float64) float32 { return float32(x) }, func(x float32) float64 { return float64(x) },
		func(x float64) float64 { return float64(float32(x)) }, 0}
}

func codecF64() mmCodec[float64] {
	return mmCodec[float64]{dtype.Float64, func(x float64) float64 { return x }, func(x float64) float64 { return x },
		func(x float64) float64 { return x }, 0}
}

// codecF16 and codecBF16 are the half types' (package half's conversions, rounding to
// nearest even); uOut is their unit roundoff, 2^-11 and 2^-8.
func codecF16() mmCodec[gpu.Float16] {
	return mmCodec[gpu.Float16]{dtype.Float16, half.NewFloat16, gpu.Float16.Float64,
		func(x float64) float64 { return half.NewFloat16(x).Float64() }, 0x1p-11}
}

func codecBF16() mmCodec[gpu.BFloat16] {
	return mmCodec[gpu.BFloat16]{dtype.BFloat16, half.NewBFloat16, gpu.BFloat16.Float64,
		func(x float64) float64 { return half.NewBFloat16(x).Float64() }, 0x1p-8}
}

// uAcc returns the unit roundoff of the accumulation of dt.
func uAcc(dt dtype.DType) float64 {
	if dt == dtype.Float64 {
		return 0x1p-53
	}
	return 0x1p-24
}

// mmView says how an operand's device array is laid out.
type mmView string

const (
	vContig mmView = "contig" // a new contiguous array
	vTrans  mmView = "trans"  // the transpose (last two axes) of a contiguous array
	vPad    mmView = "pad"    // rows of a wider array (leading dimension > columns)
	vStep   mmView = "step"   // every other column of a wider array (copied)
	vRev    mmView = "rev"    // rows reversed (a negative stride: copied)
)

// mmOperand makes the device array of a logical operand: shape and row-major values,
// laid out as view says.
func mmOperand[T gpu.Elem](t *testing.T, s *gpu.Stream, c mmCodec[T], vals []float64, shape []int, view mmView) *gpu.Array[T] {
	t.Helper()
	r := len(shape)
	if r < 2 && view != vContig && view != vStep {
		view = vContig
	}
	conv := func(v []float64) []T {
		out := make([]T, len(v))
		for i, x := range v {
			out[i] = c.to(x)
		}
		return out
	}
	mk := func(data []T, shape ...int) *gpu.Array[T] {
		a, err := gpu.FromSlice(s, data, shape...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { a.Free() })
		if len(shape) == 0 {
			if a, err = a.Reshape(); err != nil {
				t.Fatal(err)
			}
		}
		if a.DType() != c.dt {
			t.Fatalf("an Array[%T] has dtype %v, want %v", *new(T), a.DType(), c.dt)
		}
		return a
	}
	all := func(n int) []gpu.Range {
		rs := make([]gpu.Range, n)
		for i := range rs {
			rs[i] = gpu.R()
		}
		return rs
	}
	var out *gpu.Array[T]
	var err error
	switch view {
	case vContig:
		out = mk(conv(vals), shape...)
	case vTrans:
		rows, cols := shape[r-2], shape[r-1]
		bshape := slices.Clone(shape)
		bshape[r-2], bshape[r-1] = cols, rows
		data := make([]float64, len(vals))
		for b := 0; b < len(vals)/max(rows*cols, 1); b++ {
			for i := range rows {
				for j := range cols {
					data[b*rows*cols+j*rows+i] = vals[b*rows*cols+i*cols+j]
				}
			}
		}
		axes := make([]int, r)
		for i := range axes {
			axes[i] = i
		}
		axes[r-2], axes[r-1] = r-1, r-2
		out, err = mk(conv(data), bshape...).Transpose(axes...)
	case vPad, vStep:
		cols := shape[r-1]
		wide := cols + 3
		if view == vStep {
			wide = 2 * cols
		}
		bshape := slices.Clone(shape)
		bshape[r-1] = wide
		data := make([]float64, len(vals)/max(cols, 1)*wide)
		for i := range data {
			data[i] = math.NaN() // never read
		}
		for row := 0; row < len(vals)/max(cols, 1); row++ {
			for j := range cols {
				at := row*wide + j
				if view == vStep {
					at = row*wide + 2*j
				}
				data[at] = vals[row*cols+j]
			}
		}
		rs := all(r)
		rs[r-1] = gpu.R(0, cols)
		if view == vStep {
			rs[r-1] = gpu.R(0, gpu.End, 2)
		}
		out, err = mk(conv(data), bshape...).Slice(rs...)
	case vRev:
		rows, cols := shape[r-2], shape[r-1]
		data := make([]float64, len(vals))
		for b := 0; b < len(vals)/max(rows*cols, 1); b++ {
			for i := range rows {
				copy(data[b*rows*cols+(rows-1-i)*cols:][:cols], vals[b*rows*cols+i*cols:][:cols])
			}
		}
		rs := all(r)
		rs[r-2] = gpu.Range{Start: 0, Stop: gpu.End, Step: -1}
		out, err = mk(conv(data), shape...).Slice(rs...)
	}
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(out.Shape(), shape) {
		t.Fatalf("operand view %s: shape %v, want %v", view, out.Shape(), shape)
	}
	return out
}

// mmValues returns n random values exactly representable in c's type, of both signs
// and varied magnitude, never zero.
func mmValues[T gpu.Elem](rng *rand.Rand, c mmCodec[T], n int) []float64 {
	v := make([]float64, n)
	for i := range v {
		x := (0.25 + rng.Float64()) * math.Exp2(float64(rng.IntN(5)-2))
		if rng.IntN(2) == 0 {
			x = -x
		}
		v[i] = c.round(x)
	}
	return v
}

// mmRef computes numpy.matmul of logical operands in float64, with the bound on each
// element's error (sum |a||b|).
func mmRef(a []float64, as []int, b []float64, bs []int) (out, mag []float64, shape []int, err error) {
	vecA, vecB := len(as) == 1, len(bs) == 1
	if vecA {
		as = []int{1, as[0]}
	}
	if vecB {
		bs = []int{bs[0], 1}
	}
	ra, rb := len(as), len(bs)
	m, k, n := as[ra-2], as[ra-1], bs[rb-1]
	if bs[rb-2] != k {
		return nil, nil, nil, fmt.Errorf("inner dimensions %d, %d", k, bs[rb-2])
	}
	batch, err := gpu.BroadcastShapes(as[:ra-2], bs[:rb-2])
	if err != nil {
		return nil, nil, nil, err
	}
	nb := 1
	for _, d := range batch {
		nb *= d
	}
	// index of batch element bi in an operand of batch shape bsh (broadcast).
	bidx := func(bi int, bsh []int) int {
		idx, mul := 0, 1
		rem := bi
		for d := len(batch) - 1; d >= 0; d-- {
			i := rem % batch[d]
			rem /= batch[d]
			od := d - (len(batch) - len(bsh))
			if od >= 0 {
				if bsh[od] != 1 {
					idx += i * mul
				}
				mul *= bsh[od]
			}
		}
		return idx
	}
	out = make([]float64, nb*m*n)
	mag = make([]float64, nb*m*n)
	for bi := range nb {
		ai, bj := bidx(bi, as[:ra-2])*m*k, bidx(bi, bs[:rb-2])*k*n
		for i := range m {
			for j := range n {
				var sum, sm float64
				for kk := range k {
					p := a[ai+i*k+kk] * b[bj+kk*n+j]
					sum += p
					sm += math.Abs(p)
				}
				out[bi*m*n+i*n+j], mag[bi*m*n+i*n+j] = sum, sm
			}
		}
	}
	shape = slices.Clone(batch)
	if !vecA {
		shape = append(shape, m)
	}
	if !vecB {
		shape = append(shape, n)
	}
	return out, mag, shape, nil
}

// mmCheck compares got with the reference.
func mmCheck[T gpu.Elem](t *testing.T, c mmCodec[T], got []T, ref, mag []float64, k int, uIn float64) {
	t.Helper()
	bad := 0
	for i, g := range got {
		v := c.from(g)
		tol := (2*float64(k)*uAcc(c.dt)+uIn)*mag[i] + c.uOut*math.Abs(ref[i])
		if !(math.Abs(v-ref[i]) <= tol) {
			if bad++; bad <= 5 {
				t.Errorf("element %d = %v, want %v (tolerance %.3g)", i, v, ref[i], tol)
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d elements of %d wrong", bad, len(got))
	}
}

// mmCase is one product: the logical shapes and the operands' views.
type mmCase struct {
	a, b   []int
	va, vb mmView
}

func (c mmCase) String() string {
	return fmt.Sprintf("%v%s@%v%s", c.a, c.va, c.b, c.vb)
}

var mmCases = []mmCase{
	{[]int{1, 1}, []int{1, 1}, vContig, vContig},
	{[]int{3, 5}, []int{5, 7}, vContig, vContig},
	{[]int{17, 33}, []int{33, 9}, vContig, vContig},       // odd sizes
	{[]int{70, 45}, []int{45, 130}, vContig, vContig},     // K not a multiple of a tile
	{[]int{130, 40}, []int{40, 129}, vTrans, vContig},     // A^T
	{[]int{65, 40}, []int{40, 67}, vContig, vTrans},       // B^T
	{[]int{66, 41}, []int{41, 65}, vTrans, vTrans},        // both
	{[]int{33, 31}, []int{31, 20}, vPad, vPad},            // leading dimensions
	{[]int{20, 31}, []int{31, 21}, vStep, vContig},        // not expressible: copied
	{[]int{21, 16}, []int{16, 19}, vRev, vStep},           // negative stride, copied
	{[]int{1, 64}, []int{64, 1}, vContig, vContig},        // one row, one column
	{[]int{64}, []int{64, 5}, vContig, vContig},           // vector @ matrix
	{[]int{6, 64}, []int{64}, vContig, vStep},             // matrix @ strided vector
	{[]int{50}, []int{50}, vStep, vContig},                // inner product
	{[]int{4, 9, 13}, []int{4, 13, 11}, vContig, vContig}, // a batch
	{[]int{2, 1, 9, 13}, []int{3, 13, 11}, vTrans, vPad},  // broadcast batches
	{[]int{5, 8, 3}, []int{3, 6}, vContig, vTrans},        // a stack times a matrix
	{[]int{7}, []int{2, 3, 7, 4}, vContig, vContig},       // vector times a stack
	{[]int{3, 1, 130, 36}, []int{1, 2, 36, 70}, vContig, vContig},
}

func TestMatMulTypes(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			testMatMulType(t, md, codecF32(), 0)
			testMatMulType(t, md, codecF64(), 0)
			testMatMulType(t, md, codecF16(), 0)
			testMatMulType(t, md, codecBF16(), 0)
		})
	}
}

func testMatMulType[T gpu.Elem](t *testing.T, md mmDev, c mmCodec[T], prec gpu.MatMulPrecision) {
	name := c.dt.String()
	if prec == gpu.PrecisionHigh {
		name = "tf32"
	}
	t.Run(name, func(t *testing.T) {
		s, err := md.d.NewStream()
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		rng := rand.New(rand.NewPCG(19, uint64(c.dt)))
		uIn := 0.0
		if prec == gpu.PrecisionHigh {
			uIn = 0x1p-10
		}
		opts := []gpu.MatMulOption{gpu.WithKernel(md.kernel), gpu.WithPrecision(prec)}
		for _, tc := range mmCases {
			t.Run(tc.String(), func(t *testing.T) {
				av, bv := mmValues(rng, c, prod(tc.a)), mmValues(rng, c, prod(tc.b))
				ref, mag, shape, err := mmRef(av, tc.a, bv, tc.b)
				if err != nil {
					t.Fatal(err)
				}
				a := mmOperand(t, s, c, av, tc.a, tc.va)
				b := mmOperand(t, s, c, bv, tc.b, tc.vb)
				k := tc.a[len(tc.a)-1]
				out, err := gpu.MatMul(s, a, b, opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer out.Free()
				if !slices.Equal(out.Shape(), shape) {
					t.Fatalf("shape %v, want %v", out.Shape(), shape)
				}
				got, err := out.ToSlice(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				mmCheck(t, c, got, ref, mag, k, uIn)

				// Into a poisoned output: with two axes or more a transposed view
				// (a column-major C), every other column of a wider array (neither
				// rows nor columns contiguous: computed into a temporary and copied
				// in) and reversed rows.
				for _, view := range []mmView{vTrans, vStep, vRev} {
					into := mmOutput(t, s, c, shape, view)
					if err := gpu.MatMulInto(s, into, a, b, opts...); err != nil {
						t.Fatal(err)
					}
					if got, err = into.ToSlice(context.Background()); err != nil {
						t.Fatal(err)
					}
					mmCheck(t, c, got, ref, mag, k, uIn)
				}

				// The inputs are unchanged.
				for _, x := range []struct {
					arr  *gpu.Array[T]
					vals []float64
				}{{a, av}, {b, bv}} {
					h, err := x.arr.ToSlice(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					for i := range h {
						if c.from(h[i]) != x.vals[i] {
							t.Fatalf("input changed at %d: %v, was %v", i, c.from(h[i]), x.vals[i])
						}
					}
				}
			})
		}
	})
}

// mmOutput returns a poisoned (NaN) output of shape laid out as view says (contiguous
// where view needs more axes than shape has).
func mmOutput[T gpu.Elem](t *testing.T, s *gpu.Stream, c mmCodec[T], shape []int, view mmView) *gpu.Array[T] {
	t.Helper()
	n := prod(shape)
	nan := make([]float64, n)
	for i := range nan {
		nan[i] = math.NaN()
	}
	if len(shape) == 0 {
		view = vContig
	}
	return mmOperand(t, s, c, nan, shape, view)
}

func prod(shape []int) int {
	n := 1
	for _, d := range shape {
		n *= d
	}
	return n
}

// TestMatMulTF32 checks PrecisionHigh, per call and per device: TF32 where the kernel
// has it, exact float32 elsewhere; both within the TF32 tolerance.
func TestMatMulTF32(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			testMatMulType(t, md, codecF32(), gpu.PrecisionHigh)
		})
	}
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	if p := d.Float32MatMulPrecision(); p != gpu.PrecisionHighest {
		t.Errorf("default precision %v", p)
	}
	if err := d.SetFloat32MatMulPrecision(gpu.PrecisionHigh); err != nil {
		t.Fatal(err)
	}
	if p := d.Float32MatMulPrecision(); p != gpu.PrecisionHigh {
		t.Errorf("precision %v after setting high", p)
	}
	if err := d.SetFloat32MatMulPrecision(7); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("precision 7: %v", err)
	}
	// The generated CPU kernel rounds its inputs to TF32 when allowed: a product that
	// TF32 changes shows the device setting, and WithPrecision overrides it.
	s := d.DefaultStream()
	x := 1 + 0x1p-20 // not a TF32 value: rounds to 1
	a, _ := gpu.FromSlice(s, []float32{float32(x)}, 1, 1)
	b, _ := gpu.FromSlice(s, []float32{1}, 1, 1)
	for _, c := range []struct {
		opts []gpu.MatMulOption
		want float32
	}{
		{[]gpu.MatMulOption{gpu.WithKernel(gpu.MatMulGenerated)}, 1},
		{[]gpu.MatMulOption{gpu.WithKernel(gpu.MatMulGenerated), gpu.WithPrecision(gpu.PrecisionHighest)}, float32(x)},
	} {
		out, err := gpu.MatMul(s, a, b, c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		v, _ := out.ToSlice(context.Background())
		if v[0] != c.want {
			t.Errorf("%d options: %v, want %v", len(c.opts), v[0], c.want)
		}
	}
	d.SetFloat32MatMulPrecision(gpu.PrecisionHighest)
}

// TestGemm checks alpha and beta: C = alpha*A@B + beta*C, with beta 0 not reading C,
// in every type (the half types' alpha*sum + beta*c is computed in float32 and rounded
// once: the tolerance counts beta*c as one more term of the sum, and the output's
// rounding), K = 0 included.
func TestGemm(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			testGemm(t, md, codecF64())
			testGemm(t, md, codecF32())
			testGemm(t, md, codecF16())
			testGemm(t, md, codecBF16())
		})
	}
}

func testGemm[T gpu.Elem](t *testing.T, md mmDev, c mmCodec[T]) {
	t.Run(c.dt.String(), func(t *testing.T) {
		s := md.d.DefaultStream()
		rng := rand.New(rand.NewPCG(3, uint64(c.dt)))
		for _, ab := range [][2]float64{{1, 0}, {2.5, 0}, {-1, 1}, {0.5, -2}, {0, 3}} {
			for _, shapes := range [][2][]int{{{9, 20}, {20, 7}}, {{3, 9, 20}, {20, 7}}, {{9, 20}, {20}}, {{4, 0}, {0, 3}}} {
				alpha, beta := ab[0], ab[1]
				av, bv := mmValues(rng, c, prod(shapes[0])), mmValues(rng, c, prod(shapes[1]))
				ref, mag, shape, _ := mmRef(av, shapes[0], bv, shapes[1])
				cv := mmValues(rng, c, len(ref))
				if beta == 0 {
					for i := range cv {
						cv[i] = math.NaN()
					}
				}
				a := mmOperand(t, s, c, av, shapes[0], vContig)
				b := mmOperand(t, s, c, bv, shapes[1], vTrans)
				want := make([]float64, len(ref))
				m := make([]float64, len(ref))
				for i := range ref {
					want[i] = alpha * ref[i]
					m[i] = math.Abs(alpha) * mag[i]
					if beta != 0 {
						want[i] += beta * cv[i]
						m[i] += math.Abs(beta * cv[i])
					}
				}
				// C contiguous, and every other column of a wider array (computed
				// into a temporary holding beta*C and copied in).
				for _, view := range []mmView{vContig, vStep} {
					cc := mmOperand(t, s, c, cv, shape, view)
					if err := gpu.Gemm(s, alpha, a, b, beta, cc, gpu.WithKernel(md.kernel)); err != nil {
						t.Fatal(err)
					}
					got, err := cc.ToSlice(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					mmCheck(t, c, got, want, m, shapes[0][len(shapes[0])-1]+1, 0)
				}
			}
		}
	})
}

// TestMatMulEmpty checks empty dimensions: empty results, and zeros (or beta*C) for an
// inner dimension of 0, without a kernel.
func TestMatMulEmpty(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			s := md.d.DefaultStream()
			for _, c := range []struct{ a, b, out []int }{
				{[]int{0, 3}, []int{3, 4}, []int{0, 4}},
				{[]int{2, 3}, []int{3, 0}, []int{2, 0}},
				{[]int{0, 2, 3}, []int{3, 4}, []int{0, 2, 4}},
				{[]int{2, 0}, []int{0, 4}, []int{2, 4}},
				{[]int{0}, []int{0}, []int{}},
				{[]int{3, 2, 0}, []int{1, 0, 5}, []int{3, 2, 5}},
			} {
				a, _ := gpu.Ones[float32](s, c.a...)
				b, _ := gpu.Ones[float32](s, c.b...)
				out, err := gpu.MatMul(s, a, b, gpu.WithKernel(md.kernel))
				if err != nil {
					t.Fatalf("%v @ %v: %v", c.a, c.b, err)
				}
				if !slices.Equal(out.Shape(), c.out) {
					t.Errorf("%v @ %v: shape %v, want %v", c.a, c.b, out.Shape(), c.out)
				}
				got, _ := out.ToSlice(context.Background())
				for i, v := range got {
					if v != 0 {
						t.Errorf("%v @ %v: element %d = %v, want 0", c.a, c.b, i, v)
						break
					}
				}
				if len(got) > 0 {
					// beta*C with K = 0: beta 0 clears NaN; beta 2 doubles.
					if err := gpu.Fill(s, out, float32(math.NaN())); err != nil {
						t.Fatal(err)
					}
					if err := gpu.Gemm(s, 1, a, b, 0, out, gpu.WithKernel(md.kernel)); err != nil {
						t.Fatal(err)
					}
					got, _ = out.ToSlice(context.Background())
					if got[0] != 0 {
						t.Errorf("beta 0 with K = 0: %v", got[0])
					}
					gpu.Fill(s, out, float32(3))
					gpu.Gemm(s, 1, a, b, 2, out, gpu.WithKernel(md.kernel))
					got, _ = out.ToSlice(context.Background())
					if got[len(got)-1] != 6 {
						t.Errorf("beta 2 with K = 0: %v", got[len(got)-1])
					}
				}
				out.Free()
				a.Free()
				b.Free()
			}
		})
	}
}

// TestMatMulErrors checks that bad input gets a clear error naming the shapes.
func TestMatMulErrors(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := d.DefaultStream()
	f := func(shape ...int) *gpu.Array[float32] {
		a, err := gpu.Ones[float32](s, shape...)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a, b := f(3, 4), f(5, 6)
	if _, err := gpu.MatMul(s, a, b); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "[3 4]") ||
		!strings.Contains(err.Error(), "[5 6]") {
		t.Errorf("inner dimensions: %v", err)
	}
	if _, err := gpu.MatMul(s, f(2, 3, 4), f(3, 4, 2)); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "broadcast") {
		t.Errorf("batches: %v", err)
	}
	z, _ := gpu.Ones[float32](s)
	if _, err := gpu.MatMul(s, z, a); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("0-d operand: %v", err)
	}
	ia, _ := gpu.Ones[int32](s, 2, 2)
	if _, err := gpu.MatMul(s, ia, ia); !errors.Is(err, gpu.ErrNotSupported) || !strings.Contains(err.Error(), "int32") {
		t.Errorf("int32: %v", err)
	}
	// Outputs: wrong shape, broadcast, aliasing an input.
	x, y := f(4, 4), f(4, 4)
	if err := gpu.MatMulInto(s, f(4, 5), x, y); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "[4 5]") {
		t.Errorf("output shape: %v", err)
	}
	bc, _ := f(1, 4).BroadcastTo(4, 4)
	if err := gpu.MatMulInto(s, bc, x, y); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("broadcast output: %v", err)
	}
	if err := gpu.MatMulInto(s, x, x, y); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "overlaps") {
		t.Errorf("output is an input: %v", err)
	}
	big := f(8, 4)
	top, _ := big.Slice(gpu.R(0, 4))
	bottom, _ := big.Slice(gpu.R(4, 8))
	if err := gpu.MatMulInto(s, bottom, top, y); err != nil {
		t.Errorf("disjoint halves of one buffer: %v", err)
	}
	if err := gpu.MatMulInto(s, top, x, top); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("output is a view of an input: %v", err)
	}
	if err := gpu.Gemm(s, 1, x, y, 0, f(4, 4), nil); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("nil option: %v", err)
	}
	if _, err := gpu.MatMul(s, x, y, gpu.WithKernel(9)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("kernel 9: %v", err)
	}
	if _, err := gpu.MatMul(s, x, y, gpu.WithPrecision(9)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("precision 9: %v", err)
	}
	if _, err := gpu.MatMul(nil, x, y); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("nil stream: %v", err)
	}
	if _, err := gpu.MatMul(s, nil, y); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("nil array: %v", err)
	}
	if _, err := gpu.Dot(s, f(2, 2, 2), y); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Dot of 3-d: %v", err)
	}
	if _, err := gpu.Vdot(s, f(3), f(4)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Vdot of different sizes: %v", err)
	}
	if _, err := gpu.Dot(s, f(), f(2, 2, 2)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Dot of 0-d and 3-d: %v", err)
	}
	t.Setenv("GPU_MATMUL", "bogus")
	if _, err := gpu.MatMul(s, x, y); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "GPU_MATMUL") {
		t.Errorf("GPU_MATMUL=bogus: %v", err)
	}
}

// TestDotVdot checks Dot and Vdot against the reference, in every type.
func TestDotVdot(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			testDotVdot(t, md, codecF64())
			testDotVdot(t, md, codecF32())
			testDotVdot(t, md, codecF16())
			testDotVdot(t, md, codecBF16())
		})
	}
}

func testDotVdot[T gpu.Elem](t *testing.T, md mmDev, c mmCodec[T]) {
	t.Run(c.dt.String(), func(t *testing.T) {
		s := md.d.DefaultStream()
		rng := rand.New(rand.NewPCG(5, uint64(c.dt)))
		av, bv := mmValues(rng, c, 24), mmValues(rng, c, 24)
		a := mmOperand(t, s, c, av, []int{24}, vStep)
		b := mmOperand(t, s, c, bv, []int{24}, vContig)
		out, err := gpu.Dot(s, a, b, gpu.WithKernel(md.kernel))
		if err != nil {
			t.Fatal(err)
		}
		defer out.Free()
		ref, mag, _, _ := mmRef(av, []int{24}, bv, []int{24})
		got, _ := out.ToSlice(context.Background())
		if out.Ndim() != 0 || out.DType() != c.dt {
			t.Errorf("Dot of vectors: shape %v, %v", out.Shape(), out.DType())
		}
		mmCheck(t, c, got, ref, mag, 24, 0)
		// Vdot flattens: (4, 6) with (6, 4) transposed views.
		a2 := mmOperand(t, s, c, av, []int{4, 6}, vTrans)
		b2 := mmOperand(t, s, c, bv, []int{6, 4}, vContig)
		out2, err := gpu.Vdot(s, a2, b2, gpu.WithKernel(md.kernel))
		if err != nil {
			t.Fatal(err)
		}
		defer out2.Free()
		got, _ = out2.ToSlice(context.Background())
		mmCheck(t, c, got, ref, mag, 24, 0)
		// A 0-d operand scales the other, as numpy.dot(x, a) is x*a, in either order and
		// of a vector or a matrix.
		x := mmOperand(t, s, c, av[:1], nil, vContig)
		for _, sh := range [][]int{{24}, {4, 6}} {
			m := mmOperand(t, s, c, bv, sh, vContig)
			for _, order := range []string{"x, m", "m, x"} {
				p, q := x, m
				if order == "m, x" {
					p, q = m, x
				}
				out, err := gpu.Dot(s, p, q, gpu.WithKernel(md.kernel))
				if err != nil {
					t.Fatalf("Dot(%s) of shapes %v and %v: %v", order, p.Shape(), q.Shape(), err)
				}
				if !slices.Equal(out.Shape(), sh) {
					t.Errorf("Dot(%s): shape %v, want %v", order, out.Shape(), sh)
				}
				got, _ := out.ToSlice(context.Background())
				for i := range bv {
					want := c.to(c.round(av[0] * bv[i]))
					if got[i] != want {
						t.Errorf("Dot(%s)[%d] = %v, want %v", order, i, got[i], want)
						break
					}
				}
				out.Free()
			}
		}
	})
}

// TestMatMulGeneratedAlignment checks the generated kernel's layouts on the CPU: the
// spec follows the operands' transposes.
func TestMatMulSpecKeys(t *testing.T) {
	seen := map[string]bool{}
	for _, ta := range []bool{false, true} {
		for _, tb := range []bool{false, true} {
			for _, dt := range []dtype.DType{dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64} {
				sp := &kernel.MatMul{Type: dt, TransA: ta, TransB: tb}
				if err := sp.Validate(); err != nil {
					t.Fatal(err)
				}
				if seen[sp.Key()] {
					t.Errorf("duplicate key %s", sp.Key())
				}
				seen[sp.Key()] = true
			}
		}
	}
	if err := (&kernel.MatMul{Type: dtype.Float64, TF32: true}).Validate(); err == nil {
		t.Error("TF32 with float64 validated")
	}
}

// TestDense checks the conversions to and from gonum's mat.Dense.
func TestDense(t *testing.T) {
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	s := d.DefaultStream()
	ctx := context.Background()
	m := mat.NewDense(3, 4, nil)
	for i := range 3 {
		for j := range 4 {
			m.Set(i, j, float64(10*i+j)+0.1)
		}
	}
	sub := m.Slice(1, 3, 1, 4) // a view with a stride: rows copied one by one
	a, err := gpu.FromDense[float64](s, sub)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := a.ToSlice(ctx)
	if want := []float64{11.1, 12.1, 13.1, 21.1, 22.1, 23.1}; !slices.Equal(got, want) || !slices.Equal(a.Shape(), []int{2, 3}) {
		t.Errorf("FromDense(slice) = %v %v", a.Shape(), got)
	}
	f, err := gpu.FromDense[float32](s, m.T()) // no raw matrix: through At
	if err != nil {
		t.Fatal(err)
	}
	gf, _ := f.ToSlice(ctx)
	if !slices.Equal(f.Shape(), []int{4, 3}) || gf[1] != float32(10.1) || gf[3] != float32(1.1) {
		t.Errorf("FromDense(T) = %v %v", f.Shape(), gf)
	}
	back, err := gpu.ToDense(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	if r, c := back.Dims(); r != 4 || c != 3 || back.At(1, 2) != float64(float32(21.1)) {
		t.Errorf("ToDense: %dx%d, At(1, 2) = %v", r, c, back.At(1, 2))
	}
	tr, _ := a.Transpose() // a non-contiguous array
	dt, err := gpu.ToDense(ctx, tr)
	if err != nil || dt.At(2, 1) != 23.1 {
		t.Errorf("ToDense of a transpose: %v, %v", err, dt)
	}
	v, _ := gpu.FromSlice(s, []float64{1, 2}, 2)
	if _, err := gpu.ToDense(ctx, v); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("ToDense of a vector: %v", err)
	}
	if _, err := gpu.FromDense[float32](s, nil); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("FromDense(nil): %v", err)
	}
	// A nil *mat.Dense in the interface: its Dims would panic.
	if _, err := gpu.FromDense[float64](s, (*mat.Dense)(nil)); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("FromDense((*mat.Dense)(nil)): %v", err)
	}
}

// TestMatMulAlignedCopies runs the CPU backend's generated kernel with the CUDA
// kernel's alignment rule, so that the padded copies of operands whose rows are not
// 16-byte aligned (odd widths, offsets, transposes, batches) are checked.
func TestMatMulAlignedCopies(t *testing.T) {
	old := gpu.SetMatMulAlignOnCPU(true)
	defer gpu.SetMatMulAlignOnCPU(old)
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	md := mmDev{"cpu/generated/aligned", d, gpu.MatMulGenerated}
	testMatMulType(t, md, codecF32(), 0)
	testMatMulType(t, md, codecBF16(), 0)
}

// gemmer adapts Gemm to gonum's testblas.Dgemmer: the host matrices (with their leading
// dimensions) are copied to the device, viewed as gonum passes them (a transpose for
// blas.Trans, the first columns of each row), multiplied, and C copied back.
type gemmer struct {
	t      *testing.T
	s      *gpu.Stream
	kernel gpu.MatMulKernel
}

func (g gemmer) Dgemm(tA, tB blas.Transpose, m, n, k int, alpha float64, a []float64, lda int, b []float64, ldb int,
	beta float64, c []float64, ldc int) {
	t, s := g.t, g.s
	view := func(data []float64, ld, rows, cols int, tr bool) *gpu.Array[float64] {
		if tr {
			rows, cols = cols, rows
		}
		x, err := gpu.FromSlice(s, data[:rows*ld], rows, ld)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { x.Free() })
		v, err := x.Slice(gpu.R(), gpu.R(0, cols))
		if err == nil && tr {
			v, err = v.Transpose()
		}
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	av := view(a, lda, m, k, tA == blas.Trans)
	bv := view(b, ldb, k, n, tB == blas.Trans)
	cv := view(c, ldc, m, n, false)
	if err := gpu.Gemm(s, alpha, av, bv, beta, cv, gpu.WithKernel(g.kernel)); err != nil {
		t.Fatal(err)
	}
	host := make([]float64, m*ldc)
	whole, err := gpu.ArrayOf[float64](cv.Buffer(), m, ldc)
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.CopyToHost(context.Background(), host); err != nil {
		t.Fatal(err)
	}
	copy(c, host)
}

// TestGonumDgemm runs gonum's own Dgemm conformance cases (testblas.TestDgemm: every
// transpose, alpha and beta) through Gemm on every device and kernel.
func TestGonumDgemm(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			testblas.TestDgemm(t, gemmer{t, md.d.DefaultStream(), md.kernel})
		})
	}
}

// mmCheckIEEE compares got with a reference that may hold NaN and Inf: those must
// match exactly (a NaN for a NaN, an Inf of the same sign), the finite elements within
// mmCheck's tolerance.
func mmCheckIEEE[T gpu.Elem](t *testing.T, c mmCodec[T], got []T, ref, mag []float64, k int) {
	t.Helper()
	bad := 0
	for i, g := range got {
		v := c.from(g)
		var ok bool
		switch r := ref[i]; {
		case math.IsNaN(r):
			ok = math.IsNaN(v)
		case math.IsInf(r, 0):
			ok = v == r
		default:
			ok = math.Abs(v-r) <= 2*float64(k)*uAcc(c.dt)*mag[i]+c.uOut*math.Abs(r)
		}
		if !ok {
			if bad++; bad <= 5 {
				t.Errorf("element %d = %v, want %v", i, v, ref[i])
			}
		}
	}
	if bad > 5 {
		t.Errorf("%d elements of %d wrong", bad, len(got))
	}
}

// TestMatMulNonFinite checks that every product a_ik*b_kj counts as IEEE 754 has it
// (NumPy and cuBLAS): a zero (of either sign) in a times an Inf or a NaN in b is NaN,
// and so is an Inf in a times a zero in b. gonum's kernel, behind the CPU library,
// skips the zeros of A; these cases lost their NaNs there. Each type, device and
// kernel; small exact cases, then operands with zeros and non-finite values strewn in
// every layout (transposes, padded rows, copies, batches, broadcasts, vectors, and
// sizes that gonum splits over goroutines).
func TestMatMulNonFinite(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			testMatMulNonFinite(t, md, codecF32())
			testMatMulNonFinite(t, md, codecF64())
			testMatMulNonFinite(t, md, codecF16())
			testMatMulNonFinite(t, md, codecBF16())
		})
	}
}

func testMatMulNonFinite[T gpu.Elem](t *testing.T, md mmDev, c mmCodec[T]) {
	t.Run(c.dt.String(), func(t *testing.T) {
		s := md.d.DefaultStream()
		ctx := context.Background()
		inf, nan := math.Inf(1), math.NaN()
		opts := []gpu.MatMulOption{gpu.WithKernel(md.kernel)}
		for _, tc := range []struct {
			name      string
			av, bv    []float64
			as, bs    []int
			va, vb    mmView
			want      []float64
			dot, vdot bool
		}{
			{"zero*inf", []float64{0, 1}, []float64{inf, 1}, []int{1, 2}, []int{2, 1}, vContig, vContig, []float64{nan}, false, false},
			{"zero*nan", []float64{0, 1}, []float64{nan, 2}, []int{1, 2}, []int{2, 1}, vContig, vContig, []float64{nan}, false, false},
			{"-zero*-inf", []float64{math.Copysign(0, -1), 1}, []float64{-inf, 1}, []int{1, 2}, []int{2, 1}, vContig, vContig, []float64{nan}, false, false},
			{"outer", []float64{0, 1}, []float64{inf, 1}, []int{2, 1}, []int{1, 2}, vContig, vContig, []float64{nan, 0, inf, 1}, false, false},
			{"outer A^T B^T", []float64{0, 1}, []float64{inf, 1}, []int{2, 1}, []int{1, 2}, vTrans, vTrans, []float64{nan, 0, inf, 1}, false, false},
			{"A^T", []float64{0, 1, 2, 3}, []float64{inf, 1, 1, 1}, []int{2, 2}, []int{2, 2}, vTrans, vContig, []float64{nan, 1, inf, 5}, false, false},
			{"B^T", []float64{0, 1, 2, 3}, []float64{inf, 1, 1, 1}, []int{2, 2}, []int{2, 2}, vContig, vTrans, []float64{nan, 1, inf, 5}, false, false},
			{"inf*zero", []float64{inf, 1}, []float64{0, 1}, []int{1, 2}, []int{2, 1}, vContig, vContig, []float64{nan}, false, false},
			{"batch", []float64{1, 1, 0, 1}, []float64{1, 1, nan, 1}, []int{2, 1, 2}, []int{2, 2, 1}, vContig, vContig, []float64{2, nan}, false, false},
			{"broadcast B", []float64{1, 1, 0, 1}, []float64{inf, 1}, []int{2, 1, 2}, []int{2, 1}, vContig, vContig, []float64{inf, nan}, false, false},
			{"vector@matrix", []float64{0, 1}, []float64{1, inf, 1, 1}, []int{2}, []int{2, 2}, vContig, vContig, []float64{1, nan}, false, false},
			{"Dot", []float64{0, 1, 2}, []float64{nan, 1, 1}, []int{3}, []int{3}, vStep, vContig, []float64{nan}, false, true},
			{"Vdot", []float64{1, 0, 2, 3}, []float64{1, -inf, 1, 1}, []int{2, 2}, []int{2, 2}, vTrans, vContig, []float64{nan}, false, true},
		} {
			t.Run(tc.name, func(t *testing.T) {
				a := mmOperand(t, s, c, tc.av, tc.as, tc.va)
				b := mmOperand(t, s, c, tc.bv, tc.bs, tc.vb)
				var out *gpu.Array[T]
				var err error
				switch {
				case tc.dot:
					out, err = gpu.Dot(s, a, b, opts...)
				case tc.vdot:
					out, err = gpu.Vdot(s, a, b, opts...)
				default:
					out, err = gpu.MatMul(s, a, b, opts...)
				}
				if err != nil {
					t.Fatal(err)
				}
				defer out.Free()
				got, err := out.ToSlice(ctx)
				if err != nil {
					t.Fatal(err)
				}
				mmCheckIEEE(t, c, got, tc.want, make([]float64, len(tc.want)), 1)
			})
		}

		// Random operands with zeros and non-finite values (mmNonFiniteOperands),
		// through MatMul and Gemm (alpha 2, beta 0.5 on finite values of c).
		rng := rand.New(rand.NewPCG(23, uint64(c.dt)))
		for _, tc := range []mmCase{
			{[]int{5, 7}, []int{7, 4}, vContig, vContig},
			{[]int{5, 7}, []int{7, 4}, vTrans, vContig},
			{[]int{5, 7}, []int{7, 4}, vContig, vTrans},
			{[]int{5, 7}, []int{7, 4}, vTrans, vTrans},
			{[]int{6, 9}, []int{9, 5}, vPad, vStep},
			{[]int{6, 9}, []int{9, 5}, vRev, vPad},
			{[]int{3, 5, 7}, []int{3, 7, 4}, vTrans, vContig},
			{[]int{2, 1, 5, 7}, []int{3, 7, 4}, vContig, vTrans},
			{[]int{4, 5, 7}, []int{7, 4}, vContig, vContig},
			{[]int{7}, []int{2, 7, 4}, vContig, vContig},
			{[]int{5, 7}, []int{7}, vTrans, vStep},
			{[]int{130, 40}, []int{40, 129}, vContig, vContig}, // gonum's parallel blocks
			{[]int{130, 40}, []int{40, 129}, vTrans, vTrans},
		} {
			t.Run(tc.String(), func(t *testing.T) {
				av, bv, ref, mag, shape := mmNonFiniteOperands(t, rng, c, tc.a, tc.b)
				a := mmOperand(t, s, c, av, tc.a, tc.va)
				b := mmOperand(t, s, c, bv, tc.b, tc.vb)
				k := tc.a[len(tc.a)-1]
				out, err := gpu.MatMul(s, a, b, opts...)
				if err != nil {
					t.Fatal(err)
				}
				defer out.Free()
				got, err := out.ToSlice(ctx)
				if err != nil {
					t.Fatal(err)
				}
				mmCheckIEEE(t, c, got, ref, mag, k)

				cv := mmValues(rng, c, len(ref))
				cc := mmOperand(t, s, c, cv, shape, vContig)
				if err := gpu.Gemm(s, 2, a, b, 0.5, cc, opts...); err != nil {
					t.Fatal(err)
				}
				if got, err = cc.ToSlice(ctx); err != nil {
					t.Fatal(err)
				}
				want, m := make([]float64, len(ref)), make([]float64, len(ref))
				for i := range ref {
					want[i] = 2*ref[i] + 0.5*cv[i]
					m[i] = 2*mag[i] + math.Abs(0.5*cv[i])
				}
				mmCheckIEEE(t, c, got, want, m, k+1)
			})
		}
	})
}

// mmNonFiniteOperands returns the logical values of operands of shapes as and bs and
// their product's reference: a zero (of either sign) in about one element of a in four,
// an Inf of either sign or a NaN in one element of b in 200 (at least one), drawn again
// until some output has a zero of a meeting a non-finite value of b (a product that a
// kernel skipping zeros loses) and, where b has more than one column, some output is
// finite.
func mmNonFiniteOperands[T gpu.Elem](t *testing.T, rng *rand.Rand, c mmCodec[T], as, bs []int) (av, bv, ref, mag []float64, shape []int) {
	t.Helper()
	specials := []float64{math.Inf(1), math.Inf(-1), math.NaN()}
	for range 100 {
		av, bv = mmValues(rng, c, prod(as)), mmValues(rng, c, prod(bs))
		for i := range av {
			if rng.IntN(4) == 0 {
				av[i] = math.Copysign(0, float64(rng.IntN(2)*2-1))
			}
		}
		for range max(1, len(bv)/200) {
			bv[rng.IntN(len(bv))] = specials[rng.IntN(3)]
		}
		var err error
		if ref, mag, shape, err = mmRef(av, as, bv, bs); err != nil {
			t.Fatal(err)
		}
		// meets counts, for each output, the zeros of a that meet a non-finite value
		// of b.
		isZero, isSpecial := make([]float64, len(av)), make([]float64, len(bv))
		for i, x := range av {
			if x == 0 {
				isZero[i] = 1
			}
		}
		for i, x := range bv {
			if math.IsNaN(x) || math.IsInf(x, 0) {
				isSpecial[i] = 1
			}
		}
		meets, _, _, _ := mmRef(isZero, as, isSpecial, bs)
		finite := slices.ContainsFunc(ref, func(r float64) bool { return !math.IsNaN(r) && !math.IsInf(r, 0) })
		if slices.Max(meets) > 0 && (finite || len(bs) == 1 || bs[len(bs)-1] == 1) {
			return av, bv, ref, mag, shape
		}
	}
	t.Fatalf("no operands of shapes %v and %v in 100 draws where a zero meets a non-finite value", as, bs)
	return
}

// TestGemmUnderflow: alpha*a_ik that underflows to zero does not lose an Inf in b
// (alpha*(a_ik*Inf) is Inf); gonum's kernel skipped such a product.
func TestGemmUnderflow(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			s := md.d.DefaultStream()
			ctx := context.Background()
			a32 := must[*gpu.Array[float32]](t)(gpu.FromSlice(s, []float32{1e-30, 1}, 1, 2))
			b32 := must[*gpu.Array[float32]](t)(gpu.FromSlice(s, []float32{float32(math.Inf(1)), 1}, 2, 1))
			c32 := must[*gpu.Array[float32]](t)(gpu.Zeros[float32](s, 1, 1))
			if err := gpu.Gemm(s, 1e-30, a32, b32, 0, c32, gpu.WithKernel(md.kernel)); err != nil {
				t.Fatal(err)
			}
			if got := must[[]float32](t)(c32.ToSlice(ctx)); !math.IsInf(float64(got[0]), 1) {
				t.Errorf("float32: 1e-30 * ([1e-30 1] @ [Inf 1]) = %v, want +Inf", got[0])
			}
			a64 := must[*gpu.Array[float64]](t)(gpu.FromSlice(s, []float64{1e-200, 1}, 1, 2))
			b64 := must[*gpu.Array[float64]](t)(gpu.FromSlice(s, []float64{math.Inf(-1), 1}, 2, 1))
			c64 := must[*gpu.Array[float64]](t)(gpu.Zeros[float64](s, 1, 1))
			if err := gpu.Gemm(s, 1e-200, a64, b64, 0, c64, gpu.WithKernel(md.kernel)); err != nil {
				t.Fatal(err)
			}
			if got := must[[]float64](t)(c64.ToSlice(ctx)); !math.IsInf(got[0], -1) {
				t.Errorf("float64: 1e-200 * ([1e-200 1] @ [-Inf 1]) = %v, want -Inf", got[0])
			}
		})
	}
}

// TestGemmAlphaZero: with alpha zero as the product applies it (0, and 1e-300 for all
// but float64: zero in float32, the accumulation type), a and b are not read
// (reference BLAS), so their NaN and Inf do not reach c: c becomes beta*c, zeros for
// beta 0 (c not read either), unchanged for beta 1, with every kernel alike (the
// generated kernel multiplied by a float32 zero and made NaN where the library kept c).
// An empty sum (k == 0) is beta*c too. beta*c is computed in the accumulation type
// (float32 for float32 and the 16-bit types) and rounded once to the element type:
// betas of 0.1 and 1/3, not exact in any type, tell that from a product in float16 or
// bfloat16. Each type, device and kernel, in layouts gonum treats differently (its
// A @ B^T takes dot products).
func TestGemmAlphaZero(t *testing.T) {
	for _, md := range mmDevices(t) {
		t.Run(md.name, func(t *testing.T) {
			testGemmAlphaZero(t, md, codecF32())
			testGemmAlphaZero(t, md, codecF64())
			testGemmAlphaZero(t, md, codecF16())
			testGemmAlphaZero(t, md, codecBF16())
		})
	}
}

func testGemmAlphaZero[T gpu.Elem](t *testing.T, md mmDev, c mmCodec[T]) {
	t.Run(c.dt.String(), func(t *testing.T) {
		s := md.d.DefaultStream()
		inf, nan := math.Inf(1), math.NaN()
		av := []float64{inf, nan, 0, -inf, 1, 2}
		bv := []float64{nan, 0, inf, 1, -inf, 3}
		cv := []float64{3, -5, 7, 11}
		// want is beta*x as documented: in float32 for all but float64, rounded once.
		want := func(beta, x float64) float64 {
			if beta == 0 {
				return 0
			}
			if c.dt == dtype.Float64 {
				return beta * x
			}
			return c.round(float64(float32(beta) * float32(x)))
		}
		alphas := []float64{0, 1e-300}
		if c.dt == dtype.Float64 {
			alphas = alphas[:1] // 1e-300 is not zero in float64
		}
		check := func(what string, cc *gpu.Array[T], beta float64, cin []float64) {
			t.Helper()
			got := must[[]T](t)(cc.ToSlice(context.Background()))
			for i, g := range got {
				if w := want(beta, cin[i]); c.from(g) != w {
					t.Errorf("%s, beta %v: c[%d] = %v, want %v", what, beta, i, c.from(g), w)
				}
			}
		}
		for _, beta := range []float64{0, 1, 2, 0.1, 1.0 / 3} {
			cin := cv
			if beta == 0 {
				cin = []float64{nan, nan, inf, nan}
			}
			for _, alpha := range alphas {
				for _, views := range [][2]mmView{{vContig, vContig}, {vContig, vTrans}, {vTrans, vContig}, {vTrans, vTrans}} {
					a := mmOperand(t, s, c, av, []int{2, 3}, views[0])
					b := mmOperand(t, s, c, bv, []int{3, 2}, views[1])
					cc := mmOperand(t, s, c, cin, []int{2, 2}, vContig)
					if err := gpu.Gemm(s, alpha, a, b, beta, cc, gpu.WithKernel(md.kernel)); err != nil {
						t.Fatal(err)
					}
					check(fmt.Sprintf("alpha %v, %v", alpha, views), cc, beta, cin)
				}
			}
			// k == 0: an empty sum, whatever alpha.
			a := mmOperand(t, s, c, nil, []int{2, 0}, vContig)
			b := mmOperand(t, s, c, nil, []int{0, 2}, vContig)
			cc := mmOperand(t, s, c, cin, []int{2, 2}, vContig)
			if err := gpu.Gemm(s, 1, a, b, beta, cc, gpu.WithKernel(md.kernel)); err != nil {
				t.Fatal(err)
			}
			check("k == 0", cc, beta, cin)
		}
	})
}

// TestMatMulErrorNames: each error names the call the caller made (Dot and Vdot run
// MatMul, MatMulInto runs Gemm) and wraps the sentinel.
func TestMatMulErrorNames(t *testing.T) {
	d := must[*gpu.Device](t)(gpu.OpenBackend("cpu", 0))
	s := d.DefaultStream()
	i32 := func(shape ...int) *gpu.Array[int32] { return must[*gpu.Array[int32]](t)(gpu.Ones[int32](s, shape...)) }
	f32 := func(shape ...int) *gpu.Array[float32] {
		return must[*gpu.Array[float32]](t)(gpu.Ones[float32](s, shape...))
	}
	check := func(what string, err, sentinel error, name string) {
		t.Helper()
		if !errors.Is(err, sentinel) {
			t.Errorf("%s = %v, want an error wrapping %v", what, err, sentinel)
			return
		}
		if msg := err.Error(); !strings.HasPrefix(msg, "gpu: "+name+" ") {
			t.Errorf("%s = %q, want it to start with %q", what, msg, "gpu: "+name+" ")
		}
	}
	_, err := gpu.MatMul(s, i32(2, 2), i32(2, 2))
	check("MatMul of int32", err, gpu.ErrNotSupported, "MatMul")
	_, err = gpu.Dot(s, i32(3), i32(3))
	check("Dot of int32", err, gpu.ErrNotSupported, "Dot")
	_, err = gpu.Dot(s, f32(2, 3), f32(4, 2))
	check("Dot of (2, 3) and (4, 2)", err, gpu.ErrInvalidValue, "Dot")
	_, err = gpu.Vdot(s, i32(2, 2), i32(4))
	check("Vdot of int32", err, gpu.ErrNotSupported, "Vdot")
	err = gpu.MatMulInto(s, f32(4, 5), f32(4, 4), f32(4, 4))
	check("MatMulInto of a (4, 5) output", err, gpu.ErrInvalidValue, "MatMulInto")
	err = gpu.MatMulInto(s, f32(3), f32(2, 3), f32(4, 2))
	check("MatMulInto of (2, 3) and (4, 2)", err, gpu.ErrInvalidValue, "MatMulInto")
	x := f32(4, 4)
	err = gpu.MatMulInto(s, x, x, f32(4, 4))
	check("MatMulInto into an input", err, gpu.ErrInvalidValue, "MatMulInto")
	err = gpu.Gemm(s, 1, f32(4, 4), f32(4, 4), 0, f32(4, 5))
	check("Gemm into a (4, 5) output", err, gpu.ErrInvalidValue, "Gemm")
}
