package gpu

import (
	"errors"
	"fmt"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// Named elementwise operations, NumPy's names for the common cases. Each is one kernel
// (an Eval of a fixed expression); to fuse several, write the whole expression with
// Eval. Operands broadcast by NumPy's rules; the operators follow package expr (Go's
// semantics on integers: / truncates, division by zero gives 0, overflow wraps).

// opVars are the names the named operations' expressions give their operands.
var opVars = [...]string{"x", "y", "z"}

// namedEval evaluates src over arrays (the expression's x, y, z in that order) as a
// new array of their broadcast shape, for the operation op: its errors name the
// operands as the caller passed them ("gpu: Add: second operand: array used after
// Free"), never by the expression's names.
func namedEval[R Elem](s *Stream, op, src string, arrays ...AnyArray) (*Array[R], error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	labels := positionLabels(len(arrays))
	var valBuf [len(opVars)]any
	vals := valBuf[:len(arrays)]
	for i, a := range arrays {
		vals[i] = a
	}
	shape, err := broadcastOperands(op, vals, labels)
	if err != nil {
		return nil, err
	}
	for i, a := range arrays {
		if d := a.hdr().buf.a.dev; d != s.dev && d.info.Backend != s.dev.info.Backend {
			return nil, fmt.Errorf("gpu: %s: %s is on %v, the stream on %v: %w", op, labels.label(i), d, s.dev, ErrInvalidValue)
		}
	}
	vars := make(Vars, len(arrays))
	for i, a := range arrays {
		vars[opVars[i]] = a
	}
	out, err := Empty[R](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := evalInto(s, out.header(), src, vars); err != nil {
		out.Free()
		var ee *expr.Error
		if errors.As(err, &ee) {
			return nil, &opError{op: op, msg: ee.Msg, err: err}
		}
		return nil, err
	}
	return out, nil
}

// opError is a named operation's error from its expression (an operator not defined
// on the element type): the operation's name and the expression's message, without the
// column of an expression the caller never wrote. It wraps the expression's error
// (*expr.Error, ErrInvalidValue).
type opError struct {
	op, msg string
	err     error
}

func (e *opError) Error() string { return "gpu: " + e.op + ": " + e.msg }
func (e *opError) Unwrap() error { return e.err }

func unary[T Elem](s *Stream, op, src string, a *Array[T]) (*Array[T], error) {
	return namedEval[T](s, op, src, a)
}

func binaryOp[T Elem](s *Stream, op, src string, a, b *Array[T]) (*Array[T], error) {
	return namedEval[T](s, op, src, a, b)
}

func compare[T Elem](s *Stream, op, src string, a, b *Array[T]) (*Array[bool], error) {
	return namedEval[bool](s, op, src, a, b)
}

// Add returns a + b (numpy.add; on bool arrays, as there, logical or).
func Add[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if dtype.Of[T]() == dtype.Bool {
		return binaryOp(s, "Add", "x || y", a, b)
	}
	return binaryOp(s, "Add", "x + y", a, b)
}

// Subtract returns a - b (numpy.subtract).
func Subtract[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	return binaryOp(s, "Subtract", "x - y", a, b)
}

// Multiply returns a * b (numpy.multiply; on bool arrays, as there, logical and).
func Multiply[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if dtype.Of[T]() == dtype.Bool {
		return binaryOp(s, "Multiply", "x && y", a, b)
	}
	return binaryOp(s, "Multiply", "x * y", a, b)
}

// Divide returns a / b: IEEE division on floats; on integers Go's truncating division
// with x/0 = 0 (for NumPy's true division of integers, use Eval with float64 operands;
// for numpy.floor_divide, FloorDivide).
func Divide[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	return binaryOp(s, "Divide", "x / y", a, b)
}

// FloorDivide returns a // b, the quotient rounded toward -Inf (numpy.floor_divide), as
// a new array of the operands' broadcast shape and element type. It is the expression
// floor_divide(x, y) (package expr, FloorDivide, which gives the rule in full):
//   - signed integers: the truncated quotient, minus 1 when the remainder is non-zero
//     and a and b have opposite signs (-7 // 2 is -4); a // 0 is 0 (NumPy also gives 0,
//     with a warning) and MinInt // -1 is MinInt (it wraps, as in NumPy);
//   - unsigned integers: a / b, with a // 0 = 0;
//   - floats: NumPy's npy_floor_divide (npy_divmod): b == 0 gives a / b (±Inf, or NaN
//     for 0/0); otherwise an infinite or NaN a, or a NaN b, gives NaN (the canonical
//     NaN); a zero quotient has the sign of a / b. float16 and bfloat16 compute in
//     float32 and round once, as NumPy does.
//
// Bool arrays are an error (NumPy would compute them as int8).
func FloorDivide[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	return binaryOp(s, "FloorDivide", "floor_divide(x, y)", a, b)
}

// Remainder returns a mod b with the sign of b, a - FloorDivide(a, b)*b (numpy.remainder,
// alias numpy.mod, Python's %), as a new array of the operands' broadcast shape and
// element type. It is the expression remainder(x, y) (package expr, Remainder, which
// gives the rule in full); the expression operator % is numpy.fmod instead:
//   - signed integers: a % b truncated (the sign of a), plus b when it is non-zero and
//     a and b have opposite signs (-7 mod 2 is 1, 7 mod -2 is -1); a mod 0 is 0 (NumPy
//     also gives 0, with a warning) and MinInt mod -1 is 0;
//   - unsigned integers: a % b, with a mod 0 = 0;
//   - floats: NumPy's npy_remainder (npy_divmod): fmod(a, b), plus b when it is non-zero
//     and its sign differs from b's; a zero result is ±0 with b's sign. b == 0, an
//     infinite or NaN a, or a NaN b give NaN (the canonical NaN); a finite non-zero a
//     with an infinite b gives a if their signs agree, else b. float16 and bfloat16
//     compute in float32 and round once.
//
// Bool arrays are an error.
func Remainder[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	return binaryOp(s, "Remainder", "remainder(x, y)", a, b)
}

// Power returns a ** b elementwise (numpy.power).
func Power[T Float](s *Stream, a, b *Array[T]) (*Array[T], error) {
	return binaryOp(s, "Power", "pow(x, y)", a, b)
}

// Minimum returns the elementwise minimum (numpy.minimum): the canonical NaN if either
// is NaN (the package's NaN policy; NumPy returns the NaN operand), -0 below +0.
func Minimum[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	return binaryOp(s, "Minimum", "minimum(x, y)", a, b)
}

// Maximum returns the elementwise maximum (numpy.maximum): the canonical NaN if either
// is NaN, +0 above -0.
func Maximum[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	return binaryOp(s, "Maximum", "maximum(x, y)", a, b)
}

// Negative returns -a (numpy.negative).
func Negative[T Elem](s *Stream, a *Array[T]) (*Array[T], error) {
	return unary(s, "Negative", "-x", a)
}

// Absolute returns |a| (numpy.absolute).
func Absolute[T Elem](s *Stream, a *Array[T]) (*Array[T], error) {
	return unary(s, "Absolute", "abs(x)", a)
}

// Sqrt returns the square root (numpy.sqrt; NaN for negative values).
func Sqrt[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Sqrt", "sqrt(x)", a) }

// Exp returns e**a (numpy.exp).
func Exp[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Exp", "exp(x)", a) }

// Log returns the natural logarithm (numpy.log).
func Log[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Log", "log(x)", a) }

// Sin returns the sine (numpy.sin).
func Sin[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Sin", "sin(x)", a) }

// Cos returns the cosine (numpy.cos).
func Cos[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Cos", "cos(x)", a) }

// Tan returns the tangent (numpy.tan).
func Tan[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Tan", "tan(x)", a) }

// Tanh returns the hyperbolic tangent (numpy.tanh).
func Tanh[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Tanh", "tanh(x)", a) }

// Floor returns the largest integer not above each element (numpy.floor).
func Floor[T Float](s *Stream, a *Array[T]) (*Array[T], error) {
	return unary(s, "Floor", "floor(x)", a)
}

// Ceil returns the smallest integer not below each element (numpy.ceil).
func Ceil[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "Ceil", "ceil(x)", a) }

// Equal returns a == b (numpy.equal).
func Equal[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	return compare(s, "Equal", "x == y", a, b)
}

// NotEqual returns a != b (numpy.not_equal).
func NotEqual[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	return compare(s, "NotEqual", "x != y", a, b)
}

// Less returns a < b (numpy.less).
func Less[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	return compare(s, "Less", "x < y", a, b)
}

// LessEqual returns a <= b (numpy.less_equal).
func LessEqual[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	return compare(s, "LessEqual", "x <= y", a, b)
}

// Greater returns a > b (numpy.greater).
func Greater[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	return compare(s, "Greater", "x > y", a, b)
}

// GreaterEqual returns a >= b (numpy.greater_equal).
func GreaterEqual[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	return compare(s, "GreaterEqual", "x >= y", a, b)
}

// LogicalAnd returns a && b (numpy.logical_and).
func LogicalAnd(s *Stream, a, b *Array[bool]) (*Array[bool], error) {
	return compare(s, "LogicalAnd", "x && y", a, b)
}

// LogicalOr returns a || b (numpy.logical_or).
func LogicalOr(s *Stream, a, b *Array[bool]) (*Array[bool], error) {
	return compare(s, "LogicalOr", "x || y", a, b)
}

// LogicalNot returns !a (numpy.logical_not).
func LogicalNot(s *Stream, a *Array[bool]) (*Array[bool], error) {
	return unary(s, "LogicalNot", "!x", a)
}

// Where returns x where cond is true and y elsewhere (numpy.where), all three
// broadcast together.
func Where[T Elem](s *Stream, cond *Array[bool], x, y *Array[T]) (*Array[T], error) {
	return namedEval[T](s, "Where", "where(x, y, z)", cond, x, y)
}
