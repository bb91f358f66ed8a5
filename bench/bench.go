// Package bench is the harness behind cmd/gpubench: a registry of benchmarks, a
// runner that warms them up, calibrates and samples them, and the outputs (an
// aligned table, Go benchmark format for benchstat, JSON, a comparison with an
// earlier run, CuPy and PyTorch figures measured on the same machine, and an
// SVG chart).
//
// # Names
//
// Benchmarks keep Metal.jl's CI suite names where one exists
// (array/reductions/reduce/Float32/dims=1, kernel/launch, ...), so figures
// compare with Metal.jl's and with each other across runs. Julia is
// column-major: Julia's dims=1 is our last axis. Our own rows, at 2^28 elements
// (a 16384x16384 array, or its flattened vector for the 1d benchmarks), carry
// the suffix [LargeSuffix] ("/16k"). Metal.jl's own "L" names (dims=1L,
// dims=2L) keep Metal.jl's meaning: its 3x1000000 long matrix. [PeerNames] maps
// names onto the keys of the peer figures. On the CPU backend the "/16k" rows
// run at [ReducedLargeSide] (-large chooses): size them from [Env.Side] in
// Setup and set [Env.Bytes] to match.
//
// A raw driver baseline measured in the same run carries the prefix "raw/"
// and our name ("raw/sync/stream/cuStreamSynchronize" beside
// "sync/stream/blocking"); ours names it in [Benchmark.Baseline], and the two
// share an [Benchmark.Interleave] group so that they are sampled in turn.
//
// # Registering
//
// Suites register benchmarks from init functions, usually one file per group
// in package main of cmd/gpubench:
//
//	func init() {
//		var rot *bench.Rotation[*gpu.Array[float32]]
//		bench.Register(bench.Benchmark{
//			Name:  "array/reductions/reduce/Float32/dims=1/16k",
//			Bytes: 16384*16384*4 + 16384*4, // read the input, write the sums
//			Mode:  bench.GPU,                // device events around the work
//			Setup: func(env *bench.Env) error {
//				// make bench.SetsFor(setBytes, l2Bytes) inputs, then
//				rot = bench.NewRotation(inputs...)
//				return nil
//			},
//			Body: func() error { _, err := gpu.Sum(s, rot.Next(), gpu.Axis(1)); return err },
//		})
//	}
//
// # Timing
//
// A benchmark in [GPU] mode is timed by the run's [Timer] (device events, from
// the runtime) around a sample of calls; one in [Host] mode by the host clock
// around the calls and a synchronize ([HostTimer]), which is what latency
// benchmarks want. A benchmark may bring its own [Benchmark.Timer] (a
// HostTimer that synchronizes a stream of its own, say). Where the open hook
// gives no event timer, GPU mode falls back to the host timer and results say
// so (Result.Timing).
//
// Benchmarks that share an [Benchmark.Interleave] group (ours and its raw
// driver baseline) are sampled in turn, one sample of each per round, so that
// the machine's drift hits them alike; a benchmark whose Setup returns
// [ErrSkip] (a CUDA baseline on the CPU backend) is listed as skipped.
//
// Each benchmark is warmed up (both a minimum number of calls and a minimum
// time), its calls per sample are calibrated so that a sample lasts at least
// Config.MinSampleTime (as testing.B grows b.N), and then samples are taken
// until the time budget or the sample count is reached. Every sample is kept;
// the statistics are per call.
package bench

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"unicode"
)

// Mode says how a benchmark is timed.
type Mode int

const (
	// GPU times the work with the run's device timer (events recorded before
	// and after a sample). Use it for throughput: kernels, copies, operations.
	GPU Mode = iota
	// Host times the work with the host clock around the calls and a
	// synchronize. Use it for latency: launch cost, synchronization, round
	// trips that include the host.
	Host
)

// String returns "GPU" or "Host".
func (m Mode) String() string {
	switch m {
	case GPU:
		return "GPU"
	case Host:
		return "Host"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// MarshalText encodes the mode as its name.
func (m Mode) MarshalText() ([]byte, error) {
	if m != GPU && m != Host {
		return nil, fmt.Errorf("bench: invalid mode %d", int(m))
	}
	return []byte(m.String()), nil
}

// UnmarshalText decodes a mode from its name.
func (m *Mode) UnmarshalText(b []byte) error {
	switch string(b) {
	case "GPU":
		*m = GPU
	case "Host":
		*m = Host
	default:
		return fmt.Errorf("bench: unknown mode %q", b)
	}
	return nil
}

// Env is handed to a benchmark's Setup and Teardown.
type Env struct {
	// Backend is the -backend flag: "auto", "cpu" or "cuda".
	Backend string
	// Device is the runtime's handle for the device under test (whatever the
	// command's open hook returned in Target.Handle); nil for host-only runs.
	Device any
	// Timer is the run's timer for GPU-mode benchmarks (nil: host clock).
	Timer Timer
	// Sync waits for all work queued on the device; never nil.
	Sync SyncFunc
	// LargeSide is the side of the square arrays the LargeSuffix benchmarks
	// use in this run: LargeSide (16384) on a GPU, ReducedLargeSide on the
	// CPU backend, or what -large asked for. Zero means LargeSide.
	LargeSide int
	// Bytes is the benchmark's Bytes. Setup may change it, like
	// testing.B.SetBytes, when the size is only known once the device is
	// open (a LargeSuffix benchmark at a reduced size); the result reports
	// the value Setup left. Each benchmark gets its own Env, so this does not
	// leak into the next one.
	Bytes int64
	// Flops is the benchmark's Flops, which Setup may change likewise.
	Flops int64
	// PeakFlops is the device's peak rate for this benchmark's arithmetic, in
	// FLOP/s (0: unknown), which Setup may set: the result reports the
	// fraction of it reached.
	PeakFlops float64
}

// Side returns e.LargeSide, or LargeSide when it is zero.
func (e *Env) Side() int {
	if e == nil || e.LargeSide <= 0 {
		return LargeSide
	}
	return e.LargeSide
}

// ErrSkip, returned (or wrapped) by a Setup, skips the benchmark on this
// device: a raw CUDA driver baseline on the CPU backend, say. A skipped
// benchmark has no result; the report lists it with the error's text as the
// reason, and the run does not count as failed.
var ErrSkip = errors.New("skipped")

// Benchmark describes one benchmark.
type Benchmark struct {
	// Name is the benchmark's name, Metal.jl's where one exists: slash
	// separated, no spaces, not ending in "-<digits>" (benchstat would read
	// that as GOMAXPROCS).
	Name string
	// Group is the benchmark's group ("array", "kernel", "sync", "host", ...).
	// Empty means the first element of Name.
	Group string
	// Bytes is the number of bytes one call moves through device memory, read
	// plus written, counting each input read once and each output written
	// once. Zero for latency benchmarks; GB/s is then not reported.
	Bytes int64
	// Flops is the number of floating-point operations one call performs (a
	// matrix product of m x k by k x n: 2mnk). When set, the result reports
	// TFLOP/s, and its fraction of PeakFlops when that is known too.
	Flops int64
	// Mode selects the timing: GPU (device events) or Host (host clock and a
	// synchronize).
	Mode Mode
	// Iters fixes the number of calls per sample. Zero calibrates it so that
	// a sample lasts at least Config.MinSampleTime.
	Iters int
	// Reference marks the device-to-device copy whose GB/s is the reference
	// bandwidth ("% of copy"). The runner runs it first when the run is not
	// given a reference bandwidth. At most one benchmark should be marked.
	Reference bool
	// Timer, if not nil, times this benchmark instead of the run's timer (GPU
	// mode) or the run's host timer (Host mode): events on the benchmark's
	// own stream, or a HostTimer whose Sync waits for a stream the run's Sync
	// does not cover (a raw driver baseline on a stream of its own). In Host
	// mode the result's timing is "host" whatever the timer.
	Timer Timer
	// Interleave, if not empty, names a group of benchmarks that are sampled
	// in turn: ours and its raw driver baseline, say. The group runs when
	// its first member is reached: each member is set up and warmed up, then
	// the runner takes one sample of each member in registration order,
	// round after round, until every member has its samples (the budget is
	// Benchtime per member), so that drift of the machine (clocks, other
	// load) hits them alike and their medians compare fairly. Each member
	// keeps its own result, in its own place in the run order. The
	// reference benchmark is always measured alone.
	Interleave string
	// Baseline, if not empty, is the name of the benchmark this one is
	// compared with in the same run (a raw driver call doing the same work).
	// When both ran, the result's VsBaseline is this median over the
	// baseline's, and the table shows it.
	Baseline string
	// Setup, if not nil, runs once before the warm-up. An error skips the
	// benchmark and is reported.
	Setup func(env *Env) error
	// Teardown, if not nil, runs once after the last sample, also after an
	// error in the body, whenever Setup succeeded.
	Teardown func(env *Env) error
	// Body does one call of the work. It must not synchronize in GPU mode
	// unless the synchronization is what is measured.
	Body func() error
}

// group returns b.Group, or the first element of b.Name.
func (b *Benchmark) group() string {
	if b.Group != "" {
		return b.Group
	}
	g, _, _ := strings.Cut(b.Name, "/")
	return g
}

// ValidName reports whether name can be used as a benchmark name, and if not, why.
func ValidName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("empty name")
	case strings.HasPrefix(name, "/") || strings.HasSuffix(name, "/") || strings.Contains(name, "//"):
		return fmt.Errorf("name %q has an empty element", name)
	case strings.IndexFunc(name, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0:
		return fmt.Errorf("name %q contains a space or control character", name)
	}
	if i := strings.LastIndexByte(name, '-'); i >= 0 && i+1 < len(name) &&
		strings.Trim(name[i+1:], "0123456789") == "" {
		return fmt.Errorf("name %q ends in -<digits>, which benchstat reads as GOMAXPROCS", name)
	}
	return nil
}

// Registry holds benchmarks in registration order. The zero value is ready to use.
type Registry struct {
	mu     sync.Mutex
	list   []Benchmark
	byName map[string]int
}

// Default is the registry that Register adds to and cmd/gpubench runs.
var Default = &Registry{}

// Register adds b to the Default registry. It panics if b is invalid or its
// name is taken; call it from init functions.
func Register(b Benchmark) { Default.Register(b) }

// Register adds b to r. It panics if b has an invalid name, no body, an
// invalid mode, negative bytes or iterations, or a name already registered.
func (r *Registry) Register(b Benchmark) {
	if err := ValidName(b.Name); err != nil {
		panic("bench: Register: " + err.Error())
	}
	if b.Body == nil {
		panic("bench: Register " + b.Name + ": nil Body")
	}
	if b.Mode != GPU && b.Mode != Host {
		panic(fmt.Sprintf("bench: Register %s: invalid mode %d", b.Name, int(b.Mode)))
	}
	if b.Bytes < 0 || b.Iters < 0 {
		panic("bench: Register " + b.Name + ": negative Bytes or Iters")
	}
	b.Group = b.group()
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.byName == nil {
		r.byName = make(map[string]int)
	}
	if _, dup := r.byName[b.Name]; dup {
		panic("bench: Register: duplicate benchmark " + b.Name)
	}
	r.byName[b.Name] = len(r.list)
	r.list = append(r.list, b)
}

// All returns every registered benchmark in registration order.
func (r *Registry) All() []Benchmark {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.list)
}

// Lookup returns the benchmark with the given name.
func (r *Registry) Lookup(name string) (Benchmark, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	i, ok := r.byName[name]
	if !ok {
		return Benchmark{}, false
	}
	return r.list[i], true
}

// Select returns the benchmarks whose full name matches re (unanchored, like
// grep; a nil re selects all), in registration order.
func (r *Registry) Select(re *regexp.Regexp) []Benchmark {
	var out []Benchmark
	for _, b := range r.All() {
		if re == nil || re.MatchString(b.Name) {
			out = append(out, b)
		}
	}
	return out
}

// Reference returns the first benchmark marked Reference.
func (r *Registry) Reference() (Benchmark, bool) {
	for _, b := range r.All() {
		if b.Reference {
			return b, true
		}
	}
	return Benchmark{}, false
}
