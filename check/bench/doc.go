// Package bench holds the course's benchmarks: what the informer
// machinery costs, measured against the embedded workshop cluster, and
// what the workshop cluster itself costs under load. BENCHMARKS.md at the
// repository root explains each one and reports the figures.
//
// The package has no tests, only benchmarks, so a plain `go test ./...`
// compiles it and runs nothing. Run the benchmarks with
//
//	go test -run '^$' -bench . ./check/bench
//
// Each benchmark measures the things it compares side by side in one
// run, interleaved, and reports the ratio with b.ReportMetric, so that a
// busy machine slows both sides alike and the ratio stays meaningful.
package bench
