package gokernel

import (
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"go/types"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/go-gpu/gpu"
)

// Error is an error in a kernel's source: a type error, or a construct the Go subset
// doesn't allow, with what to write instead. It wraps gpu.ErrInvalidValue.
type Error struct {
	Pos token.Position // file:line:col in the kernel's source
	Msg string
}

func (e *Error) Error() string { return fmt.Sprintf("%s: %s", e.Pos, e.Msg) }

// Unwrap returns gpu.ErrInvalidValue.
func (e *Error) Unwrap() error { return gpu.ErrInvalidValue }

// errorList is the errors of one compilation, in source order.
type errorList []*Error

func (l errorList) err() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i].Pos, l[j].Pos
		return a.Line < b.Line || a.Line == b.Line && a.Column < b.Column
	})
	if len(l) == 1 {
		return l[0]
	}
	const most = 10
	errs := make([]error, 0, most+1)
	for i, e := range l {
		if i == most {
			errs = append(errs, fmt.Errorf("gokernel: and %d more errors: %w", len(l)-most, gpu.ErrInvalidValue))
			break
		}
		errs = append(errs, e)
	}
	return errors.Join(errs...)
}

// program is a kernel's checked source.
type program struct {
	fset     *token.FileSet
	file     *ast.File
	filename string
	info     *types.Info
	pkg      *types.Package
	decls    map[*types.Func]*ast.FuncDecl
	kernel   *types.Func
	kdecl    *ast.FuncDecl
	sig      *types.Signature
}

// parse parses and type-checks src and finds the kernel named name. Type errors
// count only inside the functions the kernel reaches (reachable).
func parse(filename, src, name string) (*program, error) {
	stubs, err := stubPackages()
	if err != nil {
		return nil, err
	}
	fset := token.NewFileSet()
	file, err := parser.ParseFile(fset, filename, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, fmt.Errorf("gokernel: %w: %w", err, gpu.ErrInvalidValue)
	}
	p := &program{
		fset: fset, file: file, filename: filename,
		info: &types.Info{
			Types:      map[ast.Expr]types.TypeAndValue{},
			Defs:       map[*ast.Ident]types.Object{},
			Uses:       map[*ast.Ident]types.Object{},
			Instances:  map[*ast.Ident]types.Instance{},
			Selections: map[*ast.SelectorExpr]*types.Selection{},
			Implicits:  map[ast.Node]types.Object{},
		},
		decls: map[*types.Func]*ast.FuncDecl{},
	}
	var typeErrs []types.Error
	conf := types.Config{
		Importer: &sourceImporter{stubs: stubs},
		Error:    func(err error) { typeErrs = append(typeErrs, err.(types.Error)) },
	}
	p.pkg, _ = conf.Check(file.Name.Name, fset, []*ast.File{file}, p.info)
	for _, d := range file.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok {
			if fn, ok := p.info.Defs[fd.Name].(*types.Func); ok {
				p.decls[fn] = fd
				if fd.Recv == nil && fd.Name.Name == name {
					p.kernel, p.kdecl = fn, fd
				}
			}
		}
	}
	if p.kernel == nil {
		return nil, fmt.Errorf("gokernel: %s declares no function %s: %w", filename, name, gpu.ErrInvalidValue)
	}
	p.sig = p.kernel.Type().(*types.Signature)
	// Type errors inside the functions the kernel reaches.
	var errs errorList
	reach := p.reachable()
	for _, te := range typeErrs {
		for _, fd := range reach {
			if te.Pos >= fd.Pos() && te.Pos < fd.End() {
				errs = append(errs, &Error{Pos: fset.Position(te.Pos), Msg: explain(te.Msg, calledAt(fd, te.Pos))})
				break
			}
		}
	}
	if err := errs.err(); err != nil {
		return nil, err
	}
	return p, nil
}

// reachable returns the declarations of the kernel and of the functions of the
// source it calls, directly or not.
func (p *program) reachable() []*ast.FuncDecl {
	seen := map[*ast.FuncDecl]bool{}
	var out []*ast.FuncDecl
	var visit func(fd *ast.FuncDecl)
	visit = func(fd *ast.FuncDecl) {
		if seen[fd] {
			return
		}
		seen[fd] = true
		out = append(out, fd)
		if fd.Body == nil {
			return
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if id, ok := n.(*ast.Ident); ok {
				if fn, ok := p.info.Uses[id].(*types.Func); ok {
					if d := p.decls[fn.Origin()]; d != nil {
						visit(d)
					}
				}
			}
			return true
		})
	}
	visit(p.kdecl)
	return out
}

// position returns pos as "file:line:col".
func (p *program) position(pos token.Pos) token.Position { return p.fset.Position(pos) }

// errorf returns an *Error at pos.
func (p *program) errorf(pos token.Pos, format string, args ...any) *Error {
	return &Error{Pos: p.position(pos), Msg: fmt.Sprintf(format, args...)}
}

// baseName returns the base name of a file path ("saxpy.go").
func baseName(path string) string {
	if path == "" {
		return "kernel.go"
	}
	return filepath.Base(path)
}

// isKernPkg reports whether obj belongs to package kern.
func isKernPkg(obj types.Object) bool {
	return obj != nil && obj.Pkg() != nil && obj.Pkg().Path() == kernPath
}

// isThread reports whether t is kern.Thread.
func isThread(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == "Thread" && isKernPkg(n.Obj())
}

// isDim reports whether t is kern.Dim.
func isDim(t types.Type) bool {
	n, ok := types.Unalias(t).(*types.Named)
	return ok && n.Obj().Name() == "Dim" && isKernPkg(n.Obj())
}

// funcName returns "pkg.Name" for messages.
func funcName(fn *types.Func) string {
	if fn.Pkg() == nil {
		return fn.Name()
	}
	name := fn.Pkg().Name()
	if fn.Pkg().Path() == kernPath {
		name = "kern"
	}
	if recv := fn.Type().(*types.Signature).Recv(); recv != nil {
		return strings.TrimPrefix(types.TypeString(recv.Type(), func(*types.Package) string { return "" }), "*") + "." + fn.Name()
	}
	return name + "." + fn.Name()
}

// kernType returns the type package kern names name.
func (p *program) kernType(name string) types.Type {
	return stubPkgs[kernPath].Scope().Lookup(name).Type()
}

var reUndefined = regexp.MustCompile(`^undefined: (\w+)\.(\w+)$`)

// calledAt reports whether the selector whose name is at pos (a type error's
// position) is called in fd, rather than used as a type or a value.
func calledAt(fd *ast.FuncDecl, pos token.Pos) bool {
	called := false
	ast.Inspect(fd, func(n ast.Node) bool {
		if c, ok := n.(*ast.CallExpr); ok {
			if sel, ok := ast.Unparen(c.Fun).(*ast.SelectorExpr); ok && sel.Sel.Pos() == pos {
				called = true
			}
		}
		return !called
	})
	return called
}

// explain rewrites a type error about a package the kernel subset lacks; called says
// whether the name is called (fmt.Println(x)) or used otherwise (a type, half.Float16).
func explain(msg string, called bool) string {
	m := reUndefined.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	switch m[1] {
	case "math", "bits":
		return fmt.Sprintf("%s.%s is not supported in kernels (package gokernel's documentation lists what is)", m[1], m[2])
	case "kern":
		return msg
	}
	if !called {
		hint := ""
		if m[2] == "Float16" || m[2] == "BFloat16" {
			hint = " (a kernel has no 16-bit float types)"
		}
		return fmt.Sprintf("a kernel uses only its own declarations, package kern and what it supports of math and math/bits, not %s.%s%s", m[1], m[2], hint)
	}
	return fmt.Sprintf("a kernel calls only its own functions, package kern and what it supports of math and math/bits, not %s.%s", m[1], m[2])
}
