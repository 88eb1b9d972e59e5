package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/sarif"
	"github.com/mgtrace/mgtrace/internal/testprog"
)

// TestInstall installs record, analyze, mgtrace-ci and the probe with
// `make install PREFIX=TMP` (from commands built here, INSTALL_FROM),
// records a program with the installed record, which must find the probe
// in PREFIX/libexec/mgtrace with no flag or environment variable, also
// through a symbolic link elsewhere, and reads the trace with the
// installed analyze; runs the installed mgtrace-ci as docs/ci.md does
// (checkCIScript); and checks that `make uninstall` removes what was
// installed.
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
	for _, f := range []string{"bin/record", "bin/analyze", "bin/mgtrace-ci", "libexec/mgtrace/" + testprog.ProbeFile, "include/mgtrace.h"} {
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
	t.Run("mgtrace-ci", func(t *testing.T) { checkCIScript(t, root, filepath.Join(prefix, "bin")) })
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

// checkCIScript runs mgtrace-ci from bin (an installed PREFIX/bin on PATH)
// on the quick start's jobs.c with its spec (exit status 1, every file of
// docs/ci.md written, the SARIF files valid, locate's naming the BUG
// line) and on a passing program without a spec (exit status 0), and
// checks that docs/ci.md quotes tools/mgtrace-ci as it is.
func checkCIScript(t *testing.T, root, bin string) {
	script, err := os.ReadFile(filepath.Join(root, "tools", "mgtrace-ci"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs", "ci.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(doc), "```bash\n"+string(script)+"```\n") {
		t.Errorf("docs/ci.md does not quote tools/mgtrace-ci as it is: copy the file into its last code block")
	}
	jobs := testprog.Build(t, "quickstart/jobs", testprog.Flags("-g", "-O0", "-fno-omit-frame-pointer"))
	list := testprog.Build(t, "list")
	env := append(withoutProbeEnv(), "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "GITHUB_STEP_SUMMARY=")
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		files  []string
	}{
		{"jobs with its spec", []string{"--spec", "testdata/programs/quickstart/jobs.spec", "--", jobs}, 1,
			[]string{"run.trace", "report.html", "check.sarif", "locate.sarif", "bugs.sarif", "status"}},
		{"a passing program", []string{"--", list, "3"}, 0, []string{"run.trace", "report.html", "bugs.sarif", "status"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			cmd := exec.Command(filepath.Join(bin, "mgtrace-ci"), append([]string{"--out", out}, tc.args...)...)
			cmd.Dir = root // the spec's path, and SARIF paths relative to the repository
			cmd.Env = env
			b, err := cmd.CombinedOutput()
			status := 0
			if ee, ok := err.(*exec.ExitError); ok {
				status = ee.ExitCode()
			} else if err != nil {
				t.Fatalf("mgtrace-ci: %v", err)
			}
			if status != tc.status {
				t.Fatalf("mgtrace-ci exit status %d, want %d:\n%s", status, tc.status, b)
			}
			for _, f := range tc.files {
				data, err := os.ReadFile(filepath.Join(out, f))
				if err != nil || len(data) == 0 {
					t.Fatalf("mgtrace-ci wrote no %s: %v\n%s", f, err, b)
				}
				if strings.HasSuffix(f, ".sarif") {
					if err := sarif.Validate(data); err != nil {
						t.Errorf("%s: %v", f, err)
					}
				}
			}
			if tc.status == 1 {
				loc, _ := os.ReadFile(filepath.Join(out, "locate.sarif"))
				want := `"uri": "testdata/programs/quickstart/jobs.c"`
				line := fmt.Sprintf(`"startLine": %d`, testprog.Line(t, "quickstart/jobs", "/* BUG:"))
				if !strings.Contains(string(loc), want) || !strings.Contains(string(loc), line) {
					t.Errorf("locate.sarif does not name jobs.c at the BUG line (%s):\n%.1500s", line, loc)
				}
			}
		})
	}
}
