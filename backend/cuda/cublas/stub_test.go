//go:build !cgo || !unix

package cublas

import (
	"errors"
	"strings"
	"testing"
)

func TestStubUnavailable(t *testing.T) {
	if err := Load(); !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "cgo") {
		t.Fatalf("Load() = %v", err)
	}
	if _, err := Create(); !errors.Is(err, ErrUnavailable) {
		t.Errorf("Create() = %v", err)
	}
	if _, err := Library(); !errors.Is(err, ErrUnavailable) || Path() != "" {
		t.Errorf("Library() = %v", err)
	}
}
