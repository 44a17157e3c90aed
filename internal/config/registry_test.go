package config

import (
	"os"
	"strings"
	"testing"

	"github.com/stagedoor/stagedoor/internal/limits"
)

// TestEveryProtectionsVariableIsDocumented: docs/configuration.md has a row of
// each variable of the registry (internal/limits) with the registry's
// default, so that a limit added there cannot go undocumented.
func TestEveryProtectionsVariableIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range limits.All {
		if p.Variable == "" {
			continue
		}
		row := "| `" + p.Variable + "` | `" + p.Default + "` |"
		if !strings.Contains(string(doc), row) {
			t.Errorf("docs/configuration.md has no row %q for %s", row, p.Name)
		}
	}
}
