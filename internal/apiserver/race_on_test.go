//go:build race

package apiserver

const raceEnabled = true
