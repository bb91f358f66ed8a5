package gokernel_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/gokernel"
)

// TestRejected checks that each construct outside the subset is refused at its
// position with a message saying what to write instead.
func TestRejected(t *testing.T) {
	const head = "package k\n\nimport (\n\t\"fmt\"\n\t\"math\"\n\n\t\"github.com/go-gpu/gpu/kern\"\n)\n\nvar global int\n\nvar _ = fmt.Sprint\nvar _ = math.Pi\n\n"
	// Line 15 is the kernel's first line; "@" marks the expected column.
	for _, tc := range []struct {
		body string // the kernel's body (lines from 16)
		pos  string // line:col
		msg  string
	}{
		{"\tgo f()\n", "16:2", "starts no goroutines"},
		{"\tdefer f()\n", "16:2", "has no defer"},
		{"\tf := func() {}\n\tf()\n", "16:7", "function literals"},
		{"\tx[0] = float32(global)\n", "16:17", "package-level variable global"},
		{"\tp := &x[0]\n\t_ = p\n", "16:7", "no pointers"},
		{"\ty := append(x, 1)\n\t_ = y\n", "16:7", "allocates no memory"},
		{"\ty := make([]float32, 4)\n\t_ = y\n", "16:7", "allocates no memory"},
		{"\ts := \"abc\"\n\t_ = s\n", "16:7", "not string"},
		{"\tvar a [4]float32\n\t_ = a\n", "16:6", "not [4]float32"},
		{"\tgoto L\nL:\n", "16:2", "no goto"},
		{"\tcopy(x, x[1:])\n", "16:2", "a kernel has no copy: write a loop over the elements"},
		{"\tclear(x)\n", "16:2", "a kernel has no clear: write a loop over the elements"},
		{"\tf := t.Index\n\tx[0] = float32(f())\n", "16:7", "a kernel has no function values: call t.Index() where its value is needed"},
		{"\tswitch {\n\tcase true:\n\t\tfallthrough\n\tdefault:\n\t}\n", "18:3", "no fallthrough"},
		{"\tn := len(x)\n\ts := kern.Shared[float32](t, n)\n\t_ = s\n", "17:31", "constant length"},
		{"\ta, b := kern.Shared[float32](t, 4), kern.Shared[float32](t, 8)\n\t_, _ = a, b\n", "16:38", "one kern.Shared per line"},
		{"\ta, b := kern.Shared[float32](t, 4), kern.Shared[float32](t, 4)\n\t_, _ = a, b\n", "16:38", "one kern.Shared per line"},
		{"\tvar c []int8\n\tkern.AtomicAdd(c, 0, 1)\n", "17:2", "32- or 64-bit elements"},
		{"\trec(3)\n", "25:9", "recursion"},
		{"\tx[0] = float32(math.Gamma(2))\n", "16:22", "math.Gamma is not supported"},
		{"\tfmt.Println(x)\n", "16:6", "calls only its own functions, package kern and what it supports of math and math/bits, not fmt.Println"},
		{"\ts := x\n\ts = kern.Shared[float32](t, 4)\n\t_ = s\n", "17:2", "state space is fixed"},
		{"\tvar v any = x\n\t_ = v\n", "16:6", "not any"},
		{"\tvar ss [][]float32\n\t_ = ss\n", "16:6", "slices of numbers, kern.Dim or kern.Thread, not [][]float32"},
		{"\tvar ss [][]float32\n\tss[0][0] = x[0]\n", "16:6", "not [][]float32"},
		{"\tvar bs []bool\n\tx[0] = float32(len(bs))\n", "16:6", "not []bool"},
		{"\tvar ps []*float32\n\t_ = ps\n", "16:6", "not []*float32"},
		{"\ty := []float32{1, 2}\n\t_ = y\n", "16:7", "composite literals"},
		{"\tx[0] = float32(t.Foo())\n", "16:19", "t.Foo undefined"},
		{"\tkern.Run(kern.Config{}, nil)\n", "16:2", "kern.Run is not for kernels"},
		{"\tx[0] = float32(nope(1))\n", "16:17", "calls functions by name only"},
	} {
		src := head + "func K(t kern.Thread, x []float32) {\n" + tc.body + "}\n\nfunc f() {}\n\nfunc rec(n int) int {\n\tif n == 0 {\n\t\treturn 0\n\t}\n\treturn rec(n - 1)\n}\n\nvar nope = func(int) int { return 0 }\n"
		_, err := gokernel.Compile("k.go", src, "K")
		if err == nil {
			t.Errorf("%q: compiled", tc.body)
			continue
		}
		var e *gokernel.Error
		if !errors.As(err, &e) || !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("%q: %v is not a *gokernel.Error", tc.body, err)
			continue
		}
		want := "k.go:" + tc.pos + ": "
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%q:\n got %v\nwant %s...%s", tc.body, err, want, tc.msg)
		}
	}
}

// TestRejectedSignatures checks the kernel signatures the subset refuses.
func TestRejectedSignatures(t *testing.T) {
	for _, tc := range []struct{ decl, msg string }{
		{"func K(x []float32) {}", "first parameter is its kern.Thread"},
		{"func K(t kern.Thread) int { return 0 }", "returns nothing"},
		{"func K(t kern.Thread, b []bool) {}", "not []bool"},
		{"func K(t kern.Thread, s string) {}", "not string"},
		{"func K(t kern.Thread, x ...float32) {}", "not variadic"},
		{"func K(t kern.Thread, m map[int]int) {}", "not map[int]int"},
		{"func K(t kern.Thread, h []half.Float16) {}", "k.go:5:32: a kernel uses only its own declarations, package kern and what it supports of math and math/bits, not half.Float16 (a kernel has no 16-bit float types)"},
		{"func K(t kern.Thread, x []float32) { var d time.Duration; x[0] = float32(d) }", "k.go:5:49: a kernel uses only its own declarations, package kern and what it supports of math and math/bits, not time.Duration"},
	} {
		src := "package k\n\nimport (\"github.com/go-gpu/gpu/half\"; \"github.com/go-gpu/gpu/kern\"; \"time\")\n\n" + tc.decl + "\n\nvar _ half.Float16\nvar _ time.Duration\n"
		_, err := gokernel.Compile("k.go", src, "K")
		if err == nil || !strings.Contains(err.Error(), tc.msg) || !errors.Is(err, gpu.ErrInvalidValue) {
			t.Errorf("%s: got %v, want %q", tc.decl, err, tc.msg)
		}
	}
	if _, err := gokernel.Compile("k.go", "package k\n", "K"); err == nil || !strings.Contains(err.Error(), "declares no function K") {
		t.Errorf("a missing kernel: %v", err)
	}
	if _, err := gokernel.Compile("k.go", "package k\nfunc K(", "K"); err == nil || !errors.Is(err, gpu.ErrInvalidValue) {
		t.Errorf("a syntax error: %v", err)
	}
}
