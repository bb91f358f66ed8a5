package expr

import (
	"fmt"
	"go/constant"
	"sort"

	"github.com/go-gpu/gpu/dtype"
)

// Env declares the names an expression may use, mapping each name to its Decl. Build one
// with a map literal:
//
//	env := expr.Env{
//		"x": expr.OperandDecl(0, dtype.Float32),     // input array, slot 0
//		"a": expr.ParamDecl(0, dtype.Float32),       // scalar kernel parameter, slot 0
//		"b": expr.WeakParamDecl(1, dtype.Float64),   // a Go float64 that promotes like a literal
//		"n": expr.ConstDecl(expr.ScalarOf(int32(3))), // a typed constant, inlined
//	}
//
// A declared name hides the built-in one of the same name (functions, conversions,
// true, false, pi, e, inf, nan).
type Env map[string]Decl

// DeclClass says what a declared name stands for.
type DeclClass uint8

// The classes of declarations.
const (
	// DeclOperand is an input array: the expression reads element i of the array bound
	// to the slot when it computes element i of the result.
	DeclOperand DeclClass = iota + 1
	// DeclParam is a scalar parameter: one value per evaluation (a kernel argument).
	DeclParam
	// DeclConst is a constant known when the expression is parsed, inlined into the IR.
	DeclConst
)

// String returns "operand", "param" or "const".
func (c DeclClass) String() string {
	switch c {
	case DeclOperand:
		return "operand"
	case DeclParam:
		return "param"
	case DeclConst:
		return "const"
	}
	return fmt.Sprintf("DeclClass(%d)", uint8(c))
}

// MaxSlot is the largest slot number a declaration may use.
const MaxSlot = 1<<16 - 1

// Decl declares one name. Use the constructors (OperandDecl, ParamDecl, WeakParamDecl,
// ConstDecl, WeakConstDecl, UntypedConstDecl).
type Decl struct {
	Class DeclClass
	// Slot is the input slot (DeclOperand) or parameter slot (DeclParam), 0 to MaxSlot.
	// Several names may share a slot if they agree on its type.
	Slot int
	// DType is the element type; for a weak declaration, the type its value is held in.
	// It is Invalid for an untyped constant.
	DType dtype.DType
	// Weak makes a parameter or typed constant promote like an untyped literal of its
	// kind (NEP 50's "weak" Python scalars): with a float32 x, x*w is float32 for a weak
	// Float64 w, but float64 for a strong one.
	Weak bool
	// Value is a typed constant's value (DeclConst with a valid DType).
	Value Scalar
	// Untyped is an untyped constant's exact value (DeclConst with DType Invalid): a
	// go/constant Bool, Int or Float value, which behaves like a literal in the source.
	Untyped constant.Value
}

// OperandDecl declares an input array of element type t bound to input slot slot.
func OperandDecl(slot int, t dtype.DType) Decl {
	return Decl{Class: DeclOperand, Slot: slot, DType: t}
}

// ParamDecl declares a scalar parameter of type t in parameter slot slot. It is strong:
// it promotes with operands like an array of type t (numpy.float32(2) in NumPy 2).
func ParamDecl(slot int, t dtype.DType) Decl {
	return Decl{Class: DeclParam, Slot: slot, DType: t}
}

// WeakParamDecl declares a weak scalar parameter held as type t: it takes the type of
// the operands it meets where its kind allows, like a Go or Python number (NEP 50). For
// a Go float64 use dtype.Float64, for a Go int dtype.Int64, for a bool dtype.Bool. Where
// it converts to a narrower type the conversion happens at run time with Cast's rules
// (an out-of-range integer wraps; NumPy would raise an error); compared with a uint64,
// a signed one compares exactly instead, as NumPy compares a Python int.
func WeakParamDecl(slot int, t dtype.DType) Decl {
	return Decl{Class: DeclParam, Slot: slot, DType: t, Weak: true}
}

// ConstDecl declares a strong constant of v's type.
func ConstDecl(v Scalar) Decl {
	return Decl{Class: DeclConst, DType: v.DType(), Value: v}
}

// WeakConstDecl declares a weak constant held as v's type (see WeakParamDecl).
func WeakConstDecl(v Scalar) Decl {
	return Decl{Class: DeclConst, DType: v.DType(), Value: v, Weak: true}
}

// UntypedConstDecl declares an untyped constant: the name behaves exactly like a literal
// with value v (constant.MakeInt64(3), constant.MakeFloat64(0.5), constant.MakeBool(true)).
func UntypedConstDecl(v constant.Value) Decl {
	return Decl{Class: DeclConst, Untyped: v}
}

// check reports an inconsistent Env.
func (env Env) check() error {
	names := make([]string, 0, len(env))
	for n := range env {
		names = append(names, n)
	}
	sort.Strings(names)
	type key struct {
		c    DeclClass
		slot int
	}
	slots := map[key]Decl{}
	slotName := map[key]string{}
	for _, name := range names {
		d := env[name]
		switch d.Class {
		case DeclOperand, DeclParam:
			if d.Slot < 0 || d.Slot > MaxSlot {
				return fmt.Errorf("expr: %s %q: slot %d out of range [0, %d]", d.Class, name, d.Slot, MaxSlot)
			}
			if !d.DType.Valid() {
				return fmt.Errorf("expr: %s %q: invalid type %v", d.Class, name, d.DType)
			}
			if d.Class == DeclOperand && d.Weak {
				return fmt.Errorf("expr: operand %q cannot be weak", name)
			}
			k := key{d.Class, d.Slot}
			if o, ok := slots[k]; ok && (o.DType != d.DType || o.Weak != d.Weak) {
				return fmt.Errorf("expr: %q and %q share %s slot %d with different types", slotName[k], name, d.Class, d.Slot)
			}
			if _, ok := slots[k]; !ok {
				slots[k], slotName[k] = d, name
			}
		case DeclConst:
			if d.DType == dtype.Invalid {
				if d.Untyped == nil {
					return fmt.Errorf("expr: const %q has no value", name)
				}
				switch d.Untyped.Kind() {
				case constant.Bool, constant.Int, constant.Float:
				default:
					return fmt.Errorf("expr: const %q: unsupported constant kind %v", name, d.Untyped.Kind())
				}
			} else if !d.DType.Valid() || d.Value.DType() != d.DType {
				return fmt.Errorf("expr: const %q: value of type %v declared as %v", name, d.Value.DType(), d.DType)
			}
		default:
			return fmt.Errorf("expr: %q: invalid declaration class %v", name, d.Class)
		}
	}
	return nil
}
