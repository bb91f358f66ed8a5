package dtype

import "testing"

// Expected values are numpy.promote_types results (NumPy 2.x documentation and its
// promotion table), and NEP 50's examples for weak scalars.
func TestPromote(t *testing.T) {
	cases := []struct{ a, b, want DType }{
		{Bool, Bool, Bool}, {Bool, Int8, Int8}, {Uint8, Bool, Uint8},
		{Int8, Uint8, Int16}, {Int16, Uint8, Int16}, {Int32, Uint32, Int64},
		{Int64, Uint64, Float64}, {Uint8, Uint32, Uint32}, {Int8, Int64, Int64},
		{Float16, Int8, Float16}, {Float16, Uint8, Float16}, {Float16, Int16, Float32},
		{Float32, Int16, Float32}, {Float32, Int32, Float64}, {Float32, Uint64, Float64},
		{Float16, Float32, Float32}, {Float32, Float64, Float64}, {Float16, BFloat16, Float32},
		{BFloat16, Int8, BFloat16}, {BFloat16, Float64, Float64}, {Float64, Int64, Float64},
		{Uint16, Int8, Int32}, {Uint64, Int8, Float64}, {Invalid, Int8, Invalid},
	}
	for _, c := range cases {
		if got := Promote(c.a, c.b); got != c.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := Promote(c.b, c.a); got != c.want {
			t.Errorf("Promote(%v, %v) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

func TestPromoteWeak(t *testing.T) {
	cases := []struct {
		t    DType
		k    Kind
		want DType
	}{
		{Float32, KindFloat, Float32}, {Float32, KindSigned, Float32}, {Int8, KindSigned, Int8},
		{Uint8, KindSigned, Uint8}, {Int32, KindFloat, Float64}, {Bool, KindSigned, Int64},
		{Bool, KindFloat, Float64}, {Bool, KindBool, Bool}, {Float16, KindFloat, Float16},
	}
	for _, c := range cases {
		if got := PromoteWeak(c.t, c.k); got != c.want {
			t.Errorf("PromoteWeak(%v, %v) = %v, want %v", c.t, c.k, got, c.want)
		}
	}
}

func TestOfAndParse(t *testing.T) {
	if Of[float32]() != Float32 || Of[int]() != Int64 || Of[bool]() != Bool || Of[uint8]() != Uint8 {
		t.Fatal("Of maps Go types wrongly")
	}
	for _, d := range All {
		p, err := Parse(d.String())
		if err != nil || p != d {
			t.Errorf("Parse(%q) = %v, %v", d.String(), p, err)
		}
		if d.Size() == 0 {
			t.Errorf("%v has size 0", d)
		}
	}
	if _, err := Parse("float128"); err == nil {
		t.Error("Parse accepted float128")
	}
}

// TestIntRange: each integer type's range as float64s, [smallest, largest+1); NaNs for
// the other types.
func TestIntRange(t *testing.T) {
	for _, c := range []struct {
		t      DType
		lo, hi float64
	}{
		{Int8, -128, 128}, {Int16, -32768, 32768}, {Int32, -2147483648, 2147483648},
		{Int64, -0x1p63, 0x1p63}, {Uint8, 0, 256}, {Uint16, 0, 65536},
		{Uint32, 0, 4294967296}, {Uint64, 0, 0x1p64},
	} {
		if lo, hi := c.t.IntRange(); lo != c.lo || hi != c.hi {
			t.Errorf("%v: [%v, %v), want [%v, %v)", c.t, lo, hi, c.lo, c.hi)
		}
	}
	for _, d := range []DType{Bool, Float16, BFloat16, Float32, Float64} {
		if lo, hi := d.IntRange(); lo == lo || hi == hi {
			t.Errorf("%v: [%v, %v), want NaNs", d, lo, hi)
		}
	}
}
