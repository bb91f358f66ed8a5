package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// Gathers and scatters address one axis of an array through an index array: element i
// of the iteration (a gather's output, a scatter's updates) uses the index idx[io(i)]
// along the axis, k, normalized by the mode to [0, L), at src + so(i) + k*ast, where
// so and io are dot products of i's multi-index in the (collapsed) iteration shape with
// per-dimension strides (zero where a dimension isn't the operand's). numpy.take,
// numpy.take_along_axis, numpy.put, numpy.put_along_axis, numpy.add.at and
// numpy.bincount are all of this form.

// IndexMode says what a gather or scatter does with an index outside [0, L) of its
// axis (NumPy's mode argument, plus Check for bincount).
type IndexMode uint8

const (
	// IndexRaise: negative indices count from the end (k+L); one still out of range is
	// recorded (its raw value, a 64-bit store into the error word; the host reports it):
	// a gather reads the nearest end instead, a scatter skips the update, so that no
	// access leaves the array and no element the indices don't name is written.
	IndexRaise IndexMode = iota
	// IndexWrap: k modulo L, non-negative (Python's %), so -1 is L-1.
	IndexWrap
	// IndexClip: k clamped to [0, L-1]; negative indices become 0 (NumPy: clip mode
	// disables counting from the end).
	IndexClip
	// IndexCheck: as IndexRaise, but negative indices are out of range too (bincount's
	// values).
	IndexCheck
)

// String returns "raise", "wrap", "clip" or "check".
func (m IndexMode) String() string {
	switch m {
	case IndexRaise:
		return "raise"
	case IndexWrap:
		return "wrap"
	case IndexClip:
		return "clip"
	case IndexCheck:
		return "check"
	}
	return fmt.Sprintf("indexmode(%d)", uint8(m))
}

// Records reports whether the mode records out-of-range indices in the error word.
func (m IndexMode) Records() bool { return m == IndexRaise || m == IndexCheck }

// NormIndex normalizes the raw index k for an axis of length l >= 1 by the mode: the
// position used and whether k was out of range (recorded by Raise and Check; the
// position is then the nearest end of the axis, which a gather reads and a scatter
// skips).
func (m IndexMode) NormIndex(k int64, l int64) (pos int64, bad bool) {
	switch m {
	case IndexWrap:
		if uint64(k) < uint64(l) {
			return k, false
		}
		r := k % l
		if r < 0 {
			r += l
		}
		return r, false
	case IndexClip:
		return max(0, min(k, l-1)), false
	case IndexRaise:
		if k < 0 {
			k += l
		}
	}
	if uint64(k) < uint64(l) {
		return k, false
	}
	if k < 0 {
		return 0, true
	}
	return l - 1, true
}

// GatherBlock is the number of threads of a gather or scatter block.
const GatherBlock = 256

// GatherItems is the number of consecutive elements a gather thread handles (its
// loads all in flight before its stores); Variant 2 of the gather: GatherItems2.
const GatherItems = 4

// gatherIndexValid checks an index type.
func gatherIndexValid(t dtype.DType) error {
	if t != dtype.Int32 && t != dtype.Int64 {
		return fmt.Errorf("kernel: index arrays of %v: %w", t, backend.ErrNotSupported)
	}
	return nil
}

// Gather is out[i] = src[so(i) + k(i)*ast] with k(i) = norm(idx[io(i)]): Take,
// TakeAlongAxis. The elements are copied as bits (Size bytes), so any element type
// works.
//
// Kernel parameters, in order:
//
//	out    u64  address of the contiguous output (n elements)
//	src    u64  address of the source's element 0
//	idx    u64  address of the index array's element 0 (Index: int32 or int64)
//	err    u64  address of the error word (u64), written with a raw out-of-range index
//	            (Raise and Check; 0 otherwise)
//	n      u64  elements of out
//	l      u64  length of the indexed axis (>= 1)
//	ast    s64  stride of the indexed axis in the source, in elements
//	shape  u64  Rank dimensions of the iteration shape, outermost first
//	sst    s64  Rank source strides over them (elements)
//	ist    s64  Rank index strides over them (elements)
//
// Rank 0 is the flat form: the index array is contiguous with n elements, so(i) = 0
// and io(i) = i. Vector (flat form only) says the output and index addresses are
// 16-byte aligned. Without Index64 every element offset (of the source, index array and
// output) and n are below 2^31. The grid-stride loop covers any grid of GatherBlock
// threads; each thread handles GatherItems consecutive elements at a time (Variant 2:
// see Variant).
type Gather struct {
	Size    int
	Index   dtype.DType
	Mode    IndexMode
	Rank    int
	Index64 bool
	Vector  bool
	// Stream marks the accesses that are used once (sm_70 and later): the source's
	// elements read with ld.global.nc.L1::no_allocate and the output written with
	// st.global.cs (evict first), so that neither displaces the index array's lines.
	Stream bool
	// Variant selects the kernel: 0 or 1, the first (GatherItems elements per thread
	// in a grid-stride loop over at most 32 blocks per multiprocessor); 2 (flat Vector
	// form only), GatherItems2 elements per thread, one chunk per thread, so the grid
	// must cover n (Geometry's does): every index in 16-byte loads, then every source
	// load, then the stores, the range check of Raise and Check two compares per
	// element and one warp vote, a warp with an out-of-range index taking the
	// element-by-element path that records it (the same error word, the same
	// positions as the first kernel).
	Variant int
}

// GatherItems2 is the number of consecutive elements a thread of the Variant 2 gather
// handles.
const GatherItems2 = 8

// Key identifies the kernel.
func (g *Gather) Key() string { return string(g.AppendKey(nil)) }

// AppendKey appends Key to b, for a cache lookup that allocates nothing.
func (g *Gather) AppendKey(b []byte) []byte {
	b = append(b, "gather|s"...)
	b = strconv.AppendInt(b, int64(g.Size), 10)
	b = append(append(append(b, '|'), g.Index.String()...), '|')
	b = append(append(b, g.Mode.String()...), "|r"...)
	b = strconv.AppendInt(b, int64(g.Rank), 10)
	b = strconv.AppendBool(append(b, "|i64="...), g.Index64)
	b = strconv.AppendBool(append(b, "|v"...), g.Vector)
	b = strconv.AppendBool(append(b, "|st"...), g.Stream)
	if g.Variant == 2 {
		b = append(b, "|g2"...)
	}
	return b
}

// Validate checks the spec.
func (g *Gather) Validate() error {
	switch g.Size {
	case 1, 2, 4, 8:
	default:
		return fmt.Errorf("kernel: gather of %d-byte elements: %w", g.Size, backend.ErrNotSupported)
	}
	if err := gatherIndexValid(g.Index); err != nil {
		return err
	}
	if g.Mode > IndexCheck {
		return fmt.Errorf("kernel: gather mode %v", g.Mode)
	}
	if g.Rank < 0 || g.Rank > 8 {
		return fmt.Errorf("kernel: gather rank %d", g.Rank)
	}
	if g.Vector && g.Rank != 0 {
		return fmt.Errorf("kernel: gather vector accesses in a rank-%d gather", g.Rank)
	}
	switch {
	case g.Variant < 0 || g.Variant > 2:
		return fmt.Errorf("kernel: gather variant %d", g.Variant)
	case g.Variant == 2 && (g.Rank != 0 || !g.Vector):
		return fmt.Errorf("kernel: gather variant 2 of rank %d, vector %v: flat vector form only", g.Rank, g.Vector)
	}
	return nil
}

// Geometry returns the launch for n elements (Variant 2: a thread per GatherItems2
// elements, for any n below 2^42).
func (g *Gather) Geometry(n, multiprocessors int) (grid, block int) {
	if g.Variant == 2 {
		tile := GatherBlock * GatherItems2
		return max(1, min((n+tile-1)/tile, math.MaxInt32)), GatherBlock
	}
	tile := GatherBlock * GatherItems
	return max(1, min((n+tile-1)/tile, 32*max(1, multiprocessors))), GatherBlock
}

// gatherLayout is a gather's or scatter's addressing, read from a launch.
type gatherLayout struct {
	n, l  int
	ast   int
	shape []int
	st    [][]int // strides per operand, over shape
}

// readLayout reads n, l, ast (scalar args first, first+1, first+2), then rank dims and
// ops stride sets.
func readLayout(l *cpu.Launch, first, rank, ops int) gatherLayout {
	g := gatherLayout{n: int(l.Uint64(first)), l: int(l.Uint64(first + 1)), ast: int(l.Int64(first + 2))}
	p := first + 3
	g.shape = make([]int, rank)
	for d := range g.shape {
		g.shape[d] = int(l.Uint64(p))
		p++
	}
	g.st = make([][]int, ops)
	for k := range g.st {
		g.st[k] = make([]int, rank)
		for d := range rank {
			g.st[k][d] = int(l.Int64(p))
			p++
		}
	}
	return g
}

// readIndex returns element off of an index array of type t at byte base of mem.
func readIndex(mem []byte, base int, t dtype.DType, off int) int64 {
	if t == dtype.Int32 {
		p := base + 4*off
		return int64(int32(binary.LittleEndian.Uint32(mem[p:])))
	}
	p := base + 8*off
	return int64(binary.LittleEndian.Uint64(mem[p:]))
}

// errWord records a raw out-of-range index in the error word (any one of them).
type errWord struct {
	b []byte
}

func (e errWord) record(k int64) {
	if len(e.b) >= 8 {
		// Workers race to store (as the GPU's warps do): any out-of-range index will
		// do, and an atomic 8-byte store is whole.
		atomic.StoreUint64(&cpu.Slice[uint64](e.b[:8])[0], uint64(k))
	}
}

// checkExtent returns an error if the elements at base + [lo, hi]*size fall outside
// mem.
func checkExtent(what string, mem []byte, base, lo, hi, size int) error {
	if hi < lo {
		return nil
	}
	if base+lo*size < 0 || base+(hi+1)*size > len(mem) {
		return fmt.Errorf("kernel: illegal address: %s elements [%d, %d] outside their allocation: %w", what, lo, hi, backend.ErrLaunchFailed)
	}
	return nil
}

// operandExtent returns the lowest and highest element offsets of an operand over the
// iteration shape, plus [0, l-1]*ast when withAxis.
func operandExtent(shape, st []int, l, ast int, withAxis bool) (lo, hi int) {
	lo, hi = extent(shape, st)
	if withAxis && l > 0 {
		if ast < 0 {
			lo += (l - 1) * ast
		} else {
			hi += (l - 1) * ast
		}
	}
	return lo, hi
}

// CPU returns the kernel for the CPU backend.
func (g *Gather) CPU() (func(*cpu.Launch) error, error) {
	if err := g.Validate(); err != nil {
		return nil, err
	}
	return func(l *cpu.Launch) error {
		lay := readLayout(l, 4, g.Rank, 2)
		n := lay.n
		if n == 0 {
			return nil
		}
		if lay.l < 1 {
			return launchErr("gather from an axis of length %d", lay.l)
		}
		shape, sst, ist := lay.shape, lay.st[0], lay.st[1]
		if g.Rank == 0 {
			shape, sst, ist = []int{n}, []int{0}, []int{1}
		}
		if numel := prodInts(shape); numel != n {
			return launchErr("gather of %d elements over shape %v", n, shape)
		}
		if !g.Index64 && (NeedIndex64(n, shape, sst, ist) || extentNeeds64(lay.l, lay.ast)) {
			return launchErr("32-bit offsets for shape %v, strides %v %v, axis %d x %d", shape, sst, ist, lay.l, lay.ast)
		}
		sz := g.Size
		out := l.Mem(0)
		if len(out) < n*sz {
			return fmt.Errorf("kernel: illegal address: gather output past its allocation: %w", backend.ErrLaunchFailed)
		}
		src, sbase := l.MemAt(1)
		lo, hi := operandExtent(shape, sst, lay.l, lay.ast, true)
		if err := checkExtent("gather source", src, sbase, lo, hi, sz); err != nil {
			return err
		}
		idx, ibase := l.MemAt(2)
		lo, hi = extent(shape, ist)
		if err := checkExtent("gather index", idx, ibase, lo, hi, g.Index.Size()); err != nil {
			return err
		}
		ew := errWord{l.Mem(3)}
		if g.Mode.Records() && len(ew.b) < 8 {
			return launchErr("gather in %v mode without an error word", g.Mode)
		}
		L, ast := int64(lay.l), lay.ast
		if g.Rank == 0 && (g.Size == 4 || g.Size == 8) && ibase%g.Index.Size() == 0 && sbase%g.Size == 0 {
			gatherFlat(l, g, out[:n*g.Size], src, sbase, idx, ibase, n, L, ast, ew)
			return nil
		}
		l.Parallel(n, 4*chunk, func(a, b int) {
			for c := a; c < b; c += chunk {
				m := min(chunk, b-c)
				offsets2(shape, sst, ist, c, m, func(j, so, io int) {
					k, bad := g.Mode.NormIndex(readIndex(idx, ibase, g.Index, io), L)
					if bad {
						ew.record(readIndex(idx, ibase, g.Index, io))
					}
					p := sbase + (so+int(k)*ast)*sz
					copy(out[(c+j)*sz:(c+j+1)*sz], src[p:p+sz])
				})
			}
		})
		return nil
	}, nil
}

// extentNeeds64 reports whether offsets up to (l-1)*ast need 64 bits.
func extentNeeds64(l, ast int) bool {
	if ast < 0 {
		ast = -ast
	}
	return l > 0 && ast > 0 && (l-1) > (math.MaxInt32-1)/ast
}

func prodInts(s []int) int {
	n := 1
	for _, v := range s {
		n *= v
	}
	return n
}

// offsets2 calls f(j, o1, o2) for the m elements from linear index first, with the
// element offsets of element first+j for two stride sets.
func offsets2(shape, st1, st2 []int, first, m int, f func(j, o1, o2 int)) {
	r := len(shape)
	idx := make([]int, r)
	rem := first
	o1, o2 := 0, 0
	for d := r - 1; d >= 0; d-- {
		idx[d] = rem % shape[d]
		rem /= shape[d]
		o1 += idx[d] * st1[d]
		o2 += idx[d] * st2[d]
	}
	for j := 0; j < m; j++ {
		f(j, o1, o2)
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			o1 += st1[d]
			o2 += st2[d]
			if idx[d] < shape[d] {
				break
			}
			o1 -= idx[d] * st1[d]
			o2 -= idx[d] * st2[d]
			idx[d] = 0
		}
	}
}

// gatherFlat is the flat gather of 4- and 8-byte elements, on typed slices.
func gatherFlat(l *cpu.Launch, g *Gather, out, src []byte, sbase int, idx []byte, ibase, n int, L int64, ast int, ew errWord) {
	var i32 []int32
	var i64 []int64
	if g.Index == dtype.Int32 {
		i32 = cpu.Slice[int32](idx[ibase : ibase+4*n])
	} else {
		i64 = cpu.Slice[int64](idx[ibase : ibase+8*n])
	}
	l.Parallel(n, 4*chunk, func(a, b int) {
		if g.Size == 4 {
			o := cpu.Slice[uint32](out)
			sv := cpu.Slice[uint32](src)
			base := sbase / 4
			for i := a; i < b; i++ {
				var raw int64
				if i32 != nil {
					raw = int64(i32[i])
				} else {
					raw = i64[i]
				}
				k, bad := g.Mode.NormIndex(raw, L)
				if bad {
					ew.record(raw)
				}
				o[i] = sv[base+int(k)*ast]
			}
			return
		}
		o := cpu.Slice[uint64](out)
		sv := cpu.Slice[uint64](src)
		base := sbase / 8
		for i := a; i < b; i++ {
			var raw int64
			if i32 != nil {
				raw = int64(i32[i])
			} else {
				raw = i64[i]
			}
			k, bad := g.Mode.NormIndex(raw, L)
			if bad {
				ew.record(raw)
			}
			o[i] = sv[base+int(k)*ast]
		}
	})
}
