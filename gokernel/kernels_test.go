package gokernel_test

import (
	_ "embed"
	"math"

	"github.com/go-gpu/gpu/kern"
)

// The kernels the tests compile: this file's source is embedded for the GPU, and its
// functions run on the CPU.

//go:embed kernels_test.go
var kernelsSrc string

func Saxpy(t kern.Thread, a float32, x, y []float32) {
	if i := t.Index(); i < len(y) {
		y[i] = a*x[i] + y[i]
	}
}

// Copy copies src into dst, one element per thread, with no bound of its own: the
// checks do it (kernel/indexing_checked).
func Copy(t kern.Thread, dst, src []float32) {
	i := t.Index()
	dst[i] = src[i]
}

// Scale is generic over the float types.
func Scale[T kern.Float](t kern.Thread, a T, x []T) {
	for i := t.Index(); i < len(x); i += t.GridStride() {
		x[i] = scaleOne(a, x[i])
	}
}

func scaleOne[T kern.Float](a, v T) T { return a * v }

// Transpose transposes the rows x cols matrix in into out through a shared tile.
func Transpose(t kern.Thread, rows, cols int, in, out []float32) {
	const tile = 32
	buf := kern.Shared[float32](t, tile*(tile+1))
	bx, by := t.BlockIdx().X*tile, t.BlockIdx().Y*tile
	tx, ty := t.ThreadIdx().X, t.ThreadIdx().Y
	for j := ty; j < tile; j += t.BlockDim().Y {
		if r, c := by+j, bx+tx; r < rows && c < cols {
			buf[j*(tile+1)+tx] = in[r*cols+c]
		}
	}
	t.Sync()
	for j := ty; j < tile; j += t.BlockDim().Y {
		if r, c := bx+j, by+tx; r < cols && c < rows {
			out[r*rows+c] = buf[tx*(tile+1)+j]
		}
	}
}

// BlockSum adds x into sum[0]: a grid-stride loop, warp shuffles, a shared array of
// the warps' sums and one atomic per block.
func BlockSum(t kern.Thread, x []float32, sum []float32) {
	partial := kern.Shared[float32](t, 32)
	var s float32
	for i := t.Index(); i < len(x); i += t.GridStride() {
		s += x[i]
	}
	s = warpSum(t, s)
	if t.Lane() == 0 {
		partial[t.Warp()] = s
	}
	t.Sync()
	if t.Warp() == 0 {
		s = 0
		if t.Lane() < (t.BlockDim().X+31)/32 {
			s = partial[t.Lane()]
		}
		s = warpSum(t, s)
		if t.Lane() == 0 {
			kern.AtomicAdd(sum, 0, s)
		}
	}
}

func warpSum(t kern.Thread, s float32) float32 {
	for m := 16; m > 0; m /= 2 {
		s += kern.ShflXor(t, s, m)
	}
	return s
}

// Histogram counts x's values (in [0, 1)) into len(hist) bins, in shared memory
// first.
func Histogram(t kern.Thread, x []float32, hist []uint32) {
	local := kern.Shared[uint32](t, 256)
	for i := t.ThreadIdx().X; i < len(hist); i += t.BlockDim().X {
		local[i] = 0
	}
	t.Sync()
	nb := float32(len(hist))
	for i := t.Index(); i < len(x); i += t.GridStride() {
		b := int(x[i] * nb)
		kern.AtomicAdd(local, min(b, len(hist)-1), 1)
	}
	t.Sync()
	for i := t.ThreadIdx().X; i < len(hist); i += t.BlockDim().X {
		kern.AtomicAdd(hist, i, local[i])
	}
}

// Ops exercises Go's integer and float semantics.
func Ops(t kern.Thread, a, b []int32, u []uint8, f []float64, out []int64, fout []float64) {
	i := t.Index()
	if i >= len(a) {
		return
	}
	x, y := a[i], b[i]
	var r int64
	if y != 0 {
		r = int64(x/y) + int64(x%y)*3
	}
	r += int64(x<<uint(y&63)) ^ int64(x>>uint(y&63))
	v := u[i]
	v += uint8(x)
	v *= 3
	r += int64(v)
	switch {
	case x > y:
		r++
	case x == y:
		r += 2
	default:
		r += 3
	}
	out[i] = r
	g := f[i]
	fout[i] = math.Sqrt(math.Abs(g)) + math.Floor(g) - math.Trunc(g*3) + float64(float32(g)) + math.Max(g, 0.5)
}

// Fill8 writes the low byte of each thread's index (the launch over 2^31 and more
// elements).
func Fill8(t kern.Thread, out []uint8) {
	if i := t.Index(); i < len(out) {
		out[i] = uint8(i) ^ uint8(i>>31)
	}
}

// Scalars stores its scalar parameters into out (thread 0), for the tests of their
// conversions.
func Scalars(t kern.Thread, a uint8, b int32, c float32, d float64, out []float64) {
	if t.Index() == 0 && len(out) == 4 {
		out[0], out[1], out[2], out[3] = float64(a), float64(b), float64(c), d
	}
}

// FillUintptr sets x to float32(n): a kernel with a uintptr scalar parameter.
func FillUintptr(t kern.Thread, x []float32, n uintptr) {
	if i := t.Index(); i < len(x) {
		x[i] = float32(n)
	}
}
