package conformance

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"slices"
	"sort"
	"strconv"
	"testing"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/half"
	"github.com/go-gpu/gpu/internal/testenv"
)

// RunSort checks sorting and selection on d (Sort, Argsort, SortByKey, TopK, Partition,
// Argpartition, Unique, SearchSorted, Median, Quantile and Quantiles) against
// references in plain Go: the order is that of a stable sort (equal keys keep their
// input order: sorted here with the index as the last key) by NumPy's order (NaN last
// and all NaNs equal, -0 equal to +0; descending reverses the keys' order, still
// stable), values compared bit for bit (NaN payloads, the sign of zero), quantiles
// computed in float64 with numpy's linear interpolation. Every element type (bool,
// the integers of every width, float16, bfloat16, float32, float64), ascending and
// descending; the size ladder around warps, block tiles and radix tiles up to 2^20+3;
// every digit pattern (all equal, sorted, reversed, few distinct, keys differing in
// their top or bottom byte only) and NaN, ±Inf, ±0, subnormals and each integer
// type's extremes; rows of 1, 2 and 10^6 keys; every axis of 3-D arrays and
// non-contiguous inputs; empty arrays; TopK's k of 0, 1 and n; SearchSorted at both
// ends and among duplicates. Inputs are fresh random values (the seed is logged:
// GPU_SORT_SEED replays it), every input is checked unchanged, and every result is
// allocated over poisoned memory, so that an element a backend didn't write shows.
func RunSort(t *testing.T, d *gpu.Device) {
	seed := rand.Uint64()
	if v, err := strconv.ParseUint(os.Getenv("GPU_SORT_SEED"), 0, 64); err == nil {
		seed = v
	}
	t.Logf("seed %#x (GPU_SORT_SEED replays it)", seed)
	s := stream(t, d)
	c := &sortCtx{s: s, rng: rand.New(rand.NewPCG(seed, 21)), quick: testenv.Race || testing.Short()}
	t.Run("Poison", func(t *testing.T) { testSortPoison(t, c) })
	t.Run("Reference", testSortReference)
	t.Run("Types", func(t *testing.T) { testSortTypes(t, c) })
	t.Run("Ladder", func(t *testing.T) { testSortLadder(t, c) })
	t.Run("Patterns", func(t *testing.T) { testSortPatterns(t, c) })
	t.Run("Ties", func(t *testing.T) { testSortTies(t, c) })
	t.Run("Rows", func(t *testing.T) { testSortRows(t, c) })
	t.Run("Axes", func(t *testing.T) { testSortAxes(t, c) })
	t.Run("Views", func(t *testing.T) { testSortViews(t, c) })
	t.Run("Empty", func(t *testing.T) { testSortEmpty(t, c) })
	t.Run("Past2to31", func(t *testing.T) { testSortPast2to31(t, c) })
}

// sortCtx is what the sort tests share: the stream, the random source and whether the
// run is a quick one (-short or the race detector: the largest cases check fewer
// operations).
type sortCtx struct {
	s          *gpu.Stream
	rng        *rand.Rand
	quick      bool
	poisonHost []byte // sortPoisonByte, as many as the largest poison yet
}

// sortPoisonByte is the byte of the poison under every result.
const sortPoisonByte = 0xA5

// poison leaves freed blocks full of sortPoisonByte on the stream for the results of
// the next operations to take: the runtime keeps freed blocks of up to 32 MiB per
// stream, in power-of-two classes from 512 bytes, and hands the last freed first (a
// block of each size's class, filled whole, three times).
func (c *sortCtx) poison(t testing.TB, sizes ...int) {
	t.Helper()
	var bufs []*gpu.Buffer
	for range 3 {
		for _, n := range sizes {
			if n <= 0 {
				continue
			}
			if n <= 32<<20 {
				n = max(512, 1<<bits.Len(uint(n-1))) // the whole block of its class
			}
			b, err := c.s.Alloc(int64(n))
			if err != nil {
				t.Fatalf("Alloc(%d): %v", n, err)
			}
			if len(c.poisonHost) < n {
				c.poisonHost = bytes.Repeat([]byte{sortPoisonByte}, n)
			}
			must(t, c.s.CopyHtoD(b, c.poisonHost[:n])) // (in stream order: the block stays this stream's)
			bufs = append(bufs, b)
		}
	}
	for _, b := range bufs {
		must(t, b.Free())
	}
}

// testSortPoison checks that poison works: a new array takes a poisoned block, so the
// tests below can see an element an operation didn't write.
func testSortPoison(t *testing.T, c *sortCtx) {
	for _, n := range []int{1, 100, 5000, 1 << 20} {
		c.poison(t, 8*n)
		a, err := gpu.Empty[int64](c.s, n)
		must(t, err)
		for i, v := range hostOf(t, a) {
			if uint64(v) != 0xA5A5A5A5A5A5A5A5 {
				t.Fatalf("Empty(%d) after poison: element %d = %#x, not poison: the sort tests can't see unwritten results", n, i, uint64(v))
			}
		}
		must(t, a.Free())
	}
}

// testSortReference checks the reference's two sorts against each other and the
// order's key against Go's order on values (so that the reference can't share a bug
// with what it checks): NaN last, -0 equal to +0.
func testSortReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	keys := make([]uint64, refRadixMin+5)
	for i := range keys {
		keys[i] = rng.Uint64()>>(rng.IntN(4)*20) | uint64(rng.IntN(3))<<(rng.IntN(64))
	}
	for _, desc := range []bool{false, true} {
		idx := make([]int, len(keys))
		for i := range idx {
			idx[i] = i
		}
		slices.SortStableFunc(idx, func(i, j int) int {
			if desc {
				return cmp.Compare(keys[j], keys[i])
			}
			return cmp.Compare(keys[i], keys[j])
		})
		if got := refArgsort(keys, desc); !slices.Equal(got, idx) {
			t.Fatalf("the radix reference (desc=%v) is not the stable sort", desc)
		}
	}
	fs := []float64{math.Inf(-1), -math.MaxFloat64, -1, -math.SmallestNonzeroFloat64, 0, math.SmallestNonzeroFloat64, 1,
		math.MaxFloat64, math.Inf(1), math.NaN()}
	for i := 1; i < len(fs); i++ {
		if floatKey(fs[i-1]) >= floatKey(fs[i]) {
			t.Fatalf("floatKey: %v not before %v", fs[i-1], fs[i])
		}
	}
	if floatKey(math.Copysign(0, -1)) != floatKey(0) || floatKey(math.NaN()) != floatKey(-math.NaN()) {
		t.Fatal("floatKey: -0 and +0, or two NaNs, differ")
	}
	if orderKey(int8(-128)) >= orderKey(int8(-1)) || orderKey(int8(-1)) >= orderKey(int8(0)) || orderKey(int8(0)) >= orderKey(int8(127)) ||
		orderKey(uint16(0x7fff)) >= orderKey(uint16(0x8000)) || orderKey(int64(math.MinInt64)) != 0 ||
		orderKey(half.Float16FromBits(0xfc00)) >= orderKey(half.Float16FromBits(0x8001)) ||
		orderKey(half.BFloat16FromBits(0x8000)) != orderKey(half.BFloat16FromBits(0)) || orderKey(true) <= orderKey(false) {
		t.Fatal("orderKey: an integer, half or bool out of order")
	}
}

// hostOf returns a's elements.
func hostOf[T gpu.Elem](t testing.TB, a *gpu.Array[T]) []T {
	t.Helper()
	out, err := a.ToSlice(context.Background())
	if err != nil {
		t.Fatalf("ToSlice: %v", err)
	}
	return out
}

// upload returns a new array of xs in shape (none: a 0-d array of one element), freed
// when t ends.
func upload[T gpu.Elem](t testing.TB, c *sortCtx, xs []T, shape ...int) *gpu.Array[T] {
	t.Helper()
	a, err := gpu.FromSlice(c.s, xs, shape...)
	if err != nil {
		t.Fatalf("FromSlice %v: %v", shape, err)
	}
	t.Cleanup(func() { a.Free() })
	if len(shape) == 0 {
		z, err := a.Reshape()
		if err != nil {
			t.Fatalf("Reshape to 0-d: %v", err)
		}
		return z
	}
	return a
}

// Reference.

// orderKey maps v to a uint64 whose order is NumPy's order of T: NaNs (all equal)
// last, -0 equal to +0.
func orderKey[T gpu.Elem](v T) uint64 {
	switch dt := dtype.Of[T](); {
	case dt == dtype.Bool:
		return uint64(toFloat(v))
	case dt.IsFloat():
		return floatKey(toFloat(v))
	}
	u := bitsOf(v)
	if dtype.Of[T]().IsSigned() {
		w := 8 * int(unsafe.Sizeof(v))
		return uint64(int64(u<<(64-w))>>(64-w)) ^ 1<<63 // sign-extended, then offset
	}
	return u
}

func floatKey(f float64) uint64 {
	switch {
	case f != f:
		return math.MaxUint64
	case f == 0:
		f = 0 // -0 is +0
	}
	u := math.Float64bits(f)
	if u>>63 != 0 {
		return ^u
	}
	return u | 1<<63
}

// bitsOf returns v's bits (bool: its byte).
func bitsOf[T gpu.Elem](v T) uint64 {
	var b [8]byte
	*(*T)(unsafe.Pointer(&b[0])) = v
	u := uint64(0)
	for k := int(unsafe.Sizeof(v)) - 1; k >= 0; k-- {
		u = u<<8 | uint64(b[k])
	}
	return u
}

// fromBits returns the T of the low bits of u (bool: the lowest bit).
func fromBits[T gpu.Elem](u uint64) T {
	var z T
	if _, ok := any(z).(bool); ok {
		return any(u&1 != 0).(T)
	}
	var b [8]byte
	for k := range b {
		b[k] = byte(u >> (8 * k))
	}
	return *(*T)(unsafe.Pointer(&b[0]))
}

// toFloat returns v as a float64 (as the quantiles read it).
func toFloat[T gpu.Elem](v T) float64 {
	switch x := any(v).(type) {
	case bool:
		if x {
			return 1
		}
		return 0
	case half.Float16:
		return x.Float64()
	case half.BFloat16:
		return x.Float64()
	case float32:
		return float64(x)
	case float64:
		return x
	}
	if dtype.Of[T]().IsSigned() {
		return float64(int64(orderKey(v) ^ 1<<63))
	}
	return float64(bitsOf(v))
}

// refArgsort returns the stable sort's permutation of keys (desc: keys in decreasing
// order, equal keys still in input order): a comparison sort with the index as the
// last key, or past refRadixMin keys a least-significant-digit radix sort (stable
// counting passes, 16 bits each), both plain Go.
func refArgsort(keys []uint64, desc bool) []int {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	if len(keys) >= refRadixMin {
		return refRadix(keys, idx, desc)
	}
	slices.SortFunc(idx, func(i, j int) int {
		a, b := keys[i], keys[j]
		if desc {
			a, b = b, a
		}
		if r := cmp.Compare(a, b); r != 0 {
			return r
		}
		return cmp.Compare(i, j) // stable
	})
	return idx
}

// refRadixMin is the least keys refArgsort sorts by radix.
const refRadixMin = 1 << 15

// refRadix sorts idx (0, 1, ...) stably by keys (desc: by ^key, the reverse order).
func refRadix(keys []uint64, idx []int, desc bool) []int {
	flip := uint64(0)
	if desc {
		flip = ^uint64(0)
	}
	tmp := make([]int, len(idx))
	for shift := 0; shift < 64; shift += 16 {
		var count [1<<16 + 1]int
		for _, i := range idx {
			count[((keys[i]^flip)>>shift)&0xffff+1]++
		}
		if count[1] == len(idx) {
			continue // (every key has this digit 0)
		}
		for d := 1; d < len(count); d++ {
			count[d] += count[d-1]
		}
		for _, i := range idx {
			d := ((keys[i] ^ flip) >> shift) & 0xffff
			tmp[count[d]] = i
			count[d]++
		}
		idx, tmp = tmp, idx
	}
	return idx
}

// lineSet describes the lines of an array of shape along axis (row-major, contiguous):
// line l's k-th element is at starts[l] + k*stride.
type lineSet struct {
	starts    []int
	stride, n int
}

func linesOf(shape []int, axis int) lineSet {
	if len(shape) == 0 {
		return lineSet{starts: []int{0}, stride: 1, n: 1}
	}
	total := 1
	for _, e := range shape {
		total *= e
	}
	stride := 1
	for _, e := range shape[axis+1:] {
		stride *= e
	}
	ls := lineSet{stride: stride, n: shape[axis]}
	if total == 0 {
		return ls
	}
	for o := 0; o < total; o++ {
		if o/stride%shape[axis] == 0 {
			ls.starts = append(ls.starts, o)
		}
	}
	return ls
}

// line returns line l of xs.
func (ls lineSet) line(xs []uint64, l int) []uint64 {
	out := make([]uint64, ls.n)
	for k := range out {
		out[k] = xs[ls.starts[l]+k*ls.stride]
	}
	return out
}

// outLines is ls for a result whose axis has length k: the same lines, elements k along.
func (ls lineSet) outStart(l, k int) int {
	if ls.n == 0 {
		return 0
	}
	// starts[l] = outer*n*stride + inner; the result's is outer*k*stride + inner.
	outer, inner := ls.starts[l]/(ls.n*ls.stride), ls.starts[l]%ls.stride
	return outer*k*ls.stride + inner
}

// Generators.

// sortPattern is a digit pattern of keys.
type sortPattern int

const (
	spRandom sortPattern = iota
	spEqual
	spSorted
	spReverse
	spFew
	spTopBits
	spLowBits
	spSpecial
	spCount
)

func (p sortPattern) String() string {
	return [...]string{"random", "equal", "sorted", "reverse", "few", "topbits", "lowbits", "special"}[p]
}

// randomOf returns a random T: random bits (floats of every exponent, NaNs with
// payloads among them), for floats half the time a value near 1 instead (values of
// one binade and its neighbours tie more, and tell the float order from the bits').
func randomOf[T gpu.Elem](rng *rand.Rand) T {
	u := rng.Uint64()
	var z T
	switch any(z).(type) {
	case float32:
		if u&1 == 0 {
			return any(float32(rng.NormFloat64())).(T)
		}
	case float64:
		if u&1 == 0 {
			return any(rng.NormFloat64()).(T)
		}
	case half.Float16:
		if u&1 == 0 {
			return any(half.NewFloat16(rng.NormFloat64())).(T)
		}
	case half.BFloat16:
		if u&1 == 0 {
			return any(half.NewBFloat16(rng.NormFloat64())).(T)
		}
	}
	if elemSize[T]() == 8 {
		u = rng.Uint64() // (u's low bit chose the branch: all 64 bits fresh)
	} else {
		u >>= 1
	}
	return fromBits[T](u)
}

// specialsOf returns T's extremes and, for floats, NaNs (signs, payloads, signaling),
// ±Inf, ±0, the smallest subnormals, the largest finite values and ±1.
func specialsOf[T gpu.Elem]() []T {
	var z T
	var bits []uint64
	switch any(z).(type) {
	case bool:
		return []T{fromBits[T](0), fromBits[T](1)}
	case half.Float16:
		bits = []uint64{0x7e00, 0xfe01, 0x7c01, 0x7c00, 0xfc00, 0, 0x8000, 1, 0x8001, 0x7bff, 0xfbff, 0x3c00, 0xbc00}
	case half.BFloat16:
		bits = []uint64{0x7fc0, 0xffc1, 0x7f81, 0x7f80, 0xff80, 0, 0x8000, 1, 0x8001, 0x7f7f, 0xff7f, 0x3f80, 0xbf80}
	case float32:
		bits = []uint64{0x7fc00000, 0xffc00001, 0x7f800123, 0x7f800000, 0xff800000, 0, 0x80000000, 1, 0x80000001,
			0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000}
	case float64:
		bits = []uint64{0x7ff8000000000000, 0xfff8000000000001, 0x7ff0000000000123, 0x7ff0000000000000, 0xfff0000000000000,
			0, 1 << 63, 1, 1<<63 | 1, 0x7fefffffffffffff, 0xffefffffffffffff, 0x3ff0000000000000, 0xbff0000000000000}
	default:
		w := 8 * uint(unsafe.Sizeof(z))
		top := uint64(1) << (w - 1)
		all := ^uint64(0) >> (64 - w)
		// 0, 1, all ones (-1 or the maximum), the top bit (the minimum or 2^(w-1)), its
		// neighbours (the maximum of the signed), all ones but the last (-2, max-1).
		bits = []uint64{0, 1, all, top, top - 1, top + 1, all - 1}
	}
	out := make([]T, len(bits))
	for i, b := range bits {
		out[i] = fromBits[T](b)
	}
	return out
}

// genKeys returns n keys of pattern p.
func genKeys[T gpu.Elem](rng *rand.Rand, n int, p sortPattern) []T {
	var z T
	w := 8 * int(unsafe.Sizeof(z))
	out := make([]T, n)
	switch p {
	case spRandom:
		for i := range out {
			out[i] = randomOf[T](rng)
		}
	case spEqual:
		v := randomOf[T](rng)
		for i := range out {
			out[i] = v
		}
	case spSorted, spReverse:
		for i := range out {
			out[i] = randomOf[T](rng)
		}
		slices.SortFunc(out, func(a, b T) int { return cmp.Compare(orderKey(a), orderKey(b)) })
		if p == spReverse {
			slices.Reverse(out)
		}
	case spFew:
		vals := []T{randomOf[T](rng), randomOf[T](rng), randomOf[T](rng)}
		for i := range out {
			out[i] = vals[rng.IntN(len(vals))]
		}
	case spTopBits:
		// Keys differing in their top byte only (bool: its one bit).
		low := rng.Uint64() & (^uint64(0) >> (64 - w + 8))
		for i := range out {
			out[i] = fromBits[T](low | rng.Uint64()>>56<<(w-8))
		}
	case spLowBits:
		high := rng.Uint64() &^ 0xff
		for i := range out {
			out[i] = fromBits[T](high | rng.Uint64()&0xff)
		}
	case spSpecial:
		sp := specialsOf[T]()
		for i := range out {
			if rng.IntN(2) == 0 {
				out[i] = sp[rng.IntN(len(sp))]
			} else {
				out[i] = randomOf[T](rng)
			}
		}
	}
	return out
}

// The checks.

// sortOps selects the operations a case checks.
type sortOps uint

const (
	opSort      sortOps = 1 << iota // Sort and Argsort, ascending and descending
	opByKey                         // SortByKey with payloads of 8 and 1 bytes, ascending and descending
	opTopK                          // TopK, largest and smallest, k of 0, 1, a few, half and n
	opPartition                     // Partition and Argpartition
	opUnique                        // Unique with every return, and values alone
	opSearch                        // SearchSorted, both sides
	opQuantile                      // Median and Quantiles into float64 and float32
	opSortAsc                       // Sort and Argsort, ascending only
	opAll       = opSort | opByKey | opTopK | opPartition | opUnique | opSearch | opQuantile
)

// sortCase is one input: xs of shape, checked along axis.
type sortCase[T gpu.Elem] struct {
	what  string
	xs    []T
	keys  []uint64 // orderKey of xs
	shape []int
	axis  int
	a     *gpu.Array[T] // xs on the device (a view when the case makes one)
	ls    lineSet
}

// newCase uploads xs in shape (a given: xs is a's elements in row-major order).
func newCase[T gpu.Elem](t testing.TB, c *sortCtx, what string, xs []T, shape []int, axis int, a *gpu.Array[T]) *sortCase[T] {
	t.Helper()
	if a == nil {
		a = upload(t, c, xs, shape...)
	}
	keys := make([]uint64, len(xs))
	for i, x := range xs {
		keys[i] = orderKey(x)
	}
	ax := axis
	if ax < 0 {
		ax += max(1, len(shape))
	}
	return &sortCase[T]{what: fmt.Sprintf("%v %s shape %v axis %d", dtype.Of[T](), what, shape, axis), xs: xs, keys: keys,
		shape: shape, axis: axis, a: a, ls: linesOf(shape, ax)}
}

// unchanged fails t if the case's input changed.
func (sc *sortCase[T]) unchanged(t testing.TB, op string) {
	t.Helper()
	for i, v := range hostOf(t, sc.a) {
		if bitsOf(v) != bitsOf(sc.xs[i]) {
			t.Fatalf("%s: %s changed its input at %d: %v, was %v", sc.what, op, i, v, sc.xs[i])
		}
	}
}

// checkSortOps runs the operations ops on xs (shape, along axis) against the references.
func checkSortOps[T gpu.Elem](t *testing.T, c *sortCtx, what string, xs []T, shape []int, axis int, ops sortOps) {
	t.Helper()
	runSortOps(t, c, newCase(t, c, what, xs, shape, axis, nil), ops)
}

func runSortOps[T gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T], ops sortOps) {
	t.Helper()
	// The references, per line: the stable permutation ascending and descending.
	var asc, desc [][]int
	if ops&(opSort|opSortAsc|opByKey|opTopK|opPartition) != 0 {
		for l := range sc.ls.starts {
			k := sc.ls.line(sc.keys, l)
			asc = append(asc, refArgsort(k, false))
			if ops&^opSortAsc != 0 {
				desc = append(desc, refArgsort(k, true))
			}
		}
	}
	if ops&(opSort|opSortAsc) != 0 {
		checkSortArgsort(t, c, sc, asc, false)
	}
	if ops&opSort != 0 {
		checkSortArgsort(t, c, sc, desc, true)
	}
	if ops&opByKey != 0 {
		checkByKey[T, float64](t, c, sc, asc, false)
		checkByKey[T, uint8](t, c, sc, desc, true)
	}
	if ops&opTopK != 0 {
		ln := sc.ls.n
		ks := distinct(0, min(1, ln), min(3, ln), ln/2, ln)
		if ln > 1<<17 {
			ks = []int{1, 100} // (k of n/2 and n: at the smaller sizes)
		}
		for _, k := range ks {
			if k == 0 && len(sc.shape) == 0 {
				continue // (an error: TestSortEmpty)
			}
			checkTopK(t, c, sc, desc, k, false)
			checkTopK(t, c, sc, asc, k, true)
		}
	}
	if ops&opPartition != 0 && sc.ls.n > 0 {
		ln := sc.ls.n
		kths := distinct(0, ln/3, ln-1, -1)
		if ln > 1<<17 {
			kths = []int{ln / 3}
		}
		for _, kth := range kths {
			checkPartition(t, c, sc, asc, kth)
		}
	}
	if ops&opUnique != 0 {
		checkUnique(t, c, sc)
	}
	if ops&opSearch != 0 {
		checkSearchSorted(t, c, sc)
	}
	if ops&opQuantile != 0 {
		checkQuantiles(t, c, sc)
	}
}

// distinct returns the distinct values of xs, in increasing order.
func distinct(xs ...int) []int {
	slices.Sort(xs)
	return slices.Compact(xs)
}

// sortOpts returns Descending() when desc.
func sortOpts(desc bool) []gpu.SortOption {
	if desc {
		return []gpu.SortOption{gpu.Descending()}
	}
	return nil
}

func elemSize[T gpu.Elem]() int { var z T; return int(unsafe.Sizeof(z)) }

// checkSortArgsort checks Sort and Argsort of the case against ref (the permutation of
// each line).
func checkSortArgsort[T gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T], ref [][]int, desc bool) {
	t.Helper()
	n := len(sc.xs)
	c.poison(t, n*elemSize[T](), 8*n)
	srt, err := gpu.Sort(c.s, sc.a, sc.axis, sortOpts(desc)...)
	if err != nil {
		t.Fatalf("%s: Sort desc=%v: %v", sc.what, desc, err)
	}
	defer srt.Free()
	c.poison(t, n*elemSize[T](), 8*n)
	idx, err := gpu.Argsort(c.s, sc.a, sc.axis, sortOpts(desc)...)
	if err != nil {
		t.Fatalf("%s: Argsort desc=%v: %v", sc.what, desc, err)
	}
	defer idx.Free()
	if !slices.Equal(srt.Shape(), sc.a.Shape()) || !slices.Equal(idx.Shape(), sc.a.Shape()) {
		t.Fatalf("%s: Sort's shape %v, Argsort's %v, want %v", sc.what, srt.Shape(), idx.Shape(), sc.a.Shape())
	}
	got, gi := hostOf(t, srt), hostOf(t, idx)
	for l, st := range sc.ls.starts {
		for k, j := range ref[l] {
			o := st + k*sc.ls.stride
			want := sc.xs[st+j*sc.ls.stride]
			if gi[o] != int64(j) || bitsOf(got[o]) != bitsOf(want) {
				t.Fatalf("%s desc=%v: line %d, element %d: Sort %v (%#x), Argsort %d; want %v (%#x), %d",
					sc.what, desc, l, k, got[o], bitsOf(got[o]), gi[o], want, bitsOf(want), j)
			}
		}
	}
	sc.unchanged(t, "Sort/Argsort")
}

// checkByKey checks SortByKey of the case with a random payload of V.
func checkByKey[T, V gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T], ref [][]int, desc bool) {
	t.Helper()
	n := len(sc.xs)
	vs := make([]V, n)
	for i := range vs {
		vs[i] = randomOf[V](c.rng)
	}
	va := upload(t, c, vs, sc.shape...)
	c.poison(t, n*elemSize[T](), n*elemSize[V]())
	ko, vo, err := gpu.SortByKey(c.s, sc.a, va, sc.axis, sortOpts(desc)...)
	if err != nil {
		t.Fatalf("%s: SortByKey[%v] desc=%v: %v", sc.what, dtype.Of[V](), desc, err)
	}
	defer ko.Free()
	defer vo.Free()
	gk, gv := hostOf(t, ko), hostOf(t, vo)
	for l, st := range sc.ls.starts {
		for k, j := range ref[l] {
			o, i := st+k*sc.ls.stride, st+j*sc.ls.stride
			if bitsOf(gk[o]) != bitsOf(sc.xs[i]) || bitsOf(gv[o]) != bitsOf(vs[i]) {
				t.Fatalf("%s: SortByKey[%v] desc=%v: line %d, element %d: (%v, %v), want (%v, %v)",
					sc.what, dtype.Of[V](), desc, l, k, gk[o], gv[o], sc.xs[i], vs[i])
			}
		}
	}
	sc.unchanged(t, "SortByKey")
	for i, v := range hostOf(t, va) {
		if bitsOf(v) != bitsOf(vs[i]) {
			t.Fatalf("%s: SortByKey changed its payload at %d", sc.what, i)
		}
	}
}

// checkTopK checks TopK (smallest: with Smallest) of the case for k against ref (the
// descending permutation for the largest, the ascending for the smallest).
func checkTopK[T gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T], ref [][]int, k int, smallest bool) {
	t.Helper()
	var opts []gpu.SortOption
	if smallest {
		opts = append(opts, gpu.Smallest())
	}
	shape := slices.Clone(sc.a.Shape())
	if len(shape) > 0 {
		shape[(sc.axis+len(shape))%len(shape)] = k
	}
	m := len(sc.ls.starts) * k
	c.poison(t, m*elemSize[T](), 8*m)
	v, idx, err := gpu.TopK(c.s, sc.a, k, sc.axis, opts...)
	if err != nil {
		t.Fatalf("%s: TopK k=%d smallest=%v: %v", sc.what, k, smallest, err)
	}
	defer v.Free()
	defer idx.Free()
	if !slices.Equal(v.Shape(), shape) || !slices.Equal(idx.Shape(), shape) {
		t.Fatalf("%s: TopK k=%d: shapes %v and %v, want %v", sc.what, k, v.Shape(), idx.Shape(), shape)
	}
	gv, gi := hostOf(t, v), hostOf(t, idx)
	for l, st := range sc.ls.starts {
		base := sc.ls.outStart(l, k)
		for j := 0; j < k; j++ {
			o, w := base+j*sc.ls.stride, ref[l][j]
			want := sc.xs[st+w*sc.ls.stride]
			if gi[o] != int64(w) || bitsOf(gv[o]) != bitsOf(want) {
				t.Fatalf("%s: TopK k=%d smallest=%v: line %d, %d: (%v, %d), want (%v, %d)",
					sc.what, k, smallest, l, j, gv[o], gi[o], want, w)
			}
		}
	}
	sc.unchanged(t, "TopK")
}

// checkPartition checks Partition and Argpartition of the case around kth: the kth
// element of each line is the one the sorted line has there, none before it is
// larger, none after it smaller, and the line holds the input's elements (Argpartition:
// a permutation that does the same).
func checkPartition[T gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T], asc [][]int, kth int) {
	t.Helper()
	n, ln := len(sc.xs), sc.ls.n
	kk := (kth + ln) % ln
	c.poison(t, n*elemSize[T](), 8*n)
	p, err := gpu.Partition(c.s, sc.a, kth, sc.axis)
	if err != nil {
		t.Fatalf("%s: Partition kth=%d: %v", sc.what, kth, err)
	}
	defer p.Free()
	c.poison(t, n*elemSize[T](), 8*n)
	pi, err := gpu.Argpartition(c.s, sc.a, kth, sc.axis)
	if err != nil {
		t.Fatalf("%s: Argpartition kth=%d: %v", sc.what, kth, err)
	}
	defer pi.Free()
	if !slices.Equal(p.Shape(), sc.a.Shape()) || !slices.Equal(pi.Shape(), sc.a.Shape()) {
		t.Fatalf("%s: Partition's shape %v, Argpartition's %v", sc.what, p.Shape(), pi.Shape())
	}
	gp, gi := hostOf(t, p), hostOf(t, pi)
	for l, st := range sc.ls.starts {
		pivot := sc.keys[st+asc[l][kk]*sc.ls.stride]
		// The values, in the partition and along Argpartition's indices.
		vals := make([]T, ln)
		along := make([]uint64, ln)
		seen := make([]bool, ln)
		for k := range ln {
			vals[k] = gp[st+k*sc.ls.stride]
			j := gi[st+k*sc.ls.stride]
			if j < 0 || j >= int64(ln) || seen[j] {
				t.Fatalf("%s: Argpartition kth=%d: line %d: index %d at %d: not a permutation", sc.what, kth, l, j, k)
			}
			seen[j] = true
			along[k] = sc.keys[st+int(j)*sc.ls.stride]
		}
		for _, x := range []struct {
			op   string
			keys []uint64
		}{{"Partition", keysOf(vals)}, {"Argpartition", along}} {
			for k, key := range x.keys {
				if k < kk && key > pivot || k == kk && key != pivot || k > kk && key < pivot {
					t.Fatalf("%s: %s kth=%d: line %d: element %d is out of place (key %#x, the kth's %#x)", sc.what, x.op, kth, l, k, key, pivot)
				}
			}
		}
		// The partition holds the line's elements, bit for bit.
		in := make([]uint64, ln)
		out := make([]uint64, ln)
		for k := range ln {
			in[k], out[k] = bitsOf(sc.xs[st+k*sc.ls.stride]), bitsOf(vals[k])
		}
		slices.Sort(in)
		slices.Sort(out)
		if !slices.Equal(in, out) {
			t.Fatalf("%s: Partition kth=%d: line %d does not hold the input's elements", sc.what, kth, l)
		}
	}
	sc.unchanged(t, "Partition")
}

func keysOf[T gpu.Elem](xs []T) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = orderKey(x)
	}
	return out
}

// checkUnique checks Unique of the case (flattened) with every return, and values alone,
// against numpy.unique's: the first of each run of equal keys of the stable sort.
func checkUnique[T gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T]) {
	t.Helper()
	n := len(sc.xs)
	perm := refArgsort(sc.keys, false)
	var vals []T
	var first, counts []int64
	inv := make([]int64, n)
	for i, p := range perm {
		if i == 0 || sc.keys[perm[i-1]] != sc.keys[p] {
			vals = append(vals, sc.xs[p])
			first = append(first, int64(p))
			counts = append(counts, 0)
		}
		counts[len(counts)-1]++
		inv[p] = int64(len(vals) - 1)
	}
	for _, all := range []bool{true, false} {
		var opts []gpu.UniqueOption
		if all {
			opts = []gpu.UniqueOption{gpu.ReturnIndex(), gpu.ReturnInverse(), gpu.ReturnCounts()}
		}
		c.poison(t, n*elemSize[T](), 8*n, len(vals)*elemSize[T](), 8*len(vals))
		r, err := gpu.Unique(context.Background(), c.s, sc.a, opts...)
		if err != nil {
			t.Fatalf("%s: Unique: %v", sc.what, err)
		}
		gv := hostOf(t, r.Values)
		if len(gv) != len(vals) || !slices.Equal(r.Values.Shape(), []int{len(vals)}) {
			r.Free()
			t.Fatalf("%s: Unique (all returns %v): %d values (shape %v), want %d", sc.what, all, len(gv), r.Values.Shape(), len(vals))
		}
		for i := range vals {
			if bitsOf(gv[i]) != bitsOf(vals[i]) {
				r.Free()
				t.Fatalf("%s: Unique (all returns %v): value %d = %v (%#x), want %v (%#x)", sc.what, all, i, gv[i], bitsOf(gv[i]), vals[i], bitsOf(vals[i]))
			}
		}
		if !all {
			if r.Indices != nil || r.Inverse != nil || r.Counts != nil {
				t.Fatalf("%s: Unique returned arrays not asked for", sc.what)
			}
			r.Free()
			continue
		}
		gf, gi, gc := hostOf(t, r.Indices), hostOf(t, r.Inverse), hostOf(t, r.Counts)
		shapeOK := slices.Equal(r.Inverse.Shape(), sc.a.Shape()) && slices.Equal(r.Indices.Shape(), []int{len(vals)}) &&
			slices.Equal(r.Counts.Shape(), []int{len(vals)})
		r.Free()
		if !shapeOK {
			t.Fatalf("%s: Unique's shapes: indices, inverse, counts not [%d], %v, [%d]", sc.what, len(vals), sc.a.Shape(), len(vals))
		}
		for i := range vals {
			if gf[i] != first[i] || gc[i] != counts[i] {
				t.Fatalf("%s: Unique %d (%v): first index %d, count %d; want %d, %d", sc.what, i, vals[i], gf[i], gc[i], first[i], counts[i])
			}
		}
		for i := range inv {
			if gi[i] != inv[i] {
				t.Fatalf("%s: Unique's inverse at %d: %d, want %d", sc.what, i, gi[i], inv[i])
			}
		}
	}
	sc.unchanged(t, "Unique")
}

// checkSearchSorted checks SearchSorted in the case's elements sorted (flattened, 1-D)
// for queries of every kind: the elements themselves (duplicates: both sides differ),
// fresh random values, T's special values (below and past both ends), as a 2-D array.
func checkSearchSorted[T gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T]) {
	t.Helper()
	m := len(sc.xs)
	perm := refArgsort(sc.keys, false)
	sorted := make([]T, m)
	skeys := make([]uint64, m)
	for i, p := range perm {
		sorted[i], skeys[i] = sc.xs[p], sc.keys[p]
	}
	q := append([]T(nil), specialsOf[T]()...)
	for range min(m, 500) {
		q = append(q, sc.xs[c.rng.IntN(m)])
	}
	if m > 0 {
		q = append(q, sorted[0], sorted[m-1])
	}
	for range 300 {
		q = append(q, randomOf[T](c.rng))
	}
	for len(q)%4 != 0 {
		q = append(q, randomOf[T](c.rng))
	}
	qk := keysOf(q)
	a := upload(t, c, sorted, m)
	v := upload(t, c, q, 4, len(q)/4)
	for _, side := range []gpu.Side{gpu.SideLeft, gpu.SideRight} {
		c.poison(t, 8*len(q))
		got, err := gpu.SearchSorted(c.s, a, v, side)
		if err != nil {
			t.Fatalf("%s: SearchSorted side %d: %v", sc.what, side, err)
		}
		g := hostOf(t, got)
		shape := got.Shape()
		got.Free()
		if !slices.Equal(shape, v.Shape()) {
			t.Fatalf("%s: SearchSorted's shape %v, want %v", sc.what, shape, v.Shape())
		}
		for i, k := range qk {
			want := sort.Search(m, func(j int) bool {
				if side == gpu.SideLeft {
					return skeys[j] >= k
				}
				return skeys[j] > k
			})
			if g[i] != int64(want) {
				t.Fatalf("%s: SearchSorted side %d in %d sorted elements: query %d (%v): %d, want %d", sc.what, side, m, i, q[i], g[i], want)
			}
		}
	}
	for i, x := range hostOf(t, a) {
		if bitsOf(x) != bitsOf(sorted[i]) {
			t.Fatalf("%s: SearchSorted changed its array at %d", sc.what, i)
		}
	}
	for i, x := range hostOf(t, v) {
		if bitsOf(x) != bitsOf(q[i]) {
			t.Fatalf("%s: SearchSorted changed its queries at %d", sc.what, i)
		}
	}
}

// refQuantile is numpy.quantile's linear method of sorted (float64, NaN last) at q, or
// numpy.median's with median: NaN for no values or a NaN among them.
func refQuantile(sorted []float64, q float64, median bool) float64 {
	n := len(sorted)
	if n == 0 || math.IsNaN(sorted[n-1]) {
		return math.NaN()
	}
	if median {
		if n%2 == 1 {
			return sorted[n/2]
		}
		return (sorted[n/2-1] + sorted[n/2]) / 2
	}
	pos := q * float64(n-1)
	lo := int(math.Floor(pos))
	hi := min(lo+1, n-1)
	f := pos - float64(lo)
	if pos >= float64(n-1) {
		// numpy's _get_indexes: at or past the last element both indexes are -1 (the
		// last element) and gamma is pos - (-1): a line of one -0.0 gives -0.0.
		lo, hi, f = n-1, n-1, pos+1
	}
	a, b := sorted[lo], sorted[hi]
	d := b - a
	if f >= 0.5 {
		return b - float64(d*float64(1-f)) // numpy's _lerp (the conversions: no fused multiply-add)
	}
	return a + float64(d*f)
}

// checkQuantiles checks Quantiles (into float64 and float32), Quantile, Median
// (float64), NanQuantiles and NanMedian (the line's NaNs, sorted last, left out) along
// the case's axis and over every axis (the default; a 0-d array: its element). A NaN
// result is the canonical NaN (the package's NaN policy).
func checkQuantiles[T gpu.Elem](t *testing.T, c *sortCtx, sc *sortCase[T]) {
	t.Helper()
	qs := []float64{0, 0.25, 0.5, 1, c.rng.Float64()}
	nd := len(sc.shape)
	for _, whole := range []bool{false, true} {
		if !whole && nd == 0 || whole && nd == 1 {
			continue // (a 1-d array's axis is the whole)
		}
		// The lines reduced (their starts, or the whole array), the results' count and
		// each line's result.
		var opts []gpu.ReduceOption
		lineOf := func(l int) []float64 {
			v := make([]float64, sc.ls.n)
			for k, j := range refArgsort(sc.ls.line(sc.keys, l), false) {
				v[k] = toFloat(sc.xs[sc.ls.starts[l]+j*sc.ls.stride])
			}
			return v
		}
		lines, resultOf := len(sc.ls.starts), func(l int) int { return sc.ls.outStart(l, 1) }
		nout := 1
		if whole {
			lineOf = func(int) []float64 {
				v := make([]float64, len(sc.xs))
				for k, j := range refArgsort(sc.keys, false) {
					v[k] = toFloat(sc.xs[j])
				}
				return v
			}
			lines, resultOf = 1, func(int) int { return 0 }
		} else {
			opts = append(opts, gpu.Axes(sc.axis))
			ax := (sc.axis + nd) % nd
			for k, e := range sc.shape {
				if k != ax {
					nout *= e
				}
			}
		}
		c.poison(t, 8*nout*len(qs), 4*nout*len(qs), 8*nout)
		q64, err := gpu.Quantiles[float64](c.s, sc.a, qs, opts...)
		if err != nil {
			t.Fatalf("%s: Quantiles[float64] whole=%v: %v", sc.what, whole, err)
		}
		c.poison(t, 8*nout*len(qs), 4*nout*len(qs), 8*nout)
		q32, err := gpu.Quantiles[float32](c.s, sc.a, qs, opts...)
		if err != nil {
			t.Fatalf("%s: Quantiles[float32] whole=%v: %v", sc.what, whole, err)
		}
		f64 := func(what string, f func() (*gpu.Array[float64], error)) []float64 {
			c.poison(t, 8*nout*len(qs), 8*nout)
			r, err := f()
			if err != nil {
				t.Fatalf("%s: %s whole=%v: %v", sc.what, what, whole, err)
			}
			g := hostOf(t, r)
			r.Free()
			return g
		}
		gm := f64("Median", func() (*gpu.Array[float64], error) { return gpu.Median[float64](c.s, sc.a, opts...) })
		g1 := f64("Quantile", func() (*gpu.Array[float64], error) { return gpu.Quantile[float64](c.s, sc.a, qs[4], opts...) })
		gnm := f64("NanMedian", func() (*gpu.Array[float64], error) { return gpu.NanMedian[float64](c.s, sc.a, opts...) })
		gn := f64("NanQuantiles", func() (*gpu.Array[float64], error) { return gpu.NanQuantiles[float64](c.s, sc.a, qs, opts...) })
		g64, g32 := hostOf(t, q64), hostOf(t, q32)
		q64.Free()
		q32.Free()
		if len(gm) != nout || len(g1) != nout || len(gnm) != nout || len(g64) != nout*len(qs) || len(g32) != nout*len(qs) || len(gn) != nout*len(qs) {
			t.Fatalf("%s: whole=%v: %d, %d and %d medians and quantiles, %d, %d and %d of several, want %d and %d", sc.what, whole,
				len(gm), len(g1), len(gnm), len(g64), len(g32), len(gn), nout, nout*len(qs))
		}
		// Equal, a zero's sign too; a NaN is the canonical NaN.
		same := func(got, want float64) bool {
			if math.IsNaN(want) {
				return math.Float64bits(got) == 0x7fffffffffffffff
			}
			return got == want && math.Signbit(got) == math.Signbit(want)
		}
		same32 := func(got float32, want float64) bool {
			if math.IsNaN(want) {
				return math.Float32bits(got) == 0x7fffffff
			}
			w := float32(want)
			return got == w && math.Signbit(float64(got)) == math.Signbit(float64(w))
		}
		for l := range lines {
			var v []float64 // sorted stably (the sign of a zero result is that of the zero the stable sort puts there)
			if sc.ls.n > 0 && !(whole && len(sc.xs) == 0) {
				v = lineOf(l)
			}
			nv := len(v) // the values but NaNs (sorted last)
			for nv > 0 && math.IsNaN(v[nv-1]) {
				nv--
			}
			o := resultOf(l)
			if w := refQuantile(v, 0, true); !same(gm[o], w) {
				t.Fatalf("%s: whole=%v: median of line %d: %v (%#x), want %v", sc.what, whole, l, gm[o], math.Float64bits(gm[o]), w)
			}
			if w := refQuantile(v[:nv], 0, true); !same(gnm[o], w) {
				t.Fatalf("%s: whole=%v: NanMedian of line %d: %v (%#x), want %v", sc.what, whole, l, gnm[o], math.Float64bits(gnm[o]), w)
			}
			if w := refQuantile(v, qs[4], false); !same(g1[o], w) {
				t.Fatalf("%s: whole=%v: Quantile %v of line %d: %v (%#x), want %v", sc.what, whole, qs[4], l, g1[o], math.Float64bits(g1[o]), w)
			}
			for j, q := range qs {
				w := refQuantile(v, q, false)
				if g := g64[j*nout+o]; !same(g, w) {
					t.Fatalf("%s: whole=%v: quantile %v of line %d: %v (%#x), want %v", sc.what, whole, q, l, g, math.Float64bits(g), w)
				}
				if g := g32[j*nout+o]; !same32(g, w) {
					t.Fatalf("%s: whole=%v: float32 quantile %v of line %d: %v (%#x), want %v", sc.what, whole, q, l, g, math.Float32bits(g), float32(w))
				}
				if w, g := refQuantile(v[:nv], q, false), gn[j*nout+o]; !same(g, w) {
					t.Fatalf("%s: whole=%v: NanQuantiles %v of line %d: %v (%#x), want %v", sc.what, whole, q, l, g, math.Float64bits(g), w)
				}
			}
		}
	}
	sc.unchanged(t, "Median/Quantiles")
}

// The cases.

// sortType runs a test over one element type.
type sortType struct {
	name string
	size int
	// run checks ops on n keys of pattern p in shape (nil: [n]) along axis.
	run func(t *testing.T, c *sortCtx, n int, p sortPattern, shape []int, axis int, ops sortOps)
}

func typeOf[T gpu.Elem]() sortType {
	return sortType{name: dtype.Of[T]().String(), size: elemSize[T](),
		run: func(t *testing.T, c *sortCtx, n int, p sortPattern, shape []int, axis int, ops sortOps) {
			t.Helper()
			if shape == nil {
				shape = []int{n}
			}
			checkSortOps(t, c, p.String(), genKeys[T](c.rng, n, p), shape, axis, ops)
		}}
}

// sortTypes is every element type.
var sortTypes = []sortType{
	typeOf[bool](), typeOf[int8](), typeOf[uint8](), typeOf[int16](), typeOf[uint16](), typeOf[half.Float16](),
	typeOf[half.BFloat16](), typeOf[int32](), typeOf[uint32](), typeOf[float32](), typeOf[int64](), typeOf[uint64](),
	typeOf[float64](),
}

// testSortTypes runs every operation on every element type with its special values, at
// a length under one block's tile and one past it (the block sort and the radix passes
// on CUDA; the merge sort and the passes on the CPU), and as 2-D rows.
func testSortTypes(t *testing.T, c *sortCtx) {
	for _, ty := range sortTypes {
		t.Run(ty.name, func(t *testing.T) {
			ty.run(t, c, 300, spSpecial, nil, 0, opAll)
			ty.run(t, c, 4099, spSpecial, nil, -1, opAll)
			ty.run(t, c, 6*250, spRandom, []int{6, 250}, 1, opAll)
		})
	}
}

// sortLadder is the size ladder: around a warp, a block of 256 threads, the block
// sort's tiles (4096 keys of up to 4 bytes, 3072 of 8), a few tiles, and a large row.
var sortLadder = []int{0, 1, 2, 31, 32, 33, 255, 256, 257, 1023, 1024, 1025, 3071, 3072, 3073, 4095, 4096, 4097,
	8191, 8192, 8193, 12289, 65537, 1<<20 + 3}

// sortClasses are the ranges of sortTypes of one key width: 1, 2, 4 and 8 bytes.
var sortClasses = [][2]int{{0, 3}, {3, 7}, {7, 10}, {10, 13}}

// oneOfEachWidth reports whether type j is run i's type of its width (they rotate).
func oneOfEachWidth(i, j int) bool {
	for _, cl := range sortClasses {
		if j >= cl[0] && j < cl[1] {
			return j == cl[0]+i%(cl[1]-cl[0])
		}
	}
	return false
}

// testSortLadder runs the ladder: every operation for one type of each key width at
// every rung (the types rotating over the rungs), every type up to 5000 keys; 2^20+3
// keys sort, select and take quantiles. Quick runs take at each rung one type of 1, 2
// or 4 bytes (one block tile's size: 4096 keys) and one of 8 (3072 keys), past 5000
// keys sort and select only, and sort 2^20+3 keys of one type of up to 4 bytes
// ascending.
func testSortLadder(t *testing.T, c *sortCtx) {
	for i, n := range sortLadder {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			drawn := c.rng.IntN(10) // (quick runs' largest: keys of up to 4 bytes; 8-byte ones take twice the passes)
			for j, ty := range sortTypes {
				switch {
				case c.quick && n > 1<<17:
					if j != drawn {
						continue
					}
				case c.quick:
					if j != i%10 && j != 10+i%3 {
						continue
					}
				case n > 5000:
					if !oneOfEachWidth(i, j) {
						continue
					}
				}
				ops := opAll
				switch {
				case n > 1<<17 && c.quick:
					ops = opSortAsc
				case n > 1<<17:
					ops = opSort | opByKey | opTopK | opQuantile
				case n > 5000 && c.quick:
					ops = opSort | opTopK
				}
				ty.run(t, c, n, spRandom, nil, 0, ops)
			}
		})
	}
}

// testSortPatterns runs every digit pattern for every type and operation, in one
// block's tile and past it. Quick runs sort every type past the tile, and take one of
// the two sizes with every operation in turns.
func testSortPatterns(t *testing.T, c *sortCtx) {
	for p := sortPattern(0); p < spCount; p++ {
		t.Run(p.String(), func(t *testing.T) {
			for j, ty := range sortTypes {
				if c.quick {
					n, ops := 5000, opSort
					if (int(p)+j)%3 == 0 {
						n, ops = 1000+4000*(int(p)/3%2), opAll
					}
					ty.run(t, c, n, p, nil, 0, ops)
					continue
				}
				ty.run(t, c, 1000, p, nil, 0, opAll)
				ty.run(t, c, 5000, p, nil, 0, opAll&^opQuantile)
			}
		})
	}
}

// testSortTies: stability with many ties (two or three distinct keys, and all NaNs
// or all zeros of both signs), where argsort's indices must increase within equal keys
// and TopK's ties come in index order; every type's ties at once in the rows.
func testSortTies(t *testing.T, c *sortCtx) {
	for _, n := range []int{100, 4096, 9001} {
		f32 := make([]float32, n)
		f16 := make([]half.Float16, n)
		i8 := make([]int8, n)
		u64 := make([]uint64, n)
		for i := range f32 {
			switch c.rng.IntN(4) {
			case 0:
				f32[i], f16[i] = float32(math.Copysign(0, -1)), half.Float16FromBits(0x8000)
			case 1:
				f32[i], f16[i] = 0, 0
			case 2:
				f32[i], f16[i] = float32(math.NaN()), half.Float16FromBits(0x7e00)
			default:
				f32[i], f16[i] = math.Float32frombits(0xffc00001), half.Float16FromBits(0xfe01)
			}
			i8[i] = int8(c.rng.IntN(2)) * math.MinInt8
			u64[i] = uint64(c.rng.IntN(3)) << 62
		}
		checkSortOps(t, c, "±0 and NaNs", f32, []int{n}, 0, opAll)
		checkSortOps(t, c, "±0 and NaNs", f16, []int{n}, 0, opAll)
		checkSortOps(t, c, "two keys", i8, []int{n}, 0, opAll)
		checkSortOps(t, c, "three keys", u64, []int{n}, 0, opAll)
	}
}

// testSortRows runs rows of 1 and 2 keys (many rows), and rows of 10^6 keys (quick
// runs: one row, sorted ascending).
func testSortRows(t *testing.T, c *sortCtx) {
	for _, ty := range sortTypes {
		t.Run(ty.name, func(t *testing.T) {
			ty.run(t, c, 1000, spSpecial, []int{1000, 1}, 1, opAll)
			ty.run(t, c, 2*777, spSpecial, []int{777, 2}, -1, opAll)
			if !c.quick {
				ty.run(t, c, 2*3000, spFew, []int{3000, 2}, 1, opAll&^opQuantile)
			}
		})
	}
	t.Run("1e6", func(t *testing.T) {
		const n = 1000000
		if c.quick {
			typeOf[float32]().run(t, c, n, spSpecial, []int{1, n}, 1, opSortAsc)
			return
		}
		typeOf[float32]().run(t, c, n, spSpecial, []int{1, n}, 1, opAll)
		typeOf[int16]().run(t, c, 2*n, spFew, []int{2, n}, -1, opSort|opTopK)
	})
}

// testSortAxes runs every operation along every axis of 3-D arrays (negative axes too),
// for every type on a small array and some on larger ones whose lines pass a tile.
func testSortAxes(t *testing.T, c *sortCtx) {
	for _, ty := range sortTypes {
		t.Run(ty.name, func(t *testing.T) {
			for axis := -3; axis < 3; axis++ {
				ty.run(t, c, 3*4*5, spSpecial, []int{3, 4, 5}, axis, opAll)
			}
		})
	}
	for i, shape := range [][]int{{7, 1, 300}, {2, 5000, 3}, {4097, 2, 1}} {
		for axis := range 3 {
			if c.quick && shape[axis] < 300 {
				continue // (quick: the long lines only)
			}
			ty := sortTypes[(i*3+axis)%len(sortTypes)]
			t.Run(fmt.Sprintf("%v/%d/%s", shape, axis, ty.name), func(t *testing.T) {
				ty.run(t, c, shape[0]*shape[1]*shape[2], spFew, shape, axis, opAll)
			})
		}
	}
}

// testSortViews sorts non-contiguous inputs: a transposed view and a strided slice
// (at an offset), along each axis; the views' parents unchanged.
func testSortViews(t *testing.T, c *sortCtx) {
	viewCases(t, c, genKeys[float32](c.rng, 2*50*30, spSpecial))
	viewCases(t, c, genKeys[half.BFloat16](c.rng, 2*50*30, spSpecial))
	viewCases(t, c, genKeys[int64](c.rng, 2*50*30, spSpecial))
}

func viewCases[T gpu.Elem](t *testing.T, c *sortCtx, xs []T) {
	t.Helper()
	parent := upload(t, c, xs, 2, 50, 30)
	// The transpose (30, 2, 50) and its elements in row-major order.
	tr, err := parent.Transpose(2, 0, 1)
	must(t, err)
	trx := make([]T, len(xs))
	for i := range 30 {
		for j := range 2 {
			for k := range 50 {
				trx[(i*2+j)*50+k] = xs[(j*50+k)*30+i]
			}
		}
	}
	// A slice: [:, 3:47:2-like rows... ] the rows 3..46 and columns 1..29 of each plane.
	sl, err := parent.Slice(gpu.R(0, 2), gpu.R(3, 47), gpu.R(1, 30))
	must(t, err)
	var slx []T
	for j := range 2 {
		for k := 3; k < 47; k++ {
			for i := 1; i < 30; i++ {
				slx = append(slx, xs[(j*50+k)*30+i])
			}
		}
	}
	for axis := range 3 {
		runSortOps(t, c, newCase(t, c, "transposed view", trx, []int{30, 2, 50}, axis, tr), opAll&^opSearch)
		runSortOps(t, c, newCase(t, c, "sliced view", slx, []int{2, 44, 29}, axis, sl), opAll&^opSearch)
	}
	for i, v := range hostOf(t, parent) {
		if bitsOf(v) != bitsOf(xs[i]) {
			t.Fatalf("%v: an operation on a view changed its parent at %d", dtype.Of[T](), i)
		}
	}
}

// testSortEmpty: arrays with an axis of length 0 (along it and along the others), a
// 0-d array, and Unique and SearchSorted of nothing.
func testSortEmpty(t *testing.T, c *sortCtx) {
	for _, shape := range [][]int{{0}, {3, 0}, {0, 4}, {2, 0, 3}} {
		for axis := range len(shape) {
			checkSortOps(t, c, "empty", []float32{}, shape, axis, opSort|opByKey|opTopK|opUnique|opSearch|opQuantile)
			checkSortOps(t, c, "empty", []int16{}, shape, axis, opSort|opByKey|opTopK|opUnique|opQuantile)
			// Partition of an empty axis has no kth; along another, it has one.
			if shape[axis] > 0 {
				checkSortOps(t, c, "empty", []uint8{}, shape, axis, opPartition)
			} else if _, err := gpu.Partition(c.s, upload(t, c, []uint8{}, shape...), 0, axis); err == nil {
				t.Errorf("Partition of an empty axis (shape %v, axis %d): no error", shape, axis)
			}
		}
	}
	// A 0-d array: one element; TopK of 0 of it is an error.
	for _, v := range []float64{math.NaN(), -2.5} {
		sc := newCase(t, c, "0-d", []float64{v}, nil, -1, nil)
		runSortOps(t, c, sc, opSort|opByKey|opTopK|opPartition|opUnique|opQuantile)
		if _, _, err := gpu.TopK(c.s, sc.a, 0, -1); err == nil {
			t.Errorf("TopK of 0 of a 0-d array: no error")
		}
	}
	// SearchSorted in an empty array: every query at 0; of no queries: no results.
	e := upload(t, c, []int32{}, 0)
	v := upload(t, c, genKeys[int32](c.rng, 6, spRandom), 2, 3)
	for _, side := range []gpu.Side{gpu.SideLeft, gpu.SideRight} {
		c.poison(t, 48)
		got, err := gpu.SearchSorted(c.s, e, v, side)
		must(t, err)
		if g := hostOf(t, got); !slices.Equal(g, make([]int64, 6)) || !slices.Equal(got.Shape(), []int{2, 3}) {
			t.Fatalf("SearchSorted side %d in an empty array: %v (shape %v), want zeros of shape [2 3]", side, g, got.Shape())
		}
		got.Free()
		a := upload(t, c, []int32{1, 2, 3}, 3)
		none, err := gpu.SearchSorted(c.s, a, upload(t, c, []int32{}, 0, 5), side)
		must(t, err)
		if !slices.Equal(none.Shape(), []int{0, 5}) {
			t.Fatalf("SearchSorted of no queries: shape %v, want [0 5]", none.Shape())
		}
		none.Free()
	}
}

// testSortPast2to31 argsorts a row of 2^31+3 one-byte keys (indices past 2^31, 16 GiB
// of them) and takes its TopK both ways, checked in O(n): Argsort's indices list, for
// each key from the smallest, the indices of that key in increasing order (the stable
// sort's). CUDA only (the other backends run the same code at the other tests' sizes),
// not in quick runs (-short, the race detector).
func testSortPast2to31(t *testing.T, c *sortCtx) {
	if c.s.Device().Backend() != "cuda" || c.quick {
		t.Skip("CUDA only, not with -short or the race detector: 2^31 keys")
	}
	n64 := int64(1)<<31 + 3
	if n64 > math.MaxInt {
		t.Skip("2^31 keys: a 64-bit platform's")
	}
	n := int(n64)
	xs := make([]uint8, n)
	x := c.rng.Uint64() | 1
	var cnt [256]int
	for i := range xs {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		xs[i] = uint8(x >> 56)
		cnt[xs[i]]++
	}
	a := upload(t, c, xs, n)
	idx, err := gpu.Argsort(c.s, a, 0)
	must(t, err)
	gi := hostOf(t, idx)
	must(t, idx.Free())
	// Where each key's run starts in the result.
	var next [256]int
	for v := 1; v < 256; v++ {
		next[v] = next[v-1] + cnt[v-1]
	}
	for i, v := range xs {
		if o := next[v]; gi[o] != int64(i) {
			t.Fatalf("Argsort of %d keys: at %d (key %d's run): %d, want %d", n, o, v, gi[o], i)
		}
		next[v]++
	}
	gi = nil
	for _, smallest := range []bool{false, true} {
		var opts []gpu.SortOption
		if smallest {
			opts = append(opts, gpu.Smallest())
		}
		const k = 5
		v, ix, err := gpu.TopK(c.s, a, k, 0, opts...)
		must(t, err)
		gv, gx := hostOf(t, v), hostOf(t, ix)
		v.Free()
		ix.Free()
		// The first k indices in the stable order, descending or ascending.
		var want []int64
		for step := 0; step < 256 && len(want) < k; step++ {
			key := uint8(255 - step)
			if smallest {
				key = uint8(step)
			}
			for i := 0; i < n && len(want) < k; i++ {
				if xs[i] == key {
					want = append(want, int64(i))
				}
			}
		}
		for j := range k {
			if gx[j] != want[j] || gv[j] != xs[want[j]] {
				t.Fatalf("TopK %d of %d keys smallest=%v: %d: (%d, %d), want (%d, %d)", k, n, smallest, j, gv[j], gx[j], xs[want[j]], want[j])
			}
		}
	}
	for i, v := range hostOf(t, a) {
		if v != xs[i] {
			t.Fatalf("Argsort or TopK changed its input at %d", i)
		}
	}
}
