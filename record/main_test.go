package main

// End-to-end tests of the record command: its exit status, its messages,
// and what happens to the trace when the command is killed.
//
// The probe is built once per test binary from record/vgtool into a cache
// folder under os.TempDir() keyed by a hash of its sources; tests that need
// it skip when valgrind, gcc, make or the Valgrind headers are missing.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// ---------------------------------------------------------------------------
// The probe (as in record/internal/recorder's tests).

// needProbe returns the folder of a probe built from the current sources
// (see testprog.Probe).
func needProbe(t testing.TB) string { return testprog.Probe(t) }

// ---------------------------------------------------------------------------
// Helpers.

// runRecord calls run with args and returns its status, stdout and stderr.
func runRecord(args ...string) (int, string, string) {
	var stdout, stderr bytes.Buffer
	status := run(args, strings.NewReader(""), &stdout, &stderr)
	return status, stdout.String(), stderr.String()
}

// readEvents reads every event of the trace at path (copying each one).
func readEvents(t *testing.T, path string) ([]schema.Event, *schema.Reader) {
	t.Helper()
	r, err := schema.Open(path)
	if err != nil {
		t.Fatalf("open the trace: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	var evs []schema.Event
	for {
		ev, err := r.Next()
		if err == io.EOF {
			return evs, r
		}
		if err != nil {
			t.Fatalf("read the trace %s after %d events: %v", path, len(evs), err)
		}
		e := *ev
		e.Data = append([]byte(nil), ev.Data...)
		evs = append(evs, e)
	}
}

// goTool returns the go command.
func goTool(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	p := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(p); err != nil {
		t.Skipf("the go command is not available to build the commands: %v", err)
	}
	return p
}

// buildCommand builds the command in package pkg into dir.
func buildCommand(t *testing.T, dir, pkg string) string {
	t.Helper()
	out := filepath.Join(dir, filepath.Base(pkg))
	cmd := exec.Command(goTool(t), "build", "-o", out, pkg)
	cmd.Dir = testprog.Root(t)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, b)
	}
	return out
}

// ---------------------------------------------------------------------------
// 3. A program killed by SIGSEGV.

func TestWildSegfault(t *testing.T) {
	t.Parallel()
	probe := needProbe(t)
	bin := testprog.Build(t, "wild")
	faultLine := testprog.Line(t, "wild", "/* FAULT */")
	trace := filepath.Join(t.TempDir(), "wild.trace")

	status, stdout, stderr := runRecord("--probe-dir", probe, "-o", trace, "--", bin)
	if status != 139 {
		t.Fatalf("record wild: exit status %d, want 139 (128+SIGSEGV)\nstderr:\n%s", status, stderr)
	}
	if want := "sum 4950\nslot 0x8\n"; stdout != want {
		t.Errorf("wild's stdout under record is %q, want %q", stdout, want)
	}
	if !strings.Contains(stderr, "killed by signal 11") {
		t.Errorf("record's summary does not say the program was killed by signal 11:\n%s", stderr)
	}

	evs, r := readEvents(t, trace)
	if end := r.End(); !end.Whole {
		t.Errorf("trace is not whole: truncated at byte %d of %d (%s)", end.TruncatedAt, end.Size, end.Reason)
	}
	if f := r.Footer(); f == nil || f.Exit == nil || !f.Exit.Ended || f.Exit.Signal != 11 {
		got := "(no footer)"
		if f != nil {
			got = fmt.Sprintf("%v", f.Exit)
		}
		t.Errorf("footer exit status %s, want ended by signal 11", got)
	}

	n := len(evs)
	if n < 2 {
		t.Fatalf("the trace holds %d events", n)
	}
	exit := evs[n-1]
	if exit.Kind != schema.KindExit || exit.Num != 11 {
		t.Fatalf("the last event is %s num %d, want EXIT with num 11", exit.Kind, exit.Num)
	}
	// Before the EXIT: the SIGNAL, and at most the dying thread's exit.
	i := n - 2
	for i > 0 && evs[i].Kind == schema.KindThreadExit {
		i--
	}
	sig := evs[i]
	if sig.Kind != schema.KindSignal {
		t.Fatalf("the event before EXIT (and thread exits) is %s (#%d), want SIGNAL", sig.Kind, sig.Seq)
	}
	if n-2-i > 1 {
		t.Errorf("%d THREAD_EXIT events between the SIGNAL and the EXIT, want at most 1", n-2-i)
	}
	if sig.Num != 11 || sig.Addr != 0x8 {
		t.Errorf("SIGNAL num %d addr %#x, want 11 and 0x8", sig.Num, sig.Addr)
	}
	loc := r.Tables().Locate(sig.PC)
	if filepath.Base(loc.File) != "wild.c" || int(loc.Line) != faultLine {
		t.Errorf("SIGNAL pc %#x is located at %s, want wild.c:%d (the FAULT line)", sig.PC, loc, faultLine)
	}
}

// ---------------------------------------------------------------------------
// 4. record killed with SIGKILL: the trace reads up to its last whole block.

func TestKilledRecorder(t *testing.T) {
	t.Parallel()
	probe := needProbe(t)
	prog := testprog.Build(t, "list")
	dir := t.TempDir()
	record := buildCommand(t, dir, "github.com/mgtrace/mgtrace/record")
	analyze := buildCommand(t, dir, "github.com/mgtrace/mgtrace/analyze")
	trace := filepath.Join(dir, "list.trace")
	work := t.TempDir() // the recorder's and valgrind's temporary files

	// list with a million nodes records for much longer than this test
	// lets it run.
	cmd := exec.Command(record, "-q", "--probe-dir", probe, "-o", trace, "--", prog, "1000000")
	cmd.Env = append(os.Environ(), "TMPDIR="+work)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pgid := cmd.Process.Pid
	killed := false
	defer func() {
		if !killed {
			syscall.Kill(-pgid, syscall.SIGKILL)
			cmd.Wait()
		}
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	const grown = 400 << 10
	deadline := time.After(60 * time.Second)
	var size int64
wait:
	for {
		select {
		case err := <-exited:
			killed = true
			t.Fatalf("record ended (%v) before the trace grew past %d bytes (it has %d)\nstderr:\n%s", err, grown, size, stderr.String())
		case <-deadline:
			t.Fatalf("the trace did not grow past %d bytes in 60 s (it has %d)", grown, size)
		case <-time.After(10 * time.Millisecond):
			if st, err := os.Stat(trace); err == nil {
				size = st.Size()
				if size > grown {
					break wait
				}
			}
		}
	}
	// Kill record and valgrind (same process group) at once.
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the process group: %v", err)
	}
	killed = true
	err := <-exited
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("record ended with %v, want killed by SIGKILL", err)
	}

	r, err := schema.Open(trace)
	if err != nil {
		t.Fatalf("open the trace of a killed recorder: %v", err)
	}
	defer r.Close()
	var events uint64
	for {
		_, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("read the trace of a killed recorder after %d events: %v", events, err)
		}
		events++
	}
	end := r.End()
	if end.Whole {
		t.Errorf("the trace of a killed recorder says it is whole (%+v)", end)
	}
	if end.TruncatedAt <= 0 || end.TruncatedAt > end.Size {
		t.Errorf("TruncatedAt %d, want in (0, %d]", end.TruncatedAt, end.Size)
	}
	if r.Footer() != nil {
		t.Errorf("the trace of a killed recorder has a footer")
	}
	if events == 0 {
		t.Errorf("no events read from a %d-byte trace", end.Size)
	}
	t.Logf("killed at %d bytes: %d events read, truncated at byte %d of %d (%s)", size, events, end.TruncatedAt, end.Size, end.Reason)

	var out, errOut bytes.Buffer
	info := exec.Command(analyze, "info", trace)
	info.Stdout, info.Stderr = &out, &errOut
	if err := info.Run(); err != nil {
		t.Errorf("analyze info on the truncated trace: %v\nstderr:\n%s", err, errOut.String())
	}
	if !strings.Contains(out.String(), "truncated at byte") {
		t.Errorf("analyze info does not say \"truncated at byte\":\n%s%s", out.String(), errOut.String())
	}
}

// ---------------------------------------------------------------------------
// 9. Usage errors: exit 2 and a short message.

// oneLine fails the test unless s is exactly one non-empty line.
func oneLine(t *testing.T, what, s string) {
	t.Helper()
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 || strings.TrimSpace(s) == "" {
		t.Errorf("%s: stderr is not exactly one line: %q", what, s)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	t.Run("no valgrind", func(t *testing.T) {
		t.Parallel()
		trace := filepath.Join(t.TempDir(), "x.trace")
		status, stdout, stderr := runRecord("--valgrind=/nonexistent", "-o", trace, "--", "true")
		if status != 2 {
			t.Errorf("exit status %d, want 2", status)
		}
		oneLine(t, "--valgrind=/nonexistent", stderr)
		if !strings.Contains(stderr, "valgrind") || !strings.Contains(stderr, "install") {
			t.Errorf("stderr %q does not say to install valgrind", stderr)
		}
		if !strings.Contains(stderr, "/nonexistent") {
			t.Errorf("stderr %q does not name the --valgrind path", stderr)
		}
		if stdout != "" {
			t.Errorf("stdout %q, want nothing", stdout)
		}
		if _, err := os.Stat(trace); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a trace file was left behind (stat: %v)", err)
		}
	})
	t.Run("missing program", func(t *testing.T) {
		t.Parallel()
		if _, err := exec.LookPath("valgrind"); err != nil {
			t.Skipf("valgrind is not installed (%v): record would complain about it first", err)
		}
		trace := filepath.Join(t.TempDir(), "x.trace")
		const prog = "/nonexistent/program"
		status, _, stderr := runRecord("-o", trace, "--", prog)
		if status != 2 {
			t.Errorf("exit status %d, want 2", status)
		}
		oneLine(t, "missing program", stderr)
		if !strings.Contains(stderr, prog) {
			t.Errorf("stderr %q does not name the program %s", stderr, prog)
		}
		if _, err := os.Stat(trace); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("a trace file was left behind (stat: %v)", err)
		}
	})
	t.Run("no program", func(t *testing.T) {
		t.Parallel()
		status, _, stderr := runRecord()
		if status != 2 {
			t.Errorf("exit status %d, want 2", status)
		}
		if !strings.HasPrefix(stderr, "record: ") {
			t.Errorf("stderr %q does not start with \"record: \"", stderr)
		}
		status, _, _ = runRecord("-o", filepath.Join(t.TempDir(), "x.trace"))
		if status != 2 {
			t.Errorf("with -o and no program: exit status %d, want 2", status)
		}
	})
	t.Run("bad flag", func(t *testing.T) {
		t.Parallel()
		status, _, stderr := runRecord("--no-such-flag", "true")
		if status != 2 {
			t.Errorf("exit status %d, want 2", status)
		}
		if !strings.Contains(stderr, "no-such-flag") {
			t.Errorf("stderr %q does not name the bad flag", stderr)
		}
	})
}

func TestParseSize(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"4096", 4096, true}, {"16MiB", 16 << 20, true}, {"2K", 2048, true},
		{"1 GiB", 1 << 30, true}, {"3mb", 3 << 20, true}, {"1024GiB", 1 << 40, true},
		{"", 0, false}, {"-1", 0, false}, {"12XB", 0, false}, {"MiB", 0, false}, {"1025GiB", 0, false},
		{"1.5MiB", 0, false},
	} {
		got, err := parseSize(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d, ok %v", c.in, got, err, c.want, c.ok)
		}
	}
	status, _, stderr := runRecord("--input-cap", "12XB", "--", "true")
	if status != 2 || !strings.HasPrefix(stderr, "record: --input-cap: ") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("record --input-cap 12XB: status %d, stderr %q; want 2 and one line about --input-cap", status, stderr)
	}
}

// TestLevelFlag checks record --level: a bad value is one line, and the
// help names every level.
func TestLevelFlag(t *testing.T) {
	status, _, stderr := runRecord("--level", "most", "--", "true")
	if want := "record: --level: level must be full, heap or flow, not \"most\"\n"; status != 2 || stderr != want {
		t.Errorf("record --level most: status %d, stderr %q; want 2, %q", status, stderr, want)
	}
	status, stdout, _ := runRecord("--help")
	for _, w := range []string{"--level", "full", "heap", "flow"} {
		if status != 0 || !strings.Contains(stdout, w) {
			t.Errorf("record --help: status %d, no %q in:\n%s", status, w, stdout)
		}
	}
}
