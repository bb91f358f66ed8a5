package kernel

import (
	"fmt"
	"strings"
	"unsafe"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// Scans.
//
// A scan runs along one axis of an array viewed as [outer, n, inner]: out[o, k, j] is
// the combination of x[o, 0, j], ..., x[o, k, j] (inclusive) or init and x[o, 0, j], ...,
// x[o, k-1, j] (exclusive), each element converted to the accumulator type first (NumPy's
// dtype argument of cumsum). Two kernels cover the layouts:
//
//   - ScanTiles scans contiguous rows: 1-D arrays, the last axis (inner == 1), and axes
//     with a few interleaved columns (inner == Group <= MaxScanGroup), in a single pass
//     with decoupled look-back (Merrill and Garland, "Single-pass Parallel Prefix Scan
//     with Decoupled Look-back", NVIDIA technical report NVR-2016-002).
//   - ScanColumns scans any axis of any strided array by mapping threads to the kept
//     columns (coalesced along inner) and looping over the scanned axis; long axes are cut
//     into chunks linked by the same look-back, per column.
//
// Both write a contiguous [outer, n, inner] output. The operator is associative (not
// necessarily commutative): the kernels combine in index order and only reassociate.

// Combine is the associative operator of a scan on values of one type: an operator of
// the table (operator.go; on Bool, sum and max are "or", prod and min "and") or an
// expression.
type Combine struct {
	// Op is the operator (not an arg operator); zero when Expr is set.
	Op   Op
	Type dtype.DType
	// Expr is an expression operator: input slot 0 is the left operand (the earlier
	// elements), slot 1 the right one; both and the result have type Type. It has no
	// parameters.
	Expr *expr.Expr
}

func (c Combine) key() string {
	if c.Expr != nil {
		return "expr(" + c.Expr.Key() + "):" + c.Type.String()
	}
	return c.Op.String() + ":" + c.Type.String()
}

// Validate checks the operator.
func (c Combine) Validate() error {
	if !c.Type.Valid() || c.Type == dtype.Float16 || c.Type == dtype.BFloat16 {
		return fmt.Errorf("kernel: scan accumulator of type %v: %w", c.Type, backend.ErrNotSupported)
	}
	e := c.Expr
	if e == nil {
		if c.Op.IsArg() || !c.Op.Accepts(c.Type) {
			return fmt.Errorf("kernel: scan operator %v on %v", c.Op, c.Type)
		}
		return nil
	}
	if c.Op != 0 {
		return fmt.Errorf("kernel: scan with both operator %v and an expression", c.Op)
	}
	if e.DType() != c.Type {
		return fmt.Errorf("kernel: scan expression of type %v, accumulator %v", e.DType(), c.Type)
	}
	if len(e.Params) > 0 {
		return fmt.Errorf("kernel: scan expression with parameters")
	}
	for _, s := range e.Inputs {
		if s.Index > 1 || s.DType != c.Type {
			return fmt.Errorf("kernel: scan expression reads input %d of type %v", s.Index, s.DType)
		}
	}
	return nil
}

// MaxScanGroup is the largest number of interleaved columns ScanTiles handles.
const MaxScanGroup = 8

// ScanTilesBlock is the number of threads of a ScanTiles block.
const ScanTilesBlock = 256

// ScanTiles scans rows rows of RowLen contiguous elements each (row r at element
// r*RowLen of the input and of the output), in tiles of Tile() elements that never
// cross a row. Within a row, element i belongs to column i%Group (RowLen is a multiple
// of Group): each column is scanned on its own, as for an axis whose inner size is
// Group. Each thread holds Items consecutive elements (a multiple of Group).
//
// Kernel parameters, in order:
//
//	in          u64  address of the input's first element (In, contiguous)
//	out         u64  address of the output's first element (Out, else Comb.Type; contiguous)
//	status      u64  scratch of StatusBytes(tiles) bytes, zero at the launch; the kernel
//	                 leaves it zero (its flags or packed words and its header: selfClean)
//	rows        u64  number of rows
//	rowLen      u64  elements per row (a multiple of Group, > 0)
//	tilesPerRow u64  ceil(rowLen / Tile())
//	init        u64  the initial value's bits (Comb.Type), read when Exclusive
//
// The grid has exactly rows*tilesPerRow blocks of ScanTilesBlock threads. Blocks take
// tile numbers from a counter in the scratch, so a tile's predecessors have started
// before it (no deadlock whatever the scheduling). Each tile publishes its aggregate,
// then its inclusive prefix, in the scratch; later tiles of the row read them back
// (look-back over a window of 32 predecessors at a time). With Vector set the input and
// output addresses are 16-byte aligned and so is every row (rowLen*size % 16 == 0 for
// both types), so full tiles use vector loads and stores.
//
// Tuning options (zero values: the original kernel):
//
//   - Lookback n (1, 2, 4 or 8): the wide look-back. Each lane of warp 0 loads the status
//     of n consecutive predecessors per round trip (a window of 32n tiles, all loads
//     issued before any is used), and the warp waits only for the predecessors up to the
//     nearest inclusive prefix, not the whole window. 0: windows of 32 that wait for all
//     32 predecessors.
//   - Stage: staged outputs (CanStage). Every warp folds its in-tile prefixes (the
//     block's warp and lane prefixes and its elements, without the tile's prefix) into its
//     shared-memory staging area before the second barrier, warp 0 too (while its first
//     look-back loads are in flight), so nothing but one combination per element waits
//     for the look-back: after the barrier each thread reads striped words, combines the
//     tile's prefix on the left, and stores them. The elements leave the registers before
//     the look-back, so the kernel needs far fewer of them.
//   - MinBlocks n > 0: .minnctapersm n (ptxas caps the registers so that n blocks fit on
//     an SM).
type ScanTiles struct {
	In        dtype.DType
	Comb      Combine
	Out       dtype.DType // the output's type if not Comb.Type (scanTypesOK)
	Exclusive bool
	Group     int
	Items     int
	Vector    bool
	Lookback  int
	Stage     bool
	MinBlocks int
}

// scanTypesOK checks a scan's element types: a half-precision input converts to a
// Float32 or Float64 accumulator (exactly), and a half-precision output (out, unless
// Invalid or the accumulator's type) stores a Float32 accumulator rounded once to
// nearest even: CumSum of halves accumulates in float32, as CuPy and PyTorch do.
func scanTypesOK(in, acc, out dtype.DType) error {
	if !in.Valid() || isHalfType(in) && acc != dtype.Float32 && acc != dtype.Float64 {
		return fmt.Errorf("kernel: scan of %v into %v: %w", in, acc, backend.ErrNotSupported)
	}
	if out.Valid() && out != acc && (!isHalfType(out) || acc != dtype.Float32) {
		return fmt.Errorf("kernel: scan output of %v from %v: %w", out, acc, backend.ErrNotSupported)
	}
	return nil
}

// outType returns the type of the output's elements.
func (s *ScanTiles) outType() dtype.DType { return scanOut(s.Comb.Type, s.Out) }

// outType returns the type of the output's elements.
func (s *ScanColumns) outType() dtype.DType { return scanOut(s.Comb.Type, s.Out) }

// ScanOutType returns the Out of a scan spec with accumulator acc writing an array of
// type out: Invalid when they are equal.
func ScanOutType(acc, out dtype.DType) dtype.DType {
	if out == acc {
		return dtype.Invalid
	}
	return out
}

func scanOut(acc, out dtype.DType) dtype.DType {
	if out.Valid() {
		return out
	}
	return acc
}

// CanStage reports whether the spec admits Stage: one column of a 4- or 8-byte
// accumulator whose thread chunk is 4, 8, 16 or 32 words.
func (s *ScanTiles) CanStage() bool {
	size := s.Comb.Type.Size()
	if s.outType() != s.Comb.Type || s.Group != 1 || (size != 4 && size != 8) || s.Comb.Type == dtype.Bool {
		return false
	}
	kw := s.Items * size / 4
	return kw == 4 || kw == 8 || kw == 16 || kw == 32
}

// Tile returns the elements per tile.
func (s *ScanTiles) Tile() int { return ScanTilesBlock * s.Items }

// Packed reports whether the tile status is packed: PackedWords() 64-bit words per
// tile, each a flag in the high half and a 32-bit word of the value in the low half (a
// single column of a 4-byte accumulator, or of an 8-byte one with Stage: without it the
// second word's registers make the 8-byte kernels spill).
func (s *ScanTiles) Packed() bool {
	size := s.Comb.Type.Size()
	return s.Group == 1 && (size == 4 || size == 8 && s.Stage)
}

// PackedWords returns the 64-bit status words per tile of a packed status: 1 for a
// 4-byte accumulator, 2 for an 8-byte one.
func (s *ScanTiles) PackedWords() int { return s.Comb.Type.Size() / 4 }

// StatusBytes returns the scratch size for the given number of tiles: a 16-byte header
// (the tile counter) and, per tile, either PackedWords() 64-bit words (Packed) or a
// 32-bit flag and two Group-vectors (the aggregate and the inclusive prefix).
func (s *ScanTiles) StatusBytes(tiles int) int {
	if s.Packed() {
		return 16 + scanPad16(8*s.PackedWords()*tiles) // padded: selfClean clears 16 bytes at a time
	}
	return scanStatusBytes(tiles, s.Group*scanWordBytes(s.Comb.Type))
}

// scanStatusBytes is the layout of a flagged status: header, flags (u32 per tile,
// padded to 16 bytes), aggregates, inclusive prefixes (vec bytes per tile each, padded).
func scanStatusBytes(tiles, vec int) int {
	return 16 + scanPad16(4*tiles) + 2*scanPad16(vec*tiles)
}

// scanWordBytes is the bytes a value of type t takes in a status: 4 or 8 (values move
// as 32-bit words).
func scanWordBytes(t dtype.DType) int {
	if t.Size() == 8 {
		return 8
	}
	return 4
}

func scanPad16(n int) int { return (n + 15) &^ 15 }

// Key identifies the kernel.
func (s *ScanTiles) Key() string {
	var b strings.Builder
	fmt.Fprintf(&b, "scan.tiles|%v|%s|g%d|k%d", s.In, s.Comb.key(), s.Group, s.Items)
	if s.Out.Valid() {
		fmt.Fprintf(&b, "|out=%v", s.Out)
	}
	if s.Exclusive {
		b.WriteString("|excl")
	}
	if s.Vector {
		b.WriteString("|v16")
	}
	if s.Lookback > 0 {
		fmt.Fprintf(&b, "|lb%d", s.Lookback)
	}
	if s.Stage {
		b.WriteString("|stage")
	}
	if s.MinBlocks > 0 {
		fmt.Fprintf(&b, "|mb%d", s.MinBlocks)
	}
	return b.String()
}

// Validate checks the spec.
func (s *ScanTiles) Validate() error {
	if err := s.Comb.Validate(); err != nil {
		return err
	}
	if err := scanTypesOK(s.In, s.Comb.Type, s.Out); err != nil {
		return err
	}
	if s.Group < 1 || s.Group > MaxScanGroup {
		return fmt.Errorf("kernel: scan group %d", s.Group)
	}
	if s.Items < 1 || s.Items%s.Group != 0 || s.Items > 32 {
		return fmt.Errorf("kernel: scan items %d for group %d", s.Items, s.Group)
	}
	switch s.Lookback {
	case 0, 1, 2, 4, 8:
	default:
		return fmt.Errorf("kernel: scan look-back of %d tiles per lane", s.Lookback)
	}
	if s.Stage && !s.CanStage() {
		return fmt.Errorf("kernel: staged scan of group %d, items %d, %v", s.Group, s.Items, s.Comb.Type)
	}
	if s.MinBlocks < 0 || s.MinBlocks > 8 {
		return fmt.Errorf("kernel: scan min blocks %d", s.MinBlocks)
	}
	return nil
}

// CPU returns the kernel for the CPU backend. Its results don't depend on the scanNum
// of workers: see scanCPU.
func (s *ScanTiles) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	run, err := newScanCPU(s.In, s.Comb, s.Exclusive, s.outType())
	if err != nil {
		return nil, err
	}
	return func(l *cpu.Launch) error {
		rows, rowLen := int(l.Uint64(3)), int(l.Uint64(4))
		if err := s.checkLaunch(l); err != nil {
			return err
		}
		g := s.Group
		lay := scanLayout{outer: rows, n: rowLen / g, inner: g, so: rowLen, sk: g, sj: 1}
		return run(l, 0, l.Mem(1), lay, l.Uint64(6))
	}, nil
}

// ScanColumnsBlock is the number of threads of a ScanColumns block.
const ScanColumnsBlock = 256

// ScanColumns scans along the middle axis of an [outer, n, inner] array with any
// strides. The outer*inner columns are flattened (column c is (c/inner, c%inner)) and
// cut into blocks of Width() columns; a thread owns one column and Rows consecutive
// elements of it, and the Groups thread groups of a block cover Groups*Rows consecutive
// elements of the axis (a tile). Tiles along the axis (chunks) are linked by decoupled
// look-back per column; the tile number, from a counter, is chunk*colBlocks + block, so
// a tile's predecessor along the axis has always started first.
//
// Kernel parameters, in order:
//
//	in      u64  address of element (0, 0, 0) of the input (In)
//	out     u64  address of the contiguous output (Out, else Comb.Type)
//	status  u64  scratch of StatusBytes(tiles) bytes, zero at the launch when chunks > 1
//	             (unused otherwise); the kernel leaves it zero (its flags and header)
//	outer   u64
//	n       u64  the scanned axis' length (> 0)
//	inner   u64
//	so      s64  input strides in elements of the three axes
//	sk      s64
//	sj      s64
//	chunks  u64  ceil(n / (Groups*Rows))
//	init    u64  the initial value's bits, read when Exclusive
//
// The grid has chunks*colBlocks blocks (colBlocks = ceil(outer*inner / Width())) of
// ScanColumnsBlock threads.
type ScanColumns struct {
	In        dtype.DType
	Comb      Combine
	Out       dtype.DType // the output's type if not Comb.Type (scanTypesOK)
	Exclusive bool
	Groups    int // 1 or 8
	Rows      int
}

// Width returns the columns per block.
func (s *ScanColumns) Width() int { return ScanColumnsBlock / s.Groups }

// TileRows returns the elements of the axis per tile.
func (s *ScanColumns) TileRows() int { return s.Groups * s.Rows }

// StatusBytes returns the scratch size for the given number of tiles (a 16-byte
// header, a 32-bit flag per tile and two Width()-vectors per tile).
func (s *ScanColumns) StatusBytes(tiles int) int {
	return scanStatusBytes(tiles, s.Width()*scanWordBytes(s.Comb.Type))
}

// Key identifies the kernel.
func (s *ScanColumns) Key() string {
	ex := ""
	if s.Exclusive {
		ex = "|excl"
	}
	if s.Out.Valid() {
		ex += "|out=" + s.Out.String()
	}
	return fmt.Sprintf("scan.cols|%v|%s|h%d|r%d%s", s.In, s.Comb.key(), s.Groups, s.Rows, ex)
}

// Validate checks the spec.
func (s *ScanColumns) Validate() error {
	if err := s.Comb.Validate(); err != nil {
		return err
	}
	if err := scanTypesOK(s.In, s.Comb.Type, s.Out); err != nil {
		return err
	}
	if s.Groups != 1 && s.Groups != 8 {
		return fmt.Errorf("kernel: scan column groups %d", s.Groups)
	}
	if s.Rows < 1 || s.Rows > 32 {
		return fmt.Errorf("kernel: scan column rows %d", s.Rows)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (s *ScanColumns) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	run, err := newScanCPU(s.In, s.Comb, s.Exclusive, s.outType())
	if err != nil {
		return nil, err
	}
	return func(l *cpu.Launch) error {
		if err := s.checkLaunch(l); err != nil {
			return err
		}
		lay := scanLayout{
			outer: int(l.Uint64(3)), n: int(l.Uint64(4)), inner: int(l.Uint64(5)),
			so: int(l.Int64(6)), sk: int(l.Int64(7)), sj: int(l.Int64(8)),
		}
		return run(l, 0, l.Mem(1), lay, l.Uint64(10))
	}, nil
}

// The CPU implementations check the launch contract the GPU kernels rely on (grid,
// block, scratch size and contents, alignment claims), so that the CPU tests also
// validate the host code that plans CUDA launches.

func launchErr(format string, args ...any) error {
	return fmt.Errorf("kernel: launch contract: "+format+": %w", append(args, backend.ErrInvalidValue)...)
}

// checkZero reports whether b is all zeros.
func checkZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

// aligned16 reports whether argument i points to a 16-byte aligned address.
func aligned16(l *cpu.Launch, i int) bool {
	m := l.Mem(i)
	return len(m) == 0 || uintptr(unsafe.Pointer(&m[0]))%16 == 0
}

func (s *ScanTiles) checkLaunch(l *cpu.Launch) error {
	rows, rowLen, tpr := int(l.Uint64(3)), int(l.Uint64(4)), int(l.Uint64(5))
	if rowLen <= 0 || rowLen%s.Group != 0 || tpr != (rowLen+s.Tile()-1)/s.Tile() {
		return launchErr("row length %d, %d tiles per row for group %d, tile %d", rowLen, tpr, s.Group, s.Tile())
	}
	if int(l.Grid[0]) != rows*tpr || l.Block[0] != ScanTilesBlock {
		return launchErr("grid %d, block %d for %d tiles", l.Grid[0], l.Block[0], rows*tpr)
	}
	if tpr > 1 {
		st := l.Mem(2)
		if len(st) < s.StatusBytes(rows*tpr) || !checkZero(st[:s.StatusBytes(rows*tpr)]) {
			return launchErr("status of %d bytes, %d needed, zeroed", len(st), s.StatusBytes(rows*tpr))
		}
	}
	if s.Vector {
		if !aligned16(l, 0) || !aligned16(l, 1) ||
			(rows > 1 && (rowLen*s.In.Size()%16 != 0 || rowLen*s.outType().Size()%16 != 0)) {
			return launchErr("vector accesses on unaligned data")
		}
	}
	return nil
}

func (s *ScanColumns) checkLaunch(l *cpu.Launch) error {
	outer, n, inner, chunks := int(l.Uint64(3)), int(l.Uint64(4)), int(l.Uint64(5)), int(l.Uint64(9))
	cb := (outer*inner + s.Width() - 1) / s.Width()
	if n <= 0 || chunks != (n+s.TileRows()-1)/s.TileRows() {
		return launchErr("%d chunks of %d rows for an axis of %d", chunks, s.TileRows(), n)
	}
	if int(l.Grid[0]) != chunks*cb || l.Block[0] != ScanColumnsBlock {
		return launchErr("grid %d, block %d for %d tiles", l.Grid[0], l.Block[0], chunks*cb)
	}
	if chunks > 1 {
		st := l.Mem(2)
		if len(st) < s.StatusBytes(chunks*cb) || !checkZero(st[:s.StatusBytes(chunks*cb)]) {
			return launchErr("status of %d bytes, %d needed, zeroed", len(st), s.StatusBytes(chunks*cb))
		}
	}
	return nil
}

// canonFirst reports whether the scan makes the values that no combination produces
// canonical where they are NaN: the first element of an inclusive scan (the element
// itself) and the initial value of an exclusive one (the first element). That is so
// for the operators of the table on floats: every other element is a sum, product,
// minimum or maximum, canonical already (the NaN policy: internal/fp), and a NaN that
// starts a row must give the same bits as one met later. A select, never a branch:
// over a row's first elements on the CPU (canonFirstRow; scanOfT for init), once per
// thread and column in the PTX (sgen.canonFirst). An expression operator's elements
// are the expression's results, and the first element is the element itself, as an
// expression that moves values (where, a projection) keeps a NaN's bits.
func (c Combine) canonFirst() bool { return c.Expr == nil && c.Type.IsFloat() }

// Identity returns the identity of the operator (Op.Identity) as bits of Type, and false
// for an expression.
func (c Combine) Identity() (uint64, bool) {
	if c.Expr != nil {
		return 0, false
	}
	return c.Op.Identity(c.Type).Bits(), true
}
