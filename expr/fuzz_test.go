package expr

import (
	"math/rand/v2"
	"testing"
)

// FuzzParse checks that Parse never panics, and that every expression it accepts has
// valid IR, prints to source that parses back to the same Key, compiles, and evaluates
// on random inputs to the same values as the tree-walking interpreter.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a*x + b", "f32*2 + wf", "where(f32 > 0, sqrt(f32), -f32)", "i32 / 2 % 3", "u8 << i8 >> 3",
		"float16(f64) * bf16", "clip(f32, 0, 1)", "pow(i64, u8)", "1 << 62", "7/2.0", "uk*uk",
		"(((f32)))", "-(-(-f64))", "!b && (i8 < 3 || wb)", "^u64 &^ 0xff", "isnan(f16) == signbit(i32)",
		"maximum(nan, f32) + fmin(inf, -inf)", "int8(300)", "u8 + -1", "x[0]", "f32 +", "0x1p-2",
		"1e400", "1e-400 * f32", "'a'", "\"s\"", "sqrt(1, 2)", "float32(f32, f32)", "pi * e",
		"atan2(i8, u16) + hypot(b, b)", "round(i32) + rint(i32)", "1 << 1100", "1.5 % 0", "-0.0 * f64",
		"where(1, 2, 3.5)", "bool(nan)", "reciprocal(i16) * square(u32)", "erf(bf16) / exp2(f16)",
		"float32(-nan)", "uint64(1<<64 - 1)", "int(f32) + uint(u8)", "byte(rune(f64))",
		"floor_divide(i8, -1) + remainder(f16, wf) * mod(u64, 0)", "floor_divide(-7, 2) + mod(7.5, -inf)",
	} {
		f.Add(s, uint64(1))
	}
	env := stdEnv()
	f.Fuzz(func(t *testing.T, src string, seed uint64) {
		e, err := Parse(src, env)
		if err != nil {
			if _, ok := err.(*Error); !ok {
				t.Fatalf("Parse(%q) error %T, want *Error", src, err)
			}
			return
		}
		if err := Validate(e.Root); err != nil {
			t.Fatalf("Parse(%q): invalid IR: %v", src, err)
		}
		s := e.String()
		e2, err := Parse(s, env)
		if err != nil {
			t.Fatalf("Parse(%q) printed as %q, which does not parse: %v", src, s, err)
		}
		if e2.Key() != e.Key() {
			t.Fatalf("Parse(%q) printed as %q, which parses to key %s, want %s", src, s, e2.Key(), e.Key())
		}
		r := rand.New(rand.NewPCG(seed, 7))
		n := 1 + r.IntN(2*ChunkSize)
		cols, slices, ps, pa := randomInputs(r, n)
		checkAgainstInterp(t, e, cols, slices, ps, pa, n)
	})
}
