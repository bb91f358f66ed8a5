package ptx

import (
	"bytes"
	"os"
	"testing"
)

// TestGomathGenerated checks that gomath/gen.go is what the IR generates now. Run
// "go generate ./ptx" after changing an algorithm.
func TestGomathGenerated(t *testing.T) {
	src := GoMirrorSource()
	const path = "gomath/gen.go"
	old, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(old, src) {
		t.Fatalf("%s is out of date: run go generate ./ptx", path)
	}
}
