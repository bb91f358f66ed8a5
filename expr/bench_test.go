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
