package critical

import (
	"errors"
	"fmt"
	"io"

	"github.com/mgtrace/mgtrace/schema"
)

// sysWrite is the x86-64 Linux number of write(2).
const sysWrite = 1

// facts are what one pass over a trace's events tells about how the run
// ended: enough to find a failure's criterion in the recorded run and to
// judge a re-run.
type facts struct {
	program []string // argv, from the header
	cwd     string
	// ended says the process ended (by itself or by a signal) before the
	// trace did; code and signal say how.
	ended  bool
	code   int
	signal uint64
	// fault is where the last signal with the terminating signal's number
	// was delivered (zero when none).
	fault Site
	// lastStdoutWrite is the event of the last write(2) to file
	// descriptor 1 (0 with hasStdoutWrite false when none).
	lastStdoutWrite uint64
	hasStdoutWrite  bool
	// alters counts ALTER events: the alterations the recorder made.
	alters int
	// alterPC and alterN are the first ALTER event's instruction and the
	// line's instance number it altered.
	alterPC uint64
	alterN  uint64
	// truncated says the trace was cut short.
	truncated bool
}

// scanTrace reads every event of the trace at path once.
func scanTrace(path string) (*facts, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	f := &facts{}
	if h := r.Header(); h != nil {
		f.program = append([]string(nil), h.Args...)
		f.cwd = h.Cwd
		if len(f.program) == 0 && h.ProgramPath != "" {
			f.program = []string{h.ProgramPath}
		}
	}
	var signals = map[uint64]uint64{} // signal number -> pc of its last delivery
	for {
		ev, err := r.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		switch ev.Kind {
		case schema.KindSignal:
			signals[ev.Num] = ev.PC
		case schema.KindSyscall:
			if ev.Num == sysWrite && ev.Args[0] == 1 {
				f.lastStdoutWrite, f.hasStdoutWrite = ev.Seq, true
			}
		case schema.KindAlter:
			if f.alters == 0 {
				f.alterPC, f.alterN = ev.PC, uint64(ev.Count)
			}
			f.alters++
		case schema.KindExit:
			f.ended = true
			f.code = int(int32(ev.Value))
			f.signal = ev.Num
		}
	}
	if !f.ended {
		if ft := r.Footer(); ft != nil && ft.Exit != nil && ft.Exit.Ended {
			f.ended, f.code, f.signal = true, int(ft.Exit.Code), uint64(ft.Exit.Signal)
		}
	}
	if f.signal != 0 {
		if pc := signals[f.signal]; pc != 0 {
			f.fault = siteOf(r.Tables(), pc)
		}
	}
	f.truncated = !r.End().Whole
	return f, nil
}

// normal says whether the run ended by itself with exit status want.
func (f *facts) normal(want int) bool {
	return f.ended && f.signal == 0 && f.code == want
}

// ending describes how the run ended, for a report: "exit 0", "signal 11
// (SIGSEGV)", "did not end".
func (f *facts) ending() string {
	switch {
	case !f.ended:
		return "the trace ends before the process did"
	case f.signal != 0:
		return fmt.Sprintf("killed by signal %d (%s)", f.signal, schema.SignalName(uint32(f.signal)))
	}
	return fmt.Sprintf("exit %d", f.code)
}

// Ending is how a recorded run ended, as a re-run's oracle judges it.
type Ending struct {
	// Ended says the process ended before the trace did; Code and Signal
	// say how.
	Ended  bool
	Code   int
	Signal uint64
	// Fault is where the terminating signal was delivered (zero when
	// none).
	Fault Site
	// Text describes it: "exit 0", "killed by signal 8 (SIGFPE) at
	// calc.c:61 (term)".
	Text string
}

// EndingOf reads how the run recorded at path ended.
func EndingOf(path string) (Ending, error) {
	f, err := scanTrace(path)
	if err != nil {
		return Ending{}, err
	}
	e := Ending{Ended: f.ended, Code: f.code, Signal: f.signal, Fault: f.fault, Text: f.ending()}
	if f.signal != 0 {
		e.Text = fmt.Sprintf("%s at %s", e.Text, f.fault)
	}
	return e, nil
}

// SameSite says whether two failure sites are the same source line (the
// same pc when a line is unknown), as the crash oracle compares them.
func SameSite(a, b Site) bool { return sameLine(a, b) }
