package tarantula

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/mgtrace/mgtrace/schema"
)

// Score is the suspiciousness of one statement over a set of runs.
type Score struct {
	File     string
	Line     int
	Function string
	// Failed and Passed are the numbers of failing and passing runs that
	// executed the statement.
	Failed, Passed int
	// Tarantula and Ochiai are its suspiciousness, from 0 to 1.
	Tarantula, Ochiai float64
	// Rank is its position in the ranking, from 1.
	Rank int
}

// Statement returns the score's statement.
func (s Score) Statement() Statement { return Statement{File: s.File, Line: s.Line} }

// Tarantula returns the Tarantula suspiciousness of a statement executed
// by f of F failing runs and p of P passing runs:
// (f/F) / ((f/F) + (p/P)), 0 when f is 0, and with p/P taken as 0 when P
// is 0. It computes f·P / (f·P + p·F), one rounding of an exact ratio,
// so that statements with equal suspiciousness get equal values.
func Tarantula(f, p, F, P int) float64 {
	switch {
	case f <= 0 || F <= 0:
		return 0
	case P <= 0:
		return 1
	}
	num := float64(int64(f) * int64(P))
	return num / (num + float64(int64(p)*int64(F)))
}

// Ochiai returns the Ochiai suspiciousness of a statement executed by f
// of F failing runs and p passing runs: f / sqrt(F·(f+p)), 0 when f is 0.
// It computes sqrt(f² / (F·(f+p))), so that equal values come out equal.
func Ochiai(f, p, F int) float64 {
	if f <= 0 || F <= 0 {
		return 0
	}
	return math.Sqrt(float64(int64(f)*int64(f)) / float64(int64(F)*int64(f+p)))
}

// Rank scores every statement that at least one run executed, from the
// coverage of the failing and the passing runs, and sorts them from the
// most suspicious: by Tarantula, descending, then by Ochiai, descending,
// then by file and line. Rank is the position in that order, from 1.
// A statement's Function is the one the first run that executed it gives
// (failing runs first, in order, then passing runs).
func Rank(fail, pass []*Coverage) []Score {
	idx := make(map[Statement]int)
	var scores []Score
	add := func(runs []*Coverage, failed bool) {
		for _, c := range runs {
			for _, s := range c.Statements {
				k, ok := idx[s.Statement]
				if !ok {
					k = len(scores)
					idx[s.Statement] = k
					scores = append(scores, Score{File: s.File, Line: s.Line, Function: s.Function})
				}
				if failed {
					scores[k].Failed++
				} else {
					scores[k].Passed++
				}
			}
		}
	}
	add(fail, true)
	add(pass, false)
	F, P := len(fail), len(pass)
	for i := range scores {
		s := &scores[i]
		s.Tarantula = Tarantula(s.Failed, s.Passed, F, P)
		s.Ochiai = Ochiai(s.Failed, s.Passed, F)
	}
	sort.Slice(scores, func(i, j int) bool { return moreSuspicious(&scores[i], &scores[j]) })
	for i := range scores {
		scores[i].Rank = i + 1
	}
	return scores
}

// moreSuspicious orders scores as Rank does.
func moreSuspicious(a, b *Score) bool {
	switch {
	case a.Tarantula != b.Tarantula:
		return a.Tarantula > b.Tarantula
	case a.Ochiai != b.Ochiai:
		return a.Ochiai > b.Ochiai
	case a.File != b.File:
		return a.File < b.File
	}
	return a.Line < b.Line
}

// Examination is what it costs to find one statement in a ranking.
type Examination struct {
	// Score is the statement's.
	Score Score
	// Worst is the number of statements a developer examines before
	// finding it, the statement included, when it comes last among those
	// tied with it: the statements whose Tarantula score is at least its
	// own. Best is that number when it comes first among them: the
	// statements whose score is higher than its own, plus 1.
	Worst, Best int
	// Total is the number of statements ranked.
	Total int
}

// Examined finds the statement at line of file (matched by schema.MatchFile) in
// scores, as Rank returned them, and says how many statements a
// developer examines, going down the ranking, before finding it. Ties are
// counted by Tarantula score alone: in the worst case every statement
// scored as high as it comes first (Worst, the convention of the
// Tarantula papers), in the best case none of them does (Best). The
// error wraps ErrNotCovered when no ranked statement matches, and says
// so when the name matches the line in more than one file.
func Examined(scores []Score, file string, line int) (Examination, error) {
	var found []int
	for i := range scores {
		if scores[i].Line == line && schema.MatchFile(scores[i].File, file) {
			found = append(found, i)
		}
	}
	switch len(found) {
	case 0:
		return Examination{}, fmt.Errorf("%s:%d: %w", file, line, ErrNotCovered)
	case 1:
	default:
		names := make([]string, len(found))
		for k, i := range found {
			names[k] = scores[i].File
		}
		sort.Strings(names)
		return Examination{}, fmt.Errorf("%s:%d is ambiguous: it matches %s", file, line, strings.Join(names, ", "))
	}
	ex := Examination{Score: scores[found[0]], Best: 1, Total: len(scores)}
	for i := range scores {
		switch t := scores[i].Tarantula; {
		case t > ex.Score.Tarantula:
			ex.Worst++
			ex.Best++
		case t == ex.Score.Tarantula:
			ex.Worst++
		}
	}
	return ex, nil
}
