// Package critical finds the critical predicates of a failing run: the
// predicate instances whose inversion makes the failure disappear, as in
// the DrDebug/Qzdb dissertation (Yan Wang, "Dynamic analysis for debugging
// concurrent and sequential programs", chapter 2, the critical bug
// manifestation condition).
//
// From a recorded failing run (a crash, a spec violation, a memory bug
// finding or a wrong standard output: see Oracle) it computes the backward
// dynamic slice of the failure (package slice, control dependences
// included), takes the slice's conditional-branch instances in the
// program's own code, nearest the failure first, and re-records the
// program once per instance with that instance inverted (record --switch
// FILE:LINE#N). A re-run in which the failure is gone and the program ends
// normally makes the instance critical. The slice's calls and stores are
// tried the same way with record --suppress.
//
// Analyze does it all and returns a Report; analyze critical renders it.
package critical

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mgtrace/mgtrace/internal/srclines"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// Config is one search.
type Config struct {
	// Trace is the recorded failing run.
	Trace string
	// Oracle says what the failure is and how a re-run is judged.
	Oracle Oracle
	// Runner makes the re-runs (a *RecordRunner). Its program, when it
	// has one to set and none is given, is the recorded one.
	Runner Runner
	// MaxRuns bounds the re-runs (0: 50).
	MaxRuns int
	// Jobs is how many re-runs run at once (0: 2).
	Jobs int
	// Statements says to try the slice's calls and stores too (with
	// record --suppress), after the predicates.
	Statements bool
	// BeyondSlice says to try, after the slice's predicates, the other
	// predicate instances of the program's code that ran before the
	// failure, nearest first (the predicate switching search over the
	// whole run): a predicate whose outcome decided the failure by what it
	// kept from running (a loop that stopped too early) is not in the
	// dynamic slice.
	BeyondSlice bool
	// Potential adds to the slice's predicates, in their place by
	// distance, the predicate instances its register uses potentially
	// depend on: a branch between a use and its register's definition
	// whose other side would have redefined the register (relevant
	// slicing). They catch a decision made by what a branch kept from
	// running, at the cost of more runs, without trying every branch as
	// BeyondSlice does.
	Potential bool
	// First stops taking candidates once one is critical (the re-runs
	// already under way finish and are reported).
	First bool
	// NoBaseline skips the first re-run, without alteration, that checks
	// that the failure reproduces.
	NoBaseline bool
	// Keep is a folder to keep the re-runs' traces in ("" removes them).
	Keep string
	// SourceDir is where to look for source files whose recorded paths
	// are not readable (matched by path suffix).
	SourceDir string
	// MaxInstances bounds the instances read for slicing (0: no limit).
	MaxInstances int
	// ReadProgress, when set, is called now and then with the event read
	// while the recorded run is read for slicing.
	ReadProgress func(seq uint64)
	// Progress, when set, is called after each re-run.
	Progress func(Progress)
}

// Progress is where a search stands.
type Progress struct {
	Done, Total int
	Critical    int
}

// DefaultMaxRuns is the run budget when Config.MaxRuns is 0.
const DefaultMaxRuns = 50

// Program returns the program and arguments recorded in the trace at
// path: the resolved path of the executable and argv[1:].
func Program(path string) ([]string, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	h := r.Header()
	if h == nil || (h.ProgramPath == "" && h.Program == "") {
		return nil, fmt.Errorf("%s: the trace does not name its program", path)
	}
	prog := h.ProgramPath
	if prog == "" {
		prog = h.Program
	}
	out := []string{prog}
	if len(h.Args) > 1 {
		out = append(out, h.Args[1:]...)
	}
	return out, nil
}

// Analyze finds the failure of the recorded run, slices it, and tries the
// slice's predicates (and statements) in re-runs.
func Analyze(ctx context.Context, cfg Config) (*Report, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	o := &cfg.Oracle
	if err := o.check(); err != nil {
		return nil, err
	}
	if cfg.Runner == nil {
		return nil, fmt.Errorf("no runner for the re-runs")
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.Jobs <= 0 {
		cfg.Jobs = 2
	}
	f, err := scanTrace(cfg.Trace)
	if err != nil {
		return nil, err
	}
	if rr, ok := cfg.Runner.(*RecordRunner); ok && len(rr.Program) == 0 {
		if rr.Program, err = Program(cfg.Trace); err != nil {
			return nil, err
		}
	}
	run, err := loadRun(cfg.Trace, f, o, cfg.MaxInstances, cfg.ReadProgress)
	if err != nil {
		return nil, err
	}
	fl, points, err := failureOf(o, cfg.Trace, f, run)
	if err != nil {
		return nil, err
	}
	members, err := sliceMembers(ctx, run, points)
	if err != nil {
		return nil, err
	}
	exclude := map[uint32]bool{fl.Instance: true}
	for _, p := range points {
		for _, i := range p.Insts {
			exclude[i] = true
		}
	}
	st := classify(run)
	limit := uint32(0)
	for _, p := range points {
		limit = max(limit, uint32(p.Last))
	}
	var pot map[uint32]bool
	if cfg.Potential {
		pot = potential(run, st, members)
	}
	preds, others, stmts := candidates(run, st, members, exclude, pot, limit)
	rep := &Report{
		Trace: cfg.Trace, Failure: fl, MaxRuns: cfg.MaxRuns, ExpectStatus: o.ExpectStatus,
		Slice:    SliceInfo{Criterion: points[0].Label, Instances: len(members), Predicates: len(preds), Statements: len(stmts)},
		Critical: []Trial{}, Tried: []Trial{},
	}
	if rr, ok := cfg.Runner.(*RecordRunner); ok {
		rep.Program = rr.Program
	}
	for _, p := range preds {
		if p.potential {
			rep.Slice.Potential++
		}
	}
	todo := append([]found(nil), preds...)
	if cfg.BeyondSlice {
		rep.Slice.Beyond = len(others)
		todo = append(todo, others...)
	}
	if cfg.Statements {
		todo = append(todo, stmts...)
	}
	if len(todo) > cfg.MaxRuns {
		rep.Untried = len(todo) - cfg.MaxRuns
		todo = todo[:cfg.MaxRuns]
	}
	src := srclines.New(cfg.SourceDir)
	cands := make([]Candidate, len(todo))
	for k, t := range todo {
		cands[k] = st.candidate(run, t)
		cands[k].Source = src.Line(cands[k].File, int(cands[k].Line))
	}
	dir, cleanup, err := rerunDir(cfg.Keep)
	if err != nil {
		return nil, err
	}
	defer cleanup()
	if !cfg.NoBaseline {
		if rep.Baseline, err = baseline(ctx, &cfg, &fl, dir); err != nil {
			return nil, err
		}
	}
	trials, err := try(ctx, &cfg, &fl, cands, dir)
	if err != nil {
		return nil, err
	}
	rep.Tried = trials
	rep.Runs = len(trials)
	rep.Untried += len(cands) - len(trials)
	for _, kind := range []CandidateKind{Predicate, Statement} {
		for _, t := range trials {
			if t.Kind == kind && t.Outcome == Critical {
				rep.Critical = append(rep.Critical, t)
			}
		}
	}
	if cfg.Keep != "" {
		rep.Kept = cfg.Keep
	}
	return rep, nil
}

// loadRun reads the trace for slicing.
func loadRun(path string, f *facts, o *Oracle, max int, progress func(uint64)) (*slice.Run, error) {
	r, err := schema.Open(path)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	opt := slice.LoadOptions{MaxInstances: max, Progress: progress}
	if o.kind() == FailOutput && f.hasStdoutWrite {
		opt.Events = []uint64{f.lastStdoutWrite}
	}
	run, err := slice.Load(r, opt)
	if err != nil {
		return nil, fmt.Errorf("read %s for slicing: %w", path, err)
	}
	return run, nil
}

// sliceMembers returns the union of the slices of the points, ascending.
func sliceMembers(ctx context.Context, run *slice.Run, points []slice.Point) ([]uint32, error) {
	seen := make(map[uint32]bool)
	var out []uint32
	for _, p := range points {
		res, err := slice.Slice(run, p, slice.Options{NoEdges: true, Context: ctx})
		if err != nil {
			return nil, fmt.Errorf("slice %s: %w", p.Label, err)
		}
		for _, m := range res.Members {
			if !seen[m] {
				seen[m] = true
				out = append(out, m)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// rerunDir returns the folder the re-runs' traces go to: keep, or a
// temporary one that cleanup removes.
func rerunDir(keep string) (dir string, cleanup func(), err error) {
	if keep != "" {
		if err := os.MkdirAll(keep, 0o755); err != nil {
			return "", nil, fmt.Errorf("--keep: %w", err)
		}
		return keep, func() {}, nil
	}
	tmp, err := os.MkdirTemp("", "mgtrace-critical-")
	if err != nil {
		return "", nil, fmt.Errorf("a folder for the re-runs: %w", err)
	}
	return tmp, func() { os.RemoveAll(tmp) }, nil
}

// baseline re-runs the program unaltered: the failure must happen again,
// or no re-run can say anything about it.
func baseline(ctx context.Context, cfg *Config, fl *Failure, dir string) (string, error) {
	r := Rerun{Trace: filepath.Join(dir, "000-baseline.trace")}
	res, err := cfg.Runner.Run(ctx, r)
	if err != nil {
		return "", fmt.Errorf("baseline re-run: %w", err)
	}
	outcome, detail := judge(&cfg.Oracle, fl, res, r.Trace, r)
	if cfg.Keep == "" {
		os.Remove(r.Trace)
	}
	if outcome != Stays {
		how := fmt.Sprintf("%s: %s", outcome, detail)
		if outcome == Critical {
			how = "it ended normally: " + detail
		}
		return "", fmt.Errorf("the failure does not reproduce when the program is re-run unaltered (%s); the search needs a failure that every run shows", how)
	}
	return detail, nil
}

// try re-runs the candidates, cfg.Jobs at a time, and judges each.
func try(ctx context.Context, cfg *Config, fl *Failure, cands []Candidate, dir string) ([]Trial, error) {
	trials := make([]Trial, len(cands))
	var (
		mu       sync.Mutex
		done     int
		critical int
		firstErr error
	)
	next := make(chan int)
	// slots: a candidate is handed out only when a worker is free, so
	// that the decision to stop (First) sees every trial that ended.
	slots := make(chan struct{}, cfg.Jobs)
	var wg sync.WaitGroup
	for w := 0; w < min(cfg.Jobs, len(cands)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range next {
				c := cands[k]
				r := Rerun{Kind: c.Kind, Point: c.Point, N: c.N,
					Trace: filepath.Join(dir, fmt.Sprintf("%03d-%s-%s.trace", k+1, c.Kind, safeName(c.Point)))}
				if c.exact {
					r.PC = uint64(c.PC)
				}
				start := time.Now()
				res, err := cfg.Runner.Run(ctx, r)
				t := Trial{Candidate: c}
				if err != nil {
					t.Outcome, t.Detail = Error, err.Error()
				} else {
					t.Outcome, t.Detail = judge(&cfg.Oracle, fl, res, r.Trace, r)
				}
				t.Seconds = time.Since(start).Seconds()
				if cfg.Keep != "" {
					if _, err := os.Stat(r.Trace); err == nil {
						t.Trace = r.Trace
					}
				} else {
					os.Remove(r.Trace)
				}
				mu.Lock()
				trials[k] = t
				done++
				if t.Outcome == Critical {
					critical++
				}
				if err != nil && ctx.Err() != nil && firstErr == nil {
					firstErr = ctx.Err()
				}
				if cfg.Progress != nil {
					cfg.Progress(Progress{Done: done, Total: len(cands), Critical: critical})
				}
				mu.Unlock()
				<-slots
			}
		}()
	}
	sent := 0
	for k := range cands {
		slots <- struct{}{}
		mu.Lock()
		stop := cfg.First && critical > 0
		mu.Unlock()
		if ctx.Err() != nil || stop {
			break
		}
		next <- k
		sent++
	}
	close(next)
	wg.Wait()
	if firstErr != nil || ctx.Err() != nil {
		return nil, errors.Join(fmt.Errorf("stopped after %d of %d re-runs", done, len(cands)), ctx.Err())
	}
	return trials[:sent], nil
}

// safeName turns FILE:LINE#N into a file name part: the base name, the
// line and N.
func safeName(point string) string {
	base := filepath.Base(point)
	return strings.NewReplacer(":", "-", "#", "-", "/", "_").Replace(base)
}
