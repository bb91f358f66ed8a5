package random

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// PTXVersion is the PTX ISA version the kernels declare: package ptx's, DefaultVersion
// (CUDA 11.8 and later drivers; the first with sm_90).
const PTXVersion = ptx.DefaultVersion

// Kernel is the PTX source of one kernel that fills n contiguous elements of a request.
//
// Parameters, each .u64, in order (Spec.Args builds them): out (device address of element
// 0; aligned to the element size; 16-byte alignment enables vector stores), n (elements),
// seed, offset (the counter of the request's block 0) and, for Range, lo and hi (two's
// complement; the int32 kernel reads their low 32 bits; the caller guarantees lo < hi).
//
// Each thread takes Philox blocks b = ctaid.x*ntid.x + tid.x, then b + ntid.x*nctaid.x, ...
// (a grid-stride loop) while b < Blocks(n); block b yields elements b*E .. b*E+E-1
// (E = ElemsPerBlock; the normal float16 and bfloat16 kernels instead take 16-byte units
// b < ceil(n/8) of 8 elements, from blocks 2b and 2b+1), 16 bytes, written with one
// 16-byte st.global.v4.b32/.f32 or
// v2.b64/.f64 when the block is whole and out is 16-byte aligned, else element by element
// with a bounds check. The normal float32 kernel, and the uniform float16 and bfloat16
// kernels of Options.HalfUniform 3, first do the blocks [0, lim), lim =
// 64*floor(F/64) with F = floor(n/E) the whole blocks, when out is 16-byte aligned and
// the grid has W >= 1 groups of 32 threads (thread g = ctaid.x*ntid.x + tid.x is lane
// g%32 of group g/32; a last partial group sits this part out): group w takes chunks
// q = w, w+W, ... of 64 blocks, its lane l blocks 64q+l and 64q+32+l (two blocks in flight
// per thread; each of the two vector stores of a group writes 512 contiguous bytes); then
// the grid-stride loop above does blocks lim+g, lim+g+threads, ... Any grid computes the
// same output. Recommended launch: 256 threads per block and min(ceil(Blocks(n)/256),
// 8*SMs) blocks (8 resident 256-thread blocks per SM on sm_90 when the kernel uses at most
// 32 registers, as every kernel does there; the kernels with two blocks in flight a
// thread declare .maxnreg 32 from sm_75 on). The 32-bit variant (Index64 false) needs
// n < 2^31 and at most 2^31 threads in the grid; the 64-bit variant has no limit. The float64 normal kernel's module
// also declares a .const table of its polynomial coefficients.
type Kernel struct {
	Spec    Spec
	Index64 bool
	Target  string // e.g. "sm_90"
	Name    string // the .entry name
	PTX     string // a complete module: .version, .target, .address_size 64, one .entry
}

// Options are the kernel choices that change how fast a kernel runs, never what it
// writes: every choice computes the same bytes. The zero value means the defaults.
type Options struct {
	// HalfUniform selects the uniform float16 and bfloat16 kernels:
	//   - 3 (the default): the packed transform of 2, and two blocks in flight a
	//     thread in the main loop (the normal float32 kernel's: see Kernel); ptxas 13
	//     for sm_90: 107 SASS instructions per 2 blocks of bfloat16, 115 of float16;
	//   - 2: packed integer construction, 3 SASS instructions for two float16 values
	//     and 2 for two bfloat16 values (halfUniformPacked), one block an iteration:
	//     58 instructions per block of bfloat16, 62 of float16;
	//   - 1: the first design, each value through float32 (shift, cvt.rn.f32.u32,
	//     mul.rn.f32 by a power of two, then cvt.rn.f16.f32 or the high 16 bits), about
	//     10 SASS instructions for two values: 84 per block of bfloat16, 82 of float16.
	// 2 and 3 need the packed half instructions (fma.rn.f16x2 from sm_53,
	// fma.rn.bf16x2 from sm_80); older GPUs get 1. The kernels of 1 and 2 have names
	// ending in _v1 and _v2.
	HalfUniform int
}

// halfUniform returns the HalfUniform variant a kernel for s on compute capability cc
// (major*10 + minor) uses, 0 for the other kernels.
func (o Options) halfUniform(s Spec, cc int) int {
	if s.Dist != Uniform || s.Type != dtype.Float16 && s.Type != dtype.BFloat16 {
		return 0
	}
	if o.HalfUniform == 1 || s.Type == dtype.Float16 && cc < 53 || s.Type == dtype.BFloat16 && cc < 80 {
		return 1
	}
	if o.HalfUniform == 2 {
		return 2
	}
	return 3
}

// Index64 reports whether a request of n elements needs the 64-bit index variant.
func Index64(n int64) bool { return n >= 1<<31 }

// Kernel returns the PTX kernel for s on a GPU of compute capability major.minor
// (.target ptx.TargetFor(major, minor); 5.0 or later), with 64-bit index arithmetic if index64.
// For Range the kernel does not depend on Lo and Hi (they are parameters, checked by
// the caller: Spec.Validate).
func (s Spec) Kernel(major, minor int, index64 bool) (Kernel, error) {
	if major < 5 || minor < 0 || minor > 9 {
		return Kernel{}, fmt.Errorf("random: unsupported compute capability %d.%d", major, minor)
	}
	return s.KernelOptions(major, minor, index64, Options{})
}

// KernelOptions is Kernel with the kernel choices o (the same output for every choice).
func (s Spec) KernelOptions(major, minor int, index64 bool, o Options) (Kernel, error) {
	if major < 5 || minor < 0 || minor > 9 {
		return Kernel{}, fmt.Errorf("random: unsupported compute capability %d.%d", major, minor)
	}
	return genKernelOptions(s, ptx.TargetFor(major, minor), index64, MaxRounds, o)
}

// KernelName returns the .entry name of s's kernel: random_<dist>_<type>_i32 or _i64.
func (s Spec) KernelName(index64 bool) string {
	ix := "i32"
	if index64 {
		ix = "i64"
	}
	return fmt.Sprintf("random_%v_%v_%s", s.Dist, s.Type, ix)
}

// KernelNameOptions returns the .entry name of s's kernel with the choices o on a GPU of
// compute capability major.minor: KernelName, with _v1 or _v2 appended for those
// uniform half kernels (Options.HalfUniform).
func (s Spec) KernelNameOptions(major, minor int, index64 bool, o Options) string {
	n := s.KernelName(index64)
	if v := o.halfUniform(s, 10*major+minor); v == 1 || v == 2 {
		n += fmt.Sprintf("_v%d", v)
	}
	return n
}

// asm collects the body of a kernel; registers are numbered per class and declared at
// the end (%p .pred, %r .b32, %rd .b64, %f .f32, %fd .f64, %h .b16).
type asm struct {
	b      strings.Builder
	counts map[string]int
	labels int
}

var regDecl = []struct{ class, typ string }{
	{"p", ".pred"}, {"h", ".b16"}, {"r", ".b32"}, {"rd", ".b64"}, {"f", ".f32"}, {"fd", ".f64"},
}

func (a *asm) reg(class string) string {
	i := a.counts[class]
	a.counts[class]++
	return fmt.Sprintf("%%%s%d", class, i)
}

func (a *asm) ins(format string, args ...any) {
	a.b.WriteString("\t")
	fmt.Fprintf(&a.b, format, args...)
	a.b.WriteString(";\n")
}

func (a *asm) newLabel(prefix string) string {
	a.labels++
	return fmt.Sprintf("$L_%s_%d", prefix, a.labels)
}

func (a *asm) label(l string) { a.b.WriteString(l + ":\n") }

// op emits "<op> d, args..." into a new register of class and returns it.
func (a *asm) op(class, op string, args ...string) string {
	d := a.reg(class)
	a.ins("%s %s, %s", op, d, strings.Join(args, ", "))
	return d
}

func f32imm(x float32) string { return fmt.Sprintf("0f%08X", math.Float32bits(x)) }
func f64imm(x float64) string { return fmt.Sprintf("0d%016X", math.Float64bits(x)) }
func imm(x uint64) string     { return fmt.Sprintf("%d", x) }
func hex(x uint64) string     { return fmt.Sprintf("0x%X", x) }

// xor3 emits x ^ y ^ z, where "0" stands for a known zero.
func (a *asm) xor3(x, y, z string) string {
	var nz []string
	for _, v := range []string{x, y, z} {
		if v != "0" {
			nz = append(nz, v)
		}
	}
	switch len(nz) {
	case 0:
		return "0"
	case 1:
		return nz[0]
	}
	r := a.op("r", "xor.b32", nz[0], nz[1])
	if len(nz) == 3 {
		r = a.op("r", "xor.b32", r, nz[2])
	}
	return r
}

// philox emits Philox4x32-10 of counter c (registers, or "0") under the round keys and
// returns the four output words.
func (a *asm) philox(c [4]string, keys [Rounds][2]string) [4]string {
	for i := 0; i < Rounds; i++ {
		lo0, hi0, lo1, hi1 := "0", "0", "0", "0"
		if c[0] != "0" {
			p := a.op("rd", "mul.wide.u32", c[0], hex(philoxM0))
			lo0, hi0 = a.reg("r"), a.reg("r")
			a.ins("mov.b64 {%s, %s}, %s", lo0, hi0, p)
		}
		if c[2] != "0" {
			p := a.op("rd", "mul.wide.u32", c[2], hex(philoxM1))
			lo1, hi1 = a.reg("r"), a.reg("r")
			a.ins("mov.b64 {%s, %s}, %s", lo1, hi1, p)
		}
		c = [4]string{a.xor3(hi1, c[1], keys[i][0]), lo1, a.xor3(hi0, c[3], keys[i][1]), lo0}
	}
	for i, v := range c { // materialize known zeros (only possible for odd inputs)
		if v == "0" {
			c[i] = a.op("r", "mov.b32", "0")
		}
	}
	return c
}

// output describes the 16 bytes of one block: regs in memory order, each of PTX type typ
// (b32 or f32: four regs; b64 or f64: two).
type output struct {
	regs []string
	typ  string
}

// kernelGen holds what the transforms need besides the words.
type kernelGen struct {
	a         *asm
	s         Spec
	keys      [Rounds][2]string
	ctrLo     string // counter words 0 and 1 of the current block
	ctrHi     string
	lo, r, t  string // Range: lo, range size, rejection threshold
	maxRounds uint32
	tabName   string   // the kernel's .const table of float64 constants
	tab       []uint64 // its values
	tabIdx    map[uint64]int
	// halfUniform is the uniform half kernel (Options.HalfUniform as it applies), and
	// packScale and packZero the registers of its packed constants (set before the loop).
	halfUniform         int
	packScale, packZero string
}

// d returns a register loaded with the float64 constant x from the kernel's .const table:
// ptxas turns the load into a constant-bank operand of the instruction that uses it,
// where a 64-bit immediate would cost two moves.
// (A constant whose low 32 bits are zero, such as a power of two, stays an immediate:
// SASS encodes those in the instruction.)
func (g *kernelGen) d(x float64) string {
	b := math.Float64bits(x)
	if uint32(b) == 0 {
		return f64imm(x)
	}
	i, ok := g.tabIdx[b]
	if !ok {
		if g.tabIdx == nil {
			g.tabIdx = map[uint64]int{}
		}
		i = len(g.tab)
		g.tab = append(g.tab, b)
		g.tabIdx[b] = i
	}
	return g.a.op("fd", "ld.const.f64", fmt.Sprintf("[%s+%d]", g.tabName, 8*i))
}

func (g *kernelGen) transform(w [4]string) output {
	a := g.a
	switch g.s.Dist {
	case Uniform:
		switch g.s.Type {
		case dtype.Float32:
			var o []string
			for _, x := range w {
				v := a.op("r", "shr.u32", x, "8")
				f := a.op("f", "cvt.rn.f32.u32", v)
				o = append(o, a.op("f", "mul.rn.f32", f, f32imm(0x1p-24)))
			}
			return output{o, "f32"}
		case dtype.Float64:
			var o []string
			for j := 0; j < 2; j++ {
				x := a.reg("rd")
				a.ins("mov.b64 %s, {%s, %s}", x, w[2*j], w[2*j+1])
				v := a.op("rd", "shr.u64", x, "11")
				f := a.op("fd", "cvt.rn.f64.u64", v)
				o = append(o, a.op("fd", "mul.rn.f64", f, f64imm(0x1p-53)))
			}
			return output{o, "f64"}
		case dtype.Float16, dtype.BFloat16:
			if g.halfUniform >= 2 {
				return g.halfUniformPacked(w)
			}
		}
		switch g.s.Type {
		case dtype.Float16:
			var o []string
			for _, x := range w {
				lo := a.op("r", "and.b32", x, "0xFFFF")
				lo = a.op("r", "shr.u32", lo, "5")
				hi := a.op("r", "shr.u32", x, "21")
				var hs [2]string
				for k, v := range []string{lo, hi} {
					f := a.op("f", "cvt.rn.f32.u32", v)
					f = a.op("f", "mul.rn.f32", f, f32imm(0x1p-11))
					hs[k] = a.op("h", "cvt.rn.f16.f32", f)
				}
				r := a.reg("r")
				a.ins("mov.b32 %s, {%s, %s}", r, hs[0], hs[1])
				o = append(o, r)
			}
			return output{o, "b32"}
		case dtype.BFloat16:
			var o []string
			for _, x := range w {
				lo := a.op("r", "and.b32", x, "0xFFFF")
				lo = a.op("r", "shr.u32", lo, "8")
				hi := a.op("r", "shr.u32", x, "24")
				var bs [2]string
				for k, v := range []string{lo, hi} {
					f := a.op("f", "cvt.rn.f32.u32", v)
					f = a.op("f", "mul.rn.f32", f, f32imm(0x1p-8))
					bs[k] = a.op("r", "mov.b32", f)
				}
				l := a.op("r", "shr.u32", bs[0], "16")
				h := a.op("r", "and.b32", bs[1], "0xFFFF0000")
				o = append(o, a.op("r", "or.b32", l, h))
			}
			return output{o, "b32"}
		}
	case Normal:
		switch g.s.Type {
		case dtype.Float32:
			z0, z1 := g.boxMuller32(w[0], w[1])
			z2, z3 := g.boxMuller32(w[2], w[3])
			return output{[]string{z0, z1, z2, z3}, "f32"}
		case dtype.Float64:
			x0, x1 := a.reg("rd"), a.reg("rd")
			a.ins("mov.b64 %s, {%s, %s}", x0, w[0], w[1])
			a.ins("mov.b64 %s, {%s, %s}", x1, w[2], w[3])
			z0, z1 := g.boxMuller64(x0, x1)
			return output{[]string{z0, z1}, "f64"}
		}
	case FullRange:
		switch g.s.Type.Size() {
		case 8:
			x0, x1 := a.reg("rd"), a.reg("rd")
			a.ins("mov.b64 %s, {%s, %s}", x0, w[0], w[1])
			a.ins("mov.b64 %s, {%s, %s}", x1, w[2], w[3])
			return output{[]string{x0, x1}, "b64"}
		}
		if g.s.Type == dtype.Bool {
			var o []string
			for _, x := range w {
				o = append(o, a.op("r", "and.b32", x, "0x01010101"))
			}
			return output{o, "b32"}
		}
		return output{w[:], "b32"}
	case Range:
		if g.s.Type == dtype.Int32 {
			return g.range32(w)
		}
		return g.range64(w)
	}
	panic("random: no transform for " + g.s.String())
}

// halfUniformConsts emits the constants of halfUniformPacked (before the loop), if the
// kernel uses it.
func (g *kernelGen) halfUniformConsts() {
	if g.halfUniform < 2 {
		return
	}
	scale := uint64(0x7000) // 2^13 in float16: exponent 13 + 15 = 28
	if g.s.Type == dtype.BFloat16 {
		scale = 0x7E00 // 2^125 in bfloat16: exponent 125 + 127 = 252
	}
	g.packScale = g.a.op("r", "mov.b32", hex(scale<<16|scale))
	g.packZero = g.a.op("r", "mov.b32", "0x80008000")
}

// halfUniformPacked emits the uniform float16 or bfloat16 values of the words w, two a
// word (UniformFloat16, UniformBFloat16: the value of the 16-bit half h is k * 2^-11 with
// k = h >> 5, or k * 2^-8 with k = h >> 8), by integer construction and one packed
// multiply a word. The bit pattern k (k < 2^11) read as a float16 is k * 2^-24: the
// subnormals and the lowest normal binade are evenly spaced (the patterns below 0x0400
// are the subnormals m * 2^-24, those from 0x0400 to 0x07FF are 2^-14 (1 + m 2^-10) =
// (2^10 + m) * 2^-24); likewise the pattern k < 2^8 read as a bfloat16 is k * 2^-133.
// So float16: x = (w >> 5) & 0x07FF07FF (k of both halves in place), then
// fma.rn.f16x2(x, 2^13, -0) = k * 2^-11; bfloat16: x = bytes 1 and 3 of w moved to
// bytes 0 and 2 (one prmt), then fma.rn.bf16x2(x, 2^125, -0) = k * 2^-8. Both products
// are exact (11 and 8 significant bits), as are the float32 products of UniformFloat16
// and UniformBFloat16, so the bits are the same; the half instructions keep subnormal
// operands (the PTX ISA's fma: no .ftz for bf16x2 and none given for f16x2). Adding -0
// leaves every product, +0 included, as it is.
func (g *kernelGen) halfUniformPacked(w [4]string) output {
	a := g.a
	ty := "f16x2"
	if g.s.Type == dtype.BFloat16 {
		ty = "bf16x2"
	}
	var o []string
	for _, x := range w {
		var k string
		if g.s.Type == dtype.Float16 {
			k = a.op("r", "and.b32", a.op("r", "shr.u32", x, "5"), "0x07FF07FF")
		} else {
			// prmt: result byte i is byte s_i of {b, a} (a's bytes 0-3, b's 4-7), the
			// selector's nibble i holding s_i: 1, 4 (a zero of b), 3, 4.
			k = a.op("r", "prmt.b32", x, "0", "0x4341")
		}
		o = append(o, a.op("r", "fma.rn."+ty, k, g.packScale, g.packZero))
	}
	return output{o, "b32"}
}

// range32 emits Lemire's method for four int32 elements, with the rare redraw loop.
func (g *kernelGen) range32(w [4]string) output {
	a := g.a
	var hi [4]string
	var rej [4]string
	for k := 0; k < 4; k++ {
		m := a.op("rd", "mul.wide.u32", w[k], g.r)
		lo := a.reg("r")
		hi[k] = a.reg("r")
		a.ins("mov.b64 {%s, %s}, %s", lo, hi[k], m)
		rej[k] = a.op("p", "setp.lt.u32", lo, g.t)
	}
	resume := g.redraw(rej[:], func(v [4]string, last string) {
		for k := 0; k < 4; k++ {
			m := a.op("rd", "mul.wide.u32", v[k], g.r)
			lo, h := a.reg("r"), a.reg("r")
			a.ins("mov.b64 {%s, %s}, %s", lo, h, m)
			a.ins("selp.b32 %s, %s, %s, %s", hi[k], h, hi[k], rej[k])
			q := a.op("p", "setp.lt.u32", lo, g.t)
			a.ins("and.pred %s, %s, %s", q, q, last)
			a.ins("and.pred %s, %s, %s", rej[k], rej[k], q)
		}
	})
	a.label(resume)
	var o []string
	for k := 0; k < 4; k++ {
		o = append(o, a.op("r", "add.u32", hi[k], g.lo))
	}
	return output{o, "b32"}
}

// range64 is range32 for two int64 elements.
func (g *kernelGen) range64(w [4]string) output {
	a := g.a
	var hi, rej [2]string
	pack := func(x, y string) string {
		d := a.reg("rd")
		a.ins("mov.b64 %s, {%s, %s}", d, x, y)
		return d
	}
	for k := 0; k < 2; k++ {
		x := pack(w[2*k], w[2*k+1])
		lo := a.op("rd", "mul.lo.u64", x, g.r)
		hi[k] = a.op("rd", "mul.hi.u64", x, g.r)
		rej[k] = a.op("p", "setp.lt.u64", lo, g.t)
	}
	resume := g.redraw(rej[:], func(v [4]string, last string) {
		for k := 0; k < 2; k++ {
			x := pack(v[2*k], v[2*k+1])
			lo := a.op("rd", "mul.lo.u64", x, g.r)
			h := a.op("rd", "mul.hi.u64", x, g.r)
			a.ins("selp.b64 %s, %s, %s, %s", hi[k], h, hi[k], rej[k])
			q := a.op("p", "setp.lt.u64", lo, g.t)
			a.ins("and.pred %s, %s, %s", q, q, last)
			a.ins("and.pred %s, %s, %s", rej[k], rej[k], q)
		}
	})
	a.label(resume)
	return output{[]string{a.op("rd", "add.u64", hi[0], g.lo), a.op("rd", "add.u64", hi[1], g.lo)}, "b64"}
}

// redraw emits: if any rej, loop over rounds 1, 2, ... computing the block (ctr, round)
// and calling body(words, notLast) until no element is rejected; notLast is false in
// round maxRounds-1, which accepts everything. It returns the label to place after.
func (g *kernelGen) redraw(rej []string, body func(v [4]string, notLast string)) string {
	a := g.a
	resume := a.newLabel("resume")
	loop := a.newLabel("redraw")
	anyRej := func() string {
		p := rej[0]
		for _, q := range rej[1:] {
			p = a.op("p", "or.pred", p, q)
		}
		return p
	}
	a.ins("@!%s bra.uni %s", anyRej(), resume)
	round := a.op("r", "mov.u32", "1")
	a.label(loop)
	v := a.philox([4]string{g.ctrLo, g.ctrHi, round, "0"}, g.keys)
	notLast := a.op("p", "setp.ne.u32", round, imm(uint64(g.maxRounds-1)))
	body(v, notLast)
	a.ins("add.u32 %s, %s, 1", round, round)
	a.ins("@%s bra %s", anyRej(), loop)
	return resume
}

// boxMuller32 emits boxMuller32 (fmath.go) step for step.
func (g *kernelGen) boxMuller32(w0, w1 string) (z0, z1 string) {
	a := g.a
	// Angle first: it does not depend on the radius, so it overlaps with the log.
	tf := a.op("f", "cvt.rn.f32.s32", w1)
	ts := a.op("f", "mul.rn.f32", tf, f32imm(angA32))
	y := a.op("f", "mul.rn.f32", ts, ts)
	n := len(sinpiCoef32)
	ps := a.op("f", "add.rn.f32", y, f32imm(sinpiCoef32[n-1]))
	pc := a.op("f", "add.rn.f32", y, f32imm(cospiCoef32[n-1]))
	for k := n - 2; k >= 0; k-- {
		ps = a.op("f", "fma.rn.f32", y, ps, f32imm(sinpiCoef32[k]))
		pc = a.op("f", "fma.rn.f32", y, pc, f32imm(cospiCoef32[k]))
	}
	sin := a.op("f", "mul.rn.f32", ts, ps)
	// Radius.
	k := a.op("r", "shl.b32", w0, "1")
	k = a.op("r", "or.b32", k, "1")
	x := a.op("f", "cvt.rn.f32.u32", k)
	xb := a.op("r", "mov.b32", x)
	e := a.op("r", "sub.u32", xb, hex(radSplit32))
	e = a.op("r", "shr.s32", e, "23")
	es := a.op("r", "shl.b32", e, "23")
	mb := a.op("r", "sub.u32", xb, es)
	m := a.op("f", "mov.b32", mb)
	f := a.op("f", "fma.rn.f32", m, f32imm(radSigK32), f32imm(radNegSig32))
	n = len(radCoef32)
	q := a.op("f", "add.rn.f32", f, f32imm(radCoef32[n-1]))
	for k := n - 2; k >= 0; k-- {
		q = a.op("f", "fma.rn.f32", f, q, f32imm(radCoef32[k]))
	}
	fq := a.op("f", "mul.rn.f32", f, q)
	ef := a.op("f", "cvt.rn.f32.s32", e)
	l := a.op("f", "fma.rn.f32", ef, f32imm(radLC32), fq)
	r := g.sqrt32(l)
	rb := a.op("r", "mov.b32", r)
	sg := a.op("r", "and.b32", w0, "0x80000000")
	rsb := a.op("r", "xor.b32", rb, sg)
	rs := a.op("f", "mov.b32", rsb)
	return a.op("f", "mul.rn.f32", rs, pc), a.op("f", "mul.rn.f32", r, sin)
}

// sqrt32 emits the correctly rounded square root of x for x = 0 and x in [2^-100,
// 2^126] (x here is L' of radius32: 0, or between about 0.1 and 2^26): the fast path of
// ptxas's own sqrt.rn.f32 sequence on sm_90 (y = rsqrt.approx(x), h = x*y, the residual
// x - h*h, and h + residual*y/2), without its range check and branch to the general
// routine, which cost 5 of its 10 instructions. The rsqrt's argument is at least 2^-64,
// so that x = 0 gives h = 0 and a result of 0 rather than 0 * inf.
func (g *kernelGen) sqrt32(x string) string {
	a := g.a
	y := a.op("f", "rsqrt.approx.ftz.f32", a.op("f", "max.f32", x, f32imm(0x1p-64)))
	h := a.op("f", "mul.rn.f32", x, y)
	hy := a.op("f", "mul.rn.f32", y, f32imm(0.5))
	nh := a.op("f", "neg.f32", h)
	e := a.op("f", "fma.rn.f32", nh, h, x)
	return a.op("f", "fma.rn.f32", e, hy, h)
}

// boxMuller64 emits boxMuller64 (fmath.go) step for step.
func (g *kernelGen) boxMuller64(x0, x1 string) (z0, z1 string) {
	a := g.a
	x := a.op("fd", "cvt.rn.f64.u64", x0)
	u := a.op("fd", "fma.rn.f64", x, g.d(0x1p-64), g.d(0x1p-65))
	l := g.log64(u)
	m := a.op("fd", "mul.rn.f64", l, g.d(-2))
	r := a.op("fd", "sqrt.rn.f64", m)
	s, c := g.sincos64(x1)
	return a.op("fd", "mul.rn.f64", r, c), a.op("fd", "mul.rn.f64", r, s)
}

// log64 emits log64 (fmath.go) step for step.
func (g *kernelGen) log64(x string) string {
	a := g.a
	b := a.op("rd", "mov.b64", x)
	t := a.op("rd", "sub.u64", b, hex(sqrtHalf64Bits))
	e := a.op("rd", "shr.s64", t, "52")
	t2 := a.op("rd", "shl.b64", e, "52")
	mb := a.op("rd", "sub.u64", b, t2)
	m := a.op("fd", "mov.b64", mb)
	f := a.op("fd", "sub.rn.f64", m, g.d(1))
	d := a.op("fd", "add.rn.f64", f, g.d(2))
	s := a.op("fd", "div.rn.f64", f, d)
	z := a.op("fd", "mul.rn.f64", s, s)
	p := a.op("fd", "fma.rn.f64", z, g.d(logCoef64[9]), g.d(logCoef64[8]))
	for k := 7; k >= 0; k-- {
		p = a.op("fd", "fma.rn.f64", z, p, g.d(logCoef64[k]))
	}
	r := a.op("fd", "mul.rn.f64", z, p)
	h := a.op("fd", "mul.rn.f64", f, g.d(0.5))
	hfsq := a.op("fd", "mul.rn.f64", h, f)
	tt := a.op("fd", "add.rn.f64", hfsq, r)
	ns := a.op("fd", "neg.f64", s)
	u := a.op("fd", "fma.rn.f64", ns, tt, hfsq)
	lm := a.op("fd", "sub.rn.f64", f, u)
	kf := a.op("fd", "cvt.rn.f64.s64", e)
	v := a.op("fd", "fma.rn.f64", kf, g.d(ln2Lo64), lm)
	return a.op("fd", "fma.rn.f64", kf, g.d(ln2Hi64), v)
}

// sincos64 emits sincos2pi64 (fmath.go) step for step.
func (g *kernelGen) sincos64(x string) (sin, cos string) {
	a := g.a
	q := a.op("rd", "add.u64", x, "0x2000000000000000")
	q = a.op("rd", "shr.u64", q, "62")
	qs := a.op("rd", "shl.b64", q, "62")
	d := a.op("rd", "sub.u64", x, qs)
	tf := a.op("fd", "cvt.rn.f64.s64", d)
	t := a.op("fd", "mul.rn.f64", tf, g.d(0x1p-62))
	t2 := a.op("fd", "mul.rn.f64", t, t)
	ps := a.op("fd", "fma.rn.f64", t2, g.d(sinCoef64[8]), g.d(sinCoef64[7]))
	for k := 6; k >= 0; k-- {
		ps = a.op("fd", "fma.rn.f64", t2, ps, g.d(sinCoef64[k]))
	}
	s := a.op("fd", "mul.rn.f64", t, ps)
	pc := a.op("fd", "fma.rn.f64", t2, g.d(cosCoef64[7]), g.d(cosCoef64[6]))
	for k := 5; k >= 0; k-- {
		pc = a.op("fd", "fma.rn.f64", t2, pc, g.d(cosCoef64[k]))
	}
	c := a.op("fd", "fma.rn.f64", t2, pc, g.d(1))
	q32 := a.op("r", "cvt.u32.u64", q)
	q1 := a.op("r", "and.b32", q32, "1")
	swap := a.op("p", "setp.ne.u32", q1, "0")
	sa := a.op("fd", "selp.f64", c, s, swap)
	ca := a.op("fd", "selp.f64", s, c, swap)
	ss := a.op("rd", "and.b64", q, "2")
	ss = a.op("rd", "shl.b64", ss, "62")
	cs := a.op("rd", "add.u64", q, "1")
	cs = a.op("rd", "and.b64", cs, "2")
	cs = a.op("rd", "shl.b64", cs, "62")
	sb := a.op("rd", "mov.b64", sa)
	sb = a.op("rd", "xor.b64", sb, ss)
	cb := a.op("rd", "mov.b64", ca)
	cb = a.op("rd", "xor.b64", cb, cs)
	return a.op("fd", "mov.b64", sb), a.op("fd", "mov.b64", cb)
}

// halfNormals emits the 8 normal float16 or bfloat16 values of the blocks with counters
// ctr and ctr+1 (the float32 normals of NormalFloat32, rounded to nearest even), packed
// in 4 words, for a GPU of compute capability cc (major*10 + minor).
func (g *kernelGen) halfNormals(ctr string, cc int) output {
	a := g.a
	var hs []string
	for i := 0; i < 2; i++ {
		c := ctr
		if i == 1 {
			c = a.op("rd", "add.u64", ctr, "1")
		}
		lo, hi := a.reg("r"), a.reg("r")
		a.ins("mov.b64 {%s, %s}, %s", lo, hi, c)
		w := a.philox([4]string{lo, hi, "0", "0"}, g.keys)
		z0, z1 := g.boxMuller32(w[0], w[1])
		z2, z3 := g.boxMuller32(w[2], w[3])
		for _, z := range []string{z0, z1, z2, z3} {
			hs = append(hs, g.roundHalf(z, cc))
		}
	}
	var o []string
	for k := 0; k < 4; k++ {
		r := a.reg("r")
		a.ins("mov.b32 %s, {%s, %s}", r, hs[2*k], hs[2*k+1])
		o = append(o, r)
	}
	return output{o, "b32"}
}

// roundHalf rounds the finite float32 z to the request's half type (nearest even): the
// cvt.rn instructions, or before sm_80 bfloat16's rounding on the bits.
func (g *kernelGen) roundHalf(z string, cc int) string {
	a := g.a
	if g.s.Type == dtype.Float16 {
		return a.op("h", "cvt.rn.f16.f32", z)
	}
	if cc >= 80 {
		return a.op("h", "cvt.rn.bf16.f32", z)
	}
	u := a.op("r", "mov.b32", z)
	l := a.op("r", "bfe.u32", u, "16", "1")
	a.ins("add.u32 %s, %s, 0x7FFF", l, l)
	a.ins("add.u32 %s, %s, %s", l, l, u)
	a.ins("shr.u32 %s, %s, 16", l, l)
	return a.op("h", "cvt.u16.u32", l)
}

// pairLoop emits the main loop of the normal kernels. When out is 16-byte aligned and the
// grid has W = floor(threads/32) >= 1 groups of 32 threads (thread g is in group g/32,
// lane g%32), the blocks [0, lim), lim = floor(nfull/64)*64, go in chunks of 64: group w
// does chunks w, w+W, w+2W, ..., and lane l of it blocks 64q+l and 64q+32+l of chunk q,
// two independent Philox blocks and transforms in flight per thread, stored with two
// vector stores 512 bytes apart (each store of a group writes 512 contiguous bytes). b
// (the thread's first block for the general loop) is then advanced by lim, so the general
// loop does the rest, [lim, Blocks(n)).
func (g *kernelGen) pairLoop(out, offset, b, stride, nfull, aligned string, index64 bool) {
	a := g.a
	ic, it, bt := "r", "u32", "b32"
	if index64 {
		ic, it, bt = "rd", "u64", "b64"
	}
	skip, loop := a.newLabel("pairs_end"), a.newLabel("pairs")
	warps := a.op(ic, "shr."+it, stride, "5")
	lim := a.op(ic, "and."+bt, nfull, "-64")
	on := a.op("p", "setp.ne."+it, warps, "0")
	a.ins("and.pred %s, %s, %s", on, on, aligned)
	a.ins("selp.%s %s, %s, 0, %s", bt, lim, lim, on)
	w := a.op(ic, "shr."+it, b, "5")
	lane := a.op(ic, "and."+bt, b, "31")
	bb := a.op(ic, "shl."+bt, w, "6")
	a.ins("add.%s %s, %s, %s", it, bb, bb, lane)
	a.ins("add.%s %s, %s, %s", it, b, b, lim)
	in := a.op("p", "setp.lt."+it, w, warps)
	lt := a.op("p", "setp.lt."+it, bb, lim)
	a.ins("and.pred %s, %s, %s", in, in, lt)
	a.ins("@!%s bra %s", in, skip)
	// step = 64*W blocks; in 32 bits, clamped to 2^31 (> lim) so that bb+step cannot wrap.
	var step, step64 string
	if index64 {
		step = a.op("rd", "shl.b64", warps, "6")
		step64 = step
	} else {
		step64 = a.op("rd", "mul.wide.u32", warps, "64")
		a.ins("min.u64 %s, %s, %s", step64, step64, "0x80000000")
		step = a.op("r", "cvt.u32.u64", step64)
	}
	bb64 := bb
	if !index64 {
		bb64 = a.op("rd", "cvt.u64.u32", bb)
	}
	ctr := a.op("rd", "add.u64", offset, bb64)
	addr := a.op("rd", "add.u64", out, a.op("rd", "shl.b64", bb64, "4"))
	stepAddr := a.op("rd", "shl.b64", step64, "4")
	a.label(loop)
	var os [2]output
	for i := range os {
		c := ctr
		if i == 1 {
			c = a.op("rd", "add.u64", ctr, "32")
		}
		g.ctrLo, g.ctrHi = a.reg("r"), a.reg("r")
		a.ins("mov.b64 {%s, %s}, %s", g.ctrLo, g.ctrHi, c)
		w := a.philox([4]string{g.ctrLo, g.ctrHi, "0", "0"}, g.keys)
		os[i] = g.transform(w)
	}
	for i, o := range os {
		a.ins("st.global.v%d.%s [%s+%d], {%s}", len(o.regs), o.typ, addr, 512*i, strings.Join(o.regs, ", "))
	}
	a.ins("add.u64 %s, %s, %s", ctr, ctr, step64)
	a.ins("add.u64 %s, %s, %s", addr, addr, stepAddr)
	a.ins("add.%s %s, %s, %s", it, bb, bb, step)
	a.ins("@%s bra %s", a.op("p", "setp.lt."+it, bb, lim), loop)
	a.label(skip)
}

// genKernel writes the kernel with the default options; maxRounds is MaxRounds except
// in tests.
func genKernel(s Spec, target string, index64 bool, maxRounds uint32) (Kernel, error) {
	return genKernelOptions(s, target, index64, maxRounds, Options{})
}

// genKernelOptions writes the kernel with the choices o.
func genKernelOptions(s Spec, target string, index64 bool, maxRounds uint32, opts Options) (Kernel, error) {
	vs := s
	if s.Dist == Range { // the bounds are kernel parameters: validate the rest
		vs.Lo, vs.Hi = 0, 1
	}
	if err := vs.Validate(); err != nil {
		return Kernel{}, err
	}
	cc, _ := strconv.Atoi(strings.TrimPrefix(target, "sm_"))
	name := s.KernelNameOptions(cc/10, cc%10, index64, opts)
	a := &asm{counts: map[string]int{}}
	g := &kernelGen{a: a, s: s, maxRounds: maxRounds, tabName: name + "_c", halfUniform: opts.halfUniform(s, cc)}
	size := s.Type.Size()
	epb := 16 / size
	sh := bits.TrailingZeros(uint(epb))

	params := []string{"out", "n", "seed", "offset"}
	if s.Dist == Range {
		params = append(params, "lo", "hi")
	}
	p := map[string]string{}
	for _, n := range params {
		p[n] = a.reg("rd")
		a.ins("ld.param.u64 %s, [%s_%s]", p[n], name, n)
	}
	// Key schedule: round i uses (k0 + i*W0, k1 + i*W1) mod 2^32.
	k0 := a.op("r", "cvt.u32.u64", p["seed"])
	k1 := a.op("r", "cvt.u32.u64", a.op("rd", "shr.u64", p["seed"], "32"))
	if s.Dist == Normal {
		// An opaque zero (ntid.x <= 1024): with k0 and k1 computed rather than read from
		// the parameter bank, ptxas keeps them in registers instead of reloading them in
		// every iteration of the main loop.
		z := a.op("r", "shr.u32", a.op("r", "mov.u32", "%ntid.x"), "11")
		k0 = a.op("r", "xor.b32", k0, z)
		k1 = a.op("r", "xor.b32", k1, z)
	}
	g.keys[0] = [2]string{k0, k1}
	for i := 1; i < Rounds; i++ {
		g.keys[i] = [2]string{
			a.op("r", "add.u32", k0, hex(uint64(uint32(i)*philoxW0))),
			a.op("r", "add.u32", k1, hex(uint64(uint32(i)*philoxW1))),
		}
	}
	g.halfUniformConsts()
	if s.Dist == Range {
		if s.Type == dtype.Int32 {
			g.lo = a.op("r", "cvt.u32.u64", p["lo"])
			h := a.op("r", "cvt.u32.u64", p["hi"])
			g.r = a.op("r", "sub.u32", h, g.lo)
			nr := a.op("r", "neg.s32", g.r)
			g.t = a.op("r", "rem.u32", nr, g.r)
		} else {
			g.lo = p["lo"]
			g.r = a.op("rd", "sub.u64", p["hi"], g.lo)
			nr := a.op("rd", "neg.s64", g.r)
			g.t = a.op("rd", "rem.u64", nr, g.r)
		}
	}
	ic, it := "r", "u32" // index register class and type
	if index64 {
		ic, it = "rd", "u64"
	}
	var n, nb, nfull string
	if index64 {
		n = p["n"]
	} else {
		n = a.op("r", "cvt.u32.u64", p["n"])
	}
	nb = a.op(ic, "add."+it, n, imm(uint64(epb-1)))
	nb = a.op(ic, "shr."+it, nb, imm(uint64(sh)))
	nfull = a.op(ic, "shr."+it, n, imm(uint64(sh)))
	al := a.op("rd", "and.b64", p["out"], "15")
	aligned := a.op("p", "setp.eq.u64", al, "0")
	tid := a.op("r", "mov.u32", "%tid.x")
	ntid := a.op("r", "mov.u32", "%ntid.x")
	ctaid := a.op("r", "mov.u32", "%ctaid.x")
	nctaid := a.op("r", "mov.u32", "%nctaid.x")
	var b, stride string
	if index64 {
		b = a.op("rd", "mul.wide.u32", ctaid, ntid)
		a.ins("add.u64 %s, %s, %s", b, b, a.op("rd", "cvt.u64.u32", tid))
		stride = a.op("rd", "mul.wide.u32", ntid, nctaid)
	} else {
		b = a.op("r", "mad.lo.u32", ctaid, ntid, tid)
		stride = a.op("r", "mul.lo.u32", ntid, nctaid)
	}
	done, loop, scalar, next := a.newLabel("done"), a.newLabel("loop"), a.newLabel("scalar"), a.newLabel("next")
	if s.Dist == Normal && s.Type == dtype.Float32 || g.halfUniform == 3 {
		g.pairLoop(p["out"], p["offset"], b, stride, nfull, aligned, index64)
	}
	a.ins("@%s bra.uni %s", a.op("p", "setp.ge."+it, b, nb), done)
	a.label(loop)
	b64 := b
	if !index64 {
		b64 = a.op("rd", "cvt.u64.u32", b)
	}
	var o output
	if s.halfNormal() {
		// 16 bytes of output are 8 halves: the float32 normals of blocks 2b and 2b+1.
		o = g.halfNormals(a.op("rd", "add.u64", p["offset"], a.op("rd", "shl.b64", b64, "1")), cc)
	} else {
		ctr := a.op("rd", "add.u64", p["offset"], b64)
		g.ctrLo, g.ctrHi = a.reg("r"), a.reg("r")
		a.ins("mov.b64 {%s, %s}, %s", g.ctrLo, g.ctrHi, ctr)
		w := a.philox([4]string{g.ctrLo, g.ctrHi, "0", "0"}, g.keys)
		o = g.transform(w)
	}
	var boff string
	if index64 {
		boff = a.op("rd", "shl.b64", b, "4")
	} else {
		boff = a.op("rd", "mul.wide.u32", b, "16")
	}
	addr := a.op("rd", "add.u64", p["out"], boff)
	full := a.op("p", "setp.lt."+it, b, nfull)
	vec := a.op("p", "and.pred", full, aligned)
	a.ins("@!%s bra %s", vec, scalar)
	a.ins("st.global.v%d.%s [%s], {%s}", len(o.regs), o.typ, addr, strings.Join(o.regs, ", "))
	a.ins("bra.uni %s", next)
	a.label(scalar)
	e0 := a.op(ic, "shl.b"+it[1:], b, imm(uint64(sh)))
	for k := 0; k < epb; k++ {
		ek := e0
		if k > 0 {
			ek = a.op(ic, "add."+it, e0, imm(uint64(k)))
		}
		q := a.op("p", "setp.lt."+it, ek, n)
		at := fmt.Sprintf("[%s+%d]", addr, k*size)
		switch size {
		case 4, 8:
			a.ins("@%s st.global.%s %s, %s", q, o.typ, at, o.regs[k])
		case 2:
			h := [2]string{a.reg("h"), a.reg("h")}
			a.ins("mov.b32 {%s, %s}, %s", h[0], h[1], o.regs[k/2])
			a.ins("@%s st.global.b16 %s, %s", q, at, h[k%2])
		case 1:
			v := o.regs[k/4]
			if k%4 != 0 {
				v = a.op("r", "shr.u32", v, imm(uint64(8*(k%4))))
			}
			a.ins("@%s st.global.b8 %s, %s", q, at, v)
		}
	}
	a.label(next)
	a.ins("add.%s %s, %s, %s", it, b, b, stride)
	a.ins("@%s bra %s", a.op("p", "setp.lt."+it, b, nb), loop)
	a.label(done)
	a.ins("ret")

	var m strings.Builder
	fmt.Fprintf(&m, "// %s: %v, generated by github.com/go-gpu/gpu/random.\n", name, s)
	fmt.Fprintf(&m, ".version %s\n.target %s\n.address_size 64\n\n", PTXVersion, target)
	if len(g.tab) > 0 {
		// The table of float64 constants (kernelGen.d).
		fmt.Fprintf(&m, ".const .align 8 .b64 %s[%d] = {", g.tabName, len(g.tab))
		for i, v := range g.tab {
			if i > 0 {
				m.WriteString(", ")
			}
			fmt.Fprintf(&m, "%#x", v)
		}
		m.WriteString("};\n\n")
	}
	fmt.Fprintf(&m, ".visible .entry %s(\n", name)
	for i, n := range params {
		sep := ","
		if i == len(params)-1 {
			sep = ""
		}
		fmt.Fprintf(&m, "\t.param .u64 %s_%s%s\n", name, n, sep)
	}
	m.WriteString(")\n")
	if (s.Dist == Normal && s.Type == dtype.Float32 || g.halfUniform == 3) && cc >= 75 {
		// At most 32 registers (8 resident blocks of 256 threads per SM; see Kernel):
		// ptxas needs them without spilling from sm_75 on, where the round keys live in
		// uniform registers (the kernels with two blocks in flight a thread).
		m.WriteString(".maxnreg 32\n")
	}
	m.WriteString("{\n")
	for _, d := range regDecl {
		if c := a.counts[d.class]; c > 0 {
			fmt.Fprintf(&m, "\t.reg %s %%%s<%d>;\n", d.typ, d.class, c)
		}
	}
	m.WriteString(a.b.String())
	m.WriteString("}\n")
	return Kernel{Spec: s, Index64: index64, Target: target, Name: name, PTX: m.String()}, nil
}
