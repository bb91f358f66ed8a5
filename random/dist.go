package random

import (
	"fmt"
	"math"
	"math/bits"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// MaxRounds bounds the draws of one IntRange element: round 0 (the element's own block)
// and at most MaxRounds-1 redraws. A draw is rejected with probability
// (2^W mod r)/2^W < 1/2 (W = 32 or 64, r = hi-lo), so an element reaches its last round
// with probability below 2^-(MaxRounds-1) = 2^-63; that round's draw is accepted
// whatever it is (still in [lo, hi), biased only in that never-seen case).
const MaxRounds = 64

// fill calls gen for every block overlapping elements [first, first+len(dst)) of a request
// whose blocks hold epb elements each; gen(b, out) writes the epb elements of block b (b is
// the block's index in the request; its counter is offset+b) into out.
func fill[T any](dst []T, first int64, epb int, gen func(b uint64, out []T)) {
	if first < 0 {
		panic(fmt.Sprintf("random: negative first element %d", first))
	}
	if len(dst) == 0 {
		return
	}
	var tmp [16]T
	e := int64(epb)
	i := 0
	g := first
	if r := int(g % e); r != 0 { // head: part of a block
		gen(uint64(g/e), tmp[:epb])
		k := copy(dst, tmp[r:epb])
		i += k
		g += int64(k)
	}
	for ; len(dst)-i >= epb; i, g = i+epb, g+e {
		gen(uint64(g/e), dst[i:i+epb:i+epb])
	}
	if i < len(dst) { // tail
		gen(uint64(g/e), tmp[:epb])
		copy(dst[i:], tmp[:epb])
	}
}

// UniformFloat32 writes elements first .. first+len(dst)-1 of the request (seed, offset)
// of uniform float32 values in [0, 1): element i is (w >> 8) * 2^-24 with w = word i%4 of
// block offset + i/4. The largest value is 1 - 2^-24; converting it to float16 or bfloat16
// would round to 1.0, so use UniformFloat16 and UniformBFloat16 for those types.
func UniformFloat32(dst []float32, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 4, func(b uint64, out []float32) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		out[0], out[1], out[2], out[3] = uniformF32(w0), uniformF32(w1), uniformF32(w2), uniformF32(w3)
	})
}

// UniformFloat64 writes uniform float64 values in [0, 1): element i is (x >> 11) * 2^-53
// with x = w[2j] | w[2j+1] << 32, j = i%2, w the words of block offset + i/2.
func UniformFloat64(dst []float64, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 2, func(b uint64, out []float64) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		out[0] = uniformF64(uint64(w1)<<32 | uint64(w0))
		out[1] = uniformF64(uint64(w3)<<32 | uint64(w2))
	})
}

// uniformF32 is (w >> 8) * 2^-24, exact: at most 1 - 2^-24.
func uniformF32(w uint32) float32 { return float32(w>>8) * 0x1p-24 }

// uniformF64 is (x >> 11) * 2^-53, exact: at most 1 - 2^-53.
func uniformF64(x uint64) float64 { return float64(x>>11) * 0x1p-53 }

// uniformF16 is the float16 bits of (h >> 5) * 2^-11, computed as the GPU does
// (cvt.rn.f16.f32 of an exact float32).
func uniformF16(h uint32) uint16 { return dtype.Float16FromFloat32(float32(h>>5) * 0x1p-11) }

// uniformBF16 is the bfloat16 bits of (h >> 8) * 2^-8 (exact in bfloat16).
func uniformBF16(h uint32) uint16 {
	return uint16(math.Float32bits(float32(h>>8)*0x1p-8) >> 16)
}

// UniformFloat16 writes uniform IEEE binary16 values in [0, 1) as their bits: element i is
// (h >> 5) * 2^-11, exact, at most 1 - 2^-11, where h is half i%2 (the low 16 bits first)
// of word (i%8)/2 of block offset + i/8.
func UniformFloat16(dst []uint16, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 8, func(b uint64, out []uint16) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		for j, w := range [4]uint32{w0, w1, w2, w3} {
			out[2*j] = uniformF16(w & 0xFFFF)
			out[2*j+1] = uniformF16(w >> 16)
		}
	})
}

// UniformBFloat16 writes uniform bfloat16 values in [0, 1) as their bits: element i is
// (h >> 8) * 2^-8, exact, at most 1 - 2^-8, with h as in UniformFloat16.
func UniformBFloat16(dst []uint16, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 8, func(b uint64, out []uint16) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		for j, w := range [4]uint32{w0, w1, w2, w3} {
			out[2*j] = uniformBF16(w & 0xFFFF)
			out[2*j+1] = uniformBF16(w >> 16)
		}
	})
}

// NormalFloat32 writes standard normal float32 values: block offset + i/4 gives elements
// 4j..4j+3 as two Box-Muller pairs, (z0, z1) = boxMuller32(w0, w1) and
// (z2, z3) = boxMuller32(w2, w3), where boxMuller32(a, b) is (s r cos(pi t), r sin(pi t))
// with r = sqrt(-2 ln u), u = fl32(2k+1)*2^-32 for k = a & 0x7FFFFFFF, s = -1 if bit 31 of
// a is set, t = fl32(int32(b))*2^-32, every step as the package doc specifies.
// |z| < 6.6605.
func NormalFloat32(dst []float32, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 4, func(b uint64, out []float32) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		out[0], out[1] = boxMuller32(w0, w1)
		out[2], out[3] = boxMuller32(w2, w3)
	})
}

// NormalFloat16 writes standard normal IEEE binary16 values as their bits: element i is
// NormalFloat32's element i of the same request, rounded once to nearest even.
func NormalFloat16(dst []uint16, seed, offset uint64, first int64) {
	normalHalf(dst, seed, offset, first, dtype.Float16FromFloat32)
}

// NormalBFloat16 writes standard normal bfloat16 values as their bits: element i is
// NormalFloat32's element i of the same request, rounded once to nearest even.
func NormalBFloat16(dst []uint16, seed, offset uint64, first int64) {
	normalHalf(dst, seed, offset, first, dtype.BFloat16FromFloat32)
}

func normalHalf(dst []uint16, seed, offset uint64, first int64, round func(float32) uint16) {
	k := Key(seed)
	fill(dst, first, 4, func(b uint64, out []uint16) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		z0, z1 := boxMuller32(w0, w1)
		z2, z3 := boxMuller32(w2, w3)
		out[0], out[1], out[2], out[3] = round(z0), round(z1), round(z2), round(z3)
	})
}

// NormalFloat64 writes standard normal float64 values: block offset + i/2 gives elements
// 2j, 2j+1 = boxMuller64(w0 | w1<<32, w2 | w3<<32), with u = fl64(x0)*2^-64 + 2^-65 and
// t = 2*pi*x1/2^64. |z| < 9.6.
func NormalFloat64(dst []float64, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 2, func(b uint64, out []float64) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		out[0], out[1] = boxMuller64(uint64(w1)<<32|uint64(w0), uint64(w3)<<32|uint64(w2))
	})
}

// Integer is the set of integer element types that Bits fills.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64
}

// Bits fills dst with uniformly distributed integers over T's full range: the bytes of
// elements first.. are the bytes of the Philox stream, block after block, each block's
// words w0..w3 in little-endian order. So element i of a type of s bytes is bytes
// s*i .. s*i+s-1 of that stream: a 4-byte element is word i%4 of block offset + i/4, an
// 8-byte element is w[2j] | w[2j+1]<<32 (j = i%2) of block offset + i/2, a 2-byte element
// is half i%2 (low first) of word (i%8)/2 of block offset + i/8, a byte is byte i%4 (least
// significant first) of word (i%16)/4 of block offset + i/16. Signed types take the same
// bits (two's complement).
func Bits[T Integer](dst []T, seed, offset uint64, first int64) {
	var z T
	p := unsafe.Pointer(unsafe.SliceData(dst))
	switch unsafe.Sizeof(z) {
	case 1:
		bits8(unsafe.Slice((*uint8)(p), len(dst)), seed, offset, first, 0xFF)
	case 2:
		bits16(unsafe.Slice((*uint16)(p), len(dst)), seed, offset, first)
	case 4:
		bits32(unsafe.Slice((*uint32)(p), len(dst)), seed, offset, first)
	case 8:
		bits64(unsafe.Slice((*uint64)(p), len(dst)), seed, offset, first)
	}
}

// Bool fills dst with fair coin flips: element i is bit 0 of the byte Bits would give
// element i of a uint8 request (byte i%4 of word (i%16)/4 of block offset + i/16).
func Bool(dst []bool, seed, offset uint64, first int64) {
	bits8(unsafe.Slice((*uint8)(unsafe.Pointer(unsafe.SliceData(dst))), len(dst)), seed, offset, first, 1)
}

func bits8(dst []uint8, seed, offset uint64, first int64, mask uint8) {
	k := Key(seed)
	fill(dst, first, 16, func(b uint64, out []uint8) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		for j, w := range [4]uint32{w0, w1, w2, w3} {
			out[4*j] = uint8(w) & mask
			out[4*j+1] = uint8(w>>8) & mask
			out[4*j+2] = uint8(w>>16) & mask
			out[4*j+3] = uint8(w>>24) & mask
		}
	})
}

func bits16(dst []uint16, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 8, func(b uint64, out []uint16) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		out[0], out[1] = uint16(w0), uint16(w0>>16)
		out[2], out[3] = uint16(w1), uint16(w1>>16)
		out[4], out[5] = uint16(w2), uint16(w2>>16)
		out[6], out[7] = uint16(w3), uint16(w3>>16)
	})
}

func bits32(dst []uint32, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 4, func(b uint64, out []uint32) {
		out[0], out[1], out[2], out[3] = block(k[0], k[1], offset+b)
	})
}

func bits64(dst []uint64, seed, offset uint64, first int64) {
	k := Key(seed)
	fill(dst, first, 2, func(b uint64, out []uint64) {
		w0, w1, w2, w3 := block(k[0], k[1], offset+b)
		out[0] = uint64(w1)<<32 | uint64(w0)
		out[1] = uint64(w3)<<32 | uint64(w2)
	})
}

// IntRange32 fills dst with integers uniform on [lo, hi) without bias, by D. Lemire's
// multiply-and-reject method ("Fast random integer generation in an interval", ACM TOMACS
// 29(1), 2019). With r = uint32(hi-lo) and t = (2^32 - r) mod r: a draw w (word i%4 of
// block offset + i/4, as Bits) gives m = w*r (64-bit); if uint32(m) >= t the element is
// lo + int32(m >> 32); otherwise the draw is rejected and the element draws again from word
// i%4 of the block with counter (offset + i/4, round), round = 1, 2, ..., MaxRounds-1, the
// last round accepted unconditionally. hi is exclusive, so it may be 2^31 (MaxInt32 can
// be drawn); it panics if hi <= lo, hi > 2^31 or hi - lo >= 2^32 (the whole int32 range:
// use Bits).
func IntRange32(dst []int32, seed, offset uint64, first int64, lo int32, hi int64) {
	intRange32(dst, seed, offset, first, lo, hi, MaxRounds)
}

func intRange32(dst []int32, seed, offset uint64, first int64, lo int32, hi int64, maxRounds uint32) {
	if hi <= int64(lo) || hi > 1<<31 || hi-int64(lo) >= 1<<32 {
		panic(fmt.Sprintf("random: int32 range [%d, %d) empty or too wide", lo, hi))
	}
	k := Key(seed)
	r := uint32(hi - int64(lo))
	t := -r % r
	pick := func(ctr uint64, j int, w uint32) int32 {
		for round := uint32(0); ; round++ {
			m := uint64(w) * uint64(r)
			if uint32(m) >= t || round == maxRounds-1 {
				return lo + int32(m>>32)
			}
			v0, v1, v2, v3 := blockR(k[0], k[1], ctr, round+1)
			w = [4]uint32{v0, v1, v2, v3}[j]
		}
	}
	fill(dst, first, 4, func(b uint64, out []int32) {
		ctr := offset + b
		w0, w1, w2, w3 := block(k[0], k[1], ctr)
		out[0] = pick(ctr, 0, w0)
		out[1] = pick(ctr, 1, w1)
		out[2] = pick(ctr, 2, w2)
		out[3] = pick(ctr, 3, w3)
	})
}

// IntRange64 is IntRange32 for int64: r = uint64(hi-lo), t = (2^64 - r) mod r, a draw is
// x = w[2j] | w[2j+1]<<32 (j = i%2) of block (offset + i/2, round), the 128-bit product
// x*r is accepted if its low 64 bits are >= t, and the element is lo + high 64 bits.
// It panics if hi <= lo.
func IntRange64(dst []int64, seed, offset uint64, first int64, lo, hi int64) {
	intRange64(dst, seed, offset, first, lo, hi, MaxRounds)
}

func intRange64(dst []int64, seed, offset uint64, first int64, lo, hi int64, maxRounds uint32) {
	if hi <= lo {
		panic(fmt.Sprintf("random: empty range [%d, %d)", lo, hi))
	}
	k := Key(seed)
	r := uint64(hi) - uint64(lo)
	t := -r % r
	pick := func(ctr uint64, j int, x uint64) int64 {
		for round := uint32(0); ; round++ {
			h, l := bits.Mul64(x, r)
			if l >= t || round == maxRounds-1 {
				return lo + int64(h)
			}
			v0, v1, v2, v3 := blockR(k[0], k[1], ctr, round+1)
			if j == 0 {
				x = uint64(v1)<<32 | uint64(v0)
			} else {
				x = uint64(v3)<<32 | uint64(v2)
			}
		}
	}
	fill(dst, first, 2, func(b uint64, out []int64) {
		ctr := offset + b
		w0, w1, w2, w3 := block(k[0], k[1], ctr)
		out[0] = pick(ctr, 0, uint64(w1)<<32|uint64(w0))
		out[1] = pick(ctr, 1, uint64(w3)<<32|uint64(w2))
	})
}
