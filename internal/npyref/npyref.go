// Package npyref holds NumPy's rules transcribed from its C code, statement for
// statement, as the tests' reference: independent of the definitions the library
// computes, so that a test comparing the two can fail.
package npyref

import "math"

// Divmod is npy_divmod of numpy/_core/src/npymath/npy_math_internal.h.src, with the
// b == 0 cases of npy_floor_divide (a/b) and npy_remainder (fmod: NaN): the floor
// quotient and the remainder with b's sign. In Go as in C, `if (mod)` and `if (div)`
// are true for NaN. For float32, math.Mod of the float64 values rounded is fmodf
// (fmod is exact).
func Divmod[T float32 | float64](a, b T) (floordiv, mod T) {
	mod = T(math.Mod(float64(a), float64(b)))
	if b == 0 {
		return a / b, mod
	}
	div := (a - mod) / b
	if mod != 0 {
		if (b < 0) != (mod < 0) {
			mod += b
			div -= 1
		}
	} else {
		mod = T(math.Copysign(0, float64(b)))
	}
	if div != 0 {
		floordiv = T(math.Floor(float64(div)))
		if div-floordiv > 0.5 {
			floordiv += 1
		}
	} else {
		floordiv = T(math.Copysign(0, float64(a/b)))
	}
	return floordiv, mod
}
