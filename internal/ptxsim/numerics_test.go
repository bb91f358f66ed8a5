package ptxsim

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/internal/testenv"
)

// iters scales the random test iterations down under the race detector, which slows
// the simulator and the exact references about tenfold.
func iters(n int) int {
	if testenv.Race {
		return n / 8
	}
	return n
}

// kernel wraps instructions in a kernel with a few registers of each class and one
// u64 parameter (the output address).
func kernel(body string) string {
	return `.version 7.8
.target sm_90
.address_size 64
.visible .entry k(
	.param .u64 out,
	.param .u64 a,
	.param .u64 b
)
{
	.reg .pred %p<8>;
	.reg .b16 %rs<8>;
	.reg .b32 %r<16>;
	.reg .b64 %rd<16>;
	.reg .f32 %f<8>;
	.reg .f64 %fd<8>;

	ld.param.u64 %rd1, [out];
	ld.param.u64 %rd2, [a];
	ld.param.u64 %rd3, [b];
` + body + `
	ret;
}
`
}

// run1 runs one thread of a kernel built from body with arguments a and b and returns
// the 8 bytes it stores at out.
func run1(t *testing.T, body string, a, b uint64) uint64 {
	t.Helper()
	m, err := Parse(kernel(body))
	if err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	mem := &Regions{}
	out := make([]byte, 8)
	mem.Map(0x1000, out)
	if _, err := m.Func("k").Run(mem, Dim{Ntid: 1, Nctaid: 1}, []uint64{0x1000, a, b}); err != nil {
		t.Fatalf("%v\n%s", err, body)
	}
	return getLE(out)
}

func TestIntegerOps(t *testing.T) {
	cases := []struct {
		body string
		a, b uint64
		want uint64
	}{
		{"add.u32 %r1, %r2, %r3;", 0xffffffff, 2, 1},
		{"sub.s64 %rd4, %rd2, %rd3;", 1, 3, uint64(1<<64 - 2)},
		{"mul.lo.s32 %r1, %r2, %r3;", uint64(uint32(1) << 31), 3, 1 << 31},
		{"mul.hi.u32 %r1, %r2, %r3;", 0xffffffff, 0xffffffff, 0xfffffffe},
		{"mul.hi.s32 %r1, %r2, %r3;", 0xffffffff, 5, 0xffffffff}, // -1*5 = -5: high word -1
		{"mul.hi.s64 %rd4, %rd2, %rd3;", uint64(1<<64 - 1), 5, uint64(1<<64 - 1)},
		{"mul.wide.s32 %rd4, %r2, %r3;", 0xfffffffe, 3, uint64(1<<64 - 6)},
		{"mul.wide.u32 %rd4, %r2, %r3;", 0xfffffffe, 3, 0x2fffffffa},
		{"mad.lo.u32 %r1, %r2, %r3, 7;", 5, 6, 37},
		{"div.s32 %r1, %r2, %r3;", uint64(uint32(1<<32 - 7)), 2, uint64(uint32(1<<32 - 3))},
		{"rem.s32 %r1, %r2, %r3;", uint64(uint32(1<<32 - 7)), 2, 0xffffffff},
		{"div.u32 %r1, %r2, %r3;", 7, 0, poison & 0xffffffff},
		{"div.s32 %r1, %r2, %r3;", 1 << 31, 0xffffffff, poison & 0xffffffff},
		{"abs.s32 %r1, %r2;", 1 << 31, 0, 1 << 31},
		{"neg.s32 %r1, %r2;", 5, 0, 0xfffffffb},
		{"min.s32 %r1, %r2, %r3;", 0xffffffff, 1, 0xffffffff},
		{"min.u32 %r1, %r2, %r3;", 0xffffffff, 1, 1},
		{"max.s64 %rd4, %rd2, %rd3;", uint64(1<<64 - 1), 1, 1},
		{"shl.b32 %r1, %r2, %r3;", 1, 31, 1 << 31},
		{"shl.b32 %r1, %r2, %r3;", 1, 32, 0},
		{"shl.b64 %rd4, %rd2, %r3;", 1, 1000, 0},
		{"shr.s32 %r1, %r2, %r3;", 1 << 31, 40, 0xffffffff},
		{"shr.u32 %r1, %r2, %r3;", 1 << 31, 40, 0},
		{"shr.s64 %rd4, %rd2, %r3;", 1 << 63, 63, uint64(1<<64 - 1)},
		{"bfe.u32 %r1, %r2, 8, 8;", 0x12345678, 0, 0x56},
		{"bfe.s32 %r1, %r2, 8, 8;", 0x1234f678, 0, 0xfffffff6},
		{"bfe.s32 %r1, %r2, 24, 8;", 0x80000000, 0, 0xffffff80},
		{"prmt.b32 %r1, %r2, %r3, 0x5410;", 0x11223344, 0x55667788, 0x77883344},
		{"prmt.b32 %r1, %r2, %r3, 0x0040;", 0x000000aa, 0x000000bb, 0xaaaabbaa},
		{"prmt.b32 %r1, %r2, %r3, 0x8880;", 0x000000f0, 0, 0xfffffff0},
		{"cvt.s32.s8 %r1, %r2;", 0x1ff, 0, 0xffffffff},
		{"cvt.u32.u16 %r1, %r2;", 0x12345678, 0, 0x5678},
		{"cvt.s64.s32 %rd4, %r2;", 0x80000000, 0, 0xffffffff80000000},
		{"cvt.u32.u64 %r1, %rd2;", 0x123456789, 0, 0x23456789},
		{"clz.b32 %r1, %r2;", 1, 0, 31},
		{"popc.b64 %r1, %rd2;", 0xff00ff, 0, 16},
		{"and.b32 %r1, %r2, %r3;", 0xff0, 0x0ff, 0x0f0},
		{"xor.b64 %rd4, %rd2, %rd3;", 3, 5, 6},
		{"not.b32 %r1, %r2;", 0, 0, 0xffffffff},
		{"mov.b32 %r1, {%rs1, %rs2};\n\tmov.b32 {%rs1, %rs2}, %r2;\n\tmov.b32 %r1, {%rs2, %rs1};", 0x11112222, 0, 0x22221111},
		{"mov.b64 {%r1, %r4}, %rd2;\n\tmov.b64 %rd4, {%r4, %r1};", 0x1111111122222222, 0, 0x2222222211111111},
		{"setp.lt.s32 %p1, %r2, %r3;\n\tselp.u32 %r1, 1, 2, %p1;", 0xffffffff, 0, 1},
		{"setp.lo.u32 %p1, %r2, %r3;\n\tselp.u32 %r1, 1, 2, %p1;", 0xffffffff, 0, 2},
		{"setp.ne.u16 %p1, %rs2, 0;\n\tselp.u32 %r1, 1, 2, %p1;", 0, 0, 2},
		{"setp.eq.u32 %p2, %r3, 7;\n\tsetp.eq.and.u32 %p1, %r2, 0, %p2;\n\tselp.u32 %r1, 1, 2, %p1;", 0, 7, 1},
		{"setp.eq.u32 %p2, %r3, 7;\n\tsetp.eq.and.u32 %p1, %r2, 0, %p2;\n\tselp.u32 %r1, 1, 2, %p1;", 0, 6, 2},
		{"setp.eq.u32 %p2, %r3, 7;\n\tsetp.eq.or.u32 %p1, %r2, 0, !%p2;\n\tselp.u32 %r1, 1, 2, %p1;", 5, 7, 2},
		{"setp.eq.u32 %p1, %r3, 7;\n\tsetp.lt.xor.u32 %p1, %r2, 3, %p1;\n\tselp.u32 %r1, 1, 2, %p1;", 1, 7, 2},
		{"lop3.b32 %r1, %r2, %r3, 0xff00ff00, 0xe8;", 0xf0f0f0f0, 0xcccccccc, 0xfcc0fcc0}, // majority
		{"shf.l.wrap.b32 %r1, %r2, %r3, 4;", 0xa0000000, 0x1, 0x1a},
		{"shf.r.clamp.b32 %r1, %r2, %r3, 40;", 0x1, 0x87654321, 0x87654321},
		{"shf.r.wrap.b32 %r1, %r2, %r3, 36;", 0x87654321, 0x1, 0x18765432},
		{"bfi.b32 %r1, %r2, %r3, 8, 4;", 0xf5, 0x11223344, 0x11223544},
		{"bfind.u32 %r1, %r2;", 0x00f00000, 0, 23},
		{"bfind.s32 %r1, %r2;", 0xffff0000, 0, 15},
		{"bfind.shiftamt.u32 %r1, %r2;", 1, 0, 31},
		{"bfind.u32 %r1, %r2;", 0, 0, 0xffffffff},
		{"brev.b32 %r1, %r2;", 1, 0, 1 << 31},
		{"add.sat.s32 %r1, %r2, %r3;", 0x7fffffff, 5, 0x7fffffff},
		{"sub.sat.s32 %r1, %r2, %r3;", 0x80000000, 1, 0x80000000},
	}
	for _, c := range cases {
		body := "cvt.u32.u64 %r2, %rd2;\n\tcvt.u32.u64 %r3, %rd3;\n\tcvt.u16.u64 %rs2, %rd2;\n\t" + c.body +
			"\n\tst.global.u64 [%rd1], %rd4;"
		if !strings.Contains(c.body, "%rd4,") && !strings.Contains(c.body, "%rd4 ") {
			body = "cvt.u32.u64 %r2, %rd2;\n\tcvt.u32.u64 %r3, %rd3;\n\tcvt.u16.u64 %rs2, %rd2;\n\t" + c.body +
				"\n\tcvt.u64.u32 %rd4, %r1;\n\tst.global.u64 [%rd1], %rd4;"
		}
		if got := run1(t, body, c.a, c.b); got != c.want {
			t.Errorf("%s (%#x, %#x): got %#x, want %#x", c.body, c.a, c.b, got, c.want)
		}
	}
}

// bigRound rounds an exact big.Float to float32 or float64 in a mode, with subnormals,
// by big.Float itself: an independent check of format.round.
func bigRound(x *big.Float, f format, md rmode) uint64 {
	if x.Sign() == 0 {
		if x.Signbit() {
			return 1 << (f.frac + f.exp)
		}
		return 0
	}
	m := map[rmode]big.RoundingMode{rn: big.ToNearestEven, rz: big.ToZero, rm: big.ToNegativeInf, rp: big.ToPositiveInf}[md]
	emin := 1 - f.bias()
	e := x.MantExp(nil) - 1
	prec := f.frac + 1
	if e < emin {
		prec -= emin - e
	}
	if prec <= 0 {
		// below half the smallest subnormal: 0 or the smallest, by mode
		tiny := new(big.Float).SetMantExp(big.NewFloat(1), emin-f.frac)
		half := new(big.Float).Quo(tiny, big.NewFloat(2))
		ax := new(big.Float).Abs(x)
		up := false
		switch md {
		case rn:
			up = ax.Cmp(half) > 0
		case rm:
			up = x.Signbit()
		case rp:
			up = !x.Signbit()
		}
		b := uint64(0)
		if up {
			b = 1
		}
		if x.Signbit() {
			b |= 1 << (f.frac + f.exp)
		}
		return b
	}
	r := new(big.Float).SetMode(m).SetPrec(uint(prec)).Set(x)
	if f == fmtF64 {
		v, _ := r.Float64()
		return math.Float64bits(v)
	}
	v, _ := r.Float64() // exact: at most 24 bits
	return uint64(math.Float32bits(float32(v)))
}

func TestRoundAgainstBig(t *testing.T) {
	r := rand.New(rand.NewSource(1))
	for i := 0; i < iters(200000); i++ {
		m := r.Uint64() >> uint(r.Intn(64))
		e := r.Intn(2300) - 1200
		neg := r.Intn(2) == 0
		x := xval{neg: neg, m: m, e: e}
		bx := new(big.Float).SetMantExp(new(big.Float).SetUint64(m), e)
		if neg {
			bx.Neg(bx)
		}
		for _, f := range []format{fmtF32, fmtF64} {
			for md := rn; md <= rp; md++ {
				got := f.round(x, md)
				var want uint64
				// overflow: big.Float has no exponent limit
				limit := new(big.Float).SetMantExp(big.NewFloat(1), f.bias()+1)
				if new(big.Float).Abs(bx).Cmp(limit) >= 0 && m != 0 {
					continue
				}
				want = bigRound(bx, f, md)
				fv := f.decode(want)
				if fv.inf {
					continue // rounded past the largest finite value: checked below
				}
				if got != want {
					t.Fatalf("round(%v * 2^%d, neg %v, %v, mode %d) = %#x, want %#x", m, e, neg, f, md, got, want)
				}
			}
		}
	}
	// Overflow and directed rounding at the top.
	big1 := xval{m: 1, e: 200}
	if got := fmtF32.round(big1, rn); got != 0x7f800000 {
		t.Errorf("2^200 to float32 rn: %#x", got)
	}
	if got := fmtF32.round(big1, rz); got != 0x7f7fffff {
		t.Errorf("2^200 to float32 rz: %#x", got)
	}
	if got := fmtF32.round(xval{neg: true, m: 1, e: 200}, rp); got != 0xff7fffff {
		t.Errorf("-2^200 to float32 rp: %#x", got)
	}
	// float16: 65520 rounds to Inf, 65519 to 65504, 2^-25 to 0 (tie to even), 3*2^-26 up.
	for _, c := range []struct {
		x    xval
		want uint64
	}{
		{xuint(65520), 0x7c00}, {xuint(65519), 0x7bff}, {xval{m: 1, e: -25}, 0}, {xval{m: 3, e: -26}, 1},
		{xval{m: 3, e: -25}, 2}, {xval{neg: true, m: 1, e: -30}, 0x8000},
	} {
		if got := fmtF16.round(c.x, rn); got != c.want {
			t.Errorf("float16 round(%v): %#x, want %#x", c.x, got, c.want)
		}
	}
}

func TestFMA32(t *testing.T) {
	r := rand.New(rand.NewSource(2))
	exact := func(a, b, c float32) float32 {
		x := new(big.Float).SetPrec(2000).SetFloat64(float64(a))
		x.Mul(x, new(big.Float).SetFloat64(float64(b)))
		x.Add(x, new(big.Float).SetFloat64(float64(c)))
		return math.Float32frombits(uint32(bigRound(x, fmtF32, rn)))
	}
	for i := 0; i < iters(200000); i++ {
		a := math.Float32frombits(r.Uint32())
		b := math.Float32frombits(r.Uint32())
		c := math.Float32frombits(r.Uint32())
		if i%2 == 0 { // near-cancellation and halfway cases
			c = -float32(float64(a) * float64(b))
			if i%4 == 0 {
				c = math.Float32frombits(math.Float32bits(c) + uint32(r.Intn(3)) - 1)
			}
		}
		if i%8 == 1 { // products exactly halfway in float32
			a = float32(1 + float64(r.Intn(1<<12))*0x1p-12)
			b = float32(1 + float64(r.Intn(1<<12))*0x1p-12)
			c = math.Float32frombits(uint32(r.Intn(1 << 8)))
		}
		got := fma32(a, b, c)
		if math.IsNaN(float64(a)) || math.IsNaN(float64(b)) || math.IsNaN(float64(c)) || math.IsInf(float64(a), 0) ||
			math.IsInf(float64(b), 0) || math.IsInf(float64(c), 0) {
			continue
		}
		want := exact(a, b, c)
		if math.Float32bits(got) != math.Float32bits(want) && !(got != got && want != want) {
			t.Fatalf("fma32(%g, %g, %g) = %g, want %g", a, b, c, got, want)
		}
	}
}

func TestConversions(t *testing.T) {
	cvt := func(op string, srcReg, dstReg string, a uint64) uint64 {
		t.Helper()
		load := map[string]string{"%rs2": "cvt.u16.u64 %rs2, %rd2;", "%r2": "cvt.u32.u64 %r2, %rd2;",
			"%rd2": "", "%f2": "mov.b32 %f2, %r2;", "%fd2": "mov.b64 %fd2, %rd2;"}
		pre := "cvt.u32.u64 %r2, %rd2;\n\t" + load[srcReg]
		store := map[string]string{"%rs1": "st.global.u16 [%rd1], %rs1;", "%r1": "st.global.u32 [%rd1], %r1;",
			"%rd4": "st.global.u64 [%rd1], %rd4;", "%f1": "st.global.f32 [%rd1], %f1;", "%fd1": "st.global.f64 [%rd1], %fd1;"}
		return run1(t, pre+"\n\t"+op+" "+dstReg+", "+srcReg+";\n\t"+store[dstReg], a, 0)
	}
	f32 := func(x float32) uint64 { return uint64(math.Float32bits(x)) }
	f64 := math.Float64bits
	cases := []struct {
		op, src, dst string
		a, want      uint64
	}{
		{"cvt.rzi.s32.f32", "%f2", "%r1", f32(-2.7), uint64(uint32(1<<32 - 2))},
		{"cvt.rni.s32.f32", "%f2", "%r1", f32(2.5), 2},
		{"cvt.rmi.s32.f32", "%f2", "%r1", f32(-2.5), uint64(uint32(1<<32 - 3))},
		{"cvt.rpi.s32.f32", "%f2", "%r1", f32(2.1), 3},
		{"cvt.rzi.s32.f32", "%f2", "%r1", f32(float32(math.NaN())), 0},
		{"cvt.rzi.s32.f32", "%f2", "%r1", f32(3e9), 0x7fffffff},
		{"cvt.rzi.u32.f32", "%f2", "%r1", f32(-5), 0},
		{"cvt.rzi.s64.f64", "%fd2", "%rd4", f64(-1e30), 1 << 63},
		{"cvt.rzi.u64.f64", "%fd2", "%rd4", f64(1e30), 1<<64 - 1},
		{"cvt.rzi.s64.f32", "%f2", "%rd4", f32(float32(math.Inf(1))), 1<<63 - 1},
		{"cvt.rn.f32.s64", "%rd2", "%f1", 1<<62 + 1<<38 + 1, f32(0x1p62 + 0x1p39)},
		{"cvt.rz.f32.s64", "%rd2", "%f1", 1<<62 + 1<<39 - 1, f32(0x1p62)},
		{"cvt.rn.f32.u64", "%rd2", "%f1", 1<<64 - 1, f32(0x1p64)},
		{"cvt.rn.f64.s32", "%r2", "%fd1", 0xffffffff, f64(-1)},
		{"cvt.rn.f16.f32", "%f2", "%rs1", f32(65520), 0x7c00},
		{"cvt.rn.f16.f32", "%f2", "%rs1", f32(0x1p-25), 0},
		{"cvt.rn.f16.f32", "%f2", "%rs1", f32(1 + 0x1p-11), 0x3c00},
		{"cvt.rn.f16.f32", "%f2", "%rs1", f32(1 + 3*0x1p-12), 0x3c01},
		{"cvt.rn.bf16.f32", "%f2", "%rs1", 0x3f808000, 0x3f80},
		{"cvt.rn.bf16.f32", "%f2", "%rs1", 0x3f818000, 0x3f82},
		{"cvt.rn.bf16.f32", "%f2", "%rs1", 0x7f7fffff, 0x7f80},
		{"cvt.f32.f16", "%rs2", "%f1", 0x0001, f32(0x1p-24)},
		{"cvt.f32.f16", "%rs2", "%f1", 0xfc00, f32(float32(math.Inf(-1)))},
		{"cvt.f32.bf16", "%rs2", "%f1", 0xc0a0, f32(-5)},
		{"cvt.rna.tf32.f32", "%f2", "%r1", 0x3f801000, 0x3f802000}, // a tie: away from zero
		{"cvt.rna.tf32.f32", "%f2", "%r1", 0xbf800fff, 0xbf800000},
		{"cvt.rna.tf32.f32", "%f2", "%r1", 0x7f7ff000, 0x7f800000}, // overflows to Inf
		{"cvt.rna.tf32.f32", "%f2", "%r1", 0xff800000, 0xff800000},
		{"cvt.rna.tf32.f32", "%f2", "%r1", 0x7fc00001, 0x7fffe000},
		{"cvt.rz.f32.f64", "%fd2", "%f1", f64(1e300), 0x7f7fffff},
		{"cvt.rn.f32.f64", "%fd2", "%f1", f64(0x1p-150 * 1.5), 1},
		{"cvt.rn.f32.f64", "%fd2", "%f1", f64(0x1p-150), 0},
		{"cvt.f64.f32", "%f2", "%fd1", f32(0.1), f64(float64(float32(0.1)))},
		{"cvt.rmi.f32.f32", "%f2", "%f1", f32(-0.5), f32(-1)},
		{"cvt.rpi.f32.f32", "%f2", "%f1", f32(-0.5), f32(float32(math.Copysign(0, -1)))},
		{"cvt.rni.f64.f64", "%fd2", "%fd1", f64(2.5), f64(2)},
		{"cvt.rni.f64.f64", "%fd2", "%fd1", f64(-3.5), f64(-4)},
		{"cvt.rzi.f64.f64", "%fd2", "%fd1", f64(1e300), f64(1e300)},
	}
	for _, c := range cases {
		if got := cvt(c.op, c.src, c.dst, c.a); got != c.want {
			t.Errorf("%s %#x: got %#x, want %#x", c.op, c.a, got, c.want)
		}
	}
}

func TestFloatOps(t *testing.T) {
	nan32 := uint64(0x7fffffff)
	f32 := func(x float32) uint64 { return uint64(math.Float32bits(x)) }
	negz := f32(float32(math.Copysign(0, -1)))
	cases := []struct {
		body string
		a, b uint64
		want uint64
	}{
		{"add.rn.f32 %f1, %f2, %f3;", f32(1), f32(0x1p-24), f32(1)},
		{"add.rn.f32 %f1, %f2, %f3;", f32(1), f32(0x1p-23 * 1.5), f32(1 + 0x1p-22)},
		{"mul.rn.f32 %f1, %f2, %f3;", f32(0x1p-100), f32(0x1p-40), f32(0x1p-140)},
		{"div.rn.f32 %f1, %f2, %f3;", f32(1), f32(3), f32(1.0 / 3)},
		{"sqrt.rn.f32 %f1, %f2;", f32(2), 0, f32(float32(math.Sqrt(2)))},
		{"add.rn.f32 %f1, %f2, %f3;", 0xffc00001, f32(1), nan32},
		{"neg.f32 %f1, %f2;", 0xffc00001, 0, 0x7fc00001},
		{"abs.f32 %f1, %f2;", 0xffc00001, 0, 0x7fc00001},
		{"min.f32 %f1, %f2, %f3;", 0x7fc00000, f32(2), f32(2)},
		{"min.f32 %f1, %f2, %f3;", negz, 0, negz},
		{"max.f32 %f1, %f2, %f3;", negz, 0, 0},
		{"max.f32 %f1, %f2, %f3;", 0x7fc00000, 0xffc00000, nan32},
		{"fma.rn.f32 %f1, %f2, %f3, %f3;", f32(1 + 0x1p-12), f32(1 - 0x1p-12), f32(1 - 0x1p-24 + 1 - 0x1p-12)},
		{"setp.neu.f32 %p1, %f2, %f3;\n\tselp.f32 %f1, 0f3F800000, 0f00000000, %p1;", 0x7fc00000, 0x7fc00000, f32(1)},
		{"setp.ne.f32 %p1, %f2, %f3;\n\tselp.f32 %f1, 0f3F800000, 0f00000000, %p1;", 0x7fc00000, 0, f32(0)},
		{"setp.nan.f32 %p1, %f2, %f3;\n\tselp.f32 %f1, 0f3F800000, 0f00000000, %p1;", 0, 0xff800001, f32(1)},
		{"setp.geu.f32 %p1, %f2, %f3;\n\tselp.f32 %f1, 0f3F800000, 0f00000000, %p1;", f32(1), f32(2), f32(0)},
		{"add.rz.f32 %f1, %f2, %f3;", f32(1), f32(0x1p-23 * 1.5), f32(1 + 0x1p-23)},
		{"add.rp.f32 %f1, %f2, %f3;", f32(1), f32(0x1p-30), f32(1 + 0x1p-23)},
		{"sub.rm.f32 %f1, %f2, %f3;", f32(1), f32(1), negz},
		{"mul.rm.f32 %f1, %f2, %f3;", f32(-1.0 / 3), f32(3), f32(-1 - 0x1p-23)},
		{"mul.rz.f32 %f1, %f2, %f3;", f32(-1.0 / 3), f32(3), f32(-1)},
		{"fma.rz.f32 %f1, %f2, %f3, %f3;", f32(1 + 0x1p-12), f32(1 - 0x1p-12), f32(1 - 0x1p-23 + 1 - 0x1p-12)},
		{"add.rn.ftz.f32 %f1, %f2, %f3;", 1, 0, 0},
		{"mul.rn.sat.f32 %f1, %f2, %f3;", f32(3), f32(0.5), f32(1)},
		{"add.rn.sat.f32 %f1, %f2, %f3;", 0x7fc00000, f32(1), 0},
		{"min.NaN.f32 %f1, %f2, %f3;", 0x7fc00000, f32(2), nan32},
		{"div.full.f32 %f1, %f2, %f3;", f32(1), f32(3), f32(1.0 / 3)},
		{"rcp.rn.f32 %f1, %f2;", f32(3), 0, f32(1.0 / 3)},
		{"copysign.f32 %f1, %f2, %f3;", f32(-1), f32(2), f32(-2)},
		{"testp.subnormal.f32 %p1, %f2;\n\tselp.f32 %f1, 0f3F800000, 0f00000000, %p1;", 1, 0, f32(1)},
		{"testp.normal.f32 %p1, %f2;\n\tselp.f32 %f1, 0f3F800000, 0f00000000, %p1;", 0, 0, f32(0)},
		// float16 and bfloat16 arithmetic, rounded once (results widened to float32)
		{"mov.b32 {%rs1, %rs2}, %r2;\n\tmov.b32 {%rs3, %rs4}, %r3;\n\tadd.f16 %rs5, %rs1, %rs3;\n\tcvt.f32.f16 %f1, %rs5;",
			0x3c00, 0x1400, f32(1 + 0x1p-10)}, // 1 + 2^-10 (1.5 * 2^-11 rounds to 2^-10)
		{"mov.b32 {%rs1, %rs2}, %r2;\n\tmov.b32 {%rs3, %rs4}, %r3;\n\tmul.rn.bf16 %rs5, %rs1, %rs3;\n\tcvt.f32.bf16 %f1, %rs5;",
			0x3fc0, 0x3fc0, f32(2.25)},
		{"mov.b32 {%rs1, %rs2}, %r2;\n\tmov.b32 {%rs3, %rs4}, %r3;\n\tfma.rn.f16 %rs5, %rs1, %rs3, %rs3;\n\tcvt.f32.f16 %f1, %rs5;",
			0x7bff, 0x4000, f32(float32(math.Inf(1)))}, // 65504*2 + 2 overflows
		// packed halves: each half on its own, subnormals kept
		{"mov.b32 %r4, 0x80008000;\n\tfma.rn.bf16x2 %r1, %r2, %r3, %r4;\n\tmov.b32 %f1, %r1;",
			0x00FF0001, 0x7E007E00, 0x3F7F3B80}, // 1 and 255 times 2^-133, times 2^125
		{"mul.rn.f16x2 %r1, %r2, %r3;\n\tmov.b32 %f1, %r1;", 0x07FF0001, 0x70007000, 0x3BFF1000}, // 1 and 2047 times 2^-24, times 2^13
		{"sub.rn.f16x2 %r1, %r2, %r3;\n\tmov.b32 %f1, %r1;", 0x3C003C00, 0x14008001, 0x3BFE3C00}, // 1 - 2^-10; 1 + 2^-24 rounds to 1
		{"add.bf16x2 %r1, %r2, %r3;\n\tmov.b32 %f1, %r1;", 0x3F803F80, 0x3F803B80, 0x40003F80},   // 1 + 1; 1 + 2^-8 ties to 1
	}
	for _, c := range cases {
		body := "cvt.u32.u64 %r2, %rd2;\n\tcvt.u32.u64 %r3, %rd3;\n\tmov.b32 %f2, %r2;\n\tmov.b32 %f3, %r3;\n\t" + c.body +
			"\n\tst.global.f32 [%rd1], %f1;"
		if got := run1(t, body, c.a, c.b); got != c.want {
			t.Errorf("%s (%#x, %#x): got %#x, want %#x", c.body, c.a, c.b, got, c.want)
		}
	}
}

func TestCallsTablesVectors(t *testing.T) {
	src := `.version 7.8
.target sm_90
.address_size 64

.func (.param .b32 f_r) f(
	.param .b32 f_x
);

.global .align 4 .b32 tbl[4] = {10, 20, 30,
	40};

.func (.param .b32 f_r) f(
	.param .b32 f_x
)
{
	.reg .b32 %r<4>;
	.reg .b64 %rd<4>;
	ld.param.b32 %r1, [f_x];
	mov.u64 %rd1, tbl;
	mul.wide.u32 %rd2, %r1, 4;
	add.u64 %rd2, %rd1, %rd2;
	ld.global.nc.u32 %r2, [%rd2];
	st.param.b32 [f_r], %r2;
	ret;
}

.visible .entry k(
	.param .u64 out
)
{
	.reg .b32 %r<10>;
	.reg .b64 %rd<4>;
	.reg .pred %p<2>;
	ld.param.u64 %rd1, [out];
	mov.u32 %r1, %tid.x;
	and.b32 %r1, %r1, 3;
	{
	.param .b32 param0;
	st.param.b32 [param0], %r1;
	.param .b32 retval0;
	call.uni (retval0), f, (param0);
	ld.param.b32 %r2, [retval0];
	}
	mov.u32 %r3, %tid.x;
	mul.wide.u32 %rd2, %r3, 16;
	add.u64 %rd2, %rd1, %rd2;
	ld.global.v4.u32 {%r4, %r5, %r6, %r7}, [%rd2];
	add.u32 %r4, %r4, %r2;
	setp.eq.u32 %p1, %r3, 1;
	@%p1 bra $L__skip;
	st.global.v4.u32 [%rd2], {%r4, %r5, %r6, %r7};
$L__skip:
	ret;
}
`
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	mem := &Regions{}
	mem.Map(0x10000, buf)
	if err := m.Entries()[0].Launch(mem, Linear(1, 4), []uint64{0x10000}); err != nil {
		t.Fatal(err)
	}
	got := []uint64{getLE(buf[0:4]), getLE(buf[16:20]), getLE(buf[32:36]), getLE(buf[48:52])}
	if fmt.Sprint(got) != "[10 0 30 40]" {
		t.Errorf("got %v", got)
	}
	// Faults: out of bounds, misaligned vector access.
	err = m.Entries()[0].Launch(mem, Linear(1, 5), []uint64{0x10000})
	if !errors.Is(err, ErrFault) || !strings.Contains(err.Error(), "outside") {
		t.Errorf("out of bounds: %v", err)
	}
	err = m.Entries()[0].Launch(mem, Linear(1, 1), []uint64{0x10004})
	if !errors.Is(err, ErrFault) || !strings.Contains(err.Error(), "misaligned") {
		t.Errorf("misaligned: %v", err)
	}
}

func TestParseErrors(t *testing.T) {
	for _, body := range []string{
		"add.f32 %f1, %f2, %f3;",        // no rounding modifier: ptxas may contract
		"div.rz.f32 %f1, %f2, %f3;",     // only div.rn, div.full, div.approx
		"add.rn.sat.s32 %r1, %r2, %r3;", // no rounding on integers
		"setp.geu.u32 %p1, %r1, %r2;",   // float comparison on integers
		"frobnicate.b32 %r1, %r2;",
		"add.u32 %r99, %r1, %r2;",
		"bra $nowhere;",
		"ld.local.u32 %r1, [%rd1];",
		"shfl.sync.up.b32 %r1, %r2, 1, 0, 0xffffffff;", // no warp: faults at run time
	} {
		m, err := Parse(kernel(body))
		if err == nil {
			_, err = m.Func("k").Run(&Regions{}, Dim{Ntid: 1, Nctaid: 1}, []uint64{0, 0, 0})
		}
		if err == nil {
			t.Errorf("%s: no error", body)
		}
	}
	// A runaway loop stops.
	m, err := Parse(kernel("$L__top:\n\tbra $L__top;"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := Linear(1, 1)
	cfg.MaxSteps = 1000
	if err := m.Func("k").Launch(&Regions{}, cfg, []uint64{0, 0, 0}); !errors.Is(err, ErrFault) {
		t.Errorf("a runaway loop: %v", err)
	}
}

// TestTableAfterDirectives: a module-scope table right after .version, .target and
// .address_size (lines without a ';') is read, not merged into the directives.
func TestTableAfterDirectives(t *testing.T) {
	src := `.version 7.8
.target sm_90
.address_size 64
.global .align 4 .b32 tbl[2] = {7, 9};
.visible .entry k(
	.param .u64 out
)
{
	.reg .b32 %r<2>;
	.reg .b64 %rd<3>;
	ld.param.u64 %rd1, [out];
	mov.u64 %rd2, tbl;
	ld.global.u32 %r1, [%rd2+4];
	st.global.u32 [%rd1], %r1;
	ret;
}
`
	m, err := Parse(src)
	if err != nil {
		t.Fatal(err)
	}
	buf := []byte{0xA5, 0xA5, 0xA5, 0xA5}
	mem := &Regions{}
	mem.Map(0x10000, buf)
	if err := m.Entries()[0].Launch(mem, Linear(1, 1), []uint64{0x10000}); err != nil {
		t.Fatal(err)
	}
	if got := getLE(buf); got != 9 {
		t.Fatalf("read %d from the table, want 9", got)
	}
}
