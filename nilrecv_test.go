package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"go/ast"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
)

// The rule that bad input gets an error, never a panic, covers nil receivers too: every
// exported method of the package's exported pointer types, called on a nil receiver with
// every other argument valid, returns an error wrapping ErrInvalidValue that names the
// type ("nil array", "nil buffer", ...), or, if it returns no error, a zero value.
// TestNilReceiverCoversAPI parses the package and fails for an exported method of an
// exported pointer type (generic ones included) that these lists (or, for *Stream, those
// of nilstream_test.go) don't call, so that the rule stays true for later additions.

// nilRecvCases returns the calls of methods that return an error, on nil receivers. The
// array methods are called on a nil *Array and on a zero Array (no buffer), which is
// also a nil array.
func nilRecvCases(f *nilFixture) []nilCase {
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

// nilRecvNoError returns the calls of methods that return no error, on nil receivers:
// each returns an error if the method's result isn't the documented zero value.
func nilRecvNoError() []nilCase {
	var (
		d  *gpu.Device
		b  *gpu.Buffer
		ev *gpu.Event
		fn *gpu.Function
		g  *gpu.Generator
	)
	cases := []nilCase{
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

func TestNilReceiver(t *testing.T) {
	f := newNilFixture(t)
	for i, c := range nilRecvCases(f) {
		err, p := callNoPanic(c)
		want := nilRecvWant(c.name)
		switch {
		case p != nil:
			t.Errorf("%s (case %d) on a nil receiver panicked: %v", c.name, i, p)
		case !errors.Is(err, gpu.ErrInvalidValue):
			t.Errorf("%s (case %d) on a nil receiver: error %v, want one wrapping ErrInvalidValue", c.name, i, err)
		case !strings.Contains(err.Error(), want):
			t.Errorf("%s (case %d) on a nil receiver: error %q doesn't say %q", c.name, i, err, want)
		}
	}
	for i, c := range nilRecvNoError() {
		if err, p := callNoPanic(c); p != nil {
			t.Errorf("%s (case %d) on a nil receiver panicked: %v", c.name, i, p)
		} else if err != nil {
			t.Errorf("%s (case %d) on a nil receiver: %v", c.name, i, err)
		}
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
	for _, cs := range [][]nilCase{nilRecvCases(&nilFixture{}), nilRecvNoError()} {
		for _, c := range cs {
			if strings.HasPrefix(c.name, "Stream.") {
				t.Errorf("nilrecv_test.go has a case for %s: *Stream's belong in nilstream_test.go", c.name)
			}
			covered[c.name] = true
		}
	}
	// Stream's methods on a nil receiver are called by nilstream_test.go.
	for _, cs := range [][]nilCase{nilStreamCases(&nilFixture{}), nilStreamNoError} {
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
