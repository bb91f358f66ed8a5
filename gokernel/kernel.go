package gokernel

import (
	"errors"
	"fmt"
	"go/types"
	"math"
	"reflect"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/hostcheck"
	"github.com/go-gpu/gpu/kern"
)

// Kernel is a kernel written in Go: compiled to PTX from its source for CUDA devices,
// and run as its compiled Go function on the CPU backend. It is safe for concurrent
// use; each device compiles (and loads) each instantiation once.
type Kernel struct {
	name     string
	filename string
	p        *program
	params   []kparam
	coop     bool // barriers or warp operations: one goroutine per thread on the CPU
	warp     bool
	checks   bool
	op       string          // "Func1" or "Func2" for an elementwise operation's kernel, else ""
	fns      []reflect.Value // the Go function's instantiations
	cache    *sync.Map       // instKey -> *instEntry (shared with Unchecked's copy)
}

// New compiles the kernel fn from its source src (the text of the Go file that
// declares it, typically through //go:embed), to run it on any device: the source
// is compiled for CUDA devices at the first launch on each, and fn itself runs on
// the CPU backend. fn is the kernel function (func(t kern.Thread, ...)); for a
// generic kernel pass the instantiations the CPU needs (Scale[float32],
// Scale[float64]): the GPU instantiates the source per launch's argument types
// anyway. The source is parsed and checked at once: errors are *Error, at the
// position in src, saying what to write instead.
func New(src string, fns ...any) (*Kernel, error) {
	if len(fns) == 0 {
		return nil, fmt.Errorf("gokernel: New needs the kernel function (use Compile for the GPU alone): %w", gpu.ErrInvalidValue)
	}
	v := reflect.ValueOf(fns[0])
	if v.Kind() != reflect.Func || v.IsNil() {
		return nil, fmt.Errorf("gokernel: New: argument 1 is a %T, not a kernel function: %w", fns[0], gpu.ErrInvalidValue)
	}
	name, file, err := funcIdentity(runtime.FuncForPC(v.Pointer()))
	if err != nil {
		return nil, err
	}
	return NewNamed(file, src, name, fns...)
}

// NewNamed is New for functions whose name and file the program can't find itself:
// instantiations made inside generic code (Scale[T] in a function generic over T) are
// closures. filename names src in positions, name is the kernel's.
func NewNamed(filename, src, name string, fns ...any) (*Kernel, error) {
	if len(fns) == 0 {
		return nil, fmt.Errorf("gokernel: NewNamed needs the kernel function (use Compile for the GPU alone): %w", gpu.ErrInvalidValue)
	}
	vals := make([]reflect.Value, len(fns))
	for i, fn := range fns {
		v := reflect.ValueOf(fn)
		if v.Kind() != reflect.Func || v.IsNil() {
			return nil, fmt.Errorf("gokernel: New: argument %d is a %T, not a kernel function: %w", i+1, fn, gpu.ErrInvalidValue)
		}
		if n, _, err := funcIdentity(runtime.FuncForPC(v.Pointer())); err == nil && n != name {
			return nil, fmt.Errorf("gokernel: New: %s is not the kernel %s (pass the instantiations of one kernel): %w", n, name, gpu.ErrInvalidValue)
		}
		vals[i] = v
	}
	k, err := compileSource(baseName(filename), src, name)
	if err != nil {
		return nil, err
	}
	for _, v := range vals {
		if err := k.checkFunc(v.Type()); err != nil {
			return nil, err
		}
	}
	k.fns = vals
	return k, nil
}

// Compile compiles the kernel named name from src for CUDA devices only (launching
// it on the CPU backend fails with gpu.ErrNotSupported: give New the function).
// filename names src in positions.
func Compile(filename, src, name string) (*Kernel, error) {
	return compileSource(baseName(filename), src, name)
}

// funcIdentity returns the name of a kernel function and the base name of its
// file.
func funcIdentity(rf *runtime.Func) (name, file string, err error) {
	if rf == nil {
		return "", "", fmt.Errorf("gokernel: New: the function has no name: %w", gpu.ErrInvalidValue)
	}
	full := rf.Name()
	n := full[strings.LastIndexByte(full, '/')+1:]
	n = n[strings.IndexByte(n, '.')+1:]
	// Drop type arguments ("Scale[...]").
	var b strings.Builder
	depth := 0
	for _, c := range n {
		switch {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b.WriteRune(c)
		}
	}
	n = b.String()
	if strings.ContainsAny(n, ".()") {
		return "", "", fmt.Errorf("gokernel: New: %s is not a package-level function (a method, a function literal, or an instantiation made in generic code: use NewNamed): %w", full, gpu.ErrInvalidValue)
	}
	f, _ := rf.FileLine(rf.Entry())
	return n, baseName(f), nil
}

func compileSource(filename, src, name string) (*Kernel, error) {
	p, err := parse(filename, src, name)
	if err != nil {
		return nil, err
	}
	params, coop, warp, err := p.analyze()
	if err != nil {
		return nil, err
	}
	k := &Kernel{name: name, filename: filename, p: p, params: params, coop: coop, warp: warp, checks: true, cache: &sync.Map{}}
	// Compile once now, for the errors: a generic kernel with the first type of each
	// constraint.
	subst := map[*types.TypeParam]types.Type{}
	for i := range p.sig.TypeParams().Len() {
		tp := p.sig.TypeParams().At(i)
		subst[tp] = representative(tp)
	}
	if _, err := p.compile(params, warp, compileOptions{major: 9, minor: 0, checks: true, subst: subst}); err != nil {
		return nil, err
	}
	return k, nil
}

// errNilKernel is the error of a nil *Kernel, or a zero Kernel{} (not made by New),
// given to or called as a kernel.
var errNilKernel = fmt.Errorf("gokernel: nil kernel (not made by New): %w", gpu.ErrInvalidValue)

// isNil reports a nil or zero kernel.
func (k *Kernel) isNil() bool { return k == nil || k.p == nil }

// Name returns the kernel function's name ("" for a nil kernel).
func (k *Kernel) Name() string {
	if k == nil {
		return ""
	}
	return k.name
}

// Unchecked returns the kernel without Go's run-time checks on the GPU: indexes,
// slice expressions, integer division by zero and negative shift counts are then not
// checked, and an access out of range reads or writes whatever it reaches (a fault,
// or worse). The CPU backend runs the compiled Go function, which checks always. A
// kernel that keeps no checks (panic(c) stays) is a plain launch, which a graph can
// capture (see "Graphs" in the package documentation).
//
// Unchecked of a nil kernel is nil (whose launches are errors).
func (k *Kernel) Unchecked() *Kernel {
	if k.isNil() {
		return nil
	}
	c := *k
	c.checks = false
	return &c
}

// PTX returns the PTX module the kernel compiles to for a device of compute
// capability major.minor, and its entry's name. typeArgs gives a generic kernel's type
// arguments as values of those types, in order (float32(0)); missing ones are the
// first type of their constraint, and more than the kernel has are an error. A compute
// capability below 7.0 is refused with an error wrapping gpu.ErrNotSupported, as a
// launch on such a device is; a minor version that isn't a digit with one wrapping
// gpu.ErrInvalidValue. Past 9.0 the module targets sm_90 (ptx.TargetFor), which the
// driver compiles forward.
func (k *Kernel) PTX(major, minor int, typeArgs ...any) (src, entry string, err error) {
	if k.isNil() {
		return "", "", errNilKernel
	}
	if err := k.checkTarget(major, minor); err != nil {
		return "", "", err
	}
	if n := k.p.sig.TypeParams().Len(); len(typeArgs) > n {
		return "", "", fmt.Errorf("gokernel: %s: %d type arguments for %d type parameters: %w", k.name, len(typeArgs), n, gpu.ErrInvalidValue)
	}
	subst := map[*types.TypeParam]types.Type{}
	for i := range k.p.sig.TypeParams().Len() {
		tp := k.p.sig.TypeParams().At(i)
		subst[tp] = representative(tp)
		if i < len(typeArgs) {
			t := goTypes[reflect.TypeOf(typeArgs[i]).Kind()]
			if t == nil || !satisfies(t, tp) {
				return "", "", fmt.Errorf("gokernel: %s: type argument %d, a %T, does not satisfy %s: %w", k.name, i+1, typeArgs[i], tp.Constraint(), gpu.ErrInvalidValue)
			}
			subst[tp] = t
		}
	}
	inst, err := k.p.compile(k.params, k.warp, compileOptions{major: major, minor: minor, checks: k.checks, subst: subst})
	if err != nil {
		return "", "", err
	}
	return inst.ptx, inst.entry, nil
}

// checkFunc checks that a Go function's parameters match the kernel's.
func (k *Kernel) checkFunc(ft reflect.Type) error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("gokernel: New: the function %s %s: %w", k.name, fmt.Sprintf(format, args...), gpu.ErrInvalidValue)
	}
	if ft.NumIn() != 1+len(k.params) || ft.NumOut() != 0 {
		return bad("has type %v, which doesn't match its source's %d parameters", ft, 1+len(k.params))
	}
	if ft.In(0) != reflect.TypeFor[kern.Thread]() {
		return bad("takes a %v first, not a kern.Thread", ft.In(0))
	}
	for i, kp := range k.params {
		rt := ft.In(1 + i)
		if kp.slice != (rt.Kind() == reflect.Slice) {
			return bad("parameter %s is a %v, but the source's is %v", kp.name, rt, kp.t)
		}
		// A parameter of no type parameter has the source's number type (a function
		// compiled from another version of the source would run on the CPU backend
		// where the source's kernel runs on a GPU).
		st, et := types.Unalias(kp.t), rt
		if kp.slice {
			if sl, ok := st.Underlying().(*types.Slice); ok {
				st = types.Unalias(sl.Elem())
			}
			et = rt.Elem()
		}
		if _, generic := st.(*types.TypeParam); generic {
			continue
		}
		if gt := goTypes[et.Kind()]; gt == nil || !types.Identical(gt, st.Underlying()) {
			return bad("parameter %s is a %v, but the source's is %v", kp.name, rt, kp.t)
		}
	}
	return nil
}

// ---- launching ----

// LaunchN launches the kernel with one thread per element of n: blocks of 256
// threads, as many as n needs. n = 0 launches nothing, but the stream (nil, zero or
// closed: gpu.ErrClosed), the number of arguments and their types are checked as
// Launch checks them.
func (k *Kernel) LaunchN(s *gpu.Stream, n int, args ...any) error {
	if k.isNil() {
		return errNilKernel
	}
	if n < 0 || int64(n) > math.MaxInt32*256 {
		return fmt.Errorf("gokernel: %s: %d threads: %w", k.name, n, gpu.ErrInvalidValue)
	}
	if n == 0 {
		if err := k.checkArgs(s, args); err != nil {
			return err
		}
		if _, err := k.bind(args); err != nil {
			return err
		}
		return streamClosed(s)
	}
	return k.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: (n + 255) / 256}, Block: gpu.Dim3{X: 256}}, args...)
}

// Launch launches the kernel on s with the given geometry. args are the kernel's
// parameters after its kern.Thread, in order: for a slice parameter a contiguous
// *gpu.Array of its element type (the kernel sees its elements, row-major; the
// access is tracked as a read, a write or both, as the kernel's code uses the slice),
// for a scalar a Go value of its type (an int or a float64 converts to the parameter's
// type when it is representable as Go defines it for untyped constants, which the
// call's are: an integer type holds the value exactly, a float type rounds it to
// nearest without overflow, NaN and ±Inf stay themselves), or a *gpu.Param of its
// basic type (a Param of a type Seed uint32 for a uint32; no conversion), of 32 or 64
// bits, which a graph that captures the launch can change (gpu.Graph.SetParam). A
// generic kernel is instantiated for the arguments' types. A nil array is an error
// wrapping gpu.ErrInvalidValue.
//
// An index out of range (or another of Go's checks) in a thread stops that thread;
// the others run on, and the next wait that covers the launch (Synchronize of s or of
// the device, or a host read of an array written on s by the launch or after it: see
// gpu.Stream.LaunchChecked) returns a *Fault (wrapping gpu.ErrKernelFailure) naming
// the kernel and the source line. The device stays usable. On a stream that captures
// a graph, a launch of a kernel that keeps checks is refused with an error wrapping
// gpu.ErrCapturing (see "Graphs" in the package documentation).
func (k *Kernel) Launch(s *gpu.Stream, cfg gpu.LaunchConfig, args ...any) error {
	if k.isNil() {
		return errNilKernel
	}
	if err := k.checkArgs(s, args); err != nil {
		return err
	}
	if err := checkGeometry(cfg); err != nil {
		return fmt.Errorf("gokernel: %s: %w", k.name, err)
	}
	if cfg.SharedMem != 0 {
		return fmt.Errorf("gokernel: %s: a Go kernel declares its shared memory (kern.Shared): LaunchConfig.SharedMem must be 0: %w", k.name, gpu.ErrInvalidValue)
	}
	bound, err := k.bind(args)
	if err != nil {
		return err
	}
	dev := s.Device()
	e, err := k.instance(dev, bound.subst, bound.key)
	if err != nil {
		return err
	}
	capturing := s.Capturing()
	if capturing && e.checked {
		return k.captureErr(s, e)
	}
	largs := make([]any, 0, 2*len(args)+1)
	for i, ip := range e.inst.params {
		a := bound.args[i]
		if ip.slice {
			var ba gpu.BufferArg
			switch {
			case ip.write && ip.read:
				ba = gpu.InOut(a.arr)
			case ip.write:
				ba = gpu.Out(a.arr)
			default:
				ba = gpu.In(a.arr)
			}
			largs = append(largs, ba, uint64(a.n))
			continue
		}
		if a.p != nil {
			largs = append(largs, a.p)
			continue
		}
		largs = append(largs, scalarArg(a.v))
	}
	// On the CPU backend the Go function checks always: outside a capture its launches
	// take a check slot all the same, so that its failures are *Faults a wait reports.
	if !e.checked && (capturing || !e.cpu) {
		return s.Launch(e.fn, cfg, append(largs, gpu.DevicePtr(0))...)
	}
	return s.LaunchChecked(e.fn, cfg, e.decode, largs...)
}

// checkArgs checks a launch's stream (nil or zero) and its number of arguments.
func (k *Kernel) checkArgs(s *gpu.Stream, args []any) error {
	if s.Device() == nil {
		return fmt.Errorf("gokernel: %s: nil stream: %w", k.name, gpu.ErrInvalidValue)
	}
	if len(args) != len(k.params) {
		return fmt.Errorf("gokernel: %s takes %d arguments after its kern.Thread, not %d: %w", k.name, len(k.params), len(args), gpu.ErrInvalidValue)
	}
	return nil
}

// streamClosed returns the error of a closed stream (wrapping gpu.ErrClosed), for
// calls with nothing to enqueue: nil for an open one, even one that captures a graph
// or whose device has faulted (a launch would report that).
func streamClosed(s *gpu.Stream) error {
	if _, err := s.Query(); errors.Is(err, gpu.ErrClosed) {
		return err
	}
	return nil
}

// captureErr is the error of a launch of a kernel that keeps checks (e.checked) on s,
// which captures a graph: a check's failure is reported by a wait that covers the
// launch, and no wait covers a graph's launches (gpu.Stream.LaunchChecked).
func (k *Kernel) captureErr(s *gpu.Stream, e *instEntry) error {
	var first, firstPanic *site
	type place struct {
		kind siteKind
		file string
		line int
	}
	places := map[place]bool{} // (an inlined function's checks are sites of each copy)
	for i := range e.inst.sites {
		st := &e.inst.sites[i]
		places[place{st.kind, st.file, st.line}] = true
		if st.kind == kPanic {
			if firstPanic == nil {
				firstPanic = st
			}
		} else if first == nil {
			first = st
		}
	}
	what, fix := "the kernel "+k.name, "the kernel's Unchecked() (Kernel.Unchecked)"
	if k.op != "" {
		what, fix = "the operation of "+k.name, "the operation's Unchecked() ("+k.op+".Unchecked)"
	}
	n := len(places)
	if first == nil && firstPanic == nil {
		return fmt.Errorf("gokernel: %s: a checked launch on %v, which captures a graph: %w", k.name, s, gpu.ErrCapturing) // (not reached: e.checked has sites)
	}
	if first == nil {
		// Only panics, which Unchecked keeps.
		return fmt.Errorf("gokernel: %s: a launch on %v, which captures a graph: %s calls panic (%s:%d), which even Unchecked keeps: a failure is reported by a wait that covers the launch, and none covers a graph's launches: remove the panic to capture it: %w",
			k.name, s, what, firstPanic.file, firstPanic.line, gpu.ErrCapturing)
	}
	more := ""
	if n > 1 {
		more = fmt.Sprintf(" and %d more", n-1)
	}
	return fmt.Errorf("gokernel: %s: a launch on %v, which captures a graph: %s keeps Go's run-time checks (%s at %s:%d%s), whose failures a wait that covers the launch reports, and none covers a graph's launches: launch %s in the graph (no checks on the GPU), or write the code so that the compiler proves its checks pass (see the package documentation): %w",
		k.name, s, what, first.kindText(), first.file, first.line, more, fix, gpu.ErrCapturing)
}

// checkGeometry applies CUDA's limits, which the CPU backend follows too.
func checkGeometry(cfg gpu.LaunchConfig) error {
	g := kern.Dim{X: cfg.Grid.X, Y: max(cfg.Grid.Y, 1), Z: max(cfg.Grid.Z, 1)}
	b := kern.Dim{X: cfg.Block.X, Y: max(cfg.Block.Y, 1), Z: max(cfg.Block.Z, 1)}
	if g.X < 1 || g.X > math.MaxInt32 || g.Y > 65535 || g.Z > 65535 {
		return fmt.Errorf("grid %v: X in [1, 2^31), Y and Z in [1, 65535]: %w", cfg.Grid, gpu.ErrInvalidValue)
	}
	if b.X < 1 || b.X > 1024 || b.Y > 1024 || b.Z > 64 || b.X*b.Y*b.Z > kern.MaxBlockThreads {
		return fmt.Errorf("block %v: at most 1024 threads (X, Y <= 1024, Z <= 64): %w", cfg.Block, gpu.ErrInvalidValue)
	}
	return nil
}

// boundArg is one launch argument, checked against its parameter.
type boundArg struct {
	arr  gpu.Operand // a slice's array
	n    int         // its length
	elem reflect.Type
	v    any // a scalar, converted to the parameter's type
	p    *gpu.Param
}

type bound struct {
	args  []boundArg
	subst map[*types.TypeParam]types.Type
	key   string
}

// arrayLike is what *gpu.Array[T] offers.
type arrayLike interface {
	gpu.Operand
	DType() dtype.DType
	Size() int
	IsContiguous() bool
	Buffer() *gpu.Buffer // nil for a nil array
}

// goType maps a reflect kind to the go/types basic type.
var goTypes = map[reflect.Kind]types.Type{
	reflect.Bool: types.Typ[types.Bool], reflect.Int: types.Typ[types.Int], reflect.Int8: types.Typ[types.Int8],
	reflect.Int16: types.Typ[types.Int16], reflect.Int32: types.Typ[types.Int32], reflect.Int64: types.Typ[types.Int64],
	reflect.Uint: types.Typ[types.Uint], reflect.Uint8: types.Typ[types.Uint8], reflect.Uint16: types.Typ[types.Uint16],
	reflect.Uint32: types.Typ[types.Uint32], reflect.Uint64: types.Typ[types.Uint64], reflect.Uintptr: types.Typ[types.Uintptr],
	reflect.Float32: types.Typ[types.Float32], reflect.Float64: types.Typ[types.Float64],
}

// bind checks the arguments and infers the kernel's type arguments.
func (k *Kernel) bind(args []any) (*bound, error) {
	b := &bound{args: make([]boundArg, len(args)), subst: map[*types.TypeParam]types.Type{}}
	argErr := func(i int, format string, a ...any) error {
		return fmt.Errorf("gokernel: %s: argument %d (%s): %s: %w", k.name, i+1, k.params[i].name, fmt.Sprintf(format, a...), gpu.ErrInvalidValue)
	}
	unify := func(i int, pt types.Type, rt reflect.Type) error {
		gt := goTypes[rt.Kind()]
		if gt == nil {
			return argErr(i, "a %v is not a kernel element type", rt)
		}
		if tp, ok := types.Unalias(pt).(*types.TypeParam); ok {
			if prev, ok := b.subst[tp]; ok && !types.Identical(prev, gt) {
				return argErr(i, "%s is %s by an earlier argument, not %s", tp, prev, gt)
			}
			if !satisfies(gt, tp) {
				return argErr(i, "%s does not satisfy %s", gt, tp.Constraint())
			}
			b.subst[tp] = gt
			return nil
		}
		if !types.Identical(basicOf(pt), basicOf(gt)) {
			return argErr(i, "a slice of %s, not of %s", pt, gt)
		}
		return nil
	}
	// Slices first: they decide the element types.
	for i, kp := range k.params {
		if !kp.slice {
			continue
		}
		a, ok := args[i].(arrayLike)
		if !ok || a == nil {
			return nil, argErr(i, "a slice parameter takes a *gpu.Array, not a %T", args[i])
		}
		if a.Buffer() == nil {
			return nil, argErr(i, "a nil array")
		}
		if !a.IsContiguous() {
			return nil, argErr(i, "the array is not contiguous: copy it first (gpu.Copy)")
		}
		rt := elemType(args[i])
		if rt == nil {
			return nil, argErr(i, "a %T has no element type", args[i])
		}
		if err := unify(i, sliceElem(kp.t), rt); err != nil {
			return nil, err
		}
		b.args[i] = boundArg{arr: a, n: a.Size(), elem: rt}
	}
	for i, kp := range k.params {
		if kp.slice {
			continue
		}
		if p, ok := args[i].(*gpu.Param); ok {
			if err := k.bindParam(b, i, p, unify, argErr); err != nil {
				return nil, err
			}
			continue
		}
		v := reflect.ValueOf(args[i])
		if !v.IsValid() {
			return nil, argErr(i, "nil")
		}
		pt := kp.t
		if tp, ok := types.Unalias(pt).(*types.TypeParam); ok {
			if c, ok := b.subst[tp]; ok {
				pt = c
			} else {
				if err := unify(i, pt, v.Type()); err != nil {
					return nil, err
				}
				pt = b.subst[tp]
			}
		}
		cv, err := convertScalar(v, pt)
		if err != nil {
			return nil, argErr(i, "%v", err)
		}
		b.args[i].v = cv
	}
	tps := k.p.sig.TypeParams()
	var key []string
	for i := range tps.Len() {
		t, ok := b.subst[tps.At(i)]
		if !ok {
			return nil, fmt.Errorf("gokernel: %s: the arguments don't decide its type parameter %s: %w", k.name, tps.At(i), gpu.ErrInvalidValue)
		}
		key = append(key, t.String())
	}
	b.key = strings.Join(key, ",")
	return b, nil
}

// satisfies reports whether the basic type t is in tp's type set.
func satisfies(t types.Type, tp *types.TypeParam) bool {
	return types.Satisfies(t, tp.Constraint().Underlying().(*types.Interface))
}

// elemType returns the element type of a *gpu.Array[T] (the element of ToSlice's
// result).
func elemType(a any) reflect.Type {
	m, ok := reflect.TypeOf(a).MethodByName("ToSlice")
	if !ok || m.Type.NumOut() != 2 || m.Type.Out(0).Kind() != reflect.Slice {
		return nil
	}
	return m.Type.Out(0).Elem()
}

// convertScalar returns v as a value of the basic type t: v's kind must be t's, or v
// an int or a float64 representable in t, as Go defines it for an untyped constant
// (an int or float64 argument is typically one): an integer type must hold the value
// exactly (2.0 converts to an int32; 2.5, 1<<40 and -1 for a uint8 are errors), a
// float type rounds it to the nearest value unless that overflows (16777217 gives
// float32 16777216; 1e300 is an error for a float32); NaN and ±Inf convert to a float
// type as themselves.
func convertScalar(v reflect.Value, t types.Type) (any, error) {
	want := basicOf(t)
	rt := reflectTypes[want.Kind()]
	if rt == nil {
		return nil, fmt.Errorf("%s is not a kernel scalar type", t)
	}
	isInt := rt.Kind() != reflect.Bool && rt.Kind() != reflect.Float32 && rt.Kind() != reflect.Float64
	switch {
	case v.Kind() == rt.Kind():
		return v.Convert(rt).Interface(), nil
	case v.Kind() == reflect.Int && rt.Kind() != reflect.Bool:
		x := v.Int()
		c := reflect.ValueOf(x).Convert(rt) // a float type rounds to nearest: no int overflows one
		if isInt {
			var back int64
			if c.CanInt() {
				back = c.Int()
			} else {
				back = int64(c.Uint())
				if x < 0 {
					back = ^back
				}
			}
			if back != x {
				return nil, fmt.Errorf("%d is not representable in %s", x, t)
			}
		}
		return c.Interface(), nil
	case v.Kind() == reflect.Float64 && rt.Kind() == reflect.Float32:
		x := v.Float()
		f := float32(x)
		if math.IsInf(float64(f), 0) && !math.IsInf(x, 0) {
			return nil, fmt.Errorf("%v overflows %s (largest magnitude %v)", x, t, float32(math.MaxFloat32))
		}
		return f, nil
	case v.Kind() == reflect.Float64 && isInt:
		x := v.Float()
		k := rt.Kind()
		if k == reflect.Uintptr {
			k = reflect.Uint // (no element type of its own; a uint's size)
		}
		lo, hi := dtype.OfKind(k).IntRange()
		if x != math.Trunc(x) || !(x >= lo && x < hi) { // (NaN and ±Inf fail too)
			return nil, fmt.Errorf("%v is not representable in %s", x, t)
		}
		if lo < 0 {
			return reflect.ValueOf(int64(x)).Convert(rt).Interface(), nil
		}
		return reflect.ValueOf(uint64(x)).Convert(rt).Interface(), nil
	}
	return nil, fmt.Errorf("wants a value of type %s, not %v", t, v.Type())
}

var reflectTypes = map[types.BasicKind]reflect.Type{
	types.Bool: reflect.TypeFor[bool](), types.Int: reflect.TypeFor[int](), types.Int8: reflect.TypeFor[int8](),
	types.Int16: reflect.TypeFor[int16](), types.Int32: reflect.TypeFor[int32](), types.Int64: reflect.TypeFor[int64](),
	types.Uint: reflect.TypeFor[uint](), types.Uint8: reflect.TypeFor[uint8](), types.Uint16: reflect.TypeFor[uint16](),
	types.Uint32: reflect.TypeFor[uint32](), types.Uint64: reflect.TypeFor[uint64](), types.Uintptr: reflect.TypeFor[uintptr](),
	types.Float32: reflect.TypeFor[float32](), types.Float64: reflect.TypeFor[float64](),
}

// scalarArg returns a scalar launch argument: 8- and 16-bit integers and bools travel
// as 32-bit parameters.
func scalarArg(v any) any {
	switch x := v.(type) {
	case bool:
		if x {
			return uint32(1)
		}
		return uint32(0)
	case int8:
		return int32(x)
	case int16:
		return int32(x)
	case uint8:
		return uint32(x)
	case uint16:
		return uint32(x)
	}
	return v
}

// bindParam binds a *gpu.Param to scalar parameter i: its value passes as it is (a
// graph's SetParam changes it with one of the same type), so its type must be the
// parameter's, or decide a type parameter's, and be one of 32 or 64 bits (a kernel
// takes a narrower scalar or a bool widened to 32 bits, which a Param's bytes aren't).
func (k *Kernel) bindParam(b *bound, i int, p *gpu.Param, unify func(int, types.Type, reflect.Type) error, argErr func(int, string, ...any) error) error {
	rt := p.Type()
	if rt == nil {
		return argErr(i, "a nil Param")
	}
	switch rt.Kind() {
	case reflect.Int32, reflect.Int64, reflect.Int, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Uintptr, reflect.Float32, reflect.Float64:
	default:
		return argErr(i, "a Param of type %v: a kernel takes Params of 32- and 64-bit numbers only, as it widens narrower scalars (pass a plain %v, or declare the parameter 32-bit to change it by SetParam)", rt, rt)
	}
	pt := k.params[i].t
	if tp, ok := types.Unalias(pt).(*types.TypeParam); ok {
		if c, ok := b.subst[tp]; ok {
			pt = c
		} else {
			if err := unify(i, pt, rt); err != nil {
				return err
			}
			pt = b.subst[tp]
		}
	}
	if !types.Identical(basicOf(pt), goTypes[rt.Kind()]) {
		return argErr(i, "a Param of type %v for a %s: a Param's value keeps its type (make it with a %s value)", rt, pt, pt)
	}
	b.args[i].p = p
	return nil
}

// ---- instances ----

type instKey struct {
	dev    *gpu.Device
	targs  string
	checks bool
}

type instEntry struct {
	mu sync.Mutex // held while building
	// done: built, with the fields below set (a failed build is tried again: a module
	// load refused inside a host function succeeds later).
	done atomic.Bool
	inst *instance
	fn   *gpu.Function
	// checked: the instantiation keeps check sites, so its launches take a check slot
	// (gpu.Stream.LaunchChecked), which decode reads, and can't be captured; one
	// without (Unchecked, or every check proven) takes a null slot address and runs as
	// a plain launch, which a graph can capture. The rule is the same on every
	// backend: on the CPU (cpu), whose Go function checks always, a launch outside a
	// capture takes a slot all the same.
	checked bool
	cpu     bool
	decode  func(slot []uint32) error
	// cpuFaults maps the address of a CPU launch's slot to the *Fault it recorded
	// (the slot's word 0 says so), until the wait that reports it.
	cpuFaults sync.Map
}

// checkTarget refuses a compute capability the kernels can't be compiled for.
func (k *Kernel) checkTarget(major, minor int) error {
	if minor < 0 || minor > 9 {
		return fmt.Errorf("gokernel: %s: compute capability %d.%d: the minor version is a digit: %w", k.name, major, minor, gpu.ErrInvalidValue)
	}
	if major < 7 {
		return fmt.Errorf("gokernel: %s: Go kernels need compute capability 7.0 or later (warp-synchronous operations, relaxed atomics), not %d.%d: %w", k.name, major, minor, gpu.ErrNotSupported)
	}
	return nil
}

// instance returns the device's compiled instantiation, making it on first use.
func (k *Kernel) instance(dev *gpu.Device, subst map[*types.TypeParam]types.Type, targs string) (*instEntry, error) {
	key := instKey{dev: dev, targs: targs, checks: k.checks}
	v, _ := k.cache.LoadOrStore(key, &instEntry{})
	e := v.(*instEntry)
	if e.done.Load() {
		return e, nil
	}
	// Not built yet. Inside a host function on CUDA, neither build nor wait for
	// another goroutine's build: its module load may wait for this function.
	if err := hostcheck.ModuleLoad(dev); err != nil {
		return e, fmt.Errorf("gokernel: %s: %w", k.name, err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.done.Load() {
		if err := k.build(e, dev, subst); err != nil {
			return e, err
		}
		e.done.Store(true)
	}
	return e, nil
}

func (k *Kernel) build(e *instEntry, dev *gpu.Device, subst map[*types.TypeParam]types.Type) error {
	info := dev.Info()
	major, minor := info.ComputeMajor, info.ComputeMinor
	if info.Backend == "cpu" {
		major, minor = 9, 0 // the module only serves the fault sites there
	} else if err := k.checkTarget(major, minor); err != nil {
		return err
	}
	inst, err := k.p.compile(k.params, k.warp, compileOptions{major: major, minor: minor, checks: k.checks, subst: subst})
	if err != nil {
		return err
	}
	e.inst = inst
	e.checked = len(inst.sites) > 0
	e.cpu = info.Backend == "cpu"
	e.decode = func(w []uint32) error { return k.decode(e, w) }
	switch info.Backend {
	case "cpu":
		fn, err := k.cpuFunc(e)
		if err != nil {
			return err
		}
		e.fn, err = gpu.NewGoFunction(dev, inst.entry, fn)
		return err
	default:
		mod, err := dev.LoadModule([]byte(inst.ptx))
		if err != nil {
			return fmt.Errorf("gokernel: loading %s: %w", k.name, err)
		}
		e.fn, err = mod.Function(inst.entry)
		return err
	}
}

// Fault is a failure of a Go kernel's thread: an index out of range, a slice
// expression out of range, an integer division by zero, a negative shift count, a
// panic, found by the checks Go makes (on the GPU, compiled into the kernel). The
// wait that finds it returns it; it wraps gpu.ErrKernelFailure.
type Fault struct {
	Kernel string
	File   string // the kernel's source file (base name)
	Line   int
	// Msg is Go's run-time error text without "runtime error: " ("index out of
	// range [5] with length 5").
	Msg           string
	Block, Thread kern.Dim
}

// Error returns "gokernel: Saxpy: saxpy.go:12: index out of range [5] with length 5
// (block (1,0,0), thread (5,0,0))".
func (f *Fault) Error() string {
	return fmt.Sprintf("gokernel: %s: %s:%d: %s (block %v, thread %v)", f.Kernel, f.File, f.Line, f.Msg, f.Block, f.Thread)
}

// Unwrap returns gpu.ErrKernelFailure.
func (f *Fault) Unwrap() error { return gpu.ErrKernelFailure }

// decode turns the words of a launch's check slot into a *Fault.
func (k *Kernel) decode(e *instEntry, w []uint32) error {
	if w[0] == recCPU {
		if f, ok := e.cpuFaults.LoadAndDelete(uintptr(unsafe.Pointer(&w[0]))); ok {
			return f.(*Fault)
		}
		return nil
	}
	s := int(w[0])
	if s < 1 || s > len(e.inst.sites) {
		return fmt.Errorf("gokernel: %s: a check slot with site %d: %w", k.name, s, gpu.ErrKernelFailure)
	}
	st := &e.inst.sites[s-1]
	u64 := func(i int) uint64 { return uint64(w[i]) | uint64(w[i+1])<<32 }
	return &Fault{
		Kernel: k.name, File: st.file, Line: st.line,
		Msg:    st.message(u64(recX/4), u64(recY/4)),
		Block:  kern.Dim{X: int(w[recBlock/4]), Y: int(w[recBlock/4+1]), Z: int(w[recBlock/4+2])},
		Thread: kern.Dim{X: int(w[recThread/4]), Y: int(w[recThread/4+1]), Z: int(w[recThread/4+2])},
	}
}

// cpuFunc returns the CPU backend's kernel: the Go function of the instantiation,
// over the launch's memory, through kern.Run.
func (k *Kernel) cpuFunc(e *instEntry) (func(*cpu.Launch) error, error) {
	inst := e.inst
	var fn reflect.Value
	for _, f := range k.fns {
		if k.matches(f.Type(), inst) {
			fn = f
			break
		}
	}
	if !fn.IsValid() {
		if len(k.fns) == 0 {
			return nil, fmt.Errorf("gokernel: %s: the CPU backend runs the kernel's Go function: make the kernel with New: %w", k.name, gpu.ErrNotSupported)
		}
		return nil, fmt.Errorf("gokernel: %s: no function given to New takes these argument types (%s): pass that instantiation too: %w", k.name, inst.entry, gpu.ErrNotSupported)
	}
	ft := fn.Type()
	return func(l *cpu.Launch) error {
		base := make([]reflect.Value, 1+len(inst.params))
		j := 0
		for i, ip := range inst.params {
			pt := ft.In(1 + i)
			if ip.slice {
				n := int(l.Uint64(j + 1))
				mem := l.Mem(j)
				size := int(pt.Elem().Size())
				if n == 0 || len(mem) == 0 {
					base[1+i] = reflect.MakeSlice(pt, 0, 0)
				} else {
					if len(mem) < n*size {
						return fmt.Errorf("gokernel: %s: argument %s: %d elements past its memory: %w", k.name, ip.name, n, backend.ErrInvalidValue)
					}
					base[1+i] = reflect.NewAt(reflect.ArrayOf(n, pt.Elem()), unsafe.Pointer(&mem[0])).Elem().Slice3(0, n, n).Convert(pt)
				}
				j += 2
				continue
			}
			base[1+i] = scalarValue(l.Args[j].Val, pt)
			j++
		}
		cfg := kern.Config{
			Grid:        kern.Dim{X: int(l.Grid[0]), Y: int(l.Grid[1]), Z: int(l.Grid[2])},
			Block:       kern.Dim{X: int(l.Block[0]), Y: int(l.Block[1]), Z: int(l.Block[2])},
			Cooperative: k.coop,
			Workers:     l.Workers(),
		}
		pool := sync.Pool{New: func() any {
			a := make([]reflect.Value, len(base))
			copy(a, base)
			return &a
		}}
		err := kern.Run(cfg, func(t kern.Thread) {
			p := pool.Get().(*[]reflect.Value)
			(*p)[0] = reflect.ValueOf(t)
			fn.Call(*p)
			pool.Put(p)
		})
		var kf *kern.Fault
		if errors.As(err, &kf) {
			if slot := l.Mem(j); len(slot) >= 4*recWords {
				k.recordCPU(e, slot, kf)
				return nil
			}
			// A plain launch (captured in a graph) has no slot: the failure faults
			// the device, as a failure of an unchecked kernel may on a GPU.
			return fmt.Errorf("%v, in a launch without a check slot (a graph's): %w", k.cpuFault(kf), gpu.ErrLaunchFailed)
		}
		return err
	}, nil
}

// recordCPU records a CPU thread's fault in the launch's check slot as the device
// would: first failure wins.
func (k *Kernel) recordCPU(e *instEntry, slot []byte, kf *kern.Fault) {
	if len(slot) < 4*recWords {
		return
	}
	w := cpu.Slice[uint32](slot[:4*recWords])
	if !atomic.CompareAndSwapUint32(&w[1], 0, 1) {
		return
	}
	e.cpuFaults.Store(uintptr(unsafe.Pointer(&w[0])), k.cpuFault(kf))
	atomic.StoreUint32(&w[0], recCPU)
}

// cpuFault returns the *Fault of a CPU thread's failure.
func (k *Kernel) cpuFault(kf *kern.Fault) *Fault {
	file, line := kf.File, kf.Line
	if file == "" {
		file = k.filename
	}
	return &Fault{Kernel: k.name, File: file, Line: line, Msg: kf.Message(), Block: kf.Block, Thread: kf.Thread}
}

// matches reports whether a Go function's parameter types are the instantiation's.
func (k *Kernel) matches(ft reflect.Type, inst *instance) bool {
	for i, ip := range inst.params {
		rt, want := ft.In(1+i), ip.t
		if ip.slice {
			rt, want = rt.Elem(), sliceElem(ip.t)
		}
		r := reflectTypes[basicOf(want).Kind()]
		if r == nil || r.Kind() != rt.Kind() {
			return false
		}
	}
	return true
}

// scalarValue returns the bits of a scalar argument as a value of type t.
func scalarValue(bits uint64, t reflect.Type) reflect.Value {
	v := reflect.New(t).Elem()
	switch t.Kind() {
	case reflect.Bool:
		v.SetBool(bits&1 != 0)
	case reflect.Int, reflect.Int64:
		v.SetInt(int64(bits))
	case reflect.Int8, reflect.Int16, reflect.Int32:
		v.SetInt(int64(int32(bits)))
	case reflect.Uint, reflect.Uint64, reflect.Uintptr:
		v.SetUint(bits)
	case reflect.Uint8, reflect.Uint16, reflect.Uint32:
		v.SetUint(uint64(uint32(bits)))
	case reflect.Float32:
		v.SetFloat(float64(math.Float32frombits(uint32(bits))))
	case reflect.Float64:
		v.SetFloat(math.Float64frombits(bits))
	}
	return v
}
