package fp

import (
	"math"
	"testing"
)

func TestMinMax32(t *testing.T) {
	nan := math.Float32frombits(0xffc00123)
	negz := float32(math.Copysign(0, -1))
	inf := float32(math.Inf(1))
	b := math.Float32bits
	cases := []struct {
		x, y                 float32
		min, max, fmin, fmax uint32
	}{
		{1, 2, b(1), b(2), b(1), b(2)},
		{2, 1, b(1), b(2), b(1), b(2)},
		{negz, 0, b(negz), 0, b(negz), 0},
		{0, negz, b(negz), 0, b(negz), 0},
		{nan, 1, NaN32Bits, NaN32Bits, b(1), b(1)},
		{1, nan, NaN32Bits, NaN32Bits, b(1), b(1)},
		{nan, nan, NaN32Bits, NaN32Bits, NaN32Bits, NaN32Bits},
		{-inf, inf, b(-inf), b(inf), b(-inf), b(inf)},
		{nan, negz, NaN32Bits, NaN32Bits, b(negz), b(negz)},
	}
	for _, c := range cases {
		for _, r := range []struct {
			name string
			got  float32
			want uint32
		}{{"Min", Min(c.x, c.y), c.min}, {"Max", Max(c.x, c.y), c.max}, {"Fmin", Fmin(c.x, c.y), c.fmin}, {"Fmax", Fmax(c.x, c.y), c.fmax}} {
			if b(r.got) != r.want {
				t.Errorf("%s(%#x, %#x) = %#x, want %#x", r.name, b(c.x), b(c.y), b(r.got), r.want)
			}
		}
	}
}

func TestHelpers(t *testing.T) {
	if !IsFloat[float64]() || IsFloat[int64]() || IsFloat[uint8]() {
		t.Error("IsFloat")
	}
	if math.Float64bits(NaN[float64]()) != NaN64Bits || NaN[int32]() != 0 {
		t.Error("NaN")
	}
	if math.Float64bits(Canon(math.Float64frombits(0xfff8000000000123))) != NaN64Bits || Canon(2.5) != 2.5 {
		t.Error("Canon")
	}
	if Min[int8](-3, 5) != -3 || Max[uint16](7, 65535) != 65535 || Max[int64](-1, -1) != -1 {
		t.Error("integers")
	}
	if FromBits[int8](Bits[int8](-2)) != -2 || Bits[int8](-1) != 0xff {
		t.Error("Bits")
	}
}
