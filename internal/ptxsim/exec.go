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
		"nanosleep": compileNanosleep, "griddepcontrol": compileGridDep, "prefetch": compilePrefetch,
		"add": compileArith, "sub": compileArith, "mul": compileArith, "mad": compileArith, "fma": compileArith,
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
		"redux": compileRedux, "activemask": compileActivemask, "createpolicy": compileCreatepolicy,
		"cp": compileCpAsync, "ldmatrix": compileLdmatrix, "mma": compileMma,
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
	if last := in.parts[len(in.parts)-1]; last == "f16x2" || last == "bf16x2" {
		return compilePacked(in, ptype{16, 'f', last == "bf16x2"})
	}
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
	w, k := ty.bits, ty.kind
	signed := k == 's'
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
	// The hot forms are written out (no helper closures): under the race detector
	// every call costs.
	d, a, b := &in.args[0], &in.args[1], &in.args[min(2, len(in.args)-1)]
	hi := func(a, b uint64) uint64 { // mul.hi: a, b extended to 64 bits
		if w < 64 {
			return (a * b) >> uint(w) // the full product fits 64 bits
		}
		h, _ := bits.Mul64(a, b)
		if signed && int64(a) < 0 {
			h -= b
		}
		if signed && int64(b) < 0 {
			h -= a
		}
		return h
	}
	switch op := p[0]; {
	case (op == "add" || op == "sub") && sat:
		neg := op == "sub"
		return func(t *thread, in *inst) {
			y := ext(t.val(b), w, k)
			if neg {
				y = -y
			}
			r := int64(ext(t.val(a), w, k) + y)
			t.set(d, uint64(min(max(r, -1<<31), 1<<31-1)))
		}, nil
	case op == "add":
		return func(t *thread, in *inst) { t.set(d, t.val(a)+t.val(b)) }, nil
	case op == "sub":
		return func(t *thread, in *inst) { t.set(d, t.val(a)-t.val(b)) }, nil
	case op == "mul" && mode == "wide" && w == 64:
		return nil, fmt.Errorf("mul.wide of 64 bits")
	case op == "mul" && mode == "hi":
		return func(t *thread, in *inst) { t.set(d, hi(ext(t.val(a), w, k), ext(t.val(b), w, k))) }, nil
	case op == "mul":
		return func(t *thread, in *inst) { t.set(d, ext(t.val(a), w, k)*ext(t.val(b), w, k)) }, nil
	case op == "mad":
		c := &in.args[3]
		return func(t *thread, in *inst) {
			x, y, z := ext(t.val(a), w, k), ext(t.val(b), w, k), t.val(c)
			if mode != "wide" {
				z = ext(z, w, k)
			}
			if mode == "hi" {
				t.set(d, hi(x, y)+z)
			} else {
				t.set(d, x*y+z)
			}
		}, nil
	case op == "div", op == "rem":
		rem := op == "rem"
		return func(t *thread, in *inst) {
			x, y := ext(t.val(a), w, k), ext(t.val(b), w, k)
			if mask(y, w) == 0 || (signed && mask(x, w) == 1<<uint(w-1) && mask(y, w) == mask(^uint64(0), w)) {
				t.set(d, poison)
				return
			}
			var r uint64
			switch {
			case signed && rem:
				r = uint64(int64(x) % int64(y))
			case signed:
				r = uint64(int64(x) / int64(y))
			case rem:
				r = x % y
			default:
				r = x / y
			}
			t.set(d, r)
		}, nil
	case op == "neg":
		return func(t *thread, in *inst) { t.set(d, -t.val(a)) }, nil
	case op == "abs":
		return func(t *thread, in *inst) {
			x := ext(t.val(a), w, k)
			if signed && int64(x) < 0 {
				x = -x
			}
			t.set(d, x)
		}, nil
	case op == "min", op == "max":
		isMin := op == "min"
		return func(t *thread, in *inst) {
			x, y := ext(t.val(a), w, k), ext(t.val(b), w, k)
			less := x < y
			if signed {
				less = int64(x) < int64(y)
			}
			if less == isMin {
				t.set(d, x)
			} else {
				t.set(d, y)
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
	n := 3
	if op == "not" || op == "cnot" {
		n = 2
	}
	if err := needArgs(in, n); err != nil {
		return nil, err
	}
	d, a, b := &in.args[0], &in.args[1], &in.args[n-1]
	switch op {
	case "cnot":
		return func(t *thread, in *inst) { t.set(d, b2u(mask(t.val(a), w) == 0)) }, nil
	case "not":
		return func(t *thread, in *inst) { t.set(d, ^t.val(a)) }, nil
	case "and":
		return func(t *thread, in *inst) { t.set(d, t.val(a)&t.val(b)) }, nil
	case "or":
		return func(t *thread, in *inst) { t.set(d, t.val(a)|t.val(b)) }, nil
	}
	return func(t *thread, in *inst) { t.set(d, t.val(a)^t.val(b)) }, nil
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
	if len(p) == 4 {
		// setp.CmpOp.BoolOp.type d, a, b, {!}c: the comparison combined with c.
		bop := p[2]
		if bop != "and" && bop != "or" && bop != "xor" || len(in.args) != 4 {
			return nil, fmt.Errorf("unsupported setp form %s", in.op)
		}
		c := &in.args[3]
		inner := *in
		inner.parts = []string{p[0], p[1], p[3]}
		inner.args = in.args[:3]
		cmp, err := compileSetp(f, &inner)
		if err != nil {
			return nil, err
		}
		d := &in.args[0]
		return func(t *thread, in *inst) {
			q := t.val(c) & 1 // read before d is written: d may be c
			cmp(t, &inner)
			r := t.val(d) & 1
			switch bop {
			case "and":
				r &= q
			case "or":
				r |= q
			default:
				r ^= q
			}
			t.set(d, r)
		}, nil
	}
	if len(p) != 3 {
		return nil, fmt.Errorf("unsupported setp form %s", in.op)
	}
	ty, err := typed(in, 3)
	if err != nil {
		return nil, err
	}
	d, a, b := &in.args[0], &in.args[1], &in.args[2]
	if d.kind == oVec {
		return nil, fmt.Errorf("unsupported setp form %s", in.op)
	}
	// the results for a < b, a == b, a > b, and unordered (a NaN operand, floats)
	cmp, float := p[1], ty.kind == 'f'
	lt, eq, gt, un := false, false, false, false
	if float && strings.HasSuffix(cmp, "u") {
		cmp, un = cmp[:len(cmp)-1], true
	}
	switch cmp {
	case "eq":
		eq = true
	case "ne":
		lt, gt = true, true
	case "lt", "lo":
		lt = true
	case "le", "ls":
		lt, eq = true, true
	case "gt", "hi":
		gt = true
	case "ge", "hs":
		eq, gt = true, true
	case "num":
		lt, eq, gt = true, true, true
	case "nan":
		un = true
	default:
		return nil, fmt.Errorf("unsupported comparison %s", p[1])
	}
	if float && (cmp == "lo" || cmp == "ls" || cmp == "hi" || cmp == "hs") || !float && (cmp == "num" || cmp == "nan") {
		return nil, fmt.Errorf("unsupported comparison %s for %s", p[1], p[2])
	}
	if float {
		return func(t *thread, in *inst) {
			x, y := fval(t.val(a), ty), fval(t.val(b), ty)
			switch {
			case x != x || y != y:
				t.set(d, b2u(un))
			case x == y:
				t.set(d, b2u(eq))
			case x < y:
				t.set(d, b2u(lt))
			default:
				t.set(d, b2u(gt))
			}
		}, nil
	}
	w, k := ty.bits, ty.kind
	return func(t *thread, in *inst) {
		x, y := ext(t.val(a), w, k), ext(t.val(b), w, k)
		less := x < y
		if k == 's' {
			less = int64(x) < int64(y)
		}
		switch {
		case x == y:
			t.set(d, b2u(eq))
		case less:
			t.set(d, b2u(lt))
		default:
			t.set(d, b2u(gt))
		}
	}, nil
}
