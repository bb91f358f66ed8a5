package kernel

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// The combining operators of the scatters (add, maximum, minimum) and their
// identities, for both backends, in one place. They follow NumPy's ufuncs: add wraps in
// an integer type's width and is logical or on bools; maximum and minimum propagate
// NaN. (The operator table the reductions and scans will share is being written; when
// it lands, these switch over to it: accType, scatterIdentity, combineAcc and cpuCombine
// are all there is.)

// ScatterOp is how a scatter combines a value into its destination.
type ScatterOp uint8

const (
	// ScatterStore: dst = v (Put): any one of duplicate targets' values wins.
	ScatterStore ScatterOp = iota
	// ScatterAdd: dst += v (numpy.add.at).
	ScatterAdd
	// ScatterMax: dst = max(dst, v), NaN propagating (numpy.maximum.at).
	ScatterMax
	// ScatterMin: dst = min(dst, v), NaN propagating (numpy.minimum.at).
	ScatterMin
)

// String returns "store", "add", "max" or "min".
func (o ScatterOp) String() string {
	switch o {
	case ScatterStore:
		return "store"
	case ScatterAdd:
		return "add"
	case ScatterMax:
		return "max"
	case ScatterMin:
		return "min"
	}
	return fmt.Sprintf("scatterop(%d)", uint8(o))
}

// accType is the register type values combine in for a destination of type t: 32-bit
// integers for the narrower ones (bools as 0/1), float32 for the half types, else t's.
func accType(t dtype.DType) ptx.Type {
	switch t {
	case dtype.Bool, dtype.Uint8, dtype.Uint16:
		return ptx.U32
	case dtype.Float16, dtype.BFloat16:
		return ptx.F32
	}
	return ewRT(t)
}

// scatterIdentity returns the bits (in accType(t)) of op's identity: -0.0 for a float
// sum (x + -0 is x for every x, -0 included), 0 for an integer one, the lowest value for
// maximum (-Inf for floats) and the highest for minimum.
func scatterIdentity(op ScatterOp, t dtype.DType) uint64 {
	at := accType(t)
	switch op {
	case ScatterAdd:
		switch at {
		case ptx.F32:
			return uint64(math.Float32bits(float32(math.Copysign(0, -1))))
		case ptx.F64:
			return math.Float64bits(math.Copysign(0, -1))
		}
		return 0
	case ScatterMax:
		switch {
		case at == ptx.F32:
			return uint64(math.Float32bits(float32(math.Inf(-1))))
		case at == ptx.F64:
			return math.Float64bits(math.Inf(-1))
		case t == dtype.Bool || t.IsUnsigned():
			return 0
		case at == ptx.S32:
			return 1 << 31
		}
		return 1 << 63
	case ScatterMin:
		switch {
		case at == ptx.F32:
			return uint64(math.Float32bits(float32(math.Inf(1))))
		case at == ptx.F64:
			return math.Float64bits(math.Inf(1))
		case t == dtype.Bool:
			return 1
		case t == dtype.Uint8:
			return math.MaxUint8
		case t == dtype.Uint16:
			return math.MaxUint16
		case t == dtype.Uint32:
			return math.MaxUint32
		case t == dtype.Uint64:
			return math.MaxUint64
		case at == ptx.S32:
			return math.MaxInt32
		}
		return math.MaxInt64
	}
	return 0
}

// combineAcc returns op(a, b) for two values in accumulator registers for a
// destination of type t.
func combineAcc(f *ptx.Func, op ScatterOp, t dtype.DType, a, b ptx.Reg) ptx.Reg {
	at := accType(t)
	r := f.Reg(at)
	switch op {
	case ScatterAdd:
		if t == dtype.Bool {
			f.Or(r, a, b)
		} else {
			f.Add(r, a, b)
		}
	case ScatterMax, ScatterMin:
		isMax := op == ScatterMax
		switch at {
		case ptx.F32:
			if isMax {
				f.Op("max.NaN.f32", r, a, b)
			} else {
				f.Op("min.NaN.f32", r, a, b)
			}
		case ptx.F64:
			if isMax {
				f.Max(r, a, b)
			} else {
				f.Min(r, a, b)
			}
			// max.f64 returns the other operand for one NaN: propagate it.
			na := f.Setp(ptx.NaN, a, a)
			f.Selp(r, a, r, na)
			nb := f.Setp(ptx.NaN, b, b)
			f.Selp(r, b, r, nb)
		default:
			if isMax {
				f.Max(r, a, b)
			} else {
				f.Min(r, a, b)
			}
		}
	default:
		panic(fmt.Sprintf("kernel: combine of %v", op))
	}
	return r
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

// cpuCombine returns op(a, b) for a destination of type t, computed as NumPy does in
// t's precision (the half types in float32, rounded).
func cpuCombine(op ScatterOp, t dtype.DType, a, b cpuNum) cpuNum {
	if t.IsFloat() {
		x, y := a.f, b.f
		var r float64
		switch op {
		case ScatterAdd:
			switch t {
			case dtype.Float64:
				r = x + y
			default:
				r = float64(float32(x) + float32(y))
			}
		case ScatterMax, ScatterMin:
			switch {
			case math.IsNaN(x):
				r = x
			case math.IsNaN(y):
				r = y
			case (op == ScatterMax) == (y > x):
				r = y
			default:
				r = x
			}
		}
		return cpuNum{f: r}
	}
	x, y := a.i, b.i
	switch op {
	case ScatterAdd:
		if t == dtype.Bool {
			return cpuNum{i: x | y}
		}
		return cpuNum{i: x + y}
	case ScatterMax, ScatterMin:
		less := x < y
		if t == dtype.Uint64 {
			less = uint64(x) < uint64(y)
		}
		if (op == ScatterMax) == less {
			return cpuNum{i: y}
		}
	}
	return cpuNum{i: x}
}
