package kernel

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// The harness runs a kernel spec on the PTX simulator and on the CPU backend with the
// same arguments, so tests can compare the two.

// kArg is a kernel argument: a buffer (its initial contents, addressed at off bytes
// into a larger allocation when off > 0) or a 64-bit scalar.
type kArg struct {
	buf  bool
	data []byte
	off  int
	ptr  int // the pointer passed is ptr bytes into data (elements before it are readable)
	val  uint64
}

func kBuf(data []byte) kArg             { return kArg{buf: true, data: data} }
func kBufOff(data []byte, off int) kArg { return kArg{buf: true, data: data, off: off} }
func kU64(v uint64) kArg                { return kArg{val: v} }
func kI64(v int64) kArg                 { return kArg{val: uint64(v)} }

type ptxSpecT interface {
	Key() string
	PTX(major, minor int) (string, string, error)
	CPU() (func(*cpu.Launch) error, error)
}

var simCache sync.Map // key -> *simKernel

func simKernelOf(t testing.TB, sp ptxSpecT) *simKernel {
	t.Helper()
	if k, ok := simCache.Load(sp.Key()); ok {
		return k.(*simKernel)
	}
	src, entry, err := sp.PTX(9, 0)
	if err != nil {
		t.Fatalf("%s: %v", sp.Key(), err)
	}
	k, err := simParse(src, entry)
	if err != nil {
		t.Fatalf("%s: %v", sp.Key(), err)
	}
	simCache.Store(sp.Key(), k)
	return k
}

// runSim runs sp's PTX over grid blocks of block threads (at most resident at a time)
// and returns the buffers' final contents.
func runSim(t testing.TB, sp ptxSpecT, grid, block, resident int, args []kArg) [][]byte {
	t.Helper()
	out, err := runSimKernel(simKernelOf(t, sp), grid, block, resident, args)
	if err != nil {
		t.Fatalf("%s: %v", sp.Key(), err)
	}
	return out
}

// runSimKernel is runSim of a parsed kernel, returning the launch's error.
func runSimKernel(k *simKernel, grid, block, resident int, args []kArg) ([][]byte, error) {
	size := 1 << 12
	for _, a := range args {
		if a.buf {
			size += len(a.data) + a.off + 512
		}
	}
	d := newSimDevice(size)
	params := make([]uint64, len(args))
	addrs := make([]uint64, len(args))
	for i, a := range args {
		if !a.buf {
			params[i] = a.val
			continue
		}
		base := d.alloc(len(a.data)+a.off, 0xEE)
		copy(d.bytes(base+uint64(a.off), len(a.data)), a.data)
		addrs[i] = base + uint64(a.off)
		params[i] = addrs[i] + uint64(a.ptr)
	}
	if err := simLaunch(k, d.mem, grid, block, resident, params); err != nil {
		return nil, err
	}
	out := make([][]byte, len(args))
	for i, a := range args {
		if a.buf {
			out[i] = append([]byte(nil), d.bytes(addrs[i], len(a.data))...)
		}
	}
	return out, nil
}

var (
	cpuDevOnce sync.Once
	cpuDev     *cpu.Device
)

// runCPU runs sp's CPU implementation on a CPU device with the same arguments.
func runCPU(t testing.TB, sp ptxSpecT, grid, block int, args []kArg) [][]byte {
	t.Helper()
	cpuDevOnce.Do(func() { cpuDev = cpu.New(2) })
	fn, err := sp.CPU()
	if err != nil {
		t.Fatal(err)
	}
	bs, err := cpuDev.NewStream()
	if err != nil {
		t.Fatal(err)
	}
	defer bs.Destroy()
	bargs := make([]backend.Arg, len(args))
	mems := make([]backend.Mem, len(args))
	for i, a := range args {
		if !a.buf {
			bargs[i] = backend.Arg{Kind: backend.ArgScalar, Size: 8, Val: a.val}
			continue
		}
		m, err := cpuDev.Alloc(backend.DeviceMem, int64(len(a.data)+a.off), nil)
		if err != nil {
			t.Fatal(err)
		}
		copy(m.(*cpu.Mem).Host()[a.off:], a.data)
		mems[i] = m
		bargs[i] = backend.Arg{Kind: backend.ArgMem, Mem: m, Off: int64(a.off + a.ptr)}
	}
	cfg := backend.LaunchConfig{Grid: [3]uint32{uint32(grid), 1, 1}, Block: [3]uint32{uint32(block), 1, 1}}
	if err := bs.Launch(cpu.NewFunc(sp.Key(), fn), cfg, bargs); err != nil {
		t.Fatal(err)
	}
	if err := bs.Synchronize(); err != nil {
		t.Fatal(err)
	}
	out := make([][]byte, len(args))
	for i, a := range args {
		if a.buf {
			out[i] = append([]byte(nil), mems[i].(*cpu.Mem).Host()[a.off:a.off+len(a.data)]...)
			cpuDev.FreeNow(mems[i])
		}
	}
	return out
}

// randBytes returns n random elements of type t (floats: normal values, with NaN and
// -0 sprinkled in when special is set).
func randBytes(rng *rand.Rand, t dtype.DType, n int, special bool) []byte {
	sz := t.Size()
	b := make([]byte, n*sz)
	for i := 0; i < n; i++ {
		p := b[i*sz : (i+1)*sz]
		switch t {
		case dtype.Bool:
			p[0] = byte(rng.IntN(2))
		case dtype.Float32:
			v := float32(rng.NormFloat64())
			if special {
				switch rng.IntN(50) {
				case 0:
					v = float32(math.NaN())
				case 1:
					v = float32(math.Copysign(0, -1))
				case 2:
					v = 0
				}
			}
			binary.LittleEndian.PutUint32(p, math.Float32bits(v))
		case dtype.Float64:
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
			binary.LittleEndian.PutUint64(p, math.Float64bits(v))
		default:
			u := rng.Uint64()
			for k := range p {
				p[k] = byte(u >> (8 * k))
			}
		}
	}
	return b
}

// sameElems compares two buffers of elements of type t: bit for bit, except that any
// NaN equals any NaN and, with tol > 0, floats may differ by tol relative to mag.
func sameElems(t dtype.DType, a, b []byte) int {
	sz := t.Size()
	for i := 0; i+sz <= len(a); i += sz {
		x, y := a[i:i+sz], b[i:i+sz]
		switch t {
		case dtype.Float32:
			fx := math.Float32frombits(binary.LittleEndian.Uint32(x))
			fy := math.Float32frombits(binary.LittleEndian.Uint32(y))
			if fx != fx && fy != fy {
				continue
			}
		case dtype.Float64:
			fx := math.Float64frombits(binary.LittleEndian.Uint64(x))
			fy := math.Float64frombits(binary.LittleEndian.Uint64(y))
			if fx != fx && fy != fy {
				continue
			}
		}
		for k := range x {
			if x[k] != y[k] {
				return i / sz
			}
		}
	}
	return -1
}
