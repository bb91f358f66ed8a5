package kernel

import (
	"encoding/binary"
	"fmt"
	"math"
	"strconv"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// Scatter combines values into a destination at indexed positions: for each update i
// of the iteration shape, dst[do(i) + k(i)*ast] = op(dst[...], v(i)) with k(i) =
// norm(idx[io(i)]) and v(i) = vals[vo(i)] converted to the destination's accumulator
// type (or 1 with Ones): Put and PutAlongAxis (ScatterStore), AddAt, MaximumAt and
// MinimumAt, Bincount. In the modes that record (Raise, Check), an update whose index
// is out of range is recorded in the error word and skipped: nothing is written for it
// (a gather reads the nearest end of the axis instead, but a write there would change
// an element the caller didn't name).
//
// On the GPU, updates to the same element from different threads combine through
// atomics, so the order of a float sum (and which of duplicate Put values wins) varies
// from run to run. Before its atomic, each warp combines the lanes with the same target
// (match.any, then a tree of shuffles over each group: Westphal, "Voting and Shuffling
// to Optimize Atomic Operations", NVIDIA 2015), so that few distinct targets don't
// serialize on one address: in every round, or with Detect only where a vote finds
// neighbouring lanes with one target; with Bins, each block also accumulates into
// copies (Copies) of the whole destination in shared memory and adds them to the
// global one at the end. Types
// narrower than 32 bits combine through a 32-bit compare-and-swap loop on the word
// holding the element; float maximum and minimum through integer atomics on the bits
// (non-negative values order as signed integers, negative ones reversed as unsigned),
// NaN made to win.
//
// Kernel parameters, in order:
//
//	dst    u64  address of the destination's element 0
//	vals   u64  address of the values' element 0 (Val; unused with Ones)
//	idx    u64  address of the index array's element 0 (Index)
//	err    u64  address of the error word (Raise and Check; 0 otherwise)
//	n      u64  updates
//	l      u64  length of the indexed axis (>= 1)
//	ast    s64  stride of the indexed axis in the destination
//	shape  u64  Rank dimensions of the iteration shape
//	dst    s64  Rank destination strides over them
//	val    s64  Rank value strides over them
//	ist    s64  Rank index strides over them
//
// Rank 0 is the flat form: io(i) = vo(i) = i and do(i) = 0. Vector (flat form) says the
// index and value addresses are 16-byte aligned. With Bins > 0 every destination offset
// is in [0, Bins) and the destination is contiguous there. Without Index64 every
// offset and n are below 2^31. Any grid of GatherBlock threads.
type Scatter struct {
	Dst     dtype.DType
	Val     dtype.DType // ScatterStore: Dst; Invalid with Ones
	Index   dtype.DType
	Mode    IndexMode
	Op      Op // OpSum, OpMax, OpMin; ScatterStore (0): no operator
	Rank    int
	Index64 bool
	Vector  bool
	Ones    bool
	Bins    int
	// NoWarp leaves out the warp aggregation (the simulator lacks match.sync).
	NoWarp bool
	// Copies (with Bins, 0 otherwise) is the number of copies of the shared bins, a
	// power of two up to GatherBlock: thread t combines into copy t%Copies, so that the
	// lanes of a warp never contend for one shared word when Copies >= 32, and with
	// Copies == GatherBlock each thread owns its copy and combines without atomics; the
	// block combines the copies at the end (a butterfly over each bin's copies in a
	// warp, then one global atomic per bin and block). No warp aggregation then
	// (Copies < 32: as Detect). 0: one copy, after the warp aggregation (the first
	// design). ScatterCopies gives the most that fit.
	Copies int
	// Detect aggregates within a warp (match.any and the shuffle tree) only in rounds
	// where a vote finds a lane whose target equals the next lane's or a thread's two
	// consecutive targets equal (sorted or few distinct targets); the other rounds go
	// straight to the atomics (red.global: mostly distinct targets gain nothing from
	// aggregating). Ignored with NoWarp.
	Detect bool
	// Fixed selects a pass of the deterministic float sum (see FixedFinish): FixedExp
	// (Op OpMax, Dst Int32: the scratch's exponents) or FixedAcc (Op OpSum,
	// Dst Int64: its fixed-point words); 0 for an ordinary scatter.
	Fixed int
	// Variant selects the kernel: 0 or 1, the first (GatherItems updates per thread,
	// a grid-stride loop); 2 (ScatterStore in the flat Vector form only: Put),
	// GatherItems2 updates per thread, one chunk per thread over Geometry's grid:
	// indices and values in 16-byte loads, the range check of Raise and Check two
	// compares per element and one warp vote, then the random stores; a warp with an
	// out-of-range index goes update by update, recording it and skipping that update
	// as the first kernel does (scatter2_ptx.go).
	Variant int
}

// The passes of the deterministic float sum.
const (
	FixedExp = 1
	FixedAcc = 2
)

// ScatterMaxBins is the largest Bins: 32 KiB of shared memory.
func ScatterMaxBins(t dtype.DType) int { return 32 << 10 / accType(t).Bits() * 8 }

// ScatterCopies returns the most copies (Scatter.Copies) of bins accumulators of
// type t's that fit in 32 KiB of shared memory (a power of two up to GatherBlock; 1
// when bins is at most ScatterMaxBins(t)), 0 for more bins.
func ScatterCopies(t dtype.DType, bins int) int {
	if bins < 1 || bins > ScatterMaxBins(t) {
		return 0
	}
	c := 1
	for c < GatherBlock && 2*c*bins <= ScatterMaxBins(t) {
		c *= 2
	}
	return c
}

// Key identifies the kernel.
func (s *Scatter) Key() string { return string(s.AppendKey(nil)) }

// AppendKey appends Key to b, for a cache lookup that allocates nothing.
func (s *Scatter) AppendKey(b []byte) []byte {
	b = append(append(b, "scatter|"...), s.Op.String()...)
	b = append(append(b, '|'), s.Dst.String()...)
	b = append(append(b, "<-"...), s.Val.String()...)
	b = append(append(b, '|'), s.Index.String()...)
	b = append(append(b, '|'), s.Mode.String()...)
	b = strconv.AppendInt(append(b, "|r"...), int64(s.Rank), 10)
	b = strconv.AppendBool(append(b, "|i64="...), s.Index64)
	b = strconv.AppendBool(append(b, "|v"...), s.Vector)
	b = strconv.AppendBool(append(b, "|ones"...), s.Ones)
	b = strconv.AppendInt(append(b, "|bins"...), int64(s.Bins), 10)
	b = strconv.AppendInt(append(b, "|c"...), int64(s.Copies), 10)
	b = strconv.AppendBool(append(b, "|d"...), s.Detect)
	b = strconv.AppendBool(append(b, "|nw"...), s.NoWarp)
	b = strconv.AppendInt(append(b, "|fx"...), int64(s.Fixed), 10)
	if s.Variant == 2 {
		b = append(b, "|g2"...)
	}
	return b
}

// Validate checks the spec.
func (s *Scatter) Validate() error {
	if !s.Dst.Valid() {
		return fmt.Errorf("kernel: scatter into %v: %w", s.Dst, backend.ErrNotSupported)
	}
	if err := gatherIndexValid(s.Index); err != nil {
		return err
	}
	switch {
	case s.Op != ScatterStore && s.Op != OpSum && s.Op != OpMax && s.Op != OpMin:
		return fmt.Errorf("kernel: scatter op %v", s.Op)
	case s.Mode > IndexCheck:
		return fmt.Errorf("kernel: scatter mode %v", s.Mode)
	case s.Rank < 0 || s.Rank > 8:
		return fmt.Errorf("kernel: scatter rank %d", s.Rank)
	case s.Vector && s.Rank != 0:
		return fmt.Errorf("kernel: scatter vector accesses in a rank-%d scatter", s.Rank)
	case s.Ones && s.Val != dtype.Invalid:
		return fmt.Errorf("kernel: scatter of ones with values of %v", s.Val)
	case !s.Ones && !s.Val.Valid():
		return fmt.Errorf("kernel: scatter of %v values: %w", s.Val, backend.ErrNotSupported)
	case s.Op == ScatterStore && (s.Val != s.Dst || s.Bins > 0):
		return fmt.Errorf("kernel: store of %v values into %v (bins %d)", s.Val, s.Dst, s.Bins)
	case s.Bins < 0 || s.Bins > ScatterMaxBins(s.Dst):
		return fmt.Errorf("kernel: scatter into %d shared bins", s.Bins)
	case s.Copies < 0 || s.Copies > GatherBlock || s.Copies&(s.Copies-1) != 0 || (s.Copies > 0 && s.Bins == 0) ||
		s.Copies*s.Bins > ScatterMaxBins(s.Dst):
		return fmt.Errorf("kernel: %d copies of %d shared bins", s.Copies, s.Bins)
	case s.Fixed == FixedExp && (s.Op != OpMax || s.Dst != dtype.Int32 || !s.Val.IsFloat()),
		s.Fixed == FixedAcc && (s.Op != OpSum || s.Dst != dtype.Int64 || !s.Val.IsFloat() || s.Bins > 0),
		s.Fixed < 0 || s.Fixed > FixedAcc:
		return fmt.Errorf("kernel: fixed-point pass %d of %v %v<-%v (bins %d)", s.Fixed, s.Op, s.Dst, s.Val, s.Bins)
	case s.Variant < 0 || s.Variant > 2:
		return fmt.Errorf("kernel: scatter variant %d", s.Variant)
	case s.Variant == 2 && (s.Op != ScatterStore || s.Rank != 0 || !s.Vector):
		return fmt.Errorf("kernel: scatter variant 2 of %v, rank %d, vector %v: flat vector stores only", s.Op, s.Rank, s.Vector)
	}
	return nil
}

// FixedShift returns the scale, as a power of two relative to a target's largest
// exponent, of the deterministic sum of n updates (see FixedFinish).
func FixedShift(n int) int { return 62 - bitLen(uint64(n)) + 32 - 1 }

func bitLen(x uint64) int {
	n := 0
	for x != 0 {
		n++
		x >>= 1
	}
	return n
}

// fixedParts returns an update's contribution to the deterministic sum: for a finite
// v, the words hi and lo of round(v * 2^(shift - (e-1023))), where e is the target's
// largest biased exponent (hi: the part above 2^32, floored; lo: the rest, in [0,
// 2^32]); for an infinite or NaN v, its flag (1: +Inf, 2: -Inf, 3: NaN).
func fixedParts(v float64, e int32, shift int) (hi, lo int64, flag uint32) {
	switch {
	case math.IsNaN(v):
		return 0, 0, 3
	case math.IsInf(v, 1):
		return 0, 0, 1
	case math.IsInf(v, -1):
		return 0, 0, 2
	}
	if e >= 2047 {
		return 0, 0, 0
	}
	sc := shift - (int(e) - 1023)
	a := min(sc, 1000)
	w := v * math.Ldexp(1, a) * math.Ldexp(1, sc-a)
	h := math.Floor(w * 0x1p-32)
	l := w - h*0x1p32
	return int64(h), int64(math.RoundToEven(l)), 0
}

// fixedExp returns the biased exponent of v, 2047 for Inf and NaN.
func fixedExp(v float64) int32 { return int32(math.Float64bits(v) >> 52 & 0x7ff) }

// Geometry returns the launch for n updates: with Bins, at most four blocks per
// multiprocessor (each adds its bins to the destination at the end); Variant 2, a
// thread per GatherItems2 updates (n below 2^42).
func (s *Scatter) Geometry(n, multiprocessors int) (grid, block int) {
	if s.Variant == 2 {
		tile := GatherBlock * GatherItems2
		return max(1, min((n+tile-1)/tile, math.MaxInt32)), GatherBlock
	}
	tile := GatherBlock * GatherItems
	limit := 32 * max(1, multiprocessors)
	if s.Bins > 0 {
		limit = 4 * max(1, multiprocessors)
	}
	return max(1, min((n+tile-1)/tile, limit)), GatherBlock
}

// offsetsN calls f(j, offs) for the m elements from linear index first, offs holding
// element first+j's offsets for each stride set (f must not keep offs).
func offsetsN(shape []int, sts [][]int, first, m int, f func(j int, offs []int)) {
	r := len(shape)
	idx := make([]int, r)
	offs := make([]int, len(sts))
	rem := first
	for d := r - 1; d >= 0; d-- {
		idx[d] = rem % shape[d]
		rem /= shape[d]
		for k, st := range sts {
			offs[k] += idx[d] * st[d]
		}
	}
	for j := 0; j < m; j++ {
		f(j, offs)
		for d := r - 1; d >= 0; d-- {
			idx[d]++
			for k, st := range sts {
				offs[k] += st[d]
			}
			if idx[d] < shape[d] {
				break
			}
			for k, st := range sts {
				offs[k] -= idx[d] * st[d]
			}
			idx[d] = 0
		}
	}
}

// CPU returns the kernel for the CPU backend. Updates apply in index order (NumPy's
// unbuffered order: the last of duplicate Put values wins, sums accumulate in the
// destination's precision one by one); each worker owns a range of destination
// elements and applies the updates that fall in it.
func (s *Scatter) CPU() (func(*cpu.Launch) error, error) {
	if err := s.Validate(); err != nil {
		return nil, err
	}
	return func(l *cpu.Launch) error {
		lay := readLayout(l, 4, s.Rank, 3)
		n := lay.n
		if n == 0 {
			return nil
		}
		if lay.l < 1 {
			return launchErr("scatter into an axis of length %d", lay.l)
		}
		shape, sts := lay.shape, lay.st
		if s.Rank == 0 {
			shape, sts = []int{n}, [][]int{{0}, {1}, {1}}
		}
		if prodInts(shape) != n {
			return launchErr("scatter of %d updates over shape %v", n, shape)
		}
		dstSt, valSt, idxSt := sts[0], sts[1], sts[2]
		if !s.Index64 && (NeedIndex64(n, shape, dstSt, valSt, idxSt) || extentNeeds64(lay.l, lay.ast)) {
			return launchErr("32-bit offsets for shape %v, strides %v, axis %d x %d", shape, sts, lay.l, lay.ast)
		}
		dsz := s.Dst.Size()
		dst, dbase := l.MemAt(0)
		dlo, dhi := operandExtent(shape, dstSt, lay.l, lay.ast, true)
		if err := checkExtent("scatter destination", dst, dbase, dlo, dhi, dsz); err != nil {
			return err
		}
		if s.Bins > 0 && (dlo < 0 || dhi >= s.Bins) {
			return launchErr("destination offsets [%d, %d] outside %d bins", dlo, dhi, s.Bins)
		}
		var vals []byte
		vbase := 0
		if !s.Ones {
			vals, vbase = l.MemAt(1)
			lo, hi := extent(shape, valSt)
			if err := checkExtent("scatter values", vals, vbase, lo, hi, s.Val.Size()); err != nil {
				return err
			}
		}
		idx, ibase := l.MemAt(2)
		lo, hi := extent(shape, idxSt)
		if err := checkExtent("scatter index", idx, ibase, lo, hi, s.Index.Size()); err != nil {
			return err
		}
		ew := errWord{l.Mem(3)}
		if s.Mode.Records() && len(ew.b) < 8 {
			return launchErr("scatter in %v mode without an error word", s.Mode)
		}
		L, ast := int64(lay.l), lay.ast
		one := cpuNum{i: 1, f: 1}
		var targets, shift int
		if s.Fixed == FixedAcc {
			p := 4 + 3 + s.Rank + 3*s.Rank
			targets, shift = int(l.Uint64(p)), int(l.Uint64(p+1))
			if dlo < 0 || dhi >= targets || len(dst)-dbase < 24*targets {
				return launchErr("fixed-point offsets [%d, %d] for %d targets", dlo, dhi, targets)
			}
		}
		workers := max(1, min(l.Workers(), (dhi-dlo+1+1023)/1024, n/4096+1))
		span := (dhi - dlo + workers) / workers
		l.Parallel(workers, 1, func(w0, w1 int) {
			for w := w0; w < w1; w++ {
				tlo, thi := dlo+w*span, dlo+(w+1)*span
				offsetsN(shape, sts, 0, n, func(j int, offs []int) {
					raw := readIndex(idx, ibase, s.Index, offs[2])
					k, bad := s.Mode.NormIndex(raw, L)
					if bad {
						// Recorded and skipped, as on the GPU.
						if w == 0 {
							ew.record(raw)
						}
						return
					}
					off := offs[0] + int(k)*ast
					if off < tlo || off >= thi {
						return
					}
					p := dbase + off*dsz
					d := dst[p : p+dsz]
					if s.Op == ScatterStore {
						q := vbase + offs[1]*dsz
						copy(d, vals[q:q+dsz])
						return
					}
					v := one
					if !s.Ones {
						q := vbase + offs[1]*s.Val.Size()
						v = loadNum(vals[q:], s.Val)
						switch s.Fixed {
						case FixedExp:
							v = cpuNum{i: int64(fixedExp(v.f))}
						case FixedAcc:
							base := dst[dbase:]
							e := int32(binary.LittleEndian.Uint32(base[4*off:]))
							hi, lo, flag := fixedParts(v.f, e, shift)
							fp := base[4*targets+4*off:]
							binary.LittleEndian.PutUint32(fp, binary.LittleEndian.Uint32(fp)|flag)
							hp := base[8*targets+8*off:]
							binary.LittleEndian.PutUint64(hp, binary.LittleEndian.Uint64(hp)+uint64(hi))
							lp := base[16*targets+8*off:]
							binary.LittleEndian.PutUint64(lp, binary.LittleEndian.Uint64(lp)+uint64(lo))
							return
						default:
							v = convertNum(v, s.Val, s.Dst)
						}
					}
					storeNum(d, s.Dst, cpuCombine(s.Op, s.Dst, loadNum(d, s.Dst), v))
				})
			}
		})
		return nil
	}, nil
}
