package kernel

import (
	"cmp"
	"fmt"
	"math/bits"
	"slices"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/ptx"
)

// The CUDA kernels of MatMul.
//
// Tensor cores (float16, bfloat16: mma.sync.m16n8k16; TF32: mma.sync.m16n8k8; sm_80 and
// later). A block of 4 warps computes a 128x128 tile of C, each warp 64x64 (4 x 8
// mma tiles, 128 float32 accumulators a thread). Tiles of A and B (128 x 32 of 16-bit
// elements, 128 x 16 of float32) go through shared memory in a 4-stage ring filled by
// cp.async (16 bytes a copy, its source size clipped at the matrix's edges so that the
// rest is zero-filled: no predicates and no partial tiles in the main loop), the copy of
// tile k+3 issued while tile k is multiplied (one cp.async group per tile,
// cp.async.wait_group 2 and one barrier per tile). The shared tiles keep the global
// layout (rows along the contiguous dimension), so a transposed operand costs nothing:
// 16-bit fragments come from ldmatrix (.trans where the layout asks for it), TF32 ones
// from 32-bit loads, rounded with cvt.rna.tf32.f32. Rows are padded (8 elements for
// 16-bit, 8 or 4 for float32) so that the fragment loads of a warp hit distinct banks.
// The TF32 loads of a row-major tile take a thread's two k values of a fragment from
// adjacent columns (the k order inside an mma is free, and A and B use the same one),
// so one 64-bit load serves two registers. Blocks walk the tiles in groups of 8 tile
// rows, so that consecutive blocks share tiles of B in L2 (Triton's grouped ordering).
//
// FMA tiles (exact float32 and float64): 256 threads compute a 128x128 (float64:
// 64x64) tile of C, each thread an 8x8 (4x4) register tile made of four quads spaced by
// half the tile, so that its shared-memory reads are 16-byte vectors without bank
// conflicts. Tiles of 8 along K are double buffered in shared memory, stored transposed
// ([k][m], [k][n]) from 16-byte global loads issued before the previous tile's FMAs.
//
// Both write C with bounds checks, alpha*acc, plus beta*C when beta is not 0.

// mmKind is the kind of kernel.
type mmKind uint8

const (
	mmTensor mmKind = iota // mma.sync
	mmFMA                  // register tiles of FMAs
)

// mmTile is a kernel's tiling.
type mmTile struct {
	kind       mmKind
	bm, bn, bk int
	stages     int
	threads    int
	es         int // element size
	// tensor cores: warps along M and N, warp tile 64 x warpN.
	wm, wn int
	warpN  int
	// FMA: each thread's quads are q x q.
	q int
	// tensor cores: the software-pipelined main loop (MatMulTile.Pipelined)
	pipe bool
	// shared-memory row pitches (elements) and stage size (bytes)
	pitchA, pitchB int
	rowsA, rowsB   int
	stageBytes     int
}

// MatMulTile is a tiling of the tensor-core kernel: a block computes a BM x BN tile of
// C with warps of 64x64 (BM/64 x BN/64 warps), through Stages shared-memory stages of
// BK16 (16-bit types; TF32: half as many) elements along K.
//
// Pipelined tilings run the main loop of CUTLASS's sm80 multistage GEMM
// (cutlass/gemm/threadblock/mma_multistage.h): a warp's fragments are double-buffered
// in registers, those of the next k step loaded (ldmatrix) before the mma.sync of the
// current one, and the wait for the next stage and the block's barrier come before the
// last k step of a tile, whose mma.sync then cover the first fragment loads of the next
// stage. The plain main loop loads a k step's fragments right before its mma.sync, and
// every tile's first ones right after the barrier, so that the tensor cores wait for
// them.
//
// WarpN is a warp's tile along N: 64 (0 means 64), or 32 (half the accumulators and
// registers, so that twice as many warps fit an SM, for 50% more fragment loads per
// mma.sync).
type MatMulTile struct {
	BM, BN, BK16, Stages int
	Pipelined            bool
	WarpN                int
}

// mmTensorTiles are the tilings MatMul.Tile selects (1-based); registers with ptxas 13
// for sm_90, shared memory for 16-bit types:
//
//  1. 128x128x32 in 4 stages, 4 warps (210 registers, 74 KiB: 2 blocks an SM), the
//     first kernel's;
//  2. 128x256x32 in 4 stages, 8 warps (210 registers, 106 KiB: 1 block an SM);
//  3. 256x128x32 in 4 stages, 8 warps (190-210 registers, 113 KiB);
//  4. 128x256x32 in 3 stages, 8 warps (80 KiB);
//  5. 128x256x64 in 3 stages, 8 warps (153 KiB): half the barriers and waits per
//     product of 2;
//  6. 128x128x64 in 3 stages, 4 warps (105 KiB: 2 blocks an SM);
//  7. 1 pipelined (238 registers with ptxas 12.4, 74 KiB: 2 blocks an SM);
//  8. 6 pipelined (244 registers, 105 KiB: 2 blocks an SM);
//  9. 2 pipelined (236 registers, 106 KiB);
//  10. 3 pipelined (236 registers, 114 KiB);
//  11. 5 pipelined (242 registers, 153 KiB);
//  12. 128x128x32 in 4 stages, 8 warps of 64x32 (126 registers under .minnctapersm 2,
//     74 KiB: 2 blocks, 16 warps an SM against 8 for the others);
//  13. 128x128x64 in 3 stages, 8 warps of 64x32 (126 registers, 105 KiB: 2 blocks);
//  14. 256x128x32 in 4 stages, 16 warps of 64x32 (114 KiB: 1 block, 16 warps).
//
// In the SASS of tiling 1 (ptxas 12.4, sm_90) a k tile's 64 HMMA of a warp follow the
// barrier only after the ~100 integer instructions and 8 LDGSTS of the next tile's
// copies and then the 16 LDSM; the pipelined loop (7-11) has the LDGSTS interleaved
// with the HMMA and the next stage's 8 LDSM right after the barrier (ptxas hoists the
// last k step's HMMA above it), at 26-34 more registers (TF32: 254-255, no spills).
//
// Measured on the H200 (2026-12-02, one run, 4096^3, the median of each against
// cuBLAS's 196 µs bfloat16 and 202 µs float16 in the same run): tiling 1 457 µs
// (bfloat16) and 452 µs (float16), 2 523/527, 3 554/556, 4 529/527, 5 465/462, 6
// 445/465; TF32 1.03 ms for 1 and 1.01 for 6. The 8-warp tiles (2-4), which read a
// quarter less from L2 per flop, are slower: L2 bandwidth is not this kernel's limit.
// Tiling 1 is the default (within 3% of the best everywhere, the fewest registers).
// A thread's copies share one address register and one bounds value per operand
// (mmOperand), which keeps the K step of 64 (16 copies a thread per tile with 4 warps)
// inside the registers.
// Tilings 12-14 keep the plain main loop: pipelined, their 64x32 warp tiles spill
// 28-48 bytes under 128 registers. Tilings 7-14 are not measured yet.
var mmTensorTiles = []MatMulTile{
	{128, 128, 32, 4, false, 0},
	{128, 256, 32, 4, false, 0},
	{256, 128, 32, 4, false, 0},
	{128, 256, 32, 3, false, 0},
	{128, 256, 64, 3, false, 0},
	{128, 128, 64, 3, false, 0},
	{128, 128, 32, 4, true, 0},
	{128, 128, 64, 3, true, 0},
	{128, 256, 32, 4, true, 0},
	{256, 128, 32, 4, true, 0},
	{128, 256, 64, 3, true, 0},
	{128, 128, 32, 4, false, 32},
	{128, 128, 64, 3, false, 32},
	{256, 128, 32, 4, false, 32},
}

// mmDefaultTile is the tiling of Tile 0.
const mmDefaultTile = DefaultMatMulTile

// DefaultMatMulTile is the tensor-core kernel's default tiling (MatMul.Tile).
const DefaultMatMulTile = 1

// MatMulTiles returns the tensor-core kernel's tilings, Tile 1 first (MatMul.Tile n is
// MatMulTiles()[n-1]).
func MatMulTiles() []MatMulTile { return slices.Clone(mmTensorTiles) }

// tensorTile returns the tiling number in force (mmDefaultTile for 0; 0 for the FMA
// kernels).
func (p *MatMul) tensorTile() int {
	switch {
	case p.Type == dtype.Float64 || (p.Type == dtype.Float32 && !p.TF32):
		return 0
	case p.Tile == 0:
		return mmDefaultTile
	}
	return p.Tile
}

// tile returns the spec's tiling.
func (p *MatMul) tile() mmTile {
	t := mmTile{es: p.Type.Size()}
	switch {
	case p.Type == dtype.Float16 || p.Type == dtype.BFloat16 || p.TF32:
		tt := mmTensorTiles[p.tensorTile()-1]
		t.warpN = cmp.Or(tt.WarpN, 64)
		t.kind, t.bm, t.bn, t.bk, t.stages, t.wm, t.wn = mmTensor, tt.BM, tt.BN, tt.BK16, tt.Stages, tt.BM/64, tt.BN/t.warpN
		t.pipe = tt.Pipelined
		if p.TF32 {
			t.bk /= 2
		}
	case p.Type == dtype.Float64:
		t.kind, t.bm, t.bn, t.bk, t.stages, t.q = mmFMA, 64, 64, 8, 2, 2
	default:
		t.kind, t.bm, t.bn, t.bk, t.stages, t.q = mmFMA, 128, 128, 8, 2, 4
	}
	if t.kind == mmTensor {
		t.threads = 32 * t.wm * t.wn
		// A: [m][k] rows padded along k, or [k][m] rows padded along m; B likewise.
		padK, padMN := 8, 8
		if p.TF32 {
			padK, padMN = 8, 4
		}
		if p.TransA {
			t.rowsA, t.pitchA = t.bk, t.bm+padMN
		} else {
			t.rowsA, t.pitchA = t.bm, t.bk+padK
		}
		if p.TransB {
			t.rowsB, t.pitchB = t.bn, t.bk+padK
		} else {
			t.rowsB, t.pitchB = t.bk, t.bn+padMN
		}
	} else {
		t.threads = 256
		pad := 16 / t.es
		t.rowsA, t.pitchA = t.bk, t.bm+pad
		t.rowsB, t.pitchB = t.bk, t.bn+pad
	}
	t.stageBytes = (t.rowsA*t.pitchA + t.rowsB*t.pitchB) * t.es
	t.stageBytes = (t.stageBytes + 127) &^ 127
	return t
}

// smem returns the dynamic shared memory of a block in bytes.
func (t mmTile) smem(p *MatMul) int { return t.stages * t.stageBytes }

// bOff returns the byte offset of B's tile in a stage.
func (t mmTile) bOff() int { return t.rowsA * t.pitchA * t.es }

// PTX returns the kernel's PTX for a device of compute capability major.minor. The
// tensor-core kernels need compute capability 8.0.
func (p *MatMul) PTX(major, minor int) (src, entry string, err error) {
	if err := p.Validate(); err != nil {
		return "", "", err
	}
	t := p.tile()
	if t.kind == mmTensor && major < 8 {
		return "", "", fmt.Errorf("kernel: matmul of %v with tensor cores needs compute capability 8.0, not %d.%d: %w",
			p.Type, major, minor, backend.ErrNotSupported)
	}
	m := ptx.NewModule(major, minor)
	g := &mmGen{p: p, t: t, m: m}
	entry = "matmul"
	g.begin(entry)
	if t.kind == mmTensor {
		g.tensor()
	} else {
		g.fma()
	}
	return m.String(), entry, nil
}

// mmGen writes one kernel.
type mmGen struct {
	p *MatMul
	t mmTile
	m *ptx.Module
	f *ptx.Func

	a, b, c          ptx.Reg // u64: matrix 0 of this block's batch
	mDim, nDim, kDim ptx.Reg // u32
	lda, ldb, ldc    ptx.Reg // u32
	alpha, beta      ptx.Reg // f32 or f64
	betaNZ           ptx.Reg // pred: beta != 0
	tid, lane        ptx.Reg // u32
	row0, col0       ptx.Reg // u32: the block's first row and column of C
	smem             ptx.Reg // u32: shared address of the stages
	ktiles           ptx.Reg // u32: tiles along K
	acc              []ptx.Reg
	accT             ptx.Type // the accumulators' type: f32, or f64 for float64
	sharedName       string
	half             bool // 16-bit elements
	bf16             bool
	log2es           uint
	// tensor cores: the lane's byte offsets of its fragment loads in a stage, and the
	// warp's position in the block's 2x2 warps
	laneA, laneB, warpM, wN ptx.Reg
}

func (g *mmGen) u32() ptx.Reg  { return g.f.Reg(ptx.U32) }
func (g *mmGen) u64() ptx.Reg  { return g.f.Reg(ptx.U64) }
func (g *mmGen) pred() ptx.Reg { return g.f.Reg(ptx.Pred) }

// imm returns a u32 register holding v.
func (g *mmGen) imm(v int) ptx.Reg {
	r := g.u32()
	g.f.Op("mov.u32", r, ptx.Int(v))
	return r
}

// begin declares the kernel, reads the parameters, maps the block onto its tile and
// batch, and offsets a, b and c to the block's matrices.
func (g *mmGen) begin(entry string) {
	p, t := g.p, g.t
	g.half = p.Type == dtype.Float16 || p.Type == dtype.BFloat16
	g.bf16 = p.Type == dtype.BFloat16
	g.log2es = uint(bits.TrailingZeros(uint(t.es)))
	g.accT = ptx.F32
	if p.Type == dtype.Float64 {
		g.accT = ptx.F64
	}
	sc := ptx.F32
	if p.Type == dtype.Float64 {
		sc = ptx.F64
	}
	f := g.m.Kernel(entry,
		ptx.P("a", ptx.U64), ptx.P("b", ptx.U64), ptx.P("c", ptx.U64),
		ptx.P("m", ptx.U32), ptx.P("n", ptx.U32), ptx.P("k", ptx.U32),
		ptx.P("lda", ptx.U32), ptx.P("ldb", ptx.U32), ptx.P("ldc", ptx.U32),
		ptx.P("sa", ptx.U64), ptx.P("sb", ptx.U64), ptx.P("sc", ptx.U64),
		ptx.P("batch", ptx.U32), ptx.P("alpha", sc), ptx.P("beta", sc))
	g.f = f
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", t.threads))
	if t.kind == mmTensor && t.warpN == 32 && t.threads < 512 {
		// At most 128 registers a thread, so that 16 warps share an SM (maxntid 512
		// alone asks as much).
		f.Attr(fmt.Sprintf(".minnctapersm %d", 512/t.threads))
	}
	g.sharedName = "mm_smem"
	g.m.ExternShared(g.sharedName, 128)
	ld := func(i int) ptx.Reg { return f.LdParam(i) }
	g.a, g.b, g.c = ld(0), ld(1), ld(2)
	g.mDim, g.nDim, g.kDim = ld(3), ld(4), ld(5)
	g.lda, g.ldb, g.ldc = ld(6), ld(7), ld(8)
	sa, sb, scs := ld(9), ld(10), ld(11)
	g.alpha, g.beta = ld(13), ld(14)
	g.tid = f.Special(ptx.TidX)
	g.lane = g.u32()
	f.Op("and.b32", g.lane, g.tid, ptx.Int(31))
	g.smem = g.u32()
	f.Op("mov.u32", g.smem, ptx.Sym(g.sharedName))

	// Block -> (batch, tile row, tile column), tile rows in groups of 8.
	bid := f.Special(ptx.CtaidX)
	tilesM, tilesN := g.u32(), g.u32()
	f.Op("add.u32", tilesM, g.mDim, ptx.Int(t.bm-1))
	f.Op("div.u32", tilesM, tilesM, ptx.Int(t.bm))
	f.Op("add.u32", tilesN, g.nDim, ptx.Int(t.bn-1))
	f.Op("div.u32", tilesN, tilesN, ptx.Int(t.bn))
	per := g.u32()
	f.Op("mul.lo.u32", per, tilesM, tilesN)
	bz, r := g.u32(), g.u32()
	f.Op("div.u32", bz, bid, per)
	f.Op("rem.u32", r, bid, per)
	const group = 8
	width := g.u32()
	f.Op("mul.lo.u32", width, tilesN, ptx.Int(group))
	grp, first, gsz, rr := g.u32(), g.u32(), g.u32(), g.u32()
	f.Op("div.u32", grp, r, width)
	f.Op("mul.lo.u32", first, grp, ptx.Int(group))
	f.Op("sub.u32", gsz, tilesM, first)
	f.Op("min.u32", gsz, gsz, ptx.Int(group))
	f.Op("rem.u32", rr, r, width)
	tm, tn := g.u32(), g.u32()
	f.Op("rem.u32", tm, rr, gsz)
	f.Op("add.u32", tm, tm, first)
	f.Op("div.u32", tn, rr, gsz)
	g.row0, g.col0 = g.u32(), g.u32()
	f.Op("mul.lo.u32", g.row0, tm, ptx.Int(t.bm))
	f.Op("mul.lo.u32", g.col0, tn, ptx.Int(t.bn))
	// a += bz*sa*es, ...
	bz64 := g.u64()
	f.Op("cvt.u64.u32", bz64, bz)
	for _, x := range []struct{ base, stride ptx.Reg }{{g.a, sa}, {g.b, sb}, {g.c, scs}} {
		off := g.u64()
		f.Op("mul.lo.u64", off, bz64, x.stride)
		f.Op("shl.b64", off, off, ptx.Int(int(g.log2es)))
		f.Op("add.u64", x.base, x.base, off)
	}
	g.ktiles = g.u32()
	f.Op("add.u32", g.ktiles, g.kDim, ptx.Int(t.bk-1))
	f.Op("div.u32", g.ktiles, g.ktiles, ptx.Int(t.bk))
	g.betaNZ = g.pred()
	if g.accT == ptx.F64 {
		f.Op("setp.neu.f64", g.betaNZ, g.beta, ptx.ImmF64(0))
	} else {
		f.Op("setp.neu.f32", g.betaNZ, g.beta, ptx.ImmF32(0))
	}
}

// ---- loading tiles ----

// mmOperand describes how one operand's tiles are loaded. A thread copies n 16-byte
// chunks of each tile: chunk i is the stored tile's row row0 + i*rowsPer at column
// colc (the same column for all of a thread's chunks, as the threads of a block cover
// rowsPer whole rows per round), so one global address, one shared offset and one
// bounds value serve them all: chunk i's source is src + i*rowStep, its destination
// dst0 + i*dstStep (an immediate offset), and whether it lies inside the matrix is a
// comparison with a constant.
type mmOperand struct {
	kContig bool    // rows along k (A not transposed, B transposed)
	n       int     // chunks a thread copies per tile
	rowsPer int     // stored rows from one of a thread's chunks to the next
	src     ptx.Reg // u64: the global address of chunk 0 of the next tile to load
	rowStep ptx.Reg // u64: bytes from chunk i's source to chunk i+1's
	dst0    ptx.Reg // u32: chunk 0's byte offset in a stage
	dstStep int     // bytes from chunk i's destination to chunk i+1's
	kc      ptx.Reg // k-contiguous: the chunks' first k within the tile (u32)
	rem     ptx.Reg // k-contiguous: rows of the matrix from chunk 0's on (s32; chunk i exists iff i*rowsPer < rem)
	cnt     ptx.Reg // strided: bytes of each chunk inside the matrix (u32, 0..16)
	kr      ptx.Reg // strided: chunk 0's k row within the tile (u32)
	step    ptx.Reg // u64: bytes from one k tile to the next
	tileOff int     // the operand's byte offset in a stage
}

// operand sets up the chunks a thread loads for A (isA) or B: the tile is rows x cols
// of the stored layout ([m][k] or [k][m] for A), pitch elements a row in shared memory.
func (g *mmGen) operand(isA bool) *mmOperand {
	f, t := g.f, g.t
	base, ld, mnDim, mn0 := g.a, g.lda, g.mDim, g.row0
	trans, rows, pitch, mnTile := g.p.TransA, t.rowsA, t.pitchA, t.bm
	op := &mmOperand{}
	if !isA {
		base, ld, mnDim, mn0 = g.b, g.ldb, g.nDim, g.col0
		trans, rows, pitch, mnTile = !g.p.TransB, t.rowsB, t.pitchB, t.bn
		op.tileOff = t.bOff()
	}
	// For A, "trans" means stored [k][m]; for B, stored [k][n] (not TransB).
	op.kContig = !trans
	V := 16 / t.es
	cols := t.bk
	if trans {
		cols = mnTile
	}
	perRow := cols / V
	if t.threads%perRow != 0 || rows*perRow%t.threads != 0 {
		panic(fmt.Sprintf("kernel: matmul tiling %+v: %d threads do not cover rows of %d chunks", t, t.threads, perRow))
	}
	op.n = rows * perRow / t.threads
	op.rowsPer = t.threads / perRow
	op.dstStep = op.rowsPer * pitch * t.es
	op.step = g.u64()
	if op.kContig {
		f.Op("mov.u64", op.step, ptx.Int(t.bk*t.es))
	} else {
		f.Op("mul.wide.u32", op.step, ld, ptx.Int(t.bk*t.es))
	}
	op.rowStep = g.u64()
	f.Op("mul.wide.u32", op.rowStep, ld, ptx.Int(op.rowsPer*t.es))
	row, colc := g.u32(), g.u32()
	f.Op("div.u32", row, g.tid, ptx.Int(perRow))
	f.Op("rem.u32", colc, g.tid, ptx.Int(perRow))
	f.Op("mul.lo.u32", colc, colc, ptx.Int(V))
	// shared destination of chunk 0: (row*pitch + colc)*es + tileOff
	op.dst0 = g.u32()
	f.Op("mad.lo.u32", op.dst0, row, ptx.Int(pitch), colc)
	f.Op("shl.b32", op.dst0, op.dst0, ptx.Int(int(g.log2es)))
	f.Op("add.u32", op.dst0, op.dst0, ptx.Int(op.tileOff))
	// global source of chunk 0 of tile 0
	op.src = g.u64()
	mn := g.u32()
	if op.kContig {
		// row indexes m (n), colc indexes k
		f.Op("add.u32", mn, mn0, row)
		f.Op("mul.wide.u32", op.src, mn, ld)
		k64 := g.u64()
		f.Op("cvt.u64.u32", k64, colc)
		f.Op("add.u64", op.src, op.src, k64)
		op.rem = g.f.Reg(ptx.S32)
		f.Op("sub.s32", op.rem, mnDim, mn)
		op.kc = colc
	} else {
		// row indexes k, colc indexes m (n)
		f.Op("add.u32", mn, mn0, colc)
		f.Op("mul.wide.u32", op.src, row, ld)
		m64 := g.u64()
		f.Op("cvt.u64.u32", m64, mn)
		f.Op("add.u64", op.src, op.src, m64)
		// bytes of the chunk inside the matrix: clamp(mnDim - mn, 0, V) * es
		op.cnt = g.u32()
		inside := g.pred()
		f.Op("setp.lt.u32", inside, mn, mnDim)
		f.Op("sub.u32", op.cnt, mnDim, mn)
		f.Op("min.u32", op.cnt, op.cnt, ptx.Int(V))
		f.Op("selp.u32", op.cnt, op.cnt, ptx.Int(0), inside)
		f.Op("shl.b32", op.cnt, op.cnt, ptx.Int(int(g.log2es)))
		op.kr = row
	}
	f.Op("shl.b64", op.src, op.src, ptx.Int(int(g.log2es)))
	f.Op("add.u64", op.src, op.src, base)
	return op
}

// cpAsync copies 16 bytes from src (global) to dst+off (shared), the first nbytes of
// them (the rest zero-filled).
func (g *mmGen) cpAsync(dst ptx.Reg, off int, src ptx.Reg, nbytes ptx.Reg) {
	g.f.Op("cp.async.cg.shared.global", ptx.Mem(dst, int64(off)), ptx.Mem(src, 0), ptx.Int(16), nbytes)
}

// loadTile issues the copies of the next tile of op (k0 its first k) into the stage at
// byte offset stage, and advances the source to the tile after.
func (g *mmGen) loadTile(op *mmOperand, stage, k0 ptx.Reg) {
	f, t := g.f, g.t
	V := 16 / t.es
	dst := g.u32()
	f.Op("add.u32", dst, g.smem, stage)
	f.Op("add.u32", dst, dst, op.dst0)
	// kContig: the bytes inside the matrix along k, the same for every chunk.
	var kb ptx.Reg
	if op.kContig {
		kk := g.u32()
		f.Op("add.u32", kk, k0, op.kc)
		in := g.pred()
		f.Op("setp.lt.u32", in, kk, g.kDim)
		kb = g.u32()
		f.Op("sub.u32", kb, g.kDim, kk)
		f.Op("min.u32", kb, kb, ptx.Int(V))
		f.Op("selp.u32", kb, kb, ptx.Int(0), in)
		f.Op("shl.b32", kb, kb, ptx.Int(int(g.log2es)))
	}
	src := g.u64()
	f.Op("mov.u64", src, op.src)
	for i := 0; i < op.n; i++ {
		n := g.u32()
		in := g.pred()
		if op.kContig {
			f.Op("setp.gt.s32", in, op.rem, ptx.Int(i*op.rowsPer))
			f.Op("selp.u32", n, kb, ptx.Int(0), in)
		} else {
			kk := g.u32()
			f.Op("add.u32", kk, k0, op.kr)
			if i > 0 {
				f.Op("add.u32", kk, kk, ptx.Int(i*op.rowsPer))
			}
			f.Op("setp.lt.u32", in, kk, g.kDim)
			f.Op("selp.u32", n, op.cnt, ptx.Int(0), in)
		}
		g.cpAsync(dst, i*op.dstStep, src, n)
		if i+1 < op.n {
			f.Op("add.u64", src, src, op.rowStep)
		}
	}
	f.Op("add.u64", op.src, op.src, op.step)
}

func (g *mmGen) commit() {
	g.f.Op("cp.async.commit_group")
}

func (g *mmGen) wait(n int) {
	g.f.Op("cp.async.wait_group", ptx.Int(n))
}

// ---- the tensor-core kernel ----

func (g *mmGen) tensor() {
	f, t := g.f, g.t
	opA, opB := g.operand(true), g.operand(false)
	warp := g.u32()
	f.Op("shr.u32", warp, g.tid, ptx.Int(5))
	g.warpM, g.wN = g.u32(), g.u32()
	f.Op("div.u32", g.warpM, warp, ptx.Int(t.wn))
	f.Op("rem.u32", g.wN, warp, ptx.Int(t.wn))
	mt, nt := 4, t.warpN/8 // a warp's 64 x warpN: 4 x nt tiles of 16x8
	g.acc = f.Regs(ptx.F32, mt*nt*4)
	for _, r := range g.acc {
		f.Op("mov.f32", r, ptx.ImmF32(0))
	}
	g.fragOffsets()

	// Stages: the one read (rd) and the one written (wr), byte offsets.
	rd, wr, k0 := g.u32(), g.u32(), g.u32()
	f.Op("mov.u32", rd, ptx.Int(0))
	f.Op("mov.u32", wr, ptx.Int(0))
	f.Op("mov.u32", k0, ptx.Int(0))
	ring := t.stages * t.stageBytes
	adv := func(r ptx.Reg) {
		f.Op("add.u32", r, r, ptx.Int(t.stageBytes))
		wrap := g.pred()
		f.Op("setp.ge.u32", wrap, r, ptx.Int(ring))
		f.At(wrap).Op("mov.u32", r, ptx.Int(0))
	}
	// Prologue: tiles 0 .. stages-2, a group each (empty past the last tile, so that
	// wait_group counts the same way everywhere).
	for s := 0; s < t.stages-1; s++ {
		skip := f.NewLabel()
		more := g.pred()
		f.Op("setp.lt.u32", more, g.imm(s), g.ktiles)
		f.AtNot(more).Bra(skip)
		g.loadTile(opA, wr, k0)
		g.loadTile(opB, wr, k0)
		f.Op("add.u32", k0, k0, ptx.Int(t.bk))
		f.Place(skip)
		g.commit()
		adv(wr)
	}
	issue := func(kt ptx.Reg) {
		// Issue tile kt+stages-1 into the stage read at iteration kt-1.
		skip := f.NewLabel()
		kn := g.u32()
		f.Op("add.u32", kn, kt, ptx.Int(t.stages-1))
		more := g.pred()
		f.Op("setp.lt.u32", more, kn, g.ktiles)
		f.AtNot(more).Bra(skip)
		g.loadTile(opA, wr, k0)
		g.loadTile(opB, wr, k0)
		f.Op("add.u32", k0, k0, ptx.Int(t.bk))
		f.Place(skip)
		g.commit()
		adv(wr)
	}
	kt := g.u32()
	f.Op("mov.u32", kt, ptx.Int(0))
	if t.pipe {
		g.pipelined(kt, rd, adv, issue)
	} else {
		loop := f.NewLabel()
		f.Place(loop)
		g.wait(t.stages - 2)
		f.BarSync(0)
		issue(kt)
		stageAddr := g.u32()
		f.Op("add.u32", stageAddr, g.smem, rd)
		g.compute(stageAddr)
		adv(rd)
		f.Op("add.u32", kt, kt, ptx.Int(1))
		again := g.pred()
		f.Op("setp.lt.u32", again, kt, g.ktiles)
		f.At(again).Bra(loop)
	}
	g.wait(0)

	// Epilogue: acc[(i*nt+j)*4+e] is row warpM*64 + i*16 + g + 8*(e>>1), column
	// wn*warpN + j*8 + 2*t + (e&1).
	gid, tig := g.u32(), g.u32()
	f.Op("shr.u32", gid, g.lane, ptx.Int(2))
	f.Op("and.b32", tig, g.lane, ptx.Int(3))
	rowBase, colBase := g.u32(), g.u32()
	f.Op("mad.lo.u32", rowBase, g.warpM, ptx.Int(64), gid)
	f.Op("add.u32", rowBase, rowBase, g.row0)
	f.Op("mad.lo.u32", colBase, g.wN, ptx.Int(t.warpN), g.col0)
	f.Op("mad.lo.u32", colBase, tig, ptx.Int(2), colBase)
	var rowOffs, colOffs []int
	for i := 0; i < mt; i++ {
		rowOffs = append(rowOffs, i*16, i*16+8)
	}
	for j := 0; j < nt; j++ {
		colOffs = append(colOffs, j*8, j*8+1)
	}
	g.epilogue(rowBase, colBase, rowOffs, colOffs, func(ri, ci int) ptx.Reg {
		i, h := ri/2, ri%2
		j, e := ci/2, ci%2
		return g.acc[(i*nt+j)*4+h*2+e]
	})
}

// pipelined writes the software-pipelined main loop (MatMulTile.Pipelined): kt counts
// the k tiles from 0, rd is the byte offset of the stage read (tile 0's), adv moves a
// stage offset on, and issue(kt) copies tile kt+stages-1 (one cp.async group, empty
// past the last tile). Iteration kt multiplies the tile in stage rd, whose first k
// step's fragments are already in cur; k step ks loads step ks+1's fragments before its
// mma.sync. The copies of tile kt+stages-1 are issued in step 0, into the stage that
// iteration kt-1 read (every warp has loaded its fragments of it before the barrier of
// iteration kt-1). Before the last step, the wait for tile kt+1 (the groups committed
// are those of tiles 0 .. kt+stages-1, so stages-2 may be pending) and the barrier, after
// which that step's loads are the next stage's first fragments. After the last tile
// they read a stage no copy writes, and are not used.
func (g *mmGen) pipelined(kt, rd ptx.Reg, adv func(ptx.Reg), issue func(ptx.Reg)) {
	f, t := g.f, g.t
	steps, load := t.bk/16, g.loadFrag16
	if g.p.TF32 {
		steps, load = t.bk/8, g.loadFragTF32
	}
	if steps < 2 {
		panic(fmt.Sprintf("kernel: matmul tiling %+v: a pipelined tile needs two k steps", t))
	}
	stageAddr := g.u32() // the shared address of stage rd
	f.Op("add.u32", stageAddr, g.smem, rd)
	g.wait(t.stages - 2)
	f.BarSync(0)
	cur := g.newFrag()
	aBase, bBase := g.fragBases(stageAddr)
	load(cur, aBase, bBase, 0)
	loop := f.NewLabel()
	f.Place(loop)
	aBase, bBase = g.fragBases(stageAddr)
	frags := []mmFrag{cur}
	for ks := 1; ks < steps; ks++ {
		frags = append(frags, g.newFrag())
	}
	for ks := 0; ks < steps; ks++ {
		if ks+1 < steps {
			load(frags[ks+1], aBase, bBase, ks+1)
		} else {
			nA, nB := g.fragBases(stageAddr)
			load(cur, nA, nB, 0)
		}
		if ks == 0 {
			issue(kt)
		}
		g.mmaFrag(frags[ks])
		if ks == steps-2 {
			g.wait(t.stages - 2)
			f.BarSync(0)
			adv(rd)
			f.Op("add.u32", stageAddr, g.smem, rd)
		}
	}
	f.Op("add.u32", kt, kt, ptx.Int(1))
	again := g.pred()
	f.Op("setp.lt.u32", again, kt, g.ktiles)
	f.At(again).Bra(loop)
}

// fragOffsets computes the lane-dependent shared-memory offsets of the fragment loads.
func (g *mmGen) fragOffsets() {
	f, t := g.f, g.t
	l := g.lane
	lo3, b3, b4 := g.u32(), g.u32(), g.u32()
	f.Op("and.b32", lo3, l, ptx.Int(7))
	f.Op("bfe.u32", b3, l, ptx.Int(3), ptx.Int(1))
	f.Op("shr.u32", b4, l, ptx.Int(4))
	g.laneA, g.laneB = g.u32(), g.u32()
	if g.p.TF32 {
		// a thread's fragment rows and columns: gid = lane>>2, tig = lane&3.
		gid, tig := g.u32(), g.u32()
		f.Op("shr.u32", gid, l, ptx.Int(2))
		f.Op("and.b32", tig, l, ptx.Int(3))
		// A: m = warpM*64 + gid, k = 2*tig (k-contiguous: v2 of k, k+1) or rows k
		m, k := g.u32(), g.u32()
		f.Op("mad.lo.u32", m, g.warpM, ptx.Int(64), gid)
		f.Op("shl.b32", k, tig, ptx.Int(1))
		if !g.p.TransA {
			f.Op("mad.lo.u32", g.laneA, m, ptx.Int(t.pitchA), k)
		} else {
			f.Op("mad.lo.u32", g.laneA, k, ptx.Int(t.pitchA), m)
		}
		n := g.u32()
		f.Op("mad.lo.u32", n, g.wN, ptx.Int(t.warpN), gid)
		if g.p.TransB {
			f.Op("mad.lo.u32", g.laneB, n, ptx.Int(t.pitchB), k)
		} else {
			f.Op("mad.lo.u32", g.laneB, k, ptx.Int(t.pitchB), n)
		}
	} else {
		// ldmatrix.x4: lane l gives the address of row l&7 of matrix l>>3.
		if !g.p.TransA {
			// [m][k]: m = warpM*64 + b3*8 + lo3, k = b4*8
			m := g.u32()
			f.Op("mad.lo.u32", m, g.warpM, ptx.Int(64), lo3)
			f.Op("mad.lo.u32", m, b3, ptx.Int(8), m)
			k := g.u32()
			f.Op("shl.b32", k, b4, ptx.Int(3))
			f.Op("mad.lo.u32", g.laneA, m, ptx.Int(t.pitchA), k)
		} else {
			// [k][m]: k = b4*8 + lo3, m = warpM*64 + b3*8
			k, m := g.u32(), g.u32()
			f.Op("mad.lo.u32", k, b4, ptx.Int(8), lo3)
			f.Op("mul.lo.u32", m, g.warpM, ptx.Int(64))
			f.Op("mad.lo.u32", m, b3, ptx.Int(8), m)
			f.Op("mad.lo.u32", g.laneA, k, ptx.Int(t.pitchA), m)
		}
		if g.p.TransB {
			// [n][k]: n = wn*64 + b4*8 + lo3, k = b3*8
			n, k := g.u32(), g.u32()
			f.Op("mad.lo.u32", n, g.wN, ptx.Int(t.warpN), lo3)
			f.Op("mad.lo.u32", n, b4, ptx.Int(8), n)
			f.Op("shl.b32", k, b3, ptx.Int(3))
			f.Op("mad.lo.u32", g.laneB, n, ptx.Int(t.pitchB), k)
		} else {
			// [k][n], .trans: k = b3*8 + lo3, n = wn*64 + b4*8
			k, n := g.u32(), g.u32()
			f.Op("mad.lo.u32", k, b3, ptx.Int(8), lo3)
			f.Op("mul.lo.u32", n, g.wN, ptx.Int(t.warpN))
			f.Op("mad.lo.u32", n, b4, ptx.Int(8), n)
			f.Op("mad.lo.u32", g.laneB, k, ptx.Int(t.pitchB), n)
		}
	}
	f.Op("shl.b32", g.laneA, g.laneA, ptx.Int(int(g.log2es)))
	f.Op("shl.b32", g.laneB, g.laneB, ptx.Int(int(g.log2es)))
	f.Op("add.u32", g.laneB, g.laneB, ptx.Int(t.bOff()))
}

// mmFrag is a warp's fragments of one k step: a[i] of A's 16-row tile i (4 registers),
// b[j] of B's 8-column tile j (2 registers).
type mmFrag struct {
	a, b [][]ptx.Reg
}

// newFrag allocates the registers of one k step's fragments.
func (g *mmGen) newFrag() mmFrag {
	fr := mmFrag{a: make([][]ptx.Reg, 4), b: make([][]ptx.Reg, g.t.warpN/8)}
	for i := range fr.a {
		fr.a[i] = g.f.Regs(ptx.B32, 4)
	}
	for j := range fr.b {
		fr.b[j] = g.f.Regs(ptx.B32, 2)
	}
	return fr
}

// fragBases returns the shared addresses of the lane's fragment loads in the stage at
// shared address stage.
func (g *mmGen) fragBases(stage ptx.Reg) (aBase, bBase ptx.Reg) {
	aBase, bBase = g.u32(), g.u32()
	g.f.Op("add.u32", aBase, stage, g.laneA)
	g.f.Op("add.u32", bBase, stage, g.laneB)
	return aBase, bBase
}

// compute multiplies the tiles of the stage at shared address stage, k steps of 8
// (TF32) or 16 (the 16-bit formats), each a fragment load and an mma.
func (g *mmGen) compute(stage ptx.Reg) {
	aBase, bBase := g.fragBases(stage)
	load, step := g.loadFrag16, 16
	if g.p.TF32 {
		load, step = g.loadFragTF32, 8
	}
	for ks := 0; ks < g.t.bk/step; ks++ {
		fr := g.newFrag()
		load(fr, aBase, bBase, ks)
		g.mmaFrag(fr)
	}
}

// loadFrag16 loads k step ks's 16-bit fragments into fr (ldmatrix.x4, four of A and
// four of B) from the stage whose lane addresses are aBase and bBase.
func (g *mmGen) loadFrag16(fr mmFrag, aBase, bBase ptx.Reg, ks int) {
	t := g.t
	es := t.es
	for i := range fr.a {
		var off int
		if !g.p.TransA {
			off = (i*16*t.pitchA + ks*16) * es
		} else {
			off = (ks*16*t.pitchA + i*16) * es
		}
		g.ldmatrix(fr.a[i], aBase, off, g.p.TransA)
	}
	for pI := 0; pI < len(fr.b)/2; pI++ {
		var off int
		if g.p.TransB {
			off = (pI*16*t.pitchB + ks*16) * es
		} else {
			off = (ks*16*t.pitchB + pI*16) * es
		}
		r := []ptx.Reg{fr.b[2*pI][0], fr.b[2*pI][1], fr.b[2*pI+1][0], fr.b[2*pI+1][1]}
		g.ldmatrix(r, bBase, off, !g.p.TransB)
	}
}

// mmaFrag appends the 4 x nt mma.sync of one k step's fragments to the accumulators.
func (g *mmGen) mmaFrag(fr mmFrag) {
	typ := "f16"
	if g.bf16 {
		typ = "bf16"
	}
	nt := len(fr.b)
	for i := range fr.a {
		for j := range fr.b {
			d := g.acc[(i*nt+j)*4 : (i*nt+j)*4+4]
			if g.p.TF32 {
				g.mmaTF32(d, fr.a[i], fr.b[j])
			} else {
				g.mma16(typ, d, fr.a[i], fr.b[j])
			}
		}
	}
}

// ldmatrix loads four 8x8 matrices of 16-bit elements: lane l gives the address
// base+off of row l&7 of matrix l>>3 (ldmatrix.sync.aligned.m8n8.x4{.trans}.shared.b16).
func (g *mmGen) ldmatrix(dst []ptx.Reg, base ptx.Reg, off int, trans bool) {
	f := g.f
	op := "ldmatrix.sync.aligned.m8n8.x4.shared.b16"
	if trans {
		op = "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16"
	}
	f.Op(op, ptx.Vec(dst), ptx.Mem(base, int64(off)))
}

// mma16 appends d += a*b for one 16x8x16 tile (mma.sync.aligned.m16n8k16.row.col.f32).
func (g *mmGen) mma16(typ string, d, a, b []ptx.Reg) {
	f := g.f
	f.Op("mma.sync.aligned.m16n8k16.row.col.f32."+typ+"."+typ+".f32",
		ptx.Vec(d), ptx.Vec(a), ptx.Vec(b), ptx.Vec(d))
}

// loadFragTF32 loads k step ks's TF32 fragments into fr from the stage whose lane
// addresses are aBase and bBase, rounded to TF32.
func (g *mmGen) loadFragTF32(fr mmFrag, aBase, bBase ptx.Reg, ks int) {
	f, t := g.f, g.t
	// A fragment of tile i: a0 (g, k), a1 (g+8, k), a2 (g, k'), a3 (g+8, k'), where
	// the mma's k index tig stands for column 2*tig of the tile and tig+4 for 2*tig+1.
	for i, r := range fr.a {
		if !g.p.TransA {
			off := (i*16*t.pitchA + ks*8) * 4
			f.Op("ld.shared.v2.b32", ptx.Vec{r[0], r[2]}, ptx.Mem(aBase, int64(off)))
			f.Op("ld.shared.v2.b32", ptx.Vec{r[1], r[3]}, ptx.Mem(aBase, int64(off+8*t.pitchA*4)))
		} else {
			off := (ks*8*t.pitchA + i*16) * 4
			f.Op("ld.shared.b32", r[0], ptx.Mem(aBase, int64(off)))
			f.Op("ld.shared.b32", r[2], ptx.Mem(aBase, int64(off+t.pitchA*4)))
			f.Op("ld.shared.b32", r[1], ptx.Mem(aBase, int64(off+8*4)))
			f.Op("ld.shared.b32", r[3], ptx.Mem(aBase, int64(off+(t.pitchA+8)*4)))
		}
		for _, x := range r {
			g.tf32(x)
		}
	}
	for j, r := range fr.b {
		if g.p.TransB {
			off := (j*8*t.pitchB + ks*8) * 4
			f.Op("ld.shared.v2.b32", ptx.Vec{r[0], r[1]}, ptx.Mem(bBase, int64(off)))
		} else {
			off := (ks*8*t.pitchB + j*8) * 4
			f.Op("ld.shared.b32", r[0], ptx.Mem(bBase, int64(off)))
			f.Op("ld.shared.b32", r[1], ptx.Mem(bBase, int64(off+t.pitchB*4)))
		}
		for _, x := range r {
			g.tf32(x)
		}
	}
}

// tf32 rounds the float32 bits in x to TF32 in place (cvt.rna.tf32.f32).
func (g *mmGen) tf32(x ptx.Reg) {
	f := g.f
	f.Op("cvt.rna.tf32.f32", x, x)
}

// mmaTF32 appends d += a*b for one 16x8x8 TF32 tile (mma.sync.aligned.m16n8k8).
func (g *mmGen) mmaTF32(d, a, b []ptx.Reg) {
	f := g.f
	f.Op("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", ptx.Vec(d), ptx.Vec(a), ptx.Vec(b), ptx.Vec(d))
}

// ---- the FMA kernel ----

func (g *mmGen) fma() {
	f, t := g.f, g.t
	q := t.q
	V := 16 / t.es
	ty, tx := g.u32(), g.u32()
	f.Op("shr.u32", ty, g.tid, ptx.Int(4))
	f.Op("and.b32", tx, g.tid, ptx.Int(15))
	g.acc = f.Regs(g.accT, 4*q*q)
	zero := ptx.Operand(ptx.ImmF32(0))
	if g.accT == ptx.F64 {
		zero = ptx.ImmF64(0)
	}
	for _, r := range g.acc {
		f.Op("mov"+g.accT.String(), r, zero)
	}
	// One 16-byte chunk of A and of B a thread per k tile, through registers.
	type ld struct {
		src     ptx.Reg // u64, next tile
		step    ptx.Reg // u64
		kContig bool
		mn      ptx.Reg // k-contiguous: row ok pred; strided: count (u32)
		ok      ptx.Reg
		kc, kr  ptx.Reg
		vals    []ptx.Reg
		dst     ptx.Reg // u32 byte offset in buffer 0 of the operand's region
		tileOff int
		pitch   int
	}
	mk := func(isA bool) *ld {
		base, ldd, mnDim, mn0 := g.a, g.lda, g.mDim, g.row0
		strided, mnTile := g.p.TransA, t.bm
		x := &ld{tileOff: 0, pitch: t.pitchA}
		if !isA {
			base, ldd, mnDim, mn0 = g.b, g.ldb, g.nDim, g.col0
			strided, mnTile = !g.p.TransB, t.bn
			x.tileOff, x.pitch = t.bOff(), t.pitchB
		}
		x.kContig = !strided
		x.step = g.u64()
		if x.kContig {
			f.Op("mov.u64", x.step, ptx.Int(t.bk*t.es))
		} else {
			f.Op("mul.wide.u32", x.step, ldd, ptx.Int(t.bk*t.es))
		}
		x.src = g.u64()
		x.dst = g.u32()
		mn := g.u32()
		if x.kContig {
			cpr := t.bk / V
			row, kc := g.u32(), g.u32()
			f.Op("div.u32", row, g.tid, ptx.Int(cpr))
			f.Op("rem.u32", kc, g.tid, ptx.Int(cpr))
			f.Op("mul.lo.u32", kc, kc, ptx.Int(V))
			f.Op("add.u32", mn, mn0, row)
			f.Op("mul.wide.u32", x.src, mn, ldd)
			k64 := g.u64()
			f.Op("cvt.u64.u32", k64, kc)
			f.Op("add.u64", x.src, x.src, k64)
			x.ok = g.pred()
			f.Op("setp.lt.u32", x.ok, mn, mnDim)
			x.kc = kc
			// transposed into [k][mn]: element i to (kc+i)*pitch + row
			f.Op("mad.lo.u32", x.dst, kc, ptx.Int(x.pitch), row)
		} else {
			cpr := mnTile / V
			kr, mc := g.u32(), g.u32()
			f.Op("div.u32", kr, g.tid, ptx.Int(cpr))
			f.Op("rem.u32", mc, g.tid, ptx.Int(cpr))
			f.Op("mul.lo.u32", mc, mc, ptx.Int(V))
			f.Op("add.u32", mn, mn0, mc)
			f.Op("mul.wide.u32", x.src, kr, ldd)
			m64 := g.u64()
			f.Op("cvt.u64.u32", m64, mn)
			f.Op("add.u64", x.src, x.src, m64)
			x.mn = g.u32()
			inside := g.pred()
			f.Op("setp.lt.u32", inside, mn, mnDim)
			f.Op("sub.u32", x.mn, mnDim, mn)
			f.Op("min.u32", x.mn, x.mn, ptx.Int(V))
			f.Op("selp.u32", x.mn, x.mn, ptx.Int(0), inside)
			x.kr = kr
			f.Op("mad.lo.u32", x.dst, kr, ptx.Int(x.pitch), mc)
		}
		f.Op("shl.b64", x.src, x.src, ptx.Int(int(g.log2es)))
		f.Op("add.u64", x.src, x.src, base)
		f.Op("shl.b32", x.dst, x.dst, ptx.Int(int(g.log2es)))
		f.Op("add.u32", x.dst, x.dst, ptx.Int(x.tileOff))
		x.vals = f.Regs(g.accT, V)
		return x
	}
	la, lb := mk(true), mk(false)
	// load reads the chunk of the tile at k0 into registers, zeros outside the matrix.
	load := func(x *ld, k0 ptx.Reg) {
		cnt := g.u32()
		if x.kContig {
			kk := g.u32()
			f.Op("add.u32", kk, k0, x.kc)
			in := g.pred()
			f.Op("setp.lt.u32", in, kk, g.kDim)
			f.Op("and.pred", in, in, x.ok)
			f.Op("sub.u32", cnt, g.kDim, kk)
			f.Op("min.u32", cnt, cnt, ptx.Int(V))
			f.Op("selp.u32", cnt, cnt, ptx.Int(0), in)
		} else {
			kk := g.u32()
			f.Op("add.u32", kk, k0, x.kr)
			in := g.pred()
			f.Op("setp.lt.u32", in, kk, g.kDim)
			f.Op("selp.u32", cnt, x.mn, ptx.Int(0), in)
		}
		any := g.pred()
		f.Op("setp.ne.u32", any, cnt, ptx.Int(0))
		for _, v := range x.vals {
			f.Op("mov"+g.accT.String(), v, zero)
		}
		f.At(any).Op("ld.global.nc"+fmt.Sprintf(".v%d", V)+g.accT.String(), ptx.Vec(x.vals), ptx.Mem(x.src, 0))
		for i := 1; i < V; i++ {
			in := g.pred()
			f.Op("setp.gt.u32", in, cnt, ptx.Int(i))
			f.AtNot(in).Op("mov"+g.accT.String(), x.vals[i], zero)
		}
		f.Op("add.u64", x.src, x.src, x.step)
	}
	// store writes the registers into the buffer at byte offset buf.
	store := func(x *ld, buf ptx.Reg) {
		d := g.u32()
		f.Op("add.u32", d, g.smem, buf)
		f.Op("add.u32", d, d, x.dst)
		if x.kContig {
			for i, v := range x.vals {
				f.Op("st.shared"+g.accT.String(), ptx.Mem(d, int64(i*x.pitch*t.es)), v)
			}
			return
		}
		f.St(ptx.Shared, ptx.CacheDefault, g.accT, ptx.Mem(d, 0), regsToOps(x.vals)...)
	}
	k0, buf := g.u32(), g.u32()
	f.Op("mov.u32", k0, ptx.Int(0))
	f.Op("mov.u32", buf, ptx.Int(0))
	load(la, k0)
	load(lb, k0)
	store(la, buf)
	store(lb, buf)
	f.BarSync(0)
	kt := g.u32()
	f.Op("mov.u32", kt, ptx.Int(0))
	loop := f.NewLabel()
	f.Place(loop)
	next := g.pred()
	kn := g.u32()
	f.Op("add.u32", kn, kt, ptx.Int(1))
	f.Op("setp.lt.u32", next, kn, g.ktiles)
	f.Op("add.u32", k0, k0, ptx.Int(t.bk))
	{
		skip := f.NewLabel()
		f.AtNot(next).Bra(skip)
		load(la, k0)
		load(lb, k0)
		f.Place(skip)
	}
	// The FMAs of the tile in buffer buf: thread (ty, tx) has rows ty*q + i and
	// bm/2 + ty*q + i, columns tx*q + j and bn/2 + tx*q + j.
	aRd, bRd := g.u32(), g.u32()
	f.Op("add.u32", aRd, g.smem, buf)
	f.Op("mad.lo.u32", aRd, ty, ptx.Int(q*t.es), aRd)
	f.Op("add.u32", bRd, g.smem, buf)
	f.Op("mad.lo.u32", bRd, tx, ptx.Int(q*t.es), bRd)
	f.Op("add.u32", bRd, bRd, ptx.Int(t.bOff()))
	for kk := 0; kk < t.bk; kk++ {
		av := f.Regs(g.accT, 2*q)
		bv := f.Regs(g.accT, 2*q)
		aOff := kk * t.pitchA * t.es
		bOff := kk * t.pitchB * t.es
		f.Ld(ptx.Shared, ptx.CacheDefault, g.accT, ptx.Mem(aRd, int64(aOff)), av[:q]...)
		f.Ld(ptx.Shared, ptx.CacheDefault, g.accT, ptx.Mem(aRd, int64(aOff+t.bm/2*t.es)), av[q:]...)
		f.Ld(ptx.Shared, ptx.CacheDefault, g.accT, ptx.Mem(bRd, int64(bOff)), bv[:q]...)
		f.Ld(ptx.Shared, ptx.CacheDefault, g.accT, ptx.Mem(bRd, int64(bOff+t.bn/2*t.es)), bv[q:]...)
		for i := 0; i < 2*q; i++ {
			for j := 0; j < 2*q; j++ {
				r := g.acc[i*2*q+j]
				f.Op("fma.rn"+g.accT.String(), r, av[i], bv[j], r)
			}
		}
	}
	{
		skip := f.NewLabel()
		f.AtNot(next).Bra(skip)
		nb := g.u32()
		f.Op("xor.b32", nb, buf, ptx.Int(t.stageBytes))
		store(la, nb)
		store(lb, nb)
		f.Place(skip)
	}
	f.Op("xor.b32", buf, buf, ptx.Int(t.stageBytes))
	f.BarSync(0)
	f.Op("mov.u32", kt, kn)
	f.At(next).Bra(loop)

	rowBase, colBase := g.u32(), g.u32()
	f.Op("mad.lo.u32", rowBase, ty, ptx.Int(q), g.row0)
	f.Op("mad.lo.u32", colBase, tx, ptx.Int(q), g.col0)
	var rowOffs, colOffs []int
	for i := 0; i < 2*q; i++ {
		o := i
		if i >= q {
			o = t.bm/2 + i - q
		}
		rowOffs = append(rowOffs, o)
	}
	for j := 0; j < 2*q; j++ {
		o := j
		if j >= q {
			o = t.bn/2 + j - q
		}
		colOffs = append(colOffs, o)
	}
	g.epilogue(rowBase, colBase, rowOffs, colOffs, func(ri, ci int) ptx.Reg { return g.acc[ri*2*q+ci] })
}

// ---- the epilogue ----

// epilogue writes C[rowBase+ro][colBase+co] = alpha*acc(ri, ci) (+ beta*C) for every
// row offset ro = rowOffs[ri] and column offset co = colOffs[ci] inside the matrix.
func (g *mmGen) epilogue(rowBase, colBase ptx.Reg, rowOffs, colOffs []int, acc func(ri, ci int) ptx.Reg) {
	f := g.f
	colOK := make([]ptx.Reg, len(colOffs))
	colByte := make([]ptx.Reg, len(colOffs))
	for ci, co := range colOffs {
		c := g.u32()
		f.Op("add.u32", c, colBase, ptx.Int(co))
		colOK[ci] = g.pred()
		f.Op("setp.lt.u32", colOK[ci], c, g.nDim)
		colByte[ci] = g.u64()
		f.Op("mul.wide.u32", colByte[ci], c, ptx.Int(g.t.es))
	}
	for ri, ro := range rowOffs {
		r := g.u32()
		f.Op("add.u32", r, rowBase, ptx.Int(ro))
		rowOK := g.pred()
		f.Op("setp.lt.u32", rowOK, r, g.mDim)
		skip := f.NewLabel()
		f.AtNot(rowOK).Bra(skip)
		rowPtr := g.u64()
		f.Op("mul.wide.u32", rowPtr, r, g.ldc)
		f.Op("shl.b64", rowPtr, rowPtr, ptx.Int(int(g.log2es)))
		f.Op("add.u64", rowPtr, rowPtr, g.c)
		for ci := range colOffs {
			ptr := g.u64()
			f.Op("add.u64", ptr, rowPtr, colByte[ci])
			ok := colOK[ci]
			v := f.Reg(g.accT)
			f.Op("mul.rn"+g.accT.String(), v, acc(ri, ci), g.alpha)
			withC := g.pred()
			f.Op("and.pred", withC, ok, g.betaNZ)
			old := g.load(withC, ptr)
			f.At(withC).Op("fma.rn"+g.accT.String(), v, g.beta, old, v)
			g.storeC(ok, ptr, v)
		}
		f.Place(skip)
	}
}

// load returns the element at ptr as the accumulation type, loaded when p.
func (g *mmGen) load(p, ptr ptx.Reg) ptx.Reg {
	f := g.f
	v := f.Reg(g.accT)
	if !g.half {
		f.At(p).Op("ld.global"+g.accT.String(), v, ptx.Mem(ptr, 0))
		return v
	}
	h := f.Reg(ptx.B16)
	f.Op("mov.b16", h, ptx.Int(0))
	f.At(p).Op("ld.global.b16", h, ptx.Mem(ptr, 0))
	if g.bf16 {
		w := g.u32()
		f.Op("cvt.u32.u16", w, h)
		f.Op("shl.b32", w, w, ptx.Int(16))
		f.Op("mov.b32", v, w)
		return v
	}
	f.Op("cvt.f32.f16", v, h)
	return v
}

// storeC stores v (accumulation type) at ptr when p, rounded to the element type.
func (g *mmGen) storeC(p, ptr, v ptx.Reg) {
	f := g.f
	if !g.half {
		f.At(p).Op("st.global"+g.accT.String(), ptx.Mem(ptr, 0), v)
		return
	}
	h := f.Reg(ptx.B16)
	switch {
	case g.bf16:
		f.Op("cvt.rn.bf16.f32", h, v)
	default:
		f.Op("cvt.rn.f16.f32", h, v)
	}
	f.At(p).Op("st.global.b16", ptx.Mem(ptr, 0), h)
}
