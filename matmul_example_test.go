package gpu_test

import (
	"context"
	"fmt"

	"gonum.org/v1/gonum/mat"

	"github.com/go-gpu/gpu"
)

func ExampleMatMul() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	a, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4, 5, 6}, 2, 3)
	b, _ := gpu.FromSlice(s, []float32{1, 0, 0, 1, 1, 1}, 3, 2)
	c, _ := gpu.MatMul(s, a, b)  // (2, 3) @ (3, 2)
	at, _ := a.Transpose()       // a view: passed to the library as a transpose
	g, _ := gpu.MatMul(s, at, a) // (3, 2) @ (2, 3): the Gram matrix
	v, _ := gpu.FromSlice(s, []float32{1, 1, 1}, 3)
	av, _ := gpu.MatMul(s, a, v) // a 1-D b is a column vector: the result is 1-D
	out, _ := c.ToSlice(context.Background())
	gram, _ := g.ToSlice(context.Background())
	sums, _ := av.ToSlice(context.Background())
	fmt.Println(c.Shape(), out)
	fmt.Println(g.Shape(), gram)
	fmt.Println(av.Shape(), sums)
	// Output:
	// [2 2] [4 5 10 11]
	// [3 3] [17 22 27 22 29 36 27 36 45]
	// [2] [6 15]
}

func ExampleGemm() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	a, _ := gpu.FromSlice(s, []float64{1, 2, 3, 4}, 2, 2)
	id, _ := gpu.FromSlice(s, []float64{1, 0, 0, 1}, 2, 2)
	c, _ := gpu.FromSlice(s, []float64{10, 20, 30, 40}, 2, 2)
	gpu.Gemm(s, 2, a, id, 0.5, c) // c = 2*a@id + 0.5*c
	out, _ := c.ToSlice(context.Background())
	fmt.Println(out)
	// Output: [7 14 21 28]
}

func ExampleToDense() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	m := mat.NewDense(2, 2, []float64{1, 2, 3, 4})
	a, _ := gpu.FromDense[float32](s, m)
	sq, _ := gpu.MatMul(s, a, a)
	r, _ := gpu.ToDense(context.Background(), sq)
	fmt.Println(mat.Formatted(r))
	// Output:
	// ⎡ 7  10⎤
	// ⎣15  22⎦
}
