package main

import (
	"math"
	"strings"
	"testing"
	"time"
)

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs([]string{"-sizes", "10m", "-runs", "1", "-timeout", "5s"})
	if err != nil {
		t.Fatal(err)
	}
	if len(cfg.sizes) != 1 || cfg.sizes[0].name != "10M" || cfg.runs != 1 || cfg.timeout != 5*time.Second {
		t.Errorf("parseArgs = %+v", cfg)
	}
	cfg, err = parseArgs([]string{"a.trace", "b.trace"})
	if err != nil || len(cfg.traces) != 2 || len(cfg.sizes) != 0 {
		t.Errorf("parseArgs with traces = %+v, %v", cfg, err)
	}
	for _, bad := range [][]string{{"-sizes", "3M"}, {"-runs", "0"}, {"-criteria", "0"}, {"-timeout", "0s"}} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q): no error", bad)
		}
	}
}

func TestGeomean(t *testing.T) {
	crits := []*critResult{
		{improved: time.Second, baseline: 2 * time.Second, finished: true},
		{improved: time.Second, baseline: 8 * time.Second, finished: true},
		{improved: time.Second, finished: false},
	}
	g, n := geomean(crits)
	if n != 2 || math.Abs(g-4) > 1e-9 {
		t.Errorf("geomean = %v over %d, want 4 over 2", g, n)
	}
	if _, n := geomean(crits[2:]); n != 0 {
		t.Errorf("geomean of unfinished: %d counted", n)
	}
}

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct {
		a, b []uint32
		want int64
	}{
		{[]uint32{1, 2, 3}, []uint32{1, 2, 3}, -1},
		{[]uint32{1, 2, 3}, []uint32{1, 4}, 2},
		{[]uint32{1, 2}, []uint32{1, 2, 7}, 7},
	} {
		if got := firstDiff(c.a, c.b); got != c.want {
			t.Errorf("firstDiff(%v, %v) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestMarkdown(t *testing.T) {
	cfg, _ := parseArgs(nil)
	rep := &report{cfg: cfg, start: time.Now()}
	e2e := &endToEnd{wall: 12 * time.Second, all: []time.Duration{12 * time.Second}}
	rep.runs = []*traceResult{{
		name: "10M", command: "slicework 131000", insts: 10_000_000,
		crits: []*critResult{
			{k: 1, seq: 9, members: 5, improved: time.Second, baseline: 3 * time.Second, finished: true, e2e: &endToEnd{wall: time.Second, all: []time.Duration{time.Second}}},
			{k: 2, seq: 8, members: 7, improved: time.Second, e2e: e2e},
		},
	}}
	md := rep.markdown()
	for _, want := range []string{section.Begin() + "\n", section.End() + "\n", "**missed** on 10M", "criterion #2", "3.00x", "- (over 2m0s)"} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
