package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"sort"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/bugs/corpus"
)

// chainClasses are the classes whose findings carry value propagation
// chains of a pointer or value (table 3.4); the leak and mismatch classes
// name a block.
var chainClasses = []string{
	corpus.DoubleFree, corpus.DanglingPointerDeref, corpus.NullPointerDeref,
	corpus.UnmatchedFree, corpus.HeapBufferOverflow, corpus.UninitializedRead,
}

// mcAtSymptom returns memcheck's errors of class whose first frame in the
// program's source is one of the class's symptom lines (a leak record's
// stack is the allocation's, the leak's symptom line).
func mcAtSymptom(p *corpus.Program, class string, errs []mcError) []*mcError {
	base := filepath.Base(p.Path)
	var out []*mcError
	for i := range errs {
		e := &errs[i]
		if e.Class == class && slices.Contains(p.Symptoms[class], e.ownLine(base)) {
			out = append(out, e)
		}
	}
	return out
}

// mcRooted says whether one of the errors names a root line of class in
// any of its stacks (the free'd and alloc'd stacks included).
func mcRooted(p *corpus.Program, class string, errs []*mcError) bool {
	base := filepath.Base(p.Path)
	for _, e := range errs {
		for _, l := range e.lines(base) {
			if slices.Contains(p.Roots[class], l) {
				return true
			}
		}
	}
	return false
}

// mcHasClass says whether memcheck reported an error of class anywhere.
func mcHasClass(errs []mcError, class string) bool {
	for _, e := range errs {
		if e.Class == class {
			return true
		}
	}
	return false
}

// classResult is how both tools did on one expected class of one program.
type classResult struct {
	class string
	// analyze bugs: a finding of the class at a symptom line; one of
	// those names a root line.
	found, root bool
	// memcheck: an error of the class whose first own frame is a symptom
	// line; one of those names a root line; an error of the class at any
	// line.
	mcFound, mcRoot, mcAny bool
	// mcElsewhere is where memcheck reported the class when not at a
	// symptom line (its first error of the class), "" otherwise.
	mcElsewhere string
}

// judge compares both tools' reports on a program with its markers: one
// result per expected class, and the findings and errors of classes the
// program does not expect (every one, on an ok_ program).
func judge(p *corpus.Program, fs []bugs.Finding, errs []mcError) (cls []classResult, extra []bugs.Finding, mcExtra []mcError) {
	for _, c := range p.Expect {
		a := p.AtSymptom(c, fs)
		m := mcAtSymptom(p, c, errs)
		r := classResult{class: c, found: len(a) > 0, root: p.Rooted(c, a),
			mcFound: len(m) > 0, mcRoot: mcRooted(p, c, m), mcAny: mcHasClass(errs, c)}
		if !r.mcFound {
			for i := range errs {
				if errs[i].Class == c {
					r.mcElsewhere = errs[i].where(filepath.Base(p.Path)).String()
					break
				}
			}
		}
		cls = append(cls, r)
	}
	for _, f := range fs {
		if !slices.Contains(p.Expect, f.Rule) {
			extra = append(extra, f)
		}
	}
	for _, e := range errs {
		if e.Class == "" || !slices.Contains(p.Expect, e.Class) {
			mcExtra = append(mcExtra, e)
		}
	}
	return cls, extra, mcExtra
}

// chainStats returns the instructions of a finding's chains (the sum of
// Chain.Instructions) and the distinct source statements (file:line)
// their steps name.
func chainStats(f *bugs.Finding) (instructions, statements int) {
	seen := map[string]bool{}
	for _, c := range f.Chains {
		instructions += c.Instructions
		for _, s := range c.Steps {
			if s.File != "" && s.Line != 0 {
				seen[fmt.Sprintf("%s:%d", s.File, s.Line)] = true
			}
		}
	}
	return instructions, len(seen)
}

// spread is the minimum, median and maximum of some counts.
type spread struct{ min, median, max float64 }

// spreadOf returns the spread of xs (zero for none); the median of an
// even count is the mean of the middle two.
func spreadOf(xs []float64) spread {
	if len(xs) == 0 {
		return spread{}
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return spread{s[0], med, s[n-1]}
}

// siteString is "file:line (function)", "function in module" or the pc.
func siteString(s bugs.Site) string {
	switch {
	case s.File != "" && s.Line != 0:
		str := fmt.Sprintf("%s:%d", filepath.Base(s.File), s.Line)
		if s.Function != "" {
			str += " (" + s.Function + ")"
		}
		return str
	case s.Function != "" && s.Module != "":
		return s.Function + " in " + filepath.Base(s.Module)
	case s.Function != "":
		return s.Function
	case s.Module != "":
		return fmt.Sprintf("%s@%#x", filepath.Base(s.Module), s.PC)
	}
	return fmt.Sprintf("%#x", s.PC)
}

// mcAgrees says how memcheck's errors bear on one finding of analyze
// bugs: "same site" when an error of the same class shares a frame with
// the finding's stack (the same source line, or the same function where
// neither has a line), "same class" when errors of the class are
// elsewhere, "no" when memcheck reported none of the class.
func mcAgrees(f *bugs.Finding, errs []mcError) string {
	stack := f.Stack
	if len(stack) == 0 {
		stack = []bugs.Site{f.Where}
	}
	sameClass := false
	for i := range errs {
		e := &errs[i]
		if e.Class != f.Rule || len(e.Stacks) == 0 {
			continue
		}
		sameClass = true
		for _, fr := range e.Stacks[0] {
			for _, s := range stack {
				if fr.File != "" && s.Line != 0 && fr.File == filepath.Base(s.File) && fr.Line == int(s.Line) {
					return "same site"
				}
				if fr.File == "" && s.Line == 0 && fr.Func != "" && fr.Func == s.Function {
					return "same site"
				}
			}
		}
	}
	if sameClass {
		return "same class"
	}
	return "no"
}
