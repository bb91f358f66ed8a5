// Package gputest is shared by the tests of the packages that have GPU tests: Note
// says once per test binary, on a machine without the CUDA devices those tests need,
// that they skip and why.
//
// go test ./... shows a passing package's output only with -v, so on such a machine
// the skips would otherwise go unexplained: Note writes its line to the terminal
// (/dev/tty) when there is one and the output is hidden, and into the test output
// otherwise (with -v or -json, where go test shows it; in CI logs when a package
// fails). On a machine with the devices it writes nothing, so the output stays as
// it was.
package gputest

import (
	"flag"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/go-gpu/gpu/backend/cuda"
)

// Missing returns why this machine has fewer than need CUDA devices ("" when it has
// them): the driver's error (no libcuda.so.1, no device) or the count.
func Missing(need int) string {
	n, err := (cuda.Backend{}).DeviceCount()
	switch {
	case err != nil:
		return fmt.Sprintf("no CUDA device (%v)", err)
	case n < need && n == 0:
		return "no CUDA device (the driver found none)"
	case n < need:
		return fmt.Sprintf("%d CUDA device(s), %d needed", n, need)
	}
	return ""
}

// Note says, from a TestMain before m.Run, that package pkg's tests that need need
// CUDA devices (what: which tests, as "the CUDA runs of the tests") skip on this
// machine, and why; it writes nothing where the devices are. The line:
//
//	github.com/go-gpu/gpu: no CUDA device (...): the GPU tests skip, the CPU backend runs the rest
func Note(pkg, what string, need int) {
	why := Missing(need)
	if why == "" {
		return
	}
	if !flag.Parsed() {
		flag.Parse() // testing.Verbose needs the test flags (TestMain runs before m.Run parses them)
	}
	var w io.Writer = os.Stdout
	tty := false
	if !testing.Verbose() {
		// go test hides a passing package's output: the terminal, if any, sees the line.
		if f, err := os.OpenFile("/dev/tty", os.O_WRONLY, 0); err == nil {
			defer f.Close()
			w, tty = f, true
		}
	}
	io.WriteString(w, line(pkg, what, why, tty))
}

// line is Note's line; on the terminal it says how to see the skipped tests.
func line(pkg, what, why string, tty bool) string {
	s := fmt.Sprintf("%s: %s: %s", pkg, why, what)
	if tty {
		s += " (go test -v lists them)"
	}
	return s + "\n"
}
