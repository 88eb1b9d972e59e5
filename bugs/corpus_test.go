package bugs_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/bugs"
	"github.com/mgtrace/mgtrace/bugs/corpus"
	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// analyzeProgram records a corpus program and runs the built-in rules
// on its trace with the program's analyze flags.
func analyzeProgram(t *testing.T, p *corpus.Program) *bugs.Report {
	t.Helper()
	bin := testprog.Build(t, p.Testprog)
	trace := testprog.Record(t, bin, p.Args...)
	tr, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	opt := bugs.Options{}
	for i := 0; i < len(p.AnalyzeArgs); i++ {
		switch a := p.AnalyzeArgs[i]; {
		case a == "--transaction" && i+1 < len(p.AnalyzeArgs):
			opt.Transaction = p.AnalyzeArgs[i+1]
			i++
		case a == "--all":
			opt.All = true
		case strings.HasPrefix(a, "--transaction="):
			opt.Transaction = strings.TrimPrefix(a, "--transaction=")
		default:
			t.Fatalf("%s: analyze flag %q is not understood by the test", p.Name, a)
		}
	}
	rep, err := bugs.Analyze(tr, opt)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func describe(rep *bugs.Report) string {
	var b strings.Builder
	for _, f := range rep.Findings {
		fmt.Fprintf(&b, "\n  %s at %s:%d: %s", f.Rule, filepath.Base(f.Where.File), f.Where.Line, f.Message)
		for _, c := range f.Chains {
			fmt.Fprintf(&b, "\n    VPC(%s):", c.Var)
			for _, s := range c.Steps {
				fmt.Fprintf(&b, " %s@%s:%d", s.Kind, filepath.Base(s.File), s.Line)
			}
		}
	}
	return b.String()
}

// TestCorpus records every program of testdata/programs/bugs and checks
// the findings against the markers in its source: each expected class is
// found at a symptom line, and the finding names a root line (in its
// chains, or as its block's allocation or free); the correct programs
// have no finding at all.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("records 60 programs")
	}
	if raceDetector {
		// The analysis is one goroutine: make test runs the corpus
		// without the race detector, which would only slow it down.
		t.Skip("run without -race (make test does)")
	}
	progs, err := corpus.Load(testprog.Root(t))
	if err != nil {
		t.Fatal(err)
	}
	for i := range progs {
		p := &progs[i]
		t.Run(p.Name, func(t *testing.T) {
			rep := analyzeProgram(t, p)
			if rep.Stats.Unplaced != 0 {
				t.Errorf("%d trace events were not placed at an instruction", rep.Stats.Unplaced)
			}
			if !p.Bug() {
				if len(rep.Findings) != 0 {
					t.Errorf("a correct program has findings:%s", describe(rep))
				}
				return
			}
			for _, class := range p.Expect {
				at := p.AtSymptom(class, rep.Findings)
				if len(at) == 0 {
					t.Errorf("no %s at line %v; findings:%s", class, p.Symptoms[class], describe(rep))
					continue
				}
				if !p.Rooted(class, at) {
					t.Errorf("%s at line %v names no root line %v; findings:%s", class, p.Symptoms[class], p.Roots[class], describe(rep))
				}
			}
			for _, f := range rep.Findings {
				expected := false
				for _, c := range p.Expect {
					expected = expected || f.Rule == c
				}
				if !expected {
					t.Logf("also found %s at %s:%d: %s", f.Rule, filepath.Base(f.Where.File), f.Where.Line, f.Message)
				}
			}
		})
	}
}
