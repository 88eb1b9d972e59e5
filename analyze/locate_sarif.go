package main

import (
	"fmt"
	"path/filepath"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/internal/sarif"
	"github.com/mgtrace/mgtrace/internal/version"
	"github.com/mgtrace/mgtrace/locate"
	"github.com/mgtrace/mgtrace/locate/spec"
)

// Rule ids of analyze check's and analyze locate's SARIF logs.
const (
	ruleConstraint    = "constraint_violation"
	ruleFaulty        = "faulty_statement"
	ruleStore         = "suspicious_store"
	ruleMissingUpdate = "missing_update"
)

// specLocs names the spec's and the program's source files in a SARIF
// log.
type specLocs struct {
	loc  *sarif.Locator
	spec string // the spec file, absolute when it could be made so
	run  *locate.Run
}

func newSpecLocs(loc *sarif.Locator, s *spec.Spec, run *locate.Run) specLocs {
	p := s.File
	if abs, err := filepath.Abs(p); err == nil {
		p = abs
	}
	return specLocs{loc: loc, spec: p, run: run}
}

// constraint is the location of a constraint's line in the spec.
func (l specLocs) constraint(v locate.Violation, msg string) *sarif.Location {
	return l.loc.At(l.spec, v.Line, msg, "")
}

// point is the location of a C-point's statement, when the trace knows
// it.
func (l specLocs) point(pt locate.Point, msg string) *sarif.Location {
	if pt.PC == 0 || l.run.Tables == nil {
		return l.loc.At("", 0, msg, "")
	}
	s := l.run.Tables.Locate(pt.PC)
	return l.loc.At(s.File, int(s.Line), msg, s.String())
}

// checkSARIF is analyze check's SARIF log: one result per violated
// constraint, at its line in the spec, with the first C-point where it
// does not hold as a related location.
func checkSARIF(loc *sarif.Locator, s *spec.Spec, run *locate.Run, results []locate.PointResult) *sarif.Log {
	log := sarif.New("mgtrace analyze check", version.Version, []sarif.Rule{{ID: ruleConstraint,
		ShortDescription: sarif.Message{Text: "a constraint of the data-structure spec does not hold at a C-point"},
		Default:          &sarif.Configuration{Level: sarif.LevelError}}}, loc)
	l := newSpecLocs(loc, s, run)
	type seen struct {
		first      locate.Violation
		firstPoint int // index in results
		points     int
		violations int
	}
	by := make(map[int]*seen)
	for i, r := range results {
		counted := make(map[int]bool)
		for _, v := range r.Violations {
			c := by[v.Constraint]
			if c == nil {
				c = &seen{first: v, firstPoint: i}
				by[v.Constraint] = c
			}
			c.violations++
			if !counted[v.Constraint] {
				counted[v.Constraint] = true
				c.points++
			}
		}
	}
	cons := make([]int, 0, len(by))
	for k := range by {
		cons = append(cons, k)
	}
	sort.Ints(cons)
	for _, k := range cons {
		c := by[k]
		pt := results[c.firstPoint].Point
		msg := fmt.Sprintf("constraint %d of %s (%s) does not hold at %d of %d C-points (%d violations); first at C-point %d: %s (ts %d, event %d), binding %s",
			k, filepath.Base(s.File), c.first.Text, c.points, len(results), c.violations, c.firstPoint+1, pt.Label, pt.TS, pt.Seq, binding(c.first))
		res := sarif.Result{RuleID: ruleConstraint, Level: sarif.LevelError, Message: sarif.Message{Text: msg}}
		if cl := l.constraint(c.first, ""); cl != nil {
			res.Locations = append(res.Locations, *cl)
		}
		if pl := l.point(pt, fmt.Sprintf("the first C-point where it does not hold: %s", pt.Label)); pl != nil {
			res.RelatedLocations = append(res.RelatedLocations, *pl)
		}
		log.Add(res)
	}
	return log
}

// locateSARIF is analyze locate's SARIF log: one result per faulty
// statement (error) and per other store into a violating node in the
// failing operation (warning), at the statement, with the constraints
// they broke and the C-point as related locations; a note when the
// faulty statement may be a missing one.
func locateSARIF(loc *sarif.Locator, s *spec.Spec, run *locate.Run, res *locate.Result) *sarif.Log {
	log := sarif.New("mgtrace analyze locate", version.Version, []sarif.Rule{
		{ID: ruleFaulty, ShortDescription: sarif.Message{Text: "a statement whose change to the heap introduced or changed a violation of the data-structure spec (fault location)"},
			Default: &sarif.Configuration{Level: sarif.LevelError}},
		{ID: ruleStore, ShortDescription: sarif.Message{Text: "another store into a violating node during the failing operation"},
			Default: &sarif.Configuration{Level: sarif.LevelWarning}},
		{ID: ruleMissingUpdate, ShortDescription: sarif.Message{Text: "the faulty statement may be an update of a violating node that the failing operation did not do"},
			Default: &sarif.Configuration{Level: sarif.LevelNote}},
	}, loc)
	if res == nil {
		return log
	}
	l := newSpecLocs(loc, s, run)
	pointMsg := fmt.Sprintf("the first C-point with violations: %s (ts %d, event %d)", res.Point.Label, res.Point.TS, res.Point.Seq)
	add := func(rule, level string, f locate.Fault) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s (rank %d): %s", statement(f), f.Rank, f.Why)
		cons := make(map[int]locate.Violation)
		for _, op := range f.Ops {
			for _, v := range op.Contrib {
				if _, ok := cons[v.Constraint]; !ok {
					cons[v.Constraint] = v
				}
			}
		}
		if len(f.Ops) > 0 {
			op := f.Ops[0]
			fmt.Fprintf(&b, "; change at ts %d (event %d): %s", op.TS, op.Seq, op.Kind)
			if op.Kind == "store" {
				fmt.Fprintf(&b, " %#x <- %#x", op.Field, op.Value)
			}
			if op.Node != nil {
				fmt.Fprintf(&b, " into %s n%d@%#x", op.Node.Type, op.Node.ID, op.Node.Head)
			}
			if len(f.Ops) > 1 {
				fmt.Fprintf(&b, " (and %d more changes)", len(f.Ops)-1)
			}
		}
		r := sarif.Result{RuleID: rule, Level: level, Message: sarif.Message{Text: b.String()}}
		if sl := loc.At(f.File, int(f.Line), "", statement(f)); sl != nil {
			r.Locations = append(r.Locations, *sl)
		} else {
			r.Locations = append(r.Locations, sarif.Location{Message: &sarif.Message{Text: statement(f)}})
		}
		ks := make([]int, 0, len(cons))
		for k := range cons {
			ks = append(ks, k)
		}
		sort.Ints(ks)
		for _, k := range ks {
			v := cons[k]
			if cl := l.constraint(v, fmt.Sprintf("constraint %d: %s", k, v.Text)); cl != nil {
				r.RelatedLocations = append(r.RelatedLocations, *cl)
			}
		}
		if pl := l.point(res.Point, pointMsg); pl != nil {
			r.RelatedLocations = append(r.RelatedLocations, *pl)
		}
		log.Add(r)
	}
	for _, f := range res.Faults {
		add(ruleFaulty, sarif.LevelError, f)
	}
	for _, f := range res.Stores {
		add(ruleStore, sarif.LevelWarning, f)
	}
	if res.Missing != "" {
		r := sarif.Result{RuleID: ruleMissingUpdate, Level: sarif.LevelNote, Message: sarif.Message{Text: res.Missing}}
		if pl := l.point(res.Point, pointMsg); pl != nil {
			r.Locations = append(r.Locations, *pl)
		}
		log.Add(r)
	}
	return log
}
