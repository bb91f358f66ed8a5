package kernel

import (
	"encoding/binary"
	"math"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/ptx"
)

// The scatters' operators are the operator table's (operator.go): OpSum for AddAt and
// Bincount, OpMax and OpMin for MaximumAt and MinimumAt, with its NaN policy
// (propagated, canonical), lowered by EmitCombine's machinery on CUDA and by combine on
// the CPU, in the accumulator type of the destination (accDType). Only the atomics
// (scatter_ptx.go's atomicAcc) are the scatters' own, with the same results.

// ScatterStore is Scatter.Op for Put and PutAlongAxis: no operator, dst = v (any one of
// duplicate targets' values wins).
const ScatterStore Op = 0

// accDType is the type values combine in for a destination of type t: 32-bit integers
// for the narrower ones (bools as 0/1, combined by Op.For(dtype.Bool): or, and), float32
// for the half types, else t. accType is its register type.
func accDType(t dtype.DType) dtype.DType {
	switch t {
	case dtype.Bool, dtype.Uint8, dtype.Uint16:
		return dtype.Uint32
	case dtype.Int8, dtype.Int16:
		return dtype.Int32
	case dtype.Float16, dtype.BFloat16:
		return dtype.Float32
	}
	return t
}

func accType(t dtype.DType) ptx.Type { return ewRT(accDType(t)) }

// scatterIdentity returns the bits (in accType(t)) of op's identity (Op.Identity in the
// accumulator type), but -0.0 for a float sum: x + -0 is x for every x, -0 included, so
// that a bin no value reached leaves a destination of -0 as it is.
func scatterIdentity(op Op, t dtype.DType) uint64 {
	at := accDType(t)
	switch {
	case t == dtype.Bool:
		return op.Identity(t).Bits()
	case op == OpSum && at.IsFloat():
		return expr.ScalarOf(math.Copysign(0, -1)).Convert(at).Bits()
	}
	return op.Identity(at).Bits()
}

// combine returns a ∘ b for the scatter's operator, a and b in accumulator registers
// for a destination of type t (EmitCombine's lowering).
func (g *scatterGen) combine(t dtype.DType, a, b ptx.Reg) ptx.Reg {
	return g.ew.combine(g.s.Op.For(t), accDType(t), a, b)
}

// cpuNum is a value of the CPU scatters: a float64 for float types, the int64 (or
// uint64 bits) for integer ones, 0/1 for bools.
type cpuNum struct {
	f float64
	i int64
}

// loadNum reads the element of type t at b.
func loadNum(b []byte, t dtype.DType) cpuNum {
	switch t {
	case dtype.Bool:
		if b[0] != 0 {
			return cpuNum{i: 1}
		}
		return cpuNum{}
	case dtype.Int8:
		return cpuNum{i: int64(int8(b[0]))}
	case dtype.Uint8:
		return cpuNum{i: int64(b[0])}
	case dtype.Int16:
		return cpuNum{i: int64(int16(binary.LittleEndian.Uint16(b)))}
	case dtype.Uint16:
		return cpuNum{i: int64(binary.LittleEndian.Uint16(b))}
	case dtype.Int32:
		return cpuNum{i: int64(int32(binary.LittleEndian.Uint32(b)))}
	case dtype.Uint32:
		return cpuNum{i: int64(binary.LittleEndian.Uint32(b))}
	case dtype.Int64, dtype.Uint64:
		return cpuNum{i: int64(binary.LittleEndian.Uint64(b))}
	case dtype.Float16:
		return cpuNum{f: dtype.Float16ToFloat64(binary.LittleEndian.Uint16(b))}
	case dtype.BFloat16:
		return cpuNum{f: dtype.BFloat16ToFloat64(binary.LittleEndian.Uint16(b))}
	case dtype.Float32:
		return cpuNum{f: float64(math.Float32frombits(binary.LittleEndian.Uint32(b)))}
	}
	return cpuNum{f: math.Float64frombits(binary.LittleEndian.Uint64(b))}
}

// storeNum writes v as an element of type t at b (integers wrap to t's width; floats
// round to t).
func storeNum(b []byte, t dtype.DType, v cpuNum) {
	switch t {
	case dtype.Bool:
		b[0] = 0
		if v.i != 0 {
			b[0] = 1
		}
	case dtype.Int8, dtype.Uint8:
		b[0] = byte(v.i)
	case dtype.Int16, dtype.Uint16:
		binary.LittleEndian.PutUint16(b, uint16(v.i))
	case dtype.Int32, dtype.Uint32:
		binary.LittleEndian.PutUint32(b, uint32(v.i))
	case dtype.Int64, dtype.Uint64:
		binary.LittleEndian.PutUint64(b, uint64(v.i))
	case dtype.Float16:
		binary.LittleEndian.PutUint16(b, dtype.Float16FromFloat64(v.f))
	case dtype.BFloat16:
		binary.LittleEndian.PutUint16(b, dtype.BFloat16FromFloat64(v.f))
	case dtype.Float32:
		binary.LittleEndian.PutUint32(b, math.Float32bits(float32(v.f)))
	default:
		binary.LittleEndian.PutUint64(b, math.Float64bits(v.f))
	}
}

// convertNum converts a value of type from to a value of type to (Go's conversions).
func convertNum(v cpuNum, from, to dtype.DType) cpuNum {
	switch {
	case from.IsFloat() == to.IsFloat() || from == dtype.Bool && !to.IsFloat():
		return v
	case to.IsFloat():
		if from == dtype.Uint64 {
			return cpuNum{f: float64(uint64(v.i))}
		}
		return cpuNum{f: float64(v.i)}
	}
	return cpuNum{i: int64(v.f)}
}

// cpuCombine returns op(a, b) for a destination of type t: the operator table's
// combine in t's precision (the half types in float32), on the values' Go types
// (uint64 for Uint64, whose order is unsigned).
func cpuCombine(op Op, t dtype.DType, a, b cpuNum) cpuNum {
	switch {
	case t == dtype.Float64:
		return cpuNum{f: combine(op, a.f, b.f)}
	case t.IsFloat():
		return cpuNum{f: float64(combine(op, float32(a.f), float32(b.f)))}
	case t == dtype.Uint64:
		return cpuNum{i: int64(combine(op, uint64(a.i), uint64(b.i)))}
	}
	return cpuNum{i: combine(op.For(t), a.i, b.i)}
}
