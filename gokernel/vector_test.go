package gokernel_test

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
)

// The vector accesses (vector.go) against Go on every device: aligned and not,
// four- and eight-byte elements, 64- and 32-bit indices, runs that split, and
// the checks' first failure.

func testVecMove[T kern.Number](t *testing.T, vals func(int) []T) {
	var z T
	t.Run(reflect.TypeOf(z).String(), func(t *testing.T) {
		k, err := gokernel.NewNamed("veckernels_test.go", vecSrc, "VecMove", VecMove[T])
		if err != nil {
			t.Fatal(err)
		}
		for _, off := range []int{0, 1, 2, 3} {
			for _, n := range []int{4, 13, 1001} {
				t.Run(fmt.Sprintf("off=%d/n=%d", off, n), func(t *testing.T) {
					y := vals(n + off)
					checkKernel(t, k, VecMove[T], linear((n+3)/4, 64), off, vals(n+off), y)
				})
			}
		}
	})
}

func TestVecMove(t *testing.T) {
	testVecMove(t, randF32)
	testVecMove(t, edgeInts[int32])
	testVecMove(t, edgeInts[int64])
	testVecMove(t, func(n int) []float64 {
		x := make([]float64, n)
		for i, v := range randF32(n) {
			x[i] = float64(v) * 1e10
		}
		return x
	})
	testVecMove(t, edgeInts[uint8]) // one-byte elements: no groups
}

func TestVecMixed(t *testing.T) {
	k := newVec(t, VecMixed)
	n := 300
	y := []float64{1.5, -2.25}
	checkKernel(t, k, VecMixed, linear(n, 64), edgeInts[int32](2*n+1), y, make([]float64, 3*n))
}

// TestVecPTX checks that the groups become vector accesses (and the rest don't).
func TestVecPTX(t *testing.T) {
	for _, tc := range []struct {
		name  string
		targs []any
		want  []string
		not   []string
	}{
		{"VecMove", []any{float32(0)}, []string{`ld\.global\.v4\.f32`, `st\.global\.v4\.f32`}, nil},
		{"VecMove", []any{int64(0)}, []string{`ld\.global\.v2\.[su]64`, `st\.global\.v2\.[su]64`}, []string{`\.v4\.`}},
		{"VecMove", []any{uint8(0)}, nil, []string{`\.v[24]\.`}},
		{"VecMixed", nil, []string{`ld\.global\.v2\.[sub]32`, `ld\.global\.v2\.f64`, `ld\.global\.v4\.[sub]32`, `st\.global\.v2\.f64`}, []string{`st\.global\.v4`}},
	} {
		t.Run(fmt.Sprint(tc.name, tc.targs), func(t *testing.T) {
			k, err := gokernel.Compile("veckernels_test.go", vecSrc, tc.name)
			if err != nil {
				t.Fatal(err)
			}
			for _, checks := range []bool{true, false} {
				src, _, err := gokernel.KernelPTX(k, 9, 0, checks, tc.targs...)
				if err != nil {
					t.Fatal(err)
				}
				for _, w := range tc.want {
					if !regexp.MustCompile(w).MatchString(src) {
						t.Errorf("checks %v: no %s in the PTX", checks, w)
					}
				}
				for _, w := range tc.not {
					if regexp.MustCompile(w).MatchString(src) {
						t.Errorf("checks %v: %s in the PTX", checks, w)
					}
				}
			}
		})
	}
}

// TestVecFault checks that a run's checks fail as Go's do: at the first index out
// of range, in order.
func TestVecFault(t *testing.T) {
	k := newVec(t, VecFault)
	start := strings.Count(vecSrc[:strings.Index(vecSrc, "func VecFault")], "\n")
	line := func(mode int) int {
		for i, l := range strings.Split(vecSrc, "\n")[start:] {
			if strings.TrimSpace(l) == fmt.Sprintf("case %d:", mode) {
				return start + i + 2
			}
		}
		return 0
	}
	n, at := 300, 157
	for _, mode := range []int{0, 1} {
		for _, tc := range []struct {
			base int
			msg  string
		}{
			{-1, "index out of range [-1]"},
			{-3, "index out of range [-3]"},
			{7, "index out of range [10] with length 10"},
			{8, "index out of range [10] with length 10"},
			{9, "index out of range [10] with length 10"},
			{10, "index out of range [10] with length 10"},
		} {
			t.Run(fmt.Sprintf("mode=%d/base=%d", mode, tc.base), func(t *testing.T) {
				forDevices(t, func(t *testing.T, s *gpu.Stream) {
					x := fromSlice(t, s, make([]int32, 10))
					out := fromSlice(t, s, make([]int32, n))
					if err := k.Launch(s, linear(n, 128), mode, at, tc.base, x, out); err != nil {
						t.Fatal(err)
					}
					err := s.Synchronize(bg)
					var f *gokernel.Fault
					if !errors.As(err, &f) {
						t.Fatalf("got %v, want a *gokernel.Fault", err)
					}
					want := &gokernel.Fault{Kernel: "VecFault", File: "veckernels_test.go", Line: line(mode) + mode,
						Msg: tc.msg, Block: kern.Dim{X: at / 128}, Thread: kern.Dim{X: at % 128}}
					if *f != *want {
						t.Errorf("got  %v\nwant %v", f, want)
					}
					for i, v := range toSlice(t, out) {
						if v != 1 {
							t.Fatalf("out[%d] = %d: a thread did not run", i, v)
						}
					}
				})
			})
		}
	}
}

func newVec(t testing.TB, fns ...any) *gokernel.Kernel {
	t.Helper()
	k, err := gokernel.New(vecSrc, fns...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
