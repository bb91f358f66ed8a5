package gpu_test

import (
	"context"
	"fmt"
	"math"

	"github.com/go-gpu/gpu"
)

func ExampleSort() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	nan := float32(math.NaN())
	x, _ := gpu.FromSlice(s, []float32{3, nan, -1, 2, 0}, 5)
	y, _ := gpu.Sort(s, x, -1)
	z, _ := gpu.Sort(s, x, -1, gpu.Descending())
	a, _ := y.ToSlice(context.Background())
	b, _ := z.ToSlice(context.Background())
	fmt.Println(a, b)
	// Output: [-1 0 2 3 NaN] [NaN 3 2 0 -1]
}

func ExampleArgsort() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []int32{5, 1, 5, 0, 1, 2}, 2, 3)
	i, _ := gpu.Argsort(s, x, -1) // each row; equal keys keep their order
	out, _ := i.ToSlice(context.Background())
	fmt.Println(out)
	// Output: [1 0 2 0 1 2]
}

func ExampleTopK() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []float64{0.5, 2, -3, 2, 7}, 5)
	v, i, _ := gpu.TopK(s, x, 3, -1)
	vals, _ := v.ToSlice(context.Background())
	idx, _ := i.ToSlice(context.Background())
	fmt.Println(vals, idx)
	// Output: [7 2 2] [4 1 3]
}

func ExampleUnique() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	ctx := context.Background()
	x, _ := gpu.FromSlice(s, []int64{4, 1, 4, 4, 9}, 5)
	r, _ := gpu.Unique(ctx, s, x, gpu.ReturnCounts(), gpu.ReturnInverse())
	vals, _ := r.Values.ToSlice(ctx)
	counts, _ := r.Counts.ToSlice(ctx)
	inv, _ := r.Inverse.ToSlice(ctx)
	fmt.Println(vals, counts, inv)
	// Output: [1 4 9] [1 3 1] [1 0 1 1 2]
}

func ExampleSearchSorted() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	a, _ := gpu.FromSlice(s, []float32{1, 2, 2, 3}, 4)
	v, _ := gpu.FromSlice(s, []float32{0, 2, 5}, 3)
	left, _ := gpu.SearchSorted(s, a, v, gpu.SideLeft)
	right, _ := gpu.SearchSorted(s, a, v, gpu.SideRight)
	l, _ := left.ToSlice(context.Background())
	r, _ := right.ToSlice(context.Background())
	fmt.Println(l, r)
	// Output: [0 1 4] [0 3 4]
}

func ExampleQuantile() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	x, _ := gpu.FromSlice(s, []int32{1, 2, 3, 4, 10, 20, 30, 40}, 2, 4)
	q, _ := gpu.Quantile[float64](s, x, 0.25, gpu.Axes(1))
	m, _ := gpu.Median[float64](s, x)
	qs, _ := q.ToSlice(context.Background())
	med, _ := m.ToSlice(context.Background())
	fmt.Println(qs, med)
	// Output: [1.75 17.5] [7]
}

func ExampleNanMedian() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s := d.DefaultStream()
	nan := float32(math.NaN())
	x, _ := gpu.FromSlice(s, []float32{4, nan, 1, 3, nan, nan, nan, nan}, 2, 4)
	m, _ := gpu.NanMedian[float32](s, x, gpu.Axes(1))
	q, _ := gpu.NanQuantile[float32](s, x, 1, gpu.Axes(1))
	ms, _ := m.ToSlice(context.Background())
	qs, _ := q.ToSlice(context.Background())
	fmt.Println(ms, qs)
	// Output: [3 NaN] [4 NaN]
}
