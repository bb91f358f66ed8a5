package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gonum.org/v1/gonum/mat"

	"github.com/go-gpu/gpu"
)

// The library's rule is that bad input gets an error, never a panic. These tests give
// every exported function and method of the package that takes a *Stream (as receiver
// or argument) a nil stream, and every one that takes a context.Context a nil context,
// with every other argument valid, and expect an error wrapping ErrInvalidValue that
// names the bad input. TestNilStreamCoversAPI and TestNilContextCoversAPI parse the
// package and fail for an exported function or method missing from these lists, so
// that the rule stays true for later additions.

// nilCase is one call with a nil stream or context.
type nilCase struct {
	name string // the function, or Type.Method, as apiWith lists them
	call func() error
}

// e1 and e2 keep the error of a call returning one or two values besides it.
func e1[T any](_ T, err error) error         { return err }
func e2[T, U any](_ T, _ U, err error) error { return err }

// nilFixture holds valid arguments, made on a CPU device.
type nilFixture struct {
	d          *gpu.Device
	s          *gpu.Stream // a valid stream, for the setup and the nil-context calls
	a, b, out  *gpu.Array[float32]
	out0       *gpu.Array[float32] // 0-d: the result of a full reduction
	empty      *gpu.Array[float32] // no elements: operations with nothing to do
	strided    *gpu.Array[float32] // a non-contiguous view of a's shape
	ai, outI   *gpu.Array[int32]
	mask       *gpu.Array[bool]
	buf, buf2  *gpu.Buffer
	ev         *gpu.Event
	fn         *gpu.Function
	g          *gpu.Generator
	k          *gpu.Kernel[float32]
	host       []byte
	hostF32    []float32
	ranScopeFn func(gpu.DevicePtr) error
	graph      *gpu.Graph
}

func newNilFixture(t *testing.T) *nilFixture {
	t.Helper()
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &nilFixture{d: d, s: s, g: gpu.NewGenerator(1), host: make([]byte, 16), hostF32: make([]float32, 6)}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	f32 := func(a *gpu.Array[float32], err error) *gpu.Array[float32] { must(err); return a }
	f.a = f32(gpu.FromSlice(s, []float32{0, 1, 2, 0, 4, 5}, 2, 3))
	f.b = f32(gpu.FromSlice(s, []float32{1, 1, 1, 2, 2, 2}, 2, 3))
	f.out = f32(gpu.Zeros[float32](s, 2, 3))
	f.out0 = f32(gpu.Zeros[float32](s))
	f.empty = f32(gpu.Empty[float32](s, 0, 3))
	wide := f32(gpu.Zeros[float32](s, 3, 2))
	f.strided, err = wide.Transpose()
	must(err)
	if f.strided.IsContiguous() {
		t.Fatal("the strided view is contiguous")
	}
	f.ai, err = gpu.FromSlice(s, []int32{3, 0, 1, 2, 0, 7}, 2, 3)
	must(err)
	f.outI, err = gpu.Zeros[int32](s, 2, 3)
	must(err)
	f.mask, err = gpu.FromSlice(s, []bool{true, false, true, false, true, false}, 2, 3)
	must(err)
	f.buf, err = s.Alloc(16)
	must(err)
	f.buf2, err = s.Alloc(16)
	must(err)
	f.ev, err = d.NewEvent()
	must(err)
	must(s.Record(f.ev))
	f.fn, err = d.Builtin("empty")
	must(err)
	f.k = gpu.NewKernel[float32]("x + 1", "x")
	f.graph, err = s.Capture(func() error { return s.MemsetD32(f.buf2, 0) })
	must(err)
	f.ranScopeFn = func(gpu.DevicePtr) error {
		t.Error("Buffer.Access ran its function on a nil stream")
		return nil
	}
	must(s.Synchronize(context.Background()))
	t.Cleanup(func() {
		for _, a := range []*gpu.Array[float32]{f.a, f.b, f.out, f.out0, f.empty, wide} {
			a.Free()
		}
		f.ai.Free()
		f.outI.Free()
		f.mask.Free()
		f.buf.Free()
		f.buf2.Free()
		f.ev.Close()
		f.graph.Close()
	})
	return f
}

// nilStreamCases returns the calls with a nil stream: a representative instantiation of
// each generic function, and more than one call where a function takes different paths
// (no elements, a non-contiguous operand, an operand already contiguous).
func nilStreamCases(f *nilFixture) []nilCase {
	var s *gpu.Stream // the nil stream
	ctx := context.Background()
	a, b, out, out0, empty, strided := f.a, f.b, f.out, f.out0, f.empty, f.strided
	g := f.g
	x := gpu.Vars{"x": a}
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	return []nilCase{
		// Construction and copies.
		{"Empty", func() error { return e1(gpu.Empty[float32](s, 2, 3)) }},
		{"Empty", func() error { return e1(gpu.Empty[int64](s)) }},
		{"Zeros", func() error { return e1(gpu.Zeros[float32](s, 2, 3)) }},
		{"Ones", func() error { return e1(gpu.Ones[int32](s, 4)) }},
		{"Full", func() error { return e1(gpu.Full[float64](s, 2.5, 3)) }},
		{"Fill", func() error { return gpu.Fill(s, out, 1) }},
		{"Fill", func() error { return gpu.Fill(s, f.outI, 7) }},
		{"Fill", func() error { return gpu.Fill(s, empty, 1) }},
		{"FromSlice", func() error { return e1(gpu.FromSlice(s, []float32{1, 2, 3})) }},
		{"FromSlice", func() error { return e1(gpu.FromSlice(s, []int8{})) }},
		{"FromBits", func() error { return e1(gpu.FromBits[gpu.BFloat16](s, []uint16{0x3f80})) }},
		{"Contiguous", func() error { return e1(gpu.Contiguous(s, a)) }},
		{"Contiguous", func() error { return e1(gpu.Contiguous(s, strided)) }},
		{"Clone", func() error { return e1(gpu.Clone(s, a)) }},
		{"Copy", func() error { return gpu.Copy(s, out, a) }},
		{"Copy", func() error { return gpu.Copy(s, strided, a) }},
		{"Copy", func() error { return gpu.Copy(s, empty, empty) }},
		{"Astype", func() error { return e1(gpu.Astype[int64](s, a)) }},
		{"Arange", func() error { return e1(gpu.Arange[float32](s, 0, 10, 1)) }},
		{"Arange", func() error { return e1(gpu.Arange[int32](s, 0, 10, 3)) }},
		{"Linspace", func() error { return e1(gpu.Linspace[float64](s, 0, 1, 5)) }},

		// Elementwise.
		{"Eval", func() error { return e1(gpu.Eval[float32](s, "a*x + b", gpu.Vars{"a": 2.0, "x": a, "b": 1.0})) }},
		{"Eval", func() error { return e1(gpu.Eval[int64](s, "i", gpu.Vars{"i": gpu.LinearIndex})) }},
		{"EvalInto", func() error { return gpu.EvalInto(s, out, "x + y", gpu.Vars{"x": a, "y": b}) }},
		{"EvalInto", func() error { return gpu.EvalInto(s, strided, "x * 2", x) }},
		{"EvalInto", func() error { return gpu.EvalInto(s, empty, "x", gpu.Vars{"x": empty}) }},
		{"Kernel.Into", func() error { return f.k.Into(s, out, a) }},
		{"Kernel.Eval", func() error { return e1(f.k.Eval(s, a)) }},
		{"Add", func() error { return e1(gpu.Add(s, a, b)) }},
		{"Subtract", func() error { return e1(gpu.Subtract(s, a, b)) }},
		{"Multiply", func() error { return e1(gpu.Multiply(s, a, b)) }},
		{"Divide", func() error { return e1(gpu.Divide(s, a, b)) }},
		{"Power", func() error { return e1(gpu.Power(s, a, b)) }},
		{"Minimum", func() error { return e1(gpu.Minimum(s, a, b)) }},
		{"Maximum", func() error { return e1(gpu.Maximum(s, a, b)) }},
		{"Negative", func() error { return e1(gpu.Negative(s, a)) }},
		{"Absolute", func() error { return e1(gpu.Absolute(s, f.ai)) }},
		{"Sqrt", func() error { return e1(gpu.Sqrt(s, a)) }},
		{"Exp", func() error { return e1(gpu.Exp(s, a)) }},
		{"Log", func() error { return e1(gpu.Log(s, a)) }},
		{"Sin", func() error { return e1(gpu.Sin(s, a)) }},
		{"Cos", func() error { return e1(gpu.Cos(s, a)) }},
		{"Tan", func() error { return e1(gpu.Tan(s, a)) }},
		{"Tanh", func() error { return e1(gpu.Tanh(s, a)) }},
		{"Floor", func() error { return e1(gpu.Floor(s, a)) }},
		{"Ceil", func() error { return e1(gpu.Ceil(s, a)) }},
		{"Equal", func() error { return e1(gpu.Equal(s, a, b)) }},
		{"NotEqual", func() error { return e1(gpu.NotEqual(s, a, b)) }},
		{"Less", func() error { return e1(gpu.Less(s, a, b)) }},
		{"LessEqual", func() error { return e1(gpu.LessEqual(s, a, b)) }},
		{"Greater", func() error { return e1(gpu.Greater(s, a, b)) }},
		{"GreaterEqual", func() error { return e1(gpu.GreaterEqual(s, a, b)) }},
		{"LogicalAnd", func() error { return e1(gpu.LogicalAnd(s, f.mask, f.mask)) }},
		{"LogicalOr", func() error { return e1(gpu.LogicalOr(s, f.mask, f.mask)) }},
		{"LogicalNot", func() error { return e1(gpu.LogicalNot(s, f.mask)) }},
		{"Where", func() error { return e1(gpu.Where(s, f.mask, a, b)) }},

		// Permutation.
		{"Permute", func() error { return e1(gpu.Permute(s, a, 1, 0)) }},
		{"Transpose", func() error { return e1(gpu.Transpose(s, a)) }},
		{"Transpose", func() error { return e1(gpu.Transpose(s, empty)) }},
		{"Reshape", func() error { return e1(gpu.Reshape(s, a, 3, 2)) }},
		// Indexing, joining.
		{"Take", func() error { return e1(gpu.Take(s, a, f.ai)) }},
		{"Take", func() error { return e1(gpu.Take(s, strided, f.ai, gpu.OnAxis(1))) }},
		{"TakeAlongAxis", func() error { return e1(gpu.TakeAlongAxis(s, a, f.ai, 1)) }},
		{"Var", func() error { return e1(gpu.Var[float32](s, a)) }},
		{"Std", func() error { return e1(gpu.Std[float32](s, a, gpu.Axes(1), gpu.Ddof(1))) }},
		{"LogSumExp", func() error { return e1(gpu.LogSumExp[float32](s, a)) }},
		{"Softmax", func() error { return e1(gpu.Softmax(s, a, 1)) }},
		{"LogSoftmax", func() error { return e1(gpu.LogSoftmax(s, a, 0)) }},
		{"LayerNorm", func() error { return e1(gpu.LayerNorm(s, a, 1, nil, nil, 1e-5)) }},
		{"Norm", func() error { return e1(gpu.Norm[float32](s, a, 2)) }},
		{"Put", func() error { return gpu.Put(s, out, f.ai, b) }},
		{"PutAlongAxis", func() error { return gpu.PutAlongAxis(s, out, f.ai, b, 1) }},
		{"PutMask", func() error { return gpu.PutMask(s, out, f.mask, b) }},
		{"AddAt", func() error { return gpu.AddAt(s, out, f.ai, b) }},
		{"MaximumAt", func() error { return gpu.MaximumAt(s, out, f.ai, b) }},
		{"MinimumAt", func() error { return gpu.MinimumAt(s, out, f.ai, b, gpu.Deterministic()) }},
		{"Bincount", func() error { return e1(gpu.Bincount(ctx, s, f.outI, 0)) }},
		{"BincountWeights", func() error { return e1(gpu.BincountWeights(ctx, s, f.outI, b, 0)) }},
		{"Concatenate", func() error { return e1(gpu.Concatenate(s, []*gpu.Array[float32]{a, b}, 0)) }},
		{"Concatenate", func() error { return e1(gpu.Concatenate(s, []*gpu.Array[float32]{empty}, 0)) }},
		{"Stack", func() error { return e1(gpu.Stack(s, []*gpu.Array[float32]{a, b}, 0)) }},
		{"Tile", func() error { return e1(gpu.Tile(s, a, 2)) }},
		{"Repeat", func() error { return e1(gpu.Repeat(s, a, 2)) }},
		{"Roll", func() error { return e1(gpu.Roll(s, a, 1)) }},
		{"Pad", func() error { return e1(gpu.Pad(s, a, [][2]int{{1, 1}}, 0)) }},
		{"Reshape", func() error { return e1(gpu.Reshape(s, strided, 6)) }},

		// Random numbers.
		{"Rand", func() error { return e1(gpu.Rand[float32](s, g, 2, 3)) }},
		{"RandN", func() error { return e1(gpu.RandN[float64](s, g, 4)) }},
		{"RandInt", func() error { return e1(gpu.RandInt[int32](s, g, 0, 10, 4)) }},
		{"RandBits", func() error { return e1(gpu.RandBits[uint8](s, g, 4)) }},
		{"RandInto", func() error { return gpu.RandInto(s, g, out) }},
		{"RandInto", func() error { return gpu.RandInto(s, g, strided) }},
		{"RandInto", func() error { return gpu.RandInto(s, g, empty) }},
		{"RandNInto", func() error { return gpu.RandNInto(s, g, out) }},
		{"RandIntInto", func() error { return gpu.RandIntInto(s, g, f.outI, 0, 10) }},
		{"RandBitsInto", func() error { return gpu.RandBitsInto(s, g, f.outI) }},

		// Matrix products.
		{"MatMul", func() error { return e1(gpu.MatMul(s, a, b)) }},
		{"MatMulInto", func() error { return gpu.MatMulInto(s, f.out, a, b) }},
		{"Gemm", func() error { return gpu.Gemm(s, 2, a, b, 1, f.out) }},
		{"Dot", func() error { return e1(gpu.Dot(s, a, b)) }},
		{"Vdot", func() error { return e1(gpu.Vdot(s, a, b)) }},
		{"FromDense", func() error { return e1(gpu.FromDense[float64](s, mat.NewDense(1, 1, nil))) }},

		// Reductions.
		{"Sum", func() error { return e1(gpu.Sum[float32](s, a)) }},
		{"Sum", func() error { return e1(gpu.Sum[int64](s, f.ai, gpu.Axes(-1))) }},
		{"Sum", func() error { return e1(gpu.Sum[float32](s, empty, gpu.Axes(0))) }},
		{"Prod", func() error { return e1(gpu.Prod[float64](s, a)) }},
		{"Mean", func() error { return e1(gpu.Mean[float64](s, f.ai)) }},
		{"Min", func() error { return e1(gpu.Min(s, a)) }},
		{"Max", func() error { return e1(gpu.Max(s, a, gpu.Axes(0), gpu.KeepDims())) }},
		{"Any", func() error { return e1(gpu.Any(s, f.mask)) }},
		{"All", func() error { return e1(gpu.All(s, a)) }},
		{"Count", func() error { return e1(gpu.Count(s, a)) }},
		{"ReduceInto", func() error { return gpu.ReduceInto(s, out0, gpu.OpSum, a) }},
		{"ReduceInto", func() error { return gpu.ReduceInto(s, out0, gpu.OpMax, empty) }},
		{"MapReduce", func() error { return e1(gpu.MapReduce[float32](s, "x*x", x, gpu.OpSum)) }},
		{"MapReduceInto", func() error { return gpu.MapReduceInto(s, out0, "x*x", x, gpu.OpSum) }},
		{"ArgMin", func() error { return e1(gpu.ArgMin(s, a)) }},
		{"ArgMax", func() error { return e1(gpu.ArgMax(s, a, gpu.Axes(1))) }},
		{"FindMin", func() error { return e2(gpu.FindMin(s, a)) }},
		{"FindMax", func() error { return e2(gpu.FindMax(s, a, gpu.Axes(0))) }},
		{"SumOf", func() error { return e1(gpu.SumOf(s, a)) }},
		{"ProdOf", func() error { return e1(gpu.ProdOf(s, a, gpu.Axes(0))) }},
		{"MeanOf", func() error { return e1(gpu.MeanOf(s, a)) }},
		{"VarOf", func() error { return e1(gpu.VarOf(s, a)) }},
		{"StdOf", func() error { return e1(gpu.StdOf(s, a)) }},
		{"LogSumExpOf", func() error { return e1(gpu.LogSumExpOf(s, a)) }},
		{"NormOf", func() error { return e1(gpu.NormOf(s, a, 1)) }},
		{"MedianOf", func() error { return e1(gpu.MedianOf(s, a)) }},

		// Scans.
		{"CumSum", func() error { return e1(gpu.CumSum[float32](s, a, 1)) }},
		{"CumSum", func() error { return e1(gpu.CumSum[int64](s, f.ai, 0, gpu.Exclusive())) }},
		{"CumProd", func() error { return e1(gpu.CumProd[float64](s, a, -1)) }},
		{"CumMax", func() error { return e1(gpu.CumMax(s, a, 0)) }},
		{"CumMin", func() error { return e1(gpu.CumMin(s, strided, 1)) }},
		{"Accumulate", func() error { return e1(gpu.Accumulate[float32](s, a, gpu.OpSum, 1)) }},
		{"CumSumOf", func() error { return e1(gpu.CumSumOf(s, a, 1)) }},
		{"CumProdOf", func() error { return e1(gpu.CumProdOf(s, a, 0)) }},
		{"AccumulateOf", func() error { return e1(gpu.AccumulateOf(s, a, gpu.OpMax, 1)) }},
		{"AccumulateInto", func() error { return gpu.AccumulateInto(s, out, a, gpu.OpSum, 1) }},
		{"AccumulateInto", func() error { return gpu.AccumulateInto(s, strided, a, gpu.OpMax, 0) }},
		{"AccumulateInto", func() error { return gpu.AccumulateInto(s, f.outI, f.ai, gpu.OpSum, 0) }},

		// Search.
		{"Nonzero", func() error { return e1(gpu.Nonzero(ctx, s, a)) }},
		{"Nonzero", func() error { return e1(gpu.Nonzero(ctx, s, empty)) }},
		{"NonzeroWhere", func() error { return e1(gpu.NonzeroWhere(ctx, s, "x > 1", x)) }},
		{"Argwhere", func() error { return e1(gpu.Argwhere(ctx, s, a)) }},
		{"Extract", func() error { return e1(gpu.Extract(ctx, s, f.mask, a)) }},
		{"FindFirst", func() error { return e1(gpu.FindFirst(ctx, s, a)) }},
		{"FindFirst", func() error { return e1(gpu.FindFirst(ctx, s, empty)) }},
		{"FindFirstWhere", func() error { return e1(gpu.FindFirstWhere(ctx, s, "x > 1", x)) }},
		{"CountNonzero", func() error { return e1(gpu.CountNonzero(ctx, s, a)) }},
		{"CountNonzero", func() error { return e1(gpu.CountNonzero(ctx, s, empty)) }},

		// Sorting and selection.
		{"Sort", func() error { return e1(gpu.Sort(s, a, -1)) }},
		{"Sort", func() error { return e1(gpu.Sort(s, empty, 0, gpu.Descending())) }},
		{"Argsort", func() error { return e1(gpu.Argsort(s, a, 0)) }},
		{"SortByKey", func() error { return e2(gpu.SortByKey(s, a, f.b, 1)) }},
		{"Partition", func() error { return e1(gpu.Partition(s, a, 1, -1)) }},
		{"Argpartition", func() error { return e1(gpu.Argpartition(s, a, 0, 0)) }},
		{"TopK", func() error { return e2(gpu.TopK(s, a, 2, -1)) }},
		{"Unique", func() error { return e1(gpu.Unique(ctx, s, a, gpu.ReturnCounts())) }},
		{"SearchSorted", func() error { return e1(gpu.SearchSorted(s, a, a, gpu.SideLeft)) }},
		{"Median", func() error { return e1(gpu.Median[float32](s, a)) }},
		{"Quantile", func() error { return e1(gpu.Quantile[float64](s, a, 0.5, gpu.Axes(0))) }},
		{"Quantiles", func() error { return e1(gpu.Quantiles[float32](s, a, []float64{0, 1})) }},

		// Buffers, streams and launches.
		{"Stream.Alloc", func() error { return e1(s.Alloc(64)) }},
		{"Stream.Alloc", func() error { return e1(s.Alloc(0)) }},
		{"Stream.CopyHtoD", func() error { return s.CopyHtoD(f.buf, f.host) }},
		{"Stream.CopyDtoH", func() error { return s.CopyDtoH(f.host, f.buf) }},
		{"Stream.CopyDtoD", func() error { return s.CopyDtoD(f.buf2, f.buf) }},
		{"Stream.Memset", func() error { return s.Memset(f.buf, 1) }},
		{"Stream.MemsetD32", func() error { return s.MemsetD32(f.buf, 1) }},
		{"Buffer.Access", func() error { return f.buf.Access(s, gpu.ReadWrite, f.ranScopeFn) }},
		{"Stream.Launch", func() error { return s.Launch(f.fn, cfg) }},
		{"Stream.Launch", func() error { return s.Launch(f.fn, cfg, gpu.In(a), gpu.Out(f.buf), uint64(6)) }},
		{"Stream.LaunchChecked", func() error { return s.LaunchChecked(f.fn, cfg, func([]uint32) error { return nil }) }},
		{"Stream.Query", func() error { return e1(s.Query()) }},
		{"Stream.Synchronize", func() error { return s.Synchronize(ctx) }},
		{"Stream.Synchronize", func() error { return s.Synchronize(ctx, gpu.WaitPolicy{Mode: gpu.WaitBlock}) }},
		{"Stream.Record", func() error { return s.Record(f.ev) }},
		{"Stream.WaitEvent", func() error { return s.WaitEvent(f.ev) }},
		{"Stream.Close", func() error { return s.Close() }},
		{"Stream.BeginCapture", func() error { return s.BeginCapture() }},
		{"Stream.EndCapture", func() error { return e1(s.EndCapture()) }},
		{"Stream.Capture", func() error { return e1(s.Capture(func() error { return nil })) }},
		{"Stream.HostFunc", func() error { return s.HostFunc(func() error { return nil }) }},
		{"Stream.Handle", func() error { return e1(s.Handle()) }},
		{"Graph.Launch", func() error { return f.graph.Launch(s) }},
	}
}

// nilStreamNoError are the methods of Stream that return no error; they must not panic
// on a nil receiver either.
var nilStreamNoError = []nilCase{
	{"Stream.Device", func() error {
		if d := (*gpu.Stream)(nil).Device(); d != nil {
			return fmt.Errorf("Device() = %v, want nil", d)
		}
		return nil
	}},
	{"Stream.BackendStream", func() error {
		if bs := (*gpu.Stream)(nil).BackendStream(); bs != nil {
			return fmt.Errorf("BackendStream() = %v, want nil", bs)
		}
		return nil
	}},
	{"Stream.Capturing", func() error {
		if (*gpu.Stream)(nil).Capturing() {
			return errors.New("Capturing() = true")
		}
		return nil
	}},
	{"Stream.String", func() error {
		if str := (*gpu.Stream)(nil).String(); str != "<nil stream>" {
			return fmt.Errorf("String() = %q, want %q", str, "<nil stream>")
		}
		if str := fmt.Sprint((*gpu.Stream)(nil)); str != "<nil stream>" {
			return fmt.Errorf("fmt.Sprint = %q, want %q", str, "<nil stream>")
		}
		return nil
	}},
}

// nilContextCases returns the calls with a nil context and a valid stream.
func nilContextCases(f *nilFixture) []nilCase {
	var ctx context.Context // the nil context
	s, a, x := f.s, f.a, gpu.Vars{"x": f.a}
	return []nilCase{
		{"Stream.Synchronize", func() error { return s.Synchronize(ctx) }},
		{"Device.Synchronize", func() error { return f.d.Synchronize(ctx) }},
		{"Device.TrimMemory", func() error { return f.d.TrimMemory(ctx) }},
		{"Event.Wait", func() error { return f.ev.Wait(ctx) }},
		{"Buffer.HostAccess", func() error {
			return f.buf.HostAccess(ctx, gpu.Read, func([]byte) error { return nil })
		}},
		{"Buffer.CopyFromHost", func() error { return f.buf.CopyFromHost(ctx, f.host) }},
		{"Buffer.CopyToHost", func() error { return f.buf.CopyToHost(ctx, f.host) }},
		{"Buffer.CopyFrom", func() error { return f.buf2.CopyFrom(ctx, f.buf) }},
		{"Array.ToSlice", func() error { return e1(a.ToSlice(ctx)) }},
		{"Array.ToSlice", func() error { return e1(f.strided.ToSlice(ctx)) }},
		{"Array.ToSlice", func() error { return e1(f.empty.ToSlice(ctx)) }},
		{"Array.Text", func() error { return e1(a.Text(ctx)) }},
		{"Array.CopyToHost", func() error { return a.CopyToHost(ctx, f.hostF32) }},
		{"Array.CopyFromHost", func() error { return f.out.CopyFromHost(ctx, f.hostF32) }},
		{"Array.At", func() error { return e1(a.At(ctx, 1, 2)) }},
		{"Array.Set", func() error { return f.out.Set(ctx, 1, 1, 2) }},
		{"Nonzero", func() error { return e1(gpu.Nonzero(ctx, s, a)) }},
		{"NonzeroWhere", func() error { return e1(gpu.NonzeroWhere(ctx, s, "x > 1", x)) }},
		{"Argwhere", func() error { return e1(gpu.Argwhere(ctx, s, a)) }},
		{"Extract", func() error { return e1(gpu.Extract(ctx, s, f.mask, a)) }},
		{"FindFirst", func() error { return e1(gpu.FindFirst(ctx, s, a)) }},
		{"FindFirstWhere", func() error { return e1(gpu.FindFirstWhere(ctx, s, "x > 1", x)) }},
		{"CountNonzero", func() error { return e1(gpu.CountNonzero(ctx, s, a)) }},
		{"Bincount", func() error { return e1(gpu.Bincount(ctx, s, f.ai, 0)) }},
		{"BincountWeights", func() error { return e1(gpu.BincountWeights(ctx, s, f.ai, a, 0)) }},
		{"ToDense", func() error { return e1(gpu.ToDense(ctx, a)) }},
		{"Unique", func() error { return e1(gpu.Unique(ctx, s, a)) }},
	}
}

// callNoPanic runs c.call and returns its error, or reports the panic.
func callNoPanic(c nilCase) (err error, panicked any) {
	defer func() { panicked = recover() }()
	return c.call(), nil
}

// checkNilCases runs the cases and expects each to return an error wrapping
// ErrInvalidValue whose message contains want.
func checkNilCases(t *testing.T, what string, cases []nilCase, want string) {
	t.Helper()
	for i, c := range cases {
		err, p := callNoPanic(c)
		switch {
		case p != nil:
			t.Errorf("%s (case %d) with a %s panicked: %v", c.name, i, what, p)
		case !errors.Is(err, gpu.ErrInvalidValue):
			t.Errorf("%s (case %d) with a %s: error %v, want one wrapping ErrInvalidValue", c.name, i, what, err)
		case !strings.Contains(err.Error(), want):
			t.Errorf("%s (case %d) with a %s: error %q doesn't say %q", c.name, i, what, err, want)
		}
	}
}

func TestNilStream(t *testing.T) {
	f := newNilFixture(t)
	seed, offset := f.g.State()
	checkNilCases(t, "nil stream", nilStreamCases(f), "nil stream")
	for _, c := range nilStreamNoError {
		if err, p := callNoPanic(c); p != nil {
			t.Errorf("%s on a nil stream panicked: %v", c.name, p)
		} else if err != nil {
			t.Errorf("%s on a nil stream: %v", c.name, err)
		}
	}
	// A failed request leaves the generator where it was.
	if s2, o2 := f.g.State(); s2 != seed || o2 != offset {
		t.Errorf("generator state after nil-stream calls: (%d, %d), want (%d, %d)", s2, o2, seed, offset)
	}
	// The valid stream and the arguments are still usable.
	got, err := gpu.Sum[float32](f.s, f.a)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Free()
	if v, err := got.At(context.Background()); err != nil || v != 12 {
		t.Errorf("Sum after the nil-stream calls: %v, %v; want 12", v, err)
	}
}

func TestNilContext(t *testing.T) {
	f := newNilFixture(t)
	checkNilCases(t, "nil context", nilContextCases(f), "nil context")
	if err := f.s.Synchronize(context.Background()); err != nil {
		t.Errorf("Synchronize after the nil-context calls: %v", err)
	}
}

// exportedFuncs parses the package's non-test files and returns its exported
// functions and methods.
func exportedFuncs(t *testing.T) []*ast.FuncDecl {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []*ast.FuncDecl
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range af.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Name.IsExported() {
				out = append(out, fd)
			}
		}
	}
	return out
}

// recvType returns the name of a method's receiver type (generic ones without their
// parameters: "Array" for *Array[T]) and whether the receiver is a pointer; "" for a
// function or a receiver type it doesn't understand.
func recvType(fd *ast.FuncDecl) (name string, ptr bool) {
	if fd.Recv == nil || len(fd.Recv.List) != 1 {
		return "", false
	}
	rt := fd.Recv.List[0].Type
	if st, ok := rt.(*ast.StarExpr); ok {
		rt, ptr = st.X, true
	}
	switch x := rt.(type) {
	case *ast.IndexExpr: // Array[T]
		rt = x.X
	case *ast.IndexListExpr: // Pair[K, V]
		rt = x.X
	}
	if id, ok := rt.(*ast.Ident); ok {
		return id.Name, ptr
	}
	return "", ptr
}

// apiWith lists the package's exported functions and methods (on exported types) whose
// signature has a parameter or receiver for which match is true, by name: "Sum",
// "Stream.Launch", "Kernel.Into".
func apiWith(t *testing.T, match func(ast.Expr) bool) []string {
	t.Helper()
	var names []string
	for _, fd := range exportedFuncs(t) {
		name, found := fd.Name.Name, false
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			found = match(fd.Recv.List[0].Type)
			rt, _ := recvType(fd)
			if rt == "" || !ast.IsExported(rt) {
				continue
			}
			name = rt + "." + name
		}
		for _, p := range fd.Type.Params.List {
			found = found || match(p.Type)
		}
		if found {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func isStreamPtr(e ast.Expr) bool {
	st, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := st.X.(*ast.Ident)
	return ok && id.Name == "Stream"
}

func isContext(e ast.Expr) bool {
	se, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := se.X.(*ast.Ident)
	return ok && pkg.Name == "context" && se.Sel.Name == "Context"
}

// checkCovered fails for each name of api that no case calls.
func checkCovered(t *testing.T, what string, api []string, cases ...[]nilCase) {
	t.Helper()
	covered := map[string]bool{}
	for _, cs := range cases {
		for _, c := range cs {
			covered[c.name] = true
		}
	}
	for _, name := range api {
		if !covered[name] {
			t.Errorf("%s takes a %s but isn't called with a nil one in nilstream_test.go: add a case", name, what)
		}
		delete(covered, name)
	}
	for name := range covered {
		t.Errorf("nilstream_test.go has a case for %s, which takes no %s (renamed?)", name, what)
	}
}

func TestNilStreamCoversAPI(t *testing.T) {
	api := apiWith(t, isStreamPtr)
	if len(api) < 90 {
		t.Fatalf("found only %d functions taking a *Stream: %v", len(api), api)
	}
	checkCovered(t, "*Stream", api, nilStreamCases(&nilFixture{}), nilStreamNoError)
}

func TestNilContextCoversAPI(t *testing.T) {
	api := apiWith(t, isContext)
	if len(api) < 15 {
		t.Fatalf("found only %d functions taking a context.Context: %v", len(api), api)
	}
	checkCovered(t, "context.Context", api, nilContextCases(&nilFixture{}))
}
