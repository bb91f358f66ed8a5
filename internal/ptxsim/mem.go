package ptxsim

import (
	"fmt"
	"math"
	"runtime"
	"strconv"
	"strings"
)

// Memory instructions: ld, st, atom, red, cvta, isspacep, fences.

// sharedWindow is where cvta puts shared memory in the generic address space.
const sharedWindow = 0x7f00_0000_0000

// memOp is what the modifiers of ld, st, atom and red say.
type memOp struct {
	space  string // global, shared, param, const, or "" (generic)
	strong bool   // .volatile, .relaxed, .acquire, .release, .mmio
	n      int    // vector length
	op     string // atom and red: the operation
	et     ptype
}

func parseMemOp(parts []string) (memOp, error) {
	mo := memOp{n: 1}
	for _, m := range parts[1 : len(parts)-1] {
		switch {
		case m == "global" || m == "param" || m == "const" || m == "shared":
			mo.space = m
		case m == "volatile" || m == "relaxed" || m == "acquire" || m == "release" || m == "acq_rel" || m == "mmio":
			mo.strong = true
		case m == "weak" || m == "cta" || m == "cluster" || m == "gpu" || m == "sys" || m == "nc" || m == "ca" ||
			m == "cg" || m == "cs" || m == "lu" || m == "cv" || m == "wb" || m == "wt" || m == "noftz" ||
			strings.HasPrefix(m, "L1::") || strings.HasPrefix(m, "L2::") || strings.HasPrefix(m, "level::"):
		case m == "v2" || m == "v4" || m == "v8":
			mo.n, _ = strconv.Atoi(m[1:])
		case (parts[0] == "atom" || parts[0] == "red") && mo.op == "":
			mo.op = m
		default:
			return mo, fmt.Errorf("unsupported modifier .%s", m)
		}
	}
	et, err := lastType(parts)
	mo.et = et
	if err == nil && (et.bits < 8 || mo.n > 1 && mo.space == "param") {
		err = fmt.Errorf("unsupported form %s", strings.Join(parts, "."))
	}
	return mo, err
}

// load reads len(b) bytes at addr of a state space (strong: a strong access).
func (t *thread) load(space string, addr uint64, b []byte, strong bool) {
	kind := accRead
	if strong {
		kind = accStrongRead
	}
	switch {
	case space == "shared":
		copy(b, t.shared(addr, len(b), kind))
	case space == "" && addr-sharedWindow < 1<<32:
		copy(b, t.shared(addr-sharedWindow, len(b), kind))
	case addr >= t.mod.gbase && addr < t.mod.gbase+t.mod.gsize:
		m := t.mod
		if addr+uint64(len(b)) > m.gbase+m.gsize {
			faultf("load of %d bytes at %#x past the module's variables", len(b), addr)
		}
		copy(b, m.gdata[addr-m.gbase:])
	default:
		t.global(addr, b, strong, t.l.mem.Load)
	}
}

// store writes b at addr of a state space.
func (t *thread) store(space string, addr uint64, b []byte, strong bool) {
	switch {
	case space == "shared":
		copy(t.shared(addr, len(b), accWrite), b)
	case space == "" && addr-sharedWindow < 1<<32:
		copy(t.shared(addr-sharedWindow, len(b), accWrite), b)
	case addr >= t.mod.gbase && addr < t.mod.gbase+t.mod.gsize:
		faultf("store into the module's variables at %#x", addr)
	default:
		t.global(addr, b, strong, t.l.mem.Store)
	}
}

// global accesses global memory through access (Load or Store), under the launch's
// lock for a strong access.
func (t *thread) global(addr uint64, b []byte, strong bool, access func(uint64, []byte) error) {
	if t.l.mem == nil {
		faultf("global access at %#x without memory", addr)
	}
	if addr%uint64(min(len(b), 16)) != 0 {
		faultf("misaligned %d-byte access at %#x", len(b), addr)
	}
	if strong {
		t.l.mu.Lock()
		defer t.l.mu.Unlock()
	}
	if err := access(addr, b); err != nil {
		faultf("access of %d bytes at %#x: %v", len(b), addr, err)
	}
}

// regsOf returns the registers of a vector operand of n elements, or of a scalar.
func regsOf(o opnd, n int) ([]int, error) {
	if n > 1 {
		if o.kind != oVec || len(o.vec) != n {
			return nil, fmt.Errorf("a vector access needs %d registers", n)
		}
		return o.vec, nil
	}
	if o.kind == oVec {
		return nil, fmt.Errorf("a vector operand without .v%d", len(o.vec))
	}
	return nil, nil
}

func compileLd(f *Func, in *inst) (execFn, error) {
	mo, err := parseMemOp(in.parts)
	if err != nil {
		return nil, err
	}
	if err := needArgs(in, 2+cacheHint(in)); err != nil {
		return nil, err
	}
	d, a := in.args[0], in.args[1]
	regs, err := regsOf(d, mo.n)
	if a.kind != oMem || err != nil {
		return nil, fmt.Errorf("bad load: %v", err)
	}
	et, size := mo.et, mo.et.bits/8
	if mo.space == "param" {
		if i, ok := f.paramIdx[a.name]; ok && f.Entry && a.reg < 0 {
			off := int(a.off)
			return func(t *thread, in *inst) {
				p := t.l.params[i]
				if off < 0 || off+size > len(p) {
					faultf("load of %d bytes at offset %d of parameter %s", size, off, a.name)
				}
				t.set(&d, ext(getLE(p[off:off+size]), et.bits, et.kind))
			}, nil
		}
		if a.reg >= 0 || a.off != 0 || a.name == "" {
			return nil, fmt.Errorf("unsupported parameter load")
		}
		return func(t *thread, in *inst) {
			v, ok := t.fr.params[a.name]
			if !ok {
				faultf("no parameter %s", a.name)
			}
			t.set(&d, ext(v, et.bits, et.kind))
		}, nil
	}
	if a.name != "" {
		return nil, fmt.Errorf("unknown symbol %s", a.name)
	}
	return func(t *thread, in *inst) {
		b := t.buf[:mo.n*size]
		t.load(mo.space, t.addr(a), b, mo.strong)
		if regs == nil {
			t.set(&d, ext(getLE(b), et.bits, et.kind))
			return
		}
		for i, r := range regs {
			t.setReg(r, ext(getLE(b[i*size:(i+1)*size]), et.bits, et.kind))
		}
	}, nil
}

func compileSt(f *Func, in *inst) (execFn, error) {
	mo, err := parseMemOp(in.parts)
	if err != nil {
		return nil, err
	}
	if len(in.args) != 2 || in.args[0].kind != oMem {
		return nil, fmt.Errorf("bad store")
	}
	a, s := in.args[0], in.args[1]
	size := mo.et.bits / 8
	if mo.space == "param" {
		if a.reg >= 0 || a.off != 0 || a.name == "" {
			return nil, fmt.Errorf("unsupported parameter store")
		}
		return func(t *thread, in *inst) { t.fr.setParam(a.name, mask(t.val(&s), mo.et.bits)) }, nil
	}
	regs, err := regsOf(s, mo.n)
	if err != nil || a.name != "" {
		return nil, fmt.Errorf("bad store: %v %s", err, a.name)
	}
	return func(t *thread, in *inst) {
		b := t.buf[:mo.n*size]
		if regs == nil {
			putLE(b, t.val(&s))
		} else {
			for i, r := range regs {
				putLE(b[i*size:(i+1)*size], t.fr.r[r])
			}
		}
		t.store(mo.space, t.addr(a), b, mo.strong)
	}, nil
}

// rmwOp returns the new value of an atomic operation of type ty from the old value
// and the operands b and c (PTX ISA: atom).
func rmwOp(op string, ty ptype) (func(old, b, c uint64) uint64, error) {
	w := ty.bits
	switch {
	case op == "and":
		return func(x, y, _ uint64) uint64 { return x & y }, nil
	case op == "or":
		return func(x, y, _ uint64) uint64 { return x | y }, nil
	case op == "xor":
		return func(x, y, _ uint64) uint64 { return x ^ y }, nil
	case op == "exch":
		return func(_, y, _ uint64) uint64 { return y }, nil
	case op == "cas":
		return func(x, y, z uint64) uint64 {
			if mask(x, w) == mask(y, w) {
				return z
			}
			return x
		}, nil
	case op == "inc":
		return func(x, y, _ uint64) uint64 {
			if mask(x, w) >= mask(y, w) {
				return 0
			}
			return x + 1
		}, nil
	case op == "dec":
		return func(x, y, _ uint64) uint64 {
			if mask(x, w) == 0 || mask(x, w) > mask(y, w) {
				return y
			}
			return x - 1
		}, nil
	case ty.kind == 'f' && op == "add" && w == 32: // rounds to nearest, flushes subnormals
		return func(x, y, _ uint64) uint64 {
			return canon32(add32(f32(ftz32(x)), f32(ftz32(y))), true)
		}, nil
	case ty.kind == 'f' && op == "add" && w == 64:
		return func(x, y, _ uint64) uint64 {
			return canon64(add64(math.Float64frombits(x), math.Float64frombits(y)))
		}, nil
	case ty.kind == 'f' && (op == "min" || op == "max"):
		return func(x, y, _ uint64) uint64 { return fminmax(x, y, ty, op == "min", false) }, nil
	case ty.kind != 'f' && op == "add":
		return func(x, y, _ uint64) uint64 { return x + y }, nil
	case ty.kind != 'f' && (op == "min" || op == "max"):
		return func(x, y, _ uint64) uint64 {
			less := mask(x, w) < mask(y, w)
			if ty.kind == 's' {
				less = int64(sext(x, w)) < int64(sext(y, w))
			}
			if less == (op == "min") {
				return x
			}
			return y
		}, nil
	}
	return nil, fmt.Errorf("unsupported atomic operation .%s.%s%d", op, string(ty.kind), w)
}

// compileAtom compiles atom (d, [a], b{, c}) and red ([a], b).
func compileAtom(f *Func, in *inst) (execFn, error) {
	mo, err := parseMemOp(in.parts)
	if err != nil {
		return nil, err
	}
	red := in.parts[0] == "red"
	ai := 1
	if red {
		ai = 0
	}
	want := ai + 2
	if mo.op == "cas" {
		want++
	}
	if len(in.args) != want || in.args[ai].kind != oMem || in.args[ai].name != "" || mo.n != 1 ||
		mo.space == "param" || mo.space == "const" || red && mo.op == "cas" {
		return nil, fmt.Errorf("bad %s", in.op)
	}
	comb, err := rmwOp(mo.op, mo.et)
	if err != nil {
		return nil, err
	}
	a, size := in.args[ai], mo.et.bits/8
	return func(t *thread, in *inst) {
		addr, y := t.addr(a), t.val(&in.args[ai+1])
		var z uint64
		if mo.op == "cas" {
			z = t.val(&in.args[ai+2])
		}
		var old uint64
		if mo.space == "shared" || mo.space == "" && addr-sharedWindow < 1<<32 {
			if mo.space == "" {
				addr -= sharedWindow
			}
			b := t.shared(addr, size, accAtomic)
			old = getLE(b)
			putLE(b, comb(old, y, z))
		} else {
			b := t.buf[:size]
			t.l.mu.Lock()
			func() {
				defer t.l.mu.Unlock()
				t.global(addr, b, false, t.l.mem.Load)
				old = getLE(b)
				putLE(b, comb(old, y, z))
				t.global(addr, b, false, t.l.mem.Store)
			}()
		}
		if !red {
			t.set(&in.args[0], ext(old, mo.et.bits, mo.et.kind))
		}
	}, nil
}

// compileCvta compiles cvta{.to}.space.{u32,u64}: the shared window moves, global
// addresses are generic ones.
func compileCvta(f *Func, in *inst) (execFn, error) {
	p := in.parts
	if err := needArgs(in, 2); err != nil {
		return nil, err
	}
	to := has(p, "to")
	var off uint64
	switch {
	case has(p, "shared") && to:
		off = 0 - off - sharedWindow
	case has(p, "shared"):
		off = sharedWindow
	case has(p, "global"), has(p, "const"), has(p, "param"):
	default:
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	return func(t *thread, in *inst) { t.set(&in.args[0], t.val(&in.args[1])+off) }, nil
}

// compileIsspacep compiles isspacep.{global,shared} p, a.
func compileIsspacep(f *Func, in *inst) (execFn, error) {
	if err := needArgs(in, 2); err != nil || len(in.parts) != 2 {
		return nil, fmt.Errorf("bad %s", in.op)
	}
	shared := in.parts[1] == "shared"
	return func(t *thread, in *inst) {
		a := t.val(&in.args[1])
		t.set(&in.args[0], b2u(shared == (a-sharedWindow < 1<<32)))
	}, nil
}

// compileFence compiles fence.* and membar.*: a strong access of nothing (the launch's
// lock orders it with every other strong access).
func compileFence(f *Func, in *inst) (execFn, error) {
	return func(t *thread, in *inst) {
		t.l.mu.Lock()
		t.l.mu.Unlock() //nolint:staticcheck // an empty critical section: the ordering is the point
	}, nil
}

// compileGridDep compiles griddepcontrol.launch_dependents and griddepcontrol.wait
// (programmatic dependent launch): no-ops here, where a launch starts only after the
// one before it has completed.
func compileGridDep(f *Func, in *inst) (execFn, error) {
	if len(in.parts) != 2 || in.parts[1] != "launch_dependents" && in.parts[1] != "wait" {
		return nil, fmt.Errorf("unsupported instruction %s", in.op)
	}
	return func(t *thread, in *inst) {}, nil
}

func compileNanosleep(f *Func, in *inst) (execFn, error) {
	return func(t *thread, in *inst) { runtime.Gosched() }, nil
}

// compilePrefetch compiles prefetch{.global}.L1/.L2 and prefetch{.global}.L2::evict_last
// and ::evict_normal [a]: a hint the simulator has no caches for, but an address
// outside global memory faults (on a GPU a prefetch of an unmapped address is dropped:
// a kernel that makes one has a bug that its loads would show).
func compilePrefetch(f *Func, in *inst) (execFn, error) {
	global := false
	for _, m := range in.parts[1:] {
		switch m {
		case "global":
			global = true
		case "L1", "L2", "L2::evict_last", "L2::evict_normal":
		default:
			return nil, fmt.Errorf("unsupported %s", in.op)
		}
	}
	if len(in.args) != 1 || in.args[0].kind != oMem || in.args[0].name != "" {
		return nil, fmt.Errorf("%s takes one address", in.op)
	}
	a := in.args[0]
	return func(t *thread, in *inst) {
		addr := t.addr(a)
		if !global && addr-sharedWindow < 1<<32 || addr >= t.mod.gbase && addr < t.mod.gbase+t.mod.gsize {
			return // (shared memory through a generic address; the module's variables)
		}
		if t.l.mem == nil {
			faultf("prefetch at %#x without memory", addr)
		}
		var b [1]byte
		if err := t.l.mem.Load(addr, b[:]); err != nil {
			faultf("prefetch at %#x: %v", addr, err)
		}
	}, nil
}

// cacheHint returns 1 where in has .L2::cache_hint (its last operand a cache policy,
// which the simulator, having no caches, ignores), else 0.
func cacheHint(in *inst) int {
	for _, m := range in.parts {
		if m == "L2::cache_hint" {
			return 1
		}
	}
	return 0
}

// compileCreatepolicy compiles createpolicy.fractional (an L2 eviction policy, of
// the fraction given or 1.0): the simulator has no caches, so the opaque 64-bit policy
// is a constant.
func compileCreatepolicy(f *Func, in *inst) (execFn, error) {
	if len(in.parts) < 3 || in.parts[1] != "fractional" || in.parts[len(in.parts)-1] != "b64" || len(in.args) < 1 || len(in.args) > 2 || in.args[0].kind != oReg {
		return nil, fmt.Errorf("unsupported %s", in.op)
	}
	return func(t *thread, in *inst) { t.set(&in.args[0], 0x10000000_00000000) }, nil
}
