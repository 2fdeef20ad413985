// Package nextpage checks docs/client-go-v0.38.md, the page on what
// changes in the next client-go, against the sources of both versions it
// compares (issue 37). It has only tests.
package nextpage
