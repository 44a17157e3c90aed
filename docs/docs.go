// Package docs holds the documents that the code uses too, embedded so that
// what the tests run is what an operator reads.
package docs

import _ "embed"

// InvariantSQL is docs/invariant.sql: the money invariant as one query whose
// every row is a violation.
//
//go:embed invariant.sql
var InvariantSQL string
