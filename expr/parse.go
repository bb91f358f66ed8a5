package expr

import (
	"errors"
	"fmt"
	"go/ast"
	"go/constant"
	"go/parser"
	"go/scanner"
	"go/token"
	"math"
	"sort"
	"strings"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// Error is a syntax or type error in an expression's source.
type Error struct {
	Line int    // 1-based line of the offending token
	Col  int    // 1-based column, in bytes
	Msg  string // what is wrong
}

// Error returns "expr: col C: message" (with the line when it is not the first).
func (e *Error) Error() string {
	if e.Line <= 1 {
		return fmt.Sprintf("expr: col %d: %s", e.Col, e.Msg)
	}
	return fmt.Sprintf("expr: line %d col %d: %s", e.Line, e.Col, e.Msg)
}

// Expr is a parsed and type-checked expression: its typed IR and the slots it reads.
type Expr struct {
	// Root is the IR (see Node for its invariants). Its type is the result type.
	Root Node
	// Inputs lists the input slots the IR reads, by increasing Index.
	Inputs []Slot
	// Params lists the parameter slots the IR reads, by increasing Index.
	Params []Slot
}

// Slot describes an input or parameter slot an expression reads.
type Slot struct {
	Index int         // the slot number given in the Env
	Name  string      // the name the source used for it
	DType dtype.DType // its element type
	Weak  bool        // a weak parameter
}

// DType returns the type of the expression's value (Invalid if Root is nil).
func (e *Expr) DType() dtype.DType {
	if e.Root == nil {
		return dtype.Invalid
	}
	return e.Root.DType()
}

// String returns the IR in source form with the declared names; parsing it with the
// same Env gives an Expr with the same Key. Implicit conversions show as explicit
// conversions and constants as typed constants: "x*2" with a float32 x prints as
// "x * float32(2)".
func (e *Expr) String() string { return format(e.Root, e) }

// Key returns Key(e.Root): equal for expressions with the same IR and types.
func (e *Expr) Key() string { return Key(e.Root) }

// Convert returns e converted to t (e itself if it has type t), as storing it into an
// array of t converts it: a half-precision result of arithmetic converts from its float32
// value, not rounded to the half type first (see "Half precision" in the package doc).
func (e *Expr) Convert(t dtype.DType) *Expr {
	if e.DType() == t {
		return e
	}
	return &Expr{Root: convert(e.Root, t), Inputs: e.Inputs, Params: e.Params}
}

// checkNoComments returns an *Error at the first comment in src. Go's parser skips
// comments, which would make a NumPy user's floor division "x // 2" parse as "x".
func checkNoComments(src string) *Error {
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(src))
	var s scanner.Scanner
	s.Init(f, []byte(src), nil, scanner.ScanComments) // syntax errors are the parser's
	for {
		pos, tok, lit := s.Scan()
		switch tok {
		case token.EOF:
			return nil
		case token.COMMENT:
			p := fset.Position(pos)
			msg := "comments are not supported"
			if strings.HasPrefix(lit, "//") {
				msg += " (// is not an operator: use floor_divide(x, y), numpy.floor_divide; / truncates integers)"
			}
			return &Error{Line: p.Line, Col: p.Column, Msg: msg}
		}
	}
}

// Parse parses src, an expression in Go syntax, and type-checks it against env. It
// returns an *Error (with the column of the offending token) for a syntax or type error,
// and a plain error for an inconsistent env. It never panics.
func Parse(src string, env Env) (ex *Expr, err error) {
	if err := env.check(); err != nil {
		return nil, err
	}
	if e := checkNoComments(src); e != nil {
		return nil, e
	}
	fset := token.NewFileSet()
	x, err := parser.ParseExprFrom(fset, "", src, parser.SkipObjectResolution)
	if err != nil {
		var list scanner.ErrorList
		if errors.As(err, &list) && len(list) > 0 {
			return nil, &Error{Line: list[0].Pos.Line, Col: list[0].Pos.Column, Msg: list[0].Msg}
		}
		return nil, &Error{Line: 1, Col: 1, Msg: err.Error()}
	}
	c := &checker{fset: fset, env: env, inputs: map[int]Slot{}, params: map[int]Slot{}}
	defer func() {
		if r := recover(); r != nil {
			e, ok := r.(*Error)
			if !ok {
				panic(r)
			}
			ex, err = nil, e
		}
	}()
	root := fold(c.materialize(c.expr(x)))
	ex = &Expr{Root: root}
	seen := map[Node]bool{}
	var walk func(Node)
	walk = func(n Node) {
		if seen[n] {
			return
		}
		seen[n] = true
		switch n := n.(type) {
		case *Input:
			if _, ok := c.inputs[n.Slot]; ok {
				ex.Inputs = append(ex.Inputs, c.inputs[n.Slot])
				delete(c.inputs, n.Slot)
			}
		case *Param:
			if _, ok := c.params[n.Slot]; ok {
				ex.Params = append(ex.Params, c.params[n.Slot])
				delete(c.params, n.Slot)
			}
		case *Unary:
			walk(n.X)
		case *Binary:
			walk(n.X)
			walk(n.Y)
		case *Call:
			for _, a := range n.Args {
				walk(a)
			}
		case *Cast:
			walk(n.X)
		case *Select:
			walk(n.Cond)
			walk(n.X)
			walk(n.Y)
		}
	}
	walk(root)
	sort.Slice(ex.Inputs, func(i, j int) bool { return ex.Inputs[i].Index < ex.Inputs[j].Index })
	sort.Slice(ex.Params, func(i, j int) bool { return ex.Params[i].Index < ex.Params[j].Index })
	return ex, nil
}

// MustParse is like Parse but panics on error. It is for expressions fixed in a program's
// source, such as the library's own operations.
func MustParse(src string, env Env) *Expr {
	e, err := Parse(src, env)
	if err != nil {
		panic(err)
	}
	return e
}

// checker type-checks a Go AST into IR.
type checker struct {
	fset   *token.FileSet
	env    Env
	inputs map[int]Slot // input slots seen, with the first name used for each
	params map[int]Slot
}

// operand is a checked subexpression: either an untyped constant (n == nil), kept exact
// as Go keeps untyped constants, or a typed IR node, strong or weak.
type operand struct {
	n    Node           // the typed value; nil for an untyped constant
	val  constant.Value // an untyped constant's value
	kind dtype.Kind     // an untyped constant's kind: KindBool, KindSigned (integer) or KindFloat
	weak bool           // n promotes like a literal of its kind (NEP 50)
	pos  token.Pos
}

func (o operand) untyped() bool { return o.n == nil }

// isWeak reports whether o promotes by kind only (untyped constants and weak values).
func (o operand) isWeak() bool { return o.n == nil || o.weak }

// wkind returns the kind a weak operand promotes with.
func (o operand) wkind() dtype.Kind {
	if o.n == nil {
		return o.kind
	}
	return o.n.DType().Kind()
}

// isBool reports whether o is an untyped bool or of type Bool.
func (o operand) isBool() bool {
	if o.n == nil {
		return o.kind == dtype.KindBool
	}
	return o.n.DType() == dtype.Bool
}

// defType returns the type an untyped constant takes alone (bool, int64, float64: Go's
// and NumPy's defaults) or the type of a typed operand.
func (o operand) defType() dtype.DType {
	if o.n != nil {
		return o.n.DType()
	}
	switch o.kind {
	case dtype.KindBool:
		return dtype.Bool
	case dtype.KindFloat:
		return dtype.Float64
	}
	return dtype.Int64
}

// describe names o for error messages.
func (o operand) describe() string {
	if o.n == nil {
		k := "int"
		switch o.kind {
		case dtype.KindBool:
			k = "bool"
		case dtype.KindFloat:
			k = "float"
		}
		return fmt.Sprintf("%s (untyped %s constant)", o.val.String(), k)
	}
	return o.n.DType().String()
}

func (c *checker) errorf(pos token.Pos, format string, args ...any) {
	p := c.fset.Position(pos)
	panic(&Error{Line: p.Line, Col: p.Column, Msg: fmt.Sprintf(format, args...)})
}

// Untyped integer constants are limited to this many bits (as go/types limits them), and
// constant shift counts to maxShift, so that no source makes huge numbers.
const (
	maxConstBits = 512
	maxShift     = 1100
)

// constOp runs a go/constant operation, turning an overflow (an Unknown result, an
// integer above maxConstBits) or an unexpected panic into an *Error at pos.
func (c *checker) constOp(pos token.Pos, f func() constant.Value) (v constant.Value) {
	defer func() {
		if r := recover(); r != nil {
			if _, ok := r.(*Error); ok {
				panic(r)
			}
			c.errorf(pos, "invalid constant operation: %v", r)
		}
	}()
	v = f()
	if v.Kind() == constant.Unknown {
		c.errorf(pos, "constant overflow")
	}
	if v.Kind() == constant.Int && constant.BitLen(v) > maxConstBits {
		c.errorf(pos, "constant overflow")
	}
	return v
}

var universeTypes = map[string]dtype.DType{
	"bool": dtype.Bool, "int8": dtype.Int8, "int16": dtype.Int16, "int32": dtype.Int32,
	"int64": dtype.Int64, "uint8": dtype.Uint8, "uint16": dtype.Uint16, "uint32": dtype.Uint32,
	"uint64": dtype.Uint64, "float16": dtype.Float16, "bfloat16": dtype.BFloat16,
	"float32": dtype.Float32, "float64": dtype.Float64,
	"int": dtype.Of[int](), "uint": dtype.Of[uint](), "byte": dtype.Uint8, "rune": dtype.Int32,
}

// Untyped float constants for pi and e, to more digits than float64 holds.
var (
	constPi = constant.MakeFromLiteral("3.14159265358979323846264338327950288419716939937510582097494459", token.FLOAT, 0)
	constE  = constant.MakeFromLiteral("2.71828182845904523536028747135266249775724709369995957496696763", token.FLOAT, 0)
)

func (c *checker) expr(e ast.Expr) operand {
	switch e := e.(type) {
	case *ast.ParenExpr:
		o := c.expr(e.X)
		o.pos = e.Pos()
		return o
	case *ast.BasicLit:
		switch e.Kind {
		case token.INT, token.FLOAT:
			v := constant.MakeFromLiteral(e.Value, e.Kind, 0)
			if v.Kind() == constant.Unknown {
				c.errorf(e.Pos(), "invalid or out-of-range number %s", e.Value)
			}
			k := dtype.KindSigned
			if e.Kind == token.FLOAT {
				k = dtype.KindFloat
			}
			if v.Kind() == constant.Int && constant.BitLen(v) > maxConstBits {
				c.errorf(e.Pos(), "constant overflow")
			}
			return operand{val: v, kind: k, pos: e.Pos()}
		case token.IMAG:
			c.errorf(e.Pos(), "complex numbers are not supported")
		case token.CHAR:
			c.errorf(e.Pos(), "character literals are not supported")
		default:
			c.errorf(e.Pos(), "strings are not supported")
		}
	case *ast.Ident:
		return c.ident(e)
	case *ast.UnaryExpr:
		return c.unary(e)
	case *ast.BinaryExpr:
		if st, ok := e.Y.(*ast.StarExpr); ok && e.Op == token.MUL && st.Star == e.OpPos+1 {
			// x ** y parses as x * (*y).
			c.errorf(st.Star, "** is not supported: for x**y write pow(x, y)")
		}
		return c.binary(e)
	case *ast.CallExpr:
		return c.call(e)
	case *ast.IndexExpr:
		c.errorf(e.Lbrack, "index expressions are not supported")
	case *ast.IndexListExpr:
		c.errorf(e.Lbrack, "index expressions are not supported")
	case *ast.SliceExpr:
		c.errorf(e.Lbrack, "slice expressions are not supported")
	case *ast.SelectorExpr:
		c.errorf(e.Pos(), "selectors (x.y) are not supported")
	case *ast.StarExpr:
		c.errorf(e.Pos(), "pointer indirection (*x) is not supported")
	case *ast.FuncLit:
		c.errorf(e.Pos(), "function literals are not supported")
	case *ast.CompositeLit:
		c.errorf(e.Pos(), "composite literals are not supported")
	case *ast.TypeAssertExpr:
		c.errorf(e.Pos(), "type assertions are not supported")
	case *ast.KeyValueExpr:
		c.errorf(e.Pos(), "key-value expressions are not supported")
	case *ast.ArrayType, *ast.MapType, *ast.ChanType, *ast.FuncType, *ast.StructType, *ast.InterfaceType, *ast.Ellipsis:
		c.errorf(e.Pos(), "types are not values")
	case nil:
		c.errorf(token.NoPos, "missing expression")
	default:
		c.errorf(e.Pos(), "unsupported syntax")
	}
	panic("unreachable")
}

func (c *checker) ident(id *ast.Ident) operand {
	pos := id.Pos()
	if d, ok := c.env[id.Name]; ok {
		switch d.Class {
		case DeclOperand:
			if _, ok := c.inputs[d.Slot]; !ok {
				c.inputs[d.Slot] = Slot{Index: d.Slot, Name: id.Name, DType: d.DType}
			}
			return operand{n: &Input{Slot: d.Slot, Type: d.DType}, pos: pos}
		case DeclParam:
			if _, ok := c.params[d.Slot]; !ok {
				c.params[d.Slot] = Slot{Index: d.Slot, Name: id.Name, DType: d.DType, Weak: d.Weak}
			}
			return operand{n: &Param{Slot: d.Slot, Type: d.DType}, weak: d.Weak, pos: pos}
		case DeclConst:
			if d.DType == dtype.Invalid {
				k := dtype.KindSigned
				switch d.Untyped.Kind() {
				case constant.Bool:
					k = dtype.KindBool
				case constant.Float:
					k = dtype.KindFloat
				}
				v := d.Untyped
				if k == dtype.KindSigned && constant.BitLen(v) > maxConstBits {
					c.errorf(pos, "constant %s overflows", id.Name)
				}
				return operand{val: v, kind: k, pos: pos}
			}
			return operand{n: &Const{Value: d.Value.Canonical()}, weak: d.Weak, pos: pos}
		}
	}
	switch id.Name {
	case "true", "false":
		return operand{val: constant.MakeBool(id.Name == "true"), kind: dtype.KindBool, pos: pos}
	case "pi":
		return operand{val: constPi, kind: dtype.KindFloat, pos: pos}
	case "e":
		return operand{val: constE, kind: dtype.KindFloat, pos: pos}
	case "inf":
		return operand{n: &Const{Value: ScalarOf(math.Inf(1))}, weak: true, pos: pos}
	case "nan":
		return operand{n: &Const{Value: ScalarOf(math.NaN()).Canonical()}, weak: true, pos: pos}
	}
	if _, ok := universeTypes[id.Name]; ok {
		c.errorf(pos, "%s is a type, not a value", id.Name)
	}
	if _, ok := builtins[id.Name]; ok {
		c.errorf(pos, "%s is a function, not a value", id.Name)
	}
	c.errorf(pos, "undefined: %s", id.Name)
	panic("unreachable")
}

// represent converts an untyped constant to a Scalar of type t, with Go's rules for
// constants: an integer type needs an exact integer in range, a float type a value in
// range (it is rounded; float16 and bfloat16 through float64, as NumPy converts a Python
// float). Bool constants become 0 or 1 in numeric types, and numbers become x != 0 as
// Bool (NumPy's rules; Go rejects both).
func (c *checker) represent(o operand, t dtype.DType) Scalar {
	v := o.val
	if o.kind == dtype.KindBool {
		b := constant.BoolVal(v)
		if t == dtype.Bool {
			return ScalarOf(b)
		}
		return ScalarOf(b).Convert(t)
	}
	switch {
	case t == dtype.Bool:
		return ScalarOf(constant.Sign(v) != 0)
	case t.IsInteger():
		iv := constant.ToInt(v)
		if iv.Kind() != constant.Int {
			c.errorf(o.pos, "cannot convert %s to %v (truncated)", o.describe(), t)
		}
		if t.IsSigned() {
			x, ok := constant.Int64Val(iv)
			lim := int64(1) << (t.Bits() - 1)
			if !ok || x < -lim || x > lim-1 {
				c.errorf(o.pos, "constant %s overflows %v", v.String(), t)
			}
			return ScalarFromBits(t, uint64(x))
		}
		x, ok := constant.Uint64Val(iv)
		if !ok || constant.Sign(iv) < 0 || (t.Bits() < 64 && x >= 1<<t.Bits()) {
			c.errorf(o.pos, "constant %s overflows %v", v.String(), t)
		}
		return ScalarFromBits(t, x)
	case t == dtype.Float32:
		f, _ := constant.Float32Val(v)
		if math.IsInf(float64(f), 0) {
			c.errorf(o.pos, "constant %s overflows %v", v.String(), t)
		}
		return ScalarOf(f)
	}
	f, _ := constant.Float64Val(v)
	if math.IsInf(f, 0) {
		c.errorf(o.pos, "constant %s overflows %v", v.String(), t)
	}
	var s Scalar
	switch t {
	case dtype.Float64:
		return ScalarOf(f)
	case dtype.Float16:
		s = ScalarFromBits(t, uint64(dtype.Float16FromFloat64(f)))
	case dtype.BFloat16:
		s = ScalarFromBits(t, uint64(dtype.BFloat16FromFloat64(f)))
	}
	if math.IsInf(s.Float64(), 0) {
		c.errorf(o.pos, "constant %s overflows %v", v.String(), t)
	}
	return s
}

// typed returns o as a node of type t: an untyped constant as a Const (see represent),
// a typed value through a Cast when its type differs.
func (c *checker) typed(o operand, t dtype.DType) Node {
	if o.n == nil {
		return &Const{Value: c.represent(o, t)}
	}
	if o.n.DType() == t {
		return o.n
	}
	return convert(o.n, t)
}

// convert returns the conversion of n to t (a different type), from n's float32 value
// when n is the fused rounding of a half-precision result.
func convert(n Node, t dtype.DType) Node {
	if f, ok := n.(*Cast); ok && f.fused {
		if f.X.DType() == t {
			return f.X
		}
		return &Cast{X: f.X, Type: t}
	}
	return &Cast{X: n, Type: t}
}

// materialize gives an untyped constant its default type (a weak value); typed operands
// are returned as they are.
func (c *checker) materialize(o operand) Node {
	return c.typed(o, o.defType())
}

func (c *checker) weakOperand(o operand) operand {
	if o.n != nil {
		return o
	}
	return operand{n: c.materialize(o), weak: true, pos: o.pos}
}

// unify returns the type operands combine to, by NumPy 2's rules (NEP 50): strong types
// promote with dtype.Promote; weak ones (untyped constants and weak values) then only
// raise the kind, with dtype.PromoteWeak; with no strong operand the weak types promote
// among themselves and the result stays weak.
func (c *checker) unify(ops ...operand) (dtype.DType, bool) {
	strong, weakT := dtype.Invalid, dtype.Invalid
	kind := dtype.KindBool
	anyWeak := false
	for _, o := range ops {
		if !o.isWeak() {
			if strong == dtype.Invalid {
				strong = o.n.DType()
			} else {
				strong = dtype.Promote(strong, o.n.DType())
			}
			continue
		}
		anyWeak = true
		if o.wkind() > kind {
			kind = o.wkind()
		}
		if weakT == dtype.Invalid {
			weakT = o.defType()
		} else {
			weakT = dtype.Promote(weakT, o.defType())
		}
	}
	if strong == dtype.Invalid {
		return weakT, true
	}
	if anyWeak {
		return dtype.PromoteWeak(strong, kind), false
	}
	return strong, false
}

// compute builds an operation of type t with build, converting float16 and bfloat16
// arguments to float32 first and a float32 result back to t: half-precision arithmetic
// is float32 arithmetic, rounded once. The rounding is a fused Cast, which an enclosing
// operation or conversion skips (convert), so that a fused expression rounds its value
// once, where it is stored (as CuPy's and PyTorch's fused kernels compute).
func compute(t dtype.DType, build func(ct dtype.DType, args []Node) Node, args ...Node) Node {
	if !isHalf(t) {
		return build(t, args)
	}
	conv := make([]Node, len(args))
	for i, a := range args {
		conv[i] = convert(a, dtype.Float32)
	}
	n := build(dtype.Float32, conv)
	if n.DType() == dtype.Float32 {
		n = &Cast{X: n, Type: t, fused: true}
	}
	return n
}

func (c *checker) unary(e *ast.UnaryExpr) operand {
	x := c.expr(e.X)
	pos := e.OpPos
	switch e.Op {
	case token.ADD, token.SUB:
		if x.isBool() {
			c.errorf(pos, "operator %s not defined on %s", e.Op, x.describe())
		}
		if e.Op == token.ADD {
			x.pos = pos
			return x
		}
		if x.untyped() {
			return operand{val: c.constOp(pos, func() constant.Value { return constant.UnaryOp(token.SUB, x.val, 0) }), kind: x.kind, pos: pos}
		}
		n := compute(x.n.DType(), func(ct dtype.DType, a []Node) Node { return &Unary{Op: Neg, X: a[0], Type: ct} }, x.n)
		return operand{n: n, weak: x.weak, pos: pos}
	case token.NOT:
		if !x.isBool() {
			c.errorf(pos, "operator ! not defined on %s (need bool)", x.describe())
		}
		if x.untyped() {
			return operand{val: constant.UnaryOp(token.NOT, x.val, 0), kind: dtype.KindBool, pos: pos}
		}
		return operand{n: &Unary{Op: Not, X: x.n, Type: dtype.Bool}, weak: x.weak, pos: pos}
	case token.XOR:
		if x.untyped() {
			switch x.kind {
			case dtype.KindBool:
				return operand{val: constant.UnaryOp(token.NOT, x.val, 0), kind: dtype.KindBool, pos: pos}
			case dtype.KindSigned:
				return operand{val: c.constOp(pos, func() constant.Value { return constant.UnaryOp(token.XOR, x.val, 0) }), kind: x.kind, pos: pos}
			}
			c.errorf(pos, "operator ^ not defined on %s (need integer or bool)", x.describe())
		}
		switch t := x.n.DType(); {
		case t == dtype.Bool:
			return operand{n: &Unary{Op: Not, X: x.n, Type: t}, weak: x.weak, pos: pos}
		case t.IsInteger():
			return operand{n: &Unary{Op: BitNot, X: x.n, Type: t}, weak: x.weak, pos: pos}
		}
		c.errorf(pos, "operator ^ not defined on %s (need integer or bool)", x.describe())
	}
	c.errorf(pos, "operator %s is not supported", e.Op)
	panic("unreachable")
}

var binaryOps = map[token.Token]BinaryOp{
	token.ADD: Add, token.SUB: Sub, token.MUL: Mul, token.QUO: Div, token.REM: Rem,
	token.AND: And, token.OR: Or, token.XOR: Xor, token.SHL: Shl, token.SHR: Shr,
	token.EQL: Eq, token.NEQ: Ne, token.LSS: Lt, token.LEQ: Le, token.GTR: Gt, token.GEQ: Ge,
	token.LAND: And, token.LOR: Or, token.AND_NOT: And,
}

func (c *checker) binary(e *ast.BinaryExpr) operand {
	x, y := c.expr(e.X), c.expr(e.Y)
	pos, op := e.OpPos, e.Op
	if _, ok := binaryOps[op]; !ok {
		c.errorf(pos, "operator %s is not supported", op)
	}
	both := x.untyped() && y.untyped()
	switch op {
	case token.LAND, token.LOR:
		if !x.isBool() || !y.isBool() {
			bad := x
			if x.isBool() {
				bad = y
			}
			c.errorf(pos, "operator %s not defined on %s (need bool)", op, bad.describe())
		}
		if both {
			return operand{val: constant.BinaryOp(x.val, op, y.val), kind: dtype.KindBool, pos: pos}
		}
	case token.SHL, token.SHR:
		if y.untyped() {
			if y.kind == dtype.KindBool || constant.ToInt(y.val).Kind() != constant.Int {
				c.errorf(y.pos, "shift count %s must be an integer", y.describe())
			}
			if constant.Sign(y.val) < 0 {
				c.errorf(y.pos, "negative shift count %s", y.val.String())
			}
		}
		if both {
			xi := constant.ToInt(x.val)
			if x.kind == dtype.KindBool || xi.Kind() != constant.Int {
				c.errorf(x.pos, "shifted operand %s must be an integer", x.describe())
			}
			s, ok := constant.Uint64Val(constant.ToInt(y.val))
			if !ok || s > maxShift {
				c.errorf(y.pos, "shift count %s too large", y.val.String())
			}
			return operand{val: c.constOp(pos, func() constant.Value { return constant.Shift(xi, op, uint(s)) }), kind: dtype.KindSigned, pos: pos}
		}
	case token.EQL, token.NEQ, token.LSS, token.LEQ, token.GTR, token.GEQ:
		if both {
			if x.isBool() != y.isBool() {
				c.errorf(pos, "mismatched types %s and %s", x.describe(), y.describe())
			}
			if !x.isBool() || op == token.EQL || op == token.NEQ {
				return operand{val: constant.MakeBool(constant.Compare(x.val, op, y.val)), kind: dtype.KindBool, pos: pos}
			}
			// Ordered bools: compute as typed values (false < true).
			x, y = c.weakOperand(x), c.weakOperand(y)
		}
	default: // + - * / % & | ^ &^
		if both {
			if x.isBool() != y.isBool() {
				c.errorf(pos, "mismatched types %s and %s", x.describe(), y.describe())
			}
			switch {
			case x.isBool():
				if op == token.ADD || op == token.SUB || op == token.MUL || op == token.QUO || op == token.REM {
					c.errorf(pos, "operator %s not defined on %s", op, x.describe())
				}
				x, y = c.weakOperand(x), c.weakOperand(y) // bitwise on bools: typed
			case op == token.REM && (x.kind == dtype.KindFloat || y.kind == dtype.KindFloat):
				if constant.Sign(y.val) == 0 {
					c.errorf(pos, "division by zero")
				}
				x, y = c.weakOperand(x), c.weakOperand(y) // fmod: typed, folded later
			default:
				isInt := x.kind == dtype.KindSigned && y.kind == dtype.KindSigned
				switch op {
				case token.AND, token.OR, token.XOR, token.AND_NOT:
					if !isInt {
						bad := x
						if x.kind == dtype.KindSigned {
							bad = y
						}
						c.errorf(pos, "operator %s not defined on %s (need integer or bool)", op, bad.describe())
					}
				case token.QUO, token.REM:
					if constant.Sign(y.val) == 0 {
						c.errorf(pos, "division by zero")
					}
				}
				cop := op
				if op == token.QUO && isInt {
					cop = token.QUO_ASSIGN // integer division, as Go divides untyped integers
				}
				k := max(x.kind, y.kind)
				return operand{val: c.constOp(pos, func() constant.Value { return constant.BinaryOp(x.val, cop, y.val) }), kind: k, pos: pos}
			}
		}
	}
	return c.typedBinary(op, pos, x, y)
}

// typedBinary type-checks a binary operation with at least one typed operand.
func (c *checker) typedBinary(op token.Token, pos token.Pos, x, y operand) operand {
	t, weak := c.unify(x, y)
	switch op {
	case token.ADD, token.SUB, token.MUL, token.QUO, token.REM:
		if t == dtype.Bool {
			c.errorf(pos, "operator %s not defined on bool", op)
		}
	case token.AND, token.OR, token.XOR, token.AND_NOT:
		if t.IsFloat() {
			c.errorf(pos, "operator %s not defined on %v (need integer or bool)", op, t)
		}
	case token.SHL, token.SHR:
		if !t.IsInteger() {
			c.errorf(pos, "operator %s not defined on %v (need integer)", op, t)
		}
	}
	bop := binaryOps[op]
	if n := exactMixedCompare(bop, x, y); n != nil {
		return operand{n: n, weak: weak, pos: pos}
	}
	X, Y := c.typed(x, t), c.typed(y, t)
	if op == token.AND_NOT {
		if t == dtype.Bool {
			Y = &Unary{Op: Not, X: Y, Type: t}
		} else {
			Y = &Unary{Op: BitNot, X: Y, Type: t}
		}
	}
	n := compute(t, func(ct dtype.DType, a []Node) Node {
		rt := ct
		if bop.IsComparison() {
			rt = dtype.Bool
		}
		return &Binary{Op: bop, X: a[0], Y: a[1], Type: rt}
	}, X, Y)
	return operand{n: n, weak: weak, pos: pos}
}

// exactMixedCompare returns the exact comparison op (Eq ... Ge) of a signed integer
// with a uint64, or nil for any other operands. Two typed ones promote to float64
// (dtype.Promote), which would round values past 2^53 (MaxInt64 would equal 2^63); a weak
// value (a Go int parameter) would take the other's type and wrap (-1 as MaxUint64).
// NumPy compares them exactly since 1.25 (numpy/numpy#23713), Python integers too, and
// so do we: a negative signed value is below every uint64, and a non-negative one
// compares as a uint64. Untyped constants are not values here: they must be
// representable in the other operand's type (an error at Parse otherwise).
func exactMixedCompare(op BinaryOp, x, y operand) Node {
	if !op.IsComparison() || x.n == nil || y.n == nil {
		return nil
	}
	xt, yt := x.n.DType(), y.n.DType()
	signedLeft := xt.IsSigned() && yt == dtype.Uint64
	if !signedLeft && !(xt == dtype.Uint64 && yt.IsSigned()) {
		return nil
	}
	sn, un := x.n, y.n
	if !signedLeft {
		sn, un = un, sn
	}
	if sn.DType() != dtype.Int64 {
		sn = convert(sn, dtype.Int64)
	}
	zero := &Const{Value: ScalarFromBits(dtype.Int64, 0)}
	// max(sn, 0) as a uint64 (read only where sn >= 0): never a conversion of a negative
	// value, which a weak parameter's range check (package gpu) would refuse.
	asU := convert(&Call{Func: Maximum, Args: []Node{sn, zero}, Type: dtype.Int64}, dtype.Uint64)
	cmp := &Binary{Op: op, X: asU, Y: un, Type: dtype.Bool}
	if !signedLeft {
		cmp.X, cmp.Y = un, asU
	}
	// Where the signed value is negative, s < u, s <= u, s != u (and u > s, u >= s,
	// u != s) hold and the others don't.
	var negTrue bool
	switch op {
	case Ne:
		negTrue = true
	case Lt, Le:
		negTrue = signedLeft
	case Gt, Ge:
		negTrue = !signedLeft
	}
	if negTrue {
		neg := &Binary{Op: Lt, X: sn, Y: zero, Type: dtype.Bool}
		return &Binary{Op: Or, X: neg, Y: cmp, Type: dtype.Bool}
	}
	nonneg := &Binary{Op: Ge, X: sn, Y: zero, Type: dtype.Bool}
	return &Binary{Op: And, X: nonneg, Y: cmp, Type: dtype.Bool}
}

// builtin is a function of the language: its arity and its type-checker.
type builtin struct {
	nargs int
	check func(c *checker, name string, pos token.Pos, args []operand) operand
}

var builtins map[string]builtin

func init() {
	builtins = map[string]builtin{
		"where":    {3, (*checker).where},
		"clip":     {3, (*checker).clip},
		"fmod":     {2, (*checker).fmod},
		"power":    {2, numericFunc(Pow)},
		"mod":      {2, numericFunc(Remainder)}, // numpy.mod is numpy.remainder
		"round":    {1, (*checker).rounding},
		"floor":    {1, (*checker).rounding},
		"ceil":     {1, (*checker).rounding},
		"trunc":    {1, (*checker).rounding},
		"fmin":     {2, (*checker).minmax},
		"fmax":     {2, (*checker).minmax},
		"minimum":  {2, (*checker).minmax},
		"maximum":  {2, (*checker).minmax},
		"abs":      {1, (*checker).abs},
		"isnan":    {1, (*checker).predicate},
		"isinf":    {1, (*checker).predicate},
		"isfinite": {1, (*checker).predicate},
		"signbit":  {1, (*checker).predicate},
	}
	for f := Func(1); f < numFuncs; f++ {
		name := f.String()
		if _, ok := builtins[name]; ok {
			continue
		}
		switch {
		case f.AcceptsInt():
			builtins[name] = builtin{f.NumArgs(), numericFunc(f)}
		case funcInfo[f].class == classFloat:
			builtins[name] = builtin{f.NumArgs(), floatFunc(f)}
		}
	}
}

func (c *checker) call(e *ast.CallExpr) operand {
	fun := ast.Unparen(e.Fun)
	id, ok := fun.(*ast.Ident)
	if !ok {
		c.errorf(fun.Pos(), "only built-in functions and conversions can be called")
	}
	if e.Ellipsis.IsValid() {
		c.errorf(e.Ellipsis, "... is not supported")
	}
	if _, ok := c.env[id.Name]; ok {
		c.errorf(id.Pos(), "%s is not a function", id.Name)
	}
	if t, ok := universeTypes[id.Name]; ok {
		if len(e.Args) != 1 {
			c.errorf(id.Pos(), "conversion to %s takes 1 argument, got %d", id.Name, len(e.Args))
		}
		x := c.expr(e.Args[0])
		if f, ok := x.n.(*Cast); ok && f.fused && f.Type == t {
			// An explicit conversion rounds where it is written: float16(x*y) + z
			// rounds the product.
			return operand{n: &Cast{X: f.X, Type: t}, pos: id.Pos()}
		}
		return operand{n: c.typed(x, t), pos: id.Pos()}
	}
	b, ok := builtins[id.Name]
	if !ok {
		switch id.Name {
		case "true", "false", "pi", "e", "inf", "nan":
			c.errorf(id.Pos(), "%s is not a function", id.Name)
		}
		c.errorf(id.Pos(), "undefined function: %s", id.Name)
	}
	if len(e.Args) != b.nargs {
		plural := "s"
		if b.nargs == 1 {
			plural = ""
		}
		c.errorf(id.Pos(), "%s takes %d argument%s, got %d", id.Name, b.nargs, plural, len(e.Args))
	}
	args := make([]operand, len(e.Args))
	for i, a := range e.Args {
		args[i] = c.expr(a)
	}
	return b.check(c, id.Name, id.Pos(), args)
}

// typedAll converts operands to t.
func (c *checker) typedAll(t dtype.DType, args []operand) []Node {
	ns := make([]Node, len(args))
	for i, a := range args {
		ns[i] = c.typed(a, t)
	}
	return ns
}

func callOf(f Func) func(ct dtype.DType, a []Node) Node {
	return func(ct dtype.DType, a []Node) Node {
		rt := ct
		if f.IsPredicate() {
			rt = dtype.Bool
		}
		return &Call{Func: f, Args: a, Type: rt}
	}
}

// floatFunc checks a function of floats: integer and bool arguments promote to the
// smallest float type that holds them, as NumPy's loops do (bool, int8, uint8 → float16;
// int16, uint16 → float32; wider → float64).
func floatFunc(f Func) func(c *checker, name string, pos token.Pos, args []operand) operand {
	return func(c *checker, name string, pos token.Pos, args []operand) operand {
		t, weak := c.unify(args...)
		if !t.IsFloat() {
			t = dtype.Promote(t, dtype.Float16)
		}
		return operand{n: compute(t, callOf(f), c.typedAll(t, args)...), weak: weak, pos: pos}
	}
}

// numericFunc checks a function defined on integers and floats but not bools.
func numericFunc(f Func) func(c *checker, name string, pos token.Pos, args []operand) operand {
	return func(c *checker, name string, pos token.Pos, args []operand) operand {
		t, weak := c.unify(args...)
		if t == dtype.Bool {
			c.errorf(pos, "%s not defined on bool", name)
		}
		return operand{n: compute(t, callOf(f), c.typedAll(t, args)...), weak: weak, pos: pos}
	}
}

func (c *checker) abs(name string, pos token.Pos, args []operand) operand {
	t, weak := c.unify(args...)
	x := c.typed(args[0], t)
	if t == dtype.Bool || t.IsUnsigned() {
		return operand{n: x, weak: weak, pos: pos}
	}
	return operand{n: compute(t, callOf(Abs), x), weak: weak, pos: pos}
}

// rounding checks floor, ceil, trunc and round: integers and bools are returned
// unchanged (NumPy ≥ 2.1 for floor, ceil and trunc; numpy.round always); round is Rint.
func (c *checker) rounding(name string, pos token.Pos, args []operand) operand {
	t, weak := c.unify(args...)
	x := c.typed(args[0], t)
	if !t.IsFloat() {
		return operand{n: x, weak: weak, pos: pos}
	}
	f := map[string]Func{"floor": Floor, "ceil": Ceil, "trunc": Trunc, "round": Rint}[name]
	return operand{n: compute(t, callOf(f), x), weak: weak, pos: pos}
}

// minmax checks minimum, maximum, fmin and fmax: on bools they are & and |; fmin and fmax
// on integers are minimum and maximum.
func (c *checker) minmax(name string, pos token.Pos, args []operand) operand {
	t, weak := c.unify(args...)
	xs := c.typedAll(t, args)
	isMin := name == "minimum" || name == "fmin"
	if t == dtype.Bool {
		op := Or
		if isMin {
			op = And
		}
		return operand{n: &Binary{Op: op, X: xs[0], Y: xs[1], Type: t}, weak: weak, pos: pos}
	}
	f := Maximum
	switch {
	case isMin && name == "fmin" && t.IsFloat():
		f = Fmin
	case name == "fmax" && t.IsFloat():
		f = Fmax
	case isMin:
		f = Minimum
	}
	return operand{n: compute(t, callOf(f), xs...), weak: weak, pos: pos}
}

func (c *checker) fmod(name string, pos token.Pos, args []operand) operand {
	t, weak := c.unify(args...)
	if t == dtype.Bool {
		c.errorf(pos, "fmod not defined on bool")
	}
	n := compute(t, func(ct dtype.DType, a []Node) Node { return &Binary{Op: Rem, X: a[0], Y: a[1], Type: ct} }, c.typedAll(t, args)...)
	return operand{n: n, weak: weak, pos: pos}
}

// predicate checks isnan, isinf, isfinite and signbit. On integers and bools they are
// constants, except signbit of a signed integer, which is x < 0.
func (c *checker) predicate(name string, pos token.Pos, args []operand) operand {
	t, weak := c.unify(args...)
	x := c.typed(args[0], t)
	f := map[string]Func{"isnan": IsNaN, "isinf": IsInf, "isfinite": IsFinite, "signbit": Signbit}[name]
	switch {
	case t.IsFloat():
		return operand{n: compute(t, callOf(f), x), weak: weak, pos: pos}
	case f == Signbit && t.IsSigned():
		zero := &Const{Value: ScalarFromBits(t, 0)}
		return operand{n: &Binary{Op: Lt, X: x, Y: zero, Type: dtype.Bool}, weak: weak, pos: pos}
	}
	return operand{n: &Const{Value: ScalarOf(f == IsFinite)}, weak: weak, pos: pos}
}

// where checks where(cond, x, y): a non-bool condition is cond != 0, as NumPy reads it.
func (c *checker) where(name string, pos token.Pos, args []operand) operand {
	cond := c.typed(args[0], dtype.Bool)
	t, weak := c.unify(args[1], args[2])
	x, y := c.typed(args[1], t), c.typed(args[2], t)
	return operand{n: &Select{Cond: cond, X: x, Y: y, Type: t}, weak: weak, pos: pos}
}

// clip checks clip(x, lo, hi) = minimum(maximum(x, lo), hi) (numpy.clip; NaN propagates).
func (c *checker) clip(name string, pos token.Pos, args []operand) operand {
	t, weak := c.unify(args...)
	xs := c.typedAll(t, args)
	if t == dtype.Bool {
		lo := &Binary{Op: Or, X: xs[0], Y: xs[1], Type: t}
		return operand{n: &Binary{Op: And, X: lo, Y: xs[2], Type: t}, weak: weak, pos: pos}
	}
	n := compute(t, func(ct dtype.DType, a []Node) Node {
		lo := &Call{Func: Maximum, Args: []Node{a[0], a[1]}, Type: ct}
		return &Call{Func: Minimum, Args: []Node{lo, a[2]}, Type: ct}
	}, xs...)
	return operand{n: n, weak: weak, pos: pos}
}

// fold replaces every operation whose operands are all constants by its value, computed
// by the CPU kernels (so folding never changes a result).
func fold(root Node) Node {
	memo := map[Node]Node{}
	var rec func(n Node) Node
	rec = func(n Node) Node {
		if r, ok := memo[n]; ok {
			return r
		}
		var r Node
		switch n := n.(type) {
		case *Unary:
			x := rec(n.X)
			r = &Unary{Op: n.Op, X: x, Type: n.Type}
		case *Binary:
			r = &Binary{Op: n.Op, X: rec(n.X), Y: rec(n.Y), Type: n.Type}
		case *Call:
			args := make([]Node, len(n.Args))
			for i, a := range n.Args {
				args[i] = rec(a)
			}
			r = &Call{Func: n.Func, Args: args, Type: n.Type}
		case *Cast:
			r = &Cast{X: rec(n.X), Type: n.Type, fused: n.fused}
		case *Select:
			r = &Select{Cond: rec(n.Cond), X: rec(n.X), Y: rec(n.Y), Type: n.Type}
		default:
			r = n
		}
		if v, ok := evalConst(r); ok {
			r = &Const{Value: v.Canonical()}
		}
		memo[n] = r
		return r
	}
	return rec(root)
}

// evalConst computes an operation node whose operands are all constants.
func evalConst(n Node) (Scalar, bool) {
	args := Operands(n)
	if args == nil {
		return Scalar{}, false
	}
	var in [3]uint64
	var ptrs [3]unsafe.Pointer
	for i, a := range args {
		k, ok := a.(*Const)
		if !ok {
			return Scalar{}, false
		}
		storeBits(unsafe.Pointer(&in[i]), k.Value.t.Size(), k.Value.bits)
		ptrs[i] = unsafe.Pointer(&in[i])
	}
	k := kernelFor(n)
	if k == nil {
		return Scalar{}, false
	}
	var out uint64
	k(1, unsafe.Pointer(&out), ptrs[0], ptrs[1], ptrs[2])
	t := n.DType()
	return ScalarFromBits(t, loadBits(unsafe.Pointer(&out), t.Size())), true
}

// Operands returns the operands of a node in order (Unary: X; Binary: X, Y; Call: Args;
// Cast: X; Select: Cond, X, Y), and nil for the leaves Input, Param and Const.
func Operands(n Node) []Node {
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
