package nccl

import (
	"math"

	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// The reductions of the CPU communicator. Elements are combined in rank order,
// rounding to the element type at every step, as NCCL's kernels do (in their own order,
// which differs for more than two ranks: float results may differ in the last bits):
// integers wrap around; float16 and bfloat16 are combined exactly in float64 and
// rounded once per step. Avg follows NCCL: floats are each multiplied by 1/world
// (rounded to the type) and summed; integers are summed and the sum divided by world,
// truncating toward zero. Min and Max ignore a NaN against a number, as C's fmin and
// fmax, which NCCL uses.

// block is the number of elements combined at a time: the accumulator stays in cache,
// and every source element of a block is read before any destination element of it is
// written, which makes in-place calls (a destination that is a source) correct.
const block = 2048

// grain is the fewest elements a worker goroutine takes.
const grain = 1 << 15

// reduce sets every dsts[k] to the reduction of srcs over ranks, element by element.
// All slices have the same length in bytes, a multiple of t's size.
func reduce(t dtype.DType, red Op, world int, dsts, srcs [][]byte, workers int) {
	switch t {
	case dtype.Int8:
		reduceInts[int8](red, world, dsts, srcs, workers)
	case dtype.Uint8:
		reduceInts[uint8](red, world, dsts, srcs, workers)
	case dtype.Int32:
		reduceInts[int32](red, world, dsts, srcs, workers)
	case dtype.Uint32:
		reduceInts[uint32](red, world, dsts, srcs, workers)
	case dtype.Int64:
		reduceInts[int64](red, world, dsts, srcs, workers)
	case dtype.Uint64:
		reduceInts[uint64](red, world, dsts, srcs, workers)
	case dtype.Float32:
		reduceFloats[float32](red, world, dsts, srcs, workers)
	case dtype.Float64:
		reduceFloats[float64](red, world, dsts, srcs, workers)
	case dtype.Float16:
		reduceHalves(red, world, dsts, srcs, workers, dtype.Float16ToFloat64, dtype.Float16FromFloat64)
	case dtype.BFloat16:
		reduceHalves(red, world, dsts, srcs, workers, dtype.BFloat16ToFloat64, dtype.BFloat16FromFloat64)
	default:
		panic("nccl: reduce of unsupported type " + t.String())
	}
}

func views[T any](bs [][]byte) [][]T {
	out := make([][]T, len(bs))
	for i, b := range bs {
		out[i] = cpu.Slice[T](b)
	}
	return out
}

type integer interface {
	~int8 | ~uint8 | ~int32 | ~uint32 | ~int64 | ~uint64
}

func reduceInts[T integer](red Op, world int, dstb, srcb [][]byte, workers int) {
	dsts, srcs := views[T](dstb), views[T](srcb)
	n := len(srcs[0])
	cpu.Parallel(workers, n, grain, func(lo, hi int) {
		var buf [block]T
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			acc := buf[:e-b]
			copy(acc, srcs[0][b:e])
			for _, s := range srcs[1:] {
				x := s[b:e]
				switch red {
				case Sum, Avg:
					for i := range acc {
						acc[i] += x[i]
					}
				case Prod:
					for i := range acc {
						acc[i] *= x[i]
					}
				case Min:
					for i := range acc {
						acc[i] = min(acc[i], x[i])
					}
				case Max:
					for i := range acc {
						acc[i] = max(acc[i], x[i])
					}
				}
			}
			if red == Avg {
				// Divided in 64 bits: T(world) overflows a 1-byte type from 128 ranks.
				var zero T
				if zero-1 < 0 {
					for i := range acc {
						acc[i] = T(int64(acc[i]) / int64(world))
					}
				} else {
					for i := range acc {
						acc[i] = T(uint64(acc[i]) / uint64(world))
					}
				}
			}
			for _, d := range dsts {
				copy(d[b:e], acc)
			}
		}
	})
}

func reduceFloats[T float32 | float64](red Op, world int, dstb, srcb [][]byte, workers int) {
	dsts, srcs := views[T](dstb), views[T](srcb)
	n := len(srcs[0])
	scale := T(1 / float64(world))
	cpu.Parallel(workers, n, grain, func(lo, hi int) {
		var buf [block]T
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			acc := buf[:e-b]
			copy(acc, srcs[0][b:e])
			if red == Avg {
				for i := range acc {
					acc[i] = T(acc[i] * scale)
				}
			}
			for _, s := range srcs[1:] {
				x := s[b:e]
				switch red {
				case Sum:
					for i := range acc {
						acc[i] += x[i]
					}
				case Avg:
					for i := range acc {
						acc[i] += T(x[i] * scale) // the conversion forbids a fused multiply-add
					}
				case Prod:
					for i := range acc {
						acc[i] *= x[i]
					}
				case Min:
					for i := range acc {
						if x[i] < acc[i] || acc[i] != acc[i] {
							acc[i] = x[i]
						}
					}
				case Max:
					for i := range acc {
						if x[i] > acc[i] || acc[i] != acc[i] {
							acc[i] = x[i]
						}
					}
				}
			}
			for _, d := range dsts {
				copy(d[b:e], acc)
			}
		}
	})
}

// reduceHalves reduces 16-bit floats given by their bits, through float64 (exact for
// one sum or product of two of them) with one rounding per step.
func reduceHalves(red Op, world int, dstb, srcb [][]byte, workers int, get func(uint16) float64, put func(float64) uint16) {
	dsts, srcs := views[uint16](dstb), views[uint16](srcb)
	n := len(srcs[0])
	scale := get(put(1 / float64(world)))
	cpu.Parallel(workers, n, grain, func(lo, hi int) {
		var buf [block]float64
		var out [block]uint16
		for b := lo; b < hi; b += block {
			e := min(b+block, hi)
			acc := buf[:e-b]
			for i, h := range srcs[0][b:e] {
				acc[i] = get(h)
				if red == Avg {
					acc[i] = get(put(acc[i] * scale))
				}
			}
			for _, s := range srcs[1:] {
				x := s[b:e]
				switch red {
				case Sum:
					for i := range acc {
						acc[i] = get(put(acc[i] + get(x[i])))
					}
				case Avg:
					for i := range acc {
						acc[i] = get(put(acc[i] + get(put(get(x[i])*scale))))
					}
				case Prod:
					for i := range acc {
						acc[i] = get(put(acc[i] * get(x[i])))
					}
				case Min:
					for i := range acc {
						if v := get(x[i]); v < acc[i] || math.IsNaN(acc[i]) {
							acc[i] = v
						}
					}
				case Max:
					for i := range acc {
						if v := get(x[i]); v > acc[i] || math.IsNaN(acc[i]) {
							acc[i] = v
						}
					}
				}
			}
			o := out[:e-b]
			for i, v := range acc {
				o[i] = put(v)
			}
			for _, d := range dsts {
				copy(d[b:e], o)
			}
		}
	})
}
