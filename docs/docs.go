// Package docs holds the documents that the code uses too, embedded so that
// what the tests run is what an operator reads.
package docs

import _ "embed"

// InvariantSQL is docs/invariant.sql: the money invariant as one query whose
// every row is a violation.
//
//go:embed invariant.sql
var InvariantSQL string

// OpenAPI is docs/openapi.yaml: the HTTP contract. The server serves it, builds
// its catalogue of problem types from it, and the tests check every request
// and response against it.
//
//go:embed openapi.yaml
var OpenAPI []byte
