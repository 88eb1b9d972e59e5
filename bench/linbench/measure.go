package main

import (
	"context"
	"runtime"
	"runtime/debug"
	"slices"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/mgtrace/mgtrace/bench/internal/results"
	"github.com/mgtrace/mgtrace/lin"
)

// outcome is one timed check by either tool.
type outcome struct {
	verdict lin.Verdict
	elapsed time.Duration
	stats   lin.Stats // ours only
	minimal bool      // ours with a counterexample: it was minimised
	err     error     // ours only: the history or the model is at fault
}

// timing is the runs of one tool on one history.
type timing struct {
	runs []outcome
	// peakRSS is the largest peak resident set size of the process over
	// the runs (VmHWM, reset before each), 0 when unknown.
	peakRSS int64
}

// verdict is the first run's verdict.
func (t *timing) verdict() lin.Verdict {
	if len(t.runs) == 0 {
		return lin.Undecided
	}
	return t.runs[0].verdict
}

// consistent reports whether every run gave the same verdict.
func (t *timing) consistent() bool {
	for _, r := range t.runs {
		if r.verdict != t.runs[0].verdict {
			return false
		}
	}
	return true
}

// median is the median time of the runs (the mean of the middle two for an
// even count), 0 for none.
func (t *timing) median() time.Duration {
	ds := make([]time.Duration, len(t.runs))
	for i, r := range t.runs {
		ds[i] = r.elapsed
	}
	return medianOf(ds)
}

func medianOf(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	ds = slices.Clone(ds)
	slices.Sort(ds)
	n := len(ds)
	if n%2 == 1 {
		return ds[n/2]
	}
	return (ds[n/2-1] + ds[n/2]) / 2
}

// err is the first run's error, if any.
func (t *timing) err() error {
	for _, r := range t.runs {
		if r.err != nil {
			return r.err
		}
	}
	return nil
}

// settle collects the garbage of earlier checks and resets the peak RSS,
// so that a run neither pays for nor is measured with another's memory.
func settle(measureRSS bool) bool {
	if measureRSS {
		debug.FreeOSMemory()
		return results.ResetPeakRSS()
	}
	runtime.GC()
	return false
}

// note adds one run to t, with the peak RSS when it was reset before.
func (t *timing) note(r outcome, rss bool) {
	t.runs = append(t.runs, r)
	if rss {
		t.peakRSS = max(t.peakRSS, results.PeakRSS())
	}
}

// checkOurs runs lin.Check once.
func checkOurs(ctx context.Context, m lin.Model, h *lin.History, opt lin.Options) outcome {
	start := time.Now()
	res, err := lin.Check(ctx, m, h, opt)
	d := time.Since(start)
	if err != nil {
		return outcome{verdict: lin.Undecided, elapsed: d, err: err}
	}
	r := outcome{verdict: res.Verdict, elapsed: d, stats: res.Stats}
	if res.Counterexample != nil {
		r.minimal = res.Counterexample.Minimal
	}
	return r
}

// checkPorcupine runs porcupine once (timeout 0: none).
func checkPorcupine(pm porcupine.Model, ops []porcupine.Operation, timeout time.Duration) outcome {
	start := time.Now()
	res := porcupine.CheckOperationsTimeout(pm, ops, timeout)
	return outcome{verdict: porcupineVerdict(res), elapsed: time.Since(start)}
}

// repeat runs check up to n times, as long as it decides and the time
// spent stays within budget: a run that times out is not repeated, nor is
// one that would take the total past budget (judged by the slowest run so
// far). measureRSS records the peak RSS of each run.
func repeat(n int, budget time.Duration, measureRSS bool, check func() outcome) timing {
	var t timing
	var total, slowest time.Duration
	for i := 0; i < n; i++ {
		if i > 0 && (t.runs[i-1].verdict == lin.Undecided || t.runs[i-1].err != nil || total+slowest > budget) {
			break
		}
		rss := settle(measureRSS)
		r := check()
		t.note(r, rss)
		total += r.elapsed
		slowest = max(slowest, r.elapsed)
	}
	return t
}
