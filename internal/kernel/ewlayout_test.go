package kernel

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
	"github.com/go-gpu/gpu/internal/ptxsim"

	"github.com/go-gpu/gpu/internal/testenv"
)

// Layout tests: strided, broadcast (zero strides), reversed (negative strides), scalar
// and index operands over ranks 1 to 4, odd launch grids, and 64-bit indexing past 2^31
// elements (on a virtual memory, running only some threads).

// stridedEnv: x, y operands (slots 0, 1) of type t, c bool (slot 2), i the index
// (slot 3, int64), p a parameter of type t.
func stridedEnv(t dtype.DType) expr.Env {
	return expr.Env{
		"x": expr.OperandDecl(0, t), "y": expr.OperandDecl(1, t), "c": expr.OperandDecl(2, dtype.Bool),
		"i": expr.OperandDecl(3, dtype.Int64), "p": expr.ParamDecl(0, t),
	}
}

var stridedSources = []string{"x + y", "where(c, x, y*p)", "x", "float64(x) * float64(i)", "x*p - y", "int64(x) + i", "c != (x < y)"}

// randShape returns a shape of the given rank with at most about 700 elements.
func randShape(r *rand.Rand, rank int) []int {
	limit := []int{0, 700, 30, 9, 5}[rank]
	s := make([]int, rank)
	for d := range s {
		s[d] = 1 + r.Intn(limit)
	}
	return s
}

// bijective returns strides visiting each element of shape once: the dimensions in a
// random order, padded, some reversed.
func bijective(r *rand.Rand, shape []int) []int {
	perm := r.Perm(len(shape))
	st := make([]int, len(shape))
	acc := 1
	for _, d := range perm {
		st[d] = acc
		acc *= shape[d] + r.Intn(2) // padding
	}
	for d := range st {
		if r.Intn(3) == 0 {
			st[d] = -st[d]
		}
	}
	return st
}

// broadcastStrides is bijective with some dimensions broadcast (stride 0).
func broadcastStrides(r *rand.Rand, shape []int) []int {
	st := bijective(r, shape)
	for d := range st {
		if r.Intn(3) == 0 {
			st[d] = 0
		}
	}
	return st
}

// TestElementwisePTXStrided runs random layouts of ranks 1 to 4 on the simulator.
func TestElementwisePTXStrided(t *testing.T) {
	types := []dtype.DType{dtype.Float32, dtype.Int16, dtype.Float64, dtype.Uint8, dtype.Float16, dtype.Int64, dtype.Bool}
	iters := 90
	switch {
	case sweep:
		iters = 1500
	case testenv.Race:
		iters = 24
	}
	r := rand.New(rand.NewSource(7))
	ran := 0
	for it := 0; it < iters; it++ {
		ty := types[it%len(types)]
		ex, err := expr.Parse(stridedSources[r.Intn(len(stridedSources))], stridedEnv(ty))
		if err != nil {
			continue
		}
		rank := 1 + it%4
		shape := randShape(r, rank)
		e := &Elementwise{Expr: ex, Out: Operand{ex.DType(), Contig}, Rank: rank, Index64: r.Intn(3) == 0}
		strides := map[int][]int{}
		kinds := []OpKind{Contig, Strided, Strided, Scalar}
		for k, in := range []dtype.DType{ty, ty, dtype.Bool, dtype.Int64} {
			kind := kinds[r.Intn(len(kinds))]
			if k == 3 {
				kind = Index
			}
			e.Ins = append(e.Ins, Operand{in, kind})
			if kind == Strided {
				if r.Intn(2) == 0 {
					strides[k] = bijective(r, shape)
				} else {
					strides[k] = broadcastStrides(r, shape)
				}
			}
		}
		readStrided := false
		for _, in := range ex.Inputs {
			readStrided = readStrided || e.Ins[in.Index].Kind == Strided
		}
		if r.Intn(2) == 0 || !readStrided {
			e.Out.Kind = Strided
			strides[-1] = bijective(r, shape)
		}
		if err := e.Validate(); err != nil {
			t.Fatalf("%s: %v", e.Key(), err)
		}
		src, entry, err := e.PTX(9, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 1
		for _, s := range shape {
			n *= s
		}
		grid, blk := e.Geometry(n, 1)
		if it%3 == 1 {
			grid, blk = 2, 45
		}
		c := &ewCase{e: e, shape: shape, strides: strides, grid: grid, blk: blk, seed: r.Int63(),
			misaligned: r.Intn(2) == 0, params: paramsFor(ex, r)}
		t.Run(fmt.Sprintf("%d/%v/%v", it, ex, shape), func(t *testing.T) {
			c.check(t, c.run(t, src, entry))
		})
		ran++
	}
	if ran < iters/2 {
		t.Errorf("only %d of %d cases ran", ran, iters)
	}
}

// TestElementwisePTXGrids runs vector and scalar kernels with launches of every shape:
// one thread, partial warps, more threads than elements.
func TestElementwisePTXGrids(t *testing.T) {
	for _, src := range []string{"x*p + y", "float16(x) == float16(y)", "int8(x)"} {
		ex := expr.MustParse(src, env(dtype.Float32))
		for _, v := range variants[:4] {
			e := specFor(opCase{ex: ex, t: dtype.Float32}, v)
			ptxSrc, entry, err := e.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := rand.New(rand.NewSource(int64(hashOf(src))))
			sizes := []int{1, 7, 33, 1025}
			if testenv.Race {
				sizes = sizes[:3]
			}
			for _, n := range sizes {
				for _, g := range [][2]int{{1, 1}, {1, 3}, {2, 32}, {5, 64}, {n/32 + 3, 32}} {
					c := &ewCase{e: e, n: n, grid: g[0], blk: g[1], seed: r.Int63(), misaligned: v.misaligned, params: paramsFor(ex, r)}
					c.check(t, c.run(t, ptxSrc, entry))
				}
			}
		}
	}
}

// ---- past 2^31 elements ----

// virtMem is memory too large to hold: inputs whose element j has bits fn(j), and an
// output of which only what is stored is kept.
type virtMem struct {
	ins     []virtIn
	outBase uint64
	outSize uint64
	stores  map[uint64]byte
}

type virtIn struct {
	base, size uint64
	esize      int
	fn         func(j int64) uint64
}

func (m *virtMem) Load(addr uint64, b []byte) error {
	for _, in := range m.ins {
		if addr >= in.base && addr+uint64(len(b)) <= in.base+in.size {
			off := addr - in.base
			if off%uint64(in.esize) != 0 || len(b)%in.esize != 0 {
				return fmt.Errorf("partial element access")
			}
			for k := 0; k < len(b); k += in.esize {
				putBits(b[k:], in.esize, in.fn(int64(off/uint64(in.esize))+int64(k/in.esize)))
			}
			return nil
		}
	}
	return fmt.Errorf("load outside the inputs")
}

func (m *virtMem) Store(addr uint64, b []byte) error {
	if addr < m.outBase || addr+uint64(len(b)) > m.outBase+m.outSize {
		return fmt.Errorf("store outside the output")
	}
	for k, v := range b {
		m.stores[addr+uint64(k)] = v
	}
	return nil
}

func hashBits(j int64, salt uint64) uint64 {
	x := uint64(j)*0x9E3779B97F4A7C15 ^ salt
	x ^= x >> 31
	x *= 0xBF58476D1CE4E5B9
	x ^= x >> 29
	return x
}

// TestElementwisePTXLarge runs the threads of large launches whose elements lie around
// 2^31 and 2^32 and at the end, with 64-bit indices (n > 2^32) and with 32-bit indices
// at the largest n they allow (2^31-1, where i + T must not wrap), and checks every
// element those threads must write.
func TestElementwisePTXLarge(t *testing.T) {
	envF := env(dtype.Float32)
	axpb := expr.MustParse("x*p + y", envF)
	type tcase struct {
		name    string
		e       *Elementwise
		n       int64
		shape   []int
		strides map[int][]int
		grid    int
		threads []int64
	}
	tr := func(a, b int) map[int][]int { return map[int][]int{0: {1, a}} } // x transposed
	cases := []tcase{
		{name: "vector/i64", e: &Elementwise{Expr: axpb, Ins: []Operand{{dtype.Float32, Contig}, {dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}, Index64: true, Vector: true},
			n: 1<<32 + 37, grid: 1 << 20, threads: []int64{0, 1, 8, 9, 10, 1<<28 - 1, 12345}},
		{name: "scalar/i64", e: &Elementwise{Expr: axpb, Ins: []Operand{{dtype.Float32, Contig}, {dtype.Float32, Scalar}}, Out: Operand{dtype.Float32, Contig}, Index64: true},
			n: 1<<32 + 3, grid: 1 << 22, threads: []int64{0, 2, 3, 4, 1<<30 - 1, 777}},
		{name: "vector/i32", e: &Elementwise{Expr: axpb, Ins: []Operand{{dtype.Float32, Contig}, {dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}, Vector: true},
			n: 1<<31 - 1, grid: 1 << 19, threads: []int64{0, 1, 2, 3, 4, 1<<27 - 1, 1<<27 - 2, 5000}},
		{name: "scalar/i32", e: &Elementwise{Expr: axpb, Ins: []Operand{{dtype.Float32, Contig}, {dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}},
			n: 1<<31 - 1, grid: 1 << 21, threads: []int64{0, 1, 1<<29 - 2, 1<<29 - 1, 1 << 29, 99}},
		{name: "scalar/i32/hugegrid", e: &Elementwise{Expr: axpb, Ins: []Operand{{dtype.Float32, Contig}, {dtype.Float32, Contig}}, Out: Operand{dtype.Float32, Contig}},
			n: 1<<31 - 1, grid: 1<<31 - 1, threads: []int64{0, 1<<31 - 2, 1<<31 - 1, 1 << 32, 1<<39 + 5}},
		{name: "strided/i64", e: &Elementwise{Expr: axpb, Ins: []Operand{{dtype.Float32, Strided}, {dtype.Float32, Scalar}}, Out: Operand{dtype.Float32, Contig}, Rank: 2, Index64: true},
			shape: []int{1<<16 + 3, 1<<16 + 1}, strides: tr(1<<16+3, 0), grid: 1 << 22, threads: []int64{0, 5, 1<<30 - 1, 123456}},
		{name: "strided/i32", e: &Elementwise{Expr: axpb, Ins: []Operand{{dtype.Float32, Strided}, {dtype.Float32, Scalar}}, Out: Operand{dtype.Float32, Contig}, Rank: 2},
			shape: []int{1<<15 - 1, 1<<16 + 1}, strides: tr(1<<15-1, 0), grid: 1 << 21, threads: []int64{0, 5, 1<<29 - 1, 123456}},
	}
	const blk = 256
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := tc.e
			n := tc.n
			if tc.shape != nil {
				n = int64(tc.shape[0]) * int64(tc.shape[1])
				// Transposed x: element (a, b) at offset a + b*shape[0].
				tc.strides = map[int][]int{0: {1, tc.shape[0]}}
			}
			src, entry, err := e.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ptxsim.Parse(src)
			if err != nil {
				t.Fatal(err)
			}
			k := m.Func(entry)
			p := float32(1.25)
			xf := func(j int64) uint64 { return uint64(math.Float32bits(float32(int32(hashBits(j, 1))) / 4096)) }
			yf := func(j int64) uint64 { return uint64(math.Float32bits(float32(int32(hashBits(j, 2))) / 4096)) }
			xlen := n
			if tc.shape != nil {
				xlen = n
			}
			mem := &virtMem{outBase: 1 << 44, outSize: uint64(n) * 4, stores: map[uint64]byte{},
				ins: []virtIn{{base: 1 << 40, size: uint64(xlen) * 4, esize: 4, fn: xf}, {base: 1 << 42, size: uint64(n) * 4, esize: 4, fn: yf}}}
			args := []uint64{mem.outBase, uint64(n), 1 << 40, 1 << 42}
			if tc.shape != nil {
				args = append(args, uint64(tc.shape[0]), uint64(tc.shape[1]), 1, uint64(tc.shape[0]))
			}
			args = append(args, uint64(math.Float32bits(p)))
			T := int64(tc.grid) * blk
			for _, g := range tc.threads {
				if _, err := k.Run(mem, ptxsim.Dim{Tid: uint32(g % blk), Ntid: blk, Ctaid: uint32(g / blk), Nctaid: uint32(tc.grid)}, args); err != nil {
					t.Fatalf("thread %d: %v", g, err)
				}
			}
			// Every element of the threads run, and nothing else.
			want := map[int64]bool{}
			for _, g := range tc.threads {
				for _, i := range elementsOf(g, T, n, e) {
					want[i] = true
				}
			}
			if len(mem.stores) != 4*len(want) {
				t.Errorf("%d bytes stored, want %d (elements %d)", len(mem.stores), 4*len(want), len(want))
			}
			checked := 0
			for i := range want {
				var b [4]byte
				for q := range b {
					v, ok := mem.stores[mem.outBase+uint64(i)*4+uint64(q)]
					if !ok {
						t.Fatalf("element %d not written", i)
					}
					b[q] = v
				}
				xi := i
				if tc.shape != nil {
					s1 := int64(tc.shape[1])
					xi = i/s1 + (i%s1)*int64(tc.shape[0])
				}
				x := math.Float32frombits(uint32(xf(xi)))
				y := math.Float32frombits(uint32(yf(i)))
				if tc.e.Ins[1].Kind == Scalar {
					y = math.Float32frombits(uint32(yf(0)))
				}
				w := float32(float32(x*p) + y)
				if got := math.Float32frombits(uint32(getBits(b[:], 4))); got != w {
					t.Errorf("element %d: got %v, want %v", i, got, w)
				}
				checked++
			}
			t.Logf("%d elements checked, the largest index %d", checked, maxKey(want))
		})
	}
}

func maxKey(m map[int64]bool) int64 {
	var x int64 = -1
	for k := range m {
		x = max(x, k)
	}
	return x
}

// elementsOf returns the elements thread g of T threads writes, by the kernel's plan.
func elementsOf(g, T, n int64, e *Elementwise) []int64 {
	if g >= n {
		return nil
	}
	p := e.plan()
	var out []int64
	if p.V == 1 {
		for i := g; i < n; i += T {
			out = append(out, i)
		}
		return out
	}
	V := int64(p.V)
	nv := n / V
	for v := g; v < nv; v += T {
		for j := int64(0); j < V; j++ {
			out = append(out, v*V+j)
		}
	}
	for j := g; j < n%V; j += T {
		out = append(out, nv*V+j)
	}
	return out
}

// TestElementwisePTXIndex runs kernels reading the element index (arange-like), in
// every contiguous layout.
func TestElementwisePTXIndex(t *testing.T) {
	for _, src := range []string{"float32(i)*float32(p) + float32(x)", "i", "float64(i) - float64(x)", "int8(i) == int8(x)", "uint16(i)"} {
		ex := expr.MustParse(src, stridedEnv(dtype.Int16))
		for _, v := range variants[:4] {
			e := &Elementwise{Expr: ex, Ins: []Operand{{dtype.Int16, Contig}, {dtype.Int16, Contig}, {dtype.Bool, Contig}, {dtype.Int64, Index}},
				Out: Operand{ex.DType(), Contig}, Vector: v.vector, Index64: v.index64}
			r := rand.New(rand.NewSource(int64(hashOf(src))))
			sizes := []int{1, 37, 1025}
			if testenv.Race {
				sizes = sizes[:2]
			}
			runCaseExempt(t, e, sizes, r.Int63(), v.misaligned, 0, nil, nil)
		}
	}
}

// specials returns the special values of type t as bits: every value of specialF64
// converted, or of specialU64 truncated, without duplicates.
func specials(t dtype.DType) []uint64 {
	seen := map[uint64]bool{}
	var out []uint64
	add := func(b uint64) {
		if !seen[b] {
			seen[b] = true
			out = append(out, b)
		}
	}
	switch {
	case t == dtype.Bool:
		return []uint64{0, 1}
	case t.IsInteger():
		for _, v := range specialU64 {
			if t.Bits() < 64 {
				v &= 1<<t.Bits() - 1
			}
			add(v)
		}
	default:
		for _, f := range specialF64 {
			switch t {
			case dtype.Float64:
				add(math.Float64bits(f))
			case dtype.Float32:
				add(uint64(math.Float32bits(float32(f))))
			case dtype.Float16:
				add(uint64(dtype.Float16FromFloat64(f)))
			default:
				add(uint64(dtype.BFloat16FromFloat64(f)))
			}
		}
		// NaNs with both signs and payloads, and the half types' own extremes.
		switch t {
		case dtype.Float16, dtype.BFloat16:
			for _, b := range []uint64{0x7e01, 0xfe01, 0x0001, 0x8001, 0x03ff, 0x7bff, 0xfbff, 0x7f7f} {
				add(b)
			}
		case dtype.Float32:
			for _, b := range []uint64{0x7fc00001, 0xffc00001, 0x7f800001, 0x00000001, 0x807fffff} {
				add(b)
			}
		}
	}
	return out
}

// TestElementwisePTXEdges runs the operators, exact functions and conversions on every
// pair of special values of each type (zeros, infinities, NaNs of both signs,
// subnormals, halfway cases, integer limits, shift counts around the width).
func TestElementwisePTXEdges(t *testing.T) {
	unary := []string{"-x", "^x", "!x", "abs(x)", "sqrt(x)", "floor(x)", "ceil(x)", "trunc(x)", "rint(x)",
		"sign(x)", "isnan(x)", "isinf(x)", "isfinite(x)", "signbit(x)", "square(x)", "reciprocal(x)"}
	binary := []string{"x + y", "x - y", "x * y", "x / y", "x % y", "x & y", "x << y", "x >> y", "x == y",
		"x != y", "x < y", "x >= y", "minimum(x, y)", "maximum(x, y)", "fmin(x, y)", "fmax(x, y)",
		"copysign(x, y)", "pow(x, y)", "where(x < y, x, y)"}
	for _, ty := range allTypes {
		sp := specials(ty)
		var xs, ys []uint64
		for _, a := range sp {
			for _, b := range sp {
				xs, ys = append(xs, a), append(ys, b)
			}
		}
		var srcs []string
		srcs = append(srcs, unary...)
		for _, to := range allTypes {
			srcs = append(srcs, to.String()+"(x)")
		}
		srcs = append(srcs, binary...)
		for k, src := range srcs {
			ex, err := expr.Parse(src, env(ty))
			if err != nil {
				continue
			}
			if uses, _ := usesLibrary(ex.Root); uses {
				continue // pow on floats is a library function: the mirror tests check it
			}
			if testenv.Race && k%6 != 0 {
				continue
			}
			v := variants[k%2]
			e := specFor(opCase{ex: ex, t: ty}, v)
			src, entry, err := e.PTX(9, 0)
			if err != nil {
				t.Fatal(err)
			}
			n := len(xs)
			grid, blk := e.Geometry(n, 2)
			c := &ewCase{e: e, n: n, grid: grid, blk: blk, seed: int64(k), misaligned: v.misaligned,
				data: map[int][]uint64{0: xs, 1: ys}}
			c.check(t, c.run(t, src, entry))
		}
	}
}

func TestElementwiseGeometry(t *testing.T) {
	ex := expr.MustParse("x*p + y", env(dtype.Float32))
	vec := specFor(opCase{ex: ex, t: dtype.Float32}, variants[0])
	sc := specFor(opCase{ex: ex, t: dtype.Float32}, variants[1])
	for _, c := range []struct {
		e           *Elementwise
		n, sms      int
		grid, block int
	}{
		{vec, 1, 132, 1, 256},
		{vec, 1 << 28, 132, 132 * 64, 256}, // capped: 8 waves of 8 blocks per SM
		{vec, 512 * 1000, 132, 500, 256},   // small: one vector per thread
		{vec, 1 << 24, 132, 4096, 256},     // one iteration of 4 vectors per thread
		{sc, 1 << 28, 132, 132 * 64, 256},  // scalar loop, capped
		{sc, 1000, 0, 4, 256},              // no SM count: at least one
		{vec, 1<<31 - 1, 1, 64, 256},       // one SM
	} {
		g, b := c.e.Geometry(c.n, c.sms)
		if g != c.grid || b != c.block {
			t.Errorf("Geometry(%d, %d) vector=%v = %d, %d; want %d, %d", c.n, c.sms, c.e.Vector, g, b, c.grid, c.block)
		}
	}
}
