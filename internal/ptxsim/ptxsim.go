// Package ptxsim is the PTX simulator the tests run the library's generated kernels on
// when there is no GPU: one parser, exact numerics, and a scheduler that runs blocks
// of threads with real barrier, warp-synchronous and memory semantics, so that a
// kernel's text is checked bit for bit against Go code (its spec's CPU implementation).
// Package simdev puts it behind a fake CUDA device; package spectest compares a kernel
// spec's PTX with its CPU implementation.
//
// # Execution
//
// A launch runs its blocks in order, at most Config.Resident at a time, each block on
// its own goroutine, so that inter-block protocols (decoupled look-back: blocks
// spinning on flags earlier blocks publish; ticket counters) really run concurrently.
// Inside a block the threads are scheduled cooperatively: each runs until it reaches a
// barrier or a warp-synchronous instruction, exits, or uses up a slice of instructions
// (so that spin loops make progress). A warp-synchronous instruction (shfl.sync,
// vote.sync, match.sync, redux.sync, bar.warp.sync) executes when every lane of its
// membermask waits at that instruction with that mask; a barrier (bar.sync, bar.red)
// opens when every live thread of the block waits at it (or its thread count arrived):
// threads that exited count as arrived, PTX's rule for exit.
// What a GPU leaves undefined is a fault here: lanes of a mask at different
// instructions, a lane of the mask exited or past the block, a thread that waits for
// ever (a deadlock is reported at once).
//
// # Memory
//
// Global memory is what Memory provides: Regions (byte slices at chosen addresses),
// simdev's host memory, or a test's own. Strong accesses (ld/st .volatile, .relaxed,
// .acquire, .release; atom, red) and fences are serialized by a lock per launch, which
// is also the happens-before edge Go's race detector sees: a kernel that orders plain
// accesses of different blocks only through such operations (flags, tickets) is quiet
// under -race, and one that races plain accesses across blocks is reported by it.
// Shared memory is the block's own: .shared variables (module or kernel scope) at
// offsets from 0, then the dynamic .extern .shared memory; cvta maps it to generic
// addresses. It starts poisoned (bytes 0xCD), as a GPU's holds what an earlier block
// left. Every shared access is checked for hazards (racecheck's): two accesses to
// a byte by different threads, one a plain write, with no bar.sync between them (for
// threads of one warp, no bar.warp.sync either) fault; atomics don't conflict with
// atomics. Accesses must be in bounds and aligned to their size.
//
// # Numerics
//
// Integer, bit and IEEE floating-point arithmetic follow the PTX ISA: every rounding
// modifier, .ftz, float16 and bfloat16 arithmetic and conversions (exact rounding in
// round.go), with these choices where the manual leaves results to the hardware:
//   - float results that are NaN are the canonical NaN (0x7fffffff,
//     0x7fffffffffffffff, 0x7fff), as NVIDIA GPUs produce; neg, abs and copysign only
//     touch the sign bit; min/max order -0 below +0;
//   - integer division by zero and MinInt / -1 (div and rem) give the poison value
//     0xdead...: a kernel must not rely on them;
//   - .approx instructions (rsqrt, rcp, ex2, lg2, sin, cos, tanh) give the correctly
//     rounded result: code that needs exact results refines them.
//
// # Instructions
//
// mov ld st atom red cvta isspacep fence membar nanosleep; add sub mul mad fma div rem
// neg abs min max sqrt rsqrt rcp ex2 lg2 sin cos tanh copysign testp; and or xor not
// cnot lop3 shl shr shf bfe bfi prmt clz popc bfind brev; setp selp cvt; bra call ret
// exit trap; bar (sync, red, warp.sync) barrier shfl vote match redux activemask;
// createpolicy.fractional (ld's .L2::cache_hint operand ignored: no caches);
// griddepcontrol (launch_dependents and wait: nothing to do, a launch runs after the one
// before it has completed); cp.async (landing when its thread waits for its group),
// ldmatrix, mma.sync
// (m16n8k16 of f16/bf16, m16n8k8 of tf32, float32 accumulators; mma.go) and
// cvt.rna.tf32.f32; packed .f16x2 and .bf16x2 add, sub, mul and fma; the special
// registers of sched.go. Not there (yet): local memory, wmma and the other mma shapes,
// textures, the other packed half instructions, setp's second destination
// and boolean combination, cvt.sat and the mixed-width integer forms (mul24, addc).
//
// # Adding an instruction
//
// Instructions are compiled once, at parse time, into closures. compilers (exec.go)
// maps an opcode's first part ("add", "shfl") to its compiler, which reads the
// modifiers (in.parts) and operands (in.args) and returns the function that executes
// the instruction for one thread: t.val reads an operand, t.set writes a register,
// t.load and t.store access memory by state space, faultf reports a fault. A
// warp-synchronous instruction instead returns arriveWarp(...), whose resolve function
// runs once for the whole group when its lanes have arrived (warp.go has the
// examples); a block-wide one sets in.coll as compileBar does. Write the semantics from
// the PTX ISA, reject the modifiers you don't implement (an error at parse time beats a
// silently wrong result), and add a case to the tests (numerics_test.go: a line for an
// ALU instruction; sched_test.go for the rest).
package ptxsim

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sort"
)

// Memory is the global memory a kernel runs on. Load fills b from addr; Store writes b
// at addr. Both report an access outside the memory as an error. Blocks call them
// concurrently (see the package doc for which accesses are serialized).
type Memory interface {
	Load(addr uint64, b []byte) error
	Store(addr uint64, b []byte) error
}

// ErrFault wraps every run-time error of a kernel: a bad access, a deadlock, an
// unsupported operation met at run time, a thread past its instruction budget.
var ErrFault = errors.New("ptxsim: fault")

// Config is a launch's geometry and limits.
type Config struct {
	Grid, Block [3]uint32 // blocks and threads per block in x, y, z (0 counts as 1)
	SharedMem   int       // bytes of dynamic (.extern .shared) shared memory
	// Resident is how many blocks run at once (default 4): blocks start in order, so
	// a block that waits for a later one deadlocks when it is not resident, as on a
	// GPU without enough occupancy.
	Resident int
	// MaxSteps bounds the instructions one thread executes (default DefaultMaxSteps):
	// a thread past it (an endless loop, a wait no other block will end) faults.
	MaxSteps int
}

// DefaultMaxSteps is Config.MaxSteps's default.
const DefaultMaxSteps = 50_000_000

// Linear returns the configuration of a one-dimensional launch.
func Linear(grid, block int) Config {
	return Config{Grid: [3]uint32{uint32(grid), 1, 1}, Block: [3]uint32{uint32(block), 1, 1}}
}

// Dim is one thread's position for Run: thread Tid of a block of Ntid threads, block
// Ctaid of a grid of Nctaid blocks (x only).
type Dim struct {
	Tid, Ntid, Ctaid, Nctaid uint32
}

// Launch runs kernel f over a grid with one argument per parameter (its bits,
// zero-extended; see LaunchParams for by-value parameters larger than 8 bytes) and
// returns the first fault, wrapping ErrFault.
func (f *Func) Launch(mem Memory, cfg Config, args []uint64) error {
	ps, err := f.packArgs(args)
	if err != nil {
		return err
	}
	return f.LaunchParams(mem, cfg, ps)
}

// Run executes one thread of kernel f alone, for kernels whose threads are
// independent (no barrier, warp-synchronous instruction or shared memory: those
// fault), and returns the number of instructions it executed. Tests use it to run a
// few threads of a launch too large to run whole.
func (f *Func) Run(mem Memory, d Dim, args []uint64) (steps int, err error) {
	ps, err := f.packArgs(args)
	if err != nil {
		return 0, err
	}
	cfg := Linear(int(d.Nctaid), int(d.Ntid))
	l, err := f.newLaunch(mem, cfg, ps)
	if err != nil {
		return 0, err
	}
	t := l.newThread(nil, int(d.Tid), make([]uint64, len(f.regWidth)))
	t.ctaid = [3]uint32{d.Ctaid}
	defer func() {
		if r := recover(); r != nil {
			steps, err = t.steps, l.report(r, int(d.Ctaid), t)
		}
	}()
	t.start()
	t.runSlice(-1)
	return t.steps, nil
}

// packArgs turns one value per parameter into parameter bytes.
func (f *Func) packArgs(args []uint64) ([][]byte, error) {
	if len(args) != len(f.Params) {
		return nil, fmt.Errorf("ptxsim: %s takes %d arguments, got %d", f.Name, len(f.Params), len(args))
	}
	ps := make([][]byte, len(args))
	for i, p := range f.Params {
		if p.Size > 8 {
			return nil, fmt.Errorf("ptxsim: %s: parameter %s is %d bytes: use LaunchParams", f.Name, p.Name, p.Size)
		}
		ps[i] = binary.LittleEndian.AppendUint64(nil, args[i])[:p.Size]
	}
	return ps, nil
}

// Regions is a Memory made of byte slices mapped at chosen addresses.
type Regions struct {
	regs []region
}

type region struct {
	base uint64
	b    []byte
}

// Map maps b at address base. Regions must not overlap; Map must not run during a
// launch on m.
func (m *Regions) Map(base uint64, b []byte) {
	m.regs = append(m.regs, region{base, b})
	sort.Slice(m.regs, func(i, j int) bool { return m.regs[i].base < m.regs[j].base })
}

// span returns the n bytes mapped at addr, or an error if they are not all mapped.
func (m *Regions) span(addr uint64, n int) ([]byte, error) {
	i := sort.Search(len(m.regs), func(i int) bool { return m.regs[i].base > addr }) - 1
	if i >= 0 {
		r := m.regs[i]
		if addr+uint64(n) <= r.base+uint64(len(r.b)) && addr+uint64(n) >= addr {
			return r.b[addr-r.base : addr-r.base+uint64(n)], nil
		}
	}
	return nil, fmt.Errorf("%d bytes at %#x outside the mapped memory", n, addr)
}

// Load implements Memory.
func (m *Regions) Load(addr uint64, b []byte) error {
	s, err := m.span(addr, len(b))
	copy(b, s)
	return err
}

// Store implements Memory.
func (m *Regions) Store(addr uint64, b []byte) error {
	s, err := m.span(addr, len(b))
	copy(s, b)
	return err
}

func getLE(b []byte) uint64 {
	var x [8]byte
	copy(x[:], b)
	return binary.LittleEndian.Uint64(x[:])
}

func putLE(b []byte, v uint64) {
	for i := range b {
		b[i] = byte(v >> (8 * i))
	}
}
