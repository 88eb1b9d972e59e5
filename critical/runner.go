package critical

import (
	"context"
	"fmt"
	"time"

	"github.com/mgtrace/mgtrace/internal/rerun"
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

// Run records one re-run. A run past the time limit is killed with its
// process group (record, valgrind and the program) and reported as timed
// out, not as an error.
func (rr *RecordRunner) Run(ctx context.Context, r Rerun) (RunResult, error) {
	var res RunResult
	if len(rr.Program) == 0 {
		return res, fmt.Errorf("no program to re-run")
	}
	args := append([]string{rr.Record, "-q"}, rr.Args...)
	switch r.Kind {
	case Predicate:
		args = append(args, "--switch", r.Point)
	case Statement:
		args = append(args, "--suppress", r.Point)
	}
	args = append(args, "-o", r.Trace, "--")
	args = append(args, rr.Program...)
	got, err := rerun.Run(ctx, rerun.Command{Args: args, Dir: rr.Dir, Stdin: rr.Stdin, Timeout: rr.Timeout})
	res = RunResult{Stdout: got.Stdout, TimedOut: got.TimedOut, Status: got.Status, Stderr: got.Stderr}
	if err != nil {
		return res, err
	}
	return res, nil
}
