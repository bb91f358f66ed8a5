package gpu_test

import (
	"bytes"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/half"
)

// TestQuantileSelect: Median, Quantile and Quantiles of one q, and their Nan
// variants (NanMedian, NanQuantile, NanQuantiles of one q), through the selection
// path (Tuning.QuantileSelect forced to 1) against the sort path (0), bit for bit,
// into float32 and float64, on every device and the simulator: float rows of random
// values with NaNs (of both signs, payloads differing), infinities around the
// selected positions, many ties (the upper neighbour equal to the lower one, and
// not), all -0, all +0, mixed zeros (the finish kernel's scan for the zero's sign),
// subnormals, NaNs alone, one valid element among NaNs, and mostly NaNs around zeros,
// infinities and ties; integer, uint8 and bool rows; float16, bfloat16 and float64
// keys; even and odd lengths (of the valid elements too); qs on an element (0, 1,
// 0.25 of 301: one neighbour, or NumPy's two at t = 0) and between two; several rows
// along the last axis, along the first (a transposed copy) and the whole array as one
// row. Every result lands on poisoned memory.
func TestQuantileSelect(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %#x", seed)
	run := func(t *testing.T, d *gpu.Device, s *gpu.Stream, quick bool) {
		rng := rand.New(rand.NewPCG(seed, 41))
		for k, n := range []int{301, 600, 6161} {
			// quick (the simulator): each type at one length (odd or even; with
			// -short the even length's half alone), the median and three quantiles,
			// the layouts other than rows for float32 alone. 6161 (devices, float32
			// and float64): rows of more than one chunk of the counting pass (on the
			// CPU backend in the whole-array layout), the Counts and Next reads
			// summed over blocks.
			nth := 0
			typ := func(name string, f func(t *testing.T, qc qsCfg)) {
				nth++
				if quick && (nth%2 != k || testing.Short() && k == 0) || n > 600 && (quick || name != "float32" && name != "float64") {
					return
				}
				t.Run(fmt.Sprintf("%d/%s", n, name), func(t *testing.T) {
					f(t, qsCfg{d: d, s: s, rng: rng, n: n, quick: quick, oneLayout: quick && name != "float32"})
				})
			}
			typ("float32", func(t *testing.T, qc qsCfg) {
				quantileSelectCase(t, qc, qsFloatRows(rng, n), func(v float64) float32 { return float32(v) })
			})
			typ("float64", func(t *testing.T, qc qsCfg) {
				quantileSelectCase(t, qc, qsFloatRows(rng, n), func(v float64) float64 { return v })
			})
			typ("float16", func(t *testing.T, qc qsCfg) { quantileSelectCase(t, qc, qsFloatRows(rng, n), half.NewFloat16) })
			typ("bfloat16", func(t *testing.T, qc qsCfg) { quantileSelectCase(t, qc, qsFloatRows(rng, n), half.NewBFloat16) })
			typ("int32", func(t *testing.T, qc qsCfg) {
				quantileSelectCase(t, qc, qsIntRows(rng, n, -1e9, 1e9), func(v float64) int32 { return int32(v) })
			})
			typ("int64", func(t *testing.T, qc qsCfg) {
				quantileSelectCase(t, qc, qsIntRows(rng, n, -1e18, 1e18), func(v float64) int64 { return int64(v) })
			})
			typ("uint8", func(t *testing.T, qc qsCfg) {
				quantileSelectCase(t, qc, qsIntRows(rng, n, 0, 255), func(v float64) uint8 { return uint8(v) })
			})
			typ("bool", func(t *testing.T, qc qsCfg) {
				quantileSelectCase(t, qc, qsIntRows(rng, n, 0, 1), func(v float64) bool { return v != 0 })
			})
		}
	}
	forDevices(t, func(t *testing.T, d *gpu.Device, s *gpu.Stream) { run(t, d, s, false) })
	t.Run("sim", func(t *testing.T) {
		d, s := simStream(t)
		run(t, d, s, true)
	})
}

// qsFloatRows returns rows of n float values for TestQuantileSelect, one per pattern.
func qsFloatRows(rng *rand.Rand, n int) [][]float64 {
	negZero := math.Copysign(0, -1)
	inf := math.Inf(1)
	gen := func(f func(i int) float64) []float64 {
		row := make([]float64, n)
		for i := range row {
			row[i] = f(i)
		}
		return row
	}
	pick := func(vs ...float64) float64 { return vs[rng.IntN(len(vs))] }
	nan := func() float64 { // NaNs of both signs, payloads differing
		bits := []uint64{0x7ff8000000000000, 0xfff8000000000000, 0x7ffc000000000000, 0xfffe000000000000, 0x7ff8400000000000}
		return math.Float64frombits(bits[rng.IntN(len(bits))])
	}
	return [][]float64{
		gen(func(int) float64 { return rng.NormFloat64() * 100 }),
		gen(func(i int) float64 { // random with NaNs and infinities
			switch rng.IntN(30) {
			case 0:
				return nan()
			case 1:
				return pick(inf, -inf)
			}
			return rng.NormFloat64()
		}),
		gen(func(int) float64 { return pick(-inf, inf, 1.5, -2) }),         // infinities next to every position
		gen(func(int) float64 { return pick(-inf, inf, inf, inf, 3, 4) }),  // mostly +Inf
		gen(func(int) float64 { return pick(-1, 0, negZero, 1, 2, 2, 2) }), // many ties
		gen(func(int) float64 { return negZero }),
		gen(func(int) float64 { return 0 }),
		gen(func(int) float64 { return pick(0, negZero) }), // mixed zeros: the scan
		gen(func(int) float64 { // mixed zeros among a few others
			switch rng.IntN(10) {
			case 0:
				return pick(-inf, inf, 5e-324, -5e-324, 1e-40, -1e-40)
			}
			return pick(0, negZero)
		}),
		gen(func(int) float64 { return pick(0, negZero, 0, 0, math.NaN()) }),
		gen(func(int) float64 { return pick(1e-40, -1e-40, 6e-8, -6e-8, 1e-310, 0) }), // subnormals
		gen(func(int) float64 { return nan() }),                                       // NaNs alone
		gen(func(i int) float64 { // one valid element
			if i == n/3 {
				return -3.5
			}
			return nan()
		}),
		gen(func(i int) float64 { // one valid element, -0.0 (numpy's result: -0.0 at every q)
			if i == 2*n/3 {
				return negZero
			}
			return nan()
		}),
		gen(func(int) float64 { // mostly NaN; zeros of both signs, infinities and ties in the middle of the others
			switch rng.IntN(6) {
			case 0:
				return pick(0, negZero)
			case 1:
				return pick(inf, -inf)
			case 2:
				return 2.5
			}
			return nan()
		}),
	}
}

// qsIntRows returns rows of n integer values in [lo, hi] (random, and few distinct).
func qsIntRows(rng *rand.Rand, n int, lo, hi float64) [][]float64 {
	rows := make([][]float64, 3)
	for r := range rows {
		rows[r] = make([]float64, n)
		for i := range rows[r] {
			switch r {
			case 0:
				rows[r][i] = lo + math.Floor(rng.Float64()*(hi-lo+1))
			case 1:
				rows[r][i] = []float64{lo, hi, math.Round((lo + hi) / 2)}[rng.IntN(3)]
			default:
				rows[r][i] = lo
			}
		}
	}
	return rows
}

// qsCfg is what a case of TestQuantileSelect runs on: with quick, the median and three
// quantiles (one as Quantiles); with oneLayout, the layout of rows alone.
type qsCfg struct {
	d                *gpu.Device
	s                *gpu.Stream
	rng              *rand.Rand
	n                int
	quick, oneLayout bool
}

// quantileSelectCase runs the comparison of TestQuantileSelect for rows of n elements
// of T (conv from float64), over each layout and output type.
func quantileSelectCase[T gpu.Elem](t *testing.T, qc qsCfg, rows [][]float64, conv func(float64) T) {
	d, s, rng, n := qc.d, qc.s, qc.rng, qc.n
	nr := len(rows)
	xs := make([]T, nr*n)
	for r, row := range rows {
		for i, v := range row {
			xs[r*n+i] = conv(v)
		}
	}
	xt := make([]T, nr*n) // the transpose
	for r := range nr {
		for i := range n {
			xt[i*nr+r] = xs[r*n+i]
		}
	}
	qs := []float64{0, 0.25, 0.5, 1, rng.Float64(), rng.Float64(), 1 - 1e-9*rng.Float64()}
	if qc.quick {
		qs = []float64{[]float64{0, 1}[rng.IntN(2)], []float64{0.25, 0.5}[rng.IntN(2)], rng.Float64()}
	}
	layouts := []struct {
		name  string
		src   []T
		shape []int
		opts  []gpu.ReduceOption
	}{
		{"rows", xs, []int{nr, n}, []gpu.ReduceOption{gpu.Axes(1)}},
		{"axis0", xt, []int{n, nr}, []gpu.ReduceOption{gpu.Axes(0)}},
		{"whole", xs[n : 2*n], []int{n}, nil},
	}
	if qc.oneLayout {
		layouts = layouts[:1]
	}
	for _, lay := range layouts {
		a := mustArr[T](t)(gpu.FromSlice(s, lay.src, lay.shape...))
		for qi, mq := range append([]float64{-1}, qs...) { // (-1: the median)
			for _, many := range []bool{false, true} {
				for _, nan := range []bool{false, true} {
					if mq < 0 && many || qc.quick && many != (mq == qs[len(qs)-1]) || qc.quick && mq >= 0 && nan != (qi%2 == 0) {
						continue
					}
					what := fmt.Sprintf("%s/q=%v/quantiles=%v/nan=%v", lay.name, mq, many, nan)
					qsCompare(t, d, s, what+"/float32", qsCall[float32](s, a, mq, many, nan, lay.opts))
					qsCompare(t, d, s, what+"/float64", qsCall[float64](s, a, mq, many, nan, lay.opts))
				}
			}
		}
		if got := toSlice(t, a); !bytes.Equal(qsBytes(got), qsBytes(lay.src)) {
			t.Errorf("%s: the input changed", lay.name)
		}
		a.Free()
	}
}

// qsCall returns the call of TestQuantileSelect: Median (mq < 0), Quantiles of [mq]
// (many) or Quantile of mq; with nan, NanMedian, NanQuantiles or NanQuantile.
func qsCall[R gpu.Float, T gpu.Elem](s *gpu.Stream, a *gpu.Array[T], mq float64, many, nan bool, opts []gpu.ReduceOption) func() (*gpu.Array[R], error) {
	return func() (*gpu.Array[R], error) {
		switch {
		case mq < 0 && nan:
			return gpu.NanMedian[R](s, a, opts...)
		case mq < 0:
			return gpu.Median[R](s, a, opts...)
		case many && nan:
			return gpu.NanQuantiles[R](s, a, []float64{mq}, opts...)
		case many:
			return gpu.Quantiles[R](s, a, []float64{mq}, opts...)
		case nan:
			return gpu.NanQuantile[R](s, a, mq, opts...)
		}
		return gpu.Quantile[R](s, a, mq, opts...)
	}
}

// qsCompare runs call with Tuning.QuantileSelect 1 and 0, each result over poisoned
// memory, and requires the same bits.
func qsCompare[R float32 | float64](t *testing.T, d *gpu.Device, s *gpu.Stream, what string, call func() (*gpu.Array[R], error)) {
	t.Helper()
	var res [2][]R
	for i, sel := range []int{1, 0} {
		tu := d.Tuning()
		tu.QuantileSelect, tu.QuantileSelectTotal = sel, 0
		old, err := d.SetTuning(tu)
		if err != nil {
			t.Fatal(err)
		}
		qsPoison(t, s, 64)
		r, err := call()
		d.SetTuning(old)
		if err != nil {
			t.Fatalf("%s (QuantileSelect %d): %v", what, sel, err)
		}
		res[i] = toSlice(t, r)
		r.Free()
	}
	if !bytes.Equal(qsBytes(res[0]), qsBytes(res[1])) {
		t.Fatalf("%s: selected %v, sorted %v", what, res[0], res[1])
	}
	for _, v := range res[0] {
		if v != v && nanBits(v) != canonNaN[R]() {
			t.Fatalf("%s: a NaN result %#x, not the canonical NaN", what, nanBits(v))
		}
	}
}

// qsPoison leaves freed blocks of 0xA5 bytes on s (conformance's poison): the class
// of size bytes, three times, for the next results to take.
func qsPoison(t *testing.T, s *gpu.Stream, size int) {
	t.Helper()
	size = max(512, 1<<bits.Len(uint(size-1)))
	var bufs []*gpu.Buffer
	for range 3 {
		b, err := s.Alloc(int64(size))
		if err != nil {
			t.Fatal(err)
		}
		if err := s.CopyHtoD(b, bytes.Repeat([]byte{0xA5}, size)); err != nil {
			t.Fatal(err)
		}
		bufs = append(bufs, b)
	}
	for _, b := range bufs {
		if err := b.Free(); err != nil {
			t.Fatal(err)
		}
	}
}

// qsBytes returns the bytes of xs.
func qsBytes[T any](xs []T) []byte {
	if len(xs) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&xs[0])), len(xs)*int(unsafe.Sizeof(xs[0])))
}

// TestQuantileSelectZeroChunks: Median and NanMedian of rows of mixed zeros several
// of QuantileFlags' chunks long (4 tiles of its blocks; 2 rows keep a chunk a tile
// on any device), selected against sorted, bit for bit: the middles on a chunk's last
// zero and the next chunk's first, and on the first chunk's last zero and the last
// chunk's first with chunks of no zeros between. The middles' zeros are -0, every
// other zero +0, so that the zero of a neighbouring rank shows in the result's sign.
func TestQuantileSelectZeroChunks(t *testing.T) {
	run := func(t *testing.T, d *gpu.Device, s *gpu.Stream, float64s bool) {
		rng := rand.New(rand.NewPCG(7, 43))
		tile := 256 * 8 // (QuantileFlags' SortBlock threads of 8 keys, 4 of 8-byte keys)
		if float64s {
			tile = 256 * 4
		}
		n := 4 * tile
		lo := n/2 - 1
		row := func(zeros []int, rank int) []float64 {
			v := make([]float64, n)
			for i := range v {
				v[i] = math.NaN() // (to be set)
			}
			for k, i := range zeros {
				v[i] = 0
				if k == rank-1 || k == rank {
					v[i] = math.Copysign(0, -1)
				}
			}
			neg := lo - (rank - 1) // the negatives that put the lower middle on that zero
			for _, i := range rng.Perm(n) {
				if math.IsNaN(v[i]) {
					v[i] = 1 + float64(rng.IntN(100))
					if neg > 0 {
						v[i], neg = -v[i], neg-1
					}
				}
			}
			return v
		}
		span := func(lo, hi int) []int {
			var s []int
			for i := lo; i < hi; i++ {
				s = append(s, i)
			}
			return s
		}
		rows := [][]float64{
			row(append(span(100, 110), span(3*tile+500, 3*tile+510)...), 10), // chunks 0 and 3
			row(span(2*tile-6, 2*tile+4), 6),                                 // chunks 1 and 2
		}
		xs := make([]float64, 0, len(rows)*n)
		for _, r := range rows {
			xs = append(xs, r...)
		}
		check := func(name string, res func() (*gpu.Array[float64], error)) {
			qsCompare(t, d, s, name, res)
			r, err := res()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Free()
			for i, v := range toSlice(t, r) {
				if v != 0 || !math.Signbit(v) {
					t.Fatalf("%s: row %d: %v, want -0", name, i, v)
				}
			}
		}
		if float64s {
			a := mustArr[float64](t)(gpu.FromSlice(s, xs, len(rows), n))
			defer a.Free()
			check("median", func() (*gpu.Array[float64], error) { return gpu.Median[float64](s, a, gpu.Axes(1)) })
			check("nanmedian", func() (*gpu.Array[float64], error) { return gpu.NanMedian[float64](s, a, gpu.Axes(1)) })
			return
		}
		x32 := make([]float32, len(xs))
		for i, v := range xs {
			x32[i] = float32(v)
		}
		a := mustArr[float32](t)(gpu.FromSlice(s, x32, len(rows), n))
		defer a.Free()
		check("median", func() (*gpu.Array[float64], error) { return gpu.Median[float64](s, a, gpu.Axes(1)) })
		check("nanmedian", func() (*gpu.Array[float64], error) { return gpu.NanMedian[float64](s, a, gpu.Axes(1)) })
	}
	both := func(t *testing.T, d *gpu.Device, s *gpu.Stream) {
		t.Run("float32", func(t *testing.T) { run(t, d, s, false) })
		t.Run("float64", func(t *testing.T) { run(t, d, s, true) })
	}
	forDevices(t, both)
	t.Run("sim", func(t *testing.T) {
		d, s := simStream(t)
		both(t, d, s)
	})
}
