package main

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
)

// The kernel and integration suites: Metal.jl's hand-written kernels
// (perf/kernel.jl, perf/byval.jl, perf/metaldevrt.jl), written here as a user
// of the library would write them: PTX text loaded with Device.LoadModule on
// CUDA, and the same kernels as Go functions (gpu.NewGoFunction) on the CPU
// backend, which has no PTX. They are launched with Stream.Launch, arrays as
// arguments, and each benchmark checks its kernel's output once in Setup
// (output poisoned first) before timing it.
//
//   - kernel/indexing: dest[i] = src[i], i = blockIdx.x*blockDim.x +
//     threadIdx.x, no bounds check, 512 threads per block and 1000 blocks
//     (Metal.jl's threads=size(src,1) groups=size(src,2) of its 512x1000
//     matrix). kernel/indexing_checked: the same with the bound i < n
//     checked (Julia's bounds check, the peers' if). Bytes: read and written.
//   - kernel/rand: dest[i] = a uniform float32 in [0, 1) that each thread
//     draws itself (Julia's device-side rand(Float32)): Philox2x32-10 (Salmon
//     et al., SC 2011) of the counter (i, launch number) under a 32-bit key,
//     the upper 24 bits of the first word scaled by 2^-24. Same geometry.
//     Bytes: written.
//   - At /16k the same kernels over side^2 elements, 512 threads per block
//     (the arrays padded to whole blocks when side^2 is not a multiple of 512).
//
// Metal.jl's integration benchmarks, at its size (a 3072x1536 Julia matrix,
// our (1536, 3072), 4718592 float32 elements), host clock around the launch
// and a synchronize (Metal.@sync), Metal.jl's 256 threads per block:
//
//   - integration/byval/reference: y = x1 + x2 by a kernel taking n and the
//     three arrays as pointer arguments (tracked by the library).
//   - integration/byval/slices=k (k = 1, 2, 3): y_j = x1_j + x2_j for k
//     slices j in one launch of a grid of (n/256, k) blocks, block row j adding
//     slice j. Metal.jl passes the 3k arrays by value (vararg of device array
//     structs) and the kernel picks its three with ternaries; here one
//     by-value argument (gpu.ByValue) holds n and 3k {pointer, length} slices,
//     and the kernel selects with selp. The pointers come from Buffer.Access
//     scopes around the launch (the documented way to put raw device addresses
//     in an argument: each scope orders its buffer as a launch argument
//     would), so every call pays 3k access scopes besides the launch. On the
//     CPU the Go function also gets the 3k pointers as DevicePtr arguments (a
//     Go kernel cannot dereference raw addresses) and checks they are the
//     struct's. Bytes: 12 per element per slice.
//   - integration/metaldevrt: Metal.jl's test of its device runtime, a kernel
//     adding a vector to every column of a matrix (y[:, j] = x1[:, j] + x2[j],
//     one block per column of 3072 contiguous elements, 256 threads striding
//     along it). Ours does every element through a call of a separate device
//     function (a PTX .func called with call.uni, which ptxas keeps as a call;
//     on the CPU a Go function marked noinline): the cost of calling into
//     device-side library code. Bytes: x1 and y, and x2 once.
//
// peers/peers.py runs the same kernels (CUDA C through CuPy's RawModule,
// Philox included) under the same names.

// indexBlock is the block size of the kernel benchmarks (Metal.jl's
// threads=size(src,1) of its 512x1000 matrix).
const indexBlock = 512

// randSeed is kernel/rand's key.
const randSeed = 0x5eed1234

// Philox2x32 constants (Random123).
const (
	philoxM = 0xD256D193
	philoxW = 0x9E3779B9
)

// philoxRound is one Philox2x32 round on x0 = %r4, x1 = %r5, key = %r6.
const philoxRound = `	mul.hi.u32 %r7, %r4, 0xD256D193;
	mul.lo.u32 %r8, %r4, 0xD256D193;
	xor.b32 %r4, %r7, %r5;
	xor.b32 %r4, %r4, %r6;
	mov.b32 %r5, %r8;
	add.u32 %r6, %r6, 0x9E3779B9;
`

// userPTX is the module of the kernel benchmarks, the byval reference and
// metaldevrt. Pointers are used as global addresses, as the library's own
// kernels do.
var userPTX = `
.version 7.0
.target sm_50
.address_size 64

// dest[i] = src[i], i = ctaid.x*ntid.x + tid.x, no bounds check.
.visible .entry copy_unchecked(.param .u64 dest, .param .u64 src)
{
	.reg .u32 %r<4>;
	.reg .u64 %rd<8>;
	.reg .f32 %f<2>;
	ld.param.u64 %rd1, [dest];
	ld.param.u64 %rd2, [src];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mul.wide.u32 %rd3, %r1, %r2;
	cvt.u64.u32 %rd4, %r3;
	add.u64 %rd3, %rd3, %rd4;
	shl.b64 %rd3, %rd3, 2;
	add.u64 %rd5, %rd2, %rd3;
	ld.global.f32 %f1, [%rd5];
	add.u64 %rd6, %rd1, %rd3;
	st.global.f32 [%rd6], %f1;
	ret;
}

// The same for i < n only.
.visible .entry copy_checked(.param .u64 dest, .param .u64 src, .param .u64 n)
{
	.reg .pred %p<2>;
	.reg .u32 %r<4>;
	.reg .u64 %rd<8>;
	.reg .f32 %f<2>;
	ld.param.u64 %rd1, [dest];
	ld.param.u64 %rd2, [src];
	ld.param.u64 %rd7, [n];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mul.wide.u32 %rd3, %r1, %r2;
	cvt.u64.u32 %rd4, %r3;
	add.u64 %rd3, %rd3, %rd4;
	setp.ge.u64 %p1, %rd3, %rd7;
	@%p1 bra DONE;
	shl.b64 %rd3, %rd3, 2;
	add.u64 %rd5, %rd2, %rd3;
	ld.global.f32 %f1, [%rd5];
	add.u64 %rd6, %rd1, %rd3;
	st.global.f32 [%rd6], %f1;
DONE:
	ret;
}

// dest[i] = uniform [0, 1) from Philox2x32-10 of the counter (i, ctr) under key seed.
.visible .entry rand_f32(.param .u64 dest, .param .u32 seed, .param .u32 ctr)
{
	.reg .u32 %r<10>;
	.reg .u64 %rd<4>;
	.reg .f32 %f<2>;
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mad.lo.u32 %r4, %r1, %r2, %r3;
	ld.param.u32 %r5, [ctr];
	ld.param.u32 %r6, [seed];
` + strings.Repeat(philoxRound, 10) + `	shr.u32 %r4, %r4, 8;
	cvt.rn.f32.u32 %f1, %r4;
	mul.rn.f32 %f1, %f1, 0f33800000;
	mul.wide.u32 %rd1, %r1, %r2;
	cvt.u64.u32 %rd2, %r3;
	add.u64 %rd1, %rd1, %rd2;
	shl.b64 %rd1, %rd1, 2;
	ld.param.u64 %rd2, [dest];
	add.u64 %rd2, %rd2, %rd1;
	st.global.f32 [%rd2], %f1;
	ret;
}

// y[i] = x1[i] + x2[i] for i < n (integration/byval/reference).
.visible .entry add_f32(.param .u64 n, .param .u64 x1, .param .u64 x2, .param .u64 y)
{
	.reg .pred %p<2>;
	.reg .u32 %r<4>;
	.reg .u64 %rd<12>;
	.reg .f32 %f<4>;
	ld.param.u64 %rd1, [n];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %ntid.x;
	mov.u32 %r3, %tid.x;
	mul.wide.u32 %rd2, %r1, %r2;
	cvt.u64.u32 %rd3, %r3;
	add.u64 %rd2, %rd2, %rd3;
	setp.ge.u64 %p1, %rd2, %rd1;
	@%p1 bra DONE;
	shl.b64 %rd2, %rd2, 2;
	ld.param.u64 %rd4, [x1];
	add.u64 %rd4, %rd4, %rd2;
	ld.global.f32 %f1, [%rd4];
	ld.param.u64 %rd5, [x2];
	add.u64 %rd5, %rd5, %rd2;
	ld.global.f32 %f2, [%rd5];
	add.rn.f32 %f3, %f1, %f2;
	ld.param.u64 %rd6, [y];
	add.u64 %rd6, %rd6, %rd2;
	st.global.f32 [%rd6], %f3;
DONE:
	ret;
}

// The device function of integration/metaldevrt.
.func (.param .f32 r) addf(.param .f32 a, .param .f32 b)
{
	.reg .f32 %f<4>;
	ld.param.f32 %f1, [a];
	ld.param.f32 %f2, [b];
	add.rn.f32 %f3, %f1, %f2;
	st.param.f32 [r], %f3;
	ret;
}

// Block j: y[j*m + i] = addf(x1[j*m + i], x2[j]) for i = tid.x, tid.x + ntid.x, ... < m.
.visible .entry add_mat_vec(.param .u64 m, .param .u64 x1, .param .u64 x2, .param .u64 y)
{
	.reg .pred %p<2>;
	.reg .u32 %r<4>;
	.reg .u64 %rd<14>;
	.reg .f32 %f<4>;
	ld.param.u64 %rd1, [m];
	ld.param.u64 %rd2, [x1];
	ld.param.u64 %rd3, [x2];
	ld.param.u64 %rd4, [y];
	mov.u32 %r1, %ctaid.x;
	mov.u32 %r2, %tid.x;
	mov.u32 %r3, %ntid.x;
	mul.wide.u32 %rd5, %r1, 4;
	add.u64 %rd5, %rd3, %rd5;
	ld.global.f32 %f1, [%rd5];
	cvt.u64.u32 %rd6, %r1;
	mul.lo.u64 %rd6, %rd6, %rd1;
	shl.b64 %rd6, %rd6, 2;
	add.u64 %rd7, %rd2, %rd6;
	add.u64 %rd8, %rd4, %rd6;
	cvt.u64.u32 %rd9, %r2;
	cvt.u64.u32 %rd10, %r3;
LOOP:
	setp.ge.u64 %p1, %rd9, %rd1;
	@%p1 bra DONE;
	shl.b64 %rd11, %rd9, 2;
	add.u64 %rd12, %rd7, %rd11;
	ld.global.f32 %f2, [%rd12];
	{
	.param .f32 a0;
	st.param.f32 [a0], %f2;
	.param .f32 a1;
	st.param.f32 [a1], %f1;
	.param .f32 r0;
	call.uni (r0), addf, (a0, a1);
	ld.param.f32 %f3, [r0];
	}
	add.u64 %rd13, %rd8, %rd11;
	st.global.f32 [%rd13], %f3;
	add.u64 %rd9, %rd9, %rd10;
	bra LOOP;
DONE:
	ret;
}
`

// maxSlices is the most slices of integration/byval.
const maxSlices = 3

// devSlice is one array "slice" passed by value: its device address and
// length (the fields of Julia's device array that the kernel needs).
type devSlice struct {
	Ptr gpu.DevicePtr
	Len uint64
}

// byvalArgs is the by-value argument of add_slices<k>: the element count n,
// then k slices of x1, k of x2 and k of y. Its first byvalSize(k) bytes have
// the layout of the C struct {uint64_t n; slice x1[k], x2[k], y[k];}, which is
// what the kernel for k slices takes.
type byvalArgs struct {
	N      uint64
	Slices [3 * maxSlices]devSlice
}

// byvalSize is the size of add_slices<k>'s argument.
func byvalSize(k int) int { return 8 + 3*k*16 }

// byvalOffset returns the offset in add_slices<k>'s argument of the pointer of
// slice j of array a (0: x1, 1: x2, 2: y).
func byvalOffset(k, a, j int) int { return 8 + 16*(a*k+j) }

// byvalPTX returns the module of add_slices1 ... add_slices<maxSlices>: for k
// slices, y_j[i] = x1_j[i] + x2_j[i] for i < n, j = ctaid.y, reading the
// pointers from one by-value argument.
func byvalPTX() string {
	var b strings.Builder
	b.WriteString(".version 7.0\n.target sm_50\n.address_size 64\n")
	for k := 1; k <= maxSlices; k++ {
		fmt.Fprintf(&b, `
.visible .entry add_slices%d(.param .align 8 .b8 args[%d])
{
	.reg .pred %%p<2>;
	.reg .u32 %%r<6>;
	.reg .u64 %%rd<10>;
	.reg .f32 %%f<4>;
	ld.param.u64 %%rd1, [args];
	mov.u32 %%r1, %%ctaid.x;
	mov.u32 %%r2, %%ntid.x;
	mov.u32 %%r3, %%tid.x;
	mul.wide.u32 %%rd2, %%r1, %%r2;
	cvt.u64.u32 %%rd3, %%r3;
	add.u64 %%rd2, %%rd2, %%rd3;
	setp.ge.u64 %%p1, %%rd2, %%rd1;
	@%%p1 bra DONE;
	mov.u32 %%r4, %%ctaid.y;
	ld.param.u64 %%rd4, [args+%d];
	ld.param.u64 %%rd5, [args+%d];
	ld.param.u64 %%rd6, [args+%d];
`, k, byvalSize(k), byvalOffset(k, 0, 0), byvalOffset(k, 1, 0), byvalOffset(k, 2, 0))
		for j := 1; j < k; j++ {
			fmt.Fprintf(&b, "\tsetp.eq.u32 %%p1, %%r4, %d;\n", j)
			for a, r := range []string{"%rd4", "%rd5", "%rd6"} {
				fmt.Fprintf(&b, "\tld.param.u64 %%rd7, [args+%d];\n\tselp.b64 %s, %%rd7, %s, %%p1;\n", byvalOffset(k, a, j), r, r)
			}
		}
		b.WriteString(`	shl.b64 %rd2, %rd2, 2;
	add.u64 %rd8, %rd4, %rd2;
	ld.global.f32 %f1, [%rd8];
	add.u64 %rd8, %rd5, %rd2;
	ld.global.f32 %f2, [%rd8];
	add.rn.f32 %f3, %f1, %f2;
	add.u64 %rd8, %rd6, %rd2;
	st.global.f32 [%rd8], %f3;
DONE:
	ret;
}
`)
	}
	return b.String()
}

// userKernels are the kernels of one device.
type userKernels struct {
	copyUnchecked, copyChecked, rand, add, addMatVec *gpu.Function
	slices                                           [maxSlices + 1]*gpu.Function
	// goFuncs: the CPU backend's Go functions (the byval ones take the
	// slices' pointers again as DevicePtr arguments).
	goFuncs bool
}

var userKernelCache struct {
	sync.Mutex
	m map[*gpu.Device]*userKernels
}

// kernelsOf returns d's kernels, loading them once per device.
func kernelsOf(d *device) (*userKernels, error) {
	userKernelCache.Lock()
	defer userKernelCache.Unlock()
	if k := userKernelCache.m[d.dev]; k != nil {
		return k, nil
	}
	var k *userKernels
	var err error
	if d.backend == "cpu" {
		k, err = goKernels(d.dev)
	} else {
		k, err = ptxKernels(d.dev)
	}
	if err != nil {
		return nil, err
	}
	if userKernelCache.m == nil {
		userKernelCache.m = map[*gpu.Device]*userKernels{}
	}
	userKernelCache.m[d.dev] = k
	return k, nil
}

func ptxKernels(dev *gpu.Device) (*userKernels, error) {
	m, err := dev.LoadModule([]byte(userPTX))
	if err != nil {
		return nil, fmt.Errorf("loading the kernel benchmarks' PTX: %w", err)
	}
	mb, err := dev.LoadModule([]byte(byvalPTX()))
	if err != nil {
		return nil, errors.Join(fmt.Errorf("loading the byval kernels' PTX: %w", err), m.Unload())
	}
	k := &userKernels{}
	fns := []struct {
		m    *gpu.Module
		name string
		f    **gpu.Function
	}{
		{m, "copy_unchecked", &k.copyUnchecked}, {m, "copy_checked", &k.copyChecked}, {m, "rand_f32", &k.rand},
		{m, "add_f32", &k.add}, {m, "add_mat_vec", &k.addMatVec},
	}
	for j := 1; j <= maxSlices; j++ {
		fns = append(fns, struct {
			m    *gpu.Module
			name string
			f    **gpu.Function
		}{mb, fmt.Sprintf("add_slices%d", j), &k.slices[j]})
	}
	for _, f := range fns {
		if *f.f, err = f.m.Function(f.name); err != nil {
			return nil, errors.Join(err, m.Unload(), mb.Unload())
		}
	}
	return k, nil
}

func goKernels(dev *gpu.Device) (*userKernels, error) {
	k := &userKernels{goFuncs: true}
	fns := []struct {
		name string
		fn   func(*cpu.Launch) error
		f    **gpu.Function
	}{
		{"copy_unchecked", goCopy(false), &k.copyUnchecked},
		{"copy_checked", goCopy(true), &k.copyChecked},
		{"rand_f32", goRand, &k.rand},
		{"add_f32", goAdd, &k.add},
		{"add_mat_vec", goAddMatVec, &k.addMatVec},
	}
	for j := 1; j <= maxSlices; j++ {
		fns = append(fns, struct {
			name string
			fn   func(*cpu.Launch) error
			f    **gpu.Function
		}{fmt.Sprintf("add_slices%d", j), goAddSlices(j), &k.slices[j]})
	}
	for _, f := range fns {
		var err error
		if *f.f, err = gpu.NewGoFunction(dev, f.name, f.fn); err != nil {
			return nil, err
		}
	}
	return k, nil
}

// threads returns a launch's thread count along x.
func threads(l *cpu.Launch) int { return int(l.Grid[0]) * int(l.Block[0]) }

// f32s returns argument i as n float32s, or an error like a GPU's fault.
func f32s(l *cpu.Launch, i, n int) ([]float32, error) {
	s := cpu.Slice[float32](l.Mem(i))
	if len(s) < n {
		return nil, fmt.Errorf("illegal address: argument %d has %d elements, the kernel touches %d", i, len(s), n)
	}
	return s[:n], nil
}

// goCopy is copy_unchecked (every thread copies its element) or copy_checked.
func goCopy(checked bool) func(*cpu.Launch) error {
	return func(l *cpu.Launch) error {
		n := threads(l)
		if checked {
			n = int(min(uint64(n), l.Uint64(2)))
		}
		dst, err := f32s(l, 0, n)
		if err != nil {
			return err
		}
		src, err := f32s(l, 1, n)
		if err != nil {
			return err
		}
		l.Parallel(n, 1<<14, func(lo, hi int) { copy(dst[lo:hi], src[lo:hi]) })
		return nil
	}
}

// philox2x32 is Philox2x32-10 of the counter (x0, x1) under key.
func philox2x32(x0, x1, key uint32) (uint32, uint32) {
	for range 10 {
		p := uint64(x0) * philoxM
		x0, x1 = uint32(p>>32)^x1^key, uint32(p)
		key += philoxW
	}
	return x0, x1
}

// philoxUniform is rand_f32's number for thread i: the upper 24 bits of the
// first word of Philox2x32-10 of (i, ctr) under seed, times 2^-24.
func philoxUniform(i, ctr, seed uint32) float32 {
	x0, _ := philox2x32(i, ctr, seed)
	return float32(x0>>8) * (1.0 / (1 << 24))
}

func goRand(l *cpu.Launch) error {
	n := threads(l)
	dst, err := f32s(l, 0, n)
	if err != nil {
		return err
	}
	seed, ctr := l.Uint32(1), l.Uint32(2)
	l.Parallel(n, 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			dst[i] = philoxUniform(uint32(i), ctr, seed)
		}
	})
	return nil
}

// addN runs y[i] = x1[i] + x2[i] for i < n over arguments a, a+1, a+2.
func addN(l *cpu.Launch, n int, x1i, x2i, yi int) error {
	x1, err := f32s(l, x1i, n)
	if err != nil {
		return err
	}
	x2, err := f32s(l, x2i, n)
	if err != nil {
		return err
	}
	y, err := f32s(l, yi, n)
	if err != nil {
		return err
	}
	l.Parallel(n, 1<<14, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			y[i] = x1[i] + x2[i]
		}
	})
	return nil
}

func goAdd(l *cpu.Launch) error {
	return addN(l, int(min(uint64(threads(l)), l.Uint64(0))), 1, 2, 3)
}

// goAddSlices is add_slices<k>: argument 0 is the by-value struct, 1 ... 3k
// the same pointers as DevicePtr arguments (x1s, x2s, ys).
func goAddSlices(k int) func(*cpu.Launch) error {
	return func(l *cpu.Launch) error {
		blob := l.Blob(0)
		if len(blob) != byvalSize(k) || len(l.Args) != 1+3*k || int(l.Grid[1]) > k {
			return fmt.Errorf("add_slices%d: a %d-byte argument, %d arguments, grid %v", k, len(blob), len(l.Args), l.Grid)
		}
		n := int(min(uint64(threads(l)), binary.LittleEndian.Uint64(blob)))
		for j := range int(max(1, l.Grid[1])) {
			for a := range 3 {
				arg := 1 + a*k + j
				if p := binary.LittleEndian.Uint64(blob[byvalOffset(k, a, j):]); p != l.Args[arg].Val {
					return fmt.Errorf("add_slices%d: slice %d of array %d points at %#x, the argument at %#x", k, j, a, p, l.Args[arg].Val)
				}
			}
			if err := addN(l, n, 1+j, 1+k+j, 1+2*k+j); err != nil {
				return err
			}
		}
		return nil
	}
}

// addf is metaldevrt's device function.
//
//go:noinline
func addf(a, b float32) float32 { return a + b }

func goAddMatVec(l *cpu.Launch) error {
	m, cols := int(l.Uint64(0)), int(l.Grid[0])
	x1, err := f32s(l, 1, m*cols)
	if err != nil {
		return err
	}
	x2, err := f32s(l, 2, cols)
	if err != nil {
		return err
	}
	y, err := f32s(l, 3, m*cols)
	if err != nil {
		return err
	}
	l.Parallel(cols, 1, func(lo, hi int) {
		for j := lo; j < hi; j++ {
			for i := j * m; i < (j+1)*m; i++ {
				y[i] = addf(x1[i], x2[j])
			}
		}
	})
	return nil
}

// poison fills a with NaN, so that a check finds every element a kernel did
// not write.
func poison(s *gpu.Stream, a *gpu.Array[float32]) error {
	return gpu.Fill(s, a, float32(math.NaN()))
}

// checkNone fails unless the predicate src over vars holds for no element.
func checkNone(s *gpu.Stream, what, src string, vars gpu.Vars) error {
	n, err := countWhere(s, src, vars)
	if err != nil {
		return err
	}
	if n != 0 {
		return fmt.Errorf("%s: %d elements wrong (%s)", what, n, src)
	}
	return nil
}

// registerKernels registers kernel/indexing, kernel/indexing_checked and
// kernel/rand at both sizes, and the integration benchmarks.
func registerKernels() {
	for _, large := range []bool{false, true} {
		for _, checked := range []bool{false, true} {
			registerIndexing(checked, large)
		}
		registerKernelRand(large)
	}
	registerByval()
	registerDevrt()
}

// kernelGeometry returns the elements of a kernel benchmark, its launch (one
// thread per element, indexBlock threads per block) and the padded length of
// its arrays.
func kernelGeometry(c *setupCtx) (n int, cfg gpu.LaunchConfig, padded int) {
	n = elems(c.matShape())
	blocks := (n + indexBlock - 1) / indexBlock
	return n, gpu.LaunchConfig{Grid: gpu.Dim3{X: blocks}, Block: gpu.Dim3{X: indexBlock}}, blocks * indexBlock
}

func registerIndexing(checked, large bool) {
	name := "kernel/indexing"
	if checked {
		name += "_checked"
	}
	registerOp(op{
		name: name, large: large, bytes: 8 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			return setupIndexing(c, name, func(n int, cfg gpu.LaunchConfig) (func(dst, src *gpu.Array[float32]) error, error) {
				k, err := kernelsOf(c.d)
				if err != nil {
					return nil, err
				}
				s := c.s()
				if checked {
					return func(dst, src *gpu.Array[float32]) error {
						return s.Launch(k.copyChecked, cfg, gpu.Out(dst), gpu.In(src), uint64(n))
					}, nil
				}
				return func(dst, src *gpu.Array[float32]) error {
					return s.Launch(k.copyUnchecked, cfg, gpu.Out(dst), gpu.In(src))
				}, nil
			})
		},
	})
}

// The scaffolding of the kernel rows, shared by the PTX kernels here and the Go
// ones (suite_gokernels.go): the arrays, the geometry, the check of the output
// (poisoned first) before timing, and the timed call. Each takes mk, which makes
// the row's launch once its geometry is known.

// setupIndexing is kernel/indexing's setup: mk's launch copies src into dst, n
// elements of arrays padded to whole blocks (kernelGeometry).
func setupIndexing(c *setupCtx, name string, mk func(n int, cfg gpu.LaunchConfig) (func(dst, src *gpu.Array[float32]) error, error)) (func() error, int64, error) {
	n, cfg, padded := kernelGeometry(c)
	launch, err := mk(n, cfg)
	if err != nil {
		return nil, 0, err
	}
	type io struct{ src, dst *gpu.Array[float32] }
	rot, err := rotation(c.sets(8*int64(n)), func() (x io, err error) {
		if x.src, err = uniform(c, devMem, padded); err == nil {
			x.dst, err = newArr[float32](c, devMem, padded)
		}
		return x, err
	})
	if err != nil {
		return nil, 0, err
	}
	s := c.s()
	// Check: every element of dst copied.
	for _, x := range rot.Sets() {
		if err := poison(s, x.dst); err != nil {
			return nil, 0, err
		}
		if err := launch(x.dst, x.src); err != nil {
			return nil, 0, err
		}
		dst, err := x.dst.Slice(gpu.R(0, n))
		if err != nil {
			return nil, 0, err
		}
		src, err := x.src.Slice(gpu.R(0, n))
		if err != nil {
			return nil, 0, err
		}
		if err := checkNone(s, name, "d != s", gpu.Vars{"d": dst, "s": src}); err != nil {
			return nil, 0, err
		}
	}
	return func() error { x := rot.Next(); return launch(x.dst, x.src) }, 8 * int64(n), nil
}

// setupRand is kernel/rand's setup: mk's launch fills dst with launch number
// ctr's uniforms (philoxUniform), one a thread.
func setupRand(c *setupCtx, name string, mk func(cfg gpu.LaunchConfig) (func(dst *gpu.Array[float32], ctr uint32) error, error)) (func() error, int64, error) {
	n, cfg, padded := kernelGeometry(c)
	fill, err := mk(cfg)
	if err != nil {
		return nil, 0, err
	}
	rot, err := rotation(c.sets(4*int64(n)), func() (*gpu.Array[float32], error) { return newArr[float32](c, devMem, padded) })
	if err != nil {
		return nil, 0, err
	}
	s := c.s()
	var ctr uint32
	launch := func(dst *gpu.Array[float32]) error {
		ctr++
		return fill(dst, ctr)
	}
	// Check: every element in [0, 1), a few against the Go mirror.
	dst := rot.Sets()[0]
	if err := poison(s, dst); err != nil {
		return nil, 0, err
	}
	if err := launch(dst); err != nil {
		return nil, 0, err
	}
	if err := checkNone(s, name, "!(x >= 0 && x < 1)", gpu.Vars{"x": dst}); err != nil {
		return nil, 0, err
	}
	for _, i := range []int{0, 1, indexBlock, padded - 1} {
		v, err := dst.At(bg, i)
		if err != nil {
			return nil, 0, err
		}
		if want := philoxUniform(uint32(i), ctr, randSeed); v != want {
			return nil, 0, fmt.Errorf("%s: element %d is %v, want %v", name, i, v, want)
		}
	}
	return func() error { return launch(rot.Next()) }, 4 * int64(n), nil
}

// setupByval is integration/byval's setup for k slices (0: the reference, one
// slice): arrs holds the k slices of x1, of x2 and of y (intRows x intCols each),
// and mk's launch computes y_j = x1_j + x2_j.
func setupByval(c *setupCtx, name string, k int, mk func(arrs []*gpu.Array[float32], cfg gpu.LaunchConfig) (func() error, error)) (func() error, int64, error) {
	slices := max(k, 1)
	arrs := make([]*gpu.Array[float32], 3*slices)
	for i := range arrs {
		var err error
		if i < 2*slices {
			arrs[i], err = uniform(c, devMem, intRows, intCols)
		} else {
			arrs[i], err = newArr[float32](c, devMem, intRows, intCols)
		}
		if err != nil {
			return nil, 0, err
		}
	}
	launch, err := mk(arrs, integrationConfig(slices))
	if err != nil {
		return nil, 0, err
	}
	s := c.s()
	// Check: y_j = x1_j + x2_j everywhere.
	for j := range slices {
		if err := poison(s, arrs[2*slices+j]); err != nil {
			return nil, 0, err
		}
	}
	if err := launch(); err != nil {
		return nil, 0, err
	}
	for j := range slices {
		vars := gpu.Vars{"a": arrs[j], "b": arrs[slices+j], "y": arrs[2*slices+j]}
		if err := checkNone(s, fmt.Sprintf("%s, slice %d", name, j), "y != a + b", vars); err != nil {
			return nil, 0, err
		}
	}
	return launch, 12 * intElems * int64(slices), nil
}

// devrtBytes is integration/metaldevrt's traffic: x1 and y, and x2 once.
const devrtBytes = 4 * (2*intElems + intRows)

// setupDevrt is integration/metaldevrt's setup: mk's launch, one block a row of
// intBlock threads, computes y = x1 + x2 (x2 a column broadcast along the rows).
func setupDevrt(c *setupCtx, name string, mk func(x1, x2, y *gpu.Array[float32], cfg gpu.LaunchConfig) (func() error, error)) (func() error, int64, error) {
	x1, err := uniform(c, devMem, intRows, intCols)
	if err != nil {
		return nil, 0, err
	}
	x2, err := uniform(c, devMem, intRows, 1)
	if err != nil {
		return nil, 0, err
	}
	y, err := newArr[float32](c, devMem, intRows, intCols)
	if err != nil {
		return nil, 0, err
	}
	launch, err := mk(x1, x2, y, gpu.LaunchConfig{Grid: gpu.Dim3{X: intRows}, Block: gpu.Dim3{X: intBlock}})
	if err != nil {
		return nil, 0, err
	}
	s := c.s()
	if err := poison(s, y); err != nil {
		return nil, 0, err
	}
	if err := launch(); err != nil {
		return nil, 0, err
	}
	if err := checkNone(s, name, "y != a + b", gpu.Vars{"a": x1, "b": x2, "y": y}); err != nil {
		return nil, 0, err
	}
	return launch, devrtBytes, nil
}

func registerKernelRand(large bool) {
	registerOp(op{
		name: "kernel/rand", large: large, bytes: 4 * nominalElems(large),
		setup: func(c *setupCtx) (func() error, int64, error) {
			return setupRand(c, "kernel/rand", func(cfg gpu.LaunchConfig) (func(*gpu.Array[float32], uint32) error, error) {
				k, err := kernelsOf(c.d)
				if err != nil {
					return nil, err
				}
				s := c.s()
				return func(dst *gpu.Array[float32], ctr uint32) error {
					return s.Launch(k.rand, cfg, gpu.Out(dst), uint32(randSeed), ctr)
				}, nil
			})
		},
	})
}

// Metal.jl's integration fixture: a 3072x1536 Julia matrix.
const (
	intRows, intCols = 1536, 3072
	intElems         = intRows * intCols
	intBlock         = 256
)

// integrationConfig is the launch of the byval kernels: one thread per element
// of a slice, grid rows for slices.
func integrationConfig(slices int) gpu.LaunchConfig {
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: (intElems + intBlock - 1) / intBlock, Y: slices}, Block: gpu.Dim3{X: intBlock}}
}

// withAccess runs f inside Buffer.Access scopes of every buffer, with their
// device addresses in ptrs.
func withAccess(s *gpu.Stream, bufs []*gpu.Buffer, modes []gpu.AccessMode, ptrs []gpu.DevicePtr, f func() error) error {
	if len(bufs) == 0 {
		return f()
	}
	return bufs[0].Access(s, modes[0], func(p gpu.DevicePtr) error {
		ptrs[0] = p
		return withAccess(s, bufs[1:], modes[1:], ptrs[1:], f)
	})
}

// registerByval registers integration/byval/reference and slices=1..3.
func registerByval() {
	for k := 0; k <= maxSlices; k++ {
		name := "integration/byval/reference"
		if k > 0 {
			name = fmt.Sprintf("integration/byval/slices=%d", k)
		}
		registerOp(op{
			name: name, bytes: 12 * intElems * int64(max(k, 1)),
			setup: func(c *setupCtx) (func() error, int64, error) {
				return setupByval(c, name, k, func(arrs []*gpu.Array[float32], cfg gpu.LaunchConfig) (func() error, error) {
					kern, err := kernelsOf(c.d)
					if err != nil {
						return nil, err
					}
					s := c.s()
					if k == 0 {
						return func() error {
							return s.Launch(kern.add, cfg, uint64(intElems), gpu.In(arrs[0]), gpu.In(arrs[1]), gpu.Out(arrs[2]))
						}, nil
					}
					fn := kern.slices[k]
					bufs := make([]*gpu.Buffer, len(arrs))
					modes := make([]gpu.AccessMode, len(arrs))
					for i, a := range arrs {
						bufs[i], modes[i] = a.Buffer(), gpu.Read
						if i >= 2*k {
							modes[i] = gpu.Write
						}
					}
					ptrs := make([]gpu.DevicePtr, len(arrs))
					args := make([]any, 1, 1+len(arrs))
					call := func() error {
						a := byvalArgs{N: intElems}
						for i, p := range ptrs {
							a.Slices[i] = devSlice{Ptr: p, Len: intElems}
						}
						args = append(args[:0], gpu.ByValue(a)[:byvalSize(k)])
						if kern.goFuncs {
							for _, p := range ptrs {
								args = append(args, p)
							}
						}
						return s.Launch(fn, cfg, args...)
					}
					return func() error { return withAccess(s, bufs, modes, ptrs, call) }, nil
				})
			},
		})
	}
}

// registerDevrt registers integration/metaldevrt.
func registerDevrt() {
	registerOp(op{
		name: "integration/metaldevrt", bytes: devrtBytes,
		setup: func(c *setupCtx) (func() error, int64, error) {
			return setupDevrt(c, "integration/metaldevrt", func(x1, x2, y *gpu.Array[float32], cfg gpu.LaunchConfig) (func() error, error) {
				kern, err := kernelsOf(c.d)
				if err != nil {
					return nil, err
				}
				s := c.s()
				return func() error {
					return s.Launch(kern.addMatVec, cfg, uint64(intCols), gpu.In(x1), gpu.In(x2), gpu.Out(y))
				}, nil
			})
		},
	})
}
