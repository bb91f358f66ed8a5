package gpu_test

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/internal/kernel"
	"github.com/go-gpu/gpu/internal/testenv"
)

// Sort tests: every element type against a stable sort written here in plain Go
// (the indices sorted with the index as the last key, by NumPy's order: NaN last, -0
// equal to +0), sizes around warp, tile and block-sort boundaries, every digit pattern
// (all equal, sorted, reversed, few distinct values, keys differing only in their top
// or bottom bits), NaN/Inf/-0, each integer type's extremes, rows of 1, 2 and long
// lengths, every axis of 3-D arrays, descending order, payloads, inputs unchanged and
// outputs fully written. They run on the CPU and, with a driver, on CUDA (forDevices):
// go test -run 'Sort|Argsort|TopK|Unique|SearchSorted|Quantile|Median|Partition' .

// stLess is NumPy's order on T: NaN last (NaNs equal), -0 equal to +0.
func stLess[T gpu.Elem](a, b T) bool {
	switch x := any(a).(type) {
	case float32:
		y := any(b).(float32)
		if x != x {
			return false
		}
		return y != y || x < y
	case float64:
		y := any(b).(float64)
		if x != x {
			return false
		}
		return y != y || x < y
	case bool:
		return !x && any(b).(bool)
	}
	return stCmpInt(a, b) < 0
}

// stCmpInt compares integers of any width and signedness.
func stCmpInt[T gpu.Elem](a, b T) int {
	if dtype.Of[T]().IsSigned() {
		x, y := stInt(a), stInt(b)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	}
	x, y := stUint(a), stUint(b)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

func stInt[T gpu.Elem](v T) int64 {
	switch x := any(v).(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	case int:
		return int64(x)
	}
	panic("not signed")
}

func stUint[T gpu.Elem](v T) uint64 {
	switch x := any(v).(type) {
	case uint8:
		return uint64(x)
	case uint16:
		return uint64(x)
	case uint32:
		return uint64(x)
	case uint64:
		return x
	case uint:
		return uint64(x)
	case bool:
		if x {
			return 1
		}
		return 0
	}
	panic("not unsigned")
}

// stArgsort returns the stable argsort of each row of xs (rows of rowLen).
func stArgsort[T gpu.Elem](xs []T, rowLen int, desc bool) []int64 {
	out := make([]int64, len(xs))
	if rowLen == 0 {
		return out
	}
	for r := 0; r < len(xs)/rowLen; r++ {
		row := xs[r*rowLen : (r+1)*rowLen]
		idx := make([]int, rowLen)
		for i := range idx {
			idx[i] = i
		}
		// Stable through the index as the last key: pdqsort's O(n log n) (a stable
		// sort's O(n log² n) moves took minutes at TestSortLargeGPU's sizes).
		slices.SortFunc(idx, func(i, j int) int {
			a, b := row[i], row[j]
			if desc {
				a, b = b, a
			}
			switch {
			case stLess(a, b):
				return -1
			case stLess(b, a):
				return 1
			}
			return cmp.Compare(i, j)
		})
		for i, j := range idx {
			out[r*rowLen+i] = int64(j)
		}
	}
	return out
}

// stBits returns the bits of v (to compare results bit for bit: -0 and NaN payloads).
func stBits[T gpu.Elem](v T) uint64 {
	var b [8]byte
	*(*T)(unsafe.Pointer(&b[0])) = v
	u := uint64(0)
	for k := int(unsafe.Sizeof(v)) - 1; k >= 0; k-- {
		u = u<<8 | uint64(b[k])
	}
	return u
}

// stSortNative sorts xs of a Go-ordered type (floats without NaN) in place and
// reports whether it did.
func stSortNative[T gpu.Elem](xs []T) bool {
	switch o := any(xs).(type) {
	case []float32:
		slices.Sort(o)
	case []float64:
		slices.Sort(o)
	case []int8:
		slices.Sort(o)
	case []uint8:
		slices.Sort(o)
	case []int16:
		slices.Sort(o)
	case []uint16:
		slices.Sort(o)
	case []int32:
		slices.Sort(o)
	case []uint32:
		slices.Sort(o)
	case []int64:
		slices.Sort(o)
	case []uint64:
		slices.Sort(o)
	default:
		return false
	}
	return true
}

// stPattern is a digit pattern of test keys.
type stPattern int

const (
	patRandom stPattern = iota
	patEqual
	patSorted
	patReverse
	patFew
	patTopBits
	patLowBits
	patSpecial
	numPatterns
)

func (p stPattern) String() string {
	return [...]string{"random", "equal", "sorted", "reverse", "few", "topbits", "lowbits", "special"}[p]
}

// stFromBits returns the T whose bits are u (truncated).
func stFromBits[T gpu.Elem](u uint64) T {
	var v T
	var b [8]byte
	for k := range b {
		b[k] = byte(u >> (8 * k))
	}
	v = *(*T)(unsafe.Pointer(&b[0]))
	if _, ok := any(v).(bool); ok {
		return any(b[0]&1 != 0).(T)
	}
	return v
}

// stGen returns n keys of pattern p.
func stGen[T gpu.Elem](rng *rand.Rand, n int, p stPattern) []T {
	var z T
	size := int(unsafe.Sizeof(z))
	bitsN := 8 * size
	out := make([]T, n)
	rnd := func() T {
		switch any(z).(type) {
		case float32:
			return any(float32(rng.NormFloat64() * 100)).(T)
		case float64:
			return any(rng.NormFloat64() * 1e3).(T)
		}
		return stFromBits[T](rng.Uint64())
	}
	switch p {
	case patRandom:
		for i := range out {
			out[i] = rnd()
		}
	case patEqual:
		v := rnd()
		for i := range out {
			out[i] = v
		}
	case patSorted, patReverse:
		for i := range out {
			out[i] = rnd()
		}
		// Not stable (rnd's equal keys have equal bits, and it makes no NaN or -0): a
		// stable sort's O(n log² n) moves took minutes at TestSortLargeGPU's sizes.
		if !stSortNative(out) {
			slices.SortFunc(out, func(a, b T) int {
				switch {
				case stLess(a, b):
					return -1
				case stLess(b, a):
					return 1
				}
				return 0
			})
		}
		if p == patReverse {
			slices.Reverse(out)
		}
	case patFew:
		vals := []T{rnd(), rnd(), rnd()}
		for i := range out {
			out[i] = vals[rng.IntN(len(vals))]
		}
	case patTopBits:
		// Keys differing only in their top byte.
		low := rng.Uint64()
		for i := range out {
			u := low&(^uint64(0)>>(64-bitsN+8)) | rng.Uint64()<<(bitsN-8)
			out[i] = stFromBits[T](u)
		}
	case patLowBits:
		high := rng.Uint64()
		for i := range out {
			out[i] = stFromBits[T](high&^0xff | rng.Uint64()&0xff)
		}
	case patSpecial:
		sp := stSpecials[T]()
		for i := range out {
			if rng.IntN(2) == 0 {
				out[i] = sp[rng.IntN(len(sp))]
			} else {
				out[i] = rnd()
			}
		}
	}
	return out
}

// stSpecials returns T's extremes and, for floats, NaNs (with payloads and signs), ±Inf,
// ±0 and subnormals.
func stSpecials[T gpu.Elem]() []T {
	var z T
	switch any(z).(type) {
	case float32:
		out := []float32{float32(math.NaN()), math.Float32frombits(0xffc00001), math.Float32frombits(0x7f800123),
			float32(math.Inf(1)), float32(math.Inf(-1)), 0, float32(math.Copysign(0, -1)), math.SmallestNonzeroFloat32,
			-math.SmallestNonzeroFloat32, math.MaxFloat32, -math.MaxFloat32, 1, -1}
		return any(out).([]T)
	case float64:
		out := []float64{math.NaN(), math.Float64frombits(0xfff8000000000001), math.Float64frombits(0x7ff0000000000123),
			math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), math.SmallestNonzeroFloat64,
			-math.SmallestNonzeroFloat64, math.MaxFloat64, -math.MaxFloat64, 1, -1}
		return any(out).([]T)
	}
	size := int(unsafe.Sizeof(z))
	bitsN := 8 * size
	top := uint64(1) << (bitsN - 1)
	all := ^uint64(0) >> (64 - bitsN)
	return []T{stFromBits[T](0), stFromBits[T](1), stFromBits[T](all), stFromBits[T](top), stFromBits[T](top - 1), stFromBits[T](top + 1)}
}

// checkSorted checks Sort and Argsort of xs (rows of rowLen, the last axis) on s.
func checkSorted[T gpu.Elem](t *testing.T, s *gpu.Stream, xs []T, shape []int, desc bool) {
	t.Helper()
	rowLen := 1
	if len(shape) > 0 {
		rowLen = shape[len(shape)-1]
	}
	a := mustArr[T](t)(gpu.FromSlice(s, xs, shape...))
	defer a.Free()
	var opts []gpu.SortOption
	if desc {
		opts = append(opts, gpu.Descending())
	}
	want := stArgsort(xs, rowLen, desc)
	srt := mustArr[T](t)(gpu.Sort(s, a, -1, opts...))
	defer srt.Free()
	idx := mustArr[int64](t)(gpu.Argsort(s, a, -1, opts...))
	defer idx.Free()
	got := toSlice(t, srt)
	gotIdx := toSlice(t, idx)
	for i := range want {
		r := i / rowLen
		w := xs[r*rowLen+int(want[i])]
		if stBits(got[i]) != stBits(w) {
			t.Fatalf("%v %v desc=%v: sorted[%d] = %v (%#x), want %v (%#x)", dtype.Of[T](), shape, desc, i, got[i], stBits(got[i]), w, stBits(w))
		}
		if gotIdx[i] != want[i] {
			t.Fatalf("%v %v desc=%v: argsort[%d] = %d, want %d", dtype.Of[T](), shape, desc, i, gotIdx[i], want[i])
		}
	}
	// The input is unchanged.
	back := toSlice(t, a)
	for i := range xs {
		if stBits(back[i]) != stBits(xs[i]) {
			t.Fatalf("input changed at %d", i)
		}
	}
}

func sortTypes(t *testing.T, s *gpu.Stream, rng *rand.Rand, n int, p stPattern, desc bool) {
	t.Helper()
	checkSorted(t, s, stGen[bool](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[int8](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[uint8](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[int16](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[uint16](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[int32](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[uint32](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[int64](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[uint64](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[float32](rng, n, p), []int{n}, desc)
	checkSorted(t, s, stGen[float64](rng, n, p), []int{n}, desc)
}

// sortSizes is the size ladder.
var sortSizes = []int{0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 3071, 3072, 3073, 4095, 4096, 4097,
	8191, 8192, 8193, 12289, 65537, 1<<20 + 3}

func sortBig(n int) bool { return n <= 1<<17 || !(testenv.Race || testing.Short()) }

func TestSortSizes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 1))
		for _, n := range sortSizes {
			if !sortBig(n) {
				continue
			}
			if n >= 1<<20 && d.Backend() == "cpu" || testenv.Race && n > 4097 {
				// The large sizes once per key width on the CPU (the reference is slow).
				checkSorted(t, s, stGen[int8](rng, n, patRandom), []int{n}, false)
				checkSorted(t, s, stGen[float32](rng, n, patSpecial), []int{n}, false)
				checkSorted(t, s, stGen[uint64](rng, n, patRandom), []int{n}, true)
				continue
			}
			sortTypes(t, s, rng, n, patRandom, false)
		}
	})
}

func TestSortPatterns(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 2))
		for _, n := range []int{1000, 5000, 20000} {
			for p := stPattern(0); p < numPatterns; p++ {
				for _, desc := range []bool{false, true} {
					t.Run(fmt.Sprintf("%d/%v/desc=%v", n, p, desc), func(t *testing.T) {
						sortTypes(t, s, rng, n, p, desc)
					})
				}
			}
		}
	})
}

// Stability with many ties: argsort's indices increase within equal keys.
func TestArgsortStable(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 3))
		for _, n := range []int{100, 4096, 70000} {
			xs := make([]int32, n)
			for i := range xs {
				xs[i] = int32(rng.IntN(4))
			}
			checkSorted(t, s, xs, []int{n}, false)
			checkSorted(t, s, xs, []int{n}, true)
			fs := make([]float32, n)
			for i := range fs {
				switch rng.IntN(4) {
				case 0:
					fs[i] = float32(math.Copysign(0, -1))
				case 1:
					fs[i] = 0
				case 2:
					fs[i] = float32(math.NaN())
				default:
					fs[i] = -float32(math.NaN())
				}
			}
			checkSorted(t, s, fs, []int{n}, false)
			checkSorted(t, s, fs, []int{n}, true)
		}
	})
}

func TestSortRows(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 4))
		for _, sh := range [][2]int{{1000, 1}, {777, 2}, {33, 10}, {5, 1000}, {3, 4097}, {2, 30000}, {4, 5000}} {
			rows, n := sh[0], sh[1]
			checkSorted(t, s, stGen[float32](rng, rows*n, patSpecial), []int{rows, n}, false)
			checkSorted(t, s, stGen[int64](rng, rows*n, patRandom), []int{rows, n}, true)
			checkSorted(t, s, stGen[uint8](rng, rows*n, patRandom), []int{rows, n}, false)
		}
		if !testing.Short() && !testenv.Race {
			n := 1000000
			checkSorted(t, s, stGen[float32](rng, 2*n, patRandom), []int{2, n}, false)
		}
	})
}

// Every axis of 3-D arrays, against the last-axis sort of the transposed array.
func TestSortAxes(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 5))
		for _, shape := range [][]int{{3, 4, 5}, {7, 1, 300}, {2, 5000, 3}} {
			n := shape[0] * shape[1] * shape[2]
			xs := stGen[float64](rng, n, patFew)
			a := mustArr[float64](t)(gpu.FromSlice(s, xs, shape...))
			for axis := -3; axis < 3; axis++ {
				ax := (axis + 3) % 3
				srt := mustArr[float64](t)(gpu.Sort(s, a, axis))
				idx := mustArr[int64](t)(gpu.Argsort(s, a, axis))
				got, gotIdx := toSlice(t, srt), toSlice(t, idx)
				// Reference: walk each line along ax.
				st := []int{shape[1] * shape[2], shape[2], 1}
				for o := 0; o < n; o++ {
					if o/st[ax]%shape[ax] != 0 {
						continue // not the first element of its line
					}
					line := make([]float64, shape[ax])
					for k := range line {
						line[k] = xs[o+k*st[ax]]
					}
					want := stArgsort(line, len(line), false)
					for k := range line {
						if gotIdx[o+k*st[ax]] != want[k] || stBits(got[o+k*st[ax]]) != stBits(line[want[k]]) {
							t.Fatalf("shape %v axis %d: line at %d, element %d: got %v (%d), want %v (%d)",
								shape, axis, o, k, got[o+k*st[ax]], gotIdx[o+k*st[ax]], line[want[k]], want[k])
						}
					}
				}
				srt.Free()
				idx.Free()
			}
			a.Free()
		}
	})
}

func TestSortByKey(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 6))
		for _, n := range []int{0, 1, 100, 4096, 4097, 50001} {
			ks := stGen[int16](rng, n, patFew)
			vs := make([]float64, n)
			for i := range vs {
				vs[i] = rng.NormFloat64()
			}
			ka := mustArr[int16](t)(gpu.FromSlice(s, ks, n))
			va := mustArr[float64](t)(gpu.FromSlice(s, vs, n))
			for _, desc := range []bool{false, true} {
				var opts []gpu.SortOption
				if desc {
					opts = append(opts, gpu.Descending())
				}
				ko, vo, err := gpu.SortByKey(s, ka, va, -1, opts...)
				if err != nil {
					t.Fatal(err)
				}
				want := stArgsort(ks, max(n, 1), desc)
				gk, gv := toSlice(t, ko), toSlice(t, vo)
				for i := range want {
					if gk[i] != ks[want[i]] || gv[i] != vs[want[i]] {
						t.Fatalf("n=%d desc=%v: element %d: (%d, %v), want (%d, %v)", n, desc, i, gk[i], gv[i], ks[want[i]], vs[want[i]])
					}
				}
				ko.Free()
				vo.Free()
			}
			// Values of other widths.
			v8 := make([]uint8, n)
			for i := range v8 {
				v8[i] = uint8(i)
			}
			vb := mustArr[uint8](t)(gpu.FromSlice(s, v8, n))
			ko, vo, err := gpu.SortByKey(s, ka, vb, 0)
			if err != nil {
				t.Fatal(err)
			}
			want := stArgsort(ks, max(n, 1), false)
			gv := toSlice(t, vo)
			for i := range want {
				if gv[i] != uint8(want[i]) {
					t.Fatalf("n=%d: uint8 payload %d: %d, want %d", n, i, gv[i], uint8(want[i]))
				}
			}
			ko.Free()
			vo.Free()
			vb.Free()
			ka.Free()
			va.Free()
		}
	})
}

func TestSortErrors(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		a := mustArr[float32](t)(gpu.FromSlice(s, []float32{3, 1, 2}, 3))
		defer a.Free()
		if _, err := gpu.Sort(s, a, 1); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("axis 1 of a 1-d array: %v", err)
		}
		if _, err := gpu.Sort(s, a, -2); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("axis -2 of a 1-d array: %v", err)
		}
		if _, err := gpu.Sort[float32](s, nil, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("nil array: %v", err)
		}
		if _, err := gpu.Sort(nil, a, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("nil stream: %v", err)
		}
		if _, err := gpu.Argsort(s, a, 0, nil); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("nil option: %v", err)
		}
		// Smallest is TopK's.
		if _, err := gpu.Sort(s, a, 0, gpu.Smallest()); !errors.Is(err, gpu.ErrInvalidValue) || !strings.Contains(err.Error(), "Smallest applies to TopK") {
			t.Errorf("Sort with Smallest: %v", err)
		}
		if _, err := gpu.Argsort(s, a, 0, gpu.Descending(), gpu.Smallest()); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("Argsort with Smallest: %v", err)
		}
		b := mustArr[int32](t)(gpu.FromSlice(s, []int32{1, 2}, 2))
		defer b.Free()
		if _, _, err := gpu.SortByKey(s, a, b, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("payload of another shape: %v", err)
		}
		if _, err := gpu.Partition(s, a, 3, 0); !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("kth 3 of 3: %v", err)
		}
		// A 0-d array sorts as one element, along axis -1 or 0, into a 0-d array.
		one := mustArr[float32](t)(gpu.FromSlice(s, []float32{7}))
		defer one.Free()
		z := mustArr[float32](t)(one.Reshape())
		if z.Ndim() != 0 {
			t.Fatalf("Reshape() made shape %v, want a 0-d array", z.Shape())
		}
		for _, axis := range []int{-1, 0} {
			srt := mustArr[float32](t)(gpu.Sort(s, z, axis))
			if v := toSlice(t, srt); srt.Ndim() != 0 || len(v) != 1 || v[0] != 7 {
				t.Errorf("0-d sort along %d: shape %v, %v", axis, srt.Shape(), v)
			}
			srt.Free()
		}
	})
}

// Small tiles, segments and launches: rows split into segments chained pass by pass,
// rows grouped into several launches, look-back windows of 1 and 32, block sorts of
// small tiles, and the long rows' passes with segments and launch groups.
func TestSortSegments(t *testing.T) {
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		rng := rand.New(rand.NewPCG(21, 7))
		def := gpu.SortConfigFromEnv(func(string) string { return "" })
		for _, c := range []gpu.SortConfig{
			{Items4: 4, Items8: 4, Block4: 4, Block8: 4, Lookback: 1, HistItems: 2, SegMax: 2048, Rank: kernel.RankAtomicOr, LoadFence: true,
				LeanLookback: true, HistLean: true},
			{Items4: 5, Items8: 3, Block4: 2, Block8: 2, Lookback: 32, HistItems: 1, SegMax: 3 * 1280, Rank: kernel.RankMatch},
			{Items4: 16, Items8: 12, Block4: 16, Block8: 12, Lookback: 4, HistItems: 8, SegMax: 3 * 4096, LoadFence: true, SmallItems: 3},
			{Items4: 16, Items8: 12, Block4: 16, Block8: 12, Lookback: 16, HistItems: 8, SegMax: 3 * 4096, LoadFence: true, SmallItems: 3,
				SmallLookback: 2, LeanLookback: true, HistLean: true},
			{Items4: 6, Items8: 5, Block4: 4, Block8: 4, Lookback: 4, HistItems: 2, SegMax: 3 * 1536, LoadFence: true, LeanLookback: true,
				HistLean: true, FullTiles: gpu.SortFullAll},
			{Items4: 7, Items8: 5, Block4: 4, Block8: 4, Lookback: 4, HistItems: 2, SegMax: 3 * 1792, LoadFence: true, LeanLookback: true,
				HistLean: true, FullTiles: gpu.SortFullAll, Sectors: gpu.SortSectorsAll},
			{Items4: 5, Items8: 4, Block4: 4, Block8: 4, Lookback: 4, HistItems: 2, SegMax: 3 * 1280, Rank: kernel.RankBallot3, LoadFence: true,
				LeanLookback: true, HistLean: true, FullTiles: gpu.SortFullNarrow},
		} {
			old := gpu.SetSortConfig(c)
			t.Run(fmt.Sprintf("items%d-lb%d-seg%d-%v-lean=%v-full%d-sectors%d", c.Items4, c.Lookback, c.SegMax, c.Rank, c.LeanLookback, c.FullTiles, c.Sectors), func(t *testing.T) {
				for _, sh := range [][2]int{{1, 20000}, {1, 50001}, {3, 9000}, {7, 1500}, {40, 100}} {
					rows, n := sh[0], sh[1]
					checkSorted(t, s, stGen[float32](rng, rows*n, patSpecial), []int{rows, n}, false)
					checkSorted(t, s, stGen[int64](rng, rows*n, patRandom), []int{rows, n}, true)
					checkSorted(t, s, stGen[uint16](rng, rows*n, patLowBits), []int{rows, n}, false)
					checkSorted(t, s, stGen[int8](rng, rows*n, patFew), []int{rows, n}, false)
				}
			})
			gpu.SetSortConfig(old)
		}
		// L2 prefetches of later tiles' keys and each tile's values (Prefetch,
		// PrefetchVals): tiles of 4 keys a thread (8-byte keys 3), so that the rows
		// have more tiles than one or two a multiprocessor of a GPU ahead of most.
		for _, ahead := range []int{1, 2} {
			c := def
			c.Items4, c.Items8, c.LongItems4, c.LongItems8, c.SmallItems, c.FusedMax = 4, 3, 0, 0, 0, 0
			c.Prefetch, c.PrefetchKV, c.PrefetchVals = ahead, ahead, true
			old := gpu.SetSortConfig(c)
			t.Run(fmt.Sprintf("prefetch%d", ahead), func(t *testing.T) {
				for _, sh := range [][2]int{{1, 600001}, {3, 150000}} {
					rows, n := sh[0], sh[1]
					checkSorted(t, s, stGen[float32](rng, rows*n, patSpecial), []int{rows, n}, false)
					checkSorted(t, s, stGen[int64](rng, rows*n, patRandom), []int{rows, n}, true)
				}
			})
			gpu.SetSortConfig(old)
		}
		// Long rows' tiles (LongItems4/8) with segments of 3 and 16 tiles, launch
		// groups and whole rows, whatever the core count: tiles of 6 and 5 items under
		// one block, no wave rule (LongWaves 0), no small tiles. The hook checks that
		// every sort takes the long pass where its rows have at least 16 such tiles
		// (sortLongRowTiles), the base pass where not.
		var mu sync.Mutex
		var passes []kernel.RadixPass
		defer gpu.SetSortPassHook(func(sp *kernel.RadixPass) {
			mu.Lock()
			passes = append(passes, *sp)
			mu.Unlock()
		})()
		longRuns := 0
		for _, segMax := range []int{3 * 1536, 16*1536 + 100, 1 << 28} {
			c := def
			c.LongItems4, c.LongItems8, c.LongMinBlocks, c.LongWaves, c.SmallItems, c.SegMax = 6, 5, 1, 0, 0, segMax
			c.LongItems8Vals = 4           // (the int64 argsorts' passes: long at every shape as well)
			c.FusedMax = 0                 // (the hook sees the passes of every sort)
			c.FullTiles = gpu.SortFullNone // (the long passes both ways)
			if segMax == 3*1536 {
				c.FullTiles = gpu.SortFullLong
			}
			switch segMax {
			case 1 << 28:
				c.Sectors = gpu.SortSectorsAll // (the keys on whole sectors on whole rows)
			case 16*1536 + 100:
				c.Sectors = gpu.SortSectorsValues // (and on the passes with values of keys of up to 4 bytes)
			default:
				c.Sectors = gpu.SortSectorsOff
			}
			old := gpu.SetSortConfig(c)
			t.Run(fmt.Sprintf("long%d,%d-seg%d", c.LongItems4, c.LongItems8, c.SegMax), func(t *testing.T) {
				for _, sh := range [][2]int{{1, 24600}, {1, 50001}, {3, 30000}, {2, 21000}} {
					rows, n := sh[0], sh[1]
					check := func(ks int, sortBoth func()) {
						t.Helper()
						mu.Lock()
						passes = passes[:0]
						mu.Unlock()
						sortBoth()
						mu.Lock()
						defer mu.Unlock()
						if len(passes) != 2 { // Sort and Argsort
							t.Fatalf("%d-byte keys %v: %d radix sorts, want 2", ks, sh, len(passes))
						}
						for _, p := range passes {
							items, long := c.Items4, c.LongItems4
							if ks == 8 {
								items, long = c.Items8, c.LongItems8
								if p.Val != kernel.ValNone {
									long = c.LongItems8Vals
								}
							}
							isLong := (n+kernel.SortBlock*long-1)/(kernel.SortBlock*long) >= 16
							want := kernel.RadixPass{Items: items, MinBlocks: c.MinBlocks}
							if isLong {
								want = kernel.RadixPass{Items: long, MinBlocks: c.LongMinBlocks, FullTiles: c.FullTiles == gpu.SortFullLong}
								longRuns++
							}
							if p.Items != want.Items || p.MinBlocks > want.MinBlocks || isLong && p.MinBlocks != want.MinBlocks || p.FullTiles != want.FullTiles {
								t.Fatalf("%d-byte keys %v: pass %s, want %d items under %d blocks, full tiles' copy %v", ks, sh, p.Key(), want.Items, want.MinBlocks, want.FullTiles)
							}
							sectors := c.Sectors == gpu.SortSectorsAll || c.Sectors == gpu.SortSectorsValues && p.Val != kernel.ValNone && ks <= 4
							if p.Sectors != sectors {
								t.Fatalf("%d-byte keys %v, sectors setting %d: pass %s, want whole-sector writes %v", ks, sh, c.Sectors, p.Key(), sectors)
							}
						}
					}
					check(4, func() { checkSorted(t, s, stGen[float32](rng, rows*n, patSpecial), []int{rows, n}, false) })
					check(8, func() { checkSorted(t, s, stGen[int64](rng, rows*n, patRandom), []int{rows, n}, true) })
					check(2, func() { checkSorted(t, s, stGen[uint16](rng, rows*n, patLowBits), []int{rows, n}, false) })
				}
			})
			gpu.SetSortConfig(old)
		}
		if longRuns != 2*3*(3*3+1) {
			t.Errorf("%d sorts on the long passes, want 60", longRuns)
		}
		gpu.SetSortConfig(def)
	})
}

// The sort configuration's environment variables: defaults, overrides, and values a
// variable can't take leaving the default.
func TestSortConfigFromEnv(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	def := gpu.SortConfigFromEnv(env())
	if !def.LeanLookback || !def.HistLean || def.SmallItems != 8 || def.SmallLookback != 8 || def.Lookback != 4 || def.LookbackVals != 2 || def.Rank != kernel.RankBallot || def.RankAlone != kernel.RankBallot3 ||
		def.MinBlocks != 4 || def.Items4 != 16 || def.Items8 != 12 || def.LongItems4 != 48 || def.LongItems8 != 28 || def.LongItems8Vals != 32 || def.LongMinBlocks != 2 || def.LongLookback8 != 2 ||
		def.LongWaves != 4 || def.PDL || def.FusedMax != 1<<24 || def.FusedItems4 != 26 || def.FusedBlocks != 2 || !def.FusedSplit ||
		def.FullTiles != gpu.SortFullNarrow || def.FusedFull || def.Sectors != gpu.SortSectorsValues || def.Prefetch != 1 || def.PrefetchKV != 0 || def.PrefetchVals || !def.Prmt {
		t.Fatalf("defaults: %+v", def)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_FUSED", "0", "GPU_SORT_FUSED_BLOCKS", "1", "GPU_SORT_FUSED_SPLIT", "off", "GPU_SORT_FUSED_ITEMS", "20",
		"GPU_SORT_FUSED_FULL", "on", "GPU_SORT_FULL_TILES", "off", "GPU_SORT_SECTORS", "on")); c.FusedMax != 0 || c.FusedBlocks != 1 || c.FusedSplit ||
		c.FusedItems4 != 20 || !c.FusedFull || c.FullTiles != gpu.SortFullNone || c.Sectors != gpu.SortSectorsAll {
		t.Fatalf("GPU_SORT_FUSED=0 GPU_SORT_FUSED_BLOCKS=1 GPU_SORT_FUSED_SPLIT=off GPU_SORT_FUSED_ITEMS=20 GPU_SORT_FUSED_FULL=on GPU_SORT_FULL_TILES=off GPU_SORT_SECTORS=on: %+v", c)
	}
	c := gpu.SortConfigFromEnv(env("GPU_SORT_LOOKBACK_LEAN", "0", "GPU_SORT_HIST_LEAN", "off", "GPU_SORT_SMALL_ITEMS", "0",
		"GPU_SORT_SMALL_LOOKBACK", "0", "GPU_SORT_RANK", "or", "GPU_SORT_LOOKBACK", "8", "GPU_SORT_LOOKBACK_VALS", "0", "GPU_SORT_PDL", "1"))
	if c.LeanLookback || c.HistLean || c.SmallItems != 0 || c.SmallLookback != 0 || c.Rank != kernel.RankAtomicOr || c.RankAlone != kernel.RankAtomicOr || c.Lookback != 8 ||
		c.LookbackVals != 0 || !c.PDL {
		t.Fatalf("overrides: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_MATCH", "1")); c.Rank != kernel.RankMatch || c.RankAlone != kernel.RankMatch {
		t.Fatalf("GPU_SORT_MATCH=1: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_PRMT", "off")); c.Prmt {
		t.Fatalf("GPU_SORT_PRMT=off: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_LONG_LOOKBACK8", "0")); c.LongLookback8 != 0 {
		t.Fatalf("GPU_SORT_LONG_LOOKBACK8=0: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_LONG_LOOKBACK8", "3")); c.LongLookback8 != 2 {
		t.Fatalf("GPU_SORT_LONG_LOOKBACK8=3 (not a window): %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_RANK", "ballot3")); c.Rank != kernel.RankBallot3 || c.RankAlone != kernel.RankBallot3 {
		t.Fatalf("GPU_SORT_RANK=ballot3: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_RANK", "or", "GPU_SORT_RANK_ALONE", "ballot")); c.Rank != kernel.RankAtomicOr || c.RankAlone != kernel.RankBallot {
		t.Fatalf("GPU_SORT_RANK=or GPU_SORT_RANK_ALONE=ballot: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_SECTORS", "off")); c.Sectors != gpu.SortSectorsOff {
		t.Fatalf("GPU_SORT_SECTORS=off: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_PREFETCH", "0", "GPU_SORT_PREFETCH_KV", "6", "GPU_SORT_PREFETCH_VALS", "on")); c.Prefetch != 0 ||
		c.PrefetchKV != 6 || !c.PrefetchVals {
		t.Fatalf("GPU_SORT_PREFETCH=0 GPU_SORT_PREFETCH_KV=6 GPU_SORT_PREFETCH_VALS=on: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_ITEMS", "28", "GPU_SORT_MINBLOCKS", "4")); c.Items4 != 28 || c.MinBlocks != 4 {
		t.Fatalf("GPU_SORT_ITEMS=28 GPU_SORT_MINBLOCKS=4: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_LONG_ITEMS", "0", "GPU_SORT_LONG_ITEMS8", "12", "GPU_SORT_LONG_MINBLOCKS", "0")); c.LongItems4 != 0 ||
		c.LongItems8 != 12 || c.LongMinBlocks != 0 {
		t.Fatalf("GPU_SORT_LONG_ITEMS=0 GPU_SORT_LONG_ITEMS8=12 GPU_SORT_LONG_MINBLOCKS=0: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_LONG_ITEMS", "48", "GPU_SORT_LONG_ITEMS8", "24", "GPU_SORT_LONG_ITEMS8_VALS", "0")); c.LongItems4 != 48 ||
		c.LongItems8 != 24 || c.LongItems8Vals != 0 {
		t.Fatalf("GPU_SORT_LONG_ITEMS=48 GPU_SORT_LONG_ITEMS8=24 GPU_SORT_LONG_ITEMS8_VALS=0: %+v", c)
	}
	if c := gpu.SortConfigFromEnv(env("GPU_SORT_LONG_ITEMS8_VALS", "40")); c.LongItems8 != 28 || c.LongItems8Vals != 40 {
		t.Fatalf("GPU_SORT_LONG_ITEMS8_VALS=40: %+v", c)
	}
	c = gpu.SortConfigFromEnv(env("GPU_SORT_LOOKBACK_LEAN", "maybe", "GPU_SORT_SMALL_LOOKBACK", "3", "GPU_SORT_SMALL_ITEMS", "17", "GPU_SORT_ITEMS", "29",
		"GPU_SORT_LONG_ITEMS", "2", "GPU_SORT_LONG_ITEMS8", fmt.Sprint(kernel.SortPassMaxItems+1), "GPU_SORT_LONG_ITEMS8_VALS", "3", "GPU_SORT_LONG_MINBLOCKS", "9", "GPU_SORT_LOOKBACK_VALS", "3", "GPU_SORT_PDL", "sometimes",
		"GPU_SORT_FUSED", "-1", "GPU_SORT_FUSED_BLOCKS", "3", "GPU_SORT_FUSED_SPLIT", "maybe", "GPU_SORT_FUSED_ITEMS", "29",
		"GPU_SORT_FULL_TILES", "some", "GPU_SORT_FUSED_FULL", "sometimes", "GPU_SORT_SECTORS", "often", "GPU_SORT_PREFETCH", "65",
		"GPU_SORT_PREFETCH_KV", "-1", "GPU_SORT_PREFETCH_VALS", "perhaps", "GPU_SORT_PRMT", "rarely", "GPU_SORT_RANK", "ballot4",
		"GPU_SORT_RANK_ALONE", "any"))
	if c != def {
		t.Fatalf("bad values: %+v, want the defaults %+v", c, def)
	}
}
