package kernel

import (
	"fmt"
	"strconv"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/ptx"
)

// ConcatRows copies Inputs row-major blocks into one destination, side by side: row r
// of input k (cols_k vectors at src_k + r*lds_k) goes to row r of the destination at
// column doff_k (dst + r*ldd + doff_k), for every row r < rows. It is Concatenate along
// any axis of arrays whose axes after it are contiguous (the rows are then the
// products of the axes before and from it), and so Stack and Roll. A vector is Vec
// bytes (16, 8, 4, 2 or 1): every address, length and stride is a whole number of
// them, so a thread moves 16 bytes per access where it can. One launch for all inputs:
// the blocks of a row of the grid (x) are the inputs' chunks of ConcatItems*ConcatBlock
// vectors one after the other, and its y dimension walks the rows, so each block finds
// its input with a few comparisons and never divides.
//
// Kernel parameters, in order:
//
//	dst     u64  address of the destination
//	rows    u64  rows
//	ldd     u64  the destination's row stride (vectors)
//	then for each input k:
//	src_k   u64  address of its first row
//	cols_k  u64  its row length (vectors)
//	lds_k   u64  its row stride (vectors)
//	doff_k  u64  its column in the destination (vectors)
//	first_k u64  its first chunk (the sum of the chunks of the inputs before it)
//
// The grid is (total chunks, up to 65535) blocks of ConcatBlock threads: a
// grid-stride loop over the rows.
//
// With Rows 2 a block moves two of its rows (r and r + gridDim.y) per iteration, every
// load of both before the stores: twice the bytes in flight a thread (Rows 0 or 1: one).
//
// Tiles selects the second kernel (concat_tiles.go), which takes the same parameters:
// a block moves a tile of Rows consecutive rows by Items*ConcatBlock vectors (chunks
// of that many vectors, Chunks), so that a grid of one tile per block, (chunks,
// ceil(rows/Rows)), walks the destination in address order; its y dimension may be
// smaller (a grid-stride loop over the tiles of rows). Offsets inside a row are 32-bit
// (every cols_k below 2^31), tiles wholly inside the inputs' rows take the path
// without predicates, and Stream marks both accesses evict-first (ld.global.cs.nc,
// st.global.cs).
type ConcatRows struct {
	Inputs int // 1..ConcatMaxInputs
	Vec    int // bytes per vector
	Rows   int // rows per iteration: 0 or 1 (one), 2
	Tiles  bool
	Items  int  // Tiles: vectors per thread and row, 4 or 8 (0 reads as ConcatItems)
	Stream bool // Tiles: evict-first loads and stores
}

// ConcatBlock is the number of threads of a ConcatRows block; ConcatItems the vectors
// each thread moves per row (all loads before the stores); ConcatMaxInputs the most
// inputs of one launch.
const (
	ConcatBlock     = 256
	ConcatItems     = 4
	ConcatMaxInputs = 8
)

// ConcatChunks returns the chunks of a row of cols vectors (the first kernel's, and the
// second's with 4 items).
func ConcatChunks(cols int) int {
	return (cols + ConcatBlock*ConcatItems - 1) / (ConcatBlock * ConcatItems)
}

// items returns the vectors a thread moves per row.
func (c *ConcatRows) items() int {
	if c.Tiles && c.Items != 0 {
		return c.Items
	}
	return ConcatItems
}

// Chunk returns the vectors of a row that one block moves: a chunk.
func (c *ConcatRows) Chunk() int { return ConcatBlock * c.items() }

// Chunks returns the chunks of a row of cols vectors.
func (c *ConcatRows) Chunks(cols int) int { return (cols + c.Chunk() - 1) / c.Chunk() }

// Key identifies the kernel.
func (c *ConcatRows) Key() string { return string(c.AppendKey(nil)) }

// AppendKey appends Key to b, for a cache lookup that allocates nothing.
func (c *ConcatRows) AppendKey(b []byte) []byte {
	b = append(b, "concat|k"...)
	b = strconv.AppendInt(b, int64(c.Inputs), 10)
	b = append(b, "|v"...)
	b = strconv.AppendInt(b, int64(c.Vec), 10)
	if c.Rows == 2 {
		b = append(b, "|r2"...)
	}
	if c.Tiles {
		b = append(b, "|tiles|i"...)
		b = strconv.AppendInt(b, int64(c.items()), 10)
		if c.Stream {
			b = append(b, "|cs"...)
		}
	}
	return b
}

// Validate checks the spec.
func (c *ConcatRows) Validate() error {
	switch c.Vec {
	case 1, 2, 4, 8, 16:
	default:
		return fmt.Errorf("kernel: concat of %d-byte vectors: %w", c.Vec, backend.ErrNotSupported)
	}
	if c.Inputs < 1 || c.Inputs > ConcatMaxInputs {
		return fmt.Errorf("kernel: concat of %d inputs: %w", c.Inputs, backend.ErrInvalidValue)
	}
	if c.Rows < 0 || c.Rows > 2 {
		return fmt.Errorf("kernel: concat of %d rows an iteration: %w", c.Rows, backend.ErrInvalidValue)
	}
	if c.Tiles && c.Items != 0 && c.Items != 4 && c.Items != 8 {
		return fmt.Errorf("kernel: concat tiles of %d items a thread: %w", c.Items, backend.ErrInvalidValue)
	}
	if !c.Tiles && (c.Items != 0 || c.Stream) {
		return fmt.Errorf("kernel: concat items or streaming without Tiles: %w", backend.ErrInvalidValue)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (c *ConcatRows) CPU() (func(*cpu.Launch) error, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return func(l *cpu.Launch) error {
		rows, ldd := int(l.Uint64(1)), int(l.Uint64(2))
		V := c.Vec
		dst := l.Mem(0)
		type in struct {
			src             []byte
			cols, lds, doff int
		}
		ins := make([]in, c.Inputs)
		chunks := 0
		for k := range ins {
			p := 3 + 5*k
			x := in{src: l.Mem(p), cols: int(l.Uint64(p + 1)), lds: int(l.Uint64(p + 2)), doff: int(l.Uint64(p + 3))}
			if int(l.Uint64(p+4)) != chunks {
				return launchErr("input %d's first chunk %d, want %d", k, l.Uint64(p+4), chunks)
			}
			if c.Tiles && uint64(x.cols) >= 1<<31 {
				return launchErr("input %d's row of %d vectors for the tiled kernel (below 2^31)", k, x.cols)
			}
			chunks += c.Chunks(x.cols)
			if rows > 0 && x.cols > 0 {
				if (rows-1)*x.lds*V+x.cols*V > len(x.src) {
					return fmt.Errorf("kernel: illegal address: concat input %d past its allocation: %w", k, backend.ErrLaunchFailed)
				}
				if (rows-1)*ldd*V+(x.doff+x.cols)*V > len(dst) {
					return fmt.Errorf("kernel: illegal address: concat output past its allocation: %w", backend.ErrLaunchFailed)
				}
			}
			ins[k] = x
		}
		if int(l.Grid[0]) != max(1, chunks) || l.Block[0] != ConcatBlock {
			return launchErr("grid %d, block %d for %d chunks", l.Grid[0], l.Block[0], chunks)
		}
		l.Parallel(rows, max(1, (1<<16)/max(1, ldd*V)), func(lo, hi int) {
			for r := lo; r < hi; r++ {
				for _, x := range ins {
					copy(dst[(r*ldd+x.doff)*V:(r*ldd+x.doff+x.cols)*V], x.src[r*x.lds*V:(r*x.lds+x.cols)*V])
				}
			}
		})
		return nil
	}, nil
}

// vecAccess returns the register type, count and suffix of a Vec-byte access.
func vecAccess(v int) (ptx.Type, int, string) {
	switch v {
	case 16:
		return ptx.U32, 4, ".v4.u32"
	case 8:
		return ptx.U32, 2, ".v2.u32"
	case 4:
		return ptx.U32, 1, ".u32"
	case 2:
		return ptx.U16, 1, ".u16"
	}
	return ptx.U16, 1, ".u8"
}

// PTX returns the kernel's PTX.
func (c *ConcatRows) PTX(major, minor int) (src, entry string, err error) {
	if err := c.Validate(); err != nil {
		return "", "", err
	}
	if c.Tiles {
		return c.ptxTiles(major, minor)
	}
	defer scanPTXError(&err)
	m := ptx.NewModule(major, minor)
	entry = "concat_rows"
	params := []ptx.Param{ptx.P("dst", ptx.U64), ptx.P("rows", ptx.U64), ptx.P("ldd", ptx.U64)}
	for k := range c.Inputs {
		for _, name := range []string{"src", "cols", "lds", "doff", "first"} {
			params = append(params, ptx.P(fmt.Sprintf("%s%d", name, k), ptx.U64))
		}
	}
	f := m.Kernel(entry, params...)
	f.Attr(fmt.Sprintf(".maxntid %d, 1, 1", ConcatBlock))
	pdst := f.Reg(ptx.U64)
	f.CvtaTo(ptx.Global, pdst, f.LdParam(0))
	rows, ldd := f.LdParam(1), f.LdParam(2)
	chunk := f.Reg(ptx.U64)
	f.Cvt(chunk, f.Special(ptx.CtaidX))
	// The block's input: the last whose first chunk is at most this one.
	psrc, cols, lds, doff, first := f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64), f.Reg(ptx.U64)
	for k := range c.Inputs {
		p := 3 + 5*k
		vals := []ptx.Reg{f.LdParam(p), f.LdParam(p + 1), f.LdParam(p + 2), f.LdParam(p + 3), f.LdParam(p + 4)}
		dsts := []ptx.Reg{psrc, cols, lds, doff, first}
		if k == 0 {
			for i, d := range dsts {
				f.Mov(d, vals[i])
			}
			continue
		}
		take := f.Setp(ptx.Ge, chunk, vals[4])
		for i, d := range dsts {
			f.Selp(d, vals[i], d, take)
		}
	}
	f.CvtaTo(ptx.Global, psrc, psrc)
	f.Sub(chunk, chunk, first)
	V := c.Vec
	rt, nregs, suffix := vecAccess(V)
	tid := f.Reg(ptx.U64)
	f.Cvt(tid, f.Special(ptx.TidX))
	col0 := f.Reg(ptx.U64)
	f.Op("mad.lo.u64", col0, chunk, ptx.Int(ConcatBlock*ConcatItems), tid)
	valid := make([]ptx.Reg, ConcatItems)
	for j := range valid {
		cj := f.Reg(ptx.U64)
		f.Add(cj, col0, ptx.Int(j*ConcatBlock))
		valid[j] = f.Setp(ptx.Lt, cj, cols)
	}
	// Byte offsets of the thread's first vector in a row of each side.
	soff := f.Reg(ptx.U64)
	f.Mul(soff, col0, ptx.Int(V))
	doffB := f.Reg(ptx.U64)
	f.Add(doffB, col0, doff)
	f.Mul(doffB, doffB, ptx.Int(V))
	ldsB, lddB := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Mul(ldsB, lds, ptx.Int(V))
	f.Mul(lddB, ldd, ptx.Int(V))
	r := f.Reg(ptx.U64)
	f.Cvt(r, f.Special(ptx.CtaidY))
	ny := f.Reg(ptx.U64)
	f.Cvt(ny, f.Special(ptx.NctaidY))
	// Row addresses, stepped by the grid's rows.
	sa, da := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Op("mad.lo.u64", sa, r, ldsB, psrc)
	f.Add(sa, sa, soff)
	f.Op("mad.lo.u64", da, r, lddB, pdst)
	f.Add(da, da, doffB)
	sstep, dstep := f.Reg(ptx.U64), f.Reg(ptx.U64)
	f.Mul(sstep, ny, ldsB)
	f.Mul(dstep, ny, lddB)
	nrows := max(1, c.Rows)
	loop, done := f.NewLabel(), f.NewLabel()
	f.Place(loop)
	f.At(f.Setp(ptx.Ge, r, rows)).Bra(done)
	// Row i of the iteration (r + i*gridDim.y) and its predicates.
	type rowIO struct {
		sa, da ptx.Reg
		ok     []ptx.Reg
		regs   [][]ptx.Reg
	}
	ios := make([]rowIO, nrows)
	for i := range ios {
		io := rowIO{sa: sa, da: da, ok: valid}
		if i > 0 {
			ri := f.Reg(ptx.U64)
			f.Add(ri, r, ny)
			in := f.Setp(ptx.Lt, ri, rows)
			io.sa, io.da = f.Reg(ptx.U64), f.Reg(ptx.U64)
			f.Add(io.sa, sa, sstep)
			f.Add(io.da, da, dstep)
			io.ok = make([]ptx.Reg, ConcatItems)
			for j := range io.ok {
				io.ok[j] = f.Reg(ptx.Pred)
				f.And(io.ok[j], valid[j], in)
			}
		}
		io.regs = make([][]ptx.Reg, ConcatItems)
		for j := range io.regs {
			io.regs[j] = f.Regs(rt, nregs)
			op := "ld.global.nc" + suffix
			if nregs == 1 {
				f.At(io.ok[j]).Op(op, io.regs[j][0], ptx.Mem(io.sa, int64(j*ConcatBlock*V)))
			} else {
				f.At(io.ok[j]).Op(op, ptx.Vec(io.regs[j]), ptx.Mem(io.sa, int64(j*ConcatBlock*V)))
			}
		}
		ios[i] = io
	}
	for _, io := range ios {
		for j := range io.regs {
			op := "st.global" + suffix
			if nregs == 1 {
				f.At(io.ok[j]).Op(op, ptx.Mem(io.da, int64(j*ConcatBlock*V)), io.regs[j][0])
			} else {
				f.At(io.ok[j]).Op(op, ptx.Mem(io.da, int64(j*ConcatBlock*V)), ptx.Vec(io.regs[j]))
			}
		}
	}
	for range nrows {
		f.Add(r, r, ny)
		f.Add(sa, sa, sstep)
		f.Add(da, da, dstep)
	}
	f.Bra(loop)
	f.Place(done)
	f.Ret()
	return m.String(), entry, nil
}
