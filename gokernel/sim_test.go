//go:build ptxsim

package gokernel_test

import (
	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/internal/ptxsim/simdev"
)

// With -tags ptxsim (once package internal/ptxsim is in the tree), every test also
// runs on the PTX simulator behind a fake CUDA device: the compiler's PTX against the
// CPU's Go.
func init() {
	extraDevices = append(extraDevices, deviceMaker{"sim", func() (*gpu.Device, error) { return gpu.NewDevice(simdev.New(2)) }})
}
