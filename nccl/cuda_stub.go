//go:build !cgo

package nccl

import (
	"context"
	"fmt"

	"github.com/go-gpu/gpu"
	"github.com/go-gpu/gpu/nccl/internal/ncclapi"
	"github.com/go-gpu/gpu/nccl/rendezvous"
)

// Without cgo NCCL can't be loaded: CUDA communicators report ErrUnavailable.

func newCUDAGroup(ctx context.Context, devs []*gpu.Device, o options) ([]*Comm, error) {
	return nil, fmt.Errorf("nccl: NewGroup: %w", ncclapi.Load())
}

func newCUDAComm(ctx context.Context, dev *gpu.Device, id UniqueID, rank, world int, o options, g *rendezvous.Group) (*Comm, error) {
	if g != nil {
		g.Close()
	}
	return nil, fmt.Errorf("nccl: NewComm: rank %d of %d on %v: %w", rank, world, dev, ncclapi.Load())
}
