//go:build !cgo

package main

import (
	"fmt"

	"github.com/go-gpu/gpu/bench"
)

// raw stands in for the raw driver handle of raw_cgo.go: without cgo there is
// no driver binding, and openRaw skips every raw baseline.
type raw struct{}

var errCgo = fmt.Errorf("raw driver baseline: built without cgo: %w", bench.ErrSkip)

func openRaw(*bench.Env) (*raw, error) { return nil, errCgo }

// The methods below are never reached: openRaw always fails.

func (r *raw) close() error                         { return nil }
func (r *raw) syncStream() error                    { return errCgo }
func (r *raw) queryStream() (bool, error)           { return false, errCgo }
func (r *raw) syncContext() error                   { return errCgo }
func (r *raw) launchEmpty() error                   { return errCgo }
func (r *raw) memAlloc(int64) (uint64, error)       { return 0, errCgo }
func (r *raw) memFree(uint64) error                 { return errCgo }
func (r *raw) allocAsync(int64) (uint64, error)     { return 0, errCgo }
func (r *raw) freeAsync(uint64) error               { return errCgo }
func (r *raw) hostAlloc(int64) ([]byte, error)      { return nil, errCgo }
func (r *raw) hostFree([]byte) error                { return errCgo }
func (r *raw) pinGo([]byte)                         {}
func (r *raw) copyHtoD(uint64, []byte) error        { return errCgo }
func (r *raw) copyDtoH([]byte, uint64) error        { return errCgo }
func (r *raw) copyDtoD(uint64, uint64, int64) error { return errCgo }
