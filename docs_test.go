package gpu_test

import (
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestNumPyPageCoversAPI: docs/numpy.md names every exported identifier of the
// package (functions, types, methods, constants, variables), so that the page that
// maps NumPy's calls to ours stays complete as the package grows.
func TestNumPyPageCoversAPI(t *testing.T) {
	page, err := os.ReadFile("docs/numpy.md")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range pkgs["gpu"].Files {
		for _, decl := range f.Decls {
			switch d := decl.(type) {
			case *ast.FuncDecl:
				if d.Name.IsExported() && (d.Recv == nil || ast.IsExported(recvName(d.Recv.List[0].Type))) {
					names = append(names, d.Name.Name)
				}
			case *ast.GenDecl:
				for _, sp := range d.Specs {
					switch sp := sp.(type) {
					case *ast.TypeSpec:
						names = append(names, sp.Name.Name)
					case *ast.ValueSpec:
						for _, n := range sp.Names {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	if len(names) < 250 {
		t.Fatalf("found only %d exported names", len(names))
	}
	for _, n := range names {
		if !ast.IsExported(n) || n == "String" || n == "Format" {
			continue // String and Format: fmt's methods, covered as printing
		}
		if !regexp.MustCompile(`\b` + n + `\b`).Match(page) {
			t.Errorf("docs/numpy.md doesn't mention %s", n)
		}
	}
}

func recvName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestFloat16DocHasHalfSemantics: the package documentation sends readers to Float16
// for how half precision computes ("see Float16"), so go doc gpu.Float16 shows it: the
// float32 arithmetic, the one rounding on store and the float32 accumulation.
func TestFloat16DocHasHalfSemantics(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, n, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	p, err := doc.NewFromFiles(fset, files, "github.com/go-gpu/gpu")
	if err != nil {
		t.Fatal(err)
	}
	for _, ty := range p.Types {
		if ty.Name != "Float16" {
			continue
		}
		for _, want := range []string{"compute in float32 and round once", "accumulate in float32"} {
			if !strings.Contains(strings.Join(strings.Fields(ty.Doc), " "), want) {
				t.Errorf("Float16's documentation doesn't say %q:\n%s", want, ty.Doc)
			}
		}
		return
	}
	t.Fatal("no type Float16")
}
