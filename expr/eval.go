package expr

import (
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/go-gpu/gpu/dtype"
)

// ChunkSize is the number of elements a Program computes per step: every IR node runs
// one typed loop over up to ChunkSize elements into a scratch buffer, so scratch stays
// in the L1/L2 cache and the per-node dispatch is paid once per chunk.
const ChunkSize = 1024

// bufStride is the distance between chunk buffers in a frame, in uint64s: a chunk of
// 8-byte elements plus 264 bytes, so that buffers do not all start at the same address
// modulo 4 KiB (loads and stores 4 KiB apart alias in the CPU's memory disambiguation
// and stall; measured: a*x+b ran at 0.30 G elements/s with a 8 KiB stride).
const bufStride = ChunkSize + 33

// Program is an Expr compiled for the CPU. It is immutable and safe for concurrent use:
// each Eval takes its own scratch space (from a pool), so a worker pool may evaluate
// disjoint ranges of one computation in parallel.
//
// Evaluation is chunked: the nodes whose value is the same for every element (constants,
// parameters and what depends only on them) are computed once per Eval, every other node
// runs one loop per chunk. Inputs are read in place and the last node writes straight
// into the output, so an output may be the same slice as an input (in-place update); it
// must not partially overlap one.
type Program struct {
	typ    dtype.DType
	inputs []dtype.DType // by input slot: the type read, Invalid if unread
	params []dtype.DType // by parameter slot
	nptr   int           // size of a frame's pointer table
	nbuf   int           // chunk buffers
	nuni   int           // uniform value slots

	loads  []load  // constants and parameters into their uniform slots
	uni    []instr // uniform nodes, computed with n = 1
	bcasts []instr // uniform values broadcast into chunk buffers
	body   []instr // per chunk

	rootUniform bool  // the result is uniform: fill the output with uniform slot rootPtr
	rootPtr     int32 // that slot's pointer index

	pool sync.Pool // *frame
}

// Pointer table layout of a frame: ptrNil is always nil; ptrOut is the output chunk;
// then one pointer per input slot (the current chunk), the uniform slots, and the chunk
// buffers.
const (
	ptrNil = 0
	ptrOut = 1
	ptrIn0 = 2
)

type instr struct {
	k       kernel
	dst     int32
	a, b, c int32
}

type load struct {
	ptr   int32
	size  int
	param int // parameter slot, or -1 for a constant
	bits  uint64
}

type frame struct {
	ptr    []unsafe.Pointer
	uni    []uint64
	buf    []uint64
	params []uint64         // parameter bits for the current Eval
	base   []unsafe.Pointer // input slot starts for the current Eval
}

// Compile returns a Program that evaluates e on the CPU, or an error if e.Root breaks the
// IR's invariants (only possible for IR built by hand).
func (e *Expr) Compile() (*Program, error) {
	if err := Validate(e.Root); err != nil {
		return nil, err
	}
	return compile(e.Root)
}

// value is one distinct node of the IR (after merging equal subtrees).
type value struct {
	n       Node
	args    []int
	uniform bool
	lastUse int // index of the last value using this one
	ptr     int32
	bcast   int32 // chunk buffer holding the broadcast uniform value, 0 if none
}

type valueKey struct {
	kind    uint8
	op      uint8
	t       dtype.DType
	slot    int
	bits    uint64
	a, b, c int
}

func compile(root Node) (*Program, error) {
	p := &Program{typ: root.DType()}
	var vals []value
	ids := map[valueKey]int{}
	memo := map[Node]int{}
	var add func(n Node) int
	add = func(n Node) int {
		if id, ok := memo[n]; ok {
			return id
		}
		if c, ok := n.(*Call); ok {
			if d := Definition(c); d != nil {
				// A defined function is its definition, merged with the rest.
				id := add(d)
				memo[n] = id
				return id
			}
		}
		k := valueKey{t: n.DType(), a: -1, b: -1, c: -1}
		var args []int
		for _, a := range Operands(n) {
			args = append(args, add(a))
		}
		if len(args) > 0 {
			k.a = args[0]
		}
		if len(args) > 1 {
			k.b = args[1]
		}
		if len(args) > 2 {
			k.c = args[2]
		}
		switch n := n.(type) {
		case *Input:
			k.kind, k.slot = 1, n.Slot
		case *Param:
			k.kind, k.slot = 2, n.Slot
		case *Const:
			k.kind, k.bits = 3, n.Value.bits
		case *Unary:
			k.kind, k.op = 4, uint8(n.Op)
		case *Binary:
			k.kind, k.op = 5, uint8(n.Op)
		case *Call:
			k.kind, k.op = 6, uint8(n.Func)
		case *Cast:
			k.kind = 7
		case *Select:
			k.kind = 8
		}
		id, ok := ids[k]
		if !ok {
			id = len(vals)
			v := value{n: n, args: args, lastUse: -1}
			switch n.(type) {
			case *Param, *Const:
				v.uniform = true
			case *Input:
			default:
				v.uniform = true
				for _, a := range args {
					v.uniform = v.uniform && vals[a].uniform
				}
			}
			vals = append(vals, v)
			ids[k] = id
		}
		memo[n] = id
		return id
	}
	rootID := add(root)

	// Input and parameter slots.
	for _, v := range vals {
		switch n := v.n.(type) {
		case *Input:
			for len(p.inputs) <= n.Slot {
				p.inputs = append(p.inputs, dtype.Invalid)
			}
			p.inputs[n.Slot] = n.Type
		case *Param:
			for len(p.params) <= n.Slot {
				p.params = append(p.params, dtype.Invalid)
			}
			if p.params[n.Slot] != dtype.Invalid && p.params[n.Slot] != n.Type {
				return nil, fmt.Errorf("expr: parameter slot %d read as %v and %v", n.Slot, p.params[n.Slot], n.Type)
			}
			p.params[n.Slot] = n.Type
		}
	}
	for i, t := range p.inputs {
		for _, v := range vals {
			if in, ok := v.n.(*Input); ok && in.Slot == i && in.Type != t {
				return nil, fmt.Errorf("expr: input slot %d read as %v and %v", i, t, in.Type)
			}
		}
	}

	// Uniform values get one slot each; varying ones use chunk buffers.
	next := int32(ptrIn0 + len(p.inputs))
	for i := range vals {
		v := &vals[i]
		for _, a := range v.args {
			vals[a].lastUse = i
		}
		if v.uniform {
			v.ptr = next
			next++
			p.nuni++
		}
	}
	bufBase := next
	var free []int32
	// alloc returns a chunk buffer. Buffers of temporaries are reused once their value
	// is dead; a broadcast buffer is filled once per Eval, so it must be fresh (a freed
	// temporary's buffer is written again in every chunk) and is never freed.
	alloc := func(fresh bool) int32 {
		if len(free) > 0 && !fresh {
			b := free[len(free)-1]
			free = free[:len(free)-1]
			return b
		}
		b := bufBase + int32(p.nbuf)
		p.nbuf++
		return b
	}
	argPtr := func(a int) int32 {
		v := &vals[a]
		if !v.uniform {
			return v.ptr
		}
		if v.bcast == 0 {
			v.bcast = alloc(true)
			k := fillKernel(v.n.DType().Size())
			p.bcasts = append(p.bcasts, instr{k: k, dst: v.bcast, a: v.ptr})
		}
		return v.bcast
	}
	for i := range vals {
		v := &vals[i]
		switch n := v.n.(type) {
		case *Input:
			v.ptr = int32(ptrIn0 + n.Slot)
			continue
		case *Param:
			p.loads = append(p.loads, load{ptr: v.ptr, size: n.Type.Size(), param: n.Slot})
			continue
		case *Const:
			p.loads = append(p.loads, load{ptr: v.ptr, size: n.Value.t.Size(), param: -1, bits: n.Value.bits})
			continue
		}
		k := kernelFor(v.n)
		if k == nil {
			return nil, fmt.Errorf("expr: no CPU kernel for %s", Key(v.n))
		}
		in := instr{k: k}
		ptrs := [3]int32{}
		if v.uniform {
			for j, a := range v.args {
				ptrs[j] = vals[a].ptr
			}
			in.dst, in.a, in.b, in.c = v.ptr, ptrs[0], ptrs[1], ptrs[2]
			p.uni = append(p.uni, in)
			continue
		}
		if sk := vectorScalarKernel(v.n, vals[v.args[0]].uniform, len(v.args) > 1 && vals[v.args[1]].uniform); sk != nil {
			// The uniform operand is read in place from its slot, with no broadcast.
			in.k = sk
			ptrs[0], ptrs[1] = vals[v.args[0]].ptr, vals[v.args[1]].ptr
		} else {
			for j, a := range v.args {
				ptrs[j] = argPtr(a)
			}
		}
		if i == rootID {
			v.ptr = ptrOut
		} else {
			v.ptr = alloc(false)
		}
		for _, a := range v.args {
			if av := &vals[a]; !av.uniform && av.lastUse == i && av.ptr >= bufBase {
				free = append(free, av.ptr)
				av.lastUse = -2 // freed (an argument may appear twice)
			}
		}
		in.dst, in.a, in.b, in.c = v.ptr, ptrs[0], ptrs[1], ptrs[2]
		p.body = append(p.body, in)
	}
	rv := &vals[rootID]
	switch {
	case rv.uniform:
		p.rootUniform, p.rootPtr = true, rv.ptr
	case rv.ptr != ptrOut: // the result is an input: copy it
		p.body = append(p.body, instr{k: moveKernel(p.typ.Size(), false), dst: ptrOut, a: rv.ptr})
	}
	p.nptr = int(bufBase) + p.nbuf
	return p, nil
}

// vectorScalarKernel returns the kernel for a Binary node with exactly one uniform
// operand that reads the uniform one as a scalar, or nil.
func vectorScalarKernel(n Node, u0, u1 bool) kernel {
	b, ok := n.(*Binary)
	if !ok || u0 == u1 {
		return nil
	}
	return scalarKernel(b.Op, b.X.DType(), u0)
}

// DType returns the type of the result elements.
func (p *Program) DType() dtype.DType { return p.typ }

// NumInputs returns the number of input slots Eval needs (one more than the highest slot
// the expression reads).
func (p *Program) NumInputs() int { return len(p.inputs) }

// NumParams returns the number of parameter slots Eval needs.
func (p *Program) NumParams() int { return len(p.params) }

func (p *Program) newFrame() *frame {
	f := &frame{
		ptr:    make([]unsafe.Pointer, p.nptr),
		uni:    make([]uint64, p.nuni),
		buf:    make([]uint64, p.nbuf*bufStride),
		params: make([]uint64, len(p.params)),
		base:   make([]unsafe.Pointer, len(p.inputs)),
	}
	base := ptrIn0 + len(p.inputs)
	for i := range f.uni {
		f.ptr[base+i] = unsafe.Pointer(&f.uni[i])
	}
	base += p.nuni
	for i := 0; i < p.nbuf; i++ {
		f.ptr[base+i] = unsafe.Pointer(&f.buf[i*bufStride])
	}
	return f
}

func (p *Program) getFrame() *frame {
	if f, ok := p.pool.Get().(*frame); ok {
		return f
	}
	return p.newFrame()
}

func (p *Program) putFrame(f *frame) {
	for i := ptrOut; i < ptrIn0+len(p.inputs); i++ {
		f.ptr[i] = nil // don't keep the caller's arrays alive
	}
	clear(f.base)
	p.pool.Put(f)
}

// Eval computes out[i] = e(inputs...[i]) for every i < len(out).
//
// out must be a slice of the result type's Go element type: []bool, []int8 ... []uint64,
// []float32, []float64, and []uint16 holding the bits for Float16 and BFloat16 ([]int and
// []uint are accepted for Int64 and Uint64 on 64-bit platforms). inputs is indexed by
// input slot; each slot the expression reads must hold a slice of its type with len(out)
// elements, the others may be nil. params is indexed by parameter slot; each slot the
// expression reads must hold a Go value of the parameter's type (float32, int64 or int,
// uint16 bits for Float16 and BFloat16 ...) or a Scalar of that type.
//
// Eval allocates nothing once warm (but converting a slice or a float32 to an interface
// value allocates in Go: keep the interface values across calls, or use EvalBytes). It
// returns an error, and writes nothing, if an argument has the wrong type or length.
func (p *Program) Eval(out any, inputs []any, params []any) error {
	outPtr, n, err := slicePtr(out, p.typ)
	if err != nil {
		return fmt.Errorf("expr: output: %v", err)
	}
	if len(inputs) < len(p.inputs) {
		return fmt.Errorf("expr: %d inputs, the expression reads slot %d", len(inputs), len(p.inputs)-1)
	}
	if len(params) < len(p.params) {
		return fmt.Errorf("expr: %d parameters, the expression reads slot %d", len(params), len(p.params)-1)
	}
	f := p.getFrame()
	defer p.putFrame(f)
	for i, t := range p.inputs {
		if t == dtype.Invalid {
			continue
		}
		ptr, m, err := slicePtr(inputs[i], t)
		if err != nil {
			return fmt.Errorf("expr: input %d: %v", i, err)
		}
		if m != n {
			return fmt.Errorf("expr: input %d has %d elements, output %d", i, m, n)
		}
		f.ptr[ptrIn0+i] = ptr
	}
	for i, t := range p.params {
		if t == dtype.Invalid {
			continue
		}
		bits, err := scalarBits(params[i], t)
		if err != nil {
			return fmt.Errorf("expr: param %d: %v", i, err)
		}
		f.params[i] = bits
	}
	p.run(f, n, outPtr)
	return nil
}

// EvalBytes is Eval on raw memory: out and each input slot the expression reads hold at
// least n elements of their type in native byte order, aligned to the element size.
// Bool elements must be 0 or 1. params holds a Scalar of the parameter's type for each
// slot the expression reads.
func (p *Program) EvalBytes(n int, out []byte, inputs [][]byte, params []Scalar) error {
	if n < 0 {
		return fmt.Errorf("expr: negative length %d", n)
	}
	outPtr, err := bytesPtr(out, p.typ, n)
	if err != nil {
		return fmt.Errorf("expr: output: %v", err)
	}
	if len(inputs) < len(p.inputs) {
		return fmt.Errorf("expr: %d inputs, the expression reads slot %d", len(inputs), len(p.inputs)-1)
	}
	if len(params) < len(p.params) {
		return fmt.Errorf("expr: %d parameters, the expression reads slot %d", len(params), len(p.params)-1)
	}
	f := p.getFrame()
	defer p.putFrame(f)
	for i, t := range p.inputs {
		if t == dtype.Invalid {
			continue
		}
		ptr, err := bytesPtr(inputs[i], t, n)
		if err != nil {
			return fmt.Errorf("expr: input %d: %v", i, err)
		}
		f.ptr[ptrIn0+i] = ptr
	}
	for i, t := range p.params {
		if t == dtype.Invalid {
			continue
		}
		if params[i].t != t {
			return fmt.Errorf("expr: param %d: got a %v Scalar, want %v", i, params[i].t, t)
		}
		f.params[i] = params[i].bits
	}
	p.run(f, n, outPtr)
	return nil
}

// run evaluates n elements into out with the frame's inputs and parameters set.
func (p *Program) run(f *frame, n int, out unsafe.Pointer) {
	if n == 0 {
		return
	}
	ptr := f.ptr
	for _, l := range p.loads {
		bits := l.bits
		if l.param >= 0 {
			bits = f.params[l.param]
		}
		storeBits(ptr[l.ptr], l.size, bits)
	}
	for _, in := range p.uni {
		in.k(1, ptr[in.dst], ptr[in.a], ptr[in.b], ptr[in.c])
	}
	if p.rootUniform {
		fillKernel(p.typ.Size())(n, out, ptr[p.rootPtr], nil, nil)
		return
	}
	m := min(n, ChunkSize)
	for _, in := range p.bcasts {
		in.k(m, ptr[in.dst], ptr[in.a], nil, nil)
	}
	// Input chunk pointers advance by the element size; base holds the starts.
	base := f.base
	copy(base, ptr[ptrIn0:ptrIn0+len(p.inputs)])
	outSize := uintptr(p.typ.Size())
	for off := 0; off < n; off += ChunkSize {
		cn := min(ChunkSize, n-off)
		ptr[ptrOut] = unsafe.Add(out, uintptr(off)*outSize)
		for i, t := range p.inputs {
			if t != dtype.Invalid {
				ptr[ptrIn0+i] = unsafe.Add(base[i], uintptr(off)*uintptr(t.Size()))
			}
		}
		for _, in := range p.body {
			in.k(cn, ptr[in.dst], ptr[in.a], ptr[in.b], ptr[in.c])
		}
	}
}

// slicePtr returns the data pointer and length of a slice of t's Go element type.
func slicePtr(v any, t dtype.DType) (unsafe.Pointer, int, error) {
	var p unsafe.Pointer
	var n int
	ok := false
	switch s := v.(type) {
	case []bool:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Bool
	case []int8:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Int8
	case []int16:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Int16
	case []int32:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Int32
	case []int64:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Int64
	case []int:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Of[int]()
	case []uint8:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Uint8
	case []uint16:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Uint16 || isHalf(t)
	case []uint32:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Uint32
	case []uint64:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Uint64
	case []uint:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Of[uint]()
	case []float32:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Float32
	case []float64:
		p, n, ok = unsafe.Pointer(unsafe.SliceData(s)), len(s), t == dtype.Float64
	}
	if !ok {
		want := "[]" + t.String()
		if isHalf(t) {
			want = "[]uint16 (" + t.String() + " bits)"
		}
		return nil, 0, fmt.Errorf("got %T, want %s", v, want)
	}
	return p, n, nil
}

// bytesPtr checks that b holds n aligned elements of type t.
func bytesPtr(b []byte, t dtype.DType, n int) (unsafe.Pointer, error) {
	size := t.Size()
	if n > math.MaxInt/size || len(b) < n*size {
		return nil, fmt.Errorf("%d bytes, want %d elements of %v", len(b), n, t)
	}
	p := unsafe.Pointer(unsafe.SliceData(b))
	if n > 0 && uintptr(p)%uintptr(size) != 0 {
		return nil, fmt.Errorf("%v data not aligned to %d bytes", t, size)
	}
	return p, nil
}

// scalarBits returns the bits of a parameter value of type t.
func scalarBits(v any, t dtype.DType) (uint64, error) {
	var s Scalar
	switch x := v.(type) {
	case Scalar:
		s = x
	case bool:
		s = ScalarOf(x)
	case int8:
		s = ScalarOf(x)
	case int16:
		s = ScalarOf(x)
	case int32:
		s = ScalarOf(x)
	case int64:
		s = ScalarOf(x)
	case int:
		s = ScalarOf(x)
	case uint8:
		s = ScalarOf(x)
	case uint16:
		s = ScalarOf(x)
		if isHalf(t) {
			s = ScalarFromBits(t, uint64(x))
		}
	case uint32:
		s = ScalarOf(x)
	case uint64:
		s = ScalarOf(x)
	case uint:
		s = ScalarOf(x)
	case float32:
		s = ScalarOf(x)
	case float64:
		s = ScalarOf(x)
	default:
		return 0, fmt.Errorf("got %T, want a %v value", v, t)
	}
	if s.t != t {
		return 0, fmt.Errorf("got a %v value (%T), want %v", s.t, v, t)
	}
	return s.bits, nil
}
