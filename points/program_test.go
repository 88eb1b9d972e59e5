package points

import (
	"strings"
	"testing"

	"github.com/mgtrace/mgtrace/internal/testprog"
	"github.com/mgtrace/mgtrace/schema"
)

// build compiles an alteration test program as the record tests do.
func build(t *testing.T, name string) string {
	t.Helper()
	return testprog.Build(t, "alter/"+name, testprog.Flags("-O0"))
}

func TestProgramResolve(t *testing.T) {
	tests := []struct {
		prog    string
		kind    Kind
		spec    string
		call    bool
		counted int
		err     string
	}{
		{prog: "bound", kind: Switch, spec: "bound.c:17", counted: 1},
		{prog: "bound", kind: Switch, spec: "alter/bound.c:18", err: "no conditional branch"},
		{prog: "bound", kind: Suppress, spec: "bound.c:18", counted: 1},
		{prog: "bound", kind: Switch, spec: "bound.c:9", err: "no code on that line (the first line with code is 15)"},
		{prog: "bound", kind: Switch, spec: "bound.c:14", err: "no code on that line (the first line with code is 15)"},
		{prog: "bound", kind: Switch, spec: "bound.c:99", err: "no code on that line (the last line with code is 23)"},
		{prog: "bound", kind: Switch, spec: "list.c:3", err: "no source file list.c"},
		{prog: "doublefree", kind: Suppress, spec: "doublefree.c:19", call: true, counted: 1},
		{prog: "doublefree", kind: Suppress, spec: "doublefree.c:13", err: "no code on that line (lines with code near it: 12, 14)"},
		{prog: "badlist", kind: Suppress, spec: "badlist.c:38", counted: 1},
		{prog: "nullcheck", kind: Switch, spec: "nullcheck.c:33", counted: 1},
		{prog: "offbyone", kind: Switch, spec: "offbyone.c:12", counted: 1},
	}
	for _, tt := range tests {
		p, err := Open(build(t, tt.prog))
		if err != nil {
			t.Fatal(err)
		}
		sp, err := ParseSpec(tt.spec)
		if err != nil {
			t.Fatal(err)
		}
		r, err := p.Resolve(tt.kind, sp)
		p.Close()
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s %s: %v, want error with %q", tt.kind, tt.spec, err, tt.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: %v", tt.kind, tt.spec, err)
			continue
		}
		if r.Call != tt.call || len(r.Counted) != tt.counted {
			t.Errorf("%s %s: call %v, %d counted; want %v, %d", tt.kind, tt.spec, r.Call, len(r.Counted), tt.call, tt.counted)
		}
		for _, in := range r.Effect {
			if in.Loc.Path != p.Path() || in.Loc.Offset == 0 {
				t.Errorf("%s %s: instruction at %#x has no file location: %+v", tt.kind, tt.spec, in.Addr, in.Loc)
			}
		}
	}
}

func TestFunction(t *testing.T) {
	p, err := Open(build(t, "doublefree"))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	entry, rets, err := p.Function("cleanup")
	if err != nil {
		t.Fatal(err)
	}
	if len(rets) != 1 || rets[0].Code[0] != 0xc3 || rets[0].Addr <= entry.Addr {
		t.Errorf("cleanup: entry %#x, rets %+v; want one ret after the entry", entry.Addr, rets)
	}
	if entry.Loc.Path != p.Path() || entry.Loc.Offset == 0 {
		t.Errorf("cleanup's entry has no file location: %+v", entry.Loc)
	}
	if _, _, err := p.Function("nosuch"); err == nil || !strings.Contains(err.Error(), "no function nosuch") {
		t.Errorf("nosuch: %v", err)
	}
}

// TestTraceInstances counts the instances of the loop bound check in a
// recorded run of bound.c (11 that enter the loop, 1 that leaves it; the
// run crashes after the loop) and numbers one of them from its walk
// instance.
func TestTraceInstances(t *testing.T) {
	trace := testprog.Record(t, build(t, "bound"))
	tr, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	// The tables are complete once the trace was read: read it through.
	v := &collect{}
	if _, err := walkAll(tr, v); err != nil {
		t.Fatal(err)
	}
	r, err := TraceRule(tr.Tables(), Switch, "bound.c", 17)
	if err != nil {
		t.Fatal(err)
	}
	c := NewCounter(r)
	var nth []uint64 // walk instance numbers of the counted instructions
	for i, pc := range v.pcs {
		if _, ok := c.Next(pc); ok {
			nth = append(nth, uint64(i))
		}
	}
	if c.Count() != 12 {
		t.Fatalf("the bound check ran %d times, want 12", c.Count())
	}
	tr2, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr2.Close()
	got, err := InstanceOf(tr2, r, nth[10])
	if err != nil || got != 11 {
		t.Errorf("InstanceOf(instance %d) = %d, %v; want 11", nth[10], got, err)
	}
	tr3, err := schema.Open(trace)
	if err != nil {
		t.Fatal(err)
	}
	defer tr3.Close()
	if _, err := InstanceOf(tr3, r, nth[10]+1); err == nil {
		t.Errorf("InstanceOf of an instruction the rule does not count: no error")
	}
	if _, err := TraceRule(tr.Tables(), Switch, "bound.c", 18); err == nil {
		t.Errorf("TraceRule of a line with no branch: no error")
	}
	if _, err := TraceRule(tr.Tables(), Switch, "list.c", 18); err == nil {
		t.Errorf("TraceRule of a file that is not there: no error")
	}
}
