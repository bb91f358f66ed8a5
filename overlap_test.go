package gpu_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/go-gpu/gpu"
)

// elementBytes is the set of allocation bytes of a's elements, from its shape, strides,
// offset and buffer offset alone: the brute-force answer SharesMemory must give.
func elementBytes[T gpu.Elem](a *gpu.Array[T]) map[int64]bool {
	_, bo := a.Buffer().BackendMem()
	es := int64(a.DType().Size())
	set := map[int64]bool{}
	shape, st := a.Shape(), a.Strides()
	idx := make([]int, len(shape))
	for n := a.Size(); n > 0; n-- {
		e := int64(a.Offset())
		for i, x := range idx {
			e += int64(x) * int64(st[i])
		}
		for b := range es {
			set[bo+e*es+b] = true
		}
		for i := len(idx) - 1; i >= 0; i-- {
			if idx[i]++; idx[i] < shape[i] {
				break
			}
			idx[i] = 0
		}
	}
	return set
}

// SharesMemory and MayShareMemory of views NumPy's tests take: disjoint views of one
// allocation, overlapping reversed and strided ones, the same array, other
// allocations, broadcast views, empty arrays and views of other element types.
func TestSharesMemory(t *testing.T) {
	s := freshStream(t)
	bufOK, i32OK, i64OK := must[*gpu.Buffer](t), must[*gpu.Array[int32]](t), must[*gpu.Array[int64]](t)
	buf := bufOK(s.Alloc(4 * 24))
	defer buf.Free()
	a := i32OK(gpu.ArrayOf[int32](buf, 24))
	m := i32OK(gpu.ArrayOf[int32](buf, 4, 6))
	i64 := i64OK(gpu.ArrayOf[int64](buf, 12))
	tail := bufOK(buf.Slice(4, 4*23))
	shifted := i32OK(gpu.ArrayOf[int32](tail, 23)) // a[1:] through another Buffer
	other := i32OK(gpu.Zeros[int32](s, 24))
	defer other.Free()
	sl := func(x *gpu.Array[int32], r ...gpu.Range) *gpu.Array[int32] { return i32OK(x.Slice(r...)) }
	row0 := i32OK(sl(m, gpu.R(0, 1)).BroadcastTo(3, 6))
	for _, tc := range []struct {
		name       string
		x, y       gpu.AnyArray
		may, share bool
	}{
		{"a, a", a, a, true, true},
		{"a, a reversed", a, i32OK(a.Flip()), true, true},
		{"a[1:], a[:23]", sl(a, gpu.R(1, 24)), sl(a, gpu.R(0, 23)), true, true},
		{"a[:12], a[12:]", sl(a, gpu.R(0, 12)), sl(a, gpu.R(12, 24)), false, false},
		{"a[::2], a[1::2]", sl(a, gpu.R(0, 24, 2)), sl(a, gpu.R(1, 24, 2)), true, false},
		{"a[::2], a[::3]", sl(a, gpu.R(0, 24, 2)), sl(a, gpu.R(0, 24, 3)), true, true},
		{"a[1::4], a[::-2]", sl(a, gpu.R(1, 24, 4)), sl(a, gpu.R(23, -25, -2)), true, true},
		{"a[::4], a[::-2]", sl(a, gpu.R(0, 24, 4)), sl(a, gpu.R(23, -25, -2)), true, false},
		{"m[:, :3], m[:, 3:]", sl(m, gpu.R(), gpu.R(0, 3)), sl(m, gpu.R(), gpu.R(3, 6)), true, false},
		{"m[:, 0], m[:, 1]", sl(m, gpu.R(), gpu.R(0, 1)), sl(m, gpu.R(), gpu.R(1, 2)), true, false},
		{"m[:, 2:4], m[1:3, 3:5]", sl(m, gpu.R(), gpu.R(2, 4)), sl(m, gpu.R(1, 3), gpu.R(3, 5)), true, true},
		{"m transposed, m[3]", i32OK(m.Transpose()), sl(m, gpu.R(3, 4)), true, true},
		{"m[0] broadcast, m[1:]", row0, sl(m, gpu.R(1, 4)), false, false},
		{"m[0] broadcast, m", row0, m, true, true},
		{"m[1, 2] broadcast, m[::2, ::2]", i32OK(sl(m, gpu.R(1, 2), gpu.R(2, 3)).BroadcastTo(2, 3)), sl(m, gpu.R(0, 4, 2), gpu.R(0, 6, 2)), true, false},
		{"a, other", a, other, false, false},
		{"a[5:5], a", sl(a, gpu.R(5, 5)), a, false, false},
		{"a, m[:0, :]", a, sl(m, gpu.R(0, 0)), false, false},
		{"int64 [1], int32 [2:4]", i64OK(i64.Slice(gpu.R(1, 2))), sl(a, gpu.R(2, 4)), true, true},
		{"int64 [1], int32 [:2]", i64OK(i64.Slice(gpu.R(1, 2))), sl(a, gpu.R(0, 2)), false, false},
		{"int64 [::2], int32 [2::4]", i64OK(i64.Slice(gpu.R(0, 12, 2))), sl(a, gpu.R(2, 24, 4)), true, false},
		{"int64 [::2], int32 [1::4]", i64OK(i64.Slice(gpu.R(0, 12, 2))), sl(a, gpu.R(1, 24, 4)), true, true},
		{"a[1:] of a slice, a[:1]", shifted, sl(a, gpu.R(0, 1)), false, false},
		{"a[1:] of a slice, a[1::7]", shifted, sl(a, gpu.R(1, 24, 7)), true, true},
		{"nil, a", (*gpu.Array[int32])(nil), a, false, false},
	} {
		for _, swap := range []bool{false, true} {
			x, y := tc.x, tc.y
			if swap {
				x, y = y, x
			}
			if got := gpu.MayShareMemory(x, y); got != tc.may {
				t.Errorf("MayShareMemory(%s) (swapped %v) = %v, want %v", tc.name, swap, got, tc.may)
			}
			if got := gpu.SharesMemory(x, y); got != tc.share {
				t.Errorf("SharesMemory(%s) (swapped %v) = %v, want %v", tc.name, swap, got, tc.share)
			}
		}
	}
}

// SharesMemory of random strided, reversed and transposed views of one allocation
// is the brute-force answer: whether their element bytes intersect.
func TestSharesMemoryRandomViews(t *testing.T) {
	s := freshStream(t)
	bufOK, i16OK, i64OK := must[*gpu.Buffer](t), must[*gpu.Array[int16]](t), must[*gpu.Array[int64]](t)
	buf := bufOK(s.Alloc(8 * 60))
	defer buf.Free()
	i16 := i16OK(gpu.ArrayOf[int16](buf, 4, 6, 10))
	i64 := i64OK(gpu.ArrayOf[int64](buf, 3, 4, 5))
	r := rand.New(rand.NewPCG(1, 2))
	view := func(a *gpu.Array[int16]) *gpu.Array[int16] {
		var rs []gpu.Range
		for _, d := range a.Shape() {
			lo, hi := r.IntN(d), r.IntN(d)
			step := 1 + r.IntN(3)
			if lo > hi {
				// A reversed range: lo down to past hi.
				rs = append(rs, gpu.R(lo, hi, -step))
			} else {
				rs = append(rs, gpu.R(lo, hi+1, step))
			}
		}
		v := i16OK(a.Slice(rs...))
		if r.IntN(2) == 0 {
			v = i16OK(v.Transpose())
		}
		return v
	}
	view64 := func() *gpu.Array[int64] {
		lo, step := r.IntN(3), 1+r.IntN(2)
		return i64OK(i64.Slice(gpu.R(lo, 3, step), gpu.R(), gpu.R(r.IntN(5), 5, 1+r.IntN(3))))
	}
	shared := 0
	for i := range 3000 {
		x := view(i16)
		var y gpu.AnyArray
		var ybytes map[int64]bool
		if i%2 == 0 {
			v := view(i16)
			y, ybytes = v, elementBytes(v)
		} else {
			v := view64()
			y, ybytes = v, elementBytes(v)
		}
		want := false
		for b := range elementBytes(x) {
			if ybytes[b] {
				want = true
				break
			}
		}
		if want {
			shared++
		}
		if got := gpu.SharesMemory(x, y); got != want {
			t.Fatalf("SharesMemory of %v strides %v offset %d and %v strides %v = %v, want %v",
				x.Shape(), x.Strides(), x.Offset(), y.Shape(), gpu.AnyArray(y).Shape(), got, want)
		}
		if want && !gpu.MayShareMemory(x, y) {
			t.Fatalf("MayShareMemory false of views sharing memory")
		}
	}
	if shared < 300 || shared > 2700 {
		t.Errorf("%d of 3000 pairs share memory: the views don't test both answers", shared)
	}
}

// EvalInto an array of one allocation at another byte offset from its operand's but
// the same element offset (ArrayOf over a Slice of the operand's Buffer): the operand
// is copied first, its elements read as they were before the call.
func TestEvalIntoOverlapThroughBufferSlice(t *testing.T) {
	s := freshStream(t)
	ctx := context.Background()
	const n = 1 << 12
	bufOK, f32OK := must[*gpu.Buffer](t), must[*gpu.Array[float32]](t)
	buf := bufOK(s.Alloc(4 * (n + 1)))
	defer buf.Free()
	x := f32OK(gpu.ArrayOf[float32](buf, n))
	out := f32OK(gpu.ArrayOf[float32](bufOK(buf.Slice(4, 4*n)), n)) // x[1:] with x's offset 0
	src := make([]float32, n)
	for i := range src {
		src[i] = float32(i)
	}
	if err := x.CopyFromHost(ctx, src); err != nil {
		t.Fatal(err)
	}
	if err := gpu.EvalInto(s, out, "x * 2", gpu.Vars{"x": x}); err != nil {
		t.Fatal(err)
	}
	got := must[[]float32](t)(out.ToSlice(ctx))
	for i, v := range got {
		if v != float32(2*i) {
			t.Fatalf("out[%d] = %v, want %v", i, v, float32(2*i))
		}
	}
}
