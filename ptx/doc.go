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
// with .rn, cvt with explicit rounding, integer and bit operations, table loads, plus
// if/else and a while loop (fmod's). No .approx instruction is used. The Go mirror (gomath.ExpF32, gomath.PowF64, ...) performs
// the same operations in the same order (float32 fma through gomath.FMA32, which is
// exact; every float result is converted explicitly so Go can't fuse), so the CPU
// backend gets bit-identical results, NaN included: NaN results are the canonical NaN
// the GPU produces (0x7fffffff, 0x7fffffffffffffff). A test runs an independent
// interpreter of the IR against the generated mirrors.
//
// The algorithms and their sources are described in each math_*.go file: Cody & Waite
// argument reduction and minimax polynomials (coefficients from internal/remez, an
// offline Remez tool) throughout; Tang's table methods for the float64 logarithms, for
// the extra-precise logarithm and exponential inside float64 pow (also behind log1p,
// asinh, acosh and atanh) and for float64 atan and atan2; Cody-Waite plus Payne & Hanek
// reduction (a 192-bit window of 2/π for float64) for sin, cos and tan of any argument;
// double-word arithmetic (Dekker's and Knuth's exact sums and products, math_dd.go)
// wherever a rounding would otherwise cost a visible fraction of an ulp; fmod by exact
// long division, 51 bits per step; cbrt by division-free Newton steps; erf by a series
// below 1 and piecewise polynomials for erfc above. Several float32 functions (asin,
// acos, atan2, asinh, acosh, atanh, cbrt, hypot, fmod, pow) compute in float64 and round
// once: on sm_90 float64 runs at half the float32 rate, and a short float64 path keeps
// them within half an ulp.
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
// Maximum error measured against correctly rounded results: float32 against float64
// Go math (math.Mod for fmod, bit for bit), float64 against math/big references at 300
// bits (2400-bit π for the trigonometric reduction). The arguments are uniform over the
// interesting range, uniform bit patterns over every magnitude, values near 1, small
// magnitudes down to 2^-70, special values and known hard cases (the float64 nearest
// to a multiple of π/2, k·π/2 for small k); the two-argument functions take random
// pairs of every magnitude, of close magnitudes, of ratios near 1 and, for pow, bases
// near 1 with huge exponents and results at the overflow and underflow thresholds.
// The default run takes 200,000 arguments per float32 function and 3,000 to 20,000 per
// float64 one; the numbers below are the maxima over "go test -long" (20 million and
// 300,000 to 1 million). Subnormal results of float64 pow and atan2 round twice (at
// most one subnormal ulp): for normal results both are within 0.51 ulp.
//
// "path" counts the floating-point operations one argument executes on the common path
// (go test -v -run MathPathCost, an interpreter of the IR), "+d" and "+s" a division
// or square root, about 10 instructions each in SASS (float64: MUFU.RCP64H or
// MUFU.RSQ64H plus DFMA steps). "SASS" is the static instruction count of the inlined
// function in a one-element kernel compiled by ptxas 11.8 for sm_90, rare paths, the
// division's slow path and kernel overhead (about 12) included; "fp" counts its
// floating-point arithmetic instructions (FFMA, FADD, DFMA, MUFU, ...), again over all
// paths (go test -v -run MathSassCounts). None spills or uses local memory.
//
//	function  float32: ulp  path    SASS (fp)    float64: ulp  path    SASS (fp)
//	exp       0.86          12      48 (14)      0.84          17      81 (19)
//	exp2      0.86          11      46 (13)      0.77          22      84 (24)
//	expm1     0.87          26      96 (46)      0.92          31      191 (61)
//	log       0.87          16      45 (16)      0.50          28      142 (42)
//	log2      1.01          24      54 (24)      0.50          32      150 (46)
//	log10     1.01          24      53 (24)      0.50          32      150 (46)
//	log1p     0.94          22+d    189 (55)     0.55          43      145 (43)
//	sin       1.18          29      110 (35)     0.71          43      210 (59)
//	cos       1.17          29      110 (35)     0.72          43      210 (59)
//	tan       1.21          32+d    219 (59)     0.76          55+d    339 (110)
//	asin      0.51          19+s    121 (42)     0.59          33+s    165 (56)
//	acos      0.51          19+s    128 (42)     0.59          33+s    170 (56)
//	atan      1.36          14+d    141 (36)     0.53          13+d    172 (50)
//	atan2     0.51          16+d    192 (53)     0.74          23+2d   266 (76)
//	sinh      1.33          29+d    264 (92)     1.23          34+d    413 (130)
//	cosh      1.30          13+d    200 (50)     1.26          18+d    253 (72)
//	tanh      1.50          28+d    233 (77)     1.49          33+d    351 (112)
//	asinh     0.50          16+s    132 (37)     0.59          60+s    331 (119)
//	acosh     0.50          13+s    123 (34)     0.54          56+s    316 (114)
//	atanh     0.50          17+d    176 (52)     0.58          57+d    259 (93)
//	pow       0.50          29      145 (30)     0.73          52      221 (55)
//	cbrt      0.50          19      67 (20)      0.50          28      83 (28)
//	hypot     0.50          5+s     86 (27)      0.50          21+s    130 (45)
//	erf       0.76          32      106 (45)     0.81          37      160 (55)
//	fmod      exact         8+d     162 (44)     exact         6+d     168 (45)
//
// The float32 functions computed in float64 (asin, acos, atan2, asinh, acosh, atanh,
// pow, cbrt, hypot, fmod) show their float64 operations in "path". fmod's path is one
// step of its loop, taken once for quotients below 2^51 (float64: up to 42 steps for the
// widest exponent gaps). The float64 inverse hyperbolic functions are the longest
// common paths (about 60 operations plus a root or a division): they trade length for
// full accuracy at every argument through the double-word logarithm.
package ptx
