package testprog

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

var (
	recordOnce sync.Once
	recordBin  string
	recordErr  error
	recordOut  []byte
)

// recordTool builds the record command once per test process.
func recordTool(t testing.TB) string {
	t.Helper()
	recordOnce.Do(func() {
		gotool, err := exec.LookPath("go")
		if err != nil {
			gotool = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		dir, err := os.MkdirTemp("", "mgtrace-record-")
		if err != nil {
			recordErr = err
			return
		}
		recordBin = filepath.Join(dir, "record")
		cmd := exec.Command(gotool, "build", "-o", recordBin, "./record")
		cmd.Dir = Root(t)
		recordOut, recordErr = cmd.CombinedOutput()
	})
	if recordErr != nil {
		t.Fatalf("testprog: go build ./record: %v\n%s", recordErr, recordOut)
	}
	return recordBin
}

// Record records a run of the program at path (from Build) with args and
// returns the trace's path, in a directory the test removes. It skips the
// test when Valgrind or the probe cannot be had (see Probe), and fails it
// when the recorder fails; the program's own exit status does not matter.
func Record(t testing.TB, prog string, args ...string) string {
	t.Helper()
	trace, _ := RecordOutput(t, prog, args...)
	return trace
}

// RecordOutput is Record that also returns what the program wrote on its
// standard output while it was recorded (the recorder passes it through;
// its own messages go to standard error and are left out).
func RecordOutput(t testing.TB, prog string, args ...string) (trace, stdout string) {
	t.Helper()
	trace, stdout, _ = RecordOutputs(t, prog, args...)
	return trace, stdout
}

// RecordOutputs is RecordOutput that also returns the standard error of
// the recording: the program's own, and the recorder's errors (it runs
// with -q, so it adds nothing else).
func RecordOutputs(t testing.TB, prog string, args ...string) (trace, stdout, stderr string) {
	t.Helper()
	return RecordWith(t, nil, prog, args...)
}

// RecordWith is RecordOutputs with record's own flags before the program,
// e.g. []string{"--preempt", "30", "--sched-seed", "4"}.
func RecordWith(t testing.TB, flags []string, prog string, args ...string) (trace, stdout, stderr string) {
	t.Helper()
	probe := Probe(t)
	rec := recordTool(t)
	trace = filepath.Join(t.TempDir(), filepath.Base(prog)+".trace")
	cmdArgs := append([]string{"-q", "--probe-dir", probe, "-o", trace}, flags...)
	cmdArgs = append(cmdArgs, "--", prog)
	cmd := exec.Command(rec, append(cmdArgs, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if _, serr := os.Stat(trace); serr != nil {
		t.Fatalf("testprog: record %s %s: %v\n%s%s", prog, strings.Join(args, " "), err, out.Bytes(), errOut.Bytes())
	}
	return trace, out.String(), errOut.String()
}

// RecordTool returns the path of the record command built from this
// checkout, once per test process (for tests that run record themselves,
// with flags of their own; pass it --probe-dir Probe(t)).
func RecordTool(t testing.TB) string {
	t.Helper()
	return recordTool(t)
}
