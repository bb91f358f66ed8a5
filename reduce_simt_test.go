package gpu_test

// A SIMT interpreter for the PTX the reductions generate, behind a fake "cuda" device, so
// that the whole CUDA path (PlanReduce, the passes, the kernels' warp shuffles, shared
// memory and barriers) runs in tests on a machine without a GPU.
//
// Each block runs its threads one at a time, each until it reaches a shfl.sync or a
// bar.sync or returns. A shuffle executes when every thread of the warp waits at the
// same shfl.sync; a barrier opens when every thread of the block waits at one. Anything
// else (threads of a warp at different shuffles, a barrier some threads can't reach,
// an access outside the launch's buffers, a misaligned access, an instruction outside
// the subset) fails the launch, as a fault on a GPU would. Blocks run concurrently;
// atom.global.add is serialized across them, and fences are no-ops (see sMemory.mu).
// The fused reductions' ticket counters need both. Float arithmetic is IEEE
// (.rn) with canonical NaN results, as on NVIDIA GPUs.

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// simtDevice is a CPU device that reports itself as CUDA and runs PTX in the interpreter.
type simtDevice struct {
	*cpu.Device
	sms int
}

func (d simtDevice) Info() backend.Info {
	i := d.Device.Info()
	i.Backend, i.Name = "cuda", "PTX interpreter"
	i.ComputeMajor, i.ComputeMinor = 9, 0
	i.Multiprocessors = d.sms
	i.WarpSize = 32
	return i
}

func (d simtDevice) LoadModule(image []byte) (backend.Module, error) {
	m, err := simtParse(string(image))
	if err != nil {
		return nil, fmt.Errorf("simt: %w: %w", err, backend.ErrInvalidValue)
	}
	return m, nil
}

var (
	simtOnce sync.Once
	simtDev  *gpu.Device
	simtErr  error
)

// simtGPU returns the interpreter device (2 "multiprocessors").
func simtGPU() (*gpu.Device, error) {
	simtOnce.Do(func() { simtDev, simtErr = gpu.NewDevice(simtDevice{cpu.New(2), 2}) })
	return simtDev, simtErr
}

type simtModule struct{ kernels map[string]*simtKernel }

func (m *simtModule) Function(name string) (backend.Function, error) {
	k := m.kernels[name]
	if k == nil {
		return nil, fmt.Errorf("simt: no kernel %q: %w", name, backend.ErrInvalidValue)
	}
	return cpu.NewFunc(name, k.launch), nil
}

func (m *simtModule) Unload() error { return nil }

// ---- parsing ----

type sOpKind uint8

const (
	sReg sOpKind = iota
	sImm
	sSpecial
	sSym
	sMem
	sVec
	sLabel
)

type sOperand struct {
	kind sOpKind
	reg  int
	imm  uint64
	name string // special, symbol, label, memory symbol base
	off  int64
	vec  []int
	sym  bool // memory: the base is a symbol
}

type sInst struct {
	text  string
	guard int // -1: none
	gneg  bool
	parts []string
	args  []sOperand
	exec  func(t *sThread, in *sInst) // nil for control instructions
	ctl   byte                        // 'b' bra, 'r' ret, 's' shfl, 'y' bar
	tgt   int
}

type sShared struct {
	off, size int
}

type simtKernel struct {
	name    string
	params  []string
	ptypes  []string
	nregs   int
	regs    map[string]int
	prog    []*sInst
	labels  map[string]int
	shared  map[string]sShared
	smBytes int
}

func simtParse(src string) (*simtModule, error) {
	m := &simtModule{kernels: map[string]*simtKernel{}}
	for {
		i := strings.Index(src, ".entry ")
		if i < 0 {
			break
		}
		src = src[i+len(".entry "):]
		open := strings.Index(src, "(")
		k := &simtKernel{name: strings.TrimSpace(src[:open]), regs: map[string]int{}, labels: map[string]int{}, shared: map[string]sShared{}}
		cl := strings.Index(src, ")")
		for _, p := range strings.Split(src[open+1:cl], ",") {
			f := strings.Fields(strings.TrimSpace(p))
			if len(f) == 3 {
				k.ptypes = append(k.ptypes, f[1])
				k.params = append(k.params, f[2])
			}
		}
		src = src[cl:]
		b := strings.Index(src, "{")
		depth, e := 0, b
		for ; e < len(src); e++ {
			if src[e] == '{' {
				depth++
			} else if src[e] == '}' {
				depth--
				if depth == 0 {
					break
				}
			}
		}
		if err := k.parseBody(src[b+1 : e]); err != nil {
			return nil, fmt.Errorf("kernel %s: %w", k.name, err)
		}
		m.kernels[k.name] = k
		src = src[e:]
	}
	return m, nil
}

func (k *simtKernel) reg(name string) int {
	if i, ok := k.regs[name]; ok {
		return i
	}
	k.regs[name] = k.nregs
	k.nregs++
	return k.nregs - 1
}

func (k *simtKernel) parseBody(body string) error {
	var lines []string
	for _, l := range strings.Split(body, "\n") {
		if i := strings.Index(l, "//"); i >= 0 {
			l = l[:i]
		}
		l = strings.TrimSpace(l)
		if l != "" {
			lines = append(lines, l)
		}
	}
	var stmts []string
	for _, l := range lines {
		for strings.HasPrefix(l, "$") && strings.Contains(l, ":") {
			i := strings.Index(l, ":")
			stmts = append(stmts, l[:i+1])
			l = strings.TrimSpace(l[i+1:])
		}
		for _, s := range strings.Split(l, ";") {
			if s = strings.TrimSpace(s); s != "" {
				stmts = append(stmts, s)
			}
		}
	}
	for _, s := range stmts {
		switch {
		case strings.HasSuffix(s, ":"):
			k.labels[strings.TrimSuffix(s, ":")] = len(k.prog)
			continue
		case strings.HasPrefix(s, ".reg"):
			continue
		case strings.HasPrefix(s, ".shared"):
			// .shared .align A .type name[n]
			f := strings.Fields(s)
			decl := f[len(f)-1]
			t := f[len(f)-2]
			lb := strings.Index(decl, "[")
			n, err := strconv.Atoi(strings.TrimSuffix(decl[lb+1:], "]"))
			if err != nil {
				return err
			}
			size := sTypeBits(strings.TrimPrefix(t, ".")) / 8 * n
			k.smBytes = (k.smBytes + 15) &^ 15
			k.shared[decl[:lb]] = sShared{k.smBytes, size}
			k.smBytes += size
			continue
		case s == "{" || s == "}":
			return fmt.Errorf("nested blocks (calls) are not supported")
		}
		in, err := k.parseInst(s)
		if err != nil {
			return fmt.Errorf("%q: %w", s, err)
		}
		k.prog = append(k.prog, in)
	}
	for _, in := range k.prog {
		if in.ctl == 'b' {
			t, ok := k.labels[in.args[0].name]
			if !ok {
				return fmt.Errorf("no label %s", in.args[0].name)
			}
			in.tgt = t
		}
	}
	return nil
}

func splitArgs(s string) []string {
	var out []string
	depth, start := 0, 0
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

func (k *simtKernel) operand(s string) (sOperand, error) {
	switch {
	case strings.HasPrefix(s, "{"):
		var v []int
		for _, r := range splitArgs(s[1 : len(s)-1]) {
			v = append(v, k.reg(r))
		}
		return sOperand{kind: sVec, vec: v}, nil
	case strings.HasPrefix(s, "["):
		in := strings.TrimSpace(s[1 : len(s)-1])
		var off int64
		if i := strings.IndexAny(in, "+"); i > 0 {
			o, err := strconv.ParseInt(strings.TrimSpace(in[i+1:]), 0, 64)
			if err != nil {
				return sOperand{}, err
			}
			off, in = o, strings.TrimSpace(in[:i])
		}
		if strings.HasPrefix(in, "%") {
			return sOperand{kind: sMem, reg: k.reg(in), off: off}, nil
		}
		return sOperand{kind: sMem, name: in, sym: true, off: off}, nil
	case strings.HasPrefix(s, "%tid") || strings.HasPrefix(s, "%ntid") || strings.HasPrefix(s, "%ctaid") ||
		strings.HasPrefix(s, "%nctaid") || s == "%laneid" || s == "%warpid":
		return sOperand{kind: sSpecial, name: s}, nil
	case strings.HasPrefix(s, "%"):
		return sOperand{kind: sReg, reg: k.reg(s)}, nil
	case strings.HasPrefix(s, "$"):
		return sOperand{kind: sLabel, name: s}, nil
	case strings.HasPrefix(s, "0f") && len(s) == 10:
		v, err := strconv.ParseUint(s[2:], 16, 32)
		return sOperand{kind: sImm, imm: v}, err
	case strings.HasPrefix(s, "0d") && len(s) == 18:
		v, err := strconv.ParseUint(s[2:], 16, 64)
		return sOperand{kind: sImm, imm: v}, err
	case s[0] == '-' || s[0] >= '0' && s[0] <= '9':
		if v, err := strconv.ParseInt(s, 0, 64); err == nil {
			return sOperand{kind: sImm, imm: uint64(v)}, nil
		}
		v, err := strconv.ParseUint(s, 0, 64)
		return sOperand{kind: sImm, imm: v}, err
	}
	return sOperand{kind: sSym, name: s}, nil
}

func (k *simtKernel) parseInst(s string) (*sInst, error) {
	in := &sInst{text: s, guard: -1}
	if strings.HasPrefix(s, "@") {
		f := strings.SplitN(s, " ", 2)
		g := f[0][1:]
		if strings.HasPrefix(g, "!") {
			in.gneg, g = true, g[1:]
		}
		in.guard = k.reg(g)
		s = strings.TrimSpace(f[1])
	}
	op, rest, _ := strings.Cut(s, " ")
	in.parts = strings.Split(op, ".")
	for _, a := range splitArgs(rest) {
		o, err := k.operand(a)
		if err != nil {
			return nil, err
		}
		in.args = append(in.args, o)
	}
	switch in.parts[0] {
	case "bra":
		in.ctl = 'b'
		return in, nil
	case "ret":
		in.ctl = 'r'
		return in, nil
	case "bar":
		in.ctl = 'y'
		return in, nil
	case "shfl":
		in.ctl = 's'
		return in, nil
	}
	var err error
	in.exec, err = k.compile(in)
	return in, err
}

// ---- types and values ----

func sTypeBits(t string) int {
	switch t {
	case "pred":
		return 1
	case "b8", "u8", "s8":
		return 8
	case "b16", "u16", "s16", "f16", "bf16":
		return 16
	case "b32", "u32", "s32", "f32":
		return 32
	case "b64", "u64", "s64", "f64":
		return 64
	}
	return 0
}

func sMask(v uint64, w int) uint64 {
	if w >= 64 {
		return v
	}
	return v & (1<<w - 1)
}

func sSext(v uint64, w int) int64 {
	if w >= 64 {
		return int64(v)
	}
	return int64(v<<(64-w)) >> (64 - w)
}

// ext extends a w-bit value by t's signedness to 64 bits.
func sExt(v uint64, t string) uint64 {
	w := sTypeBits(t)
	if t[0] == 's' {
		return uint64(sSext(v, w))
	}
	return sMask(v, w)
}

func f32(v uint64) float32 { return math.Float32frombits(uint32(v)) }
func f64(v uint64) float64 { return math.Float64frombits(v) }
func bf32(x float32) uint64 {
	if x != x {
		return 0x7fffffff
	}
	return uint64(math.Float32bits(x))
}
func bf64(x float64) uint64 {
	if x != x {
		return 0x7fffffffffffffff
	}
	return math.Float64bits(x)
}

// ---- execution ----

type sThread struct {
	r       []uint64
	pc      int
	tid     int
	done    bool
	waiting byte // 's' at a shuffle, 'y' at a barrier
	blk     *sBlock
}

type sBlock struct {
	k             *simtKernel
	ctaid, nctaid [2]int
	ntid          int
	shared        []byte
	mem           *sMemory
	params        []uint64
	steps         int
}

type sMemory struct {
	regions []sRegion
	// mu serializes atomics. The blocks run on several goroutines, so it also orders
	// (for Go's memory model and the race detector) a block's stores before its atomic
	// with the loads of the block whose atomic comes after: what fence.acq_rel.gpu and
	// membar.gl order on a GPU, which are therefore no-ops here.
	mu sync.Mutex
}

type sRegion struct {
	base uint64
	b    []byte
}

func (m *sMemory) find(addr uint64, n int) []byte {
	for _, r := range m.regions {
		if addr >= r.base && addr+uint64(n) <= r.base+uint64(len(r.b)) {
			return r.b[addr-r.base : addr-r.base+uint64(n)]
		}
	}
	panic(fmt.Sprintf("simt: illegal address 0x%x (%d bytes)", addr, n))
}

func (t *sThread) val(o sOperand) uint64 {
	switch o.kind {
	case sReg:
		return t.r[o.reg]
	case sImm:
		return o.imm
	case sSpecial:
		b := t.blk
		switch o.name {
		case "%tid.x":
			return uint64(t.tid)
		case "%ntid.x":
			return uint64(b.ntid)
		case "%ctaid.x":
			return uint64(b.ctaid[0])
		case "%ctaid.y":
			return uint64(b.ctaid[1])
		case "%nctaid.x":
			return uint64(b.nctaid[0])
		case "%nctaid.y":
			return uint64(b.nctaid[1])
		case "%laneid":
			return uint64(t.tid % 32)
		case "%warpid":
			return uint64(t.tid / 32)
		case "%tid.y", "%tid.z", "%ctaid.z":
			return 0
		case "%ntid.y", "%ntid.z", "%nctaid.z":
			return 1
		}
		panic("simt: special register " + o.name)
	case sSym:
		if sh, ok := t.blk.k.shared[o.name]; ok {
			return uint64(sh.off)
		}
		panic("simt: symbol " + o.name)
	}
	panic(fmt.Sprintf("simt: operand kind %d as a value", o.kind))
}

func (t *sThread) addr(o sOperand) uint64 {
	if o.sym {
		if sh, ok := t.blk.k.shared[o.name]; ok {
			return uint64(sh.off) + uint64(o.off)
		}
		for i, p := range t.blk.k.params {
			if p == o.name {
				return uint64(i)<<32 | uint64(o.off)
			}
		}
		panic("simt: symbol " + o.name)
	}
	return t.r[o.reg] + uint64(o.off)
}

func lastType(parts []string) string { return parts[len(parts)-1] }

func has(parts []string, m string) bool {
	for _, p := range parts[1:] {
		if p == m {
			return true
		}
	}
	return false
}

func (k *simtKernel) compile(in *sInst) (func(t *sThread, in *sInst), error) {
	p := in.parts
	t := lastType(p)
	w := sTypeBits(t)
	a := in.args
	switch p[0] {
	case "mov":
		if a[0].kind == sVec { // unpack
			return func(th *sThread, in *sInst) {
				v := th.val(in.args[1])
				n := len(in.args[0].vec)
				sz := w / n // mov.b64 {a, b}: 32 bits each; mov.b32 {a, b}: 16
				for i, r := range in.args[0].vec {
					th.r[r] = sMask(v>>(uint(i*sz)), sz)
				}
			}, nil
		}
		if a[1].kind == sVec { // pack
			return func(th *sThread, in *sInst) {
				var v uint64
				n := len(in.args[1].vec)
				sz := w / n
				for i, r := range in.args[1].vec {
					v |= sMask(th.r[r], sz) << uint(i*sz)
				}
				th.r[in.args[0].reg] = v
			}, nil
		}
		return func(th *sThread, in *sInst) { th.r[in.args[0].reg] = sMask(th.val(in.args[1]), w) }, nil
	case "ld", "st":
		space := p[1]
		vec := 1
		for _, q := range p {
			if strings.HasPrefix(q, "v") && len(q) == 2 {
				vec = int(q[1] - '0')
			}
		}
		size := w / 8
		load := p[0] == "ld"
		ai := 0
		if load {
			ai = 1
		}
		return func(th *sThread, in *sInst) {
			ad := th.addr(in.args[ai])
			var mem []byte
			switch space {
			case "param":
				i := int(ad >> 32)
				var b [8]byte
				binary.LittleEndian.PutUint64(b[:], th.blk.params[i])
				mem = b[:size]
			case "shared":
				if ad%uint64(size*vec) != 0 || int(ad)+size*vec > len(th.blk.shared) {
					panic(fmt.Sprintf("simt: shared access 0x%x", ad))
				}
				mem = th.blk.shared[ad : int(ad)+size*vec]
			case "global":
				if ad%uint64(size*vec) != 0 {
					panic(fmt.Sprintf("simt: misaligned global access 0x%x of %d bytes", ad, size*vec))
				}
				mem = th.blk.mem.find(ad, size*vec)
			default:
				panic("simt: space " + space)
			}
			var regs []int
			o := in.args[0]
			if !load {
				o = in.args[1]
			}
			if o.kind == sVec {
				regs = o.vec
			}
			for e := 0; e < vec; e++ {
				b := mem[e*size : (e+1)*size]
				if load {
					var v uint64
					for i := size - 1; i >= 0; i-- {
						v = v<<8 | uint64(b[i])
					}
					v = sExt(v, t)
					if t[0] == 'f' || t[0] == 'b' {
						v = sMask(v, w)
					}
					if regs != nil {
						th.r[regs[e]] = v
					} else {
						th.r[o.reg] = v
					}
				} else {
					var v uint64
					if regs != nil {
						v = th.r[regs[e]]
					} else {
						v = th.val(o)
					}
					for i := 0; i < size; i++ {
						b[i] = byte(v >> (8 * i))
					}
				}
			}
		}, nil
	case "cvt":
		dt, st := p[len(p)-2], p[len(p)-1]
		return compileCvt(dt, st, p)
	case "setp":
		cmp := p[1]
		return func(th *sThread, in *sInst) {
			x, y := th.val(in.args[1]), th.val(in.args[2])
			th.r[in.args[0].reg] = boolU(sCompare(cmp, t, x, y))
		}, nil
	case "selp":
		return func(th *sThread, in *sInst) {
			if th.val(in.args[3]) != 0 {
				th.r[in.args[0].reg] = sMask(th.val(in.args[1]), w)
			} else {
				th.r[in.args[0].reg] = sMask(th.val(in.args[2]), w)
			}
		}, nil
	case "and", "or", "xor", "not":
		return func(th *sThread, in *sInst) {
			x := th.val(in.args[1])
			var v uint64
			switch in.parts[0] {
			case "and":
				v = x & th.val(in.args[2])
			case "or":
				v = x | th.val(in.args[2])
			case "xor":
				v = x ^ th.val(in.args[2])
			case "not":
				v = ^x
			}
			th.r[in.args[0].reg] = sMask(v, w)
		}, nil
	case "shl", "shr":
		return func(th *sThread, in *sInst) {
			x, n := th.val(in.args[1]), th.val(in.args[2])&0xffffffff
			var v uint64
			if in.parts[0] == "shl" {
				if n < uint64(w) {
					v = x << n
				}
			} else if t[0] == 's' {
				s := sSext(x, w)
				v = uint64(s >> min(n, 63))
			} else if n < uint64(w) {
				v = sMask(x, w) >> n
			}
			th.r[in.args[0].reg] = sMask(v, w)
		}, nil
	case "fence", "membar":
		return func(*sThread, *sInst) {}, nil
	case "atom":
		// atom{.sem}{.scope}.global.add.{u32,s32,u64}: the integer additions only
		if !has(p, "global") || p[len(p)-2] != "add" || t[0] == 'f' || w < 32 {
			break
		}
		return func(th *sThread, in *sInst) {
			ad := th.addr(in.args[1])
			size := w / 8
			if ad%uint64(size) != 0 {
				panic(fmt.Sprintf("simt: misaligned atomic 0x%x", ad))
			}
			m := th.blk.mem
			m.mu.Lock()
			defer m.mu.Unlock()
			b := m.find(ad, size)
			var old uint64
			for i := size - 1; i >= 0; i-- {
				old = old<<8 | uint64(b[i])
			}
			v := old + th.val(in.args[2])
			for i := 0; i < size; i++ {
				b[i] = byte(v >> (8 * i))
			}
			th.r[in.args[0].reg] = old
		}, nil
	case "add", "sub", "mul", "mad", "fma", "div", "rem", "min", "max", "neg", "abs":
		if t[0] == 'f' {
			return compileFloat(p[0], w)
		}
		return compileInt(p, t, w)
	}
	return nil, fmt.Errorf("unsupported instruction %s", strings.Join(p, "."))
}

func boolU(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

func sCompare(cmp, t string, x, y uint64) bool {
	w := sTypeBits(t)
	if t[0] == 'f' {
		var a, b float64
		if w == 32 {
			a, b = float64(f32(x)), float64(f32(y))
		} else {
			a, b = f64(x), f64(y)
		}
		nan := a != a || b != b
		switch cmp {
		case "eq":
			return !nan && a == b
		case "ne":
			return !nan && a != b
		case "lt":
			return !nan && a < b
		case "le":
			return !nan && a <= b
		case "gt":
			return !nan && a > b
		case "ge":
			return !nan && a >= b
		case "equ":
			return nan || a == b
		case "neu":
			return nan || a != b
		case "ltu":
			return nan || a < b
		case "leu":
			return nan || a <= b
		case "gtu":
			return nan || a > b
		case "geu":
			return nan || a >= b
		case "num":
			return !nan
		case "nan":
			return nan
		}
		panic("simt: setp." + cmp)
	}
	if t[0] == 's' {
		a, b := sSext(x, w), sSext(y, w)
		switch cmp {
		case "eq":
			return a == b
		case "ne":
			return a != b
		case "lt":
			return a < b
		case "le":
			return a <= b
		case "gt":
			return a > b
		case "ge":
			return a >= b
		}
		panic("simt: setp." + cmp)
	}
	a, b := sMask(x, w), sMask(y, w)
	switch cmp {
	case "eq":
		return a == b
	case "ne":
		return a != b
	case "lt", "lo":
		return a < b
	case "le", "ls":
		return a <= b
	case "gt", "hi":
		return a > b
	case "ge", "hs":
		return a >= b
	}
	panic("simt: setp." + cmp)
}

func compileFloat(op string, w int) (func(*sThread, *sInst), error) {
	return func(th *sThread, in *sInst) {
		a := in.args
		if w == 32 {
			x := f32(th.val(a[1]))
			var r float32
			switch op {
			case "add":
				r = x + f32(th.val(a[2]))
			case "sub":
				r = x - f32(th.val(a[2]))
			case "mul":
				r = x * f32(th.val(a[2]))
			case "div":
				r = x / f32(th.val(a[2]))
			case "fma":
				r = float32(math.FMA(float64(x), float64(f32(th.val(a[2]))), float64(f32(th.val(a[3])))))
			case "neg":
				th.r[a[0].reg] = th.val(a[1]) ^ 1<<31
				return
			case "abs":
				th.r[a[0].reg] = th.val(a[1]) &^ (1 << 31)
				return
			case "min", "max":
				y := f32(th.val(a[2]))
				switch {
				case x != x:
					r = y
				case y != y:
					r = x
				case op == "min" && (y < x || y == x && math.Signbit(float64(y))):
					r = y
				case op == "max" && (y > x || y == x && !math.Signbit(float64(y))):
					r = y
				default:
					r = x
				}
			}
			th.r[a[0].reg] = bf32(r)
			return
		}
		x := f64(th.val(a[1]))
		var r float64
		switch op {
		case "add":
			r = x + f64(th.val(a[2]))
		case "sub":
			r = x - f64(th.val(a[2]))
		case "mul":
			r = x * f64(th.val(a[2]))
		case "div":
			r = x / f64(th.val(a[2]))
		case "fma":
			r = math.FMA(x, f64(th.val(a[2])), f64(th.val(a[3])))
		case "neg":
			th.r[a[0].reg] = th.val(a[1]) ^ 1<<63
			return
		case "abs":
			th.r[a[0].reg] = th.val(a[1]) &^ (1 << 63)
			return
		case "min", "max":
			y := f64(th.val(a[2]))
			switch {
			case x != x:
				r = y
			case y != y:
				r = x
			case op == "min" && (y < x || y == x && math.Signbit(y)):
				r = y
			case op == "max" && (y > x || y == x && !math.Signbit(y)):
				r = y
			default:
				r = x
			}
		}
		th.r[a[0].reg] = bf64(r)
	}, nil
}

func compileInt(p []string, t string, w int) (func(*sThread, *sInst), error) {
	op := p[0]
	wide := has(p, "wide")
	hi := has(p, "hi")
	signed := t[0] == 's'
	return func(th *sThread, in *sInst) {
		a := in.args
		x := th.val(a[1])
		var y uint64
		if len(a) > 2 {
			y = th.val(a[2])
		}
		var r uint64
		switch op {
		case "add":
			r = x + y
		case "sub":
			r = x - y
		case "neg":
			r = -x
		case "abs":
			s := sSext(x, w)
			if s < 0 {
				s = -s
			}
			r = uint64(s)
		case "mul", "mad":
			switch {
			case wide && signed:
				r = uint64(sSext(x, w) * sSext(y, w))
			case wide:
				r = sMask(x, w) * sMask(y, w)
			case hi && signed && w == 64:
				h, _ := bits.Mul64(x, y)
				r = h - (x>>63)*y - (y>>63)*x
			case hi && w == 64:
				r, _ = bits.Mul64(x, y)
			case hi && signed:
				r = uint64(sSext(x, w)*sSext(y, w)) >> w
			case hi:
				r = sMask(x, w) * sMask(y, w) >> w
			default:
				r = x * y
			}
			if op == "mad" {
				r += th.val(a[3])
			}
			if wide {
				th.r[a[0].reg] = r
				return
			}
		case "div", "rem":
			if sMask(y, w) == 0 {
				panic("simt: integer division by zero: " + in.text)
			}
			if signed {
				sx, sy := sSext(x, w), sSext(y, w)
				if op == "div" {
					r = uint64(sx / sy)
				} else {
					r = uint64(sx % sy)
				}
			} else if op == "div" {
				r = sMask(x, w) / sMask(y, w)
			} else {
				r = sMask(x, w) % sMask(y, w)
			}
		case "min", "max":
			less := sMask(x, w) < sMask(y, w)
			if signed {
				less = sSext(x, w) < sSext(y, w)
			}
			if less == (op == "min") {
				r = x
			} else {
				r = y
			}
		}
		th.r[a[0].reg] = sMask(r, w)
	}, nil
}

func compileCvt(dt, st string, p []string) (func(*sThread, *sInst), error) {
	dw, sw := sTypeBits(dt), sTypeBits(st)
	return func(th *sThread, in *sInst) {
		x := th.val(in.args[1])
		var r uint64
		switch {
		case dt[0] != 'f' && st[0] != 'f':
			r = sMask(sExt(sMask(x, sw), st), dw)
		case dt[0] == 'f' && st[0] == 'f':
			if dw == 64 {
				if sw == 32 {
					r = bf64(float64(f32(x)))
				} else {
					r = x
				}
			} else if sw == 64 {
				r = bf32(float32(f64(x)))
			} else {
				r = x
			}
		case dt[0] == 'f':
			v := sExt(sMask(x, sw), st)
			if dw == 32 {
				if st[0] == 's' {
					r = bf32(float32(int64(v)))
				} else {
					r = bf32(float32(v))
				}
			} else if st[0] == 's' {
				r = bf64(float64(int64(v)))
			} else {
				r = bf64(float64(v))
			}
		default:
			var f float64
			if sw == 32 {
				f = float64(f32(x))
			} else {
				f = f64(x)
			}
			f = math.Trunc(f)
			if dt[0] == 's' {
				lo, hi := -math.Ldexp(1, dw-1), math.Ldexp(1, dw-1)
				switch {
				case f != f:
					r = 0
				case f <= lo:
					r = sMask(^uint64(0)<<(dw-1), dw)
				case f >= hi:
					r = sMask(1<<(dw-1)-1, dw)
				default:
					r = sMask(uint64(int64(f)), dw)
				}
			} else {
				hi := math.Ldexp(1, dw)
				switch {
				case f != f || f <= 0:
					r = 0
				case f >= hi:
					r = sMask(^uint64(0), dw)
				default:
					r = uint64(f)
				}
			}
		}
		th.r[in.args[0].reg] = r
	}, nil
}

// launch runs the kernel over the launch's grid.
func (k *simtKernel) launch(l *cpu.Launch) error {
	if len(l.Args) != len(k.params) {
		return fmt.Errorf("simt: %s: %d arguments for %d parameters: %w", k.name, len(l.Args), len(k.params), backend.ErrLaunchFailed)
	}
	mem := &sMemory{}
	params := make([]uint64, len(l.Args))
	for i, a := range l.Args {
		switch a.Kind {
		case backend.ArgMem, backend.ArgPtr:
			if a.Kind == backend.ArgPtr && a.Val == 0 {
				params[i] = 0
				continue
			}
			full, off := l.MemAt(i)
			if len(full) == 0 {
				params[i] = 0x10 // never dereferenced: an empty buffer
				continue
			}
			base := uint64(uintptr(unsafe.Pointer(&full[0])))
			mem.regions = append(mem.regions, sRegion{base, full})
			params[i] = base + uint64(off)
		default:
			params[i] = a.Val
		}
	}
	gx, gy := int(l.Grid[0]), int(l.Grid[1])
	ntid := int(l.Block[0])
	if gx*gy == 0 || ntid == 0 || l.Block[1] > 1 || l.Block[2] > 1 || l.Grid[2] > 1 {
		return fmt.Errorf("simt: grid %v block %v: %w", l.Grid, l.Block, backend.ErrLaunchFailed)
	}
	// Blocks are independent: run them on all cores.
	var mu sync.Mutex
	var first error
	cpu.Parallel(runtime.GOMAXPROCS(0), gx*gy, 1, func(lo, hi int) {
		defer func() {
			if p := recover(); p != nil {
				mu.Lock()
				if first == nil {
					first = fmt.Errorf("simt: %s: %v: %w", k.name, p, backend.ErrLaunchFailed)
				}
				mu.Unlock()
			}
		}()
		for i := lo; i < hi; i++ {
			b := &sBlock{k: k, ctaid: [2]int{i % gx, i / gx}, nctaid: [2]int{gx, gy}, ntid: ntid,
				shared: make([]byte, k.smBytes), mem: mem, params: params}
			b.run()
		}
	})
	return first
}

const simtMaxSteps = 1 << 34

func (b *sBlock) run() {
	k := b.k
	ths := make([]*sThread, b.ntid)
	for i := range ths {
		ths[i] = &sThread{r: make([]uint64, k.nregs), tid: i, blk: b}
	}
	for {
		progress := false
		for _, t := range ths {
			if t.done || t.waiting != 0 {
				continue
			}
			t.step()
			progress = true
		}
		if progress {
			continue
		}
		// every thread is done or waiting: resolve shuffles, then barriers
		allDone := true
		for _, t := range ths {
			allDone = allDone && t.done
		}
		if allDone {
			return
		}
		resolved := false
		for w := 0; w*32 < len(ths); w++ {
			warp := ths[w*32 : min(len(ths), (w+1)*32)]
			if warp[0].waiting != 's' {
				continue
			}
			pc := warp[0].pc
			for _, t := range warp {
				if t.waiting != 's' || t.pc != pc {
					panic(fmt.Sprintf("simt: warp %d diverged at shfl.sync (pc %d vs %d, waiting %c, done %v)", w, pc, t.pc, t.waiting, t.done))
				}
			}
			if len(warp) != 32 {
				panic("simt: shfl.sync with a partial warp")
			}
			in := k.prog[pc]
			vals := make([]uint64, 32)
			for i, t := range warp {
				vals[i] = t.val(in.args[1])
			}
			for i, t := range warp {
				bv := int(t.val(in.args[2]))
				var src int
				switch in.parts[2] {
				case "bfly":
					src = i ^ bv
				case "down":
					src = i + bv
				case "up":
					src = i - bv
				case "idx":
					src = bv
				}
				v := vals[i]
				if src >= 0 && src < 32 {
					v = vals[src]
				}
				t.r[in.args[0].reg] = v & 0xffffffff
				t.pc++
				t.waiting = 0
			}
			resolved = true
		}
		if resolved {
			continue
		}
		pc := -1
		for _, t := range ths {
			if t.done || t.waiting != 'y' {
				panic(fmt.Sprintf("simt: deadlock: thread %d done %v waiting %q at pc %d", t.tid, t.done, t.waiting, t.pc))
			}
			if pc < 0 {
				pc = t.pc
			}
		}
		for _, t := range ths {
			t.pc++
			t.waiting = 0
		}
	}
}

// step runs t until it waits, returns or faults.
func (t *sThread) step() {
	prog := t.blk.k.prog
	for {
		if t.pc >= len(prog) {
			t.done = true
			return
		}
		in := prog[t.pc]
		t.blk.steps++
		if t.blk.steps > simtMaxSteps {
			panic("simt: too many steps")
		}
		if in.guard >= 0 && (t.r[in.guard] != 0) == in.gneg {
			t.pc++
			continue
		}
		switch in.ctl {
		case 'b':
			t.pc = in.tgt
			continue
		case 'r':
			t.done = true
			return
		case 's', 'y':
			t.waiting = in.ctl
			return
		}
		in.exec(t, in)
		t.pc++
	}
}
