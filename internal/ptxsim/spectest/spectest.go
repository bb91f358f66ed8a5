// Package spectest runs a kernel spec (internal/kernel) two ways with the same
// arguments, its PTX on the simulator (internal/ptxsim) and its CPU implementation on
// the CPU backend, so that a kernel family's tests compare the two, in the way gonum's
// testblas runs one set of tests against every BLAS:
//
//	args := []spectest.Arg{spectest.Buf(in), spectest.Buf(out), spectest.U64(n)}
//	sim, cpu := spectest.Both(t, sp, grid, block, 4, args)
//	if i := spectest.FirstDiff(dtype.Float32, sim[1], cpu[1]); i >= 0 { t.Fatalf(...) }
//
// The buffers are copies: each run starts from the arguments' contents and returns
// every buffer's final contents (nil for scalars).
package spectest

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/ptxsim"
)

// Spec is a kernel spec with both implementations (internal/kernel's specs).
type Spec interface {
	Key() string
	PTX(major, minor int) (src, entry string, err error)
	CPU() (func(*cpu.Launch) error, error)
}

// Arg is a kernel argument: a buffer or a 64-bit scalar.
type Arg struct {
	Data   []byte // a buffer's initial contents
	Off    int    // a buffer starts Off bytes into its allocation (misaligned addresses)
	Ptr    int    // the pointer passed is Ptr bytes past the buffer's start (may be negative)
	Val    uint64 // a scalar's bits
	isBuf  bool
	isNull bool
}

// Buf is a buffer argument.
func Buf(data []byte) Arg { return Arg{Data: data, isBuf: true} }

// BufAt is a buffer argument off bytes into its allocation.
func BufAt(data []byte, off int) Arg { return Arg{Data: data, Off: off, isBuf: true} }

// PtrAt is a buffer argument whose pointer is ptr bytes past its start.
func PtrAt(data []byte, ptr int) Arg { return Arg{Data: data, Ptr: ptr, isBuf: true} }

// Null is a null pointer argument: 0 in the simulator (an access through it faults:
// nothing is mapped there), a backend.ArgPtr of 0 on the CPU backend. Its output is nil.
func Null() Arg { return Arg{isNull: true} }

// U64 is a scalar argument.
func U64(v uint64) Arg { return Arg{Val: v} }

// I64 is a scalar argument.
func I64(v int64) Arg { return Arg{Val: uint64(v)} }

var modules sync.Map // PTX source -> *ptxsim.Func

// kernelOf returns sp's kernel, parsed once per PTX text (a spec whose text depends on
// a package variable a test changes gets the text of the moment).
func kernelOf(t testing.TB, sp Spec) *ptxsim.Func {
	t.Helper()
	src, entry, err := sp.PTX(9, 0)
	if err != nil {
		t.Fatalf("%s: %v", sp.Key(), err)
	}
	if f, ok := modules.Load(src); ok {
		return f.(*ptxsim.Func)
	}
	m, err := ptxsim.Parse(src)
	if err != nil {
		t.Fatalf("%s: %v", sp.Key(), err)
	}
	f := m.Func(entry)
	if f == nil {
		t.Fatalf("%s: no kernel %s", sp.Key(), entry)
	}
	modules.Store(src, f)
	return f
}

// Sim runs sp's PTX on the simulator over grid blocks of block threads, at most
// resident at a time, and returns the buffers' final contents. Each buffer is mapped
// apart from the others (an access past its allocation faults), with the bytes before
// Off poisoned. A spec with a SharedBytes() int method gets that much dynamic shared
// memory. A launch error (a fault, a trap) fails t.
func Sim(t testing.TB, sp Spec, grid, block, resident int, args []Arg) [][]byte {
	t.Helper()
	out, err := SimErr(t, sp, grid, block, resident, args)
	if err != nil {
		t.Fatalf("%s: %v", sp.Key(), err)
	}
	return out
}

// SimErr is Sim returning the launch's error (the buffers as the launch left them).
func SimErr(t testing.TB, sp Spec, grid, block, resident int, args []Arg) ([][]byte, error) {
	t.Helper()
	cfg := ptxsim.Linear(grid, block)
	cfg.Resident = resident
	return SimConfigErr(t, sp, cfg, args)
}

// SimConfigErr is SimErr with any launch configuration (a grid of several dimensions):
// cfg's SharedMem is the spec's SharedBytes() where it has one.
func SimConfigErr(t testing.TB, sp Spec, cfg ptxsim.Config, args []Arg) ([][]byte, error) {
	t.Helper()
	f := kernelOf(t, sp)
	mem := &ptxsim.Regions{}
	params := make([]uint64, len(args))
	out := make([][]byte, len(args))
	for i, a := range args {
		if !a.isBuf {
			params[i] = a.Val
			continue
		}
		base := uint64(i+1) << 36
		b := make([]byte, a.Off+len(a.Data))
		for k := range a.Off {
			b[k] = 0xEE
		}
		copy(b[a.Off:], a.Data)
		mem.Map(base, b)
		out[i] = b[a.Off:]
		params[i] = base + uint64(a.Off+a.Ptr)
	}
	if d, ok := sp.(interface{ SharedBytes() int }); ok {
		cfg.SharedMem = d.SharedBytes()
	}
	return out, f.Launch(mem, cfg, params)
}

var cpuDev = sync.OnceValue(func() *cpu.Device { return cpu.New(2) })

// CPU runs sp's CPU implementation on the CPU backend with the same arguments.
func CPU(t testing.TB, sp Spec, grid, block int, args []Arg) [][]byte {
	t.Helper()
	dev := cpuDev()
	fn, err := sp.CPU()
	if err != nil {
		t.Fatalf("%s: %v", sp.Key(), err)
	}
	s, err := dev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	bargs := make([]backend.Arg, len(args))
	mems := make([]backend.Mem, len(args))
	for i, a := range args {
		if a.isNull {
			bargs[i] = backend.Arg{Kind: backend.ArgPtr, Size: 8}
			continue
		}
		if !a.isBuf {
			bargs[i] = backend.Arg{Kind: backend.ArgScalar, Size: 8, Val: a.Val}
			continue
		}
		m, err := dev.Alloc(backend.DeviceMem, int64(len(a.Data)+a.Off), nil)
		if err != nil {
			t.Fatal(err)
		}
		defer dev.FreeNow(m)
		copy(m.Host()[a.Off:], a.Data)
		mems[i] = m
		bargs[i] = backend.Arg{Kind: backend.ArgMem, Mem: m, Off: int64(a.Off + a.Ptr)}
	}
	cfg := backend.LaunchConfig{Grid: [3]uint32{uint32(grid), 1, 1}, Block: [3]uint32{uint32(block), 1, 1}}
	if err := s.Launch(cpu.NewFunc(sp.Key(), fn), cfg, bargs); err != nil {
		t.Fatal(err)
	}
	if err := s.Synchronize(); err != nil {
		t.Fatalf("%s on the CPU: %v", sp.Key(), err)
	}
	out := make([][]byte, len(args))
	for i, a := range args {
		if a.isBuf {
			out[i] = append([]byte(nil), mems[i].Host()[a.Off:]...)
		}
	}
	return out
}

// Both runs sp on the simulator and on the CPU with the same arguments.
func Both(t testing.TB, sp Spec, grid, block, resident int, args []Arg) (sim, cpu [][]byte) {
	t.Helper()
	return Sim(t, sp, grid, block, resident, args), CPU(t, sp, grid, block, args)
}

// RandBytes returns n random elements of type t: floats normal values (with NaN, -0
// and +0 sprinkled in when special is set), integers any bits, bools 0 or 1.
func RandBytes(rng *rand.Rand, t dtype.DType, n int, special bool) []byte {
	sz := t.Size()
	b := make([]byte, n*sz)
	for i := 0; i < n; i++ {
		p := b[i*sz : (i+1)*sz]
		switch t {
		case dtype.Bool:
			p[0] = byte(rng.IntN(2))
		case dtype.Float32, dtype.Float64:
			v := rng.NormFloat64()
			if special {
				switch rng.IntN(50) {
				case 0:
					v = math.NaN()
				case 1:
					v = math.Copysign(0, -1)
				case 2:
					v = 0
				}
			}
			if t == dtype.Float32 {
				binary.LittleEndian.PutUint32(p, math.Float32bits(float32(v)))
			} else {
				binary.LittleEndian.PutUint64(p, math.Float64bits(v))
			}
		default:
			u := rng.Uint64()
			for k := range p {
				p[k] = byte(u >> (8 * k))
			}
		}
	}
	return b
}

// FirstDiff returns the index of the first element of type t that differs between a
// and b (bit for bit, except that any NaN equals any NaN), or -1.
func FirstDiff(t dtype.DType, a, b []byte) int {
	sz := t.Size()
	for i := 0; i+sz <= len(a); i += sz {
		x, y := a[i:i+sz], b[i:i+sz]
		switch t {
		case dtype.Float32:
			if fx, fy := math.Float32frombits(binary.LittleEndian.Uint32(x)), math.Float32frombits(binary.LittleEndian.Uint32(y)); fx != fx && fy != fy {
				continue
			}
		case dtype.Float64:
			if fx, fy := math.Float64frombits(binary.LittleEndian.Uint64(x)), math.Float64frombits(binary.LittleEndian.Uint64(y)); fx != fx && fy != fy {
				continue
			}
		}
		if string(x) != string(y) {
			return i / sz
		}
	}
	if len(a) != len(b) {
		return min(len(a), len(b)) / sz
	}
	return -1
}
