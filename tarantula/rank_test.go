package tarantula

import (
	"errors"
	"math"
	"reflect"
	"strings"
	"testing"
)

// near reports whether a and b agree to 1e-9.
func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestFormulas checks both formulas against values computed by hand.
func TestFormulas(t *testing.T) {
	for _, tc := range []struct {
		f, p, F, P int
		tarantula  float64
		ochiai     float64
	}{
		// Executed by the only failing run and no passing run.
		{1, 0, 1, 3, 1, 1},
		// (1/1) / (1/1 + 1/3) = 3/4; 1 / sqrt(1*2).
		{1, 1, 1, 3, 0.75, 1 / math.Sqrt(2)},
		// (1/1) / (1 + 2/3) = 3/5; 1 / sqrt(1*3).
		{1, 2, 1, 3, 0.6, 1 / math.Sqrt(3)},
		// Every run: (1/1) / (1 + 3/3) = 1/2; 1 / sqrt(1*4).
		{1, 3, 1, 3, 0.5, 0.5},
		// (1/2) / (1/2 + 2/4) = 1/2; 1 / sqrt(2*3).
		{1, 2, 2, 4, 0.5, 1 / math.Sqrt(6)},
		// (2/3) / (2/3 + 1/2) = 4/7; 2 / sqrt(3*3) = 2/3.
		{2, 1, 3, 2, 4.0 / 7, 2.0 / 3},
		// (1/4) / (1/4 + 1/1) = 1/5; 1 / sqrt(4*2).
		{1, 1, 4, 1, 0.2, 1 / math.Sqrt(8)},
		// Not executed by a failing run: 0 whatever the passing runs do.
		{0, 3, 1, 3, 0, 0},
		{0, 0, 1, 3, 0, 0},
		// No passing runs: p/P counts as 0.
		{1, 0, 2, 0, 1, 1 / math.Sqrt(2)},
		{2, 0, 2, 0, 1, 1},
		// No failing runs at all.
		{0, 1, 0, 1, 0, 0},
	} {
		if got := Tarantula(tc.f, tc.p, tc.F, tc.P); !near(got, tc.tarantula) {
			t.Errorf("Tarantula(f=%d, p=%d, F=%d, P=%d) = %v, want %v", tc.f, tc.p, tc.F, tc.P, got, tc.tarantula)
		}
		if got := Ochiai(tc.f, tc.p, tc.F); !near(got, tc.ochiai) {
			t.Errorf("Ochiai(f=%d, p=%d, F=%d) = %v, want %v", tc.f, tc.p, tc.F, got, tc.ochiai)
		}
	}
	// Equal ratios give bit-identical scores, so that they tie in the
	// ranking: 1 of 3 failing and 2 of 6 passing runs is 1/2, as is 2 of
	// 3 and 4 of 6.
	if a, b := Tarantula(1, 2, 3, 6), Tarantula(2, 4, 3, 6); a != b || a != 0.5 {
		t.Errorf("Tarantula(1, 2, 3, 6) = %v and Tarantula(2, 4, 3, 6) = %v, want both exactly 0.5", a, b)
	}
	for f := 1; f <= 7; f++ {
		for F := f; F <= 7; F++ {
			// f/F of the failing and f/F of the passing runs: 1/2.
			if got := Tarantula(f, f, F, F); got != 0.5 {
				t.Errorf("Tarantula(%d, %d, %d, %d) = %v, want exactly 0.5", f, f, F, F, got)
			}
			// Every failing run and no passing run: 1 when F = f.
			if got := Ochiai(F, 0, F); got != 1 {
				t.Errorf("Ochiai(%d, 0, %d) = %v, want exactly 1", F, F, got)
			}
		}
	}
}

// coverage returns the coverage of a run that executed stmts, each
// "file:line" or "file:line:function".
func coverage(stmts ...string) *Coverage {
	c := &Coverage{Trace: "synthetic", index: make(map[Statement]int)}
	for _, s := range stmts {
		parts := strings.Split(s, ":")
		line := 0
		for _, d := range parts[1] {
			line = line*10 + int(d-'0')
		}
		cv := Covered{Statement: Statement{File: parts[0], Line: line}, Instructions: 1}
		if len(parts) > 2 {
			cv.Function = parts[2]
		}
		c.Statements = append(c.Statements, cv)
	}
	return c
}

// brief is the part of a score the ranking tests compare.
type brief struct {
	stmt           string
	failed, passed int
	rank           int
}

func briefs(scores []Score) []brief {
	var bs []brief
	for _, s := range scores {
		bs = append(bs, brief{s.Statement().String(), s.Failed, s.Passed, s.Rank})
	}
	return bs
}

// TestRank checks counts, scores and the order, ties included.
func TestRank(t *testing.T) {
	fail := []*Coverage{
		coverage("a.c:1:main", "a.c:2:main", "a.c:3:main", "b.c:7:g", "b.c:9:g", "a.c:10:h"),
		coverage("a.c:1:main", "a.c:2:main", "a.c:4:main", "b.c:7:g"),
	}
	pass := []*Coverage{
		coverage("a.c:1:main", "a.c:2:main", "a.c:5:main"),
		coverage("a.c:1:main", "a.c:3:other", "a.c:5:main", "b.c:9:g"),
	}
	scores := Rank(fail, pass)
	want := []brief{
		// f = 2, p = 0: Tarantula 1, Ochiai 1.
		{"b.c:7", 2, 0, 1},
		// f = 1, p = 0: Tarantula 1, Ochiai 1/sqrt(2); a.c before b.c,
		// then by line.
		{"a.c:4", 1, 0, 2},
		{"a.c:10", 1, 0, 3},
		// f = 2, p = 1: Tarantula 1/(1+1/2) = 2/3, Ochiai 2/sqrt(6).
		{"a.c:2", 2, 1, 4},
		// f = 2, p = 2: 1/2, Ochiai 2/sqrt(8) = 0.707.
		{"a.c:1", 2, 2, 5},
		// f = 1, p = 1: (1/2)/(1/2+1/2) = 1/2, Ochiai 1/sqrt(4) = 0.5:
		// tied with a.c:1 on Tarantula, after it on Ochiai.
		{"a.c:3", 1, 1, 6},
		{"b.c:9", 1, 1, 7},
		// f = 0: 0.
		{"a.c:5", 0, 2, 8},
	}
	if got := briefs(scores); !reflect.DeepEqual(got, want) {
		t.Errorf("ranking\n got %v\nwant %v", got, want)
	}
	wantScores := map[string][2]float64{
		"b.c:7": {1, 1}, "a.c:4": {1, 1 / math.Sqrt(2)}, "a.c:10": {1, 1 / math.Sqrt(2)},
		"a.c:2": {2.0 / 3, 2 / math.Sqrt(6)}, "a.c:1": {0.5, 2 / math.Sqrt(8)},
		"a.c:3": {0.5, 0.5}, "b.c:9": {0.5, 0.5}, "a.c:5": {0, 0},
	}
	for _, s := range scores {
		w := wantScores[s.Statement().String()]
		if !near(s.Tarantula, w[0]) || !near(s.Ochiai, w[1]) {
			t.Errorf("%s: Tarantula %v, Ochiai %v, want %v, %v", s.Statement(), s.Tarantula, s.Ochiai, w[0], w[1])
		}
	}
	// The function comes from the first run that executed the statement,
	// failing runs first.
	for _, s := range scores {
		want := map[string]string{"b.c:7": "g", "b.c:9": "g", "a.c:10": "h", "a.c:3": "main"}[s.Statement().String()]
		if want == "" {
			want = "main"
		}
		if s.Function != want {
			t.Errorf("%s: function %q, want %q", s.Statement(), s.Function, want)
		}
	}
	if got := Rank(nil, nil); len(got) != 0 {
		t.Errorf("Rank(nil, nil) = %v, want nothing", got)
	}
}

// TestExamined checks the worst and best case conventions on ties.
func TestExamined(t *testing.T) {
	scores := Rank(
		[]*Coverage{coverage("a.c:1", "a.c:2", "a.c:3", "dir/b.c:7", "other/b.c:7")},
		[]*Coverage{coverage("a.c:1", "a.c:4"), coverage("a.c:1", "a.c:2", "a.c:4")},
	)
	// Tarantula: a.c:3, dir/b.c:7, other/b.c:7 1 (three tied); a.c:2
	// 1/(1+1/2) = 2/3; a.c:1 1/2; a.c:4 0.
	for _, tc := range []struct {
		file               string
		line               int
		stmt               string
		rank, worst, best  int
		tarantula          float64
		wantErr, ambiguous bool
	}{
		{file: "a.c", line: 3, stmt: "a.c:3", rank: 1, worst: 3, best: 1, tarantula: 1},
		{file: "dir/b.c", line: 7, stmt: "dir/b.c:7", rank: 2, worst: 3, best: 1, tarantula: 1},
		{file: "/src/other/b.c", line: 7, stmt: "other/b.c:7", rank: 3, worst: 3, best: 1, tarantula: 1},
		{file: "a.c", line: 2, stmt: "a.c:2", rank: 4, worst: 4, best: 4, tarantula: 2.0 / 3},
		{file: "./a.c", line: 1, stmt: "a.c:1", rank: 5, worst: 5, best: 5, tarantula: 0.5},
		// Executed only by passing runs: Tarantula 0, last of all.
		{file: "a.c", line: 4, stmt: "a.c:4", rank: 6, worst: 6, best: 6, tarantula: 0},
		// b.c:7 is in two files.
		{file: "b.c", line: 7, wantErr: true, ambiguous: true},
		// Not executed, or no such file.
		{file: "a.c", line: 99, wantErr: true},
		{file: "c.c", line: 1, wantErr: true},
		{file: "b.c", line: 1, wantErr: true},
	} {
		ex, err := Examined(scores, tc.file, tc.line)
		if tc.wantErr {
			if err == nil || errors.Is(err, ErrNotCovered) == tc.ambiguous {
				t.Errorf("Examined(%s:%d) = %+v, %v; want an error (ambiguous %v)", tc.file, tc.line, ex, err, tc.ambiguous)
			}
			continue
		}
		if err != nil {
			t.Errorf("Examined(%s:%d): %v", tc.file, tc.line, err)
			continue
		}
		if ex.Score.Statement().String() != tc.stmt || ex.Score.Rank != tc.rank || ex.Worst != tc.worst ||
			ex.Best != tc.best || !near(ex.Score.Tarantula, tc.tarantula) || ex.Total != 6 {
			t.Errorf("Examined(%s:%d) = %s rank %d, worst %d, best %d, tarantula %v, total %d; want %s rank %d, worst %d, best %d, tarantula %v, total 6",
				tc.file, tc.line, ex.Score.Statement(), ex.Score.Rank, ex.Worst, ex.Best, ex.Score.Tarantula, ex.Total,
				tc.stmt, tc.rank, tc.worst, tc.best, tc.tarantula)
		}
	}
}
