package kern

import (
	"math"
	"unsafe"

	"github.com/go-gpu/gpu/ptx/gomath"
)

// The math functions below compute, for float32 and float64, exactly the bits of the
// device math library of package ptx on the GPU (its Go mirrors, package ptx/gomath,
// on the CPU): a kernel gets the same results on both. Each is within 1.5 ulp of the
// correctly rounded result; package ptx's documentation lists the accuracy and cost
// of each. A NaN result is the canonical NaN (0x7fffffff, 0x7fffffffffffffff).

func is32[T Float]() bool {
	var z T
	return unsafe.Sizeof(z) == 4
}

// Exp returns exp(x), the same bits on the CPU and the GPU (math.Exp's function).
func Exp[T Float](x T) T {
	if is32[T]() {
		return T(gomath.ExpF32(float32(x)))
	}
	return T(gomath.ExpF64(float64(x)))
}

// Exp2 returns exp2(x), the same bits on the CPU and the GPU (math.Exp2's function).
func Exp2[T Float](x T) T {
	if is32[T]() {
		return T(gomath.Exp2F32(float32(x)))
	}
	return T(gomath.Exp2F64(float64(x)))
}

// Expm1 returns expm1(x), the same bits on the CPU and the GPU (math.Expm1's function).
func Expm1[T Float](x T) T {
	if is32[T]() {
		return T(gomath.Expm1F32(float32(x)))
	}
	return T(gomath.Expm1F64(float64(x)))
}

// Log returns log(x), the same bits on the CPU and the GPU (math.Log's function).
func Log[T Float](x T) T {
	if is32[T]() {
		return T(gomath.LogF32(float32(x)))
	}
	return T(gomath.LogF64(float64(x)))
}

// Log2 returns log2(x), the same bits on the CPU and the GPU (math.Log2's function).
func Log2[T Float](x T) T {
	if is32[T]() {
		return T(gomath.Log2F32(float32(x)))
	}
	return T(gomath.Log2F64(float64(x)))
}

// Log10 returns log10(x), the same bits on the CPU and the GPU (math.Log10's function).
func Log10[T Float](x T) T {
	if is32[T]() {
		return T(gomath.Log10F32(float32(x)))
	}
	return T(gomath.Log10F64(float64(x)))
}

// Log1p returns log1p(x), the same bits on the CPU and the GPU (math.Log1p's function).
func Log1p[T Float](x T) T {
	if is32[T]() {
		return T(gomath.Log1pF32(float32(x)))
	}
	return T(gomath.Log1pF64(float64(x)))
}

// Sin returns sin(x), the same bits on the CPU and the GPU (math.Sin's function).
func Sin[T Float](x T) T {
	if is32[T]() {
		return T(gomath.SinF32(float32(x)))
	}
	return T(gomath.SinF64(float64(x)))
}

// Cos returns cos(x), the same bits on the CPU and the GPU (math.Cos's function).
func Cos[T Float](x T) T {
	if is32[T]() {
		return T(gomath.CosF32(float32(x)))
	}
	return T(gomath.CosF64(float64(x)))
}

// Tan returns tan(x), the same bits on the CPU and the GPU (math.Tan's function).
func Tan[T Float](x T) T {
	if is32[T]() {
		return T(gomath.TanF32(float32(x)))
	}
	return T(gomath.TanF64(float64(x)))
}

// Asin returns asin(x), the same bits on the CPU and the GPU (math.Asin's function).
func Asin[T Float](x T) T {
	if is32[T]() {
		return T(gomath.AsinF32(float32(x)))
	}
	return T(gomath.AsinF64(float64(x)))
}

// Acos returns acos(x), the same bits on the CPU and the GPU (math.Acos's function).
func Acos[T Float](x T) T {
	if is32[T]() {
		return T(gomath.AcosF32(float32(x)))
	}
	return T(gomath.AcosF64(float64(x)))
}

// Atan returns atan(x), the same bits on the CPU and the GPU (math.Atan's function).
func Atan[T Float](x T) T {
	if is32[T]() {
		return T(gomath.AtanF32(float32(x)))
	}
	return T(gomath.AtanF64(float64(x)))
}

// Sinh returns sinh(x), the same bits on the CPU and the GPU (math.Sinh's function).
func Sinh[T Float](x T) T {
	if is32[T]() {
		return T(gomath.SinhF32(float32(x)))
	}
	return T(gomath.SinhF64(float64(x)))
}

// Cosh returns cosh(x), the same bits on the CPU and the GPU (math.Cosh's function).
func Cosh[T Float](x T) T {
	if is32[T]() {
		return T(gomath.CoshF32(float32(x)))
	}
	return T(gomath.CoshF64(float64(x)))
}

// Tanh returns tanh(x), the same bits on the CPU and the GPU (math.Tanh's function).
func Tanh[T Float](x T) T {
	if is32[T]() {
		return T(gomath.TanhF32(float32(x)))
	}
	return T(gomath.TanhF64(float64(x)))
}

// Asinh returns asinh(x), the same bits on the CPU and the GPU (math.Asinh's function).
func Asinh[T Float](x T) T {
	if is32[T]() {
		return T(gomath.AsinhF32(float32(x)))
	}
	return T(gomath.AsinhF64(float64(x)))
}

// Acosh returns acosh(x), the same bits on the CPU and the GPU (math.Acosh's function).
func Acosh[T Float](x T) T {
	if is32[T]() {
		return T(gomath.AcoshF32(float32(x)))
	}
	return T(gomath.AcoshF64(float64(x)))
}

// Atanh returns atanh(x), the same bits on the CPU and the GPU (math.Atanh's function).
func Atanh[T Float](x T) T {
	if is32[T]() {
		return T(gomath.AtanhF32(float32(x)))
	}
	return T(gomath.AtanhF64(float64(x)))
}

// Cbrt returns cbrt(x), the same bits on the CPU and the GPU (math.Cbrt's function).
func Cbrt[T Float](x T) T {
	if is32[T]() {
		return T(gomath.CbrtF32(float32(x)))
	}
	return T(gomath.CbrtF64(float64(x)))
}

// Erf returns erf(x), the same bits on the CPU and the GPU (math.Erf's function).
func Erf[T Float](x T) T {
	if is32[T]() {
		return T(gomath.ErfF32(float32(x)))
	}
	return T(gomath.ErfF64(float64(x)))
}

// Atan2 returns the arc tangent of y/x, the signs of both choosing the quadrant (as
// math.Atan2), the same bits on the CPU and the GPU.
func Atan2[T Float](y, x T) T {
	if is32[T]() {
		return T(gomath.Atan2F32(float32(y), float32(x)))
	}
	return T(gomath.Atan2F64(float64(y), float64(x)))
}

// Pow returns x to the power y (as math.Pow), the same bits on the CPU and the GPU.
func Pow[T Float](x, y T) T {
	if is32[T]() {
		return T(gomath.PowF32(float32(x), float32(y)))
	}
	return T(gomath.PowF64(float64(x), float64(y)))
}

// Hypot returns sqrt(x*x + y*y) without overflow (as math.Hypot), the same bits on
// the CPU and the GPU.
func Hypot[T Float](x, y T) T {
	if is32[T]() {
		return T(gomath.HypotF32(float32(x), float32(y)))
	}
	return T(gomath.HypotF64(float64(x), float64(y)))
}

// Mod returns the remainder of x/y with the sign of x, exact (as math.Mod; the
// library's fmod), the same bits on the CPU and the GPU.
func Mod[T Float](x, y T) T {
	if is32[T]() {
		return T(gomath.FmodF32(float32(x), float32(y)))
	}
	return T(gomath.FmodF64(float64(x), float64(y)))
}

// Sqrt returns the correctly rounded square root of x (PTX sqrt.rn).
func Sqrt[T Float](x T) T {
	if is32[T]() {
		return T(float32(math.Sqrt(float64(x)))) // exact: 53 >= 2*24+2 bits
	}
	return T(math.Sqrt(float64(x)))
}

// FMA returns x*y + z rounded once (PTX fma.rn), as math.FMA does for float64.
func FMA[T Float](x, y, z T) T {
	if is32[T]() {
		return T(gomath.FMA32(float32(x), float32(y), float32(z)))
	}
	return T(math.FMA(float64(x), float64(y), float64(z)))
}
