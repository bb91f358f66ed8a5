package gpu_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/go-gpu/gpu"
)

func ExampleStream_Capture() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s, _ := d.NewStream()
	defer s.Close()
	x, _ := gpu.FromSlice(s, []float32{1, 2, 3, 4})
	var y, total *gpu.Array[float32]
	// Captured, not run: the graph holds both operations and their arrays.
	g, err := s.Capture(func() error {
		var err1, err2 error
		y, err1 = gpu.Eval[float32](s, "2*x + 1", gpu.Vars{"x": x})
		total, err2 = gpu.Sum[float32](s, y)
		return errors.Join(err1, err2)
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer g.Close()
	for _, in := range [][]float32{{1, 2, 3, 4}, {10, 20, 30, 40}} {
		x.CopyFromHost(context.Background(), in) // the graph reads x when launched
		g.Launch(s)
		ys, _ := y.ToSlice(context.Background())
		t, _ := total.ToSlice(context.Background())
		fmt.Println(ys, t)
	}
	// Output:
	// [3 5 7 9] [24]
	// [21 41 61 81] [204]
}

func ExampleStream_HostFunc() {
	d, _ := gpu.OpenBackend("cpu", 0)
	s, _ := d.NewStream()
	defer s.Close()
	x, _ := gpu.FromSlice(s, []int32{1, 2, 3})
	y, _ := gpu.Eval[int32](s, "x * 10", gpu.Vars{"x": x})
	// Runs once the work before it is done; the work after waits for it.
	s.HostFunc(func() error {
		v, err := y.ToSlice(context.Background())
		fmt.Println("in stream order:", v)
		return err
	})
	z, _ := gpu.Eval[int32](s, "y + 1", gpu.Vars{"y": y})
	v, _ := z.ToSlice(context.Background())
	fmt.Println(v)
	// Output:
	// in stream order: [10 20 30]
	// [11 21 31]
}

func ExampleDevice_SetRaceCheck() {
	d, _ := gpu.OpenBackend("cpu", 0)
	d.SetRaceCheck(true)
	defer d.SetRaceCheck(false)
	a, _ := d.NewStream()
	b, _ := d.NewStream()
	defer a.Close()
	defer b.Close()
	x, _ := gpu.Zeros[float32](a, 1000)
	x.Buffer().SetTracking(false) // the caller orders its uses...
	d.Synchronize(context.Background())
	gpu.Fill(a, x, 1)
	a.BackendStream().Synchronize()                         // (so that the example doesn't race for real)
	y, _ := gpu.Eval[float32](b, "x + 1", gpu.Vars{"x": x}) // ...but nothing orders this read
	err := d.Synchronize(context.Background())              // the report comes with the next wait
	var r *gpu.RaceReport
	if errors.As(err, &r) {
		fmt.Println(r.Kind, r.First.Mode, r.Second.Mode)
	}
	y.Free()
	// Output:
	// untracked buffer on two streams write read
}
