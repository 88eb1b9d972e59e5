package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/locate"
	"github.com/mgtrace/mgtrace/locate/spec"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/tarantula"
)

// row is what was measured on one structure.
type row struct {
	s structure

	// The checking benchmark: the correct build, seed 1, base cfg.base.
	checked  bool
	points   int           // C-points of the run
	nodes    int           // live typed nodes at the last C-point
	load     time.Duration // locate.Load, spec.Check and locate.New
	full     time.Duration // median full check at the last C-point
	fullViol int           // violations it found (0 for a correct build)
	incr     *incremental

	faults []*faultResult
}

// incremental is the re-check after one operation, over the sampled
// operations.
type incremental struct {
	ops       int           // operations sampled
	skipped   int           // operations of the second phase left out: no graph change
	ratio     float64       // median of full/recheck
	minRatio  float64       // the smallest ratio
	recheck   time.Duration // median Recheck time
	full      time.Duration // median FullCheck time at the same moments
	evaluated int           // median constraint instances Recheck evaluated
	changes   int           // median graph changes in one operation
	mismatch  int           // operations where Recheck and FullCheck disagreed
}

// faultResult is fault location and the Tarantula baseline on one fault.
type faultResult struct {
	fault
	fired    int    // the op at which the fault fired (-1: it did not)
	exit     string // how the faulty run ended
	point    string // the first C-point with violations
	viol     int    // violations at it
	load     time.Duration
	check    time.Duration // the forward check up to that C-point
	locate   time.Duration // fault location proper (Result.Elapsed)
	steps    int           // changes rolled back
	examined int           // changes that could have touched a pending inconsistency
	pending  int           // inconsistencies still pending when the search stopped
	stmts    []string      // the statements reported, by rank: line, or file:line outside the program
	found    bool          // the FAULT line is among them
	rank     int           // its rank among them (1 = first), 0 when not found
	err      string        // locate found nothing, or failed

	tarantula *tarantulaResult
}

// tarantulaResult is the FAULT line's place in the Tarantula ranking.
type tarantulaResult struct {
	worst, best, total int
	score              float64
	passedCover        int // passing runs that executed the FAULT line
	passing            int
	err                string
}

// measureStructure runs the selected parts on one structure.
func measureStructure(e *env, cfg config, s structure) (*row, error) {
	r := &row{s: s}
	specPath := e.source(s.name, ".spec")
	if cfg.parts[partFull] || cfg.parts[partIncr] {
		if err := measureChecking(e, cfg, r, specPath); err != nil {
			return nil, err
		}
	}
	if cfg.parts[partLocate] {
		src, err := os.ReadFile(e.source(s.name, ".c"))
		if err != nil {
			return nil, err
		}
		fs := faults(src)
		if len(fs) == 0 {
			return nil, fmt.Errorf("no /* FAULT k */ marker in %s.c", s.name)
		}
		for _, f := range fs {
			fr, err := measureFault(e, cfg, s, f, specPath)
			if err != nil {
				return nil, fmt.Errorf("FAULT %d: %w", f.k, err)
			}
			r.faults = append(r.faults, fr)
		}
	}
	return r, nil
}

// openSession loads a trace for a spec and prepares a session; it
// returns the time that took.
func openSession(trace, specPath string) (*locate.Run, *locate.Session, time.Duration, error) {
	src, err := os.ReadFile(specPath)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("read spec: %w", err)
	}
	sp, err := spec.Parse(specPath, src)
	if err != nil {
		return nil, nil, 0, fmt.Errorf("parse spec: %w", err)
	}
	start := time.Now()
	run, ses, err := locate.Open(trace, sp)
	if err != nil {
		return nil, nil, 0, err
	}
	return run, ses, time.Since(start), nil
}

// measureChecking records the correct build with base cfg.base and times
// the full check at its last C-point and the incremental re-check.
func measureChecking(e *env, cfg config, r *row, specPath string) error {
	exe, err := e.build(r.s.name, 0)
	if err != nil {
		return err
	}
	trace := filepath.Join(e.tmp, r.s.name+"-check.trace")
	defer os.Remove(trace)
	fmt.Fprintf(e.log, "locatebench: %s: recording %s 1 %d\n", r.s.name, r.s.name, cfg.base)
	rec, err := e.recordRun(exe, trace, "1", strconv.Itoa(cfg.base))
	if err != nil {
		return err
	}
	if rec.status != 0 {
		return fmt.Errorf("the correct build exited with status %d: %s", rec.status, rec.stderr)
	}
	run, ses, load, err := openSession(trace, specPath)
	if err != nil {
		return err
	}
	r.checked, r.points, r.load = true, len(run.Points), load
	last := run.Points[len(run.Points)-1]
	ses.Seek(last.TS)
	r.nodes = ses.Nodes()
	if cfg.parts[partFull] {
		var ts []time.Duration
		oneCore(func() {
			ses.FullCheck() // warm-up, not counted
			for i := 0; i < cfg.runs; i++ {
				d, v := timeFull(ses)
				ts = append(ts, d)
				r.fullViol = v
			}
		})
		r.full = results.Median(ts)
		fmt.Fprintf(e.log, "locatebench: %s: full check of %d nodes: %v (median of %d)\n", r.s.name, r.nodes, r.full, cfg.runs)
	}
	if cfg.parts[partIncr] {
		pairs, err := opPairs(run.Points, programOps)
		if err != nil {
			return err
		}
		var changing [][2]locate.Point
		for _, p := range pairs {
			if p[1].TS > p[0].TS {
				changing = append(changing, p)
			}
		}
		in := &incremental{skipped: len(pairs) - len(changing)}
		var ratios []float64
		var rechecks, fulls []time.Duration
		var evals, changes []int
		oneCore(func() {
			for _, i := range spread(len(changing), cfg.samples) {
				p := changing[i]
				rc, full, n, mismatch := timeRecheck(ses, p[0], p[1])
				rechecks = append(rechecks, rc)
				fulls = append(fulls, full)
				ratios = append(ratios, float64(full)/float64(max(rc, 1)))
				evals = append(evals, n)
				changes = append(changes, int(p[1].TS-p[0].TS))
				if mismatch {
					in.mismatch++
				}
			}
		})
		in.ops = len(ratios)
		if in.ops == 0 {
			return errors.New("no operation of the second phase changes the graph")
		}
		in.ratio = results.Median(ratios)
		in.minRatio = ratios[0]
		for _, x := range ratios {
			in.minRatio = min(in.minRatio, x)
		}
		in.recheck, in.full = results.Median(rechecks), results.Median(fulls)
		in.evaluated, in.changes = results.Median(evals), results.Median(changes)
		r.incr = in
		fmt.Fprintf(e.log, "locatebench: %s: re-check after one operation: %v, full check %v, ratio %.1f (median of %d ops)\n",
			r.s.name, in.recheck, in.full, in.ratio, in.ops)
	}
	return nil
}

// timeFull times one full check at the session's moment.
func timeFull(ses *locate.Session) (time.Duration, int) {
	runtime.GC()
	start := time.Now()
	v := ses.FullCheck()
	return time.Since(start), v
}

// recheckReps is how often one operation's re-check and full check are
// timed (the medians count).
const recheckReps = 3

// timeRecheck times the incremental re-check from C-point a to C-point b
// (the model fully checked at a, then moved to b) and the full check at
// b, each recheckReps times, and returns the medians, the instances the
// re-check evaluated and whether the two disagreed on the violations.
func timeRecheck(ses *locate.Session, a, b locate.Point) (recheck, full time.Duration, evaluated int, mismatch bool) {
	var rcs, fulls []time.Duration
	for i := 0; i < recheckReps; i++ {
		ses.Seek(a.TS)
		ses.FullCheck()
		ses.Seek(b.TS)
		runtime.GC()
		start := time.Now()
		v, n := ses.Recheck()
		rcs = append(rcs, time.Since(start))
		evaluated = n
		d, w := timeFull(ses)
		fulls = append(fulls, d)
		if v != w {
			mismatch = true
		}
	}
	return results.Median(rcs), results.Median(fulls), evaluated, mismatch
}

// opPairs returns the C-points of the operations of a run's second phase
// as (first, second) pairs: the last 2*ops C-points before the end of the
// run, which the suite's programs place at the start and the end of each
// operation. It checks that the pairs look so: a function's entry never
// comes second nor its exit first, time does not go back, and nothing
// changes the graph between one operation's end and the next one's start
// (the programs' main loops write no heap memory), so that pairs shifted
// by one C-point show as changes between operations.
func opPairs(points []locate.Point, ops int) ([][2]locate.Point, error) {
	n := len(points)
	if n < 2*ops+1 {
		return nil, fmt.Errorf("%d C-points, fewer than the %d of %d operations and the end", n, 2*ops+1, ops)
	}
	if k := points[n-1].Kind; k != locate.PointEnd && k != locate.PointCrash {
		return nil, fmt.Errorf("the last C-point is %v, not the end of the run", k)
	}
	ops2 := points[n-1-2*ops : n-1]
	var out [][2]locate.Point
	for i := 0; i < len(ops2); i += 2 {
		a, b := ops2[i], ops2[i+1]
		if a.Kind == locate.PointExit || b.Kind == locate.PointEntry || b.TS < a.TS {
			return nil, fmt.Errorf("operation %d: C-points %s (ts %d) and %s (ts %d) are not the start and end of an operation", i/2, a.Label, a.TS, b.Label, b.TS)
		}
		if len(out) > 0 {
			if prev := out[len(out)-1][1]; prev.TS != a.TS {
				return nil, fmt.Errorf("operations %d and %d: the graph changes between them (ts %d to %d): the C-points do not pair as start and end", i/2-1, i/2, prev.TS, a.TS)
			}
		}
		out = append(out, [2]locate.Point{a, b})
	}
	return out, nil
}

// spread returns k indexes spread evenly over [0, n): the middles of k
// equal stretches (all of them when k >= n).
func spread(n, k int) []int {
	if k >= n {
		k = n
	}
	out := make([]int, k)
	for i := range out {
		out[i] = (2*i + 1) * n / (2 * k)
	}
	return out
}

// measureFault records a fault's failing run, locates the fault, and
// ranks the statements with Tarantula.
func measureFault(e *env, cfg config, s structure, f fault, specPath string) (*faultResult, error) {
	exe, err := e.build(s.name, f.k)
	if err != nil {
		return nil, err
	}
	trace := filepath.Join(e.tmp, fmt.Sprintf("%s-%d-fail.trace", s.name, f.k))
	defer os.Remove(trace)
	fmt.Fprintf(e.log, "locatebench: %s FAULT %d: recording the failing run\n", s.name, f.k)
	rec, err := e.recordRun(exe, trace, "1")
	if err != nil {
		return nil, err
	}
	fr := &faultResult{fault: f, fired: firedAt(rec.stderr)}
	if fr.fired < 0 {
		return nil, fmt.Errorf("the fault did not fire in the failing run (seed 1): %s", rec.stderr)
	}
	run, ses, load, err := openSession(trace, specPath)
	if err != nil {
		return nil, err
	}
	fr.load, fr.exit = load, run.Exit
	var res *locate.Result
	var wall time.Duration
	oneCore(func() {
		runtime.GC()
		start := time.Now()
		res, err = ses.Locate()
		wall = time.Since(start)
	})
	switch {
	case errors.Is(err, locate.ErrNoViolation):
		fr.err = "no C-point has a violation"
		fr.check = wall
	case err != nil:
		return nil, fmt.Errorf("locate: %w", err)
	default:
		fr.point, fr.viol = res.Point.Label, len(res.Violations)
		fr.locate, fr.check = res.Elapsed, wall-res.Elapsed
		fr.steps, fr.examined, fr.pending = res.Steps, res.Examined, len(res.Pending)
		for _, ft := range res.Faults {
			st := strconv.Itoa(int(ft.Line))
			if !schema.MatchFile(ft.File, s.name+".c") {
				st = fmt.Sprintf("%s:%d", filepath.Base(ft.File), ft.Line)
			} else if int(ft.Line) == f.line && !fr.found {
				fr.found, fr.rank = true, ft.Rank
			}
			fr.stmts = append(fr.stmts, st)
		}
		// A fault that changes nothing the rollback can blame (a store of
		// the old value): found among the failing operation's stores,
		// ranked after the statements; not counted in stmts (the paper's
		// statements are those of the changes).
		for _, ft := range res.Stores {
			if !fr.found && int(ft.Line) == f.line && schema.MatchFile(ft.File, s.name+".c") {
				fr.found, fr.rank = true, ft.Rank
			}
		}
	}
	fmt.Fprintf(e.log, "locatebench: %s FAULT %d: fired at op %d; %d statements %v (FAULT line %d found: %v); location %v, check to the C-point %v\n",
		s.name, f.k, fr.fired, len(fr.stmts), fr.stmts, f.line, fr.found, fr.locate, fr.check)
	if cfg.parts[partTarantula] {
		t, err := rankTarantula(e, cfg, s, f, exe, trace)
		if err != nil {
			return nil, fmt.Errorf("tarantula: %w", err)
		}
		fr.tarantula = t
		fmt.Fprintf(e.log, "locatebench: %s FAULT %d: Tarantula examines %d statements (best %d) of %d\n", s.name, f.k, t.worst, t.best, t.total)
	}
	return fr, nil
}

// readCoverage reads the statement coverage of a trace.
func readCoverage(trace string) (*tarantula.Coverage, error) {
	r, err := schema.Open(trace)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return tarantula.ReadCoverage(r, tarantula.Options{})
}

// rankTarantula ranks the statements from the failing run's trace and
// cfg.passing runs of the same build with seeds 2, 3, ... that stop
// before op faultStride*k, where the fault starts looking for a chance to
// fire, and finds the FAULT line in the ranking.
func rankTarantula(e *env, cfg config, s structure, f fault, exe, failTrace string) (*tarantulaResult, error) {
	fail, err := readCoverage(failTrace)
	if err != nil {
		return nil, err
	}
	ops := strconv.Itoa(faultStride * f.k)
	var pass []*tarantula.Coverage
	for i := 0; i < cfg.passing; i++ {
		seed := strconv.Itoa(2 + i)
		trace := filepath.Join(e.tmp, fmt.Sprintf("%s-%d-pass%s.trace", s.name, f.k, seed))
		rec, err := e.recordRun(exe, trace, seed, "1000", ops)
		if err != nil {
			return nil, err
		}
		if op := firedAt(rec.stderr); op >= 0 || rec.status != 0 {
			os.Remove(trace)
			return nil, fmt.Errorf("passing run %s 1000 %s: the fault fired (op %d) or the run failed (status %d)", seed, ops, op, rec.status)
		}
		c, err := readCoverage(trace)
		os.Remove(trace)
		if err != nil {
			return nil, err
		}
		pass = append(pass, c)
	}
	t := &tarantulaResult{passing: len(pass)}
	for _, c := range pass {
		if c.Covers(s.name+".c", f.line) {
			t.passedCover++
		}
	}
	scores := tarantula.Rank([]*tarantula.Coverage{fail}, pass)
	ex, err := tarantula.Examined(scores, s.name+".c", f.line)
	if err != nil {
		t.err = err.Error()
		return t, nil
	}
	t.worst, t.best, t.total, t.score = ex.Worst, ex.Best, ex.Total, ex.Score.Tarantula
	return t, nil
}
