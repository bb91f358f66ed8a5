package gpu_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/expr"
)

// sameErrorEveryTime calls f n times and checks that it fails with the same text
// every time, wrapping want, and that the text has each of parts and none of the
// expressions' internal names (quoted "x", "y").
func sameErrorEveryTime(t *testing.T, what string, n int, want error, f func() error, parts ...string) {
	t.Helper()
	first := f()
	if first == nil || !errors.Is(first, want) {
		t.Errorf("%s = %v, want an error wrapping %v", what, first, want)
		return
	}
	for _, p := range parts {
		if !strings.Contains(first.Error(), p) {
			t.Errorf("%s = %q, want it to say %q", what, first, p)
		}
	}
	for range n {
		if err := f(); err == nil || err.Error() != first.Error() {
			t.Fatalf("%s: %q once, %v another time", what, first, err)
		}
	}
}

// TestErrorTextsDeterministic: the same bad call gives the same error text in every
// call (map iteration order must not show), naming the operands as the caller passed
// them: by position for the named operations, by the caller's variable names for
// Eval, MapReduce and Kernel.
func TestErrorTextsDeterministic(t *testing.T) {
	d := must[*gpu.Device](t)(gpu.OpenBackend("cpu", 0))
	s := d.DefaultStream()
	const n = 200
	a23 := must[*gpu.Array[float32]](t)(gpu.Zeros[float32](s, 2, 3))
	a45 := must[*gpu.Array[float32]](t)(gpu.Zeros[float32](s, 4, 5))
	defer a23.Free()
	defer a45.Free()
	freed := func() *gpu.Array[float32] {
		f := must[*gpu.Array[float32]](t)(gpu.Zeros[float32](s, 2, 3))
		if err := f.Free(); err != nil {
			t.Fatal(err)
		}
		return f
	}
	f1, f2 := freed(), freed()
	var nilArr *gpu.Array[float32]

	sameErrorEveryTime(t, "Add (2,3)+(4,5)", n, gpu.ErrInvalidValue, func() error { _, err := gpu.Add(s, a23, a45); return err },
		"gpu: Add: operands don't broadcast together: first operand of shape [2 3], second operand of shape [4 5]")
	sameErrorEveryTime(t, "Add (4,5)+(2,3)", n, gpu.ErrInvalidValue, func() error { _, err := gpu.Add(s, a45, a23); return err },
		"first operand of shape [4 5], second operand of shape [2 3]")
	sameErrorEveryTime(t, "Add of a freed second operand", n, gpu.ErrClosed, func() error { _, err := gpu.Add(s, a23, f1); return err },
		"gpu: Add: second operand: array used after Free")
	sameErrorEveryTime(t, "Add of two freed operands", n, gpu.ErrClosed, func() error { _, err := gpu.Add(s, f1, f2); return err },
		"gpu: Add: first operand: array used after Free")
	sameErrorEveryTime(t, "Add of a nil first operand", n, gpu.ErrInvalidValue, func() error { _, err := gpu.Add(s, nilArr, f2); return err },
		"gpu: Add: first operand is a nil array")
	sameErrorEveryTime(t, "Sqrt of a freed array", n, gpu.ErrClosed, func() error { _, err := gpu.Sqrt(s, f1); return err },
		"gpu: Sqrt: operand: array used after Free")
	cond := must[*gpu.Array[bool]](t)(gpu.Zeros[bool](s, 2, 3))
	defer cond.Free()
	sameErrorEveryTime(t, "Where of a freed y", n, gpu.ErrClosed, func() error { _, err := gpu.Where(s, cond, a23, f1); return err },
		"gpu: Where: third operand: array used after Free")
	sameErrorEveryTime(t, "Where of shapes", n, gpu.ErrInvalidValue, func() error { _, err := gpu.Where(s, cond, a23, a45); return err },
		"gpu: Where: operands don't broadcast together: first operand of shape [2 3], second operand of shape [2 3], third operand of shape [4 5]")

	// Every named elementwise operation names its operands by position.
	binary := map[string]func(a, b *gpu.Array[float32]) error{
		"Add":          func(a, b *gpu.Array[float32]) error { _, err := gpu.Add(s, a, b); return err },
		"Subtract":     func(a, b *gpu.Array[float32]) error { _, err := gpu.Subtract(s, a, b); return err },
		"Multiply":     func(a, b *gpu.Array[float32]) error { _, err := gpu.Multiply(s, a, b); return err },
		"Divide":       func(a, b *gpu.Array[float32]) error { _, err := gpu.Divide(s, a, b); return err },
		"FloorDivide":  func(a, b *gpu.Array[float32]) error { _, err := gpu.FloorDivide(s, a, b); return err },
		"Remainder":    func(a, b *gpu.Array[float32]) error { _, err := gpu.Remainder(s, a, b); return err },
		"Power":        func(a, b *gpu.Array[float32]) error { _, err := gpu.Power(s, a, b); return err },
		"Minimum":      func(a, b *gpu.Array[float32]) error { _, err := gpu.Minimum(s, a, b); return err },
		"Maximum":      func(a, b *gpu.Array[float32]) error { _, err := gpu.Maximum(s, a, b); return err },
		"Equal":        func(a, b *gpu.Array[float32]) error { _, err := gpu.Equal(s, a, b); return err },
		"NotEqual":     func(a, b *gpu.Array[float32]) error { _, err := gpu.NotEqual(s, a, b); return err },
		"Less":         func(a, b *gpu.Array[float32]) error { _, err := gpu.Less(s, a, b); return err },
		"LessEqual":    func(a, b *gpu.Array[float32]) error { _, err := gpu.LessEqual(s, a, b); return err },
		"Greater":      func(a, b *gpu.Array[float32]) error { _, err := gpu.Greater(s, a, b); return err },
		"GreaterEqual": func(a, b *gpu.Array[float32]) error { _, err := gpu.GreaterEqual(s, a, b); return err },
	}
	for name, f := range binary {
		sameErrorEveryTime(t, name, 5, gpu.ErrClosed, func() error { return f(a23, f1) }, "gpu: "+name+": second operand: array used after Free")
		sameErrorEveryTime(t, name, 5, gpu.ErrInvalidValue, func() error { return f(nilArr, a23) }, "gpu: "+name+": first operand is a nil array")
		sameErrorEveryTime(t, name, 5, gpu.ErrInvalidValue, func() error { return f(a23, a45) }, "gpu: "+name+": operands don't broadcast together: first operand of shape [2 3], second operand of shape [4 5]")
	}
	b23 := must[*gpu.Array[bool]](t)(gpu.Zeros[bool](s, 2, 3))
	defer b23.Free()
	sameErrorEveryTime(t, "LogicalOr", 5, gpu.ErrInvalidValue, func() error {
		_, err := gpu.LogicalOr(s, b23, (*gpu.Array[bool])(nil))
		return err
	}, "gpu: LogicalOr: second operand is a nil array")
	// An operator the element type lacks: the operation's name, not the expression's
	// column; the expression's error stays reachable.
	for name, f := range map[string]func() error{
		"Subtract": func() error { _, err := gpu.Subtract(s, b23, b23); return err },
		"Negative": func() error { _, err := gpu.Negative(s, b23); return err },
		"Divide":   func() error { _, err := gpu.Divide(s, b23, b23); return err },
	} {
		sameErrorEveryTime(t, name+" of bools", 5, gpu.ErrInvalidValue, f, "gpu: "+name+": operator ")
		var ee *expr.Error
		if err := f(); !errors.As(err, &ee) || strings.Contains(err.Error(), "col ") {
			t.Errorf("%s of bools: %v: want the operation's name and an *expr.Error underneath", name, err)
		}
	}
	unary := map[string]func(a *gpu.Array[float32]) error{
		"Negative": func(a *gpu.Array[float32]) error { _, err := gpu.Negative(s, a); return err },
		"Absolute": func(a *gpu.Array[float32]) error { _, err := gpu.Absolute(s, a); return err },
		"Exp":      func(a *gpu.Array[float32]) error { _, err := gpu.Exp(s, a); return err },
		"Tanh":     func(a *gpu.Array[float32]) error { _, err := gpu.Tanh(s, a); return err },
		"Floor":    func(a *gpu.Array[float32]) error { _, err := gpu.Floor(s, a); return err },
	}
	for name, f := range unary {
		sameErrorEveryTime(t, name, 5, gpu.ErrClosed, func() error { return f(f1) }, "gpu: "+name+": operand: array used after Free")
	}

	// Eval, MapReduce and Kernel: the caller's names, in name order.
	vars := gpu.Vars{"x": a23, "y": a45, "k": 2.0, "b": a23}
	sameErrorEveryTime(t, "Eval (2,3)+(4,5)", n, gpu.ErrInvalidValue, func() error {
		_, err := gpu.Eval[float32](s, "b + k*x + y", vars)
		return err
	}, `gpu: operands don't broadcast together: variable "b" of shape [2 3], variable "x" of shape [2 3], variable "y" of shape [4 5]`)
	two := gpu.Vars{"p": f2, "q": a23, "r": f1, "s": 1}
	sameErrorEveryTime(t, "Eval of two freed arrays", n, gpu.ErrClosed, func() error {
		_, err := gpu.Eval[float32](s, "p + q + r + s", two)
		return err
	}, `gpu: variable "p": array used after Free`)
	sameErrorEveryTime(t, "EvalInto of two freed arrays", n, gpu.ErrClosed, func() error {
		return gpu.EvalInto(s, a23, "p + q + r + s", two)
	}, `gpu: variable "p": array used after Free`)
	sameErrorEveryTime(t, "MapReduce (2,3)+(4,5)", n, gpu.ErrInvalidValue, func() error {
		_, err := gpu.MapReduce[float32](s, "b + k*x + y", vars, gpu.OpSum)
		return err
	}, `gpu: MapReduce: operands don't broadcast together: variable "b" of shape [2 3], variable "x" of shape [2 3], variable "y" of shape [4 5]`)
	k := gpu.NewKernel[float32]("u*v", "u", "v")
	sameErrorEveryTime(t, "Kernel.Eval (2,3)*(4,5)", n, gpu.ErrInvalidValue, func() error {
		_, err := k.Eval(s, a23, a45)
		return err
	}, `gpu: operands don't broadcast together: operand "u" of shape [2 3], operand "v" of shape [4 5]`)
	sameErrorEveryTime(t, "Kernel.Eval of a freed operand", n, gpu.ErrClosed, func() error {
		_, err := k.Eval(s, a23, f1)
		return err
	}, `gpu: operand "v": array used after Free`)

	// Copy's error names no operand of its expression.
	sameErrorEveryTime(t, "Copy (4,5) into (2,3)", n, gpu.ErrInvalidValue, func() error { return gpu.Copy(s, a23, a45) },
		"shape [4 5] doesn't broadcast to [2 3]")
	for _, c := range []func() error{
		func() error { return gpu.Copy(s, a23, a45) },
		func() error { _, err := gpu.Add(s, a23, f1); return err },
		func() error { _, err := gpu.Where(s, cond, a23, a45); return err },
	} {
		if err := c(); err != nil && (strings.Contains(err.Error(), `"x"`) || strings.Contains(err.Error(), `"y"`) || strings.Contains(err.Error(), `"z"`)) {
			t.Errorf("an error names an internal operand: %v", err)
		}
	}
}
