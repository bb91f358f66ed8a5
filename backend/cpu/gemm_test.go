package cpu

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
)

// gemmMem stores values (row-major matrices as the test lays them out) as t's elements.
func gemmMem(t dtype.DType, vals []float64) *Mem {
	size := t.Size()
	buf := make([]byte, len(vals)*size)
	for i, v := range vals {
		switch t {
		case dtype.Float64:
			binary.LittleEndian.PutUint64(buf[i*8:], math.Float64bits(v))
		case dtype.Float32:
			binary.LittleEndian.PutUint32(buf[i*4:], math.Float32bits(float32(v)))
		case dtype.Float16:
			binary.LittleEndian.PutUint16(buf[i*2:], dtype.Float16FromFloat32(float32(v)))
		case dtype.BFloat16:
			binary.LittleEndian.PutUint16(buf[i*2:], dtype.BFloat16FromFloat32(float32(v)))
		}
	}
	return &Mem{buf: buf}
}

// gemmValue reads element i of m as t.
func gemmValue(t dtype.DType, m *Mem, i int) float64 {
	switch t {
	case dtype.Float64:
		return math.Float64frombits(binary.LittleEndian.Uint64(m.buf[i*8:]))
	case dtype.Float32:
		return float64(math.Float32frombits(binary.LittleEndian.Uint32(m.buf[i*4:])))
	case dtype.Float16:
		return float64(dtype.Float16ToFloat32(binary.LittleEndian.Uint16(m.buf[i*2:])))
	}
	return float64(dtype.BFloat16ToFloat32(binary.LittleEndian.Uint16(m.buf[i*2:])))
}

// TestGemmIEEE checks the backend's Gemm against a float64 reference that counts every
// product as IEEE 754 does (0*Inf and 0*NaN are NaN), in every type and layout (gonum
// skips a row of op(B) where alpha*a_il is 0 in all but A @ B^T), batched (B repeated
// with a stride of 0 in some), with leading dimensions wider than the rows (their
// padding NaN, never read), for alpha and beta of several kinds, alpha == 0 reading
// neither A nor B. The values are small integers, so that every result is exact in
// every type and compared exactly (a NaN for a NaN).
func TestGemmIEEE(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inf, nan := math.Inf(1), math.NaN()
	const m, n, k, batch = 5, 4, 6, 3
	for _, typ := range []dtype.DType{dtype.Float64, dtype.Float32, dtype.Float16, dtype.BFloat16} {
		for _, tA := range []bool{false, true} {
			for _, tB := range []bool{false, true} {
				for _, bStride0 := range []bool{false, true} {
					for _, ab := range [][2]float64{{1, 0}, {-2, 0.5}, {0, 0}, {0, 1}, {0, -3}} {
						name := fmt.Sprintf("%v/transA=%v/transB=%v/broadcastB=%v/alpha=%v/beta=%v", typ, tA, tB, bStride0, ab[0], ab[1])
						testGemmIEEE(t, name, rng, typ, tA, tB, bStride0, ab[0], ab[1], m, n, k, batch, inf, nan)
					}
				}
			}
		}
	}
}

func testGemmIEEE(t *testing.T, name string, rng *rand.Rand, typ dtype.DType, tA, tB, bStride0 bool, alpha, beta float64,
	m, n, k, batch int, inf, nan float64) {
	// op(A)[b][i][l], op(B)[b][l][j], C[b][i][j] as logical values.
	opA := make([]float64, batch*m*k)
	for i := range opA {
		opA[i] = []float64{-2, -1, 0, math.Copysign(0, -1), 1, 2}[rng.IntN(6)]
	}
	opB := make([]float64, batch*k*n)
	for i := range opB {
		opB[i] = []float64{-2, -1, 1, 2}[rng.IntN(4)]
	}
	for _, x := range []float64{inf, -inf, nan} { // (in the first matrix: B may be repeated)
		opB[rng.IntN(k*n)] = x
	}
	opA[rng.IntN(m*k)] = inf // and the mirror case: Inf in A
	cv := make([]float64, batch*m*n)
	for i := range cv {
		cv[i] = float64(rng.IntN(5) - 2)
		if beta == 0 {
			cv[i] = nan // never read
		}
	}
	// Stored operands: A (m x k, or k x m transposed), B likewise, C m x n; each row
	// padded with 2 NaN.
	store := func(vals []float64, nb, rows, cols int, trans bool) (data []float64, ld, stride int) {
		sr, sc := rows, cols
		if trans {
			sr, sc = cols, rows
		}
		ld, stride = sc+2, sr*(sc+2)
		data = make([]float64, nb*stride)
		for i := range data {
			data[i] = nan
		}
		for b := range nb {
			for r := range rows {
				for c := range cols {
					at := b*stride + r*ld + c
					if trans {
						at = b*stride + c*ld + r
					}
					data[at] = vals[b*rows*cols+r*cols+c]
				}
			}
		}
		return data, ld, stride
	}
	nbB := batch
	if bStride0 {
		nbB = 1
	}
	ad, lda, sa := store(opA, batch, m, k, tA)
	bd, ldb, sb := store(opB, nbB, k, n, tB)
	cd, ldc, scs := store(cv, batch, m, n, false)
	if bStride0 {
		sb = 0
	}
	g := backend.Gemm{
		Type: typ, M: m, N: n, K: k, Batch: batch, TransA: tA, TransB: tB, Alpha: alpha, Beta: beta,
		A: backend.GemmOperand{Mem: gemmMem(typ, ad), LD: lda, Stride: int64(sa)},
		B: backend.GemmOperand{Mem: gemmMem(typ, bd), LD: ldb, Stride: int64(sb)},
		C: backend.GemmOperand{Mem: gemmMem(typ, cd), LD: ldc, Stride: int64(scs)},
	}
	if err := g.Check(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	gemm(2, &g)
	bad := 0
	for b := range batch {
		bb := b
		if bStride0 {
			bb = 0
		}
		for i := range m {
			for j := range n {
				want := 0.0
				if alpha != 0 {
					var sum float64
					for l := range k {
						sum += opA[b*m*k+i*k+l] * opB[bb*k*n+l*n+j]
					}
					want = alpha * sum
				}
				if beta != 0 {
					want += beta * cv[b*m*n+i*n+j]
				}
				got := gemmValue(typ, g.C.Mem.(*Mem), b*scs+i*ldc+j)
				if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
					if bad++; bad <= 3 {
						t.Errorf("%s: C[%d][%d][%d] = %v, want %v", name, b, i, j, got, want)
					}
				}
			}
		}
	}
	// The padding of C is untouched.
	for b := range batch {
		for i := range m {
			for c := n; c < ldc; c++ {
				if v := gemmValue(typ, g.C.Mem.(*Mem), b*scs+i*ldc+c); !math.IsNaN(v) {
					t.Errorf("%s: C's padding at [%d][%d][%d] written: %v", name, b, i, c, v)
				}
			}
		}
	}
}

// TestGemmTinyAlpha: an alpha that is zero only in float32 (1e-300) is zero for every
// type but float64 (backend.GemmAlphaZero, the rule package gpu's Gemm uses too): A
// and B are not read, so A's NaN and Inf do not reach C, which becomes Beta*C in
// float32, rounded once. For float64 it is an ordinary alpha, and A's NaN and Inf do.
func TestGemmTinyAlpha(t *testing.T) {
	const alpha, beta = 1e-300, 0.1
	inf, nan := math.Inf(1), math.NaN()
	cv := []float64{3, -5, 7, 11}
	for _, typ := range []dtype.DType{dtype.Float64, dtype.Float32, dtype.Float16, dtype.BFloat16} {
		g := backend.Gemm{
			Type: typ, M: 2, N: 2, K: 2, Batch: 1, Alpha: alpha, Beta: beta,
			A: backend.GemmOperand{Mem: gemmMem(typ, []float64{nan, 1, inf, 2}), LD: 2},
			B: backend.GemmOperand{Mem: gemmMem(typ, []float64{1, 2, 3, 4}), LD: 2},
			C: backend.GemmOperand{Mem: gemmMem(typ, cv), LD: 2},
		}
		if err := g.Check(); err != nil {
			t.Fatalf("%v: %v", typ, err)
		}
		gemm(2, &g)
		for i, x := range cv {
			got := gemmValue(typ, g.C.Mem.(*Mem), i)
			var want float64
			switch typ {
			case dtype.Float64:
				want = []float64{nan, nan, inf, inf}[i]
			default:
				y := float32(beta) * float32(x) // one rounding to the type:
				want = gemmValue(typ, gemmMem(typ, []float64{float64(y)}), 0)
			}
			if got != want && !(math.IsNaN(got) && math.IsNaN(want)) {
				t.Errorf("%v: Gemm(alpha %v, beta %v): C[%d] = %v, want %v", typ, alpha, beta, i, got, want)
			}
		}
	}
}
