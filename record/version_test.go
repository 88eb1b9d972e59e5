package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/record/internal/probe"
	"github.com/mgtrace/mgtrace/schema"
)

// TestVersion checks 'record --version': the release line, the commit,
// the trace format it writes and the probe protocol.
func TestVersion(t *testing.T) {
	code, out, errOut := runRecord("--version")
	if code != 0 || errOut != "" {
		t.Fatalf("record --version: status %d, stderr %q", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "record (mgtrace) ") || !strings.HasPrefix(lines[1], "commit: ") ||
		lines[2] != fmt.Sprintf("trace format: writes version %d", schema.FormatVersion) ||
		!strings.HasPrefix(lines[3], fmt.Sprintf("probe protocol: %d ", probe.ProtocolVersion)) {
		t.Errorf("record --version printed %q", out)
	}
}
