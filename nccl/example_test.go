package nccl_test

import (
	"context"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/backend/cpu"
	"github.com/go-gpu/gpu/dtype"
	"github.com/go-gpu/gpu/nccl"
)

// Two ranks driven by one goroutine: their calls go in one Group. On GPUs the devices
// would be gpu.OpenBackend("cuda", 0) and ("cuda", 1); the code is the same.
func ExampleNewGroup() {
	ctx := context.Background()
	var devs []*gpu.Device
	for range 2 {
		d, _ := gpu.NewDevice(cpu.New(0))
		devs = append(devs, d)
	}
	comms, err := nccl.NewGroup(ctx, devs)
	if err != nil {
		panic(err)
	}
	defer func() {
		for _, c := range comms {
			c.Close()
		}
	}()
	bufs := make([]*gpu.Buffer, 2)
	for i, d := range devs {
		bufs[i], _ = d.Alloc(4 * 4)
		bufs[i].CopyFromHost(ctx, gpu.Bytes([]float32{1, 2, 3, float32(10 * i)}))
	}
	err = nccl.Group(comms, func() error {
		for i, c := range comms {
			s := c.Device().DefaultStream()
			if err := c.AllReduce(s, bufs[i], bufs[i], 4, dtype.Float32, nccl.Sum); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	out := make([]float32, 4)
	bufs[1].CopyToHost(ctx, gpu.Bytes(out)) // ordered after the AllReduce: no explicit wait
	fmt.Println(out)
	// Output: [2 4 6 10]
}
