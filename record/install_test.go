package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestInstall installs record, analyze and the probe with `make install
// PREFIX=TMP` (from commands built here, INSTALL_FROM), records a program
// with the installed record, which must find the probe in
// PREFIX/libexec/mgtrace with no flag or environment variable, also
// through a symbolic link elsewhere, reads the trace with the installed
// analyze, and checks that `make uninstall` removes what was installed.
func TestInstall(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the commands and records a program")
	}
	mk, err := exec.LookPath("make")
	if err != nil {
		t.Skipf("make is not installed: %v", err)
	}
	probeDir := needProbe(t)
	prog := testprog.Build(t, "list")
	root := testprog.Root(t)
	tmp := t.TempDir()
	from := filepath.Join(tmp, "built")
	if err := os.Mkdir(from, 0o755); err != nil {
		t.Fatal(err)
	}
	buildCommand(t, from, "./record")
	buildCommand(t, from, "./analyze")
	probe, err := os.ReadFile(filepath.Join(probeDir, testprog.ProbeFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(from, testprog.ProbeFile), probe, 0o755); err != nil {
		t.Fatal(err)
	}
	prefix := filepath.Join(tmp, "prefix")
	makeRun := func(target string) {
		t.Helper()
		// -o build: install from INSTALL_FROM without rebuilding bin/.
		cmd := exec.Command(mk, "--no-print-directory", "-o", "build", target, "PREFIX="+prefix, "INSTALL_FROM="+from)
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("make %s: %v\n%s", target, err, out)
		}
	}
	makeRun("install")
	for _, f := range []string{"bin/record", "bin/analyze", "libexec/mgtrace/" + testprog.ProbeFile, "include/mgtrace.h"} {
		if _, err := os.Stat(filepath.Join(prefix, f)); err != nil {
			t.Fatalf("make install: %v", err)
		}
	}
	link := filepath.Join(tmp, "elsewhere")
	if err := os.Mkdir(link, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(prefix, "bin", "record"), filepath.Join(link, "record")); err != nil {
		t.Fatal(err)
	}
	for _, rec := range []string{filepath.Join(prefix, "bin", "record"), filepath.Join(link, "record")} {
		trace := filepath.Join(tmp, filepath.Base(filepath.Dir(rec))+".trace")
		cmd := exec.Command(rec, "-q", "-o", trace, "--", prog, "3")
		cmd.Env = withoutProbeEnv()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("installed %s: %v\n%s", rec, err, out)
		}
		out, err := exec.Command(filepath.Join(prefix, "bin", "analyze"), "info", trace).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "exited with code 0") {
			t.Fatalf("installed analyze info %s: %v\n%s", trace, err, out)
		}
	}
	makeRun("uninstall")
	var left []string
	filepath.Walk(prefix, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("make uninstall left %v", left)
	}
}

// withoutProbeEnv is the environment without $MGTRACE_PROBE_DIR.
func withoutProbeEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "MGTRACE_PROBE_DIR=") {
			env = append(env, kv)
		}
	}
	return env
}
