package gokernel

import (
	"go/types"

	"github.com/go-gpu/gpu/ptx"
)

// tinfo is how a basic Go type lives in registers and memory.
type tinfo struct {
	kind   types.BasicKind
	reg    ptx.Type // register type: 8- and 16-bit integers live in 32-bit registers
	mem    ptx.Type // load/store type
	size   int      // bytes in memory
	bits   int      // Go width in bits (1 for bool)
	signed bool
	float  bool
	bool   bool
}

// small reports whether values are narrower than their registers (8 and 16 bits),
// so that arithmetic results must be wrapped to the Go width.
func (ti tinfo) small() bool { return !ti.float && !ti.bool && ti.bits < 32 }

// basicInfo returns the tinfo of a basic type (untyped kinds as their default
// types); ok is false for strings and the like.
func basicInfo(b *types.Basic) (tinfo, bool) {
	k := b.Kind()
	switch k {
	case types.UntypedBool:
		k = types.Bool
	case types.UntypedInt:
		k = types.Int
	case types.UntypedRune:
		k = types.Int32
	case types.UntypedFloat:
		k = types.Float64
	}
	ti := tinfo{kind: k}
	switch k {
	case types.Bool:
		ti.reg, ti.mem, ti.size, ti.bits, ti.bool = ptx.Pred, ptx.U8, 1, 1, true
	case types.Int8:
		ti.reg, ti.mem, ti.size, ti.bits, ti.signed = ptx.S32, ptx.S8, 1, 8, true
	case types.Int16:
		ti.reg, ti.mem, ti.size, ti.bits, ti.signed = ptx.S32, ptx.S16, 2, 16, true
	case types.Int32:
		ti.reg, ti.mem, ti.size, ti.bits, ti.signed = ptx.S32, ptx.S32, 4, 32, true
	case types.Int, types.Int64:
		ti.reg, ti.mem, ti.size, ti.bits, ti.signed = ptx.S64, ptx.S64, 8, 64, true
	case types.Uint8:
		ti.reg, ti.mem, ti.size, ti.bits = ptx.U32, ptx.U8, 1, 8
	case types.Uint16:
		ti.reg, ti.mem, ti.size, ti.bits = ptx.U32, ptx.U16, 2, 16
	case types.Uint32:
		ti.reg, ti.mem, ti.size, ti.bits = ptx.U32, ptx.U32, 4, 32
	case types.Uint, types.Uint64, types.Uintptr:
		ti.reg, ti.mem, ti.size, ti.bits = ptx.U64, ptx.U64, 8, 64
	case types.Float32:
		ti.reg, ti.mem, ti.size, ti.bits, ti.float, ti.signed = ptx.F32, ptx.F32, 4, 32, true, true
	case types.Float64:
		ti.reg, ti.mem, ti.size, ti.bits, ti.float, ti.signed = ptx.F64, ptx.F64, 8, 64, true, true
	default:
		return ti, false
	}
	return ti, true
}

// basicOf returns the basic type underlying t, or nil.
func basicOf(t types.Type) *types.Basic {
	b, _ := t.Underlying().(*types.Basic)
	return b
}

// scalarInfo returns the tinfo of t if it is a scalar type a kernel supports.
func scalarInfo(t types.Type) (tinfo, bool) {
	b := basicOf(t)
	if b == nil {
		return tinfo{}, false
	}
	return basicInfo(b)
}

// sliceElem returns the element type of a slice type, or nil.
func sliceElem(t types.Type) types.Type {
	if s, ok := t.Underlying().(*types.Slice); ok {
		return s.Elem()
	}
	return nil
}

// typeArgsOf returns the type a type parameter of a constraint's type set would most
// plainly be (the first term's type), for checking a generic kernel before its
// instantiations are known.
func representative(tp *types.TypeParam) types.Type {
	var pick func(t types.Type) types.Type
	pick = func(t types.Type) types.Type {
		switch u := t.Underlying().(type) {
		case *types.Interface:
			for i := range u.NumEmbeddeds() {
				if r := pick(u.EmbeddedType(i)); r != nil {
					return r
				}
			}
		case *types.Union:
			for i := range u.Len() {
				if r := pick(u.Term(i).Type()); r != nil {
					return r
				}
			}
		case *types.Basic:
			return u
		}
		return nil
	}
	if r := pick(tp.Constraint()); r != nil {
		return r
	}
	return types.Typ[types.Float32]
}
