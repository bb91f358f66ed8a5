package kernel

import (
	"fmt"
	"math"
	"sync/atomic"

	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/expr"
)

// Quantiles of long rows by selection instead of a sort: the radix select
// (SelectHist) finds the ordered keys at the positions that QuantileGather would read
// of the sorted row, QuantileFlags counts each float row's NaNs and zeros of each
// sign, and QuantileSelect decodes the keys and applies QuantileGather's arithmetic.
// The results are the sort's, bit for bit.

// QuantileFlags counts, per row, the NaNs, the -0 and the +0 (by their raw bits) of
// rows of float keys: what the selected ordered keys don't tell (every NaN and both
// zeros are one key each).
//
// Kernel parameters, in order:
//
//	keys    u64  [rows][n] of Type, contiguous
//	flags   u64  u64 [rows][3]: NaNs, -0s, +0s; zero at the launch
//	rows    u64
//	n       u64  (> 0)
//
// Any grid of SortBlock-thread blocks: a grid-stride loop over all rows' keys, each
// thread counting in registers while its keys stay in one row and adding its nonzero
// counts to the row's (a global atomic) when the row changes and at the end.
type QuantileFlags struct {
	Type dtype.DType
}

// Key identifies the kernel.
func (q *QuantileFlags) Key() string { return "quantile.flags|" + q.Type.String() }

// Validate checks the spec.
func (q *QuantileFlags) Validate() error {
	if !q.Type.IsFloat() {
		return fmt.Errorf("kernel: quantile flags of %v: %w", q.Type, backend.ErrNotSupported)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (q *QuantileFlags) CPU() (func(*cpu.Launch) error, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	ks := q.Type.Size()
	sign := uint64(1) << (8*ks - 1)
	inf := floatInf(q.Type)
	return func(l *cpu.Launch) error {
		rows, n := int(l.Uint64(2)), int(l.Uint64(3))
		if n <= 0 || l.Block[0] != SortBlock {
			return launchErr("quantile flags: rows of %d, block %d", n, l.Block[0])
		}
		keys, err := sortMem(l, 0, rows*n*ks)
		if err != nil {
			return err
		}
		fb, err := sortMem(l, 1, rows*24)
		if err != nil {
			return err
		}
		if !checkZero(fb) {
			return launchErr("quantile flags not zeroed")
		}
		flags := cpu.Slice[uint64](fb)
		parts := (n + cpuSelectPart - 1) / cpuSelectPart
		l.Parallel(rows*parts, 1, func(lo, hi int) {
			for b := lo; b < hi; b++ {
				r, p := b/parts, b%parts
				i0 := r*n + p*cpuSelectPart
				i1 := min(i0+cpuSelectPart, (r+1)*n)
				var c [3]uint64
				switch ks {
				case 2:
					quantileFlagsKeys(cpu.Slice[uint16](keys)[i0:i1], sign, inf, &c)
				case 4:
					quantileFlagsKeys(cpu.Slice[uint32](keys)[i0:i1], sign, inf, &c)
				default:
					quantileFlagsKeys(cpu.Slice[uint64](keys)[i0:i1], sign, inf, &c)
				}
				for j, x := range c {
					atomic.AddUint64(&flags[3*r+j], x)
				}
			}
		})
		return nil
	}, nil
}

// quantileFlagsKeys adds the NaNs, -0s and +0s of keys (float bits; sign the sign
// bit, inf +Inf's bits) to c.
func quantileFlagsKeys[K uint16 | uint32 | uint64](keys []K, sign, inf uint64, c *[3]uint64) {
	for _, k := range keys {
		raw := uint64(k)
		switch abs := raw &^ sign; {
		case abs > inf:
			c[0]++
		case abs == 0 && raw != 0:
			c[1]++
		case abs == 0:
			c[2]++
		}
	}
}

// QuantileSelect computes each row's median or quantile from the radix select's
// results, as QuantileGather does from the sorted row: the same positions (lo and hi
// of quantilePos; the middle ones of a median), the same arithmetic (quantileLerp,
// quantileMid) in float64, the same NaN rule (a row with a NaN gives the canonical
// NaN, quantileNaN) and one conversion to Out.
//
// Each position's element comes from its select's state (SelectHist's: the ordered
// key T of the k-th smallest key, k = position+1, and its tie rank r, 1-based, among
// the keys equal to T in index order): SortKey.Unordered(T), but for the zero key of
// a float row, which stands for -0 and +0 alike: the sorted row's element there is the
// r-th zero of the row in index order (the sort is stable), whose sign the flags tell
// when the row's zeros all have one sign. When they are mixed, the block scans its row
// in index order for the r-th zero (a block-wide count of 256 keys a step: slow, one
// read of the row up to that zero, but rare: a float row with zeros of both signs
// whose selected position lands on a zero).
//
// Kernel parameters, in order:
//
//	keys    u64  [rows][n] of In, contiguous (read only by the scan for a zero)
//	stateA  u64  u64 [rows][2]: the select of position lo (a median's n/2-1 when n
//	             is even, else n/2)
//	stateB  u64  u64 [rows][2]: the select of position hi (n/2); may be stateA
//	flags   u64  QuantileFlags' counts (float In; unused otherwise)
//	out     u64  [rows] of Out
//	qs      u64  float64 [1]: q (unused with Median)
//	rows    u64
//	n       u64  (> 0)
//
// The grid has rows blocks of SortBlock threads.
type QuantileSelect struct {
	In, Out dtype.DType
	Median  bool
}

// Key identifies the kernel.
func (q *QuantileSelect) Key() string {
	return fmt.Sprintf("quantile.select|%v|%v|m%v", q.In, q.Out, q.Median)
}

// Validate checks the spec.
func (q *QuantileSelect) Validate() error {
	if !q.In.Valid() || !q.Out.IsFloat() {
		return fmt.Errorf("kernel: quantile of %v into %v: %w", q.In, q.Out, backend.ErrNotSupported)
	}
	return nil
}

// QuantilePositions returns the 0-based positions of the ascending (stable) order of
// n elements that the median (median) or quantile q reads: lo and hi, equal when one
// element decides (QuantileGather's positions).
func QuantilePositions(median bool, q float64, n int) (lo, hi int) {
	if median {
		return (n - 1) / 2, n / 2
	}
	lo, hi, _ = quantilePos(q, n)
	return lo, hi
}

// CPU returns the kernel for the CPU backend.
func (q *QuantileSelect) CPU() (func(*cpu.Launch) error, error) {
	if err := q.Validate(); err != nil {
		return nil, err
	}
	key := SortKey{Type: q.In}
	is, os := q.In.Size(), q.Out.Size()
	float := q.In.IsFloat()
	zero := uint64(1) << (8*is - 1) // the zero's ordered key (and the sign bit)
	return func(l *cpu.Launch) error {
		rows, n := int(l.Uint64(6)), int(l.Uint64(7))
		if n <= 0 || int(l.Grid[0]) != rows || l.Block[0] != SortBlock {
			return launchErr("quantile select: %d rows of %d, grid %d", rows, n, l.Grid[0])
		}
		keys, err := sortMem(l, 0, rows*n*is)
		if err != nil {
			return err
		}
		var st [2][]uint64
		for j := range st {
			b, err := sortMem(l, 1+j, rows*16)
			if err != nil {
				return err
			}
			st[j] = cpu.Slice[uint64](b)
		}
		var flags []uint64
		if float {
			fb, err := sortMem(l, 3, rows*24)
			if err != nil {
				return err
			}
			flags = cpu.Slice[uint64](fb)
		}
		out, err := sortMem(l, 4, rows*os)
		if err != nil {
			return err
		}
		var qv float64
		if !q.Median {
			qb, err := sortMem(l, 5, 8)
			if err != nil {
				return err
			}
			qv = cpu.Slice[float64](qb)[0]
		}
		for j := range st {
			for r := 0; r < rows; r++ {
				if rk := st[j][2*r+1]; rk == 0 || rk > uint64(n) {
					return fmt.Errorf("kernel: illegal address: quantile select: tie rank %d of %d: %w", rk, n, backend.ErrLaunchFailed)
				}
			}
		}
		l.Parallel(rows, 1, func(lo, hi int) {
			for r := lo; r < hi; r++ {
				var v [2]float64
				for j := range v {
					T, rank := st[j][2*r], st[j][2*r+1]
					raw := key.Unordered(T)
					if float && T == zero {
						switch neg, pos := flags[3*r+1], flags[3*r+2]; {
						case pos == 0:
							raw = zero // all -0
						case neg != 0:
							// Mixed: the rank-th zero of the row in index order.
							for i, c := r*n, uint64(0); i < (r+1)*n; i++ {
								if x := loadRaw(keys, is, i); x&^zero == 0 {
									if c++; c == rank {
										raw = x
										break
									}
								}
							}
						}
					}
					v[j] = expr.ScalarFromBits(q.In, raw).Float64()
				}
				var x float64
				switch {
				case float && flags[3*r] != 0:
					x = math.NaN()
				case q.Median && n%2 == 1:
					x = v[0]
				case q.Median:
					x = quantileMid(v[0], v[1])
				default:
					_, _, t := quantilePos(qv, n)
					x = quantileLerp(v[0], v[1], t)
				}
				bits := expr.ScalarOf(x).Convert(q.Out).Bits()
				if math.IsNaN(x) {
					bits = quantileNaN(q.Out)
				}
				storeRaw(out, os, r, bits)
			}
		})
		return nil
	}, nil
}
