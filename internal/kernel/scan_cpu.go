package kernel

import (
	"fmt"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/fp"
)

// The CPU scan: the input is converted into the output (which has the accumulator type
// and the contiguous [outer, n, inner] layout), in parallel, and then scanned in place.
// The scanned axis is cut into chunks of a fixed number of elements (scanChunk, whole
// rows of inner columns): chunk aggregates are computed in parallel, combined in order
// into chunk prefixes, and each chunk is then scanned from its prefix in parallel (the
// two-pass "reduce then scan" scheme). Within a chunk the fold is sequential, left to
// right, with the operator table's loops (operator.go: foldRows, scanRows). The chunking
// doesn't depend on the number of workers, so the results are the same on every
// machine: exact for integers and for maximum and minimum (NaNs canonical); for float
// sums and products, the sequential fold reassociated at chunk boundaries.

// scanChunk is the number of elements per chunk of the CPU scan.
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
	if c.Expr != nil {
		if prog, err = c.Expr.Compile(); err != nil {
			return nil, err
		}
	}
	op := c.Op.For(c.Type)
	canon := c.canonFirst()
	switch c.Type {
	case dtype.Bool, dtype.Uint8:
		return scanOfT[uint8](in, conv, op, prog, excl, canon), nil
	case dtype.Int8:
		return scanOfT[int8](in, conv, op, prog, excl, canon), nil
	case dtype.Int16:
		return scanOfT[int16](in, conv, op, prog, excl, canon), nil
	case dtype.Int32:
		return scanOfT[int32](in, conv, op, prog, excl, canon), nil
	case dtype.Int64:
		return scanOfT[int64](in, conv, op, prog, excl, canon), nil
	case dtype.Uint16:
		return scanOfT[uint16](in, conv, op, prog, excl, canon), nil
	case dtype.Uint32:
		return scanOfT[uint32](in, conv, op, prog, excl, canon), nil
	case dtype.Uint64:
		return scanOfT[uint64](in, conv, op, prog, excl, canon), nil
	case dtype.Float32:
		return scanOfT[float32](in, conv, op, prog, excl, canon), nil
	case dtype.Float64:
		return scanOfT[float64](in, conv, op, prog, excl, canon), nil
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

// scanOfT returns the scan into accumulators of Go type A; canon is Combine.canonFirst.
func scanOfT[A fp.Number](in dtype.DType, conv *expr.Program, op Op, prog *expr.Program, excl, canon bool) scanRun {
	// The operator: the table's loops (operator.go), or the expression's, evaluated per
	// element by a program of each worker.
	newOp := func() func(a, b A) A { return CombineFunc[A](op) }
	newKern := func() scanKern[A] {
		k := scanKern[A]{
			reduce: func(acc, x []A) { foldRows(op, acc, x) },
			scan:   func(run, x []A, excl bool) { scanRows(op, run, x, excl) },
		}
		if canon {
			k.first = canonFirstRow[A]
		}
		return k
	}
	if prog != nil {
		newOp = scanExprOp[A](prog)
		newKern = func() scanKern[A] { return scanExprKern(newOp()) }
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
		init := fp.FromBits[A](initBits)
		if canon {
			init = fp.Canon(init)
		}
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

// scanKern folds rows of len(acc) values: reduce sets acc[j] = acc[j] ⊕ x[r*inner+j]
// over the rows of x; scan folds run through the rows of x in place (exclusive: each
// row gets run before it is combined in); first, if not nil, starts an inclusive scan
// from its first row, which no combination produces: it copies the row into run as the
// scan stores it (canonFirstRow); nil: a plain copy.
type scanKern[A any] struct {
	reduce func(acc, x []A)
	scan   func(run, x []A, excl bool)
	first  func(run, row []A)
}

// canonFirstRow copies row into run, making its NaNs canonical in both
// (Combine.canonFirst): the pass of the copy, and a store only for a NaN.
func canonFirstRow[A fp.Number](run, row []A) {
	for j, v := range row {
		if v != v {
			v = fp.NaN[A]()
			row[j] = v
		}
		run[j] = v
	}
}

// scanExprKern calls an expression operator per element.
func scanExprKern[A any](op func(a, b A) A) scanKern[A] {
	return scanKern[A]{
		reduce: func(acc, x []A) {
			for r := 0; r+len(acc) <= len(x); r += len(acc) {
				for j, v := range x[r : r+len(acc)] {
					acc[j] = op(acc[j], v)
				}
			}
		},
		scan: func(run, x []A, excl bool) {
			for r := 0; r+len(run) <= len(x); r += len(run) {
				row := x[r : r+len(run)]
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
				k.reduce(acc, ch[inner:])
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
				k.scan(run, ch, excl)
			case excl:
				for j := range run {
					run[j] = init
				}
				k.scan(run, ch, true)
			default:
				// Inclusive from the start: the first row is its own value (its NaNs
				// canonical for the table's float operators: Combine.canonFirst).
				if k.first != nil {
					k.first(run, ch[:inner])
				} else {
					copy(run, ch[:inner])
				}
				k.scan(run, ch[inner:], false)
			}
		}
	})
}
