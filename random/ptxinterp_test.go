package random

// A small interpreter for the subset of PTX that ptx.go emits. It runs a kernel's text one
// thread at a time (the kernels use no shared memory or barriers), so a test can compare
// what the PTX computes with the Go code bit for bit on a machine without a GPU. Each
// instruction's semantics follow the PTX ISA 7.8 manual; floating-point instructions with
// .rn are IEEE 754 operations, done here with Go's IEEE float32/float64 arithmetic and
// fma32 (itself checked against math/big).

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
)

type opnd struct {
	kind int // oReg, oImm, oVec, oMem, oSpecial, oLabel
	reg  int
	neg  bool
	imm  uint64
	vec  []int
	off  int64
	name string
}

const (
	oReg = iota
	oImm
	oVec
	oMem
	oSpecial
	oLabel
	oParam
)

type pinst struct {
	text  string
	guard int // register index or -1
	gneg  bool
	op    string
	parts []string
	args  []opnd
	exec  func(t *pthread, in *pinst)
}

type pkernel struct {
	name   string
	params []string
	nregs  int
	regIdx map[string]int
	prog   []*pinst
	labels map[string]int
}

type pmem interface {
	store(addr uint64, b []byte)
}

type pthread struct {
	k       *pkernel
	r       []uint64
	params  map[string]uint64
	special map[string]uint64
	mem     pmem
	pc      int
	steps   int
}

func parsePTX(src string) (*pkernel, error) {
	k := &pkernel{regIdx: map[string]int{}, labels: map[string]int{}}
	var stmts []string
	for _, line := range strings.Split(src, "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		switch {
		case strings.HasPrefix(line, ".visible .entry"):
			name := strings.TrimPrefix(line, ".visible .entry ")
			k.name = strings.TrimSuffix(name, "(")
			continue
		case strings.HasPrefix(line, ".param"):
			f := strings.Fields(strings.TrimSuffix(line, ","))
			k.params = append(k.params, f[2])
			continue
		case strings.HasPrefix(line, ".reg"):
			f := strings.Fields(strings.TrimSuffix(line, ";"))
			d := f[2] // %r<N>
			lt := strings.Index(d, "<")
			prefix := d[:lt]
			n, err := strconv.Atoi(d[lt+1 : len(d)-1])
			if err != nil {
				return nil, err
			}
			for i := 0; i < n; i++ {
				k.regIdx[fmt.Sprintf("%s%d", prefix, i)] = k.nregs
				k.nregs++
			}
			continue
		case strings.HasPrefix(line, "."), line == "{", line == "}", line == ")":
			continue
		case strings.HasSuffix(line, ":"):
			k.labels[strings.TrimSuffix(line, ":")] = len(stmts)
			continue
		}
		stmts = append(stmts, strings.TrimSuffix(line, ";"))
	}
	for _, s := range stmts {
		in, err := k.parseInst(s)
		if err != nil {
			return nil, fmt.Errorf("%q: %v", s, err)
		}
		k.prog = append(k.prog, in)
	}
	return k, nil
}

func splitOperands(s string) []string {
	var out []string
	depth := 0
	start := 0
	for i, c := range s {
		switch c {
		case '{', '[':
			depth++
		case '}', ']':
			depth--
		case ',':
			if depth == 0 {
				out = append(out, strings.TrimSpace(s[start:i]))
				start = i + 1
			}
		}
	}
	if t := strings.TrimSpace(s[start:]); t != "" {
		out = append(out, t)
	}
	return out
}

func (k *pkernel) parseOperand(s string) (opnd, error) {
	switch {
	case strings.HasPrefix(s, "{"):
		var o opnd
		o.kind = oVec
		for _, r := range strings.Split(strings.Trim(s, "{}"), ",") {
			i, ok := k.regIdx[strings.TrimSpace(r)]
			if !ok {
				return o, fmt.Errorf("unknown register %q", r)
			}
			o.vec = append(o.vec, i)
		}
		return o, nil
	case strings.HasPrefix(s, "["):
		in := strings.Trim(s, "[]")
		var o opnd
		if i := strings.Index(in, "+"); i >= 0 {
			off, err := strconv.ParseInt(in[i+1:], 0, 64)
			if err != nil {
				return o, err
			}
			o.off = off
			in = in[:i]
		}
		if r, ok := k.regIdx[in]; ok {
			o.kind, o.reg = oMem, r
			return o, nil
		}
		o.kind, o.name = oParam, in
		return o, nil
	case strings.HasPrefix(s, "%tid") || strings.HasPrefix(s, "%ntid") || strings.HasPrefix(s, "%ctaid") || strings.HasPrefix(s, "%nctaid"):
		return opnd{kind: oSpecial, name: s}, nil
	case strings.HasPrefix(s, "%") || strings.HasPrefix(s, "!%"):
		neg := strings.HasPrefix(s, "!")
		i, ok := k.regIdx[strings.TrimPrefix(s, "!")]
		if !ok {
			return opnd{}, fmt.Errorf("unknown register %q", s)
		}
		return opnd{kind: oReg, reg: i, neg: neg}, nil
	case strings.HasPrefix(s, "0f"):
		v, err := strconv.ParseUint(s[2:], 16, 32)
		return opnd{kind: oImm, imm: v}, err
	case strings.HasPrefix(s, "0d"):
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return opnd{kind: oImm, imm: v}, err
	case strings.HasPrefix(s, "$"):
		return opnd{kind: oLabel, name: s}, nil
	}
	v, err := strconv.ParseUint(s, 0, 64)
	if err != nil {
		iv, err2 := strconv.ParseInt(s, 0, 64)
		if err2 != nil {
			return opnd{}, err
		}
		v = uint64(iv)
	}
	return opnd{kind: oImm, imm: v}, nil
}

func (k *pkernel) parseInst(s string) (*pinst, error) {
	in := &pinst{text: s, guard: -1}
	if strings.HasPrefix(s, "@") {
		sp := strings.IndexByte(s, ' ')
		g := s[1:sp]
		if strings.HasPrefix(g, "!") {
			in.gneg = true
			g = g[1:]
		}
		in.guard = k.regIdx[g]
		s = strings.TrimSpace(s[sp+1:])
	}
	op, rest, _ := strings.Cut(s, " ")
	in.op = op
	in.parts = strings.Split(op, ".")
	for _, a := range splitOperands(rest) {
		o, err := k.parseOperand(a)
		if err != nil {
			return nil, err
		}
		in.args = append(in.args, o)
	}
	ex, err := compileInst(in)
	if err != nil {
		return nil, err
	}
	in.exec = ex
	return in, nil
}

func (t *pthread) val(o opnd) uint64 {
	switch o.kind {
	case oReg:
		v := t.r[o.reg]
		if o.neg {
			v ^= 1
		}
		return v
	case oImm:
		return o.imm
	case oSpecial:
		return t.special[o.name]
	case oParam:
		return t.params[o.name]
	}
	panic(fmt.Sprintf("operand %+v has no value", o))
}

func width(typ string) int {
	switch typ {
	case "b8", "u8", "s8":
		return 8
	case "b16", "u16", "s16", "f16":
		return 16
	case "b32", "u32", "s32", "f32", "pred":
		return 32
	}
	return 64
}

func mask(v uint64, w int) uint64 {
	if w >= 64 {
		return v
	}
	return v & (1<<uint(w) - 1)
}

func sext(v uint64, w int) int64 {
	return int64(v<<uint(64-w)) >> uint(64-w)
}

func f32of(v uint64) float32   { return math.Float32frombits(uint32(v)) }
func f64of(v uint64) float64   { return math.Float64frombits(v) }
func fbits32(x float32) uint64 { return uint64(math.Float32bits(x)) }
func fbits64(x float64) uint64 { return math.Float64bits(x) }

// compileInst returns the function that executes in.
func compileInst(in *pinst) (func(t *pthread, in *pinst), error) {
	p := in.parts
	last := p[len(p)-1]
	w := width(last)
	set := func(t *pthread, i int, v uint64) { t.r[in.args[i].reg] = mask(v, w) }
	arith := func(f func(a, b uint64) uint64) func(t *pthread, in *pinst) {
		return func(t *pthread, in *pinst) {
			set(t, 0, f(mask(t.val(in.args[1]), w), mask(t.val(in.args[2]), w)))
		}
	}
	switch p[0] {
	case "ld":
		return func(t *pthread, in *pinst) { t.r[in.args[0].reg] = t.val(in.args[1]) }, nil
	case "mov":
		d, s := in.args[0], in.args[1]
		switch {
		case d.kind == oVec: // unpack
			hw := w / len(d.vec)
			return func(t *pthread, in *pinst) {
				v := t.val(s)
				for i, r := range d.vec {
					t.r[r] = mask(v>>uint(i*hw), hw)
				}
			}, nil
		case s.kind == oVec: // pack
			hw := w / len(s.vec)
			return func(t *pthread, in *pinst) {
				var v uint64
				for i, r := range s.vec {
					v |= mask(t.r[r], hw) << uint(i*hw)
				}
				t.r[d.reg] = v
			}, nil
		}
		return func(t *pthread, in *pinst) { set(t, 0, t.val(s)) }, nil
	case "add", "sub", "mul", "mad", "and", "or", "xor", "shl", "shr", "neg", "rem", "div", "fma", "sqrt":
		if last == "f32" || last == "f64" {
			return floatInst(in)
		}
		if last == "pred" {
			switch p[0] {
			case "and":
				return func(t *pthread, in *pinst) { t.r[in.args[0].reg] = t.val(in.args[1]) & t.val(in.args[2]) }, nil
			case "or":
				return func(t *pthread, in *pinst) { t.r[in.args[0].reg] = t.val(in.args[1]) | t.val(in.args[2]) }, nil
			}
			return nil, fmt.Errorf("unsupported %s", in.op)
		}
		switch p[0] {
		case "add":
			return arith(func(a, b uint64) uint64 { return a + b }), nil
		case "sub":
			return arith(func(a, b uint64) uint64 { return a - b }), nil
		case "and":
			return arith(func(a, b uint64) uint64 { return a & b }), nil
		case "or":
			return arith(func(a, b uint64) uint64 { return a | b }), nil
		case "xor":
			return arith(func(a, b uint64) uint64 { return a ^ b }), nil
		case "shl":
			return arith(func(a, b uint64) uint64 { return a << b }), nil
		case "shr":
			if last[0] == 's' {
				return arith(func(a, b uint64) uint64 { return uint64(sext(a, w) >> b) }), nil
			}
			return arith(func(a, b uint64) uint64 { return a >> b }), nil
		case "neg":
			return func(t *pthread, in *pinst) { set(t, 0, -t.val(in.args[1])) }, nil
		case "rem":
			if last[0] == 's' {
				return nil, fmt.Errorf("unsupported %s", in.op)
			}
			return arith(func(a, b uint64) uint64 { return a % b }), nil
		case "mul", "mad":
			mode := p[1]
			mul := func(a, b uint64) uint64 {
				switch mode {
				case "lo":
					return a * b
				case "hi":
					if w == 32 {
						return (a * b) >> 32
					}
					h, _ := bits.Mul64(a, b)
					return h
				case "wide":
					return a * b // w == 32: full 64-bit product
				}
				panic(mode)
			}
			if mode == "wide" {
				if last != "u32" {
					return nil, fmt.Errorf("unsupported %s", in.op)
				}
				return func(t *pthread, in *pinst) {
					t.r[in.args[0].reg] = mask(t.val(in.args[1]), 32) * mask(t.val(in.args[2]), 32)
				}, nil
			}
			if p[0] == "mad" {
				return func(t *pthread, in *pinst) {
					set(t, 0, mul(mask(t.val(in.args[1]), w), mask(t.val(in.args[2]), w))+t.val(in.args[3]))
				}, nil
			}
			return arith(mul), nil
		}
	case "not":
		return func(t *pthread, in *pinst) { t.r[in.args[0].reg] = t.val(in.args[1]) ^ 1 }, nil
	case "setp":
		cmp := p[1]
		return func(t *pthread, in *pinst) {
			a, b := mask(t.val(in.args[1]), w), mask(t.val(in.args[2]), w)
			var lt, eq bool
			if last[0] == 's' {
				lt = sext(a, w) < sext(b, w)
			} else {
				lt = a < b
			}
			eq = a == b
			var r bool
			switch cmp {
			case "lt":
				r = lt
			case "le":
				r = lt || eq
			case "gt":
				r = !lt && !eq
			case "ge":
				r = !lt
			case "eq":
				r = eq
			case "ne":
				r = !eq
			default:
				panic(cmp)
			}
			t.r[in.args[0].reg] = 0
			if r {
				t.r[in.args[0].reg] = 1
			}
		}, nil
	case "selp":
		return func(t *pthread, in *pinst) {
			if t.val(in.args[3]) != 0 {
				set(t, 0, t.val(in.args[1]))
			} else {
				set(t, 0, t.val(in.args[2]))
			}
		}, nil
	case "cvt":
		var dt, st string
		if p[1] == "rn" {
			dt, st = p[2], p[3]
		} else {
			dt, st = p[1], p[2]
		}
		var f func(v uint64) uint64
		switch dt + "." + st {
		case "u32.u64":
			f = func(v uint64) uint64 { return mask(v, 32) }
		case "u64.u32":
			f = func(v uint64) uint64 { return mask(v, 32) }
		case "f32.u32":
			f = func(v uint64) uint64 { return fbits32(float32(uint32(v))) }
		case "f32.s32":
			f = func(v uint64) uint64 { return fbits32(float32(int32(uint32(v)))) }
		case "f64.u64":
			f = func(v uint64) uint64 { return fbits64(float64(v)) }
		case "f64.s64":
			f = func(v uint64) uint64 { return fbits64(float64(int64(v))) }
		case "f16.f32":
			f = func(v uint64) uint64 { return uint64(f32ToF16(f32of(v))) }
		default:
			return nil, fmt.Errorf("unsupported %s", in.op)
		}
		return func(t *pthread, in *pinst) { t.r[in.args[0].reg] = f(t.val(in.args[1])) }, nil
	case "st":
		if p[1] != "global" {
			return nil, fmt.Errorf("unsupported %s", in.op)
		}
		n := 1
		if strings.HasPrefix(p[2], "v") {
			n, _ = strconv.Atoi(p[2][1:])
		}
		bw := w / 8
		return func(t *pthread, in *pinst) {
			addr := t.r[in.args[0].reg] + uint64(in.args[0].off)
			if n > 1 && addr%uint64(n*bw) != 0 {
				panic(fmt.Sprintf("misaligned vector store at %#x", addr))
			}
			if addr%uint64(bw) != 0 {
				panic(fmt.Sprintf("misaligned store at %#x", addr))
			}
			var regs []uint64
			if n == 1 {
				regs = []uint64{t.val(in.args[1])}
			} else {
				for _, r := range in.args[1].vec {
					regs = append(regs, t.r[r])
				}
			}
			buf := make([]byte, 0, n*bw)
			for _, v := range regs {
				for i := 0; i < bw; i++ {
					buf = append(buf, byte(v>>uint(8*i)))
				}
			}
			t.mem.store(addr, buf)
		}, nil
	case "bra":
		return func(t *pthread, in *pinst) { t.pc = t.k.labels[in.args[0].name] - 1 }, nil
	case "ret":
		return func(t *pthread, in *pinst) { t.pc = len(t.k.prog) }, nil
	}
	return nil, fmt.Errorf("unsupported %s", in.op)
}

// floatInst compiles the .f32/.f64 arithmetic instructions.
func floatInst(in *pinst) (func(t *pthread, in *pinst), error) {
	p := in.parts
	if p[0] != "neg" && (len(p) != 3 || p[1] != "rn") {
		return nil, fmt.Errorf("float instruction without .rn: %s", in.op)
	}
	if p[len(p)-1] == "f32" {
		var f func(a, b, c float32) float32
		switch p[0] {
		case "add":
			f = func(a, b, _ float32) float32 { return add32(a, b) }
		case "sub":
			f = func(a, b, _ float32) float32 { return sub32(a, b) }
		case "mul":
			f = func(a, b, _ float32) float32 { return mul32(a, b) }
		case "div":
			f = func(a, b, _ float32) float32 { return div32(a, b) }
		case "fma":
			f = fma32
		case "sqrt":
			f = func(a, _, _ float32) float32 { return sqrt32(a) }
		case "neg":
			f = func(a, _, _ float32) float32 { return -a }
		default:
			return nil, fmt.Errorf("unsupported %s", in.op)
		}
		return func(t *pthread, in *pinst) {
			var x [3]float32
			for i := 1; i < len(in.args); i++ {
				x[i-1] = f32of(t.val(in.args[i]))
			}
			t.r[in.args[0].reg] = fbits32(f(x[0], x[1], x[2]))
		}, nil
	}
	var f func(a, b, c float64) float64
	switch p[0] {
	case "add":
		f = func(a, b, _ float64) float64 { return add64(a, b) }
	case "sub":
		f = func(a, b, _ float64) float64 { return sub64(a, b) }
	case "mul":
		f = func(a, b, _ float64) float64 { return mul64(a, b) }
	case "div":
		f = func(a, b, _ float64) float64 { return float64(a / b) }
	case "fma":
		f = math.FMA
	case "sqrt":
		f = func(a, _, _ float64) float64 { return math.Sqrt(a) }
	case "neg":
		f = func(a, _, _ float64) float64 { return -a }
	default:
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	return func(t *pthread, in *pinst) {
		var x [3]float64
		for i := 1; i < len(in.args); i++ {
			x[i-1] = f64of(t.val(in.args[i]))
		}
		t.r[in.args[0].reg] = fbits64(f(x[0], x[1], x[2]))
	}, nil
}

// run executes one thread of k.
func (k *pkernel) run(params map[string]uint64, tid, ntid, ctaid, nctaid uint32, mem pmem) int {
	t := &pthread{k: k, r: make([]uint64, k.nregs), params: params, mem: mem,
		special: map[string]uint64{"%tid.x": uint64(tid), "%ntid.x": uint64(ntid), "%ctaid.x": uint64(ctaid), "%nctaid.x": uint64(nctaid)}}
	for t.pc = 0; t.pc < len(k.prog); t.pc++ {
		in := k.prog[t.pc]
		if in.guard >= 0 && (t.r[in.guard] != 0) == in.gneg {
			continue
		}
		in.exec(t, in)
		t.steps++
	}
	return t.steps
}

// launch runs every thread of a grid of nctaid blocks of ntid threads.
func (k *pkernel) launch(args []uint64, ntid, nctaid uint32, mem pmem) {
	params := map[string]uint64{}
	for i, name := range k.params {
		params[name] = args[i]
	}
	for c := uint32(0); c < nctaid; c++ {
		for i := uint32(0); i < ntid; i++ {
			k.run(params, i, ntid, c, nctaid, mem)
		}
	}
}

// sliceMem is device memory backed by a byte slice at address base.
type sliceMem struct {
	base uint64
	b    []byte
}

func (m *sliceMem) store(addr uint64, b []byte) {
	if addr < m.base || addr+uint64(len(b)) > m.base+uint64(len(m.b)) {
		panic(fmt.Sprintf("store of %d bytes at %#x outside [%#x, %#x)", len(b), addr, m.base, m.base+uint64(len(m.b))))
	}
	copy(m.b[addr-m.base:], b)
}

// sparseMem records every byte stored.
type sparseMem map[uint64]byte

func (m sparseMem) store(addr uint64, b []byte) {
	for i, v := range b {
		m[addr+uint64(i)] = v
	}
}
