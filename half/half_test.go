package half

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/go-gpu/gpu/dtype"
)

func TestConversions(t *testing.T) {
	inf := math.Inf(1)
	for _, c := range []struct {
		f    float64
		h16  uint16
		bf16 uint16
	}{
		{0, 0, 0},
		{math.Copysign(0, -1), 0x8000, 0x8000},
		{1, 0x3c00, 0x3f80},
		{-2, 0xc000, 0xc000},
		{0.1, 0x2e66, 0x3dcd},
		{65504, 0x7bff, 0x4780},                 // float16's largest finite
		{65520, 0x7c00, 0x4780},                 // rounds to float16's +Inf (a tie, to even)
		{0x1p-24, 0x0001, 0x3380},               // float16's smallest subnormal
		{0x1p-25, 0x0000, 0x3300},               // a tie with 0: to even
		{0x1.8p-25, 0x0001, 0x3340},             // above the tie
		{1 + 0x1p-11, 0x3c00, 0x3f80},           // float16 tie between 1 and 1+2^-10: even
		{1 + 3*0x1p-11, 0x3c02, 0x3f80},         // the tie above rounds up to even
		{1 + 0x1p-8, 0x3c04, 0x3f80},            // bfloat16 tie: even (1)
		{1 + 3*0x1p-8, 0x3c0c, 0x3f82},          // bfloat16 tie: up to even
		{3.3895313892515355e38, 0x7c00, 0x7f7f}, // bfloat16's largest finite
		{inf, 0x7c00, 0x7f80},
		{-inf, 0xfc00, 0xff80},
		{1 + 0x1p-11 + 0x1p-40, 0x3c01, 0x3f80}, // just above the tie: once from float64
	} {
		if got := NewFloat16(c.f); got.Bits() != c.h16 {
			t.Errorf("NewFloat16(%v) = %#04x, want %#04x", c.f, got.Bits(), c.h16)
		}
		if got := NewBFloat16(c.f); got.Bits() != c.bf16 {
			t.Errorf("NewBFloat16(%v) = %#04x, want %#04x", c.f, got.Bits(), c.bf16)
		}
		if f := float32(c.f); float64(f) == c.f {
			if got := Float16FromFloat32(f); got.Bits() != c.h16 {
				t.Errorf("Float16FromFloat32(%v) = %#04x, want %#04x", f, got.Bits(), c.h16)
			}
			if got := BFloat16FromFloat32(f); got.Bits() != c.bf16 {
				t.Errorf("BFloat16FromFloat32(%v) = %#04x, want %#04x", f, got.Bits(), c.bf16)
			}
		}
	}
	nan := math.NaN()
	if h := NewFloat16(nan); !h.IsNaN() || !math.IsNaN(h.Float64()) {
		t.Errorf("NewFloat16(NaN) = %#04x", h.Bits())
	}
	if h := NewBFloat16(-nan); !h.IsNaN() || h.Bits()&0x8000 == 0 {
		t.Errorf("NewBFloat16(-NaN) = %#04x: not a negative NaN", h.Bits())
	}
	// Every value converts exactly to float32 and float64 and back.
	for b := 0; b < 1<<16; b++ {
		h, bf := Float16FromBits(uint16(b)), BFloat16FromBits(uint16(b))
		if h.IsNaN() != math.IsNaN(h.Float64()) || bf.IsNaN() != math.IsNaN(bf.Float64()) {
			t.Fatalf("%#04x: IsNaN disagrees with the value", b)
		}
		if h.IsNaN() {
			continue
		}
		if Float16FromFloat32(h.Float32()) != h || NewFloat16(h.Float64()) != h || float64(h.Float32()) != h.Float64() {
			t.Fatalf("float16 %#04x doesn't round-trip", b)
		}
		if !bf.IsNaN() && (BFloat16FromFloat32(bf.Float32()) != bf || NewBFloat16(bf.Float64()) != bf) {
			t.Fatalf("bfloat16 %#04x doesn't round-trip", b)
		}
		if h.Float32() != dtype.Float16ToFloat32(uint16(b)) {
			t.Fatalf("float16 %#04x: value differs from dtype's", b)
		}
	}
	if (Float16(0)).DType() != dtype.Float16 || (BFloat16(0)).DType() != dtype.BFloat16 {
		t.Error("DType")
	}
	if dtype.Of[Float16]() != dtype.Float16 || dtype.Of[BFloat16]() != dtype.BFloat16 || dtype.Of[uint16]() != dtype.Uint16 {
		t.Error("dtype.Of doesn't tell the half types from uint16")
	}
	if dtype.OfValue(NewFloat16(1)) != dtype.Float16 || dtype.OfValue(uint16(1)) != dtype.Uint16 || dtype.OfValue(nil) != dtype.Invalid {
		t.Error("dtype.OfValue")
	}
}

// TestString checks that String gives the shortest decimal that rounds back, for every
// value of both formats.
func TestString(t *testing.T) {
	for _, c := range []struct {
		v    fmt.Stringer
		want string
	}{
		{NewFloat16(0.1), "0.1"}, {NewFloat16(65504), "65500"}, {NewFloat16(1), "1"},
		{NewFloat16(-2.5), "-2.5"}, {NewFloat16(0x1p-24), "6e-08"}, {NewFloat16(math.Copysign(0, -1)), "-0"},
		{NewFloat16(math.Inf(1)), "+Inf"}, {NewFloat16(math.NaN()), "NaN"}, {NewFloat16(1e-5), "1e-05"},
		{NewBFloat16(0.1), "0.1"}, {NewBFloat16(3), "3"}, {NewBFloat16(1e30), "1e+30"},
		{NewBFloat16(math.Inf(-1)), "-Inf"}, {NewFloat16(1000), "1000"}, {NewFloat16(1234.5), "1234"},
	} {
		if got := c.v.String(); got != c.want {
			t.Errorf("%T %v: String %q, want %q", c.v, c.v, got, c.want)
		}
	}
	for b := 0; b < 1<<16; b++ {
		for _, v := range []interface {
			fmt.Stringer
			Float64() float64
		}{Float16(b), BFloat16(b)} {
			s := v.String()
			if math.IsNaN(v.Float64()) {
				if s != "NaN" {
					t.Fatalf("%#04x: %q, want NaN", b, s)
				}
				continue
			}
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				t.Fatalf("%T %#04x: %q: %v", v, b, s, err)
			}
			var back uint16
			switch v.(type) {
			case Float16:
				back = NewFloat16(f).Bits()
			default:
				back = NewBFloat16(f).Bits()
			}
			if back != uint16(b) {
				t.Fatalf("%T %#04x: %q reads back as %#04x", v, b, s, back)
			}
		}
	}
}

func TestFormat(t *testing.T) {
	h, bf := NewFloat16(1.5), NewBFloat16(-0.25)
	for _, c := range []struct{ got, want string }{
		{fmt.Sprint(h), "1.5"},
		{fmt.Sprintf("%v|%s|%6v|%-5v|", h, h, h, bf), "1.5|1.5|   1.5|-0.25|"},
		{fmt.Sprintf("%.3f %e %g", h, bf, h), "1.500 -2.500000e-01 1.5"},
		{fmt.Sprintf("%#v", h), "half.Float16(0x3e00)"},
		{fmt.Sprintf("%#v", bf), "half.BFloat16(0xbe80)"},
		{fmt.Sprintf("%d", h), "%!d(half.Float16=1.5)"},
		{fmt.Sprint([]Float16{h, NewFloat16(0.1)}), "[1.5 0.1]"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

func Example() {
	x := NewFloat16(0.1) // rounded once, to nearest even
	fmt.Println(x, x.Bits() == 0x2e66, x.Float64())
	y := BFloat16FromFloat32(3.14159)
	fmt.Printf("%v %.4f %#v\n", y, y, y)
	// Bits reinterpret: a named uint16 converts from raw bits, also from other Go
	// float16 packages' types (github.com/x448/float16's Float16: half.Float16(v)).
	fmt.Println(Float16(0x3c00), Float16FromBits(0x7bff))
	// Output:
	// 0.1 true 0.0999755859375
	// 3.14 3.1406 half.BFloat16(0x4049)
	// 1 65500
}
