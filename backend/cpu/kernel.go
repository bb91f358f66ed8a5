package cpu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
)

// Func is a kernel written in Go.
type Func struct {
	name string
	fn   func(*Launch) error
}

// NewFunc returns a kernel that runs fn once per launch. fn splits its work over the
// device's workers with Launch.Parallel; an error or a panic faults the device.
func NewFunc(name string, fn func(*Launch) error) *Func { return &Func{name: name, fn: fn} }

// Name returns the kernel's name.
func (f *Func) Name() string { return f.name }

// Launch is one launch of a Func: its geometry and arguments.
type Launch struct {
	Grid, Block [3]uint32
	SharedMem   uint32
	Args        []backend.Arg
	mem         [][]byte
	full        [][]byte
	off         []int
	dev         *Device
}

// Mem returns the memory of argument i (an ArgMem or non-nil ArgPtr argument) from its
// offset to the end of its allocation.
func (l *Launch) Mem(i int) []byte { return l.mem[i] }

// MemAt returns the whole allocation argument i points into and the byte offset it
// points at, for kernels that reach before the pointer (negative strides).
func (l *Launch) MemAt(i int) ([]byte, int) { return l.full[i], l.off[i] }

// Uint64 returns scalar argument i zero-extended to 64 bits.
func (l *Launch) Uint64(i int) uint64 { return l.Args[i].Val }

// Uint32 returns scalar argument i truncated to 32 bits.
func (l *Launch) Uint32(i int) uint32 { return uint32(l.Args[i].Val) }

// Int64 returns scalar argument i as an int64 (sign-extended from its size).
func (l *Launch) Int64(i int) int64 {
	v := l.Args[i].Val
	switch l.Args[i].Size {
	case 1:
		return int64(int8(v))
	case 2:
		return int64(int16(v))
	case 4:
		return int64(int32(v))
	}
	return int64(v)
}

// Float32 returns scalar argument i as a float32.
func (l *Launch) Float32(i int) float32 { return math.Float32frombits(uint32(l.Args[i].Val)) }

// Float64 returns scalar argument i as a float64.
func (l *Launch) Float64(i int) float64 { return math.Float64frombits(l.Args[i].Val) }

// Blob returns the bytes of argument i: its Blob, or its scalar value's bytes.
func (l *Launch) Blob(i int) []byte {
	if l.Args[i].Blob != nil {
		return l.Args[i].Blob
	}
	b := make([]byte, 8)
	binary.LittleEndian.PutUint64(b, l.Args[i].Val)
	return b[:l.Args[i].Size]
}

// Workers returns the number of workers Parallel uses.
func (l *Launch) Workers() int { return l.dev.workers }

// Parallel calls body over [0, n) split into contiguous chunks of at least grain
// elements, on up to Workers goroutines, and waits for all of them. A panic in body is
// re-raised on the caller's goroutine (and so faults the device).
func (l *Launch) Parallel(n, grain int, body func(lo, hi int)) {
	Parallel(l.dev.workers, n, grain, body)
}

// Parallel calls body over [0, n) split into contiguous chunks of at least grain
// elements, on up to workers goroutines, and waits for all of them.
func Parallel(workers, n, grain int, body func(lo, hi int)) {
	if n <= 0 {
		return
	}
	if grain < 1 {
		grain = 1
	}
	chunks := min(workers, (n+grain-1)/grain)
	if chunks <= 1 {
		body(0, n)
		return
	}
	var wg sync.WaitGroup
	var panicked any
	var once sync.Once
	step := (n + chunks - 1) / chunks
	for lo := 0; lo < n; lo += step {
		hi := min(lo+step, n)
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					once.Do(func() { panicked = r })
				}
			}()
			body(lo, hi)
		}()
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
}

// Slice views b as a []T of len(b)/sizeof(T) elements. It panics (faulting the device
// when called in a kernel) if b is not aligned for T, as a misaligned access faults on
// a GPU.
func Slice[T any](b []byte) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	if len(b) < size {
		return nil
	}
	if uintptr(unsafe.Pointer(&b[0]))%unsafe.Alignof(z) != 0 {
		panic(fmt.Sprintf("cpu: misaligned address %p for a %d-byte type", &b[0], size))
	}
	return unsafe.Slice((*T)(unsafe.Pointer(&b[0])), len(b)/size)
}

// epoch is the time base of the stamps the built-in kernels write.
var epoch = time.Now()

// Now returns nanoseconds since the process's start, on the monotonic clock: the time
// base of the spin_copy_u32 built-in's stamps.
func Now() uint64 { return uint64(time.Since(epoch)) }

var errTrap = errors.New("cpu: trap: the built-in trap kernel ran")

func elems(l *Launch, arg int, n uint64) ([]uint32, error) {
	s := Slice[uint32](l.Mem(arg))
	if uint64(len(s)) < n {
		return nil, fmt.Errorf("cpu: illegal address: %d elements past an allocation of %d: %w", n, len(s), backend.ErrLaunchFailed)
	}
	return s[:n], nil
}

var builtins = map[string]*Func{
	"empty": NewFunc("empty", func(*Launch) error { return nil }),
	"trap":  NewFunc("trap", func(*Launch) error { return errTrap }),
	"spin": NewFunc("spin", func(l *Launch) error {
		time.Sleep(time.Duration(l.Uint64(0)))
		return nil
	}),
	"fill_u32": NewFunc("fill_u32", func(l *Launch) error {
		dst, err := elems(l, 0, l.Uint64(2))
		if err != nil {
			return err
		}
		v := l.Uint32(1)
		l.Parallel(len(dst), 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dst[i] = v
			}
		})
		return nil
	}),
	"add_u32": NewFunc("add_u32", func(l *Launch) error {
		n := l.Uint64(3)
		dst, err := elems(l, 0, n)
		if err != nil {
			return err
		}
		src, err := elems(l, 1, n)
		if err != nil {
			return err
		}
		v := l.Uint32(2)
		l.Parallel(len(dst), 1<<14, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				dst[i] = src[i] + v
			}
		})
		return nil
	}),
	"spin_copy_u32": NewFunc("spin_copy_u32", func(l *Launch) error {
		n := l.Uint64(2)
		dst, err := elems(l, 0, n)
		if err != nil {
			return err
		}
		src, err := elems(l, 1, n)
		if err != nil {
			return err
		}
		var stamps []uint64
		if m := l.Mem(4); m != nil {
			stamps = Slice[uint64](m)
		}
		if len(stamps) >= 1 {
			stamps[0] = Now()
		}
		time.Sleep(time.Duration(l.Uint64(3)))
		copy(dst, src)
		if len(stamps) >= 2 {
			stamps[1] = Now()
		}
		return nil
	}),
}

// Builtin returns one of the built-in kernels listed in backend.Builtins.
func (d *Device) Builtin(name string) (backend.Function, error) {
	if f, ok := builtins[name]; ok {
		return f, nil
	}
	return nil, fmt.Errorf("cpu: no built-in kernel %q: %w", name, backend.ErrInvalidValue)
}
