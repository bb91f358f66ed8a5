package gokernel_test

import (
	_ "embed"
	"errors"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
	"github.com/go-gpu/gpu/kern"
)

// The bounds-check elimination's kernels (prove.go), and this file's source.
//
//go:embed prove_test.go
var proveSrc string

// BceGuard: both slices guarded by the if: no check.
func BceGuard(t kern.Thread, x, y []float32) {
	if i := t.Index(); i < len(x) && i < len(y) {
		y[i] = 2*x[i] + y[i]
	}
}

// BceStride: a grid-stride loop over y, four elements an iteration under one
// guard: no check.
func BceStride(t kern.Thread, y []float32) {
	n, stride := len(y), t.GridStride()
	for i := t.Index(); i < n; i += 4 * stride {
		if i3 := i + 3*stride; i3 < n {
			y[i], y[i+stride], y[i+2*stride], y[i3] = y[i]+1, y[i+stride]+2, y[i+2*stride]+3, y[i3]+4
		} else {
			for j := i; j < n; j += stride {
				y[j] += 10
			}
		}
	}
}

// BceHint: the check of the highest index covers the lower ones: one check.
func BceHint(t kern.Thread, x, out []int32) {
	i := 4 * t.Index()
	_ = x[i+3]
	out[t.Index()] = x[i] + x[i+1] + x[i+2] + x[i+3]
}

// BceMasked: masked indices into a shared array of 32: no check but out's (blocks
// of 32 threads).
func BceMasked(t kern.Thread, out []int32) {
	buf := kern.Shared[int32](t, 32)
	lane := t.ThreadIdx().X & 31
	buf[lane] = int32(lane)
	t.SyncWarp()
	out[t.Index()] = buf[31-lane] + buf[(lane+1)%32]
}

// BceMin: a bound below both lengths: no check.
func BceMin(t kern.Thread, x, y []float32) {
	n := min(len(x), len(y))
	if i := t.Index(); i < n {
		y[i] = x[i]
	}
}

// BceEarlyExit: the facts after an if whose body leaves: no check.
func BceEarlyExit(t kern.Thread, x, out []int32) {
	i := t.Index()
	if i >= len(out) || i >= len(x) {
		return
	}
	out[i] = x[i]
}

// BceLoopChange: j changes in the loop, so the guard before it says nothing of
// x[j] in its second and third iterations: checked (and out of range for len(x)
// = 4 in the third).
func BceLoopChange(t kern.Thread, x, out []int32) {
	i := t.Index()
	if i >= len(out) {
		return
	}
	j := 0
	if j < len(x) {
		for k := 0; k < 3; k++ {
			out[i] += x[j]
			j += len(x)/2 + 1
		}
	}
}

// BceLoopSlice: x shrinks in the loop, so the guard before it says nothing of x[k]
// in later iterations: checked (out of range in the third for len(x) = 4).
func BceLoopSlice(t kern.Thread, x, out []int32) {
	i := t.Index()
	if i >= len(out) {
		return
	}
	if 3 <= len(x) {
		for k := 0; k < 3; k++ {
			out[i] += x[k]
			x = x[1:]
		}
	}
}

// BceWrap: k + 1000 wraps past MaxInt32 in the loop's last step: its range is
// unknown, and x[k] is checked (as is out[t.Index()]: a second call of t.Index()
// is another value).
func BceWrap(t kern.Thread, x, out []int32) {
	if t.Index() >= len(out) || len(x) < 10 {
		return
	}
	for k := int32(0); k < 2147483000; k += 1000 {
		if k < 10 {
			out[t.Index()] += x[k]
		}
	}
}

// BceConditional: x[i] right of && is evaluated only for i >= 100, so the later
// x[i] is checked.
func BceConditional(t kern.Thread, x, out []int32) {
	i := t.Index()
	if i >= len(out) {
		return
	}
	if i >= 100 && x[i] > 0 {
		out[i] = 1
	}
	out[i] = x[i]
}

// BceNegative: i may be negative: checked.
func BceNegative(t kern.Thread, x, out []int32) {
	i := t.Index() - 5
	if i < len(x) && t.Index() < len(out) {
		out[t.Index()] = x[i]
	}
}

// BceScope: the guard's fact ends with its block: the second x[i] is checked.
func BceScope(t kern.Thread, x, out []int32) {
	i := t.Index()
	if i >= len(out) {
		return
	}
	if i < len(x) {
		out[i] = x[i]
	}
	out[i] += x[i]
}

// BceSwitch: a case's check happens only when the earlier cases fail.
func BceSwitch(t kern.Thread, x, out []int32) {
	i := t.Index()
	if i >= len(out) {
		return
	}
	switch {
	case i > 2:
		out[i] = 5
	case x[i] > 0:
		out[i] = 6
	}
	out[i] += x[i]
}

func proveKernel(t *testing.T, fn any) *gokernel.Kernel {
	t.Helper()
	k, err := gokernel.New(proveSrc, fn)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestBoundsCheckElimination checks which index checks the compiler leaves out
// (prove.go), and that the kernels still compute what Go does.
func TestBoundsCheckElimination(t *testing.T) {
	for _, tc := range []struct {
		fn     any
		checks int
	}{
		{BceGuard, 0}, {BceStride, 0}, {BceHint, 2}, {BceMasked, 1}, {BceMin, 0}, {BceEarlyExit, 0},
		{BceLoopChange, 1}, {BceLoopSlice, 1}, {BceWrap, 2}, {BceConditional, 2}, {BceNegative, 2}, {BceScope, 1}, {BceSwitch, 2},
	} {
		k := proveKernel(t, tc.fn)
		n, err := gokernel.IndexChecks(k)
		if err != nil {
			t.Fatal(err)
		}
		if n != tc.checks {
			t.Errorf("%s: %d index checks, want %d", k.Name(), n, tc.checks)
		}
	}
	n := 1000
	checkKernel(t, proveKernel(t, BceGuard), BceGuard, linear(n+50, 128), randF32(n), randF32(n))
	checkKernel(t, proveKernel(t, BceMin), BceMin, linear(n+50, 128), randF32(n+7), randF32(n))
	for _, grid := range []int{1, 3, 8} {
		checkKernel(t, proveKernel(t, BceStride), BceStride, gpu.LaunchConfig{Grid: gpu.Dim3{X: grid}, Block: gpu.Dim3{X: 64}}, randF32(n+3))
	}
	checkKernel(t, proveKernel(t, BceHint), BceHint, linear(n/4, 50), edgeInts[int32](n), make([]int32, n/4))
	checkKernel(t, proveKernel(t, BceMasked), BceMasked, linear(256, 32), make([]int32, 256))
	checkKernel(t, proveKernel(t, BceEarlyExit), BceEarlyExit, linear(300, 64), edgeInts[int32](200), make([]int32, 250))
}

// TestBoundsCheckKept runs the kernels whose checks must stay with indices out of
// range: each fails as Go does, at its line.
func TestBoundsCheckKept(t *testing.T) {
	// lineOf returns the line of statement s in function fn.
	lineOf := func(fn, s string) int {
		in := false
		for i, l := range strings.Split(proveSrc, "\n") {
			in = in || strings.HasPrefix(l, "func "+fn+"(")
			if in && strings.TrimSpace(l) == s {
				return i + 1
			}
		}
		t.Fatalf("no line %q", s)
		return 0
	}
	for _, tc := range []struct {
		fn    any
		n, nx int
		line  string
		msg   string
	}{
		{BceLoopChange, 1, 4, "out[i] += x[j]", "index out of range [6] with length 4"},
		{BceLoopSlice, 1, 4, "out[i] += x[k]", "index out of range [2] with length 2"},
		{BceConditional, 10, 5, "out[i] = x[i]", "index out of range [5] with length 5"},
		{BceNegative, 1, 5, "out[t.Index()] = x[i]", "index out of range [-5]"},
		{BceScope, 10, 5, "out[i] += x[i]", "index out of range [5] with length 5"},
		{BceSwitch, 10, 2, "case x[i] > 0:", "index out of range [2] with length 2"},
	} {
		k := proveKernel(t, tc.fn)
		t.Run(k.Name(), func(t *testing.T) {
			forDevices(t, func(t *testing.T, s *gpu.Stream) {
				x := fromSlice(t, s, edgeInts[int32](tc.nx))
				out := fromSlice(t, s, make([]int32, tc.n))
				if err := k.Launch(s, gpu.LaunchConfig{Grid: gpu.Dim3{X: 1}, Block: gpu.Dim3{X: tc.n}}, x, out); err != nil {
					t.Fatal(err)
				}
				err := s.Synchronize(bg)
				var f *gokernel.Fault
				if !errors.As(err, &f) {
					t.Fatalf("got %v, want a *gokernel.Fault", err)
				}
				// The first failing thread records; any of them names the line.
				if line := lineOf(k.Name(), tc.line); f.Line != line || !strings.HasPrefix(f.Msg, "index out of range") {
					t.Errorf("got %v at line %d, want %q at line %d", f.Msg, f.Line, tc.msg, line)
				}
				if tc.n == 1 && f.Msg != tc.msg {
					t.Errorf("got %q, want %q", f.Msg, tc.msg)
				}
			})
		})
	}
}
