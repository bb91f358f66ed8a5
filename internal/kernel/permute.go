package kernel

import (
	"fmt"
	"math"
	"strconv"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
)

// Permute copies a strided view into a contiguous array of the same shape when the
// output's innermost dimension A (Rank-1) is not the input's contiguous one (a
// transpose): tiles of TB x TA elements over dimension B (the one the input is read
// along, ideally of stride 1) and A go through shared memory, read with consecutive
// threads along B and written with consecutive threads along A, so that both global
// accesses are coalesced; the shared tile has one element of padding per row so that
// the transposed reads hit distinct banks (NVIDIA's "An Efficient Matrix Transpose in
// CUDA C/C++", Harris 2013). The other dimensions form the batch: one block per
// (batch, B tile, A tile). Views whose innermost dimension stays innermost are copied
// without shared memory by the elementwise copy.
//
// Kernel parameters, in order:
//
//	in       u64  address of the input's element 0 (any strides)
//	out      u64  address of the contiguous output
//	shape_d  u64  Rank dimensions of the (collapsed) output shape, outermost first
//	istr_d   s64  Rank input strides in elements, for the output's dimensions
//
// The grid has exactly Blocks(shape) blocks of PermuteBlock threads, with TA*(TB+1)*Size
// bytes of static shared memory (TA*TB*Size for V3). Without Index64 every offset is
// below 2^31.
type Permute struct {
	Size    int // element size in bytes: 1, 2, 4 or 8
	Rank    int // >= 2
	B       int // the dimension read along, < Rank-1
	TB, TA  int // tile sizes along B and A (powers of two, TB*TA >= PermuteBlock)
	Index64 bool
	// V2 selects the second kernel (ptxV2 in permute_ptx.go): every load of a
	// thread issued before any use, Vec elements per access, 32-bit block
	// decomposition. Vec (1, 2 or 4; V2 or V3 only; 0 reads as 1) is the number of
	// consecutive elements a thread moves per global access: the host sets it above 1
	// only when the input is read along B with stride 1, shape[A] and shape[B] and
	// every other input stride are multiples of Vec, and both element-0 addresses
	// are aligned to Vec*Size bytes.
	V2 bool
	// V3 selects the third kernel (ptxV3 in permute_v3.go), for tiles with a short
	// side: the V2 kernel's loads and stores, through an unpadded shared tile laid out
	// along its long side with an XOR swizzle, so that the vector side's shared
	// accesses are vectors too and neither side has bank conflicts. Its tile has one
	// side of at most 32 and the other of at least 32, at most 16*PermuteBlock
	// elements, and TB/Vec, TA/Vec up to PermuteBlock (the static shared memory is
	// TA*TB*Size bytes).
	V3  bool
	Vec int
}

// PermuteBlock is the number of threads of a Permute block.
const PermuteBlock = 256

// Key identifies the kernel.
func (p *Permute) Key() string { return string(p.AppendKey(nil)) }

// AppendKey appends Key to b, for a cache lookup that allocates nothing.
func (p *Permute) AppendKey(b []byte) []byte {
	b = strconv.AppendInt(append(b, "permute|s"...), int64(p.Size), 10)
	b = strconv.AppendInt(append(b, "|r"...), int64(p.Rank), 10)
	b = strconv.AppendInt(append(b, "|b"...), int64(p.B), 10)
	b = strconv.AppendInt(append(b, '|'), int64(p.TB), 10)
	b = strconv.AppendInt(append(b, 'x'), int64(p.TA), 10)
	b = strconv.AppendBool(append(b, "|i64="...), p.Index64)
	switch {
	case p.V2:
		b = strconv.AppendInt(append(b, "|v2|vec"...), int64(p.vec()), 10)
	case p.V3:
		b = strconv.AppendInt(append(b, "|v3|vec"...), int64(p.vec()), 10)
	}
	return b
}

// vec returns the elements per access (1 for the first kernel).
func (p *Permute) vec() int {
	if !p.V2 && !p.V3 || p.Vec == 0 {
		return 1
	}
	return p.Vec
}

// Validate checks the spec.
func (p *Permute) Validate() error {
	switch p.Size {
	case 1, 2, 4, 8:
	default:
		return fmt.Errorf("kernel: permute of %d-byte elements: %w", p.Size, backend.ErrNotSupported)
	}
	if p.Rank < 2 || p.B < 0 || p.B >= p.Rank-1 {
		return fmt.Errorf("kernel: permute rank %d, dimension %d", p.Rank, p.B)
	}
	pow2 := func(v int) bool { return v > 0 && v&(v-1) == 0 }
	maxT := PermuteBlock
	if p.V3 {
		maxT = PermuteBlock * p.vec()
	}
	if !pow2(p.TB) || !pow2(p.TA) || p.TB*p.TA < PermuteBlock || p.TB > maxT || p.TA > maxT {
		return fmt.Errorf("kernel: permute tile %dx%d", p.TB, p.TA)
	}
	if p.V2 && p.V3 {
		return fmt.Errorf("kernel: permute with both V2 and V3")
	}
	if p.Vec != 0 && !p.V2 && !p.V3 {
		return fmt.Errorf("kernel: permute vector width %d without V2 or V3", p.Vec)
	}
	if p.V3 {
		tr, tc := p.v3Sides()
		if tr > 32 || tc < 32 || p.TA*p.TB > 16*PermuteBlock {
			return fmt.Errorf("kernel: permute V3 tile %dx%d (one side at most 32, the other at least 32, at most %d elements)", p.TB, p.TA, 16*PermuteBlock)
		}
	}
	switch v := p.vec(); {
	case v != 1 && v != 2 && v != 4, v*p.Size > 16, p.TB*p.TA < PermuteBlock*v, p.TB < v, p.TA < v:
		return fmt.Errorf("kernel: permute vector width %d for %d-byte elements and tile %dx%d", p.Vec, p.Size, p.TB, p.TA)
	}
	return nil
}

// Blocks returns the grid size for the output shape: batch * tiles along B * tiles
// along A.
func (p *Permute) Blocks(shape []int) int {
	n := (shape[p.B] + p.TB - 1) / p.TB * ((shape[p.Rank-1] + p.TA - 1) / p.TA)
	for d, v := range shape {
		if d != p.B && d != p.Rank-1 {
			n *= v
		}
	}
	return n
}

// VecOK reports whether the shape and input strides allow the spec's vector width
// (the element-0 addresses are the host's to check): the input read along B with
// stride 1, and shape[A], shape[B] and the other input strides multiples of it.
func (p *Permute) VecOK(shape, istr []int) bool {
	v := p.vec()
	if v == 1 {
		return true
	}
	if istr[p.B] != 1 || shape[p.B]%v != 0 || shape[p.Rank-1]%v != 0 {
		return false
	}
	for d, s := range istr {
		if d != p.B && s%v != 0 {
			return false
		}
	}
	return true
}

// PermuteNeedIndex64 reports whether the copy of n elements with these input strides
// needs 64-bit offsets.
func PermuteNeedIndex64(shape, istr []int) bool {
	n := 1
	for _, v := range shape {
		n *= v
	}
	return NeedIndex64(n, shape, istr) || n >= math.MaxInt32
}

// CPU returns the kernel for the CPU backend: a parallel gather in output order.
func (p *Permute) CPU() (func(*cpu.Launch) error, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	return func(l *cpu.Launch) error {
		r := p.Rank
		shape := make([]int, r)
		st := make([]int, r)
		n := 1
		for d := range shape {
			shape[d] = int(l.Uint64(2 + d))
			st[d] = int(l.Int64(2 + r + d))
			n *= shape[d]
		}
		if n == 0 {
			return nil
		}
		if int(l.Grid[0]) != p.Blocks(shape) || l.Block[0] != PermuteBlock {
			return launchErr("grid %d, block %d for %d tiles", l.Grid[0], l.Block[0], p.Blocks(shape))
		}
		if !p.Index64 && PermuteNeedIndex64(shape, st) {
			return launchErr("32-bit offsets for shape %v, strides %v", shape, st)
		}
		if !p.VecOK(shape, st) {
			return launchErr("%d-element accesses for shape %v, strides %v", p.vec(), shape, st)
		}
		full, base := l.MemAt(0)
		lo, hi := extent(shape, st)
		sz := p.Size
		if base+lo*sz < 0 || base+(hi+1)*sz > len(full) {
			return fmt.Errorf("kernel: illegal address: permute input [%d, %d] outside its allocation: %w", lo, hi, backend.ErrLaunchFailed)
		}
		out := l.Mem(1)
		if len(out) < n*sz {
			return fmt.Errorf("kernel: illegal address: permute output past its allocation: %w", backend.ErrLaunchFailed)
		}
		l.Parallel(n, 4*chunk, func(a, b int) {
			for c := a; c < b; c += chunk {
				m := min(chunk, b-c)
				gather(out[c*sz:(c+m)*sz], full, base, sz, shape, st, c)
			}
		})
		return nil
	}, nil
}
