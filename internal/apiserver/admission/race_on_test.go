//go:build race

package admission_test

const raceEnabled = true
