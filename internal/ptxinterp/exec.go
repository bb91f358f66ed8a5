package ptxinterp

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

type execFn = func(t *thread, in *inst)

// poison is what unspecified integer results (division by zero) are.
const poison = 0xdeadbeefdeadbeef

// compile returns the function executing in.
func (f *Func) compile(in *inst) (execFn, error) {
	p := in.parts
	switch p[0] {
	case "mov":
		return compileMov(in)
	case "ld":
		return compileLd(in)
	case "st":
		return compileSt(in)
	case "add", "sub", "mul", "mad", "fma", "div", "rem", "neg", "abs", "min", "max", "sqrt":
		t, err := lastType(p)
		if err != nil {
			return nil, err
		}
		if err := needArgs(in, arity(p[0])); err != nil {
			return nil, err
		}
		if t.kind == 'f' {
			return compileFloat(in, t)
		}
		return compileInt(in, t)
	case "rsqrt":
		return compileRsqrt(in)
	case "and", "or", "xor", "not", "cnot":
		return compileLogic(in)
	case "shl", "shr":
		return compileShift(in)
	case "bfe":
		return compileBfe(in)
	case "prmt":
		return compilePrmt(in)
	case "clz", "popc":
		return compileBitCount(in)
	case "setp":
		return compileSetp(in)
	case "selp":
		if err := needArgs(in, 4); err != nil {
			return nil, err
		}
		return func(t *thread, in *inst) {
			if t.val(in.args[3])&1 != 0 {
				t.set(in.args[0], t.val(in.args[1]))
			} else {
				t.set(in.args[0], t.val(in.args[2]))
			}
		}, nil
	case "cvt":
		return compileCvt(in)
	case "bra":
		if len(in.args) != 1 || in.args[0].kind != oSym {
			return nil, fmt.Errorf("bad branch")
		}
		target, ok := f.labels[in.args[0].name]
		if !ok {
			return nil, fmt.Errorf("unknown label %s", in.args[0].name)
		}
		return func(t *thread, in *inst) { t.fr.pc = target - 1 }, nil
	case "call":
		return compileCall(in)
	case "ret":
		return func(t *thread, in *inst) { t.ret() }, nil
	case "exit":
		return func(t *thread, in *inst) { t.done = true }, nil
	}
	return nil, fmt.Errorf("unsupported instruction %s", in.op)
}

func arity(op string) int {
	switch op {
	case "neg", "abs", "sqrt":
		return 2
	case "mad", "fma":
		return 4
	}
	return 3
}

func needArgs(in *inst, n int) error {
	if len(in.args) != n {
		return fmt.Errorf("%s takes %d operands, got %d", in.op, n, len(in.args))
	}
	if in.args[0].kind != oReg && in.args[0].kind != oVec && in.parts[0] != "st" {
		return fmt.Errorf("%s: destination is not a register", in.op)
	}
	return nil
}

// ---- data movement ----

func compileMov(in *inst) (execFn, error) {
	t0, err := lastType(in.parts)
	if err != nil {
		return nil, err
	}
	if err := needArgs(in, 2); err != nil {
		return nil, err
	}
	w := t0.bits
	d, s := in.args[0], in.args[1]
	switch {
	case d.kind == oVec:
		hw := w / len(d.vec)
		return func(t *thread, in *inst) {
			v := t.val(s)
			for i, r := range d.vec {
				t.setReg(r, mask(v>>uint(i*hw), hw))
			}
		}, nil
	case s.kind == oVec:
		hw := w / len(s.vec)
		return func(t *thread, in *inst) {
			var v uint64
			for i, r := range s.vec {
				v |= mask(t.fr.r[r], hw) << uint(i*hw)
			}
			t.set(d, v)
		}, nil
	}
	return func(t *thread, in *inst) { t.set(d, mask(t.val(s), w)) }, nil
}

// memOp parses the modifiers of ld/st: state space, vector width, element type.
func memOp(parts []string) (space string, n int, et ptype, err error) {
	n = 1
	for _, m := range parts[1 : len(parts)-1] {
		switch {
		case m == "global" || m == "param" || m == "const" || m == "local" || m == "shared":
			space = m
		case m == "v2" || m == "v4" || m == "v8":
			n, _ = strconv.Atoi(m[1:])
		case m == "nc" || m == "ca" || m == "cg" || m == "cs" || m == "lu" || m == "cv" || m == "wb" || m == "wt":
		case strings.HasPrefix(m, "L1::") || strings.HasPrefix(m, "L2::"):
		default:
			return "", 0, et, fmt.Errorf("unsupported modifier .%s", m)
		}
	}
	et, err = lastType(parts)
	if space == "local" || space == "shared" {
		err = fmt.Errorf("unsupported state space .%s", space)
	}
	return space, n, et, err
}

func compileLd(in *inst) (execFn, error) {
	space, n, et, err := memOp(in.parts)
	if err != nil {
		return nil, err
	}
	if err := needArgs(in, 2); err != nil {
		return nil, err
	}
	d, a := in.args[0], in.args[1]
	if a.kind != oMem {
		return nil, fmt.Errorf("ld without an address")
	}
	if space == "param" {
		if n != 1 || a.reg >= 0 || a.off != 0 {
			return nil, fmt.Errorf("unsupported parameter load")
		}
		return func(t *thread, in *inst) {
			v, ok := t.fr.param(a.name)
			if !ok {
				faultf("no parameter %s", a.name)
			}
			t.set(d, ext(v, et.bits, et.kind))
		}, nil
	}
	size := et.bits / 8
	regs := []int{d.reg}
	if n > 1 {
		if d.kind != oVec || len(d.vec) != n {
			return nil, fmt.Errorf("vector load needs %d registers", n)
		}
		regs = d.vec
	}
	return func(t *thread, in *inst) {
		addr := t.addr(a)
		if addr%uint64(n*size) != 0 {
			faultf("misaligned %d-byte load at %#x", n*size, addr)
		}
		b := t.buf[:n*size]
		t.load(addr, b)
		for i, r := range regs {
			t.setReg(r, ext(getLE(b[i*size:(i+1)*size]), et.bits, et.kind))
		}
	}, nil
}

func compileSt(in *inst) (execFn, error) {
	space, n, et, err := memOp(in.parts)
	if err != nil {
		return nil, err
	}
	if len(in.args) != 2 || in.args[0].kind != oMem {
		return nil, fmt.Errorf("bad store")
	}
	a, s := in.args[0], in.args[1]
	if space == "param" {
		if n != 1 || a.reg >= 0 || a.off != 0 {
			return nil, fmt.Errorf("unsupported parameter store")
		}
		return func(t *thread, in *inst) { t.fr.setParam(a.name, mask(t.val(s), et.bits)) }, nil
	}
	size := et.bits / 8
	if n > 1 && (s.kind != oVec || len(s.vec) != n) {
		return nil, fmt.Errorf("vector store needs %d registers", n)
	}
	return func(t *thread, in *inst) {
		addr := t.addr(a)
		if addr%uint64(n*size) != 0 {
			faultf("misaligned %d-byte store at %#x", n*size, addr)
		}
		b := t.buf[:n*size]
		if n == 1 {
			putLE(b, t.val(s))
		} else {
			for i, r := range s.vec {
				putLE(b[i*size:(i+1)*size], t.fr.r[r])
			}
		}
		t.store(addr, b)
	}, nil
}

func compileCall(in *inst) (execFn, error) {
	var rets, args []string
	var name string
	switch {
	case len(in.args) == 3 && in.args[0].kind == oList && in.args[1].kind == oSym && in.args[2].kind == oList:
		rets, name, args = in.args[0].list, in.args[1].name, in.args[2].list
	case len(in.args) == 2 && in.args[0].kind == oSym && in.args[1].kind == oList:
		name, args = in.args[0].name, in.args[1].list
	case len(in.args) == 2 && in.args[0].kind == oList && in.args[1].kind == oSym:
		rets, name = in.args[0].list, in.args[1].name
	case len(in.args) == 1 && in.args[0].kind == oSym:
		name = in.args[0].name
	default:
		return nil, fmt.Errorf("unsupported call form")
	}
	in.callee = name
	return func(t *thread, in *inst) {
		callee := t.mod.funcs[name]
		if len(callee.Params) != len(args) || len(callee.Rets) != len(rets) {
			faultf("call of %s with %d arguments and %d results", name, len(args), len(rets))
		}
		fr := t.newFrame(callee)
		fr.retNames = rets
		for i, a := range args {
			v, ok := t.fr.param(a)
			if !ok {
				faultf("call of %s: argument %s not set", name, a)
			}
			fr.params[callee.Params[i].Name] = v
		}
		t.stack = append(t.stack, t.fr)
		if len(t.stack) > 64 {
			faultf("call depth over 64")
		}
		t.fr = fr
	}, nil
}

// ---- integers ----

func compileInt(in *inst, ty ptype) (execFn, error) {
	p := in.parts
	w := ty.bits
	signed := ty.kind == 's'
	x := func(t *thread, i int) uint64 { return ext(t.val(in.args[i]), w, ty.kind) }
	mode := ""
	for _, m := range p[1 : len(p)-1] {
		switch m {
		case "lo", "hi", "wide":
			mode = m
		default:
			return nil, fmt.Errorf("unsupported modifier .%s", m)
		}
	}
	// mulOf returns the product as the mode selects.
	mulOf := func(a, b uint64) uint64 {
		switch mode {
		case "hi":
			if w == 64 {
				h, _ := bits.Mul64(a, b)
				if signed {
					if int64(a) < 0 {
						h -= b
					}
					if int64(b) < 0 {
						h -= a
					}
				}
				return h
			}
			return (a * b) >> uint(w) // a, b extended: the full product fits 64 bits
		case "wide":
			return a * b
		}
		return a * b
	}
	switch p[0] {
	case "add":
		return func(t *thread, in *inst) { t.set(in.args[0], x(t, 1)+x(t, 2)) }, nil
	case "sub":
		return func(t *thread, in *inst) { t.set(in.args[0], x(t, 1)-x(t, 2)) }, nil
	case "mul":
		if mode == "wide" && w == 64 {
			return nil, fmt.Errorf("mul.wide of 64 bits")
		}
		return func(t *thread, in *inst) { t.set(in.args[0], mulOf(x(t, 1), x(t, 2))) }, nil
	case "mad":
		return func(t *thread, in *inst) {
			c := t.val(in.args[3])
			if mode != "wide" {
				c = ext(c, w, ty.kind)
			}
			t.set(in.args[0], mulOf(x(t, 1), x(t, 2))+c)
		}, nil
	case "div", "rem":
		rem := p[0] == "rem"
		return func(t *thread, in *inst) {
			a, b := x(t, 1), x(t, 2)
			minInt := uint64(1) << uint(w-1)
			if mask(b, w) == 0 || (signed && mask(a, w) == minInt && mask(b, w) == mask(^uint64(0), w)) {
				t.set(in.args[0], poison)
				return
			}
			var r uint64
			switch {
			case signed && rem:
				r = uint64(int64(a) % int64(b))
			case signed:
				r = uint64(int64(a) / int64(b))
			case rem:
				r = a % b
			default:
				r = a / b
			}
			t.set(in.args[0], r)
		}, nil
	case "neg":
		return func(t *thread, in *inst) { t.set(in.args[0], -x(t, 1)) }, nil
	case "abs":
		return func(t *thread, in *inst) {
			a := x(t, 1)
			if signed && int64(a) < 0 {
				a = -a
			}
			t.set(in.args[0], a)
		}, nil
	case "min", "max":
		isMin := p[0] == "min"
		return func(t *thread, in *inst) {
			a, b := x(t, 1), x(t, 2)
			less := a < b
			if signed {
				less = int64(a) < int64(b)
			}
			if less == isMin {
				t.set(in.args[0], a)
			} else {
				t.set(in.args[0], b)
			}
		}, nil
	}
	return nil, fmt.Errorf("unsupported instruction %s", in.op)
}

func compileLogic(in *inst) (execFn, error) {
	ty, err := lastType(in.parts)
	if err != nil {
		return nil, err
	}
	w := ty.bits
	op := in.parts[0]
	if len(in.parts) != 2 || (ty.kind != 'b' && ty.kind != 'p') {
		return nil, fmt.Errorf("unsupported instruction %s", in.op)
	}
	if op == "not" || op == "cnot" {
		if err := needArgs(in, 2); err != nil {
			return nil, err
		}
		if op == "cnot" {
			return func(t *thread, in *inst) {
				v := uint64(0)
				if mask(t.val(in.args[1]), w) == 0 {
					v = 1
				}
				t.set(in.args[0], v)
			}, nil
		}
		return func(t *thread, in *inst) { t.set(in.args[0], mask(^t.val(in.args[1]), w)) }, nil
	}
	if err := needArgs(in, 3); err != nil {
		return nil, err
	}
	var f func(a, b uint64) uint64
	switch op {
	case "and":
		f = func(a, b uint64) uint64 { return a & b }
	case "or":
		f = func(a, b uint64) uint64 { return a | b }
	case "xor":
		f = func(a, b uint64) uint64 { return a ^ b }
	}
	return func(t *thread, in *inst) {
		t.set(in.args[0], mask(f(t.val(in.args[1]), t.val(in.args[2])), w))
	}, nil
}

func compileShift(in *inst) (execFn, error) {
	ty, err := lastType(in.parts)
	if err != nil {
		return nil, err
	}
	if err := needArgs(in, 3); err != nil {
		return nil, err
	}
	w := ty.bits
	left := in.parts[0] == "shl"
	arith := !left && ty.kind == 's'
	return func(t *thread, in *inst) {
		a := mask(t.val(in.args[1]), w)
		n := mask(t.val(in.args[2]), 32) // a .u32 count; counts past the width clamp
		var r uint64
		switch {
		case left && n >= uint64(w):
			r = 0
		case left:
			r = a << n
		case arith:
			if n >= uint64(w) {
				n = uint64(w - 1)
			}
			r = sext(a, w) >> 0
			r = uint64(int64(r) >> n)
		case n >= uint64(w):
			r = 0
		default:
			r = a >> n
		}
		t.set(in.args[0], mask(r, w))
	}, nil
}

func compileBfe(in *inst) (execFn, error) {
	ty, err := lastType(in.parts)
	if err != nil {
		return nil, err
	}
	if err := needArgs(in, 4); err != nil {
		return nil, err
	}
	w := ty.bits
	return func(t *thread, in *inst) {
		a := mask(t.val(in.args[1]), w)
		pos := int(t.val(in.args[2]) & 0xff)
		n := int(t.val(in.args[3]) & 0xff)
		if n == 0 {
			t.set(in.args[0], 0)
			return
		}
		msb := min(pos+n-1, w-1)
		sbit := uint64(0)
		if ty.kind == 's' {
			sbit = a >> uint(msb) & 1
		}
		var d uint64
		for i := 0; i < w; i++ {
			b := sbit
			if i < n && pos+i < w {
				b = a >> uint(pos+i) & 1
			}
			d |= b << uint(i)
		}
		t.set(in.args[0], d)
	}, nil
}

func compilePrmt(in *inst) (execFn, error) {
	if in.op != "prmt.b32" {
		return nil, fmt.Errorf("unsupported instruction %s", in.op)
	}
	if err := needArgs(in, 4); err != nil {
		return nil, err
	}
	return func(t *thread, in *inst) {
		src := mask(t.val(in.args[1]), 32) | mask(t.val(in.args[2]), 32)<<32
		c := t.val(in.args[3])
		var d uint64
		for n := 0; n < 4; n++ {
			nib := c >> uint(4*n) & 0xf
			b := src >> (8 * (nib & 7)) & 0xff
			if nib&8 != 0 {
				if b&0x80 != 0 {
					b = 0xff
				} else {
					b = 0
				}
			}
			d |= b << uint(8*n)
		}
		t.set(in.args[0], d)
	}, nil
}

func compileBitCount(in *inst) (execFn, error) {
	ty, err := lastType(in.parts)
	if err != nil {
		return nil, err
	}
	if err := needArgs(in, 2); err != nil {
		return nil, err
	}
	w := ty.bits
	if in.parts[0] == "clz" {
		return func(t *thread, in *inst) {
			t.set(in.args[0], uint64(bits.LeadingZeros64(mask(t.val(in.args[1]), w))-(64-w)))
		}, nil
	}
	return func(t *thread, in *inst) { t.set(in.args[0], uint64(bits.OnesCount64(mask(t.val(in.args[1]), w)))) }, nil
}

// ---- floating point ----

func canon32(x float32) uint64 {
	if x != x {
		return fmtF32.canonicalNaN()
	}
	return uint64(math.Float32bits(x))
}

func canon64(x float64) uint64 {
	if x != x {
		return fmtF64.canonicalNaN()
	}
	return math.Float64bits(x)
}

// The float32 operations, each one IEEE operation (separate functions so that no
// compiler may contract a multiply and an add).
func add32(a, b float32) float32 { return float32(a + b) }
func sub32(a, b float32) float32 { return float32(a - b) }
func mul32(a, b float32) float32 { return float32(a * b) }
func div32(a, b float32) float32 { return float32(a / b) }
func add64(a, b float64) float64 { return float64(a + b) }
func sub64(a, b float64) float64 { return float64(a - b) }
func mul64(a, b float64) float64 { return float64(a * b) }
func div64(a, b float64) float64 { return float64(a / b) }

// minmax is min/max.f32/f64: the non-NaN operand when one is NaN, -0 below +0.
func minmax(a, b float64, isMin bool) (float64, bool) {
	an, bn := a != a, b != b
	switch {
	case an && bn:
		return 0, false
	case an:
		return b, true
	case bn:
		return a, true
	case a == b:
		if isMin == math.Signbit(a) {
			return a, true
		}
		return b, true
	case (a < b) == isMin:
		return a, true
	}
	return b, true
}

func compileFloat(in *inst, ty ptype) (execFn, error) {
	p := in.parts
	op := p[0]
	if ty.bits != 32 && ty.bits != 64 {
		return nil, fmt.Errorf("unsupported type in %s", in.op)
	}
	mods := p[1 : len(p)-1]
	switch op {
	case "add", "sub", "mul", "div", "fma", "mad", "sqrt":
		if len(mods) != 1 || mods[0] != "rn" {
			return nil, fmt.Errorf("%s: only the .rn form is supported", in.op)
		}
	default:
		if len(mods) != 0 {
			return nil, fmt.Errorf("%s: unsupported modifiers", in.op)
		}
	}
	d := in.args[0]
	if ty.bits == 32 {
		a := func(t *thread, i int) float32 { return math.Float32frombits(uint32(t.val(in.args[i]))) }
		switch op {
		case "add":
			return func(t *thread, in *inst) { t.set(d, canon32(add32(a(t, 1), a(t, 2)))) }, nil
		case "sub":
			return func(t *thread, in *inst) { t.set(d, canon32(sub32(a(t, 1), a(t, 2)))) }, nil
		case "mul":
			return func(t *thread, in *inst) { t.set(d, canon32(mul32(a(t, 1), a(t, 2)))) }, nil
		case "div":
			return func(t *thread, in *inst) { t.set(d, canon32(div32(a(t, 1), a(t, 2)))) }, nil
		case "fma", "mad":
			return func(t *thread, in *inst) { t.set(d, canon32(fma32(a(t, 1), a(t, 2), a(t, 3)))) }, nil
		case "sqrt":
			return func(t *thread, in *inst) { t.set(d, canon32(float32(math.Sqrt(float64(a(t, 1)))))) }, nil
		}
	} else {
		a := func(t *thread, i int) float64 { return math.Float64frombits(t.val(in.args[i])) }
		switch op {
		case "add":
			return func(t *thread, in *inst) { t.set(d, canon64(add64(a(t, 1), a(t, 2)))) }, nil
		case "sub":
			return func(t *thread, in *inst) { t.set(d, canon64(sub64(a(t, 1), a(t, 2)))) }, nil
		case "mul":
			return func(t *thread, in *inst) { t.set(d, canon64(mul64(a(t, 1), a(t, 2)))) }, nil
		case "div":
			return func(t *thread, in *inst) { t.set(d, canon64(div64(a(t, 1), a(t, 2)))) }, nil
		case "fma", "mad":
			return func(t *thread, in *inst) { t.set(d, canon64(math.FMA(a(t, 1), a(t, 2), a(t, 3)))) }, nil
		case "sqrt":
			return func(t *thread, in *inst) { t.set(d, canon64(math.Sqrt(a(t, 1)))) }, nil
		}
	}
	sign := uint64(1) << uint(ty.bits-1)
	switch op {
	case "neg":
		return func(t *thread, in *inst) { t.set(d, t.val(in.args[1])^sign) }, nil
	case "abs":
		return func(t *thread, in *inst) { t.set(d, t.val(in.args[1])&^sign) }, nil
	case "min", "max":
		isMin := op == "min"
		f := ty.format()
		return func(t *thread, in *inst) {
			x, y := fval(t.val(in.args[1]), ty), fval(t.val(in.args[2]), ty)
			r, ok := minmax(x, y, isMin)
			if !ok {
				t.set(d, f.canonicalNaN())
				return
			}
			if ty.bits == 32 {
				t.set(d, uint64(math.Float32bits(float32(r))))
			} else {
				t.set(d, math.Float64bits(r))
			}
		}, nil
	}
	return nil, fmt.Errorf("unsupported instruction %s", in.op)
}

// fval returns a float32 or float64 register value as a float64 (exact).
func fval(v uint64, ty ptype) float64 {
	if ty.bits == 32 {
		return float64(math.Float32frombits(uint32(v)))
	}
	return math.Float64frombits(v)
}

func compileSetp(in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 3 {
		return nil, fmt.Errorf("unsupported setp form %s", in.op)
	}
	if err := needArgs(in, 3); err != nil {
		return nil, err
	}
	ty, err := lastType(p)
	if err != nil {
		return nil, err
	}
	cmp := p[1]
	if ty.kind == 'f' {
		if ty.bits == 16 {
			return nil, fmt.Errorf("unsupported type in %s", in.op)
		}
		var f func(a, b float64) bool
		ordered := func(c func(a, b float64) bool) func(a, b float64) bool { return c }
		unordered := func(c func(a, b float64) bool) func(a, b float64) bool {
			return func(a, b float64) bool { return a != a || b != b || c(a, b) }
		}
		eq := func(a, b float64) bool { return a == b }
		ne := func(a, b float64) bool { return a != b && a == a && b == b }
		lt := func(a, b float64) bool { return a < b }
		le := func(a, b float64) bool { return a <= b }
		gt := func(a, b float64) bool { return a > b }
		ge := func(a, b float64) bool { return a >= b }
		switch cmp {
		case "eq":
			f = ordered(eq)
		case "ne":
			f = ordered(ne)
		case "lt":
			f = ordered(lt)
		case "le":
			f = ordered(le)
		case "gt":
			f = ordered(gt)
		case "ge":
			f = ordered(ge)
		case "equ":
			f = unordered(eq)
		case "neu":
			f = unordered(ne)
		case "ltu":
			f = unordered(lt)
		case "leu":
			f = unordered(le)
		case "gtu":
			f = unordered(gt)
		case "geu":
			f = unordered(ge)
		case "num":
			f = func(a, b float64) bool { return a == a && b == b }
		case "nan":
			f = func(a, b float64) bool { return a != a || b != b }
		default:
			return nil, fmt.Errorf("unsupported comparison %s", cmp)
		}
		return func(t *thread, in *inst) {
			r := f(fval(t.val(in.args[1]), ty), fval(t.val(in.args[2]), ty))
			t.set(in.args[0], b2u(r))
		}, nil
	}
	w := ty.bits
	signed := ty.kind == 's'
	return func(t *thread, in *inst) {
		a, b := mask(t.val(in.args[1]), w), mask(t.val(in.args[2]), w)
		var lt bool
		if signed {
			lt = int64(sext(a, w)) < int64(sext(b, w))
		} else {
			lt = a < b
		}
		eq := a == b
		var r bool
		switch cmp {
		case "eq":
			r = eq
		case "ne":
			r = !eq
		case "lt", "lo":
			r = lt
		case "le", "ls":
			r = lt || eq
		case "gt", "hi":
			r = !lt && !eq
		case "ge", "hs":
			r = !lt
		default:
			faultf("unsupported comparison %s", cmp)
		}
		t.set(in.args[0], b2u(r))
	}, nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// ---- conversions ----

func rmodeOf(s string) (rmode, bool, bool) {
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

func compileCvt(in *inst) (execFn, error) {
	p := in.parts
	if len(p) < 3 {
		return nil, fmt.Errorf("bad cvt")
	}
	if err := needArgs(in, 2); err != nil {
		return nil, err
	}
	dt, ok1 := parseType(p[len(p)-2])
	st, ok2 := parseType(p[len(p)-1])
	if !ok1 || !ok2 || dt.kind == 'p' || st.kind == 'p' {
		return nil, fmt.Errorf("bad cvt types")
	}
	md, integral, hasMode := rn, false, false
	for _, m := range p[1 : len(p)-2] {
		r, in, ok := rmodeOf(m)
		if !ok || hasMode {
			return nil, fmt.Errorf("unsupported cvt modifier .%s", m)
		}
		md, integral, hasMode = r, in, true
	}
	d := in.args[0]
	isF := func(t ptype) bool { return t.kind == 'f' }
	switch {
	case !isF(dt) && !isF(st):
		if hasMode {
			return nil, fmt.Errorf("rounding modifier on an integer conversion")
		}
		return func(t *thread, in *inst) {
			v := ext(t.val(in.args[1]), st.bits, st.kind)
			t.set(d, ext(v, dt.bits, dt.kind))
		}, nil
	case isF(dt) && !isF(st):
		if !hasMode || integral {
			return nil, fmt.Errorf("integer to float conversion needs .rn, .rz, .rm or .rp")
		}
		df := dt.format()
		return func(t *thread, in *inst) {
			v := ext(t.val(in.args[1]), st.bits, st.kind)
			if md == rn && (df == fmtF32 || df == fmtF64) {
				var f float64
				var f32 float32
				if st.kind == 's' {
					f, f32 = float64(int64(v)), float32(int64(v))
				} else {
					f, f32 = float64(v), float32(v)
				}
				if df == fmtF32 {
					t.set(d, uint64(math.Float32bits(f32)))
				} else {
					t.set(d, math.Float64bits(f))
				}
				return
			}
			x := xuint(v)
			if st.kind == 's' {
				x = xint(int64(v))
			}
			t.set(d, df.round(x, md))
		}, nil
	case !isF(dt) && isF(st):
		if !hasMode || !integral {
			return nil, fmt.Errorf("float to integer conversion needs .rni, .rzi, .rmi or .rpi")
		}
		sf := st.format()
		return func(t *thread, in *inst) {
			x := sf.decode(mask(t.val(in.args[1]), st.bits))
			var v uint64
			switch {
			case x.nan:
				v = 0
			default:
				k, ok := uint64(0), false
				if !x.inf {
					k, ok = x.toInteger(md)
				}
				v = saturate(k, ok, x.neg, dt)
			}
			t.set(d, ext(v, dt.bits, dt.kind))
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
		v := mask(t.val(in.args[1]), st.bits)
		switch {
		case integral:
			t.set(d, sf.integral(v, md))
		case sf == fmtF64 && df == fmtF32 && md == rn:
			t.set(d, canon32(float32(math.Float64frombits(v))))
		default:
			t.set(d, df.round(sf.decode(v), md))
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

// compileRsqrt runs rsqrt.approx[.ftz].f32 and .f64 as the correctly rounded reciprocal
// square root: the hardware's approximation (MUFU.RSQ) is within 2^-22.9 of it, and
// code that needs exact results refines it (as sqrt.rn's own sequence does).
func compileRsqrt(in *inst) (execFn, error) {
	p := in.parts
	if len(p) < 3 || p[1] != "approx" || (len(p) == 4 && p[2] != "ftz") || len(p) > 4 {
		return nil, fmt.Errorf("%s: unsupported form", in.op)
	}
	if err := needArgs(in, 2); err != nil {
		return nil, err
	}
	d := in.args[0]
	switch p[len(p)-1] {
	case "f32":
		return func(t *thread, in *inst) {
			x := math.Float32frombits(uint32(t.val(in.args[1])))
			t.set(d, canon32(float32(1/math.Sqrt(float64(x)))))
		}, nil
	case "f64":
		return func(t *thread, in *inst) {
			x := math.Float64frombits(t.val(in.args[1]))
			t.set(d, canon64(1/math.Sqrt(x)))
		}, nil
	}
	return nil, fmt.Errorf("%s: unsupported type", in.op)
}
