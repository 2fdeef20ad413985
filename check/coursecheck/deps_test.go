package coursecheck

// Every package the chapters import, compiled by go test before this
// test binary is linked, so that exportData's go list finds them all in
// the build cache instead of compiling them again (see chapterdeps).
import _ "github.com/informer-walkthrough/informer-walkthrough/check/chapterdeps"
