package gpu

import (
	"fmt"
	"math"
	"reflect"
	"slices"

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
// together by NumPy's rules; the result, computed in the promoted type, is converted to
// R (as numpy.ndarray.astype). Errors: a syntax or type error (an *expr.Error with
// the column), shapes that don't broadcast.
//
//	y, err := gpu.Eval[float32](s, "a*x + b", gpu.Vars{"a": 2.0, "x": x, "b": 1.0})
func Eval[R Elem](s *Stream, src string, vars Vars) (*Array[R], error) {
	var shapes [][]int
	for _, v := range vars {
		if a, ok := v.(AnyArray); ok {
			shapes = append(shapes, a.header().shape)
		}
	}
	shape, err := BroadcastShapes(shapes...)
	if err != nil {
		return nil, err
	}
	out, err := Empty[R](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := evalInto(s, out.header(), src, vars, false); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// EvalInto evaluates src like Eval and stores the result, converted to out's element
// type, into out (any view that isn't broadcast; the operands broadcast to its shape).
// out may also be an operand (an in-place update such as "x + 1" into x).
func EvalInto[T Elem](s *Stream, out *Array[T], src string, vars Vars) error {
	if out.hasZeroStride() {
		return fmt.Errorf("gpu: evaluating into a broadcast view: %w", ErrInvalidValue)
	}
	return evalInto(s, out.header(), src, vars, false)
}

// scalarDecl returns the declaration of a Go scalar and its bits.
func scalarDecl(slot int, v any) (expr.Decl, dtype.DType, uint64, error) {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return expr.Decl{}, 0, 0, fmt.Errorf("nil value: %w", ErrInvalidValue)
	}
	t := dtype.OfKind(rv.Kind())
	if t == dtype.Invalid {
		return expr.Decl{}, 0, 0, fmt.Errorf("values of type %T can't be used in an expression: %w", v, ErrInvalidValue)
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

type evalOperand struct {
	h     *header
	st    []int // strides broadcast to the output's shape
	name  string
	index bool // the linear index (LinearIndex)
}

// LinearIndex, bound to a name in Vars, makes that name the element's linear
// (row-major) index in the result, an int64: Eval(s, "float64(i) * 0.5", Vars{"i":
// LinearIndex}) with the shape given by the other operands.
var LinearIndex = linearIndex{}

type linearIndex struct{}

// evalInto evaluates src into out. fillOnly marks Fill's scalar broadcast (no arrays).
func evalInto(s *Stream, out *header, src string, vars Vars, fillOnly bool) error {
	d := s.dev
	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	slices.Sort(names)
	env := expr.Env{}
	var ops []evalOperand
	type param struct {
		t    dtype.DType
		bits uint64
	}
	var params []param
	for _, name := range names {
		switch v := vars[name].(type) {
		case linearIndex:
			env[name] = expr.OperandDecl(len(ops), dtype.Int64)
			ops = append(ops, evalOperand{name: name, index: true})
		case AnyArray:
			h := v.header()
			if h.buf.a.dev != d && h.buf.a.dev.info.Backend != d.info.Backend {
				return fmt.Errorf("gpu: operand %q is on %v, the stream on %v: %w", name, h.buf.a.dev, d, ErrInvalidValue)
			}
			st, err := broadcastStrides(h.shape, h.strides, out.shape)
			if err != nil {
				return fmt.Errorf("gpu: operand %q: %w", name, err)
			}
			env[name] = expr.OperandDecl(len(ops), h.dt)
			ops = append(ops, evalOperand{h: h, st: st, name: name})
		default:
			decl, t, bits, err := scalarDecl(len(params), v)
			if err != nil {
				return fmt.Errorf("gpu: variable %q: %w", name, err)
			}
			env[name] = decl
			params = append(params, param{t, bits})
		}
	}
	e, err := expr.Parse(src, env)
	if err != nil {
		return err
	}
	if e.DType() != out.dt {
		e = &expr.Expr{Root: &expr.Cast{X: e.Root, Type: out.dt}, Inputs: e.Inputs, Params: e.Params}
	}
	n := prod(out.shape)
	if n == 0 {
		return nil
	}
	// An operand that shares out's memory with another layout is copied first, as
	// NumPy does, so that no element is overwritten before it is read.
	for i, op := range ops {
		if op.index {
			continue
		}
		if op.h.buf.a == out.buf.a && (op.h.off != out.off || !slices.Equal(op.st, out.strides)) {
			tmp, err := copyOf(s, op.h)
			if err != nil {
				return err
			}
			defer tmp.buf.Free()
			ops[i].h = tmp
			ops[i].st, _ = broadcastStrides(tmp.shape, tmp.strides, out.shape)
		}
	}
	// Collapse the iteration space and classify each operand.
	all := make([][]int, 0, 1+len(ops))
	all = append(all, out.strides)
	for _, op := range ops {
		if op.index {
			all = append(all, make([]int, len(out.shape)))
			continue
		}
		all = append(all, op.st)
	}
	cshape, cst := kernel.Collapse(out.shape, all)
	spec := &kernel.Elementwise{Expr: e, Out: kernel.Operand{DType: out.dt, Kind: kernel.Classify(cshape, cst[0])}}
	if spec.Out.Kind == kernel.Scalar {
		spec.Out.Kind = kernel.Contig // one element
	}
	var strided [][]int
	if spec.Out.Kind == kernel.Strided {
		strided = append(strided, cst[0])
	}
	read := make([]bool, len(ops))
	for _, sl := range e.Inputs {
		read[sl.Index] = true
	}
	spec.Ins = make([]kernel.Operand, len(ops))
	for i, op := range ops {
		if op.index {
			spec.Ins[i] = kernel.Operand{DType: dtype.Int64, Kind: kernel.Index}
			continue
		}
		k := kernel.Classify(cshape, cst[i+1])
		spec.Ins[i] = kernel.Operand{DType: op.h.dt, Kind: k}
		if k == kernel.Strided && read[i] {
			strided = append(strided, cst[i+1])
		}
	}
	anyStrided := len(strided) > 0
	if anyStrided {
		spec.Rank = len(cshape)
	} else {
		// Without strided operands the iteration is linear: no shape parameters.
		cshape = nil
	}
	spec.Index64 = kernel.NeedIndex64(n, cshape, strided...)
	ptr := func(h *header) uint64 { return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size()) }
	spec.Vector = !anyStrided && ptr(out)%16 == 0
	for i, op := range ops {
		if read[i] && spec.Ins[i].Kind == kernel.Contig && ptr(op.h)%16 != 0 {
			spec.Vector = false
		}
	}
	// Operands the expression doesn't read are passed as unused scalar operands.
	for i := range ops {
		if !read[i] && spec.Ins[i].Kind != kernel.Index {
			spec.Ins[i].Kind = kernel.Scalar
		}
	}
	fn, err := d.kernel(spec)
	if err != nil {
		return err
	}
	args := make([]any, 0, 2+len(ops)+spec.Rank*(1+len(strided))+len(params))
	args = append(args, Out(elemView(out)), uint64(n))
	for _, op := range ops {
		if !op.index {
			args = append(args, In(elemView(op.h)))
		}
	}
	for _, dim := range cshape {
		args = append(args, uint64(dim))
	}
	if spec.Out.Kind == kernel.Strided {
		for _, v := range cst[0] {
			args = append(args, int64(v))
		}
	}
	for i := range ops {
		if spec.Ins[i].Kind == kernel.Strided {
			for _, v := range cst[i+1] {
				args = append(args, int64(v))
			}
		}
	}
	for _, p := range params {
		args = append(args, scalarOfSize(p.t, p.bits))
	}
	return s.Launch(fn, d.geometry(spec, n), args...)
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

// elemView returns a buffer view whose address is the array's element 0, sharing the
// allocation's tracking (the offset may be past elements reached by negative strides).
func elemView(h *header) *Buffer {
	b := h.buf
	root := b.root
	if root == nil {
		root = b
	}
	return &Buffer{a: b.a, off: b.off + int64(h.off*h.dt.Size()), size: 0, root: root}
}

// copyOf returns a contiguous copy of h.
func copyOf(s *Stream, h *header) (*header, error) {
	size := h.dt.Size()
	n := prod(h.shape)
	buf, err := s.Alloc(int64(n * size))
	if err != nil {
		return nil, err
	}
	out := &header{buf: buf, dt: h.dt, shape: slices.Clone(h.shape), strides: rowMajor(h.shape)}
	if err := evalIntoHeader(s, out, h); err != nil {
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

func evalIntoHeader(s *Stream, out, in *header) error {
	return evalInto(s, out, "x", Vars{"x": headerArray{in}}, false)
}
