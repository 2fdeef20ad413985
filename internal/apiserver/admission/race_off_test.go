//go:build !race

package admission_test

const raceEnabled = false
