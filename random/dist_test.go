package random

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/big"
	"slices"
	"sort"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

// refElem computes element i of a request straight from the mapping in the package doc,
// one element at a time, with Block and independent arithmetic (math/big for the 128-bit
// products, dtype's conversions for the half types). It returns the little-endian bytes.
func refElem(s Spec, seed, offset uint64, i int64) []byte {
	size := int64(s.Type.Size())
	epb := 16 / size
	if s.Dist == Normal && size == 2 {
		epb = 4 // the float32 normals, rounded
	}
	j := uint64(i / epb)
	stream := func(round uint64) []byte {
		w := Block(seed, offset+j, round)
		b := make([]byte, 16)
		for k, v := range w {
			binary.LittleEndian.PutUint32(b[4*k:], v)
		}
		return b[size*(i%epb) : size*(i%epb)+size]
	}
	raw := stream(0)
	le := func(b []byte) uint64 {
		var v uint64
		for k := len(b) - 1; k >= 0; k-- {
			v = v<<8 | uint64(b[k])
		}
		return v
	}
	out := make([]byte, size)
	put := func(v uint64) {
		for k := range out {
			out[k] = byte(v >> (8 * k))
		}
	}
	switch s.Dist {
	case FullRange:
		copy(out, raw)
		if s.Type == dtype.Bool {
			out[0] &= 1
		}
	case Uniform:
		x := le(raw)
		switch s.Type {
		case dtype.Float32:
			put(uint64(math.Float32bits(float32(math.Ldexp(float64(x>>8), -24)))))
		case dtype.Float64:
			put(math.Float64bits(math.Ldexp(float64(x>>11), -53)))
		case dtype.Float16:
			put(uint64(dtype.Float16FromFloat64(math.Ldexp(float64(x>>5), -11))))
		case dtype.BFloat16:
			put(uint64(dtype.BFloat16FromFloat64(math.Ldexp(float64(x>>8), -8))))
		}
	case Normal:
		w := Block(seed, offset+j, 0)
		if s.Type != dtype.Float64 {
			p := (i % 4) / 2
			z0, z1 := boxMuller32(w[2*p], w[2*p+1])
			z := []float32{z0, z1}[i%2]
			switch s.Type {
			case dtype.Float32:
				put(uint64(math.Float32bits(z)))
			case dtype.Float16:
				put(uint64(dtype.Float16FromFloat64(float64(z))))
			default:
				put(uint64(dtype.BFloat16FromFloat64(float64(z))))
			}
		} else {
			z0, z1 := boxMuller64(uint64(w[1])<<32|uint64(w[0]), uint64(w[3])<<32|uint64(w[2]))
			put(math.Float64bits([]float64{z0, z1}[i%2]))
		}
	case Range:
		bitsW := uint(8 * size)
		r := new(big.Int).Sub(big.NewInt(s.Hi), big.NewInt(s.Lo))
		mod := new(big.Int).Lsh(big.NewInt(1), bitsW)
		t := new(big.Int).Mod(new(big.Int).Sub(mod, r), r)
		for round := uint64(0); ; round++ {
			x := new(big.Int).SetUint64(le(stream(round)))
			m := new(big.Int).Mul(x, r)
			low := new(big.Int).Mod(m, mod)
			if low.Cmp(t) >= 0 || round == MaxRounds-1 {
				v := new(big.Int).Add(new(big.Int).Rsh(m, bitsW), big.NewInt(s.Lo))
				put(uint64(v.Int64()))
				break
			}
		}
	}
	return out
}

func rangeSpecs() []Spec {
	return []Spec{
		{Dist: Range, Type: dtype.Int32, Lo: 0, Hi: 1},
		{Dist: Range, Type: dtype.Int32, Lo: -7, Hi: -6},
		{Dist: Range, Type: dtype.Int32, Lo: -1000, Hi: -3},
		{Dist: Range, Type: dtype.Int32, Lo: math.MinInt32, Hi: math.MaxInt32},
		{Dist: Range, Type: dtype.Int32, Lo: -3 << 29, Hi: 3 << 29},
		{Dist: Range, Type: dtype.Int64, Lo: 5, Hi: 6},
		{Dist: Range, Type: dtype.Int64, Lo: -1 << 40, Hi: 3},
		{Dist: Range, Type: dtype.Int64, Lo: math.MinInt64, Hi: math.MaxInt64},
		{Dist: Range, Type: dtype.Int64, Lo: -3 << 61, Hi: 3 << 61},
	}
}

func allSpecs() []Spec {
	var out []Spec
	for _, s := range Specs() {
		if s.Dist != Range {
			out = append(out, s)
		}
	}
	return append(out, rangeSpecs()...)
}

// TestMapping checks FillBytes, at many odd first offsets and into a poisoned buffer,
// against refElem: every element is written, and with the documented value.
func TestMapping(t *testing.T) {
	for _, s := range allSpecs() {
		size := s.Type.Size()
		for _, c := range []struct{ first, n int64 }{{0, 40}, {1, 37}, {3, 5}, {15, 2}, {17, 33}, {1<<40 + 5, 21}} {
			seed, offset := uint64(0xDEADBEEF12345678), uint64(math.MaxUint64-3)
			buf := bytes.Repeat([]byte{0xA5}, int(c.n)*size)
			if err := FillBytes(s, buf, seed, offset, c.first); err != nil {
				t.Fatal(err)
			}
			for i := int64(0); i < c.n; i++ {
				want := refElem(s, seed, offset, c.first+i)
				if got := buf[int(i)*size : int(i+1)*size]; !bytes.Equal(got, want) {
					t.Fatalf("%v first=%d: element %d = % x, want % x", s, c.first, c.first+i, got, want)
				}
			}
		}
	}
}

// TestParallelEqualsSequential checks FillParallel against Fill on one goroutine, and
// chunks at odd first offsets against the whole.
func TestParallelEqualsSequential(t *testing.T) {
	sizes := []int{0, 1, 3, 5, 1023, 1025, 1<<20 + 3}
	for _, s := range []Spec{{Dist: Uniform, Type: dtype.Float32}, {Dist: Normal, Type: dtype.Float64},
		{Dist: FullRange, Type: dtype.Uint8}, {Dist: Range, Type: dtype.Int32, Lo: -5, Hi: 3 << 29}} {
		for _, n := range sizes {
			if testing.Short() && n > 1<<16 && s.Dist != Uniform {
				continue
			}
			size := s.Type.Size()
			par, err := Expected(s, int64(n), 42, 1<<33+7)
			if err != nil {
				t.Fatal(err)
			}
			seq := make([]byte, n*size)
			if err := FillBytes(s, seq, 42, 1<<33+7, 0); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(par, seq) {
				t.Fatalf("%v n=%d: parallel and sequential differ", s, n)
			}
			for _, first := range []int{1, 3, 5, 7, 13, n / 3, n - 1} {
				if first <= 0 || first >= n {
					continue
				}
				end := min(n, first+1029)
				part := make([]byte, (end-first)*size)
				if err := FillBytes(s, part, 42, 1<<33+7, int64(first)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(part, seq[first*size:end*size]) {
					t.Fatalf("%v n=%d: chunk [%d, %d) differs", s, n, first, end)
				}
			}
		}
	}
	// Typed generic API.
	a := make([]float32, 1<<17+5)
	b := make([]float32, len(a))
	if err := FillParallel(Spec{Dist: Normal, Type: dtype.Float32}, a, 1, 2); err != nil {
		t.Fatal(err)
	}
	NormalFloat32(b, 1, 2, 0)
	if !slices.Equal(a, b) {
		t.Fatal("FillParallel differs from NormalFloat32")
	}
}

// TestBlocksConsumed checks that consecutive requests that advance the offset by Blocks(n)
// continue one stream when n is a multiple of ElemsPerBlock, and never share a block.
func TestBlocksConsumed(t *testing.T) {
	for _, s := range allSpecs() {
		e := int64(s.ElemsPerBlock())
		if got := s.Blocks(0); got != 0 {
			t.Errorf("%v: Blocks(0) = %d", s, got)
		}
		for _, n := range []int64{1, e - 1, e, e + 1, 10 * e, 1<<62 + 1} {
			if want := uint64((n + e - 1) / e); s.Blocks(n) != want {
				t.Errorf("%v: Blocks(%d) = %d, want %d", s, n, s.Blocks(n), want)
			}
		}
		whole, _ := Expected(s, 6*e, 9, 100)
		first, _ := Expected(s, 2*e, 9, 100)
		second, _ := Expected(s, 4*e, 9, 100+s.Blocks(2*e))
		if !bytes.Equal(whole, append(first, second...)) {
			t.Errorf("%v: two requests are not one stream", s)
		}
	}
}

func TestUniformBounds(t *testing.T) {
	for _, w := range []uint32{0, 1, 0xFF, 0x100, 0xFFFFFEFF, 0xFFFFFF00, 0xFFFFFFFE, 0xFFFFFFFF} {
		if v := uniformF32(w); v < 0 || v >= 1 {
			t.Errorf("uniformF32(%#x) = %v", w, v)
		}
		if v := dtype.Float16ToFloat32(uniformF16(w & 0xFFFF)); v < 0 || v >= 1 {
			t.Errorf("uniformF16(%#x) = %v", w&0xFFFF, v)
		}
		if v := dtype.BFloat16ToFloat32(uniformBF16(w & 0xFFFF)); v < 0 || v >= 1 {
			t.Errorf("uniformBF16(%#x) = %v", w&0xFFFF, v)
		}
	}
	if v := uniformF32(0xFFFFFFFF); v != 1-0x1p-24 {
		t.Errorf("largest float32 = %v", v)
	}
	if v := uniformF64(math.MaxUint64); v != 1-0x1p-53 || v >= 1 {
		t.Errorf("largest float64 = %v", v)
	}
	if v := dtype.Float16ToFloat32(uniformF16(0xFFFF)); v != 1-0x1p-11 {
		t.Errorf("largest float16 = %v", v)
	}
	if v := dtype.BFloat16ToFloat32(uniformBF16(0xFFFF)); v != 1-0x1p-8 {
		t.Errorf("largest bfloat16 = %v", v)
	}
	if v := uniformF16(0x20); dtype.Float16ToFloat32(v) != 0x1p-11 {
		t.Errorf("smallest float16 = %v", dtype.Float16ToFloat32(v))
	}
	// The hazard the direct half types avoid: narrowing the largest wider value gives 1.
	if dtype.Float16FromFloat32(1-0x1p-24) != 0x3C00 || float32(1-0x1p-53) != 1 {
		t.Errorf("expected narrowing to round up to 1.0")
	}
	// Every value of a large request is in [0, 1).
	for _, s := range []Spec{{Dist: Uniform, Type: dtype.Float16}, {Dist: Uniform, Type: dtype.BFloat16}} {
		b, _ := Expected(s, 1<<18, 5, 6)
		for i := 0; i < len(b); i += 2 {
			h := binary.LittleEndian.Uint16(b[i:])
			v := dtype.Float16ToFloat32(h)
			if s.Type == dtype.BFloat16 {
				v = dtype.BFloat16ToFloat32(h)
			}
			if !(v >= 0 && v < 1) {
				t.Fatalf("%v: element %d = %v", s, i/2, v)
			}
		}
	}
}

// TestNormalExtremes checks the documented bounds |z| <= 6.6605 (float32: u >= 2^-32,
// sqrt(64 ln 2) = 6.66041) and |z| <= 9.56 (float64), with every angle near the maxima of
// |cos| and |sin| at the largest radius, and that u = 1 gives 0.
func TestNormalExtremes(t *testing.T) {
	check := func(z0, z1 float64, lim float64, what string) {
		for _, z := range []float64{z0, z1} {
			if math.IsNaN(z) || math.IsInf(z, 0) || math.Abs(z) > lim {
				t.Fatalf("%s: %v", what, z)
			}
		}
	}
	const lim32 = 6.6605
	var biggest32 float32
	check32 := func(w0, w1 uint32) {
		z0, z1 := boxMuller32(w0, w1)
		check(float64(z0), float64(z1), lim32, fmt.Sprintf("boxMuller32(%#x, %#x)", w0, w1))
		biggest32 = max(biggest32, float32(math.Abs(float64(z0))), float32(math.Abs(float64(z1))))
	}
	for d := uint32(0); d < 1<<16; d++ { // the largest radius (a = 0: u = 2^-32), both signs
		for _, w0 := range []uint32{0, 0x80000000} {
			check32(w0, d)
			check32(w0, -d)
			check32(w0, 0x80000000+d<<7)
			check32(w0, 0x7FFFFFFF-d<<7)
		}
	}
	for w := uint32(0); w < 512; w++ {
		for _, w0 := range []uint32{w, 0xFFFFFFFF - w, 0x80000000 + w - 256} {
			for _, w1 := range []uint32{0, 1 << 29, 1 << 30, 0xFFFFFFFF, w * 0x9E3779B9} {
				check32(w0, w1)
			}
			x0 := uint64(w0) << 32
			if w0 < 512 {
				x0 = uint64(w0)
			}
			z0, z1 := boxMuller64(x0, uint64(w)*0x9E3779B97F4A7C15)
			check(z0, z1, 9.56, fmt.Sprintf("boxMuller64(%#x)", x0))
		}
	}
	for _, w0 := range []uint32{0x7FFFFFFF, 0xFFFFFFFF} { // u = 1
		if z0, z1 := boxMuller32(w0, 12345); z0 != 0 || z1 != 0 {
			t.Errorf("u = 1 gives %v, %v, want 0", z0, z1)
		}
	}
	t.Logf("largest |z| float32 = %v (sqrt(64 ln 2) = %v)", biggest32, math.Sqrt(64*math.Ln2))
}

// ksStat returns the Kolmogorov-Smirnov statistic of sorted x against cdf.
func ksStat(x []float64, cdf func(float64) float64) float64 {
	n := float64(len(x))
	d := 0.0
	for i, v := range x {
		f := cdf(v)
		d = max(d, float64(i+1)/n-f, f-float64(i)/n)
	}
	return d
}

// ksCritical is the asymptotic critical value at significance 0.001: sqrt(-ln(0.0005)/2)
// / sqrt(n) (Kolmogorov's limit law).
func ksCritical(n int) float64 { return math.Sqrt(-math.Log(0.0005)/2) / math.Sqrt(float64(n)) }

func moments(x []float64) (mean, variance, skew, kurt float64) {
	n := float64(len(x))
	for _, v := range x {
		mean += v
	}
	mean /= n
	var m2, m3, m4 float64
	for _, v := range x {
		d := v - mean
		m2 += d * d
		m3 += d * d * d
		m4 += d * d * d * d
	}
	m2, m3, m4 = m2/n, m3/n, m4/n
	return mean, m2, m3 / math.Pow(m2, 1.5), m4 / (m2 * m2)
}

// TestStatistics: mean, variance, skewness and kurtosis within 5 standard errors, and a
// Kolmogorov-Smirnov test at significance 0.001, for uniform and normal float32 and
// float64 (seeds fixed, so the outcome is deterministic).
func TestStatistics(t *testing.T) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 17
	}
	uniformCDF := func(x float64) float64 { return min(max(x, 0), 1) }
	normalCDF := func(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }
	for _, c := range []struct {
		s                    Spec
		cdf                  func(float64) float64
		mean, vr, skew, kurt float64
		// standard errors of the sample moments for n = 1: sqrt(var), sqrt(mu4 - var^2), ...
		seMean, seVar, seSkew, seKurt float64
	}{
		{Spec{Dist: Uniform, Type: dtype.Float32}, uniformCDF, 0.5, 1.0 / 12, 0, 1.8, math.Sqrt(1.0 / 12), math.Sqrt(1.0/80 - 1.0/144), 1.2, 0.6},
		{Spec{Dist: Uniform, Type: dtype.Float64}, uniformCDF, 0.5, 1.0 / 12, 0, 1.8, math.Sqrt(1.0 / 12), math.Sqrt(1.0/80 - 1.0/144), 1.2, 0.6},
		{Spec{Dist: Normal, Type: dtype.Float32}, normalCDF, 0, 1, 0, 3, 1, math.Sqrt2, math.Sqrt(6), math.Sqrt(24)},
		{Spec{Dist: Normal, Type: dtype.Float64}, normalCDF, 0, 1, 0, 3, 1, math.Sqrt2, math.Sqrt(6), math.Sqrt(24)},
	} {
		for _, seed := range []uint64{1, 0xC0FFEE} {
			raw, err := Expected(c.s, int64(n), seed, 1000)
			if err != nil {
				t.Fatal(err)
			}
			x := make([]float64, n)
			for i := range x {
				if c.s.Type == dtype.Float32 {
					x[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
				} else {
					x[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
				}
			}
			mean, vr, skew, kurt := moments(x)
			sq := math.Sqrt(float64(n))
			for _, m := range []struct {
				name           string
				got, want, err float64
			}{{"mean", mean, c.mean, c.seMean}, {"variance", vr, c.vr, c.seVar}, {"skewness", skew, c.skew, c.seSkew}, {"kurtosis", kurt, c.kurt, c.seKurt}} {
				if math.Abs(m.got-m.want) > 5*m.err/sq {
					t.Errorf("%v seed %d: %s = %.6f, want %.6f ± %.6f", c.s, seed, m.name, m.got, m.want, 5*m.err/sq)
				}
			}
			sort.Float64s(x)
			d := ksStat(x, c.cdf)
			t.Logf("%v seed %#x n=%d: mean %.5f var %.5f skew %.4f kurt %.4f; KS D = %.6f (sqrt(n) D = %.3f, critical %.3f at 0.001)",
				c.s, seed, n, mean, vr, skew, kurt, d, d*sq, ksCritical(n)*sq)
			if d > ksCritical(n) {
				t.Errorf("%v seed %d: KS D = %.6f > %.6f", c.s, seed, d, ksCritical(n))
			}
		}
	}
}

// chi2Crit is the chi-square critical value at significance 0.001 for k degrees of
// freedom (Wilson-Hilferty).
func chi2Crit(k int) float64 {
	v := 2 / (9 * float64(k))
	return float64(k) * math.Pow(1-v+3.0902*math.Sqrt(v), 3)
}

// TestNormalPairs looks for structure the one-dimensional tests cannot see, in float32
// and float64 normals (the pairs of Box-Muller): correlations between the elements of a
// pair, of a block and of neighbouring blocks; the angle of each pair (360 bins) and
// r^2 = z0^2 + z1^2 (Kolmogorov-Smirnov against the exponential of mean 2); their
// independence (8 x 8 contingency table); and the tail frequencies P(|z| > 3, 4, 5).
func TestNormalPairs(t *testing.T) {
	n := 1 << 20
	if testing.Short() {
		n = 1 << 18
	}
	for _, s := range []Spec{{Dist: Normal, Type: dtype.Float32}, {Dist: Normal, Type: dtype.Float64}} {
		raw, err := Expected(s, int64(n), 0x5EED, 77)
		if err != nil {
			t.Fatal(err)
		}
		z := make([]float64, n)
		for i := range z {
			if s.Type == dtype.Float32 {
				z[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
			} else {
				z[i] = math.Float64frombits(binary.LittleEndian.Uint64(raw[8*i:]))
			}
		}
		bound := 5 / math.Sqrt(float64(n/4))
		corr := func(i0, di, step int) float64 { // correlation of z[i] and z[i+di], i = i0 mod step
			var sxy, sxx, syy float64
			for i := i0; i+di < n; i += step {
				sxy += z[i] * z[i+di]
				sxx += z[i] * z[i]
				syy += z[i+di] * z[i+di]
			}
			return sxy / math.Sqrt(sxx*syy)
		}
		for _, c := range []struct {
			name         string
			i0, di, step int
		}{{"pair (z0, z1)", 0, 1, 2}, {"block (z1, z2)", 1, 1, 4}, {"block (z0, z2)", 0, 2, 4}, {"block (z0, z3)", 0, 3, 4},
			{"next block (z3, z4)", 3, 1, 4}, {"next block (z0, z4)", 0, 4, 4}, {"lag 8", 0, 8, 1}} {
			if r := corr(c.i0, c.di, c.step); math.Abs(r) > bound {
				t.Errorf("%v: correlation %s = %.5f (bound %.5f)", s, c.name, r, bound)
			}
		}
		np := n / 2
		var angle [360]int
		var joint [64]int
		r2 := make([]float64, np)
		for p := 0; p < np; p++ {
			x, y := z[2*p], z[2*p+1]
			a := math.Atan2(y, x)/(2*math.Pi) + 0.5 // in [0, 1]
			ai := min(int(a*360), 359)
			angle[ai]++
			r2[p] = x*x + y*y
			ri := min(int((1-math.Exp(-r2[p]/2))*8), 7)
			joint[8*ri+ai*8/360]++
		}
		ca, cj := chi2(angle[:], np), chi2(joint[:], np)
		sort.Float64s(r2)
		d := ksStat(r2, func(x float64) float64 { return 1 - math.Exp(-x/2) })
		t.Logf("%v: angle chi2 %.1f (critical %.1f), radius x angle chi2 %.1f (critical %.1f), r^2 KS D %.5f (critical %.5f)",
			s, ca, chi2Crit(359), cj, chi2Crit(63), d, ksCritical(np))
		if ca > chi2Crit(359) || cj > chi2Crit(63) || d > ksCritical(np) {
			t.Errorf("%v: angle chi2 %.1f, joint chi2 %.1f, r^2 KS %.5f", s, ca, cj, d)
		}
		for _, x := range []float64{3, 4, 5} {
			k := 0
			for _, v := range z {
				if math.Abs(v) > x {
					k++
				}
			}
			want := float64(n) * math.Erfc(x/math.Sqrt2)
			if math.Abs(float64(k)-want) > 5*math.Sqrt(want)+1 {
				t.Errorf("%v: %d of %d beyond %v, want %.1f", s, k, n, x, want)
			}
		}
	}
}

// chi2 returns the chi-square statistic of counts against equal expected counts.
func chi2(counts []int, total int) float64 {
	e := float64(total) / float64(len(counts))
	s := 0.0
	for _, c := range counts {
		d := float64(c) - e
		s += d * d / e
	}
	return s
}

// TestRangeBias: for r = 3*2^30 (int32) and 3*2^62 (int64), 2^W mod r = r/3, so a plain
// modulo would make the lowest third twice as likely and multiply-without-rejection would
// favour one residue mod 3 in each triple. The chi-square statistic over the 9 classes
// (third, value mod 3) must stay below the 0.001 critical value for 8 degrees of freedom
// (26.12); the same test on the biased variants must fail, showing it has the power to.
func TestRangeBias(t *testing.T) {
	const crit = 26.12
	n := 1 << 20
	if testing.Short() {
		n = 1 << 17
	}
	class := func(v, third uint64) int { return int(v/third)*3 + int(v%3) }

	v32 := make([]int32, n)
	lo32, hi32 := int32(-3<<29), int32(3<<29)
	IntRange32(v32, 77, 0, 0, lo32, int64(hi32))
	w32 := make([]uint32, n)
	Bits(w32, 77, 0, 0)
	var good, mod, noRej [9]int
	r := uint64(hi32) - uint64(lo32)
	r = uint64(uint32(r))
	for i, v := range v32 {
		if v < lo32 || v >= hi32 {
			t.Fatalf("value %d outside range", v)
		}
		good[class(uint64(uint32(v)-uint32(lo32)), 1<<30)]++
		mod[class(uint64(w32[i])%r, 1<<30)]++
		noRej[class(uint64(w32[i])*r>>32, 1<<30)]++
	}
	c2, cm, cn := chi2(good[:], n), chi2(mod[:], n), chi2(noRej[:], n)
	t.Logf("int32 r=3*2^30: chi2 = %.2f (modulo: %.0f, multiply without rejection: %.0f; critical %.2f)", c2, cm, cn, crit)
	if c2 > crit || cm < crit || cn < crit {
		t.Errorf("int32 chi2 %.2f, modulo %.2f, no rejection %.2f", c2, cm, cn)
	}

	v64 := make([]int64, n)
	lo64, hi64 := int64(-3<<61), int64(3<<61)
	IntRange64(v64, 78, 0, 0, lo64, hi64)
	good = [9]int{}
	for _, v := range v64 {
		if v < lo64 || v >= hi64 {
			t.Fatalf("value %d outside range", v)
		}
		good[class(uint64(v)-uint64(lo64), 1<<62)]++
	}
	c64 := chi2(good[:], n)
	t.Logf("int64 r=3*2^62: chi2 = %.2f", c64)
	if c64 > crit {
		t.Errorf("int64 chi2 %.2f", c64)
	}

	// A small range: [-3, 4), 7 classes, critical value 22.46 for 6 degrees of freedom.
	small := make([]int32, n)
	IntRange32(small, 79, 5, 0, -3, 4)
	var cs [7]int
	for _, v := range small {
		cs[v+3]++
	}
	if c := chi2(cs[:], n); c > 22.46 {
		t.Errorf("[-3, 4): chi2 %.2f", c)
	}
}

func TestRangeBounds(t *testing.T) {
	for _, s := range rangeSpecs() {
		raw, err := Expected(s, 1<<14, 3, 4)
		if err != nil {
			t.Fatal(err)
		}
		size := s.Type.Size()
		seenLo := false
		for i := 0; i < len(raw); i += size {
			var v int64
			if size == 4 {
				v = int64(int32(binary.LittleEndian.Uint32(raw[i:])))
			} else {
				v = int64(binary.LittleEndian.Uint64(raw[i:]))
			}
			if v < s.Lo || v >= s.Hi {
				t.Fatalf("%v: %d out of range", s, v)
			}
			seenLo = seenLo || v == s.Lo
		}
		if s.Hi-s.Lo < 1000 && s.Hi-s.Lo > 0 && !seenLo {
			t.Errorf("%v: lo never drawn", s)
		}
	}
}

func TestBoolAndBytes(t *testing.T) {
	const n = 1 << 18
	b := make([]bool, n)
	Bool(b, 1, 2, 0)
	ones := 0
	for _, v := range b {
		if v {
			ones++
		}
	}
	if math.Abs(float64(ones)-n/2) > 5*math.Sqrt(n/4) {
		t.Errorf("bool: %d of %d true", ones, n)
	}
	raw, _ := Expected(Spec{Dist: FullRange, Type: dtype.Bool}, n, 1, 2)
	for _, v := range raw {
		if v > 1 {
			t.Fatalf("bool byte %d", v)
		}
	}
	u := make([]uint8, n)
	Bits(u, 1, 2, 0)
	var c [256]int
	for _, v := range u {
		c[v]++
	}
	// 255 degrees of freedom: critical value at 0.001 is about 330.5.
	if x := chi2(c[:], n); x > 330.5 {
		t.Errorf("uint8 chi2 = %.1f", x)
	}
}

func TestAPIErrors(t *testing.T) {
	bad := []Spec{
		{},
		{Dist: Uniform, Type: dtype.Int32},
		{Dist: Normal, Type: dtype.Int16},
		{Dist: FullRange, Type: dtype.Float32},
		{Dist: Range, Type: dtype.Int32, Lo: 3, Hi: 3},
		{Dist: Range, Type: dtype.Int32, Lo: 0, Hi: 1<<31 + 1},
		{Dist: Range, Type: dtype.Int32, Lo: -1 << 31, Hi: 1 << 31}, // the whole range: FullRange
		{Dist: Range, Type: dtype.Int32, Lo: -1<<31 - 1, Hi: 0},
		{Dist: Range, Type: dtype.Uint32, Lo: 0, Hi: 5},
	}
	if err := (Spec{Dist: Range, Type: dtype.Int32, Lo: 0, Hi: 1 << 31}).Validate(); err != nil {
		t.Errorf("[0, 2^31) for int32 (hi exclusive): %v", err)
	}
	for _, s := range bad {
		if s.Validate() == nil {
			t.Errorf("%v: Validate accepted it", s)
		}
		if _, err := s.Kernel(9, 0, false); err == nil && (s.Dist != Range || s.Type != dtype.Int32 && s.Type != dtype.Int64) {
			t.Errorf("%v: Kernel accepted it", s)
		}
	}
	for _, s := range allSpecs() {
		if err := s.Validate(); err != nil {
			t.Errorf("%v: %v", s, err)
		}
	}
	if err := Fill(Spec{Dist: Uniform, Type: dtype.Float32}, make([]float64, 3), 1, 2, 0); err == nil {
		t.Error("Fill accepted []float64 for float32")
	}
	if err := Fill(Spec{Dist: Uniform, Type: dtype.Float16}, make([]uint16, 3), 1, 2, 0); err != nil {
		t.Error(err)
	}
	if err := Fill(Spec{Dist: Uniform, Type: dtype.Float32}, make([]float32, 3), 1, 2, -1); err == nil {
		t.Error("Fill accepted first < 0")
	}
	if err := FillBytes(Spec{Dist: Uniform, Type: dtype.Float32}, make([]byte, 5), 1, 2, 0); err == nil {
		t.Error("FillBytes accepted 5 bytes of float32")
	}
	defer func() {
		if recover() == nil {
			t.Error("IntRange32 accepted an empty range")
		}
	}()
	IntRange32(make([]int32, 1), 1, 2, 0, 4, 4)
}

// TestFillBytesUnaligned checks the encoding path for a misaligned destination.
func TestFillBytesUnaligned(t *testing.T) {
	for _, s := range allSpecs() {
		size := s.Type.Size()
		n := 5000
		buf := make([]byte, n*size+1)
		if err := FillBytes(s, buf[1:], 8, 9, 3); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, n*size)
		if err := FillBytes(s, want, 8, 9, 3); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf[1:], want) {
			t.Errorf("%v: unaligned FillBytes differs", s)
		}
	}
}
