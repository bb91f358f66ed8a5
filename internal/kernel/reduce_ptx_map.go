package kernel

import (
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/ptx"
)

// lowerForReduce lowers a map expression for one element with the elementwise
// generator's lowering (elementwise_lower.go), so that MapReduce's map has exactly the
// semantics of Eval's expressions. ins holds each read input slot's value in the
// lowering's register form (ewRT; bools as predicates), params each parameter slot's.
func lowerForReduce(m *ptx.Module, f *ptx.Func, sm int, e *expr.Expr, ins, params map[int]ptx.Reg) ptx.Reg {
	n := 0
	for _, s := range e.Inputs {
		n = max(n, s.Index+1)
	}
	ops := make([]Operand, n)
	for _, s := range e.Inputs {
		ops[s.Index] = Operand{DType: s.DType, Kind: Contig}
	}
	ew := &Elementwise{Expr: e, Ins: ops, Out: Operand{DType: e.DType(), Kind: Contig}}
	g := newEWLowering(ew, m, f, sm, params)
	c := &ewElem{ins: ins, memo: map[expr.Node]ptx.Reg{}}
	return g.eval(e.Root, c)
}
