// Package expr is the elementwise expression language: users write a kernel as one
// expression in Go syntax ("a*x + b", "where(x > 0, sqrt(x), -x)"), and the library's
// own elementwise operations are expressions too, so one expression is one fused kernel.
//
// Parse type-checks the source against an Env, which declares each name: an operand (an
// input array, bound to an input slot), a scalar parameter (a kernel argument, bound to
// a parameter slot) or a constant. The result is an Expr holding a small, explicit,
// fully typed IR (Node: Input, Param, Const, Unary, Binary, Call, Cast, Select) that a
// code generator lowers to PTX, and that Compile turns into a Program, a fast chunked
// evaluator for the CPU.
//
// # Syntax
//
// Expressions use Go's expression syntax: names, numeric literals (decimal, hex, octal,
// binary, float, hex float, exponent, with _ separators), true and false, parentheses,
// calls of the functions below, conversions written as Go conversions (float32(x),
// int64(x), bool(x), and the aliases int, uint, byte, rune for int64, uint64, uint8,
// int32 on 64-bit platforms), and the operators
//
//	binary: + - * / % & | ^ &^ << >> == != < <= > >= && ||
//	unary:  - + ! ^
//
// with Go's precedence. The names pi and e are untyped float constants; inf and nan are
// weak float64 constants (NumPy's numpy.inf and numpy.nan). Anything else (strings,
// characters, imaginary numbers, index and slice expressions, selectors, function
// literals, composite literals, comments...) is an error. Python's operators that Go
// lacks are errors too, never read another way: x ** y (write pow(x, y)) and x // y
// (Go would read a comment; write floor_divide(x, y), numpy.floor_divide: floor(x / y)
// would truncate integers before flooring).
//
// # Types and promotion
//
// The element types are those of package dtype. Operands combine by NumPy 2's rules:
// two typed values promote with dtype.Promote (int8 with uint8 is int16, int32 with
// float32 is float64, uint64 with int64 is float64; comparisons of a signed integer with
// a uint64 are exact instead, as NumPy's since 1.25). Untyped constants (literals, pi, e,
// UntypedConstDecl) and weak values (inf, nan, WeakParamDecl, WeakConstDecl) are "weak"
// as in NEP 50: they take the type of the typed operand they meet unless their kind is
// higher (dtype.PromoteWeak): with a float32 x, x*2 and x*2.5 are float32; with an int32
// i, i+1 is int32 but i+1.5 is float64; with a bool b, b+1 is int64. Operations among
// weak values only stay weak, with the types promoted among themselves. An expression
// that is only an untyped constant has its default type: bool, int64 or float64.
//
// Untyped constant expressions are evaluated exactly at parse time, as in Go (so 7/2 is
// 3 and 1<<62 is exact; integers are limited to 512 bits, shift counts to 1100). When an
// untyped constant takes a type it must be representable, as in Go: u8 + 256, u8 + -1,
// int8(3.5) and f16*70000 are errors (NumPy 2 also rejects out-of-range Python integers).
// A float constant is rounded to float32 directly and to float16 or bfloat16 through
// float64, as NumPy converts a Python float. NumPy's extensions to Go's constant rules:
// a bool constant converts to 0 or 1, and bool(number) is number != 0.
//
// Being exact, untyped constants have no negative zero (-0.0 is 0, as in Go; write
// -float64(0)), and comparisons need representable constants too (u8 < 300 is an error,
// where NumPy 2 answers true).
//
// Every implicit conversion appears in the IR as a Cast node, and every constant as a
// typed Const; Expr.String shows them ("x*2" prints as "x * float32(2)"). Operations
// whose operands are all constants are folded (with the CPU kernels, so the value is the
// one evaluation would give), and NaN constants are canonical quiet NaNs (see
// Scalar.Canonical).
//
// # Operators
//
// Operators are Go's, applied to the promoted type:
//   - + - * on integers wrap around; / truncates toward zero (Go's /: NumPy's / would
//     be true division and its //, floor_divide(x, y) here, floors) and % has the sign
//     of the dividend (Go, C; numpy.fmod, not numpy.remainder, which is Python's % and
//     remainder(x, y) here); integer division or remainder by zero gives 0 (NumPy
//     also gives 0, with a warning); MinInt / -1 is MinInt and MinInt % -1 is 0, as
//     in Go.
//   - On floats, + - * / are IEEE 754 and % is fmod (exact, sign of the dividend; Go's
//     math.Mod). A NaN result is the canonical NaN (see NaN below).
//   - << and >> promote both operands like the other operators (NumPy's left_shift), need
//     integers, and read the count as unsigned: a count of the type's width or more, or
//     a negative one, gives 0 (or -1 for >> of a negative value), as Go does for large
//     unsigned counts. A negative constant count is an error.
//   - & | ^ &^ need integers or bools (on bools they are logical and, or, xor, and-not);
//     unary ^ is bitwise complement, or logical not on bool.
//   - Comparisons give bool; floats compare as IEEE 754 (NaN is unequal to everything);
//     bools compare with false < true.
//   - && || ! need bool operands (both sides are evaluated; there are no side effects).
//   - + - * / % are not defined on bool (b + b is an error, b + 1 is int64).
//
// # Half precision
//
// float16 and bfloat16 values are stored as their bits (uint16) and never computed on
// directly: the IR converts them to float32 (exactly) and computes in float32. A
// fused expression keeps its intermediate values in float32 and rounds once, where a
// value leaves the computation: when the result is stored (converted to the output's
// type: Expr.Convert), selected by where, or converted explicitly in the source. So
// with float16 x, y and z, x*y + z is float16(float32(x)*float32(y) + float32(z)), as
// CuPy's and PyTorch's fused kernels compute it (NumPy, which runs one operation at a
// time, rounds the product too: write float16(x*y) + z for that). One operation alone
// is float32 arithmetic rounded once, which for + - * / and sqrt is the correctly
// rounded half-precision result (float32 has more than twice the precision plus two
// bits of either half type). Select (where) moves half values unconverted.
//
// # Conversions
//
// Cast (and a conversion in the source) converts as Go does, except where Go leaves the
// result to the implementation:
//   - integer to integer: wraps (keeps the low bits, sign- or zero-extends);
//   - integer to float: rounds to nearest even (once, also to float16 and bfloat16);
//   - float to float: rounds to nearest even; overflow gives ±Inf; NaN stays NaN;
//   - float to integer: truncates toward zero; NaN gives 0 and values out of the range
//     saturate to the type's minimum or maximum (PTX cvt.rzi's behaviour, so the CPU and
//     the GPU agree; NumPy leaves this undefined and gives MinInt on x86);
//   - to bool: x != 0 (so NaN is true and -0 false); from bool: 0 or 1.
//
// # Functions
//
// The functions have NumPy's names and semantics (see Func for each):
//
//	abs sqrt cbrt exp exp2 expm1 log log2 log10 log1p sin cos tan asin acos atan atan2
//	sinh cosh tanh asinh acosh atanh pow (alias power) hypot minimum maximum fmin fmax
//	floor ceil trunc rint round sign isnan isinf isfinite signbit copysign fmod
//	floor_divide remainder (alias mod) square reciprocal erf where(cond, a, b)
//	clip(x, lo, hi)
//
// Arguments of several-argument functions promote together like operator operands.
//   - The floating-point functions (sqrt ... erf, atan2, hypot, copysign, rint) promote
//     integer and bool arguments to the smallest float type that holds them, as NumPy's
//     loops do: bool, int8 and uint8 to float16; int16 and uint16 to float32; wider
//     integers to float64 (sqrt(i32) is float64, sqrt(i8) is float16). The
//     transcendental ones (cbrt, exp ... erf, atan2, hypot, pow) are the device math
//     library's Go mirrors (package ptx/gomath): the same IEEE operations as the PTX the
//     GPU runs, so the CPU and CUDA backends agree bit for bit, within 2 ulp of the
//     correctly rounded result; the others are exact. float16 and bfloat16 compute in
//     float32 and round once to the half type.
//   - abs, sign, square, reciprocal, pow, minimum, maximum, fmod, floor_divide and
//     remainder keep integer types (integer results wrap; reciprocal and integer
//     division truncate; see Pow for negative integer exponents); abs of bool or
//     unsigned is the identity; sign, square, reciprocal, pow, fmod, floor_divide and
//     remainder of bools are errors (NumPy would compute them as int8).
//   - floor, ceil, trunc and round return integers and bools unchanged (NumPy ≥ 2.1;
//     numpy.round always did); rint of an integer promotes to float like sqrt.
//   - round is rint: halves round to even, like numpy.round with 0 decimals.
//   - minimum and maximum propagate NaN (the canonical NaN); fmin and fmax return the
//     other argument when one is NaN (the canonical NaN when both are); -0 is less than
//     +0 for all four. On bools they are & and |.
//   - clip(x, lo, hi) is minimum(maximum(x, lo), hi) (NaN propagates, as numpy.clip).
//   - isnan, isinf, isfinite and signbit return bool; on integers they are constants
//     (signbit(i) is i < 0).
//   - where(cond, a, b) is numpy.where: a non-bool cond means cond != 0.
//   - fmod(x, y) is x % y.
//   - floor_divide(x, y) and remainder(x, y) are numpy.floor_divide and numpy.remainder
//     (mod is numpy.mod, remainder's alias): the quotient rounded toward -Inf and the
//     remainder with the sign of y. On integers x // 0 and x mod 0 are 0, MinInt // -1
//     is MinInt and MinInt mod -1 is 0; on floats they follow NumPy's npy_divmod
//     (floor_divide(x, 0) is x/0, remainder(x, 0) NaN; otherwise an infinite or NaN x gives NaN).
//     FloorDivide and Remainder state the rules in full.
//
// A function of weak arguments only (sqrt(2), maximum(a, 1) with a weak a) gives a weak
// result, as a Python number would be. (NumPy returns a strong numpy.float64 for
// numpy.sqrt(2.0); we keep Python's math.sqrt reading.)
//
// # NaN
//
// The library's NaN policy (internal/fp): an operation that computes a NaN gives the
// canonical NaN, 0x7fffffff for float32 and 0x7fffffffffffffff for float64 (rounded to
// 0x7fff for float16 and bfloat16), whatever NaN came in: + - * / %, floor_divide,
// remainder, sqrt, square, reciprocal, floor, ceil, trunc, rint and the math functions (whose NaN results are the
// GPU's, see package ptx/gomath), minimum, maximum, fmin and fmax. It is what the GPU's
// arithmetic gives, so the CPU and CUDA backends agree bit for bit, and it makes the
// reductions and scans built on these operators independent of the order in which
// values meet. NumPy keeps the NaN operand's bits instead. Negation, abs and copysign
// work on the sign bit and keep the rest of a NaN's bits; where moves values unchanged;
// sign(NaN) is the NaN itself; conversions between float types keep a NaN's sign, not
// necessarily its payload. NaN constants are canonical too, in their own form
// (Scalar.Canonical).
//
// # Errors
//
// Parse returns an *Error carrying the line and column of the offending token for
// syntax errors, unknown names, wrong argument counts, type errors (&& on floats, % on
// bool, << on floats) and constant errors (overflow, truncation, division by zero). It
// never panics, whatever the input.
//
// # The IR, for code generators
//
// Node documents the invariants of the IR (operation types are never float16 or
// bfloat16; operands of an operation share its type; comparisons and predicates give
// bool); BinaryOp, UnaryOp, Func and Cast document the exact semantics a backend must
// reproduce, including the cases Go or PTX leave open (integer division by zero, shift
// counts, float→integer saturation). FloorDivide and Remainder are not computed
// directly: Definition returns the IR of other operations that computes a call of
// them, which the CPU evaluator computes and a code generator lowers in the call's
// place, so every backend follows one statement of NumPy's rule. Postorder lists the
// nodes in evaluation order, Operands gives a node's operands, Validate checks
// hand-built IR, and Key identifies an IR with its types for a kernel cache.
//
// # Evaluation
//
// Compile turns an Expr into a Program, which evaluates the expression over slices
// chunk by chunk (ChunkSize elements): each IR node is one typed loop over the chunk, with
// no per-element dispatch, interface call or reflection. Constant folding at parse time
// uses the same loops, so a folded constant equals what evaluation would give. A Program
// is safe for concurrent use; Eval takes typed slices ([]float32 ...), EvalBytes raw
// byte views.
package expr
