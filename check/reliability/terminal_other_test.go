//go:build !linux

package reliability

import (
	"os"
	"testing"
)

// openTerminal needs Linux's pseudo-terminals.
func openTerminal(t *testing.T) (keyboard, tty *os.File) {
	t.Skip("needs Linux pseudo-terminals")
	return nil, nil
}
