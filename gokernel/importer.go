package gokernel

import (
	_ "embed"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path"
	"sync"
)

// The packages a kernel's source may use are type-checked from declaration files
// embedded here (a program's binary has no Go source and may run without a Go
// toolchain): kern.stub declares package kern's API, math.stub and bits.stub what
// the compiler supports of math and math/bits, with Go's exact constants. TestStubs
// checks them against the real packages (go test -run TestStubs -update rewrites
// them). Any other import gets an empty package, so that a kernel's file may also
// hold ordinary code (its //go:embed directive, say): only errors inside the
// functions a kernel reaches count.

// kernPath is package kern's import path.
const kernPath = "github.com/go-gpu/gpu/kern"

var (
	//go:embed kern.stub
	kernStub string
	//go:embed math.stub
	mathStub string
	//go:embed bits.stub
	bitsStub string
)

var stubSources = map[string]string{kernPath: kernStub, "math": mathStub, "math/bits": bitsStub}

var (
	stubOnce sync.Once
	stubPkgs map[string]*types.Package
	stubErr  error
)

// stubPackages type-checks the stubs once.
func stubPackages() (map[string]*types.Package, error) {
	stubOnce.Do(func() {
		stubPkgs = map[string]*types.Package{}
		fset := token.NewFileSet()
		for _, p := range []string{"math", "math/bits", kernPath} {
			f, err := parser.ParseFile(fset, p+".stub", stubSources[p], parser.SkipObjectResolution)
			if err != nil {
				stubErr = fmt.Errorf("gokernel: the stub of %s: %w", p, err)
				return
			}
			conf := types.Config{Importer: importerFunc(func(q string) (*types.Package, error) {
				if pk := stubPkgs[q]; pk != nil {
					return pk, nil
				}
				return nil, fmt.Errorf("no package %s", q)
			})}
			pkg, err := conf.Check(p, fset, []*ast.File{f}, nil)
			if err != nil {
				stubErr = fmt.Errorf("gokernel: the stub of %s: %w", p, err)
				return
			}
			stubPkgs[p] = pkg
		}
	})
	return stubPkgs, stubErr
}

type importerFunc func(path string) (*types.Package, error)

func (f importerFunc) Import(path string) (*types.Package, error) { return f(path) }

// sourceImporter gives the stubs, and an empty, complete package for anything else.
type sourceImporter struct {
	stubs map[string]*types.Package
	fakes map[string]*types.Package
}

func (im *sourceImporter) Import(p string) (*types.Package, error) {
	if pk := im.stubs[p]; pk != nil {
		return pk, nil
	}
	if pk := im.fakes[p]; pk != nil {
		return pk, nil
	}
	pk := types.NewPackage(p, path.Base(p))
	pk.MarkComplete()
	if im.fakes == nil {
		im.fakes = map[string]*types.Package{}
	}
	im.fakes[p] = pk
	return pk, nil
}
