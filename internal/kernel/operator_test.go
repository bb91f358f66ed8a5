package kernel

import (
	"math"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/fp"
)

// The operator table: the CPU loops' combine equals the operator's expression as expr
// evaluates it, bit for bit (NaNs included); the PTX lowering of the expression equals
// it too; the identity is one; the arg operators' Go order equals their expression.

var opTypes = []dtype.DType{dtype.Bool, dtype.Int8, dtype.Int16, dtype.Int32, dtype.Int64,
	dtype.Uint8, dtype.Uint16, dtype.Uint32, dtype.Uint64, dtype.Float32, dtype.Float64}

// opValues returns special values of t as bits: the harness's specials, and for floats
// NaNs with payloads and both signs.
func opValues(t dtype.DType) []uint64 {
	var out []uint64
	switch {
	case t == dtype.Bool:
		return []uint64{0, 1}
	case t.IsInteger():
		for _, v := range specialU64 {
			out = append(out, v&(^uint64(0)>>(64-t.Bits())))
		}
		return out
	}
	for _, f := range specialF64 {
		if t == dtype.Float32 {
			out = append(out, uint64(math.Float32bits(float32(f))))
		} else {
			out = append(out, math.Float64bits(f))
		}
	}
	if t == dtype.Float32 {
		return append(out, 0xffc00123, 0x7fc00001, 0x7f800001, fp.NaN32Bits)
	}
	return append(out, 0xfff8000000000123, 0x7ff8000000000001, 0x7ff0000000000001, fp.NaN64Bits)
}

// canonBits is the canonical NaN of float type t.
func canonBits(t dtype.DType) uint64 {
	if t == dtype.Float64 {
		return fp.NaN64Bits
	}
	return fp.NaN32Bits
}

// opPairs returns every pair of vs as two columns.
func opPairs(vs []uint64) (a, b []uint64) {
	for _, x := range vs {
		for _, y := range vs {
			a, b = append(a, x), append(b, y)
		}
	}
	return a, b
}

func opBytes(t dtype.DType, vs []uint64) []byte {
	out := make([]byte, len(vs)*t.Size())
	for i, v := range vs {
		putBits(out[i*t.Size():], t.Size(), v)
	}
	return out
}

// evalExpr evaluates e over columns of bits, as the CPU's expression machinery does.
func evalExpr(t *testing.T, e *expr.Expr, cols ...[]uint64) []uint64 {
	t.Helper()
	p, err := e.Compile()
	if err != nil {
		t.Fatal(err)
	}
	n := len(cols[0])
	ins := make([][]byte, len(cols))
	for k, c := range cols {
		ins[k] = opBytes(e.Inputs[k].DType, c)
	}
	rt := e.DType()
	out := make([]byte, n*rt.Size())
	if err := p.EvalBytes(n, out, ins, nil); err != nil {
		t.Fatal(err)
	}
	res := make([]uint64, n)
	for i := range res {
		res[i] = getBits(out[i*rt.Size():], rt.Size())
	}
	return res
}

// tableCombine is the CPU loops' combine (CombineFunc) over columns of bits.
func tableCombine(op Op, t dtype.DType, a, b []uint64) []uint64 {
	op = op.For(t)
	switch t {
	case dtype.Bool, dtype.Uint8:
		return combineCols[uint8](op, a, b)
	case dtype.Int8:
		return combineCols[int8](op, a, b)
	case dtype.Int16:
		return combineCols[int16](op, a, b)
	case dtype.Int32:
		return combineCols[int32](op, a, b)
	case dtype.Int64:
		return combineCols[int64](op, a, b)
	case dtype.Uint16:
		return combineCols[uint16](op, a, b)
	case dtype.Uint32:
		return combineCols[uint32](op, a, b)
	case dtype.Uint64:
		return combineCols[uint64](op, a, b)
	case dtype.Float32:
		return combineCols[float32](op, a, b)
	}
	return combineCols[float64](op, a, b)
}

func combineCols[A fp.Number](op Op, a, b []uint64) []uint64 {
	f := CombineFunc[A](op)
	out := make([]uint64, len(a))
	for i := range a {
		out[i] = fp.Bits(f(fp.FromBits[A](a[i]), fp.FromBits[A](b[i])))
	}
	// fold, foldVec and scanRows must agree with f too.
	if len(a) > 0 {
		x := make([]A, len(a))
		acc := make([]A, len(a))
		for i := range a {
			acc[i], x[i] = fp.FromBits[A](a[i]), fp.FromBits[A](b[i])
		}
		foldVec(op, acc, x)
		for i := range acc {
			if fp.Bits(acc[i]) != out[i] {
				panic("foldVec disagrees with combine")
			}
		}
	}
	return out
}

func TestOperatorTable(t *testing.T) {
	for _, op := range []Op{OpSum, OpProd, OpMin, OpMax, OpAnd, OpOr, OpXor} {
		for _, ty := range opTypes {
			if !op.Accepts(ty) {
				if op <= OpMax || ty.IsInteger() || ty == dtype.Bool {
					t.Errorf("%v refuses %v", op, ty)
				}
				continue
			}
			vs := opValues(ty)
			a, b := opPairs(vs)
			e := op.Expr(ty)
			want := evalExpr(t, e, a, b)
			got := tableCombine(op, ty, a, b)
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("%v on %v: CPU combine(%#x, %#x) = %#x, expression %#x", op, ty, a[i], b[i], got[i], want[i])
					break
				}
				if ty.IsFloat() && isNaNBits(ty, want[i]) && want[i] != canonBits(ty) {
					t.Errorf("%v on %v: (%#x, %#x) = %#x, a NaN that isn't canonical", op, ty, a[i], b[i], want[i])
					break
				}
			}
			// The identity: id ∘ x == x == x ∘ id (a NaN x gives the canonical NaN).
			id := op.Identity(ty).Bits()
			ids := make([]uint64, len(vs))
			for i := range ids {
				ids[i] = id
			}
			for _, r := range [][]uint64{evalExpr(t, e, ids, vs), evalExpr(t, e, vs, ids)} {
				for i, x := range vs {
					if ty.IsFloat() && isNaNBits(ty, x) {
						x = canonBits(ty)
					}
					if op == OpSum && ty.IsFloat() && x == 1<<(ty.Bits()-1) {
						continue // +0 is NumPy's identity of add: 0 + -0 is +0
					}
					if r[i] != x {
						t.Errorf("%v on %v: identity %#x with %#x gives %#x", op, ty, id, vs[i], r[i])
						break
					}
				}
			}
			// PTX: the operator's expression as an elementwise kernel in the
			// simulator, against the CPU bit for bit.
			ew := &Elementwise{Expr: e, Ins: []Operand{{ty, Contig}, {ty, Contig}}, Out: Operand{ty, Contig}}
			opCheckPTX(t, ew, a, b)
		}
	}
}

// opCheckPTX runs ew over the columns on the simulator and compares the output with
// the CPU's bit for bit (NaN payloads included).
func opCheckPTX(t *testing.T, ew *Elementwise, cols ...[]uint64) {
	t.Helper()
	src, entry, err := ew.PTX(9, 0)
	if err != nil {
		t.Fatalf("%s: %v", ew.Key(), err)
	}
	data := map[int][]uint64{}
	for k, c := range cols {
		data[k] = c
	}
	n := len(cols[0])
	grid, blk := ew.Geometry(n, 2)
	c := &ewCase{e: ew, n: n, grid: grid, blk: blk, seed: 1, data: data}
	res := c.run(t, src, entry)
	size := ew.Out.DType.Size()
	for i, off := range res.outOffs {
		g, w := getBits(res.got[off:], size), getBits(res.want[off:], size)
		if g != w {
			var in []uint64
			for _, col := range cols {
				in = append(in, col[i%len(col)])
			}
			t.Errorf("%s: PTX gives %#x for %#x, the CPU %#x", ew.Expr, g, in, w)
			return
		}
	}
}

func TestArgBefore(t *testing.T) {
	for _, ty := range []dtype.DType{dtype.Bool, dtype.Int8, dtype.Uint32, dtype.Int64, dtype.Float32, dtype.Float64} {
		vs := opValues(ty)
		if len(vs) > 24 {
			vs = append(vs[:12], vs[len(vs)-12:]...) // zeros, ones, infinities, NaNs
		}
		var av, ai, bv, bi []uint64
		for _, x := range vs {
			for _, y := range vs {
				for _, ix := range []int64{0, 3} {
					for _, iy := range []int64{0, 3, 5} {
						av, ai, bv, bi = append(av, x), append(ai, uint64(ix)), append(bv, y), append(bi, uint64(iy))
					}
				}
			}
		}
		for _, op := range []Op{OpArgMin, OpArgMax} {
			in := func(slot int, t dtype.DType) *expr.Input { return &expr.Input{Slot: slot, Type: t} }
			e := &expr.Expr{Root: op.Before(in(0, ty), in(1, dtype.Int64), in(2, ty), in(3, dtype.Int64)),
				Inputs: []expr.Slot{{Index: 0, DType: ty}, {Index: 1, DType: dtype.Int64}, {Index: 2, DType: ty}, {Index: 3, DType: dtype.Int64}}}
			want := evalExpr(t, e, av, ai, bv, bi)
			for i := range want {
				got := argBeforeBits(op == OpArgMin, ty, av[i], int64(ai[i]), bv[i], int64(bi[i]))
				if got != (want[i] != 0) {
					t.Errorf("%v on %v: (%#x, %d) before (%#x, %d): Go %v, expression %v", op, ty, bv[i], bi[i], av[i], ai[i], got, want[i] != 0)
					break
				}
			}
			ew := &Elementwise{Expr: e, Out: Operand{dtype.Bool, Contig},
				Ins: []Operand{{ty, Contig}, {dtype.Int64, Contig}, {ty, Contig}, {dtype.Int64, Contig}}}
			opCheckPTX(t, ew, av, ai, bv, bi)
		}
	}
}

func argBeforeBits(isMin bool, t dtype.DType, av uint64, ai int64, bv uint64, bi int64) bool {
	switch t {
	case dtype.Bool, dtype.Uint8:
		return argBefore(isMin, uint8(av), ai, uint8(bv), bi)
	case dtype.Int8:
		return argBefore(isMin, int8(av), ai, int8(bv), bi)
	case dtype.Uint32:
		return argBefore(isMin, uint32(av), ai, uint32(bv), bi)
	case dtype.Int64:
		return argBefore(isMin, int64(av), ai, int64(bv), bi)
	case dtype.Float32:
		return argBefore(isMin, math.Float32frombits(uint32(av)), ai, math.Float32frombits(uint32(bv)), bi)
	}
	return argBefore(isMin, math.Float64frombits(av), ai, math.Float64frombits(bv), bi)
}

// TestOperatorLoops checks the CPU loops against combine, element by element, on data
// with NaNs: fold, foldRows and scanRows (inclusive and exclusive, one and several
// columns).
func TestOperatorLoops(t *testing.T) {
	raw := opValues(dtype.Float32)
	x := make([]float32, 0, 4*len(raw))
	for i := 0; i < 4; i++ {
		for _, b := range raw {
			x = append(x, math.Float32frombits(uint32(b)))
		}
	}
	same := func(a, b float32) bool { return math.Float32bits(a) == math.Float32bits(b) }
	for _, op := range []Op{OpSum, OpProd, OpMin, OpMax} {
		id := fp.FromBits[float32](op.Identity(dtype.Float32).Bits())
		for _, inner := range []int{1, 3} {
			n := len(x) / inner * inner
			xs := x[:n]
			// the reference: a sequential combine per column
			want := make([]float32, n)
			run := make([]float32, inner)
			for j := range run {
				run[j] = id
			}
			for i, v := range xs {
				run[i%inner] = combine(op, run[i%inner], v)
				want[i] = run[i%inner]
			}
			acc := make([]float32, inner)
			for j := range acc {
				acc[j] = id
			}
			foldRows(op, acc, xs)
			for j := range acc {
				if !same(acc[j], run[j]) {
					t.Errorf("%v foldRows inner %d column %d: %#x, want %#x", op, inner, j, math.Float32bits(acc[j]), math.Float32bits(run[j]))
				}
			}
			for _, excl := range []bool{false, true} {
				got := append([]float32(nil), xs...)
				r := make([]float32, inner)
				for j := range r {
					r[j] = id
				}
				scanRows(op, r, got, excl)
				for i := range got {
					w := want[i]
					if excl {
						w = id
						if i >= inner {
							w = want[i-inner]
						}
					}
					if !same(got[i], w) {
						t.Errorf("%v scanRows inner %d excl %v [%d]: %#x, want %#x", op, inner, excl, i, math.Float32bits(got[i]), math.Float32bits(w))
						break
					}
				}
			}
		}
	}
}
