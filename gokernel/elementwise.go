package gokernel

import (
	"fmt"
	"go/parser"
	"go/token"
	"go/types"
	"reflect"
	"runtime"
	"strings"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/kern"
)

// Func1 is a scalar Go function func(X) R made an elementwise operation on arrays
// (NumPy's ufunc, numpy.vectorize; Numba's @vectorize): Apply returns a new array of
// the input's shape with fn of each element. Make one with NewFunc1. It is safe for
// concurrent use.
type Func1[X, R gpu.Elem] struct {
	k  *Kernel
	fn string
}

// Func2 is a scalar Go function func(X, Y) R made an elementwise operation on
// arrays with NumPy's broadcasting: Apply(x, y) has the shape gpu.BroadcastShapes
// gives x's and y's, and fn of their elements. Make one with NewFunc2. It is safe
// for concurrent use.
type Func2[X, Y, R gpu.Elem] struct {
	k  *Kernel
	fn string
}

// NewFunc1 makes fn, a package-level function of the Go file whose text is src
// (typically through //go:embed), an elementwise operation on arrays. fn is written
// in the kernel subset of Go (see the package documentation; it takes and returns
// numbers, and may call the file's other functions, math and package kern's math)
// and takes no kern.Thread: the operation's kernel, a grid-stride loop made here,
// calls it once per element (inlined on the GPU, called on the CPU backend). X and
// R are Go's number types (int8 ... uint64, float32, float64); errors in fn are
// *Error at their position in src.
func NewFunc1[X, R gpu.Elem](src string, fn func(X) R) (*Func1[X, R], error) {
	k, name, err := newElementwise(src, fn, []reflect.Type{reflect.TypeFor[X]()}, reflect.TypeFor[R](),
		func(t kern.Thread, x []X, out []R) {
			n, stride := len(out), t.GridStride()
			xs := stride1(len(x), n)
			for i := t.Index(); i < n; i += stride {
				out[i] = fn(x[i*xs])
			}
		})
	if err != nil {
		return nil, err
	}
	return &Func1[X, R]{k: k, fn: name}, nil
}

// NewFunc2 is NewFunc1 for a function of two numbers, whose operation broadcasts
// its two arrays as NumPy does.
func NewFunc2[X, Y, R gpu.Elem](src string, fn func(X, Y) R) (*Func2[X, Y, R], error) {
	k, name, err := newElementwise(src, fn, []reflect.Type{reflect.TypeFor[X](), reflect.TypeFor[Y]()}, reflect.TypeFor[R](),
		func(t kern.Thread, x []X, y []Y, out []R) {
			n, stride := len(out), t.GridStride()
			xs, ys := stride1(len(x), n), stride1(len(y), n)
			for i := t.Index(); i < n; i += stride {
				out[i] = fn(x[i*xs], y[i*ys])
			}
		})
	if err != nil {
		return nil, err
	}
	return &Func2[X, Y, R]{k: k, fn: name}, nil
}

// Kernel returns the operation's kernel (for its PTX; nil for a nil operation).
func (f *Func1[X, R]) Kernel() *Kernel {
	if f == nil {
		return nil
	}
	return f.k
}

// Kernel returns the operation's kernel (for its PTX; nil for a nil operation).
func (f *Func2[X, Y, R]) Kernel() *Kernel {
	if f == nil {
		return nil
	}
	return f.k
}

// errNilFunc is the error of a nil operation, or a zero one (not made by NewFunc1 or
// NewFunc2), applied.
var errNilFunc = fmt.Errorf("gokernel: nil elementwise operation (not made by NewFunc1 or NewFunc2): %w", gpu.ErrInvalidValue)

// Unchecked returns the operation with its function's run-time checks compiled out on
// the GPU (see Kernel.Unchecked): an operation whose function keeps none (the
// operation's own indexing keeps none) is a plain launch, which a graph can capture.
//
// Unchecked of a nil operation is nil.
func (f *Func1[X, R]) Unchecked() *Func1[X, R] {
	if f == nil {
		return nil
	}
	return &Func1[X, R]{k: f.k.Unchecked(), fn: f.fn}
}

// Unchecked returns the operation with its function's run-time checks compiled out on
// the GPU (see Func1.Unchecked).
func (f *Func2[X, Y, R]) Unchecked() *Func2[X, Y, R] {
	if f == nil {
		return nil
	}
	return &Func2[X, Y, R]{k: f.k.Unchecked(), fn: f.fn}
}

// Apply returns a new contiguous array of x's shape holding fn of each element of
// x (any view: strided, broadcast, offset), computed on s.
func (f *Func1[X, R]) Apply(s *gpu.Stream, x *gpu.Array[X]) (*gpu.Array[R], error) {
	if f == nil || f.k.isNil() {
		return nil, errNilFunc
	}
	if s.Device() == nil || x == nil {
		return nil, fmt.Errorf("gokernel: %s: nil stream or array: %w", f.fn, gpu.ErrInvalidValue)
	}
	if err := f.k.refuseCapture(s); err != nil {
		return nil, err
	}
	out, err := gpu.Empty[R](s, x.Shape()...)
	if err != nil {
		return nil, err
	}
	if err := f.Into(s, out, x); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// Into writes fn of each element of x into out, which must be contiguous and have
// x's shape, or one x broadcasts to (numpy ufunc's out=). out may share memory with
// x: x itself is updated in place, and an x that overlaps out otherwise (x[1:] into
// x[:n-1]) is read as it was before the call, as gpu.EvalInto and NumPy read it.
func (f *Func1[X, R]) Into(s *gpu.Stream, out *gpu.Array[R], x *gpu.Array[X]) error {
	if f == nil || f.k.isNil() {
		return errNilFunc
	}
	if s.Device() == nil || out == nil || x == nil {
		return fmt.Errorf("gokernel: %s: nil stream or array: %w", f.fn, gpu.ErrInvalidValue)
	}
	if err := f.k.refuseCapture(s); err != nil {
		return err
	}
	shape, err := outShape(f.fn, out.Shape(), out.IsContiguous(), x.Shape())
	if err != nil {
		return err
	}
	n := out.Size()
	if n == 0 {
		return streamClosed(s)
	}
	xv, freeX, err := operand(s, x, shape, out)
	if err != nil {
		return err
	}
	defer freeX()
	return f.k.Launch(s, gridStride(s, n), xv, out)
}

// Apply returns a new contiguous array of the shape x and y broadcast to
// (gpu.BroadcastShapes) holding fn of their elements, computed on s. x and y may
// be any views (strided, broadcast, offset); shapes that don't broadcast are an
// error wrapping gpu.ErrInvalidValue.
func (f *Func2[X, Y, R]) Apply(s *gpu.Stream, x *gpu.Array[X], y *gpu.Array[Y]) (*gpu.Array[R], error) {
	if f == nil || f.k.isNil() {
		return nil, errNilFunc
	}
	if s.Device() == nil || x == nil || y == nil {
		return nil, fmt.Errorf("gokernel: %s: nil stream or array: %w", f.fn, gpu.ErrInvalidValue)
	}
	if err := f.k.refuseCapture(s); err != nil {
		return nil, err
	}
	shape, err := gpu.BroadcastShapes(x.Shape(), y.Shape())
	if err != nil {
		return nil, fmt.Errorf("gokernel: %s: %w", f.fn, err)
	}
	out, err := gpu.Empty[R](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := f.Into(s, out, x, y); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// Into writes fn of x's and y's elements, broadcast to out's shape, into out, which
// must be contiguous (numpy ufunc's out=). out may share memory with x or y: an
// operand that is out itself is updated in place, and one that overlaps out otherwise
// (x[1:] into x[:n-1]) is read as it was before the call, as gpu.EvalInto and NumPy
// read it.
func (f *Func2[X, Y, R]) Into(s *gpu.Stream, out *gpu.Array[R], x *gpu.Array[X], y *gpu.Array[Y]) error {
	if f == nil || f.k.isNil() {
		return errNilFunc
	}
	if s.Device() == nil || out == nil || x == nil || y == nil {
		return fmt.Errorf("gokernel: %s: nil stream or array: %w", f.fn, gpu.ErrInvalidValue)
	}
	if err := f.k.refuseCapture(s); err != nil {
		return err
	}
	shape, err := outShape(f.fn, out.Shape(), out.IsContiguous(), x.Shape(), y.Shape())
	if err != nil {
		return err
	}
	n := out.Size()
	if n == 0 {
		return streamClosed(s)
	}
	xv, freeX, err := operand(s, x, shape, out)
	if err != nil {
		return err
	}
	defer freeX()
	yv, freeY, err := operand(s, y, shape, out)
	if err != nil {
		return err
	}
	defer freeY()
	return f.k.Launch(s, gridStride(s, n), xv, yv, out)
}

// refuseCapture returns captureErr when s captures a graph and the operation's kernel
// (not generic) keeps checks, before any of the operation's work is enqueued.
func (k *Kernel) refuseCapture(s *gpu.Stream) error {
	if !s.Capturing() {
		return nil
	}
	e, err := k.instance(s.Device(), map[*types.TypeParam]types.Type{}, "")
	if err != nil {
		return err
	}
	if e.checked {
		return k.captureErr(s, e)
	}
	return nil
}

// outShape checks that the inputs' shapes broadcast to out's (NumPy's rule for a
// ufunc's out=) and that out is contiguous, and returns out's shape.
func outShape(fn string, out []int, contiguous bool, in ...[]int) ([]int, error) {
	if !contiguous {
		return nil, fmt.Errorf("gokernel: %s: the result array is not contiguous: %w", fn, gpu.ErrInvalidValue)
	}
	for _, sh := range in {
		b, err := gpu.BroadcastShapes(sh, out)
		if err != nil || !equalInts(b, out) {
			return nil, fmt.Errorf("gokernel: %s: an operand of shape %v doesn't broadcast to the result's %v: %w", fn, sh, out, gpu.ErrInvalidValue)
		}
	}
	return out, nil
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// operand returns a as the operation's kernel reads it for a result out of shape:
// its one element when it has one, else a contiguous array of its elements broadcast
// to shape: a itself when it already is one, else a copy of its broadcast view
// (gpu.Contiguous, released by free once the stream is done with it). An operand
// that shares memory with out in another layout is copied first (gpu.EvalInto's rule,
// NumPy's), so that no element is overwritten before every thread has read it; one
// in out's own layout (out itself) is read and written element by element in place.
func operand[T, R gpu.Elem](s *gpu.Stream, a *gpu.Array[T], shape []int, out *gpu.Array[R]) (v *gpu.Array[T], free func(), err error) {
	free = func() {}
	v = a
	if a.Size() != 1 || !a.IsContiguous() {
		var b *gpu.Array[T]
		if a.Size() == 1 {
			b = a
		} else if b, err = a.BroadcastTo(shape...); err != nil {
			return nil, nil, err
		}
		if v, err = gpu.Contiguous(s, b); err != nil {
			return nil, nil, err
		}
		if v != b {
			free = func() { v.Free() }
			return v, free, nil // new memory
		}
	}
	if overlapsOtherwise(v, out) {
		c, err := gpu.Clone(s, v)
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Free() }, nil
	}
	return v, free, nil
}

// overlapsOtherwise reports whether the contiguous arrays a and out share memory
// (gpu.SharesMemory) in different layouts: a different first byte, element size or
// length.
func overlapsOtherwise[T, R gpu.Elem](a *gpu.Array[T], out *gpu.Array[R]) bool {
	if !gpu.SharesMemory(a, out) {
		return false
	}
	_, ab := a.Buffer().BackendMem()
	_, ob := out.Buffer().BackendMem()
	as, os := int64(a.DType().Size()), int64(out.DType().Size())
	return ab+int64(a.Offset())*as != ob+int64(out.Offset())*os || as != os || a.Size() != out.Size()
}

// stride1 is the step of the CPU's index into an operand of n elements (1) or of one
// element broadcast (0) for a result of out elements.
func stride1(n, out int) int {
	if n == out {
		return 1
	}
	return 0
}

// gridStride is the operation's geometry for n elements: blocks of 256 threads,
// at most one wave of them (8 a multiprocessor), each thread taking every grid
// stride's element.
func gridStride(s *gpu.Stream, n int) gpu.LaunchConfig {
	sms := max(1, s.Device().Info().Multiprocessors)
	return gpu.LaunchConfig{Grid: gpu.Dim3{X: max(1, min((n+255)/256, 8*sms))}, Block: gpu.Dim3{X: 256}}
}

// The generated kernel's name and its import of package kern, added to the user's
// source.
const (
	elemKernel = "gokernelElementwise"
	elemKern   = "gokernelkern"
)

// newElementwise compiles the kernel of an elementwise operation: the source src
// with an import of package kern (on the package clause's line, so that the
// source's lines keep their numbers) and the kernel appended, a grid-stride loop
// calling fn, whose Go twin cpu runs on the CPU backend.
func newElementwise(src string, fn any, in []reflect.Type, out reflect.Type, cpu any) (*Kernel, string, error) {
	v := reflect.ValueOf(fn)
	if v.Kind() != reflect.Func || v.IsNil() {
		return nil, "", fmt.Errorf("gokernel: an elementwise operation needs a function, not a nil %T: %w", fn, gpu.ErrInvalidValue)
	}
	name, file, err := funcIdentity(runtime.FuncForPC(v.Pointer()))
	if err != nil {
		return nil, "", err
	}
	tname := func(t reflect.Type) (string, error) {
		// The elements travel in slices, which a kernel has of numbers only (no bool).
		if t.PkgPath() != "" || goTypes[t.Kind()] == nil || t.Kind() == reflect.Bool {
			return "", fmt.Errorf("gokernel: %s: an elementwise operation's elements are Go's number types, not %v: %w", name, t, gpu.ErrInvalidValue)
		}
		return t.Kind().String(), nil
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, file, src, parser.PackageClauseOnly)
	if err != nil {
		return nil, "", fmt.Errorf("gokernel: %s: %v: %w", name, err, gpu.ErrInvalidValue)
	}
	at := fset.Position(f.Name.End()).Offset
	var b strings.Builder
	b.WriteString(src[:at])
	fmt.Fprintf(&b, "; import %s %q", elemKern, kernPath)
	b.WriteString(src[at:])
	// One loop per combination of operands read element by element (of the result's
	// length) and broadcast (one element, read once), chosen by the lengths: each
	// index is then proven in range (x[i] under len(x) == n and i < n; x[0] under
	// len(x) == 1), so the operation keeps no checks but its function's. Its names
	// start with gokernel, as the kernel's, so that they hide none of the file's.
	vars := []string{"gokernelX", "gokernelY"}[:len(in)]
	fmt.Fprintf(&b, "\n\nfunc %s(gokernelT %s.Thread", elemKernel, elemKern)
	for i, t := range in {
		tn, err := tname(t)
		if err != nil {
			return nil, "", err
		}
		fmt.Fprintf(&b, ", %s []%s", vars[i], tn)
	}
	tn, err := tname(out)
	if err != nil {
		return nil, "", err
	}
	fmt.Fprintf(&b, ", gokernelOut []%s) {\n\tgokernelN, gokernelStride := len(gokernelOut), gokernelT.GridStride()\n", tn)
	for mask := range 1 << len(in) {
		var conds, args []string
		var hoist strings.Builder
		for i, v := range vars {
			if mask&(1<<i) != 0 {
				conds = append(conds, fmt.Sprintf("len(%s) == 1", v))
				fmt.Fprintf(&hoist, "\t\t%s0 := %s[0]\n", v, v)
				args = append(args, v+"0")
			} else {
				conds = append(conds, fmt.Sprintf("len(%s) == gokernelN", v))
				args = append(args, v+"[gokernelI]")
			}
		}
		kw := "\tif"
		if mask > 0 {
			kw = " else if"
		}
		fmt.Fprintf(&b, "%s %s {\n%s\t\tfor gokernelI := gokernelT.Index(); gokernelI < gokernelN; gokernelI += gokernelStride {\n\t\t\tgokernelOut[gokernelI] = %s(%s)\n\t\t}\n\t}",
			kw, strings.Join(conds, " && "), hoist.String(), name, strings.Join(args, ", "))
	}
	b.WriteString("\n}\n")
	k, err := NewNamed(file, b.String(), elemKernel, cpu)
	if err != nil {
		return nil, "", err
	}
	k.name = name // faults and errors name the user's function
	k.op = fmt.Sprintf("Func%d", len(in))
	return k, name, nil
}
