package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"gonum.org/v1/gonum/mat"
)

// The library's rule is that bad input gets an error, never a panic. These tests give
// every exported function and method of the package that takes a *Stream (as receiver
// or argument) a nil stream, and every one that takes a context.Context a nil context,
// with every other argument valid, and expect an error wrapping ErrInvalidValue that
// names the bad input; the same for nil receivers: every exported method of the
// package's exported pointer types, called on a nil receiver with every other argument
// valid, returns an error wrapping ErrInvalidValue that names the type ("nil array",
// "nil buffer", ...), or, if it returns no error, a zero value. TestNilStreamCoversAPI,
// TestNilContextCoversAPI and TestNilReceiverCoversAPI parse the package and fail for an
// exported function or method missing from these lists, so that the rule stays true for
// later additions.

// Nil arguments of the runtime calls give an error wrapping ErrInvalidValue, never a
// panic.
func TestNilInputs(t *testing.T) {
	d, _ := freshCPU(t)
	s, _ := d.NewStream()
	defer s.Close()
	b, _ := d.Alloc(64)
	defer b.Free()
	e, _ := d.NewEvent()
	defer e.Close()
	ctx := context.Background()
	checkNilCases(t, "nil argument", []nilCase{
		{"Record(nil)", func() error { return s.Record(nil) }},
		{"WaitEvent(nil)", func() error { return s.WaitEvent(nil) }},
		{"Elapsed(nil, e)", func() error { return e1(gpu.Elapsed(nil, e)) }},
		{"Elapsed(e, nil)", func() error { return e1(gpu.Elapsed(e, nil)) }},
		{"CopyHtoD(nil)", func() error { return s.CopyHtoD(nil, []byte{1}) }},
		{"CopyDtoH(nil)", func() error { return s.CopyDtoH([]byte{1}, nil) }},
		{"CopyDtoD(nil, b)", func() error { return s.CopyDtoD(nil, b) }},
		{"Memset(nil)", func() error { return s.Memset(nil, 1) }},
		{"CopyFrom(nil)", func() error { return b.CopyFrom(ctx, nil) }},
		{"Launch(zero Function)", func() error {
			return s.Launch(&gpu.Function{}, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}})
		}},
		{"Access nil func", func() error { return b.Access(s, gpu.Read, nil) }},
		{"HostAccess nil func", func() error { return b.HostAccess(ctx, gpu.Read, nil) }},
		{"ArrayOf(nil)", func() error { return e1(gpu.ArrayOf[float32](nil, 2)) }},
		{"NewDevice(nil)", func() error { return e1(gpu.NewDevice(nil)) }},
	}, "")
	// Zero values (not made by the package) are nil ones.
	zb, ze, zd := &gpu.Buffer{}, &gpu.Event{}, &gpu.Device{}
	checkNilCases(t, "zero argument", []nilCase{
		{"Record(zero)", func() error { return s.Record(ze) }},
		{"WaitEvent(zero)", func() error { return s.WaitEvent(ze) }},
		{"Elapsed(zero, e)", func() error { return e1(gpu.Elapsed(ze, e)) }},
		{"Elapsed(e, zero)", func() error { return e1(gpu.Elapsed(e, ze)) }},
		{"CopyHtoD(zero)", func() error { return s.CopyHtoD(zb, nil) }},
		{"CopyDtoH(zero)", func() error { return s.CopyDtoH(nil, zb) }},
		{"CopyDtoD(zero, zero)", func() error { return s.CopyDtoD(zb, zb) }},
		{"CopyDtoD(b, zero)", func() error { return s.CopyDtoD(b, zb) }},
		{"Memset(zero)", func() error { return s.Memset(zb, 1) }},
		{"MemsetD32(zero)", func() error { return s.MemsetD32(zb, 1) }},
		{"CopyFrom(zero)", func() error { return b.CopyFrom(ctx, zb) }},
		{"ArrayOf(zero)", func() error { return e1(gpu.ArrayOf[float32](zb)) }},
		{"CanAccessPeer(zero)", func() error { return e1(d.CanAccessPeer(zd)) }},
		{"EnablePeerAccess(zero)", func() error { return d.EnablePeerAccess(zd) }},
		{"NewGoFunction(zero)", func() error {
			return e1(gpu.NewGoFunction(zd, "f", func(*cpu.Launch) error { return nil }))
		}},
		{"Launch(zero Param)", func() error {
			fn, err := d.Builtin("empty")
			if err != nil {
				return err
			}
			return s.Launch(fn, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}, &gpu.Param{})
		}},
	}, "nil")
}

// TestNilArrays: a nil array argument is an error wrapping ErrInvalidValue, not a panic.
func TestNilArrays(t *testing.T) {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	var nilA *gpu.Array[float32]
	x := mustArr[float32](t)(gpu.FromSlice(s, []float32{1, 2, 3}))
	defer x.Free()
	k := gpu.NewKernel[float32]("x + y", "x", "y")
	checkNilCases(t, "nil array", []nilCase{
		{"Eval", func() error { return e1(gpu.Eval[float32](s, "x + y", gpu.Vars{"x": x, "y": nilA})) }},
		{"Sum", func() error { return e1(gpu.Sum[float32](s, nilA)) }},
		{"ArgMax", func() error { return e1(gpu.ArgMax(s, nilA)) }},
		{"CumSum", func() error { return e1(gpu.CumSum[float32](s, nilA, 0)) }},
		{"Nonzero", func() error { return e1(gpu.Nonzero(context.Background(), s, nilA)) }},
		{"Permute", func() error { return e1(gpu.Permute(s, nilA, 0)) }},
		{"Copy", func() error { return gpu.Copy(s, nilA, x) }},
		{"Fill", func() error { return gpu.Fill(s, nilA, 1) }},
		{"RandInto", func() error { return gpu.RandInto(s, gpu.NewGenerator(1), nilA) }},
		{"Kernel.Into", func() error { return k.Into(s, x, x, nilA) }},
		{"Kernel.Eval", func() error { return e1(k.Eval(s, nilA, x)) }},
	}, "nil")
	if _, err := k.Eval(s, x, x); err != nil { // the kernel still works
		t.Errorf("Kernel.Eval after a nil operand: %v", err)
	}
	checkNilCases(t, "nil array", []nilCase{{"Kernel.Into, a cached plan", func() error { return k.Into(s, x, x, nilA) }}}, "nil")
}

// nilRecvCases returns the calls of methods that return an error, on nil receivers. The
// array methods are called on a nil *Array and on a zero Array (no buffer), which is
// also a nil array; with zero, the device, buffer, event, module and graph are zero
// values (not made by the package), which are nil ones too.
func nilRecvCases(f *nilFixture, zero bool) []nilCase {
	ctx := context.Background()
	var (
		d  *gpu.Device
		b  *gpu.Buffer
		ev *gpu.Event
		m  *gpu.Module
		k  *gpu.Kernel[float32]
		g  *gpu.Generator
	)
	var gr *gpu.Graph
	if zero {
		d, b, ev, m, gr = &gpu.Device{}, &gpu.Buffer{}, &gpu.Event{}, &gpu.Module{}, &gpu.Graph{}
	}
	cases := []nilCase{
		// Generator.
		{"Generator.SetState", func() error { return g.SetState(1, 2) }},

		// Graph.
		{"Graph.Launch", func() error { return gr.Launch(f.s) }},
		{"Graph.Close", func() error { return gr.Close() }},
		{"Graph.SetParam", func() error { return gr.SetParam(nil, 1) }},
		{"Device.AdoptStream", func() error { return e1(d.AdoptStream(0)) }},

		// Buffer.
		{"Buffer.Access", func() error {
			return b.Access(f.s, gpu.ReadWrite, func(gpu.DevicePtr) error {
				return errors.New("Access ran its function on a nil buffer")
			})
		}},
		{"Buffer.CopyFrom", func() error { return b.CopyFrom(ctx, f.buf) }},
		{"Buffer.CopyFromHost", func() error { return b.CopyFromHost(ctx, f.host) }},
		{"Buffer.CopyToHost", func() error { return b.CopyToHost(ctx, f.host) }},
		{"Buffer.Free", func() error { return b.Free() }},
		{"Buffer.HostAccess", func() error {
			return b.HostAccess(ctx, gpu.Read, func([]byte) error {
				return errors.New("HostAccess ran its function on a nil buffer")
			})
		}},
		{"Buffer.SetTracking", func() error { return b.SetTracking(false) }},
		{"Buffer.Slice", func() error { return e1(b.Slice(0, 8)) }},

		// Device.
		{"Device.Alloc", func() error { return e1(d.Alloc(16)) }},
		{"Device.AllocPinned", func() error { return e1(d.AllocPinned(16)) }},
		{"Device.AllocUnified", func() error { return e1(d.AllocUnified(16)) }},
		{"Device.Builtin", func() error { return e1(d.Builtin("empty")) }},
		{"Device.CanAccessPeer", func() error { return e1(d.CanAccessPeer(f.d)) }},
		{"Device.EnablePeerAccess", func() error { return d.EnablePeerAccess(f.d) }},
		{"Device.Err", func() error { return d.Err() }},
		{"Device.LoadModule", func() error { return e1(d.LoadModule([]byte(".version 8.0\n"))) }},
		{"Device.MemInfo", func() error { return e2(d.MemInfo()) }},
		{"Device.NewEvent", func() error { return e1(d.NewEvent()) }},
		{"Device.NewEvent", func() error { return e1(d.NewEvent(gpu.DisableTiming)) }},
		{"Device.NewStream", func() error { return e1(d.NewStream()) }},
		{"Device.Synchronize", func() error { return d.Synchronize(ctx) }},
		{"Device.Synchronize", func() error { return d.Synchronize(ctx, gpu.WaitPolicy{Mode: gpu.WaitBlock}) }},
		{"Device.SetTuning", func() error { return e1(d.SetTuning(gpu.DefaultTuning())) }},
		{"Device.TrimMemory", func() error { return d.TrimMemory(ctx) }},
		{"Device.MatMulLibrary", func() error { return e1(d.MatMulLibrary()) }},
		{"Device.SetFloat32MatMulPrecision", func() error { return d.SetFloat32MatMulPrecision(gpu.PrecisionHigh) }},

		// Event.
		{"Event.Close", func() error { return ev.Close() }},
		{"Event.Query", func() error { return e1(ev.Query()) }},
		{"Event.Wait", func() error { return ev.Wait(ctx) }},
		{"Event.Wait", func() error { return ev.Wait(ctx, gpu.WaitPolicy{Mode: gpu.WaitSpin}) }},

		// Module.
		{"Module.Function", func() error { return e1(m.Function("empty")) }},
		{"Module.Unload", func() error { return m.Unload() }},

		// Kernel.
		{"Kernel.Into", func() error { return k.Into(f.s, f.out, f.a) }},
		{"Kernel.Eval", func() error { return e1(k.Eval(f.s, f.a)) }},
		{"Kernel.Eval", func() error { return e1((*gpu.Kernel[int64])(nil).Eval(f.s, f.ai)) }},
	}
	for _, a := range []*gpu.Array[float32]{nil, {}} {
		cases = append(cases, []nilCase{
			{"Array.At", func() error { return e1(a.At(ctx, 1, 2)) }},
			{"Array.At", func() error { return e1(a.At(ctx)) }},
			{"Array.BroadcastTo", func() error { return e1(a.BroadcastTo(2, 3)) }},
			{"Array.CopyFromHost", func() error { return a.CopyFromHost(ctx, f.hostF32) }},
			{"Array.CopyFromHost", func() error { return a.CopyFromHost(ctx, nil) }},
			{"Array.CopyToHost", func() error { return a.CopyToHost(ctx, f.hostF32) }},
			{"Array.CopyToHost", func() error { return a.CopyToHost(ctx, nil) }},
			{"Array.Free", func() error { return a.Free() }},
			{"Array.Reshape", func() error { return e1(a.Reshape(3, 2)) }},
			{"Array.Reshape", func() error { return e1(a.Reshape(-1)) }},
			{"Array.Set", func() error { return a.Set(ctx, 1, 1, 2) }},
			{"Array.Slice", func() error { return e1(a.Slice(gpu.R(0, 1))) }},
			{"Array.Slice", func() error { return e1(a.Slice()) }},
			{"Array.ToSlice", func() error { return e1(a.ToSlice(ctx)) }},
			{"Array.Text", func() error { return e1(a.Text(ctx)) }},
			{"Array.Transpose", func() error { return e1(a.Transpose()) }},
			{"Array.Transpose", func() error { return e1(a.Transpose(1, 0)) }},
			{"Array.Squeeze", func() error { return e1(a.Squeeze()) }},
			{"Array.ExpandDims", func() error { return e1(a.ExpandDims(0)) }},
			{"Array.Flip", func() error { return e1(a.Flip()) }},
			{"Array.Split", func() error { return e1(a.Split(2, 0)) }},
			{"Array.ArraySplit", func() error { return e1(a.ArraySplit(2, 0)) }},
			{"Array.SplitAt", func() error { return e1(a.SplitAt(0, 1)) }},
		}...)
	}
	// Another instantiation of the generic methods.
	var ai *gpu.Array[int32]
	cases = append(cases, []nilCase{
		{"Array.At", func() error { return e1(ai.At(ctx, 0)) }},
		{"Array.Set", func() error { return ai.Set(ctx, 7, 0) }},
		{"Array.Free", func() error { return ai.Free() }},
		{"Array.Reshape", func() error { return e1(ai.Reshape(6)) }},
		{"Array.ToSlice", func() error { return e1(ai.ToSlice(ctx)) }},
	}...)
	return cases
}

// isZero returns an error unless got is the zero value of its type.
func isZero[T any](what string, got T) error {
	if !reflect.ValueOf(&got).Elem().IsZero() {
		var zero T
		return fmt.Errorf("%s = %v, want %v", what, got, zero)
	}
	return nil
}

// is returns an error unless got == want.
func is[T comparable](what string, got, want T) error {
	if got != want {
		return fmt.Errorf("%s = %v, want %v", what, got, want)
	}
	return nil
}

// nilRecvNoError returns the calls of methods that return no error, on nil receivers
// (zero values of the device, buffer, event, function and graph with zero): each returns
// an error if the method's result isn't the documented zero value.
func nilRecvNoError(zero bool) []nilCase {
	var (
		d  *gpu.Device
		b  *gpu.Buffer
		ev *gpu.Event
		fn *gpu.Function
		g  *gpu.Generator
		gr *gpu.Graph
		p  *gpu.Param
	)
	if zero {
		d, b, ev, fn, gr, p = &gpu.Device{}, &gpu.Buffer{}, &gpu.Event{}, &gpu.Function{}, &gpu.Graph{}, &gpu.Param{}
	}
	cases := []nilCase{
		// Param.
		{"Param.Type", func() error { return isZero("Type()", p.Type()) }},

		// Graph.
		{"Graph.String", func() error {
			return errors.Join(is("String()", gr.String(), "<nil graph>"), is("fmt.Sprint", fmt.Sprint(gr), "<nil graph>"))
		}},

		// Buffer.
		{"Buffer.BackendMem", func() error {
			mem, off := b.BackendMem()
			return errors.Join(isZero("BackendMem's memory", mem), is("BackendMem's offset", off, 0))
		}},
		{"Buffer.Device", func() error { return isZero("Device()", b.Device()) }},
		{"Buffer.Kind", func() error { return is("Kind()", b.Kind(), gpu.DeviceMem) }},
		{"Buffer.Offset", func() error { return is("Offset()", b.Offset(), 0) }},
		{"Buffer.Size", func() error { return is("Size()", b.Size(), 0) }},

		// Device.
		{"Device.Backend", func() error { return is("Backend()", d.Backend(), "") }},
		{"Device.BackendDevice", func() error { return isZero("BackendDevice()", d.BackendDevice()) }},
		{"Device.DefaultStream", func() error { return isZero("DefaultStream()", d.DefaultStream()) }},
		{"Device.Info", func() error { return isZero("Info()", d.Info()) }},
		{"Device.SetWaitPolicy", func() error {
			d.SetWaitPolicy(gpu.WaitPolicy{Mode: gpu.WaitSpin})
			return nil
		}},
		{"Device.String", func() error {
			return errors.Join(is("String()", d.String(), "<nil device>"), is("fmt.Sprint", fmt.Sprint(d), "<nil device>"))
		}},
		{"Device.Tuning", func() error { return isZero("Tuning()", d.Tuning()) }},
		{"Device.WaitPolicy", func() error { return isZero("WaitPolicy()", d.WaitPolicy()) }},
		{"Device.RaceCheck", func() error { return is("RaceCheck()", d.RaceCheck(), false) }},
		{"Device.SetRaceCheck", func() error { d.SetRaceCheck(true); return nil }},
		{"Device.SetRaceHandler", func() error { d.SetRaceHandler(nil); return nil }},
		{"RaceReport.Error", func() error {
			return is("Error()", (*gpu.RaceReport)(nil).Error(), "<nil race report>")
		}},
		{"RaceReport.Unwrap", func() error { return is("Unwrap()", (*gpu.RaceReport)(nil).Unwrap(), gpu.ErrRace) }},
		{"Device.Float32MatMulPrecision", func() error {
			return is("Float32MatMulPrecision()", d.Float32MatMulPrecision(), gpu.PrecisionHighest)
		}},

		// Event.
		{"Event.Device", func() error { return isZero("Device()", ev.Device()) }},
		{"Event.Done", func() error {
			select {
			case <-ev.Done():
				return nil
			default:
				return errors.New("Done() of a nil event isn't closed")
			}
		}},

		// Function.
		{"Function.BackendFunction", func() error { return isZero("BackendFunction()", fn.BackendFunction()) }},
		{"Function.Name", func() error { return is("Name()", fn.Name(), "") }},

		// UniqueResult.
		{"UniqueResult.Free", func() error {
			(*gpu.UniqueResult[float32])(nil).Free()
			(&gpu.UniqueResult[int64]{}).Free()
			return nil
		}},

		// Generator.
		{"Generator.State", func() error {
			seed, offset := g.State()
			return errors.Join(is("State's seed", seed, 0), is("State's offset", offset, 0))
		}},
	}
	for _, a := range []*gpu.Array[float32]{nil, {}} {
		cases = append(cases, []nilCase{
			{"Array.Buffer", func() error { return isZero("Buffer()", a.Buffer()) }},
			{"Array.DType", func() error { return is("DType()", a.DType(), dtype.Invalid) }},
			{"Array.Device", func() error { return isZero("Device()", a.Device()) }},
			{"Array.IsContiguous", func() error { return is("IsContiguous()", a.IsContiguous(), false) }},
			{"Array.Ndim", func() error { return is("Ndim()", a.Ndim(), 0) }},
			{"Array.Offset", func() error { return is("Offset()", a.Offset(), 0) }},
			{"Array.Shape", func() error { return isZero("Shape()", a.Shape()) }},
			{"Array.Size", func() error { return is("Size()", a.Size(), 0) }},
			{"Array.Strides", func() error { return isZero("Strides()", a.Strides()) }},
			{"Array.String", func() error {
				return errors.Join(is("String()", a.String(), "<nil array>"), is("fmt.Sprint", fmt.Sprint(a), "<nil array>"))
			}},
			{"Array.Format", func() error {
				return is("fmt.Sprintf", fmt.Sprintf("%v %+v %#v %.2f", a, a, a, a), "<nil array> <nil array> <nil array> <nil array>")
			}},
		}...)
	}
	var ab *gpu.Array[bool]
	cases = append(cases, []nilCase{
		{"Array.Size", func() error { return is("Size() of a nil bool array", ab.Size(), 0) }},
		{"Array.String", func() error { return is("String() of a nil bool array", ab.String(), "<nil array>") }},
	}...)
	return cases
}

// nilRecvWant is what the error of a method of typ on a nil receiver says.
func nilRecvWant(name string) string {
	typ, _, _ := strings.Cut(name, ".")
	return "nil " + strings.ToLower(typ)
}

// TestNilReceiver calls every method on nil receivers, then on zero values.
func TestNilReceiver(t *testing.T) {
	f := newNilFixture(t)
	for _, zero := range []bool{false, true} {
		recv := "nil receiver"
		if zero {
			recv = "zero value"
		}
		checkNilCasesWant(t, recv, nilRecvCases(f, zero), nilRecvWant)
		checkNoErrorCases(t, recv, nilRecvNoError(zero))
	}
	// The valid arguments are still usable, and their contents unchanged.
	ctx := context.Background()
	if got, err := f.a.ToSlice(ctx); err != nil || !slices.Equal(got, []float32{0, 1, 2, 0, 4, 5}) {
		t.Errorf("a after the nil-receiver calls: %v, %v", got, err)
	}
	if got, err := f.out.ToSlice(ctx); err != nil || !slices.Equal(got, make([]float32, 6)) {
		t.Errorf("out after the nil-receiver calls: %v, %v", got, err)
	}
	if err := f.buf.CopyFrom(ctx, f.buf2); err != nil {
		t.Errorf("Buffer.CopyFrom after the nil-receiver calls: %v", err)
	}
	if err := f.d.Synchronize(ctx); err != nil {
		t.Errorf("Device.Synchronize after the nil-receiver calls: %v", err)
	}
}

// TestNilReceiverChain: the nil array of a failed call, used on, gives errors.
func TestNilReceiverChain(t *testing.T) {
	f := newNilFixture(t)
	r, err := f.a.Reshape(4, 2) // 6 elements: fails
	if !errors.Is(err, gpu.ErrInvalidValue) || r != nil {
		t.Fatalf("Reshape(4, 2) of 6 elements = %v, %v; want nil, ErrInvalidValue", r, err)
	}
	if b, err := r.BroadcastTo(3, 4, 2); !errors.Is(err, gpu.ErrInvalidValue) || b != nil {
		t.Errorf("BroadcastTo of the failed Reshape = %v, %v; want nil, ErrInvalidValue", b, err)
	}
	if err := r.Free(); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Free of the failed Reshape = %v, want ErrInvalidValue", err)
	}
	if _, err := gpu.Sum[float32](f.s, r); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Sum of the failed Reshape = %v, want ErrInvalidValue", err)
	}
	if s, n, str := r.Shape(), r.Size(), fmt.Sprint(r); s != nil || n != 0 || str != "<nil array>" {
		t.Errorf("the failed Reshape: Shape %v, Size %d, %q", s, n, str)
	}
	var m *gpu.Module
	fn, err := m.Function("k")
	if !errors.Is(err, gpu.ErrInvalidValue) || fn != nil {
		t.Errorf("Function of a nil module = %v, %v", fn, err)
	}
	if err := f.s.Launch(fn, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("Launch of the nil function = %v, want ErrInvalidValue", err)
	}
	if _, err := gpu.NewGoFunction(nil, "k", nil); !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("NewGoFunction on a nil device = %v, want ErrInvalidValue", err)
	}
}

// ptrMethods lists the exported methods of the package's exported types that have a
// pointer receiver, generic types included, as "Type.Method".
func ptrMethods(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, fd := range exportedFuncs(t) {
		rt, ptr := recvType(fd)
		if fd.Recv == nil || !ptr {
			continue // a function, or a value receiver, which can't be nil
		}
		if rt == "" {
			t.Fatalf("%s: receiver type not understood", fd.Name.Name)
		}
		if ast.IsExported(rt) {
			names = append(names, rt+"."+fd.Name.Name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func TestNilReceiverCoversAPI(t *testing.T) {
	api := ptrMethods(t)
	for _, name := range []string{"Array.Reshape", "Array.Free", "Kernel.Into", "Buffer.Free", "Device.Alloc", "Event.Done", "Stream.Launch"} {
		if !slices.Contains(api, name) {
			t.Fatalf("the parse missed %s (generic receivers?): %v", name, api)
		}
	}
	if len(api) < 75 {
		t.Fatalf("found only %d methods with pointer receivers: %v", len(api), api)
	}
	covered := map[string]bool{}
	for _, cs := range [][]nilCase{nilRecvCases(&nilFixture{}, false), nilRecvNoError(false)} {
		for _, c := range cs {
			if strings.HasPrefix(c.name, "Stream.") {
				t.Errorf("nilrecv_test.go has a case for %s: *Stream's belong in nilstream_test.go", c.name)
			}
			covered[c.name] = true
		}
	}
	// Stream's methods on a nil receiver are called by nilstream_test.go.
	for _, cs := range [][]nilCase{nilStreamCases(&nilFixture{}, nil), nilStreamNoError} {
		for _, c := range cs {
			if strings.HasPrefix(c.name, "Stream.") {
				covered[c.name] = true
			}
		}
	}
	for _, name := range api {
		if !covered[name] {
			t.Errorf("%s isn't called on a nil receiver in nilrecv_test.go (or nilstream_test.go for *Stream): add a case", name)
		}
		delete(covered, name)
	}
	for name := range covered {
		t.Errorf("nilrecv_test.go has a case for %s, which isn't an exported method with a pointer receiver (renamed?)", name)
	}
}

// nilCase is one call with a nil stream or context.
type nilCase struct {
	name string // the function, or Type.Method, as apiWith lists them
	call func() error
}

// e1 and e2 keep the error of a call returning one or two values besides it.
func e1[T any](_ T, err error) error { return err }

func e2[T, U any](_ T, _ U, err error) error { return err }

// nilFixture holds valid arguments, made on a CPU device.
type nilFixture struct {
	d          *gpu.Device
	s          *gpu.Stream // a valid stream, for the setup and the nil-context calls
	a, b, out  *gpu.Array[float32]
	out0       *gpu.Array[float32] // 0-d: the result of a full reduction
	empty      *gpu.Array[float32] // no elements: operations with nothing to do
	strided    *gpu.Array[float32] // a non-contiguous view of a's shape
	ai, outI   *gpu.Array[int32]
	mask       *gpu.Array[bool]
	buf, buf2  *gpu.Buffer
	ev         *gpu.Event
	fn         *gpu.Function
	g          *gpu.Generator
	k          *gpu.Kernel[float32]
	host       []byte
	hostF32    []float32
	ranScopeFn func(gpu.DevicePtr) error
	graph      *gpu.Graph
}

func newNilFixture(t *testing.T) *nilFixture {
	t.Helper()
	d, err := gpu.OpenBackend("cpu", 0)
	if err != nil {
		t.Fatal(err)
	}
	s, err := d.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	f := &nilFixture{d: d, s: s, g: gpu.NewGenerator(1), host: make([]byte, 16), hostF32: make([]float32, 6)}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	f32 := func(a *gpu.Array[float32], err error) *gpu.Array[float32] { must(err); return a }
	f.a = f32(gpu.FromSlice(s, []float32{0, 1, 2, 0, 4, 5}, 2, 3))
	f.b = f32(gpu.FromSlice(s, []float32{1, 1, 1, 2, 2, 2}, 2, 3))
	f.out = f32(gpu.Zeros[float32](s, 2, 3))
	f.out0 = f32(gpu.Zeros[float32](s))
	f.empty = f32(gpu.Empty[float32](s, 0, 3))
	wide := f32(gpu.Zeros[float32](s, 3, 2))
	f.strided, err = wide.Transpose()
	must(err)
	if f.strided.IsContiguous() {
		t.Fatal("the strided view is contiguous")
	}
	f.ai, err = gpu.FromSlice(s, []int32{3, 0, 1, 2, 0, 7}, 2, 3)
	must(err)
	f.outI, err = gpu.Zeros[int32](s, 2, 3)
	must(err)
	f.mask, err = gpu.FromSlice(s, []bool{true, false, true, false, true, false}, 2, 3)
	must(err)
	f.buf, err = s.Alloc(16)
	must(err)
	f.buf2, err = s.Alloc(16)
	must(err)
	f.ev, err = d.NewEvent()
	must(err)
	must(s.Record(f.ev))
	f.fn, err = d.Builtin("empty")
	must(err)
	f.k = gpu.NewKernel[float32]("x + 1", "x")
	f.graph, err = s.Capture(func() error { return s.MemsetD32(f.buf2, 0) })
	must(err)
	f.ranScopeFn = func(gpu.DevicePtr) error {
		t.Error("Buffer.Access ran its function on a nil stream")
		return nil
	}
	must(s.Synchronize(context.Background()))
	t.Cleanup(func() {
		for _, a := range []*gpu.Array[float32]{f.a, f.b, f.out, f.out0, f.empty, wide} {
			a.Free()
		}
		f.ai.Free()
		f.outI.Free()
		f.mask.Free()
		f.buf.Free()
		f.buf2.Free()
		f.ev.Close()
		f.graph.Close()
	})
	return f
}

// nilStreamCases returns the calls with a nil stream: a representative instantiation of
// each generic function, and more than one call where a function takes different paths
// (no elements, a non-contiguous operand, an operand already contiguous).
//
// s is the bad stream: nil, or a zero Stream (TestZeroStream).
func nilStreamCases(f *nilFixture, s *gpu.Stream) []nilCase {
	ctx := context.Background()
	a, b, out, out0, empty, strided := f.a, f.b, f.out, f.out0, f.empty, f.strided
	g := f.g
	x := gpu.Vars{"x": a}
	cfg := gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: 1}}
	return []nilCase{
		// Construction and copies.
		{"Empty", func() error { return e1(gpu.Empty[float32](s, 2, 3)) }},
		{"Empty", func() error { return e1(gpu.Empty[int64](s)) }},
		{"Zeros", func() error { return e1(gpu.Zeros[float32](s, 2, 3)) }},
		{"Ones", func() error { return e1(gpu.Ones[int32](s, 4)) }},
		{"Full", func() error { return e1(gpu.Full[float64](s, 2.5, 3)) }},
		{"Fill", func() error { return gpu.Fill(s, out, 1) }},
		{"Fill", func() error { return gpu.Fill(s, f.outI, 7) }},
		{"Fill", func() error { return gpu.Fill(s, empty, 1) }},
		{"FromSlice", func() error { return e1(gpu.FromSlice(s, []float32{1, 2, 3})) }},
		{"FromSlice", func() error { return e1(gpu.FromSlice(s, []int8{})) }},
		{"FromBits", func() error { return e1(gpu.FromBits[gpu.BFloat16](s, []uint16{0x3f80})) }},
		{"Contiguous", func() error { return e1(gpu.Contiguous(s, a)) }},
		{"Contiguous", func() error { return e1(gpu.Contiguous(s, strided)) }},
		{"Clone", func() error { return e1(gpu.Clone(s, a)) }},
		{"Copy", func() error { return gpu.Copy(s, out, a) }},
		{"Copy", func() error { return gpu.Copy(s, strided, a) }},
		{"Copy", func() error { return gpu.Copy(s, empty, empty) }},
		{"Astype", func() error { return e1(gpu.Astype[int64](s, a)) }},
		{"Arange", func() error { return e1(gpu.Arange[float32](s, 0, 10, 1)) }},
		{"Arange", func() error { return e1(gpu.Arange[int32](s, 0, 10, 3)) }},
		{"Linspace", func() error { return e1(gpu.Linspace[float64](s, 0, 1, 5)) }},

		// Elementwise.
		{"Eval", func() error { return e1(gpu.Eval[float32](s, "a*x + b", gpu.Vars{"a": 2.0, "x": a, "b": 1.0})) }},
		{"Eval", func() error { return e1(gpu.Eval[int64](s, "i", gpu.Vars{"i": gpu.LinearIndex})) }},
		{"EvalInto", func() error { return gpu.EvalInto(s, out, "x + y", gpu.Vars{"x": a, "y": b}) }},
		{"EvalInto", func() error { return gpu.EvalInto(s, strided, "x * 2", x) }},
		{"EvalInto", func() error { return gpu.EvalInto(s, empty, "x", gpu.Vars{"x": empty}) }},
		{"Kernel.Into", func() error { return f.k.Into(s, out, a) }},
		{"Kernel.Eval", func() error { return e1(f.k.Eval(s, a)) }},
		{"Add", func() error { return e1(gpu.Add(s, a, b)) }},
		{"Subtract", func() error { return e1(gpu.Subtract(s, a, b)) }},
		{"Multiply", func() error { return e1(gpu.Multiply(s, a, b)) }},
		{"Divide", func() error { return e1(gpu.Divide(s, a, b)) }},
		{"FloorDivide", func() error { return e1(gpu.FloorDivide(s, a, b)) }},
		{"Remainder", func() error { return e1(gpu.Remainder(s, a, b)) }},
		{"Power", func() error { return e1(gpu.Power(s, a, b)) }},
		{"Minimum", func() error { return e1(gpu.Minimum(s, a, b)) }},
		{"Maximum", func() error { return e1(gpu.Maximum(s, a, b)) }},
		{"Negative", func() error { return e1(gpu.Negative(s, a)) }},
		{"Absolute", func() error { return e1(gpu.Absolute(s, f.ai)) }},
		{"Sqrt", func() error { return e1(gpu.Sqrt(s, a)) }},
		{"Exp", func() error { return e1(gpu.Exp(s, a)) }},
		{"Log", func() error { return e1(gpu.Log(s, a)) }},
		{"Sin", func() error { return e1(gpu.Sin(s, a)) }},
		{"Cos", func() error { return e1(gpu.Cos(s, a)) }},
		{"Tan", func() error { return e1(gpu.Tan(s, a)) }},
		{"Tanh", func() error { return e1(gpu.Tanh(s, a)) }},
		{"Floor", func() error { return e1(gpu.Floor(s, a)) }},
		{"Ceil", func() error { return e1(gpu.Ceil(s, a)) }},
		{"Equal", func() error { return e1(gpu.Equal(s, a, b)) }},
		{"NotEqual", func() error { return e1(gpu.NotEqual(s, a, b)) }},
		{"Less", func() error { return e1(gpu.Less(s, a, b)) }},
		{"LessEqual", func() error { return e1(gpu.LessEqual(s, a, b)) }},
		{"Greater", func() error { return e1(gpu.Greater(s, a, b)) }},
		{"GreaterEqual", func() error { return e1(gpu.GreaterEqual(s, a, b)) }},
		{"LogicalAnd", func() error { return e1(gpu.LogicalAnd(s, f.mask, f.mask)) }},
		{"LogicalOr", func() error { return e1(gpu.LogicalOr(s, f.mask, f.mask)) }},
		{"LogicalNot", func() error { return e1(gpu.LogicalNot(s, f.mask)) }},
		{"Where", func() error { return e1(gpu.Where(s, f.mask, a, b)) }},

		// Permutation.
		{"Permute", func() error { return e1(gpu.Permute(s, a, 1, 0)) }},
		{"Transpose", func() error { return e1(gpu.Transpose(s, a)) }},
		{"Transpose", func() error { return e1(gpu.Transpose(s, empty)) }},
		{"Reshape", func() error { return e1(gpu.Reshape(s, a, 3, 2)) }},
		// Indexing, joining.
		{"Take", func() error { return e1(gpu.Take(s, a, f.ai)) }},
		{"Take", func() error { return e1(gpu.Take(s, strided, f.ai, gpu.OnAxis(1))) }},
		{"TakeAlongAxis", func() error { return e1(gpu.TakeAlongAxis(s, a, f.ai, 1)) }},
		{"Var", func() error { return e1(gpu.Var[float32](s, a)) }},
		{"Std", func() error { return e1(gpu.Std[float32](s, a, gpu.Axes(1), gpu.Ddof(1))) }},
		{"LogSumExp", func() error { return e1(gpu.LogSumExp[float32](s, a)) }},
		{"Softmax", func() error { return e1(gpu.Softmax(s, a, 1)) }},
		{"LogSoftmax", func() error { return e1(gpu.LogSoftmax(s, a, 0)) }},
		{"LayerNorm", func() error { return e1(gpu.LayerNorm(s, a, 1, nil, nil, 1e-5)) }},
		{"Norm", func() error { return e1(gpu.Norm[float32](s, a, 2)) }},
		{"Put", func() error { return gpu.Put(s, out, f.ai, b) }},
		{"PutAlongAxis", func() error { return gpu.PutAlongAxis(s, out, f.ai, b, 1) }},
		{"PutMask", func() error { return gpu.PutMask(s, out, f.mask, b) }},
		{"AddAt", func() error { return gpu.AddAt(s, out, f.ai, b) }},
		{"MaximumAt", func() error { return gpu.MaximumAt(s, out, f.ai, b) }},
		{"MinimumAt", func() error { return gpu.MinimumAt(s, out, f.ai, b, gpu.Deterministic()) }},
		{"Bincount", func() error { return e1(gpu.Bincount(ctx, s, f.outI, 0)) }},
		{"BincountWeights", func() error { return e1(gpu.BincountWeights(ctx, s, f.outI, b, 0)) }},
		{"Concatenate", func() error { return e1(gpu.Concatenate(s, []*gpu.Array[float32]{a, b}, 0)) }},
		{"Concatenate", func() error { return e1(gpu.Concatenate(s, []*gpu.Array[float32]{empty}, 0)) }},
		{"Stack", func() error { return e1(gpu.Stack(s, []*gpu.Array[float32]{a, b}, 0)) }},
		{"Tile", func() error { return e1(gpu.Tile(s, a, 2)) }},
		{"Repeat", func() error { return e1(gpu.Repeat(s, a, 2)) }},
		{"Roll", func() error { return e1(gpu.Roll(s, a, 1)) }},
		{"Pad", func() error { return e1(gpu.Pad(s, a, [][2]int{{1, 1}}, 0)) }},
		{"Reshape", func() error { return e1(gpu.Reshape(s, strided, 6)) }},

		// Random numbers.
		{"Rand", func() error { return e1(gpu.Rand[float32](s, g, 2, 3)) }},
		{"RandN", func() error { return e1(gpu.RandN[float64](s, g, 4)) }},
		{"RandInt", func() error { return e1(gpu.RandInt[int32](s, g, 0, 10, 4)) }},
		{"RandBits", func() error { return e1(gpu.RandBits[uint8](s, g, 4)) }},
		{"RandInto", func() error { return gpu.RandInto(s, g, out) }},
		{"RandInto", func() error { return gpu.RandInto(s, g, strided) }},
		{"RandInto", func() error { return gpu.RandInto(s, g, empty) }},
		{"RandNInto", func() error { return gpu.RandNInto(s, g, out) }},
		{"RandIntInto", func() error { return gpu.RandIntInto(s, g, f.outI, 0, 10) }},
		{"RandBitsInto", func() error { return gpu.RandBitsInto(s, g, f.outI) }},

		// Matrix products.
		{"MatMul", func() error { return e1(gpu.MatMul(s, a, b)) }},
		{"MatMulInto", func() error { return gpu.MatMulInto(s, f.out, a, b) }},
		{"Gemm", func() error { return gpu.Gemm(s, 2, a, b, 1, f.out) }},
		{"Dot", func() error { return e1(gpu.Dot(s, a, b)) }},
		{"Vdot", func() error { return e1(gpu.Vdot(s, a, b)) }},
		{"FromDense", func() error { return e1(gpu.FromDense[float64](s, mat.NewDense(1, 1, nil))) }},

		// Reductions.
		{"Sum", func() error { return e1(gpu.Sum[float32](s, a)) }},
		{"Sum", func() error { return e1(gpu.Sum[int64](s, f.ai, gpu.Axes(-1))) }},
		{"Sum", func() error { return e1(gpu.Sum[float32](s, empty, gpu.Axes(0))) }},
		{"Prod", func() error { return e1(gpu.Prod[float64](s, a)) }},
		{"Mean", func() error { return e1(gpu.Mean[float64](s, f.ai)) }},
		{"Min", func() error { return e1(gpu.Min(s, a)) }},
		{"Max", func() error { return e1(gpu.Max(s, a, gpu.Axes(0), gpu.KeepDims())) }},
		{"Any", func() error { return e1(gpu.Any(s, f.mask)) }},
		{"All", func() error { return e1(gpu.All(s, a)) }},
		{"Count", func() error { return e1(gpu.Count(s, a)) }},
		{"ReduceInto", func() error { return gpu.ReduceInto(s, out0, gpu.OpSum, a) }},
		{"ReduceInto", func() error { return gpu.ReduceInto(s, out0, gpu.OpMax, empty) }},
		{"MapReduce", func() error { return e1(gpu.MapReduce[float32](s, "x*x", x, gpu.OpSum)) }},
		{"MapReduceInto", func() error { return gpu.MapReduceInto(s, out0, "x*x", x, gpu.OpSum) }},
		{"ArgMin", func() error { return e1(gpu.ArgMin(s, a)) }},
		{"ArgMax", func() error { return e1(gpu.ArgMax(s, a, gpu.Axes(1))) }},
		{"FindMin", func() error { return e2(gpu.FindMin(s, a)) }},
		{"FindMax", func() error { return e2(gpu.FindMax(s, a, gpu.Axes(0))) }},
		{"SumOf", func() error { return e1(gpu.SumOf(s, a)) }},
		{"ProdOf", func() error { return e1(gpu.ProdOf(s, a, gpu.Axes(0))) }},
		{"MeanOf", func() error { return e1(gpu.MeanOf(s, a)) }},
		{"VarOf", func() error { return e1(gpu.VarOf(s, a)) }},
		{"StdOf", func() error { return e1(gpu.StdOf(s, a)) }},
		{"LogSumExpOf", func() error { return e1(gpu.LogSumExpOf(s, a)) }},
		{"NormOf", func() error { return e1(gpu.NormOf(s, a, 1)) }},
		{"MedianOf", func() error { return e1(gpu.MedianOf(s, a)) }},
		{"NanMedianOf", func() error { return e1(gpu.NanMedianOf(s, a)) }},
		{"QuantileOf", func() error { return e1(gpu.QuantileOf(s, a, 0.5)) }},
		{"QuantilesOf", func() error { return e1(gpu.QuantilesOf(s, a, []float64{0, 1})) }},
		{"NanQuantileOf", func() error { return e1(gpu.NanQuantileOf(s, a, 0.5)) }},
		{"NanQuantilesOf", func() error { return e1(gpu.NanQuantilesOf(s, a, []float64{0, 1})) }},

		// Scans.
		{"CumSum", func() error { return e1(gpu.CumSum[float32](s, a, 1)) }},
		{"CumSum", func() error { return e1(gpu.CumSum[int64](s, f.ai, 0, gpu.Exclusive())) }},
		{"CumProd", func() error { return e1(gpu.CumProd[float64](s, a, -1)) }},
		{"CumMax", func() error { return e1(gpu.CumMax(s, a, 0)) }},
		{"CumMin", func() error { return e1(gpu.CumMin(s, strided, 1)) }},
		{"Accumulate", func() error { return e1(gpu.Accumulate[float32](s, a, gpu.OpSum, 1)) }},
		{"CumSumOf", func() error { return e1(gpu.CumSumOf(s, a, 1)) }},
		{"CumProdOf", func() error { return e1(gpu.CumProdOf(s, a, 0)) }},
		{"AccumulateOf", func() error { return e1(gpu.AccumulateOf(s, a, gpu.OpMax, 1)) }},
		{"AccumulateInto", func() error { return gpu.AccumulateInto(s, out, a, gpu.OpSum, 1) }},
		{"AccumulateInto", func() error { return gpu.AccumulateInto(s, strided, a, gpu.OpMax, 0) }},
		{"AccumulateInto", func() error { return gpu.AccumulateInto(s, f.outI, f.ai, gpu.OpSum, 0) }},

		// Search.
		{"Nonzero", func() error { return e1(gpu.Nonzero(ctx, s, a)) }},
		{"Nonzero", func() error { return e1(gpu.Nonzero(ctx, s, empty)) }},
		{"NonzeroWhere", func() error { return e1(gpu.NonzeroWhere(ctx, s, "x > 1", x)) }},
		{"Argwhere", func() error { return e1(gpu.Argwhere(ctx, s, a)) }},
		{"Extract", func() error { return e1(gpu.Extract(ctx, s, f.mask, a)) }},
		{"FindFirst", func() error { return e1(gpu.FindFirst(ctx, s, a)) }},
		{"FindFirst", func() error { return e1(gpu.FindFirst(ctx, s, empty)) }},
		{"FindFirstWhere", func() error { return e1(gpu.FindFirstWhere(ctx, s, "x > 1", x)) }},
		{"CountNonzero", func() error { return e1(gpu.CountNonzero(ctx, s, a)) }},
		{"CountNonzero", func() error { return e1(gpu.CountNonzero(ctx, s, empty)) }},

		// Sorting and selection.
		{"Sort", func() error { return e1(gpu.Sort(s, a, -1)) }},
		{"Sort", func() error { return e1(gpu.Sort(s, empty, 0, gpu.Descending())) }},
		{"Argsort", func() error { return e1(gpu.Argsort(s, a, 0)) }},
		{"SortByKey", func() error { return e2(gpu.SortByKey(s, a, f.b, 1)) }},
		{"Partition", func() error { return e1(gpu.Partition(s, a, 1, -1)) }},
		{"Argpartition", func() error { return e1(gpu.Argpartition(s, a, 0, 0)) }},
		{"TopK", func() error { return e2(gpu.TopK(s, a, 2, -1)) }},
		{"Unique", func() error { return e1(gpu.Unique(ctx, s, a, gpu.ReturnCounts())) }},
		{"SearchSorted", func() error { return e1(gpu.SearchSorted(s, a, a, gpu.SideLeft)) }},
		{"Median", func() error { return e1(gpu.Median[float32](s, a)) }},
		{"Quantile", func() error { return e1(gpu.Quantile[float64](s, a, 0.5, gpu.Axes(0))) }},
		{"Quantiles", func() error { return e1(gpu.Quantiles[float32](s, a, []float64{0, 1})) }},
		{"NanMedian", func() error { return e1(gpu.NanMedian[float32](s, a)) }},
		{"NanQuantile", func() error { return e1(gpu.NanQuantile[float64](s, a, 0.5, gpu.Axes(0))) }},
		{"NanQuantiles", func() error { return e1(gpu.NanQuantiles[float32](s, a, []float64{0, 1})) }},

		// Buffers, streams and launches.
		{"Stream.Alloc", func() error { return e1(s.Alloc(64)) }},
		{"Stream.Alloc", func() error { return e1(s.Alloc(0)) }},
		{"Stream.CopyHtoD", func() error { return s.CopyHtoD(f.buf, f.host) }},
		{"Stream.CopyDtoH", func() error { return s.CopyDtoH(f.host, f.buf) }},
		{"Stream.CopyDtoD", func() error { return s.CopyDtoD(f.buf2, f.buf) }},
		{"Stream.Memset", func() error { return s.Memset(f.buf, 1) }},
		{"Stream.MemsetD32", func() error { return s.MemsetD32(f.buf, 1) }},
		{"Buffer.Access", func() error { return f.buf.Access(s, gpu.ReadWrite, f.ranScopeFn) }},
		{"Stream.Launch", func() error { return s.Launch(f.fn, cfg) }},
		{"Stream.Launch", func() error { return s.Launch(f.fn, cfg, gpu.In(a), gpu.Out(f.buf), uint64(6)) }},
		{"Stream.LaunchChecked", func() error { return s.LaunchChecked(f.fn, cfg, func([]uint32) error { return nil }) }},
		{"Stream.Query", func() error { return e1(s.Query()) }},
		{"Stream.Synchronize", func() error { return s.Synchronize(ctx) }},
		{"Stream.Synchronize", func() error { return s.Synchronize(ctx, gpu.WaitPolicy{Mode: gpu.WaitBlock}) }},
		{"Stream.Record", func() error { return s.Record(f.ev) }},
		{"Stream.WaitEvent", func() error { return s.WaitEvent(f.ev) }},
		{"Stream.Close", func() error { return s.Close() }},
		{"Stream.BeginCapture", func() error { return s.BeginCapture() }},
		{"Stream.EndCapture", func() error { return e1(s.EndCapture()) }},
		{"Stream.Capture", func() error { return e1(s.Capture(func() error { return nil })) }},
		{"Stream.HostFunc", func() error { return s.HostFunc(func() error { return nil }) }},
		{"Stream.Handle", func() error { return e1(s.Handle()) }},
		{"Graph.Launch", func() error { return f.graph.Launch(s) }},
	}
}

// nilStreamNoError are the methods of Stream that return no error; they must not panic
// on a nil receiver either.
var nilStreamNoError = streamNoError(nil, "<nil stream>")

// streamNoError returns the calls of Stream's methods that return no error on the bad
// stream s, whose String is str.
func streamNoError(s *gpu.Stream, str string) []nilCase {
	return []nilCase{
		{"Stream.Device", func() error {
			if d := s.Device(); d != nil {
				return fmt.Errorf("Device() = %v, want nil", d)
			}
			return nil
		}},
		{"Stream.BackendStream", func() error {
			if bs := s.BackendStream(); bs != nil {
				return fmt.Errorf("BackendStream() = %v, want nil", bs)
			}
			return nil
		}},
		{"Stream.Capturing", func() error {
			if s.Capturing() {
				return errors.New("Capturing() = true")
			}
			return nil
		}},
		{"Stream.String", func() error {
			if got := s.String(); got != str {
				return fmt.Errorf("String() = %q, want %q", got, str)
			}
			if got := fmt.Sprint(s); got != str {
				return fmt.Errorf("fmt.Sprint = %q, want %q", got, str)
			}
			return nil
		}},
	}
}

// nilContextCases returns the calls with a nil context and a valid stream.
func nilContextCases(f *nilFixture) []nilCase {
	var ctx context.Context // the nil context
	s, a, x := f.s, f.a, gpu.Vars{"x": f.a}
	return []nilCase{
		{"Stream.Synchronize", func() error { return s.Synchronize(ctx) }},
		{"Device.Synchronize", func() error { return f.d.Synchronize(ctx) }},
		{"Device.TrimMemory", func() error { return f.d.TrimMemory(ctx) }},
		{"Event.Wait", func() error { return f.ev.Wait(ctx) }},
		{"Buffer.HostAccess", func() error {
			return f.buf.HostAccess(ctx, gpu.Read, func([]byte) error { return nil })
		}},
		{"Buffer.CopyFromHost", func() error { return f.buf.CopyFromHost(ctx, f.host) }},
		{"Buffer.CopyToHost", func() error { return f.buf.CopyToHost(ctx, f.host) }},
		{"Buffer.CopyFrom", func() error { return f.buf2.CopyFrom(ctx, f.buf) }},
		{"Array.ToSlice", func() error { return e1(a.ToSlice(ctx)) }},
		{"Array.ToSlice", func() error { return e1(f.strided.ToSlice(ctx)) }},
		{"Array.ToSlice", func() error { return e1(f.empty.ToSlice(ctx)) }},
		{"Array.Text", func() error { return e1(a.Text(ctx)) }},
		{"Array.CopyToHost", func() error { return a.CopyToHost(ctx, f.hostF32) }},
		{"Array.CopyFromHost", func() error { return f.out.CopyFromHost(ctx, f.hostF32) }},
		{"Array.At", func() error { return e1(a.At(ctx, 1, 2)) }},
		{"Array.Set", func() error { return f.out.Set(ctx, 1, 1, 2) }},
		{"Nonzero", func() error { return e1(gpu.Nonzero(ctx, s, a)) }},
		{"NonzeroWhere", func() error { return e1(gpu.NonzeroWhere(ctx, s, "x > 1", x)) }},
		{"Argwhere", func() error { return e1(gpu.Argwhere(ctx, s, a)) }},
		{"Extract", func() error { return e1(gpu.Extract(ctx, s, f.mask, a)) }},
		{"FindFirst", func() error { return e1(gpu.FindFirst(ctx, s, a)) }},
		{"FindFirstWhere", func() error { return e1(gpu.FindFirstWhere(ctx, s, "x > 1", x)) }},
		{"CountNonzero", func() error { return e1(gpu.CountNonzero(ctx, s, a)) }},
		{"Bincount", func() error { return e1(gpu.Bincount(ctx, s, f.ai, 0)) }},
		{"BincountWeights", func() error { return e1(gpu.BincountWeights(ctx, s, f.ai, a, 0)) }},
		{"ToDense", func() error { return e1(gpu.ToDense(ctx, a)) }},
		{"Unique", func() error { return e1(gpu.Unique(ctx, s, a)) }},
	}
}

// callNoPanic runs c.call and returns its error, or reports the panic.
func callNoPanic(c nilCase) (err error, panicked any) {
	defer func() { panicked = recover() }()
	return c.call(), nil
}

// checkNoErrorCases runs the cases of methods that return no error on a bad receiver
// (what: "nil stream", ...) and expects each neither to panic nor to find a wrong value.
func checkNoErrorCases(t *testing.T, what string, cases []nilCase) {
	t.Helper()
	for i, c := range cases {
		if err, p := callNoPanic(c); p != nil {
			t.Errorf("%s (case %d) on a %s panicked: %v", c.name, i, what, p)
		} else if err != nil {
			t.Errorf("%s (case %d) on a %s: %v", c.name, i, what, err)
		}
	}
}

// checkNilCases runs the cases and expects each to return an error wrapping
// ErrInvalidValue whose message contains want.
func checkNilCases(t *testing.T, what string, cases []nilCase, want string) {
	t.Helper()
	checkNilCasesWant(t, what, cases, func(string) string { return want })
}

// checkNilCasesWant is checkNilCases with what each case's error says given by its
// name.
func checkNilCasesWant(t *testing.T, what string, cases []nilCase, wantOf func(name string) string) {
	t.Helper()
	for i, c := range cases {
		err, p := callNoPanic(c)
		want := wantOf(c.name)
		switch {
		case p != nil:
			t.Errorf("%s (case %d) with a %s panicked: %v", c.name, i, what, p)
		case !errors.Is(err, gpu.ErrInvalidValue):
			t.Errorf("%s (case %d) with a %s: error %v, want one wrapping ErrInvalidValue", c.name, i, what, err)
		case !strings.Contains(err.Error(), want):
			t.Errorf("%s (case %d) with a %s: error %q doesn't say %q", c.name, i, what, err, want)
		}
	}
}

func TestNilStream(t *testing.T) {
	f := newNilFixture(t)
	seed, offset := f.g.State()
	checkNilCases(t, "nil stream", nilStreamCases(f, nil), "nil stream")
	checkNoErrorCases(t, "nil stream", nilStreamNoError)
	// A failed request leaves the generator where it was.
	if s2, o2 := f.g.State(); s2 != seed || o2 != offset {
		t.Errorf("generator state after nil-stream calls: (%d, %d), want (%d, %d)", s2, o2, seed, offset)
	}
	// The valid stream and the arguments are still usable.
	got, err := gpu.Sum[float32](f.s, f.a)
	if err != nil {
		t.Fatal(err)
	}
	defer got.Free()
	if v, err := got.At(context.Background()); err != nil || v != 12 {
		t.Errorf("Sum after the nil-stream calls: %v, %v; want 12", v, err)
	}
}

// A zero Stream (not made by Device.NewStream) gets the same errors as a nil one, never
// a panic.
func TestZeroStream(t *testing.T) {
	f := newNilFixture(t)
	zero := &gpu.Stream{}
	checkNilCases(t, "zero stream", nilStreamCases(f, zero), "zero stream")
	checkNoErrorCases(t, "zero stream", streamNoError(zero, "<zero stream>"))
}

func TestNilContext(t *testing.T) {
	f := newNilFixture(t)
	checkNilCases(t, "nil context", nilContextCases(f), "nil context")
	if err := f.s.Synchronize(context.Background()); err != nil {
		t.Errorf("Synchronize after the nil-context calls: %v", err)
	}
}

// exportedFuncs parses the package's non-test files and returns its exported
// functions and methods.
func exportedFuncs(t *testing.T) []*ast.FuncDecl {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []*ast.FuncDecl
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(fset, file, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range af.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok && fd.Name.IsExported() {
				out = append(out, fd)
			}
		}
	}
	return out
}

// recvType returns the name of a method's receiver type (generic ones without their
// parameters: "Array" for *Array[T]) and whether the receiver is a pointer; "" for a
// function or a receiver type it doesn't understand.
func recvType(fd *ast.FuncDecl) (name string, ptr bool) {
	if fd.Recv == nil || len(fd.Recv.List) != 1 {
		return "", false
	}
	rt := fd.Recv.List[0].Type
	if st, ok := rt.(*ast.StarExpr); ok {
		rt, ptr = st.X, true
	}
	switch x := rt.(type) {
	case *ast.IndexExpr: // Array[T]
		rt = x.X
	case *ast.IndexListExpr: // Pair[K, V]
		rt = x.X
	}
	if id, ok := rt.(*ast.Ident); ok {
		return id.Name, ptr
	}
	return "", ptr
}

// apiWith lists the package's exported functions and methods (on exported types) whose
// signature has a parameter or receiver for which match is true, by name: "Sum",
// "Stream.Launch", "Kernel.Into".
func apiWith(t *testing.T, match func(ast.Expr) bool) []string {
	t.Helper()
	var names []string
	for _, fd := range exportedFuncs(t) {
		name, found := fd.Name.Name, false
		if fd.Recv != nil && len(fd.Recv.List) == 1 {
			found = match(fd.Recv.List[0].Type)
			rt, _ := recvType(fd)
			if rt == "" || !ast.IsExported(rt) {
				continue
			}
			name = rt + "." + name
		}
		for _, p := range fd.Type.Params.List {
			found = found || match(p.Type)
		}
		if found {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

func isStreamPtr(e ast.Expr) bool {
	st, ok := e.(*ast.StarExpr)
	if !ok {
		return false
	}
	id, ok := st.X.(*ast.Ident)
	return ok && id.Name == "Stream"
}

func isContext(e ast.Expr) bool {
	se, ok := e.(*ast.SelectorExpr)
	if !ok {
		return false
	}
	pkg, ok := se.X.(*ast.Ident)
	return ok && pkg.Name == "context" && se.Sel.Name == "Context"
}

// checkCovered fails for each name of api that no case calls.
func checkCovered(t *testing.T, what string, api []string, cases ...[]nilCase) {
	t.Helper()
	covered := map[string]bool{}
	for _, cs := range cases {
		for _, c := range cs {
			covered[c.name] = true
		}
	}
	for _, name := range api {
		if !covered[name] {
			t.Errorf("%s takes a %s but isn't called with a nil one in nilstream_test.go: add a case", name, what)
		}
		delete(covered, name)
	}
	for name := range covered {
		t.Errorf("nilstream_test.go has a case for %s, which takes no %s (renamed?)", name, what)
	}
}

func TestNilStreamCoversAPI(t *testing.T) {
	api := apiWith(t, isStreamPtr)
	if len(api) < 90 {
		t.Fatalf("found only %d functions taking a *Stream: %v", len(api), api)
	}
	checkCovered(t, "*Stream", api, nilStreamCases(&nilFixture{}, nil), nilStreamNoError)
}

func TestNilContextCoversAPI(t *testing.T) {
	api := apiWith(t, isContext)
	if len(api) < 15 {
		t.Fatalf("found only %d functions taking a context.Context: %v", len(api), api)
	}
	checkCovered(t, "context.Context", api, nilContextCases(&nilFixture{}))
}
