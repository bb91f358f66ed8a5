package expr

import (
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

const benchN = 1 << 20

func benchEval(b *testing.B, src string, env Env, inputs []any, params []any, out any) {
	b.Helper()
	p, err := MustParse(src, env).Compile()
	if err != nil {
		b.Fatal(err)
	}
	if err := p.Eval(out, inputs, params); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if err := p.Eval(out, inputs, params); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(benchN)*float64(b.N)/b.Elapsed().Seconds(), "elem/s")
}

func benchF32(n int) []float32 {
	x := make([]float32, n)
	for i := range x {
		x[i] = float32(i%1000) * 0.001
	}
	return x
}

// BenchmarkAXPB evaluates a*x + b on 2^20 float32 elements with scalar parameters a, b.
func BenchmarkAXPB(b *testing.B) {
	env := Env{"x": OperandDecl(0, dtype.Float32), "a": ParamDecl(0, dtype.Float32), "b": ParamDecl(1, dtype.Float32)}
	x, out := benchF32(benchN), make([]float32, benchN)
	b.SetBytes(8 * benchN)
	benchEval(b, "a*x + b", env, []any{x}, []any{float32(2), float32(1)}, out)
}

// BenchmarkAXPBArrays evaluates a*x + b on 2^20 float32 elements, all three arrays.
func BenchmarkAXPBArrays(b *testing.B) {
	env := Env{"a": OperandDecl(0, dtype.Float32), "x": OperandDecl(1, dtype.Float32), "b": OperandDecl(2, dtype.Float32)}
	a, x, c, out := benchF32(benchN), benchF32(benchN), benchF32(benchN), make([]float32, benchN)
	b.SetBytes(16 * benchN)
	benchEval(b, "a*x + b", env, []any{a, x, c}, nil, out)
}

// BenchmarkAXPBGoLoop is the baseline for BenchmarkAXPB: the same computation as a plain
// Go loop, as a program would write it by hand.
func BenchmarkAXPBGoLoop(b *testing.B) {
	x, out := benchF32(benchN), make([]float32, benchN)
	b.SetBytes(8 * benchN)
	a, c := float32(2), float32(1)
	for b.Loop() {
		for i := range out {
			out[i] = a*x[i] + c
		}
	}
	b.ReportMetric(float64(benchN)*float64(b.N)/b.Elapsed().Seconds(), "elem/s")
}

// BenchmarkAXPBFloat16 evaluates a*x + b on 2^20 float16 elements (computed in float32,
// rounded after each operation).
func BenchmarkAXPBFloat16(b *testing.B) {
	env := Env{"x": OperandDecl(0, dtype.Float16), "a": ParamDecl(0, dtype.Float16), "b": ParamDecl(1, dtype.Float16)}
	x, out := make([]uint16, benchN), make([]uint16, benchN)
	for i := range x {
		x[i] = dtype.Float16FromFloat32(float32(i%1000) * 0.001)
	}
	b.SetBytes(4 * benchN)
	benchEval(b, "a*x + b", env, []any{x}, []any{uint16(0x4000), uint16(0x3c00)}, out)
}

// BenchmarkWhereSqrt evaluates where(x > 0, sqrt(x), -x) on 2^20 float32 elements.
func BenchmarkWhereSqrt(b *testing.B) {
	env := Env{"x": OperandDecl(0, dtype.Float32)}
	x, out := benchF32(benchN), make([]float32, benchN)
	b.SetBytes(8 * benchN)
	benchEval(b, "where(x > 0.5, sqrt(x), -x)", env, []any{x}, nil, out)
}

// BenchmarkExp evaluates exp(x) on 2^20 float32 elements (Go's math.Exp in float64).
func BenchmarkExp(b *testing.B) {
	env := Env{"x": OperandDecl(0, dtype.Float32)}
	x, out := benchF32(benchN), make([]float32, benchN)
	b.SetBytes(8 * benchN)
	benchEval(b, "exp(x)", env, []any{x}, nil, out)
}

// BenchmarkParseCompile measures Parse plus Compile of a small expression: the cost of a
// kernel-cache miss on the CPU.
func BenchmarkParseCompile(b *testing.B) {
	env := Env{"x": OperandDecl(0, dtype.Float32), "a": ParamDecl(0, dtype.Float32), "b": WeakParamDecl(1, dtype.Float64)}
	b.ReportAllocs()
	for b.Loop() {
		e, err := Parse("where(x > 0, a*x + b, exp(x))", env)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Compile(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEvalBytesChunk measures one EvalBytes call on ChunkSize float32 elements (a*x +
// b), the per-call cost a backend pays when it hands out chunks to workers.
func BenchmarkEvalBytesChunk(b *testing.B) {
	env := Env{"x": OperandDecl(0, dtype.Float32), "a": ParamDecl(0, dtype.Float32), "b": WeakParamDecl(1, dtype.Float64)}
	p, err := MustParse("a*x + b", env).Compile()
	if err != nil {
		b.Fatal(err)
	}
	x, out := make([]byte, 4*ChunkSize), make([]byte, 4*ChunkSize)
	in, params := [][]byte{x}, []Scalar{ScalarOf(float32(2)), ScalarOf(1.0)}
	b.ReportAllocs()
	for b.Loop() {
		if err := p.EvalBytes(ChunkSize, out, in, params); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(ChunkSize)*float64(b.N)/b.Elapsed().Seconds(), "elem/s")
}
