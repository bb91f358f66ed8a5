package gpu

import "github.com/go-gpu/gpu/dtype"

// Named elementwise operations, NumPy's names for the common cases. Each is one kernel
// (an Eval of a fixed expression); to fuse several, write the whole expression with
// Eval. Operands broadcast by NumPy's rules; the operators follow package expr (Go's
// semantics on integers: / truncates, division by zero gives 0, overflow wraps).

func unary[T Elem](s *Stream, src string, a *Array[T]) (*Array[T], error) {
	return Eval[T](s, src, Vars{"x": a})
}

func binaryOp[T Elem](s *Stream, src string, a, b *Array[T]) (*Array[T], error) {
	return Eval[T](s, src, Vars{"x": a, "y": b})
}

func compare[T Elem](s *Stream, src string, a, b *Array[T]) (*Array[bool], error) {
	return Eval[bool](s, src, Vars{"x": a, "y": b})
}

// Add returns a + b (numpy.add; on bool arrays, as there, logical or).
func Add[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if dtype.Of[T]() == dtype.Bool {
		return binaryOp(s, "x || y", a, b)
	}
	return binaryOp(s, "x + y", a, b)
}

// Subtract returns a - b (numpy.subtract).
func Subtract[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return binaryOp(s, "x - y", a, b)
}

// Multiply returns a * b (numpy.multiply; on bool arrays, as there, logical and).
func Multiply[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	if dtype.Of[T]() == dtype.Bool {
		return binaryOp(s, "x && y", a, b)
	}
	return binaryOp(s, "x * y", a, b)
}

// Divide returns a / b: IEEE division on floats; on integers Go's truncating division
// with x/0 = 0 (for NumPy's true division of integers, use Eval with float64 operands).
func Divide[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) { return binaryOp(s, "x / y", a, b) }

// Power returns a ** b elementwise (numpy.power).
func Power[T Float](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return binaryOp(s, "pow(x, y)", a, b)
}

// Minimum returns the elementwise minimum (numpy.minimum): the canonical NaN if either
// is NaN (the package's NaN policy; NumPy returns the NaN operand), -0 below +0.
func Minimum[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return binaryOp(s, "minimum(x, y)", a, b)
}

// Maximum returns the elementwise maximum (numpy.maximum): the canonical NaN if either
// is NaN, +0 above -0.
func Maximum[T Elem](s *Stream, a, b *Array[T]) (*Array[T], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return binaryOp(s, "maximum(x, y)", a, b)
}

// Negative returns -a (numpy.negative).
func Negative[T Elem](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "-x", a) }

// Absolute returns |a| (numpy.absolute).
func Absolute[T Elem](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "abs(x)", a) }

// Sqrt returns the square root (numpy.sqrt; NaN for negative values).
func Sqrt[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "sqrt(x)", a) }

// Exp returns e**a (numpy.exp).
func Exp[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "exp(x)", a) }

// Log returns the natural logarithm (numpy.log).
func Log[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "log(x)", a) }

// Sin returns the sine (numpy.sin).
func Sin[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "sin(x)", a) }

// Cos returns the cosine (numpy.cos).
func Cos[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "cos(x)", a) }

// Tan returns the tangent (numpy.tan).
func Tan[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "tan(x)", a) }

// Tanh returns the hyperbolic tangent (numpy.tanh).
func Tanh[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "tanh(x)", a) }

// Floor returns the largest integer not above each element (numpy.floor).
func Floor[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "floor(x)", a) }

// Ceil returns the smallest integer not below each element (numpy.ceil).
func Ceil[T Float](s *Stream, a *Array[T]) (*Array[T], error) { return unary(s, "ceil(x)", a) }

// Equal returns a == b (numpy.equal).
func Equal[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x == y", a, b)
}

// NotEqual returns a != b (numpy.not_equal).
func NotEqual[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x != y", a, b)
}

// Less returns a < b (numpy.less).
func Less[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x < y", a, b)
}

// LessEqual returns a <= b (numpy.less_equal).
func LessEqual[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x <= y", a, b)
}

// Greater returns a > b (numpy.greater).
func Greater[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x > y", a, b)
}

// GreaterEqual returns a >= b (numpy.greater_equal).
func GreaterEqual[T Elem](s *Stream, a, b *Array[T]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x >= y", a, b)
}

// LogicalAnd returns a && b (numpy.logical_and).
func LogicalAnd(s *Stream, a, b *Array[bool]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x && y", a, b)
}

// LogicalOr returns a || b (numpy.logical_or).
func LogicalOr(s *Stream, a, b *Array[bool]) (*Array[bool], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	return compare(s, "x || y", a, b)
}

// LogicalNot returns !a (numpy.logical_not).
func LogicalNot(s *Stream, a *Array[bool]) (*Array[bool], error) { return unary(s, "!x", a) }

// Where returns x where cond is true and y elsewhere (numpy.where), all three
// broadcast together.
func Where[T Elem](s *Stream, cond *Array[bool], x, y *Array[T]) (*Array[T], error) {
	if err := nonNil(cond, x, y); err != nil {
		return nil, err
	}
	return Eval[T](s, "where(c, x, y)", Vars{"c": cond, "x": x, "y": y})
}
