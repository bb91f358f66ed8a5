package gpu

import (
	"fmt"
	"sync"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/random"
)

// Generator is a counter-based random number generator: Philox4x32-10 with (seed,
// offset) state (Salmon et al., SC 2011), giving the same numbers on the CPU and on
// CUDA for the same seed. Each request advances the offset by the Philox blocks it
// used, so requests never overlap. A Generator is safe for concurrent use; requests
// made from several goroutines get disjoint numbers in the order they are made. See
// package random for the exact mapping of elements to blocks. A request captured into
// a graph is made at each launch of the graph, not at the capture (Graph.Launch).
//
// A nil *Generator is never valid: the operations given one, and SetState, return an
// error wrapping ErrInvalidValue, and State returns (0, 0).
type Generator struct {
	mu     sync.Mutex
	seed   uint64
	offset uint64
}

// NewGenerator returns a generator with the given seed and offset 0.
func NewGenerator(seed uint64) *Generator { return &Generator{seed: seed} }

// State returns the generator's seed and offset ((0, 0) for a nil generator).
func (g *Generator) State() (seed, offset uint64) {
	if g == nil {
		return 0, 0
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.seed, g.offset
}

// SetState sets the generator's seed and offset, for example to a State saved earlier:
// the requests that follow give the numbers they gave after that State (NumPy's
// bit_generator.state, PyTorch's Generator.set_state). It returns an error wrapping
// ErrInvalidValue for a nil generator.
func (g *Generator) SetState(seed, offset uint64) error {
	if g == nil {
		return fmt.Errorf("gpu: SetState of a nil generator: %w", ErrInvalidValue)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.seed, g.offset = seed, offset
	return nil
}

// reserve returns the seed and offset of a request of the given Philox blocks,
// advancing the generator past it.
func (g *Generator) reserve(blocks uint64) (seed, offset uint64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	seed, offset = g.seed, g.offset
	g.offset += blocks
	return
}

// randSpec adapts a random.Spec to the kernel cache.
type randSpec struct {
	sp      random.Spec
	index64 bool
	waves   int            // Tuning.RandomWaves or RandomUniformWaves: the grid's limit (not part of the kernel)
	opts    random.Options // the kernel choices (Tuning.RandomHalfUniform)
}

func (r randSpec) Key() string {
	return fmt.Sprintf("rand|%v|%v|%d|%v|h%d", r.sp.Dist, r.sp.Type, boolToU64(r.index64), r.sp.KernelName(r.index64), r.opts.HalfUniform)
}

func (r randSpec) PTX(major, minor int) (string, string, error) {
	k, err := r.sp.KernelOptions(major, minor, r.index64, r.opts)
	if err != nil {
		return "", "", err
	}
	return k.PTX, k.Name, nil
}

func (r randSpec) Geometry(n, sms int) (int, int) {
	blocks := int(r.sp.Blocks(int64(n)))
	return max(1, min((blocks+255)/256, r.waves*8*max(1, sms))), 256
}

func (r randSpec) CPU() (func(*cpu.Launch) error, error) {
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(1))
		seed, offset := l.Uint64(2), l.Uint64(3)
		sp := r.sp
		if sp.Dist == random.Range {
			sp.Lo, sp.Hi = int64(l.Uint64(4)), int64(l.Uint64(5))
		}
		size := sp.Type.Size()
		out := l.Mem(0)
		if len(out) < n*size {
			return fmt.Errorf("gpu: random fill past its buffer")
		}
		var err error
		var once sync.Once
		l.Parallel(n, 1<<14, func(lo, hi int) {
			if e := random.FillBytes(sp, out[lo*size:hi*size], seed, offset, int64(lo)); e != nil {
				once.Do(func() { err = e })
			}
		})
		return err
	}, nil
}

// errNilGenerator is the error of random numbers asked of a nil *Generator.
var errNilGenerator = fmt.Errorf("gpu: random numbers from a nil Generator: %w", ErrInvalidValue)

// randFill fills a with numbers of sp from g, on s.
func randFill[T Elem](s *Stream, g *Generator, a *Array[T], sp random.Spec) error {
	if err := nilStream(s); err != nil {
		return err // before the launch reserves: a failed call leaves the generator's offset as it was
	}
	if err := nonNil(a); err != nil {
		return err
	}
	if g == nil {
		return errNilGenerator
	}
	if err := sp.Validate(); err != nil {
		return fmt.Errorf("gpu: %v: %w", err, ErrInvalidValue)
	}
	if a.hasZeroStride() {
		// Checked first: a failed request leaves the generator where it was.
		return fmt.Errorf("gpu: random numbers into a broadcast view: %w", ErrInvalidValue)
	}
	n := a.Size()
	if n == 0 {
		return nil
	}
	if !a.IsContiguous() || a.hasZeroStride() {
		tmp, err := Empty[T](s, a.shape...)
		if err != nil {
			return err
		}
		defer tmp.Free()
		if err := randFill(s, g, tmp, sp); err != nil {
			return err
		}
		return Copy(s, a, tmp)
	}
	tu := s.dev.tuning()
	waves := tu.RandomUniformWaves
	if sp.Dist == random.Normal {
		waves = tu.RandomWaves
	}
	spec := randSpec{sp: sp, index64: int64(n) >= 1<<31, waves: waves, opts: random.Options{HalfUniform: tu.RandomHalfUniform}}
	fn, err := s.dev.kernel(spec)
	if err != nil {
		return err
	}
	// The seed and offset are Params marked as a draw of g: the launch, holding s,
	// reserves them from g, or in a capture leaves g as it is and registers the draw,
	// whose values each launch of the graph sets (Graph.Launch). Deciding under the
	// hold keeps a capture begun or ended meanwhile in another goroutine from taking a
	// reserved draw or running an unreserved one.
	d := &drawArgs{gen: g, blocks: sp.Blocks(int64(n))}
	d.seed, _ = NewParam(uint64(0))
	d.off, _ = NewParam(uint64(0))
	d.off.draw = d
	args := []any{Out(a), uint64(n), d.seed, d.off}
	if sp.Dist == random.Range {
		args = append(args, uint64(sp.Lo), uint64(sp.Hi))
	}
	return s.Launch(fn, s.dev.geometry(spec, n), args...)
}

// drawArgs is a random fill's launch: its seed and offset arguments are the Params seed
// and off (off.draw points back here), resolved by resolve when the launch holds its
// stream.
type drawArgs struct {
	gen       *Generator
	seed, off *Param
	blocks    uint64 // Philox blocks the fill uses (random.Spec.Blocks)
}

// resolve sets the draw's seed and offset arguments in bargs (params: the launch's
// Params): reserved from the generator outside a capture; in one, the generator's
// state, left as it is (the graph's launches set and advance it).
func (d *drawArgs) resolve(bargs []backend.Arg, params []paramSlot, capturing bool) {
	var seed, off uint64
	if capturing {
		seed, off = d.gen.State()
	} else {
		seed, off = d.gen.reserve(d.blocks)
	}
	d.resolveTo(bargs, params, seed, off)
}

// resolveTo sets the draw's seed and offset arguments in bargs to seed and off.
func (d *drawArgs) resolveTo(bargs []backend.Arg, params []paramSlot, seed, off uint64) {
	for _, ps := range params {
		switch ps.p {
		case d.seed:
			bargs[ps.i] = u64Arg(seed)
		case d.off:
			bargs[ps.i] = u64Arg(off)
		}
	}
}

// drawOf returns the draw among a launch's Params, or nil.
func drawOf(params []paramSlot) *drawArgs {
	for _, ps := range params {
		if ps.p.draw != nil {
			return ps.p.draw
		}
	}
	return nil
}

// Float is the set of float element types: float32, float64 (and named types of them),
// Float16 and BFloat16.
type Float interface {
	~float32 | ~float64 | Float16 | BFloat16
}

// Integer is the set of integer element types.
type Integer interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~int | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~uint
}

// RangeInteger is the set of element types RandInt draws bounded integers of: 32- and
// 64-bit signed integers (int is 64-bit).
type RangeInteger interface{ ~int32 | ~int64 | ~int }

// Rand returns a new array of uniform random floats in [0, 1) (never 1.0) from g
// (numpy.random.Generator.random).
func Rand[T Float](s *Stream, g *Generator, shape ...int) (*Array[T], error) {
	return newRand[T](s, g, random.Spec{Dist: random.Uniform, Type: dtype.Of[T]()}, shape)
}

// RandN returns a new array of standard normal random floats from g (Box-Muller;
// numpy.random.Generator.standard_normal).
func RandN[T Float](s *Stream, g *Generator, shape ...int) (*Array[T], error) {
	return newRand[T](s, g, random.Spec{Dist: random.Normal, Type: dtype.Of[T]()}, shape)
}

// RandInt returns a new array of random integers uniform on [lo, hi) from g, without
// modulo bias (Lemire 2019; numpy.random.Generator.integers). lo and hi must be within
// T's range, except that hi is exclusive and may be one past T's maximum (2^31 for
// int32); the whole int32 range is RandBits'. Errors wrap ErrInvalidValue.
func RandInt[T RangeInteger](s *Stream, g *Generator, lo, hi int64, shape ...int) (*Array[T], error) {
	return newRand[T](s, g, random.Spec{Dist: random.Range, Type: dtype.Of[T](), Lo: lo, Hi: hi}, shape)
}

// RandBits returns a new array of random integers over T's full range (bool: a fair
// coin).
func RandBits[T Elem](s *Stream, g *Generator, shape ...int) (*Array[T], error) {
	return newRand[T](s, g, random.Spec{Dist: random.FullRange, Type: dtype.Of[T]()}, shape)
}

func newRand[T Elem](s *Stream, g *Generator, sp random.Spec, shape []int) (*Array[T], error) {
	if err := sp.Validate(); err != nil {
		return nil, fmt.Errorf("gpu: %v: %w", err, ErrInvalidValue)
	}
	if g == nil {
		return nil, errNilGenerator
	}
	a, err := Empty[T](s, shape...)
	if err != nil {
		return nil, err
	}
	if err := randFill(s, g, a, sp); err != nil {
		a.Free()
		return nil, err
	}
	return a, nil
}

// RandInto fills a with uniform random floats in [0, 1) (rand! in Julia).
func RandInto[T Float](s *Stream, g *Generator, a *Array[T]) error {
	return randFill(s, g, a, random.Spec{Dist: random.Uniform, Type: dtype.Of[T]()})
}

// RandNInto fills a with standard normal random floats (randn! in Julia).
func RandNInto[T Float](s *Stream, g *Generator, a *Array[T]) error {
	return randFill(s, g, a, random.Spec{Dist: random.Normal, Type: dtype.Of[T]()})
}

// RandIntInto fills a with random integers uniform on [lo, hi).
func RandIntInto[T RangeInteger](s *Stream, g *Generator, a *Array[T], lo, hi int64) error {
	return randFill(s, g, a, random.Spec{Dist: random.Range, Type: dtype.Of[T](), Lo: lo, Hi: hi})
}

// RandBitsInto fills a with random integers over T's full range.
func RandBitsInto[T Elem](s *Stream, g *Generator, a *Array[T]) error {
	return randFill(s, g, a, random.Spec{Dist: random.FullRange, Type: dtype.Of[T]()})
}
