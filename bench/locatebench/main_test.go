package main

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mgtrace/mgtrace/locate"
	"github.com/mgtrace/mgtrace/mgbuild"
)

func TestFaults(t *testing.T) {
	src := "int x;\n/* FAULT 2 */ a;\nb; /* FAULT 1 */\n/* FAULT 2 */ again\n"
	want := []fault{{k: 1, line: 3}, {k: 2, line: 2}}
	if got := faults([]byte(src)); !reflect.DeepEqual(got, want) {
		t.Errorf("faults = %v, want %v", got, want)
	}
}

// TestSuiteFaults checks that every program of the suite has its faults
// marked, and the paper's rows are all there.
func TestSuiteFaults(t *testing.T) {
	dir := filepath.Join("..", "..", "testdata", "programs", "ds")
	for _, s := range suite {
		src, err := os.ReadFile(filepath.Join(dir, s.name+".c"))
		if err != nil {
			t.Fatal(err)
		}
		fs := faults(src)
		if len(fs) < 2 || len(fs) > 4 {
			t.Errorf("%s: %d faults, want 2 to 4", s.name, len(fs))
		}
		// Faults 1-3 fire at ops 100, 200, 300; fault 4, the crash-only
		// fault of some programs, at op 400 (testdata/programs/ds/README.md).
		for i, f := range fs {
			if f.k < i+1 || f.k > 4 || (i > 0 && f.k <= fs[i-1].k) || (f.k != i+1 && f.k != 4) {
				t.Errorf("%s: fault %d is numbered %d", s.name, i+1, f.k)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, s.name+".spec")); err != nil {
			t.Error(err)
		}
	}
	paper := 0
	for _, s := range suite {
		if !s.ours {
			paper++
		}
	}
	if paper != 9 {
		t.Errorf("%d of the paper's structures, want its 9", paper)
	}
}

func TestFiredAt(t *testing.T) {
	if got := firedAt("x\nFAULT 2 fired at op 203\ngiving up"); got != 203 {
		t.Errorf("firedAt = %d, want 203", got)
	}
	if got := firedAt("ordlist seed 1"); got != -1 {
		t.Errorf("firedAt without a fault = %d, want -1", got)
	}
}

func TestSpread(t *testing.T) {
	for _, c := range []struct {
		n, k int
		want []int
	}{
		{10, 5, []int{1, 3, 5, 7, 9}},
		{3, 5, []int{0, 1, 2}},
		{500, 1, []int{250}},
		{0, 5, []int{}},
	} {
		if got := spread(c.n, c.k); !reflect.DeepEqual(got, c.want) {
			t.Errorf("spread(%d, %d) = %v, want %v", c.n, c.k, got, c.want)
		}
	}
	got := spread(480, 50)
	if len(got) != 50 || got[0] < 0 || got[49] >= 480 {
		t.Errorf("spread(480, 50) = %v", got)
	}
	for i := 1; i < len(got); i++ {
		if got[i] <= got[i-1] {
			t.Fatalf("spread(480, 50) not increasing: %v", got)
		}
	}
}

func pt(ts int, kind locate.PointKind, pc uint64) locate.Point {
	return locate.Point{TS: mgbuild.TS(ts), Kind: kind, PC: pc, Label: kind.String()}
}

func TestOpPairs(t *testing.T) {
	// Spec C-points: a build-phase pair, two operations, the end.
	points := []locate.Point{
		pt(0, locate.PointEntry, 1), pt(3, locate.PointExit, 1),
		pt(3, locate.PointEntry, 1), pt(5, locate.PointExit, 1),
		pt(5, locate.PointEntry, 2), pt(6, locate.PointExit, 2),
		pt(9, locate.PointEnd, 0),
	}
	got, err := opPairs(points, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0][0].TS != 3 || got[0][1].TS != 5 || got[1][0].TS != 5 {
		t.Errorf("opPairs = %v", got)
	}
	// Misaligned: an exit comes first.
	shifted := []locate.Point{points[0], points[1], points[2], points[3], points[4], points[6]}
	if _, err := opPairs(shifted, 2); err == nil {
		t.Error("opPairs accepted pairs that start with an exit")
	}
	if _, err := opPairs(points, 4); err == nil {
		t.Error("opPairs accepted too few C-points")
	}
	if _, err := opPairs(points[:6], 2); err == nil {
		t.Error("opPairs accepted a run without its end")
	}
	// Program C-points: a shift by one puts the gap between operations
	// inside a pair and an operation's changes between two pairs.
	req := []locate.Point{
		pt(1, locate.PointRequest, 10), pt(2, locate.PointRequest, 20),
		pt(2, locate.PointRequest, 10), pt(4, locate.PointRequest, 20),
		pt(4, locate.PointRequest, 10), pt(5, locate.PointRequest, 20),
		pt(5, locate.PointEnd, 0),
	}
	if _, err := opPairs(req, 3); err != nil {
		t.Errorf("opPairs on program C-points: %v", err)
	}
	if _, err := opPairs(append(req[:5:5], req[6]), 2); err == nil {
		t.Error("opPairs accepted program C-points shifted by one")
	}
}

func TestParseArgs(t *testing.T) {
	cfg, err := parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.base != defaultBase || len(cfg.parts) != len(allParts) || cfg.passing != 9 {
		t.Errorf("defaults: %+v", cfg)
	}
	for _, bad := range [][]string{
		{"-only", "list"}, {"-parts", "locate,x"}, {"-parts", "tarantula"}, {"-base", "1"}, {"-samples", "0"}, {"extra"},
	} {
		if _, err := parseArgs(bad); err == nil {
			t.Errorf("parseArgs(%q) accepted", bad)
		}
	}
	cfg, err = parseArgs([]string{"-only", "avl,dlist", "-parts", "full"})
	if err != nil {
		t.Fatal(err)
	}
	rep := &report{cfg: cfg}
	if p := rep.partial(); !strings.Contains(p, "only avl, dlist") || !strings.Contains(p, "without incr, locate, tarantula") {
		t.Errorf("partial = %q", p)
	}
}

// TestMarkdown checks the section's markers, verdicts and tables on
// made-up results.
func TestMarkdown(t *testing.T) {
	cfg, err := parseArgs(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := lookup("ordlist")
	rep := &report{cfg: cfg, start: time.Unix(0, 0), rows: []*row{{
		s: s, checked: true, points: 4001, nodes: 1484, full: 200 * time.Millisecond,
		incr: &incremental{ops: 50, ratio: 1.1, minRatio: 0.9, recheck: 180 * time.Millisecond, full: 200 * time.Millisecond},
		faults: []*faultResult{
			{fault: fault{k: 1, line: 392}, fired: 102, stmts: []string{"392"}, found: true, locate: 30 * time.Millisecond,
				tarantula: &tarantulaResult{worst: 70, best: 3, total: 80, passing: 9, passedCover: 9, score: 0.5}},
			{fault: fault{k: 2, line: 394}, fired: 200, stmts: []string{"380", "399"}, locate: 2 * time.Second},
		},
	}}}
	md := rep.markdown()
	for _, want := range []string{
		section.Begin() + "\n", section.End() + "\n",
		"**missed** on 1 of 1: ordlist 200.0 ms",
		"**missed** on 1 of 1: ordlist 1.1x",
		"Fault location <= 1s: **missed** on 1 of 2: ordlist FAULT 2 2.000 s",
		"among the statements located: **missed** on 1 of 2: ordlist FAULT 2",
		"| ordlist (ordered list) | 2 | 2 | 70 | 3 | 7 |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}
