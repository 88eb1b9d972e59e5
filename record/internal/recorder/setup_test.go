package recorder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFindProbe checks the order of the places findProbe looks in:
// --probe-dir, then $MGTRACE_PROBE_DIR, each an error when it lacks the
// probe. (The places relative to the executable are tested by record's
// TestInstall, which installs the commands with make install.)
func TestFindProbe(t *testing.T) {
	with, without := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(with, toolFile), []byte("probe"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, flag, env string
		want, err       string
	}{
		{name: "flag", flag: with, env: without, want: with},
		{name: "flag without the probe", flag: without, env: with, err: "is not in " + without},
		{name: "environment", env: with, want: with},
		{name: "environment without the probe", env: without, err: "(from $" + ProbeDirEnv + ")"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(ProbeDirEnv, tc.env)
			got, err := findProbe(tc.flag)
			switch {
			case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
				t.Errorf("findProbe(%q) with $%s=%q: error %v, want one with %q", tc.flag, ProbeDirEnv, tc.env, err, tc.err)
			case tc.err == "" && (err != nil || got != tc.want):
				t.Errorf("findProbe(%q) with $%s=%q = %q, %v; want %q", tc.flag, ProbeDirEnv, tc.env, got, err, tc.want)
			}
		})
	}
}
