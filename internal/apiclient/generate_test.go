package apiclient_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedClientIsCurrent generates the client again from the contract,
// with the pinned oapi-codegen and the same configuration, and fails when
// client.gen.go is not what comes out: the contract (or the configuration)
// changed and go generate ./internal/apiclient/ was not run.
func TestGeneratedClientIsCurrent(t *testing.T) {
	t.Parallel()
	fresh := filepath.Join(t.TempDir(), "client.gen.go")
	cmd := exec.Command("go", "tool", "oapi-codegen", "-config", "config.yaml", "-o", fresh, "../../docs/openapi.yaml")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("oapi-codegen: %v\n%s", err, out)
	}
	want, err := os.ReadFile(fresh)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("client.gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("client.gen.go is not what docs/openapi.yaml generates (%d bytes, want %d): run go generate ./internal/apiclient/", len(got), len(want))
	}
}
