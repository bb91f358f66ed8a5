// Package gomath holds the Go mirrors of the device math library of package ptx: for
// each function the PTX code computes, a Go function that performs exactly the same
// sequence of IEEE operations, so a CPU backend that calls it gets bit-identical
// results to the GPU. gen.go is generated from the same source as the PTX (see
// package ptx); this file holds the hand-written helpers it uses.
//
// NaN results are the canonical NaN the GPU produces (0x7fffffff for float32,
// 0x7fffffffffffffff for float64), whatever the NaN given.
package gomath

import (
	"math"
	"math/bits"
)

// FMA32 returns a*b + c computed with a single rounding to float32 (round to nearest
// even), like fma.rn.f32.
//
// float32(math.FMA(a, b, c)) is wrong: it rounds twice (to float64, then to float32)
// and can miss by one ulp near a float32 halfway point. Here the product a*b is exact
// in float64 (24+24 bits < 53), the sum is formed exactly as s + err (Knuth's TwoSum)
// and rounded to odd (Boldo & Melquiond, "When double rounding is odd", 2005): a 53-bit
// round-to-odd result then rounds correctly to any format of 51 bits or fewer.
func FMA32(a, b, c float32) float32 {
	p := float64(a) * float64(b) // exact
	z := float64(c)
	s := p + z
	if math.IsInf(s, 0) || math.IsNaN(s) {
		return float32(s)
	}
	// TwoSum: s + e == p + z exactly.
	bb := s - p
	e := (p - (s - bb)) + (z - bb)
	if e != 0 {
		u := math.Float64bits(s)
		if u&1 == 0 { // even: move to the odd neighbour on the side of e
			if (e > 0) == (s > 0) {
				u++
			} else {
				u--
			}
			s = math.Float64frombits(u)
		}
	}
	return float32(s)
}

func abs32(x float32) float32 { return math.Float32frombits(math.Float32bits(x) &^ (1 << 31)) }
func abs64(x float64) float64 { return math.Float64frombits(math.Float64bits(x) &^ (1 << 63)) }

func rint32(x float32) float32  { return float32(math.RoundToEven(float64(x))) }
func floor32(x float32) float32 { return float32(math.Floor(float64(x))) }
func trunc32(x float32) float32 { return float32(math.Trunc(float64(x))) }

func sqrt32(x float32) float32 { return float32(math.Sqrt(float64(x))) } // correctly rounded: 53 >= 2*24+2

func mulhi32(a, b uint32) uint32 { return uint32(uint64(a) * uint64(b) >> 32) }
func mulhi64(a, b uint64) uint64 {
	h, _ := bits.Mul64(a, b)
	return h
}

// cvtRniS32 is cvt.rni.s32.f64: round to nearest even, saturate, NaN gives 0.
func cvtRniS32(x float64) uint32 {
	switch {
	case x != x:
		return 0
	case x >= math.MaxInt32:
		return math.MaxInt32
	case x <= math.MinInt32:
		return 1 << 31
	}
	return uint32(int32(math.RoundToEven(x)))
}
