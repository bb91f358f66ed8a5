package ptxsim

import (
	"fmt"
	"math/bits"
	"strings"
)

// execFn executes one instruction for thread t.
type execFn = func(t *thread, in *inst)

// compiler compiles one instruction of function f (see "Adding an instruction" in the
// package doc).
type compiler = func(f *Func, in *inst) (execFn, error)

// compilers maps an opcode's first part to its compiler.
var compilers map[string]compiler

func init() {
	compilers = map[string]compiler{
		"mov": compileMov, "ld": compileLd, "st": compileSt, "atom": compileAtom, "red": compileAtom,
		"cvta": compileCvta, "isspacep": compileIsspacep, "fence": compileFence, "membar": compileFence,
		"nanosleep": compileNanosleep,
		"add":       compileArith, "sub": compileArith, "mul": compileArith, "mad": compileArith, "fma": compileArith,
		"div": compileArith, "rem": compileArith, "neg": compileArith, "abs": compileArith, "min": compileArith,
		"max": compileArith, "sqrt": compileArith, "rsqrt": compileArith, "rcp": compileArith, "ex2": compileArith,
		"lg2": compileArith, "sin": compileArith, "cos": compileArith, "tanh": compileArith,
		"copysign": compileCopysign, "testp": compileTestp,
		"and": compileLogic, "or": compileLogic, "xor": compileLogic, "not": compileLogic, "cnot": compileLogic,
		"lop3": compileLop3, "shl": compileShift, "shr": compileShift, "shf": compileShf, "bfe": compileBfe,
		"bfi": compileBfi, "prmt": compilePrmt, "clz": compileBitCount, "popc": compileBitCount,
		"bfind": compileBitCount, "brev": compileBitCount,
		"setp": compileSetp, "selp": compileSelp, "cvt": compileCvt,
		"bra": compileBra, "call": compileCall, "ret": compileRet, "exit": compileRet, "trap": compileTrap,
		"bar": compileBar, "barrier": compileBar, "shfl": compileShfl, "vote": compileVote, "match": compileMatch,
		"redux": compileRedux, "activemask": compileActivemask,
	}
}

// poison is what unspecified integer results (division by zero) are.
const poison = 0xdeadbeefdeadbeef

// compile returns the function executing in.
func (f *Func) compile(in *inst) (execFn, error) {
	c := compilers[in.parts[0]]
	if c == nil {
		return nil, fmt.Errorf("unsupported instruction %s", in.op)
	}
	return c(f, in)
}

// lastType returns the type an opcode ends with.
func lastType(parts []string) (ptype, error) {
	t, ok := parseType(parts[len(parts)-1])
	if !ok {
		return t, fmt.Errorf("no type in %s", strings.Join(parts, "."))
	}
	return t, nil
}

func has(parts []string, m string) bool {
	for _, p := range parts[1:] {
		if p == m {
			return true
		}
	}
	return false
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

// typed checks that in has n operands and ends with a type, and returns it.
func typed(in *inst, n int) (ptype, error) {
	t, err := lastType(in.parts)
	if err == nil {
		err = needArgs(in, n)
	}
	return t, err
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// ---- control ----

func compileBra(f *Func, in *inst) (execFn, error) {
	if len(in.args) != 1 || in.args[0].kind != oSym {
		return nil, fmt.Errorf("bad branch")
	}
	target, ok := f.labels[in.args[0].name]
	if !ok {
		return nil, fmt.Errorf("unknown label %s", in.args[0].name)
	}
	return func(t *thread, in *inst) { t.fr.pc = target - 1 }, nil
}

func compileRet(f *Func, in *inst) (execFn, error) {
	if in.parts[0] == "exit" {
		return func(t *thread, in *inst) { t.done = true }, nil
	}
	return func(t *thread, in *inst) { t.ret() }, nil
}

func compileTrap(f *Func, in *inst) (execFn, error) {
	return func(t *thread, in *inst) { faultf("trap") }, nil
}

func compileCall(f *Func, in *inst) (execFn, error) {
	var rets, args []string
	var name string
	a := in.args
	switch {
	case len(a) == 3 && a[0].kind == oList && a[1].kind == oSym && a[2].kind == oList:
		rets, name, args = a[0].list, a[1].name, a[2].list
	case len(a) == 2 && a[0].kind == oSym && a[1].kind == oList:
		name, args = a[0].name, a[1].list
	case len(a) == 2 && a[0].kind == oList && a[1].kind == oSym:
		rets, name = a[0].list, a[1].name
	case len(a) == 1 && a[0].kind == oSym:
		name = a[0].name
	default:
		return nil, fmt.Errorf("unsupported call form")
	}
	in.callee = name
	return func(t *thread, in *inst) { t.call(t.mod.funcs[name], args, rets) }, nil
}

// ---- data movement ----

func compileMov(f *Func, in *inst) (execFn, error) {
	t0, err := typed(in, 2)
	if err != nil {
		return nil, err
	}
	w := t0.bits
	d, s := in.args[0], in.args[1]
	switch {
	case d.kind == oVec: // mov.b64 {lo, hi}, x
		hw := w / len(d.vec)
		return func(t *thread, in *inst) {
			v := t.val(&s)
			for i, r := range d.vec {
				t.setReg(r, mask(v>>uint(i*hw), hw))
			}
		}, nil
	case s.kind == oVec: // mov.b64 x, {lo, hi}
		hw := w / len(s.vec)
		return func(t *thread, in *inst) {
			var v uint64
			for i, r := range s.vec {
				v |= mask(t.fr.r[r], hw) << uint(i*hw)
			}
			t.set(&d, v)
		}, nil
	}
	return func(t *thread, in *inst) { t.set(&d, mask(t.val(&s), w)) }, nil
}

func compileSelp(f *Func, in *inst) (execFn, error) {
	if _, err := typed(in, 4); err != nil {
		return nil, err
	}
	return func(t *thread, in *inst) {
		if t.val(&in.args[3])&1 != 0 {
			t.set(&in.args[0], t.val(&in.args[1]))
		} else {
			t.set(&in.args[0], t.val(&in.args[2]))
		}
	}, nil
}

// ---- integers ----

// compileArith dispatches the arithmetic opcodes shared by integers and floats.
func compileArith(f *Func, in *inst) (execFn, error) {
	ty, err := lastType(in.parts)
	if err != nil {
		return nil, err
	}
	if ty.kind == 'f' {
		return compileFloat(in, ty)
	}
	if err := needArgs(in, arity(in.parts[0])); err != nil {
		return nil, err
	}
	return compileInt(in, ty)
}

func arity(op string) int {
	switch op {
	case "neg", "abs", "sqrt", "rsqrt", "rcp", "ex2", "lg2", "sin", "cos", "tanh":
		return 2
	case "mad", "fma":
		return 4
	}
	return 3
}

func compileInt(in *inst, ty ptype) (execFn, error) {
	p := in.parts
	w := ty.bits
	signed := ty.kind == 's'
	x := func(t *thread, i int) uint64 { return ext(t.val(&in.args[i]), w, ty.kind) }
	mode, sat := "", false
	for _, m := range p[1 : len(p)-1] {
		switch {
		case m == "lo" || m == "hi" || m == "wide":
			mode = m
		case m == "sat" && signed && w == 32 && (p[0] == "add" || p[0] == "sub"):
			sat = true
		default:
			return nil, fmt.Errorf("unsupported modifier .%s", m)
		}
	}
	// mulOf returns the product as the mode selects (a, b extended to 64 bits).
	mulOf := func(a, b uint64) uint64 {
		switch {
		case mode == "hi" && w == 64:
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
		case mode == "hi":
			return (a * b) >> uint(w) // the full product fits 64 bits
		}
		return a * b
	}
	d := in.args[0]
	switch p[0] {
	case "add", "sub":
		neg := p[0] == "sub"
		return func(t *thread, in *inst) {
			b := x(t, 2)
			if neg {
				b = -b
			}
			r := x(t, 1) + b
			if sat && int64(r) != int64(int32(r)) {
				r = uint64(int64(int32(uint32(min(max(int64(r), -1<<31), 1<<31-1)))))
			}
			t.set(&d, r)
		}, nil
	case "mul":
		if mode == "wide" && w == 64 {
			return nil, fmt.Errorf("mul.wide of 64 bits")
		}
		return func(t *thread, in *inst) { t.set(&d, mulOf(x(t, 1), x(t, 2))) }, nil
	case "mad":
		return func(t *thread, in *inst) {
			c := t.val(&in.args[3])
			if mode != "wide" {
				c = ext(c, w, ty.kind)
			}
			t.set(&d, mulOf(x(t, 1), x(t, 2))+c)
		}, nil
	case "div", "rem":
		rem := p[0] == "rem"
		return func(t *thread, in *inst) {
			a, b := x(t, 1), x(t, 2)
			minInt := uint64(1) << uint(w-1)
			if mask(b, w) == 0 || (signed && mask(a, w) == minInt && mask(b, w) == mask(^uint64(0), w)) {
				t.set(&d, poison)
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
			t.set(&d, r)
		}, nil
	case "neg":
		return func(t *thread, in *inst) { t.set(&d, -x(t, 1)) }, nil
	case "abs":
		return func(t *thread, in *inst) {
			a := x(t, 1)
			if signed && int64(a) < 0 {
				a = -a
			}
			t.set(&d, a)
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
				t.set(&d, a)
			} else {
				t.set(&d, b)
			}
		}, nil
	}
	return nil, fmt.Errorf("unsupported instruction %s", in.op)
}

func compileLogic(f *Func, in *inst) (execFn, error) {
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
			return func(t *thread, in *inst) { t.set(&in.args[0], b2u(mask(t.val(&in.args[1]), w) == 0)) }, nil
		}
		return func(t *thread, in *inst) { t.set(&in.args[0], mask(^t.val(&in.args[1]), w)) }, nil
	}
	if err := needArgs(in, 3); err != nil {
		return nil, err
	}
	var g func(a, b uint64) uint64
	switch op {
	case "and":
		g = func(a, b uint64) uint64 { return a & b }
	case "or":
		g = func(a, b uint64) uint64 { return a | b }
	case "xor":
		g = func(a, b uint64) uint64 { return a ^ b }
	}
	return func(t *thread, in *inst) { t.set(&in.args[0], mask(g(t.val(&in.args[1]), t.val(&in.args[2])), w)) }, nil
}

// compileLop3 compiles lop3.b32 d, a, b, c, immLut: bit i of d is bit (a_i<<2|b_i<<1|c_i)
// of immLut.
func compileLop3(f *Func, in *inst) (execFn, error) {
	if in.op != "lop3.b32" || len(in.args) != 5 || in.args[4].kind != oImm {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	lut := in.args[4].imm
	return func(t *thread, in *inst) {
		a, b, c := t.val(&in.args[1]), t.val(&in.args[2]), t.val(&in.args[3])
		var d uint64
		for k := range 8 {
			if lut>>k&1 != 0 {
				m := ^uint64(0)
				for j, v := range []uint64{c, b, a} {
					if k>>j&1 == 0 {
						v = ^v
					}
					m &= v
				}
				d |= m
			}
		}
		t.set(&in.args[0], mask(d, 32))
	}, nil
}

func compileShift(f *Func, in *inst) (execFn, error) {
	ty, err := typed(in, 3)
	if err != nil {
		return nil, err
	}
	w := ty.bits
	left := in.parts[0] == "shl"
	arith := !left && ty.kind == 's'
	return func(t *thread, in *inst) {
		a := mask(t.val(&in.args[1]), w)
		n := mask(t.val(&in.args[2]), 32) // a .u32 count; counts past the width clamp
		var r uint64
		switch {
		case arith:
			r = uint64(int64(sext(a, w)) >> min(n, uint64(w-1)))
		case n >= uint64(w):
			r = 0
		case left:
			r = a << n
		default:
			r = a >> n
		}
		t.set(&in.args[0], mask(r, w))
	}, nil
}

// compileShf compiles shf.{l,r}.{wrap,clamp}.b32 d, a, b, c: the funnel shift of b:a.
func compileShf(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 4 || p[3] != "b32" || (p[2] != "wrap" && p[2] != "clamp") || (p[1] != "l" && p[1] != "r") || len(in.args) != 4 {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	left, wrap := p[1] == "l", p[2] == "wrap"
	return func(t *thread, in *inst) {
		v := mask(t.val(&in.args[2]), 32)<<32 | mask(t.val(&in.args[1]), 32)
		n := mask(t.val(&in.args[3]), 32)
		if wrap {
			n &= 31
		} else {
			n = min(n, 32)
		}
		if left {
			t.set(&in.args[0], v<<n>>32)
		} else {
			t.set(&in.args[0], mask(v>>n, 32))
		}
	}, nil
}

func compileBfe(f *Func, in *inst) (execFn, error) {
	ty, err := typed(in, 4)
	if err != nil {
		return nil, err
	}
	w := ty.bits
	return func(t *thread, in *inst) {
		a := mask(t.val(&in.args[1]), w)
		pos := int(t.val(&in.args[2]) & 0xff)
		n := int(t.val(&in.args[3]) & 0xff)
		if n == 0 {
			t.set(&in.args[0], 0)
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
		t.set(&in.args[0], d)
	}, nil
}

// compileBfi compiles bfi.b32/b64 f, a, b, c, d: b with c bits from bit c replaced by
// the low bits of a.
func compileBfi(f *Func, in *inst) (execFn, error) {
	ty, err := typed(in, 5)
	if err != nil {
		return nil, err
	}
	w := ty.bits
	return func(t *thread, in *inst) {
		a, b := t.val(&in.args[1]), t.val(&in.args[2])
		pos, n := t.val(&in.args[3])&0xff, t.val(&in.args[4])&0xff
		for i := uint64(0); i < n && pos+i < uint64(w); i++ {
			b = b&^(1<<(pos+i)) | (a>>i&1)<<(pos+i)
		}
		t.set(&in.args[0], mask(b, w))
	}, nil
}

func compilePrmt(f *Func, in *inst) (execFn, error) {
	if in.op != "prmt.b32" {
		return nil, fmt.Errorf("unsupported instruction %s", in.op)
	}
	if err := needArgs(in, 4); err != nil {
		return nil, err
	}
	return func(t *thread, in *inst) {
		src := mask(t.val(&in.args[1]), 32) | mask(t.val(&in.args[2]), 32)<<32
		c := t.val(&in.args[3])
		var d uint64
		for n := 0; n < 4; n++ {
			nib := c >> uint(4*n) & 0xf
			b := src >> (8 * (nib & 7)) & 0xff
			if nib&8 != 0 {
				b = 0xff * (b >> 7)
			}
			d |= b << uint(8*n)
		}
		t.set(&in.args[0], d)
	}, nil
}

// compileBitCount compiles clz, popc, bfind{.shiftamt} and brev.
func compileBitCount(f *Func, in *inst) (execFn, error) {
	ty, err := typed(in, 2)
	if err != nil {
		return nil, err
	}
	w := ty.bits
	src := func(t *thread) uint64 { return mask(t.val(&in.args[1]), w) }
	switch in.parts[0] {
	case "clz":
		return func(t *thread, in *inst) { t.set(&in.args[0], uint64(bits.LeadingZeros64(src(t))-(64-w))) }, nil
	case "popc":
		return func(t *thread, in *inst) { t.set(&in.args[0], uint64(bits.OnesCount64(src(t)))) }, nil
	case "brev":
		return func(t *thread, in *inst) { t.set(&in.args[0], bits.Reverse64(src(t))>>(64-w)) }, nil
	}
	shiftamt := has(in.parts, "shiftamt")
	return func(t *thread, in *inst) { // bfind: the most significant non-sign bit
		a := src(t)
		if ty.kind == 's' && a>>(w-1) != 0 {
			a = mask(^a, w)
		}
		r := uint64(0xffffffff)
		if a != 0 {
			r = uint64(63 - bits.LeadingZeros64(a))
			if shiftamt {
				r = uint64(w-1) - r
			}
		}
		t.set(&in.args[0], r)
	}, nil
}

// ---- comparisons ----

func compileSetp(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if len(p) != 3 {
		return nil, fmt.Errorf("unsupported setp form %s", in.op)
	}
	ty, err := typed(in, 3)
	if err != nil {
		return nil, err
	}
	d := in.args[0]
	if d.kind == oVec {
		return nil, fmt.Errorf("unsupported setp form %s", in.op)
	}
	cmp := p[1]
	if ty.kind == 'f' {
		c, ok := floatCmp[cmp]
		if !ok {
			return nil, fmt.Errorf("unsupported comparison %s", cmp)
		}
		return func(t *thread, in *inst) {
			a, b := fval(t.val(&in.args[1]), ty), fval(t.val(&in.args[2]), ty)
			nan := a != a || b != b
			t.set(&d, b2u(nan && c.unordered || !nan && c.cmp(a, b)))
		}, nil
	}
	w := ty.bits
	signed := ty.kind == 's'
	var c func(lt, eq bool) bool
	switch cmp {
	case "eq":
		c = func(lt, eq bool) bool { return eq }
	case "ne":
		c = func(lt, eq bool) bool { return !eq }
	case "lt", "lo":
		c = func(lt, eq bool) bool { return lt }
	case "le", "ls":
		c = func(lt, eq bool) bool { return lt || eq }
	case "gt", "hi":
		c = func(lt, eq bool) bool { return !lt && !eq }
	case "ge", "hs":
		c = func(lt, eq bool) bool { return !lt }
	default:
		return nil, fmt.Errorf("unsupported comparison %s", cmp)
	}
	return func(t *thread, in *inst) {
		a, b := mask(t.val(&in.args[1]), w), mask(t.val(&in.args[2]), w)
		lt := a < b
		if signed {
			lt = int64(sext(a, w)) < int64(sext(b, w))
		}
		t.set(&d, b2u(c(lt, a == b)))
	}, nil
}

// floatCmp is setp's float comparisons: the ordered ones are false with a NaN operand,
// the unordered ones (…u, nan) true.
var floatCmp = map[string]struct {
	cmp       func(a, b float64) bool
	unordered bool
}{
	"eq": {func(a, b float64) bool { return a == b }, false}, "ne": {func(a, b float64) bool { return a != b }, false},
	"lt": {func(a, b float64) bool { return a < b }, false}, "le": {func(a, b float64) bool { return a <= b }, false},
	"gt": {func(a, b float64) bool { return a > b }, false}, "ge": {func(a, b float64) bool { return a >= b }, false},
	"equ": {func(a, b float64) bool { return a == b }, true}, "neu": {func(a, b float64) bool { return a != b }, true},
	"ltu": {func(a, b float64) bool { return a < b }, true}, "leu": {func(a, b float64) bool { return a <= b }, true},
	"gtu": {func(a, b float64) bool { return a > b }, true}, "geu": {func(a, b float64) bool { return a >= b }, true},
	"num": {func(a, b float64) bool { return true }, false}, "nan": {func(a, b float64) bool { return false }, true},
}
