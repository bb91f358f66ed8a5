package kernel

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/fp"
	"github.com/go-gpu/gpu/ptx"
)

// PTX of the row statistics (see RowStat). One thread folds Items vectors of Vec
// elements of a tile at a time (loads of every item in flight before any use; an item
// past the range loads the range's first vector instead and is masked), keeps one state,
// and the row's threads merge their states with shuffles down to lane 0 and, across
// warps, through shared memory. Lane 0 (thread 0) then holds the row's state; a transform
// broadcasts it and every thread writes its elements, from registers when the row was
// one tile (OneTile), else by reading them again.

// PTX returns the kernel's PTX text and entry name.
func (r *RowStat) PTX(major, minor int) (src, entry string, err error) {
	if err := r.Validate(); err != nil {
		return "", "", err
	}
	if (r.Out == dtype.BFloat16 || r.In == dtype.BFloat16) && major < 8 {
		return "", "", fmt.Errorf("kernel: bfloat16 row statistics need sm_80 or later: %w", backend.ErrNotSupported)
	}
	m := ptx.NewModule(major, minor)
	entry = "row_stat"
	params := []ptx.Param{ptx.P("in", ptx.U64), ptx.P("out", ptx.U64), ptx.P("part", ptx.U64),
		ptx.P("rows", ptx.U64), ptx.P("n", ptx.U64), ptx.P("parts", ptx.U64), ptx.P("chunk", ptx.U64),
		ptx.P("arg", ptx.F64), ptx.P("w", ptx.U64), ptx.P("b", ptx.U64)}
	f := m.Kernel(entry, params...)
	blockAttrs(f, r.Block())
	if r.Block() == 1024 && !r.OneTile && r.Comp == dtype.Float32 && r.Items*r.Vec <= 16 {
		// Two blocks a multiprocessor (32 registers a thread) keep one block's loads
		// in flight while the other merges its states: the 16384-element rows of a
		// float32 LogSumExp fit without spills (CUDA 13's ptxas).
		f.Attr(".minnctapersm 2")
	}
	g := &statGen{r: r, f: f, m: m, ct: ptx.F32, major: major}
	if r.Comp == dtype.Float64 {
		g.ct = ptx.F64
	}
	g.build()
	return m.String(), entry, nil
}

type statGen struct {
	r  *RowStat
	f  *ptx.Func
	m  *ptx.Module
	ct ptx.Type // the compute type
	// major is the target's compute capability major version (max.NaN from 8 on).
	major int

	in, out, part, w, b Reg64
	rows, n, parts      Reg64
	chunk               Reg64
	arg                 ptx.Reg // ct
	t                   ptx.Reg // u32: the thread's index in its row group
	unit, row, lo, hi   Reg64
	rowIn, rowOut       Reg64   // addresses of the row's element 0
	tV                  Reg64   // t*Vec
	shift               ptx.Reg // ct: the moments' shift K (shiftReg)
}

// Reg64 is a u64 register.
type Reg64 = ptx.Reg

// state is a thread's fold state.
type statReg struct {
	cnt  ptx.Reg // u32 (moments)
	a, b ptx.Reg // ct
}

func (g *statGen) imm(v float64) ptx.Operand {
	if g.ct == ptx.F64 {
		return ptx.ImmF64(v)
	}
	return ptx.ImmF32(float32(v))
}

func (g *statGen) u64() ptx.Reg { return g.f.Reg(ptx.U64) }

func (g *statGen) build() {
	f, r := g.f, g.r
	g.in, g.out, g.part = f.LdParam(0), f.LdParam(1), f.LdParam(2)
	g.rows, g.n, g.parts, g.chunk = f.LdParam(3), f.LdParam(4), f.LdParam(5), f.LdParam(6)
	arg := f.LdParam(7)
	g.arg = arg
	if g.ct == ptx.F32 {
		g.arg = f.Reg(ptx.F32)
		f.Cvt(g.arg, arg)
	}
	if r.Weight {
		g.w = f.LdParam(8)
	}
	if r.Bias {
		g.b = f.LdParam(9)
	}
	tid := f.Special(ptx.TidX)
	g.t = tid
	grp := f.Reg(ptx.U32)
	f.Mov(grp, ptx.Int(0))
	if rpb := r.RowsPerBlock(); rpb > 1 {
		g.t = f.Reg(ptx.U32)
		f.And(g.t, tid, ptx.Int(r.Threads-1))
		f.Shr(grp, tid, ptx.Int(bits.TrailingZeros(uint(r.Threads))))
	}
	cta := f.Special(ptx.CtaidX)
	g.unit = g.u64()
	f.MulWide(g.unit, cta, ptx.Int(r.RowsPerBlock()))
	grp64 := g.u64()
	f.Cvt(grp64, grp)
	f.Add(g.unit, g.unit, grp64)
	g.tV = g.u64()
	f.MulWide(g.tV, g.t, ptx.Int(r.Vec))

	exit := f.NewLabel()
	byChunk := r.Pass == StatPartial || (r.Pass == StatFinish && r.Op.Transform())
	g.row, g.lo, g.hi = g.u64(), g.u64(), g.u64()
	if byChunk {
		total := g.u64()
		f.Mul(total, g.rows, g.parts)
		f.At(f.Setp(ptx.Ge, g.unit, total)).Bra(exit)
		f.Div(g.row, g.unit, g.parts)
		p := g.u64()
		f.Rem(p, g.unit, g.parts)
		f.Mul(g.lo, p, g.chunk)
		f.Min(g.lo, g.lo, g.n)
		f.Add(g.hi, g.lo, g.chunk)
		f.Min(g.hi, g.hi, g.n)
	} else {
		f.At(f.Setp(ptx.Ge, g.unit, g.rows)).Bra(exit)
		f.Mov(g.row, g.unit)
		f.Mov(g.lo, ptx.Int(0))
		f.Mov(g.hi, g.n)
	}
	rowOff := g.u64()
	f.Mul(rowOff, g.row, g.n)
	g.rowIn = g.u64()
	f.Fma(g.rowIn, rowOff, ptx.Int(r.In.Size()), g.in)
	g.rowOut = g.u64()
	f.Fma(g.rowOut, rowOff, ptx.Int(r.Out.Size()), g.out)

	var st statReg
	var x [][]ptx.Reg // OneTile values, nil otherwise
	var valid []ptx.Reg
	var tmax ptx.Reg // OneTile softmax: the thread's maximum (x holds exp(x - tmax))
	switch r.Pass {
	case StatFull, StatPartial:
		st, x, valid, tmax = g.foldRange()
	case StatFinish:
		st = g.mergeRecords()
	}
	g.reduceRow(&st)

	switch {
	case r.Pass == StatPartial:
		g.ifThread0(func() { g.putRecord(st) })
	case !r.Op.Transform():
		g.ifThread0(func() {
			v := g.finishValue(st)
			addr := g.u64()
			f.Fma(addr, g.row, ptx.Int(r.Out.Size()), g.out)
			g.store(ptx.Mem(addr, 0), []ptx.Reg{v})
		})
	default:
		g.writeRange(st, x, valid, tmax)
	}
	f.Place(exit)
	f.Ret()
}

// ifThread0 runs body in the row group's thread 0 only.
func (g *statGen) ifThread0(body func()) {
	skip := g.f.NewLabel()
	g.f.At(g.f.Setp(ptx.Ne, g.t, ptx.Int(0))).Bra(skip)
	body()
	g.f.Place(skip)
}

// initState returns the identity state.
func (g *statGen) initState() statReg {
	f := g.f
	st := statReg{cnt: f.Reg(ptx.U32), a: f.Reg(g.ct), b: f.Reg(g.ct)}
	f.Mov(st.cnt, ptx.Int(0))
	f.Mov(st.b, g.imm(0))
	if g.r.Op.moments() {
		f.Mov(st.a, g.imm(0))
	} else {
		f.Mov(st.a, g.imm(math.Inf(-1)))
	}
	return st
}

// loadTile loads the thread's items of the tile at t0: x[i][v] in the compute type and
// valid[i] (whether item i is inside [t0, hi)). Items past the range hold the range's
// first vector.
func (g *statGen) loadTile(t0 Reg64) (x [][]ptx.Reg, valid []ptx.Reg) {
	f, r := g.f, g.r
	mt := ptx.MemType(r.In)
	raw := make([][]ptx.Reg, r.Items)
	x = make([][]ptx.Reg, r.Items)
	valid = make([]ptx.Reg, r.Items)
	for i := 0; i < r.Items; i++ {
		e := g.u64()
		f.Add(e, t0, g.tV)
		if i > 0 {
			f.Add(e, e, ptx.Int(i*r.Threads*r.Vec))
		}
		valid[i] = f.Setp(ptx.Lt, e, g.hi)
		f.Selp(e, e, g.lo, valid[i])
		addr := g.u64()
		f.Fma(addr, e, ptx.Int(r.In.Size()), g.rowIn)
		raw[i] = f.Regs(regOfMem(mt), r.Vec)
		f.Ld(ptx.Global, ptx.NC, mt, ptx.Mem(addr, 0), raw[i]...)
	}
	for i := range raw {
		x[i] = make([]ptx.Reg, r.Vec)
		for v := range raw[i] {
			x[i][v] = g.toComp(raw[i][v], r.In)
		}
	}
	return x, valid
}

// shiftTile subtracts the moments' shift K from a tile's values, in place.
func (g *statGen) shiftTile(x [][]ptx.Reg) {
	k := g.shiftReg()
	for i := range x {
		for _, v := range x[i] {
			g.f.Sub(v, v, k)
		}
	}
}

// shiftReg returns K, the moments' shift: the row's first element (0 for an empty row,
// which reads nothing), loaded where it is first asked for, a point that must dominate
// its later uses: after a single tile's loads (so that it is not live beside them),
// before the loop over the tiles, or before the write's loop (which subtracts K + mean
// instead: K is not live through that loop, beside the weights' and biases' loads; one
// more register there made a 1024-thread layer norm spill, ptxas).
func (g *statGen) shiftReg() ptx.Reg {
	if g.shift != (ptx.Reg{}) {
		return g.shift
	}
	f, r := g.f, g.r
	mt := ptx.MemType(r.In)
	raw := f.Reg(regOfMem(mt))
	if mt == ptx.B16 {
		f.Mov(raw, ptx.Uint(0))
	} else {
		f.Mov(raw, g.imm(0))
	}
	f.At(f.Setp(ptx.Ne, g.n, ptx.Int(0))).Op("ld.global.nc"+mt.String(), raw, ptx.Mem(g.rowIn, 0))
	g.shift = g.toComp(raw, r.In)
	return g.shift
}

// regOfMem is the register type loads of memory type mt go to.
func regOfMem(mt ptx.Type) ptx.Type {
	if mt == ptx.B16 {
		return ptx.B16
	}
	return mt
}

// toComp converts a loaded element of type t to the compute type.
func (g *statGen) toComp(v ptx.Reg, t dtype.DType) ptx.Reg {
	f := g.f
	var x32 ptx.Reg
	switch t {
	case dtype.Float64:
		return v // Comp is Float64 then
	case dtype.Float32:
		x32 = v
	case dtype.Float16:
		x32 = f.Reg(ptx.F32)
		f.Op("cvt.f32.f16", x32, v)
	case dtype.BFloat16:
		w := f.Reg(ptx.U32)
		f.Op("cvt.u32.u16", w, v)
		f.Shl(w, w, ptx.Int(16))
		x32 = f.Reg(ptx.F32)
		f.Op("mov.b32", x32, w)
	}
	if g.ct == ptx.F64 {
		d := f.Reg(ptx.F64)
		f.Cvt(d, x32)
		return d
	}
	return x32
}

// fromComp converts a compute-type value to a register of r.Out's memory type.
func (g *statGen) fromComp(v ptx.Reg) ptx.Reg {
	f, out := g.f, g.r.Out
	if out == dtype.Float64 {
		return v
	}
	x32 := v
	if g.ct == ptx.F64 {
		x32 = f.Reg(ptx.F32)
		f.Cvt(x32, v)
	}
	switch out {
	case dtype.Float16:
		h := f.Reg(ptx.B16)
		f.Op("cvt.rn.f16.f32", h, x32)
		return h
	case dtype.BFloat16:
		h := f.Reg(ptx.B16)
		f.Op("cvt.rn.bf16.f32", h, x32)
		return h
	}
	return x32
}

// store stores compute-type values at addr (consecutive elements of r.Out).
func (g *statGen) store(addr ptx.Addr, vals []ptx.Reg) {
	ops := make([]ptx.Operand, len(vals))
	for i, v := range vals {
		if g.ct == ptx.F64 {
			// float64 arithmetic keeps a NaN's payload on the GPU: store the canonical
			// NaN (internal/fp's policy; float32 arithmetic gives it itself).
			c := g.f.Reg(ptx.F64)
			g.f.Selp(c, g.imm(math.Float64frombits(fp.NaN64Bits)), v, g.f.Setp(ptx.NaN, v, v))
			v = c
		}
		ops[i] = g.fromComp(v)
	}
	g.f.St(ptx.Global, ptx.CacheDefault, ptx.MemType(g.r.Out), addr, ops...)
}

// nanMax sets d = max(a, b) with NaN propagated.
func (g *statGen) nanMax(d, a, b ptx.Reg) {
	f := g.f
	if g.major >= 8 && g.ct == ptx.F32 {
		f.Op("max.NaN"+g.ct.String(), d, a, b) // sm_80+, float32 (and halves) only: one instruction
		return
	}
	nan := f.Reg(ptx.Pred)
	f.Op("setp.nan"+g.ct.String(), nan, a, b)
	s := f.Reg(g.ct)
	f.Add(s, a, b)
	f.Max(d, a, b)
	f.Selp(d, s, d, nan)
}

// foldTile folds the values (valid items only) into st. For the softmax statistics it
// returns exp(x - mt) of every item (0 for invalid items and for a tile whose maximum
// mt is -Inf), mt being st.a after the fold when st starts as the identity.
func (g *statGen) foldTile(st statReg, x [][]ptx.Reg, valid []ptx.Reg) (es [][]ptx.Reg) {
	f, r := g.f, g.r
	if r.Op.moments() {
		g.shiftTile(x) // x - K, in place: what the write uses too
		k := f.Reg(ptx.U32)
		f.Mov(k, ptx.Int(0))
		sum := f.Reg(g.ct)
		f.Mov(sum, g.imm(0))
		for i := range x {
			kv := f.Reg(ptx.U32)
			f.Selp(kv, ptx.Int(r.Vec), ptx.Int(0), valid[i])
			f.Add(k, k, kv)
			for _, v := range x[i] {
				d := f.Reg(g.ct)
				f.Selp(d, v, g.imm(0), valid[i])
				f.Add(sum, sum, d)
			}
		}
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Eq, k, ptx.Int(0))).Bra(skip)
		kf := f.Reg(g.ct)
		f.Cvt(kf, k)
		mean := f.Reg(g.ct) // of x - K
		f.Div(mean, sum, kf)
		m2 := f.Reg(g.ct)
		f.Mov(m2, g.imm(0))
		for i := range x {
			for _, v := range x[i] {
				d := f.Reg(g.ct)
				f.Sub(d, v, mean)
				f.Selp(d, d, g.imm(0), valid[i])
				f.Fma(m2, d, d, m2)
			}
		}
		g.mergeMoments(st, statReg{cnt: k, a: mean, b: m2})
		f.Place(skip)
		return nil
	}
	ninf := g.imm(math.Inf(-1))
	mt := f.Reg(g.ct)
	f.Mov(mt, ninf)
	for i := range x {
		for _, v := range x[i] {
			xv := f.Reg(g.ct)
			f.Selp(xv, v, ninf, valid[i])
			g.nanMax(mt, mt, xv)
		}
	}
	s := f.Reg(g.ct)
	f.Mov(s, g.imm(0))
	es = make([][]ptx.Reg, len(x))
	for i := range x {
		es[i] = f.Regs(g.ct, len(x[i]))
	}
	// A tile of -Inf (or of no valid item) has exps 0; set them on that branch only, so
	// that they are not live beside the values.
	zero, done := f.NewLabel(), f.NewLabel()
	f.At(f.Setp(ptx.Eq, mt, ninf)).Bra(zero)
	for i := range x {
		for v, xv := range x[i] {
			d := f.Reg(g.ct)
			f.Sub(d, xv, mt)
			e := g.expShifted(d)
			f.Selp(es[i][v], e, g.imm(0), valid[i])
			f.Add(s, s, es[i][v])
		}
	}
	f.Bra(done)
	f.Place(zero)
	for i := range es {
		for _, e := range es[i] {
			f.Mov(e, g.imm(0))
		}
	}
	f.Place(done)
	g.mergeSoftmax(st, statReg{a: mt, b: s})
	return es
}

// Constants of expShifted: log2(e) split into a float32 and the rest.
const (
	statLog2E   = float32(1.44269502)
	statLog2ELo = float32(1.925963033500011e-08) // log2(e) - statLog2E
	statExpMin  = float32(-87.33654)             // -126 ln 2: below, exp < 2^-126 is taken as 0
)

// expShifted returns exp(d) for an argument d <= 0, -Inf or NaN (an element minus a
// maximum at least as large): in float32, 2^j * 2^r with j = rint(d*log2(e)) and
// r = d*log2(e) - j (|r| <= 1/2, computed with two fmas: one rounding and log2(e)'s
// low part), 2^r by ex2.approx and 2^j put in the exponent; results below 2^-126
// (d < -87.33654, -Inf included) are 0, a NaN stays NaN (CUDA's expf does the same
// reduction). A positive d gives an unspecified value (callers discard it). In float64,
// or with RowStat.ExactExp, ptx.Math's exp.
func (g *statGen) expShifted(d ptx.Reg) ptx.Reg {
	f := g.f
	if g.ct != ptx.F32 || g.r.ExactExp {
		return f.Math(ptx.Exp, d)
	}
	const magic = float32(0x1.8p23) // 1.5*2^23: rint lands in the low mantissa bits
	t := f.Reg(ptx.F32)
	f.Fma(t, d, ptx.ImmF32(statLog2E), ptx.ImmF32(magic))
	nj := f.Reg(ptx.F32)
	f.Sub(nj, ptx.ImmF32(magic), t) // -j, exact
	r := f.Reg(ptx.F32)
	f.Fma(r, d, ptx.ImmF32(statLog2E), nj)
	f.Fma(r, d, ptx.ImmF32(statLog2ELo), r)
	p := f.Reg(ptx.F32)
	f.Op("ex2.approx.ftz.f32", p, r)
	// t's bits are 0x4b400000 + j: (bits + 127) << 23 is 2^j's bits for j in [-126, 127].
	tb := f.Reg(ptx.U32)
	f.Op("mov.b32", tb, t)
	f.Add(tb, tb, ptx.Int(127))
	f.Shl(tb, tb, ptx.Int(23))
	sc := f.Reg(ptx.F32)
	f.Op("mov.b32", sc, tb)
	f.Mul(p, p, sc)
	f.Selp(p, g.imm(0), p, f.Setp(ptx.Lt, d, ptx.ImmF32(statExpMin)))
	return p
}

// mergeMoments folds o into st (Chan et al.); st.cnt and o.cnt are u32 counts.
func (g *statGen) mergeMoments(st, o statReg) {
	f := g.f
	skip := f.NewLabel()
	f.At(f.Setp(ptx.Eq, o.cnt, ptx.Int(0))).Bra(skip)
	n := f.Reg(ptx.U32)
	f.Add(n, st.cnt, o.cnt)
	nf, nbf, naf := f.Reg(g.ct), f.Reg(g.ct), f.Reg(g.ct)
	f.Cvt(nf, n)
	f.Cvt(nbf, o.cnt)
	f.Cvt(naf, st.cnt)
	fb := f.Reg(g.ct)
	f.Div(fb, nbf, nf)
	d := f.Reg(g.ct)
	f.Sub(d, o.a, st.a)
	f.Fma(st.a, d, fb, st.a)
	t := f.Reg(g.ct)
	f.Mul(t, d, d)
	f.Mul(t, t, naf)
	f.Mul(t, t, fb)
	f.Add(st.b, st.b, o.b)
	f.Add(st.b, st.b, t)
	f.Mov(st.cnt, n)
	f.Place(skip)
}

// mergeSoftmax folds o into st: m = max, s = sa*exp(ma - m) + sb*exp(mb - m).
func (g *statGen) mergeSoftmax(st, o statReg) {
	f := g.f
	ninf := g.imm(math.Inf(-1))
	m := f.Reg(g.ct)
	g.nanMax(m, st.a, o.a)
	term := func(a, s ptx.Reg) ptx.Reg {
		d := f.Reg(g.ct)
		f.Sub(d, a, m)
		e := g.expShifted(d)
		f.Mul(e, e, s)
		f.Selp(e, g.imm(0), e, f.Setp(ptx.Eq, a, ninf))
		return e
	}
	t1 := term(st.a, st.b)
	t2 := term(o.a, o.b)
	f.Add(st.b, t1, t2)
	f.Mov(st.a, m)
}

func (g *statGen) merge(st, o statReg) {
	if g.r.Op.moments() {
		g.mergeMoments(st, o)
	} else {
		g.mergeSoftmax(st, o)
	}
}

// foldRange folds the thread's elements of [lo, hi) tile by tile. For a StatFull
// transform whose rows fit one tile the values stay in registers (returned): for
// StatSoftmax, exp(x - tmax) (tmax the thread's maximum, returned), so that the write
// multiplies by exp(tmax - max)/sum instead of taking a second exp per element.
func (g *statGen) foldRange() (st statReg, keep [][]ptx.Reg, keepValid []ptx.Reg, tmax ptx.Reg) {
	f, r := g.f, g.r
	st = g.initState()
	if r.Pass == StatFull && r.Op.Transform() && r.OneTile {
		x, valid := g.loadTile(g.lo)
		es := g.foldTile(st, x, valid)
		if r.Op == StatSoftmax {
			tmax = f.Reg(g.ct)
			f.Mov(tmax, st.a)
			return st, es, valid, tmax
		}
		return st, x, valid, ptx.Reg{}
	}
	if r.Op.moments() {
		g.shiftReg() // before the loop, which it must dominate
	}
	t0 := g.u64()
	f.Mov(t0, g.lo)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, t0, g.hi)).Bra(done)
	x, valid := g.loadTile(t0)
	g.foldTile(st, x, valid)
	f.Add(t0, t0, ptx.Int(r.Tile()))
	f.Bra(loop)
	f.Place(done)
	return st, nil, nil, ptx.Reg{}
}

// shflState returns st's components from the lane mode/b selects.
func (g *statGen) shflState(st statReg, mode string, b ptx.Operand) statReg {
	f := g.f
	o := statReg{cnt: f.Reg(ptx.U32), a: f.Reg(g.ct), b: f.Reg(g.ct)}
	full := ptx.Uint(0xffffffff)
	if g.r.Op.moments() {
		f.Shfl(mode, o.cnt.As(ptx.B32), st.cnt.As(ptx.B32), b, ptx.Int(31), full)
	} else {
		f.Mov(o.cnt, ptx.Int(0)) // unused by the softmax states
	}
	for _, p := range [][2]ptx.Reg{{o.a, st.a}, {o.b, st.b}} {
		if g.ct == ptx.F32 {
			s, d := f.Reg(ptx.B32), f.Reg(ptx.B32)
			f.Op("mov.b32", s, p[1])
			f.Shfl(mode, d, s, b, ptx.Int(31), full)
			f.Op("mov.b32", p[0], d)
			continue
		}
		lo, hi := f.Reg(ptx.B32), f.Reg(ptx.B32)
		f.Op("mov.b64", ptx.Vec{lo, hi}, p[1])
		f.Shfl(mode, lo, lo, b, ptx.Int(31), full)
		f.Shfl(mode, hi, hi, b, ptx.Int(31), full)
		f.Op("mov.b64", p[0], ptx.Vec{lo, hi})
	}
	return o
}

// warpReduce merges the warp's states into lane 0 (shuffles down).
func (g *statGen) warpReduce(st statReg) {
	for off := 16; off >= 1; off /= 2 {
		o := g.shflState(st, "down", ptx.Int(off))
		g.merge(st, o)
	}
}

// reduceRow merges the states of the row group's threads; afterwards thread 0 holds the
// row's state, and for a transform every thread does.
func (g *statGen) reduceRow(st *statReg) {
	f, r := g.f, g.r
	g.warpReduce(*st)
	if r.Threads > 32 {
		w := r.Threads / 32
		cntName, aName, bName := "s_cnt", "s_a", "s_b"
		f.Shared(cntName, ptx.U32, 4, w)
		f.Shared(aName, g.ct, 8, w)
		f.Shared(bName, g.ct, 8, w)
		lane := g.f.Reg(ptx.U32)
		f.And(lane, g.t, ptx.Int(31))
		warp := f.Reg(ptx.U32)
		f.Shr(warp, g.t, ptx.Int(5))
		addr := func(name string, idx ptx.Reg, size int) ptx.Reg {
			base := f.Reg(ptx.U32)
			f.Mov(base, ptx.Sym(name))
			a := f.Reg(ptx.U32)
			f.Fma(a, idx, ptx.Int(size), base)
			return a
		}
		sz := 4
		if g.ct == ptx.F64 {
			sz = 8
		}
		skip := f.NewLabel()
		f.At(f.Setp(ptx.Ne, lane, ptx.Int(0))).Bra(skip)
		f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(addr(cntName, warp, 4), 0), st.cnt)
		f.St(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(aName, warp, sz), 0), st.a)
		f.St(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(bName, warp, sz), 0), st.b)
		f.Place(skip)
		f.BarSync(0)
		after := f.NewLabel()
		f.At(f.Setp(ptx.Ne, warp, ptx.Int(0))).Bra(after)
		o := g.initState()
		load := f.NewLabel()
		f.At(f.Setp(ptx.Ge, lane, ptx.Int(w))).Bra(load)
		f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(addr(cntName, lane, 4), 0), o.cnt)
		f.Ld(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(aName, lane, sz), 0), o.a)
		f.Ld(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(bName, lane, sz), 0), o.b)
		f.Place(load)
		g.warpReduce(o)
		f.Mov(st.cnt, o.cnt)
		f.Mov(st.a, o.a)
		f.Mov(st.b, o.b)
		if r.Op.Transform() {
			zero := f.Reg(ptx.U32)
			f.Mov(zero, ptx.Int(0))
			skip0 := f.NewLabel()
			f.At(f.Setp(ptx.Ne, lane, ptx.Int(0))).Bra(skip0)
			f.St(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(addr(cntName, zero, 4), 0), st.cnt)
			f.St(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(aName, zero, sz), 0), st.a)
			f.St(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(bName, zero, sz), 0), st.b)
			f.Place(skip0)
		}
		f.Place(after)
		if r.Op.Transform() {
			f.BarSync(0)
			zero := f.Reg(ptx.U32)
			f.Mov(zero, ptx.Int(0))
			f.Ld(ptx.Shared, ptx.CacheDefault, ptx.U32, ptx.Mem(addr(cntName, zero, 4), 0), st.cnt)
			f.Ld(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(aName, zero, sz), 0), st.a)
			f.Ld(ptx.Shared, ptx.CacheDefault, g.ct, ptx.Mem(addr(bName, zero, sz), 0), st.b)
		}
		return
	}
	if r.Op.Transform() {
		o := g.shflState(*st, "idx", ptx.Int(0))
		f.Mov(st.cnt, o.cnt)
		f.Mov(st.a, o.a)
		f.Mov(st.b, o.b)
	}
}

// recordAddr returns the address of record idx (u64).
func (g *statGen) recordAddr(idx Reg64) ptx.Addr {
	a := g.u64()
	g.f.Fma(a, idx, ptx.Int(StatRecord), g.part)
	return ptx.Mem(a, 0)
}

// putRecord writes the unit's state as three float64.
func (g *statGen) putRecord(st statReg) {
	f := g.f
	c := f.Reg(ptx.F64)
	f.Cvt(c, st.cnt)
	a, b := st.a, st.b
	if g.ct == ptx.F32 {
		a, b = f.Reg(ptx.F64), f.Reg(ptx.F64)
		f.Cvt(a, st.a)
		f.Cvt(b, st.b)
	}
	addr := g.recordAddr(g.unit)
	f.St(ptx.Global, ptx.CacheDefault, ptx.F64, addr, c)
	f.St(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(addr.Base, 8), a)
	f.St(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(addr.Base, 16), b)
}

// mergeRecords merges the row's chunk states: thread t takes records t, t+Threads, ...
// in order.
func (g *statGen) mergeRecords() statReg {
	f, r := g.f, g.r
	st := g.initState()
	p := g.u64()
	f.Cvt(p, g.t)
	first := g.u64()
	f.Mul(first, g.row, g.parts)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, p, g.parts)).Bra(done)
	idx := g.u64()
	f.Add(idx, first, p)
	addr := g.recordAddr(idx)
	c, a, b := f.Reg(ptx.F64), f.Reg(ptx.F64), f.Reg(ptx.F64)
	f.Ld(ptx.Global, ptx.CacheDefault, ptx.F64, addr, c)
	f.Ld(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(addr.Base, 8), a)
	f.Ld(ptx.Global, ptx.CacheDefault, ptx.F64, ptx.Mem(addr.Base, 16), b)
	o := statReg{cnt: f.Reg(ptx.U32), a: a, b: b}
	f.Cvt(o.cnt, c)
	if g.ct == ptx.F32 {
		o.a, o.b = f.Reg(ptx.F32), f.Reg(ptx.F32)
		f.Cvt(o.a, a)
		f.Cvt(o.b, b)
	}
	g.merge(st, o)
	f.Add(p, p, ptx.Int(r.Threads))
	f.Bra(loop)
	f.Place(done)
	return st
}

// finishValue returns a reduction's result (compute type) from the row's state.
func (g *statGen) finishValue(st statReg) ptx.Reg {
	f, r := g.f, g.r
	v := f.Reg(g.ct)
	switch r.Op {
	case StatVar, StatStd:
		den := f.Reg(g.ct)
		f.Cvt(den, st.cnt)
		f.Sub(den, den, g.arg)
		f.Max(den, den, g.imm(0)) // (NumPy's divisor, max(n - ddof, 0): M2/0 is +Inf or NaN)
		f.Div(v, st.b, den)
		if r.Op == StatStd {
			f.Sqrt(v, v)
		}
	default: // StatLogSumExp
		l := f.Math(ptx.Log, st.b)
		f.Add(v, st.a, l)
		abs := f.Reg(g.ct)
		f.Abs(abs, st.a)
		f.Selp(v, st.a, v, f.Setp(ptx.Eq, abs, g.imm(math.Inf(1))))
	}
	return v
}

// writeRange writes a transform's outputs: from the kept registers x, or by reading the
// range [lo, hi) again. For a OneTile softmax x holds exp(x - tmax) (foldRange).
func (g *statGen) writeRange(st statReg, x [][]ptx.Reg, valid []ptx.Reg, tmax ptx.Reg) {
	f, r := g.f, g.r
	kept := r.Op == StatSoftmax && x != nil
	// The per-row constants.
	var c0, c1 ptx.Reg
	switch r.Op {
	case StatSoftmax:
		c0 = f.Reg(g.ct)
		f.Div(c0, g.imm(1), st.b)
		if kept {
			// exp(x - max)/sum = exp(x - tmax) * (exp(tmax - max) * (1/sum)): NaN for a
			// row of NaN or +Inf or all -Inf, as exp(x - max) * (1/sum) is.
			d := f.Reg(g.ct)
			f.Sub(d, tmax, st.a)
			f.Mul(c0, g.expShifted(d), c0)
		}
	case StatLogSoftmax:
		c0 = f.Math(ptx.Log, st.b)
		f.Add(c0, c0, st.a)
	case StatLayerNorm:
		v := f.Reg(g.ct)
		cf := f.Reg(g.ct)
		f.Cvt(cf, st.cnt)
		f.Div(v, st.b, cf)
		f.Add(v, v, g.arg)
		f.Sqrt(v, v)
		c1 = f.Reg(g.ct)
		f.Div(c1, g.imm(1), v)
	}
	// Layer norm subtracts center: the mean of x - K from the kept values (shiftTile
	// shifted them), K + that mean from the values the write's loop loads.
	var center ptx.Reg
	if r.Op == StatLayerNorm {
		center = st.a
		if x == nil {
			center = f.Reg(g.ct)
			f.Add(center, g.shiftReg(), st.a)
		}
	}
	emit := func(t0 Reg64, x [][]ptx.Reg, valid []ptx.Reg) {
		for i := range x {
			skip := f.NewLabel()
			f.AtNot(valid[i]).Bra(skip)
			e := g.u64()
			f.Add(e, t0, g.tV)
			if i > 0 {
				f.Add(e, e, ptx.Int(i*r.Threads*r.Vec))
			}
			var wv, bv []ptx.Reg
			if r.Weight {
				wv = g.loadParam(g.w, e)
			}
			if r.Bias {
				bv = g.loadParam(g.b, e)
			}
			ys := make([]ptx.Reg, len(x[i]))
			for v, xv := range x[i] {
				y := f.Reg(g.ct)
				switch r.Op {
				case StatSoftmax:
					if kept {
						f.Mul(y, xv, c0)
						break
					}
					d := f.Reg(g.ct)
					f.Sub(d, xv, st.a)
					f.Mul(y, g.expShifted(d), c0)
				case StatLogSoftmax:
					f.Sub(y, xv, c0)
				case StatLayerNorm:
					f.Sub(y, xv, center)
					f.Mul(y, y, c1)
					if r.Weight {
						f.Mul(y, y, wv[v])
					}
					if r.Bias {
						f.Add(y, y, bv[v])
					}
				}
				ys[v] = y
			}
			addr := g.u64()
			f.Fma(addr, e, ptx.Int(r.Out.Size()), g.rowOut)
			g.store(ptx.Mem(addr, 0), ys)
			f.Place(skip)
		}
	}
	if x != nil {
		emit(g.lo, x, valid)
		return
	}
	t0 := g.u64()
	f.Mov(t0, g.lo)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, t0, g.hi)).Bra(done)
	xs, vs := g.loadTile(t0)
	emit(t0, xs, vs)
	f.Add(t0, t0, ptx.Int(r.Tile()))
	f.Bra(loop)
	f.Place(done)
}

// loadParam loads Vec elements of a weight or bias (type Out) at element e, in the
// compute type.
func (g *statGen) loadParam(base Reg64, e Reg64) []ptx.Reg {
	f, r := g.f, g.r
	mt := ptx.MemType(r.Out)
	addr := g.u64()
	f.Fma(addr, e, ptx.Int(r.Out.Size()), base)
	raw := f.Regs(regOfMem(mt), r.Vec)
	f.Ld(ptx.Global, ptx.NC, mt, ptx.Mem(addr, 0), raw...)
	out := make([]ptx.Reg, len(raw))
	for i, v := range raw {
		out[i] = g.toComp(v, r.Out)
	}
	return out
}
