package results

import (
	"errors"
	"flag"
	"fmt"
	"io"
)

// CheckArgs deals with err, the outcome of parsing a tool's command line
// with fs, and says whether the tool should exit, with which status. For
// flag.ErrHelp (-h or -help) it writes usage and then fs's flags with
// their defaults to stdout and returns 0 and true; for another error it
// writes "TOOL: ERR (see TOOL -h)" to stderr and returns 2 and true; for
// nil it writes nothing and returns 0 and false. It sets fs's output to
// stdout.
func CheckArgs(stdout, stderr io.Writer, tool, usage string, fs *flag.FlagSet, err error) (status int, exit bool) {
	switch {
	case err == nil:
		return 0, false
	case errors.Is(err, flag.ErrHelp):
		fmt.Fprint(stdout, usage)
		fs.SetOutput(stdout)
		fs.PrintDefaults()
		return 0, true
	}
	fmt.Fprintf(stderr, "%s: %v (see %s -h)\n", tool, err, tool)
	return 2, true
}
