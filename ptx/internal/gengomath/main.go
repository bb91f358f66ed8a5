// Command gengomath writes ptx/gomath/gen.go, the Go mirrors of the device math
// functions, from package ptx's intermediate form. Run it with "go generate ./ptx".
package main

import (
	"log"
	"os"

	"github.com/go-gpu/gpu/ptx"
)

func main() {
	if err := os.WriteFile("gomath/gen.go", ptx.GoMirrorSource(), 0o644); err != nil {
		log.Fatal(err)
	}
}
