package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/schema"
)

// TestVersion checks 'analyze --version' and 'analyze version': the
// release line, the commit and the trace format this build reads.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"--version"}, {"version"}} {
		out, errOut, status := runAnalyze(t, args...)
		if status != exitOK || errOut != "" {
			t.Fatalf("analyze %v: status %d, stderr %q", args, status, errOut)
		}
		lines := strings.Split(strings.TrimSpace(out), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[0], "analyze (mgtrace) ") || !strings.HasPrefix(lines[1], "commit: ") ||
			lines[2] != fmt.Sprintf("trace format: reads version %d", schema.FormatVersion) {
			t.Errorf("analyze %v printed %q", args, out)
		}
	}
	if _, errOut, status := runAnalyze(t, "version", "x"); status != exitError || !strings.Contains(errOut, "takes no arguments") {
		t.Errorf("analyze version x: status %d, stderr %q", status, errOut)
	}
}
