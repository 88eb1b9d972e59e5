package critical

import (
	"fmt"
	"path/filepath"

	"github.com/mgtrace/mgtrace/bugs"
)

// Hex is an address; in JSON it is a string of hexadecimal digits, as in
// analyze bugs.
type Hex = bugs.Hex

// FailureKind says how the recorded run failed.
type FailureKind string

// The kinds of failure.
const (
	// FailCrash: the program was killed by a signal; the faulting
	// instruction instance is the criterion.
	FailCrash FailureKind = "crash"
	// FailSpec: a data-structure constraint of a spec was violated at a
	// C-point; the criterion is what the first violation read.
	FailSpec FailureKind = "spec"
	// FailBug: analyze bugs found a memory bug; the criterion is the
	// first finding's instruction.
	FailBug FailureKind = "bug"
	// FailOutput: the program's standard output is not the expected one;
	// the criterion is the last write(2) to standard output.
	FailOutput FailureKind = "output"
)

// Site is an instruction and its source position.
type Site struct {
	PC       Hex    `json:"pc"`
	Function string `json:"function,omitempty"`
	File     string `json:"file,omitempty"`
	Line     uint32 `json:"line,omitempty"`
	Module   string `json:"module,omitempty"`
}

// String formats the site as "file:line (function)", or, when the debug
// information is missing, "function (module)" or "0xPC (module)".
func (s Site) String() string {
	switch {
	case s.File != "" && s.Line != 0 && s.Function != "":
		return fmt.Sprintf("%s:%d (%s)", s.File, s.Line, s.Function)
	case s.File != "" && s.Line != 0:
		return fmt.Sprintf("%s:%d", s.File, s.Line)
	case s.Function != "" && s.Module != "":
		return fmt.Sprintf("%s (%s)", s.Function, filepath.Base(s.Module))
	case s.Function != "":
		return s.Function
	case s.Module != "":
		return fmt.Sprintf("%#x (%s)", uint64(s.PC), filepath.Base(s.Module))
	}
	return fmt.Sprintf("%#x", uint64(s.PC))
}

// Failure is the failure of the recorded run and the slicing criterion it
// gives.
type Failure struct {
	Kind FailureKind `json:"kind"`
	// Message says what went wrong, in one line.
	Message string `json:"message"`
	// Where is the criterion's instruction.
	Where Site `json:"where"`
	// Instance is the criterion's instruction instance (its position in
	// the run's global instruction sequence, as analyze slice numbers
	// them), Seq the trace event that holds it.
	Instance uint32 `json:"instance"`
	Seq      uint64 `json:"seq"`
	// Signal is the terminating signal of a crash.
	Signal uint64 `json:"signal,omitempty"`
	// Rule is the bug rule of a bug finding.
	Rule string `json:"rule,omitempty"`
	// CPoint and Constraint are the C-point and the first violated
	// constraint of a spec violation; Locations the memory its nodes
	// hold, which the slice starts from.
	CPoint     string   `json:"cpoint,omitempty"`
	Constraint string   `json:"constraint,omitempty"`
	Locations  []string `json:"locations,omitempty"`
	// Expected is the file the standard output should have matched.
	Expected string `json:"expected,omitempty"`
}

// CandidateKind says how a candidate is altered in a re-run.
type CandidateKind string

// The kinds of candidates.
const (
	// Predicate: a conditional branch instance, inverted (record
	// --switch).
	Predicate CandidateKind = "predicate"
	// Statement: a call (skipped, returning 0) or a store (skipped)
	// instance (record --suppress).
	Statement CandidateKind = "statement"
)

// Candidate is one instance of the failure's slice that a re-run alters.
type Candidate struct {
	Kind CandidateKind `json:"kind"`
	// Point is the instance as record's --switch and --suppress name it:
	// FILE:LINE#N, N counting the line's executions of that kind of
	// instruction over all threads in run order.
	Point string `json:"point"`
	File  string `json:"file"`
	Line  uint32 `json:"line"`
	N     int    `json:"n"`
	// Instance is the instruction instance in the recorded run; Thread
	// the recorder's thread id.
	Instance uint32 `json:"instance"`
	Thread   uint32 `json:"thread"`
	PC       Hex    `json:"pc"`
	Function string `json:"function,omitempty"`
	// InSlice says the instance is in the failure's slice; a call whose
	// callee holds slice instances is not, nor is a predicate tried
	// beyond the slice (Config.BeyondSlice).
	InSlice bool `json:"in_slice"`
	// Potential says the predicate is not in the slice but a potential
	// dependence of it (Config.Potential): its other side would have
	// redefined a register the slice read.
	Potential bool `json:"potential,omitempty"`
	// exact says the candidate's own instruction is the one record
	// alters (a branch, a call; not a store, skipped with its anchor).
	exact bool
	// Source is the line's text, when the source file is readable.
	Source string `json:"source,omitempty"`
}

// Outcome is the oracle's verdict on one re-run.
type Outcome string

// The outcomes.
const (
	// Critical: the failure is gone and the run ended normally.
	Critical Outcome = "critical"
	// Stays: the failure happened again.
	Stays Outcome = "failure stays"
	// Other: the failure is gone but the run failed otherwise (another
	// crash, another exit status, another finding).
	Other Outcome = "other failure"
	// Timeout: the re-run did not end within the time limit.
	Timeout Outcome = "timeout"
	// NotReached: the re-run never executed the instance, so nothing
	// was altered.
	NotReached Outcome = "not reached"
	// Error: the re-run could not be recorded or read.
	Error Outcome = "error"
)

// Trial is one candidate tried in a re-run, with the verdict.
type Trial struct {
	Candidate
	Outcome Outcome `json:"outcome"`
	// Detail says how the re-run ended and why the verdict ("exit 0",
	// "killed by signal 11 (SIGSEGV) at list.c:12 (main)").
	Detail  string  `json:"detail"`
	Seconds float64 `json:"seconds"`
	// Trace is the re-run's trace, when it was kept (--keep).
	Trace string `json:"trace,omitempty"`
}

// SliceInfo describes the failure's slice.
type SliceInfo struct {
	Criterion  string `json:"criterion"`
	Instances  int    `json:"instances"`           // instances in the slice
	Predicates int    `json:"predicates"`          // predicate instances in the program's code
	Beyond     int    `json:"beyond,omitempty"`    // with BeyondSlice: the program's other predicate instances before the failure
	Potential  int    `json:"potential,omitempty"` // with Potential: the predicates among Predicates that are potential dependences
	Statements int    `json:"statements"`          // call and store instances in the program's code
}

// Report is the result of a critical-predicate search.
type Report struct {
	Trace   string    `json:"trace"`
	Program []string  `json:"program"`
	Failure Failure   `json:"failure"`
	Slice   SliceInfo `json:"slice"`
	// Critical are the trials whose alteration removed the failure:
	// predicates first, then statements, each nearest the failure first.
	Critical []Trial `json:"critical"`
	// Tried are all trials, in the order the candidates were taken.
	Tried []Trial `json:"tried"`
	// Baseline says how the unaltered re-run failed (empty when it was
	// skipped); it is not counted in Runs.
	Baseline string `json:"baseline,omitempty"`
	// Untried counts the candidates left when the run budget was spent
	// (or, with Config.First, when one was critical).
	Untried int `json:"untried"`
	Runs    int `json:"runs"`
	MaxRuns int `json:"max_runs"`
	// ExpectStatus is the exit status a normal end has.
	ExpectStatus int `json:"expect_status"`
	// Kept is the folder the re-runs' traces were kept in.
	Kept string `json:"kept,omitempty"`
}
