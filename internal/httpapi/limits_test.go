package httpapi

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/limits"
)

// TestEveryLimitIsDecidedByName reads the sources: the routes name a limit
// only by its constant in internal/limits (never a string, which would compile
// and fail at run time), every limit defined there is decided somewhere, and
// every constant is defined (in limits.All).
func TestEveryLimitIsDecidedByName(t *testing.T) {
	t.Parallel()
	constants := limitConstants(t) // identifier → name
	defined := map[string]bool{}
	for _, d := range limits.All {
		defined[string(d.Name)] = true
	}
	for id, name := range constants {
		if !defined[name] {
			t.Errorf("limits.%s (%q) is not in limits.All", id, name)
		}
	}

	fset := token.NewFileSet()
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
	decided := map[string]bool{}
	for _, file := range files {
		ast.Inspect(file, func(n ast.Node) bool {
			switch x := n.(type) {
			case *ast.SelectorExpr:
				if pkgID, ok := x.X.(*ast.Ident); ok && pkgID.Name == "limits" {
					if name, ok := constants[x.Sel.Name]; ok {
						decided[name] = true
					}
				}
			case *ast.BasicLit:
				if v, err := strconv.Unquote(x.Value); err == nil && x.Kind == token.STRING && defined[v] {
					t.Errorf("%s: the limit %q is named by a string, not by its constant", fset.Position(x.Pos()), v)
				}
			}
			return true
		})
	}
	for name := range defined {
		if !decided[name] {
			t.Errorf("the limit %q is defined but no route decides it", name)
		}
	}
	if len(decided) == 0 || !slices.Equal(sortedKeys(decided), sortedKeys(defined)) {
		t.Errorf("decided %v, defined %v", sortedKeys(decided), sortedKeys(defined))
	}
}

// limitConstants parses internal/limits for its constants of type
// ratelimit.Name: identifier → value.
func limitConstants(t *testing.T) map[string]string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "../limits/limits.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, decl := range f.Decls {
		gen, ok := decl.(*ast.GenDecl)
		if !ok || gen.Tok != token.CONST {
			continue
		}
		for _, spec := range gen.Specs {
			vs := spec.(*ast.ValueSpec)
			for i, id := range vs.Names {
				if lit, ok := vs.Values[i].(*ast.BasicLit); ok {
					out[id.Name], _ = strconv.Unquote(lit.Value)
				}
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no limit constants found in internal/limits")
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
