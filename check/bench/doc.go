// Package bench holds the course's benchmarks: what the informer
// machinery costs, measured against the embedded workshop cluster, and
// what the workshop cluster itself costs under load. BENCHMARKS.md at the
// repository root explains each one and reports the figures.
//
// The package has no tests, only benchmarks, built only with -tags bench:
// go test ./... would otherwise link a test binary here to run nothing
// (about 2 s of CPU), and CI vets them with the tag (.ci/run). Run the
// benchmarks with
//
//	go test -tags bench -run '^$' -bench . ./check/bench
//
// Each benchmark measures the things it compares side by side in one
// run, interleaved, and reports the ratio with b.ReportMetric, so that a
// busy machine slows both sides alike and the ratio stays meaningful.
package bench
