package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
)

// Unique of integers over a narrow range without a sort (Tuning.UniqueDenseMax in the
// root package): the keys' range in SortKey order (UniqueRange), a bitmap of the
// values present over that range (UniqueMark: each block marks its keys in a bitmap in
// shared memory, then ORs its nonzero words into the global one), and the bitmap
// expanded into run flags and candidate values (UniqueExpand) for the compaction of
// Nonzero/Extract. A set bit j stands for the value whose ordered key is lo+j, so the
// compacted values come out sorted and each once: the result of the sort path for
// integer keys, in two reads of the keys instead of a radix sort of them. This is the
// dense-range special case of a counting sort (Knuth, TAOCP vol. 3, 5.2, algorithm D),
// keeping one bit per value; CUB's DeviceRadixSort takes a begin/end bit range for the
// same reason (keys known to vary in few bits).

// UniqueDenseBlock is the number of threads of a UniqueMark block.
const UniqueDenseBlock = 1024

// UniqueDenseUnroll is the keys a thread of UniqueRange and UniqueMark loads together
// (their loads in flight at once), a grid's width apart.
const UniqueDenseUnroll = 4

// UniqueRange folds the minimum and maximum ordered key (SortKey.Ordered, zero-extended
// to 64 bits) of x into out: out[0] = min(out[0], min key), out[1] = min(out[1], ^max
// key), both u64, so that one fill of all-ones bytes starts both. Integer keys only.
//
// Kernel parameters: x u64 (Type), n u64, out u64 (2 u64). Any grid of blocks of a
// multiple of 32 threads.
type UniqueRange struct {
	Type dtype.DType
}

// Key identifies the kernel.
func (u *UniqueRange) Key() string { return "unique.range|" + u.Type.String() }

// Validate checks the spec.
func (u *UniqueRange) Validate() error { return uniqueDenseType(u.Type) }

func uniqueDenseType(t dtype.DType) error {
	if !t.IsInteger() {
		return fmt.Errorf("kernel: dense unique of %v elements (integers only)", t)
	}
	return nil
}

// CPU returns the kernel for the CPU backend.
func (u *UniqueRange) CPU() (func(*cpu.Launch) error, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	key, ks := SortKey{Type: u.Type}, u.Type.Size()
	return func(l *cpu.Launch) error {
		n := int(l.Uint64(1))
		x, err := sortMem(l, 0, n*ks)
		if err != nil {
			return err
		}
		ob, err := sortMem(l, 2, 16)
		if err != nil {
			return err
		}
		out := cpu.Slice[uint64](ob)
		lo, nhi := out[0], out[1]
		for i := range n {
			o := key.Ordered(loadRaw(x, ks, i))
			lo, nhi = min(lo, o), min(nhi, ^o)
		}
		out[0], out[1] = lo, nhi
		return nil
	}, nil
}

// UniqueMark sets bit k-lo of the bitmap for each key of x whose ordered key k is in
// [lo, lo+32*words): each block marks its keys in a copy of the bitmap in its dynamic
// shared memory (4*words bytes; the launch gives it), then ORs the copy's nonzero words
// into bitmap with global reductions. A key is marked only when its bit is not yet set
// (a shared load first): most keys of a narrow range repeat.
//
// Kernel parameters: x u64 (Type), n u64, bitmap u64 (u32 words, zero at the first
// launch), lo u64, words u64. Any grid of UniqueDenseBlock-thread blocks.
type UniqueMark struct {
	Type dtype.DType
}

// Key identifies the kernel.
func (u *UniqueMark) Key() string { return "unique.mark|" + u.Type.String() }

// Validate checks the spec.
func (u *UniqueMark) Validate() error { return uniqueDenseType(u.Type) }

// CPU returns the kernel for the CPU backend.
func (u *UniqueMark) CPU() (func(*cpu.Launch) error, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	key, ks := SortKey{Type: u.Type}, u.Type.Size()
	return func(l *cpu.Launch) error {
		n, lo, words := int(l.Uint64(1)), l.Uint64(3), l.Uint64(4)
		x, err := sortMem(l, 0, n*ks)
		if err != nil {
			return err
		}
		bb, err := sortMem(l, 2, int(4*words))
		if err != nil {
			return err
		}
		bm := cpu.Slice[uint32](bb)
		for i := range n {
			if d := key.Ordered(loadRaw(x, ks, i)) - lo; d < 32*words {
				bm[d>>5] |= 1 << (d & 31)
			}
		}
		return nil
	}, nil
}

// UniqueExpand turns the bitmap of UniqueMark into r run flags and candidate values:
// flags[j] = bit j (bool), vals[j] = the element whose ordered key is lo+j.
//
// Kernel parameters: bitmap u64 (u32 words), flags u64 (bool), vals u64 (Type), lo u64,
// r u64. Any grid.
type UniqueExpand struct {
	Type dtype.DType
}

// Key identifies the kernel.
func (u *UniqueExpand) Key() string { return "unique.expand|" + u.Type.String() }

// Validate checks the spec.
func (u *UniqueExpand) Validate() error { return uniqueDenseType(u.Type) }

// CPU returns the kernel for the CPU backend.
func (u *UniqueExpand) CPU() (func(*cpu.Launch) error, error) {
	if err := u.Validate(); err != nil {
		return nil, err
	}
	ks := u.Type.Size()
	sign := uint64(0)
	if u.Type.IsSigned() {
		sign = 1 << (8*ks - 1)
	}
	return func(l *cpu.Launch) error {
		lo, r := l.Uint64(3), int(l.Uint64(4))
		bb, err := sortMem(l, 0, 4*((r+31)/32))
		if err != nil {
			return err
		}
		fl, err := sortMem(l, 1, r)
		if err != nil {
			return err
		}
		vals, err := sortMem(l, 2, r*ks)
		if err != nil {
			return err
		}
		bm := cpu.Slice[uint32](bb)
		l.Parallel(r, 1<<14, func(a, b int) {
			for j := a; j < b; j++ {
				fl[j] = byte(bm[j>>5] >> (j & 31) & 1)
				v := (lo + uint64(j)) ^ sign
				for k := range ks {
					vals[j*ks+k] = byte(v >> (8 * k))
				}
			}
		})
		return nil
	}, nil
}

// UniqueDenseWords returns the bitmap words of a range of r values.
func UniqueDenseWords(r uint64) int { return int((r + 31) / 32) }
