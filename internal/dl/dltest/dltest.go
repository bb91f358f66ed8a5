// Package dltest builds the fake C libraries that the tests of the bindings load
// (package dl's, the CUDA driver's, NCCL's): a C file compiled with the C compiler into
// a shared library. The C compiler is run as a program, so the tests work with and
// without cgo; without one they skip.
package dltest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// Build compiles the C file src into the shared library dir/name and returns its path,
// or "" and the reason it could not (no C compiler, a compile error). The compiler is
// $CC, else gcc, else cc.
func Build(src, dir, name string) (path, skip string) {
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
		if _, err := exec.LookPath(cc); err != nil {
			cc = "cc"
		}
	}
	if _, err := exec.LookPath(cc); err != nil {
		return "", fmt.Sprintf("no C compiler (%s) to build the fake library %s: %v", cc, name, err)
	}
	path = filepath.Join(dir, name)
	out, err := exec.Command(cc, "-shared", "-fPIC", "-O2", "-o", path, src).CombinedOutput()
	if err != nil {
		return "", fmt.Sprintf("building the fake library %s from %s failed: %v\n%s", name, src, err, out)
	}
	return path, ""
}
