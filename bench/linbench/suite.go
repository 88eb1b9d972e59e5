package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/histfile"
	"github.com/mgtrace/mgtrace/lin/models"
)

// suiteHistory is one of porcupine's test histories and what both tools
// made of it.
type suiteHistory struct {
	name     string // its path under test_data: "jepsen/etcd_000.log"
	model    string
	ops      int
	optional int // info and pending operations
	unknown  int // completed with an unknown output
	// expect is porcupine's tests' verdict: "yes", "no", or "" when they
	// check none (etcd_095.log, from a cluster that failed to start).
	expect string
	// ours is lin.Check without a counterexample, oursCx with one (the
	// default options), porc porcupine.CheckOperations.
	ours, oursCx, porc timing
	err                error // reading or converting the history
}

// suiteFiles lists porcupine's test histories under dir (its test_data)
// with their models and formats: every etcd log, then every key-value
// history. quick keeps every tenth etcd log and the two smallest key-value
// pairs.
func suiteFiles(dir string, quick bool) ([]suiteHistory, []string, error) {
	var out []suiteHistory
	var paths []string
	logs, err := filepath.Glob(filepath.Join(dir, "jepsen", "etcd_*.log"))
	if err != nil {
		return nil, nil, err
	}
	kvs, err := filepath.Glob(filepath.Join(dir, "kv", "*.txt"))
	if err != nil {
		return nil, nil, err
	}
	if len(logs) == 0 || len(kvs) == 0 {
		return nil, nil, fmt.Errorf("no etcd logs or key-value histories in %s", dir)
	}
	sort.Strings(logs)
	sort.Strings(kvs)
	num := regexp.MustCompile(`etcd_(\d+)\.log$`)
	for _, p := range logs {
		if quick {
			m := num.FindStringSubmatch(p)
			if m == nil {
				continue
			}
			if k, _ := strconv.Atoi(m[1]); k%10 != 0 {
				continue
			}
		}
		out = append(out, suiteHistory{name: "jepsen/" + filepath.Base(p), model: "cas-register"})
		paths = append(paths, p)
	}
	for _, p := range kvs {
		base := filepath.Base(p)
		if quick && !strings.HasPrefix(base, "c01") && !strings.HasPrefix(base, "c10") {
			continue
		}
		out = append(out, suiteHistory{name: "kv/" + base, model: "kv"})
		paths = append(paths, p)
	}
	return out, paths, nil
}

// runSuite checks every history of porcupine's tests with both tools.
func runSuite(ctx context.Context, cfg *config, dir string, exp *expectations, log io.Writer) ([]*suiteHistory, error) {
	list, paths, err := suiteFiles(filepath.Join(dir, "test_data"), cfg.quick)
	if err != nil {
		return nil, err
	}
	var out []*suiteHistory
	for i := range list {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s := &list[i]
		if v, ok := exp.verdict[s.name]; ok {
			s.expect = "no"
			if v {
				s.expect = "yes"
			}
		}
		format := histfile.EtcdLog
		if s.model == "kv" {
			format = histfile.EDN
		}
		measureSuite(ctx, cfg, s, paths[i], format)
		if s.err != nil {
			fmt.Fprintf(log, "linbench: %s: %v\n", s.name, s.err)
		}
		out = append(out, s)
	}
	return out, nil
}

// measureSuite reads one history and times both tools on it, runs
// interleaved: ours without and with a counterexample, then porcupine.
func measureSuite(ctx context.Context, cfg *config, s *suiteHistory, path string, format histfile.Format) {
	h, _, err := histfile.ParseFile(path, format)
	if err != nil {
		s.err = err
		return
	}
	s.ops = len(h.Ops)
	for i := range h.Ops {
		switch {
		case h.Ops[i].Status.Optional():
			s.optional++
		case h.Ops[i].Status == lin.Unknown:
			s.unknown++
		}
	}
	m, err := models.New(s.model, lin.Value{})
	if err != nil {
		s.err = err
		return
	}
	pm, pops, err := toPorcupine(s.model, h)
	if err != nil {
		s.err = err
		return
	}
	for r := 0; r < cfg.runs; r++ {
		settle(false)
		s.ours.note(checkOurs(ctx, m, h, lin.Options{NoCounterexample: true, Timeout: cfg.timeoutOurs}), 0)
		settle(false)
		s.oursCx.note(checkOurs(ctx, m, h, lin.Options{Timeout: cfg.timeoutOurs}), 0)
		settle(false)
		s.porc.note(checkPorcupine(pm, pops, cfg.timeoutPorc), 0)
	}
	if err := s.ours.err(); err != nil {
		s.err = err
	}
}

// problems lists what is wrong with the history's results: the tools
// disagree, one disagrees with porcupine's tests, a run differs from
// another, or a tool gave no answer.
func (s *suiteHistory) problems() []string {
	if s.err != nil {
		return []string{fmt.Sprintf("%s: %v", s.name, s.err)}
	}
	var p []string
	ours, porc := s.ours.verdict(), s.porc.verdict()
	if !s.ours.consistent() || !s.oursCx.consistent() || !s.porc.consistent() || s.oursCx.verdict() != ours {
		p = append(p, s.name+": the runs of one tool gave different verdicts")
	}
	if ours == lin.Undecided || porc == lin.Undecided {
		p = append(p, fmt.Sprintf("%s: no answer within the time limit (ours %s, porcupine %s)", s.name, verdictWord(ours), verdictWord(porc)))
	}
	if ours != porc {
		p = append(p, fmt.Sprintf("%s: VERDICTS DIFFER: ours %s, porcupine %s", s.name, ours, porc))
	}
	if s.expect != "" && verdictWord(porc) != s.expect {
		p = append(p, fmt.Sprintf("%s: porcupine says %s on the converted history, its tests expect %s", s.name, verdictWord(porc), s.expect))
	}
	if s.expect != "" && verdictWord(ours) != s.expect {
		p = append(p, fmt.Sprintf("%s: ours says %s, porcupine's tests expect %s", s.name, verdictWord(ours), s.expect))
	}
	return p
}

// suiteTotals sums the suite's medians.
type suiteTotals struct {
	histories            int
	ours, oursCx, porc   time.Duration
	faster, slower, same int
	// slowerMax is the largest porcupine median among the histories
	// where ours is slower, and slowerName that history.
	slowerMax  time.Duration
	slowerName string
	// worst is the history where ours is slowest relative to porcupine.
	worst      *suiteHistory
	worstRatio float64
}

func totals(list []*suiteHistory) suiteTotals {
	var t suiteTotals
	for _, s := range list {
		if s.err != nil {
			continue
		}
		t.histories++
		o, p := s.ours.median(), s.porc.median()
		t.ours += o
		t.oursCx += s.oursCx.median()
		t.porc += p
		switch {
		case o < p:
			t.faster++
		case o > p:
			t.slower++
			if p > t.slowerMax {
				t.slowerMax, t.slowerName = p, s.name
			}
		default:
			t.same++
		}
		if p > 0 {
			if r := float64(o) / float64(p); r > t.worstRatio {
				t.worstRatio, t.worst = r, s
			}
		}
	}
	return t
}
