// Package version holds what `record --version` and `analyze --version`
// print: the release (from `git describe`, set by `make build` with
// -ldflags -X) and the commit it was built from.
//
// A plain `go build ./...` leaves Version at "devel" and takes the commit
// from the module's build information when Go recorded one.
package version

import (
	"fmt"
	"runtime/debug"
	"strings"
)

// Version is the release, as `git describe --tags --always --dirty` gives
// it. `make build` sets it with
// -ldflags "-X github.com/mgtrace/mgtrace/internal/version.Version=...".
var Version = "devel"

// Commit is the full commit hash the binaries were built from; `make
// build` sets it like Version. Empty when unknown.
var Commit = ""

// Info is what a --version line reports.
type Info struct {
	Program string // "record" or "analyze"
	Version string
	Commit  string // "unknown" when neither -ldflags nor the build info gave one
	// Formats are the trace format versions the program writes or reads,
	// and Extra any further "name: value" lines (the probe protocol).
	Formats string
	Extra   []string
}

// Get returns the version information of program with the given trace
// format line and extra lines.
func Get(program, formats string, extra ...string) Info {
	return Info{Program: program, Version: Version, Commit: commit(), Formats: formats, Extra: extra}
}

// commit returns Commit, else the VCS revision Go stamped into the
// binary, else "unknown".
func commit() string {
	if Commit != "" {
		return Commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		rev, dirty := "", false
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				dirty = s.Value == "true"
			}
		}
		if rev != "" {
			if dirty {
				rev += "-dirty"
			}
			return rev
		}
	}
	return "unknown"
}

// String renders the information as --version prints it: the first line
// "PROGRAM (mgtrace) VERSION", then one "name: value" line each.
func (i Info) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (mgtrace) %s\n", i.Program, i.Version)
	fmt.Fprintf(&b, "commit: %s\n", i.Commit)
	fmt.Fprintf(&b, "trace format: %s\n", i.Formats)
	for _, e := range i.Extra {
		fmt.Fprintf(&b, "%s\n", e)
	}
	return b.String()
}
