package gpu

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/internal/kernel"
)

// Statistics: Var, Std, LogSumExp, Softmax, LogSoftmax, LayerNorm and Norm, with
// NumPy's (and, where NumPy has none, PyTorch's and SciPy's) names and semantics.
//
// Each statistic reads its data once. Var and Std keep (count, mean, M2) per thread and
// merge them by Chan, Golub and LeVeque's formula (a stable one-pass method, never a
// sum of squares minus a squared sum: the variance of a constant row is exactly 0);
// LogSumExp, Softmax and LogSoftmax keep the running maximum and the sum of exp(x - max)
// (Milakov & Gimelshein's online softmax, 2018); Softmax, LogSoftmax and LayerNorm of
// rows up to 32768 elements keep the row in registers between the statistic and the
// write, so each element is read once and written once. Internally every statistic runs
// over rows of contiguous elements: when the reduced axes are not the array's last,
// contiguous ones, the input is first copied into that layout (one more pass; for
// Softmax and LogSoftmax along another axis than the last, the result is also copied
// back). Few long rows are split across blocks, whose states a second kernel merges.
//
// Types. Inputs of any element type; integer and bool inputs are converted to the
// result type R first (NumPy's default R is float64 for them). float16 and bfloat16
// data are computed in float32, float32 in float32, float64 in float64. Results differ
// between the CPU and CUDA backends in the last bits only (the merge order, and in
// float32 on CUDA an exp of at most about 2 ulp, as CUDA's expf, whose results below
// 2^-126 are 0), as the reductions' do.
//
// NaN and infinities. A NaN in a row makes its statistic NaN (every element of its
// Softmax and LogSoftmax). LogSumExp of a row with +Inf is +Inf, of a row of -Inf (or
// of no elements) -Inf. Softmax of a row with +Inf is NaN everywhere in the row
// (scipy.special.softmax's result; exp(Inf - Inf) is NaN), and of a row of only -Inf
// NaN too (0/0); so is LogSoftmax of such rows (torch.log_softmax's result, where
// scipy.special.log_softmax keeps -Inf for the finite elements beside a +Inf).

// Ddof sets Var's and Std's delta degrees of freedom (numpy.var's ddof): the divisor is
// N - ddof, N the number of elements reduced. Where N - ddof <= 0 the divisor is 0, as
// NumPy's: the result is +Inf, or NaN where the elements are all equal (one element,
// or none). Other reductions refuse it.
func Ddof(ddof int) ReduceOption {
	return func(c *reduceConfig) { c.ddof, c.ddofSet = ddof, true }
}

// Var returns the variance of a over the reduced axes (numpy.var(a, axis, dtype=R,
// ddof, keepdims)): Axes, KeepDims and Ddof as ReduceOption. R is a float type; NumPy's
// choice is float64 for integer inputs and T for float inputs. The variance of no
// elements is NaN. One pass over the data: Chan, Golub and LeVeque's merges of (count,
// mean, M2) over the values minus the first of each reduced row, in float64 where a or
// R is float64, else in float32: about as accurate as NumPy's two passes (float32, 10^6
// values of mean 10^4 and spread 1: a relative error about 10^-6).
func Var[R Float, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	return momentStat[R](s, a, kernel.StatVar, opts)
}

// Std returns the standard deviation, the square root of Var (numpy.std).
func Std[R Float, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	return momentStat[R](s, a, kernel.StatStd, opts)
}

// LogSumExp returns log(sum(exp(a))) over the reduced axes, computed without overflow
// as m + log(sum(exp(a - m))), m the maximum (scipy.special.logsumexp,
// torch.logsumexp): Axes and KeepDims as ReduceOption. R is a float type.
func LogSumExp[R Float, T Elem](s *Stream, a *Array[T], opts ...ReduceOption) (*Array[R], error) {
	return momentStat[R](s, a, kernel.StatLogSumExp, opts)
}

// Softmax returns exp(a - m)/sum(exp(a - m)) along axis (m the maximum along it;
// scipy.special.softmax, torch.softmax): a new array of a's shape and type.
func Softmax[T Float](s *Stream, a *Array[T], axis int) (*Array[T], error) {
	return transformStat(s, a, kernel.StatSoftmax, axis)
}

// LogSoftmax returns a - m - log(sum(exp(a - m))) along axis (scipy.special.log_softmax,
// torch.log_softmax): a new array of a's shape and type.
func LogSoftmax[T Float](s *Stream, a *Array[T], axis int) (*Array[T], error) {
	return transformStat(s, a, kernel.StatLogSoftmax, axis)
}

// LayerNorm normalizes x over its last ndims axes (torch.nn.functional.layer_norm with
// normalized_shape = x.shape[-ndims:]): y = (x - mean)/sqrt(var + eps) * weight + bias,
// with the mean and the biased variance (ddof 0) of each group of the last ndims axes.
// weight and bias may be nil; otherwise their shape is x's last ndims dimensions. eps
// (PyTorch's default is 1e-5) must be finite and not negative. The result is a new
// array of x's shape and type.
func LayerNorm[T Float](s *Stream, x *Array[T], ndims int, weight, bias *Array[T], eps float64) (*Array[T], error) {
	if err := statArgs(s, x); err != nil {
		return nil, err
	}
	r := len(x.shape)
	if ndims < 1 || ndims > r {
		return nil, fmt.Errorf("gpu: LayerNorm over the last %d axes of a %d-d array: %w", ndims, r, ErrInvalidValue)
	}
	if eps < 0 || math.IsNaN(eps) || math.IsInf(eps, 0) {
		return nil, fmt.Errorf("gpu: LayerNorm eps %v: %w", eps, ErrInvalidValue)
	}
	norm := x.shape[r-ndims:]
	var params []*header
	for i, p := range []*Array[T]{weight, bias} {
		if p == nil {
			params = append(params, nil)
			continue
		}
		name := [...]string{"weight", "bias"}[i]
		if err := nonNil(p); err != nil {
			return nil, fmt.Errorf("gpu: LayerNorm %s: %w", name, err)
		}
		if !sameShape(p.shape, norm) {
			return nil, fmt.Errorf("gpu: LayerNorm %s of shape %v for normalized shape %v: %w", name, p.shape, norm, ErrInvalidValue)
		}
		params = append(params, p.header())
	}
	return runTransform[T](s, x.header(), kernel.StatLayerNorm, r-ndims, eps, params[0], params[1])
}

// Norm returns vector norms of a over the reduced axes (numpy.linalg.norm of the
// flattened axes): ord 2 is sqrt(sum(x^2)) (the Frobenius norm over two axes), 1 is
// sum(|x|), +Inf max(|x|), -Inf min(|x|), 0 the number of nonzero elements, and any
// other finite ord sum(|x|^ord)^(1/ord), with ord and 1/ord rounded to R as NumPy
// rounds them (an order or reciprocal past R's range is Inf there, not an error; a
// negative ord gives 0 where an element is 0, as |0|^ord is +Inf); ord NaN is an error
// wrapping ErrInvalidValue. Axes and KeepDims as ReduceOption; R is a float type. Like
// NumPy, the 2-norm is not scaled: squares past R's range overflow. There are no matrix
// norms: where numpy.linalg.norm reduces two axes (axis=(0, 1), or no axis on a 2-D
// array) with an ord, its ord names a matrix norm (2: the largest singular value; 1 and
// Inf: the largest column and row sums of |x|), while Norm's stays the vector norm of
// all the elements reduced, so Norm(a, 2) of a matrix is numpy.linalg.norm(a) (ord
// None, 'fro'), not numpy.linalg.norm(a, 2). The norms are reductions (MapReduce)
// followed, for 2 and general ord, by an elementwise root.
func Norm[R Float, T Elem](s *Stream, a *Array[T], ord float64, opts ...ReduceOption) (*Array[R], error) {
	if err := statArgs(s, a); err != nil {
		return nil, err
	}
	rt := dtype.Of[R]()
	conv := fmt.Sprintf("%v(x)", rt)
	var src string
	op := OpSum
	root := ""
	// ord and 1/ord are weak scalars, taking R's type as NumPy's absx**ord and
	// ret**reciprocal(ord, dtype=ret.dtype) do (past R's range: Inf), not constants
	// that must be representable in R.
	vars, rootVars := Vars{"x": a}, Vars{}
	switch {
	case ord == 2:
		src, root = conv+"*"+conv, "sqrt(y)"
	case ord == 1:
		src = "abs(" + conv + ")"
	case math.IsInf(ord, 1):
		src, op = "abs("+conv+")", OpMax
	case math.IsInf(ord, -1):
		src, op = "abs("+conv+")", OpMin
	case ord == 0:
		src = fmt.Sprintf("where(x != 0, %v(1), %v(0))", rt, rt)
	case !math.IsNaN(ord):
		src, root = fmt.Sprintf("pow(abs(%s), p)", conv), "pow(y, p)"
		vars["p"], rootVars["p"] = ord, 1/ord
	default:
		return nil, fmt.Errorf("gpu: Norm of order %v: %w", ord, ErrInvalidValue)
	}
	red, err := MapReduce[R](s, src, vars, op, opts...)
	if err != nil {
		return nil, fmt.Errorf("gpu: Norm of order %v: %w", ord, err)
	}
	if root == "" {
		return red, nil
	}
	defer red.Free()
	rootVars["y"] = red
	return Eval[R](s, root, rootVars)
}

// statArgs checks a statistic's stream and array.
func statArgs[T Elem](s *Stream, a *Array[T]) error {
	if err := nilStream(s); err != nil {
		return err
	}
	return nonNil(a)
}

func sameShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// isFloatDT reports whether t is a float element type.
func isFloatDT(t dtype.DType) bool { return t.IsFloat() }

// statComp returns the type a statistic of in into out computes in.
func statComp(in, out dtype.DType) dtype.DType {
	if in == dtype.Float64 || out == dtype.Float64 {
		return dtype.Float64
	}
	return dtype.Float32
}

// momentStat runs a statistic that reduces (Var, Std, LogSumExp).
func momentStat[R Float, T Elem](s *Stream, a *Array[T], op kernel.StatOp, opts []ReduceOption) (*Array[R], error) {
	if err := statArgs(s, a); err != nil {
		return nil, err
	}
	mask, outShape, c, err := resolveReduce(a.shape, opts, false)
	if err != nil {
		return nil, err
	}
	if c.ddofSet && op == kernel.StatLogSumExp {
		return nil, fmt.Errorf("gpu: Ddof given to LogSumExp: %w", ErrInvalidValue)
	}
	out, err := Empty[R](s, outShape...)
	if err != nil {
		return nil, err
	}
	if out.Size() == 0 {
		return out, nil
	}
	in, release, err := statRows(s, a.header(), mask, out.dt)
	if err != nil {
		out.Free()
		return nil, err
	}
	defer release()
	rows, n := out.Size(), 1
	for d, m := range mask {
		if m {
			n *= a.shape[d]
		}
	}
	if n == 0 {
		v := math.Float64frombits(fp.NaN64Bits) // canonical, rounded to the output type
		if op == kernel.StatLogSumExp {
			v = math.Inf(-1)
		}
		if err := Fill(s, out, fromFloat[R](v)); err != nil {
			out.Free()
			return nil, err
		}
		return out, nil
	}
	if err := runStat(s, in, out.header(), op, rows, n, float64(c.ddof), nil, nil); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// transformStat runs Softmax or LogSoftmax along axis.
func transformStat[T Float](s *Stream, a *Array[T], op kernel.StatOp, axis int) (*Array[T], error) {
	if err := statArgs(s, a); err != nil {
		return nil, err
	}
	r := len(a.shape)
	ax := axis
	if ax < 0 {
		ax += r
	}
	if ax < 0 || ax >= r {
		return nil, fmt.Errorf("gpu: axis %d out of range for a %d-d array: %w", axis, r, ErrInvalidValue)
	}
	if ax == r-1 {
		return runTransform[T](s, a.header(), op, r-1, 0, nil, nil)
	}
	// Move the axis last, compute, and move it back.
	perm := make([]int, 0, r)
	for d := 0; d < r; d++ {
		if d != ax {
			perm = append(perm, d)
		}
	}
	perm = append(perm, ax)
	v, err := a.Transpose(perm...)
	if err != nil {
		return nil, err
	}
	t, err := runTransform[T](s, v.header(), op, r-1, 0, nil, nil)
	if err != nil {
		return nil, err
	}
	defer t.Free()
	inv := make([]int, r)
	for i, p := range perm {
		inv[p] = i
	}
	return Permute(s, t, inv...)
}

// runTransform computes a transform over the axes from first on (a row of prod(shape[first:])
// elements for each index of the others) into a new contiguous array of h's shape.
func runTransform[T Float](s *Stream, h *header, op kernel.StatOp, first int, arg float64, w, b *header) (*Array[T], error) {
	out, err := Empty[T](s, h.shape...)
	if err != nil {
		return nil, err
	}
	if out.Size() == 0 {
		return out, nil
	}
	mask := make([]bool, len(h.shape))
	for d := first; d < len(mask); d++ {
		mask[d] = true
	}
	in, release, err := statRows(s, h, mask, out.dt)
	if err != nil {
		out.Free()
		return nil, err
	}
	defer release()
	n := prod(h.shape[first:])
	var rel []func()
	for i, p := range []*header{w, b} {
		if p == nil || contiguous(p.shape, p.strides) {
			continue
		}
		c, err := copyOf(s, p)
		if err != nil {
			out.Free()
			return nil, err
		}
		rel = append(rel, func() { c.buf.Free() })
		if i == 0 {
			w = c
		} else {
			b = c
		}
	}
	defer func() {
		for _, f := range rel {
			f()
		}
	}()
	if err := runStat(s, in, out.header(), op, out.Size()/n, n, arg, w, b); err != nil {
		out.Free()
		return nil, err
	}
	return out, nil
}

// statRows returns h as rows of contiguous elements, the reduced axes (mask) last, of a
// float type (converted to out's type when h's is not a float type); release frees a
// copy made for it.
func statRows(s *Stream, h *header, mask []bool, out dtype.DType) (*header, func(), error) {
	perm := make([]int, 0, len(mask))
	for d, m := range mask {
		if !m {
			perm = append(perm, d)
		}
	}
	moved := false
	for d, m := range mask {
		if m {
			moved = moved || len(perm) != d
			perm = append(perm, d)
		}
	}
	v := *h
	if moved {
		v.shape = make([]int, len(perm))
		v.strides = make([]int, len(perm))
		for i, p := range perm {
			v.shape[i], v.strides[i] = h.shape[p], h.strides[p]
		}
	}
	if isFloatDT(v.dt) && contiguous(v.shape, v.strides) {
		return &v, func() {}, nil
	}
	dt := v.dt
	if !isFloatDT(dt) {
		dt = out
	}
	c, err := newHeader(s, dt, v.shape)
	if err != nil {
		return nil, nil, err
	}
	if err := evalIntoHeader(s, c, &v); err != nil {
		c.buf.Free()
		return nil, nil, err
	}
	return c, func() { c.buf.Free() }, nil
}

// newHeader allocates a contiguous array of type dt and shape as a header.
func newHeader(s *Stream, dt dtype.DType, shape []int) (*header, error) {
	n := prod(shape)
	b, err := s.Alloc(int64(max(n, 1) * dt.Size()))
	if err != nil {
		return nil, err
	}
	sh, st := layout(shape)
	return &header{buf: b, dt: dt, shape: sh, strides: st}, nil
}

// statPlan chooses a row statistic's geometry for rows of n elements.
func statPlan(op kernel.StatOp, in, out dtype.DType, rows, n int, aligned func(vec int) bool, sms int) (kernel.RowStat, int, int) {
	sp := kernel.RowStat{Op: op, In: in, Out: out, Comp: statComp(in, out)}
	sp.Vec = 1
	for _, v := range []int{4, 2} {
		if n%v == 0 && v*in.Size() <= 16 && v*out.Size() <= 16 && aligned(v) {
			sp.Vec = v
			break
		}
	}
	vecs := (n + sp.Vec - 1) / sp.Vec // vectors a row holds
	switch {
	case vecs <= 32*8:
		sp.Threads = 32
	case vecs <= 128*8:
		sp.Threads = 128
	case vecs <= 256*8:
		sp.Threads = 256
	case vecs <= 512*8:
		sp.Threads = 512
	default:
		sp.Threads = 1024
	}
	per := (vecs + sp.Threads - 1) / sp.Threads
	sp.Items = 1 << bits.Len(uint(max(per, 1)-1))
	sp.Items = min(sp.Items, 32/sp.Vec, 8)
	if op.Transform() && n <= sp.Tile() {
		sp.OneTile = true
	}
	// Few long rows: split each into parts (at least two tiles each) so that the grid
	// has about two blocks a multiprocessor.
	parts, chunk := 1, n
	if units := rows * max(1, 256/sp.Threads); units < 2*sms {
		tile := sp.Tile()
		parts = min((2*sms+rows-1)/rows, (n+2*tile-1)/(2*tile), 1<<16)
	}
	if parts > 1 {
		sp.OneTile = false
		chunk = (n + parts - 1) / parts
		chunk = (chunk + sp.Vec - 1) / sp.Vec * sp.Vec
		parts = (n + chunk - 1) / chunk
	}
	return sp, parts, chunk
}

// runStat launches the passes of a row statistic: in holds rows*n contiguous elements,
// out rows (a reduction) or rows*n (a transform) contiguous elements.
func runStat(s *Stream, in, out *header, op kernel.StatOp, rows, n int, arg float64, w, b *header) error {
	d := s.dev
	ptr := func(h *header) uint64 { return h.buf.a.mem.Ptr() + uint64(h.buf.off) + uint64(h.off*h.dt.Size()) }
	aligned := func(v int) bool {
		ok := ptr(in)%uint64(v*in.dt.Size()) == 0 && ptr(out)%uint64(v*out.dt.Size()) == 0
		for _, p := range []*header{w, b} {
			if p != nil {
				ok = ok && ptr(p)%uint64(v*p.dt.Size()) == 0
			}
		}
		return ok
	}
	sp, parts, chunk := statPlan(op, in.dt, out.dt, rows, n, aligned, d.info.Multiprocessors)
	sp.Weight, sp.Bias = w != nil, b != nil
	sp.ExactExp = d.tuning().StatExactExp && sp.Comp == dtype.Float32
	wArg := func(p *header) any {
		if p == nil {
			return uint64(0)
		}
		return In(p)
	}
	launch := func(sp kernel.RowStat, units int, outArg, partArg any) error {
		fn, err := d.kernel(&sp)
		if err != nil {
			return err
		}
		rpb := sp.RowsPerBlock()
		grid := (units + rpb - 1) / rpb
		cfg := LaunchConfig{Grid: Dim3{X: grid}, Block: Dim3{X: sp.Block()}}
		return s.Launch(fn, cfg, In(in), outArg, partArg, uint64(rows), uint64(n),
			uint64(parts), uint64(chunk), arg, wArg(w), wArg(b))
	}
	if parts == 1 {
		sp.Pass = kernel.StatFull
		return launch(sp, rows, Out(out), uint64(0))
	}
	part, err := s.Alloc(int64(rows * parts * kernel.StatRecord))
	if err != nil {
		return err
	}
	defer part.Free()
	p1 := sp
	p1.Pass, p1.Weight, p1.Bias = kernel.StatPartial, false, false
	if err := launch(p1, rows*parts, uint64(0), Out(part)); err != nil {
		return err
	}
	p2 := sp
	p2.Pass = kernel.StatFinish
	units := rows * parts
	if !op.Transform() {
		p2.Threads, p2.Items, p2.Vec = 32, 1, 1
		units = rows
	}
	return launch(p2, units, Out(out), In(part))
}
