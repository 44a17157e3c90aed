package archtest

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the module's root, from this package's directory.
const root = "../.."

// exempt are the packages whose SQL the test does not read: testenv builds and
// breaks test databases (it names PostgreSQL's catalogues, not the schema);
// archtest is this test. Migrations (migrations/*.sql) are not Go, and test
// files (_test.go) are never read: a test may look at any table to check
// what its package did.
var exempt = map[string]string{
	"internal/testenv":  "it builds and breaks test databases",
	"internal/archtest": "it is this test",
}

// An owner is one row of design.md's table: the tables a package owns (it
// alone writes them) and those of others its SQL may read.
type owner struct {
	owns  []string // a table, or a schema as "payrail.*"
	reads []string
}

func (o owner) has(list []string, table string) bool {
	for _, t := range list {
		if t == table || strings.HasSuffix(t, ".*") && strings.HasPrefix(table, strings.TrimSuffix(t, "*")) {
			return true
		}
	}
	return false
}

var (
	// createTable finds the tables the schema creates: the migrations', and
	// those a package makes of its own (payrail's schema).
	createTable = regexp.MustCompile(`(?i)CREATE TABLE (?:IF NOT EXISTS )?([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)`)
	// named finds a table named by a statement: written after INSERT INTO,
	// UPDATE or DELETE FROM, read after FROM or JOIN. The project writes SQL
	// keywords in capitals, which keeps prose ("read from the database") out.
	named = regexp.MustCompile(`\b(DELETE FROM|INSERT INTO|UPDATE|FROM|JOIN)\s+([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)?)`)
	// backticked is a name in a cell of the table.
	backticked = regexp.MustCompile("`([^`]+)`")
)

// TestSQLNamesOnlyOwnedTables checks every package under internal/ against
// the ownership table of docs/design.md: each table has one owner, the only
// package whose SQL writes it (INSERT INTO, UPDATE, DELETE FROM); a package's
// SQL reads (FROM, JOIN) only its own tables and those its row lists under
// "reads". Another package that needs a table calls its owner's functions,
// taking the caller's pgx.Tx where one transaction spans owners.
func TestSQLNamesOnlyOwnedTables(t *testing.T) {
	owners := ownersFromDesign(t)
	tables := schemaTables(t)
	for table := range tables {
		var by []string
		for pkg, o := range owners {
			if o.has(o.owns, table) {
				by = append(by, pkg)
			}
		}
		if len(by) != 1 {
			sort.Strings(by)
			t.Errorf("table %s has %d owners in docs/design.md (%v), want one", table, len(by), by)
		}
	}
	pkgs, err := filepath.Glob(filepath.Join(root, "internal", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range pkgs {
		pkg := filepath.ToSlash(must(filepath.Rel(root, dir)))
		if _, ok := exempt[pkg]; ok {
			continue
		}
		uses := sqlOf(t, dir, tables)
		if len(uses) == 0 {
			continue
		}
		o, ok := owners[pkg]
		if !ok {
			t.Errorf("%s has SQL but no row in docs/design.md's table", pkg)
			continue
		}
		read := map[string]bool{}
		for _, u := range uses {
			read[u.table] = true
			switch {
			case o.has(o.owns, u.table):
			case u.write:
				t.Errorf("%s: %s writes table %s, which it does not own", u.pos, pkg, u.table)
			case !o.has(o.reads, u.table):
				t.Errorf("%s: %s reads table %s, which it neither owns nor lists among its reads", u.pos, pkg, u.table)
			}
		}
		for _, r := range o.reads {
			if tables[r] && !read[r] {
				t.Errorf("docs/design.md says %s reads table %s, which its SQL does not name", pkg, r)
			}
		}
	}
}

// ownersFromDesign parses the table under "## Where each rule lives": its
// columns package, owns and reads; in owns and reads, each backticked name
// (the caller keeps those that are tables; "schema `payrail`" owns every
// table of that schema).
func ownersFromDesign(t *testing.T) map[string]owner {
	t.Helper()
	doc, err := os.ReadFile(filepath.Join(root, "docs", "design.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "\n## Where each rule lives\n")
	if !ok {
		t.Fatal(`docs/design.md has no "## Where each rule lives" section`)
	}
	owners := map[string]owner{}
	var cols []string
	for line := range strings.SplitSeq(section, "\n") {
		if strings.HasPrefix(line, "## ") {
			break
		}
		if !strings.HasPrefix(line, "|") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		switch {
		case cols == nil:
			cols = cells
			continue
		case strings.HasPrefix(cells[0], "---"):
			continue
		}
		cell := func(name string) string {
			i := slices.Index(cols, name)
			switch {
			case i < 0:
				t.Fatalf("docs/design.md's table has no column %q: %v", name, cols)
			case i >= len(cells):
				return "" // a row short of a cell has nothing in it
			}
			return cells[i]
		}
		pkg := strings.Trim(strings.TrimSuffix(cell("package"), "/"), "`")
		owners[pkg] = owner{owns: tableNames(cell("owns")), reads: tableNames(cell("reads"))}
	}
	if len(owners) == 0 {
		t.Fatal("docs/design.md's ownership table has no rows")
	}
	return owners
}

// tableNames are the backticked names of a cell, a name after the word
// "schema" standing for all its tables.
func tableNames(cell string) []string {
	var out []string
	for _, m := range backticked.FindAllStringSubmatchIndex(cell, -1) {
		name := cell[m[2]:m[3]]
		if strings.HasSuffix(strings.TrimSpace(cell[:m[0]]), "schema") {
			name += ".*"
		}
		out = append(out, name)
	}
	return out
}

// schemaTables is every table the migrations and the packages' own DDL create.
func schemaTables(t *testing.T) map[string]bool {
	t.Helper()
	tables := map[string]bool{}
	files, _ := filepath.Glob(filepath.Join(root, "migrations", "*.sql"))
	goFiles, _ := filepath.Glob(filepath.Join(root, "internal", "*", "*.go"))
	for _, f := range append(files, goFiles...) {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range createTable.FindAllStringSubmatch(string(b), -1) {
			tables[strings.ToLower(m[1])] = true
		}
	}
	if len(tables) < 10 {
		t.Fatalf("found only %d tables in the migrations: %v", len(tables), tables)
	}
	return tables
}

// use is a table named by a package's SQL.
type use struct {
	pos   token.Position
	table string
	write bool
}

// sqlOf finds the tables that the string literals of a package's Go files
// (not its tests) name. A statement built of several literals is read
// literal by literal: each keyword and its table stand in one literal.
func sqlOf(t *testing.T, dir string, tables map[string]bool) []use {
	t.Helper()
	fset := token.NewFileSet()
	files, _ := filepath.Glob(filepath.Join(dir, "*.go"))
	var uses []use
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				t.Fatalf("%s: %v", fset.Position(lit.Pos()), err)
			}
			for _, m := range named.FindAllStringSubmatch(s, -1) {
				if tables[m[2]] {
					uses = append(uses, use{pos: fset.Position(lit.Pos()), table: m[2], write: m[1] != "FROM" && m[1] != "JOIN"})
				}
			}
			return true
		})
	}
	return uses
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(fmt.Sprint(err))
	}
	return v
}
