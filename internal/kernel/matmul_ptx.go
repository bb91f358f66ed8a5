package kernel

import (
	"fmt"

	"github.com/go-gpu/gpu/backend"
)

// mmTile is a kernel's tiling: a block computes bm x bn of C, stepping K by bk
// through stages shared-memory buffers.
type mmTile struct {
	bm, bn, bk int
	stages     int
	threads    int
}

// tile returns the spec's tiling.
func (p *MatMul) tile() mmTile {
	return mmTile{bm: 128, bn: 128, bk: 32, stages: 3, threads: 128}
}

// smem returns the dynamic shared memory of a block in bytes.
func (t mmTile) smem(p *MatMul) int {
	return t.stages * (t.bm + t.bn) * (t.bk + 8) * p.Type.Size()
}

// PTX returns the kernel's PTX for a device of compute capability major.minor.
func (p *MatMul) PTX(major, minor int) (src, entry string, err error) {
	return "", "", fmt.Errorf("kernel: matmul PTX: not written yet: %w", backend.ErrNotSupported)
}
