// Package ptx writes PTX text in Go: a small builder for modules, kernels and device
// functions, and a device math library whose results the CPU can reproduce bit for bit.
//
// The library never runs NVRTC or nvcc: the CUDA driver compiles the text this package
// writes (cuModuleLoadData). Modules declare ".version 7.8" by default (Module.Version),
// which the CUDA 13 driver and CUDA 11.8's ptxas accept, and ".target sm_XY" from a
// compute capability (sm_90 for the H200).
//
// # Builder
//
// NewModule starts a module; Module.Kernel adds a ".visible .entry", Module.Func a
// ".func" (all device functions are declared at the top, so calls may come before the
// definition). A Func allocates typed virtual registers (Reg) from one pool per class,
// declared as ".reg .f32 %f<N>;" and so on: %p (.pred), %rs (16-bit), %r (32-bit
// integers), %rd (64-bit integers and addresses), %f (.f32), %fd (.f64).
//
// Instructions are appended with Op (any opcode text and operands) or the helpers: Add,
// Sub, Mul, Fma, Div, Sqrt (floats always get .rn, so ptxas never contracts a mul and an
// add behind our back), Setp, Selp, Cvt (C/Go rounding rules), And, Or, Shl, Shr, Mov,
// Ld and St (state space, cache operator, NC, .v2/.v4 vectors), Atom and Red, Shfl,
// Vote, BarSync, Membar, Fence, Call, Return, Special (%tid.x, %laneid, %smid, ...).
// Labels come from NewLabel and Place; At(p) and AtNot(p) guard the next instruction
// ("@%p1 bra $L__3;"). Operands: Reg, Int, Uint, ImmF32, ImmF64 (written exactly as
// 0fXXXXXXXX / 0dXXXXXXXXXXXXXXXX), Mem(base, off), Sym, Vec, Label, SReg.
// Module.Var, Module.Shared and Module.ExternShared declare module-scope variables,
// static shared memory and dynamic (".extern .shared") shared memory.
//
// RegType and MemType map dtype.DType to PTX: Bool is .pred in registers and one byte
// (.u8) in memory; 8-bit integers compute in 16-bit registers; Float16 and BFloat16 are
// .b16 in memory and registers and are converted to .f32 (Cvt) to compute.
//
// A Module is not safe for concurrent use, but modules share nothing (there is no
// package state that changes), so any number of goroutines can build their own. The
// text depends only on the calls made: the same calls give the same bytes.
//
// # Math library
//
// Func.Math(fn, args...) appends inline code for fn (Exp, Log, Sin, Pow ...) on .f32 or
// .f64 registers and returns the result register; Module.MathFunc defines the same
// code once as a .func to Call instead, for kernels that use a function many times.
// Inline is what the elementwise generator should use: ptxas then schedules the math
// with the loads around it, and the rare paths (huge arguments, subnormals, special
// values) stay in branches that a warp only takes when one of its lanes needs them.
// MathFns(F32) and MathFns(F64) list what exists; Supports tells for one function.
//
// Every function is written once, in a small intermediate form (mathir.go), from which
// both the PTX and a Go function in package gomath are generated (go generate ./ptx).
// Each IR node is one IEEE operation with a defined rounding: add/sub/mul/fma/div/sqrt
// with .rn, cvt with explicit rounding, integer and bit operations, table loads. No
// .approx instruction is used. The Go mirror (gomath.ExpF32, gomath.PowF64, ...) performs
// the same operations in the same order (float32 fma through gomath.FMA32, which is
// exact; every float result is converted explicitly so Go can't fuse), so the CPU
// backend gets bit-identical results, NaN included: NaN results are the canonical NaN
// the GPU produces (0x7fffffff, 0x7fffffffffffffff).
//
// The algorithms and their sources are described in each math_*.go file: Cody & Waite
// argument reduction and minimax polynomials (coefficients from internal/remez,
// an offline Remez tool) for exp and log, Tang's table method for the float64 logarithm
// and the logarithm inside pow, Cody-Waite plus Payne & Hanek reduction for sin, cos and tan of any argument.
//
// # Lowering an expression
//
// The elementwise generator turns a typed expression tree into registers, one node at a
// time, and calls Math for the functions. For y = exp(a*x) + sin(x) over float32:
//
//	m := ptx.NewModule(9, 0)
//	k := m.Kernel("ew", ptx.P("x", ptx.U64), ptx.P("y", ptx.U64), ptx.P("n", ptx.U64), ptx.P("a", ptx.F32))
//	// ... index computation, loads: x0 holds x[i] (see the grid-stride example in
//	// example_test.go for 64-bit indexing and .v4 loads)
//	x0 := k.Reg(ptx.F32)
//	k.Ld(ptx.Global, ptx.NC, ptx.F32, ptx.Mem(px, 0), x0)
//	ax := k.Reg(ptx.F32)
//	k.Mul(ax, k.LdParam(3), x0)      // a*x   (mul.rn.f32)
//	e := k.Math(ptx.Exp, ax)          // exp(a*x), inline
//	s := k.Math(ptx.Sin, x0)          // sin(x)
//	r := k.Reg(ptx.F32)
//	k.Add(r, e, s)                    // add.rn.f32
//	k.St(ptx.Global, ptx.CacheDefault, ptx.F32, ptx.Mem(py, 0), r)
//
// and the CPU backend computes the same value with
//
//	r := float32(gomath.ExpF32(float32(a*x)) + gomath.SinF32(x))
//
// For float16/bfloat16 inputs, Cvt to .f32, call the float32 function and Cvt back
// (cvt.rn.f16.f32); the CPU does the same with package dtype's conversions. Integer
// inputs convert to the float type NumPy's rules choose first.
//
// # Accuracy and cost
//
// Maximum error measured against correctly rounded results (float32: float64 math as
// the reference, 200,000 arguments per function in the default test run, uniform over
// the interesting range plus uniform bit patterns over every magnitude plus special
// values; pow on 300,000 pairs; float64: math/big references at 300 bits). "SASS" is the
// static instruction count of the inlined function in a one-element kernel compiled by
// ptxas 11.8 for sm_90, rare paths and kernel overhead (about 12) included; "fp" counts
// the floating-point arithmetic instructions (FFMA, FADD, FMUL, DFMA, ...), again over
// all paths. None spills or uses local memory.
//
//	function  float32 ulp  SASS (fp)   float64 ulp  SASS (fp)
//	exp       0.82         48 (14)     0.77         81 (19)
//	exp2      0.79         46 (13)     0.73         84 (24)
//	expm1     1.23         83 (35)     1.06        180 (50)
//	log       0.82         45 (16)     0.50        142 (42)
//	log2      1.00         54 (24)     0.50        150 (46)
//	log10     1.00         53 (24)     0.50        150 (46)
//	log1p     0.85        187 (55)     -
//	sin       1.12        110 (35)     -
//	cos       1.10        110 (35)     -
//	tan       1.07        219 (59)     -
//	atan      1.33        141 (36)    -
//	sinh      1.35        251 (81)     1.13        402 (119)
//	cosh      1.25        200 (50)     1.15        253 (72)
//	tanh      1.45        218 (66)     1.31        340 (101)
//	pow       0.50        145 (30)     -
//
// The common path is much shorter than the static count: exp(float32) runs 10 FFMA,
// 1 FADD, 1 FMUL and 3 integer instructions when |x| < 87. Functions with a division
// (tan, tanh, sinh, cosh, log1p) include the div.rn slow path that ptxas adds.
// TestMathSassCounts (go test -v -run MathSassCounts ./ptx) prints the counts.
//
// Not written yet: float32 asin, acos, atan2, asinh, acosh, atanh, cbrt, hypot, erf,
// fmod; float64 log1p, sin, cos, tan (needs a float64 Payne-Hanek), the inverse
// trigonometric and inverse hyperbolic functions, pow, cbrt, hypot, erf, fmod.
// Supports reports false for them and Math panics.
package ptx
