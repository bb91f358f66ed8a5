package main

import (
	"slices"

	"github.com/go-gpu/gpu"
)

// The random group, Metal.jl's array/random/..., on vectors of the matrix's
// 512000 elements (/16k: side^2), from a gpu.Generator (Philox4x32-10):
//
//   - rand/Float32: gpu.Rand[float32], a new vector uniform in [0, 1);
//   - rand/Int64: gpu.RandBits[int64], a new vector of full-range integers
//     (Julia's rand(Int64));
//   - rand!/Float32 and rand!/Int64: gpu.RandInto and gpu.RandBitsInto, in
//     place;
//   - randn/Float32 and randn!/Float32: gpu.RandN and gpu.RandNInto (Metal.jl
//     has no Int64 randn).
//
// Bytes: the output.
func registerRandom() {
	for _, large := range []bool{false, true} {
		registerRand("rand/Float32", large, 4, func(s *gpu.Stream, g *gpu.Generator, n int) error {
			a, err := gpu.Rand[float32](s, g, n)
			return freeing(err, a)
		})
		registerRand("rand/Int64", large, 8, func(s *gpu.Stream, g *gpu.Generator, n int) error {
			a, err := gpu.RandBits[int64](s, g, n)
			return freeing(err, a)
		})
		registerRandInto[float32]("rand!/Float32", large, gpu.RandInto[float32])
		registerRandInto[int64]("rand!/Int64", large, gpu.RandBitsInto[int64])
		registerRand("randn/Float32", large, 4, func(s *gpu.Stream, g *gpu.Generator, n int) error {
			a, err := gpu.RandN[float32](s, g, n)
			return freeing(err, a)
		})
		registerRandInto[float32]("randn!/Float32", large, gpu.RandNInto[float32])
	}
}

// registerRand registers a generator that makes a new vector of n elements of
// size bytes each.
func registerRand(name string, large bool, size int64, call func(s *gpu.Stream, g *gpu.Generator, n int) error) {
	registerOp(op{
		name: "array/random/" + name, large: large, bytes: size * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			n := elems(c.matShape())
			s, g := c.s(), c.g
			return func() error { return call(s, g, n) }, size * int64(n), nil
		},
	})
}

// registerRandInto registers a generator that fills a vector in place.
func registerRandInto[T float32 | int64](name string, large bool, fill func(s *gpu.Stream, g *gpu.Generator, a *gpu.Array[T]) error) {
	size := sizeOf[T]()
	registerOp(op{
		name: "array/random/" + name, large: large, bytes: size * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			n := elems(c.matShape())
			rot, err := rotation(c.sets(size*int64(n)), func() (*gpu.Array[T], error) { return fixture[T](c, devMem, n) })
			if err != nil {
				return nil, 0, err
			}
			s, g := c.s(), c.g
			return func() error { return fill(s, g, rot.Next()) }, size * int64(n), nil
		},
	})
}

// The permutedims group, Metal.jl's permutedims(x, perm) of its matrix
// reshaped: 2d (2,1) of the (1000, 512) matrix; 3d (3,1,2) of Julia's
// (512, 40, 25), our (25, 40, 512); 4d (2,1,4,3) of Julia's (512, 10, 10, 10),
// our (10, 10, 10, 512). A Julia permutation p of an n-d array is our
// gpu.Permute with axes[j] = n - p[n-1-j]: (1, 0), (1, 2, 0), (1, 0, 3, 2).
// At /16k the arrays have side^2 elements: (side, side), (a, b, side) and
// (a, b, c, side) with a*b = a*b*c = side as even as the factors allow (the
// peers' (128, 128, 16384) and (32, 32, 16, 16384) at side 16384). Bytes: read
// and written, 8 per element.

// permutation is one of Metal.jl's permutedims benchmarks.
type permutation struct {
	name  string
	axes  []int // gpu.Permute's axes
	small []int // the shape at Metal.jl's size
}

var permutations = []permutation{
	{"2d", []int{1, 0}, []int{matRows, matCols}},
	{"3d", []int{1, 2, 0}, []int{25, 40, matCols}},
	{"4d", []int{1, 0, 3, 2}, []int{10, 10, 10, matCols}},
}

// largeShape returns the /16k shape of a permutation of rank r: the leading
// r-1 dimensions multiply to side, the last is side.
func largeShape(rank, side int) []int {
	return append(balancedFactors(side, rank-1), side)
}

// balancedFactors splits n into k factors whose product is n, as equal as the
// prime factors allow, largest first: 16384 into 3 is (32, 32, 16).
func balancedFactors(n, k int) []int {
	out := make([]int, k)
	for i := range out {
		out[i] = 1
	}
	var primes []int
	for p, m := 2, n; m > 1; {
		switch {
		case p*p > m:
			primes, m = append(primes, m), 1
		case m%p == 0:
			primes, m = append(primes, p), m/p
		default:
			p++
		}
	}
	// Largest primes first, each to the smallest factor so far.
	for i := len(primes) - 1; i >= 0; i-- {
		j := 0
		for l := range out {
			if out[l] < out[j] {
				j = l
			}
		}
		out[j] *= primes[i]
	}
	slices.Sort(out)
	slices.Reverse(out)
	return out
}

func registerPermutations() {
	for _, large := range []bool{false, true} {
		for _, p := range permutations {
			registerOp(op{
				name: "array/permutedims/" + p.name, large: large, bytes: 8 * nominalElems(large),
				setup: func(c *setupCtx) (func() error, int64, error) {
					shape := p.small
					if c.large {
						shape = largeShape(len(p.axes), c.side)
					}
					n := int64(elems(shape))
					rot, err := rotation(c.sets(4*n), func() (*gpu.Array[float32], error) { return uniform(c, devMem, shape...) })
					if err != nil {
						return nil, 0, err
					}
					s := c.s()
					return func() error {
						out, err := gpu.Permute(s, rot.Next(), p.axes...)
						return freeing(err, out)
					}, 8 * n, nil
				},
			})
		}
	}
}
