package kernel

import (
	"math"

	"github.com/go-gpu/gpu/expr"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
	"github.com/go-gpu/gpu/ptx/gomath"
)

// The Go mirrors of the device math library the tests know, as functions of bits. A
// function the library gains later is skipped by TestElementwisePTXMathMirrors until it
// is added here (it is still checked against the CPU evaluator by the table test).
var mirrors32 = map[ptx.MathFn]func(x, y float32) float32{
	ptx.Exp:   un32(gomath.ExpF32),
	ptx.Exp2:  un32(gomath.Exp2F32),
	ptx.Expm1: un32(gomath.Expm1F32),
	ptx.Log:   un32(gomath.LogF32),
	ptx.Log2:  un32(gomath.Log2F32),
	ptx.Log10: un32(gomath.Log10F32),
	ptx.Log1p: un32(gomath.Log1pF32),
	ptx.Sin:   un32(gomath.SinF32),
	ptx.Cos:   un32(gomath.CosF32),
	ptx.Tan:   un32(gomath.TanF32),
	ptx.Asin:  un32(gomath.AsinF32),
	ptx.Acos:  un32(gomath.AcosF32),
	ptx.Atan:  un32(gomath.AtanF32),
	ptx.Sinh:  un32(gomath.SinhF32),
	ptx.Cosh:  un32(gomath.CoshF32),
	ptx.Tanh:  un32(gomath.TanhF32),
	ptx.Asinh: un32(gomath.AsinhF32),
	ptx.Acosh: un32(gomath.AcoshF32),
	ptx.Atanh: un32(gomath.AtanhF32),
	ptx.Cbrt:  un32(gomath.CbrtF32),
	ptx.Erf:   un32(gomath.ErfF32),
	ptx.Atan2: gomath.Atan2F32,
	ptx.Pow:   gomath.PowF32,
	ptx.Hypot: gomath.HypotF32,
}

var mirrors64 = map[ptx.MathFn]func(x, y float64) float64{
	ptx.Exp:   un64(gomath.ExpF64),
	ptx.Exp2:  un64(gomath.Exp2F64),
	ptx.Expm1: un64(gomath.Expm1F64),
	ptx.Log:   un64(gomath.LogF64),
	ptx.Log2:  un64(gomath.Log2F64),
	ptx.Log10: un64(gomath.Log10F64),
	ptx.Log1p: un64(gomath.Log1pF64),
	ptx.Sin:   un64(gomath.SinF64),
	ptx.Cos:   un64(gomath.CosF64),
	ptx.Tan:   un64(gomath.TanF64),
	ptx.Asin:  un64(gomath.AsinF64),
	ptx.Acos:  un64(gomath.AcosF64),
	ptx.Atan:  un64(gomath.AtanF64),
	ptx.Sinh:  un64(gomath.SinhF64),
	ptx.Cosh:  un64(gomath.CoshF64),
	ptx.Tanh:  un64(gomath.TanhF64),
	ptx.Asinh: un64(gomath.AsinhF64),
	ptx.Acosh: un64(gomath.AcoshF64),
	ptx.Atanh: un64(gomath.AtanhF64),
	ptx.Cbrt:  un64(gomath.CbrtF64),
	ptx.Erf:   un64(gomath.ErfF64),
	ptx.Atan2: gomath.Atan2F64,
	ptx.Pow:   gomath.PowF64,
	ptx.Hypot: gomath.HypotF64,
}

func un32(f func(float32) float32) func(x, y float32) float32 {
	return func(x, _ float32) float32 { return f(x) }
}
func un64(f func(float64) float64) func(x, y float64) float64 {
	return func(x, _ float64) float64 { return f(x) }
}

// mirrorOf returns the mirror of fn for type t on bits, or nil.
func mirrorOf(fn ptx.MathFn, t dtype.DType) func(x, y uint64) uint64 {
	if t == dtype.Float32 {
		if f := mirrors32[fn]; f != nil {
			return func(x, y uint64) uint64 {
				return uint64(math.Float32bits(f(math.Float32frombits(uint32(x)), math.Float32frombits(uint32(y)))))
			}
		}
		return nil
	}
	if f := mirrors64[fn]; f != nil {
		return func(x, y uint64) uint64 { return math.Float64bits(f(math.Float64frombits(x), math.Float64frombits(y))) }
	}
	return nil
}

// mirrorRef returns, for an expression that is one library call on converted operands
// (f(x), f(x, y), and for half types float16(f(float32(x)))), a reference computing the
// call with the Go mirror and the conversions with the CPU evaluator; nil for other
// expressions or functions without a known mirror.
func mirrorRef(ex *expr.Expr) func(n int, logical [][]byte) ([]byte, error) {
	root := ex.Root
	final := dtype.Invalid
	if c, ok := root.(*expr.Cast); ok && ewIsHalf(c.Type) {
		final, root = c.Type, c.X
	}
	call, ok := root.(*expr.Call)
	if !ok {
		return nil
	}
	ct := call.Args[0].DType()
	mf, lib := ewMathFns[call.Func]
	if call.Func == expr.Pow {
		mf, lib = ptx.Pow, true
	}
	if !lib || !ewIsFloat(ct) {
		return nil
	}
	m := mirrorOf(mf, ct)
	if m == nil {
		return nil
	}
	var progs []*expr.Program
	for _, a := range call.Args {
		p, err := (&expr.Expr{Root: a, Inputs: ex.Inputs, Params: ex.Params}).Compile()
		if err != nil {
			return nil
		}
		progs = append(progs, p)
	}
	var fin *expr.Program
	if final != dtype.Invalid {
		var err error
		fin, err = (&expr.Expr{Root: &expr.Cast{X: &expr.Input{Slot: 0, Type: ct}, Type: final},
			Inputs: []expr.Slot{{Index: 0, DType: ct}}}).Compile()
		if err != nil {
			return nil
		}
	}
	sz := ct.Size()
	return func(n int, logical [][]byte) ([]byte, error) {
		args := make([][]byte, len(progs))
		for k, p := range progs {
			args[k] = make([]byte, n*sz)
			if err := p.EvalBytes(n, args[k], logical, nil); err != nil {
				return nil, err
			}
		}
		out := make([]byte, n*sz)
		for i := 0; i < n; i++ {
			x, y := getBits(args[0][i*sz:], sz), uint64(0)
			if len(args) > 1 {
				y = getBits(args[1][i*sz:], sz)
			}
			putBits(out[i*sz:], sz, m(x, y))
		}
		if fin == nil {
			return out, nil
		}
		h := make([]byte, n*final.Size())
		err := fin.EvalBytes(n, h, [][]byte{out}, nil)
		return h, err
	}
}
