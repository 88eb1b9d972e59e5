package reduce

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mgtrace/mgtrace/critical"
	"github.com/mgtrace/mgtrace/internal/rerun"
)

// Oracle kinds: what "the same failure" is.
const (
	// OracleCrash: the program, re-recorded with the record command, is
	// killed by the same signal at the same source line as with the
	// original input (judged from the re-run's trace as analyze critical
	// judges a crash).
	OracleCrash = "crash"
	// OracleStatus: the program, run plainly (not recorded), exits with
	// status Status (128+N when killed by signal N, as a shell says).
	OracleStatus = "exit-status"
	// OracleCommand: the user's command exits 0.
	OracleCommand = "command"
)

// Runs says how the program is run on a candidate input.
type Runs struct {
	// Program is the program and its arguments. An argument "@@", or one
	// equal to Input, is replaced by the candidate's path; when there is
	// none, the candidate is the program's standard input.
	Program []string
	// Input is the original input's path, as given.
	Input string
	// Oracle is OracleCrash, OracleStatus or OracleCommand.
	Oracle string
	// Status is OracleStatus's exit status.
	Status int
	// Command is OracleCommand's shell command (sh -c); "@@" in it and
	// $REDUCE_INPUT are the candidate's path.
	Command string
	// Record is the record command (OracleCrash); RecordArgs extra flags
	// for it (--probe-dir DIR, ...).
	Record     string
	RecordArgs []string
	// Timeout bounds one run (a run past it does not fail).
	Timeout time.Duration
	// Dir holds the candidates and the re-runs' traces (a temporary
	// folder the caller removes).
	Dir string
	// KeepTrace keeps the recording of the original input (OracleCrash's
	// Original, or RecordOriginal) in Dir for IDTHDD: see
	// Tester.OriginalRun.
	KeepTrace bool
}

// Tester makes the Test of a reduction from Runs.
type Tester struct {
	runs Runs
	n    atomic.Int64
	// want is the original crash (OracleCrash), set by Original.
	want critical.Ending
	// orig is the kept recording of the original input (KeepTrace).
	orig OriginalRun
}

// OriginalRun is the kept recording of the program on the original input.
type OriginalRun struct {
	// Trace is the trace's path, Input the path the input had in the run
	// (empty when it was standard input).
	Trace, Input string
	// Ending is how the run ended.
	Ending critical.Ending
}

// NewTester checks runs and returns its Tester.
func NewTester(runs Runs) (*Tester, error) {
	switch runs.Oracle {
	case OracleCrash:
		if runs.Record == "" {
			return nil, fmt.Errorf("the crash oracle needs the record command")
		}
		fallthrough
	case OracleStatus:
		if len(runs.Program) == 0 {
			return nil, fmt.Errorf("no program to run: give it after --")
		}
	case OracleCommand:
		if strings.TrimSpace(runs.Command) == "" {
			return nil, fmt.Errorf("an empty --command")
		}
	default:
		return nil, fmt.Errorf("unknown oracle %q", runs.Oracle)
	}
	if runs.Dir == "" {
		return nil, fmt.Errorf("no folder for the candidates")
	}
	return &Tester{runs: runs}, nil
}

// Original runs the program on the original input and returns how it
// ended, the failure the reduction keeps: for OracleCrash the crash (an
// error when it did not crash), else a description, with an error when
// the oracle does not say "fails".
func (t *Tester) Original(ctx context.Context, input []byte) (string, error) {
	if t.runs.Oracle == OracleCrash {
		end, timedOut, err := t.record(ctx, input, t.runs.KeepTrace)
		if err != nil {
			return "", err
		}
		if timedOut {
			return "", fmt.Errorf("the program on the original input did not end within %v", t.runs.Timeout)
		}
		if end.Signal == 0 {
			return "", fmt.Errorf("the program does not crash on the original input (%s): give --exit-status or --command", end.Text)
		}
		t.want = end
		return end.Text, nil
	}
	v, what, err := t.judge(ctx, input)
	if err != nil {
		return "", err
	}
	if v != Fails {
		return "", fmt.Errorf("%w (%s)", ErrNoFailure, what)
	}
	return what, nil
}

// Test is the reduction's Test (call Original first).
func (t *Tester) Test(ctx context.Context, input []byte) (Verdict, error) {
	v, _, err := t.judge(ctx, input)
	return v, err
}

// judge runs one candidate and says whether it fails, and how it ended.
func (t *Tester) judge(ctx context.Context, input []byte) (Verdict, string, error) {
	switch t.runs.Oracle {
	case OracleCrash:
		end, timedOut, err := t.record(ctx, input, false)
		if err != nil || timedOut {
			return Passes, "timeout", err
		}
		if end.Signal == t.want.Signal && critical.SameSite(end.Fault, t.want.Fault) {
			return Fails, end.Text, nil
		}
		return Passes, end.Text, nil
	case OracleStatus:
		path, done, err := t.candidate(input)
		if err != nil {
			return Passes, "", err
		}
		defer done()
		args, stdin := t.args(path)
		res, err := rerun.Run(ctx, rerun.Command{Args: args, Stdin: stdin, Timeout: t.runs.Timeout, MaxStdout: 1})
		if err != nil {
			return Passes, "", fmt.Errorf("run the program: %w", err)
		}
		if res.TimedOut {
			return Passes, "timeout", nil
		}
		st := res.Status
		if res.Signal != 0 {
			st = 128 + int(res.Signal)
		}
		what := fmt.Sprintf("exit status %d", st)
		if st == t.runs.Status {
			return Fails, what, nil
		}
		return Passes, what, nil
	default:
		path, done, err := t.candidate(input)
		if err != nil {
			return Passes, "", err
		}
		defer done()
		cmd := strings.ReplaceAll(t.runs.Command, "@@", path)
		env := append(os.Environ(), "REDUCE_INPUT="+path)
		res, err := rerun.Run(ctx, rerun.Command{Args: []string{"/bin/sh", "-c", cmd}, Env: env, Timeout: t.runs.Timeout, MaxStdout: 1})
		if err != nil {
			return Passes, "", fmt.Errorf("run --command: %w", err)
		}
		if res.TimedOut {
			return Passes, "timeout", nil
		}
		if res.Status == 0 && res.Signal == 0 {
			return Fails, "command exit 0", nil
		}
		return Passes, fmt.Sprintf("command exit %d", res.Status), nil
	}
}

// RecordOriginal records the program on the original input and keeps the
// recording (for the oracles that run the program plainly; OracleCrash's
// Original keeps its own when KeepTrace is set). It needs Record.
func (t *Tester) RecordOriginal(ctx context.Context, input []byte) (OriginalRun, error) {
	if t.orig.Trace != "" {
		return t.orig, nil
	}
	if t.runs.Record == "" || len(t.runs.Program) == 0 {
		return OriginalRun{}, fmt.Errorf("recording the original input needs the program and the record command")
	}
	_, timedOut, err := t.record(ctx, input, true)
	if err != nil {
		return OriginalRun{}, err
	}
	if timedOut {
		return OriginalRun{}, fmt.Errorf("the recording of the original input did not end within %v", t.runs.Timeout)
	}
	return t.orig, nil
}

// OriginalRun returns the kept recording of the original input (a zero
// value when there is none).
func (t *Tester) OriginalRun() OriginalRun { return t.orig }

// record re-records the program on input and reads how it ended; keep
// keeps the candidate and its trace as the original run's.
func (t *Tester) record(ctx context.Context, input []byte, keep bool) (critical.Ending, bool, error) {
	path, done, err := t.candidate(input)
	if err != nil {
		return critical.Ending{}, false, err
	}
	if !keep {
		defer done() // the candidate and its trace
	}
	trace := path + ".trace"
	args, stdin := t.args(path)
	rec := append([]string{t.runs.Record, "-q"}, t.runs.RecordArgs...)
	rec = append(append(rec, "-o", trace, "--"), args...)
	res, err := rerun.Run(ctx, rerun.Command{Args: rec, Stdin: stdin, Timeout: t.runs.Timeout, MaxStdout: 1})
	if err != nil {
		return critical.Ending{}, false, fmt.Errorf("record the program: %w", err)
	}
	if res.TimedOut {
		return critical.Ending{}, true, nil
	}
	if _, err := os.Stat(trace); err != nil {
		msg := res.Stderr
		if i := strings.LastIndexByte(msg, '\n'); i >= 0 {
			msg = msg[i+1:]
		}
		return critical.Ending{}, false, fmt.Errorf("record wrote no trace (status %d): %s", res.Status, msg)
	}
	end, err := critical.EndingOf(trace)
	if err != nil {
		return critical.Ending{}, false, fmt.Errorf("read the re-run's trace: %w", err)
	}
	if keep {
		t.orig = OriginalRun{Trace: trace, Ending: end}
		if stdin == "" {
			t.orig.Input = path
		}
	}
	return end, false, nil
}

// candidate writes input to a fresh file named like the original input
// (programs may look at the name's extension) in a folder of its own, and
// returns its path and the function that removes the folder.
func (t *Tester) candidate(input []byte) (string, func(), error) {
	dir := filepath.Join(t.runs.Dir, fmt.Sprint(t.n.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("candidate folder: %w", err)
	}
	done := func() { os.RemoveAll(dir) }
	path := filepath.Join(dir, filepath.Base(t.runs.Input))
	if err := os.WriteFile(path, input, 0o644); err != nil {
		done()
		return "", nil, fmt.Errorf("write the candidate input: %w", err)
	}
	return path, done, nil
}

// args returns the program's arguments for the candidate at path, and the
// standard input file ("" for /dev/null).
func (t *Tester) args(path string) ([]string, string) {
	out := make([]string, len(t.runs.Program))
	named := false
	for i, a := range t.runs.Program {
		if i > 0 && (a == "@@" || a == t.runs.Input) {
			a, named = path, true
		}
		out[i] = a
	}
	if !named {
		return out, path
	}
	return out, ""
}

// Substitutes says how the candidate reaches the program: "argument" (an
// argument @@ or the input's path) or "standard input".
func (t *Tester) Substitutes() string {
	if _, stdin := t.args("x"); stdin != "" {
		return "standard input"
	}
	return "argument"
}
