// Package term answers the one question the commands ask about their
// output: is it a terminal (so that progress lines make sense)?
package term

import (
	"io"
	"os"
)

// IsTerminal reports whether w is a terminal (a character device).
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
