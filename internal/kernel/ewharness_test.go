package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/ptxsim"
)

// Test harness for the PTX elementwise kernels: memory layouts for every operand kind,
// random inputs with special values, the reference through the CPU implementation, and
// the run on the PTX simulator.

// ---- ptxas ----

var (
	reRegs  = regexp.MustCompile(`Used (\d+) registers`)
	reFrame = regexp.MustCompile(`(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads`)
)

// ptxasResult is what ptxas -v says about a module's kernel.
type ptxasResult struct {
	log   string
	regs  int // the kernel's registers
	cubin string
}

// assemble compiles src for arch ("sm_90") and checks that no function of the module
// spills or uses a stack frame.
func assemble(t testing.TB, ptxas, src, arch, dir string) ptxasResult {
	t.Helper()
	in := filepath.Join(dir, "k.ptx")
	out := filepath.Join(dir, "k.cubin")
	if err := os.WriteFile(in, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := exec.Command(ptxas, "-arch="+arch, "-v", in, "-o", out).CombinedOutput()
	log := string(b)
	if err != nil {
		t.Fatalf("ptxas -arch=%s failed: %v\n%s\n--- source ---\n%s", arch, err, log, numbered(src))
	}
	for _, m := range reFrame.FindAllStringSubmatch(log, -1) {
		if m[1] != "0" || m[2] != "0" || m[3] != "0" {
			t.Errorf("ptxas -arch=%s: stack frame or spills: %s\n%s", arch, m[0], log)
		}
	}
	r := ptxasResult{log: log, cubin: out}
	if m := reRegs.FindAllStringSubmatch(log, -1); len(m) > 0 {
		r.regs, _ = strconv.Atoi(m[len(m)-1][1]) // the entry is compiled last
	}
	return r
}

func numbered(src string) string {
	var b strings.Builder
	for i, l := range strings.Split(src, "\n") {
		b.WriteString(strconv.Itoa(i+1) + "\t" + l + "\n")
	}
	return b.String()
}

// ---- values ----

var allTypes = []dtype.DType{
	dtype.Bool, dtype.Int8, dtype.Int16, dtype.Int32, dtype.Int64,
	dtype.Uint8, dtype.Uint16, dtype.Uint32, dtype.Uint64,
	dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64,
}

var specialF64 = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 3, -7, 0.1,
	math.Inf(1), math.Inf(-1), math.NaN(), -math.NaN(),
	math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64, 0x1p-1022, 0x1p-1030,
	math.MaxFloat64, -math.MaxFloat64, math.MaxFloat32, 0x1p128 - 0x1p103, 0x1p-149, 0x1p-126, 0x1p-140,
	127.5, 128, -128.5, 255.5, 256, 65535.5, 65536, -32768.5, 0x1p31, -0x1p31, 0x1p31 - 0.5,
	0x1p32, 0x1p63, -0x1p63, 0x1p64, 1e10, -1e10, 1e30, 0x1p24 + 1, 0x1p53 + 1, 65504, 65520,
	6e-8, 1e-5, 3.3895313892515355e38, 100, 1e-3, 2, 10, 0.7853981633974483,
}

var specialU64 = []uint64{
	0, 1, 2, 3, 7, 8, 15, 16, 31, 32, 33, 63, 64, 65, 127, 128, 255, 256, 32767, 32768, 65535,
	1<<31 - 1, 1 << 31, 1<<32 - 1, 1 << 32, 1<<63 - 1, 1 << 63,
	^uint64(0), ^uint64(1), ^uint64(6), ^uint64(127), ^uint64(128), ^uint64(32767), ^uint64(32768),
	^uint64(1<<31 - 1), ^uint64(1 << 31),
}

// randBits returns the bits of a random element of type t, often a special value.
func randBits(r *rand.Rand, t dtype.DType) uint64 {
	special := r.Intn(3) == 0
	switch {
	case t == dtype.Bool:
		return uint64(r.Intn(2))
	case t.IsInteger():
		var v uint64
		switch {
		case special:
			v = specialU64[r.Intn(len(specialU64))]
		case r.Intn(2) == 0:
			v = uint64(int64(r.Intn(21) - 10))
		default:
			v = r.Uint64()
		}
		if t.Bits() < 64 {
			v &= 1<<t.Bits() - 1
		}
		return v
	}
	var f float64
	switch {
	case special:
		f = specialF64[r.Intn(len(specialF64))]
	case r.Intn(3) == 0:
		f = (r.Float64()*2 - 1) * 10
		if r.Intn(2) == 0 {
			f = math.Round(f*2) / 2
		}
	default:
		switch t {
		case dtype.Float64:
			return r.Uint64()
		case dtype.Float32:
			return uint64(r.Uint32())
		default:
			return uint64(uint16(r.Uint32()))
		}
	}
	switch t {
	case dtype.Float64:
		return math.Float64bits(f)
	case dtype.Float32:
		return uint64(math.Float32bits(float32(f)))
	case dtype.Float16:
		return uint64(dtype.Float16FromFloat64(f))
	}
	return uint64(dtype.BFloat16FromFloat64(f))
}

func putBits(b []byte, size int, v uint64) {
	for i := 0; i < size; i++ {
		b[i] = byte(v >> (8 * i))
	}
}

func getBits(b []byte, size int) uint64 {
	var x [8]byte
	copy(x[:], b[:size])
	return binary.LittleEndian.Uint64(x[:])
}

// isNaNBits reports whether bits of float type t are a NaN.
func isNaNBits(t dtype.DType, v uint64) bool {
	switch t {
	case dtype.Float64:
		return v&(1<<63-1) > 0x7ff0000000000000
	case dtype.Float32:
		return v&0x7fffffff > 0x7f800000
	case dtype.Float16:
		return v&0x7fff > 0x7c00
	case dtype.BFloat16:
		return v&0x7fff > 0x7f80
	}
	return false
}

// ulps returns the distance in units in the last place between two non-NaN floats of
// type t (0 for equal values, ±0 included).
func ulps(t dtype.DType, a, b uint64) uint64 {
	ord := func(v uint64) int64 {
		bitsz := t.Bits()
		sign := uint64(1) << (bitsz - 1)
		if v&sign != 0 {
			return -int64(v &^ sign)
		}
		return int64(v)
	}
	d := ord(a) - ord(b)
	if d < 0 {
		d = -d
	}
	return uint64(d)
}

// ---- layouts and runs ----

// ewCase is one run of a spec: the iteration shape (Rank > 0) or n, the strides of the
// strided operands (-1 the output), the parameter values in Expr.Params order, the
// launch, and whether addresses are deliberately not 16-byte aligned.
type ewCase struct {
	e          *Elementwise
	n          int
	shape      []int
	strides    map[int][]int
	params     []expr.Scalar
	grid, blk  int
	misaligned bool
	seed       int64
	ulpTol     uint64 // allowed ulps against the CPU (math functions computed differently)
	// exempt, if not nil, says for an element's input bits (by slot) that the CPU
	// reference is known to be wrong there.
	exempt func(in []uint64) bool
	// ref, if not nil, replaces the CPU reference (the n output elements from the
	// inputs as the kernel sees them).
	ref func(n int, logical [][]byte) ([]byte, error)
	// data, if set for an input slot of kind Contig, gives its elements' bits (repeated
	// to n elements) instead of random ones.
	data map[int][]uint64
}

// operand is one operand's memory.
type operand struct {
	t      dtype.DType
	kind   OpKind
	region uint64 // address of mem[0]
	mem    []byte
	elem0  int // byte offset of element 0 in mem
	st     []int
}

func (o *operand) addr() uint64 { return o.region + uint64(o.elem0) }

const guardBytes = 64

// layout allocates operand memory for n elements with the given kind.
func layout(k int, t dtype.DType, kind OpKind, n int, shape, st []int, misaligned bool, r *rand.Rand) *operand {
	o := &operand{t: t, kind: kind, region: uint64(k+2) << 36, st: st}
	size := t.Size()
	lo, count := 0, n
	switch kind {
	case Scalar:
		count = 1
	case Strided:
		l, h := extent(shape, st)
		lo, count = l, h-l+1
	}
	mis := 0
	if misaligned && size < 16 {
		mis = size * (1 + r.Intn(16/size-1))
	}
	o.mem = make([]byte, 2*guardBytes+mis+count*size)
	o.elem0 = guardBytes + mis - lo*size
	return o
}

// elemOffsets returns the byte offset in mem of each of the n elements.
func (o *operand) elemOffsets(n int, shape []int) []int {
	size := o.t.Size()
	offs := make([]int, n)
	switch o.kind {
	case Contig:
		for i := range offs {
			offs[i] = o.elem0 + i*size
		}
	case Scalar:
		for i := range offs {
			offs[i] = o.elem0
		}
	case Strided:
		offsets(shape, o.st, 0, n, func(j, off int) { offs[j] = o.elem0 + off*size })
	}
	return offs
}

// ewResult is a run's memory: the output region after the kernel, and what the
// reference says it must hold.
type ewResult struct {
	got, want []byte
	outOffs   []int
	ins       []*operand
	inBefore  [][]byte
	logical   [][]byte // each input's n elements as the kernel sees them
}

// run runs the case on the simulator and through the CPU reference.
func (c *ewCase) run(t testing.TB, src, entry string) *ewResult {
	t.Helper()
	e := c.e
	r := rand.New(rand.NewSource(c.seed))
	n := c.n
	if e.Rank > 0 {
		n = 1
		for _, s := range c.shape {
			n *= s
		}
	}
	res := &ewResult{ins: make([]*operand, len(e.Ins)), inBefore: make([][]byte, len(e.Ins)), logical: make([][]byte, len(e.Ins))}
	mem := &ptxsim.Regions{}
	for k, in := range e.Ins {
		if in.Kind == Index {
			continue
		}
		o := layout(k, in.DType, in.Kind, n, c.shape, c.strides[k], c.misaligned, r)
		size := in.DType.Size()
		for i := 0; i+size <= len(o.mem); i += size {
			putBits(o.mem[i:], size, randBits(r, in.DType))
		}
		if d := c.data[k]; d != nil && in.Kind == Contig {
			for i := 0; i < n; i++ {
				putBits(o.mem[o.elem0+i*size:], size, d[i%len(d)])
			}
		}
		res.ins[k] = o
		res.inBefore[k] = append([]byte(nil), o.mem...)
		mem.Map(o.region, o.mem)
		lg := make([]byte, n*size)
		for i, off := range o.elemOffsets(n, c.shape) {
			copy(lg[i*size:], o.mem[off:off+size])
		}
		res.logical[k] = lg
	}
	out := layout(len(e.Ins), e.Out.DType, e.Out.Kind, n, c.shape, c.strides[-1], c.misaligned, r)
	for i := range out.mem {
		out.mem[i] = 0xA5 // poison
	}
	mem.Map(out.region, out.mem)
	res.outOffs = out.elemOffsets(n, c.shape)

	// Arguments in the documented order.
	args := []uint64{out.addr(), uint64(n)}
	for k, in := range e.Ins {
		if in.Kind != Index {
			args = append(args, res.ins[k].addr())
		}
	}
	for _, s := range c.shape[:e.Rank] {
		args = append(args, uint64(s))
	}
	for _, op := range e.stridedOrder() {
		for _, s := range c.strides[op] {
			args = append(args, uint64(int64(s)))
		}
	}
	for _, p := range c.params {
		args = append(args, p.Bits())
	}

	// The reference: the CPU implementation of the contiguous equivalent over the inputs
	// as the kernel sees them, scattered into the poisoned output.
	res.want = append([]byte(nil), out.mem...)
	var ref []byte
	if c.ref != nil {
		var err error
		if ref, err = c.ref(n, res.logical); err != nil {
			t.Fatal(err)
		}
	} else {
		ref = cpuReference(t, e, n, res.logical, c.params)
	}
	size := e.Out.DType.Size()
	for i, off := range res.outOffs {
		copy(res.want[off:off+size], ref[i*size:(i+1)*size])
	}

	m, err := ptxsim.Parse(src)
	if err != nil {
		t.Fatalf("%s: parsing the PTX: %v\n%s", e.Key(), err, numbered(src))
	}
	k := m.Func(entry)
	if k == nil {
		t.Fatalf("no kernel %s in the module", entry)
	}
	if err := k.Launch(mem, ptxsim.Linear(c.grid, c.blk), args); err != nil {
		t.Fatalf("%s (n=%d, grid %d x %d): %v", e.Key(), n, c.grid, c.blk, err)
	}
	res.got = out.mem
	return res
}

// cpuReference evaluates e over n elements of contiguous inputs with e.CPU() on the CPU
// backend (inputs of kind Scalar and Index keep their kind).
func cpuReference(t testing.TB, e *Elementwise, n int, logical [][]byte, params []expr.Scalar) []byte {
	t.Helper()
	ce := &Elementwise{Expr: e.Expr, Out: Operand{e.Out.DType, Contig}}
	for _, in := range e.Ins {
		k := in.Kind
		if k == Strided {
			k = Contig
		}
		ce.Ins = append(ce.Ins, Operand{in.DType, k})
	}
	fn, err := ce.CPU()
	if err != nil {
		t.Fatalf("CPU(): %v", err)
	}
	dev := cpu.New(1)
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	alloc := func(b []byte) backend.Mem {
		m, err := dev.Alloc(backend.DeviceMem, int64(max(len(b), 8)), s)
		if err != nil {
			t.Fatal(err)
		}
		copy(m.(*cpu.Mem).Host(), b)
		return m
	}
	size := e.Out.DType.Size()
	outMem := alloc(make([]byte, n*size))
	args := []backend.Arg{{Kind: backend.ArgMem, Mem: outMem}, {Kind: backend.ArgScalar, Size: 8, Val: uint64(n)}}
	for k, in := range ce.Ins {
		switch in.Kind {
		case Contig:
			args = append(args, backend.Arg{Kind: backend.ArgMem, Mem: alloc(logical[k])})
		case Scalar:
			args = append(args, backend.Arg{Kind: backend.ArgMem, Mem: alloc(logical[k][:in.DType.Size()])})
		}
	}
	for _, p := range params {
		args = append(args, backend.Arg{Kind: backend.ArgScalar, Size: uint8(p.DType().Size()), Val: p.Bits()})
	}
	if err := s.Launch(cpu.NewFunc("ref", fn), backend.LaunchConfig{Grid: [3]uint32{1, 1, 1}, Block: [3]uint32{1, 1, 1}}, args); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("CPU reference: %v", err)
	}
	return append([]byte(nil), outMem.(*cpu.Mem).Host()[:n*size]...)
}

// check compares a run with its reference: bytes outside the output elements and the
// inputs unchanged, each output element equal bit for bit (NaNs of a float type only as
// NaNs, since payloads differ between the CPU and the GPU), or within c.ulpTol ulps.
// It returns the largest ulp difference seen.
func (c *ewCase) check(t testing.TB, res *ewResult) uint64 {
	t.Helper()
	e := c.e
	for k, o := range res.ins {
		if o != nil && string(o.mem) != string(res.inBefore[k]) {
			t.Errorf("%s: input %d modified", e.Key(), k)
		}
	}
	ot := e.Out.DType
	size := ot.Size()
	isElem := map[int]int{}
	for i, off := range res.outOffs {
		isElem[off] = i
	}
	var worst uint64
	bad := 0
	for off := 0; off < len(res.got); off++ {
		i, ok := isElem[off]
		if !ok {
			continue
		}
		g, w := getBits(res.got[off:], size), getBits(res.want[off:], size)
		if g == w {
			continue
		}
		if ot.IsFloat() && isNaNBits(ot, g) && isNaNBits(ot, w) {
			continue
		}
		if ot.IsFloat() && !isNaNBits(ot, g) && !isNaNBits(ot, w) {
			if d := ulps(ot, g, w); d <= c.ulpTol {
				worst = max(worst, d)
				continue
			}
		}
		if c.exempt != nil {
			var in []uint64
			for k, lg := range res.logical {
				if lg != nil {
					sz := e.Ins[k].DType.Size()
					in = append(in, getBits(lg[i*sz:], sz))
				} else {
					in = append(in, 0)
				}
			}
			if c.exempt(in) {
				continue
			}
		}
		if bad++; bad <= 5 {
			var ins []string
			for k, lg := range res.logical {
				if lg != nil {
					sz := e.Ins[k].DType.Size()
					ins = append(ins, fmt.Sprintf("in%d=%#x", k, getBits(lg[i*sz:], sz)))
				} else if e.Ins[k].Kind == Index {
					ins = append(ins, fmt.Sprintf("in%d=index", k))
				}
			}
			var ps []string
			for _, p := range c.params {
				ps = append(ps, p.GoString())
			}
			t.Errorf("%s: %s\n  element %d (n=%d, grid %dx%d): got %#x, want %#x; %s params %v",
				e.Key(), e.Expr, i, len(res.outOffs), c.grid, c.blk, g, w, strings.Join(ins, " "), ps)
		}
	}
	// Everything that is not an output element keeps its poison.
	for off := range res.got {
		if _, ok := isElem[off-off%size]; !ok && res.got[off] != 0xA5 {
			t.Errorf("%s: byte %d outside the output elements written (%#x)", e.Key(), off, res.got[off])
			break
		}
	}
	if bad > 5 {
		t.Errorf("%s: %d elements wrong in all", e.Key(), bad)
	}
	return worst
}
