package critical

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	"github.com/mgtrace/mgtrace/locate"
)

// judge is the oracle: it decides what one re-run, recorded into path,
// says about the failure fl.
func judge(o *Oracle, fl *Failure, res RunResult, path string, r Rerun) (Outcome, string) {
	if res.TimedOut {
		return Timeout, "stopped at the time limit"
	}
	if _, err := os.Stat(path); err != nil {
		msg := lastLine(res.Stderr)
		if msg == "" {
			msg = fmt.Sprintf("record exited with status %d and wrote no trace", res.Status)
		}
		return Error, msg
	}
	f, err := scanTrace(path)
	if err != nil {
		return Error, err.Error()
	}
	if r.Kind != "" && f.alters == 0 {
		return NotReached, fmt.Sprintf("the re-run never executed %s (%s)", r.Point, f.ending())
	}
	if r.PC != 0 && (f.alterPC != r.PC || f.alterN != uint64(r.N)) {
		return Error, fmt.Sprintf("record altered the instruction at %#x as instance %d, not the slice's at %#x: the re-run went another way before it, or the instance numbering differs", f.alterPC, f.alterN, r.PC)
	}
	ending := f.ending()
	if f.signal != 0 {
		ending = fmt.Sprintf("%s at %s", ending, f.fault)
	}
	switch o.kind() {
	case FailCrash:
		if f.signal != 0 {
			if f.signal == fl.Signal && sameLine(f.fault, fl.Where) {
				return Stays, ending
			}
			return Other, ending
		}
	case FailSpec:
		_, ses, err := locate.Open(path, o.Spec)
		if err != nil {
			return Error, fmt.Sprintf("check %s: %v", o.Spec.File, err)
		}
		var msg string
		ses.Check(func(pr locate.PointResult) bool {
			if len(pr.Violations) == 0 {
				return true
			}
			v := pr.Violations[0]
			msg = fmt.Sprintf("constraint %d violated at C-point %s; %s", v.Constraint, pr.Point.Label, ending)
			return false
		})
		if msg != "" {
			return Stays, msg
		}
	case FailBug:
		rep, err := bugReport(path, o.Bugs)
		if err != nil {
			return Error, err.Error()
		}
		for _, b := range rep.Findings {
			if b.Rule == fl.Rule {
				return Stays, fmt.Sprintf("%s: %s; %s", b.Rule, b.Message, ending)
			}
		}
		if len(rep.Findings) > 0 {
			b := rep.Findings[0]
			return Other, fmt.Sprintf("%s: %s; %s", b.Rule, b.Message, ending)
		}
	case FailOutput:
		if !bytes.Equal(res.Stdout, o.ExpectOutput) {
			return Stays, fmt.Sprintf("stdout differs from %s; %s", o.ExpectPath, ending)
		}
	}
	if !f.normal(o.ExpectStatus) {
		if f.ended && f.signal == 0 {
			return Other, fmt.Sprintf("%s, not %d", ending, o.ExpectStatus)
		}
		return Other, ending
	}
	return Critical, ending
}

// sameLine says whether two sites are the same source line (the same pc
// when a line is unknown).
func sameLine(a, b Site) bool {
	if a.File != "" && a.Line != 0 {
		return a.File == b.File && a.Line == b.Line
	}
	return a.PC == b.PC
}

// lastLine returns the last non-empty line of s.
func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
