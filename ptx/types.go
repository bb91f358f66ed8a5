package ptx

import (
	"fmt"

	"github.com/go-gpu/gpu/dtype"
)

// Type is a PTX fundamental type (.f32, .s64, .pred ...).
type Type uint8

// The PTX types. Invalid is the zero value.
const (
	Invalid Type = iota
	Pred
	B8
	B16
	B32
	B64
	U8
	U16
	U32
	U64
	S8
	S16
	S32
	S64
	F16
	F16x2
	BF16
	BF16x2
	F32
	F64
	numPTXTypes
)

var typeNames = [numPTXTypes]string{
	Invalid: ".invalid", Pred: ".pred",
	B8: ".b8", B16: ".b16", B32: ".b32", B64: ".b64",
	U8: ".u8", U16: ".u16", U32: ".u32", U64: ".u64",
	S8: ".s8", S16: ".s16", S32: ".s32", S64: ".s64",
	F16: ".f16", F16x2: ".f16x2", BF16: ".bf16", BF16x2: ".bf16x2",
	F32: ".f32", F64: ".f64",
}

var typeBits = [numPTXTypes]int{
	Pred: 1, B8: 8, B16: 16, B32: 32, B64: 64, U8: 8, U16: 16, U32: 32, U64: 64,
	S8: 8, S16: 16, S32: 32, S64: 64, F16: 16, F16x2: 32, BF16: 16, BF16x2: 32, F32: 32, F64: 64,
}

// String returns the PTX spelling with its leading dot (".f32").
func (t Type) String() string {
	if t < numPTXTypes {
		return typeNames[t]
	}
	return fmt.Sprintf(".type%d", uint8(t))
}

// Bits returns the width of t in bits (1 for Pred).
func (t Type) Bits() int {
	if t < numPTXTypes {
		return typeBits[t]
	}
	return 0
}

// IsFloat reports whether t is a floating-point type (including the packed and 16-bit ones).
func (t Type) IsFloat() bool { return t >= F16 && t <= F64 }

// IsSigned reports whether t is a signed integer type.
func (t Type) IsSigned() bool { return t >= S8 && t <= S64 }

// IsUnsigned reports whether t is an unsigned integer type.
func (t Type) IsUnsigned() bool { return t >= U8 && t <= U64 }

// IsBits reports whether t is an untyped bit-size type (.b8 ... .b64).
func (t Type) IsBits() bool { return t >= B8 && t <= B64 }

// Unsigned returns the unsigned integer type of t's width (.b32 and .s32 give .u32).
func (t Type) Unsigned() Type {
	switch t.Bits() {
	case 8:
		return U8
	case 16:
		return U16
	case 32:
		return U32
	case 64:
		return U64
	}
	return t
}

// Bit returns the bit-size type of t's width (.f32 gives .b32).
func (t Type) Bit() Type {
	switch t.Bits() {
	case 8:
		return B8
	case 16:
		return B16
	case 32:
		return B32
	case 64:
		return B64
	}
	return t
}

// RegType returns the PTX type a value of element type d has in a register.
//
// Bool is a predicate. 8-bit integers live in 16-bit registers (PTX does arithmetic on
// 16 bits at least; ld.u8/ld.s8 widen). Float16 and BFloat16 are .f16/.bf16 values held in
// .b16 registers: convert them to .f32 (Cvt) to compute. The other types map one to one.
func RegType(d dtype.DType) Type {
	switch d {
	case dtype.Bool:
		return Pred
	case dtype.Int8, dtype.Int16:
		return S16
	case dtype.Uint8, dtype.Uint16:
		return U16
	case dtype.Int32:
		return S32
	case dtype.Int64:
		return S64
	case dtype.Uint32:
		return U32
	case dtype.Uint64:
		return U64
	case dtype.Float16:
		return F16
	case dtype.BFloat16:
		return BF16
	case dtype.Float32:
		return F32
	case dtype.Float64:
		return F64
	}
	return Invalid
}

// MemType returns the PTX type used to load and store an element of type d in memory:
// Bool is one byte (.u8, 0 or 1), the other types are their own width (.s8, .u16, .f32;
// Float16 and BFloat16 are moved as .b16).
func MemType(d dtype.DType) Type {
	switch d {
	case dtype.Bool, dtype.Uint8:
		return U8
	case dtype.Int8:
		return S8
	case dtype.Float16, dtype.BFloat16:
		return B16
	}
	return RegType(d)
}

// Space is a PTX state space.
type Space uint8

// The state spaces usable with Ld and St (Generic is no qualifier: generic addressing).
const (
	Generic Space = iota
	Global
	Shared
	Local
	Const
	ParamSpace
)

var spaceNames = [...]string{"", ".global", ".shared", ".local", ".const", ".param"}

func (s Space) String() string {
	if int(s) < len(spaceNames) {
		return spaceNames[s]
	}
	return fmt.Sprintf(".space%d", uint8(s))
}

// Cache is a cache operator for loads and stores, optionally OR'ed with NC.
type Cache uint8

// Cache operators (PTX ISA "Cache Operators"). NC can be OR'ed with CacheDefault, CacheCA,
// CacheCG or CacheCS on global loads: ld.global{.cop}.nc, the read-only data path.
const (
	CacheDefault Cache = iota
	CacheCA            // .ca: cache at all levels (loads)
	CacheCG            // .cg: cache in L2, not L1
	CacheCS            // .cs: streaming, likely accessed once
	CacheLU            // .lu: last use
	CacheCV            // .cv: don't cache, fetch again
	CacheWB            // .wb: write back (stores)
	CacheWT            // .wt: write through (stores)
	NC           Cache = 0x80
)

var cacheNames = [...]string{"", ".ca", ".cg", ".cs", ".lu", ".cv", ".wb", ".wt"}

func (c Cache) op() string {
	k := int(c &^ NC)
	if k < len(cacheNames) {
		return cacheNames[k]
	}
	return ""
}
