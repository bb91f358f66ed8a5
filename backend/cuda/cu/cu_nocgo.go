//go:build !cgo

package cu

import (
	"fmt"

	"github.com/go-gpu/gpu/backend"
)

// Available reports whether the package was built with cgo, so that Load can work.
const Available = false

// Load reports that the driver cannot be used: the package was built without cgo.
func Load() error {
	return fmt.Errorf("cuda: built without cgo (CGO_ENABLED=0), the driver cannot be loaded: %w", backend.ErrNoDevice)
}
