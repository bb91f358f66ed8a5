//go:build !cgo

package cuda

import (
	"github.com/go-gpu/gpu/backend"
	"github.com/go-gpu/gpu/backend/cuda/cu"
)

// DeviceCount reports that there is no device: the package was built without cgo.
func (Backend) DeviceCount() (int, error) { return 0, cu.Load() }

// Open reports that there is no device: the package was built without cgo.
func (Backend) Open(int) (backend.Device, error) { return nil, cu.Load() }
