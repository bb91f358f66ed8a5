package kernel

import (
	"fmt"
	"math"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/ptx"
)

// The combining operators: one table that elementwise expressions, reductions, scans and
// scatters share (GPUArrays.jl's neutral_element; CuPy's shared reduction preambles).
//
// Each operator is defined once, as an expression of package expr over two operands of
// one type (Op.Node): sum is a + b, prod a * b, min and max are expr's Minimum and
// Maximum (numpy.minimum and numpy.maximum), and, or and xor the bitwise operators; on
// Bool, sum and max are "or", prod and min "and" (NumPy's add and maximum of bools).
// Op.Identity gives its identity. The backends lower that expression with the machinery
// that makes them agree bit for bit: on CUDA the elementwise PTX lowering
// (elementwise_lower.go; EmitCombine), on the CPU the scalar rules of package
// internal/fp that expr's CPU kernels use too (combine and the loops below). ArgMin and
// ArgMax combine (value, index) pairs: Op.Before is the order, as an expression too.
//
// NaN policy (internal/fp's package documentation): propagated and canonical. A sum,
// product, minimum or maximum with a NaN operand is the canonical NaN (0x7fffffff,
// 0x7fffffffffffffff), on every backend and in every use (elementwise, reductions,
// scans), so results never depend on the order in which values meet; -0 is below +0
// for min and max. The arg operators take the first NaN (the lowest index), then the
// least (greatest) value, then the lowest index among equal values (-0 equals +0).

// Op is a combining operator: associative, with an identity.
type Op uint8

// The operators.
const (
	// OpSum is a + b: integers wrap, floats are IEEE 754 sums; on Bool, or.
	OpSum Op = iota + 1
	// OpProd is a * b; on Bool, and.
	OpProd
	// OpMin is numpy.minimum: NaN if either is NaN, -0 below +0; on Bool, and.
	OpMin
	// OpMax is numpy.maximum: NaN if either is NaN, +0 above -0; on Bool, or.
	OpMax
	// OpAnd is a & b on integers, logical and on Bool (numpy.all's operator).
	OpAnd
	// OpOr is a | b on integers, logical or on Bool (numpy.any's operator).
	OpOr
	// OpXor is a ^ b on integers, logical xor on Bool.
	OpXor
	// OpArgMin keeps the least (value, index) pair in the order Op.Before describes.
	OpArgMin
	// OpArgMax keeps the greatest value, with OpArgMin's rules.
	OpArgMax
	numOps
)

var opNames = [numOps]string{OpSum: "sum", OpProd: "prod", OpMin: "min", OpMax: "max",
	OpAnd: "and", OpOr: "or", OpXor: "xor", OpArgMin: "argmin", OpArgMax: "argmax"}

// String returns the operator's name ("sum", "argmax" ...).
func (op Op) String() string {
	if op.Valid() {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", uint8(op))
}

// Valid reports whether op is one of the operators.
func (op Op) Valid() bool { return op > 0 && op < numOps }

// IsArg reports whether op combines (value, index) pairs (OpArgMin, OpArgMax).
func (op Op) IsArg() bool { return op == OpArgMin || op == OpArgMax }

// Accepts reports whether op combines values of type t: every type but the half floats
// (which accumulate in float32) for sum, prod, min, max and the arg operators; integers
// and Bool for and, or and xor.
func (op Op) Accepts(t dtype.DType) bool {
	if !op.Valid() || !t.Valid() || t == dtype.Float16 || t == dtype.BFloat16 {
		return false
	}
	switch op {
	case OpAnd, OpOr, OpXor:
		return !t.IsFloat()
	}
	return true
}

// For returns the operator op is on values of type t: on Bool, or for sum and max and
// and for prod and min; op itself otherwise.
func (op Op) For(t dtype.DType) Op {
	if t != dtype.Bool {
		return op
	}
	switch op {
	case OpSum, OpMax:
		return OpOr
	case OpProd, OpMin:
		return OpAnd
	}
	return op
}

// Node returns the expression a ∘ b, for operands of one type (a's) that op accepts
// (not an arg operator).
func (op Op) Node(a, b expr.Node) expr.Node {
	t := a.DType()
	bin := func(o expr.BinaryOp) expr.Node { return &expr.Binary{Op: o, X: a, Y: b, Type: t} }
	switch op.For(t) {
	case OpSum:
		return bin(expr.Add)
	case OpProd:
		return bin(expr.Mul)
	case OpMin:
		return &expr.Call{Func: expr.Minimum, Args: []expr.Node{a, b}, Type: t}
	case OpMax:
		return &expr.Call{Func: expr.Maximum, Args: []expr.Node{a, b}, Type: t}
	case OpAnd:
		return bin(expr.And)
	case OpOr:
		return bin(expr.Or)
	case OpXor:
		return bin(expr.Xor)
	}
	panic(fmt.Sprintf("kernel: no expression for %v of %v", op, t))
}

// Expr returns op on values of type t as an expression of input slots 0 (the left
// operand, the earlier elements) and 1.
func (op Op) Expr(t dtype.DType) *expr.Expr {
	a, b := &expr.Input{Slot: 0, Type: t}, &expr.Input{Slot: 1, Type: t}
	return &expr.Expr{Root: op.Node(a, b), Inputs: []expr.Slot{{Index: 0, DType: t}, {Index: 1, DType: t}}}
}

// Before returns, for OpArgMin or OpArgMax, the Bool expression "(bv, bi) comes before
// (av, ai)": a NaN before any number and the lower index among NaNs; among numbers the
// lesser (OpArgMin) or greater value, and the lower index among equal values. Values are
// of one type, indices of one integer type.
func (op Op) Before(av, ai, bv, bi expr.Node) expr.Node {
	b := func(o expr.BinaryOp, x, y expr.Node) expr.Node {
		return &expr.Binary{Op: o, X: x, Y: y, Type: dtype.Bool}
	}
	cmp := expr.Lt
	if op == OpArgMax {
		cmp = expr.Gt
	}
	ilt := b(expr.Lt, bi, ai)
	better := b(expr.Or, b(cmp, bv, av), b(expr.And, b(expr.Eq, bv, av), ilt))
	if !av.DType().IsFloat() {
		return better
	}
	nan := func(x expr.Node) expr.Node {
		return &expr.Call{Func: expr.IsNaN, Args: []expr.Node{x}, Type: dtype.Bool}
	}
	notAN := &expr.Unary{Op: expr.Not, X: nan(av), Type: dtype.Bool}
	// bn ? (!an || ilt) : (!an && better)
	return &expr.Select{Cond: nan(bv), X: b(expr.Or, notAN, ilt), Y: b(expr.And, notAN, better), Type: dtype.Bool}
}

// Identity returns the identity of op on values of type t (for the arg operators, of
// their values): 0 for sum, or and xor, 1 for prod, all ones for and, the greatest value
// (+Inf) for min and argmin, the least (-Inf) for max and argmax; on Bool, false for or
// and true for and (so for sum and max, prod and min).
func (op Op) Identity(t dtype.DType) expr.Scalar {
	ones := ^uint64(0) >> (64 - t.Bits()) // all ones in t's width
	if t == dtype.Bool {
		ones = 1
	}
	switch op.For(t) {
	case OpSum, OpOr, OpXor:
		return expr.ScalarFromBits(t, 0)
	case OpProd:
		return expr.ScalarOf(1.0).Convert(t)
	case OpAnd:
		return expr.ScalarFromBits(t, ones)
	}
	least := op == OpMax || op == OpArgMax
	switch {
	case t == dtype.Bool && least:
		return expr.ScalarFromBits(t, 0)
	case t == dtype.Bool:
		return expr.ScalarFromBits(t, 1)
	case t.IsFloat():
		if least {
			return expr.ScalarOf(math.Inf(-1)).Convert(t)
		}
		return expr.ScalarOf(math.Inf(1)).Convert(t)
	case t.IsSigned():
		if least {
			return expr.ScalarFromBits(t, 1<<(t.Bits()-1))
		}
		return expr.ScalarFromBits(t, ones>>1)
	case least:
		return expr.ScalarFromBits(t, 0)
	}
	return expr.ScalarFromBits(t, ones)
}

// ---- PTX ----

// EmitCombine appends to f (of module m, for compute capability sm as major*10+minor)
// the instructions of a ∘ b for op (not an arg operator) on values of type t, held in
// registers of the elementwise lowering's form (Bool a predicate; 8- to 32-bit integers
// 32-bit registers, sign- or zero-extended; 64-bit integers and floats their own), and
// returns the result's register.
func EmitCombine(m *ptx.Module, f *ptx.Func, sm int, op Op, t dtype.DType, a, b ptx.Reg) ptx.Reg {
	return exprLowering(m, f, sm, nil).combine(op, t, a, b)
}

// combine lowers a ∘ b (see EmitCombine).
func (g *ewGen) combine(op Op, t dtype.DType, a, b ptx.Reg) ptx.Reg {
	n := op.Node(&expr.Input{Slot: 0, Type: t}, &expr.Input{Slot: 1, Type: t})
	return g.eval(n, &ewElem{ins: map[int]ptx.Reg{0: a, 1: b}, memo: map[expr.Node]ptx.Reg{}})
}

// before lowers op.Before for values of type t and indices of type it: a predicate.
func (g *ewGen) before(op Op, t, it dtype.DType, av, ai, bv, bi ptx.Reg) ptx.Reg {
	n := op.Before(&expr.Input{Slot: 0, Type: t}, &expr.Input{Slot: 1, Type: it},
		&expr.Input{Slot: 2, Type: t}, &expr.Input{Slot: 3, Type: it})
	return g.eval(n, &ewElem{ins: map[int]ptx.Reg{0: av, 1: ai, 2: bv, 3: bi}, memo: map[expr.Node]ptx.Reg{}})
}

// ---- the CPU ----

// The CPU computes on fp.Number types, bools as uint8 0 and 1 (callers apply Op.For
// first, so that bools only meet and, or and xor). Sums and products of floats are made
// canonical where a result is observed (the end of a fold, each element of a scan): a
// NaN stays a NaN through further sums and products, so that is the same as after every
// step.

// combine returns a ∘ b (op not an arg operator).
func combine[A fp.Number](op Op, a, b A) A {
	switch op {
	case OpSum:
		return fp.Canon(a + b)
	case OpProd:
		return fp.Canon(a * b)
	case OpMin:
		return fp.Min(a, b)
	case OpMax:
		return fp.Max(a, b)
	case OpAnd:
		return fp.FromBits[A](fp.Bits(a) & fp.Bits(b))
	case OpOr:
		return fp.FromBits[A](fp.Bits(a) | fp.Bits(b))
	case OpXor:
		return fp.FromBits[A](fp.Bits(a) ^ fp.Bits(b))
	}
	panic(fmt.Sprintf("kernel: combining with %v", op))
}

// CombineFunc returns a ∘ b for op (not an arg operator) on values of Go type A (uint8
// for Bool, with op.For(dtype.Bool) applied), for the CPU kernels of other packages.
func CombineFunc[A fp.Number](op Op) func(a, b A) A {
	return func(a, b A) A { return combine(op, a, b) }
}

// fold returns acc ∘ x[0] ∘ x[1] ∘ ... in that order.
func fold[A fp.Number](op Op, acc A, x []A) A {
	switch op {
	case OpSum:
		for _, v := range x {
			acc += v
		}
		return fp.Canon(acc)
	case OpMin:
		for _, v := range x {
			acc = fp.Min(acc, v)
		}
	case OpMax:
		for _, v := range x {
			acc = fp.Max(acc, v)
		}
	default:
		for _, v := range x {
			acc = combine(op, acc, v)
		}
	}
	return acc
}

// foldVec sets acc[j] = acc[j] ∘ x[j] for every j < len(acc).
func foldVec[A fp.Number](op Op, acc, x []A) {
	x = x[:len(acc)]
	switch op {
	case OpSum:
		for j, v := range x {
			acc[j] = fp.Canon(acc[j] + v)
		}
	case OpMin:
		for j, v := range x {
			acc[j] = fp.Min(acc[j], v)
		}
	case OpMax:
		for j, v := range x {
			acc[j] = fp.Max(acc[j], v)
		}
	default:
		for j, v := range x {
			acc[j] = combine(op, acc[j], v)
		}
	}
}

// foldRows folds the rows of x (len(acc) elements each) into acc, in order.
func foldRows[A fp.Number](op Op, acc, x []A) {
	if len(acc) == 1 {
		acc[0] = fold(op, acc[0], x)
		return
	}
	for r := 0; r+len(acc) <= len(x); r += len(acc) {
		foldVec(op, acc, x[r:r+len(acc)])
	}
}

// scanRows scans the rows of x (len(run) elements each) in place, carrying run: an
// inclusive scan sets x[r][j] = run[j] = run[j] ∘ x[r][j], an exclusive one sets x[r][j]
// to run[j] before combining.
func scanRows[A fp.Number](op Op, run, x []A, excl bool) {
	if len(run) == 1 {
		r := run[0]
		switch {
		case op == OpSum && !excl:
			for i, v := range x {
				r += v
				x[i] = fp.Canon(r)
			}
		case op == OpSum:
			for i, v := range x {
				x[i] = fp.Canon(r)
				r += v
			}
		case op == OpMax && !excl:
			for i, v := range x {
				r = fp.Max(r, v)
				x[i] = r
			}
		case op == OpMin && !excl:
			for i, v := range x {
				r = fp.Min(r, v)
				x[i] = r
			}
		case !excl:
			for i, v := range x {
				r = combine(op, r, v)
				x[i] = r
			}
		default:
			for i, v := range x {
				x[i] = r
				r = combine(op, r, v)
			}
		}
		run[0] = fp.Canon(r)
		return
	}
	for r := 0; r+len(run) <= len(x); r += len(run) {
		row := x[r : r+len(run)]
		if excl {
			for j, v := range row {
				row[j] = run[j]
				run[j] = combine(op, run[j], v)
			}
			continue
		}
		foldVec(op, run, row)
		copy(row, run)
	}
}

// argBefore is Before on the CPU: whether (bv, bi) comes before (av, ai) for OpArgMin
// (isMin) or OpArgMax.
func argBefore[A fp.Number](isMin bool, av A, ai int64, bv A, bi int64) bool {
	an, bn := av != av, bv != bv
	switch {
	case bn:
		return !an || bi < ai
	case an:
		return false
	case bv == av:
		return bi < ai
	case isMin:
		return bv < av
	}
	return bv > av
}
