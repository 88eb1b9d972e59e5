// Package reduce simplifies a failure-inducing input with Andreas Zeller
// and Ralf Hildebrandt's ddmin ("Simplifying and isolating
// failure-inducing input"): the input is cut into entities (bytes, lines
// or tokens, see Split) and ddmin removes subsets of them as long as the
// test still says "fails", until the result is 1-minimal: removing any
// single entity makes the failure go.
//
// Each input is tested at most once: the results are memoised by the
// input's bytes (two configurations that join to the same text are one
// test). The subsets, then the complements, of one
// granularity are tested up to Jobs at a time, in order; the first
// failing one in that order is taken, so the result does not depend on
// Jobs. Which failure counts is the Test's business (package analyze's
// reduce command builds it from an oracle).
package reduce

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Verdict is what a test says of one input.
type Verdict int

// The verdicts: the input makes the failure happen (Fails), or not
// (Passes: the run ended otherwise, another failure, a timeout).
const (
	Passes Verdict = iota
	Fails
)

// Test runs the program on input and says whether the failure happened.
// An error stops the reduction.
type Test func(ctx context.Context, input []byte) (Verdict, error)

// Config is one reduction.
type Config struct {
	// Entities is the input cut into entities (Split).
	Entities [][]byte
	// Test judges an input.
	Test Test
	// Jobs is how many tests run at once (at least 1).
	Jobs int
	// OriginalFails says the caller has already seen the whole input fail
	// (and counts that run): it is not tested again.
	OriginalFails bool
	// Progress, when set, is told after each test.
	Progress func(Progress)
}

// Progress is how far a reduction is.
type Progress struct {
	// Runs is the number of tests made; Entities the size of the current
	// configuration, Granularity the number of parts it is cut into.
	Runs, Entities, Granularity int
}

// Step is one round of ddmin at one granularity.
type Step struct {
	// Level is the decomposition tree's level of an IDTHDD round (0 for
	// ddmin's).
	Level int `json:"level,omitempty"`
	// Granularity is the number of parts the configuration was cut into.
	Granularity int `json:"granularity"`
	// Entities is the size of the configuration before the step, Kept
	// after it.
	Entities int `json:"entities"`
	Kept     int `json:"kept"`
	// Outcome: "subset" (one part fails alone), "complement" (the rest
	// without one part fails), "finer" (neither: the parts are halved;
	// IDTHDD: one part per unit), "minimal" (single entities: nothing can
	// be removed), "next level" (IDTHDD: one part per unit and nothing
	// can be removed at this level).
	Outcome string `json:"outcome"`
	// Runs is the number of tests the step made (memoised ones not
	// counted); Cached the number answered from memory.
	Runs   int `json:"runs"`
	Cached int `json:"cached"`
}

// Result is a reduction's outcome.
type Result struct {
	// Strategy is StrategyDDMin, StrategyIDTHDD or StrategyIDTHDDStar.
	Strategy string `json:"strategy"`
	// Input is the reduced input: the entities kept, joined.
	Input []byte `json:"-"`
	// Kept are the indices of the original entities kept.
	Kept []int `json:"kept"`
	// OriginalEntities and Entities are the sizes before and after, in
	// entities; OriginalBytes and Bytes in bytes.
	OriginalEntities int `json:"original_entities"`
	Entities         int `json:"entities"`
	OriginalBytes    int `json:"original_bytes"`
	Bytes            int `json:"bytes"`
	// Steps are the search's rounds, in order: ddmin's, or IDTHDD's step
	// 3 (with their Level).
	Steps []Step `json:"steps"`
	// Step1 are IDTHDD's step 1 candidates, Step1Runs the runs they took;
	// Fallback says that no candidate failed, so the search was ddmin's
	// from the whole input. Levels are step 3's
	// levels and Tree the decomposition tree's shape.
	Step1     []Candidate `json:"step1,omitempty"`
	Step1Runs int         `json:"step1_runs,omitempty"`
	Fallback  bool        `json:"fallback,omitempty"`
	Levels    []Level     `json:"levels,omitempty"`
	Tree      *TreeStats  `json:"tree,omitempty"`
	// Runs is the number of tests made, the original input's included
	// (DDMin's, or the caller's with OriginalFails);
	// Cached the number answered from memory.
	Runs   int `json:"runs"`
	Cached int `json:"cached"`
	// Seconds is the reduction's wall time.
	Seconds float64 `json:"seconds"`
}

// ErrNoFailure is returned when the whole input does not fail.
var ErrNoFailure = errors.New("the original input does not fail: nothing to reduce")

// reducer holds one reduction's state.
type reducer struct {
	cfg   Config
	memo  map[string]Verdict
	runs  int
	cache int
	mu    sync.Mutex
}

// DDMin reduces cfg.Entities to a 1-minimal failing configuration. The
// whole input is tested first (unless OriginalFails) and must fail (else
// ErrNoFailure).
func DDMin(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Test == nil {
		return nil, fmt.Errorf("reduce: no test")
	}
	if cfg.Jobs < 1 {
		cfg.Jobs = 1
	}
	start := time.Now()
	r := &reducer{cfg: cfg, memo: map[string]Verdict{}}
	all := make([]int, len(cfg.Entities))
	for i := range all {
		all[i] = i
	}
	res := &Result{Strategy: StrategyDDMin, OriginalEntities: len(all), OriginalBytes: len(Join(cfg.Entities))}
	if cfg.OriginalFails {
		r.memo[r.keyOf(all)] = Fails
	}
	v, err := r.batch(ctx, [][]int{all}, len(all))
	if cfg.OriginalFails {
		r.cache-- // not a test of the reduction
	}
	if err != nil {
		return nil, err
	}
	if v < 0 {
		return nil, ErrNoFailure
	}
	c, steps, err := r.ddmin(ctx, all)
	if err != nil {
		return nil, err
	}
	res.Steps = steps
	r.finish(res, c, start)
	return res, nil
}

// batch tests the configurations in order, up to Jobs at a time, and
// returns the index of the first that fails (-1 when none does). It stops
// at the first group of Jobs tests holding a failure.
func (r *reducer) batch(ctx context.Context, configs [][]int, size int) (int, error) {
	for at := 0; at < len(configs); at += r.cfg.Jobs {
		group := configs[at:min(at+r.cfg.Jobs, len(configs))]
		verdicts := make([]Verdict, len(group))
		errs := make([]error, len(group))
		var wg sync.WaitGroup
		for i, c := range group {
			key := r.keyOf(c)
			r.mu.Lock()
			v, ok := r.memo[key]
			if ok {
				r.cache++
			}
			r.mu.Unlock()
			if ok {
				verdicts[i] = v
				continue
			}
			wg.Add(1)
			go func(i int, c []int, key string) {
				defer wg.Done()
				kept := make([][]byte, len(c))
				for j, e := range c {
					kept[j] = r.cfg.Entities[e]
				}
				v, err := r.cfg.Test(ctx, Join(kept))
				r.mu.Lock()
				defer r.mu.Unlock()
				if err != nil {
					errs[i] = err
					return
				}
				verdicts[i] = v
				r.memo[key] = v
				r.runs++
				if r.cfg.Progress != nil {
					r.cfg.Progress(Progress{Runs: r.runs, Entities: size, Granularity: len(configs)})
				}
			}(i, c, key)
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return -1, err
		}
		if err := ctx.Err(); err != nil {
			return -1, err
		}
		for i, v := range verdicts {
			if v == Fails {
				return at + i, nil
			}
		}
	}
	return -1, nil
}

// split cuts c into n parts of nearly equal sizes, in order.
func split(c []int, n int) [][]int {
	parts := make([][]int, 0, n)
	at := 0
	for i := 0; i < n; i++ {
		end := at + (len(c)-at)/(n-i)
		parts = append(parts, c[at:end])
		at = end
	}
	return parts
}

// complement returns c without the entities of part (a slice of c).
func complement(c, part []int) []int {
	drop := make(map[int]bool, len(part))
	for _, e := range part {
		drop[e] = true
	}
	out := make([]int, 0, len(c)-len(part))
	for _, e := range c {
		if !drop[e] {
			out = append(out, e)
		}
	}
	return out
}

// keyOf names a configuration for the memo by the input it makes: two
// configurations that join to the same bytes (a different "a" of the same
// text) are one test.
func (r *reducer) keyOf(c []int) string {
	h := sha256.New()
	for _, e := range c {
		h.Write(r.cfg.Entities[e])
	}
	return string(h.Sum(nil))
}

// Report is what analyze reduce reports: the reduction and how it was
// made.
type Report struct {
	// Input is the original input's path, Output the reduced input's.
	Input  string `json:"input"`
	Output string `json:"output"`
	// Program is the program and its arguments, as given; Via says how
	// the candidate reached it ("argument" or "standard input").
	Program []string `json:"program,omitempty"`
	Via     string   `json:"via,omitempty"`
	// EntityKind is bytes, lines or tokens:REGEX.
	EntityKind string `json:"entity_kind"`
	// Oracle is the oracle's kind; Failure how the original run failed.
	Oracle  string `json:"oracle"`
	Failure string `json:"failure"`
	// Jobs is the number of tests run at once.
	Jobs int `json:"jobs"`
	*Result
	// Reduced is the reduced input, as text.
	Reduced string `json:"reduced"`
	// Criterion is IDTHDD's failure point (the slice criterion, as
	// resolved), Note what IDTHDD had to do without.
	Criterion string `json:"criterion,omitempty"`
	Note      string `json:"note,omitempty"`
	// DDMin is ddmin's reduction of the same input (--compare).
	DDMin *Result `json:"ddmin,omitempty"`
}
