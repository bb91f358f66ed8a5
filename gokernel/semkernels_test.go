package gokernel_test

import (
	_ "embed"
	"math"
	"math/bits"

	"github.com/go-gpu/gpu/kern"
)

// The kernels of the semantics tests: each construct of the subset, compared between
// the devices and Go itself (kern.Run over host slices).

//go:embed semkernels_test.go
var semSrc string

// IntOps computes every integer operator of a[i] and b[i] into out[16i:16i+16].
func IntOps[T kern.Integer](t kern.Thread, a, b, out []T) {
	i := t.Index()
	if i >= len(a) {
		return
	}
	x, y := a[i], b[i]
	o := out[16*i : 16*i+16]
	o[0] = x + y
	o[1] = x - y
	o[2] = x * y
	if y != 0 {
		o[3] = x / y
		o[4] = x % y
	}
	o[5] = x & y
	o[6] = x | y
	o[7] = x ^ y
	o[8] = x &^ y
	o[9] = -x
	o[10] = ^x
	o[11] = x << (uint(y) % 80)
	o[12] = x >> (uint(y) % 80)
	var c T
	if x < y {
		c |= 1
	}
	if x <= y {
		c |= 2
	}
	if x == y {
		c |= 4
	}
	if x != y {
		c |= 8
	}
	if x > y && x >= y {
		c |= 16
	}
	o[13] = c
	o[14] = min(x, y) + max(x, y, 3)
	x++
	y--
	x *= 3
	y <<= 1
	o[15] = x + y
}

// Shifts shifts by counts of another type, past the width included.
func Shifts[T, U kern.Integer](t kern.Thread, a []T, s []U, out []T) {
	i := t.Index()
	if i < len(a) && s[i] >= 0 {
		out[2*i] = a[i] << s[i]
		out[2*i+1] = a[i] >> s[i]
	}
}

// Convert converts between two number types.
func Convert[F, T kern.Number](t kern.Thread, a []F, out []T) {
	if i := t.Index(); i < len(a) {
		out[i] = T(a[i])
	}
}

// FloatOps computes float operators and math functions of a[i] and b[i].
func FloatOps[T kern.Float](t kern.Thread, a, b, out []T) {
	i := t.Index()
	if i >= len(a) {
		return
	}
	x, y := a[i], b[i]
	o := out[24*i : 24*i+24]
	o[0] = x + y
	o[1] = x - y
	o[2] = x * y
	o[3] = x / y
	o[4] = -x
	var c T
	if x < y {
		c += 1
	}
	if x <= y {
		c += 2
	}
	if x == y {
		c += 4
	}
	if x != y {
		c += 8
	}
	if !(x >= y) {
		c += 16
	}
	o[5] = c
	o[6] = min(x, y)
	o[7] = max(x, y)
	o[8] = T(math.Sqrt(math.Abs(float64(x))))
	o[9] = T(math.Floor(float64(x)) + math.Ceil(float64(y)))
	o[10] = T(math.Trunc(float64(x)) - math.Round(float64(y)))
	o[11] = T(math.RoundToEven(float64(x * 4)))
	o[12] = T(math.Copysign(float64(x), float64(y)))
	o[13] = T(math.Max(float64(x), float64(y)) - math.Min(float64(x), float64(y)))
	o[14] = T(math.FMA(float64(x), float64(y), 1))
	o[15] = T(math.Mod(float64(x), float64(y)))
	o[16] = kern.Exp(x) + kern.Log(absOf(y))
	o[17] = kern.Sin(x) * kern.Cos(y)
	o[18] = kern.Pow(absOf(x), y)
	o[19] = kern.Atan2(x, y) + kern.Tanh(x)
	o[20] = kern.Sqrt(absOf(x)) + kern.FMA(x, y, x)
	o[21] = T(math.Float64frombits(math.Float64bits(float64(x)) ^ 1))
	if math.IsNaN(float64(x)) || math.IsInf(float64(y), 0) || math.Signbit(float64(x)) {
		o[22] = 1
	}
	o[23] = T(math.Inf(1)) + T(float32(x))
}

// absOf is |x|, an inlined generic helper.
func absOf[T kern.Float](x T) T {
	if x < 0 {
		return -x
	}
	return x
}

// ControlFlow exercises loops, labels, switch and inlined calls with several results.
func ControlFlow(t kern.Thread, a []int32, out []int64) {
	i := t.Index()
	if i >= len(a) {
		return
	}
	x := a[i]
	var acc int64
outer:
	for j := int32(0); j < 10; j++ {
		for k := range 5 {
			if k == int(j%3) {
				continue outer
			}
			if j*int32(k) > x%50 {
				break outer
			}
			acc += int64(j) * int64(k)
		}
	}
	switch x % 7 {
	case 0, 1:
		acc += 100
	case 2:
		acc -= 50
		if x > 0 {
			break
		}
		acc *= 2
	default:
		acc ^= 0x55
	}
	q, r := divmod(int64(x), 7)
	acc += q*1000 + r
	for j := range a[:min(len(a), 4)] {
		acc += int64(a[j] & 1)
	}
	for _, v := range a[:min(len(a), 3)] {
		acc += int64(v >> 20)
	}
	n := 0
	for {
		n++
		if n > int(x&15) {
			break
		}
	}
	out[i] = acc + int64(n)
}

func divmod(a, b int64) (q, r int64) {
	q = a / b
	r = a - q*b
	if r < 0 {
		r += b
		q--
		return
	}
	return q, r
}

// Bits exercises math/bits.
func Bits(t kern.Thread, a []uint64, b []uint32, out []int64) {
	i := t.Index()
	if i >= len(a) {
		return
	}
	x, y := a[i], b[i]
	o := out[8*i : 8*i+8]
	o[0] = int64(bits.OnesCount64(x) + bits.OnesCount32(y))
	o[1] = int64(bits.LeadingZeros64(x)*100 + bits.LeadingZeros32(y))
	o[2] = int64(bits.TrailingZeros64(x)*100 + bits.TrailingZeros32(y))
	o[3] = int64(bits.Len64(x)*100 + bits.Len32(y))
	o[4] = int64(bits.RotateLeft64(x, int(y%130)-65))
	o[5] = int64(bits.RotateLeft32(y, int(x%70)-35))
	o[6] = int64(bits.Reverse64(x))
	o[7] = int64(bits.Reverse32(y)) + int64(bits.Len(uint(x)))
}

// WarpOps records the warp operations' results of every thread.
func WarpOps(t kern.Thread, out []int64) {
	tid := t.ThreadIdx()
	i := tid.X + t.BlockDim().X*(tid.Y+t.BlockDim().Y*tid.Z) + t.BlockIdx().X*t.BlockDim().Size()
	v := int64(i*10 + 1)
	f := float64(i) / 4
	o := out[8*i : 8*i+8]
	o[0] = kern.ShflXor(t, v, 5)
	o[1] = kern.ShflDown(t, v, 3)
	o[2] = kern.ShflUp(t, v, 2)
	o[3] = kern.Shfl(t, v, i%40)
	o[4] = int64(t.Ballot(i%3 == 0))
	o[5] = int64(kern.ShflXor(t, f, t.Lane()%7))
	o[6] = int64(kern.ShflDown(t, int8(i), 1)) + 1000*kern.ShflDown(t, v, i%5-2) + 100000*kern.ShflUp(t, v, 33-i%3) + 1000000*kern.ShflXor(t, v, i%40-4)
	if t.All(i < 1000) && t.Any(i%32 == 0) {
		o[7] = 1
	}
	t.SyncWarp()
}

// Reverse reverses each block's part of x through shared memory.
func Reverse(t kern.Thread, x []int32) {
	buf := kern.Shared[int32](t, 1024)
	n := t.BlockDim().X
	i, j := t.ThreadIdx().X, t.Index()
	if j < len(x) {
		buf[i] = x[j]
	}
	t.Sync()
	base := t.BlockIdx().X * n
	if k := base + n - 1 - i; j < len(x) && k < len(x) {
		x[j] = buf[n-1-i]
	}
}

// SyncAfterExit rotates each block's part of x by one through shared memory, after
// the threads past x's end have returned: they release the block's barriers (PTX's
// rule for exit). Thread fail fails a check before the barrier and exits too.
func SyncAfterExit(t kern.Thread, fail int, x []int32) {
	buf := kern.Shared[int32](t, 128)
	i, j := t.ThreadIdx().X, t.Index()
	if j >= len(x) {
		return
	}
	v := x[j]
	if j == fail {
		v = x[len(x)+j] // out of range
	}
	buf[i] = v
	t.Sync()
	base := t.BlockIdx().X * t.BlockDim().X
	if k := (i + 1) % t.BlockDim().X; base+k < len(x) {
		v = buf[k]
	}
	t.Sync()
	x[j] = v
}

// blockBuf returns a block's shared array of 64 T: one per element type, so a call
// for int32 and one for float64 are two arrays, and two calls for one type the same.
func blockBuf[T kern.Number](t kern.Thread) []T { return kern.Shared[T](t, 64) }

// SharedHelper reverses each block's part of x and of y (blocks of up to 64 threads)
// through blockBuf's arrays, storing through one call's slice and loading through
// another's.
func SharedHelper(t kern.Thread, x []int32, y []float64) {
	i, j := t.ThreadIdx().X, t.Index()
	if j < len(x) {
		blockBuf[int32](t)[i] = x[j]
		blockBuf[float64](t)[i] = y[j]
	}
	t.Sync()
	bx, by := blockBuf[int32](t), blockBuf[float64](t)
	n := t.BlockDim().X
	if k := t.BlockIdx().X*n + n - 1 - i; j < len(x) && k < len(x) {
		x[j], y[j] = bx[n-1-i], by[n-1-i]
	}
}

// Atomics hammers a few addresses of global and shared memory from every thread.
func Atomics(t kern.Thread, gi []int32, gu []uint64, gf []float32, gd []float64, flags []uint32) {
	si := kern.Shared[int32](t, 4)
	if t.ThreadIdx().X < 4 {
		si[t.ThreadIdx().X] = 0
	}
	t.Sync()
	i := t.Index()
	v := int32(i%97) - 40
	kern.AtomicAdd(gi, 0, v)
	kern.AtomicMin(gi, 1, v)
	kern.AtomicMax(gi, 2, v)
	kern.AtomicXor(gi, 3, v)
	kern.AtomicAdd(si, 0, 1)
	kern.AtomicMax(si, 1, v)
	kern.AtomicOr(gu, 0, uint64(1)<<(i%64))
	kern.AtomicAnd(gu, 1, ^(uint64(1) << (i % 64)))
	kern.AtomicAdd(gu, 2, uint64(i))
	kern.AtomicAdd(gf, 0, float32(v))
	kern.AtomicMin(gf, 1, float32(v)/4)
	kern.AtomicMax(gd, 0, float64(v)/8)
	kern.AtomicAdd(gd, 1, 0.5)
	if kern.AtomicCAS(flags, 0, 0, uint32(i+1)) == 0 {
		kern.AtomicAdd(flags, 1, 1)
	}
	old := kern.AtomicExch(flags, 2, uint32(i))
	kern.AtomicAdd(flags, 3, old-old+1)
	t.Sync()
	if t.ThreadIdx().X == 0 {
		kern.AtomicAdd(gi, 4, si[0])
		kern.AtomicMax(gi, 5, si[1])
		kern.AtomicStore(flags, 4, kern.AtomicLoad(flags, 1))
	}
}

// Failures fails in one of several ways, picked by mode, in thread at.
func Failures(t kern.Thread, mode, at int, x []int32, out []int32) {
	i := t.Index()
	if i >= len(out) {
		return
	}
	out[i] = 1
	if i != at {
		return
	}
	var d int32
	switch mode {
	case 0:
		out[i] = x[i-at-1] // index -1
	case 1:
		out[i] = x[len(x)] // one past the end
	case 2:
		s := x[2:at]
		out[i] = s[0]
	case 3:
		s := x[:len(x)+1]
		out[i] = s[0]
	case 4:
		out[i] = x[0] / d
	case 5:
		out[i] = x[0] << (d - 1)
	case 6:
		panic("mode 6")
	case 7:
		s := x[1 : 3 : len(x)+2]
		out[i] = s[0]
	case 8:
		out[i] = x[0] % d
	case 9:
		var u uint
		s := x[u+3:]
		out[i] = s[len(s)+int(u)]
	case 10:
		out[i] = x[int32(i-at)-1] // a 32-bit index, -1
	case 11:
		out[i] = x[int32(len(x))] // a 32-bit index one past the end
	case 12:
		s := x[3:]
		out[i] = s[int16(len(s))] // a 16-bit index past a slice's end
	}
}

// TupleAssign checks a tuple assignment's two phases: the index operands on the
// left read the variables as they were before the statement, the stores go left to
// right, and slice elements swap.
func TupleAssign(t kern.Thread, a []int32, out []int32) {
	i := t.Index()
	if i >= len(a) {
		return
	}
	j := 3 * i
	j, out[j] = j+1, a[i]      // out[3i] = a[i], then j = 3i+1
	out[j], j = a[i]*2, j+1    // out[3i+1] = 2a[i], j = 3i+2
	out[j], out[j] = 7, a[i]-5 // the later store wins
	out[j-2], out[j-1] = out[j-1], out[j-2]
	a[i], out[j] = a[i]+out[j], a[i]
}
