package kernel

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/ptx"
)

// The deterministic float sum of a scatter (AddAt, weighted Bincount under
// Deterministic): float additions through atomics happen in an order that varies from
// run to run, and so do their roundings. Integer additions don't round, so the sum is
// made one of integers: each target's updates are scaled to fixed point relative to
// the largest exponent among them, and the fixed-point words are added with integer
// atomics, whose order doesn't matter. Three passes over the updates' targets, with a
// scratch of 24 bytes per target (E, F, HI, LO below, in that order; E zeroed to -1,
// the rest to 0):
//
//  1. Scatter{Fixed: FixedExp}: E[t] = max biased exponent (float64's, 0..2047; 2047
//     for Inf and NaN) of t's updates.
//  2. Scatter{Fixed: FixedAcc}: for each update, v*2^(shift-(E[t]-1023)) is rounded to
//     an integer (to nearest, ties to even) split into its part above 2^32 (floored)
//     and the rest; the parts add into the int64 words HI[t] and LO[t]. Inf and NaN
//     set flags in F[t] (1: +Inf, 2: -Inf: both, or NaN, 3).
//  3. FixedFinish: dst[t] = dst[t] + (HI[t]*2^32 + LO[t]) * 2^-(shift-(E[t]-1023)),
//     computed in float64 and rounded once to the destination's type; F decides for
//     infinite and NaN sums, and a NaN result is the canonical NaN (the package's NaN
//     policy); targets with no update (E[t] = -1) are left alone.
//
// shift = 62 - bits(n) + 31 for n updates (FixedShift), so no sum of n parts overflows
// an int64, and every value within 2^(62-bits(n)+32) of its target's largest keeps all
// its bits: the result is reproducible bit for bit (on both backends, which compute the
// same integers), and its error is below n * 2^-(62-bits(n)+32) of the largest
// magnitude, far below float32's rounding (and below float64's for n under 2^20).

// FixedFinish is the deterministic sum's last pass: over T targets, it adds each
// target's fixed-point sum to the contiguous destination.
//
// Kernel parameters, in order:
//
//	dst      u64  address of the contiguous destination (Dst: a float type)
//	scratch  u64  address of the scratch: E s32[T], F u32[T], HI s64[T], LO s64[T]
//	t        u64  targets
//	shift    u64  FixedShift(n)
//
// Any grid of GatherBlock threads (a grid-stride loop).
type FixedFinish struct {
	Dst dtype.DType
}

// Key identifies the kernel.
func (x *FixedFinish) Key() string { return fmt.Sprintf("fixedfinish|%v", x.Dst) }

// Validate checks the spec.
func (x *FixedFinish) Validate() error {
	if !x.Dst.IsFloat() {
		return fmt.Errorf("kernel: fixed-point sum into %v: %w", x.Dst, backend.ErrNotSupported)
	}
	return nil
}

// Geometry returns the launch for n targets.
func (x *FixedFinish) Geometry(n, multiprocessors int) (grid, block int) {
	return max(1, min((n+GatherBlock-1)/GatherBlock, 32*max(1, multiprocessors))), GatherBlock
}

// fixedSum returns a target's sum from its scratch words.
func fixedSum(e int32, flag uint32, hi, lo int64, shift int) float64 {
	if e >= 2047 {
		switch flag & 3 {
		case 1:
			return math.Inf(1)
		case 2:
			return math.Inf(-1)
		}
		return math.NaN()
	}
	hi += int64(uint64(lo) >> 32)
	lo &= 0xffffffff
	sum := float64(hi)*0x1p32 + float64(lo)
	sc := shift - (int(e) - 1023)
	a := min(sc, 1000)
	return sum * math.Ldexp(1, -a) * math.Ldexp(1, -(sc-a))
}

// CPU returns the kernel for the CPU backend.
func (x *FixedFinish) CPU() (func(*cpu.Launch) error, error) {
	if err := x.Validate(); err != nil {
		return nil, err
	}
	return func(l *cpu.Launch) error {
		T, shift := int(l.Uint64(2)), int(l.Uint64(3))
		dst, sc := l.Mem(0), l.Mem(1)
		sz := x.Dst.Size()
		if len(dst) < T*sz || len(sc) < 24*T {
			return fmt.Errorf("kernel: illegal address: fixed-point sum of %d targets: %w", T, backend.ErrLaunchFailed)
		}
		l.Parallel(T, 4096, func(lo, hi int) {
			for t := lo; t < hi; t++ {
				e := int32(binary.LittleEndian.Uint32(sc[4*t:]))
				if e < 0 {
					continue
				}
				flag := binary.LittleEndian.Uint32(sc[4*T+4*t:])
				h := int64(binary.LittleEndian.Uint64(sc[8*T+8*t:]))
				w := int64(binary.LittleEndian.Uint64(sc[16*T+8*t:]))
				d := dst[t*sz : (t+1)*sz]
				storeNum(d, x.Dst, cpuNum{f: fp.Canon(loadNum(d, x.Dst).f + fixedSum(e, flag, h, w, shift))})
			}
		})
		return nil
	}, nil
}

// pow2 returns 2^e (s32 register, -1022 <= e <= 1023) as a float64 register.
func pow2(f *ptx.Func, e ptx.Reg) ptx.Reg {
	b := f.Reg(ptx.S64)
	f.Cvt(b, e)
	f.Add(b, b, ptx.Int(1023))
	f.Shl(b, b, ptx.Int(52))
	r := f.Reg(ptx.F64)
	f.Op("mov.b64", r, b)
	return r
}

// fixedScale returns 2^a and 2^b with a = min(sc, 1000), b = sc - a, for sc =
// shift - (e - 1023) (s32 registers); neg gives 2^-a and 2^-b.
func fixedScale(f *ptx.Func, shift, e ptx.Reg, neg bool) (pa, pb ptx.Reg) {
	sc := f.Reg(ptx.S32)
	f.Sub(sc, shift, e)
	f.Add(sc, sc, ptx.Int(1023))
	a := f.Reg(ptx.S32)
	f.Min(a, sc, ptx.Int(1000))
	b := f.Reg(ptx.S32)
	f.Sub(b, sc, a)
	if neg {
		f.Neg(a, a)
		f.Neg(b, b)
	}
	return pow2(f, a), pow2(f, b)
}

// PTX returns the kernel's PTX.
func (x *FixedFinish) PTX(major, minor int) (src, entry string, err error) {
	if err := x.Validate(); err != nil {
		return "", "", err
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "fixed_finish"
	f := m.Kernel(entry, ptx.P("dst", ptx.U64), ptx.P("scratch", ptx.U64), ptx.P("t", ptx.U64), ptx.P("shift", ptx.U64))
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", GatherBlock))
	pdst, psc := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pdst, f.LdParam(0))
	f.CvtaTo(ptx.Global, psc, f.LdParam(1))
	T := f.LdParam(2)
	shift := f.Reg(ptx.S32)
	f.Cvt(shift, f.LdParam(3))
	i := f.Reg(ptx.U64)
	f.MulWide(i, f.Special(ptx.CtaidX), ptx.Int(GatherBlock))
	tid := f.Reg(ptx.U64)
	f.Cvt(tid, f.Special(ptx.TidX))
	f.Add(i, i, tid)
	stride := f.Reg(ptx.U64)
	f.MulWide(stride, f.Special(ptx.NctaidX), ptx.Int(GatherBlock))
	loop, done, next := f.NewLabel(), f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, i, T)).Bra(done)
	ea := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", ea, i, ptx.Int(4), psc)
	e := f.Reg(ptx.S32)
	f.Op("ld.global.s32", e, ptx.Mem(ea, 0))
	f.At(f.Setp(ptx.Lt, e, ptx.Int(0))).Bra(next)
	sum := f.Reg(ptx.F64)
	special, have := f.NewLabel(), f.NewLabel()
	f.At(f.Setp(ptx.Ge, e, ptx.Int(2047))).Bra(special)
	{
		ha := f.Reg(ptx.U64)
		f.Op("mad.lo.u64", ha, T, ptx.Int(8), psc)
		f.Op("mad.lo.u64", ha, i, ptx.Int(8), ha)
		hi, lo := f.Reg(ptx.S64), f.Reg(ptx.U64)
		f.Op("ld.global.s64", hi, ptx.Mem(ha, 0))
		la := f.Reg(ptx.U64)
		f.Op("mad.lo.u64", la, T, ptx.Int(8), ha)
		f.Op("ld.global.u64", lo, ptx.Mem(la, 0))
		carry := f.Reg(ptx.U64)
		f.Shr(carry, lo, ptx.Int(32))
		f.Add(hi, hi, carry.As(ptx.S64))
		f.And(lo, lo, ptx.Uint(0xffffffff))
		fh, fl := f.Reg(ptx.F64), f.Reg(ptx.F64)
		f.Cvt(fh, hi)
		f.Cvt(fl, lo)
		f.Mul(fh, fh, ptx.ImmF64(0x1p32))
		f.Add(sum, fh, fl)
		pa, pb := fixedScale(f, shift, e, true)
		f.Mul(sum, sum, pa)
		f.Mul(sum, sum, pb)
		f.Bra(have)
	}
	f.Place(special)
	{
		fa := f.Reg(ptx.U64)
		f.Op("mad.lo.u64", fa, T, ptx.Int(4), psc)
		f.Op("mad.lo.u64", fa, i, ptx.Int(4), fa)
		fl := f.Reg(ptx.U32)
		f.Op("ld.global.u32", fl, ptx.Mem(fa, 0))
		f.And(fl, fl, ptx.Int(3))
		f.Mov(sum, ptx.ImmF64(math.NaN()))
		f.At(f.Setp(ptx.Eq, fl, ptx.Int(1))).Op("mov.f64", sum, ptx.ImmF64(math.Inf(1)))
		f.At(f.Setp(ptx.Eq, fl, ptx.Int(2))).Op("mov.f64", sum, ptx.ImmF64(math.Inf(-1)))
	}
	f.Place(have)
	da := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", da, i, ptx.Int(x.Dst.Size()), pdst)
	d := f.Reg(ptx.F64)
	switch x.Dst {
	case dtype.Float64:
		f.Op("ld.global.f64", d, ptx.Mem(da, 0))
	case dtype.Float32:
		s := f.Reg(ptx.F32)
		f.Op("ld.global.f32", s, ptx.Mem(da, 0))
		f.Cvt(d, s)
	default:
		h := f.Reg(ptx.B16)
		f.Op("ld.global.b16", h, ptx.Mem(da, 0))
		s := f.Reg(ptx.F32)
		if x.Dst == dtype.Float16 {
			f.Op("cvt.f32.f16", s, h)
		} else {
			u := f.Reg(ptx.U32)
			f.Op("cvt.u32.u16", u, h.As(ptx.U16))
			f.Shl(u, u, ptx.Int(16))
			f.Op("mov.b32", s, u)
		}
		f.Cvt(d, s)
	}
	f.Add(d, d, sum)
	// A NaN sum is the canonical NaN (the NaN policy): float64 arithmetic passes an
	// operand's payload on, the destination's or the special sum's.
	f.Selp(d, ewCanonNaN(dtype.Float64), d, f.Setp(ptx.NaN, d, d))
	switch x.Dst {
	case dtype.Float64:
		f.Op("st.global.f64", ptx.Mem(da, 0), d)
	case dtype.Float32:
		s := f.Reg(ptx.F32)
		f.Cvt(s, d)
		f.Op("st.global.f32", ptx.Mem(da, 0), s)
	default:
		// Round to odd into float32, then to nearest into the half type: one
		// rounding in effect (float32 has more than two bits to spare).
		s := f.Reg(ptx.F32)
		f.CvtRound(s, d, ".rz")
		back := f.Reg(ptx.F64)
		f.Cvt(back, s)
		inexact := f.Setp(ptx.Ne, back, d)
		b := f.Reg(ptx.B32)
		f.Op("mov.b32", b, s)
		f.At(inexact).Op("or.b32", b, b, ptx.Int(1))
		f.Op("mov.b32", s, b)
		h := f.Reg(ptx.B16)
		name := "f16"
		if x.Dst == dtype.BFloat16 {
			name = "bf16"
		}
		f.Op("cvt.rn."+name+".f32", h, s)
		f.Op("st.global.b16", ptx.Mem(da, 0), h)
	}
	f.Place(next)
	f.Add(i, i, stride)
	f.Bra(loop)
	f.Place(done)
	f.Ret()
	return m.String(), entry, nil
}
