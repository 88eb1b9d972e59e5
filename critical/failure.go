package critical

import (
	"bytes"
	"fmt"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/locate"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/mgbuild"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// Oracle says what the failure is and so how a re-run is judged. At most
// one of Spec, Bugs and ExpectOutput is set; with none, the failure is the
// crash of the recorded run.
type Oracle struct {
	// Spec: the failure is a violation of the spec's constraints at a
	// C-point (analyze check).
	Spec *spec.Spec
	// Bugs: the failure is a finding of analyze bugs with these options.
	Bugs *bugs.Options
	// ExpectOutput: the failure is a standard output other than this;
	// ExpectPath names its file in reports.
	ExpectOutput []byte
	ExpectPath   string
	// ExpectStatus is the exit status of a run that ends normally.
	ExpectStatus int
}

// kind returns the failure kind the oracle looks for.
func (o *Oracle) kind() FailureKind {
	switch {
	case o.Spec != nil:
		return FailSpec
	case o.Bugs != nil:
		return FailBug
	case o.ExpectOutput != nil:
		return FailOutput
	}
	return FailCrash
}

// check says whether the oracle is well formed.
func (o *Oracle) check() error {
	n := 0
	if o.Spec != nil {
		n++
	}
	if o.Bugs != nil {
		n++
	}
	if o.ExpectOutput != nil {
		n++
	}
	if n > 1 {
		return fmt.Errorf("more than one failure given (a spec, bugs, an expected output): choose one")
	}
	return nil
}

// failureOf finds the failure of the recorded run at path: its report and
// the slicing criteria (several for a spec violation: one per node the
// violation read).
func failureOf(o *Oracle, path string, f *facts, run *slice.Run) (Failure, []slice.Point, error) {
	site := func(i uint32) Site { return siteOf(run.Tables, run.StaticOf(i).PC) }
	one := func(fl Failure, i uint32, label string) (Failure, []slice.Point, error) {
		if int(i) >= run.Instances() {
			return fl, nil, fmt.Errorf("%s: the failure's instruction instance %d is not in the trace", path, i)
		}
		fl.Instance, fl.Seq, fl.Where = i, run.SeqOf(i), site(i)
		return fl, []slice.Point{{Label: label, Insts: []uint32{i}, Last: int64(i)}}, nil
	}
	switch o.kind() {
	case FailCrash:
		if f.signal == 0 {
			if !f.ended {
				return Failure{}, nil, fmt.Errorf("%s: the trace ends before the program did, and no failure was given (--spec, --bugs or --expect-output)", path)
			}
			return Failure{}, nil, fmt.Errorf("%s: the run did not crash (exit %d), and no failure was given (--spec, --bugs or --expect-output)", path, f.code)
		}
		if run.Crash < 0 {
			return Failure{}, nil, fmt.Errorf("%s: the run was killed by signal %d, but the faulting instruction is not in the trace", path, f.signal)
		}
		fl := Failure{Kind: FailCrash, Signal: f.signal}
		fl, pts, err := one(fl, uint32(run.Crash), fmt.Sprintf("crash (signal %d)", f.signal))
		fl.Message = fmt.Sprintf("killed by signal %d (%s) at %s", f.signal, schema.SignalName(uint32(f.signal)), fl.Where)
		return fl, pts, err
	case FailBug:
		rep, err := bugReport(path, o.Bugs)
		if err != nil {
			return Failure{}, nil, err
		}
		if len(rep.Findings) == 0 {
			return Failure{}, nil, fmt.Errorf("%s: analyze bugs finds no bug in the run (rules: %s)", path, joinRules(rep.Rules))
		}
		b := rep.Findings[0]
		fl := Failure{Kind: FailBug, Rule: b.Rule}
		fl, pts, err := one(fl, uint32(b.Instr), fmt.Sprintf("%s (event %d)", b.Rule, b.Seq))
		fl.Message = fmt.Sprintf("%s: %s", b.Rule, b.Message)
		return fl, pts, err
	case FailOutput:
		if !f.hasStdoutWrite {
			return Failure{}, nil, fmt.Errorf("%s: the program never wrote to standard output, so there is no write to slice from (--expect-output)", path)
		}
		p, err := run.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: f.lastStdoutWrite})
		if err != nil {
			return Failure{}, nil, fmt.Errorf("%s: the last write to standard output: %w", path, err)
		}
		fl := Failure{Kind: FailOutput, Expected: o.ExpectPath}
		fl, pts, err := one(fl, uint32(p.Last), fmt.Sprintf("last write to stdout (event %d)", f.lastStdoutWrite))
		fl.Message = fmt.Sprintf("stdout differs from %s (the last write to stdout is at %s)", o.ExpectPath, fl.Where)
		return fl, pts, err
	case FailSpec:
		return specFailure(o.Spec, path, run)
	}
	return Failure{}, nil, fmt.Errorf("unknown failure kind")
}

// specFailure finds the first C-point with a violation; the criteria are
// the contents of the first violation's nodes there.
func specFailure(s *spec.Spec, path string, run *slice.Run) (Failure, []slice.Point, error) {
	lrun, ses, err := locate.Open(path, s)
	if err != nil {
		return Failure{}, nil, err
	}
	var first *locate.PointResult
	ses.Check(func(r locate.PointResult) bool {
		if len(r.Violations) > 0 {
			first = &r
			return false
		}
		return true
	})
	if first == nil {
		return Failure{}, nil, fmt.Errorf("%s: no C-point violates %s", path, s.File)
	}
	last := run.InstanceAt(first.Point.Seq)
	if last < 0 {
		return Failure{}, nil, fmt.Errorf("%s: C-point %s comes before the first instruction", path, first.Point.Label)
	}
	v := first.Violations[0]
	fl := Failure{Kind: FailSpec, CPoint: first.Point.Label, Constraint: v.Text,
		Instance: uint32(last), Seq: first.Point.Seq, Where: siteOf(run.Tables, run.StaticOf(uint32(last)).PC)}
	fl.Message = fmt.Sprintf("constraint %d (%s) violated at C-point %s", v.Constraint, v.Text, first.Point.Label)
	var pts []slice.Point
	for _, n := range v.Nodes {
		size := uint64(8)
		if gn := lrun.Graph.Node(mgbuild.NodeID(n.ID)); gn != nil && gn.Size > 0 {
			size = gn.Size
		}
		label := fmt.Sprintf("%s node #%d at %#x:%d", first.Point.Label, n.ID, n.Head, size)
		fl.Locations = append(fl.Locations, fmt.Sprintf("%s #%d: %#x:%d", n.Type, n.ID, n.Head, size))
		pts = append(pts, slice.Point{Label: label, Last: last, Addr: n.Head, Size: size, HasLoc: true})
	}
	if len(pts) == 0 {
		// A global constraint bound to no node: what the C-point's
		// instruction read.
		pts = append(pts, slice.Point{Label: first.Point.Label, Insts: []uint32{uint32(last)}, Last: last})
	}
	return fl, pts, nil
}

// bugReport runs analyze bugs on the trace at path.
func bugReport(path string, opt *bugs.Options) (*bugs.Report, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	o := *opt
	o.Progress = nil
	rep, err := bugs.Analyze(r, o)
	if err != nil {
		return nil, fmt.Errorf("bugs in %s: %w", path, err)
	}
	return rep, nil
}

func joinRules(rules []string) string {
	var b bytes.Buffer
	for i, r := range rules {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r)
	}
	return b.String()
}

// siteOf describes the instruction at pc.
func siteOf(t *schema.Tables, pc uint64) Site {
	loc := t.Locate(pc)
	return Site{PC: Hex(pc), Function: loc.Function, File: loc.File, Line: loc.Line, Module: loc.Module}
}
