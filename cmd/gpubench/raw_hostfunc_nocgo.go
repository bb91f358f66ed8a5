//go:build !cgo

package main

import (
	"fmt"

	"github.com/go-gpu/gpu/bench"
)

// rawHostFuncAvailable skips the raw host-function baseline: without cgo there is no C
// callback into Go.
func rawHostFuncAvailable() error {
	return fmt.Errorf("the raw cuLaunchHostFunc baseline calls into Go through cgo: %w", bench.ErrSkip)
}

func (r *raw) launchHostFuncGo() error { return rawHostFuncAvailable() }
