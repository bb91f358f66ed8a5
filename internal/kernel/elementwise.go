// Package kernel holds the backend-neutral kernel specs of the array layer and their
// implementations: PTX text for CUDA (written with package ptx) and Go functions for
// the CPU backend. A spec fixes everything a kernel is specialised on (operation, element
// types, operand layouts, index width); its Key identifies the compiled kernel in a
// device's cache. The array layer (package gpu) chooses specs, compiles them once per
// device and launches them with the argument order each spec documents.
package kernel

import (
	"fmt"
	"math"
	"strings"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// OpKind is how an elementwise kernel addresses an operand.
type OpKind uint8

const (
	// Contig: element i of the iteration is at ptr[i].
	Contig OpKind = iota
	// Strided: element i is at ptr[sum over d of idx_d*stride_d], where idx is i's
	// multi-index in the iteration shape (row-major) and the strides are in elements
	// (negative and zero strides allowed).
	Strided
	// Scalar: every element reads ptr[0] (an operand broadcast from one element).
	Scalar
	// Index: no pointer; the operand's value is the linear index i itself (int64), for
	// kernels such as arange.
	Index
)

// String returns "contig", "strided", "scalar" or "index".
func (k OpKind) String() string {
	switch k {
	case Contig:
		return "contig"
	case Strided:
		return "strided"
	case Scalar:
		return "scalar"
	case Index:
		return "index"
	}
	return "opkind(?)"
}

// Operand is one operand of an elementwise kernel.
type Operand struct {
	DType dtype.DType
	Kind  OpKind
}

// Elementwise is out[i] = Expr(ins...[i], params...) for i < n: one fused kernel.
//
// Kernel parameters, in order (every backend):
//
//	out      u64    address of the output's element 0 (Out.Kind Contig or Strided)
//	n        u64    number of elements
//	in_k     u64    address of input k's element 0, for each input slot k in order,
//	                except Index operands, which have no parameter
//	shape_d  u64    iteration shape, d = 0..Rank-1 (outermost first), if Rank > 0
//	stride   s64    Rank strides in elements for each Strided operand: the output's
//	                first if it is Strided, then the inputs' in slot order
//	param_k         each parameter slot k of Expr in order, as a scalar of its dtype
//	                (bool: 1 byte; float16/bfloat16: their 16 bits)
//
// Ins has one entry per input slot of Expr (Expr.Inputs' indexes). Rank is 0 when no
// operand is Strided. With Index64 unset, n and every offset are below 2^31. With
// Vector set, no operand is Strided and every Contig operand's address is 16-byte
// aligned, so the kernel may use 16-byte vector accesses. A grid-stride loop covers any
// launch grid.
//
// GridDep (PTX for compute capability 9.0+ only) starts the kernel with
// griddepcontrol.launch_dependents and griddepcontrol.wait, for a programmatic
// dependent launch (backend.LaunchConfig.Programmatic): the kernel may be scheduled
// while the one ahead of it on the stream still runs, waits for it to complete before
// touching memory, and lets the one after it be scheduled likewise.
type Elementwise struct {
	Expr    *expr.Expr
	Ins     []Operand
	Out     Operand
	Rank    int
	Index64 bool
	Vector  bool
	GridDep bool
}

// Key identifies the kernel.
func (e *Elementwise) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "ew|%s|out=%v:%v|r%d", e.Expr.Key(), e.Out.DType, e.Out.Kind, e.Rank)
	for _, in := range e.Ins {
		fmt.Fprintf(&b, "|%v:%v", in.DType, in.Kind)
	}
	if e.Index64 {
		b.WriteString("|i64")
	}
	if e.Vector {
		b.WriteString("|v16")
	}
	if e.GridDep {
		b.WriteString("|gdc")
	}
	return b.String()
}

// Validate checks the spec's consistency.
func (e *Elementwise) Validate() error {
	if e.Expr == nil {
		return fmt.Errorf("kernel: elementwise spec without an expression")
	}
	if e.Out.DType != e.Expr.DType() {
		return fmt.Errorf("kernel: output type %v, expression type %v", e.Out.DType, e.Expr.DType())
	}
	if e.Out.Kind != Contig && e.Out.Kind != Strided {
		return fmt.Errorf("kernel: output of kind %v", e.Out.Kind)
	}
	strided := e.Out.Kind == Strided
	for _, s := range e.Expr.Inputs {
		if s.Index >= len(e.Ins) {
			return fmt.Errorf("kernel: the expression reads input %d of %d", s.Index, len(e.Ins))
		}
		in := e.Ins[s.Index]
		if in.DType != s.DType {
			return fmt.Errorf("kernel: input %d has type %v, the expression reads %v", s.Index, in.DType, s.DType)
		}
		if in.Kind == Index && in.DType != dtype.Int64 {
			return fmt.Errorf("kernel: index operand %d of type %v, want int64", s.Index, in.DType)
		}
		strided = strided || in.Kind == Strided
	}
	if strided != (e.Rank > 0) {
		return fmt.Errorf("kernel: rank %d with strided operands %v", e.Rank, strided)
	}
	if e.Vector && strided {
		return fmt.Errorf("kernel: vector accesses with strided operands")
	}
	return nil
}

// stridedOrder lists the Strided operands: -1 for the output, then input slots.
func (e *Elementwise) stridedOrder() []int {
	var out []int
	if e.Out.Kind == Strided {
		out = append(out, -1)
	}
	for k, in := range e.Ins {
		if in.Kind == Strided {
			out = append(out, k)
		}
	}
	return out
}

// chunk is the CPU evaluator's chunk length in elements.
const chunk = 1024

// CPU returns the kernel as a Go function for the CPU backend.
func (e *Elementwise) CPU() (func(*cpu.Launch) error, error) {
	if err := e.Validate(); err != nil {
		return nil, err
	}
	prog, err := e.Expr.Compile()
	if err != nil {
		return nil, err
	}
	strided := e.stridedOrder()
	outSize := e.Out.DType.Size()
	return func(l *cpu.Launch) error {
		arg := 0
		next := func() int { arg++; return arg - 1 }
		outArg := next()
		n := int(l.Uint64(next()))
		inArg := make([]int, len(e.Ins))
		for k, in := range e.Ins {
			inArg[k] = -1
			if in.Kind != Index {
				inArg[k] = next()
			}
		}
		shape := make([]int, e.Rank)
		for d := range shape {
			shape[d] = int(l.Uint64(next()))
		}
		strides := map[int][]int{}
		for _, op := range strided {
			st := make([]int, e.Rank)
			for d := range st {
				st[d] = int(l.Int64(next()))
			}
			strides[op] = st
		}
		params := make([]expr.Scalar, 0, len(e.Expr.Params))
		for _, p := range e.Expr.Params {
			for len(params) < p.Index {
				params = append(params, expr.Scalar{})
			}
			params = append(params, expr.ScalarFromBits(p.DType, l.Args[next()].Val))
		}
		if n == 0 {
			return nil
		}
		// mems returns an operand's memory and the byte offset of its element 0 in it
		// (strided operands get the whole allocation: negative strides reach before).
		mems := func(a int, t dtype.DType, k OpKind, st []int) ([]byte, int, error) {
			full, off := l.MemAt(a)
			lo, hi := 0, 0
			switch k {
			case Contig:
				hi = n - 1
			case Strided:
				lo, hi = extent(shape, st)
			}
			if off+lo*t.Size() < 0 || off+(hi+1)*t.Size() > len(full) {
				return nil, 0, fmt.Errorf("kernel: illegal address: operand elements [%d, %d] outside its allocation: %w", lo, hi, backend.ErrLaunchFailed)
			}
			if k == Strided {
				return full, off, nil
			}
			return full[off:], 0, nil
		}
		out, outOff, err := mems(outArg, e.Out.DType, e.Out.Kind, strides[-1])
		if err != nil {
			return err
		}
		ins := make([][]byte, len(e.Ins))
		insOff := make([]int, len(e.Ins))
		for k, in := range e.Ins {
			if in.Kind != Index {
				if ins[k], insOff[k], err = mems(inArg[k], in.DType, in.Kind, strides[k]); err != nil {
					return err
				}
			}
		}
		var evalErr error
		l.Parallel(n, 4*chunk, func(lo, hi int) {
			tmpIn := make([][]byte, len(e.Ins))
			view := make([][]byte, len(e.Ins))
			var tmpOut []byte
			for c := lo; c < hi; c += chunk {
				m := min(chunk, hi-c)
				for k, in := range e.Ins {
					sz := in.DType.Size()
					switch in.Kind {
					case Contig:
						view[k] = ins[k][c*sz : (c+m)*sz]
					case Scalar:
						if tmpIn[k] == nil {
							tmpIn[k] = make([]byte, chunk*sz)
							for j := 0; j < chunk; j++ {
								copy(tmpIn[k][j*sz:], ins[k][:sz])
							}
						}
						view[k] = tmpIn[k][:m*sz]
					case Index:
						if tmpIn[k] == nil {
							tmpIn[k] = make([]byte, chunk*8)
						}
						idx := cpu.Slice[int64](tmpIn[k])
						for j := 0; j < m; j++ {
							idx[j] = int64(c + j)
						}
						view[k] = tmpIn[k][:m*8]
					case Strided:
						if tmpIn[k] == nil {
							tmpIn[k] = make([]byte, chunk*sz)
						}
						gather(tmpIn[k][:m*sz], ins[k], insOff[k], sz, shape, strides[k], c)
						view[k] = tmpIn[k][:m*sz]
					}
				}
				dst := out
				if e.Out.Kind == Contig {
					dst = out[c*outSize : (c+m)*outSize]
				} else {
					if tmpOut == nil {
						tmpOut = make([]byte, chunk*outSize)
					}
					dst = tmpOut[:m*outSize]
				}
				if err := prog.EvalBytes(m, dst, view, params); err != nil {
					evalErr = err
					return
				}
				if e.Out.Kind == Strided {
					scatter(out, outOff, dst, outSize, shape, strides[-1], c)
				}
			}
		})
		return evalErr
	}, nil
}

// extent returns the lowest and highest element offsets a strided operand reaches.
func extent(shape, st []int) (lo, hi int) {
	for d, n := range shape {
		if n == 0 {
			return 0, -1
		}
		if st[d] < 0 {
			lo += (n - 1) * st[d]
		} else {
			hi += (n - 1) * st[d]
		}
	}
	return lo, hi
}

// offsets calls f(j, off) for the m elements from linear index first, off being the
// element offset of element first+j for the strides.
func offsets(shape, st []int, first, m int, f func(j, off int)) {
	r := len(shape)
	idx := make([]int, r)
	rem := first
	off := 0
	for d := r - 1; d >= 0; d-- {
		idx[d] = rem % shape[d]
		rem /= shape[d]
		off += idx[d] * st[d]
	}
	for j := 0; j < m; j++ {
		f(j, off)
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			off += st[d]
			if idx[d] < shape[d] {
				break
			}
			off -= idx[d] * st[d]
			idx[d] = 0
		}
	}
}

// gather copies the strided elements first.. of src (element 0 at byte base) into dst.
func gather(dst, src []byte, base, sz int, shape, st []int, first int) {
	m := len(dst) / sz
	offsets(shape, st, first, m, func(j, off int) {
		p := base + off*sz
		copy(dst[j*sz:(j+1)*sz], src[p:p+sz])
	})
}

// scatter copies src into the strided elements first.. of dst (element 0 at byte base).
func scatter(dst []byte, base int, src []byte, sz int, shape, st []int, first int) {
	m := len(src) / sz
	offsets(shape, st, first, m, func(j, off int) {
		p := base + off*sz
		copy(dst[p:p+sz], src[j*sz:(j+1)*sz])
	})
}

// Collapse merges adjacent dimensions of an iteration shape that every operand walks
// contiguously (stride[d] == stride[d+1]*shape[d+1] for all operands), drops size-1
// dimensions, and returns the new shape and strides. strides[k] are operand k's.
func Collapse(shape []int, strides [][]int) ([]int, [][]int) {
	var cs []int
	cst := make([][]int, len(strides))
	for d, n := range shape {
		if n == 1 {
			continue
		}
		if len(cs) > 0 {
			last := len(cs) - 1
			ok := true
			for k := range strides {
				if cst[k][last] != strides[k][d]*n {
					ok = false
					break
				}
			}
			if ok {
				cs[last] *= n
				for k := range strides {
					cst[k][last] = strides[k][d]
				}
				continue
			}
		}
		cs = append(cs, n)
		for k := range strides {
			cst[k] = append(cst[k], strides[k][d])
		}
	}
	if len(cs) == 0 {
		cs = []int{1}
		for k := range cst {
			cst[k] = []int{0}
		}
	}
	return cs, cst
}

// Classify returns the kind of an operand with these (collapsed) strides over shape.
func Classify(shape, st []int) OpKind {
	zero := true
	for _, s := range st {
		zero = zero && s == 0
	}
	if zero {
		return Scalar
	}
	want := 1
	for d := len(shape) - 1; d >= 0; d-- {
		if shape[d] != 1 && st[d] != want {
			return Strided
		}
		want *= shape[d]
	}
	return Contig
}

// NeedIndex64 reports whether n or any offset reached by strides over shape needs
// 64-bit index arithmetic.
func NeedIndex64(n int, shape []int, strides ...[]int) bool {
	if n >= math.MaxInt32 {
		return true
	}
	for _, st := range strides {
		lo, hi := extent(shape, st)
		if hi >= math.MaxInt32 || -lo >= math.MaxInt32 {
			return true
		}
	}
	return false
}
