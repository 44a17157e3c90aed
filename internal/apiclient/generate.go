// Package apiclient is Stagedoor's typed API client, generated from the
// contract (docs/openapi.yaml) by oapi-codegen, pinned as a tool in go.mod:
// the demo, the on-sale simulator and the tests' set-up call the API through
// it, and TestGeneratedClientIsCurrent fails when the contract changed and
// client.gen.go was not generated again (go generate ./internal/apiclient/).
//
// overlay.yaml adapts the contract for generation only: every problem's body
// is one Go type (Problem), and a problem's headers are read from
// HTTPResponse.Header.
package apiclient

//go:generate go tool oapi-codegen -config config.yaml -o client.gen.go ../../docs/openapi.yaml
