package gokernel_test

import (
	_ "embed"

	"github.com/go-gpu/gpu/kern"
)

// The kernels of the vector-access tests (vector_test.go): consecutive elements of
// one slice read or written in one statement, which the compiler moves in one
// vector access where the address is aligned, one by one where it is not.

//go:embed veckernels_test.go
var vecSrc string

// VecMove moves x[off:] to y[off:] in runs of four consecutive elements per
// thread, permuted and changed so that each value lands in a known place: off = 1
// puts every run off the vector alignment.
func VecMove[T kern.Number](t kern.Thread, off int, x, y []T) {
	xs, ys := x[off:], y[off:]
	i := 4 * t.Index()
	if i+3 < len(xs) && i+3 < len(ys) {
		a, b, c, d := xs[i], xs[i+1], xs[i+2], xs[i+3]
		ys[i], ys[i+1], ys[i+2], ys[i+3] = d*2, c+1, b, a
	} else {
		for j := i; j < len(ys) && j < len(xs); j++ {
			ys[j] = xs[j] + 3
		}
	}
}

// VecMixed reads pairs through an int32 index and constant indices, a run of five
// (a group of four and one alone, or of two, two and one), and stores a run of three
// of eight-byte elements (a pair and one alone), beside other operands.
func VecMixed(t kern.Thread, x []int32, y []float64, out []float64) {
	i := int32(t.Index())
	k := int(i)
	if int(2*i+1) >= len(x) || 3*k+2 >= len(out) {
		return
	}
	p, q := x[2*i], x[2*i+1]
	u, v := y[0], y[1]
	a, b, c, d, e := x[0], x[1], x[2], x[3], x[4]
	out[3*k], out[3*k+1], out[3*k+2] = float64(p)+u, float64(q)*v, u-v+float64(a-b+c-d+e)
	// Decreasing and repeated indices are not consecutive: each goes alone.
	out[3*k+1], out[3*k] = out[3*k], out[3*k+1]
	out[3*k+2], out[3*k+2] = 1, out[3*k+2]+float64(x[2*i+1]-x[2*i])
}

// VecFault reads a run of four from x at base in thread at: Go's first failing
// index is the one reported (mode 0: 64-bit indices, 1: int32).
func VecFault(t kern.Thread, mode, at, base int, x, out []int32) {
	i := t.Index()
	if i >= len(out) {
		return
	}
	out[i] = 1
	if i != at {
		return
	}
	switch mode {
	case 0:
		a, b, c, d := x[base], x[base+1], x[base+2], x[base+3]
		out[i] = a + b + c + d
	case 1:
		j := int32(base)
		a, b, c, d := x[j], x[j+1], x[j+2], x[j+3]
		out[i] = a + b + c + d
	}
}
