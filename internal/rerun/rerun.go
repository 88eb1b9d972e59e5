// Package rerun runs a command once under a time limit, as the searches
// that re-execute a program do (analyze critical's re-recordings, analyze
// reduce's tests): in its own process group, killed as a group at the
// limit or when the context ends, with standard input from a file and the
// ends of its outputs kept.
package rerun

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

// Command is one run to make.
type Command struct {
	// Args is the command and its arguments.
	Args []string
	// Dir is the working directory ("" = this process's).
	Dir string
	// Stdin is a file read as standard input ("" = /dev/null).
	Stdin string
	// Env, when not nil, is the environment (else this process's).
	Env []string
	// Timeout bounds the run (0: none).
	Timeout time.Duration
	// MaxStdout bounds how much standard output is kept (0: 64 MiB).
	MaxStdout int
}

// Result is how a run went.
type Result struct {
	// Stdout is the start of what the command wrote on standard output.
	Stdout []byte
	// Stderr is the start of its standard error, trimmed.
	Stderr string
	// TimedOut says the run was stopped at the time limit.
	TimedOut bool
	// Status is the exit status (-1 when a signal killed the command).
	Status int
	// Signal is the signal that killed the command (0 when it exited).
	Signal syscall.Signal
}

// maxStdout is the default bound of the standard output kept.
const maxStdout = 64 << 20

// Run runs c. A run past the time limit is killed with its process group
// and reported as timed out, not as an error; a cancelled context is an
// error.
func Run(ctx context.Context, c Command) (Result, error) {
	var res Result
	if len(c.Args) == 0 {
		return res, fmt.Errorf("no command to run")
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = c.Dir
	cmd.Env = c.Env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// The whole group: the command and what it started.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 5 * time.Second
	var out, errOut limitedBuffer
	out.max, errOut.max = c.MaxStdout, 64<<10
	if out.max <= 0 {
		out.max = maxStdout
	}
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if c.Stdin != "" {
		in, err := os.Open(c.Stdin)
		if err != nil {
			return res, fmt.Errorf("standard input for the run: %w", err)
		}
		defer in.Close()
		cmd.Stdin = in
	}
	err := cmd.Run()
	res.Stdout, res.Stderr = out.b.Bytes(), strings.TrimSpace(errOut.b.String())
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && c.Timeout > 0 {
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
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			res.Signal = ws.Signal()
		}
	default:
		return res, fmt.Errorf("run %s: %w", c.Args[0], err)
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
