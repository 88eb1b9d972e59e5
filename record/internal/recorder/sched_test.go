package recorder

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSchedArgs checks the valgrind options that Preempt and SchedSeed
// give: none without Preempt, the probe's two and --fair-sched=yes unless
// the caller gave a --fair-sched, and an error for a bad Preempt.
func TestSchedArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		opts    Options
		want    string // the options joined by spaces
		wantErr string
	}{
		{"off", Options{}, "", ""},
		{"off with a seed", Options{SchedSeed: 5}, "", ""},
		{"on", Options{Preempt: 100, SchedSeed: 7}, "--mgt-preempt=100 --mgt-sched-seed=7 --fair-sched=yes", ""},
		{"largest seed", Options{Preempt: 1, SchedSeed: 1<<64 - 1}, "--mgt-preempt=1 --mgt-sched-seed=18446744073709551615 --fair-sched=yes", ""},
		{"own fair-sched", Options{Preempt: 3, ValgrindArgs: []string{"--fair-sched=try"}}, "--mgt-preempt=3 --mgt-sched-seed=0", ""},
		{"own fair-sched no", Options{Preempt: 3, ValgrindArgs: []string{"-v", "--fair-sched=no"}}, "--mgt-preempt=3 --mgt-sched-seed=0", ""},
		{"a lookalike is not fair-sched", Options{Preempt: 3, ValgrindArgs: []string{"--fair-schedule=no"}}, "--mgt-preempt=3 --mgt-sched-seed=0 --fair-sched=yes", ""},
		{"negative", Options{Preempt: -1}, "", "preempt must be from 1 to 1000000000, not -1"},
		{"too large", Options{Preempt: MaxPreempt + 1}, "", "not 1000000001"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := schedArgs(tc.opts)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("schedArgs: error %v, want one with %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("schedArgs: %v", err)
			}
			if s := strings.Join(got, " "); s != tc.want {
				t.Errorf("schedArgs = %q, want %q", s, tc.want)
			}
		})
	}
}

// TestMakeWorkDir checks that the work folders have names of one length,
// so that the program's environment has the same length every time.
func TestMakeWorkDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	seen := map[string]bool{}
	length := -1
	for range 20 {
		dir, err := makeWorkDir()
		if err != nil {
			t.Fatal(err)
		}
		defer os.RemoveAll(dir)
		if seen[dir] {
			t.Fatalf("makeWorkDir gave %s twice", dir)
		}
		seen[dir] = true
		if filepath.Dir(dir) != os.Getenv("TMPDIR") {
			t.Errorf("%s is not in TMPDIR %s", dir, os.Getenv("TMPDIR"))
		}
		if length >= 0 && len(dir) != length {
			t.Errorf("%s: %d bytes, the first had %d", dir, len(dir), length)
		}
		length = len(dir)
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v, %v; want a folder with mode 0700", dir, fi, err)
		}
	}
}
