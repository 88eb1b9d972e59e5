package main

import (
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
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
	// rssGrowth is the most the process's resident set grew during one
	// of the runs: its peak (VmHWM, reset before the run) less its size
	// when the run started; 0 when unknown.
	rssGrowth int64
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

// settle collects the garbage of earlier checks, so that a run does not
// pay for another's, and with measureRSS resets the peak RSS and returns
// the RSS at that moment (0 when it cannot be measured).
func settle(measureRSS bool) int64 {
	if measureRSS {
		debug.FreeOSMemory()
		if results.ResetPeakRSS() {
			return currentRSS()
		}
		return 0
	}
	runtime.GC()
	return 0
}

// currentRSS returns the process's resident set size (VmRSS) in bytes, or
// 0 when unknown.
func currentRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0
			}
			return kb << 10
		}
	}
	return 0
}

// note adds one run to t; base is the RSS when the run started, after the
// peak was reset (0: not measured).
func (t *timing) note(r outcome, base int64) {
	t.runs = append(t.runs, r)
	if base > 0 {
		if peak := results.PeakRSS(); peak > 0 {
			t.rssGrowth = max(t.rssGrowth, peak-base)
		}
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
// far). measureRSS records how much the RSS grew during each run.
func repeat(n int, budget time.Duration, measureRSS bool, check func() outcome) timing {
	var t timing
	var total, slowest time.Duration
	for i := 0; i < n; i++ {
		if i > 0 && (t.runs[i-1].verdict == lin.Undecided || t.runs[i-1].err != nil || total+slowest > budget) {
			break
		}
		base := settle(measureRSS)
		r := check()
		t.note(r, base)
		total += r.elapsed
		slowest = max(slowest, r.elapsed)
	}
	return t
}
