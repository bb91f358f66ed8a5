package kernel

import (
	"encoding/binary"
	"fmt"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// The CPU scan: the input is converted into the output (which has the accumulator type
// and the contiguous [outer, n, inner] layout), in parallel, and then scanned in place.
// The scanned axis is cut into chunks of a fixed scanNum of elements (scanChunk, whole
// rows of inner columns): chunk aggregates are computed in parallel, combined in order
// into chunk prefixes, and each chunk is then scanned from its prefix in parallel (the
// two-pass "reduce then scan" scheme). Within a chunk the fold is sequential, left to
// right. The chunking doesn't depend on the scanNum of workers, so the results are the
// same on every machine: exact for integers and for maximum and minimum; for float
// sums and products, the sequential fold reassociated at chunk boundaries.

// scanChunk is the scanNum of elements per chunk of the CPU scan.
const scanChunk = 1 << 16

// scanLayout is an [outer, n, inner] input with strides in elements.
type scanLayout struct {
	outer, n, inner int
	so, sk, sj      int
}

// scanRun scans the input of argument inArg (layout lay) into the contiguous output
// outMem.
type scanRun func(l *cpu.Launch, inArg int, outMem []byte, lay scanLayout, init uint64) error

// newScanCPU returns the CPU scan of in elements with the operator c, into an output of
// type out (c.Type, or a half type rounded once from the accumulator's values).
func newScanCPU(in dtype.DType, c Combine, excl bool, out dtype.DType) (scanRun, error) {
	run, err := newScanCPUAcc(in, c, excl)
	if err != nil || out == c.Type {
		return run, err
	}
	// Scan into accumulators, then round them into the output in bulk.
	round, err := scanCastProgram(c.Type, out)
	if err != nil {
		return nil, err
	}
	accSize, outSize := c.Type.Size(), out.Size()
	return func(l *cpu.Launch, inArg int, outMem []byte, lay scanLayout, init uint64) error {
		total := lay.outer * lay.n * lay.inner
		if len(outMem) < total*outSize {
			return fmt.Errorf("kernel: illegal address: scan output of %d elements past its allocation: %w", total, backend.ErrLaunchFailed)
		}
		acc := make([]byte, total*accSize)
		if err := run(l, inArg, acc, lay, init); err != nil {
			return err
		}
		var evalErr error
		l.Parallel(total, 4*chunk, func(a, b int) {
			if err := round.EvalBytes(b-a, outMem[a*outSize:b*outSize], [][]byte{acc[a*accSize : b*accSize]}, nil); err != nil {
				evalErr = err
			}
		})
		return evalErr
	}, nil
}

// newScanCPUAcc returns the CPU scan of in elements with the operator c into an output
// of the accumulator type.
func newScanCPUAcc(in dtype.DType, c Combine, excl bool) (scanRun, error) {
	conv, err := scanCastProgram(in, c.Type)
	if err != nil {
		return nil, err
	}
	var prog *expr.Program
	if c.Op == ScanExpr {
		if prog, err = c.Expr.Compile(); err != nil {
			return nil, err
		}
	}
	switch c.Type {
	case dtype.Bool:
		return scanOfT[bool](in, conv, scanBoolOp(c.Op), nil, prog, excl), nil
	case dtype.Int8:
		return scanOfT[int8](in, conv, scanNumOp[int8](c.Op), scanKernPtr[int8](c.Op), prog, excl), nil
	case dtype.Int16:
		return scanOfT[int16](in, conv, scanNumOp[int16](c.Op), scanKernPtr[int16](c.Op), prog, excl), nil
	case dtype.Int32:
		return scanOfT[int32](in, conv, scanNumOp[int32](c.Op), scanKernPtr[int32](c.Op), prog, excl), nil
	case dtype.Int64:
		return scanOfT[int64](in, conv, scanNumOp[int64](c.Op), scanKernPtr[int64](c.Op), prog, excl), nil
	case dtype.Uint8:
		return scanOfT[uint8](in, conv, scanNumOp[uint8](c.Op), scanKernPtr[uint8](c.Op), prog, excl), nil
	case dtype.Uint16:
		return scanOfT[uint16](in, conv, scanNumOp[uint16](c.Op), scanKernPtr[uint16](c.Op), prog, excl), nil
	case dtype.Uint32:
		return scanOfT[uint32](in, conv, scanNumOp[uint32](c.Op), scanKernPtr[uint32](c.Op), prog, excl), nil
	case dtype.Uint64:
		return scanOfT[uint64](in, conv, scanNumOp[uint64](c.Op), scanKernPtr[uint64](c.Op), prog, excl), nil
	case dtype.Float32:
		return scanOfT[float32](in, conv, scanNumOp[float32](c.Op), scanKernPtr[float32](c.Op), prog, excl), nil
	case dtype.Float64:
		return scanOfT[float64](in, conv, scanNumOp[float64](c.Op), scanKernPtr[float64](c.Op), prog, excl), nil
	}
	return nil, fmt.Errorf("kernel: scan accumulator %v: %w", c.Type, backend.ErrNotSupported)
}

// scanCastProgram returns the program converting in to out as expr's Cast does, or nil if
// the types are equal.
func scanCastProgram(in, out dtype.DType) (*expr.Program, error) {
	if in == out {
		return nil, nil
	}
	e, err := expr.Parse("x", expr.Env{"x": expr.OperandDecl(0, in)})
	if err != nil {
		return nil, err
	}
	e = &expr.Expr{Root: &expr.Cast{X: e.Root, Type: out}, Inputs: e.Inputs, Params: e.Params}
	return e.Compile()
}

// scanKernPtr returns the built-in operator's loops (nil for ScanExpr).
func scanKernPtr[A scanNum](op ScanOp) *scanKern[A] {
	if op == ScanExpr {
		return nil
	}
	k := scanNumKern[A](op)
	return &k
}

type scanNum interface {
	~int8 | ~int16 | ~int32 | ~int64 | ~uint8 | ~uint16 | ~uint32 | ~uint64 | ~float32 | ~float64
}

// scanNumOp returns the built-in operator on A (nil for ScanExpr). Go's min and max
// propagate NaN and order -0 below +0, as numpy.minimum and numpy.maximum do.
func scanNumOp[A scanNum](op ScanOp) func(a, b A) A {
	switch op {
	case ScanAdd:
		return func(a, b A) A { return a + b }
	case ScanMul:
		return func(a, b A) A { return a * b }
	case ScanMax:
		return func(a, b A) A { return max(a, b) }
	case ScanMin:
		return func(a, b A) A { return min(a, b) }
	}
	return nil
}

func scanBoolOp(op ScanOp) func(a, b bool) bool {
	switch op {
	case ScanAdd, ScanMax:
		return func(a, b bool) bool { return a || b }
	case ScanMul, ScanMin:
		return func(a, b bool) bool { return a && b }
	}
	return nil
}

// scanExprOp returns a factory of evaluators of a two-operand program (one per worker:
// each has its own buffers).
func scanExprOp[A any](p *expr.Program) func() func(a, b A) A {
	return func() func(a, b A) A {
		buf := make([]A, 3)
		size := int(unsafe.Sizeof(buf[0]))
		bytesAt := func(i int) []byte { return unsafe.Slice((*byte)(unsafe.Pointer(&buf[i])), size) }
		ins := [][]byte{bytesAt(0), bytesAt(1)}
		out := bytesAt(2)
		return func(a, b A) A {
			buf[0], buf[1] = a, b
			if err := p.EvalBytes(1, out, ins, nil); err != nil {
				panic(err)
			}
			return buf[2]
		}
	}
}

// scanFromBits returns the value of type A whose bits (little-endian) are the low bits of v.
func scanFromBits[A any](v uint64) A {
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], v)
	return *(*A)(unsafe.Pointer(&b[0]))
}

func scanOfT[A any](in dtype.DType, conv *expr.Program, op func(a, b A) A, kern *scanKern[A], prog *expr.Program, excl bool) scanRun {
	newOp := func() func(a, b A) A { return op }
	if prog != nil {
		newOp = scanExprOp[A](prog)
	}
	newKern := func() scanKern[A] { return scanGenericKern(newOp()) }
	if kern != nil && prog == nil {
		newKern = func() scanKern[A] { return *kern }
	}
	return func(l *cpu.Launch, inArg int, outMem []byte, lay scanLayout, initBits uint64) error {
		var z A
		size := int(unsafe.Sizeof(z))
		total := lay.outer * lay.n * lay.inner
		if total == 0 {
			return nil
		}
		if len(outMem) < total*size {
			return fmt.Errorf("kernel: illegal address: scan output of %d elements past its allocation: %w", total, backend.ErrLaunchFailed)
		}
		if err := scanLoad(l, inArg, outMem[:total*size], lay, in, conv, size); err != nil {
			return err
		}
		out := cpu.Slice[A](outMem[:total*size])
		init := scanFromBits[A](initBits)
		scanInPlace(l, out, lay.outer, lay.n, lay.inner, newKern, newOp, excl, init)
		return nil
	}
}

// scanLoad converts the input into out (contiguous, the accumulator type), in parallel.
func scanLoad(l *cpu.Launch, inArg int, out []byte, lay scanLayout, in dtype.DType, conv *expr.Program, accSize int) error {
	inSize := in.Size()
	shape := []int{lay.outer, lay.n, lay.inner}
	st := []int{lay.so, lay.sk, lay.sj}
	total := lay.outer * lay.n * lay.inner
	full, base := l.MemAt(inArg)
	lo, hi := extent(shape, st)
	if base+lo*inSize < 0 || base+(hi+1)*inSize > len(full) {
		return fmt.Errorf("kernel: illegal address: scan input elements [%d, %d] outside its allocation: %w", lo, hi, backend.ErrLaunchFailed)
	}
	contig := Classify(shape, st) == Contig
	var evalErr error
	l.Parallel(total, 4*chunk, func(a, b int) {
		var tmp []byte
		for c := a; c < b; c += chunk {
			m := min(chunk, b-c)
			var src []byte
			if contig {
				src = full[base+c*inSize : base+(c+m)*inSize]
			} else {
				if tmp == nil {
					tmp = make([]byte, chunk*inSize)
				}
				src = tmp[:m*inSize]
				gather(src, full, base, inSize, shape, st, c)
			}
			dst := out[c*accSize : (c+m)*accSize]
			if conv == nil {
				copy(dst, src)
				continue
			}
			if err := conv.EvalBytes(m, dst, [][]byte{src}, nil); err != nil {
				evalErr = err
				return
			}
		}
	})
	return evalErr
}

// scanKern folds rows of inner values: reduce sets acc[j] = acc[j] ⊕ x[r*inner+j] over
// the rows of x; scan folds run through the rows of x in place (exclusive: each row
// gets run before it is combined in).
type scanKern[A any] struct {
	reduce func(acc, x []A, inner int)
	scan   func(run, x []A, inner int, excl bool)
}

// scanGenericKern calls op per element.
func scanGenericKern[A any](op func(a, b A) A) scanKern[A] {
	return scanKern[A]{
		reduce: func(acc, x []A, inner int) {
			for r := 0; r+inner <= len(x); r += inner {
				row := x[r : r+inner]
				for j, v := range row {
					acc[j] = op(acc[j], v)
				}
			}
		},
		scan: func(run, x []A, inner int, excl bool) {
			for r := 0; r+inner <= len(x); r += inner {
				row := x[r : r+inner]
				for j, v := range row {
					if excl {
						row[j] = run[j]
						run[j] = op(run[j], v)
					} else {
						run[j] = op(run[j], v)
						row[j] = run[j]
					}
				}
			}
		},
	}
}

// scanNumKern has the built-in operators' loops written out (Go's min and max:
// NaN-propagating, -0 below +0).
func scanNumKern[A scanNum](op ScanOp) scanKern[A] {
	k := scanGenericKern(scanNumOp[A](op))
	if op == ScanMul {
		return k
	}
	k.scan = func(run, x []A, inner int, excl bool) {
		if inner == 1 {
			r := run[0]
			switch {
			case op == ScanAdd && !excl:
				for i, v := range x {
					r += v
					x[i] = r
				}
			case op == ScanAdd:
				for i, v := range x {
					x[i] = r
					r += v
				}
			case op == ScanMax && !excl:
				for i, v := range x {
					r = max(r, v)
					x[i] = r
				}
			case op == ScanMax:
				for i, v := range x {
					x[i] = r
					r = max(r, v)
				}
			case !excl:
				for i, v := range x {
					r = min(r, v)
					x[i] = r
				}
			default:
				for i, v := range x {
					x[i] = r
					r = min(r, v)
				}
			}
			run[0] = r
			return
		}
		for r := 0; r+inner <= len(x); r += inner {
			row := x[r : r+inner]
			run := run[:len(row)]
			switch {
			case op == ScanAdd && !excl:
				for j, v := range row {
					run[j] += v
					row[j] = run[j]
				}
			case op == ScanAdd:
				for j, v := range row {
					row[j] = run[j]
					run[j] += v
				}
			case op == ScanMax && !excl:
				for j, v := range row {
					run[j] = max(run[j], v)
					row[j] = run[j]
				}
			case op == ScanMax:
				for j, v := range row {
					row[j] = run[j]
					run[j] = max(run[j], v)
				}
			case !excl:
				for j, v := range row {
					run[j] = min(run[j], v)
					row[j] = run[j]
				}
			default:
				for j, v := range row {
					row[j] = run[j]
					run[j] = min(run[j], v)
				}
			}
		}
	}
	k.reduce = func(acc, x []A, inner int) {
		if inner == 1 {
			a := acc[0]
			switch op {
			case ScanAdd:
				for _, v := range x {
					a += v
				}
			case ScanMax:
				for _, v := range x {
					a = max(a, v)
				}
			default:
				for _, v := range x {
					a = min(a, v)
				}
			}
			acc[0] = a
			return
		}
		for r := 0; r+inner <= len(x); r += inner {
			row := x[r : r+inner]
			acc := acc[:len(row)]
			switch op {
			case ScanAdd:
				for j, v := range row {
					acc[j] += v
				}
			case ScanMax:
				for j, v := range row {
					acc[j] = max(acc[j], v)
				}
			default:
				for j, v := range row {
					acc[j] = min(acc[j], v)
				}
			}
		}
	}
	return k
}

// scanInPlace scans the contiguous [outer, n, inner] array x along its middle axis.
func scanInPlace[A any](l *cpu.Launch, x []A, outer, n, inner int, newKern func() scanKern[A], newOp func() func(a, b A) A, excl bool, init A) {
	rowsPer := max(1, scanChunk/inner) // rows of the axis per chunk
	nk := (n + rowsPer - 1) / rowsPer
	units := outer * nk
	grain := max(1, scanChunk/(rowsPer*inner))
	chunkOf := func(u int) []A {
		o, c := u/nk, u%nk
		r0, r1 := c*rowsPer, min(n, (c+1)*rowsPer)
		return x[(o*n+r0)*inner : (o*n+r1)*inner]
	}
	// prefix[u*inner + j] is the value before chunk u (has[u] says whether there is
	// one: not before the first chunk of an inclusive scan).
	var prefix []A
	var has []bool
	if nk > 1 {
		agg := make([]A, units*inner)
		l.Parallel(units, grain, func(a, b int) {
			k := newKern()
			for u := a; u < b; u++ {
				if u%nk == nk-1 {
					continue
				}
				ch := chunkOf(u)
				acc := agg[u*inner : (u+1)*inner]
				copy(acc, ch[:inner])
				k.reduce(acc, ch[inner:], inner)
			}
		})
		prefix = make([]A, units*inner)
		has = make([]bool, units)
		op := newOp()
		for o := 0; o < outer; o++ {
			for c := 0; c < nk; c++ {
				u := o*nk + c
				p := prefix[u*inner : (u+1)*inner]
				switch {
				case c == 0 && excl:
					for j := range p {
						p[j] = init
					}
					has[u] = true
				case c == 0:
				case !has[u-1]:
					copy(p, agg[(u-1)*inner:u*inner])
					has[u] = true
				default:
					q := prefix[(u-1)*inner : u*inner]
					a := agg[(u-1)*inner : u*inner]
					for j := range p {
						p[j] = op(q[j], a[j])
					}
					has[u] = true
				}
			}
		}
	}
	l.Parallel(units, grain, func(a, b int) {
		k := newKern()
		run := make([]A, inner)
		for u := a; u < b; u++ {
			ch := chunkOf(u)
			switch {
			case prefix != nil && has[u]:
				copy(run, prefix[u*inner:(u+1)*inner])
				k.scan(run, ch, inner, excl)
			case excl:
				for j := range run {
					run[j] = init
				}
				k.scan(run, ch, inner, true)
			default:
				// Inclusive from the start: the first row is its own value.
				copy(run, ch[:inner])
				k.scan(run, ch[inner:], inner, false)
			}
		}
	})
}
