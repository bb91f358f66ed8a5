package main

import (
	_ "embed"

	"github.com/go-gpu/gpu/kern"
)

// The kernels of suite_gokernels.go, written in Go (package gokernel compiles this
// file's source for CUDA; the CPU backend runs the functions).

//go:embed gokernels.go
var goKernelsSrc string

// Indexing is kernel/indexing: dest[i] = src[i], one thread per element. Compiled with
// Go's bounds checks it is kernel/indexing_checked; Kernel.Unchecked drops them.
func Indexing(t kern.Thread, dest, src []float32) {
	i := t.Index()
	dest[i] = src[i]
}

// Rand is kernel/rand: dest[i] = the upper 24 bits of the first word of
// Philox2x32-10 (Salmon et al., SC 2011) of the counter (i, ctr) under key, times
// 2^-24.
func Rand(t kern.Thread, dest []float32, key, ctr uint32) {
	i := t.Index()
	x0, x1 := uint32(i), ctr
	for range 10 {
		p := uint64(x0) * 0xD256D193
		x0, x1 = uint32(p>>32)^x1^key, uint32(p)
		key += 0x9E3779B9
	}
	dest[i] = float32(x0>>8) * (1.0 / (1 << 24))
}

// Add is integration/byval/reference: y = x1 + x2 for i < n.
func Add(t kern.Thread, n int, x1, x2, y []float32) {
	if i := t.Index(); i < n {
		y[i] = x1[i] + x2[i]
	}
}

// AddSlices1 to AddSlices3 are integration/byval/slices=k: block row j adds slice
// j, the slices passed by value (a slice parameter is its pointer and length).
func AddSlices1(t kern.Thread, n int, a1, b1, y1 []float32) {
	if i := t.Index(); i < n {
		y1[i] = a1[i] + b1[i]
	}
}

func AddSlices2(t kern.Thread, n int, a1, a2, b1, b2, y1, y2 []float32) {
	i := t.Index()
	if i >= n {
		return
	}
	a, b, y := a1, b1, y1
	if t.BlockIdx().Y == 1 {
		a, b, y = a2, b2, y2
	}
	y[i] = a[i] + b[i]
}

func AddSlices3(t kern.Thread, n int, a1, a2, a3, b1, b2, b3, y1, y2, y3 []float32) {
	i := t.Index()
	if i >= n {
		return
	}
	a, b, y := a1, b1, y1
	switch t.BlockIdx().Y {
	case 1:
		a, b, y = a2, b2, y2
	case 2:
		a, b, y = a3, b3, y3
	}
	y[i] = a[i] + b[i]
}

// AddMatVec is integration/metaldevrt: block j adds x2[j] to the m elements of row
// j of x1, through a call of addOne (inlined: calls in Go kernels are).
func AddMatVec(t kern.Thread, m int, x1, x2, y []float32) {
	j := t.BlockIdx().X
	c := x2[j]
	row := j * m
	for i := t.ThreadIdx().X; i < m; i += t.BlockDim().X {
		y[row+i] = addOne(x1[row+i], c)
	}
}

func addOne(a, b float32) float32 { return a + b }

// Saxpy is gokernel/saxpy: y = a*x + y, written as a CUDA programmer writes a
// bandwidth-bound kernel with float4 accesses: a grid-stride loop over a grid of one
// wave of blocks, each thread taking two runs of four consecutive elements per
// iteration, four grid strides of elements apart. Four consecutive elements read or
// written in one statement are one 16-byte access (ld.global.v4.f32: the compiler
// groups them where the address is aligned), so each iteration has four 16-byte
// loads in flight (64 bytes a thread) before the first multiply, and two 16-byte
// stores. The last elements, past the end of a whole run, go one at a time.
func Saxpy(t kern.Thread, a float32, x, y []float32) {
	n := min(len(x), len(y))
	s := 4 * t.GridStride()
	for i := 4 * t.Index(); i < n; i += 2 * s {
		j := i + s
		if j+3 < n {
			x0, x1, x2, x3, x4, x5, x6, x7 := x[i], x[i+1], x[i+2], x[i+3], x[j], x[j+1], x[j+2], x[j+3]
			y0, y1, y2, y3, y4, y5, y6, y7 := y[i], y[i+1], y[i+2], y[i+3], y[j], y[j+1], y[j+2], y[j+3]
			y[i], y[i+1], y[i+2], y[i+3] = a*x0+y0, a*x1+y1, a*x2+y2, a*x3+y3
			y[j], y[j+1], y[j+2], y[j+3] = a*x4+y4, a*x5+y5, a*x6+y6, a*x7+y7
		} else {
			for k := i; k < min(i+4, n); k++ {
				y[k] = a*x[k] + y[k]
			}
			for k := j; k < min(j+4, n); k++ {
				y[k] = a*x[k] + y[k]
			}
		}
	}
}

// Transpose is gokernel/transpose: out (cols x rows) = in (rows x cols) transposed
// through a 64x64 shared tile (pitch 65: the pad column keeps the column reads at
// most two-way bank conflicted), as our Permute's tiled kernel does it: blocks of
// 16x16 threads, each thread moving sixteen elements, four rows of four consecutive
// elements. Each group of four consecutive elements in one statement is one
// 16-byte global access (the compiler groups them where the address is aligned):
// the thread's four loads are in flight together, before any is stored to the
// tile, and after the barrier it writes four 16-byte stores. Indices are int32 (a
// matrix of fewer than 2^31 elements); the thread's indices are masked to the block
// so that every index into the tile is proven in range. Blocks whose tile is not
// whole (the matrix's edges) go element by element with range tests.
func Transpose(t kern.Thread, rows, cols int32, in, out []float32) {
	const tile, step, pitch = 64, 16, 65
	buf := kern.Shared[float32](t, tile*pitch)
	tx, ty := 4*(int32(t.ThreadIdx().X)&(step-1)), int32(t.ThreadIdx().Y)&(step-1)
	bx, by := int32(t.BlockIdx().X)*tile, int32(t.BlockIdx().Y)*tile
	if by+tile <= rows && bx+tile <= cols {
		// Rows ty, ty+16, ty+32 and ty+48 of the tile, columns tx to tx+3.
		a := (by+ty)*cols + bx + tx
		b, c, d := a+step*cols, a+2*step*cols, a+3*step*cols
		sa := ty*pitch + tx
		sb, sc, sd := sa+step*pitch, sa+2*step*pitch, sa+3*step*pitch
		buf[sa], buf[sa+1], buf[sa+2], buf[sa+3],
			buf[sb], buf[sb+1], buf[sb+2], buf[sb+3],
			buf[sc], buf[sc+1], buf[sc+2], buf[sc+3],
			buf[sd], buf[sd+1], buf[sd+2], buf[sd+3] =
			in[a], in[a+1], in[a+2], in[a+3],
			in[b], in[b+1], in[b+2], in[b+3],
			in[c], in[c+1], in[c+2], in[c+3],
			in[d], in[d+1], in[d+2], in[d+3]
		t.Sync()
		// Output rows ty, ty+16, ty+32 and ty+48 of the block (the tile's columns),
		// columns tx to tx+3 (the tile's rows).
		oa := (bx+ty)*rows + by + tx
		ob, oc, od := oa+step*rows, oa+2*step*rows, oa+3*step*rows
		ta := tx*pitch + ty
		tb, tc, td := ta+step, ta+2*step, ta+3*step
		out[oa], out[oa+1], out[oa+2], out[oa+3],
			out[ob], out[ob+1], out[ob+2], out[ob+3],
			out[oc], out[oc+1], out[oc+2], out[oc+3],
			out[od], out[od+1], out[od+2], out[od+3] =
			buf[ta], buf[ta+pitch], buf[ta+2*pitch], buf[ta+3*pitch],
			buf[tb], buf[tb+pitch], buf[tb+2*pitch], buf[tb+3*pitch],
			buf[tc], buf[tc+pitch], buf[tc+2*pitch], buf[tc+3*pitch],
			buf[td], buf[td+pitch], buf[td+2*pitch], buf[td+3*pitch]
		return
	}
	// An edge block: each thread rows ty+16k of the tile, columns tx to tx+3.
	for k := int32(0); k < tile; k += step {
		for m := int32(0); m < 4; m++ {
			if r, c := by+ty+k, bx+tx+m; r < rows && c < cols {
				buf[(ty+k)*pitch+tx+m] = in[r*cols+c]
			}
		}
	}
	t.Sync()
	for k := int32(0); k < tile; k += step {
		for m := int32(0); m < 4; m++ {
			if r, c := bx+ty+k, by+tx+m; r < cols && c < rows {
				out[r*rows+c] = buf[(tx+m)*pitch+ty+k]
			}
		}
	}
}

// SaxpyV1 is gokernel/saxpy_v1, the first Saxpy (kept to time it beside the new one): y = a*x + y, written as a CUDA programmer writes a
// bandwidth-bound kernel: a grid-stride loop over a grid of one wave of blocks, each
// thread taking four elements a grid stride apart per iteration, their eight loads in
// one statement so that all are in flight before the first multiply (a statement's
// loads are issued first; across statements a check's branch would hold the next
// load back). The elements past the last whole group of four go one at a time.
func SaxpyV1(t kern.Thread, a float32, x, y []float32) {
	n, stride := len(y), t.GridStride()
	for i := t.Index(); i < n; i += 4 * stride {
		i1, i2, i3 := i+stride, i+2*stride, i+3*stride
		if i3 < len(x) && i3 < n {
			x0, x1, x2, x3, y0, y1, y2, y3 := x[i], x[i1], x[i2], x[i3], y[i], y[i1], y[i2], y[i3]
			y[i], y[i1], y[i2], y[i3] = a*x0+y0, a*x1+y1, a*x2+y2, a*x3+y3
		} else {
			for j := i; j < n; j += stride {
				y[j] = a*x[j] + y[j]
			}
		}
	}
}

// TransposeV1 is gokernel/transpose_v1, the first Transpose (kept to time it beside the
// new one): out (cols x rows) = in (rows x cols) transposed
// as CUDA's transpose sample does it: a 32x33 shared tile (the pad column keeps the
// column reads free of bank conflicts), blocks of 32x8 threads, each thread moving
// four elements, all four loads before the four stores. Indices are int32, the CUDA
// programmer's int (matrices of fewer than 2^31 elements): each check is one 32-bit
// compare and each address one multiply-add. The thread's indices are masked to
// the block's 32x8 (which it is): the compiler then proves every index into the
// tile in range and leaves those checks out, as Go's compiler does for masked
// indices. A block whose tile lies wholly inside the matrix (every block but the
// edges') skips the per-row range tests.
func TransposeV1(t kern.Thread, rows, cols int32, in, out []float32) {
	const tile, step, pitch = 32, 8, 33
	buf := kern.Shared[float32](t, tile*pitch)
	tx, ty := int32(t.ThreadIdx().X)&(tile-1), int32(t.ThreadIdx().Y)&(step-1)
	bx, by := int32(t.BlockIdx().X)*tile, int32(t.BlockIdx().Y)*tile
	whole := by+tile <= rows && bx+tile <= cols
	s := ty*pitch + tx
	r, c := by+ty, bx+tx
	if whole {
		i := r*cols + c
		buf[s], buf[s+step*pitch], buf[s+2*step*pitch], buf[s+3*step*pitch] = in[i], in[i+step*cols], in[i+2*step*cols], in[i+3*step*cols]
	} else if c < cols {
		for k := int32(0); k < tile; k += step {
			if r+k < rows {
				buf[s+k*pitch] = in[(r+k)*cols+c]
			}
		}
	}
	t.Sync()
	// Written once, a variable keeps what the compiler knows of its value.
	so := tx*pitch + ty
	ro, co := bx+ty, by+tx
	if whole {
		o := ro*rows + co
		out[o], out[o+step*rows], out[o+2*step*rows], out[o+3*step*rows] = buf[so], buf[so+step], buf[so+2*step], buf[so+3*step]
	} else if co < rows {
		for k := int32(0); k < tile; k += step {
			if ro+k < cols {
				out[(ro+k)*rows+co] = buf[so+k]
			}
		}
	}
}

// Sum is gokernel/sum: sum[0] += the elements of x, by a grid-stride loop in which
// each thread reads two runs of four consecutive elements (two 16-byte loads, both in
// flight before the first addition, as in Saxpy) into four independent sums, then
// warp shuffles, a shared array of the warps' sums and one atomic addition per block.
// Runs cut by the end of x go element by element.
func Sum(t kern.Thread, x, sum []float32) {
	partial := kern.Shared[float32](t, 32)
	var s0, s1, s2, s3 float32
	n := len(x)
	stride := 4 * t.GridStride()
	for i := 4 * t.Index(); i < n; i += 2 * stride {
		j := i + stride
		if j+3 < n {
			a0, a1, a2, a3, b0, b1, b2, b3 := x[i], x[i+1], x[i+2], x[i+3], x[j], x[j+1], x[j+2], x[j+3]
			s0, s1, s2, s3 = s0+(a0+b0), s1+(a1+b1), s2+(a2+b2), s3+(a3+b3)
		} else {
			for k := i; k < min(i+4, n); k++ {
				s0 += x[k]
			}
			for k := j; k < min(j+4, n); k++ {
				s1 += x[k]
			}
		}
	}
	s := (s0 + s1) + (s2 + s3)
	for m := 16; m > 0; m /= 2 {
		s += kern.ShflXor(t, s, m)
	}
	if t.Lane() == 0 {
		partial[t.Warp()] = s
	}
	t.Sync()
	if t.Warp() == 0 {
		s = 0
		if t.Lane() < t.BlockDim().X/32 {
			s = partial[t.Lane()]
		}
		for m := 16; m > 0; m /= 2 {
			s += kern.ShflXor(t, s, m)
		}
		if t.Lane() == 0 {
			kern.AtomicAdd(sum, 0, s)
		}
	}
}

// MulAdd1 is gokernel/func2's scalar function, x*y + 1: gokernel.NewFunc2 makes it
// an elementwise operation on arrays with broadcasting.
func MulAdd1(x, y float32) float32 { return x*y + 1 }
