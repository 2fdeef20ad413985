//go:build sourcemain

// Command sourcemain is the main package of the chapters' binary that
// TestSource builds with coverage (see build in ../build_test.go): the
// cover tool reads a main package from disk, and the chapters' package
// exists only in that build's overlay, hence the build tag.
package main

import "github.com/informer-walkthrough/informer-walkthrough/check/reliability/chapters"

func main() { chapters.Main() }
