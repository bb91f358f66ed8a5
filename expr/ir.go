package expr

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/go-gpu/gpu/dtype"
)

// Node is a node of the typed IR. Its concrete type is one of *Input, *Param, *Const,
// *Unary, *Binary, *Call, *Cast and *Select; a code generator switches over them.
//
// The invariants Parse guarantees (and Validate checks):
//   - every node's DType is a valid element type;
//   - the operands of Unary, Binary and Call all have one type, the operation type, and it
//     is never Float16 or BFloat16: half-precision values are converted to Float32 by
//     Cast nodes first and the result is converted back by another Cast;
//   - the result type of Unary, Binary and Call is the operation type, except that
//     comparisons and the predicates IsNaN, IsInf, IsFinite and Signbit give Bool;
//   - Select's condition is Bool and its two branches have Select's type (which may be
//     Float16 or BFloat16: selecting moves bits, it computes nothing);
//   - Input, Param, Const and Cast may have any type.
//
// A Node is immutable once built; an IR may share a node between several parents.
type Node interface {
	// DType returns the type of the node's value.
	DType() dtype.DType
	// String returns the node in source form, naming inputs in0, in1... and parameters
	// p0, p1...; Expr.String uses the declared names instead.
	String() string
	isNode()
}

// Input is the element of input array Slot (the Operand declared with that slot) at the
// current index.
type Input struct {
	Slot int
	Type dtype.DType
}

// Param is the value of scalar parameter Slot, the same for every element.
type Param struct {
	Slot int
	Type dtype.DType
}

// Const is a constant. Its type is Value's.
type Const struct {
	Value Scalar
}

// Unary applies Op to X. Type equals X's type.
type Unary struct {
	Op   UnaryOp
	X    Node
	Type dtype.DType
}

// Binary applies Op to X and Y, which have the same type. Type is that type, or Bool for
// comparisons.
type Binary struct {
	Op   BinaryOp
	X, Y Node
	Type dtype.DType
}

// Call applies Func to Args, which all have the same type (Func.NumArgs of them). Type is
// that type, or Bool for the predicates.
type Call struct {
	Func Func
	Args []Node
	Type dtype.DType
}

// Cast converts X to Type (see the package documentation for the conversion rules).
type Cast struct {
	X    Node
	Type dtype.DType
	// fused marks, while Parse builds the IR, the rounding of a half-precision operation's
	// float32 result: an enclosing operation or conversion reads X instead, so that the
	// value is rounded once, where it is stored (see "Half precision" in the package
	// documentation). It is not part of the IR's meaning (Key, String, the kernels).
	fused bool
}

// Select is Cond ? X : Y, elementwise (numpy.where). Cond is Bool; X and Y have Type.
type Select struct {
	Cond, X, Y Node
	Type       dtype.DType
}

// DType returns the input's element type.
func (n *Input) DType() dtype.DType { return n.Type }

// DType returns the parameter's type.
func (n *Param) DType() dtype.DType { return n.Type }

// DType returns the constant's type.
func (n *Const) DType() dtype.DType { return n.Value.t }

// DType returns the result type.
func (n *Unary) DType() dtype.DType { return n.Type }

// DType returns the result type.
func (n *Binary) DType() dtype.DType { return n.Type }

// DType returns the result type.
func (n *Call) DType() dtype.DType { return n.Type }

// DType returns the target type.
func (n *Cast) DType() dtype.DType { return n.Type }

// DType returns the result type.
func (n *Select) DType() dtype.DType { return n.Type }

func (*Input) isNode()  {}
func (*Param) isNode()  {}
func (*Const) isNode()  {}
func (*Unary) isNode()  {}
func (*Binary) isNode() {}
func (*Call) isNode()   {}
func (*Cast) isNode()   {}
func (*Select) isNode() {}

func (n *Input) String() string  { return format(n, nil) }
func (n *Param) String() string  { return format(n, nil) }
func (n *Const) String() string  { return format(n, nil) }
func (n *Unary) String() string  { return format(n, nil) }
func (n *Binary) String() string { return format(n, nil) }
func (n *Call) String() string   { return format(n, nil) }
func (n *Cast) String() string   { return format(n, nil) }
func (n *Select) String() string { return format(n, nil) }

// UnaryOp is a unary operator.
type UnaryOp uint8

// The unary operators. Unary plus is dropped by Parse.
const (
	// Neg is -x on integers (wrapping: -MinInt == MinInt; on unsigned, 0-x modulo 2^n)
	// and floats (flips the sign bit, so -0 and NaNs too).
	Neg UnaryOp = iota + 1
	// Not is !x on Bool.
	Not
	// BitNot is ^x on integers (bitwise complement). ^x on Bool is parsed as Not.
	BitNot
)

var unaryNames = [...]string{Neg: "neg", Not: "not", BitNot: "bitnot"}
var unaryTokens = [...]string{Neg: "-", Not: "!", BitNot: "^"}

// String returns the operator's name ("neg", "not", "bitnot").
func (op UnaryOp) String() string {
	if int(op) < len(unaryNames) && unaryNames[op] != "" {
		return unaryNames[op]
	}
	return "UnaryOp(" + strconv.Itoa(int(op)) + ")"
}

// Token returns the operator's Go token ("-", "!", "^").
func (op UnaryOp) Token() string {
	if int(op) < len(unaryTokens) {
		return unaryTokens[op]
	}
	return "?"
}

// BinaryOp is a binary operator. X and Y have the same type T; the semantics are Go's on
// T except where noted (Go leaves nothing undefined here but division by zero and
// negative shift counts, which panic in Go).
type BinaryOp uint8

// The binary operators. && and || are parsed as And and Or on Bool, x &^ y as
// x & ^y.
const (
	// Add is x + y: integers wrap, floats are IEEE 754 (round to nearest even).
	Add BinaryOp = iota + 1
	// Sub is x - y.
	Sub
	// Mul is x * y.
	Mul
	// Div is x / y: on integers it truncates toward zero, x/0 is 0 (NumPy also gives 0,
	// with a warning) and MinInt/-1 is MinInt (Go's wrap-around); on floats IEEE 754.
	Div
	// Rem is x % y: on integers the remainder of the truncated division, with the sign
	// of x (Go, C; numpy.fmod, not numpy.remainder), x%0 is 0 and MinInt % -1 is 0; on
	// floats it is fmod (Go's math.Mod, C's fmod, numpy.fmod): exact, sign of x,
	// NaN if x is infinite or y is 0, x if y is infinite.
	Rem
	// And is x & y on integers and x && y on Bool.
	And
	// Or is x | y on integers and x || y on Bool.
	Or
	// Xor is x ^ y on integers and x != y on Bool.
	Xor
	// Shl is x << y on integers. The count is y's bits read as unsigned (so a negative
	// count is huge); a count >= the width of T gives 0. (A code generator for 64-bit
	// types must not truncate the count to 32 bits.)
	Shl
	// Shr is x >> y on integers: arithmetic on signed types, logical on unsigned. The
	// count is read as for Shl; a count >= the width of T gives 0, or -1 for a negative
	// signed x.
	Shr
	// Eq is x == y, a Bool. Floats compare as IEEE 754: NaN equals nothing, -0 == +0.
	Eq
	// Ne is x != y (true if either is NaN).
	Ne
	// Lt is x < y. On Bool, false < true.
	Lt
	// Le is x <= y.
	Le
	// Gt is x > y.
	Gt
	// Ge is x >= y.
	Ge
)

var binaryNames = [...]string{
	Add: "add", Sub: "sub", Mul: "mul", Div: "div", Rem: "rem",
	And: "and", Or: "or", Xor: "xor", Shl: "shl", Shr: "shr",
	Eq: "eq", Ne: "ne", Lt: "lt", Le: "le", Gt: "gt", Ge: "ge",
}

var binaryTokens = [...]string{
	Add: "+", Sub: "-", Mul: "*", Div: "/", Rem: "%",
	And: "&", Or: "|", Xor: "^", Shl: "<<", Shr: ">>",
	Eq: "==", Ne: "!=", Lt: "<", Le: "<=", Gt: ">", Ge: ">=",
}

// String returns the operator's name ("add", "shl", "lt"...).
func (op BinaryOp) String() string {
	if int(op) < len(binaryNames) && binaryNames[op] != "" {
		return binaryNames[op]
	}
	return "BinaryOp(" + strconv.Itoa(int(op)) + ")"
}

// Token returns the operator's Go token ("+", "<<", "<"...).
func (op BinaryOp) Token() string {
	if int(op) < len(binaryTokens) && binaryTokens[op] != "" {
		return binaryTokens[op]
	}
	return "?"
}

// IsComparison reports whether op is one of Eq, Ne, Lt, Le, Gt, Ge, whose result is Bool.
func (op BinaryOp) IsComparison() bool { return op >= Eq && op <= Ge }

// precedence returns Go's precedence of the operator (5 for * / % << >> &, 4 for + - | ^,
// 3 for comparisons).
func (op BinaryOp) precedence() int {
	switch op {
	case Mul, Div, Rem, Shl, Shr, And:
		return 5
	case Add, Sub, Or, Xor:
		return 4
	}
	return 3
}

// Func is a function of the IR. Each has a NumPy name and a class that says which
// argument types it takes (see Func's constants).
type Func uint8

// The functions. "Float" functions take Float32 or Float64 arguments; "numeric" ones
// also take integers; the predicates return Bool. The transcendental functions are
// computed by the device math library's Go mirrors (ptx/gomath), bit for bit what the
// GPU computes; Abs, Sqrt, Floor, Ceil, Trunc, Rint, Minimum, Maximum, Fmin, Fmax,
// Copysign, Sign, Square, Reciprocal and the predicates are exact. FloorDivide and
// Remainder are compositions of the other operations (see Definition).
const (
	// Abs is |x| (numpy.absolute). Numeric. Integers wrap: abs(MinInt) == MinInt.
	Abs Func = iota + 1
	// Sqrt is the square root (numpy.sqrt), correctly rounded. Float.
	Sqrt
	// Cbrt is the cube root (numpy.cbrt). Float.
	Cbrt
	// Exp is e^x (numpy.exp). Float.
	Exp
	// Exp2 is 2^x (numpy.exp2). Float.
	Exp2
	// Expm1 is e^x - 1, accurate near 0 (numpy.expm1). Float.
	Expm1
	// Log is the natural logarithm (numpy.log). Float.
	Log
	// Log2 is the base-2 logarithm (numpy.log2). Float.
	Log2
	// Log10 is the base-10 logarithm (numpy.log10). Float.
	Log10
	// Log1p is log(1+x), accurate near 0 (numpy.log1p). Float.
	Log1p
	// Sin is the sine (numpy.sin). Float.
	Sin
	// Cos is the cosine (numpy.cos). Float.
	Cos
	// Tan is the tangent (numpy.tan). Float.
	Tan
	// Asin is the arcsine (numpy.arcsin). Float.
	Asin
	// Acos is the arccosine (numpy.arccos). Float.
	Acos
	// Atan is the arctangent (numpy.arctan). Float.
	Atan
	// Atan2 is the angle of (x=Args[1], y=Args[0]) (numpy.arctan2). Float, 2 arguments.
	Atan2
	// Sinh is the hyperbolic sine (numpy.sinh). Float.
	Sinh
	// Cosh is the hyperbolic cosine (numpy.cosh). Float.
	Cosh
	// Tanh is the hyperbolic tangent (numpy.tanh). Float.
	Tanh
	// Asinh is the inverse hyperbolic sine (numpy.arcsinh). Float.
	Asinh
	// Acosh is the inverse hyperbolic cosine (numpy.arccosh). Float.
	Acosh
	// Atanh is the inverse hyperbolic tangent (numpy.arctanh). Float.
	Atanh
	// Pow is x^y (numpy.power). Numeric, 2 arguments. Floats: C99's pow semantics.
	// Integers: exact with wrap-around; for y < 0 the result is 1/x^|y| truncated: 1 for
	// x == 1, ±1 for x == -1, 0 otherwise, also for x == 0 (NumPy raises an error).
	Pow
	// Hypot is sqrt(x²+y²) without undue overflow (numpy.hypot). Float, 2 arguments.
	Hypot
	// Minimum is the smaller of x and y (numpy.minimum). Numeric, 2 arguments. The
	// canonical NaN if either is NaN (the package's NaN policy); -0 is smaller than +0.
	Minimum
	// Maximum is the larger of x and y (numpy.maximum). Numeric, 2 arguments. The
	// canonical NaN if either is NaN; +0 is larger than -0.
	Maximum
	// Fmin is the smaller of x and y ignoring a NaN (numpy.fmin, C's fmin): the other
	// argument, unchanged, when one is NaN; the canonical NaN when both are. Float, 2
	// arguments; Parse uses Minimum for integers.
	Fmin
	// Fmax is the larger of x and y ignoring a NaN (numpy.fmax), with Fmin's NaN rules.
	// Float, 2 arguments.
	Fmax
	// Floor rounds toward -Inf (numpy.floor). Float.
	Floor
	// Ceil rounds toward +Inf (numpy.ceil). Float.
	Ceil
	// Trunc rounds toward zero (numpy.trunc). Float.
	Trunc
	// Rint rounds to the nearest integer, ties to even (numpy.rint, numpy.round with 0
	// decimals). Float.
	Rint
	// Sign is -1, 0 or 1 by the sign of x (numpy.sign). Numeric. Floats: NaN for NaN, +0
	// for ±0. Unsigned: 0 or 1.
	Sign
	// IsNaN reports whether x is NaN (numpy.isnan). Float → Bool.
	IsNaN
	// IsInf reports whether x is ±Inf (numpy.isinf). Float → Bool.
	IsInf
	// IsFinite reports whether x is neither NaN nor ±Inf (numpy.isfinite). Float → Bool.
	IsFinite
	// Signbit reports whether x's sign bit is set, so also for -0 and negative NaNs
	// (numpy.signbit). Float → Bool.
	Signbit
	// Copysign is |x| with y's sign bit (numpy.copysign). Float, 2 arguments.
	Copysign
	// Square is x*x (numpy.square). Numeric; integers wrap.
	Square
	// Reciprocal is 1/x (numpy.reciprocal). Numeric: integers truncate as Div does, so
	// it is 0 unless x is 1 or -1, and 0 for x == 0.
	Reciprocal
	// Erf is the error function (numpy's scipy.special.erf; C's erf). Float.
	Erf
	// FloorDivide is x/y rounded toward -Inf (numpy.floor_divide, Python's //). Numeric,
	// 2 arguments. It is defined by Definition, in the other operations, which is what
	// the CPU evaluator and the CUDA code generator compute:
	//   - signed integers: q = x/y truncated, minus 1 when x%y is non-zero and has the
	//     opposite sign to y; x/0 is 0 (NumPy also gives 0, with a warning) and
	//     MinInt/-1 is MinInt (wraps, as NumPy does);
	//   - unsigned integers: x/y (Div);
	//   - floats: NumPy's npy_floor_divide and npy_divmod
	//     (numpy/_core/src/npymath/npy_math_internal.h.src): for y == 0 it is x/y (±Inf,
	//     or NaN for 0/0); otherwise, with mod = fmod(x, y) and div = (x - mod)/y, div is
	//     decreased by 1 when mod is non-zero and its sign differs from y's, then snapped
	//     to the nearest integer (floor(div), plus 1 if div - floor(div) > 0.5); a zero
	//     result has the sign of x/y. For y != 0, an infinite or NaN x, or a NaN y,
	//     gives NaN (as numpy.floor_divide(inf, 2.0) does); a finite x over an infinite
	//     y gives ±0, or -1 when x and y have opposite signs and x is non-zero.
	FloorDivide
	// Remainder is the remainder of FloorDivide, x - floor_divide(x, y)*y in exact
	// arithmetic, with the sign of y (numpy.remainder, alias numpy.mod, Python's %).
	// Numeric, 2 arguments, defined by Definition:
	//   - signed integers: r = x%y (truncated, sign of x), plus y when r is non-zero and
	//     has the opposite sign to y; x%0 is 0 (NumPy also gives 0, with a warning) and
	//     MinInt % -1 is 0;
	//   - unsigned integers: x%y (Rem);
	//   - floats: npy_divmod's modulus: mod = fmod(x, y), plus y when mod is non-zero
	//     and its sign differs from y's; a zero result is +0 or -0 with y's sign. y == 0,
	//     an infinite or NaN x, or a NaN y give NaN; a finite non-zero x with an infinite y
	//     gives x when they have the same sign, else y (±Inf).
	Remainder
	numFuncs
)

type funcClass uint8

const (
	classFloat     funcClass = iota // Float32/Float64 arguments, same result type
	classNumeric                    // integer or float arguments, same result type
	classPredicate                  // Float32/Float64 argument, Bool result
)

var funcInfo = [numFuncs]struct {
	name  string
	nargs int
	class funcClass
}{
	Abs: {"abs", 1, classNumeric}, Sqrt: {"sqrt", 1, classFloat}, Cbrt: {"cbrt", 1, classFloat},
	Exp: {"exp", 1, classFloat}, Exp2: {"exp2", 1, classFloat}, Expm1: {"expm1", 1, classFloat},
	Log: {"log", 1, classFloat}, Log2: {"log2", 1, classFloat}, Log10: {"log10", 1, classFloat},
	Log1p: {"log1p", 1, classFloat}, Sin: {"sin", 1, classFloat}, Cos: {"cos", 1, classFloat},
	Tan: {"tan", 1, classFloat}, Asin: {"asin", 1, classFloat}, Acos: {"acos", 1, classFloat},
	Atan: {"atan", 1, classFloat}, Atan2: {"atan2", 2, classFloat}, Sinh: {"sinh", 1, classFloat},
	Cosh: {"cosh", 1, classFloat}, Tanh: {"tanh", 1, classFloat}, Asinh: {"asinh", 1, classFloat},
	Acosh: {"acosh", 1, classFloat}, Atanh: {"atanh", 1, classFloat}, Pow: {"pow", 2, classNumeric},
	Hypot: {"hypot", 2, classFloat}, Minimum: {"minimum", 2, classNumeric},
	Maximum: {"maximum", 2, classNumeric}, Fmin: {"fmin", 2, classFloat}, Fmax: {"fmax", 2, classFloat},
	Floor: {"floor", 1, classFloat}, Ceil: {"ceil", 1, classFloat}, Trunc: {"trunc", 1, classFloat},
	Rint: {"rint", 1, classFloat}, Sign: {"sign", 1, classNumeric}, IsNaN: {"isnan", 1, classPredicate},
	IsInf: {"isinf", 1, classPredicate}, IsFinite: {"isfinite", 1, classPredicate},
	Signbit: {"signbit", 1, classPredicate}, Copysign: {"copysign", 2, classFloat},
	Square: {"square", 1, classNumeric}, Reciprocal: {"reciprocal", 1, classNumeric},
	Erf: {"erf", 1, classFloat}, FloorDivide: {"floor_divide", 2, classNumeric},
	Remainder: {"remainder", 2, classNumeric},
}

// String returns the function's name in the expression language ("sqrt", "minimum").
func (f Func) String() string {
	if f > 0 && f < numFuncs {
		return funcInfo[f].name
	}
	return "Func(" + strconv.Itoa(int(f)) + ")"
}

// NumArgs returns the number of arguments f takes (1 or 2; 0 for an invalid Func).
func (f Func) NumArgs() int {
	if f > 0 && f < numFuncs {
		return funcInfo[f].nargs
	}
	return 0
}

// IsPredicate reports whether f returns Bool (IsNaN, IsInf, IsFinite, Signbit).
func (f Func) IsPredicate() bool { return f > 0 && f < numFuncs && funcInfo[f].class == classPredicate }

// AcceptsInt reports whether f takes integer arguments (Abs, Pow, Minimum, Maximum, Sign,
// Square, Reciprocal, FloorDivide, Remainder); the others take only Float32 and Float64.
func (f Func) AcceptsInt() bool { return f > 0 && f < numFuncs && funcInfo[f].class == classNumeric }

func isHalf(t dtype.DType) bool { return t == dtype.Float16 || t == dtype.BFloat16 }

// Postorder returns the distinct nodes of the IR rooted at n, each after its operands
// (an evaluation order; a node shared by several parents appears once, n last). A code
// generator can give each one a register in this order.
func Postorder(n Node) []Node {
	var out []Node
	seen := map[Node]bool{}
	var walk func(Node)
	walk = func(n Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, a := range Operands(n) {
			walk(a)
		}
		out = append(out, n)
	}
	walk(n)
	return out
}

// Validate checks that the IR rooted at n keeps the invariants documented on Node. Parse
// always returns valid IR; Validate is for IR built or rewritten by hand.
func Validate(n Node) error {
	seen := map[Node]bool{}
	var walk func(n Node) error
	walk = func(n Node) error {
		if n == nil {
			return fmt.Errorf("expr: nil node")
		}
		if seen[n] {
			return nil
		}
		seen[n] = true
		t := n.DType()
		if !t.Valid() {
			return fmt.Errorf("expr: %T node with invalid type %v", n, t)
		}
		switch n := n.(type) {
		case *Input:
			if n.Slot < 0 {
				return fmt.Errorf("expr: input slot %d < 0", n.Slot)
			}
		case *Param:
			if n.Slot < 0 {
				return fmt.Errorf("expr: parameter slot %d < 0", n.Slot)
			}
		case *Const:
		case *Unary:
			if err := walk(n.X); err != nil {
				return err
			}
			if n.X.DType() != t {
				return fmt.Errorf("expr: %v on %v gives %v", n.Op, n.X.DType(), t)
			}
			ok := false
			switch n.Op {
			case Neg:
				ok = t.IsInteger() || t == dtype.Float32 || t == dtype.Float64
			case Not:
				ok = t == dtype.Bool
			case BitNot:
				ok = t.IsInteger()
			}
			if !ok {
				return fmt.Errorf("expr: unary %v on %v", n.Op, t)
			}
		case *Binary:
			if err := walk(n.X); err != nil {
				return err
			}
			if err := walk(n.Y); err != nil {
				return err
			}
			ot := n.X.DType()
			if n.Y.DType() != ot {
				return fmt.Errorf("expr: %v of %v and %v", n.Op, ot, n.Y.DType())
			}
			if isHalf(ot) {
				return fmt.Errorf("expr: %v on %v (half precision computes in float32)", n.Op, ot)
			}
			want := ot
			if n.Op.IsComparison() {
				want = dtype.Bool
			}
			if t != want {
				return fmt.Errorf("expr: %v on %v gives %v, want %v", n.Op, ot, t, want)
			}
			ok := false
			switch n.Op {
			case Add, Sub, Mul, Div, Rem:
				ok = ot != dtype.Bool
			case And, Or, Xor:
				ok = ot.IsInteger() || ot == dtype.Bool
			case Shl, Shr:
				ok = ot.IsInteger()
			case Eq, Ne, Lt, Le, Gt, Ge:
				ok = true
			}
			if !ok {
				return fmt.Errorf("expr: %v on %v", n.Op, ot)
			}
		case *Call:
			if n.Func.NumArgs() == 0 || len(n.Args) != n.Func.NumArgs() {
				return fmt.Errorf("expr: %v with %d arguments", n.Func, len(n.Args))
			}
			for _, a := range n.Args {
				if err := walk(a); err != nil {
					return err
				}
			}
			at := n.Args[0].DType()
			for _, a := range n.Args[1:] {
				if a.DType() != at {
					return fmt.Errorf("expr: %v with arguments of types %v and %v", n.Func, at, a.DType())
				}
			}
			isFloat := at == dtype.Float32 || at == dtype.Float64
			if !isFloat && !(n.Func.AcceptsInt() && at.IsInteger()) {
				return fmt.Errorf("expr: %v on %v", n.Func, at)
			}
			want := at
			if n.Func.IsPredicate() {
				want = dtype.Bool
			}
			if t != want {
				return fmt.Errorf("expr: %v on %v gives %v, want %v", n.Func, at, t, want)
			}
		case *Cast:
			if err := walk(n.X); err != nil {
				return err
			}
		case *Select:
			for _, a := range []Node{n.Cond, n.X, n.Y} {
				if err := walk(a); err != nil {
					return err
				}
			}
			if n.Cond.DType() != dtype.Bool {
				return fmt.Errorf("expr: select on a %v condition", n.Cond.DType())
			}
			if n.X.DType() != t || n.Y.DType() != t {
				return fmt.Errorf("expr: select of %v and %v gives %v", n.X.DType(), n.Y.DType(), t)
			}
		default:
			return fmt.Errorf("expr: unknown node type %T", n)
		}
		return nil
	}
	return walk(n)
}

// Precedences for the printer: Go's binary operator precedences are 1 to 5; unary
// expressions bind tighter, and primaries (names, calls, conversions) tightest.
const (
	precUnary   = 6
	precPrimary = 7
)

// printer writes a node in source form.
type printer struct {
	b      strings.Builder
	inName func(slot int) string
	pName  func(slot int) string
}

// format returns n in source form; names, if not nil, names input and parameter slots.
func format(n Node, e *Expr) string {
	p := &printer{
		inName: func(s int) string { return "in" + strconv.Itoa(s) },
		pName:  func(s int) string { return "p" + strconv.Itoa(s) },
	}
	if e != nil {
		in, pa := map[int]string{}, map[int]string{}
		for _, s := range e.Inputs {
			in[s.Index] = s.Name
		}
		for _, s := range e.Params {
			pa[s.Index] = s.Name
		}
		def := p.inName
		p.inName = func(s int) string {
			if n, ok := in[s]; ok && n != "" {
				return n
			}
			return def(s)
		}
		defp := p.pName
		p.pName = func(s int) string {
			if n, ok := pa[s]; ok && n != "" {
				return n
			}
			return defp(s)
		}
	}
	p.node(n, 0)
	return p.b.String()
}

// prec returns the precedence of n's printed form.
func prec(n Node) int {
	switch n := n.(type) {
	case *Unary:
		return precUnary
	case *Binary:
		return n.Op.precedence()
	case *Const:
		if strings.HasPrefix(n.Value.String(), "-") {
			return precUnary
		}
	}
	return precPrimary
}

// node prints n, in parentheses if its precedence is below min.
func (p *printer) node(n Node, min int) {
	if n == nil {
		p.b.WriteString("<nil>")
		return
	}
	if prec(n) < min {
		p.b.WriteByte('(')
		defer p.b.WriteByte(')')
	}
	switch n := n.(type) {
	case *Input:
		p.b.WriteString(p.inName(n.Slot))
	case *Param:
		p.b.WriteString(p.pName(n.Slot))
	case *Const:
		p.b.WriteString(n.Value.String())
	case *Unary:
		p.b.WriteString(n.Op.Token())
		// A unary operand is parenthesized unless it is a primary, so that - -x never
		// prints as the token --.
		p.node(n.X, precPrimary)
	case *Binary:
		q := n.Op.precedence()
		p.node(n.X, q)
		p.b.WriteString(" " + n.Op.Token() + " ")
		p.node(n.Y, q+1)
	case *Call:
		p.b.WriteString(n.Func.String())
		p.b.WriteByte('(')
		for i, a := range n.Args {
			if i > 0 {
				p.b.WriteString(", ")
			}
			p.node(a, 0)
		}
		p.b.WriteByte(')')
	case *Cast:
		p.b.WriteString(n.Type.String())
		p.b.WriteByte('(')
		p.node(n.X, 0)
		p.b.WriteByte(')')
	case *Select:
		p.b.WriteString("where(")
		p.node(n.Cond, 0)
		p.b.WriteString(", ")
		p.node(n.X, 0)
		p.b.WriteString(", ")
		p.node(n.Y, 0)
		p.b.WriteByte(')')
	default:
		fmt.Fprintf(&p.b, "<%T>", n)
	}
}

var typeKeys = map[dtype.DType]string{
	dtype.Bool: "b", dtype.Int8: "i8", dtype.Int16: "i16", dtype.Int32: "i32", dtype.Int64: "i64",
	dtype.Uint8: "u8", dtype.Uint16: "u16", dtype.Uint32: "u32", dtype.Uint64: "u64",
	dtype.Float16: "f16", dtype.BFloat16: "bf16", dtype.Float32: "f32", dtype.Float64: "f64",
}

func typeKey(t dtype.DType) string {
	if k, ok := typeKeys[t]; ok {
		return k
	}
	return "?" + strconv.Itoa(int(t))
}

// Key returns a compact string that identifies the IR rooted at n: two IRs have the same
// Key exactly when they have the same structure, operations, types, slots and constant
// bits, so it can key a cache of compiled kernels. The format is prefix notation, e.g.
// "add:f32(mul:f32(p0:f32,in0:f32),p1:f32)", and is stable across releases of this
// package only as far as the IR itself is.
func Key(n Node) string {
	var b strings.Builder
	writeKey(&b, n)
	return b.String()
}

func writeKey(b *strings.Builder, n Node) {
	if n == nil {
		b.WriteString("nil")
		return
	}
	args := func(name string, t dtype.DType, xs ...Node) {
		b.WriteString(name)
		b.WriteByte(':')
		b.WriteString(typeKey(t))
		b.WriteByte('(')
		for i, x := range xs {
			if i > 0 {
				b.WriteByte(',')
			}
			writeKey(b, x)
		}
		b.WriteByte(')')
	}
	switch n := n.(type) {
	case *Input:
		b.WriteString("in" + strconv.Itoa(n.Slot) + ":" + typeKey(n.Type))
	case *Param:
		b.WriteString("p" + strconv.Itoa(n.Slot) + ":" + typeKey(n.Type))
	case *Const:
		b.WriteString("c:" + typeKey(n.Value.t) + ":" + strconv.FormatUint(n.Value.bits, 16))
	case *Unary:
		args(n.Op.String(), n.Type, n.X)
	case *Binary:
		args(n.Op.String(), n.Type, n.X, n.Y)
	case *Call:
		args(n.Func.String(), n.Type, n.Args...)
	case *Cast:
		args("cast", n.Type, n.X)
	case *Select:
		args("select", n.Type, n.Cond, n.X, n.Y)
	default:
		fmt.Fprintf(b, "%T", n)
	}
}

// Walk calls f for every node of the IR under root once (a node shared by several
// parents too), children before their parents.
func Walk(root Node, f func(Node)) {
	seen := map[Node]bool{}
	var walk func(n Node)
	walk = func(n Node) {
		if n == nil || seen[n] {
			return
		}
		seen[n] = true
		for _, c := range Children(n) {
			walk(c)
		}
		f(n)
	}
	walk(root)
}

// Children returns the operands of n (none for Input, Param and Const).
func Children(n Node) []Node {
	switch n := n.(type) {
	case *Unary:
		return []Node{n.X}
	case *Binary:
		return []Node{n.X, n.Y}
	case *Call:
		return n.Args
	case *Cast:
		return []Node{n.X}
	case *Select:
		return []Node{n.Cond, n.X, n.Y}
	}
	return nil
}
