package gpu

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Matrix products.
//
// MatMul, MatMulInto, Gemm, Dot and Vdot compute with the device's matrix library where
// it has one (backend.Gemmer: cuBLAS on CUDA, loaded at run time; gonum's pure-Go BLAS
// on the CPU), else with a kernel this package generates (on CUDA: tensor cores through
// mma.sync for float16, bfloat16 and TF32, FMA tiles for float32 and float64). The
// library gets views as they are: a transposed or sliced matrix whose rows or columns
// are contiguous is passed as a transpose and a leading dimension, and batches of
// matrices as one strided batched call per run of evenly spaced matrices (broadcast
// operands with a stride of 0). Only a matrix with neither its rows nor its columns
// contiguous (a[::2, ::2], a negative stride, a broadcast row), or a leading dimension
// of 2^31 elements or more, is first copied to a contiguous array. The generated kernel
// on CUDA also copies A and B when their addresses, leading dimensions or batch strides
// are not multiples of 16 bytes (rows of an odd number of float16, say). An output C
// that cannot be written in place (neither its rows nor its columns contiguous) is
// computed into a temporary and copied in.
//
// The element types are float16 and bfloat16 (accumulated in float32, rounded once),
// float32 and float64. Float32 products are exact float32 by default; PrecisionHigh
// (per device with SetFloat32MatMulPrecision, or per call with WithPrecision) lets them
// use TF32 tensor cores, as PyTorch's set_float32_matmul_precision("high") does.
//
// Every product a_ik*b_kj counts, as IEEE 754 has it, on every device and kernel: a
// zero times an Inf or a NaN is NaN, so an output whose row of a holds a zero where the
// column of b holds an Inf or a NaN (or the reverse) is NaN, as in NumPy and cuBLAS.
// (gonum's kernel skips the zeros of A; the CPU backend finds where that loses a NaN
// and recomputes those outputs: backend/cpu's gemm.go.)
//
// Every operation reads A and B and writes C through the stream's ordering of buffers
// (Gemm with beta != 0 also reads C), so products on several streams need no
// synchronization by the caller. On CUDA, a small product (under 2^32 floating-point
// operations) that a stream repeats with the same shapes, arrays, layouts and scalars is
// launched, from its second call on, as a CUDA graph of the kernels cuBLAS launched for
// it: the same kernels with the same arguments, so the same bits, without cuBLAS's
// 12-17 us of host time a call (backend/cuda's gemm_replay.go; GPU_CUBLAS_REPLAY=0 calls
// cuBLAS every time). The output must not overlap A or B: that is an error
// (numpy.matmul buffers such an output; we refuse it). Empty dimensions give an empty
// result, or zeros for an inner dimension of 0, without a launch.
//
// The environment variable GPU_MATMUL chooses what MatMulAuto uses: "auto" (the
// default: the library if there is one), "library" (or "cublas", "gonum": the library,
// an error where there is none) or "generated" (or "fallback": the generated kernel, to
// test or measure it beside the library). On CUDA, GPU_CUBLAS_API chooses the cuBLAS
// routine (cublasGemmEx, the default; cublasSgemm/Dgemm; cublasLt with the heuristic's
// algorithm or the fastest of its candidates measured on first use) and
// GPU_CUBLAS_WORKSPACE its workspace (backend/cuda's gemm_engine.go), and
// Tuning.MatMulTile (GPU_MATMUL_TILE) the generated tensor-core kernel's tiling.

// MatMulPrecision is the precision of float32 matrix products.
type MatMulPrecision uint8

const (
	// PrecisionHighest computes float32 products in float32 (the default; PyTorch's
	// "highest").
	PrecisionHighest MatMulPrecision = iota
	// PrecisionHigh allows TF32 tensor cores for float32 products: the inputs are
	// rounded to 10 mantissa bits and the products accumulated in float32, for about
	// eight times the throughput on an H200 (PyTorch's "high"). The CPU computes in
	// float32 regardless.
	PrecisionHigh
)

// String returns "highest" or "high".
func (p MatMulPrecision) String() string {
	switch p {
	case PrecisionHighest:
		return "highest"
	case PrecisionHigh:
		return "high"
	}
	return fmt.Sprintf("MatMulPrecision(%d)", uint8(p))
}

// MatMulKernel chooses what computes a matrix product.
type MatMulKernel uint8

const (
	// MatMulAuto uses the device's library (cuBLAS, gonum) if there is one, else the
	// generated kernel; GPU_MATMUL can force either.
	MatMulAuto MatMulKernel = iota
	// MatMulLibrary uses the device's library, and is an error wrapping
	// ErrNotSupported where there is none.
	MatMulLibrary
	// MatMulGenerated uses the kernel this package generates (on the CPU backend, a
	// plain Go loop nest that mirrors its accumulation).
	MatMulGenerated
)

// String returns "auto", "library" or "generated".
func (k MatMulKernel) String() string {
	switch k {
	case MatMulAuto:
		return "auto"
	case MatMulLibrary:
		return "library"
	case MatMulGenerated:
		return "generated"
	}
	return fmt.Sprintf("MatMulKernel(%d)", uint8(k))
}

// MatMulOption is an option of the matrix products.
type MatMulOption func(*mmConfig)

type mmConfig struct {
	prec    MatMulPrecision
	precSet bool
	kernel  MatMulKernel
}

// WithPrecision sets the precision of a float32 product for this call, overriding the
// device's setting; it has no effect on other types.
func WithPrecision(p MatMulPrecision) MatMulOption {
	return func(c *mmConfig) { c.prec, c.precSet = p, true }
}

// WithKernel chooses what computes this product (default MatMulAuto).
func WithKernel(k MatMulKernel) MatMulOption {
	return func(c *mmConfig) { c.kernel = k }
}

// mmPrecisions holds each device's float32 precision (a *Device key; absent:
// PrecisionHighest).
var mmPrecisions sync.Map

// SetFloat32MatMulPrecision sets the precision of the device's float32 matrix products
// (torch.set_float32_matmul_precision, per device); WithPrecision overrides it per call.
func (d *Device) SetFloat32MatMulPrecision(p MatMulPrecision) error {
	if d.isNil() {
		return errNilDevice
	}
	if p != PrecisionHighest && p != PrecisionHigh {
		return fmt.Errorf("gpu: float32 matmul precision %v: %w", p, ErrInvalidValue)
	}
	mmPrecisions.Store(d, p)
	return nil
}

// Float32MatMulPrecision returns the precision of the device's float32 matrix products
// (PrecisionHighest unless set).
func (d *Device) Float32MatMulPrecision() MatMulPrecision {
	if v, ok := mmPrecisions.Load(d); ok {
		return v.(MatMulPrecision)
	}
	return PrecisionHighest
}

// MatMulLibrary names the library the device's matrix products use and its version
// ("cuBLAS 13.1.0 (/usr/local/cuda/lib64/libcublas.so.13)", "gonum v0.17.0 (pure-Go
// BLAS)"), or returns an error wrapping ErrNotSupported that says why there is none
// (then the generated kernel computes them).
func (d *Device) MatMulLibrary() (string, error) {
	if d.isNil() {
		return "", errNilDevice
	}
	g, ok := d.be.(backend.Gemmer)
	if !ok {
		return "", fmt.Errorf("gpu: the %s backend has no matrix library: %w", d.info.Backend, ErrNotSupported)
	}
	return g.GemmLibrary()
}

// MatMul returns the matrix product of a and b with numpy.matmul's semantics: 2-D
// operands multiply as matrices ((m, k) @ (k, n) is (m, n)); operands of more
// dimensions are stacks of matrices in their last two axes, and the leading (batch)
// axes broadcast by NumPy's rules ((2, 1, m, k) @ (3, k, n) is (2, 3, m, n)); a 1-D a
// is a row vector and a 1-D b a column vector, whose added axis is removed from the
// result ((k,) @ (k, n) is (n,); (k,) @ (k,) is a 0-d array). The result is a new
// contiguous array. Errors: a 0-d operand, inner dimensions that differ or batch axes
// that don't broadcast (ErrInvalidValue, naming the shapes), an element type other than
// float16, bfloat16, float32 and float64 (ErrNotSupported), operands on another device.
func MatMul[T Elem](s *Stream, a, b *Array[T], opts ...MatMulOption) (*Array[T], error) {
	return matMul("MatMul", s, a, b, opts)
}

// matMul is MatMul for the operation name (MatMul, Dot, Vdot) that its errors give.
func matMul[T Elem](name string, s *Stream, a, b *Array[T], opts []MatMulOption) (*Array[T], error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	p, err := mmProblemOf(name, a.header(), b.header())
	if err != nil {
		return nil, err
	}
	out, err := Empty[T](s, p.out...)
	if err != nil {
		return nil, err
	}
	if err := p.run(s, 1, 0, out.header(), opts); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// MatMulInto computes MatMul(a, b) into out, whose shape must be MatMul's result shape
// exactly (any strides, no broadcast axes) and which must not overlap a or b.
func MatMulInto[T Elem](s *Stream, out, a, b *Array[T], opts ...MatMulOption) error {
	return gemm("MatMulInto", s, 1, a, b, 0, out, opts)
}

// Gemm computes c = alpha * (a @ b) + beta * c in place (BLAS's GEMM, with MatMul's
// shapes: c has the shape of MatMul(a, b)). With beta == 0, c is only written (NaN and
// Inf in it do not propagate), as in BLAS; otherwise it is read too. With alpha == 0,
// a and b are not read (c becomes beta*c, whatever NaN or Inf a and b hold), as in
// reference BLAS ("When alpha is zero then A and B need not be set on input"); their
// shapes, types and devices are still checked. alpha and beta are applied in the
// accumulation type (float32 for float16, bfloat16 and float32, the 16-bit results
// rounded once on store; backend.GemmAccumType), and alpha is zero when it is zero
// there (1e-300 for float32: backend.GemmAlphaZero), with every kernel. Errors: those
// of MatMul, a c of another shape, a c that is a broadcast view or overlaps a or b.
func Gemm[T Elem](s *Stream, alpha float64, a, b *Array[T], beta float64, c *Array[T], opts ...MatMulOption) error {
	return gemm("Gemm", s, alpha, a, b, beta, c, opts)
}

// gemm is Gemm for the operation name (Gemm, MatMulInto) that its errors give.
func gemm[T Elem](name string, s *Stream, alpha float64, a, b *Array[T], beta float64, c *Array[T], opts []MatMulOption) error {
	if err := nilStream(s); err != nil {
		return err
	}
	if err := nonNil(a, b, c); err != nil {
		return err
	}
	p, err := mmProblemOf(name, a.header(), b.header())
	if err != nil {
		return err
	}
	if !slices.Equal(c.shape, p.out) {
		return fmt.Errorf("gpu: %s of shapes %v and %v into an output of shape %v, want %v: %w",
			p.name, p.shapeA, p.shapeB, c.shape, p.out, ErrInvalidValue)
	}
	return p.run(s, alpha, beta, c.header(), opts)
}

// Dot returns the dot product of a and b as numpy.dot does for operands of at most two
// dimensions: the inner product of two vectors (a 0-d array), a matrix times a vector,
// a vector times a matrix, the product of two matrices (MatMul), or, where either is
// 0-d, their elementwise product (Multiply, broadcasting the 0-d operand: numpy.dot(2,
// a) is 2*a). Operands of more dimensions are an error wrapping ErrInvalidValue
// (numpy.dot's sum over the last axis of a and the second-to-last of b is not
// provided: use MatMul).
func Dot[T Elem](s *Stream, a, b *Array[T], opts ...MatMulOption) (*Array[T], error) {
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	if a.Ndim() > 2 || b.Ndim() > 2 {
		return nil, fmt.Errorf("gpu: Dot of shapes %v and %v: operands of at most 2 dimensions (use MatMul for stacks): %w",
			a.shape, b.shape, ErrInvalidValue)
	}
	if a.Ndim() == 0 || b.Ndim() == 0 {
		if err := nilStream(s); err != nil {
			return nil, err
		}
		if err := mmElemType("Dot", dtype.Of[T]()); err != nil {
			return nil, err
		}
		if err := mmOptions("Dot", opts, nil); err != nil {
			return nil, err
		}
		return Multiply(s, a, b)
	}
	return matMul("Dot", s, a, b, opts)
}

// Vdot returns the inner product of a and b flattened in row-major order, as a 0-d
// array (numpy.vdot for real types). They must have the same number of elements; a
// non-contiguous operand of two or more dimensions is first copied (a 1-D one, strided
// or not, is read in place).
func Vdot[T Elem](s *Stream, a, b *Array[T], opts ...MatMulOption) (*Array[T], error) {
	if err := nilStream(s); err != nil {
		return nil, err
	}
	if err := nonNil(a, b); err != nil {
		return nil, err
	}
	if a.Size() != b.Size() {
		return nil, fmt.Errorf("gpu: Vdot of shapes %v and %v: different sizes %d and %d: %w",
			a.shape, b.shape, a.Size(), b.Size(), ErrInvalidValue)
	}
	flat := func(x *Array[T]) (*Array[T], func(), error) {
		if x.Ndim() == 1 {
			return x, func() {}, nil
		}
		c, err := Contiguous(s, x)
		if err != nil {
			return nil, nil, err
		}
		done := func() {}
		if c != x {
			done = func() { c.Free() }
		}
		v, err := c.Reshape(x.Size())
		if err != nil {
			done()
			return nil, nil, err
		}
		return v, done, nil
	}
	fa, doneA, err := flat(a)
	if err != nil {
		return nil, err
	}
	defer doneA()
	fb, doneB, err := flat(b)
	if err != nil {
		return nil, err
	}
	defer doneB()
	return matMul("Vdot", s, fa, fb, opts)
}

// mmProblem is a matrix product's shapes: a and b promoted to at least two dimensions,
// the broadcast batch shape, the dimensions and numpy's output shape.
type mmProblem struct {
	name           string
	shapeA, shapeB []int // as given, for messages
	a, b           header
	batch          []int
	m, n, k        int
	out            []int
	vecA, vecB     bool // a (b) was 1-D: the result has no m (n) axis
}

// mmElemType refuses an element type the products don't take.
func mmElemType(name string, dt dtype.DType) error {
	switch dt {
	case dtype.Float16, dtype.BFloat16, dtype.Float32, dtype.Float64:
		return nil
	}
	return fmt.Errorf("gpu: %s of %v arrays: the element types are float16, bfloat16, float32 and float64: %w",
		name, dt, ErrNotSupported)
}

// mmOptions applies opts to cfg (nil: checks only), refusing a nil option.
func mmOptions(name string, opts []MatMulOption, cfg *mmConfig) error {
	for _, o := range opts {
		if o == nil {
			return fmt.Errorf("gpu: %s: a nil MatMulOption: %w", name, ErrInvalidValue)
		}
		if cfg != nil {
			o(cfg)
		}
	}
	return nil
}

// mmProblemOf checks the operands of a product and returns its shapes.
func mmProblemOf(name string, a, b *header) (*mmProblem, error) {
	p := &mmProblem{name: name, shapeA: a.shape, shapeB: b.shape, a: *a, b: *b}
	if a.dt != b.dt {
		return nil, fmt.Errorf("gpu: %s of %v and %v arrays: %w", name, a.dt, b.dt, ErrInvalidValue)
	}
	if err := mmElemType(name, a.dt); err != nil {
		return nil, err
	}
	if len(a.shape) == 0 || len(b.shape) == 0 {
		return nil, fmt.Errorf("gpu: %s of shapes %v and %v: a 0-d operand (use Eval to scale): %w", name, a.shape, b.shape, ErrInvalidValue)
	}
	if len(a.shape) == 1 {
		p.vecA = true
		p.a.shape, p.a.strides = []int{1, a.shape[0]}, []int{0, a.strides[0]}
	}
	if len(b.shape) == 1 {
		p.vecB = true
		p.b.shape, p.b.strides = []int{b.shape[0], 1}, []int{b.strides[0], 0}
	}
	ra, rb := len(p.a.shape), len(p.b.shape)
	p.m, p.k = p.a.shape[ra-2], p.a.shape[ra-1]
	kb := p.b.shape[rb-2]
	p.n = p.b.shape[rb-1]
	if p.k != kb {
		return nil, fmt.Errorf("gpu: %s of shapes %v and %v: inner dimensions %d and %d differ: %w",
			name, a.shape, b.shape, p.k, kb, ErrInvalidValue)
	}
	batch, err := BroadcastShapes(p.a.shape[:ra-2], p.b.shape[:rb-2])
	if err != nil {
		return nil, fmt.Errorf("gpu: %s of shapes %v and %v: batch dimensions %v and %v don't broadcast: %w",
			name, a.shape, b.shape, p.a.shape[:ra-2], p.b.shape[:rb-2], ErrInvalidValue)
	}
	p.batch = batch
	if _, err := checkShape(append(slices.Clone(batch), p.m, p.n)); err != nil {
		return nil, err
	}
	p.out = slices.Clone(batch)
	if !p.vecA {
		p.out = append(p.out, p.m)
	}
	if !p.vecB {
		p.out = append(p.out, p.n)
	}
	return p, nil
}

// cView returns c (of shape p.out) viewed as batch + (m, n).
func (p *mmProblem) cView(c *header) header {
	v := *c
	nb := len(p.batch)
	v.shape = append(slices.Clone(p.batch), p.m, p.n)
	v.strides = append(slices.Clone(c.strides[:nb]), 0, 0)
	i := nb
	if !p.vecA {
		v.strides[nb] = c.strides[i]
		i++
	}
	if !p.vecB {
		v.strides[nb+1] = c.strides[i]
	}
	return v
}

// matLayout says how a rows x cols matrix with strides rs, cs is given to BLAS: row
// major with leading dimension ld (element (i, j) at i*ld + j), column major (trans:
// element (i, j) at i + j*ld), or neither (ok false).
func matLayout(rows, cols, rs, cs int) (trans bool, ld int, ok bool) {
	const lim = math.MaxInt32
	switch {
	case (cs == 1 || cols <= 1) && (rows <= 1 || (rs >= max(cols, 1) && rs <= lim)):
		if rows <= 1 {
			return false, max(cols, 1), true
		}
		return false, rs, true
	case (rs == 1 || rows <= 1) && (cols <= 1 || (cs >= max(rows, 1) && cs <= lim)):
		if cols <= 1 {
			return true, max(rows, 1), true
		}
		return true, cs, true
	}
	return false, 0, false
}

// transposed returns h with its last two axes swapped.
func transposed(h header) header {
	r := len(h.shape)
	h.shape, h.strides = slices.Clone(h.shape), slices.Clone(h.strides)
	h.shape[r-1], h.shape[r-2] = h.shape[r-2], h.shape[r-1]
	h.strides[r-1], h.strides[r-2] = h.strides[r-2], h.strides[r-1]
	return h
}

// extent returns the element range [lo, hi] a view reaches in its allocation, in bytes.
func (h *header) extent() (lo, hi int64) {
	size := int64(h.dt.Size())
	base := h.buf.off + int64(h.off)*size
	lo, hi = base, base+size-1
	for d, n := range h.shape {
		if n <= 1 {
			continue
		}
		if st := int64(h.strides[d]) * int64(n-1) * size; st > 0 {
			hi += st
		} else {
			lo += st
		}
	}
	return lo, hi
}

// overlaps reports whether the memory views x and y reach can overlap.
func overlaps(x, y *header) bool {
	if x.buf.a != y.buf.a || prod(x.shape) == 0 || prod(y.shape) == 0 {
		return false
	}
	xl, xh := x.extent()
	yl, yh := y.extent()
	return xl <= yh && yl <= xh
}

// mmOperand is an operand of the backend calls: its view, and the layout chosen.
type mmOperand struct {
	h     header // batch + the stored matrix's axes, broadcast strides for the batch
	trans bool
	ld    int
}

// run computes c = alpha*(a@b) + beta*c for c of shape p.out.
func (p *mmProblem) run(s *Stream, alpha, beta float64, c *header, opts []MatMulOption) error {
	var cfg mmConfig
	if err := mmOptions(p.name, opts, &cfg); err != nil {
		return err
	}
	d := s.dev
	for _, h := range []*header{&p.a, &p.b, c} {
		if h.buf.a.dev != d {
			return fmt.Errorf("gpu: %s of an array on %v on a stream of %v: %w", p.name, h.buf.a.dev, d, ErrInvalidValue)
		}
	}
	if c.dt != p.a.dt {
		return fmt.Errorf("gpu: %s of %v arrays into a %v array: %w", p.name, p.a.dt, c.dt, ErrInvalidValue)
	}
	if hasZeroStride(c) {
		return fmt.Errorf("gpu: %s into a broadcast view of shape %v: %w", p.name, c.shape, ErrInvalidValue)
	}
	if overlaps(c, &p.a) || overlaps(c, &p.b) {
		return fmt.Errorf("gpu: %s of shapes %v and %v: the output overlaps an input: %w", p.name, p.shapeA, p.shapeB, ErrInvalidValue)
	}
	kind := cfg.kernel
	if kind == MatMulAuto {
		var err error
		if kind, err = mmKernelEnv(); err != nil {
			return err
		}
	}
	if kind > MatMulGenerated {
		return fmt.Errorf("gpu: %s with kernel %v: %w", p.name, kind, ErrInvalidValue)
	}
	prec := d.Float32MatMulPrecision()
	if cfg.precSet {
		if cfg.prec != PrecisionHighest && cfg.prec != PrecisionHigh {
			return fmt.Errorf("gpu: %s with precision %v: %w", p.name, cfg.prec, ErrInvalidValue)
		}
		prec = cfg.prec
	}
	cv := p.cView(c)
	if prod(p.batch) == 0 || p.m == 0 || p.n == 0 {
		return nil
	}
	if p.k == 0 || backend.GemmAlphaZero(p.a.dt, alpha) {
		// An empty sum, or alpha zero as the product applies it (BLAS reads neither A
		// nor B then: their NaN and Inf do not propagate), for every kernel:
		// c = beta*c in the accumulation type (float32 for the 16-bit types, rounded
		// once on store), without reading c when beta is 0.
		switch beta {
		case 1:
			return nil
		case 0:
			return evalInto(s, &cv, "z", Vars{"z": 0.0})
		}
		var b any = beta // weak: float64 for float64
		if backend.GemmAccumType(p.a.dt) == dtype.Float32 {
			b = float32(beta) // typed: float16*float32 is float32
		}
		return evalInto(s, &cv, "c*beta", Vars{"c": headerArray{&cv}, "beta": b})
	}
	var gemmer backend.Gemmer
	if kind != MatMulGenerated {
		g, ok := d.be.(backend.Gemmer)
		var why error
		if ok {
			_, why = g.GemmLibrary()
		} else {
			why = fmt.Errorf("the %s backend has no matrix library: %w", d.info.Backend, ErrNotSupported)
		}
		switch {
		case why == nil:
			gemmer = g
		case kind == MatMulLibrary:
			return fmt.Errorf("gpu: %s: %w", p.name, why)
		}
	}
	job := &mmJob{s: s, name: p.name, dt: p.a.dt, alpha: alpha, beta: beta, batch: p.batch,
		m: p.m, n: p.n, k: p.k, tf32: p.a.dt == dtype.Float32 && prec == PrecisionHigh, gemmer: gemmer}
	defer job.freeTemps()
	return job.run(p.a, p.b, cv)
}

// hasZeroStride reports whether a view has a broadcast axis (of more than one element).
func hasZeroStride(h *header) bool {
	if prod(h.shape) == 0 {
		return false
	}
	for d, st := range h.strides {
		if st == 0 && h.shape[d] > 1 {
			return true
		}
	}
	return false
}

// mmJob is one product being planned and enqueued.
type mmJob struct {
	s           *Stream
	name        string
	dt          dtype.DType
	alpha, beta float64
	batch       []int
	m, n, k     int
	tf32        bool
	gemmer      backend.Gemmer // nil: the generated kernel
	temps       []*Buffer
	fn          *Function
	spec        *kernel.MatMul
}

func (j *mmJob) freeTemps() {
	for _, b := range j.temps {
		b.Free()
	}
}

// newTemp allocates an array of shape with the given strides (row major if nil), freed
// with the job.
func (j *mmJob) newTemp(shape, strides []int, words int) (*header, error) {
	n, err := checkShape(shape)
	if err != nil {
		return nil, err
	}
	if words > 0 {
		n = words
	}
	buf, err := j.s.Alloc(int64(n * j.dt.Size()))
	if err != nil {
		return nil, err
	}
	j.temps = append(j.temps, buf)
	if strides == nil {
		strides = rowMajor(shape)
	}
	return &header{buf: buf, dt: j.dt, shape: slices.Clone(shape), strides: strides}, nil
}

// run plans the product of a (batch_a + (m, k)), b (batch_b + (k, n)) into c (batch +
// (m, n)) and enqueues it.
func (j *mmJob) run(a, b, c header) error {
	nc := len(c.shape)
	tr, ld, ok := matLayout(j.m, j.n, c.strides[nc-2], c.strides[nc-1])
	if ok && tr {
		// A column-major C is a row-major C^T = B^T A^T.
		a, b, c = transposed(b), transposed(a), transposed(c)
		j.m, j.n = j.n, j.m
		tr, ld, ok = matLayout(j.m, j.n, c.strides[nc-2], c.strides[nc-1])
	}
	var cOut *header
	if !ok || tr {
		tmp, err := j.newTemp(c.shape, nil, 0)
		if err != nil {
			return err
		}
		if j.beta != 0 {
			if err := evalIntoHeader(j.s, tmp, &c); err != nil {
				return err
			}
		}
		orig := c
		cOut, c, ld = &orig, *tmp, j.n
	}
	opA, err := j.operand(a)
	if err != nil {
		return err
	}
	opB, err := j.operand(b)
	if err != nil {
		return err
	}
	opC := mmOperand{h: c, ld: ld}
	if j.gemmer == nil {
		if err := j.prepareKernel(&opA, &opB, &opC); err != nil {
			return err
		}
	}
	if err := j.enqueue(&opA, &opB, &opC); err != nil {
		return err
	}
	if cOut != nil {
		return evalIntoHeader(j.s, cOut, &c)
	}
	return nil
}

// operand chooses x's layout (batch_x + (rows, cols)), copying x if neither its rows
// nor its columns are contiguous (or, for the generated kernel on CUDA, if they are not
// aligned for it), and broadcasts its batch axes to the job's.
func (j *mmJob) operand(x header) (mmOperand, error) {
	r := len(x.shape)
	rows, cols := x.shape[r-2], x.shape[r-1]
	tr, ld, ok := matLayout(rows, cols, x.strides[r-2], x.strides[r-1])
	if ok && j.needsAlignment() && !j.aligned(&x, ld) {
		ok = false
	}
	if !ok {
		// A row-major copy; for the generated kernel on CUDA with its rows padded to
		// 16 bytes.
		ldc := cols
		if j.needsAlignment() {
			per := kernel.MatMulAligned / x.dt.Size()
			ldc = (cols + per - 1) / per * per
		}
		st := make([]int, r)
		st[r-1], st[r-2] = 1, ldc
		words := rows * ldc
		for i := r - 3; i >= 0; i-- {
			st[i] = words
			words *= x.shape[i]
		}
		cp, err := j.newTemp(x.shape, st, max(words, 1))
		if err != nil {
			return mmOperand{}, err
		}
		if err := evalIntoHeader(j.s, cp, &x); err != nil {
			return mmOperand{}, err
		}
		x, tr, ld = *cp, false, ldc
	}
	st, err := broadcastStrides(x.shape[:r-2], x.strides[:r-2], j.batch)
	if err != nil {
		return mmOperand{}, err
	}
	x.shape = append(slices.Clone(j.batch), x.shape[r-2:]...)
	x.strides = append(st, x.strides[r-2:]...)
	return mmOperand{h: x, trans: tr, ld: ld}, nil
}

// mmAlignOnCPU makes the CPU backend's generated kernel get the aligned operands the
// CUDA kernel gets (tests of that path without a GPU).
var mmAlignOnCPU bool

// needsAlignment reports whether A and B must be 16-byte aligned: for the generated
// kernel on CUDA.
func (j *mmJob) needsAlignment() bool {
	return j.gemmer == nil && (j.s.dev.info.Backend != "cpu" || mmAlignOnCPU)
}

// tile returns the generated tensor-core kernel's tiling: the tuning's MatMulTile, or
// where that is 0 (the default), mmLargeTile for 16-bit products of at least
// mmLargeTileMin output elements per batch entry, kernel.DefaultMatMulTile otherwise
// (TF32, smaller products, whose few large tiles would leave multiprocessors idle).
func (j *mmJob) tile() int {
	if t := j.s.dev.tuning().MatMulTile; t != 0 {
		return t
	}
	if !j.tf32 && j.dt.Size() == 2 && int64(j.m)*int64(j.n) >= mmLargeTileMin {
		return mmLargeTile
	}
	return kernel.DefaultMatMulTile
}

// mmLargeTile is the 16-bit products' tiling from mmLargeTileMin output elements on:
// 128x256x64 tiles of 8 warps in 3 stages with the pipelined main loop. On the H200
// (2026-12-02, one run, against cuBLAS in the same process) bfloat16 4096^3 took 368
// against tiling 1's 447 µs (374 TFLOP/s, 53.5% of cuBLAS's 699), 8192^3 2.66 against
// 3.25 ms (414 TFLOP/s, 56% of cuBLAS's 740); float16 380 µs and 2.80 ms (55% and 57%
// of cuBLAS). mmLargeTileMin is 2048x2048: 128 such tiles, about one an SM.
const (
	mmLargeTile    = 11
	mmLargeTileMin = 2048 * 2048
)

// prepareKernel compiles the generated kernel for the operands' layouts.
func (j *mmJob) prepareKernel(a, b, c *mmOperand) error {
	d := j.s.dev
	j.spec = &kernel.MatMul{Type: j.dt, TransA: a.trans, TransB: b.trans, TF32: j.tf32, Tile: j.tile()}
	if j.spec.Tile == mmLargeTile && d.tuning().MatMulTile == 0 && j.spec.SharedBytes() > d.info.MaxSharedPerBlock {
		j.spec.Tile = kernel.DefaultMatMulTile // (a device with less shared memory a block than sm_80's)
	}
	fn, err := d.kernel(j.spec)
	if err != nil {
		return err
	}
	if err := fn.raiseSharedLimit(j.spec.SharedBytes()); err != nil {
		return err
	}
	j.fn = fn
	return nil
}

// aligned reports whether an operand (batch_x + its matrix axes) with leading
// dimension ld suits the CUDA kernel's 16-byte copies.
func (j *mmJob) aligned(x *header, ld int) bool {
	size := x.dt.Size()
	if !j.alignedBase(x) || ld*size%kernel.MatMulAligned != 0 {
		return false
	}
	for i, st := range x.strides[:len(x.strides)-2] {
		if x.shape[i] > 1 && st*size%kernel.MatMulAligned != 0 {
			return false
		}
	}
	return true
}

func (j *mmJob) alignedBase(h *header) bool {
	_, off := h.ref()
	return (h.buf.a.mem.Ptr()+uint64(off))%kernel.MatMulAligned == 0
}

// mmDim is one batch axis of a job: its size and the three operands' strides.
type mmDim struct {
	n          int
	sa, sb, sc int
}

// batchDims returns the job's batch axes with unit axes dropped and contiguous runs
// merged, outermost first.
func batchDims(batch []int, a, b, c *header) []mmDim {
	var dims []mmDim
	for i, n := range batch {
		if n == 1 {
			continue
		}
		d := mmDim{n, a.strides[i], b.strides[i], c.strides[i]}
		if len(dims) > 0 {
			last := &dims[len(dims)-1]
			if last.sa == d.sa*d.n && last.sb == d.sb*d.n && last.sc == d.sc*d.n {
				*last = mmDim{last.n * d.n, d.sa, d.sb, d.sc}
				continue
			}
		}
		dims = append(dims, d)
	}
	return dims
}

// enqueue issues the product as strided batched calls: the innermost merged batch axis
// in each call, a call per index of the others.
func (j *mmJob) enqueue(a, b, c *mmOperand) error {
	dims := batchDims(j.batch, &a.h, &b.h, &c.h)
	inner := mmDim{n: 1}
	if len(dims) > 0 {
		if last := dims[len(dims)-1]; last.sa >= 0 && last.sb >= 0 && last.sc > 0 && last.n <= math.MaxInt32 {
			inner = last
			dims = dims[:len(dims)-1]
		}
	}
	calls := 1
	for _, d := range dims {
		calls *= d.n
	}
	size := int64(j.dt.Size())
	aAlloc, aOff := a.h.ref()
	bAlloc, bOff := b.h.ref()
	cAlloc, cOff := c.h.ref()
	cmode := Write
	if j.beta != 0 {
		cmode = ReadWrite
	}
	uses := []use{{a: aAlloc, mode: Read}, {a: bAlloc, mode: Read}, {a: cAlloc, mode: cmode}}
	idx := make([]int, len(dims))
	return j.s.tracked(uses, func() error {
		for range calls {
			offA, offB, offC := aOff, bOff, cOff
			for i, d := range dims {
				offA += int64(idx[i]*d.sa) * size
				offB += int64(idx[i]*d.sb) * size
				offC += int64(idx[i]*d.sc) * size
			}
			g := backend.Gemm{
				Type: j.dt, M: j.m, N: j.n, K: j.k, Batch: inner.n,
				A:      backend.GemmOperand{Mem: aAlloc.mem, Off: offA, LD: a.ld, Stride: int64(inner.sa)},
				B:      backend.GemmOperand{Mem: bAlloc.mem, Off: offB, LD: b.ld, Stride: int64(inner.sb)},
				C:      backend.GemmOperand{Mem: cAlloc.mem, Off: offC, LD: c.ld, Stride: int64(inner.sc)},
				TransA: a.trans, TransB: b.trans, Alpha: j.alpha, Beta: j.beta, TF32: j.tf32,
			}
			var err error
			if j.gemmer != nil {
				err = j.gemmer.Gemm(j.s.be, &g)
			} else {
				err = j.launch(&g)
			}
			if err != nil {
				return fmt.Errorf("gpu: %s: %w", j.name, err)
			}
			for i := len(idx) - 1; i >= 0; i-- {
				if idx[i]++; idx[i] < dims[i].n {
					break
				}
				idx[i] = 0
			}
		}
		return nil
	})
}

// launch enqueues g with the generated kernel.
func (j *mmJob) launch(g *backend.Gemm) error {
	if err := g.Check(); err != nil {
		return err
	}
	blocks, ok := j.spec.Blocks(g.M, g.N, g.Batch)
	if !ok {
		return fmt.Errorf("%d products of %dx%d need too many blocks: %w", g.Batch, g.M, g.N, ErrNotSupported)
	}
	u32 := func(v int) backend.Arg { return backend.Arg{Kind: backend.ArgScalar, Size: 4, Val: uint64(v)} }
	u64 := func(v int64) backend.Arg { return u64Arg(uint64(v)) }
	scalar := func(v float64) backend.Arg {
		if g.Type == dtype.Float64 {
			return u64Arg(math.Float64bits(v))
		}
		return backend.Arg{Kind: backend.ArgScalar, Size: 4, Val: uint64(math.Float32bits(float32(v)))}
	}
	args := []backend.Arg{
		{Kind: backend.ArgMem, Mem: g.A.Mem, Off: g.A.Off},
		{Kind: backend.ArgMem, Mem: g.B.Mem, Off: g.B.Off},
		{Kind: backend.ArgMem, Mem: g.C.Mem, Off: g.C.Off},
		u32(g.M), u32(g.N), u32(g.K), u32(g.A.LD), u32(g.B.LD), u32(g.C.LD),
		u64(g.A.Stride), u64(g.B.Stride), u64(g.C.Stride), u32(g.Batch),
		scalar(g.Alpha), scalar(g.Beta),
	}
	cfg := backend.LaunchConfig{
		Grid:  [3]uint32{uint32(blocks), 1, 1},
		Block: [3]uint32{uint32(j.spec.Threads()), 1, 1},
	}
	if j.s.dev.info.Backend != "cpu" {
		cfg.SharedMem = uint32(j.spec.SharedBytes())
	}
	return j.s.be.Launch(j.fn.be, cfg, args)
}
