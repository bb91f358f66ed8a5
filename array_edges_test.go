package gpu_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
)

// Edge cases of the array operations on the CPU backend (overflowing shapes, empty
// arrays, reinterpreted operands), each of which once failed.

func edgeStream(t *testing.T) *gpu.Stream {
	t.Helper()
	d, err := gpu.NewDevice(cpu.New(4)) // a fresh device: a fault would be sticky
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// A reshape whose element count overflows int must be refused, not wrap around to the
// array's size (274177 * 67280421310721 = 2^64 + 1) and view memory past the buffer.
func TestReshapeOverflowEdges(t *testing.T) {
	s := edgeStream(t)
	one, err := gpu.FromSlice(s, []float32{7})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := one.Reshape(274177, 67280421310721); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Reshape(274177, 67280421310721) of 1 element: %v, %v; want ErrInvalidValue", v, err)
	}
	empty, err := gpu.Zeros[float32](s, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := empty.Reshape(1<<32, 1<<32); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Reshape(2^32, 2^32) of 0 elements: %v, %v; want ErrInvalidValue", v, err)
	}
	if v, err := empty.Reshape(0, 1<<40, 1<<40); err != nil || v.Size() != 0 {
		t.Errorf("Reshape(0, 2^40, 2^40) of 0 elements: %v, %v", v, err)
	}
}

// ArrayOf must refuse a shape whose byte count overflows int64.
func TestArrayOfOverflow(t *testing.T) {
	s := edgeStream(t)
	b, err := s.Alloc(64)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if a, err := gpu.ArrayOf[int64](b, 1<<61); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("ArrayOf[int64](64-byte buffer, 2^61): %v, %v; want ErrInvalidValue", a, err)
	}
	if a, err := gpu.ArrayOf[int64](nil, 1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("ArrayOf(nil): %v, %v; want ErrInvalidValue", a, err)
	}
}

// Row-major strides of a shape with a zero dimension contain zeros ((3, 0) has strides
// (0, 1)): such an array is empty, not a broadcast view, and writing it is a no-op.
func TestEmptyArrayIsWritable(t *testing.T) {
	s := edgeStream(t)
	ctx := context.Background()
	a, err := gpu.Ones[float32](s, 3, 0)
	if err != nil {
		t.Fatalf("Ones(3, 0): %v", err)
	}
	src, _ := gpu.Zeros[float32](s, 3, 0)
	m, _ := gpu.Zeros[float32](s, 3, 0, 4)
	checks := map[string]error{
		"Fill":           gpu.Fill(s, a, 2),
		"Copy":           gpu.Copy(s, a, src),
		"EvalInto":       gpu.EvalInto(s, a, "x + 1", gpu.Vars{"x": src}),
		"ReduceInto":     gpu.ReduceInto(s, a, gpu.OpSum, m, gpu.Axes(2)),
		"MapReduceInto":  gpu.MapReduceInto(s, a, "x", gpu.Vars{"x": m}, gpu.OpMax, gpu.Axes(-1)),
		"AccumulateInto": gpu.AccumulateInto(s, a, src, gpu.OpSum, 0),
		"RandInto":       gpu.RandInto(s, gpu.NewGenerator(1), a),
	}
	for name, err := range checks {
		if err != nil {
			t.Errorf("%s into a (3, 0) array: %v", name, err)
		}
	}
	if v, err := a.ToSlice(ctx); err != nil || len(v) != 0 {
		t.Errorf("ToSlice: %v, %v", v, err)
	}
	// A broadcast view of a non-empty shape is still refused.
	one, _ := gpu.Zeros[float32](s, 1)
	bc, _ := one.BroadcastTo(3)
	if err := gpu.Fill(s, bc, 1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Fill of a broadcast view: %v", err)
	}
}

// An empty slice of an empty array: the reductions of no elements still give their
// identity (NumPy: np.zeros((0, 12))[0:0:2, 11::-3].sum() is 0.0), though a start along
// a non-empty axis lies past the (empty) buffer.
func TestReduceEmptySliceOfEmptyBuffer(t *testing.T) {
	s := edgeStream(t)
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

// EvalInto an array that shares memory with an operand of another element size, at the
// same element offset and strides (ArrayOf over one buffer): the bytes differ, so the
// operand must be copied first.
func TestEvalIntoReinterpretedOperand(t *testing.T) {
	s := edgeStream(t)
	ctx := context.Background()
	n := 1 << 16
	buf, err := s.Alloc(int64(8 * n))
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	i32, _ := gpu.ArrayOf[int32](buf, n)
	i64, _ := gpu.ArrayOf[int64](buf, n)
	src := make([]int32, n)
	for i := range src {
		src[i] = int32(i)
	}
	if err := i32.CopyFromHost(ctx, src); err != nil {
		t.Fatal(err)
	}
	if err := gpu.EvalInto(s, i64, "int64(x) * 10", gpu.Vars{"x": i32}); err != nil {
		t.Fatal(err)
	}
	got, err := i64.ToSlice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != int64(i)*10 {
			t.Fatalf("[%d] = %d, want %d", i, v, int64(i)*10)
		}
	}
}

// Argwhere's result belongs to the caller, who must be able to free it, for 1-d inputs too.
func TestArgwhereResultFrees(t *testing.T) {
	s := edgeStream(t)
	ctx := context.Background()
	a, err := gpu.FromSlice(s, []int32{0, 1, 0, 3})
	if err != nil {
		t.Fatal(err)
	}
	w, err := gpu.Argwhere(ctx, s, a)
	if err != nil {
		t.Fatal(err)
	}
	got, err := w.ToSlice(ctx)
	if err != nil || !slices.Equal(got, []int64{1, 3}) || !slices.Equal(w.Shape(), []int{2, 1}) {
		t.Fatalf("Argwhere = %v %v, %v", got, w.Shape(), err)
	}
	if err := w.Free(); err != nil {
		t.Errorf("Free of Argwhere's result: %v", err)
	}
}

// A nil generator is an error, not a panic.
func TestRandNilGenerator(t *testing.T) {
	s := edgeStream(t)
	if _, err := gpu.Rand[float32](s, nil, 4); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Rand with a nil generator: %v", err)
	}
	a, _ := gpu.Zeros[int32](s, 4)
	if err := gpu.RandIntInto(s, nil, a, 0, 5); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("RandIntInto with a nil generator: %v", err)
	}
}

// An empty output still needs operands that broadcast to it (NumPy: np.copyto of a
// (5,) array into a (0,) one is a ValueError).
func TestEmptyOutputChecksOperands(t *testing.T) {
	s := edgeStream(t)
	x, _ := gpu.Zeros[float32](s, 5)
	o, _ := gpu.Zeros[float32](s, 0)
	o2, _ := gpu.Zeros[float32](s, 3, 0)
	if err := gpu.EvalInto(s, o, "x + 1", gpu.Vars{"x": x}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("EvalInto (0,) from (5,): %v; want ErrInvalidValue", err)
	}
	if err := gpu.Copy(s, o, x); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Copy (0,) from (5,): %v; want ErrInvalidValue", err)
	}
	if err := gpu.Copy(s, o2, x); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Copy (3, 0) from (5,): %v; want ErrInvalidValue", err)
	}
	one, _ := gpu.Zeros[float32](s, 1)
	if err := gpu.Copy(s, o2, one); err != nil {
		t.Errorf("Copy (3, 0) from (1,): %v", err)
	}
	if err := gpu.EvalInto(s, o2, "x * 2", gpu.Vars{"x": one}); err != nil {
		t.Errorf("EvalInto (3, 0) from (1,): %v", err)
	}
}

// MapReduce over operands that broadcast to more elements than an int counts is refused,
// not reduced over a wrapped count (2^40 x 2^40 = 2^80 elements: the sum was 0).
func TestMapReduceBroadcastOverflow(t *testing.T) {
	s := edgeStream(t)
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

// An operation on one device's stream with an array of another device of the same
// backend launches a kernel that addresses the other device's memory: refused until
// the stream's device has enabled peer access (on CUDA the kernel would fault, and the
// fault is sticky), then right. Reductions, scans and searches take the same launch
// path.
func TestOperandOfAnotherDevice(t *testing.T) {
	s0, s1 := edgeStream(t), edgeStream(t)
	a := []float32{1, 2, 3, 4, 5}
	b := []float32{0.5, -1, 7, 2, 3}
	x0, err := gpu.FromSlice(s0, a)
	if err != nil {
		t.Fatal(err)
	}
	x1, err := gpu.FromSlice(s1, b)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := gpu.Add(s0, x0, x1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("Add of an array of another device without peer access: %v, %v; want ErrInvalidValue", r, err)
	}
	if r, err := gpu.Sum[float32](s0, x1); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Fatalf("Sum of an array of another device without peer access: %v, %v; want ErrInvalidValue", r, err)
	}
	if err := s0.Device().EnablePeerAccess(s1.Device()); err != nil {
		t.Fatal(err)
	}
	r, err := gpu.Add(s0, x0, x1)
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for i := range a {
		if got[i] != a[i]+b[i] {
			t.Fatalf("element %d = %v, want %v", i, got[i], a[i]+b[i])
		}
	}
}

// An array used after its Free is an error wrapping ErrClosed, for an empty array too
// (whose operations have no memory to touch, so only the arguments' check can tell).
func TestFreedArrayEdges(t *testing.T) {
	s := edgeStream(t)
	ctx := context.Background()
	for _, n := range []int{0, 5} {
		a, err := gpu.FromSlice(s, make([]float32, n))
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Free(); err != nil {
			t.Fatal(err)
		}
		calls := map[string]func() error{
			"ToSlice":  func() error { _, err := a.ToSlice(ctx); return err },
			"CopyFrom": func() error { return a.CopyFromHost(ctx, make([]float32, n)) },
			"Add":      func() error { _, err := gpu.Add(s, a, a); return err },
			"Eval":     func() error { _, err := gpu.Eval[float32](s, "2*x", gpu.Vars{"x": a}); return err },
			"Sum":      func() error { _, err := gpu.Sum[float32](s, a); return err },
			"CumSum":   func() error { _, err := gpu.CumSum[float32](s, a, 0); return err },
			"Copy": func() error {
				b, err := gpu.Empty[float32](s, n)
				if err != nil {
					return err
				}
				defer b.Free()
				return gpu.Copy(s, b, a)
			},
		}
		for name, f := range calls {
			if err := f(); !errors.Is(err, gpu.ErrClosed) {
				t.Errorf("%s of a freed array of %d elements: %v, want ErrClosed", name, n, err)
			}
		}
	}
}

// A generator set back to a saved State repeats the numbers it gave after it, across
// kinds of requests; SetState to another seed gives that seed's numbers.
func TestGeneratorSetState(t *testing.T) {
	s := edgeStream(t)
	ctx := context.Background()
	g := gpu.NewGenerator(11)
	if _, err := gpu.Rand[float32](s, g, 100); err != nil { // move it off 0
		t.Fatal(err)
	}
	seed, off := g.State()
	draw := func(g *gpu.Generator) ([]float32, []int64) {
		t.Helper()
		a, err := gpu.RandN[float32](s, g, 1001)
		if err != nil {
			t.Fatal(err)
		}
		b, err := gpu.RandInt[int64](s, g, -5, 1<<40, 333)
		if err != nil {
			t.Fatal(err)
		}
		ha, err := a.ToSlice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		hb, err := b.ToSlice(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return ha, hb
	}
	a1, b1 := draw(g)
	_, after := g.State()
	if err := g.SetState(seed, off); err != nil {
		t.Fatal(err)
	}
	a2, b2 := draw(g)
	if !slices.Equal(a1, a2) || !slices.Equal(b1, b2) {
		t.Errorf("after SetState(%d, %d) the numbers differ", seed, off)
	}
	if _, off2 := g.State(); off2 != after {
		t.Errorf("offset after the repeat %d, first time %d", off2, after)
	}
	// Another generator set to the same state agrees; a fresh generator of that seed
	// (offset 0) does not.
	h := gpu.NewGenerator(999)
	if err := h.SetState(seed, off); err != nil {
		t.Fatal(err)
	}
	a3, b3 := draw(h)
	if !slices.Equal(a1, a3) || !slices.Equal(b1, b3) {
		t.Errorf("another generator set to (%d, %d) gives other numbers", seed, off)
	}
	a4, _ := draw(gpu.NewGenerator(seed))
	if slices.Equal(a1, a4) {
		t.Errorf("offset %d and offset 0 gave the same numbers", off)
	}
}

// ToSlice of a broadcast view too large to copy is an error, not a panic in make; of a
// freed array, ErrClosed.
func TestToSliceTooLarge(t *testing.T) {
	s := edgeStream(t)
	ctx := context.Background()
	x, err := gpu.FromSlice(s, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	b, err := x.BroadcastTo(1<<60, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.ToSlice(ctx); !errors.Is(err, gpu.ErrInvalidValue) && !errors.Is(err, gpu.ErrOutOfMemory) {
		t.Errorf("ToSlice of a [2^60 3] broadcast view = %v, want ErrInvalidValue or ErrOutOfMemory", err)
	}
	x.Free()
	for _, a := range []*gpu.Array[float32]{x, b} {
		if _, err := a.ToSlice(ctx); !errors.Is(err, gpu.ErrClosed) {
			t.Errorf("ToSlice of a freed array (shape %v) = %v, want ErrClosed", a.Shape(), err)
		}
	}
}

// A Vars key that isn't an identifier can't be named by the expression: an error, not a
// variable silently ignored (MapReduce goes through the same plans as Eval).
func TestEvalVarNotIdentifier(t *testing.T) {
	s := edgeStream(t)
	x, err := gpu.FromSlice(s, []float32{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"not a name", "1x", "", "x-y"} {
		if _, err := gpu.Eval[float32](s, "x*2", gpu.Vars{"x": x, name: 2.0}); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Eval with a variable named %q = %v, want ErrInvalidValue", name, err)
		}
		if _, err := gpu.MapReduce[float32](s, "x*2", gpu.Vars{"x": x, name: 2.0}, gpu.OpSum); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("MapReduce with a variable named %q = %v, want ErrInvalidValue", name, err)
		}
	}
}

// FromSlice's data may be reused at once: overwriting it right after the call (behind
// a slow kernel on the stream) leaves the array's contents alone.
func TestFromSliceDataReusable(t *testing.T) {
	d, k := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	if err := k.SpinFor(s, 20*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	data := []int32{1, 2, 3, 4, 5}
	a, err := gpu.FromSlice(s, data)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Free()
	for i := range data {
		data[i] = -1
	}
	got, err := a.ToSlice(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []int32{1, 2, 3, 4, 5}) {
		t.Errorf("FromSlice then overwriting data: %v", got)
	}
}
