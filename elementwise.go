package gpu

import (
	"fmt"
	"go/token"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Vars binds the names of an expression: arrays (any *Array[T]) and Go scalars. A Go
// float64, int or bool is "weak" like a Python scalar in NumPy (NEP 50): with a float32
// array, "a*x" stays float32 for a float64 a. Scalars of the other Go types (float32,
// int32, uint8, ...) are typed and promote as arrays of their type do.
type Vars map[string]any

// Eval evaluates src, an expression in Go syntax over the names in vars (see package
// expr for the syntax, NumPy's promotion rules and the functions), as one fused
// kernel on s, and returns the result as a new array of R. Array operands broadcast
// together by NumPy's rules (every array in vars, one the expression doesn't use too:
// pass only the arrays it uses); the result, computed in the promoted type, is converted to
// R (as numpy.ndarray.astype). A float16 or bfloat16 result is computed in float32 and
// rounded once, when stored: to R itself, so that Eval[float64] of "x*3" with a float16
// x gives the float32 product, not the float16 one NumPy's (x*3).astype(float64) gives
// (write "float16(x*3)" for that; package expr, "Half precision"). Errors: a syntax or type error (an *expr.Error with
// the column), shapes that don't broadcast, a nil stream or array.
//
//	y, err := gpu.Eval[float32](s, "a*x + b", gpu.Vars{"a": 2.0, "x": x, "b": 1.0})
func Eval[R Elem](s *Stream, src string, vars Vars) (*Array[R], error) {
	// In the order of the names, so that an error is the same in every run.
	var nameBuf [8]string
	names := nameBuf[:0]
	for name := range vars {
		names = append(names, name)
	}
	slices.Sort(names)
	var valBuf [8]any
	vals := valBuf[:0]
	for _, name := range names {
		vals = append(vals, vars[name])
	}
	shape, err := broadcastOperands("", vals, variableLabels(names))
	if err != nil {
		return nil, err
	}
	out, err := Empty[R](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := evalInto(s, out.header(), src, vars); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// EvalInto evaluates src like Eval and stores the result, converted to out's element
// type, into out (any view that isn't broadcast; the operands broadcast to its shape).
// out may also be an operand (an in-place update such as "x + 1" into x).
func EvalInto[T Elem](s *Stream, out *Array[T], src string, vars Vars) error {
	if err := nonNil(out); err != nil {
		return err
	}
	if out.hasZeroStride() {
		return fmt.Errorf("gpu: evaluating into a broadcast view: %w", ErrInvalidValue)
	}
	return evalInto(s, out.header(), src, vars)
}

// scalarDecl returns the declaration of a Go scalar and its bits.
func scalarDecl(slot int, v any) (expr.Decl, dtype.DType, uint64, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return expr.Decl{}, 0, 0, fmt.Errorf("nil value: %w", ErrInvalidValue)
	}
	t := dtype.OfValue(v)
	if t == dtype.Invalid {
		return expr.Decl{}, 0, 0, fmt.Errorf("values of type %T can't be used in an expression: %w", v, ErrInvalidValue)
	}
	if isHalf(t) {
		// Float16, BFloat16: typed like float32 (NEP 50's numpy.float16 scalars).
		return expr.ParamDecl(slot, t), t, rv.Uint(), nil
	}
	var bits uint64
	switch rv.Kind() {
	case reflect.Bool:
		if rv.Bool() {
			bits = 1
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		bits = uint64(rv.Int())
		if t.Size() < 8 {
			bits &= 1<<(8*t.Size()) - 1
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits = rv.Uint()
	case reflect.Float32:
		bits = uint64(math.Float32bits(float32(rv.Float())))
	case reflect.Float64:
		bits = math.Float64bits(rv.Float())
	}
	switch rv.Kind() {
	case reflect.Float64, reflect.Int, reflect.Bool:
		return expr.WeakParamDecl(slot, t), t, bits, nil
	}
	return expr.ParamDecl(slot, t), t, bits, nil
}

// scalarSig returns the byte a Go scalar contributes to a plan's signature: its kind,
// which decides its declaration (weak or typed, and the type), or for Float16 and
// BFloat16, whose kind is uint16's, a byte of their own.
func scalarSig(v any) byte {
	if t := dtype.OfValue(v); isHalf(t) {
		return 0x80 | byte(t)
	}
	return byte(reflect.TypeOf(v).Kind())
}

type evalOperand struct {
	h     header
	st    []int // strides broadcast to the output's shape
	name  string
	index bool // the linear index (LinearIndex)
}

// LinearIndex, bound to a name in Vars, makes that name the element's linear
// (row-major) index in the result, an int64: Eval(s, "float64(i) * 0.5", Vars{"i":
// LinearIndex}) with the shape given by the other operands.
var LinearIndex = linearIndex{}

type linearIndex struct{}

// evalPlan is a parsed expression for one signature of its variables (names, kinds and
// types) and one result type, with the kernels compiled for it by operand layout. The
// device caches plans, so a repeated Eval parses nothing and builds no kernel key.
type evalPlan struct {
	e      *expr.Expr
	narrow map[int][]dtype.DType // weak integer parameter slot -> integer types it is converted to
	names  []string              // sorted
	kinds  []byte                // per name: 'a' array, 'i' linear index, 's' scalar
	read   []bool                // per operand slot: does the expression read it
	nops   int

	mu  sync.Mutex
	fns map[layoutKey]*planEntry
}

// layoutKey is the part of an elementwise spec that varies between launches of a plan.
type layoutKey struct {
	kinds   [maxPlanOps + 1]kernel.OpKind
	rank    uint8
	index64 bool
	vector  bool
	pdl     bool // programmatic dependent launch (Tuning.ElementwisePDL)
}

const maxPlanOps = 15

type planCache struct {
	mu sync.Mutex
	m  map[string]*evalPlan
}

var sigPool = sync.Pool{New: func() any { b := make([]byte, 0, 128); return &b }}

// plan returns the cached plan of src over vars' signature with result type out.
func (d *Device) plan(src string, vars Vars, out dtype.DType) (*evalPlan, error) {
	bp := sigPool.Get().(*[]byte)
	defer sigPool.Put(bp)
	sig := append((*bp)[:0], src...)
	sig = append(sig, 0, byte(out))
	// Map iteration order varies; the signature sorts by name without allocating for
	// the usual few variables.
	var nameBuf [8]string
	names := nameBuf[:0]
	for name := range vars {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		sig = append(sig, 0)
		sig = append(sig, name...)
		switch v := vars[name].(type) {
		case linearIndex:
			sig = append(sig, 'i')
		case AnyArray:
			if v.isNil() {
				return nil, fmt.Errorf("gpu: variable %q is a nil array: %w", name, ErrInvalidValue)
			}
			if v.isFreed() {
				return nil, fmt.Errorf("gpu: variable %q: array used after Free: %w", name, ErrClosed)
			}
			sig = append(sig, 'a', byte(v.DType()))
		default:
			if v == nil {
				return nil, fmt.Errorf("gpu: variable %q is nil: %w", name, ErrInvalidValue)
			}
			sig = append(sig, 's', scalarSig(v))
		}
	}
	*bp = sig
	d.plans.mu.Lock()
	p := d.plans.m[string(sig)]
	d.plans.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, err := newPlan(src, vars, slices.Clone(names), out)
	if err != nil {
		return nil, err
	}
	d.plans.mu.Lock()
	if d.plans.m == nil {
		d.plans.m = map[string]*evalPlan{}
	}
	if len(d.plans.m) > 4096 {
		clear(d.plans.m) // a program that builds expressions on the fly: keep memory bounded
	}
	d.plans.m[string(sig)] = p
	d.plans.mu.Unlock()
	return p, nil
}

func newPlan(src string, vars Vars, names []string, out dtype.DType) (*evalPlan, error) {
	env := expr.Env{}
	p := &evalPlan{names: names, kinds: make([]byte, len(names)), fns: map[layoutKey]*planEntry{}}
	params := 0
	for i, name := range names {
		if !token.IsIdentifier(name) {
			// An expression can't name it: a mistake, not a variable to ignore.
			return nil, fmt.Errorf("gpu: variable name %q is not an identifier: %w", name, ErrInvalidValue)
		}
		switch v := vars[name].(type) {
		case linearIndex:
			env[name] = expr.OperandDecl(p.nops, dtype.Int64)
			p.kinds[i] = 'i'
			p.nops++
		case AnyArray:
			env[name] = expr.OperandDecl(p.nops, v.DType())
			p.kinds[i] = 'a'
			p.nops++
		default:
			decl, _, _, err := scalarDecl(params, v)
			if err != nil {
				return nil, fmt.Errorf("gpu: variable %q: %w", name, err)
			}
			env[name] = decl
			p.kinds[i] = 's'
			params++
		}
	}
	e, err := expr.Parse(src, env)
	if err != nil {
		return nil, fmt.Errorf("%w (%w)", err, ErrInvalidValue)
	}
	if e.DType() != out {
		e = e.Convert(out)
	}
	p.e = e
	p.narrow = weakIntCasts(e)
	p.read = make([]bool, p.nops)
	for _, sl := range e.Inputs {
		p.read[sl.Index] = true
	}
	return p, nil
}

// operandLabels names operands in errors: label i is what the user calls vals[i]. A
// struct rather than an interface, so that passing Eval's names (a stack array) doesn't
// move them to the heap on every call (an interface method's receiver escapes).
type operandLabels struct {
	names []string // the operands' names (nil: by position)
	kind  string   // what a name names: "variable" or "operand"
	n     int      // by position: the number of array operands
}

// variableLabels names Eval's variables: `variable "x"`.
func variableLabels(names []string) operandLabels {
	return operandLabels{names: names, kind: "variable"}
}

// kernelLabels names a Kernel's operands by the names given to NewKernel: `operand "x"`,
// and those past them by position (`operand 3`).
func kernelLabels(names []string) operandLabels {
	return operandLabels{names: names, kind: "operand"}
}

// positionLabels names a named operation's n array operands by position: "operand"
// for one, "first operand", "second operand" ... for more.
func positionLabels(n int) operandLabels { return operandLabels{n: n} }

func (l operandLabels) label(i int) string {
	switch {
	case l.kind == "variable":
		return fmt.Sprintf("variable %q", l.names[i])
	case l.kind == "operand" && i < len(l.names):
		return fmt.Sprintf("operand %q", l.names[i])
	case l.kind == "operand":
		return fmt.Sprintf("operand %d", i)
	case l.n == 1:
		return "operand"
	case i < 3:
		return [...]string{"first", "second", "third"}[i] + " operand"
	}
	return fmt.Sprintf("operand %d", i+1)
}

// broadcastOperands returns the shape the arrays among vals broadcast to, checking
// each first (a nil array, or one used after Free, is an error naming it by labels,
// after the operation op if it isn't ""). Other values (scalars, LinearIndex) are
// skipped.
func broadcastOperands(op string, vals []any, labels operandLabels) ([]int, error) {
	prefix := "gpu: "
	if op != "" {
		prefix += op + ": "
	}
	var shapeBuf [8][]int
	shapes := shapeBuf[:0]
	for i, v := range vals {
		a, ok := v.(AnyArray)
		if !ok {
			continue
		}
		if a.isNil() {
			return nil, fmt.Errorf("%s%s is a nil array: %w", prefix, labels.label(i), ErrInvalidValue)
		}
		if a.isFreed() {
			return nil, fmt.Errorf("%s%s: array used after Free: %w", prefix, labels.label(i), ErrClosed)
		}
		shapes = append(shapes, a.hdr().shape)
	}
	shape, err := BroadcastShapes(shapes...)
	if err != nil {
		var b strings.Builder
		k := 0
		for i, v := range vals {
			if a, ok := v.(AnyArray); ok {
				if k > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s of shape %v", labels.label(i), a.hdr().shape)
				k++
			}
		}
		return nil, fmt.Errorf("%soperands don't broadcast together: %s: %w", prefix, b.String(), ErrInvalidValue)
	}
	return shape, nil
}

// weakIntCasts returns, per weak integer parameter slot of e (a Go int), the integer
// types narrower than int64 that e converts it to: the value must fit them, as a
// literal must (NumPy 2 raises OverflowError for a Python int out of an array's range).
func weakIntCasts(e *expr.Expr) map[int][]dtype.DType {
	weak := map[int]bool{}
	for _, sl := range e.Params {
		if sl.Weak && sl.DType == dtype.Int64 {
			weak[sl.Index] = true
		}
	}
	if len(weak) == 0 {
		return nil
	}
	out := map[int][]dtype.DType{}
	expr.Walk(e.Root, func(n expr.Node) {
		c, ok := n.(*expr.Cast)
		if !ok {
			return
		}
		if p, ok := c.X.(*expr.Param); ok && weak[p.Slot] && c.Type.IsInteger() && c.Type != dtype.Int64 {
			if !slices.Contains(out[p.Slot], c.Type) {
				out[p.Slot] = append(out[p.Slot], c.Type)
			}
		}
	})
	return out
}

// checkParam checks the value (bits) of scalar parameter slot, the variable name,
// against the integer types the expression converts it to.
func (p *evalPlan) checkParam(slot int, name string, bits uint64) error {
	for _, t := range p.narrow[slot] {
		if v := int64(bits); !intFits(v, t) {
			return fmt.Errorf("gpu: variable %q: %d overflows %v: %w", name, v, t, ErrInvalidValue)
		}
	}
	return nil
}

// intFits reports whether v is a value of integer type t.
func intFits(v int64, t dtype.DType) bool {
	if t == dtype.Uint64 {
		return v >= 0
	}
	bits := 8 * t.Size()
	if t.IsSigned() {
		return v >= -1<<(bits-1) && v < 1<<(bits-1)
	}
	return v >= 0 && v < 1<<bits
}

// evalInto evaluates src into out.
func evalInto(s *Stream, out *header, src string, vars Vars) error {
	if err := nilStream(s); err != nil {
		return err
	}
	p, err := s.dev.plan(src, vars, out.dt)
	if err != nil {
		return err
	}
	var valBuf [8]any
	vals := valBuf[:0]
	for _, name := range p.names {
		vals = append(vals, vars[name])
	}
	return runPlan(s, out, p, vals)
}

// runPlan launches plan p into out with the variables' values in p.names' order.
func runPlan(s *Stream, outp *header, p *evalPlan, vals []any) error {
	return runPlanHdr(s, *outp, p, vals)
}

func runPlanHdr(s *Stream, out header, p *evalPlan, vals []any) error {
	if err := nilStream(s); err != nil {
		return err
	}
	d := s.dev
	var err error
	n := prod(out.shape)
	var opBuf [4]evalOperand
	ops := opBuf[:0]
	type param struct {
		t    dtype.DType
		bits uint64
	}
	var paramBuf [4]param
	params := paramBuf[:0]
	simple := true // every array operand has out's shape and is contiguous, as is out
	outContig := contiguous(out.shape, out.strides)
	for i, name := range p.names {
		switch p.kinds[i] {
		case 'i':
			ops = append(ops, evalOperand{name: name, index: true})
		case 'a':
			av := vals[i].(AnyArray)
			if av.isNil() {
				return fmt.Errorf("gpu: operand %q is a nil array: %w", name, ErrInvalidValue)
			}
			h := av.hdr()
			if h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
				return fmt.Errorf("gpu: operand %q is on %v, the stream on %v: %w", name, h.buf.a.dev, d, ErrInvalidValue)
			}
			op := evalOperand{h: h, name: name}
			if outContig && slices.Equal(h.shape, out.shape) && contiguous(h.shape, h.strides) {
				op.st = out.strides
			} else {
				simple = false
				if op.st, err = broadcastStrides(h.shape, h.strides, out.shape); err != nil {
					return fmt.Errorf("gpu: operand %q: %w", name, err)
				}
			}
			ops = append(ops, op)
		default:
			slot := len(params)
			_, t, bits, err := scalarDecl(slot, vals[i])
			if err != nil {
				return fmt.Errorf("gpu: variable %q: %w", name, err)
			}
			if err := p.checkParam(slot, name, bits); err != nil {
				return err
			}
			params = append(params, param{t, bits})
		}
	}
	if n == 0 {
		return nil // after checking the operands: they must broadcast to an empty out too
	}
	simple = simple && outContig
	// An operand that shares out's memory with another layout is copied first, as
	// NumPy does, so that no element is overwritten before it is read.
	// (The same layout means the same elements: same element size too, else an int64
	// out over an int32 operand's memory overwrites elements not yet read.)
	for i, op := range ops {
		if op.index {
			continue
		}
		if headersShareMemory(&ops[i].h, &out) && !sameLayout(&out, &ops[i].h, op.st) {
			tmp, err := copyOfVal(s, ops[i].h)
			if err != nil {
				return err
			}
			defer tmp.buf.Free()
			ops[i].h = *tmp
			ops[i].st, _ = broadcastStrides(tmp.shape, tmp.strides, out.shape)
			simple = false
		}
	}
	var lk layoutKey
	// The operands' kinds: in lk, whose kernels the plan caches, for up to maxPlanOps.
	kinds := lk.kinds[:]
	if len(ops) > maxPlanOps {
		kinds = make([]kernel.OpKind, 1+len(ops))
	}
	var cshape []int
	var cst [][]int
	if simple {
		// The common case: everything contiguous and of one shape.
		kinds[0] = kernel.Contig
		for i, op := range ops {
			kinds[i+1] = kernel.Contig
			if op.index {
				kinds[i+1] = kernel.Index
			}
		}
	} else {
		all := make([][]int, 0, 1+len(ops))
		all = append(all, out.strides)
		for _, op := range ops {
			if op.index {
				all = append(all, make([]int, len(out.shape)))
				continue
			}
			all = append(all, op.st)
		}
		cshape, cst = kernel.Collapse(out.shape, all)
		kinds[0] = kernel.Classify(cshape, cst[0])
		if kinds[0] == kernel.Scalar {
			kinds[0] = kernel.Contig // one element
		}
		for i, op := range ops {
			if op.index {
				kinds[i+1] = kernel.Index
			} else {
				kinds[i+1] = kernel.Classify(cshape, cst[i+1])
			}
		}
	}
	var strided [][]int
	for i := range 1 + len(ops) {
		if kinds[i] == kernel.Strided && (i == 0 || p.read[i-1]) {
			strided = append(strided, cst[i])
		}
	}
	// Operands the expression doesn't read are passed as unused scalar operands.
	for i := range ops {
		if !p.read[i] && kinds[i+1] != kernel.Index {
			kinds[i+1] = kernel.Scalar
		}
	}
	if len(strided) > 0 {
		lk.rank = uint8(len(cshape))
	} else {
		cshape = nil
	}
	lk.index64 = kernel.NeedIndex64(n, cshape, strided...)
	ptr := func(h *header) uint64 { return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size()) }
	lk.vector = len(strided) == 0 && ptr(&out)%16 == 0
	for i := range ops {
		if p.read[i] && kinds[i+1] == kernel.Contig && ptr(&ops[i].h)%16 != 0 {
			lk.vector = false
		}
	}
	lk.pdl = pdlCapable(&d.info) && d.tuning().ElementwisePDL
	pe, err := d.planKernel(p, lk, kinds, out.dt, ops)
	if err != nil {
		return err
	}
	// Build the backend's arguments directly: no boxing, no views.
	la := newLaunchArgs()
	la.hdr(&out, Write)
	la.u64(uint64(n))
	for i := range ops {
		if !ops[i].index {
			la.hdr(&ops[i].h, Read)
		}
	}
	for _, dim := range cshape {
		la.u64(uint64(dim))
	}
	for i := range 1 + len(ops) {
		if kinds[i] == kernel.Strided {
			for _, v := range cst[i] {
				la.u64(uint64(v))
			}
		}
	}
	for _, p := range params {
		la.scalar(p.t.Size(), p.bits)
	}
	cfg := pe.config(d, n)
	cfg.Programmatic = lk.pdl
	return la.launch(s, pe.fn, cfg)
}

// argPool holds launch argument lists, with room for the longest of the runtime's own
// launches (a radix sort pass: 20), which launchArgs doesn't keep when they grow.
var argPool = sync.Pool{New: func() any { a := make([]backend.Arg, 0, 24); return &a }}

// planEntry is a plan's kernel for one layout, with the launch geometry of the last n.
type planEntry struct {
	fn   *Function
	spec kernelSpec
	geo  atomic.Pointer[planGeometry]
}

type planGeometry struct {
	n   int
	cfg backend.LaunchConfig
}

// config returns the backend launch geometry for n elements.
func (pe *planEntry) config(d *Device, n int) backend.LaunchConfig {
	if g := pe.geo.Load(); g != nil && g.n == n {
		return g.cfg
	}
	c := d.geometry(pe.spec, n)
	g := &planGeometry{n: n, cfg: backend.LaunchConfig{
		Grid: [3]uint32{uint32(c.Grid.X), 1, 1}, Block: [3]uint32{uint32(c.Block.X), 1, 1}}}
	pe.geo.Store(g)
	return g.cfg
}

// planKernel returns the kernel of plan p for a layout (kinds: the output's and the
// operands' kinds, lk.kinds' when there are at most maxPlanOps operands), compiling it
// on first use.
func (d *Device) planKernel(p *evalPlan, lk layoutKey, kinds []kernel.OpKind, outDT dtype.DType, ops []evalOperand) (*planEntry, error) {
	if len(ops) <= maxPlanOps {
		p.mu.Lock()
		pe := p.fns[lk]
		p.mu.Unlock()
		if pe != nil {
			return pe, nil
		}
	}
	spec := &kernel.Elementwise{Expr: p.e, Out: kernel.Operand{DType: outDT, Kind: kinds[0]},
		Rank: int(lk.rank), Index64: lk.index64, Vector: lk.vector, GridDep: lk.pdl, Ins: make([]kernel.Operand, len(ops))}
	for i, op := range ops {
		spec.Ins[i] = kernel.Operand{DType: dtype.Int64, Kind: kinds[i+1]}
		if !op.index {
			spec.Ins[i].DType = op.h.dt
		}
	}
	fn, err := d.kernel(spec)
	if err != nil {
		return nil, err
	}
	pe := &planEntry{fn: fn, spec: spec}
	if len(ops) <= maxPlanOps {
		p.mu.Lock()
		p.fns[lk] = pe
		p.mu.Unlock()
	}
	return pe, nil
}

// scalarOfSize returns bits as a Go value of t's size, for a kernel parameter.
func scalarOfSize(t dtype.DType, bits uint64) any {
	switch t.Size() {
	case 1:
		return uint8(bits)
	case 2:
		return uint16(bits)
	case 4:
		return uint32(bits)
	}
	return bits
}

// ref makes a header a kernel argument pointing at the array's element 0 (the offset
// may be past elements reached by negative strides), sharing the allocation's tracking.
func (h *header) ref() (*allocation, int64) {
	return h.buf.a, h.buf.off + int64(h.off*h.dt.Size())
}

// copyOf returns a contiguous copy of h.
func copyOf(s *Stream, h *header) (*header, error) { return copyOfVal(s, *h) }

// copyOfVal is copyOf of a header passed by value.
func copyOfVal(s *Stream, h header) (*header, error) {
	size := h.dt.Size()
	n := prod(h.shape)
	buf, err := s.Alloc(int64(n * size))
	if err != nil {
		return nil, err
	}
	out := &header{buf: buf, dt: h.dt, shape: slices.Clone(h.shape), strides: rowMajor(h.shape)}
	if err := evalIntoHeader(s, out, &h); err != nil {
		buf.Free()
		return nil, err
	}
	return out, nil
}

// headerArray adapts a header to AnyArray.
type headerArray struct{ h *header }

func (x headerArray) DType() dtype.DType { return x.h.dt }
func (x headerArray) Shape() []int       { return slices.Clone(x.h.shape) }
func (x headerArray) header() *header    { return x.h }
func (x headerArray) hdr() header        { return *x.h }
func (x headerArray) isNil() bool        { return x.h == nil }
func (x headerArray) isFreed() bool      { return x.h.buf.a.gone.Load() }

func evalIntoHeader(s *Stream, out, in *header) error {
	return evalInto(s, out, "x", Vars{"x": headerArray{in}})
}

// Kernel is an elementwise expression compiled for positional operands: the fast path
// for a kernel launched many times (CuPy's ElementwiseKernel). Each call matches its
// operands' kinds and types against the plans it has, without parsing or allocating a
// map; the kernels themselves come from the device's cache as for Eval. A Kernel is
// safe for concurrent use.
//
//	axpb := gpu.NewKernel[float32]("a*x + b", "a", "x", "b")
//	err := axpb.Into(s, y, 2.0, x, 1.0)
//
// A nil *Kernel is never valid: Into and Eval return an error wrapping ErrInvalidValue.
type Kernel[R Elem] struct {
	src   string
	names []string
	mu    sync.Mutex
	plans map[kernelSig]*evalPlan
}

type kernelSig struct {
	d   *Device
	sig [2*maxPlanOps + 2]byte
}

// NewKernel returns the expression src over the operands named, in the order the calls
// will pass them (arrays, LinearIndex, or Go scalars as in Vars).
func NewKernel[R Elem](src string, names ...string) *Kernel[R] {
	return &Kernel[R]{src: src, names: slices.Clone(names), plans: map[kernelSig]*evalPlan{}}
}

// checkNames reports duplicate operand names.
func (k *Kernel[R]) checkNames() error {
	seen := map[string]bool{}
	for _, n := range k.names {
		if seen[n] {
			return fmt.Errorf("gpu: kernel %q: operand %q named twice: %w", k.src, n, ErrInvalidValue)
		}
		seen[n] = true
	}
	return nil
}

// plan returns the kernel's plan for args on d, and args in the order of the plan's
// names.
func (k *Kernel[R]) plan(d *Device, args []any) (*evalPlan, []any, error) {
	if len(args) != len(k.names) {
		return nil, nil, fmt.Errorf("gpu: kernel %q takes %d operands (%v), got %d: %w", k.src, len(k.names), k.names, len(args), ErrInvalidValue)
	}
	if len(args) > maxPlanOps {
		if err := k.checkNames(); err != nil {
			return nil, nil, err
		}
		vars := Vars{}
		for i, name := range k.names {
			vars[name] = args[i]
		}
		// The device's plan sorts the names: pass the values in its order.
		p, err := d.plan(k.src, vars, dtype.Of[R]())
		if err != nil {
			return nil, nil, err
		}
		vals := make([]any, len(p.names))
		for i, name := range p.names {
			vals[i] = vars[name]
		}
		return p, vals, nil
	}
	key := kernelSig{d: d}
	for i, a := range args {
		switch v := a.(type) {
		case linearIndex:
			key.sig[2*i] = 'i'
		case AnyArray:
			if v.isNil() {
				return nil, nil, fmt.Errorf("gpu: operand %q is a nil array: %w", k.names[i], ErrInvalidValue)
			}
			key.sig[2*i], key.sig[2*i+1] = 'a', byte(v.DType())
		default:
			if v == nil {
				return nil, nil, fmt.Errorf("gpu: operand %q is nil: %w", k.names[i], ErrInvalidValue)
			}
			key.sig[2*i], key.sig[2*i+1] = 's', scalarSig(v)
		}
	}
	k.mu.Lock()
	p := k.plans[key]
	k.mu.Unlock()
	if p != nil {
		return p, args, nil
	}
	if err := k.checkNames(); err != nil {
		return nil, nil, err
	}
	vars := Vars{}
	for i, name := range k.names {
		vars[name] = args[i]
	}
	// The plan's operand and parameter slots follow the positional order of the names.
	p, err := newPlan(k.src, vars, k.names, dtype.Of[R]())
	if err != nil {
		return nil, nil, err
	}
	k.mu.Lock()
	k.plans[key] = p
	k.mu.Unlock()
	return p, args, nil
}

// errNilKernel is the error of a nil *Kernel as the receiver.
var errNilKernel = fmt.Errorf("gpu: nil kernel: %w", ErrInvalidValue)

// Into evaluates the kernel into out with the operands in the order of NewKernel's names.
func (k *Kernel[R]) Into(s *Stream, out *Array[R], args ...any) error {
	if k == nil {
		return errNilKernel
	}
	if err := nonNil(out); err != nil {
		return err
	}
	if out.hasZeroStride() {
		return fmt.Errorf("gpu: evaluating into a broadcast view: %w", ErrInvalidValue)
	}
	if err := nilStream(s); err != nil {
		return err
	}
	p, vals, err := k.plan(s.dev, args)
	if err != nil {
		return err
	}
	return runPlanHdr(s, out.hdr(), p, vals)
}

// Eval evaluates the kernel into a new array of the operands' broadcast shape.
func (k *Kernel[R]) Eval(s *Stream, args ...any) (*Array[R], error) {
	if k == nil {
		return nil, errNilKernel
	}
	shape, err := broadcastOperands("", args, kernelLabels(k.names))
	if err != nil {
		return nil, err
	}
	out, err := Empty[R](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := k.Into(s, out, args...); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// pdlCapable reports whether the device runs programmatic dependent launch: CUDA, compute
// capability 9.0+ (griddepcontrol; backend.LaunchConfig.Programmatic).
func pdlCapable(info *DeviceInfo) bool { return info.Backend == "cuda" && info.ComputeMajor >= 9 }
