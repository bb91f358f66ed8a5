package ptxsim

import (
	"fmt"
	"math"
)

// Floating point: float32 and float64 in .rn through Go's IEEE arithmetic (one
// operation per function, so that no compiler contracts a multiply and an add), every
// other rounding mode and float16/bfloat16 through the exact arithmetic of round.go.

func canon32(x float32, ftz bool) uint64 {
	if x != x {
		return fmtF32.canonicalNaN()
	}
	b := uint64(math.Float32bits(x))
	if ftz {
		b = ftz32(b)
	}
	return b
}

func canon64(x float64) uint64 {
	if x != x {
		return fmtF64.canonicalNaN()
	}
	return math.Float64bits(x)
}

// ftz32 flushes a float32 subnormal to a zero of its sign.
func ftz32(b uint64) uint64 {
	if b&0x7f800000 == 0 {
		return b & 0x80000000
	}
	return b
}

func add32(a, b float32) float32 { return float32(a + b) }
func sub32(a, b float32) float32 { return float32(a - b) }
func mul32(a, b float32) float32 { return float32(a * b) }
func div32(a, b float32) float32 { return float32(a / b) }
func add64(a, b float64) float64 { return float64(a + b) }
func sub64(a, b float64) float64 { return float64(a - b) }
func mul64(a, b float64) float64 { return float64(a * b) }
func div64(a, b float64) float64 { return float64(a / b) }

// fval returns a float register value of type ty as a float64 (exact).
func fval(v uint64, ty ptype) float64 {
	switch ty.format() {
	case fmtF32:
		return float64(math.Float32frombits(uint32(v)))
	case fmtF64:
		return math.Float64frombits(v)
	}
	x := ty.format().decode(mask(v, 16))
	switch {
	case x.nan:
		return math.NaN()
	case x.inf:
		return math.Inf(1 - 2*int(b2u(x.neg)))
	}
	return math.Copysign(math.Ldexp(float64(x.m), x.e), float64(1-2*int(b2u(x.neg))))
}

// fminmax is min/max: the non-NaN operand when one is NaN (both: the canonical NaN;
// with nanProp, any NaN gives it), -0 below +0.
func fminmax(a, b uint64, ty ptype, isMin, nanProp bool) uint64 {
	x, y := fval(a, ty), fval(b, ty)
	switch {
	case x != x && (y != y || nanProp), y != y && nanProp:
		return ty.format().canonicalNaN()
	case x != x:
		return b
	case y != y:
		return a
	case x == y:
		if isMin == math.Signbit(x) {
			return a
		}
		return b
	case (x < y) == isMin:
		return a
	}
	return b
}

// fctx is a float instruction's type and modifiers.
type fctx struct {
	ty       ptype
	f        format
	md       rmode
	ftz, sat bool
}

// in returns operand bits as the instruction reads them (.ftz flushes subnormals).
func (c fctx) in(v uint64) uint64 {
	if c.ftz {
		return ftz32(v)
	}
	return mask(v, c.ty.bits)
}

// out finishes a result: .ftz, .sat (clamped to [0, 1], NaN to +0).
func (c fctx) out(v uint64) uint64 {
	if c.ftz {
		v = ftz32(v)
	}
	if c.sat {
		x := fval(v, c.ty)
		switch {
		case x != x || x <= 0:
			return 0
		case x > 1:
			return c.f.round(xval{m: 1}, rn)
		}
	}
	return v
}

// exact rounds a*b + c, computed exactly, to the instruction's format and mode.
func (c fctx) exact(a, b, d xval) uint64 { return c.f.round(mulAdd(a, b, d, c.md), c.md) }

// fn1 are the one-operand functions, as float64 functions rounded once (sqrt is exact
// that way for float32; for float64 Go's is correctly rounded).
var fn1 = map[string]func(float64) float64{
	"sqrt": math.Sqrt, "rsqrt": func(x float64) float64 { return 1 / math.Sqrt(x) }, "rcp": func(x float64) float64 { return 1 / x },
	"ex2": math.Exp2, "lg2": math.Log2, "sin": math.Sin, "cos": math.Cos, "tanh": math.Tanh,
}

func compileFloat(in *inst, ty ptype) (execFn, error) {
	p := in.parts
	op := p[0]
	if err := needArgs(in, arity(op)); err != nil {
		return nil, err
	}
	c := fctx{ty: ty, f: ty.format(), md: rn}
	approx, nanProp, hasMode := false, false, false
	for _, m := range p[1 : len(p)-1] {
		r, integral, ok := rmodeOf(m)
		switch {
		case ok && !integral && !hasMode:
			c.md, hasMode = r, true
		case m == "ftz" && ty.bits == 32:
			c.ftz = true
		case m == "sat" && op != "min" && op != "max":
			c.sat = true
		case m == "NaN" && (op == "min" || op == "max"):
			nanProp = true
		case m == "approx" || m == "full":
			approx = true
		default:
			return nil, fmt.Errorf("%s: unsupported modifier .%s", in.op, m)
		}
	}
	native := c.md == rn && (c.f == fmtF32 || c.f == fmtF64)
	ok := true
	switch op {
	case "add", "sub", "mul", "fma", "mad": // without .rn, ptxas may contract a float32 or float64 mul and add
		ok = !approx && (hasMode || c.f != fmtF32 && c.f != fmtF64)
	case "div":
		ok = native && approx != hasMode && !(approx && ty.bits == 64)
	case "sqrt", "rsqrt", "rcp", "ex2", "lg2", "sin", "cos", "tanh":
		ok = native && approx != hasMode && (approx || op == "sqrt" || op == "rcp")
	case "neg", "abs", "min", "max":
		ok = !hasMode && !approx
	}
	if !ok {
		return nil, fmt.Errorf("%s: unsupported form", in.op)
	}
	// Operands are read inline, not through helper closures: under the race detector
	// every call costs.
	d, a1, a2, a3 := &in.args[0], &in.args[1], &in.args[min(2, len(in.args)-1)], &in.args[len(in.args)-1]
	sign := uint64(1) << uint(ty.bits-1)
	var r func(t *thread) uint64
	switch op {
	case "neg":
		r = func(t *thread) uint64 { return c.in(t.val(a1)) ^ sign }
	case "abs":
		r = func(t *thread) uint64 { return c.in(t.val(a1)) &^ sign }
	case "min", "max":
		r = func(t *thread) uint64 { return fminmax(c.in(t.val(a1)), c.in(t.val(a2)), ty, op == "min", nanProp) }
	case "div":
		if c.f == fmtF32 {
			r = func(t *thread) uint64 { return canon32(div32(f32(c.in(t.val(a1))), f32(c.in(t.val(a2)))), false) }
		} else {
			r = func(t *thread) uint64 { return canon64(div64(f64(c.in(t.val(a1))), f64(c.in(t.val(a2))))) }
		}
	case "sqrt", "rsqrt", "rcp", "ex2", "lg2", "sin", "cos", "tanh":
		g := fn1[op]
		r = func(t *thread) uint64 { return c.f.round(decode64(g(fval(c.in(t.val(a1)), ty))), c.md) }
	case "add", "sub":
		neg := op == "sub"
		if native && !c.ftz && !c.sat && c.f == fmtF32 && !neg {
			return func(t *thread, in *inst) { t.set(d, canon32(add32(f32(t.val(a1)), f32(t.val(a2))), false)) }, nil
		}
		switch {
		case native && c.f == fmtF32 && neg:
			r = func(t *thread) uint64 { return canon32(sub32(f32(c.in(t.val(a1))), f32(c.in(t.val(a2)))), false) }
		case native && c.f == fmtF32:
			r = func(t *thread) uint64 { return canon32(add32(f32(c.in(t.val(a1))), f32(c.in(t.val(a2)))), false) }
		case native && neg:
			r = func(t *thread) uint64 { return canon64(sub64(f64(c.in(t.val(a1))), f64(c.in(t.val(a2))))) }
		case native:
			r = func(t *thread) uint64 { return canon64(add64(f64(c.in(t.val(a1))), f64(c.in(t.val(a2))))) }
		default:
			r = func(t *thread) uint64 {
				b := c.f.decode(c.in(t.val(a2)))
				b.neg = b.neg != neg && !b.nan
				return c.exact(c.f.decode(c.in(t.val(a1))), xval{m: 1}, b)
			}
		}
	case "mul":
		switch {
		case native && c.f == fmtF32:
			r = func(t *thread) uint64 { return canon32(mul32(f32(c.in(t.val(a1))), f32(c.in(t.val(a2)))), false) }
		case native:
			r = func(t *thread) uint64 { return canon64(mul64(f64(c.in(t.val(a1))), f64(c.in(t.val(a2))))) }
		default:
			r = func(t *thread) uint64 {
				a, b := c.f.decode(c.in(t.val(a1))), c.f.decode(c.in(t.val(a2)))
				return c.exact(a, b, xval{neg: a.neg != b.neg}) // an exact zero keeps the product's sign
			}
		}
	case "fma", "mad":
		if native && !c.ftz && !c.sat && c.f == fmtF32 {
			return func(t *thread, in *inst) {
				t.set(d, canon32(fma32(f32(t.val(a1)), f32(t.val(a2)), f32(t.val(a3))), false))
			}, nil
		}
		switch {
		case native && c.f == fmtF32:
			r = func(t *thread) uint64 {
				return canon32(fma32(f32(c.in(t.val(a1))), f32(c.in(t.val(a2))), f32(c.in(t.val(a3)))), false)
			}
		case native:
			r = func(t *thread) uint64 {
				return canon64(math.FMA(f64(c.in(t.val(a1))), f64(c.in(t.val(a2))), f64(c.in(t.val(a3)))))
			}
		default:
			r = func(t *thread) uint64 {
				return c.exact(c.f.decode(c.in(t.val(a1))), c.f.decode(c.in(t.val(a2))), c.f.decode(c.in(t.val(a3))))
			}
		}
	default:
		return nil, fmt.Errorf("unsupported instruction %s", in.op)
	}
	if !c.ftz && !c.sat {
		return func(t *thread, in *inst) { t.set(d, r(t)) }, nil
	}
	return func(t *thread, in *inst) { t.set(d, c.out(r(t))) }, nil
}

// compilePacked compiles add, sub, mul and fma of .f16x2 and .bf16x2 (.rn, the only
// rounding the PTX ISA gives them): the scalar operation on the low halves and on the
// high halves of the .b32 operands, each rounded once, subnormals kept.
func compilePacked(in *inst, ty ptype) (execFn, error) {
	op := in.parts[0]
	switch op {
	case "add", "sub", "mul", "fma":
	default:
		return nil, fmt.Errorf("unsupported instruction %s", in.op)
	}
	if err := needArgs(in, arity(op)); err != nil {
		return nil, err
	}
	for _, m := range in.parts[1 : len(in.parts)-1] {
		if m != "rn" {
			return nil, fmt.Errorf("%s: unsupported modifier .%s", in.op, m)
		}
	}
	c := fctx{ty: ty, f: ty.format(), md: rn}
	src := in.args[1:]
	return func(t *thread, in *inst) {
		var v [3]uint64
		for i := range src {
			v[i] = t.val(&src[i])
		}
		var r uint64
		for h := 0; h < 32; h += 16 {
			x := func(i int) xval { return c.f.decode(v[i] >> h & 0xFFFF) }
			var y uint64
			switch op {
			case "add", "sub":
				b := x(1)
				b.neg = b.neg != (op == "sub") && !b.nan
				y = c.exact(x(0), xval{m: 1}, b)
			case "mul":
				a, b := x(0), x(1)
				y = c.exact(a, b, xval{neg: a.neg != b.neg})
			case "fma":
				y = c.exact(x(0), x(1), x(2))
			}
			r |= y << h
		}
		t.set(&in.args[0], r)
	}, nil
}

func f32(v uint64) float32 { return math.Float32frombits(uint32(v)) }
func f64(v uint64) float64 { return math.Float64frombits(v) }

// decode64 returns the exact value of a float64.
func decode64(x float64) xval { return fmtF64.decode(math.Float64bits(x)) }

// compileCopysign compiles copysign.{f32,f64} d, a, b: b with a's sign.
func compileCopysign(f *Func, in *inst) (execFn, error) {
	ty, err := typed(in, 3)
	if err != nil || ty.kind != 'f' || ty.bits < 32 {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	sign := uint64(1) << (ty.bits - 1)
	return func(t *thread, in *inst) {
		t.set(&in.args[0], t.val(&in.args[2])&^sign|t.val(&in.args[1])&sign)
	}, nil
}

// compileTestp compiles testp.{finite,infinite,number,notanumber,normal,subnormal}.
func compileTestp(f *Func, in *inst) (execFn, error) {
	ty, err := typed(in, 2)
	if err != nil || ty.kind != 'f' || ty.bits < 32 || len(in.parts) != 3 {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	fm := ty.format()
	test := map[string]func(x xval, sub bool) bool{
		"finite":     func(x xval, sub bool) bool { return !x.nan && !x.inf },
		"infinite":   func(x xval, sub bool) bool { return x.inf },
		"number":     func(x xval, sub bool) bool { return !x.nan },
		"notanumber": func(x xval, sub bool) bool { return x.nan },
		"normal":     func(x xval, sub bool) bool { return !x.nan && !x.inf && x.m != 0 && !sub },
		"subnormal":  func(x xval, sub bool) bool { return x.m != 0 && sub },
	}[in.parts[1]]
	if test == nil {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	return func(t *thread, in *inst) {
		v := mask(t.val(&in.args[1]), ty.bits)
		t.set(&in.args[0], b2u(test(fm.decode(v), v>>fm.frac&(1<<fm.exp-1) == 0)))
	}, nil
}

// ---- conversions ----

func rmodeOf(s string) (md rmode, integral, ok bool) {
	switch s {
	case "rn":
		return rn, false, true
	case "rz":
		return rz, false, true
	case "rm":
		return rm, false, true
	case "rp":
		return rp, false, true
	case "rni":
		return rn, true, true
	case "rzi":
		return rz, true, true
	case "rmi":
		return rm, true, true
	case "rpi":
		return rp, true, true
	}
	return 0, false, false
}

func compileCvt(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) < 3 {
		return nil, fmt.Errorf("bad cvt")
	}
	if err := needArgs(in, 2); err != nil {
		return nil, err
	}
	if len(p) == 4 && p[1] == "rna" && p[2] == "tf32" && p[3] == "f32" {
		return cvtTF32(in), nil
	}
	dt, ok1 := parseType(p[len(p)-2])
	st, ok2 := parseType(p[len(p)-1])
	if !ok1 || !ok2 || dt.kind == 'p' || st.kind == 'p' {
		return nil, fmt.Errorf("bad cvt types")
	}
	md, integral, hasMode, ftz := rn, false, false, false
	for _, m := range p[1 : len(p)-2] {
		r, in, ok := rmodeOf(m)
		switch {
		case ok && !hasMode:
			md, integral, hasMode = r, in, true
		case m == "ftz" && (dt.format() == fmtF32 || st.format() == fmtF32):
			ftz = true
		default:
			return nil, fmt.Errorf("unsupported cvt modifier .%s", m)
		}
	}
	d := in.args[0]
	isF := func(t ptype) bool { return t.kind == 'f' }
	src := func(t *thread) uint64 {
		v := mask(t.val(&in.args[1]), st.bits)
		if ftz && st.format() == fmtF32 {
			v = ftz32(v)
		}
		return v
	}
	set := func(t *thread, v uint64) {
		if ftz && dt.format() == fmtF32 {
			v = ftz32(v)
		}
		t.set(&d, v)
	}
	switch {
	case !isF(dt) && !isF(st):
		if hasMode {
			return nil, fmt.Errorf("rounding modifier on an integer conversion")
		}
		s := &in.args[1]
		return func(t *thread, in *inst) { t.set(&d, ext(ext(t.val(s), st.bits, st.kind), dt.bits, dt.kind)) }, nil
	case isF(dt) && !isF(st):
		if !hasMode || integral {
			return nil, fmt.Errorf("integer to float conversion needs .rn, .rz, .rm or .rp")
		}
		df := dt.format()
		return func(t *thread, in *inst) {
			v := ext(src(t), st.bits, st.kind)
			x := xuint(v)
			if st.kind == 's' {
				x = xint(int64(v))
			}
			set(t, df.round(x, md))
		}, nil
	case !isF(dt) && isF(st):
		if !hasMode || !integral {
			return nil, fmt.Errorf("float to integer conversion needs .rni, .rzi, .rmi or .rpi")
		}
		sf := st.format()
		return func(t *thread, in *inst) {
			x := sf.decode(src(t))
			var v uint64
			if !x.nan {
				k, ok := uint64(0), false
				if !x.inf {
					k, ok = x.toInteger(md)
				}
				v = saturate(k, ok, x.neg, dt)
			}
			t.set(&d, ext(v, dt.bits, dt.kind))
		}, nil
	}
	// float to float
	sf, df := st.format(), dt.format()
	widening := sf.frac <= df.frac && sf.exp <= df.exp
	if integral && sf != df {
		return nil, fmt.Errorf("integer rounding between float formats")
	}
	if !widening && !hasMode {
		return nil, fmt.Errorf("narrowing float conversion needs a rounding modifier")
	}
	return func(t *thread, in *inst) {
		v := src(t)
		switch {
		case integral:
			set(t, sf.integral(v, md))
		case sf == fmtF64 && df == fmtF32 && md == rn:
			set(t, canon32(float32(math.Float64frombits(v)), false))
		default:
			set(t, df.round(sf.decode(v), md))
		}
	}, nil
}

// saturate returns the integer of magnitude k (ok: k is exact; otherwise too large for
// 64 bits) and sign neg clamped to the range of integer type t, as bits.
func saturate(k uint64, ok, neg bool, t ptype) uint64 {
	w := uint(t.bits)
	if t.kind == 's' {
		lim := uint64(1) << (w - 1) // |min|; max is lim-1
		switch {
		case neg && (!ok || k >= lim):
			return -lim
		case neg:
			return -k
		case !ok || k >= lim:
			return lim - 1
		}
		return k
	}
	switch {
	case neg:
		return 0
	case !ok || (w < 64 && k >= 1<<w):
		return mask(^uint64(0), t.bits)
	}
	return k
}

// cvtTF32 is cvt.rna.tf32.f32: the float32 rounded to 10 fraction bits, to nearest
// with ties away from zero, in float32 encoding with the low 13 bits zero (NaN: the
// canonical NaN so truncated).
func cvtTF32(in *inst) execFn {
	d, a := &in.args[0], &in.args[1]
	return func(t *thread, in *inst) {
		v := uint32(t.val(a))
		switch {
		case v&0x7fffffff > 0x7f800000:
			v = uint32(fmtF32.canonicalNaN())
		case v&0x7f800000 != 0x7f800000:
			v += 0x1000 // the magnitude's bits: ties away from zero, may carry into Inf
		}
		t.set(d, uint64(v&^0x1fff))
	}
}
