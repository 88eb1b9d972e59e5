package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/mgtrace/mgtrace/lin"
	"github.com/mgtrace/mgtrace/lin/models"
)

// advResult is one generated history and what both tools made of it.
type advResult struct {
	shape    *shape
	n        int // the size asked for
	ops      int
	optional int
	// ours is lin.Check without a counterexample; oursCx one run with it
	// (not linearizable histories only); porc porcupine.
	ours, oursCx, porc timing
	// oursSkipped and porcSkipped, when not 0, are the smaller size at
	// which that tool already gave no answer: it was not run on this one.
	oursSkipped, porcSkipped int
	err                      error
}

// runAdversarial generates every selected shape at every size and checks
// each history with both tools. Once a tool gives no answer on a shape, it
// is not run on the shape's larger sizes (unless cfg.allSizes).
func runAdversarial(ctx context.Context, cfg *config, log io.Writer) ([]*advResult, error) {
	var out []*advResult
	list := shapes()
	for i := range list {
		sh := &list[i]
		if !cfg.shapeSelected(sh.name) {
			continue
		}
		m, err := models.New(sh.model, lin.Value{})
		if err != nil {
			return nil, err
		}
		oursOut, porcOut := 0, 0
		for _, n := range cfg.sizes {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			r := &advResult{shape: sh, n: n}
			out = append(out, r)
			h, err := sh.generate(n, cfg.seed)
			if err != nil {
				r.err = err
				continue
			}
			r.ops = len(h.Ops)
			for j := range h.Ops {
				if h.Ops[j].Status.Optional() {
					r.optional++
				}
			}
			pm, pops, err := toPorcupine(sh.model, h)
			if err != nil {
				r.err = err
				continue
			}
			if oursOut > 0 && !cfg.allSizes {
				r.oursSkipped = oursOut
			} else {
				r.ours = repeat(cfg.runs, cfg.repeatBudget, true, func() outcome {
					return checkOurs(ctx, m, h, lin.Options{NoCounterexample: true, Timeout: cfg.timeoutOurs})
				})
				if r.ours.verdict() == lin.NotLinearizable {
					r.oursCx = repeat(1, 0, true, func() outcome {
						return checkOurs(ctx, m, h, lin.Options{Timeout: cfg.timeoutOurs})
					})
				}
				if r.ours.verdict() == lin.Undecided && oursOut == 0 {
					oursOut = n
				}
			}
			if porcOut > 0 && !cfg.allSizes {
				r.porcSkipped = porcOut
			} else {
				r.porc = repeat(cfg.runs, cfg.repeatBudget, true, func() outcome {
					return checkPorcupine(pm, pops, cfg.timeoutPorc)
				})
				if r.porc.verdict() == lin.Undecided && porcOut == 0 {
					porcOut = n
				}
			}
			if err := r.ours.err(); err != nil {
				r.err = err
			}
			fmt.Fprintf(log, "linbench: %-22s n=%-5d ours %-9s %-10s porcupine %-9s %s\n", sh.name, n,
				r.oursCell(), r.ours.timeCell(r.oursSkipped, cfg.runs), r.porcCell(), r.porc.timeCell(r.porcSkipped, cfg.runs))
		}
	}
	return out, nil
}

// want is the verdict by construction.
func (r *advResult) want() lin.Verdict {
	if r.shape.linearizable {
		return lin.Linearizable
	}
	return lin.NotLinearizable
}

// oursCell and porcCell are the tools' verdicts for a table.
func (r *advResult) oursCell() string { return skippedOr(r.oursSkipped, r.ours.verdict()) }
func (r *advResult) porcCell() string { return skippedOr(r.porcSkipped, r.porc.verdict()) }

func skippedOr(skipped int, v lin.Verdict) string {
	if skipped > 0 {
		return "not run"
	}
	return verdictWord(v)
}

// timeCell is the median time of a tool's runs, with their count when
// it is less than wanted, or what happened instead.
func (t *timing) timeCell(skipped, wanted int) string {
	switch {
	case skipped > 0:
		return fmt.Sprintf("(no answer at n=%d)", skipped)
	case len(t.runs) == 0:
		return "-"
	case t.verdict() == lin.Undecided:
		return "> " + seconds(t.runs[0].elapsed)
	case len(t.runs) == 1 && wanted > 1:
		return seconds(t.median()) + " (1 run)"
	case len(t.runs) < wanted:
		return fmt.Sprintf("%s (%d runs)", seconds(t.median()), len(t.runs))
	}
	return seconds(t.median())
}

// problems lists what is wrong with the result: a tool's decided verdict
// differs from the one by construction or from the other's, or runs
// differ.
func (r *advResult) problems() []string {
	name := fmt.Sprintf("%s n=%d", r.shape.name, r.n)
	if r.err != nil {
		return []string{fmt.Sprintf("%s: %v", name, r.err)}
	}
	var p []string
	for _, t := range []struct {
		tool string
		t    *timing
	}{{"ours", &r.ours}, {"ours with a counterexample", &r.oursCx}, {"porcupine", &r.porc}} {
		if !t.t.consistent() {
			p = append(p, fmt.Sprintf("%s: the runs of %s gave different verdicts", name, t.tool))
		}
		if v := t.t.verdict(); len(t.t.runs) > 0 && v != lin.Undecided && v != r.want() {
			p = append(p, fmt.Sprintf("%s: VERDICT WRONG: %s says %s, the history is %s by construction", name, t.tool, v, r.want()))
		}
	}
	return p
}

// seconds formats a duration for the tables: "0.012 s", "61.2 s".
func seconds(d time.Duration) string {
	s := d.Seconds()
	switch {
	case s < 0.001:
		return fmt.Sprintf("%.3f ms", s*1000)
	case s < 1:
		return fmt.Sprintf("%.1f ms", s*1000)
	case s < 10:
		return fmt.Sprintf("%.2f s", s)
	}
	return fmt.Sprintf("%.1f s", s)
}
