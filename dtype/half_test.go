package dtype

import (
	"math"
	"math/rand/v2"
	"testing"
)

// halfFormat describes one 16-bit format for the table-driven tests below.
type halfFormat struct {
	name         string
	ebits, mbits int
	to32         func(uint16) float32
	from32       func(float32) uint16
	from64       func(float64) uint16
}

var halfFormats = []halfFormat{
	{"float16", 5, 10, Float16ToFloat32, Float16FromFloat32, Float16FromFloat64},
	{"bfloat16", 8, 7, BFloat16ToFloat32, BFloat16FromFloat32, BFloat16FromFloat64},
}

// refValue decodes h from the format's definition with math.Ldexp.
func (f halfFormat) refValue(h uint16) float64 {
	bias := 1<<(f.ebits-1) - 1
	e := int(h>>f.mbits) & (1<<f.ebits - 1)
	m := int(h) & (1<<f.mbits - 1)
	var v float64
	switch {
	case e == 1<<f.ebits-1 && m == 0:
		v = math.Inf(1)
	case e == 1<<f.ebits-1:
		v = math.NaN()
	case e == 0:
		v = math.Ldexp(float64(m), 1-bias-f.mbits)
	default:
		v = math.Ldexp(float64(m|1<<f.mbits), e-bias-f.mbits)
	}
	if h&0x8000 != 0 {
		v = -v
	}
	return v
}

func TestHalfDecodeAndRoundTrip(t *testing.T) {
	for _, f := range halfFormats {
		for i := 0; i < 1<<16; i++ {
			h := uint16(i)
			want := f.refValue(h)
			got := f.to32(h)
			if math.IsNaN(want) {
				if !math.IsNaN(float64(got)) {
					t.Fatalf("%s %#04x: decoded %v, want NaN", f.name, h, got)
				}
				if r := f.from32(got); f.to32(r) == f.to32(r) {
					t.Fatalf("%s %#04x: NaN re-encoded as non-NaN %#04x", f.name, h, r)
				}
				if r := f.from64(float64(got)); f.to32(r) == f.to32(r) {
					t.Fatalf("%s %#04x: NaN re-encoded (from float64) as non-NaN %#04x", f.name, h, r)
				}
				continue
			}
			if float64(got) != want || math.Signbit(float64(got)) != math.Signbit(want) {
				t.Fatalf("%s %#04x: decoded %v, want %v", f.name, h, got, want)
			}
			if r := f.from32(got); r != h {
				t.Fatalf("%s %#04x: round trip through float32 gave %#04x", f.name, h, r)
			}
			if r := f.from64(want); r != h {
				t.Fatalf("%s %#04x: round trip through float64 gave %#04x", f.name, h, r)
			}
		}
	}
}

// TestHalfRounding checks every midpoint between neighbouring values (ties go to the
// even neighbour) and the values just beside it, from float32 and from float64.
func TestHalfRounding(t *testing.T) {
	for _, f := range halfFormats {
		maxFinite := uint16(1<<f.ebits-1)<<f.mbits - 1
		for h := uint16(0); h <= maxFinite; h++ {
			lo := f.refValue(h)
			var hi float64
			if h == maxFinite {
				hi = math.Ldexp(1, 1<<(f.ebits-1)) // the next power of two, where Inf starts
			} else {
				hi = f.refValue(h + 1)
			}
			mid := (lo + hi) / 2 // exact: one more bit than the format
			even := h
			if h&1 == 1 {
				even = h + 1 // h+1 == Inf's bits when h is the largest finite value
			}
			for _, sign := range []float64{1, -1} {
				sb := uint16(0)
				if sign < 0 {
					sb = 0x8000
				}
				check := func(x float64, want uint16) {
					t.Helper()
					if got := f.from64(x); got != want|sb {
						t.Fatalf("%s from64(%g) = %#04x, want %#04x", f.name, x, got, want|sb)
					}
					if float64(float32(x)) == x {
						if got := f.from32(float32(x)); got != want|sb {
							t.Fatalf("%s from32(%g) = %#04x, want %#04x", f.name, x, got, want|sb)
						}
					}
				}
				check(sign*mid, even)
				check(sign*math.Nextafter(mid, 0), h)
				check(sign*math.Nextafter(mid, math.Inf(1)), h+1)
				m32 := float64(float32(mid))
				check(sign*float64(math.Nextafter32(float32(m32), 0)), h)
				check(sign*float64(math.Nextafter32(float32(m32), float32(math.Inf(1)))), h+1)
			}
		}
	}
}

func TestHalfKnownValues(t *testing.T) {
	// numpy.float16(x).view(numpy.uint16) and ml_dtypes.bfloat16(x).view(numpy.uint16).
	f16 := []struct {
		x float64
		h uint16
	}{
		{0.1, 0x2e66}, {1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff}, {65519, 0x7bff},
		{65520, 0x7c00}, {1e6, 0x7c00}, {math.Inf(-1), 0xfc00}, {5.960464477539063e-08, 0x0001},
		{2.9802322387695312e-08, 0x0000}, {2.9802322387695313e-08 * 1.0000001, 0x0001},
		{6.103515625e-05, 0x0400}, {math.Copysign(0, -1), 0x8000}, {0.333251953125, 0x3555},
	}
	for _, c := range f16 {
		if got := Float16FromFloat64(c.x); got != c.h {
			t.Errorf("Float16FromFloat64(%g) = %#04x, want %#04x", c.x, got, c.h)
		}
		if got := Float16FromFloat32(float32(c.x)); got != c.h && float64(float32(c.x)) == c.x {
			t.Errorf("Float16FromFloat32(%g) = %#04x, want %#04x", c.x, got, c.h)
		}
	}
	bf := []struct {
		x float64
		h uint16
	}{
		{1, 0x3f80}, {0.1, 0x3dcd}, {1.00390625, 0x3f80}, {1.01171875, 0x3f82}, {-3, 0xc040},
		{3.3895313892515355e38, 0x7f7f}, {3.4e38, 0x7f80}, {math.Inf(1), 0x7f80},
		{9.183549615799121e-41, 0x0001},
	}
	for _, c := range bf {
		if got := BFloat16FromFloat64(c.x); got != c.h {
			t.Errorf("BFloat16FromFloat64(%g) = %#04x, want %#04x", c.x, got, c.h)
		}
		if got := BFloat16FromFloat32(float32(c.x)); got != c.h {
			t.Errorf("BFloat16FromFloat32(%g) = %#04x, want %#04x", c.x, got, c.h)
		}
	}
}

// TestHalfFrom32MatchesFrom64 checks the two independent rounding paths against each
// other on random float32 values of every magnitude.
func TestHalfFrom32MatchesFrom64(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 2_000_000; i++ {
		x := math.Float32frombits(r.Uint32())
		for _, f := range halfFormats {
			a, b := f.from32(x), f.from64(float64(x))
			if a != b {
				t.Fatalf("%s: from32(%g) = %#04x, from64 = %#04x", f.name, x, a, b)
			}
		}
	}
}
