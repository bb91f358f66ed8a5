package expr

import (
	"go/constant"
	"math"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// stdEnv declares one operand per element type, named by NumPy's short names, and
// parameters: pf32 (strong float32), wf (weak float64), wi (weak int64), wb (weak bool),
// and constants.
func stdEnv() Env {
	env := Env{}
	names := []string{"b", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"}
	for i, n := range names {
		env[n] = OperandDecl(i, dtype.All[i])
	}
	env["pf32"] = ParamDecl(0, dtype.Float32)
	env["wf"] = WeakParamDecl(1, dtype.Float64)
	env["wi"] = WeakParamDecl(2, dtype.Int64)
	env["wb"] = WeakParamDecl(3, dtype.Bool)
	env["k3"] = ConstDecl(ScalarOf(int32(3)))
	env["wk"] = WeakConstDecl(ScalarOf(2.5))
	env["uk"] = UntypedConstDecl(constant.MakeInt64(300))
	return env
}

// TestTypes checks result types against NumPy 2 (numpy.result_type with NEP 50 weak
// Python scalars, and the ufunc loops NumPy picks), hand-checked.
func TestTypes(t *testing.T) {
	cases := []struct {
		src  string
		want dtype.DType
	}{
		// NEP 50: Python scalars are weak.
		{"f32*2", dtype.Float32}, {"f32*2.5", dtype.Float32}, {"i32 + 1.5", dtype.Float64},
		{"i32 + 1", dtype.Int32}, {"u8 + 1", dtype.Uint8}, {"u8 - 1", dtype.Uint8},
		{"b + 1", dtype.Int64}, {"b * 1.5", dtype.Float64}, {"f16 * 2.5", dtype.Float16},
		{"bf16 + 1", dtype.BFloat16}, {"i8 * 2.0", dtype.Float64}, {"b & true", dtype.Bool},
		// numpy.promote_types.
		{"i8 + u8", dtype.Int16}, {"u64 + i64", dtype.Float64}, {"i32 + f32", dtype.Float64},
		{"i16 + f16", dtype.Float32}, {"i8 + f16", dtype.Float16}, {"f16 + bf16", dtype.Float32},
		{"b + i8", dtype.Int8}, {"u32 * i32", dtype.Int64}, {"u16 + f32", dtype.Float32},
		{"i8 + bf16", dtype.BFloat16}, {"u8 << i32", dtype.Int32},
		// Strong and weak parameters and constants.
		{"f32 * pf32", dtype.Float32}, {"f16 * pf32", dtype.Float32}, {"f32 * wf", dtype.Float32},
		{"i32 * wf", dtype.Float64}, {"u8 * wi", dtype.Uint8}, {"wi * wf", dtype.Float64},
		{"i8 * wb", dtype.Int8}, {"wf", dtype.Float64}, {"wi + 1", dtype.Int64},
		{"i8 + k3", dtype.Int32}, {"f16 * wk", dtype.Float16}, {"i16 + uk", dtype.Int16},
		{"f32 * (wf * 2)", dtype.Float32}, {"f32 * inf", dtype.Float32}, {"i32 + nan", dtype.Float64},
		// Untyped constants alone take their default type.
		{"1", dtype.Int64}, {"2.5", dtype.Float64}, {"true", dtype.Bool}, {"1 << 62", dtype.Int64},
		{"pi", dtype.Float64}, {"-1", dtype.Int64}, {"7 / 2", dtype.Int64}, {"7 / 2.0", dtype.Float64},
		// Comparisons and logic.
		{"f32 > 0", dtype.Bool}, {"i8 == u64", dtype.Bool}, {"f32 > 0 && b", dtype.Bool},
		{"!(i32 < 3) || b", dtype.Bool},
		// Functions: NumPy's loops promote integers to the smallest float holding them.
		{"sqrt(i8)", dtype.Float16}, {"sqrt(u8)", dtype.Float16}, {"sqrt(i16)", dtype.Float32},
		{"sqrt(i32)", dtype.Float64}, {"sqrt(b)", dtype.Float16}, {"sqrt(u64)", dtype.Float64},
		{"sqrt(f16)", dtype.Float16}, {"sqrt(bf16)", dtype.BFloat16}, {"sqrt(2)", dtype.Float64},
		{"exp(f32)", dtype.Float32}, {"atan2(i8, i16)", dtype.Float32}, {"hypot(f32, 3)", dtype.Float32},
		{"copysign(i8, 1)", dtype.Float16}, {"rint(i32)", dtype.Float64}, {"erf(u16)", dtype.Float32},
		{"floor(i32)", dtype.Int32}, {"ceil(b)", dtype.Bool}, {"round(i32)", dtype.Int32},
		{"round(f32)", dtype.Float32}, {"trunc(u8)", dtype.Uint8},
		{"abs(i8)", dtype.Int8}, {"abs(u8)", dtype.Uint8}, {"abs(b)", dtype.Bool}, {"abs(f16)", dtype.Float16},
		{"pow(i32, 2)", dtype.Int32}, {"pow(i32, 0.5)", dtype.Float64}, {"power(f32, 2)", dtype.Float32},
		{"minimum(i8, u8)", dtype.Int16}, {"fmax(f32, f64)", dtype.Float64}, {"maximum(b, b)", dtype.Bool},
		{"fmin(i32, 1)", dtype.Int32}, {"clip(u8, 0, 255)", dtype.Uint8}, {"clip(f32, 0, 1)", dtype.Float32},
		{"fmod(i32, 3)", dtype.Int32}, {"fmod(f16, 2)", dtype.Float16}, {"sign(i8)", dtype.Int8},
		{"floor_divide(i8, u8)", dtype.Int16}, {"floor_divide(f16, 2)", dtype.Float16},
		{"remainder(i32, 2.5)", dtype.Float64}, {"mod(u8, 3)", dtype.Uint8}, {"remainder(bf16, f32)", dtype.Float32},
		{"square(u16)", dtype.Uint16}, {"reciprocal(f32)", dtype.Float32},
		{"isnan(f16)", dtype.Bool}, {"isinf(i32)", dtype.Bool}, {"signbit(i32)", dtype.Bool},
		{"where(b, f32, 0)", dtype.Float32}, {"where(b, i8, 1.5)", dtype.Float64},
		{"where(b, 1, 2)", dtype.Int64}, {"where(i32, f16, bf16)", dtype.Float32},
		// Conversions.
		{"float16(i32)", dtype.Float16}, {"int8(3.0)", dtype.Int8}, {"bool(f32)", dtype.Bool},
		{"int(f32)", dtype.Int64}, {"byte(i32)", dtype.Uint8}, {"rune(1)", dtype.Int32},
		{"float32(1) * 2", dtype.Float32}, {"(float32)(i8)", dtype.Float32}, {"float64(wf) * f32", dtype.Float64},
		// Shifts promote both sides.
		{"i32 << 2", dtype.Int32}, {"i8 >> i64", dtype.Int64}, {"1 << u8", dtype.Uint8},
	}
	env := stdEnv()
	for _, c := range cases {
		e, err := Parse(c.src, env)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		if e.DType() != c.want {
			t.Errorf("%q has type %v, want %v (%s)", c.src, e.DType(), c.want, e)
		}
		if err := Validate(e.Root); err != nil {
			t.Errorf("%q: invalid IR: %v", c.src, err)
		}
		checkRoundTrip(t, e, env)
	}
}

// checkRoundTrip parses e's printed form and checks that it gives the same Key.
func checkRoundTrip(t *testing.T, e *Expr, env Env) {
	t.Helper()
	s := e.String()
	e2, err := Parse(s, env)
	if err != nil {
		t.Errorf("reparse of %q: %v", s, err)
		return
	}
	if e2.Key() != e.Key() {
		t.Errorf("reparse of %q: key %s, want %s", s, e2.Key(), e.Key())
	}
}

// TestValues checks values against hand-checked NumPy 2 results (and Go's, where the
// two agree on the documented semantics).
func TestValues(t *testing.T) {
	nan, inf := math.NaN(), math.Inf(1)
	negz := math.Copysign(0, -1)
	type col = []float64
	cases := []struct {
		src  string
		in   map[string]col // inputs by name, converted to the operand's type
		want col            // result values, converted from the result type with Float64
	}{
		// Integer division and remainder: Go's truncation; /0 and %0 give 0.
		{"i32 / 2", map[string]col{"i32": {-7, 7, 0}}, col{-3, 3, 0}},
		{"i32 % 2", map[string]col{"i32": {-7, 7, 0}}, col{-1, 1, 0}},
		{"i32 % -2", map[string]col{"i32": {-7, 7}}, col{-1, 1}},
		{"fmod(i32, 3)", map[string]col{"i32": {-7, 7}}, col{-1, 1}}, // numpy.fmod(-7, 3) == -1
		// numpy.floor_divide and numpy.remainder floor: -7 // 2 == -4, -7 % 2 == 1.
		{"floor_divide(i32, 2)", map[string]col{"i32": {-7, 7, 0}}, col{-4, 3, 0}},
		{"remainder(i32, 2)", map[string]col{"i32": {-7, 7, 0}}, col{1, 1, 0}},
		{"mod(i32, -2)", map[string]col{"i32": {-7, 7}}, col{-1, -1}},
		{"floor_divide(i8, -1)", map[string]col{"i8": {-128, 5}}, col{-128, -5}},
		{"floor_divide(f64, -2)", map[string]col{"f64": {7, 0, negz, inf, nan}}, col{-4, negz, 0, nan, nan}},
		{"remainder(f64, -2)", map[string]col{"f64": {7, 0, -4}}, col{-1, negz, negz}},
		{"i32 / i64", map[string]col{"i32": {5, -5}, "i64": {0, 0}}, col{0, 0}},
		{"i8 / -1", map[string]col{"i8": {-128, 127}}, col{-128, -127}},
		{"i8 % -1", map[string]col{"i8": {-128, 127}}, col{0, 0}},
		{"u8 + 100", map[string]col{"u8": {200, 100}}, col{44, 200}}, // numpy.uint8 wraps
		{"i8 + 1", map[string]col{"i8": {127}}, col{-128}},
		{"u8 - 1", map[string]col{"u8": {0}}, col{255}},
		{"-u8", map[string]col{"u8": {1}}, col{255}},
		// Shifts: Go's results for large counts; the count is read unsigned.
		{"i32 >> 1", map[string]col{"i32": {-8, -1, 9}}, col{-4, -1, 4}},
		{"i32 >> 40", map[string]col{"i32": {-8, 8}}, col{-1, 0}},
		{"i32 << 40", map[string]col{"i32": {1}}, col{0}},
		{"i32 << i64", map[string]col{"i32": {1, 1, 1}, "i64": {-1, 63, 3}}, col{0, -9223372036854775808, 8}},
		{"i32 >> i32", map[string]col{"i32": {-8}}, col{-1}}, // count -8 reads as huge
		{"u8 >> 1", map[string]col{"u8": {255}}, col{127}},
		{"^i8", map[string]col{"i8": {0, 5}}, col{-1, -6}},
		{"i32 &^ 6", map[string]col{"i32": {15}}, col{9}},
		// Float semantics (numpy.float64 / float32).
		{"f64 % 2", map[string]col{"f64": {-7.5, 7.5}}, col{-1.5, 1.5}},
		{"f64 / 0", map[string]col{"f64": {1, -1, 0}}, col{inf, -inf, nan}},
		{"rint(f64)", map[string]col{"f64": {2.5, -0.5, 3.5, 1.49999}}, col{2, negz, 4, 1}},
		{"round(f32)", map[string]col{"f32": {0.5, 1.5, -2.5}}, col{0, 2, -2}},
		{"maximum(f64, 1)", map[string]col{"f64": {nan, 3}}, col{nan, 3}},
		{"fmax(f64, 1)", map[string]col{"f64": {nan, 3}}, col{1, 3}},
		{"minimum(f64, 0)", map[string]col{"f64": {negz}}, col{negz}},
		{"fmin(f64, f32)", map[string]col{"f64": {nan}, "f32": {nan}}, col{nan}},
		{"sign(f64)", map[string]col{"f64": {-3, 0, nan, inf}}, col{-1, 0, nan, 1}},
		{"hypot(f64, 4)", map[string]col{"f64": {3}}, col{5}},
		{"atan2(f64, -1)", map[string]col{"f64": {1}}, col{2.356194490192345}},
		{"cbrt(f64)", map[string]col{"f64": {-8, 27}}, col{-2, 3}},
		{"log1p(f64)", map[string]col{"f64": {1e-10}}, col{9.999999999500001e-11}},
		{"expm1(f64)", map[string]col{"f64": {1e-10}}, col{1.00000000005e-10}},
		{"erf(f64)", map[string]col{"f64": {0.5}}, col{0.5204998778130465}},
		{"exp2(f64)", map[string]col{"f64": {10}}, col{1024}},
		{"log10(f64)", map[string]col{"f64": {1000}}, col{3}},
		{"sqrt(f64)", map[string]col{"f64": {-1, 4}}, col{nan, 2}},
		{"clip(f64, 0, 1)", map[string]col{"f64": {nan, -2, 0.5, 7}}, col{nan, 0, 0.5, 1}},
		{"copysign(3, f64)", map[string]col{"f64": {negz, 1}}, col{-3, 3}},
		{"signbit(f64)", map[string]col{"f64": {negz, 0, -nan}}, col{1, 0, 1}},
		{"isfinite(f32) && !isnan(f32) && !isinf(f32)", map[string]col{"f32": {1, inf, nan}}, col{1, 0, 0}},
		{"f32 == f32", map[string]col{"f32": {nan, 1}}, col{0, 1}},
		{"pow(f64, 0.5)", map[string]col{"f64": {9, -1}}, col{3, nan}},
		// float32 rounds once per operation: 0.1f + 0.2f == 0.3f in float32.
		{"f32 + 0.2 == float32(0.3)", map[string]col{"f32": {float64(float32(0.1))}}, col{1}},
		{"f32 * 3", map[string]col{"f32": {2e38}}, col{inf}},
		// float16: numpy.float16(0.1) + numpy.float16(0.1) == numpy.float16(0.2).
		{"f16 + f16", map[string]col{"f16": {0.1}}, col{0.199951171875}},
		{"f16 * 2", map[string]col{"f16": {40000}}, col{inf}},
		{"f16 / 3", map[string]col{"f16": {1}}, col{0.333251953125}},
		{"float16(f64)", map[string]col{"f64": {65519, 65520, 1e-8, 3e-8}}, col{65504, inf, 0, 5.960464477539063e-08}},
		{"bfloat16(f64)", map[string]col{"f64": {1.00390625, 1.01171875}}, col{1, 1.015625}},
		{"sqrt(i8)", map[string]col{"i8": {2}}, col{1.4140625}}, // numpy.sqrt(numpy.int8(2)) is float16
		// Conversions: truncation, saturation, NaN → 0.
		{"int32(f32)", map[string]col{"f32": {3e9, -3e9, nan, -2.7, 2.7}}, col{2147483647, -2147483648, 0, -2, 2}},
		{"uint8(f64)", map[string]col{"f64": {-5, 300.7, 255.9, inf}}, col{0, 255, 255, 255}},
		{"int64(f64)", map[string]col{"f64": {1e19, -1e19}}, col{9223372036854775807, -9223372036854775808}},
		{"uint64(f64)", map[string]col{"f64": {1.8e19, 2e19}}, col{1.8e19, 18446744073709551615}},
		{"bool(f64)", map[string]col{"f64": {nan, negz, 0.5}}, col{1, 0, 1}},
		{"uint8(i8)", map[string]col{"i8": {-128}}, col{128}},
		{"uint32(i64)", map[string]col{"i64": {-1}}, col{4294967295}},
		{"int8(b) + int8(true)", map[string]col{"b": {1, 0}}, col{2, 1}},
		// Integer functions.
		{"pow(i32, 10)", map[string]col{"i32": {2, -2}}, col{1024, 1024}},
		{"pow(i32, i64)", map[string]col{"i32": {2, 1, -1, -1, 0}, "i64": {-1, -5, -3, -4, -1}}, col{0, 1, -1, 1, 0}},
		{"pow(i8, 7)", map[string]col{"i8": {2}}, col{-128}},
		{"abs(i8)", map[string]col{"i8": {-128, -5}}, col{-128, 5}},
		{"reciprocal(i32)", map[string]col{"i32": {0, -1, 2, 1}}, col{0, -1, 0, 1}},
		{"square(i8)", map[string]col{"i8": {16, -3}}, col{0, 9}},
		{"sign(i32)", map[string]col{"i32": {-9, 0, 4}}, col{-1, 0, 1}},
		{"maximum(i8, u8)", map[string]col{"i8": {-1}, "u8": {200}}, col{200}},
		// where and clip.
		{"where(i32, 1, 2)", map[string]col{"i32": {0, 5}}, col{2, 1}},
		{"where(f32 > 0, sqrt(f32), -f32)", map[string]col{"f32": {4, -3}}, col{2, 3}},
		{"where(b, f16, bf16)", map[string]col{"b": {1, 0}, "f16": {0.5, 0.5}, "bf16": {2, 2}}, col{0.5, 2}},
		{"clip(i32, -1, 1)", map[string]col{"i32": {-5, 0, 5}}, col{-1, 0, 1}},
		// Bools.
		{"b < true", map[string]col{"b": {0, 1}}, col{1, 0}},
		{"b ^ true", map[string]col{"b": {0, 1}}, col{1, 0}},
		{"b &^ true", map[string]col{"b": {1}}, col{0}},
		{"^b", map[string]col{"b": {1}}, col{0}},
		{"b + 1", map[string]col{"b": {1, 0}}, col{2, 1}},
		// Weak parameters and constants (params below: pf32=2, wf=0.5, wi=300, wb=true).
		{"f32 * wf", map[string]col{"f32": {3}}, col{1.5}},
		{"u8 + wi", map[string]col{"u8": {1}}, col{45}}, // 300 wraps to 44 in uint8 at run time
		{"i8 + wb", map[string]col{"i8": {1}}, col{2}},
		{"pf32 * f32 + k3", map[string]col{"f32": {1}}, col{5}},
		{"uk + 1", nil, col{301}},
		{"pi", nil, col{math.Pi}},
		{"e", nil, col{math.E}},
		{"float32(pi)", nil, col{float64(float32(math.Pi))}},
		{"-inf", nil, col{-inf}},
		{"1 << 62", nil, col{1 << 62}},
		{"0x1p-2 + 0b11 + 0o7 + 1_000", nil, col{1010.25}},
	}
	env := stdEnv()
	for _, c := range cases {
		e, err := Parse(c.src, env)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.src, err)
			continue
		}
		n := len(c.want)
		inputs := make([]any, 13)
		for name, vals := range c.in {
			d := env[name]
			vs := make([]Scalar, n)
			for i := range vs {
				vs[i] = ScalarOf(vals[i%len(vals)]).Convert(d.DType)
				if d.DType.IsInteger() && vals[i%len(vals)] < 0 {
					vs[i] = ScalarOf(int64(vals[i%len(vals)])).Convert(d.DType)
				}
			}
			inputs[d.Slot] = toSlice(d.DType, vs)
		}
		for i, s := range e.Inputs {
			if inputs[s.Index] == nil {
				t.Fatalf("%q: test lacks input %s (%d)", c.src, s.Name, i)
			}
		}
		params := []any{float32(2), 0.5, int64(300), true}
		p, err := e.Compile()
		if err != nil {
			t.Fatalf("Compile(%q): %v", c.src, err)
		}
		out := toSlice(e.DType(), make([]Scalar, n))
		if err := p.Eval(out, inputs, params); err != nil {
			t.Errorf("Eval(%q): %v", c.src, err)
			continue
		}
		for i, w := range c.want {
			g := fromSlice(e.DType(), out, i).Float64()
			ok := g == w && math.Signbit(g) == math.Signbit(w)
			if math.IsNaN(w) {
				ok = math.IsNaN(g)
			}
			if !ok {
				t.Errorf("%q (%s) element %d = %v, want %v", c.src, e, i, g, w)
			}
		}
		checkRoundTrip(t, e, env)
	}
}

// TestErrors checks that bad expressions give an *Error with a useful message and the
// right column.
func TestErrors(t *testing.T) {
	cases := []struct {
		src string
		col int
		msg string
	}{
		{"x + 1", 1, "undefined: x"},
		{"f32 && b", 5, "operator && not defined on float32"},
		{"b || 1", 3, "operator || not defined on 1 (untyped int constant)"},
		{"!f32", 1, "operator ! not defined on float32"},
		{"b % b", 3, "operator % not defined on bool"},
		{"b + b", 3, "operator + not defined on bool"},
		{"-b", 1, "operator - not defined on bool"},
		{"f32 << 1", 5, "operator << not defined on float32"},
		{"f32 & i32", 5, "operator & not defined on float64"},
		{"^f32", 1, "operator ^ not defined on float32"},
		{"1.5 & 1", 5, "operator & not defined on 1.5"},
		{"sqrt(f32, f32)", 1, "sqrt takes 1 argument, got 2"},
		{"atan2(f32)", 1, "atan2 takes 2 arguments, got 1"},
		{"where(b, 1)", 1, "where takes 3 arguments, got 2"},
		{"float32(f32, f32)", 1, "conversion to float32 takes 1 argument"},
		{"foo(f32)", 1, "undefined function: foo"},
		{"f32(1)", 1, "f32 is not a function"},
		{"pi(1)", 1, "pi is not a function"},
		{"sqrt", 1, "sqrt is a function, not a value"},
		{"float32", 1, "float32 is a type, not a value"},
		{"f32[0]", 4, "index expressions are not supported"},
		{"f32[1:2]", 4, "slice expressions are not supported"},
		{"math.Sqrt(f32)", 1, "only built-in functions"},
		{"f32.x", 1, "selectors"},
		{"*f32", 1, "pointer indirection"},
		{"f32 ** 2", 6, "pow(x, y)"},
		{"f32 + * 2", 7, "pointer indirection (*x)"},
		{"f32 // 2", 5, "// is not an operator: use floor_divide(x, y)"},
		{"floor_divide(b, b)", 1, "floor_divide not defined on bool"},
		{"mod(b, true)", 1, "mod not defined on bool"},
		{"remainder(f32)", 1, "remainder takes 2 arguments, got 1"},
		{"f32 /* half */ / 2", 5, "comments are not supported"},
		{"f32 +\n  1 // c", 5, "comments are not supported"},
		{"func() int { return 1 }", 1, "function literals"},
		{"[]int{1}", 1, "composite literals"},
		{"\"abc\"", 1, "strings are not supported"},
		{"'a'", 1, "character literals"},
		{"1i", 1, "complex numbers"},
		{"f32.(int)", 1, "type assertions"},
		{"&f32", 1, "operator & is not supported"},
		{"<-f32", 1, "operator <- is not supported"},
		{"sqrt(f32...)", 9, "... is not supported"},
		{"u8 + 256", 6, "constant 256 overflows uint8"},
		{"u8 + -1", 6, "constant -1 overflows uint8"},
		{"i8 * 200", 6, "constant 200 overflows int8"},
		{"f16 * 70000", 7, "constant 70000 overflows float16"},
		{"f32 * 1e39", 7, "constant 1e+39 overflows float32"},
		{"int8(3.5)", 6, "cannot convert 3.5 (untyped float constant) to int8 (truncated)"},
		{"int8(300)", 6, "constant 300 overflows int8"},
		{"1 << 70", 3, "overflows int64"},
		{"1 / 0", 3, "division by zero"},
		{"1.5 % 0", 5, "division by zero"},
		{"f32 << -1", 8, "negative shift count"},
		{"i32 << 1.5", 8, "shift count 1.5 (untyped float constant) must be an integer"},
		{"1 << 5000", 6, "shift count 5000 too large"},
		{"1.5 << 2", 1, "shifted operand 1.5"},
		{"true + 1", 6, "mismatched types"},
		{"true < 1", 6, "mismatched types"},
		{"true + false", 6, "operator + not defined on true"},
		{"sign(b)", 1, "sign not defined on bool"},
		{"pow(b, b)", 1, "pow not defined on bool"},
		{"fmod(b, b)", 1, "fmod not defined on bool"},
		{"f32 +", 6, "expected operand"},
		{"(f32", 5, "expected ')'"},
		{"f32 f32", 5, "expected 'EOF'"},
		{"", 1, "expected operand"},
		{"f32 +\n  foo", 3, "undefined: foo"},
		{"k3 + 2147483648", 6, "constant 2147483648 overflows int32"},
		{"u8 < 300", 6, "constant 300 overflows uint8"},
	}
	env := stdEnv()
	for _, c := range cases {
		_, err := Parse(c.src, env)
		if err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", c.src)
			continue
		}
		pe, ok := err.(*Error)
		if !ok {
			t.Errorf("Parse(%q) error %T %v, want *Error", c.src, err, err)
			continue
		}
		if pe.Col != c.col || !strings.Contains(pe.Msg, c.msg) {
			t.Errorf("Parse(%q) = %q (col %d), want col %d and %q", c.src, err, pe.Col, c.col, c.msg)
		}
	}
	if _, err := Parse("f32 +\n  foo", env); err == nil || !strings.Contains(err.Error(), "line 2 col 3") {
		t.Errorf("multi-line error = %v, want line 2 col 3", err)
	}
}

func TestEnvErrors(t *testing.T) {
	bad := []Env{
		{"x": OperandDecl(-1, dtype.Float32)},
		{"x": OperandDecl(MaxSlot+1, dtype.Float32)},
		{"x": OperandDecl(0, dtype.Invalid)},
		{"x": OperandDecl(0, dtype.Float32), "y": OperandDecl(0, dtype.Int32)},
		{"a": ParamDecl(0, dtype.Float32), "b": WeakParamDecl(0, dtype.Float32)},
		{"c": ConstDecl(Scalar{})},
		{"c": UntypedConstDecl(constant.MakeString("s"))},
		{"c": {Class: DeclConst}},
		{"c": {}},
		{"x": {Class: DeclOperand, DType: dtype.Float32, Weak: true}},
	}
	for i, env := range bad {
		if _, err := Parse("1", env); err == nil {
			t.Errorf("env %d accepted: %v", i, env)
		}
	}
	// Operands and parameters have separate slot spaces; names may share a slot.
	env := Env{"x": OperandDecl(0, dtype.Float32), "a": ParamDecl(0, dtype.Int8), "y": OperandDecl(0, dtype.Float32)}
	e, err := Parse("x + y*float32(a)", env)
	if err != nil {
		t.Fatal(err)
	}
	if len(e.Inputs) != 1 || e.Inputs[0].Name != "x" || len(e.Params) != 1 || e.Params[0].Name != "a" {
		t.Errorf("slots %+v %+v", e.Inputs, e.Params)
	}
}

// TestShadowing: a declared name hides a built-in of the same name.
func TestShadowing(t *testing.T) {
	env := Env{"e": OperandDecl(0, dtype.Float32), "abs": OperandDecl(1, dtype.Float32), "float32": ParamDecl(0, dtype.Int32)}
	e, err := Parse("e + abs", env)
	if err != nil {
		t.Fatal(err)
	}
	if e.DType() != dtype.Float32 || len(e.Inputs) != 2 {
		t.Errorf("e + abs: %v %v", e.DType(), e.Inputs)
	}
	if _, err := Parse("abs(e)", env); err == nil {
		t.Error("calling a shadowed function succeeded")
	}
	if e, err := Parse("float32 + 1", env); err != nil || e.DType() != dtype.Int32 {
		t.Errorf("float32 as a parameter: %v %v", e, err)
	}
}

func TestPrintAndKey(t *testing.T) {
	env := Env{"x": OperandDecl(0, dtype.Float32), "a": ParamDecl(0, dtype.Float32), "b": ParamDecl(1, dtype.Float32)}
	e := MustParse("a*x + b", env)
	if got, want := e.String(), "a * x + b"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := e.Key(), "add:f32(mul:f32(p0:f32,in0:f32),p1:f32)"; got != want {
		t.Errorf("Key = %q, want %q", got, want)
	}
	// Same IR from other source text and other names: same key.
	env2 := Env{"y": OperandDecl(0, dtype.Float32), "s": ParamDecl(0, dtype.Float32), "t": ParamDecl(1, dtype.Float32)}
	if k := MustParse("((s) * y) + t", env2).Key(); k != e.Key() {
		t.Errorf("key %q differs from %q", k, e.Key())
	}
	// Other types: another key.
	env3 := Env{"x": OperandDecl(0, dtype.Float64), "a": ParamDecl(0, dtype.Float32), "b": ParamDecl(1, dtype.Float32)}
	if k := MustParse("a*x + b", env3).Key(); k == e.Key() {
		t.Errorf("float64 key %q equals the float32 one", k)
	}
	// Printing: precedence, unary operands, negative zero, special floats.
	cases := []struct{ src, want string }{
		{"(a + b) * x", "(a + b) * x"},
		{"a - (b - x)", "a - (b - x)"},
		{"a - b - x", "a - b - x"},
		{"-(-x)", "-(-x)"},
		{"-(a * x)", "-(a * x)"},
		{"x * -0.0", "x * float32(0)"},
		{"x * -float32(0)", "x * -float32(0)"}, {"-(-float32(0))", "float32(0)"},
		{"x > 0 == (a < b)", "x > float32(0) == (a < b)"},
		{"x + inf", "x + float32(inf)"},
		{"x + nan", "x + float32(nan)"},
		{"where(x > a, x, -inf)", "where(x > a, x, float32(-inf))"},
		{"float16(x) * 2", "float16(float32(float16(x)) * float32(2))"},
	}
	for _, c := range cases {
		e := MustParse(c.src, env)
		if got := e.String(); got != c.want {
			t.Errorf("%q prints as %q, want %q", c.src, got, c.want)
		}
		checkRoundTrip(t, e, env)
	}
}

func TestScalar(t *testing.T) {
	cases := []struct {
		s    Scalar
		str  string
		f    float64
		bits uint64
	}{
		{ScalarOf(int8(-1)), "int8(-1)", -1, 0xff},
		{ScalarOf(uint64(math.MaxUint64)), "uint64(18446744073709551615)", 1.8446744073709552e19, math.MaxUint64},
		{ScalarOf(true), "true", 1, 1},
		{ScalarOf(float32(0.1)), "float32(0.1)", float64(float32(0.1)), uint64(math.Float32bits(0.1))},
		{ScalarOf(math.Copysign(0, -1)), "-float64(0)", 0, 1 << 63},
		{ScalarFromBits(dtype.Float16, 0x3c00), "float16(1)", 1, 0x3c00},
		{ScalarFromBits(dtype.BFloat16, 0xff80), "bfloat16(-inf)", math.Inf(-1), 0xff80},
		{ScalarFromBits(dtype.Float32, 0x7fc00000), "float32(nan)", math.NaN(), 0x7fc00000},
		{ScalarOf(7), "int64(7)", 7, 7},
	}
	for _, c := range cases {
		if c.s.String() != c.str || c.s.Bits() != c.bits {
			t.Errorf("%#v: String %q Bits %#x, want %q %#x", c.s, c.s.String(), c.s.Bits(), c.str, c.bits)
		}
		if f := c.s.Float64(); f != c.f && !(math.IsNaN(f) && math.IsNaN(c.f)) {
			t.Errorf("%v.Float64() = %v, want %v", c.s, f, c.f)
		}
		// The printed form parses back to the same value.
		e, err := Parse(c.s.String(), nil)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.s.String(), err)
			continue
		}
		k, ok := e.Root.(*Const)
		if !ok || !sameValue(k.Value, c.s) {
			t.Errorf("Parse(%q) = %s, want the constant back", c.s.String(), e.Key())
		}
	}
	type myFloat float32
	if s := ScalarOf(myFloat(1.5)); s.DType() != dtype.Float32 || s.Float64() != 1.5 {
		t.Errorf("ScalarOf(myFloat) = %v", s)
	}
	if ScalarOf(int16(-2)).Int64() != -2 || ScalarOf(int16(-2)).Uint64() != math.MaxUint64-1 {
		t.Error("Int64/Uint64 of int16(-2)")
	}
	if !ScalarOf(math.NaN()).Bool() || ScalarOf(0.0).Bool() {
		t.Error("Bool of NaN / 0")
	}
	if (Scalar{}).String() != "invalid" || ScalarFromBits(dtype.Invalid, 1).DType() != dtype.Invalid {
		t.Error("invalid scalar")
	}
	if ScalarOf(3.7).Int64() != 3 || ScalarOf(-1.0).Uint64() != 0 {
		t.Error("float Scalar to int")
	}
}
