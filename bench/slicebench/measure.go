package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/schema"
	"github.com/mgtrace/mgtrace/slice"
)

// traceResult is what was measured on one trace.
type traceResult struct {
	name    string // the run's name ("10M") or the trace's base name
	command string // the recorded command, "" for a given trace
	events  uint64
	loads   uint64 // LOAD events of the main thread
	thread  schema.ThreadID
	insts   int
	load    time.Duration // median slice.Load
	peakRSS int64         // VmHWM over the loads and traversals, bytes (0: unknown)
	crits   []*critResult
}

// worstE2E returns the criterion whose analyze slice run took longest.
func (t *traceResult) worstE2E() *critResult {
	var w *critResult
	for _, c := range t.crits {
		if c.e2e != nil && (w == nil || c.e2e.wall > w.e2e.wall) {
			w = c
		}
	}
	return w
}

// critResult is one criterion sliced with both algorithms.
type critResult struct {
	k        int    // criterion number: 1 is the last memory read
	seq      uint64 // its LOAD event
	where    string // the function of the load (from the trace's tables)
	members  int
	improved time.Duration
	baseline time.Duration // 0 when it did not finish
	finished bool          // the baseline finished within the timeout
	impStats slice.Stats
	basStats slice.Stats
	e2e      *endToEnd
}

// speedup is baseline time / improved time, or 0 when the baseline did
// not finish.
func (c *critResult) speedup() float64 {
	if !c.finished || c.improved <= 0 {
		return 0
	}
	return float64(c.baseline) / float64(c.improved)
}

// endToEnd is analyze slice run as a subprocess on one criterion.
type endToEnd struct {
	seq     uint64
	wall    time.Duration // median
	all     []time.Duration
	maxRSS  int64 // the largest of the runs' peak RSS, bytes
	command string
}

// measureTrace measures one trace.
func measureTrace(e *env, cfg config, trace string) (*traceResult, error) {
	res := &traceResult{}
	seqs, where, err := lastLoads(trace, cfg.criteria, res)
	if err != nil {
		return nil, err
	}
	if len(seqs) == 0 {
		return nil, fmt.Errorf("%s: no memory reads in the main thread", trace)
	}
	fmt.Fprintf(e.log, "slicebench: %s: %d events; criteria %v\n", trace, res.events, seqs)

	runtime.GC()
	debug.FreeOSMemory()
	rssKnown := results.ResetPeakRSS()
	var run *slice.Run
	var loads []time.Duration
	for k := 0; k < cfg.runs; k++ {
		run = nil
		runtime.GC()
		d, r, err := timeLoad(trace, seqs)
		if err != nil {
			return nil, err
		}
		run = r
		loads = append(loads, d)
	}
	res.load = results.Median(loads)
	res.insts = run.Instances()
	fmt.Fprintf(e.log, "slicebench: %s: %d instances, load %v (%v)\n", trace, res.insts, res.load.Round(time.Millisecond), roundAll(loads))

	for i, seq := range seqs {
		c, err := measureCriterion(e, cfg, run, i+1, seq)
		if err != nil {
			return nil, err
		}
		c.where = where[i]
		res.crits = append(res.crits, c)
	}
	if rssKnown {
		res.peakRSS = results.PeakRSS()
	}
	run = nil
	runtime.GC()

	for _, c := range res.crits {
		if c.e2e, err = runAnalyze(e, cfg, trace, c.seq); err != nil {
			return nil, err
		}
	}
	return res, nil
}

// lastLoads returns the sequence numbers of the last n LOAD events of the
// trace's main thread (the thread of its first event), the last first,
// with the function each load is in, and fills in the trace's event and
// load counts.
func lastLoads(trace string, n int, res *traceResult) ([]uint64, []string, error) {
	r, err := schema.Open(trace)
	if err != nil {
		return nil, nil, err
	}
	defer r.Close()
	type load struct{ seq, pc uint64 }
	ring := make([]load, 0, n)
	first := true
	for {
		ev, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", trace, err)
		}
		res.events++
		if first {
			res.thread, first = ev.Thread, false
		}
		if ev.Kind != schema.KindLoad || ev.Thread != res.thread {
			continue
		}
		res.loads++
		if len(ring) == n {
			copy(ring, ring[1:])
			ring = ring[:n-1]
		}
		ring = append(ring, load{ev.Seq, ev.PC})
	}
	if !r.End().Whole {
		return nil, nil, fmt.Errorf("%s is not whole: %s", trace, r.End().Reason)
	}
	slices.Reverse(ring)
	seqs := make([]uint64, len(ring))
	where := make([]string, len(ring))
	tables := r.Tables()
	for i, l := range ring {
		loc := tables.Locate(l.pc)
		seqs[i], where[i] = l.seq, loc.String()
		switch {
		case loc.Module != "" && loc.File == "" && loc.Function != "":
			where[i] = filepath.Base(loc.Module) + ": " + where[i]
		case loc.Module != "" && loc.File == "":
			where[i] = fmt.Sprintf("%s@%#x", filepath.Base(loc.Module), loc.PC)
		}
	}
	return seqs, where, nil
}

// timeLoad times slice.Load of the whole trace, asking for the criteria's
// events.
func timeLoad(trace string, seqs []uint64) (time.Duration, *slice.Run, error) {
	start := time.Now()
	r, err := schema.Open(trace)
	if err != nil {
		return 0, nil, err
	}
	defer r.Close()
	run, err := slice.Load(r, slice.LoadOptions{Events: seqs})
	d := time.Since(start)
	if err != nil {
		return 0, nil, fmt.Errorf("load %s: %w", trace, err)
	}
	if run.Truncated() {
		return 0, nil, fmt.Errorf("load %s: the trace is cut short", trace)
	}
	return d, run, nil
}

// measureCriterion slices the run from the k-th criterion with both
// algorithms, -runs times each, and checks that they agree.
func measureCriterion(e *env, cfg config, run *slice.Run, k int, seq uint64) (*critResult, error) {
	c := &critResult{k: k, seq: seq}
	point, err := run.Resolve(slice.Criterion{Kind: slice.BySeq, Seq: seq})
	if err != nil {
		return nil, fmt.Errorf("criterion #%d: %w", k, err)
	}
	var imp []time.Duration
	var impRes *slice.Result
	for i := 0; i < cfg.runs; i++ {
		runtime.GC()
		start := time.Now()
		r, err := slice.Slice(run, point, slice.Options{Algorithm: slice.Improved})
		imp = append(imp, time.Since(start))
		if err != nil {
			return nil, fmt.Errorf("criterion #%d (seq:%d), improved: %w", k, seq, err)
		}
		impRes = r
	}
	c.improved, c.impStats, c.members = results.Median(imp), impRes.Stats, len(impRes.Members)
	want := impRes.Members // the baseline must agree; the edges are not kept
	impRes = nil
	fmt.Fprintf(e.log, "slicebench:   #%d seq:%d: %d members; improved %v (%v)\n", k, seq, c.members, c.improved.Round(time.Millisecond), roundAll(imp))

	var bas []time.Duration
	for i := 0; i < cfg.runs; i++ {
		runtime.GC()
		ctx, cancel := context.WithTimeout(context.Background(), cfg.timeout)
		start := time.Now()
		r, err := slice.Slice(run, point, slice.Options{Algorithm: slice.Baseline, Context: ctx})
		d := time.Since(start)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			fmt.Fprintf(e.log, "slicebench:   #%d baseline did not finish in %v\n", k, cfg.timeout)
			c.finished = false
			return c, nil
		}
		if err != nil {
			return nil, fmt.Errorf("criterion #%d (seq:%d), baseline: %w", k, seq, err)
		}
		if !slices.Equal(r.Members, want) {
			return nil, fmt.Errorf("criterion #%d (seq:%d): the algorithms disagree: improved %d members, baseline %d, first difference at instance %d",
				k, seq, len(want), len(r.Members), firstDiff(want, r.Members))
		}
		bas = append(bas, d)
		c.basStats = r.Stats
	}
	c.baseline, c.finished = results.Median(bas), true
	fmt.Fprintf(e.log, "slicebench:   #%d baseline %v (%v): speed-up %.2fx\n", k, c.baseline.Round(time.Millisecond), roundAll(bas), c.speedup())
	return c, nil
}

// firstDiff returns the first instance in which two sorted member lists
// differ, or -1.
func firstDiff(a, b []uint32) int64 {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return int64(min(a[i], b[i]))
		}
	}
	switch {
	case len(a) > len(b):
		return int64(a[len(b)])
	case len(b) > len(a):
		return int64(b[len(a)])
	}
	return -1
}

// runAnalyze times analyze slice --criterion seq:N --format text on the
// trace as a subprocess, -runs times, output to /dev/null.
func runAnalyze(e *env, cfg config, trace string, seq uint64) (*endToEnd, error) {
	args := []string{"slice", "--criterion", fmt.Sprintf("seq:%d", seq), "--format", "text", "-o", os.DevNull, trace}
	res := &endToEnd{seq: seq, command: "analyze " + strings.Join(args[:len(args)-1], " ") + " TRACE"}
	for i := 0; i < cfg.runs; i++ {
		cmd := exec.Command(e.analyze, args...)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &stderr
		start := time.Now()
		err := cmd.Run()
		d := time.Since(start)
		if err != nil {
			return nil, fmt.Errorf("analyze %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
		}
		res.all = append(res.all, d)
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.maxRSS = max(res.maxRSS, ru.Maxrss<<10)
		}
	}
	res.wall = results.Median(res.all)
	fmt.Fprintf(e.log, "slicebench:   seq:%d: analyze slice end to end %v (%v)\n", seq, res.wall.Round(time.Millisecond), roundAll(res.all))
	return res, nil
}

// geomean returns the geometric mean of the speed-ups of the criteria
// both algorithms finished, and how many those were.
func geomean(crits []*critResult) (float64, int) {
	sum, n := 0.0, 0
	for _, c := range crits {
		if s := c.speedup(); s > 0 {
			sum += math.Log(s)
			n++
		}
	}
	if n == 0 {
		return 0, 0
	}
	return math.Exp(sum / float64(n)), n
}

func roundAll(ds []time.Duration) []time.Duration {
	out := make([]time.Duration, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond)
	}
	return out
}
