// Package archtest holds the architecture tests: checks over the source of the
// whole module rather than over one package's behaviour. It has no code of its
// own.
//
// TestSQLNamesOnlyOwnedTables reads the ownership table of docs/design.md
// ("Where each rule lives") and fails when a package's SQL writes a table that
// another package owns, or reads one that it neither owns nor lists among its
// reads.
package archtest
