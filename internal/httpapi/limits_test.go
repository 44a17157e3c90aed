package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/limits"
)

// TestHandlersDecideOnlyWhatTheirRowsName reads the sources: every limit,
// bound and shedder a route's handler decides (every constant of
// internal/limits its handler, or a function it calls, names) is named on the
// route's row in routes.go; every bucket a row says its handler decides, the
// handler decides; every bucket of the registry is on some row; and no
// protection is named by a string, which would compile and fail at run time.
func TestHandlersDecideOnlyWhatTheirRowsName(t *testing.T) {
	t.Parallel()
	constants := limitConstants(t) // identifier → name
	registry := map[string]limits.Protection{}
	for _, p := range limits.All {
		registry[string(p.Name)] = p
	}
	for id, name := range constants {
		if _, ok := registry[name]; !ok {
			t.Errorf("limits.%s (%q) is not in limits.All", id, name)
		}
	}

	fset := token.NewFileSet()
	funcs := map[string]*funcUses{}
	var routesFile *ast.File
	for _, file := range sourceFiles(t, fset) {
		for _, decl := range file.Decls {
			if fd, ok := decl.(*ast.FuncDecl); ok {
				funcs[fd.Name.Name] = usesOf(fd, constants)
				if fd.Name.Name == "routes" {
					routesFile = file
				}
			}
		}
		ast.Inspect(file, func(n ast.Node) bool {
			if x, ok := n.(*ast.BasicLit); ok && x.Kind == token.STRING {
				if v, err := strconv.Unquote(x.Value); err == nil && registry[v].Kind == limits.Bucket {
					t.Errorf("%s: the limit %q is named by a string, not by its constant", fset.Position(x.Pos()), v)
				}
			}
			return true
		})
	}
	if routesFile == nil {
		t.Fatal("no routes() in the package")
	}

	onRows := map[string]bool{}
	for _, row := range routeRows(t, routesFile, constants) {
		named := map[string]bool{}
		for _, n := range row.names {
			named[n], onRows[n] = true, true
		}
		decided := closure(funcs, row.handler)
		for name := range decided {
			if !named[name] {
				t.Errorf("%s: %s decides %s, which its row in routes.go does not name", row.route, row.handler, name)
			}
		}
		for name := range named {
			if p := registry[name]; p.Kind == limits.Bucket && p.Ring == limits.Handler && !decided[name] {
				t.Errorf("%s: its row names %s for its handler, which %s does not decide", row.route, name, row.handler)
			}
		}
	}
	for _, p := range limits.OfKind(limits.Bucket) {
		if !onRows[string(p.Name)] {
			t.Errorf("the limit %q is in the registry but on no route's row", p.Name)
		}
	}
	if len(onRows) < len(limits.OfKind(limits.Bucket)) {
		t.Errorf("the rows name %v", onRows)
	}
}

// funcUses is what one function's body names: the protections (by name) and
// the functions and methods it calls or passes on (by identifier).
type funcUses struct {
	protections map[string]bool
	calls       map[string]bool
}

func usesOf(body ast.Node, constants map[string]string) *funcUses {
	u := &funcUses{protections: map[string]bool{}, calls: map[string]bool{}}
	if body == nil {
		return u
	}
	locals := map[string]bool{} // parameters and variables, which name no function
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.Field:
			for _, id := range x.Names {
				locals[id.Name] = true
			}
		case *ast.AssignStmt:
			if x.Tok == token.DEFINE {
				for _, l := range x.Lhs {
					if id, ok := l.(*ast.Ident); ok {
						locals[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range x.Names {
				locals[id.Name] = true
			}
		}
		return true
	})
	ast.Inspect(body, func(n ast.Node) bool {
		switch x := n.(type) {
		case *ast.SelectorExpr:
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "limits" {
				if name, ok := constants[x.Sel.Name]; ok {
					u.protections[name] = true
				}
				return false
			}
			if id, ok := x.X.(*ast.Ident); ok && id.Name == "s" {
				u.calls[x.Sel.Name] = true // a method of the Server (its receiver is s)
			}
		case *ast.Ident:
			if !locals[x.Name] {
				u.calls[x.Name] = true
			}
		}
		return true
	})
	return u
}

// closure is every protection the function named, or any it reaches, names.
func closure(funcs map[string]*funcUses, name string) map[string]bool {
	out, seen := map[string]bool{}, map[string]bool{}
	var walk func(string)
	walk = func(fn string) {
		u, ok := funcs[fn]
		if !ok || seen[fn] {
			return
		}
		seen[fn] = true
		for p := range u.protections {
			out[p] = true
		}
		for c := range u.calls {
			walk(c)
		}
	}
	walk(name)
	return out
}

// row is one route of routes.go: its method and path, its handler's name and
// the protections its steps name.
type row struct {
	route, handler string
	names          []string
}

// routeRows reads the rows of routes(): each call r(class, method, path,
// handler, steps...), a step given by a variable of routes() read through it.
func routeRows(t *testing.T, f *ast.File, constants map[string]string) []row {
	t.Helper()
	var body *ast.BlockStmt
	for _, decl := range f.Decls {
		if fd, ok := decl.(*ast.FuncDecl); ok && fd.Name.Name == "routes" {
			body = fd.Body
		}
	}
	vars := map[string]ast.Expr{} // routes()'s variables: their values
	var rows []row
	for _, stmt := range body.List {
		if as, ok := stmt.(*ast.AssignStmt); ok && len(as.Lhs) == len(as.Rhs) {
			for i, l := range as.Lhs {
				vars[l.(*ast.Ident).Name] = as.Rhs[i]
			}
		}
		es, ok := stmt.(*ast.ExprStmt)
		if !ok {
			continue
		}
		call, ok := es.X.(*ast.CallExpr)
		if id, isID := call.Fun.(*ast.Ident); !ok || !isID || id.Name != "r" || len(call.Args) < 4 {
			continue
		}
		method := strings.ToUpper(call.Args[1].(*ast.Ident).Name)
		path, _ := strconv.Unquote(call.Args[2].(*ast.BasicLit).Value)
		r := row{route: method + " " + path, handler: funcName(call.Args[3])}
		for _, arg := range call.Args[4:] {
			if id, ok := arg.(*ast.Ident); ok && vars[id.Name] != nil {
				arg = vars[id.Name]
			}
			for p := range usesOf(arg, constants).protections {
				r.names = append(r.names, p)
			}
		}
		rows = append(rows, r)
	}
	if len(rows) < 40 {
		t.Fatalf("read %d rows of routes.go", len(rows))
	}
	return rows
}

// funcName is the function or method a handler expression names:
// s.createHold, s.createAccount(auth.Buyer), toAPIReference.
func funcName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.CallExpr:
		return funcName(x.Fun)
	case *ast.SelectorExpr:
		return x.Sel.Name
	case *ast.Ident:
		return x.Name
	}
	return ""
}

func sourceFiles(t *testing.T, fset *token.FileSet) []*ast.File {
	t.Helper()
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, e := range entries {
		if name := e.Name(); strings.HasSuffix(name, ".go") && !strings.HasSuffix(name, "_test.go") {
			file, err := parser.ParseFile(fset, name, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, file)
		}
	}
	return files
}

// limitConstants parses internal/limits for its constants of type
// ratelimit.Name: identifier → value; one defined as another package's
// constant (shed.FleetUsage) is read from that package.
func limitConstants(t *testing.T) map[string]string {
	t.Helper()
	out := map[string]string{}
	for id, v := range constsOf(t, "../limits") {
		sel, ok := v.(*ast.SelectorExpr)
		if ok {
			v = constsOf(t, filepath.Join("..", sel.X.(*ast.Ident).Name))[sel.Sel.Name]
		}
		if lit, ok := v.(*ast.BasicLit); ok && lit.Kind == token.STRING {
			out[id], _ = strconv.Unquote(lit.Value)
		}
	}
	if len(out) < len(limits.All) {
		t.Fatalf("found %d constants in internal/limits, for %d protections", len(out), len(limits.All))
	}
	return out
}

// constsOf is every constant of the package in dir with its value.
func constsOf(t *testing.T, dir string) map[string]ast.Expr {
	t.Helper()
	out := map[string]ast.Expr{}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	for _, name := range matches {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			if gen, ok := decl.(*ast.GenDecl); ok && gen.Tok == token.CONST {
				for _, spec := range gen.Specs {
					vs := spec.(*ast.ValueSpec)
					typ, typed := vs.Type.(*ast.SelectorExpr)
					if typed && typ.Sel.Name != "Name" || vs.Type != nil && !typed || vs.Type == nil && !isSelector(vs.Values) {
						continue // a constant not of type ratelimit.Name, nor another package's
					}
					for i, id := range vs.Names {
						if i < len(vs.Values) {
							out[id.Name] = vs.Values[i]
						}
					}
				}
			}
		}
	}
	return out
}

func isSelector(values []ast.Expr) bool {
	for _, v := range values {
		if _, ok := v.(*ast.SelectorExpr); !ok {
			return false
		}
	}
	return len(values) > 0
}
