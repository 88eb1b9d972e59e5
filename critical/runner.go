package critical

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

// Rerun is one re-execution to make: the program again, with one
// alteration, recorded into Trace. A Kind of "" is the baseline: the
// program re-run as it was, to see that the failure reproduces.
type Rerun struct {
	Kind  CandidateKind
	Point string // FILE:LINE#N
	Trace string // where the re-run's trace goes
	// PC, when not 0, is the instruction the alteration must hit: the
	// candidate's, for a branch or a call (a store is skipped with its
	// line's anchor, another instruction).
	PC uint64
	N  int
}

// RunResult is how a re-run went.
type RunResult struct {
	// Stdout is what the program wrote on its standard output.
	Stdout []byte
	// TimedOut says the run was stopped at the time limit.
	TimedOut bool
	// Status is the recorder's exit status (the program's, 128+N when
	// a signal killed it, 2 when it could not record).
	Status int
	// Stderr is the end of the recorder's standard error, for errors.
	Stderr string
}

// Runner makes re-runs. RecordRunner is the real one; tests may use
// another.
type Runner interface {
	Run(ctx context.Context, r Rerun) (RunResult, error)
}

// RecordRunner re-runs a program under the record command.
type RecordRunner struct {
	// Record is the record command's path.
	Record string
	// Args are extra record flags, before the alteration (--probe-dir
	// DIR, --valgrind-arg ...).
	Args []string
	// Program is the program and its arguments.
	Program []string
	// Dir is the working directory of the re-runs ("" = this process's).
	Dir string
	// Stdin is a file the re-runs read as standard input ("" =
	// /dev/null).
	Stdin string
	// Timeout bounds each re-run (0: none).
	Timeout time.Duration
}

// maxStdout bounds how much of a re-run's standard output is kept.
const maxStdout = 64 << 20

// Run records one re-run. A run past the time limit is killed with its
// process group (record, valgrind and the program) and reported as timed
// out, not as an error.
func (rr *RecordRunner) Run(ctx context.Context, r Rerun) (RunResult, error) {
	var res RunResult
	if len(rr.Program) == 0 {
		return res, fmt.Errorf("no program to re-run")
	}
	args := append([]string{"-q"}, rr.Args...)
	switch r.Kind {
	case Predicate:
		args = append(args, "--switch", r.Point)
	case Statement:
		args = append(args, "--suppress", r.Point)
	}
	args = append(args, "-o", r.Trace, "--")
	args = append(args, rr.Program...)
	if rr.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rr.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, rr.Record, args...)
	cmd.Dir = rr.Dir
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The whole group: record, valgrind and what the program started.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	var out limitedBuffer
	var errOut limitedBuffer
	out.max, errOut.max = maxStdout, 64<<10
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if rr.Stdin != "" {
		in, err := os.Open(rr.Stdin)
		if err != nil {
			return res, fmt.Errorf("standard input for the re-run: %w", err)
		}
		defer in.Close()
		cmd.Stdin = in
	}
	err := cmd.Run()
	res.Stdout, res.Stderr = out.b.Bytes(), strings.TrimSpace(errOut.b.String())
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && rr.Timeout > 0 {
			res.TimedOut = true
			return res, nil
		}
		return res, ctx.Err()
	}
	var ee *exec.ExitError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		res.Status = ee.ExitCode()
	default:
		return res, fmt.Errorf("run %s: %w", rr.Record, err)
	}
	return res, nil
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	b   bytes.Buffer
	max int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.max - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
