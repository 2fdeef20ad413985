package reliability

// Every package the chapters import, compiled by go test before this
// test binary is linked, so that build's go build finds them all in the
// build cache and compiles only the chapters themselves (see chapterdeps).
import _ "github.com/informer-walkthrough/informer-walkthrough/check/chapterdeps"
