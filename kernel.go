package gpu

import (
	"fmt"
	"math"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// Module is a loaded code module (CUDA: PTX text or a cubin).
//
// A nil *Module is never valid: Function and Unload return an error wrapping
// ErrInvalidValue.
type Module struct {
	dev *Device
	be  backend.Module
}

// LoadModule loads a module from PTX text or a cubin or fatbin image (CUDA Driver API:
// cuModuleLoadDataEx; the driver compiles PTX for the device and caches the result on
// disk). A PTX compile error carries the JIT log. On the CPU backend it returns an error
// wrapping ErrNotSupported: write CPU kernels in Go with NewGoFunction.
func (d *Device) LoadModule(image []byte) (*Module, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	if err := d.moduleLoadAllowed(); err != nil {
		return nil, err
	}
	be, err := d.be.LoadModule(image)
	if err != nil {
		return nil, err
	}
	return &Module{dev: d, be: be}, nil
}

// isNil reports a nil module or a zero Module{} (not made by LoadModule), which is one.
func (m *Module) isNil() bool { return m == nil || m.be == nil }

// errNilModule is the error of a nil *Module as the receiver.
var errNilModule = fmt.Errorf("gpu: nil module: %w", ErrInvalidValue)

// Function looks up a kernel of the module by name.
func (m *Module) Function(name string) (*Function, error) {
	if m.isNil() {
		return nil, errNilModule
	}
	f, err := m.be.Function(name)
	if err != nil {
		return nil, err
	}
	return &Function{dev: m.dev, be: f}, nil
}

// Unload unloads the module; its functions can no longer be launched. Unloading a nil
// module is an error wrapping ErrInvalidValue.
func (m *Module) Unload() error {
	if m.isNil() {
		return errNilModule
	}
	return m.be.Unload()
}

// Function is a kernel that can be launched on the device's streams.
//
// A nil *Function is never valid: Stream.Launch refuses it with an error wrapping
// ErrInvalidValue, and its methods, which return no error, return zero values ("" and
// nil).
type Function struct {
	dev *Device
	be  backend.Function
}

// sharedLimits holds, per *Function of the package's generated kernels, the dynamic
// shared memory limit (bytes) raised for it (raiseSharedLimit).
var sharedLimits sync.Map

// raiseSharedLimit lets launches of fn use up to bytes of dynamic shared memory (CUDA
// Driver API: cuFuncSetAttribute, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES),
// once per function and limit; a backend without the setting (the CPU) is left as it
// is. bytes must be at most the device's MaxSharedPerBlock.
func (f *Function) raiseSharedLimit(bytes int) error {
	if v, ok := sharedLimits.Load(f); ok && v.(int) >= bytes {
		return nil
	}
	if bs, ok := f.be.(interface{ SetMaxDynamicShared(int) error }); ok {
		if err := bs.SetMaxDynamicShared(bytes); err != nil {
			return err
		}
	}
	sharedLimits.Store(f, bytes)
	return nil
}

// sharedCarveouts holds, per *Function of the package's generated kernels, the shared
// memory carveout set for it (setCarveout).
var sharedCarveouts sync.Map

// setCarveout asks that launches of fn get pct percent (1 to 100) of a
// multiprocessor's unified L1/shared memory as shared memory, the rest L1, or (0) that
// the driver choose (CUDA Driver API: cuFuncSetAttribute,
// CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, -1 for no preference; a hint),
// once per function and value; a backend without the setting (the CPU) is left as it
// is.
func (f *Function) setCarveout(pct int) error {
	v, ok := sharedCarveouts.Load(f)
	if ok && v.(int) == pct || !ok && pct == 0 {
		return nil
	}
	if bs, ok := f.be.(interface{ SetSharedCarveout(int) error }); ok {
		drv := pct
		if pct == 0 {
			drv = -1
		}
		if err := bs.SetSharedCarveout(drv); err != nil {
			return err
		}
	}
	sharedCarveouts.Store(f, pct)
	return nil
}

// Name returns the kernel's name ("" for a nil or zero function).
func (f *Function) Name() string {
	if f == nil || f.be == nil {
		return ""
	}
	return f.be.Name()
}

// BackendFunction returns the backend's function, for packages that extend the runtime
// (nil for a nil function).
func (f *Function) BackendFunction() backend.Function {
	if f == nil {
		return nil
	}
	return f.be
}

// WrapFunction wraps a backend function of device d.
func WrapFunction(d *Device, f backend.Function) *Function { return &Function{dev: d, be: f} }

// Builtin returns one of the built-in kernels every backend has (see
// backend.Builtins): "empty" serves the launch benchmark, "trap" the fault tests.
func (d *Device) Builtin(name string) (*Function, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	f, err := d.be.Builtin(name)
	if err != nil {
		return nil, err
	}
	return &Function{dev: d, be: f}, nil
}

// NewGoFunction returns a kernel written in Go for a CPU device. fn runs once per
// launch, in stream order, and splits its work with cpu.Launch.Parallel.
func NewGoFunction(d *Device, name string, fn func(*cpu.Launch) error) (*Function, error) {
	if d.isNil() {
		return nil, errNilDevice
	}
	if d.info.Backend != "cpu" {
		return nil, fmt.Errorf("gpu: Go kernels run on the CPU backend, not %s: %w", d.info.Backend, ErrNotSupported)
	}
	if fn == nil {
		// Launching it would fault the device for good (faults are sticky).
		return nil, fmt.Errorf("gpu: Go kernel %q is a nil function: %w", name, ErrInvalidValue)
	}
	return &Function{dev: d, be: cpu.NewFunc(name, fn)}, nil
}

// Dim3 is a grid or block size. X must be at least 1; a zero Y or Z counts as 1.
type Dim3 struct{ X, Y, Z int }

// LaunchConfig is a kernel's launch geometry.
type LaunchConfig struct {
	Grid      Dim3 // blocks
	Block     Dim3 // threads per block
	SharedMem int  // dynamic shared memory in bytes
}

func dims(what string, d Dim3) ([3]uint32, error) {
	var out [3]uint32
	for i, v := range [3]int{d.X, d.Y, d.Z} {
		if v == 0 && i > 0 {
			v = 1
		}
		if v <= 0 || int64(v) > math.MaxUint32 {
			return out, fmt.Errorf("gpu: %s %v: X must be in [1, 2^32), Y and Z in [0, 2^32): %w", what, d, ErrInvalidValue)
		}
		out[i] = uint32(v)
	}
	return out, nil
}

// backend returns the geometry for the backend, or an error for a zero or negative
// dimension or shared memory past 4 GiB.
func (cfg LaunchConfig) backend() (backend.LaunchConfig, error) {
	var bc backend.LaunchConfig
	var err error
	if bc.Grid, err = dims("grid", cfg.Grid); err != nil {
		return bc, err
	}
	if bc.Block, err = dims("block", cfg.Block); err != nil {
		return bc, err
	}
	if cfg.SharedMem < 0 || int64(cfg.SharedMem) > math.MaxUint32 {
		return bc, fmt.Errorf("gpu: shared memory %d bytes: %w", cfg.SharedMem, ErrInvalidValue)
	}
	bc.SharedMem = uint32(cfg.SharedMem)
	return bc, nil
}

// DevicePtr is a raw device address (CUdeviceptr), as handed out inside
// Buffer.Access. Passed to Launch it is an untracked pointer argument.
type DevicePtr uint64

// AccessMode says how an operation uses a buffer.
type AccessMode uint8

const (
	// Read: the operation only reads the buffer.
	Read AccessMode = 1 << iota
	// Write: the operation writes the buffer (and may read it).
	Write
	// ReadWrite: both.
	ReadWrite = Read | Write
)

// valid reports whether m is Read, Write or ReadWrite.
func (m AccessMode) valid() bool { return m != 0 && m&^ReadWrite == 0 }

// String returns "read", "write", "read-write", or "AccessMode(n)" for other values.
func (m AccessMode) String() string {
	switch m {
	case Read:
		return "read"
	case Write:
		return "write"
	case ReadWrite:
		return "read-write"
	}
	return fmt.Sprintf("AccessMode(%d)", uint8(m))
}

// Operand is memory a kernel argument points at: a *Buffer (its first byte) or an
// *Array[T] (its element 0).
type Operand interface {
	ref() (*allocation, int64)
}

func (b *Buffer) ref() (*allocation, int64) {
	if b.isNil() {
		return nil, 0
	}
	return b.a, b.off
}

func (a *Array[T]) ref() (*allocation, int64) {
	if a == nil {
		return nil, 0
	}
	return a.buf.a, a.buf.off + int64(a.off*a.dt.Size())
}

// BufferArg is a buffer or array passed to Launch with its access mode; make one with
// In, Out or InOut. A *Buffer or *Array[T] passed directly counts as InOut. A BufferArg
// is one pointer, to a record its buffer or array keeps, so passing it through Launch's
// ...any allocates nothing.
type BufferArg struct{ r *argRef }

// argRef is an operand's memory and an access mode; lo and n are the bytes it spans
// (n 0: unknown, the whole allocation), for the race checker. keep is the operand's
// buffer, which a BufferArg keeps reachable: a caller's last use of an array may be
// In(x) of a launch's argument, and the garbage collector would otherwise run the
// buffer's cleanup (a free) while the launch is under way.
type argRef struct {
	a     *allocation
	keep  *Buffer
	off   int64
	mode  AccessMode
	lo, n int64
}

// argRefs holds an operand's three argRefs, at index mode-1.
type argRefs [3]argRef

// newArgRefs returns the argRefs of memory at off in a (of buffer keep, nil if not
// known), spanning [lo, lo+n).
func newArgRefs(a *allocation, keep *Buffer, off, lo, n int64) *argRefs {
	return &argRefs{{a, keep, off, Read, lo, n}, {a, keep, off, Write, lo, n}, {a, keep, off, ReadWrite, lo, n}}
}

// cachedArgRefs returns the argRefs kept in p, making them on first use.
func cachedArgRefs(p *atomic.Pointer[argRefs], a *allocation, keep *Buffer, off, lo, n int64) *argRefs {
	if r := p.Load(); r != nil {
		return r
	}
	r := newArgRefs(a, keep, off, lo, n)
	if p.CompareAndSwap(nil, r) {
		return r
	}
	return p.Load()
}

// argCacher is an operand that keeps its argRefs.
type argCacher interface {
	argRefs() *argRefs
}

func (b *Buffer) argRefs() *argRefs {
	if b == nil || b.a == nil {
		return nil
	}
	return cachedArgRefs(&b.args, b.a, b, b.off, b.off, b.size)
}

func (a *Array[T]) argRefs() *argRefs {
	if a == nil || a.buf == nil {
		return nil
	}
	al, off := a.ref()
	lo, n := a.byteSpan()
	return cachedArgRefs(&a.args, al, a.buf, off, lo, n)
}

// byteSpan returns the bytes of its allocation the array's elements span: [lo, lo+n),
// negative strides included (n at least 1).
func (a *Array[T]) byteSpan() (lo, n int64) {
	es := int64(a.dt.Size())
	first, last := int64(a.off), int64(a.off)
	for i, d := range a.shape {
		if d == 0 {
			return a.buf.off + es*int64(a.off), 1
		}
		step := int64(d-1) * int64(a.strides[i])
		if step < 0 {
			first += step
		} else {
			last += step
		}
	}
	return a.buf.off + es*first, es * (last - first + 1)
}

func bufferArg(x Operand, mode AccessMode) BufferArg {
	if x == nil || !mode.valid() {
		return BufferArg{}
	}
	if c, ok := x.(argCacher); ok {
		if r := c.argRefs(); r != nil {
			return BufferArg{&r[mode-1]}
		}
		return BufferArg{}
	}
	a, off := x.ref()
	if a == nil {
		return BufferArg{}
	}
	return BufferArg{&newArgRefs(a, nil, off, 0, 0)[mode-1]}
}

// In marks a kernel argument the kernel only reads.
func In(x Operand) BufferArg { return bufferArg(x, Read) }

// Out marks a kernel argument the kernel writes.
func Out(x Operand) BufferArg { return bufferArg(x, Write) }

// InOut marks a kernel argument the kernel reads and writes.
func InOut(x Operand) BufferArg { return bufferArg(x, ReadWrite) }

// ByValue passes the bytes of v (a struct or array of plain values, no pointers) as one
// by-value kernel parameter.
func ByValue[T any](v T) ByValueArg {
	b := unsafe.Slice((*byte)(unsafe.Pointer(&v)), unsafe.Sizeof(v))
	return ByValueArg(append([]byte(nil), b...))
}

// ByValueArg is a by-value kernel parameter's bytes.
type ByValueArg []byte

// Launch enqueues fn on the stream with the given geometry and arguments. Arguments may
// be Go integers, floats and bools (passed as kernel scalars of their size; int and uint
// are 64-bit), *Buffer and *Array[T] and In/Out/InOut of them (device pointers to the
// buffer's first byte or the array's element 0, ordered across streams automatically:
// see Buffer), DevicePtr (an untracked pointer), and ByValue(struct).
// Errors: a nil stream or function, a zero or negative dimension, an argument of another
// type, a freed buffer, a closed stream, device memory of another device whose memory
// s's device has not been allowed to address (Device.EnablePeerAccess); launch errors
// from the backend.
func (s *Stream) Launch(fn *Function, cfg LaunchConfig, args ...any) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if fn == nil {
		return fmt.Errorf("gpu: launch of a nil function: %w", ErrInvalidValue)
	}
	if fn.dev != s.dev {
		return fmt.Errorf("gpu: launch on %v of a function of another device: %w", s, ErrInvalidValue)
	}
	bc, err := cfg.backend()
	if err != nil {
		return err
	}
	if len(args) == 0 {
		if err := s.hold(); err != nil {
			return err
		}
		defer s.unhold()
		if err := s.be.Launch(fn.be, bc, nil); err != nil {
			return err
		}
		s.enqueued()
		return nil
	}
	ap := argPool.Get().(*[]backend.Arg)
	defer func() {
		clear(*ap)
		*ap = (*ap)[:0]
		argPool.Put(ap)
	}()
	bargs := (*ap)[:0]
	var usesSmall [4]use
	uses := usesSmall[:0]
	var params []paramSlot
	for i, a := range args {
		var ba backend.Arg
		switch v := a.(type) {
		case *Param:
			if v == nil || v.typ == nil {
				return fmt.Errorf("gpu: launch of %s: argument %d: nil Param: %w", fn.Name(), i, ErrInvalidValue)
			}
			ba = v.arg
			params = append(params, paramSlot{i, v})
		case BufferArg:
			ba, uses, err = bufArg(v, uses)
		case Operand:
			ba, uses, err = bufArg(bufferArg(v, ReadWrite), uses)
		case DevicePtr:
			ba = backend.Arg{Kind: backend.ArgPtr, Val: uint64(v)}
			if r := s.dev.race.Load(); r != nil && v != 0 {
				r.rawPointer(s, uint64(v))
			}
		case ByValueArg:
			ba = backend.Arg{Kind: backend.ArgScalar, Size: uint8(min(len(v), 255)), Blob: v}
		default:
			ba, err = scalarArg(a)
		}
		if err != nil {
			return fmt.Errorf("gpu: launch of %s: argument %d: %w", fn.Name(), i, err)
		}
		bargs = append(bargs, ba)
	}
	*ap = bargs
	err = s.launchTracked(fn, bc, bargs, uses, params)
	// The arguments' buffers stay reachable until the launch is tracked: a caller's
	// last use of an array may be this call, and the garbage collector would otherwise
	// run its buffer's cleanup (a free) while the launch is under way.
	runtime.KeepAlive(args)
	return err
}

// launchTracked enqueues a launch whose buffer arguments are uses; params are its Param
// arguments, which a capture remembers (graph.go).
func (s *Stream) launchTracked(fn *Function, bc backend.LaunchConfig, bargs []backend.Arg, uses []use, params []paramSlot) error {
	if err := s.checkPeers(fn, uses); err != nil {
		return err
	}
	var small [4]*allocation
	t, err := s.trackBegin(uses, small[:0])
	if err != nil {
		return err
	}
	if params != nil {
		if d := drawOf(params); d != nil {
			d.resolve(bargs, params, t.cap != nil) // a random fill's seed and offset (random.go)
		}
	}
	err = s.be.Launch(fn.be, bc, bargs)
	if err == nil && t.cap != nil && params != nil {
		// s.cap is t.cap while s is held (EndCapture waits for the holds). Read from s,
		// not t: recordLaunch's receiver leaks, and t holds small, which would then
		// move to the heap on every launch.
		err = s.cap.Load().recordLaunch(s, fn, bc, bargs, params)
	}
	_, err = s.trackEnd(t, err, false)
	return err
}

// launchGeometry returns the backend geometry of gx by gy blocks of block threads, for the
// runtime's own launches (whose sizes are in range by construction: Launch checks a
// user's with LaunchConfig.backend).
func launchGeometry(gx, gy, block int) backend.LaunchConfig {
	return backend.LaunchConfig{Grid: [3]uint32{uint32(gx), uint32(gy), 1}, Block: [3]uint32{uint32(block), 1, 1}}
}

// launchArgs builds a launch's backend arguments and buffer uses directly: the array
// operations' path to launchTracked, with no boxing through Launch's ...any and no
// argRefs. A header's use spans its whole allocation (n 0), as a header passed to
// Launch does. Start with newLaunchArgs, add the arguments in the kernel's order, then
// launch. The uses live in the list (on the caller's stack) up to len(small): an
// argument list that points at them would be moved to the heap with the arguments the
// backend keeps.
type launchArgs struct {
	ap    *[]backend.Arg
	args  []backend.Arg
	small [12]use
	n     int
	more  []use // all the uses, once there are more than len(small)
	// The buffers of buf's and hdr's arguments, kept reachable until the launch is
	// tracked (Launch's runtime.KeepAlive): the first len(keep), the rest in keepMore.
	keep     [12]*Buffer
	nkeep    int
	keepMore []*Buffer
}

// newLaunchArgs returns an empty argument list.
func newLaunchArgs() launchArgs {
	ap := argPool.Get().(*[]backend.Arg)
	return launchArgs{ap: ap, args: (*ap)[:0]}
}

// mem adds a pointer to byte off of allocation a, used as mode (all of a, for the race
// checker).
func (l *launchArgs) mem(a *allocation, off int64, mode AccessMode) { l.span(a, off, mode, 0, 0) }

// span adds a pointer to byte off of allocation a, used as mode over bytes [lo, lo+n)
// (n 0: all of a).
func (l *launchArgs) span(a *allocation, off int64, mode AccessMode, lo, n int64) {
	l.args = append(l.args, backend.Arg{Kind: backend.ArgMem, Mem: a.mem, Off: off})
	u := use{a: a, mode: mode, off: lo, n: n}
	switch {
	case l.more != nil:
		l.more = append(l.more, u)
	case l.n < len(l.small):
		l.small[l.n] = u
		l.n++
	default:
		l.more = make([]use, len(l.small), 2*len(l.small))
		copy(l.more, l.small[:])
		l.more = append(l.more, u)
	}
}

// buf adds a pointer to the buffer's first byte, used as mode over its bytes (as a
// *Buffer passed to Launch is: a slot of a shared block is no race with its neighbours).
func (l *launchArgs) buf(b *Buffer, mode AccessMode) {
	l.hold(b)
	l.span(b.a, b.off, mode, b.off, b.size)
}

// hold keeps b reachable until the launch is tracked.
func (l *launchArgs) hold(b *Buffer) {
	if l.nkeep < len(l.keep) {
		l.keep[l.nkeep] = b
		l.nkeep++
		return
	}
	l.keepMore = append(l.keepMore, b)
}

// hdr adds a pointer to the array's element 0, used as mode.
func (l *launchArgs) hdr(h *header, mode AccessMode) {
	l.hold(h.buf)
	l.mem(h.buf.a, h.buf.off+int64(h.off*h.dt.Size()), mode)
}

// raw adds a pointer to byte off of m, untracked: memory the stream itself owns and
// orders (scratch).
func (l *launchArgs) raw(m backend.Mem, off int64) {
	l.args = append(l.args, backend.Arg{Kind: backend.ArgMem, Mem: m, Off: off})
}

// null adds a null pointer.
func (l *launchArgs) null() { l.args = append(l.args, backend.Arg{Kind: backend.ArgPtr}) }

// u64 adds a 64-bit scalar.
func (l *launchArgs) u64(v uint64) {
	l.args = append(l.args, u64Arg(v))
}

// scalar adds a scalar of size bytes (1 to 8) holding bits.
func (l *launchArgs) scalar(size int, bits uint64) {
	l.args = append(l.args, backend.Arg{Kind: backend.ArgScalar, Size: uint8(size), Val: bits})
}

// launch enqueues fn with the arguments on s and gives the list's storage back.
func (l *launchArgs) launch(s *Stream, fn *Function, cfg backend.LaunchConfig) error {
	uses := l.small[:l.n]
	if l.more != nil {
		uses = l.more
	}
	err := s.launchTracked(fn, cfg, l.args, uses, nil)
	runtime.KeepAlive(l) // (the buffers in l.keep)
	// The pooled slice goes back as it came, cleared (a list that outgrew it drops its
	// larger array): storing l.args through l.ap would move the list to the heap.
	clear(l.args)
	if p := *l.ap; cap(l.args) != cap(p) {
		clear(p[:cap(p)])
	}
	argPool.Put(l.ap)
	l.ap, l.args = nil, nil
	return err
}

func bufArg(b BufferArg, uses []use) (backend.Arg, []use, error) {
	r := b.r
	if r == nil || r.a == nil {
		return backend.Arg{}, uses, fmt.Errorf("nil buffer or array: %w", ErrInvalidValue)
	}
	return backend.Arg{Kind: backend.ArgMem, Mem: r.a.mem, Off: r.off}, append(uses, use{a: r.a, mode: r.mode, off: r.lo, n: r.n}), nil
}

// u64Arg is the 8-byte scalar argument v (a uint64, or an int64's or a float64's bits).
func u64Arg(v uint64) backend.Arg { return backend.Arg{Kind: backend.ArgScalar, Size: 8, Val: v} }

func scalarArg(a any) (backend.Arg, error) {
	switch x := a.(type) {
	case uint64:
		return u64Arg(x), nil
	case uint32:
		return backend.Arg{Kind: backend.ArgScalar, Size: 4, Val: uint64(x)}, nil
	case int64:
		return u64Arg(uint64(x)), nil
	case int:
		return u64Arg(uint64(x)), nil
	case float32:
		return backend.Arg{Kind: backend.ArgScalar, Size: 4, Val: uint64(math.Float32bits(x))}, nil
	case float64:
		return u64Arg(math.Float64bits(x)), nil
	}
	v := reflect.ValueOf(a)
	arg := backend.Arg{Kind: backend.ArgScalar}
	switch v.Kind() {
	case reflect.Bool:
		arg.Size = 1
		if v.Bool() {
			arg.Val = 1
		}
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int:
		arg.Size = uint8(v.Type().Size())
		arg.Val = uint64(v.Int())
		if arg.Size < 8 {
			arg.Val &= 1<<(8*arg.Size) - 1
		}
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Uintptr:
		arg.Size = uint8(v.Type().Size())
		arg.Val = v.Uint()
	case reflect.Float32:
		arg.Size = 4
		arg.Val = uint64(math.Float32bits(float32(v.Float())))
	case reflect.Float64:
		arg.Size = 8
		arg.Val = math.Float64bits(v.Float())
	default:
		return arg, fmt.Errorf("unsupported kernel argument type %T: %w", a, ErrInvalidValue)
	}
	return arg, nil
}
