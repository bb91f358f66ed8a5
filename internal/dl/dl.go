package dl

import (
	"errors"
	"fmt"
	"strings"
	"unsafe"
)

// MaxArgs is the most arguments one call passes.
const MaxArgs = 24

// Available reports whether this build can load libraries and call into them.
const Available = Mechanism != ""

// ErrUnavailable is matched by the errors of Open in a build that cannot load libraries
// (see Mechanism).
var ErrUnavailable = errors.New("dl: no run-time loading of C libraries in this build")

// Lib is a shared library opened with Open.
type Lib struct {
	h    uintptr
	name string
}

// Open opens the shared library name (a file name searched by the dynamic linker, or a
// path) with RTLD_NOW | RTLD_LOCAL: every symbol resolves at once, and none is made
// available to libraries loaded later (POSIX: dlopen). The error is dlerror's text,
// which names the file.
func Open(name string) (*Lib, error) {
	if !Available {
		return nil, fmt.Errorf("dl: opening %s: %w (built without cgo for %s, or with the tag gpu_nodlopen)", name, ErrUnavailable, platform)
	}
	h, err := dlopen(name)
	if err != nil {
		return nil, err
	}
	return &Lib{h: h, name: name}, nil
}

// Name returns the name Open was given.
func (l *Lib) Name() string { return l.name }

// Lookup returns the address of the symbol, 0 if the library has none (POSIX: dlsym).
func (l *Lib) Lookup(symbol string) uintptr { return dlsym(l.h, symbol) }

// Close closes the library (POSIX: dlclose). Nothing bound from it may be called
// afterwards.
func (l *Lib) Close() error { return dlclose(l.h) }

// PathOf returns the file of the loaded object that holds address addr, such as the
// full path of a library found through the search path, or "" (GNU: dladdr).
func PathOf(addr uintptr) string {
	if !Available || addr == 0 {
		return ""
	}
	return dladdrPath(addr)
}

// Table is the entry points of one library, declared once, as package variables of the
// binding, one line each:
//
//	var (
//		api        dl.Table
//		cuInit     = api.Func("cuInit")
//		cuMemAlloc = api.Func("cuMemAlloc_v2")
//		cuEventElapsedTime = api.Func("cuEventElapsedTime_v2", "cuEventElapsedTime")
//		ncclCommSplit      = api.Optional("ncclCommSplit")
//	)
//
// Bind resolves them all once the library is open. The zero Table is empty and ready
// to use.
type Table struct {
	funcs []*Func
}

// Func declares a required entry point: the first of names that the library has (a
// versioned name first, then older ones). Bind fails if it has none.
func (t *Table) Func(names ...string) *Func { return t.add(false, names) }

// Optional declares an entry point the library may lack (an older release): Bind leaves
// it unbound and the binding checks Func.Bound before calling it.
func (t *Table) Optional(names ...string) *Func { return t.add(true, names) }

func (t *Table) add(optional bool, names []string) *Func {
	if len(names) == 0 {
		panic("dl: an entry point needs a name")
	}
	f := &Func{names: names, optional: optional}
	t.funcs = append(t.funcs, f)
	return f
}

// Funcs returns the table's entry points in declaration order.
func (t *Table) Funcs() []*Func { return t.funcs }

// Bind resolves every entry point in l. It returns an error naming the required entry
// points l lacks (then nothing is bound). Bind must complete before any call through
// the table, and must not run concurrently with one: bindings call it once, under a
// sync.Once, before their first call.
func (t *Table) Bind(l *Lib) error {
	addrs := make([]uintptr, len(t.funcs))
	used := make([]string, len(t.funcs))
	var missing []string
	for i, f := range t.funcs {
		for _, n := range f.names {
			if p := l.Lookup(n); p != 0 {
				addrs[i], used[i] = p, n
				break
			}
		}
		if addrs[i] == 0 && !f.optional {
			missing = append(missing, strings.Join(f.names, " or "))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%s lacks %s", l.name, strings.Join(missing, ", "))
	}
	for i, f := range t.funcs {
		f.addr, f.bound = addrs[i], used[i]
	}
	return nil
}

// Func is one entry point of a Table.
type Func struct {
	names    []string
	optional bool
	addr     uintptr
	bound    string
}

// Name returns the name the entry point was bound under, or before Bind (or if absent)
// its first name.
func (f *Func) Name() string {
	if f.bound != "" {
		return f.bound
	}
	return f.names[0]
}

// Bound reports whether the entry point was found by Bind.
func (f *Func) Bound() bool { return f.addr != 0 }

// Addr returns the entry point's address, 0 if it is not bound.
func (f *Func) Addr() uintptr { return f.addr }

// Current is a library's notion of the calling thread's current context, such as the
// CUDA driver's (CUDA Driver API: cuCtxGetCurrent, cuCtxSetCurrent): Get has the C
// signature int(void **out) and Set int(void *ctx), both returning 0 on success. The
// thread a goroutine runs on can change between two calls, so a call that needs a
// context makes it current in the same crossing into C (Func.CallIn).
type Current struct {
	Get, Set *Func
}

// frame is the argument block of one call, read by the trampoline (the layout is shared
// with the C and assembly trampolines).
type frame struct {
	fn, get, set, ctx uintptr        // the function; the context prologue (get == 0: none)
	n                 uintptr        // the number of arguments
	r                 uintptr        // the result register on return
	args              unsafe.Pointer // the n arguments, on the caller's stack
	reps              uintptr        // calls of fn, stopping at a non-zero int result
}

//go:nosplit
func (f *Func) unbound() {
	panic("dl: call of " + f.Name() + ", which is not bound (library not loaded, or an optional entry point it lacks)")
}

//go:nosplit
func tooMany(n int) {
	panic("dl: too many arguments to a C call: " + itoa(n))
}

//go:nosplit
func itoa(n int) string {
	var b [20]byte
	i := len(b)
	for {
		i--
		b[i] = byte('0' + n%10)
		if n /= 10; n == 0 {
			break
		}
	}
	return string(b[i:])
}

// GoString returns a copy of the NUL-terminated C string at p, "" for 0.
func GoString(p uintptr) string {
	if p == 0 {
		return ""
	}
	s := Pointer(p)
	n := 0
	for *(*byte)(unsafe.Add(s, n)) != 0 {
		n++
	}
	return string(unsafe.Slice((*byte)(s), n))
}

// Pointer returns the C address p as a pointer. p must be the address of memory that
// C allocated (or 0), never of Go memory.
func Pointer(p uintptr) unsafe.Pointer {
	return *(*unsafe.Pointer)(unsafe.Pointer(&p))
}
