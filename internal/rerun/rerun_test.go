package rerun

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestRun checks how runs end: an exit status, a signal, a timeout,
// standard input from a file, and the errors.
func TestRun(t *testing.T) {
	in := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(in, []byte("hello"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		cmd  Command
		want Result
		err  bool
	}{
		{"exit", Command{Args: []string{"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}}, Result{Stdout: []byte("out\n"), Stderr: "err", Status: 3}, false},
		{"signal", Command{Args: []string{"/bin/sh", "-c", "kill -SEGV $$"}}, Result{Status: -1, Signal: syscall.SIGSEGV}, false},
		{"timeout", Command{Args: []string{"/bin/sh", "-c", "sleep 10"}, Timeout: 100 * time.Millisecond}, Result{Status: 0, TimedOut: true}, false},
		{"stdin", Command{Args: []string{"/bin/cat"}, Stdin: in, MaxStdout: 3}, Result{Stdout: []byte("hel")}, false},
		{"no command", Command{}, Result{}, true},
		{"no stdin", Command{Args: []string{"/bin/cat"}, Stdin: in + ".none"}, Result{}, true},
		{"no program", Command{Args: []string{"/nonexistent/prog"}}, Result{}, true},
	}
	for _, tc := range tests {
		got, err := Run(context.Background(), tc.cmd)
		if (err != nil) != tc.err {
			t.Errorf("%s: error %v, want error %v", tc.name, err, tc.err)
			continue
		}
		if err != nil {
			continue
		}
		if string(got.Stdout) != string(tc.want.Stdout) || got.Stderr != tc.want.Stderr || got.Status != tc.want.Status ||
			got.Signal != tc.want.Signal || got.TimedOut != tc.want.TimedOut {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
