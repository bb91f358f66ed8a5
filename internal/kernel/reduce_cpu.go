package kernel

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/fp"
)

// The CPU reduction.
//
// Order of evaluation. Integer sums and products wrap, so any order gives the same
// result; min, max, and, or, xor and the arg operators are made independent of the
// order by their rules (the operator table, operator.go: canonical NaN, -0 < +0, first
// index among ties), whose CPU loops (fold, foldVec) this uses. Float sums and
// products follow one fixed tree per output that depends only on k (the number of
// elements reduced), never on the number of workers: NumPy's pairwise summation
// (pairwise_sum in numpy/_core/src/umath/loops_utils.h.src; Higham, "The accuracy of
// floating point summation", SIAM J. Sci. Comput. 14(4), 1993): fewer than 8 elements
// are added in order; up to 128 elements go to 8 interleaved accumulators that are
// then added as ((a0+a1)+(a2+a3))+((a4+a5)+(a6+a7)), followed by the leftover
// elements in order; longer runs split at n2 = n/2 rounded down to a multiple of 8 and
// add the two halves' results. The error is O(log2(k)·ε) times the sum of magnitudes.
// Workers only ever evaluate whole subtrees of that tree (outputs, tiles of outputs, or
// the top levels of one output's tree), so the result is bitwise the same for any
// number of workers; it does depend on the memory layout, because reduced dims are read
// in the order the layout collapses them to. A float result that is NaN is stored as
// the canonical NaN (the NaN policy); the arg operators store the element itself.

// redChunk is the number of elements materialized at once.
const redChunk = 1024

// redTile is the number of outputs a column-order worker accumulates at once.
const redTile = 256

// redGrain is the least work (elements) worth a goroutine.
const redGrain = 1 << 15

type redMem struct {
	full []byte
	off  int // byte offset of element 0 in full
}

type redArgs struct {
	out, idx  []byte // from element 0; nil when not stored
	m, k      int
	ins       []redMem
	kept, red []int
	kst, rst  [][]int
	count     int
	params    []expr.Scalar
	workers   int
}

// CPU returns the reduction as a Go function for the CPU backend (the parameters are
// Reduce's).
func (r *Reduce) CPU() (func(*cpu.Launch) error, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if r.GPU.Partial || r.Pre == PrePartial {
		return nil, fmt.Errorf("kernel: partial reductions are a GPU strategy")
	}
	var prog *expr.Program
	if r.Pre == PreExpr {
		var err error
		if prog, err = r.Map.Compile(); err != nil {
			return nil, err
		}
	}
	return func(l *cpu.Launch) error {
		if len(l.Args) != r.numParams() {
			return fmt.Errorf("kernel: %s: %d arguments, want %d: %w", r.Key(), len(l.Args), r.numParams(), backend.ErrInvalidValue)
		}
		a, err := r.decode(l)
		if err != nil {
			return err
		}
		a.workers = l.Workers()
		return r.run(a, prog)
	}, nil
}

// decode reads the launch's arguments and checks every access against the memory.
func (r *Reduce) decode(l *cpu.Launch) (*redArgs, error) {
	a := &redArgs{}
	i := 0
	next := func() int { i++; return i - 1 }
	mem := func(j int) []byte {
		if l.Args[j].Kind == backend.ArgPtr && l.Args[j].Val == 0 {
			return nil
		}
		return l.Mem(j)
	}
	a.out = mem(next())
	if r.Op.IsArg() {
		a.idx = mem(next())
	}
	a.m = int(l.Uint64(next()))
	a.k = int(l.Uint64(next()))
	inArgs := make([]int, len(r.Ins))
	for j := range r.Ins {
		inArgs[j] = next()
	}
	if r.Op.IsArg() && r.Pre == PrePartial {
		next() // never: the CPU refuses partial specs
	}
	a.kept = make([]int, r.KeptRank)
	for d := range a.kept {
		a.kept[d] = int(l.Uint64(next()))
	}
	a.red = make([]int, r.RedRank)
	for d := range a.red {
		a.red[d] = int(l.Uint64(next()))
	}
	a.kst = make([][]int, len(r.Ins))
	a.rst = make([][]int, len(r.Ins))
	for j := range r.Ins {
		a.kst[j] = make([]int, r.KeptRank)
		for d := range a.kst[j] {
			a.kst[j][d] = int(l.Int64(next()))
		}
	}
	for j := range r.Ins {
		a.rst[j] = make([]int, r.RedRank)
		for d := range a.rst[j] {
			a.rst[j][d] = int(l.Int64(next()))
		}
	}
	if r.Mean {
		a.count = int(l.Uint64(next()))
	}
	if r.Map != nil {
		for _, p := range r.Map.Params {
			for len(a.params) < p.Index {
				a.params = append(a.params, expr.Scalar{})
			}
			a.params = append(a.params, expr.ScalarFromBits(p.DType, l.Args[next()].Val))
		}
	}
	if redProd(a.kept) != a.m || redProd(a.red) != a.k {
		return nil, fmt.Errorf("kernel: reduction of %d outputs over %d with shapes %v, %v: %w", a.m, a.k, a.kept, a.red, backend.ErrInvalidValue)
	}
	if a.m == 0 {
		return a, nil
	}
	fault := func(what string) error {
		return fmt.Errorf("kernel: illegal address: %s outside its allocation: %w", what, backend.ErrLaunchFailed)
	}
	if a.out != nil && len(a.out) < a.m*r.outType().Size() {
		return nil, fault("the output")
	}
	if r.Op.IsArg() && (a.idx == nil || len(a.idx) < a.m*8) {
		return nil, fault("the indices")
	}
	if !r.Op.IsArg() && a.out == nil {
		return nil, fault("the output")
	}
	a.ins = make([]redMem, len(r.Ins))
	for j, t := range r.Ins {
		full, off := l.MemAt(inArgs[j])
		a.ins[j] = redMem{full, off}
		if a.k == 0 {
			continue
		}
		if r.Pre == PreExpr && !redExprReads(r.Map, j) {
			continue
		}
		lo, hi := reduceExtent(a.kept, a.red, a.kst[j], a.rst[j])
		sz := t.Size()
		if off+lo*sz < 0 || off+(hi+1)*sz > len(full) {
			return nil, fault(fmt.Sprintf("operand %d elements [%d, %d]", j, lo, hi))
		}
		if off%sz != 0 {
			return nil, fmt.Errorf("kernel: operand %d is misaligned: %w", j, backend.ErrLaunchFailed)
		}
	}
	return a, nil
}

func redExprReads(e *expr.Expr, slot int) bool {
	for _, s := range e.Inputs {
		if s.Index == slot {
			return true
		}
	}
	return false
}

// run computes the reduction.
func (r *Reduce) run(a *redArgs, prog *expr.Program) error {
	if a.m == 0 {
		return nil
	}
	if a.k == 0 && (r.Op == OpMin || r.Op == OpMax || r.Op.IsArg()) {
		return fmt.Errorf("kernel: %v over no elements: %w", r.Op, backend.ErrLaunchFailed)
	}
	switch r.Acc {
	case dtype.Bool, dtype.Uint8:
		return redRun[uint8](r, a, prog)
	case dtype.Int8:
		return redRun[int8](r, a, prog)
	case dtype.Int16:
		return redRun[int16](r, a, prog)
	case dtype.Int32:
		return redRun[int32](r, a, prog)
	case dtype.Int64:
		return redRun[int64](r, a, prog)
	case dtype.Uint16:
		return redRun[uint16](r, a, prog)
	case dtype.Uint32:
		return redRun[uint32](r, a, prog)
	case dtype.Uint64:
		return redRun[uint64](r, a, prog)
	case dtype.Float32:
		return redRun[float32](r, a, prog)
	case dtype.Float64:
		return redRun[float64](r, a, prog)
	}
	return fmt.Errorf("kernel: reduction into %v", r.Acc)
}

// redSource produces the values a reduction combines, as A.
type redSource[A fp.Number] struct {
	// fill writes the values of output o at positions r0, r0+1, ... into dst.
	fill func(dst []A, o, r0 int, sc *redScratch)
	// direct returns the values of output o at positions r0..r0+n-1 without copying,
	// when the operand can be read in place (nil if never).
	direct func(o, r0, n int) []A
	// fillCol writes the values at position r of outputs o0, o0+1, ... into dst: the
	// outputs share all kept indices but the innermost (column order only).
	fillCol func(dst []A, o0, r int, sc *redScratch)
	// directCol is direct for fillCol.
	directCol func(o0, r, n int) []A
	// colOK reports that column order is possible: the innermost kept dim has stride 1
	// in every operand.
	colOK bool
}

// redScratch is one worker's scratch memory.
type redScratch struct {
	offs  []int
	bytes [][]byte
	vals  []byte
	vecs  [][]byte
	half  []byte // redHalfSource's gathered bits
}

func (sc *redScratch) offsets(n int) []int {
	if cap(sc.offs) < n {
		sc.offs = make([]int, max(n, redChunk))
	}
	return sc.offs[:n]
}

func redScratchOf[A fp.Number](buf *[]byte, n int) []A {
	var z A
	sz := int(unsafe.Sizeof(z))
	if cap(*buf) < n*sz+8 {
		*buf = make([]byte, max(n, redChunk)*sz+8)
	}
	b := *buf
	// align for A (make's memory is 8-aligned; keep it so)
	return unsafe.Slice((*A)(unsafe.Pointer(unsafe.SliceData(b))), n)
}

// redLayout is the address arithmetic of one operand.
type redLayout struct {
	kept, red []int
	kst, rst  []int
	base      int // element index of element 0 in the operand's typed view
}

// baseOf returns the element index of output o's first element (position 0).
func (l *redLayout) baseOf(o int) int {
	off := l.base
	for d := len(l.kept) - 1; d >= 0; d-- {
		n := l.kept[d]
		off += (o % n) * l.kst[d]
		o /= n
	}
	return off
}

// contigRed reports whether positions are consecutive elements.
func (l *redLayout) contigRed() bool {
	return len(l.red) == 0 || len(l.red) == 1 && l.rst[0] == 1
}

// redOffset returns the element offset of position r.
func (l *redLayout) redOffset(r int) int {
	off := 0
	for d := len(l.red) - 1; d >= 0; d-- {
		n := l.red[d]
		off += (r % n) * l.rst[d]
		r /= n
	}
	return off
}

// fillOffsets writes the element indices of positions r0, r0+1, ... of the output
// whose first element is at base.
func (l *redLayout) fillOffsets(offs []int, base, r0 int) {
	if l.contigRed() {
		st := 0
		if len(l.red) == 1 {
			st = l.rst[0]
		}
		for i := range offs {
			offs[i] = base + (r0+i)*st
		}
		return
	}
	offsets(l.red, l.rst, r0, len(offs), func(j, off int) { offs[j] = base + off })
}

func redView[T fp.Number](m redMem) ([]T, int) {
	var z T
	sz := int(unsafe.Sizeof(z))
	if len(m.full) < sz {
		return nil, 0
	}
	return cpu.Slice[T](m.full), m.off / sz
}

// redConvSource reads operand 0 of type T and converts it to A (or maps it to 0/1 when
// nonzero is set).
func redConvSource[T, A fp.Number](a *redArgs, toBool bool) *redSource[A] {
	view, base := redView[T](a.ins[0])
	l := &redLayout{kept: a.kept, red: a.red, kst: a.kst[0], rst: a.rst[0], base: base}
	s := &redSource[A]{}
	s.fill = func(dst []A, o, r0 int, sc *redScratch) {
		b := l.baseOf(o)
		if l.contigRed() && len(l.red) == 1 {
			redConvert(dst, view[b+r0:b+r0+len(dst)], toBool)
			return
		}
		offs := sc.offsets(len(dst))
		l.fillOffsets(offs, b, r0)
		if toBool {
			for i, off := range offs {
				dst[i] = redB2N[A](view[off] != 0)
			}
			return
		}
		for i, off := range offs {
			dst[i] = A(view[off])
		}
	}
	same := redSameType[T, A]() && !toBool
	if same && l.contigRed() && len(l.red) == 1 {
		s.direct = func(o, r0, n int) []A {
			b := l.baseOf(o)
			v := view[b+r0 : b+r0+n]
			return unsafe.Slice((*A)(unsafe.Pointer(unsafe.SliceData(v))), n)
		}
	}
	if len(a.kept) > 0 && a.kst[0][len(a.kept)-1] == 1 {
		s.colOK = true
		s.fillCol = func(dst []A, o0, r int, sc *redScratch) {
			b := l.baseOf(o0) + l.redOffset(r)
			redConvert(dst, view[b:b+len(dst)], toBool)
		}
		if same {
			s.directCol = func(o0, r, n int) []A {
				b := l.baseOf(o0) + l.redOffset(r)
				v := view[b : b+n]
				return unsafe.Slice((*A)(unsafe.Pointer(unsafe.SliceData(v))), n)
			}
		}
	}
	return s
}

func redSameType[T, A fp.Number]() bool {
	var t T
	_, ok := any(t).(A)
	return ok
}

func redB2N[A fp.Number](b bool) A {
	if b {
		return 1
	}
	return 0
}

func redConvert[T, A fp.Number](dst []A, src []T, toBool bool) {
	src = src[:len(dst)]
	if toBool {
		for i, v := range src {
			dst[i] = redB2N[A](v != 0)
		}
		return
	}
	for i, v := range src {
		dst[i] = A(v)
	}
}

// redExprSource evaluates the map over gathered operands.
func redExprSource[A fp.Number](r *Reduce, a *redArgs, prog *expr.Program) *redSource[A] {
	type opnd struct {
		l    *redLayout
		sz   int
		read bool
	}
	ops := make([]opnd, len(r.Ins))
	colOK := len(a.kept) > 0
	for j, t := range r.Ins {
		sz := t.Size()
		ops[j] = opnd{l: &redLayout{kept: a.kept, red: a.red, kst: a.kst[j], rst: a.rst[j], base: a.ins[j].off / sz}, sz: sz, read: redExprReads(r.Map, j)}
		if ops[j].read && colOK && a.kst[j][len(a.kept)-1] != 1 {
			colOK = false
		}
	}
	eval := func(dst []A, sc *redScratch, gather func(j int, buf []byte)) {
		n := len(dst)
		if len(sc.bytes) < len(ops) {
			sc.bytes = make([][]byte, len(ops))
		}
		ins := make([][]byte, len(ops))
		for j, op := range ops {
			if !op.read {
				continue
			}
			if cap(sc.bytes[j]) < n*op.sz {
				sc.bytes[j] = make([]byte, max(n, redChunk)*op.sz)
			}
			ins[j] = sc.bytes[j][:n*op.sz]
			gather(j, ins[j])
		}
		out := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(dst))), n*int(unsafe.Sizeof(dst[0])))
		if err := prog.EvalBytes(n, out, ins, a.params); err != nil {
			panic(err) // faults the device: the spec was validated, this is a bug
		}
	}
	s := &redSource[A]{colOK: colOK}
	s.fill = func(dst []A, o, r0 int, sc *redScratch) {
		eval(dst, sc, func(j int, buf []byte) {
			op := ops[j]
			offs := sc.offsets(len(dst))
			op.l.fillOffsets(offs, op.l.baseOf(o), r0)
			redGather(buf, a.ins[j].full, offs, op.sz)
		})
	}
	s.fillCol = func(dst []A, o0, r int, sc *redScratch) {
		eval(dst, sc, func(j int, buf []byte) {
			op := ops[j]
			p := (op.l.baseOf(o0) + op.l.redOffset(r)) * op.sz
			copy(buf, a.ins[j].full[p:p+len(buf)])
		})
	}
	return s
}

// redGather copies the elements at element indices offs (of size sz) into dst.
func redGather(dst, full []byte, offs []int, sz int) {
	switch sz {
	case 1:
		for i, o := range offs {
			dst[i] = full[o]
		}
	case 2:
		d, s := cpu.Slice[uint16](dst), cpu.Slice[uint16](full)
		for i, o := range offs {
			d[i] = s[o]
		}
	case 4:
		d, s := cpu.Slice[uint32](dst), cpu.Slice[uint32](full)
		for i, o := range offs {
			d[i] = s[o]
		}
	default:
		d, s := cpu.Slice[uint64](dst), cpu.Slice[uint64](full)
		for i, o := range offs {
			d[i] = s[o]
		}
	}
}

// redMakeSource returns the reduction's redSource of values.
func redMakeSource[A fp.Number](r *Reduce, a *redArgs, prog *expr.Program) (*redSource[A], error) {
	if r.Pre == PreExpr {
		return redExprSource[A](r, a, prog), nil
	}
	toBool := r.Pre == PreNonzero || r.Acc == dtype.Bool
	switch r.Ins[0] {
	case dtype.Bool, dtype.Uint8:
		return redConvSource[uint8, A](a, toBool), nil
	case dtype.Int8:
		return redConvSource[int8, A](a, toBool), nil
	case dtype.Int16:
		return redConvSource[int16, A](a, toBool), nil
	case dtype.Int32:
		return redConvSource[int32, A](a, toBool), nil
	case dtype.Int64:
		return redConvSource[int64, A](a, toBool), nil
	case dtype.Uint16:
		return redConvSource[uint16, A](a, toBool), nil
	case dtype.Uint32:
		return redConvSource[uint32, A](a, toBool), nil
	case dtype.Uint64:
		return redConvSource[uint64, A](a, toBool), nil
	case dtype.Float32:
		return redConvSource[float32, A](a, toBool), nil
	case dtype.Float64:
		return redConvSource[float64, A](a, toBool), nil
	case dtype.Float16, dtype.BFloat16:
		return redHalfSource[A](a, r.Ins[0], toBool), nil
	}
	return nil, fmt.Errorf("kernel: reduction of %v", r.Ins[0])
}

// redHalfSource reads operand 0 of half-precision bits and converts it to A (float32,
// float64: exact) or maps it to 0/1 when toBool is set (nonzero: NaN is, ±0 isn't), in
// bulk over each run of elements.
func redHalfSource[A fp.Number](a *redArgs, from dtype.DType, toBool bool) *redSource[A] {
	view, base := redView[uint16](a.ins[0])
	l := &redLayout{kept: a.kept, red: a.red, kst: a.kst[0], rst: a.rst[0], base: base}
	to32 := dtype.BFloat16ToFloat32
	if from == dtype.Float16 {
		to32 = dtype.Float16ToFloat32
	}
	conv := func(dst []A, src []uint16) {
		src = src[:len(dst)]
		if toBool {
			for i, h := range src {
				dst[i] = redB2N[A](h&0x7fff != 0)
			}
			return
		}
		for i, h := range src {
			dst[i] = A(to32(h))
		}
	}
	s := &redSource[A]{}
	s.fill = func(dst []A, o, r0 int, sc *redScratch) {
		b := l.baseOf(o)
		if l.contigRed() && len(l.red) == 1 {
			conv(dst, view[b+r0:b+r0+len(dst)])
			return
		}
		offs := sc.offsets(len(dst))
		l.fillOffsets(offs, b, r0)
		bits := redScratchOf[uint16](&sc.half, len(dst))
		for i, off := range offs {
			bits[i] = view[off]
		}
		conv(dst, bits)
	}
	if len(a.kept) > 0 && a.kst[0][len(a.kept)-1] == 1 {
		s.colOK = true
		s.fillCol = func(dst []A, o0, r int, sc *redScratch) {
			b := l.baseOf(o0) + l.redOffset(r)
			conv(dst, view[b:b+len(dst)])
		}
	}
	return s
}

// redAcc is a running reduction of one output.
type redAcc[A fp.Number] struct {
	v A
	i int64 // arg operators: the index of v (-1: none yet)
}

// newRedAcc returns an accumulator holding the identity id.
func newRedAcc[A fp.Number](id A) redAcc[A] { return redAcc[A]{v: id, i: -1} }

// redIdentity returns op's identity on values of type t as an A (operator.go).
func redIdentity[A fp.Number](op Op, t dtype.DType) A {
	return fp.FromBits[A](op.Identity(t).Bits())
}

// redFold folds values x (positions r0, r0+1, ...) into acc for the operators whose
// result doesn't depend on the order (all but float sums and products).
func redFold[A fp.Number](op Op, acc *redAcc[A], x []A, r0 int) {
	if !op.IsArg() {
		acc.v = fold(op, acc.v, x)
		return
	}
	isMin := op == OpArgMin
	b, bi := acc.v, acc.i
	for j, v := range x {
		if bi < 0 || argBefore(isMin, b, bi, v, int64(r0+j)) {
			b, bi = v, int64(r0+j)
		}
	}
	acc.v, acc.i = b, bi
}

// merge combines acc with b, an accumulator of positions after acc's.
func (acc *redAcc[A]) merge(op Op, b redAcc[A]) {
	if !op.IsArg() {
		acc.v = combine(op, acc.v, b.v)
		return
	}
	if b.i >= 0 && (acc.i < 0 || argBefore(op == OpArgMin, acc.v, acc.i, b.v, b.i)) {
		*acc = b
	}
}

// redPairwise returns the sum (product) of x by NumPy's pairwise rule.
func redPairwise[A fp.Number](prod bool, x []A) A {
	n := len(x)
	switch {
	case n == 0:
		if prod {
			return 1
		}
		return 0
	case n < 8:
		s := x[0]
		if prod {
			for _, v := range x[1:] {
				s *= v
			}
			return s
		}
		for _, v := range x[1:] {
			s += v
		}
		return s
	case n <= 128:
		var a [8]A
		copy(a[:], x[:8])
		i := 8
		if prod {
			for ; i < n-n%8; i += 8 {
				y := x[i : i+8 : i+8]
				a[0] *= y[0]
				a[1] *= y[1]
				a[2] *= y[2]
				a[3] *= y[3]
				a[4] *= y[4]
				a[5] *= y[5]
				a[6] *= y[6]
				a[7] *= y[7]
			}
			s := ((a[0] * a[1]) * (a[2] * a[3])) * ((a[4] * a[5]) * (a[6] * a[7]))
			for ; i < n; i++ {
				s *= x[i]
			}
			return s
		}
		for ; i < n-n%8; i += 8 {
			y := x[i : i+8 : i+8]
			a[0] += y[0]
			a[1] += y[1]
			a[2] += y[2]
			a[3] += y[3]
			a[4] += y[4]
			a[5] += y[5]
			a[6] += y[6]
			a[7] += y[7]
		}
		s := ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]))
		for ; i < n; i++ {
			s += x[i]
		}
		return s
	}
	n2 := n / 2
	n2 -= n2 % 8
	a, b := redPairwise(prod, x[:n2]), redPairwise(prod, x[n2:])
	if prod {
		return a * b
	}
	return a + b
}

// redSplit returns where the pairwise rule splits n elements (n > 128).
func redSplit(n int) int {
	n2 := n / 2
	return n2 - n2%8
}

// redPlan is what the row and column orders share: the operator (Op.For the
// accumulator type applied), its identity and the values.
type redPlan[A fp.Number] struct {
	op       Op
	id       A
	pairwise bool // float sum or product
	short    bool // Bool or/and: the fold ends at the first true/false
	src      *redSource[A]
	k        int
}

// done reports whether acc can no longer change: a Bool or (and) that is true (false),
// an arg operator that has found a NaN.
func (p *redPlan[A]) done(acc redAcc[A]) bool {
	switch {
	case p.op.IsArg():
		return acc.i >= 0 && acc.v != acc.v
	case p.short:
		return (p.op == OpOr) == (acc.v != 0)
	}
	return false
}

// redRows reduces outputs one at a time.
type redRows[A fp.Number] struct{ redPlan[A] }

// values returns output o's values at positions [lo, lo+n), n <= redChunk.
func (rr *redRows[A]) values(o, lo, n int, sc *redScratch) []A {
	if rr.src.direct != nil {
		return rr.src.direct(o, lo, n)
	}
	buf := redScratchOf[A](&sc.vals, n)
	rr.src.fill(buf, o, lo, sc)
	return buf
}

// tree returns the pairwise sum (product) of output o's values at [lo, hi), running
// the top levels on up to par goroutines.
func (rr *redRows[A]) tree(o, lo, hi, par int, sc *redScratch) A {
	prod := rr.op == OpProd
	n := hi - lo
	if n <= redChunk || n <= 128 {
		return redPairwise(prod, rr.values(o, lo, n, sc))
	}
	mid := lo + redSplit(n)
	var a, b A
	if par > 1 && n >= 2*redGrain {
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			a = rr.tree(o, lo, mid, par/2, &redScratch{})
		}()
		b = rr.tree(o, mid, hi, par-par/2, sc)
		wg.Wait()
	} else {
		a = rr.tree(o, lo, mid, 1, sc)
		b = rr.tree(o, mid, hi, 1, sc)
	}
	if prod {
		return a * b
	}
	return a + b
}

// fold folds output o's values at [lo, hi) in chunks (order-free operations).
func (rr *redRows[A]) fold(o, lo, hi int, sc *redScratch) redAcc[A] {
	acc := newRedAcc(rr.id)
	for r := lo; r < hi; r += redChunk {
		n := min(redChunk, hi-r)
		redFold(rr.op, &acc, rr.values(o, r, n, sc), r)
		if rr.done(acc) {
			break
		}
	}
	return acc
}

// reduce returns output o's result, using up to par goroutines.
func (rr *redRows[A]) reduce(o, par int, sc *redScratch) redAcc[A] {
	if rr.pairwise {
		return redAcc[A]{v: rr.tree(o, 0, rr.k, par, sc)}
	}
	if par <= 1 || rr.k < 2*redGrain {
		return rr.fold(o, 0, rr.k, sc)
	}
	parts := min(par, rr.k/redGrain)
	accs := make([]redAcc[A], parts)
	step := (rr.k + parts - 1) / parts
	cpu.Parallel(parts, parts, 1, func(lo, hi int) {
		sc := &redScratch{}
		for p := lo; p < hi; p++ {
			accs[p] = rr.fold(o, p*step, min(rr.k, (p+1)*step), sc)
		}
	})
	acc := accs[0]
	for _, b := range accs[1:] {
		acc.merge(rr.op, b)
	}
	return acc
}

// redCols reduces tiles of up to redTile outputs that differ only in their
// innermost kept index, a row of values at a time.
type redCols[A fp.Number] struct{ redPlan[A] }

func (cr *redCols[A]) row(o0, r, w int, buf []A, sc *redScratch) []A {
	if cr.src.directCol != nil {
		return cr.src.directCol(o0, r, w)
	}
	cr.src.fillCol(buf[:w], o0, r, sc)
	return buf[:w]
}

// redColScratch holds a worker's vectors for column order.
type redColScratch[A fp.Number] struct {
	sc    redScratch
	row   []A
	vals  []A // the tile's accumulators, for fold
	acc8  [8][]A
	level [][]A
}

func newRedColScratch[A fp.Number](w int) *redColScratch[A] {
	cs := &redColScratch[A]{row: make([]A, w), vals: make([]A, w)}
	for i := range cs.acc8 {
		cs.acc8[i] = make([]A, w)
	}
	return cs
}

func (cs *redColScratch[A]) levelVec(d, w int) []A {
	for len(cs.level) <= d {
		cs.level = append(cs.level, make([]A, w))
	}
	return cs.level[d][:w]
}

// tree writes the pairwise sum (product) of rows [lo, hi) of the tile at o0 into dst,
// with NumPy's rule applied to each column (the same tree as redRows.tree).
func (cr *redCols[A]) tree(o0, w, lo, hi, depth, par int, dst []A, cs *redColScratch[A]) {
	prod := cr.op == OpProd
	n := hi - lo
	switch {
	case n == 0:
		for i := range dst {
			dst[i] = cr.id
		}
	case n < 8:
		copy(dst, cr.row(o0, lo, w, cs.row, &cs.sc))
		for r := lo + 1; r < hi; r++ {
			x := cr.row(o0, r, w, cs.row, &cs.sc)
			if prod {
				for i := range dst {
					dst[i] *= x[i]
				}
			} else {
				for i := range dst {
					dst[i] += x[i]
				}
			}
		}
	case n <= 128:
		a := &cs.acc8
		for j := 0; j < 8; j++ {
			copy(a[j][:w], cr.row(o0, lo+j, w, cs.row, &cs.sc))
		}
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := 0; j < 8; j++ {
				x := cr.row(o0, lo+i+j, w, cs.row, &cs.sc)
				aj := a[j][:w]
				if prod {
					for c := range aj {
						aj[c] *= x[c]
					}
				} else {
					for c := range aj {
						aj[c] += x[c]
					}
				}
			}
		}
		for c := range dst {
			if prod {
				dst[c] = ((a[0][c] * a[1][c]) * (a[2][c] * a[3][c])) * ((a[4][c] * a[5][c]) * (a[6][c] * a[7][c]))
			} else {
				dst[c] = ((a[0][c] + a[1][c]) + (a[2][c] + a[3][c])) + ((a[4][c] + a[5][c]) + (a[6][c] + a[7][c]))
			}
		}
		for ; i < n; i++ {
			x := cr.row(o0, lo+i, w, cs.row, &cs.sc)
			if prod {
				for c := range dst {
					dst[c] *= x[c]
				}
			} else {
				for c := range dst {
					dst[c] += x[c]
				}
			}
		}
	default:
		mid := lo + redSplit(n)
		tmp := cs.levelVec(depth, w)
		if par > 1 && n >= 2*redGrain/max(1, w) {
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				cr.tree(o0, w, lo, mid, depth+1, par/2, dst, newRedColScratch[A](w))
			}()
			cr.tree(o0, w, mid, hi, depth+1, par-par/2, tmp, cs)
			wg.Wait()
		} else {
			cr.tree(o0, w, lo, mid, depth+1, 1, dst, cs)
			cr.tree(o0, w, mid, hi, depth+1, 1, tmp, cs)
		}
		if prod {
			for c := range dst {
				dst[c] *= tmp[c]
			}
		} else {
			for c := range dst {
				dst[c] += tmp[c]
			}
		}
	}
}

// fold folds rows [lo, hi) of the tile into accs (order-free operations).
func (cr *redCols[A]) fold(o0, w, lo, hi int, accs []redAcc[A], cs *redColScratch[A]) {
	op := cr.op
	if !op.IsArg() {
		vals := cs.vals[:w]
		for c := range vals {
			vals[c] = accs[c].v
		}
		for r := lo; r < hi; r++ {
			foldVec(op, vals, cr.row(o0, r, w, cs.row, &cs.sc))
		}
		for c := range vals {
			accs[c].v = vals[c]
		}
		return
	}
	isMin := op == OpArgMin
	for r := lo; r < hi; r++ {
		for c, v := range cr.row(o0, r, w, cs.row, &cs.sc) {
			if a := &accs[c]; a.i < 0 || argBefore(isMin, a.v, a.i, v, int64(r)) {
				a.v, a.i = v, int64(r)
			}
		}
	}
}

// tiles lists the column tiles: (first output, width).
func redColTiles(kept []int, m int) [][2]int {
	inner := kept[len(kept)-1]
	var t [][2]int
	for o := 0; o < m; o += inner {
		for c := 0; c < inner; c += redTile {
			t = append(t, [2]int{o + c, min(redTile, inner-c)})
		}
	}
	return t
}

func redRun[A fp.Number](r *Reduce, a *redArgs, prog *expr.Program) error {
	src, err := redMakeSource[A](r, a, prog)
	if err != nil {
		return err
	}
	op := r.Op.For(r.Acc)
	p := redPlan[A]{op: op, id: redIdentity[A](op, r.Acc), src: src, k: a.k,
		pairwise: fp.IsFloat[A]() && (op == OpSum || op == OpProd),
		short:    r.Acc == dtype.Bool && (op == OpOr || op == OpAnd)}
	res := make([]redAcc[A], a.m)
	if a.k == 0 {
		for o := range res {
			res[o] = newRedAcc(p.id)
		}
	} else if redUseCols(a, src) {
		redRunCols(&redCols[A]{p}, a, res)
	} else {
		rr := &redRows[A]{p}
		if a.m >= a.workers && a.m*a.k >= 2*redGrain || a.m*a.k < 2*redGrain {
			grain := max(1, redGrain/a.k)
			cpu.Parallel(a.workers, a.m, grain, func(lo, hi int) {
				sc := &redScratch{}
				for o := lo; o < hi; o++ {
					res[o] = rr.reduce(o, 1, sc)
				}
			})
		} else {
			sc := &redScratch{}
			for o := range res {
				res[o] = rr.reduce(o, a.workers, sc)
			}
		}
	}
	return redStore(r, a, res)
}

// redUseCols chooses column order: the innermost kept dim is contiguous in every operand
// while the reduced elements are not, and it is wide enough to be worth it.
func redUseCols[A fp.Number](a *redArgs, src *redSource[A]) bool {
	if !src.colOK || len(a.kept) == 0 || a.kept[len(a.kept)-1] < 4 {
		return false
	}
	for j := range a.rst {
		if len(a.red) == 1 && a.rst[j][0] == 1 {
			return false
		}
	}
	return true
}

func redRunCols[A fp.Number](cr *redCols[A], a *redArgs, res []redAcc[A]) {
	op := cr.op
	tiles := redColTiles(a.kept, a.m)
	par := 1
	if len(tiles) < a.workers && a.m*a.k >= 2*redGrain {
		par = a.workers
	}
	grain := max(1, redGrain/(redTile*a.k))
	cpu.Parallel(a.workers, len(tiles), grain, func(lo, hi int) {
		cs := newRedColScratch[A](redTile)
		dst := make([]A, redTile)
		for _, t := range tiles[lo:hi] {
			o0, w := t[0], t[1]
			out := res[o0 : o0+w]
			if cr.pairwise {
				cr.tree(o0, w, 0, a.k, 0, par, dst[:w], cs)
				for c := range out {
					out[c] = redAcc[A]{v: dst[c]}
				}
				continue
			}
			for c := range out {
				out[c] = newRedAcc(cr.id)
			}
			if par <= 1 {
				cr.fold(o0, w, 0, a.k, out, cs)
				continue
			}
			parts := min(par, max(1, a.k*w/redGrain))
			step := (a.k + parts - 1) / parts
			accs := make([][]redAcc[A], parts)
			cpu.Parallel(parts, parts, 1, func(plo, phi int) {
				cs := newRedColScratch[A](w)
				for p := plo; p < phi; p++ {
					accs[p] = make([]redAcc[A], w)
					for c := range accs[p] {
						accs[p][c] = newRedAcc(cr.id)
					}
					cr.fold(o0, w, p*step, min(a.k, (p+1)*step), accs[p], cs)
				}
			})
			for p := range accs {
				for c := range out {
					out[c].merge(op, accs[p][c])
				}
			}
		}
	})
}

// halfBitsOf returns the bits of the float16 or bfloat16 (t) that f, its exact float32
// value, holds: a NaN keeps its sign and payload, signaling or quiet (the rounding
// conversions quiet it), as the GPU's arg reductions return it (ptxF32ToF16Exact).
func halfBitsOf(t dtype.DType, f float32) uint16 {
	b := math.Float32bits(f)
	switch {
	case t == dtype.BFloat16:
		return uint16(b >> 16)
	case f != f:
		return uint16(b>>16)&0x8000 | 0x7c00 | uint16(b>>13)&0x3ff
	}
	return dtype.Float16FromFloat32(f)
}

// redStore writes the results (divided by count for Mean) to the output.
func redStore[A fp.Number](r *Reduce, a *redArgs, res []redAcc[A]) error {
	if r.Op.IsArg() {
		idx := cpu.Slice[int64](a.idx)
		for o, acc := range res {
			idx[o] = acc.i
		}
		if a.out == nil {
			return nil
		}
	}
	if ot := r.outType(); ot != r.Acc {
		// A half type (Acc float32): the result rounded once; the arg operations' values
		// come back exactly.
		to := dtype.BFloat16FromFloat32
		if ot == dtype.Float16 {
			to = dtype.Float16FromFloat32
		}
		out := cpu.Slice[uint16](a.out)
		for o, acc := range res {
			v := acc.v
			if r.Op.IsArg() {
				out[o] = halfBitsOf(ot, float32(v)) // the element itself: a NaN's bits too
				continue
			}
			if r.Mean {
				v /= A(a.count)
			}
			out[o] = to(float32(fp.Canon(v))) // the float32 accumulator kept a NaN operand's payload
		}
		return nil
	}
	out := cpu.Slice[A](a.out)
	for o, acc := range res {
		v := acc.v
		if r.Op.IsArg() {
			out[o] = v // the element itself, a NaN with its bits
			continue
		}
		if r.Mean {
			v /= A(a.count)
		}
		out[o] = fp.Canon(v)
	}
	return nil
}
