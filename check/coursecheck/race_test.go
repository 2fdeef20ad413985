//go:build race

package coursecheck

// Under go test -race every dependency was compiled with -race: exportData
// asks go list for the same builds, which the cache then holds.
func init() { goListFlags = append(goListFlags, "-race") }
